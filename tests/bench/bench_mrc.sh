#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The engine's speed: instructions per data packet on each side (callgrind, payload copy
# excluded) and mrc-pair goodput per CPU-second with 4 KiB packets on one core, against the targets.
# Usage: tests/bench/bench_mrc.sh [--smoke] [BUILD_DIR]   (BUILD_DIR default build)
#   BENCH_PKTS (20000 packets under callgrind), BENCH_RUNS (3 mrc-pair runs, the best taken),
#   BENCH_MSGS (2000 messages of 1 MiB a run), BENCH_BURST (16); --smoke: 2000, 1 and 200.
# Exits 0 when it measured (targets met or not), 1 when something failed to run.
set -euo pipefail
usage="usage: tests/bench/bench_mrc.sh [--smoke] [BUILD_DIR]"
smoke=0
while [ $# -gt 0 ]; do
    case $1 in
    --smoke) smoke=1 ;;
    -h | --help) echo "$usage"; sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "bench_mrc: unknown option '$1'; see bench_mrc.sh --help" >&2; exit 2 ;;
    *) break ;;
    esac
    shift
done
[ $# -le 1 ] || { echo "bench_mrc: one BUILD_DIR, not '$*'; see bench_mrc.sh --help" >&2; exit 2; }
build=${1:-build}
if [ "$smoke" = 1 ]; then
    pkts=${BENCH_PKTS:-2000}
    runs=${BENCH_RUNS:-1}
    msgs=${BENCH_MSGS:-200}
else
    pkts=${BENCH_PKTS:-20000}
    runs=${BENCH_RUNS:-3}
    msgs=${BENCH_MSGS:-2000}
fi
bin=$build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The instructions of the functions matching |toggle|, less the payload copies they made.
cost() {
    local toggle=$1 burst=$2 icrc=${3:-}
    valgrind --tool=callgrind --toggle-collect="$toggle" --callgrind-out-file="$tmp/cg" \
        "$bin/bench_mrc_cost" "$pkts" "$burst" $icrc >/dev/null 2>"$tmp/vg.log"
    # per function only (--auto=no): annotated source lines would count the copy again
    callgrind_annotate --auto=no "$tmp/cg" >"$tmp/ann" 2>/dev/null
    local total copy
    total=$(grep -m1 'PROGRAM TOTALS' "$tmp/ann" | awk '{gsub(",", "", $1); print $1}')
    if [ -z "$total" ] || [ "$total" -eq 0 ]; then
        echo "bench_mrc: callgrind measured nothing for $toggle:" >&2
        cat "$tmp/vg.log" >&2
        exit 1
    fi
    copy=$(grep -E ':__(memcpy|memmove)[a-z_]* ' "$tmp/ann" |
        awk '{gsub(",", "", $1); s += $1} END {print s + 0}')
    echo $(( (total - copy) / pkts ))
}

[ -x "$bin/bench_mrc_cost" ] && [ -x "$bin/mrc-pair" ] || { echo "bench_mrc: build first" >&2; exit 1; }
burst=${BENCH_BURST:-16}
send=$(cost 'side_send_*' "$burst")
recv=$(cost 'side_recv_*' "$burst")
send1=$(cost 'side_send_*' 1)
recv1=$(cost 'side_recv_*' 1)
send_icrc=$(cost 'side_send_*' "$burst" icrc)
recv_icrc=$(cost 'side_recv_*' "$burst" icrc)
echo "engine instructions per 4 KiB data packet, payload copy excluded (callgrind, $pkts packets):"
echo "  sender   $send in bursts of $burst, $send1 one at a time   (with ICRC and UDP checksum: $send_icrc)"
echo "  receiver $recv in bursts of $burst, $recv1 one at a time   (with ICRC and UDP checksum: $recv_icrc)"

# one mrc-pair run: "CPU-time goodput wall-clock goodput" (Gb/s). The CPU-time figure is the
# one judged: on a shared or virtual machine, what other work and the hypervisor take comes and
# goes between runs (the wall-clock ratio of two runs of 1.3 s ranged from 75 to 102 % here)
pair_run() {
    "$bin/mrc-pair" --msgs "$msgs" --size 1048576 --planes 8 --seed 1 "$@" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["cpu_goodput_gbps"], j["wall_goodput_gbps"])' || {
        echo "bench_mrc: mrc-pair $* failed" >&2
        exit 1
    }
}
# the runs without and with loss alternate, so that both see the same load; best of each
best() { awk -v k="$1" '{if ($k > m) m = $k} END {printf "%.3f", m}'; }
: >"$tmp/clean"
: >"$tmp/lossy"
for _ in $(seq "$runs"); do
    pair_run >>"$tmp/clean"
    pair_run --loss 0.01 >>"$tmp/lossy"
done
clean=$(best 1 <"$tmp/clean")
lossy=$(best 1 <"$tmp/lossy")
clean_wall=$(best 2 <"$tmp/clean")
lossy_wall=$(best 2 <"$tmp/lossy")
ratio=$(echo "$lossy $clean" | awk '{printf "%.1f", 100 * $1 / $2}')
echo "mrc-pair goodput per CPU-second, $msgs x 1 MiB, 4 KiB MTU, 8 planes, one core (best of $runs,"
echo "the runs alternating; wall-clock beside):"
echo "  no loss  $clean Gb/s   (wall clock $clean_wall Gb/s)"
echo "  1% loss  $lossy Gb/s   ($ratio % of no loss; wall clock $lossy_wall Gb/s)"

verdict() { if [ "$1" = 1 ]; then echo PASS; else echo FAIL; fi; }
echo "targets:"
echo "  <= 400 instructions per packet per side: $(verdict $(( send <= 400 && recv <= 400 )))"
echo "  >= 20 Gb/s with no loss: $(verdict "$(echo "$clean" | awk '{print ($1 >= 20)}')")"
echo "  >= 90 % of that at 1 % loss: $(verdict "$(echo "$ratio" | awk '{print ($1 >= 90)}')")"
