#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-controller's dashboard files and the resources the dashboard needs, over loopback with
# curl (issue 10): / and /ui/PATH from a --web folder of its own (types, security headers,
# HEAD, no token needed), every way out of the folder refused (.., %2e%2e, an absolute path, a
# symbolic link to /etc/passwd, a hidden file, a folder, a FIFO, a file over 8 MiB), methods
# other than GET and HEAD (405), --web '' and web = DIR in --config; GET /api/v1/whoami for
# each role and a bad token; GET /api/v1/probers before and after a prober's request, and
# with mrc-probe localize's heartbeat.
#
# Usage: tests/controller/web.sh BINDIR
set -euo pipefail
bin=${1:?usage: web.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
pid=
lpid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    [ -n "$lpid" ] && kill -9 "$lpid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"

ctl_tokens "$tmp/tokens"
echo "tok-prober-000000000002 localizer prober2" >>"$tmp/tokens"
topo=$root/deploy/topologies/lab.json

# the dashboard's folder: a page, a script, a module, a subfolder's file, a file of no known
# type; and what must never come out of it
web=$tmp/web
mkdir -p "$web/sub" "$web/img"
printf '<!doctype html>\n<title>mrcfab</title>\n<script src="/ui/app.js"></script>\n' >"$web/index.html"
printf 'document.title = "mrcfab";\n' >"$web/app.js"
printf 'export const x = 1;\n' >"$web/mod.mjs"
printf 'body { color: black; }\n' >"$web/sub/style.css"
printf '<svg xmlns="http://www.w3.org/2000/svg"/>\n' >"$web/img/logo.svg"
printf 'opaque' >"$web/data.bin"
printf 'secret-of-the-folder\n' >"$web/.hidden"
printf 'outside-the-folder\n' >"$tmp/outside.txt"
ln -s /etc/passwd "$web/passwd"
ln -s /etc "$web/etc"
ln -s ../outside.txt "$web/sub/out.txt"
mkfifo "$web/fifo"
truncate -s 9M "$web/big.js"

start() {
    log=$tmp/log
    : >"$log"
    "$bin/mrc-controller" --topology "$topo" --db "$tmp/ctl.db" --tokens "$tmp/tokens" \
        --listen 127.0.0.1:0 "$@" 2>"$log" &
    pid=$!
    port=$(served_port "$log" "$pid") || exit 1
    base=http://127.0.0.1:$port
}
stop() {
    kill -TERM "$pid"
    wait "$pid" || true
    pid=
}

# get METHOD PATH [TOKEN]: prints the status; the body into $tmp/out, the headers $tmp/hdr
get() {
    local method=$1 path=$2 auth=()
    [ -n "${3-}" ] && auth=(-H "Authorization: Bearer $3")
    local how=(-X "$method")
    [ "$method" = HEAD ] && how=(--head) # (-X HEAD would wait for the body it announces)
    curl -s --path-as-is "${how[@]}" "${auth[@]}" -D "$tmp/hdr" -o "$tmp/out" -w '%{http_code}' \
        "$base$path"
}
header() { # the value of header $1 of the last answer
    awk -v h="$1" 'tolower($0) ~ "^" tolower(h) ":" {sub(/^[^:]*: */, ""); sub(/\r$/, ""); print}' \
        "$tmp/hdr"
}
json() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); print($1)"; }
problem() { # the body is a problem document with this status
    [ "$(header Content-Type)" = application/problem+json ] &&
        python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if d['status']==$1 and d['title'] and d['detail'] and d['instance'] else 1)"
}
csp="default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'"
secure() { # the dashboard's headers on the last answer
    [ "$(header Content-Security-Policy)" = "$csp" ] && [ "$(header X-Content-Type-Options)" = nosniff ] &&
        [ "$(header Cache-Control)" = no-cache ]
}

start --web "$web"

# the page and its files, with no token
s=$(get GET /)
check '[ "$s" = 200 ] && cmp -s "$tmp/out" "$web/index.html" && [ "$(header Content-Type)" = "text/html; charset=utf-8" ]' "GET / is index.html, text/html"
check 'secure' "GET / has the content security policy, nosniff and no-cache"
s=$(get HEAD /)
check '[ "$s" = 200 ] && ! grep -q "<title>" "$tmp/out" && [ "$(header Content-Length)" = "$(stat -c %s "$web/index.html")" ] && secure' "HEAD /: its headers, no body"
s=$(get GET / tok-admin-0000000000002)
check '[ "$s" = 200 ]' "a wrong token does not matter to the page"
s=$(get GET /ui/app.js)
check '[ "$s" = 200 ] && cmp -s "$tmp/out" "$web/app.js" && [ "$(header Content-Type)" = "application/javascript; charset=utf-8" ] && secure' "GET /ui/app.js: application/javascript"
s=$(get GET /ui/mod.mjs)
check '[ "$s" = 200 ] && [ "$(header Content-Type)" = "application/javascript; charset=utf-8" ]' "GET /ui/mod.mjs: application/javascript"
s=$(get GET /ui/sub/style.css)
check '[ "$s" = 200 ] && cmp -s "$tmp/out" "$web/sub/style.css" && [ "$(header Content-Type)" = "text/css; charset=utf-8" ]' "a subfolder's file: text/css"
s=$(get GET /ui/img/logo.svg)
check '[ "$s" = 200 ] && [ "$(header Content-Type)" = "image/svg+xml" ]' "an SVG: image/svg+xml"
s=$(get GET /ui/data.bin)
check '[ "$s" = 200 ] && [ "$(header Content-Type)" = application/octet-stream ]' "no known extension: application/octet-stream"
s=$(get GET /ui/index.html?v=2)
check '[ "$s" = 200 ] && cmp -s "$tmp/out" "$web/index.html"' "a query is no part of the file's name"
s=$(get GET /ui/nope.js)
check '[ "$s" = 404 ] && problem 404 && secure' "a missing file: 404 problem"
s=$(get GET /ui/)
check '[ "$s" = 404 ] && problem 404' "/ui/ names no file: 404"

# nothing outside the folder, nothing but its regular, visible files
for path in /ui/../ctl.db /ui/../outside.txt /ui/%2e%2e/outside.txt /ui/%2E%2E/%2e%2e/etc/passwd \
    /ui/sub/../../outside.txt /ui/sub/%2e%2e/%2e%2e/outside.txt /ui//etc/passwd /ui/passwd \
    /ui/etc/passwd /ui/sub/out.txt /ui/.hidden /ui/%2ehidden /ui/./app.js /ui/sub//style.css \
    /ui/sub /ui/fifo /ui/big.js "/ui/..%2foutside.txt" /ui/app.js/; do
    s=$(get GET "$path")
    if { [ "$s" = 403 ] || [ "$s" = 404 ]; } && problem "$s" &&
        ! grep -q -e 'root:' -e 'outside-the-folder' -e 'secret-of-the-folder' -e 'SQLite format' "$tmp/out"; then
        :
    else
        fail "GET $path: $s $(head -c 200 "$tmp/out")"
    fi
done
pass "every way out of the folder is refused (403 or 404), never its content"
s=$(get GET /ui/passwd); check '[ "$s" = 403 ]' "a symbolic link to /etc/passwd: 403"
s=$(get GET /ui/big.js); check '[ "$s" = 403 ] && problem 403' "a file over 8 MiB: 403"
s=$(get GET /ui/../ctl.db); check '[ "$s" = 403 ]' "/ui/../ctl.db: 403"

# methods
for m in POST PUT DELETE PATCH; do
    s=$(get "$m" /)
    [ "$s" = 405 ] && problem 405 && [ "$(header Allow)" = "GET, HEAD" ] || fail "$m /: $s"
    s=$(get "$m" /ui/app.js tok-admin-0000000000001)
    [ "$s" = 405 ] && problem 405 || fail "$m /ui/app.js: $s"
done
pass "POST, PUT, DELETE, PATCH on / and /ui/: 405 with Allow"
s=$(curl -s -o "$tmp/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary '{}' "$base/")
check '[ "$s" = 405 ]' "POST / with a body: 405"

# whoami: each token's holder and role
s=$(get GET /api/v1/whoami tok-reader-000000000001)
check '[ "$s" = 200 ] && [ "$(json "d[\"name\"], d[\"role\"], len(d)")" = "alice reader 2" ]' "whoami as a reader: alice, reader"
s=$(get GET /api/v1/whoami tok-operator-0000000001)
check '[ "$s" = 200 ] && [ "$(json "d[\"name\"], d[\"role\"]")" = "bob operator" ]' "whoami as an operator: bob, operator"
s=$(get GET /api/v1/whoami tok-admin-0000000000001)
check '[ "$s" = 200 ] && [ "$(json "d[\"name\"], d[\"role\"]")" = "root admin" ]' "whoami as an admin: root, admin"
s=$(get GET /api/v1/whoami tok-admin-0000000000002)
check '[ "$s" = 401 ] && problem 401 && [ "$(header WWW-Authenticate)" = Bearer ]' "whoami with a bad token: 401"
s=$(get GET /api/v1/whoami)
check '[ "$s" = 401 ] && problem 401' "whoami without a token: 401"
s=$(get POST /api/v1/whoami tok-admin-0000000000001)
check '[ "$s" = 405 ] && problem 405' "POST whoami: 405"

# probers: never seen, then seen after one request
s=$(get GET /api/v1/probers tok-reader-000000000001)
check '[ "$s" = 200 ] && [ "$(json "d[\"total\"], [(p[\"name\"], p[\"last_seen\"], p[\"requests\"]) for p in d[\"items\"]]")" = "3 [('"'"'prober1'"'"', None, 0), ('"'"'loc1'"'"', None, 0), ('"'"'prober2'"'"', None, 0)]" ]' "probers: the prober and localizer tokens, never seen"
s=$(get GET /api/v1/probers); check '[ "$s" = 401 ] && problem 401' "probers without a token: 401"
t0=$(date -u +%s)
s=$(get GET /api/v1/fabric tok-prober-000000000001)
check '[ "$s" = 200 ]' "prober1 reads the fabric"
s=$(get GET /api/v1/probers tok-agent-0000000000001)
seen_now() {
    python3 - "$tmp/out" "$t0" <<'PY'
import datetime, json, sys
d = json.load(open(sys.argv[1]))
p1, _, p2 = d["items"]
seen = datetime.datetime.strptime(p1["last_seen"], "%Y-%m-%dT%H:%M:%S.%fZ")
seen = seen.replace(tzinfo=datetime.timezone.utc).timestamp()
ok = p1["name"] == "prober1" and p1["requests"] >= 1 and abs(seen - int(sys.argv[2])) < 30
ok = ok and p2["last_seen"] is None and p2["requests"] == 0
sys.exit(0 if ok else 1)
PY
}
check '[ "$s" = 200 ] && seen_now' "probers: prober1 last seen now (RFC 3339 UTC), requests >= 1; prober2 still never"
s=$(get GET /api/v1/probers tok-prober-000000000001)
check '[ "$s" = 200 ] && [ "$(json "d[\"items\"][0][\"requests\"]")" -ge 2 ]' "each request counts (a prober asking counts itself)"
s=$(get POST /api/v1/probers tok-admin-0000000000001)
check '[ "$s" = 405 ] && problem 405' "POST probers: 405"

# mrc-probe localize with a controller: its heartbeat shows it alive with nothing to change
echo tok-prober-000000000002 >"$tmp/prober2.token"
"$bin/mrc-probe" localize --topology "$topo" --listen 127.0.0.1:0 --open --controller "$base" \
    --token-file "$tmp/prober2.token" >"$tmp/localize.log" 2>&1 &
lpid=$!
n=0
for _ in $(seq 160); do
    get GET /api/v1/probers tok-reader-000000000001 >/dev/null
    n=$(json 'd["items"][2]["requests"]')
    [ "$n" -ge 2 ] && break
    sleep 0.05
done
check '[ "$n" -ge 2 ] && [ "$(json "d[\"items\"][2][\"last_seen\"] is not None")" = True ]' "the localizer's heartbeat: prober2 seen at once and again 5 s later"
kill -TERM "$lpid"
wait "$lpid" || true
lpid=
check '! grep -q heartbeat "$tmp/localize.log"' "a heartbeat that is answered logs nothing"
stop

# --web '': no dashboard, the API as before
start --web ''
s=$(get GET /); check '[ "$s" = 404 ] && problem 404' "--web '': / is 404"
s=$(get GET /ui/app.js); check '[ "$s" = 404 ] && problem 404' "--web '': /ui/app.js is 404"
s=$(get GET /api/v1/whoami tok-reader-000000000001); check '[ "$s" = 200 ]' "--web '': the API still answers"
stop

# web = DIR in --config; and the default is share/mrcfab/web beside the program's bin folder
mkdir -p "$tmp/web2"
echo '<p>two</p>' >"$tmp/web2/index.html"
echo "web = $tmp/web2" >"$tmp/ctl.conf"
start --config "$tmp/ctl.conf"
s=$(get GET /); check '[ "$s" = 200 ] && cmp -s "$tmp/out" "$tmp/web2/index.html"' "web = DIR in --config"
stop
start
s=$(get GET /api/v1/config tok-reader-000000000001)
check '[ "$(json "d[\"web\"]")" = "$(cd "$bin/.." && pwd)/share/mrcfab/web" ] && [ "$(cd "$bin/../share/mrcfab/web" && pwd -P)" = "$root/web" ]' \
    "the default --web is share/mrcfab/web beside bin/ (the build tree's links to the source's web/)"
stop

finish web
