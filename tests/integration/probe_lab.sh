#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe against gray failures on the lab fabric (issue 8, item 6): a node on every host,
# the localizer in the root namespace with the controller, two agents moving data. Each fault
# in turn, by nftables: 1 % of one direction of a T0-T1 link; 1 % of a host port's uplink; a
# T1 that drops everything while its links stay up; the first link again (a flap: the hold
# doubles). Each time the localizer names the exact
# element and direction (a switch, not its links) within 30 s and nothing else, the controller
# holds the entry and the agents' EVs over it go DENIED; once the rule is gone the entry is
# lifted after the hold.
set -euo pipefail

bin=${1:?usage: probe_lab.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test pl

lab up --fabric-only >/dev/null
croot=$(lab addr root)
port=$((20000 + $$ % 20000))
lport=$((port + 1))
url="http://[$croot]:$port"
hosts=$("$bin/mrcctl" -t "$topo" topo hosts --no-header | awk '!s[$1]++ {print $1}')
op_token=operator-token-0123456789
{
    for h in h0 h5; do
        echo "agent-token-$h-0123456789 agent $h"
        echo "agent-token-$h-0123456789" >"$work/token-$h"
    done
    echo "prober-token-0123456789 prober localizer"
    echo "$op_token operator ops"
} >"$work/tokens"
echo prober-token-0123456789 >"$work/token-prober"
# each host's node its own token, good for its own host's reports only
for h in $hosts; do
    echo "node-token-$h-0123456789 prober $h"
    echo "node-token-$h-0123456789" >"$work/token-node-$h"
done >"$work/node-tokens"
"$bin/mrc-controller" --topology "$topo" --db "$work/ctl.db" --tokens "$work/tokens" \
    --listen "[$croot]:$port" --cc uet-1.0-nscc --port-gbps 10 --base-rtt-ns 100000 \
    >>"$work/controller.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -sf "$url/metrics" >/dev/null && break; sleep 0.1; done
api() { curl -s -H "Authorization: Bearer $op_token" "$url/api/v1/$1"; }

hold=3
window_ms=500
"$bin/mrc-probe" localize --topology "$topo" --window-ms $window_ms --listen "[$croot]:$lport" \
    --controller "$url" --token-file "$work/token-prober" --report-tokens "$work/node-tokens" \
    --hold-s $hold --deadline-ms 800 >"$work/localize.log" 2>&1 &
pids+=($!)
for h in $hosts; do
    bgx "$h" "$bin/mrc-probe" node --topology "$topo" --host "$h" --window-ms $window_ms \
        --grace-ms 200 --report-url "http://[$croot]:$lport/api/v1/reports" \
        --token-file "$work/token-node-$h" >/dev/null 2>"$work/probe-$h.log"
    pids+=($!)
done
for h in h0 h5; do
    bgx "$h" "$bin/mrc-agent" --topology "$topo" --host "$h" --controller "$url" \
        --token-file "$work/token-$h" --state-dir "$work/state-$h" \
        --oob "[$(lab addr "$h")]:7471" >"$work/agent-$h.log" 2>&1
    pids+=($!)
done
sleep 1
bgx h5 "$bin/mrc-perf" server >"$work/srv.log" 2>&1
pids+=($!)
sleep 0.3
# a long transfer from h0 to h5 under every fault: its QPs hold the EVs the denylist turns
bgx h0 "$bin/mrc-perf" client "$(lab addr h5)" --duration 300 >"$work/xfer.json" 2>"$work/cli.log"
xfer=$!
pids+=($xfer)

# the prober's entries now: "element scope" lines
entries() {
    api denylist | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e["source"] == "prober": print(e["element"], e["scope"])'
}
# h0's EVs over (plane, T1) in state $3: "count total"
evs_in() {
    nsx h0 "$bin/mrc-perf" evs | python3 -c 'import json,sys
e=[x for x in json.load(sys.stdin)["evs"] if x["plane"]==int(sys.argv[1]) and x["t1"]==int(sys.argv[2])]
print(sum(x["state"]==sys.argv[3] for x in e), len(e))' "$@"
}
sleep 3
[ -z "$(entries)" ] || fail "the prober denied on a healthy fabric: $(entries)"
echo "PASS: a healthy fabric: no verdict"

# the hold the localizer gives its one verdict in force, in seconds
hold_of() {
    curl -s "http://[$croot]:$lport/api/v1/status" | python3 -c 'import json,sys
v=[x for x in json.load(sys.stdin)["verdicts"] if x["state"] == "denied"]
print(int(v[0]["hold_s"]) if len(v) == 1 else "none")'
}

# scenario WANT PLANE T1 HOLD FAULT...: with `lab fault FAULT...`, WANT is the one "element
# scope" entry expected; h0's EVs over (PLANE, T1) must go DENIED (a T1 "-": none of h0's);
# HOLD the hold it must earn; `lab heal` of the fault's elements ends it
scenario() {
    local want=$1 plane=$2 t1=$3 expect=$4 t0 got n e
    shift 4
    lab fault "$@"
    t0=$(now_ms)
    got=
    while [ $(($(now_ms) - t0)) -lt 30000 ]; do
        got=$(entries)
        [ -n "$got" ] && break
        sleep 0.25
    done
    [ "$got" = "$want" ] || fail "want the entry '$want', the prober holds '${got:-nothing}'"
    echo "PASS: '$want' denied $(($(now_ms) - t0)) ms after the fault, nothing else"
    if [ "$t1" != - ]; then
        for _ in $(seq 20); do
            read -r n e < <(evs_in "$plane" "$t1" denied)
            [ "$e" -gt 0 ] && [ "$n" = "$e" ] && break
            sleep 0.1
        done
        [ "$e" -gt 0 ] && [ "$n" = "$e" ] || fail "h0: $n of its $e EVs over p$plane T1 $t1 denied"
        echo "PASS: h0 stopped using its $e EVs over plane $plane T1 $t1"
    fi
    [ "$(hold_of)" = "$expect" ] || fail "'$want' is held for $(hold_of) s, not $expect s"
    sleep 2
    got=$(entries)
    [ "$got" = "$want" ] || fail "later the prober holds '$got', not only '$want'"
    if [ "$1" = blackhole ]; then lab heal "$2"; else lab heal "$2" "$3"; fi
    t0=$(now_ms)
    while [ $(($(now_ms) - t0)) -lt 30000 ] && [ -n "$(entries)" ]; do sleep 0.25; done
    [ -z "$(entries)" ] || fail "'$want' was not lifted 30 s after the heal"
    echo "PASS: '$want' lifted $(($(now_ms) - t0)) ms after the heal (hold $expect s)"
}

scenario "p0-t0-0~p0-t1-1 up" 0 1 $hold loss p0-t0-0 p0-t1-1 1 one-way
# host h3's plane-1 port toward its T0
t0name=$("$bin/mrcctl" -t "$topo" topo hosts --no-header | awk '$1 == "h3" && $2 == 1 {print $7}')
scenario "h3:1 up" 1 - $hold loss h3 "$t0name" 1 one-way
# a T1 that forwards nothing but keeps its links (neighbour discovery still answers)
scenario "p1-t1-0 both" 1 0 $hold blackhole p1-t1-0
# the first link fails again soon after its lifting: a flapping element, held twice as long
scenario "p0-t0-0~p0-t1-1 up" 0 1 $((2 * hold)) loss p0-t0-0 p0-t1-1 1 one-way

kill -0 "$xfer" 2>/dev/null || fail "the transfer ended early: $(cat "$work/cli.log")"
[ "$(nsx h0 "$bin/mrc-perf" status | jq_ io tx_errors)" = 0 ] || fail "h0's agent failed sends"
grep -q "failures\":0" <(curl -s "http://[$croot]:$lport/api/v1/status") ||
    fail "the localizer's requests failed: $(curl -s "http://[$croot]:$lport/api/v1/status")"
echo "PASS: the transfer kept going through every fault"
