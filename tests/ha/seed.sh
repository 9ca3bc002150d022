#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A controller that ran alone joins etcd: the first leader gives an etcd without a denylist
# its store's, 300 entries (more than etcd takes in one transaction, --max-txn-ops 128), at its
# version; etcd then holds every entry and a second controller's store the same.
set -euo pipefail
bin=${1:?usage: seed.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=$root/deploy/topologies/lab.json
command -v etcd >/dev/null || { echo "FAIL no etcd (deploy/install-deps.sh installs etcd-server)"; exit 1; }
# shellcheck source=tests/ha/etcd_cluster.sh
source "$root/tests/ha/etcd_cluster.sh"
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
work=$(mktemp -d)
cleanup() {
    # no bare wait: the etcd members are this script's children until etcd_down stops them
    pkill -f -- "--db $work/" 2>/dev/null || true
    etcd_down "$work"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
ctl_tokens "$work/tokens"
ctl() { # LOG DB [ARGS]: a controller on loopback; its port on stdout
    local log=$1 db=$2
    shift 2
    : >"$log"
    "$bin/mrc-controller" --topology "$topo" --db "$db" --tokens "$work/tokens" \
        --listen 127.0.0.1:0 --web '' --rate-limit 0 "$@" >"$log" 2>&1 &
    served_port "$log" "$!"
}
list() { # PORT: version, epoch and count of its denylist
    curl -sf -H "Authorization: Bearer tok-reader-000000000001" "http://127.0.0.1:$1/api/v1/denylist" |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["version"], j["epoch"], len(j["entries"]))'
}

port=$(ctl "$work/alone.log" "$work/a.db")
alone=$(pgrep -f -- "--db $work/a.db" | head -1)
for i in $(seq 300); do
    day=$((1 + i / 24)) hour=$((i % 24))
    curl -sf -o /dev/null -X POST -H "Authorization: Bearer tok-operator-0000000001" \
        -H 'Content-Type: application/json' "http://127.0.0.1:$port/api/v1/denylist?force=true" \
        -d "{\"element\":\"p0-t1-0\",\"reason\":\"seed $i\",\"window\":{\"start\":\"2033-01-01T00:00:00Z\",\"end\":\"2033-02-$(printf %02d "$day")T$(printf %02d "$hour"):00:00Z\"}}" ||
        check false "the controller alone took add $i"
done
read -r v _ n < <(list "$port")
check '[ "$v" = 300 ] && [ "$n" = 300 ]' "alone: 300 entries at version 300 ($n at $v)"
kill "$alone"
while kill -0 "$alone" 2>/dev/null; do sleep 0.05; done

etcd_up "$work"
p1=$(ctl "$work/c1.log" "$work/a.db" --etcd "$ETCD_ENDPOINTS" --name c1)
for _ in $(seq 100); do grep -q "etcd held no denylist" "$work/c1.log" && break; sleep 0.1; done
check 'grep -q "etcd held no denylist: it has this store.s 300 entries, version 300" "$work/c1.log"' \
    "the first leader seeds etcd with its store's 300 entries"
keys=$(ETCDCTL_API=3 etcdctl --endpoints "$ETCD_ENDPOINTS" get --prefix /mrcfab/deny/ --keys-only | grep -c . || true)
check '[ "$keys" = 300 ]' "etcd holds 300 entry keys ($keys)"
p2=$(ctl "$work/c2.log" "$work/b.db" --etcd "$ETCD_ENDPOINTS" --name c2)
for _ in $(seq 100); do [ "$(list "$p2" 2>/dev/null | cut -d' ' -f3)" = 300 ] && break; sleep 0.1; done
read -r v2 e2 n2 < <(list "$p2")
read -r v1 e1 n1 < <(list "$p1")
check '[ "$v2 $n2" = "300 300" ] && [ "$v1 $e1 $n1" = "$v2 $e2 $n2" ]' \
    "a second controller's new store is the same (version $v2, epoch $e2, $n2 entries; the leader's $v1 $e1 $n1)"
finish seed
