/* SPDX-License-Identifier: MIT */
/* libFuzzer target: MRC packets through every decode flag and the outer header, re-encoded. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_wire.h"

/*
 * What is checked, for each input and each combination of MRC_DECODE_TRIMMED and
 * MRC_DECODE_NO_ICRC:
 * - decode returns 0 or one of MRC_WIRE_E*, and a parsed payload lies inside the input;
 * - the flags only relax: what decodes strictly decodes the same with any flag; a structural
 *   fault (anything but EICRC and EFIELD, which come last) is the same whatever the flags;
 * - a decoded packet re-encodes (mrc_wire_encode + payload + mrc_wire_finish) to the input
 *   bytes, once the input is normalised in the places where encode writes a fixed value:
 *     the UDP checksum (RoCEv2 sends 0; the ICRC masks it),
 *     reserved bits: BTH byte 8 bits 6 and 3:0; TSETH and the PETH/ERTH timestamp blocks
 *     bits 14:4; SETH byte 0, byte 1 bits 7, 4:2 and 0, byte 12; CC_STATE bit 15 of bytes 2-3;
 *     NETH bytes 0-1, 12 and 17; PETH bytes 0-2 and 6-7; ERTH byte 0, byte 1 bits 7:2,
 *     byte 2, bytes 8-11; EETH byte 0, byte 1 bits 7:4 and 1:0, bytes 2-3, 12-27 and 30-35,
 *     the pad bytes (encode's caller zeroes them through mrc_wire_finish).
 *   The ICRC must come back identical when decode checked it and normalising changed none of
 *   the bytes it covers. A trimmed packet is compared as far as it goes.
 * - mrc_wire_decode_fast, the receive path's decoder, finds the same fault or reads the same
 *   fields (a field fault of a packet neither data nor SACK is left to the full decoder);
 * - an outer header that decodes re-encodes exactly (it has no reserved bits), and the packet
 *   behind it goes through the checks above.
 */

#define MRC_PORT 4791
#define BUF_MAX (65536 + 64)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the library: say which, then crash so that libFuzzer keeps the input. */
static void die(const char *what, unsigned flags)
{
    fprintf(stderr, "fuzz_wire: %s (decode flags %u)\n", what, flags);
    abort();
}

static void clear(uint8_t *p, size_t from, size_t to)
{
    memset(p + from, 0, to - from);
}

static void normalise_ts(uint8_t *p)
{
    p[2] &= 0x80;
    p[3] &= 0x0f;
}

/* Clears in |buf| (a copy of the input) every bit mrc_wire_encode() writes as zero. */
static void normalise(uint8_t *buf, const mrc_pkt *pkt)
{
    uint8_t *p = buf + MRC_BASE_LEN;

    buf[MRC_IP6_LEN + MRC_UDP_LEN + 8] &= 0xb0;
    if (pkt->has & MRC_HAS_METH) {
        p += MRC_METH_LEN;
        if (pkt->has & MRC_HAS_TSETH) {
            normalise_ts(p);
        }
    } else if (pkt->has & MRC_HAS_SETH) {
        p[0] = 0;
        p[1] &= 0x62;
        p[12] = 0;
        p[MRC_SETH_LEN + 2] &= 0x7f;
    } else if (pkt->has & MRC_HAS_NETH) {
        clear(p, 0, 2);
        p[12] = 0;
        p[17] = 0;
    } else if (pkt->has & MRC_HAS_PETH) {
        clear(p, 0, 3);
        clear(p, 6, 8);
        normalise_ts(p + 12);
    } else if (pkt->has & MRC_HAS_ERTH) {
        p[0] = 0;
        p[1] &= 0x03;
        p[2] = 0;
        clear(p, 8, 12);
        normalise_ts(p + 12);
    } else if (pkt->has & MRC_HAS_EETH) {
        p[0] = 0;
        p[1] &= 0x0c;
        clear(p, 2, 4);
        clear(p, 12, 28);
        clear(p, 30, 36);
    }
}

static void check_reencode(const uint8_t *data, size_t size, unsigned flags, const mrc_pkt *pkt)
{
    static uint8_t out[BUF_MAX], norm[BUF_MAX];
    size_t hdrlen = MRC_BASE_LEN + mrc_wire_ext_len(pkt->bth.opcode, pkt->bth.ts);
    size_t wirelen = MRC_IP6_LEN + (size_t)pkt->ip.plen;
    size_t padded = wirelen - hdrlen - MRC_ICRC_LEN;
    size_t wire_payload = padded - pkt->bth.padcnt;
    size_t cmp;

    if (pkt->has != mrc_wire_headers(pkt->bth.opcode, pkt->bth.ts) || hdrlen > size ||
        wirelen < hdrlen + MRC_ICRC_LEN || pkt->trimmed != (wirelen != size)) {
        die("headers or lengths of a decoded packet", flags);
    }
    if (pkt->payload_len && (pkt->payload != data + hdrlen || pkt->payload_len > size - hdrlen ||
                             pkt->payload_len > wire_payload)) {
        die("payload outside the packet", flags);
    }
    if (mrc_wire_encode(out, sizeof(out), pkt, wire_payload) != hdrlen) {
        die("a decoded packet does not encode", flags);
    }
    memcpy(out + hdrlen, pkt->payload, pkt->payload_len);
    memcpy(norm, data, size);
    normalise(norm, pkt);
    if (pkt->trimmed) {
        cmp = hdrlen + pkt->payload_len;
    } else {
        if (pkt->payload_len != wire_payload) {
            die("payload length of a complete packet", flags);
        }
        /* garbage where the pad goes: finish must zero it */
        memset(out + hdrlen + wire_payload, 0xa5, pkt->bth.padcnt);
        if (mrc_wire_finish(out, sizeof(out), hdrlen + wire_payload) != size) {
            die("finish of a decoded packet", flags);
        }
        clear(norm, hdrlen + wire_payload, wirelen - MRC_ICRC_LEN);
        cmp = wirelen - MRC_ICRC_LEN;
        /* the ICRC covers all but the UDP checksum (and fields encode copies as they are) */
        norm[MRC_IP6_LEN + 6] = data[MRC_IP6_LEN + 6];
        norm[MRC_IP6_LEN + 7] = data[MRC_IP6_LEN + 7];
        if (!(flags & MRC_DECODE_NO_ICRC) && memcmp(norm, data, cmp) == 0) {
            cmp = wirelen;
        }
    }
    norm[MRC_IP6_LEN + 6] = 0;
    norm[MRC_IP6_LEN + 7] = 0;
    if (memcmp(out, norm, cmp) != 0) {
        die("re-encoded bytes differ from the input", flags);
    }
}

/* The receive path's decoder agrees with the full one: the same fault, the same kind, the
 * same fields. */
static void check_fast(const uint8_t *data, size_t size, unsigned flags, int rv, const mrc_pkt *pkt)
{
    mrc_fast_rx rx;
    int kind = mrc_wire_decode_fast(data, size, MRC_PORT, flags, &rx);
    if (rv != 0) {
        /* a packet of another kind goes on to the full decoder, which has the last word */
        if (kind != rv && (kind != MRC_FAST_OTHER || rv != MRC_WIRE_EFIELD)) {
            die("the fast decoder found another fault", flags);
        }
        return;
    }
    uint32_t ev = (pkt->ip.flowlabel & 0xffff) << 16 | pkt->udp.sport;
    if (pkt->has & MRC_HAS_METH) {
        const mrc_data_rx *d = &rx.data;
        uint8_t bflags = (uint8_t)(pkt->bth.ackreq << 7 | pkt->bth.rtx << 5 | pkt->bth.ts << 4);
        if (kind != MRC_FAST_DATA || d->h.tc != pkt->ip.tc || d->h.ev != ev ||
            d->h.opcode != pkt->bth.opcode || d->h.flags != bflags || d->h.psn != pkt->bth.psn ||
            d->h.rqmsn != pkt->meth.rqmsn || d->h.msn != pkt->meth.msn ||
            d->h.ts != pkt->tseth.ts || d->h.va != pkt->reth.va || d->h.rkey != pkt->reth.rkey ||
            d->h.dmalen != pkt->reth.dmalen || d->h.imm != pkt->imm || d->dqpn != pkt->bth.dqpn ||
            d->payload != pkt->payload || d->payload_len != pkt->payload_len ||
            d->trimmed != pkt->trimmed) {
            die("the fast decoder read a data packet differently", flags);
        }
    } else if (pkt->bth.opcode == MRC_OP_SACK) {
        const mrc_sack_hdr *h = &rx.sack.h;
        const mrc_seth *e = &pkt->seth;
        if (kind != MRC_FAST_SACK || h->tc != pkt->ip.tc || h->ev != ev || h->m != e->m ||
            h->pr != e->pr || h->ack_psn_offset != e->ack_psn_offset || h->entropy != e->entropy ||
            h->spdcid != e->spdcid || h->dpdcid != e->dpdcid || h->cack != e->cack_psn ||
            h->cc_type != e->cc_type || h->cc_flags != e->cc_flags || h->mpr != e->mpr ||
            h->sack_offset != e->sack_offset || h->bitmap != e->bitmap || h->ts != pkt->cc.ts ||
            h->ooo_count != pkt->cc.ooo_count || h->rc != pkt->cc.rc || h->pen != pkt->cc.pen ||
            h->rcvd_bytes != pkt->cc.rcvd_bytes || rx.sack.dqpn != pkt->bth.dqpn) {
            die("the fast decoder read a SACK differently", flags);
        }
    } else if (kind != MRC_FAST_OTHER) {
        die("the fast decoder took a packet it does not read", flags);
    }
}

/* Decodes with each flag combination; returns the strict result. */
static int check_inner(const uint8_t *data, size_t size)
{
    static const unsigned flag_sets[] = {0, MRC_DECODE_TRIMMED, MRC_DECODE_NO_ICRC,
                                         MRC_DECODE_TRIMMED | MRC_DECODE_NO_ICRC};
    mrc_pkt strict, pkt;
    int rv0 = mrc_wire_decode(data, size, MRC_PORT, 0, &strict);

    for (size_t i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++) {
        unsigned flags = flag_sets[i];
        int rv = mrc_wire_decode(data, size, MRC_PORT, flags, &pkt);
        if (rv > 0 || rv < MRC_WIRE_EFIELD || !mrc_wire_strerror(rv)) {
            die("decode returned no MRC_WIRE_E* code", flags);
        }
        if (rv0 == 0 && (rv != 0 || memcmp(&pkt, &strict, sizeof(pkt)) != 0)) {
            die("a flag changed a packet that decodes strictly", flags);
        }
        if (rv0 != MRC_WIRE_EICRC && rv0 != MRC_WIRE_EFIELD && rv0 != MRC_WIRE_ESHORT &&
            rv != rv0) {
            die("a flag changed a structural fault", flags);
        }
        check_fast(data, size, flags, rv, &pkt);
        if (rv == 0) {
            check_reencode(data, size, flags, &pkt);
        }
    }
    return rv0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t outer[MRC_IP6_LEN];
    mrc_ip6 ip;

    check_inner(data, size);
    if (mrc_wire_outer_decode(data, size, &ip) == 0) {
        if (size < MRC_IP6_LEN || ip.plen < size - MRC_IP6_LEN) {
            die("outer header accepted with a bad length", 0);
        }
        mrc_wire_outer(outer, ip.src, ip.dst, ip.plen, ip.tc, ip.flowlabel, ip.hlim);
        if (memcmp(outer, data, MRC_IP6_LEN) != 0) {
            die("outer header re-encoded differently", 0);
        }
        check_inner(data + MRC_IP6_LEN, size - MRC_IP6_LEN);
    }
    return 0;
}
