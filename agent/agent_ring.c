/* SPDX-License-Identifier: MIT */
/* One rank of a ring all-reduce on the agent's engine. The vector is n chunks; in step s of
 * reduce-scatter a rank writes chunk (rank - s) to the next rank's staging slot s and adds
 * what the previous rank wrote to its slot s into chunk (rank - s - 1), which it sends next;
 * all-gather passes the finished chunks on the same way, copying. Each write carries its
 * iteration and step as the immediate. Staging has a set of slots per iteration parity: a
 * rank two iterations ahead of its successor cannot be, since finishing an iteration needs
 * data that went through the successor after it finished the one before. */
#include "agent_ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_qpmem.h"
#include "util.h"

#define RING_MAX_RANKS 128
#define RING_MAX_STEPS (2 * (RING_MAX_RANKS - 1))

struct agent_ring {
    agent_node *node;
    uint32_t prev, next;
    agent_ring_cfg cfg;
    uint64_t chunk; /* bytes */
    unsigned steps; /* per iteration: 2 (n - 1) */
    mrc_cq *cq;
    agent_qpmem to_next;   /* writes from the vector */
    agent_qpmem from_prev; /* the staging slots the previous rank writes */
    bool connected, running, stopping;
    uint64_t iter, step_sent, step_rcvd, outstanding;
    uint64_t start, end_at, iters, finished_at, every, last_progress, iters_at_progress;
    struct event *deadline;
    agent_ring_fn progress, done;
    void *user;
    /* steps of the next iteration that came before this one ended (the previous rank may
     * start it once this rank has received all it sent, before this rank's own writes are
     * acknowledged) */
    uint8_t early[RING_MAX_STEPS];
    unsigned nearly;
    uint64_t done_iters, elems_ok, elems_bad, out_of_order, errors;
    uint32_t first_error;
};

static float *vec(const agent_ring *r)
{
    return (float *)(void *)r->to_next.mem;
}

/* Element j of rank |rank|'s vector in iteration k, and the sum over the ring: small whole
 * numbers, so float sums are exact and any misplaced or missing chunk shows. */
static float elem(unsigned rank, uint64_t k, uint64_t j)
{
    return (float)((rank + 1) * (j % 13 + 1) + k % 5);
}

static float sum(unsigned n, uint64_t k, uint64_t j)
{
    return (float)((uint64_t)n * (n + 1) / 2 * (j % 13 + 1) + n * (k % 5));
}

static void init_vector(agent_ring *r)
{
    float *v = vec(r);
    uint64_t len = r->cfg.size / 4;
    for (uint64_t j = 0; j < len; j++) {
        v[j] = elem(r->cfg.rank, r->iter, j);
    }
}

static void check_vector(agent_ring *r)
{
    const float *v = vec(r);
    uint64_t len = r->cfg.size / 4, bad = 0;
    for (uint64_t j = 0; j < len; j++) {
        bad += v[j] != sum(r->cfg.n, r->iter, j);
    }
    r->elems_bad += bad;
    r->elems_ok += len - bad;
}

static unsigned chunk_of(const agent_ring *r, long long c)
{
    long long n = r->cfg.n;
    return (unsigned)(((c % n) + n) % n);
}

/* The chunk a step sends: reduce-scatter (rank - s), all-gather (rank + 1 - t). */
static unsigned send_chunk(const agent_ring *r, unsigned s)
{
    unsigned h = r->cfg.n - 1;
    return s < h ? chunk_of(r, (long long)r->cfg.rank - s)
                 : chunk_of(r, (long long)r->cfg.rank + 1 - (s - h));
}

static uint64_t slot_off(const agent_ring *r, uint64_t k, unsigned s)
{
    return ((k & 1) * r->steps + s) * r->chunk;
}

static void send_step(agent_ring *r, unsigned s)
{
    uint32_t imm = (uint32_t)(r->iter << 8 | s);
    if (agent_qpmem_write(&r->to_next, imm, (size_t)send_chunk(r, s) * r->chunk,
                          slot_off(r, r->iter, s), (uint32_t)r->chunk, imm) == 0) {
        r->outstanding++;
        r->step_sent = s + 1;
    } else {
        r->errors++;
        r->stopping = true;
    }
}

static void on_step(agent_ring *r, unsigned s);

static void start_iteration(agent_ring *r)
{
    init_vector(r);
    r->step_sent = r->step_rcvd = 0;
    send_step(r, 0);
    unsigned n = r->nearly;
    r->nearly = 0;
    for (unsigned i = 0; i < n; i++) {
        on_step(r, r->early[i]);
    }
}

static json_object *stats(const agent_ring *r, uint64_t now)
{
    json_object *o = json_object_new_object();
    uint64_t end = r->finished_at ? r->finished_at : now;
    double secs = r->start ? (double)(end - r->start) / 1e9 : 0;
    double algbw = secs > 0 ? (double)r->done_iters * (double)r->cfg.size * 8 / secs / 1e9 : 0;
    json_object_object_add(o, "test", json_object_new_string("ring_allreduce"));
    json_object_object_add(o, "rank", json_object_new_int((int)r->cfg.rank));
    json_object_object_add(o, "ranks", json_object_new_int((int)r->cfg.n));
    json_object_object_add(o, "size", json_object_new_uint64(r->cfg.size));
    json_object_object_add(o, "iterations", json_object_new_uint64(r->done_iters));
    json_object_object_add(o, "seconds", json_object_new_double(secs));
    json_object_object_add(o, "algbw_gbps", json_object_new_double(algbw));
    /* what each host's links carry, as nccl-tests reports it */
    json_object_object_add(o, "busbw_gbps",
                           json_object_new_double(algbw * 2 * (r->cfg.n - 1) / r->cfg.n));
    json_object_object_add(o, "elements_checked",
                           json_object_new_uint64(r->elems_ok + r->elems_bad));
    json_object_object_add(o, "elements_bad", json_object_new_uint64(r->elems_bad));
    json_object_object_add(o, "out_of_order", json_object_new_uint64(r->out_of_order));
    json_object_object_add(o, "errors", json_object_new_uint64(r->errors));
    bool qp_error = false;
    uint64_t retx = 0;
    const agent_qpmem *qs[2] = {&r->to_next, &r->from_prev};
    for (int i = 0; i < 2; i++) {
        mrc_qp_stats st;
        mrc_qp_get_stats(qs[i]->qp, &st);
        qp_error |= st.state == MRC_QPS_ERR;
        retx += st.retx_pkts;
    }
    json_object_object_add(o, "retx_pkts", json_object_new_uint64(retx));
    json_object_object_add(o, "qp_error", json_object_new_boolean(qp_error));
    return o;
}

json_object *agent_ring_stats(const agent_ring *r)
{
    return stats(r, agent_now());
}

static void finish(agent_ring *r, uint64_t now)
{
    r->running = false;
    r->finished_at = now;
    event_del(r->deadline);
    if (r->done) {
        agent_ring_fn done = r->done;
        r->done = NULL;
        json_object *o = stats(r, now);
        done(r->user, o);
        json_object_put(o);
    }
}

static void progress(agent_ring *r, uint64_t now)
{
    if (!r->progress || now - r->last_progress < r->every) {
        return;
    }
    double secs = (double)(now - r->last_progress) / 1e9;
    double algbw =
        (double)(r->done_iters - r->iters_at_progress) * (double)r->cfg.size * 8 / secs / 1e9;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "progress", json_object_new_double((double)(now - r->start) / 1e9));
    json_object_object_add(o, "iterations", json_object_new_uint64(r->done_iters));
    json_object_object_add(o, "busbw_gbps",
                           json_object_new_double(algbw * 2 * (r->cfg.n - 1) / r->cfg.n));
    json_object_object_add(o, "elements_bad", json_object_new_uint64(r->elems_bad));
    r->progress(r->user, o);
    json_object_put(o);
    r->last_progress = now;
    r->iters_at_progress = r->done_iters;
}

static bool more(const agent_ring *r, uint64_t now)
{
    return !r->stopping && (r->iters ? r->done_iters < r->iters : now < r->end_at);
}

/* A write from the previous rank: this iteration's next step, or an early one of the next. */
static void on_write(agent_ring *r, const mrc_wc *wc)
{
    unsigned s = wc->imm_data & 0xff;
    uint32_t k = wc->imm_data >> 8;
    agent_qpmem_post_recvs(&r->from_prev, 1);
    if (wc->byte_len == r->chunk && k == (uint32_t)((r->iter + 1) & 0xffffff) && s == r->nearly &&
        r->nearly < RING_MAX_STEPS) {
        r->early[r->nearly++] = (uint8_t)s;
    } else if (wc->byte_len == r->chunk && k == (uint32_t)(r->iter & 0xffffff) &&
               s == r->step_rcvd) {
        on_step(r, s);
    } else {
        r->out_of_order++;
        r->stopping = true;
    }
}

/* Step s arrived from the previous rank: reduce or copy it, then pass on what it finished. */
static void on_step(agent_ring *r, unsigned s)
{
    unsigned h = r->cfg.n - 1;
    const float *in = (const float *)(void *)(r->from_prev.mem + slot_off(r, r->iter, s));
    unsigned c = s < h ? chunk_of(r, (long long)r->cfg.rank - s - 1)
                       : chunk_of(r, (long long)r->cfg.rank - (s - h));
    float *out = vec(r) + (uint64_t)c * r->chunk / 4;
    if (s < h) {
        for (uint64_t j = 0; j < r->chunk / 4; j++) {
            out[j] += in[j];
        }
    } else {
        memcpy(out, in, r->chunk);
    }
    r->step_rcvd = s + 1;
    if (s + 1 < r->steps) {
        send_step(r, s + 1);
    }
}

static void poll_cq(void *user, uint64_t now)
{
    agent_ring *r = user;
    mrc_wc wc[64];
    int n;
    if (!r->running) {
        return;
    }
    while ((n = mrc_poll_cq(r->cq, 64, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            if (wc[i].status != MRC_WC_SUCCESS) {
                if (!r->errors++) {
                    r->first_error = wc[i].status;
                    util_log(UTIL_LOG_WARNING, "ring: QP %u completion failed (status %u)",
                             wc[i].qp_num, wc[i].status);
                }
                r->stopping = true;
            } else if (wc[i].opcode == MRC_WC_RECV_RDMA_WITH_IMM) {
                on_write(r, &wc[i]);
            } else {
                r->outstanding--;
            }
        }
    }
    if (r->step_rcvd == r->steps && r->step_sent == r->steps && !r->outstanding) {
        check_vector(r);
        r->done_iters++;
        r->iter++;
        progress(r, now);
        if (more(r, now)) {
            start_iteration(r);
        } else {
            finish(r, now);
        }
    } else if (r->stopping && (r->errors || r->out_of_order)) {
        finish(r, now);
    }
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    agent_ring *r = arg;
    (void)fd;
    (void)what;
    /* ranks end by their own clocks: one that stopped leaves its neighbours an iteration
     * that never completes, and a failed neighbour leaves them stuck; both end here */
    if (r->running) {
        finish(r, agent_now());
    }
}

int agent_ring_stop(agent_ring *r)
{
    if (!r->running) {
        return -EINVAL;
    }
    finish(r, agent_now());
    return 0;
}

int agent_ring_new(agent_node *node, uint32_t prev, uint32_t next, const agent_ring_cfg *cfg,
                   agent_ring **pring, char *err, size_t errlen)
{
    if (cfg->n < 2 || cfg->n > RING_MAX_RANKS || cfg->rank >= cfg->n || cfg->size == 0 ||
        cfg->size % (4ull * cfg->n) || cfg->size > (1ull << 30)) {
        snprintf(err, errlen,
                 "a ring has 2..%d ranks and a vector of a multiple of 4 x ranks "
                 "bytes, up to 1 GiB",
                 RING_MAX_RANKS);
        return -EINVAL;
    }
    agent_ring *r = util_xcalloc(1, sizeof(*r));
    r->node = node;
    r->prev = prev;
    r->next = next;
    r->cfg = *cfg;
    r->chunk = cfg->size / cfg->n;
    r->steps = 2 * (cfg->n - 1);
    unsigned wr = r->steps + 8;
    int rv = mrc_cq_new(agent_node_ctx(node), 4 * wr, &r->cq);
    if (rv == 0) {
        rv = agent_qpmem_init(&r->to_next, node, next, r->cq, wr, cfg->size, r);
    }
    if (rv == 0) {
        rv = agent_qpmem_init(&r->from_prev, node, prev, r->cq, wr, 2 * r->steps * r->chunk, r);
    }
    if (rv != 0) {
        snprintf(err, errlen, "cannot make the ring's QPs: %s", mrc_strerror(rv));
        agent_ring_free(r);
        return rv;
    }
    r->deadline = evtimer_new(agent_node_base(node), on_deadline, r);
    agent_node_add_poller(node, poll_cq, r);
    *pring = r;
    return 0;
}

void agent_ring_free(agent_ring *r)
{
    if (!r) {
        return;
    }
    agent_node_del_poller(r->node, poll_cq, r);
    if (r->deadline) {
        event_free(r->deadline);
    }
    agent_qpmem_fini(&r->to_next, r->node);
    agent_qpmem_fini(&r->from_prev, r->node);
    mrc_cq_free(r->cq);
    free(r);
}

json_object *agent_ring_local(const agent_ring *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "to_next", agent_qpmem_info(&r->to_next));
    json_object_object_add(o, "from_prev", agent_qpmem_info(&r->from_prev));
    return o;
}

int agent_ring_connect(agent_ring *r, json_object *next, json_object *prev, char *err,
                       size_t errlen)
{
    int rv;
    if (r->connected) {
        snprintf(err, errlen, "already connected");
        return -EINVAL;
    }
    if ((rv = agent_qpmem_connect(&r->to_next, r->node, next, 2 * r->steps * r->chunk, err,
                                  errlen)) != 0 ||
        (rv = agent_qpmem_connect(&r->from_prev, r->node, prev, r->cfg.size, err, errlen)) != 0) {
        return rv;
    }
    agent_qpmem_post_recvs(&r->from_prev, r->steps + 8);
    r->connected = true;
    return 0;
}

int agent_ring_run(agent_ring *r, uint64_t duration_ns, uint64_t iters, uint64_t every_ns,
                   agent_ring_fn prog, agent_ring_fn done, void *user)
{
    if (!r->connected || r->running) {
        return -EINVAL;
    }
    uint64_t now = agent_now();
    r->running = true;
    r->stopping = false;
    r->start = r->last_progress = now;
    r->end_at = now + duration_ns;
    r->iters = iters;
    r->every = every_ns ? every_ns : 1000000000ull;
    r->progress = prog;
    r->done = done;
    r->user = user;
    if (!iters) {
        struct timeval tv = {.tv_sec = (time_t)(duration_ns / 1000000000ull) + 2};
        evtimer_add(r->deadline, &tv);
    }
    start_iteration(r);
    agent_io_kick(agent_node_io(r->node));
    return 0;
}
