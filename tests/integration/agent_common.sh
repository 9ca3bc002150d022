# SPDX-License-Identifier: MIT
# What the lab's integration tests share; sourced after they set bin, root and topo.
# shellcheck shell=bash

lab() { "$root/deploy/lab/lab.sh" -b "$bin" -t "$topo" -p "$prefix" -d "$work/lab" "$@"; }
# lab_ctl [LAB ARGS]: after lab.sh up, $ctl is the lab's controller URL (https unless up
# --no-tls), ctl_curl is curl trusting its CA with the operator's client certificate, and the
# MRCFAB_ variables point mrcctl at it (lab.sh env)
lab_ctl() {
    eval "$(lab "$@" env)"
    ctl=$MRCFAB_CONTROLLER
}
ctl_curl() {
    if [ -n "${MRCFAB_CACERT:-}" ]; then
        curl --cacert "$MRCFAB_CACERT" --cert "$MRCFAB_CLIENT_CERT" --key "$MRCFAB_CLIENT_KEY" "$@"
    else
        curl "$@"
    fi
}
nsx() { local h=$1; shift; ip netns exec "$prefix-$h" "$@"; }
# a process in host $1's namespace, in the background: $! is the process itself (a function
# put in the background would be a subshell, and killing that leaves its child running)
bgx() { local h=$1; shift; ip netns exec "$prefix-$h" "$@" & }
fail() {
    echo "FAIL: $*"
    tail -n 20 "$work"/*.log 2>/dev/null || true
    exit 1
}
# a field of a JSON document on stdin, by a path of keys and indexes
jq_() { python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1:]: v=v[int(k)] if isinstance(v,list) else v[k]
print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$@"; }
now_ms() { date +%s%3N; }

# What a lab test does first: root or skip (77), the lab's namespace prefix STEM<pid>, a work
# folder, and on exit every process of $pids (and $ctl_pid) killed, the lab and folder gone.
lab_test() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: needs root for network namespaces"
        exit 77
    fi
    prefix="$1$$"
    work=$(mktemp -d)
    pids=()
    ctl_pid=
    trap lab_test_cleanup EXIT INT TERM
}
lab_test_cleanup() {
    local p
    for p in "${pids[@]}" $ctl_pid; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    lab down
    rm -rf "$work"
}

# garbage NS ADDR UDP [MAGIC]: from namespace NS, 2000 IPv6-in-IPv6 packets to ADDR: random
# bytes of every length, and every other one of 60 bytes or more an inner IPv6/UDP header to
# port UDP (its body beginning with MAGIC) over random fields
garbage() {
    nsx "$1" python3 - "$2" "$3" "${4:-}" <<'PYEOF'
import os, random, socket, struct, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, 41)
random.seed(7)
magic = sys.argv[3].encode()
for i in range(2000):
    n = random.choice([0, 1, 20, 40, 48, 60, 88, 100, 1500, 4200])
    body = bytearray(os.urandom(n))
    if n >= 60 and i % 2:
        body[0] = 0x60
        body[4:6] = struct.pack("!H", n - 40)
        body[6] = 17
        body[42:44] = struct.pack("!H", int(sys.argv[2]))
        body[48:48 + len(magic)] = magic
    s.sendto(bytes(body), (sys.argv[1], 0))
PYEOF
}
