/* SPDX-License-Identifier: MIT */
/* One rank of a ring all-reduce on the agent's engine. The vector is n chunks of whole
 * elements (agent_ring_chunk: as even as they go, so any vector of at least one element per
 * rank divides); in step s of reduce-scatter a rank writes chunk (rank - s) to the next rank's
 * staging slot s and adds what the previous rank wrote to its slot s into chunk (rank - s - 1),
 * which it sends next; all-gather passes the finished chunks on the same way, copying. Each
 * write carries its iteration, step and the "last iteration" mark as the immediate. Staging has
 * a set of slots per iteration parity: a rank two iterations ahead of its successor cannot be,
 * since finishing an iteration needs data that went through the successor after it finished
 * the one before.
 *
 * Every rank ends after the same iteration. A rank that wants to stop marks its writes of
 * steps 0..n-1 (in this iteration, or the next one if it is past them); a rank that receives
 * a mark passes it on in every later write of the iteration. A mark sent at step s <= n-1
 * reaches rank r+j with the write of step s+j-1 <= 2n-3, the last step: every rank knows
 * before it finishes the iteration, and none starts another. */
#include "agent_ring.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_qpmem.h"
#include "util.h"

#define RING_MAX_STEPS (2 * (AGENT_RING_MAX_RANKS - 1))
/* the immediate: iteration (mod 2^23) | last-iteration mark | step */
#define IMM_STEP 0xffu
#define IMM_LAST 0x100u
#define IMM_ITER_SHIFT 9
#define IMM_ITER_MASK 0x7fffffu
/* once a rank wants to stop, this long without a packet moving on its QPs ends the run */
#define RING_STALL_NS 2000000000ull
#define RING_TICK_US 250000

struct agent_ring {
    agent_node *node;
    uint32_t prev, next;
    agent_ring_cfg cfg;
    uint64_t slot;  /* bytes of a staging slot: the longest chunk */
    unsigned steps; /* per iteration: 2 (n - 1) */
    mrc_cq *cq;
    agent_qpmem to_next;   /* writes from the vector */
    agent_qpmem from_prev; /* the staging slots the previous rank writes */
    bool connected, running, stopping;
    bool want_stop; /* this rank wants the run to end: time, iterations or agent_ring_stop */
    bool last;      /* this iteration is the run's last */
    bool stalled;
    uint64_t iter, step_sent, step_rcvd, outstanding;
    uint64_t start, end_at, iters, finished_at, every, last_progress, iters_at_progress;
    uint64_t moved, moved_at; /* packets seen on the QPs, and when that last changed */
    struct event *tick;
    agent_ring_fn progress, done;
    void *user;
    /* the immediates of steps of the next iteration that came before this one ended (the
     * previous rank may start it once this rank has received all it sent, before this
     * rank's own writes are acknowledged) */
    uint32_t early[RING_MAX_STEPS];
    unsigned nearly;
    uint64_t done_iters, elems_ok, elems_bad, out_of_order, errors;
    uint32_t first_error;
};

int agent_ring_cfg_check(const agent_ring_cfg *cfg, char *err, size_t errlen)
{
    if (cfg->n < 2 || cfg->n > AGENT_RING_MAX_RANKS || cfg->rank >= cfg->n) {
        snprintf(err, errlen, "a ring has 2..%d ranks, and this rank is one of them",
                 AGENT_RING_MAX_RANKS);
        return -EINVAL;
    }
    if (cfg->size % 4 || cfg->size < 4ull * cfg->n || cfg->size > AGENT_RING_MAX_SIZE) {
        snprintf(err, errlen,
                 "a ring's vector is whole float32s (a multiple of 4 bytes), at least one per "
                 "rank (%u bytes for %u ranks) and at most 1 GiB, not %" PRIu64 " bytes",
                 4 * cfg->n, cfg->n, cfg->size);
        return -EINVAL;
    }
    return 0;
}

void agent_ring_chunk(uint64_t size, unsigned n, unsigned c, uint64_t *poff, uint64_t *plen)
{
    uint64_t elems = size / 4, base = elems / n, extra = elems % n;
    *poff = 4 * (c * base + (c < extra ? c : extra));
    *plen = 4 * (base + (c < extra));
}

static unsigned mod_n(long long c, unsigned n)
{
    return (unsigned)(((c % (long long)n) + n) % n);
}

/* Reduce-scatter sends (rank - s), all-gather (rank + 1 - t) at its step t = s - (n - 1). */
unsigned agent_ring_send_chunk(unsigned rank, unsigned n, unsigned s)
{
    unsigned h = n - 1;
    return s < h ? mod_n((long long)rank - s, n) : mod_n((long long)rank + 1 - (s - h), n);
}

/* What the previous rank sends at the same step. */
unsigned agent_ring_recv_chunk(unsigned rank, unsigned n, unsigned s)
{
    return agent_ring_send_chunk(mod_n((long long)rank - 1, n), n, s);
}

/* Rank r+j receives a mark sent at step s with the write of step s+j-1; the last, j = n-1, is
 * within the iteration's 2n-2 steps while s <= n-1. */
bool agent_ring_can_mark(unsigned n, unsigned s)
{
    return s < n;
}

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

static uint64_t slot_off(const agent_ring *r, uint64_t k, unsigned s)
{
    return ((k & 1) * r->steps + s) * r->slot;
}

static uint64_t recv_len(const agent_ring *r, unsigned s)
{
    uint64_t off, len;
    agent_ring_chunk(r->cfg.size, r->cfg.n, agent_ring_recv_chunk(r->cfg.rank, r->cfg.n, s), &off,
                     &len);
    return len;
}

static void send_step(agent_ring *r, unsigned s)
{
    uint64_t off, len, now = agent_now();
    if (r->iters ? r->done_iters + 1 >= r->iters : now >= r->end_at) {
        r->want_stop = true;
    }
    /* a later mark might not reach every rank within the iteration: it goes on the next */
    if (r->want_stop && agent_ring_can_mark(r->cfg.n, s)) {
        r->last = true;
    }
    uint32_t imm =
        (uint32_t)(r->iter & IMM_ITER_MASK) << IMM_ITER_SHIFT | (r->last ? IMM_LAST : 0) | s;
    agent_ring_chunk(r->cfg.size, r->cfg.n, agent_ring_send_chunk(r->cfg.rank, r->cfg.n, s), &off,
                     &len);
    if (agent_qpmem_write(&r->to_next, imm, (size_t)off, slot_off(r, r->iter, s), (uint32_t)len,
                          imm) == 0) {
        r->outstanding++;
        r->step_sent = s + 1;
    } else {
        r->errors++;
        r->stopping = true;
    }
}

static void on_step(agent_ring *r, uint32_t imm);

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
    uint64_t ns = r->start ? end - r->start : 0;
    double secs = (double)ns / 1e9;
    double algbw = secs > 0 ? (double)r->done_iters * (double)r->cfg.size * 8 / secs / 1e9 : 0;
    json_object_object_add(o, "test", json_object_new_string("ring_allreduce"));
    json_object_object_add(o, "rank", json_object_new_int((int)r->cfg.rank));
    json_object_object_add(o, "ranks", json_object_new_int((int)r->cfg.n));
    json_object_object_add(o, "size", json_object_new_uint64(r->cfg.size));
    json_object_object_add(o, "elements", json_object_new_uint64(r->cfg.size / 4));
    json_object_object_add(o, "iterations", json_object_new_uint64(r->done_iters));
    json_object_object_add(o, "elapsed_ns", json_object_new_uint64(ns));
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
    if (r->errors) {
        json_object_object_add(o, "first_error", json_object_new_int((int)r->first_error));
    }
    json_object_object_add(o, "stalled", json_object_new_boolean(r->stalled));
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
    event_del(r->tick);
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

/* A write from the previous rank: this iteration's next step, or an early one of the next. */
static void on_write(agent_ring *r, const mrc_wc *wc)
{
    unsigned s = wc->imm_data & IMM_STEP;
    uint32_t k = wc->imm_data >> IMM_ITER_SHIFT;
    bool len_ok = s < r->steps && wc->byte_len == recv_len(r, s);
    agent_qpmem_post_recvs(&r->from_prev, 1);
    if (len_ok && k == (uint32_t)((r->iter + 1) & IMM_ITER_MASK) && s == r->nearly &&
        r->nearly < RING_MAX_STEPS) {
        r->early[r->nearly++] = wc->imm_data;
    } else if (len_ok && k == (uint32_t)(r->iter & IMM_ITER_MASK) && s == r->step_rcvd) {
        on_step(r, wc->imm_data);
    } else {
        r->out_of_order++;
        r->stopping = true;
    }
}

/* Step s arrived from the previous rank: reduce or copy it, then pass on what it finished
 * (with the mark, if this is the last iteration). */
static void on_step(agent_ring *r, uint32_t imm)
{
    unsigned s = imm & IMM_STEP, h = r->cfg.n - 1;
    uint64_t off, len;
    const float *in = (const float *)(void *)(r->from_prev.mem + slot_off(r, r->iter, s));
    agent_ring_chunk(r->cfg.size, r->cfg.n, agent_ring_recv_chunk(r->cfg.rank, r->cfg.n, s), &off,
                     &len);
    float *out = vec(r) + off / 4;
    if (imm & IMM_LAST) {
        r->last = true;
    }
    if (s < h) {
        for (uint64_t j = 0; j < len / 4; j++) {
            out[j] += in[j];
        }
    } else {
        memcpy(out, in, len);
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
        if (r->last || r->stopping) {
            finish(r, now);
        } else {
            start_iteration(r);
        }
    } else if (r->stopping && (r->errors || r->out_of_order)) {
        finish(r, now);
    }
}

/* Packets that moved on the ring's QPs: data in from the previous rank, acknowledgements in
 * from the next (retransmissions alone are not progress). */
static uint64_t moved(const agent_ring *r)
{
    mrc_qp_stats in, out;
    mrc_qp_get_stats(r->from_prev.qp, &in);
    mrc_qp_get_stats(r->to_next.qp, &out);
    return in.data_pkts_rcvd + out.acks_rcvd + out.sacks_rcvd;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    agent_ring *r = arg;
    uint64_t now = agent_now(), m = moved(r);
    (void)fd;
    (void)what;
    if (!r->running) {
        return;
    }
    if (!r->iters && now >= r->end_at) {
        r->want_stop = true;
    }
    if (m != r->moved) {
        r->moved = m;
        r->moved_at = now;
    }
    /* the other ranks end with this one unless one stopped or failed: then nothing moves,
     * and this rank ends here, its run marked stalled */
    if (r->want_stop && now - r->moved_at >= RING_STALL_NS) {
        r->stalled = true;
        finish(r, now);
    }
}

int agent_ring_stop(agent_ring *r)
{
    if (!r->running) {
        return -EINVAL;
    }
    r->want_stop = true;
    return 0;
}

int agent_ring_new(agent_node *node, uint32_t prev, uint32_t next, const agent_ring_cfg *cfg,
                   agent_ring **pring, char *err, size_t errlen)
{
    uint64_t off;
    int rv = agent_ring_cfg_check(cfg, err, errlen);
    if (rv != 0) {
        return rv;
    }
    agent_ring *r = util_xcalloc(1, sizeof(*r));
    r->node = node;
    r->prev = prev;
    r->next = next;
    r->cfg = *cfg;
    agent_ring_chunk(cfg->size, cfg->n, 0, &off, &r->slot); /* chunk 0 is a longest */
    r->steps = 2 * (cfg->n - 1);
    unsigned wr = r->steps + 8;
    rv = mrc_cq_new(agent_node_ctx(node), 4 * wr, &r->cq);
    if (rv == 0) {
        rv = agent_qpmem_init(&r->to_next, node, next, r->cq, wr, cfg->size, r);
    }
    if (rv == 0) {
        rv = agent_qpmem_init(&r->from_prev, node, prev, r->cq, wr, 2 * r->steps * r->slot, r);
    }
    if (rv != 0) {
        snprintf(err, errlen, "cannot make the ring's QPs: %s", mrc_strerror(rv));
        agent_ring_free(r);
        return rv;
    }
    r->tick = event_new(agent_node_base(node), -1, EV_PERSIST, on_tick, r);
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
    if (r->tick) {
        event_free(r->tick);
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
    if ((rv = agent_qpmem_connect(&r->to_next, r->node, next, 2 * r->steps * r->slot, err,
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
    r->stopping = r->want_stop = r->last = r->stalled = false;
    r->start = r->last_progress = r->moved_at = now;
    r->moved = moved(r);
    r->end_at = now + duration_ns;
    r->iters = iters;
    r->every = every_ns ? every_ns : 1000000000ull;
    r->progress = prog;
    r->done = done;
    r->user = user;
    struct timeval tv = {.tv_usec = RING_TICK_US};
    evtimer_add(r->tick, &tv);
    start_iteration(r);
    agent_io_kick(agent_node_io(r->node));
    return 0;
}

/* The tally and the summary: JSON with whole numbers only, so that every rank computes the
 * summary's figures from the same integers and prints the same digits. */

static uint64_t get_u64(const json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0;
}

static bool get_bool(const json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static bool has(const json_object *o, const char *key)
{
    return o && json_object_object_get_ex(o, key, NULL);
}

json_object *agent_ring_tally(const json_object *tally, const json_object *result)
{
    static const char *const sums[] = {"elements_checked", "elements_bad", "out_of_order", "errors",
                                       "retx_pkts"};
    json_object *t = json_object_new_object();
    uint64_t it = get_u64(result, "iterations"), ns = get_u64(result, "elapsed_ns");
    bool first = !tally;
    bool differ = get_bool(tally, "differ") ||
                  (!first && (get_u64(tally, "ranks") != get_u64(result, "ranks") ||
                              get_u64(tally, "size") != get_u64(result, "size")));
    uint64_t imin = get_u64(tally, "iterations_min"), imax = get_u64(tally, "iterations_max");
    json_object_object_add(t, "ranks", json_object_new_uint64(get_u64(result, "ranks")));
    json_object_object_add(t, "size", json_object_new_uint64(get_u64(result, "size")));
    json_object_object_add(t, "ranks_reported",
                           json_object_new_uint64(get_u64(tally, "ranks_reported") + 1));
    json_object_object_add(
        t, "ranks_failed",
        json_object_new_uint64(get_u64(tally, "ranks_failed") + agent_ring_failed(result)));
    json_object_object_add(t, "iterations_min",
                           json_object_new_uint64(first || it < imin ? it : imin));
    json_object_object_add(t, "iterations_max",
                           json_object_new_uint64(first || it > imax ? it : imax));
    uint64_t nsmax = get_u64(tally, "elapsed_ns_max");
    json_object_object_add(t, "elapsed_ns_max", json_object_new_uint64(ns > nsmax ? ns : nsmax));
    for (size_t k = 0; k < sizeof(sums) / sizeof(sums[0]); k++) {
        json_object_object_add(
            t, sums[k], json_object_new_uint64(get_u64(tally, sums[k]) + get_u64(result, sums[k])));
    }
    json_object_object_add(
        t, "qp_error",
        json_object_new_boolean(get_bool(tally, "qp_error") || get_bool(result, "qp_error")));
    json_object_object_add(
        t, "stalled",
        json_object_new_boolean(get_bool(tally, "stalled") || get_bool(result, "stalled")));
    json_object_object_add(t, "differ", json_object_new_boolean(differ));
    return t;
}

json_object *agent_ring_summary(const json_object *tally, unsigned rank, json_object *local)
{
    static const char *const copied[] = {"elements_checked", "elements_bad", "out_of_order",
                                         "errors",           "retx_pkts",    "ranks_failed"};
    json_object *o = json_object_new_object();
    uint64_t n = get_u64(tally, "ranks"), size = get_u64(tally, "size");
    uint64_t it = get_u64(tally, "iterations_min"), ns = get_u64(tally, "elapsed_ns_max");
    /* the run lasted as long as its slowest rank: from the first start to the last end */
    double secs = (double)ns / 1e9;
    double algbw = ns ? (double)it * (double)size * 8 / secs / 1e9 : 0;
    bool agreed = n >= 2 && get_u64(tally, "ranks_reported") == n && !get_bool(tally, "differ") &&
                  it == get_u64(tally, "iterations_max");
    json_object_object_add(o, "test", json_object_new_string("ring_allreduce"));
    json_object_object_add(o, "rank", json_object_new_uint64(rank));
    json_object_object_add(o, "ranks", json_object_new_uint64(n));
    json_object_object_add(o, "size", json_object_new_uint64(size));
    json_object_object_add(o, "elements", json_object_new_uint64(size / 4));
    json_object_object_add(o, "iterations", json_object_new_uint64(it));
    json_object_object_add(o, "seconds", json_object_new_double(secs));
    json_object_object_add(o, "algbw_gbps", json_object_new_double(algbw));
    json_object_object_add(o, "busbw_gbps",
                           json_object_new_double(n ? algbw * 2 * (double)(n - 1) / (double)n : 0));
    for (size_t k = 0; k < sizeof(copied) / sizeof(copied[0]); k++) {
        json_object_object_add(o, copied[k], json_object_new_uint64(get_u64(tally, copied[k])));
    }
    json_object_object_add(o, "qp_error", json_object_new_boolean(get_bool(tally, "qp_error")));
    json_object_object_add(o, "stalled", json_object_new_boolean(get_bool(tally, "stalled")));
    json_object_object_add(o, "agreed", json_object_new_boolean(agreed));
    json_object_object_add(o, "local", local);
    return o;
}

bool agent_ring_failed(const json_object *o)
{
    return get_u64(o, "elements_bad") || get_u64(o, "errors") || get_u64(o, "out_of_order") ||
           get_bool(o, "qp_error") || get_bool(o, "stalled") || get_u64(o, "ranks_failed") ||
           (has(o, "agreed") && !get_bool(o, "agreed"));
}
