#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs each libFuzzer target for a bounded time on a scratch copy of its seed corpus.
#
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS [NAME...]
#
# NAME is a target without its fuzz_ prefix (default: every tests/fuzz/fuzz_*.c). Target
# fuzz_NAME runs from BUILD_DIR/bin on a copy of tests/fuzz/corpus/NAME, with NAME.dict when
# there is one, so the committed corpus never grows by itself. A crash, leak, timeout or
# out-of-memory is a FAIL; its reproducer is kept in BUILD_DIR/fuzz-artifacts/fuzz_NAME/ and
# replays with `BUILD_DIR/bin/fuzz_NAME FILE`. Exits 1 on any FAIL.
set -euo pipefail

if (($# < 2)); then
    echo "usage: $0 BUILD_DIR SECONDS [NAME...]" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$1" && pwd)
secs=$2
shift 2
names=("$@")
if ((${#names[@]} == 0)); then
    for src in "$here"/fuzz_*.c; do
        n=$(basename "$src" .c)
        names+=("${n#fuzz_}")
    done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

for name in "${names[@]}"; do
    target=fuzz_$name
    bin=$build/bin/$target
    if [[ ! -x $bin ]]; then
        echo "FAIL $target: $bin is not built (configure with CC=clang -DMRCFAB_FUZZ=ON)"
        failures=$((failures + 1))
        continue
    fi
    mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
    if [[ -d $here/corpus/$name ]]; then
        cp -R "$here/corpus/$name/." "$work/$name/corpus/"
    fi
    opts=(-max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048
        -print_final_stats=1 -artifact_prefix="$work/$name/artifacts/")
    if [[ -f $here/$name.dict ]]; then
        opts+=(-dict="$here/$name.dict")
    fi
    log=$work/$name/log
    rc=0
    "$bin" "${opts[@]}" "$work/$name/corpus" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    artifacts=("$work/$name/artifacts"/*)
    if ((rc == 0)) && [[ ! -e ${artifacts[0]} ]]; then
        echo "PASS $target: ${runs:-?} runs in ${secs}s, ${cov:-cov: ?}," \
            "corpus $(find "$work/$name/corpus" -type f | wc -l) inputs"
        continue
    fi
    failures=$((failures + 1))
    keep=$build/fuzz-artifacts/$target
    mkdir -p "$keep"
    cp "$log" "$keep/log.txt"
    echo "FAIL $target: exit $rc after ${runs:-?} runs; log in $keep/log.txt"
    for a in "${artifacts[@]}"; do
        [[ -e $a ]] || continue
        cp "$a" "$keep/"
        echo "    reproducer: $keep/$(basename "$a") (replay: $bin $keep/$(basename "$a"))"
    done
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz_[a-z_]*:)' "$log" | head -n 5 |
        sed 's/^/    /' || true
done

if ((failures > 0)); then
    exit 1
fi
