/* SPDX-License-Identifier: MIT */
/* The responder: places each packet where its RETH says, tracks PSNs in a bitmap, completes
 * messages in order, and answers with SACKs, NACKs and Transport ACKs. */
#include "mrc_internal.h"

int mrc_rsp_setup(mrc_qp *qp)
{
    mrc_context *ctx = qp->ctx;
    qp->rwin = qp->attr.mpr.mpr_dest * 128u;
    uint32_t cap = mrc_pow2(qp->rwin < 64 ? 64 : qp->rwin);
    qp->rcap_mask = cap - 1;
    qp->bitmap = mrc_calloc(ctx, cap / 64, sizeof(uint64_t));
    qp->rmsg_mask = mrc_pow2(qp->rwin + 1) - 1;
    qp->rmsg = mrc_calloc(ctx, qp->rmsg_mask + 1, sizeof(mrc_rmsg));
    if (!qp->bitmap || !qp->rmsg) {
        mrc_rsp_teardown(qp);
        return MRC_ERR_NOMEM;
    }
    qp->cack = mrc_psn_add(qp->attr.rq_psn, -1);
    qp->rmax = qp->cack;
    qp->rhead = 0;
    qp->ooo = 0;
    qp->rmsg_head = 0;
    qp->msn_done = 0;
    qp->wimm_stash = 0;
    qp->rcvd_bytes = 0;
    qp->rq_starved = false;
    qp->bp_restore = 0;
    qp->since_sack = 0;
    qp->ctrl_head = qp->ctrl_count = 0;
    memset(qp->ce, 0, sizeof(qp->ce));
    return 0;
}

void mrc_rsp_teardown(mrc_qp *qp)
{
    qp->ctx->rx_held -= (uint64_t)qp->ooo * qp->attr.path_mtu;
    qp->ooo = 0;
    mrc_dealloc(qp->ctx, qp->bitmap);
    mrc_dealloc(qp->ctx, qp->rmsg);
    qp->bitmap = NULL;
    qp->rmsg = NULL;
}

void mrc_rsp_flush(mrc_qp *qp)
{
    qp->ctrl_head = qp->ctrl_count = 0;
}

static inline bool bit_test(const mrc_qp *qp, uint32_t i)
{
    return qp->bitmap[(i & qp->rcap_mask) >> 6] >> (i & 63) & 1;
}

static inline void bit_set(mrc_qp *qp, uint32_t i)
{
    qp->bitmap[(i & qp->rcap_mask) >> 6] |= 1ull << (i & 63);
}

/* A slot for a control packet of |op|, filled in place by the caller (a struct built on the
 * stack and copied in stalls on store forwarding, per packet). A plain SACK still waiting
 * absorbs a new plain SACK when one bitmap still shows every arrival either must report
 * (|lo| to |psn|): the newer one carries all the older one would, since the bitmap is read
 * when the SACK is sent; with the queue full it absorbs it anyway, the cumulative PSN being
 * what matters most. NULL when the queue is full otherwise: the requester recovers by its
 * timer. */
static mrc_ctrl *ctrl_slot(mrc_qp *qp, uint8_t op, uint8_t m, uint8_t pr, uint32_t lo, uint32_t psn)
{
    bool full = qp->ctrl_count == MRC_CTRL_QUEUE;
    if (qp->ctrl_count) {
        mrc_ctrl *last = &qp->ctrl[(qp->ctrl_head + qp->ctrl_count - 1) % MRC_CTRL_QUEUE];
        bool plain = op == MRC_OP_SACK && last->op == MRC_OP_SACK && !pr && !last->pr &&
                     m == MRC_M_NONE && last->m == MRC_M_NONE;
        if (plain) {
            uint32_t l = mrc_psn_diff(last->lo, lo) < 0 ? last->lo : lo;
            uint32_t h = mrc_psn_diff(last->hi, psn) > 0 ? last->hi : psn;
            if (full || mrc_psn_diff(h, l) < 64) {
                last->lo = l;
                last->hi = h;
                last->arrived = qp->last_rcvd; /* its trigger is the newest packet now */
                return last;
            }
        } else if (op == MRC_OP_ACK && last->op == MRC_OP_ACK && m == last->m) {
            return last;
        }
    }
    if (full) {
        return NULL;
    }
    mrc_ctrl *c = &qp->ctrl[(qp->ctrl_head + qp->ctrl_count) % MRC_CTRL_QUEUE];
    qp->ctrl_count++;
    c->op = op;
    c->m = m;
    c->pr = pr;
    c->has_ts = false;
    c->lo = lo;
    c->hi = psn;
    c->arrived = qp->last_rcvd;
    mrc_qp_ctrl_ready(qp);
    return c;
}

/* An answer to data packet |pkt| (PSN |psn|, EV |ev|, arrived on |port|) in slot |c|. */
static void ctrl_answer(mrc_ctrl *c, uint32_t psn, uint32_t ev, const mrc_data_rx *pkt,
                        unsigned port)
{
    if (!c) {
        return;
    }
    c->port = (uint8_t)port;
    c->psn = psn;
    c->ev = ev;
    c->has_ts = (pkt->h.flags & 0x10) != 0;
    c->ts = pkt->h.ts;
}

static void queue_nack(mrc_qp *qp, uint8_t reason, uint32_t psn, uint32_t ev,
                       const mrc_data_rx *pkt, unsigned port)
{
    ctrl_answer(ctrl_slot(qp, MRC_OP_NACK, reason, 0, psn, psn), psn, ev, pkt, port);
}

static void queue_ack(mrc_qp *qp, uint8_t syndrome, unsigned port)
{
    mrc_ctrl *c = ctrl_slot(qp, MRC_OP_ACK, syndrome, 0, 0, 0);
    if (c) {
        c->port = (uint8_t)port;
        c->psn = qp->msn_done;
    }
}

/* ALWAYS_SKIP: an EV whose packets keep arriving CE-marked is persistently congested; the
 * requester should stop using it rather than skip it rotation after rotation. An EV is judged
 * over the always_skip_window packets that follow its first mark: only a mark claims a slot,
 * which keeps the unmarked common case to a lookup. A queue that congestion control keeps
 * short marks few packets, but marks them window after window when two flows share the path:
 * always_skip_runs windows in a row with a mark are as persistent as a heavily marked one
 * (at random marks of 1 % that takes ~40,000 windows). */
static inline uint8_t path_verdict(mrc_qp *qp, uint32_t ev, bool ce)
{
    mrc_ce_slot *c = &qp->ce[(ev * 0x9e3779b1u) >> 26];
    if (c->ev != ev) {
        if (!ce) {
            return MRC_M_NONE;
        }
        *c = (mrc_ce_slot){.ev = ev};
    }
    const mrc_settings *s = &qp->ctx->set;
    c->pkts++;
    c->ce += ce;
    uint8_t m = ce ? MRC_M_SKIP_ONCE : MRC_M_NONE;
    if (c->pkts >= s->always_skip_window) {
        c->runs = c->ce ? (uint16_t)(c->runs + 1) : 0;
        if (s->always_skip_window && (c->ce * 100u >= c->pkts * s->always_skip_pct ||
                                      (s->always_skip_runs && c->runs >= s->always_skip_runs))) {
            m = MRC_M_ALWAYS_SKIP;
            c->runs = 0;
        }
        c->pkts = c->ce = 0;
    }
    return m;
}

/* Completes messages in MSN order: a Write with Immediate that arrived early waits for every
 * earlier message, then takes its posted receive. */
static bool complete_messages(mrc_qp *qp)
{
    bool any = false;
    for (;;) {
        mrc_rmsg *m = &qp->rmsg[qp->rmsg_head];
        if (!(m->flags & RMSG_SEEN) || m->nrcvd < m->npkts) {
            return any;
        }
        if (m->flags & RMSG_IMM) {
            mrc_wc wc = {.wr_id = qp->rq[qp->rq_head],
                         .status = MRC_WC_SUCCESS,
                         .opcode = MRC_WC_RECV_RDMA_WITH_IMM,
                         .qp_num = qp->qpn,
                         .byte_len = m->len,
                         .imm_data = m->imm};
            qp->rq_head = (qp->rq_head + 1) % qp->rq_cap;
            qp->rq_count--;
            qp->rq_reserved--;
            qp->wimm_stash--;
            mrc_cq_push(qp->init.recv_cq, &wc);
        }
        memset(m, 0, sizeof(*m));
        qp->rmsg_head = (qp->rmsg_head + 1) & qp->rmsg_mask;
        qp->msn_done = (qp->msn_done + 1) & 0xffffff;
        qp->st.msgs_rcvd_done++;
        any = true;
    }
}

static void advance_cack(mrc_qp *qp)
{
    while (bit_test(qp, qp->rhead)) {
        qp->bitmap[(qp->rhead & qp->rcap_mask) >> 6] &= ~(1ull << (qp->rhead & 63));
        qp->rhead = (qp->rhead + 1) & qp->rcap_mask;
        qp->cack = mrc_psn_add(qp->cack, 1);
        qp->ooo--;
        qp->ctx->rx_held -= qp->attr.path_mtu;
    }
}

/* Queues a SACK triggered by |psn| that must also show the arrivals from |lo| on. */
static void queue_sack(mrc_qp *qp, uint32_t lo, uint32_t psn, uint32_t ev, uint8_t m,
                       const mrc_data_rx *pkt, unsigned port)
{
    ctrl_answer(ctrl_slot(qp, MRC_OP_SACK, m, 0, lo, psn), psn, ev, pkt, port);
}

/* The common case, kept apart from the rules for everything else: the next PSN, nothing
 * beyond it received, a middle packet of a message already seen, not trimmed, not marked,
 * its EV not under watch for ALWAYS_SKIP. Returns false, having changed nothing, for any
 * other packet. */
static inline bool data_in_order(mrc_qp *qp, const mrc_data_rx *pkt, const mrc_rx_info *info,
                                 uint64_t now)
{
    uint32_t psn = pkt->h.psn, mtu = qp->attr.path_mtu;
    uint32_t k = (uint16_t)(pkt->h.msn - (uint16_t)(qp->msn_done + 1)); /* mod 2^16 */
    if (psn != ((qp->cack + 1) & 0xffffff) || qp->ooo || pkt->h.opcode != MRC_OP_WRITE_MIDDLE ||
        pkt->payload_len != mtu || (pkt->h.flags & 0x80) || info->ecn == MRC_ECN_CE ||
        (info->flags & MRC_RX_NOBUF) || k > qp->rmsg_mask ||
        qp->ce[(pkt->h.ev * 0x9e3779b1u) >> 26].ev == pkt->h.ev) {
        return false;
    }
    mrc_rmsg *m = &qp->rmsg[(qp->rmsg_head + k) & qp->rmsg_mask];
    mrc_mr *mr = mrc_mr_find(qp->ctx, pkt->h.rkey);
    uint64_t va = pkt->h.va, base = mr ? (uint64_t)(uintptr_t)mr->addr : 0, at = va - base;
    if (!(m->flags & RMSG_SEEN) || m->len != pkt->h.dmalen || !mr ||
        !(mr->access & qp->attr.access_flags & MRC_ACCESS_REMOTE_WRITE) || va < base ||
        at > mr->len || mtu > mr->len - at) {
        return false;
    }
    memcpy(mr->addr + at, pkt->payload, mtu);
    m->nrcvd++;
    qp->rhead = (qp->rhead + 1) & qp->rcap_mask;
    qp->cack = qp->rmax = psn;
    qp->last_rcvd = now;
    qp->rcvd_bytes += mtu;
    qp->st.data_pkts_rcvd++;
    qp->st.data_bytes_rcvd += mtu;
    if (++qp->since_sack >= qp->ctx->set.sack_every) {
        unsigned port = info->port < MRC_MAX_PORTS ? info->port : 0;
        queue_sack(qp, mrc_psn_add(psn, 1 - (int32_t)qp->since_sack), psn, pkt->h.ev, MRC_M_NONE,
                   pkt, port);
        qp->since_sack = 0;
    }
    return true;
}

void mrc_rsp_on_data(mrc_qp *qp, const mrc_data_rx *pkt, const mrc_rx_info *info, bool trimmed,
                     uint64_t now)
{
    if (!trimmed && data_in_order(qp, pkt, info, now)) {
        return;
    }
    const mrc_settings *s = &qp->ctx->set;
    uint32_t psn = pkt->h.psn;
    uint32_t ev = pkt->h.ev;
    unsigned port = info->port < MRC_MAX_PORTS ? info->port : 0;
    int32_t d = mrc_psn_diff(psn, mrc_psn_add(qp->cack, 1));
    bool dup = d < 0 || (d < (int32_t)qp->rwin && bit_test(qp, qp->rhead + (uint32_t)d));
    qp->last_rcvd = now;
    if (dup) {
        /* already placed: answer again, the first answer may have been lost on the way back,
         * so the next one goes by another reverse EV */
        qp->st.dup_pkts_rcvd++;
        mrc_ev_reverse_suspect(qp, port);
        /* the lost answer may have left by any plane's reverse EV: probe them all */
        qp->rev_urgent = true;
        mrc_qp_timer_arm(qp, mrc_ev_rev_due(qp));
        queue_sack(qp, psn, psn, ev, MRC_M_NONE, pkt, port);
        if (qp->msn_done) {
            queue_ack(qp, MRC_AETH_ACK, port);
        }
        return;
    }
    if (trimmed) {
        uint8_t r =
            info->dscp == s->dscp_trimmed_lasthop ? MRC_NACK_TRIMMED_LASTHOP : MRC_NACK_TRIMMED;
        qp->st.nacks_sent[mrc_nack_index(r)]++;
        queue_nack(qp, r, psn, ev, pkt, port);
        return;
    }
    if (d >= (int32_t)qp->rwin) {
        qp->st.nacks_sent[mrc_nack_index(MRC_NACK_PSN_OOR_WINDOW)]++;
        queue_nack(qp, MRC_NACK_PSN_OOR_WINDOW, psn, ev, pkt, port);
        return;
    }
    if (info->flags & MRC_RX_NOBUF) {
        qp->st.nacks_sent[mrc_nack_index(MRC_NACK_NO_PKT_BUFFER)]++;
        queue_nack(qp, MRC_NACK_NO_PKT_BUFFER, psn, ev, pkt, port);
        return;
    }
    if (d > 0 && s->max_ooo_tracked && qp->ooo >= s->max_ooo_tracked) {
        qp->st.nacks_sent[mrc_nack_index(MRC_NACK_NO_BITMAP)]++;
        queue_nack(qp, MRC_NACK_NO_BITMAP, psn, ev, pkt, port);
        return;
    }
    /* the message: its 24-bit MSN from the 16 bits in METH, relative to the in-order frontier */
    uint32_t k = (uint16_t)(pkt->h.msn - (uint16_t)(qp->msn_done + 1)); /* mod 2^16 */
    uint32_t mtu = qp->attr.path_mtu;
    uint8_t op = pkt->h.opcode;
    bool imm = op == MRC_OP_WRITE_LAST_IMM || op == MRC_OP_WRITE_ONLY_IMM;
    bool last = imm || op == MRC_OP_WRITE_LAST || op == MRC_OP_WRITE_ONLY;
    mrc_mr *mr = mrc_mr_find(qp->ctx, pkt->h.rkey);
    uint64_t va = pkt->h.va, len = pkt->payload_len;
    mrc_rmsg *m = &qp->rmsg[(qp->rmsg_head + k) & qp->rmsg_mask];
    uint64_t at = mr ? va - (uint64_t)(uintptr_t)mr->addr : 0;
    bool bad = k > qp->rmsg_mask || len > mtu || (!last && len != mtu) ||
               ((m->flags & RMSG_SEEN) && m->len != pkt->h.dmalen) || !mr ||
               !(mr->access & qp->attr.access_flags & MRC_ACCESS_REMOTE_WRITE) ||
               va < (uint64_t)(uintptr_t)mr->addr || at > mr->len || len > mr->len - at;
    if (bad) {
        /* a request we cannot honour (rkey, bounds, access, framing): fatal for the requester */
        qp->st.nacks_sent[mrc_nack_index(MRC_NACK_UNEXP_EVENT)]++;
        queue_nack(qp, MRC_NACK_UNEXP_EVENT, psn, ev, pkt, port);
        return;
    }
    if (imm && !(m->flags & RMSG_RESERVED)) {
        if (qp->wimm_stash >= qp->attr.wimm.max_wimm_dest) {
            queue_ack(qp, MRC_AETH_NAK_INV_REQ, port);
            return;
        }
        if (qp->rq_count <= qp->rq_reserved) {
            /* no receive posted for the immediate: MRC has no RNR, so ask for a resend later */
            qp->st.nacks_sent[mrc_nack_index(MRC_NACK_NO_RESOURCE)]++;
            qp->rq_starved = true;
            queue_nack(qp, MRC_NACK_NO_RESOURCE, psn, ev, pkt, port);
            return;
        }
        qp->rq_reserved++;
        qp->wimm_stash++;
        m->flags |= RMSG_RESERVED | RMSG_IMM;
        m->imm = pkt->h.imm;
    }
    memcpy(mr->addr + at, pkt->payload, len);
    if (!(m->flags & RMSG_SEEN)) {
        unsigned shift = (unsigned)__builtin_ctz(mtu); /* a power of two */
        m->flags |= RMSG_SEEN;
        m->npkts = pkt->h.dmalen ? (uint32_t)(((uint64_t)pkt->h.dmalen + mtu - 1) >> shift) : 1;
        m->len = pkt->h.dmalen;
        m->rqmsn = pkt->h.rqmsn;
    }
    /* anything but the next PSN after the highest one (a gap opening, a late packet, a hole
     * filling) is reported at once, by a SACK whose bitmap ends at it: SACKs are coalesced
     * over in-order runs only, which one bitmap always shows whole */
    int32_t ahead = mrc_psn_diff(psn, qp->rmax);
    bool ooo = ahead != 1;
    if (ahead > 0) {
        qp->rmax = psn;
    }
    if (d == 0 && qp->ooo == 0) {
        /* in order with nothing beyond: the bitmap stays empty */
        qp->rhead = (qp->rhead + 1) & qp->rcap_mask;
        qp->cack = psn;
    } else {
        bit_set(qp, qp->rhead + (uint32_t)d);
        qp->ooo++;
        qp->ctx->rx_held += qp->attr.path_mtu;
        if (d == 0) {
            advance_cack(qp);
        }
    }
    qp->rcvd_bytes += (uint32_t)len;
    qp->st.data_pkts_rcvd++;
    qp->st.data_bytes_rcvd += len;
    /* only the oldest message completing lets messages complete */
    bool done = ++m->nrcvd == m->npkts && k == 0 && complete_messages(qp);
    uint8_t verdict = path_verdict(qp, ev, info->ecn == MRC_ECN_CE);
    if (++qp->since_sack >= qp->ctx->set.sack_every || verdict != MRC_M_NONE || ooo ||
        (pkt->h.flags & 0x80) || done) {
        /* the in-order run this SACK ends */
        queue_sack(qp, mrc_psn_add(psn, 1 - (int32_t)qp->since_sack), psn, ev, verdict, pkt, port);
        qp->since_sack = 0;
    }
    if (done) {
        queue_ack(qp, MRC_AETH_ACK, port);
    }
}

void mrc_rsp_on_probe(mrc_qp *qp, const mrc_pkt *pkt, const mrc_rx_info *info, uint64_t now)
{
    unsigned port = info->port < MRC_MAX_PORTS ? info->port : 0;
    qp->st.probes_rcvd++;
    qp->last_rcvd = now;
    mrc_ctrl *c = ctrl_slot(qp, MRC_OP_SACK, MRC_M_NONE, 1, qp->cack, qp->cack);
    if (c) {
        c->port = (uint8_t)port;
        c->probe_id = pkt->peth.probe_id;
        c->ts = pkt->peth.ts.ts;
        c->has_ts = true;
        c->psn = qp->cack;
        c->ev = (pkt->ip.flowlabel & 0xffffu) << 16 | pkt->udp.sport;
    }
    if (qp->msn_done) {
        queue_ack(qp, MRC_AETH_ACK, port);
    }
}

/* The 64 bits of the tracking bitmap from PSN cack + |off| on (off >= 1): two word reads. */
static uint64_t bitmap_window(const mrc_qp *qp, uint32_t off)
{
    uint32_t rel = off - 1; /* the ring holds cack + 1 at rhead */
    if (rel >= qp->rwin) {
        return 0;
    }
    uint32_t start = (qp->rhead + rel) & qp->rcap_mask, words = (qp->rcap_mask + 1) >> 6;
    uint32_t w = start >> 6, sh = start & 63;
    uint64_t v = qp->bitmap[w] >> sh;
    if (sh) {
        v |= qp->bitmap[(w + 1) & (words - 1)] << (64 - sh);
    }
    uint32_t valid = qp->rwin - rel;
    return valid < 64 ? v & ((1ull << valid) - 1) : v;
}

/* A SACK, the most frequent control packet, by its own encoder. */
/* The reflected timestamp, later by the time the answer waited here
 * (lib/mrc/README.md#congestion-control): the requester's RTT is then the network's alone, its
 * arithmetic unchanged. */
static inline uint16_t reflect_ts(const mrc_qp *qp, const mrc_ctrl *c, uint64_t now)
{
    uint64_t wait = qp->ctx->set.svc_time && now > c->arrived ? now - c->arrived : 0;
    return (uint16_t)(c->ts + (wait >> MRC_TS_SHIFT));
}

static int write_sack(mrc_qp *qp, const mrc_ctrl *c, const mrc_qev *e, uint8_t *dest,
                      size_t destlen, mrc_tx_info *info, uint64_t now)
{
    if (destlen < MRC_SACK_LEN + MRC_ICRC_LEN) {
        return MRC_ERR_NOBUF;
    }
    int32_t dt = mrc_psn_diff(c->psn, qp->cack), dh = mrc_psn_diff(c->hi, qp->cack);
    /* the bitmap starts just after cack, or late enough to show the highest PSN this SACK
     * reports: repeating what earlier SACKs showed makes a lost SACK harmless, and coalescing
     * (ctrl_slot) keeps every arrival it reports within those 64 PSNs */
    uint32_t off = dh > 64 ? (uint32_t)dh - 63 : 1;
    uint8_t tc = (uint8_t)(qp->ctx->set.dscp_control << 2 | MRC_ECN_NOT_ECT);
    mrc_sack_hdr h = {.tc = tc,
                      .m = c->m,
                      .pr = c->pr,
                      .ack_psn_offset = c->pr                         ? (int16_t)c->probe_id
                                        : dt >= -32768 && dt <= 32767 ? (int16_t)dt
                                                                      : 0,
                      .sack_offset = (int16_t)off,
                      .mpr = (uint8_t)qp->attr.mpr.mpr_dest,
                      .ev = e->val,
                      .cack = qp->cack,
                      .entropy = c->ev,
                      .bitmap = bitmap_window(qp, off),
                      .ts = reflect_ts(qp, c, now),
                      .ooo_count = (uint16_t)(qp->ooo < 0x7fff ? qp->ooo : 0x7fff),
                      .rcvd_bytes = ((qp->rcvd_bytes + 255u) >> 8) & 0xffffff};
    mrc_cc_penalty(qp, &h.pen, &h.rc);
    size_t n =
        mrc_finish(qp->ctx, dest, destlen, mrc_wire_encode_sack(dest, qp->tmpl[e->port], &h));
    qp->st.sacks_sent++;
    info->dscp = tc >> 2;
    info->ecn = MRC_ECN_NOT_ECT;
    memcpy(info->dst, qp->attr.ah.dgid[e->port], 16);
    return (int)n;
}

int mrc_rsp_write(mrc_qp *qp, uint8_t *dest, size_t destlen, uint32_t port_mask, mrc_tx_info *info,
                  uint64_t now)
{
    if (!qp->ctrl_count || (qp->state != MRC_QPS_RTR && qp->state != MRC_QPS_RTS)) {
        return 0;
    }
    mrc_ctrl *c = &qp->ctrl[qp->ctrl_head];
    mrc_qev sym;
    const mrc_qev *e = &qp->evs[mrc_ev_reverse(qp, c->port)];
    if (qp->ctx->set.ev_symmetric && c->op != MRC_OP_ACK &&
        (mrc_ev_port_mask(qp) & (1u << c->port))) {
        sym = *e;
        sym.val = c->ev;
        sym.port = c->port;
        e = &sym;
    }
    if (!(port_mask & (1u << e->port))) {
        return MRC_BLOCKED;
    }
    int n;
    if (c->op == MRC_OP_SACK) {
        n = write_sack(qp, c, e, dest, destlen, info, now);
    } else {
        mrc_pkt pkt;
        mrc_pkt_base(&pkt, c->op, e->val, qp->ctx->set.dscp_control, MRC_ECN_NOT_ECT);
        /* only the fields the opcode's headers carry are set: the encoder reads no others */
        if (c->op == MRC_OP_NACK) {
            pkt.has = MRC_HAS_NETH;
            pkt.bth.psn = c->psn;
            pkt.neth.reason = c->m;
            pkt.neth.vendor = 0;
            pkt.neth.spdcid = pkt.neth.dpdcid = 0;
            pkt.neth.cc_flags = 0;
            pkt.neth.entropy = c->ev;
            pkt.neth.nack_psn = c->psn;
            pkt.neth.cc_type = 2;
            pkt.neth.ts = reflect_ts(qp, c, now);
        } else {
            pkt.has = MRC_HAS_AETH;
            pkt.bth.psn = qp->cack;
            pkt.aeth.syndrome = c->m;
            pkt.aeth.msn = c->psn;
            qp->st.acks_sent++;
        }
        n = mrc_pkt_emit(qp->ctx, dest, destlen, qp->tmpl[e->port], &pkt, info);
    }
    if (n <= 0) {
        return n < 0 ? n : MRC_ERR_NOBUF;
    }
    info->ev = e->val;
    info->port = e->port;
    info->control = true;
    info->qpn = qp->qpn;
    qp->ctrl_head = (qp->ctrl_head + 1) % MRC_CTRL_QUEUE;
    qp->ctrl_count--;
    mrc_qp_timer_arm(qp, mrc_ev_rev_due(qp));
    return n;
}
