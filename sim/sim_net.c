/* SPDX-License-Identifier: MIT */
/* The fabric: every direction of every cable is a transmitter with two output queues (data,
 * and a priority class for control packets and trimmed headers) and a wire. Switches forward
 * MRC packets by their uSID tables (shift on their own uSID, then a /48 lookup) and RoCE
 * packets by ECMP. Per packet per hop: one event when it is sent, one when it arrives. */
#include <stdlib.h>
#include <string.h>

#include "sim_world.h"
#include "util.h"

#define POOL_CHUNK 4096

sim_pkt *sim_pkt_get(sim_world *w)
{
    if (!w->free_pkts) {
        sim_pkt *chunk = util_xcalloc(POOL_CHUNK, sizeof(sim_pkt));
        /* the first of each chunk keeps the chunk for sim_net_free: never handed out */
        chunk[0].next = w->chunks;
        w->chunks = chunk;
        for (unsigned i = POOL_CHUNK - 1; i >= 1; i--) {
            chunk[i].next = w->free_pkts;
            w->free_pkts = &chunk[i];
        }
        w->pkts_alloc += POOL_CHUNK - 1;
    }
    sim_pkt *p = w->free_pkts;
    w->free_pkts = p->next;
    p->next = NULL;
    return p;
}

void sim_pkt_put(sim_world *w, sim_pkt *p)
{
    p->next = w->free_pkts;
    w->free_pkts = p;
}

static void drop(sim_world *w, sim_pkt *p)
{
    w->totals.drops++;
    sim_pkt_put(w, p);
}

uint32_t sim_net_port_of(const sim_world *w, uint32_t sw, unsigned swport)
{
    const sim_sw *s = &w->sws[sw];
    return swport < s->info.nports ? s->out[swport] : SIM_NONE;
}

static uint64_t ps_per_kb(double gbps)
{
    /* 1000 bytes = 8000 bits; at G Gb/s one bit takes 1000/G ps */
    return (uint64_t)(8e6 / gbps + 0.5);
}

static inline uint32_t hash_usid(uint16_t usid)
{
    return (uint32_t)usid * 0x9e3779b1u >> 16;
}

static void fwd_add(sim_sw *s, uint16_t usid, uint16_t port)
{
    uint32_t i = hash_usid(usid) & s->fwd_mask;
    while (s->fwd[i].usid && s->fwd[i].usid != usid) {
        i = (i + 1) & s->fwd_mask;
    }
    s->fwd[i] = (sim_fwd){usid, port};
}

static inline uint32_t fwd_find(const sim_sw *s, uint16_t usid)
{
    uint32_t i = hash_usid(usid) & s->fwd_mask;
    for (;;) {
        const sim_fwd *f = &s->fwd[i];
        if (f->usid == usid) {
            return f->port;
        }
        if (!f->usid) {
            return SIM_NONE;
        }
        i = (i + 1) & s->fwd_mask;
    }
}

/* The switch's tables from libmrcfab: its uN, and a /48 route per neighbour uSID. */
static void build_fwd(sim_world *w, uint32_t sw)
{
    sim_sw *s = &w->sws[sw];
    size_t n;
    const fab_route *r = fab_tables_routes(w->tables, sw, &n);
    uint32_t cap = 16;
    while (cap < 2 * n) {
        cap *= 2;
    }
    s->fwd = util_xcalloc(cap, sizeof(sim_fwd));
    s->fwd_mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        if (r[i].action == FAB_ACT_FORWARD) {
            fwd_add(s, r[i].usid, r[i].port);
        }
    }
}

static void init_port(sim_world *w, sim_port *pt, const sim_link_cfg *lc, bool into_switch)
{
    pt->up = true;
    pt->ps_per_kb = ps_per_kb(lc->gbps);
    pt->delay = lc->delay_ps + (into_switch ? w->sc->net.switch_latency_ps : 0);
    pt->reverse = SIM_NONE;
    pt->wake_at = SIM_NEVER;
}

int sim_net_build(sim_world *w, char *errmsg, size_t errmsglen)
{
    const fab_topo *t = w->topo;
    int rv = fab_tables_compute(t, &w->tables);
    if (rv != 0) {
        snprintf(errmsg, errmsglen, "tables: %s", fab_strerror(rv));
        return -1;
    }
    w->nsws = fab_topo_nswitches(t);
    w->nhosts = fab_topo_nhosts(t);
    w->sws = util_xcalloc(w->nsws ? w->nsws : 1, sizeof(sim_sw));
    w->hosts = util_xcalloc(w->nhosts ? w->nhosts : 1, sizeof(sim_host));
    /* one transmitter per cabled switch port, and one per cabled host port */
    uint32_t n = 0;
    for (uint32_t sw = 0; sw < w->nsws; sw++) {
        sim_sw *s = &w->sws[sw];
        fab_switch_get(t, sw, &s->info);
        s->out = util_xmalloc(s->info.nports * sizeof(uint32_t) + 1);
        for (unsigned x = 0; x < s->info.nports; x++) {
            fab_peer peer;
            s->out[x] = fab_switch_peer(t, sw, x, &peer) == 0 && peer.kind != FAB_PEER_NONE
                            ? n++
                            : SIM_NONE;
        }
    }
    for (uint32_t h = 0; h < w->nhosts; h++) {
        sim_host *ho = &w->hosts[h];
        ho->id = h;
        for (unsigned p = 0; p < FAB_MAX_PLANES; p++) {
            uint32_t sw;
            unsigned swport;
            ho->nic[p] = SIM_NONE;
            ho->t0[p] = SIM_NONE;
            if (p < w->planes && fab_host_attach(t, h, p, &sw, &swport) == 0) {
                ho->nic[p] = n++;
                ho->t0[p] = sw;
                ho->t0_port[p] = (uint16_t)swport;
            }
        }
    }
    w->nports = n;
    w->ports = util_xcalloc(n ? n : 1, sizeof(sim_port));
    w->ecmp_ok = util_xmalloc(n ? n : 1);
    memset(w->ecmp_ok, 1, n ? n : 1);
    for (uint32_t sw = 0; sw < w->nsws; sw++) {
        sim_sw *s = &w->sws[sw];
        for (unsigned x = 0; x < s->info.nports; x++) {
            if (s->out[x] == SIM_NONE) {
                continue;
            }
            sim_port *pt = &w->ports[s->out[x]];
            fab_peer peer;
            fab_switch_peer(t, sw, x, &peer);
            bool host = peer.kind == FAB_PEER_HOST;
            init_port(w, pt, host ? &w->sc->net.host : &w->sc->net.fabric, !host);
            pt->plane = (uint8_t)s->info.plane;
            pt->from = sw;
            pt->from_port = (uint16_t)x;
            pt->to = peer.id;
            pt->to_port = (uint16_t)peer.port;
            pt->to_host = host;
            pt->reverse = host ? w->hosts[peer.id].nic[peer.port] : w->sws[peer.id].out[peer.port];
        }
        build_fwd(w, sw);
        /* ECMP for the RoCE baseline: a T0's uplink per T1, a T1's down-port per T0 */
        uint32_t nt1 = fab_topo_nt1(t, s->info.plane), nt0 = fab_topo_nt0(t, s->info.plane);
        if (s->info.tier == FAB_TIER_T0) {
            s->nt1 = nt1;
            s->t1_port = util_xmalloc((nt1 ? nt1 : 1) * sizeof(uint32_t));
            memset(s->t1_port, 0xff, (nt1 ? nt1 : 1) * sizeof(uint32_t));
        } else {
            s->nt0 = nt0;
            s->t0_port = util_xmalloc((nt0 ? nt0 : 1) * sizeof(uint32_t));
            memset(s->t0_port, 0xff, (nt0 ? nt0 : 1) * sizeof(uint32_t));
        }
        for (unsigned x = 0; x < s->info.nports; x++) {
            fab_peer peer;
            fab_switch info;
            if (s->out[x] == SIM_NONE || fab_switch_peer(t, sw, x, &peer) != 0 ||
                peer.kind != FAB_PEER_SWITCH || fab_switch_get(t, peer.id, &info) != 0) {
                continue;
            }
            if (s->info.tier == FAB_TIER_T0 && info.tier == FAB_TIER_T1 && info.index < nt1) {
                s->t1_port[info.index] = x;
            } else if (s->info.tier == FAB_TIER_T1 && info.tier == FAB_TIER_T0 &&
                       info.index < nt0) {
                s->t0_port[info.index] = x;
            }
        }
    }
    for (uint32_t h = 0; h < w->nhosts; h++) {
        sim_host *ho = &w->hosts[h];
        for (unsigned p = 0; p < w->planes; p++) {
            if (ho->nic[p] == SIM_NONE) {
                continue;
            }
            sim_port *pt = &w->ports[ho->nic[p]];
            init_port(w, pt, &w->sc->net.host, true);
            pt->plane = (uint8_t)p;
            pt->from_host = true;
            pt->from = h;
            pt->from_port = (uint16_t)p;
            pt->to = ho->t0[p];
            pt->to_port = ho->t0_port[p];
            pt->reverse = w->sws[ho->t0[p]].out[ho->t0_port[p]];
        }
    }
    return 0;
}

void sim_net_free(sim_world *w)
{
    for (uint32_t p = 0; w->ports && p < w->nports; p++) {
        free(w->ports[p].wire);
    }
    for (uint32_t sw = 0; sw < w->nsws; sw++) {
        free(w->sws[sw].out);
        free(w->sws[sw].fwd);
        free(w->sws[sw].t1_port);
        free(w->sws[sw].t0_port);
    }
    while (w->chunks) {
        sim_pkt *next = w->chunks->next;
        free(w->chunks);
        w->chunks = next;
    }
    free(w->sws);
    free(w->ports);
    free(w->ecmp_ok);
    fab_tables_free(w->tables);
    w->sws = NULL;
    w->ports = NULL;
    w->ecmp_ok = NULL;
    w->tables = NULL;
    w->free_pkts = NULL;
}

/* PFC: the bytes a switch holds that came in by port |in| (the upstream transmitter). */
static void pfc_add(sim_world *w, sim_pkt *p)
{
    if (!w->sc->net.pfc || p->kind != SIM_PKT_ROCE || (p->flags & SIM_PKT_CTRL) ||
        p->ingress == SIM_NONE) {
        return;
    }
    sim_port *in = &w->ports[p->ingress];
    in->in_bytes += p->wire;
    if (!in->pausing && in->in_bytes >= w->sc->net.pfc_xoff) {
        /* the PAUSE frame crosses the cable back */
        in->pausing = true;
        sim_evq_push(&w->q, w->q.now + in->delay, SIM_EV_TARGET(SIM_EV_PFC_PAUSE, p->ingress));
    }
}

static void pfc_sub(sim_world *w, const sim_pkt *p)
{
    if (!w->sc->net.pfc || p->kind != SIM_PKT_ROCE || (p->flags & SIM_PKT_CTRL) ||
        p->ingress == SIM_NONE) {
        return;
    }
    sim_port *in = &w->ports[p->ingress];
    in->in_bytes -= p->wire;
    if (in->pausing && in->in_bytes <= w->sc->net.pfc_xon) {
        in->pausing = false;
        sim_evq_push(&w->q, w->q.now + in->delay, SIM_EV_TARGET(SIM_EV_PFC_RESUME, p->ingress));
    }
}

void sim_net_on_pfc(sim_world *w, uint32_t port, bool pause)
{
    sim_port *pt = &w->ports[port];
    if (pause && !pt->paused) {
        pt->pauses++;
        w->totals.pfc_pauses++;
    }
    pt->paused = pause;
    if (!pause) {
        if (pt->from_host) {
            sim_host_kick(w, pt->from);
        } else if (!pt->busy) {
            sim_net_on_tx(w, port); /* nothing in flight: starts the next packet */
        }
    }
}

/* Marking decided at dequeue on the data queue's occupancy: none below kmin, always above
 * kmax, linearly more likely in between (RED-style, as the switches of the papers). */
static bool ecn_mark(sim_world *w, const sim_port *pt)
{
    const sim_net_cfg *n = &w->sc->net;
    if (pt->dq_bytes <= n->ecn_kmin) {
        return false;
    }
    if (pt->dq_bytes >= n->ecn_kmax) {
        return true;
    }
    double pr =
        n->ecn_pmax * (double)(pt->dq_bytes - n->ecn_kmin) / (double)(n->ecn_kmax - n->ecn_kmin);
    return sim_rng_unit(&w->rng) < pr;
}

/* Starts sending the next queued packet: priority first, data unless paused. */
static void start_tx(sim_world *w, uint32_t port)
{
    sim_port *pt = &w->ports[port];
    sim_pkt *p = pt->cq_head;
    if (p) {
        pt->cq_head = p->next;
        if (!pt->cq_head) {
            pt->cq_tail = NULL;
        }
        pt->cq_bytes -= p->wire;
    } else if (pt->dq_head && !pt->paused) {
        /* the data queue's occupancy with this packet still in it */
        p = pt->dq_head;
        if ((p->flags & SIM_PKT_ECT) && !(p->kind == SIM_PKT_MRC && pt->to_host) &&
            ecn_mark(w, pt)) {
            /* not on the last hop for MRC: a receiver's downlink cannot be avoided by
             * changing path, trimming deals with it (lib/mrc/README.md#switches) */
            p->flags |= SIM_PKT_CE;
            pt->marks++;
            w->totals.ecn_marks++;
        }
        pt->dq_head = p->next;
        if (!pt->dq_head) {
            pt->dq_tail = NULL;
        }
        pt->dq_bytes -= p->wire;
    } else {
        return;
    }
    pfc_sub(w, p);
    p->next = NULL;
    pt->tx = p;
    pt->busy = true;
    sim_evq_push(&w->q, w->q.now + (uint64_t)p->wire * pt->ps_per_kb / 1000,
                 SIM_EV_TARGET(SIM_EV_PORT_TX, port));
}

/* A switch (or a NIC) queues |p| for port |port|; full data queues trim MRC packets. */
static void enqueue(sim_world *w, uint32_t port, sim_pkt *p)
{
    sim_port *pt = &w->ports[port];
    const sim_net_cfg *n = &w->sc->net;
    if (!pt->up) {
        pt->drops++;
        drop(w, p);
        return;
    }
    /* with PFC the RoCE class is lossless: pauses, not drops, bound its queues (a switch
     * provisioned with the headroom PFC needs) */
    bool lossless = n->pfc && p->kind == SIM_PKT_ROCE;
    bool trim = n->trim && p->kind == SIM_PKT_MRC;
    uint32_t room = trim && n->trim_bytes < n->buffer_bytes ? n->trim_bytes : n->buffer_bytes;
    if (!(p->flags & SIM_PKT_CTRL) && !lossless && pt->dq_bytes + p->wire > room) {
        if (!trim) {
            pt->drops++;
            drop(w, p);
            return;
        }
        /* trimmed to its headers, forwarded in the priority class */
        p->wire = p->hdrlen + SIM_OUTER_LEN + SIM_ETH_OVERHEAD;
        p->flags |= SIM_PKT_TRIM | SIM_PKT_CTRL | (pt->to_host ? SIM_PKT_LASTHOP : 0);
        pt->trims++;
        w->totals.trims++;
    }
    if (p->flags & SIM_PKT_CTRL) {
        if (pt->cq_bytes + p->wire > n->ctrl_buffer_bytes) {
            pt->drops++;
            drop(w, p);
            return;
        }
        if (pt->cq_tail) {
            pt->cq_tail->next = p;
        } else {
            pt->cq_head = p;
        }
        pt->cq_tail = p;
        pt->cq_bytes += p->wire;
    } else {
        if (pt->dq_tail) {
            pt->dq_tail->next = p;
        } else {
            pt->dq_head = p;
        }
        pt->dq_tail = p;
        pt->dq_bytes += p->wire;
        pfc_add(w, p);
    }
    if (!pt->busy) {
        start_tx(w, port);
    }
}

void sim_net_send(sim_world *w, uint32_t port, sim_pkt *p)
{
    p->ingress = SIM_NONE;
    enqueue(w, port, p);
}

static void wire_grow(sim_port *pt)
{
    uint32_t cap = pt->wire_cap ? 2 * pt->wire_cap : 8;
    struct sim_wire *v = util_xmalloc(cap * sizeof(*v));
    for (uint32_t i = 0; i < pt->wire_len; i++) {
        v[i] = pt->wire[(pt->wire_head + i) & (pt->wire_cap - 1)];
    }
    free(pt->wire);
    pt->wire = v;
    pt->wire_cap = cap;
    pt->wire_head = 0;
}

void sim_net_on_tx(sim_world *w, uint32_t port)
{
    sim_port *pt = &w->ports[port];
    sim_pkt *p = pt->tx;
    pt->tx = NULL;
    pt->busy = false;
    if (p) {
        pt->tx_bytes += p->wire;
        pt->tx_pkts++;
        if (!pt->up || (pt->loss > 0 && sim_rng_unit(&w->rng) < pt->loss)) {
            pt->drops++;
            drop(w, p);
        } else {
            if (pt->wire_len == pt->wire_cap) {
                wire_grow(pt);
            }
            uint64_t at = w->q.now + pt->delay;
            pt->wire[(pt->wire_head + pt->wire_len++) & (pt->wire_cap - 1)] =
                (struct sim_wire){at, p};
            if (pt->wire_len == 1) {
                sim_evq_push(&w->q, at, SIM_EV_TARGET(SIM_EV_PORT_RX, port));
            }
        }
    }
    if (pt->from_host) {
        sim_host_kick(w, pt->from);
    } else {
        start_tx(w, port);
    }
}

/* T0 or T1 picks the next hop of a RoCE packet by ECMP over the cables it believes up. */
static uint32_t ecmp_port(sim_world *w, const sim_sw *s, const sim_pkt *p)
{
    const sim_host *dst = &w->hosts[p->dst];
    uint32_t t0d = dst->t0[p->plane];
    if (t0d == SIM_NONE) {
        return SIM_NONE;
    }
    fab_switch d;
    if (s->info.tier == FAB_TIER_T0) {
        uint32_t self = (uint32_t)(s - w->sws);
        if (t0d == self) {
            return s->out[dst->t0_port[p->plane]];
        }
        fab_switch_get(w->topo, t0d, &d);
        /* a per-switch salted hash of the flow, then the first usable T1 from there */
        uint64_t h =
            (uint64_t)p->ev * 0x9e3779b97f4a7c15ull ^ (uint64_t)self * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
        for (uint32_t k = 0; k < s->nt1; k++) {
            uint32_t j = (uint32_t)((h + k) % s->nt1);
            uint32_t up = s->t1_port[j] == SIM_NONE ? SIM_NONE : s->out[s->t1_port[j]];
            if (up == SIM_NONE || !w->ecmp_ok[up]) {
                continue;
            }
            /* the T1 must reach the destination T0 too */
            const sim_sw *t1 = &w->sws[w->ports[up].to];
            uint32_t down = d.index < t1->nt0 && t1->t0_port[d.index] != SIM_NONE
                                ? t1->out[t1->t0_port[d.index]]
                                : SIM_NONE;
            if (down != SIM_NONE && w->ecmp_ok[down]) {
                return up;
            }
        }
        return SIM_NONE;
    }
    fab_switch_get(w->topo, t0d, &d);
    if (d.index >= s->nt0 || s->t0_port[d.index] == SIM_NONE) {
        return SIM_NONE;
    }
    return s->out[s->t0_port[d.index]];
}

/* uSID forwarding: a switch owns the top uSID, shifts it out (End with NEXT-C-SID) and looks
 * the next one up in its /48 routes. */
static uint32_t usid_port(const sim_sw *s, sim_pkt *p)
{
    uint16_t top = (uint16_t)(p->outer[4] << 8 | p->outer[5]);
    if (top == s->info.usid) {
        memmove(p->outer + 4, p->outer + 6, 10);
        p->outer[14] = p->outer[15] = 0;
        top = (uint16_t)(p->outer[4] << 8 | p->outer[5]);
    }
    if (top == 0) {
        return SIM_NONE; /* the container ended on this switch: the kernel drops it too */
    }
    uint32_t x = fwd_find(s, top);
    return x == SIM_NONE ? SIM_NONE : s->out[x];
}

static void switch_receive(sim_world *w, uint32_t sw, uint32_t in, sim_pkt *p)
{
    sim_sw *s = &w->sws[sw];
    if (s->blackhole || s->down) {
        s->drops++;
        drop(w, p);
        return;
    }
    uint32_t out = p->kind == SIM_PKT_MRC ? usid_port(s, p) : ecmp_port(w, s, p);
    if (out == SIM_NONE) {
        s->drops++;
        drop(w, p);
        return;
    }
    p->ingress = in;
    enqueue(w, out, p);
}

void sim_net_on_rx(sim_world *w, uint32_t port)
{
    sim_port *pt = &w->ports[port];
    sim_pkt *p = pt->wire[pt->wire_head].p;
    pt->wire_head = (pt->wire_head + 1) & (pt->wire_cap - 1);
    if (--pt->wire_len) {
        sim_evq_push(&w->q, pt->wire[pt->wire_head].arrive, SIM_EV_TARGET(SIM_EV_PORT_RX, port));
    }
    if (!pt->up) {
        pt->drops++;
        drop(w, p);
    } else if (pt->to_host) {
        sim_host_deliver(w, pt->to, pt->to_port, p);
    } else {
        switch_receive(w, pt->to, port, p);
    }
}

void sim_net_port_set(sim_world *w, uint32_t port, bool up)
{
    sim_port *pt = &w->ports[port];
    if (pt->up == up) {
        return;
    }
    pt->up = up;
    if (up) {
        return;
    }
    /* what waits in its queues is lost with the link; the packet being sent and those on the
     * wire are dropped when their events come */
    sim_pkt *lists[2] = {pt->dq_head, pt->cq_head};
    for (int k = 0; k < 2; k++) {
        for (sim_pkt *p = lists[k]; p;) {
            sim_pkt *next = p->next;
            if (k == 0) {
                pfc_sub(w, p);
            }
            pt->drops++;
            drop(w, p);
            p = next;
        }
    }
    pt->dq_head = pt->dq_tail = pt->cq_head = pt->cq_tail = NULL;
    pt->dq_bytes = pt->cq_bytes = 0;
}
