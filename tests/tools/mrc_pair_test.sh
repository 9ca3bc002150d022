#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-pair end to end: the issue's acceptance run, a plane failure, a dead peer, bad arguments,
# its command line (--help, --version, the flags), and its pcap decoded by tshark's InfiniBand
# dissector.
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

# run ARGS...: mrc-pair's stdout and stderr in $tmp/run.out and .err, its exit status in $rc
run() {
    set +e
    "$bin/mrc-pair" "$@" >"$tmp/run.out" 2>"$tmp/run.err"
    rc=$?
    set -e
}
# each bad argument: exit 2 and one line on stderr naming the fault and pointing at --help (an
# unknown option or a missing value used to crash it: getopt's '?' indexed the option table)
for args in "--loss 2" "--down-plane 9@1us" "--down-plane x@1us" "--ev-loss nonsense" "--mtu 100" \
    "--mtu 3000" "--retry 8,1" "--delay 5x" "--rate 0" "stray" "--bogus" "--loss" "-x"; do
    # shellcheck disable=SC2086
    run $args
    [ $rc -eq 2 ] && [ ! -s "$tmp/run.out" ] && [ "$(wc -l <"$tmp/run.err")" -eq 1 ] &&
        grep -q 'see mrc-pair --help$' "$tmp/run.err" &&
        pass "bad arguments '$args': exit 2, $(cat "$tmp/run.err")" ||
        fail "bad arguments '$args': exit $rc, $(head -2 "$tmp/run.err")"
done
run --bogus
check 'grep -q "unknown option .--bogus." "$tmp/run.err"' "an unknown option is named"
run --msgs 2 --loss
check 'grep -q -- "--loss needs a value (P)" "$tmp/run.err"' "a missing value is named: $(cat "$tmp/run.err")"
run --help
check '[ $rc -eq 0 ] && [ ! -s "$tmp/run.err" ] && grep -q "^usage: mrc-pair" "$tmp/run.out" &&
    (for o in msgs size planes evs active min-active mtu rate delay mpr timeout retry slots imm \
        icrc seed pcap max-time loss reorder dup trim trim-lasthop ecn ev-loss down-plane \
        down-both dead-peer help version; do grep -q -- "--$o\\b" "$tmp/run.out" || exit 1; done)' \
    "--help: usage and every option on stdout, exit 0"
run --version
check '[ $rc -eq 0 ] && grep -q "^mrc-pair (mrcfab) [0-9]" "$tmp/run.out"' "--version: $(cat "$tmp/run.out")"
# the flags as the layer spells them: --no-imm (plain writes), --no-icrc, --name=value
run --msgs 4 --size 8192 --no-imm --no-icrc --seed=5
ok=$(field "$tmp/run.out" "s['messages_completed'] == 4 and s['bytes_corrupt'] == 0")
[ $rc -eq 0 ] && [ "$ok" = True ] && pass "--no-imm --no-icrc --seed=5: 4 messages intact" ||
    fail "--no-imm --no-icrc --seed=5: exit $rc $(head -2 "$tmp/run.err")"

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

# the UDP checksum IPv6 requires (RFC 8200 §8.1): tshark validates every packet's, and a kernel
# UDP socket takes them (in a network namespace of its own, as root)
status=$(tshark -r "$tmp/p.pcap" -o udp.check_checksum:TRUE -T fields -e udp.checksum.status \
    2>/dev/null | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')
[[ $status =~ ^1:[0-9]+\ $ ]] && pass "tshark finds every UDP checksum good ($status)" ||
    fail "tshark's UDP checksum status (0 bad, 1 good, 2 unverified): $status"
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
    out=$(unshare -n python3 "$(dirname "${BASH_SOURCE[0]}")/udp_kernel_check.py" "$tmp/p.pcap") &&
        pass "${out#udp_kernel_check: }" || fail "kernel UDP: $out"
else
    echo "SKIP a kernel UDP socket on the packets (needs root for a network namespace)"
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
