#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One true view of path health on the lab with the whole system and no data traffic at all
# (issue 18, item 8): the prober's coverage makes every link ok; a lossy T0-T1 link is bad in
# the controller's health within 10 s, with the prober's evidence and verdict, its entry
# shown denied and in health path; a restarted controller shows the same health at once; an
# operator's drain shows in health path beside it; after the heal the link is ok again.
set -euo pipefail

bin=${1:?usage: lab_health.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
lab_test lh
port=$((20000 + ($$ + 7) % 20000))
labx() { lab -P "$port" "$@"; }
labx up >"$work/up.log" 2>&1 || { cat "$work/up.log"; fail "lab up"; }
lab_ctl -P "$port"
reader=$(cat "$work/lab/token/reader")
get() { ctl_curl -s --max-time 10 -H "Authorization: Bearer $reader" "$ctl$1"; }
mrcctl() { "$bin/mrcctl" -t "$topo" --controller "$ctl" --token-file "$work/lab/token/admin" "$@"; }
link=p0-t0-1~p0-t1-0
waited=

# wait_for SECONDS EXPR: EXPR (python over d, the answer of $path) true within SECONDS; sets
# waited (seconds, to a tenth)
wait_for() {
    local limit=$1 expr=$2 t0
    t0=$(now_ms)
    while [ $(($(now_ms) - t0)) -lt $((limit * 1000)) ]; do
        if get "$path" | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)" 2>/dev/null; then
            waited=$(awk -v t=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", t / 1000 }')
            return 0
        fi
        sleep 0.25
    done
    waited=">$limit"
    return 1
}

# 1: no traffic, and every link has the prober's evidence
path=/api/v1/health/summary
ok=0
wait_for 20 "all(p[\"links\"][\"no_data\"] == 0 and p[\"host_ports\"][\"no_data\"] == 0 for p in d[\"planes\"]) and all(p[\"bad\"] == 0 for p in d[\"planes\"])" || ok=1
check '[ $ok = 0 ]' "with no data traffic every link and host port has the prober's evidence, none bad (${waited} s)"

# 2: a lossy link, bad within 10 s, on the prober's evidence alone
labx fault loss p0-t0-1 p0-t1-0 3 one-way >/dev/null
path="/api/v1/health/links?plane=0&state=bad"
ok=0
wait_for 10 "[i[\"link\"] for i in d[\"items\"]] == [\"$link\"] and d[\"items\"][0][\"up\"][\"prober\"][\"own\"] and d[\"items\"][0][\"up\"][\"agents\"][\"sent\"] == 0" || ok=1
check '[ $ok = 0 ]' "3 % loss on $link up: bad in the controller's health in ${waited} s (<= 10 s), the prober's evidence alone, nothing else bad"
path=/api/v1/health/links?plane=0\&state=bad
ok=0
wait_for 20 "d[\"items\"] and d[\"items\"][0][\"verdict\"] is not None and any(e[\"source\"] == \"prober\" for e in d[\"items\"][0][\"denied\"])" || ok=1
check '[ $ok = 0 ]' "its verdict and the prober's entry beside it (${waited} s)"
get /api/v1/health/links?plane=0\&state=bad >"$work/bad.json"
verdict=$(jq_ items 0 verdict component <"$work/bad.json")
entry=$(python3 -c "import json; d=json.load(open('$work/bad.json')); print([e['id'] for e in d['items'][0]['denied'] if e['source'] == 'prober'][0])")

# 3: health path marks the EVs the entry excludes: h2 (under p0-t0-1) to h7 over p0-t1-0
get "/api/v1/health/path?from=h2&to=h7" >"$work/path.json"
check 'python3 -c "import json,sys; d=json.load(open(\"$work/path.json\")); e=[e for e in d[\"evs\"] if e[\"plane\"] == 0 and e.get(\"t1\") == \"p0-t1-0\"][0]; sys.exit(0 if e[\"excluded\"] and $entry in [x[\"id\"] for x in e[\"denied\"]] and e[\"state\"] == \"bad\" else 1)"' \
    "health path h2 -> h7: the EV over p0-t1-0 excluded by entry $entry, bad"
check 'mrcctl health path h2:0 h7:0 | grep -q "#$entry"' "mrcctl health path names entry #$entry"

# 4: an operator's drain beside it
mrcctl drain p1-t1-1 --reason "lab_health" >/dev/null
get "/api/v1/health/path?from=h0&to=h5" >"$work/path2.json"
check 'python3 -c "import json,sys; d=json.load(open(\"$work/path2.json\")); e=[e for e in d[\"evs\"] if e[\"plane\"] == 1 and e.get(\"t1\") == \"p1-t1-1\"][0]; sys.exit(0 if e[\"excluded\"] and e[\"denied\"][0][\"source\"] == \"operator\" else 1)"' \
    "a drained T1 excludes its EVs in health path, the operator's entry named"

# 5: a restart keeps health
labx restart controller >/dev/null
path="/api/v1/health/links?plane=0&state=bad"
ok=0
wait_for 5 "[i[\"link\"] for i in d[\"items\"]] == [\"$link\"] and d[\"items\"][0][\"verdict\"][\"component\"] == \"$verdict\"" || ok=1
check '[ $ok = 0 ]' "the controller restarted: the same health $waited s after it answers, with the verdict"
mrcctl undrain p1-t1-1 >/dev/null

# 6: the heal: ok again once the prober lifts its entry
labx heal p0-t0-1 >/dev/null
path="/api/v1/health/links?plane=0&limit=1000"
ok=0
wait_for 60 "[i[\"state\"] for i in d[\"items\"] if i[\"link\"] == \"$link\"] == [\"ok\"] and not any(i[\"denied\"] for i in d[\"items\"])" || ok=1
check '[ $ok = 0 ]' "healed: $link ok again in ${waited} s, its entry lifted (the hold is the lab's 10 s of clean probing)"

labx down >/dev/null 2>&1 || true
finish lab_health
