#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab fabric: every switch and host of a topology as a network namespace, every cable a
# veth pair, every switch table installed with `mrcctl routes install`; and on it the system:
# the controller, an agent and a prober node on every host, the localizer.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
topo="$root/deploy/topologies/lab.json"
prefix=mf
bin="${MRCFAB_BIN:-$root/build/bin}"
dir=
ctl_port=8080

usage() {
    cat <<EOF
usage: $0 [-t TOPOLOGY] [-p PREFIX] [-b BINDIR] [-d DIR] [-P PORT] COMMAND [ARGS]

  up [--fabric-only]    build the fabric (tears down an earlier one of the same prefix first)
                        and start the system on it: the controller (SQLite in DIR) on the
                        management network, an agent and a prober node on every host, each
                        with its own token, and the localizer; --fabric-only: the fabric alone
  down                  stop every process, remove every namespace (and so every veth); what
                        stays is DIR's database, tokens and logs
  status                the namespaces with their installed route counts, the processes
  restart SERVICE       stop and start one process: controller, localizer, agent-HOST or
                        node-HOST (the database, the agents' state and the tokens stay)
  drain X [REASON]      an operator's maintenance entry for element X at the controller
                        (a switch, a host port h3:1 or a link p0-t0-1~p0-t1-0)
  undrain X             remove X's maintenance entries
  reboot X SECS         switch X goes down for SECS seconds (every cable), comes back up
                        and has its table installed again
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
  -b BINDIR     where mrcctl and the daemons are (default build/bin)
  -d DIR        the lab's folder (default /var/lib/mrcfab/lab-PREFIX): database, tokens,
                logs, pid files
  -P PORT       the controller's port on the management network (default 8080); the
                localizer takes the next one
EOF
    exit 2
}

while getopts "t:p:b:d:P:h" opt; do
    case $opt in
    t) topo=$OPTARG ;;
    p) prefix=$OPTARG ;;
    b) bin=$OPTARG ;;
    d) dir=$OPTARG ;;
    P) ctl_port=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
cmd=$1
shift
# the daemons outlive this script and run from anywhere: absolute paths
topo=$(realpath "$topo")
bin=$(realpath "$bin")
dir=$(realpath -m "${dir:-/var/lib/mrcfab/lab-$prefix}")

mrcctl() { "$bin/mrcctl" -t "$topo" "$@"; }
ns() { echo "$prefix-$1"; }
nsx() { local n; n=$(ns "$1"); shift; ip netns exec "$n" "$@"; }

# the topology's hosts, in its order
hosts() { mrcctl topo hosts | awk '!seen[$1]++ {print $1}'; }

namespaces() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}-" || true
}

# What runs in the background (daemons, flapping cables): a process group each, its leader's
# pid in DIR/run/NAME.pid.
run() { echo "$dir/run"; }

# Stops the process groups of the given pid files: TERM, then KILL what is left after 3 s.
stop() {
    local f pgids=() i
    for f in "$@"; do
        [ -e "$f" ] || continue
        pgids+=("$(cat "$f")")
        rm -f "$f"
    done
    [ ${#pgids[@]} -gt 0 ] || return 0
    for i in "${pgids[@]}"; do kill -TERM -- "-$i" 2>/dev/null || true; done
    for _ in $(seq 30); do
        for i in "${!pgids[@]}"; do
            kill -0 -- "-${pgids[$i]}" 2>/dev/null || unset "pgids[$i]"
        done
        [ ${#pgids[@]} -gt 0 ] || return 0
        sleep 0.1
    done
    for i in "${pgids[@]}"; do kill -KILL -- "-$i" 2>/dev/null || true; done
}

down() {
    local n
    stop "$(run)"/flap-*.pid
    stop "$(run)"/*.pid
    rm -rf "$(run)"
    rmdir "$dir" 2>/dev/null || true
    # the root namespace's end of the management network: gone with its peer's namespace,
    # but only once the kernel gets round to it
    ip link del "$prefix-mgmt" 2>/dev/null || true
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
    for host in $(hosts); do
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

# --- the system on the fabric -------------------------------------------------------------

ctl_url() { echo "http://[$mgmt_net:ffff]:$ctl_port"; }
loc_url() { echo "http://[$mgmt_net:ffff]:$((ctl_port + 1))"; }
new_token() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }

# Every process its own token: the controller's file names the agents (role agent, named
# after the host), the localizer (prober), an admin and a reader; the localizer's file names
# each host's prober node (a node's token signs only its own host's reports).
tokens_make() {
    local t h
    mkdir -p "$dir/token"
    chmod 700 "$dir" "$dir/token"
    for t in admin reader localizer $(hosts | sed 's/^/agent-/') $(hosts | sed 's/^/node-/'); do
        (umask 077 && new_token >"$dir/token/$t")
    done
    (
        umask 077
        echo "$(cat "$dir/token/admin") admin lab-admin"
        echo "$(cat "$dir/token/reader") reader lab-reader"
        echo "$(cat "$dir/token/localizer") prober localizer"
        for h in $(hosts); do echo "$(cat "$dir/token/agent-$h") agent $h"; done
    ) >"$dir/tokens"
    (
        umask 077
        for h in $(hosts); do echo "$(cat "$dir/token/node-$h") prober $h"; done
    ) >"$dir/node-tokens"
}

# daemon NAME WHERE CMD...: CMD in its own process group (so that stop takes all of it), in
# host WHERE's namespace or, for "-", the root namespace; its log in DIR/log/NAME.log (a
# prober node's stdout, a report every window, goes to the localizer alone).
daemon() {
    local name=$1 where=$2 out
    shift 2
    mkdir -p "$(run)" "$dir/log"
    out="$dir/log/$name.log"
    case $name in node-*) out=/dev/null ;; esac
    if [ "$where" = - ]; then
        setsid "$@" </dev/null >>"$out" 2>>"$dir/log/$name.log" &
    else
        setsid ip netns exec "$(ns "$where")" "$@" </dev/null >>"$out" 2>>"$dir/log/$name.log" &
    fi
    echo $! >"$(run)/$name.pid"
}

# The lab's settings, kept so that restart starts a process as up did.
conf() { echo "$dir/lab.conf"; }
conf_write() {
    cat >"$(conf)" <<CONF
window_ms=$window_ms
hold_s=$hold_s
probe_rate=$probe_rate
CONF
}

start() {
    local name=$1 h=${1#*-} addr
    # shellcheck disable=SC1090
    . "$(conf)"
    case $name in
    controller)
        # software switches queue for milliseconds: the base RTT and rate NSCC starts from
        daemon controller - "$bin/mrc-controller" --topology "$topo" --db "$dir/ctl.db" \
            --tokens "$dir/tokens" --listen "[$mgmt_net:ffff]:$ctl_port" --cc uet-1.0-nscc \
            --port_gbps 10 --base_rtt_ns 100000 --agent_interval 2
        ;;
    localizer)
        daemon localizer - "$bin/mrc-probe" localize --topology "$topo" \
            --listen "[$mgmt_net:ffff]:$((ctl_port + 1))" --window_ms "$window_ms" \
            --rate "$probe_rate" --controller "$(ctl_url)" \
            --token_file "$dir/token/localizer" --report_tokens "$dir/node-tokens" \
            --hold_s "$hold_s" --deadline_ms $((window_ms * 8 / 5))
        ;;
    agent-*)
        addr=$(mgmt_addr "$h") || return 2
        daemon "$name" "$h" "$bin/mrc-agent" --topology "$topo" --host "$h" \
            --controller "$(ctl_url)" --token_file "$dir/token/agent-$h" \
            --state_dir "$dir/agent-$h" --oob "[$addr]:7471" --report_interval 2 \
            --reorder_us 5000
        ;;
    node-*)
        mgmt_addr "$h" >/dev/null || return 2 # a host of the topology
        daemon "$name" "$h" "$bin/mrc-probe" node --topology "$topo" --host "$h" \
            --window_ms "$window_ms" --rate "$probe_rate" --grace_ms $((window_ms * 2 / 5)) \
            --report_url "$(loc_url)/api/v1/reports" --token_file "$dir/token/node-$h"
        ;;
    *)
        echo "lab: no service $name (controller, localizer, agent-HOST, node-HOST)" >&2
        return 2
        ;;
    esac
}

# wait_for WHAT CMD...: until CMD succeeds, at most 20 s
wait_for() {
    local what=$1 i
    shift
    for i in $(seq 200); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "lab: $what did not come up (logs in $dir/log)" >&2
    return 1
}

agents_in() {
    local n
    n=$(curl -sf -H "Authorization: Bearer $(cat "$dir/token/reader")" "$(ctl_url)/api/v1/agents" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["fresh"])')
    [ "$n" -ge "$1" ]
}

services_up() {
    local h n
    rm -rf "${dir:?}"/{ctl.db,ctl.db-wal,ctl.db-shm,log,agent-*,token,tokens,node-tokens}
    mkdir -p "$dir"
    tokens_make
    conf_write
    start controller
    wait_for "the controller" curl -sf "$(ctl_url)/metrics"
    start localizer
    for h in $(hosts); do
        start "agent-$h"
        start "node-$h"
    done
    wait_for "the localizer" curl -sf "$(loc_url)/api/v1/status"
    n=$(hosts | wc -l)
    wait_for "every agent" agents_in "$n"
    echo "lab: the controller: $(ctl_url) (the dashboard; tokens in $dir/token: admin, reader)"
    echo "lab: the localizer: $(loc_url)/api/v1/status; $n agents and $n prober nodes;" \
        "logs in $dir/log"
}

up() {
    local fabric_only=false
    window_ms=500 hold_s=10 probe_rate=512
    while [ $# -gt 0 ]; do
        case $1 in
        --fabric-only) fabric_only=true ;;
        --window-ms) window_ms=$2; shift ;;
        --hold-s) hold_s=$2; shift ;;
        --probe-rate) probe_rate=$2; shift ;;
        *) usage ;;
        esac
        shift
    done
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
    echo "lab: up: $(namespaces | wc -l) namespaces from $topo (prefix $prefix)"
    $fabric_only || services_up
    trap - INT TERM EXIT
}

status() {
    local n count f
    for n in $(namespaces); do
        count=$(ip -n "$n" -6 route show proto 201 2>/dev/null | wc -l)
        echo "$n routes=$count"
    done
    for f in "$(run)"/*.pid; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .pid)
        if kill -0 "$(cat "$f")" 2>/dev/null; then
            echo "$n pid=$(cat "$f") running"
        else
            echo "$n pid=$(cat "$f") exited (log: $dir/log/$n.log)"
        fi
    done
}

restart() {
    [ $# -eq 1 ] || usage
    [ -e "$(conf)" ] || { echo "lab: no system running in $dir" >&2; return 1; }
    stop "$(run)/$1.pid"
    start "$1"
}

# drain X [REASON] / undrain X: the operator's maintenance entry, at the controller
ctl() {
    "$bin/mrcctl" -t "$topo" --controller "$(ctl_url)" --token-file "$dir/token/admin" "$@"
}

# reboot X SECS: every cable of switch X down, its table gone (as after a power cycle); SECS
# later the cables come back and the table is installed again
reboot() {
    [ $# -eq 2 ] || usage
    local kind plane a aport aif b bport bif peers=()
    [ -n "$(mrcctl topo switches | awk -v x="$1" '$1 == x')" ] ||
        { echo "lab: no switch $1" >&2; return 2; }
    while read -r kind plane a aport aif b bport bif; do
        [ "$a" = "$1" ] && peers+=("$b")
        [ "$b" = "$1" ] && peers+=("$a")
    done < <(mrcctl topo cables)
    for b in "${peers[@]}"; do link_set "$1" "$b" down; done
    ip -n "$(ns "$1")" -6 route flush proto 201
    sleep "$2"
    for b in "${peers[@]}"; do link_set "$1" "$b" up --no-reconcile; done
    for b in "$1" "${peers[@]}"; do reconcile "$b"; done
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

# link_set A B up|down [--no-reconcile]: the cable between A and B; once up, both ends get
# back what the kernel dropped (a switch coming back with several cables reconciles once, at
# the end, since its table needs every port up)
link_set() {
    [ $# -ge 3 ] || usage
    local end far
    end=$(cable_end "$1" "$2")
    far=$(cable_end "$2" "$1")
    # shellcheck disable=SC2086
    ip -n ${end% *} link set "${end#* }" "$3"
    if [ "$3" = up ]; then
        # neighbours probed while the link was down sit in FAILED: resolve them afresh
        # shellcheck disable=SC2086
        ip -n ${end% *} neigh flush dev "${end#* }"
        # shellcheck disable=SC2086
        ip -n ${far% *} neigh flush dev "${far#* }"
        if [ "${4:-}" != --no-reconcile ]; then
            reconcile "$1"
            reconcile "$2"
        fi
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
    local kind=${1:-}
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
        mkdir -p "$(run)"
        setsid "$0" -t "$topo" -p "$prefix" -b "$bin" -d "$dir" flap-loop "$1" "$2" "$3" \
            </dev/null >/dev/null 2>&1 &
        echo $! >"$(run)/flap-$1-$2.pid"
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
        for f in "$(run)/flap-$1-$2.pid" "$(run)/flap-$2-$1.pid"; do
            if [ -e "$f" ]; then
                stop "$f"
                link_set "$1" "$2" up
            fi
        done
    fi
}

case $cmd in
up) up "$@" ;;
down) down ;;
status) status ;;
addr) mgmt_addr "$@" ;;
link-down) link_set "$@" down ;;
link-up) link_set "$@" up ;;
fault) fault "$@" ;;
heal) heal "$@" ;;
restart) restart "$@" ;;
drain)
    [ $# -ge 1 ] && [ $# -le 2 ] || usage
    ctl drain "$1" --reason "drain: ${2:-maintenance}"
    ;;
undrain)
    [ $# -eq 1 ] || usage
    ctl undrain "$1"
    ;;
reboot) reboot "$@" ;;
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
