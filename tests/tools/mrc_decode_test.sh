#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-decode on pcaps built from the wire vectors: every listed field of every vector, a
# non-MRC frame skipped, a corrupted one refused, each link type and pcap variant, bad files,
# the command line (--help, --version, the old --udp_port spelling, an unknown option, no file),
# and tshark's InfiniBand dissector on the same frames.
set -euo pipefail
bin=${1:?usage: mrc_decode_test.sh BINDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vectors=$here/../vectors
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check.sh
source "$here/../check.sh"
# run NAME ARGS...: mrc-decode's output in $tmp/NAME.out and .err (empty after a run that
# decoded: a sanitizer report lands there), its exit status in $rc
run() {
    local name=$1
    shift
    set +e
    "$bin/mrc-decode" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    set -e
}

# The frames, in order: every vector but outer.hex in SRv6 mode (Ethernet, outer IPv6 with
# next header 41 from outer.hex, the inner packet), write_first behind a VLAN tag, the sack
# with an outer flow label of its own, then an ARP frame, write_first to UDP 4792 with its
# ICRC recomputed (not MRC, unless --udp-port 4792), and write_first with a payload byte
# flipped. frames.json lists each frame's vector and the outer header it was given.
python3 - "$vectors" "$tmp" <<'EOF'
import glob, json, os, struct, sys, zlib

vdir, out = sys.argv[1], sys.argv[2]

def load(path):
    fields, data = {}, bytearray()
    for line in open(path):
        line = line.strip()
        if line.startswith("# field "):
            k, v = line[8:].split("=", 1)
            fields[k] = v
        elif line and not line.startswith("#"):
            data += bytes.fromhex(line)
    return fields, bytes(data)

def icrc(pkt):
    # README.md "The ICRC rule": variant fields as ones, eight 0xff bytes first
    m = bytearray(pkt[:60])
    m[0] |= 0x0f
    m[1:4] = b"\xff\xff\xff"
    m[7] = 0xff
    m[46:48] = b"\xff\xff"
    m[52] = 0xff
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m) + pkt[60:-4]))

_, outer_t = load(os.path.join(vdir, "outer.hex"))
vecs = {}
for p in sorted(glob.glob(os.path.join(vdir, "*.hex"))):
    name = os.path.basename(p)[:-4]
    if name != "outer":
        vecs[name] = load(p)
wf = vecs["write_first"][1]
assert icrc(wf) == wf[-4:], "the test's ICRC differs from the vector's"

def outer(inner, flow=None):
    # the agent's ll_frame: the outer header takes the inner traffic class and flow label
    w0 = struct.unpack(">I", inner[:4])[0]
    if flow is not None:
        w0 = (w0 & ~0xfffff) | flow
    return struct.pack(">IHBB", w0, len(inner), 41, outer_t[7]) + outer_t[8:40]

frames = []  # (ethertype, outer header, inner packet, vlan, meta)
for name, (fields, data) in vecs.items():
    flow = 0x12345 if name == "sack" else None
    frames.append((0x86dd, outer(data, flow), data, name == "write_first",
                   {"vector": name, "outer_flow": flow}))
frames.append((0x0806, b"", bytes(28), False, {"skip": "arp"}))
p = bytearray(wf)
p[42:44] = struct.pack(">H", 4792)
p[-4:] = icrc(bytes(p[:-4]) + b"\0\0\0\0")
frames.append((0x86dd, outer(bytes(p)), bytes(p), False, {"skip": "udp 4792"}))
p = bytearray(wf)
p[-5] ^= 0x40
frames.append((0x86dd, outer(bytes(p)), bytes(p), False, {"error": "ICRC mismatch"}))

def link(linktype, ethertype, l3, vlan):
    tag = struct.pack(">HH", 0x8100, 7) if vlan else b""
    if linktype == 1:
        return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + tag + struct.pack(">H", ethertype) + l3
    if linktype == 113:
        return struct.pack(">HHH8s", 0, 1, 6, b"\x02\0\0\0\0\x01") + \
            (struct.pack(">H", 0x8100) + tag[2:] if vlan else b"") + \
            struct.pack(">H", ethertype) + l3
    if linktype == 276:
        return struct.pack(">HHIHBB8s", 0x8100 if vlan else ethertype, 0, 2, 1, 0, 6,
                           b"\x02\0\0\0\0\x01") + (tag[2:] + struct.pack(">H", ethertype)
                                                   if vlan else b"") + l3
    # raw IP has no ARP: an IPv4 header stands in for it
    return l3 if ethertype == 0x86dd else b"\x45" + bytes(19)

def pcap(path, linktype, endian="<", magic=0xa1b2c3d4, bare=False):
    with open(path, "wb") as f:
        f.write(struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, 65535, linktype))
        for i, (et, oh, ih, vlan, _) in enumerate(frames):
            b = link(linktype, et, ih if bare else oh + ih, vlan)
            f.write(struct.pack(endian + "IIII", 1700000000 + i, 1000 * i, len(b), len(b)) + b)

pcap(out + "/eth.pcap", 1)
pcap(out + "/eth_be_ns.pcap", 1, ">", 0xa1b23c4d)
pcap(out + "/sll.pcap", 113)
pcap(out + "/sll2.pcap", 276)
pcap(out + "/raw.pcap", 101)
# UDP mode: the inner packet alone, the engine reading its DSCP
pcap(out + "/bare.pcap", 101, bare=True)
json.dump({"frames": [m for (_, _, _, _, m) in frames],
           "fields": {n: f for n, (f, _) in vecs.items()},
           "outer_src": outer_t[8:24].hex(), "outer_dst": outer_t[24:40].hex(),
           "outer_hlim": outer_t[7]}, open(out + "/frames.json", "w"))
EOF

# check_frames OUT: every frame of frames.json against mrc-decode's lines
check_frames() {
    python3 - "$tmp/frames.json" "$1" <<'EOF'
import ipaddress, json, sys

spec = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
by_frame = {o["frame"]: o for o in lines}
bad = []
if len(by_frame) != len(lines):
    bad.append("a frame printed twice")
addr = lambda h: str(ipaddress.IPv6Address(bytes.fromhex(h)))
# vector field names are mrc_pkt member paths: ip is "inner", and these are not printed
# (lengths and next header the decoder checked, the has bits, the payload bytes and ICRC)
skip = {"ip.plen", "ip.nxt", "udp.len", "bth.tver", "has", "payload", "icrc", "udp.csum_sealed"}
for n, m in enumerate(spec["frames"], 1):
    o = by_frame.pop(n, None)
    if "skip" in m:
        if o is not None:
            bad.append("frame %d (%s) printed" % (n, m["skip"]))
        continue
    if "error" in m:
        if o != {"frame": n, "error": m["error"]}:
            bad.append("frame %d: %r, not the error %r" % (n, o, m["error"]))
        continue
    if o is None or "error" in o:
        bad.append("frame %d (%s): %r" % (n, m["vector"], o))
        continue
    f = spec["fields"][m["vector"]]
    for k, v in f.items():
        if k in skip or k.startswith(("decode.", "encode.")):
            continue
        path = k.replace("ip.", "inner.", 1).replace("flowlabel", "flow").split(".")
        got = o
        for p in path:
            got = got.get(p) if isinstance(got, dict) else None
        want = addr(v) if k in ("ip.src", "ip.dst") else int(v, 0)
        if got != want:
            bad.append("frame %d (%s) %s: %r, not %r" % (n, m["vector"], k, got, want))
    inner_flow = int(f["ip.flowlabel"], 0)
    want_outer = {"src": addr(spec["outer_src"]), "dst": addr(spec["outer_dst"]),
                  "flow": m["outer_flow"] if m["outer_flow"] is not None else inner_flow,
                  "tc": int(f["ip.tc"], 0), "hlim": spec["outer_hlim"]}
    if o.get("outer") != want_outer:
        bad.append("frame %d outer %r, not %r" % (n, o.get("outer"), want_outer))
    ev = (inner_flow & 0xffff) << 16 | int(f["udp.sport"], 0)
    if o["ev"] != ev:
        bad.append("frame %d ev %#x, not %#x" % (n, o["ev"], ev))
    has = int(f["has"], 0)
    names = ["meth", "tseth", "reth", "imm", "aeth", "seth", "neth", "peth", "erth", "eeth"]
    want_keys = {"frame", "outer", "inner", "udp", "bth", "payload_len", "trimmed", "ev"}
    want_keys |= {h for i, h in enumerate(names) if has >> i & 1}
    want_keys |= {"cc"} if has & 0x20 else set()
    if set(o) != want_keys:
        bad.append("frame %d keys %s, not %s" % (n, sorted(o), sorted(want_keys)))
if by_frame:
    bad.append("frames printed that are not there: %r" % sorted(by_frame))
print("\n".join(bad) if bad else "ok")
EOF
}

# frame_of NAME: the frame number of vector NAME; nvec: how many vectors there are
frame_of() { python3 -c 'import json, sys
print([m.get("vector") for m in json.load(open(sys.argv[1]))["frames"]].index(sys.argv[2]) + 1)' \
    "$tmp/frames.json" "$1"; }
nvec=$(python3 -c 'import json, sys
print(sum("vector" in m for m in json.load(open(sys.argv[1]))["frames"]))' "$tmp/frames.json")
run eth "$tmp/eth.pcap"
res=$(check_frames "$tmp/eth.out")
[ $rc -eq 1 ] && [ "$res" = ok ] && [ ! -s "$tmp/eth.err" ] &&
    pass "Ethernet: $nvec vectors decoded field by field, ARP and UDP 4792 skipped, a flipped byte refused, exit 1" ||
    fail "Ethernet: exit $rc: $res"

# the vectors' generator (gen_vectors.py) by hand, for two of them: opcode, dqpn, psn
ok=$(python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
b = {x["frame"]: x["bth"] for x in o if "bth" in x}
names = [m.get("vector") for m in json.load(open(sys.argv[2]))["frames"]]
wf, sk = b[names.index("write_first") + 1], b[names.index("sack") + 1]
print((wf["opcode"], wf["dqpn"], wf["psn"]) == (0xC6, 0x12A5B7, 0xABCDEF) and
      (sk["opcode"], sk["dqpn"], sk["psn"]) == (0xDC, 0x000456, 0))' "$tmp/eth.out" "$tmp/frames.json")
[ "$ok" = True ] && pass "write_first and sack: opcode, dqpn, psn as gen_vectors.py sets them" ||
    fail "write_first/sack BTH: $ok"

for v in eth_be_ns sll sll2 raw; do
    run "$v" "$tmp/$v.pcap"
    [ $rc -eq 1 ] && cmp -s "$tmp/eth.out" "$tmp/$v.out" && [ ! -s "$tmp/$v.err" ] && pass "$v.pcap: the same lines" ||
        fail "$v.pcap: exit $rc, $(diff "$tmp/eth.out" "$tmp/$v.out" | head -5)"
done
run bare "$tmp/bare.pcap"
python3 -c '
import json, sys
for o in map(json.loads, open(sys.argv[1])):
    o.pop("outer", None)
    print(json.dumps(o, separators=(",", ":")))' "$tmp/eth.out" >"$tmp/eth_inner.out"
[ $rc -eq 1 ] && cmp -s "$tmp/eth_inner.out" "$tmp/bare.out" && [ ! -s "$tmp/bare.err" ] &&
    pass "inner packets without an outer header (UDP mode): the same lines but \"outer\"" ||
    fail "bare.pcap: exit $rc, $(diff "$tmp/eth_inner.out" "$tmp/bare.out" | head -5)"

run port --udp-port 4792 "$tmp/eth.pcap"
got=$(python3 -c '
import json, sys
print(" ".join("%d:%d" % (o["frame"], o["udp"]["dport"]) for o in map(json.loads, open(sys.argv[1]))))' \
    "$tmp/port.out")
nak=$(frame_of nak)
[ $rc -eq 0 ] && [ "$got" = "$nak:4971 $((nvec + 2)):4792" ] && [ ! -s "$tmp/port.err" ] &&
    pass "--udp-port 4792: only that frame and the one to 4971 (as the engine), exit 0" ||
    fail "--udp-port 4792: exit $rc, '$got'"
# the old spelling still works, with a warning that names the new one
run port_old --udp_port=4792 "$tmp/eth.pcap"
[ $rc -eq 0 ] && cmp -s "$tmp/port.out" "$tmp/port_old.out" &&
    grep -q -- '--udp_port is spelled --udp-port now' "$tmp/port_old.err" &&
    pass "--udp_port=4792: the same lines, and a warning naming --udp-port" ||
    fail "--udp_port=4792: exit $rc, $(head -1 "$tmp/port_old.err")"

# the command line: --help on stdout listing every option, --version, one line for an unknown
# option and for a missing file, each pointing at --help
run help --help
check '[ $rc -eq 0 ] && [ ! -s "$tmp/help.err" ] && grep -q "^usage: mrc-decode" "$tmp/help.out" &&
    grep -q -- "--udp-port PORT" "$tmp/help.out" && grep -q -- "--help" "$tmp/help.out" &&
    grep -q -- "--version" "$tmp/help.out"' "--help: usage and every option on stdout, exit 0"
run version --version
check '[ $rc -eq 0 ] && grep -q "^mrc-decode (mrcfab) [0-9]" "$tmp/version.out" && [ ! -s "$tmp/version.err" ]' \
    "--version: $(cat "$tmp/version.out"), exit 0"
run unknown --bogus "$tmp/eth.pcap"
check '[ $rc -eq 2 ] && [ ! -s "$tmp/unknown.out" ] && [ "$(wc -l <"$tmp/unknown.err")" -eq 1 ] &&
    grep -q -- "unknown option .--bogus.; see mrc-decode --help" "$tmp/unknown.err"' \
    "an unknown option: exit 2, $(cat "$tmp/unknown.err")"
run missing --udp-port 4792
check '[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/missing.err")" -eq 1 ] &&
    grep -q "FILE.pcap is missing; see mrc-decode --help" "$tmp/missing.err"' \
    "no file: exit 2, $(cat "$tmp/missing.err")"

head -c 4000 /dev/urandom >"$tmp/garbage"
printf '\x0a\x0d\x0d\x0a%0100d' 0 >"$tmp/ng.pcapng"
head -c $(($(stat -c %s "$tmp/eth.pcap") - 7)) "$tmp/eth.pcap" >"$tmp/cut.pcap"
for args in "$tmp/garbage" "$tmp/ng.pcapng" "$tmp/cut.pcap" "$tmp/absent.pcap" \
    "--udp-port 0 $tmp/eth.pcap" "--udp-port x $tmp/eth.pcap" "--udp-port $tmp/eth.pcap" \
    "$tmp/eth.pcap $tmp/eth.pcap" ""; do
    # shellcheck disable=SC2086
    run bad $args
    [ $rc -eq 2 ] && [ -s "$tmp/bad.err" ] &&
        pass "'${args//$tmp\//}': exit 2, $(head -1 "$tmp/bad.err")" ||
        fail "'${args//$tmp\//}': exit $rc, '$(head -1 "$tmp/bad.err")'"
done

# tshark's dissector on the frames mrc-decode printed: frame number, opcode, destination QP and
# PSN, and the BTH flags, P_Key and pad count. 4971 is not RoCEv2's port to tshark: decode it
# as such too. Booleans print as 0/1 or, in newer tshark, True/False.
if command -v tshark >/dev/null; then
    tshark -r "$tmp/eth.pcap" -d udp.port==4971,infiniband -T fields -e frame.number \
        -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
        -e infiniband.bth.se -e infiniband.bth.m -e infiniband.bth.padcnt \
        -e infiniband.bth.p_key -e infiniband.bth.a 2>"$tmp/tshark.err" >"$tmp/tshark.out" || true
    res=$(python3 -c '
import json, sys
num = lambda x: {"True": 1, "False": 0}[x] if x in ("True", "False") else int(x, 0)
ts = {}
for l in open(sys.argv[2]):
    n, *f = l.rstrip("\n").split("\t")
    if all(f):
        ts[int(n)] = tuple(num(x) for x in f)
bad = []
for o in map(json.loads, open(sys.argv[1])):
    if "error" in o:
        continue
    b = o["bth"]
    mine = (b["opcode"], b["dqpn"], b["psn"], b["se"], b["mig"], b["padcnt"], b["pkey"],
            b["ackreq"])
    if ts.get(o["frame"]) != mine:
        bad.append("frame %d: tshark %r, mrc-decode %r" % (o["frame"], ts.get(o["frame"]), mine))
print("; ".join(bad) if bad else "ok %d" % len(ts))' "$tmp/eth.out" "$tmp/tshark.out")
    [[ $res == "ok "* ]] &&
        pass "tshark agrees on frame, opcode, dqpn, psn, se, m, padcnt, pkey, ackreq (${res#ok } frames with a BTH)" ||
        fail "tshark: $res $(head -3 "$tmp/tshark.err")"
else
    echo "SKIP tshark: not installed"
fi

finish mrc-decode
