/* SPDX-License-Identifier: MIT */
#include "probe_send.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "util_peers.h"

/* redirects one report may follow: a leader named by a follower that is no longer one */
#define SEND_HOPS 3
/* rounds of the replicas one report may take, the second a second later (Retry-After: 1): an
 * election takes about a lease's TTL, a report is worth its window only */
#define SEND_ROUNDS 2
#define SEND_TIMEOUT_MS 3000

typedef struct sreq sreq;

typedef struct sshard {
    probe_send *s;
    probe_shard_dest d;
    util_peers peers; /* empty for a whole URL */
    sreq *inflight;   /* its reports on their way */
    bool failing;     /* said once until a report is taken again */
} sshard;

struct sreq {
    sshard *sh;
    sreq *next, **prev;
    char *body;
    size_t len;
    unsigned hops, rounds;
    util_http *http;     /* in flight, or NULL while waiting for its next round */
    struct event *later; /* the next round's timer */
};

struct probe_send {
    probe_send_cfg cfg;
    sshard *sh;
    size_t n;
    probe_send_stats st;
};

static void req_free(sreq *r)
{
    if (r->next) {
        r->next->prev = r->prev;
    }
    *r->prev = r->next;
    util_http_cancel(r->http);
    if (r->later) {
        event_free(r->later);
    }
    free(r->body);
    free(r);
}

static void drop(sreq *r, const char *why)
{
    sshard *sh = r->sh;
    sh->s->st.dropped++;
    util_log(sh->failing ? UTIL_LOG_DEBUG : UTIL_LOG_WARNING,
             "report to planes' shard %s: %s; dropped (said once until one is taken)", sh->d.urls,
             why);
    sh->failing = true;
    req_free(r);
}

static void attempt(sreq *r);

static void on_later(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    attempt(arg);
}

/* The leader a follower named, from its problem document (util_http gives the body, not the
 * headers; the follower names it in both). NULL when there is none. */
static char *leader_of(const util_http_result *res)
{
    char perr[64];
    json_object *j = res->body
                         ? util_json_parse("redirect", res->body, res->len, perr, sizeof(perr))
                         : NULL,
                *m;
    char *url = NULL;
    if (j && json_object_object_get_ex(j, "leader", &m) &&
        json_object_is_type(m, json_type_string)) {
        url = util_xstrdup(json_object_get_string(m));
    }
    json_object_put(j);
    return url;
}

static void on_answer(void *user, util_http_result *res)
{
    sreq *r = user;
    sshard *sh = r->sh;
    probe_send *s = sh->s;
    char why[300];
    r->http = NULL;
    if (sh->d.whole_url) {
        if (res->rv == 0 && res->status / 100 == 2) {
            s->st.taken++;
            sh->failing = false;
            req_free(r);
        } else if (res->rv == 0) {
            s->st.refused++;
            util_log(UTIL_LOG_WARNING, "report: HTTP %d", res->status);
            req_free(r);
        } else {
            drop(r, res->err);
        }
        return;
    }
    if (res->rv == 0 && (res->status == 307 || res->status == 308)) {
        char *leader = leader_of(res);
        int rv = leader ? util_peers_follow(&sh->peers, leader) : -EINVAL;
        free(leader);
        if (rv == 0 && ++r->hops <= SEND_HOPS) {
            s->st.redirected++;
            attempt(r);
            return;
        }
        snprintf(why, sizeof(why), "%s",
                 rv ? "a redirect that names no leader" : "too many redirects");
        /* a follower without a usable leader is as good as one that has none */
    } else if (res->rv == 0 && res->status != 503) {
        util_peers_ok(&sh->peers);
        if (res->status / 100 == 2) {
            s->st.taken++;
            if (sh->failing) {
                util_log(UTIL_LOG_NOTICE, "reports to %s are taken again",
                         util_peers_current(&sh->peers));
            }
            sh->failing = false;
        } else {
            /* a final refusal (late, duplicate, another shard's plane): sending it elsewhere
             * would not change it */
            s->st.refused++;
            util_log(UTIL_LOG_WARNING, "report to %s: HTTP %d%s%.200s",
                     util_peers_current(&sh->peers), res->status, res->body ? ": " : "",
                     res->body ? res->body : "");
        }
        req_free(r);
        return;
    } else {
        snprintf(why, sizeof(why), "%s: %s", util_peers_current(&sh->peers),
                 res->rv ? res->err : "no leader yet (503)");
    }
    if (util_peers_failed(&sh->peers)) {
        attempt(r);
        return;
    }
    if (++r->rounds < SEND_ROUNDS) {
        struct timeval tv = {1, 0};
        r->later = r->later ? r->later : evtimer_new(s->cfg.base, on_later, r);
        evtimer_add(r->later, &tv);
        return;
    }
    drop(r, why);
}

static void attempt(sreq *r)
{
    sshard *sh = r->sh;
    probe_send *s = sh->s;
    char url[700], err[256];
    if (sh->d.whole_url) {
        snprintf(url, sizeof(url), "%s", sh->d.urls);
    } else {
        snprintf(url, sizeof(url), "%s/api/v1/reports", util_peers_current(&sh->peers));
    }
    util_http_opts ho = {.method = "POST",
                         .bearer = s->cfg.token,
                         .body = r->body,
                         .bodylen = r->len,
                         .cafile = s->cfg.cafile,
                         .certfile = s->cfg.certfile,
                         .keyfile = s->cfg.keyfile,
                         .timeout_ms = SEND_TIMEOUT_MS};
    if (util_http_start(s->cfg.base, url, &ho, on_answer, r, &r->http, err, sizeof(err)) != 0) {
        r->http = NULL;
        drop(r, err); /* a bad URL or CA file: the next replica would not fare better */
    }
}

int probe_send_new(const probe_send_cfg *cfg, probe_send **ps, char *err, size_t errlen)
{
    probe_send *s = util_xcalloc(1, sizeof(*s));
    s->cfg = *cfg;
    s->sh = util_xcalloc(cfg->ndests + 1, sizeof(*s->sh));
    for (size_t i = 0; i < cfg->ndests; i++) {
        sshard *sh = &s->sh[i];
        sh->s = s;
        sh->d = cfg->dests[i];
        sh->d.urls = util_xstrdup(cfg->dests[i].urls);
        s->n++;
        if (!sh->d.whole_url && util_peers_parse(&sh->peers, sh->d.urls, err, errlen) != 0) {
            probe_send_free(s);
            return -EINVAL;
        }
    }
    *ps = s;
    return 0;
}

void probe_send_free(probe_send *s)
{
    if (!s) {
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        while (s->sh[i].inflight) {
            req_free(s->sh[i].inflight);
        }
        util_peers_free(&s->sh[i].peers);
        free(s->sh[i].d.urls);
    }
    free(s->sh);
    free(s);
}

void probe_send_report(probe_send *s, json_object *report)
{
    json_object *ports = json_object_object_get(report, "ports");
    for (size_t i = 0; i < s->n; i++) {
        sshard *sh = &s->sh[i];
        json_object *copy = json_object_new_object(), *mine = json_object_new_array();
        json_object_object_foreach(report, k, v)
        {
            if (strcmp(k, "ports") != 0) {
                json_object_object_add(copy, k, json_object_get(v));
            }
        }
        for (size_t p = 0; p < json_object_array_length(ports); p++) {
            json_object *port = json_object_array_get_idx(ports, p);
            int plane = json_object_get_int(json_object_object_get(port, "plane"));
            if (plane >= 0 && plane < 64 && (sh->d.planes >> plane & 1)) {
                json_object_array_add(mine, json_object_get(port));
            }
        }
        size_t n = json_object_array_length(mine);
        json_object_object_add(copy, "ports", mine);
        if (n) {
            size_t len;
            const char *t = json_object_to_json_string_length(copy, JSON_C_TO_STRING_PLAIN, &len);
            sreq *r = util_xcalloc(1, sizeof(*r));
            r->sh = sh;
            r->body = util_xstrdup(t);
            r->len = len;
            r->next = sh->inflight;
            r->prev = &sh->inflight;
            if (sh->inflight) {
                sh->inflight->prev = &r->next;
            }
            sh->inflight = r;
            attempt(r);
        }
        json_object_put(copy);
    }
}

void probe_send_stats_get(const probe_send *s, probe_send_stats *st)
{
    *st = s->st;
}
