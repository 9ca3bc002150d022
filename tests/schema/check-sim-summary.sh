#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks schemas/sim-summary.schema.json: it compiles, accepts what mrc-sim writes and rejects
# what it must not write.
#
# Usage: tests/schema/check-sim-summary.sh
#
# Passes when the schema compiles under draft 2020-12 in strict mode; every
# tests/unit/sim/data/out/*/summary.json is valid (each is the output of sim_out_write for
# the results the unit test sim.out builds, which asserts that it still is); and every
# tests/unit/sim/data/out/bad/*.json is invalid. Prints one PASS or FAIL line per check;
# exits 1 on any FAIL.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
schema=$root/schemas/sim-summary.schema.json
data=$root/tests/unit/sim/data/out
failures=0

pass() { printf 'PASS %s\n' "$*"; }
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}

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

if ajv compile -s "$schema" >"$log" 2>&1 && ! grep -q 'strict mode' "$log"; then
    pass "schema compiles (draft 2020-12, strict)"
else
    fail "schema does not compile cleanly:"
    sed 's/^/    /' "$log"
fi

shopt -s nullglob
good=("$data"/*/summary.json)
bad=("$data"/bad/*.json)
if ((${#good[@]} == 0 || ${#bad[@]} == 0)); then
    fail "no summaries found under ${data#"$root"/}"
fi

# One ajv run for all files (npx costs half a second a call); its verdict lines are
# "FILE valid" on stdout and "FILE invalid" on stderr.
args=()
for f in "${good[@]}" "${bad[@]}"; do
    args+=(-d "$f")
done
ajv validate -s "$schema" "${args[@]}" --errors=line >"$tmpdir/out" 2>"$tmpdir/err" || true

for f in "${good[@]}"; do
    rel=${f#"$root"/}
    if grep -Fxq "$f valid" "$tmpdir/out"; then
        pass "valid: $rel"
    else
        fail "should be valid: $rel"
        ajv validate -s "$schema" -d "$f" --errors=text 2>&1 | sed 's/^/    /' || true
    fi
done
for f in "${bad[@]}"; do
    rel=${f#"$root"/}
    if grep -Fxq "$f invalid" "$tmpdir/err"; then
        pass "invalid: $rel"
    else
        fail "should be invalid: $rel"
    fi
done

if ((failures > 0)); then
    printf '%d check(s) failed\n' "$failures"
    exit 1
fi
printf 'all checks passed\n'
