#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-agent on the lab fabric: agents move data between hosts over every plane with every byte
# checked (two agents, then four at once), and garbage sent at an agent's port changes nothing.
set -euo pipefail

bin=${1:?usage: agent_lab.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test ag

lab up --fabric-only >/dev/null
agent() {
    bgx "$1" "$bin/mrc-agent" --topology "$topo" --host "$1" >"$work/agent-$1.log" 2>&1
    pids+=($!)
}
for h in h0 h2 h5 h7; do agent "$h"; done
for h in h0 h2 h5 h7; do
    for _ in $(seq 50); do nsx "$h" "$bin/mrc-perf" status >/dev/null 2>&1 && break; sleep 0.1; done
    nsx "$h" "$bin/mrc-perf" status >/dev/null || fail "the agent of $h did not come up"
done
echo "PASS: four agents up"

# one bandwidth run from $1 to $2 in the background; its JSON lands in $work/$1-$2.json
run() {
    local src=$1 dst=$2 port=$3
    shift 3
    bgx "$dst" "$bin/mrc-perf" server --once --port "$port" >"$work/srv-$dst.log" 2>&1
    pids+=($!)
    sleep 0.2
    bgx "$src" "$bin/mrc-perf" client "$(lab addr "$dst")" --port "$port" "$@" \
        >"$work/$src-$dst.json" 2>"$work/cli-$src.log"
    pids+=($!)
    clients+=($!)
}
clients=()
wait_clients() {
    local c
    for c in "${clients[@]}"; do wait "$c" || true; done
    clients=()
}
check() {
    local f="$work/$1-$2.json" ok bad
    [ -s "$f" ] || fail "$1 -> $2: no result"
    ok=$(jq_ server bytes_verified <"$f")
    bad=$(jq_ server bytes_bad <"$f")
    [ "$bad" = 0 ] || fail "$1 -> $2: $bad bytes wrong"
    [ "$ok" -gt 0 ] || fail "$1 -> $2: nothing arrived"
    [ "$(jq_ client transport qp_error <"$f")" = False ] || fail "$1 -> $2: the QP failed"
    [ "$(jq_ server bytes <"$f")" = "$(jq_ client bytes <"$f")" ] ||
        fail "$1 -> $2: the sink saw other than what the source completed"
    echo "PASS: $1 -> $2: $ok bytes checked at $(jq_ client gbps <"$f" | cut -c1-5) Gb/s"
}
planes_used() {
    local h=$1 st p n
    st=$(nsx "$h" "$bin/mrc-perf" status)
    n=$(jq_ io tx_port <<<"$st" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    for p in $(seq 0 $((n - 1))); do
        [ "$(jq_ io tx_port "$p" <<<"$st")" -gt 100 ] || fail "$h sent nothing on plane $p"
    done
    # once the next hops are known the agent frames its packets itself
    [ "$(jq_ io tx_frames <<<"$st")" -gt 100 ] || fail "$h framed none of its packets"
}

# two agents
run h0 h5 7471 --duration 2
wait_clients
check h0 h5
planes_used h0
planes_used h5
echo "PASS: h0 and h5 used every plane both ways"

# four agents at once, each sending to the next and receiving from the one before
run h0 h2 7472 --duration 3
run h2 h5 7473 --duration 3
run h5 h7 7474 --duration 3
run h7 h0 7475 --duration 3 --qps 2
wait_clients
check h0 h2
check h2 h5
check h5 h7
check h7 h0

# garbage at an agent's port: from its T0, random bytes and mangled MRC-looking packets to the
# address the port decapsulates; the agent counts them and nothing else changes
t0=$(awk -v h=h5 '$1 == h && $2 == 0 {print $7}' < <("$bin/mrcctl" -t "$topo" topo hosts --no-header))
uaddr=$(awk -v h=h5 '$1 == h && $2 == 0 {print $5}' < <("$bin/mrcctl" -t "$topo" topo hosts --no-header))
before=$(nsx h5 "$bin/mrc-perf" status | jq_ io rx_garbage)
garbage "$t0" "$uaddr" 4791
sleep 0.5
after=$(nsx h5 "$bin/mrc-perf" status | jq_ io rx_garbage)
[ "$after" -gt "$before" ] || fail "the agent did not see the garbage ($before -> $after)"
kill -0 "${pids[2]}" 2>/dev/null || fail "the agent of h5 died of garbage"
run h0 h5 7476 --duration 1
wait_clients
check h0 h5
echo "PASS: $((after - before)) garbage packets refused and counted; h5 still carries data"

# a ring all-reduce over the four agents, every element of every result checked
hosts=$(for h in h0 h2 h5 h7; do lab addr "$h"; done | paste -sd,)
rings=()
for h in h2 h5 h7 h0; do
    bgx "$h" "$bin/mrc-perf" ring --hosts "$hosts" --duration 3 --port 7480 \
        >"$work/ring-$h.json" 2>"$work/ring-$h.log"
    rings+=($!)
    pids+=($!)
done
for r in "${rings[@]}"; do wait "$r" || fail "a rank of the ring failed"; done
for h in h0 h2 h5 h7; do
    it=$(jq_ iterations <"$work/ring-$h.json")
    [ "$it" -gt 0 ] || fail "rank $h finished no iteration"
    [ "$(jq_ elements_bad <"$work/ring-$h.json")" = 0 ] || fail "rank $h summed wrong"
done
echo "PASS: ring all-reduce over 4 agents: $it iterations of $(jq_ size <"$work/ring-h0.json")" \
    "bytes, every element right, $(jq_ busbw_gbps <"$work/ring-h0.json" | cut -c1-4) Gb/s busbw"
