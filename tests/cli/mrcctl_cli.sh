#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrcctl end to end: bad topologies (exit 2, JSON path, nothing written), every --json output
# against its schema, renders accepted by their consumers, paths, install in a namespace; the
# command line of every command (--help, --version, an unknown option, a missing argument, the
# common options before and after the command, the exit statuses), the topo lists' header and
# --json, and the bash completion (deploy/bash-completion/mrcctl).
set -euo pipefail

bin=${1:?usage: mrcctl_cli.sh BINDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
schemas=$root/schemas
lab=$root/deploy/topologies/lab.json
tmp=$(mktemp -d)
netns=""
cleanup() {
    rm -rf "$tmp"
    if [ -n "$netns" ]; then ip netns del "$netns" 2>/dev/null || true; fi
}
trap cleanup EXIT
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
mrcctl() { "$bin/mrcctl" "$@"; }

# the validators pinned by tests/schema
if [[ ! -x $root/tests/schema/node_modules/.bin/ajv ]]; then
    (cd "$root/tests/schema" && npm ci --no-audit --no-fund --loglevel=error)
fi
# conforms SCHEMA FILE...: every file is valid against schemas/SCHEMA (one ajv run)
conforms() {
    local schema=$1 args=() f
    shift
    for f in "$@"; do args+=(-d "$f"); done
    (cd "$root/tests/schema" &&
        npx --no-install ajv validate --spec=draft2020 -c ajv-formats --strict=false \
            -s "$schemas/$schema" "${args[@]}" --errors=text) >"$tmp/ajv.log" 2>&1
}

# 1. bad input: one clear error with the JSON path, exit status 2, nothing written
while IFS=$'\t' read -r file path msg; do
    case $file in '#'* | '') continue ;; esac
    f=$here/bad/$file
    set +e
    mrcctl topo validate "$f" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    mrcctl --json topo validate "$f" >"$tmp/v.json" 2>/dev/null
    mrcctl topo expand "$f" --out "$tmp/expanded.json" >/dev/null 2>&1
    rc_expand=$?
    mrcctl -t "$f" routes render --all --format sonic --out "$tmp/render" >/dev/null 2>&1
    rc_render=$?
    set -e
    lines=$(wc -l <"$tmp/err")
    if [ $rc -ne 2 ] || [ $rc_expand -ne 2 ] || [ $rc_render -ne 2 ]; then
        fail "$file: exit status $rc/$rc_expand/$rc_render, want 2"
    elif ! grep -qF "mrcctl: $path: " "$tmp/err" || ! grep -qF "$msg" "$tmp/err"; then
        fail "$file: got '$(cat "$tmp/err")', want path $path and '$msg'"
    elif [ "$lines" -ne 1 ] || [ -s "$tmp/out" ]; then
        fail "$file: more than one line of error, or output on stdout"
    elif [ -e "$tmp/expanded.json" ] || [ -e "$tmp/render" ]; then
        fail "$file: a failed command wrote files"
    elif ! conforms mrcctl/validate.schema.json "$tmp/v.json" ||
        ! grep -qF "\"path\": \"$path\"" "$tmp/v.json"; then
        fail "$file: --json verdict does not conform or lacks the path"
    else
        pass "$file: exit 2 at $path, nothing written"
    fi
done <"$here/bad/EXPECT"

set +e
mrcctl topo validate "$tmp/none.json" >/dev/null 2>&1
[ $? -eq 2 ] && pass "a missing file is bad input (exit 2)" || fail "missing file exit status"
mrcctl -t "$lab" routes render --switch nosuch >/dev/null 2>&1
[ $? -eq 2 ] && pass "an unknown switch is bad input (exit 2)" || fail "unknown switch exit status"
mrcctl -t "$lab" --json path --from h0:0 --to h1:1 >"$tmp/e.json" 2>/dev/null
rc=$?
set -e
if [ $rc -eq 2 ] && conforms mrcctl/error.schema.json "$tmp/e.json"; then
    pass "ports of two planes: exit 2 and an error document"
else
    fail "cross-plane path: exit $rc or error document"
fi

# 2. every --json output against its schema
good=("$lab" "$root/tests/schema/good/parametric-overrides.json"
    "$root/tests/schema/good/explicit-missing.json" "$here/small.json")
i=0
for t in "${good[@]}"; do
    i=$((i + 1))
    mrcctl --json topo validate "$t" >"$tmp/validate$i.json"
    mrcctl -t "$t" --json topo cables >"$tmp/cables$i.json"
    mrcctl -t "$t" --json topo hosts >"$tmp/hosts$i.json"
    mrcctl -t "$t" --json topo switches >"$tmp/switches$i.json"
    mrcctl -t "$t" routes render --all --format json >"$tmp/routes$i.json"
    mrcctl -t "$t" routes render --switch p0-t0-0 >"$tmp/route$i.json"
    mrcctl -t "$t" routes render --all --format sonic >"$tmp/sonic$i.json"
    mrcctl -t "$t" routes render --switch p0-t1-0 --format sonic >"$tmp/sonic1-$i.json"
    mrcctl -t "$t" --json routes render --all --format frr --out "$tmp/frr$i" >"$tmp/written$i.json"
    mrcctl topo expand "$t" --out "$tmp/expanded$i.json"
done
check_schema() {
    local schema=$1 what=$2
    shift 2
    if conforms "$schema" "$@"; then
        pass "$what conforms to $schema"
    else
        fail "$what: $(head -c 600 "$tmp/ajv.log")"
    fi
}
check_schema mrcctl/validate.schema.json "topo validate --json" "$tmp"/validate*.json
check_schema mrcctl/cables.schema.json "topo cables --json" "$tmp"/cables*.json
check_schema mrcctl/hosts.schema.json "topo hosts --json" "$tmp"/hosts*.json
check_schema mrcctl/switches.schema.json "topo switches --json" "$tmp"/switches*.json
check_schema mrcctl/routes-json.schema.json "routes render json" "$tmp"/route*.json
check_schema mrcctl/routes-sonic.schema.json "routes render sonic" "$tmp"/sonic*.json
check_schema mrcctl/written.schema.json "routes render --out --json" "$tmp"/written*.json
check_schema topology.schema.json "topo expand" "$tmp"/expanded*.json

# the explicit form loads to the same fabric: same counts, same tables
for i in 1 2 3 4; do
    t=${good[$((i - 1))]}
    a=$(mrcctl --json topo validate "$t" | grep -v '"file"')
    b=$(mrcctl --json topo validate "$tmp/expanded$i.json" | grep -v '"file"')
    r1=$(mrcctl -t "$t" routes render --all --format iproute2)
    r2=$(mrcctl -t "$tmp/expanded$i.json" routes render --all --format iproute2)
    if [ "$a" = "$b" ] && [ "$r1" = "$r2" ]; then
        pass "$(basename "$t"): the expansion is the same fabric, with the same tables"
    else
        fail "$(basename "$t"): the expansion differs"
    fi
done

n=$(ls "$tmp/frr1" | wc -l)
[ "$n" -eq 12 ] && pass "render --all --out writes one file per switch" || fail "$n files"

# 3. paths: every EV's hops and outer address; T0-local paths; --ev
mrcctl -t "$lab" --json path --from h0:0 --to h3:0 >"$tmp/path1.json"
mrcctl -t "$lab" --json path --from h0:1 --to h1:1 >"$tmp/path2.json"
mrcctl -t "$lab" --json path --from h0:0 --to h7:0 --ev 0x0004abcd >"$tmp/path3.json"
check_schema mrcctl/path.schema.json "path --json" "$tmp"/path*.json
if grep -q '"fcbb:bb00:800:1001:801:1801::"' "$tmp/path1.json" &&
    grep -q '"fcbb:bb00:2800:3801::"' "$tmp/path2.json" && grep -q '"t1": null' "$tmp/path2.json" &&
    grep -q '"p0-t1-1"' "$tmp/path3.json" && grep -q '"ev": 306125' "$tmp/path3.json"; then
    pass "path: outer addresses, T0-local path and --ev as the addressing plan says"
else
    fail "path outputs: $(cat "$tmp/path1.json" "$tmp/path3.json")"
fi
out=$(mrcctl -t "$lab" path --from h0:0 --to h3:0)
case $out in
*"h0:0 > p0-t0-0 > p0-t1-1 > p0-t0-1 > h3:0"*) pass "path text shows the hops" ;;
*) fail "path text: $out" ;;
esac

# 4. consumers: ip -batch takes the iproute2 render; install agrees with it (needs root).
# No 'grep -q' after a pipe here: it exits at the first match, the writer gets SIGPIPE on its
# next line, and pipefail turns a match into a failure.
if [ "$(id -u)" -ne 0 ]; then
    printf 'SKIP install and ip -batch: need root\n'
else
    netns="mrcctl-cli-$$"
    ip netns add "$netns"
    for d in sr0 eth0 eth1 eth2 eth3; do
        ip -n "$netns" link add "$d" type veth peer name "${d}p"
        ip -n "$netns" link set "$d" up
    done
    mrcctl -t "$lab" routes render --switch p0-t1-1 --format iproute2 >"$tmp/t1.ip"
    if ip -n "$netns" -batch "$tmp/t1.ip" &&
        mrcctl -t "$lab" routes install --switch p0-t1-1 --netns "$netns" --dry-run 2>/dev/null |
        grep ": 0 to add, 0 to change, 0 to remove, 9 unchanged, 0 conflicts" >/dev/null; then
        pass "ip -batch accepts the iproute2 render, and install finds nothing to change"
    else
        fail "iproute2 render and install disagree"
    fi
    ip -n "$netns" -6 route flush proto 201
    mrcctl -t "$lab" --json routes install --switch p0-t1-1 --netns "$netns" --dry-run \
        >"$tmp/install1.json" 2>/dev/null
    mrcctl -t "$lab" --json routes install --switch p0-t1-1 --netns "$netns" \
        >"$tmp/install2.json" 2>/dev/null
    ip -n "$netns" -6 route add fcbb:bb00:1000::/48 dev eth1 proto static
    set +e
    mrcctl -t "$lab" --json routes install --switch p0-t1-1 --netns "$netns" \
        >"$tmp/install3.json" 2>/dev/null
    rc=$?
    set -e
    check_schema mrcctl/install.schema.json "routes install --json" "$tmp"/install*.json
    if grep -q '"add": 5' "$tmp/install2.json" && [ $rc -eq 0 ] &&
        grep -q '"conflict": 0' "$tmp/install3.json" &&
        ip -n "$netns" -6 route show proto static | grep 'fcbb:bb00:1000::/48' >/dev/null; then
        pass "install adds what is missing, leaves a foreign route of another prefix alone"
    else
        fail "install: $(cat "$tmp/install2.json" "$tmp/install3.json")"
    fi
    ip -n "$netns" -6 route del fcbb:bb00:800::/48 proto 201
    ip -n "$netns" -6 route add fcbb:bb00:800::/48 dev eth2 proto static
    set +e
    mrcctl -t "$lab" routes install --switch p0-t1-1 --netns "$netns" >"$tmp/i4" 2>&1
    rc=$?
    set -e
    if [ $rc -eq 1 ] && grep -q 'conflict' "$tmp/i4" &&
        ip -n "$netns" -6 route show proto static | grep 'fcbb:bb00:800::/48 dev eth2' >/dev/null; then
        pass "a foreign route holding a wanted prefix is a conflict, left alone (exit 1)"
    else
        fail "conflict: $(cat "$tmp/i4")"
    fi
    set +e
    mrcctl -t "$lab" routes install --switch p0-t1-1 --netns no-such-ns >/dev/null 2>&1
    rc=$?
    set -e
    [ $rc -eq 2 ] && pass "an unknown namespace is bad input" || fail "unknown netns: exit $rc"
fi

# 5. the command line: every command's --help (stdout, exit 0), --version, an unknown option
# and a missing argument (one line naming it and the command's --help, exit 2; with --json the
# same sentence in an error document on stdout)
# run ARGS...: mrcctl's stdout in $tmp/out, stderr in $tmp/err, exit status in $rc
rc=0
run() {
    set +e
    "$bin/mrcctl" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
}
json() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); print($1)"; }
unset MRCFAB_TOKEN MRCFAB_TOKEN_FILE MRCFAB_CONTROLLER MRCFAB_CACERT
export MRCFAB_TOPOLOGY=$lab
groups=("" topo routes deny health)
commands=("topo validate" "topo expand" "topo cables" "topo hosts" "topo switches"
    "routes render" "routes install" path "deny ls" "deny add" "deny rm" "deny check" drain
    undrain "health links" "health switch" "health path" "health summary" "health problems")
before=$failures
for a in "${groups[@]}" "${commands[@]}"; do
    p="mrcctl${a:+ $a}"
    # shellcheck disable=SC2086
    run $a --help
    if [ $rc != 0 ] || [ "$(head -1 "$tmp/out" | cut -c1-$((${#p} + 8)))" != "usage: $p " ] ||
        ! grep -qx "exit status: 0 done, 1 the system failed, 2 bad input" "$tmp/out" ||
        [ -s "$tmp/err" ]; then
        fail "$p --help: exit $rc: $(head -2 "$tmp/out") $(cat "$tmp/err")"
    fi
    if [ -n "$a" ]; then
        cp "$tmp/out" "$tmp/help.txt"
        # shellcheck disable=SC2086
        run help $a
        cmp -s "$tmp/out" "$tmp/help.txt" || fail "mrcctl help $a is not $p --help"
    fi
    # shellcheck disable=SC2086
    run $a --version
    if [ $rc != 0 ] || ! grep -Eqx "$p \(mrcfab\) [0-9]+\.[0-9]+\.[0-9]+ .*" "$tmp/out"; then
        fail "$p --version: exit $rc: $(cat "$tmp/out" "$tmp/err")"
    fi
    for bad in --bogus -x; do
        # shellcheck disable=SC2086
        run $a $bad
        want="$p: unknown option '$bad'; see $p --help"
        if [ $rc != 2 ] || [ "$(cat "$tmp/err")" != "$want" ] || [ -s "$tmp/out" ]; then
            fail "$p $bad: exit $rc, '$(cat "$tmp/err")', want 2 and '$want'"
        fi
    done
    # shellcheck disable=SC2086
    run $a --json --bogus
    ne=$((${ne:-0} + 1))
    cp "$tmp/out" "$tmp/e-bogus$ne.json" # checked against the schema below, in one ajv run
    if [ $rc != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
        [ "$p: $(json 'd["error"]["message"]')" != "$(cat "$tmp/err")" ]; then
        fail "$p --json --bogus: exit $rc, not the stderr line in an error document: $(cat "$tmp/out")"
    fi
    # shellcheck disable=SC2086
    run $a --token-file
    if [ $rc != 2 ] || [ "$(cat "$tmp/err")" != "$p: --token-file needs a value (FILE); see $p --help" ]; then
        fail "$p --token-file: exit $rc: $(cat "$tmp/err")"
    fi
done
conforms mrcctl/error.schema.json "$tmp"/e-bogus*.json || fail "the error documents: $(head -c 600 "$tmp/ajv.log")"
[ "$failures" = "$before" ] && pass "every command (${#groups[@]} groups, ${#commands[@]} commands): --help on stdout with exit 0 (also as mrcctl help), --version, an unknown option and an option's missing value in one line pointing at its --help (exit 2), with --json the same sentence in an error document"

# a missing or extra operand, a missing option, a bad value: ARGS|COMMAND|the line's message
before=$failures
while IFS='|' read -r a p want; do
    # shellcheck disable=SC2086
    run $a
    if [ $rc != 2 ] || [ "$(cat "$tmp/err")" != "$p: $want; see $p --help" ] || [ -s "$tmp/out" ]; then
        fail "mrcctl $a: exit $rc, '$(cat "$tmp/err")', want 2 and '$p: $want; see $p --help'"
    fi
done <<'CASES'
|mrcctl|COMMAND is missing
topo|mrcctl topo|COMMAND is missing
routes|mrcctl routes|COMMAND is missing
deny|mrcctl deny|COMMAND is missing
health|mrcctl health|COMMAND is missing
frobnicate|mrcctl|no command 'frobnicate'
topo frobnicate|mrcctl topo|no command 'frobnicate'
deny frobnicate|mrcctl deny|no command 'frobnicate'
topo validate a b|mrcctl topo validate|unexpected argument 'b'
topo cables a b|mrcctl topo cables|unexpected argument 'b'
topo expand --out|mrcctl topo expand|--out needs a value (F)
routes render|mrcctl routes render|give --switch NAME (one switch) or --all (every switch)
routes render --all --switch p0-t0-0|mrcctl routes render|give --switch NAME or --all, not both
routes render --all --format xml|mrcctl routes render|--format takes one of json,iproute2,sonic,frr, not 'xml'
routes install|mrcctl routes install|--switch NAME is required
path|mrcctl path|--from HOST:PORT is required
path --from h0:0|mrcctl path|--to HOST:PORT is required
path --from h0:0 --to h3:0 --ev 0xzz|mrcctl path|--ev 0xzz is not an EV (a 32-bit number, decimal or 0x hex)
deny ls x|mrcctl deny ls|unexpected argument 'x'
deny add|mrcctl deny add|--reason TEXT is required
deny add --reason x|mrcctl deny add|ELEMENT is missing
deny add p0-t1-0 --reason x --scope sideways|mrcctl deny add|--scope takes one of both,up,down, not 'sideways'
deny add p0-t1-0 --reason x --from 2030-12-01T02:00:00Z|mrcctl deny add|a window takes both --from TIME and --to TIME (RFC 3339 UTC)
deny rm|mrcctl deny rm|ID is missing
deny rm x|mrcctl deny rm|'x' is not an entry id (a whole number from 1; mrcctl deny ls lists them)
deny check|mrcctl deny check|ELEMENT is missing
drain|mrcctl drain|ELEMENT is missing
undrain|mrcctl undrain|ELEMENT is missing
undrain a b|mrcctl undrain|unexpected argument 'b'
health links x|mrcctl health links|unexpected argument 'x'
health links --offset -1|mrcctl health links|--offset takes a whole number, not '-1'
health switch a b|mrcctl health switch|unexpected argument 'b'
health switch p0-t1-0 --state bad|mrcctl health switch|a switch's NAME takes no filter (--state, --plane, --offset and --limit list the switches)
health path|mrcctl health path|HOST:PORT HOST:PORT are missing
health path h0:0|mrcctl health path|the second HOST:PORT is missing
CASES
[ "$failures" = "$before" ] && pass "a missing or extra operand, a missing option, a bad value: one line naming it and the command's --help, exit 2, nothing on stdout"

# the common options before the command, between its words and after it; the last one wins
mrcctl -t "$lab" --json topo switches >"$tmp/sw-a.json"
mrcctl topo switches -t "$lab" --json >"$tmp/sw-b.json"
mrcctl --json topo -t "$lab" switches >"$tmp/sw-c.json"
mrcctl -t /nonexistent.json topo switches --topology="$lab" --json >"$tmp/sw-d.json"
MRCFAB_TOPOLOGY=/nonexistent.json "$bin/mrcctl" topo switches --json -t "$lab" >"$tmp/sw-e.json"
check 'cmp -s "$tmp/sw-a.json" "$tmp/sw-b.json" && cmp -s "$tmp/sw-a.json" "$tmp/sw-c.json" && cmp -s "$tmp/sw-a.json" "$tmp/sw-d.json" && cmp -s "$tmp/sw-a.json" "$tmp/sw-e.json" && grep -q "\"p1-t1-1\"" "$tmp/sw-a.json"' "-t and --json before the command, between its words or after it: the same"
# the topology: -t, else $MRCFAB_TOPOLOGY, else the configuration folder's topology.json
run --help
deflt=$(tr '\n' ' ' <"$tmp/out" | tr -s ' ' | grep -o -- '--topology FILE the fabric.s topology file (default [^)]*)' | sed 's/.*(default //; s/)$//')
env -u MRCFAB_TOPOLOGY "$bin/mrcctl" --help >"$tmp/out"
deflt0=$(tr '\n' ' ' <"$tmp/out" | tr -s ' ' | grep -o -- '--topology FILE the fabric.s topology file (default [^)]*)' | sed 's/.*(default //; s/)$//')
set +e
env -u MRCFAB_TOPOLOGY "$bin/mrcctl" topo validate >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
check '[ "$deflt" = "$lab" ] && [[ $deflt0 == /*/mrcfab/topology.json ]] && [ $rc = 2 ] && grep -qF "$deflt0" "$tmp/err"' "the topology: \$MRCFAB_TOPOLOGY, else $deflt0 (--help says which, the fault names it)"
# exit 1: the system failed (a file that cannot be written)
run topo expand "$lab" --out /nonexistent/dir/x.json
check '[ $rc = 1 ] && grep -q "^mrcctl: cannot write /nonexistent/dir/x.json" "$tmp/err"' "a file that cannot be written: exit 1"
run topo validate "$lab"
check '[ $rc = 0 ] && [ ! -s "$tmp/err" ]' "done: exit 0"
run --help
check 'for c in "${commands[@]}"; do grep -q "^  $c  " "$tmp/out" || exit 1; done' "mrcctl --help lists every command"
run deny --help
check 'grep -q "^  ls  " "$tmp/out" && grep -q "^  add  " "$tmp/out" && grep -q "^  rm  " "$tmp/out" && grep -q "^  check  " "$tmp/out" && ! grep -q "^  topo" "$tmp/out"' "mrcctl deny --help lists deny's commands"

# 6. the topo lists: a header naming the columns (--no-header: scripts see rows only), columns
# aligned, and --json with an object per row
declare -A heads=(
    [switches]="NAME PLANE TIER INDEX USID SID-DEVICE PORTS"
    [hosts]="HOST PORT IFNAME ADDRESS USID-ADDRESS GATEWAY T0 T0-PORT T0-IF BLOCK"
    [cables]="KIND PLANE T0 T0-PORT T0-IF PEER PEER-PORT PEER-IF"
)
for l in switches hosts cables; do
    mrcctl -t "$lab" topo $l >"$tmp/$l.head"
    mrcctl -t "$lab" topo $l --no-header >"$tmp/$l.rows"
    mrcctl -t "$lab" topo $l --json >"$tmp/$l.json"
    ncols=$(wc -w <<<"${heads[$l]}")
    check '[ "$(head -1 "$tmp/$l.head" | tr -s " ")" = "${heads[$l]}" ] && [ "$(sed 1d "$tmp/$l.head" | tr -s " ")" = "$(tr -s " " <"$tmp/$l.rows")" ] && ! grep -q "^${heads[$l]%% *} " "$tmp/$l.rows" && [ -z "$(awk -v n="$ncols" "NF != n" "$tmp/$l.head")" ]' "topo $l: '${heads[$l]}' over the rows, each with $ncols columns; with --no-header the rows only"
    # the columns are aligned: each starts where its header's name does
    check 'python3 - "$tmp/$l.head" <<'"'"'PY'"'"'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
sys.exit(0 if all([m.start() for m in re.finditer(r"\S+", l)] == starts for l in lines) else 1)
PY' "topo $l: the columns are aligned under the header"
done
check '[ "$(awk "{print \$1}" "$tmp/switches.rows" | tr "\n" " ")" = "$(python3 -c "import json; print(\" \".join(s[\"name\"] for s in json.load(open(\"$tmp/switches.json\"))[\"switches\"]), end=\" \")")" ]' "topo switches --json: an object per row, in the same order"
check '[ "$(awk "{print \$1 \":\" \$2, \$4}" "$tmp/hosts.rows")" = "$(python3 -c "import json; [print(\"%s:%d %s\" % (h[\"host\"], h[\"port\"], h[\"address\"])) for h in json.load(open(\"$tmp/hosts.json\"))[\"host_ports\"]]")" ]' "topo hosts --json: an object per row (host, port, address)"
check '[ "$(awk "{print \$1, \$3, \$4, \$6}" "$tmp/cables.rows")" = "$(python3 -c "import json; [print(c[\"kind\"], c[\"t0\"][\"element\"], c[\"t0\"][\"port\"], (c.get(\"host\") or c.get(\"t1\"))[\"element\"]) for c in json.load(open(\"$tmp/cables.json\"))[\"cables\"]]")" ]' "topo cables --json: an object per row (kind, T0 and port, peer)"
check_schema mrcctl/switches.schema.json "topo switches --json" "$tmp/switches.json"
if command -v script >/dev/null; then
    script -qec "$bin/mrcctl -t $lab topo switches" /dev/null | tr -d '\r' >"$tmp/tty.out"
    script -qec "$bin/mrcctl -t $lab topo switches --no-header" /dev/null | tr -d '\r' >"$tmp/tty-no.out"
    check '[ "$(head -1 "$tmp/tty.out" | tr -s " ")" = "${heads[switches]}" ] && [ "$(head -1 "$tmp/tty-no.out" | awk "{print \$1}")" = p0-t0-0 ]' "topo switches on a terminal: the header; --no-header: none"
else
    printf 'SKIP the header on a terminal: no script(1)\n'
fi

# 7. the bash completion: sourced into a bash of its own, called as bash calls it
completion=$root/deploy/bash-completion/mrcctl
mkdir -p "$tmp/c/sub"
: >"$tmp/c/a.json"
: >"$tmp/c/b.txt"
: >"$tmp/c/token.a"
: >"$tmp/c/token.b"
# comp [-b BREAKS] WORDS...: COMPREPLY, sorted, one line, for the line WORDS (the last one being
# completed; COMP_WORDBREAKS the bash default unless -b)
comp() {
    local breaks=""
    if [ "$1" = -b ]; then
        breaks=$2
        shift 2
    fi
    bash --norc --noprofile -c '
        source "$1"
        [ -n "$2" ] && COMP_WORDBREAKS=$2
        shift 2
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        _mrcctl
        printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$breaks" "$bin/mrcctl" "$@" |
        sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}
# want WHAT GOT EXPECTED
want() {
    if [ "$2" = "$3" ]; then pass "completion: $1"; else fail "completion: $1: '$2', want '$3'"; fi
}
want "the commands" "$(comp "")" "cluster deny drain health help path routes topo undrain"
want "a command's prefix" "$(comp de)" "deny"
want "a group's commands" "$(comp deny "")" "add check ls rm"
want "a group's commands after the common options" "$(comp --json -t "$lab" health s)" "summary switch"
want "a command's options" "$(comp deny add --f)" "--force --from"
want "another command's options" "$(comp deny rm --f)" ""
deny_add_opts=$(mrcctl deny add --help | grep -o -- '^  \(-[a-z], \)\?--[a-z-]*' | sed 's/.*--/--/' | sort | tr '\n' ' ' | sed 's/ $//')
want "every option of deny add, as its --help lists them" "$(comp deny add --)" "$deny_add_opts"
want "the negated flags when asked for" "$(comp -t "$lab" topo switches --no)" "--no-header --no-json"
want "an ELEMENT: the topology's switches" "$(comp -t "$lab" drain p0-t1)" "p0-t1-0 p0-t1-1"
want "an ELEMENT: switches and host ports" "$(comp -t "$lab" deny add "" | wc -w)" "28"
want "an ELEMENT: a host's ports (bash cuts the word at ':')" "$(comp -t "$lab" deny add h3 : "")" "0 1"
want "an ELEMENT: a host's port, whole without ':' in COMP_WORDBREAKS" "$(comp -b ' ' -t "$lab" undrain h3:)" "h3:0 h3:1"
want "an ELEMENT: a T0's links to the T1s" "$(comp -t "$lab" deny check p0-t0-1~)" "p0-t0-1~p0-t1-0 p0-t0-1~p0-t1-1"
want "the topology named after the command" "$(comp drain --topology "$lab" p1-t1)" "p1-t1-0 p1-t1-1"
want "the topology named after the command, as -t" "$(comp undrain -t "$lab" p1-t1)" "p1-t1-0 p1-t1-1"
want "the topology as --topology=FILE" "$(comp --topology = "$lab" drain p1-t1)" "p1-t1-0 p1-t1-1"
want "an ELEMENT after the options" "$(comp -t "$lab" deny add --reason x --scope up h0 : "")" "0 1"
want "--switch NAME: switches" "$(comp routes render -t "$lab" --switch p1-t1)" "p1-t1-0 p1-t1-1"
want "health switch NAME" "$(comp -t "$lab" health switch p0-t0)" "p0-t0-0 p0-t0-1 p0-t0-2 p0-t0-3"
want "health path: host ports and hosts" "$(comp -t "$lab" health path h0:0 h7)" "h7 h7:0 h7:1"
want "path --from HOST:PORT" "$(comp -t "$lab" path --from h7 : "")" "0 1"
want "--format's values" "$(comp routes render --format "")" "frr iproute2 json sonic"
want "--format=VALUE" "$(comp routes render --format = s)" "sonic"
want "--state's values" "$(comp health links --state d)" "degraded"
want "--scope's values" "$(comp deny add x --scope "")" "both down up"
want "a FILE option: file names" "$(comp --token-file "$tmp/c/tok")" "$tmp/c/token.a $tmp/c/token.b"
want "topo's FILE: JSON files and folders" "$(comp topo validate "$tmp/c/")" "$tmp/c/a.json $tmp/c/sub"
want "--out DIR: folders" "$(comp routes render --all --out "$tmp/c/")" "$tmp/c/sub"
want "no operand where none is taken" "$(comp -t "$lab" deny ls "")" ""
want "help COMMAND" "$(comp help deny "")" "add check ls rm"

finish mrcctl_cli
