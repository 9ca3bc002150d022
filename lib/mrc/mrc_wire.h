/* SPDX-License-Identifier: MIT */
/* MRC wire format: inner IPv6/UDP, BTH and the MRC extension headers, ICRC, outer IPv6. */
#ifndef MRC_WIRE_H
#define MRC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mrcfab/mrc.h> /* MRC_ECN_*, shared with mrc_rx_info */

#include "mrc_bytes.h"

/* Opcodes: MRC's own space, opcode[7:5] = 0b110. */
#define MRC_OP_WRITE_FIRST 0xc6
#define MRC_OP_WRITE_MIDDLE 0xc7
#define MRC_OP_WRITE_LAST 0xc8
#define MRC_OP_WRITE_LAST_IMM 0xc9
#define MRC_OP_WRITE_ONLY 0xca
#define MRC_OP_WRITE_ONLY_IMM 0xcb
#define MRC_OP_ACK 0xd1
#define MRC_OP_EP_REQ 0xd8
#define MRC_OP_EP_RSP 0xd9
#define MRC_OP_SACK 0xdc
#define MRC_OP_NACK 0xdd
#define MRC_OP_PROBE 0xde

/* Header lengths in bytes. */
#define MRC_IP6_LEN 40
#define MRC_UDP_LEN 8
#define MRC_BTH_LEN 12
#define MRC_METH_LEN 4
#define MRC_TSETH_LEN 4
#define MRC_RETH_LEN 16
#define MRC_IMM_LEN 4
#define MRC_AETH_LEN 4
#define MRC_SETH_LEN 28
#define MRC_CCSTATE_LEN 8
#define MRC_NETH_LEN 20
#define MRC_PETH_LEN 16
#define MRC_ERTH_LEN 16
#define MRC_EETH_LEN 36
#define MRC_ICRC_LEN 4
/* Inner IPv6 + UDP + BTH: where the IB transport begins and every packet's fixed prefix. */
#define MRC_BASE_LEN (MRC_IP6_LEN + MRC_UDP_LEN + MRC_BTH_LEN)

/* Endpoint operations go to this reserved QPN; BTH PSN[15:0] carries the request id. */
#define MRC_EP_QPN 0x2
/* ERTH/EETH op: Port Status Update or EV Probe. */
#define MRC_EP_OP_PSU 0
#define MRC_EP_OP_EV_PROBE 1

/* SETH m: path feedback for the EV of the packet that triggered the SACK. */
#define MRC_M_NONE 0
#define MRC_M_SKIP_ONCE 1
#define MRC_M_ALWAYS_SKIP 2

/* NETH nack_reason (UET PDS codes). */
#define MRC_NACK_TRIMMED 0x01
#define MRC_NACK_TRIMMED_LASTHOP 0x02
#define MRC_NACK_NO_BITMAP 0x06
#define MRC_NACK_NO_PKT_BUFFER 0x07
#define MRC_NACK_NO_RESOURCE 0x0a
#define MRC_NACK_PSN_OOR_WINDOW 0x0b
#define MRC_NACK_UNEXP_EVENT 0x19

/* AETH syndromes: ACK carries the no-credit code; NAKs are IBTA's 0x60 | code. */
#define MRC_AETH_ACK 0x1f
#define MRC_AETH_NAK_PSN_SEQ 0x60
#define MRC_AETH_NAK_INV_REQ 0x61
#define MRC_AETH_NAK_REM_ACCESS 0x62
#define MRC_AETH_NAK_REM_OP 0x63

/* TSETH/PETH/ERTH timestamp: 16 bits of 128 ns ticks, format type 1. */
#define MRC_TS_SHIFT 7
#define MRC_TS_FORMAT 1

typedef struct mrc_ip6 {
    uint8_t tc; /* DSCP << 2 | ECN */
    uint32_t flowlabel;
    uint16_t plen;
    uint8_t nxt;
    uint8_t hlim;
    uint8_t src[16];
    uint8_t dst[16];
} mrc_ip6;

typedef struct mrc_udp {
    uint16_t sport, dport, len, csum;
} mrc_udp;

typedef struct mrc_bth {
    uint8_t opcode;
    uint8_t se, mig, padcnt, tver;
    uint16_t pkey;
    uint8_t resv8a;
    uint32_t dqpn; /* 24 bits */
    uint8_t ackreq, rtx, ts;
    uint32_t psn; /* 24 bits */
} mrc_bth;

typedef struct mrc_meth {
    uint16_t rqmsn, msn;
} mrc_meth;

typedef struct mrc_tseth {
    uint16_t ts;
    uint8_t tsr;
    uint8_t fmt;
} mrc_tseth;

typedef struct mrc_reth {
    uint64_t va;
    uint32_t rkey;
    uint32_t dmalen;
} mrc_reth;

typedef struct mrc_aeth {
    uint8_t syndrome;
    uint32_t msn; /* 24 bits */
} mrc_aeth;

typedef struct mrc_seth {
    uint8_t m;  /* MRC_M_* */
    uint8_t pr; /* answers a reliability probe: ack_psn_offset holds the probe id */
    int16_t ack_psn_offset;
    uint32_t entropy;
    uint16_t spdcid, dpdcid;
    uint32_t cack_psn; /* 24 bits */
    uint8_t cc_type, cc_flags;
    uint8_t mpr; /* in 128-PSN units, 0: ignore */
    int16_t sack_offset;
    uint64_t bitmap; /* bit i: PSN cack_psn + sack_offset + i received */
} mrc_seth;

typedef struct mrc_ccstate {
    uint16_t ts;         /* reflected tx timestamp */
    uint16_t ooo_count;  /* 15 bits */
    uint8_t rc;          /* restore cwnd */
    uint8_t pen;         /* 0..127 */
    uint32_t rcvd_bytes; /* 24 bits, 256-byte units */
} mrc_ccstate;

typedef struct mrc_neth {
    uint8_t reason, vendor;
    uint32_t entropy;
    uint16_t spdcid, dpdcid;
    uint32_t nack_psn; /* 24 bits */
    uint8_t cc_type, cc_flags;
    uint16_t ts;
} mrc_neth;

typedef struct mrc_peth {
    uint8_t vendor;
    uint16_t probe_id;
    uint16_t spdcid, dpdcid;
    mrc_tseth ts;
} mrc_peth;

typedef struct mrc_erth {
    uint8_t op; /* MRC_EP_OP_* */
    uint8_t vendor;
    uint32_t port_status; /* bit N-1: port N is up (1-based ports) */
    mrc_tseth ts;
} mrc_erth;

typedef struct mrc_eeth {
    uint8_t op;           /* bits 3:2 of byte 1 */
    uint32_t entropy;     /* bytes 4-7: the request's EV, echoed (our choice for a reserved word) */
    uint32_t svc_time_ns; /* bytes 8-11: responder service time (our choice, reserved word) */
    uint16_t ts;          /* bytes 28-29: reflected tx timestamp */
} mrc_eeth;

/* Which headers a packet holds after its BTH. */
#define MRC_HAS_METH (1u << 0)
#define MRC_HAS_TSETH (1u << 1)
#define MRC_HAS_RETH (1u << 2)
#define MRC_HAS_IMM (1u << 3)
#define MRC_HAS_AETH (1u << 4)
#define MRC_HAS_SETH (1u << 5) /* with CC_STATE */
#define MRC_HAS_NETH (1u << 6)
#define MRC_HAS_PETH (1u << 7)
#define MRC_HAS_ERTH (1u << 8)
#define MRC_HAS_EETH (1u << 9)

/* A packet, parsed or to be written. */
typedef struct mrc_pkt {
    mrc_ip6 ip;
    mrc_udp udp;
    mrc_bth bth;
    uint32_t has; /* MRC_HAS_* */
    /* one opcode's headers at a time: a union keeps the struct small, and clearing it cheap */
    union {
        struct {
            mrc_meth meth;
            mrc_tseth tseth;
            mrc_reth reth;
            uint32_t imm;
        };
        mrc_aeth aeth;
        struct {
            mrc_seth seth;
            mrc_ccstate cc;
        };
        mrc_neth neth;
        mrc_peth peth;
        mrc_erth erth;
        mrc_eeth eeth;
    };
    const uint8_t *payload; /* data packets: the payload, without pad bytes */
    size_t payload_len;
    bool trimmed; /* decoded with MRC_DECODE_TRIMMED and shorter than its headers say */
} mrc_pkt;

/* The headers an opcode carries after BTH (TSETH follows BTH.ts), or 0 for an unknown opcode. */
uint32_t mrc_wire_headers(uint8_t opcode, bool ts);
/* The length of the headers after BTH for |opcode| (with TSETH when |ts|); 0 if unknown. */
size_t mrc_wire_ext_len(uint8_t opcode, bool ts);

/* Decode flags. */
#define MRC_DECODE_TRIMMED (1u << 0) /* a trimmed packet: payload and ICRC may be missing */
#define MRC_DECODE_NO_ICRC (1u << 1) /* do not check the ICRC */

/*
 * Decodes the inner packet |data| (IPv6, UDP, BTH, MRC headers, payload, ICRC). Every length
 * and field is checked: IP version 6, next header UDP, lengths that agree with |datalen|,
 * UDP destination port |udp_port| or the alternate 4971, an MRC opcode, TVer 0, pad count
 * within the payload, and the ICRC. Returns 0 with |pkt| filled (payload points into |data|),
 * or a negative MRC_WIRE_E* naming the first fault.
 */
int mrc_wire_decode(const uint8_t *data, size_t datalen, uint16_t udp_port, unsigned flags,
                    mrc_pkt *pkt);

/* Decode faults (negative). */
#define MRC_WIRE_ESHORT -1  /* shorter than its headers */
#define MRC_WIRE_EIP -2     /* not IPv6/UDP, or lengths disagree */
#define MRC_WIRE_EPORT -3   /* not the MRC UDP port */
#define MRC_WIRE_EOPCODE -4 /* not an MRC opcode, or TVer != 0 */
#define MRC_WIRE_EPAD -5    /* pad count beyond the payload, or payload not 4-aligned */
#define MRC_WIRE_EICRC -6   /* ICRC mismatch */
#define MRC_WIRE_EFIELD -7  /* a field with a value no MRC packet has */
const char *mrc_wire_strerror(int err);

/*
 * Writes the headers of |pkt| (IPv6, UDP, BTH, the MRC headers its opcode carries) into
 * |dest| for a payload of |payload_len| bytes (padded to 4 with zeros by the caller's copy:
 * see mrc_wire_finish), setting the IPv6 payload length, UDP length and BTH pad count from
 * it. Returns the header length, or 0 when |destlen| is too small.
 */
size_t mrc_wire_encode(uint8_t *dest, size_t destlen, const mrc_pkt *pkt, size_t payload_len);
/*
 * The fixed part of a QP's packets on one port: IPv6 (version, next header UDP, hop limit 64,
 * addresses), UDP destination port, BTH P_Key 0xffff and destination QPN.
 */
void mrc_wire_template(uint8_t dest[MRC_BASE_LEN], const uint8_t src[16], const uint8_t dst[16],
                       uint16_t dport, uint32_t dqpn);
/* As mrc_wire_encode, with the fixed part from |tmpl|: from |pkt| only the traffic class, flow
 * label, UDP source port, the BTH's opcode, flags and PSN, and the MRC headers are read. */
size_t mrc_wire_encode_tmpl(uint8_t *dest, size_t destlen, const uint8_t *tmpl, const mrc_pkt *pkt,
                            size_t payload_len);
/* The fields of a data packet's headers that change per packet, for the data path's encoder. */
typedef struct mrc_data_hdr {
    uint8_t tc;
    uint8_t opcode;
    uint8_t flags; /* BTH byte 8: AckReq (0x80), RTX (0x20), TS (0x10: a TSETH follows METH) */
    uint32_t ev;
    uint32_t psn;
    uint16_t rqmsn, msn;
    uint16_t ts;
    uint64_t va;
    uint32_t rkey, dmalen;
    uint32_t imm; /* for the immediate opcodes */
} mrc_data_hdr;

/* IPv6 and UDP over template |tmpl|, with the traffic class, the EV and the IPv6 payload length
 * |plen|; returns where the BTH goes (its fixed fields are the template's). */
static inline uint8_t *mrc_wire_put_base(uint8_t *dest, const uint8_t *tmpl, uint8_t tc,
                                         uint32_t ev, uint32_t plen)
{
    memcpy(dest, tmpl, MRC_BASE_LEN);
    st32(dest, 6u << 28 | (uint32_t)tc << 20 | (ev >> 16));
    st16(dest + 4, plen);
    st16(dest + MRC_IP6_LEN, ev & 0xffff);
    st16(dest + MRC_IP6_LEN + 4, plen);
    return dest + MRC_IP6_LEN + MRC_UDP_LEN;
}

/* The data path's encoder: the headers of a write packet over template |tmpl| (the same bytes
 * mrc_wire_encode_tmpl writes for it). |dest| must hold MRC_BASE_LEN + 40 bytes. Returns the
 * header length. Inline, so that the caller's fields go straight to the packet. */
static inline size_t mrc_wire_encode_data(uint8_t *dest, const uint8_t *tmpl, const mrc_data_hdr *h,
                                          size_t payload_len)
{
    bool imm = h->opcode == MRC_OP_WRITE_LAST_IMM || h->opcode == MRC_OP_WRITE_ONLY_IMM;
    bool ts = h->flags & 0x10;
    size_t hdrlen = MRC_BASE_LEN + MRC_METH_LEN + MRC_RETH_LEN + (ts ? MRC_TSETH_LEN : 0) +
                    (imm ? MRC_IMM_LEN : 0);
    uint32_t pad = (0u - (uint32_t)payload_len) & 3;
    uint32_t plen = (uint32_t)(hdrlen - MRC_IP6_LEN + payload_len + pad + MRC_ICRC_LEN);
    uint8_t *p = mrc_wire_put_base(dest, tmpl, h->tc, h->ev, plen);
    p[0] = h->opcode;
    p[1] = (uint8_t)(pad << 4);
    p[8] = h->flags;
    st24(p + 9, h->psn & 0xffffff);
    p += MRC_BTH_LEN;
    st16(p, h->rqmsn);
    st16(p + 2, h->msn);
    p += MRC_METH_LEN;
    if (ts) {
        st16(p, h->ts);
        p[2] = 0;
        p[3] = MRC_TS_FORMAT;
        p += MRC_TSETH_LEN;
    }
    st64(p, h->va);
    st32(p + 8, h->rkey);
    st32(p + 12, h->dmalen);
    if (imm) {
        st32(p + MRC_RETH_LEN, h->imm);
    }
    return hdrlen;
}

/* A middle write packet (full MTU, no immediate) differs from the others of its message on
 * the same port only in these fields: the data path builds its headers once per message and
 * port with mrc_wire_encode_data() and patches them per packet. |dest| holds such headers. */
static inline void mrc_wire_patch_data(uint8_t *dest, uint8_t tc, uint32_t ev, uint8_t flags,
                                       uint32_t psn, uint16_t ts, uint64_t va)
{
    uint8_t *bth = dest + MRC_IP6_LEN + MRC_UDP_LEN;
    st32(dest, 6u << 28 | (uint32_t)tc << 20 | (ev >> 16));
    st16(dest + MRC_IP6_LEN, ev & 0xffff);
    bth[8] = flags;
    st24(bth + 9, psn & 0xffffff);
    uint8_t *p = bth + MRC_BTH_LEN + MRC_METH_LEN;
    if (flags & 0x10) {
        st16(p, ts);
        p += MRC_TSETH_LEN;
    }
    st64(p, va);
}

/* A SACK's fields, for the SACK path's encoder and decoder (mrc_seth and mrc_ccstate in one;
 * the BTH PSN is the cumulative PSN too). */
typedef struct mrc_sack_hdr {
    uint8_t tc;
    uint8_t m, pr;
    uint8_t mpr;
    uint8_t cc_type, cc_flags;
    uint8_t rc, pen;
    int16_t ack_psn_offset;
    int16_t sack_offset;
    uint16_t spdcid, dpdcid;
    uint32_t ev;   /* the EV it travels on */
    uint32_t cack; /* BTH PSN and SETH cack_psn */
    uint32_t entropy;
    uint64_t bitmap;
    uint16_t ts, ooo_count;
    uint32_t rcvd_bytes;
} mrc_sack_hdr;

/* A SACK's headers: IPv6, UDP, BTH, SETH and CC_STATE. */
#define MRC_SACK_LEN (MRC_BASE_LEN + MRC_SETH_LEN + MRC_CCSTATE_LEN)

/* The SACK path's encoder: the headers of a SACK over template |tmpl| (the same bytes
 * mrc_wire_encode_tmpl writes for it). |dest| must hold MRC_SACK_LEN bytes. Returns
 * MRC_SACK_LEN. */
size_t mrc_wire_encode_sack(uint8_t *dest, const uint8_t *tmpl, const mrc_sack_hdr *h);

/* The receive path's decoder: the same checks as mrc_wire_decode, and only the fields the
 * engine reads, for the two packets that come once per data packet or few. */
typedef struct mrc_data_rx {
    mrc_data_hdr h; /* flags: AckReq, RTX, TS; ts and imm 0 when absent */
    uint32_t dqpn;
    const uint8_t *payload; /* without pad bytes; never NULL */
    size_t payload_len;
    bool trimmed; /* decoded with MRC_DECODE_TRIMMED and shorter than its headers say */
} mrc_data_rx;

typedef struct mrc_sack_rx {
    mrc_sack_hdr h;
    uint32_t dqpn;
} mrc_sack_rx;

typedef union mrc_fast_rx {
    mrc_data_rx data;
    mrc_sack_rx sack;
} mrc_fast_rx;

#define MRC_FAST_DATA 1  /* |rx->data| holds a write packet */
#define MRC_FAST_SACK 2  /* |rx->sack| holds a SACK */
#define MRC_FAST_OTHER 3 /* a valid packet of another kind: mrc_wire_decode it */
/* Returns MRC_FAST_* or a negative MRC_WIRE_E*, as mrc_wire_decode would. */
int mrc_wire_decode_fast(const uint8_t *data, size_t datalen, uint16_t udp_port, unsigned flags,
                         union mrc_fast_rx *rx);

/* After the payload (and pad bytes) are in place at |dest| + header length: zeroes the pad,
 * computes and appends the ICRC. |len| = headers + payload without pad. Returns the total
 * packet length, or 0 if |destlen| cannot hold it. */
size_t mrc_wire_finish(uint8_t *dest, size_t destlen, size_t len);

/* The RoCEv2 ICRC of packet |data| (inner IPv6 onward, without its 4 ICRC bytes). */
uint32_t mrc_icrc(const uint8_t *data, size_t len);
/* Plain CRC-32 (IEEE, reflected) update, for tests and the ICRC. */
uint32_t mrc_crc32(uint32_t crc, const uint8_t *data, size_t len);

/* The outer IPv6 header of SRv6 mode (next header 41): |plen| is the inner packet's length. */
void mrc_wire_outer(uint8_t dest[MRC_IP6_LEN], const uint8_t src[16], const uint8_t dst[16],
                    uint16_t plen, uint8_t tc, uint32_t flowlabel, uint8_t hlim);
/* Parses an outer header; returns 0 or MRC_WIRE_EIP (not IPv6 with next header 41). */
int mrc_wire_outer_decode(const uint8_t *data, size_t datalen, mrc_ip6 *ip);

/* 24-bit PSN arithmetic: the signed distance a - b, in [-2^23, 2^23). */
static inline int32_t mrc_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}
static inline uint32_t mrc_psn_add(uint32_t a, int32_t d)
{
    return (a + (uint32_t)d) & 0xffffffu;
}

#endif
