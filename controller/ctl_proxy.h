/* SPDX-License-Identifier: MIT */
/* A follower's answer to the leader-only reads (the health views, the agents, the probers): it
 * asks the leader itself, with the client's token, and answers with what the leader said. A
 * browser's dashboard served by a follower would lose its Authorization header on a redirect to
 * another origin, so a read is fetched, not redirected; writes keep their 307. The fetch blocks
 * one of the HTTP server's few threads, so it is bounded in time and in number. */
#ifndef CTL_PROXY_H
#define CTL_PROXY_H

#include <stdint.h>

#include "util_httpd.h"

typedef struct ctl_proxy ctl_proxy;

typedef struct ctl_proxy_cfg {
    const char *cafile; /* over https: the CA of the leader's certificate (NULL: the system's) */
    const char *certfile, *keyfile; /* over https: offered to a leader that asks (NULL: none) */
    unsigned timeout_ms;            /* one fetch at most; 0: CTL_PROXY_TIMEOUT_MS */
    unsigned max_inflight;          /* fetches at once; more are answered 503; 0: 1 */
} ctl_proxy_cfg;

#define CTL_PROXY_TIMEOUT_MS 5000u

/* |cfg|'s strings are copied. */
ctl_proxy *ctl_proxy_new(const ctl_proxy_cfg *cfg);
void ctl_proxy_free(ctl_proxy *p); /* NULL is a no-op */

/* Answers |req| with the leader's answer to the same method, path and query asked of
 * |leader| (a base URL) with the client's bearer token: its status, its body, and its type
 * (the API's answers are JSON, its faults problem documents). When the leader does not
 * answer in time, or too many fetches are under way, a 503 "no leader" / "busy" with
 * Retry-After: 1 and a sentence. */
void ctl_proxy_serve(ctl_proxy *p, const char *leader, util_httpd_req *req);

#endif
