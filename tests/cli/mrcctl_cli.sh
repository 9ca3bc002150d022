#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrcctl end to end: bad topologies (exit 2, JSON path, nothing written), every --json output
# against its schema, renders accepted by their consumers, paths, and install in a namespace.
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
failures=0
pass() { printf 'PASS %s\n' "$*"; }
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
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

if [ $failures -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all mrcctl checks passed"
