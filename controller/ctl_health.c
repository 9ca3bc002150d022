/* SPDX-License-Identifier: MIT */
/* Health from evidence. An EV names a path (plane p, T1 j) between two host ports, so an
 * agent's counters for it are evidence on each directed link it crosses: the sender's NIC-T0
 * link up, T0 a to T1 j, T1 j down to T0 b, the receiver's link down. A link's loss rate is
 * its lost over its sent; a bad link stands out because every pair through it loses, while a
 * good link on the same paths has most of its traffic elsewhere. A link is judged only on
 * evidence from several reporters (one host cannot tell its own trouble from the fabric's),
 * except a NIC's own uplink, which only its host sees. Evidence ages out over a window kept
 * as two halves. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_element.h"
#include "ctl_health.h"
#include "ctl_store.h"
#include "util.h"

#define SOURCES 4        /* distinct reporters remembered per direction */
#define MAX_ENTRIES 4096 /* EVs of one report, results of one probe post */

typedef struct dirstat {
    uint64_t sent[2], lost[2]; /* [0] this half window, [1] the one before */
    uint32_t bad_evs;
    uint64_t epoch;   /* the half window [0] counts */
    int64_t last_ms;  /* the latest evidence */
    uint32_t src[SOURCES];
    uint8_t nsrc;
    bool probed; /* a prober measured it by name: no correlation needed */
    bool blamed; /* the inference's verdict: its loss is its own */
} dirstat;

/* Evidence per class of paths, for the inference: one source host, one destination host,
 * one plane and T1 (nt1: the T0-local path). Open addressing on a hash of the four; stale
 * entries go when the table grows. */
typedef struct cls {
    uint32_t src, dst; /* host + 1; src 0: empty */
    uint16_t p, j;
    uint64_t epoch;
    uint64_t sent[2], lost[2];
    uint32_t bad;
} cls;

typedef struct link {
    dirstat dir[2]; /* up: toward the T1 (from the NIC toward its T0); down: the reverse */
} link;

struct ctl_health {
    const fab_topo *topo;
    const fab_plan *plan;
    unsigned planes;
    uint32_t nhosts;
    uint64_t half_ms;
    uint32_t nt0[16], nt1[16];
    uint64_t base[16]; /* first T0-T1 link of each plane */
    uint64_t nlinks;   /* T0-T1 links */
    link *links;       /* T0-T1 links, then host ports (host * planes + plane) */
    pthread_mutex_t lock;
    uint64_t ingested;
    cls *cls;
    uint64_t ncls, cls_cap;
    int64_t inferred_at; /* when the verdicts were last computed; 0: evidence since */
    /* the inference's counts per direction: T0-T1 directions, then NIC directions */
    uint32_t *lossy, *lossy0, *total;
    uint64_t ncand;
};

static const char *const states[] = {"no_data", "ok", "degraded", "bad"};
enum { ST_NODATA, ST_OK, ST_DEGRADED, ST_BAD };

ctl_health *ctl_health_new(const fab_topo *topo, uint64_t window_ms)
{
    ctl_health *h = util_xcalloc(1, sizeof(*h));
    h->topo = topo;
    h->plan = fab_topo_plan(topo);
    h->planes = fab_topo_planes(topo);
    h->nhosts = fab_topo_nhosts(topo);
    h->half_ms = window_ms / 2 ? window_ms / 2 : 1;
    for (unsigned p = 0; p < h->planes && p < 16; p++) {
        h->nt0[p] = fab_topo_nt0(topo, p);
        h->nt1[p] = fab_topo_nt1(topo, p);
        h->base[p] = h->nlinks;
        h->nlinks += (uint64_t)h->nt0[p] * h->nt1[p];
    }
    h->links = util_xcalloc(h->nlinks + (uint64_t)h->nhosts * h->planes, sizeof(link));
    h->ncand = 2 * (h->nlinks + (uint64_t)h->nhosts * h->planes);
    h->lossy = util_xcalloc(h->ncand + 1, sizeof(uint32_t));
    h->lossy0 = util_xcalloc(h->ncand + 1, sizeof(uint32_t));
    h->total = util_xcalloc(h->ncand + 1, sizeof(uint32_t));
    pthread_mutex_init(&h->lock, NULL);
    return h;
}

void ctl_health_free(ctl_health *h)
{
    if (h) {
        pthread_mutex_destroy(&h->lock);
        free(h->cls);
        free(h->lossy);
        free(h->lossy0);
        free(h->total);
        free(h->links);
        free(h);
    }
}

uint64_t ctl_health_ingested(const ctl_health *h)
{
    return h->ingested;
}

/* Brings |d| to the half window of |now|: a half that ended moves to [1], an older one goes. */
static void age(const ctl_health *h, dirstat *d, int64_t now)
{
    uint64_t e = (uint64_t)now / h->half_ms;
    if (d->epoch == e) {
        return;
    }
    if (d->epoch + 1 == e) {
        d->sent[1] = d->sent[0];
        d->lost[1] = d->lost[0];
    } else {
        d->sent[1] = d->lost[1] = 0;
        d->bad_evs = 0;
        d->nsrc = 0;
        d->probed = false;
    }
    d->sent[0] = d->lost[0] = 0;
    d->epoch = e;
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

/* The class of (src, dst, p, j), made if new. */
static cls *cls_get(ctl_health *h, uint32_t src, uint32_t dst, unsigned p, unsigned j, int64_t now)
{
    if (2 * (h->ncls + 1) > h->cls_cap) {
        /* grow, keeping only the entries with evidence still in the window */
        cls *old = h->cls;
        uint64_t oldcap = h->cls_cap, e = (uint64_t)now / h->half_ms;
        h->cls_cap = oldcap ? oldcap * 2 : 1024;
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
    }
    uint64_t k = cls_hash(src + 1, dst + 1, p, j) & (h->cls_cap - 1);
    cls *c;
    while ((c = &h->cls[k])->src &&
           !(c->src == src + 1 && c->dst == dst + 1 && c->p == p && c->j == j)) {
        k = (k + 1) & (h->cls_cap - 1);
    }
    if (!c->src) {
        *c = (cls){.src = src + 1, .dst = dst + 1, .p = (uint16_t)p, .j = (uint16_t)j};
        h->ncls++;
    }
    return c;
}

static void cls_add(ctl_health *h, uint32_t src, uint32_t dst, unsigned p, unsigned j,
                    uint64_t sent, uint64_t lost, bool bad, int64_t now)
{
    cls *c = cls_get(h, src, dst, p, j, now);
    uint64_t e = (uint64_t)now / h->half_ms;
    if (c->epoch != e) {
        c->sent[1] = c->epoch + 1 == e ? c->sent[0] : 0;
        c->lost[1] = c->epoch + 1 == e ? c->lost[0] : 0;
        c->sent[0] = c->lost[0] = 0;
        c->bad = c->epoch + 1 == e ? c->bad : 0;
        c->epoch = e;
    }
    c->sent[0] += sent;
    c->lost[0] += lost;
    c->bad += bad;
}

/* A class's evidence in the window: -1 none, 0 clean, 1 lossy. */
static int cls_lossy(const ctl_health *h, const cls *c, int64_t now)
{
    uint64_t e = (uint64_t)now / h->half_ms;
    if (!c->src || c->epoch + 1 < e) {
        return -1;
    }
    uint64_t sent = c->sent[0] + c->sent[1], lost = c->lost[0] + c->lost[1];
    if (c->epoch + 1 == e) {
        sent = c->sent[0];
        lost = c->lost[0];
    }
    if (sent == 0 && !c->bad) {
        return -1;
    }
    return c->bad || (lost >= 3 && (double)lost >= 0.001 * (double)sent);
}

static uint32_t name_hash(const char *s)
{
    uint32_t x = 2166136261u;
    for (; *s; s++) {
        x = (x ^ (uint8_t)*s) * 16777619u;
    }
    return x | 1;
}

static void add(const ctl_health *h, dirstat *d, uint64_t sent, uint64_t lost, bool bad,
                uint32_t src, int64_t now)
{
    age(h, d, now);
    d->sent[0] += sent;
    d->lost[0] += lost;
    d->bad_evs += bad;
    d->last_ms = now;
    for (unsigned i = 0; i < d->nsrc; i++) {
        if (d->src[i] == src) {
            return;
        }
    }
    if (d->nsrc < SOURCES) {
        d->src[d->nsrc++] = src;
    }
}

static int judge(const ctl_health *h, dirstat *d, int64_t now, unsigned min_sources)
{
    age(h, d, now);
    uint64_t sent = d->sent[0] + d->sent[1], lost = d->lost[0] + d->lost[1];
    if (sent == 0 && d->bad_evs == 0) {
        return ST_NODATA;
    }
    if (!d->probed && (d->nsrc < min_sources || !d->blamed)) {
        /* one reporter's word is not enough, and loss another link explains is not its own */
        return ST_OK;
    }
    double rate = sent ? (double)lost / (double)sent : 1.0;
    if ((lost >= 10 && rate >= 0.01) || d->bad_evs >= 2) {
        return ST_BAD;
    }
    if (lost >= 3 && rate >= 0.001) {
        return ST_DEGRADED;
    }
    return ST_OK;
}

static json_object *dir_json(const ctl_health *h, dirstat *d, int st, int64_t now)
{
    (void)now;
    (void)h;
    uint64_t sent = d->sent[0] + d->sent[1], lost = d->lost[0] + d->lost[1];
    json_object *j = json_object_new_object();
    json_object_object_add(j, "state", json_object_new_string(states[st]));
    json_object_object_add(j, "sent", json_object_new_int64((int64_t)sent));
    json_object_object_add(j, "lost", json_object_new_int64((int64_t)lost));
    json_object_object_add(j, "loss_rate",
                           json_object_new_double(sent ? (double)lost / (double)sent : 0));
    json_object_object_add(j, "sources", json_object_new_int(d->nsrc));
    json_object_object_add(j, "probed", json_object_new_boolean(d->probed));
    json_object_object_add(j, "assumed_bad_evs", json_object_new_int64(d->bad_evs));
    if (d->last_ms) {
        char t[40];
        ctl_time_str(d->last_ms, t, sizeof(t));
        json_object_object_add(j, "last_evidence", json_object_new_string(t));
    }
    return j;
}

static link *t0t1(ctl_health *h, unsigned p, unsigned a, unsigned j)
{
    return &h->links[h->base[p] + (uint64_t)a * h->nt1[p] + j];
}

static link *nic(ctl_health *h, uint32_t host, unsigned p)
{
    return &h->links[h->nlinks + (uint64_t)host * h->planes + p];
}

/* The T0 index host port (host, p) hangs on, or -1. */
static int t0_of(const ctl_health *h, uint32_t host, unsigned p)
{
    uint32_t sw;
    unsigned port;
    fab_switch s;
    if (fab_host_attach(h->topo, host, p, &sw, &port) != 0 || fab_switch_get(h->topo, sw, &s) != 0) {
        return -1;
    }
    return (int)s.index;
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
    uint32_t dst;
    uint64_t sent, lost;
    bool bad;
} ev_ev;

int ctl_health_report(ctl_health *h, json_object *r, const char *reporter, int64_t now,
                      char *why, size_t whylen)
{
    if (!json_object_is_type(r, json_type_object)) {
        snprintf(why, whylen, "the report must be a JSON object");
        return 400;
    }
    const char *host = get_str(r, "host");
    json_object *evs;
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
    ev_ev *v = util_xcalloc(n ? n : 1, sizeof(*v));
    int status = 0;
    for (size_t i = 0; i < n && !status; i++) {
        json_object *e = json_object_array_get_idx(evs, i), *x;
        const char *peer = json_object_is_type(e, json_type_object) ? get_str(e, "peer") : NULL;
        if (!peer || !json_object_object_get_ex(e, "ev", &x) ||
            !json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0 ||
            json_object_get_int64(x) > UINT32_MAX) {
            snprintf(why, whylen, "evs[%zu] needs 'peer' (a host) and 'ev' (a 32-bit EV)", i);
            status = 400;
            break;
        }
        uint32_t ev = (uint32_t)json_object_get_int64(x);
        const char *state = get_str(e, "state");
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
        v[i].dst = fab_host_find(h->topo, peer);
        v[i].p = fab_ev_plane(h->plan, ev);
        v[i].j = fab_ev_t1(h->plan, ev);
        v[i].bad = state && strcmp(state, "assumed_bad") == 0;
        if (v[i].dst == FAB_NONE || v[i].p >= h->planes || v[i].j >= h->nt1[v[i].p]) {
            snprintf(why, whylen, "evs[%zu]: %s", i,
                     v[i].dst == FAB_NONE ? "the peer is no host of the fabric"
                                          : "the EV names no plane and T1 of the fabric");
            status = 422;
            break;
        }
        v[i].a = t0_of(h, src, v[i].p);
        v[i].b = t0_of(h, v[i].dst, v[i].p);
        if (v[i].a < 0 || v[i].b < 0) {
            snprintf(why, whylen, "evs[%zu]: a host port of plane %u is not cabled", i, v[i].p);
            status = 422;
        }
    }
    if (status == 0) {
        uint32_t id = name_hash(reporter);
        pthread_mutex_lock(&h->lock);
        for (size_t i = 0; i < n; i++) {
            unsigned j = v[i].a != v[i].b ? v[i].j : h->nt1[v[i].p]; /* nt1: T0-local */
            cls_add(h, src, v[i].dst, v[i].p, j, v[i].sent, v[i].lost, v[i].bad, now);
            add(h, &nic(h, src, v[i].p)->dir[0], v[i].sent, v[i].lost, v[i].bad, id, now);
            add(h, &nic(h, v[i].dst, v[i].p)->dir[1], v[i].sent, v[i].lost, v[i].bad, id, now);
            if (v[i].a != v[i].b) {
                add(h, &t0t1(h, v[i].p, (unsigned)v[i].a, v[i].j)->dir[0], v[i].sent, v[i].lost,
                    v[i].bad, id, now);
                add(h, &t0t1(h, v[i].p, (unsigned)v[i].b, v[i].j)->dir[1], v[i].sent, v[i].lost,
                    v[i].bad, id, now);
            }
        }
        h->ingested++;
        h->inferred_at = 0;
        pthread_mutex_unlock(&h->lock);
    }
    free(v);
    return status;
}

int ctl_health_probes(ctl_health *h, json_object *r, const char *reporter, int64_t now,
                      char *why, size_t whylen)
{
    json_object *res;
    if (!json_object_is_type(r, json_type_object) ||
        !json_object_object_get_ex(r, "results", &res) ||
        !json_object_is_type(res, json_type_array)) {
        snprintf(why, whylen, "probe results need 'results' (an array)");
        return 400;
    }
    size_t n = json_object_array_length(res);
    if (n > MAX_ENTRIES) {
        snprintf(why, whylen, "at most %d results at once", MAX_ENTRIES);
        return 400;
    }
    typedef struct one {
        dirstat *d;
        uint64_t sent, lost;
    } one;
    one *v = util_xcalloc(n ? n : 1, sizeof(*v));
    int status = 0;
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < n && !status; i++) {
        json_object *e = json_object_array_get_idx(res, i);
        const char *el = json_object_is_type(e, json_type_object) ? get_str(e, "element") : NULL;
        const char *scope = el ? get_str(e, "scope") : NULL;
        ctl_element x;
        char bad[160];
        if (!el || !scope || (strcmp(scope, "up") != 0 && strcmp(scope, "down") != 0)) {
            snprintf(why, whylen, "results[%zu] needs 'element' and 'scope' (up or down)", i);
            status = 400;
        } else if (!get_u64(e, "sent", &v[i].sent, why, whylen) ||
                   !get_u64(e, "lost", &v[i].lost, why, whylen)) {
            status = 400;
        } else if (v[i].lost > v[i].sent) {
            snprintf(why, whylen, "results[%zu]: lost is more than sent", i);
            status = 400;
        } else if (ctl_element_parse(h->topo, el, &x, bad, sizeof(bad)) != 0 ||
                   x.kind == CTL_EL_SWITCH) {
            snprintf(why, whylen, "results[%zu]: %s", i,
                     x.kind == CTL_EL_SWITCH ? "a probe result names a link or a host port" : bad);
            status = 422;
        } else {
            link *l = x.kind == CTL_EL_PORT ? nic(h, x.host, x.plane) : t0t1(h, x.plane, x.t0, x.t1);
            v[i].d = &l->dir[strcmp(scope, "up") == 0 ? 0 : 1];
        }
    }
    if (status == 0) {
        for (size_t i = 0; i < n; i++) {
            add(h, v[i].d, v[i].sent, v[i].lost, false, name_hash(reporter), now);
            v[i].d->probed = true; /* a named element's own loss: no guess across paths */
        }
        h->ingested++;
        h->inferred_at = 0;
    }
    pthread_mutex_unlock(&h->lock);
    free(v);
    return status;
}

/* The directions a class's packets crossed (up to four): the sender's NIC up, T0 a to T1 j,
 * T1 j down to T0 b, the receiver's NIC down; as candidate indexes. */
static unsigned cls_dirs(const ctl_health *h, const cls *c, uint64_t out[4])
{
    uint32_t src = c->src - 1, dst = c->dst - 1;
    unsigned p = c->p, n = 0;
    uint64_t nics = 2 * h->nlinks;
    out[n++] = nics + 2 * ((uint64_t)src * h->planes + p);
    out[n++] = nics + 2 * ((uint64_t)dst * h->planes + p) + 1;
    if (c->j < h->nt1[p]) {
        int a = t0_of(h, src, p), b = t0_of(h, dst, p);
        if (a >= 0 && b >= 0) {
            out[n++] = 2 * (h->base[p] + (uint64_t)a * h->nt1[p] + c->j);
            out[n++] = 2 * (h->base[p] + (uint64_t)b * h->nt1[p] + c->j) + 1;
        }
    }
    return n;
}

static dirstat *cand_dir(ctl_health *h, uint64_t d)
{
    return &h->links[d / 2].dir[d % 2]; /* T0-T1 links then NICs, in one array */
}

/* The verdicts: which directions the lossy classes point at. A greedy cover: the direction
 * (a NIC's or a T0-T1 link's) that explains the most lossy classes not yet explained, among
 * those whose classes are mostly lossy (a bad link loses on all its paths; a good link on the
 * same paths keeps its other paths clean), until none explains more. Then a switch whose
 * links are mostly blamed is blamed itself (ctl_health_switches). */
static void infer(ctl_health *h, int64_t now)
{
    memset(h->lossy, 0, h->ncand * sizeof(uint32_t));
    memset(h->total, 0, h->ncand * sizeof(uint32_t));
    for (uint64_t d = 0; d < h->ncand; d++) {
        cand_dir(h, d)->blamed = false;
    }
    uint64_t dirs[4];
    for (uint64_t i = 0; i < h->cls_cap; i++) {
        int st = cls_lossy(h, &h->cls[i], now);
        if (st < 0) {
            continue;
        }
        unsigned n = cls_dirs(h, &h->cls[i], dirs);
        for (unsigned k = 0; k < n; k++) {
            h->total[dirs[k]]++;
            h->lossy[dirs[k]] += (uint32_t)st;
        }
    }
    memcpy(h->lossy0, h->lossy, h->ncand * sizeof(uint32_t));
    uint8_t *covered = util_xcalloc(h->cls_cap ? h->cls_cap : 1, 1);
    for (;;) {
        uint64_t best = UINT64_MAX;
        uint32_t bestn = 0;
        for (uint64_t d = 0; d < h->ncand; d++) {
            if (h->lossy[d] > bestn && 4 * (uint64_t)h->lossy0[d] >= 3 * (uint64_t)h->total[d]) {
                best = d;
                bestn = h->lossy[d];
            }
        }
        if (best == UINT64_MAX) {
            break;
        }
        cand_dir(h, best)->blamed = true;
        for (uint64_t i = 0; i < h->cls_cap; i++) {
            if (covered[i] || cls_lossy(h, &h->cls[i], now) != 1) {
                continue;
            }
            unsigned n = cls_dirs(h, &h->cls[i], dirs);
            bool hit = false;
            for (unsigned k = 0; k < n; k++) {
                hit |= dirs[k] == best;
            }
            if (hit) {
                covered[i] = 1;
                for (unsigned k = 0; k < n; k++) {
                    h->lossy[dirs[k]]--;
                }
            }
        }
    }
    free(covered);
    h->inferred_at = now ? now : 1;
}

/* The verdicts, computed again when evidence came or half a second passed. */
static void refresh(ctl_health *h, int64_t now)
{
    if (h->inferred_at == 0 || now - h->inferred_at >= 500) {
        infer(h, now);
    }
}

static int worst(int a, int b)
{
    return a > b ? a : b;
}

static const char *sw_name(const ctl_health *h, unsigned p, fab_tier t, unsigned i)
{
    fab_switch s;
    uint32_t sw = fab_switch_at(h->topo, p, t, i);
    return sw != FAB_NONE && fab_switch_get(h->topo, sw, &s) == 0 ? s.name : "?";
}

static json_object *link_item(ctl_health *h, link *l, const char *name, unsigned p,
                              unsigned min_src_up, unsigned min_src_down, int64_t now, int *pst)
{
    int su = judge(h, &l->dir[0], now, min_src_up), sd = judge(h, &l->dir[1], now, min_src_down);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "link", json_object_new_string(name));
    json_object_object_add(j, "plane", json_object_new_int((int)p));
    json_object_object_add(j, "state", json_object_new_string(states[worst(su, sd)]));
    json_object_object_add(j, "up", dir_json(h, &l->dir[0], su, now));
    json_object_object_add(j, "down", dir_json(h, &l->dir[1], sd, now));
    *pst = worst(su, sd);
    return j;
}

/* Calls |fn| for every link the filter's plane and switch allow, T0-T1 links first. */
typedef void (*link_fn)(ctl_health *h, link *l, const char *name, unsigned p, unsigned su,
                        unsigned sd, uint32_t t0, uint32_t t1, void *user);

static void each_link(ctl_health *h, const ctl_link_filter *f, link_fn fn, void *user)
{
    char name[200];
    for (unsigned p = 0; p < h->planes; p++) {
        if (f->plane != UINT32_MAX && p != f->plane) {
            continue;
        }
        for (unsigned a = 0; a < h->nt0[p]; a++) {
            uint32_t t0 = fab_switch_at(h->topo, p, FAB_TIER_T0, a);
            for (unsigned j = 0; j < h->nt1[p]; j++) {
                uint32_t t1 = fab_switch_at(h->topo, p, FAB_TIER_T1, j);
                if (f->sw != FAB_NONE && f->sw != t0 && f->sw != t1) {
                    continue;
                }
                snprintf(name, sizeof(name), "%s~%s", sw_name(h, p, FAB_TIER_T0, a),
                         sw_name(h, p, FAB_TIER_T1, j));
                fn(h, t0t1(h, p, a, j), name, p, 2, 2, t0, t1, user);
            }
        }
    }
    for (uint32_t host = 0; host < h->nhosts; host++) {
        for (unsigned p = 0; p < h->planes; p++) {
            uint32_t t0;
            unsigned port;
            if ((f->plane != UINT32_MAX && p != f->plane) ||
                fab_host_attach(h->topo, host, p, &t0, &port) != 0 ||
                (f->sw != FAB_NONE && f->sw != t0)) {
                continue;
            }
            snprintf(name, sizeof(name), "%s:%u", fab_host_name(h->topo, host), p);
            /* the NIC's uplink is seen by its own host only */
            fn(h, nic(h, host, p), name, p, 1, 2, t0, FAB_NONE, user);
        }
    }
}

typedef struct page {
    const ctl_link_filter *f;
    json_object *items;
    uint64_t matched;
    int64_t now;
} page;

static void page_fn(ctl_health *h, link *l, const char *name, unsigned p, unsigned su,
                    unsigned sd, uint32_t t0, uint32_t t1, void *user)
{
    (void)t0;
    (void)t1;
    page *pg = user;
    int st;
    json_object *item = link_item(h, l, name, p, su, sd, pg->now, &st);
    if (pg->f->state && strcmp(pg->f->state, states[st]) != 0) {
        json_object_put(item);
        return;
    }
    if (pg->matched >= pg->f->offset && pg->matched < pg->f->offset + pg->f->limit) {
        json_object_array_add(pg->items, item);
    } else {
        json_object_put(item);
    }
    pg->matched++;
}

json_object *ctl_health_links(ctl_health *h, const ctl_link_filter *f, int64_t now)
{
    page pg = {.f = f, .items = json_object_new_array(), .now = now};
    pthread_mutex_lock(&h->lock);
    refresh(h, now);
    each_link(h, f, page_fn, &pg);
    pthread_mutex_unlock(&h->lock);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "total", json_object_new_int64((int64_t)pg.matched));
    json_object_object_add(j, "offset", json_object_new_int64((int64_t)f->offset));
    json_object_object_add(j, "items", pg.items);
    return j;
}

typedef struct tally {
    uint32_t (*count)[4]; /* per switch, links by state */
    int64_t now;
} tally;

static void tally_fn(ctl_health *h, link *l, const char *name, unsigned p, unsigned su,
                     unsigned sd, uint32_t t0, uint32_t t1, void *user)
{
    (void)name;
    (void)p;
    tally *t = user;
    int st = worst(judge(h, &l->dir[0], t->now, su), judge(h, &l->dir[1], t->now, sd));
    if (t0 != FAB_NONE) {
        t->count[t0][st]++;
    }
    if (t1 != FAB_NONE) {
        t->count[t1][st]++;
    }
}

json_object *ctl_health_switches(ctl_health *h, const ctl_link_filter *f, int64_t now)
{
    uint32_t nsw = fab_topo_nswitches(h->topo);
    tally t = {.count = util_xcalloc(nsw, sizeof(*t.count)), .now = now};
    ctl_link_filter all = *f;
    all.sw = FAB_NONE;
    pthread_mutex_lock(&h->lock);
    refresh(h, now);
    each_link(h, &all, tally_fn, &t);
    pthread_mutex_unlock(&h->lock);
    json_object *items = json_object_new_array();
    uint64_t matched = 0;
    for (uint32_t sw = 0; sw < nsw; sw++) {
        fab_switch s;
        if (fab_switch_get(h->topo, sw, &s) != 0 || (f->plane != UINT32_MAX && s.plane != f->plane) ||
            (f->sw != FAB_NONE && f->sw != sw)) {
            continue;
        }
        uint32_t *c = t.count[sw];
        uint32_t seen = c[ST_OK] + c[ST_DEGRADED] + c[ST_BAD];
        /* many of its links at once point at the switch itself */
        int st = seen == 0                                       ? ST_NODATA
                 : c[ST_BAD] >= 2 && 2 * c[ST_BAD] >= seen       ? ST_BAD
                 : c[ST_BAD] + c[ST_DEGRADED] >= 2 && 2 * (c[ST_BAD] + c[ST_DEGRADED]) >= seen
                     ? ST_DEGRADED
                     : ST_OK;
        if (f->state && strcmp(f->state, states[st]) != 0) {
            continue;
        }
        if (matched >= f->offset && matched < f->offset + f->limit) {
            json_object *j = json_object_new_object();
            json_object_object_add(j, "switch", json_object_new_string(s.name));
            json_object_object_add(j, "plane", json_object_new_int((int)s.plane));
            json_object_object_add(j, "state", json_object_new_string(states[st]));
            json_object *links = json_object_new_object();
            for (int k = 0; k < 4; k++) {
                json_object_object_add(links, states[k], json_object_new_int64(c[k]));
            }
            json_object_object_add(j, "links", links);
            json_object_array_add(items, j);
        }
        matched++;
    }
    free(t.count);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "total", json_object_new_int64((int64_t)matched));
    json_object_object_add(j, "offset", json_object_new_int64((int64_t)f->offset));
    json_object_object_add(j, "items", items);
    return j;
}

json_object *ctl_health_path(ctl_health *h, uint32_t src, uint32_t dst, int64_t now)
{
    json_object *evs = json_object_new_array();
    pthread_mutex_lock(&h->lock);
    refresh(h, now);
    for (unsigned p = 0; p < h->planes; p++) {
        int a = t0_of(h, src, p), b = t0_of(h, dst, p);
        if (a < 0 || b < 0) {
            continue;
        }
        for (unsigned j = 0; j < h->nt1[p] && (a != b || j == 0); j++) {
            char name[200];
            int st, s;
            json_object *ev = json_object_new_object(), *hops = json_object_new_array();
            json_object_object_add(ev, "plane", json_object_new_int((int)p));
            if (a != b) {
                json_object_object_add(ev, "t1", json_object_new_string(sw_name(h, p, FAB_TIER_T1, j)));
                json_object_object_add(ev, "ev", json_object_new_int64(fab_ev_make(h->plan, p, j, 0)));
            }
            snprintf(name, sizeof(name), "%s:%u", fab_host_name(h->topo, src), p);
            json_object_array_add(hops, link_item(h, nic(h, src, p), name, p, 1, 2, now, &st));
            if (a != b) {
                snprintf(name, sizeof(name), "%s~%s", sw_name(h, p, FAB_TIER_T0, (unsigned)a),
                         sw_name(h, p, FAB_TIER_T1, j));
                json_object_array_add(hops, link_item(h, t0t1(h, p, (unsigned)a, j), name, p, 2, 2, now, &s));
                st = worst(st, s);
                snprintf(name, sizeof(name), "%s~%s", sw_name(h, p, FAB_TIER_T0, (unsigned)b),
                         sw_name(h, p, FAB_TIER_T1, j));
                json_object_array_add(hops, link_item(h, t0t1(h, p, (unsigned)b, j), name, p, 2, 2, now, &s));
                st = worst(st, s);
            }
            snprintf(name, sizeof(name), "%s:%u", fab_host_name(h->topo, dst), p);
            json_object_array_add(hops, link_item(h, nic(h, dst, p), name, p, 1, 2, now, &s));
            st = worst(st, s);
            json_object_object_add(ev, "state", json_object_new_string(states[st]));
            json_object_object_add(ev, "hops", hops);
            json_object_array_add(evs, ev);
        }
    }
    pthread_mutex_unlock(&h->lock);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "from", json_object_new_string(fab_host_name(h->topo, src)));
    json_object_object_add(j, "to", json_object_new_string(fab_host_name(h->topo, dst)));
    json_object_object_add(j, "evs", evs);
    return j;
}
