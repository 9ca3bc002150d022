#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bounded, idempotent denylist and who may change what, over loopback with real clients
# (curl, python's http.client): the same entry twice is one (200 and the same id), a window in
# the past is refused (400), the bound (--max-entries) refuses with 409 and changes nothing, not
# even the audit log, paging (limit, after, next) walks every entry exactly once, the bytes an
# entry takes at the longest fields (so the whole list at the default bound stays far under an
# agent's 64 MiB), a prober removes its own entries but not an operator's, only the localizer
# posts /api/v1/probes, an agent or prober node reports only for its own host; the review's
# attacks: 3,000 identical POSTs are one entry, and /metrics costs the same at any list size.
#
# Usage: tests/controller/denylist.sh BINDIR
set -euo pipefail
bin=${1:?usage: denylist.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
ctl_tokens "$tmp/tokens"
# a token name of the longest (63 characters), for the bytes an entry takes at most
echo "tok-longname-000000001 operator $(printf 'o%.0s' $(seq 63))" >>"$tmp/tokens"

start() {
    log=$tmp/log.$RANDOM
    : >"$log"
    rm -f "$tmp"/c.db*
    "$bin/mrc-controller" --topology "$root/deploy/topologies/lab.json" --db "$tmp/c.db" \
        --tokens "$tmp/tokens" --listen 127.0.0.1:0 --floor 0 --web '' "$@" 2>"$log" &
    pid=$!
    port=$(served_port "$log" "$pid") || exit 1
    base=http://127.0.0.1:$port
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=; }
token() { awk -v r="$1" '$2 == r {print $1; exit}' "$tmp/tokens"; }
req() { # req ROLE METHOD PATH [BODY]: the status, the body in $tmp/out
    local a=(-H "Authorization: Bearer $(token "$1")")
    if [ -n "${4-}" ]; then
        curl -s -o "$tmp/out" -w '%{http_code}' -X "$2" "${a[@]}" -H 'Content-Type: application/json' --data-binary "$4" "$base$3"
    else
        curl -s -o "$tmp/out" -w '%{http_code}' -X "$2" "${a[@]}" "$base$3"
    fi
}
json() { python3 -c "import json; d=json.load(open('$tmp/out')); print($1)"; }
count() { curl -s "$base/metrics" | awk '$1 == "mrcfab_denylist_entries" {print $2}'; }
audit_n() { req reader GET '/api/v1/audit?limit=1000' >/dev/null; json 'len(d["records"])'; }

start --max-entries 5
drain='{"element": "p0-t1-0", "reason": "maintenance"}'
s=$(req operator POST /api/v1/denylist "$drain"); id1=$(json 'd["id"]')
check '[ "$s" = 201 ]' "a drain: 201"
s=$(req operator POST /api/v1/denylist '{"element": "p0-t1-0", "reason": "again, other words"}'); id2=$(json 'd["id"]')
check '[ "$s" = 200 ] && [ "$id1" = "$id2" ] && [ "$(count)" = 1 ]' "the same drain again: 200, the same entry ($id1), one entry"
s=$(req operator POST /api/v1/denylist '{"element": "p0-t1-0", "reason": "x", "scope": "both", "window": {"start": "2020-01-01T00:00:00Z", "end": "2020-01-01T01:00:00Z"}}')
check '[ "$s" = 400 ] && json "d[\"detail\"]" | grep -q "ended before now"' "a window wholly in the past: 400 with a sentence"

# a prober adds and removes its own; an operator's drain is not a prober's to remove
s=$(req prober DELETE "/api/v1/denylist/$id1")
check '[ "$s" = 403 ] && json "d[\"detail\"]" | grep -q "only prober entries" && [ "$(count)" = 1 ]' "a prober may not remove an operator's drain: 403, it stays"
s=$(req localizer DELETE "/api/v1/denylist/$id1"); check '[ "$s" = 403 ]' "nor may the localizer"
s=$(req prober POST /api/v1/denylist '{"element": "h5:0", "reason": "prober: lossy"}'); pid1=$(json 'd["id"]')
check '[ "$s" = 201 ] && [ "$(json "d[\"source\"]")" = prober ]' "a prober adds an entry of source prober"
s=$(req localizer DELETE "/api/v1/denylist/$pid1"); check '[ "$s" = 204 ]' "the localizer lifts a prober entry: 204"
s=$(req prober POST /api/v1/denylist '{"element": "h5:0", "reason": "prober: lossy"}'); pid1=$(json 'd["id"]')
s=$(req prober DELETE "/api/v1/denylist/$pid1"); check '[ "$s" = 204 ]' "a prober removes its own: 204"

# the bound: 5 entries, the 6th refused, nothing changed
for el in p0-t1-1 p1-t1-0 p1-t1-1 h1:0; do req operator POST /api/v1/denylist "{\"element\": \"$el\", \"reason\": \"fill\"}" >/dev/null; done
check '[ "$(count)" = 5 ]' "five entries"
before=$(audit_n) v=$(req reader GET /api/v1/fabric >/dev/null; json 'd["denylist_version"]')
s=$(req operator POST /api/v1/denylist '{"element": "h2:0", "reason": "one too many"}')
check '[ "$s" = 409 ] && json "d[\"detail\"]" | grep -q "limit of 5 entries (--max-entries)"' "the bound: 409 naming the limit and --max-entries"
check '[ "$(count)" = 5 ] && [ "$(audit_n)" = "$before" ] && [ "$(req reader GET /api/v1/fabric >/dev/null; json "d[\"denylist_version\"]")" = "$v" ]' "refused: no entry, no audit record, the same version"
s=$(req operator POST /api/v1/denylist "$drain"); check '[ "$s" = 200 ]' "at the bound the same drain is still 200"

# paging walks every entry exactly once
ids=$(req reader GET /api/v1/denylist >/dev/null; json '" ".join(str(e["id"]) for e in d["entries"])')
got= after=0
while :; do
    s=$(req reader GET "/api/v1/denylist?limit=2&after=$after")
    [ "$s" = 200 ] || { fail "a page: $s"; break; }
    got="$got $(json '" ".join(str(e["id"]) for e in d["entries"])')"
    after=$(json 'd["next"] or 0')
    [ "$after" != 0 ] || break
done
check '[ "$(echo $got)" = "$ids" ]' "pages of 2 walk every entry once, in order ($ids)"
s=$(req reader GET "/api/v1/denylist?limit=0"); check '[ "$s" = 400 ]' "limit=0: 400"
s=$(req reader GET "/api/v1/denylist?limit=1001"); check '[ "$s" = 400 ]' "limit over 1000: 400"

# who reports and posts evidence
s=$(req localizer POST /api/v1/probes '{"results": [{"element": "p0-t0-0~p0-t1-1", "scope": "up", "sent": 10, "lost": 0}]}')
check '[ "$s" = 202 ]' "the localizer posts /api/v1/probes"
s=$(req prober POST /api/v1/probes '{"results": [{"element": "p0-t0-0~p0-t1-1", "scope": "up", "sent": 10, "lost": 0}]}')
check '[ "$s" = 403 ]' "a prober may not"
s=$(req agent POST /api/v1/reports '{"host": "h5", "evs": [{"peer": "h0", "ev": 0, "sent": 10, "lost": 0}]}')
check '[ "$s" = 403 ] && json "d[\"detail\"]" | grep -q "only as .h0., not as .h5."' "an agent token may not report for another host: 403"
s=$(req prober POST /api/v1/reports '{"host": "h5", "evs": [{"peer": "h0", "ev": 0, "sent": 10, "lost": 0}]}')
check '[ "$s" = 403 ]' "nor a prober node's for a host not its own"
stop

# the review's attack: identical POSTs over one keep-alive connection are one entry (without
# the per-token rate, which would refuse most of them first: this is the list's own defence)
start --rate-limit 0
python3 - "$port" "$(token prober)" >"$tmp/attack" <<'PY'
import http.client, json, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
body = json.dumps({"element": "p0-t1-1", "reason": "the same, again"})
codes, ids, t0 = {}, set(), time.monotonic()
for i in range(3000):
    c.request("POST", "/api/v1/denylist", body, {"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"})
    r = c.getresponse()
    d = json.loads(r.read())
    codes[r.status] = codes.get(r.status, 0) + 1
    ids.add(d["id"])
print(codes.get(201, 0), codes.get(200, 0), len(ids), round(time.monotonic() - t0, 1))
PY
read -r c201 c200 nids secs <"$tmp/attack"
check '[ "$c201" = 1 ] && [ "$c200" = 2999 ] && [ "$nids" = 1 ] && [ "$(count)" = 1 ]' "3,000 identical POSTs: one 201, 2,999 times 200 with the same id, one entry ($secs s)"

# the bytes an entry takes at the longest fields, and /metrics at any length of the list
metrics_ms() { python3 - "$base" <<'PY'
import sys, time, urllib.request
t = []
for _ in range(20):
    t0 = time.monotonic(); urllib.request.urlopen(sys.argv[1] + "/metrics").read(); t.append(time.monotonic() - t0)
print(round(sorted(t)[10] * 1000, 2))
PY
}
m1=$(metrics_ms)
req reader GET /api/v1/denylist >/dev/null; b0=$(stat -c %s "$tmp/out")
n=400
python3 - "$port" "$(token operator)" "$n" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
reason = '"' * 255  # escaped as \": two bytes each, the most a reason writes (no control characters)
for i in range(int(sys.argv[3])):
    w = {"start": "2096-01-01T00:00:00.000Z", "end": "2096-01-%02dT%02d:%02d:00.000Z" % (2 + i // 1440, i // 60 % 24, i % 60)}
    c.request("POST", "/api/v1/denylist", json.dumps({"element": "p0-t0-0~p0-t1-1", "scope": "down", "reason": reason, "window": w}),
              {"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    assert r.status == 201, r.status
PY
req reader GET /api/v1/denylist >/dev/null; b1=$(stat -c %s "$tmp/out")
per=$(((b1 - b0) / n))
# the longest element and author add (95 - 15) + (63 - 3) bytes to what the lab's entry has
per_max=$((per + 80 + 60))
whole=$((per_max * 4096))
echo "bytes: an entry of the longest reason and window $per, with the longest element and author $per_max; 4096 of them $whole"
check '[ "$whole" -lt $((64 * 1048576 / 4)) ]' "the whole list at the default bound (4096 x $per_max = $whole bytes) is under a quarter of an agent's 64 MiB"
m2=$(metrics_ms)
echo "/metrics median: $m1 ms with 1 entry, $m2 ms with $((n + 1))"
check 'awk -v a="$m1" -v b="$m2" "BEGIN { exit !(b < 3 * a + 2) }"' "/metrics costs the same at $((n + 1)) entries as at 1 ($m1 ms, $m2 ms)"
stop
finish denylist
