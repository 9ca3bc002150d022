#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks schemas/scenario.schema.json: it compiles, and accepts or rejects each scenario file.
#
# Usage: tests/schema/check-scenarios.sh
#
# Passes when the schema compiles under draft 2020-12 (with schemas/topology.schema.json, which
# it references for an inline topology); every sim/experiments/*.json and
# tests/unit/sim/data/scenario/good/*.json is valid, and so is its reduced version (its
# "reduced" merge patch applied, as `mrc-sim run --reduced` does); every topology file such a
# scenario names is a valid topology; and every tests/unit/sim/data/scenario/bad/*.json is
# invalid. sim/experiments may be empty or absent. The bad files only hold faults the schema
# can see (unknown keys, types, ranges, spellings, missing keys); faults that need the topology
# or tie several values together are the loader's to find and are tested by the unit tests
# (sim_scenario_test.c), which load every file here too. Prints one PASS or FAIL line per
# check; exits 1 on any FAIL.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
schema=$root/schemas/scenario.schema.json
topo_schema=$root/schemas/topology.schema.json
data=$root/tests/unit/sim/data/scenario
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

# validate SCHEMA FILE: runs ajv on one file; its errors go to $log for the FAIL report.
validate() {
    ajv validate -s "$1" -r "$topo_schema" -d "$2" --errors=text >"$log" 2>&1
}

# verdicts SCHEMA FILE...: validates all files in one run (npx costs half a second a call) and
# stores each file's verdict, "valid" or "invalid", in the array |verdict|.
declare -A verdict
verdicts() {
    local s=$1 args=() f
    shift
    for f in "$@"; do
        args+=(-d "$f")
    done
    ajv validate -s "$s" -r "$topo_schema" "${args[@]}" --errors=line >"$tmpdir/out" \
        2>"$tmpdir/err" || true
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

# report_valid FILE LABEL: a PASS when FILE's verdict is valid, else a FAIL with ajv's errors.
report_valid() {
    if [[ ${verdict[$1]} == valid ]]; then
        pass "valid: $2"
    else
        fail "should be valid: $2"
        validate "$schema" "$1" || true
        sed 's/^/    /' "$log"
    fi
}

if ajv compile -s "$schema" -r "$topo_schema" >"$log" 2>&1 && ! grep -q 'strict mode' "$log"; then
    pass "schema compiles (draft 2020-12, strict)"
else
    fail "schema does not compile cleanly:"
    sed 's/^/    /' "$log"
fi

shopt -s nullglob
good=("$root"/sim/experiments/*.json "$data"/good/*.json)
bad=("$data"/bad/*.json)
if ((${#bad[@]} == 0)); then
    fail "no bad scenario under tests/unit/sim/data/scenario/bad"
fi

# For each good scenario: its reduced version (when it has one) into $tmpdir, named after its
# index so that names never clash, and the topology files it names (resolved against its folder).
# A file that is not JSON is left to the schema check to report.
node - "$tmpdir" "${good[@]}" >"$tmpdir/derived" <<'EOF'
const fs = require('fs');
const path = require('path');
const [tmpdir, ...files] = process.argv.slice(2);
// RFC 7386: objects merge key by key, null deletes, anything else replaces.
function mergePatch(target, patch) {
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
        return patch;
    }
    const out = target !== null && typeof target === 'object' && !Array.isArray(target)
        ? { ...target } : {};
    for (const [k, v] of Object.entries(patch)) {
        if (v === null) {
            delete out[k];
        } else {
            out[k] = mergePatch(out[k], v);
        }
    }
    return out;
}
files.forEach((file, i) => {
    let doc;
    try {
        doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
        return;
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        return;
    }
    if (doc.reduced !== null && typeof doc.reduced === 'object' && !Array.isArray(doc.reduced)) {
        const patch = doc.reduced;
        delete doc.reduced;
        const red = mergePatch(doc, patch);
        delete red.reduced;
        const out = path.join(tmpdir, `reduced-${i}.json`);
        fs.writeFileSync(out, JSON.stringify(red, null, 2));
        console.log(`reduced\t${file}\t${out}`);
    }
    if (typeof doc.topology === 'string') {
        console.log(`topology\t${file}\t${path.resolve(path.dirname(file), doc.topology)}`);
    }
});
EOF

declare -A reduced_of=()
topologies=()
while IFS=$'\t' read -r what file derived; do
    if [[ $what == reduced ]]; then
        reduced_of[$file]=$derived
    elif [[ ! " ${topologies[*]} " == *" $derived "* ]]; then
        topologies+=("$derived")
    fi
done <"$tmpdir/derived"

verdicts "$schema" "${good[@]}" "${reduced_of[@]}" "${bad[@]}"
for f in "${good[@]}"; do
    rel=${f#"$root"/}
    report_valid "$f" "$rel"
    if [[ -n ${reduced_of[$f]:-} ]]; then
        report_valid "${reduced_of[$f]}" "$rel (reduced)"
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

for t in "${topologies[@]}"; do
    rel=${t#"$root"/}
    if [[ ! -f $t ]]; then
        fail "a scenario names a topology that does not exist: $rel"
    elif ajv validate -s "$topo_schema" -d "$t" --errors=text >"$log" 2>&1; then
        pass "valid topology: $rel"
    else
        fail "should be a valid topology: $rel"
        sed 's/^/    /' "$log"
    fi
done

if ((failures > 0)); then
    printf '%d check(s) failed\n' "$failures"
    exit 1
fi
printf 'all checks passed\n'
