#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe against gray failures on the lab fabric (issue 8, item 6; issue 18): a node on
# every host, the localizer in the root namespace with the controller.
#
# First with no data traffic at all (no agent, no mrc-perf): the controller takes every evidence
# post (202) and, when one direction of a T0-T1 link loses 2 %, shows that link bad from the
# prober's result for that direction alone, with the localizer's verdict naming it. Then the
# localizer keeps its word: denying while the controller is down, the entry arrives once it is
# back (one entry, not two); a localizer restarted finds its entry again rather than adding
# another; lifting while the controller is down, the entry goes once it is back.
#
# Then with two agents moving data, each fault in turn, by nftables: 1 % of one direction of a
# T0-T1 link; 1 % of a host port's uplink; a T1 that drops everything while its links stay up;
# the first link again (a flap: the hold doubles). Each time the localizer names the exact
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
    echo "prober-token-0123456789 localizer localizer"
    echo "$op_token operator ops"
} >"$work/tokens"
chmod 600 "$work/tokens" # a tokens file only its owner can read
echo prober-token-0123456789 >"$work/token-prober"
# each host's node its own token, good for its own host's reports only
for h in $hosts; do
    echo "node-token-$h-0123456789 prober $h"
    echo "node-token-$h-0123456789" >"$work/token-node-$h"
done >"$work/node-tokens"
chmod 600 "$work/node-tokens"
# the controller: stopped and started again on the same database ($ctl_pid, killed at exit)
ctl_start() {
    "$bin/mrc-controller" --topology "$topo" --db "$work/ctl.db" --tokens "$work/tokens" \
        --listen "[$croot]:$port" --cc uet-1.0-nscc --port-gbps 10 --base-rtt-ns 100000 \
        >>"$work/controller.log" 2>&1 &
    ctl_pid=$!
    for _ in $(seq 50); do curl -sf "$url/metrics" >/dev/null && break; sleep 0.1; done
}
ctl_stop() {
    kill "$ctl_pid"
    wait "$ctl_pid" 2>/dev/null || true
    ctl_pid=
}
ctl_start
api() { curl -s -H "Authorization: Bearer $op_token" "$url/api/v1/$1"; }

hold=3
window_ms=500
loc_pid=
loc_start() {
    "$bin/mrc-probe" localize --topology "$topo" --window-ms $window_ms \
        --listen "[$croot]:$lport" --controller "$url" --token-file "$work/token-prober" \
        --report-tokens "$work/node-tokens" --hold-s $hold --deadline-ms 800 \
        >>"$work/localize.log" 2>&1 &
    loc_pid=$!
    pids+=($loc_pid)
    for _ in $(seq 50); do curl -sf "http://[$croot]:$lport/api/v1/status" >/dev/null && break; sleep 0.1; done
}
loc_start
for h in $hosts; do
    bgx "$h" "$bin/mrc-probe" node --topology "$topo" --host "$h" --window-ms $window_ms \
        --grace-ms 200 --report-url "http://[$croot]:$lport/api/v1/reports" \
        --token-file "$work/token-node-$h" >/dev/null 2>"$work/probe-$h.log"
    pids+=($!)
done

# the prober's entries now: "element scope" lines
entries() {
    api denylist | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e["source"] == "prober": print(e["element"], e["scope"])'
}
# the prober's entries as "id element scope" lines
entry_ids() {
    api denylist | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e["source"] == "prober": print(e["id"], e["element"], e["scope"])'
}
# a field of the localizer's status, by a path of keys and indexes
loc_status() { curl -s "http://[$croot]:$lport/api/v1/status" | jq_ "$@" 2>/dev/null; }
# within S 'COMMANDS': until the shell commands succeed (evaluated anew each time), at most S s
within() {
    local t0
    t0=$(now_ms)
    while [ $(($(now_ms) - t0)) -lt $(($1 * 1000)) ]; do
        eval "$2" && return 0
        sleep 0.25
    done
    return 1
}

# --- no data traffic: the prober's evidence alone ---------------------------------------------
sleep 3
[ -z "$(entries)" ] || fail "the prober denied on a healthy fabric: $(entries)"
[ "$(api 'health/links?state=bad' | jq_ total)" = 0 ] ||
    fail "links bad on a healthy fabric: $(api 'health/links?state=bad')"
[ "$(loc_status evidence last_status)" = 202 ] && [ "$(loc_status evidence failed)" = 0 ] &&
    [ "$(loc_status evidence accepted)" -gt 0 ] ||
    fail "the controller did not take the evidence posts: $(loc_status evidence)"
echo "PASS: a healthy fabric, no data traffic: no verdict, nothing bad, $(loc_status evidence accepted) evidence posts taken (202)"

# the link p0-t0-1~p0-t1-0 at the controller, once bad with the prober's result for its up
# direction and nothing else bad: "lost sent" of that direction
gray=p0-t0-1~p0-t1-0
gray_bad() {
    api 'health/links?state=bad' | python3 -c 'import json,sys
d=json.load(sys.stdin)
if d["total"] != 1: sys.exit(1)
l=d["items"][0]
assert l["link"] == sys.argv[1], ("another link is bad", l)
up=l["up"]
if up["state"] != "bad" or not up["probed"] or not l.get("verdict"): sys.exit(1)
assert l["measured"] == "bad", l
assert l["verdict"]["component"] == "p0 U t0=1 t1=0" and l["verdict"]["kind"] == "link", l
assert up["agents"]["sent"] == 0 and up["prober"]["lost"] == up["lost"] > 0, up
assert up["prober"]["sent"] == up["sent"], up
print(up["lost"], up["sent"])' "$gray" >"$work/gray" 2>"$work/gray.err"
}
lab fault loss p0-t0-1 p0-t1-0 2 one-way
t0=$(now_ms)
within 30 gray_bad || fail "the controller does not show $gray bad from the prober: $(cat "$work/gray.err") $(api 'health/links?state=bad')"
read -r lost sent <"$work/gray"
python3 -c 'import sys; l, n = int(sys.argv[1]), int(sys.argv[2]); sys.exit(not (n > 0 and 0.01 <= l / n <= 0.04))' \
    "$lost" "$sent" || fail "$gray up: $lost of $sent probes lost, not about 2 %"
echo "PASS: $gray up bad at the controller $(($(now_ms) - t0)) ms after 2 % loss, from the prober's result alone ($lost of $sent lost), the verdict 'p0 U t0=1 t1=0' naming it"
within 10 '[ "$(entries)" = "$gray up" ]' || fail "the prober holds '$(entries)', not '$gray up'"
v=$(loc_status verdicts 0 component)
[ "$v" = "p0 U t0=1 t1=0" ] && [ "$(loc_status verdicts 0 state)" = denied ] ||
    fail "the localizer's verdict: $(loc_status verdicts)"
[ "$(loc_status evidence failed)" = 0 ] && [ "$(loc_status evidence last_status)" = 202 ] ||
    fail "evidence posts failed: $(loc_status evidence)"
echo "PASS: the verdict '$v' denied $gray up, every evidence post with it taken (202)"
lab heal p0-t0-1 p0-t1-0
within 30 '[ -z "$(entries)" ]' || fail "'$gray up' was not lifted 30 s after the heal"
echo "PASS: '$gray up' lifted after the heal"

# --- the localizer keeps its word -------------------------------------------------------------
ctl_stop
lab fault loss p0-t0-2 p0-t1-1 2 one-way
adding() { [ "$(loc_status verdicts 0 state)" = adding ] && [ "$(loc_status failures)" -gt 0 ]; }
within 30 adding || fail "no verdict waiting for the controller: $(loc_status)"
sleep 2 # a few tries more
[ "$(loc_status verdicts 0 entries 0)" = 0 ] || fail "an entry id without a controller: $(loc_status)"
ctl_start
t0=$(now_ms)
within 30 '[ "$(entries)" = "p0-t0-2~p0-t1-1 up" ]' ||
    fail "the entry did not arrive when the controller came back: '$(entries)'"
within 5 '[ "$(loc_status verdicts 0 state)" = denied ]' || fail "not denied: $(loc_status)"
id=$(loc_status verdicts 0 entries 0)
[ "$(entry_ids)" = "$id p0-t0-2~p0-t1-1 up" ] || fail "entries: $(entry_ids), the localizer's $id"
echo "PASS: denied while the controller was down, entry $id arrived $(($(now_ms) - t0)) ms after it came back (one, not two)"
# a localizer restarted with its entry in force finds it again
kill "$loc_pid"
wait "$loc_pid" 2>/dev/null || true
loc_start
within 30 '[ "$(loc_status verdicts 0 state)" = denied ]' ||
    fail "the restarted localizer has no verdict: $(loc_status)"
[ "$(loc_status verdicts 0 entries 0)" = "$id" ] || fail "the restarted localizer: $(loc_status verdicts)"
[ "$(entry_ids)" = "$id p0-t0-2~p0-t1-1 up" ] || fail "entries after the restart: $(entry_ids)"
# found in the list it reads at start: adopted (no --state here), or found again on its way
grep -qE "entry $id \(p0-t0-2~p0-t1-1 up\)(, found again| of )" "$work/localize.log" ||
    fail "the restarted localizer did not say it found entry $id again"
echo "PASS: a restarted localizer found entry $id again, no second entry"
# lifting while the controller is down
lab heal p0-t0-2 p0-t1-1
ctl_stop
within 30 '[ "$(loc_status verdicts 0 state)" = lifting ]' ||
    fail "the localizer is not lifting: $(loc_status)"
sleep 2
[ "$(loc_status verdicts 0 state)" = lifting ] || fail "lifting gave up: $(loc_status)"
ctl_start
t0=$(now_ms)
within 30 '[ -z "$(entries)" ]' || fail "entry $id was not lifted when the controller came back"
# the verdict goes once the lift's answer is in and no horizon selects it (a restored one waits
# for its 32 windows of fresh evidence first): seconds more on a loaded machine
within 20 '[ "$(loc_status verdicts)" = "[]" ]' || fail "the localizer still holds $(loc_status verdicts)"
echo "PASS: lifted while the controller was down, entry $id gone $(($(now_ms) - t0)) ms after it came back"
failures_before=$(loc_status failures) posts_failed_before=$(loc_status evidence failed)

# --- with data traffic ------------------------------------------------------------------------
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

# h0's EVs over (plane, T1) in state $3: "count total"
evs_in() {
    nsx h0 "$bin/mrc-perf" evs | python3 -c 'import json,sys
e=[x for x in json.load(sys.stdin)["evs"] if x["plane"]==int(sys.argv[1]) and x["t1"]==int(sys.argv[2])]
print(sum(x["state"]==sys.argv[3] for x in e), len(e))' "$@"
}
sleep 3
[ -z "$(entries)" ] || fail "the prober denied on a healthy fabric: $(entries)"
echo "PASS: a healthy fabric with data traffic: no verdict"

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
[ "$(loc_status failures)" = "$failures_before" ] &&
    [ "$(loc_status evidence failed)" = "$posts_failed_before" ] ||
    fail "the localizer's requests failed: $(loc_status)"
echo "PASS: the transfer kept going through every fault, no request of the localizer failed"
