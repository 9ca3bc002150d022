/* SPDX-License-Identifier: MIT */
/* Health from evidence. An EV names a path (plane p, T1 j) between two host ports, so an
 * agent's counters for it are evidence on each directed link it crosses: the sender's NIC-T0
 * link up, T0 a to T1 j, T1 j down to T0 b, the receiver's link down. A link's loss rate is
 * its lost over its sent; a bad link stands out because every pair through it loses, while a
 * good link on the same paths has most of its traffic elsewhere. A link is judged only on
 * evidence from several reporters (one host cannot tell its own trouble from the fabric's),
 * except a NIC's own uplink, which only its host sees. Evidence ages out over a window kept
 * as two halves.
 *
 * Everything a query or a verdict walks is O(evidence), not O(fabric): the classes of paths
 * count themselves into the links they cross as they come, the inference walks the lossy
 * classes only, and the states of the links with evidence are kept in a snapshot (refreshed
 * in slices, so reports keep flowing) that pages and filters read. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_element.h"
#include "ctl_health_int.h"
#include "ctl_store.h"
#include "util.h"

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

ctl_health *ctl_health_new(const fab_topo *topo, uint64_t window_ms)
{
    ctl_health *h = util_xcalloc(1, sizeof(*h));
    h->topo = topo;
    h->plan = fab_topo_plan(topo);
    h->planes = fab_topo_planes(topo);
    h->nhosts = fab_topo_nhosts(topo);
    h->nsw = fab_topo_nswitches(topo);
    h->half_ms = window_ms / 2 ? window_ms / 2 : 1;
    for (unsigned p = 0; p < h->planes && p < 16; p++) {
        h->nt0[p] = fab_topo_nt0(topo, p);
        h->nt1[p] = fab_topo_nt1(topo, p);
        h->base[p] = h->nlinks;
        h->nlinks += (uint64_t)h->nt0[p] * h->nt1[p];
    }
    h->nall = h->nlinks + (uint64_t)h->nhosts * h->planes;
    h->links = util_xcalloc(h->nall + 1, sizeof(link));
    h->hp_t0 = util_xmalloc(((uint64_t)h->nhosts * h->planes + 1) * sizeof(uint16_t));
    for (unsigned p = 0; p < h->planes; p++) {
        for (uint32_t host = 0; host < h->nhosts; host++) {
            uint32_t sw;
            unsigned port;
            fab_switch s;
            h->hp_t0[(uint64_t)p * h->nhosts + host] =
                fab_host_attach(topo, host, p, &sw, &port) == 0 && fab_switch_get(topo, sw, &s) == 0
                    ? (uint16_t)s.index
                    : UINT16_MAX;
            if (h->hp_t0[(uint64_t)p * h->nhosts + host] == UINT16_MAX) {
                vec_push(&h->missing, nic_index(h, host, p));
            }
        }
    }
    for (unsigned p = 0; p < h->planes && p < 16; p++) {
        h->plane_nports[p] = h->nhosts;
    }
    for (size_t i = 0; i < h->missing.n; i++) {
        unsigned p = (unsigned)((h->missing.v[i] - h->nlinks) / h->nhosts);
        h->plane_nports[p < 16 ? p : 15]--;
    }
    h->cand_n = util_xcalloc(2 * h->nall + 1, sizeof(uint32_t));
    h->has = util_xcalloc(h->nall / 64 + 1, sizeof(uint64_t));
    h->st = util_xcalloc(h->nall + 1, 1);
    h->sw_count = util_xcalloc(h->nsw + 1, sizeof(*h->sw_count));
    h->sw_mcount = util_xcalloc(h->nsw + 1, sizeof(*h->sw_mcount));
    h->sw_st = util_xcalloc(h->nsw + 1, 1);
    h->dst = util_xcalloc(h->nall + 1, 1);
    h->sw_mst = util_xcalloc(h->nsw + 1, 1);
    ctl_health_probe_init(h);
    pthread_rwlock_init(&h->lock, NULL);
    pthread_mutex_init(&h->refresh_lock, NULL);
    return h;
}

void ctl_health_free(ctl_health *h)
{
    if (h) {
        pthread_rwlock_destroy(&h->lock);
        pthread_mutex_destroy(&h->refresh_lock);
        free(h->cls);
        free(h->lossy_keys);
        free(h->cand_n);
        free(h->cand.v);
        free(h->blamed.v);
        free(h->has);
        free(h->st);
        for (int i = 0; i < 4; i++) {
            free(h->by_state[i].v);
        }
        free(h->sw_count);
        free(h->sw_mcount);
        free(h->sw_st);
        free(h->dst);
        free(h->sw_mst);
        ctl_health_probe_fini(h);
        ctl_health_deny_fini(h);
        free(h->rings);
        free(h->ring_slot);
        free(h->hp_t0);
        free(h->missing.v);
        free(h->links);
        free(h);
    }
}

uint64_t ctl_health_ingested(const ctl_health *h)
{
    return h->ingested;
}

static uint32_t half(const ctl_health *h, int64_t now)
{
    return (uint32_t)((uint64_t)now / h->half_ms);
}

static uint32_t sat_add(uint32_t a, uint64_t b)
{
    return b >= UINT32_MAX - a ? UINT32_MAX : a + (uint32_t)b;
}

/* Brings |d| to the half window of |now|: a half that ended moves to [1], an older one goes. */
static void age(const ctl_health *h, dirstat *d, int64_t now)
{
    uint32_t e = half(h, now);
    if (d->epoch == e) {
        return;
    }
    if (d->epoch + 1 == e) {
        d->sent[1] = d->sent[0];
        d->lost[1] = d->lost[0];
        d->ncls[1] = d->ncls[0];
        d->nlossy[1] = d->nlossy[0];
    } else {
        d->sent[1] = d->lost[1] = d->ncls[1] = d->nlossy[1] = 0;
        d->bad_evs = 0;
        d->nsrc = 0;
    }
    d->sent[0] = d->lost[0] = d->ncls[0] = d->nlossy[0] = 0;
    d->epoch = e;
}

static link *t0t1(ctl_health *h, unsigned p, unsigned a, unsigned j)
{
    return &h->links[h->base[p] + (uint64_t)a * h->nt1[p] + j];
}

static link *nic(ctl_health *h, uint32_t host, unsigned p)
{
    return &h->links[nic_index(h, host, p)];
}

/* The link a direction belongs to. */
static uint64_t link_of(const ctl_health *h, const dirstat *d)
{
    return (uint64_t)(((const char *)d - (const char *)h->links) / (ptrdiff_t)sizeof(link));
}

/* A direction's index: 2 x its link + 0 up, 1 down. */
static uint64_t dir_index(const ctl_health *h, const dirstat *d)
{
    uint64_t l = link_of(h, d);
    return 2 * l + (uint64_t)(d - h->links[l].dir);
}

static void add(ctl_health *h, dirstat *d, uint64_t sent, uint64_t lost, bool bad, uint32_t src,
                int64_t now)
{
    age(h, d, now);
    d->sent[0] = sat_add(d->sent[0], sent);
    d->lost[0] = sat_add(d->lost[0], lost);
    d->bad_evs = (uint16_t)(d->bad_evs + (bad && d->bad_evs < UINT16_MAX));
    d->last_ms = now;
    uint64_t l = link_of(h, d);
    h->has[l / 64] |= 1ull << (l % 64);
    for (unsigned i = 0; i < d->nsrc; i++) {
        if (d->src[i] == src) {
            return;
        }
    }
    if (d->nsrc < SOURCES) {
        d->src[d->nsrc++] = src;
    }
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint64_t cls_hash(uint32_t src, uint32_t dst, unsigned p, unsigned j)
{
    return mix(((uint64_t)src << 32 | dst) ^ mix((uint64_t)p << 32 | j));
}

/* The directions a class's packets crossed (up to four): the sender's NIC up, T0 a to T1 j,
 * T1 j down to T0 b, the receiver's NIC down. */
static unsigned cls_dirs(ctl_health *h, uint32_t src, uint32_t dst, unsigned p, unsigned j,
                         dirstat *out[4])
{
    unsigned n = 0;
    out[n++] = &nic(h, src, p)->dir[0];
    out[n++] = &nic(h, dst, p)->dir[1];
    if (j < h->nt1[p]) {
        int a = t0_of(h, src, p), b = t0_of(h, dst, p);
        if (a >= 0 && b >= 0) {
            out[n++] = &t0t1(h, p, (unsigned)a, j)->dir[0];
            out[n++] = &t0t1(h, p, (unsigned)b, j)->dir[1];
        }
    }
    return n;
}

static cls *cls_find(const ctl_health *h, uint32_t src, uint32_t dst, unsigned p, unsigned j)
{
    if (!h->cls_cap) {
        return NULL;
    }
    uint64_t k = cls_hash(src + 1, dst + 1, p, j) & (h->cls_cap - 1);
    cls *c;
    while ((c = &h->cls[k])->src) {
        if (c->src == src + 1 && c->dst == dst + 1 && c->p == p && c->j == j) {
            return c;
        }
        k = (k + 1) & (h->cls_cap - 1);
    }
    return NULL;
}

/* Room for one more class. The table grows to CLS_MAX slots; there, the classes whose
 * evidence aged out are swept, at most once per half window (a sweep per class would stall
 * every report). False when it is full of live classes. */
static bool cls_room(ctl_health *h, int64_t now)
{
    if (2 * (h->ncls + 1) <= h->cls_cap) {
        return true;
    }
    uint32_t e = half(h, now);
    if (h->cls_cap >= CLS_MAX && h->cls_swept == e + 1) {
        return false;
    }
    cls *old = h->cls;
    uint64_t oldcap = h->cls_cap;
    h->cls_cap = !oldcap ? 1024 : oldcap < CLS_MAX ? oldcap * 2 : oldcap;
    h->cls_swept = h->cls_cap >= CLS_MAX ? e + 1 : 0;
    h->cls = util_xcalloc(h->cls_cap, sizeof(cls));
    h->ncls = 0;
    for (uint64_t i = 0; i < oldcap; i++) {
        const cls *o = &old[i];
        if (o->src && o->epoch + 1 >= e) {
            uint64_t k = cls_hash(o->src, o->dst, o->p, o->j) & (h->cls_cap - 1);
            while (h->cls[k].src) {
                k = (k + 1) & (h->cls_cap - 1);
            }
            h->cls[k] = *o;
            h->ncls++;
        }
    }
    free(old);
    return 2 * (h->ncls + 1) <= h->cls_cap;
}

void ctl_health_cls_restore(ctl_health *h, const cls *c, int64_t now)
{
    uint32_t src = c->src - 1, dst = c->dst - 1;
    cls *o = cls_find(h, src, dst, c->p, c->j);
    if (!o && cls_room(h, now)) {
        uint64_t k = cls_hash(c->src, c->dst, c->p, c->j) & (h->cls_cap - 1);
        while (h->cls[k].src) {
            k = (k + 1) & (h->cls_cap - 1);
        }
        o = &h->cls[k];
        h->ncls++;
    }
    if (!o) {
        return;
    }
    *o = *c;
    o->mark = 0;
    if (h->nlossy_keys == h->lossy_cap) {
        h->lossy_cap = h->lossy_cap ? 2 * h->lossy_cap : 256;
        h->lossy_keys = util_xrealloc(h->lossy_keys, h->lossy_cap * sizeof(key));
    }
    h->lossy_keys[h->nlossy_keys++] = (key){src, dst, c->j, c->p};
}

/* A class's evidence in the window: -1 none, 0 clean, 1 lossy. */
static int cls_lossy(const ctl_health *h, const cls *c, int64_t now)
{
    uint32_t e = half(h, now);
    if (!c->src || c->epoch + 1 < e) {
        return -1;
    }
    uint64_t sent = (uint64_t)c->sent[0] + c->sent[1], lost = (uint64_t)c->lost[0] + c->lost[1];
    if (c->epoch + 1 == e) {
        sent = c->sent[0];
        lost = c->lost[0];
    }
    if (sent == 0 && !c->bad) {
        return -1;
    }
    return c->bad || (lost >= 3 && (double)lost >= 0.001 * (double)sent);
}

/* Counts a report's entry for class (src, dst, p, j) into the directions it crosses, as
 * lossy when its class is. Only classes that lost are remembered (O(losses), not O(paths));
 * the entries of the others count as clean. A class that turns lossy is kept for the
 * inference. */
static void cls_add(ctl_health *h, uint32_t src, uint32_t dst, unsigned p, unsigned j,
                    dirstat *const dirs[4], unsigned nd, uint64_t sent, uint64_t lost, bool bad,
                    int64_t now)
{
    cls *c = cls_find(h, src, dst, p, j);
    uint32_t e = half(h, now);
    for (unsigned k = 0; k < nd; k++) {
        dirs[k]->ncls[0]++;
    }
    if (!c && (lost || bad) && cls_room(h, now)) {
        uint64_t k = cls_hash(src + 1, dst + 1, p, j) & (h->cls_cap - 1);
        while (h->cls[k].src) {
            k = (k + 1) & (h->cls_cap - 1);
        }
        c = &h->cls[k];
        *c = (cls){
            .src = src + 1, .dst = dst + 1, .p = (uint8_t)p, .j = (uint16_t)j, .epoch = e - 2};
        h->ncls++;
    }
    if (!c) {
        return;
    }
    if (c->epoch != e) {
        bool prev = c->epoch + 1 == e;
        c->sent[1] = prev ? c->sent[0] : 0;
        c->lost[1] = prev ? c->lost[0] : 0;
        c->sent[0] = c->lost[0] = 0;
        c->bad = prev ? c->bad : 0;
        c->epoch = e;
    }
    c->sent[0] = sat_add(c->sent[0], sent);
    c->lost[0] = sat_add(c->lost[0], lost);
    c->bad = (uint16_t)(c->bad + (bad && c->bad < UINT16_MAX));
    if (cls_lossy(h, c, now) != 1) {
        return;
    }
    for (unsigned k = 0; k < nd; k++) {
        dirs[k]->nlossy[0]++;
    }
    if (c->lossy_epoch != e + 1) {
        c->lossy_epoch = e + 1;
        if (h->nlossy_keys == h->lossy_cap) {
            h->lossy_cap = h->lossy_cap ? 2 * h->lossy_cap : 256;
            h->lossy_keys = util_xrealloc(h->lossy_keys, h->lossy_cap * sizeof(key));
        }
        h->lossy_keys[h->nlossy_keys++] = (key){src, dst, (uint16_t)j, (uint8_t)p};
    }
}


int ctl_health_judge_own(uint64_t sent, uint64_t lost, unsigned bad_evs)
{
    if (sent == 0 && bad_evs == 0) {
        return ST_NODATA;
    }
    double rate = sent ? (double)lost / (double)sent : 1.0;
    if ((lost >= 10 && rate >= 0.01) || bad_evs >= 2) {
        return ST_BAD;
    }
    if (lost >= 3 && rate >= 0.001) {
        return ST_DEGRADED;
    }
    return ST_OK;
}

int ctl_health_judge(const ctl_health *h, const dirstat *d, int64_t now, unsigned min_sources)
{
    dirview v = dir_view(h, d, now);
    if (v.sent == 0 && v.bad_evs == 0) {
        return ST_NODATA;
    }
    if (v.nsrc < min_sources || !d->blamed) {
        /* one reporter's word is not enough, and loss another link explains is not its own */
        return ST_OK;
    }
    return ctl_health_judge_own(v.sent, v.lost, v.bad_evs);
}

int ctl_health_measured(const ctl_health *h, uint64_t di, int64_t now)
{
    uint64_t l = di / 2;
    /* T0-T1 links need two reporters; a NIC's uplink only its own host sees */
    unsigned min = l >= h->nlinks && di % 2 == 0 ? 1 : 2;
    probeview pv = ctl_health_probe_view(h, di, now);
    return worst(ctl_health_judge(h, &h->links[l].dir[di % 2], now, min),
                 ctl_health_judge_own(pv.sent, pv.lost, 0));
}

/* A direction's state: what was measured, raised to what the prober names it with. */
static int dir_state(const ctl_health *h, uint64_t di, int measured)
{
    return worst(measured, ctl_health_named(h, di, FAB_NONE));
}

/* Link |l|'s plane, and its T0 and T1 indexes (a T0-T1 link) or host (a host port). */
void ctl_health_where(const ctl_health *h, uint64_t l, unsigned *pp, unsigned *pa, unsigned *pj,
                      uint32_t *phost)
{
    if (l >= h->nlinks) {
        *pp = (unsigned)((l - h->nlinks) / h->nhosts);
        *phost = (uint32_t)((l - h->nlinks) % h->nhosts);
        *pa = (unsigned)t0_of(h, *phost, *pp);
        *pj = UINT32_MAX;
        return;
    }
    unsigned p = 0;
    while (p + 1 < h->planes && l >= h->base[p + 1]) {
        p++;
    }
    *pp = p;
    *pa = (unsigned)((l - h->base[p]) / h->nt1[p]);
    *pj = (unsigned)((l - h->base[p]) % h->nt1[p]);
    *phost = FAB_NONE;
}

/* The switches a direction's link ends on: its T0 and, for a T0-T1 link, its T1. */
static unsigned dir_switches(const ctl_health *h, uint64_t di, uint32_t out[2])
{
    unsigned p, a, j, n = 0;
    uint32_t host;
    ctl_health_where(h, di / 2, &p, &a, &j, &host);
    if ((int)a >= 0 && (out[n] = fab_switch_at(h->topo, p, FAB_TIER_T0, a)) != FAB_NONE) {
        n++;
    }
    if (host == FAB_NONE && (out[n] = fab_switch_at(h->topo, p, FAB_TIER_T1, j)) != FAB_NONE) {
        n++;
    }
    return n;
}

/* Whether a direction's classes are mostly lossy: what a broken element does to all of its
 * paths, where a sound one on the same paths keeps its other paths clean. */
static bool mostly_lossy(const ctl_health *h, const dirstat *d, int64_t now)
{
    dirview v = dir_view(h, d, now);
    return v.ncls > 0 && 4 * (uint64_t)v.nlossy >= 3 * (uint64_t)v.ncls;
}

/* A switch that loses on most of its links explains all of them. The cover explains each
 * lossy class once, by the first direction that takes it, so of a switch that drops on every
 * link only some directions are blamed (a T1's links up, say, and not down): the rest of its
 * mostly lossy directions are blamed with them, so that none of its links reads ok. */
static void switch_blame(ctl_health *h, int64_t now)
{
    if (!h->blamed.n) {
        return;
    }
    uint32_t *nb = util_xcalloc(h->nsw + 1, sizeof(*nb)), sw[2];
    for (size_t i = 0; i < h->blamed.n; i++) {
        for (unsigned k = 0, n = dir_switches(h, h->blamed.v[i], sw); k < n; k++) {
            nb[sw[k]]++;
        }
    }
    for (size_t i = 0; i < h->cand.n; i++) {
        uint64_t di = h->cand.v[i];
        dirstat *d = &h->links[di / 2].dir[di % 2];
        if (d->blamed || !mostly_lossy(h, d, now)) {
            continue;
        }
        for (unsigned k = 0, n = dir_switches(h, di, sw); k < n; k++) {
            fab_switch s;
            fab_switch_get(h->topo, sw[k], &s);
            /* the switch's links: a T1's one per T0, a T0's uplinks and its host ports */
            uint32_t links = s.tier == FAB_TIER_T1 ? h->nt0[s.plane] : s.nports;
            if (nb[sw[k]] >= 2 && 2 * nb[sw[k]] >= links) {
                d->blamed = 1;
                vec_push(&h->blamed, di);
                break;
            }
        }
    }
    free(nb);
}

/* The verdicts: which directions the lossy classes point at. A greedy cover: the direction
 * (a NIC's or a T0-T1 link's) that explains the most lossy classes not yet explained, among
 * those whose classes are mostly lossy (a bad link loses on all its paths; a good link on the
 * same paths keeps its other paths clean), until none explains more. Then a switch whose
 * links are mostly blamed is blamed itself (see the snapshot). */
static void infer(ctl_health *h, int64_t now)
{
    for (size_t i = 0; i < h->blamed.n; i++) {
        h->links[h->blamed.v[i] / 2].dir[h->blamed.v[i] % 2].blamed = 0;
    }
    h->blamed.n = 0;
    h->seq++;
    cls **lc = util_xmalloc((h->nlossy_keys + 1) * sizeof(*lc));
    size_t n = 0, kept = 0;
    dirstat *dirs[4];
    for (size_t i = 0; i < h->nlossy_keys; i++) {
        key k = h->lossy_keys[i];
        cls *c = cls_find(h, k.src, k.dst, k.p, k.j);
        if (!c || c->mark == h->seq || cls_lossy(h, c, now) != 1) {
            continue; /* gone, twice in the list, or no longer lossy */
        }
        c->mark = h->seq;
        h->lossy_keys[kept++] = k;
        lc[n++] = c;
        unsigned nd = cls_dirs(h, k.src, k.dst, k.p, k.j, dirs);
        for (unsigned d = 0; d < nd; d++) {
            uint64_t di = dir_index(h, dirs[d]);
            if (h->cand_n[di]++ == 0) {
                vec_push(&h->cand, di);
            }
        }
    }
    h->nlossy_keys = kept;
    uint8_t *covered = util_xcalloc(n + 1, 1);
    for (;;) {
        uint64_t best = UINT64_MAX;
        uint32_t bestn = 0;
        for (size_t i = 0; i < h->cand.n; i++) {
            uint64_t di = h->cand.v[i];
            dirstat *d = &h->links[di / 2].dir[di % 2];
            dirview v = dir_view(h, d, now);
            uint64_t tot = v.ncls, lossy = v.nlossy;
            if (h->cand_n[di] > bestn && 4 * lossy >= 3 * tot) {
                best = di;
                bestn = h->cand_n[di];
            }
        }
        if (best == UINT64_MAX) {
            break;
        }
        h->links[best / 2].dir[best % 2].blamed = 1;
        vec_push(&h->blamed, best);
        dirstat *bd = &h->links[best / 2].dir[best % 2];
        for (size_t i = 0; i < n; i++) {
            if (covered[i]) {
                continue;
            }
            unsigned nd = cls_dirs(h, lc[i]->src - 1, lc[i]->dst - 1, lc[i]->p, lc[i]->j, dirs);
            bool hit = false;
            for (unsigned d = 0; d < nd; d++) {
                hit |= dirs[d] == bd;
            }
            if (hit) {
                covered[i] = 1;
                for (unsigned d = 0; d < nd; d++) {
                    h->cand_n[dir_index(h, dirs[d])]--;
                }
            }
        }
    }
    switch_blame(h, now);
    for (size_t i = 0; i < h->cand.n; i++) {
        h->cand_n[h->cand.v[i]] = 0;
    }
    h->cand.n = 0;
    free(covered);
    free(lc);
}

/* The history of element |id|, made if new and there is room; NULL otherwise. */
ring *ctl_health_ring(ctl_health *h, uint64_t id, bool make)
{
    if (!h->ring_cap) {
        if (!make) {
            return NULL;
        }
        h->ring_cap = 2 * HISTORY_ELEMENTS;
        h->ring_slot = util_xcalloc(h->ring_cap, sizeof(uint32_t));
    }
    uint64_t k = mix(id + 1) & (h->ring_cap - 1);
    while (h->ring_slot[k]) {
        if (h->rings[h->ring_slot[k] - 1].id == id) {
            return &h->rings[h->ring_slot[k] - 1];
        }
        k = (k + 1) & (h->ring_cap - 1);
    }
    if (!make || h->nrings == HISTORY_ELEMENTS) {
        return NULL;
    }
    if ((h->nrings & (h->nrings - 1)) == 0) { /* grow at powers of two */
        h->rings = util_xrealloc(h->rings, (h->nrings ? 2 * h->nrings : 1) * sizeof(ring));
    }
    ring *r = &h->rings[h->nrings];
    memset(r, 0, sizeof(*r));
    r->id = id;
    h->ring_slot[k] = ++h->nrings;
    return r;
}

/* Records |state| of element |id| when it changed, or while it is unhealthy every so often;
 * healthy elements that were never anything else keep no history. */
static void history(ctl_health *h, uint64_t id, int from, int to, double loss, int64_t now)
{
    bool change = from != to && (from >= ST_DEGRADED || to >= ST_DEGRADED);
    ring *r = ctl_health_ring(h, id, change);
    if (!r || !(from != to || (to >= ST_DEGRADED && now - r->last_ms >= HISTORY_SAMPLE_MS))) {
        return;
    }
    r->s[r->head] = (sample){now, (float)loss, (uint8_t)to};
    r->head = (r->head + 1) % HISTORY;
    r->n += r->n < HISTORY;
    r->last_ms = now;
}

double ctl_health_link_loss(const ctl_health *h, uint64_t l, int64_t now)
{
    /* each source on its own: a prober's 40 of 1,280 is 3 %, not drowned in the agents'
     * clean traffic over the same direction */
    double loss = 0;
    for (unsigned d = 0; d < 2; d++) {
        dirview v = dir_view(h, &h->links[l].dir[d], now);
        probeview pv = ctl_health_probe_view(h, 2 * l + d, now);
        double ra = v.sent ? (double)v.lost / (double)v.sent : 0;
        double rp = pv.sent ? (double)pv.lost / (double)pv.sent : 0;
        loss = ra > loss ? ra : loss;
        loss = rp > loss ? rp : loss;
    }
    return loss;
}

/* A switch's state from its links: many of them at once point at the switch itself. */
static int switch_state(const uint32_t c[4])
{
    uint32_t seen = c[ST_OK] + c[ST_DEGRADED] + c[ST_BAD];
    return seen == 0                                 ? ST_NODATA
           : c[ST_BAD] >= 2 && 2 * c[ST_BAD] >= seen ? ST_BAD
           : c[ST_BAD] + c[ST_DEGRADED] >= 2 && 2 * (c[ST_BAD] + c[ST_DEGRADED]) >= seen
               ? ST_DEGRADED
               : ST_OK;
}

/* The snapshot: verdicts, then the state of every link with evidence, judged a slice at a
 * time so that reports get in between; links whose evidence aged out leave the set. Called
 * with refresh_lock held, without h->lock. */
static void refresh(ctl_health *h, int64_t now)
{
    int64_t t0 = mono_ms();
    pthread_rwlock_wrlock(&h->lock);
    h->dirty = false;
    infer(h, now);
    for (int s = 0; s < 4; s++) {
        h->by_state[s].n = 0;
    }
    memset(h->sw_count, 0, (size_t)h->nsw * sizeof(*h->sw_count));
    memset(h->sw_mcount, 0, (size_t)h->nsw * sizeof(*h->sw_mcount));
    memset(h->plane_links, 0, sizeof(h->plane_links));
    memset(h->plane_ports, 0, sizeof(h->plane_ports));
    uint64_t words = h->nall / 64 + 1, done = 0;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t bits = h->has[w];
        while (bits) {
            uint64_t l = w * 64 + (uint64_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            int mu = ctl_health_measured(h, 2 * l, now), md = ctl_health_measured(h, 2 * l + 1, now);
            int st = worst(dir_state(h, 2 * l, mu), dir_state(h, 2 * l + 1, md)), was = h->st[l];
            h->dst[l] = (uint8_t)(mu | md << 2);
            h->st[l] = (uint8_t)st;
            if (st == ST_NODATA) {
                h->has[w] &= ~(1ull << (l % 64));
            } else {
                vec_push(&h->by_state[st], l);
            }
            unsigned p, a, j;
            uint32_t host;
            ctl_health_where(h, l, &p, &a, &j, &host);
            uint32_t t0 = fab_switch_at(h->topo, p, FAB_TIER_T0, a);
            uint32_t t1 = host == FAB_NONE ? fab_switch_at(h->topo, p, FAB_TIER_T1, j) : FAB_NONE;
            /* a switch is judged on what its links measured; it is shown with their states */
            int m = worst(mu, md);
            if (t0 != FAB_NONE) {
                h->sw_count[t0][st]++;
                h->sw_mcount[t0][m]++;
            }
            if (t1 != FAB_NONE) {
                h->sw_count[t1][st]++;
                h->sw_mcount[t1][m]++;
            }
            if (p < 16) {
                (host == FAB_NONE ? h->plane_links : h->plane_ports)[p][st]++;
            }
            if (st != was || st >= ST_DEGRADED) {
                history(h, l, was, st, ctl_health_link_loss(h, l, now), now);
            }
            if (++done % SLICE == 0) { /* let reports in */
                pthread_rwlock_unlock(&h->lock);
                pthread_rwlock_wrlock(&h->lock);
            }
        }
    }
    for (uint32_t sw = 0; sw < h->nsw; sw++) {
        int m = switch_state(h->sw_mcount[sw]);
        int st = worst(m, ctl_health_named(h, UINT64_MAX, sw)), was = h->sw_st[sw];
        h->sw_mst[sw] = (uint8_t)m;
        if (st != was || st >= ST_DEGRADED) {
            uint32_t *c = h->sw_count[sw], seen = c[ST_OK] + c[ST_DEGRADED] + c[ST_BAD];
            history(h, h->nall + sw, was, st,
                    seen ? (double)(c[ST_BAD] + c[ST_DEGRADED]) / seen : 0, now);
        }
        h->sw_st[sw] = (uint8_t)st;
    }
    h->snap_ms = now ? now : 1;
    h->snap_seq++;
    h->cost_ms = (double)(mono_ms() - t0);
    pthread_rwlock_unlock(&h->lock);
}

static bool due(ctl_health *h, int64_t now, bool *phave)
{
    pthread_rwlock_rdlock(&h->lock);
    double age_ms = (double)(now - h->snap_ms);
    *phave = h->snap_ms != 0;
    bool need = !*phave || age_ms < 0 || half(h, now) != half(h, h->snap_ms) ||
                (h->dirty && age_ms >= 10 * h->cost_ms);
    pthread_rwlock_unlock(&h->lock);
    return need;
}

/* A snapshot that costs more than this to take is left to the window thread's tick: a query
 * never waits for one (the views read the last, at most a second old). A small fabric's is
 * taken by the query that finds it due, so that what was just reported is what it reads. */
#define INLINE_REFRESH_MS 10.0

void ctl_health_fresh(ctl_health *h, int64_t now)
{
    bool have;
    if (!due(h, now, &have)) {
        return;
    }
    if (have && atomic_load(&h->ticking) && h->cost_ms > INLINE_REFRESH_MS) {
        return;
    }
    /* one refresh at a time: the others read the snapshot there is, or, when there is none
     * yet, wait for the first and take it */
    if (have ? pthread_mutex_trylock(&h->refresh_lock) != 0
             : pthread_mutex_lock(&h->refresh_lock) != 0) {
        return;
    }
    if (due(h, now, &have)) {
        refresh(h, now);
    }
    pthread_mutex_unlock(&h->refresh_lock);
}

static bool get_u64(json_object *o, const char *key, uint64_t *v, char *why, size_t whylen)
{
    json_object *x;
    *v = 0;
    if (!json_object_object_get_ex(o, key, &x)) {
        return true;
    }
    if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0) {
        snprintf(why, whylen, "'%s' must be a whole number of 0 or more", key);
        return false;
    }
    *v = (uint64_t)json_object_get_int64(x);
    return true;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *x;
    return json_object_object_get_ex(o, key, &x) && json_object_is_type(x, json_type_string)
               ? json_object_get_string(x)
               : NULL;
}

typedef struct ev_ev {
    unsigned p, j;
    int a, b;
    uint32_t dst, ev;
    uint64_t sent, lost;
    bool bad;
    dirstat *dirs[4]; /* the directions it crossed */
    unsigned nd;
} ev_ev;

/* Where EV |ev| to |peer| runs, into |e|: 0, or 422 with |what|[|i|] named in |why|. */
static int ev_where(ctl_health *h, uint32_t src, const char *peer, uint32_t ev, ev_ev *e,
                    const char *what, size_t i, char *why, size_t whylen)
{
    e->ev = ev;
    e->dst = fab_host_find(h->topo, peer);
    e->p = fab_ev_plane(h->plan, ev);
    e->j = fab_ev_t1(h->plan, ev);
    if (e->dst == FAB_NONE || e->p >= h->planes || e->j >= h->nt1[e->p]) {
        snprintf(why, whylen, "%s[%zu]: %s", what, i,
                 e->dst == FAB_NONE ? "the peer is no host of the fabric"
                                    : "the EV names no plane and T1 of the fabric");
        return 422;
    }
    e->a = t0_of(h, src, e->p);
    e->b = t0_of(h, e->dst, e->p);
    if (e->a < 0 || e->b < 0) {
        snprintf(why, whylen, "%s[%zu]: a host port of plane %u is not cabled", what, i, e->p);
        return 422;
    }
    return 0;
}

/* A 32-bit EV member; false if absent or not one. */
static bool get_ev(json_object *o, uint32_t *ev)
{
    json_object *x;
    if (!json_object_object_get_ex(o, "ev", &x) || !json_object_is_type(x, json_type_int) ||
        json_object_get_int64(x) < 0 || json_object_get_int64(x) > UINT32_MAX) {
        return false;
    }
    *ev = (uint32_t)json_object_get_int64(x);
    return true;
}

_Static_assert(MAX_ENTRIES == CTL_REPORT_MAX_EVS, "the API's bound is the engine's");

#define TRANS_SLOTS (2 * CTL_REPORT_MAX_TRANSITIONS)

/* A transition's EV, by (peer, EV), in open addressing. */
typedef struct tslot {
    uint64_t key;
    bool used, listed; /* listed: the report's EVs have it */
} tslot;

static tslot *tslot_find(tslot *slot, uint64_t key)
{
    uint64_t k = mix(key) % TRANS_SLOTS;
    while (slot[k].used && slot[k].key != key) {
        k = (k + 1) % TRANS_SLOTS;
    }
    return &slot[k];
}

/* The transitions in |tr| into assumed_bad for loss or a timeout: path evidence as much as an
 * EV reported in that state (it may have recovered by the time of the report), where ECN,
 * trims and always_skip speak of congestion. Each marks its EV's entry among the |*pn| of |v|
 * bad, or adds one that sent nothing (|v| has room for one more per transition) when
 * the report does not list the EV; an EV counts once however often it went bad. 0, or
 * 400/422 with |why|. */
static int bad_transitions(ctl_health *h, uint32_t src, json_object *tr, ev_ev *v, size_t *pn,
                           char *why, size_t whylen)
{
    size_t nt = tr ? json_object_array_length(tr) : 0, n = *pn, np = 0;
    if (nt == 0) {
        return 0;
    }
    ev_ev *pend = v + n; /* one entry per EV that went bad, in the order of the transitions */
    tslot *slot = util_xcalloc(TRANS_SLOTS, sizeof(*slot));
    int status = 0;
    for (size_t i = 0; i < nt && !status; i++) {
        json_object *t = json_object_array_get_idx(tr, i);
        const char *peer = json_object_is_type(t, json_type_object) ? get_str(t, "peer") : NULL;
        const char *to = peer ? get_str(t, "to") : NULL, *reason = to ? get_str(t, "reason") : NULL;
        uint32_t ev;
        if (!reason || !get_ev(t, &ev)) {
            snprintf(why, whylen,
                     "transitions[%zu] needs 'peer' (a host), 'ev' (a 32-bit EV), 'to' and "
                     "'reason'",
                     i);
            status = 400;
        } else if (strcmp(to, "assumed_bad") == 0 &&
                   (strcmp(reason, "loss") == 0 || strcmp(reason, "timeout") == 0) &&
                   (status = ev_where(h, src, peer, ev, &pend[np], "transitions", i, why,
                                      whylen)) == 0) {
            tslot *sl = tslot_find(slot, (uint64_t)pend[np].dst << 32 | ev);
            if (!sl->used) {
                *sl = (tslot){.key = (uint64_t)pend[np].dst << 32 | ev, .used = true};
                pend[np++].bad = true;
            }
        }
    }
    for (size_t i = 0; i < n && np && !status; i++) {
        tslot *sl = tslot_find(slot, (uint64_t)v[i].dst << 32 | v[i].ev);
        if (sl->used) {
            v[i].bad = true;
            sl->listed = true;
        }
    }
    /* the EVs the report does not list follow its own: w <= n + m, so nothing unread moves */
    size_t w = n;
    for (size_t m = 0; m < np && !status; m++) {
        if (!tslot_find(slot, (uint64_t)pend[m].dst << 32 | pend[m].ev)->listed) {
            v[w++] = pend[m];
        }
    }
    free(slot);
    *pn = w;
    return status;
}

int ctl_health_report(ctl_health *h, json_object *r, const char *reporter, int64_t now, char *why,
                      size_t whylen)
{
    if (!json_object_is_type(r, json_type_object)) {
        snprintf(why, whylen, "the report must be a JSON object");
        return 400;
    }
    const char *host = get_str(r, "host");
    json_object *evs, *tr = NULL;
    if (!host || !json_object_object_get_ex(r, "evs", &evs) ||
        !json_object_is_type(evs, json_type_array)) {
        snprintf(why, whylen, "a report needs 'host' (a string) and 'evs' (an array)");
        return 400;
    }
    uint32_t src = fab_host_find(h->topo, host);
    if (src == FAB_NONE) {
        snprintf(why, whylen, "'%s' is no host of fabric '%s'", host, fab_topo_name(h->topo));
        return 422;
    }
    size_t n = json_object_array_length(evs);
    if (n > MAX_ENTRIES) {
        snprintf(why, whylen, "a report holds at most %d EVs", MAX_ENTRIES);
        return 400;
    }
    if (json_object_object_get_ex(r, "transitions", &tr) &&
        (!json_object_is_type(tr, json_type_array) ||
         json_object_array_length(tr) > CTL_REPORT_MAX_TRANSITIONS)) {
        snprintf(why, whylen, "'transitions' must be an array of at most %d",
                 CTL_REPORT_MAX_TRANSITIONS);
        return 400;
    }
    /* room for the EVs that only their transitions name */
    ev_ev *v = util_xcalloc(n + (tr ? json_object_array_length(tr) : 0) + 1, sizeof(*v));
    int status = 0;
    for (size_t i = 0; i < n && !status; i++) {
        json_object *e = json_object_array_get_idx(evs, i);
        const char *peer = json_object_is_type(e, json_type_object) ? get_str(e, "peer") : NULL;
        uint32_t ev;
        if (!peer || !get_ev(e, &ev)) {
            snprintf(why, whylen, "evs[%zu] needs 'peer' (a host) and 'ev' (a 32-bit EV)", i);
            status = 400;
            break;
        }
        json_object *st;
        const char *state = NULL;
        if (json_object_object_get_ex(e, "state", &st) &&
            (!(state = get_str(e, "state")) ||
             (strcmp(state, "good") != 0 && strcmp(state, "skip") != 0 &&
              strcmp(state, "assumed_bad") != 0 && strcmp(state, "denied") != 0))) {
            snprintf(why, whylen, "evs[%zu]: 'state' must be good, skip, assumed_bad or denied", i);
            status = 400;
            break;
        }
        if (!get_u64(e, "sent", &v[i].sent, why, whylen) ||
            !get_u64(e, "lost", &v[i].lost, why, whylen)) {
            status = 400;
            break;
        }
        if (v[i].lost > v[i].sent) {
            snprintf(why, whylen, "evs[%zu]: lost is more than sent", i);
            status = 400;
            break;
        }
        v[i].bad = state && strcmp(state, "assumed_bad") == 0;
        status = ev_where(h, src, peer, ev, &v[i], "evs", i, why, whylen);
    }
    if (status == 0) {
        status = bad_transitions(h, src, tr, v, &n, why, whylen);
    }
    if (status == 0) {
        uint32_t id = ctl_health_name_hash(reporter);
        /* the directions are scattered over hundreds of MiB: fetch them before the lock */
        for (size_t i = 0; i < n; i++) {
            v[i].j = v[i].a != v[i].b ? v[i].j : h->nt1[v[i].p]; /* nt1: T0-local */
            v[i].nd = cls_dirs(h, src, v[i].dst, v[i].p, v[i].j, v[i].dirs);
            for (unsigned k = 0; k < v[i].nd; k++) {
                __builtin_prefetch(v[i].dirs[k], 1);
            }
        }
        pthread_rwlock_wrlock(&h->lock);
        for (size_t i = 0; i < n; i++) {
            for (unsigned k = 0; k < v[i].nd; k++) {
                add(h, v[i].dirs[k], v[i].sent, v[i].lost, v[i].bad, id, now);
            }
            cls_add(h, src, v[i].dst, v[i].p, v[i].j, v[i].dirs, v[i].nd, v[i].sent, v[i].lost,
                    v[i].bad, now);
        }
        h->ingested++;
        h->dirty = true;
        pthread_rwlock_unlock(&h->lock);
    }
    free(v);
    return status;
}
