#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The role table (controller/ctl_roles.c) against docs/controller.md and a live controller:
# the docs' table is the code's (ctl-roles-dump --markdown), and every row of it, requested by
# every role (none, reader, agent, prober, localizer, operator, admin) over loopback with curl,
# is allowed (neither 401 nor 403) or refused (403; 401 without a token) exactly as the row
# says. The rows a role is held to its own things by are asked as its own (its host, a prober
# entry); denylist.sh tests the refusals of another's.
#
# Usage: tests/controller/roles.sh BINDIR
set -euo pipefail
bin=${1:?usage: roles.sh BINDIR}
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

# the docs' table is the code's
sed -n '/<!-- roles:begin/,/<!-- roles:end -->/p' "$root/docs/controller.md" | sed '1d;$d' >"$tmp/doc.md"
"$bin/ctl-roles-dump" --markdown >"$tmp/code.md"
check 'diff -u "$tmp/code.md" "$tmp/doc.md" >"$tmp/diff"' "docs/controller.md's role table is the code's$(cat "$tmp/diff" 2>/dev/null | head -20)"

ctl_tokens "$tmp/tokens"
mkdir -p "$tmp/web"
echo '<!doctype html><title>mrcfab</title>' >"$tmp/web/index.html"
echo 'export {};' >"$tmp/web/app.js"
log=$tmp/log
: >"$log"
"$bin/mrc-controller" --topology "$root/deploy/topologies/lab.json" --db "$tmp/c.db" \
    --tokens "$tmp/tokens" --listen 127.0.0.1:0 --max-wait 5 --floor 0 --web "$tmp/web" 2>"$log" &
pid=$!
port=$(served_port "$log" "$pid") || exit 1
base=http://127.0.0.1:$port
token() { awk -v r="$1" '$2 == r {print $1}' "$tmp/tokens"; }
name() { awk -v r="$1" '$2 == r {print $3}' "$tmp/tokens"; }

# req ROLE METHOD PATH [BODY]: the status
req() {
    local role=$1 method=$2 path=$3 body=${4-} a=()
    [ "$role" != none ] && a=(-H "Authorization: Bearer $(token "$role")")
    if [ "$method" = HEAD ]; then
        curl -s -o /dev/null -w '%{http_code}' -I "${a[@]}" "$base$path"
    elif [ -n "$body" ]; then
        curl -s -o "$tmp/out" -w '%{http_code}' -X "$method" "${a[@]}" \
            -H 'Content-Type: application/json' --data-binary "$body" "$base$path"
    else
        curl -s -o "$tmp/out" -w '%{http_code}' -X "$method" "${a[@]}" "$base$path"
    fi
}
n=0
# a prober entry, made anew for each DELETE: a window of its own so it is no other's twin
prober_entry() {
    n=$((n + 1))
    req prober POST /api/v1/denylist "$(printf '{"element": "p0-t0-0", "reason": "roles", "window": {"start": "2096-01-01T00:00:00Z", "end": "2096-01-01T01:00:%02dZ"}}' "$n")" >/dev/null
    python3 -c "import json; print(json.load(open('$tmp/out'))['id'])"
}
reg() { printf '{"host": "%s", "version": "0.1.0", "mode": "rdma", "ports": [{"port": 0, "up": true}, {"port": 1, "up": true}]}' "$1"; }

rows=0 pairs=0
while IFS=$'\t' read -r method pattern qual roles own kind; do
    rows=$((rows + 1))
    for role in none reader agent prober localizer operator admin; do
        who=$(name "$role")
        host=h0
        [ "$role" = none ] || { [[ ",$own," == *", $role,"* || ",$own," == *",$role,"* ]] && host=$who; }
        body=
        case "$method $pattern" in
        "GET /api/v1/switches/{name}"*) path=${pattern/\{name\}/p0-t1-1} ;;
        "GET /api/v1/hosts/{name}/profile") path=/api/v1/hosts/h3/profile ;;
        "GET /api/v1/agents/{host}") path=/api/v1/agents/h0 ;;
        "GET /api/v1/denylist/version") path="/api/v1/denylist/version?after=0&wait=0" ;;
        "GET /api/v1/denylist/{id}") path=/api/v1/denylist/$(prober_entry) ;;
        "DELETE /api/v1/denylist/{id}") path=/api/v1/denylist/$(prober_entry) ;;
        "GET /api/v1/health/path") path="/api/v1/health/path?from=h0&to=h5" ;;
        "GET /api/v1/health/history") path="/api/v1/health/history?element=h3:1" ;;
        "GET /api/v1/health/matrix") path="/api/v1/health/matrix?plane=0" ;;
        "GET /ui/*" | "HEAD /ui/*") path=/ui/app.js ;;
        "POST /api/v1/denylist")
            path=/api/v1/denylist
            [ "$qual" = - ] || path="/api/v1/denylist?$qual"
            body='{"element": "p0-t0-1", "reason": "roles"}' ;;
        "POST /api/v1/reports") path=$pattern body="{\"host\": \"$host\", \"evs\": [{\"peer\": \"h5\", \"ev\": 0, \"sent\": 10, \"lost\": 0}]}" ;;
        "POST /api/v1/agents") path=$pattern body=$(reg "$host") ;;
        "POST /api/v1/probes") path=$pattern body='{"results": [{"element": "p0-t0-0~p0-t1-1", "scope": "up", "sent": 10, "lost": 0}]}' ;;
        *) path=$pattern ;;
        esac
        s=$(req "$role" "$method" "$path" "$body")
        pairs=$((pairs + 1))
        if [[ ", $roles," == *", $role,"* ]]; then
            [ "$s" != 401 ] && [ "$s" != 403 ] || fail "$role $method $path${qual/#-/}: $s, the table allows it ($roles)"
        elif [ "$role" = none ]; then
            [ "$s" = 401 ] || fail "no token $method $path: $s, want 401"
        else
            [ "$s" = 403 ] || fail "$role $method $path ($qual): $s, want 403 (the table: $roles)"
        fi
    done
done < <("$bin/ctl-roles-dump" --tsv)
check '[ "$rows" -ge 30 ]' "every role against each of the table's $rows rows: $pairs requests as the table says"
kill -TERM "$pid"
wait "$pid" || true
pid=
finish roles
