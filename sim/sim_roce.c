/* SPDX-License-Identifier: MIT */
/* The RoCEv2 RC baseline: a requester with go-back-N and DCQCN's reaction point, a responder
 * that takes only the expected PSN, in one sans-IO object per connection end. */
#include <stdlib.h>
#include <string.h>

#include "sim_roce.h"

#define PSN_MASK 0xffffffu
#define PSN_HALF 0x800000u

/* Messages queued before the first growth of the ring. */
#define MSGS_INIT 16u

/* Alpha below this is taken for 0: its cut (alpha/2) is lost in the rate's rounding, and an
 * idle end catching up its alpha timer stops after a few thousand steps. */
#define ALPHA_FLOOR 1e-9
/* The current rate snaps to the target when this close (relative to the line rate): halving
 * the gap in floating point can stall one unit short, and an end at the line rate has no rate
 * timer to run. */
#define RATE_SNAP 1e-9
/* The lowest rate DCQCN may reach when the configured floor is 0: 1 Mb/s. */
#define RATE_FLOOR_GBPS 1e-3

/* A posted message; its PSNs are fixed when it is posted. */
typedef struct roce_msg {
    uint64_t bytes, cookie;
    uint64_t seq; /* completion order, once acknowledged */
    uint32_t first_psn, npkts;
} roce_msg;

/* A receive completion waiting for sim_roce_poll. */
typedef struct roce_rdone {
    uint64_t cookie, bytes, seq;
} roce_rdone;

struct sim_roce_qp {
    sim_roce_cfg cfg;
    double line_gbps, min_gbps;
    uint32_t id, peer;
    bool failed;
    bool moved; /* a packet went or came: the PSNs are fixed */

    /* Requester. The message ring's indices only grow; [head, una_msg) are acknowledged and
     * not yet polled, [una_msg, tail) are not acknowledged, and snd_msg (with snd_off) is the
     * message of snd_nxt, tail when everything posted was sent. */
    roce_msg *msgs;
    uint64_t cap, head, una_msg, snd_msg, tail;
    uint32_t snd_off;
    uint32_t una;      /* oldest PSN not acknowledged */
    uint32_t snd_nxt;  /* next PSN to send (behind snd_max after going back) */
    uint32_t snd_max;  /* one past the highest PSN ever sent */
    uint32_t post_psn; /* the PSN of the next message posted */
    uint64_t last_tx_ps;
    uint32_t last_tx_wire;
    uint64_t rto_ps;     /* retransmission deadline, SIM_NEVER while nothing is out */
    unsigned rto_streak; /* timeouts in a row without progress */

    /* Responder */
    uint32_t epsn;       /* expected PSN */
    uint64_t rmsg_bytes; /* the message arriving so far */
    unsigned unacked;    /* in-order packets since the last ACK */
    bool ack_pending, nak_pending, cnp_pending;
    bool nak_sent; /* one NAK per sequence error, until the expected PSN comes */
    bool cnp_ever;
    uint64_t last_cnp_ps;
    roce_rdone rcq[SIM_ROCE_RECV_CQ];
    unsigned rcq_head, rcq_len;

    uint64_t seq; /* the next completion's order */

    /* DCQCN's reaction point: current and target rate, alpha, the increase stages counted by
     * the timer and by the byte counter, bytes towards the next byte-counter event, and the
     * two timers' deadlines (SIM_NEVER when stopped). */
    double rc, rt, alpha;
    unsigned t_stage, bc_stage;
    uint64_t bc_bytes;
    uint64_t rate_tmr, alpha_tmr;

    sim_roce_stats st;
};

static inline uint32_t psn_add(uint32_t psn, uint32_t n)
{
    return (psn + n) & PSN_MASK;
}

/* How far |a| is after |b|, modulo 2^24. */
static inline uint32_t psn_diff(uint32_t a, uint32_t b)
{
    return (a - b) & PSN_MASK;
}

static inline uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* A fixed integer mixer: spreads the ids of a direction over the PSN space. */
static uint32_t psn_draw(uint32_t src, uint32_t dst)
{
    uint32_t x = src * 0x9e3779b1u ^ (dst + 0x7f4a7c15u);
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x & PSN_MASK;
}

static inline roce_msg *msg_at(const sim_roce_qp *qp, uint64_t i)
{
    return &qp->msgs[i & (qp->cap - 1)];
}

/* Picoseconds a packet of |wire| bytes takes at |gbps|: one Gb/s is one bit per ns. */
static inline uint64_t tx_ps(uint32_t wire, double gbps)
{
    return (uint64_t)((double)wire * 8000.0 / gbps + 0.5);
}

static inline bool busy(const sim_roce_qp *qp)
{
    return qp->una != qp->post_psn;
}

/* ---- DCQCN (Zhu et al., SIGCOMM'15, section 3.1: the reaction point) ---- */

static void dc_stats(sim_roce_qp *qp)
{
    qp->st.rate_gbps = qp->rc;
    qp->st.target_gbps = qp->rt;
    qp->st.alpha = qp->alpha;
}

static inline bool dc_at_rest(const sim_roce_qp *qp)
{
    return qp->rc >= qp->line_gbps && qp->rt >= qp->line_gbps;
}

/*
 * One rate increase event, from the timer (|by_timer|) or the byte counter. The phase comes
 * from the stages counted before this event: hyper increase once both counters passed F,
 * additive once either reached F, fast recovery before; then the counter of the event's kind
 * grows. Fast recovery moves the current rate halfway to the target; the others first raise
 * the target.
 */
static void dc_increase(sim_roce_qp *qp, bool by_timer)
{
    unsigned f = qp->cfg.dc.fast_recovery;
    unsigned lo = qp->t_stage < qp->bc_stage ? qp->t_stage : qp->bc_stage;
    unsigned hi = qp->t_stage < qp->bc_stage ? qp->bc_stage : qp->t_stage;
    if (lo > f) {
        qp->rt += qp->cfg.dc.rate_hai_gbps;
    } else if (hi >= f) {
        qp->rt += qp->cfg.dc.rate_ai_gbps;
    }
    if (qp->rt > qp->line_gbps) {
        qp->rt = qp->line_gbps;
    }
    qp->rc = (qp->rt + qp->rc) / 2;
    if (qp->rt - qp->rc < RATE_SNAP * qp->line_gbps) {
        qp->rc = qp->rt;
    }
    if (qp->rc < qp->min_gbps) {
        qp->rc = qp->min_gbps;
    }
    if (by_timer) {
        qp->t_stage++;
    } else {
        qp->bc_stage++;
    }
    dc_stats(qp);
}

/* Runs the DCQCN timers due by |now|, in order: alpha's decay and the rate increase timer are
 * independent of each other, and only a CNP (taken after this) restarts them. */
static void dc_advance(sim_roce_qp *qp, uint64_t now)
{
    if (!qp->cfg.dcqcn) {
        return;
    }
    while (qp->alpha_tmr <= now) {
        qp->alpha *= 1.0 - qp->cfg.dc.g;
        if (qp->alpha < ALPHA_FLOOR) {
            qp->alpha = 0;
            qp->alpha_tmr = SIM_NEVER;
            break;
        }
        qp->alpha_tmr += qp->cfg.dc.alpha_timer_ps;
    }
    while (qp->rate_tmr <= now) {
        dc_increase(qp, true);
        if (dc_at_rest(qp)) {
            qp->rate_tmr = SIM_NEVER;
            break;
        }
        qp->rate_tmr += qp->cfg.dc.rate_timer_ps;
    }
    dc_stats(qp);
}

/* A CNP: the target takes the current rate, the current rate is cut by alpha/2, alpha moves
 * towards 1, and the increase stages, the byte counter and both timers start over. */
static void dc_cnp(sim_roce_qp *qp, uint64_t now)
{
    qp->rt = qp->rc;
    qp->rc *= 1.0 - qp->alpha / 2;
    if (qp->rc < qp->min_gbps) {
        qp->rc = qp->min_gbps;
    }
    qp->alpha = (1.0 - qp->cfg.dc.g) * qp->alpha + qp->cfg.dc.g;
    qp->t_stage = qp->bc_stage = 0;
    qp->bc_bytes = 0;
    qp->rate_tmr = qp->cfg.dc.rate_timer_ps ? now + qp->cfg.dc.rate_timer_ps : SIM_NEVER;
    qp->alpha_tmr = qp->cfg.dc.alpha_timer_ps ? now + qp->cfg.dc.alpha_timer_ps : SIM_NEVER;
    qp->st.rate_decreases++;
    dc_stats(qp);
}

/* Data bytes on the wire feed the byte counter while the rate is below the line rate. */
static void dc_sent(sim_roce_qp *qp, uint32_t wire)
{
    if (!qp->cfg.dcqcn || qp->cfg.dc.byte_counter == 0 || dc_at_rest(qp)) {
        return;
    }
    qp->bc_bytes += wire;
    while (qp->bc_bytes >= qp->cfg.dc.byte_counter) {
        qp->bc_bytes -= qp->cfg.dc.byte_counter;
        dc_increase(qp, false);
    }
}

/* ---- the requester ---- */

/* Points the send cursor at |psn|, which lies in [una, post_psn]. */
static void snd_seek(sim_roce_qp *qp, uint32_t psn)
{
    qp->snd_nxt = psn;
    for (uint64_t i = qp->una_msg; i < qp->tail; i++) {
        const roce_msg *m = msg_at(qp, i);
        uint32_t d = psn_diff(psn, m->first_psn);
        if (d < m->npkts) {
            qp->snd_msg = i;
            qp->snd_off = d;
            return;
        }
    }
    qp->snd_msg = qp->tail;
    qp->snd_off = 0;
}

/* Everything below |psn| arrived (an ACK, or the NAK's implicit one). */
static void snd_acked(sim_roce_qp *qp, uint32_t psn, uint64_t now)
{
    uint32_t d = psn_diff(psn, qp->una);
    if (d == 0 || d > psn_diff(qp->snd_max, qp->una)) {
        return; /* nothing new, or stale, or beyond anything sent */
    }
    bool past_nxt = d > psn_diff(qp->snd_nxt, qp->una);
    qp->una = psn;
    qp->rto_streak = 0;
    while (qp->una_msg < qp->tail) {
        roce_msg *m = msg_at(qp, qp->una_msg);
        if (psn_diff(qp->una, m->first_psn) < m->npkts) {
            break;
        }
        m->seq = qp->seq++;
        qp->una_msg++;
    }
    if (past_nxt) {
        snd_seek(qp, qp->una); /* the peer had what we were about to resend */
    }
    qp->rto_ps = qp->una == qp->snd_max ? SIM_NEVER : now + qp->cfg.timeout_ps;
}

static void snd_timeout(sim_roce_qp *qp, uint64_t now)
{
    qp->st.timeouts++;
    unsigned limit = qp->cfg.retry ? qp->cfg.retry : 1;
    if (++qp->rto_streak >= limit) {
        qp->failed = true;
        qp->rto_ps = SIM_NEVER;
        return;
    }
    snd_seek(qp, qp->una);
    qp->rto_ps = now + qp->cfg.timeout_ps;
}

/* The next data packet at |now|, paced at the current rate: 1, or 0 when none may go. */
static int snd_data(sim_roce_qp *qp, uint64_t now, sim_roce_pkt *out)
{
    if (qp->snd_msg == qp->tail || now < sim_roce_next_tx(qp)) {
        return 0;
    }
    const roce_msg *m = msg_at(qp, qp->snd_msg);
    bool last = qp->snd_off + 1 == m->npkts;
    uint64_t off = (uint64_t)qp->snd_off * qp->cfg.mtu;
    uint32_t len = last ? (uint32_t)(m->bytes - off) : qp->cfg.mtu;
    *out = (sim_roce_pkt){.kind = SIM_ROCE_DATA,
                          .last = last,
                          .dst_qp = qp->peer,
                          .psn = qp->snd_nxt,
                          .len = len,
                          .cookie = m->cookie};
    uint32_t wire = len + SIM_ROCE_DATA_HDR;
    qp->last_tx_ps = now;
    qp->last_tx_wire = wire;
    qp->st.data_pkts_sent++;
    qp->st.data_bytes_sent += len;
    if (qp->snd_nxt == qp->snd_max) {
        if (qp->una == qp->snd_max) {
            qp->rto_ps = now + qp->cfg.timeout_ps; /* the first one out */
        }
        qp->snd_max = psn_add(qp->snd_max, 1);
    } else {
        qp->st.retx_pkts++;
    }
    qp->snd_nxt = psn_add(qp->snd_nxt, 1);
    if (last) {
        qp->snd_msg++;
        qp->snd_off = 0;
    } else {
        qp->snd_off++;
    }
    dc_sent(qp, wire);
    return 1;
}

/* ---- the responder ---- */

static void rcv_data(sim_roce_qp *qp, const sim_roce_pkt *in, uint64_t now)
{
    qp->st.data_pkts_rcvd++;
    if (in->ce && qp->cfg.dcqcn &&
        (!qp->cnp_ever || now - qp->last_cnp_ps >= qp->cfg.dc.cnp_interval_ps)) {
        qp->cnp_pending = true;
        qp->cnp_ever = true;
        qp->last_cnp_ps = now;
    }
    uint32_t d = psn_diff(in->psn, qp->epsn);
    if (d >= PSN_HALF) {
        qp->st.dup_rcvd++;
        qp->ack_pending = true; /* heals a lost ACK */
        return;
    }
    if (d > 0) {
        qp->st.out_of_order_dropped++;
        if (!qp->nak_sent) {
            qp->nak_sent = true;
            qp->nak_pending = true;
        }
        return;
    }
    if (in->last && qp->rcq_len == SIM_ROCE_RECV_CQ) {
        qp->st.cq_full_dropped++;
        return;
    }
    qp->epsn = psn_add(qp->epsn, 1);
    qp->nak_sent = false;
    qp->nak_pending = false; /* the expected one came before the NAK went */
    qp->rmsg_bytes += in->len;
    qp->unacked++;
    if (in->last) {
        roce_rdone *r = &qp->rcq[(qp->rcq_head + qp->rcq_len) % SIM_ROCE_RECV_CQ];
        *r = (roce_rdone){.cookie = in->cookie, .bytes = qp->rmsg_bytes, .seq = qp->seq++};
        qp->rcq_len++;
        qp->rmsg_bytes = 0;
    }
    unsigned every = qp->cfg.ack_every ? qp->cfg.ack_every : 1;
    if (in->last || qp->unacked >= every) {
        qp->ack_pending = true;
        qp->unacked = 0;
    }
}

/* ---- the API ---- */

sim_roce_qp *sim_roce_qp_new(const sim_roce_cfg *cfg, double line_gbps, uint32_t id, uint32_t peer,
                             uint64_t now_ps)
{
    sim_roce_qp *qp = NULL;
    if (cfg->mtu == 0 || !(line_gbps > 0)) {
        goto fail_cfg;
    }
    qp = calloc(1, sizeof(*qp));
    if (qp == NULL) {
        goto fail_qp;
    }
    qp->msgs = calloc(MSGS_INIT, sizeof(*qp->msgs));
    if (qp->msgs == NULL) {
        goto fail_msgs;
    }
    qp->cap = MSGS_INIT;
    qp->cfg = *cfg;
    qp->line_gbps = line_gbps;
    qp->min_gbps = cfg->dc.min_rate_gbps > 0 ? cfg->dc.min_rate_gbps : RATE_FLOOR_GBPS;
    if (qp->min_gbps > line_gbps) {
        qp->min_gbps = line_gbps;
    }
    qp->id = id;
    qp->peer = peer;
    qp->una = qp->snd_nxt = qp->snd_max = qp->post_psn = psn_draw(id, peer);
    qp->epsn = psn_draw(peer, id);
    qp->last_tx_ps = now_ps;
    qp->rto_ps = SIM_NEVER;
    /* DCQCN starts at the line rate with alpha 1 (the paper's initial value), timers
     * stopped until the first CNP. */
    qp->rc = qp->rt = line_gbps;
    qp->alpha = 1.0;
    qp->rate_tmr = qp->alpha_tmr = SIM_NEVER;
    dc_stats(qp);
    return qp;

fail_msgs:
    free(qp);
fail_qp:
fail_cfg:
    return NULL;
}

void sim_roce_qp_free(sim_roce_qp *qp)
{
    if (qp == NULL) {
        return;
    }
    free(qp->msgs);
    free(qp);
}

int sim_roce_qp_set_psn(sim_roce_qp *qp, uint32_t send_psn, uint32_t recv_psn)
{
    int rv = -1;
    if (qp->moved || qp->tail != qp->head) {
        goto out;
    }
    send_psn &= PSN_MASK;
    qp->una = qp->snd_nxt = qp->snd_max = qp->post_psn = send_psn;
    qp->epsn = recv_psn & PSN_MASK;
    rv = 0;
out:
    return rv;
}

/* Doubles the ring; the indices stay, their slots move. */
static int msgs_grow(sim_roce_qp *qp)
{
    uint64_t cap = qp->cap * 2;
    roce_msg *msgs = malloc(cap * sizeof(*msgs));
    if (msgs == NULL) {
        return -1;
    }
    for (uint64_t i = qp->head; i < qp->tail; i++) {
        msgs[i & (cap - 1)] = *msg_at(qp, i);
    }
    free(qp->msgs);
    qp->msgs = msgs;
    qp->cap = cap;
    return 0;
}

int sim_roce_post(sim_roce_qp *qp, uint64_t bytes, uint64_t cookie, uint64_t now_ps)
{
    int rv = -1;
    if (qp->failed) {
        goto out;
    }
    dc_advance(qp, now_ps);
    uint64_t npkts = bytes == 0 ? 1 : (bytes + qp->cfg.mtu - 1) / qp->cfg.mtu;
    if (npkts + psn_diff(qp->post_psn, qp->una) >= PSN_HALF) {
        goto out;
    }
    if (qp->tail - qp->head == qp->cap && msgs_grow(qp) < 0) {
        goto out;
    }
    *msg_at(qp, qp->tail) = (roce_msg){
        .bytes = bytes, .cookie = cookie, .first_psn = qp->post_psn, .npkts = (uint32_t)npkts};
    qp->tail++;
    qp->post_psn = psn_add(qp->post_psn, (uint32_t)npkts);
    rv = 0;
out:
    return rv;
}

int sim_roce_write(sim_roce_qp *qp, uint64_t now_ps, sim_roce_pkt *out)
{
    if (qp->failed) {
        return -1;
    }
    dc_advance(qp, now_ps);
    sim_roce_pkt ctrl = {.dst_qp = qp->peer, .psn = qp->epsn};
    if (qp->cnp_pending) {
        qp->cnp_pending = false;
        ctrl.kind = SIM_ROCE_CNP;
        qp->st.cnps_sent++;
    } else if (qp->nak_pending) {
        /* A NAK also acknowledges every PSN below the one it asks for. */
        qp->nak_pending = qp->ack_pending = false;
        qp->unacked = 0;
        ctrl.kind = SIM_ROCE_NAK;
        qp->st.naks_sent++;
    } else if (qp->ack_pending) {
        qp->ack_pending = false;
        qp->unacked = 0;
        ctrl.kind = SIM_ROCE_ACK;
        qp->st.acks_sent++;
    } else {
        int rv = snd_data(qp, now_ps, out);
        if (rv > 0) {
            qp->moved = true;
        }
        return rv;
    }
    *out = ctrl;
    qp->moved = true;
    return 1;
}

uint64_t sim_roce_next_tx(const sim_roce_qp *qp)
{
    if (qp->failed) {
        return SIM_NEVER;
    }
    if (qp->cnp_pending || qp->nak_pending || qp->ack_pending) {
        return 0;
    }
    if (qp->snd_msg == qp->tail) {
        return SIM_NEVER;
    }
    return qp->last_tx_ps + tx_ps(qp->last_tx_wire, qp->rc);
}

void sim_roce_read(sim_roce_qp *qp, const sim_roce_pkt *in, uint64_t now_ps)
{
    if (qp->failed || in->dst_qp != qp->id) {
        return;
    }
    qp->moved = true;
    dc_advance(qp, now_ps);
    switch (in->kind) {
    case SIM_ROCE_DATA:
        rcv_data(qp, in, now_ps);
        break;
    case SIM_ROCE_ACK:
        qp->st.acks_rcvd++;
        snd_acked(qp, in->psn & PSN_MASK, now_ps);
        break;
    case SIM_ROCE_NAK: {
        qp->st.naks_rcvd++;
        uint32_t psn = in->psn & PSN_MASK;
        if (psn_diff(psn, qp->una) > psn_diff(qp->snd_max, qp->una)) {
            break; /* older than what is acknowledged already */
        }
        snd_acked(qp, psn, now_ps);
        if (psn != qp->snd_max) {
            snd_seek(qp, psn);
            qp->rto_ps = now_ps + qp->cfg.timeout_ps; /* the peer is there */
        }
        break;
    }
    case SIM_ROCE_CNP:
        qp->st.cnps_rcvd++;
        if (qp->cfg.dcqcn) {
            dc_cnp(qp, now_ps);
        }
        break;
    default:
        break;
    }
}

uint64_t sim_roce_expiry(const sim_roce_qp *qp)
{
    if (qp->failed) {
        return SIM_NEVER;
    }
    uint64_t t = qp->rto_ps;
    if (qp->cfg.dcqcn && busy(qp)) {
        t = min64(t, min64(qp->rate_tmr, qp->alpha_tmr));
    }
    return t;
}

void sim_roce_on_timer(sim_roce_qp *qp, uint64_t now_ps)
{
    if (qp->failed) {
        return;
    }
    dc_advance(qp, now_ps);
    if (qp->rto_ps <= now_ps) {
        snd_timeout(qp, now_ps);
    }
}

int sim_roce_poll(sim_roce_qp *qp, sim_roce_done *out)
{
    bool snd = qp->head < qp->una_msg;
    bool rcv = qp->rcq_len > 0;
    if (snd && rcv) {
        /* the earlier of the two; the order numbers never come near a wrap */
        snd = msg_at(qp, qp->head)->seq < qp->rcq[qp->rcq_head].seq;
        rcv = !snd;
    }
    if (snd) {
        const roce_msg *m = msg_at(qp, qp->head++);
        *out = (sim_roce_done){.cookie = m->cookie, .bytes = m->bytes, .recv = false};
        return 1;
    }
    if (rcv) {
        const roce_rdone *r = &qp->rcq[qp->rcq_head];
        *out = (sim_roce_done){.cookie = r->cookie, .bytes = r->bytes, .recv = true};
        qp->rcq_head = (qp->rcq_head + 1) % SIM_ROCE_RECV_CQ;
        qp->rcq_len--;
        return 1;
    }
    return 0;
}

bool sim_roce_failed(const sim_roce_qp *qp)
{
    return qp->failed;
}

const sim_roce_stats *sim_roce_get_stats(const sim_roce_qp *qp)
{
    return &qp->st;
}
