#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrcctl as the controller's client, against a live mrc-controller on loopback: deny ls/add/rm,
# drain and undrain round trips, every --json output against schemas/mrcctl, the token's
# sources, and each way of failing: a refused role, no or a wrong token, an element not in the
# fabric, a bad time, a controller that is down, one that errs (5xx), one that never answers,
# and bad arguments (exit 2, nothing sent or changed).
#
# Usage: tests/controller/mrcctl_client.sh BINDIR   (BINDIR holds mrcctl and mrc-controller)
# shellcheck disable=SC2034 # the ids are read in the check strings, which check evaluates
set -euo pipefail
bin=${1:?usage: mrcctl_client.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
schemas=$root/schemas
tmp=$(mktemp -d)
pid=
fakes=()
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    for f in "${fakes[@]}"; do kill -9 "$f" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
pass() { printf 'PASS %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
check() { if eval "$1"; then pass "$2"; else fail "$2 (exit $rc: $(head -c 400 "$tmp/err"))"; fi; }

# the validators pinned by tests/schema
if [[ ! -x $root/tests/schema/node_modules/.bin/ajv ]]; then
    (cd "$root/tests/schema" && npm ci --no-audit --no-fund --loglevel=error)
fi
# conforms SCHEMA FILE...: every file is valid against schemas/mrcctl/SCHEMA (one ajv run)
# (deny-list refers to deny-entry)
conforms() {
    local schema=$1 args=() f
    shift
    for f in "$@"; do args+=(-d "$f"); done
    [ "$schema" = deny-list.schema.json ] && args+=(-r "$schemas/mrcctl/deny-entry.schema.json")
    (cd "$root/tests/schema" &&
        npx --no-install ajv validate --spec=draft2020 -c ajv-formats --strict=false \
            -s "$schemas/mrcctl/$schema" "${args[@]}" --errors=text) >"$tmp/ajv.log" 2>&1
}
check_schema() {
    local schema=$1 what=$2
    shift 2
    if conforms "$schema" "$@"; then
        pass "$what conforms to mrcctl/$schema"
    else
        fail "$what: $(head -c 600 "$tmp/ajv.log")"
    fi
}

cat >"$tmp/tokens" <<'TOKENS'
# TOKEN ROLE NAME
tok-reader-000000000001 reader alice
tok-prober-000000000001 prober prober1
tok-operator-0000000001 operator bob
tok-admin-0000000000001 admin root
TOKENS
# a token file may be a line of the tokens file, after comments
printf '# bob, the operator\n\n  tok-operator-0000000001 operator bob\n' >"$tmp/op.token"
printf 'tok-reader-000000000001\n' >"$tmp/reader.token"
: >"$tmp/empty.token"
topo=$root/deploy/topologies/lab.json

"$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
    --listen 127.0.0.1:0 2>"$tmp/log" &
pid=$!
port=
for _ in $(seq 200); do
    port=$(sed -n 's/.* port \([0-9]*\) (http.*/\1/p' "$tmp/log")
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { echo "FAIL the controller did not start: $(cat "$tmp/log")"; exit 1; }
base=http://127.0.0.1:$port

export MRCFAB_CONTROLLER=$base
unset MRCFAB_TOKEN MRCFAB_TOKEN_FILE
# run ARGS...: mrcctl's stdout in $tmp/out, stderr in $tmp/err, exit status in $rc
rc=0
run() {
    set +e
    "$bin/mrcctl" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
}
op() { run --token-file "$tmp/op.token" "$@"; }
json() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); print($1)"; }
version() { # the denylist's version, read with the admin token
    MRCFAB_TOKEN=tok-admin-0000000000001 "$bin/mrcctl" --json deny ls | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])'
}
err_is() { grep -qF -- "$1" "$tmp/err"; }

# 1. deny ls / add / rm: a round trip
op deny ls
check '[ $rc = 0 ] && grep -q "^the denylist is empty (version 0)$" "$tmp/out"' "deny ls: an empty denylist"
op --json deny ls
cp "$tmp/out" "$tmp/list0.json"
op --json deny add p0-t1-0 --reason "optics"
cp "$tmp/out" "$tmp/add1.json"
id1=$(json 'd["id"]')
check '[ $rc = 0 ] && [ "$(json "d[\"element\"], d[\"scope\"], d[\"reason\"], d[\"author\"], d[\"active\"]")" = "p0-t1-0 both optics bob True" ]' "deny add --json: the committed entry ($id1)"
op --json deny add h3:1 --reason "nic flaps" --scope up --from 2030-12-01T02:00:00Z --to 2030-12-01T04:00:00Z
cp "$tmp/out" "$tmp/add2.json"
id2=$(json 'd["id"]')
check '[ $rc = 0 ] && [ "$(json "d[\"scope\"], d[\"window\"][\"start\"], d[\"window\"][\"end\"], d[\"active\"]")" = "up 2030-12-01T02:00:00.000Z 2030-12-01T04:00:00.000Z False" ]' "deny add with --scope and a window"
op deny add p0-t0-0~p0-t1-1 --reason "crc errors" --scope down
check '[ $rc = 0 ] && grep -q "^added denylist entry [0-9]*: p0-t0-0~p0-t1-1, scope down, active now, by bob: crc errors$" "$tmp/out"' "deny add of a link: one line naming the new entry"
id3=$(sed -n 's/^added denylist entry \([0-9]*\):.*/\1/p' "$tmp/out")
op deny ls
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^ID  *ELEMENT  *SCOPE  *ACTIVE  *WINDOW  *AUTHOR  *REASON$" && grep -q "^ *$id2  h3:1  .* up  .* no  .* 2030-12-01T02:00:00.000Z..2030-12-01T04:00:00.000Z  bob  .*nic flaps$" "$tmp/out" && grep -q "^3 entries, version 3$" "$tmp/out"' "deny ls: the table"
op --json deny ls
cp "$tmp/out" "$tmp/list1.json"
check '[ $rc = 0 ] && [ "$(json "[e[\"id\"] for e in d[\"entries\"]]")" = "[$id1, $id2, $id3]" ] && [ "$(json "d[\"version\"]")" = 3 ]' "deny ls --json: the API's entries and version"
op deny rm "$id1"
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "removed denylist entry $id1" ]' "deny rm"
op --json deny rm "$id3"
cp "$tmp/out" "$tmp/rm1.json"
check '[ $rc = 0 ] && [ "$(json "d[\"removed\"]")" = "[$id3]" ]' "deny rm --json"
op --json deny ls
check '[ "$(json "[e[\"id\"] for e in d[\"entries\"]]")" = "[$id2]" ]' "the removed entries are gone"
op deny rm "$id1"
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: there is no denylist entry $id1 (HTTP 404)" ] && [ ! -s "$tmp/out" ]' "deny rm of an entry that is gone: exit 2, the controller's sentence"

# 2. drain / undrain
op --json drain p0-t0-1
cp "$tmp/out" "$tmp/drain1.json"
d1=$(json 'd["id"]')
check '[ $rc = 0 ] && [ "$(json "d[\"element\"], d[\"reason\"], d[\"scope\"]")" = "p0-t0-1 drain both" ]' "drain: reason 'drain' by default"
op --json drain p0-t0-1 --reason "reboot" --from 2030-01-01T00:00:00Z --to 2030-01-01T01:00:00Z
cp "$tmp/out" "$tmp/drain2.json"
d2=$(json 'd["id"]')
check '[ $rc = 0 ] && [ "$(json "d[\"reason\"], d[\"window\"][\"end\"]")" = "drain: reboot 2030-01-01T01:00:00.000Z" ]' "drain --reason keeps 'drain' at the start; a window"
op drain p0-t0-1 --reason "drain for the optics swap"
check '[ $rc = 0 ] && grep -q "by bob: drain for the optics swap$" "$tmp/out"' "drain --reason already starting with 'drain' is kept"
d3=$(sed -n 's/^added denylist entry \([0-9]*\):.*/\1/p' "$tmp/out")
op deny add p0-t0-1 --reason "flapping"
keep1=$(sed -n 's/^added denylist entry \([0-9]*\):.*/\1/p' "$tmp/out")
op drain p0-t0-2
keep2=$(sed -n 's/^added denylist entry \([0-9]*\):.*/\1/p' "$tmp/out")
op undrain p0-t0-1
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "undrained p0-t0-1: removed denylist entries $d1, $d2, $d3" ]' "undrain removes every drain entry of the element"
op --json deny ls
check '[ "$(json "sorted(e[\"id\"] for e in d[\"entries\"])")" = "[$id2, $keep1, $keep2]" ]' "and leaves other reasons and other elements alone"
op undrain p0-t0-1
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "nothing to undrain: p0-t0-1 has no entry whose reason starts with '"'drain'"'" ]' "undrain with nothing to undrain: exit 0, says so"
op --json undrain p0-t0-1
cp "$tmp/out" "$tmp/undrain0.json"
check '[ $rc = 0 ] && [ "$(json "d[\"element\"], d[\"removed\"]")" = "p0-t0-1 []" ]' "undrain --json with nothing to undrain"
op --json undrain p0-t0-2
cp "$tmp/out" "$tmp/undrain1.json"
check '[ $rc = 0 ] && [ "$(json "d[\"removed\"]")" = "[$keep2]" ]' "undrain --json"

# 3. every --json output against its schema
check_schema deny-list.schema.json "deny ls --json" "$tmp/list0.json" "$tmp/list1.json"
check_schema deny-entry.schema.json "deny add --json, drain --json" "$tmp/add1.json" \
    "$tmp/add2.json" "$tmp/drain1.json" "$tmp/drain2.json"
check_schema deny-removed.schema.json "deny rm --json, undrain --json" "$tmp/rm1.json" \
    "$tmp/undrain0.json" "$tmp/undrain1.json"

# 4. the token: its sources, a role that may not, none, a wrong one
MRCFAB_TOKEN=tok-reader-000000000001 run deny add p0-t1-1 --reason "x"
check '[ $rc = 2 ] && err_is "the reader role of '"'alice'"' may not POST /api/v1/denylist; it takes prober (HTTP 403)"' "a reader's add: exit 2, the message names the role"
MRCFAB_TOKEN_FILE=$tmp/reader.token run --json deny rm "$id2"
cp "$tmp/out" "$tmp/e403.json"
check '[ $rc = 2 ] && err_is "the reader role of" && [ "$(json "d[\"error\"][\"code\"]")" = 2 ]' "a reader's rm with --json: exit 2, an error document"
MRCFAB_TOKEN=tok-reader-000000000001 run deny ls
check '[ $rc = 0 ] && grep -q "h3:1" "$tmp/out"' "a reader lists the denylist (token from \$MRCFAB_TOKEN)"
MRCFAB_TOKEN_FILE=$tmp/reader.token run deny ls
check '[ $rc = 0 ]' "the token from \$MRCFAB_TOKEN_FILE"
MRCFAB_TOKEN=tok-reader-000000000001 run --token-file "$tmp/op.token" drain p1-t1-0
check '[ $rc = 0 ]' "--token-file wins over \$MRCFAB_TOKEN"
MRCFAB_TOKEN=tok-operator-0000000001 run undrain p1-t1-0
v=$(version)
run deny ls
check '[ $rc = 2 ] && err_is "no token" && [ ! -s "$tmp/out" ]' "no token: exit 2"
run --json deny add p0-t1-1 --reason x
cp "$tmp/out" "$tmp/e-notoken.json"
check '[ $rc = 2 ] && [ "$(json "d[\"error\"][\"code\"]")" = 2 ]' "no token with --json: an error document"
MRCFAB_TOKEN=tok-admin-0000000000002 run deny add p0-t1-1 --reason x
check '[ $rc = 2 ] && err_is "(HTTP 401)"' "a wrong token: exit 2 (HTTP 401)"
run --token-file "$tmp/none.token" deny ls
check '[ $rc = 2 ] && err_is "cannot read the token file"' "a missing token file: exit 2"
run --token-file "$tmp/empty.token" deny ls
check '[ $rc = 2 ] && err_is "holds no token"' "an empty token file: exit 2"
check '[ "$(version)" = "$v" ]' "refused requests changed nothing"

# 5. the controller's own sentences for bad input
op deny add p9-t1-0 --reason "x"
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: '"'p9-t1-0'"' is no switch or host port of fabric '"'lab'"' (a link is '"'SWITCH~SWITCH'"') (HTTP 422)" ]' "an unknown element: exit 2, the controller's sentence"
op --json drain h99:0
cp "$tmp/out" "$tmp/e422.json"
check '[ $rc = 2 ] && err_is "(HTTP 422)" && json "d[\"error\"][\"message\"]" | grep -q "h99:0"' "drain of an unknown host port: exit 2, an error document"
op deny add p0-t1-0 --reason "x" --scope up
check '[ $rc = 2 ] && err_is "a switch is denied whole" && err_is "(HTTP 422)"' "a scope that does not fit the element: exit 2"
op deny add p0-t1-0 --reason "x" --from tomorrow --to 2030-12-01T02:00:00Z
check '[ $rc = 2 ] && err_is "RFC 3339" && err_is "(HTTP 400)"' "a time that is not RFC 3339: exit 2"
op drain p0-t1-0 --from 2030-12-01T04:00:00Z --to 2030-12-01T02:00:00Z
check '[ $rc = 2 ] && err_is "the window must end after it starts (HTTP 400)"' "a window that ends before it starts: exit 2"
check '[ "$(version)" = "$v" ]' "bad input changed nothing"

# 6. bad arguments: exit 2 before anything is sent
bad_args=(
    "deny"
    "deny frobnicate"
    "deny ls extra"
    "deny ls --bogus"
    "deny add"
    "deny add p0-t1-1"
    "deny add p0-t1-1 p0-t1-0 --reason x"
    "deny add p0-t1-1 --reason"
    "deny add p0-t1-1 --reason x --from 2030-12-01T02:00:00Z"
    "deny add p0-t1-1 --reason x --scope sideways"
    "deny rm"
    "deny rm abc"
    "deny rm 0"
    "deny rm 1/../2"
    "deny rm 1 2"
    "drain"
    "drain p0-t1-1 --scope up"
    "undrain"
    "undrain p0-t1-1 p0-t1-0"
    "--controller ftp://127.0.0.1/ deny ls"
    "--controller http://127.0.0.1:99999 deny ls"
    "--controller http:// deny ls"
)
before=$failures
for a in "${bad_args[@]}"; do
    # shellcheck disable=SC2086
    op $a
    if [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ]; then
        :
    else
        fail "mrcctl $a: exit $rc, want 2 and one line: $(cat "$tmp/err")"
    fi
    # shellcheck disable=SC2086
    op --json $a
    cp "$tmp/out" "$tmp/e-args.json" # ajv takes a file's format from its name
    if [ $rc = 2 ] && conforms error.schema.json "$tmp/e-args.json"; then
        :
    else
        fail "mrcctl --json $a: exit $rc, want 2 and an error document: $(cat "$tmp/out")"
    fi
done
if [ "$failures" = "$before" ]; then
    pass "bad arguments: exit 2, one line, an error document with --json (${#bad_args[@]} cases)"
fi
check '[ "$(version)" = "$v" ]' "bad arguments changed nothing"
check_schema error.schema.json "the error documents" "$tmp/e403.json" "$tmp/e-notoken.json" \
    "$tmp/e422.json" "$tmp/e-args.json"

# 7. the controller's URL: the flag wins over the environment; a trailing slash is fine
MRCFAB_CONTROLLER=http://127.0.0.1:1 op --controller "$base/" deny ls
check '[ $rc = 0 ]' "--controller wins over \$MRCFAB_CONTROLLER"

# 8. a controller that errs (5xx), and one that never answers
cat >"$tmp/fake.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"type": "about:blank", "title": "Service Unavailable", "status": 503, "detail": "the store could not be read", "instance": "/api/v1/denylist"}'
        self.send_response(503)
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$tmp/fake.py" >"$tmp/fake.port" &
fakes+=($!)
disown
python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)  # never accepts: a connection is made, no answer comes
print(s.getsockname()[1], flush=True)
time.sleep(60)' >"$tmp/mute.port" &
fakes+=($!)
disown
for _ in $(seq 100); do [ -s "$tmp/fake.port" ] && [ -s "$tmp/mute.port" ] && break; sleep 0.05; done
op --controller "http://127.0.0.1:$(cat "$tmp/fake.port")" deny ls
check '[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "mrcctl: the store could not be read (HTTP 503)" ]' "a 5xx problem: exit 1, its sentence"
t0=$(date +%s)
op --controller "http://127.0.0.1:$(cat "$tmp/mute.port")" deny ls
t=$(($(date +%s) - t0))
check '[ $rc = 1 ] && err_is "timed out" && [ $t -ge 9 ] && [ $t -le 13 ]' "a controller that never answers: exit 1 after 10 s ($t s)"

# 9. a controller that is down
kill -TERM "$pid"
wait "$pid" || true
pid=
op deny ls
check '[ $rc = 1 ] && err_is "cannot reach the controller" && err_is "Connection refused" && [ ! -s "$tmp/out" ]' "the controller down: exit 1"
op --json drain p0-t1-0
cp "$tmp/out" "$tmp/e-down.json"
check '[ $rc = 1 ] && conforms error.schema.json "$tmp/e-down.json" && [ "$(json "d[\"error\"][\"code\"]")" = 1 ]' "the controller down, --json: exit 1, an error document"
MRCFAB_CONTROLLER=http://no-such-controller.invalid:8080 op undrain p0-t1-0
check '[ $rc = 1 ] && err_is "cannot resolve"' "a controller name that does not resolve: exit 1"

if [ "$failures" -gt 0 ]; then
    echo "mrcctl_client: $failures failed"
    exit 1
fi
echo "mrcctl_client: all passed"
