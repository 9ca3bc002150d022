/* SPDX-License-Identifier: MIT */
/* The REST API's handlers, apart from HTTP: a request in, a status and a body out. The HTTP
 * layer (ctl_http.c) parses, authenticates and sends; the golden tests call this directly. */
#ifndef CTL_API_H
#define CTL_API_H

#include <mrcfab/fabric.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_agents.h"
#include "ctl_blast.h"
#include "ctl_ha.h"
#include "ctl_health.h"
#include "ctl_profile.h"
#include "ctl_roles.h"
#include "ctl_seen.h"
#include "ctl_store.h"
#include "util.h"

/* What the handlers count, for /metrics. */
typedef struct ctl_metrics {
    atomic_uint_fast64_t requests[6]; /* by status class: 1xx..5xx, [0] unused */
    atomic_uint_fast64_t latency_le[8]; /* cumulative buckets, see CTL_LATENCY_BUCKETS */
    atomic_uint_fast64_t latency_count, latency_sum_us;
    atomic_uint_fast64_t denylist_changes, reports;
    atomic_int_fast64_t subscribers;
} ctl_metrics;

#define CTL_LATENCY_BUCKETS {100, 500, 1000, 5000, 10000, 50000, 100000, 1000000} /* us */

typedef struct ctl_ctx {
    const fab_topo *topo;
    const fab_tables *tables;
    ctl_store *store;
    ctl_health *health;
    ctl_agents *agents; /* NULL: the agent resources answer 503 */
    ctl_seen *seen;     /* each token's last request; NULL: /api/v1/probers answers 503 */
    ctl_ha *ha;         /* NULL: a controller alone, its store the truth */
    ctl_blast *blast;
    ctl_profile_cfg profile;
    double floor; /* the capacity share a denylist entry may not cut any host pair below */
    size_t max_entries; /* the denylist's bound (--max-entries); 0 for none */
    int64_t history_ms; /* how long the health history is kept in the store */
    const util_opt *opts;
    ctl_metrics metrics;
    /* called after each denylist change is committed (wakes the push channel) */
    void (*changed)(void *user);
    void *changed_user;
} ctl_ctx;

typedef struct ctl_req {
    const char *method;
    const char *path; /* without the query */
    const char *(*arg)(void *user, const char *name); /* a query argument, or NULL */
    void *arg_user;
    /* a request header, or NULL (arg_user is passed); the function may be NULL: none */
    const char *(*header)(void *user, const char *name);
    const char *body;
    size_t bodylen;
    const util_token *who; /* NULL without a valid token */
} ctl_req;

typedef struct ctl_resp {
    int status;
    const char *ctype;
    char *body; /* heap */
    size_t len;
    char etag[48]; /* the answer's ETag (with its quotes), "" for none */
} ctl_resp;

/* The role table's admission, from the method, the path and the token alone (so before the body
 * is read): 0, or 401 (no valid token) or 403 (the token's role may not) with a sentence in
 * |detail|. A path or method of no row passes, for the routing's 404 or 405. */
int ctl_api_admit(const char *method, const char *path, const util_token *who, char *detail,
                  size_t len);
/* Handles |req| into |resp| (whose body the caller frees). Never fails: a fault is a problem
 * document (RFC 9457) with its status. */
void ctl_api_handle(ctl_ctx *ctx, const ctl_req *req, ctl_resp *resp);
/* After a committed change of the denylist (an entry added or removed, a window begun or
 * ended): the health views take the entries in force, and the push channel wakes. */
void ctl_api_denylist_changed(ctl_ctx *ctx);
/* The denylist's changes, through etcd when the controller is one of several (ctx->ha), else
 * into the store: 0, or what ctl_store_deny_add, ctl_store_deny_del_if and
 * ctl_store_window_tick return, and -EPERM (ha: not the leader) or -EAGAIN (ha: etcd cannot
 * commit) with a sentence in |err|. */
int ctl_change_add(ctl_ctx *ctx, ctl_deny *d, char *err, size_t errlen);
int ctl_change_del(ctl_ctx *ctx, int64_t id, const char *actor, const char *source, char *err,
                   size_t errlen);
int ctl_change_tick(ctl_ctx *ctx, int64_t now);
/* A problem document into |resp|. */
void ctl_api_problem(ctl_resp *resp, int status, const char *instance, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The Prometheus text of the metrics and the store. */
char *ctl_metrics_text(ctl_ctx *ctx, size_t *plen);

#endif
