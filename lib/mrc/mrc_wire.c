/* SPDX-License-Identifier: MIT */
/* MRC packets on the wire: the headers each opcode carries, checked decode, encode and ICRC. */
#include <string.h>

#include "mrc_wire.h"

/* The UDP port the MRC 1.0 PDF prints (a likely transposition of 4791): accepted as well. */
#define ALT_UDP_PORT MRC_ALT_UDP_PORT
#define IPPROTO_UDP_ 17
#define IPPROTO_IPV6_ 41

/* MRC opcodes are 0b110xxxxx: an index into the tables below. */
#define OP_BASE 0xc0u
#define OP_COUNT 32u

/* NETH reasons MRC 1.0 defines (all below 32): bit r set when reason r exists. */
#define NACK_REASONS                                                                               \
    (1u << MRC_NACK_TRIMMED | 1u << MRC_NACK_TRIMMED_LASTHOP | 1u << MRC_NACK_NO_BITMAP |          \
     1u << MRC_NACK_NO_PKT_BUFFER | 1u << MRC_NACK_NO_RESOURCE | 1u << MRC_NACK_PSN_OOR_WINDOW |   \
     1u << MRC_NACK_UNEXP_EVENT)

/* TSETH and the PETH/ERTH timestamp blocks: format types 0 and 1 exist. */
#define TS_FMT_MAX 1

typedef struct op_info {
    uint16_t has; /* MRC_HAS_* without TSETH, which follows BTH.ts */
    uint8_t ext;  /* length of those headers */
} op_info;

#define DATA_HAS (MRC_HAS_METH | MRC_HAS_RETH)
#define DATA_EXT (MRC_METH_LEN + MRC_RETH_LEN)

/* One lookup per packet instead of a switch: unknown opcodes have has == 0. */
static const op_info op_table[OP_COUNT] = {
    [MRC_OP_WRITE_FIRST - OP_BASE] = {DATA_HAS, DATA_EXT},
    [MRC_OP_WRITE_MIDDLE - OP_BASE] = {DATA_HAS, DATA_EXT},
    [MRC_OP_WRITE_LAST - OP_BASE] = {DATA_HAS, DATA_EXT},
    [MRC_OP_WRITE_LAST_IMM - OP_BASE] = {DATA_HAS | MRC_HAS_IMM, DATA_EXT + MRC_IMM_LEN},
    [MRC_OP_WRITE_ONLY - OP_BASE] = {DATA_HAS, DATA_EXT},
    [MRC_OP_WRITE_ONLY_IMM - OP_BASE] = {DATA_HAS | MRC_HAS_IMM, DATA_EXT + MRC_IMM_LEN},
    [MRC_OP_ACK - OP_BASE] = {MRC_HAS_AETH, MRC_AETH_LEN},
    [MRC_OP_EP_REQ - OP_BASE] = {MRC_HAS_ERTH, MRC_ERTH_LEN},
    [MRC_OP_EP_RSP - OP_BASE] = {MRC_HAS_EETH, MRC_EETH_LEN},
    [MRC_OP_SACK - OP_BASE] = {MRC_HAS_SETH, MRC_SETH_LEN + MRC_CCSTATE_LEN},
    [MRC_OP_NACK - OP_BASE] = {MRC_HAS_NETH, MRC_NETH_LEN},
    [MRC_OP_PROBE - OP_BASE] = {MRC_HAS_PETH, MRC_PETH_LEN},
};

/* Timestamp block: tx_timestamp (16) | TSR (1) | reserved (11) | format type (4). */
static inline unsigned ts_get(mrc_tseth *ts, const uint8_t *p)
{
    ts->ts = ld16(p);
    ts->tsr = p[2] >> 7;
    ts->fmt = p[3] & 0x0f;
    return ts->fmt > TS_FMT_MAX;
}

static inline void ts_put(uint8_t *p, const mrc_tseth *ts)
{
    st16(p, ts->ts);
    p[2] = (uint8_t)((ts->tsr & 1) << 7);
    p[3] = ts->fmt & 0x0f;
}

uint32_t mrc_wire_headers(uint8_t opcode, bool ts)
{
    unsigned idx = opcode - OP_BASE;
    uint32_t has = 0;

    if (idx < OP_COUNT) {
        has = op_table[idx].has;
        if (ts && (has & MRC_HAS_METH)) {
            has |= MRC_HAS_TSETH;
        }
    }
    return has;
}

size_t mrc_wire_ext_len(uint8_t opcode, bool ts)
{
    unsigned idx = opcode - OP_BASE;
    size_t len = 0;

    if (idx < OP_COUNT) {
        len = op_table[idx].ext;
        if (ts && (op_table[idx].has & MRC_HAS_METH)) {
            len += MRC_TSETH_LEN;
        }
    }
    return len;
}

/*
 * The checks run in wire order and the first failure names the fault. Reserved bits are
 * ignored (IBTA: reserved on send, ignored on receive) and so is the UDP checksum (masked in
 * the ICRC, which covers more): mrc_wire_encode() writes all of them as zero, and the engine
 * seals the checksum last (mrc_udp6_csum_set).
 * Beyond the header's list: a control packet whose lengths claim a payload is EIP; EFIELD
 * is SETH m = 3, an ERTH/EETH op above 1, a timestamp format type above 1 (TSETH, PETH,
 * ERTH), an AETH syndrome neither ACK (0x00-0x1f) nor NAK (0x60-0x7f), a NETH reason MRC
 * does not define, or an endpoint opcode not sent to QPN 2. The ICRC is checked before the
 * fields, so a corrupted packet reads as EICRC rather than as whatever field it hit.
 */
/* What the checks common to every packet learn about it. */
typedef struct frame {
    size_t wirelen, hdrlen, padded;
    uint32_t has;
    unsigned padcnt;
    bool trimmed;
} frame;

/* The checks up to the fields, in wire order; inlined into each decoder. */
static inline __attribute__((always_inline)) int
frame_check(const uint8_t *data, size_t datalen, uint16_t udp_port, unsigned flags, frame *f)
{
    const uint8_t *udp = data + MRC_IP6_LEN, *bth = udp + MRC_UDP_LEN;
    if (datalen < MRC_BASE_LEN) {
        return MRC_WIRE_ESHORT;
    }
    if (data[0] >> 4 != 6 || data[6] != IPPROTO_UDP_ || ld16(udp + 4) != ld16(data + 4)) {
        return MRC_WIRE_EIP;
    }
    /* IPv6 payload length, not |datalen|, says where the ICRC is */
    f->wirelen = MRC_IP6_LEN + (size_t)ld16(data + 4);
    f->trimmed = false;
    if (f->wirelen != datalen) {
        if (f->wirelen < datalen) {
            return MRC_WIRE_EIP;
        }
        if (!(flags & MRC_DECODE_TRIMMED)) {
            return MRC_WIRE_ESHORT;
        }
        f->trimmed = true;
    }
    uint16_t dport = ld16(udp + 2);
    if (dport != udp_port && dport != ALT_UDP_PORT) {
        return MRC_WIRE_EPORT;
    }
    unsigned idx = bth[0] - OP_BASE;
    if (idx >= OP_COUNT || !op_table[idx].has || (bth[1] & 0x0f)) {
        return MRC_WIRE_EOPCODE;
    }
    f->has = op_table[idx].has;
    f->hdrlen = MRC_BASE_LEN + op_table[idx].ext;
    if ((f->has & MRC_HAS_METH) && (bth[8] & 0x10)) {
        f->has |= MRC_HAS_TSETH;
        f->hdrlen += MRC_TSETH_LEN;
    }
    /* a trimmed packet keeps at least its headers; the lengths must still hold them */
    if (f->wirelen < f->hdrlen + MRC_ICRC_LEN || datalen < f->hdrlen) {
        return MRC_WIRE_ESHORT;
    }
    f->padded = f->wirelen - f->hdrlen - MRC_ICRC_LEN;
    f->padcnt = bth[1] >> 4 & 3;
    if (f->has & MRC_HAS_METH) {
        if ((f->padded & 3) || f->padcnt > f->padded) {
            return MRC_WIRE_EPAD;
        }
    } else if (f->padcnt) {
        return MRC_WIRE_EPAD;
    } else if (f->padded) {
        /* a control packet whose lengths claim a payload */
        return MRC_WIRE_EIP;
    }
    if (!f->trimmed && !(flags & MRC_DECODE_NO_ICRC) &&
        mrc_icrc(data, f->wirelen - MRC_ICRC_LEN) != ld32le(data + f->wirelen - MRC_ICRC_LEN)) {
        return MRC_WIRE_EICRC;
    }
    return 0;
}

/* The EV a packet travels on: flow label bits 15:0 above the UDP source port. */
static inline uint32_t ev_get(const uint8_t *data)
{
    return (ld32(data) & 0xffff) << 16 | ld16(data + MRC_IP6_LEN);
}

/* A data packet's fields; nonzero when one holds a value no packet has. */
static inline unsigned data_get(mrc_data_rx *d, const uint8_t *data, size_t datalen, const frame *f)
{
    const uint8_t *bth = data + MRC_IP6_LEN + MRC_UDP_LEN, *p = bth + MRC_BTH_LEN;
    unsigned bad = 0;
    d->h.tc = (uint8_t)(ld16(data) >> 4);
    d->h.ev = ev_get(data);
    d->h.opcode = bth[0];
    d->h.flags = bth[8] & 0xb0;
    d->h.psn = ld24(bth + 9);
    d->h.rqmsn = ld16(p);
    d->h.msn = ld16(p + 2);
    p += MRC_METH_LEN;
    d->h.ts = 0;
    if (f->has & MRC_HAS_TSETH) {
        mrc_tseth ts;
        bad |= ts_get(&ts, p);
        d->h.ts = ts.ts;
        p += MRC_TSETH_LEN;
    }
    d->h.va = ld64(p);
    d->h.rkey = ld32(p + 8);
    d->h.dmalen = ld32(p + 12);
    p += MRC_RETH_LEN;
    d->h.imm = f->has & MRC_HAS_IMM ? ld32(p) : 0;
    d->dqpn = ld24(bth + 5);
    d->payload = data + f->hdrlen;
    d->payload_len = f->padded - f->padcnt;
    /* a trimmed packet may end anywhere after its headers */
    if (d->payload_len > datalen - f->hdrlen) {
        d->payload_len = datalen - f->hdrlen;
    }
    d->trimmed = f->trimmed;
    return bad;
}

/* A SACK's fields (SETH and CC_STATE); nonzero when one holds a value no packet has. */
static inline unsigned sack_get(mrc_sack_rx *k, const uint8_t *data)
{
    const uint8_t *bth = data + MRC_IP6_LEN + MRC_UDP_LEN, *p = bth + MRC_BTH_LEN;
    mrc_sack_hdr *h = &k->h;
    h->tc = (uint8_t)(ld16(data) >> 4);
    h->ev = ev_get(data);
    h->m = p[1] >> 5 & 3;
    h->pr = p[1] >> 1 & 1;
    h->ack_psn_offset = (int16_t)ld16(p + 2);
    h->entropy = ld32(p + 4);
    h->spdcid = ld16(p + 8);
    h->dpdcid = ld16(p + 10);
    h->cack = ld24(p + 13);
    h->cc_type = p[16] >> 4;
    h->cc_flags = p[16] & 0x0f;
    h->mpr = p[17];
    h->sack_offset = (int16_t)ld16(p + 18);
    h->bitmap = ld64(p + 20);
    p += MRC_SETH_LEN;
    h->ts = ld16(p);
    h->ooo_count = ld16(p + 2) & 0x7fff;
    h->rc = p[4] >> 7;
    h->pen = p[4] & 0x7f;
    h->rcvd_bytes = ld24(p + 5);
    k->dqpn = ld24(bth + 5);
    return h->m == 3;
}

int mrc_wire_decode_fast(const uint8_t *data, size_t datalen, uint16_t udp_port, unsigned flags,
                         mrc_fast_rx *rx)
{
    frame f;
    int rv = frame_check(data, datalen, udp_port, flags, &f);
    if (rv != 0) {
        return rv;
    }
    if (f.has & MRC_HAS_METH) {
        return data_get(&rx->data, data, datalen, &f) ? MRC_WIRE_EFIELD : MRC_FAST_DATA;
    }
    if (data[MRC_IP6_LEN + MRC_UDP_LEN] == MRC_OP_SACK) {
        return sack_get(&rx->sack, data) ? MRC_WIRE_EFIELD : MRC_FAST_SACK;
    }
    return MRC_FAST_OTHER;
}

int mrc_wire_decode(const uint8_t *data, size_t datalen, uint16_t udp_port, unsigned flags,
                    mrc_pkt *pkt)
{
    const uint8_t *udp = data + MRC_IP6_LEN, *bth = udp + MRC_UDP_LEN, *p = bth + MRC_BTH_LEN;
    unsigned bad = 0;
    frame f;

    /* off the data path, so every field not on the wire reads as zero */
    memset(pkt, 0, sizeof(*pkt));
    int rv = frame_check(data, datalen, udp_port, flags, &f);
    if (rv != 0) {
        return rv;
    }
    uint32_t w0 = ld32(data);
    pkt->ip.tc = (uint8_t)(w0 >> 20);
    pkt->ip.flowlabel = w0 & 0xfffff;
    pkt->ip.plen = ld16(data + 4);
    pkt->ip.nxt = IPPROTO_UDP_;
    pkt->ip.hlim = data[7];
    memcpy(pkt->ip.src, data + 8, 16);
    memcpy(pkt->ip.dst, data + 24, 16);
    pkt->udp.sport = ld16(udp);
    pkt->udp.dport = ld16(udp + 2);
    pkt->udp.len = pkt->ip.plen;
    pkt->udp.csum = ld16(udp + 6);
    pkt->bth.opcode = bth[0];
    pkt->bth.se = bth[1] >> 7;
    pkt->bth.mig = bth[1] >> 6 & 1;
    pkt->bth.padcnt = (uint8_t)f.padcnt;
    pkt->bth.pkey = ld16(bth + 2);
    pkt->bth.resv8a = bth[4];
    pkt->bth.dqpn = ld24(bth + 5);
    pkt->bth.ackreq = bth[8] >> 7;
    pkt->bth.rtx = bth[8] >> 5 & 1;
    pkt->bth.ts = bth[8] >> 4 & 1;
    pkt->bth.psn = ld24(bth + 9);
    pkt->has = f.has;
    pkt->trimmed = f.trimmed;
    /* never NULL, so that copying |payload_len| bytes from it is always valid */
    pkt->payload = data + f.hdrlen;

    if (f.has & MRC_HAS_METH) {
        mrc_data_rx d;
        bad |= data_get(&d, data, datalen, &f);
        pkt->meth.rqmsn = d.h.rqmsn;
        pkt->meth.msn = d.h.msn;
        if (f.has & MRC_HAS_TSETH) {
            ts_get(&pkt->tseth, p + MRC_METH_LEN);
        }
        pkt->reth.va = d.h.va;
        pkt->reth.rkey = d.h.rkey;
        pkt->reth.dmalen = d.h.dmalen;
        pkt->imm = d.h.imm;
        pkt->payload_len = d.payload_len;
    } else {
        switch (bth[0]) {
        case MRC_OP_ACK:
            pkt->aeth.syndrome = p[0];
            pkt->aeth.msn = ld24(p + 1);
            /* bit 7 is reserved; bits 6:5 are 00 ACK or 11 NAK (MRC has no RNR NAK, 10 is
             * reserved) */
            bad |= (p[0] >> 5) != 0 && (p[0] >> 5) != 3;
            break;
        case MRC_OP_SACK: {
            mrc_sack_rx k;
            bad |= sack_get(&k, data);
            pkt->seth = (mrc_seth){.m = k.h.m,
                                   .pr = k.h.pr,
                                   .ack_psn_offset = k.h.ack_psn_offset,
                                   .entropy = k.h.entropy,
                                   .spdcid = k.h.spdcid,
                                   .dpdcid = k.h.dpdcid,
                                   .cack_psn = k.h.cack,
                                   .cc_type = k.h.cc_type,
                                   .cc_flags = k.h.cc_flags,
                                   .mpr = k.h.mpr,
                                   .sack_offset = k.h.sack_offset,
                                   .bitmap = k.h.bitmap};
            pkt->cc = (mrc_ccstate){.ts = k.h.ts,
                                    .ooo_count = k.h.ooo_count,
                                    .rc = k.h.rc,
                                    .pen = k.h.pen,
                                    .rcvd_bytes = k.h.rcvd_bytes};
            break;
        }
        case MRC_OP_NACK:
            pkt->neth.reason = p[2];
            pkt->neth.vendor = p[3];
            pkt->neth.entropy = ld32(p + 4);
            pkt->neth.spdcid = ld16(p + 8);
            pkt->neth.dpdcid = ld16(p + 10);
            pkt->neth.nack_psn = ld24(p + 13);
            pkt->neth.cc_type = p[16] >> 4;
            pkt->neth.cc_flags = p[16] & 0x0f;
            pkt->neth.ts = ld16(p + 18);
            bad |= p[2] >= 32 || !(NACK_REASONS >> p[2] & 1);
            break;
        case MRC_OP_PROBE:
            pkt->peth.vendor = p[3];
            pkt->peth.probe_id = ld16(p + 4);
            pkt->peth.spdcid = ld16(p + 8);
            pkt->peth.dpdcid = ld16(p + 10);
            bad |= ts_get(&pkt->peth.ts, p + 12);
            break;
        case MRC_OP_EP_REQ:
            pkt->erth.op = p[1] & 3;
            pkt->erth.vendor = p[3];
            pkt->erth.port_status = ld32(p + 4);
            bad |= ts_get(&pkt->erth.ts, p + 12);
            bad |= pkt->erth.op > MRC_EP_OP_EV_PROBE || pkt->bth.dqpn != MRC_EP_QPN;
            break;
        default: /* MRC_OP_EP_RSP: op_table admits no other opcode */
            pkt->eeth.op = p[1] >> 2 & 3;
            pkt->eeth.entropy = ld32(p + 4);
            pkt->eeth.svc_time_ns = ld32(p + 8);
            pkt->eeth.ts = ld16(p + 28);
            bad |= pkt->eeth.op > MRC_EP_OP_EV_PROBE || pkt->bth.dqpn != MRC_EP_QPN;
            break;
        }
    }
    return bad ? MRC_WIRE_EFIELD : 0;
}

/* Encodes |pkt|; with |tmpl|, the fixed part of IPv6, UDP and BTH comes from the template and
 * only the per-packet fields are taken from |pkt|. */
static size_t encode(uint8_t *dest, size_t destlen, const mrc_pkt *pkt, size_t payload_len,
                     const uint8_t *tmpl)
{
    const mrc_bth *b = &pkt->bth;
    unsigned idx = b->opcode - OP_BASE;
    size_t hdrlen = 0, pad, plen;
    uint32_t has;
    uint8_t *p;

    if (idx >= OP_COUNT || !op_table[idx].has) {
        goto out;
    }
    has = op_table[idx].has;
    hdrlen = MRC_BASE_LEN + op_table[idx].ext;
    if ((has & MRC_HAS_METH) && b->ts) {
        has |= MRC_HAS_TSETH;
        hdrlen += MRC_TSETH_LEN;
    }
    pad = (0u - payload_len) & 3;
    /* checked one term at a time so that no sum can wrap */
    if ((payload_len && !(has & MRC_HAS_METH)) || payload_len > UINT16_MAX ||
        hdrlen - MRC_IP6_LEN + payload_len + pad + MRC_ICRC_LEN > UINT16_MAX || destlen < hdrlen) {
        hdrlen = 0;
        goto out;
    }
    plen = hdrlen - MRC_IP6_LEN + payload_len + pad + MRC_ICRC_LEN;

    if (tmpl) {
        memcpy(dest, tmpl, MRC_BASE_LEN);
    } else {
        dest[6] = IPPROTO_UDP_;
        dest[7] = pkt->ip.hlim;
        memcpy(dest + 8, pkt->ip.src, 16);
        memcpy(dest + 24, pkt->ip.dst, 16);
        st16(dest + MRC_IP6_LEN + 2, pkt->udp.dport);
        st16(dest + MRC_IP6_LEN + 6, 0);
        st16(dest + MRC_IP6_LEN + MRC_UDP_LEN + 2, b->pkey);
        dest[MRC_IP6_LEN + MRC_UDP_LEN + 4] = b->resv8a;
        st24(dest + MRC_IP6_LEN + MRC_UDP_LEN + 5, b->dqpn & 0xffffff);
    }
    st32(dest, 6u << 28 | (uint32_t)pkt->ip.tc << 20 | (pkt->ip.flowlabel & 0xfffff));
    st16(dest + 4, (uint32_t)plen);
    p = dest + MRC_IP6_LEN;
    st16(p, pkt->udp.sport);
    st16(p + 4, (uint32_t)plen);
    p += MRC_UDP_LEN;
    p[0] = b->opcode;
    p[1] = (uint8_t)((b->se & 1) << 7 | (b->mig & 1) << 6 | pad << 4);
    p[8] = (uint8_t)((b->ackreq & 1) << 7 | (b->rtx & 1) << 5 | (b->ts & 1) << 4);
    st24(p + 9, b->psn & 0xffffff);
    p += MRC_BTH_LEN;

    /* reserved bytes and bits are zero; the fields are written over them. A constant-size clear
     * is a few vector stores, a variable one a library call. */
    if (destlen >= MRC_BASE_LEN + 40) {
        memset(p, 0, 40);
    } else {
        memset(p, 0, hdrlen - MRC_BASE_LEN);
    }
    if (has & MRC_HAS_METH) {
        st16(p, pkt->meth.rqmsn);
        st16(p + 2, pkt->meth.msn);
        p += MRC_METH_LEN;
        if (has & MRC_HAS_TSETH) {
            ts_put(p, &pkt->tseth);
            p += MRC_TSETH_LEN;
        }
        st64(p, pkt->reth.va);
        st32(p + 8, pkt->reth.rkey);
        st32(p + 12, pkt->reth.dmalen);
        p += MRC_RETH_LEN;
        if (has & MRC_HAS_IMM) {
            st32(p, pkt->imm);
        }
    } else {
        switch (b->opcode) {
        case MRC_OP_ACK:
            p[0] = pkt->aeth.syndrome;
            st24(p + 1, pkt->aeth.msn & 0xffffff);
            break;
        case MRC_OP_SACK:
            p[1] = (uint8_t)((pkt->seth.m & 3) << 5 | (pkt->seth.pr & 1) << 1);
            st16(p + 2, (uint16_t)pkt->seth.ack_psn_offset);
            st32(p + 4, pkt->seth.entropy);
            st16(p + 8, pkt->seth.spdcid);
            st16(p + 10, pkt->seth.dpdcid);
            st24(p + 13, pkt->seth.cack_psn & 0xffffff);
            p[16] = (uint8_t)(pkt->seth.cc_type << 4 | (pkt->seth.cc_flags & 0x0f));
            p[17] = pkt->seth.mpr;
            st16(p + 18, (uint16_t)pkt->seth.sack_offset);
            st64(p + 20, pkt->seth.bitmap);
            p += MRC_SETH_LEN;
            st16(p, pkt->cc.ts);
            st16(p + 2, pkt->cc.ooo_count & 0x7fff);
            p[4] = (uint8_t)((pkt->cc.rc & 1) << 7 | (pkt->cc.pen & 0x7f));
            st24(p + 5, pkt->cc.rcvd_bytes & 0xffffff);
            break;
        case MRC_OP_NACK:
            p[2] = pkt->neth.reason;
            p[3] = pkt->neth.vendor;
            st32(p + 4, pkt->neth.entropy);
            st16(p + 8, pkt->neth.spdcid);
            st16(p + 10, pkt->neth.dpdcid);
            st24(p + 13, pkt->neth.nack_psn & 0xffffff);
            p[16] = (uint8_t)(pkt->neth.cc_type << 4 | (pkt->neth.cc_flags & 0x0f));
            st16(p + 18, pkt->neth.ts);
            break;
        case MRC_OP_PROBE:
            p[3] = pkt->peth.vendor;
            st16(p + 4, pkt->peth.probe_id);
            st16(p + 8, pkt->peth.spdcid);
            st16(p + 10, pkt->peth.dpdcid);
            ts_put(p + 12, &pkt->peth.ts);
            break;
        case MRC_OP_EP_REQ:
            p[1] = pkt->erth.op & 3;
            p[3] = pkt->erth.vendor;
            st32(p + 4, pkt->erth.port_status);
            ts_put(p + 12, &pkt->erth.ts);
            break;
        default: /* MRC_OP_EP_RSP */
            p[1] = (uint8_t)((pkt->eeth.op & 3) << 2);
            st32(p + 4, pkt->eeth.entropy);
            st32(p + 8, pkt->eeth.svc_time_ns);
            st16(p + 28, pkt->eeth.ts);
            break;
        }
    }
out:
    return hdrlen;
}

/*
 * |len| must match the lengths mrc_wire_encode() wrote: a packet whose IPv6 length disagrees
 * with what is being sealed is refused (0) rather than sent with a wrong ICRC position.
 */
size_t mrc_wire_finish(uint8_t *dest, size_t destlen, size_t len)
{
    size_t pad, total = 0;

    if (len < MRC_BASE_LEN || len > destlen) {
        goto out;
    }
    pad = dest[MRC_IP6_LEN + MRC_UDP_LEN + 1] >> 4 & 3;
    if (len + pad + MRC_ICRC_LEN > destlen ||
        len + pad + MRC_ICRC_LEN != MRC_IP6_LEN + (size_t)ld16(dest + 4)) {
        goto out;
    }
    memset(dest + len, 0, pad);
    st32le(dest + len + pad, mrc_icrc(dest, len + pad));
    total = len + pad + MRC_ICRC_LEN;
out:
    return total;
}

size_t mrc_wire_encode(uint8_t *dest, size_t destlen, const mrc_pkt *pkt, size_t payload_len)
{
    return encode(dest, destlen, pkt, payload_len, NULL);
}

size_t mrc_wire_encode_tmpl(uint8_t *dest, size_t destlen, const uint8_t *tmpl, const mrc_pkt *pkt,
                            size_t payload_len)
{
    return encode(dest, destlen, pkt, payload_len, tmpl);
}

size_t mrc_wire_encode_sack(uint8_t *dest, const uint8_t *tmpl, const mrc_sack_hdr *h)
{
    uint8_t *p =
        mrc_wire_put_base(dest, tmpl, h->tc, h->ev, MRC_SACK_LEN - MRC_IP6_LEN + MRC_ICRC_LEN);
    p[0] = MRC_OP_SACK;
    p[1] = 0;
    p[8] = 0;
    st24(p + 9, h->cack & 0xffffff);
    p += MRC_BTH_LEN;
    /* SETH; its reserved bytes are zero */
    st32(p, (uint32_t)(h->m & 3) << 21 | (uint32_t)(h->pr & 1) << 17 | (uint16_t)h->ack_psn_offset);
    st32(p + 4, h->entropy);
    st32(p + 8, (uint32_t)h->spdcid << 16 | h->dpdcid);
    st32(p + 12, h->cack & 0xffffff);
    p[16] = (uint8_t)(h->cc_type << 4 | (h->cc_flags & 0x0f));
    p[17] = h->mpr;
    st16(p + 18, (uint16_t)h->sack_offset);
    st64(p + 20, h->bitmap);
    p += MRC_SETH_LEN;
    st32(p, (uint32_t)h->ts << 16 | (h->ooo_count & 0x7fff));
    st32(p + 4, (uint32_t)((h->rc & 1) << 7 | (h->pen & 0x7f)) << 24 | (h->rcvd_bytes & 0xffffff));
    return MRC_SACK_LEN;
}

void mrc_wire_template(uint8_t dest[MRC_BASE_LEN], const uint8_t src[16], const uint8_t dst[16],
                       uint16_t dport, uint32_t dqpn)
{
    memset(dest, 0, MRC_BASE_LEN);
    dest[0] = 6u << 4;
    dest[6] = IPPROTO_UDP_;
    dest[7] = 64;
    memcpy(dest + 8, src, 16);
    memcpy(dest + 24, dst, 16);
    st16(dest + MRC_IP6_LEN + 2, dport);
    st16(dest + MRC_IP6_LEN + MRC_UDP_LEN + 2, 0xffff);
    st24(dest + MRC_IP6_LEN + MRC_UDP_LEN + 5, dqpn & 0xffffff);
}

void mrc_wire_outer(uint8_t dest[MRC_IP6_LEN], const uint8_t src[16], const uint8_t dst[16],
                    uint16_t plen, uint8_t tc, uint32_t flowlabel, uint8_t hlim)
{
    st32(dest, 6u << 28 | (uint32_t)tc << 20 | (flowlabel & 0xfffff));
    st16(dest + 4, plen);
    dest[6] = IPPROTO_IPV6_;
    dest[7] = hlim;
    memcpy(dest + 8, src, 16);
    memcpy(dest + 24, dst, 16);
}

/*
 * The outer length may exceed what arrived (a trimmed packet whose outer header the switch
 * left alone) but never fall short of it; the inner decode checks the inner lengths.
 */
int mrc_wire_outer_decode(const uint8_t *data, size_t datalen, mrc_ip6 *ip)
{
    uint32_t w0;
    int rv = 0;

    memset(ip, 0, sizeof(*ip));
    if (datalen < MRC_IP6_LEN) {
        rv = MRC_WIRE_EIP;
        goto out;
    }
    w0 = ld32(data);
    if (w0 >> 28 != 6 || data[6] != IPPROTO_IPV6_ || ld16(data + 4) < datalen - MRC_IP6_LEN) {
        rv = MRC_WIRE_EIP;
        goto out;
    }
    ip->tc = (uint8_t)(w0 >> 20);
    ip->flowlabel = w0 & 0xfffff;
    ip->plen = ld16(data + 4);
    ip->nxt = IPPROTO_IPV6_;
    ip->hlim = data[7];
    memcpy(ip->src, data + 8, 16);
    memcpy(ip->dst, data + 24, 16);
out:
    return rv;
}

const char *mrc_wire_strerror(int err)
{
    static const char *const msgs[] = {
        "success",
        "packet shorter than its headers",
        "not IPv6 and UDP, or lengths that disagree",
        "not the MRC UDP port",
        "not an MRC opcode, or BTH TVer not 0",
        "pad count beyond the payload, or payload not a multiple of 4",
        "ICRC mismatch",
        "a header field with a value no MRC packet has",
    };

    if (err > 0 || err < MRC_WIRE_EFIELD) {
        return "unknown wire error";
    }
    return msgs[-err];
}
