#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-agent --metrics on the lab fabric, scraped with curl from the root namespace over the
# management network (as Prometheus would): promtool check metrics clean; the packets and bytes
# of every port, the SACKs and, under a lossy cable, the retransmissions move with an mrc-perf
# run, equal what mrc-perf status shows, and do not fall when the run's QPs go; QPs and EVs by
# state (a denylist entry's DENIED EVs) during the run; the denylist version and the controller's
# channel as the controller has them; 404 and 405; no listener without --metrics; the Grafana
# dashboard's agent panels against a live answer (names and labels).
set -euo pipefail

bin=${1:?usage: agent_metrics.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
command -v promtool >/dev/null || { echo "FAIL: no promtool (deploy/install-deps.sh installs it)"; exit 1; }
lab_test hm

lab up --fabric-only >/dev/null
mport=9464
port=$((20000 + $$ % 20000))
croot=$(lab addr root)
url="http://[$croot]:$port"
op_token=operator-token-0123456789
{
    for h in h0 h5; do
        echo "agent-token-$h-0123456789 agent $h"
        echo "agent-token-$h-0123456789" >"$work/token-$h"
    done
    echo "$op_token operator ops"
} >"$work/tokens"
chmod 600 "$work/tokens" # a tokens file only its owner can read
"$bin/mrc-controller" --topology "$topo" --db "$work/ctl.db" --tokens "$work/tokens" \
    --listen "[$croot]:$port" --agent-interval 1 >>"$work/controller.log" 2>&1 &
ctl_pid=$!
for _ in $(seq 50); do curl -sf "$url/metrics" >/dev/null && break; sleep 0.1; done
curl -sf "$url/metrics" >/dev/null || fail "the controller did not start"
api() {
    local method=$1 path=$2
    shift 2
    curl -s -X "$method" -H "Authorization: Bearer $op_token" -H 'Content-Type: application/json' \
        "$url/api/v1/$path" "$@"
}

# h0 with the controller, h5 alone, both serving /metrics on their management address; h2
# without --metrics
bgx h0 "$bin/mrc-agent" --topology "$topo" --host h0 --controller "$url" \
    --token-file "$work/token-h0" --state-dir "$work/state-h0" --report-interval 1 \
    --metrics "[$(lab addr h0)]:$mport" >"$work/agent-h0.log" 2>&1
pids+=($!)
bgx h5 "$bin/mrc-agent" --topology "$topo" --host h5 --metrics "[$(lab addr h5)]:$mport" \
    >"$work/agent-h5.log" 2>&1
pids+=($!)
bgx h2 "$bin/mrc-agent" --topology "$topo" --host h2 >"$work/agent-h2.log" 2>&1
pids+=($!)

target() { echo "http://[$(lab addr "$1")]:$mport/metrics"; }
scrape() { curl -sf --max-time 5 "$(target "$1")"; }
# metric FILE 'NAME{LABELS}': its value, or nothing
metric() { awk -v k="$2" '$1 == k {print $2}' "$1"; }
# sum FILE NAME: the sum of every sample of family NAME
sum() { awk -v k="$1" 'index($1, k "{") == 1 || $1 == k {s += $2} END {print s + 0}' "$2"; }
for h in h0 h5; do
    for _ in $(seq 50); do scrape "$h" >/dev/null 2>&1 && break; sleep 0.1; done
    scrape "$h" >"$work/$h-0.prom" || fail "no /metrics from $h at $(target "$h")"
    promtool check metrics <"$work/$h-0.prom" || fail "promtool check metrics: $h"
done
echo "PASS: /metrics of h0 and h5 scraped from the root namespace, promtool check metrics clean"
for _ in $(seq 50); do nsx h2 "$bin/mrc-perf" status >/dev/null 2>&1 && break; sleep 0.1; done
nsx h2 "$bin/mrc-perf" status >/dev/null || fail "the agent of h2 did not come up"
if curl -s --max-time 2 -o /dev/null "$(target h2)"; then
    fail "h2 serves metrics without --metrics"
fi
echo "PASS: an agent without --metrics listens on no port"

curl -s -D "$work/headers" -o /dev/null "$(target h0)"
grep -qi '^content-type: text/plain; version=0.0.4' "$work/headers" ||
    fail "content type: $(grep -i content-type "$work/headers")"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "http://[$(lab addr h0)]:$mport/")" = 404 ] || fail "GET / is not 404"
[ "$(code "http://[$(lab addr h0)]:$mport/api/v1/status")" = 404 ] || fail "another path is not 404"
[ "$(code -X POST -d x "$(target h0)")" = 405 ] || fail "POST /metrics is not 405"
echo "PASS: text/plain; version=0.0.4; 404 elsewhere; 405 for POST"

# the controller's channel and denylist version, as the controller has them
for _ in $(seq 100); do
    scrape h0 >"$work/h0.prom"
    [ "$(metric "$work/h0.prom" mrcfab_agent_controller_connected)" = 1 ] && break
    sleep 0.1
done
[ "$(metric "$work/h0.prom" mrcfab_agent_controller_connected)" = 1 ] ||
    fail "h0 does not show its controller connected"
[ "$(metric "$work/h5-0.prom" mrcfab_agent_controller_connected)" = 0 ] ||
    fail "h5 (no --controller) shows a controller connected"
api POST denylist -d '{"element":"p1-t1-0","reason":"metrics test"}' >"$work/deny.json"
id=$(jq_ id <"$work/deny.json")
want=$(curl -sf "$url/metrics" | awk '$1 == "mrcfab_denylist_version" {print $2}')
[ "${want:-0}" -gt 0 ] || fail "the controller's denylist version is ${want:-missing}"
for _ in $(seq 50); do
    scrape h0 >"$work/h0.prom"
    [ "$(metric "$work/h0.prom" mrcfab_agent_denylist_version)" = "$want" ] && break
    sleep 0.1
done
[ "$(metric "$work/h0.prom" mrcfab_agent_denylist_version)" = "$want" ] ||
    fail "h0 applies denylist $(metric "$work/h0.prom" mrcfab_agent_denylist_version), the controller has $want"
echo "PASS: h0's channel connected (h5's 0) and its denylist version $want the controller's"

# traffic from h0 to h5 with 3 % lost from h0's port 0 into its T0
scrape h0 >"$work/h0-0.prom"
scrape h5 >"$work/h5-0.prom"
lab fault loss h0:0 p0-t0-0 3 one-way >/dev/null
bgx h5 "$bin/mrc-perf" server --once >"$work/srv.json" 2>"$work/srv.log"
pids+=($!)
sleep 0.3
bgx h0 "$bin/mrc-perf" client "$(lab addr h5)" --duration 3 >"$work/cli.json" 2>"$work/cli.log"
client=$!
pids+=($client)
sleep 1.5
scrape h0 >"$work/h0-1.prom"
wait "$client" || fail "mrc-perf client failed: $(cat "$work/cli.log")"
lab heal --all >/dev/null
sleep 0.5
scrape h0 >"$work/h0-2.prom"
scrape h5 >"$work/h5-2.prom"
for f in "$work"/h?-?.prom; do promtool check metrics <"$f" || fail "promtool: $f"; done
[ "$(jq_ server bytes_bad <"$work/cli.json")" = 0 ] || fail "the run moved bytes wrong"

mid=$work/h0-1.prom
[ "$(metric "$mid" mrcfab_agent_qps)" -ge 1 ] || fail "no QP during the run"
good=$(metric "$mid" 'mrcfab_agent_evs{state="good"}')
denied=$(metric "$mid" 'mrcfab_agent_evs{state="denied"}')
[ "$good" -gt 0 ] && [ "$denied" -gt 0 ] ||
    fail "EVs during the run under a denied T1: $good good, $denied denied"
[ "$(metric "$work/h0-2.prom" mrcfab_agent_qps)" = 0 ] || fail "QPs left after the run"
echo "PASS: during the run $(metric "$mid" mrcfab_agent_qps) QP, $good EVs good and $denied denied (p1-t1-0); none after"

# every port's packets and bytes moved both ways, and equal mrc-perf status's counters
st0=$(nsx h0 "$bin/mrc-perf" status)
for p in 0 1; do
    for d in tx rx; do
        for h in h0 h5; do
            b=$(metric "$work/$h-0.prom" "mrcfab_agent_packets_total{port=\"$p\",dir=\"$d\"}")
            a=$(metric "$work/$h-2.prom" "mrcfab_agent_packets_total{port=\"$p\",dir=\"$d\"}")
            bb=$(metric "$work/$h-0.prom" "mrcfab_agent_bytes_total{port=\"$p\",dir=\"$d\"}")
            ab=$(metric "$work/$h-2.prom" "mrcfab_agent_bytes_total{port=\"$p\",dir=\"$d\"}")
            [ $((a - b)) -gt 100 ] || fail "$h port $p $d packets moved by $((a - b))"
            # at least an MRC header each (IPv6 + UDP + BTH)
            [ $((ab - bb)) -ge $(((a - b) * 60)) ] || fail "$h port $p $d bytes moved by $((ab - bb))"
        done
        [ "$(metric "$work/h0-2.prom" "mrcfab_agent_packets_total{port=\"$p\",dir=\"$d\"}")" = \
            "$(jq_ io "${d}_port" "$p" <<<"$st0")" ] || fail "h0 port $p $d: /metrics and status differ"
    done
done
echo "PASS: packets and bytes of both ports, both ways, moved on h0 and h5 and equal status's"

moved() { echo $(($(sum "$1" "$work/$2-2.prom") - $(sum "$1" "$work/$2-0.prom"))); }
retx=$(moved mrcfab_agent_retransmits_total h0)
[ "$retx" -gt 0 ] || fail "no retransmission counted under 3 % loss"
[ "$(moved mrcfab_agent_sacks_total h0)" -gt 0 ] || fail "h0 counted no SACK received"
[ "$(metric "$work/h5-2.prom" 'mrcfab_agent_sacks_total{dir="tx"}')" -gt \
    "$(metric "$work/h5-0.prom" 'mrcfab_agent_sacks_total{dir="tx"}')" ] || fail "h5 counted no SACK sent"
lost=$(metric "$work/h0-2.prom" 'mrcfab_agent_packets_total{port="0",dir="tx"}')
lost=$((lost - $(metric "$work/h5-2.prom" 'mrcfab_agent_packets_total{port="0",dir="rx"}')))
echo "PASS: $retx retransmissions counted on h0 ($lost of its port 0's packets lost), SACKs both ends"

# a counter of the QPs' sums does not fall when the run's QPs are freed
n=0
while read -r name value; do
    after=$(metric "$work/h0-2.prom" "$name")
    [ "${after:-0}" -ge "$value" ] || fail "$name fell from $value to ${after:-nothing} after the run"
    n=$((n + 1))
done < <(grep -v '^#' "$mid" | grep '_total')
[ "$n" -ge 30 ] || fail "only $n counter samples compared"
echo "PASS: none of h0's $n counter samples fell when the run's QPs went"

# the Grafana dashboard's agent panels select only names a live agent exports, by its labels
grep -v '^#' "$work/h0-2.prom" | sed 's/[{ ].*//' | sort -u >"$work/live-names"
missing=$(python3 "$root/tests/cli/grafana_check.py" "$root/deploy/grafana/mrcfab.json" --names-only |
    grep '^mrcfab_agent_' | grep -vxFf "$work/live-names" || true)
[ -z "$missing" ] || fail "the dashboard selects agent metrics h0 does not export: $missing"
python3 "$root/tests/cli/grafana_check.py" "$root/deploy/grafana/mrcfab.json" "$work/live-names" \
    "$work/rules.yml" --samples "$work/h0-2.prom" >"$work/grafana.out" || true
if grep '^FAIL.*\(mrcfab_agent_\|label\)' "$work/grafana.out"; then
    fail "the dashboard's agent panels against h0's /metrics"
fi
grep -q '^PASS the labels of [1-9][0-9]* expressions' "$work/grafana.out" ||
    fail "no agent panel's labels checked: $(grep labels "$work/grafana.out")"
echo "PASS: every mrcfab_agent_ name and label of deploy/grafana/mrcfab.json is in h0's /metrics"

api DELETE "denylist/$id" >/dev/null
echo "agent_metrics: all passed"
