/* SPDX-License-Identifier: MIT */
/* A node's reports on their way to the localizers (docs/prober.md §11.3): each shard's share of
 * a window's report (its planes' ports) goes to that shard's replicas, util_peers choosing which
 * one: the one that answered last, the next when one does not answer or knows no leader (503),
 * the leader a follower names in a 307. A report is never held back for a later window: a
 * round of the replicas without an answer drops it (the localizer counts a host that did not
 * report as one that sent nothing). */
#ifndef PROBE_SEND_H
#define PROBE_SEND_H

#include <event2/event.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_shard.h"

typedef struct probe_send probe_send;

typedef struct probe_send_cfg {
    struct event_base *base;
    const probe_shard_dest *dests; /* copied */
    size_t ndests;
    const char *token, *cafile, *certfile, *keyfile; /* borrowed until probe_send_free */
} probe_send_cfg;

/* 0, or -EINVAL with a sentence in |err| (a list util_peers refuses). */
int probe_send_new(const probe_send_cfg *cfg, probe_send **ps, char *err, size_t errlen);
/* Cancels what is in flight. NULL: no-op. */
void probe_send_free(probe_send *s);

/* Sends |report| (borrowed): to each shard, a copy holding only its planes' ports (none when
 * the report has no port of its planes). */
void probe_send_report(probe_send *s, json_object *report);

typedef struct probe_send_stats {
    uint64_t taken;      /* answered 2xx */
    uint64_t refused;    /* answered another final status (4xx) */
    uint64_t redirected; /* 307s followed */
    uint64_t dropped;    /* a round of replicas without an answer, or too many redirects */
} probe_send_stats;
void probe_send_stats_get(const probe_send *s, probe_send_stats *st);

#endif
