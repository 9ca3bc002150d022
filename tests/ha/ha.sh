#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The controllers' high availability on a real three-member etcd on loopback: kill -9 of the
# leader KILLS times amid a stream of writes, etcd members stopped, the leader cut off from etcd
# (tests/ha/ha_failover.py says what each checks).
set -euo pipefail
bin=${1:?usage: ha.sh BINDIR [KILLS]}
kills=${2:-20}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v etcd >/dev/null || { echo "FAIL no etcd (deploy/install-deps.sh installs etcd-server)"; exit 1; }
# shellcheck source=tests/ha/etcd_cluster.sh
source "$root/tests/ha/etcd_cluster.sh"
work=$(mktemp -d)
cleanup() {
    pkill -KILL -f -- "--db $work/" 2>/dev/null || true
    etcd_down "$work"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
etcd_up "$work"
python3 "$root/tests/ha/ha_failover.py" "$bin" "$root/deploy/topologies/lab.json" "$work" \
    "$ETCD_ENDPOINTS" "$kills"
