/* SPDX-License-Identifier: MIT */
/* Gray-failure localization from per-window probe losses (pure; docs/prober.md §5). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_infer.h"

/* The ring of windows kept: the longest horizon. */
#define NSLOT 32
#define MAXH 6
/* A record's components: its links, their T0s, a T1 and the optic groups at both ends. */
#define MAXCOMP 16
#define NONE UINT32_MAX
#define HOLD (UINT32_MAX - 1) /* container_due(): neither is named at this horizon */
/* A record's thinning level: the trailing zero bits of its hash (kept at shift e iff >= e). */
#define MAXLEV 40
/* Records one horizon's greedy walks, in units of max_records: above it the horizon is thinned
 * (its own uniform subsample of paths), which bounds the CPU of an evaluation. The walks cost
 * about 0.1 us a record (a cache miss per component), so 3 x 2^17 records keep an evaluation of
 * a plane under 100 ms at 130k lost paths a window; keeping the 0.14 % intermittent uplink that
 * the thinning loses at 75k paths a window would take the exact 32-window horizon (2.4M records,
 * 200 ms). */
#define HORIZON_BUDGET 3
/* Horizons from this one on are long: one of them runs per evaluation, in turn (the 1-window
 * horizon every time), and the others repeat the selections of their last run. */
#define LONGH 1
/* Lost probes a component's rivals are counted over (own_evidence()): a sample of a dead link's
 * tens of thousands of records shows its shares as well. */
#define OWN_WALK 128

/* A component key: type | plane | t0 | other, so a key orders by type, then plane. */
static uint32_t key_make(unsigned type, unsigned plane, unsigned t0, unsigned other)
{
    return (uint32_t)type << 29 | (uint32_t)plane << 24 | (uint32_t)t0 << 12 | (uint32_t)other;
}

static probe_comp key_comp(uint32_t key)
{
    probe_comp c = {(uint8_t)(key >> 29), (uint8_t)(key >> 24 & 31), (uint16_t)(key >> 12 & 4095),
                    (uint16_t)(key & 4095)};
    return c;
}

/* A lost-probe record as fed: links packed dir << 24 | t0 << 12 | other. */
typedef struct rec {
    uint32_t lost;
    uint8_t plane, nlinks;
    uint32_t links[6];
} rec;

typedef struct slot {
    uint64_t window;
    int used, final;
    unsigned shift; /* thinning: records kept iff hash % 2^shift == 0 */
    rec *recs;
    size_t nrec, caprec;
    uint32_t *stall; /* senders short of their plan, plane << 24 | t0 << 12 | port */
    size_t nstall, capstall;
    /* after finalizing: each record's components (roff[r] .. roff[r+1] in rc) and, sorted,
     * (component << 32 | record) so a component's records are one run */
    uint32_t *roff, *rc;
    uint64_t *occ;
    size_t nocc;
    uint32_t *expl; /* the horizon stamp that explained each record */
    uint32_t *rl;   /* each record's lost probes, compact for the walks */
    uint8_t *lvl;   /* each record's thinning level: finalizing orders the records by level, high
                     * first, so a thinned horizon walks only the front of each component's run */
    uint32_t nlev[MAXLEV + 1]; /* records (with components) per level */
    /* after finalizing: the window's lost probes per component, ascending by entry */
    uint32_t *cidx, *ccnt;
    size_t ncc;
    unsigned inh; /* the horizons whose running sums count this window (bit h) */
} slot;

/* A component with loss in some window of the ring. Indices stay put while it lives, since
 * records refer to them. Its counts live in arrays parallel to the entries (probe_infer), so
 * the scans over every component read a few bytes each. */
typedef struct comp_ent {
    uint32_t key;
    uint32_t alt_stamp; /* refinement scratch */
    uint32_t refined;   /* the horizon in which its device/links split was decided */
    uint64_t alt;
    uint32_t dev_won; /* the evaluation in which the device beat its links */
    uint32_t first;   /* the horizon in which it was decided before a component under it */
    uint32_t amb;     /* the horizon in which its loss off its worst cable was too little to
                       * name it, and too much to give its loss to that cable's links */
} comp_ent;

/* The greedy's per-candidate state, apart from comp_ent so that the walks over lost-probe records,
 * which touch it for every component of every record, stay within a few megabytes of cache. */
typedef struct hot {
    uint32_t work; /* unexplained lost probes in the current horizon (candidates only) */
} hot;

typedef struct heap_ent {
    double g;
    uint32_t idx, key; /* the key too, so that a pop touches no entry */
} heap_ent;

/* The best evidence one evaluation found for a component. */
typedef struct sel {
    uint32_t key;
    uint64_t lost, sent;
    unsigned horizon;
    double llr, loss;
    int ran; /* by a horizon run in this evaluation, not repeated from an earlier run */
} sel;

typedef struct vstate {
    sel ev;
    unsigned consec; /* consecutive evaluations selected */
    unsigned runs;   /* of those, the evaluations in which a horizon that ran selected it */
    int ran;
    unsigned healed_evals;
    int confirmed, selected;
    uint64_t since, last_seen;
} vstate;

struct probe_infer {
    probe_infer_cfg cfg;
    slot slots[NSLOT];
    uint64_t last_eval;
    int evaluated;
    uint64_t nwin; /* windows evaluated so far */
    comp_ent *ents;
    hot *hot;           /* parallel to ents */
    double *inv_n;      /* parallel to ents: 1 / probes through it in the horizon (work * inv_n is
                         * its loss rate); apart from hot, which the walks keep in cache */
    uint32_t *keys;     /* parallel to ents: their keys, NONE once freed (what the scans read:
                         * dense) */
    uint64_t *tot;      /* parallel to ents: lost over the whole ring (0 once it is freed) */
    uint64_t *hs[MAXH]; /* parallel to ents: running lost over each horizon, kept as windows
                         * enter and leave it (slot.inh) */
    uint64_t *thc;      /* parallel to ents: lost over a thinned horizon (scratch) */
    uint64_t *own;      /* parallel to ents: own_evidence()'s call << 32 | probes shared */
    uint32_t owncall;   /* own_evidence()'s calls (own's stamps) */
    uint64_t *cand;     /* bitmap over ents: candidates of the current horizon (fits in L2) */
    size_t capcand;
    size_t nent, capent;
    uint32_t *freelist;
    size_t nfree, capfree;
    /* the index of keys: per plane, a page per (type, t0) of the entry of each |other| (NONE:
     * none), allocated on first use and freed with its last entry; its last word counts them */
    uint32_t **dir[32];
    heap_ent *heap;
    size_t nheap, capheap;
    sel *sels;
    size_t nsel, capsel;
    /* each long horizon's selections at its last run */
    sel *hsel[MAXH];
    size_t nhsel[MAXH], caphsel[MAXH];
    vstate *vs;
    size_t nvs, capvs;
    uint32_t *scratch;
    size_t capscratch;
    uint64_t *lanes; /* a device's loss per cable (refine) */
    size_t caplanes;
    uint32_t stamp;
    uint32_t evalno;
    size_t killed;        /* candidates the walks took below 2 lost probes since the last purge */
    double p0[32];        /* background loss per probe, per plane */
    const uint64_t *hcnt; /* the current horizon's counts (horizon.cnt), for the heap's ties */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    int rv = 0;
    if (need > *cap) {
        size_t n = *cap ? *cap : 64;
        while (n < need) {
            n *= 2;
        }
        void *q = realloc(*p, n * size);
        if (!q) {
            rv = -ENOMEM;
            goto out;
        }
        *p = q;
        *cap = n;
    }
out:
    return rv;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* Binomial generalised likelihood ratio of |l| lost out of |n| against the background |p0|. */
static double llr(double l, double n, double p0)
{
    double g = 0;
    if (n > 0 && l > 0 && l / n > p0) {
        double p = l / n;
        if (p >= 1) {
            g = l * log(1 / p0);
        } else {
            g = l * log(p / p0) + (n - l) * log((1 - p) / (1 - p0));
        }
    }
    return g;
}

void probe_infer_cfg_default(probe_infer_cfg *cfg, unsigned planes, unsigned nt0, unsigned nt1,
                             unsigned nports)
{
    /* the default plan mix per sender and window (probe_sched.h): 64 T0 bounces, 256 T1
     * bounces, 1024 cross, 64 intra */
    double r = 1408, b1 = 256, x = 1024;
    memset(cfg, 0, sizeof(*cfg));
    cfg->planes = planes;
    cfg->nt0 = nt0;
    cfg->nt1 = nt1;
    cfg->nports = nports;
    cfg->optic_group = nt1 % 4 == 0 ? 4 : 1;
    cfg->n_nic = r;
    cfg->n_up = (b1 + x) * nports / nt1;
    cfg->n_t0 = nports * (r + x);
    cfg->n_t1 = cfg->n_up * nt0;
    cfg->n_optic = cfg->optic_group * nports * (b1 + 2 * x) / nt1;
    cfg->p0 = 0;
    cfg->p0_floor = 1e-7;
    cfg->tau = 25;
    cfg->tau_loo = 8;
    cfg->floor_loss = 2e-4;
    cfg->horizons = MAXH;
    cfg->confirm = 2;
    cfg->heal_windows = 8;
    cfg->max_records = 1u << 17;
}

int probe_infer_cfg_from_plan(probe_infer_cfg *cfg, const probe_plan *plan)
{
    int rv = -EINVAL;
    uint32_t nt0, nt1, np;
    unsigned group = cfg->optic_group;
    if (probe_plan_planes(plan) == 0 || probe_plan_shape(plan, 0, &nt0, &nt1, &np) != 0) {
        goto out;
    }
    double r = probe_plan_per_window(plan);
    double b1 = probe_plan_kind_count(plan, 0, PROBE_T1_BOUNCE);
    double x = probe_plan_kind_count(plan, 0, PROBE_CROSS);
    cfg->planes = probe_plan_planes(plan);
    cfg->nt0 = nt0;
    cfg->nt1 = nt1;
    cfg->nports = np;
    if (group == 0 || nt1 % group != 0) {
        group = nt1 % 4 == 0 ? 4 : 1;
    }
    cfg->optic_group = group;
    cfg->n_nic = r;
    cfg->n_up = probe_plan_link_load(plan, 0, PROBE_T0_T1);
    /* a T0 sees what its ports send and the cross probes they receive (as many as sent) */
    cfg->n_t0 = np * (r + x);
    /* every probe through a T1 enters it on exactly one uplink */
    cfg->n_t1 = cfg->n_up * nt0;
    /* a group's probes: up and down on its lanes, a T1 bounce counted once */
    cfg->n_optic = group * np * (b1 + 2 * x) / nt1;
    rv = 0;
out:
    return rv;
}

int probe_comp_name(const probe_comp *c, char *dest, size_t destlen)
{
    static const char *const names[] = {"u", "d", "U", "D", "T0", "T1", "optic"};
    int n;
    switch (c->type) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC:
        n = snprintf(dest, destlen, "p%u %s t0=%u port=%u", c->plane, names[c->type], c->t0,
                     c->other);
        break;
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0:
        n = snprintf(dest, destlen, "p%u %s t0=%u t1=%u", c->plane, names[c->type], c->t0,
                     c->other);
        break;
    case PROBE_COMP_T0:
        n = snprintf(dest, destlen, "p%u T0 %u", c->plane, c->t0);
        break;
    case PROBE_COMP_T1:
        n = snprintf(dest, destlen, "p%u T1 %u", c->plane, c->other);
        break;
    default:
        n = snprintf(dest, destlen, "p%u optic t0=%u group=%u", c->plane, c->t0, c->other);
        break;
    }
    return n;
}

static int cfg_valid(const probe_infer_cfg *c)
{
    return c->planes >= 1 && c->planes <= 32 && c->nt0 >= 1 && c->nt0 <= 4096 && c->nt1 >= 1 &&
           c->nt1 <= 4096 && c->nports >= 1 && c->nports <= 4096 && c->optic_group >= 1 &&
           c->nt1 % c->optic_group == 0 && c->n_nic > 0 && c->n_up > 0 && c->n_t0 > 0 &&
           c->n_t1 > 0 && c->n_optic > 0 && c->p0 >= 0 && c->p0 < 1 && c->p0_floor > 0 &&
           c->p0_floor < 1 && c->tau > 0 && c->tau_loo >= 0 && c->floor_loss >= 0 &&
           c->horizons >= 1 && c->horizons <= MAXH && c->confirm >= 1 && c->heal_windows >= 1 &&
           c->heal_windows <= NSLOT && c->max_records >= 16;
}

int probe_infer_new(const probe_infer_cfg *cfg, probe_infer **pinf)
{
    int rv = -EINVAL;
    probe_infer *inf;
    if (!cfg_valid(cfg)) {
        goto fail_cfg;
    }
    rv = -ENOMEM;
    inf = calloc(1, sizeof(*inf));
    if (!inf) {
        goto fail_inf;
    }
    inf->cfg = *cfg;
    *pinf = inf;
    return 0;

fail_inf:
fail_cfg:
    return rv;
}

static void slot_free(slot *s)
{
    free(s->recs);
    free(s->stall);
    free(s->roff);
    free(s->rc);
    free(s->occ);
    free(s->expl);
    free(s->lvl);
    free(s->rl);
    free(s->cidx);
    free(s->ccnt);
}

void probe_infer_free(probe_infer *inf)
{
    if (inf) {
        for (size_t i = 0; i < NSLOT; i++) {
            slot_free(&inf->slots[i]);
        }
        free(inf->ents);
        free(inf->hot);
        free(inf->inv_n);
        free(inf->keys);
        free(inf->tot);
        for (size_t h = 0; h < MAXH; h++) {
            free(inf->hs[h]);
        }
        free(inf->thc);
        free(inf->own);
        free(inf->cand);
        free(inf->freelist);
        for (size_t p = 0; p < 32; p++) {
            for (size_t i = 0; inf->dir[p] && i < PROBE_COMP_TYPES * inf->cfg.nt0; i++) {
                free(inf->dir[p][i]);
            }
            free(inf->dir[p]);
        }
        free(inf->heap);
        free(inf->sels);
        for (size_t h = 0; h < MAXH; h++) {
            free(inf->hsel[h]);
        }
        free(inf->vs);
        free(inf->scratch);
        free(inf->lanes);
        free(inf);
    }
}

/* ---- the component table ---- */

/* The words of a key index page of |type|: one per |other|. */
static size_t page_len(const probe_infer_cfg *c, unsigned type)
{
    switch (type) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC:
        return c->nports;
    case PROBE_COMP_T0:
        return 1;
    case PROBE_COMP_OPTIC:
        return c->nt1 / c->optic_group;
    default:
        return c->nt1;
    }
}

/* The index page of |key| (NULL: its plane has none) and its word for |key| in |*po|. */
static uint32_t **dir_page(const probe_infer *inf, uint32_t key, size_t *po)
{
    unsigned type = key >> 29, plane = key >> 24 & 31, t0 = key >> 12 & 4095;
    *po = key & 4095;
    return inf->dir[plane] ? &inf->dir[plane][type * inf->cfg.nt0 + t0] : NULL;
}

static uint32_t ent_find(const probe_infer *inf, uint32_t key)
{
    size_t o;
    uint32_t **pg = dir_page(inf, key, &o);
    return pg && *pg ? (*pg)[o] : NONE;
}

/* Takes entry |idx| out of the index. */
static void dir_del(probe_infer *inf, uint32_t idx)
{
    size_t o;
    uint32_t key = inf->keys[idx];
    uint32_t **pg = dir_page(inf, key, &o);
    size_t len = page_len(&inf->cfg, key >> 29);
    (*pg)[o] = NONE;
    if (--(*pg)[len] == 0) {
        free(*pg);
        *pg = NULL;
    }
}

static int resize(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (q) {
        *p = q;
    }
    return q ? 0 : -ENOMEM;
}

/* Room for |need| entries in every array parallel to the entries. */
static int ents_reserve(probe_infer *inf, size_t need)
{
    int rv = 0;
    if (need > inf->capent) {
        size_t n = inf->capent ? inf->capent * 2 : 1024;
        while (n < need) {
            n *= 2;
        }
        /* an array already grown keeps its size if a later one fails: the next call grows it
         * to the same size again */
        rv |= resize((void **)&inf->ents, n, sizeof(*inf->ents));
        rv |= resize((void **)&inf->hot, n, sizeof(*inf->hot));
        rv |= resize((void **)&inf->inv_n, n, sizeof(*inf->inv_n));
        rv |= resize((void **)&inf->keys, n, sizeof(*inf->keys));
        rv |= resize((void **)&inf->tot, n, sizeof(*inf->tot));
        rv |= resize((void **)&inf->thc, n, sizeof(*inf->thc));
        rv |= resize((void **)&inf->own, n, sizeof(*inf->own));
        for (size_t h = 0; h < MAXH; h++) {
            rv |= resize((void **)&inf->hs[h], n, sizeof(*inf->hs[h]));
        }
        if (rv != 0) {
            rv = -ENOMEM;
            goto out;
        }
        inf->capent = n;
    }
out:
    return rv;
}

/* The entry of |key|, created if missing; NONE when out of memory. */
static uint32_t ent_get(probe_infer *inf, uint32_t key)
{
    size_t o, len = page_len(&inf->cfg, key >> 29);
    unsigned plane = key >> 24 & 31;
    if (!inf->dir[plane]) {
        inf->dir[plane] = calloc(PROBE_COMP_TYPES * inf->cfg.nt0, sizeof(*inf->dir[plane]));
        if (!inf->dir[plane]) {
            return NONE;
        }
    }
    uint32_t **pg = dir_page(inf, key, &o);
    if (!*pg) {
        *pg = malloc((len + 1) * sizeof(**pg));
        if (!*pg) {
            return NONE;
        }
        memset(*pg, 0xff, len * sizeof(**pg));
        (*pg)[len] = 0;
    }
    uint32_t i = (*pg)[o];
    if (i != NONE) {
        return i;
    }
    if (inf->nfree > 0) {
        i = inf->freelist[--inf->nfree];
    } else {
        if (ents_reserve(inf, inf->nent + 1) != 0) {
            return NONE;
        }
        i = (uint32_t)inf->nent++;
    }
    memset(&inf->ents[i], 0, sizeof(inf->ents[i]));
    memset(&inf->hot[i], 0, sizeof(inf->hot[i]));
    inf->inv_n[i] = 0;
    inf->tot[i] = 0;
    inf->thc[i] = 0;
    inf->own[i] = 0;
    for (size_t h = 0; h < MAXH; h++) {
        inf->hs[h][i] = 0;
    }
    inf->ents[i].key = key;
    inf->keys[i] = key;
    (*pg)[o] = i;
    (*pg)[len]++;
    return i;
}

/* Adds (|sign| > 0) or takes away the counts of slot |s| to or from the running sums of the
 * horizons in |mask|. */
static void slot_sums(probe_infer *inf, const slot *s, unsigned mask, int sign)
{
    for (unsigned h = 0; h < MAXH; h++) {
        if (!(mask >> h & 1)) {
            continue;
        }
        uint64_t *hs = inf->hs[h];
        if (sign > 0) {
            for (size_t j = 0; j < s->ncc; j++) {
                hs[s->cidx[j]] += s->ccnt[j];
            }
        } else {
            for (size_t j = 0; j < s->ncc; j++) {
                hs[s->cidx[j]] -= s->ccnt[j];
            }
        }
    }
}

/* The lost probes of entry |e| in finalized slot |s|. */
static uint32_t slot_count(const slot *s, uint32_t e)
{
    size_t lo = 0, hi = s->ncc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->cidx[mid] < e) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < s->ncc && s->cidx[lo] == e ? s->ccnt[lo] : 0;
}

/* ---- windows ---- */

/* Empties slot |s| for |window|, taking its counts out of the component table and freeing the
 * components left without loss (only components with loss are kept). */
static int slot_reset(probe_infer *inf, slot *s, uint64_t window)
{
    int rv = 0;
    if (s->used && s->final) {
        rv = grow((void **)&inf->freelist, &inf->capfree, inf->nent, sizeof(*inf->freelist));
        if (rv != 0) {
            goto out;
        }
        slot_sums(inf, s, s->inh, -1);
        s->inh = 0;
        for (size_t j = 0; j < s->ncc; j++) {
            uint32_t i = s->cidx[j];
            inf->tot[i] -= s->ccnt[j];
            if (inf->tot[i] == 0) {
                dir_del(inf, i);
                inf->keys[i] = NONE;
                inf->freelist[inf->nfree++] = i;
            }
        }
    }
    s->window = window;
    s->used = 1;
    s->final = 0;
    s->shift = 0;
    s->nrec = 0;
    s->nstall = 0;
    s->nocc = 0;
    s->ncc = 0;
    s->inh = 0;
out:
    return rv;
}

/* The slot of |window| for feeding, reset if it held an older window. */
static int slot_for_add(probe_infer *inf, uint64_t window, slot **ps)
{
    int rv = -ESTALE;
    slot *s = &inf->slots[window % NSLOT];
    if (inf->evaluated && window <= inf->last_eval) {
        goto out;
    }
    if (s->used && s->window > window) {
        goto out;
    }
    rv = 0;
    if (!s->used || s->window != window) {
        rv = slot_reset(inf, s, window);
    }
    *ps = s;
out:
    return rv;
}

static int link_valid(const probe_infer_cfg *c, const probe_link *l)
{
    unsigned lim = l->dir <= PROBE_T0_NIC ? c->nports : c->nt1;
    return l->plane < c->planes && l->dir < PROBE_DIRS && l->t0 < c->nt0 && l->other < lim;
}

static uint64_t rec_hash(const rec *r, uint64_t window)
{
    uint64_t h = mix64(window ^ ((uint64_t)r->plane << 56));
    for (unsigned i = 0; i < r->nlinks; i++) {
        h = mix64(h ^ r->links[i]);
    }
    return h;
}

static int rec_kept(const rec *r, uint64_t window, unsigned shift)
{
    return shift == 0 || (rec_hash(r, window) & ((1ull << shift) - 1)) == 0;
}

/* The thinning level of |r|: the highest shift at which it is kept. */
static unsigned rec_level(const rec *r, uint64_t window)
{
    uint64_t h = rec_hash(r, window);
    unsigned l = 0;
    while (l < MAXLEV && !(h >> l & 1)) {
        l++;
    }
    return l;
}

int probe_infer_add(probe_infer *inf, uint64_t window, const probe_link *links, unsigned nlinks,
                    uint32_t lost)
{
    int rv = -EINVAL;
    slot *s;
    rec r;
    if (nlinks == 0 || nlinks > 6) {
        goto out;
    }
    memset(&r, 0, sizeof(r));
    for (unsigned i = 0; i < nlinks; i++) {
        if (!link_valid(&inf->cfg, &links[i]) || links[i].plane != links[0].plane) {
            goto out;
        }
        r.links[i] = (uint32_t)links[i].dir << 24 | (uint32_t)links[i].t0 << 12 | links[i].other;
    }
    r.plane = links[0].plane;
    r.nlinks = (uint8_t)nlinks;
    r.lost = lost;
    rv = 0;
    if (lost == 0) {
        goto out;
    }
    rv = slot_for_add(inf, window, &s);
    if (rv != 0) {
        goto out;
    }
    if (!rec_kept(&r, window, s->shift)) {
        goto out;
    }
    if (s->nrec >= inf->cfg.max_records) {
        /* thin the window to a uniform subsample of paths: its probe counts are scaled by the
         * same factor, so every estimate stays unbiased and no weight inflates a likelihood */
        size_t n = 0;
        s->shift++;
        for (size_t i = 0; i < s->nrec; i++) {
            if (rec_kept(&s->recs[i], window, s->shift)) {
                s->recs[n++] = s->recs[i];
            }
        }
        s->nrec = n;
        if (!rec_kept(&r, window, s->shift)) {
            goto out;
        }
    }
    rv = grow((void **)&s->recs, &s->caprec, s->nrec + 1, sizeof(*s->recs));
    if (rv != 0) {
        goto out;
    }
    s->recs[s->nrec++] = r;
out:
    return rv;
}

int probe_infer_add_sent(probe_infer *inf, uint64_t window, unsigned plane, unsigned t0,
                         unsigned port, uint32_t sent, uint32_t planned)
{
    int rv = -EINVAL;
    slot *s;
    if (plane >= inf->cfg.planes || t0 >= inf->cfg.nt0 || port >= inf->cfg.nports) {
        goto out;
    }
    rv = 0;
    if (sent >= planned) {
        /* only shortfalls are kept: a healthy sender costs nothing */
        goto out;
    }
    rv = slot_for_add(inf, window, &s);
    if (rv != 0) {
        goto out;
    }
    rv = grow((void **)&s->stall, &s->capstall, s->nstall + 1, sizeof(*s->stall));
    if (rv != 0) {
        goto out;
    }
    s->stall[s->nstall++] = (uint32_t)plane << 24 | (uint32_t)t0 << 12 | port;
out:
    return rv;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The component keys of record |r| into |out| (distinct). */
static unsigned rec_comps(const probe_infer_cfg *c, const rec *r, uint32_t out[MAXCOMP])
{
    unsigned n = 0;
    uint32_t k[4];
    for (unsigned i = 0; i < r->nlinks; i++) {
        unsigned dir = r->links[i] >> 24, t0 = r->links[i] >> 12 & 4095, o = r->links[i] & 4095;
        unsigned nk = 0;
        k[nk++] = key_make(dir, r->plane, t0, o);
        k[nk++] = key_make(PROBE_COMP_T0, r->plane, t0, 0);
        if (dir == PROBE_T0_T1 || dir == PROBE_T1_T0) {
            k[nk++] = key_make(PROBE_COMP_T1, r->plane, 0, o);
            k[nk++] = key_make(PROBE_COMP_OPTIC, r->plane, t0, o / c->optic_group);
        }
        for (unsigned j = 0; j < nk; j++) {
            unsigned m = 0;
            while (m < n && out[m] != k[j]) {
                m++;
            }
            if (m == n && n < MAXCOMP) {
                out[n++] = k[j];
            }
        }
    }
    return n;
}

/* Makes slot |s| read-only: drops the records of stalled senders, maps every record to its
 * components, counts the window's losses per component and indexes records by component. */
static int slot_finalize(probe_infer *inf, slot *s)
{
    int rv = 0;
    uint32_t keys[MAXCOMP];
    if (s->final) {
        goto out;
    }
    if (s->nstall) { /* qsort wants a valid pointer even for no element */
        qsort(s->stall, s->nstall, sizeof(*s->stall), cmp_u32);
    }
    free(s->roff);
    free(s->rc);
    free(s->occ);
    free(s->expl);
    free(s->lvl);
    free(s->rl);
    s->rc = NULL;
    s->occ = NULL;
    s->roff = malloc((s->nrec + 1) * sizeof(*s->roff));
    s->expl = calloc(s->nrec + 1, sizeof(*s->expl));
    s->lvl = malloc(s->nrec + 1);
    s->rl = malloc((s->nrec + 1) * sizeof(*s->rl));
    rec *sorted = malloc((s->nrec + 1) * sizeof(*sorted));
    size_t caprc = 0, nrc = 0;
    if (!s->roff || !s->expl || !s->lvl || !s->rl || !sorted) {
        free(sorted);
        rv = -ENOMEM;
        goto out;
    }
    /* the records by level, high first (stable): a thinned horizon's walks then stay within
     * the front of each array, and every walk goes forward through memory */
    size_t at[MAXLEV + 2] = {0};
    for (size_t r = 0; r < s->nrec; r++) {
        s->lvl[r] = (uint8_t)rec_level(&s->recs[r], s->window);
        at[MAXLEV - s->lvl[r] + 1]++;
    }
    for (unsigned l = 0; l <= MAXLEV; l++) {
        at[l + 1] += at[l];
    }
    for (size_t r = 0; r < s->nrec; r++) {
        size_t to = at[MAXLEV - s->lvl[r]]++;
        sorted[to] = s->recs[r];
        s->roff[to] = s->lvl[r]; /* scratch: the level in the new order */
    }
    for (size_t r = 0; r < s->nrec; r++) {
        s->lvl[r] = (uint8_t)s->roff[r];
    }
    free(s->recs);
    s->recs = sorted;
    s->caprec = s->nrec + 1;
    memset(s->nlev, 0, sizeof(s->nlev));
    for (size_t r = 0; r < s->nrec; r++) {
        const rec *p = &s->recs[r];
        s->roff[r] = (uint32_t)nrc;
        s->rl[r] = p->lost;
        uint32_t l0 = p->links[0];
        if (l0 >> 24 == PROBE_NIC_T0 && s->nstall > 0) {
            uint32_t snd = (uint32_t)p->plane << 24 | (l0 & 0xffffff);
            if (bsearch(&snd, s->stall, s->nstall, sizeof(snd), cmp_u32)) {
                /* the sender did not send these: a host issue, not network loss */
                continue;
            }
        }
        unsigned n = rec_comps(&inf->cfg, p, keys);
        rv = grow((void **)&s->rc, &caprc, nrc + n, sizeof(*s->rc));
        if (rv != 0) {
            goto out;
        }
        for (unsigned j = 0; j < n; j++) {
            uint32_t e = ent_get(inf, keys[j]);
            if (e == NONE) {
                rv = -ENOMEM;
                goto out;
            }
            s->rc[nrc++] = e;
        }
        s->nlev[s->lvl[r]] += n > 0;
    }
    s->roff[s->nrec] = (uint32_t)nrc;
    s->occ = malloc((nrc + 1) * sizeof(*s->occ));
    if (!s->occ) {
        rv = -ENOMEM;
        goto out;
    }
    /* a counting sort by component (records stay in order within a run): linear, where a
     * comparison sort of a dead switch's window cost more than the whole greedy */
    rv = grow((void **)&inf->scratch, &inf->capscratch, inf->nent + 1, sizeof(*inf->scratch));
    if (rv != 0) {
        goto out;
    }
    uint32_t *pos = inf->scratch;
    memset(pos, 0, (inf->nent + 1) * sizeof(*pos));
    for (size_t j = 0; j < nrc; j++) {
        pos[s->rc[j] + 1]++;
    }
    for (size_t i = 0; i < inf->nent; i++) {
        pos[i + 1] += pos[i];
    }
    for (size_t r = 0; r < s->nrec; r++) {
        for (uint32_t j = s->roff[r]; j < s->roff[r + 1]; j++) {
            s->occ[pos[s->rc[j]]++] = (uint64_t)s->rc[j] << 32 | r;
        }
    }
    s->nocc = nrc;
    /* the window's count per component, one per run of the occurrences */
    size_t ncc = 0;
    for (size_t o = 0; o < nrc; o++) {
        ncc += o == 0 || s->occ[o] >> 32 != s->occ[o - 1] >> 32;
    }
    free(s->cidx);
    free(s->ccnt);
    s->cidx = malloc((ncc + 1) * sizeof(*s->cidx));
    s->ccnt = malloc((ncc + 1) * sizeof(*s->ccnt));
    if (!s->cidx || !s->ccnt) {
        rv = -ENOMEM;
        goto out;
    }
    s->ncc = 0;
    for (size_t o = 0; o < nrc; o++) {
        uint32_t e = (uint32_t)(s->occ[o] >> 32);
        if (o == 0 || e != s->occ[o - 1] >> 32) {
            s->cidx[s->ncc] = e;
            s->ccnt[s->ncc++] = 0;
        }
        s->ccnt[s->ncc - 1] += s->rl[(uint32_t)s->occ[o]];
        inf->tot[e] += s->rl[(uint32_t)s->occ[o]];
    }
    s->inh = 0;
    s->final = 1;
out:
    return rv;
}

/* ---- evaluation ---- */

/* The fewest lost probes (2 at least) of |n| that score |tau| against background |p0|. */
static uint64_t least_passing(double n, double p0, double tau)
{
    uint64_t lo = 2, hi = 2;
    while (hi < (uint64_t)n + 2 && llr((double)hi, n, p0) < tau) {
        hi *= 2;
    }
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (llr((double)mid, n, p0) >= tau) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* Probes a component of |key|'s class carries per window. */
static double comp_n(const probe_infer_cfg *c, uint32_t key)
{
    switch (key >> 29) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC:
        return c->n_nic;
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0:
        return c->n_up;
    case PROBE_COMP_T0:
        return c->n_t0;
    case PROBE_COMP_T1:
        return c->n_t1;
    default:
        return c->n_optic;
    }
}

/* The background loss per probe on |key|'s plane. */
static double p0_of(const probe_infer *inf, uint32_t key)
{
    return inf->p0[key >> 24 & 31];
}

/* The lost probes over the current horizon of entry |idx|, with a link's reverse direction's
 * (the cable's) for a link. */
static uint64_t tie_count(const probe_infer *inf, uint32_t idx, uint32_t key)
{
    uint64_t n = inf->hcnt[idx];
    if (key >> 29 <= PROBE_COMP_T1_T0) {
        uint32_t r = ent_find(inf, key ^ 1u << 29);
        n += r != NONE ? inf->hcnt[r] : 0;
    }
    return n;
}

/* Whether |a| comes before |b| of the same gain in the heap. Equal unexplained counts of a class
 * go first to the larger count over the horizon, a link's cable's (both directions): the two
 * directions of a lossy cable share its T1 bounces, and once one direction has explained them
 * the other is left with the cross probes it lost, which can all come from one T0, whose clean
 * uplink then holds just as many; the cable that lost the bounces too is the likelier. Then to
 * the lower key, so that the greedy's order does not depend on the numbering of the entries. */
static __attribute__((noinline)) int heap_tie(const probe_infer *inf, const heap_ent *a,
                                              const heap_ent *b)
{
    uint64_t x = tie_count(inf, a->idx, a->key), y = tie_count(inf, b->idx, b->key);
    return x != y ? x > y : a->key < b->key;
}

/* Whether |a| comes before |b| in the heap: the larger gain first. */
static inline int heap_before(const probe_infer *inf, const heap_ent *a, const heap_ent *b)
{
    return a->g != b->g ? a->g > b->g : heap_tie(inf, a, b);
}

static int heap_push(probe_infer *inf, double g, uint32_t idx)
{
    int rv = grow((void **)&inf->heap, &inf->capheap, inf->nheap + 1, sizeof(*inf->heap));
    if (rv == 0) {
        size_t i = inf->nheap++;
        heap_ent e = {g, idx, inf->keys[idx]};
        while (i > 0 && heap_before(inf, &e, &inf->heap[(i - 1) / 2])) {
            inf->heap[i] = inf->heap[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        inf->heap[i] = e;
    }
    return rv;
}

/* Sifts |last| down from position |i| of a heap of |n| entries. */
static void heap_down(probe_infer *inf, size_t i, size_t n, heap_ent last)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) {
            break;
        }
        if (c + 1 < n && heap_before(inf, &inf->heap[c + 1], &inf->heap[c])) {
            c++;
        }
        if (!heap_before(inf, &inf->heap[c], &last)) {
            break;
        }
        inf->heap[i] = inf->heap[c];
        i = c;
    }
    inf->heap[i] = last;
}

static heap_ent heap_pop(probe_infer *inf)
{
    heap_ent top = inf->heap[0], last = inf->heap[--inf->nheap];
    if (inf->nheap > 0) {
        heap_down(inf, 0, inf->nheap, last);
    }
    return top;
}

/* Drops the heap's candidates whose count fell below what can pass tau in their class (|lmin|):
 * popped, they would be dropped anyway, one logarithmic step each; a selected switch takes most
 * of the links under it there at once. */
static void heap_purge(probe_infer *inf, const uint64_t *lmin)
{
    size_t n = 0;
    for (size_t i = 0; i < inf->nheap; i++) {
        heap_ent e = inf->heap[i];
        if (inf->hot[e.idx].work >= lmin[e.key >> 29]) {
            inf->heap[n++] = e;
        }
    }
    inf->nheap = n;
    for (size_t i = n / 2; i-- > 0;) {
        heap_down(inf, i, n, inf->heap[i]);
    }
    inf->killed = 0;
}

/* One horizon's view: the slots of its windows (NULL where nothing was observed). */
typedef struct horizon {
    unsigned h, len;
    unsigned thin; /* the horizon's own thinning: only records of level >= thin are walked */
    slot *s[NSLOT];
    double scale[NSLOT];
    double sum;          /* windows observed, thinning counted */
    double sum0;         /* windows observed, only their own thinning counted (the running sums) */
    const uint64_t *cnt; /* lost per component over the horizon: its running sums, or thc */
} horizon;

static void horizon_init(probe_infer *inf, uint64_t window, unsigned h, horizon *hz)
{
    uint64_t kept[MAXLEV + 2] = {0};
    uint64_t budget = (uint64_t)inf->cfg.max_records * HORIZON_BUDGET;
    hz->h = h;
    hz->len = 1u << h;
    hz->sum = 0;
    hz->sum0 = 0;
    for (unsigned i = 0; i < hz->len; i++) {
        slot *s = NULL;
        if (window >= i) {
            s = &inf->slots[(window - i) % NSLOT];
            if (!s->used || !s->final || s->window != window - i) {
                s = NULL;
            }
        }
        hz->s[i] = s;
        for (unsigned l = 0; s && l <= MAXLEV; l++) {
            kept[l] += s->nlev[l];
        }
    }
    /* the least thinning that keeps the walks within budget: records of level >= thin */
    for (int l = MAXLEV - 1; l >= 0; l--) {
        kept[l] += kept[l + 1];
    }
    hz->thin = 0;
    while (hz->thin < MAXLEV && kept[hz->thin] > budget) {
        hz->thin++;
    }
    for (unsigned i = 0; i < hz->len; i++) {
        slot *s = hz->s[i];
        unsigned sh = s && s->shift > hz->thin ? s->shift : hz->thin;
        hz->scale[i] = s ? ldexp(1.0, -(int)sh) : 0;
        hz->sum += hz->scale[i];
        hz->sum0 += s ? ldexp(1.0, -(int)s->shift) : 0;
    }
    hz->cnt = hz->thin ? inf->thc : inf->hs[h];
}

/* The lost probes of every component over a thinned horizon into thc: a walk of its kept
 * records (an unthinned horizon reads its running sums). */
static void horizon_count(probe_infer *inf, const horizon *hz)
{
    if (hz->thin == 0) {
        return;
    }
    memset(inf->thc, 0, inf->nent * sizeof(*inf->thc));
    for (unsigned i = 0; i < hz->len; i++) {
        const slot *s = hz->s[i];
        for (size_t r = 0; s && r < s->nrec && s->lvl[r] >= hz->thin; r++) {
            for (uint32_t j = s->roff[r]; j < s->roff[r + 1]; j++) {
                inf->thc[s->rc[j]] += s->rl[r];
            }
        }
    }
}

/* Records one evaluation's selection, keeping the strongest evidence per component. */
static int sel_add(probe_infer *inf, const sel *v)
{
    int rv = 0;
    for (size_t i = 0; i < inf->nsel; i++) {
        if (inf->sels[i].key == v->key) {
            int ran = inf->sels[i].ran | v->ran;
            if (v->llr > inf->sels[i].llr) {
                inf->sels[i] = *v;
            }
            inf->sels[i].ran = ran;
            goto out;
        }
    }
    rv = grow((void **)&inf->sels, &inf->capsel, inf->nsel + 1, sizeof(*inf->sels));
    if (rv == 0) {
        inf->sels[inf->nsel++] = *v;
    }
out:
    return rv;
}

/* The run of component |idx| in the sorted occurrences of |s|. */
static size_t occ_first(const slot *s, uint32_t idx)
{
    size_t lo = 0, hi = s->nocc;
    uint64_t want = (uint64_t)idx << 32;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->occ[mid] < want) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Selects component |idx| in horizon |hz|: its unexplained lost probes become explained (and
 * leave every other candidate's count), then it is reported if it passes the threshold, the
 * effect-size floor and, over two windows or more, the leave-one-window-out test. */
static int select_comp(probe_infer *inf, const horizon *hz, uint32_t idx)
{
    int rv = 0;
    double aw[NSLOT] = {0};
    double lost = 0;
    uint32_t key = inf->ents[idx].key;
    double n1 = comp_n(&inf->cfg, key);
    for (unsigned i = 0; i < hz->len; i++) {
        slot *s = hz->s[i];
        if (!s) {
            continue;
        }
        for (size_t o = occ_first(s, idx); o < s->nocc && s->occ[o] >> 32 == idx; o++) {
            uint32_t r = (uint32_t)s->occ[o];
            if (s->lvl[r] < hz->thin) {
                break;
            }
            if (s->expl[r] == inf->stamp) {
                continue;
            }
            s->expl[r] = inf->stamp;
            uint32_t l = s->rl[r];
            aw[i] += l;
            lost += l;
            for (uint32_t j = s->roff[r]; j < s->roff[r + 1]; j++) {
                uint32_t c = s->rc[j];
                if (inf->cand[c >> 6] >> (c & 63) & 1) {
                    hot *e = &inf->hot[c];
                    uint32_t was = e->work;
                    e->work -= l < was ? l : was;
                    inf->killed += was >= 2 && e->work < 2;
                }
            }
        }
    }
    double n = n1 * hz->sum;
    double p0 = p0_of(inf, key);
    double g = llr(lost, n, p0);
    int pass = g >= inf->cfg.tau && lost >= inf->cfg.floor_loss * n;
    if (pass && hz->len >= 2) {
        /* a one-window burst must not carry a long-horizon verdict; over 8 windows or more,
         * neither may two (the noise-only runs met two bursts on one uplink within 32 s) */
        double left = lost, sent = n;
        for (unsigned k = 0; k < (hz->len >= 8 ? 2u : 1u); k++) {
            unsigned worst = 0;
            for (unsigned i = 1; i < hz->len; i++) {
                worst = aw[i] > aw[worst] ? i : worst;
            }
            left -= aw[worst];
            sent -= n1 * hz->scale[worst];
            aw[worst] = -1;
        }
        pass = llr(left, sent, p0) >= inf->cfg.tau_loo;
    }
    if (pass) {
        sel v = {key, (uint64_t)lost, (uint64_t)(n + 0.5), hz->len, g, lost / n, 1};
        rv = sel_add(inf, &v);
    }
    return rv;
}

/* Whether link component |lk| lies under device or optic group |dk|. */
static int link_under(const probe_infer_cfg *c, uint32_t dk, uint32_t lk)
{
    /* on the packed keys (type 3 bits, plane 5, t0 12, other 12): this runs per record */
    uint32_t lt = lk >> 29, dt = dk >> 29;
    if (lt > PROBE_COMP_T1_T0 || ((lk ^ dk) >> 24 & 31) != 0) {
        return 0;
    }
    int up = lt == PROBE_COMP_T0_T1 || lt == PROBE_COMP_T1_T0;
    switch (dt) {
    case PROBE_COMP_T0:
        return ((lk ^ dk) >> 12 & 4095) == 0;
    case PROBE_COMP_T1:
        return up && ((lk ^ dk) & 4095) == 0;
    default:
        return up && ((lk ^ dk) >> 12 & 4095) == 0 && (lk & 4095) / c->optic_group == (dk & 4095);
    }
}

/* The cables of device or optic group |dk|, a cable being both directions of one link under
 * it: a T0's to each port and each T1, a T1's to each T0, an optic group's lanes. */
static unsigned cable_count(const probe_infer_cfg *c, uint32_t dk)
{
    switch (dk >> 29) {
    case PROBE_COMP_T0:
        return c->nports + c->nt1;
    case PROBE_COMP_T1:
        return c->nt0;
    default:
        return c->optic_group;
    }
}

/* The cable of |dk| (below cable_count()) that record link |l| (packed as rec.links, on the
 * plane of |dk|) lies on, or NONE if it is not under |dk|. */
static uint32_t cable_of(const probe_infer_cfg *c, uint32_t dk, uint32_t l)
{
    uint32_t dir = l >> 24, t0 = l >> 12 & 4095, o = l & 4095, dt0 = dk >> 12 & 4095;
    int up = dir == PROBE_T0_T1 || dir == PROBE_T1_T0;
    switch (dk >> 29) {
    case PROBE_COMP_T0:
        return t0 != dt0 ? NONE : up ? c->nports + o : o;
    case PROBE_COMP_T1:
        return up && o == (dk & 4095) ? t0 : NONE;
    default:
        return up && t0 == dt0 && o / c->optic_group == (dk & 4095) ? o % c->optic_group : NONE;
    }
}

/* Distinct probes per window over cable |cable| of |dk|: an uplink's two directions with its
 * T1 bounces counted once (an optic lane); a port's likewise, less its T1 bounces (its T0
 * bounces, a few percent, are counted twice, which leaves the rest of the device a little
 * less than its share). */
static double cable_n(const probe_infer_cfg *c, uint32_t dk, unsigned cable)
{
    double lane = c->n_optic / c->optic_group;
    if (dk >> 29 == PROBE_COMP_T0 && cable < c->nports) {
        return 2 * c->n_nic - (2 * c->n_up - lane) * c->nt1 / c->nports;
    }
    return lane;
}

/*
 * Device or optic group |idx| is the strongest candidate. Its loss must be its own, spread over its
 * cables (cable_count()): without the records of its most lossy cable it must still score tau
 * against the background (exclusive evidence, docs/prober.md §5.5), or it is dropped (sets
 * |*pdrop|) and the loss is left to the links of that cable, which stay candidates. A device or
 * cage fault loses on all its cables; the loss of one cable, one way or both, is that cable's:
 * pooled in its optic group (or T0, or T1) it outscores each direction of the cable at short
 * horizons, or against a background the loss itself lifts, and would name the healthy cables beside
 * it too.
 *
 * Then, if |decide|, decide by penalised likelihood whether it, or the best sparse set of links
 * under it, explains its lost probes better. Each unexplained record is given to its most lossy
 * candidate (highest unexplained loss rate) other than the device, and counts for the links
 * only when that candidate is a link under the device (one pass, so no probe counts twice): a
 * record lost to a blackholed host link that merely passes through the device belongs to that
 * host link, not to the device's link on its path, which would otherwise be selected here on
 * borrowed evidence. Each link pays tau as the device does. Sets |*plinks| when the links won
 * (and selects them).
 */
static int refine(probe_infer *inf, const horizon *hz, uint32_t idx, int decide, int *pdrop,
                  int *plinks)
{
    int rv = 0;
    size_t nt = 0;
    uint32_t dk = inf->ents[idx].key;
    unsigned ncab = cable_count(&inf->cfg, dk);
    uint64_t all = 0;
    double n1 = comp_n(&inf->cfg, dk);
    *pdrop = 0;
    *plinks = 0;
    /* a device that keeps tau even if its biggest cable lost every probe over it (a dead
     * switch) is spread for sure: its cables need no counting */
    double c0 = cable_n(&inf->cfg, dk, 0), c1 = cable_n(&inf->cfg, dk, ncab - 1);
    double most = inf->hot[idx].work - fmax(c0, c1) * hz->sum, cmin = fmin(c0, c1);
    int count =
        ncab > 1 && !(most > 0 && llr(most, (n1 - cmin) * hz->sum, p0_of(inf, dk)) >= inf->cfg.tau);
    if (count) {
        rv = grow((void **)&inf->lanes, &inf->caplanes, ncab, sizeof(*inf->lanes));
        if (rv != 0) {
            goto out;
        }
        memset(inf->lanes, 0, ncab * sizeof(*inf->lanes));
    }
    for (unsigned i = 0; i < hz->len; i++) {
        slot *s = hz->s[i];
        if (!s) {
            continue;
        }
        for (size_t o = occ_first(s, idx); o < s->nocc && s->occ[o] >> 32 == idx; o++) {
            uint32_t r = (uint32_t)s->occ[o], best = NONE;
            uint32_t seen[6];
            unsigned nseen = 0;
            if (s->lvl[r] < hz->thin) {
                break;
            }
            if (s->expl[r] == inf->stamp) {
                continue;
            }
            all += s->rl[r];
            /* the record's cables of the device, each counted once (from the record's links,
             * which are at hand, where its components' keys are scattered) */
            const rec *p = &s->recs[r];
            for (unsigned x = 0; x < p->nlinks && count; x++) {
                uint32_t cab = cable_of(&inf->cfg, dk, p->links[x]), m = 0;
                while (cab != NONE && m < nseen && seen[m] != cab) {
                    m++;
                }
                if (cab != NONE && m == nseen) {
                    seen[nseen++] = cab;
                    inf->lanes[cab] += s->rl[r];
                }
            }
            double rbest = 0;
            for (uint32_t j = s->roff[r]; j < s->roff[r + 1] && decide; j++) {
                uint32_t c = s->rc[j];
                if (c == idx || !(inf->cand[c >> 6] >> (c & 63) & 1)) {
                    continue;
                }
                double rate = inf->hot[c].work * inf->inv_n[c];
                if (rate > rbest) {
                    best = c;
                    rbest = rate;
                }
            }
            if (best == NONE || !link_under(&inf->cfg, dk, inf->ents[best].key)) {
                continue;
            }
            comp_ent *b = &inf->ents[best];
            if (b->alt_stamp != inf->stamp) {
                b->alt_stamp = inf->stamp;
                b->alt = 0;
                rv = grow((void **)&inf->scratch, &inf->capscratch, nt + 1, sizeof(*inf->scratch));
                if (rv != 0) {
                    goto out;
                }
                inf->scratch[nt++] = best;
            }
            b->alt += s->rl[r];
        }
    }
    if (count) {
        unsigned worst = 0;
        for (unsigned l = 1; l < ncab; l++) {
            worst = inf->lanes[l] > inf->lanes[worst] ? l : worst;
        }
        double n = (n1 - cable_n(&inf->cfg, dk, worst)) * hz->sum;
        double left = (double)(all - inf->lanes[worst]);
        double g = n > 0 ? llr(left, n, p0_of(inf, dk)) : 0;
        *pdrop = g >= inf->cfg.tau ? 0 : g >= inf->cfg.tau_loo ? 2 : 1;
    }
    double links = 0;
    size_t npass = 0;
    for (size_t i = 0; i < nt; i++) {
        comp_ent *e = &inf->ents[inf->scratch[i]];
        e->alt_stamp = 0;
        if (*pdrop) {
            continue;
        }
        double g = llr((double)e->alt, comp_n(&inf->cfg, e->key) * hz->sum, p0_of(inf, e->key));
        if (g >= inf->cfg.tau) {
            links += g - inf->cfg.tau;
            inf->scratch[npass++] = inf->scratch[i];
        }
    }
    const hot *d = &inf->hot[idx];
    double dev =
        llr((double)d->work, comp_n(&inf->cfg, dk) * hz->sum, p0_of(inf, dk)) - inf->cfg.tau;
    if (npass > 0 && links > dev) {
        *plinks = 1;
        for (size_t i = 0; i < npass && rv == 0; i++) {
            rv = select_comp(inf, hz, inf->scratch[i]);
        }
    }
out:
    return rv;
}

/* The unexplained lost probes of entry |x| in horizon |hz|: a candidate's count, else (it
 * could not pass tau) its lost probes over the horizon, explained or not. */
static double horizon_work(const probe_infer *inf, const horizon *hz, uint32_t x)
{
    return inf->cand[x >> 6] >> (x & 63) & 1 ? (double)inf->hot[x].work : (double)hz->cnt[x];
}

/*
 * Whether component |rk| is a rival explanation of component |ck|'s lost probes: any other
 * component but one over |ck| (a T0 over its links and optic groups, a T1 and an optic group
 * over their uplinks: decided first, container_due()) or under it (its links, a T0's optic
 * groups: its refinement weighs them).
 */
static int rival(const probe_infer_cfg *c, uint32_t ck, uint32_t rk)
{
    unsigned ct = ck >> 29, rt = rk >> 29;
    if (((ck ^ rk) >> 24 & 31) != 0) {
        return 1;
    }
    if (ct <= PROBE_COMP_T1_T0 && rt >= PROBE_COMP_T0) {
        return !link_under(c, rk, ck);
    }
    if (rt <= PROBE_COMP_T1_T0 && ct >= PROBE_COMP_T0) {
        return !link_under(c, ck, rk);
    }
    if (ct == PROBE_COMP_OPTIC && rt == PROBE_COMP_T0) {
        return ((ck ^ rk) >> 12 & 4095) != 0;
    }
    if (ct == PROBE_COMP_T0 && rt == PROBE_COMP_OPTIC) {
        return ((ck ^ rk) >> 12 & 4095) != 0;
    }
    return 1;
}

/*
 * Component |idx| is the strongest candidate: its evidence must be its own (docs/prober.md
 * §5.4). Its rivals are the components on its unexplained lost probes (rival()), a link's
 * counted as a cable (both directions; a link's own reverse direction on its own). Against each
 * rival that shares enough of its lost probes, it must either still pass tau without them (it
 * is needed beside the rival: two faults), or gain tau_loo more than the rival (as many losses
 * on fewer probes, against the rival's losses elsewhere); otherwise it waits (clears |*pown|):
 * the rival explains its evidence as well or better, or the two cannot be told apart at this
 * horizon. The greedy's gain alone does not tell them apart: a host port losing 0.5 % one way
 * loses a handful of probes in a few windows, and when all of them went via one T1 that uplink
 * (fewer probes through it, so a higher rate) outscored the port by a fraction of a nat on the
 * very same probes and was named; a far T0's uplink or host port, or another T0, whose probes
 * crossed a lossy T0 likewise; on the lab, where a T0's two uplinks are one optic group, a T0
 * whose loss fell on one host port's cable had that group named.
 */
static int own_evidence(probe_infer *inf, const horizon *hz, uint32_t idx, int *pown)
{
    int rv = 0;
    size_t nt = 0;
    uint32_t key = inf->ents[idx].key,
             own = key >> 29 <= PROBE_COMP_T1_T0 ? key & ~(1u << 29) : NONE;
    double work = inf->hot[idx].work, n = comp_n(&inf->cfg, key) * hz->sum, walked = 0;
    uint32_t call = ++inf->owncall;
    if (call == 0) {
        /* the stamps wrapped: none may match a new one */
        memset(inf->own, 0, inf->nent * sizeof(*inf->own));
        call = ++inf->owncall;
    }
    *pown = 1;
    /* the newest windows first, up to OWN_WALK records: the shares are the paths', the same in
     * every window, and a window's records come in the order of their hash (a uniform sample) */
    for (unsigned i = 0; i < hz->len && walked < OWN_WALK; i++) {
        slot *s = hz->s[i];
        if (!s) {
            continue;
        }
        for (size_t o = occ_first(s, idx);
             o < s->nocc && s->occ[o] >> 32 == idx && walked < OWN_WALK; o++) {
            uint32_t r = (uint32_t)s->occ[o], seen[6];
            unsigned nseen = 0;
            if (s->lvl[r] < hz->thin) {
                break;
            }
            if (s->expl[r] == inf->stamp) {
                continue;
            }
            walked += s->rl[r];
            for (uint32_t j = s->roff[r]; j < s->roff[r + 1]; j++) {
                uint32_t c = s->rc[j], ck, m = 0;
                if (c == idx || !(inf->cand[c >> 6] >> (c & 63) & 1) ||
                    !rival(&inf->cfg, key, ck = inf->keys[c])) {
                    continue;
                }
                if (ck >> 29 <= PROBE_COMP_T1_T0 && (ck & ~(1u << 29)) != own) {
                    /* a record over both directions of a cable (a bounce) counts for it once */
                    uint32_t cab = ck & ~(1u << 29);
                    while (m < nseen && seen[m] != cab) {
                        m++;
                    }
                    if (m < nseen) {
                        continue;
                    }
                    seen[nseen++] = cab;
                }
                if (inf->own[c] >> 32 != call) {
                    inf->own[c] = (uint64_t)call << 32;
                    rv = grow((void **)&inf->scratch, &inf->capscratch, nt + 1,
                              sizeof(*inf->scratch));
                    if (rv != 0) {
                        goto out;
                    }
                    inf->scratch[nt++] = c;
                }
                inf->own[c] += s->rl[r];
            }
        }
    }
    /* a cable's records are counted on one direction or the other: their sum is the cable's
     * (the reverse direction of a link is a rival of its own). A rival can leave the component
     * below tau only if it shares more than |need| of its lost probes, a cable only if one of its
     * directions has half of that */
    double p0 = p0_of(inf, key), g = llr(work, n, p0), scale = walked > 0 ? work / walked : 1;
    double lo = 0, hi = work;
    while (hi - lo > 0.5) {
        double mid = (lo + hi) / 2;
        *(llr(mid, n, p0) >= inf->cfg.tau ? &hi : &lo) = mid;
    }
    double need = (work - hi) / scale;
    for (size_t i = 0; i < nt && *pown; i++) {
        uint32_t x = inf->scratch[i], xk = inf->keys[x];
        int cable = xk >> 29 <= PROBE_COMP_T1_T0 && (xk & ~(1u << 29)) != own;
        double shared = (double)(inf->own[x] & UINT32_MAX);
        if (shared < (cable ? need / 2 : need)) {
            continue;
        }
        double rn = comp_n(&inf->cfg, xk) * hz->sum, rw = horizon_work(inf, hz, x);
        double gr = llr(rw, rn, p0);
        if (cable) {
            uint32_t rev = ent_find(inf, xk ^ 1u << 29);
            double rw2 = rev != NONE ? horizon_work(inf, hz, rev) : 0;
            if (rev != NONE && inf->own[rev] >> 32 == call) {
                shared += (double)(inf->own[rev] & UINT32_MAX);
            }
            /* the cable's best: either direction, or both (their bounces counted twice) */
            gr = fmax(gr, fmax(llr(rw2, rn, p0), llr(rw + rw2, 2 * rn, p0)));
        }
        shared *= scale;
        /* without what the rival shares it must still pass tau (it is needed beside the
         * rival), or explain the shared part better than the rival by tau_loo (its gain on
         * fewer probes for as many losses, less the rival's evidence elsewhere); otherwise the
         * rival explains it as well or better, or the two cannot be told apart yet */
        *pown = llr(work - shared, n, p0) >= inf->cfg.tau || g - gr >= inf->cfg.tau_loo;
    }
out:
    return rv;
}

/*
 * The device or optic group over link or optic group |key| (the top of the heap, gaining |g|)
 * that must be decided first, or NONE: the candidate over it with the largest gain, if that
 * gain passes tau and comes within tau_loo of |g| (and the device is not below the reporting
 * floor), not yet decided so in this horizon; HOLD when such a device was found neither spread
 * nor one cable's in this horizon (refine()), so that neither is named. The component under a
 * device has every lost probe of it that the device has, on fewer probes: when the device's own
 * losses elsewhere make up for that, the two explain the evidence about as well, and the device's
 * refinement (its cables, then it against its links) is what tells them apart. A T0 losing 0.3 % on
 * each of its links otherwise had one of its host ports, luckier in a few windows, named before it.
 */
static uint32_t container_due(probe_infer *inf, const horizon *hz, const uint64_t *lmin,
                              uint32_t key, double g, double *pg)
{
    uint32_t type = key >> 29, plane = key >> 24 & 31, t0 = key >> 12 & 4095, o = key & 4095;
    uint32_t over[3], nover = 0, best = NONE;
    double gbest = 0;
    if (type == PROBE_COMP_T0 || type == PROBE_COMP_T1) {
        return NONE;
    }
    over[nover++] = key_make(PROBE_COMP_T0, plane, t0, 0);
    if (type == PROBE_COMP_T0_T1 || type == PROBE_COMP_T1_T0) {
        over[nover++] = key_make(PROBE_COMP_T1, plane, 0, o);
        over[nover++] = key_make(PROBE_COMP_OPTIC, plane, t0, o / inf->cfg.optic_group);
    }
    for (unsigned i = 0; i < nover; i++) {
        uint32_t d = ent_find(inf, over[i]);
        if (d == NONE || !(inf->cand[d >> 6] >> (d & 63) & 1) ||
            inf->hot[d].work < lmin[over[i] >> 29]) {
            continue;
        }
        double n = comp_n(&inf->cfg, over[i]) * hz->sum, w = inf->hot[d].work;
        double gd = llr(w, n, p0_of(inf, over[i]));
        if (gd < inf->cfg.tau || gd < g - inf->cfg.tau_loo || w < inf->cfg.floor_loss * n) {
            continue;
        }
        if (inf->ents[d].amb == inf->stamp) {
            return HOLD;
        }
        if (inf->ents[d].first != inf->stamp && gd > gbest) {
            best = d;
            gbest = gd;
        }
    }
    if (best != NONE) {
        inf->ents[best].first = inf->stamp;
        *pg = gbest;
    }
    return best;
}

/*
 * The loss of the device or optic group over link or optic group |key| that the last
 * evaluation selected (the largest if several), or 0. Probes under a lossy device lose at its
 * rate whatever their link: a link under it is named only if it loses more than that, which a
 * short horizon's luck does not show (a T0 losing 0.3 % on every link had its loss of two
 * windows fall on one host port's cable, and that cable named beside the T0).
 */
static double device_loss(const probe_infer *inf, uint32_t key)
{
    double most = 0;
    unsigned type = key >> 29;
    if (type == PROBE_COMP_T0 || type == PROBE_COMP_T1) {
        return 0;
    }
    for (size_t i = 0; i < inf->nvs; i++) {
        const vstate *v = &inf->vs[i];
        uint32_t dk = v->ev.key;
        unsigned dt = dk >> 29;
        if (!v->selected || dt < PROBE_COMP_T0 || dk == key || ((dk ^ key) >> 24 & 31) != 0) {
            continue;
        }
        int over = type <= PROBE_COMP_T1_T0 ? link_under(&inf->cfg, dk, key)
                                            : dt == PROBE_COMP_T0 && ((dk ^ key) >> 12 & 4095) == 0;
        if (over && v->ev.loss > most) {
            most = v->ev.loss;
        }
    }
    return most;
}

/* The lazy greedy of one horizon (docs/prober.md §5.4). */
static int run_horizon(probe_infer *inf, const horizon *hz)
{
    int rv = 0;
    uint64_t lmin[PROBE_COMP_TYPES];
    double p0min = 1;
    inf->stamp++;
    inf->nheap = 0;
    inf->killed = 0;
    inf->hcnt = hz->cnt;
    for (unsigned p = 0; p < inf->cfg.planes; p++) {
        p0min = inf->p0[p] < p0min ? inf->p0[p] : p0min;
    }
    /* the fewest losses that can pass tau in each class (on the plane of the lowest background):
     * most components with loss are far below it, can never pass (their count only falls) and
     * so are no candidates at all: this spares them a logarithm and the greedy's walks */
    for (unsigned t = 0; t < PROBE_COMP_TYPES; t++) {
        lmin[t] =
            least_passing(comp_n(&inf->cfg, (uint32_t)t << 29) * hz->sum, p0min, inf->cfg.tau);
    }
    size_t nw = (inf->nent + 63) / 64;
    rv = grow((void **)&inf->cand, &inf->capcand, nw + 1, sizeof(*inf->cand));
    if (rv != 0) {
        goto out;
    }
    memset(inf->cand, 0, (nw + 1) * sizeof(*inf->cand));
    for (size_t i = 0; i < inf->nent; i++) {
        uint64_t l = hz->cnt[i];
        if (l < 2) {
            continue;
        }
        /* a count of 2 or more is a live entry's (the sums of a freed one are 0) */
        uint32_t key = inf->keys[i];
        if (l < lmin[key >> 29]) {
            continue;
        }
        hot *c = &inf->hot[i];
        inf->cand[i >> 6] |= 1ull << (i & 63);
        double n = comp_n(&inf->cfg, key) * hz->sum;
        c->work = l < UINT32_MAX ? (uint32_t)l : UINT32_MAX;
        inf->inv_n[i] = 1 / n;
        double g = llr((double)c->work, n, p0_of(inf, key));
        if (g >= inf->cfg.tau) {
            /* appended, then made a heap at once (linear) */
            rv = grow((void **)&inf->heap, &inf->capheap, inf->nheap + 1, sizeof(*inf->heap));
            if (rv != 0) {
                goto out;
            }
            inf->heap[inf->nheap++] = (heap_ent){g, (uint32_t)i, key};
        }
    }
    for (size_t i = inf->nheap / 2; i-- > 0;) {
        heap_down(inf, i, inf->nheap, inf->heap[i]);
    }
    while (inf->nheap > 0) {
        heap_ent top = heap_pop(inf);
        uint32_t key = top.key;
        hot *c = &inf->hot[top.idx];
        if (c->work < lmin[key >> 29]) {
            /* explained away below what can pass tau: no logarithm needed */
            continue;
        }
        double n = comp_n(&inf->cfg, key) * hz->sum;
        double g = llr((double)c->work, n, p0_of(inf, key));
        if (g < inf->cfg.tau) {
            continue;
        }
        if (inf->nheap > 0 && heap_before(inf, &inf->heap[0], &(heap_ent){g, top.idx, key})) {
            /* lazy: its count fell since it was pushed; try it again in order */
            rv = heap_push(inf, g, top.idx);
            if (rv != 0) {
                goto out;
            }
            continue;
        }
        if (key >> 29 >= PROBE_COMP_T0 && c->work < inf->cfg.floor_loss * n) {
            /* a device (or optic group) whose loss is below the reporting floor is never
             * reported, so it must not explain anything either: its few losses belong to the
             * lossy links under it, which stay candidates */
            continue;
        }
        /* a device over it about as strong is decided first (docs/prober.md §5.5) */
        double gd;
        uint32_t d = container_due(inf, hz, lmin, key, g, &gd);
        if (d == HOLD) {
            /* that device's loss is neither clearly its own nor one cable's: neither it nor
             * this component is named at this horizon */
            continue;
        }
        if (d != NONE) {
            /* this one waits in the heap */
            rv = heap_push(inf, g, top.idx);
            if (rv != 0) {
                goto out;
            }
            top = (heap_ent){gd, d, inf->keys[d]};
            key = top.key;
            c = &inf->hot[d];
            n = comp_n(&inf->cfg, key) * hz->sum;
            g = gd;
        }
        /* under a device the last evaluation selected, the device's loss is its background */
        double dl = device_loss(inf, key);
        if (dl > 0 && llr((double)c->work, n, p0_of(inf, key) + dl) < inf->cfg.tau) {
            continue;
        }
        /* a device that beat its links at a shorter horizon of this evaluation keeps the
         * verdict at longer ones (more data only widens the device's penalty margin); one
         * whose links won in this horizon is popped again with what they left, which must
         * still be spread over its cables */
        comp_ent *e = &inf->ents[top.idx];
        if (key >> 29 >= PROBE_COMP_T0 && e->dev_won != inf->evalno) {
            int links, drop, decide = e->refined != inf->stamp;
            e->refined = inf->stamp;
            rv = refine(inf, hz, top.idx, decide, &drop, &links);
            if (rv != 0) {
                goto out;
            }
            if (drop == 2) {
                e->amb = inf->stamp;
            }
            if (drop) {
                continue;
            }
            if (links) {
                g = llr((double)c->work, n, p0_of(inf, key));
                if (g >= inf->cfg.tau) {
                    rv = heap_push(inf, g, top.idx);
                }
                if (rv != 0) {
                    goto out;
                }
                continue;
            }
            if (decide) {
                e->dev_won = inf->evalno;
            }
        }
        /* and its evidence must be its own, not as well another component's (§5.4) */
        int own;
        rv = own_evidence(inf, hz, top.idx, &own);
        if (rv != 0) {
            goto out;
        }
        if (!own) {
            continue;
        }
        rv = select_comp(inf, hz, top.idx);
        if (rv != 0) {
            goto out;
        }
        if (inf->killed * 2 > inf->nheap) {
            heap_purge(inf, lmin);
        }
    }
out:
    return rv;
}

/* The lost probes of T1 entry |e| over the windows of |hz| on paths through none of the entries
 * marked in inf->cand. */
static double t1_unmarked(const probe_infer *inf, const horizon *hz, uint32_t e)
{
    double n = 0;
    for (unsigned i = 0; i < hz->len; i++) {
        const slot *s = hz->s[i];
        for (size_t o = s ? occ_first(s, e) : 0; s && o < s->nocc && s->occ[o] >> 32 == e; o++) {
            uint32_t r = (uint32_t)s->occ[o], j = s->roff[r];
            while (j < s->roff[r + 1] && !(inf->cand[s->rc[j] >> 6] >> (s->rc[j] & 63) & 1)) {
                j++;
            }
            n += j == s->roff[r + 1] ? s->rl[r] : 0;
        }
    }
    return n;
}

/* Counts to pair with their T1 (qsort). */
typedef struct t1count {
    double n;
    uint32_t ent;
} t1count;

static int cmp_t1count(const void *a, const void *b)
{
    double x = ((const t1count *)a)->n, y = ((const t1count *)b)->n;
    return x < y ? -1 : x > y;
}

/*
 * The background loss per probe of each plane: the (lower) median per-T1 loss of that plane
 * over the longest horizon (most T1s are healthy), floored. Planes are estimated apart: their
 * backgrounds differ, and a plane whose losses are not fed to this state must not pull the
 * others' median to zero. A failing T0 or host port is not confined to one T1: it lifts every
 * T1 of its plane alike, which no median removes, so the T1s around the median are counted
 * without the paths through the host ports and T0s the previous evaluation selected, nor
 * through a host port that loses well above the background (the last estimate, or the raw
 * median if lower), selected or not: a fault not selected yet must not raise the background,
 * or on a small fabric (the lab's two T1s) a host port losing 0.3 % lifts both T1s to a tenth
 * of its own rate, a T0 to half of it, and against that background they are never selected.
 * Every path through a T0 crosses one of its host ports, so a T0 that loses shows on them.
 * A host port carries too few probes for a rise of the whole plane's background to make it
 * stand out, so the last estimate does not hold the background down. (A selected T1 or
 * T0-T1 link touches few T1s and the median ignores it.)
 */
static int estimate_p0(probe_infer *inf, const horizon *hz)
{
    int rv = 0;
    unsigned nt1 = inf->cfg.nt1, planes = inf->cfg.planes;
    t1count *cnt = NULL;
    double raw[32], last[32];
    for (unsigned p = 0; p < planes; p++) {
        last[p] = inf->p0[p];
        inf->p0[p] = inf->cfg.p0 > 0 ? inf->cfg.p0 : inf->cfg.p0_floor;
    }
    /* the running sums (exact even where the horizon's walks are thinned) */
    double probes = inf->cfg.n_t1 * hz->sum0;
    if (inf->cfg.p0 > 0 || probes <= 0) {
        goto out;
    }
    cnt = malloc(nt1 * sizeof(*cnt));
    rv = grow((void **)&inf->cand, &inf->capcand, (inf->nent + 63) / 64 + 1, sizeof(*inf->cand));
    if (!cnt || rv != 0) {
        rv = -ENOMEM;
        goto out;
    }
    for (unsigned p = 0; p < planes; p++) {
        for (unsigned t = 0; t < nt1; t++) {
            uint32_t e = ent_find(inf, key_make(PROBE_COMP_T1, p, 0, t));
            cnt[t] = (t1count){e != NONE ? (double)inf->hs[hz->h][e] : 0, e};
        }
        qsort(cnt, nt1, sizeof(*cnt), cmp_t1count);
        /* the lower median: of two T1s (the lab) the upper one is the T1 of a lossy uplink,
         * whose loss would become the background and its verdict "healed" while it loses */
        raw[p] = cnt[(nt1 - 1) / 2].n / probes;
    }
    /* the paths left out: through what the last evaluation selected, and through a host port
     * well above the raw background (cand marks them, as run_horizon() resets it) */
    memset(inf->cand, 0, ((inf->nent + 63) / 64 + 1) * sizeof(*inf->cand));
    size_t marked = 0;
    for (size_t k = 0; k < inf->nsel; k++) {
        unsigned type = inf->sels[k].key >> 29;
        uint32_t e = ent_find(inf, inf->sels[k].key);
        if (e != NONE && (type <= PROBE_COMP_T0_NIC || type == PROBE_COMP_T0)) {
            inf->cand[e >> 6] |= 1ull << (e & 63);
            marked++;
        }
    }
    /* the fewest lost probes of a host port that pass tau against that background */
    double n = inf->cfg.n_nic * hz->sum0;
    uint64_t least[32];
    for (unsigned p = 0; p < planes; p++) {
        double q = fmax(fmin(raw[p], last[p]), inf->cfg.p0_floor);
        least[p] = least_passing(n, q, inf->cfg.tau);
    }
    for (size_t e = 0; e < inf->nent; e++) {
        uint32_t key = inf->keys[e];
        uint64_t l = inf->hs[hz->h][e];
        if (l >= 2 && key >> 29 <= PROBE_COMP_T0_NIC && l >= least[key >> 24 & 31]) {
            inf->cand[e >> 6] |= 1ull << (e & 63);
            marked++;
        }
    }
    for (unsigned p = 0; p < planes; p++) {
        for (unsigned t = 0; t < nt1; t++) {
            uint32_t e = ent_find(inf, key_make(PROBE_COMP_T1, p, 0, t));
            cnt[t] = (t1count){e != NONE ? (double)inf->hs[hz->h][e] : 0, e};
        }
        qsort(cnt, nt1, sizeof(*cnt), cmp_t1count);
        /* the T1s around the median counted again without those paths, which take off about
         * as much from each T1 (a host port's probes spread over all), so the median stays
         * among them */
        unsigned mid = (nt1 - 1) / 2, from = mid >= 2 ? mid - 2 : 0,
                 to = mid + 2 < nt1 ? mid + 2 : nt1 - 1;
        for (unsigned t = from; t <= to && marked > 0; t++) {
            if (cnt[t].ent != NONE && cnt[t].n > 0) {
                cnt[t].n = t1_unmarked(inf, hz, cnt[t].ent);
            }
        }
        qsort(cnt + from, to - from + 1, sizeof(*cnt), cmp_t1count);
        double q = cnt[mid].n / probes;
        if (q > inf->p0[p]) {
            inf->p0[p] = q;
        }
    }
out:
    free(cnt);
    return rv;
}

/*
 * Runs the short horizons of this evaluation and one long horizon, in turn over evaluations
 * (each long one walks up to the whole horizon budget); the other long horizons repeat the
 * selections of their last run, so a component that only a long horizon selects stays selected
 * in every evaluation and is confirmed as before, at most nh - LONGH - 1 windows later.
 */
static int run_horizons(probe_infer *inf, horizon *hzs, unsigned nh)
{
    int rv = 0;
    unsigned due = nh;
    if (nh > LONGH) {
        due = LONGH + (unsigned)(inf->evalno % (nh - LONGH));
    }
    size_t nshort = 0;
    for (unsigned h = 0; h < nh && h <= due; h++) {
        if (h >= LONGH && h != due) {
            continue;
        }
        if (h == due) {
            /* the long horizon's own selections apart: the short ones' wait in its hsel */
            rv = grow((void **)&inf->hsel[h], &inf->caphsel[h], inf->nsel + 1,
                      sizeof(*inf->hsel[h]));
            if (rv != 0) {
                goto out;
            }
            if (inf->nsel > 0) {
                memcpy(inf->hsel[h], inf->sels, inf->nsel * sizeof(*inf->sels));
            }
            nshort = inf->nsel;
            inf->nsel = 0;
        }
        horizon_count(inf, &hzs[h]);
        rv = run_horizon(inf, &hzs[h]);
        if (rv != 0) {
            goto out;
        }
        if (h == due) {
            /* swap: sels gets the short horizons' back, hsel keeps this run */
            size_t nown = inf->nsel;
            rv = grow((void **)&inf->hsel[h], &inf->caphsel[h], nshort + nown + 1,
                      sizeof(*inf->hsel[h]));
            if (rv != 0) {
                goto out;
            }
            if (nown > 0) {
                memcpy(inf->hsel[h] + nshort, inf->sels, nown * sizeof(*inf->sels));
            }
            inf->nsel = 0;
            for (size_t k = 0; k < nshort && rv == 0; k++) {
                rv = sel_add(inf, &inf->hsel[h][k]);
            }
            memmove(inf->hsel[h], inf->hsel[h] + nshort, nown * sizeof(sel));
            inf->nhsel[h] = nown;
        }
    }
    for (unsigned h = LONGH; h < nh && rv == 0; h++) {
        for (size_t k = 0; k < inf->nhsel[h] && rv == 0; k++) {
            sel v = inf->hsel[h][k];
            v.ran = h == due;
            rv = sel_add(inf, &v);
        }
    }
out:
    return rv;
}

static int vstate_update(probe_infer *inf, uint64_t window)
{
    int rv = 0;
    for (size_t i = 0; i < inf->nvs; i++) {
        inf->vs[i].selected = 0;
        inf->vs[i].ran = 0;
    }
    for (size_t k = 0; k < inf->nsel; k++) {
        size_t i = 0;
        while (i < inf->nvs && inf->vs[i].ev.key != inf->sels[k].key) {
            i++;
        }
        if (i == inf->nvs) {
            rv = grow((void **)&inf->vs, &inf->capvs, inf->nvs + 1, sizeof(*inf->vs));
            if (rv != 0) {
                goto out;
            }
            memset(&inf->vs[i], 0, sizeof(inf->vs[i]));
            inf->nvs++;
        }
        inf->vs[i].ev = inf->sels[k];
        inf->vs[i].selected = 1;
        inf->vs[i].ran = inf->sels[k].ran;
        inf->vs[i].last_seen = window;
    }
    unsigned hw = inf->cfg.heal_windows;
    size_t kept = 0;
    for (size_t i = 0; i < inf->nvs; i++) {
        vstate *v = &inf->vs[i];
        /* a long horizon's selection repeated until its next run is one look, not several:
         * confirmation counts the evaluations whose own runs selected it */
        v->consec = v->selected ? v->consec + 1 : 0;
        v->runs = v->selected ? v->runs + (v->ran != 0) : 0;
        if (!v->confirmed && v->runs >= inf->cfg.confirm) {
            v->confirmed = 1;
            v->since = window;
        }
        if (v->confirmed) {
            /* healed: its raw loss over the last windows is background (long horizons may
             * still select it on old evidence) */
            double l = 0, nw = 0, n1 = comp_n(&inf->cfg, v->ev.key);
            uint32_t e = ent_find(inf, v->ev.key);
            for (unsigned w = 0; w < hw && w <= window; w++) {
                slot *s = &inf->slots[(window - w) % NSLOT];
                if (s->used && s->final && s->window == window - w) {
                    nw += n1 * ldexp(1.0, -(int)s->shift);
                    l += e != NONE ? slot_count(s, e) : 0;
                }
            }
            int healed = llr(l, nw, p0_of(inf, v->ev.key)) < inf->cfg.tau_loo;
            v->healed_evals = healed ? v->healed_evals + 1 : 0;
        }
        /* an unconfirmed miss is forgotten; a verdict once its evidence has left every
         * horizon after it was reported healed, so old evidence cannot raise it again */
        if (v->selected || (v->confirmed && v->healed_evals == 0)) {
            inf->vs[kept++] = *v;
        }
    }
    inf->nvs = kept;
out:
    return rv;
}

int probe_infer_eval(probe_infer *inf, uint64_t window, probe_verdict *out, size_t max)
{
    int rv = -ESTALE;
    if (inf->evaluated && window <= inf->last_eval) {
        goto out;
    }
    /* every window of the ring up to |window| becomes read-only; one never fed is clean */
    uint64_t from = window >= NSLOT - 1 ? window - (NSLOT - 1) : 0;
    if (inf->evaluated && inf->last_eval + 1 > from) {
        from = inf->last_eval + 1;
    }
    for (uint64_t w = from; w <= window; w++) {
        slot *s = &inf->slots[w % NSLOT];
        if (!s->used || s->window != w) {
            rv = slot_reset(inf, s, w);
            if (rv != 0) {
                goto out;
            }
        }
        rv = slot_finalize(inf, s);
        if (rv != 0) {
            goto out;
        }
    }
    inf->last_eval = window;
    inf->evaluated = 1;
    inf->nwin++;
    /* the running horizon sums: each window of the ring enters or leaves the horizons that
     * (no longer) cover it, so only the windows that move are walked */
    for (unsigned i = 0; i < NSLOT; i++) {
        slot *s = &inf->slots[i];
        unsigned want = 0;
        for (unsigned h = 0; h < inf->cfg.horizons; h++) {
            if (s->used && s->final && s->window <= window && window - s->window < 1u << h) {
                want |= 1u << h;
            }
        }
        slot_sums(inf, s, want & ~s->inh, 1);
        slot_sums(inf, s, s->inh & ~want, -1);
        s->inh = want;
    }
    unsigned nh = 0;
    while (nh < inf->cfg.horizons && (nh == 0 || (1ull << (nh - 1)) < inf->nwin)) {
        nh++;
    }
    horizon hzs[MAXH];
    for (unsigned h = 0; h < nh; h++) {
        horizon_init(inf, window, h, &hzs[h]);
    }
    rv = estimate_p0(inf, &hzs[nh - 1]);
    if (rv != 0) {
        goto out;
    }
    inf->nsel = 0;
    inf->evalno++;
    rv = run_horizons(inf, hzs, nh);
    if (rv != 0) {
        goto out;
    }
    rv = vstate_update(inf, window);
    if (rv != 0) {
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < inf->nvs; i++) {
        const vstate *v = &inf->vs[i];
        if (!v->confirmed) {
            continue;
        }
        if (n < max) {
            probe_verdict *p = &out[n];
            p->comp = key_comp(v->ev.key);
            p->loss = v->ev.loss;
            p->lost = v->ev.lost;
            p->sent = v->ev.sent;
            p->horizon = v->ev.horizon;
            p->llr = v->ev.llr;
            p->since = v->since;
            p->last_seen = v->last_seen;
            p->healed = v->healed_evals > 0;
        }
        n++;
    }
    rv = (int)n;
out:
    return rv;
}

size_t probe_infer_pending(const probe_infer *inf)
{
    size_t n = 0;
    for (size_t i = 0; i < inf->nvs; i++) {
        n += inf->vs[i].selected && !inf->vs[i].confirmed;
    }
    return n;
}

int probe_infer_window_lost(const probe_infer *inf, uint64_t window, const probe_comp *c,
                            uint64_t *plost)
{
    const slot *s = &inf->slots[window % NSLOT];
    if (c->type >= PROBE_COMP_TYPES || c->plane >= inf->cfg.planes || c->t0 >= inf->cfg.nt0 ||
        c->other >= page_len(&inf->cfg, c->type)) {
        return -EINVAL;
    }
    if (!inf->evaluated || window > inf->last_eval || !s->used || !s->final ||
        s->window != window) {
        return -ENOENT;
    }
    uint32_t e = ent_find(inf, key_make(c->type, c->plane, c->t0, c->other));
    /* a thinned window kept one path in 2^shift: its count scaled back is the estimate */
    *plost = e != NONE ? (uint64_t)slot_count(s, e) << s->shift : 0;
    return 0;
}
