#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Builds the MRC packet vectors (tests/vectors/*.hex) and the wire fuzz seeds from field values.
"""Generates the byte-exact MRC wire vectors from their field values.

The bytes are laid out here as the Layouts of README.md give them (MRC 1.0's headers and the
IBTA BTH), without the C code, so the unit tests compare two independent readings of the
layout. The ICRC is zlib.crc32 over eight 0xff bytes followed by the packet with its variant
fields masked to ones; see README.md.

Usage: gen_vectors.py [--out DIR] [--corpus DIR] [--check]
  --out DIR     where the .hex files go (default: this script's folder)
  --corpus DIR  where the binary fuzz seeds go (default: tests/fuzz/corpus/wire)
  --check       write nothing; exit 1 if any committed file differs from what would be written
"""

import argparse
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "fuzz", "corpus", "wire")

UDP_PORT = 4791
ALT_PORT = 4971  # the port the MRC 1.0 PDF prints; receivers accept it too

# mrc_pkt.has bits, in the order of lib/mrc/mrc_wire.h
HAS = {"meth": 1 << 0, "tseth": 1 << 1, "reth": 1 << 2, "imm": 1 << 3, "aeth": 1 << 4,
       "seth": 1 << 5, "neth": 1 << 6, "peth": 1 << 7, "erth": 1 << 8, "eeth": 1 << 9}

DATA_OPS = {0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB}
IMM_OPS = {0xC9, 0xCB}
CONTROL = {0xD1: ["aeth"], 0xD8: ["erth"], 0xD9: ["eeth"], 0xDC: ["seth"], 0xDD: ["neth"],
           0xDE: ["peth"]}

SRC = bytes.fromhex("20010db8000100020003000400050006")
DST = bytes.fromhex("fd00000a000b000c000d000e000f1011")


def u8(v):
    return struct.pack(">B", v)


def u16(v):
    return struct.pack(">H", v)


def s16(v):
    return struct.pack(">h", v)


def u24(v):
    assert 0 <= v < 1 << 24
    return struct.pack(">I", v)[1:]


def u32(v):
    return struct.pack(">I", v)


def u64(v):
    return struct.pack(">Q", v)


def ip6(f, prefix, nxt, plen):
    tc, fl = f[prefix + ".tc"], f[prefix + ".flowlabel"]
    assert fl < 1 << 20
    word = 6 << 28 | tc << 20 | fl
    return u32(word) + u16(plen) + u8(nxt) + u8(f[prefix + ".hlim"]) + \
        f[prefix + ".src"] + f[prefix + ".dst"]


def bth(f):
    b1 = f["bth.se"] << 7 | f["bth.mig"] << 6 | f["bth.padcnt"] << 4 | f["bth.tver"]
    b8 = f["bth.ackreq"] << 7 | f["bth.rtx"] << 5 | f["bth.ts"] << 4
    return u8(f["bth.opcode"]) + u8(b1) + u16(f["bth.pkey"]) + u8(f["bth.resv8a"]) + \
        u24(f["bth.dqpn"]) + u8(b8) + u24(f["bth.psn"])


def tsblock(f, prefix):
    # tx_timestamp (16) | TSR (1) | reserved (11) | format type (4)
    return u16(f[prefix + ".ts"]) + u16(f[prefix + ".tsr"] << 15 | f[prefix + ".fmt"])


def meth(f):
    return u16(f["meth.rqmsn"]) + u16(f["meth.msn"])


def reth(f):
    return u64(f["reth.va"]) + u32(f["reth.rkey"]) + u32(f["reth.dmalen"])


def aeth(f):
    return u8(f["aeth.syndrome"]) + u24(f["aeth.msn"])


def seth(f):
    b1 = f["seth.m"] << 5 | f["seth.pr"] << 1
    return u8(0) + u8(b1) + s16(f["seth.ack_psn_offset"]) + u32(f["seth.entropy"]) + \
        u16(f["seth.spdcid"]) + u16(f["seth.dpdcid"]) + u8(0) + u24(f["seth.cack_psn"]) + \
        u8(f["seth.cc_type"] << 4 | f["seth.cc_flags"]) + u8(f["seth.mpr"]) + \
        s16(f["seth.sack_offset"]) + u64(f["seth.bitmap"])


def ccstate(f):
    assert f["cc.ooo_count"] < 1 << 15 and f["cc.pen"] < 128
    return u16(f["cc.ts"]) + u16(f["cc.ooo_count"]) + u8(f["cc.rc"] << 7 | f["cc.pen"]) + \
        u24(f["cc.rcvd_bytes"])


def neth(f):
    return u16(0) + u8(f["neth.reason"]) + u8(f["neth.vendor"]) + u32(f["neth.entropy"]) + \
        u16(f["neth.spdcid"]) + u16(f["neth.dpdcid"]) + u8(0) + u24(f["neth.nack_psn"]) + \
        u8(f["neth.cc_type"] << 4 | f["neth.cc_flags"]) + u8(0) + u16(f["neth.ts"])


def peth(f):
    return bytes(3) + u8(f["peth.vendor"]) + u16(f["peth.probe_id"]) + u16(0) + \
        u16(f["peth.spdcid"]) + u16(f["peth.dpdcid"]) + tsblock(f, "peth.ts")


def erth(f):
    return u8(0) + u8(f["erth.op"]) + u8(0) + u8(f["erth.vendor"]) + \
        u32(f["erth.port_status"]) + u32(0) + tsblock(f, "erth.ts")


def eeth(f):
    return u8(0) + u8(f["eeth.op"] << 2) + u16(0) + u32(f["eeth.entropy"]) + \
        u32(f["eeth.svc_time_ns"]) + bytes(16) + u16(f["eeth.ts"]) + bytes(6)


EXT = {"meth": meth, "tseth": lambda f: tsblock(f, "tseth"), "reth": reth,
       "imm": lambda f: u32(f["imm"]), "aeth": aeth, "seth": lambda f: seth(f) + ccstate(f),
       "neth": neth, "peth": peth, "erth": erth, "eeth": eeth}

# The fields each header contributes, in the order they are listed in a vector file.
FIELDS = {
    "meth": ["meth.rqmsn", "meth.msn"],
    "tseth": ["tseth.ts", "tseth.tsr", "tseth.fmt"],
    "reth": ["reth.va", "reth.rkey", "reth.dmalen"],
    "imm": ["imm"],
    "aeth": ["aeth.syndrome", "aeth.msn"],
    "seth": ["seth.m", "seth.pr", "seth.ack_psn_offset", "seth.entropy", "seth.spdcid",
             "seth.dpdcid", "seth.cack_psn", "seth.cc_type", "seth.cc_flags", "seth.mpr",
             "seth.sack_offset", "seth.bitmap", "cc.ts", "cc.ooo_count", "cc.rc", "cc.pen",
             "cc.rcvd_bytes"],
    "neth": ["neth.reason", "neth.vendor", "neth.entropy", "neth.spdcid", "neth.dpdcid",
             "neth.nack_psn", "neth.cc_type", "neth.cc_flags", "neth.ts"],
    "peth": ["peth.vendor", "peth.probe_id", "peth.spdcid", "peth.dpdcid", "peth.ts.ts",
             "peth.ts.tsr", "peth.ts.fmt"],
    "erth": ["erth.op", "erth.vendor", "erth.port_status", "erth.ts.ts", "erth.ts.tsr",
             "erth.ts.fmt"],
    "eeth": ["eeth.op", "eeth.entropy", "eeth.svc_time_ns", "eeth.ts"],
}
BASE_FIELDS = ["ip.tc", "ip.flowlabel", "ip.plen", "ip.nxt", "ip.hlim", "ip.src", "ip.dst",
               "udp.sport", "udp.dport", "udp.len", "udp.csum", "bth.opcode", "bth.se",
               "bth.mig", "bth.padcnt", "bth.tver", "bth.pkey", "bth.resv8a", "bth.dqpn",
               "bth.ackreq", "bth.rtx", "bth.ts", "bth.psn"]
HEX_FIELDS = {"ip.src", "ip.dst", "outer.src", "outer.dst", "payload"}
SIGNED_FIELDS = {"seth.ack_psn_offset", "seth.sack_offset"}
WIDE_FIELDS = {"reth.va": 16, "seth.bitmap": 16}
# Lengths, ports, counts and times read better in decimal; identifiers and bit fields in hex.
DECIMAL_FIELDS = {"ip.plen", "ip.nxt", "ip.hlim", "udp.dport", "udp.len", "reth.dmalen",
                  "seth.mpr", "cc.ooo_count", "eeth.svc_time_ns", "payload_len",
                  "encode.payload_len", "decode.udp_port", "outer.plen", "outer.nxt",
                  "outer.hlim"}


def icrc(pkt):
    """The RoCEv2 ICRC of |pkt| (inner IPv6 onward, no ICRC) as a 32-bit value."""
    m = bytearray(pkt)
    m[0] |= 0x0F            # traffic class, high nibble (low nibble of byte 0)
    m[1:4] = b"\xff" * 3    # traffic class low nibble and flow label
    m[7] = 0xFF             # hop limit
    m[46:48] = b"\xff\xff"  # UDP checksum
    m[52] = 0xFF            # BTH byte 4: FECN, BECN, resv6
    # zlib.crc32 pre- and post-inverts: over ff*8 first, that is exactly the rxe seed
    # 0xdebb20e3 = crc32_le(~0, ff*8) continued over |m| and inverted at the end.
    return zlib.crc32(b"\xff" * 8 + bytes(m))


def udp_csum(pkt):
    """The UDP checksum (RFC 8200 §8.1) the engine seals |pkt| (inner IPv6 onward, its UDP
    checksum field 0) with: the ones' complement of the sum of the pseudo-header and the UDP
    part as 16-bit big-endian words, 0 sent as 0xffff."""
    ulen = len(pkt) - 40
    words = pkt[8:40] + struct.pack(">IxxxB", ulen, 17) + pkt[40:] + b"\0" * (ulen & 1)
    s = sum(struct.unpack(">%dH" % (len(words) // 2), words))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s & 0xFFFF) or 0xFFFF


def headers(op, ts):
    if op in DATA_OPS:
        return ["meth"] + (["tseth"] if ts else []) + ["reth"] + (["imm"] if op in IMM_OPS else [])
    return CONTROL[op]


def build(v):
    """Fills the derived fields of vector |v| and returns its bytes and header groups."""
    f = v["f"]
    f.setdefault("bth.tver", 0)
    f.setdefault("bth.resv8a", 0)
    hdrs = headers(f["bth.opcode"], f["bth.ts"])
    payload = f.get("payload", b"")
    wire_payload = v.get("declared_payload_len", len(payload))
    if f["bth.opcode"] not in DATA_OPS:
        assert not payload
    pad = -wire_payload % 4
    f["bth.padcnt"] = pad
    ext = b"".join(EXT[h](f) for h in hdrs)
    plen = 8 + 12 + len(ext) + wire_payload + pad + 4
    f["ip.plen"] = plen
    f["ip.nxt"] = 17
    f["udp.len"] = plen
    f["udp.csum"] = 0
    f["has"] = sum(HAS[h] for h in hdrs)
    f["payload_len"] = len(payload)
    groups = [("ipv6", ip6(f, "ip", 17, plen)),
              ("udp", u16(f["udp.sport"]) + u16(f["udp.dport"]) + u16(plen) + u16(0)),
              ("bth", bth(f))]
    groups += [(h + (" + cc_state" if h == "seth" else ""), EXT[h](f)) for h in hdrs]
    if "declared_payload_len" in v:
        # trimmed: the switch cut it after |payload|; no pad, no ICRC
        f["trimmed"] = 1
        f["encode.payload_len"] = wire_payload
        if payload:
            groups.append(("payload (first %d of %d bytes)" % (len(payload), wire_payload),
                           payload))
        names = BASE_FIELDS + ["has"] + sum((FIELDS[h] for h in hdrs), []) + \
            ["payload_len", "payload", "encode.payload_len", "trimmed"]
    else:
        f["trimmed"] = 0
        if payload or pad:
            groups.append(("payload + %d pad" % pad, payload + bytes(pad)))
        body = b"".join(g[1] for g in groups)
        f["icrc"] = icrc(body)
        groups.append(("icrc (little-endian)", struct.pack("<I", f["icrc"])))
        f["udp.csum_sealed"] = udp_csum(body + struct.pack("<I", f["icrc"]))
        names = BASE_FIELDS + ["has"] + sum((FIELDS[h] for h in hdrs), []) + \
            ["payload_len", "payload", "trimmed", "icrc", "udp.csum_sealed"]
    f["decode.flags"] = 1 if "declared_payload_len" in v else 0
    f["decode.udp_port"] = UDP_PORT
    names += ["decode.flags", "decode.udp_port"]
    f.setdefault("payload", b"")
    return groups, names


def build_outer(v):
    f = v["f"]
    f["outer.nxt"] = 41
    groups = [("outer ipv6", ip6(f, "outer", 41, f["outer.plen"]))]
    names = ["outer.tc", "outer.flowlabel", "outer.plen", "outer.nxt", "outer.hlim",
             "outer.src", "outer.dst"]
    return groups, names


def fmt_value(name, val):
    if name in HEX_FIELDS:
        return val.hex() if val else "-"
    if name in SIGNED_FIELDS or name in DECIMAL_FIELDS:
        return "%d" % val
    if name in WIDE_FIELDS:
        return "0x%0*x" % (WIDE_FIELDS[name], val)
    if name == "icrc":
        return "0x%08x" % val
    if name == "udp.csum_sealed":
        return "0x%04x" % val
    return "0x%x" % val if val > 9 else "%d" % val


def render(v):
    groups, names = build_outer(v) if v.get("outer") else build(v)
    f = v["f"]
    lines = ["# SPDX-License-Identifier: MIT"] + ["# %s" % line for line in v["doc"]]
    lines.append("# Generated by tests/vectors/gen_vectors.py from the fields below: do not edit.")
    lines += ["# field %s=%s" % (n, fmt_value(n, f[n])) for n in names]
    for title, data in groups:
        lines.append("# " + title)
        for i in range(0, len(data), 16):
            lines.append(" ".join("%02x" % b for b in data[i:i + 16]))
    raw = b"".join(g[1] for g in groups)
    return "\n".join(lines) + "\n", raw


def ip_fields(tc, fl, sport, dport=UDP_PORT, hlim=64):
    return {"ip.tc": tc, "ip.flowlabel": fl, "ip.hlim": hlim, "ip.src": SRC, "ip.dst": DST,
            "udp.sport": sport, "udp.dport": dport}


def bth_fields(op, dqpn, psn, se=0, mig=1, ackreq=0, rtx=0, ts=0, pkey=0xFFFF, resv8a=0):
    return {"bth.opcode": op, "bth.se": se, "bth.mig": mig, "bth.pkey": pkey,
            "bth.resv8a": resv8a, "bth.dqpn": dqpn, "bth.ackreq": ackreq, "bth.rtx": rtx,
            "bth.ts": ts, "bth.psn": psn}


def pattern(n, seed):
    return bytes((seed + 37 * i) & 0xFF for i in range(n))


# DSCP << 2 | ECN, with the engine's default code points (lib/mrc/README.md#wire)
TC_DATA = 4 << 2 | 2        # TRIMMABLE, ECT(0)
TC_NO_TRIM = 0 << 2 | 1     # NO_TRIM, ECT(1)
TC_RETX = 8 << 2 | 3        # TRIMMABLE_RETX, CE
TC_TRIMMED = 12 << 2 | 2    # TRIMMED (set by the switch)
TC_CONTROL = 46 << 2 | 0    # CONTROL, not ECT


def write(name, op, doc, payload, psn, extra=None, ts=0, **bth_kw):
    f = ip_fields(TC_DATA, 0xABCDE, 0xC0DE)
    f.update(bth_fields(op, 0x12A5B7, psn, ts=ts, **bth_kw))
    f.update({"meth.rqmsn": 0, "meth.msn": 0x0107, "reth.va": 0x00007F1234560000 + 4096 * (psn & 7),
              "reth.rkey": 0x0BADCAFE, "reth.dmalen": 0x3000, "payload": payload})
    if ts:
        f.update({"tseth.ts": 0x1234, "tseth.tsr": 1, "tseth.fmt": 1})
    if op in IMM_OPS:
        f["imm"] = 0xDEADBEEF
        f["meth.rqmsn"] = 0x0033
    f.update(extra or {})
    return {"name": name, "doc": doc, "f": f}


def nack(reason, label):
    f = ip_fields(TC_CONTROL, 0x54321, 0x8765)
    f.update(bth_fields(0xDD, 0x000456, 0x00ABCE))
    f.update({"neth.reason": reason, "neth.vendor": 0x5A, "neth.entropy": 0x000ABCDE,
              "neth.spdcid": 0x0456, "neth.dpdcid": 0x0123, "neth.nack_psn": 0xABCD00 + reason,
              "neth.cc_type": 2, "neth.cc_flags": 1, "neth.ts": 0x0F0E})
    return {"name": "nack_" + label, "doc": ["Reliability NACK (0xDD), reason 0x%02x %s."
                                             % (reason, label.upper())], "f": f}


def vectors():
    v = []
    v.append(write("write_first", 0xC6, ["RDMA WRITE First, 16-byte payload (no pad)."],
                   pattern(16, 1), 0xABCDEF))
    v.append(write("write_middle", 0xC7, ["RDMA WRITE Middle, 12-byte payload."],
                   pattern(12, 2), 0xABCDF0))
    v.append(write("write_last", 0xC8, ["RDMA WRITE Last, 5-byte payload (3 pad), AckReq."],
                   pattern(5, 3), 0xABCDF1, ackreq=1))
    v.append(write("write_last_imm", 0xC9,
                   ["RDMA WRITE Last with Immediate, 6-byte payload (2 pad), SE, AckReq."],
                   pattern(6, 4), 0xFFFFFF, se=1, ackreq=1))
    w = write("write_only", 0xCA,
              ["RDMA WRITE Only, 7-byte payload (1 pad), a retransmission (RTX) marked CE,",
               "with BTH byte 4 (FECN/BECN/resv, counted as ones in the ICRC) non-zero."],
              pattern(7, 5), 0x000000, rtx=1, ackreq=1, mig=0, resv8a=0x80, pkey=0x8001)
    w["f"]["ip.tc"] = TC_RETX
    v.append(w)
    w = write("write_only_imm", 0xCB,
              ["RDMA WRITE Only with Immediate and no payload: a bare notification."],
              b"", 0x000001, se=1, ackreq=1)
    w["f"]["ip.tc"] = TC_NO_TRIM
    v.append(w)
    v.append(write("write_tseth", 0xC7,
                   ["RDMA WRITE Middle with a TSETH (BTH.TS), 9-byte payload (3 pad)."],
                   pattern(9, 6), 0x7FFFFF, ts=1))
    w = write("write_trimmed", 0xC7,
              ["RDMA WRITE Middle of 4096 bytes trimmed by a switch to its headers and the",
               "first 6 payload bytes: the lengths still say 4096, the ICRC is gone.",
               "Decoded with MRC_DECODE_TRIMMED."],
              pattern(6, 7), 0x100000)
    w["declared_payload_len"] = 4096
    w["f"]["ip.tc"] = TC_TRIMMED
    v.append(w)

    f = ip_fields(TC_CONTROL, 0x54321, 0x8765)
    f.update(bth_fields(0xD1, 0x000456, 0xABCDEF))
    f.update({"aeth.syndrome": 0x1F, "aeth.msn": 0x000107})
    v.append({"name": "ack", "doc": ["Transport ACK (0xD1), AETH with the no-credit code 0x1f."],
              "f": f})
    f = ip_fields(TC_CONTROL, 0x54321, 0x8765, dport=ALT_PORT)
    f.update(bth_fields(0xD1, 0x000456, 0xABCDEF))
    f.update({"aeth.syndrome": 0x61, "aeth.msn": 0x000108})
    v.append({"name": "nak", "doc": ["Transport NAK (0xD1), AETH 0x61 Invalid Request, sent to",
                                     "the alternate UDP port 4971 (the port the PDF prints)."],
              "f": f})

    f = ip_fields(TC_CONTROL, 0x54321, 0x8765)
    f.update(bth_fields(0xDC, 0x000456, 0x000000))
    f.update({"seth.m": 1, "seth.pr": 0, "seth.ack_psn_offset": -3, "seth.entropy": 0x89ABCDEF,
              "seth.spdcid": 0x0102, "seth.dpdcid": 0x0304, "seth.cack_psn": 0x123456,
              "seth.cc_type": 0, "seth.cc_flags": 3, "seth.mpr": 4, "seth.sack_offset": 1,
              "seth.bitmap": 0x8000000000000105, "cc.ts": 0xFEDC, "cc.ooo_count": 0x7ABC,
              "cc.rc": 1, "cc.pen": 0x55, "cc.rcvd_bytes": 0x0ABCDE})
    v.append({"name": "sack", "doc": ["Reliability SACK (0xDC), m = SKIP_ONCE, negative",
                                      "ack_psn_offset, bitmap with its top and bottom bits set."],
              "f": f})
    f = ip_fields(TC_CONTROL, 0x54321, 0x8765)
    f.update(bth_fields(0xDC, 0x000456, 0x000000))
    f.update({"seth.m": 2, "seth.pr": 1, "seth.ack_psn_offset": -16657, "seth.entropy": 0x000ABCDE,
              "seth.spdcid": 0x0102, "seth.dpdcid": 0x0304, "seth.cack_psn": 0xFFFFFE,
              "seth.cc_type": 0, "seth.cc_flags": 0, "seth.mpr": 0, "seth.sack_offset": -2,
              "seth.bitmap": 0x00000000FFFF0000, "cc.ts": 0x0001, "cc.ooo_count": 0,
              "cc.rc": 0, "cc.pen": 127, "cc.rcvd_bytes": 0xFFFFFF})
    v.append({"name": "sack_probe", "doc": ["Reliability SACK answering a probe (pr = 1):",
                                            "ack_psn_offset holds probe id 0xbeef (-16657 as",
                                            "int16); m = ALWAYS_SKIP."], "f": f})

    for reason, label in [(0x01, "trimmed"), (0x02, "trimmed_lasthop"), (0x06, "no_bitmap"),
                          (0x07, "no_pkt_buffer"), (0x0A, "no_resource"),
                          (0x0B, "psn_oor_window"), (0x19, "unexp_event")]:
        v.append(nack(reason, label))

    f = ip_fields(TC_DATA, 0x13579, 0x2468)
    f.update(bth_fields(0xDE, 0x12A5B7, 0x000000, ackreq=1))
    f.update({"peth.vendor": 0x11, "peth.probe_id": 0x7788, "peth.spdcid": 0x0123,
              "peth.dpdcid": 0x0456, "peth.ts.ts": 0x4321, "peth.ts.tsr": 0, "peth.ts.fmt": 1})
    v.append({"name": "probe", "doc": ["Reliability PROBE request (0xDE), PETH with probe id",
                                       "0x7788, on the EV under test."], "f": f})

    f = ip_fields(TC_CONTROL, 0x13579, 0x2468)
    f.update(bth_fields(0xD8, 0x000002, 0x00BEEF))
    f.update({"erth.op": 0, "erth.vendor": 0, "erth.port_status": 0x0000000D,
              "erth.ts.ts": 0x2222, "erth.ts.tsr": 0, "erth.ts.fmt": 1})
    v.append({"name": "ep_req_psu", "doc": ["Endpoint Request (0xD8) to QPN 2: Port Status",
                                            "Update, request id 0xbeef, ports 1, 3, 4 up."],
              "f": f})
    f = ip_fields(TC_DATA, 0x2468A, 0x468A)
    f.update(bth_fields(0xD8, 0x000002, 0x00BEF0))
    f.update({"erth.op": 1, "erth.vendor": 0x7E, "erth.port_status": 0,
              "erth.ts.ts": 0x2223, "erth.ts.tsr": 1, "erth.ts.fmt": 0})
    v.append({"name": "ep_req_ev_probe", "doc": ["Endpoint Request (0xD8): EV Probe, request",
                                                 "id 0xbef0, timestamp format 0."], "f": f})
    f = ip_fields(TC_CONTROL, 0x2468A, 0x468A)
    f.update(bth_fields(0xD9, 0x000002, 0x00BEF0))
    f.update({"eeth.op": 1, "eeth.entropy": 0x0002468A, "eeth.svc_time_ns": 1500,
              "eeth.ts": 0x2223})
    v.append({"name": "ep_rsp", "doc": ["Endpoint Response (0xD9) to the EV probe: the EV",
                                        "echoed, 1500 ns service time, timestamp reflected."],
              "f": f})

    f = {"outer.tc": TC_DATA, "outer.flowlabel": 0xABCDE, "outer.plen": 100,
         "outer.hlim": 63,
         "outer.src": bytes.fromhex("fdbbbb00000100000000000000000001"),
         "outer.dst": bytes.fromhex("fcbbbb000800100008010000000000e0")}
    v.append({"name": "outer", "outer": True,
              "doc": ["Outer IPv6 header of SRv6 mode (next header 41): destination is a uSID",
                      "path, payload length that of the inner packet (write_first)."], "f": f})
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    stale = 0
    vs = vectors()
    for v in vs:
        text, raw = render(v)
        files = [(os.path.join(args.out, v["name"] + ".hex"), text.encode()),
                 (os.path.join(args.corpus, v["name"] + ".bin"), raw)]
        if v.get("outer"):
            # the fuzz target reads an outer header followed by the inner packet it wraps
            inner = render(vs[0])[1]
            assert len(inner) == v["f"]["outer.plen"]
            files[1] = (files[1][0], raw + inner)
        for path, data in files:
            if args.check:
                try:
                    with open(path, "rb") as fh:
                        same = fh.read() == data
                except OSError:
                    same = False
                if not same:
                    print("stale: " + path)
                    stale += 1
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
