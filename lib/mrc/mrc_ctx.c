/* SPDX-License-Identifier: MIT */
/* The engine context: packet dispatch, QP scheduling and timers, ports, endpoint operations. */
#include "mrc_internal.h"

void mrc_settings_default(mrc_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->nports = 1;
    s->udp_port = MRC_DEFAULT_UDP_PORT;
    s->max_qps = 1024;
    s->max_mrs = 1024;
    s->max_ev_profiles = 16;
    s->icrc = true;
    s->udp_checksum = true;
    s->tseth = true;
    s->dscp_data = 4;
    s->dscp_retx = 8;
    s->dscp_no_trim = 0;
    s->dscp_control = 46;
    s->dscp_trimmed = 12;
    s->dscp_trimmed_lasthop = 16;
    s->trimmable = true;
    s->sack_every = 4;
    s->always_skip_window = 32;
    s->always_skip_pct = 75;
    s->always_skip_runs = 8;
    s->max_ooo_tracked = 0;
    s->ev_in_order = true;
    s->reorder_pkts = 3;
    s->reorder_ns = 2000;
    s->tlp_pct = 25;
    s->nack_retry_ns = 20000;
    s->rto_backoff_max = 10;
    s->skip_max_ns = 100000;
    s->ev_loss_pct = 15;
    s->probe_interval_ns = 100000;
    s->probe_interval_max_ns = 100000000;
    s->probe_recover = 3;
    s->rev_refresh_ns = 50000;
    s->ep_timeout_ns = 1000000;
    s->psu_repeat = 3;
    s->psu_interval_ns = 1000000;
    s->ev_event_queue = 1024;
    s->svc_time = true;
    s->ctrl_weight = 10;
    s->rx_budget = 0;
    s->bp_start_pct = 50;
}

int mrc_context_new(const mrc_settings *s, uint64_t now, mrc_context **pctx)
{
    if (!s || !s->alloc.malloc || !s->alloc.free || s->nports == 0 || s->nports > MRC_MAX_PORTS ||
        s->max_qps == 0 || s->max_qps > (1u << 20) || s->max_mrs == 0 ||
        s->max_mrs > MR_SLOT_MASK || s->sack_every == 0 || s->sack_every > 64 ||
        s->ev_event_queue == 0 || s->probe_recover == 0 || s->max_ev_profiles == 0 ||
        s->ev_loss_pct > 100 || s->always_skip_pct > 100) {
        return MRC_ERR_INVAL;
    }
    mrc_context *ctx = s->alloc.malloc(sizeof(*ctx), s->alloc.user);
    if (!ctx) {
        return MRC_ERR_NOMEM;
    }
    memset(ctx, 0, sizeof(*ctx));
    ctx->set = *s;
    uint64_t seed = s->cb.seed ? s->cb.seed(s->user) : 0x9e3779b97f4a7c15ull;
    ctx->rng.s0 = seed ^ 0x6a09e667f3bcc908ull;
    ctx->rng.s1 = (seed * 0xbf58476d1ce4e5b9ull) | 1;
    ctx->ports_up = (uint32_t)((1ull << s->nports) - 1);
    ctx->qps = mrc_calloc(ctx, s->max_qps, sizeof(mrc_qp *));
    ctx->heap = mrc_calloc(ctx, s->max_qps, sizeof(mrc_qp *));
    ctx->mrs = mrc_calloc(ctx, s->max_mrs, sizeof(mrc_mr *));
    ctx->mr_gens = mrc_calloc(ctx, s->max_mrs, sizeof(uint16_t));
    ctx->evp = mrc_calloc(ctx, s->max_ev_profiles, sizeof(mrc_ev_profile));
    ctx->events = mrc_calloc(ctx, s->ev_event_queue, sizeof(mrc_ev_event));
    ctx->psu_next = UINT64_MAX;
    ctx->ep_due = UINT64_MAX;
    (void)now;
    if (!ctx->qps || !ctx->heap || !ctx->mrs || !ctx->mr_gens || !ctx->evp || !ctx->events) {
        mrc_context_free(ctx);
        return MRC_ERR_NOMEM;
    }
    *pctx = ctx;
    return 0;
}

void mrc_context_free(mrc_context *ctx)
{
    if (!ctx) {
        return;
    }
    for (uint32_t i = 0; ctx->qps && i < ctx->set.max_qps; i++) {
        mrc_qp_free(ctx->qps[i]);
    }
    for (uint32_t i = 0; ctx->mrs && i < ctx->set.max_mrs; i++) {
        mrc_dealloc(ctx, ctx->mrs[i]);
    }
    for (uint32_t i = 0; ctx->evp && i < ctx->set.max_ev_profiles; i++) {
        mrc_dealloc(ctx, ctx->evp[i].evs);
    }
    while (ctx->cqs) {
        mrc_cq_free(ctx->cqs);
    }
    mrc_cc_free_all(ctx);
    mrc_dealloc(ctx, ctx->qps);
    mrc_dealloc(ctx, ctx->heap);
    mrc_dealloc(ctx, ctx->mrs);
    mrc_dealloc(ctx, ctx->mr_gens);
    mrc_dealloc(ctx, ctx->evp);
    mrc_dealloc(ctx, ctx->events);
    ctx->set.alloc.free(ctx, ctx->set.alloc.user);
}

/* Memory regions: a key is the slot and that slot's generation, and slots are taken in turn,
 * so a key comes back only after 4096 registrations of its slot (max_mrs times as many if
 * they are one at a time): a peer's stale key finds no region rather than a new one. */
int mrc_reg_mr(mrc_context *ctx, void *addr, size_t length, unsigned access, mrc_mr **pmr)
{
    if (!addr || length == 0 || (access & ~(MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE))) {
        return MRC_ERR_INVAL;
    }
    uint32_t n = ctx->set.max_mrs;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (ctx->mr_next + k) % n;
        if (ctx->mrs[i]) {
            continue;
        }
        mrc_mr *mr = mrc_calloc(ctx, 1, sizeof(*mr));
        if (!mr) {
            return MRC_ERR_NOMEM;
        }
        mr->ctx = ctx;
        mr->addr = addr;
        mr->len = length;
        mr->access = access;
        ctx->mr_gens[i] = (uint16_t)((ctx->mr_gens[i] + 1) & MR_GEN_MASK);
        mr->key = (uint32_t)ctx->mr_gens[i] << MR_SLOT_BITS | (i + 1);
        ctx->mrs[i] = mr;
        ctx->mr_next = (i + 1) % n;
        *pmr = mr;
        return 0;
    }
    return MRC_ERR_FULL;
}

uint32_t mrc_mr_lkey(const mrc_mr *mr)
{
    return mr->key;
}

uint32_t mrc_mr_rkey(const mrc_mr *mr)
{
    return mr->key;
}

int mrc_dereg_mr(mrc_mr *mr)
{
    if (!mr) {
        return 0;
    }
    if (mr->refs) {
        return MRC_ERR_STATE;
    }
    mrc_context *ctx = mr->ctx;
    ctx->mrs[(mr->key & MR_SLOT_MASK) - 1] = NULL;
    mrc_dealloc(ctx, mr);
    return 0;
}

int mrc_ev_profile_create(mrc_context *ctx, uint64_t id, const mrc_ev_profile_attr *a)
{
    if (!a || !a->evs || a->nevs == 0 || a->nevs > 1024 || a->min_active > a->nevs) {
        return MRC_ERR_INVAL;
    }
    for (unsigned i = 0; i < a->nevs; i++) {
        if (a->evs[i].port >= ctx->set.nports) {
            return MRC_ERR_INVAL;
        }
        /* values must be distinct: a SACK names its EV by value */
        for (unsigned j = 0; j < i; j++) {
            if (a->evs[j].val == a->evs[i].val) {
                return MRC_ERR_INVAL;
            }
        }
    }
    mrc_ev_profile *slot = NULL;
    for (uint32_t i = 0; i < ctx->set.max_ev_profiles; i++) {
        if (ctx->evp[i].used && ctx->evp[i].id == id) {
            return MRC_ERR_INVAL;
        }
        if (!ctx->evp[i].used && !slot) {
            slot = &ctx->evp[i];
        }
    }
    if (!slot) {
        return MRC_ERR_FULL;
    }
    slot->evs = mrc_alloc(ctx, a->nevs * sizeof(mrc_ev));
    if (!slot->evs) {
        return MRC_ERR_NOMEM;
    }
    memcpy(slot->evs, a->evs, a->nevs * sizeof(mrc_ev));
    slot->id = id;
    slot->nevs = a->nevs;
    slot->active = a->active;
    slot->min_active = a->min_active;
    slot->event_mask = a->event_mask;
    slot->used = true;
    return 0;
}

mrc_ev_profile *mrc_evp_find(const mrc_context *ctx, uint64_t id)
{
    for (uint32_t i = 0; i < ctx->set.max_ev_profiles; i++) {
        if (ctx->evp[i].used && ctx->evp[i].id == id) {
            return &ctx->evp[i];
        }
    }
    return NULL;
}

int mrc_cq_new(mrc_context *ctx, unsigned cqe, mrc_cq **pcq)
{
    if (cqe == 0 || cqe > (1u << 24)) {
        return MRC_ERR_INVAL;
    }
    mrc_cq *cq = mrc_calloc(ctx, 1, sizeof(*cq));
    if (!cq) {
        return MRC_ERR_NOMEM;
    }
    cq->ring = mrc_calloc(ctx, cqe, sizeof(mrc_wc));
    if (!cq->ring) {
        mrc_dealloc(ctx, cq);
        return MRC_ERR_NOMEM;
    }
    cq->ctx = ctx;
    cq->cap = cqe;
    cq->next = ctx->cqs;
    if (ctx->cqs) {
        ctx->cqs->prev = cq;
    }
    ctx->cqs = cq;
    *pcq = cq;
    return 0;
}

void mrc_cq_free(mrc_cq *cq)
{
    if (cq) {
        if (cq->prev) {
            cq->prev->next = cq->next;
        } else {
            cq->ctx->cqs = cq->next;
        }
        if (cq->next) {
            cq->next->prev = cq->prev;
        }
        mrc_dealloc(cq->ctx, cq->ring);
        mrc_dealloc(cq->ctx, cq);
    }
}

bool mrc_cq_push(mrc_cq *cq, const mrc_wc *wc)
{
    if (cq->count == cq->cap) {
        cq->overflows++;
        return false;
    }
    cq->ring[(cq->head + cq->count) % cq->cap] = *wc;
    cq->count++;
    return true;
}

int mrc_poll_cq(mrc_cq *cq, int n, mrc_wc *wc)
{
    int k = 0;
    while (k < n && cq->count) {
        wc[k++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->count--;
    }
    return k;
}

/* The timer heap: QPs by their next expiry. */
static void heap_swap(mrc_context *ctx, uint32_t a, uint32_t b)
{
    mrc_qp *t = ctx->heap[a];
    ctx->heap[a] = ctx->heap[b];
    ctx->heap[b] = t;
    ctx->heap[a]->heap_idx = a;
    ctx->heap[b]->heap_idx = b;
}

static void heap_fix(mrc_context *ctx, uint32_t i)
{
    while (i > 0 && ctx->heap[(i - 1) / 2]->expiry > ctx->heap[i]->expiry) {
        heap_swap(ctx, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < ctx->heap_len && ctx->heap[l]->expiry < ctx->heap[m]->expiry) {
            m = l;
        }
        if (r < ctx->heap_len && ctx->heap[r]->expiry < ctx->heap[m]->expiry) {
            m = r;
        }
        if (m == i) {
            return;
        }
        heap_swap(ctx, i, m);
        i = m;
    }
}

static void heap_remove(mrc_context *ctx, mrc_qp *qp)
{
    uint32_t i = qp->heap_idx;
    if (i == MRC_NONE) {
        return;
    }
    ctx->heap_len--;
    if (i != ctx->heap_len) {
        ctx->heap[i] = ctx->heap[ctx->heap_len];
        ctx->heap[i]->heap_idx = i;
        heap_fix(ctx, i);
    }
    qp->heap_idx = MRC_NONE;
}

/* Timers are lazy: the heap holds a deadline no later than the QP's real next one, so events
 * that only push deadlines later (most acknowledgements) need no heap work; when the stored
 * deadline fires early, the timer handler recomputes it. An earlier need is armed here. */
void mrc_qp_timer_set(mrc_qp *qp, uint64_t deadline)
{
    mrc_context *ctx = qp->ctx;
    qp->expiry = deadline;
    if (qp->heap_idx == MRC_NONE) {
        qp->heap_idx = ctx->heap_len;
        ctx->heap[ctx->heap_len++] = qp;
    }
    heap_fix(ctx, qp->heap_idx);
}

void mrc_qp_timer_update(mrc_qp *qp)
{
    mrc_context *ctx = qp->ctx;
    uint64_t e = UINT64_MAX;
    if (qp->state == MRC_QPS_RTR || qp->state == MRC_QPS_RTS) {
        uint64_t rev = mrc_ev_rev_due(qp);
        e = mrc_req_expiry(qp);
        e = rev < e ? rev : e;
    }
    qp->expiry = e;
    if (e == UINT64_MAX) {
        heap_remove(ctx, qp);
    } else if (qp->heap_idx == MRC_NONE) {
        qp->heap_idx = ctx->heap_len;
        ctx->heap[ctx->heap_len++] = qp;
        heap_fix(ctx, qp->heap_idx);
    } else {
        heap_fix(ctx, qp->heap_idx);
    }
}

static void ring_remove(mrc_context *ctx, unsigned r, mrc_qp *qp)
{
    mrc_ring_link *l = &qp->rl[r];
    mrc_ring *ring = &ctx->ring[r];
    if (!l->in) {
        return;
    }
    if (l->next == qp) {
        ring->cur = NULL;
    } else {
        l->prev->rl[r].next = l->next;
        l->next->rl[r].prev = l->prev;
        if (ring->cur == qp) {
            ring->cur = l->next;
        }
    }
    l->in = false;
    ring->n--;
}

static void ring_add(mrc_context *ctx, unsigned r, mrc_qp *qp)
{
    mrc_ring_link *l = &qp->rl[r];
    mrc_ring *ring = &ctx->ring[r];
    if (l->in) {
        return;
    }
    l->in = true;
    ring->n++;
    if (!ring->cur) {
        l->next = l->prev = qp;
        ring->cur = qp;
        return;
    }
    /* join just behind the cursor: served last in this round */
    mrc_qp *cur = ring->cur;
    l->next = cur;
    l->prev = cur->rl[r].prev;
    l->prev->rl[r].next = qp;
    cur->rl[r].prev = qp;
}

void mrc_qp_unlink(mrc_qp *qp)
{
    heap_remove(qp->ctx, qp);
    ring_remove(qp->ctx, MRC_RING_DATA, qp);
    ring_remove(qp->ctx, MRC_RING_CTRL, qp);
}

void mrc_qp_ready(mrc_qp *qp)
{
    ring_add(qp->ctx, MRC_RING_DATA, qp);
}

void mrc_qp_ctrl_ready(mrc_qp *qp)
{
    ring_add(qp->ctx, MRC_RING_CTRL, qp);
}

void mrc_ev_event_push(mrc_context *ctx, const mrc_ev_event *e)
{
    if (ctx->set.cb.ev_event) {
        ctx->set.cb.ev_event(ctx->set.user, e);
    }
    if (ctx->ev_count == ctx->set.ev_event_queue) {
        ctx->st.ev_events_dropped++;
        return;
    }
    ctx->events[(ctx->ev_head + ctx->ev_count) % ctx->set.ev_event_queue] = *e;
    ctx->ev_count++;
}

int mrc_poll_ev_events(mrc_context *ctx, mrc_ev_event *events, int n)
{
    int k = 0;
    while (k < n && ctx->ev_count) {
        events[k++] = ctx->events[ctx->ev_head];
        ctx->ev_head = (ctx->ev_head + 1) % ctx->set.ev_event_queue;
        ctx->ev_count--;
    }
    return k;
}

void mrc_ctx_get_stats(const mrc_context *ctx, mrc_ctx_stats *stats)
{
    *stats = ctx->st;
}

static mrc_qp *qp_by_num(mrc_context *ctx, uint32_t qpn)
{
    if (qpn < MRC_MIN_QPN || qpn - MRC_MIN_QPN >= ctx->set.max_qps) {
        return NULL;
    }
    return ctx->qps[qpn - MRC_MIN_QPN];
}

/* Endpoint operations: node-scoped, best effort, never retransmitted. */
static mrc_ep_out *ep_queue(mrc_context *ctx)
{
    if (ctx->ep_count == MRC_EP_SLOTS) {
        return NULL;
    }
    mrc_ep_out *o = &ctx->ep_out[(ctx->ep_head + ctx->ep_count) % MRC_EP_SLOTS];
    ctx->ep_count++;
    memset(o, 0, sizeof(*o));
    return o;
}

int mrc_ep_send(mrc_context *ctx, uint8_t ep_op, const uint8_t dst[16], uint32_t ev, unsigned port,
                mrc_qp *qp, uint64_t now, uint16_t *preq_id)
{
    if (port >= ctx->set.nports) {
        return MRC_ERR_INVAL;
    }
    mrc_ep_pending *pend = NULL;
    if (ep_op == MRC_EP_OP_EV_PROBE) {
        for (unsigned i = 0; i < MRC_EP_SLOTS && !pend; i++) {
            pend = ctx->ep_pend[i].used ? NULL : &ctx->ep_pend[i];
        }
        if (!pend) {
            return MRC_ERR_FULL;
        }
    }
    mrc_ep_out *o = ep_queue(ctx);
    if (!o) {
        return MRC_ERR_FULL;
    }
    o->req_id = ++ctx->ep_seq;
    o->op = MRC_OP_EP_REQ;
    o->ep_op = ep_op;
    o->port = (uint8_t)port;
    o->ev = ev;
    o->port_status = ctx->ports_up;
    o->ts = mrc_ts_now(now);
    memcpy(o->dst, dst, 16);
    if (pend) {
        *pend = (mrc_ep_pending){.req_id = o->req_id,
                                 .used = true,
                                 .ev = ev,
                                 .port = (uint8_t)port,
                                 .sent = now,
                                 .refresh = qp != NULL,
                                 .qp = qp};
        ctx->ep_pend_count++;
        if (now + ctx->set.ep_timeout_ns < ctx->ep_due) {
            ctx->ep_due = now + ctx->set.ep_timeout_ns;
        }
    }
    if (preq_id) {
        *preq_id = o->req_id;
    }
    return 0;
}

int mrc_ep_probe(mrc_context *ctx, const uint8_t dst[16], uint32_t ev, unsigned port, uint64_t now,
                 uint16_t *preq_id)
{
    return mrc_ep_send(ctx, MRC_EP_OP_EV_PROBE, dst, ev, port, NULL, now, preq_id);
}

void mrc_ep_forget(mrc_context *ctx, const mrc_qp *qp)
{
    for (unsigned i = 0; ctx->ep_pend_count && i < MRC_EP_SLOTS; i++) {
        if (ctx->ep_pend[i].used && ctx->ep_pend[i].qp == qp) {
            ctx->ep_pend[i].qp = NULL;
        }
    }
}

static void ep_result(mrc_context *ctx, mrc_ep_pending *p, bool ok, uint64_t rtt, uint64_t now)
{
    mrc_ep_result r = {
        .time = now, .req_id = p->req_id, .ev = p->ev, .port = p->port, .ok = ok, .rtt_ns = rtt};
    p->used = false;
    if (--ctx->ep_pend_count == 0) {
        ctx->ep_due = UINT64_MAX;
    }
    if (p->refresh) {
        /* a reverse-EV refresh: a plane whose probe came back gets that EV for its control */
        if (ok && p->qp) {
            uint32_t evi = mrc_ev_lookup(p->qp, p->ev);
            if (evi != MRC_NONE && p->qp->evs[evi].state == MRC_EV_GOOD) {
                p->qp->rev[p->port] = (uint16_t)evi;
            }
        }
        return;
    }
    if (!ok) {
        ctx->st.ep_timeouts++;
    }
    if (ctx->set.cb.ep_result) {
        ctx->set.cb.ep_result(ctx->set.user, &r);
    }
    if (ctx->ep_res_count < MRC_EP_SLOTS) {
        ctx->ep_res[(ctx->ep_res_head + ctx->ep_res_count) % MRC_EP_SLOTS] = r;
        ctx->ep_res_count++;
    }
}

int mrc_poll_ep_results(mrc_context *ctx, mrc_ep_result *results, int n)
{
    int k = 0;
    while (k < n && ctx->ep_res_count) {
        results[k++] = ctx->ep_res[ctx->ep_res_head];
        ctx->ep_res_head = (ctx->ep_res_head + 1) % MRC_EP_SLOTS;
        ctx->ep_res_count--;
    }
    return k;
}

/* A Port Status Update from the node at |src|: its QPs stop using the planes it lost. */
static void on_psu(mrc_context *ctx, const uint8_t src[16], uint32_t status, uint64_t now)
{
    ctx->st.psu_rcvd++;
    for (uint32_t i = 0; i < ctx->set.max_qps; i++) {
        mrc_qp *qp = ctx->qps[i];
        if (!qp || qp->state < MRC_QPS_RTR || qp->state == MRC_QPS_ERR) {
            continue;
        }
        bool peer = false;
        for (unsigned p = 0; p < qp->attr.ah.nports && !peer; p++) {
            peer = memcmp(qp->attr.ah.dgid[p], src, 16) == 0;
        }
        if (!peer || qp->remote_ports == status) {
            continue;
        }
        qp->remote_ports = status;
        mrc_req_port_lost(qp, mrc_ev_port_mask(qp), now);
        mrc_qp_ready(qp);
    }
}

static int on_ep(mrc_context *ctx, const mrc_pkt *pkt, const mrc_rx_info *info, uint64_t now)
{
    if (pkt->bth.opcode == MRC_OP_EP_REQ) {
        ctx->st.ep_reqs_rcvd++;
        if (pkt->erth.op == MRC_EP_OP_PSU) {
            on_psu(ctx, pkt->ip.src, pkt->erth.port_status, now);
            return 0;
        }
        /* answer on the request's own EV and port: our plan's EVs name the same T1 both ways */
        mrc_ep_out *o = ep_queue(ctx);
        if (!o) {
            return 0;
        }
        o->req_id = (uint16_t)pkt->bth.psn;
        o->op = MRC_OP_EP_RSP;
        o->ep_op = MRC_EP_OP_EV_PROBE;
        o->port = info && info->port < ctx->set.nports ? info->port : 0;
        o->ev = ((pkt->ip.flowlabel & 0xffffu) << 16) | pkt->udp.sport;
        o->ts = pkt->erth.ts.ts;
        memcpy(o->dst, pkt->ip.src, 16);
        return 0;
    }
    ctx->st.ep_rsps_rcvd++;
    for (unsigned i = 0; i < MRC_EP_SLOTS; i++) {
        mrc_ep_pending *p = &ctx->ep_pend[i];
        if (p->used && p->req_id == (uint16_t)pkt->bth.psn) {
            uint64_t rtt = mrc_ts_rtt(pkt->eeth.ts, now);
            ep_result(ctx, p, true, rtt > pkt->eeth.svc_time_ns ? rtt - pkt->eeth.svc_time_ns : 0,
                      now);
            return 0;
        }
    }
    return 0;
}

static int garbage(mrc_context *ctx, int err)
{
    ctx->st.garbage++;
    ctx->st.garbage_by_err[(unsigned)-err & 7]++;
    return MRC_ERR_PROTO;
}

/* The packets other than data and SACKs, by the full decoder. */
static __attribute__((noinline)) int read_other(mrc_context *ctx, const uint8_t *data,
                                                size_t datalen, const mrc_rx_info *info,
                                                unsigned flags, uint64_t now)
{
    mrc_pkt pkt;
    int rv = mrc_wire_decode(data, datalen, ctx->set.udp_port, flags, &pkt);
    if (rv != 0) {
        return garbage(ctx, rv);
    }
    mrc_rx_info dflt = {.port = 0, .ecn = pkt.ip.tc & 3, .dscp = pkt.ip.tc >> 2};
    info = info ? info : &dflt;
    uint8_t op = pkt.bth.opcode;
    if (op == MRC_OP_EP_REQ || op == MRC_OP_EP_RSP) {
        return on_ep(ctx, &pkt, info, now);
    }
    mrc_qp *qp = qp_by_num(ctx, pkt.bth.dqpn);
    if (!qp) {
        ctx->st.no_qp++;
        return MRC_ERR_PROTO;
    }
    bool rtr = qp->state == MRC_QPS_RTR || qp->state == MRC_QPS_RTS;
    bool rts = qp->state == MRC_QPS_RTS;
    switch (op) {
    case MRC_OP_NACK:
        if (!rts) {
            break;
        }
        return mrc_req_on_nack(qp, &pkt, now);
    case MRC_OP_ACK:
        if (!rts) {
            break;
        }
        return mrc_req_on_ack(qp, &pkt, now);
    default: /* MRC_OP_PROBE: mrc_wire_decode_fast took data and SACKs */
        if (!rtr) {
            break;
        }
        mrc_rsp_on_probe(qp, &pkt, info, now);
        return 0;
    }
    ctx->st.bad_state++;
    return MRC_ERR_PROTO;
}

static inline int read_one(mrc_context *ctx, const uint8_t *data, size_t datalen,
                           const mrc_rx_info *info, uint64_t now)
{
    const mrc_settings *s = &ctx->set;
    ctx->st.pkts_rcvd++;
    bool trimmed = info && (info->dscp == s->dscp_trimmed || info->dscp == s->dscp_trimmed_lasthop);
    unsigned flags = (s->icrc ? 0 : MRC_DECODE_NO_ICRC) | (trimmed ? MRC_DECODE_TRIMMED : 0);
    mrc_fast_rx rx;
    int kind = mrc_wire_decode_fast(data, datalen, s->udp_port, flags, &rx);
    if (kind < 0) {
        return garbage(ctx, kind);
    }
    if (kind == MRC_FAST_OTHER) {
        return read_other(ctx, data, datalen, info, flags, now);
    }
    mrc_qp *qp = qp_by_num(ctx, kind == MRC_FAST_DATA ? rx.data.dqpn : rx.sack.dqpn);
    if (!qp) {
        ctx->st.no_qp++;
        return MRC_ERR_PROTO;
    }
    if (kind == MRC_FAST_SACK) {
        if (qp->state != MRC_QPS_RTS) {
            ctx->st.bad_state++;
            return MRC_ERR_PROTO;
        }
        return mrc_req_on_sack(qp, &rx.sack.h, now);
    }
    if (qp->state != MRC_QPS_RTR && qp->state != MRC_QPS_RTS) {
        ctx->st.bad_state++;
        return MRC_ERR_PROTO;
    }
    mrc_rx_info dflt;
    if (!info) {
        dflt = (mrc_rx_info){.port = 0, .ecn = rx.data.h.tc & 3, .dscp = rx.data.h.tc >> 2};
        info = &dflt;
    }
    mrc_rsp_on_data(qp, &rx.data, info, trimmed || rx.data.trimmed, now);
    return 0;
}

int mrc_read_pkt(mrc_context *ctx, const uint8_t *data, size_t datalen, const mrc_rx_info *info,
                 uint64_t now)
{
    return read_one(ctx, data, datalen, info, now);
}

int mrc_read_pkts(mrc_context *ctx, const mrc_rx_pkt *pkts, unsigned n, uint64_t now)
{
    int ok = 0;
    for (unsigned k = 0; k < n; k++) {
        ok += read_one(ctx, pkts[k].data, pkts[k].len, &pkts[k].info, now) == 0;
    }
    return ok;
}

static int ep_write(mrc_context *ctx, uint8_t *dest, size_t destlen, uint32_t port_mask,
                    mrc_tx_info *info, uint64_t now)
{
    mrc_ep_out *o = &ctx->ep_out[ctx->ep_head];
    if (!(port_mask & ctx->ports_up & (1u << o->port))) {
        return 0;
    }
    mrc_pkt pkt;
    memset(&pkt, 0, sizeof(pkt));
    pkt.ip.tc = (uint8_t)(ctx->set.dscp_control << 2);
    pkt.ip.flowlabel = o->ev >> 16;
    pkt.ip.nxt = 17;
    pkt.ip.hlim = 64;
    memcpy(pkt.ip.src, ctx->set.addr[o->port], 16);
    memcpy(pkt.ip.dst, o->dst, 16);
    pkt.udp.sport = (uint16_t)o->ev;
    pkt.udp.dport = ctx->set.udp_port;
    pkt.bth.opcode = o->op;
    pkt.bth.pkey = 0xffff;
    pkt.bth.dqpn = MRC_EP_QPN;
    pkt.bth.psn = o->req_id;
    if (o->op == MRC_OP_EP_REQ) {
        pkt.has = MRC_HAS_ERTH;
        pkt.erth.op = o->ep_op;
        pkt.erth.port_status = o->port_status;
        pkt.erth.ts.ts = o->ts;
        pkt.erth.ts.fmt = MRC_TS_FORMAT;
        if (o->ep_op == MRC_EP_OP_PSU) {
            ctx->st.psu_sent++;
        }
    } else {
        pkt.has = MRC_HAS_EETH;
        pkt.eeth.op = o->ep_op;
        pkt.eeth.entropy = o->ev;
        pkt.eeth.ts = o->ts;
    }
    int n = mrc_pkt_emit(ctx, dest, destlen, NULL, &pkt, info);
    if (n < 0) {
        return n;
    }
    info->ev = o->ev;
    info->port = o->port;
    info->control = o->op == MRC_OP_EP_RSP;
    info->qpn = 0;
    ctx->ep_head = (ctx->ep_head + 1) % MRC_EP_SLOTS;
    ctx->ep_count--;
    (void)now;
    return n;
}

/* One packet from ring |r|: each QP sends one, then the next QP's turn; a QP with nothing to
 * send leaves the ring until an event gives it something, one blocked only by the port mask
 * stays. Returns 0 when none had a packet for these ports. */
static inline __attribute__((always_inline)) int ring_write(mrc_context *ctx, unsigned r,
                                                            uint8_t *dest, size_t destlen,
                                                            uint32_t port_mask, mrc_tx_info *info,
                                                            uint64_t now)
{
    mrc_ring *ring = &ctx->ring[r];
    for (uint32_t n = ring->n; n > 0 && ring->cur; n--) {
        mrc_qp *qp = ring->cur;
        int rv = r == MRC_RING_CTRL ? mrc_rsp_write(qp, dest, destlen, port_mask, info, now)
                                    : mrc_req_write(qp, dest, destlen, port_mask, info, now);
        if (rv == 0) {
            ring_remove(ctx, r, qp);
            continue;
        }
        ring->cur = qp->rl[r].next;
        if (rv == MRC_BLOCKED) {
            continue;
        }
        if (rv > 0) {
            ctx->st.pkts_sent++;
            ctx->ctrl_run = r == MRC_RING_CTRL ? ctx->ctrl_run + 1 : 0;
        }
        return rv;
    }
    return 0;
}

/* Control packets go first, up to ctrl_weight of them per data packet when both wait: an answer
 * held behind data delays every sender's window and loss detection
 * (lib/mrc/README.md#congestion-control). */
static inline bool ctrl_due(const mrc_context *ctx)
{
    return ctx->ring[MRC_RING_CTRL].n &&
           (ctx->ctrl_run < ctx->set.ctrl_weight || !ctx->ring[MRC_RING_DATA].n);
}

static inline __attribute__((always_inline)) int write_any(mrc_context *ctx, uint8_t *dest,
                                                           size_t destlen, uint32_t port_mask,
                                                           mrc_tx_info *info, uint64_t now)
{
    if (ctx->ep_count) {
        int n = ep_write(ctx, dest, destlen, port_mask, info, now);
        if (n != 0) {
            ctx->st.pkts_sent += n > 0;
            return n;
        }
    }
    bool ctrl = ctrl_due(ctx);
    int rv = 0;
    if (ctrl && (rv = ring_write(ctx, MRC_RING_CTRL, dest, destlen, port_mask, info, now)) != 0) {
        return rv;
    }
    if ((rv = ring_write(ctx, MRC_RING_DATA, dest, destlen, port_mask, info, now)) != 0) {
        return rv;
    }
    return ctrl ? 0 : ring_write(ctx, MRC_RING_CTRL, dest, destlen, port_mask, info, now);
}

static inline bool anything(const mrc_context *ctx)
{
    return ctx->ring[MRC_RING_DATA].n || ctx->ring[MRC_RING_CTRL].n || ctx->ep_count;
}

int mrc_write_pkt(mrc_context *ctx, uint8_t *dest, size_t destlen, uint32_t port_mask,
                  mrc_tx_info *info, uint64_t now)
{
    /* the caller asks until told there is nothing: make that answer cheap */
    if (!anything(ctx)) {
        return 0;
    }
    return write_any(ctx, dest, destlen, port_mask, info, now);
}

int mrc_write_pkts(mrc_context *ctx, mrc_tx_pkt *pkts, unsigned n, uint32_t port_mask, uint64_t now)
{
    unsigned k = 0;
    while (k < n && anything(ctx)) {
        mrc_qp *qp = ctx->ring[MRC_RING_DATA].cur;
        if (qp && !ctx->ep_count && !ctrl_due(ctx)) {
            /* the QP's turn: as many of its packets as it has, up to the burst, or one if
             * control packets wait (their turn comes after each data packet) */
            unsigned room = ctx->ring[MRC_RING_CTRL].n ? 1 : n - k;
            int m = mrc_req_write_burst(qp, pkts + k, room, port_mask, now);
            if (m > 0) {
                ctx->ring[MRC_RING_DATA].cur = qp->rl[MRC_RING_DATA].next;
                ctx->st.pkts_sent += (unsigned)m;
                ctx->ctrl_run = 0;
                k += (unsigned)m;
                continue;
            }
            /* nothing, blocked or an error: the general path settles it */
        }
        int rv = write_any(ctx, pkts[k].data, pkts[k].room, port_mask, &pkts[k].info, now);
        if (rv <= 0) {
            if (k == 0 && rv < 0) {
                return rv;
            }
            break;
        }
        pkts[k++].len = (size_t)rv;
    }
    return (int)k;
}

uint64_t mrc_get_expiry(const mrc_context *ctx)
{
    uint64_t e = ctx->heap_len ? ctx->heap[0]->expiry : UINT64_MAX;
    if (ctx->psu_next < e) {
        e = ctx->psu_next;
    }
    return ctx->ep_due < e ? ctx->ep_due : e;
}

/* Times out the EV probes due by |now| and finds when the next is. The host asks for the
 * expiry after every event, so that must not scan the slots: at 1 % loss some answer is
 * nearly always missing (lib/mrc/README.md#timers-and-retries). */
static void ep_expire(mrc_context *ctx, uint64_t now)
{
    uint64_t due = UINT64_MAX;
    ctx->ep_due = UINT64_MAX; /* a result's callback may send a probe, which lowers it */
    for (unsigned i = 0; ctx->ep_pend_count && i < MRC_EP_SLOTS; i++) {
        mrc_ep_pending *p = &ctx->ep_pend[i];
        if (!p->used) {
            continue;
        }
        uint64_t at = p->sent + ctx->set.ep_timeout_ns;
        if (at <= now) {
            ep_result(ctx, p, false, 0, now);
        } else if (at < due) {
            due = at;
        }
    }
    ctx->ep_due = due < ctx->ep_due ? due : ctx->ep_due;
}

/* Port Status Updates go to every peer node once per change, repeated a few times since they
 * are best effort. */
static void psu_send(mrc_context *ctx, uint64_t now)
{
    const uint8_t *sent[64];
    unsigned nsent = 0;
    for (uint32_t i = 0; i < ctx->set.max_qps; i++) {
        mrc_qp *qp = ctx->qps[i];
        if (!qp || qp->state < MRC_QPS_RTR || qp->state == MRC_QPS_ERR) {
            continue;
        }
        uint32_t up = mrc_ev_port_mask(qp);
        unsigned port = 0;
        while (port < qp->attr.ah.nports && !(up & (1u << port))) {
            port++;
        }
        if (port == qp->attr.ah.nports) {
            continue;
        }
        const uint8_t *peer = qp->attr.ah.dgid[0];
        bool dup = false;
        for (unsigned k = 0; k < nsent && !dup; k++) {
            dup = memcmp(sent[k], peer, 16) == 0;
        }
        if (dup) {
            continue;
        }
        if (nsent < 64) {
            sent[nsent++] = peer;
        }
        uint32_t evi = mrc_ev_reverse(qp, port);
        mrc_ep_send(ctx, MRC_EP_OP_PSU, qp->attr.ah.dgid[port], qp->evs[evi].val, port, NULL, now,
                    NULL);
    }
}

int mrc_handle_expiry(mrc_context *ctx, uint64_t now)
{
    while (ctx->heap_len && ctx->heap[0]->expiry <= now) {
        mrc_qp *qp = ctx->heap[0];
        mrc_req_on_timer(qp, now);
        if (qp->heap_idx == 0 && qp->expiry <= now) {
            /* nothing moved the deadline: do not spin on it */
            qp->expiry = now + 1;
            heap_fix(ctx, 0);
        }
    }
    if (ctx->psu_next <= now) {
        psu_send(ctx, now);
        ctx->psu_next = --ctx->psu_left ? now + ctx->set.psu_interval_ns : UINT64_MAX;
    }
    if (ctx->ep_due <= now) {
        ep_expire(ctx, now);
    }
    return 0;
}

int mrc_port_set_state(mrc_context *ctx, unsigned port, bool up, uint64_t now)
{
    if (port >= ctx->set.nports) {
        return MRC_ERR_INVAL;
    }
    uint32_t before = ctx->ports_up;
    if (up) {
        ctx->ports_up |= 1u << port;
    } else {
        ctx->ports_up &= ~(1u << port);
    }
    if (before == ctx->ports_up) {
        return 0;
    }
    for (uint32_t i = 0; i < ctx->set.max_qps; i++) {
        mrc_qp *qp = ctx->qps[i];
        if (qp && qp->state == MRC_QPS_RTS) {
            mrc_req_port_lost(qp, mrc_ev_port_mask(qp), now);
            mrc_qp_ready(qp);
        }
    }
    ctx->psu_left = ctx->set.psu_repeat;
    ctx->psu_next = ctx->psu_left ? now : UINT64_MAX;
    return 0;
}

uint32_t mrc_port_mask(const mrc_context *ctx)
{
    return ctx->ports_up;
}
