/* SPDX-License-Identifier: MIT */
/* One POST in flight at a time, the newest window's posts waiting (probe_post.h). */
#include "probe_post.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe_ctl.h"
#include "util.h"

#define POST_TIMEOUT_MS 5000

struct probe_post {
    probe_ctl *ctl;
    char *path;
    unsigned timeout_ms;
    probe_ctl_req *req; /* in flight, or NULL */
    char **wait;        /* the bodies waiting, wait[at .. n) */
    size_t at, n;
    probe_post_stats st;
    bool failing; /* said once, until the controller takes a post again */
};

int probe_post_new(const probe_post_cfg *cfg, probe_post **ppost)
{
    if (!cfg->ctl || !cfg->path) {
        return -EINVAL;
    }
    probe_post *p = util_xcalloc(1, sizeof(*p));
    p->ctl = cfg->ctl;
    p->path = util_xstrdup(cfg->path);
    p->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : POST_TIMEOUT_MS;
    *ppost = p;
    return 0;
}

static void drop_waiting(probe_post *p)
{
    for (size_t i = p->at; i < p->n; i++) {
        free(p->wait[i]);
    }
    free(p->wait);
    p->wait = NULL;
    p->at = p->n = 0;
}

void probe_post_free(probe_post *post)
{
    if (!post) {
        return;
    }
    probe_ctl_cancel(post->req);
    drop_waiting(post);
    free(post->path);
    free(post);
}

static void failed(probe_post *p, const char *why)
{
    p->st.failed++;
    util_log(p->failing ? UTIL_LOG_DEBUG : UTIL_LOG_WARNING,
             "evidence to the controller: %s (said once until it takes a post again)", why);
    p->failing = true;
}

static void next(probe_post *p);

static void on_answer(void *user, util_http_result *res)
{
    probe_post *p = user;
    char why[320];
    p->req = NULL;
    p->st.last_status = res->rv ? 0 : res->status;
    if (res->rv == 0 && res->status / 100 == 2) {
        p->st.accepted++;
        if (p->failing) {
            util_log(UTIL_LOG_INFO, "evidence: the controller takes it again");
        }
        p->failing = false;
    } else if (res->rv) {
        failed(p, res->err);
    } else {
        snprintf(why, sizeof(why), "HTTP %d %.200s", res->status, res->body ? res->body : "");
        failed(p, why);
    }
    next(p);
}

/* Starts the first waiting body, if nothing is in flight. A body that cannot even start (a bad
 * CA file) fails at once and the next one is tried. */
static void next(probe_post *p)
{
    while (!p->req && p->at < p->n) {
        char *body = p->wait[p->at];
        char err[256];
        p->wait[p->at++] = NULL;
        int rv = probe_ctl_start(p->ctl, "POST", p->path, body, p->timeout_ms, on_answer, p,
                                 &p->req, err, sizeof(err));
        free(body); /* probe_ctl_start copied it */
        if (rv != 0) {
            p->req = NULL;
            failed(p, err);
        }
    }
    if (p->at == p->n) {
        drop_waiting(p);
    }
}

void probe_post_send(probe_post *post, char **bodies, size_t n)
{
    post->st.replaced += post->n - post->at;
    drop_waiting(post);
    if (n) {
        post->wait = util_xcalloc(n, sizeof(*post->wait));
        memcpy(post->wait, bodies, n * sizeof(*bodies));
        post->n = n;
    }
    next(post);
}

bool probe_post_idle(const probe_post *post)
{
    return !post->req && post->at == post->n;
}

void probe_post_stats_get(const probe_post *post, probe_post_stats *st)
{
    *st = post->st;
}
