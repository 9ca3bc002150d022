#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrcctl as the controller's client, against a live mrc-controller on loopback: deny ls/add/rm,
# drain and undrain round trips; health links, switch and path on the health of agents' reports
# (a T1 that drops, a NIC that loses), then beside them the prober's evidence, verdicts and entry
# and an operator's drain seeded through the API (each source's evidence, a state raised above the
# measured one, denied entries, the EVs an entry excludes), health summary and problems (order,
# pages, nothing wrong); every --json output against schemas/mrcctl, the token's
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
    # (every health schema but the summary's refers to health-link's parts, health-switches to
    # health-switch too)
    case $schema in
    health-links.schema.json | health-path.schema.json | health-switch.schema.json | \
        health-problems.schema.json)
        args+=(-r "$schemas/mrcctl/health-link.schema.json") ;;
    health-switches.schema.json)
        args+=(-r "$schemas/mrcctl/health-switch.schema.json"
            -r "$schemas/mrcctl/health-link.schema.json") ;;
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
tok-localizer-000000001 localizer loc1
tok-operator-0000000001 operator bob
tok-admin-0000000000001 admin root
TOKENS
# an agent per host of the lab fabric (h0-h7): a T0-T1 link is blamed on two reporters
for h in 0 1 2 3 4 5 6 7; do
    printf 'tok-agent-h%s-0000000001 agent h%s\n' "$h" "$h" >>"$tmp/tokens"
done
chmod 600 "$tmp/tokens" # a tokens file only its owner can read
# a token file may be a line of the tokens file, after comments
printf '# bob, the operator\n\n  tok-operator-0000000001 operator bob\n' >"$tmp/op.token"
printf 'tok-reader-000000000001\n' >"$tmp/reader.token"
printf 'tok-admin-0000000000001\n' >"$tmp/admin.token"
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
port=$(served_port "$tmp/log" "$pid") || exit 1
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
ad() { run --token-file "$tmp/admin.token" "$@"; }
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
op drain p0-t0-1
check '[ $rc = 0 ] && grep -q "^in force already: denylist entry $d1: p0-t0-1, scope both, active now, by bob: drain$" "$tmp/out"' "drain twice is one drain: the entry in force is shown, none added"
op drain p0-t0-1 --reason "drain for the optics swap" --from 2031-01-01T00:00:00Z --to 2031-01-01T01:00:00Z
check '[ $rc = 0 ] && grep -q "by bob: drain for the optics swap$" "$tmp/out"' "drain --reason already starting with 'drain' is kept"
d3=$(sed -n 's/^added denylist entry \([0-9]*\):.*/\1/p' "$tmp/out")
# another author's entry on the same element is an entry of its own (an identical one is the
# same element, scope, window and author)
ad deny add p0-t0-1 --reason "flapping"
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
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: the reader role of '"'alice'"' may not run mrcctl deny add; it takes prober, localizer, operator, admin; give a token of such a role with --token-file FILE (HTTP 403)" ]' "a reader's add: exit 2, the message names the role and the command, not the API's method and path"
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
cat >"$tmp/reports.py" <<'PY'
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
python3 "$tmp/reports.py" "$base"
# rows HEAD: the first column of a table's own rows (after its header line, which starts with
# HEAD, before its last line; not the rows of a row's directions or verdict, which are indented,
# nor the list of entries in force under it)
rows() { sed -n "/^$1  /,\$p" "$tmp/out" | sed '1d;$d' | sed '/^denylist entries /,$d' | grep -v '^ ' | awk '{print $1}'; }
table_links() { rows LINK; }
reader --json health links --state bad
cp "$tmp/out" "$tmp/hl-bad.json"
bad_links=$(json '" ".join(i["link"] for i in d["items"])')
check '[ $rc = 0 ] && json "all(i[\"state\"] == \"bad\" for i in d[\"items\"]) and d[\"total\"] == len(d[\"items\"])" | grep -qx True && echo " $bad_links " | grep -q " h5:1 " && echo " $bad_links " | grep -q "~p0-t1-0 " && [ -z "$(echo "$bad_links" | tr " " "\n" | grep -v -e "^h5:1$" -e "~p0-t1-0$")" ]' "health links --state bad --json: h5:1 and links of p0-t1-0 only ($bad_links)"
check '[ "$(jw "[[i[\"up\"][\"state\"], i[\"down\"][\"state\"], i[\"up\"][\"lost\"], i[\"up\"][\"sent\"]] for i in d[\"items\"] if i[\"link\"] == \"h5:1\"]")" = "bad ok 2800 140000" ]' "h5:1 is bad up (sending), ok down"
reader health links --state bad
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^LINK  *STATE  *AGENTS  *LOSS  *SRC  *PROBER  *LOSS  *DENIED  *NOTES$" && [ "$(table_links | tr "\n" " ")" = "$bad_links " ] && [ "$(tail -1 "$tmp/out")" = "$(echo $bad_links | wc -w) links" ]' "health links --state bad: the table, the same links"
check '[ "$(grep -A2 "^h5:1 " "$tmp/out" | sed "s/  */ /g; s/evidence [0-9]* s ago/evidence N s ago/")" = "h5:1 bad (evidence N s ago) -
 up bad 2800/140000 2.000% 1 - - -
 down ok 0/140000 0.000% 4 - - -" ]' "health links: a link's row (its state, the age of its evidence), then each direction's state beside the agents' lost/sent, loss and reporters (no prober here)"
# the operator's entry of section 2 on p0-t0-1 (flapping) is in force on its links
check 'grep -A2 "^p0-t0-1~p0-t1-0 " "$tmp/out" | grep -q "^  up  *bad  .*  #$keep1$" && grep -q "^p0-t0-1~p0-t1-0  *bad  *(evidence [0-9]* s ago)  *#$keep1$" "$tmp/out" && [ "$(sed -n "/^denylist entries in force on these links:$/,\$p" "$tmp/out" | sed "1d;\$d")" = "  #$keep1 (p0-t0-1, operator: flapping)" ]' "health links: DENIED has the ids of the entries in force on a link (its T0's too), each named in full under the table"
check '[ "$(awk "length > 100" "$tmp/out" | wc -l)" = 0 ]' "health links: no line of the table is over 100 columns"
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
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^SWITCH  *PLANE  *STATE  *MEASURED  *DENIED  *LINKS OK  *DEGRADED  *BAD  *NO_DATA  *VERDICT$" && [ "$(rows SWITCH | wc -l)" = 12 ] && grep -q "^p0-t1-0  *0  bad  *bad  *-  *[0-9]  *0  *[0-9]  *0  *-$" "$tmp/out" && grep -q "^p0-t0-1  *0  ok  *ok  *#$keep1  " "$tmp/out" && grep -qx "  #$keep1 (p0-t0-1, operator: flapping)" "$tmp/out" && [ "$(tail -1 "$tmp/out")" = "12 switches" ]' "health switch: every switch, p0-t1-0 bad, p0-t0-1 denied (the entry named under the table)"
reader --json health switch
cp "$tmp/out" "$tmp/hs-all.json"
check '[ $rc = 0 ] && [ "$(jw "[i[\"switch\"] for i in d[\"items\"] if i[\"state\"] != \"ok\"]")" = "p0-t1-0" ]' "health switch --json: only p0-t1-0 is not ok"
reader --json health switch --plane 1
cp "$tmp/out" "$tmp/hs-plane.json"
check '[ $rc = 0 ] && [ "$(json "d[\"total\"], all(i[\"plane\"] == 1 for i in d[\"items\"])")" = "6 True" ]' "health switch --plane 1: its 6 switches"
reader health switch --state bad
check '[ $rc = 0 ] && [ "$(rows SWITCH)" = p0-t1-0 ] && [ "$(tail -1 "$tmp/out")" = "1 switch" ]' "health switch --state bad"
reader --json health switch --offset 10 --limit 5
cp "$tmp/out" "$tmp/hs-page.json"
check '[ $rc = 0 ] && [ "$(jw "d[\"total\"], d[\"offset\"], [i[\"switch\"] for i in d[\"items\"]]")" = "12 10 p1-t1-0 p1-t1-1" ]' "health switch --offset/--limit"
reader health switch p0-t1-0
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^p0-t1-0, plane 0: bad; its links: [0-9] bad, 0 degraded, [0-9] ok, 0 no_data$" && [ "$(sed -n 2,4p "$tmp/out")" = "  measured: bad
  denied:   no entry in force
  verdict:  none" ] && [ "$(sed -n 5p "$tmp/out" | awk "{print \$1}")" = LINK ] && [ "$(table_links | sort | tr "\n" " ")" = "p0-t0-0~p0-t1-0 p0-t0-1~p0-t1-0 p0-t0-2~p0-t1-0 p0-t0-3~p0-t1-0 " ] && [ "$(tail -1 "$tmp/out")" = "4 links" ]' "health switch NAME: its state, measured state, entries and verdict, then its links"
reader --json health switch p0-t1-0
cp "$tmp/out" "$tmp/hs-one.json"
check '[ $rc = 0 ] && [ "$(json "d[\"switch\"], d[\"plane\"], d[\"state\"], sum(d[\"links\"].values())")" = "p0-t1-0 0 bad 4" ]' "health switch NAME --json: the switch's health"
reader --json health switch p1-t0-2
check '[ $rc = 0 ] && [ "$(json "d[\"state\"], d[\"links\"][\"bad\"]")" = "ok 1" ]' "a switch with one bad link (h5:1) is itself ok"

reader health path h5:1 h0:1
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h5:1 -> h0:1: plane 1, 2 paths, 2 bad, 0 degraded, 0 excluded" ] && grep -q "^PLANE  T1  *EV  *STATE  *FROM  *UP  *DOWN  *TO  *EXCLUDED BY$" "$tmp/out" && grep -q "^    1  p1-t1-0  0x20000000  bad  *bad  *ok  *ok  *ok  *-$" "$tmp/out" && grep -q "^    1  p1-t1-1  0x20040000  bad  *bad  *ok  *ok  *ok  *-$" "$tmp/out" && grep -qx "hops of plane 1: FROM h5:1, UP p1-t0-2~T1, DOWN p1-t0-0~T1, TO h0:1" "$tmp/out"' "health path h5:1 h0:1: each EV with each hop's state, and what the hops are"
check '[ "$(sed -n "/^lossy links on these paths:$/,\$p" "$tmp/out" | sed "1d" | sed "s/  */ /g; s/evidence [0-9]* s ago/evidence N s ago/")" = "LINK STATE AGENTS LOSS SRC PROBER LOSS DENIED NOTES
h5:1 bad (evidence N s ago) -
 up bad 2800/140000 2.000% 1 - - -
 down ok 0/140000 0.000% 4 - - -" ] && ! grep -q "^denylist entries" "$tmp/out"' "health path: the lossy link on them as health links shows it, nothing excluded"
reader --json health path h5:1 h0:1
cp "$tmp/out" "$tmp/hp-port.json"
check '[ $rc = 0 ] && [ "$(jw "d[\"from\"], d[\"to\"], [(e[\"plane\"], e[\"t1\"], e[\"ev\"], e[\"state\"], len(e[\"hops\"])) for e in d[\"evs\"]]")" = "h5 h0 1 p1-t1-0 536870912 bad 4 1 p1-t1-1 537133056 bad 4" ]' "health path --json: the API's EVs of the ports' plane"
reader health path h0:0 h5:0
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h0:0 -> h5:0: plane 0, 2 paths, 1 bad, 0 degraded, 0 excluded" ] && grep -Eq "^    0  p0-t1-0  0x00000000  bad  *ok  *(ok|bad)  *(ok|bad)  *ok  *-$" "$tmp/out" && grep -q "^    0  p0-t1-1  0x00040000  ok  *ok  *ok  *ok  *ok  *-$" "$tmp/out"' "health path across the bad T1: one EV bad, the other ok"
reader --json health path h0:0 h1:0
cp "$tmp/out" "$tmp/hp-local.json"
check '[ $rc = 0 ] && [ "$(jw "[(e[\"plane\"], \"t1\" in e, [h[\"link\"] for h in e[\"hops\"]]) for e in d[\"evs\"]]")" = "0 False h0:0 h1:0" ]' "health path under one T0: no T1, two hops"
reader health path h0:0 h1:0
check '[ $rc = 0 ] && grep -q "^    0  -  *-  *ok  *ok  *-  *-  *ok  *-$" "$tmp/out" && grep -qx "hops of plane 0: FROM h0:0, TO h1:0 (under one T0: no T1)" "$tmp/out"' "health path under one T0: the table"
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

# 6b. the prober's evidence beside the agents', its verdicts and a drain, seeded through the API:
# the agents' reports again (both sources in the window), a prober's entry on the down direction
# of p1-t0-2~p1-t1-1 (toward T0 2), the localizer's post (plane 1's coverage, that direction's own
# loss, a verdict naming it with the entry, one naming the T1 p1-t1-0 still adding) and an
# operator's drain of p0-t1-1; the entry of section 2 on p0-t0-1 (flapping) is still in force
python3 "$tmp/reports.py" "$base"
pe=$(python3 - "$base" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def post(path, body, token="tok-prober-000000000001"):
    req = urllib.request.Request(base + path, method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        return r.status, json.load(r)
link = "p1-t0-2~p1-t1-1"
s, e = post("/api/v1/denylist", {"element": link, "scope": "down",
                                 "reason": "prober: p1 D t0=2 t1=1 loss 3.1%"})
assert s == 201, s
s, _ = post("/api/v1/probes", {
    "window": 1764629000, "window_ms": 1000,
    "coverage": [{"plane": 1, "nic": 1408, "uplink": 1280, "hosts": 8}],
    "results": [{"element": link, "scope": "down", "sent": 1280, "lost": 40}],
    "verdicts": [
        {"component": "p1 D t0=2 t1=1", "kind": "link",
         "elements": [{"element": link, "scope": "down"}], "loss": 0.03125, "lost": 40,
         "sent": 1280, "horizon_s": 1, "llr": 60.5, "since": "2026-12-01T22:00:00Z",
         "state": "denied", "entries": [e["id"]]},
        {"component": "p1 T1 0", "kind": "switch", "elements": [{"element": "p1-t1-0"}],
         "loss": 0.004, "lost": 51, "sent": 12800, "horizon_s": 10, "llr": 20,
         "since": "2026-12-01T22:10:00.250Z", "state": "adding", "entries": [0]}]},
    "tok-localizer-000000001")  # the evidence is the localizer's to post
assert s == 202, s
print(e["id"])
PY
)
op --json drain p0-t1-1 --reason "optics swap"
dr=$(json 'd["id"]')
check '[ -n "$pe" ] && [ $rc = 0 ] && [ -n "$dr" ]' "seeded: the prober's entry #$pe, its evidence and verdicts, the drain #$dr"
# block LINE N: N lines of $tmp/out from the one starting with LINE, spaces squeezed and the
# evidence's age made N
block() { grep -A"$2" "^$1" "$tmp/out" | head -$(($2 + 1)) | sed 's/  */ /g; s/evidence [0-9]* s ago/evidence N s ago/'; }
reader health links --switch p1-t1-1
check '[ $rc = 0 ] && [ "$(block "p1-t0-2~p1-t1-1 " 3 | sed "2s|ok [0-9]*/[0-9]* |ok C |; 3s|bad 0/[0-9]* |bad 0/C |")" = "p1-t0-2~p1-t1-1 bad (evidence N s ago) #$pe
 up ok C 1.000% 2 0/1280 0.000% -
 down bad 0/C 0.000% 4 40/1280 3.125% #$pe
 verdict p1 D t0=2 t1=1 (link, denied): 3.125% lost (40/1280) in 1 s, since 2026-12-01T22:00:00Z" ]' "health links: the direction bad on the prober's own loss alone (40/1280) beside the agents' clean counts, its entry, the verdict naming it"
check '[ "$(sed -n "/^denylist entries in force on these links:$/,\$p" "$tmp/out" | sed "1d;\$d")" = "  #$pe (p1-t0-2~p1-t1-1 down, prober: prober: p1 D t0=2 t1=1 loss 3.1%)" ] && [ "$(tail -1 "$tmp/out")" = "4 links" ] && grep -q "^  up  *ok  *[0-9]*/[0-9]*  *0.000%  *2  *0/1280  *0.000%  *-$" "$tmp/out"' "health links: the entry named in full under the table; the other links have the prober's coverage (0/1280)"
check '[ "$(awk "length > 100" "$tmp/out" | wc -l)" = 0 ]' "health links with evidence of both sources and a verdict: no line over 100 columns"
reader --json health links --switch p1-t1-1
cp "$tmp/out" "$tmp/hl-prober.json"
check '[ "$(jw "[(i[\"state\"], i[\"measured\"], [e[\"id\"] for e in i[\"denied\"]], i[\"verdict\"][\"component\"], i[\"down\"][\"measured\"], i[\"down\"][\"denied\"], i[\"up\"][\"denied\"], i[\"down\"][\"prober\"][\"lost\"], i[\"down\"][\"prober\"][\"sent\"], i[\"down\"][\"prober\"][\"own\"], i[\"down\"][\"agents\"][\"lost\"]) for i in d[\"items\"] if i[\"link\"] == \"p1-t0-2~p1-t1-1\"]")" = "bad bad $pe p1 D t0=2 t1=1 bad True False 40 1280 True 0" ]' "health links --json: the API's members (measured, denied, verdict, each source's evidence)"
reader health links --switch p1-t1-0
check '[ $rc = 0 ] && [ "$(block "p1-t0-0~p1-t1-0 " 3 | sed "s|[0-9]*/[0-9]* [0-9.]*% [0-9]|C|")" = "p1-t0-0~p1-t1-0 degraded (evidence N s ago) -
 up degraded C 0/1280 0.000% - measured ok
 down degraded C 0/1280 0.000% - measured ok
 verdict p1 T1 0 (switch, adding): 0.400% lost (51/12800) in 10 s, since 2026-12-01T22:10:00Z" ]' "health links: a state raised by a verdict naming the link's T1 beside its measured state (ok), the verdict still adding"
reader --json health links --switch p1-t1-0
cp "$tmp/out" "$tmp/hl-raised.json"

reader health switch p1-t1-0
check '[ $rc = 0 ] && [ "$(sed -n "1p;3,4p" "$tmp/out")" = "p1-t1-0, plane 1: degraded; its links: 0 bad, 4 degraded, 0 ok, 0 no_data
  denied:   no entry in force
  verdict:  p1 T1 0 (switch, adding): 0.400% lost (51/12800) in 10 s, since 2026-12-01T22:10:00Z" ] && [ "$(table_links | wc -l)" = 4 ]' "health switch NAME: the verdict naming it"
sed -n 2p "$tmp/out" >"$tmp/measured.txt"
reader --json health switch p1-t1-0
cp "$tmp/out" "$tmp/hs-t1.json"
check 'python3 -c "import json, sys; d = json.load(open(sys.argv[1])); m = d[\"measured\"]; want = \"  measured: \" + m + (\" (the state is what a prober'"'"'s verdict or entry names it)\" if m != d[\"state\"] else \"\"); sys.exit(open(sys.argv[2]).read() != want + \"\\n\")" "$tmp/hs-t1.json" "$tmp/measured.txt"' "health switch NAME: its measured state as the API has it, said when the state differs ($(cat "$tmp/measured.txt"))"
reader health switch p0-t1-1
check '[ $rc = 0 ] && [ "$(sed -n 1,4p "$tmp/out")" = "p0-t1-1, plane 0: ok; its links: 0 bad, 0 degraded, 4 ok, 0 no_data
  measured: ok
  denied:   #$dr (p0-t1-1, operator: drain: optics swap)
  verdict:  none" ] && [ "$(grep -c "^p0-t0-[0-9]~p0-t1-1  *ok  .*  #$dr$" "$tmp/out")" = 3 ] && grep -q "^p0-t0-1~p0-t1-1  *ok  .*  #$keep1,#$dr$" "$tmp/out"' "health switch NAME: a drained switch ok and denied, its links denied (the one of p0-t0-1 by both entries)"
reader --json health switch p0-t1-1
cp "$tmp/out" "$tmp/hs-drained.json"
check '[ "$(jw "d[\"state\"], d[\"measured\"], [(e[\"id\"], e[\"source\"], e[\"reason\"]) for e in d[\"denied\"]], d[\"verdict\"]")" = "ok ok $dr operator drain: optics swap None" ]' "health switch NAME --json: denied and verdict as the API has them"
reader health switch --plane 1
check '[ $rc = 0 ] && grep -q "^p1-t1-0  *1  degraded  *[a-z_]*  *-  *0  *4  *0  *0  p1 T1 0 (adding)$" "$tmp/out" && grep -q "^p1-t1-1  *1  ok  *ok  *-  *3  *0  *1  *0  -$" "$tmp/out"' "health switch: the verdict beside the switch it names"
reader health switch --plane 0
check '[ $rc = 0 ] && grep -q "^p0-t1-1  *0  ok  *ok  *#$dr  " "$tmp/out" && [ "$(sed -n "/^denylist entries in force on these switches:$/,\$p" "$tmp/out" | sed "1d;\$d")" = "  #$keep1 (p0-t0-1, operator: flapping)
  #$dr (p0-t1-1, operator: drain: optics swap)" ]' "health switch: DENIED, each entry named under the table"
reader --json health switch --plane 0
cp "$tmp/out" "$tmp/hs-plane0.json"

reader health path h0:1 h5:1
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h0:1 -> h5:1: plane 1, 2 paths, 1 bad, 1 degraded, 1 excluded" ] && grep -q "^    1  p1-t1-0  0x20000000  degraded  *ok  *degraded  *degraded  *ok  *-$" "$tmp/out" && grep -q "^    1  p1-t1-1  0x20040000  bad  *ok  *ok  *bad  *ok  *#$pe (p1-t0-2~p1-t1-1 down, .*\.\.\.$" "$tmp/out" && [ "$(sed -n "/^denylist entries in force that exclude these paths:$/,\$p" "$tmp/out")" = "denylist entries in force that exclude these paths:
  #$pe (p1-t0-2~p1-t1-1 down, prober: prober: p1 D t0=2 t1=1 loss 3.1%): excludes 1 path" ]' "health path: the EV into T0 2 over the denied direction excluded by the prober's entry, named (in full under the table)"
check '[ "$(grep -v "^  verdict " "$tmp/out" | awk "length > 100" | wc -l)" = 0 ]' "health path: no line over 100 columns (but the verdicts')"
reader --json health path h0:1 h5:1
cp "$tmp/out" "$tmp/hp-prober.json"
check '[ "$(jw "[(e[\"t1\"], e[\"excluded\"], [x[\"id\"] for x in e[\"denied\"]] or \"none\") for e in d[\"evs\"]]")" = "p1-t1-0 False none p1-t1-1 True $pe" ]' "health path --json: excluded and the entries of each EV"
reader health path h5:1 h0:1
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h5:1 -> h0:1: plane 1, 2 paths, 2 bad, 0 degraded, 0 excluded" ] && ! grep -q "^denylist entries" "$tmp/out"' "health path the other way: it crosses the link up, so nothing is excluded"
reader health path h0:0 h5:0
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h0:0 -> h5:0: plane 0, 2 paths, 1 bad, 0 degraded, 1 excluded" ] && grep -q "^    0  p0-t1-0  0x00000000  bad  .*  -$" "$tmp/out" && grep -q "^    0  p0-t1-1  0x00040000  ok  *ok  *ok  *ok  *ok  *#$dr (p0-t1-1, operator: drain: optics swap)$" "$tmp/out"' "health path: the EV over the drained T1 excluded by the drain, named in full"
reader health path h2:0 h5:0
check '[ $rc = 0 ] && [ "$(head -1 "$tmp/out")" = "h2:0 -> h5:0: plane 0, 2 paths, 1 bad, 0 degraded, 2 excluded" ] && grep -q "^    0  p0-t1-0  .*  #$keep1 (p0-t0-1, operator: flapping)$" "$tmp/out" && grep -q "^    0  p0-t1-1  .*  #$keep1 (p0-t0-1, operator: flapping), #$dr (" "$tmp/out" && [ "$(sed -n "/^denylist entries in force that exclude these paths:$/,\$p" "$tmp/out" | sed 1d)" = "  #$keep1 (p0-t0-1, operator: flapping): excludes 2 paths
  #$dr (p0-t1-1, operator: drain: optics swap): excludes 1 path" ]' "health path from under the denied T0: every EV excluded, one by two entries, each counted"
reader --json health path h2:0 h5:0
cp "$tmp/out" "$tmp/hp-excl.json"
check '[ "$(jw "[(e[\"t1\"], e[\"excluded\"], sorted(x[\"id\"] for x in e[\"denied\"])) for e in d[\"evs\"]]")" = "p0-t1-0 True $keep1 p0-t1-1 True $keep1 $dr" ]' "health path --json: the entries that exclude each EV"

reader --json health summary
cp "$tmp/out" "$tmp/hsum.json"
check '[ $rc = 0 ] && [ "$(jw "[(p[\"plane\"], p[\"denied\"], p[\"links\"][\"bad\"] >= 1, p[\"bad\"] >= p[\"links\"][\"bad\"] + p[\"switches\"][\"bad\"]) for p in d[\"planes\"]]")" = "0 2 True True 1 1 True True" ]' "health summary --json: denied counts the elements an entry in force names (p0-t0-1, p0-t1-1; the link of plane 1), not the windowed entry"
reader health summary
python3 - "$tmp/hsum.json" >"$tmp/hsum.want" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = ["ok", "degraded", "bad", "no_data"]
print("PLANE BAD DEGRADED DENIED ELEMENTS OK DEGRADED BAD NO_DATA")
for p in d["planes"]:
    for k, (key, name) in enumerate([("links", "links"), ("host_ports", "host ports"), ("switches", "switches")]):
        head = " %d %d %d %d " % (p["plane"], p["bad"], p["degraded"], p["denied"]) if k == 0 else " "
        print(head + name + "".join(" %d" % p[key][s] for s in st))
n = len(d["planes"])
print("%d planes: %d bad, %d degraded, %d denied (version V)" % (n, sum(p["bad"] for p in d["planes"]), sum(p["degraded"] for p in d["planes"]), sum(p["denied"] for p in d["planes"])))
PY
check '[ $rc = 0 ] && [ "$(sed "s/  */ /g; s/(version h[0-9]*-d[0-9]*)/(version V)/" "$tmp/out")" = "$(cat "$tmp/hsum.want")" ] && grep -q "^PLANE  BAD  DEGRADED  DENIED  ELEMENTS  " "$tmp/out" && grep -q "^                              host ports  " "$tmp/out"' "health summary: each plane's bad, degraded and denied, then its links, host ports and switches by state, as the API counts them"

reader --json health problems --limit 1000
cp "$tmp/out" "$tmp/hpr-all.json"
check '[ $rc = 0 ] && python3 -c "import json, sys; d = json.load(open(sys.argv[1])); r = {\"bad\": 0, \"degraded\": 1}; k = [r.get(i[\"state\"], 2) for i in d[\"items\"]]; sys.exit(not (k == sorted(k) and d[\"total\"] == len(d[\"items\"]) and k[0] == 0 and all(i[\"denied\"] for i in d[\"items\"] if r.get(i[\"state\"], 2) == 2)))" "$tmp/hpr-all.json"' "health problems --json: bad first, then degraded, then denied only"
problems=$(jw '[i["element"] for i in d["items"]]')
ptotal=$(json 'd["total"]')
reader health problems --limit 1000
check '[ $rc = 0 ] && head -1 "$tmp/out" | grep -q "^ELEMENT  *KIND  *PLANE  *STATE  *MEASURED  *LOSS  *DENIED  *VERDICT$" && [ "$(rows ELEMENT | tr "\n" " ")" = "$problems " ] && [ "$(tail -1 "$tmp/out")" = "$ptotal problems" ]' "health problems: one line each, in the API's order ($ptotal)"
check 'grep -q "^p1-t0-2~p1-t1-1  *link  *1  bad  *bad  *[0-9.]*%  *#$pe  *p1 D t0=2 t1=1 (denied)$" "$tmp/out" && grep -q "^h5:1  *host_port  *1  bad  *bad  *[0-9.]*%  *-  *-$" "$tmp/out" && grep -q "^p1-t0-0~p1-t1-0  *link  *1  degraded  *ok  *[0-9.]*%  *-  *p1 T1 0 (adding)$" "$tmp/out" && grep -q "^p0-t1-0  *switch  *0  bad  *bad  *100% links  *-  *-$" "$tmp/out" && grep -q "^p0-t1-1  *switch  *0  ok  *ok  *0% links  *#$dr  *-$" "$tmp/out" && grep -q "^p0-t0-1  *switch  *0  ok  *ok  *[0-9]*% links  *#$keep1  *-$" "$tmp/out"' "health problems: element, kind, plane, state, measured, loss (a switch's share of links), denied and verdict"
check '[ "$(sed -n "/^denylist entries in force on these elements:$/,\$p" "$tmp/out" | sed "1d;\$d" | sort)" = "$(printf "  #%s (p0-t0-1, operator: flapping)\n  #%s (p0-t1-1, operator: drain: optics swap)\n  #%s (p1-t0-2~p1-t1-1 down, prober: prober: p1 D t0=2 t1=1 loss 3.1%%)\n" "$keep1" "$dr" "$pe" | sort)" ] && [ "$(awk "length > 100" "$tmp/out" | wc -l)" = 0 ]' "health problems: each entry in force named under the list; no line over 100 columns"
# paging: plane 1's pages put together are its whole list
reader --json health problems --plane 1 --limit 1000
p1=$(jw '[i["element"] for i in d["items"]]')
p1total=$(json 'd["total"]')
paged=
for off in 0 3 6 9 12; do
    reader --json health problems --plane 1 --offset $off --limit 3
    [ $off = 3 ] && cp "$tmp/out" "$tmp/hpr-page.json"
    paged="$paged $(jw '[i["element"] for i in d["items"]]')"
done
check '[ "$p1total" -ge 6 ] && [ "$p1total" -le 15 ] && [ "$p1" = "$(echo $paged)" ] && ! echo " $p1 " | grep -q " p0-"' "health problems --plane 1 --offset/--limit: the pages put together are plane 1's list ($p1total)"
reader health problems --plane 1 --offset 1 --limit 2
check '[ $rc = 0 ] && [ "$(rows ELEMENT | wc -l)" = 2 ] && [ "$(tail -1 "$tmp/out")" = "problems 2-3 of $p1total (the next page: --offset 3)" ]' "health problems: a page's footer"
reader health problems --offset 1000
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "no problems from 1000 on: $ptotal match" ]' "health problems past the end"
reader health problems --plane 9
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: --plane must be a whole number from 0 to 1, not '"'9'"' (HTTP 400)" ] && [ ! -s "$tmp/out" ]' "health problems of a plane the fabric lacks: exit 2, --plane"
reader --json health problems --plane 9
cp "$tmp/out" "$tmp/e-hpr.json"
check '[ $rc = 2 ] && conforms error.schema.json "$tmp/e-hpr.json"' "the same with --json: an error document"
v=$(version) # what the bad arguments below must leave as it is

check_schema health-links.schema.json "health links --json" "$tmp/hl-bad.json" \
    "$tmp/hl-plane.json" "$tmp/hl-switch.json" "$tmp"/hl-page*.json "$tmp/hl-none.json" \
    "$tmp/hl-prober.json" "$tmp/hl-raised.json"
check_schema health-switches.schema.json "health switch --json" "$tmp/hs-all.json" \
    "$tmp/hs-plane.json" "$tmp/hs-page.json" "$tmp/hs-plane0.json"
check_schema health-switch.schema.json "health switch NAME --json" "$tmp/hs-one.json" \
    "$tmp/hs-t1.json" "$tmp/hs-drained.json"
check_schema health-path.schema.json "health path --json" "$tmp/hp-port.json" \
    "$tmp/hp-local.json" "$tmp/hp-hosts.json" "$tmp/hp-prober.json" "$tmp/hp-excl.json"
check_schema health-summary.schema.json "health summary --json" "$tmp/hsum.json"
check_schema health-problems.schema.json "health problems --json" "$tmp/hpr-all.json" \
    "$tmp/hpr-page.json"
# the schemas can fail: a problem without its verdict, a direction without the prober's
# evidence, an EV's entry of no scope, a plane without its switches' counts
python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
def broken(src, dest, f):
    d = json.load(open(t + "/" + src))
    f(d)
    json.dump(d, open(t + "/" + dest, "w"))
broken("hpr-all.json", "bad-problems.json", lambda d: d["items"][0].pop("verdict"))
broken("hl-prober.json", "bad-links.json", lambda d: d["items"][0]["down"].pop("prober"))
broken("hp-excl.json", "bad-path.json", lambda d: d["evs"][0]["denied"][0].pop("scope"))
broken("hsum.json", "bad-summary.json", lambda d: d["planes"][1].pop("switches"))
PY
for b in problems:health-problems links:health-links path:health-path summary:health-summary; do
    if conforms "${b#*:}.schema.json" "$tmp/bad-${b%%:*}.json"; then
        fail "mrcctl/${b#*:}.schema.json takes a broken document (bad-${b%%:*}.json)"
    else
        pass "mrcctl/${b#*:}.schema.json refuses a broken document"
    fi
done

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
    "health summary extra"
    "health summary --plane 0"
    "health summary --state bad"
    "health problems extra"
    "health problems --state bad"
    "health problems --switch p0-t1-0"
    "health problems --plane x"
    "health problems --plane"
    "health problems --offset -1"
    "health problems --limit 0"
    "health problems --limit 1001"
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
i=0
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
    i=$((i + 1))
    # checked against the schema below, in one ajv run (ajv takes a file's format from its name)
    cp "$tmp/out" "$tmp/e-args$i.json"
    [ $rc = 2 ] || fail "mrcctl --json $a: exit $rc, want 2 and an error document: $(cat "$tmp/out")"
done
conforms error.schema.json "$tmp"/e-args*.json ||
    fail "mrcctl --json with bad arguments: not an error document (e-argsN.json, the Nth case): $(head -c 600 "$tmp/ajv.log")"
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
    "health switch" "health path" "health summary" "health problems"; do
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
    "$tmp/e422.json" "$tmp/e-args1.json"

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
for a in summary problems; do
    op --controller "http://127.0.0.1:$(cat "$tmp/fake.port")" --json health $a
    cp "$tmp/out" "$tmp/e-5xx-$a.json"
    check '[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "mrcctl: the store could not be read (HTTP 503)" ] && conforms error.schema.json "$tmp/e-5xx-$a.json"' "health $a: a 5xx problem, exit 1, an error document with --json"
done
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
port2=$(served_port "$tmp/log2") || exit 1
floor=(--controller "http://127.0.0.1:$port2")
# a fabric nobody has reported on, with nothing denied: no data anywhere, nothing wrong
reader "${floor[@]}" health problems
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "nothing is wrong: no element is bad, degraded or denied" ]' "health problems with nothing wrong: says so"
reader "${floor[@]}" health problems --plane 1
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "nothing is wrong in plane 1: no element is bad, degraded or denied" ]' "health problems --plane with nothing wrong"
reader "${floor[@]}" --json health problems
cp "$tmp/out" "$tmp/hpr-none.json"
check '[ $rc = 0 ] && [ "$(jw "d[\"total\"], d[\"offset\"], d[\"items\"]")" = "0 0 " ] && conforms health-problems.schema.json "$tmp/hpr-none.json"' "health problems --json with nothing wrong: an empty page, as its schema says"
reader "${floor[@]}" health summary
check '[ $rc = 0 ] && [ "$(sed -n 2p "$tmp/out" | sed "s/  */ /g")" = " 0 0 0 0 links 0 0 0 8" ] && [ "$(sed -n 4p "$tmp/out" | sed "s/  */ /g")" = " switches 0 0 0 6" ] && grep -q "^2 planes: 0 bad, 0 degraded, 0 denied (version h[0-9]*-d0)$" "$tmp/out"' "health summary of a fabric with no data"
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
check '[ $rc = 2 ] && [ "$(cat "$tmp/err")" = "mrcctl: the prober role of '"'prober1'"' may not add an entry with --force; it takes operator, admin (HTTP 403)" ]' "a prober's drain --force: exit 2, --force takes an operator"
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
op health summary
check '[ $rc = 1 ] && err_is "cannot reach the controller" && [ ! -s "$tmp/out" ]' "health summary with the controller down: exit 1"
op health problems --plane 0
check '[ $rc = 1 ] && err_is "cannot reach the controller" && [ ! -s "$tmp/out" ]' "health problems with the controller down: exit 1"
MRCFAB_CONTROLLER=http://no-such-controller.invalid:8080 op undrain p0-t1-0
check '[ $rc = 1 ] && err_is "cannot resolve"' "a controller name that does not resolve: exit 1"

finish mrcctl_client
