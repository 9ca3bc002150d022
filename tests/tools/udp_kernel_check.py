#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A kernel UDP socket takes the engine's packets: replays the inner IPv6 packets of an
mrc-pair pcap through a raw socket to this network namespace's loopback, each once as written
and once with a payload bit flipped, and checks that the kernel's UDP delivers exactly the
written ones and counts every flipped one as a checksum error (Udp6InCsumErrors). Run it in a
namespace of its own (unshare -n), as root: it adds the packets' addresses to lo.
Usage: udp_kernel_check.py PCAP [MAX_PACKETS]; exit 0 when the kernel agreed, 1 otherwise."""
import socket
import struct
import subprocess
import sys
import time


def packets(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack("<I", data[:4])
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        sys.exit("udp_kernel_check: %s: not a little-endian pcap" % path)
    link, = struct.unpack("<I", data[20:24])
    if link not in (101, 229):  # LINKTYPE_RAW, LINKTYPE_IPV6
        sys.exit("udp_kernel_check: %s: link type %d, not raw IPv6" % (path, link))
    off = 24
    while off + 16 <= len(data):
        incl, = struct.unpack("<I", data[off + 8:off + 12])
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def csum_errors():
    for line in open("/proc/net/snmp6"):
        k, v = line.split()
        if k == "Udp6InCsumErrors":
            return int(v)
    sys.exit("udp_kernel_check: no Udp6InCsumErrors in /proc/net/snmp6")


def main():
    path = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    pkts = [p for p in packets(path)
            if len(p) >= 48 and p[0] >> 4 == 6 and p[6] == 17 and
            struct.unpack(">H", p[44:46])[0] == len(p) - 40][:limit]
    if not pkts:
        sys.exit("udp_kernel_check: no whole UDP packets in %s" % path)
    port = struct.unpack(">H", pkts[0][42:44])[0]
    addrs = {socket.inet_ntop(socket.AF_INET6, p[a:a + 16]) for p in pkts for a in (8, 24)}
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for a in sorted(addrs):
        subprocess.run(["ip", "-6", "addr", "add", a + "/128", "dev", "lo", "nodad"], check=True)
    rx = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    rx.bind(("::", port))
    rx.setblocking(False)
    tx = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    err0 = csum_errors()
    for p in pkts:
        dst = socket.inet_ntop(socket.AF_INET6, p[24:40])
        bad = bytearray(p)
        bad[-5] ^= 0x01  # a payload (or ICRC) bit: only the UDP checksum can tell
        tx.sendto(p, (dst, 0))
        tx.sendto(bytes(bad), (dst, 0))
    time.sleep(0.2)
    got = []
    while True:
        try:
            got.append(rx.recv(65536))
        except BlockingIOError:
            break
    errs = csum_errors() - err0
    want = [p[48:] for p in pkts]
    ok = sorted(got) == sorted(want) and errs == len(pkts)
    print("udp_kernel_check: %d packets sent as written and %d flipped: the kernel delivered %d, "
          "counted %d checksum errors" % (len(pkts), len(pkts), len(got), errs))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
