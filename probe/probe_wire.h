/* SPDX-License-Identifier: MIT */
/* A probe on the wire (issue 8, item 2). The node sends the inner packet; the kernel (a raw
 * protocol-41 socket) puts the outer IPv6 header with the uSID path in front. Inner packet:
 *
 *   IPv6   src = the sender port's own address, dst = the receiver port's (the sender's own
 *          for a bounce), next header UDP, hop limit 64, traffic class = the probe's
 *   UDP    sport = 0xc000 | index % 0x4000, dport = the probe port, checksum computed
 *   body   PROBE_BODY_LEN bytes, big-endian:
 *            0  magic "MRCP"         4  version (1)   5  kind     6  T1 (16)
 *            8  epoch (32)          12  window (64)  20  plane    21  reserved
 *           22  sender T0 (16)      24  sender down-port (16)     26  reserved (16)
 *           28  index (32)          32  send time, ns (64)
 *
 * A trimmed probe keeps its headers and loses its body (or part of it); it counts as
 * congestion, never as loss. */
#ifndef PROBE_WIRE_H
#define PROBE_WIRE_H

#include <mrcfab/fabric.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_sched.h"

#define PROBE_IP6_LEN 40
#define PROBE_UDP_LEN 8
#define PROBE_BODY_LEN 40
#define PROBE_PKT_LEN (PROBE_IP6_LEN + PROBE_UDP_LEN + PROBE_BODY_LEN)
#define PROBE_DEFAULT_PORT 4792 /* beside MRC's 4791 */

typedef struct probe_hdr {
    uint32_t epoch;
    uint64_t window;
    uint64_t sent_ns;
    probe_spec spec; /* the sender's half: kind, plane, t1, src, index (dst from the header) */
} probe_hdr;

/* Writes the inner packet of |h| from inner address |src| to |dst| with traffic class |tc|
 * into |dest| (PROBE_PKT_LEN bytes). Returns PROBE_PKT_LEN. */
size_t probe_wire_encode(uint8_t *dest, const uint8_t src[16], const uint8_t dst[16], uint8_t tc,
                         uint16_t udp_port, const probe_hdr *h);

/* Reads inner packet |data|: 0 for a whole probe, 1 for a trimmed one (its headers whole, the
 * body cut: |h| holds what survived, at least the sender and index when the body kept 32
 * bytes, else zeroes), or a negative errno: -EPROTO when it is no probe of |udp_port| (or a
 * whole one whose UDP checksum fails), -EMSGSIZE when too short for the headers. */
int probe_wire_decode(const uint8_t *data, size_t len, uint16_t udp_port, probe_hdr *h);

/* The names of the probe kinds in reports (probe_kind order). */
extern const char *const probe_kind_names[PROBE_KINDS];

/* The host whose plane-|plane| port is down-port |port| of T0 |t0| of that plane, FAB_NONE for
 * a hole in the fabric. */
uint32_t probe_wire_host(const fab_topo *topo, unsigned plane, unsigned t0, unsigned port);

/* The outer destination that carries probe |s| (its uSID path) in the fabric of |topo|.
 * Returns 0 or -ENOENT when an element of the path is not in the topology. */
int probe_wire_path(const fab_topo *topo, const probe_spec *s, uint8_t dest[16]);

#endif
