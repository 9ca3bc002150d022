/* SPDX-License-Identifier: MIT */
#include "util_etcd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "util_peers.h"

struct util_etcd {
    util_peers peers;
    unsigned timeout_ms;
    char last[256];
};

int util_etcd_new(const char *endpoints, unsigned timeout_ms, util_etcd **pe, char *err,
                  size_t errlen)
{
    util_etcd *e = util_xcalloc(1, sizeof(*e));
    char why[256];
    if (util_peers_parse(&e->peers, endpoints, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--etcd: %s", why);
        free(e);
        return -EINVAL;
    }
    e->timeout_ms = timeout_ms ? timeout_ms : 2000;
    *pe = e;
    return 0;
}

void util_etcd_free(util_etcd *e)
{
    if (e) {
        util_peers_free(&e->peers);
        free(e);
    }
}

const char *util_etcd_endpoint(const util_etcd *e)
{
    return e->last;
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

json_object *util_etcd_b64(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    char *out = util_xmalloc((len + 2) / 3 * 4 + 1), *o = out;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < len ? (uint32_t)u[i + 1] << 8 : 0) |
                     (i + 2 < len ? u[i + 2] : 0);
        *o++ = b64chars[v >> 18 & 63];
        *o++ = b64chars[v >> 12 & 63];
        *o++ = i + 1 < len ? b64chars[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? b64chars[v & 63] : '=';
    }
    *o = '\0';
    json_object *j = json_object_new_string_len(out, (int)(o - out));
    free(out);
    return j;
}

static int b64val(char c)
{
    const char *p = c ? strchr(b64chars, c) : NULL;
    return p ? (int)(p - b64chars) : -1;
}

char *util_etcd_unb64(json_object *j, size_t *plen)
{
    if (!j || !json_object_is_type(j, json_type_string)) {
        return NULL;
    }
    const char *s = json_object_get_string(j);
    size_t n = (size_t)json_object_get_string_len(j);
    if (n % 4) {
        return NULL;
    }
    char *out = util_xmalloc(n / 4 * 3 + 1);
    size_t len = 0;
    for (size_t i = 0; i < n; i += 4) {
        int a = b64val(s[i]), b = b64val(s[i + 1]);
        int c = s[i + 2] == '=' && i + 4 == n ? 0 : b64val(s[i + 2]);
        int d = s[i + 3] == '=' && i + 4 == n ? 0 : b64val(s[i + 3]);
        if (a < 0 || b < 0 || c < 0 || d < 0 || (s[i + 2] == '=' && s[i + 3] != '=')) {
            free(out);
            return NULL;
        }
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        out[len++] = (char)(v >> 16);
        if (s[i + 2] != '=') {
            out[len++] = (char)(v >> 8 & 0xff);
        }
        if (s[i + 3] != '=') {
            out[len++] = (char)(v & 0xff);
        }
    }
    out[len] = '\0';
    if (plen) {
        *plen = len;
    }
    return out;
}

json_object *util_etcd_prefix_end(const char *prefix)
{
    size_t n = strlen(prefix);
    char *end = util_xmalloc(n + 1);
    memcpy(end, prefix, n + 1);
    /* the last byte that is not 0xff, plus one, with what follows it dropped */
    while (n > 0 && (unsigned char)end[n - 1] == 0xff) {
        n--;
    }
    json_object *j;
    if (n == 0) {
        j = util_etcd_b64("\0", 1); /* every key */
    } else {
        end[n - 1] = (char)((unsigned char)end[n - 1] + 1);
        j = util_etcd_b64(end, n);
    }
    free(end);
    return j;
}

int64_t util_etcd_int(json_object *obj, const char *field, int64_t dflt)
{
    json_object *v;
    if (!obj || !json_object_object_get_ex(obj, field, &v)) {
        return dflt;
    }
    if (json_object_is_type(v, json_type_int)) {
        return json_object_get_int64(v);
    }
    if (json_object_is_type(v, json_type_string)) {
        char *end;
        errno = 0;
        long long n = strtoll(json_object_get_string(v), &end, 10);
        if (!errno && end != json_object_get_string(v) && *end == '\0') {
            return n;
        }
    }
    return dflt;
}

/* The gateway's error object as a sentence and a code: a unary call's {"error": TEXT, "code": N,
 * "message": TEXT}, or a stream's {"error": {"grpc_code": N, "http_code": N, "message": TEXT}}
 * (a keepalive's). The codes of a cluster that cannot serve now are -EAGAIN, the rest -EPROTO. */
static int gateway_error(json_object *ans, int status, char *err, size_t errlen)
{
    json_object *m = NULL, *inner = NULL;
    int64_t code;
    if (json_object_object_get_ex(ans, "error", &inner) &&
        json_object_is_type(inner, json_type_object)) {
        json_object_object_get_ex(inner, "message", &m);
        code = util_etcd_int(inner, "grpc_code", -1);
    } else {
        if (!json_object_object_get_ex(ans, "message", &m)) {
            json_object_object_get_ex(ans, "error", &m);
        }
        code = util_etcd_int(ans, "code", -1);
    }
    const char *msg =
        m && json_object_is_type(m, json_type_string) ? json_object_get_string(m) : "an error";
    snprintf(err, errlen, "etcd: %.300s (HTTP %d, code %" PRId64 ")", msg, status, code);
    /* gRPC codes: 4 deadline exceeded, 8 resource exhausted, 13 internal, 14 unavailable; a
     * write without a quorum ends in the gateway's own deadline, code 2 (unknown) and HTTP 500 */
    if (code == 4 || code == 8 || code == 13 || code == 14 || status == 503 ||
        (code == 2 && strstr(msg, "deadline exceeded"))) {
        return -EAGAIN;
    }
    return -EPROTO;
}

int util_etcd_call(util_etcd *e, const char *path, json_object *body, json_object **pans, char *err,
                   size_t errlen)
{
    const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
    util_http_opts o = {
        .method = "POST", .body = text, .bodylen = strlen(text), .timeout_ms = e->timeout_ms};
    int rv = -ETIMEDOUT;
    /* what the round says, most telling first: a member answered that the cluster cannot serve
     * now; one took the call and did not answer in time (the others refused it, say) */
    bool refused = false, timedout = false;
    char refusal[512] = "", timeout[512] = "";
    *pans = NULL;
    snprintf(err, errlen, "etcd: no member answered");
    /* each member once, from the one that answered last */
    for (size_t i = 0; i < e->peers.n; i++) {
        char url[512], why[512];
        snprintf(url, sizeof(url), "%s%s", util_peers_current(&e->peers), path);
        snprintf(e->last, sizeof(e->last), "%s", util_peers_current(&e->peers));
        int status = 0;
        char *answer = NULL;
        int hrv = util_http_request(url, &o, &status, &answer, NULL, why, sizeof(why));
        if (hrv != 0) {
            if (hrv == -EINVAL) {
                snprintf(err, errlen, "etcd: %s", why);
                return -EINVAL; /* the URL itself: every member's is alike */
            }
            rv = hrv == -ECONNREFUSED ? -ECONNREFUSED : -ETIMEDOUT;
            snprintf(err, errlen, "etcd: %s", why);
            if (rv == -ETIMEDOUT) {
                timedout = true;
                snprintf(timeout, sizeof(timeout), "%s", err);
            }
            util_peers_failed(&e->peers);
            continue;
        }
        json_object *ans = json_tokener_parse(answer);
        free(answer);
        if (!ans || !json_object_is_type(ans, json_type_object)) {
            json_object_put(ans);
            snprintf(err, errlen, "etcd: %s answered HTTP %d and no JSON object", url, status);
            rv = -EPROTO;
            util_peers_failed(&e->peers);
            continue;
        }
        /* a stream (keepalive) that fails after its headers says so in a 200 */
        if (status == 200 && !json_object_object_get_ex(ans, "error", NULL)) {
            util_peers_ok(&e->peers);
            *pans = ans;
            return 0;
        }
        rv = gateway_error(ans, status, err, errlen);
        json_object_put(ans);
        if (rv != -EAGAIN) {
            util_peers_ok(&e->peers); /* it answered: the call itself is at fault */
            return rv;
        }
        refused = true;
        snprintf(refusal, sizeof(refusal), "%s", err);
        util_peers_failed(&e->peers);
    }
    /* members that did not answer say less than one that answered the cluster cannot serve */
    if (refused) {
        snprintf(err, errlen, "%s", refusal);
        return -EAGAIN;
    }
    if (timedout) {
        snprintf(err, errlen, "%s", timeout);
        return -ETIMEDOUT;
    }
    return rv;
}

void util_etcd_kvs_free(util_etcd_kv *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

int util_etcd_kvs(json_object *range, util_etcd_kv **pv, size_t *pn)
{
    json_object *kvs;
    *pv = NULL;
    *pn = 0;
    if (!json_object_object_get_ex(range, "kvs", &kvs)) {
        return 0; /* the gateway leaves out an empty array */
    }
    if (!json_object_is_type(kvs, json_type_array)) {
        return -EPROTO;
    }
    size_t n = json_object_array_length(kvs);
    util_etcd_kv *v = util_xcalloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        json_object *kv = json_object_array_get_idx(kvs, i), *k = NULL, *val = NULL;
        json_object_object_get_ex(kv, "key", &k);
        json_object_object_get_ex(kv, "value", &val);
        v[i].key = util_etcd_unb64(k, NULL);
        v[i].value = val ? util_etcd_unb64(val, &v[i].vlen) : util_xcalloc(1, 1);
        if (!v[i].key || !v[i].value) {
            util_etcd_kvs_free(v, i + 1);
            return -EPROTO;
        }
        v[i].create_rev = util_etcd_int(kv, "create_revision", 0);
        v[i].mod_rev = util_etcd_int(kv, "mod_revision", 0);
        v[i].lease = util_etcd_int(kv, "lease", 0);
    }
    *pv = v;
    *pn = n;
    return 0;
}

int util_etcd_range(util_etcd *e, const char *key, const char *range_end, int64_t limit,
                    util_etcd_kv **pv, size_t *pn, int64_t *prev, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object_object_add(body, "key", util_etcd_b64(key, strlen(key)));
    if (range_end) {
        json_object_object_add(body, "range_end", util_etcd_b64(range_end, strlen(range_end)));
    }
    if (limit > 0) {
        json_object_object_add(body, "limit", json_object_new_int64(limit));
    }
    int rv = util_etcd_call(e, "/v3/kv/range", body, &ans, err, errlen);
    json_object_put(body);
    if (rv == 0) {
        rv = util_etcd_kvs(ans, pv, pn);
        if (rv != 0) {
            snprintf(err, errlen, "etcd: a range answer that is not one");
        }
        json_object *h;
        if (prev && json_object_object_get_ex(ans, "header", &h)) {
            *prev = util_etcd_int(h, "revision", 0);
        }
    }
    json_object_put(ans);
    return rv;
}

int util_etcd_lease_grant(util_etcd *e, unsigned ttl_s, int64_t *pid, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object_object_add(body, "TTL", json_object_new_int64(ttl_s));
    int rv = util_etcd_call(e, "/v3/lease/grant", body, &ans, err, errlen);
    json_object_put(body);
    if (rv == 0) {
        *pid = util_etcd_int(ans, "ID", 0);
        if (*pid == 0) {
            snprintf(err, errlen, "etcd: a lease grant without an ID");
            rv = -EPROTO;
        }
    }
    json_object_put(ans);
    return rv;
}

int util_etcd_lease_keepalive(util_etcd *e, int64_t id, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object_object_add(body, "ID", json_object_new_int64(id));
    /* a stream of one result: the gateway ends it when the request's body does */
    int rv = util_etcd_call(e, "/v3/lease/keepalive", body, &ans, err, errlen);
    json_object_put(body);
    if (rv == 0) {
        json_object *res = NULL;
        json_object_object_get_ex(ans, "result", &res);
        if (util_etcd_int(res ? res : ans, "TTL", 0) <= 0) {
            snprintf(err, errlen, "etcd: lease %" PRIx64 " has expired", (uint64_t)id);
            rv = -ENOENT;
        }
    }
    json_object_put(ans);
    return rv;
}

int util_etcd_lease_revoke(util_etcd *e, int64_t id, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object_object_add(body, "ID", json_object_new_int64(id));
    int rv = util_etcd_call(e, "/v3/lease/revoke", body, &ans, err, errlen);
    json_object_put(body);
    json_object_put(ans);
    return rv;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void util_elect_init(util_elect *el, util_etcd *etcd, const char *key, const char *value,
                     unsigned ttl_s)
{
    memset(el, 0, sizeof(*el));
    el->etcd = etcd;
    snprintf(el->key, sizeof(el->key), "%s", key);
    snprintf(el->value, sizeof(el->value), "%s", value);
    el->ttl_s = ttl_s ? ttl_s : 3;
}

/* One txn: take the key under our lease if nobody holds it; either way, read it. */
static int campaign(util_elect *el, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object *cmp = json_object_new_array(), *c = json_object_new_object();
    json_object_object_add(c, "key", util_etcd_b64(el->key, strlen(el->key)));
    json_object_object_add(c, "target", json_object_new_string("CREATE"));
    json_object_object_add(c, "result", json_object_new_string("EQUAL"));
    json_object_object_add(c, "create_revision", json_object_new_int64(0));
    json_object_array_add(cmp, c);
    json_object_object_add(body, "compare", cmp);
    json_object *put = json_object_new_object(), *rp = json_object_new_object();
    json_object_object_add(rp, "key", util_etcd_b64(el->key, strlen(el->key)));
    json_object_object_add(rp, "value", util_etcd_b64(el->value, strlen(el->value)));
    json_object_object_add(rp, "lease", json_object_new_int64(el->lease));
    json_object_object_add(put, "request_put", rp);
    json_object *succ = json_object_new_array();
    json_object_array_add(succ, put);
    json_object *get = json_object_new_object(), *rr = json_object_new_object();
    json_object_object_add(rr, "key", util_etcd_b64(el->key, strlen(el->key)));
    json_object_object_add(get, "request_range", rr);
    json_object_array_add(succ, json_object_get(get));
    json_object_object_add(body, "success", succ);
    json_object *fail = json_object_new_array();
    json_object_array_add(fail, get);
    json_object_object_add(body, "failure", fail);
    int rv = util_etcd_call(el->etcd, "/v3/kv/txn", body, &ans, err, errlen);
    json_object_put(body);
    if (rv != 0) {
        return rv;
    }
    /* the last response is the range, in success and failure alike */
    json_object *resps = NULL, *last = NULL, *range = NULL;
    util_etcd_kv *kv = NULL;
    size_t n = 0;
    rv = -EPROTO;
    if (json_object_object_get_ex(ans, "responses", &resps) &&
        json_object_is_type(resps, json_type_array) && json_object_array_length(resps) > 0 &&
        (last = json_object_array_get_idx(resps, json_object_array_length(resps) - 1)) &&
        json_object_object_get_ex(last, "response_range", &range) &&
        util_etcd_kvs(range, &kv, &n) == 0) {
        rv = 0;
        if (n == 0) {
            /* gone between the compare and the range: nobody leads this instant */
            el->leader = false;
            el->current[0] = '\0';
        } else {
            el->leader = kv[0].lease == el->lease;
            el->epoch = kv[0].create_rev;
            el->won = el->leader ? kv[0].create_rev : 0;
            snprintf(el->current, sizeof(el->current), "%s", kv[0].value);
        }
    } else {
        snprintf(err, errlen, "etcd: a campaign's transaction answered no leader key");
    }
    util_etcd_kvs_free(kv, n);
    json_object_put(ans);
    return rv;
}

int util_elect_step(util_elect *el, char *err, size_t errlen)
{
    int64_t now = mono_ns();
    int rv = 0;
    if (el->lease) {
        rv = util_etcd_lease_keepalive(el->etcd, el->lease, err, errlen);
        if (rv == 0) {
            el->lease_ok_ns = now;
        } else if (rv == -ENOENT) {
            el->lease = 0; /* expired: our key has gone with it */
            el->leader = false;
            el->won = 0;
        }
    }
    if (!util_elect_leading(el)) {
        el->leader = false;
    }
    if (rv != 0 && rv != -ENOENT) {
        el->leader = false;
        return rv;
    }
    if (!el->lease) {
        rv = util_etcd_lease_grant(el->etcd, el->ttl_s, &el->lease, err, errlen);
        if (rv != 0) {
            el->lease = 0;
            el->leader = false;
            return rv;
        }
        el->lease_ok_ns = now;
    }
    rv = campaign(el, err, errlen);
    if (rv != 0) {
        el->leader = false;
    }
    return rv;
}

bool util_elect_leading(const util_elect *el)
{
    /* etcd counts the lease's TTL from when the keepalive reached it, after lease_ok_ns:
     * half a second before the TTL from there, nobody else can lead yet */
    return el->leader &&
           mono_ns() - el->lease_ok_ns < (int64_t)el->ttl_s * 1000000000 - 500000000;
}

void util_elect_resign(util_elect *el)
{
    char err[256];
    if (el->lease) {
        util_etcd_lease_revoke(el->etcd, el->lease, err, sizeof(err));
    }
    el->lease = 0;
    el->leader = false;
    el->won = 0;
}

void util_elect_fence(const util_elect *el, json_object *compare)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "key", util_etcd_b64(el->key, strlen(el->key)));
    json_object_object_add(c, "target", json_object_new_string("CREATE"));
    json_object_object_add(c, "result", json_object_new_string("EQUAL"));
    /* no key has a create revision of -1, and a missing one has 0 */
    json_object_object_add(c, "create_revision", json_object_new_int64(el->won ? el->won : -1));
    json_object_array_add(compare, c);
}
