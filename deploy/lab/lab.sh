#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab fabric: every switch and host of a topology as a network namespace, every cable a
# veth pair, every switch table installed with `mrcctl routes install`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
topo="$root/deploy/topologies/lab.json"
prefix=mf
bin="${MRCFAB_BIN:-$root/build/bin}"

usage() {
    cat <<EOF
usage: $0 [-t TOPOLOGY] [-p PREFIX] [-b BINDIR] up|down|status|addr|link-down|link-up|fault|heal [ARGS]

  up                    build the fabric (tears down an earlier one of the same prefix first)
  down                  remove every namespace (and so every veth) of the prefix
  status                list the namespaces and installed route counts
  addr HOST|root        a host's management address (mrc-perf setup), or the root
                        namespace's (where the controller listens)
  link-down A B         take the cable between elements A and B down (e.g. p0-t0-0 p0-t1-1)
  link-up A B           bring it back
  fault loss A B PCT [one-way]
                        drop PCT % of what crosses the cable between A and B (both ways, or
                        only from A to B), where it arrives (nftables numgen)
  fault blackhole X     switch X forwards nothing while its links stay up (ND still answered)
  fault flap A B SECS   take the cable down and up again every SECS seconds, until healed
  heal X [Y]            remove every fault of element X (and of the cable X-Y: its flapping
                        stops and it comes back up)

  -t TOPOLOGY   topology file (default deploy/topologies/lab.json)
  -p PREFIX     namespace name prefix (default mf): element X lives in netns PREFIX-X
  -b BINDIR     where mrcctl is (default build/bin)
EOF
    exit 2
}

while getopts "t:p:b:h" opt; do
    case $opt in
    t) topo=$OPTARG ;;
    p) prefix=$OPTARG ;;
    b) bin=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
cmd=$1
shift

mrcctl() { "$bin/mrcctl" -t "$topo" "$@"; }
ns() { echo "$prefix-$1"; }
nsx() { local n; n=$(ns "$1"); shift; ip netns exec "$n" "$@"; }

namespaces() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}-" || true
}

# Where the lab keeps what it runs in the background (flapping cables), one folder per prefix.
state() { echo "${MRCFAB_LAB_STATE:-/tmp/mrcfab-lab}/$prefix"; }

down() {
    local n f
    for f in "$(state)"/flap-*.pid; do
        [ -e "$f" ] && kill -- "-$(cat "$f")" 2>/dev/null || true
    done
    rm -rf "$(state)"
    rmdir "$(dirname "$(state)")" 2>/dev/null || true
    for n in $(namespaces); do
        ip netns del "$n" 2>/dev/null || true
    done
}

# A namespace with DAD off (static addresses are unique by plan) and the given forwarding.
make_ns() {
    local name=$1 fwd=$2
    ip netns add "$(ns "$name")"
    nsx "$name" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
        net.ipv6.conf.all.forwarding="$fwd" net.ipv6.conf.default.forwarding="$fwd" \
        net.ipv6.conf.default.keep_addr_on_down=1
    ip -n "$(ns "$name")" link set lo up
}

# veth checksum offload hides checksum bugs (DESIGN.md §7): the lab computes them for real.
veth_up() {
    local n=$1 dev=$2
    # jumbo frames, as on a real fabric: a 4 KiB MRC payload fits one packet with both headers
    ip -n "$n" link set "$dev" mtu 9000 up
    ip netns exec "$n" ethtool -K "$dev" tx off >/dev/null 2>&1 || true
}

install_switch() {
    mrcctl routes install --switch "$1" --netns "$(ns "$1")" >/dev/null
}

# The management network: a bridge in its own namespace, a "mgmt" port in every host and one
# in the root namespace (where the controller runs), all on mgmt_net::/64; host n (0-based,
# in the topology's order) is mgmt_net::n+1, the root namespace mgmt_net::ffff. Out of band
# of the fabric, as a real cluster's front-end network is. Each prefix has its own /64, so
# that labs side by side do not share an address in the root namespace.
mgmt_net=fd6d:$(printf %x $(($(cksum <<<"$prefix" | cut -d' ' -f1) % 65536))):
mgmt_up() {
    local m i=0 host
    m=$(ns mgmt)
    ip netns add "$m"
    ip -n "$m" link set lo up
    ip -n "$m" link add br0 type bridge
    ip -n "$m" link set br0 up
    for host in "$@"; do
        i=$((i + 1))
        ip link add mgmt netns "$(ns "$host")" type veth peer name "m$i" netns "$m"
        ip -n "$m" link set "m$i" master br0 up
        ip -n "$(ns "$host")" addr add "$mgmt_net:$(printf %x $i)/64" dev mgmt nodad
        ip -n "$(ns "$host")" link set mgmt up
    done
    ip link add "$prefix-mgmt" type veth peer name root netns "$m"
    ip -n "$m" link set root master br0 up
    ip addr add "$mgmt_net:ffff/64" dev "$prefix-mgmt" nodad
    ip link set "$prefix-mgmt" up
}

mgmt_addr() {
    local want=$1 i=0 host
    if [ "$want" = root ]; then
        echo "$mgmt_net:ffff"
        return 0
    fi
    for host in $(mrcctl topo hosts | awk '!seen[$1]++ {print $1}'); do
        i=$((i + 1))
        if [ "$host" = "$want" ]; then
            echo "$mgmt_net:$(printf %x $i)"
            return 0
        fi
    done
    echo "lab: no host $want" >&2
    return 2
}

# A host port owns its inner address and the uSID address its T0 leaves in the outer header,
# and reaches the block over its plane's port (one metric per plane keeps the routes apart).
host_port() {
    local host=$1 port=$2 ifname=$3 addr=$4 uaddr=$5 gw=$6 block=$7 n
    n=$(ns "$host")
    ip -n "$n" addr replace "$addr/128" dev "$ifname" nodad
    ip -n "$n" addr replace "$uaddr/128" dev "$ifname" nodad
    ip -n "$n" -6 route replace "$block" via "$gw" dev "$ifname" metric $((1024 + port))
}

up() {
    down
    trap 'echo "lab: interrupted, cleaning up" >&2; down; exit 130' INT TERM
    trap 'rc=$?; if [ $rc -ne 0 ]; then echo "lab: failed, cleaning up" >&2; down; fi' EXIT
    mrcctl topo validate >/dev/null
    local name plane tier index usid sid ports
    while read -r name plane tier index usid sid ports; do
        make_ns "$name" 1
        # no dummy device on this kernel: a spare veth pair carries the local SIDs
        ip -n "$(ns "$name")" link add "$sid" type veth peer name "${sid}p"
        ip -n "$(ns "$name")" link set "$sid" up
        ip -n "$(ns "$name")" link set "${sid}p" up
    done < <(mrcctl topo switches)
    local host port ifname addr uaddr gw t0 t0port t0if block hosts=()
    declare -A seen
    while read -r host port ifname addr uaddr gw t0 t0port t0if block; do
        if [ -z "${seen[$host]:-}" ]; then
            make_ns "$host" 0
            seen[$host]=1
            hosts+=("$host")
        fi
    done < <(mrcctl topo hosts)
    mgmt_up "${hosts[@]}"
    local kind a aport aif b bport bif
    while read -r kind plane a aport aif b bport bif; do
        ip link add "$aif" netns "$(ns "$a")" type veth peer name "$bif" netns "$(ns "$b")"
        veth_up "$(ns "$a")" "$aif"
        veth_up "$(ns "$b")" "$bif"
    done < <(mrcctl topo cables)
    while read -r name plane tier index usid sid ports; do
        install_switch "$name"
    done < <(mrcctl topo switches)
    while read -r host port ifname addr uaddr gw t0 t0port t0if block; do
        host_port "$host" "$port" "$ifname" "$addr" "$uaddr" "$gw" "$block"
    done < <(mrcctl topo hosts)
    trap - INT TERM EXIT
    echo "lab: up: $(namespaces | wc -l) namespaces from $topo (prefix $prefix)"
}

status() {
    local n count
    for n in $(namespaces); do
        count=$(ip -n "$n" -6 route show proto 201 2>/dev/null | wc -l)
        echo "$n routes=$count"
    done
}

# The veth of the cable between elements A and B, seen from A: "netns ifname".
cable_end() {
    local a=$1 b=$2 kind plane x xport xif y yport yif
    while read -r kind plane x xport xif y yport yif; do
        if [ "$x" = "$a" ] && [ "$y" = "$b" ]; then
            echo "$(ns "$x") $xif"
            return 0
        elif [ "$x" = "$b" ] && [ "$y" = "$a" ]; then
            echo "$(ns "$y") $yif"
            return 0
        fi
    done < <(mrcctl topo cables)
    echo "lab: no cable between $a and $b" >&2
    return 2
}

# Reconciles element X after its port came back: the kernel drops the routes and link-local
# addresses of a port that goes down, as it would on any Linux switch, and a new install puts
# back exactly what is missing.
reconcile() {
    local x=$1 host port ifname addr uaddr gw t0 t0port t0if block
    if [ -n "$(mrcctl topo switches | awk -v x="$x" '$1 == x')" ]; then
        install_switch "$x"
        return
    fi
    while read -r host port ifname addr uaddr gw t0 t0port t0if block; do
        if [ "$host" = "$x" ]; then
            host_port "$host" "$port" "$ifname" "$addr" "$uaddr" "$gw" "$block"
        fi
    done < <(mrcctl topo hosts)
}

link_set() {
    [ $# -eq 3 ] || usage
    local end
    end=$(cable_end "$1" "$2")
    # shellcheck disable=SC2086
    ip -n ${end% *} link set "${end#* }" "$3"
    if [ "$3" = up ]; then
        reconcile "$1"
        reconcile "$2"
        # neighbours probed while the link was down sit in FAILED: resolve them afresh
        local far
        far=$(cable_end "$2" "$1")
        # shellcheck disable=SC2086
        ip -n ${end% *} neigh flush dev "${end#* }"
        # shellcheck disable=SC2086
        ip -n ${far% *} neigh flush dev "${far#* }"
    fi
}

# Faults live in one nftables table, lab_fault, of the namespace where the traffic arrives: at
# ingress, so that frames a host writes itself (past its own output hooks) meet them too.
fault_table() { # X RULES: adds chains to X's fault table
    printf 'table inet lab_fault {\n%s\n}\n' "$2" | nsx "$1" nft -f -
}

# X drops PCT % of what arrives over its cable from Y.
drop_from() {
    local x=$1 y=$2 pct=$3 end ifname rule
    end=$(cable_end "$x" "$y") || return 2
    ifname=${end#* }
    nsx "$x" nft delete chain inet lab_fault "in_$ifname" 2>/dev/null || true
    case $pct in
    0) return 0 ;;
    100) rule=drop ;;
    *) rule="numgen random mod 100 < $pct drop" ;;
    esac
    fault_table "$x" "chain in_$ifname { type filter hook prerouting priority 0; \
iifname \"$ifname\" $rule; }"
}

fault() {
    local kind=${1:-} pid
    shift || usage
    case $kind in
    loss)
        [ $# -ge 3 ] && [ $# -le 4 ] || usage
        if ! [[ $3 =~ ^[0-9]+$ ]] || [ "$3" -gt 100 ]; then
            echo "lab: loss $3: want a whole percent, 0 to 100" >&2
            return 2
        fi
        [ "${4:-both}" = both ] || [ "$4" = one-way ] || usage
        drop_from "$2" "$1" "$3"
        [ "${4:-both}" = one-way ] || drop_from "$1" "$2" "$3"
        ;;
    blackhole)
        [ $# -eq 1 ] || usage
        fault_table "$1" "chain blackhole { type filter hook prerouting priority 0; \
meta l4proto != ipv6-icmp drop; }"
        ;;
    flap)
        [ $# -eq 3 ] || usage
        if ! [[ $3 =~ ^[1-9][0-9]*$ ]]; then
            echo "lab: flap every $3: want whole seconds" >&2
            return 2
        fi
        cable_end "$1" "$2" >/dev/null || return 2
        mkdir -p "$(state)"
        setsid "$0" -t "$topo" -p "$prefix" -b "$bin" flap-loop "$1" "$2" "$3" \
            </dev/null >/dev/null 2>&1 &
        pid=$!
        echo "$pid" >"$(state)/flap-$1-$2.pid"
        ;;
    *) usage ;;
    esac
}

heal() {
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    local x f
    for x in "$@"; do
        nsx "$x" nft delete table inet lab_fault 2>/dev/null || true
    done
    if [ $# -eq 2 ]; then
        for f in "$(state)/flap-$1-$2.pid" "$(state)/flap-$2-$1.pid"; do
            if [ -e "$f" ]; then
                kill -- "-$(cat "$f")" 2>/dev/null || true
                rm -f "$f"
                link_set "$1" "$2" up
            fi
        done
    fi
}

case $cmd in
up) up ;;
down) down ;;
status) status ;;
addr) mgmt_addr "$@" ;;
link-down) link_set "$@" down ;;
link-up) link_set "$@" up ;;
fault) fault "$@" ;;
heal) heal "$@" ;;
flap-loop)
    # fault flap's background half: down and up until killed
    while :; do
        link_set "$1" "$2" down
        sleep "$3"
        link_set "$1" "$2" up
        sleep "$3"
    done
    ;;
*) usage ;;
esac
