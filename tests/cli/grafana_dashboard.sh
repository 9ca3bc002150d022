#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/grafana/mrcfab.json against the programs: the metric names its expressions select are
# those the controller, the localizer and the agent export, read out of their C sources and out
# of a live mrc-controller's and mrc-probe localize's /metrics on loopback; the dashboard model,
# ${DS_PROMETHEUS} on every panel, and every expression parsed by promtool check rules
# (tests/cli/grafana_check.py).
set -euo pipefail
bin=$(cd "${1:?usage: grafana_dashboard.sh BINDIR}" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/check.sh
source "$src/tests/check.sh"
dash=$src/deploy/grafana/mrcfab.json
topo=$src/deploy/topologies/lab.json
tmp=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
command -v promtool >/dev/null || { fail "no promtool (deploy/install-deps.sh installs it)"; finish grafana_dashboard; }

# the names in the sources: every mrcfab_ word of the three programs' C files
grep -ohE 'mrcfab_[a-z0-9_]+' "$src"/controller/*.c "$src"/probe/*.c "$src"/agent/*.c |
    sort -u >"$tmp/names"
check '[ "$(grep -c "^mrcfab_agent_" "$tmp/names")" -ge 10 ] && grep -qx mrcfab_http_requests_total "$tmp/names"' \
    "the sources name $(wc -l <"$tmp/names") mrcfab_ words, the agent's and the controller's among them"

# live answers: names a source may build at run time, and the labels of their samples
: >"$tmp/samples"
port_of() { sed -n "s/.* port \([0-9]*\) (http).*/\1/p" "$1"; }
printf 'tok-reader-000000000001 reader alice\n' >"$tmp/tokens"
chmod 600 "$tmp/tokens" # a tokens file only its owner can read
: >"$tmp/ctl.log"
"$bin/mrc-controller" --topology "$topo" --db "$tmp/ctl.db" --tokens "$tmp/tokens" \
    --listen 127.0.0.1:0 >"$tmp/ctl.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do [ -n "$(port_of "$tmp/ctl.log")" ] && break; sleep 0.05; done
cport=$(port_of "$tmp/ctl.log")
if check '[ -n "$cport" ] && curl -sf "http://127.0.0.1:$cport/metrics" >"$tmp/ctl.prom"' \
    "mrc-controller's /metrics on loopback"; then
    awk '!/^#/ {sub(/[{ ].*/, ""); print}' "$tmp/ctl.prom" >>"$tmp/names"
    cat "$tmp/ctl.prom" >>"$tmp/samples"
fi
: >"$tmp/loc.log"
"$bin/mrc-probe" localize --topology "$topo" --listen "127.0.0.1:0" --open >"$tmp/loc.log" 2>&1 &
pids+=($!)
lport=$(served_port "$tmp/loc.log" "${pids[-1]}") || lport=0
code=000
for _ in $(seq 100); do
    code=$(curl -s -o "$tmp/loc.prom" -w '%{http_code}' "http://127.0.0.1:$lport/metrics" || true)
    [ "$code" != 000 ] && break
    sleep 0.05
done
if [ "$code" = 200 ]; then
    pass "mrc-probe localize's /metrics on loopback"
    awk '!/^#/ {sub(/[{ ].*/, ""); print}' "$tmp/loc.prom" >>"$tmp/names"
    cat "$tmp/loc.prom" >>"$tmp/samples"
elif grep -q '^mrcfab_localizer_' "$tmp/names"; then
    fail "the localizer's sources name metrics, but its /metrics answers $code"
else
    pass "mrc-probe localize answers $code at /metrics: not served yet, none in its sources either"
fi
sort -u -o "$tmp/names" "$tmp/names"

if python3 "$src/tests/cli/grafana_check.py" "$dash" "$tmp/names" "$tmp/rules.yml" \
    --samples "$tmp/samples"; then
    pass "grafana_check.py: the dashboard's model, datasources and names"
else
    fail "grafana_check.py: the dashboard's model, datasources and names"
fi
check 'promtool check rules "$tmp/rules.yml"' "promtool parses every expression of the dashboard"

# docs/operations.md#monitoring: its scrape configuration and the agents' file its command
# writes (from the lab's topology) as promtool check config reads them
python3 - "$src/docs/operations.md" "$tmp" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("\n## Monitoring\n"):]
section = section[: section.index("\n## ", 5)]
blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
conf = next(b for k, b in blocks if k == "yaml" and "scrape_configs" in b)
cmd = next(b for k, b in blocks if k == "sh" and "mrcfab-agents.json" in b)
out = sys.argv[2]
open(f"{out}/prometheus.yml", "w").write(
    conf.replace("/etc/prometheus/mrcfab-agents.json", f"{out}/mrcfab-agents.json"))
open(f"{out}/agents.sh", "w").write(
    cmd.replace("/etc/prometheus/mrcfab-agents.json", f"{out}/mrcfab-agents.json"))
PYEOF
check 'grep -q "scrape_configs" "$tmp/prometheus.yml" && grep -q "mrcctl" "$tmp/agents.sh"' \
    "docs/operations.md#monitoring has a scrape configuration and the agents' file's command"
sed -i "s|/etc/mrcfab/topology.json|$topo|" "$tmp/agents.sh"
(cd "$tmp" && PATH="$bin:$PATH" bash -e agents.sh) 2>"$tmp/agents.err" || true
check 'python3 -c "import json,sys; t=json.load(open(sys.argv[1]))[0][\"targets\"]; assert len(t) == 8 and t[0] == \"h0:9464\", t" "$tmp/mrcfab-agents.json"' \
    "its command writes one target per host of the topology ($(head -c 60 "$tmp/mrcfab-agents.json" 2>/dev/null)...)"
check 'promtool check config "$tmp/prometheus.yml" >"$tmp/promtool-config.out" 2>&1 && ! grep -q WARNING "$tmp/promtool-config.out"' \
    "promtool check config: the scrape configuration and the agents' file, no warning"

# the check can fail: a name no program exports, a panel on another datasource, a bad
# expression, a variable the dashboard does not define, a label the metric does not have
python3 - "$dash" "$tmp" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
def first_target(x):
    return next(p for p in x["panels"] if p.get("targets"))
for name, edit in [
    ("name", lambda x: first_target(x)["targets"][0].update(expr="rate(mrcfab_agent_retransmit_total[5m])")),
    ("ds", lambda x: first_target(x).update(datasource={"type": "prometheus", "uid": "prom1"})),
    ("promql", lambda x: first_target(x)["targets"][0].update(expr="sum by (state (mrcfab_agent_evs)")),
    ("var", lambda x: first_target(x)["targets"][0].update(expr='mrcfab_agent_evs{instance=~"$agnet"}')),
    ("label", lambda x: first_target(x)["targets"][0].update(expr="sum by (status) (mrcfab_http_requests_total)")),
]:
    x = json.loads(json.dumps(d))
    edit(x)
    json.dump(x, open(f"{sys.argv[2]}/bad-{name}.json", "w"))
PYEOF
bad_fails() {
    python3 "$src/tests/cli/grafana_check.py" "$tmp/bad-$1.json" "$tmp/names" "$tmp/bad-$1.yml" \
        --samples "$tmp/samples" >"$tmp/bad-$1.out" 2>&1 && return 1
    grep -q "^FAIL.*$2" "$tmp/bad-$1.out"
}
check 'bad_fails name "mrcfab_agent_retransmit_total is not a metric"' "a name no program exports fails"
check 'bad_fails ds "datasource"' "a panel on another datasource fails"
check 'bad_fails var "agnet is not a variable"' "an undefined variable fails"
check 'bad_fails label "label status is on none of mrcfab_http_requests_total"' \
    "a label the live metric does not have fails"
python3 "$src/tests/cli/grafana_check.py" "$tmp/bad-promql.json" "$tmp/names" "$tmp/bad-promql.yml" >/dev/null || true
check '! promtool check rules "$tmp/bad-promql.yml" >/dev/null 2>&1' "a bad expression fails promtool"
finish grafana_dashboard
