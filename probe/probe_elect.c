/* SPDX-License-Identifier: MIT */
#include "probe_elect.h"

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "util_etcd.h"

struct probe_elect {
    util_etcd *etcd;
    util_elect el;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    /* under mu: the last step's outcome */
    bool leader, etcd_ok;
    int64_t lease_ok_ns;
    unsigned ttl_s;
    char current[512];
    int64_t epoch;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *campaign(void *arg)
{
    probe_elect *e = arg;
    char err[256];
    bool was = false, failing = false;
    char seen[512] = "";
    pthread_mutex_lock(&e->mu);
    while (!e->stop) {
        pthread_mutex_unlock(&e->mu);
        int rv = util_elect_step(&e->el, err, sizeof(err));
        bool now = util_elect_leading(&e->el);
        if (rv != 0 && !failing) {
            util_log(UTIL_LOG_WARNING, "election: %s (said once until etcd answers)", err);
        } else if (rv == 0 && failing) {
            util_log(UTIL_LOG_NOTICE, "election: etcd answers again");
        }
        failing = rv != 0;
        if (now != was) {
            util_log(UTIL_LOG_NOTICE, "election: %s %s (epoch %lld)",
                     now ? "leading" : "no longer leading", e->el.key, (long long)e->el.epoch);
        } else if (!now && strcmp(seen, e->el.current) != 0) {
            util_log(UTIL_LOG_NOTICE, "election: the leader is %s",
                     e->el.current[0] ? e->el.current : "nobody");
        }
        snprintf(seen, sizeof(seen), "%s", e->el.current);
        was = now;
        pthread_mutex_lock(&e->mu);
        e->leader = e->el.leader;
        e->lease_ok_ns = e->el.lease_ok_ns;
        e->etcd_ok = rv == 0;
        e->epoch = e->el.epoch;
        snprintf(e->current, sizeof(e->current), "%s", e->el.current);
        /* a step every third of the TTL, as util_elect_step asks; a follower more often, so
         * that it takes a dead leader's place within a quarter second of its lease's end */
        int64_t wait = rv != 0 ? 300000000
                       : now   ? (int64_t)e->el.ttl_s * 1000000000 / 3
                               : 250000000;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t ns = (int64_t)until.tv_nsec + wait;
        until.tv_sec += ns / 1000000000;
        until.tv_nsec = ns % 1000000000;
        while (!e->stop && pthread_cond_timedwait(&e->cv, &e->mu, &until) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&e->mu);
    if (util_elect_leading(&e->el)) {
        util_log(UTIL_LOG_NOTICE, "election: resigning %s", e->el.key);
    }
    util_elect_resign(&e->el);
    return NULL;
}

int probe_elect_start(const probe_elect_cfg *cfg, probe_elect **pe, char *err, size_t errlen)
{
    probe_elect *e = util_xcalloc(1, sizeof(*e));
    json_object *v = json_object_new_object();
    json_object_object_add(v, "name", json_object_new_string(cfg->name));
    json_object_object_add(v, "url", json_object_new_string(cfg->url));
    const char *value = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    int rv = -EINVAL;
    if (strlen(cfg->key) >= sizeof(e->el.key) || strlen(value) >= sizeof(e->el.value)) {
        snprintf(err, errlen, "--name and --advertise: too long for the leader key's value");
        goto fail;
    }
    /* every call bounded by a second: a step must end well within the TTL */
    if ((rv = util_etcd_new(cfg->endpoints, 1000, &e->etcd, err, errlen)) != 0) {
        goto fail;
    }
    util_elect_init(&e->el, e->etcd, cfg->key, value, cfg->ttl_s);
    e->ttl_s = e->el.ttl_s;
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &ca);
    pthread_condattr_destroy(&ca);
    if ((rv = -pthread_create(&e->thread, NULL, campaign, e)) != 0) {
        snprintf(err, errlen, "the election's thread: %s", strerror(-rv));
        pthread_cond_destroy(&e->cv);
        pthread_mutex_destroy(&e->mu);
        goto fail;
    }
    json_object_put(v);
    *pe = e;
    return 0;
fail:
    json_object_put(v);
    util_etcd_free(e->etcd);
    free(e);
    return rv;
}

void probe_elect_stop(probe_elect *e)
{
    if (!e) {
        return;
    }
    pthread_mutex_lock(&e->mu);
    e->stop = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    util_etcd_free(e->etcd);
    free(e);
}

void probe_elect_get(probe_elect *e, probe_elect_state *st)
{
    memset(st, 0, sizeof(*st));
    pthread_mutex_lock(&e->mu);
    /* as util_elect_leading: a step blocked on a member that does not answer cannot keep us
     * leading past the lease */
    st->leading = e->leader && mono_ns() - e->lease_ok_ns < (int64_t)(e->ttl_s - 1) * 1000000000;
    st->etcd_ok = e->etcd_ok;
    st->epoch = e->epoch;
    char cur[512];
    snprintf(cur, sizeof(cur), "%s", e->current);
    pthread_mutex_unlock(&e->mu);
    char perr[64];
    json_object *j =
                    cur[0] ? util_json_parse("leader", cur, strlen(cur), perr, sizeof(perr)) : NULL,
                *m;
    if (j && json_object_object_get_ex(j, "url", &m) && json_object_is_type(m, json_type_string)) {
        snprintf(st->leader, sizeof(st->leader), "%s", json_object_get_string(m));
    }
    if (j && json_object_object_get_ex(j, "name", &m) && json_object_is_type(m, json_type_string)) {
        snprintf(st->name, sizeof(st->name), "%s", json_object_get_string(m));
    }
    json_object_put(j);
}
