/* SPDX-License-Identifier: MIT */
/* The probe plan: which probe every host port sends and receives in every window (pure). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_sched.h"

/* The default mix (docs/prober.md §2.1): 64 T0 bounces, one T1 bounce per T1 and four cross
 * probes per T1 of the full fabric, 64 intra. */
static const double default_share[PROBE_KINDS] = {64, 256, 1024, 64};

/* A slot of the interleave: kind in the top 2 bits, rank within the kind below. */
#define SLOT_KIND_SHIFT 30
#define SLOT_RANK_MASK ((1u << SLOT_KIND_SHIFT) - 1)

typedef struct plane_plan {
    uint32_t nt0, nt1, nport;
    uint32_t n[PROBE_KINDS];   /* probes of each kind per sender per window */
    uint32_t nstream;          /* n[T1 bounce] + n[cross]: the T1 stream */
    uint32_t t1_base;          /* seeded start of the T1 rotation */
    uint64_t key;              /* seed mixed with the plane */
    uint32_t *slot;            /* per index: kind << 30 | rank */
    uint16_t *unit, *unit_inv; /* the units of Z_nport and their inverses */
    uint32_t nunit;
} plane_plan;

struct probe_plan {
    probe_cfg cfg;
    uint32_t per_window;
    unsigned planes;
    plane_plan pl[FAB_MAX_PLANES];
};

void probe_cfg_default(probe_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->window_ns = 1000000000u;
    cfg->rate_per_port = 1408.0;
    memcpy(cfg->share, default_share, sizeof(cfg->share));
    cfg->seed = 0x6d72636661627072u; /* "mrcfabpr" */
}

/* splitmix64's finalizer: a bijection of 64-bit words whose output bits all depend on every
 * input bit, so keys derived from (seed, plane, window, index, port) look independent. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}

/* |x| (32 random bits) scaled into [0, n) without a division (Lemire). */
static uint32_t reduce(uint32_t x, uint32_t n)
{
    return (uint32_t)(((uint64_t)x * n) >> 32);
}

static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b != 0) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The inverse of |a| modulo |n| (gcd(a, n) == 1), by the extended Euclid algorithm. */
static uint32_t inverse_mod(uint32_t a, uint32_t n)
{
    int64_t t = 0, nt = 1, r = n, nr = a;
    while (nr != 0) {
        int64_t q = r / nr, x;
        x = t - q * nt;
        t = nt;
        nt = x;
        x = r - q * nr;
        r = nr;
        nr = x;
    }
    return (uint32_t)(t < 0 ? t + n : t) % n;
}

/* The key of probe |index| of |window|: the same for every sender of the plane, so the
 * permutations it picks are bijections of the whole plane. */
static uint64_t slot_key(const plane_plan *pl, uint64_t window, uint32_t index)
{
    return mix(mix(pl->key ^ window) + (uint64_t)index * 0x9e3779b97f4a7c15u);
}

/* The affine permutation x -> alpha * x + beta of the down-ports that |key| picks. */
typedef struct affine {
    uint32_t alpha, alpha_inv, beta, n;
} affine;

static affine affine_of(const plane_plan *pl, uint64_t key)
{
    affine f;
    uint32_t u = reduce((uint32_t)(key >> 32), pl->nunit);
    f.alpha = pl->unit[u];
    f.alpha_inv = pl->unit_inv[u];
    f.beta = reduce((uint32_t)key, pl->nport);
    f.n = pl->nport;
    return f;
}

static uint32_t affine_fwd(const affine *f, uint32_t x)
{
    return (uint32_t)(((uint64_t)f->alpha * x + f->beta) % f->n);
}

static uint32_t affine_inv(const affine *f, uint32_t y)
{
    return (uint32_t)(((uint64_t)f->alpha_inv * (y + f->n - f->beta)) % f->n);
}

/* The T0 shift 1..nt0-1 of the cross probe of sender port |k| (nt0 >= 2). */
static uint32_t cross_shift(const plane_plan *pl, uint64_t key, uint32_t k)
{
    return 1 + reduce((uint32_t)mix(key ^ ((uint64_t)(k + 1) << 32)), pl->nt0 - 1);
}

/* The port shift 1..nport-1 of the intra probes under T0 |a| (nport >= 2). */
static uint32_t intra_shift(const plane_plan *pl, uint64_t key, uint32_t a)
{
    return 1 + reduce((uint32_t)mix(key ^ (uint64_t)(a + 1)), pl->nport - 1);
}

/*
 * The T1 of T1 bounce (|cross| false) or cross probe |rank| of port |k|. Port k owns the T1
 * stream positions u in [0, nstream), bounces first, and position u goes over T1
 * (k * nstream + u + rot) mod nt1: under one T0 the values run over nport * nstream
 * consecutive integers, which nt1 divides, so every uplink gets as many. Within each kind a
 * port's ranks are rotated by k, which keeps its set of positions (so the balance, and the
 * consecutive T1s its bounces sweep) but sends the ports of a T0 over different T1s at the
 * same index instead of all over one.
 */
static uint32_t stream_t1(const plane_plan *pl, uint64_t window, uint32_t k, bool cross,
                          uint32_t rank)
{
    uint32_t nb = pl->n[PROBE_T1_BOUNCE];
    uint32_t u = cross ? nb + (rank + k) % pl->n[PROBE_CROSS] : (rank + k) % nb;
    uint64_t rot = (pl->t1_base + (window % pl->nt1) * (nb % pl->nt1)) % pl->nt1;
    return (uint32_t)(((uint64_t)k * pl->nstream + u + rot) % pl->nt1);
}

/* Fills |out| with probe |index| of sender (a, k); everything in range. */
static void probe_fill(const plane_plan *pl, unsigned plane, uint64_t window, uint32_t a,
                       uint32_t k, uint32_t index, probe_spec *out)
{
    uint32_t slot = pl->slot[index];
    probe_kind kind = (probe_kind)(slot >> SLOT_KIND_SHIFT);
    uint32_t rank = slot & SLOT_RANK_MASK;
    memset(out, 0, sizeof(*out));
    out->kind = (uint8_t)kind;
    out->plane = (uint8_t)plane;
    out->src_t0 = out->dst_t0 = (uint16_t)a;
    out->src_port = out->dst_port = (uint16_t)k;
    out->index = index;
    if (kind == PROBE_T1_BOUNCE) {
        out->t1 = (uint16_t)stream_t1(pl, window, k, false, rank);
    } else if (kind == PROBE_CROSS) {
        uint64_t key = slot_key(pl, window, index);
        affine f = affine_of(pl, key);
        uint32_t b = a + cross_shift(pl, key, k);
        out->t1 = (uint16_t)stream_t1(pl, window, k, true, rank);
        out->dst_t0 = (uint16_t)(b >= pl->nt0 ? b - pl->nt0 : b);
        out->dst_port = (uint16_t)affine_fwd(&f, k);
    } else if (kind == PROBE_INTRA) {
        uint64_t key = slot_key(pl, window, index);
        affine f = affine_of(pl, key);
        uint32_t y = affine_fwd(&f, k) + intra_shift(pl, key, a);
        out->dst_port = (uint16_t)affine_inv(&f, y >= pl->nport ? y - pl->nport : y);
    }
}

/*
 * The shape of |plane|: T0s and T1s from the topology, down-ports per T0 = one more than the
 * highest port any T0 has cabled to a host. The plan's grid needs every T0's host ports below
 * its switch ports (as the parametric form cables them), so a down-port index is a port.
 */
static int plane_shape(const fab_topo *topo, unsigned plane, plane_plan *pl)
{
    int rv = 0;
    uint32_t nport = 0, low_switch = UINT32_MAX;
    pl->nt0 = fab_topo_nt0(topo, plane);
    pl->nt1 = fab_topo_nt1(topo, plane);
    if (pl->nt0 == 0 || pl->nt1 == 0 || pl->nt0 > UINT16_MAX || pl->nt1 > UINT16_MAX) {
        rv = -EINVAL;
        goto out;
    }
    for (uint32_t a = 0; a < pl->nt0; a++) {
        fab_switch info;
        uint32_t sw = fab_switch_at(topo, plane, FAB_TIER_T0, a);
        if (sw == FAB_NONE || fab_switch_get(topo, sw, &info) != 0) {
            rv = -EINVAL;
            goto out;
        }
        for (unsigned x = 0; x < info.nports; x++) {
            fab_peer peer;
            if (fab_switch_peer(topo, sw, x, &peer) != 0) {
                continue;
            }
            if (peer.kind == FAB_PEER_HOST && x + 1 > nport) {
                nport = x + 1;
            } else if (peer.kind == FAB_PEER_SWITCH && x < low_switch) {
                low_switch = x;
            }
        }
    }
    if (nport == 0 || low_switch < nport) {
        rv = -EINVAL;
        goto out;
    }
    pl->nport = nport;
out:
    return rv;
}

/*
 * Splits |per_window| probes into the kinds by |share|. The T1 stream (T1 bounces and cross)
 * is rounded to a multiple of q = nt1 / gcd(nt1, nport) so that every uplink of a T0 gets the
 * same whole number; the T0 bounces and intra probes take the rest.
 */
static int plane_counts(plane_plan *pl, const double *share, uint32_t per_window)
{
    int rv = 0;
    double s[PROBE_KINDS];
    memcpy(s, share, sizeof(s));
    if (pl->nt0 < 2) {
        s[PROBE_T1_BOUNCE] += s[PROBE_CROSS];
        s[PROBE_CROSS] = 0;
    }
    if (pl->nport < 2) {
        s[PROBE_T0_BOUNCE] += s[PROBE_INTRA];
        s[PROBE_INTRA] = 0;
    }
    double total = s[0] + s[1] + s[2] + s[3];
    double stream = s[PROBE_T1_BOUNCE] + s[PROBE_CROSS];
    double rest_share = s[PROBE_T0_BOUNCE] + s[PROBE_INTRA];
    uint32_t q = pl->nt1 / gcd(pl->nt1, pl->nport), nstream = 0;
    if (stream > 0) {
        if (q > per_window) {
            rv = -EINVAL;
            goto out;
        }
        double m = round((double)per_window * stream / total / q);
        uint32_t mm = m < 1 ? 1 : (uint32_t)m;
        nstream = mm * q > per_window ? per_window / q * q : mm * q;
    }
    uint32_t nb = stream > 0 ? (uint32_t)llround(nstream * s[PROBE_T1_BOUNCE] / stream) : 0;
    /* keep each kind that has a share when there is room for both */
    if (s[PROBE_T1_BOUNCE] > 0 && nb == 0 && nstream >= 2) {
        nb = 1;
    } else if (s[PROBE_CROSS] > 0 && nb == nstream && nstream >= 2) {
        nb = nstream - 1;
    }
    uint32_t rest = per_window - nstream;
    uint32_t nd = rest_share > 0 ? (uint32_t)llround(rest * s[PROBE_INTRA] / rest_share) : 0;
    if (s[PROBE_INTRA] > 0 && nd == 0 && rest >= 2) {
        nd = 1;
    } else if (s[PROBE_T0_BOUNCE] > 0 && nd == rest && rest >= 2) {
        nd = rest - 1;
    }
    pl->n[PROBE_T0_BOUNCE] = rest - nd; /* always possible, so it takes any remainder */
    pl->n[PROBE_T1_BOUNCE] = nb;
    pl->n[PROBE_CROSS] = nstream - nb;
    pl->n[PROBE_INTRA] = nd;
    pl->nstream = nstream;
out:
    return rv;
}

/* Interleaves the kinds over the window: rank r of kind x is due at (r + 1/2) / n[x] of the
 * window, earliest first, ties by kind; so a short burst of loss hits every kind alike. */
static void plane_interleave(plane_plan *pl, uint32_t per_window)
{
    uint32_t next[PROBE_KINDS] = {0};
    for (uint32_t i = 0; i < per_window; i++) {
        unsigned best = PROBE_KINDS;
        for (unsigned x = 0; x < PROBE_KINDS; x++) {
            if (next[x] >= pl->n[x]) {
                continue;
            }
            /* (2 next[x] + 1) / n[x] < (2 next[best] + 1) / n[best], in integers */
            if (best == PROBE_KINDS || (2 * (uint64_t)next[x] + 1) * pl->n[best] <
                                           (2 * (uint64_t)next[best] + 1) * pl->n[x]) {
                best = x;
            }
        }
        pl->slot[i] = (uint32_t)best << SLOT_KIND_SHIFT | next[best];
        next[best]++;
    }
}

static int plane_init(const fab_topo *topo, const probe_cfg *cfg, const double *share,
                      uint32_t per_window, unsigned plane, plane_plan *pl)
{
    int rv;
    if ((rv = plane_shape(topo, plane, pl)) != 0 ||
        (rv = plane_counts(pl, share, per_window)) != 0) {
        goto out;
    }
    pl->key = mix(cfg->seed ^ mix(plane + 1));
    pl->t1_base = reduce((uint32_t)(pl->key >> 32), pl->nt1);
    pl->slot = malloc(per_window * sizeof(*pl->slot));
    pl->unit = malloc(pl->nport * sizeof(*pl->unit));
    pl->unit_inv = malloc(pl->nport * sizeof(*pl->unit_inv));
    if (!pl->slot || !pl->unit || !pl->unit_inv) {
        rv = -ENOMEM;
        goto out;
    }
    plane_interleave(pl, per_window);
    /* the multipliers of the affine port maps: every unit, so the maps vary as much as they
     * can; with one port the only map is the identity, alpha = 0 mod 1 */
    pl->nunit = 0;
    for (uint32_t u = 0; u < pl->nport; u++) {
        if (gcd(u, pl->nport) == 1) {
            pl->unit[pl->nunit] = (uint16_t)u;
            pl->unit_inv[pl->nunit] = (uint16_t)inverse_mod(u, pl->nport);
            pl->nunit++;
        }
    }
out:
    return rv;
}

int probe_plan_new(const fab_topo *topo, const probe_cfg *cfg, probe_plan **pplan)
{
    int rv = -EINVAL;
    probe_plan *plan = NULL;
    const double *share = default_share;
    bool custom = false;
    if (!topo || !cfg || !pplan || cfg->window_ns == 0 || !isfinite(cfg->rate_per_port) ||
        cfg->rate_per_port <= 0) {
        goto fail_cfg;
    }
    for (unsigned x = 0; x < PROBE_KINDS; x++) {
        if (!isfinite(cfg->share[x]) || cfg->share[x] < 0) {
            goto fail_cfg;
        }
        custom = custom || cfg->share[x] > 0;
    }
    if (custom) {
        share = cfg->share;
    }
    double r = round(cfg->rate_per_port * ((double)cfg->window_ns / 1e9));
    if (!(r >= 1 && r <= PROBE_MAX_PER_WINDOW)) {
        goto fail_cfg;
    }
    unsigned planes = fab_topo_planes(topo);
    if (planes == 0 || planes > FAB_MAX_PLANES) {
        goto fail_cfg;
    }
    plan = calloc(1, sizeof(*plan));
    if (!plan) {
        rv = -ENOMEM;
        goto fail_alloc;
    }
    plan->cfg = *cfg;
    plan->per_window = (uint32_t)r;
    plan->planes = planes;
    for (unsigned p = 0; p < planes; p++) {
        if ((rv = plane_init(topo, cfg, share, plan->per_window, p, &plan->pl[p])) != 0) {
            goto fail_planes;
        }
    }
    *pplan = plan;
    return 0;

fail_planes:
    probe_plan_free(plan);
fail_alloc:
fail_cfg:
    return rv;
}

void probe_plan_free(probe_plan *plan)
{
    for (unsigned p = 0; plan && p < plan->planes; p++) {
        plane_plan *pl = &plan->pl[p];
        free(pl->slot);
        free(pl->unit);
        free(pl->unit_inv);
    }
    free(plan);
}

uint32_t probe_plan_per_window(const probe_plan *plan)
{
    return plan->per_window;
}

unsigned probe_plan_planes(const probe_plan *plan)
{
    return plan->planes;
}

int probe_plan_shape(const probe_plan *plan, unsigned plane, uint32_t *pnt0, uint32_t *pnt1,
                     uint32_t *pnports)
{
    int rv = -ERANGE;
    if (plane < plan->planes) {
        *pnt0 = plan->pl[plane].nt0;
        *pnt1 = plan->pl[plane].nt1;
        *pnports = plan->pl[plane].nport;
        rv = 0;
    }
    return rv;
}

uint32_t probe_plan_kind_count(const probe_plan *plan, unsigned plane, probe_kind kind)
{
    return plane < plan->planes && (unsigned)kind < PROBE_KINDS ? plan->pl[plane].n[kind] : 0;
}

uint32_t probe_plan_link_load(const probe_plan *plan, unsigned plane, probe_dir dir)
{
    uint32_t load = 0;
    if (plane < plan->planes) {
        const plane_plan *pl = &plan->pl[plane];
        if (dir == PROBE_NIC_T0 || dir == PROBE_T0_NIC) {
            /* every probe leaves its sender and every probe arrives at one port */
            load = plan->per_window;
        } else if (dir == PROBE_T0_T1 || dir == PROBE_T1_T0) {
            load = (uint32_t)((uint64_t)pl->nport * pl->nstream / pl->nt1);
        }
    }
    return load;
}

uint64_t probe_plan_offset_ns(const probe_plan *plan, uint32_t index)
{
    uint64_t w = plan->cfg.window_ns, n = plan->per_window;
    /* index * w / n without overflowing for any window */
    return w / n * index + w % n * index / n;
}

int probe_plan_get(const probe_plan *plan, uint64_t window, unsigned plane, unsigned t0,
                   unsigned port, uint32_t index, probe_spec *out)
{
    int rv = -ERANGE;
    if (plane < plan->planes && t0 < plan->pl[plane].nt0 && port < plan->pl[plane].nport &&
        index < plan->per_window) {
        probe_fill(&plan->pl[plane], plane, window, t0, port, index, out);
        rv = 0;
    }
    return rv;
}

uint32_t probe_plan_expect(const probe_plan *plan, uint64_t window, unsigned plane, unsigned t0,
                           unsigned port, probe_spec *out, uint32_t max)
{
    uint32_t count = 0;
    if (plane >= plan->planes || t0 >= plan->pl[plane].nt0 || port >= plan->pl[plane].nport) {
        goto out;
    }
    const plane_plan *pl = &plan->pl[plane];
    /* the same slots for every sender: walk this window's in index order and invert the
     * slot's bijection to find the one sender whose probe lands here */
    for (uint32_t i = 0; i < plan->per_window; i++) {
        probe_kind kind = (probe_kind)(pl->slot[i] >> SLOT_KIND_SHIFT);
        uint32_t a = t0, k;
        if (kind == PROBE_CROSS) {
            uint64_t key = slot_key(pl, window, i);
            affine f = affine_of(pl, key);
            k = affine_inv(&f, port);
            a = t0 + pl->nt0 - cross_shift(pl, key, k);
            a = a >= pl->nt0 ? a - pl->nt0 : a;
        } else if (kind == PROBE_INTRA) {
            uint64_t key = slot_key(pl, window, i);
            affine f = affine_of(pl, key);
            uint32_t y = affine_fwd(&f, port) + pl->nport - intra_shift(pl, key, t0);
            k = affine_inv(&f, y >= pl->nport ? y - pl->nport : y);
        } else {
            continue;
        }
        if (count < max) {
            probe_fill(pl, plane, window, a, k, i, &out[count]);
        }
        count++;
    }
out:
    return count;
}

unsigned probe_spec_links(const probe_spec *s, probe_link out[6])
{
    unsigned n = 0;
    out[n++] = (probe_link){s->plane, PROBE_NIC_T0, s->src_t0, s->src_port};
    if (s->kind == PROBE_T1_BOUNCE || s->kind == PROBE_CROSS) {
        out[n++] = (probe_link){s->plane, PROBE_T0_T1, s->src_t0, s->t1};
        out[n++] = (probe_link){s->plane, PROBE_T1_T0, s->dst_t0, s->t1};
    }
    out[n++] = (probe_link){s->plane, PROBE_T0_NIC, s->dst_t0, s->dst_port};
    return n;
}
