#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The denylist floor on the lab fabric: an operator forces a deny-everything list (every T1 of
# every plane, so that h0 and h5, under different T0s, have no path the list leaves) in the
# middle of a checked transfer from h0 to h5. The transfer keeps going on the floor (a quarter
# of the EVs, the least bad), which mrc-perf status, the agent's --metrics and the
# controller's agents listing all show, and the agent logs once; lifting the entries gives
# every EV back. About 40 s; at most 90.
set -euo pipefail

bin=${1:?usage: agent_floor.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test ag
started=$(now_ms)

lab up --fabric-only >/dev/null
port=$((20000 + $$ % 20000))
mport=$((port + 1))
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
chmod 600 "$work/tokens" # the controller takes a tokens file only its owner can read
"$bin/mrc-controller" --topology "$topo" --db "$work/ctl.db" --tokens "$work/tokens" \
    --listen "[$croot]:$port" --cc uet-1.0-nscc --port-gbps 10 --base-rtt-ns 100000 \
    --agent-interval 1 >>"$work/controller.log" 2>&1 &
ctl_pid=$!
for _ in $(seq 50); do curl -sf "$url/metrics" >/dev/null && break; sleep 0.1; done
api() {
    local method=$1 path=$2
    shift 2
    curl -s -X "$method" -H "Authorization: Bearer $op_token" -H 'Content-Type: application/json' \
        "$url/api/v1/$path" "$@"
}
for h in h0 h5; do
    extra=()
    [ "$h" = h0 ] && extra=(--metrics "[$(lab addr h0)]:$mport")
    bgx "$h" "$bin/mrc-agent" --topology "$topo" --host "$h" --controller "$url" \
        --token-file "$work/token-$h" --state-dir "$work/state-$h" --report-interval 1 \
        "${extra[@]}" >"$work/agent-$h.log" 2>&1
    pids+=($!)
done
status() { nsx "$1" "$bin/mrc-perf" status; }
# waits up to $1 ms for the command after it to succeed
until_ms() {
    local limit=$1 t0
    shift
    t0=$(now_ms)
    until "$@"; do
        [ $(($(now_ms) - t0)) -lt "$limit" ] || return 1
        sleep 0.05
    done
}
connected() { [ "$(status "$1" 2>/dev/null | jq_ controller connected 2>/dev/null)" = True ]; }
for h in h0 h5; do until_ms 5000 connected "$h" || fail "$h did not reach the controller"; done
echo "PASS: two agents hold the push channel"

# transfer SECONDS FILE: from h0 to h5 in the background ($xfer), a server taking one client
transfer() {
    bgx h5 "$bin/mrc-perf" server --once >"$work/srv.log" 2>&1
    pids+=($!)
    sleep 0.3
    bgx h0 "$bin/mrc-perf" client "$(lab addr h5)" --duration "$1" >"$2" 2>"$work/cli.log"
    xfer=$!
}
check_transfer() {
    wait "$xfer" || true
    local f=$1
    [ -s "$f" ] || fail "$2: the transfer gave no result"
    [ "$(jq_ server bytes_bad <"$f")" = 0 ] || fail "$2: bytes arrived wrong"
    [ "$(jq_ client transport qp_error <"$f")" = False ] || fail "$2: the QP failed"
    [ "$(jq_ server bytes_verified <"$f")" = "$(jq_ client bytes <"$f")" ] ||
        fail "$2: the sink checked other than what the source completed"
    [ "$(jq_ server bytes_verified <"$f")" -gt 0 ] || fail "$2: nothing was delivered"
    echo "PASS: $2: $(jq_ server bytes_verified <"$f") bytes delivered and checked," \
        "$(jq_ client gbps <"$f" | cut -c1-4) Gb/s, no QP failure"
}
# the checks below need the transfer's QP: a machine too loaded to make them in time fails
# with that said, not with a wrong finding
running() { kill -0 "$xfer" 2>/dev/null || fail "the transfer ended before the checks of $1"; }
has_qp() { [ "$(status h0 | jq_ qps)" -gt 0 ]; }
floored() { [ "$(status h0 | jq_ deny_floor peers)" = 1 ]; }
version() { [ "$(status "$1" | jq_ controller denylist_version)" = "$2" ]; }

# 1. every T1 of every plane, forced past the controller's capacity floor (which refuses the
# last one without force: it leaves every pair of hosts under different T0s no path)
ids=()
for t1 in p0-t1-0 p0-t1-1 p1-t1-0 p1-t1-1; do
    if [ "$t1" = p1-t1-1 ]; then
        api POST "denylist?dry_run=true" -d "{\"element\":\"$t1\",\"reason\":\"floor test\"}" \
            >"$work/dry.json"
        [ "$(jq_ refused <"$work/dry.json")" = True ] ||
            fail "the controller would take the last T1 without force: $(cat "$work/dry.json")"
    fi
    api POST "denylist?force=true" -d "{\"element\":\"$t1\",\"reason\":\"floor test\"}" \
        >"$work/deny.json"
    ids+=("$(jq_ id <"$work/deny.json")") || fail "$t1 was not added: $(cat "$work/deny.json")"
done
v=$(api GET denylist | jq_ version)
for h in h0 h5; do until_ms 5000 version "$h" "$v" || fail "$h did not apply denylist $v"; done

# 2. a transfer under it: its QP is at the floor from the start
transfer 20 "$work/xfer1.json"
until_ms 5000 has_qp || fail "the transfer made no QP on h0"
until_ms 3000 floored || fail "h0 did not go to the floor: $(status h0 | jq_ deny_floor)"
status h0 >"$work/st.json"
read -r peer evs allowed kept < <(jq_ deny_floor held 0 <"$work/st.json" | python3 -c 'import json,sys
p=json.load(sys.stdin); print(p["peer"], p["evs"], p["allowed"], p["kept"])')
[ "$peer" = h5 ] && [ "$allowed" = 0 ] && [ "$evs" -gt 0 ] && [ "$kept" = $(((evs + 3) / 4)) ] ||
    fail "h0 holds $peer with $kept of $evs EVs kept ($allowed allowed), not a quarter"
denied=$(jq_ ev_states denied <"$work/st.json")
[ "$denied" = $((evs - kept)) ] || fail "$denied EVs denied, not $((evs - kept))"
echo "PASS: deny-everything: h0 holds h5 at the floor, $kept of $evs EVs in use, $denied denied"

# traffic flows at the floor: h5's agent takes packets, and h0 sends on the kept EVs only
rx() { status h5 | jq_ io rx_pkts; }
nsx h0 "$bin/mrc-perf" evs >"$work/evs0.json"
before=$(rx)
sleep 2
after=$(rx)
nsx h0 "$bin/mrc-perf" evs >"$work/evs1.json"
running "the traffic at the floor"
read -r on_kept on_denied < <(python3 - "$work/evs0.json" "$work/evs1.json" <<'EOF2'
import json, sys
a, b = (json.load(open(f))["evs"] for f in sys.argv[1:])
was = {(x["qpn"], x["ev"]): x["sent"] for x in a}
kept = sum(x["sent"] - was.get((x["qpn"], x["ev"]), 0) for x in b if x["state"] != "denied")
denied = sum(x["sent"] - was.get((x["qpn"], x["ev"]), 0) for x in b if x["state"] == "denied")
print(kept, denied)
EOF2
)
[ $((after - before)) -gt 0 ] && [ "$on_kept" -gt 0 ] && [ "$on_denied" = 0 ] ||
    fail "at the floor h0 sent $on_kept packets on the kept EVs and $on_denied on the denied;" \
        "h5 took $((after - before))"
echo "PASS: at the floor h0 sent $on_kept packets on the kept EVs (none on the denied), h5 took $((after - before))"

# the controller's view of h0 (its listing), h0's metrics, and one log line
in_listing() {
    api GET agents | python3 -c 'import json,sys
a=[x for x in json.load(sys.stdin)["items"] if x["host"]=="h0"][0]
f=a.get("deny_floor")
sys.exit(0 if f and f["peers"]==1 and f["evs"]==int(sys.argv[1]) and f["entered"]==1 else 1)' "$kept"
}
until_ms 4000 in_listing || fail "the controller's agents listing does not show h0 at the floor: $(api GET agents)"
curl -sf --max-time 5 "http://[$(lab addr h0)]:$mport/metrics" >"$work/h0.prom" ||
    fail "h0's metrics could not be scraped"
running "the listing and the metrics"
metric() { awk -v m="$1" '$1 == m {print $2}' "$work/h0.prom"; }
[ "$(metric mrcfab_agent_deny_floor_peers)" = 1 ] && [ "$(metric mrcfab_agent_deny_floor_evs)" = "$kept" ] &&
    [ "$(metric mrcfab_agent_deny_floor_entered_total)" = 1 ] ||
    fail "h0's metrics do not show the floor: $(grep deny_floor "$work/h0.prom")"
n=$(grep -c 'denylist floor: h5: the denylist leaves 0 of' "$work/agent-h0.log" || true)
[ "$n" = 1 ] || fail "h0 logged going to the floor $n times"
echo "PASS: the controller lists h0 at the floor, and so do its metrics; one log line"
check_transfer "$work/xfer1.json" "a transfer at the floor"

# 3. the lift in the middle of a transfer: every EV back
transfer 12 "$work/xfer2.json"
until_ms 5000 has_qp || fail "the second transfer made no QP on h0"
until_ms 3000 floored || fail "h0's second QP did not go to the floor"
dels=()
for id in "${ids[@]}"; do
    api DELETE "denylist/$id" >/dev/null &
    dels+=($!)
done
wait "${dels[@]}"
lifted() {
    status h0 >"$work/st.json"
    [ "$(jq_ deny_floor peers <"$work/st.json")" = 0 ] && [ "$(jq_ ev_states denied <"$work/st.json")" = 0 ]
}
until_ms 5000 lifted || fail "lifting the entries did not give h0 its EVs back: $(cat "$work/st.json")"
back=$(nsx h0 "$bin/mrc-perf" evs | python3 -c 'import json,sys
e=json.load(sys.stdin)["evs"]; print(sum(x["state"]!="denied" for x in e), len(e))')
running "the lift"
[ "${back% *}" = "${back#* }" ] && [ "${back#* }" -gt 0 ] ||
    fail "after the lift only ${back% *} of ${back#* } EVs are in use"
[ "$(grep -c 'denylist floor: h5: off the floor' "$work/agent-h0.log")" = 2 ] ||
    fail "h0 did not log leaving the floor once per QP's stay on it"
off_listing() {
    api GET agents | python3 -c 'import json,sys
a=[x for x in json.load(sys.stdin)["items"] if x["host"]=="h0"][0]
sys.exit(1 if "deny_floor" in a else 0)'
}
until_ms 4000 off_listing || fail "the controller still lists h0 at the floor"
echo "PASS: lifted: all ${back#* } EVs of h0 back, off the floor in its log and the listing"
check_transfer "$work/xfer2.json" "a transfer through the lift"
echo "PASS: done in $(($(now_ms) - started)) ms"
