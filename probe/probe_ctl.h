/* SPDX-License-Identifier: MIT */
/* The localizer's client of the controllers (--controller URL[,URL...]): one request to the
 * leader among them, the way every client of a highly available controller goes
 * (docs/ha.md, Clients). A request goes to the controller that answered last; on no answer, a
 * timeout or a 503 "no leader" it goes to the next at once; on a follower's 307 naming the
 * leader it goes there at once (at most UTIL_HTTP_MAX_HOPS times). Its callback runs once,
 * with an answer, or after every controller failed once for it: the caller's own retry and
 * backoff then take over, as with a single controller. Every request of one client shares
 * which controller is current, so a failover found by one is found for all. */
#ifndef PROBE_CTL_H
#define PROBE_CTL_H

#include <event2/event.h>
#include <stddef.h>

#include "util.h"

typedef struct probe_ctl_cfg {
    struct event_base *base;
    const char *urls;               /* comma-separated base URLs (trailing slashes dropped) */
    const char *token;              /* the bearer token, may be NULL (copied) */
    const char *cafile;             /* over https, may be NULL (copied) */
    const char *certfile, *keyfile; /* the client certificate and key, may be NULL (copied) */
} probe_ctl_cfg;

typedef struct probe_ctl probe_ctl;
typedef struct probe_ctl_req probe_ctl_req;

/* Whether |urls| is a list probe_ctl_new takes: 0, or -EINVAL with a sentence in |err|. */
int probe_ctl_check(const char *urls, char *err, size_t errlen);
/* Creates the client. Returns 0, or -EINVAL with a sentence in |err| for a list that is not
 * one of http(s) base URLs of one scheme. */
int probe_ctl_new(const probe_ctl_cfg *cfg, probe_ctl **pctl, char *err, size_t errlen);
/* Frees the client; every request of it must have ended or been cancelled. NULL is a no-op. */
void probe_ctl_free(probe_ctl *ctl);

/* The base URL asked next (the one that answered last, or the leader a follower named). */
const char *probe_ctl_current(const probe_ctl *ctl);
/* How many controllers it knows (those given, and leaders a redirect named). */
size_t probe_ctl_count(const probe_ctl *ctl);

/* Starts |method| (NULL: GET) of |path| (with its query) and |body| (NUL-terminated JSON, may
 * be NULL; copied), each try within |timeout_ms| (0: 10 s). Returns 0 with the request in
 * |*preq|: |cb| is then called exactly once, from the loop, never from within this call, with
 * the last try's result (its body the callback's to take, as with util_http_start); the
 * request is gone when |cb| runs. A round that ended in redirects past the limit or a
 * redirect off the list's scheme is given as rv -ELOOP or -EPERM with a sentence. Or returns
 * util_http_start's code with a sentence in |err|, and |cb| is never called. */
int probe_ctl_start(probe_ctl *ctl, const char *method, const char *path, const char *body,
                    unsigned timeout_ms, util_http_cb cb, void *user, probe_ctl_req **preq,
                    char *err, size_t errlen);
/* Ends a request whose callback has not run; its callback never will. NULL is a no-op. */
void probe_ctl_cancel(probe_ctl_req *req);

#endif
