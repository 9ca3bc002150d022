#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab fabric: every switch and host of a topology as a network namespace, every cable a
# veth pair, every switch table installed with `mrcctl routes install`; and on it the system:
# the controller, an agent and a prober node on every host, the localizer.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
topo=
prefix=mf
bin=
dir=
ctl_port=8080

usage() {
    cat <<EOF
usage: lab.sh [-t TOPOLOGY] [-p PREFIX] [-b BINDIR] [-d DIR] [-P PORT] COMMAND [ARGS]

  up [--fabric-only] [--no-tls] [--ha] [--window-ms MS] [--hold-s S] [--probe-rate N]
                        build the fabric (tears down an earlier one of the same prefix first)
                        and start the system on it: the controller (SQLite in DIR) on the
                        management network, an agent and a prober node on every host, each
                        with its own token, and the localizer (its windows MS ms, default 500,
                        its hold S s, default 10, N probes a second, default 512);
                        --fabric-only: the fabric alone. The controller serves HTTPS with a
                        certificate of a throwaway CA made in DIR/tls (ca.pem), and requires
                        a client certificate of it where it can (--client-ca): each host's is
                        DIR/tls/HOST.pem, the operator's admin.pem; --no-tls: plain HTTP;
                        --ha: three etcd members, three controllers (controller-1..3, one
                        leads, docs/ha.md) and a localizer shard per plane of two replicas
                        each (localizer-P-1, localizer-P-2), all on the management network
  leader                the controller that leads, as "controller-N URL" (up --ha)
  kill SERVICE          kill -9 one process (up --ha: controller-N, etcd-N, localizer-P-R;
                        or any SERVICE of restart), as a crash would; restart brings it back
  env                   the shell exports that point mrcctl (and curl) at the lab's controller:
                        MRCFAB_CONTROLLER, MRCFAB_CACERT, MRCFAB_CLIENT_CERT, MRCFAB_CLIENT_KEY,
                        MRCFAB_TOKEN_FILE (the admin's); eval "\$(lab.sh env)"
  down                  stop every process, remove every namespace (and so every veth); what
                        stays is DIR's database, tokens, TLS files and logs
  status                the namespaces with their installed route counts, the processes, the
                        faults in force (kind, cable or switch, percent, direction)
  restart SERVICE       stop and start one process: controller, localizer, agent-HOST or
                        node-HOST; with --ha controller-N, etcd-N or localizer-P-R (the
                        databases, the agents' state and the tokens stay)
  drain X [REASON]      an operator's maintenance entry for element X at the controller
                        (a switch, a host port h3:1 or a link p0-t0-1~p0-t1-0)
  undrain X             remove X's maintenance entries
  reboot X SECS         switch X goes down for SECS seconds (every cable), comes back up
                        and has its table installed again
  addr HOST|root        a host's management address (mrc-perf setup), or the root
                        namespace's (where the controller listens)
  link-down A B         take the cable between elements A and B down (e.g. p0-t0-0 p0-t1-1;
                        a host's end may be named by its port, h0:1)
  link-up A B           bring it back
  fault loss A B PCT [one-way]
                        drop PCT % of what crosses the cable between A and B (both ways, or
                        only from A to B), where it arrives (nftables numgen); PCT is 0 to 100
                        in steps of 0.001 (0.1: one packet in a thousand); 0 removes it
  fault blackhole X     switch X forwards nothing while its links stay up (ND still answered)
  fault flap A B SECS   take the cable down and up again every SECS seconds, until healed
  heal X [Y]            remove every fault of element X (its blackhole, the faults of every
                        cable it ends), or of the cable between X and Y alone (a flapping
                        cable stops and comes back up, as does one taken down)
  heal --all            remove every fault

  -t TOPOLOGY   topology file (default lab.json of the topologies beside lab.sh, else of
                BINDIR/../share/mrcfab/topologies)
  -p PREFIX     namespace name prefix, at most 10 letters, digits or _ (default mf):
                element X lives in netns PREFIX-X
  -b BINDIR     where mrcctl and the daemons are (default build/bin of the source tree, else
                the folder of the mrcctl on PATH; /usr/bin for the installed programs)
  -d DIR        the lab's folder (default /var/lib/mrcfab/lab-PREFIX): database, tokens,
                logs, pid files
  -P PORT       the controller's port on the management network (default 8080); the
                localizer takes the next one
  -h, --help    print this help and exit

exit status: 0 done, 1 the system failed, 2 bad input
EOF
}

# --- exit status: 2 for bad input (always found before acting), 1 once acting fails ---------

acting=false      # input checked: a failure from here on is the system's
cleanup_up=false  # an up under way: a failure takes the half-built lab down
bad() {
    echo "lab: $*" >&2
    acting=false
    exit 2
}
on_exit() {
    local rc=$?
    trap - EXIT
    if [ "$rc" -ne 0 ] && $cleanup_up; then
        echo "lab: failed, cleaning up" >&2
        down
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ] && $acting; then
        exit 1
    fi
    exit "$rc"
}
trap on_exit EXIT
# From the first line on: bash runs a trap once the command in the foreground ends, where an
# interrupt without one is lost if that command (an mrcctl reading the topology) did not die
# of it, and an up interrupted while it checks its input would go on to build the fabric.
on_signal() {
    if $cleanup_up; then
        echo "lab: interrupted, cleaning up" >&2
        cleanup_up=false
        down
    fi
    exit 130
}
trap on_signal INT TERM

while [ $# -gt 0 ]; do
    case $1 in
    -h | --help)
        usage
        exit 0
        ;;
    -t | -p | -b | -d | -P)
        [ $# -ge 2 ] || bad "option $1 wants a value (lab.sh --help)"
        case $1 in
        -t) topo=$2 ;;
        -p) prefix=$2 ;;
        -b) bin=$2 ;;
        -d) dir=$2 ;;
        -P) ctl_port=$2 ;;
        esac
        shift 2
        ;;
    --)
        shift
        break
        ;;
    -*) bad "unknown option '$1' (lab.sh --help lists the options)" ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || bad "no command given (lab.sh --help lists the commands)"
cmd=$1
shift
case $cmd in
up | down | status | env | addr | restart | kill | leader | drain | undrain | reboot | link-down | link-up | fault | heal | flap-loop) ;;
help)
    usage
    exit 0
    ;;
*) bad "unknown command '$cmd' (lab.sh --help lists the commands)" ;;
esac
# COMMAND --help: the usage too
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
    usage
    exit 0
fi

# the namespace names PREFIX-X and the veth PREFIX-mgmt (15 bytes at most) take the prefix
[[ $prefix =~ ^[A-Za-z0-9_]{1,10}$ ]] ||
    bad "-p '$prefix' is no prefix: want 1 to 10 letters, digits or _ (e.g. hl)"
if ! [[ $ctl_port =~ ^[1-9][0-9]{0,4}$ ]] || [ "$ctl_port" -gt 65534 ]; then
    bad "-P '$ctl_port' is no port: want 1 to 65534 (the localizer takes the next one)"
fi
dir=$(realpath -m "${dir:-/var/lib/mrcfab/lab-$prefix}")

# The programs: -b, else the source tree's build, else the mrcctl on PATH (installed).
if [ -z "$bin" ]; then
    bin=${MRCFAB_BIN:-$root/build/bin}
    if [ ! -x "$bin/mrcctl" ] && command -v mrcctl >/dev/null; then
        bin=$(dirname "$(command -v mrcctl)")
    fi
fi
need_program() {
    [ -x "$bin/$1" ] || bad "-b $bin has no $1 (want the folder of mrcctl and the daemons:" \
        "build/bin of a build, /usr/bin where the packages installed them)"
}
# what `down` needs is the prefix and the folder alone: it works with the programs gone
if [ "$cmd" != down ]; then
    need_program mrcctl
    # the daemons outlive this script and run from anywhere: absolute paths
    bin=$(realpath "$bin")
    if [ -z "$topo" ]; then
        for topo in "$here/../topologies/lab.json" "$bin/../share/mrcfab/topologies/lab.json"; do
            [ -e "$topo" ] && break
        done
    fi
    [ -f "$topo" ] || bad "-t $topo: no such topology file"
    topo=$(realpath "$topo")
fi

mrcctl() { "$bin/mrcctl" -t "$topo" "$@"; }
ns() { echo "$prefix-$1"; }
nsx() { local n; n=$(ns "$1"); shift; ip netns exec "$n" "$@"; }

# --- the topology, read once ---------------------------------------------------------------

SWITCHES=() HOSTS=() CABLES=() HOSTPORTS=() SWITCHLINES=() PLANE_IDS=()
declare -A IS_SWITCH=() IS_HOST=() IS_HOSTPORT=() IS_PLANE=()
topo_load() {
    local out line name port
    out=$("$bin/mrcctl" -t "$topo" topo switches --no-header 2>&1) ||
        bad "-t $topo is no topology mrcctl can read: $(head -n 1 <<<"${out#mrcctl: }")"
    mapfile -t SWITCHLINES <<<"$out"
    for line in "${SWITCHLINES[@]}"; do
        name=${line%% *}
        SWITCHES+=("$name")
        IS_SWITCH[$name]=1
    done
    mapfile -t HOSTPORTS < <(mrcctl topo hosts --no-header)
    for line in "${HOSTPORTS[@]}"; do
        read -r name port _ <<<"$line"
        IS_HOSTPORT[$name:$port]=1
        # a host's port N is its plane N's
        if [ -z "${IS_PLANE[$port]:-}" ]; then
            IS_PLANE[$port]=1
            PLANE_IDS+=("$port")
        fi
        if [ -z "${IS_HOST[$name]:-}" ]; then
            IS_HOST[$name]=1
            HOSTS+=("$name")
        fi
    done
    mapfile -t CABLES < <(mrcctl topo cables --no-header)
    if [ ${#SWITCHES[@]} -eq 0 ] || [ ${#HOSTS[@]} -eq 0 ] || [ ${#CABLES[@]} -eq 0 ]; then
        bad "-t $topo has no switch, host or cable to build a lab of"
    fi
}
[ "$cmd" = down ] || topo_load

# --- input checks: each one sentence naming the bad word and what would do ----------------

fabric_hint() {
    echo "its ${#SWITCHES[@]} switches are ${SWITCHES[0]} to ${SWITCHES[-1]}," \
        "its ${#HOSTS[@]} hosts ${HOSTS[0]} to ${HOSTS[-1]}"
}
# need_element WORD [switch|host]: WORD names an element (of that kind) of the topology
need_element() {
    local w=$1 kind=${2:-}
    case $kind in
    switch)
        [ -n "${IS_SWITCH[$w]:-}" ] && return 0
        [ -n "${IS_HOST[$w]:-}" ] && bad "'$w' is a host; this wants a switch ($(fabric_hint))"
        ;;
    host)
        [ -n "${IS_HOST[$w]:-}" ] && return 0
        [ -n "${IS_SWITCH[$w]:-}" ] && bad "'$w' is a switch; this wants a host ($(fabric_hint))"
        ;;
    *) [ -n "${IS_SWITCH[$w]:-}${IS_HOST[$w]:-}" ] && return 0 ;;
    esac
    bad "'$w' is no ${kind:-switch or host} of $(basename "$topo") ($(fabric_hint))"
}

# cable_find A B: the cable between ends A and B (an element, or a host port h0:1), into
# E1 IF1 (A's element and interface), E2 IF2 (B's), C1 C2 (its ends in the topology's order).
cable_find() {
    local x xport xif y yport yif line
    for line in "${CABLES[@]}"; do
        read -r _ _ x xport xif y yport yif <<<"$line"
        if { [ "$1" = "$x" ] || [ "$1" = "$x:$xport" ]; } &&
            { [ "$2" = "$y" ] || [ "$2" = "$y:$yport" ]; }; then
            E1=$x IF1=$xif E2=$y IF2=$yif C1=$x C2=$y
            return 0
        elif { [ "$1" = "$y" ] || [ "$1" = "$y:$yport" ]; } &&
            { [ "$2" = "$x" ] || [ "$2" = "$x:$xport" ]; }; then
            E1=$y IF1=$yif E2=$x IF2=$xif C1=$x C2=$y
            return 0
        fi
    done
    return 1
}
# peers X: the elements at the far end of X's cables, in the topology's order
peers() {
    local x y line
    for line in "${CABLES[@]}"; do
        read -r _ _ x _ _ y _ <<<"$line"
        [ "$x" = "$1" ] && echo "$y"
        [ "$y" = "$1" ] && echo "$x"
    done
    return 0
}
need_end() {
    if [[ $1 == *:* ]] && [ -n "${IS_HOST[${1%:*}]:-}" ]; then
        [ -n "${IS_HOSTPORT[$1]:-}" ] ||
            bad "'$1' is no host port of $(basename "$topo") (${1%:*}'s are" \
                "$(printf '%s\n' "${!IS_HOSTPORT[@]}" | grep "^${1%:*}:" | sort | paste -sd, - | sed 's/,/, /g'))"
        return 0
    fi
    need_element "$1"
}
need_cable() {
    need_end "$1"
    need_end "$2"
    cable_find "$1" "$2" ||
        bad "no cable joins $1 and $2 (${1%:*}'s cables go to $(peers "${1%:*}" | paste -sd, - |
            sed 's/,/, /g'))"
}
# need_int WHAT WORD MIN MAX UNIT: WORD a whole number from MIN to MAX
need_int() {
    if ! [[ $2 =~ ^[0-9]{1,9}$ ]] || [ $((10#$2)) -lt "$3" ] || [ $((10#$2)) -gt "$4" ]; then
        bad "$1 '$2' is no number of $5: want a whole number from $3 to $4"
    fi
}
# pct_parse WORD: PCT_T, WORD % in thousandths of a percent (0 to 100000), and PCT, WORD as
# written back (0.10 is 0.1)
pct_parse() {
    local w=$1 i f
    if [[ $w =~ [0-9] ]] && [[ $w =~ ^([0-9]{0,3})(\.([0-9]{0,3}))?$ ]]; then
        i=${BASH_REMATCH[1]:-0}
        f=${BASH_REMATCH[3]}000
        PCT_T=$((10#$i * 1000 + 10#${f:0:3}))
        if [ "$PCT_T" -le 100000 ]; then
            PCT=$((PCT_T / 1000))
            if [ $((PCT_T % 1000)) -ne 0 ]; then
                f=$(printf %03d $((PCT_T % 1000)))
                while [[ $f == *0 ]]; do f=${f%0}; done
                PCT="$PCT.$f"
            fi
            return 0
        fi
    fi
    bad "loss '$w' is no percent: want 0 to 100 in steps of 0.001 (0.1 drops one packet in" \
        "a thousand)"
}
# need_args COMMAND MIN MAX FORM ARGS...: the command's count of arguments
need_args() {
    local what=$1 min=$2 max=$3 form=$4
    shift 4
    if [ $# -lt "$min" ]; then
        bad "$what wants $form (lab.sh --help)"
    elif [ $# -gt "$max" ]; then
        bad "$what wants $form, not '$*' (lab.sh --help)"
    fi
}
# need_lab: the fabric is up (an element's namespace is there)
need_lab() {
    [ -e "/run/netns/$(ns "${SWITCHES[0]}")" ] || {
        echo "lab: no lab of prefix $prefix is up (lab.sh -p $prefix up builds one)" >&2
        exit 1
    }
}
# need_system: the system runs on the lab (up without --fabric-only made its folder; down
# leaves the settings and tokens but not the run folder)
need_system() {
    if [ ! -e "$(conf)" ] || [ ! -e "$dir/token/admin" ] || [ ! -d "$(run)" ]; then
        echo "lab: no system running in $dir (lab.sh up starts one; -p and -d name the lab)" >&2
        exit 1
    fi
}
# need_service NAME: a process `start` knows
need_service() {
    local s
    for s in $(services); do
        [ "$s" = "$1" ] && return 0
    done
    if ha_on; then
        bad "'$1' is no service of the lab (controller-1..3, etcd-1..3, localizer-P-R with P a" \
            "plane and R 1 or 2, agent-HOST or node-HOST, HOST one of ${HOSTS[0]} to ${HOSTS[-1]})"
    fi
    bad "'$1' is no service of the lab (controller, localizer, agent-HOST or node-HOST, HOST" \
        "one of ${HOSTS[0]} to ${HOSTS[-1]})"
}
# need_drainable X: what the controller's denylist takes, a switch, a host port or a T0-T1 link
need_drainable() {
    local a b
    if [[ $1 == *~* ]]; then
        a=${1%%~*} b=${1#*~}
        need_element "$a" switch
        need_element "$b" switch
        cable_find "$a" "$b" || bad "'$1' is no link: no cable joins $a and $b ($a's go to" \
            "$(peers "$a" | paste -sd, - | sed 's/,/, /g'))"
        return 0
    fi
    [ -n "${IS_SWITCH[$1]:-}${IS_HOSTPORT[$1]:-}" ] && return 0
    local line x y link=""
    for line in "${CABLES[@]}"; do
        read -r _ _ x _ _ y _ <<<"$line"
        if [ -n "${IS_SWITCH[$y]:-}" ]; then
            link=$x~$y
            break
        fi
    done
    bad "'$1' is no switch, host port (e.g. ${HOSTS[0]}:0) or link (e.g. $link) of" \
        "$(basename "$topo") ($(fabric_hint))"
}

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

# veth checksum offload hides checksum bugs (docs/architecture.md#kernel-facts): the lab computes
# them for real.
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

# mgmt_addr HOST|root (checked): its address on the management network
mgmt_addr() {
    local want=$1 i=0 host
    if [ "$want" = root ]; then
        echo "$mgmt_net:ffff"
        return 0
    fi
    for host in "${HOSTS[@]}"; do
        i=$((i + 1))
        if [ "$host" = "$want" ]; then
            echo "$mgmt_net:$(printf %x $i)"
            return 0
        fi
    done
    return 1
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

# Whether the lab's controller speaks https (up without --no-tls).
tls_on() { grep -qx 'tls=true' "$(conf)" 2>/dev/null; }
# Whether the lab runs three controllers on etcd (up --ha).
ha_on() { grep -qx 'ha=true' "$(conf)" 2>/dev/null; }
# up --ha: controller-N at $mgmt_net:ff0N, etcd member N at $mgmt_net:fe0N, in the root
# namespace beside the lone controller's address (ffff), which the localizers keep
ctl_addr() { echo "$mgmt_net:ff0$1"; }
etcd_addr() { echo "$mgmt_net:fe0$1"; }
etcd_urls() { echo "http://[$(etcd_addr 1)]:2379,http://[$(etcd_addr 2)]:2379,http://[$(etcd_addr 3)]:2379"; }
scheme() { if tls_on; then echo https; else echo http; fi; }
ctl_url_of() { echo "$(scheme)://[$(ctl_addr "$1")]:$ctl_port"; }
tls_dir() { echo "$dir/tls"; }
# the controller's URL; with --ha the three, comma-separated, as every client takes them
ctl_url() {
    if ha_on; then
        echo "$(ctl_url_of 1),$(ctl_url_of 2),$(ctl_url_of 3)"
    else
        echo "$(scheme)://[$mgmt_net:ffff]:$ctl_port"
    fi
}
# the leader's name and URL ("controller-N URL"), or status 1 when none leads
ctl_leader() {
    local i
    ha_on || { echo "controller $(ctl_url)"; return 0; }
    for i in 1 2 3; do
        if ctl_curl -sf -m 2 -H "Authorization: Bearer $(cat "$dir/token/reader")" \
            "$(ctl_url_of "$i")/api/v1/cluster" 2>/dev/null |
            python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["self"]["role"] != "leader")' \
                2>/dev/null; then
            echo "controller-$i $(ctl_url_of "$i")"
            return 0
        fi
    done
    return 1
}
# one URL to ask what only the leader answers (the first controller when none leads)
ctl_url1() {
    local l
    if l=$(ctl_leader); then echo "${l#* }"; else echo "$(ctl_url_of 1)"; fi
}
# curl to the controller, trusting the lab's CA and offering the operator's certificate
ctl_curl() {
    if tls_on; then
        curl --cacert "$(tls_dir)/ca.pem" --cert "$(tls_dir)/admin.pem" --key "$(tls_dir)/admin.key" "$@"
    else
        curl "$@"
    fi
}
# The client options of a process that talks to the controller as NAME (a host, the localizer,
# the admin): the CA and its certificate, one a line; none without TLS.
client_tls() {
    tls_on || return 0
    printf '%s\n' --cacert "$(tls_dir)/ca.pem" --client-cert "$(tls_dir)/$1.pem" --client-key "$(tls_dir)/$1.key"
}

# A throwaway CA and what it signs, in DIR/tls: the controller's certificate for the address
# the agents reach it at (subjectAltName IP), and a client certificate for every host (its
# agent's and its node's), the localizer and the admin (mrcctl), each named for what it is.
tls_make() {
    local t=$dir/tls n
    rm -rf "$t"
    mkdir -p "$t"
    chmod 700 "$t"
    (
        umask 077
        cd "$t"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
            -subj "/CN=mrcfab lab $prefix CA" -keyout ca.key -out ca.pem
        # clientAuth too: a follower offers it to the leader when it proxies a read (--peer-ca)
        printf 'subjectAltName=IP:%s,IP:%s,IP:%s,IP:%s\nextendedKeyUsage=serverAuth,clientAuth\n' \
            "$mgmt_net:ffff" "$mgmt_net:ff01" "$mgmt_net:ff02" "$mgmt_net:ff03" >ctl.ext
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        for n in ctl admin localizer "${PLANE_IDS[@]/#/localizer-}" "${HOSTS[@]}"; do
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$n" \
                -keyout "$n.key" -out "$n.csr"
            openssl x509 -req -in "$n.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
                -extfile "$([ "$n" = ctl ] && echo ctl.ext || echo client.ext)" -out "$n.pem"
            rm -f "$n.csr"
        done
        chmod 644 ca.pem
    ) >"$dir/log/tls.log" 2>&1 || { echo "lab: openssl failed: $(tail -n 3 "$dir/log/tls.log")" >&2; return 1; }
}

# The controller's TLS options: its certificate, and the CA clients' certificates must chain
# to where the binary takes --client-ca (it is checked, so that a controller without it runs)
ctl_tls() {
    tls_on || return 0
    printf '%s\n' --cert "$(tls_dir)/ctl.pem" --key "$(tls_dir)/ctl.key"
    if "$bin/mrc-controller" --help 2>/dev/null | grep -q -- '--client-ca'; then
        printf '%s\n' --client-ca "$(tls_dir)/ca.pem"
    fi
}

lab_env() {
    echo "export MRCFAB_CONTROLLER='$(ctl_url)'"
    echo "export MRCFAB_TOKEN_FILE='$dir/token/admin'"
    if tls_on; then
        echo "export MRCFAB_CACERT='$(tls_dir)/ca.pem'"
        echo "export MRCFAB_CLIENT_CERT='$(tls_dir)/admin.pem' MRCFAB_CLIENT_KEY='$(tls_dir)/admin.key'"
    else
        echo "unset MRCFAB_CACERT MRCFAB_CLIENT_CERT MRCFAB_CLIENT_KEY"
    fi
}
loc_url() { echo "http://[$mgmt_net:ffff]:$((ctl_port + 1))"; }
# up --ha: plane P's replica R (1 or 2) on the ports after the lone localizer's
loc_port() { echo $((ctl_port + 2 + $1 * 2 + $2 - 1)); }
loc_url_of() { echo "http://[$mgmt_net:ffff]:$(loc_port "$1" "$2")"; }
# the services of the lab's system, in the order up starts them
services() {
    local h p r
    if ha_on; then
        echo etcd-1 etcd-2 etcd-3 controller-1 controller-2 controller-3
        for p in "${PLANE_IDS[@]}"; do for r in 1 2; do echo "localizer-$p-$r"; done; done
    else
        echo controller localizer
    fi
    for h in "${HOSTS[@]}"; do echo "agent-$h" "node-$h"; done
}
new_token() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }

# Every process its own token: the controller's file names the agents (role agent, named
# after the host), the localizer (role localizer: the one that posts every host's evidence and
# verdicts), an admin and a reader; the localizer's file names
# each host's prober node (a node's token signs only its own host's reports).
tokens_make() {
    local t h
    mkdir -p "$dir/token"
    chmod 700 "$dir" "$dir/token"
    for t in admin reader localizer "${PLANE_IDS[@]/#/localizer-}" "${HOSTS[@]/#/agent-}" \
        "${HOSTS[@]/#/node-}"; do
        (umask 077 && new_token >"$dir/token/$t")
    done
    # the umask before the redirection (which the subshell's own umask would come too late
    # for), and chmod for a file an older lab.sh left 0644: the daemons refuse a tokens file
    # group or others could read
    (
        umask 077
        {
            echo "$(cat "$dir/token/admin") admin lab-admin"
            echo "$(cat "$dir/token/reader") reader lab-reader"
            echo "$(cat "$dir/token/localizer") localizer localizer"
            # a shard's replicas share its token: the controller keeps verdicts per token
            for p in "${PLANE_IDS[@]}"; do
                echo "$(cat "$dir/token/localizer-$p") localizer localizer-$p"
            done
            for h in "${HOSTS[@]}"; do echo "$(cat "$dir/token/agent-$h") agent $h"; done
        } >"$dir/tokens"
        for h in "${HOSTS[@]}"; do echo "$(cat "$dir/token/node-$h") prober $h"; done \
            >"$dir/node-tokens"
    )
    chmod 600 "$dir/tokens" "$dir/node-tokens"
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
tls=$tls
ha=$ha
CONF
}

# start SERVICE (checked by need_service)
start() {
    local name=$1 h=${1#*-} addr ct=()
    # shellcheck disable=SC1090
    . "$(conf)"
    case $name in
    etcd-*)
        local i=${name#etcd-} cluster=
        for j in 1 2 3; do cluster+="${cluster:+,}etcd-$j=http://[$(etcd_addr "$j")]:2380"; done
        mkdir -p "$dir/etcd-$i"
        daemon "$name" - etcd --name "$name" --data-dir "$dir/etcd-$i" \
            --listen-client-urls "http://[$(etcd_addr "$i")]:2379" \
            --advertise-client-urls "http://[$(etcd_addr "$i")]:2379" \
            --listen-peer-urls "http://[$(etcd_addr "$i")]:2380" \
            --initial-advertise-peer-urls "http://[$(etcd_addr "$i")]:2380" \
            --initial-cluster "$cluster" --initial-cluster-token "mrcfab-lab-$prefix" \
            --initial-cluster-state "$([ -e "$dir/etcd-$i/member" ] && echo existing || echo new)" \
            --heartbeat-interval 100 --election-timeout 1000
        ;;
    controller-*)
        local i=${name#controller-}
        mapfile -t ct < <(ctl_tls)
        daemon "$name" - "$bin/mrc-controller" --topology "$topo" --db "$dir/ctl-$i.db" \
            --tokens "$dir/tokens" --listen "[$(ctl_addr "$i")]:$ctl_port" --cc uet-1.0-nscc \
            --port-gbps 10 --base-rtt-ns 100000 --agent-interval 2 --etcd "$(etcd_urls)" \
            --name "$name" --advertise "$(ctl_url_of "$i")" ${ct[@]+"${ct[@]}"}
        ;;
    localizer-*)
        local pr=${name#localizer-} p r
        p=${pr%-*} r=${pr#*-}
        mapfile -t ct < <(client_tls "localizer-$p")
        daemon "$name" - "$bin/mrc-probe" localize --topology "$topo" \
            --listen "[$mgmt_net:ffff]:$(loc_port "$p" "$r")" --window-ms "$window_ms" \
            --rate "$probe_rate" --controller "$(ctl_url)" --planes "$p" \
            --etcd "$(etcd_urls)" --name "$name" --advertise "$(loc_url_of "$p" "$r")" \
            --token-file "$dir/token/localizer-$p" --report-tokens "$dir/node-tokens" \
            --hold-s "$hold_s" --deadline-ms $((window_ms * 8 / 5)) \
            --state "$dir/$name.state" ${ct[@]+"${ct[@]}"}
        ;;
    controller)
        # software switches queue for milliseconds: the base RTT and rate NSCC starts from
        mapfile -t ct < <(ctl_tls)
        daemon controller - "$bin/mrc-controller" --topology "$topo" --db "$dir/ctl.db" \
            --tokens "$dir/tokens" --listen "[$mgmt_net:ffff]:$ctl_port" --cc uet-1.0-nscc \
            --port-gbps 10 --base-rtt-ns 100000 --agent-interval 2 ${ct[@]+"${ct[@]}"}
        ;;
    localizer)
        mapfile -t ct < <(client_tls localizer)
        daemon localizer - "$bin/mrc-probe" localize --topology "$topo" \
            --listen "[$mgmt_net:ffff]:$((ctl_port + 1))" --window-ms "$window_ms" \
            --rate "$probe_rate" --controller "$(ctl_url)" \
            --token-file "$dir/token/localizer" --report-tokens "$dir/node-tokens" \
            --hold-s "$hold_s" --deadline-ms $((window_ms * 8 / 5)) \
            --state "$dir/localizer.state" ${ct[@]+"${ct[@]}"}
        ;;
    agent-*)
        addr=$(mgmt_addr "$h")
        mapfile -t ct < <(client_tls "$h")
        daemon "$name" "$h" "$bin/mrc-agent" --topology "$topo" --host "$h" \
            --controller "$(ctl_url)" --token-file "$dir/token/agent-$h" \
            --state-dir "$dir/agent-$h" --oob "[$addr]:7471" --report-interval 2 \
            --reorder-us 5000 ${ct[@]+"${ct[@]}"}
        ;;
    node-*)
        mapfile -t ct < <(client_tls "$h")
        local to=(--report-url "$(loc_url)/api/v1/reports") p
        if ha_on; then
            # each plane's ports to its shard's two replicas
            to=()
            for p in "${PLANE_IDS[@]}"; do
                to+=(--localizer "$p=$(loc_url_of "$p" 1),$(loc_url_of "$p" 2)")
            done
        fi
        daemon "$name" "$h" "$bin/mrc-probe" node --topology "$topo" --host "$h" \
            --window-ms "$window_ms" --rate "$probe_rate" --grace-ms $((window_ms * 2 / 5)) \
            "${to[@]}" --token-file "$dir/token/node-$h" ${ct[@]+"${ct[@]}"}
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
    n=$(ctl_curl -sf -H "Authorization: Bearer $(cat "$dir/token/reader")" "$(ctl_url1)/api/v1/agents" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["fresh"])')
    [ "$n" -ge "$1" ]
}

services_up() {
    local h n
    rm -rf "${dir:?}"/{ctl.db,ctl.db-wal,ctl.db-shm,log,agent-*,token,tokens,node-tokens}
    # the localizer's verdicts and holds (--state): a new lab's controller holds none of them
    rm -f "${dir:?}"/localizer.state*
    mkdir -p "$dir"
    tokens_make
    conf_write
    mkdir -p "$dir/log"
    if tls_on; then
        tls_make
    fi
    if ha_on; then
        local i p r
        for i in 1 2 3; do
            ip addr add "$(ctl_addr "$i")/64" dev "$prefix-mgmt" nodad 2>/dev/null || true
            ip addr add "$(etcd_addr "$i")/64" dev "$prefix-mgmt" nodad 2>/dev/null || true
        done
        rm -rf "${dir:?}"/etcd-* "${dir:?}"/ctl-*.db*
        command -v etcd >/dev/null || { echo "lab: no etcd (deploy/install-deps.sh installs etcd-server)" >&2; return 1; }
        for i in 1 2 3; do start "etcd-$i"; done
        wait_for "etcd" curl -sf "http://[$(etcd_addr 1)]:2379/health"
        for i in 1 2 3; do start "controller-$i"; done
        for i in 1 2 3; do wait_for "controller-$i" ctl_curl -sf "$(ctl_url_of "$i")/metrics"; done
        wait_for "a leader" ctl_leader
        for p in "${PLANE_IDS[@]}"; do for r in 1 2; do start "localizer-$p-$r"; done; done
    else
        start controller
        wait_for "the controller" ctl_curl -sf "$(ctl_url)/metrics"
        start localizer
    fi
    for h in "${HOSTS[@]}"; do
        start "agent-$h"
        start "node-$h"
    done
    if ha_on; then
        for p in "${PLANE_IDS[@]}"; do
            wait_for "plane $p's localizers" curl -sf "$(loc_url_of "$p" 1)/api/v1/status"
        done
    else
        wait_for "the localizer" curl -sf "$(loc_url)/api/v1/status"
    fi
    n=${#HOSTS[@]}
    wait_for "every agent" agents_in "$n"
    if ha_on; then
        echo "lab: the controllers: $(ctl_url) (the leader: $(ctl_leader)); etcd: $(etcd_urls)"
    fi
    echo "lab: the controller: $(ctl_url) (the dashboard; tokens in $dir/token: admin, reader)"
    if tls_on; then
        echo "lab: TLS: the CA is $(tls_dir)/ca.pem, the admin's client certificate $(tls_dir)/admin.pem;" \
            "eval \"\$(lab.sh -p $prefix -d $dir -P $ctl_port env)\" points mrcctl at the lab"
    fi
    if ha_on; then
        local shards=() p
        for p in "${PLANE_IDS[@]}"; do shards+=("plane $p: $(loc_url_of "$p" 1),$(loc_url_of "$p" 2)"); done
        echo "lab: the localizers (each shard's leader elected through etcd): ${shards[*]};" \
            "$n agents and $n prober nodes; logs in $dir/log"
    else
        echo "lab: the localizer: $(loc_url)/api/v1/status; $n agents and $n prober nodes;" \
            "logs in $dir/log"
    fi
}

up_check() {
    fabric_only=false window_ms=500 hold_s=10 probe_rate=512 tls=true ha=false
    while [ $# -gt 0 ]; do
        case $1 in
        --fabric-only) fabric_only=true ;;
        --no-tls) tls=false ;;
        --ha) ha=true ;;
        --window-ms | --hold-s | --probe-rate)
            [ $# -ge 2 ] || bad "up $1 wants a value (lab.sh --help)"
            case $1 in
            --window-ms) need_int "up --window-ms" "$2" 10 60000 "milliseconds"; window_ms=$((10#$2)) ;;
            --hold-s) need_int "up --hold-s" "$2" 1 86400 "seconds"; hold_s=$((10#$2)) ;;
            --probe-rate) need_int "up --probe-rate" "$2" 1 1000000 "probes a second"; probe_rate=$((10#$2)) ;;
            esac
            shift
            ;;
        *) bad "up takes --fabric-only, --no-tls, --ha, --window-ms MS, --hold-s S and --probe-rate N, not '$1'" ;;
        esac
        shift
    done
    "$bin/mrcctl" -t "$topo" topo validate >/dev/null 2>&1 ||
        bad "-t $topo does not validate: $(mrcctl topo validate 2>&1 | head -n 1)"
    if ! $fabric_only; then
        need_program mrc-controller
        need_program mrc-agent
        need_program mrc-probe
        if $tls; then
            command -v openssl >/dev/null || bad "openssl is not installed (deploy/install-deps.sh), or use up --no-tls"
        fi
    fi
}

up() {
    cleanup_up=true
    down
    local line name sid
    for line in "${SWITCHLINES[@]}"; do
        read -r name _ _ _ _ sid _ <<<"$line"
        make_ns "$name" 1
        # no dummy device on this kernel: a spare veth pair carries the local SIDs
        ip -n "$(ns "$name")" link add "$sid" type veth peer name "${sid}p"
        ip -n "$(ns "$name")" link set "$sid" up
        ip -n "$(ns "$name")" link set "${sid}p" up
    done
    local host port ifname addr uaddr gw block
    for host in "${HOSTS[@]}"; do
        make_ns "$host" 0
    done
    mgmt_up "${HOSTS[@]}"
    local a aif b bif
    for line in "${CABLES[@]}"; do
        read -r _ _ a _ aif b _ bif <<<"$line"
        ip link add "$aif" netns "$(ns "$a")" type veth peer name "$bif" netns "$(ns "$b")"
        veth_up "$(ns "$a")" "$aif"
        veth_up "$(ns "$b")" "$bif"
    done
    for name in "${SWITCHES[@]}"; do
        install_switch "$name"
    done
    for line in "${HOSTPORTS[@]}"; do
        read -r host port ifname addr uaddr gw _ _ _ block <<<"$line"
        host_port "$host" "$port" "$ifname" "$addr" "$uaddr" "$gw" "$block"
    done
    echo "lab: up: $(namespaces | wc -l) namespaces from $topo (prefix $prefix)"
    $fabric_only || services_up
    cleanup_up=false
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
    if [ -e "$(conf)" ] && [ -d "$(run)" ]; then
        if ha_on; then
            local i l role
            l=$(ctl_leader 2>/dev/null || true)
            for i in 1 2 3; do
                role=follower
                [ "${l%% *}" = "controller-$i" ] && role=leader
                kill -0 "$(cat "$(run)/controller-$i.pid" 2>/dev/null || echo 0)" 2>/dev/null || role=down
                echo "controller-$i $(ctl_url_of "$i") $role"
            done
            echo "etcd $(etcd_urls)"
        else
            echo "controller $(ctl_url)"
        fi
    fi
    local faults=() r
    mapfile -t faults < <(faults_list)
    if [ ${#faults[@]} -eq 0 ]; then
        echo "faults: none"
    fi
    for r in "${faults[@]}"; do
        echo "fault $(fault_describe "$r")"
    done
}

restart() {
    stop "$(run)/$1.pid"
    start "$1"
}

# kill SERVICE: as a crash, SIGKILL to its whole process group; its pid file stays, so that
# status says it exited
kill9() {
    local f=$(run)/$1.pid
    [ -e "$f" ] || { echo "lab: $1 is not running" >&2; return 1; }
    kill -KILL -- "-$(cat "$f")" 2>/dev/null || { echo "lab: $1 had exited already" >&2; return 1; }
    echo "lab: killed $1"
}

leader() {
    ctl_leader || { echo "lab: no controller leads (lab.sh status shows which run)" >&2; return 1; }
}

# drain X [REASON] / undrain X: the operator's maintenance entry, at the controller
ctl() {
    local ct=()
    mapfile -t ct < <(client_tls admin)
    "$bin/mrcctl" -t "$topo" --controller "$(ctl_url)" --token-file "$dir/token/admin" \
        ${ct[@]+"${ct[@]}"} "$@"
}

# reboot X SECS: every cable of switch X down, its table gone (as after a power cycle); SECS
# later the cables come back and the table is installed again
reboot() {
    local b peers=()
    mapfile -t peers < <(peers "$1")
    for b in "${peers[@]}"; do link_set "$1" "$b" down; done
    ip -n "$(ns "$1")" -6 route flush proto 201
    sleep "$2"
    for b in "${peers[@]}"; do link_set "$1" "$b" up --no-reconcile; done
    for b in "$1" "${peers[@]}"; do reconcile "$b"; done
}

# Reconciles element X after its port came back: the kernel drops the routes and link-local
# addresses of a port that goes down, as it would on any Linux switch, and a new install puts
# back exactly what is missing.
reconcile() {
    local x=$1 line host port ifname addr uaddr gw block
    if [ -n "${IS_SWITCH[$x]:-}" ]; then
        install_switch "$x"
        return
    fi
    for line in "${HOSTPORTS[@]}"; do
        read -r host port ifname addr uaddr gw _ _ _ block <<<"$line"
        if [ "$host" = "$x" ]; then
            host_port "$host" "$port" "$ifname" "$addr" "$uaddr" "$gw" "$block"
        fi
    done
}

# link_set A B up|down [--no-reconcile] (a cable, checked): the cable between A and B; once
# up, both ends get back what the kernel dropped (a switch coming back with several cables
# reconciles once, at the end, since its table needs every port up)
link_set() {
    cable_find "$1" "$2"
    local e1=$E1 if1=$IF1 e2=$E2 if2=$IF2
    ip -n "$(ns "$e1")" link set "$if1" "$3"
    if [ "$3" = up ]; then
        # the far end too, for a cable taken down from the other side; neighbours probed while
        # the link was down sit in FAILED: resolve them afresh
        ip -n "$(ns "$e2")" link set "$if2" up
        ip -n "$(ns "$e1")" neigh flush dev "$if1"
        ip -n "$(ns "$e2")" neigh flush dev "$if2"
        if [ "${4:-}" != --no-reconcile ]; then
            reconcile "$e1"
            reconcile "$e2"
        fi
    fi
}

# --- faults --------------------------------------------------------------------------------
#
# Loss and blackholes live in one nftables table, lab_fault, of the namespace where the
# traffic arrives: at ingress, so that frames a host writes itself (past its own output hooks)
# meet them too. Each fault's rule carries its description as a comment ("loss FROM TO PCT",
# "blackhole X"), so that the kernel's rules are the one record of what is in force. A flapping
# cable is a process, DIR/run/flap-A~B.pid (its period in flap-A~B.secs); a cable taken down
# is a veth end that is down.

fault_table() { # X RULES: adds chains to X's fault table
    printf 'table inet lab_fault {\n%s\n}\n' "$2" | nsx "$1" nft -f -
}
fault_chain_del() { # X CHAIN: removes X's chain, and the table once it is empty
    nsx "$1" nft delete chain inet lab_fault "$2" 2>/dev/null || true
    if ! nsx "$1" nft list table inet lab_fault 2>/dev/null | grep -q '^\s*chain '; then
        nsx "$1" nft delete table inet lab_fault 2>/dev/null || true
    fi
}

# drop_from X Y PCT_T PCT (X Y a cable): X drops PCT % (PCT_T thousandths of a percent) of
# what arrives over its cable from Y. numgen draws 0..99999 per packet, so that fractions of a
# percent down to 0.001 % (a degraded link, 0.1 % to 1 %) are as exact as whole ones; the
# first rule counts what arrives, the second what it drops.
drop_from() {
    local x=$1 y=$2 t=$3 pct=$4 ifname rule
    cable_find "$x" "$y"
    ifname=$IF1
    fault_chain_del "$x" "in_$ifname"
    case $t in
    0) return 0 ;;
    100000) rule=drop ;;
    *) rule="numgen random mod 100000 < $t drop" ;;
    esac
    rule=${rule/drop/counter drop comment \"loss $y $x $pct\"}
    fault_table "$x" "chain in_$ifname { type filter hook prerouting priority 0;
iifname \"$ifname\" counter
iifname \"$ifname\" $rule
}"
}

fault_check() {
    local kind=${1:-}
    [ $# -ge 1 ] || bad "fault wants loss, blackhole or flap (lab.sh --help)"
    shift
    case $kind in
    loss)
        need_args "fault loss" 3 4 "A B PCT [one-way]" "$@"
        need_cable "$1" "$2"
        pct_parse "$3"
        [ "${4:-one-way}" = one-way ] ||
            bad "fault loss's fourth word '$4' is not one-way (leave it out for both ways)"
        ;;
    blackhole)
        need_args "fault blackhole" 1 1 "a switch" "$@"
        need_element "$1" switch
        ;;
    flap)
        need_args "fault flap" 3 3 "A B SECS" "$@"
        need_cable "$1" "$2"
        need_int "fault flap every" "$3" 1 3600 "seconds"
        ;;
    *) bad "unknown fault '$kind': want loss, blackhole or flap (lab.sh --help)" ;;
    esac
}

fault() {
    local kind=$1 a b
    shift
    case $kind in
    loss)
        pct_parse "$3"
        cable_find "$1" "$2"
        a=$E1 b=$E2
        drop_from "$b" "$a" "$PCT_T" "$PCT"
        [ "${4:-}" = one-way ] || drop_from "$a" "$b" "$PCT_T" "$PCT"
        ;;
    blackhole)
        fault_table "$1" "chain blackhole { type filter hook prerouting priority 0;
meta l4proto != ipv6-icmp counter drop comment \"blackhole $1\"
}"
        ;;
    flap)
        cable_find "$1" "$2"
        a=$C1 b=$C2
        stop "$(run)/flap-$a~$b.pid"
        mkdir -p "$(run)"
        echo "$((10#$3))" >"$(run)/flap-$a~$b.secs"
        setsid "$0" -t "$topo" -p "$prefix" -b "$bin" -d "$dir" flap-loop "$a" "$b" \
            "$((10#$3))" </dev/null >/dev/null 2>&1 &
        echo $! >"$(run)/flap-$a~$b.pid"
        ;;
    esac
}

# faults_scan [ELEMENT...]: every fault in force in the namespaces of the given elements (by
# default all), a line each: "loss FROM TO PCT DROPPED ARRIVED", "blackhole X DROPPED",
# "flap A B SECS", "down A B" (cables in the topology's order; a cable is down if an end it
# scanned is)
faults_scan() {
    local e n line x xif y yif f c
    declare -A admin=()
    [ $# -gt 0 ] || set -- "${SWITCHES[@]}" "${HOSTS[@]}"
    for e in "$@"; do
        n=$(ns "$e")
        [ -e "/run/netns/$n" ] || continue
        # one visit a namespace: its fault rules, then its links' admin state
        while read -r x c; do
            if [ "$x" = fault ]; then
                echo "$c"
            else
                admin[$e/$x]=$c
            fi
        done < <(ip netns exec "$n" sh -c 'nft list table inet lab_fault 2>/dev/null; echo "--"
            ip -o link show' | awk '
            $1 == "--" { links = 1; next }
            links {
                name = $2; sub(/:$/, "", name); sub(/@.*/, "", name)
                print name, ($3 ~ /[<,]UP[,>]/ ? 1 : 0)
                next
            }
            /^[ \t]*chain / { arrived = 0 }
            match($0, /comment "[^"]*"/) {
                c = substr($0, RSTART + 9, RLENGTH - 10)
                for (i = 1; i < NF; i++) if ($i == "packets") p = $(i + 1)
                print "fault", c, p, (c ~ /^loss / ? arrived : "")
                next
            }
            / counter packets / { for (i = 1; i < NF; i++) if ($i == "packets") arrived = $(i + 1) }')
    done
    for f in "$(run)"/flap-*.pid; do
        [ -e "$f" ] || continue
        c=$(basename "$f" .pid)
        c=${c#flap-}
        echo "flap ${c%%~*} ${c#*~} $(cat "$(run)/flap-$c.secs" 2>/dev/null || echo '?')"
    done
    for line in "${CABLES[@]}"; do
        read -r _ _ x _ xif y _ yif <<<"$line"
        [ ! -e "$(run)/flap-$x~$y.pid" ] || continue
        if [ "${admin[$x/$xif]:-1}" = 0 ] || [ "${admin[$y/$yif]:-1}" = 0 ]; then
            echo "down $x $y"
        fi
    done
}

# faults_list [ELEMENT...]: faults_scan with a cable's two directions of equal loss made one, "loss A B PCT
# both DROPPED ARRIVED" (A B in the topology's order); one direction is "loss FROM TO PCT
# one-way DROPPED ARRIVED"
faults_list() {
    local r k from to pct d n
    declare -A loss=()
    local order=()
    while read -r k from to pct d n; do
        if [ "$k" != loss ]; then
            echo "$k $from $to $pct $d $n" | sed 's/ *$//'
            continue
        fi
        loss[$from/$to]="$pct $d $n"
        order+=("$from/$to")
    done < <(faults_scan "$@")
    for r in "${order[@]}"; do
        [ -n "${loss[$r]:-}" ] || continue
        from=${r%/*} to=${r#*/}
        read -r pct d n <<<"${loss[$r]}"
        unset "loss[$r]"
        if [ -n "${loss[$to/$from]:-}" ] && [ "${loss[$to/$from]%% *}" = "$pct" ]; then
            local d2 n2
            read -r _ d2 n2 <<<"${loss[$to/$from]}"
            unset "loss[$to/$from]"
            cable_find "$from" "$to"
            echo "loss $C1 $C2 $pct both $((d + d2)) $((n + n2))"
        else
            echo "loss $from $to $pct one-way $d $n"
        fi
    done
}

fault_describe() {
    local k a b v way d n
    read -r k a b v way d n <<<"$1"
    case $k in
    loss)
        if [ "$way" = both ]; then
            echo "loss $a~$b $v % both ways (dropped $d of $n packets)"
        else
            echo "loss $a~$b $v % one-way, from $a to $b (dropped $d of $n packets)"
        fi
        ;;
    blackhole) echo "blackhole $a (dropped $b packets)" ;;
    flap) echo "flap $a~$b every $v s" ;;
    down) echo "down $a~$b (lab.sh link-down; link-up or heal brings it back)" ;;
    esac
}

heal_check() {
    [ $# -ge 1 ] || bad "heal wants X, X Y or --all (lab.sh --help)"
    if [ "$1" = --all ]; then
        need_args "heal --all" 1 1 "nothing more" "$@"
        return 0
    fi
    need_args heal 1 2 "X [Y] or --all" "$@"
    if [ $# -eq 2 ]; then
        need_cable "$1" "$2"
    else
        need_end "$1"
    fi
}

# host_t0 HOST:PORT (checked): the T0 at the far end of the host port's cable
host_t0() {
    local line host port ifname addr uaddr gw t0 _
    for line in "${HOSTPORTS[@]}"; do
        read -r host port ifname addr uaddr gw t0 _ <<<"$line"
        [ "$host:$port" != "$1" ] || echo "$t0"
    done
}

# heal --all | X | A B (checked): removes what faults_list finds of it
heal() {
    local a='' b='' x='' r k ra rb v way what healed=0 faults=() scan=()
    if [ "$1" = --all ]; then
        what=""
    elif [ $# -eq 2 ] || [[ $1 == *:* ]]; then
        # a cable, or the one a host port ends
        if [ $# -eq 2 ]; then
            cable_find "$1" "$2"
        else
            cable_find "$1" "$(host_t0 "$1")"
        fi
        a=$E1 b=$E2
        what=" of the cable $C1~$C2"
        scan=("$a" "$b")
    else
        x=$1
        what=" of $x"
        mapfile -t scan < <(peers "$x")
        scan+=("$x")
    fi
    # where the faults can be: a cable's two ends, an element's and its neighbours' (the
    # whole fabric takes a second under load, and a heal is timed by the story)
    mapfile -t faults < <(faults_list "${scan[@]}")
    for r in "${faults[@]}"; do
        read -r k ra rb v way _ <<<"$r"
        if [ -n "$x" ]; then
            [ "$ra" = "$x" ] || { [ "$k" != blackhole ] && [ "$rb" = "$x" ]; } || continue
        elif [ -n "$a" ]; then
            [ "$k" != blackhole ] || continue
            { [ "$ra" = "$a" ] && [ "$rb" = "$b" ]; } ||
                { [ "$ra" = "$b" ] && [ "$rb" = "$a" ]; } || continue
        fi
        case $k in
        loss)
            cable_find "$rb" "$ra"
            fault_chain_del "$rb" "in_$IF1"
            if [ "$way" = both ]; then
                fault_chain_del "$ra" "in_$IF2"
            fi
            ;;
        blackhole) fault_chain_del "$ra" blackhole ;;
        flap)
            stop "$(run)/flap-$ra~$rb.pid"
            rm -f "$(run)/flap-$ra~$rb.secs"
            link_set "$ra" "$rb" up
            ;;
        down) link_set "$ra" "$rb" up ;;
        esac
        echo "lab: healed $(fault_describe "$r")"
        healed=$((healed + 1))
    done
    [ "$healed" -gt 0 ] || echo "lab: no fault$what is in force: nothing to heal"
}

# --- the commands: every argument checked first, then done ---------------------------------

case $cmd in
up) up_check "$@" ;;
down | status | env | leader) need_args "$cmd" 0 0 "no argument" "$@" ;;
kill)
    need_args kill 1 1 "SERVICE" "$@"
    need_service "$1"
    ;;
addr)
    need_args addr 1 1 "HOST or root" "$@"
    [ "$1" = root ] || need_element "$1" host
    ;;
restart)
    need_args restart 1 1 "SERVICE" "$@"
    need_service "$1"
    ;;
drain)
    need_args drain 1 2 "X [REASON]" "$@"
    need_drainable "$1"
    ;;
undrain)
    need_args undrain 1 1 "X" "$@"
    need_drainable "$1"
    ;;
reboot)
    need_args reboot 2 2 "a switch and SECS" "$@"
    need_element "$1" switch
    need_int "reboot for" "$2" 1 3600 "seconds"
    ;;
link-down | link-up)
    need_args "$cmd" 2 2 "A B (the ends of a cable)" "$@"
    need_cable "$1" "$2"
    ;;
fault) fault_check "$@" ;;
heal) heal_check "$@" ;;
flap-loop) need_cable "$1" "$2" ;;
esac
case $cmd in
fault | heal | link-down | link-up | reboot | flap-loop) need_lab ;;
drain | undrain | restart | env | kill | leader) need_system ;;
esac

acting=true
case $cmd in
up) up ;;
down) down ;;
status) status ;;
env) lab_env ;;
addr) mgmt_addr "$1" ;;
link-down) link_set "$1" "$2" down ;;
link-up) link_set "$1" "$2" up ;;
fault) fault "$@" ;;
heal) heal "$@" ;;
restart) restart "$1" ;;
kill) kill9 "$1" ;;
leader) leader ;;
drain) ctl drain "$1" --reason "drain: ${2:-maintenance}" ;;
undrain) ctl undrain "$1" ;;
reboot) reboot "$1" "$((10#$2))" ;;
flap-loop)
    # fault flap's background half: down and up until killed
    while :; do
        link_set "$1" "$2" down
        sleep "$3"
        link_set "$1" "$2" up
        sleep "$3"
    done
    ;;
esac
