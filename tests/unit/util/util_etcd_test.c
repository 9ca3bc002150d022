/* SPDX-License-Identifier: MIT */
/* util_etcd against a real cluster of three etcd members on loopback (tests/ha/etcd_cluster.sh):
 * the codecs, kv and txn calls, leases, the leader election and its fencing, a member that
 * does not answer, and a cluster that has lost its quorum. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util_etcd.h"
#include "util_test.h"

#define TTL 3 /* the election's lease, in seconds */

static char dir[256];
static char endpoints[512];
static char why[1024]; /* why the cluster is not there, "" when it is */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Runs |fmt| in bash with tests/ha/etcd_cluster.sh sourced and the scratch directory as $D;
 * its exit status. */
static int cluster_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cluster_sh(const char *fmt, ...)
{
    char cmd[1024], line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line),
             "D='%s' bash -c 'source \"%s/tests/ha/etcd_cluster.sh\" && %s' >>'%s/cluster.log' "
             "2>&1",
             dir, MRCFAB_SOURCE_DIR, cmd, dir);
    return system(line);
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN); /* a member that goes while a request is written to it */
    util_test_mkdtemp(dir, sizeof(dir), "util_etcd");
    why[0] = '\0';
    if (system("command -v etcd >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1") != 0) {
        snprintf(why, sizeof(why),
                 "etcd is not installed (etcd and etcdctl not on PATH): deploy/install-deps.sh "
                 "installs etcd-server and etcd-client");
        return;
    }
    if (cluster_sh("etcd_up \"$D\" 3 && printf %%s \"$ETCD_ENDPOINTS\" >\"$D/endpoints\"") != 0) {
        snprintf(why, sizeof(why), "the etcd cluster did not start: see %s/cluster.log", dir);
        return;
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/endpoints", dir);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(endpoints, sizeof(endpoints), f) || !endpoints[0]) {
        snprintf(why, sizeof(why), "etcd_up wrote no endpoints to %s", path);
    }
    if (f) {
        fclose(f);
    }
}

static void teardown(void)
{
    if (dir[0]) {
        cluster_sh("etcd_down \"$D\"");
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0) {
            fprintf(stderr, "could not remove %s\n", dir);
        }
    }
}

static void need_cluster(void)
{
    ck_assert_msg(!why[0], "%s", why);
}

/* A client of the cluster (or of |list|) with calls of at most |timeout_ms| each. */
static util_etcd *client(const char *list, unsigned timeout_ms)
{
    util_etcd *e = NULL;
    char err[256] = "";
    ck_assert_msg(util_etcd_new(list ? list : endpoints, timeout_ms, &e, err, sizeof(err)) == 0,
                  "util_etcd_new: %s", err);
    return e;
}

/* A port of loopback that nothing listens on: bound by us and let go. */
static unsigned dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    ck_assert(fd >= 0);
    ck_assert(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    ck_assert(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* A txn that puts |key| = |value|, fenced on |el| when it is not NULL: 0 with whether it
 * succeeded, or util_etcd_call's code. */
static int txn_put(util_etcd *e, const util_elect *el, const char *key, const char *value,
                   bool *succeeded, char *err, size_t errlen)
{
    json_object *body = json_object_new_object(), *cmp = json_object_new_array();
    if (el) {
        util_elect_fence(el, cmp);
    }
    json_object_object_add(body, "compare", cmp);
    json_object *put = json_object_new_object(), *rp = json_object_new_object();
    json_object_object_add(rp, "key", util_etcd_b64(key, strlen(key)));
    json_object_object_add(rp, "value", util_etcd_b64(value, strlen(value)));
    json_object_object_add(put, "request_put", rp);
    json_object *succ = json_object_new_array();
    json_object_array_add(succ, put);
    json_object_object_add(body, "success", succ);
    json_object *ans = NULL;
    int rv = util_etcd_call(e, "/v3/kv/txn", body, &ans, err, errlen);
    json_object_put(body);
    if (rv == 0) {
        json_object *s = NULL;
        *succeeded = json_object_object_get_ex(ans, "succeeded", &s) && json_object_get_boolean(s);
    }
    json_object_put(ans);
    return rv;
}

static void put_ok(util_etcd *e, const char *key, const char *value)
{
    char err[512] = "";
    bool ok = false;
    ck_assert_msg(txn_put(e, NULL, key, value, &ok, err, sizeof(err)) == 0, "put %s: %s", key, err);
    ck_assert_msg(ok, "an unconditional txn did not succeed");
}

/* The value of |key| ("" when it is absent: |*pkv| then zeroed). */
static void get_one(util_etcd *e, const char *key, util_etcd_kv *out)
{
    util_etcd_kv *v = NULL;
    size_t n = 0;
    char err[512] = "";
    ck_assert_msg(util_etcd_range(e, key, NULL, 0, &v, &n, NULL, err, sizeof(err)) == 0,
                  "range %s: %s", key, err);
    ck_assert_uint_le(n, 1);
    memset(out, 0, sizeof(*out));
    if (n) {
        *out = v[0];
        v[0].key = v[0].value = NULL;
    }
    util_etcd_kvs_free(v, n);
}

static void kv_clear(util_etcd_kv *kv)
{
    free(kv->key);
    free(kv->value);
    memset(kv, 0, sizeof(*kv));
}

/* ---- codecs: no cluster needed ---- */

static char *b64(const char *s, size_t len)
{
    json_object *j = util_etcd_b64(s, len);
    char *out = strdup(json_object_get_string(j));
    json_object_put(j);
    return out;
}

/* |text| decoded, or NULL when refused. */
static char *unb64(const char *text, size_t textlen, size_t *plen)
{
    json_object *j = json_object_new_string_len(text, (int)textlen);
    char *out = util_etcd_unb64(j, plen);
    json_object_put(j);
    return out;
}

START_TEST(test_util_etcd_b64_vectors)
{
    /* RFC 4648, section 10 */
    static const char *vec[][2] = {{"", ""},
                                   {"f", "Zg=="},
                                   {"fo", "Zm8="},
                                   {"foo", "Zm9v"},
                                   {"foob", "Zm9vYg=="},
                                   {"fooba", "Zm9vYmE="},
                                   {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        char *enc = b64(vec[i][0], strlen(vec[i][0]));
        ck_assert_str_eq(enc, vec[i][1]);
        free(enc);
        size_t len = 99;
        char *dec = unb64(vec[i][1], strlen(vec[i][1]), &len);
        ck_assert_msg(dec, "'%s' refused", vec[i][1]);
        ck_assert_uint_eq(len, strlen(vec[i][0]));
        ck_assert_str_eq(dec, vec[i][0]);
        free(dec);
    }
    /* every byte, NUL and 0xff included, both ways */
    char all[256];
    for (int i = 0; i < 256; i++) {
        all[i] = (char)i;
    }
    for (size_t len = 250; len <= 256; len++) {
        char *enc = b64(all, len);
        ck_assert_uint_eq(strlen(enc), (len + 2) / 3 * 4);
        size_t dlen = 0;
        char *dec = unb64(enc, strlen(enc), &dlen);
        ck_assert_ptr_nonnull(dec);
        ck_assert_uint_eq(dlen, len);
        ck_assert(memcmp(dec, all, len) == 0);
        ck_assert_int_eq(dec[len], '\0');
        free(dec);
        free(enc);
    }
    /* the bytes of a known vector with '+' and '/' */
    size_t dlen = 0;
    char *dec = unb64("+/8=", 4, &dlen);
    ck_assert_ptr_nonnull(dec);
    ck_assert_uint_eq(dlen, 2);
    ck_assert_uint_eq((unsigned char)dec[0], 0xfb);
    ck_assert_uint_eq((unsigned char)dec[1], 0xff);
    free(dec);
    /* a NULL length is allowed */
    dec = unb64("Zm8=", 4, NULL);
    ck_assert_str_eq(dec, "fo");
    free(dec);
}
END_TEST

START_TEST(test_util_etcd_b64_refused)
{
    static const char *bad[] = {"Z",        "Zg",        "Zg=",      "Zm9vY",
                                "====",     "Z===",      "=Zg=",     "Zg=a",
                                "Zm=v",     "Zg==Zg==",  "Zm8=Zm9v", "Zm9v!A==",
                                "Zm9v YQ=", "Zm9v\nYQ=", "Zm-_",     "Zm9v\xc3\xa9Q="};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *dec = unb64(bad[i], strlen(bad[i]), NULL);
        ck_assert_msg(dec == NULL, "'%s' taken", bad[i]);
    }
    /* a NUL inside the string */
    ck_assert_ptr_null(unb64("Zm\0v", 4, NULL));
    /* not a string at all */
    json_object *n = json_object_new_int(42);
    ck_assert_ptr_null(util_etcd_unb64(n, NULL));
    json_object_put(n);
    ck_assert_ptr_null(util_etcd_unb64(NULL, NULL));
}
END_TEST

static void prefix_end_is(const char *prefix, const char *want, size_t wantlen)
{
    json_object *j = util_etcd_prefix_end(prefix);
    size_t len = 0;
    char *end = util_etcd_unb64(j, &len);
    ck_assert_ptr_nonnull(end);
    ck_assert_uint_eq(len, wantlen);
    ck_assert_msg(memcmp(end, want, len) == 0, "the end of '%s' is wrong", prefix);
    free(end);
    json_object_put(j);
}

START_TEST(test_util_etcd_prefix_end)
{
    prefix_end_is("a", "b", 1);
    prefix_end_is("mrcfab/denylist/", "mrcfab/denylist0", 16);
    prefix_end_is("ab\xff", "ac", 2);
    prefix_end_is("a\xff\xff", "b", 1);
    prefix_end_is("\xff\xff", "\0", 1); /* every key from the prefix on */
    prefix_end_is("", "\0", 1);
    prefix_end_is("\xfe", "\xff", 1);
}
END_TEST

START_TEST(test_util_etcd_int)
{
    json_object *o = json_tokener_parse(
        "{\"s\": \"123\", \"n\": 45, \"neg\": \"-7\", \"junk\": \"12x\", \"empty\": \"\", "
        "\"bool\": true, \"max\": \"9223372036854775807\", \"over\": \"99999999999999999999\", "
        "\"big\": 6123384991568927239, \"dbl\": 1.5, \"obj\": {}, \"sp\": \" 1\"}");
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(util_etcd_int(o, "s", -1), 123);
    ck_assert_int_eq(util_etcd_int(o, "n", -1), 45);
    ck_assert_int_eq(util_etcd_int(o, "neg", -1), -7);
    ck_assert_int_eq(util_etcd_int(o, "junk", -1), -1);
    ck_assert_int_eq(util_etcd_int(o, "empty", -1), -1);
    ck_assert_int_eq(util_etcd_int(o, "bool", -1), -1);
    ck_assert_int_eq(util_etcd_int(o, "max", -1), INT64_MAX);
    ck_assert_int_eq(util_etcd_int(o, "over", -1), -1);
    ck_assert_int_eq(util_etcd_int(o, "big", -1), 6123384991568927239LL);
    ck_assert_int_eq(util_etcd_int(o, "dbl", -1), -1);
    ck_assert_int_eq(util_etcd_int(o, "obj", -1), -1);
    ck_assert_int_eq(util_etcd_int(o, "absent", 77), 77);
    ck_assert_int_eq(util_etcd_int(NULL, "s", 5), 5);
    json_object_put(o);
}
END_TEST

START_TEST(test_util_etcd_kvs_parse)
{
    util_etcd_kv *v = NULL;
    size_t n = 9;
    json_object *o = json_tokener_parse(
        "{\"kvs\": [{\"key\": \"YQ==\", \"value\": \"Yg==\", \"create_revision\": \"5\", "
        "\"mod_revision\": \"7\", \"lease\": \"6123384991568927239\"}, {\"key\": \"Yw==\"}]}");
    ck_assert_int_eq(util_etcd_kvs(o, &v, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(v[0].key, "a");
    ck_assert_str_eq(v[0].value, "b");
    ck_assert_uint_eq(v[0].vlen, 1);
    ck_assert_int_eq(v[0].create_rev, 5);
    ck_assert_int_eq(v[0].mod_rev, 7);
    ck_assert_int_eq(v[0].lease, 6123384991568927239LL);
    ck_assert_str_eq(v[1].key, "c");
    ck_assert_str_eq(v[1].value, ""); /* the gateway leaves out an empty value */
    ck_assert_int_eq(v[1].lease, 0);
    util_etcd_kvs_free(v, n);
    json_object_put(o);

    /* no kvs: none */
    o = json_tokener_parse("{\"count\": \"0\"}");
    ck_assert_int_eq(util_etcd_kvs(o, &v, &n), 0);
    ck_assert_uint_eq(n, 0);
    util_etcd_kvs_free(v, n);
    json_object_put(o);

    static const char *bad[] = {"{\"kvs\": {}}", "{\"kvs\": [{}]}", "{\"kvs\": [{\"key\": 1}]}",
                                "{\"kvs\": [{\"key\": \"YQ==\", \"value\": \"!\"}]}",
                                "{\"kvs\": [{\"key\": \"YQ==\"}, 3]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o = json_tokener_parse(bad[i]);
        ck_assert_ptr_nonnull(o);
        ck_assert_msg(util_etcd_kvs(o, &v, &n) == -EPROTO, "'%s' taken", bad[i]);
        ck_assert_ptr_null(v);
        ck_assert_uint_eq(n, 0);
        json_object_put(o);
    }
}
END_TEST

/* ---- against the cluster ---- */

START_TEST(test_util_etcd_kv)
{
    need_cluster();
    util_etcd *e = client(NULL, 2000);
    ck_assert_str_eq(util_etcd_endpoint(e), "");
    put_ok(e, "t/kv/a", "one");
    put_ok(e, "t/kv/b", "two");
    put_ok(e, "t/kv/c", "");
    put_ok(e, "t/kw", "outside the prefix");
    ck_assert_msg(strstr(endpoints, util_etcd_endpoint(e)) && util_etcd_endpoint(e)[0],
                  "the endpoint reached is %s", util_etcd_endpoint(e));

    util_etcd_kv kv;
    get_one(e, "t/kv/a", &kv);
    ck_assert_str_eq(kv.key, "t/kv/a");
    ck_assert_str_eq(kv.value, "one");
    ck_assert_int_gt(kv.create_rev, 0);
    ck_assert_int_eq(kv.mod_rev, kv.create_rev);
    ck_assert_int_eq(kv.lease, 0);
    int64_t created = kv.create_rev;
    kv_clear(&kv);
    put_ok(e, "t/kv/a", "uno");
    get_one(e, "t/kv/a", &kv);
    ck_assert_str_eq(kv.value, "uno");
    ck_assert_int_eq(kv.create_rev, created);
    ck_assert_int_gt(kv.mod_rev, created);
    kv_clear(&kv);
    get_one(e, "t/kv/absent", &kv);
    ck_assert_ptr_null(kv.key);

    /* a prefix through prefix_end */
    json_object *pe = util_etcd_prefix_end("t/kv/");
    char *end = util_etcd_unb64(pe, NULL);
    json_object_put(pe);
    util_etcd_kv *v = NULL;
    size_t n = 0;
    int64_t rev = 0;
    char err[512] = "";
    ck_assert_msg(util_etcd_range(e, "t/kv/", end, 0, &v, &n, &rev, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(v[0].key, "t/kv/a");
    ck_assert_str_eq(v[1].key, "t/kv/b");
    ck_assert_str_eq(v[1].value, "two");
    ck_assert_str_eq(v[2].key, "t/kv/c");
    ck_assert_str_eq(v[2].value, "");
    ck_assert_uint_eq(v[2].vlen, 0);
    ck_assert_int_ge(rev, v[0].mod_rev);
    util_etcd_kvs_free(v, n);
    ck_assert_int_eq(util_etcd_range(e, "t/kv/", end, 2, &v, &n, NULL, err, sizeof(err)), 0);
    ck_assert_uint_eq(n, 2);
    util_etcd_kvs_free(v, n);
    free(end);

    /* a txn whose compare fails does not put; one whose compare holds does */
    json_object *body = json_object_new_object(), *cmp = json_object_new_array();
    json_object *c = json_object_new_object();
    json_object_object_add(c, "key", util_etcd_b64("t/kv/b", 6));
    json_object_object_add(c, "target", json_object_new_string("VALUE"));
    json_object_object_add(c, "result", json_object_new_string("EQUAL"));
    json_object_object_add(c, "value", util_etcd_b64("not two", 7));
    json_object_array_add(cmp, c);
    json_object_object_add(body, "compare", cmp);
    json_object *put = json_object_new_object(), *rp = json_object_new_object();
    json_object_object_add(rp, "key", util_etcd_b64("t/kv/b", 6));
    json_object_object_add(rp, "value", util_etcd_b64("three", 5));
    json_object_object_add(put, "request_put", rp);
    json_object *succ = json_object_new_array();
    json_object_array_add(succ, put);
    json_object_object_add(body, "success", succ);
    json_object *ans = NULL, *s = NULL;
    ck_assert_msg(util_etcd_call(e, "/v3/kv/txn", body, &ans, err, sizeof(err)) == 0, "%s", err);
    ck_assert(!json_object_object_get_ex(ans, "succeeded", &s) || !json_object_get_boolean(s));
    json_object_put(ans);
    get_one(e, "t/kv/b", &kv);
    ck_assert_str_eq(kv.value, "two");
    kv_clear(&kv);
    json_object_object_add(c, "value", util_etcd_b64("two", 3));
    ck_assert_msg(util_etcd_call(e, "/v3/kv/txn", body, &ans, err, sizeof(err)) == 0, "%s", err);
    ck_assert(json_object_object_get_ex(ans, "succeeded", &s) && json_object_get_boolean(s));
    json_object_put(ans);
    json_object_put(body);
    get_one(e, "t/kv/b", &kv);
    ck_assert_str_eq(kv.value, "three");
    kv_clear(&kv);

    /* a call the gateway refuses: -EPROTO with its sentence, no answer */
    body = json_tokener_parse("{\"key\": \"!!!\"}");
    ans = (json_object *)1;
    ck_assert_int_eq(util_etcd_call(e, "/v3/kv/put", body, &ans, err, sizeof(err)), -EPROTO);
    ck_assert_ptr_null(ans);
    ck_assert_msg(strstr(err, "base64"), "%s", err);
    json_object_put(body);
    util_etcd_free(e);
}
END_TEST

START_TEST(test_util_etcd_failover)
{
    need_cluster();
    char list[1024], err[512] = "";
    unsigned dead = dead_port();
    snprintf(list, sizeof(list), "http://127.0.0.1:%u,%s", dead, endpoints);
    util_etcd *e = client(list, 1000);
    double t0 = now_s();
    put_ok(e, "t/failover", "x");
    ck_assert_msg(now_s() - t0 < 1.0, "the dead port cost %.2f s", now_s() - t0);
    char deadurl[64];
    snprintf(deadurl, sizeof(deadurl), "http://127.0.0.1:%u", dead);
    ck_assert_str_ne(util_etcd_endpoint(e), deadurl);
    /* the next call goes to the member that answered */
    char *first = strdup(util_etcd_endpoint(e));
    util_etcd_kv kv;
    get_one(e, "t/failover", &kv);
    ck_assert_str_eq(kv.value, "x");
    kv_clear(&kv);
    ck_assert_str_eq(util_etcd_endpoint(e), first);
    free(first);
    util_etcd_free(e);

    /* only dead ports: refused at once */
    snprintf(list, sizeof(list), "http://127.0.0.1:%u,http://127.0.0.1:%u", dead, dead_port());
    e = client(list, 1000);
    bool ok;
    t0 = now_s();
    ck_assert_int_eq(txn_put(e, NULL, "t/failover", "y", &ok, err, sizeof(err)), -ECONNREFUSED);
    ck_assert(err[0]);
    ck_assert(now_s() - t0 < 1.0);
    util_etcd_free(e);

    /* bad endpoint lists are refused when the client is made */
    util_etcd *bad = NULL;
    ck_assert_int_eq(util_etcd_new("127.0.0.1:2379", 0, &bad, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "--etcd"), "%s", err);
    ck_assert_int_eq(util_etcd_new("http://a/v3", 0, &bad, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_util_etcd_lease)
{
    need_cluster();
    util_etcd *e = client(NULL, 2000);
    char err[512] = "";
    int64_t id = 0;
    ck_assert_msg(util_etcd_lease_grant(e, 2, &id, err, sizeof(err)) == 0, "%s", err);
    /* the IDs are above 2^53: sent as JSON numbers they must reach etcd exactly */
    ck_assert_msg(id > (INT64_C(1) << 53), "lease %" PRId64 " is too small to tell", id);
    ck_assert_msg(util_etcd_lease_keepalive(e, id, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(util_etcd_lease_keepalive(e, id ^ 1, err, sizeof(err)), -ENOENT);
    ck_assert_int_eq(util_etcd_lease_keepalive(e, id + 2, err, sizeof(err)), -ENOENT);

    /* a key under the lease carries its exact ID */
    json_object *body = json_object_new_object(), *ans = NULL;
    json_object_object_add(body, "key", util_etcd_b64("t/lease/k", 9));
    json_object_object_add(body, "value", util_etcd_b64("v", 1));
    json_object_object_add(body, "lease", json_object_new_int64(id));
    ck_assert_msg(util_etcd_call(e, "/v3/kv/put", body, &ans, err, sizeof(err)) == 0, "%s", err);
    json_object_put(ans);
    json_object_put(body);
    util_etcd_kv kv;
    get_one(e, "t/lease/k", &kv);
    ck_assert_int_eq(kv.lease, id);
    kv_clear(&kv);

    /* kept alive no more (read, which does not renew it): gone after its TTL, give or take
     * etcd's half second of checking; then a keepalive finds it expired */
    double t0 = now_s();
    bool gone = false;
    while (!gone && now_s() - t0 < 4.0) {
        sleep_s(0.1);
        get_one(e, "t/lease/k", &kv);
        gone = !kv.key;
        kv_clear(&kv);
    }
    double lived = now_s() - t0;
    ck_assert_msg(gone, "lease %" PRId64 " lived %.1f s past its last keepalive (TTL 2 s)", id,
                  lived);
    ck_assert_msg(lived > 1.5, "lease %" PRId64 " was gone %.2f s after its keepalive", id, lived);
    int rv = util_etcd_lease_keepalive(e, id, err, sizeof(err));
    ck_assert_int_eq(rv, -ENOENT);
    ck_assert_msg(strstr(err, "expired"), "%s", err);
    get_one(e, "t/lease/k", &kv);
    ck_assert_ptr_null(kv.key);

    /* revoked: its keys go at once */
    ck_assert_int_eq(util_etcd_lease_grant(e, 30, &id, err, sizeof(err)), 0);
    body = json_object_new_object();
    json_object_object_add(body, "key", util_etcd_b64("t/lease/r", 9));
    json_object_object_add(body, "lease", json_object_new_int64(id));
    ck_assert_int_eq(util_etcd_call(e, "/v3/kv/put", body, &ans, err, sizeof(err)), 0);
    json_object_put(ans);
    json_object_put(body);
    get_one(e, "t/lease/r", &kv);
    ck_assert_int_eq(kv.lease, id);
    kv_clear(&kv);
    ck_assert_msg(util_etcd_lease_revoke(e, id, err, sizeof(err)) == 0, "%s", err);
    get_one(e, "t/lease/r", &kv);
    ck_assert_ptr_null(kv.key);
    ck_assert_int_eq(util_etcd_lease_keepalive(e, id, err, sizeof(err)), -ENOENT);
    util_etcd_free(e);
}
END_TEST

static void step_ok(util_elect *el)
{
    char err[512] = "";
    ck_assert_msg(util_elect_step(el, err, sizeof(err)) == 0, "step of %s: %s", el->value, err);
}

START_TEST(test_util_etcd_elect)
{
    need_cluster();
    util_etcd *ea = client(NULL, 1000), *eb = client(NULL, 1000);
    util_elect a, b;
    util_elect_init(&a, ea, "t/elect/leader", "a http://a:1", TTL);
    util_elect_init(&b, eb, "t/elect/leader", "b http://b:2", TTL);
    ck_assert(!util_elect_leading(&a));

    /* exactly one leads, the first to step; both know who and at which epoch */
    step_ok(&a);
    step_ok(&b);
    ck_assert(util_elect_leading(&a));
    ck_assert(!util_elect_leading(&b));
    ck_assert_str_eq(a.current, "a http://a:1");
    ck_assert_str_eq(b.current, "a http://a:1");
    ck_assert_int_eq(a.epoch, b.epoch);
    ck_assert_int_eq(a.won, a.epoch);
    ck_assert_int_eq(b.won, 0);
    util_etcd_kv kv;
    get_one(ea, "t/elect/leader", &kv);
    ck_assert_int_eq(kv.create_rev, a.epoch);
    ck_assert_int_eq(kv.lease, a.lease);
    ck_assert_str_eq(kv.value, "a http://a:1");
    kv_clear(&kv);
    for (int i = 0; i < 5; i++) {
        sleep_s(0.25);
        step_ok(&a);
        step_ok(&b);
        ck_assert(util_elect_leading(&a) && !util_elect_leading(&b));
        ck_assert_int_eq(a.epoch, b.epoch);
    }
    int64_t epoch_a = a.epoch;

    /* a stops stepping: its lease expires and b leads within TTL + 1 s, at a larger epoch */
    double stopped = now_s();
    while (!util_elect_leading(&b) && now_s() - stopped < TTL + 3) {
        sleep_s(0.25);
        step_ok(&b);
    }
    double took = now_s() - stopped;
    ck_assert_msg(util_elect_leading(&b), "b did not lead %.1f s after a stopped", took);
    ck_assert_msg(took <= TTL + 1.0, "b led %.2f s after a stopped (TTL %d s)", took, TTL);
    ck_assert_msg(took >= TTL - 1.0, "b led %.2f s after a stopped, before a's lease ended", took);
    ck_assert_int_gt(b.epoch, epoch_a);
    ck_assert_str_eq(b.current, "b http://b:2");
    /* a, which has not stepped, knows by the clock that it may lead no more */
    ck_assert(!util_elect_leading(&a));

    /* the deposed leader's fenced write fails, the new leader's lands */
    char err[512] = "";
    bool ok = true;
    ck_assert_int_eq(txn_put(ea, &a, "t/elect/data", "from a", &ok, err, sizeof(err)), 0);
    ck_assert_msg(!ok, "a deposed leader's fenced txn succeeded");
    ck_assert_int_eq(txn_put(eb, &b, "t/elect/data", "from b", &ok, err, sizeof(err)), 0);
    ck_assert_msg(ok, "the leader's fenced txn failed");
    get_one(eb, "t/elect/data", &kv);
    ck_assert_str_eq(kv.value, "from b");
    kv_clear(&kv);

    /* a steps again: it follows b, and its fence still fails (it knows b's epoch now) */
    step_ok(&a);
    ck_assert(!util_elect_leading(&a));
    ck_assert_str_eq(a.current, "b http://b:2");
    ck_assert_int_eq(a.epoch, b.epoch);
    ck_assert_int_ne(a.lease, 0);
    ck_assert_int_eq(txn_put(ea, &a, "t/elect/data", "from a", &ok, err, sizeof(err)), 0);
    ck_assert_msg(!ok, "a follower's fenced txn succeeded");
    /* one that never stepped holds nothing to fence on */
    util_elect c;
    util_elect_init(&c, ea, "t/elect/leader", "c", 0);
    ck_assert_uint_eq(c.ttl_s, 3);
    ck_assert_int_eq(txn_put(ea, &c, "t/elect/data", "from c", &ok, err, sizeof(err)), 0);
    ck_assert(!ok);
    /* nor on a key nobody holds */
    util_elect_init(&c, ea, "t/elect/nobody", "c", 0);
    ck_assert_int_eq(txn_put(ea, &c, "t/elect/data", "from c", &ok, err, sizeof(err)), 0);
    ck_assert(!ok);

    /* b resigns: a leads at its next step, at a larger epoch still */
    int64_t epoch_b = b.epoch;
    util_elect_resign(&b);
    ck_assert(!util_elect_leading(&b));
    ck_assert_int_eq(b.lease, 0);
    step_ok(&a);
    ck_assert(util_elect_leading(&a));
    ck_assert_int_gt(a.epoch, epoch_b);
    ck_assert_int_eq(txn_put(eb, &b, "t/elect/data", "from b", &ok, err, sizeof(err)), 0);
    ck_assert(!ok);
    ck_assert_int_eq(txn_put(ea, &a, "t/elect/data", "from a", &ok, err, sizeof(err)), 0);
    ck_assert(ok);
    util_elect_resign(&a);
    util_etcd_free(ea);
    util_etcd_free(eb);
}
END_TEST

START_TEST(test_util_etcd_elect_cut_off)
{
    need_cluster();
    util_etcd *e = client(NULL, 1000);
    char list[64];
    snprintf(list, sizeof(list), "http://127.0.0.1:%u", dead_port());
    util_etcd *dead = client(list, 1000);
    util_elect a;
    util_elect_init(&a, e, "t/cut/leader", "a", TTL);
    step_ok(&a);
    ck_assert(util_elect_leading(&a));

    /* no step (one blocked on a member): the lead ends by the clock before the lease does */
    double last = now_s();
    while (util_elect_leading(&a) && now_s() - last < TTL) {
        sleep_s(0.05);
    }
    double led = now_s() - last;
    ck_assert_msg(!util_elect_leading(&a), "a still leads %.2f s after its last step", led);
    ck_assert_msg(led >= TTL - 0.5 - 0.5 && led <= TTL - 0.5 + 0.3,
                  "a stopped leading %.2f s after its last keepalive (TTL %d s)", led, TTL);

    /* it leads again at its next step (its lease is still there) ... */
    step_ok(&a);
    ck_assert(util_elect_leading(&a));
    int64_t lease = a.lease;
    /* ... and a step that reaches no member ends the lead at once */
    a.etcd = dead;
    char err[512] = "";
    ck_assert_int_eq(util_elect_step(&a, err, sizeof(err)), -ECONNREFUSED);
    ck_assert(err[0]);
    ck_assert(!util_elect_leading(&a));
    ck_assert(!a.leader);
    ck_assert_int_eq(a.lease, lease); /* it may yet be kept alive */
    a.etcd = e;
    util_elect_resign(&a);
    util_etcd_free(dead);
    util_etcd_free(e);
}
END_TEST

START_TEST(test_util_etcd_quorum_loss)
{
    need_cluster();
    const unsigned timeout_ms = 700;
    util_etcd *e = client(NULL, timeout_ms);
    util_elect a;
    util_elect_init(&a, e, "t/quorum/leader", "a", TTL);
    step_ok(&a);
    ck_assert(util_elect_leading(&a));
    put_ok(e, "t/quorum/k", "before");

    ck_assert_int_eq(cluster_sh("etcd_stop \"$D\" 2 && etcd_stop \"$D\" 3"), 0);
    char err[512] = "";
    bool ok;
    /* each member once, the live one in its timeout, the stopped ones refused */
    double t0 = now_s();
    int rv = txn_put(e, NULL, "t/quorum/k", "without a quorum", &ok, err, sizeof(err));
    double took = now_s() - t0;
    ck_assert_msg(rv == -EAGAIN || rv == -ETIMEDOUT, "a put without a quorum: %d (%s)", rv, err);
    ck_assert_msg(took < 3 * timeout_ms / 1000.0 + 0.5, "a put without a quorum took %.2f s", took);
    ck_assert(err[0]);
    fprintf(stderr, "util_etcd_test: a put without a quorum failed in %.2f s: %s\n", took, err);
    /* the leader's step cannot keep its lease alive: it stops leading at once */
    t0 = now_s();
    rv = util_elect_step(&a, err, sizeof(err));
    ck_assert_msg(rv == -EAGAIN || rv == -ETIMEDOUT, "a step without a quorum: %d (%s)", rv, err);
    ck_assert(!util_elect_leading(&a));
    ck_assert(now_s() - t0 < 3 * timeout_ms / 1000.0 + 0.5);

    /* a client that waits longer than the member does (its 5 s of request timeout and two
     * election timeouts) hears it say that the cluster cannot serve now: -EAGAIN, for a unary
     * call's error and for a stream's (a keepalive's) alike */
    char one[64];
    snprintf(one, sizeof(one), "%.*s", (int)strcspn(endpoints, ","), endpoints);
    util_etcd *patient = client(one, 9500);
    t0 = now_s();
    rv = txn_put(patient, NULL, "t/quorum/k", "without a quorum", &ok, err, sizeof(err));
    ck_assert_msg(rv == -EAGAIN, "a put without a quorum, heard out: %d (%s) in %.2f s", rv, err,
                  now_s() - t0);
    fprintf(stderr, "util_etcd_test: heard out in %.2f s: %s\n", now_s() - t0, err);
    t0 = now_s();
    rv = util_etcd_lease_keepalive(patient, a.lease, err, sizeof(err));
    ck_assert_msg(rv == -EAGAIN, "a keepalive without a quorum, heard out: %d (%s) in %.2f s", rv,
                  err, now_s() - t0);
    fprintf(stderr, "util_etcd_test: heard out in %.2f s: %s\n", now_s() - t0, err);
    util_etcd_free(patient);

    /* one member back: writes again, within the raft's election */
    ck_assert_int_eq(cluster_sh("etcd_start \"$D\" 2"), 0);
    t0 = now_s();
    do {
        rv = txn_put(e, NULL, "t/quorum/k", "after", &ok, err, sizeof(err));
    } while (rv != 0 && now_s() - t0 < 20 && (sleep_s(0.2), 1));
    ck_assert_msg(rv == 0 && ok, "no put 20 s after a member came back: %s", err);
    fprintf(stderr, "util_etcd_test: writes again %.2f s after a member came back\n", now_s() - t0);
    util_etcd_kv kv;
    get_one(e, "t/quorum/k", &kv);
    ck_assert_str_eq(kv.value, "after");
    kv_clear(&kv);
    ck_assert_int_eq(cluster_sh("etcd_start \"$D\" 3"), 0);
    util_elect_resign(&a);
    util_etcd_free(e);
}
END_TEST

Suite *util_etcd_suite(void)
{
    Suite *s = suite_create("util_etcd");
    TCase *codec = tcase_create("codec");
    tcase_add_test(codec, test_util_etcd_b64_vectors);
    tcase_add_test(codec, test_util_etcd_b64_refused);
    tcase_add_test(codec, test_util_etcd_prefix_end);
    tcase_add_test(codec, test_util_etcd_int);
    tcase_add_test(codec, test_util_etcd_kvs_parse);
    suite_add_tcase(s, codec);

    TCase *tc = tcase_create("cluster");
    /* one cluster for the whole case, started before the forks; the quorum test goes last */
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_util_etcd_kv);
    tcase_add_test(tc, test_util_etcd_failover);
    tcase_add_test(tc, test_util_etcd_lease);
    tcase_add_test(tc, test_util_etcd_elect);
    tcase_add_test(tc, test_util_etcd_elect_cut_off);
    tcase_add_test(tc, test_util_etcd_quorum_loss);
    suite_add_tcase(s, tc);
    return s;
}
