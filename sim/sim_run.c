/* SPDX-License-Identifier: MIT */
/* One run: builds the world from the scenario, steps the clock event by event, samples the
 * time series, and gathers the results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim_fault.h"
#include "sim_run.h"
#include "sim_traffic.h"
#include "util.h"

#define ARENA_LEN (2u << 20)

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void series_row(sim_world *w, sim_series *ts)
{
    size_t r = ts->nrows++;
    ts->flow_gbps =
        util_xrealloc(ts->flow_gbps, ts->nrows * (ts->nflows ? ts->nflows : 1) * sizeof(double));
    ts->plane_util =
        util_xrealloc(ts->plane_util, ts->nrows * (ts->nplanes ? ts->nplanes : 1) * sizeof(double));
    double ns = (double)ts->interval_ps / (double)SIM_PS_PER_NS;
    for (uint32_t i = 0; i < w->nflows; i++) {
        sim_flow *f = &w->flows[i];
        uint64_t d = sim_traffic_delivered(w, f);
        ts->flow_gbps[r * ts->nflows + i] = (double)(d - f->sampled) * 8.0 / ns;
        f->sampled = d;
    }
    double sum[FAB_MAX_PLANES] = {0};
    unsigned cnt[FAB_MAX_PLANES] = {0};
    for (uint32_t p = 0; p < w->nports; p++) {
        sim_port *pt = &w->ports[p];
        /* bytes the port can carry in the interval: 10^6 / ps_per_kb per ns */
        double cap = ns * 1e6 / (double)pt->ps_per_kb;
        sum[pt->plane] += (double)(pt->tx_bytes - pt->sampled) / cap;
        cnt[pt->plane]++;
        pt->sampled = pt->tx_bytes;
    }
    for (unsigned pl = 0; pl < ts->nplanes; pl++) {
        ts->plane_util[r * ts->nplanes + pl] = cnt[pl] ? sum[pl] / cnt[pl] : 0;
    }
}

static void progress(const sim_world *w, double t0, bool final)
{
    uint64_t total = 0, done = 0;
    for (uint32_t i = 0; i < w->nflows; i++) {
        total += w->flows[i].bytes;
        done += w->flows[i].end_ps ? w->flows[i].bytes : w->flows[i].delivered;
    }
    double frac = total ? (double)done / (double)total : 1;
    int bar = (int)(frac * 30);
    double wall = wall_now() - t0;
    fprintf(stderr, "\r[%.*s%*s] %3.0f%%  %.3f ms simulated  %.1f s  %.2f M events/s%s", bar,
            "==============================", 30 - bar, "", frac * 100, (double)w->q.now / 1e9,
            wall, wall > 0 ? (double)w->q.popped / wall / 1e6 : 0, final ? "\n" : "");
}

static void build_results(sim_world *w, sim_results *res)
{
    const sim_scenario *sc = w->sc;
    res->scenario = sc->name;
    res->experiment = sc->experiment;
    res->paper = sc->paper;
    res->seed = sc->seed;
    res->nflows = w->nflows;
    res->flows = util_xcalloc(w->nflows ? w->nflows : 1, sizeof(sim_flow_result));
    for (uint32_t i = 0; i < w->nflows; i++) {
        const sim_flow *f = &w->flows[i];
        sim_flow_result *r = &res->flows[i];
        r->id = f->id;
        snprintf(r->label, sizeof(r->label), "%s", f->label);
        r->transport = f->transport;
        r->src = f->src;
        r->dst = f->dst;
        snprintf(r->src_name, sizeof(r->src_name), "%s", fab_host_name(w->topo, f->src));
        snprintf(r->dst_name, sizeof(r->dst_name), "%s", fab_host_name(w->topo, f->dst));
        r->bytes = f->bytes;
        r->start_ps = f->start_ps;
        r->end_ps = f->end_ps;
        r->goodput_gbps = f->end_ps > f->start_ps ? (double)f->bytes * 8.0 * SIM_PS_PER_NS /
                                                        (double)(f->end_ps - f->start_ps)
                                                  : 0;
        r->failed = f->failed;
        if (f->transport == SIM_MRC) {
            mrc_qp_stats s, d;
            mrc_qp_get_stats(f->sqp, &s);
            mrc_qp_get_stats(f->rqp, &d);
            r->retransmissions = s.retx_pkts;
            r->timeouts = s.timeouts;
            w->totals.retransmissions += s.retx_pkts;
            w->totals.timeouts += s.timeouts + d.timeouts;
            for (int k = 0; k < MRC_NACK_REASONS; k++) {
                w->totals.nacks += d.nacks_sent[k] + s.nacks_sent[k];
            }
            for (int a = 0; a < 4; a++) {
                for (int b = 0; b < 4; b++) {
                    w->totals.ev_state_changes += s.ev_transitions[a][b] + d.ev_transitions[a][b];
                }
            }
        } else {
            for (uint32_t k = 0; k < 2 * f->nqps; k++) {
                const sim_roce_stats *st = sim_roce_get_stats(w->roce[f->roce0 + k]);
                if (k % 2 == 0) {
                    r->retransmissions += st->retx_pkts;
                    r->timeouts += st->timeouts;
                }
                w->totals.retransmissions += st->retx_pkts;
                w->totals.timeouts += st->timeouts;
                w->totals.nacks += st->naks_sent;
            }
        }
    }
    /* the all-reduces: an item's time is its last ring link's */
    for (uint32_t ti = 0; ti < sc->ntraffic; ti++) {
        const sim_traffic *t = &sc->traffic[ti];
        if (t->kind != SIM_TRAFFIC_ALLREDUCE) {
            continue;
        }
        res->allreduce =
            util_xrealloc(res->allreduce, (res->nallreduce + 1) * sizeof(sim_allreduce_result));
        sim_allreduce_result *a = &res->allreduce[res->nallreduce++];
        memset(a, 0, sizeof(*a));
        a->transport = t->transport;
        a->ranks = t->nhosts;
        a->bytes = t->bytes;
        a->start_ps = t->start_ps;
        uint64_t end = 0;
        bool all = true;
        for (uint32_t i = 0; i < w->nflows; i++) {
            const sim_flow *f = &w->flows[i];
            if (f->traffic == ti) {
                all = all && f->end_ps;
                end = f->end_ps > end ? f->end_ps : end;
            }
        }
        if (all && end > a->start_ps) {
            a->end_ps = end;
            a->algbw_gbps = (double)t->bytes * 8.0 * SIM_PS_PER_NS / (double)(end - a->start_ps);
            a->busbw_gbps = a->algbw_gbps * 2.0 * (t->nhosts - 1) / t->nhosts;
        }
    }
    res->totals = w->totals;
}

static void world_free(sim_world *w)
{
    sim_fault_free(w);
    sim_traffic_free(w);
    sim_host_free(w);
    sim_net_free(w);
    sim_evq_fini(&w->q);
    free(w->arena);
}

int sim_run(const sim_scenario *sc, bool show_progress, sim_results *res, sim_series *ts,
            char *errmsg, size_t errmsglen)
{
    sim_world *w = util_xcalloc(1, sizeof(*w));
    int rv = -1;
    memset(res, 0, sizeof(*res));
    memset(ts, 0, sizeof(*ts));
    w->sc = sc;
    w->topo = sc->topo;
    w->plan = fab_topo_plan(sc->topo);
    w->planes = fab_topo_planes(sc->topo);
    w->rng = (sim_rng){sc->seed ^ 0x9e3779b97f4a7c15ull, (sc->seed * 0xbf58476d1ce4e5b9ull) | 1};
    w->arena_len = ARENA_LEN;
    w->arena = util_xcalloc(1, ARENA_LEN);
    sim_evq_init(&w->q);
    double t0 = wall_now();
    if (sim_net_build(w, errmsg, errmsglen) != 0 || sim_traffic_build(w, errmsg, errmsglen) != 0 ||
        sim_host_build(w, errmsg, errmsglen) != 0 ||
        sim_traffic_connect(w, errmsg, errmsglen) != 0 ||
        sim_fault_build(w, errmsg, errmsglen) != 0) {
        goto out;
    }
    ts->interval_ps = sc->sample_ps;
    ts->nflows = w->nflows;
    ts->nplanes = w->planes;
    if (sc->sample_ps) {
        sim_evq_push(&w->q, sc->sample_ps, SIM_EV_TARGET(SIM_EV_SAMPLE, 0));
    }
    bool tty = show_progress && isatty(STDERR_FILENO);
    double last_show = t0;
    sim_ev ev;
    while (!w->stop && sim_evq_pop(&w->q, &ev)) {
        if (ev.t > sc->end_ps) {
            w->q.now = sc->end_ps;
            break;
        }
        uint32_t i = SIM_EV_INDEX(ev.tgt);
        if (w->q.len) {
            /* the next event's port is most likely cold: start loading it now */
            uint32_t nt = w->q.heap[0].tgt;
            unsigned nk = SIM_EV_KIND(nt);
            if (nk == SIM_EV_PORT_RX || nk == SIM_EV_PORT_TX) {
                const sim_port *np = &w->ports[SIM_EV_INDEX(nt)];
                __builtin_prefetch(np);
                __builtin_prefetch((const char *)np + 64);
                if (nk == SIM_EV_PORT_RX && np->wire) {
                    __builtin_prefetch(np->wire[np->wire_head].p);
                }
            }
        }
        switch (SIM_EV_KIND(ev.tgt)) {
        case SIM_EV_PORT_TX:
            sim_net_on_tx(w, i);
            break;
        case SIM_EV_PORT_RX:
            sim_net_on_rx(w, i);
            break;
        case SIM_EV_HOST_TIMER:
            sim_host_on_timer(w, i);
            break;
        case SIM_EV_NIC_WAKE:
            sim_host_on_wake(w, i);
            break;
        case SIM_EV_PFC_PAUSE:
            sim_net_on_pfc(w, i, true);
            break;
        case SIM_EV_PFC_RESUME:
            sim_net_on_pfc(w, i, false);
            break;
        case SIM_EV_FAULT:
            sim_fault_on_event(w, i);
            break;
        case SIM_EV_SAMPLE:
            series_row(w, ts);
            sim_evq_push(&w->q, ev.t + sc->sample_ps, SIM_EV_TARGET(SIM_EV_SAMPLE, 0));
            break;
        case SIM_EV_FLOW_START:
            sim_traffic_on_start(w, i);
            break;
        case SIM_EV_ROCE_TIMER:
            sim_host_on_roce_timer(w, i);
            break;
        default:
            break;
        }
        if (tty && (w->q.popped & 0xffff) == 0) {
            double now = wall_now();
            if (now - last_show > 0.2) {
                progress(w, t0, false);
                last_show = now;
            }
        }
    }
    if (tty) {
        progress(w, t0, true);
    }
    if (sc->sample_ps && w->q.now > 0 && (w->q.now % sc->sample_ps) != 0) {
        series_row(w, ts); /* the last, partial interval */
    }
    build_results(w, res);
    res->sim.events = w->q.popped;
    res->sim.simulated_ns = w->q.now / SIM_PS_PER_NS;
    res->sim.wall_s = wall_now() - t0;
    rv = 0;
out:
    world_free(w);
    free(w);
    return rv;
}

void sim_results_free(sim_results *res, sim_series *ts)
{
    free(res->flows);
    free(res->allreduce);
    free(ts->flow_gbps);
    free(ts->plane_util);
    memset(res, 0, sizeof(*res));
    memset(ts, 0, sizeof(*ts));
}
