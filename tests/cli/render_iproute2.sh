#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The iproute2 render on the kernel, applied the way its own header says, in network
# namespaces: twice over (the second run succeeds and changes nothing, and routes install then
# finds nothing to change), and with one port missing (every other route and address goes in,
# exit status 1), where plain ip -batch stops at the failed line and leaves the rest out.
# check (tests/check.sh) evaluates its first argument later: single quotes on purpose
# shellcheck disable=SC2016,SC2034
set -euo pipefail

bin=${1:?usage: render_iproute2.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root for network namespaces"
    exit 77
fi
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
lab=$root/deploy/topologies/lab.json
sw=p0-t1-1
tmp=$(mktemp -d)
nss=()
cleanup() {
    local n
    for n in "${nss[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
mrcctl() { "$bin/mrcctl" "$@"; }

mrcctl -t "$lab" routes render --switch "$sw" --format iproute2 >"$tmp/sw.ip"
mrcctl -t "$lab" routes render --switch "$sw" --format json >"$tmp/sw.json"
# the command the batch's header gives, less its FILE
apply=$(sed -n 's/^# apply with: ip \(.*\) FILE$/\1/p' "$tmp/sw.ip")
read -r -a apply_args <<<"$apply"
check '[ "$apply" = "-force -batch" ]' "the batch says to apply it with ip -force -batch"
sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sid_device"])' "$tmp/sw.json")
mapfile -t ports < <(python3 -c 'import json,sys
for a in json.load(open(sys.argv[1]))["addresses"]: print(a["ifname"])' "$tmp/sw.json")

# want [SKIP_IFNAME]: the plan's routes and addresses of the switch, "PREFIX dev DEV" and
# "ADDRESS dev DEV", one a line and sorted, less those through port SKIP_IFNAME
want() {
    python3 - "$tmp/sw.json" "${1:-}" <<'EOF' | sort
import json, sys
t, skip = json.load(open(sys.argv[1])), sys.argv[2]
for r in t["routes"]:
    dev = r.get("device") or r["ifname"]
    if dev != skip:
        print(f"{r['prefix']} dev {dev}")
for a in t["addresses"]:
    if a["ifname"] != skip:
        print(f"{a['address']} dev {a['ifname']}")
EOF
}
# have NS: what namespace NS holds of them, in the same form: the routes of the plan's
# protocol and the link-local addresses of the plan (fe80::<usid>:<port>, not the kernel's own)
have() {
    {
        ip -n "$1" -6 route show proto 201 table main |
            awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $1 " dev " $(i + 1); break}}'
        ip -n "$1" -6 -o addr show scope link | awk '$4 ~ /^fe80::[0-9a-f]+:[0-9a-f]+\/64$/ {print $4 " dev " $2}'
    } | sort
}
# make_ns NAME PORT...: a namespace with IPv6 forwarding on, the SID device and the given
# ports up (veth pairs: this kernel may have no dummy device)
make_ns() {
    local n=$1 d
    shift
    ip netns add "$n"
    nss+=("$n")
    ip netns exec "$n" sysctl -qw net.ipv6.conf.all.forwarding=1 \
        net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
    ip -n "$n" link set lo up
    for d in "$sid" "$@"; do
        ip -n "$n" link add "$d" type veth peer name "${d}p"
        ip -n "$n" link set "${d}p" up
        ip -n "$n" link set "$d" up
    done
}
# batch NS ARGS...: ip -n NS ARGS... FILE, its exit status in $rc and its messages in $tmp/err
batch() {
    local n=$1
    shift
    set +e
    ip -n "$n" "$@" "$tmp/sw.ip" 2>"$tmp/err"
    rc=$?
    set -e
}

# 1. every port there: two runs, both exit 0, the plan's state after each, nothing to change
ns=rndr-$$-all
make_ns "$ns" "${ports[@]}"
want >"$tmp/want"
batch "$ns" "${apply_args[@]}"
rc1=$rc
have "$ns" >"$tmp/have1"
batch "$ns" "${apply_args[@]}"
rc2=$rc
have "$ns" >"$tmp/have2"
check '[ $rc1 -eq 0 ] && cmp -s "$tmp/want" "$tmp/have1"' \
    "ip $apply: exit 0, every route and address of the plan ($(wc -l <"$tmp/want")) in place"
check '[ $rc2 -eq 0 ] && cmp -s "$tmp/have1" "$tmp/have2"' \
    "ip $apply a second time: exit 0, nothing changed"
out=$(mrcctl -t "$lab" routes install --switch "$sw" --netns "$ns" --dry-run 2>&1 || true)
check 'grep -q ": 0 to add, 0 to change, 0 to remove, [0-9]* unchanged, 0 conflicts" <<<"$out"' \
    "after two runs, routes install finds nothing to change"

# 2. one port missing: plain ip -batch stops at its first line and leaves every later one out;
# the header's way goes on, puts in everything else and exits 1
missing=${ports[2]}
ns=rndr-$$-miss
make_ns "$ns" "${ports[@]:0:2}" "${ports[@]:3}"
want "$missing" >"$tmp/want-miss"
batch "$ns" -batch
have "$ns" >"$tmp/plain"
check '[ $rc -ne 0 ] && ! cmp -s "$tmp/want-miss" "$tmp/plain"' \
    "plain ip -batch with $missing missing: exit $rc, $(wc -l <"$tmp/plain") of the other $(wc -l <"$tmp/want-miss") routes and addresses in place"
batch "$ns" "${apply_args[@]}"
have "$ns" >"$tmp/force"
check '[ $rc -eq 1 ] && grep -q "Cannot find device \"$missing\"" "$tmp/err" && cmp -s "$tmp/want-miss" "$tmp/force"' \
    "ip $apply with $missing missing: exit 1 naming it, every other route and address ($(wc -l <"$tmp/want-miss")) in place"
batch "$ns" "${apply_args[@]}"
have "$ns" >"$tmp/force2"
check '[ $rc -eq 1 ] && cmp -s "$tmp/force" "$tmp/force2"' \
    "ip $apply again with $missing missing: exit 1, nothing else changed"

# 3. the port comes back: a run puts its address and route in too
ip -n "$ns" link add "$missing" type veth peer name "${missing}p"
ip -n "$ns" link set "${missing}p" up
ip -n "$ns" link set "$missing" up
batch "$ns" "${apply_args[@]}"
have "$ns" >"$tmp/back"
check '[ $rc -eq 0 ] && cmp -s "$tmp/want" "$tmp/back"' \
    "once $missing is there, ip $apply: exit 0, the whole plan in place"

finish render_iproute2
