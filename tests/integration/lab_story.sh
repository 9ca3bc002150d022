#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole system end to end (issue 9): `lab.sh up` brings up the fabric with the controller,
# an agent and a prober node per host and the localizer; deploy/lab/story.py runs a ring
# all-reduce over every host through a flapping link, a 2 % gray link, a T1 drained, rebooted
# and undrained, the controller killed and restarted, and the heal, checking every claim
# (bandwidth >= 75 %, localization within 30 s and nothing else denied, no packet toward the
# drained T1, the lift after the hold, no entry lost, a tshark decode of the wire). Then
# `lab.sh down` must leave nothing behind, and an `up` interrupted while it starts the
# system neither.
set -euo pipefail

bin=${1:?usage: lab_story.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test ls
port=$((20000 + $$ % 20000))
labx() { lab -P "$port" "$@"; }

labx up
"$root/deploy/lab/story.py" -b "$bin" -t "$topo" -p "$prefix" -d "$work/lab" -P "$port" ||
    fail "the story failed (above)"

# nothing behind: no namespace, no root-namespace veth, no process, no nftables table; the
# folder keeps only the database, tokens and logs
left() {
    ip netns list | awk '{print $1}' | grep -c "^$1-" || true
}
leftovers() { # PREFIX DIR
    [ "$(left "$1")" -eq 0 ] || echo "namespaces: $(left "$1")"
    ! ip link show "$1-mgmt" >/dev/null 2>&1 || echo "the veth $1-mgmt"
    pgrep -f -- "$2" >/dev/null && echo "processes: $(pgrep -af -- "$2")"
    [ ! -e "$2/run" ] || echo "run files: $(ls "$2/run")"
    ! nft list tables 2>/dev/null | grep -q lab_fault || echo "an nftables table"
}
labx down
out=$(leftovers "$prefix" "$work/lab")
[ -z "$out" ] || fail "lab down left: $out"
[ -s "$work/lab/ctl.db" ] || fail "lab down removed the database"
echo "PASS: lab down leaves no namespace, veth, process or nftables rule; the database stays"

# interrupted while it builds the fabric (0.3 s in), and once the controller runs
set -m
for at in 0.3 controller; do
    p2="${prefix}i"
    "$root/deploy/lab/lab.sh" -b "$bin" -t "$topo" -p "$p2" -d "$work/lab2" -P $((port + 2)) up \
        >"$work/interrupted.log" 2>&1 &
    pid=$!
    if [ "$at" = controller ]; then
        for _ in $(seq 100); do [ -e "$work/lab2/run/controller.pid" ] && break; sleep 0.05; done
    else
        sleep "$at"
    fi
    kill -INT "$pid" 2>/dev/null || true
    wait "$pid" || true
    out=$(leftovers "$p2" "$work/lab2")
    if [ -n "$out" ]; then
        "$root/deploy/lab/lab.sh" -p "$p2" -d "$work/lab2" down
        fail "an up interrupted at $at left: $out ($(cat "$work/interrupted.log"))"
    fi
done
set +m
echo "PASS: an up interrupted while building the fabric or starting the system leaves nothing"
