#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks schemas/topology.schema.json: it compiles, and accepts or rejects each topology file.
#
# Usage: tests/schema/check-topologies.sh [BUILD_DIR]
#
# Passes when the schema compiles under draft 2020-12; every deploy/topologies/*.json and
# tests/schema/good/*.json is valid; every tests/schema/bad/*.json is invalid; and, when
# BUILD_DIR/bin/mrcctl exists, the expansion (`mrcctl topo expand FILE`) of every good
# topology is valid. The bad files only hold faults the schema can see (unknown keys, types,
# ranges, names); faults that tie several values together are the loader's to find and are
# tested by the unit tests. Prints one PASS, FAIL or SKIP line per check; exits 1 on any FAIL.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
schema=$root/schemas/topology.schema.json
failures=0

pass() { printf 'PASS %s\n' "$*"; }
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
skip() { printf 'SKIP %s\n' "$*"; }

# The validators are pinned in package-lock.json; install them once, offline afterwards.
if [[ ! -x $here/node_modules/.bin/ajv ]]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

ajv() {
    (cd "$here" && npx --no-install ajv "$@" --spec=draft2020 -c ajv-formats)
}

log=$(mktemp)
tmpdir=$(mktemp -d)
trap 'rm -rf "$log" "$tmpdir"' EXIT

# validate FILE: runs ajv on one file; its errors go to $log for the FAIL report.
validate() {
    ajv validate -s "$schema" -d "$1" --errors=text >"$log" 2>&1
}

# verdicts FILE...: validates all files in one run (npx costs half a second a call) and
# stores each file's verdict, "valid" or "invalid", in the array |verdict|.
declare -A verdict
verdicts() {
    local args=() f
    for f in "$@"; do
        args+=(-d "$f")
    done
    ajv validate -s "$schema" "${args[@]}" --errors=line >"$tmpdir/out" 2>"$tmpdir/err" || true
    for f in "$@"; do
        if grep -Fxq "$f valid" "$tmpdir/out"; then
            verdict[$f]=valid
        elif grep -Fxq "$f invalid" "$tmpdir/err"; then
            verdict[$f]=invalid
        else
            verdict[$f]=none
        fi
    done
}

if ajv compile -s "$schema" >"$log" 2>&1 && ! grep -q 'strict mode' "$log"; then
    pass "schema compiles (draft 2020-12, strict)"
else
    fail "schema does not compile cleanly:"
    sed 's/^/    /' "$log"
fi

shopt -s nullglob
good=("$root"/deploy/topologies/*.json "$here"/good/*.json)
bad=("$here"/bad/*.json)
if ((${#good[@]} == 0 || ${#bad[@]} == 0)); then
    fail "no topology files found under deploy/topologies, tests/schema/good or tests/schema/bad"
fi

verdicts "${good[@]}" "${bad[@]}"
for f in "${good[@]}"; do
    rel=${f#"$root"/}
    if [[ ${verdict[$f]} == valid ]]; then
        pass "valid: $rel"
    else
        fail "should be valid: $rel"
        validate "$f" || true
        sed 's/^/    /' "$log"
    fi
done

for f in "${bad[@]}"; do
    rel=${f#"$root"/}
    if [[ ${verdict[$f]} == invalid ]]; then
        pass "invalid: $rel"
    else
        fail "should be invalid: $rel (ajv said: ${verdict[$f]})"
    fi
done

# The expansion is what `mrcctl topo expand` writes (lib/fabric/fab_expand.c): it must stay
# inside the schema. The SKIP below is temporary: mrcctl is being written and, once it is
# built in every configuration, a missing binary will be a FAIL instead.
mrcctl=$build/bin/mrcctl
if [[ -x $mrcctl ]]; then
    for f in "${good[@]}"; do
        rel=${f#"$root"/}
        out=$tmpdir/$(basename "$f" .json).expanded.json
        if ! "$mrcctl" topo expand "$f" >"$out" 2>"$log"; then
            fail "mrcctl topo expand $rel failed:"
            sed 's/^/    /' "$log"
        elif validate "$out"; then
            pass "valid expansion: $rel"
        else
            fail "expansion of $rel should be valid:"
            sed 's/^/    /' "$log"
        fi
    done
else
    skip "expansions: $mrcctl does not exist yet (temporary, until mrcctl topo expand lands)"
fi

if ((failures > 0)); then
    printf '%d check(s) failed\n' "$failures"
    exit 1
fi
printf 'all checks passed\n'
