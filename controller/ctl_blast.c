/* SPDX-License-Identifier: MIT */
/* Blast radius by classes of hosts. A class is the hosts cabled to the same T0 on every
 * plane; a host with a denied port of its own is taken out of its class as a unit of one,
 * so the few hosts an entry names cost a row each, not a pass over all hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_blast.h"
#include "util.h"

struct ctl_blast {
    const fab_topo *topo;
    unsigned planes;
    uint32_t nt0[FAB_MAX_PLANES], nt1[FAB_MAX_PLANES], words[FAB_MAX_PLANES];
    uint64_t *up[FAB_MAX_PLANES]; /* per T0, |words| words: the T1s it is cabled to */
    uint32_t ncls;
    uint32_t *cls_t0;   /* ncls x planes: T0 index, FAB_NONE where not cabled */
    uint32_t *cls_size; /* members */
    uint32_t *cls_off;  /* ncls + 1 offsets into |members| */
    uint32_t *members;  /* hosts by class */
    uint32_t *host_cls; /* per host */
};

/* A row of the pair matrix: a class less its singled-out hosts, or one such host with the
 * planes its port is denied on, as a sender (src) and as a receiver (dst). */
typedef struct unit {
    uint32_t cls, size, host;            /* host FAB_NONE: the class's remaining members */
    uint32_t src_b, dst_b, src_a, dst_a; /* plane masks before and after the entry */
} unit;

static uint64_t cls_hash(const uint32_t *t0, unsigned planes)
{
    uint64_t x = 1469598103934665603ull;
    for (unsigned p = 0; p < planes; p++) {
        x = (x ^ t0[p]) * 1099511628211ull;
    }
    return x;
}

/* Groups the hosts by their T0 on each plane. */
static void classify(ctl_blast *b)
{
    uint32_t nhosts = fab_topo_nhosts(b->topo);
    unsigned P = b->planes;
    uint32_t *host_cls = b->host_cls =
        util_xmalloc((size_t)(nhosts ? nhosts : 1) * sizeof(uint32_t));
    uint64_t cap = 64;
    while (cap < 2ull * nhosts) {
        cap *= 2;
    }
    uint32_t *slot = util_xmalloc(cap * sizeof(uint32_t)); /* class + 1, 0 empty */
    memset(slot, 0, cap * sizeof(uint32_t));
    b->cls_t0 = util_xmalloc((size_t)(nhosts ? nhosts : 1) * P * sizeof(uint32_t));
    uint32_t t0[FAB_MAX_PLANES];
    for (uint32_t h = 0; h < nhosts; h++) {
        for (unsigned p = 0; p < P; p++) {
            uint32_t sw;
            unsigned port;
            fab_switch s;
            t0[p] = fab_host_attach(b->topo, h, p, &sw, &port) == 0 &&
                            fab_switch_get(b->topo, sw, &s) == 0
                        ? s.index
                        : FAB_NONE;
        }
        uint64_t i = cls_hash(t0, P) & (cap - 1);
        while (slot[i] && memcmp(&b->cls_t0[(size_t)(slot[i] - 1) * P], t0, P * sizeof(*t0))) {
            i = (i + 1) & (cap - 1);
        }
        if (!slot[i]) {
            memcpy(&b->cls_t0[(size_t)b->ncls * P], t0, P * sizeof(*t0));
            slot[i] = ++b->ncls;
        }
        host_cls[h] = slot[i] - 1;
    }
    free(slot);
    b->cls_size = util_xcalloc(b->ncls + 1, sizeof(uint32_t));
    b->cls_off = util_xcalloc(b->ncls + 1, sizeof(uint32_t));
    b->members = util_xmalloc((size_t)(nhosts ? nhosts : 1) * sizeof(uint32_t));
    for (uint32_t h = 0; h < nhosts; h++) {
        b->cls_size[host_cls[h]]++;
    }
    for (uint32_t c = 0; c < b->ncls; c++) {
        b->cls_off[c + 1] = b->cls_off[c] + b->cls_size[c];
    }
    uint32_t *fill = util_xcalloc(b->ncls + 1, sizeof(uint32_t));
    for (uint32_t h = 0; h < nhosts; h++) {
        uint32_t c = host_cls[h];
        b->members[b->cls_off[c] + fill[c]++] = h;
    }
    free(fill);
}

ctl_blast *ctl_blast_new(const fab_topo *topo)
{
    ctl_blast *b = util_xcalloc(1, sizeof(*b));
    b->topo = topo;
    b->planes = fab_topo_planes(topo);
    for (unsigned p = 0; p < b->planes; p++) {
        b->nt0[p] = fab_topo_nt0(topo, p);
        b->nt1[p] = fab_topo_nt1(topo, p);
        b->words[p] = (b->nt1[p] + 63) / 64;
        b->up[p] = util_xcalloc((size_t)b->nt0[p] * b->words[p] + 1, sizeof(uint64_t));
        for (uint32_t a = 0; a < b->nt0[p]; a++) {
            uint32_t sw = fab_switch_at(topo, p, FAB_TIER_T0, a);
            fab_switch s, t;
            if (sw == FAB_NONE || fab_switch_get(topo, sw, &s) != 0) {
                continue;
            }
            for (unsigned port = 0; port < s.nports; port++) {
                fab_peer peer;
                if (fab_switch_peer(topo, sw, port, &peer) == 0 && peer.kind == FAB_PEER_SWITCH &&
                    fab_switch_get(topo, peer.id, &t) == 0 && t.tier == FAB_TIER_T1) {
                    b->up[p][(size_t)a * b->words[p] + t.index / 64] |= 1ull << (t.index % 64);
                }
            }
        }
    }
    classify(b);
    return b;
}

void ctl_blast_free(ctl_blast *b)
{
    if (b) {
        for (unsigned p = 0; p < b->planes; p++) {
            free(b->up[p]);
        }
        free(b->cls_t0);
        free(b->cls_size);
        free(b->cls_off);
        free(b->members);
        free(b->host_cls);
        free(b);
    }
}

const uint64_t *ctl_blast_uplinks(const ctl_blast *b, unsigned plane, uint32_t t0, unsigned *pwords)
{
    if (plane >= b->planes || t0 >= b->nt0[plane]) {
        return NULL;
    }
    *pwords = b->words[plane];
    return &b->up[plane][(size_t)t0 * b->words[plane]];
}

/* The entries in force, in libmrcfab's denylist set: its rule is the agents' too, so what
 * the blast radius counts is what the agents will exclude. */
static fab_deny *deny_of(const ctl_blast *b, const ctl_blast_entry *v, size_t n,
                         const ctl_blast_entry *add)
{
    fab_deny *d;
    if (fab_deny_new(b->topo, &d) != 0) {
        util_log(UTIL_LOG_ERR, "out of memory for a denylist set");
        abort();
    }
    for (size_t i = 0; i <= n; i++) {
        const ctl_blast_entry *e = i < n ? &v[i] : add;
        /* entries were parsed against this topology: only an impossible one fails, and it
         * denies nothing */
        if (e && fab_deny_add(d, &e->el, e->dirs) == FAB_ERR_NOMEM) {
            util_log(UTIL_LOG_ERR, "out of memory for a denylist set");
            abort();
        }
    }
    return d;
}

/* Usable paths on plane |p| from T0 |a| to T0 |b| under |d|; |base| the cabled ones. */
static unsigned usable(const ctl_blast *bl, const fab_deny *d, unsigned p, uint32_t a, uint32_t b,
                       unsigned base)
{
    if (fab_deny_plane_clean(d, p)) {
        return base;
    }
    unsigned W = bl->words[p];
    return fab_deny_t1s(d, p, a, b, &bl->up[p][(size_t)a * W], &bl->up[p][(size_t)b * W], W);
}

/* Paths on plane |p| from T0 |a| to T0 |b| with nothing denied. */
static unsigned cabled(const ctl_blast *bl, unsigned p, uint32_t a, uint32_t b)
{
    if (a == b) {
        return 1;
    }
    unsigned W = bl->words[p], n = 0;
    for (unsigned w = 0; w < W; w++) {
        n += (unsigned)__builtin_popcountll(bl->up[p][(size_t)a * W + w] &
                                            bl->up[p][(size_t)b * W + w]);
    }
    return n;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* The |nth| member of unit |u| (0 or 1), skipping the singled-out hosts. */
static uint32_t member(const ctl_blast *b, const unit *u, unsigned nth, const uint32_t *single,
                       size_t nsingle)
{
    if (u->host != FAB_NONE) {
        return u->host;
    }
    for (uint32_t i = b->cls_off[u->cls]; i < b->cls_off[u->cls + 1]; i++) {
        uint32_t h = b->members[i];
        if (!bsearch(&h, single, nsingle, sizeof(*single), cmp_u32) && nth-- == 0) {
            return h;
        }
    }
    return FAB_NONE;
}

static void note_worst(ctl_blast_result *res, const ctl_blast_pair *pr)
{
    unsigned i = res->nworst < CTL_BLAST_WORST ? res->nworst++ : CTL_BLAST_WORST;
    if (i == CTL_BLAST_WORST) {
        if (pr->after >= res->worst[CTL_BLAST_WORST - 1].after) {
            return;
        }
        i = CTL_BLAST_WORST - 1;
    }
    while (i > 0 && res->worst[i - 1].after > pr->after) {
        res->worst[i] = res->worst[i - 1];
        i--;
    }
    res->worst[i] = *pr;
}

/* The host port entries as units of one, and the classes less those hosts. */
static unit *make_units(const ctl_blast *b, const ctl_blast_entry *active, size_t n,
                        const ctl_blast_entry *add, const fab_deny *sb, const fab_deny *sa,
                        uint32_t **psingle, size_t *pnsingle, size_t *pnunits)
{
    uint32_t *single = util_xmalloc((n + 2) * sizeof(uint32_t));
    size_t ns = 0;
    for (size_t i = 0; i <= n; i++) {
        const ctl_blast_entry *e = i < n ? &active[i] : add;
        if (e->el.kind == CTL_EL_PORT) {
            single[ns++] = e->el.host;
        }
    }
    qsort(single, ns, sizeof(*single), cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < ns; i++) {
        if (k == 0 || single[k - 1] != single[i]) {
            single[k++] = single[i];
        }
    }
    ns = k;
    unit *u = util_xcalloc(b->ncls + ns + 1, sizeof(*u));
    for (uint32_t c = 0; c < b->ncls; c++) {
        u[c] = (unit){.cls = c, .size = b->cls_size[c], .host = FAB_NONE};
    }
    for (size_t i = 0; i < ns; i++) {
        unit *s = &u[b->ncls + i];
        uint32_t h = single[i];
        s->cls = b->host_cls[h];
        s->size = 1;
        s->host = h;
        u[s->cls].size--;
        fab_deny_host(sb, h, &s->src_b, &s->dst_b);
        fab_deny_host(sa, h, &s->src_a, &s->dst_a);
    }
    *psingle = single;
    *pnsingle = ns;
    *pnunits = b->ncls + ns;
    return u;
}

void ctl_blast_eval(const ctl_blast *b, const ctl_blast_entry *active, size_t n,
                    const ctl_blast_entry *add, double floor, ctl_blast_result *res)
{
    memset(res, 0, sizeof(*res));
    res->floor = floor;
    res->min_left = 1;
    fab_deny *sb = deny_of(b, active, n, NULL), *sa = deny_of(b, active, n, add);
    uint32_t *single;
    size_t nsingle, nunits;
    unit *units = make_units(b, active, n, add, sb, sa, &single, &nsingle, &nunits);
    unsigned P = b->planes;
    for (size_t i = 0; i < nunits; i++) {
        const unit *u = &units[i];
        const uint32_t *ta = &b->cls_t0[(size_t)u->cls * P];
        for (size_t j = 0; j < nunits; j++) {
            const unit *v = &units[j];
            uint64_t npairs = i == j ? (uint64_t)u->size * (u->size ? u->size - 1 : 0)
                                     : (uint64_t)u->size * v->size;
            if (npairs == 0) {
                continue;
            }
            const uint32_t *tb = &b->cls_t0[(size_t)v->cls * P];
            double before = 0, after = 0;
            unsigned nplanes = 0;
            for (unsigned p = 0; p < P; p++) {
                uint32_t a = ta[p], c = tb[p];
                if (a == FAB_NONE || c == FAB_NONE) {
                    continue;
                }
                unsigned base = cabled(b, p, a, c);
                if (base == 0) {
                    continue;
                }
                nplanes++;
                uint32_t bit = 1u << p;
                unsigned ob = (u->src_b | v->dst_b) & bit ? 0 : usable(b, sb, p, a, c, base);
                unsigned oa = (u->src_a | v->dst_a) & bit ? 0 : usable(b, sa, p, a, c, base);
                before += (double)ob / base;
                after += (double)oa / base;
            }
            if (nplanes == 0) {
                continue;
            }
            res->pairs += npairs;
            before /= nplanes;
            after /= nplanes;
            if (after >= before - 1e-9) {
                continue;
            }
            res->affected += npairs;
            res->cut_off += after < 1e-9 ? npairs : 0;
            res->below_floor += after < floor - 1e-9 ? npairs : 0;
            res->min_left = after < res->min_left ? after : res->min_left;
            int bin = (int)(after * 10 + 1e-9);
            res->by_left[bin < 0 ? 0 : bin > 9 ? 9 : bin] += npairs;
            if (res->nworst < CTL_BLAST_WORST || after < res->worst[CTL_BLAST_WORST - 1].after) {
                ctl_blast_pair pr = {member(b, u, 0, single, nsingle),
                                     member(b, v, i == j ? 1 : 0, single, nsingle), before, after};
                note_worst(res, &pr);
            }
        }
    }
    free(units);
    free(single);
    fab_deny_free(sb);
    fab_deny_free(sa);
}

/* A share printed to four places: 0.1 rather than 0.10000000000000001. */
static json_object *share(double x)
{
    char t[32];
    snprintf(t, sizeof(t), "%.4g", x);
    return json_object_new_double_s(strtod(t, NULL), t);
}

json_object *ctl_blast_json(const ctl_blast *b, const ctl_blast_result *res)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "pairs", json_object_new_int64((int64_t)res->pairs));
    json_object_object_add(j, "affected_pairs", json_object_new_int64((int64_t)res->affected));
    json_object_object_add(j, "cut_off_pairs", json_object_new_int64((int64_t)res->cut_off));
    json_object_object_add(j, "below_floor_pairs",
                           json_object_new_int64((int64_t)res->below_floor));
    json_object_object_add(j, "floor", share(res->floor));
    json_object_object_add(j, "min_capacity_left", share(res->min_left));
    json_object *bins = json_object_new_array();
    for (int i = 0; i < 10; i++) {
        if (res->by_left[i]) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "from", share(i / 10.0));
            json_object_object_add(o, "to", share((i + 1) / 10.0));
            json_object_object_add(o, "pairs", json_object_new_int64((int64_t)res->by_left[i]));
            json_object_array_add(bins, o);
        }
    }
    json_object_object_add(j, "capacity_left", bins);
    json_object *worst = json_object_new_array();
    for (unsigned i = 0; i < res->nworst; i++) {
        const ctl_blast_pair *pr = &res->worst[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "src", json_object_new_string(fab_host_name(b->topo, pr->src)));
        json_object_object_add(o, "dst", json_object_new_string(fab_host_name(b->topo, pr->dst)));
        json_object_object_add(o, "before", share(pr->before));
        json_object_object_add(o, "after", share(pr->after));
        json_object_array_add(worst, o);
    }
    json_object_object_add(j, "worst", worst);
    return j;
}
