# SPDX-License-Identifier: MIT
# A cluster of etcd members on loopback for a test, started and stopped by PID; sourced.
# etcd_up DIR [N]: N members (3), each with its data under DIR, on ports of loopback that
# nothing listens on, outside the kernel's ephemeral range (a test's client connections take
# those); sets ETCD_ENDPOINTS (comma-separated client URLs) and waits until the cluster
# answers. etcd_stop DIR I / etcd_start DIR I: member I (1..N) stopped and started again with
# its data. etcd_down DIR: every member stopped.
# shellcheck shell=bash

etcd_free_base() {
    local base used
    used=$(ss -Hltn 2>/dev/null | awk '{print $4}' | sed 's/.*://')
    for _ in $(seq 50); do
        base=$((20000 + (RANDOM % 120) * 100))
        local clash=
        for p in $(seq "$base" $((base + 20))); do
            grep -qx "$p" <<<"$used" && clash=1 && break
        done
        [ -z "$clash" ] && { echo "$base"; return 0; }
    done
    return 1
}

etcd_up() {
    local dir=$1 n=${2:-3} base cluster= i
    base=$(etcd_free_base) || { echo "etcd_up: no free ports" >&2; return 1; }
    echo "$base" >"$dir/etcd.base"
    echo "$n" >"$dir/etcd.n"
    ETCD_ENDPOINTS=
    for i in $(seq "$n"); do
        cluster+="${cluster:+,}m$i=http://127.0.0.1:$((base + 10 + i))"
        ETCD_ENDPOINTS+="${ETCD_ENDPOINTS:+,}http://127.0.0.1:$((base + i))"
    done
    echo "$cluster" >"$dir/etcd.cluster"
    export ETCD_ENDPOINTS
    for i in $(seq "$n"); do
        etcd_start "$dir" "$i" new
    done
    for _ in $(seq 150); do
        ETCDCTL_API=3 etcdctl --endpoints "$ETCD_ENDPOINTS" --command-timeout=1s \
            endpoint health >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "etcd_up: the cluster did not become healthy: $(tail -3 "$dir"/etcd-m*.log)" >&2
    return 1
}

etcd_start() {
    local dir=$1 i=$2 state=${3:-existing} base
    base=$(cat "$dir/etcd.base")
    mkdir -p "$dir/etcd-m$i"
    etcd --name "m$i" --data-dir "$dir/etcd-m$i" \
        --listen-client-urls "http://127.0.0.1:$((base + i))" \
        --advertise-client-urls "http://127.0.0.1:$((base + i))" \
        --listen-peer-urls "http://127.0.0.1:$((base + 10 + i))" \
        --initial-advertise-peer-urls "http://127.0.0.1:$((base + 10 + i))" \
        --initial-cluster "$(cat "$dir/etcd.cluster")" --initial-cluster-state "$state" \
        --initial-cluster-token "mrcfab-test-$base" \
        --heartbeat-interval 100 --election-timeout 1000 >>"$dir/etcd-m$i.log" 2>&1 &
    echo $! >"$dir/etcd-m$i.pid"
}

etcd_stop() {
    local pidf=$1/etcd-m$2.pid pid
    [ -f "$pidf" ] || return 0
    pid=$(cat "$pidf")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true # a member whose data folder has gone may ignore SIGTERM
    wait "$pid" 2>/dev/null || true
    rm -f "$pidf"
}

etcd_down() {
    local dir=$1 i
    [ -f "$dir/etcd.n" ] || return 0
    for i in $(seq "$(cat "$dir/etcd.n")"); do
        etcd_stop "$dir" "$i"
    done
}
