#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proof on the kernel: a lab fabric of namespaces, every switch installed with mrcctl, one
# IPv6-in-IPv6 packet over every EV between every pair of host ports; then cables down.
set -euo pipefail

bin=${1:?usage: lab_routes.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root for network namespaces"
    exit 77
fi
prefix="it$$"
lab() { "$root/deploy/lab/lab.sh" -b "$bin" -t "$topo" -p "$prefix" "$@"; }
left() { ip netns list | awk '{print $1}' | grep -c "^$1-" || true; }
trap 'lab down' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

lab up --fabric-only
echo "PASS: lab up ($(left "$prefix") namespaces)"

# a second install changes nothing
while read -r name _; do
    out=$("$bin/mrcctl" -t "$topo" routes install --switch "$name" --netns "$prefix-$name" 2>&1)
    case $out in
    *": 0 to add, 0 to change, 0 to remove,"*" 0 conflicts"*) ;;
    *) fail "second install of $name changed something: $out" ;;
    esac
done < <("$bin/mrcctl" -t "$topo" topo switches --no-header)
echo "PASS: a second install of every switch changes nothing"

paths() { "$bin/lab-paths" -t "$topo" -p "$prefix" "$@"; }
paths || fail "not every EV arrived"
echo "PASS: every EV between every pair of host ports arrives through its T1"

lab link-down p0-t0-0 p0-t1-1
paths --down p0-t0-0,p0-t1-1 || fail "with p0-t0-0–p0-t1-1 down, not exactly its EVs failed"
if paths --down p0-t0-0,p0-t1-0 2>/dev/null >/dev/null; then
    fail "the check passed with the wrong cable named: it cannot tell"
fi
lab link-up p0-t0-0 p0-t1-1
echo "PASS: with one T0–T1 link down, exactly the EVs over it fail"

lab link-down h0 p0-t0-0
paths --down h0,p0-t0-0 || fail "with h0's plane-0 port down, not exactly its EVs failed"
lab link-up h0 p0-t0-0
paths || fail "after the links came back, not every EV arrived"
echo "PASS: a NIC–T0 link down fails exactly its EVs; all recover"

# a flapping cable goes down and up on its own until healed; then every EV arrives again
cable_if() { "$bin/mrcctl" -t "$topo" topo cables --no-header | awk -v a="$1" -v b="$2" '$3 == a && $6 == b {print $5}'; }
upif=$(cable_if p0-t0-1 p0-t1-0)
lab fault flap p0-t0-1 p0-t1-0 1
seen=
for _ in $(seq 40); do
    state=$(ip -n "$prefix-p0-t0-1" -br link show "$upif" | awk '{print $2}')
    case " $seen " in *" $state "*) ;; *) seen="$seen $state" ;; esac
    sleep 0.1
done
case $seen in *DOWN*UP* | *UP*DOWN*) ;; *) fail "the flapping cable was only:$seen" ;; esac
lab heal p0-t0-1 p0-t1-0
[ "$(ip -n "$prefix-p0-t0-1" -br link show "$upif" | awk '{print $2}')" = UP ] ||
    fail "the healed cable stayed down"
pgrep -f -- "-p $prefix .*flap-loop" >/dev/null && fail "the flapping went on after the heal"
paths || fail "after the flapping cable healed, not every EV arrived"
echo "PASS: a flapping cable goes down and up until healed, then every EV arrives"

# an interrupted build leaves nothing behind
set -m
for sig in INT TERM; do
    p2="${prefix}i"
    "$root/deploy/lab/lab.sh" -b "$bin" -t "$topo" -p "$p2" up --fabric-only >/dev/null 2>&1 &
    pid=$!
    sleep 0.3
    kill -"$sig" "$pid" 2>/dev/null || true
    wait "$pid" || true
    [ "$(left "$p2")" -eq 0 ] || { "$root/deploy/lab/lab.sh" -p "$p2" down; fail "SIG$sig left namespaces"; }
done
set +m
echo "PASS: an interrupted lab build removes its namespaces"

lab down
[ "$(left "$prefix")" -eq 0 ] || fail "lab down left namespaces"
echo "PASS: lab down leaves no namespace"
