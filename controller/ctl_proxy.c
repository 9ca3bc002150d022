/* SPDX-License-Identifier: MIT */
/* A follower fetches the leader-only reads from the leader (ctl_proxy.h says why). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ctl_proxy.h"
#include "util.h"

/* A fetch over the limit waits this long for a slot: a dashboard asks for two or three views
 * at once, each answered by the leader in milliseconds */
#define SLOT_WAIT_MS 1000
/* After a leader failed to answer, this long of answering at once that it did not, rather
 * than holding another thread for the whole timeout */
#define FAILED_MS 1000

struct ctl_proxy {
    char *cafile, *certfile, *keyfile;
    unsigned timeout_ms, max_inflight;
    pthread_mutex_t lock;
    pthread_cond_t freed; /* a slot was given back */
    unsigned inflight;
    /* the last failure: the leader's URL, when (CLOCK_MONOTONIC ms) and why */
    char failed_url[512], failed_err[512];
    int64_t failed_ms;
};

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static char *dup_or_null(const char *s)
{
    return s && s[0] ? util_xstrdup(s) : NULL;
}

ctl_proxy *ctl_proxy_new(const ctl_proxy_cfg *cfg)
{
    ctl_proxy *p = util_xcalloc(1, sizeof(*p));
    p->cafile = dup_or_null(cfg->cafile);
    p->certfile = dup_or_null(cfg->certfile);
    p->keyfile = dup_or_null(cfg->keyfile);
    p->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : CTL_PROXY_TIMEOUT_MS;
    p->max_inflight = cfg->max_inflight ? cfg->max_inflight : 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->freed, &ca);
    pthread_condattr_destroy(&ca);
    return p;
}

void ctl_proxy_free(ctl_proxy *p)
{
    if (!p) {
        return;
    }
    free(p->cafile);
    free(p->certfile);
    free(p->keyfile);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* A 503 the client retries in a second: titled "no leader" when this follower cannot reach
 * one, so that a client of several controllers moves on to the next (util_http_route_of) */
static void unavailable(util_httpd_req *req, const char *title, const char *leader,
                        const char *detail)
{
    util_buf b = {0};
    util_buf_printf(&b, "{\"type\":\"about:blank\",\"title\":");
    util_buf_json_str(&b, title);
    util_buf_printf(&b, ",\"status\":503,\"detail\":");
    util_buf_json_str(&b, detail);
    util_buf_printf(&b, ",\"instance\":");
    util_buf_json_str(&b, util_httpd_req_path(req));
    util_buf_printf(&b, ",\"leader\":");
    util_buf_json_str(&b, leader);
    util_buf_printf(&b, "}");
    const char *hdr[] = {"Retry-After", "1", "Cache-Control", "no-store", NULL};
    util_httpd_respond(req, 503, "application/problem+json", b.s, b.len, hdr);
}

/* The client's bearer token as it sent it (admission checked it is one of ours) */
static const char *bearer_of(util_httpd_req *req)
{
    const char *a = util_httpd_req_header(req, "Authorization");
    if (!a || strncasecmp(a, "Bearer ", 7) != 0) {
        return NULL;
    }
    a += 7;
    while (*a == ' ') {
        a++;
    }
    return a;
}

/* A slot for one fetch: 0, -EAGAIN (the leader failed a moment ago: |err| says how) or
 * -EBUSY (every slot stayed taken for SLOT_WAIT_MS). A fetch holds one of the server's few
 * threads for up to the timeout: the limit keeps the others free for the reads this follower
 * serves itself. */
static int take_slot(ctl_proxy *p, const char *leader, char *err, size_t errlen)
{
    int rv = 0;
    pthread_mutex_lock(&p->lock);
    int64_t now = mono_ms();
    if (now - p->failed_ms < FAILED_MS && strcmp(p->failed_url, leader) == 0) {
        snprintf(err, errlen, "%s", p->failed_err);
        rv = -EAGAIN;
        goto out;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += SLOT_WAIT_MS / 1000;
    until.tv_nsec += (long)(SLOT_WAIT_MS % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    while (p->inflight >= p->max_inflight) {
        if (pthread_cond_timedwait(&p->freed, &p->lock, &until) == ETIMEDOUT &&
            p->inflight >= p->max_inflight) {
            rv = -EBUSY;
            goto out;
        }
    }
    p->inflight++;
out:
    pthread_mutex_unlock(&p->lock);
    return rv;
}

static void give_slot(ctl_proxy *p, const char *leader, const char *failure)
{
    pthread_mutex_lock(&p->lock);
    p->inflight--;
    if (failure) {
        snprintf(p->failed_url, sizeof(p->failed_url), "%s", leader);
        snprintf(p->failed_err, sizeof(p->failed_err), "%s", failure);
        p->failed_ms = mono_ms();
    }
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void ctl_proxy_serve(ctl_proxy *p, const char *leader, util_httpd_req *req)
{
    char err[512], detail[1200];
    int rv = take_slot(p, leader, err, sizeof(err));
    if (rv == -EBUSY) {
        snprintf(detail, sizeof(detail),
                 "this controller follows, and already waits on the leader %s for %u "
                 "request%s; retry in a second",
                 leader, p->max_inflight, p->max_inflight == 1 ? "" : "s");
        unavailable(req, "busy", leader, detail);
        return;
    }
    if (rv == -EAGAIN) {
        snprintf(detail, sizeof(detail),
                 "this controller follows, and the leader %s did not answer: %s; retry in a "
                 "second",
                 leader, err);
        unavailable(req, "no leader", leader, detail);
        return;
    }
    char *query = util_httpd_req_query(req);
    util_buf url = {0};
    util_buf_printf(&url, "%s%s%s", leader, util_httpd_req_path(req), query);
    free(query);
    util_http_opts o = {.method = util_httpd_req_method(req),
                        .bearer = bearer_of(req),
                        .cafile = p->cafile,
                        .certfile = p->certfile,
                        .keyfile = p->keyfile,
                        .timeout_ms = p->timeout_ms};
    util_http_answer ans;
    rv = util_http_fetch(url.s, &o, &ans, err, sizeof(err));
    /* a refused token or TLS setting is this request's or this controller's, not the
     * leader's failing: only what every request would meet now is remembered */
    give_slot(p, leader,
              rv == -ETIMEDOUT || rv == -ECONNREFUSED || rv == -EHOSTUNREACH || rv == -ECONNRESET
                  ? err
                  : NULL);
    free(url.s);
    if (rv != 0) {
        util_log(UTIL_LOG_WARNING, "http: the leader %s did not answer %s %s: %s", leader,
                 util_httpd_req_method(req), util_httpd_req_path(req), err);
        snprintf(detail, sizeof(detail),
                 "this controller follows, and the leader %s did not answer: %s; retry in a "
                 "second",
                 leader, err);
        unavailable(req, "no leader", leader, detail);
        return;
    }
    if (ans.status == 307 || ans.status == 503) {
        /* the leader has just stepped down (or cannot serve): the lead is moving; a redirect
         * is not passed on, it would send the browser to another origin */
        snprintf(detail, sizeof(detail),
                 "this controller follows, and %s no longer leads (HTTP %d); the lead is "
                 "moving: retry in a second",
                 leader, ans.status);
        util_http_answer_fini(&ans);
        unavailable(req, "no leader", leader, detail);
        return;
    }
    /* util_http keeps no Content-Type: the API answers JSON, and its faults (and a 3xx, none
     * of which a GET of these paths gives) problem documents */
    const char *ctype = ans.status >= 300 ? "application/problem+json" : "application/json";
    const char *hdr[] = {"Cache-Control", "no-store", NULL};
    char *body = ans.len ? ans.body : NULL;
    if (!body) {
        free(ans.body);
    }
    ans.body = NULL;
    util_httpd_respond(req, ans.status, ans.status == 204 || ans.status == 304 ? NULL : ctype, body,
                       body ? ans.len : 0, hdr);
    util_http_answer_fini(&ans);
}
