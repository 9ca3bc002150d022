/* SPDX-License-Identifier: MIT */
/* Unit tests of the agent's report: two real engines joined in memory, with drops on chosen
 * EVs, their counters reported as deltas, worst EVs first, bounded, parsed back with json-c. */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_report.h"

#define PLANES 2
#define MTU 256
#define DELAY_NS 2000
#define PKT_ROOM (MTU + 256)
#define MAX_QPS 16
#define MAX_DROPS 8
#define T0 1796061600ull /* 2026-11-30T18:00:00Z */
#define SEC 1000000000ull

/* ---- two engines in memory: host h0 (side 0) sends to its peers' QPs (side 1) ---- */

typedef struct flight {
    uint64_t at;
    uint8_t to;
    uint32_t len;
    mrc_rx_info info;
    uint8_t *buf;
} flight;

typedef struct net {
    mrc_context *ctx[2];
    mrc_cq *cq[2];
    mrc_mr *mr[2];
    uint8_t *mem[2];
    mrc_qp *qp[2][MAX_QPS];
    unsigned nqp;
    uint64_t now, rng;
    flight *q; /* one delay for every packet: a FIFO */
    size_t qhead, qtail, qcap;
    uint32_t drop_ev[MAX_DROPS];
    double drop_p[MAX_DROPS];
    unsigned ndrop;
    double loss; /* of every data packet of side 0 */
    uint64_t posted, done;
    bool failed;
    /* side 0's EV events go to these reports, and are counted */
    agent_report *rep[2];
    uint64_t events;
    mrc_ev_event last_event;
} net;

static uint32_t ev_of(unsigned plane, unsigned i)
{
    return (uint32_t)plane << 29 | (uint32_t)(i & 0x7ff) << 18;
}

static uint64_t rnd(net *n)
{
    uint64_t z = (n->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool chance(net *n, double p)
{
    return p > 0 && (double)(rnd(n) >> 11) * (1.0 / 9007199254740992.0) < p;
}

static void *eng_malloc(size_t size, void *user)
{
    (void)user;
    return malloc(size);
}

static void eng_free(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

static uint64_t eng_seed(void *user)
{
    return *(const uint64_t *)user;
}

static const uint64_t seed = 7;

static void connect_qp(net *n, unsigned i, unsigned side)
{
    mrc_qp *qp = n->qp[side][i];
    mrc_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = MRC_QPS_INIT;
    a.profile.ev_profile_id = 1;
    a.profile.cc_profile_id = 1;
    ck_assert_int_eq(
        mrc_modify_qp(qp, &a, MRC_QP_STATE | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID, 0), 0);
    a.qp_state = MRC_QPS_RTR;
    a.dest_qp_num = mrc_qp_num(n->qp[side ^ 1][i]);
    a.rq_psn = 100;
    a.path_mtu = MTU;
    a.access_flags = MRC_ACCESS_REMOTE_WRITE;
    a.ah.nports = PLANES;
    for (unsigned p = 0; p < PLANES; p++) {
        a.ah.sgid[p][0] = a.ah.dgid[p][0] = 0xfd;
        a.ah.sgid[p][14] = (uint8_t)side;
        a.ah.dgid[p][14] = (uint8_t)(side ^ 1);
        a.ah.sgid[p][15] = a.ah.dgid[p][15] = (uint8_t)p;
    }
    a.mpr.mpr_dest = 8;
    a.wimm.max_wimm_dest = 128;
    ck_assert_int_eq(mrc_modify_qp(qp, &a,
                                   MRC_QP_STATE | MRC_QP_DEST_QPN | MRC_QP_RQ_PSN |
                                       MRC_QP_PATH_MTU | MRC_QP_ACCESS_FLAGS | MRC_QP_AV |
                                       MRC_QP_MPR_DEST | MRC_QP_MAX_WIMM_DEST,
                                   0),
                     0);
    a.qp_state = MRC_QPS_RTS;
    a.sq_psn = 100;
    a.mpr.mpr = 8;
    a.wimm.max_wimm = 128;
    a.timeout = 6; /* 65 us */
    a.retry.linear_cnt = 7;
    a.retry.exp_cnt = 7;
    ck_assert_int_eq(mrc_modify_qp(qp, &a,
                                   MRC_QP_STATE | MRC_QP_SQ_PSN | MRC_QP_MPR | MRC_QP_MAX_WIMM |
                                       MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT,
                                   0),
                     0);
}

/* |nqp| QP pairs, each with |nevs| EVs (half per plane), |active| of them in use (0: all). */
static void net_new(net *n, unsigned nqp, unsigned nevs, unsigned active)
{
    memset(n, 0, sizeof(*n));
    ck_assert_uint_le(nqp, MAX_QPS);
    n->nqp = nqp;
    n->rng = 99;
    mrc_ev *evs = calloc(nevs, sizeof(mrc_ev));
    ck_assert_ptr_nonnull(evs);
    for (unsigned i = 0; i < nevs; i++) {
        evs[i].port = (uint8_t)(i % PLANES);
        evs[i].val = ev_of(i % PLANES, i / PLANES);
    }
    for (unsigned s = 0; s < 2; s++) {
        mrc_settings set;
        mrc_settings_default(&set);
        set.alloc = (mrc_allocator){eng_malloc, eng_free, NULL};
        set.cb.seed = eng_seed;
        set.user = (void *)&seed;
        set.nports = PLANES;
        set.max_qps = 64;
        set.ev_event_queue = 65536;
        for (unsigned p = 0; p < PLANES; p++) {
            set.addr[p][0] = 0xfd;
            set.addr[p][14] = (uint8_t)s;
            set.addr[p][15] = (uint8_t)p;
        }
        mrc_ev_profile_attr ea = {
            .evs = evs, .nevs = nevs, .active = active, .min_active = 2, .event_mask = 0xf};
        mrc_cc_profile_attr ca = {.algorithm = "none"};
        ck_assert_int_eq(mrc_context_new(&set, 0, &n->ctx[s]), 0);
        ck_assert_int_eq(mrc_ev_profile_create(n->ctx[s], 1, &ea), 0);
        ck_assert_int_eq(mrc_cc_profile_create(n->ctx[s], 1, &ca), 0);
        ck_assert_int_eq(mrc_cq_new(n->ctx[s], 8192, &n->cq[s]), 0);
        n->mem[s] = calloc(1, 65536);
        ck_assert_ptr_nonnull(n->mem[s]);
        ck_assert_int_eq(mrc_reg_mr(n->ctx[s], n->mem[s], 65536,
                                    MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE, &n->mr[s]),
                         0);
        mrc_qp_init_attr qa = {.send_cq = n->cq[s],
                               .recv_cq = n->cq[s],
                               .max_send_wr = 256,
                               .max_recv_wr = 16,
                               .max_send_sge = 1,
                               .sq_sig_all = true};
        for (unsigned i = 0; i < nqp; i++) {
            ck_assert_int_eq(mrc_qp_new(n->ctx[s], &qa, &n->qp[s][i]), 0);
        }
    }
    free(evs);
    for (unsigned i = 0; i < nqp; i++) {
        connect_qp(n, i, 0);
        connect_qp(n, i, 1);
    }
}

static void net_free(net *n)
{
    for (size_t i = n->qhead; i < n->qtail; i++) {
        free(n->q[i].buf);
    }
    free(n->q);
    for (unsigned s = 0; s < 2; s++) {
        mrc_context_free(n->ctx[s]);
        free(n->mem[s]);
    }
}

static void net_drop(net *n, uint32_t ev, double p)
{
    ck_assert_uint_lt(n->ndrop, MAX_DROPS);
    n->drop_ev[n->ndrop] = ev;
    n->drop_p[n->ndrop++] = p;
}

/* Queues |count| writes of |size| bytes on side 0's QP |i|. */
static void net_send(net *n, unsigned i, unsigned count, uint32_t size)
{
    for (unsigned k = 0; k < count; k++) {
        mrc_sge g = {
            .addr = (uint64_t)(uintptr_t)n->mem[0], .length = size, .lkey = mrc_mr_lkey(n->mr[0])};
        mrc_send_wr wr = {.wr_id = n->posted,
                          .opcode = MRC_WR_RDMA_WRITE,
                          .sg_list = &g,
                          .num_sge = 1,
                          .remote_addr = (uint64_t)(uintptr_t)n->mem[1],
                          .rkey = mrc_mr_rkey(n->mr[1])};
        ck_assert_int_eq(mrc_post_send(n->qp[0][i], &wr, n->now), 0);
        n->posted++;
    }
}

static void transmit(net *n, unsigned from, uint8_t *buf, uint32_t len, const mrc_tx_info *info)
{
    bool drop = false;
    if (from == 0 && !info->control) {
        drop = chance(n, n->loss);
        for (unsigned i = 0; i < n->ndrop && !drop; i++) {
            drop = n->drop_ev[i] == info->ev && chance(n, n->drop_p[i]);
        }
    }
    if (drop) {
        free(buf);
        return;
    }
    if (n->qtail == n->qcap) {
        if (n->qhead > 0) {
            memmove(n->q, n->q + n->qhead, (n->qtail - n->qhead) * sizeof(flight));
            n->qtail -= n->qhead;
            n->qhead = 0;
        }
        if (n->qtail == n->qcap) {
            n->qcap = n->qcap ? 2 * n->qcap : 1024;
            n->q = realloc(n->q, n->qcap * sizeof(flight));
            ck_assert_ptr_nonnull(n->q);
        }
    }
    flight *f = &n->q[n->qtail++];
    f->at = n->now + DELAY_NS;
    f->to = (uint8_t)(from ^ 1);
    f->len = len;
    f->buf = buf;
    f->info = (mrc_rx_info){.port = info->port, .ecn = info->ecn, .dscp = info->dscp};
}

static void feed_events(net *n)
{
    mrc_ev_event e[64];
    int k;
    while ((k = mrc_poll_ev_events(n->ctx[0], e, 64)) > 0) {
        for (int i = 0; i < k; i++) {
            for (unsigned r = 0; r < 2; r++) {
                agent_report_ev_event(n->rep[r], &e[i]);
            }
            n->events++;
            n->last_event = e[i];
        }
    }
}

/* Runs until every write completed (|until| 0) or until time |until|. */
static void net_run(net *n, uint64_t until)
{
    uint64_t limit = until ? until : n->now + 60 * SEC;
    for (;;) {
        for (unsigned s = 0; s < 2; s++) {
            for (;;) {
                uint8_t *buf = malloc(PKT_ROOM);
                ck_assert_ptr_nonnull(buf);
                mrc_tx_info info;
                int len =
                    mrc_write_pkt(n->ctx[s], buf, PKT_ROOM, (1u << PLANES) - 1, &info, n->now);
                if (len <= 0) {
                    free(buf);
                    break;
                }
                transmit(n, s, buf, (uint32_t)len, &info);
            }
        }
        mrc_wc wc[64];
        int k;
        for (unsigned s = 0; s < 2; s++) {
            while ((k = mrc_poll_cq(n->cq[s], 64, wc)) > 0) {
                for (int i = 0; i < k; i++) {
                    n->done += s == 0 && wc[i].status == MRC_WC_SUCCESS;
                    n->failed |= wc[i].status != MRC_WC_SUCCESS;
                }
            }
        }
        feed_events(n);
        if (!until && n->done >= n->posted) {
            return;
        }
        ck_assert_msg(!n->failed, "a write failed");
        uint64_t next = n->qhead < n->qtail ? n->q[n->qhead].at : UINT64_MAX;
        for (unsigned s = 0; s < 2; s++) {
            uint64_t e = mrc_get_expiry(n->ctx[s]);
            next = e < next ? e : next;
        }
        if (next > limit) {
            ck_assert_msg(until, "the writes did not finish: %llu of %llu",
                          (unsigned long long)n->done, (unsigned long long)n->posted);
            n->now = limit;
            return;
        }
        n->now = next > n->now ? next : n->now;
        while (n->qhead < n->qtail && n->q[n->qhead].at <= n->now) {
            flight *f = &n->q[n->qhead++];
            mrc_read_pkt(n->ctx[f->to], f->buf, f->len, &f->info, n->now);
            free(f->buf);
        }
        for (unsigned s = 0; s < 2; s++) {
            if (mrc_get_expiry(n->ctx[s]) <= n->now) {
                mrc_handle_expiry(n->ctx[s], n->now);
            }
        }
    }
}

/* ---- what the test expects, from the engine's own counters ---- */

typedef struct evtab {
    unsigned n;
    mrc_ev_stats ev[1024];
    mrc_qp_stats qp;
} evtab;

static void tab_read(evtab *t, const mrc_qp *qp)
{
    t->n = mrc_qp_ev_count(qp);
    ck_assert_uint_le(t->n, 1024);
    for (unsigned i = 0; i < t->n; i++) {
        ck_assert_int_eq(mrc_qp_get_ev_stats(qp, i, &t->ev[i]), 0);
    }
    ck_assert_int_eq(mrc_qp_get_stats(qp, &t->qp), 0);
}

static uint64_t ev_lost(const mrc_ev_stats *e)
{
    return e->lost + e->timeouts;
}

static bool ev_moved(const mrc_ev_stats *a, const mrc_ev_stats *b)
{
    return a->pkts_sent != b->pkts_sent || ev_lost(a) != ev_lost(b) ||
           a->retx_sent != b->retx_sent || a->acked != b->acked || a->timeouts != b->timeouts ||
           a->ecn != b->ecn || a->trims != b->trims || a->transitions != b->transitions ||
           a->probes_sent != b->probes_sent || a->probes_ok != b->probes_ok;
}

/* Candidates of one QP between two readings: moved, or SKIP / ASSUMED_BAD now. */
static unsigned candidates(const evtab *now, const evtab *before)
{
    unsigned c = 0;
    for (unsigned i = 0; i < now->n; i++) {
        const mrc_ev_stats *e = &now->ev[i];
        c += ev_moved(e, &before->ev[i]) || e->state == MRC_EV_SKIP ||
             e->state == MRC_EV_ASSUMED_BAD;
    }
    return c;
}

/* ---- JSON ---- */

static json_object *parse(const util_buf *b)
{
    ck_assert_ptr_nonnull(b->s);
    ck_assert_uint_eq(strlen(b->s), b->len);
    json_object *o = json_tokener_parse(b->s);
    ck_assert_msg(o != NULL, "not JSON: %.300s", b->s);
    return o;
}

static json_object *get(json_object *o, const char *k)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, k, &v), "no \"%s\" in %.300s", k,
                  json_object_to_json_string(o));
    return v;
}

static bool has(json_object *o, const char *k)
{
    return json_object_object_get_ex(o, k, NULL);
}

static uint64_t u64(json_object *o, const char *k)
{
    json_object *v = get(o, k);
    ck_assert_msg(json_object_is_type(v, json_type_int), "\"%s\" is not a number", k);
    return json_object_get_uint64(v);
}

static const char *str(json_object *o, const char *k)
{
    json_object *v = get(o, k);
    ck_assert_msg(json_object_is_type(v, json_type_string), "\"%s\" is not a string", k);
    return json_object_get_string(v);
}

static size_t alen(json_object *o, const char *k)
{
    if (!has(o, k)) {
        return 0;
    }
    json_object *v = get(o, k);
    ck_assert(json_object_is_type(v, json_type_array));
    return json_object_array_length(v);
}

static json_object *at(json_object *o, const char *k, size_t i)
{
    return json_object_array_get_idx(get(o, k), i);
}

static uint64_t truncated(json_object *o, const char *k)
{
    return has(o, "truncated") ? u64(get(o, "truncated"), k) : 0;
}

static json_object *find_ev(json_object *rep, const char *peer, uint32_t ev)
{
    for (size_t i = 0; i < alen(rep, "evs"); i++) {
        json_object *e = at(rep, "evs", i);
        if (strcmp(str(e, "peer"), peer) == 0 && u64(e, "ev") == ev) {
            return e;
        }
    }
    return NULL;
}

static json_object *find_peer(json_object *rep, const char *peer)
{
    for (size_t i = 0; i < alen(rep, "peers"); i++) {
        json_object *p = at(rep, "peers", i);
        if (strcmp(str(p, "peer"), peer) == 0) {
            return p;
        }
    }
    return NULL;
}

static const char *const states[4] = {"good", "skip", "assumed_bad", "denied"};

/* Every EV row's counters are the engine's over the interval: |now| less |before|. */
static void check_ev_row(json_object *e, const mrc_ev_stats *now, const mrc_ev_stats *before)
{
    ck_assert_str_eq(str(e, "state"), states[now->state]);
    ck_assert_uint_eq(u64(e, "sent"), now->pkts_sent - before->pkts_sent);
    ck_assert_uint_eq(u64(e, "lost"), ev_lost(now) - ev_lost(before));
    ck_assert_uint_eq(u64(e, "retx"), now->retx_sent - before->retx_sent);
    ck_assert_uint_eq(u64(e, "acked"), now->acked - before->acked);
    ck_assert_uint_eq(u64(e, "timeouts"), now->timeouts - before->timeouts);
    ck_assert_uint_eq(u64(e, "ecn"), now->ecn - before->ecn);
    ck_assert_uint_eq(u64(e, "trims"), now->trims - before->trims);
    ck_assert_uint_eq(u64(e, "transitions"), now->transitions - before->transitions);
    ck_assert_uint_eq(u64(e, "probes_sent"), now->probes_sent - before->probes_sent);
    ck_assert_uint_eq(u64(e, "probes_ok"), now->probes_ok - before->probes_ok);
    ck_assert(!has(e, "probe_rtt_ns") && !has(e, "nacks"));
}

static void check_peer_row(json_object *p, const mrc_qp_stats *now, const mrc_qp_stats *before,
                           unsigned qps)
{
    ck_assert_uint_eq(u64(p, "qps"), qps);
    ck_assert_uint_eq(u64(p, "data_pkts_sent"), now->data_pkts_sent - before->data_pkts_sent);
    ck_assert_uint_eq(u64(p, "data_bytes_sent"), now->data_bytes_sent - before->data_bytes_sent);
    ck_assert_uint_eq(u64(p, "retx_pkts"), now->retx_pkts - before->retx_pkts);
    ck_assert_uint_eq(u64(p, "sacks_rcvd"), now->sacks_rcvd - before->sacks_rcvd);
    ck_assert_uint_eq(u64(p, "timeouts"), now->timeouts - before->timeouts);
    ck_assert_uint_eq(u64(p, "ecn_echoes"), now->ecn_echoes - before->ecn_echoes);
    json_object *nk = get(p, "nacks_rcvd");
    ck_assert_int_eq(json_object_object_length(nk), MRC_NACK_REASONS);
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        ck_assert_uint_eq(u64(nk, mrc_nack_name(i)), now->nacks_rcvd[i] - before->nacks_rcvd[i]);
    }
    json_object *st = get(p, "ev_states");
    for (int s = 0; s < 4; s++) {
        ck_assert_uint_eq(u64(st, states[s]), now->ev_count[s]);
    }
}

static double rate(json_object *e)
{
    uint64_t sent = u64(e, "sent"), lost = u64(e, "lost");
    uint64_t den = sent > lost ? sent : lost;
    return den ? (double)lost / (double)den : 0;
}

/* The rows go worst first: not GOOD, then loss rate, then lost. */
static void check_worst_first(json_object *rep)
{
    for (size_t i = 1; i < alen(rep, "evs"); i++) {
        json_object *a = at(rep, "evs", i - 1), *b = at(rep, "evs", i);
        bool ab = strcmp(str(a, "state"), "good") != 0, bb = strcmp(str(b, "state"), "good") != 0;
        ck_assert_msg(ab || !bb, "row %zu is GOOD but row %zu is not", i - 1, i);
        if (ab == bb) {
            ck_assert_msg(rate(a) >= rate(b), "row %zu loses less than row %zu", i - 1, i);
            if (rate(a) == rate(b)) {
                ck_assert_uint_ge(u64(a, "lost"), u64(b, "lost"));
            }
        }
    }
}

/* "p<plane>-t0-0~p<plane>-t1-<index>~p<plane>-t0-1" */
static int path_of(void *user, const char *peer, uint32_t ev, unsigned port, char *dest,
                   size_t destlen)
{
    (void)peer;
    int *calls = user;
    (*calls)++;
    snprintf(dest, destlen, "p%u-t0-0~p%u-t1-%u~p%u-t0-1", port, port, (ev >> 18) & 0x7ff, port);
    return 0;
}

static agent_report *report_new(const agent_report_cfg *cfg)
{
    agent_report *r = NULL;
    char err[256] = "";
    ck_assert_msg(agent_report_new(cfg, &r, err, sizeof(err)) == 0, "%s", err);
    return r;
}

static void add_qp(agent_report *r, mrc_qp *qp, const char *peer)
{
    char err[256] = "";
    ck_assert_msg(agent_report_qp_add(r, qp, peer, err, sizeof(err)) == 0, "%s", err);
}

/* ---- tests ---- */

/* Deltas: the first report has everything since the QP was added, the next only what came
 * after the committed one; until a commit, a build covers the same interval again. */
START_TEST(test_agent_report_deltas)
{
    net n;
    net_new(&n, 1, 16, 0);
    int calls = 0;
    agent_report_cfg cfg = {.host = "h0", .interval_s = 10, .path = path_of, .user = &calls};
    agent_report *r = report_new(&cfg);
    n.rep[0] = r;
    add_qp(r, n.qp[0][0], "h1");
    uint32_t dead = ev_of(0, 3), lossy = ev_of(1, 2);
    net_drop(&n, dead, 1.0);
    net_drop(&n, lossy, 0.3);
    net_send(&n, 0, 20, 16 * MTU);
    net_run(&n, 0);

    evtab zero, t1, t2;
    memset(&zero, 0, sizeof(zero));
    tab_read(&t1, n.qp[0][0]);
    zero.n = t1.n;
    for (unsigned i = 0; i < t1.n; i++) {
        zero.ev[i].ev = t1.ev[i].ev;
    }
    util_buf b = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_str_eq(str(j, "host"), "h0");
    ck_assert_uint_eq(u64(j, "interval_s"), 10);
    ck_assert_str_eq(str(j, "time"), "2026-11-30T18:00:00Z");
    ck_assert_uint_eq(alen(j, "evs"), candidates(&t1, &zero));
    ck_assert_uint_eq(calls, alen(j, "evs"));
    unsigned rtts = 0;
    for (unsigned i = 0; i < t1.n; i++) {
        json_object *e = find_ev(j, "h1", t1.ev[i].ev);
        if (!ev_moved(&t1.ev[i], &zero.ev[i]) && t1.ev[i].state == MRC_EV_GOOD) {
            ck_assert_ptr_null(e);
            continue;
        }
        ck_assert_msg(e != NULL, "EV 0x%08x is not reported", t1.ev[i].ev);
        check_ev_row(e, &t1.ev[i], &zero.ev[i]);
        char want[64];
        snprintf(want, sizeof(want), "p%u-t0-0~p%u-t1-%u~p%u-t0-1", t1.ev[i].port, t1.ev[i].port,
                 (t1.ev[i].ev >> 18) & 0x7ff, t1.ev[i].port);
        ck_assert_str_eq(str(e, "path"), want);
        if (has(e, "rtt_ns")) {
            ck_assert_uint_eq(u64(e, "rtt_ns"), t1.ev[i].last_rtt_ns);
            rtts++;
        }
    }
    ck_assert_uint_gt(rtts, 0); /* TSETH is on */
    /* the dead EV lost what it carried and is out of use: it comes first */
    json_object *d = at(j, "evs", 0);
    ck_assert_uint_eq(u64(d, "ev"), dead);
    ck_assert_str_eq(str(d, "state"), "assumed_bad");
    ck_assert_uint_ge(u64(d, "lost"), 1);
    ck_assert_uint_ge(u64(find_ev(j, "h1", lossy), "lost"), 1);
    check_worst_first(j);
    ck_assert_uint_eq(alen(j, "peers"), 1);
    check_peer_row(find_peer(j, "h1"), &t1.qp, &zero.qp, 1);
    ck_assert_uint_gt(u64(find_peer(j, "h1"), "data_pkts_sent"), 0);
    ck_assert_uint_ge(alen(j, "transitions"), 1);
    ck_assert(!has(j, "truncated"));
    json_object_put(j);

    /* not committed: the same interval again, the same text */
    util_buf again = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &again), 0);
    ck_assert_str_eq(again.s, b.s);
    agent_report_commit(r);

    /* the next interval: only what came since, the dead EV still out */
    n.ndrop = 0;
    net_send(&n, 0, 10, 16 * MTU);
    net_run(&n, 0);
    tab_read(&t2, n.qp[0][0]);
    ck_assert_int_eq(agent_report_build(r, (T0 + 10) * SEC + 300000000, &b), 0);
    j = parse(&b);
    ck_assert_uint_eq(u64(j, "interval_s"), 10);
    ck_assert_uint_eq(alen(j, "evs"), candidates(&t2, &t1));
    for (unsigned i = 0; i < t2.n; i++) {
        json_object *e = find_ev(j, "h1", t2.ev[i].ev);
        if (e) {
            check_ev_row(e, &t2.ev[i], &t1.ev[i]);
        }
    }
    check_peer_row(find_peer(j, "h1"), &t2.qp, &t1.qp, 1);
    ck_assert_uint_eq(u64(find_peer(j, "h1"), "data_pkts_sent"),
                      t2.qp.data_pkts_sent - t1.qp.data_pkts_sent);
    json_object_put(j);

    /* a report the controller did not take: the next build covers both intervals */
    evtab t3;
    n.loss = 1.0; /* a blackout: timeouts, which count as lost */
    net_send(&n, 0, 5, 16 * MTU);
    net_run(&n, n.now + 1000000);
    n.loss = 0;
    net_run(&n, 0);
    tab_read(&t3, n.qp[0][0]);
    ck_assert_uint_gt(t3.qp.timeouts, t1.qp.timeouts);
    ck_assert_int_eq(agent_report_build(r, (T0 + 35) * SEC, &b), 0);
    j = parse(&b);
    ck_assert_uint_eq(u64(j, "interval_s"), 35);
    check_peer_row(find_peer(j, "h1"), &t3.qp, &t1.qp, 1);
    for (unsigned i = 0; i < t3.n; i++) {
        json_object *e = find_ev(j, "h1", t3.ev[i].ev);
        if (e) {
            check_ev_row(e, &t3.ev[i], &t1.ev[i]);
        }
    }
    json_object_put(j);
    free(b.s);
    free(again.s);
    agent_report_free(r);
    net_free(&n);
}
END_TEST

/* Worst first; GOOD EVs that carried nothing (backups) and a denied idle EV are left out. */
START_TEST(test_agent_report_worst_first)
{
    net n;
    net_new(&n, 1, 64, 16);
    agent_report_cfg cfg = {.host = "h0"};
    agent_report *r = report_new(&cfg);
    n.rep[0] = r;
    add_qp(r, n.qp[0][0], "h1");
    evtab t0, t1;
    tab_read(&t0, n.qp[0][0]);
    /* a backup EV denied: news once (its transition), then idle and not news */
    uint32_t denied = 0;
    for (unsigned i = 0; i < t0.n && !denied; i++) {
        if (!t0.ev[i].active) {
            denied = t0.ev[i].ev;
        }
    }
    ck_assert_uint_ne(denied, 0);
    ck_assert_int_eq(mrc_qp_ev_set_state(n.qp[0][0], denied, MRC_EV_DENIED, 0), 0);
    util_buf b = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_uint_eq(alen(j, "evs"), 1);
    ck_assert_str_eq(str(at(j, "evs", 0), "state"), "denied");
    ck_assert_uint_eq(u64(at(j, "evs", 0), "transitions"), 1);
    json_object_put(j);
    agent_report_commit(r);
    tab_read(&t0, n.qp[0][0]);
    unsigned k = 0;
    double p[] = {0.6, 0.3, 0.1, 0.03};
    for (unsigned i = 0; i < t0.n && k < 4; i++) {
        if (t0.ev[i].active) {
            net_drop(&n, t0.ev[i].ev, p[k++]);
        }
    }
    net_send(&n, 0, 40, 16 * MTU);
    net_run(&n, 0);
    tab_read(&t1, n.qp[0][0]);
    ck_assert_int_eq(agent_report_build(r, (T0 + 10) * SEC, &b), 0);
    j = parse(&b);
    unsigned idle = 0;
    for (unsigned i = 0; i < t1.n; i++) {
        bool news = ev_moved(&t1.ev[i], &t0.ev[i]) || t1.ev[i].state == MRC_EV_SKIP ||
                    t1.ev[i].state == MRC_EV_ASSUMED_BAD;
        json_object *e = find_ev(j, "h1", t1.ev[i].ev);
        ck_assert_msg(news == (e != NULL), "EV 0x%08x: news %d, reported %d", t1.ev[i].ev, news,
                      e != NULL);
        idle += !news;
        if (e) {
            check_ev_row(e, &t1.ev[i], &t0.ev[i]);
        }
    }
    ck_assert_uint_gt(idle, 16); /* the backups that never came into use */
    ck_assert_ptr_null(find_ev(j, "h1", denied));
    check_worst_first(j);
    /* something lost and something not, some out of use: the order had work to do */
    ck_assert_str_ne(str(at(j, "evs", 0), "state"), "good");
    ck_assert_uint_eq(u64(at(j, "evs", alen(j, "evs") - 1), "lost"), 0);
    json_object_put(j);
    free(b.s);
    agent_report_free(r);
    net_free(&n);
}
END_TEST

/* Thousands of EVs over 8 peers: the counts hold, what is left out is counted, the busiest
 * peers and the newest transitions stay, the size stays under its bound; a byte cap keeps the
 * same order and counts what it cut. */
START_TEST(test_agent_report_bounds)
{
    net n;
    const unsigned nq = 8, nevs = 512;
    net_new(&n, nq, nevs, 0);
    n.loss = 0.02;
    for (unsigned i = 0; i < MAX_DROPS; i++) {
        net_drop(&n, ev_of(i % PLANES, 10 * i), 1.0); /* dead paths: transitions */
    }
    agent_report_cfg cfg = {.host = "h0", .max_peers = 3, .max_evs = 256, .max_transitions = 16};
    agent_report_cfg capped = cfg;
    capped.max_bytes = 16384;
    agent_report *r = report_new(&cfg), *rc = report_new(&capped);
    n.rep[0] = r;
    n.rep[1] = rc;
    static evtab t0[8], t1[8];
    for (unsigned i = 0; i < nq; i++) {
        char peer[16];
        snprintf(peer, sizeof(peer), "h%u", i + 1);
        add_qp(r, n.qp[0][i], peer);
        add_qp(rc, n.qp[0][i], peer);
        tab_read(&t0[i], n.qp[0][i]);
        net_send(&n, i, 8 * (3 + i), 64 * MTU); /* h8 the busiest */
    }
    net_run(&n, 0);
    unsigned cand = 0;
    for (unsigned i = 0; i < nq; i++) {
        tab_read(&t1[i], n.qp[0][i]);
        cand += candidates(&t1[i], &t0[i]);
    }
    ck_assert_uint_gt(cand, 2000);
    ck_assert_uint_gt(n.events, 16);

    util_buf b = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_uint_eq(alen(j, "evs"), 256);
    ck_assert_uint_eq(truncated(j, "evs"), cand - 256);
    check_worst_first(j);
    ck_assert_uint_eq(alen(j, "peers"), 3);
    ck_assert_uint_eq(truncated(j, "peers"), nq - 3);
    ck_assert_str_eq(str(at(j, "peers", 0), "peer"), "h8");
    ck_assert_str_eq(str(at(j, "peers", 1), "peer"), "h7");
    ck_assert_str_eq(str(at(j, "peers", 2), "peer"), "h6");
    for (unsigned i = 5; i < nq; i++) {
        char peer[16];
        snprintf(peer, sizeof(peer), "h%u", i + 1);
        check_peer_row(find_peer(j, peer), &t1[i].qp, &t0[i].qp, 1);
    }
    ck_assert_uint_eq(alen(j, "transitions"), 16);
    ck_assert_uint_eq(truncated(j, "transitions"), n.events - 16);
    json_object *last = at(j, "transitions", 15);
    ck_assert_uint_eq(u64(last, "time"), n.last_event.time);
    ck_assert_uint_eq(u64(last, "ev"), n.last_event.ev);
    for (size_t i = 1; i < 16; i++) {
        ck_assert_uint_le(u64(at(j, "transitions", i - 1), "time"),
                          u64(at(j, "transitions", i), "time"));
    }
    /* the bound: every row at its largest */
    size_t bound = agent_report_max_size(&cfg);
    ck_assert_msg(b.len <= bound, "%zu bytes, bound %zu", b.len, bound);
    agent_report_cfg defaults = {.host = "h0"};
    size_t dbound = agent_report_max_size(&defaults);
    ck_assert_msg(dbound < 1000000, "default bound %zu", dbound);
    agent_report_cfg small = {.host = "h0", .max_peers = 16, .max_evs = 16, .max_transitions = 16};
    ck_assert_msg(agent_report_max_size(&small) < 26000, "small bound %zu",
                  agent_report_max_size(&small));

    /* capped at 16 KiB: the best rows that fit, the same order, the rest counted */
    util_buf c = {0};
    ck_assert_int_eq(agent_report_build(rc, T0 * SEC, &c), 0);
    ck_assert_uint_le(c.len, 16384);
    ck_assert_uint_le(agent_report_max_size(&capped), 16384);
    json_object *k = parse(&c);
    size_t ne = alen(k, "evs"), np = alen(k, "peers"), nt = alen(k, "transitions");
    ck_assert_uint_gt(ne, 0);
    ck_assert_uint_lt(ne, 256);
    ck_assert_uint_eq(ne + truncated(k, "evs"), cand);
    ck_assert_uint_eq(np + truncated(k, "peers"), nq);
    ck_assert_uint_eq(nt + truncated(k, "transitions"), n.events);
    ck_assert_uint_gt(c.len, 16384 - 1024); /* it filled what it could */
    for (size_t i = 0; i < ne; i++) {
        ck_assert_str_eq(json_object_to_json_string(at(k, "evs", i)),
                         json_object_to_json_string(at(j, "evs", i)));
    }
    json_object_put(k);
    json_object_put(j);
    free(b.s);
    free(c.s);
    agent_report_free(r);
    agent_report_free(rc);
    net_free(&n);
}
END_TEST

/* An interval with no traffic reports the heartbeat alone. */
START_TEST(test_agent_report_idle)
{
    net n;
    net_new(&n, 2, 16, 0);
    agent_report_cfg cfg = {.host = "h0", .interval_s = 10};
    agent_report *r = report_new(&cfg);
    n.rep[0] = r;
    add_qp(r, n.qp[0][0], "h1");
    add_qp(r, n.qp[0][1], "h2");
    util_buf b = {0};
    /* nothing yet: the heartbeat */
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    ck_assert_str_eq(b.s, "{\"host\":\"h0\",\"interval_s\":10,\"time\":\"2026-11-30T18:00:00Z\","
                          "\"evs\":[]}");
    agent_report_commit(r);
    net_send(&n, 0, 10, 16 * MTU);
    net_send(&n, 1, 10, 16 * MTU);
    net_run(&n, 0);
    ck_assert_int_eq(agent_report_build(r, (T0 + 10) * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_uint_gt(alen(j, "evs"), 0);
    ck_assert_uint_eq(alen(j, "peers"), 2);
    json_object_put(j);
    agent_report_commit(r);
    /* a second of nothing but the engines' own timers */
    net_run(&n, n.now + SEC);
    ck_assert_int_eq(agent_report_build(r, (T0 + 20) * SEC, &b), 0);
    ck_assert_str_eq(b.s, "{\"host\":\"h0\",\"interval_s\":10,\"time\":\"2026-11-30T18:00:20Z\","
                          "\"evs\":[]}");
    j = parse(&b);
    ck_assert_int_eq(json_object_object_length(j), 4);
    json_object_put(j);
    free(b.s);
    agent_report_free(r);
    net_free(&n);
}
END_TEST

/* "deny_floor" goes out while the floor holds a peer, before "truncated", and within
 * max_bytes; it is left out again once none is held. */
START_TEST(test_agent_report_deny_floor)
{
    agent_report_cfg cfg = {.host = "h0", .interval_s = 10};
    agent_report *r = report_new(&cfg);
    util_buf b = {0};
    agent_report_set_floor(r, 2, 64, 3);
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    ck_assert_str_eq(b.s, "{\"host\":\"h0\",\"interval_s\":10,\"time\":\"2026-11-30T18:00:00Z\","
                          "\"evs\":[],\"deny_floor\":{\"peers\":2,\"evs\":64,\"entered\":3}}");
    agent_report_commit(r);
    agent_report_set_floor(r, 0, 0, 3);
    ck_assert_int_eq(agent_report_build(r, (T0 + 10) * SEC, &b), 0);
    ck_assert_ptr_null(strstr(b.s, "deny_floor"));
    /* the largest member counts in the bound */
    agent_report_cfg small = {.host = "h0", .max_peers = 1, .max_evs = 1, .max_transitions = 1};
    agent_report *rs = report_new(&small);
    agent_report_set_floor(rs, UINT64_MAX, UINT64_MAX, UINT64_MAX);
    ck_assert_int_eq(agent_report_build(rs, T0 * SEC, &b), 0);
    ck_assert_uint_le(b.len, agent_report_max_size(&small));
    ck_assert_ptr_nonnull(strstr(b.s, "\"entered\":18446744073709551615}}"));
    free(b.s);
    agent_report_free(rs);
    agent_report_free(r);
}
END_TEST

/* Two QPs to one peer are one peer and one row per EV; a removed QP's last counters still go
 * out once; a peer with no QP left is gone. */
START_TEST(test_agent_report_qps_of_a_peer)
{
    net n;
    net_new(&n, 2, 16, 0);
    agent_report_cfg cfg = {.host = "h0"};
    agent_report *r = report_new(&cfg);
    n.rep[0] = r;
    add_qp(r, n.qp[0][0], "h1");
    add_qp(r, n.qp[0][1], "h1");
    net_send(&n, 0, 5, 16 * MTU);
    net_send(&n, 1, 7, 16 * MTU);
    net_run(&n, 0);
    evtab a, c;
    tab_read(&a, n.qp[0][0]);
    tab_read(&c, n.qp[0][1]);
    util_buf b = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_uint_eq(alen(j, "peers"), 1);
    json_object *p = find_peer(j, "h1");
    ck_assert_uint_eq(u64(p, "qps"), 2);
    ck_assert_uint_eq(u64(p, "data_pkts_sent"), a.qp.data_pkts_sent + c.qp.data_pkts_sent);
    ck_assert_uint_eq(u64(get(p, "ev_states"), "good"),
                      a.qp.ev_count[MRC_EV_GOOD] + c.qp.ev_count[MRC_EV_GOOD]);
    ck_assert_uint_eq(alen(j, "evs"), 16);
    for (unsigned i = 0; i < a.n; i++) {
        json_object *e = find_ev(j, "h1", a.ev[i].ev);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(u64(e, "sent"), a.ev[i].pkts_sent + c.ev[i].pkts_sent);
        ck_assert_uint_eq(u64(e, "acked"), a.ev[i].acked + c.ev[i].acked);
    }
    json_object_put(j);
    agent_report_commit(r);

    /* the second QP sends, then goes before the report */
    net_send(&n, 1, 4, 16 * MTU);
    net_run(&n, 0);
    evtab c2;
    tab_read(&c2, n.qp[0][1]);
    ck_assert_int_eq(agent_report_qp_remove(r, n.qp[0][1]), 0);
    ck_assert_int_eq(agent_report_qp_remove(r, n.qp[0][1]), -ENOENT);
    mrc_qp_free(n.qp[0][1]);
    ck_assert_int_eq(agent_report_build(r, (T0 + 10) * SEC, &b), 0);
    j = parse(&b);
    p = find_peer(j, "h1");
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(u64(p, "qps"), 1);
    ck_assert_uint_eq(u64(p, "data_pkts_sent"), c2.qp.data_pkts_sent - c.qp.data_pkts_sent);
    ck_assert_uint_eq(u64(get(p, "ev_states"), "good"), a.qp.ev_count[MRC_EV_GOOD]);
    json_object_put(j);
    agent_report_commit(r);
    ck_assert_int_eq(agent_report_build(r, (T0 + 20) * SEC, &b), 0);
    j = parse(&b);
    ck_assert_uint_eq(alen(j, "peers"), 0);
    json_object_put(j);
    agent_report_commit(r);

    /* the last QP goes: so does the peer, and events for its number are no one's */
    ck_assert_int_eq(agent_report_qp_remove(r, n.qp[0][0]), 0);
    ck_assert_int_eq(agent_report_build(r, (T0 + 30) * SEC, &b), 0);
    agent_report_commit(r);
    mrc_ev_event ev = {.time = 5, .qpn = mrc_qp_num(n.qp[0][0]), .ev = 1, .reason = MRC_EVR_ECN};
    agent_report_ev_event(r, &ev);
    ck_assert_int_eq(agent_report_build(r, (T0 + 40) * SEC, &b), 0);
    ck_assert_str_eq(b.s, "{\"host\":\"h0\",\"interval_s\":10,\"time\":\"2026-11-30T18:00:40Z\","
                          "\"evs\":[]}");
    n.qp[0][1] = NULL;
    free(b.s);
    agent_report_free(r);
    net_free(&n);
}
END_TEST

/* Transitions: the newest kept, oldest first, with their names; the rest counted; a build
 * without a commit keeps them, a commit drops what the report had. */
START_TEST(test_agent_report_transitions)
{
    net n;
    net_new(&n, 1, 16, 0);
    agent_report_cfg cfg = {.host = "h0", .max_transitions = 3};
    agent_report *r = report_new(&cfg);
    add_qp(r, n.qp[0][0], "h1");
    uint32_t qpn = mrc_qp_num(n.qp[0][0]);
    static const struct {
        uint8_t from, to, reason;
        const char *why;
    } tr[] = {
        {MRC_EV_GOOD, MRC_EV_SKIP, MRC_EVR_ECN, "ecn"},
        {MRC_EV_SKIP, MRC_EV_GOOD, MRC_EVR_ROTATION, "rotation"},
        {MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_TIMEOUT, "timeout"},
        {MRC_EV_ASSUMED_BAD, MRC_EV_GOOD, MRC_EVR_PROBE_OK, "probe_ok"},
        {MRC_EV_GOOD, MRC_EV_DENIED, MRC_EVR_DENY, "deny"},
        {MRC_EV_DENIED, MRC_EV_GOOD, MRC_EVR_ALLOW, "allow"},
        {MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_LOSS, "loss"},
        {MRC_EV_GOOD, MRC_EV_SKIP, MRC_EVR_TRIM, "trim"},
        {MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_ALWAYS_SKIP, "always_skip"},
    };
    for (unsigned i = 0; i < 5; i++) {
        mrc_ev_event e = {.time = 1000 + i,
                          .qpn = qpn,
                          .ev = ev_of(0, i),
                          .port = 0,
                          .old_state = tr[i].from,
                          .new_state = tr[i].to,
                          .reason = tr[i].reason};
        agent_report_ev_event(r, &e);
    }
    util_buf b = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_uint_eq(alen(j, "transitions"), 3);
    ck_assert_uint_eq(truncated(j, "transitions"), 2);
    ck_assert_uint_eq(truncated(j, "evs"), 0);
    for (unsigned k = 0; k < 3; k++) {
        json_object *t = at(j, "transitions", k);
        unsigned i = k + 2;
        ck_assert_uint_eq(u64(t, "time"), 1000 + i);
        ck_assert_str_eq(str(t, "peer"), "h1");
        ck_assert_uint_eq(u64(t, "ev"), ev_of(0, i));
        ck_assert_str_eq(str(t, "from"), states[tr[i].from]);
        ck_assert_str_eq(str(t, "to"), states[tr[i].to]);
        ck_assert_str_eq(str(t, "reason"), tr[i].why);
    }
    json_object_put(j);
    /* one more before the commit: it stays for the next report, the three reported go */
    mrc_ev_event e = {.time = 2000,
                      .qpn = qpn,
                      .ev = 42,
                      .old_state = tr[5].from,
                      .new_state = tr[5].to,
                      .reason = tr[5].reason};
    agent_report_ev_event(r, &e);
    agent_report_commit(r);
    for (unsigned i = 6; i < 9; i++) {
        mrc_ev_event f = {.time = 3000 + i,
                          .qpn = qpn,
                          .ev = i,
                          .old_state = tr[i].from,
                          .new_state = tr[i].to,
                          .reason = tr[i].reason};
        agent_report_ev_event(r, &f);
    }
    ck_assert_int_eq(agent_report_build(r, (T0 + 10) * SEC, &b), 0);
    j = parse(&b);
    /* the event after the build was pushed out by three newer ones: counted, not reported */
    ck_assert_uint_eq(alen(j, "transitions"), 3);
    ck_assert_uint_eq(truncated(j, "transitions"), 1);
    for (unsigned k = 0; k < 3; k++) {
        ck_assert_str_eq(str(at(j, "transitions", k), "reason"), tr[6 + k].why);
    }
    json_object_put(j);
    agent_report_commit(r);
    ck_assert_int_eq(agent_report_build(r, (T0 + 20) * SEC, &b), 0);
    j = parse(&b);
    ck_assert(!has(j, "transitions") && !has(j, "truncated"));
    json_object_put(j);
    free(b.s);
    agent_report_free(r);
    net_free(&n);
}
END_TEST

static int bad_path(void *user, const char *peer, uint32_t ev, unsigned port, char *dest,
                    size_t destlen)
{
    (void)user;
    (void)peer;
    (void)port;
    if (ev == ev_of(0, 0)) {
        return -1;
    }
    snprintf(dest, destlen, ev == ev_of(1, 0) ? "p1\"x" : "p0 t1");
    return 0;
}

/* Bad input: clear errors, and a bad path is left out rather than written. */
START_TEST(test_agent_report_bad_input)
{
    agent_report *r = NULL;
    char err[256];
    agent_report_cfg cfg = {.host = NULL};
    ck_assert_int_eq(agent_report_new(&cfg, &r, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a valid name"));
    cfg.host = "h 0";
    ck_assert_int_eq(agent_report_new(&cfg, &r, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "'h 0'"));
    char longname[80];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    longname[FAB_NAME_MAX - 1] = '\0';
    cfg.host = longname;
    r = report_new(&cfg); /* 63 characters: the longest */
    agent_report_free(r);
    longname[FAB_NAME_MAX - 1] = 'a';
    longname[FAB_NAME_MAX] = '\0';
    ck_assert_int_eq(agent_report_new(&cfg, &r, err, sizeof(err)), -EINVAL);
    cfg.host = "h0";
    cfg.max_bytes = 100;
    r = NULL;
    ck_assert_int_eq(agent_report_new(&cfg, &r, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "max_bytes"));
    ck_assert_ptr_null(r);
    agent_report_free(NULL);

    net n;
    net_new(&n, 1, 4, 0);
    cfg.max_bytes = 0;
    cfg.path = bad_path;
    r = report_new(&cfg);
    ck_assert_int_eq(agent_report_qp_add(r, n.qp[0][0], "", err, sizeof(err)), -EINVAL);
    ck_assert_int_eq(agent_report_qp_add(r, n.qp[0][0], "h\"1", err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a valid name"));
    ck_assert_int_eq(agent_report_qp_add(r, n.qp[0][0], NULL, err, sizeof(err)), -EINVAL);
    add_qp(r, n.qp[0][0], "h1");
    ck_assert_int_eq(agent_report_qp_add(r, n.qp[0][0], "h1", err, sizeof(err)), -EEXIST);
    ck_assert_int_eq(agent_report_qp_remove(r, n.qp[1][0]), -ENOENT);
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, NULL), -EINVAL);
    net_send(&n, 0, 4, 8 * MTU);
    net_run(&n, 0);
    util_buf b = {0};
    ck_assert_int_eq(agent_report_build(r, T0 * SEC, &b), 0);
    json_object *j = parse(&b);
    ck_assert_uint_eq(alen(j, "evs"), 4);
    for (size_t i = 0; i < 4; i++) {
        ck_assert(!has(at(j, "evs", i), "path"));
    }
    json_object_put(j);
    free(b.s);
    agent_report_free(r);
    net_free(&n);
}
END_TEST

Suite *agent_report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_agent_report_deltas);
    tcase_add_test(tc, test_agent_report_worst_first);
    tcase_add_test(tc, test_agent_report_bounds);
    tcase_add_test(tc, test_agent_report_idle);
    tcase_add_test(tc, test_agent_report_qps_of_a_peer);
    tcase_add_test(tc, test_agent_report_deny_floor);
    tcase_add_test(tc, test_agent_report_transitions);
    tcase_add_test(tc, test_agent_report_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
