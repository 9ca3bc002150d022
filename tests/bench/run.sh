#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every benchmark once, at its full size or (--smoke) at a small one, each printing its figures;
# fails when one does not run, prints none of its figures, or is not known here.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/tests/bench

usage() {
    cat <<USAGE
usage: tests/bench/run.sh [--smoke] [BUILDDIR]

  Runs every benchmark of tests/bench against BUILDDIR (default build): bench_fabric,
  bench_probe_eval, bench_localize_shard, bench_auth, bench_mrc.sh, bench_sim.sh,
  bench_controller.sh, bench_push, bench_soak, bench_ha.py and, as root, bench_agent.sh and
  bench_localize.sh (a lab each; reported skipped otherwise). Each prints
  its figures beside its targets; the targets are judged by a reader, not here
  (docs/benchmarks.md). Fails when a benchmark fails to run, prints none of the figures it
  owes, or when a bench_* script or program of tests/bench is not one this script knows.

  --smoke       each at a small size and for a short time (all of them: about 5 minutes on
                2 cores): a check that every benchmark still runs
  -h, --help    print this help and exit

  environment: BENCH_LAB_PREFIX, BENCH_LAB_DIR (bench_agent.sh's and bench_localize.sh's -p
  and -l: the lab's namespace prefix and folder); BENCH_SKIP (names of benchmarks not to run,
  space-separated: one another test runs already)

exit status: 0 every benchmark ran, 1 one did not, 2 bad input
USAGE
}
bad() {
    echo "run.sh: $*; see tests/bench/run.sh --help" >&2
    exit 2
}

smoke=0
build=
while [ $# -gt 0 ]; do
    case $1 in
    --smoke) smoke=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    -*) bad "unknown option '$1'" ;;
    *)
        [ -z "$build" ] || bad "one BUILDDIR, not '$build' and '$1'"
        build=$1
        ;;
    esac
    shift
done
build=${build:-$root/build}
[ -d "$build/bin" ] || bad "$build/bin: no such directory (build first)"
build=$(cd "$build" && pwd)
bin=$build/bin

# --- the benchmarks -----------------------------------------------------------------------
# Each: its name, the figures it owes (extended regexps, each to match a line of its output)
# and its command at either size. The programs only a script runs are named beside it.
names=()
declare -A figures cmd_full cmd_smoke needs_root runs_programs

bench() { # NAME ROOT(0|1) PROGRAMS FIGURES (one per line)
    names+=("$1")
    needs_root[$1]=$2
    runs_programs[$1]=$3
    figures[$1]=$4
}
bench bench_fabric 0 "" \
    '^target load\+expand\+compute +[0-9.]+ ms
^target peak memory +[0-9.]+ MiB
^target render all \(SONiC\) +[0-9.]+ ms'
cmd_full[bench_fabric]="$bin/bench_fabric"
cmd_smoke[bench_fabric]="$bin/bench_fabric" # the full fabric takes seconds

bench bench_probe_eval 0 "" \
    '^recall within 3 s, loss >= 1% +[0-9.]+%
^precision \(distinct confirmed verdicts\) +[0-9.]+%
^false reports per fabric-hour \(noise only\) +[0-9.]+
^inference CPU per evaluation per plane \(mean\) +[0-9.]+ ms'
cmd_full[bench_probe_eval]="$bin/bench_probe_eval --planes 8"
cmd_smoke[bench_probe_eval]="$bin/bench_probe_eval --quick"

# one shard's localizer (plane 0) on the full fabric: a window's reports taken and evaluated on
# one core, beside the 1 s window and the unsharded localizer (issue 20)
bench bench_localize_shard 0 "" \
    '^target shard window ingest\+inference +[0-9.]+ ms +budget [0-9]+ ms \(one window\), unsharded [0-9.]+ ms
^target shard window max +[0-9.]+ ms'
cmd_full[bench_localize_shard]="$bin/bench_localize_shard"
cmd_smoke[bench_localize_shard]="$bin/bench_localize_shard --smoke"

bench bench_mrc.sh 0 "bench_mrc_cost mrc-pair" \
    '^  sender +[0-9]+ in bursts of [0-9]+, [0-9]+ one at a time
^  receiver +[0-9]+ in bursts of [0-9]+, [0-9]+ one at a time
^  no loss +[0-9.]+ Gb/s
^  1% loss +[0-9.]+ Gb/s'
cmd_full[bench_mrc.sh]="$here/bench_mrc.sh $build"
cmd_smoke[bench_mrc.sh]="$here/bench_mrc.sh --smoke $build"

bench bench_sim.sh 0 "mrc-sim" \
    '^perm1k\.json.*: [0-9.]+ us simulated, [0-9.]+ s wall, [0-9,]+ events, [0-9.]+ M events/s
^ar64x8\.json.*: [0-9.]+ us simulated, [0-9.]+ s wall, [0-9,]+ events, [0-9.]+ M events/s'
cmd_full[bench_sim.sh]="$here/bench_sim.sh $build"
cmd_smoke[bench_sim.sh]="$here/bench_sim.sh --smoke $build"

bench bench_controller.sh 0 "bench_ctl_reports bench_ctl_push bench_ctl_health mrc-controller" \
    '^  a\) startup .* [0-9.]+ s
^  c\) agent reports ingested +[0-9.]+ reports/s
^  e\) denylist change to [0-9]+ subscribers +[0-9.]+ ms to the last
^  d\) health/links\?limit=100&plane=3&state=bad +p99 [0-9.]+
^  d\) health/links\?limit=100 +p99 [0-9.]+
^  f\) health/matrix\?plane=P .* p99 [0-9.]+ ms
^  b\) peak resident memory .* [0-9]+ MiB'
cmd_full[bench_controller.sh]="$here/bench_controller.sh $build"
cmd_smoke[bench_controller.sh]="$here/bench_controller.sh --smoke $build"

bench bench_auth 0 "" \
    '^load 262144 +[0-9.]+ ms
^auth new +262144 +valid +[0-9.]+ [nu]s +[0-9.]+ [nu]s
^auth new +262144 +wrong, 32 KiB +[0-9.]+ [nu]s
^auth baseline +262144 +valid +[0-9.]+ [nmu]?s'
cmd_full[bench_auth]="$bin/bench_auth"
cmd_smoke[bench_auth]="$bin/bench_auth --smoke"

# a push connection per agent of the fabric (131,072; the file limits need root, or a raised
# ulimit -Hn) held on a controller it starts on loopback, beside its queries' latency and RSS
bench bench_push 0 "" \
    '^baseline \(none held\) +0( +[0-9.]+){5}
^with the push held +[0-9]+( +[0-9.]+){5}
^after they closed +0( +[0-9.]+){5}
^RSS per held connection: [0-9.]+ KiB'
cmd_full[bench_push]="$bin/bench_push --bin $bin"
cmd_smoke[bench_push]="$bin/bench_push --bin $bin --conns 4096 --queries 1000 --hold 1"

# 10 minutes of valid load with every attack of issue 19 mixed in: memory, answers, the store
bench bench_soak.py 0 "" \
    '^RSS growth after warm-up +-?[0-9.]+ %
^acknowledged entries in force +[0-9]+; lost [0-9]+, not acknowledged [0-9]+; after a restart lost [0-9]+
^(PASS|FAIL)$'
cmd_full[bench_soak.py]="python3 $here/bench_soak.py --bin $bin"
cmd_smoke[bench_soak.py]="python3 $here/bench_soak.py --bin $bin --duration 20 --rate 50"

# high availability's price: a change's latency alone and on the leader of three on etcd, and
# reports per second into each (tests/bench/bench_ha.py)
bench bench_ha.py 0 "mrc-controller bench_ctl_reports" \
    '^  alone \(SQLite\) +[0-9.]+ +[0-9.]+
^  leader \(etcd, then SQLite\) +[0-9.]+ +[0-9.]+
^  alone +[0-9]+ +[0-9]+
^  through the leader +[0-9]+ +[0-9]+'
cmd_full[bench_ha.py]="python3 $here/bench_ha.py --bin $bin"
cmd_smoke[bench_ha.py]="python3 $here/bench_ha.py --bin $bin --smoke"

lab_opts="${BENCH_LAB_PREFIX:+-p $BENCH_LAB_PREFIX} ${BENCH_LAB_DIR:+-l $BENCH_LAB_DIR}"
bench bench_agent.sh 1 "bench_udp_pingpong mrc-agent mrc-perf" \
    '^TCP iperf3, Gb/s +[0-9.]+
^TCP iperf3 -P [0-9]+, Gb/s +[0-9.]+
^\[0\] mrc-perf, Gb/s +[0-9.]+
^\[0\] mrc-perf --qps [0-9]+, Gb/s +[0-9.]+
^\[0\]   retransmitted, % of data packets +[0-9.]+
^UDP ping-pong p50 one-way \([a-z]+ CPU\), us +[0-9.]+
^\[0\] mrc-perf lat p50 one-way \([a-z]+ CPU\), us +[0-9.]+'
cmd_full[bench_agent.sh]="$here/bench_agent.sh -b $bin $lab_opts"
cmd_smoke[bench_agent.sh]="$here/bench_agent.sh --smoke -b $bin $lab_opts"

bench bench_localize.sh 1 "" \
    '^host-up +[0-9]+ +[0-9]+ +[0-9.]+ % +[0-9.]+ %
^host-down +[0-9]+ +[0-9]+ +[0-9.]+ % +[0-9.]+ %
^t0t1-up +[0-9]+ +[0-9]+ +[0-9.]+ % +[0-9.]+ %
^t0t1-down +[0-9]+ +[0-9]+ +[0-9.]+ % +[0-9.]+ %
^switch +[0-9]+ +[0-9]+ +[0-9.]+ % +[0-9.]+ %
^runs naming an element that was not faulty: [0-9]+'
cmd_full[bench_localize.sh]="$here/bench_localize.sh -b $bin $lab_opts"
cmd_smoke[bench_localize.sh]="$here/bench_localize.sh --smoke -b $bin $lab_opts"

# --- nothing unknown ----------------------------------------------------------------------
# A benchmark added to tests/bench and not here would never run: each bench_*.sh and each
# bench_*.py and each bench_*.c with a main() (a program) must be one of the above or run by
# one of them.
unknown=()
known=" ${names[*]} ${runs_programs[*]} "
for f in "$here"/bench_*.sh "$here"/bench_*.py "$here"/bench_*.c; do
    [ -e "$f" ] || continue
    n=$(basename "$f")
    if [[ $n == *.c ]]; then
        grep -q '^int main(' "$f" || continue
        n=${n%.c}
        [ -x "$bin/$n" ] || { unknown+=("$n (tests/bench/$n.c: no program $bin/$n)"); continue; }
    fi
    [[ $known == *" $n "* ]] || unknown+=("$n")
done
if [ ${#unknown[@]} -gt 0 ]; then
    for n in "${unknown[@]}"; do
        echo "run.sh: tests/bench has a benchmark this script does not run: $n (add it here)" >&2
    done
    exit 1
fi

# --- running them -------------------------------------------------------------------------
# Each runs in the background under timeout with its output in a log, which tail shows as it
# comes; INT or TERM here stops it (bench_agent.sh takes its lab down on TERM).
tmp=$(mktemp -d)
current=
stop_current() {
    if [ -n "$current" ]; then
        kill -TERM "$current" 2>/dev/null
        wait "$current" 2>/dev/null
        current=
    fi
}
trap 'stop_current; rm -rf "$tmp"' EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT
trap 'echo "run.sh: terminated" >&2; exit 143' TERM

if [ "$smoke" = 1 ]; then
    limit=180 size="smoke size"
else
    limit=3600 size="full size"
fi
results=()
failed=0
t_all=$(date +%s)
for n in "${names[@]}"; do
    # BENCH_SKIP: benchmarks another test already runs (bench.smoke leaves bench_localize.sh to
    # integration.probe_exact, which runs it with --check)
    if [[ " ${BENCH_SKIP:-} " == *" $n "* ]]; then
        results+=("$(printf '%-22s %-8s %s' "$n" skipped "BENCH_SKIP")")
        printf '
=== %s: skipped (BENCH_SKIP)
' "$n"
        continue
    fi
    if [ "${needs_root[$n]}" = 1 ] && [ "$(id -u)" -ne 0 ]; then
        results+=("$(printf '%-22s %-8s %s' "$n" skipped "needs root")")
        printf '\n=== %s: skipped (needs root)\n' "$n"
        continue
    fi
    if [ "$smoke" = 1 ]; then c=${cmd_smoke[$n]}; else c=${cmd_full[$n]}; fi
    printf '\n=== %s (%s): %s\n' "$n" "$size" "$c"
    log=$tmp/$n.log
    : >"$log"
    t0=$(date +%s)
    # shellcheck disable=SC2086 # the commands are words, with no spaces inside a word
    timeout -k 10 "$limit" $c >"$log" 2>&1 </dev/null &
    current=$!
    tail -n +1 -f --pid="$current" "$log"
    wait "$current"
    rc=$?
    current=
    secs=$(($(date +%s) - t0))
    why=
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        why="no end within $limit s"
    elif [ "$rc" != 0 ]; then
        why="exit $rc"
    fi
    missing=0
    while IFS= read -r re; do
        if ! grep -Eq -- "$re" "$log"; then
            echo "run.sh: $n printed no line matching: $re" >&2
            missing=$((missing + 1))
        fi
    done <<<"${figures[$n]}"
    [ "$missing" = 0 ] || why="${why:+$why, }$missing figure(s) missing"
    if [ -n "$why" ]; then
        failed=$((failed + 1))
        results+=("$(printf '%-22s %-8s %4d s  %s' "$n" FAILED "$secs" "$why")")
    else
        results+=("$(printf '%-22s %-8s %4d s' "$n" ran "$secs")")
    fi
done

printf '\n=== benchmarks (%s, %d CPUs), %d s in all:\n' "$size" "$(nproc)" $(($(date +%s) - t_all))
printf '  %s\n' "${results[@]}"
if [ "$failed" -gt 0 ]; then
    echo "run.sh: $failed benchmark(s) did not run to their figures" >&2
    exit 1
fi
