#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every scenario of sim/experiments at its reduced size, then the paper's qualitative results
# on what they wrote (tests/sim/experiments.py): a run that fails, a summary that is missing,
# a claim that does not hold, each is a FAIL line and exit 1.
#
# Usage: tests/sim/experiments.sh BINDIR
set -euo pipefail
bin=${1:?usage: experiments.sh BINDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/runs" "$tmp/logs"
failures=0
for f in "$root"/sim/experiments/*.json; do
    name=$(basename "$f" .json)
    if ! "$bin/mrc-sim" run "$f" --reduced --quiet --out "$tmp/runs/$name" >"$tmp/logs/$name" 2>&1; then
        printf 'FAIL %s: mrc-sim run exited non-zero\n' "$name"
        cat "$tmp/logs/$name"
        failures=$((failures + 1))
    fi
done
python3 "$here/experiments.py" "$tmp/runs" || failures=$((failures + 1))
"$bin/mrc-sim" report "$tmp"/runs/* >"$tmp/report.md" || {
    echo "FAIL mrc-sim report"
    failures=$((failures + 1))
}
[ "$(grep -c '^| ' "$tmp/report.md")" -gt 20 ] && echo "PASS mrc-sim report: a row per run" || {
    echo "FAIL mrc-sim report: $(cat "$tmp/report.md")"
    failures=$((failures + 1))
}
# a bad scenario: exit 2, the field at fault named, no results written
rc=0
"$bin/mrc-sim" run "$root/tests/unit/sim/data/scenario/bad/trim-at-zero.json" \
    --out "$tmp/bad" 2>"$tmp/bad.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q '\$\.net\.trim_at: must be' "$tmp/bad.err" && [ ! -e "$tmp/bad" ]; then
    echo "PASS a bad scenario: exit 2 and the field named"
else
    echo "FAIL a bad scenario: exit $rc: $(cat "$tmp/bad.err")"
    failures=$((failures + 1))
fi
exit $((failures > 0))
