/* SPDX-License-Identifier: MIT */
/* Hosts: one libmrc engine per host over its plane ports, unchanged, and the RoCE QP ends it
 * holds. A NIC port pulls its next packet from them when it is free; a packet that arrives
 * goes in with the ECN and DSCP the fabric left on it. The engine's EV becomes the outer
 * uSID address through the fabric model's per-pair template. */
#include <stdlib.h>
#include <string.h>

#include "sim_world.h"
#include "util.h"

#define EV_PROFILE 1
#define CC_PROFILE 1
#define RQ_DEPTH 256

static void *eng_malloc(size_t n, void *user)
{
    (void)user;
    return malloc(n);
}

static void eng_free(void *p, void *user)
{
    (void)user;
    free(p);
}

static uint64_t eng_rand(void *user)
{
    return sim_rng_next(user);
}

static inline uint64_t ns_of(uint64_t ps)
{
    return ps / SIM_PS_PER_NS;
}

/* The engine's EVs: the same number on every plane the host is cabled on, each a (T1, salt)
 * of that plane so that they name all its paths, distinct by value. */
static mrc_ev *make_evs(const sim_world *w, const sim_host *h, unsigned *pn)
{
    const sim_mrc_cfg *m = &w->sc->mrc;
    unsigned planes = 0;
    for (unsigned p = 0; p < w->planes; p++) {
        planes += h->nic[p] != SIM_NONE;
    }
    unsigned per = planes ? (m->evs + planes - 1) / planes : 0, n = 0;
    mrc_ev *evs = util_xcalloc(per * planes + 1, sizeof(mrc_ev));
    for (unsigned p = 0; p < w->planes; p++) {
        if (h->nic[p] == SIM_NONE) {
            continue;
        }
        uint32_t nt1 = fab_topo_nt1(w->topo, p);
        nt1 = nt1 ? nt1 : 1;
        for (unsigned i = 0; i < per; i++) {
            evs[n].val = fab_ev_make(w->plan, p, i % nt1, i / nt1);
            evs[n].port = (uint8_t)p;
            n++;
        }
    }
    *pn = n;
    return evs;
}

/* Serialization time of |bytes| at |gbps|, in ps. */
static uint64_t ser_ps(uint64_t bytes, double gbps)
{
    return (uint64_t)((double)bytes * 8000.0 / gbps);
}

/* NSCC's base RTT by default: the longest path's unloaded round trip of an MTU packet
 * (lib/mrc/README.md#congestion-control), host - T0 - T1 - T0 - host and a SACK back, store and
 * forward at every hop. */
static uint64_t base_rtt_ps(const sim_scenario *sc)
{
    const sim_net_cfg *n = &sc->net;
    uint64_t data = sc->mrc.mtu + SIM_MRC_HDR + SIM_OUTER_LEN + SIM_ETH_OVERHEAD;
    uint64_t sack = SIM_MRC_SACK + SIM_OUTER_LEN + SIM_ETH_OVERHEAD;
    uint64_t hops = 2 * ser_ps(data, n->host.gbps) + 2 * ser_ps(data, n->fabric.gbps) +
                    2 * ser_ps(sack, n->host.gbps) + 2 * ser_ps(sack, n->fabric.gbps);
    return hops + 4 * (n->host.delay_ps + n->fabric.delay_ps) + 6 * n->switch_latency_ps;
}

static int host_engine(sim_world *w, sim_host *h, char *errmsg, size_t errmsglen)
{
    const sim_mrc_cfg *m = &w->sc->mrc;
    mrc_settings set;
    mrc_settings_default(&set);
    set.alloc = (mrc_allocator){eng_malloc, eng_free, NULL};
    set.cb.seed = eng_rand;
    set.user = &w->rng;
    set.nports = w->planes;
    set.icrc = false; /* the simulator carries no payload bytes */
    set.udp_checksum = false;
    set.udp_port = w->plan->udp_port;
    /* the simulated fabric routes by uSID: an EV's T1 is the same both ways */
    set.ev_symmetric = true;
    set.max_qps = h->nqps + 4;
    set.max_mrs = 4;
    if (m->sack_every) {
        set.sack_every = m->sack_every;
    }
    if (m->reorder_ps) {
        set.reorder_ns = m->reorder_ps / SIM_PS_PER_NS;
    }
    if (m->ev_loss_pct >= 0) {
        set.ev_loss_pct = (unsigned)m->ev_loss_pct;
    }
    for (unsigned p = 0; p < w->planes; p++) {
        if (h->nic[p] != SIM_NONE) {
            fab_host_addr(w->topo, h->id, p, set.addr[p]);
        }
    }
    unsigned nevs;
    mrc_ev *evs = make_evs(w, h, &nevs);
    mrc_ev_profile_attr ea = {.evs = evs,
                              .nevs = nevs,
                              .active = m->active,
                              .min_active = m->min_active,
                              .event_mask = 1u << MRC_EV_GOOD | 1u << MRC_EV_ASSUMED_BAD};
    mrc_cc_profile_attr ca = {.algorithm = m->nscc ? "uet-1.0-nscc" : "none"};
    if (m->nscc) {
        unsigned planes = 0;
        for (unsigned p = 0; p < w->planes; p++) {
            planes += h->nic[p] != SIM_NONE;
        }
        /* one QP sprays over every plane port of the host */
        ca.nscc.link_gbps = w->sc->net.host.gbps * (planes ? planes : 1);
        ca.nscc.base_rtt_ns =
            (m->base_rtt_ps ? m->base_rtt_ps : base_rtt_ps(w->sc)) / SIM_PS_PER_NS;
        ca.nscc.target_delay_ns = m->target_ps / SIM_PS_PER_NS;
        ca.nscc.max_cwnd = m->max_cwnd;
    }
    int rv;
    if ((rv = mrc_context_new(&set, 0, &h->ctx)) != 0 ||
        (rv = mrc_ev_profile_create(h->ctx, EV_PROFILE, &ea)) != 0 ||
        (rv = mrc_cc_profile_create(h->ctx, CC_PROFILE, &ca)) != 0 ||
        (rv = mrc_cq_new(h->ctx, (h->nqps + 1) * (SIM_SQ_DEPTH + RQ_DEPTH), &h->cq)) != 0 ||
        (rv = mrc_reg_mr(h->ctx, w->arena, w->arena_len,
                         MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &h->mr)) != 0) {
        snprintf(errmsg, errmsglen, "host %s: the engine: %s", fab_host_name(w->topo, h->id),
                 mrc_strerror(rv));
    }
    free(evs);
    h->qpmap_len = set.max_qps + 4096;
    h->qpmap = util_xmalloc(h->qpmap_len * sizeof(uint32_t));
    memset(h->qpmap, 0xff, h->qpmap_len * sizeof(uint32_t));
    return rv ? -1 : 0;
}

int sim_host_build(sim_world *w, char *errmsg, size_t errmsglen)
{
    mrc_settings def;
    mrc_settings_default(&def);
    w->dscp_trim = def.dscp_trimmed;
    w->dscp_trim_last = def.dscp_trimmed_lasthop;
    for (uint32_t i = 0; i < w->nhosts; i++) {
        sim_host *h = &w->hosts[i];
        h->timer_at = SIM_NEVER;
        for (unsigned p = 0; p < w->planes; p++) {
            fab_switch sw;
            if (h->t0[p] != SIM_NONE && fab_switch_get(w->topo, h->t0[p], &sw) == 0) {
                h->t0_index[p] = (uint16_t)sw.index;
            }
        }
        if (h->mrc && host_engine(w, h, errmsg, errmsglen) != 0) {
            return -1;
        }
    }
    return 0;
}

void sim_host_free(sim_world *w)
{
    for (uint32_t i = 0; w->hosts && i < w->nhosts; i++) {
        sim_host *h = &w->hosts[i];
        mrc_context_free(h->ctx); /* its QPs, CQs and regions with it */
        free(h->qpmap);
        free(h->roce);
    }
    free(w->hosts);
    w->hosts = NULL;
}

static void arm_timer(sim_world *w, sim_host *h)
{
    uint64_t e = mrc_get_expiry(h->ctx);
    if (e == UINT64_MAX) {
        return;
    }
    uint64_t at = e * SIM_PS_PER_NS;
    at = at < w->q.now ? w->q.now : at;
    if (at < h->timer_at) {
        h->timer_at = at;
        sim_evq_push(&w->q, at, SIM_EV_TARGET(SIM_EV_HOST_TIMER, h->id));
    }
}

static int qp_attrs(sim_world *w, mrc_qp *qp, uint32_t self, uint32_t peer, uint32_t peer_qpn)
{
    const sim_mrc_cfg *m = &w->sc->mrc;
    mrc_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = MRC_QPS_INIT;
    a.profile.ev_profile_id = EV_PROFILE;
    a.profile.cc_profile_id = CC_PROFILE;
    int rv = mrc_modify_qp(qp, &a, MRC_QP_STATE | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID, 0);
    if (rv != 0) {
        return rv;
    }
    a.qp_state = MRC_QPS_RTR;
    a.dest_qp_num = peer_qpn;
    a.path_mtu = m->mtu;
    a.access_flags = MRC_ACCESS_REMOTE_WRITE;
    a.ah.nports = w->planes;
    for (unsigned p = 0; p < w->planes; p++) {
        fab_host_addr(w->topo, self, p, a.ah.sgid[p]);
        fab_host_addr(w->topo, peer, p, a.ah.dgid[p]);
    }
    a.mpr.mpr_dest = (uint8_t)m->mpr;
    a.wimm.max_wimm_dest = RQ_DEPTH;
    rv = mrc_modify_qp(qp, &a,
                       MRC_QP_STATE | MRC_QP_DEST_QPN | MRC_QP_RQ_PSN | MRC_QP_PATH_MTU |
                           MRC_QP_ACCESS_FLAGS | MRC_QP_AV | MRC_QP_MPR_DEST | MRC_QP_MAX_WIMM_DEST,
                       0);
    if (rv != 0) {
        return rv;
    }
    a.qp_state = MRC_QPS_RTS;
    a.mpr.mpr = (uint8_t)m->mpr;
    a.wimm.max_wimm = RQ_DEPTH;
    a.timeout = (uint8_t)m->timeout;
    a.retry.linear_cnt = (uint8_t)m->retry_linear;
    a.retry.exp_cnt = (uint8_t)m->retry_exp;
    return mrc_modify_qp(qp, &a,
                         MRC_QP_STATE | MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM |
                             MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT,
                         0);
}

static void qpmap_set(sim_host *h, mrc_qp *qp, uint32_t val)
{
    uint32_t n = mrc_qp_num(qp);
    if (n < h->qpmap_len) {
        h->qpmap[n] = val;
    }
}

int sim_host_mrc_connect(sim_world *w, sim_flow *f)
{
    sim_host *s = &w->hosts[f->src], *d = &w->hosts[f->dst];
    mrc_qp_init_attr qa = {.max_send_wr = SIM_SQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1};
    int rv;
    qa.send_cq = qa.recv_cq = s->cq;
    if ((rv = mrc_qp_new(s->ctx, &qa, &f->sqp)) != 0) {
        return rv;
    }
    qa.send_cq = qa.recv_cq = d->cq;
    if ((rv = mrc_qp_new(d->ctx, &qa, &f->rqp)) != 0) {
        return rv;
    }
    if ((rv = qp_attrs(w, f->sqp, f->src, f->dst, mrc_qp_num(f->rqp))) != 0 ||
        (rv = qp_attrs(w, f->rqp, f->dst, f->src, mrc_qp_num(f->sqp))) != 0) {
        return rv;
    }
    qpmap_set(s, f->sqp, f->id << 1);
    qpmap_set(d, f->rqp, f->id << 1 | 1);
    if (fab_template_init(w->topo, f->src, f->dst, &f->fwd) != 0 ||
        fab_template_init(w->topo, f->dst, f->src, &f->rev) != 0) {
        return MRC_ERR_INVAL;
    }
    mrc_recv_wr rw = {.wr_id = f->id};
    for (unsigned i = 0; i < RQ_DEPTH; i++) {
        if ((rv = mrc_post_recv(f->rqp, &rw)) != 0) {
            return rv;
        }
    }
    return 0;
}

int sim_host_mrc_post(sim_world *w, sim_flow *f, uint64_t bytes, uint32_t imm)
{
    sim_host *s = &w->hosts[f->src];
    mrc_sge g = {.addr = (uint64_t)(uintptr_t)w->arena,
                 .length = (uint32_t)bytes,
                 .lkey = mrc_mr_lkey(s->mr)};
    mrc_send_wr wr = {.wr_id = f->id,
                      .opcode = MRC_WR_RDMA_WRITE_WITH_IMM,
                      .sg_list = &g,
                      .num_sge = 1,
                      .remote_addr = (uint64_t)(uintptr_t)w->arena,
                      .rkey = mrc_mr_rkey(w->hosts[f->dst].mr),
                      .imm_data = imm,
                      .send_flags = MRC_SEND_SIGNALED};
    int rv = mrc_post_send(f->sqp, &wr, ns_of(w->q.now));
    if (rv == 0) {
        sim_host_kick(w, f->src);
        arm_timer(w, s);
    }
    return rv;
}

/* Completions: a receive is a message of a flow arriving whole; an error fails the flow. */
static void poll_mrc(sim_world *w, sim_host *h)
{
    mrc_wc wc[32];
    int n;
    while ((n = mrc_poll_cq(h->cq, 32, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            uint32_t end = wc[i].qp_num < h->qpmap_len ? h->qpmap[wc[i].qp_num] : SIM_NONE;
            if (end == SIM_NONE) {
                continue;
            }
            uint32_t flow = end >> 1;
            if (wc[i].status != MRC_WC_SUCCESS) {
                if (wc[i].status != MRC_WC_WR_FLUSH_ERR) {
                    sim_traffic_on_fail(w, flow);
                }
                continue;
            }
            if (wc[i].opcode == MRC_WC_RECV_RDMA_WITH_IMM) {
                mrc_recv_wr rw = {.wr_id = flow};
                mrc_post_recv(w->flows[flow].rqp, &rw);
                sim_traffic_on_recv(w, flow, 0);
            } else {
                sim_traffic_on_sent(w, flow);
            }
        }
    }
}

/* The host the engine's packet goes to: the other end of its QP, or for an endpoint
 * operation (QPN 0), the owner of its destination address. */
static uint32_t mrc_dest(sim_world *w, const sim_host *h, const mrc_tx_info *info,
                         const fab_template **ptmpl, fab_template *scratch)
{
    if (info->qpn && info->qpn < h->qpmap_len && h->qpmap[info->qpn] != SIM_NONE) {
        uint32_t end = h->qpmap[info->qpn];
        const sim_flow *f = &w->flows[end >> 1];
        *ptmpl = end & 1 ? &f->rev : &f->fwd;
        return end & 1 ? f->src : f->dst;
    }
    uint32_t dst;
    unsigned port;
    if (fab_host_by_addr(w->topo, info->dst, &dst, &port) != 0 ||
        fab_template_init(w->topo, h->id, dst, scratch) != 0) {
        return SIM_NONE;
    }
    *ptmpl = scratch;
    return dst;
}

static bool ev_lost(sim_world *w, uint32_t src, uint32_t dst, uint32_t ev)
{
    for (unsigned i = 0; i < w->nev_loss; i++) {
        const sim_fault *f = w->ev_loss[i];
        if (f->host == src && f->dst == dst && f->ev == ev) {
            return sim_rng_unit(&w->rng) < f->loss;
        }
    }
    return false;
}

/* The engine's next packet for one of the plane ports in |mask|, into the fabric: the port
 * it left from (or was to), -1 if the engine had none. */
static int pull_mrc(sim_world *w, sim_host *h, uint32_t mask)
{
    mrc_tx_info info;
    int n = mrc_write_pkt(h->ctx, w->scratch, sizeof(w->scratch), mask, &info, ns_of(w->q.now));
    if (n <= 0) {
        return -1;
    }
    unsigned p = info.port;
    fab_template tmp;
    const fab_template *tmpl = NULL;
    uint32_t dst = mrc_dest(w, h, &info, &tmpl, &tmp);
    w->totals.packets++;
    sim_pkt *pk = sim_pkt_get(w);
    if (dst == SIM_NONE || fab_template_outer(tmpl, info.ev, pk->outer) != 0 ||
        (w->nev_loss && ev_lost(w, h->id, dst, info.ev))) {
        w->totals.drops++;
        sim_pkt_put(w, pk);
        return (int)p;
    }
    pk->kind = SIM_PKT_MRC;
    pk->datalen = (uint32_t)n;
    pk->hdrlen = (uint16_t)((unsigned)n < SIM_PKT_HDR ? (unsigned)n : SIM_PKT_HDR);
    memcpy(pk->hdr, w->scratch, pk->hdrlen);
    pk->wire = (uint32_t)n + SIM_OUTER_LEN + SIM_ETH_OVERHEAD;
    pk->src = h->id;
    pk->dst = dst;
    pk->ev = info.ev;
    pk->plane = (uint8_t)p;
    pk->dscp = info.dscp;
    pk->flags =
        (uint8_t)((info.control ? SIM_PKT_CTRL : 0) | (info.ecn == MRC_ECN_ECT0 ? SIM_PKT_ECT : 0));
    sim_net_send(w, h->nic[p], pk);
    return (int)p;
}

/* A RoCE QP end of this host on plane |p| with a packet due now; schedules a wake-up for the
 * earliest one that is paced. */
static bool pull_roce(sim_world *w, sim_host *h, unsigned p)
{
    uint64_t next = SIM_NEVER;
    for (unsigned k = 0; k < h->nroce; k++) {
        unsigned i = (h->roce_next + k) % h->nroce;
        uint32_t q = h->roce[i];
        if (w->roce_plane[q] != p) {
            continue;
        }
        sim_roce_pkt rp;
        int rv = sim_roce_write(w->roce[q], w->q.now, &rp);
        if (rv == 1) {
            h->roce_next = (i + 1) % h->nroce;
            const sim_flow *f = &w->flows[w->roce_flow[q]];
            sim_pkt *pk = sim_pkt_get(w);
            pk->kind = SIM_PKT_ROCE;
            pk->roce = rp;
            pk->src = h->id;
            pk->dst = h->id == f->src ? f->dst : f->src;
            /* ECMP hashes the QP's 5-tuple: the same for every packet of the QP end */
            pk->ev = q * 0x9e3779b1u + 0x7f4a7c15u;
            pk->plane = (uint8_t)p;
            pk->hdrlen = 0;
            if (rp.kind == SIM_ROCE_DATA) {
                pk->wire = rp.len + SIM_ROCE_DATA_HDR + SIM_ETH_OVERHEAD;
                pk->datalen = rp.len;
                pk->flags = SIM_PKT_ECT;
            } else {
                pk->wire = SIM_ROCE_CTRL_LEN + SIM_ETH_OVERHEAD;
                pk->datalen = 0;
                pk->flags = SIM_PKT_CTRL;
            }
            w->totals.packets++;
            sim_net_send(w, h->nic[p], pk);
            sim_host_roce_arm(w, q);
            return true;
        }
        uint64_t t = sim_roce_next_tx(w->roce[q]);
        next = t < next ? t : next;
    }
    uint32_t port = h->nic[p];
    if (next != SIM_NEVER && next > w->q.now && next < w->ports[port].wake_at) {
        w->ports[port].wake_at = next;
        sim_evq_push(&w->q, next, SIM_EV_TARGET(SIM_EV_NIC_WAKE, port));
    }
    return false;
}

/* Offers RoCE the idle ports of |idle| in plane order; returns those still idle. */
static uint32_t kick_roce(sim_world *w, sim_host *h, uint32_t idle)
{
    for (unsigned p = 0; p < w->planes; p++) {
        if ((idle & (1u << p)) && !w->ports[h->nic[p]].paused && pull_roce(w, h, p)) {
            idle &= ~(1u << p);
            if (h->ctx) {
                h->turn_roce = !h->turn_roce;
            }
        }
    }
    return idle;
}

/* Fills the idle NIC ports. The engine is offered all of them at once and picks the port by
 * the EV it sprays on: port by port in plane order, a window with room for one packet would
 * always go to plane 0. RoCE and MRC on one host take turns. */
void sim_host_kick(sim_world *w, uint32_t host)
{
    sim_host *h = &w->hosts[host];
    uint32_t idle = 0;
    for (unsigned p = 0; p < w->planes; p++) {
        uint32_t port = h->nic[p];
        if (port != SIM_NONE && !w->ports[port].busy && w->ports[port].up) {
            idle |= 1u << p;
        }
    }
    if (h->nroce && (h->turn_roce || !h->ctx)) {
        idle = kick_roce(w, h, idle);
    }
    int p;
    while (h->ctx && idle && (p = pull_mrc(w, h, idle)) >= 0) {
        if (w->ports[h->nic[p]].busy) {
            idle &= ~(1u << p);
            if (h->nroce) {
                h->turn_roce = !h->turn_roce;
            }
        }
    }
    if (h->nroce && h->ctx) {
        kick_roce(w, h, idle);
    }
    if (h->ctx) {
        arm_timer(w, h);
    }
}

void sim_host_on_wake(sim_world *w, uint32_t port)
{
    sim_port *pt = &w->ports[port];
    if (pt->wake_at != w->q.now) {
        return; /* a later wake-up replaced it */
    }
    pt->wake_at = SIM_NEVER;
    sim_host_kick(w, pt->from);
}

void sim_host_on_timer(sim_world *w, uint32_t host)
{
    sim_host *h = &w->hosts[host];
    if (h->timer_at != w->q.now) {
        return; /* stale: an earlier deadline replaced it */
    }
    h->timer_at = SIM_NEVER;
    mrc_handle_expiry(h->ctx, ns_of(w->q.now));
    poll_mrc(w, h);
    sim_host_kick(w, host);
}

void sim_host_deliver(sim_world *w, uint32_t host, unsigned port, sim_pkt *p)
{
    sim_host *h = &w->hosts[host];
    if (p->kind == SIM_PKT_ROCE) {
        uint32_t q = p->roce.dst_qp;
        if (q < w->nroce && w->roce_host[q] == host) {
            sim_roce_pkt rp = p->roce;
            rp.ce = (p->flags & SIM_PKT_CE) != 0;
            sim_roce_read(w->roce[q], &rp, w->q.now);
            sim_roce_done d;
            while (sim_roce_poll(w->roce[q], &d) == 1) {
                if (d.recv) {
                    sim_traffic_on_recv(w, w->roce_flow[q], (uint32_t)d.cookie);
                }
            }
            if (sim_roce_failed(w->roce[q])) {
                sim_traffic_on_fail(w, w->roce_flow[q]);
            }
            sim_host_roce_arm(w, q);
        }
        sim_pkt_put(w, p);
        sim_host_kick(w, host);
        return;
    }
    if (!h->ctx) {
        sim_pkt_put(w, p);
        return;
    }
    bool trimmed = p->flags & SIM_PKT_TRIM;
    memcpy(w->scratch, p->hdr, p->hdrlen);
    mrc_rx_info info = {.port = (uint8_t)port,
                        .ecn = p->flags & SIM_PKT_CE    ? MRC_ECN_CE
                               : p->flags & SIM_PKT_ECT ? MRC_ECN_ECT0
                                                        : MRC_ECN_NOT_ECT,
                        .dscp = p->dscp};
    if (trimmed) {
        /* the classes a trimming switch re-marks to, as the engine is set to expect */
        info.dscp = p->flags & SIM_PKT_LASTHOP ? w->dscp_trim_last : w->dscp_trim;
    }
    mrc_read_pkt(h->ctx, w->scratch, trimmed ? p->hdrlen : p->datalen, &info, ns_of(w->q.now));
    sim_pkt_put(w, p);
    poll_mrc(w, h);
    sim_host_kick(w, host);
}

void sim_host_port_state(sim_world *w, uint32_t host, unsigned port, bool up)
{
    sim_host *h = &w->hosts[host];
    if (h->ctx) {
        mrc_port_set_state(h->ctx, port, up, ns_of(w->q.now));
        poll_mrc(w, h);
    }
    sim_host_kick(w, host);
}

uint32_t sim_host_roce_add(sim_world *w, sim_flow *f, uint32_t host, unsigned plane, uint32_t peer)
{
    if (w->nroce == w->roce_cap) {
        w->roce_cap = w->roce_cap ? 2 * w->roce_cap : 64;
        w->roce = util_xrealloc(w->roce, w->roce_cap * sizeof(*w->roce));
        w->roce_flow = util_xrealloc(w->roce_flow, w->roce_cap * sizeof(uint32_t));
        w->roce_host = util_xrealloc(w->roce_host, w->roce_cap * sizeof(uint32_t));
        w->roce_plane = util_xrealloc(w->roce_plane, w->roce_cap);
        w->roce_timer = util_xrealloc(w->roce_timer, w->roce_cap * sizeof(uint64_t));
    }
    uint32_t q = w->nroce++;
    double gbps = w->sc->net.host.gbps;
    w->roce[q] = sim_roce_qp_new(&w->sc->roce, gbps, q, peer, w->q.now);
    w->roce_flow[q] = f->id;
    w->roce_host[q] = host;
    w->roce_plane[q] = (uint8_t)plane;
    w->roce_timer[q] = SIM_NEVER;
    sim_host *h = &w->hosts[host];
    if (h->nroce == h->roce_cap) {
        h->roce_cap = h->roce_cap ? 2 * h->roce_cap : 8;
        h->roce = util_xrealloc(h->roce, h->roce_cap * sizeof(uint32_t));
    }
    h->roce[h->nroce++] = q;
    return q;
}

void sim_host_roce_arm(sim_world *w, uint32_t q)
{
    uint64_t e = sim_roce_expiry(w->roce[q]);
    if (e == SIM_NEVER) {
        return;
    }
    e = e < w->q.now ? w->q.now : e;
    if (e < w->roce_timer[q]) {
        w->roce_timer[q] = e;
        sim_evq_push(&w->q, e, SIM_EV_TARGET(SIM_EV_ROCE_TIMER, q));
    }
}

void sim_host_on_roce_timer(sim_world *w, uint32_t q)
{
    if (w->roce_timer[q] != w->q.now) {
        return;
    }
    w->roce_timer[q] = SIM_NEVER;
    sim_roce_on_timer(w->roce[q], w->q.now);
    if (sim_roce_failed(w->roce[q])) {
        sim_traffic_on_fail(w, w->roce_flow[q]);
    }
    sim_host_roce_arm(w, q);
    sim_host_kick(w, w->roce_host[q]);
}
