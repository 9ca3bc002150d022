/* SPDX-License-Identifier: MIT */
/* The agent's periodic report: the engine's counters per peer and per EV since the last
 * committed report, ranked, bounded and written as JSON text. */
#include "agent_report.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A QP's counters that go into its peer's totals. */
enum {
    PC_PKTS,
    PC_BYTES,
    PC_RETX,
    PC_SACKS,
    PC_NACK0,
    PC_TIMEOUTS = PC_NACK0 + MRC_NACK_REASONS,
    PC_ECN,
    PC_RCVD, /* data packets received: how busy the peer is, not reported */
    PC_N,
};

/* An EV's counters, in the order and with the names of the report. */
enum {
    EC_SENT,
    EC_LOST,
    EC_RETX,
    EC_ACKED,
    EC_TIMEOUTS,
    EC_ECN,
    EC_TRIMS,
    EC_TRANSITIONS,
    EC_PROBES_SENT,
    EC_PROBES_OK,
    EC_N,
};

static const char *const ec_names[EC_N] = {"sent",        "lost",     "retx",  "acked",
                                           "timeouts",    "ecn",      "trims", "transitions",
                                           "probes_sent", "probes_ok"};
static const char *const state_names[4] = {"good", "skip", "assumed_bad", "denied"};
static const char *const reason_names[] = {"ecn",      "trim", "always_skip", "timeout", "rotation",
                                           "probe_ok", "deny", "allow",       "loss"};
#define NREASONS (sizeof(reason_names) / sizeof(reason_names[0]))

typedef struct evsnap {
    uint32_t ev;
    uint8_t port, state;
    uint64_t c[EC_N];
    uint64_t rtt;
} evsnap;

/* A QP's totals at one moment. */
typedef struct snap {
    uint64_t c[PC_N];
    uint32_t states[4];
    evsnap *ev;
    unsigned nev, cap;
} snap;

typedef struct rqp {
    mrc_qp *qp; /* NULL once removed: |fin| holds its last totals */
    uint32_t qpn, peer;
    bool staged;      /* read by the last build */
    bool gone_staged; /* ... after it was removed: the commit drops it */
    snap prev;        /* at the last committed report */
    snap stage;       /* at the last build */
    snap fin;
} rqp;

typedef struct rpeer {
    char name[FAB_NAME_MAX];
    unsigned nqps; /* live QPs */
    unsigned refs; /* QPs held, live or removed */
    /* one build's sums */
    uint64_t d[PC_N];
    uint64_t states[4];
} rpeer;

typedef struct rtrans {
    uint64_t seq, time;
    uint32_t ev;
    uint8_t from, to, reason;
    char peer[FAB_NAME_MAX];
} rtrans;

/* A candidate EV row of one build: one QP's EV, then one peer's EV once merged. */
typedef struct row {
    uint32_t peer, ev;
    uint8_t port, state;
    uint64_t c[EC_N];
    uint64_t rtt;
} row;

/* A peer with its traffic, for ranking. */
typedef struct busy {
    uint64_t pkts;
    uint32_t idx;
} busy;

struct agent_report {
    char host[FAB_NAME_MAX];
    unsigned interval_s, max_peers, max_evs, max_tr;
    size_t max_bytes;
    agent_report_path_fn path;
    void *user;
    const mrc_context *ctx;

    rqp **qps;
    size_t nqps, capqps;
    uint32_t *qpmap; /* open addressing by QPN: index into |qps| + 1, 0 empty */
    size_t qpmap_cap;

    rpeer *peers;
    size_t npeers, cappeers;
    uint32_t *peermap; /* open addressing by name: index into |peers| + 1 */
    size_t peermap_cap;

    rtrans *ring; /* max_tr entries, oldest at |ring_head| */
    unsigned ring_head, ring_n;
    uint64_t seq_next;
    uint64_t dropped;        /* transitions pushed out of the ring before a report had them */
    uint64_t dropped_staged; /* ... of which the last build counted */
    uint64_t seq_staged;     /* the last build had the transitions below this */

    uint64_t ctx_dropped_prev, ctx_dropped_stage;
    uint64_t floor_peers, floor_evs, floor_entered; /* agent_report_set_floor */
    bool built, committed_once;
    uint64_t wall_staged, wall_prev;

    row *rows; /* scratch of a build */
    size_t caprows;
    busy *porder;
    size_t capporder;
    util_buf scratch;
};

static void errf(char *errmsg, size_t errmsglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void errf(char *errmsg, size_t errmsglen, const char *fmt, ...)
{
    if (!errmsg || !errmsglen) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, errmsglen, fmt, ap);
    va_end(ap);
}

/* Names go into the JSON text unescaped: the fabric's own rule keeps them safe. */
static bool name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= FAB_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
            return false;
        }
    }
    return true;
}

static bool path_ok(const char *s)
{
    size_t n = strnlen(s, AGENT_REPORT_PATH_MAX);
    if (n == 0 || n >= AGENT_REPORT_PATH_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '!' || s[i] > '~' || s[i] == '"' || s[i] == '\\') {
            return false;
        }
    }
    return true;
}

static uint32_t hash32(uint32_t v)
{
    v ^= v >> 16;
    v *= 0x7feb352du;
    v ^= v >> 15;
    v *= 0x846ca68bu;
    v ^= v >> 16;
    return v;
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n) {
        c *= 2;
    }
    return c;
}

/* ---- snapshots ---- */

static void snap_reserve(snap *s, unsigned n)
{
    if (n > s->cap) {
        s->ev = util_xrealloc(s->ev, n * sizeof(evsnap));
        s->cap = n;
    }
}

static void snap_read(snap *s, const mrc_qp *qp)
{
    mrc_qp_stats st;
    mrc_qp_get_stats(qp, &st);
    s->c[PC_PKTS] = st.data_pkts_sent;
    s->c[PC_BYTES] = st.data_bytes_sent;
    s->c[PC_RETX] = st.retx_pkts;
    s->c[PC_SACKS] = st.sacks_rcvd;
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        s->c[PC_NACK0 + i] = st.nacks_rcvd[i];
    }
    s->c[PC_TIMEOUTS] = st.timeouts;
    s->c[PC_ECN] = st.ecn_echoes;
    s->c[PC_RCVD] = st.data_pkts_rcvd;
    memcpy(s->states, st.ev_count, sizeof(s->states));
    unsigned n = mrc_qp_ev_count(qp);
    snap_reserve(s, n);
    s->nev = 0;
    for (unsigned i = 0; i < n; i++) {
        mrc_ev_stats es;
        if (mrc_qp_get_ev_stats(qp, i, &es) != 0) {
            break;
        }
        evsnap *e = &s->ev[s->nev++];
        e->ev = es.ev;
        e->port = es.port;
        e->state = es.state < 4 ? es.state : MRC_EV_GOOD;
        e->c[EC_SENT] = es.pkts_sent;
        e->c[EC_LOST] = es.lost + es.timeouts;
        e->c[EC_RETX] = es.retx_sent;
        e->c[EC_ACKED] = es.acked;
        e->c[EC_TIMEOUTS] = es.timeouts;
        e->c[EC_ECN] = es.ecn;
        e->c[EC_TRIMS] = es.trims;
        e->c[EC_TRANSITIONS] = es.transitions;
        e->c[EC_PROBES_SENT] = es.probes_sent;
        e->c[EC_PROBES_OK] = es.probes_ok;
        e->rtt = es.last_rtt_ns;
    }
}

static void snap_copy(snap *dst, const snap *src)
{
    memcpy(dst->c, src->c, sizeof(dst->c));
    memcpy(dst->states, src->states, sizeof(dst->states));
    snap_reserve(dst, src->nev);
    if (src->nev) {
        memcpy(dst->ev, src->ev, src->nev * sizeof(evsnap));
    }
    dst->nev = src->nev;
}

static void snap_swap(snap *a, snap *b)
{
    snap t = *a;
    *a = *b;
    *b = t;
}

static void snap_fini(snap *s)
{
    free(s->ev);
    memset(s, 0, sizeof(*s));
}

/* A counter that went down was reset (the QP went through RESET): all of it is new. */
static uint64_t delta(uint64_t cur, uint64_t prev)
{
    return cur >= prev ? cur - prev : cur;
}

/* ---- QP and peer tables ---- */

static void qpmap_insert(agent_report *r, size_t idx)
{
    size_t mask = r->qpmap_cap - 1;
    for (size_t i = hash32(r->qps[idx]->qpn) & mask;; i = (i + 1) & mask) {
        if (!r->qpmap[i]) {
            r->qpmap[i] = (uint32_t)(idx + 1);
            return;
        }
    }
}

static void qpmap_rebuild(agent_report *r)
{
    size_t cap = pow2_at_least(2 * r->nqps + 2);
    if (cap != r->qpmap_cap) {
        free(r->qpmap);
        r->qpmap = util_xcalloc(cap, sizeof(uint32_t));
        r->qpmap_cap = cap;
    } else {
        memset(r->qpmap, 0, cap * sizeof(uint32_t));
    }
    for (size_t i = 0; i < r->nqps; i++) {
        qpmap_insert(r, i);
    }
}

/* The QP numbered |qpn|: the live one if there is one (a removed QP's number may be reused
 * before the commit drops it), else the removed one; NULL if none. */
static rqp *qp_by_num(const agent_report *r, uint32_t qpn)
{
    if (!r->qpmap_cap) {
        return NULL;
    }
    size_t mask = r->qpmap_cap - 1;
    rqp *gone = NULL;
    for (size_t i = hash32(qpn) & mask; r->qpmap[i]; i = (i + 1) & mask) {
        rqp *q = r->qps[r->qpmap[i] - 1];
        if (q->qpn == qpn) {
            if (q->qp) {
                return q;
            }
            gone = q;
        }
    }
    return gone;
}

static void peermap_insert(agent_report *r, size_t idx)
{
    size_t mask = r->peermap_cap - 1;
    for (size_t i = hash_name(r->peers[idx].name) & mask;; i = (i + 1) & mask) {
        if (!r->peermap[i]) {
            r->peermap[i] = (uint32_t)(idx + 1);
            return;
        }
    }
}

static void peermap_rebuild(agent_report *r)
{
    size_t cap = pow2_at_least(2 * r->npeers + 2);
    if (cap != r->peermap_cap) {
        free(r->peermap);
        r->peermap = util_xcalloc(cap, sizeof(uint32_t));
        r->peermap_cap = cap;
    } else {
        memset(r->peermap, 0, cap * sizeof(uint32_t));
    }
    for (size_t i = 0; i < r->npeers; i++) {
        peermap_insert(r, i);
    }
}

static uint32_t peer_get(agent_report *r, const char *name)
{
    if (r->peermap_cap) {
        size_t mask = r->peermap_cap - 1;
        for (size_t i = hash_name(name) & mask; r->peermap[i]; i = (i + 1) & mask) {
            uint32_t k = r->peermap[i] - 1;
            if (strcmp(r->peers[k].name, name) == 0) {
                return k;
            }
        }
    }
    if (r->npeers == r->cappeers) {
        r->cappeers = r->cappeers ? 2 * r->cappeers : 16;
        r->peers = util_xrealloc(r->peers, r->cappeers * sizeof(rpeer));
    }
    rpeer *p = &r->peers[r->npeers];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    r->npeers++;
    if (2 * r->npeers + 2 > r->peermap_cap) {
        peermap_rebuild(r);
    } else {
        peermap_insert(r, r->npeers - 1);
    }
    return (uint32_t)(r->npeers - 1);
}

static void qp_release(rqp *q)
{
    snap_fini(&q->prev);
    snap_fini(&q->stage);
    snap_fini(&q->fin);
    free(q);
}

/* ---- rendering ---- */

static const char *state_name(unsigned s)
{
    return s < 4 ? state_names[s] : "unknown";
}

static const char *reason_name(unsigned r)
{
    return r < NREASONS ? reason_names[r] : "unknown";
}

static void put_head(util_buf *b, const char *host, uint64_t interval_s, const char *time)
{
    util_buf_printf(b, "{\"host\":\"%s\",\"interval_s\":%" PRIu64 ",\"time\":\"%s\",\"evs\":[",
                    host, interval_s, time);
}

static void put_ev(util_buf *b, const row *w, const char *peer, const char *path)
{
    util_buf_printf(b, "{\"peer\":\"%s\",\"ev\":%" PRIu32, peer, w->ev);
    if (path) {
        util_buf_printf(b, ",\"path\":\"%s\"", path);
    }
    util_buf_printf(b, ",\"state\":\"%s\"", state_name(w->state));
    for (int k = 0; k < EC_N; k++) {
        util_buf_printf(b, ",\"%s\":%" PRIu64, ec_names[k], w->c[k]);
    }
    if (w->rtt) {
        util_buf_printf(b, ",\"rtt_ns\":%" PRIu64, w->rtt);
    }
    util_buf_put(b, "}", 1);
}

static void put_peer(util_buf *b, const rpeer *p)
{
    util_buf_printf(b,
                    "{\"peer\":\"%s\",\"qps\":%u,\"data_pkts_sent\":%" PRIu64
                    ",\"data_bytes_sent\":%" PRIu64 ",\"retx_pkts\":%" PRIu64
                    ",\"sacks_rcvd\":%" PRIu64 ",\"nacks_rcvd\":{",
                    p->name, p->nqps, p->d[PC_PKTS], p->d[PC_BYTES], p->d[PC_RETX], p->d[PC_SACKS]);
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        util_buf_printf(b, "%s\"%s\":%" PRIu64, i ? "," : "", mrc_nack_name(i), p->d[PC_NACK0 + i]);
    }
    util_buf_printf(b, "},\"timeouts\":%" PRIu64 ",\"ecn_echoes\":%" PRIu64 ",\"ev_states\":{",
                    p->d[PC_TIMEOUTS], p->d[PC_ECN]);
    for (int s = 0; s < 4; s++) {
        util_buf_printf(b, "%s\"%s\":%" PRIu64, s ? "," : "", state_names[s], p->states[s]);
    }
    util_buf_put(b, "}}", 2);
}

static void put_tr(util_buf *b, const rtrans *t)
{
    util_buf_printf(b,
                    "{\"time\":%" PRIu64 ",\"peer\":\"%s\",\"ev\":%" PRIu32
                    ",\"from\":\"%s\",\"to\":\"%s\",\"reason\":\"%s\"}",
                    t->time, t->peer, t->ev, state_name(t->from), state_name(t->to),
                    reason_name(t->reason));
}

static void put_truncated(util_buf *b, uint64_t peers, uint64_t evs, uint64_t trs)
{
    util_buf_printf(
        b, ",\"truncated\":{\"peers\":%" PRIu64 ",\"evs\":%" PRIu64 ",\"transitions\":%" PRIu64 "}",
        peers, evs, trs);
}

static void put_floor(util_buf *b, uint64_t peers, uint64_t evs, uint64_t entered)
{
    util_buf_printf(
        b, ",\"deny_floor\":{\"peers\":%" PRIu64 ",\"evs\":%" PRIu64 ",\"entered\":%" PRIu64 "}",
        peers, evs, entered);
}

static const char peers_open[] = ",\"peers\":[";
static const char trs_open[] = ",\"transitions\":[";

/* The most that can follow the row being written: every section's closing and the opening of
 * the later ones, a "truncated" with the largest counts, the final brace. Keeping this much
 * room while rows are added is what makes max_bytes hold. */
static size_t tail_max(void)
{
    util_buf b = {0};
    put_truncated(&b, UINT64_MAX, UINT64_MAX, UINT64_MAX);
    put_floor(&b, UINT64_MAX, UINT64_MAX, UINT64_MAX);
    size_t n = b.len + 1 + (sizeof(peers_open) - 1) + 1 + (sizeof(trs_open) - 1) + 1 + 1;
    free(b.s);
    return n;
}

/* The largest rows; |host| may be NULL (then the longest name). */
static void worst_sizes(const char *host, size_t *head, size_t *ev, size_t *peer, size_t *tr)
{
    char name[FAB_NAME_MAX], path[AGENT_REPORT_PATH_MAX];
    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    memset(path, 'x', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    util_buf b = {0};
    put_head(&b, host ? host : name, UINT64_MAX, "2026-11-30T18:00:00Z");
    *head = b.len;
    b.len = 0;
    row w = {.ev = UINT32_MAX, .state = MRC_EV_ASSUMED_BAD, .rtt = UINT64_MAX};
    for (int k = 0; k < EC_N; k++) {
        w.c[k] = UINT64_MAX;
    }
    put_ev(&b, &w, name, path);
    *ev = b.len;
    b.len = 0;
    rpeer p;
    memset(&p, 0, sizeof(p));
    memcpy(p.name, name, sizeof(name));
    p.nqps = UINT_MAX;
    for (int k = 0; k < PC_N; k++) {
        p.d[k] = UINT64_MAX;
    }
    for (int s = 0; s < 4; s++) {
        p.states[s] = UINT64_MAX;
    }
    put_peer(&b, &p);
    *peer = b.len;
    b.len = 0;
    rtrans t = {.time = UINT64_MAX,
                .ev = UINT32_MAX,
                .from = MRC_EV_ASSUMED_BAD,
                .to = MRC_EV_ASSUMED_BAD,
                .reason = MRC_EVR_ALWAYS_SKIP};
    memcpy(t.peer, name, sizeof(name));
    put_tr(&b, &t);
    *tr = b.len;
    free(b.s);
}

/* n rows of |each| bytes with commas between them */
static size_t rows_size(size_t n, size_t each)
{
    return n ? n * each + (n - 1) : 0;
}

size_t agent_report_max_size(const agent_report_cfg *cfg)
{
    size_t head, ev, peer, tr;
    unsigned np = cfg->max_peers ? cfg->max_peers : AGENT_REPORT_DEFAULT_PEERS;
    unsigned ne = cfg->max_evs ? cfg->max_evs : AGENT_REPORT_DEFAULT_EVS;
    unsigned nt = cfg->max_transitions ? cfg->max_transitions : AGENT_REPORT_DEFAULT_TRANSITIONS;
    worst_sizes(name_ok(cfg->host) ? cfg->host : NULL, &head, &ev, &peer, &tr);
    size_t n = head + rows_size(ne, ev) + rows_size(np, peer) + rows_size(nt, tr) + tail_max();
    return cfg->max_bytes && cfg->max_bytes < n ? cfg->max_bytes : n;
}

/* ---- lifecycle ---- */

int agent_report_new(const agent_report_cfg *cfg, agent_report **prep, char *errmsg,
                     size_t errmsglen)
{
    if (!cfg || !prep) {
        errf(errmsg, errmsglen, "no report settings");
        return -EINVAL;
    }
    if (!name_ok(cfg->host)) {
        errf(errmsg, errmsglen,
             "host '%.80s' is not a valid name (1-%d characters of A-Z a-z 0-9 . _ -)",
             cfg->host ? cfg->host : "", FAB_NAME_MAX - 1);
        return -EINVAL;
    }
    if (cfg->max_bytes) {
        size_t head, ev, peer, tr;
        worst_sizes(cfg->host, &head, &ev, &peer, &tr);
        if (cfg->max_bytes < head + tail_max()) {
            errf(errmsg, errmsglen,
                 "max_bytes %zu is below the smallest report of host '%s' (%zu bytes)",
                 cfg->max_bytes, cfg->host, head + tail_max());
            return -EINVAL;
        }
    }
    agent_report *r = util_xcalloc(1, sizeof(*r));
    snprintf(r->host, sizeof(r->host), "%s", cfg->host);
    r->interval_s = cfg->interval_s ? cfg->interval_s : 10;
    r->max_peers = cfg->max_peers ? cfg->max_peers : AGENT_REPORT_DEFAULT_PEERS;
    r->max_evs = cfg->max_evs ? cfg->max_evs : AGENT_REPORT_DEFAULT_EVS;
    r->max_tr = cfg->max_transitions ? cfg->max_transitions : AGENT_REPORT_DEFAULT_TRANSITIONS;
    r->max_bytes = cfg->max_bytes;
    r->path = cfg->path;
    r->user = cfg->user;
    r->ctx = cfg->ctx;
    r->ring = util_xcalloc(r->max_tr, sizeof(rtrans));
    if (r->ctx) {
        mrc_ctx_stats cs;
        mrc_ctx_get_stats(r->ctx, &cs);
        r->ctx_dropped_prev = r->ctx_dropped_stage = cs.ev_events_dropped;
    }
    *prep = r;
    return 0;
}

void agent_report_free(agent_report *r)
{
    if (!r) {
        return;
    }
    for (size_t i = 0; i < r->nqps; i++) {
        qp_release(r->qps[i]);
    }
    free(r->qps);
    free(r->qpmap);
    free(r->peers);
    free(r->peermap);
    free(r->ring);
    free(r->rows);
    free(r->porder);
    free(r->scratch.s);
    free(r);
}

int agent_report_qp_add(agent_report *r, mrc_qp *qp, const char *peer, char *errmsg,
                        size_t errmsglen)
{
    if (!r || !qp) {
        errf(errmsg, errmsglen, "no QP");
        return -EINVAL;
    }
    if (!name_ok(peer)) {
        errf(errmsg, errmsglen,
             "peer '%.80s' is not a valid name (1-%d characters of A-Z a-z 0-9 . _ -)",
             peer ? peer : "", FAB_NAME_MAX - 1);
        return -EINVAL;
    }
    uint32_t qpn = mrc_qp_num(qp);
    rqp *old = qp_by_num(r, qpn);
    if (old && old->qp) {
        errf(errmsg, errmsglen, "QP %" PRIu32 " is already reported", qpn);
        return -EEXIST;
    }
    rqp *q = util_xcalloc(1, sizeof(*q));
    q->qp = qp;
    q->qpn = qpn;
    q->peer = peer_get(r, peer);
    r->peers[q->peer].nqps++;
    r->peers[q->peer].refs++;
    /* what it did before it was added is no news of this agent's */
    snap_read(&q->prev, qp);
    if (r->nqps == r->capqps) {
        r->capqps = r->capqps ? 2 * r->capqps : 16;
        r->qps = util_xrealloc(r->qps, r->capqps * sizeof(rqp *));
    }
    r->qps[r->nqps++] = q;
    if (2 * r->nqps + 2 > r->qpmap_cap) {
        qpmap_rebuild(r);
    } else {
        qpmap_insert(r, r->nqps - 1);
    }
    return 0;
}

int agent_report_qp_remove(agent_report *r, mrc_qp *qp)
{
    if (!r || !qp) {
        return -ENOENT;
    }
    rqp *q = qp_by_num(r, mrc_qp_num(qp));
    if (!q || q->qp != qp) {
        return -ENOENT;
    }
    snap_read(&q->fin, qp);
    q->qp = NULL;
    r->peers[q->peer].nqps--;
    return 0;
}

void agent_report_ev_event(agent_report *r, const mrc_ev_event *e)
{
    if (!r || !e) {
        return;
    }
    const rqp *q = qp_by_num(r, e->qpn);
    if (!q) {
        return;
    }
    if (r->ring_n == r->max_tr) {
        /* the oldest goes; it is news lost unless the report being delivered had it */
        const rtrans *old = &r->ring[r->ring_head];
        if (!(r->built && old->seq < r->seq_staged)) {
            r->dropped++;
        }
        r->ring_head = (r->ring_head + 1) % r->max_tr;
        r->ring_n--;
    }
    rtrans *t = &r->ring[(r->ring_head + r->ring_n) % r->max_tr];
    t->seq = r->seq_next++;
    t->time = e->time;
    t->ev = e->ev;
    t->from = e->old_state;
    t->to = e->new_state;
    t->reason = e->reason;
    memcpy(t->peer, r->peers[q->peer].name, sizeof(t->peer));
    r->ring_n++;
}

/* ---- building ---- */

static void push_row(agent_report *r, size_t *n, const row *w)
{
    if (*n == r->caprows) {
        r->caprows = r->caprows ? 2 * r->caprows : 1024;
        r->rows = util_xrealloc(r->rows, r->caprows * sizeof(row));
    }
    r->rows[(*n)++] = *w;
}

static int cmp_key(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->peer != y->peer) {
        return x->peer < y->peer ? -1 : 1;
    }
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static double loss_rate(const row *w)
{
    uint64_t den = w->c[EC_SENT] > w->c[EC_LOST] ? w->c[EC_SENT] : w->c[EC_LOST];
    return den ? (double)w->c[EC_LOST] / (double)den : 0.0;
}

/* Worst first: not GOOD, then the loss rate, the lost count, the traffic; then a fixed order. */
static int cmp_worst(const void *a, const void *b)
{
    const row *x = a, *y = b;
    bool xb = x->state != MRC_EV_GOOD, yb = y->state != MRC_EV_GOOD;
    if (xb != yb) {
        return xb ? -1 : 1;
    }
    double rx = loss_rate(x), ry = loss_rate(y);
    if (rx != ry) {
        return rx > ry ? -1 : 1;
    }
    if (x->c[EC_LOST] != y->c[EC_LOST]) {
        return x->c[EC_LOST] > y->c[EC_LOST] ? -1 : 1;
    }
    if (x->c[EC_SENT] != y->c[EC_SENT]) {
        return x->c[EC_SENT] > y->c[EC_SENT] ? -1 : 1;
    }
    return cmp_key(a, b);
}

static int cmp_busy(const void *a, const void *b)
{
    const busy *x = a, *y = b;
    if (x->pkts != y->pkts) {
        return x->pkts > y->pkts ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Reads every QP into its stage and writes its candidate EV rows; returns how many. */
static size_t stage_all(agent_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->npeers; i++) {
        memset(r->peers[i].d, 0, sizeof(r->peers[i].d));
        memset(r->peers[i].states, 0, sizeof(r->peers[i].states));
    }
    for (size_t i = 0; i < r->nqps; i++) {
        rqp *q = r->qps[i];
        if (q->qp) {
            snap_read(&q->stage, q->qp);
        } else {
            snap_copy(&q->stage, &q->fin);
        }
        q->staged = true;
        q->gone_staged = !q->qp;
        rpeer *p = &r->peers[q->peer];
        for (int k = 0; k < PC_N; k++) {
            p->d[k] += delta(q->stage.c[k], q->prev.c[k]);
        }
        if (q->qp) {
            for (int s = 0; s < 4; s++) {
                p->states[s] += q->stage.states[s];
            }
        }
        for (unsigned j = 0; j < q->stage.nev; j++) {
            const evsnap *e = &q->stage.ev[j];
            /* the EV set is fixed while the QP lives; another set (a new profile after a
             * RESET) starts from zero */
            const evsnap *pe = j < q->prev.nev && q->prev.ev[j].ev == e->ev ? &q->prev.ev[j] : NULL;
            row w = {.peer = q->peer, .ev = e->ev, .port = e->port, .state = e->state};
            bool moved = false;
            for (int k = 0; k < EC_N; k++) {
                w.c[k] = pe ? delta(e->c[k], pe->c[k]) : e->c[k];
                moved |= w.c[k] != 0;
            }
            w.rtt = moved ? e->rtt : 0;
            bool out = q->qp && (e->state == MRC_EV_SKIP || e->state == MRC_EV_ASSUMED_BAD);
            if (moved || out) {
                push_row(r, &n, &w);
            }
        }
    }
    return n;
}

/* Adds up the rows of one peer's EV over its QPs; returns how many rows are left. */
static size_t merge_rows(row *rows, size_t n)
{
    if (n == 0) {
        return 0;
    }
    qsort(rows, n, sizeof(row), cmp_key);
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        row *m = &rows[w];
        if (rows[i].peer == m->peer && rows[i].ev == m->ev) {
            for (int k = 0; k < EC_N; k++) {
                m->c[k] += rows[i].c[k];
            }
            m->state = rows[i].state > m->state ? rows[i].state : m->state;
            m->rtt = rows[i].rtt > m->rtt ? rows[i].rtt : m->rtt;
        } else {
            rows[++w] = rows[i];
        }
    }
    return w + 1;
}

static void format_time(uint64_t wall_ns, char *dest, size_t destlen)
{
    time_t t = (time_t)(wall_ns / 1000000000ull);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(dest, destlen, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
        snprintf(dest, destlen, "1970-01-01T00:00:00Z");
    }
}

/* Room for one more row of |b| with the tail still to come. */
static bool fits(const agent_report *r, const util_buf *b, size_t tail)
{
    return !r->max_bytes || b->len + tail <= r->max_bytes;
}

static void cut(util_buf *b, size_t len)
{
    b->len = len;
    if (b->s) {
        b->s[len] = '\0';
    }
}

int agent_report_build(agent_report *r, uint64_t wall_ns, util_buf *out)
{
    if (!r || !out) {
        return -EINVAL;
    }
    size_t tail = tail_max();
    size_t nrows = merge_rows(r->rows, stage_all(r));
    if (nrows) {
        qsort(r->rows, nrows, sizeof(row), cmp_worst);
    }

    /* peers that did something, busiest first */
    if (r->capporder < r->npeers) {
        r->capporder = r->npeers;
        r->porder = util_xrealloc(r->porder, r->capporder * sizeof(busy));
    }
    busy *order = r->porder;
    size_t npc = 0;
    for (size_t i = 0; i < r->npeers; i++) {
        const rpeer *p = &r->peers[i];
        bool moved = false;
        for (int k = 0; k < PC_N; k++) {
            moved |= p->d[k] != 0;
        }
        if (moved) {
            order[npc++] = (busy){p->d[PC_PKTS] + p->d[PC_RCVD], (uint32_t)i};
        }
    }
    if (npc) {
        qsort(order, npc, sizeof(busy), cmp_busy);
    }

    uint64_t ctx_dropped = 0;
    if (r->ctx) {
        mrc_ctx_stats cs;
        mrc_ctx_get_stats(r->ctx, &cs);
        r->ctx_dropped_stage = cs.ev_events_dropped;
        ctx_dropped = delta(r->ctx_dropped_stage, r->ctx_dropped_prev);
    }

    uint64_t interval = r->interval_s;
    if (r->committed_once && wall_ns >= r->wall_prev) {
        interval = (wall_ns - r->wall_prev + 500000000ull) / 1000000000ull;
        interval = interval ? interval : 1;
    }
    char when[32];
    format_time(wall_ns, when, sizeof(when));

    cut(out, 0);
    put_head(out, r->host, interval, when);

    bool warned = false;
    size_t nev = 0;
    for (size_t i = 0; i < nrows && nev < r->max_evs; i++) {
        const row *w = &r->rows[i];
        const char *peer = r->peers[w->peer].name;
        char path[AGENT_REPORT_PATH_MAX];
        bool have_path = false;
        if (r->path) {
            path[0] = '\0';
            if (r->path(r->user, peer, w->ev, w->port, path, sizeof(path)) == 0) {
                have_path = path_ok(path);
                if (!have_path && !warned) {
                    util_log(UTIL_LOG_WARNING,
                             "report: the path of EV %" PRIu32 " to %s is not plain text: "
                             "left out",
                             w->ev, peer);
                    warned = true;
                }
            }
        }
        size_t mark = out->len;
        if (nev) {
            util_buf_put(out, ",", 1);
        }
        put_ev(out, w, peer, have_path ? path : NULL);
        if (!fits(r, out, tail)) {
            cut(out, mark);
            break;
        }
        nev++;
    }
    util_buf_put(out, "]", 1);

    size_t npeer = 0, mark = out->len;
    util_buf_put(out, peers_open, sizeof(peers_open) - 1);
    for (size_t i = 0; i < npc && npeer < r->max_peers; i++) {
        size_t m = out->len;
        if (npeer) {
            util_buf_put(out, ",", 1);
        }
        put_peer(out, &r->peers[order[i].idx]);
        if (!fits(r, out, tail)) {
            cut(out, m);
            break;
        }
        npeer++;
    }
    if (npeer) {
        util_buf_put(out, "]", 1);
    } else {
        cut(out, mark);
    }

    /* the newest transitions that fit, written oldest first */
    size_t ntr = r->ring_n;
    if (r->max_bytes) {
        size_t used = out->len + tail;
        for (size_t k = 0; k < r->ring_n; k++) {
            const rtrans *t = &r->ring[(r->ring_head + r->ring_n - 1 - k) % r->max_tr];
            cut(&r->scratch, 0);
            put_tr(&r->scratch, t);
            used += r->scratch.len + (k ? 1 : 0);
            if (used > r->max_bytes) {
                ntr = k;
                break;
            }
        }
    }
    if (ntr) {
        util_buf_put(out, trs_open, sizeof(trs_open) - 1);
        for (size_t k = 0; k < ntr; k++) {
            if (k) {
                util_buf_put(out, ",", 1);
            }
            put_tr(out, &r->ring[(r->ring_head + r->ring_n - ntr + k) % r->max_tr]);
        }
        util_buf_put(out, "]", 1);
    }

    uint64_t tp = npc - npeer, te = nrows - nev, tt = r->dropped + ctx_dropped + (r->ring_n - ntr);
    if (r->floor_peers) {
        put_floor(out, r->floor_peers, r->floor_evs, r->floor_entered);
    }
    if (tp || te || tt) {
        put_truncated(out, tp, te, tt);
    }
    util_buf_put(out, "}", 1);

    r->built = true;
    r->seq_staged = r->seq_next;
    r->dropped_staged = r->dropped;
    r->wall_staged = wall_ns;
    return 0;
}

void agent_report_set_floor(agent_report *r, uint64_t peers, uint64_t evs, uint64_t entered)
{
    r->floor_peers = peers;
    r->floor_evs = evs;
    r->floor_entered = entered;
}

void agent_report_commit(agent_report *r)
{
    if (!r || !r->built) {
        return;
    }
    size_t w = 0;
    bool removed = false;
    for (size_t i = 0; i < r->nqps; i++) {
        rqp *q = r->qps[i];
        if (q->staged) {
            q->staged = false;
            if (q->gone_staged) {
                r->peers[q->peer].refs--;
                qp_release(q);
                removed = true;
                continue;
            }
            snap_swap(&q->prev, &q->stage);
        }
        r->qps[w++] = q;
    }
    r->nqps = w;
    if (removed) {
        qpmap_rebuild(r);
        /* peers with no QP left go, the others move down */
        uint32_t *remap = util_xcalloc(r->npeers ? r->npeers : 1, sizeof(uint32_t));
        size_t np = 0;
        for (size_t i = 0; i < r->npeers; i++) {
            if (r->peers[i].refs) {
                remap[i] = (uint32_t)np;
                r->peers[np++] = r->peers[i];
            }
        }
        if (np != r->npeers) {
            r->npeers = np;
            for (size_t i = 0; i < r->nqps; i++) {
                r->qps[i]->peer = remap[r->qps[i]->peer];
            }
            peermap_rebuild(r);
        }
        free(remap);
    }
    while (r->ring_n && r->ring[r->ring_head].seq < r->seq_staged) {
        r->ring_head = (r->ring_head + 1) % r->max_tr;
        r->ring_n--;
    }
    r->dropped -= r->dropped_staged;
    r->ctx_dropped_prev = r->ctx_dropped_stage;
    r->wall_prev = r->wall_staged;
    r->committed_once = true;
    r->built = false;
}
