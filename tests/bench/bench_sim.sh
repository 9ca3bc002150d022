#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-sim's speed on the two reference workloads of UEC's htsim, as measured on this machine
# class: a 1,024-host permutation (2 MiB per flow, 128 EVs; htsim: 0.86 M events/s, 14.7 s)
# and a 64-rank 8-plane ring all-reduce (htsim: 2.5 M events/s on one plane, 1.6 M on eight).
# Prints simulated time, wall time, events, events per second and peak memory, against the
# targets: 2x htsim's events per second, under 4 GiB.
# Usage: tests/bench/bench_sim.sh [--smoke] [BUILD_DIR]   (BUILD_DIR default build)
#   --smoke: the scenarios' reduced versions (256 hosts of 1 MiB, 32 ranks of 8 MiB), whose
#   events per second are not htsim's workload's and are printed, not judged.
# Exits 0 when both ran (targets met or not), 1 when one failed.
set -euo pipefail
usage="usage: tests/bench/bench_sim.sh [--smoke] [BUILD_DIR]"
smoke=0
while [ $# -gt 0 ]; do
    case $1 in
    --smoke) smoke=1 ;;
    -h | --help) echo "$usage"; sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "bench_sim: unknown option '$1'; see bench_sim.sh --help" >&2; exit 2 ;;
    *) break ;;
    esac
    shift
done
[ $# -le 1 ] || { echo "bench_sim: one BUILD_DIR, not '$*'; see bench_sim.sh --help" >&2; exit 2; }
build=${1:-build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sim=$build/bin/mrc-sim
[ -x "$sim" ] || { echo "bench_sim: build first ($sim)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
    local name=$1 ref=$2
    python3 - "$sim" "$here/sim/$name.json" "$tmp/$name" "$ref" "$smoke" <<'PY'
import json, resource, subprocess, sys
sim, scenario, out, ref = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
smoke = sys.argv[5] == "1"
subprocess.run([sim, "run", scenario, "--out", out, "--quiet"] + (["--reduced"] if smoke else []),
               check=True)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
s = json.load(open(out + "/summary.json"))["sim"]
eps = s["events"] / s["wall_s"]
name = scenario.rsplit('/', 1)[-1] + (" (reduced)" if smoke else "")
judged = "" if smoke else f": {'PASS' if eps >= 2e6 * ref else 'FAIL'}"
print(f"{name}: {s['simulated_ns'] / 1e3:.1f} us simulated, "
      f"{s['wall_s']:.2f} s wall, {s['events']:,} events, {eps / 1e6:.2f} M events/s "
      f"(htsim {ref:.2f}, target {2 * ref:.2f}{judged}), "
      f"peak {rss:.0f} MiB ({'PASS' if rss < 4096 else 'FAIL'} under 4 GiB)")
PY
}
run perm1k 0.86
run ar64x8 2.5
