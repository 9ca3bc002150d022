#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The demo: the lab fabric of network namespaces with the whole system on it (the controller,
# an agent and a prober node on every host, the localizer), a ring all-reduce over every host,
# and the story of deploy/lab/story.py: a flapping link, a gray link the prober localizes and
# denies, a T1 drained, rebooted and undrained, the controller killed and restarted, the gray
# link healed and its entry lifted. A line per step, every claim checked.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
keep=false
topo=deploy/topologies/lab.json
usage="usage: $0 [--keep] [-t TOPOLOGY]

Installs the Debian packages the build needs, builds, brings up the lab with the whole system
on it and plays the story (deploy/lab/story.py), every claim checked; as root.
  --keep         leave the lab up afterwards (deploy/lab/lab.sh -p demo down removes it)
  -t TOPOLOGY    the lab's topology (default deploy/topologies/lab.json)
  -h, --help     print this help and exit
exit status: 0 every claim held, 1 one did not or the system failed, 2 bad input"
while [ $# -gt 0 ]; do
    case $1 in
    --keep) keep=true ;;
    -t)
        [ $# -ge 2 ] || { echo "demo: -t needs a value (TOPOLOGY); see $0 --help" >&2; exit 2; }
        topo=$2
        shift
        ;;
    -h | --help) echo "$usage"; exit 0 ;;
    *) echo "demo: unknown option '$1'; see $0 --help" >&2; exit 2 ;;
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
lab() { deploy/lab/lab.sh -b "$bin" -t "$topo" -p demo "$@"; }

say "the topology: $topo"
"$bin/mrcctl" -t "$topo" topo validate

if ! $keep; then
    trap 'lab down >/dev/null 2>&1 || true' EXIT
fi
trap 'lab down >/dev/null 2>&1; exit 130' INT TERM
say "the lab: a namespace per switch and host, a veth per cable, every table installed; the system on it"
lab up

say "the story"
status=0
deploy/lab/story.py -b "$bin" -t "$topo" -p demo || status=$?

if $keep; then
    say "the lab stays up (deploy/lab/lab.sh -p demo down removes it); try:"
    echo "  deploy/lab/lab.sh -p demo status"
    echo "  deploy/lab/lab.sh -p demo fault loss p0-t0-3 p0-t1-0 2"
    echo "  eval \"\$(deploy/lab/lab.sh -p demo env)\"   # the controller (https), its CA, a client certificate"
    echo "  $bin/mrcctl deny ls"
else
    say "done; the lab is removed (--keep leaves it up)"
fi
exit $status
