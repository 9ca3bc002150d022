/* SPDX-License-Identifier: MIT */
/* mrc-perf's workloads on the agent's engine. Message m of a session is a random block fixed
 * by the message size with m mixed into every word, so each message differs from every other
 * in every word and a stale or misplaced byte shows; both sides derive the block alone. */
#include "agent_perf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_qpmem.h"
#include "util.h"

#define PERF_MAX_QPS 64
#define PERF_MAX_SIZE (64u << 20)
#define PERF_LAT_MAX (1u << 20) /* latency samples kept */

typedef struct perf_qp {
    agent_qpmem m;
    uint64_t next;        /* source: next message; sink: message expected */
    uint64_t outstanding; /* source: writes not completed */
} perf_qp;

struct agent_perf {
    agent_node *node;
    uint32_t peer;
    agent_perf_cfg cfg;
    mrc_cq *cq;
    perf_qp *q;
    uint64_t *block;
    bool connected, running, stopping;
    uint64_t start, end_at, iters, finished_at;
    agent_perf_done_fn done;
    void *done_user;
    struct event *deadline;
    /* counts */
    uint64_t msgs, bytes, bytes_ok, bytes_bad, out_of_order, errors;
    uint32_t first_error;
    /* ping */
    uint64_t ping_sent_at;
    uint64_t *lat;
    size_t nlat;
};

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t stamp(uint64_t m)
{
    return (m + 1) * 0x9e3779b97f4a7c15ull;
}

static void fill(const agent_perf *pf, uint8_t *buf, uint64_t m)
{
    uint64_t x = stamp(m);
    uint32_t size = pf->cfg.size, words = size / 8;
    for (uint32_t k = 0; k < words; k++) {
        uint64_t v = pf->block[k] ^ x;
        memcpy(buf + 8 * k, &v, 8);
    }
    uint64_t v = pf->block[words] ^ x;
    memcpy(buf + 8 * words, &v, size - 8 * words);
}

/* The bytes of |buf| that differ from message m. */
static uint64_t check(const agent_perf *pf, const uint8_t *buf, uint64_t m)
{
    uint64_t x = stamp(m), diff = 0, bad = 0;
    uint32_t size = pf->cfg.size, words = size / 8;
    for (uint32_t k = 0; k < words; k++) {
        uint64_t w;
        memcpy(&w, buf + 8 * k, 8);
        diff |= w ^ pf->block[k] ^ x;
    }
    uint64_t tail = pf->block[words] ^ x;
    for (uint32_t b = 8 * words; b < size; b++) {
        diff |= buf[b] ^ (uint8_t)(tail >> (8 * (b - 8 * words)));
    }
    if (!diff) {
        return 0;
    }
    for (uint32_t b = 0; b < size; b++) {
        uint64_t word = pf->block[b / 8] ^ x;
        bad += buf[b] != (uint8_t)(word >> (8 * (b % 8)));
    }
    return bad;
}

static uint8_t *slot(const agent_perf *pf, const perf_qp *q, uint64_t m)
{
    return q->m.mem + (size_t)(m % pf->cfg.slots) * pf->cfg.size;
}

static int post_write(agent_perf *pf, perf_qp *q, uint64_t m, unsigned local, unsigned remote)
{
    return agent_qpmem_write(&q->m, m, (size_t)local * pf->cfg.size,
                             (uint64_t)remote * pf->cfg.size, pf->cfg.size, (uint32_t)m);
}

static bool source_may_post(const agent_perf *pf, uint64_t now)
{
    if (pf->stopping) {
        return false;
    }
    if (pf->iters && pf->cfg.role == AGENT_PERF_PING) {
        return pf->msgs < pf->iters;
    }
    if (pf->iters) {
        uint64_t posted = pf->msgs;
        for (unsigned i = 0; i < pf->cfg.qps; i++) {
            posted += pf->q[i].outstanding;
        }
        return posted < pf->iters;
    }
    return now < pf->end_at;
}

static void source_fill(agent_perf *pf, uint64_t now)
{
    for (unsigned i = 0; i < pf->cfg.qps; i++) {
        perf_qp *q = &pf->q[i];
        while (q->outstanding < pf->cfg.slots / 2 && source_may_post(pf, now)) {
            fill(pf, slot(pf, q, q->next), q->next);
            unsigned s = (unsigned)(q->next % pf->cfg.slots);
            if (post_write(pf, q, q->next, s, s) != 0) {
                break;
            }
            q->next++;
            q->outstanding++;
        }
    }
}

static void ping_send(agent_perf *pf, uint64_t now)
{
    perf_qp *q = &pf->q[0];
    fill(pf, q->m.mem, q->next);
    pf->ping_sent_at = now;
    if (post_write(pf, q, q->next, 0, 0) == 0) {
        q->outstanding++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static json_object *qp_totals(const agent_perf *pf)
{
    mrc_qp_stats t = {0};
    json_object *o = json_object_new_object();
    uint64_t nacks = 0;
    bool qp_error = false;
    for (unsigned i = 0; i < pf->cfg.qps; i++) {
        mrc_qp_stats s;
        mrc_qp_get_stats(pf->q[i].m.qp, &s);
        t.data_pkts_sent += s.data_pkts_sent;
        t.retx_pkts += s.retx_pkts;
        t.retx_spurious += s.retx_spurious;
        t.path_order_off |= s.path_order_off;
        for (int k = 0; k < MRC_RETX_CAUSES; k++) {
            t.retx_by_cause[k] += s.retx_by_cause[k];
        }
        t.timeouts += s.timeouts;
        t.sacks_sent += s.sacks_sent;
        t.sacks_rcvd += s.sacks_rcvd;
        t.acks_sent += s.acks_sent;
        t.acks_rcvd += s.acks_rcvd;
        t.data_pkts_rcvd += s.data_pkts_rcvd;
        t.dup_pkts_rcvd += s.dup_pkts_rcvd;
        for (int r = 0; r < MRC_NACK_REASONS; r++) {
            nacks += s.nacks_rcvd[r];
        }
        for (int k = 0; k < 4; k++) {
            t.ev_count[k] += s.ev_count[k];
        }
        qp_error |= s.state == MRC_QPS_ERR;
    }
    json_object_object_add(o, "data_pkts_sent", json_object_new_uint64(t.data_pkts_sent));
    json_object_object_add(o, "retx_pkts", json_object_new_uint64(t.retx_pkts));
    json_object_object_add(o, "retx_spurious", json_object_new_uint64(t.retx_spurious));
    json_object_object_add(o, "path_order_off", json_object_new_boolean(t.path_order_off));
    json_object_object_add(o, "timeouts", json_object_new_uint64(t.timeouts));
    static const char *const causes[MRC_RETX_CAUSES] = {"timeout", "nack", "inferred", "probe",
                                                        "port"};
    json_object *rc = json_object_new_object();
    for (int k = 0; k < MRC_RETX_CAUSES; k++) {
        json_object_object_add(rc, causes[k], json_object_new_uint64(t.retx_by_cause[k]));
    }
    json_object_object_add(o, "retx_by_cause", rc);
    json_object_object_add(o, "nacks_rcvd", json_object_new_uint64(nacks));
    /* the answers a data packet costs: each one crosses the fabric back, a packet of its own */
    json_object_object_add(o, "sacks_sent", json_object_new_uint64(t.sacks_sent));
    json_object_object_add(o, "sacks_rcvd", json_object_new_uint64(t.sacks_rcvd));
    json_object_object_add(o, "acks_sent", json_object_new_uint64(t.acks_sent));
    json_object_object_add(o, "acks_rcvd", json_object_new_uint64(t.acks_rcvd));
    json_object_object_add(o, "data_pkts_rcvd", json_object_new_uint64(t.data_pkts_rcvd));
    json_object_object_add(o, "dup_pkts_rcvd", json_object_new_uint64(t.dup_pkts_rcvd));
    json_object *ev = json_object_new_object();
    static const char *const names[4] = {"good", "skip", "assumed_bad", "denied"};
    for (int k = 0; k < 4; k++) {
        json_object_object_add(ev, names[k], json_object_new_uint64(t.ev_count[k]));
    }
    json_object_object_add(o, "ev_states", ev);
    json_object_object_add(o, "qp_error", json_object_new_boolean(qp_error));
    return o;
}

json_object *agent_perf_stats(const agent_perf *pf)
{
    static const char *const roles[] = {"source", "sink", "ping", "pong"};
    json_object *o = json_object_new_object();
    uint64_t end = pf->finished_at ? pf->finished_at : agent_now();
    double secs = pf->start ? (double)(end - pf->start) / 1e9 : 0;
    json_object_object_add(o, "role", json_object_new_string(roles[pf->cfg.role]));
    json_object_object_add(
        o, "peer", json_object_new_string(fab_host_name(agent_node_topo(pf->node), pf->peer)));
    json_object_object_add(o, "qps", json_object_new_int((int)pf->cfg.qps));
    json_object_object_add(o, "size", json_object_new_uint64(pf->cfg.size));
    json_object_object_add(o, "msgs", json_object_new_uint64(pf->msgs));
    json_object_object_add(o, "bytes", json_object_new_uint64(pf->bytes));
    json_object_object_add(o, "seconds", json_object_new_double(secs));
    json_object_object_add(
        o, "gbps", json_object_new_double(secs > 0 ? (double)pf->bytes * 8 / secs / 1e9 : 0));
    if (pf->cfg.role != AGENT_PERF_SOURCE) {
        json_object_object_add(o, "bytes_verified", json_object_new_uint64(pf->bytes_ok));
        json_object_object_add(o, "bytes_bad", json_object_new_uint64(pf->bytes_bad));
        json_object_object_add(o, "out_of_order", json_object_new_uint64(pf->out_of_order));
    }
    json_object_object_add(o, "errors", json_object_new_uint64(pf->errors));
    if (pf->errors) {
        json_object_object_add(o, "first_error", json_object_new_int((int)pf->first_error));
    }
    if (pf->cfg.role == AGENT_PERF_PING && pf->nlat) {
        uint64_t *v = util_xmalloc(pf->nlat * sizeof(uint64_t));
        memcpy(v, pf->lat, pf->nlat * sizeof(uint64_t));
        qsort(v, pf->nlat, sizeof(uint64_t), cmp_u64);
        json_object *l = json_object_new_object();
        static const struct {
            const char *name;
            double q;
        } pct[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}};
        for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
            size_t at = (size_t)(pct[k].q * (double)(pf->nlat - 1) + 0.5);
            json_object_object_add(l, pct[k].name, json_object_new_double((double)v[at] / 1e3));
        }
        json_object_object_add(l, "max", json_object_new_double((double)v[pf->nlat - 1] / 1e3));
        json_object_object_add(l, "samples", json_object_new_uint64(pf->nlat));
        json_object_object_add(o, "latency_us", l);
        free(v);
    }
    json_object_object_add(o, "transport", qp_totals(pf));
    return o;
}

static void finish(agent_perf *pf)
{
    pf->running = false;
    pf->finished_at = agent_now();
    event_del(pf->deadline);
    if (pf->done) {
        agent_perf_done_fn done = pf->done;
        pf->done = NULL;
        json_object *r = agent_perf_stats(pf);
        done(pf->done_user, r);
        json_object_put(r);
    }
}

static void error_wc(agent_perf *pf, const mrc_wc *wc)
{
    if (!pf->errors++) {
        pf->first_error = wc->status;
        util_log(UTIL_LOG_WARNING, "perf: QP %u completion failed (status %u)", wc->qp_num,
                 wc->status);
    }
    pf->stopping = true;
}

static perf_qp *qp_of(agent_perf *pf, uint32_t qpn)
{
    for (unsigned i = 0; i < pf->cfg.qps; i++) {
        if (mrc_qp_num(pf->q[i].m.qp) == qpn) {
            return &pf->q[i];
        }
    }
    return NULL;
}

static void on_recv(agent_perf *pf, perf_qp *q, const mrc_wc *wc, uint64_t now)
{
    uint64_t m = wc->imm_data;
    bool ping = pf->cfg.role == AGENT_PERF_PING;
    /* sink: slot m; pong: slot 0 (the ping writes there); ping: its echo lands in slot 1 */
    const uint8_t *at =
        pf->cfg.role == AGENT_PERF_SINK ? slot(pf, q, m) : q->m.mem + (ping ? pf->cfg.size : 0);
    uint64_t bad = wc->byte_len == pf->cfg.size ? check(pf, at, m) : pf->cfg.size;
    pf->bytes_bad += bad;
    pf->bytes_ok += pf->cfg.size - bad;
    if ((uint32_t)q->next != (uint32_t)m) {
        pf->out_of_order++;
    }
    q->next = m + 1;
    agent_qpmem_post_recvs(&q->m, 1);
    if (pf->cfg.role == AGENT_PERF_PONG) {
        pf->msgs++;
        pf->bytes += pf->cfg.size;
        if (!pf->start) {
            pf->start = now;
        }
        post_write(pf, q, m, 0, 1); /* the same bytes back, into the ping's slot 1 */
    } else if (ping) {
        if (pf->nlat < PERF_LAT_MAX) {
            pf->lat[pf->nlat++] = (now - pf->ping_sent_at) / 2;
        }
    } else {
        pf->msgs++;
        pf->bytes += pf->cfg.size;
        if (!pf->start) {
            pf->start = now;
        }
    }
}

static void poll_cq(void *user, uint64_t now)
{
    agent_perf *pf = user;
    mrc_wc wc[64];
    int n;
    while ((n = mrc_poll_cq(pf->cq, 64, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            perf_qp *q = qp_of(pf, wc[i].qp_num);
            if (!q) {
                continue;
            }
            if (wc[i].status != MRC_WC_SUCCESS) {
                error_wc(pf, &wc[i]);
            } else if (wc[i].opcode == MRC_WC_RECV_RDMA_WITH_IMM) {
                on_recv(pf, q, &wc[i], now);
                if (pf->cfg.role == AGENT_PERF_PING && pf->running) {
                    pf->msgs++;
                    pf->bytes += pf->cfg.size;
                    q->next = wc[i].imm_data + 1;
                    if (source_may_post(pf, now)) {
                        ping_send(pf, now);
                    } else {
                        finish(pf);
                    }
                }
            } else if (pf->cfg.role == AGENT_PERF_SOURCE) {
                q->outstanding--;
                pf->msgs++;
                pf->bytes += pf->cfg.size;
            } else {
                q->outstanding--;
            }
        }
    }
    if (pf->running && pf->cfg.role == AGENT_PERF_SOURCE) {
        source_fill(pf, now);
        uint64_t left = 0;
        for (unsigned i = 0; i < pf->cfg.qps; i++) {
            left += pf->q[i].outstanding;
        }
        if (!left && !source_may_post(pf, now)) {
            finish(pf);
        }
    } else if (pf->running && pf->stopping) {
        finish(pf);
    }
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    agent_perf *pf = arg;
    (void)fd;
    (void)what;
    /* the window closed: a source stops posting and ends when its writes complete; a ping
     * that lost its echo to a failed QP ends now */
    pf->stopping = true;
    poll_cq(pf, agent_now());
    if (pf->running && pf->cfg.role == AGENT_PERF_PING) {
        finish(pf);
    }
    agent_io_kick(agent_node_io(pf->node));
}

int agent_perf_new(agent_node *node, uint32_t peer, const agent_perf_cfg *cfg, agent_perf **pperf,
                   char *err, size_t errlen)
{
    if (cfg->qps < 1 || cfg->qps > PERF_MAX_QPS || cfg->size < 1 || cfg->size > PERF_MAX_SIZE ||
        cfg->slots < 2 || (uint64_t)cfg->slots * cfg->size > (1ull << 30)) {
        snprintf(err, errlen, "qps must be 1..%d, size 1..%u, slots >= 2 and slots x size <= 1 GiB",
                 PERF_MAX_QPS, PERF_MAX_SIZE);
        return -EINVAL;
    }
    agent_perf *pf = util_xcalloc(1, sizeof(*pf));
    int rv;
    pf->node = node;
    pf->peer = peer;
    pf->cfg = *cfg;
    pf->q = util_xcalloc(cfg->qps, sizeof(perf_qp));
    pf->block = util_xmalloc(((size_t)cfg->size / 8 + 1) * 8);
    for (size_t k = 0; k <= cfg->size / 8; k++) {
        pf->block[k] = mix(cfg->size * 0x100000001b3ull + k);
    }
    if (cfg->role == AGENT_PERF_PING) {
        pf->lat = util_xmalloc(PERF_LAT_MAX * sizeof(uint64_t));
    }
    unsigned wr = cfg->slots + 8;
    rv = mrc_cq_new(agent_node_ctx(node), 4 * wr * cfg->qps, &pf->cq);
    for (unsigned i = 0; rv == 0 && i < cfg->qps; i++) {
        rv = agent_qpmem_init(&pf->q[i].m, node, peer, pf->cq, wr, (size_t)cfg->slots * cfg->size,
                              pf);
    }
    if (rv != 0) {
        snprintf(err, errlen, "cannot make a QP toward %s: %s",
                 fab_host_name(agent_node_topo(node), peer), mrc_strerror(rv));
        agent_perf_free(pf);
        return rv;
    }
    pf->deadline = evtimer_new(agent_node_base(node), on_deadline, pf);
    agent_node_add_poller(node, poll_cq, pf);
    *pperf = pf;
    return 0;
}

void agent_perf_free(agent_perf *pf)
{
    if (!pf) {
        return;
    }
    agent_node_del_poller(pf->node, poll_cq, pf);
    if (pf->deadline) {
        event_free(pf->deadline);
    }
    for (unsigned i = 0; i < pf->cfg.qps; i++) {
        agent_qpmem_fini(&pf->q[i].m, pf->node);
    }
    mrc_cq_free(pf->cq);
    free(pf->q);
    free(pf->block);
    free(pf->lat);
    free(pf);
}

json_object *agent_perf_local(const agent_perf *pf)
{
    json_object *a = json_object_new_array();
    for (unsigned i = 0; i < pf->cfg.qps; i++) {
        json_object_array_add(a, agent_qpmem_info(&pf->q[i].m));
    }
    return a;
}

int agent_perf_connect(agent_perf *pf, json_object *remote, char *err, size_t errlen)
{
    if (pf->connected) {
        snprintf(err, errlen, "already connected");
        return -EINVAL;
    }
    if (!json_object_is_type(remote, json_type_array) ||
        json_object_array_length(remote) != pf->cfg.qps) {
        snprintf(err, errlen, "the peer must give exactly %u QPs", pf->cfg.qps);
        return -EINVAL;
    }
    for (unsigned i = 0; i < pf->cfg.qps; i++) {
        int rv = agent_qpmem_connect(&pf->q[i].m, pf->node, json_object_array_get_idx(remote, i),
                                     (uint64_t)pf->cfg.slots * pf->cfg.size, err, errlen);
        if (rv != 0) {
            return rv;
        }
        if (pf->cfg.role != AGENT_PERF_SOURCE) {
            agent_qpmem_post_recvs(&pf->q[i].m, pf->cfg.slots + 8);
        }
    }
    pf->connected = true;
    return 0;
}

int agent_perf_run(agent_perf *pf, uint64_t duration_ns, uint64_t iters, agent_perf_done_fn done,
                   void *user)
{
    if (!pf->connected || pf->running ||
        (pf->cfg.role != AGENT_PERF_SOURCE && pf->cfg.role != AGENT_PERF_PING)) {
        return -EINVAL;
    }
    uint64_t now = agent_now();
    pf->running = true;
    pf->stopping = false;
    pf->start = now;
    pf->end_at = now + duration_ns;
    pf->iters = iters;
    pf->done = done;
    pf->done_user = user;
    if (!iters) {
        struct timeval tv = {.tv_sec = (time_t)(duration_ns / 1000000000ull),
                             .tv_usec = (suseconds_t)(duration_ns % 1000000000ull / 1000)};
        evtimer_add(pf->deadline, &tv);
    }
    if (pf->cfg.role == AGENT_PERF_SOURCE) {
        source_fill(pf, now);
    } else {
        ping_send(pf, now);
    }
    agent_io_kick(agent_node_io(pf->node));
    return 0;
}
