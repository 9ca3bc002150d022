/* SPDX-License-Identifier: MIT */
/* The public packet decoder: an arriving packet read by the receive path's own decoder, its
 * headers copied into the public mrc_packet so that the engine's structs stay private. */
#include <string.h>

#include "mrc_wire.h"

#define IPPROTO_UDP_ 17
#define IPPROTO_IPV6_ 41

/* The public codes are the decoder's, so that garbage_by_err reads the same either way. */
_Static_assert(MRC_PACKET_ESHORT == MRC_WIRE_ESHORT && MRC_PACKET_EIP == MRC_WIRE_EIP &&
                   MRC_PACKET_EPORT == MRC_WIRE_EPORT && MRC_PACKET_EOPCODE == MRC_WIRE_EOPCODE &&
                   MRC_PACKET_EPAD == MRC_WIRE_EPAD && MRC_PACKET_EICRC == MRC_WIRE_EICRC &&
                   MRC_PACKET_EFIELD == MRC_WIRE_EFIELD && MRC_PACKET_ENOTUDP < MRC_WIRE_EFIELD,
               "MRC_PACKET_E* and MRC_WIRE_E* differ");
_Static_assert(MRC_PACKET_HAS_METH == MRC_HAS_METH && MRC_PACKET_HAS_TSETH == MRC_HAS_TSETH &&
                   MRC_PACKET_HAS_RETH == MRC_HAS_RETH && MRC_PACKET_HAS_IMM == MRC_HAS_IMM &&
                   MRC_PACKET_HAS_AETH == MRC_HAS_AETH && MRC_PACKET_HAS_SETH == MRC_HAS_SETH &&
                   MRC_PACKET_HAS_NETH == MRC_HAS_NETH && MRC_PACKET_HAS_PETH == MRC_HAS_PETH &&
                   MRC_PACKET_HAS_ERTH == MRC_HAS_ERTH && MRC_PACKET_HAS_EETH == MRC_HAS_EETH,
               "MRC_PACKET_HAS_* and MRC_HAS_* differ");
#define HAS_HEADERS 0x3ffu /* the MRC_HAS_* bits */

static void ip6_put(mrc_packet_ip6 *d, const mrc_ip6 *s)
{
    d->tc = s->tc;
    d->flowlabel = s->flowlabel;
    d->plen = s->plen;
    d->nxt = s->nxt;
    d->hlim = s->hlim;
    memcpy(d->src, s->src, sizeof(d->src));
    memcpy(d->dst, s->dst, sizeof(d->dst));
}

static mrc_packet_tseth ts_of(const mrc_tseth *s)
{
    return (mrc_packet_tseth){.ts = s->ts, .tsr = s->tsr, .fmt = s->fmt};
}

/* Every field of |k|; |pkt| is zeroed, so the headers it lacks stay 0. */
static void pkt_put(mrc_packet *pkt, const mrc_pkt *k)
{
    ip6_put(&pkt->inner, &k->ip);
    pkt->udp = (mrc_packet_udp){
        .sport = k->udp.sport, .dport = k->udp.dport, .len = k->udp.len, .csum = k->udp.csum};
    pkt->bth = (mrc_packet_bth){.opcode = k->bth.opcode,
                                .se = k->bth.se,
                                .mig = k->bth.mig,
                                .padcnt = k->bth.padcnt,
                                .tver = k->bth.tver,
                                .pkey = k->bth.pkey,
                                .resv8a = k->bth.resv8a,
                                .dqpn = k->bth.dqpn,
                                .ackreq = k->bth.ackreq,
                                .rtx = k->bth.rtx,
                                .ts = k->bth.ts,
                                .psn = k->bth.psn};
    pkt->has |= k->has & HAS_HEADERS;
    /* mrc_pkt holds one opcode's headers in a union: read only the ones it has */
    if (k->has & MRC_HAS_METH) {
        pkt->meth = (mrc_packet_meth){.rqmsn = k->meth.rqmsn, .msn = k->meth.msn};
        pkt->reth =
            (mrc_packet_reth){.va = k->reth.va, .rkey = k->reth.rkey, .dmalen = k->reth.dmalen};
    }
    if (k->has & MRC_HAS_TSETH) {
        pkt->tseth = ts_of(&k->tseth);
    }
    if (k->has & MRC_HAS_IMM) {
        pkt->imm = k->imm;
    }
    if (k->has & MRC_HAS_AETH) {
        pkt->aeth = (mrc_packet_aeth){.syndrome = k->aeth.syndrome, .msn = k->aeth.msn};
    }
    if (k->has & MRC_HAS_SETH) {
        const mrc_seth *s = &k->seth;
        pkt->seth = (mrc_packet_seth){.m = s->m,
                                      .pr = s->pr,
                                      .ack_psn_offset = s->ack_psn_offset,
                                      .entropy = s->entropy,
                                      .spdcid = s->spdcid,
                                      .dpdcid = s->dpdcid,
                                      .cack_psn = s->cack_psn,
                                      .cc_type = s->cc_type,
                                      .cc_flags = s->cc_flags,
                                      .mpr = s->mpr,
                                      .sack_offset = s->sack_offset,
                                      .bitmap = s->bitmap};
        pkt->cc = (mrc_packet_ccstate){.ts = k->cc.ts,
                                       .ooo_count = k->cc.ooo_count,
                                       .rc = k->cc.rc,
                                       .pen = k->cc.pen,
                                       .rcvd_bytes = k->cc.rcvd_bytes};
    }
    if (k->has & MRC_HAS_NETH) {
        const mrc_neth *n = &k->neth;
        pkt->neth = (mrc_packet_neth){.reason = n->reason,
                                      .vendor = n->vendor,
                                      .entropy = n->entropy,
                                      .spdcid = n->spdcid,
                                      .dpdcid = n->dpdcid,
                                      .nack_psn = n->nack_psn,
                                      .cc_type = n->cc_type,
                                      .cc_flags = n->cc_flags,
                                      .ts = n->ts};
    }
    if (k->has & MRC_HAS_PETH) {
        pkt->peth = (mrc_packet_peth){.vendor = k->peth.vendor,
                                      .probe_id = k->peth.probe_id,
                                      .spdcid = k->peth.spdcid,
                                      .dpdcid = k->peth.dpdcid,
                                      .ts = ts_of(&k->peth.ts)};
    }
    if (k->has & MRC_HAS_ERTH) {
        pkt->erth = (mrc_packet_erth){.op = k->erth.op,
                                      .vendor = k->erth.vendor,
                                      .port_status = k->erth.port_status,
                                      .ts = ts_of(&k->erth.ts)};
    }
    if (k->has & MRC_HAS_EETH) {
        pkt->eeth = (mrc_packet_eeth){.op = k->eeth.op,
                                      .entropy = k->eeth.entropy,
                                      .svc_time_ns = k->eeth.svc_time_ns,
                                      .ts = k->eeth.ts};
    }
    /* as mrc_wire.c's ev_get */
    pkt->ev = (k->ip.flowlabel & 0xffff) << 16 | k->udp.sport;
    pkt->payload = k->payload;
    pkt->payload_len = k->payload_len;
    pkt->trimmed = k->trimmed;
}

int mrc_packet_decode(const mrc_settings *settings, const uint8_t *data, size_t datalen,
                      mrc_packet *pkt)
{
    const uint8_t *inner = data;
    size_t innerlen = datalen;
    mrc_ip6 outer;
    mrc_pkt k;
    int rv = 0;

    memset(pkt, 0, sizeof(*pkt));
    /* whether it is MRC traffic at all, before any fault of it: a capture holds much else */
    if (datalen < MRC_IP6_LEN || data[0] >> 4 != 6) {
        rv = MRC_PACKET_ENOTUDP;
        goto out;
    }
    if (data[6] == IPPROTO_IPV6_) {
        inner = data + MRC_IP6_LEN;
        innerlen = datalen - MRC_IP6_LEN;
    } else if (data[6] != IPPROTO_UDP_) {
        rv = MRC_PACKET_ENOTUDP;
        goto out;
    }
    if (innerlen < MRC_IP6_LEN + MRC_UDP_LEN || inner[0] >> 4 != 6 || inner[6] != IPPROTO_UDP_) {
        rv = MRC_PACKET_ENOTUDP;
        goto out;
    }
    uint16_t dport = ld16(inner + MRC_IP6_LEN + 2);
    if (dport != settings->udp_port && dport != MRC_ALT_UDP_PORT) {
        rv = MRC_PACKET_EPORT;
        goto out;
    }
    if (inner != data) {
        rv = mrc_wire_outer_decode(data, datalen, &outer);
        if (rv != 0) {
            goto out;
        }
        ip6_put(&pkt->outer, &outer);
        pkt->has |= MRC_PACKET_HAS_OUTER;
    }
    /* as mrc_ctx.c read_one with the host's mrc_rx_info: a trimming switch re-marks the DSCP
     * of the header it forwards by (the outer one in SRv6 mode), and only then may the packet
     * end before its lengths say */
    unsigned dscp = ld16(data) >> 6 & 0x3f;
    pkt->marked_trimmed = dscp == settings->dscp_trimmed || dscp == settings->dscp_trimmed_lasthop;
    unsigned flags =
        (settings->icrc ? 0 : MRC_DECODE_NO_ICRC) | (pkt->marked_trimmed ? MRC_DECODE_TRIMMED : 0);
    rv = mrc_wire_decode(inner, innerlen, settings->udp_port, flags, &k);
    if (rv != 0) {
        goto out;
    }
    pkt_put(pkt, &k);
out:
    if (rv != 0) {
        /* no half-decoded packet (the outer header may be in already) */
        memset(pkt, 0, sizeof(*pkt));
    }
    return rv;
}

const char *mrc_packet_strerror(int err)
{
    if (err == MRC_PACKET_ENOTUDP) {
        return "not IPv6 and UDP, bare or inside IPv6";
    }
    return mrc_wire_strerror(err);
}
