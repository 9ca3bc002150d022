#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrcctl as the controller's client, against a live mrc-controller on loopback: deny ls/add/rm,
# drain and undrain round trips; health links, switch and path on the health of agents' reports
# (a T1 that drops, a NIC that loses); every --json output against schemas/mrcctl, the token's
# sources, and each way of failing: a refused role, no or a wrong token, an element, switch or
# host port not in the fabric, a bad time, a controller that is down, one that errs (5xx), one
# that never answers, and bad arguments (exit 2, one line pointing at the command's --help,
# nothing sent or changed); the controller's sentences in mrcctl's words (--force, --plane),
# and the common options before, between or after the command's words.
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
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
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
    # (health-links and health-path refer to health-link, health-switches to health-switch)
    case $schema in
    health-links.schema.json | health-path.schema.json)
        args+=(-r "$schemas/mrcctl/health-link.schema.json") ;;
    health-switches.schema.json) args+=(-r "$schemas/mrcctl/health-switch.schema.json") ;;
    esac
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
# an agent per host of the lab fabric (h0-h7): a T0-T1 link is blamed on two reporters
for h in 0 1 2 3 4 5 6 7; do
    printf 'tok-agent-h%s-0000000001 agent h%s\n' "$h" "$h" >>"$tmp/tokens"
done
# a token file may be a line of the tokens file, after comments
printf '# bob, the operator\n\n  tok-operator-0000000001 operator bob\n' >"$tmp/op.token"
printf 'tok-reader-000000000001\n' >"$tmp/reader.token"
printf 'tok-prober-000000000001\n' >"$tmp/prober.token"
: >"$tmp/empty.token"
topo=$root/deploy/topologies/lab.json

# --floor 0: the denylist's round trips here are about the client; the capacity floor's
# refusals are live.sh's. The log exists before the controller opens it: the loop below reads
# it at once, and a machine under load may start the controller later.
: >"$tmp/log"
"$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
    --listen 127.0.0.1:0 --floor 0 2>"$tmp/log" &
pid=$!
port=$(ctl_port "$tmp/log" "$pid") || exit 1
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
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: there is no denylist entry $id1; mrcctl deny ls lists them (HTTP 404)" ] && [ ! -s "$tmp/out" ]' "deny rm of an entry that is gone: exit 2, says where the entries are"

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
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: the reader role of '"'alice'"' may not run mrcctl deny add; it takes prober; give a token of that role or a higher one with --token-file FILE (HTTP 403)" ]' "a reader's add: exit 2, the message names the role and the command, not the API's method and path"
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
check '[ $rc = 2 ] && err_is "the controller takes no such token: give a valid one with --token-file FILE" && err_is "(HTTP 401)" && ! err_is "Authorization"' "a wrong token: exit 2 (HTTP 401), what to do in mrcctl's words"
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
check '[ $rc = 2 ] && err_is "a switch is denied whole: --scope must be both (or left out) (HTTP 422)"' "a scope that does not fit the element: exit 2, in the option's words"
op deny add p0-t1-0 --reason "x" --from tomorrow --to 2030-12-01T02:00:00Z
check '[ $rc = 2 ] && err_is "--from and --to must be RFC 3339 UTC" && err_is "(HTTP 400)"' "a time that is not RFC 3339: exit 2, naming --from and --to"
op drain p0-t1-0 --from 2030-12-01T04:00:00Z --to 2030-12-01T02:00:00Z
check '[ $rc = 2 ] && err_is "the window must end after it starts (HTTP 400)"' "a window that ends before it starts: exit 2"
check '[ "$(version)" = "$v" ]' "bad input changed nothing"

# 6. health links, switch and path: the reports of every host, where p0-t1-0 drops everything
# that crosses it and h5's plane-1 NIC loses what it sends; read with the reader's token
reader() { MRCFAB_TOKEN=tok-reader-000000000001 run "$@"; }
# jw EXPR: EXPR over the JSON in $tmp/out, lists and tuples as words
jw() {
    python3 -c "import json; d=json.load(open('$tmp/out'))
def w(v): return ' '.join(w(x) for x in v) if isinstance(v, (list, tuple)) else str(v)
print(w(($1,)))"
}
reader health switch p0-t1-0
check '[ $rc = 0 ] && grep -q "^p0-t1-0, plane 0: no_data; its links: 0 bad, 0 degraded, 0 ok, 4 no_data$" "$tmp/out"' "health switch before any report: no_data"
python3 - "$base" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def loses(s, d, p, j):
    if p == 0 and j == 0 and s // 2 != d // 2:  # p0-t1-0 (h0-h1 under T0 0 and so on)
        return True
    return p == 1 and s == 5                    # h5:1, sending
for s in range(8):
    evs = [{"peer": "h%d" % d, "ev": (p << 29) | (j << 18) | 5, "sent": 10000,
            "lost": 200 if loses(s, d, p, j) else 0}
           for d in range(8) if d != s for p in range(2) for j in range(2)]
    req = urllib.request.Request(base + "/api/v1/reports", method="POST",
                                 data=json.dumps({"host": "h%d" % s, "evs": evs}).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer tok-agent-h%d-0000000001" % s})
    assert urllib.request.urlopen(req).status == 202
PY
# table: the LINK column of a table's rows (after its header, before its last line)
table_links() { sed -n '/^LINK  /,$p' "$tmp/out" | sed '1d;$d' | awk '{print $1}'; }
reader --json health links --state bad
cp "$tmp/out" "$tmp/hl-bad.json"
bad_links=$(json '" ".join(i["link"] for i in d["items"])')
check '[ $rc = 0 ] && json "all(i[\"state\"] == \"bad\" for i in d[\"items\"]) and d[\"total\"] == len(d[\"items\"])" | grep -qx True && echo " $bad_links " | grep -q " h5:1 " && echo " $bad_links " | grep -q "~p0-t1-0 " && [ -z "$(echo "$bad_links" | tr " " "\n" | grep -v -e "^h5:1$" -e "~p0-t1-0$")" ]' "health links --state bad --json: h5:1 and links of p0-t1-0 only ($bad_links)"
check '[ "$(jw "[[i[\"up\"][\"state\"], i[\"down\"][\"state\"], i[\"up\"][\"lost\"], i[\"up\"][\"sent\"]] for i in d[\"items\"] if i[\"link\"] == \"h5:1\"]")" = "bad ok 2800 140000" ]' "h5:1 is bad up (sending), ok down"
reader health links --state bad
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^LINK  *PLANE  *STATE  *UP  *LOST/SENT  *LOSS  *DOWN  *LOST/SENT  *LOSS  *SOURCES  *LAST EVIDENCE  *NOTES$" && [ "$(table_links | tr "\n" " ")" = "$bad_links " ] && [ "$(tail -1 "$tmp/out")" = "$(echo $bad_links | wc -w) links" ]' "health links --state bad: the table, the same links"
check 'grep -q "^h5:1  *1  bad  *bad  *2800/140000  *2.000%  ok  *0/140000  *0.000%  *1/[0-9]  *20[0-9-]*T[0-9:.]*Z  *-$" "$tmp/out"' "health links: a row says each direction's state, counts, loss, reporters, last evidence"
reader --json health links --plane 1 --limit 1000
cp "$tmp/out" "$tmp/hl-plane.json"
check '[ $rc = 0 ] && [ "$(json "d[\"total\"], len(d[\"items\"]), all(i[\"plane\"] == 1 for i in d[\"items\"])")" = "16 16 True" ]' "health links --plane 1: the 16 links of plane 1"
reader --json health links --switch p0-t1-0
cp "$tmp/out" "$tmp/hl-switch.json"
check '[ $rc = 0 ] && [ "$(jw "sorted(i[\"link\"] for i in d[\"items\"])")" = "p0-t0-0~p0-t1-0 p0-t0-1~p0-t1-0 p0-t0-2~p0-t1-0 p0-t0-3~p0-t1-0" ]' "health links --switch: the switch's links"
reader --json health links --state bad --plane 1
check '[ $rc = 0 ] && [ "$(jw "[i[\"link\"] for i in d[\"items\"]]")" = "h5:1" ]' "health links: the filters combine"
# paging: the pages put together are the whole list; the footer says where the next starts
reader --json health links --limit 1000
all_links=$(jw '[i["link"] for i in d["items"]]')
all_total=$(json 'd["total"]')
paged=
for off in 0 10 20 30; do
    reader --json health links --offset $off --limit 10
    cp "$tmp/out" "$tmp/hl-page$off.json"
    paged="$paged $(jw '[i["link"] for i in d["items"]]')"
done
check '[ "$all_total" = 32 ] && [ "$(echo $all_links | wc -w)" = 32 ] && [ "$all_links" = "$(echo $paged)" ]' "health links --offset/--limit: the pages put together are the whole list (32)"
reader health links --offset 2 --limit 5
check '[ $rc = 0 ] && [ "$(table_links | wc -l)" = 5 ] && [ "$(tail -1 "$tmp/out")" = "links 3-7 of 32 (the next page: --offset 7)" ]' "health links: a page's footer"
reader health links --offset 40
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "no links from 40 on: 32 match" ]' "health links past the end"
reader health links --state degraded
cp "$tmp/out" "$tmp/hl-none.txt"
reader --json health links --state degraded
cp "$tmp/out" "$tmp/hl-none.json"
check '[ $rc = 0 ] && [ "$(json "d[\"total\"]")" = 0 ] && [ "$(cat "$tmp/hl-none.txt")" = "no link matches" ]' "health links with nothing to show"

reader health switch
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^SWITCH  *PLANE  *STATE  *LINKS OK  *DEGRADED  *BAD  *NO_DATA$" && [ "$(sed "1d;\$d" "$tmp/out" | wc -l)" = 12 ] && grep -q "^p0-t1-0  *0  bad  *[0-9]  *0  *[0-9]  *0$" "$tmp/out" && [ "$(tail -1 "$tmp/out")" = "12 switches" ]' "health switch: every switch, p0-t1-0 bad"
reader --json health switch
cp "$tmp/out" "$tmp/hs-all.json"
check '[ $rc = 0 ] && [ "$(jw "[i[\"switch\"] for i in d[\"items\"] if i[\"state\"] != \"ok\"]")" = "p0-t1-0" ]' "health switch --json: only p0-t1-0 is not ok"
reader --json health switch --plane 1
cp "$tmp/out" "$tmp/hs-plane.json"
check '[ $rc = 0 ] && [ "$(json "d[\"total\"], all(i[\"plane\"] == 1 for i in d[\"items\"])")" = "6 True" ]' "health switch --plane 1: its 6 switches"
reader health switch --state bad
check '[ $rc = 0 ] && [ "$(sed "1d;\$d" "$tmp/out" | awk "{print \$1}")" = p0-t1-0 ] && [ "$(tail -1 "$tmp/out")" = "1 switch" ]' "health switch --state bad"
reader --json health switch --offset 10 --limit 5
cp "$tmp/out" "$tmp/hs-page.json"
check '[ $rc = 0 ] && [ "$(jw "d[\"total\"], d[\"offset\"], [i[\"switch\"] for i in d[\"items\"]]")" = "12 10 p1-t1-0 p1-t1-1" ]' "health switch --offset/--limit"
reader health switch p0-t1-0
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^p0-t1-0, plane 0: bad; its links: [0-9] bad, 0 degraded, [0-9] ok, 0 no_data$" && [ "$(sed -n 2p "$tmp/out" | awk "{print \$1}")" = LINK ] && [ "$(sed "1,2d;\$d" "$tmp/out" | awk "{print \$1}" | sort | tr "\n" " ")" = "p0-t0-0~p0-t1-0 p0-t0-1~p0-t1-0 p0-t0-2~p0-t1-0 p0-t0-3~p0-t1-0 " ] && [ "$(tail -1 "$tmp/out")" = "4 links" ]' "health switch NAME: its state, then its links"
reader --json health switch p0-t1-0
cp "$tmp/out" "$tmp/hs-one.json"
check '[ $rc = 0 ] && [ "$(json "d[\"switch\"], d[\"plane\"], d[\"state\"], sum(d[\"links\"].values())")" = "p0-t1-0 0 bad 4" ]' "health switch NAME --json: the switch's health"
reader --json health switch p1-t0-2
check '[ $rc = 0 ] && [ "$(json "d[\"state\"], d[\"links\"][\"bad\"]")" = "ok 1" ]' "a switch with one bad link (h5:1) is itself ok"

reader health path h5:1 h0:1
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h5:1 -> h0:1: plane 1, 2 paths, 2 bad, 0 degraded" ] && grep -q "^PLANE  T1  *EV  *STATE  *HOPS$" "$tmp/out" && grep -q "^    1  p1-t1-0  0x20000000  bad  *h5:1 bad > p1-t0-2~p1-t1-0 ok > p1-t0-0~p1-t1-0 ok > h0:1 ok$" "$tmp/out" && grep -q "^    1  p1-t1-1  0x20040000  bad  *h5:1 bad > " "$tmp/out" && grep -q "^  h5:1 bad: up bad (2800/140000 lost, 2.000%), down ok (0/140000 lost, 0.000%)$" "$tmp/out"' "health path h5:1 h0:1: each EV hop by hop, the lossy link"
reader --json health path h5:1 h0:1
cp "$tmp/out" "$tmp/hp-port.json"
check '[ $rc = 0 ] && [ "$(jw "d[\"from\"], d[\"to\"], [(e[\"plane\"], e[\"t1\"], e[\"ev\"], e[\"state\"], len(e[\"hops\"])) for e in d[\"evs\"]]")" = "h5 h0 1 p1-t1-0 536870912 bad 4 1 p1-t1-1 537133056 bad 4" ]' "health path --json: the API's EVs of the ports' plane"
reader health path h0:0 h5:0
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h0:0 -> h5:0: plane 0, 2 paths, 1 bad, 0 degraded" ] && grep -Eq "^    0  p0-t1-0  0x00000000  bad  *h0:0 ok > p0-t0-0~p0-t1-0 (ok|bad) > p0-t0-2~p0-t1-0 (ok|bad) > h5:0 ok$" "$tmp/out" && grep -q "^    0  p0-t1-1  0x00040000  ok  " "$tmp/out"' "health path across the bad T1: one EV bad, the other ok"
reader --json health path h0:0 h1:0
cp "$tmp/out" "$tmp/hp-local.json"
check '[ $rc = 0 ] && [ "$(jw "[(e[\"plane\"], \"t1\" in e, [h[\"link\"] for h in e[\"hops\"]]) for e in d[\"evs\"]]")" = "0 False h0:0 h1:0" ]' "health path under one T0: no T1, two hops"
reader health path h0:0 h1:0
check '[ $rc = 0 ] && grep -q "^    0  -   -  *ok  *h0:0 ok > h1:0 ok$" "$tmp/out"' "health path under one T0: the table"
reader --json health path h5 h0
cp "$tmp/out" "$tmp/hp-hosts.json"
check '[ $rc = 0 ] && [ "$(jw "sorted(e[\"plane\"] for e in d[\"evs\"])")" = "0 0 1 1" ]' "health path of two hosts: every plane"

# health: the faults
for a in "health switch p9-t1-0" "health links --switch p9-t1-0"; do
    # shellcheck disable=SC2086
    reader $a
    check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: no switch is called '"'p9-t1-0'"' (HTTP 404)" ] && [ ! -s "$tmp/out" ]' "$a: exit 2, the controller's sentence"
done
reader --json health switch p9-t1-0
cp "$tmp/out" "$tmp/e-hs404.json"
check '[ $rc = 2 ] && [ "$(json "d[\"error\"][\"code\"]")" = 2 ]' "an unknown switch with --json: an error document"
reader health links --plane 9
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: --plane must be a whole number from 0 to 1, not '"'9'"' (HTTP 400)" ]' "a plane the fabric does not have: exit 2, --plane (not the query argument)"
reader health path h99:1 h0:1
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: '"'h99'"' is no host of fabric '"'lab'"' (HTTP 404)" ] && [ ! -s "$tmp/out" ]' "health path of an unknown host: exit 2"
reader --json health path h0:5 h3:5
cp "$tmp/out" "$tmp/e-hp-port.json"
check '[ $rc = 2 ] && err_is "'"'h0:5'"' is no host port of fabric '"'lab'"': its ports are 0 to 1, one per plane" && [ "$(json "d[\"error\"][\"code\"]")" = 2 ]' "health path of a port the hosts do not have: exit 2"
reader health path h3:x h7:1
check '[ $rc = 2 ] && err_is "'"'h3:x'"' is not a host port: want HOST:PORT" && [ ! -s "$tmp/out" ]' "a bad host port: exit 2, nothing sent"
reader health path h3:1 h7:0
check '[ $rc = 2 ] && err_is "h3:1 and h7:0 are on different planes (1 and 0)"' "host ports of two planes: exit 2"
run health links
check '[ $rc = 2 ] && err_is "no token" && [ ! -s "$tmp/out" ]' "health with no token: exit 2"
MRCFAB_TOKEN=tok-admin-0000000000002 run health switch
check '[ $rc = 2 ] && err_is "(HTTP 401)"' "health with a wrong token: exit 2 (HTTP 401)"
MRCFAB_TOKEN=tok-agent-h3-0000000001 run health path h3:1 h7:1
check '[ $rc = 0 ]' "any role reads health (an agent's token)"

check_schema health-links.schema.json "health links --json" "$tmp/hl-bad.json" \
    "$tmp/hl-plane.json" "$tmp/hl-switch.json" "$tmp"/hl-page*.json "$tmp/hl-none.json"
check_schema health-switches.schema.json "health switch --json" "$tmp/hs-all.json" \
    "$tmp/hs-plane.json" "$tmp/hs-page.json"
check_schema health-switch.schema.json "health switch NAME --json" "$tmp/hs-one.json"
check_schema health-path.schema.json "health path --json" "$tmp/hp-port.json" \
    "$tmp/hp-local.json" "$tmp/hp-hosts.json"

# 7. bad arguments: exit 2 before anything is sent
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
    "health"
    "health frobnicate"
    "health links extra"
    "health links --bogus"
    "health links --state sideways"
    "health links --plane x"
    "health links --offset -1"
    "health links --limit"
    "health links --switch"
    "health switch p0-t1-0 p0-t1-1"
    "health switch p0-t1-0 --plane 0"
    "health switch --switch p0-t1-0"
    "health path"
    "health path h3:1"
    "health path h3:1 h7:1 h0:1"
    "health path h3:1 h7:0"
    "health path :1 h7:1"
    "health path h3: h7:1"
    "health path h3:1:2 h7:1"
    "health path h3:1 h7:1 --plane 1"
    "--controller ftp://127.0.0.1/ deny ls"
    "--controller http://127.0.0.1:99999 deny ls"
    "--controller http:// deny ls"
    "deny add --bogus"
    "deny add p0-t1-1 --reason x --force=maybe"
    "deny check"
    "deny check p0-t1-1 --force"
    "deny rm 1 --reason x"
    "drain p0-t1-1 --from 2030-12-01T02:00:00Z"
    "undrain --bogus"
    "health links --limit 5000"
    "health links --limit 0"
    "health switch --offset x"
    "deny --bogus ls"
    "deny ls --token-file"
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
op --json deny add --bogus
cp "$tmp/out" "$tmp/e-bogus.json"
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl deny add: unknown option '"'--bogus'"'; see mrcctl deny add --help" ] && [ "$(json "d[\"error\"][\"message\"]")" = "unknown option '"'--bogus'"'; see mrcctl deny add --help" ]' "an unknown option: one line naming it and the command's --help; with --json the same sentence in the document"
op drain p0-t1-1 --reason ""
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl drain: --reason must not be empty; see mrcctl drain --help" ]' "an empty --reason: exit 2, nothing sent"
op deny rm
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl deny rm: ID is missing; see mrcctl deny rm --help" ]' "a missing operand: one line naming it and the command's --help"
op health links --limit 5000
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl health links: --limit 5000 is out of range (1 to 1000); see mrcctl health links --help" ]' "--limit past the API's page: refused before anything is sent"
# --help and --version need neither a token nor a controller
for a in "deny ls" "deny add" "deny rm" "deny check" "drain" "undrain" "health links" \
    "health switch" "health path"; do
    # shellcheck disable=SC2086
    MRCFAB_CONTROLLER=http://127.0.0.1:1 run $a --help
    if [ $rc != 0 ] || ! head -1 "$tmp/out" | grep -q "^usage: mrcctl $a " || [ -s "$tmp/err" ]; then
        fail "mrcctl $a --help: exit $rc: $(head -2 "$tmp/out") $(cat "$tmp/err")"
    fi
done
pass "the controller's commands: --help with no token and no controller"

# the common options before the command, between its words, or after it: the same
op --json deny ls
cp "$tmp/out" "$tmp/ls-before.json"
run deny ls --json --token-file "$tmp/op.token"
cmp -s "$tmp/out" "$tmp/ls-before.json" && r1=0 || r1=1
run deny --json ls --token-file "$tmp/op.token" --controller "$base"
cmp -s "$tmp/out" "$tmp/ls-before.json" && r2=0 || r2=1
MRCFAB_CONTROLLER=http://127.0.0.1:1 run --controller http://127.0.0.1:2 health --json switch p0-t1-0 --token-file "$tmp/reader.token" --controller "$base"
check '[ $r1 = 0 ] && [ $r2 = 0 ] && [ $rc = 0 ] && [ "$(json "d[\"switch\"]")" = p0-t1-0 ]' "the common options after the command, or between its words, as before it (the last one wins)"
check_schema error.schema.json "the error documents" "$tmp/e403.json" "$tmp/e-notoken.json" \
    "$tmp/e422.json" "$tmp/e-args.json"

# 8. the controller's URL: the flag wins over the environment; a trailing slash is fine
MRCFAB_CONTROLLER=http://127.0.0.1:1 op --controller "$base/" deny ls
check '[ $rc = 0 ]' "--controller wins over \$MRCFAB_CONTROLLER"

# 9. a controller that errs (5xx), and one that never answers
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
op --controller "http://127.0.0.1:$(cat "$tmp/fake.port")" health switch p0-t1-0
check '[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "mrcctl: the store could not be read (HTTP 503)" ] && [ ! -s "$tmp/out" ]' "health: a 5xx problem, exit 1"
t0=$(date +%s)
op --controller "http://127.0.0.1:$(cat "$tmp/mute.port")" deny ls
t=$(($(date +%s) - t0))
check '[ $rc = 1 ] && err_is "timed out" && [ $t -ge 9 ] && [ $t -le 13 ]' "a controller that never answers: exit 1 after 10 s ($t s)"

# 10. the capacity floor: a second controller with the default floor (50 %) and no entries
: >"$tmp/log2"
"$bin/mrc-controller" --topology "$topo" --db "$tmp/c2.db" --tokens "$tmp/tokens" \
    --listen 127.0.0.1:0 2>"$tmp/log2" &
fakes+=($!)
disown
port2=$(ctl_port "$tmp/log2") || exit 1
floor=(--controller "http://127.0.0.1:$port2")
op "${floor[@]}" deny check p0-t1-0
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -qx "denying p0-t1-0: 48 of 56 host pairs lose path capacity, 0 cut off, 0 below the floor of 50 %; the least left: 75.0 %" && tail -1 "$tmp/out" | grep -q "would take it"' "deny check: the blast radius, exit 0"
op "${floor[@]}" --json deny check p0-t1-0 --scope both --from 2030-12-01T02:00:00Z --to 2030-12-01T04:00:00Z
cp "$tmp/out" "$tmp/check-ok.json"
check '[ $rc = 0 ] && [ "$(json "d[\"blast_radius\"][\"affected_pairs\"], d[\"refused\"], d[\"entry\"][\"window\"][\"start\"]")" = "48 False 2030-12-01T02:00:00.000Z" ]' "deny check --json, with a window"
check '[ "$(MRCFAB_CONTROLLER=http://127.0.0.1:$port2 version)" = 0 ]' "a check stores nothing"
op "${floor[@]}" drain p0-t0-0
check '[ $rc = 0 ]' "drain a T0 of plane 0: h0 and h1 keep half"
op "${floor[@]}" deny check p1-t0-0
check '[ $rc = 1 ] && grep -q "26 cut off, 26 below the floor of 50 %" "$tmp/out" && tail -1 "$tmp/out" | grep -q "would refuse it"' "deny check of the same T0 of plane 1: exit 1, it would be refused"
op "${floor[@]}" --json deny check p1-t0-0
cp "$tmp/out" "$tmp/check-refused.json"
op "${floor[@]}" deny add p1-t0-0 --reason "reboot"
check '[ $rc = 2 ] && err_is "would leave 26 host pairs below the capacity floor of 50 %" && err_is "an operator may add it with --force (HTTP 409)" && ! err_is "force=true" && [ "$(wc -l <"$tmp/err")" = 1 ]' "deny add below the floor: exit 2, the controller's sentence, saying to add --force"
op "${floor[@]}" --json drain p1-t0-0
cp "$tmp/out" "$tmp/e409.json"
check '[ $rc = 2 ] && conforms error.schema.json "$tmp/e409.json" && json "d[\"error\"][\"message\"]" | grep -q "with --force (HTTP 409)$"' "drain below the floor with --json: the error document says --force too"
run "${floor[@]}" --token-file "$tmp/prober.token" drain p1-t0-0 --force
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: the prober role of '"'prober1'"' may not run mrcctl drain --force; it takes operator; give a token of that role or a higher one with --token-file FILE (HTTP 403)" ]' "a prober's drain --force: exit 2, --force takes an operator"
op "${floor[@]}" drain p1-t0-0 --force
check '[ $rc = 0 ] && grep -q "^added denylist entry [0-9]*: p1-t0-0, scope both, active now, by bob: drain$" "$tmp/out"' "drain --force: added"
run "${floor[@]}" --token-file "$tmp/reader.token" deny check p0-t1-1
check '[ $rc = 2 ] && err_is "(HTTP 403)"' "a reader may not check (it would add)"
check_schema deny-check.schema.json "deny check --json" "$tmp/check-ok.json" "$tmp/check-refused.json"

# 11. a controller that is down
kill -TERM "$pid"
wait "$pid" || true
pid=
op deny ls
check '[ $rc = 1 ] && err_is "cannot reach the controller" && err_is "Connection refused" && [ ! -s "$tmp/out" ]' "the controller down: exit 1"
op --json drain p0-t1-0
cp "$tmp/out" "$tmp/e-down.json"
check '[ $rc = 1 ] && conforms error.schema.json "$tmp/e-down.json" && [ "$(json "d[\"error\"][\"code\"]")" = 1 ]' "the controller down, --json: exit 1, an error document"
op --json health path h3:1 h7:1
cp "$tmp/out" "$tmp/e-down2.json"
check '[ $rc = 1 ] && err_is "cannot reach the controller" && conforms error.schema.json "$tmp/e-down2.json"' "health with the controller down: exit 1, an error document"
MRCFAB_CONTROLLER=http://no-such-controller.invalid:8080 op undrain p0-t1-0
check '[ $rc = 1 ] && err_is "cannot resolve"' "a controller name that does not resolve: exit 1"

finish mrcctl_client
