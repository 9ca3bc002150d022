#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Verdicts that name only what is broken (issue 18, item 7): tests/bench/bench_localize.sh at a
# small count on the lab, with the whole system (controller, agents, prober nodes, localizer):
# a run of a host port's upward loss (0.3 %: a loss like it had one of its T0's uplinks named
# beside it, one run in five) and one of a switch losing 0.3 % on each of its links (the
# benchmark's smoke size, in bench.smoke, runs one of each class beside them).
# Every run names the faulty element and nothing else, and so does the healthy lab before them.
set -uo pipefail

bin=${1:?usage: probe_exact.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root for network namespaces"
    exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$root/tests/bench/bench_localize.sh" --check -n 1 -c host-up,switch -L 0.3 --dwell 4 \
    -b "$bin" -p "pe$$" | tee "$out"
rc=${PIPESTATUS[0]}
check '[ "$rc" = 0 ]' \
    "bench_localize.sh --check exits 0 (1: an element that was not faulty named, or the lab failed): $rc"
check 'grep -q "^the healthy lab: nothing named" "$out"' "the healthy lab: nothing named"
for class in host-up switch; do
    check 'grep -Eq "^$class +1 +1 +100\.0 % +100\.0 % " "$out"' \
        "$class: the run named the faulty element, and nothing else: $(grep "^$class " "$out")"
done
finish probe_exact
