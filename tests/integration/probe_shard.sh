#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A shard's localizers elected through etcd, on loopback (issue 20; docs/prober.md §11): a real
# 3-member etcd, a standalone controller and two replicas of the shard of plane 0 of the lab's
# fabric, fed by probe_feed (every host's report as the plan says, a host port losing 5 %
# upward, sent through the node's own sender). Checks:
#   - exactly one replica leads; a report to the follower is answered 307 with Location and
#     X-Mrcfab-Leader naming the leader, and the nodes' sender follows it (its reports are
#     taken, some after a redirect); a report of plane 1 is refused 421 naming plane 0;
#   - the leader names the faulty port and denies it at the controller;
#   - the leader is killed (SIGKILL): the other leads within the lease (3 s) and a second, adopts
#     its predecessor's entry (the same id, still one entry) and its verdicts go on;
#   - once the port is healed, the new leader lifts the entry.
set -euo pipefail

bin=${1:?usage: probe_shard.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=$root/deploy/topologies/lab.json
work=$(mktemp -d)
pids=()
# shellcheck source=tests/check.sh
source "$root/tests/check.sh" # served_port
# shellcheck source=tests/ha/etcd_cluster.sh
source "$root/tests/ha/etcd_cluster.sh"
command -v etcd >/dev/null || { echo "SKIP: no etcd (deploy/install-deps.sh installs it)"; exit 77; }
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    # etcd's members are children too: stopped first, or the wait would be for them
    etcd_down "$work"
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
fail() {
    echo "FAIL: $*"
    for f in "$work"/*.log; do echo "--- $f"; tail -25 "$f"; done
    exit 1
}
within() { # SECONDS CONDITION: true once CONDITION holds, polled every 0.1 s
    local end=$(($(date +%s%N) + $1 * 1000000000))
    while [ "$(date +%s%N)" -lt $end ]; do eval "$2" && return 0; sleep 0.1; done
    return 1
}
jq_() { python3 -c 'import json,sys
d=json.load(sys.stdin)
for k in sys.argv[1:]: d=d[int(k)] if isinstance(d,list) else d[k]
print(d if not isinstance(d,(dict,list)) else json.dumps(d))' "$@"; }

etcd_up "$work" || fail "etcd did not start"
op_token=operator-token-0123456789
{
    echo "localizer-token-0123456789 localizer loc0"
    echo "$op_token operator ops"
} >"$work/tokens"
echo localizer-token-0123456789 >"$work/token-loc"
chmod 600 "$work/tokens"
: >"$work/controller.log"
"$bin/mrc-controller" --topology "$topo" --db "$work/ctl.db" --tokens "$work/tokens" \
    --listen "[::1]:0" >>"$work/controller.log" 2>&1 &
pids+=($!)
cport=$(served_port "$work/controller.log" $!) || fail "no controller"
curl_=http://[::1]:$cport
within 5 'curl -sf "$curl_/metrics" >/dev/null' || fail "the controller does not answer"
api() { curl -s -H "Authorization: Bearer $op_token" "$curl_/api/v1/$1"; }

window_ms=500
rate=512
hold=3
declare -A lpid lurl
loc_start() { # NAME
    : >"$work/loc-$1.log"
    "$bin/mrc-probe" localize --topology "$topo" --window-ms $window_ms --rate $rate \
        --listen "[::1]:0" --open --planes 0 --etcd "$ETCD_ENDPOINTS" --name "$1" \
        --advertise "http://[::1]:0" --lease-s 3 --controller "$curl_" \
        --token-file "$work/token-loc" --hold-s $hold --deadline-ms 800 \
        --state "$work/state-$1.json" >>"$work/loc-$1.log" 2>&1 &
    lpid[$1]=$!
    pids+=($!)
    local port
    port=$(served_port "$work/loc-$1.log" $!) || fail "localizer $1 did not start"
    lurl[$1]=http://[::1]:$port
}
role() { curl -s "${lurl[$1]}/api/v1/status" | jq_ shard role 2>/dev/null || echo down; }
loc_start a
loc_start b
within 8 '[ "$(role a)$(role b)" = leaderfollower ] || [ "$(role a)$(role b)" = followerleader ]' ||
    fail "no single leader: a $(role a), b $(role b)"
if [ "$(role a)" = leader ]; then lead=a fol=b; else lead=b fol=a; fi
echo "PASS: one replica leads ($lead), the other follows ($fol)"

# a report to the follower: sent to the leader
w=$(($(date +%s%3N) / window_ms))
rep="{\"host\":\"h0\",\"window\":$w,\"epoch\":1,\"ports\":[{\"plane\":0,\"t0\":0,\"port\":0,\"sent\":1,\"deficits\":[]}]}"
within 3 'curl -s -D "$work/hdr" -o "$work/body" -X POST --data-binary "$rep" "${lurl[$fol]}/api/v1/reports" >/dev/null; grep -qiF "x-mrcfab-leader: ${lurl[$lead]}" "$work/hdr"' ||
    fail "the follower did not name the leader: $(cat "$work/hdr" "$work/body")"
head -1 "$work/hdr" | grep -q ' 307' || fail "not a 307: $(head -1 "$work/hdr")"
grep -qiF "location: ${lurl[$lead]}/api/v1/reports" "$work/hdr" || fail "no Location: $(cat "$work/hdr")"
rep1=${rep//\"plane\":0/\"plane\":1}
code=$(curl -s -o "$work/body" -w '%{http_code}' -X POST --data-binary "$rep1" "${lurl[$lead]}/api/v1/reports")
[ "$code" = 421 ] && grep -q 'takes planes 0 only' "$work/body" ||
    fail "a report of plane 1 to the shard of plane 0: $code $(cat "$work/body")"
echo "PASS: the follower answers 307 naming the leader; another plane's report is refused 421"

# the nodes, the follower named first: their sender must follow the redirect
feed() { # SECONDS [FAULT]: LOG
    "$bin/probe_feed" --topology "$topo" --window-ms $window_ms --rate $rate --seconds "$1" \
        --localizer "0=${lurl[$fol]},${lurl[$lead]}" ${2:+--fault "$2"} >"$work/feed$3.out" \
        2>>"$work/feed.log" &
    feed_pid=$!
    pids+=($!)
}
feed 40 0:0:0:up:0.05 1
ids() { # the prober's entries: "id element scope"
    api denylist | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e["source"] == "prober": print(e["id"], e["element"], e["scope"])'
}
within 15 '[ "$(ids | wc -l)" = 1 ]' || fail "no entry for the lossy port: $(ids) $(api denylist)"
entry=$(ids)
h=$(curl -s "${lurl[$lead]}/api/v1/status" | jq_ verdicts 0 component)
echo "$entry" | grep -q ' up$' || fail "the entry is not the port upward: $entry"
echo "PASS: the leader names $h and denies it: entry $entry"

# kill -9 the leader: the follower leads within the lease and a second
ev_before=$(curl -s "${lurl[$fol]}/api/v1/status" | jq_ evaluated)
t0=$(date +%s%N)
kill -KILL "${lpid[$lead]}"
within 6 '[ "$(role $fol)" = leader ]' || fail "$fol did not take the lead"
took=$((($(date +%s%N) - t0) / 1000000))
[ $took -le 4000 ] || fail "$fol led $took ms after the leader died: over the lease and a second"
echo "PASS: $fol leads $took ms after the leader was killed (lease 3 s)"
within 5 'grep -q "adopted entry ${entry%% *} " "$work/loc-$fol.log"' ||
    fail "$fol did not adopt entry ${entry%% *}"
within 10 '[ "$(curl -s "${lurl[$fol]}/api/v1/status" | jq_ evaluated)" -gt $((ev_before + 4)) ]' ||
    fail "$fol evaluates no windows"
within 10 'curl -s "${lurl[$fol]}/api/v1/status" | jq_ verdicts 0 entries 0 | grep -qx "${entry%% *}"' ||
    fail "$fol's verdict does not hold entry ${entry%% *}: $(curl -s "${lurl[$fol]}/api/v1/status")"
[ "$(ids)" = "$entry" ] || fail "the entries changed across the failover: $(ids), was $entry"
echo "PASS: $fol adopted entry ${entry%% *} (still one entry) and its verdicts go on"

wait "$feed_pid" || true
grep -E '^reports [0-9]+ taken [0-9]+ .* redirected [1-9]' "$work/feed1.out" >/dev/null ||
    fail "the nodes' sender followed no redirect: $(cat "$work/feed1.out")"
echo "PASS: the nodes' sender: $(cat "$work/feed1.out")"

# healed: the new leader lifts it once the evidence is rebuilt (16 windows) and the hold passed
feed 40 "" 2
within 35 '[ -z "$(ids)" ]' || fail "$fol did not lift ${entry%% *}: $(ids)"
echo "PASS: healed, $fol lifted its predecessor's entry ${entry%% *}"
