/* SPDX-License-Identifier: MIT */
/* The node role (issue 8, item 2): sends a host's share of the probe plan on every plane port
 * and counts what comes back and what arrives against what the public plan says should.
 * Once a window's counts are final (a grace time after it closes) it reports, per port, the
 * probes it sent (the heartbeat: a stalled sender is a host issue, not loss) and only the
 * deficits: each probe that should have come and did not. */
#ifndef PROBE_NODE_H
#define PROBE_NODE_H

#include <event2/event.h>
#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdint.h>

#include "probe_sched.h"

typedef struct probe_node_cfg {
    struct event_base *base;
    const fab_topo *topo;
    const probe_plan *plan;
    uint32_t host;
    uint64_t window_ns; /* the plan's */
    uint32_t epoch;     /* the plan's generation: probes of another are not counted */
    uint16_t udp_port;
    uint8_t tclass;          /* outer and inner traffic class: the data class, so probes trim */
    uint8_t dscp_trimmed[2]; /* the classes a trimming switch marks a trimmed packet with */
    uint64_t grace_ns;       /* a window's counts are final this long after it closes */
    unsigned max_deficits;   /* per port and window in a report; the rest are only counted */
    /* one window's report (the callee keeps |report| or puts it) */
    void (*report)(void *user, json_object *report);
    void *user;
} probe_node_cfg;

typedef struct probe_node probe_node;

int probe_node_new(const probe_node_cfg *cfg, probe_node **pnode, char *err, size_t errlen);
void probe_node_free(probe_node *node);

typedef struct probe_node_stats {
    uint64_t sent, send_errors, rcvd, trimmed, garbage, unexpected, late, reports;
} probe_node_stats;

void probe_node_get_stats(const probe_node *node, probe_node_stats *st);

/* The wall-clock time in ns the windows count from (CLOCK_REALTIME: every node agrees). */
uint64_t probe_node_clock(void);

#endif
