#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe localize keeps its word across restarts (issue 19, item 9): on the lab fabric (a
# node on every host, the controller and the localizer in the root namespace, its token of role
# localizer), one direction of a T0-T1 link loses 2 % and is denied; then
#   - the localizer is killed (SIGKILL) and started again while the fault persists: its state
#     file brings the verdict back with its entry, which is kept (one entry, the same id) past
#     the time a restored hold would take to be lifted;
#   - killed again, the fault healed, started again: the entry is lifted within the longest
#     horizon's windows and the hold;
#   - denied again, killed, its state file removed, healed, started again: the entry it owns at
#     the controller is adopted and lifted as well.
# Nothing it denied stays denied. Root (network namespaces), 77 otherwise; about 90 s.
set -euo pipefail

bin=${1:?usage: probe_restart.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test lz

lab up --fabric-only >/dev/null
croot=$(lab addr root)
port=$((20000 + $$ % 20000))
lport=$((port + 1))
url="http://[$croot]:$port"
lurl="http://[$croot]:$lport"
hosts=$("$bin/mrcctl" -t "$topo" topo hosts --no-header | awk '!s[$1]++ {print $1}')
op_token=operator-token-0123456789
{
    echo "localizer-token-0123456789 localizer loc"
    echo "$op_token operator ops"
} >"$work/tokens"
echo localizer-token-0123456789 >"$work/token-loc"
for h in $hosts; do
    echo "node-token-$h-0123456789 prober $h"
    echo "node-token-$h-0123456789" >"$work/token-node-$h"
done >"$work/node-tokens"
chmod 600 "$work/tokens" "$work/node-tokens" # the daemons take tokens files only their owner can read
"$bin/mrc-controller" --topology "$topo" --db "$work/ctl.db" --tokens "$work/tokens" \
    --listen "[$croot]:$port" >>"$work/controller.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -sf "$url/metrics" >/dev/null && break; sleep 0.1; done
api() { curl -s -H "Authorization: Bearer $op_token" "$url/api/v1/$1"; }

hold=3
window_ms=500
# a restored hold waits for the longest horizon's windows (32) before it counts, then the hold
regain_s=$((32 * window_ms / 1000))
state=$work/loc.state
loc_pid=
loc_start() {
    "$bin/mrc-probe" localize --topology "$topo" --window-ms $window_ms --rate 512 \
        --listen "[$croot]:$lport" --controller "$url" --token-file "$work/token-loc" \
        --report-tokens "$work/node-tokens" --hold-s $hold --deadline-ms 800 --state "$state" \
        >>"$work/localize.log" 2>&1 &
    loc_pid=$!
    pids+=($loc_pid)
    for _ in $(seq 50); do curl -sf "$lurl/api/v1/status" >/dev/null && break; sleep 0.1; done
}
loc_kill() {
    kill -KILL "$loc_pid"
    wait "$loc_pid" 2>/dev/null || true
}
loc_start
for h in $hosts; do
    bgx "$h" "$bin/mrc-probe" node --topology "$topo" --host "$h" --window-ms $window_ms --rate 512 \
        --grace-ms 200 --report-url "$lurl/api/v1/reports" \
        --token-file "$work/token-node-$h" >/dev/null 2>"$work/probe-$h.log"
    pids+=($!)
done

# the prober's entries as "id element scope author" lines
entry_ids() {
    api denylist | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e["source"] == "prober": print(e["id"], e["element"], e["scope"], e["author"])'
}
loc_status() { curl -s "$lurl/api/v1/status" | jq_ "$@" 2>/dev/null; }
# a field of the localizer's verdict on the link (a loaded machine may add others: ignored)
lv() {
    curl -s "$lurl/api/v1/status" | python3 -c 'import json,sys
v=[x for x in json.load(sys.stdin)["verdicts"] if x["component"] == "p0 U t0=1 t1=0"]
if len(v) != 1: print(len(v), "verdicts"); sys.exit(0)
v=v[0]
for k in sys.argv[1:]: v=v[int(k)] if isinstance(v,list) else v[k]
print(v)' "$@"
}
within() {
    local t0
    t0=$(now_ms)
    while [ $(($(now_ms) - t0)) -lt $(($1 * 1000)) ]; do
        eval "$2" && return 0
        sleep 0.25
    done
    return 1
}
link="p0-t0-1~p0-t1-0"
# the link's entries, "id element scope author" lines
link_ids() { entry_ids | grep " $link " || true; }
denied() { [ "$(link_ids | wc -l)" = 1 ] && link_ids | grep -q " $link up loc$"; }

sleep 2
[ -z "$(link_ids)" ] || fail "the prober denied $link on a healthy fabric: $(entry_ids)"
lab fault loss p0-t0-1 p0-t1-0 2 one-way
within 30 denied || fail "'$link up' was not denied: '$(entry_ids)'"
id=$(link_ids | awk '{print $1}')
within 5 '[ "$(lv state)" = denied ]' || fail "not denied: $(loc_status verdicts)"
python3 - "$state" "$id" <<'PYEOF' || fail "the state file: $(cat "$state")"
import json, sys
s = json.load(open(sys.argv[1]))
a = [x for x in s["actions"] if x["component"] == "p0 U t0=1 t1=0"]
assert s["version"] == 1 and len(a) == 1 and a[0]["state"] == "in_force", s
assert a[0]["component"] == "p0 U t0=1 t1=0" and a[0]["entries"] == [{"id": int(sys.argv[2]), "st": "held"}], a
PYEOF
[ "$(stat -c %a "$state")" = 600 ] || fail "the state file's mode: $(stat -c %a "$state")"
echo "PASS: '$link up' denied (entry $id), in the state file (mode 0600)"

# --- restarted while the fault persists: kept, not duplicated, the hold goes on --------------
loc_kill
loc_start
[ "$(lv entries 0)" = "$id" ] && [ "$(lv restored)" = True ] ||
    fail "the restarted localizer did not restore entry $id: $(loc_status verdicts)"
grep -q "state file $state: [0-9]* components restored" "$work/localize.log" ||
    fail "no restore said in the log"
sleep $((regain_s + hold + 4))
[ "$(link_ids)" = "$id $link up loc" ] || fail "after the restart the prober holds '$(link_ids)', not entry $id alone"
[ "$(lv state)" = denied ] && [ "$(lv entries 0)" = "$id" ] ||
    fail "the restarted localizer: $(loc_status verdicts)"
echo "PASS: restarted while faulty: entry $id kept $((regain_s + hold + 4)) s, one entry, the verdict denied again"

# --- killed, healed, restarted: lifted within the longest horizon and the hold ----------------
loc_kill
lab heal p0-t0-1 p0-t1-0
loc_start
t0=$(now_ms)
within $((regain_s + hold + 15)) '[ -z "$(link_ids)" ]' ||
    fail "entry $id was not lifted $((regain_s + hold + 15)) s after the restart: $(loc_status verdicts)"
echo "PASS: killed, healed, restarted: entry $id lifted $(($(now_ms) - t0)) ms after the restart"

# --- no state file: the entry it owns at the controller adopted and lifted -------------------
lab fault loss p0-t0-1 p0-t1-0 2 one-way
within 30 denied || fail "'$link up' was not denied again: '$(entry_ids)'"
id=$(link_ids | awk '{print $1}')
within 5 '[ "$(lv state)" = denied ]' || fail "not denied: $(loc_status verdicts)"
loc_kill
rm -f "$state"
lab heal p0-t0-1 p0-t1-0
loc_start
t0=$(now_ms)
within 10 "grep -q 'adopted entry $id ($link up) of p0 U t0=1 t1=0' '$work/localize.log'" ||
    fail "entry $id not adopted: $(loc_status verdicts)"
within $((regain_s + hold + 15)) '[ -z "$(link_ids)" ]' ||
    fail "adopted entry $id was not lifted $((regain_s + hold + 15)) s after the restart: $(loc_status verdicts)"
echo "PASS: no state file: entry $id adopted from the controller and lifted $(($(now_ms) - t0)) ms after the restart"
within 5 '[ "$(lv state)" = "0 verdicts" ]' || fail "the localizer still holds $(loc_status verdicts)"
kill -0 "$loc_pid" || fail "the localizer died"
echo "PASS: nothing the localizer denied stays denied across its restarts"
