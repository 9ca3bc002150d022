/* SPDX-License-Identifier: MIT */
/* The health engine's insides, shared by its evidence side (ctl_health.c) and its views
 * (ctl_health_view.c). */
#ifndef CTL_HEALTH_INT_H
#define CTL_HEALTH_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl_health.h"
#include "ctl_store.h"
#include "util.h"

#define SOURCES 4               /* distinct reporters remembered per direction */
#define MAX_ENTRIES 4096        /* EVs of one report, results of one probe post */
#define CLS_MAX (1u << 22)      /* lossy class slots at most: 176 MiB */
#define SLICE 8192              /* links judged per hold of the lock in a refresh */
#define HISTORY 64              /* samples kept per element */
#define HISTORY_ELEMENTS 65536  /* elements with a history at most */
#define HISTORY_SAMPLE_MS 10000 /* a sample of an unhealthy element at least this often */

/* The agents' evidence on one direction of a link. */
typedef struct dirstat {
    uint32_t sent[2], lost[2];   /* [0] this half window, [1] the one before */
    uint32_t ncls[2], nlossy[2]; /* report entries that crossed it, and the lossy classes' */
    uint32_t epoch;              /* the half window [0] counts */
    uint16_t bad_evs;
    uint8_t nsrc;
    uint8_t blamed : 1; /* the inference's verdict: its loss is its own */
    uint32_t src[SOURCES];
    int64_t last_ms; /* the latest evidence */
} dirstat;

/* The prober's evidence on one direction: the loss it attributes to the direction itself, for
 * the few directions it names; every other direction of a probed plane carried its plane's
 * coverage without loss. Open addressing by direction index. */
typedef struct pdir {
    uint64_t dir; /* direction index + 1; 0: an empty slot */
    uint32_t epoch;
    uint32_t sent[2], lost[2];
    int64_t last_ms;
} pdir;

/* A probed plane: each direction of a class carried this many probes, per half window. */
typedef struct coverage {
    uint32_t epoch;
    uint32_t nic[2], up[2];
    uint32_t hosts; /* nodes that reported the last window */
    int64_t last_ms;
} coverage;

#define VERDICT_ELEMENTS 16 /* denylist elements of one verdict (an optic group's links) */
#define VERDICTS_MAX 4096   /* verdicts one localizer holds */
#define REPORTERS 16        /* localizers whose verdicts are held */

/* One verdict of a localizer, as it posted it. */
typedef struct hverdict {
    char component[64], kind[12], state[12];
    int64_t since_ms;
    double loss, horizon_s, llr;
    uint64_t lost, sent;
    unsigned nel, nentries;
    char element[VERDICT_ELEMENTS][96];
    char scope[VERDICT_ELEMENTS][8];
    int64_t entries[VERDICT_ELEMENTS];
} hverdict;

/* A localizer's verdicts: the whole set it last posted. */
typedef struct reporter {
    uint32_t id; /* name_hash of its token's name; 0: a free slot */
    char name[64];
    int64_t posted_ms;
    hverdict *v;
    size_t n;
    char *json; /* the set as posted, for the checkpoint */
} reporter;

/* What a set of elements touches, for denied and named marks: (key, index) pairs sorted by
 * key, where a key is a direction index (2 x link + 0 up, 1 down) or SWKEY(sw), and bitmaps of
 * the directions and switches touched (a switch's own links included). */
typedef struct hpair {
    uint64_t key;
    uint32_t idx;
} hpair;

typedef struct hmarks {
    hpair *pairs;
    size_t n;
    uint64_t *dirbits; /* 2 x nall bits */
    uint64_t *swbits;  /* nsw bits */
} hmarks;

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
    atomic_bool ticking; /* the window thread takes the snapshots that cost too much inline */
    uint64_t *has;     /* links with evidence, a bit each */
    uint8_t *st;       /* per link: its state at the snapshot */
    vec64 by_state[4]; /* links in each state but no_data, in index order */
    uint32_t (*sw_count)[4];  /* per switch: its links by state */
    uint32_t (*sw_mcount)[4]; /* ... by the state they measured */
    uint64_t plane_links[16][4], plane_ports[16][4]; /* per plane: links with evidence, by state */
    uint64_t plane_nports[16];                       /* per plane: host ports cabled */
    uint8_t *sw_st;
    uint8_t *dst;      /* per link: each direction's measured state, up | down << 2 */
    uint8_t *sw_mst;   /* per switch: its state from its links alone */
    uint64_t snap_seq;     /* snapshots taken: the views' version */
    /* history */
    ring *rings;
    uint32_t nrings;
    uint32_t *ring_slot; /* open addressing: ring index + 1 */
    uint32_t ring_cap;
    /* the prober's evidence and verdicts (ctl_health_probe.c) */
    pdir *pdirs;
    uint64_t npdirs, pdir_cap;
    coverage cov[16];
    reporter rep[REPORTERS];
    hmarks named; /* keys: verdicts (idx < nvflat) and prober entries in force */
    const hverdict **vflat; /* every reporter's verdicts, flattened for |named| */
    size_t nvflat;
    /* the denylist entries in force (ctl_health_deny.c) */
    ctl_deny *denials;
    size_t ndenials;
    hmarks deny;
    int64_t deny_version;
    int64_t saved_ms; /* history samples up to this time are in the store */
};

/* A reporter's id: FNV-1a of its token's name, never 0. */
static inline uint32_t ctl_health_name_hash(const char *s)
{
    uint32_t x = 2166136261u;
    for (; *s; s++) {
        x = (x ^ (uint8_t)*s) * 16777619u;
    }
    return x | 1;
}

/* Rebuilds the named marks from every localizer's verdicts and the prober's entries in force
 * (with h->lock held for writing). */
void ctl_health_named_rebuild(ctl_health *h);
/* Drops the verdicts of localizers silent for a whole window (h->lock held for writing). */
void ctl_health_named_expire(ctl_health *h, int64_t now);
/* The first verdict naming direction |di| (or its switches), or switch |sw| when |di| is
 * UINT64_MAX; NULL when none does. */
const hverdict *ctl_health_verdict_of(const ctl_health *h, uint64_t di, uint32_t sw);
/* The entries in force paired with any of |keys|, each once, into |out|; how many. */
size_t ctl_health_denied_by(const ctl_health *h, const uint64_t *keys, unsigned nkeys,
                            const ctl_deny **out, size_t max);
/* Entries as the API lists them beside a state: [{id, element, scope, source, reason}]. */
void ctl_health_deny_json(util_buf *b, const ctl_deny *const *v, size_t n);
/* Link |l| (or switch |sw| when |l| is UINT64_MAX) as an item of the problem list: element,
 * kind, plane, state, measured, loss_rate, denied, verdict (h->lock held for reading). */
void ctl_health_element_text(util_buf *b, ctl_health *h, uint64_t l, uint32_t sw, int64_t now);
/* A verdict as the API shows it (null for NULL). */
void ctl_health_verdict_text(util_buf *b, const hverdict *v);
/* A localizer's verdict set as a checkpoint kept it (h->lock held for writing): 0, or
 * -EINVAL when the text is not a set of verdicts of this fabric. */
int ctl_health_verdicts_restore(ctl_health *h, const char *who, const char *json,
                                int64_t posted_ms);
/* A saved lossy class, prober direction or plane's coverage back in place (h->lock held for
 * writing). */
void ctl_health_cls_restore(ctl_health *h, const cls *c, int64_t now);
void ctl_health_pdir_restore(ctl_health *h, const pdir *p, int64_t now);
void ctl_health_cover(ctl_health *h, unsigned plane);
void ctl_health_probe_init(ctl_health *h);
void ctl_health_probe_fini(ctl_health *h);
void ctl_health_deny_fini(ctl_health *h);

/* The key of switch |sw| in an hmarks. */
#define SWKEY(h, sw) (2 * (h)->nall + (sw))

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
    return v;
}

/* The prober's view of a direction as of |now|: its own evidence, or its plane's coverage. */
typedef struct probeview {
    uint64_t sent, lost;
    int64_t last_ms;
    bool own; /* the prober attributed loss to it (not its plane's coverage alone) */
} probeview;

static inline double loss_rate(const dirview *v)
{
    return v->sent ? (double)v->lost / (double)v->sent : 0;
}

/* A direction's state from the agents' evidence (T0-T1 links need |min_sources| reporters). */
int ctl_health_judge(const ctl_health *h, const dirstat *d, int64_t now, unsigned min_sources);
/* A link's loss: the worst of its directions' by each source (agents, prober) on its own. */
double ctl_health_link_loss(const ctl_health *h, uint64_t l, int64_t now);
/* A state from a count of probes sent and lost on one element: its own loss. */
int ctl_health_judge_own(uint64_t sent, uint64_t lost, unsigned bad_evs);
/* Direction |di|'s measured state: the worst of the agents' and the prober's. */
int ctl_health_measured(const ctl_health *h, uint64_t di, int64_t now);
/* The prober's view of direction |di| (ctl_health_probe.c). */
probeview ctl_health_probe_view(const ctl_health *h, uint64_t di, int64_t now);
/* The state the prober's verdicts and entries name direction |di| (or switch |sw| when |di|
 * is UINT64_MAX) with: ST_NODATA when nothing names it. */
int ctl_health_named(const ctl_health *h, uint64_t di, uint32_t sw);
/* Whether an hmarks touches direction |di| / switch |sw|. */
bool ctl_hmarks_dir(const hmarks *m, uint64_t di);
bool ctl_hmarks_sw(const hmarks *m, uint32_t sw);
/* The indexes paired with |key| in |m|: the first at *pfirst, how many returned. */
size_t ctl_hmarks_find(const hmarks *m, uint64_t key, size_t *pfirst);
void ctl_hmarks_free(hmarks *m);
/* Marks element |el| in |dirs| (FAB_DIR_*) with index |idx| into a set being built. */
void ctl_hmarks_add(const ctl_health *h, hmarks *m, size_t *pcap, const fab_element *el,
                    unsigned dirs, uint32_t idx);
/* Sorts a built set's pairs. */
void ctl_hmarks_done(hmarks *m);
/* The directions of switch |sw|'s links, each passed to |fn|. */
void ctl_health_switch_dirs(const ctl_health *h, uint32_t sw, void (*fn)(void *, uint64_t),
                            void *user);
/* Link index of T0 |a| and T1 |j| of plane |p|. */
static inline uint64_t t0t1_index(const ctl_health *h, unsigned p, unsigned a, unsigned j)
{
    return h->base[p] + (uint64_t)a * h->nt1[p] + j;
}
/* Refreshes the snapshot if it is due (call without the lock). */
void ctl_health_fresh(ctl_health *h, int64_t now);
/* The history ring of element |id|, made if |make| and there is room, or NULL. */
ring *ctl_health_ring(ctl_health *h, uint64_t id, bool make);
/* Link |l|'s plane, and its T0 and T1 indexes (a T0-T1 link) or host (a host port). */
void ctl_health_where(const ctl_health *h, uint64_t l, unsigned *pp, unsigned *pa, unsigned *pj,
                      uint32_t *phost);

#endif
