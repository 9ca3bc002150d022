#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe localize's report endpoint against bad input, on loopback: a wrong or missing
# token, a token that is no node's, a node's token for another host, a body that is no JSON, no
# report, a host or port not in the fabric, another epoch, a malformed deficit, a window it is
# not collecting, the wrong method or path. Each gets a clear 4xx and nothing is taken: the count
# of reports stays where it was; a good report is taken once, not twice.
set -euo pipefail

bin=${1:?usage: probe_api.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
work=$(mktemp -d)
port=$((30000 + $$ % 20000))
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
fail() {
    echo "FAIL: $*"
    cat "$work/localize.log"
    exit 1
}
# each node its own token, good for its own host's reports only
{
    echo "node-token-h0-0123456789 prober h0"
    echo "node-token-h1-0123456789 prober h1"
    echo "reader-token-0123456789 reader grafana"
} >"$work/tokens"
"$bin/mrc-probe" localize --topology "$topo" --listen "[::1]:$port" --window-ms 1000 \
    --report-tokens "$work/tokens" >"$work/localize.log" 2>&1 &
pid=$!
url="http://[::1]:$port/api/v1"
for _ in $(seq 50); do curl -sf "$url/status" >/dev/null && break; sleep 0.1; done
sleep 1.1 # the localizer begins with the next window
reports() { curl -s "$url/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["reports"])'; }
# post CODE BODY [TOKEN]: the answer must be CODE with a problem's detail
post() {
    local want=$1 body=$2 token=${3-node-token-h0-0123456789} code
    code=$(curl -s -o "$work/answer" -w '%{http_code}' -X POST -H "Authorization: Bearer $token" \
        --data-binary "$body" "$url/reports")
    [ "$code" = "$want" ] || fail "want $want for '${body:0:60}', got $code: $(cat "$work/answer")"
    if [ "$want" != 202 ]; then
        grep -q '"detail"' "$work/answer" || fail "no detail for '${body:0:60}': $(cat "$work/answer")"
    fi
}
w=$(( $(date +%s%3N) / 1000 ))
good="{\"host\":\"h0\",\"window\":$w,\"epoch\":1,\"ports\":[{\"plane\":0,\"t0\":0,\"port\":0,\"sent\":1408,\"deficits\":[[\"cross\",1,0,1,5]]}]}"
post 401 "$good" wrong-token
post 401 "$good" ""
post 403 "$good" reader-token-0123456789
post 403 "$good" node-token-h1-0123456789
grep -q '"detail":"token of h1 may not report for h0"' "$work/answer" ||
    fail "h1's token reporting for h0: $(cat "$work/answer")"
post 400 'not json'
post 400 '[1,2,3]'
post 400 '{"host":"h0"}'
post 400 "{\"host\":\"h99\",\"window\":$w,\"epoch\":1,\"ports\":[]}"
post 400 "{\"host\":\"h0\",\"window\":$w,\"epoch\":7,\"ports\":[]}"
post 400 "{\"host\":\"h0\",\"window\":$w,\"epoch\":1,\"ports\":[{\"plane\":0,\"t0\":1,\"port\":0,\"sent\":1,\"deficits\":[]}]}"
post 400 "{\"host\":\"h0\",\"window\":$w,\"epoch\":1,\"ports\":[{\"plane\":0,\"t0\":0,\"port\":0,\"sent\":1,\"deficits\":[[\"warp\",1,0,1,5]]}]}"
post 400 "{\"host\":\"h0\",\"window\":$w,\"epoch\":1,\"ports\":[{\"plane\":0,\"t0\":0,\"port\":0,\"sent\":1,\"deficits\":[[\"cross\",1,0,1,99999999]]}]}"
post 400 "{\"host\":\"h0\",\"window\":$((w + 100)),\"epoch\":1,\"ports\":[]}"
post 409 "{\"host\":\"h0\",\"window\":1,\"epoch\":1,\"ports\":[]}"
[ "$(reports)" = 0 ] || fail "bad reports were taken: $(reports)"
echo "PASS: 14 bad reports refused with a clear 4xx, none taken (h1's token not for h0's)"
post 202 "$good"
post 400 "$good"
[ "$(reports)" = 1 ] || fail "the good report was not taken once: $(reports)"
echo "PASS: a good report is taken once"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/reports")
[ "$code" = 405 ] || fail "GET /reports answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/nothing")
[ "$code" = 404 ] || fail "GET /nothing answered $code"
echo "PASS: wrong method and path refused"
kill -0 "$pid" || fail "the localizer died"
