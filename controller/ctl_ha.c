/* SPDX-License-Identifier: MIT */
/* The keys, under the prefix P:
 *   P leader            the election's key (util_elect): {"name", "url"}, under the lease
 *   P members/NAME      each controller's {"name", "url"}, under its lease
 *   P version           {"version": V, "epoch": E, "tick": T}: the denylist's version, the
 *                       epoch of the leader that wrote it, the last maintenance window tick
 *   P log/V             the change that made version V (ctl_change.c), the last LOG_KEEP kept
 *   P deny/ID           each entry in force (a snapshot for a replica too far behind the log)
 * A change is one transaction: the leader key still ours (the fence) and the version key as
 * we last saw it, then the version, the log record and the entry's key. */
#include "ctl_ha.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_change.h"
#include "util.h"
#include "util_etcd.h"

#define LOG_KEEP 10000
#define POLL_MS 100

struct ctl_ha {
    ctl_ha_cfg cfg;
    char kleader[160], kversion[160], klog[160], kdeny[160], kmembers[160];
    char me[512]; /* our {"name","url"} */
    char name[256], url[512], etcd_urls[1024];
    util_etcd *etcd;  /* the thread's */
    util_etcd *wetcd; /* a change's, under wlock */
    util_elect el;    /* the thread's */
    pthread_t thread;
    bool running;
    pthread_mutex_t lock; /* what follows */
    pthread_cond_t cond;
    bool stop;
    util_elect pub; /* the election as of the last step */
    bool caught_up; /* the store holds etcd's version as of the last sync while leading */
    int64_t vmod;   /* the version key's mod revision as last seen (0: none) */
    int64_t vver;   /* the version it held at that revision: a commit writes vver + 1 */
    json_object *members;
    unsigned ahead;        /* the thread's: polls on end that found the store ahead of etcd */
    pthread_mutex_t wlock; /* one change at a time */
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The version key as read at |mod_rev|: revisions only grow, so an older read (a range taken
 * before our own commit landed) changes nothing. Called with ha->lock held. */
static void seen_version(ctl_ha *ha, int64_t mod_rev, int64_t version)
{
    if (mod_rev > ha->vmod) {
        ha->vmod = mod_rev;
        ha->vver = version;
    }
}

static void key_of(char *dest, size_t len, const char *dir, int64_t n)
{
    snprintf(dest, len, "%s%020" PRId64, dir, n);
}

static json_object *put_op(const char *key, const char *value, int64_t lease)
{
    json_object *op = json_object_new_object(), *p = json_object_new_object();
    json_object_object_add(p, "key", util_etcd_b64(key, strlen(key)));
    json_object_object_add(p, "value", util_etcd_b64(value, strlen(value)));
    if (lease) {
        json_object_object_add(p, "lease", json_object_new_int64(lease));
    }
    json_object_object_add(op, "request_put", p);
    return op;
}

static json_object *del_op(const char *key, const char *range_end)
{
    json_object *op = json_object_new_object(), *p = json_object_new_object();
    json_object_object_add(p, "key", util_etcd_b64(key, strlen(key)));
    if (range_end) {
        json_object_object_add(p, "range_end", util_etcd_b64(range_end, strlen(range_end)));
    }
    json_object_object_add(op, "request_delete_range", p);
    return op;
}

static json_object *range_op(const char *key, json_object *range_end)
{
    json_object *op = json_object_new_object(), *p = json_object_new_object();
    json_object_object_add(p, "key", util_etcd_b64(key, strlen(key)));
    if (range_end) {
        json_object_object_add(p, "range_end", range_end);
    }
    json_object_object_add(op, "request_range", p);
    return op;
}

/* compare the version key's mod revision (0: it does not exist) */
static json_object *version_cmp(const char *key, int64_t mod)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "key", util_etcd_b64(key, strlen(key)));
    json_object_object_add(c, "target", json_object_new_string(mod ? "MOD" : "CREATE"));
    json_object_object_add(c, "result", json_object_new_string("EQUAL"));
    json_object_object_add(c, mod ? "mod_revision" : "create_revision", json_object_new_int64(mod));
    return c;
}

static bool txn_succeeded(json_object *ans)
{
    json_object *s;
    return json_object_object_get_ex(ans, "succeeded", &s) && json_object_get_boolean(s);
}

static int64_t header_rev(json_object *ans)
{
    json_object *h;
    return json_object_object_get_ex(ans, "header", &h) ? util_etcd_int(h, "revision", 0) : 0;
}

static void version_text(char *dest, size_t len, int64_t v, int64_t epoch, int64_t tick)
{
    snprintf(dest, len, "{\"version\":%" PRId64 ",\"epoch\":%" PRId64 ",\"tick\":%" PRId64 "}", v,
             epoch, tick);
}

static int version_parse(const char *text, int64_t *v, int64_t *epoch, int64_t *tick)
{
    json_object *j = json_tokener_parse(text);
    int rv = j && json_object_is_type(j, json_type_object) ? 0 : -EPROTO;
    if (rv == 0) {
        *v = util_etcd_int(j, "version", -1);
        *epoch = util_etcd_int(j, "epoch", -1);
        *tick = util_etcd_int(j, "tick", 0);
        rv = *v < 0 || *epoch < 0 ? -EPROTO : 0;
    }
    json_object_put(j);
    return rv;
}

/* --- a change, on the caller's thread ------------------------------------------------------ */

int ctl_ha_commit(ctl_ha *ha, ctl_change *c, char *err, size_t errlen)
{
    /* one change at a time; a change waits for another's commit half a second at most, so that a
     * leader cut off from etcd (each commit then takes its timeouts) does not hold every HTTP
     * thread waiting here while reads go unanswered */
    if (!ctl_ha_leading(ha)) {
        snprintf(err, errlen, "this controller does not lead");
        return -EPERM;
    }
    /* a keepalive overdue: etcd is slow or out of reach, and a commit would only wait */
    pthread_mutex_lock(&ha->lock);
    int64_t age_ms = (mono_ms() * 1000000 - ha->pub.lease_ok_ns) / 1000000;
    pthread_mutex_unlock(&ha->lock);
    if (age_ms > (int64_t)ha->cfg.ttl_s * 1000 / 4 + 500) {
        snprintf(err, errlen, "etcd has not answered this controller for %lld ms",
                 (long long)age_ms);
        return -EAGAIN;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 500000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    if (pthread_mutex_timedlock(&ha->wlock, &until) != 0) {
        snprintf(err, errlen, "another change is being committed and etcd is slow to answer");
        return -EAGAIN;
    }
    pthread_mutex_lock(&ha->lock);
    bool leading = util_elect_leading(&ha->pub) && ha->caught_up;
    util_elect fence = ha->pub;
    int64_t vmod = ha->vmod, vver = ha->vver;
    pthread_mutex_unlock(&ha->lock);
    int rv = -EPERM;
    char *rec = NULL;
    json_object *body = NULL, *ans = NULL;
    if (!leading) {
        snprintf(err, errlen, "this controller does not lead");
        goto out;
    }
    /* the version comes from the version key as last seen, not from the store: the compare on
     * its revision then makes vver + 1 new in etcd whatever the store holds (a resync that read
     * etcd before our last commit may have set it back), so no two changes share a version, nor
     * two adds an id. The store must hold that version too: what an add was checked against. */
    int64_t have = ctl_store_version(ha->cfg.store);
    if (have != vver || vmod <= 0) {
        rv = -EAGAIN;
        snprintf(err, errlen,
                 have < 0 ? "the store could not be read"
                          : "this controller is catching up with etcd (version %" PRId64
                            " here, %" PRId64 " there)",
                 have, vver);
        pthread_cond_signal(&ha->cond);
        goto out;
    }
    c->version = vver + 1;
    c->epoch = fence.epoch;
    c->time = ctl_now_ms();
    int64_t tick = c->op == CTL_CHANGE_TICK ? c->time : ctl_store_window_last(ha->cfg.store);
    if (c->op == CTL_CHANGE_ADD) {
        c->entry.id = c->version; /* ids grow with the version: unique across leaders */
        c->entry.created = c->time;
    }
    rec = ctl_change_text(c);
    char vtext[128], klog[200], kdeny[200];
    version_text(vtext, sizeof(vtext), c->version, c->epoch, tick);
    key_of(klog, sizeof(klog), ha->klog, c->version);
    body = json_object_new_object();
    json_object *cmp = json_object_new_array(), *ops = json_object_new_array();
    util_elect_fence(&fence, cmp);
    json_object_array_add(cmp, version_cmp(ha->kversion, vmod));
    json_object_array_add(ops, put_op(ha->kversion, vtext, 0));
    json_object_array_add(ops, put_op(klog, rec, 0));
    if (c->op == CTL_CHANGE_ADD) {
        key_of(kdeny, sizeof(kdeny), ha->kdeny, c->entry.id);
        json_object *e = ctl_deny_raw_json(&c->entry);
        json_object_array_add(ops, put_op(kdeny, json_object_to_json_string(e), 0));
        json_object_put(e);
    } else if (c->op == CTL_CHANGE_REMOVE) {
        key_of(kdeny, sizeof(kdeny), ha->kdeny, c->id);
        json_object_array_add(ops, del_op(kdeny, NULL));
    }
    json_object_object_add(body, "compare", cmp);
    json_object_object_add(body, "success", ops);
    rv = util_etcd_call(ha->wetcd, "/v3/kv/txn", body, &ans, err, errlen);
    if (rv != 0) {
        /* the write may have landed all the same: the follower's next sync tells, and the
         * client's retry of an add is idempotent (the same entry again is the one it made) */
        rv = -EAGAIN;
        goto out;
    }
    if (!txn_succeeded(ans)) {
        /* deposed, or the version key moved under us: either way not ours to write now */
        pthread_mutex_lock(&ha->lock);
        ha->caught_up = false;
        pthread_mutex_unlock(&ha->lock);
        snprintf(err, errlen, "the change lost a race for the lead or the version; retry");
        rv = -EPERM;
        goto out;
    }
    pthread_mutex_lock(&ha->lock);
    seen_version(ha, header_rev(ans), c->version);
    pthread_mutex_unlock(&ha->lock);
    /* committed: the store takes it now, or its follower takes it from the log */
    int arv = ctl_store_apply(ha->cfg.store, c);
    if (arv < 0) {
        util_log(UTIL_LOG_WARNING,
                 "version %" PRId64 " is committed in etcd but not yet in the "
                 "store (%s): it will be taken from the log",
                 c->version, ctl_store_strerror(arv));
    }
    rv = 0;
out:
    free(rec);
    json_object_put(body);
    json_object_put(ans);
    pthread_mutex_unlock(&ha->wlock);
    return rv;
}

/* --- the follower, on the thread ----------------------------------------------------------- */

static int load_snapshot(ctl_ha *ha, char *err, size_t errlen)
{
    /* the version and the entries in one transaction: one revision's view of both */
    json_object *body = json_object_new_object(), *ans = NULL, *ops = json_object_new_array();
    json_object_array_add(ops, range_op(ha->kversion, NULL));
    json_object_array_add(ops, range_op(ha->kdeny, util_etcd_prefix_end(ha->kdeny)));
    json_object_object_add(body, "compare", json_object_new_array());
    json_object_object_add(body, "success", ops);
    int rv = util_etcd_call(ha->etcd, "/v3/kv/txn", body, &ans, err, errlen);
    json_object_put(body);
    if (rv != 0) {
        return rv;
    }
    json_object *resps = NULL, *r0, *r1;
    util_etcd_kv *vk = NULL, *dk = NULL;
    size_t nv = 0, nd = 0;
    ctl_deny *v = NULL;
    rv = -EPROTO;
    if (!json_object_object_get_ex(ans, "responses", &resps) ||
        json_object_array_length(resps) != 2 ||
        !json_object_object_get_ex(json_object_array_get_idx(resps, 0), "response_range", &r0) ||
        !json_object_object_get_ex(json_object_array_get_idx(resps, 1), "response_range", &r1) ||
        util_etcd_kvs(r0, &vk, &nv) != 0 || util_etcd_kvs(r1, &dk, &nd) != 0) {
        snprintf(err, errlen, "etcd: a snapshot that is not one");
        goto out;
    }
    int64_t version, epoch, tick;
    if (nv != 1 || version_parse(vk[0].value, &version, &epoch, &tick) != 0) {
        snprintf(err, errlen, "etcd: no version key, or one that is not ours");
        rv = nv == 0 ? -ENOENT : -EPROTO;
        goto out;
    }
    v = util_xcalloc(nd ? nd : 1, sizeof(*v));
    for (size_t i = 0; i < nd; i++) {
        json_object *j = json_tokener_parse(dk[i].value);
        int prv = ctl_deny_raw_parse(j, &v[i]);
        json_object_put(j);
        if (prv != 0) {
            snprintf(err, errlen, "etcd: entry key %s is no entry", dk[i].key);
            goto out;
        }
    }
    /* a commit of ours landed after this snapshot was read: it is older than the store */
    pthread_mutex_lock(&ha->lock);
    bool stale = vk[0].mod_rev < ha->vmod;
    pthread_mutex_unlock(&ha->lock);
    if (stale) {
        rv = 0;
        goto out;
    }
    rv = ctl_store_resync(ha->cfg.store, v, nd, version, epoch, tick);
    if (rv != 0) {
        snprintf(err, errlen, "the store: %s", ctl_store_strerror(rv));
        goto out;
    }
    util_log(UTIL_LOG_NOTICE,
             "the denylist from etcd: %zu entries, version %" PRId64 " of epoch %" PRId64, nd,
             version, epoch);
    pthread_mutex_lock(&ha->lock);
    seen_version(ha, vk[0].mod_rev, version);
    pthread_mutex_unlock(&ha->lock);
    rv = 0;
out:
    free(v);
    util_etcd_kvs_free(vk, nv);
    util_etcd_kvs_free(dk, nd);
    json_object_put(ans);
    return rv;
}

/* The leader of a cluster with no denylist yet gives it its store's */
/* One transaction of a seed: |ops| (taken) only while we lead and etcd has no version key */
static int seed_txn(ctl_ha *ha, const util_elect *el, json_object *ops, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *ans = NULL, *cmp = json_object_new_array();
    util_elect_fence(el, cmp);
    json_object_array_add(cmp, version_cmp(ha->kversion, 0));
    json_object_object_add(body, "compare", cmp);
    json_object_object_add(body, "success", ops);
    int rv = util_etcd_call(ha->etcd, "/v3/kv/txn", body, &ans, err, errlen);
    if (rv == 0 && !txn_succeeded(ans)) {
        snprintf(err, errlen, "etcd: another controller leads, or seeded it first");
        rv = -EPERM;
    }
    json_object_put(body);
    json_object_put(ans);
    return rv;
}

/* etcd refuses a transaction of more than 128 operations (--max-txn-ops) */
#define SEED_BATCH 100

/* The leader of a cluster with no denylist yet gives it its store's: what a partial seed of
 * an earlier leader left is removed first, then the entries go in batches, and the version
 * key last, so that nobody follows a snapshot that is not whole */
static int seed(ctl_ha *ha, const util_elect *el, char *err, size_t errlen)
{
    ctl_deny *v = NULL;
    size_t n = 0;
    int rv = ctl_store_deny_all(ha->cfg.store, &v, &n);
    if (rv != 0) {
        snprintf(err, errlen, "the store could not be read");
        return rv;
    }
    int64_t version = ctl_store_version(ha->cfg.store);
    char vtext[128], k[200];
    pthread_mutex_lock(&ha->lock);
    ha->vmod = ha->vver = 0; /* a cluster begun anew: its revisions too */
    pthread_mutex_unlock(&ha->lock);
    json_object *ops = json_object_new_array(), *end = util_etcd_prefix_end(ha->kdeny);
    char *e = util_etcd_unb64(end, NULL);
    json_object_put(end);
    json_object_array_add(ops, del_op(ha->kdeny, e));
    free(e);
    rv = seed_txn(ha, el, ops, err, errlen);
    for (size_t i = 0; rv == 0 && i < n; i += SEED_BATCH) {
        ops = json_object_new_array();
        for (size_t j = i; j < n && j < i + SEED_BATCH; j++) {
            key_of(k, sizeof(k), ha->kdeny, v[j].id);
            json_object *d = ctl_deny_raw_json(&v[j]);
            json_object_array_add(ops, put_op(k, json_object_to_json_string(d), 0));
            json_object_put(d);
        }
        rv = seed_txn(ha, el, ops, err, errlen);
    }
    if (rv == 0) {
        version_text(vtext, sizeof(vtext), version, el->epoch,
                     ctl_store_window_last(ha->cfg.store));
        ops = json_object_new_array();
        json_object_array_add(ops, put_op(ha->kversion, vtext, 0));
        rv = seed_txn(ha, el, ops, err, errlen);
    }
    if (rv == 0) {
        util_log(UTIL_LOG_NOTICE,
                 "etcd held no denylist: it has this store's %zu entries, version %" PRId64, n,
                 version);
    }
    free(v);
    return rv;
}

/* Takes the log from the store's version on; a gap (the log trimmed past it, or a store that
 * is not etcd's) is a resync from the snapshot. */
static int sync_log(ctl_ha *ha, bool *pchanged, char *err, size_t errlen)
{
    util_etcd_kv *vk = NULL, *lk = NULL;
    size_t nv = 0, nl = 0;
    int rv = util_etcd_range(ha->etcd, ha->kversion, NULL, 0, &vk, &nv, NULL, err, errlen);
    if (rv != 0) {
        return rv;
    }
    int64_t version = 0, epoch = 0, tick = 0;
    if (nv == 0) {
        rv = -ENOENT;
        goto out;
    }
    if (version_parse(vk[0].value, &version, &epoch, &tick) != 0) {
        snprintf(err, errlen, "etcd: version key %s holds no version", ha->kversion);
        rv = -EPROTO;
        goto out;
    }
    int64_t have = ctl_store_version(ha->cfg.store);
    if (have == version && ctl_store_epoch(ha->cfg.store) == epoch) {
        pthread_mutex_lock(&ha->lock);
        seen_version(ha, vk[0].mod_rev, version);
        pthread_mutex_unlock(&ha->lock);
        goto out;
    }
    /* ahead of etcd: a range read before our own commit landed, most often, which the next
     * poll sees through; for a second on end, a store that is not etcd's (etcd restored) */
    if (have > version || have < 0) {
        if (++ha->ahead >= 10) {
            ha->ahead = 0;
            /* etcd's revisions may have begun again too: what was seen of them goes */
            pthread_mutex_lock(&ha->lock);
            ha->vmod = ha->vver = 0;
            pthread_mutex_unlock(&ha->lock);
            rv = load_snapshot(ha, err, errlen);
            *pchanged = rv == 0;
        }
        goto out;
    }
    ha->ahead = 0;
    char from[200], to[200];
    key_of(from, sizeof(from), ha->klog, have + 1);
    key_of(to, sizeof(to), ha->klog, version + 1);
    rv = util_etcd_range(ha->etcd, from, to, 1000, &lk, &nl, NULL, err, errlen);
    if (rv != 0) {
        goto out;
    }
    for (size_t i = 0; i < nl; i++) {
        ctl_change c;
        if (ctl_change_parse(lk[i].value, &c) != 0 || c.version != have + 1 + (int64_t)i) {
            /* a gap: what is missing is in the snapshot */
            rv = load_snapshot(ha, err, errlen);
            *pchanged = rv == 0;
            goto out;
        }
        int arv = ctl_store_apply(ha->cfg.store, &c);
        if (arv < 0) {
            snprintf(err, errlen, "the store took version %" PRId64 " of the log: %s", c.version,
                     ctl_store_strerror(arv));
            rv = arv;
            goto out;
        }
        *pchanged = true;
    }
    if (nl > 0 && ctl_store_version(ha->cfg.store) == version) {
        pthread_mutex_lock(&ha->lock);
        seen_version(ha, vk[0].mod_rev, version);
        pthread_mutex_unlock(&ha->lock);
    }
    if (nl == 0) {
        rv = load_snapshot(ha, err, errlen);
        *pchanged = rv == 0;
    }
out:
    util_etcd_kvs_free(vk, nv);
    util_etcd_kvs_free(lk, nl);
    return rv;
}

static void trim_log(ctl_ha *ha)
{
    int64_t v = ctl_store_version(ha->cfg.store);
    if (v <= LOG_KEEP || v % 1000 != 0) {
        return;
    }
    char from[200], to[200], err[256];
    key_of(from, sizeof(from), ha->klog, 0);
    key_of(to, sizeof(to), ha->klog, v - LOG_KEEP);
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object_object_add(body, "key", util_etcd_b64(from, strlen(from)));
    json_object_object_add(body, "range_end", util_etcd_b64(to, strlen(to)));
    util_etcd_call(ha->etcd, "/v3/kv/deleterange", body, &ans, err, sizeof(err));
    json_object_put(body);
    json_object_put(ans);
}

static void read_members(ctl_ha *ha)
{
    util_etcd_kv *v = NULL;
    size_t n = 0;
    char err[256];
    json_object *end = util_etcd_prefix_end(ha->kmembers);
    char *e = util_etcd_unb64(end, NULL);
    json_object_put(end);
    if (util_etcd_range(ha->etcd, ha->kmembers, e, 64, &v, &n, NULL, err, sizeof(err)) == 0) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            json_object *m = json_tokener_parse(v[i].value);
            if (m && json_object_is_type(m, json_type_object)) {
                json_object_array_add(a, m);
            } else {
                json_object_put(m);
            }
        }
        pthread_mutex_lock(&ha->lock);
        json_object_put(ha->members);
        ha->members = a;
        pthread_mutex_unlock(&ha->lock);
    }
    free(e);
    util_etcd_kvs_free(v, n);
}

static void step(ctl_ha *ha, bool *was_leader, int64_t *next_members)
{
    char err[512];
    int rv = util_elect_step(&ha->el, err, sizeof(err));
    if (rv != 0) {
        util_log(UTIL_LOG_WARNING, "etcd: the campaign cannot go on: %s", err);
    }
    if (ha->el.lease && mono_ms() >= *next_members) {
        *next_members = mono_ms() + 1000;
        char k[300];
        snprintf(k, sizeof(k), "%s%s", ha->kmembers, ha->cfg.name);
        json_object *body = json_object_new_object(), *ans = NULL;
        json_object_object_add(body, "key", util_etcd_b64(k, strlen(k)));
        json_object_object_add(body, "value", util_etcd_b64(ha->me, strlen(ha->me)));
        json_object_object_add(body, "lease", json_object_new_int64(ha->el.lease));
        util_etcd_call(ha->etcd, "/v3/kv/put", body, &ans, err, sizeof(err));
        json_object_put(body);
        json_object_put(ans);
        read_members(ha);
    }
    bool leading = util_elect_leading(&ha->el);
    if (leading != *was_leader) {
        util_log(UTIL_LOG_NOTICE,
                 leading ? "leading, epoch %" PRId64 : "no longer leading (epoch %" PRId64 ")",
                 ha->el.epoch);
        *was_leader = leading;
    }
    pthread_mutex_lock(&ha->lock);
    ha->pub = ha->el;
    if (!leading) {
        ha->caught_up = false;
    }
    pthread_mutex_unlock(&ha->lock);
}

static void *run(void *arg)
{
    ctl_ha *ha = arg;
    bool was_leader = false, warned = false, first = true;
    int64_t next_step = 0, next_members = 0;
    for (;;) {
        pthread_mutex_lock(&ha->lock);
        bool stop = ha->stop;
        pthread_mutex_unlock(&ha->lock);
        if (stop) {
            break;
        }
        int64_t now = mono_ms();
        if (now >= next_step) {
            step(ha, &was_leader, &next_members);
            /* the leader keeps its lease alive four times a TTL (two may fail before it stops
             * leading); a follower campaigns at each poll, so it leads within one of the lease's
             * end */
            next_step = now + (util_elect_leading(&ha->el) ? ha->cfg.ttl_s * 1000 / 4 : POLL_MS);
        }
        char err[512];
        bool changed = false;
        /* at start, the store becomes etcd's: a store kept alone before may differ from it */
        int rv = first ? load_snapshot(ha, err, sizeof(err)) : 0;
        changed = first && rv == 0;
        if (rv == 0) {
            rv = sync_log(ha, &changed, err, sizeof(err));
        }
        if (rv == -ENOENT && util_elect_leading(&ha->el)) {
            rv = seed(ha, &ha->el, err, sizeof(err));
            if (rv == 0) {
                first = false; /* the store is what etcd holds now */
                continue;
            }
        }
        if (rv == 0) {
            first = false;
            pthread_mutex_lock(&ha->lock);
            ha->caught_up = util_elect_leading(&ha->el);
            pthread_mutex_unlock(&ha->lock);
            warned = false;
            if (util_elect_leading(&ha->el)) {
                trim_log(ha);
            }
        } else if (rv != -ENOENT && !warned) {
            util_log(UTIL_LOG_WARNING, "etcd: the denylist cannot be followed: %s", err);
            warned = true;
        }
        if (changed && ha->cfg.changed) {
            ha->cfg.changed(ha->cfg.user);
        }
        pthread_mutex_lock(&ha->lock);
        if (!ha->stop) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += POLL_MS * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&ha->cond, &ha->lock, &ts);
        }
        pthread_mutex_unlock(&ha->lock);
    }
    return NULL;
}

int ctl_ha_start(const ctl_ha_cfg *cfg, ctl_ha **pha, char *err, size_t errlen)
{
    ctl_ha *ha = util_xcalloc(1, sizeof(*ha));
    ha->cfg = *cfg;
    /* the caller's strings need not outlive this call */
    snprintf(ha->name, sizeof(ha->name), "%s", cfg->name);
    snprintf(ha->url, sizeof(ha->url), "%s", cfg->url);
    snprintf(ha->etcd_urls, sizeof(ha->etcd_urls), "%s", cfg->etcd);
    ha->cfg.name = ha->name;
    ha->cfg.url = ha->url;
    ha->cfg.etcd = ha->etcd_urls;
    ha->cfg.prefix = NULL;
    if (ha->cfg.ttl_s < 2) {
        ha->cfg.ttl_s = 3;
    }
    const char *p = cfg->prefix && cfg->prefix[0] ? cfg->prefix : "/mrcfab/";
    snprintf(ha->kleader, sizeof(ha->kleader), "%sleader", p);
    snprintf(ha->kversion, sizeof(ha->kversion), "%sversion", p);
    snprintf(ha->klog, sizeof(ha->klog), "%slog/", p);
    snprintf(ha->kdeny, sizeof(ha->kdeny), "%sdeny/", p);
    snprintf(ha->kmembers, sizeof(ha->kmembers), "%smembers/", p);
    json_object *me = json_object_new_object();
    json_object_object_add(me, "name", json_object_new_string(cfg->name));
    json_object_object_add(me, "url", json_object_new_string(cfg->url));
    snprintf(ha->me, sizeof(ha->me), "%s",
             json_object_to_json_string_ext(me, JSON_C_TO_STRING_PLAIN));
    json_object_put(me);
    /* a call to one member may take a second: a TTL of 3 s leaves room for a step's retries */
    int rv = util_etcd_new(cfg->etcd, 1000, &ha->etcd, err, errlen);
    if (rv == 0) {
        /* a change's commit waits half a second a member: a commit takes milliseconds */
        rv = util_etcd_new(cfg->etcd, 500, &ha->wetcd, err, errlen);
    }
    if (rv != 0) {
        util_etcd_free(ha->etcd);
        free(ha);
        return rv;
    }
    util_elect_init(&ha->el, ha->etcd, ha->kleader, ha->me, ha->cfg.ttl_s);
    ha->pub = ha->el;
    pthread_mutex_init(&ha->lock, NULL);
    pthread_mutex_init(&ha->wlock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ha->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&ha->thread, NULL, run, ha) != 0) {
        snprintf(err, errlen, "cannot start the etcd thread");
        ctl_ha_stop(ha);
        return -ENOMEM;
    }
    ha->running = true;
    *pha = ha;
    return 0;
}

void ctl_ha_stop(ctl_ha *ha)
{
    if (!ha) {
        return;
    }
    if (ha->running) {
        pthread_mutex_lock(&ha->lock);
        ha->stop = true;
        pthread_cond_signal(&ha->cond);
        pthread_mutex_unlock(&ha->lock);
        pthread_join(ha->thread, NULL);
    }
    util_elect_resign(&ha->el);
    util_etcd_free(ha->etcd);
    util_etcd_free(ha->wetcd);
    json_object_put(ha->members);
    pthread_mutex_destroy(&ha->lock);
    pthread_mutex_destroy(&ha->wlock);
    pthread_cond_destroy(&ha->cond);
    free(ha);
}

bool ctl_ha_leading(ctl_ha *ha)
{
    pthread_mutex_lock(&ha->lock);
    bool l = util_elect_leading(&ha->pub) && ha->caught_up;
    pthread_mutex_unlock(&ha->lock);
    return l;
}

static void url_of(const char *value, char *url, size_t len)
{
    json_object *j = json_tokener_parse(value), *u;
    url[0] = '\0';
    if (j && json_object_object_get_ex(j, "url", &u) && json_object_is_type(u, json_type_string)) {
        snprintf(url, len, "%s", json_object_get_string(u));
    }
    json_object_put(j);
}

void ctl_ha_leader(ctl_ha *ha, char *url, size_t len, int64_t *pepoch)
{
    pthread_mutex_lock(&ha->lock);
    url_of(ha->pub.current, url, len);
    /* ourselves while not leading (cut off, or not caught up): nobody a client could be sent to */
    if (strcmp(url, ha->cfg.url) == 0 && !(util_elect_leading(&ha->pub) && ha->caught_up)) {
        url[0] = '\0';
    }
    if (pepoch) {
        *pepoch = ha->pub.epoch;
    }
    pthread_mutex_unlock(&ha->lock);
}

json_object *ctl_ha_cluster_json(ctl_ha *ha)
{
    json_object *j = json_object_new_object(), *self = json_object_new_object();
    pthread_mutex_lock(&ha->lock);
    bool leading = util_elect_leading(&ha->pub) && ha->caught_up;
    json_object_object_add(self, "name", json_object_new_string(ha->cfg.name));
    json_object_object_add(self, "url", json_object_new_string(ha->cfg.url));
    json_object_object_add(self, "role", json_object_new_string(leading ? "leader" : "follower"));
    json_object_object_add(j, "self", self);
    json_object *l = ha->pub.current[0] ? json_tokener_parse(ha->pub.current) : NULL;
    if (l && json_object_is_type(l, json_type_object)) {
        json_object_object_add(l, "epoch", json_object_new_int64(ha->pub.epoch));
        json_object_object_add(j, "leader", l);
    } else {
        json_object_put(l);
        json_object_object_add(j, "leader", NULL);
    }
    json_object *ms = json_object_new_array();
    size_t n = ha->members ? json_object_array_length(ha->members) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(ha->members, i), *copy = NULL;
        json_object_deep_copy(m, &copy, NULL);
        char lurl[512], murl[512];
        url_of(ha->pub.current, lurl, sizeof(lurl));
        url_of(json_object_to_json_string(copy), murl, sizeof(murl));
        json_object_object_add(
            copy, "role",
            json_object_new_string(lurl[0] && strcmp(lurl, murl) == 0 ? "leader" : "follower"));
        json_object_array_add(ms, copy);
    }
    json_object_object_add(j, "members", ms);
    json_object_object_add(j, "etcd", json_object_new_string(ha->cfg.etcd));
    pthread_mutex_unlock(&ha->lock);
    return j;
}
