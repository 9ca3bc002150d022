#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-probe node on every host of the lab fabric, the agents beside it: on a healthy fabric
# every port sends its whole share of the plan and misses nothing; with one direction of one
# T0-T1 link dropping 20 % (nftables numgen), every deficit is a probe whose path crosses that
# link direction, and the other direction and every other link lose nothing; `mrc-probe
# validate` passes a healthy job and fails exactly the paths over a dead T1; the agents'
# engines see none of the probes.
set -euo pipefail

bin=${1:?usage: probe_node.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test pn

lab up --fabric-only >/dev/null
hosts=$("$bin/mrcctl" -t "$topo" topo hosts --no-header | awk '!s[$1]++ {print $1}')
window_ms=500
for h in $hosts; do
    bgx "$h" "$bin/mrc-probe" node --topology "$topo" --host "$h" --window-ms $window_ms \
        --grace-ms 200 >"$work/probe-$h.out" 2>"$work/probe-$h.log"
    pids+=($!)
done
bgx h0 "$bin/mrc-agent" --topology "$topo" --host h0 >"$work/agent-h0.log" 2>&1
pids+=($!)

# the reports of the windows that begin after |since| (ms) and end before now
reports() {
    local since=$1 h
    for h in $hosts; do cat "$work/probe-$h.out"; done |
        python3 -c 'import json,sys
since=int(sys.argv[1]); w=int(sys.argv[2])
for l in sys.stdin:
    r=json.loads(l)
    if r["window"]*w >= since: print(l, end="")' "$since" "$window_ms"
}

# 1. healthy: 3 whole windows, every port sent all and missed nothing, counted from when every
# node has reported once (so that all of them are sending: they start one after the other)
for _ in $(seq 100); do
    n=0
    for h in $hosts; do [ -s "$work/probe-$h.out" ] && n=$((n + 1)); done
    [ "$n" = 8 ] && break
    sleep 0.1
done
[ "$n" = 8 ] || fail "only $n of the 8 nodes reported"
t0=$(now_ms)
sleep 2.2
reports "$t0" >"$work/healthy.json"
python3 - "$work/healthy.json" <<'PYEOF' || fail "a healthy fabric lost probes"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
hosts = {r["host"] for r in rs}
assert len(hosts) == 8 and len(rs) >= 16, f"{len(rs)} reports from {len(hosts)} hosts"
sent = {p["sent"] for r in rs for p in r["ports"]}
assert len(sent) == 1 and 0 not in sent, f"ports sent {sent}"
bad = [(r["host"], r["window"], p["plane"], p["missing"], p["deficits"][:3])
       for r in rs for p in r["ports"] if p["missing"] or p["expected"] == 0]
assert not bad, bad
print(f"PASS: healthy: {len(rs)} reports, every port sent {sent.pop()} a window, none missing")
PYEOF

# 2. p0-t0-0 -> p0-t1-0 drops 20 %
link=$(awk '$3 == "p0-t0-0" && $6 == "p0-t1-0" {print $5}' < <("$bin/mrcctl" -t "$topo" topo cables --no-header))
nsx p0-t0-0 nft -f - <<NFT
table inet labfault {
    chain post { type filter hook postrouting priority 0; oifname "$link" numgen random mod 100 < 20 counter drop; }
}
NFT
t0=$(($(now_ms) + 100))
sleep 2.7
nsx p0-t0-0 nft delete table inet labfault
reports "$t0" >"$work/lossy.json"
python3 - "$work/lossy.json" <<'PYEOF' || fail "the deficits do not point at p0-t0-0 -> p0-t1-0"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
lost = other = 0
for r in rs:
    for p in r["ports"]:
        for kind, a, k, j, idx in p["deficits"]:
            # the probes that cross T0 0 -> T1 0 of plane 0: a T1 bounce or a cross probe
            # from a port under T0 0 over T1 0
            if p["plane"] == 0 and kind in ("t1_bounce", "cross") and a == 0 and j == 0:
                lost += 1
            else:
                other += 1
                print("unexplained", r["host"], p["plane"], kind, a, k, j, idx)
assert other == 0, f"{other} deficits elsewhere"
assert lost >= 10, f"only {lost} probes lost over the lossy link"
print(f"PASS: lossy link: {lost} deficits, each on a path over p0-t0-0 -> p0-t1-0, none elsewhere")
PYEOF

# 3. pre-job validation: each host of a job sweeps its paths; healthy, all pass; with a T1 that
# forwards nothing, exactly the paths over it fail
job=h0,h2,h5,h7
for h in h0 h5; do
    t0=$(now_ms)
    nsx "$h" "$bin/mrc-probe" validate --topology "$topo" --host "$h" --hosts $job \
        >"$work/val-$h.txt" || fail "validate on $h: $(cat "$work/val-$h.txt")"
    echo "PASS: $(tail -1 "$work/val-$h.txt") in $(($(now_ms) - t0)) ms"
done
nsx p1-t1-0 nft -f - <<'NFT'
table inet labfault {
    chain pre { type filter hook prerouting priority 0; meta l4proto != ipv6-icmp drop; }
}
NFT
rc=0
nsx h0 "$bin/mrc-probe" validate --topology "$topo" --host h0 --hosts $job >"$work/val.txt" || rc=$?
nsx p1-t1-0 nft delete table inet labfault
[ "$rc" = 1 ] || fail "validate passed (or failed to run: $rc) with p1-t1-0 dead: $(cat "$work/val.txt")"
nfail=$(grep -c '^FAIL h0 plane' "$work/val.txt" || true)
nover=$(grep -c '^FAIL h0 plane 1 .*T1 0,' "$work/val.txt" || true)
[ "$nfail" -gt 0 ] && [ "$nfail" = "$nover" ] ||
    fail "with p1-t1-0 dead, $nover of $nfail failed paths cross it: $(cat "$work/val.txt")"
echo "PASS: validate with p1-t1-0 dead: $nfail paths failed, each over it"

# 4. garbage at h5's plane-0 port from its T0: random bytes, and probe-looking packets (UDP
# 4792, the magic) with random fields; the node counts those its filter lets in, stays up, and
# misses nothing after
t0name=$(awk '$1 == "h5" && $2 == 0 {print $7}' < <("$bin/mrcctl" -t "$topo" topo hosts --no-header))
uaddr=$(awk '$1 == "h5" && $2 == 0 {print $5}' < <("$bin/mrcctl" -t "$topo" topo hosts --no-header))
garbage "$t0name" "$uaddr" 4792 MRCP
t0=$(now_ms)
sleep 1.8
reports "$t0" >"$work/after.json"
python3 - "$work/after.json" <<'PYEOF' || fail "garbage changed what the nodes count"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
h5 = [r for r in rs if r["host"] == "h5"]
assert h5 and h5[-1]["garbage"] + h5[-1]["unexpected"] >= 100, h5[-1:]
bad = [(r["host"], p["plane"], p["missing"]) for r in rs for p in r["ports"] if p["missing"]]
assert not bad, bad
print(f"PASS: garbage: h5 counted {h5[-1]['garbage']} + {h5[-1]['unexpected']}, no probe missed")
PYEOF
kill -0 "${pids[5]}" 2>/dev/null || fail "h5's node died of garbage"

# the agent's engine saw no probe (its filter keeps to MRC's UDP port)
taken=$(nsx h0 "$bin/mrc-perf" status | jq_ io rx_garbage)
[ "$taken" = 0 ] || fail "the agent took $taken probes for MRC packets"
echo "PASS: the agent beside the prober saw none of its probes"
