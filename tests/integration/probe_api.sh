#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe localize's report endpoint against bad input, on loopback: a wrong or missing
# token, a token that is no node's, a node's token for another host, a body that is no JSON, no
# report, a host or port not in the fabric, another epoch, a malformed deficit, a window it is
# not collecting, the wrong method or path. Each gets a clear 4xx and nothing is taken: the count
# of reports stays where it was; a good report is taken once, not twice. GET /metrics (no token,
# Prometheus's text format) passes promtool check metrics and counts each refusal under its
# reason, the reports taken, the probes sent and lost of the plane reported, the windows
# evaluated and the inference's time.
set -euo pipefail

bin=${1:?usage: probe_api.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
work=$(mktemp -d)
pid=
# shellcheck source=tests/check.sh
source "$root/tests/check.sh" # served_port; this script stops at its first failure (fail below)
command -v promtool >/dev/null || { echo "FAIL: no promtool (deploy/install-deps.sh installs it)"; exit 1; }
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
chmod 600 "$work/tokens" # a tokens file only its owner can read
: >"$work/localize.log"
"$bin/mrc-probe" localize --topology "$topo" --listen "[::1]:0" --window-ms 1000 \
    --report-tokens "$work/tokens" >"$work/localize.log" 2>&1 &
pid=$!
port=$(served_port "$work/localize.log" "$pid") || exit 1
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
# a second report of the same host and window: refused (409), the first kept
post 409 "${good/1408/1000}"
grep -q '"detail":"h0 reported window [0-9]* already; its first report is kept"' "$work/answer" ||
    fail "a duplicate report: $(cat "$work/answer")"
[ "$(reports)" = 1 ] || fail "the good report was not taken once: $(reports)"
echo "PASS: a good report is taken once, a second of its window refused (409)"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/reports")
[ "$code" = 405 ] || fail "GET /reports answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/nothing")
[ "$code" = 404 ] || fail "GET /nothing answered $code"
echo "PASS: wrong method and path refused"

# GET /metrics: no token, promtool clean, and the refusals above under their reasons
code=$(curl -s -D "$work/headers" -o "$work/metrics" -w '%{http_code}' "http://[::1]:$port/metrics")
[ "$code" = 200 ] || fail "GET /metrics answered $code"
grep -qi '^content-type: text/plain; version=0.0.4' "$work/headers" ||
    fail "GET /metrics: $(grep -i content-type "$work/headers")"
promtool check metrics <"$work/metrics" >"$work/lint" 2>&1 || fail "promtool: $(cat "$work/lint")"
[ ! -s "$work/lint" ] || fail "promtool check metrics: $(cat "$work/lint")"
metric() { awk -v m="$1" '$1 == m {print $2}' "$work/metrics"; }
for want in 'mrcfab_localizer_reports_total 1' \
    'mrcfab_localizer_reports_refused_total{reason="unauthorized"} 2' \
    'mrcfab_localizer_reports_refused_total{reason="forbidden"} 2' \
    'mrcfab_localizer_reports_refused_total{reason="invalid"} 9' \
    'mrcfab_localizer_reports_refused_total{reason="duplicate"} 1' \
    'mrcfab_localizer_reports_refused_total{reason="late"} 1' \
    'mrcfab_localizer_reports_refused_total{reason="too_large"} 0' \
    'mrcfab_localizer_probes_sent_total{plane="0"} 1408' \
    'mrcfab_localizer_probes_lost_total{plane="0"} 1' \
    'mrcfab_localizer_probes_sent_total{plane="1"} 0' \
    'mrcfab_localizer_verdicts{kind="link",state="denied"} 0' \
    'mrcfab_localizer_controller_failures_total{request="probes"} 0'; do
    [ "$(metric "${want% *}")" = "${want##* }" ] ||
        fail "/metrics: want '$want', got '$(metric "${want% *}")'"
done
echo "PASS: GET /metrics without a token, promtool check metrics clean, each refusal under its reason"
# a body over 4 MiB is refused as too large, and counted so
head -c $((5 << 20)) /dev/zero | tr '\0' ' ' >"$work/big"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer node-token-h0-0123456789" \
    --data-binary @"$work/big" "$url/reports")
[ "$code" = 413 ] || fail "a 5 MiB report answered $code"
# the windows go on being evaluated (the deadline, no node reports), each timed
for _ in $(seq 40); do
    curl -s "http://[::1]:$port/metrics" >"$work/metrics"
    [ "$(metric mrcfab_localizer_windows_evaluated_total)" -ge 2 ] && break
    sleep 0.1
done
[ "$(metric mrcfab_localizer_windows_evaluated_total)" -ge 2 ] ||
    fail "windows evaluated: $(metric mrcfab_localizer_windows_evaluated_total)"
[ "$(metric 'mrcfab_localizer_reports_refused_total{reason="too_large"}')" = 1 ] ||
    fail "the 5 MiB report is not counted as too large"
python3 - "$work/metrics" <<'PYEOF' || fail "the inference's time: $(grep inference "$work/metrics")"
import sys
m = dict(l.rsplit(" ", 1) for l in open(sys.argv[1]) if not l.startswith("#"))
n, s = int(m["mrcfab_localizer_inference_seconds_count"]), float(m["mrcfab_localizer_inference_seconds_sum"])
last, mx = float(m["mrcfab_localizer_inference_seconds_last"]), float(m["mrcfab_localizer_inference_seconds_max"])
assert n >= 2 and 0 < last <= mx <= s < 1, (n, s, last, mx)
PYEOF
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://[::1]:$port/metrics")
[ "$code" = 405 ] || fail "POST /metrics answered $code"
echo "PASS: a 5 MiB report refused (413, too_large), windows evaluated and timed, POST /metrics refused"
kill -0 "$pid" || fail "the localizer died"

# start-up: reports need tokens unless --open, said in one sentence (exit 2); --open says so in
# its log
rc=0
"$bin/mrc-probe" localize --topology "$topo" --listen "[::1]:$((port + 1))" >"$work/out" 2>&1 || rc=$?
[ "$rc" = 2 ] && [ "$(grep -c '' "$work/out")" = 1 ] && grep -q -- '--report-tokens FILE, or --open' "$work/out" ||
    fail "no --report-tokens, no --open: rc $rc, $(cat "$work/out")"
rc=0
"$bin/mrc-probe" localize --topology "$topo" --listen "[::1]:$((port + 1))" --open \
    --report-tokens "$work/tokens" >"$work/out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q -- 'not with --report-tokens' "$work/out" ||
    fail "--open with --report-tokens: rc $rc, $(cat "$work/out")"
"$bin/mrc-probe" localize --topology "$topo" --listen "[::1]:$((port + 1))" --open \
    >"$work/open.log" 2>&1 &
opid=$!
for _ in $(seq 50); do curl -sf "http://[::1]:$((port + 1))/api/v1/status" >/dev/null && break; sleep 0.1; done
kill "$opid"
wait "$opid" 2>/dev/null || true
grep -q 'WARNING --open: reports are taken without tokens' "$work/open.log" ||
    fail "--open did not warn: $(cat "$work/open.log")"
echo "PASS: without --report-tokens or --open the localizer refuses to start (exit 2, one line); --open warns"
