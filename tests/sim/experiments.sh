#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-sim's command line, then every scenario of sim/experiments at its reduced size, then the
# paper's qualitative results on what they wrote (tests/sim/experiments.py): a run that fails, a
# summary that is missing, a claim that does not hold, each is a FAIL line and exit 1.
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

# The command line first, as every program's (util_cli): --help on stdout with exit 0 listing
# the options, --version, and one line on stderr with exit 2 for an unknown option, a missing
# operand or command, each pointing at --help.
# has FILE PATTERN: FILE has a line matching PATTERN, or is empty when PATTERN is
has() { if [ -n "$2" ]; then grep -q -- "$2" "$1"; else [ ! -s "$1" ]; fi; }
# cli WHAT STATUS STDOUT STDERR ARGS...: mrc-sim ARGS exits STATUS, its stdout has a line
# matching STDOUT and its stderr one matching STDERR (empty patterns: nothing on it); a fault
# is one line
cli() {
    local what=$1 want=$2 out=$3 err=$4 rc=0
    shift 4
    "$bin/mrc-sim" "$@" >"$tmp/cli.out" 2>"$tmp/cli.err" || rc=$?
    if [ "$rc" -eq "$want" ] && has "$tmp/cli.out" "$out" && has "$tmp/cli.err" "$err" &&
        { [ "$want" -eq 0 ] || [ "$(wc -l <"$tmp/cli.err")" -eq 1 ]; }; then
        echo "PASS mrc-sim $what: exit $rc$(head -1 "$tmp/cli.err" | sed 's/^/, /')"
    else
        echo "FAIL mrc-sim $what: exit $rc: $(head -3 "$tmp/cli.err") $(head -3 "$tmp/cli.out")"
        failures=$((failures + 1))
    fi
}
cli --help 0 '^  run SCENARIO.json' '' --help
for o in --seed --out '--reduced, --no-reduced' '--quiet, --no-quiet' --help --version; do
    cli "run --help lists $o" 0 "^  .*$o" '' run --help
done
cli 'report --help' 0 '^usage: mrc-sim report DIR' '' report --help
cli --version 0 '^mrc-sim (mrcfab) [0-9]' '' --version
cli 'run: an unknown option' 2 '' "unknown option '--bogus'; see mrc-sim run --help" \
    run "$root/sim/experiments/incast-mrc.json" --bogus
cli 'an unknown option before the command' 2 '' "unknown option '--bogus'; see mrc-sim --help" \
    --bogus run
cli 'run: no scenario' 2 '' 'SCENARIO.json is missing; see mrc-sim run --help' run --reduced
cli 'report: no results' 2 '' "the runs' DIRs are missing; see mrc-sim report --help" report
cli 'no command' 2 '' 'COMMAND is missing; see mrc-sim --help'
cli 'a command that is none' 2 '' "no command 'walk' (run or report); see mrc-sim --help" walk
cli 'run: a bad seed' 2 '' "--seed takes a whole number, not 'x'" \
    run "$root/sim/experiments/incast-mrc.json" --seed x
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
