#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The demo: a lab fabric of network namespaces built from one topology file, every switch's
# static SRv6 uSID table installed over netlink, and packets crossing it over every EV.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
keep=false
topo=deploy/topologies/lab.json
while [ $# -gt 0 ]; do
    case $1 in
    --keep) keep=true ;;
    -t) topo=$2; shift ;;
    *) echo "usage: $0 [--keep] [-t TOPOLOGY]" >&2; exit 2 ;;
    esac
    shift
done
if [ "$(id -u)" -ne 0 ]; then
    echo "demo: run as root (it builds network namespaces)" >&2
    exit 1
fi
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "installing dependencies and building"
deploy/install-deps.sh
cmake -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
bin=build/bin
mrcctl() { "$bin/mrcctl" -t "$topo" "$@"; }
lab() { deploy/lab/lab.sh -b "$bin" -t "$topo" -p demo "$@"; }
paths() { "$bin/lab-paths" -t "$topo" -p demo "$@"; }

say "the topology: $topo"
mrcctl topo validate

say "the static table of one T0, as the kernel will hold it"
mrcctl routes render --switch p0-t0-0 --format iproute2

if ! $keep; then
    trap 'lab down >/dev/null 2>&1 || true' EXIT
fi
trap 'lab down >/dev/null 2>&1; exit 130' INT TERM
say "building the lab: a namespace per switch and host, a veth per cable, tables installed"
lab up
mrcctl routes install --switch p0-t1-1 --netns demo-p0-t1-1 2>/dev/null
echo "(a second install of p0-t1-1 changes nothing)"

say "the paths from h0 to h5: one EV per T1 on each plane, the path written in the address"
mrcctl path --from h0:0 --to h5:0
mrcctl path --from h0:1 --to h5:1

say "one IPv6-in-IPv6 packet over each of those EVs; every switch on the way shifts its uSID"
paths --from h0 --to h5 --verbose | grep -v '^{'

say "one packet over every EV between every pair of host ports"
paths

say "the cable p0-t0-0 -- p0-t1-1 goes down: exactly the EVs over it are lost"
lab link-down p0-t0-0 p0-t1-1
paths --down p0-t0-0,p0-t1-1
lab link-up p0-t0-0 p0-t1-1

say "it comes back: every EV arrives again"
paths

if $keep; then
    say "the lab stays up (deploy/lab/lab.sh -p demo down removes it); try:"
    echo "  ip netns exec demo-p0-t0-0 ip -6 -s route show proto 201"
else
    say "done; the lab is removed (--keep leaves it up)"
fi
