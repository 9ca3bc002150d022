/* SPDX-License-Identifier: MIT */
/* The requester: segments writes into sprayed packets, keeps each outstanding PSN, and repairs
 * losses from SACKs, NACKs, timeouts and probes. */
#include "mrc_internal.h"

static inline uint32_t slot_of(const mrc_qp *qp, uint32_t psn)
{
    return (qp->una_slot + (uint32_t)mrc_psn_diff(psn, qp->snd_una)) & qp->txp_mask;
}

/* Whether |psn| is outstanding: sent and not yet cumulatively acknowledged. */
static inline bool outstanding(const mrc_qp *qp, uint32_t psn)
{
    int32_t d = mrc_psn_diff(psn, qp->snd_una);
    return d >= 0 && d < mrc_psn_diff(qp->snd_nxt, qp->snd_una);
}

static inline uint32_t psn_of(const mrc_qp *qp, uint32_t slot)
{
    return mrc_psn_add(qp->snd_una, (int32_t)((slot - qp->una_slot) & qp->txp_mask));
}

int mrc_req_setup(mrc_qp *qp, uint64_t now)
{
    mrc_context *ctx = qp->ctx;
    qp->win = qp->attr.mpr.mpr * 128u;
    uint32_t cap = mrc_pow2(qp->win);
    qp->txp_mask = cap - 1;
    qp->txp = mrc_calloc(ctx, cap, sizeof(mrc_txp));
    qp->retx = mrc_calloc(ctx, cap, sizeof(uint32_t));
    qp->held = mrc_calloc(ctx, cap, sizeof(uint32_t));
    qp->held_until = mrc_calloc(ctx, cap, sizeof(uint64_t));
    qp->log_mask = 4 * cap - 1;
    qp->log = mrc_calloc(ctx, 4 * cap, sizeof(*qp->log));
    if (!qp->txp || !qp->retx || !qp->held || !qp->held_until || !qp->log) {
        mrc_req_teardown(qp);
        return MRC_ERR_NOMEM;
    }
    qp->snd_una = qp->snd_nxt = qp->attr.sq_psn;
    qp->una_slot = 0;
    qp->log_head = qp->log_tail = 0;
    qp->tx_seq = qp->max_acked_seq = 0;
    qp->max_acked_sent = 0;
    qp->sack_seen = 0;
    qp->sack_seen_psn = qp->snd_una;
    qp->reo_wnd = qp->ctx->set.reorder_ns;
    qp->acks_since_spurious = 0;
    qp->path_order = qp->ctx->set.ev_in_order;
    qp->sack_trig_sent = 0;
    qp->min_rtt = qp->srtt = 0;
    qp->reo_widened = 0;
    qp->stalled_since = 0;
    qp->retx_head = qp->retx_count = qp->held_head = qp->held_count = 0;
    qp->msn_next = 1;
    qp->rqmsn_next = 1;
    qp->ack_msn = 0;
    qp->wimm_out = 0;
    qp->backoff = 0;
    qp->backoff_hold = 0;
    mrc_req_timing(qp);
    const mrc_settings *set = &ctx->set;
    bool trim = set->trimmable && !(qp->attr.cap & MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED);
    qp->dscp_tx[0] = trim ? set->dscp_data : set->dscp_no_trim;
    qp->dscp_tx[1] = trim ? set->dscp_retx : set->dscp_no_trim;
    qp->dtmpl_len = MRC_BASE_LEN + MRC_METH_LEN + MRC_RETH_LEN + (set->tseth ? MRC_TSETH_LEN : 0);
    memset(qp->dtmpl_tag, 0, sizeof(qp->dtmpl_tag));
    memset(qp->probes, 0, sizeof(qp->probes));
    qp->probes_queued = qp->probes_out = 0;
    qp->tlp_out = false;
    int rv = mrc_cc_attach(qp, trim, now);
    if (rv != 0) {
        mrc_req_teardown(qp);
    }
    return rv;
}

void mrc_req_teardown(mrc_qp *qp)
{
    mrc_context *ctx = qp->ctx;
    mrc_cc_detach(qp);
    mrc_dealloc(ctx, qp->txp);
    mrc_dealloc(ctx, qp->retx);
    mrc_dealloc(ctx, qp->held);
    mrc_dealloc(ctx, qp->held_until);
    mrc_dealloc(ctx, qp->log);
    qp->log = NULL;
    qp->txp = NULL;
    qp->retx = qp->held = NULL;
    qp->held_until = NULL;
}

/* The tail-loss probe's delay (RFC 8985 §7.2): two smoothed RTTs and a reordering window (the
 * receiver answers a flagged packet at once), at most tlp_pct % of the timeout, which is also
 * the delay before the first RTT sample; 0 when probes are off. A fraction of a timeout sized
 * for the worst queues would leave every tail loss waiting tens of microseconds. */
static uint64_t pto(const mrc_qp *qp)
{
    uint64_t cap = qp->rto * qp->ctx->set.tlp_pct / 100;
    uint64_t two = 2 * qp->srtt + qp->reo_wnd;
    return qp->srtt && two < cap ? two : cap;
}

/* The local ACK timeout: the base for the linear retries, then doubling. Kept in the QP, with
 * the delay of a transmission's first timer (the tail-loss probe's or the timeout's), and
 * recomputed whenever the back-off, the timeout or the retry counts change. */
void mrc_req_timing(mrc_qp *qp)
{
    uint32_t lin = qp->attr.retry.linear_cnt;
    uint32_t exp = qp->backoff > lin ? qp->backoff - lin : 0;
    uint32_t cap = qp->ctx->set.rto_backoff_max;
    qp->rto_base = 1024ull << qp->attr.timeout;
    qp->rto = qp->rto_base << (exp < cap ? exp : cap);
    uint64_t tlp = pto(qp);
    qp->arm_delay = tlp && tlp < qp->rto ? tlp : qp->rto;
}

static inline uint64_t rto_now(const mrc_qp *qp)
{
    return qp->rto;
}

static void set_backoff(mrc_qp *qp, uint32_t backoff)
{
    if (qp->backoff != backoff) {
        qp->backoff = backoff;
        mrc_req_timing(qp);
    }
}

static void arm_awaiting_ack(mrc_qp *qp);
static void probe_bad_evs(mrc_qp *qp, uint64_t now, bool now_all);

/* A transmission went out: the QP must wake for its tail-loss probe or its timeout. */
static inline void arm_sent(mrc_qp *qp, uint64_t now)
{
    mrc_qp_timer_arm(qp, now + qp->arm_delay);
}

static bool retries_left(const mrc_qp *qp, const mrc_txp *t)
{
    unsigned limit = (unsigned)qp->attr.retry.linear_cnt + qp->attr.retry.exp_cnt;
    return qp->attr.retry.exp_cnt == 25 || t->charged < limit;
}

/* The send log (see mrc_qp): a transmission joins at the tail. */
static inline bool log_live(const mrc_qp *qp, const struct mrc_txlog *l)
{
    const mrc_txp *t = &qp->txp[l->slot];
    return t->tx_seq == l->seq && !(t->flags & (TXP_ACKED | TXP_QUEUED | TXP_HELD));
}

/* Keeps the head live: called after anything that may have killed it. */
static inline void log_prune(mrc_qp *qp)
{
    while (qp->log_head != qp->log_tail && !log_live(qp, &qp->log[qp->log_head & qp->log_mask])) {
        qp->log_head++;
    }
}

/* The oldest live transmission's slot, or MRC_NONE. */
static inline uint32_t log_first(const mrc_qp *qp)
{
    return qp->log_head != qp->log_tail ? qp->log[qp->log_head & qp->log_mask].slot : MRC_NONE;
}

/* Full of entries behind a long-lived head: keeps the live ones (at most one per slot, so they
 * fit in a quarter), in order. */
static void log_compact(mrc_qp *qp)
{
    uint32_t w = qp->log_head;
    for (uint32_t r = qp->log_head; r != qp->log_tail; r++) {
        struct mrc_txlog l = qp->log[r & qp->log_mask];
        if (log_live(qp, &l)) {
            qp->log[w++ & qp->log_mask] = l;
        }
    }
    qp->log_tail = w;
}

static inline void log_append(mrc_qp *qp, uint32_t s)
{
    if (qp->log_tail - qp->log_head > qp->log_mask) {
        log_compact(qp);
    }
    qp->log[qp->log_tail++ & qp->log_mask] = (struct mrc_txlog){s, qp->txp[s].tx_seq};
}

static void mark_lost(mrc_qp *qp, uint32_t s, mrc_retx_cause cause)
{
    mrc_txp *t = &qp->txp[s];
    if (t->flags & (TXP_ACKED | TXP_QUEUED)) {
        return;
    }
    /* a NACK proves the peer alive and the path delivering (the header got through): it is
     * congestion or a short resource, which a trimmed incast repeats for as long as it lasts,
     * so its resend must not use up the budget meant for a silent peer or path */
    t->flags |= cause == MRC_RETX_NACK ? TXP_QUEUED | TXP_NACKED : TXP_QUEUED;
    if (t->flags & TXP_INFL) {
        t->flags &= (uint8_t)~TXP_INFL;
        mrc_cc_gone(qp, t->len);
        /* only a timeout takes the packet off the window (lib/mrc/README.md#congestion-control):
         * with trimming a full queue sends a NACK, so a loss the SACKs reveal is a path that failed
         * (its EV goes out of use) or a packet overtaken, and cutting the window for each would
         * starve a QP whose paths are failing */
        if (cause == MRC_RETX_TIMEOUT) {
            mrc_cc_on_loss(qp, t->len);
        }
    }
    qp->retx[(qp->retx_head + qp->retx_count) & qp->txp_mask] = psn_of(qp, s);
    qp->retx_count++;
    qp->st.retx_by_cause[cause]++;
    mrc_qp_ready(qp);
    log_prune(qp);
}

static void ack_one(mrc_qp *qp, uint32_t s, uint64_t now)
{
    mrc_txp *t = &qp->txp[s];
    if (t->flags & TXP_ACKED) {
        return;
    }
    t->flags = (uint8_t)((t->flags | TXP_ACKED) & ~TXP_INFL); /* the SACK's byte count has it */
    mrc_ev_delivered(&qp->evs[t->evi]);
    if ((int32_t)(t->tx_seq - qp->max_acked_seq) > 0) {
        qp->max_acked_seq = t->tx_seq;
    }
    if (t->sent > qp->max_acked_sent) {
        qp->max_acked_sent = t->sent;
    }
    /* an acknowledgement sooner than a round trip after the resend was for the previous copy:
     * the resend was spurious and that copy was late by its age beyond a round trip, so the
     * reordering window widens toward that with a quarter to spare (RFC 8985 widens by
     * guesses; the late copy measures it). A lost SACK looks the same, the copy's arrival
     * reported only when the cumulative PSN passes it, so the window grows by at most a
     * round trip per round trip, and to at most half the base timeout: a wider window would
     * outlast the MPR window and leave every loss to the tail-loss probe. A SACK triggered by
     * the PSN itself, reflecting a timestamp from before the resend, is the same sign however
     * far a queue stretched the round trip (which the half minimum RTT cannot tell): the copy
     * that arrived is the earlier one. A resend the path-
     * order rule made proves that an EV's path reordered its own packets (a software switch
     * queues per CPU, adaptive routing moves them): the rule stops for the QP, RACK's window
     * alone judges from then on. */
    uint64_t since = now - t->sent;
    bool before = qp->sack_trig_sent && s == qp->sack_trig_slot &&
                  t->sent > qp->sack_trig_sent + (2u << MRC_TS_SHIFT);
    if (t->attempts && (before || (qp->min_rtt && since < qp->min_rtt / 2))) {
        qp->st.retx_spurious++;
        if (t->flags & TXP_PORDER) {
            qp->path_order = false;
        }
        uint64_t late = t->age + since > qp->min_rtt ? t->age + since - qp->min_rtt : 0;
        uint64_t want = late + late / 4, step = qp->reo_wnd + qp->srtt, cap = qp->rto_base / 2;
        want = want < step ? want : step;
        want = want < cap ? want : cap;
        if (want > qp->reo_wnd && now - qp->reo_widened >= qp->srtt) {
            qp->reo_wnd = want;
            qp->reo_widened = now;
        }
        qp->acks_since_spurious = 0;
    } else if (++qp->acks_since_spurious >= 8192) {
        uint64_t base = qp->ctx->set.reorder_ns;
        qp->reo_wnd = qp->reo_wnd / 2 > base ? qp->reo_wnd / 2 : base;
        qp->acks_since_spurious = 0;
    }
}

/* Cumulative progress: every PSN before |psn| is received. */
static void advance_una(mrc_qp *qp, uint32_t psn, uint64_t now)
{
    int32_t d = mrc_psn_diff(psn, qp->snd_una);
    if (d <= 0) {
        return;
    }
    /* the slots keep TXP_ACKED until reused, which keeps their log entries dead */
    for (int32_t i = 0; i < d; i++) {
        ack_one(qp, (qp->una_slot + (uint32_t)i) & qp->txp_mask, now);
    }
    qp->snd_una = psn;
    qp->una_slot = (qp->una_slot + (uint32_t)d) & qp->txp_mask;
    set_backoff(qp, 0);
    qp->backoff_hold = 0;
    qp->last_progress = now;
    if (qp->cc && psn == qp->snd_nxt) {
        mrc_cc_idle(qp);
    }
}

/* When the oldest unacknowledged transmission counts as lost by time if no acknowledgement
 * decides sooner; UINT64_MAX while too few later transmissions were acknowledged. */
static uint64_t rack_due(const mrc_qp *qp)
{
    uint32_t first = log_first(qp);
    if (first == MRC_NONE) {
        return UINT64_MAX;
    }
    const mrc_txp *t = &qp->txp[first];
    if ((int32_t)(qp->max_acked_seq - t->tx_seq) < (int32_t)qp->ctx->set.reorder_pkts) {
        return UINT64_MAX;
    }
    return t->sent + qp->reo_wnd + qp->srtt;
}

/* RACK (RFC 8985): a transmission is lost once a few later ones were acknowledged and either
 * one sent a reordering window after it was, or a round trip and a reordering window passed
 * since it went out; the second rule, on the timer, finds a loss while the MPR window is
 * full and no acknowledgement comes to reveal it. */
static void rack_detect(mrc_qp *qp, uint64_t now)
{
    uint64_t due;
    log_prune(qp);
    while ((due = rack_due(qp)) != UINT64_MAX) {
        uint32_t first = log_first(qp);
        const mrc_txp *t = &qp->txp[first];
        if (qp->max_acked_sent <= t->sent + qp->reo_wnd && now < due) {
            mrc_qp_timer_arm(qp, due);
            break;
        }
        mrc_ev_lost(qp, t->evi, now);
        mark_lost(qp, first, MRC_RETX_INFERRED);
    }
}

/* A first copy this SACK reports missing (at |off|) is lost if a later first copy on its EV is
 * reported received (|rcvd|, the SACK's bits from |base| within the outstanding PSNs): one path
 * keeps the order of its packets, so it is not late. RACK must wait out the reordering between
 * paths, tens of microseconds when queues differ; this needs none. The later copies are looked
 * for only for a hole not yet found lost: while a hole waits for its resend every SACK reports
 * it again, and noting each received packet's EV on every SACK was paid on every one of them
 * (lib/mrc/README.md#loss-inference). */
static void path_order_check(mrc_qp *qp, int32_t off, uint64_t rcvd, int32_t base, uint64_t now)
{
    uint32_t slot = (qp->una_slot + (uint32_t)off) & qp->txp_mask;
    const mrc_txp *t = &qp->txp[slot];
    if (t->attempts != 0 || (t->flags & (TXP_ACKED | TXP_QUEUED | TXP_HELD))) {
        return;
    }
    /* only the bits above the hole: off - base is below 64 but may be negative (cack + 1) */
    int32_t from = off - base + 1;
    uint64_t later = from <= 0 ? rcvd : from < 64 ? rcvd & (~0ull << from) : 0;
    while (later) {
        unsigned i = (unsigned)__builtin_ctzll(later);
        later &= later - 1;
        const mrc_txp *w = &qp->txp[(qp->una_slot + (uint32_t)(base + (int32_t)i)) & qp->txp_mask];
        if (w->attempts == 0 && w->evi == t->evi) {
            mrc_ev_lost(qp, t->evi, now);
            mark_lost(qp, slot, MRC_RETX_INFERRED);
            qp->txp[slot].flags |= TXP_PORDER;
            return;
        }
    }
}

/* The PSNs this SACK reports missing: cack + 1 and the holes below the bitmap's last set bit
 * (between them, if the bitmap starts later, nothing is reported). */
static void path_order_detect(mrc_qp *qp, uint64_t bitmap, uint64_t rcvd, int32_t base, int32_t out,
                              uint64_t now)
{
    if (!rcvd) {
        return; /* no later copy on any EV */
    }
    if (base > 0) {
        path_order_check(qp, 0, rcvd, base, now);
    }
    unsigned top = 63 - (unsigned)__builtin_clzll(bitmap);
    uint64_t holes = ~bitmap & ((1ull << top) - 1);
    while (holes) {
        unsigned i = (unsigned)__builtin_ctzll(holes);
        holes &= holes - 1;
        int32_t off = base + (int32_t)i;
        if (off >= 0 && off < out) {
            path_order_check(qp, off, rcvd, base, now);
        }
    }
}

static void gather(const mrc_swqe *w, uint32_t off, uint8_t *dst, uint32_t len)
{
    for (unsigned k = 0; k < w->nsge && len; k++) {
        if (off >= w->sge[k].length) {
            off -= w->sge[k].length;
            continue;
        }
        uint32_t n = w->sge[k].length - off < len ? w->sge[k].length - off : len;
        memcpy(dst, (const uint8_t *)(uintptr_t)(w->sge[k].addr + off), n);
        dst += n;
        len -= n;
        off = 0;
    }
}

static uint8_t data_opcode(const mrc_swqe *w, bool first, bool last)
{
    bool imm = w->opcode == MRC_WR_RDMA_WRITE_WITH_IMM;
    if (first && last) {
        return imm ? MRC_OP_WRITE_ONLY_IMM : MRC_OP_WRITE_ONLY;
    }
    if (first) {
        return MRC_OP_WRITE_FIRST;
    }
    return last ? (imm ? MRC_OP_WRITE_LAST_IMM : MRC_OP_WRITE_LAST) : MRC_OP_WRITE_MIDDLE;
}

/* The headers of a data packet. A middle packet's are its message's middle headers on that
 * port with a few fields patched; those are built at the message's first middle packet on
 * the port, which spares the per-packet encoding of what the message fixes. */
/* |last|: the message's last packet. Not read off the A bit in |flags|: the ACK-request bit
 * is also set on middle packets when the window is nearly full. */
static size_t data_headers(mrc_qp *qp, const mrc_swqe *w, const mrc_txp *t, const mrc_qev *e,
                           uint8_t tc, uint8_t flags, bool last, uint32_t psn, uint8_t *dest,
                           uint64_t now)
{
    bool first = t->off == 0;
    uint32_t tag = w->msn | 1u << 24;
    if (!first && !last && qp->dtmpl_tag[e->port] == tag) {
        memcpy(dest, qp->dtmpl[e->port], sizeof(qp->dtmpl[0]));
        mrc_wire_patch_data(dest, tc, e->val, flags, psn, mrc_ts_now(now), w->remote_addr + t->off);
        return qp->dtmpl_len;
    }
    mrc_data_hdr hd = {.tc = tc,
                       .opcode = data_opcode(w, first, last),
                       .flags = flags,
                       .ev = e->val,
                       .psn = psn,
                       .rqmsn = w->opcode == MRC_WR_RDMA_WRITE_WITH_IMM ? w->rqmsn : 0,
                       .msn = (uint16_t)w->msn,
                       .ts = mrc_ts_now(now),
                       .va = w->remote_addr + t->off,
                       .rkey = w->rkey,
                       .dmalen = w->length,
                       .imm = w->imm};
    size_t h = mrc_wire_encode_data(dest, qp->tmpl[e->port], &hd, t->len);
    if (!first && !last) {
        memcpy(qp->dtmpl[e->port], dest, sizeof(qp->dtmpl[0]));
        qp->dtmpl_tag[e->port] = tag;
    }
    return h;
}

/* Where a data packet on |e| goes. */
static inline void data_info(const mrc_qp *qp, const mrc_qev *e, uint8_t dscp, mrc_tx_info *info)
{
    info->ev = e->val;
    info->port = e->port;
    info->dscp = dscp;
    info->ecn = MRC_ECN_ECT0;
    info->control = false;
    info->qpn = qp->qpn;
    memcpy(info->dst, qp->attr.ah.dgid[e->port], 16);
}

/* A transmission of slot |s| went out on |evi|: it joins the tail of the send log. */
static inline void data_sent(mrc_qp *qp, uint32_t s, uint32_t evi, uint64_t now)
{
    mrc_txp *t = &qp->txp[s];
    t->evi = (uint16_t)evi;
    t->sent = now;
    t->tx_seq = ++qp->tx_seq;
    log_append(qp, s);
    qp->evs[evi].pkts_sent++;
    if (qp->cc) {
        t->flags |= TXP_INFL;
        mrc_cc_sent(qp, t->len);
    }
}

/* The ACK-request bit: after this packet less than an MTU of the window is left, so the SACK
 * that opens it must not wait for sack_every packets. */
static inline uint8_t ackreq(mrc_qp *qp)
{
    if (qp->cc && mrc_cc_nearly_full(qp)) {
        qp->st.ackreq_sent++;
        return 0x80;
    }
    return 0;
}

/* Builds and emits the data packet of slot |s| on EV |evi|. */
static inline __attribute__((always_inline)) int send_data(mrc_qp *qp, uint32_t s, uint32_t evi,
                                                           bool rtx, uint8_t *dest, size_t destlen,
                                                           mrc_tx_info *info, uint64_t now)
{
    mrc_txp *t = &qp->txp[s];
    const mrc_swqe *w = &qp->sq[t->wr];
    mrc_qev *e = &qp->evs[evi];
    uint32_t len = t->len;
    if ((size_t)MRC_BASE_LEN + 40 + len + 3 + MRC_ICRC_LEN > destlen) {
        return MRC_ERR_NOBUF;
    }
    uint8_t dscp = qp->dscp_tx[rtx];
    bool last = t->off + len >= w->length;
    uint8_t flags = (uint8_t)(last << 7 | rtx << 5 | qp->ctx->set.tseth << 4 | ackreq(qp));
    size_t h = data_headers(qp, w, t, e, (uint8_t)(dscp << 2 | MRC_ECN_ECT0), flags, last,
                            psn_of(qp, s), dest, now);
    if (w->nsge == 1) {
        memcpy(dest + h, (const uint8_t *)(uintptr_t)(w->sge[0].addr + t->off), len);
    } else {
        gather(w, t->off, dest + h, len);
    }
    size_t n = mrc_finish(qp->ctx, dest, destlen, h + len);
    data_info(qp, e, dscp, info);
    if (rtx) {
        uint64_t age = now - t->sent;
        t->age = age < UINT32_MAX ? (uint32_t)age : UINT32_MAX;
        if (t->attempts < UINT8_MAX) {
            t->attempts++;
        }
        if (!(t->flags & TXP_NACKED)) {
            t->charged++;
        }
        t->flags &= (uint8_t)~TXP_NACKED;
        e->retx_sent++;
        qp->st.retx_pkts++;
        qp->st.retx_bytes += len;
    } else {
        qp->st.data_pkts_sent++;
        qp->st.data_bytes_sent += len;
    }
    data_sent(qp, s, evi, now);
    qp->last_sent_data = now;
    return (int)n;
}

static mrc_probe *probe_alloc(mrc_qp *qp, uint8_t kind, uint32_t evi)
{
    for (unsigned i = 0; i < MRC_MAX_PROBES; i++) {
        mrc_probe *p = &qp->probes[i];
        if (!p->kind) {
            *p = (mrc_probe){.id = ++qp->probe_seq, .kind = kind, .evi = (uint16_t)evi};
            qp->probes_queued++;
            return p;
        }
    }
    return NULL;
}

static int send_probe(mrc_qp *qp, mrc_probe *p, uint32_t port_mask, uint8_t *dest, size_t destlen,
                      mrc_tx_info *info, uint64_t now)
{
    uint32_t evi = p->evi;
    if (p->kind == PROBE_TAIL) {
        evi = mrc_ev_pick(qp, port_mask, MRC_NONE, now);
        if (evi == MRC_NONE) {
            return MRC_BLOCKED;
        }
    } else if (!(mrc_ev_port_mask(qp) & port_mask & (1u << qp->evs[evi].port))) {
        return MRC_BLOCKED;
    }
    mrc_qev *e = &qp->evs[evi];
    mrc_pkt pkt;
    mrc_pkt_base(&pkt, MRC_OP_PROBE, e->val, qp->ctx->set.dscp_data, MRC_ECN_ECT0);
    pkt.bth.ackreq = 1;
    pkt.bth.psn = qp->snd_nxt;
    pkt.has = MRC_HAS_PETH;
    pkt.peth.vendor = 0;
    pkt.peth.probe_id = p->id;
    pkt.peth.spdcid = pkt.peth.dpdcid = 0;
    pkt.peth.ts.ts = mrc_ts_now(now);
    pkt.peth.ts.tsr = 0;
    pkt.peth.ts.fmt = MRC_TS_FORMAT;
    int n = mrc_pkt_emit(qp->ctx, dest, destlen, qp->tmpl[e->port], &pkt, info);
    if (n < 0) {
        return n;
    }
    info->ev = e->val;
    info->port = e->port;
    info->control = false;
    info->qpn = qp->qpn;
    p->sent = now;
    p->tx_seq = qp->tx_seq;
    p->evi = (uint16_t)evi;
    e->probes_sent += p->kind == PROBE_EV;
    qp->st.probes_sent++;
    return n;
}

/* The next packet of the send queue: the common case, inline. */
static inline __attribute__((always_inline)) int write_new(mrc_qp *qp, uint8_t *dest,
                                                           size_t destlen, uint32_t port_mask,
                                                           mrc_tx_info *info, uint64_t now)
{
    if (qp->sq_send == qp->sq_count || mrc_psn_diff(qp->snd_nxt, qp->snd_una) >= (int32_t)qp->win) {
        return 0;
    }
    uint32_t wi = qp->sq_head + qp->sq_send;
    wi = wi >= qp->init.max_send_wr ? wi - qp->init.max_send_wr : wi;
    mrc_swqe *w = &qp->sq[wi];
    bool wimm = w->opcode == MRC_WR_RDMA_WRITE_WITH_IMM;
    if (wimm && w->nsent == 0 && qp->wimm_out >= qp->attr.wimm.max_wimm) {
        return 0; /* the peer stashes at most max_wimm immediates: wait for completions */
    }
    uint32_t mtu = qp->attr.path_mtu, off = w->nsent * mtu;
    uint32_t len = w->length - off < mtu ? w->length - off : mtu;
    if (!mrc_cc_open(qp, len)) {
        return 0; /* ACTIVE until a SACK makes room in the window */
    }
    uint32_t evi = mrc_ev_pick(qp, port_mask, MRC_NONE, now);
    if (evi == MRC_NONE) {
        return mrc_ev_port_mask(qp) & ~port_mask ? MRC_BLOCKED : 0;
    }
    uint32_t psn = qp->snd_nxt;
    uint32_t s = (qp->una_slot + (uint32_t)mrc_psn_diff(psn, qp->snd_una)) & qp->txp_mask;
    mrc_txp *t = &qp->txp[s];
    t->wr = wi;
    t->off = off;
    t->len = (uint16_t)len;
    t->flags = 0;
    t->attempts = t->charged = 0;
    int n = send_data(qp, s, evi, false, dest, destlen, info, now);
    if (n < 0) {
        return n;
    }
    qp->snd_nxt = mrc_psn_add(psn, 1);
    if (w->nsent == 0) {
        w->first_psn = psn;
        qp->wimm_out += wimm;
    }
    if (++w->nsent == w->npkts) {
        qp->sq_send++;
    }
    arm_sent(qp, now);
    return n;
}

/* Retransmissions first, oldest loss first, each on a fresh EV; then the probes; then new
 * data. With no EV to send a retransmission on, the probes that may bring one back still
 * go. */
static int write_repair(mrc_qp *qp, uint8_t *dest, size_t destlen, uint32_t port_mask,
                        mrc_tx_info *info, uint64_t now)
{
    int blocked = 0;
    while (qp->retx_count) {
        uint32_t psn = qp->retx[qp->retx_head];
        uint32_t s = slot_of(qp, psn);
        mrc_txp *t = &qp->txp[s];
        if (!outstanding(qp, psn) || !(t->flags & TXP_QUEUED)) {
            qp->retx_head = (qp->retx_head + 1) & qp->txp_mask;
            qp->retx_count--;
            continue;
        }
        if (t->flags & TXP_ACKED) {
            t->flags &= (uint8_t)~TXP_QUEUED;
            qp->retx_head = (qp->retx_head + 1) & qp->txp_mask;
            qp->retx_count--;
            continue;
        }
        if (!retries_left(qp, t)) {
            mrc_qp_fail(qp, MRC_ERR_RETRY_EXC, now);
            return 0;
        }
        if (!mrc_cc_open(qp, t->len)) {
            break; /* the probes may still go */
        }
        uint32_t evi = mrc_ev_pick(qp, port_mask, t->evi, now);
        if (evi == MRC_NONE) {
            blocked = mrc_ev_port_mask(qp) & ~port_mask ? MRC_BLOCKED : 0;
            if (!qp->stalled_since) {
                /* waiting for an EV counts against the retries as a timeout would, and with
                 * no EV left the bad ones are probed now rather than at their next turn */
                qp->stalled_since = now ? now : 1;
                mrc_qp_timer_arm(qp, qp->stalled_since + rto_now(qp));
                probe_bad_evs(qp, now, true);
            }
            break;
        }
        int n = send_data(qp, s, evi, true, dest, destlen, info, now);
        if (n > 0) {
            qp->stalled_since = 0;
            t->flags &= (uint8_t)~TXP_QUEUED;
            qp->retx_head = (qp->retx_head + 1) & qp->txp_mask;
            qp->retx_count--;
            arm_sent(qp, now);
        }
        return n;
    }
    for (unsigned i = 0; qp->probes_queued && i < MRC_MAX_PROBES; i++) {
        mrc_probe *p = &qp->probes[i];
        if (p->kind && p->sent == 0) {
            int n = send_probe(qp, p, port_mask, dest, destlen, info, now);
            if (n == MRC_BLOCKED) {
                blocked = n;
                continue;
            }
            if (n > 0) {
                qp->probes_queued--;
                qp->probes_out++;
                mrc_qp_timer_arm(qp, now + rto_now(qp));
            }
            return n;
        }
    }
    if (qp->retx_count) {
        return blocked;
    }
    int n = write_new(qp, dest, destlen, port_mask, info, now);
    return n == 0 ? blocked : n;
}

int mrc_req_write(mrc_qp *qp, uint8_t *dest, size_t destlen, uint32_t port_mask, mrc_tx_info *info,
                  uint64_t now)
{
    if (qp->state != MRC_QPS_RTS) {
        return 0;
    }
    if (qp->retx_count || qp->probes_queued) {
        return write_repair(qp, dest, destlen, port_mask, info, now);
    }
    return write_new(qp, dest, destlen, port_mask, info, now);
}

/* A run of middle packets of the current message (full MTU, single buffer, first sent): the
 * per-packet work of write_new() with what a run shares done once, as a NIC segments a
 * message. Returns how many went out, 0 when the run does not apply. */
static int write_run(mrc_qp *qp, mrc_tx_pkt *pkts, unsigned n, uint32_t port_mask, uint64_t now)
{
    uint32_t wi = qp->sq_head + qp->sq_send;
    wi = wi >= qp->init.max_send_wr ? wi - qp->init.max_send_wr : wi;
    mrc_swqe *w = &qp->sq[wi];
    int32_t room = (int32_t)qp->win - mrc_psn_diff(qp->snd_nxt, qp->snd_una);
    if (qp->sq_send == qp->sq_count || w->nsent == 0 || w->nsge != 1 || room <= 0 ||
        w->nsent + 1 >= w->npkts) {
        return 0;
    }
    uint32_t k = w->npkts - 1 - w->nsent, mtu = qp->attr.path_mtu;
    k = k < n ? k : n;
    k = k < (uint32_t)room ? k : (uint32_t)room;
    uint8_t dscp = qp->dscp_tx[0], tc = (uint8_t)(dscp << 2 | MRC_ECN_ECT0);
    uint8_t flags0 = (uint8_t)(qp->ctx->set.tseth << 4);
    uint16_t ts = mrc_ts_now(now);
    uint32_t tag = w->msn | 1u << 24, psn = qp->snd_nxt, off = w->nsent * mtu;
    uint32_t s = (qp->una_slot + (uint32_t)mrc_psn_diff(psn, qp->snd_una)) & qp->txp_mask;
    const uint8_t *src = (const uint8_t *)(uintptr_t)w->sge[0].addr;
    size_t len = qp->dtmpl_len + mtu + MRC_ICRC_LEN;
    uint32_t i = 0;
    for (; i < k && pkts[i].room >= len && mrc_cc_open(qp, mtu); i++) {
        uint32_t evi = mrc_ev_pick(qp, port_mask, MRC_NONE, now);
        if (evi == MRC_NONE) {
            break;
        }
        uint8_t flags = flags0 | ackreq(qp);
        mrc_qev *e = &qp->evs[evi];
        mrc_txp *t = &qp->txp[s];
        t->wr = wi;
        t->off = off;
        t->len = (uint16_t)mtu;
        t->flags = 0;
        t->attempts = t->charged = 0;
        uint8_t *dest = pkts[i].data;
        if (qp->dtmpl_tag[e->port] == tag) {
            memcpy(dest, qp->dtmpl[e->port], sizeof(qp->dtmpl[0]));
            mrc_wire_patch_data(dest, tc, e->val, flags, psn, ts, w->remote_addr + off);
        } else {
            data_headers(qp, w, t, e, tc, flags, false, psn, dest, now);
        }
        memcpy(dest + qp->dtmpl_len, src + off, mtu);
        pkts[i].len = mrc_finish(qp->ctx, dest, pkts[i].room, qp->dtmpl_len + mtu);
        data_info(qp, e, dscp, &pkts[i].info);
        data_sent(qp, s, evi, now);
        psn = mrc_psn_add(psn, 1);
        s = (s + 1) & qp->txp_mask;
        off += mtu;
    }
    if (i) {
        qp->snd_nxt = psn;
        w->nsent += i;
        qp->st.data_pkts_sent += i;
        qp->st.data_bytes_sent += (uint64_t)i * mtu;
        qp->last_sent_data = now;
        arm_sent(qp, now);
    }
    return (int)i;
}

int mrc_req_write_burst(mrc_qp *qp, mrc_tx_pkt *pkts, unsigned n, uint32_t port_mask, uint64_t now)
{
    if (qp->state == MRC_QPS_RTS && !qp->retx_count && !qp->probes_queued && n > 1) {
        int k = write_run(qp, pkts, n, port_mask, now);
        if (k > 0) {
            return k;
        }
    }
    int rv = mrc_req_write(qp, pkts[0].data, pkts[0].room, port_mask, &pkts[0].info, now);
    if (rv > 0) {
        pkts[0].len = (size_t)rv;
        return 1;
    }
    return rv;
}

static void rtt_sample(mrc_qp *qp, uint64_t rtt)
{
    if (!qp->min_rtt || rtt < qp->min_rtt) {
        qp->min_rtt = rtt;
    }
    qp->srtt = qp->srtt ? (7 * qp->srtt + rtt) / 8 : rtt;
    uint64_t tlp = pto(qp);
    qp->arm_delay = tlp && tlp < qp->rto ? tlp : qp->rto;
}

/* An acknowledgement names its packet's EV by value: feedback and an RTT sample for it. */
static void ev_feedback(mrc_qp *qp, uint32_t ev, uint8_t m, bool has_ts, uint16_t ts, uint64_t now)
{
    uint32_t evi = mrc_ev_lookup(qp, ev);
    if (evi == MRC_NONE) {
        return;
    }
    mrc_qev *e = &qp->evs[evi];
    if (has_ts && qp->ctx->set.tseth) {
        e->last_rtt = mrc_ts_rtt(ts, now);
        if (e->last_rtt < e->min_rtt) {
            e->min_rtt = e->last_rtt;
        }
    }
    if (m == MRC_M_SKIP_ONCE) {
        e->ecn++;
        qp->st.ecn_echoes++;
        if (e->state == MRC_EV_GOOD) {
            mrc_ev_set(qp, evi, MRC_EV_SKIP, MRC_EVR_ECN, now);
        }
    } else if (m == MRC_M_ALWAYS_SKIP) {
        qp->st.always_skips++;
        mrc_ev_bad(qp, evi, MRC_EVR_ALWAYS_SKIP, now);
    }
}

static void on_probe_answer(mrc_qp *qp, uint16_t id, uint8_t m, uint64_t now)
{
    for (unsigned i = 0; i < MRC_MAX_PROBES; i++) {
        mrc_probe *p = &qp->probes[i];
        if (!p->kind || p->id != id || p->sent == 0) {
            continue;
        }
        qp->st.probes_answered++;
        qp->probes_out--;
        if (p->kind == PROBE_TAIL) {
            /* the answer is the responder's whole state, and as good as an acknowledgement of
             * a transmission sent when the probe was (RACK-TLP): what was sent more than the
             * reordering window before the probe and is still missing is lost */
            uint32_t first;
            log_prune(qp);
            while ((first = log_first(qp)) != MRC_NONE &&
                   (int32_t)(qp->txp[first].tx_seq - p->tx_seq) <= 0 &&
                   qp->txp[first].sent + qp->reo_wnd < p->sent) {
                mrc_ev_lost(qp, qp->txp[first].evi, now);
                mark_lost(qp, first, MRC_RETX_PROBE);
            }
            if (p->sent > qp->max_acked_sent) {
                qp->max_acked_sent = p->sent;
            }
            qp->tlp_out = false;
        } else {
            mrc_ev_probe_result(qp, p->evi, true, m, now);
            mrc_qp_ready(qp);
        }
        p->kind = 0;
        return;
    }
}

/* The bits of a SACK bitmap starting |base| PSNs past snd_una that name outstanding PSNs
 * (0 to |out| - 1). */
static inline uint64_t out_bits(int32_t base, int32_t out)
{
    if (base >= out || base <= -64) {
        return 0;
    }
    uint64_t m = base < 0 ? ~0ull << -base : ~0ull;
    int32_t top = out - base; /* bits from |top| on are beyond snd_nxt */
    return top < 64 ? m & ((1ull << top) - 1) : m;
}

/* The PSNs a SACK's bitmap reports received, of the |out| outstanding after its cumulative
 * PSN, and what path order makes of the holes between them. */
static void sack_bitmap(mrc_qp *qp, const mrc_sack_hdr *s, int32_t out, uint64_t now)
{
    int32_t base = mrc_psn_diff(mrc_psn_add(s->cack, s->sack_offset), qp->snd_una);
    uint64_t rcvd = s->bitmap & out_bits(base, out);
    if (rcvd) {
        /* while a hole waits, each SACK repeats the bits of the last, already acknowledged (a
         * slot keeps TXP_ACKED until snd_una passes it, and out_bits drops those): only the
         * new ones are walked */
        uint32_t from = mrc_psn_add(qp->snd_una, base);
        int32_t shift = mrc_psn_diff(from, qp->sack_seen_psn);
        uint64_t seen = shift >= 64 || shift <= -64 ? 0
                        : shift >= 0                ? qp->sack_seen >> shift
                                                    : qp->sack_seen << -shift;
        qp->sack_seen = rcvd;
        qp->sack_seen_psn = from;
        for (uint64_t bits = rcvd & ~seen; bits; bits &= bits - 1) {
            uint32_t slot =
                (qp->una_slot + (uint32_t)(base + (int32_t)__builtin_ctzll(bits))) & qp->txp_mask;
            ack_one(qp, slot, now);
        }
    }
    if (qp->path_order) {
        path_order_detect(qp, s->bitmap, rcvd, base, out, now);
    }
}

int mrc_req_on_sack(mrc_qp *qp, const mrc_sack_hdr *s, uint64_t now)
{
    int32_t out = mrc_psn_diff(qp->snd_nxt, qp->snd_una);
    int32_t d = mrc_psn_diff(s->cack, mrc_psn_add(qp->snd_una, -1));
    if (d > out) {
        qp->ctx->st.bad_state++; /* acknowledges what was never sent */
        return MRC_ERR_PROTO;
    }
    qp->st.sacks_rcvd++;
    if ((qp->attr.cap & MRC_QP_CAP_DYNAMIC_MPR) && s->mpr) {
        uint32_t w = s->mpr * 128u, cap = qp->attr.mpr.mpr * 128u;
        qp->win = w < cap ? w : cap;
    }
    /* an RTT sample from the trigger, if it went out once (before its slot may be freed) */
    uint32_t trig = mrc_psn_add(s->cack, s->ack_psn_offset);
    uint64_t rtt = 0;
    if (!s->pr && outstanding(qp, trig)) {
        const mrc_txp *t = &qp->txp[slot_of(qp, trig)];
        if (t->attempts == 0 && !(t->flags & TXP_ACKED) && t->sent <= now) {
            rtt = now - t->sent;
            rtt_sample(qp, rtt);
        }
    }
    /* when the trigger's copy went out, by the timestamp the SACK reflects (RFC 3522, Eifel):
     * it tells which copy of the trigger arrived, and of no other PSN the SACK reports (on many
     * paths a copy sent before a resend may well arrive after it) */
    uint64_t age = mrc_ts_rtt(s->ts, now);
    qp->sack_trig_sent = 0;
    if (!s->pr && qp->ctx->set.tseth && outstanding(qp, trig) && age < MRC_TS_WRAP_NS / 2 &&
        age < now) {
        qp->sack_trig_sent = now - age;
        qp->sack_trig_slot = slot_of(qp, trig);
    }
    if (!s->pr && !rtt && qp->ctx->set.tseth) {
        /* a resend's SACK still times the very copy that triggered it, by the timestamp it
         * reflects: a QP whose every packet was trimmed at least once would otherwise have no
         * round trip at all, and RACK with none takes everything 2 us old for lost */
        uint64_t r = mrc_ts_rtt(s->ts, now);
        if (r >= (1u << MRC_TS_SHIFT) && r < MRC_TS_WRAP_NS / 2) {
            rtt_sample(qp, r);
        }
    }
    if (qp->cc) {
        /* before the cumulative ACK moves: with nothing left outstanding that resets the
         * QP's share of the window, which must by then have lost these bytes */
        mrc_cc_on_sack(qp, s, rtt, now);
    }
    advance_una(qp, mrc_psn_add(s->cack, 1), now);
    out = mrc_psn_diff(qp->snd_nxt, qp->snd_una);
    if (s->bitmap) {
        sack_bitmap(qp, s, out, now);
    }
    qp->sack_trig_sent = 0; /* the rule is this SACK's alone */
    if (s->pr) {
        on_probe_answer(qp, (uint16_t)s->ack_psn_offset, s->m, now);
    } else {
        ev_feedback(qp, s->entropy, s->m, true, s->ts, now);
    }
    rack_detect(qp, now);
    mrc_qp_ready(qp);
    arm_awaiting_ack(qp);
    return 0;
}

int mrc_req_on_nack(mrc_qp *qp, const mrc_pkt *pkt, uint64_t now)
{
    const mrc_neth *n = &pkt->neth;
    int idx = mrc_nack_index(n->reason);
    /* a NACK for a PSN never sent answers nothing of ours */
    if (idx < 0 || mrc_psn_diff(n->nack_psn, qp->snd_nxt) >= 0 ||
        mrc_psn_diff(n->nack_psn, qp->snd_una) < -(int32_t)qp->win) {
        qp->ctx->st.bad_state++;
        return MRC_ERR_PROTO;
    }
    qp->st.nacks_rcvd[idx]++;
    if (!outstanding(qp, n->nack_psn)) {
        return 0; /* already acknowledged: a late NACK */
    }
    if (n->reason == MRC_NACK_UNEXP_EVENT) {
        mrc_qp_fail(qp, MRC_ERR_REM_OP, now);
        return 0;
    }
    uint32_t s = slot_of(qp, n->nack_psn);
    mrc_txp *t = &qp->txp[s];
    if (t->flags & (TXP_ACKED | TXP_QUEUED | TXP_HELD)) {
        return 0;
    }
    uint32_t evi = mrc_ev_lookup(qp, n->entropy);
    if (t->attempts && evi != t->evi) {
        /* for an earlier copy, declared lost and resent on another EV: the resend is still
         * out, and resending it again or cutting the window for it would be spurious */
        return 0;
    }
    if (qp->cc && (t->flags & TXP_INFL) &&
        (n->reason == MRC_NACK_TRIMMED || n->reason == MRC_NACK_TRIMMED_LASTHOP)) {
        mrc_cc_on_trim(qp, t->len, n->reason == MRC_NACK_TRIMMED_LASTHOP, now);
    }
    switch (n->reason) {
    case MRC_NACK_TRIMMED:
        /* trimmed mid-fabric: that path is congested, skip it for this rotation */
        if (evi != MRC_NONE) {
            qp->evs[evi].trims++;
            if (qp->evs[evi].state == MRC_EV_GOOD) {
                mrc_ev_set(qp, evi, MRC_EV_SKIP, MRC_EVR_TRIM, now);
            }
        }
        mark_lost(qp, s, MRC_RETX_NACK);
        break;
    case MRC_NACK_TRIMMED_LASTHOP:
        mark_lost(qp, s, MRC_RETX_NACK);
        break;
    default:
        /* the responder is short of a resource: resend after a pause, not at once */
        if (t->flags & TXP_INFL) {
            t->flags &= (uint8_t)~TXP_INFL;
            mrc_cc_gone(qp, t->len);
        }
        t->flags |= TXP_HELD;
        qp->held[(qp->held_head + qp->held_count) & qp->txp_mask] = n->nack_psn;
        qp->held_until[(qp->held_head + qp->held_count) & qp->txp_mask] =
            now + qp->ctx->set.nack_retry_ns;
        qp->held_count++;
        log_prune(qp);
        qp->st.retx_by_cause[MRC_RETX_NACK]++;
        mrc_qp_timer_arm(qp, now + qp->ctx->set.nack_retry_ns);
        break;
    }
    return 0;
}

int mrc_req_on_ack(mrc_qp *qp, const mrc_pkt *pkt, uint64_t now)
{
    const mrc_aeth *a = &pkt->aeth;
    /* an ACK can cover at most the last message whose every packet went out */
    uint32_t top = qp->sq_send ? qp->sq[(qp->sq_head + qp->sq_send - 1) % qp->init.max_send_wr].msn
                               : qp->ack_msn;
    if ((a->syndrome & 0xe0) == 0 && mrc_psn_diff(a->msn, top) > 0) {
        qp->ctx->st.bad_state++;
        return MRC_ERR_PROTO;
    }
    qp->st.acks_rcvd++;
    if ((a->syndrome & 0xe0) == 0x60) {
        int err = a->syndrome == MRC_AETH_NAK_INV_REQ      ? MRC_ERR_REM_INV_REQ
                  : a->syndrome == MRC_AETH_NAK_REM_ACCESS ? MRC_ERR_REM_ACCESS
                                                           : MRC_ERR_REM_OP;
        mrc_qp_fail(qp, err, now);
        return 0;
    }
    if ((a->syndrome & 0xe0) != 0) {
        qp->ctx->st.bad_state++;
        return MRC_ERR_PROTO;
    }
    /* completions follow the Transport ACK's MSN, in message order */
    while (qp->sq_count && qp->sq_send > 0) {
        mrc_swqe *w = &qp->sq[qp->sq_head];
        if (mrc_psn_diff(a->msn, w->msn) < 0) {
            break;
        }
        uint32_t end = mrc_psn_add(w->first_psn, (int32_t)w->npkts);
        if (mrc_psn_diff(end, qp->snd_una) > 0 && mrc_psn_diff(end, qp->snd_nxt) <= 0) {
            advance_una(qp, end, now);
        }
        if (w->signaled) {
            mrc_wc wc = {.wr_id = w->wr_id,
                         .status = MRC_WC_SUCCESS,
                         .opcode = MRC_WC_RDMA_WRITE,
                         .qp_num = qp->qpn,
                         .byte_len = w->length};
            mrc_cq_push(qp->init.send_cq, &wc);
        }
        mrc_wqe_release(w);
        if (w->opcode == MRC_WR_RDMA_WRITE_WITH_IMM) {
            qp->wimm_out--;
        }
        qp->sq_head = (qp->sq_head + 1) % qp->init.max_send_wr;
        qp->sq_count--;
        qp->sq_send--;
        qp->st.msgs_sent_done++;
        qp->last_progress = now;
    }
    if (mrc_psn_diff(a->msn, qp->ack_msn) > 0) {
        qp->ack_msn = a->msn;
    }
    log_prune(qp);
    mrc_qp_ready(qp);
    arm_awaiting_ack(qp);
    return 0;
}

/* All sent and acknowledged, but the Transport ACK of the last messages has not come. */
static bool awaiting_ack(const mrc_qp *qp)
{
    return qp->sq_count && qp->sq_send == qp->sq_count && log_first(qp) == MRC_NONE &&
           qp->retx_count == 0 && qp->held_count == 0;
}

static uint64_t tlp_due(const mrc_qp *qp)
{
    if (qp->tlp_out || qp->ctx->set.tlp_pct == 0) {
        return UINT64_MAX;
    }
    uint64_t delay = pto(qp);
    /* a tail: nothing new can go out, because there is none, or the MPR window or the
     * congestion window is full (of packets lost on a path just gone: no later packet can go
     * out to reveal them) */
    bool stalled = qp->sq_send == qp->sq_count ||
                   mrc_psn_diff(qp->snd_nxt, qp->snd_una) >= (int32_t)qp->win ||
                   !mrc_cc_open(qp, qp->attr.path_mtu);
    if (log_first(qp) != MRC_NONE && stalled) {
        return qp->last_sent_data + delay;
    }
    return awaiting_ack(qp) ? qp->last_progress + delay : UINT64_MAX;
}

/* Everything is acknowledged but the last Transport ACK: wake for the tail-loss probe. */
static void arm_awaiting_ack(mrc_qp *qp)
{
    if (awaiting_ack(qp)) {
        mrc_qp_timer_arm(qp, tlp_due(qp));
    }
}

uint64_t mrc_req_expiry(const mrc_qp *qp)
{
    uint64_t e = UINT64_MAX;
    if (qp->state != MRC_QPS_RTS || !qp->txp) {
        return e;
    }
    uint64_t rto = rto_now(qp);
    uint32_t first = log_first(qp);
    if (first != MRC_NONE) {
        e = qp->txp[first].sent + rto;
    }
    if (qp->held_count && qp->held_until[qp->held_head] < e) {
        e = qp->held_until[qp->held_head];
    }
    for (unsigned i = 0; qp->probes_out && i < MRC_MAX_PROBES; i++) {
        const mrc_probe *p = &qp->probes[i];
        if (p->kind && p->sent && p->sent + rto < e) {
            e = p->sent + rto;
        }
    }
    if (qp->next_ev_probe < e) {
        e = qp->next_ev_probe;
    }
    if (qp->stalled_since && qp->retx_count && qp->stalled_since + rto < e) {
        e = qp->stalled_since + rto;
    }
    if (qp->skip_end < e) {
        e = qp->skip_end;
    }
    uint64_t rack = rack_due(qp), tlp = tlp_due(qp);
    e = rack < e ? rack : e;
    return tlp < e ? tlp : e;
}

/* Recovery probes for the ASSUMED_BAD EVs whose turn has come, or for all of them (|now_all|). */
static void probe_bad_evs(mrc_qp *qp, uint64_t now, bool now_all)
{
    uint64_t next = UINT64_MAX;
    uint32_t up = mrc_ev_port_mask(qp);
    for (uint32_t i = 0; i < qp->nevs; i++) {
        mrc_qev *e = &qp->evs[i];
        if (e->state != MRC_EV_ASSUMED_BAD || e->probing) {
            continue;
        }
        if ((e->next_probe <= now || now_all) && (up & (1u << e->port)) &&
            probe_alloc(qp, PROBE_EV, i)) {
            e->probing = 1;
            mrc_qp_ready(qp);
            continue;
        }
        if (e->next_probe < next) {
            next = e->next_probe > now ? e->next_probe : now + qp->ctx->set.probe_interval_ns;
        }
    }
    qp->next_ev_probe = next;
}

void mrc_req_on_timer(mrc_qp *qp, uint64_t now)
{
    if (qp->state == MRC_QPS_RTR || qp->state == MRC_QPS_RTS) {
        mrc_ev_rev_refresh(qp, now);
    }
    if (qp->state != MRC_QPS_RTS) {
        mrc_qp_timer_update(qp);
        return;
    }
    uint64_t rto = rto_now(qp);
    bool fired = false;
    uint32_t s;
    log_prune(qp);
    while ((s = log_first(qp)) != MRC_NONE && qp->txp[s].sent + rto <= now) {
        mrc_qev *e = &qp->evs[qp->txp[s].evi];
        e->timeouts++;
        qp->st.timeouts++;
        /* not trimmed, not acknowledged: the strongest evidence that the path failed */
        mrc_ev_bad(qp, qp->txp[s].evi, MRC_EVR_TIMEOUT, now);
        mark_lost(qp, s, MRC_RETX_TIMEOUT);
        fired = true;
    }
    if (qp->stalled_since && !qp->retx_count) {
        qp->stalled_since = 0; /* what waited for an EV was acknowledged meanwhile */
    }
    if (qp->stalled_since && qp->stalled_since + rto <= now) {
        /* a retransmission that found no EV for a whole timeout */
        mrc_txp *t = &qp->txp[slot_of(qp, qp->retx[qp->retx_head])];
        t->charged++;
        qp->st.timeouts++;
        qp->stalled_since = now;
        fired = true;
        if (!retries_left(qp, t)) {
            mrc_qp_fail(qp, MRC_ERR_RETRY_EXC, now);
            return;
        }
    }
    /* one back-off step per timeout episode: the packets that time out together, within one
     * timeout of the first, are one failure of the path, not one each */
    if (fired && qp->backoff < 64 && now >= qp->backoff_hold) {
        set_backoff(qp, qp->backoff + 1);
        qp->backoff_hold = now + rto_now(qp);
    }
    if (qp->skip_end <= now) {
        mrc_ev_skip_expire(qp, now);
    }
    rack_detect(qp, now);
    while (qp->held_count && qp->held_until[qp->held_head] <= now) {
        uint32_t psn = qp->held[qp->held_head];
        qp->held_head = (qp->held_head + 1) & qp->txp_mask;
        qp->held_count--;
        if (outstanding(qp, psn)) {
            uint32_t h = slot_of(qp, psn);
            if (qp->txp[h].flags & TXP_HELD) {
                qp->txp[h].flags &= (uint8_t)~TXP_HELD;
                qp->st.retx_by_cause[MRC_RETX_NACK]--; /* counted when held */
                mark_lost(qp, h, MRC_RETX_NACK);
            }
        }
    }
    for (unsigned i = 0; qp->probes_out && i < MRC_MAX_PROBES; i++) {
        mrc_probe *p = &qp->probes[i];
        if (p->kind && p->sent && p->sent + rto <= now) {
            qp->probes_out--;
            if (p->kind == PROBE_EV) {
                mrc_ev_probe_result(qp, p->evi, false, 0, now);
            } else {
                qp->tlp_out = false;
            }
            p->kind = 0;
        }
    }
    if (qp->next_ev_probe <= now) {
        probe_bad_evs(qp, now, false);
    }
    if (tlp_due(qp) <= now && probe_alloc(qp, PROBE_TAIL, 0)) {
        qp->tlp_out = true;
        mrc_qp_ready(qp);
    }
    mrc_qp_timer_update(qp);
}

void mrc_req_port_lost(mrc_qp *qp, uint32_t usable, uint64_t now)
{
    (void)now;
    if (qp->state != MRC_QPS_RTS || !qp->txp) {
        return;
    }
    /* what is in flight on a dead port will not arrive: resend it on the live ones now */
    for (uint32_t r = qp->log_head; r != qp->log_tail; r++) {
        const struct mrc_txlog *l = &qp->log[r & qp->log_mask];
        if (log_live(qp, l) && !(usable & (1u << qp->evs[qp->txp[l->slot].evi].port))) {
            mark_lost(qp, l->slot, MRC_RETX_PORT);
        }
    }
    log_prune(qp);
}
