#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-perf ring with its defaults (a 4 MiB vector) on 3, 5, 6 and 7 of the lab's 8 hosts, rank
# counts that do not divide it into 4 x n: every rank exits 0, finds every element right and
# prints the same result (iterations, time, bus bandwidth, the ring's checks); then SIGTERM to
# one rank of a long run ends every rank after the same iteration, with the same result.
set -euo pipefail

bin=${1:?usage: agent_ring.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test ar

lab up --fabric-only >/dev/null
hosts=(h0 h1 h2 h3 h4 h5 h6 h7)
for h in "${hosts[@]}"; do
    bgx "$h" "$bin/mrc-agent" --topology "$topo" --host "$h" >"$work/agent-$h.log" 2>&1
    pids+=($!)
done
for h in "${hosts[@]}"; do
    for _ in $(seq 50); do nsx "$h" "$bin/mrc-perf" status >/dev/null 2>&1 && break; sleep 0.1; done
    nsx "$h" "$bin/mrc-perf" status >/dev/null || fail "the agent of $h did not come up"
done
declare -A addr
for h in "${hosts[@]}"; do addr[$h]=$(lab addr "$h"); done
echo "PASS: eight agents up"

# ring NAME HOST... [-- OPTION...]: one rank per host in the background, in that ring order,
# each with its JSON in $work/NAME-HOST.json; their processes in $ring_pids
ring() {
    local name=$1 h list=() opts=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do list+=("$1"); shift; done
    [ $# -gt 0 ] && shift && opts=("$@")
    local csv
    csv=$(for h in "${list[@]}"; do echo "${addr[$h]}"; done | paste -sd,)
    ring_pids=()
    for h in "${list[@]}"; do
        bgx "$h" "$bin/mrc-perf" ring --hosts "$csv" "${opts[@]}" >"$work/$name-$h.json" \
            2>"$work/$name-$h.log"
        ring_pids+=($!)
        pids+=($!)
    done
}

# settle NAME SECS HOST...: every rank must exit 0 within SECS (the rest are killed)
settle() {
    local name=$1 secs=$2 i=0 rc h watchdog
    shift 2
    (sleep "$secs" && kill "${ring_pids[@]}" 2>/dev/null) &
    watchdog=$!
    for h in "$@"; do
        rc=0
        wait "${ring_pids[$i]}" || rc=$?
        i=$((i + 1))
        [ "$rc" = 0 ] || fail "$name: the rank on $h exited $rc"
    done
    kill "$watchdog" 2>/dev/null || true
}

# same NAME HOST...: every rank's result is the ring's (every element right, the ranks
# agreed), and the same on every rank but for its rank and its own part; prints a summary
same() {
    python3 - "$work" "$@" <<'PYEOF'
import json, sys
work, name, hosts = sys.argv[1], sys.argv[2], sys.argv[3:]
n, shared = len(hosts), []
for rank, h in enumerate(hosts):
    text = "".join(l for l in open(f"{work}/{name}-{h}.json") if not l.startswith('{"progress'))
    r = json.loads(text)
    local = r.pop("local")
    assert r.pop("rank") == rank, f"{h}: rank {r.get('rank')}, want {rank}"
    assert r["ranks"] == n and r["size"] == 4 << 20, f"{h}: {r['ranks']} ranks, {r['size']} bytes"
    assert r["agreed"] and not r["stalled"] and r["ranks_failed"] == 0, f"{h}: {r}"
    assert r["iterations"] > 0 and r["elements_bad"] == 0 and r["errors"] == 0, f"{h}: {r}"
    assert r["elements_checked"] == n * r["iterations"] * (1 << 20), f"{h}: {r}"
    assert local["iterations"] == r["iterations"], f"{h}: its own {local['iterations']}"
    assert local["elements_bad"] == 0 and not local["qp_error"], f"{h}: {local}"
    shared.append(r)
for h, r in zip(hosts, shared):
    assert r == shared[0], f"{h} printed {r}, {hosts[0]} {shared[0]}"
r = shared[0]
print(f"{r['iterations']} iterations in {r['seconds']:.2f} s, {r['busbw_gbps']:.3f} Gb/s busbw")
PYEOF
}

# the orders mix the T0s and planes' ports; 6 and 7 ranks put the ring's ends far apart
for order in "h0 h3 h6" "h7 h1 h4 h2 h5" "h1 h6 h2 h5 h3 h4" "h6 h0 h5 h1 h4 h2 h3"; do
    read -ra ranks <<<"$order"
    n=${#ranks[@]}
    ring "r$n" "${ranks[@]}" -- --duration 2
    settle "r$n" 60 "${ranks[@]}"
    got=$(same "r$n" "${ranks[@]}" 2>"$work/same-r$n.log") ||
        fail "ring of $n: the ranks' results: $(tail -n 1 "$work/same-r$n.log")"
    echo "PASS: ring of $n ranks with the defaults, the same result on every rank: $got"
done

# a long run that one rank is told to end: all end after the same iteration
ranks=(h2 h7 h0 h5 h3)
ring stop "${ranks[@]}" -- --duration 600 --progress 200
for _ in $(seq 100); do
    grep -q '"iterations":[1-9]' "$work/stop-h2.json" 2>/dev/null && break
    sleep 0.1
done
t0=$(now_ms)
kill -TERM "${ring_pids[3]}"
settle stop 30 "${ranks[@]}"
t1=$(now_ms)
got=$(same stop "${ranks[@]}" 2>"$work/same-stop.log") ||
    fail "SIGTERM to one rank: the ranks' results: $(tail -n 1 "$work/same-stop.log")"
[ $((t1 - t0)) -lt 10000 ] || fail "the ring took $((t1 - t0)) ms to end after SIGTERM"
echo "PASS: SIGTERM to one rank of five ends them all in $((t1 - t0)) ms, the same result: $got"
