/* SPDX-License-Identifier: MIT */
/* mrc-perf's ring all-reduce, one rank, run inside the agent: a sum of float32 vectors over
 * a ring of hosts (reduce-scatter, then all-gather), each result checked element by element. */
#ifndef AGENT_RING_H
#define AGENT_RING_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_node.h"

#define AGENT_RING_MAX_RANKS 128
#define AGENT_RING_MAX_SIZE (1ull << 30)

typedef struct agent_ring_cfg {
    unsigned rank, n; /* this rank of n (2..128) */
    uint64_t size;    /* bytes of the vector: whole float32s, at least one per rank, <= 1 GiB */
} agent_ring_cfg;

/* Whether the agent runs a ring of |cfg|: 0, or -EINVAL with a sentence in |err|. */
int agent_ring_cfg_check(const agent_ring_cfg *cfg, char *err, size_t errlen);

/* The vector of |size| bytes (a multiple of 4) cut into |n| chunks of whole elements, as
 * even as they go: the first (elements mod n) chunks are one element longer. Chunk |c|
 * starts |*poff| bytes in and is |*plen| bytes long. */
void agent_ring_chunk(uint64_t size, unsigned n, unsigned c, uint64_t *poff, uint64_t *plen);
/* The chunk rank |rank| of |n| writes to the next rank at step |s| (0..2(n-1)-1), and the one
 * it adds in (reduce-scatter, s < n-1) or copies (all-gather) from the previous rank's. */
unsigned agent_ring_send_chunk(unsigned rank, unsigned n, unsigned s);
unsigned agent_ring_recv_chunk(unsigned rank, unsigned n, unsigned s);
/* Whether a rank that wants the run to end may mark its write of step |s| "last iteration":
 * a mark sent then reaches every rank of |n| before it finishes the iteration. */
bool agent_ring_can_mark(unsigned n, unsigned s);

typedef struct agent_ring agent_ring;

/* A rank between hosts |prev| and |next|: a QP to each. 0, -EINVAL or a negative MRC_ERR_*
 * with a sentence in |err|. */
int agent_ring_new(agent_node *node, uint32_t prev, uint32_t next, const agent_ring_cfg *cfg,
                   agent_ring **pring, char *err, size_t errlen);
void agent_ring_free(agent_ring *ring);

/* What the neighbours need: {"to_next": QP info for next, "from_prev": QP info for prev}. */
json_object *agent_ring_local(const agent_ring *ring);
/* |next| is the next rank's "from_prev", |prev| the previous rank's "to_next". */
int agent_ring_connect(agent_ring *ring, json_object *next, json_object *prev, char *err,
                       size_t errlen);

/*
 * Runs iterations for |duration_ns| (or |iters|, if not 0), and every rank of the ring ends
 * after the same iteration: the first rank that wants to stop (its duration over, its
 * iterations done, agent_ring_stop) marks its writes, and every rank learns it within that
 * iteration. |progress| (may be NULL) gets a line about every |every_ns|; |done| the result
 * once the last iteration is checked, a QP failed, or, once this rank wants to stop, nothing
 * moved for 2 s (a neighbour left: "stalled"). 0 or -EINVAL (not connected, already running).
 */
typedef void (*agent_ring_fn)(void *user, json_object *o);
int agent_ring_run(agent_ring *ring, uint64_t duration_ns, uint64_t iters, uint64_t every_ns,
                   agent_ring_fn progress, agent_ring_fn done, void *user);
json_object *agent_ring_stats(const agent_ring *ring);
/* Asks the ring to end after the iteration every rank can still learn of (this one or the
 * next); |done| gets the result then. -EINVAL if not running. */
int agent_ring_stop(agent_ring *ring);

/*
 * The result every rank prints alike. The ranks pass a tally around the ring: rank 0 starts it
 * with agent_ring_tally(NULL, its result), each next rank adds its own; the full tally goes
 * around once more. agent_ring_tally returns a new object (|tally| is not changed).
 * agent_ring_summary makes the printed result of the full |tally|: the same on every rank but
 * for "rank" and "local" (|local|, this rank's own result, taken). agent_ring_failed says
 * whether a result or summary reports a wrong element, a failed write or QP, a stall, or ranks
 * that disagree.
 */
json_object *agent_ring_tally(const json_object *tally, const json_object *result);
json_object *agent_ring_summary(const json_object *tally, unsigned rank, json_object *local);
bool agent_ring_failed(const json_object *result);

#endif
