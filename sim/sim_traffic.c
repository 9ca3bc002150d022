/* SPDX-License-Identifier: MIT */
/* Traffic: the scenario's items become flows; a flow moves its units one message at a time
 * (RDMA Write with Immediate for MRC, Write for RoCE), and an all-reduce ring chains the units
 * of neighbouring links. */
#include <stdlib.h>
#include <string.h>

#include "sim_traffic.h"
#include "util.h"

static sim_flow *flow_add(sim_world *w, uint32_t traffic, const sim_traffic *t, uint32_t src,
                          uint32_t dst, uint64_t bytes, uint64_t start, const char *label)
{
    if (w->nflows == w->flows_cap) {
        w->flows_cap = w->flows_cap ? 2 * w->flows_cap : 64;
        w->flows = util_xrealloc(w->flows, w->flows_cap * sizeof(sim_flow));
    }
    sim_flow *f = &w->flows[w->nflows];
    memset(f, 0, sizeof(*f));
    f->id = w->nflows++;
    f->traffic = traffic;
    f->transport = t->transport;
    f->src = src;
    f->dst = dst;
    f->bytes = bytes;
    f->unit = bytes;
    f->units = 1;
    f->prev = f->next = SIM_NONE;
    f->start_ps = start;
    f->nqps = t->transport == SIM_ROCE ? (t->qps ? t->qps : w->sc->roce.qps) : 1;
    f->nqps = f->nqps ? f->nqps : 1;
    snprintf(f->label, sizeof(f->label), "%s", label);
    return f;
}

/* A random cyclic permutation (Sattolo): every host sends to another, none to itself. */
static void derange(sim_world *w, uint32_t *v, unsigned n)
{
    for (unsigned i = n - 1; i > 0; i--) {
        unsigned j = (unsigned)(sim_rng_next(&w->rng) % i);
        uint32_t x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}

static void items(sim_world *w)
{
    char label[64];
    for (uint32_t ti = 0; ti < w->sc->ntraffic; ti++) {
        const sim_traffic *t = &w->sc->traffic[ti];
        unsigned n = t->nhosts;
        switch (t->kind) {
        case SIM_TRAFFIC_FLOWS:
            for (unsigned i = 0; i < t->nflows; i++) {
                const sim_flow_spec *s = &t->flows[i];
                flow_add(w, ti, t, s->src, s->dst, s->bytes, t->start_ps + s->start_ps, s->label);
            }
            break;
        case SIM_TRAFFIC_PERMUTATION: {
            uint32_t *to = util_xmalloc(n * sizeof(uint32_t));
            memcpy(to, t->hosts, n * sizeof(uint32_t));
            /* to[i] is where host i sends: a cycle through all of them */
            uint32_t *order = util_xmalloc(n * sizeof(uint32_t));
            for (unsigned i = 0; i < n; i++) {
                order[i] = i;
            }
            derange(w, order, n);
            for (unsigned i = 0; i < n; i++) {
                snprintf(label, sizeof(label), "%s%u", t->label, i);
                flow_add(w, ti, t, t->hosts[i], to[order[i]], t->bytes, t->start_ps, label);
            }
            free(order);
            free(to);
            break;
        }
        case SIM_TRAFFIC_ALLTOALL:
            for (unsigned i = 0; i < n; i++) {
                for (unsigned j = 0; j < n; j++) {
                    if (i != j) {
                        snprintf(label, sizeof(label), "%s%u-%u", t->label, i, j);
                        flow_add(w, ti, t, t->hosts[i], t->hosts[j], t->bytes, t->start_ps, label);
                    }
                }
            }
            break;
        case SIM_TRAFFIC_INCAST:
            for (unsigned i = 0; i < n; i++) {
                if (t->hosts[i] != t->receiver) {
                    snprintf(label, sizeof(label), "%s%u", t->label, i);
                    flow_add(w, ti, t, t->hosts[i], t->receiver, t->bytes, t->start_ps, label);
                }
            }
            break;
        case SIM_TRAFFIC_ALLREDUCE: {
            /* ring link r carries 2(N-1) steps of a chunk of bytes/N, reduce-scatter then
             * all-gather, each step as |slices| units: slice s of a step may go once slice s
             * of the step before has arrived, so a link runs |slices| units ahead of its
             * predecessor's completions; and as NCCL's receive buffer holds twice that many,
             * at most twice |slices| of its own are outstanding */
            uint32_t first = w->nflows;
            unsigned s = t->slices ? t->slices : 1;
            uint64_t unit = ((t->bytes + n - 1) / n + s - 1) / s;
            for (unsigned r = 0; r < n; r++) {
                snprintf(label, sizeof(label), "%s%u", t->label, r);
                sim_flow *f = flow_add(w, ti, t, t->hosts[r], t->hosts[(r + 1) % n],
                                       unit * 2 * (n - 1) * s, t->start_ps, label);
                f->unit = unit;
                f->units = 2 * (n - 1) * s;
                f->ahead = s;
                f->next = first + (r + 1) % n;
                f->prev = first + (r + n - 1) % n;
            }
            break;
        }
        }
    }
}

int sim_traffic_build(sim_world *w, char *errmsg, size_t errmsglen)
{
    items(w);
    for (uint32_t i = 0; i < w->nflows; i++) {
        sim_flow *f = &w->flows[i];
        uint64_t part = (f->unit + f->nqps - 1) / f->nqps;
        f->msgs_per_part = part ? (uint32_t)((part + SIM_MSG_MAX - 1) / SIM_MSG_MAX) : 1;
        if (f->msgs_per_part > SIM_SQ_DEPTH) {
            snprintf(errmsg, errmsglen, "flow %s: %llu bytes per QP per transfer is above %u MiB",
                     f->label, (unsigned long long)part, SIM_SQ_DEPTH * SIM_MSG_MAX >> 20);
            return -1;
        }
        f->rcvd = util_xcalloc(f->nqps, sizeof(uint32_t));
        if (f->transport == SIM_MRC) {
            w->hosts[f->src].mrc = w->hosts[f->dst].mrc = true;
            w->hosts[f->src].nqps++;
            w->hosts[f->dst].nqps++;
        }
    }
    return 0;
}

/* After the hosts exist: the QPs of every flow. */
int sim_traffic_connect(sim_world *w, char *errmsg, size_t errmsglen)
{
    for (uint32_t i = 0; i < w->nflows; i++) {
        sim_flow *f = &w->flows[i];
        if (f->transport == SIM_MRC) {
            int rv = sim_host_mrc_connect(w, f);
            if (rv != 0) {
                snprintf(errmsg, errmsglen, "flow %s: MRC QPs: %s", f->label, mrc_strerror(rv));
                return -1;
            }
            continue;
        }
        /* RoCE: each QP on one plane, by a hash of the QP as a host's ECMP over its ports
         * would, or on the scenario's plane */
        f->roce0 = w->nroce;
        for (uint32_t k = 0; k < f->nqps; k++) {
            int fixed = w->sc->roce.plane;
            unsigned plane =
                fixed >= 0
                    ? (unsigned)fixed
                    : (unsigned)(((uint64_t)(f->id * 31u + k) * 0x9e3779b97f4a7c15ull) >> 40) %
                          w->planes;
            if (plane >= w->planes || w->hosts[f->src].nic[plane] == SIM_NONE ||
                w->hosts[f->dst].nic[plane] == SIM_NONE) {
                snprintf(errmsg, errmsglen, "flow %s: no cabled plane %u for RoCE", f->label,
                         plane);
                return -1;
            }
            uint32_t s = w->nroce;
            sim_host_roce_add(w, f, f->src, plane, s + 1);
            sim_host_roce_add(w, f, f->dst, plane, s);
        }
    }
    for (uint32_t i = 0; i < w->nflows; i++) {
        sim_evq_push(&w->q, w->flows[i].start_ps, SIM_EV_TARGET(SIM_EV_FLOW_START, i));
    }
    return 0;
}

void sim_traffic_free(sim_world *w)
{
    for (uint32_t i = 0; i < w->nflows; i++) {
        free(w->flows[i].rcvd);
    }
    for (uint32_t q = 0; q < w->nroce; q++) {
        sim_roce_qp_free(w->roce[q]);
    }
    free(w->flows);
    free(w->roce);
    free(w->roce_flow);
    free(w->roce_host);
    free(w->roce_plane);
    free(w->roce_timer);
    w->flows = NULL;
    w->roce = NULL;
}

/* Releases the flow's next unit: its parts to the QPs, each as messages. */
static void release(sim_world *w, sim_flow *f)
{
    if (f->released >= f->units || f->failed) {
        return;
    }
    uint64_t part = (f->unit + f->nqps - 1) / f->nqps;
    for (uint32_t k = 0; k < f->nqps; k++) {
        for (uint32_t m = 0; m < f->msgs_per_part; m++) {
            uint64_t off = (uint64_t)m * SIM_MSG_MAX;
            uint64_t len = part - off < SIM_MSG_MAX ? part - off : SIM_MSG_MAX;
            f->sq_out += f->transport == SIM_MRC;
            int rv = f->transport == SIM_MRC
                         ? sim_host_mrc_post(w, f, len, f->released)
                         : sim_roce_post(w->roce[f->roce0 + 2 * k], len, k, w->q.now);
            if (rv != 0) {
                sim_traffic_on_fail(w, f->id);
                return;
            }
        }
        if (f->transport == SIM_ROCE) {
            sim_host_roce_arm(w, f->roce0 + 2 * k);
        }
    }
    f->released++;
    if (f->transport == SIM_ROCE) {
        sim_host_kick(w, f->src);
    }
}

/* Whether the flow may release its next unit now. */
static bool may_release(const sim_world *w, const sim_flow *f)
{
    if (f->released >= f->units || f->failed ||
        (f->transport == SIM_MRC && f->sq_out + f->msgs_per_part > SIM_SQ_DEPTH)) {
        return false;
    }
    if (f->prev == SIM_NONE) {
        return true;
    }
    return f->released < w->flows[f->prev].done + f->ahead && f->released < f->done + 2 * f->ahead;
}

static void release_all(sim_world *w, sim_flow *f)
{
    while (may_release(w, f)) {
        release(w, f);
    }
}

void sim_traffic_on_start(sim_world *w, uint32_t flow)
{
    release_all(w, &w->flows[flow]);
}

static void check_done(sim_world *w)
{
    for (uint32_t i = 0; i < w->nflows; i++) {
        const sim_flow *f = &w->flows[i];
        if (!f->end_ps && !f->failed) {
            return;
        }
    }
    w->stop = true;
}

void sim_traffic_on_recv(sim_world *w, uint32_t flow, uint32_t k)
{
    sim_flow *f = &w->flows[flow];
    if (k >= f->nqps) {
        return;
    }
    f->rcvd[k]++;
    uint32_t units = UINT32_MAX;
    for (uint32_t i = 0; i < f->nqps; i++) {
        uint32_t u = f->rcvd[i] / f->msgs_per_part;
        units = u < units ? u : units;
    }
    while (f->done < units && f->done < f->units) {
        f->done++;
        f->delivered += f->unit;
        /* the ring: our destination may now send on what it received, and we on what our
         * source sent, with room for it at our destination */
        if (f->next != SIM_NONE) {
            release_all(w, &w->flows[f->next]);
            release_all(w, f);
        }
        if (f->done == f->units) {
            f->end_ps = w->q.now;
            check_done(w);
        }
    }
}

void sim_traffic_on_sent(sim_world *w, uint32_t flow)
{
    sim_flow *f = &w->flows[flow];
    f->sq_out--;
    release_all(w, f);
}

void sim_traffic_on_fail(sim_world *w, uint32_t flow)
{
    sim_flow *f = &w->flows[flow];
    if (!f->failed) {
        f->failed = true;
        w->totals.qp_failures++;
        check_done(w);
    }
}

uint64_t sim_traffic_delivered(const sim_world *w, const sim_flow *f)
{
    if (f->transport == SIM_MRC) {
        mrc_qp_stats st;
        if (f->rqp && mrc_qp_get_stats(f->rqp, &st) == 0) {
            return st.data_bytes_rcvd;
        }
        return f->delivered;
    }
    uint64_t pkts = 0;
    for (uint32_t k = 0; k < f->nqps; k++) {
        pkts += sim_roce_get_stats(w->roce[f->roce0 + 2 * k + 1])->data_pkts_rcvd;
    }
    return pkts * w->sc->roce.mtu;
}
