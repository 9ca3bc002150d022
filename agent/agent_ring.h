/* SPDX-License-Identifier: MIT */
/* mrc-perf's ring all-reduce, one rank, run inside the agent: a sum of float32 vectors over
 * a ring of hosts (reduce-scatter, then all-gather), each result checked element by element. */
#ifndef AGENT_RING_H
#define AGENT_RING_H

#include <json-c/json.h>
#include <stdint.h>

#include "agent_node.h"

typedef struct agent_ring_cfg {
    unsigned rank, n; /* this rank of n (2..128) */
    uint64_t size;    /* bytes of the vector: a multiple of 4 x n, up to 1 GiB */
} agent_ring_cfg;

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

/* Runs iterations for |duration_ns| (or |iters|, if not 0). |progress| (may be NULL) gets a
 * line about every |every_ns|; |done| the result once the last iteration is checked or a QP
 * failed. 0 or -EINVAL (not connected, already running). */
typedef void (*agent_ring_fn)(void *user, json_object *o);
int agent_ring_run(agent_ring *ring, uint64_t duration_ns, uint64_t iters, uint64_t every_ns,
                   agent_ring_fn progress, agent_ring_fn done, void *user);
json_object *agent_ring_stats(const agent_ring *ring);
/* Ends a run now, as its deadline would: |done| gets the result. -EINVAL if not running. */
int agent_ring_stop(agent_ring *ring);

#endif
