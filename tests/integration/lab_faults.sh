#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lab.sh's faults on a fabric-only lab: a heal names a fault by either end of its cable (or by
# the cable, or --all), status lists what is in force, a fractional loss drops its share of
# packets (the nftables counters), and bad input is exit 2 with one sentence naming the word.
# shellcheck disable=SC2016 # check() evaluates its expression itself, variables and all
set -euo pipefail

bin=${1:?usage: lab_faults.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
# shellcheck source=tests/check.sh
source "$root/tests/check.sh" # its fail counts, where agent_common's would stop
lab_test lf

# run ARGS...: lab.sh ARGS, its status in $rc, its stdout in $out, its stderr in $err
run() {
    rc=0
    lab "$@" >"$work/out" 2>"$work/err" || rc=$?
    out=$(cat "$work/out")
    err=$(cat "$work/err")
}
# bad_input WORD ARGS...: lab.sh ARGS is exit 2, one line on stderr naming WORD, no stdout
bad_input() {
    local word=$1
    shift
    run "$@"
    check '[ "$rc" = 2 ] && [ -z "$out" ] && [ "$(wc -l <"$work/err")" = 1 ] &&
        grep -qF -- "$word" "$work/err"' "lab.sh $* is exit 2 naming '$word': ${err:-rc $rc}"
}
# no_table X: element X's namespace holds no fault table
no_table() { ! nsx "$1" nft list table inet lab_fault >/dev/null 2>&1; }
fault_lines() { lab status | grep -c '^fault ' || true; }

# --- usage and bad input, before and after the lab is up -----------------------------------
"$root/deploy/lab/lab.sh" --help >"$work/help" 2>"$work/err" && rc=0 || rc=$?
check '[ "$rc" = 0 ] && grep -q "^usage: lab.sh" "$work/help" && [ ! -s "$work/err" ] &&
    grep -q "heal --all" "$work/help"' "lab.sh --help prints the usage on stdout, exit 0"
"$root/deploy/lab/lab.sh" -h >/dev/null && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "lab.sh -h is exit 0"
bad_input "--frob" --frob status
bad_input "frob" frob
check 'grep -q -- "--help" "$work/err"' "an unknown command points at --help"
run fault loss p0-t0-2 p0-t1-1 1
check '[ "$rc" = 1 ] && grep -q "no lab of prefix $prefix is up" "$work/err"' \
    "a fault on a lab that is not up is exit 1 (the system), saying so: $err"

lab up --fabric-only >/dev/null
run status
check '[ "$rc" = 0 ] && grep -qx "faults: none" "$work/out"' "a new lab's status lists no fault"

bad_input "p9-t0-0" fault loss p9-t0-0 p0-t1-0 1
bad_input "no cable joins p0-t0-0 and p0-t0-1" fault loss p0-t0-0 p0-t0-1 1
bad_input "h0's cables go to" link-down h0 p0-t0-1
bad_input "h0:7" fault loss h0:7 p0-t0-0 1
for pct in 101 100.5 abc -1 0.0001 1,5; do
    bad_input "'$pct'" fault loss p0-t0-0 p0-t1-0 "$pct"
done
bad_input "'oneway'" fault loss p0-t0-0 p0-t1-0 1 oneway
bad_input "A B PCT [one-way]" fault loss p0-t0-0 p0-t1-0
bad_input "'h0' is a host" fault blackhole h0
bad_input "'0'" fault flap p0-t0-0 p0-t1-0 0
bad_input "'slow'" fault flap p0-t0-0 p0-t1-0 slow
bad_input "'trip'" fault trip p0-t0-0
bad_input "'nosuch'" heal nosuch
bad_input "'--all x'" heal --all x
bad_input "'agent-h9'" restart agent-h9
bad_input "'h9'" addr h9
bad_input "'x'" reboot p0-t1-0 x
bad_input "'p0-t0-0~p0-t0-1'" drain p0-t0-0~p0-t0-1
bad_input "'1'" up --window-ms 1
check '[ "$(fault_lines)" = 0 ]' "no bad input left a fault behind"

# --- heal by either end of the cable --------------------------------------------------------
# one-way from A to B: the rule is in B's namespace; healing A must find it there
run fault loss p0-t0-2 p0-t1-1 2 one-way
check '[ "$rc" = 0 ] && ! no_table p0-t1-1 && no_table p0-t0-2' \
    "a one-way loss from p0-t0-2 to p0-t1-1 is a rule where it arrives, at p0-t1-1"
check 'lab status | grep -qx "fault loss p0-t0-2~p0-t1-1 2 % one-way, from p0-t0-2 to p0-t1-1 (dropped [0-9]* of [0-9]* packets)"' \
    "status lists it: kind, cable, percent, direction"
run heal p0-t0-2
check '[ "$rc" = 0 ] && grep -q "^lab: healed loss p0-t0-2~p0-t1-1 2 % one-way" "$work/out" &&
    no_table p0-t1-1 && [ "$(fault_lines)" = 0 ]' "heal p0-t0-2 removes the loss it sends into p0-t1-1"
lab fault loss p0-t0-2 p0-t1-1 2 one-way
run heal p0-t1-1
check '[ "$rc" = 0 ] && no_table p0-t1-1 && [ "$(fault_lines)" = 0 ]' \
    "heal p0-t1-1, the other end, removes it too"

# both ways, named by a host port, healed by the cable in the other order
lab fault loss h0:0 p0-t0-0 1
check '! no_table h0 && ! no_table p0-t0-0 &&
    lab status | grep -qx "fault loss p0-t0-0~h0 1 % both ways (dropped [0-9]* of [0-9]* packets)"' \
    "a loss both ways is a rule at each end, listed once"
run heal p0-t0-0 h0
check '[ "$rc" = 0 ] && no_table h0 && no_table p0-t0-0 && [ "$(fault_lines)" = 0 ]' \
    "heal p0-t0-0 h0 removes both directions"
lab fault loss h1 p0-t0-0 1
lab fault loss h1 p1-t0-0 1
lab heal h1:1 >/dev/null
check 'no_table p1-t0-0 && ! no_table p0-t0-0' "heal h1:1 heals that port's cable alone"
lab heal h1 >/dev/null

run heal p0-t0-0
check '[ "$rc" = 0 ] && [ "$(wc -l <"$work/out")" = 1 ] &&
    grep -q "no fault of p0-t0-0 is in force" "$work/out"' \
    "a heal that finds nothing says so, exit 0: $out"

# --- heal --all: every kind at once ---------------------------------------------------------
# shellcheck disable=SC2034 # both used in the checks' expressions
upif=$("$bin/mrcctl" -t "$topo" topo cables --no-header | awk '$3 == "p0-t0-1" && $6 == "p0-t1-0" {print $5}')
# shellcheck disable=SC2034
downif=$("$bin/mrcctl" -t "$topo" topo cables --no-header | awk '$3 == "p1-t0-0" && $6 == "h1" {print $5}')
lab fault loss p0-t0-3 p0-t1-0 0.5 one-way
lab fault blackhole p1-t1-1
lab fault flap p0-t0-1 p0-t1-0 1
lab link-down p1-t0-0 h1
lab status >"$work/status"
check 'grep -qx "fault loss p0-t0-3~p0-t1-0 0.5 % one-way, from p0-t0-3 to p0-t1-0 (dropped [0-9]* of [0-9]* packets)" "$work/status" &&
    grep -qx "fault blackhole p1-t1-1 (dropped [0-9]* packets)" "$work/status" &&
    grep -qx "fault flap p0-t0-1~p0-t1-0 every 1 s" "$work/status" &&
    grep -q "^fault down p1-t0-0~h1 " "$work/status" && [ "$(grep -c "^fault " "$work/status")" = 4 ]' \
    "status lists a loss, a blackhole, a flapping cable and one taken down: $(grep "^fault" "$work/status" | paste -sd';' -)"
run heal --all
left=0
for e in p0-t1-0 p1-t1-1 p0-t0-1 p1-t0-0 h1; do no_table "$e" || left=$((left + 1)); done
check '[ "$rc" = 0 ] && [ "$(grep -c "^lab: healed " "$work/out")" = 4 ] && [ "$left" = 0 ] &&
    [ "$(fault_lines)" = 0 ] && ! pgrep -f -- "-p $prefix .*flap-loop" >/dev/null' \
    "heal --all removes all four: $out"
check '[ "$(ip -n "$prefix-p0-t0-1" -br link show "$upif" | awk "{print \$2}")" = UP ] &&
    [ "$(ip -n "$prefix-p1-t0-0" -br link show "$downif" | awk "{print \$2}")" = UP ]' \
    "the flapped cable and the one taken down are up again"
"$bin/lab-paths" -t "$topo" -p "$prefix" >"$work/paths" 2>&1 && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "after heal --all every EV between every pair of host ports arrives"
run heal --all
check '[ "$rc" = 0 ] && grep -q "^lab: no fault is in force: nothing to heal" "$work/out"' \
    "heal --all on a clean lab says there was nothing, exit 0"

# --- a fraction of a percent: one packet in 500 ---------------------------------------------
# 100000 UDP packets from h0 over its plane-0 port (the block's route with the lowest metric)
# into p0-t0-0, which drops 0.2 % of them: 200 expected, a standard deviation of 14
lab fault loss h0 p0-t0-0 0.2 one-way
check 'nsx p0-t0-0 nft list table inet lab_fault | grep -q "numgen random mod 100000 < 200 counter"' \
    "0.2 % is numgen over 100000 below 200"
block=$("$bin/mrcctl" -t "$topo" topo hosts --no-header | awk '$1 == "h1" && $2 == 0 {print $5}')
nsx h0 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in range(100000):
    s.sendto(b"lab_faults", (sys.argv[1], 9))
' "$block"
read -r dropped arrived < <(nsx p0-t0-0 nft -j list table inet lab_fault | python3 -c '
import json, sys
c = [x["counter"]["packets"] for o in json.load(sys.stdin)["nftables"]
     for x in o.get("rule", {}).get("expr", []) if "counter" in x]
print(c[1], c[0])')
check '[ "$arrived" -ge 100000 ] && [ "$dropped" -ge 140 ] && [ "$dropped" -le 260 ]' \
    "0.2 % loss dropped $dropped of the $arrived packets that arrived (140 to 260 expected)"
# status's counts, a moment later: what arrived since (neighbour discovery) at most added
# shellcheck disable=SC2034
read -r d2 n2 < <(lab status | sed -n 's/^fault loss h0~p0-t0-0 0.2 % one-way, from h0 to p0-t0-0 (dropped \([0-9]*\) of \([0-9]*\) packets)$/\1 \2/p')
check '[ "${d2:-0}" -ge "$dropped" ] && [ "${d2:-0}" -le $((dropped + 5)) ] &&
    [ "${n2:-0}" -ge "$arrived" ] && [ "${n2:-0}" -le $((arrived + 20)) ]' \
    "status shows the loss with its counters: $(lab status | grep "^fault")"
check 'no_table h0' "the one-way loss leaves the other direction alone"
lab fault loss h0 p0-t0-0 0 one-way
check 'no_table p0-t0-0 && [ "$(fault_lines)" = 0 ]' "a loss of 0 % removes it"

lab down
check '[ "$(ip netns list | grep -c "^$prefix-")" = 0 ]' "lab down leaves no namespace"
finish lab_faults
