#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-controller over loopback with a real HTTP client (curl): every endpoint with every role,
# bad tokens, bad bodies, oversize bodies, a wrong content type, unknown elements (each a
# problem document, the store unchanged), the push channel, /metrics, an agent's registration
# and report round trip (and its registration surviving a restart, then going stale), a clean
# SIGTERM, and durability: SIGKILL in the middle of a stream of writes loses no acknowledged
# entry.
#
# Usage: tests/controller/live.sh BINDIR
set -euo pipefail
bin=${1:?usage: live.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    jobs -p | xargs -r kill 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"

ctl_tokens "$tmp/tokens"
topo=$root/deploy/topologies/lab.json
# the dashboard's folder of its own (web.sh tests the files; here they need only be there)
mkdir -p "$tmp/web"
echo '<!doctype html><title>mrcfab</title>' >"$tmp/web/index.html"
echo 'export {};' >"$tmp/web/app.js"

starts=0
start() {
    starts=$((starts + 1))
    log=$tmp/log.$starts
    : >"$log" # before the controller opens it: the poll below reads it at once
    "$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
        --listen 127.0.0.1:0 --max-body 4096 --max-wait 5 --floor 0 --web "$tmp/web" "$@" \
        2>"$log" &
    pid=$!
    port=$(served_port "$log" "$pid") || exit 1
    base=http://127.0.0.1:$port
}
stop() {
    kill -TERM "$pid"
    wait "$pid"
    local rc=$?
    pid=
    return $rc
}

# req ROLE METHOD PATH [BODY] [CONTENT-TYPE]: prints the status, the body into $tmp/out
req() {
    local role=$1 method=$2 path=$3 body=${4-} ct=${5-application/json} auth=()
    [ "$role" != none ] && auth=(-H "Authorization: Bearer $(awk -v r="$role" '$2 == r {print $1}' "$tmp/tokens")")
    [ "$role" = bad ] && auth=(-H "Authorization: Bearer tok-admin-0000000000002")
    if [ -n "$body" ]; then
        curl -s -o "$tmp/out" -w '%{http_code}' -X "$method" "${auth[@]}" -H "Content-Type: $ct" \
            --data-binary "$body" "$base$path"
    else
        curl -s -o "$tmp/out" -w '%{http_code}' -X "$method" "${auth[@]}" "$base$path"
    fi
}
json() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); print($1)"; }
problem() { # the body is a problem document with this status
    python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if d['status']==$1 and d['title'] and d['detail'] and d['instance'] else 1)"
}
state() { req admin GET /api/v1/denylist >/dev/null; cat "$tmp/out"; }

start

# reads: every role reads every resource; no token and a wrong token read nothing
for path in /api/v1/fabric /api/v1/switches "/api/v1/switches?plane=1&tier=t0" \
    /api/v1/switches/p0-t1-1 "/api/v1/switches/p0-t0-0/table?format=frr" \
    /api/v1/denylist /api/v1/audit /api/v1/config /api/v1/hosts "/api/v1/hosts/h3/profile?peer=h5" \
    "/api/v1/health/links?state=ok&plane=1" "/api/v1/health/switches?plane=0" /api/v1/health/hosts \
    "/api/v1/health/path?from=h0&to=h5" "/api/v1/health/history?element=h3:1" \
    "/api/v1/denylist/version?after=0&wait=0" /api/v1/agents; do
    for role in reader agent prober localizer operator admin; do
        s=$(req $role GET "$path")
        [ "$s" = 200 ] || fail "$role GET $path: $s"
    done
    s=$(req none GET "$path"); check '[ "$s" = 401 ] && problem 401' "no token GET $path: 401"
    s=$(req bad GET "$path"); check '[ "$s" = 401 ] && problem 401' "wrong token GET $path: 401"
done
pass "every role reads every resource"
s=$(req reader GET /api/v1/fabric)
check '[ "$(json "d[\"name\"], d[\"hosts\"], d[\"switches\"]")" = "lab 8 12" ]' "fabric summary"

s=$(req reader GET "/api/v1/hosts/h3/profile?peer=h5")
check '[ "$(json "d[\"ports\"][1][\"t0\"], len(d[\"peer\"][\"paths\"]), d[\"cc\"][\"algorithm\"]")" = "p1-t0-1 4 uet-1.0-nscc" ]' "a host's profile"
s=$(req reader GET /api/v1/hosts/h99/profile); check '[ "$s" = 404 ] && problem 404' "an unknown host: 404"
s=$(req reader GET "/api/v1/hosts/h3/profile?peer=h3"); check '[ "$s" = 400 ] && problem 400' "itself as peer: 400"
s=$(req reader GET /api/v1/hosts/h3); check '[ "$s" = 404 ] && problem 404' "no resource at /hosts/h3: 404"

# writes: reader and agent may not; prober, localizer, operator and admin may
before=$(state)
for role in reader agent; do
    s=$(req $role POST /api/v1/denylist '{"element": "p0-t1-0", "reason": "x"}')
    check '[ "$s" = 403 ] && problem 403' "$role may not add to the denylist"
done
check '[ "$(state)" = "$before" ]' "refused writes leave the store unchanged"
ids=()
for role in prober localizer operator admin; do
    s=$(req $role POST /api/v1/denylist '{"element": "p0-t1-0", "reason": "drain for maintenance", "window": {"start": "2096-12-01T02:00:00Z", "end": "2096-12-01T04:00:00Z"}}')
    check '[ "$s" = 201 ]' "$role adds a denylist entry: 201"
    ids+=("$(json 'd["id"]')")
done
check '[ "$(json "d[\"author\"], d[\"source\"], d[\"window\"][\"end\"]")" = "root operator 2096-12-01T04:00:00.000Z" ]' "the entry says who and when"

# bad input: the right problem, and nothing stored
before=$(state)
bad_cases=(
    '400|{"element": "p0-t1-0"'
    '400|[1, 2]'
    '400|{"element": "p0-t1-0", "reason": "x"} trailing'
    '400|{"element": "p0-t1-0", "reason": "x", "colour": "red"}'
    '400|{"reason": "x"}'
    '400|{"element": 7, "reason": "x"}'
    '400|{"element": "p0-t1-0", "reason": "x", "scope": "sideways"}'
    '400|{"element": "p0-t1-0", "reason": "x", "window": {"start": "2096-12-01T04:00:00Z", "end": "2096-12-01T02:00:00Z"}}'
    '400|{"element": "p0-t1-0", "reason": "x", "window": {"start": "tomorrow", "end": "2096-12-01T02:00:00Z"}}'
    '422|{"element": "p9-t1-0", "reason": "x"}'
    '422|{"element": "p0-t1-0~p0-t1-1", "reason": "x"}'
    '422|{"element": "h99:0", "reason": "x"}'
    '422|{"element": "p0-t1-0", "reason": "x", "scope": "up"}'
)
for c in "${bad_cases[@]}"; do
    want=${c%%|*} body=${c#*|}
    s=$(req operator POST /api/v1/denylist "$body")
    [ "$s" = "$want" ] && problem "$want" || fail "bad body ($body): $s, want $want"
done
big=$(python3 -c 'print("{\"element\": \"p0-t1-0\", \"reason\": \"" + "x" * 5000 + "\"}")')
s=$(req operator POST /api/v1/denylist "$big"); check '[ "$s" = 413 ] && problem 413' "an oversize body: 413"
s=$(req operator POST /api/v1/denylist '{"element": "p0-t1-0", "reason": "x"}' text/plain)
check '[ "$s" = 415 ] && problem 415' "a body that is not JSON: 415"
s=$(req operator PUT /api/v1/denylist '{"element": "p0-t1-0", "reason": "x"}')
check '[ "$s" = 405 ] && problem 405' "PUT on the denylist: 405"
check '[ "$(state)" = "$before" ]' "every bad request left the store unchanged"
pass "bad bodies each gave their problem document"

# removal, and the audit log of it all
s=$(req reader DELETE "/api/v1/denylist/${ids[0]}"); check '[ "$s" = 403 ]' "a reader may not remove"
s=$(req operator DELETE "/api/v1/denylist/${ids[0]}"); check '[ "$s" = 204 ]' "an operator removes: 204"
s=$(req operator DELETE "/api/v1/denylist/${ids[0]}"); check '[ "$s" = 404 ] && problem 404' "again: 404"
s=$(req reader GET /api/v1/audit)
check '[ "$(json "[r[\"action\"] for r in d[\"records\"]]")" = "['"'"'add'"'"', '"'"'add'"'"', '"'"'add'"'"', '"'"'add'"'"', '"'"'remove'"'"']" ]' "the audit log has every change"

# the push channel: waiting agents learn of a change at once
req agent GET /api/v1/denylist >/dev/null
v=$(json 'd["version"]')
waiters=()
for i in 1 2 3; do
    curl -s -o "$tmp/push$i" -H "Authorization: Bearer tok-agent-0000000000001" \
        "$base/api/v1/denylist/version?after=$v&wait=5" &
    waiters+=($!)
done
sleep 0.3
curl -s "$base/metrics" >"$tmp/metrics"
check 'grep -q "^mrcfab_push_subscribers 3$" "$tmp/metrics"' "three agents wait on the push channel"
t0=$(date +%s%N)
req operator POST /api/v1/denylist '{"element": "h3:1", "reason": "nic"}' >/dev/null
wait "${waiters[@]}"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check '[ "$(cat "$tmp"/push1 "$tmp"/push2 "$tmp"/push3)" = "$(printf "{\"version\":%d,\"epoch\":0}" $((v + 1)) $((v + 1)) $((v + 1)))" ]' "each learns the new version ($ms ms)"
s=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer tok-agent-0000000000001" "$base/api/v1/denylist/version?after=$((v + 1))&wait=1")
check '[ "$s" = 200 ]' "with no change the wait runs out with the same version"
s=$(curl -s -o "$tmp/out" -w '%{http_code}' "$base/api/v1/denylist/version?after=0")
check '[ "$s" = 401 ]' "the push channel needs a token"

# agents: h0's agent registers as its own host (and no other), reports with the richer fields,
# and the registry shows it with its report's summary and /metrics counts it fresh
reg='{"host": "h0", "version": "0.1.0", "mode": "srv6", "ports": [{"port": 0, "up": true}, {"port": 1, "up": false}], "oob": "[fd00::10]:7471"}'
s=$(req agent POST /api/v1/agents "$reg")
check '[ "$s" = 200 ] && [ "$(json "d[\"host\"], d[\"mode\"], d[\"ports\"][1][\"up\"], d[\"oob\"], d[\"reports\"], d[\"stale\"]")" = "h0 srv6 False [fd00::10]:7471 0 False" ]' "an agent registers: 200 with the stored record"
registered=$(json 'd["registered"]')
s=$(req agent POST /api/v1/agents "${reg/\"h0\"/\"h3\"}"); check '[ "$s" = 403 ] && problem 403' "an agent registers as another host: 403"
s=$(req reader POST /api/v1/agents "$reg"); check '[ "$s" = 403 ] && problem 403' "a reader registers: 403"
s=$(req operator POST /api/v1/agents "$reg"); check '[ "$s" = 403 ] && problem 403' "an operator registers: 403"
s=$(req admin POST /api/v1/agents "${reg/\"h0\"/\"h99\"}"); check '[ "$s" = 422 ] && problem 422' "a host not in the fabric: 422"
s=$(req agent POST /api/v1/agents '{"host": "h0", "version": "0.1.0", "mode": "rdma", "ports": []}'); check '[ "$s" = 400 ] && problem 400' "a bad mode: 400"
s=$(req agent POST /api/v1/agents "${reg%\}}, \"colour\": \"red\"}"); check '[ "$s" = 400 ] && problem 400' "an unknown member: 400"
s=$(req agent POST /api/v1/reports '{"host": "h3", "evs": []}'); check '[ "$s" = 403 ] && problem 403' "an agent reports as another host: 403"
s=$(req agent POST /api/v1/reports '{"host": "h0", "evs": [], "peers": [{"peer": "h5", "qps": -1}]}'); check '[ "$s" = 400 ] && problem 400' "a report with a negative counter: 400"
report='{"host": "h0", "interval_s": 10, "time": "2026-11-30T02:00:00Z",
 "evs": [{"peer": "h5", "ev": 0, "sent": 1000, "lost": 3, "state": "good", "retx": 3, "acked": 997, "timeouts": 1, "ecn": 2, "trims": 2,
          "transitions": 2, "probes_sent": 1, "probes_ok": 1, "rtt_ns": 9000, "probe_rtt_ns": 8000, "nacks": {"trimmed": 2}, "path": "fcbb:bb00:2001:4000:2002:6001::"}],
 "peers": [{"peer": "h5", "qps": 2, "data_pkts_sent": 1000, "data_bytes_sent": 4096000, "retx_pkts": 3, "sacks_rcvd": 400, "nacks_rcvd": {"trimmed": 2},
            "timeouts": 1, "ecn_echoes": 2, "ev_states": {"good": 250, "skip": 2, "assumed_bad": 4}},
           {"peer": "h7", "qps": 1, "data_pkts_sent": 10, "data_bytes_sent": 40960, "ev_states": {"good": 256}}],
 "transitions": [{"time": 1800000000000000000, "peer": "h5", "ev": 0, "from": "good", "to": "skip", "reason": "ecn"}],
 "truncated": {"peers": 0, "evs": 7, "transitions": 0}}'
s=$(req agent POST /api/v1/reports "$report"); check '[ "$s" = 202 ]' "the agent reports with every new field: 202"
s=$(req reader GET /api/v1/agents)
check '[ "$s" = 200 ] && [ "$(json "d[\"total\"], d[\"fresh\"], [(a[\"host\"], a[\"version\"], a[\"reports\"], a[\"stale\"]) for a in d[\"items\"]]")" = "1 1 [('"'"'h0'"'"', '"'"'0.1.0'"'"', 1, False)]" ]' "GET /api/v1/agents lists it, one report, fresh"
s=$(req reader GET /api/v1/agents/h0)
check '[ "$s" = 200 ] && [ "$(json "d[\"report\"][\"time\"], d[\"report\"][\"peers\"], d[\"report\"][\"totals\"][\"qps\"], d[\"report\"][\"totals\"][\"data_bytes_sent\"], d[\"report\"][\"totals\"][\"ev_states\"][\"good\"], d[\"report\"][\"truncated\"][\"evs\"]")" = "2026-11-30T02:00:00.000Z 2 3 4136960 506 7" ]' "GET /api/v1/agents/h0: its latest report's peer totals and time"
s=$(req reader GET /api/v1/agents/h3); check '[ "$s" = 404 ] && problem 404' "an agent that never registered: 404"
curl -s "$base/metrics" >"$tmp/metrics"
check 'grep -q "^mrcfab_agents{state=\"fresh\"} 1$" "$tmp/metrics" && grep -q "^mrcfab_agents{state=\"stale\"} 0$" "$tmp/metrics"' "/metrics counts the agent fresh"

# schemas/openapi.yaml matches the code: every operation it describes is served (a reader's
# GET answers 200; an operator's POST and DELETE on the denylist take effect)
req admin POST /api/v1/denylist '{"element": "p0-t0-3", "reason": "openapi"}' >/dev/null
oid=$(json 'd["id"]')
ops=$(awk '/^  \/[^ ]*:$/ {path = substr($1, 1, length($1) - 1)} /^    (get|post|delete):$/ {print substr($1, 1, length($1) - 1), path}' "$root/schemas/openapi.yaml")
check '[ "$(echo "$ops" | wc -l)" -ge 16 ]' "the OpenAPI document lists the operations ($(echo "$ops" | wc -l))"
served=$failures
while read -r method path; do
    url=${path//\{name\}/p0-t0-0}
    url=${url//\{id\}/$oid}
    url=${url//\{host\}/h3}
    url=${url//\{path\}/app.js}
    case "$method $path" in
    "get /metrics") s=$(curl -s -o /dev/null -w '%{http_code}' "$base$url") want=200 ;;
    "get /api/v1/denylist/version") s=$(req reader GET "$url?after=0&wait=0") want=200 ;;
    "get /api/v1/health/path") s=$(req reader GET "$url?from=h0&to=h5") want=200 ;;
    "get /api/v1/health/history") s=$(req reader GET "$url?element=p0-t0-0~p0-t1-1") want=200 ;;
    "get /api/v1/health/matrix") s=$(req reader GET "$url?plane=0") want=200 ;;
    "get /api/v1/agents/{host}") s=$(req reader GET /api/v1/agents/h0) want=200 ;;
    "get "*) s=$(req reader GET "$url") want=200 ;;
    "post /api/v1/denylist") s=$(req operator POST "$url" '{"element": "p0-t0-2", "reason": "openapi"}') want=201 ;;
    "delete /api/v1/denylist/{id}") s=$(req operator DELETE "$url") want=204 ;;
    "post /api/v1/reports") s=$(req agent POST "$url" '{"host": "h0", "evs": [{"peer": "h5", "ev": 0, "sent": 10, "lost": 0}]}') want=202 ;;
    "post /api/v1/agents") s=$(req agent POST "$url" "$reg") want=200 ;;
    "post /api/v1/probes") s=$(req localizer POST "$url" '{"results": [{"element": "p0-t0-0~p0-t1-1", "scope": "up", "sent": 10, "lost": 0}]}') want=202 ;;
    *) s=none want=described ;;
    esac
    [ "$s" = "$want" ] || fail "the OpenAPI document's $method $path: $s, want $want"
done <<<"$ops"
check '[ "$failures" = "$served" ]' "every operation of the OpenAPI document is served"
req admin GET /api/v1/denylist >/dev/null
pid2=$(json '[e["id"] for e in d["entries"] if e["reason"] == "openapi"][0]')
req admin DELETE "/api/v1/denylist/$pid2" >/dev/null

# a maintenance window is applied and lifted on time: the push channel wakes at each end
req agent GET /api/v1/denylist >/dev/null
v=$(json 'd["version"]')
ws=$(date -u -d '+2 sec' +%Y-%m-%dT%H:%M:%SZ)
we=$(date -u -d '+3 sec' +%Y-%m-%dT%H:%M:%SZ)
s=$(req operator POST /api/v1/denylist "{\"element\": \"p1-t1-1\", \"reason\": \"reboot\", \"window\": {\"start\": \"$ws\", \"end\": \"$we\"}}")
wid=$(json 'd["id"]')
check '[ "$s" = 201 ] && [ "$(json "d[\"active\"]")" = False ]' "a window ahead: the entry is not active yet"
curl -s -o "$tmp/w1" -H "Authorization: Bearer tok-agent-0000000000001" "$base/api/v1/denylist/version?after=$((v + 1))&wait=5"
req agent GET "/api/v1/denylist/$wid" >/dev/null
check '[ "$(cat "$tmp/w1")" = "{\"version\":$((v + 2)),\"epoch\":0}" ] && [ "$(json "d[\"active\"]")" = True ]' "at its start the version moves and the entry is active"
curl -s -o "$tmp/w2" -H "Authorization: Bearer tok-agent-0000000000001" "$base/api/v1/denylist/version?after=$((v + 2))&wait=5"
req agent GET "/api/v1/denylist/$wid" >/dev/null
check '[ "$(cat "$tmp/w2")" = "{\"version\":$((v + 3)),\"epoch\":0}" ] && [ "$(json "d[\"active\"]")" = False ]' "at its end again, and it is lifted"
req reader GET "/api/v1/audit?after=0&limit=1000" >/dev/null
check '[ "$(json "[r[\"action\"] for r in d[\"records\"] if r[\"entry\"] == $wid]")" = "['"'"'add'"'"', '"'"'window start'"'"', '"'"'window end'"'"']" ]' "the audit log has both"

# /metrics
curl -s "$base/metrics" >"$tmp/metrics"
check 'grep -q "^mrcfab_denylist_entries 5$" "$tmp/metrics" && grep -q "^# TYPE mrcfab_http_request_duration_seconds histogram" "$tmp/metrics"' "/metrics in Prometheus text"
if command -v promtool >/dev/null; then
    check 'promtool check metrics <"$tmp/metrics"' "promtool check metrics"
else
    fail "promtool check metrics: no promtool (deploy/install-deps.sh installs it)"
fi

# health: a prober's loss on a named link shows in the link list, its switch and its history
s=$(req localizer POST /api/v1/probes '{"results": [{"element": "p1-t0-2~p1-t1-0", "scope": "down", "sent": 5000, "lost": 100}]}')
check '[ "$s" = 202 ]' "probe results: 202"
req reader GET '/api/v1/health/links?state=bad' >/dev/null
check '[ "$(json "[i[\"link\"] for i in d[\"items\"]]")" = "['"'"'p1-t0-2~p1-t1-0'"'"']" ]' "the lossy link is bad, no other"
req reader GET '/api/v1/health/history?element=p1-t1-0~p1-t0-2' >/dev/null
check '[ "$(json "d[\"state\"], [x[\"state\"] for x in d[\"samples\"]]")" = "bad ['"'"'bad'"'"']" ]' "its history has the change to bad"
s=$(req reader GET '/api/v1/health/hosts?plane=1&limit=2')
check '[ "$s" = 200 ] && [ "$(json "d[\"total\"], len(d[\"items\"])")" = "8 2" ]' "host health, paged"
s=$(req reader GET '/api/v1/health/history?element=p9-t0-0'); check '[ "$s" = 404 ] && problem 404' "the history of no element: 404"
s=$(req reader GET /api/v1/health/history); check '[ "$s" = 400 ] && problem 400' "a history without element: 400"

# the blast radius: a dry run stores nothing; an entry that would cut a host pair below the
# floor is refused (409, with its blast radius) unless an operator forces it
stop
start --floor 50 --agent-interval 1
# the registration survived the restart (its reports are counted anew); silent for 3 report
# intervals of 1 s, the agent goes stale
s=$(req reader GET /api/v1/agents/h0)
check '[ "$s" = 200 ] && [ "$(json "d[\"reports\"], d[\"oob\"], \"report\" in d")" = "0 [fd00::10]:7471 False" ]' "a registration survives a restart"
for _ in $(seq 50); do
    req reader GET /api/v1/agents >/dev/null
    [ "$(json 'd["stale"]')" = 1 ] && break
    sleep 0.1
done
check '[ "$(json "d[\"items\"][0][\"stale\"], d[\"fresh\"]")" = "True 0" ]' "an agent silent for 3 intervals is stale"
curl -s "$base/metrics" >"$tmp/metrics"
check 'grep -q "^mrcfab_agents{state=\"stale\"} 1$" "$tmp/metrics" && promtool check metrics <"$tmp/metrics"' "/metrics counts it stale"
s=$(req agent POST /api/v1/reports '{"host": "h0", "evs": []}')
req reader GET /api/v1/agents/h0 >/dev/null
check '[ "$s" = 202 ] && [ "$(json "d[\"stale\"], d[\"reports\"]")" = "False 1" ]' "a report makes it fresh again"
req admin GET /api/v1/denylist >/dev/null
for id in $(json '" ".join(str(e["id"]) for e in d["entries"])'); do
    req admin DELETE "/api/v1/denylist/$id" >/dev/null
done
before=$(state)
s=$(req prober POST '/api/v1/denylist?dry_run=true' '{"element": "h5:0", "reason": "nic"}')
check '[ "$s" = 200 ] && [ "$(json "d[\"blast_radius\"][\"affected_pairs\"]")" = 14 ] && [ "$(json "d[\"refused\"]")" = False ]' "a dry run: 200 with the blast radius"
check '[ "$(state)" = "$before" ]' "and nothing stored"
s=$(req prober POST /api/v1/denylist '{"element": "h5:0", "reason": "nic"}'); check '[ "$s" = 201 ]' "half of h5's planes: 201"
before=$(state)
s=$(req prober POST /api/v1/denylist '{"element": "h5:1", "reason": "nic"}')
check '[ "$s" = 409 ] && problem 409 && [ "$(json "d[\"blast_radius\"][\"cut_off_pairs\"]")" = 14 ]' "the other half would cut h5 off: 409 with the blast radius"
s=$(req prober POST '/api/v1/denylist?force=true' '{"element": "h5:1", "reason": "nic"}'); check '[ "$s" = 403 ] && problem 403' "a prober may not force"
s=$(req operator POST '/api/v1/denylist?force=maybe' '{"element": "h5:1", "reason": "nic"}'); check '[ "$s" = 400 ] && problem 400' "force=maybe: 400"
check '[ "$(state)" = "$before" ]' "and nothing changed"
s=$(req operator POST '/api/v1/denylist?force=true' '{"element": "h5:1", "reason": "nic"}'); check '[ "$s" = 201 ]' "an operator forces it: 201"
req reader GET '/api/v1/audit?limit=1000' >/dev/null
check '[ "$(json "d[\"records\"][-1][\"detail\"].get(\"forced\")")" = True ]' "the audit says it was forced"

# the prober's evidence with no data traffic, its verdicts, denied beside the states, the
# fabric-wide views (the matrix's ETag and 304), every answer as schemas/openapi.yaml says,
# and the same health after a restart
conform() { # METHOD PATH STATUS FILE...
    "$root/tests/openapi/deps.sh" >"$tmp/conform" 2>&1 &&
        node "$root/tests/openapi/conform.mjs" "$@" >"$tmp/conform" 2>&1
}
s=$(req localizer POST /api/v1/probes '{"window": 1, "window_ms": 1000, "coverage": [{"plane": 1, "nic": 1408, "uplink": 1280, "hosts": 8}], "results": [{"element": "p1-t0-2~p1-t1-1", "scope": "down", "sent": 1280, "lost": 40}], "verdicts": [{"component": "p1 D t0=2 t1=1", "kind": "link", "elements": [{"element": "p1-t0-2~p1-t1-1", "scope": "down"}], "loss": 0.03, "lost": 40, "sent": 1280, "horizon_s": 1, "llr": 60, "state": "denied", "entries": [0]}]}')
check '[ "$s" = 202 ]' "the localizer's post: coverage, results, verdicts (202)"
s=$(req reader GET '/api/v1/health/links?plane=1&state=bad')
check '[ "$s" = 200 ] && [ "$(json "[(i[\"down\"][\"prober\"][\"lost\"], i[\"down\"][\"prober\"][\"own\"], i[\"verdict\"][\"kind\"]) for i in d[\"items\"] if i[\"link\"] == \"p1-t0-2~p1-t1-1\"]")" = "[(40, True, '"'"'link'"'"')]" ]' "the prober's result makes its link bad, with its evidence and its verdict"
cp "$tmp/out" "$tmp/links.json"
s=$(req reader GET '/api/v1/health/links?plane=1&state=no_data&limit=1000')
check '[ "$(json "d[\"total\"]")" = 0 ]' "and the plane's coverage gives every other link and host port the prober's evidence"
s=$(req reader GET /api/v1/health/summary); cp "$tmp/out" "$tmp/summary.json"
check '[ "$s" = 200 ] && [ "$(json "d[\"planes\"][1][\"bad\"] >= 1 and d[\"planes\"][1][\"links\"][\"no_data\"] == 0")" = True ]' "summary: plane 1's bad elements, no link without data"
s=$(req reader GET '/api/v1/health/problems?limit=1000'); cp "$tmp/out" "$tmp/problems.json"
check '[ "$s" = 200 ] && [ "$(json "[i[\"state\"] for i in d[\"items\"] if i[\"element\"] == \"p1-t0-2~p1-t1-1\"]")" = "['"'"'bad'"'"']" ] && [ "$(json "[i[\"state\"] for i in d[\"items\"]] == sorted([i[\"state\"] for i in d[\"items\"]], key=lambda s: s != \"bad\")")" = True ]' "problems: the bad link among them, bad ones first"
s=$(curl -s -D "$tmp/hdr" -o "$tmp/matrix.json" -w '%{http_code}' -H "Authorization: Bearer $(awk '$2 == "reader" {print $1}' "$tmp/tokens")" "$base/api/v1/health/matrix?plane=1")
etag=$(awk 'tolower($1) == "etag:" {print $2}' "$tmp/hdr" | tr -d '\r')
check '[ "$s" = 200 ] && [ -n "$etag" ] && [ "$(python3 -c "import json,base64; d=json.load(open(\"$tmp/matrix.json\")); print(base64.b64decode(d[\"cells\"])[2 * d[\"t1\"] + 1] & 0x0f)")" = 11 ]' "the matrix: p1-t0-2~p1-t1-1 down bad and named (0x0b), tagged $etag"
s=$(curl -s -o "$tmp/m304" -w '%{http_code} %{size_download}' -H "If-None-Match: $etag" -H "Authorization: Bearer $(awk '$2 == "reader" {print $1}' "$tmp/tokens")" "$base/api/v1/health/matrix?plane=1")
check '[ "$s" = "304 0" ]' "polling an unchanged plane: 304, no body"
s=$(req reader GET '/api/v1/health/matrix'); check '[ "$s" = 400 ] && problem 400' "a matrix without plane: 400"
s=$(req reader GET '/api/v1/health/matrix?plane=9'); check '[ "$s" = 400 ] && problem 400' "a plane the fabric lacks: 400"
s=$(req reader GET '/api/v1/health/path?from=h0&to=h5'); cp "$tmp/out" "$tmp/path.json"
s=$(req reader GET '/api/v1/health/switches'); cp "$tmp/out" "$tmp/switches.json"
for f in summary problems matrix links path switches; do
    why=""
    conform GET "/api/v1/health/$f" 200 "$tmp/$f.json" || why=": $(head -c 300 "$tmp/conform")"
    check '[ -z "$why" ]' "GET /api/v1/health/$f conforms to schemas/openapi.yaml$why"
done
s=$(req localizer POST /api/v1/probes '{"verdicts": [{"component": "x", "kind": "wire", "elements": [{"element": "p0-t1-0"}], "state": "denied"}]}')
check '[ "$s" = 400 ] && problem 400' "a verdict of no kind: 400, nothing taken"
sleep 2.5 # a checkpoint
req reader GET /api/v1/health/summary >/dev/null
cp "$tmp/out" "$tmp/summary-kept.json" # just before the stop: evidence ages as time goes on
check 'stop' "SIGTERM with health to keep"
start
s=$(req reader GET '/api/v1/health/links?plane=1&state=bad')
check '[ "$(json "[i[\"verdict\"][\"component\"] for i in d[\"items\"] if i[\"link\"] == \"p1-t0-2~p1-t1-1\"]")" = "['"'"'p1 D t0=2 t1=1'"'"']" ]' "restarted, the controller shows the same health: the bad link and its verdict"
req reader GET /api/v1/health/summary >/dev/null
check '[ "$(python3 -c "import json; a=json.load(open(\"$tmp/summary-kept.json\")); b=json.load(open(\"$tmp/out\")); print(a[\"planes\"] == b[\"planes\"] or (a, b))")" = True ]' "and the same summary"

# SIGTERM: a clean stop
check 'stop' "SIGTERM stops it cleanly"
check 'grep -q "Terminated: stopping" "$log"' "and it says so"

# durability: SIGKILL in the middle of a stream of writes; every acknowledged entry is there
start
: >"$tmp/acked"
(
    for i in $(seq 1000); do
        code=$(curl -s -o "$tmp/w.out" -w '%{http_code}' -H "Authorization: Bearer tok-operator-0000000001" \
            -H "Content-Type: application/json" \
            --data-binary "$(printf '{"element": "p1-t0-%d", "reason": "stream %d", "window": {"start": "2096-01-01T00:00:00Z", "end": "2096-01-01T01:%02d:%02dZ"}}' $((i % 4)) "$i" $((i / 60)) $((i % 60)))" \
            "$base/api/v1/denylist" 2>/dev/null) || break
        # the body ends without a newline: printf adds one
        [ "$code" = 201 ] && printf '%s\n' "$(sed -n 's/^{"id":\([0-9]*\),.*/\1/p' "$tmp/w.out")" >>"$tmp/acked"
    done
) &
writer=$!
# in the middle of the stream: after 20 acknowledged writes (however slow the machine), and
# a little more, so that the kill falls between a write and its answer
for _ in $(seq 300); do [ "$(wc -l <"$tmp/acked")" -ge 20 ] && break; sleep 0.1; done
sleep 0.3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
wait "$writer" 2>/dev/null || true
acked=$(wc -l <"$tmp/acked")
start
req reader GET /api/v1/denylist >/dev/null
python3 - "$tmp/acked" "$tmp/out" <<'PY' && pass "SIGKILL after $acked acknowledged writes: every one is there" || fail "an acknowledged entry was lost"
import json, sys
acked = [int(x) for x in open(sys.argv[1]).read().split()]
have = {e["id"] for e in json.load(open(sys.argv[2]))["entries"]}
missing = [i for i in acked if i not in have]
if not acked or missing:
    print("acked", len(acked), "missing", missing[:10])
    sys.exit(1)
PY
check '[ "$acked" -ge 20 ]' "the stream had written ($acked) before the kill"
stop || true

finish live
