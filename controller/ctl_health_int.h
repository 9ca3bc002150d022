/* SPDX-License-Identifier: MIT */
/* The health engine's insides, shared by its evidence side (ctl_health.c) and its views
 * (ctl_health_view.c). */
#ifndef CTL_HEALTH_INT_H
#define CTL_HEALTH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl_health.h"
#include "util.h"

#define SOURCES 4               /* distinct reporters remembered per direction */
#define MAX_ENTRIES 4096        /* EVs of one report, results of one probe post */
#define CLS_MAX (1u << 22)      /* lossy class slots at most: 176 MiB */
#define SLICE 8192              /* links judged per hold of the lock in a refresh */
#define HISTORY 64              /* samples kept per element */
#define HISTORY_ELEMENTS 65536  /* elements with a history at most */
#define HISTORY_SAMPLE_MS 10000 /* a sample of an unhealthy element at least this often */

typedef struct dirstat {
    uint32_t sent[2], lost[2];   /* [0] this half window, [1] the one before */
    uint32_t ncls[2], nlossy[2]; /* report entries that crossed it, and the lossy classes' */
    uint32_t epoch;              /* the half window [0] counts */
    uint16_t bad_evs;
    uint8_t nsrc;
    uint8_t probed : 1; /* a prober measured it by name: no correlation needed */
    uint8_t blamed : 1; /* the inference's verdict: its loss is its own */
    uint32_t src[SOURCES];
    int64_t last_ms; /* the latest evidence */
} dirstat;

/* Evidence per class of paths that lost, for the inference: one source host, one
 * destination host, one plane and T1 (nt1: the T0-local path). Open addressing on a hash of
 * the four; stale entries go when the table grows. */
typedef struct cls {
    uint32_t src, dst; /* host + 1; src 0: empty */
    uint16_t j;
    uint8_t p;
    uint32_t epoch;
    uint32_t lossy_epoch; /* half + 1 it was last counted lossy in */
    uint32_t mark;        /* the inference that last took it */
    uint32_t sent[2], lost[2];
    uint16_t bad;
} cls;

typedef struct link {
    dirstat dir[2]; /* up: toward the T1 (from the NIC toward its T0); down: the reverse */
} link;

typedef struct key {
    uint32_t src, dst;
    uint16_t j;
    uint8_t p;
} key;

typedef struct sample {
    int64_t ms;
    float loss;
    uint8_t state;
} sample;

typedef struct ring {
    uint64_t id; /* element: link index, or nlinks_all + switch */
    uint32_t n, head;
    int64_t last_ms;
    sample s[HISTORY];
} ring;

typedef struct vec64 {
    uint64_t *v;
    size_t n, cap;
} vec64;

struct ctl_health {
    const fab_topo *topo;
    const fab_plan *plan;
    unsigned planes;
    uint32_t nhosts, nsw;
    uint64_t half_ms;
    uint32_t nt0[16], nt1[16];
    uint64_t base[16]; /* first T0-T1 link of each plane */
    uint64_t nlinks;   /* T0-T1 links; host ports follow, plane by plane */
    uint64_t nall;     /* every link */
    link *links;
    uint16_t *hp_t0;
    vec64 missing;
        /* host ports not cabled, by link index */ /* T0 index of host port (plane-major),
                                                      UINT16_MAX: not cabled */
    pthread_rwlock_t lock; /* evidence and snapshot: reports and refreshes write, views read */
    pthread_mutex_t refresh_lock;
    uint64_t ingested;
    bool dirty; /* evidence since the snapshot */
    cls *cls;
    uint64_t ncls, cls_cap;
    uint32_t cls_swept; /* half + 1 of the last sweep at the cap */
    key *lossy_keys;    /* classes that turned lossy, for the inference */
    size_t nlossy_keys, lossy_cap;
    uint32_t seq;
    uint32_t *cand_n; /* per direction: lossy classes not yet explained */
    vec64 cand, blamed;
    /* the snapshot */
    int64_t snap_ms;
    double cost_ms;
    uint64_t *has;     /* links with evidence, a bit each */
    uint8_t *st;       /* per link: its state at the snapshot */
    vec64 by_state[4]; /* links in each state but no_data, in index order */
    uint32_t (*sw_count)[4];
    uint8_t *sw_st;
    /* history */
    ring *rings;
    uint32_t nrings;
    uint32_t *ring_slot; /* open addressing: ring index + 1 */
    uint32_t ring_cap;
};

static const char *const states[] = {"no_data", "ok", "degraded", "bad"};
enum { ST_NODATA, ST_OK, ST_DEGRADED, ST_BAD };

static inline void vec_push(vec64 *v, uint64_t x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        v->v = util_xrealloc(v->v, v->cap * sizeof(*v->v));
    }
    v->v[v->n++] = x;
}

static inline int worst(int a, int b)
{
    return a > b ? a : b;
}

static inline uint64_t nic_index(const ctl_health *h, uint32_t host, unsigned p)
{
    return h->nlinks + (uint64_t)p * h->nhosts + host;
}

static inline int t0_of(const ctl_health *h, uint32_t host, unsigned p)
{
    uint16_t a = h->hp_t0[(uint64_t)p * h->nhosts + host];
    return a == UINT16_MAX ? -1 : a;
}

/* Whether link |l| exists: a host port must be cabled. */
static inline bool link_exists(const ctl_health *h, uint64_t l)
{
    return l < h->nlinks || h->hp_t0[l - h->nlinks] != UINT16_MAX;
}

/* A direction's evidence as of |now|, without aging it in place: views read it under the
 * read lock. */
typedef struct dirview {
    uint64_t sent, lost;
    uint32_t ncls, nlossy, bad_evs, nsrc;
    bool probed;
} dirview;

static inline dirview dir_view(const ctl_health *h, const dirstat *d, int64_t now)
{
    uint32_t e = (uint32_t)((uint64_t)now / h->half_ms);
    dirview v = {0};
    if (d->epoch == e) {
        v.sent = (uint64_t)d->sent[0] + d->sent[1];
        v.lost = (uint64_t)d->lost[0] + d->lost[1];
        v.ncls = d->ncls[0] + d->ncls[1];
        v.nlossy = d->nlossy[0] + d->nlossy[1];
    } else if (d->epoch + 1 == e) { /* its [0] is the half before now */
        v.sent = d->sent[0];
        v.lost = d->lost[0];
        v.ncls = d->ncls[0];
        v.nlossy = d->nlossy[0];
    } else {
        return v;
    }
    v.bad_evs = d->bad_evs;
    v.nsrc = d->nsrc;
    v.probed = d->probed;
    return v;
}

static inline double loss_rate(const dirview *v)
{
    return v->sent ? (double)v->lost / (double)v->sent : 0;
}

/* A direction's state from its evidence (T0-T1 links need |min_sources| reporters). */
int ctl_health_judge(const ctl_health *h, const dirstat *d, int64_t now, unsigned min_sources);
/* Refreshes the snapshot if it is due (call without the lock). */
void ctl_health_fresh(ctl_health *h, int64_t now);
/* The history ring of element |id|, made if |make| and there is room, or NULL. */
ring *ctl_health_ring(ctl_health *h, uint64_t id, bool make);
/* Link |l|'s plane, and its T0 and T1 indexes (a T0-T1 link) or host (a host port). */
void ctl_health_where(const ctl_health *h, uint64_t l, unsigned *pp, unsigned *pa, unsigned *pj,
                      uint32_t *phost);

#endif
