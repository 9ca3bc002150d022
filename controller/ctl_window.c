/* SPDX-License-Identifier: MIT */
/* The window thread sleeps until the next window boundary the store knows (at most a second,
 * so that a clock step is noticed), then ticks the store over what passed since its last
 * tick (the store keeps it: boundaries that passed while the controller was down are ticked
 * at startup, once), and the health engine over its own second (verdicts of a localizer
 * gone silent expire; every SAVE_MS its checkpoint goes to the store, and once more when it
 * stops). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "ctl_window.h"
#include "util.h"

struct ctl_window {
    ctl_ctx *ctx;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;
    int64_t saved_ms;
};

/* The health checkpoint's period: well inside an agent's report interval, so that a
 * restarted controller shows what it showed. */
#define SAVE_MS 2000

static void save(ctl_window *w, int64_t now)
{
    if (ctl_health_save(w->ctx->health, w->ctx->store, now, w->ctx->history_ms) != 0) {
        util_log(UTIL_LOG_WARNING, "the health checkpoint could not be written (tried again in "
                 "%d s)", SAVE_MS / 1000);
    }
    w->saved_ms = now;
}

static void *run(void *arg)
{
    ctl_window *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        int64_t now = ctl_now_ms();
        pthread_mutex_unlock(&w->lock);
        int n = ctl_change_tick(w->ctx, now);
        if (n > 0) {
            util_log(UTIL_LOG_INFO, "%d maintenance window(s) started or ended", n);
            ctl_api_denylist_changed(w->ctx);
        }
        if (w->ctx->health) {
            ctl_health_tick(w->ctx->health, now);
            if (now - w->saved_ms >= SAVE_MS) {
                save(w, now);
            }
        }
        int64_t next = ctl_store_next_boundary(w->ctx->store, now);
        int64_t until = now + 1000;
        until = next && next < until ? next : until;
        struct timespec ts = {.tv_sec = (time_t)(until / 1000), .tv_nsec = (long)(until % 1000) * 1000000};
        pthread_mutex_lock(&w->lock);
        if (!w->stopping) {
            pthread_cond_timedwait(&w->cond, &w->lock, &ts);
        }
    }
    pthread_mutex_unlock(&w->lock);
    if (w->ctx->health) {
        save(w, ctl_now_ms()); /* what it showed last, for the next start */
    }
    return NULL;
}

ctl_window *ctl_window_start(ctl_ctx *ctx)
{
    ctl_window *w = util_xcalloc(1, sizeof(*w));
    w->ctx = ctx;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    pthread_create(&w->thread, NULL, run, w);
    return w;
}

void ctl_window_stop(ctl_window *w)
{
    if (!w) {
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
}
