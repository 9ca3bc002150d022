#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Prints the CRC-32 slicing tables and PCLMULQDQ folding constants of lib/mrc/mrc_crc.c.
"""CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) tables and constants for mrc_crc.c.

Usage: gen_crc_table.py            print the slicing-by-8 table (paste between the
                                   'generated' markers of lib/mrc/mrc_crc.c)
       gen_crc_table.py --fold     print the folding constants, from their definition
       gen_crc_table.py --check F  exit 1 unless the table in F is the one printed

Table k, entry n, is the CRC register after byte n followed by k zero bytes, so that eight
bytes fold with eight independent lookups.
"""

import re
import sys

POLY = 0xEDB88320
PER_LINE = 7


def byte_crc(n):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ (POLY if c & 1 else 0)
    return c


def tables():
    t = [[byte_crc(n) for n in range(256)]]
    for k in range(1, 8):
        prev = t[k - 1]
        t.append([(prev[n] >> 8) ^ t[0][prev[n] & 0xFF] for n in range(256)])
    return t


def table_text():
    out = ["static const uint32_t crc_table[8][256] = {"]
    for row in tables():
        out.append("    {")
        for i in range(0, 256, PER_LINE):
            out.append("        " + ", ".join("0x%08x" % v for v in row[i:i + PER_LINE]) + ",")
        out.append("    },")
    out.append("};")
    return "\n".join(out) + "\n"


def reflect(v, bits):
    return int(format(v, "0%db" % bits)[::-1], 2)


def xpow_mod(n):
    """x^n mod P, P = x^32 + ... in normal (not reflected) form."""
    p = 0x104C11DB7
    r = 1
    for _ in range(n):
        r <<= 1
        if r >> 32:
            r ^= p
    return r


def fold_constants():
    # reflected and shifted left by one: a carry-less product of two reflected 64-bit
    # values lands one bit low
    k = {n: reflect(xpow_mod(n), 32) << 1 for n in (4 * 128 + 32, 4 * 128 - 32, 128 + 32,
                                                     128 - 32, 64)}
    # Barrett: mu = floor(x^64 / P), reflected over 33 bits; P reflected over 33 bits
    q, r = 0, 1 << 64
    p = 0x104C11DB7
    for bit in range(32, -1, -1):
        if r >> (bit + 32) & 1:
            q |= 1 << bit
            r ^= p << bit
    mu = reflect(q, 33)
    poly = reflect(p, 33)
    lines = ["x^(4*128+32) 0x%x" % k[544], "x^(4*128-32) 0x%x" % k[480],
             "x^(128+32)   0x%x" % k[160], "x^(128-32)   0x%x" % k[96],
             "x^64         0x%x" % k[64], "mu           0x%x" % mu, "P            0x%x" % poly]
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--fold":
        sys.stdout.write(fold_constants())
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        with open(sys.argv[2]) as f:
            m = re.search(r"/\* generated: begin \*/\n(.*?)/\* generated: end \*/", f.read(), re.S)
        if not m or m.group(1) != table_text():
            print("%s: the CRC table is not the generated one" % sys.argv[2])
            return 1
        return 0
    if len(sys.argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write(table_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
