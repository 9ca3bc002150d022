/* SPDX-License-Identifier: MIT */
/* QP lifecycle (RESET -> INIT -> RTR -> RTS, ERR), posting work requests, errors, statistics. */
#include "mrc_internal.h"

int mrc_qp_new(mrc_context *ctx, const mrc_qp_init_attr *a, mrc_qp **pqp)
{
    if (!a || !a->send_cq || !a->recv_cq || a->max_send_wr == 0 || a->max_recv_wr == 0 ||
        a->max_send_wr > (1u << 20) || a->max_recv_wr > (1u << 20) || a->max_send_sge == 0 ||
        a->max_send_sge > MRC_MAX_SGE) {
        return MRC_ERR_INVAL;
    }
    uint32_t slot = 0;
    while (slot < ctx->set.max_qps && ctx->qps[slot]) {
        slot++;
    }
    if (slot == ctx->set.max_qps) {
        return MRC_ERR_FULL;
    }
    mrc_qp *qp = mrc_calloc(ctx, 1, sizeof(*qp));
    if (!qp) {
        return MRC_ERR_NOMEM;
    }
    qp->ctx = ctx;
    qp->qpn = slot + MRC_MIN_QPN;
    qp->init = *a;
    qp->state = MRC_QPS_RESET;
    qp->heap_idx = MRC_NONE;
    qp->expiry = UINT64_MAX;
    qp->sq = mrc_calloc(ctx, a->max_send_wr, sizeof(mrc_swqe));
    qp->rq = mrc_calloc(ctx, a->max_recv_wr, sizeof(uint64_t));
    qp->rq_cap = a->max_recv_wr;
    if (!qp->sq || !qp->rq) {
        mrc_dealloc(ctx, qp->sq);
        mrc_dealloc(ctx, qp->rq);
        mrc_dealloc(ctx, qp);
        return MRC_ERR_NOMEM;
    }
    ctx->qps[slot] = qp;
    *pqp = qp;
    return 0;
}

void mrc_wqe_release(mrc_swqe *w)
{
    for (unsigned k = 0; k < w->nsge; k++) {
        if (w->mr[k]) {
            w->mr[k]->refs--;
            w->mr[k] = NULL;
        }
    }
}

/* Back to the state of a new QP: nothing posted, nothing tracked. */
static void qp_reset(mrc_qp *qp)
{
    mrc_qp_unlink(qp);
    mrc_ep_forget(qp->ctx, qp);
    for (uint32_t i = 0; i < qp->sq_count; i++) {
        mrc_wqe_release(&qp->sq[(qp->sq_head + i) % qp->init.max_send_wr]);
    }
    mrc_req_teardown(qp);
    mrc_rsp_teardown(qp);
    mrc_ev_teardown(qp);
    qp->sq_head = qp->sq_count = qp->sq_send = 0;
    qp->rq_head = qp->rq_count = qp->rq_reserved = 0;
    qp->expiry = UINT64_MAX;
    memset(&qp->st, 0, sizeof(qp->st));
}

void mrc_qp_free(mrc_qp *qp)
{
    if (!qp) {
        return;
    }
    mrc_context *ctx = qp->ctx;
    qp_reset(qp);
    ctx->qps[qp->qpn - MRC_MIN_QPN] = NULL;
    mrc_dealloc(ctx, qp->sq);
    mrc_dealloc(ctx, qp->rq);
    mrc_dealloc(ctx, qp);
}

uint32_t mrc_qp_num(const mrc_qp *qp)
{
    return qp->qpn;
}

void *mrc_qp_context(const mrc_qp *qp)
{
    return qp->init.qp_context;
}

int mrc_query_qp(const mrc_qp *qp, mrc_qp_attr *attr)
{
    *attr = qp->attr;
    attr->qp_state = (mrc_qp_state)qp->state;
    return 0;
}

static bool mtu_ok(uint32_t mtu)
{
    return mtu >= 256 && mtu <= 8192 && (mtu & (mtu - 1)) == 0;
}

uint32_t mrc_path_mtu_fit(uint32_t link_mtu, uint32_t encap)
{
    /* a data packet's most: METH, TSETH, RETH and ImmDt after the BTH, 3 pad bytes, the ICRC */
    uint64_t over = (uint64_t)encap + MRC_BASE_LEN + MRC_METH_LEN + MRC_TSETH_LEN + MRC_RETH_LEN +
                    MRC_IMM_LEN + 3 + MRC_ICRC_LEN;
    uint32_t mtu = 8192;
    while (mtu >= 256 && mtu + over > link_mtu) {
        mtu /= 2;
    }
    return mtu >= 256 ? mtu : 0;
}

/* Checks what |mask| sets, against its range and the state it is allowed in. */
static int check_attrs(const mrc_qp *qp, const mrc_qp_attr *a, uint32_t mask)
{
    const mrc_context *ctx = qp->ctx;
    if (((mask & MRC_QP_DEST_QPN) && (a->dest_qp_num > 0xffffff || a->dest_qp_num < 3)) ||
        ((mask & MRC_QP_SQ_PSN) && a->sq_psn > 0xffffff) ||
        ((mask & MRC_QP_RQ_PSN) && a->rq_psn > 0xffffff) ||
        ((mask & MRC_QP_PATH_MTU) && !mtu_ok(a->path_mtu)) ||
        ((mask & MRC_QP_MPR) && a->mpr.mpr == 0) ||
        ((mask & MRC_QP_MPR_DEST) && a->mpr.mpr_dest == 0) ||
        ((mask & MRC_QP_TIMEOUT) && (a->timeout == 0 || a->timeout > 24)) ||
        ((mask & MRC_QP_RETRY_CNT) && (a->retry.linear_cnt > 7 || a->retry.exp_cnt > 25)) ||
        ((mask & MRC_QP_AV) && (a->ah.nports == 0 || a->ah.nports > ctx->set.nports)) ||
        ((mask & MRC_QP_MAX_WIMM) && a->wimm.max_wimm == 0) ||
        ((mask & MRC_QP_MAX_WIMM_DEST) && a->wimm.max_wimm_dest == 0) ||
        ((mask & MRC_QP_EV_PROFILE_ID) && !mrc_evp_find(ctx, a->profile.ev_profile_id))) {
        return MRC_ERR_INVAL;
    }
    if ((mask & MRC_QP_CC_PROFILE_ID) && !mrc_cc_profile_known(ctx, a->profile.cc_profile_id)) {
        return MRC_ERR_INVAL;
    }
    return 0;
}

static void copy_attrs(mrc_qp *qp, const mrc_qp_attr *a, uint32_t mask)
{
    mrc_qp_attr *q = &qp->attr;
    if (mask & MRC_QP_DEST_QPN) {
        q->dest_qp_num = a->dest_qp_num;
    }
    if (mask & MRC_QP_SQ_PSN) {
        q->sq_psn = a->sq_psn;
    }
    if (mask & MRC_QP_RQ_PSN) {
        q->rq_psn = a->rq_psn;
    }
    if (mask & MRC_QP_PATH_MTU) {
        q->path_mtu = a->path_mtu;
    }
    if (mask & MRC_QP_ACCESS_FLAGS) {
        q->access_flags = a->access_flags;
    }
    if (mask & MRC_QP_AV) {
        q->ah = a->ah;
    }
    if (mask & MRC_QP_MPR) {
        q->mpr.mpr = a->mpr.mpr;
    }
    if (mask & MRC_QP_MPR_DEST) {
        q->mpr.mpr_dest = a->mpr.mpr_dest;
    }
    if (mask & MRC_QP_MAX_WIMM) {
        q->wimm.max_wimm = a->wimm.max_wimm;
    }
    if (mask & MRC_QP_MAX_WIMM_DEST) {
        q->wimm.max_wimm_dest = a->wimm.max_wimm_dest;
    }
    if (mask & MRC_QP_TIMEOUT) {
        q->timeout = a->timeout;
    }
    if (mask & MRC_QP_EV_PROFILE_ID) {
        q->profile.ev_profile_id = a->profile.ev_profile_id;
    }
    if (mask & MRC_QP_CC_PROFILE_ID) {
        q->profile.cc_profile_id = a->profile.cc_profile_id;
    }
    if (mask & MRC_QP_RETRY_CNT) {
        q->retry = a->retry;
    }
    if (mask & MRC_QP_CAP) {
        q->cap = a->cap;
    }
}

int mrc_modify_qp(mrc_qp *qp, const mrc_qp_attr *a, uint32_t mask, uint64_t now)
{
    static const uint32_t need[] = {
        [MRC_QPS_INIT] = MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID,
        [MRC_QPS_RTR] = MRC_QP_DEST_QPN | MRC_QP_RQ_PSN | MRC_QP_PATH_MTU | MRC_QP_AV |
                        MRC_QP_MPR_DEST | MRC_QP_MAX_WIMM_DEST,
        [MRC_QPS_RTS] =
            MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM | MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT,
    };
    if (!a) {
        return MRC_ERR_INVAL;
    }
    uint32_t from = qp->state, to = (mask & MRC_QP_STATE) ? (uint32_t)a->qp_state : from;
    int rv = check_attrs(qp, a, mask);
    if (rv != 0) {
        return rv;
    }
    if (to == MRC_QPS_RESET) {
        qp_reset(qp);
        qp->state = MRC_QPS_RESET;
        return 0;
    }
    if (to == MRC_QPS_ERR) {
        if (from != MRC_QPS_ERR && from != MRC_QPS_RESET) {
            mrc_qp_fail(qp, 0, now);
        }
        qp->state = MRC_QPS_ERR;
        return 0;
    }
    bool step = (from == MRC_QPS_RESET && to == MRC_QPS_INIT) ||
                (from == MRC_QPS_INIT && to == MRC_QPS_RTR) ||
                (from == MRC_QPS_RTR && to == MRC_QPS_RTS);
    if (to != from && !step) {
        return MRC_ERR_STATE;
    }
    if (to != from && (mask & need[to]) != need[to]) {
        return MRC_ERR_INVAL;
    }
    /* what defines the connection is set once, on the way up */
    if (to == from &&
        (mask & ~(MRC_QP_STATE | MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT | MRC_QP_ACCESS_FLAGS))) {
        return MRC_ERR_STATE;
    }
    copy_attrs(qp, a, mask);
    if (to == from) {
        if (qp->txp && (mask & (MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT))) {
            mrc_req_timing(qp);
        }
        return 0;
    }
    switch (to) {
    case MRC_QPS_INIT:
        rv = mrc_ev_setup(qp, mrc_evp_find(qp->ctx, qp->attr.profile.ev_profile_id));
        break;
    case MRC_QPS_RTR:
        qp->remote_ports = (uint32_t)((1ull << qp->attr.ah.nports) - 1);
        for (unsigned port = 0; port < qp->attr.ah.nports; port++) {
            mrc_wire_template(qp->tmpl[port], qp->attr.ah.sgid[port], qp->attr.ah.dgid[port],
                              qp->ctx->set.udp_port, qp->attr.dest_qp_num);
        }
        rv = mrc_rsp_setup(qp);
        break;
    default:
        rv = mrc_req_setup(qp, now);
        qp->last_progress = now;
        break;
    }
    if (rv != 0) {
        return rv;
    }
    qp->state = to;
    mrc_qp_timer_update(qp);
    return 0;
}

int mrc_post_send(mrc_qp *qp, const mrc_send_wr *wr, uint64_t now)
{
    (void)now;
    if (qp->state != MRC_QPS_RTS) {
        return MRC_ERR_STATE;
    }
    if (!wr || (wr->opcode != MRC_WR_RDMA_WRITE && wr->opcode != MRC_WR_RDMA_WRITE_WITH_IMM) ||
        wr->num_sge > qp->init.max_send_sge || (wr->num_sge && !wr->sg_list)) {
        return MRC_ERR_INVAL;
    }
    if (qp->sq_count == qp->init.max_send_wr) {
        return MRC_ERR_FULL;
    }
    mrc_swqe *w = &qp->sq[(qp->sq_head + qp->sq_count) % qp->init.max_send_wr];
    uint64_t total = 0;
    for (unsigned k = 0; k < wr->num_sge; k++) {
        const mrc_sge *g = &wr->sg_list[k];
        mrc_mr *mr = mrc_mr_find(qp->ctx, g->lkey);
        uint64_t base = mr ? (uint64_t)(uintptr_t)mr->addr : 0;
        if (!mr || g->addr < base || g->addr - base > mr->len || g->length > mr->len ||
            g->addr - base + g->length > mr->len) {
            return MRC_ERR_ACCESS;
        }
        total += g->length;
    }
    if (total > 0x7fffffff) {
        return MRC_ERR_INVAL;
    }
    memset(w, 0, sizeof(*w));
    w->wr_id = wr->wr_id;
    w->opcode = (uint8_t)wr->opcode;
    w->signaled = qp->init.sq_sig_all || (wr->send_flags & MRC_SEND_SIGNALED);
    w->remote_addr = wr->remote_addr;
    w->rkey = wr->rkey;
    w->imm = wr->imm_data;
    w->length = (uint32_t)total;
    w->nsge = (uint8_t)wr->num_sge;
    for (unsigned k = 0; k < wr->num_sge && k < MRC_MAX_SGE; k++) {
        w->sge[k] = wr->sg_list[k];
        w->mr[k] = mrc_mr_find(qp->ctx, wr->sg_list[k].lkey);
        w->mr[k]->refs++;
    }
    w->npkts = total ? (uint32_t)((total + qp->attr.path_mtu - 1) / qp->attr.path_mtu) : 1;
    w->msn = qp->msn_next;
    qp->msn_next = (qp->msn_next + 1) & 0xffffff;
    if (qp->msn_next == 0) {
        /* the middle-packet headers are tagged by MSN: none may outlive its wrap */
        memset(qp->dtmpl_tag, 0, sizeof(qp->dtmpl_tag));
    }
    if (wr->opcode == MRC_WR_RDMA_WRITE_WITH_IMM) {
        w->rqmsn = qp->rqmsn_next++;
    }
    qp->sq_count++;
    mrc_qp_ready(qp);
    return 0;
}

int mrc_post_recv(mrc_qp *qp, const mrc_recv_wr *wr)
{
    if (qp->state == MRC_QPS_RESET || qp->state == MRC_QPS_ERR) {
        return MRC_ERR_STATE;
    }
    if (!wr) {
        return MRC_ERR_INVAL;
    }
    if (qp->rq_count == qp->rq_cap) {
        return MRC_ERR_FULL;
    }
    qp->rq[(qp->rq_head + qp->rq_count) % qp->rq_cap] = wr->wr_id;
    qp->rq_count++;
    return 0;
}

static uint32_t wc_status(int err)
{
    switch (err) {
    case MRC_ERR_RETRY_EXC:
        return MRC_WC_RETRY_EXC_ERR;
    case MRC_ERR_REM_ACCESS:
        return MRC_WC_REM_ACCESS_ERR;
    case MRC_ERR_REM_OP:
        return MRC_WC_REM_OP_ERR;
    case MRC_ERR_REM_INV_REQ:
        return MRC_WC_REM_INV_REQ_ERR;
    default:
        return MRC_WC_WR_FLUSH_ERR;
    }
}

/* The QP goes to ERR: the oldest send fails with |err|, everything else is flushed. */
void mrc_qp_fail(mrc_qp *qp, int err, uint64_t now)
{
    if (qp->state == MRC_QPS_ERR) {
        return;
    }
    mrc_log(qp->ctx, now, "qp %u: error: %s", qp->qpn, mrc_strerror(err));
    qp->state = MRC_QPS_ERR;
    for (uint32_t i = 0; i < qp->sq_count; i++) {
        mrc_swqe *w = &qp->sq[(qp->sq_head + i) % qp->init.max_send_wr];
        mrc_wc wc = {.wr_id = w->wr_id,
                     .status = i == 0 ? wc_status(err) : MRC_WC_WR_FLUSH_ERR,
                     .opcode = MRC_WC_RDMA_WRITE,
                     .qp_num = qp->qpn};
        mrc_wqe_release(w);
        mrc_cq_push(qp->init.send_cq, &wc);
    }
    qp->sq_count = qp->sq_send = 0;
    for (uint32_t i = 0; i < qp->rq_count; i++) {
        mrc_wc wc = {.wr_id = qp->rq[(qp->rq_head + i) % qp->rq_cap],
                     .status = MRC_WC_WR_FLUSH_ERR,
                     .opcode = MRC_WC_RECV_RDMA_WITH_IMM,
                     .qp_num = qp->qpn};
        mrc_cq_push(qp->init.recv_cq, &wc);
    }
    qp->rq_count = qp->rq_reserved = 0;
    mrc_rsp_flush(qp);
    mrc_qp_unlink(qp);
    mrc_cc_detach(qp); /* what it had in flight must not hold the window of its peer's QPs */
}

int mrc_qp_ev_set_state(mrc_qp *qp, uint32_t ev, mrc_ev_state state, uint64_t now)
{
    if (!qp->evs) {
        return MRC_ERR_STATE;
    }
    uint32_t evi = mrc_ev_lookup(qp, ev);
    if (evi == MRC_NONE) {
        return MRC_ERR_NOTFOUND;
    }
    if (state == MRC_EV_DENIED) {
        mrc_ev_set(qp, evi, MRC_EV_DENIED, MRC_EVR_DENY, now);
    } else if (state == MRC_EV_GOOD) {
        if (qp->evs[evi].state == MRC_EV_DENIED) {
            mrc_ev_set(qp, evi, MRC_EV_GOOD, MRC_EVR_ALLOW, now);
        }
    } else {
        return MRC_ERR_INVAL;
    }
    mrc_qp_ready(qp);
    return 0;
}

int mrc_qp_get_stats(const mrc_qp *qp, mrc_qp_stats *stats)
{
    *stats = qp->st;
    stats->state = qp->state;
    uint32_t inflight = 0;
    if (qp->txp) {
        inflight = (uint32_t)mrc_psn_diff(qp->snd_nxt, qp->snd_una);
    }
    stats->inflight_pkts = inflight;
    stats->srtt_ns = qp->srtt;
    stats->min_rtt_ns = qp->min_rtt;
    stats->reo_wnd_ns = qp->reo_wnd;
    stats->path_order_off = qp->ctx->set.ev_in_order && !qp->path_order;
    stats->rto_ns = qp->rto;
    mrc_cc_stats(qp, stats);
    return 0;
}

unsigned mrc_qp_ev_count(const mrc_qp *qp)
{
    return qp->nevs;
}

int mrc_qp_get_ev_stats(const mrc_qp *qp, unsigned index, mrc_ev_stats *s)
{
    if (index >= qp->nevs) {
        return MRC_ERR_NOTFOUND;
    }
    const mrc_qev *e = &qp->evs[index];
    *s = (mrc_ev_stats){.ev = e->val,
                        .port = e->port,
                        .state = e->state,
                        .active = e->active,
                        .pkts_sent = e->pkts_sent,
                        .retx_sent = e->retx_sent,
                        .acked = e->acked,
                        .lost = e->lost,
                        .timeouts = e->timeouts,
                        .ecn = e->ecn,
                        .trims = e->trims,
                        .transitions = e->transitions,
                        .probes_sent = e->probes_sent,
                        .probes_ok = e->probes_ok,
                        .probes_lost = e->probes_lost,
                        .last_rtt_ns = e->last_rtt,
                        .min_rtt_ns = e->min_rtt == UINT64_MAX ? 0 : e->min_rtt};
    return 0;
}

void mrc_pkt_base(mrc_pkt *pkt, uint8_t opcode, uint32_t ev, uint8_t dscp, uint8_t ecn)
{
    pkt->ip.tc = (uint8_t)(dscp << 2 | ecn);
    pkt->ip.flowlabel = ev >> 16;
    pkt->udp.sport = (uint16_t)ev;
    pkt->bth.opcode = opcode;
    pkt->bth.se = pkt->bth.mig = 0;
    pkt->bth.ackreq = pkt->bth.rtx = pkt->bth.ts = 0;
    pkt->bth.psn = 0;
}

int mrc_pkt_emit(mrc_context *ctx, uint8_t *dest, size_t destlen, const uint8_t *tmpl,
                 const mrc_pkt *pkt, mrc_tx_info *info)
{
    size_t h = tmpl ? mrc_wire_encode_tmpl(dest, destlen, tmpl, pkt, 0)
                    : mrc_wire_encode(dest, destlen, pkt, 0);
    size_t n = h ? mrc_finish(ctx, dest, destlen, h) : 0;
    if (n == 0) {
        return MRC_ERR_NOBUF;
    }
    info->dscp = pkt->ip.tc >> 2;
    info->ecn = pkt->ip.tc & 3;
    memcpy(info->dst, dest + 24, 16);
    return (int)n;
}
