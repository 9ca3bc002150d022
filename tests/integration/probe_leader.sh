#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The localizer's requests to highly available controllers (issue 20; docs/prober.md §10): a
# real 3-member etcd, three mrc-controllers on it (--etcd) and one localizer given them all,
# a follower first, fed by probe_feed (every host's report as the plan says, a host port losing
# 5 % upward). Checks:
#   - the localizer finds the leader through the follower's redirect: its entry for the lossy
#     port is in every controller's denylist (a follower's too), its status names the leader,
#     and the leader's list of probers has its token alive (the heartbeat reaches the leader);
#   - the leader is killed (SIGKILL): another leads, and once the port is healed the localizer
#     lifts its entry through the new leader (gone from both survivors' lists), its status
#     naming the new leader.
# KEEP=1 keeps the work directory (the daemons' logs).
set -euo pipefail

bin=${1:?usage: probe_leader.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=$root/deploy/topologies/lab.json
work=$(mktemp -d)
pids=()
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh" # ctl_tokens, served_port
# shellcheck source=tests/ha/etcd_cluster.sh
source "$root/tests/ha/etcd_cluster.sh"
command -v etcd >/dev/null || { echo "SKIP: no etcd (deploy/install-deps.sh installs it)"; exit 77; }
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    # etcd's members are children too: stopped first, or the wait would be for them
    etcd_down "$work"
    wait 2>/dev/null || true
    if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM
fail() {
    echo "FAIL: $*"
    for f in "$work"/*.log; do echo "--- $f"; tail -25 "$f"; done
    exit 1
}
within() { # SECONDS CONDITION: true once CONDITION holds, polled every 0.2 s
    local end=$(($(date +%s%N) + $1 * 1000000000))
    while [ "$(date +%s%N)" -lt $end ]; do eval "$2" && return 0; sleep 0.2; done
    return 1
}
jq_() { python3 -c 'import json,sys
d=json.load(sys.stdin)
for k in sys.argv[1:]: d=d[int(k)] if isinstance(d,list) else d[k]
print(d if not isinstance(d,(dict,list)) else json.dumps(d))' "$@"; }

etcd_up "$work" || fail "etcd did not start"
ctl_tokens "$work/tokens"
echo tok-localizer-000000001 >"$work/token-loc"
reader=tok-reader-000000000001
declare -A cpid curl_
for i in 1 2 3; do
    : >"$work/controller-$i.log"
    "$bin/mrc-controller" --topology "$topo" --db "$work/c$i.db" --tokens "$work/tokens" \
        --listen 127.0.0.1:0 --web '' --etcd "$ETCD_ENDPOINTS" --name "controller-$i" \
        --lease-ttl 2 --rate-limit 0 >>"$work/controller-$i.log" 2>&1 &
    cpid[$i]=$!
    pids+=($!)
    port=$(served_port "$work/controller-$i.log" $!) || fail "controller-$i did not start"
    curl_[$i]=http://127.0.0.1:$port
done
api() { curl -s -m 3 -H "Authorization: Bearer $reader" "${curl_[$1]}/api/v1/$2"; }
role() { api "$1" cluster | jq_ self role 2>/dev/null || echo down; }
leader() { # the one controller that says it leads, among ARGS
    local i n=0 l=
    for i in "$@"; do [ "$(role "$i")" = leader ] && { l=$i; n=$((n + 1)); }; done
    [ $n = 1 ] && echo "$l"
}
within 15 '[ -n "$(leader 1 2 3)" ]' || fail "no single leader: $(role 1) $(role 2) $(role 3)"
lead=$(leader 1 2 3)
fols=()
for i in 1 2 3; do [ "$i" = "$lead" ] || fols+=("$i"); done
echo "PASS: controller-$lead leads, ${fols[*]} follow"

# the localizer: a follower first, the leader in the middle
window_ms=500
rate=512
hold=3
: >"$work/loc.log"
"$bin/mrc-probe" localize --topology "$topo" --window-ms $window_ms --rate $rate \
    --listen 127.0.0.1:0 --open \
    --controller "${curl_[${fols[0]}]},${curl_[$lead]}/,${curl_[${fols[1]}]}" \
    --token-file "$work/token-loc" --hold-s $hold --deadline-ms 800 >>"$work/loc.log" 2>&1 &
loc_pid=$!
pids+=($!)
lport=$(served_port "$work/loc.log" $!) || fail "the localizer did not start"
lurl=http://127.0.0.1:$lport
status() { curl -s -m 3 "$lurl/api/v1/status"; }

feed() { # SECONDS FAULT N: the nodes, in the background
    "$bin/probe_feed" --topology "$topo" --window-ms $window_ms --rate $rate --seconds "$1" \
        --localizer "$lurl" ${2:+--fault "$2"} >"$work/feed$3.out" 2>>"$work/feed.log" &
    feed_pid=$!
    pids+=($!)
}
feed 60 0:0:0:up:0.05 1
ids() { # CONTROLLER: its prober entries, "id element scope"
    api "$1" denylist | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e["source"] == "prober": print(e["id"], e["element"], e["scope"], e["author"])'
}
within 20 '[ "$(ids "${fols[0]}" | wc -l)" = 1 ]' ||
    fail "no entry at follower ${fols[0]}: $(ids "${fols[0]}") $(status)"
entry=$(ids "${fols[0]}")
echo "$entry" | grep -q ' up loc1$' || fail "the entry is not loc1's of the port upward: $entry"
for i in "$lead" "${fols[1]}"; do
    within 3 '[ "$(ids "$i")" = "$entry" ]' || fail "controller-$i lists $(ids "$i"), not $entry"
done
[ "$(status | jq_ controller)" = "${curl_[$lead]}" ] ||
    fail "the localizer talks to $(status | jq_ controller), not the leader ${curl_[$lead]}"
grep -q "controllers: ${curl_[${fols[0]}]} follows; the leader is ${curl_[$lead]}" "$work/loc.log" ||
    fail "the localizer did not say it followed the redirect"
echo "PASS: through follower ${fols[0]}'s redirect, the leader took entry ${entry%% *} ($entry)"
seen() { # CONTROLLER: loc1's last request there, as its list of probers says
    api "$1" probers | python3 -c 'import json,sys
print([p["last_seen"] for p in json.load(sys.stdin)["items"] if p["name"] == "loc1"][0] or "")'
}
within 3 '[ -n "$(seen "$lead")" ]' || fail "the leader has not seen loc1: $(api "$lead" probers)"
echo "PASS: the leader's list of probers has loc1 ($(seen "$lead"))"

# kill -9 the leader; heal the port: the lift goes through the new leader
kill -KILL "${cpid[$lead]}"
wait "${cpid[$lead]}" 2>/dev/null || true
within 10 '[ -n "$(leader "${fols[@]}")" ]' || fail "no new leader among ${fols[*]}"
new=$(leader "${fols[@]}")
echo "PASS: controller-$new leads after controller-$lead was killed"
kill "$feed_pid" 2>/dev/null || true
wait "$feed_pid" 2>/dev/null || true
feed 40 "" 2
for i in "${fols[@]}"; do
    within 30 '[ -z "$(ids "$i")" ]' || fail "controller-$i still lists $(ids "$i") $(status)"
done
[ "$(status | jq_ controller)" = "${curl_[$new]}" ] ||
    fail "the localizer talks to $(status | jq_ controller), not the new leader ${curl_[$new]}"
grep -q "lifted " "$work/loc.log" || fail "the localizer did not say it lifted"
within 7 '[ -n "$(seen "$new")" ]' || fail "the new leader has not seen loc1"
echo "PASS: healed, the localizer lifted entry ${entry%% *} through controller-$new"
kill "$loc_pid"
wait "$loc_pid" || fail "the localizer did not stop cleanly"
