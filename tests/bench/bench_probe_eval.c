/* SPDX-License-Identifier: MIT */
/* Evaluation of probe localization at full scale (issue 8, item 5): a sparse, loss-only
 * simulator of the probe plan with injected faults, scored against the targets. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_infer.h"
#include "probe_sched.h"

#ifndef BENCH_DEFAULT_TOPO
#define BENCH_DEFAULT_TOPO "deploy/topologies/full.json"
#endif

/* The targets (docs/prober.md §6). */
#define TARGET_RECALL_HIGH 0.999 /* loss >= 1 %, within 3 s */
#define TARGET_RECALL_LOW 0.99   /* loss 0.1-0.3 %, within 30 s */
#define TARGET_PRECISION 0.995
#define TARGET_TYPE 0.98
#define TARGET_FALSE_PER_DAY 1.0 /* confirmed false reports per fabric-day, noise only */
#define TARGET_EVAL_MS 100.0     /* inference per 1-s evaluation per plane */
#define TARGET_PROBES 1500.0     /* probes per second per 100G port */

#define MAX_FAULTS 64
#define MAX_VERDICTS 4096

typedef enum ftime { F_PERSIST, F_INTERMITTENT, F_FLAP } ftime;

typedef struct fault {
    probe_comp c;
    double loss;
    int timing; /* ftime */
    unsigned start, period, on;
    int64_t found;   /* window of the first exact confirmed verdict, -1 if none */
    int64_t related; /* window of the first overlapping verdict of another type */
} fault;

/* One T1-stream entry of a window: sender port k's probe i goes through T1 j; cross probes
 * land |shift| T0s on (0: a T1 bounce). The same for every sending T0 (probe_sched.c). */
typedef struct entry {
    uint32_t i;
    uint16_t k, shift;
} entry;

typedef struct world {
    const probe_plan *plan;
    unsigned plane;
    uint32_t nt0, nt1, np, r;
    entry *ent;    /* by T1, then port */
    uint32_t *off; /* off[j] .. off[j+1] in ent */
    entry *cross;  /* the cross entries of every T1 */
    size_t ncross;
    probe_spec *exp;
    uint64_t *lost;
    size_t nlost, caplost;
    uint64_t rng;
} world;

typedef struct totals {
    uint64_t faults, found_exact, typed, typed_exact;
    uint64_t hi_n, hi_ok, lo_n, lo_ok, mid_n, mid_ok, other_n, other_ok;
    uint64_t verdicts, true_verdicts;
    uint64_t noise_false;
    double noise_plane_s;
    double ttl_hi[4096], ttl_lo[4096];
    size_t nhi, nlo;
    double eval_ms_sum, eval_ms_max;
    uint64_t evals;
    double sim_s;
} totals;

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double uni(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15u;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

static uint32_t pick(uint64_t *s, uint32_t n)
{
    return (uint32_t)(uni(s) * n);
}

/* Probes skipped before the next loss at rate |p| (geometric), so only losses cost time. */
static uint64_t skip(uint64_t *s, double p)
{
    if (p >= 1) {
        return 0;
    }
    double x = floor(log(uni(s)) / log1p(-p));
    return x > 1e18 ? (uint64_t)1e18 : (uint64_t)x;
}

static int lost_push(world *wd, uint32_t a, uint32_t k, uint32_t i)
{
    if (wd->nlost == wd->caplost) {
        size_t n = wd->caplost ? wd->caplost * 2 : 1 << 16;
        uint64_t *p = realloc(wd->lost, n * sizeof(*p));
        if (!p) {
            return -ENOMEM;
        }
        wd->lost = p;
        wd->caplost = n;
    }
    wd->lost[wd->nlost++] = (uint64_t)a << 40 | (uint64_t)k << 24 | i;
    return 0;
}

/* The T1 stream of |window|, read from the plan for T0 0 (the plan gives every T0 the same). */
static int world_window(world *wd, uint64_t window)
{
    int rv = 0;
    probe_spec sp;
    memset(wd->off, 0, (wd->nt1 + 1) * sizeof(*wd->off));
    for (uint32_t k = 0; k < wd->np; k++) {
        for (uint32_t i = 0; i < wd->r; i++) {
            probe_plan_get(wd->plan, window, wd->plane, 0, k, i, &sp);
            if (sp.kind == PROBE_T1_BOUNCE || sp.kind == PROBE_CROSS) {
                wd->off[sp.t1 + 1]++;
            }
        }
    }
    for (uint32_t j = 0; j < wd->nt1; j++) {
        wd->off[j + 1] += wd->off[j];
    }
    uint32_t *fill = calloc(wd->nt1, sizeof(*fill));
    if (!fill) {
        return -ENOMEM;
    }
    wd->ncross = 0;
    for (uint32_t k = 0; k < wd->np; k++) {
        for (uint32_t i = 0; i < wd->r; i++) {
            probe_plan_get(wd->plan, window, wd->plane, 0, k, i, &sp);
            if (sp.kind == PROBE_T1_BOUNCE || sp.kind == PROBE_CROSS) {
                entry e = {i, (uint16_t)k, sp.kind == PROBE_CROSS ? sp.dst_t0 : 0};
                wd->ent[wd->off[sp.t1] + fill[sp.t1]++] = e;
                if (e.shift) {
                    wd->cross[wd->ncross++] = e;
                }
            }
        }
    }
    free(fill);
    return rv;
}

static int fault_active(const fault *f, uint64_t w)
{
    if (w < f->start) {
        return 0;
    }
    uint64_t t = w - f->start;
    return f->timing == F_PERSIST || t % f->period < f->on;
}

/* Draws the losses of component |c| at rate |p| in |window| over exactly the probes crossing
 * it, as the plan routes them. */
static int draw_comp(world *wd, uint64_t window, const probe_comp *c, double p)
{
    int rv = 0;
    uint64_t *s = &wd->rng;
    uint32_t a = c->t0, nt0 = wd->nt0;
    switch (c->type) {
    case PROBE_COMP_NIC_T0:
        for (uint64_t x = skip(s, p); x < wd->r && rv == 0; x += 1 + skip(s, p)) {
            rv = lost_push(wd, a, c->other, (uint32_t)x);
        }
        break;
    case PROBE_COMP_T0_NIC: {
        /* the one-way probes it receives, then its own bounces */
        uint32_t n = probe_plan_expect(wd->plan, window, wd->plane, a, c->other, wd->exp, wd->r);
        uint64_t total = n + wd->r;
        for (uint64_t x = skip(s, p); x < total && rv == 0; x += 1 + skip(s, p)) {
            if (x < n) {
                rv = lost_push(wd, wd->exp[x].src_t0, wd->exp[x].src_port, wd->exp[x].index);
            } else {
                probe_spec sp;
                probe_plan_get(wd->plan, window, wd->plane, a, c->other, (uint32_t)(x - n), &sp);
                if (sp.kind == PROBE_T0_BOUNCE || sp.kind == PROBE_T1_BOUNCE) {
                    rv = lost_push(wd, a, c->other, sp.index);
                }
            }
        }
        break;
    }
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0: {
        uint32_t j = c->other, n = wd->off[j + 1] - wd->off[j];
        for (uint64_t x = skip(s, p); x < n && rv == 0; x += 1 + skip(s, p)) {
            const entry *e = &wd->ent[wd->off[j] + x];
            uint32_t src = a;
            if (c->type == PROBE_COMP_T1_T0 && e->shift) {
                src = (a + nt0 - e->shift) % nt0;
            }
            rv = lost_push(wd, src, e->k, e->i);
        }
        break;
    }
    case PROBE_COMP_T1: {
        uint32_t j = c->other, n = wd->off[j + 1] - wd->off[j];
        uint64_t total = (uint64_t)nt0 * n;
        for (uint64_t x = skip(s, p); x < total && rv == 0; x += 1 + skip(s, p)) {
            const entry *e = &wd->ent[wd->off[j] + x % n];
            rv = lost_push(wd, (uint32_t)(x / n), e->k, e->i);
        }
        break;
    }
    case PROBE_COMP_T0: {
        uint64_t sent = (uint64_t)wd->np * wd->r, total = sent + wd->ncross;
        for (uint64_t x = skip(s, p); x < total && rv == 0; x += 1 + skip(s, p)) {
            if (x < sent) {
                rv = lost_push(wd, a, (uint32_t)(x / wd->r), (uint32_t)(x % wd->r));
            } else {
                const entry *e = &wd->cross[x - sent];
                rv = lost_push(wd, (a + nt0 - e->shift) % nt0, e->k, e->i);
            }
        }
        break;
    }
    default: {
        /* an optic group: each lane of the cage, both directions, drops on its own */
        probe_comp l = *c;
        for (unsigned g = 0; g < 4 && rv == 0; g++) {
            l.other = (uint16_t)(c->other * 4 + g);
            l.type = PROBE_COMP_T0_T1;
            rv = draw_comp(wd, window, &l, p);
            l.type = PROBE_COMP_T1_T0;
            rv = rv ? rv : draw_comp(wd, window, &l, p);
        }
        break;
    }
    }
    return rv;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool comp_eq(const probe_comp *a, const probe_comp *b)
{
    return a->type == b->type && a->plane == b->plane && a->t0 == b->t0 && a->other == b->other;
}

static bool is_link(const probe_comp *c)
{
    return c->type <= PROBE_COMP_T1_T0;
}

/* |in| (a link or an optic group) lies within |out| (a device or an optic group). */
static bool within(const probe_comp *in, const probe_comp *out)
{
    bool up = in->type == PROBE_COMP_T0_T1 || in->type == PROBE_COMP_T1_T0;
    switch (out->type) {
    case PROBE_COMP_T0:
        return (is_link(in) || in->type == PROBE_COMP_OPTIC) && in->t0 == out->t0;
    case PROBE_COMP_T1:
        return up && in->other == out->other;
    case PROBE_COMP_OPTIC:
        return up && in->t0 == out->t0 && in->other / 4 == out->other;
    default:
        return false;
    }
}

/* Another type for the same trouble: the link's other direction, or one inside the other. */
static bool related(const probe_comp *a, const probe_comp *b)
{
    if (a->plane != b->plane || comp_eq(a, b)) {
        return false;
    }
    if (is_link(a) && is_link(b)) {
        return a->t0 == b->t0 && a->other == b->other && (a->type ^ 1) == b->type;
    }
    return within(a, b) || within(b, a);
}

static void random_comp(world *wd, int type, probe_comp *c)
{
    c->type = (uint8_t)type;
    c->plane = (uint8_t)wd->plane;
    c->t0 = (uint16_t)pick(&wd->rng, wd->nt0);
    c->other = 0;
    if (type <= PROBE_COMP_T0_NIC) {
        c->other = (uint16_t)pick(&wd->rng, wd->np);
    } else if (type <= PROBE_COMP_T1_T0) {
        c->other = (uint16_t)pick(&wd->rng, wd->nt1);
    } else if (type == PROBE_COMP_T1) {
        c->t0 = 0;
        c->other = (uint16_t)pick(&wd->rng, wd->nt1);
    } else if (type == PROBE_COMP_OPTIC) {
        c->other = (uint16_t)pick(&wd->rng, wd->nt1 / 4);
    }
}

/* k faults of mixed types: 20 % u, 20 % d, 15 % U, 15 % D, 10 % T0, 10 % T1, 10 % optic;
 * loss log-uniform 0.1-5 %; a tenth of link faults blackholes; 15 % intermittent and 10 %
 * flapping (a link down for one window in every 5-10). */
static size_t make_faults(world *wd, unsigned k, fault *f)
{
    static const int mix[20] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 6, 6};
    size_t n = 0;
    while (n < k) {
        fault x;
        memset(&x, 0, sizeof(x));
        random_comp(wd, mix[pick(&wd->rng, 20)], &x.c);
        x.loss = 0.001 * exp(uni(&wd->rng) * log(50.0));
        x.start = pick(&wd->rng, 2);
        x.found = x.related = -1;
        double u = uni(&wd->rng);
        if (is_link(&x.c) && u < 0.1) {
            x.loss = 1.0;
        } else if (u < 0.25) {
            x.timing = F_INTERMITTENT;
            x.period = 4 + pick(&wd->rng, 17);
            x.on = 1 + (unsigned)(x.period * (0.3 + 0.4 * uni(&wd->rng)));
        } else if (is_link(&x.c) && u < 0.35) {
            x.timing = F_FLAP;
            x.loss = 1.0;
            x.period = 5 + pick(&wd->rng, 6);
            x.on = 1;
        }
        bool clash = false;
        for (size_t i = 0; i < n; i++) {
            clash |= comp_eq(&f[i].c, &x.c) || related(&f[i].c, &x.c);
        }
        if (!clash) {
            f[n++] = x;
        }
    }
    return n;
}

typedef struct run_cfg {
    unsigned k, windows;
    double p0;         /* background loss per link */
    double burst_rate; /* one-window 1 % bursts per second per plane */
    double stall_rate; /* new host stalls per second per plane */
    int verbose;       /* 1: misses and false verdicts; 2: every fault */
} run_cfg;

/* One plane for |rc->windows| windows; adds its figures to |t|. */
static int run_plane(const probe_plan *plan, const probe_infer_cfg *icfg, unsigned plane,
                     uint64_t seed, const run_cfg *rc, totals *t)
{
    int rv = -ENOMEM;
    world wd;
    fault f[MAX_FAULTS];
    probe_infer *inf = NULL;
    probe_verdict *v = malloc(MAX_VERDICTS * sizeof(*v));
    probe_comp *seen = malloc(MAX_VERDICTS * sizeof(*seen));
    size_t nseen = 0;
    memset(&wd, 0, sizeof(wd));
    wd.plan = plan;
    wd.plane = plane;
    wd.rng = seed * 0x9e3779b97f4a7c15u + plane;
    probe_plan_shape(plan, plane, &wd.nt0, &wd.nt1, &wd.np);
    wd.r = probe_plan_per_window(plan);
    size_t nent = (size_t)wd.np * wd.r;
    wd.ent = malloc(nent * sizeof(*wd.ent));
    wd.cross = malloc(nent * sizeof(*wd.cross));
    wd.off = malloc((wd.nt1 + 1) * sizeof(*wd.off));
    wd.exp = malloc(wd.r * sizeof(*wd.exp));
    if (!v || !seen || !wd.ent || !wd.cross || !wd.off || !wd.exp) {
        goto out;
    }
    probe_infer_cfg c = *icfg;
    rv = probe_infer_new(&c, &inf);
    if (rv != 0) {
        goto out;
    }
    size_t nf = make_faults(&wd, rc->k, f);
    /* probes lost per probe at background: each crosses about four links */
    double q = rc->p0 * 3.8;
    uint64_t space = (uint64_t)wd.nt0 * wd.np * wd.r;
    double run_ms = 0, run_max = 0, run_recs = 0;
    uint64_t run_maxw = 0;
    for (uint64_t w = 0; w < rc->windows; w++) {
        uint64_t t0 = now_ns(CLOCK_MONOTONIC);
        wd.nlost = 0;
        rv = world_window(&wd, w);
        for (size_t i = 0; i < nf && rv == 0; i++) {
            if (fault_active(&f[i], w)) {
                rv = draw_comp(&wd, w, &f[i].c, f[i].loss);
            }
        }
        for (uint64_t x = skip(&wd.rng, q); x < space && rv == 0; x += 1 + skip(&wd.rng, q)) {
            rv = lost_push(&wd, (uint32_t)(x / ((uint64_t)wd.np * wd.r)),
                           (uint32_t)(x / wd.r % wd.np), (uint32_t)(x % wd.r));
        }
        /* one-window bursts of 1 % on random links: no fault, never to be reported */
        for (double u = uni(&wd.rng); u < rc->burst_rate && rv == 0; u += uni(&wd.rng)) {
            probe_comp b;
            random_comp(&wd, (int)pick(&wd.rng, 4), &b);
            rv = draw_comp(&wd, w, &b, 0.01);
        }
        if (rv != 0) {
            goto out;
        }
        size_t nnet = wd.nlost;
        /* stalled hosts: a sender misses the rest of its window; receivers see the one-way
         * probes it did not send as deficits, and its heartbeat says so */
        for (double u = uni(&wd.rng); u < rc->stall_rate; u += uni(&wd.rng)) {
            uint32_t a = pick(&wd.rng, wd.nt0), k = pick(&wd.rng, wd.np);
            uint32_t cut = pick(&wd.rng, wd.r);
            for (uint32_t i = cut; i < wd.r && rv == 0; i++) {
                probe_spec sp;
                probe_plan_get(plan, w, plane, a, k, i, &sp);
                if (sp.kind == PROBE_CROSS || sp.kind == PROBE_INTRA) {
                    rv = lost_push(&wd, a, k, i);
                }
            }
            rv = rv ? rv : probe_infer_add_sent(inf, w, plane, a, k, cut, wd.r);
        }
        (void)nnet;
        qsort(wd.lost, wd.nlost, sizeof(*wd.lost), cmp_u64);
        for (size_t i = 0; i < wd.nlost && rv == 0; i++) {
            if (i > 0 && wd.lost[i] == wd.lost[i - 1]) {
                continue;
            }
            probe_spec sp;
            probe_link l[6];
            uint64_t id = wd.lost[i];
            probe_plan_get(plan, w, plane, (unsigned)(id >> 40), (unsigned)(id >> 24 & 0xffff),
                           (uint32_t)(id & 0xffffff), &sp);
            rv = probe_infer_add(inf, w, l, probe_spec_links(&sp, l), 1);
            run_recs++;
        }
        if (rv != 0) {
            goto out;
        }
        uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        int n = probe_infer_eval(inf, w, v, MAX_VERDICTS);
        double ms = (double)(now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e6;
        if (n < 0) {
            rv = n;
            goto out;
        }
        t->eval_ms_sum += ms;
        run_ms += ms;
        if (ms > run_max) {
            run_max = ms;
            run_maxw = w;
        }
        t->eval_ms_max = ms > t->eval_ms_max ? ms : t->eval_ms_max;
        t->evals++;
        for (int i = 0; i < n && i < MAX_VERDICTS; i++) {
            bool match = false, fresh = true;
            for (size_t j = 0; j < nf; j++) {
                if (comp_eq(&v[i].comp, &f[j].c)) {
                    match = true;
                    f[j].found = f[j].found < 0 ? (int64_t)w : f[j].found;
                } else if (related(&v[i].comp, &f[j].c) && f[j].related < 0) {
                    f[j].related = (int64_t)w;
                }
            }
            for (size_t j = 0; j < nseen && fresh; j++) {
                fresh = !comp_eq(&seen[j], &v[i].comp);
            }
            if (fresh && nseen < MAX_VERDICTS) {
                seen[nseen++] = v[i].comp;
                t->verdicts++;
                t->true_verdicts += match;
                if (rc->k == 0) {
                    t->noise_false++;
                }
                if (!match && rc->verbose) {
                    char name[64];
                    probe_comp_name(&v[i].comp, name, sizeof(name));
                    printf("    false verdict w=%" PRIu64 " %s loss=%.2e lost=%" PRIu64
                           " h=%u llr=%.1f\n",
                           w, name, v[i].loss, v[i].lost, v[i].horizon, v[i].llr);
                }
            }
        }
        t->sim_s += (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9 - ms / 1e3;
    }
    if (rc->k == 0) {
        t->noise_plane_s += rc->windows;
    }
    if (rc->verbose) {
        printf("    inference CPU mean %.2f ms, max %.2f ms (window %" PRIu64
               "), lost paths per window %.0f\n",
               rc->windows ? run_ms / rc->windows : 0.0, run_max, run_maxw,
               rc->windows ? run_recs / rc->windows : 0.0);
    }
    for (size_t j = 0; j < nf; j++) {
        const fault *x = &f[j];
        double ttl = x->found >= 0 ? (double)(x->found - x->start + 1) : 1e9;
        t->faults++;
        t->found_exact += x->found >= 0;
        if (x->found >= 0 || x->related >= 0) {
            t->typed++;
            t->typed_exact += x->found >= 0 && (x->related < 0 || x->found <= x->related);
        }
        if (rc->verbose && (x->found < 0 || rc->verbose > 1)) {
            char name[64];
            probe_comp_name(&x->c, name, sizeof(name));
            printf("    %s %s loss=%.4f timing=%d start=%u found=%" PRId64 " related=%" PRId64 "\n",
                   x->found < 0 ? "missed" : "fault", name, x->loss, x->timing, x->start, x->found,
                   x->related);
        }
        if (x->timing != F_PERSIST) {
            t->other_n++;
            t->other_ok += x->found >= 0;
        } else if (x->loss >= 0.01) {
            t->hi_n++;
            t->hi_ok += ttl <= 3;
            if (t->nhi < 4096) {
                t->ttl_hi[t->nhi++] = ttl;
            }
        } else if (x->loss <= 0.003) {
            t->lo_n++;
            t->lo_ok += ttl <= 30;
            if (t->nlo < 4096) {
                t->ttl_lo[t->nlo++] = ttl;
            }
        } else {
            t->mid_n++;
            t->mid_ok += ttl <= 10;
        }
    }
    rv = 0;
out:
    probe_infer_free(inf);
    free(wd.ent);
    free(wd.cross);
    free(wd.off);
    free(wd.exp);
    free(wd.lost);
    free(v);
    free(seen);
    return rv;
}

/* ---- single sub-percent faults, each to be named exactly (issue 18, item 7) ---- */

/* The classes of tests/bench/bench_localize.sh: a host port's either direction, an uplink's
 * either direction, and a switch losing on every link it ends (as the lab makes it: loss on
 * each of its cables, each direction drawn on its own). */
enum { X_HOST_UP, X_HOST_DOWN, X_UPLINK_UP, X_UPLINK_DOWN, X_T0, X_T1, X_CLASSES };
static const char *const x_names[X_CLASSES] = {"host-up",   "host-down", "t0t1-up",
                                               "t0t1-down", "t0",        "t1"};

typedef struct exact_cfg {
    unsigned runs;             /* per class */
    unsigned clean, on, after; /* windows before, with and after the fault */
    double loss[8];            /* drawn in turn */
    unsigned nloss;
    double p0; /* background per link */
    double window_s;
    int verbose;
    int only_class; /* -1: every class */
    int only_run;   /* -1: every run */
} exact_cfg;

typedef struct exact_totals {
    unsigned runs, exact, found, wrong;
    double ttl[4096];
    size_t nttl;
    char first_wrong[512];
} exact_totals;

/* Draws the losses of switch |c| (a T0 or a T1) at |p| on each directed link it ends. */
static int draw_switch_links(world *wd, uint64_t window, const probe_comp *c, double p)
{
    int rv = 0;
    probe_comp l = {0, c->plane, c->t0, 0};
    if (c->type == PROBE_COMP_T0) {
        for (uint32_t k = 0; k < wd->np && rv == 0; k++) {
            l.other = (uint16_t)k;
            l.type = PROBE_COMP_NIC_T0;
            rv = draw_comp(wd, window, &l, p);
            l.type = PROBE_COMP_T0_NIC;
            rv = rv ? rv : draw_comp(wd, window, &l, p);
        }
        for (uint32_t j = 0; j < wd->nt1 && rv == 0; j++) {
            l.other = (uint16_t)j;
            l.type = PROBE_COMP_T0_T1;
            rv = draw_comp(wd, window, &l, p);
            l.type = PROBE_COMP_T1_T0;
            rv = rv ? rv : draw_comp(wd, window, &l, p);
        }
    } else {
        l.other = c->other;
        for (uint32_t a = 0; a < wd->nt0 && rv == 0; a++) {
            l.t0 = (uint16_t)a;
            l.type = PROBE_COMP_T0_T1;
            rv = draw_comp(wd, window, &l, p);
            l.type = PROBE_COMP_T1_T0;
            rv = rv ? rv : draw_comp(wd, window, &l, p);
        }
    }
    return rv;
}

/* One run of class |cls|: |xc->clean| clean windows, the fault for |xc->on|, clean again for
 * |xc->after|; every confirmed verdict of every evaluation must be the fault. */
static int run_exact(const probe_plan *plan, const probe_infer_cfg *icfg, int cls, unsigned run,
                     uint64_t seed, const exact_cfg *xc, exact_totals *t)
{
    static const int types[X_CLASSES] = {PROBE_COMP_NIC_T0, PROBE_COMP_T0_NIC, PROBE_COMP_T0_T1,
                                         PROBE_COMP_T1_T0,  PROBE_COMP_T0,     PROBE_COMP_T1};
    int rv = -ENOMEM;
    world wd;
    probe_infer *inf = NULL;
    probe_verdict *v = malloc(MAX_VERDICTS * sizeof(*v));
    memset(&wd, 0, sizeof(wd));
    wd.plan = plan;
    wd.rng = seed * 0x9e3779b97f4a7c15u + (uint64_t)cls * 7919 + run;
    wd.plane = pick(&wd.rng, probe_plan_planes(plan));
    probe_plan_shape(plan, wd.plane, &wd.nt0, &wd.nt1, &wd.np);
    wd.r = probe_plan_per_window(plan);
    size_t nent = (size_t)wd.np * wd.r;
    wd.ent = malloc(nent * sizeof(*wd.ent));
    wd.cross = malloc(nent * sizeof(*wd.cross));
    wd.off = malloc((wd.nt1 + 1) * sizeof(*wd.off));
    wd.exp = malloc(wd.r * sizeof(*wd.exp));
    if (!v || !wd.ent || !wd.cross || !wd.off || !wd.exp) {
        goto out;
    }
    rv = probe_infer_new(icfg, &inf);
    if (rv != 0) {
        goto out;
    }
    probe_comp f;
    random_comp(&wd, types[cls], &f);
    double loss = xc->loss[run % xc->nloss];
    double q = xc->p0 * 3.8;
    uint64_t space = (uint64_t)wd.nt0 * wd.np * wd.r;
    int64_t found = -1;
    bool wrong = false;
    /* windows are numbered from a large start, as the wall clock numbers them */
    uint64_t base = 1000000, start = base + xc->clean, stop = start + xc->on;
    for (uint64_t w = base; w < stop + xc->after; w++) {
        wd.nlost = 0;
        rv = world_window(&wd, w);
        if (rv == 0 && w >= start && w < stop) {
            rv = cls >= X_T0 ? draw_switch_links(&wd, w, &f, loss) : draw_comp(&wd, w, &f, loss);
        }
        for (uint64_t x = skip(&wd.rng, q); x < space && rv == 0; x += 1 + skip(&wd.rng, q)) {
            rv = lost_push(&wd, (uint32_t)(x / ((uint64_t)wd.np * wd.r)),
                           (uint32_t)(x / wd.r % wd.np), (uint32_t)(x % wd.r));
        }
        if (rv != 0) {
            goto out;
        }
        if (wd.nlost) {
            qsort(wd.lost, wd.nlost, sizeof(*wd.lost), cmp_u64);
        }
        for (size_t i = 0; i < wd.nlost && rv == 0; i++) {
            if (i > 0 && wd.lost[i] == wd.lost[i - 1]) {
                continue;
            }
            probe_spec sp;
            probe_link l[6];
            uint64_t id = wd.lost[i];
            probe_plan_get(plan, w, wd.plane, (unsigned)(id >> 40), (unsigned)(id >> 24 & 0xffff),
                           (uint32_t)(id & 0xffffff), &sp);
            rv = probe_infer_add(inf, w, l, probe_spec_links(&sp, l), 1);
        }
        if (rv != 0) {
            goto out;
        }
        int n = probe_infer_eval(inf, w, v, MAX_VERDICTS);
        if (n < 0) {
            rv = n;
            goto out;
        }
        for (int i = 0; i < n && i < MAX_VERDICTS; i++) {
            if (comp_eq(&v[i].comp, &f)) {
                found = found < 0 && w >= start ? (int64_t)(w - start) : found;
                continue;
            }
            if (!wrong && (xc->verbose || !t->first_wrong[0])) {
                char a[64], b[64];
                probe_comp_name(&v[i].comp, a, sizeof(a));
                probe_comp_name(&f, b, sizeof(b));
                snprintf(t->first_wrong, sizeof(t->first_wrong),
                         "run %u: %s at %.2f %% named %s (%" PRIu64 " of %" PRIu64
                         " probes over %u windows, window %+" PRId64 ")",
                         run, b, 100 * loss, a, v[i].lost, v[i].sent, v[i].horizon,
                         (int64_t)(w - start));
                if (xc->verbose) {
                    printf("    %s\n", t->first_wrong);
                }
            }
            wrong = true;
        }
    }
    if (xc->verbose > 1 || (xc->verbose && found < 0)) {
        char b[64];
        probe_comp_name(&f, b, sizeof(b));
        printf("    run %u: %s at %.2f %%: %s%s\n", run, b, 100 * loss,
               found >= 0 ? "named after windows " : "not named", wrong ? ", and another" : "");
        if (found >= 0) {
            printf("      %" PRId64 "\n", found + 1);
        }
    }
    t->runs++;
    t->found += found >= 0;
    t->wrong += wrong;
    t->exact += found >= 0 && !wrong;
    if (found >= 0 && t->nttl < 4096) {
        t->ttl[t->nttl++] = (double)(found + 1) * xc->window_s;
    }
    rv = 0;
out:
    probe_infer_free(inf);
    free(wd.ent);
    free(wd.cross);
    free(wd.off);
    free(wd.exp);
    free(wd.lost);
    free(v);
    return rv;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *x, size_t n, double q)
{
    if (n == 0) {
        return NAN;
    }
    qsort(x, n, sizeof(*x), cmp_double);
    return x[(size_t)(q * (double)(n - 1) + 0.5)];
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : NAN;
}

/* --exact: every class, |xc->runs| runs each; a line per class. Returns 0 or 1 (out of
 * memory). */
static int run_exact_all(const probe_plan *plan, const probe_infer_cfg *icfg, const char *topo,
                         const probe_cfg *pc, exact_cfg *xc, int verbose)
{
    static exact_totals t[X_CLASSES];
    xc->window_s = (double)pc->window_ns / 1e9;
    xc->verbose = verbose;
    printf("bench_probe_eval --exact: %s, %u runs per class, %.0f ms windows, %u probes per port "
           "and window, background %.1e per link; %u clean windows, %u with the fault, %u after\n",
           topo, xc->runs, xc->window_s * 1e3, probe_plan_per_window(plan), xc->p0, xc->clean,
           xc->on, xc->after);
    printf("%-10s %5s %8s %8s %6s %12s %12s\n", "class", "runs", "exact", "found", "wrong", "p50 s",
           "max s");
    for (int c = 0; c < X_CLASSES; c++) {
        if (xc->only_class >= 0 && c != xc->only_class) {
            continue;
        }
        for (unsigned r = 0; r < xc->runs; r++) {
            if (xc->only_run >= 0 && r != (unsigned)xc->only_run) {
                continue;
            }
            if (run_exact(plan, icfg, c, r, 1, xc, &t[c]) != 0) {
                fprintf(stderr, "bench_probe_eval: out of memory\n");
                return 1;
            }
        }
        exact_totals *x = &t[c];
        double p50 = pct(x->ttl, x->nttl, 0.5), mx = pct(x->ttl, x->nttl, 1.0);
        printf("%-10s %5u %7.1f%% %7.1f%% %6u %12.1f %12.1f\n", x_names[c], x->runs,
               100 * ratio(x->exact, x->runs), 100 * ratio(x->found, x->runs), x->wrong, p50, mx);
        if (x->first_wrong[0]) {
            printf("    e.g. %s\n", x->first_wrong);
        }
    }
    return 0;
}

static void usage(const char *argv0)
{
    fprintf(
        stderr,
        "usage: %s [--topo FILE] [--quick] [--check] [--planes N] [--windows N]\n"
        "          [--seeds N] [--noise-windows N] [--verbose [--verbose]] [--only SEED]\n"
        "          [--window-ms MS] [--rate N]\n"
        "       %s --exact RUNS [--exact-loss PCT,...] [--p0 P] [--topo FILE] [--window-ms MS]\n"
        "          [--rate N] [--verbose]\n"
        "  --exact: RUNS runs per class of one sub-percent fault (host port up and down, T0-T1\n"
        "  up and down, a T0 and a T1 losing on each link), each to be named exactly\n",
        argv0, argv0);
}

int main(int argc, char **argv)
{
    const char *topo_path = BENCH_DEFAULT_TOPO;
    bool quick = false, check = false;
    int verbose = 0;
    uint64_t only = 0;
    unsigned planes = 0, windows = 32, seeds = 0, noise_windows = 0;
    unsigned window_ms = 0, rate = 0;
    exact_cfg xc = {.clean = 40,
                    .on = 60,
                    .after = 40,
                    .loss = {0.003, 0.005, 0.008},
                    .nloss = 3,
                    .p0 = 1e-7,
                    .only_class = -1,
                    .only_run = -1};
    int ret = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--topo") && i + 1 < argc) {
            topo_path = argv[++i];
        } else if (!strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!strcmp(argv[i], "--check")) {
            check = true;
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose++;
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--planes") && i + 1 < argc) {
            planes = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--windows") && i + 1 < argc) {
            windows = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            seeds = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--noise-windows") && i + 1 < argc) {
            noise_windows = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--window-ms") && i + 1 < argc) {
            window_ms = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--rate") && i + 1 < argc) {
            rate = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--exact") && i + 1 < argc) {
            xc.runs = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--class") && i + 1 < argc) {
            i++;
            for (int c = 0; c < X_CLASSES; c++) {
                xc.only_class = !strcmp(argv[i], x_names[c]) ? c : xc.only_class;
            }
            if (xc.only_class < 0) {
                usage(argv[0]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--run") && i + 1 < argc) {
            xc.only_run = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--p0") && i + 1 < argc) {
            xc.p0 = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--exact-loss") && i + 1 < argc) {
            char *e = argv[++i];
            xc.nloss = 0;
            while (*e && xc.nloss < 8) {
                xc.loss[xc.nloss++] = strtod(e, &e) / 100;
                e += *e == ',';
            }
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    fab_topo *topo = NULL;
    fab_error err;
    probe_plan *plan = NULL;
    probe_cfg pc;
    probe_infer_cfg icfg;
    static totals t;
    if (fab_topo_load_file(topo_path, &topo, &err) != 0) {
        fprintf(stderr, "bench_probe_eval: %s: %s\n", err.path, err.msg);
        goto out;
    }
    probe_cfg_default(&pc);
    if (window_ms) {
        pc.window_ns = window_ms * 1000000ull;
    }
    if (rate) {
        pc.rate_per_port = rate;
    }
    if (probe_plan_new(topo, &pc, &plan) != 0) {
        fprintf(stderr, "bench_probe_eval: the plan does not fit %s\n", topo_path);
        goto out;
    }
    probe_infer_cfg_default(&icfg, 1, 1, 1, 1);
    uint32_t snt0, snt1, snp;
    probe_plan_shape(plan, 0, &snt0, &snt1, &snp);
    /* the optic group as mrc-probe localize takes it: 4, or what divides the T1 count */
    icfg.optic_group = 4;
    while (icfg.optic_group > 1 && snt1 % icfg.optic_group) {
        icfg.optic_group--;
    }
    if (probe_infer_cfg_from_plan(&icfg, plan) != 0) {
        goto out;
    }
    if (xc.runs) {
        ret = run_exact_all(plan, &icfg, topo_path, &pc, &xc, verbose);
        goto out;
    }
    unsigned nplanes = probe_plan_planes(plan);
    if (planes == 0 || planes > nplanes) {
        /* two planes keep the default run near a minute on one core; --planes 8 for all */
        planes = quick ? 1 : (nplanes < 2 ? nplanes : 2);
    }
    if (seeds == 0) {
        seeds = 1;
    }
    if (noise_windows == 0) {
        noise_windows = quick ? 32 : 60;
    }
    printf("bench_probe_eval: %s, %u of %u planes, %u x %u T0 ports, %u T1s, %u probes/s/port\n",
           topo_path, planes, nplanes, icfg.nt0, icfg.nports, icfg.nt1,
           probe_plan_per_window(plan));
    /* k faults per plane, each with background 1e-8..1e-5, 0.5 bursts/s and stalled hosts */
    static const unsigned ks_full[] = {1, 10, 50}, ks_quick[] = {10};
    const unsigned *ks = quick ? ks_quick : ks_full;
    size_t nks = quick ? 1 : 3;
    uint64_t seed = 1;
    for (size_t ki = 0; ki < nks; ki++) {
        for (unsigned s = 0; s < seeds; s++) {
            for (unsigned p = 0; p < planes; p++, seed++) {
                uint64_t rs = seed * 7919;
                run_cfg rc = {ks[ki], windows, 1e-8 * exp(uni(&rs) * log(1e3)), 0.5, 0.13, verbose};
                if (only && seed != only) {
                    continue;
                }
                if (verbose) {
                    printf("  run k=%u plane=%u seed=%" PRIu64 " p0=%.1e\n", rc.k, p, seed, rc.p0);
                }
                if (run_plane(plan, &icfg, p, seed, &rc, &t) != 0) {
                    fprintf(stderr, "bench_probe_eval: out of memory\n");
                    goto out;
                }
            }
        }
    }
    uint64_t fault_verdicts = t.verdicts, fault_true = t.true_verdicts;
    for (unsigned p = 0; p < planes; p++, seed++) {
        uint64_t rs = seed * 7919;
        run_cfg rc = {0, noise_windows, 1e-8 * exp(uni(&rs) * log(1e3)), 0.5, 0.13, verbose};
        if (only && seed != only) {
            continue;
        }
        if (run_plane(plan, &icfg, p, seed, &rc, &t) != 0) {
            fprintf(stderr, "bench_probe_eval: out of memory\n");
            goto out;
        }
    }
    double rec_hi = ratio(t.hi_ok, t.hi_n), rec_lo = ratio(t.lo_ok, t.lo_n);
    double prec = ratio(fault_true, fault_verdicts);
    double type = ratio(t.typed_exact, t.typed);
    double fph =
        t.noise_plane_s > 0 ? (double)t.noise_false / (t.noise_plane_s / nplanes) * 3600 : NAN;
    double eval_ms = t.evals ? t.eval_ms_sum / (double)t.evals : NAN;
    printf("faults %" PRIu64 " (persistent >=1%% %" PRIu64 ", 0.1-0.3%% %" PRIu64
           ", 0.3-1%% %" PRIu64 ", intermittent/flapping %" PRIu64 ")\n",
           t.faults, t.hi_n, t.lo_n, t.mid_n, t.other_n);
    printf("%-44s %12s %12s\n", "metric", "measured", "target");
    printf("%-44s %11.2f%% %11.1f%%\n", "recall within 3 s, loss >= 1%", 100 * rec_hi,
           100 * TARGET_RECALL_HIGH);
    printf("%-44s %11.2f%% %11.1f%%\n", "recall within 30 s, loss 0.1-0.3%", 100 * rec_lo,
           100 * TARGET_RECALL_LOW);
    printf("%-44s %11.2f%% %12s\n", "recall within 10 s, loss 0.3-1%",
           100 * ratio(t.mid_ok, t.mid_n), "-");
    printf("%-44s %11.2f%% %12s\n", "found by run end, intermittent/flapping",
           100 * ratio(t.other_ok, t.other_n), "-");
    printf("%-44s %11.2f%% %11.1f%%\n", "precision (distinct confirmed verdicts)", 100 * prec,
           100 * TARGET_PRECISION);
    printf("%-44s %11.2f%% %11.1f%%\n", "exact-type accuracy", 100 * type, 100 * TARGET_TYPE);
    /* a fault never found counts as 1e9 s */
    printf("%-44s %9.0f/%.0f/%.0f s %12s\n", "time to localize >= 1% P50/P90/P99",
           pct(t.ttl_hi, t.nhi, 0.5), pct(t.ttl_hi, t.nhi, 0.9), pct(t.ttl_hi, t.nhi, 0.99),
           "<= 3 s");
    printf("%-44s %9.0f/%.0f/%.0f s %12s\n", "time to localize 0.1-0.3% P50/P90/P99",
           pct(t.ttl_lo, t.nlo, 0.5), pct(t.ttl_lo, t.nlo, 0.9), pct(t.ttl_lo, t.nlo, 0.99),
           "<= 30 s");
    printf("%-44s %12.2f %12.3f\n", "false reports per fabric-hour (noise only)", fph,
           TARGET_FALSE_PER_DAY / 24);
    printf("%-44s %12" PRIu64 " %12s\n", "  (false reports / noise plane-seconds)", t.noise_false,
           "");
    printf("%-44s %12.0f\n", "  noise plane-seconds", t.noise_plane_s);
    printf("%-44s %12u %12.0f\n", "probes per second per port", probe_plan_per_window(plan),
           TARGET_PROBES);
    printf("%-44s %9.2f ms %9.0f ms\n", "inference CPU per evaluation per plane (mean)", eval_ms,
           TARGET_EVAL_MS);
    printf("%-44s %9.2f ms %9.0f ms\n", "inference CPU per evaluation per plane (max)",
           t.eval_ms_max, TARGET_EVAL_MS);
    printf("%-44s %9.2f s\n", "simulation wall time (plane-windows are 1 s)", t.sim_s);
    ret = 0;
    if (check) {
        bool ok = !(rec_hi < TARGET_RECALL_HIGH) && !(rec_lo < TARGET_RECALL_LOW) &&
                  !(prec < TARGET_PRECISION) && !(type < TARGET_TYPE) &&
                  !(fph > TARGET_FALSE_PER_DAY / 24) && !(eval_ms > TARGET_EVAL_MS);
        printf("check: %s\n", ok ? "targets met" : "targets MISSED");
        ret = ok ? 0 : 1;
    }
out:
    probe_plan_free(plan);
    fab_topo_free(topo);
    return ret;
}
