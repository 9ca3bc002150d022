#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe localize on the lab against sub-percent faults (issue 18, item 7): whether each
# verdict names exactly the faulty element, and how long it takes. Runs of five classes in
# turn, each a fault at a random element of its class with deploy/lab/lab.sh fault loss:
#   host-up    one host port, host to T0 (NIC->T0): the verdict "HOST:PORT up"
#   host-down  one host port, T0 to host: "HOST:PORT down"
#   t0t1-up    one uplink, T0 to T1: "T0~T1 up"
#   t0t1-down  one uplink, T1 to T0: "T0~T1 down"
#   switch     a T0 or a T1 losing on each direction of each of its cables: "SWITCH both"
# A host port's downward loss is made at its T0's egress (an nftables table of the bench's own):
# lab.sh drops a loss where it arrives, in the prerouting hook, and a host's packet sockets (the
# prober node's, the agent's) take their copy before it, so that a host never misses what lab.sh
# drops on its way in. A run injects the fault, watches the localizer's verdicts (GET /api/v1/status) until the
# faulty element is named or --timeout, keeps the fault --dwell seconds more, heals, and waits
# until every verdict is lifted and the fault's windows have left the localizer's longest
# horizon (--gap). Everything named from the injection to the lift is the run's: exact when it
# is the faulty element alone. Per class: precision (exact runs of all runs), recall (runs that
# named the faulty element) and the time to localize (injection to its verdict: p50, max). The
# lab stays up across the runs (its localizer held --hold-s, 2 s, so that runs are short) and
# goes down on exit, however the run ends.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$root/build/bin
topo=$root/deploy/topologies/lab.json
prefix="bl$$"
labdir=
runs=
classes=host-up,host-down,t0t1-up,t0t1-down,switch
losses=0.3,0.5,0.8
timeout_s=60
dwell=
gap=
hold=2
warm=20
seed=1
check=0
smoke=0

usage() {
    cat <<USAGE
usage: bench_localize.sh [--smoke] [--check] [-b BINDIR] [-t TOPOLOGY] [-p PREFIX] [-l LABDIR]
                         [-n RUNS] [-c CLASSES] [-L LOSSES] [--timeout S] [--dwell S] [--gap S]
                         [--hold-s S] [--seed N]

  Brings the lab up (deploy/lab/lab.sh up: the controller, an agent and a prober node on every
  host, the localizer), lets the localizer fill its horizons, then runs RUNS faults of each
  class in turn (host-up, host-down, t0t1-up, t0t1-down, switch), each at a random element of
  its class and a loss of LOSSES in turn, and prints per class the precision (runs naming the
  faulty element and nothing else), the recall (runs naming it within --timeout) and the time
  to localize (p50, max). Takes the lab down on exit, however the run ends.

  --smoke       one run of each class, --dwell 2 --gap 8, 12 s for the horizons to fill
                first: a check that everything runs (-n, --dwell and --gap win)
  --check       exit 1 when a run (or the healthy lab before the first) named an element that
                was not faulty
  -b BINDIR     mrcctl, mrc-controller, mrc-agent and mrc-probe (default build/bin)
  -t TOPOLOGY   default deploy/topologies/lab.json
  -p PREFIX     the lab's namespace prefix (default bl<pid>)
  -l LABDIR     the lab's folder, lab.sh -d (default a temporary folder, removed on exit)
  -n RUNS       runs per class (default 20)
  -c CLASSES    comma-separated classes, of host-up, host-down, t0t1-up, t0t1-down, switch
                (default all five)
  -L LOSSES     comma-separated percents, taken in turn (default 0.3,0.5,0.8)
  --timeout S   longest wait for the faulty element's verdict (default 60)
  --dwell S     the fault stays this long after its verdict (default 5)
  --gap S       after a heal, the next fault waits this long at least, so that the last one's
                windows have left the localizer's 32-window horizon (default 17)
  --hold-s S    the localizer's hold (lab.sh up --hold-s; default 2)
  --seed N      the random choice of elements (default 1)
  -h, --help    print this help and exit

exit status: 0 every run ran (with --check: and named nothing that was not faulty), 1 the lab
or a tool failed (or --check failed), 2 bad input, 77 skipped (not root)
USAGE
}
bad() {
    echo "bench_localize: $*; see bench_localize.sh --help" >&2
    exit 2
}
need_num() { # OPTION VALUE: a whole number of seconds or a count
    [[ $2 =~ ^[0-9]{1,6}$ ]] || bad "$1 '$2': want a whole number"
}

while [ $# -gt 0 ]; do
    case $1 in
    --smoke) smoke=1 ;;
    --check) check=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    -b | -t | -p | -l | -n | -c | -L | --timeout | --dwell | --gap | --hold-s | --seed)
        [ $# -ge 2 ] || bad "$1 wants a value"
        case $1 in
        -b) bin=$2 ;;
        -t) topo=$2 ;;
        -p) prefix=$2 ;;
        -l) labdir=$2 ;;
        -n) need_num "$1" "$2" && runs=$((10#$2)) ;;
        -c) classes=$2 ;;
        -L) losses=$2 ;;
        --timeout) need_num "$1" "$2" && timeout_s=$((10#$2)) ;;
        --dwell) need_num "$1" "$2" && dwell=$((10#$2)) ;;
        --gap) need_num "$1" "$2" && gap=$((10#$2)) ;;
        --hold-s) need_num "$1" "$2" && hold=$((10#$2)) ;;
        --seed) need_num "$1" "$2" && seed=$((10#$2)) ;;
        esac
        shift
        ;;
    *) bad "unknown option '$1'" ;;
    esac
    shift
done
if [ "$smoke" = 1 ]; then
    runs=${runs:-1}
    dwell=${dwell:-2}
    gap=${gap:-8}
    warm=12
fi
runs=${runs:-20}
dwell=${dwell:-5}
gap=${gap:-17}
[ "$runs" -ge 1 ] || bad "-n 0: want at least one run"
[ "$timeout_s" -ge 1 ] || bad "--timeout 0: want at least a second"
[ "$hold" -ge 1 ] || bad "--hold-s 0: want at least a second"
IFS=, read -r -a cls <<<"$classes"
[ ${#cls[@]} -gt 0 ] || bad "-c '$classes': want at least one class"
for c in "${cls[@]}"; do
    case $c in
    host-up | host-down | t0t1-up | t0t1-down | switch) ;;
    *) bad "-c: '$c' is no class (host-up, host-down, t0t1-up, t0t1-down, switch)" ;;
    esac
done
IFS=, read -r -a pcts <<<"$losses"
[ ${#pcts[@]} -gt 0 ] || bad "-L '$losses': want at least one percent"
for p in "${pcts[@]}"; do
    [[ $p =~ ^[0-9]{0,2}(\.[0-9]{1,3})?$ ]] && [[ $p =~ [1-9] ]] ||
        bad "-L: '$p' is no percent above 0 and below 100 (0.3 drops 3 packets in 1000)"
done
[ -d "$bin" ] || bad "-b $bin: no such directory"
bin=$(cd "$bin" && pwd)
for b in mrcctl mrc-controller mrc-agent mrc-probe; do
    [ -x "$bin/$b" ] || bad "no $bin/$b: build first"
done
[ -r "$topo" ] || bad "-t $topo: no such file"
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root for network namespaces"
    exit 77
fi

work=$(mktemp -d)
labdir=${labdir:-$work/lab}
lab_up=0
lab() { "$root/deploy/lab/lab.sh" -b "$bin" -t "$topo" -p "$prefix" -d "$labdir" "$@"; }
# Whatever ends the run (a failure, the end, INT or TERM), the lab goes down with the very
# options it came up with.
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ "$lab_up" = 1 ] && ! lab down >/dev/null 2>&1; then
        echo "bench_localize: lab.sh -p $prefix down failed: its namespaces may be left" >&2
        rc=1
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "bench_localize: interrupted" >&2; exit 130' INT
trap 'echo "bench_localize: terminated" >&2; exit 143' TERM
die() {
    echo "bench_localize: $*" >&2
    exit 1
}
now_ms() { date +%s%3N; }

# --- the fabric's elements, by class -------------------------------------------------------
# host ports "HOST:PORT T0 T0IF", uplinks "T0 T1", switches (T0s and T1s), cables "A B" (a
# host's end as HOST:PORT)
host_ports=() uplinks=() switches=() cables=()
while read -r kind _ a _ aif b bport _; do
    if [ "$kind" = host ]; then
        host_ports+=("$b:$bport $a $aif")
        cables+=("$a $b:$bport $aif")
    else
        uplinks+=("$a $b")
        cables+=("$a $b")
    fi
done < <("$bin/mrcctl" -t "$topo" topo cables --no-header)
while read -r name _; do switches+=("$name"); done < <("$bin/mrcctl" -t "$topo" topo switches --no-header)
[ ${#host_ports[@]} -gt 0 ] && [ ${#uplinks[@]} -gt 0 ] || die "$topo: no host port or uplink"

RANDOM=$seed
pick() { # ARRAY_NAME: a random element of it
    local -n arr=$1
    echo "${arr[$((RANDOM % ${#arr[@]}))]}"
}

# down_loss T0 IF PCT: T0 drops PCT % of what it sends out of IF (to a host), in the table
# bench_localize of its namespace (numgen as lab.sh's rules: thousandths of a percent)
egress=()
down_loss() {
    local t
    t=$(awk -v p="$3" 'BEGIN { printf "%d", p * 1000 + 0.5 }')
    printf 'table inet bench_localize {\nchain out_%s { type filter hook postrouting priority 0;\n%s\n}\n}\n' \
        "$2" "oifname \"$2\" numgen random mod 100000 < $t counter drop" |
        ip netns exec "$prefix-$1" nft -f - || die "nft in $prefix-$1 failed"
    egress+=("$1")
}
# heal: every fault, lab.sh's and the bench's
heal() {
    local x
    lab heal --all >/dev/null
    for x in "${egress[@]}"; do
        ip netns exec "$prefix-$x" nft delete table inet bench_localize 2>/dev/null || true
    done
    egress=()
}

# fault CLASS PCT: injects a fault of CLASS at a random element; sets WANT (the verdict's
# denylist element and scope, as the localizer's status lists it) and WHAT (a description)
fault() {
    local class=$1 pct=$2 hp t0 tif a b sw c x y xif
    case $class in
    host-up | host-down)
        read -r hp t0 tif <<<"$(pick host_ports)"
        if [ "$class" = host-up ]; then
            lab fault loss "$hp" "$t0" "$pct" one-way >/dev/null
            WANT="$hp up"
        else
            down_loss "$t0" "$tif" "$pct"
            WANT="$hp down"
        fi
        ;;
    t0t1-up | t0t1-down)
        read -r a b <<<"$(pick uplinks)"
        if [ "$class" = t0t1-up ]; then
            lab fault loss "$a" "$b" "$pct" one-way >/dev/null
            WANT="$a~$b up"
        else
            lab fault loss "$b" "$a" "$pct" one-way >/dev/null
            WANT="$a~$b down"
        fi
        ;;
    switch)
        sw=$(pick switches)
        for c in "${cables[@]}"; do
            read -r x y xif <<<"$c"
            if [ -n "$xif" ] && [ "$x" = "$sw" ]; then
                # a host's cable: up where it arrives, down where it leaves the T0
                lab fault loss "$y" "$x" "$pct" one-way >/dev/null
                down_loss "$x" "$xif" "$pct"
            elif [ "$x" = "$sw" ] || [ "$y" = "$sw" ]; then
                lab fault loss "$x" "$y" "$pct" >/dev/null
            fi
        done
        WANT="$sw both"
        ;;
    esac
    WHAT="$WANT at $pct %"
}

# verdicts: the localizer's verdicts now, a line each: "COMPONENT|ELEMENT SCOPE,..." (empty
# when none); fails when the localizer does not answer
status_url=
verdicts() {
    curl -sf --max-time 2 "$status_url" | python3 -c 'import json,sys
for v in json.load(sys.stdin)["verdicts"]:
    print(v["component"] + "|" + ",".join(v["elements"]))'
}

# --- the lab --------------------------------------------------------------------------------
echo "bench_localize: $topo, ${#cls[@]} classes x $runs runs, losses ${pcts[*]} %, timeout" \
    "${timeout_s} s, dwell ${dwell} s, gap ${gap} s, hold ${hold} s, seed $seed"
t_all=$(now_ms)
lab_up=1
lab up --hold-s "$hold" >"$work/up.log" 2>&1 || {
    cat "$work/up.log" >&2
    die "lab.sh up failed"
}
status_url="http://[$(lab addr root)]:8081/api/v1/status"
# the localizer's horizons fill (32 windows of 500 ms) on a healthy lab, which must name nothing
healthy_named=
t_end=$(($(now_ms) + warm * 1000))
while [ "$(now_ms)" -lt "$t_end" ]; do
    v=$(verdicts) || die "the localizer does not answer at $status_url"
    [ -z "$v" ] || healthy_named="$healthy_named ${v%%|*}"
    sleep 0.5
done
if [ -n "$healthy_named" ]; then
    echo "the healthy lab: named$healthy_named  WRONG"
else
    echo "the healthy lab: nothing named in $warm s"
fi

# --- the runs -------------------------------------------------------------------------------
declare -A n_runs=() n_exact=() n_found=() n_wrong=() times=()
wrong_runs=0
for ((i = 0; i < runs; i++)); do
    pct=${pcts[$((i % ${#pcts[@]}))]}
    for class in "${cls[@]}"; do
        fault "$class" "$pct"
        t0=$(now_ms)
        declare -A seen=()
        found_ms=
        heal_ms=
        lifted=0
        # until the verdict (or the timeout), the dwell, the heal, the lift and the gap
        while :; do
            v=$(verdicts) || die "the localizer does not answer at $status_url"
            t=$(now_ms)
            while IFS= read -r line; do
                [ -n "$line" ] || continue
                comp=${line%%|*}
                els=${line#*|}
                seen[$comp]=$els
                if [ -z "$found_ms" ] && [ "$els" = "$WANT" ]; then
                    found_ms=$((t - t0))
                fi
            done <<<"$v"
            if [ -z "$heal_ms" ]; then
                if { [ -n "$found_ms" ] && [ $((t - t0 - found_ms)) -ge $((dwell * 1000)) ]; } ||
                    [ $((t - t0)) -ge $((timeout_s * 1000)) ]; then
                    heal
                    heal_ms=$(now_ms)
                fi
            elif [ -z "$v" ] && [ $((t - heal_ms)) -ge $((gap * 1000)) ]; then
                lifted=1
                break
            elif [ $((t - heal_ms)) -ge $(((gap + 120) * 1000)) ]; then
                break
            fi
            sleep 0.2
        done
        others=()
        for comp in "${!seen[@]}"; do
            [ "${seen[$comp]}" = "$WANT" ] || others+=("${seen[$comp]} ($comp)")
        done
        n_runs[$class]=$((${n_runs[$class]:-0} + 1))
        if [ -n "$found_ms" ]; then
            n_found[$class]=$((${n_found[$class]:-0} + 1))
            times[$class]="${times[$class]:-} $found_ms"
            res="named after $(awk -v m="$found_ms" 'BEGIN { printf "%.1f", m / 1000 }') s"
        else
            res="not named within $timeout_s s"
        fi
        if [ ${#others[@]} -gt 0 ]; then
            n_wrong[$class]=$((${n_wrong[$class]:-0} + 1))
            wrong_runs=$((wrong_runs + 1))
            res="$res; also named $(printf '%s; ' "${others[@]}")"
            res="${res%; }  WRONG"
        elif [ -n "$found_ms" ]; then
            n_exact[$class]=$((${n_exact[$class]:-0} + 1))
            res="$res  exact"
        else
            res="$res  MISSED"
        fi
        [ "$lifted" = 1 ] || res="$res (verdicts not lifted $((gap + 120)) s after the heal)"
        printf 'run %2d/%d %-9s %-30s %s\n' $((i + 1)) "$runs" "$class" "$WHAT:" "$res"
        unset seen
    done
done

# --- the figures ----------------------------------------------------------------------------
printf '\n%-10s %5s %6s %10s %8s %8s %8s\n' class runs exact precision recall "p50 s" "max s"
for class in "${cls[@]}"; do
    read -r p50 mx < <(tr ' ' '\n' <<<"${times[$class]:-}" | grep . | sort -n | awk '
        { t[NR] = $1 } END {
            if (NR == 0) { print "-", "-"; exit }
            printf "%.1f %.1f\n", t[int((NR + 1) / 2)] / 1000, t[NR] / 1000 }')
    r=${n_runs[$class]:-0} e=${n_exact[$class]:-0} f=${n_found[$class]:-0}
    printf '%-10s %5d %6d %8.1f %% %6.1f %% %8s %8s\n' "$class" "$r" "$e" \
        "$(awk -v a="$e" -v b="$r" 'BEGIN { print 100 * a / b }')" \
        "$(awk -v a="$f" -v b="$r" 'BEGIN { print 100 * a / b }')" "$p50" "$mx"
done
echo "runs naming an element that was not faulty: $wrong_runs" \
    "(the healthy lab: ${healthy_named:+named$healthy_named}${healthy_named:-none}); $((($(now_ms) - t_all) / 1000)) s in all"
if [ "$check" = 1 ] && { [ "$wrong_runs" -gt 0 ] || [ -n "$healthy_named" ]; }; then
    echo "check: FAILED: a verdict named an element that was not faulty"
    exit 1
fi
[ "$check" = 1 ] && echo "check: every verdict named the faulty element alone"
exit 0
