/* SPDX-License-Identifier: MIT */
/* A shard's replicas elect their leader through etcd (docs/prober.md §11.2): each replica
 * campaigns with util_elect on /mrcfab/localizer/<planes>/leader, publishing {name, url}; only
 * the leader infers and keeps the denylist, a follower sends the nodes to it. Every etcd call
 * runs on a thread of this module's own, never on the localizer's loop, which reads the outcome
 * (probe_elect_get) without waiting. */
#ifndef PROBE_ELECT_H
#define PROBE_ELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct probe_elect probe_elect;

typedef struct probe_elect_cfg {
    const char *endpoints; /* etcd's client URLs, comma-separated */
    const char *key;       /* the leader key */
    const char *name;      /* this replica's name */
    const char *url;       /* this replica's base URL, where the nodes reach it */
    unsigned ttl_s;        /* the lease; 0: 3 */
} probe_elect_cfg;

/* Starts the campaign's thread. 0, or -EINVAL (bad endpoints, a name or URL too long) or
 * another negative errno with a sentence in |err|. */
int probe_elect_start(const probe_elect_cfg *cfg, probe_elect **pe, char *err, size_t errlen);
/* Stops the thread; a leader resigns first, so that another leads at once. NULL: no-op. */
void probe_elect_stop(probe_elect *e);

typedef struct probe_elect_state {
    bool leading;     /* this replica leads now (its lease kept alive within TTL - 1 s) */
    char leader[512]; /* the leader's base URL, "" when none is known */
    char name[128];   /* the leader's name */
    int64_t epoch;    /* the leader key's create revision */
    bool etcd_ok;     /* the last step reached etcd */
} probe_elect_state;

/* The outcome of the last step, as of now: never blocks beyond a mutex the thread holds only
 * to copy it. */
void probe_elect_get(probe_elect *e, probe_elect_state *st);

#endif
