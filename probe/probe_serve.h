/* SPDX-License-Identifier: MIT */
/* The localizer's HTTP endpoint on util_httpd, driven by the localizer's own loop: POST
 * /api/v1/reports (each node's report), GET /api/v1/status, GET /metrics. */
#ifndef PROBE_SERVE_H
#define PROBE_SERVE_H

#include <stddef.h>

#include "probe_elect.h"
#include "probe_localize.h"
#include "util.h"

struct event_base;

typedef struct probe_serve probe_serve;

typedef struct probe_serve_cfg {
    struct event_base *base; /* the localizer's loop: every request is handled on it */
    const char *listen;      /* ADDR:PORT, [ADDR6]:PORT */
    probe_localize *loc;
    const util_auth *tokens; /* the nodes' prober tokens; NULL or none: reports are open */
    unsigned max_connections, per_client, request_timeout_ms, rate, burst; /* 0: defaults */
    const char *cert_pem, *key_pem, *client_ca_pem; /* HTTPS; a client CA asks for certs */
    /* The shard's election (--etcd), or NULL: while the localizer follows, a report is sent
     * to the leader (307, Location and X-Mrcfab-Leader) or, with none known, answered 503 with
     * Retry-After: 1 */
    probe_elect *elect;
} probe_serve_cfg;

/* Starts serving; |cfg|'s base, loc and tokens are borrowed until probe_serve_free. Returns 0
 * or a negative errno with a sentence in |err|. */
int probe_serve_start(const probe_serve_cfg *cfg, probe_serve **ps, char *err, size_t errlen);
unsigned probe_serve_port(const probe_serve *s);
/* The election, once it runs (it needs the served port for its URL): where a follower finds
 * the leader. Until then a follower answers 503. */
void probe_serve_set_elect(probe_serve *s, probe_elect *elect);
/* From the loop's thread (or once it has ended). NULL is a no-op. */
void probe_serve_free(probe_serve *s);

#endif
