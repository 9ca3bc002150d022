/* SPDX-License-Identifier: MIT */
/* The localizer's client of the controllers' leader (probe_ctl.h). */
#include "probe_ctl.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_peers.h"

struct probe_ctl {
    struct event_base *base;
    util_peers peers;
    char *token, *cafile, *certfile, *keyfile;
    bool moving;     /* a move to the next controller said, until one answers */
    char named[512]; /* the leader last said to be followed */
};

struct probe_ctl_req {
    probe_ctl *ctl;
    char *method, *path, *body;
    unsigned timeout_ms;
    util_http_cb cb;
    void *user;
    util_http *http;      /* the try in flight */
    unsigned hops, tries; /* redirects followed since the last failure; controllers failed */
    char at[512];         /* the base URL of the try in flight */
};

static char *dup_or_null(const char *s)
{
    return s ? util_xstrdup(s) : NULL;
}

int probe_ctl_check(const char *urls, char *err, size_t errlen)
{
    util_peers p;
    int rv = util_peers_parse(&p, urls, err, errlen);
    if (rv == 0) {
        util_peers_free(&p);
    }
    return rv;
}

int probe_ctl_new(const probe_ctl_cfg *cfg, probe_ctl **pctl, char *err, size_t errlen)
{
    probe_ctl *ctl = util_xcalloc(1, sizeof(*ctl));
    int rv = util_peers_parse(&ctl->peers, cfg->urls, err, errlen);
    if (rv != 0) {
        free(ctl);
        return rv;
    }
    ctl->base = cfg->base;
    ctl->token = dup_or_null(cfg->token);
    ctl->cafile = dup_or_null(cfg->cafile);
    ctl->certfile = dup_or_null(cfg->certfile);
    ctl->keyfile = dup_or_null(cfg->keyfile);
    *pctl = ctl;
    return 0;
}

void probe_ctl_free(probe_ctl *ctl)
{
    if (!ctl) {
        return;
    }
    util_peers_free(&ctl->peers);
    free(ctl->token);
    free(ctl->cafile);
    free(ctl->certfile);
    free(ctl->keyfile);
    free(ctl);
}

const char *probe_ctl_current(const probe_ctl *ctl)
{
    return util_peers_current(&ctl->peers);
}

size_t probe_ctl_count(const probe_ctl *ctl)
{
    return ctl->peers.n;
}

static void req_free(probe_ctl_req *r)
{
    free(r->method);
    free(r->path);
    free(r->body);
    free(r);
}

static void on_answer(void *user, util_http_result *res);

/* One try, at the current controller. */
static int try_send(probe_ctl_req *r, char *err, size_t errlen)
{
    probe_ctl *ctl = r->ctl;
    char url[2048];
    snprintf(r->at, sizeof(r->at), "%s", util_peers_current(&ctl->peers));
    snprintf(url, sizeof(url), "%s%s", r->at, r->path);
    util_http_opts o = {.method = r->method,
                        .bearer = ctl->token,
                        .body = r->body,
                        .bodylen = r->body ? strlen(r->body) : 0,
                        .cafile = ctl->cafile,
                        .certfile = ctl->certfile,
                        .keyfile = ctl->keyfile,
                        .timeout_ms = r->timeout_ms};
    int rv = util_http_start(ctl->base, url, &o, on_answer, r, &r->http, err, errlen);
    if (rv != 0) {
        r->http = NULL;
    }
    return rv;
}

/* The request is over: gone before its callback runs, as util_http's are. */
static void deliver(probe_ctl_req *r, util_http_result *res)
{
    util_http_cb cb = r->cb;
    void *user = r->user;
    req_free(r);
    cb(user, res);
}

/* Another try, from within the last one's callback; one that cannot start ends the request. */
static void again(probe_ctl_req *r)
{
    char err[256];
    int rv = try_send(r, err, sizeof(err));
    if (rv != 0) {
        util_http_result res = {.rv = rv, .err = err};
        deliver(r, &res);
    }
}

static void on_answer(void *user, util_http_result *res)
{
    probe_ctl_req *r = user;
    probe_ctl *ctl = r->ctl;
    char why[512];
    util_http_result own = {0}; /* a round's end in a sentence of our own */
    r->http = NULL;
    switch (util_http_route_of(res->rv, res->status, res->body, res->len, res->leader, r->hops)) {
    case UTIL_HTTP_ANSWERED:
        util_peers_ok(&ctl->peers);
        if (ctl->moving) {
            util_log(UTIL_LOG_INFO, "controllers: %s answers", r->at);
        }
        ctl->moving = false;
        deliver(r, res);
        return;
    case UTIL_HTTP_GIVE_UP:
        deliver(r, res); /* a setting at fault (TLS, a CA file): every controller would fail */
        return;
    case UTIL_HTTP_FOLLOW:
        if (util_peers_follow(&ctl->peers, res->leader) == 0) {
            /* said once a leader: followers name a dead one until its lease ends */
            const char *now = util_peers_current(&ctl->peers);
            if (strcmp(now, ctl->named) != 0) {
                util_log(UTIL_LOG_INFO, "controllers: %s follows; the leader is %s", r->at, now);
                snprintf(ctl->named, sizeof(ctl->named), "%s", now);
            }
            r->hops++;
            again(r);
            return;
        }
        snprintf(why, sizeof(why),
                 "%.200s redirected to '%.200s', which is no controller of the list's scheme",
                 r->at, res->leader);
        own = (util_http_result){.rv = -EPERM, .err = why};
        break;
    case UTIL_HTTP_NEXT:
        if (res->rv == 0 && res->status / 100 == 3) {
            snprintf(why, sizeof(why),
                     "over %d redirects without reaching a leader (last: %.200s); are the "
                     "controllers electing one?",
                     UTIL_HTTP_MAX_HOPS, r->at);
            own = (util_http_result){.rv = -ELOOP, .err = why};
        } else {
            snprintf(why, sizeof(why), "%.300s", res->rv ? res->err : "it has no leader (503)");
        }
        break;
    }
    /* the next controller; another request may have moved on from this one already */
    r->tries++;
    r->hops = 0;
    if (ctl->peers.n > 1 && strcmp(util_peers_current(&ctl->peers), r->at) == 0) {
        util_peers_failed(&ctl->peers);
        util_log(ctl->moving ? UTIL_LOG_DEBUG : UTIL_LOG_WARNING,
                 "controllers: %s: %s; asking %s (said once until one answers)", r->at, why,
                 util_peers_current(&ctl->peers));
        ctl->moving = true;
    }
    if (r->tries < ctl->peers.n) {
        again(r);
        return;
    }
    deliver(r, own.err ? &own : res);
}

int probe_ctl_start(probe_ctl *ctl, const char *method, const char *path, const char *body,
                    unsigned timeout_ms, util_http_cb cb, void *user, probe_ctl_req **preq,
                    char *err, size_t errlen)
{
    probe_ctl_req *r = util_xcalloc(1, sizeof(*r));
    *r = (probe_ctl_req){.ctl = ctl,
                         .method = dup_or_null(method),
                         .path = util_xstrdup(path),
                         .body = dup_or_null(body),
                         .timeout_ms = timeout_ms,
                         .cb = cb,
                         .user = user};
    int rv = try_send(r, err, errlen);
    if (rv != 0) {
        req_free(r);
        *preq = NULL;
        return rv;
    }
    *preq = r;
    return 0;
}

void probe_ctl_cancel(probe_ctl_req *req)
{
    if (!req) {
        return;
    }
    util_http_cancel(req->http);
    req_free(req);
}
