#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-agent's ECMP mode, for fabrics without uSID support: no outer header, the EV only in the
# inner UDP source port. Two hosts of the lab topology joined port to port by a veth per
# plane (a fabric of plain IPv6 routers would sit between them); data moves over both planes
# with every byte checked, and garbage at a port changes nothing.
set -euo pipefail

bin=${1:?usage: agent_ecmp.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root for network namespaces"
    exit 77
fi
a=h0 b=h5
na="ec$$-$a" nb="ec$$-$b"
work=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$na" 2>/dev/null || true
    ip netns del "$nb" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
# the inner address of host $1's port $2
addr() { awk -v h="$1" -v p="$2" '$1 == h && $2 == p {print $4}' < <("$bin/mrcctl" -t "$topo" topo hosts --no-header); }

ip netns add "$na"
ip netns add "$nb"
for n in "$na" "$nb"; do
    ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
    ip -n "$n" link set lo up
done
for p in 0 1; do
    ip link add "eth$p" netns "$na" type veth peer name "eth$p" netns "$nb"
    for side in "$na $a $b" "$nb $b $a"; do
        read -r n self peer <<<"$side"
        ip -n "$n" link set "eth$p" mtu 9000 up
        ip netns exec "$n" ethtool -K "eth$p" tx off >/dev/null 2>&1 || true
        ip -n "$n" addr add "$(addr "$self" "$p")/128" dev "eth$p" nodad
        ip -n "$n" -6 route add "$(addr "$peer" "$p")/128" dev "eth$p"
    done
done

for side in "$na $a" "$nb $b"; do
    read -r n h <<<"$side"
    ip netns exec "$n" "$bin/mrc-agent" --topology "$topo" --host "$h" --mode ecmp \
        >"$work/agent-$h.log" 2>&1 &
    pids+=($!)
done
for n in "$na" "$nb"; do
    for _ in $(seq 50); do ip netns exec "$n" "$bin/mrc-perf" status >/dev/null 2>&1 && break; sleep 0.1; done
done
ip netns exec "$nb" "$bin/mrc-perf" server --once >"$work/srv.log" 2>&1 &
pids+=($!)
sleep 0.2
# out of band over plane 0's link: plain TCP between the ports' own addresses
ip netns exec "$na" "$bin/mrc-perf" client "$(addr "$b" 0)" --duration 2 >"$work/bw.json" ||
    fail "the transfer failed"
[ "$(jq_ server bytes_bad <"$work/bw.json")" = 0 ] || fail "bytes arrived wrong"
[ "$(jq_ server bytes_verified <"$work/bw.json")" -gt 0 ] || fail "nothing arrived"
st=$(ip netns exec "$na" "$bin/mrc-perf" status)
for p in 0 1; do
    [ "$(jq_ io tx_port "$p" <<<"$st")" -gt 100 ] || fail "nothing left by plane $p"
done
echo "PASS: ECMP mode: $(jq_ server bytes_verified <"$work/bw.json") bytes checked over both" \
    "planes at $(jq_ client gbps <"$work/bw.json" | cut -c1-4) Gb/s"

before=$(ip netns exec "$nb" "$bin/mrc-perf" status | jq_ io rx_garbage)
ip netns exec "$na" python3 - "$(addr "$b" 0)" <<'EOF'
import os, random, socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
random.seed(9)
for i in range(1000):
    s.sendto(os.urandom(random.choice([0, 1, 12, 40, 100, 1000, 4200])), (sys.argv[1], 4791))
EOF
sleep 0.5
after=$(ip netns exec "$nb" "$bin/mrc-perf" status | jq_ io rx_garbage)
[ "$after" -gt "$before" ] || fail "the agent did not see the garbage"
kill -0 "${pids[1]}" || fail "the agent died of garbage"
echo "PASS: ECMP mode: $((after - before)) garbage datagrams refused and counted"
