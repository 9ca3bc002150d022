#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-pair end to end: the issue's acceptance run, a plane failure, a dead peer, bad arguments,
# and its pcap decoded by tshark's InfiniBand dissector.
set -euo pipefail
bin=${1:?usage: mrc_pair_test.sh BINDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check.sh
source "$(dirname "${BASH_SOURCE[0]}")/../check.sh"
# field FILE EXPR: a value of the JSON summary, by a Python expression on |s|
field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$bin/mrc-pair" --msgs 2000 --size 1048576 --loss 0.01 --reorder 0.05 --trim 0.01 --seed 7 \
    >"$tmp/a.json"
ok=$(field "$tmp/a.json" "s['messages_completed'] == 2000 and s['bytes_verified'] == 2000 * 1048576
     and s['bytes_corrupt'] == 0 and not s['qp_error'] and s['packets_retransmitted'] > 0
     and s['nacks']['trimmed'] > 0 and s['retransmitted_by_cause']['inferred'] > 0
     and s['faults']['dropped'] > 0 and s['faults']['trimmed'] > 0 and s['elapsed_ns'] > 0
     and set(s['ev_states']) == {'good', 'skip', 'assumed_bad', 'denied'}")
[ "$ok" = True ] && pass "acceptance run: 2000 x 1 MiB, every byte right, faults repaired" ||
    fail "acceptance run: $(cat "$tmp/a.json")"

"$bin/mrc-pair" --msgs 200 --size 262144 --planes 4 --down-plane 2@200us >"$tmp/d.json"
ok=$(field "$tmp/d.json" "s['messages_completed'] == 200 and s['bytes_corrupt'] == 0
     and not s['qp_error']")
[ "$ok" = True ] && pass "a plane down mid-transfer loses nothing" || fail "plane down: $(cat "$tmp/d.json")"

set +e
"$bin/mrc-pair" --msgs 4 --size 65536 --dead-peer --retry 1,2 --timeout 4 >"$tmp/x.json"
rc=$?
set -e
ok=$(field "$tmp/x.json" "s['qp_error'] and s['messages_completed'] == 0 and s['timeouts'] > 0")
[ $rc -eq 1 ] && [ "$ok" = True ] && pass "a dead peer ends in QP error, exit 1" ||
    fail "dead peer: exit $rc $(cat "$tmp/x.json")"

for args in "--loss 2" "--down-plane 9@1us" "--ev-loss nonsense" "--mtu 100" "stray"; do
    set +e
    # shellcheck disable=SC2086
    "$bin/mrc-pair" $args >/dev/null 2>&1
    rc=$?
    set -e
    [ $rc -eq 2 ] && pass "bad arguments '$args': exit 2" || fail "bad arguments '$args': exit $rc"
done

"$bin/mrc-pair" --msgs 2 --size 8192 --planes 2 --evs 8 --pcap "$tmp/p.pcap" >/dev/null
qpn=$(tshark -r "$tmp/p.pcap" -Y 'infiniband.bth.opcode == 198' -c 1 -T fields \
    -e infiniband.bth.destqp -e infiniband.bth.psn -e udp.dstport -e infiniband.bth.padcnt \
    2>/dev/null)
ops=$(tshark -r "$tmp/p.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -un | tr '\n' ' ')
if [ "$qpn" = $'0x000010\t65520\t4791\t0' ] && [[ $ops == *"198 201"*"220"* ]]; then
    pass "tshark decodes the BTH of the pcap (opcodes $ops)"
else
    fail "tshark: '$qpn' opcodes '$ops'"
fi

# what the switches did shows in the capture: trimmed headers re-marked (12, 16 at the last hop),
# only headers left of them; marked packets CE
"$bin/mrc-pair" --msgs 200 --size 65536 --trim 0.05 --trim-lasthop 0.02 --ecn 0.05 --seed 3 \
    --pcap "$tmp/t.pcap" >"$tmp/t.json"
count() { tshark -r "$tmp/t.pcap" -Y "$1" 2>/dev/null | wc -l; }
trimmed=$(field "$tmp/t.json" "s['faults']['trimmed']")
t12=$(count 'ipv6.tclass.dscp == 12') t16=$(count 'ipv6.tclass.dscp == 16')
long=$(count 'ipv6.tclass.dscp in {12 16} && frame.len > 100') ce=$(count 'ipv6.tclass.ecn == 3')
if [ "$t12" -gt 0 ] && [ "$t16" -gt 0 ] && [ $((t12 + t16)) -eq "$trimmed" ] && [ "$long" -eq 0 ] &&
    [ "$ce" -gt 0 ]; then
    pass "the pcap shows the switches' marks: $t12 + $t16 trimmed headers of $trimmed, $ce CE"
else
    fail "trim marks in the pcap: DSCP 12 $t12, 16 $t16, trimmed $trimmed, long $long, CE $ce"
fi

finish mrc-pair
