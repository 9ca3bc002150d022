/* SPDX-License-Identifier: MIT */
#include "bench_reports.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe_wire.h"

typedef struct deficit {
    uint8_t kind;
    uint16_t t0, port, t1;
    uint32_t index;
} deficit;

typedef struct slot {
    deficit *d;
    uint32_t n, cap;
} slot;

struct bench_reports {
    const fab_topo *topo;
    const probe_plan *plan;
    uint64_t planes;
    double p0;
    uint64_t rng;
    unsigned np;
    uint32_t nt0, nt1, nports, R;
    slot *slots; /* per plane, t0, port */
    probe_spec *exp;
};

static uint64_t rnd(bench_reports *r)
{
    /* splitmix64: the same reports for the same seed */
    uint64_t z = (r->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unif(bench_reports *r)
{
    return (double)(rnd(r) >> 11) / 9007199254740992.0;
}

static slot *slot_of(bench_reports *r, unsigned plane, unsigned t0, unsigned port)
{
    return &r->slots[((size_t)plane * r->nt0 + t0) * r->nports + port];
}

/* The probe |s| lost: a deficit of its receiver (the sender itself for a bounce). */
static void lose(bench_reports *r, const probe_spec *s)
{
    bool bounce = s->kind == PROBE_T0_BOUNCE || s->kind == PROBE_T1_BOUNCE;
    unsigned t0 = bounce ? s->src_t0 : s->dst_t0, port = bounce ? s->src_port : s->dst_port;
    if (probe_wire_host(r->topo, s->plane, t0, port) == FAB_NONE) {
        return; /* no receiver: nobody reports it */
    }
    slot *sl = slot_of(r, s->plane, t0, port);
    if (sl->n == sl->cap) {
        sl->cap = sl->cap ? 2 * sl->cap : 4;
        sl->d = realloc(sl->d, sl->cap * sizeof(*sl->d));
        if (!sl->d) {
            abort();
        }
    }
    sl->d[sl->n++] = (deficit){s->kind, s->src_t0, s->src_port, s->t1, s->index};
}

int bench_reports_new(const fab_topo *topo, const probe_plan *plan, uint64_t planes, double p0,
                      uint64_t seed, bench_reports **pr)
{
    bench_reports *r = calloc(1, sizeof(*r));
    if (!r) {
        return -ENOMEM;
    }
    r->topo = topo;
    r->plan = plan;
    r->planes = planes;
    r->p0 = p0;
    r->rng = seed;
    r->np = probe_plan_planes(plan);
    r->R = probe_plan_per_window(plan);
    if (probe_plan_shape(plan, 0, &r->nt0, &r->nt1, &r->nports) != 0) {
        free(r);
        return -EINVAL;
    }
    r->slots = calloc((size_t)r->np * r->nt0 * r->nports, sizeof(*r->slots));
    r->exp = calloc(r->R, sizeof(*r->exp));
    if (!r->slots || !r->exp) {
        bench_reports_free(r);
        return -ENOMEM;
    }
    *pr = r;
    return 0;
}

void bench_reports_free(bench_reports *r)
{
    if (!r) {
        return;
    }
    for (size_t i = 0; r->slots && i < (size_t)r->np * r->nt0 * r->nports; i++) {
        free(r->slots[i].d);
    }
    free(r->slots);
    free(r->exp);
    free(r);
}

uint64_t bench_reports_window(bench_reports *r, uint64_t window, uint32_t epoch,
                              const bench_fault *faults, size_t nfaults,
                              void (*cb)(void *user, json_object *report), void *user)
{
    uint64_t listed = 0;
    for (unsigned p = 0; p < r->np; p++) {
        if (!(r->planes >> p & 1)) {
            continue;
        }
        /* the background: about p0 of the plane's probes, each a random sender's */
        double want = r->p0 * (double)r->nt0 * r->nports * r->R;
        uint64_t n = (uint64_t)want + (unif(r) < want - (double)(uint64_t)want);
        for (uint64_t i = 0; i < n; i++) {
            probe_spec s;
            unsigned t0 = (unsigned)(rnd(r) % r->nt0), port = (unsigned)(rnd(r) % r->nports);
            if (probe_wire_host(r->topo, p, t0, port) != FAB_NONE &&
                probe_plan_get(r->plan, window, p, t0, port, (uint32_t)(rnd(r) % r->R), &s) == 0) {
                lose(r, &s);
            }
        }
    }
    for (size_t f = 0; f < nfaults; f++) {
        const bench_fault *x = &faults[f];
        if (x->plane >= r->np || !(r->planes >> x->plane & 1)) {
            continue;
        }
        if (!x->down) {
            for (uint32_t i = 0; i < r->R; i++) {
                probe_spec s;
                if (unif(r) < x->loss &&
                    probe_plan_get(r->plan, window, x->plane, x->t0, x->port, i, &s) == 0) {
                    lose(r, &s);
                }
            }
            continue;
        }
        uint32_t ne = probe_plan_expect(r->plan, window, x->plane, x->t0, x->port, r->exp, r->R);
        for (uint32_t i = 0; i < ne; i++) {
            if (unif(r) < x->loss) {
                lose(r, &r->exp[i]);
            }
        }
    }
    for (uint32_t h = 0; h < fab_topo_nhosts(r->topo); h++) {
        json_object *rep = NULL, *ports = NULL;
        for (unsigned p = 0; p < r->np; p++) {
            uint32_t sw;
            unsigned swport;
            fab_switch t0;
            if (!(r->planes >> p & 1) || fab_host_attach(r->topo, h, p, &sw, &swport) != 0 ||
                fab_switch_get(r->topo, sw, &t0) != 0) {
                continue;
            }
            if (!rep) {
                rep = json_object_new_object();
                ports = json_object_new_array();
                json_object_object_add(rep, "host",
                                       json_object_new_string(fab_host_name(r->topo, h)));
                json_object_object_add(rep, "window", json_object_new_uint64(window));
                json_object_object_add(rep, "epoch", json_object_new_uint64(epoch));
                json_object_object_add(rep, "ports", ports);
            }
            slot *sl = slot_of(r, p, t0.index, swport);
            json_object *o = json_object_new_object(), *def = json_object_new_array();
            json_object_object_add(o, "plane", json_object_new_int((int)p));
            json_object_object_add(o, "t0", json_object_new_int((int)t0.index));
            json_object_object_add(o, "port", json_object_new_int((int)swport));
            json_object_object_add(o, "sent", json_object_new_int64(r->R));
            json_object_object_add(o, "expected", json_object_new_int64(r->R));
            json_object_object_add(o, "received", json_object_new_int64(r->R - sl->n));
            json_object_object_add(o, "trimmed", json_object_new_int64(0));
            json_object_object_add(o, "unexpected", json_object_new_int64(0));
            json_object_object_add(o, "missing", json_object_new_int64(sl->n));
            for (uint32_t k = 0; k < sl->n && k < 256; k++) {
                json_object *d = json_object_new_array();
                json_object_array_add(d, json_object_new_string(probe_kind_names[sl->d[k].kind]));
                json_object_array_add(d, json_object_new_int(sl->d[k].t0));
                json_object_array_add(d, json_object_new_int(sl->d[k].port));
                json_object_array_add(d, json_object_new_int(sl->d[k].t1));
                json_object_array_add(d, json_object_new_int64(sl->d[k].index));
                json_object_array_add(def, d);
                listed++;
            }
            sl->n = 0;
            json_object_object_add(o, "deficits", def);
            json_object_array_add(ports, o);
        }
        if (rep) {
            cb(user, rep);
            json_object_put(rep);
        }
    }
    return listed;
}
