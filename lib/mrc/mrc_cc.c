/* SPDX-License-Identifier: MIT */
/* QP congestion controllers (QPCCs, lib/mrc/README.md#congestion-control): one per peer and CC
 * profile, shared by the QPs to that peer, each with its NSCC window. The requester asks it before
 * each data packet and tells it what each SACK and NACK reports; the responder computes the window
 * penalty that tells senders about its own pressure (host backpressure, same section). */
#include "mrc_internal.h"

struct mrc_qpcc {
    mrc_qpcc *next; /* the context's QPCCs */
    uint64_t profile;
    uint32_t mtu;
    unsigned nports;
    uint8_t dgid[MRC_MAX_PORTS][16];
    bool trimming;
    unsigned refs;
    mrc_qp *qps; /* through mrc_qp.cc_next */
    mrc_nscc n;
};

static const mrc_cc_profile *profile_find(const mrc_context *ctx, uint64_t id)
{
    for (unsigned i = 0; i < MRC_CC_PROFILES; i++) {
        if (ctx->ccp[i].used && ctx->ccp[i].id == id) {
            return &ctx->ccp[i];
        }
    }
    return NULL;
}

int mrc_cc_profile_create(mrc_context *ctx, uint64_t id, const mrc_cc_profile_attr *a)
{
    if (!a || !a->algorithm) {
        return MRC_ERR_INVAL;
    }
    bool nscc = strcmp(a->algorithm, MRC_CC_NSCC) == 0;
    if (!nscc && strcmp(a->algorithm, "none") != 0) {
        return MRC_ERR_INVAL;
    }
    if (nscc && mrc_nscc_check(&a->nscc) != 0) {
        return MRC_ERR_INVAL;
    }
    if (profile_find(ctx, id)) {
        return MRC_ERR_INVAL; /* the id is taken */
    }
    for (unsigned i = 0; i < MRC_CC_PROFILES; i++) {
        mrc_cc_profile *p = &ctx->ccp[i];
        if (!p->used) {
            *p = (mrc_cc_profile){.id = id, .used = true, .nscc = nscc, .cfg = a->nscc};
            return 0;
        }
    }
    return MRC_ERR_FULL;
}

bool mrc_cc_profile_known(const mrc_context *ctx, uint64_t id)
{
    return profile_find(ctx, id) != NULL;
}

static bool same_peer(const mrc_qpcc *c, const mrc_qp *qp, bool trimming)
{
    if (c->profile != qp->attr.profile.cc_profile_id || c->mtu != qp->attr.path_mtu ||
        c->nports != qp->attr.ah.nports || c->trimming != trimming) {
        return false;
    }
    return memcmp(c->dgid, qp->attr.ah.dgid, sizeof(c->dgid[0]) * c->nports) == 0;
}

int mrc_cc_attach(mrc_qp *qp, bool trimming, uint64_t now)
{
    mrc_context *ctx = qp->ctx;
    const mrc_cc_profile *p = profile_find(ctx, qp->attr.profile.cc_profile_id);
    qp->cc = NULL;
    qp->cc_infl = 0;
    qp->cc_rcvd = 0;
    if (!p || !p->nscc) {
        return 0;
    }
    mrc_qpcc *c = ctx->qpccs;
    while (c && !same_peer(c, qp, trimming)) {
        c = c->next;
    }
    if (!c) {
        c = mrc_calloc(ctx, 1, sizeof(*c));
        if (!c) {
            return MRC_ERR_NOMEM;
        }
        c->profile = p->id;
        c->mtu = qp->attr.path_mtu;
        c->nports = qp->attr.ah.nports;
        memcpy(c->dgid, qp->attr.ah.dgid, sizeof(c->dgid[0]) * c->nports);
        c->trimming = trimming;
        if (mrc_nscc_init(&c->n, &p->cfg, c->mtu, trimming, now) != 0) {
            mrc_dealloc(ctx, c);
            return MRC_ERR_INVAL;
        }
        c->next = ctx->qpccs;
        ctx->qpccs = c;
    }
    c->refs++;
    qp->cc_next = c->qps;
    c->qps = qp;
    qp->cc = c;
    return 0;
}

void mrc_cc_detach(mrc_qp *qp)
{
    mrc_qpcc *c = qp->cc;
    if (!c) {
        return;
    }
    c->n.inflight -= qp->cc_infl;
    for (mrc_qp **pp = &c->qps; *pp; pp = &(*pp)->cc_next) {
        if (*pp == qp) {
            *pp = qp->cc_next;
            break;
        }
    }
    qp->cc = NULL;
    qp->cc_infl = 0;
    if (--c->refs) {
        mrc_cc_wake(c); /* what this QP had in flight is no longer in the window */
        return;
    }
    mrc_context *ctx = qp->ctx;
    for (mrc_qpcc **pp = &ctx->qpccs; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    mrc_dealloc(ctx, c);
}

void mrc_cc_free_all(mrc_context *ctx)
{
    while (ctx->qpccs) {
        mrc_qpcc *c = ctx->qpccs;
        ctx->qpccs = c->next;
        mrc_dealloc(ctx, c);
    }
}

bool mrc_cc_open(const mrc_qp *qp, uint32_t len)
{
    return !qp->cc || mrc_nscc_can_send(&qp->cc->n, len);
}

bool mrc_cc_nearly_full(const mrc_qp *qp)
{
    const mrc_nscc *n = &qp->cc->n;
    return (double)n->inflight + 2 * n->mtu > n->cwnd;
}

void mrc_cc_sent(mrc_qp *qp, uint32_t len)
{
    qp->cc->n.inflight += len;
    qp->cc_infl += len;
}

void mrc_cc_gone(mrc_qp *qp, uint32_t len)
{
    qp->cc->n.inflight -= len;
    qp->cc_infl -= len;
}

/* Every QP of the controller with something to send gets its turn again: the window opened,
 * or one of them went. */
void mrc_cc_wake(mrc_qpcc *c)
{
    for (mrc_qp *q = c->qps; q; q = q->cc_next) {
        if (q->retx_count || q->sq_send < q->sq_count) {
            mrc_qp_ready(q);
        }
    }
}

void mrc_cc_idle(mrc_qp *qp)
{
    /* nothing outstanding: whatever this QP still counts in flight is rounding or a loss
     * that was never declared, and must not close the window for good */
    qp->cc->n.inflight -= qp->cc_infl;
    qp->cc_infl = 0;
}

void mrc_cc_on_sack(mrc_qp *qp, const mrc_sack_hdr *s, uint64_t rtt_local, uint64_t now)
{
    mrc_qpcc *c = qp->cc;
    /* the responder's running total, 256-byte units modulo 2^24: a SACK that overtook a newer
     * one shows less and adds nothing */
    uint32_t units = (s->rcvd_bytes - qp->cc_rcvd) & 0xffffff;
    if (units & 0x800000) {
        units = 0;
    } else {
        qp->cc_rcvd = s->rcvd_bytes;
    }
    mrc_nscc_ack a = {
        .newly = (uint64_t)units << 8, .ecn = s->m != MRC_M_NONE, .pen = s->pen, .rc = s->rc};
    if (qp->ctx->set.tseth) {
        /* the timestamp of the very copy that triggered it, whichever copy that was; beyond
         * half the 16-bit wrap it may be a whole wrap off, and below one 128 ns tick the wire
         * cannot tell it from none (as a base RTT it would shrink the window to an MTU) */
        uint64_t rtt = mrc_ts_rtt(s->ts, now);
        a.rtt = rtt >= (1u << MRC_TS_SHIFT) && rtt < MRC_TS_WRAP_NS / 2 ? rtt : 0;
    } else {
        a.rtt = rtt_local;
    }
    /* NSCC counts every received byte, and inflight loses them all: a copy declared lost
     * that arrives after all takes its bytes off twice, and the share goes negative until
     * its resend is counted (capping it at zero would leave the resend counted for good).
     * Only a QP with nothing outstanding keeps its share: a Transport ACK that overtook this
     * SACK cleared it already (mrc_cc_idle). */
    bool idle = qp->snd_una == qp->snd_nxt;
    if (!idle) {
        qp->cc_infl -= (int64_t)a.newly;
    }
    mrc_nscc_on_ack(&c->n, &a, now);
    if (idle) {
        c->n.inflight += (int64_t)a.newly;
    }
    mrc_cc_wake(c);
}

void mrc_cc_on_trim(mrc_qp *qp, uint32_t len, bool lasthop, uint64_t now)
{
    mrc_nscc_on_trim(&qp->cc->n, len, lasthop, now);
}

void mrc_cc_on_loss(mrc_qp *qp, uint32_t len)
{
    mrc_nscc_on_loss(&qp->cc->n, len);
}

void mrc_cc_stats(const mrc_qp *qp, mrc_qp_stats *st)
{
    bool data = qp->retx_count || qp->sq_send < qp->sq_count;
    bool flying = qp->txp && qp->snd_una != qp->snd_nxt;
    bool open = mrc_cc_open(qp, qp->attr.path_mtu);
    st->cc_state = data ? (open ? MRC_QPCC_READY : MRC_QPCC_ACTIVE)
                        : (flying ? MRC_QPCC_PENDING : MRC_QPCC_IDLE);
    if (!qp->cc) {
        st->cwnd = st->max_cwnd = UINT64_MAX;
        return;
    }
    const mrc_nscc *n = &qp->cc->n;
    st->cwnd = (uint64_t)n->cwnd;
    st->max_cwnd = (uint64_t)n->max_wnd;
    st->cc_inflight = n->inflight;
    st->base_rtt_ns = n->base_rtt;
    st->avg_delay_ns = (uint64_t)n->avg_delay;
    st->cc_md = n->n_md;
    st->cc_qa = n->n_qa;
    st->cc_fast = n->n_fast;
    st->cc_pen = n->n_pen;
}

/* The responder's pressure in percent: the immediates it stashes against its limit, the
 * posted receives they hold, and the bytes it holds out of order against its budget. */
static unsigned pressure(const mrc_qp *qp)
{
    unsigned p = 0;
    if (qp->attr.wimm.max_wimm_dest) {
        p = qp->wimm_stash * 100u / qp->attr.wimm.max_wimm_dest;
    }
    if (qp->rq_count) {
        unsigned r = qp->rq_reserved * 100u / qp->rq_count;
        p = r > p ? r : p;
    }
    if (qp->rq_starved) {
        p = 100; /* an immediate found no posted receive since the last SACK */
    }
    uint64_t budget = qp->ctx->set.rx_budget;
    if (budget) {
        uint64_t m = qp->ctx->rx_held * 100 / budget;
        p = m > p ? (unsigned)(m < 100 ? m : 100) : p;
    }
    return p;
}

void mrc_cc_penalty(mrc_qp *qp, uint8_t *pen, uint8_t *rc)
{
    *pen = 0;
    *rc = 0;
    if (qp->attr.cap & MRC_QP_CAP_HOST_BP_DISABLE) {
        return;
    }
    unsigned start = qp->ctx->set.bp_start_pct, p = pressure(qp);
    qp->rq_starved = false;
    if (start < 100 && p > start) {
        /* from 1 just past the start to 127 (one packet per RTT) at full pressure */
        unsigned v = 1 + (p - start) * 126u / (100 - start);
        *pen = (uint8_t)(v < 127 ? v : 127);
        qp->bp_restore = MRC_BP_RESTORE_SACKS;
        qp->st.pen_sent++;
    } else if (qp->bp_restore) {
        /* the pressure is over: tell the senders to restore the window they saved, on a few
         * SACKs since any one of them may be lost */
        qp->bp_restore--;
        *rc = 1;
    }
}
