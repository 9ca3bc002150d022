/* SPDX-License-Identifier: MIT */
/* mrc-perf's workloads, run inside the agent on its engine: write bandwidth and latency, each
 * byte written from a known pattern and checked where it lands. */
#ifndef AGENT_PERF_H
#define AGENT_PERF_H

#include <json-c/json.h>
#include <stdint.h>

#include "agent_node.h"

typedef enum agent_perf_role {
    AGENT_PERF_SOURCE = 0, /* writes as fast as the window lets it */
    AGENT_PERF_SINK,       /* checks what is written */
    AGENT_PERF_PING,       /* writes one message and waits for its echo */
    AGENT_PERF_PONG,       /* checks each message and writes it back */
} agent_perf_role;

typedef struct agent_perf_cfg {
    agent_perf_role role;
    unsigned qps;   /* 1..64 */
    uint32_t size;  /* bytes per message, 1..64 MiB */
    unsigned slots; /* message slots of each QP's buffer: at most half in flight; >= 2 */
} agent_perf_cfg;

typedef struct agent_perf agent_perf;

/* A session toward host |peer|: its QPs and their buffers. 0, or a negative MRC_ERR_* or
 * -EINVAL with a sentence in |err|. */
int agent_perf_new(agent_node *node, uint32_t peer, const agent_perf_cfg *cfg, agent_perf **pperf,
                   char *err, size_t errlen);
void agent_perf_free(agent_perf *perf);

/* What the peer needs: [{"qpn","psn","addr","rkey","len"}] per QP. */
json_object *agent_perf_local(const agent_perf *perf);
/* Connects QP i to the peer's QP i of |remote| (as agent_perf_local gave it). */
int agent_perf_connect(agent_perf *perf, json_object *remote, char *err, size_t errlen);

/* Runs a source or ping for |duration_ns| (or |iters| messages, if not 0); |done| gets the
 * result once every write has completed. 0 or -EINVAL (not a source or ping, not connected,
 * already running). */
typedef void (*agent_perf_done_fn)(void *user, json_object *result);
int agent_perf_run(agent_perf *perf, uint64_t duration_ns, uint64_t iters, agent_perf_done_fn done,
                   void *user);
/* What the session has seen so far (a sink's or pong's checks, a source's counts). */
json_object *agent_perf_stats(const agent_perf *perf);

#endif
