/* SPDX-License-Identifier: MIT */
/* The localizer's evidence on its way to the controller (issue 18, item 1): one POST in flight
 * at a time; the posts of a window wait behind it, and the next window's posts replace those
 * still waiting, since evidence is recent by nature: an old window's is worth less than the
 * next one's, and a slow or absent controller must not pile requests up. */
#ifndef PROBE_POST_H
#define PROBE_POST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_ctl.h"

typedef struct probe_post_cfg {
    probe_ctl *ctl;      /* the controllers (borrowed: it outlives the sender) */
    const char *path;    /* where every body is POSTed at the leader (copied) */
    unsigned timeout_ms; /* a try may take this long; 0: 5 s */
} probe_post_cfg;

typedef struct probe_post_stats {
    uint64_t accepted; /* answered 2xx */
    uint64_t failed;   /* no answer (refused, reset, timed out) or answered otherwise */
    uint64_t replaced; /* waiting bodies dropped for the next window's, never sent */
    int last_status;   /* the last answer's HTTP status; 0: none yet, or no answer */
} probe_post_stats;

typedef struct probe_post probe_post;

/* Creates a sender through cfg->ctl. Returns 0 or -EINVAL (no client or path). */
int probe_post_new(const probe_post_cfg *cfg, probe_post **ppost);
/* Cancels the request in flight and drops the waiting bodies; NULL is a no-op. */
void probe_post_free(probe_post *post);

/* Hands over |n| bodies (JSON documents, malloc'd, NUL-terminated; takes ownership of each),
 * sent in order after the request in flight, one at a time. Bodies of an earlier call not yet
 * sent are dropped and counted as replaced. */
void probe_post_send(probe_post *post, char **bodies, size_t n);

/* Nothing in flight and nothing waiting. */
bool probe_post_idle(const probe_post *post);

void probe_post_stats_get(const probe_post *post, probe_post_stats *st);

#endif
