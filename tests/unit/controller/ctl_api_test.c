/* SPDX-License-Identifier: MIT */
/* Golden tests of the REST API's handlers, called without HTTP: the lab fabric (2 planes, 4 T0
 * and 2 T1 per plane, 8 hosts), its tables, a fresh store per test and one token per role. Each
 * response is checked as parsed JSON against the document it must be, problem documents
 * (RFC 9457) member by member, and every rejected change against an untouched store. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_api.h"
#include "ctl_test_tokens.h"
#include "util_test.h"

#define LAB CTL_TEST_ROOT "/deploy/topologies/lab.json"
#define BAD_BODIES CTL_TEST_DATA "/deny_bad_bodies.txt"

/* The option table GET /api/v1/config reports: a set secret, an unset secret, an unset string. */
static struct {
    char *listen, *cert, *key, *password;
    uint64_t threads;
    bool verbose;
} ov;
static const util_opt opts[] = {
    {.name = "listen", .kind = UTIL_OPT_STR, .def = "127.0.0.1:8080", .dest = &ov.listen, .help = "ADDR:PORT"},
    {.name = "cert", .kind = UTIL_OPT_STR, .dest = &ov.cert, .help = "certificate"},
    {.name = "key", .kind = UTIL_OPT_STR, .dest = &ov.key, .help = "private key", .secret = true},
    {.name = "password", .kind = UTIL_OPT_STR, .dest = &ov.password, .help = "a password", .secret = true},
    {.name = "threads", .kind = UTIL_OPT_UINT, .def = "4", .min = 1, .max = 64, .dest = &ov.threads, .help = "threads"},
    {.name = "verbose", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &ov.verbose, .help = "chatty"},
    UTIL_OPT_END,
};

static char dir[256];
static fab_topo *topo;
static fab_tables *tables;
static ctl_blast *blast;
static ctl_ctx ctx;
static int nchanged;

static void changed(void *user)
{
    (void)user;
    nchanged++;
}

/* Once per test case, in the parent: the fabric and a directory for the stores. */
static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "ctl_api");
    fab_error ferr;
    ck_assert_msg(fab_topo_load_file(LAB, &topo, &ferr) == 0, "%s: %s", LAB, ferr.msg);
    ck_assert_int_eq(fab_tables_compute(topo, &tables), 0);
    blast = ctl_blast_new(topo);
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
    ctl_blast_free(blast);
    fab_tables_free(tables);
    fab_topo_free(topo);
}

/* Before each test: an empty store of its own, the options at their defaults plus a key. */
static void setup(void)
{
    char path[512], err[256];
    snprintf(path, sizeof(path), "%s/api-%ld.db", dir, (long)getpid());
    static const char *const tails[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof(p), "%s%s", path, tails[i]);
        unlink(p);
    }
    memset(&ctx, 0, sizeof(ctx));
    ck_assert_msg(ctl_store_open(path, &ctx.store, err, sizeof(err)) == 0, "%s", err);
    util_opt_defaults(opts);
    ov.key = strdup("-----BEGIN PRIVATE KEY----- s3cr3t");
    ctx.topo = topo;
    ctx.tables = tables;
    ctx.opts = opts;
    ctx.blast = blast;
    ctx.floor = 0; /* the floor's own tests raise it */
    ctx.changed = changed;
    nchanged = 0;
}

static void teardown(void)
{
    ctl_seen_free(ctx.seen);
    ctl_store_close(ctx.store);
    util_opt_free(opts);
}

typedef struct kv {
    const char *k, *v;
} kv;

static const char *kv_arg(void *user, const char *name)
{
    for (const kv *a = user; a && a->k; a++) {
        if (strcmp(a->k, name) == 0) {
            return a->v;
        }
    }
    return NULL;
}

static ctl_resp call(const char *method, const char *path, const kv *args, const char *body,
                     const util_token *who)
{
    ctl_req q = {.method = method,
                 .path = path,
                 .arg = kv_arg,
                 .arg_user = (void *)args,
                 .body = body,
                 .bodylen = body ? strlen(body) : 0,
                 .who = who};
    ctl_resp r;
    ctl_api_handle(&ctx, &q, &r);
    ck_assert_ptr_nonnull(r.body);
    ck_assert_uint_eq(r.len, strlen(r.body));
    return r;
}

/* The body as JSON: one whole document, nothing after it. */
static json_object *body_json(const ctl_resp *r)
{
    json_tokener *tok = json_tokener_new();
    json_object *j = json_tokener_parse_ex(tok, r->body, (int)r->len);
    bool whole = json_tokener_get_error(tok) == json_tokener_success &&
                 json_tokener_get_parse_end(tok) == r->len;
    json_tokener_free(tok);
    ck_assert_msg(j && whole, "not one JSON document: '%s'", r->body);
    return j;
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no '%s' in %s", key,
                  json_object_to_json_string(o));
    return v;
}

/* A 2xx JSON response that equals |golden| (member order aside); frees the response. */
static void expect_json(ctl_resp *r, int status, const char *golden)
{
    ck_assert_msg(r->status == status, "status %d, want %d: %s", r->status, status, r->body);
    ck_assert_str_eq(r->ctype, "application/json");
    json_object *want = json_tokener_parse(golden), *got = body_json(r);
    ck_assert_msg(want != NULL, "bad golden %s", golden);
    ck_assert_msg(json_object_equal(want, got), "got  %s\nwant %s", r->body, golden);
    json_object_put(want);
    json_object_put(got);
    free(r->body);
}

/* A problem document of |status| about |instance| whose detail holds |needle| (if any). */
static void expect_problem(ctl_resp *r, int status, const char *instance, const char *needle)
{
    static const struct {
        int status;
        const char *title;
    } titles[] = {{400, "Bad Request"},
                  {401, "Unauthorized"},
                  {403, "Forbidden"},
                  {404, "Not Found"},
                  {405, "Method Not Allowed"},
                  {409, "Conflict"},
                  {422, "Unprocessable Content"},
                  {503, "Service Unavailable"}};
    const char *title = NULL;
    for (size_t i = 0; i < sizeof(titles) / sizeof(titles[0]); i++) {
        title = titles[i].status == status ? titles[i].title : title;
    }
    ck_assert_ptr_nonnull(title);
    ck_assert_msg(r->status == status, "%s: status %d, want %d: %s", instance, r->status, status,
                  r->body);
    ck_assert_str_eq(r->ctype, "application/problem+json");
    json_object *j = body_json(r);
    /* a refused denylist entry adds its blast radius (an RFC 9457 extension member) */
    ck_assert_int_eq(json_object_object_length(j), status == 409 ? 6 : 5);
    ck_assert_str_eq(json_object_get_string(member(j, "type")), "about:blank");
    ck_assert_str_eq(json_object_get_string(member(j, "title")), title);
    ck_assert(json_object_is_type(member(j, "status"), json_type_int));
    ck_assert_int_eq(json_object_get_int(member(j, "status")), status);
    ck_assert_str_eq(json_object_get_string(member(j, "instance")), instance);
    const char *detail = json_object_get_string(member(j, "detail"));
    ck_assert_msg(strlen(detail) > 10, "detail '%s'", detail);
    ck_assert_msg(!needle || strstr(detail, needle), "detail '%s' lacks '%s'", detail, needle);
    json_object_put(j);
    free(r->body);
}

/* The store as text: the version and the whole entry list. */
static char *snapshot(void)
{
    json_object *l = ctl_store_deny_list(ctx.store), *a = ctl_store_audit(ctx.store, 0, 1000);
    ck_assert(l && a);
    char *s;
    ck_assert(asprintf(&s, "%lld %s %s", (long long)ctl_store_version(ctx.store),
                       json_object_to_json_string(l), json_object_to_json_string(a)) > 0);
    json_object_put(l);
    json_object_put(a);
    return s;
}

/* POSTs |body| as |who| and returns the new entry's id. */
static int64_t add_args(const char *body, const kv *args, const util_token *who)
{
    ctl_resp r = call("POST", "/api/v1/denylist", args, body, who);
    ck_assert_msg(r.status == 201, "%s: %d %s", body, r.status, r.body);
    json_object *j = body_json(&r);
    int64_t id = json_object_get_int64(member(j, "id"));
    json_object_put(j);
    free(r.body);
    return id;
}

static int64_t add(const char *body, const util_token *who)
{
    return add_args(body, NULL, who);
}

/* "2026-11-30T02:00:00.250Z" (exactly that form) in Unix ms, -1 if not. */
static int64_t rfc3339_ms(const char *s)
{
    struct tm tm = {0};
    int ms = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 ||
        n != 24 || strlen(s) != 24) {
        return -1;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

/* The fabric's summary is fixed by the lab topology: 16 host and 16 uplink cables, and each of
 * the 12 switches has its uN SID and one route per neighbour (4), 60 routes in all. */
START_TEST(test_ctl_api_fabric)
{
    ctl_resp r = call("GET", "/api/v1/fabric", NULL, NULL, &T_READER);
    expect_json(&r, 200,
                "{\"name\":\"lab\",\"planes\":2,\"hosts\":8,\"switches\":12,\"cables\":32,"
                "\"missing_cables\":0,\"routes\":60,\"per_plane\":[{\"plane\":0,\"t0\":4,\"t1\":2},"
                "{\"plane\":1,\"t0\":4,\"t1\":2}],\"denylist_version\":0}");
    add("{\"element\":\"p0-t0-0\",\"reason\":\"r\"}", &T_OPER);
    r = call("GET", "/api/v1/fabric", NULL, NULL, &T_READER);
    json_object *j = body_json(&r);
    ck_assert_int_eq(json_object_get_int(member(j, "denylist_version")), 1);
    json_object_put(j);
    free(r.body);
}
END_TEST

/* One switch as a whole document, a T0 of plane 0 and a T1 of plane 1 (uSID plane|kind|index). */
START_TEST(test_ctl_api_switch)
{
    ctl_resp r = call("GET", "/api/v1/switches/p0-t0-0", NULL, NULL, &T_READER);
    expect_json(&r, 200,
                "{\"name\":\"p0-t0-0\",\"plane\":0,\"tier\":\"t0\",\"index\":0,"
                "\"ports\":4,\"usid\":\"0800\",\"routes\":5}");
    r = call("GET", "/api/v1/switches/p1-t1-1", NULL, NULL, &T_READER);
    expect_json(&r, 200,
                "{\"name\":\"p1-t1-1\",\"plane\":1,\"tier\":\"t1\",\"index\":1,"
                "\"ports\":4,\"usid\":\"3001\",\"routes\":5}");
    r = call("GET", "/api/v1/switches/p2-t0-0", NULL, NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/switches/p2-t0-0", "p2-t0-0");
    r = call("GET", "/api/v1/switches/", NULL, NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/switches/", NULL);
    r = call("GET", "/api/v1/switches/p0-t0-0/bogus", NULL, NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/switches/p0-t0-0/bogus", NULL);
    r = call("GET", "/api/v1/switches/x/bogus", NULL, NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/switches/x/bogus", NULL);
    r = call("GET", "/api/v1/switches/p0-t0-0/table/x", NULL, NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/switches/p0-t0-0/table/x", NULL);
}
END_TEST

/* The names of |r|'s items, comma-separated, and its total; frees |r|. */
static void page(ctl_resp *r, int64_t total, const char *names)
{
    ck_assert_msg(r->status == 200, "%d %s", r->status, r->body);
    json_object *j = body_json(r), *items = member(j, "items");
    ck_assert_int_eq(json_object_get_int64(member(j, "total")), total);
    char got[512] = "";
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i);
        ck_assert_int_eq(json_object_object_length(it), 7);
        strcat(got, i ? "," : "");
        strcat(got, json_object_get_string(member(it, "name")));
    }
    ck_assert_str_eq(got, names);
    json_object_put(j);
    free(r->body);
}

/* The list filters by plane and tier before it pages, so total counts the matches, not the
 * page; the items keep the topology's order. */
START_TEST(test_ctl_api_switches_filter_page)
{
    ctl_resp r = call("GET", "/api/v1/switches", NULL, NULL, &T_READER);
    page(&r, 12,
         "p0-t0-0,p0-t0-1,p0-t0-2,p0-t0-3,p0-t1-0,p0-t1-1,"
         "p1-t0-0,p1-t0-1,p1-t0-2,p1-t0-3,p1-t1-0,p1-t1-1");
    r = call("GET", "/api/v1/switches", (kv[]){{"plane", "1"}, {"tier", "t1"}, {0, 0}}, NULL,
             &T_READER);
    page(&r, 2, "p1-t1-0,p1-t1-1");
    r = call("GET", "/api/v1/switches",
             (kv[]){{"tier", "t0"}, {"offset", "2"}, {"limit", "3"}, {0, 0}}, NULL, &T_READER);
    page(&r, 8, "p0-t0-2,p0-t0-3,p1-t0-0");
    r = call("GET", "/api/v1/switches", (kv[]){{"plane", "0"}, {"offset", "5"}, {0, 0}}, NULL,
             &T_READER);
    page(&r, 6, "p0-t1-1");
    r = call("GET", "/api/v1/switches", (kv[]){{"offset", "12"}, {"limit", "1000"}, {0, 0}}, NULL,
             &T_READER);
    page(&r, 12, "");
}
END_TEST

/* Every malformed or out-of-range query argument is a 400 naming it, never an empty page. */
START_TEST(test_ctl_api_switches_bad_args)
{
    static const struct {
        const char *name, *value;
    } bad[] = {{"plane", "9"},
               {"plane", "2"},
               {"plane", "-1"},
               {"plane", ""},
               {"tier", "t5"},
               {"tier", "T0"},
               {"limit", "0"},
               {"limit", "abc"},
               {"limit", "1001"},
               {"limit", "5x"},
               {"offset", "-1"},
               {"offset", "1e3"},
               {"offset", "99999999999999999999"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char needle[32];
        snprintf(needle, sizeof(needle), "'%s'", bad[i].name);
        ctl_resp r = call("GET", "/api/v1/switches", (kv[]){{bad[i].name, bad[i].value}, {0, 0}},
                          NULL, &T_READER);
        expect_problem(&r, 400, "/api/v1/switches", needle);
    }
}
END_TEST

static int sink_put(void *user, const char *data, size_t len)
{
    FILE *f = user;
    return fwrite(data, 1, len, f) == len ? 0 : -1;
}

/* The table is served exactly as libmrcfab renders it (what mrcctl writes), JSON by default,
 * with the content type of each format; an unknown format is a 400. */
START_TEST(test_ctl_api_switch_table)
{
    static const struct {
        const char *format, *ctype, *needle;
    } want[] = {{NULL, "application/json", "\"switch\":\"p0-t0-0\""},
                {"json", "application/json", "\"switch\":\"p0-t0-0\""},
                {"iproute2", "text/plain; charset=utf-8", "route replace fcbb:bb00:1001::/48 via"},
                {"sonic", "application/json", "\"SRV6_MY_SIDS\""},
                {"frr", "text/plain; charset=utf-8", "ipv6 route fcbb:bb00:1800::/48 eth0"}};
    uint32_t sw = fab_switch_find(topo, "p0-t0-0");
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        kv args[] = {{want[i].format ? "format" : NULL, want[i].format}, {0, 0}};
        ctl_resp r = call("GET", "/api/v1/switches/p0-t0-0/table", args, NULL, &T_READER);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.ctype, want[i].ctype);
        ck_assert_msg(strstr(r.body, want[i].needle), "%s: no '%s'", want[i].format,
                      want[i].needle);
        char *direct = NULL;
        size_t dlen = 0;
        FILE *f = open_memstream(&direct, &dlen);
        ck_assert_int_eq(fab_render_switch(
                             topo, tables, sw,
                             (fab_format)fab_format_parse(want[i].format ? want[i].format : "json"),
                             sink_put, f),
                         0);
        fclose(f);
        ck_assert_uint_eq(r.len, dlen);
        ck_assert_str_eq(r.body, direct);
        if (strcmp(want[i].ctype, "application/json") == 0) {
            json_object_put(body_json(&r));
        }
        free(direct);
        free(r.body);
    }
    ctl_resp r = call("GET", "/api/v1/switches/p0-t0-0/table", (kv[]){{"format", "yaml"}, {0, 0}},
                      NULL, &T_READER);
    expect_problem(&r, 400, "/api/v1/switches/p0-t0-0/table", "'yaml'");
    r = call("GET", "/api/v1/switches/nope/table", NULL, NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/switches/nope/table", "'nope'");
}
END_TEST

/* An operator's entry: 201 with every member, scope "both" by default, the token's name as
 * author, a creation time of now; GET of its id gives the same document, the list holds it. */
START_TEST(test_ctl_api_deny_post)
{
    int64_t t0 = ctl_now_ms();
    ctl_resp r = call("POST", "/api/v1/denylist", NULL,
                      "{\"element\":\"p0-t1-0\",\"reason\":\"optics flapping\"}", &T_OPER);
    int64_t t1 = ctl_now_ms();
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.ctype, "application/json");
    json_object *j = body_json(&r);
    const char *created = json_object_get_string(member(j, "created"));
    int64_t c = rfc3339_ms(created);
    ck_assert_msg(c >= t0 && c <= t1, "created %s not in [%lld, %lld]", created, (long long)t0,
                  (long long)t1);
    char golden[512];
    snprintf(golden, sizeof(golden),
             "{\"id\":1,\"element\":\"p0-t1-0\",\"scope\":\"both\",\"reason\":\"optics flapping\","
             "\"source\":\"operator\",\"author\":\"olga\",\"created\":\"%s\",\"active\":true}",
             created);
    json_object_put(j);
    expect_json(&r, 201, golden);
    ck_assert_int_eq(nchanged, 1);
    r = call("GET", "/api/v1/denylist/1", NULL, NULL, &T_READER);
    expect_json(&r, 200, golden);
    char list[700];
    snprintf(list, sizeof(list), "{\"version\":1,\"epoch\":0,\"entries\":[%s]}", golden);
    r = call("GET", "/api/v1/denylist", NULL, NULL, &T_READER);
    expect_json(&r, 200, list);
}
END_TEST

/* A maintenance window comes back as RFC 3339 UTC with milliseconds, the same instants; a
 * window that has ended leaves the entry inactive. */
START_TEST(test_ctl_api_deny_window)
{
    ctl_resp r =
        call("POST", "/api/v1/denylist", NULL,
             "{\"element\":\"h3:0\",\"scope\":\"down\",\"reason\":\"recabling\",\"window\":"
             "{\"start\":\"2096-11-30T02:00:00Z\",\"end\":\"2096-11-30T04:30:00.25Z\"}}",
             &T_ADMIN);
    ck_assert_int_eq(r.status, 201);
    json_object *j = body_json(&r);
    char golden[512];
    snprintf(golden, sizeof(golden),
             "{\"id\":1,\"element\":\"h3:0\",\"scope\":\"down\",\"reason\":\"recabling\","
             "\"source\":\"operator\",\"author\":\"ada\",\"created\":\"%s\",\"window\":{\"start\":"
             "\"2096-11-30T02:00:00.000Z\",\"end\":\"2096-11-30T04:30:00.250Z\"},\"active\":false}",
             json_object_get_string(member(j, "created")));
    json_object_put(j);
    expect_json(&r, 201, golden);
    r = call("GET", "/api/v1/denylist/1", NULL, NULL, &T_AGENT);
    expect_json(&r, 200, golden);
}
END_TEST

static int64_t list_version(void)
{
    ctl_resp r = call("GET", "/api/v1/denylist", NULL, NULL, &T_READER);
    ck_assert_int_eq(r.status, 200);
    json_object *j = body_json(&r);
    int64_t v = json_object_get_int64(member(j, "version"));
    json_object_put(j);
    free(r.body);
    return v;
}

/* The version rises by exactly one per committed change, add or remove; a removed entry is
 * gone (GET and a second DELETE are 404) and the others keep their ids and order. */
START_TEST(test_ctl_api_deny_version_delete)
{
    ck_assert_int_eq(list_version(), 0);
    ck_assert_int_eq(add("{\"element\":\"p0-t0-0\",\"reason\":\"a\"}", &T_OPER), 1);
    ck_assert_int_eq(list_version(), 1);
    ck_assert_int_eq(add("{\"element\":\"p0-t0-1\",\"reason\":\"b\"}", &T_OPER), 2);
    ck_assert_int_eq(add("{\"element\":\"p0-t0-2\",\"reason\":\"c\"}", &T_OPER), 3);
    ck_assert_int_eq(list_version(), 3);
    ctl_resp r = call("DELETE", "/api/v1/denylist/2", NULL, NULL, &T_OPER);
    ck_assert_int_eq(r.status, 204);
    ck_assert_uint_eq(r.len, 0);
    free(r.body);
    ck_assert_int_eq(list_version(), 4);
    ck_assert_int_eq(nchanged, 4);
    r = call("DELETE", "/api/v1/denylist/2", NULL, NULL, &T_OPER);
    expect_problem(&r, 404, "/api/v1/denylist/2", NULL);
    r = call("GET", "/api/v1/denylist/2", NULL, NULL, &T_OPER);
    expect_problem(&r, 404, "/api/v1/denylist/2", NULL);
    static const char *const bad_ids[] = {"/api/v1/denylist/0", "/api/v1/denylist/-1",
                                          "/api/v1/denylist/abc", "/api/v1/denylist/1x",
                                          "/api/v1/denylist/"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        r = call("DELETE", bad_ids[i], NULL, NULL, &T_OPER);
        expect_problem(&r, 404, bad_ids[i], NULL);
    }
    ck_assert_int_eq(list_version(), 4);
    ck_assert_int_eq(nchanged, 4);
    r = call("GET", "/api/v1/denylist", NULL, NULL, &T_READER);
    json_object *j = body_json(&r), *e = member(j, "entries");
    ck_assert_uint_eq(json_object_array_length(e), 2);
    ck_assert_int_eq(json_object_get_int(member(json_object_array_get_idx(e, 0), "id")), 1);
    ck_assert_str_eq(json_object_get_string(member(json_object_array_get_idx(e, 1), "element")),
                     "p0-t0-2");
    json_object_put(j);
    free(r.body);
}
END_TEST

/* Roles: a prober may add (source "prober") and remove; reader and agent may read but not
 * change (403, store untouched); without a token every resource is 401, reads included. */
START_TEST(test_ctl_api_deny_roles)
{
    ctl_resp r = call("POST", "/api/v1/denylist", NULL,
                      "{\"element\":\"p1-t0-0~p1-t1-1\",\"scope\":\"up\",\"reason\":\"loss 3%\"}",
                      &T_PROBER);
    ck_assert_int_eq(r.status, 201);
    json_object *j = body_json(&r);
    ck_assert_str_eq(json_object_get_string(member(j, "source")), "prober");
    ck_assert_str_eq(json_object_get_string(member(j, "author")), "pat");
    json_object_put(j);
    free(r.body);
    char *before = snapshot();
    const util_token *weak[] = {&T_READER, &T_AGENT};
    for (int i = 0; i < 2; i++) {
        r = call("POST", "/api/v1/denylist", NULL, "{\"element\":\"p0-t0-0\",\"reason\":\"x\"}",
                 weak[i]);
        expect_problem(&r, 403, "/api/v1/denylist", weak[i]->name);
        r = call("DELETE", "/api/v1/denylist/1", NULL, NULL, weak[i]);
        expect_problem(&r, 403, "/api/v1/denylist/1", "prober");
        r = call("GET", "/api/v1/denylist/1", NULL, NULL, weak[i]);
        ck_assert_int_eq(r.status, 200);
        free(r.body);
    }
    static const char *const paths[] = {"/api/v1/fabric",
                                        "/api/v1/switches",
                                        "/api/v1/switches/p0-t0-0",
                                        "/api/v1/switches/p0-t0-0/table",
                                        "/api/v1/denylist",
                                        "/api/v1/denylist/1",
                                        "/api/v1/audit",
                                        "/api/v1/config",
                                        "/api/v1/nope"};
    static const char *const methods[] = {"GET", "POST", "DELETE"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        for (int m = 0; m < 3; m++) {
            r = call(methods[m], paths[i], NULL, "{\"element\":\"p0-t0-0\",\"reason\":\"x\"}",
                     NULL);
            expect_problem(&r, 401, paths[i], "token");
        }
    }
    char *after = snapshot();
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    r = call("DELETE", "/api/v1/denylist/1", NULL, NULL, &T_PROBER);
    ck_assert_int_eq(r.status, 204);
    free(r.body);
}
END_TEST

/* A rejected body changes nothing: 400 for what is not a well-formed entry, 422 for a
 * well-formed one that names nothing (or no cable) of this fabric; the store's version,
 * entries and audit log stay as they were and the push channel is not woken. */
START_TEST(test_ctl_api_deny_bad_bodies)
{
    add("{\"element\":\"p0-t0-0\",\"reason\":\"already there\"}", &T_OPER);
    nchanged = 0;
    char *before = snapshot();
    FILE *f = fopen(BAD_BODIES, "r");
    ck_assert_msg(f != NULL, "%s", BAD_BODIES);
    char *line = NULL;
    size_t cap = 0;
    unsigned n = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        int status;
        int skip = 0;
        if (line[0] == '#' || sscanf(line, "%d %n", &status, &skip) != 1 || skip == 0) {
            continue;
        }
        const char *body = line + skip;
        ctl_resp r = call("POST", "/api/v1/denylist", NULL, body, &T_OPER);
        ck_assert_msg(r.status == status, "%s: %d, want %d: %s", body, r.status, status, r.body);
        expect_problem(&r, status, "/api/v1/denylist", NULL);
        char *after = snapshot();
        ck_assert_msg(strcmp(after, before) == 0, "%s changed the store", body);
        free(after);
        n++;
    }
    free(line);
    fclose(f);
    ck_assert_uint_ge(n, 40);
    ctl_resp r = call("POST", "/api/v1/denylist", NULL, "", &T_OPER);
    expect_problem(&r, 400, "/api/v1/denylist", "one JSON object");
    /* a switch is denied whole: scope up or down is refused (the status is checked by
     * test_ctl_api_deny_switch_scope_422) */
    static const char *const scoped[] = {
        "{\"element\":\"p0-t0-0\",\"scope\":\"up\",\"reason\":\"r\"}",
        "{\"element\":\"p1-t1-1\",\"scope\":\"down\",\"reason\":\"r\"}"};
    for (size_t i = 0; i < 2; i++) {
        r = call("POST", "/api/v1/denylist", NULL, scoped[i], &T_OPER);
        ck_assert_msg(r.status == 400 || r.status == 422, "%s: %d", scoped[i], r.status);
        expect_problem(&r, r.status, "/api/v1/denylist", "scope");
        char *after = snapshot();
        ck_assert_msg(strcmp(after, before) == 0, "%s changed the store", scoped[i]);
        free(after);
    }
    /* a body that is one object followed by a NUL and more bytes, all of bodylen */
    static const char nul[] = "{\"element\":\"p0-t0-0\",\"reason\":\"r\"}\0{}";
    ctl_req q = {.method = "POST",
                 .path = "/api/v1/denylist",
                 .body = nul,
                 .bodylen = sizeof(nul) - 1,
                 .who = &T_OPER};
    ctl_api_handle(&ctx, &q, &r);
    expect_problem(&r, 400, "/api/v1/denylist", NULL);
    char long_reason[400];
    snprintf(long_reason, sizeof(long_reason), "{\"element\":\"p0-t0-0\",\"reason\":\"%0256d\"}",
             0);
    r = call("POST", "/api/v1/denylist", NULL, long_reason, &T_OPER);
    expect_problem(&r, 400, "/api/v1/denylist", "'reason'");
    char *after = snapshot();
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    ck_assert_int_eq(nchanged, 0);
}
END_TEST

/* The element forms the fabric has: a switch (whole), a host port, a cabled T0-T1 pair in
 * either order and one direction of it; each is stored verbatim with its scope. */
START_TEST(test_ctl_api_deny_valid_elements)
{
    static const struct {
        const char *element, *scope;
    } ok[] = {{"p0-t1-1", "both"},
              {"h3:0", "both"},
              {"h7:1", "up"},
              {"p0-t0-0~p0-t1-1", "up"},
              {"p0-t1-1~p0-t0-0", "down"},
              {"p1-t0-3~p1-t1-0", "both"}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char body[200];
        snprintf(body, sizeof(body), "{\"element\":\"%s\",\"scope\":\"%s\",\"reason\":\"r\"}",
                 ok[i].element, ok[i].scope);
        ctl_resp r = call("POST", "/api/v1/denylist", NULL, body, &T_OPER);
        ck_assert_msg(r.status == 201, "%s: %d %s", body, r.status, r.body);
        json_object *j = body_json(&r);
        ck_assert_int_eq(json_object_get_int64(member(j, "id")), (int64_t)i + 1);
        ck_assert_str_eq(json_object_get_string(member(j, "element")), ok[i].element);
        ck_assert_str_eq(json_object_get_string(member(j, "scope")), ok[i].scope);
        json_object_put(j);
        free(r.body);
    }
    ck_assert_int_eq(list_version(), 6);
}
END_TEST

/* A switch is denied whole: scope up or down on a switch names no direction of anything, so
 * the entry is well-formed JSON that this fabric cannot apply, like a link without a cable. */
START_TEST(test_ctl_api_deny_switch_scope_422)
{
    char *before = snapshot();
    ctl_resp r = call("POST", "/api/v1/denylist", NULL,
                      "{\"element\":\"p0-t0-0\",\"scope\":\"up\",\"reason\":\"r\"}", &T_OPER);
    int status = r.status;
    free(r.body);
    char *after = snapshot();
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    ck_assert_msg(status == 422, "switch with scope up: %d, want 422", status);
}
END_TEST

/* 400 or 422 depends on what is wrong, not on words the client chose: a scope or an unknown
 * member that happens to read "fabric" or "cable" is still malformed (400). */
START_TEST(test_ctl_api_deny_status_not_from_client_text)
{
    static const char *const bodies[] = {
        "{\"element\":\"p0-t0-0\",\"reason\":\"r\",\"scope\":\"fabric\"}",
        "{\"element\":\"p0-t0-0\",\"reason\":\"r\",\"cable\":\"p0-t1-0\"}",
    };
    int status[2];
    for (size_t i = 0; i < 2; i++) {
        ctl_resp r = call("POST", "/api/v1/denylist", NULL, bodies[i], &T_OPER);
        status[i] = r.status;
        free(r.body);
    }
    ck_assert_msg(status[0] == 400 && status[1] == 400, "%s: %d; %s: %d; want 400 for both",
                  bodies[0], status[0], bodies[1], status[1]);
}
END_TEST

/* One audit record per committed add and remove, in order, by the token's name; failed
 * changes leave none; after and limit page by record id. */
START_TEST(test_ctl_api_audit)
{
    add("{\"element\":\"p0-t0-0\",\"reason\":\"a\"}", &T_OPER);
    add("{\"element\":\"h1:1\",\"reason\":\"b\"}", &T_PROBER);
    ctl_resp r =
        call("POST", "/api/v1/denylist", NULL, "{\"element\":\"zz\",\"reason\":\"c\"}", &T_OPER);
    ck_assert_int_eq(r.status, 422);
    free(r.body);
    r = call("DELETE", "/api/v1/denylist/1", NULL, NULL, &T_ADMIN);
    ck_assert_int_eq(r.status, 204);
    free(r.body);
    r = call("DELETE", "/api/v1/denylist/1", NULL, NULL, &T_ADMIN);
    ck_assert_int_eq(r.status, 404);
    free(r.body);
    static const struct {
        const char *actor, *action;
        int entry;
    } want[] = {{"olga", "add", 1}, {"pat", "add", 2}, {"ada", "remove", 1}};
    r = call("GET", "/api/v1/audit", NULL, NULL, &T_READER);
    ck_assert_int_eq(r.status, 200);
    json_object *j = body_json(&r), *recs = member(j, "records");
    ck_assert_uint_eq(json_object_array_length(recs), 3);
    for (size_t i = 0; i < 3; i++) {
        json_object *rec = json_object_array_get_idx(recs, i);
        ck_assert_int_eq(json_object_get_int(member(rec, "id")), (int)i + 1);
        ck_assert_str_eq(json_object_get_string(member(rec, "actor")), want[i].actor);
        ck_assert_str_eq(json_object_get_string(member(rec, "action")), want[i].action);
        ck_assert_int_eq(json_object_get_int(member(rec, "entry")), want[i].entry);
        ck_assert_int_ge(rfc3339_ms(json_object_get_string(member(rec, "time"))), 0);
    }
    json_object *detail = member(json_object_array_get_idx(recs, 1), "detail");
    ck_assert_str_eq(json_object_get_string(member(detail, "element")), "h1:1");
    json_object_put(j);
    free(r.body);
    static const struct {
        const char *after, *limit;
        const char *ids;
    } pages[] = {{"1", NULL, "2,3"}, {NULL, "1", "1"}, {"1", "1", "2"}, {"3", NULL, ""}};
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
        kv args[3] = {{0, 0}, {0, 0}, {0, 0}}, *a = args;
        if (pages[i].after) {
            *a++ = (kv){"after", pages[i].after};
        }
        if (pages[i].limit) {
            *a++ = (kv){"limit", pages[i].limit};
        }
        r = call("GET", "/api/v1/audit", args, NULL, &T_READER);
        j = body_json(&r);
        recs = member(j, "records");
        char ids[64] = "";
        for (size_t k = 0; k < json_object_array_length(recs); k++) {
            snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%d", k ? "," : "",
                     json_object_get_int(member(json_object_array_get_idx(recs, k), "id")));
        }
        ck_assert_str_eq(ids, pages[i].ids);
        json_object_put(j);
        free(r.body);
    }
    r = call("GET", "/api/v1/audit", (kv[]){{"after", "x"}, {0, 0}}, NULL, &T_READER);
    expect_problem(&r, 400, "/api/v1/audit", "'after'");
    r = call("GET", "/api/v1/audit", (kv[]){{"limit", "0"}, {0, 0}}, NULL, &T_READER);
    expect_problem(&r, 400, "/api/v1/audit", "'limit'");
    r = call("GET", "/api/v1/audit", (kv[]){{"limit", "1001"}, {0, 0}}, NULL, &T_READER);
    expect_problem(&r, 400, "/api/v1/audit", "'limit'");
}
END_TEST

/* Methods a resource does not take are 405 (even for an admin); paths that name nothing,
 * inside or outside /api/v1, are 404. */
START_TEST(test_ctl_api_methods_paths)
{
    static const struct {
        const char *method, *path;
        int status;
    } want[] = {{"PUT", "/api/v1/denylist", 405},
                {"PATCH", "/api/v1/denylist", 405},
                {"DELETE", "/api/v1/denylist", 405},
                {"PUT", "/api/v1/denylist/1", 405},
                {"POST", "/api/v1/fabric", 405},
                {"DELETE", "/api/v1/switches", 405},
                {"PUT", "/api/v1/config", 405},
                {"POST", "/api/v1/whoami", 405},
                {"DELETE", "/api/v1/probers", 405},
                {"GET", "/api/v1/whoami/x", 404},
                {"GET", "/api/v1/nope", 404},
                {"GET", "/api/v1/fabric/x", 404},
                {"GET", "/api/v1", 404},
                {"GET", "/api/v1/", 404},
                {"GET", "/api/v2/fabric", 404},
                {"GET", "/api/v10/fabric", 404},
                {"GET", "/metrics", 404},
                {"GET", "/", 404}};
    add("{\"element\":\"p0-t0-0\",\"reason\":\"r\"}", &T_OPER);
    char *before = snapshot();
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ctl_resp r = call(want[i].method, want[i].path, NULL,
                          "{\"element\":\"p0-t0-1\",\"reason\":\"r\"}", &T_ADMIN);
        expect_problem(&r, want[i].status, want[i].path, NULL);
    }
    char *after = snapshot();
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
}
END_TEST

/* The config resource reports each option's value; a secret is only true (set) or false. */
START_TEST(test_ctl_api_config)
{
    ctl_resp r = call("GET", "/api/v1/config", NULL, NULL, &T_READER);
    ck_assert_ptr_null(strstr(r.body, "s3cr3t"));
    ck_assert_ptr_null(strstr(r.body, "PRIVATE"));
    expect_json(&r, 200,
                "{\"listen\":\"127.0.0.1:8080\",\"cert\":null,\"key\":true,\"password\":false,"
                "\"threads\":4,\"verbose\":false}");
}
END_TEST

/* The value of sample |name| in the Prometheus text |t|, after its # HELP and # TYPE lines. */
static const char *sample(const char *t, const char *family, const char *name)
{
    char help[128], type[128], line[160];
    snprintf(help, sizeof(help), "# HELP %s ", family);
    snprintf(type, sizeof(type), "# TYPE %s ", family);
    snprintf(line, sizeof(line), "\n%s ", name);
    const char *h = strstr(t, help), *ty = strstr(t, type), *s = strstr(t, line);
    ck_assert_msg(h && ty && s && h < ty && ty < s, "%s: no HELP, TYPE and sample", name);
    return s + strlen(line);
}

static void expect_sample(const char *t, const char *family, const char *name, const char *val)
{
    const char *v = sample(t, family, name);
    size_t n = strlen(val);
    ck_assert_msg(strncmp(v, val, n) == 0 && v[n] == '\n', "%s is '%.20s', want %s", name, v, val);
}

/* The metrics text: every family announced, the denylist's size and version as the store has
 * them, the change counter from the handlers and the request counters by class. */
START_TEST(test_ctl_api_metrics)
{
    add("{\"element\":\"p0-t0-0\",\"reason\":\"a\"}", &T_OPER);
    add("{\"element\":\"p0-t0-1\",\"reason\":\"b\"}", &T_OPER);
    add("{\"element\":\"p0-t0-2\",\"reason\":\"c\"}", &T_OPER);
    ctl_resp r = call("DELETE", "/api/v1/denylist/2", NULL, NULL, &T_OPER);
    free(r.body);
    atomic_store(&ctx.metrics.requests[2], 7);
    atomic_store(&ctx.metrics.requests[4], 3);
    /* one lossy link of the lab's 32 (16 T0-T1, 16 host ports), by the localizer */
    ctx.health = ctl_health_new(topo, 60000);
    r = call("POST", "/api/v1/probes", NULL,
             "{\"results\":[{\"element\":\"p1-t0-2~p1-t1-0\",\"scope\":\"down\",\"sent\":5000,"
             "\"lost\":100}]}",
             &T_LOCAL);
    ck_assert_int_eq(r.status, 202);
    free(r.body);
    size_t len = 0;
    char *t = ctl_metrics_text(&ctx, &len);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(len, strlen(t));
    ck_assert(len > 0 && t[len - 1] == '\n');
    expect_sample(t, "mrcfab_http_requests_total", "mrcfab_http_requests_total{code=\"2xx\"}", "7");
    expect_sample(t, "mrcfab_http_requests_total", "mrcfab_http_requests_total{code=\"4xx\"}", "3");
    expect_sample(t, "mrcfab_http_requests_total", "mrcfab_http_requests_total{code=\"5xx\"}", "0");
    expect_sample(t, "mrcfab_denylist_entries", "mrcfab_denylist_entries", "2");
    expect_sample(t, "mrcfab_denylist_version", "mrcfab_denylist_version", "4");
    expect_sample(t, "mrcfab_denylist_changes_total", "mrcfab_denylist_changes_total", "4");
    expect_sample(t, "mrcfab_http_request_duration_seconds",
                  "mrcfab_http_request_duration_seconds_count", "0");
    expect_sample(t, "mrcfab_reports_ingested_total", "mrcfab_reports_ingested_total", "1");
    expect_sample(t, "mrcfab_links", "mrcfab_links{state=\"bad\"}", "1");
    expect_sample(t, "mrcfab_links", "mrcfab_links{state=\"no_data\"}", "31");
    ctl_health_free(ctx.health);
    ctx.health = NULL;
    ck_assert_ptr_nonnull(strstr(t, "# TYPE mrcfab_http_requests_total counter\n"));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE mrcfab_denylist_entries gauge\n"));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE mrcfab_http_request_duration_seconds histogram\n"));
    free(t);
}
END_TEST

/* The dry run reports the blast radius and changes nothing; past the floor an entry is
 * refused with its blast radius, unless an operator forces it, which the audit records. */
START_TEST(test_ctl_api_deny_blast_radius_and_floor)
{
    ctx.floor = 0.5;
    static const kv dry[] = {{"dry_run", "true"}, {NULL, NULL}};
    static const kv force[] = {{"force", "true"}, {NULL, NULL}};
    char *before = snapshot();
    /* a T1 of plane 0 of the lab: the 48 pairs across T0s keep 3/4 */
    ctl_resp r = call("POST", "/api/v1/denylist", dry, "{\"element\":\"p0-t1-0\",\"reason\":\"r\"}",
                      &T_PROBER);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    json_object *j = body_json(&r), *br = member(j, "blast_radius");
    ck_assert_int_eq(json_object_get_int64(member(br, "pairs")), 56);
    ck_assert_int_eq(json_object_get_int64(member(br, "affected_pairs")), 48);
    ck_assert_double_eq_tol(json_object_get_double(member(br, "min_capacity_left")), 0.75, 1e-9);
    ck_assert(!json_object_get_boolean(member(j, "refused")));
    ck_assert_str_eq(json_object_get_string(member(member(j, "entry"), "element")), "p0-t1-0");
    ck_assert(!json_object_object_get_ex(member(j, "entry"), "id", NULL));
    json_object_put(j);
    free(r.body);
    char *after = snapshot();
    ck_assert_str_eq(before, after);
    free(after);
    /* both T0s of h0 and h1: the first leaves them half, the second would cut them off */
    add("{\"element\":\"p0-t0-0\",\"reason\":\"maintenance\"}", &T_OPER);
    free(before);
    before = snapshot();
    const char *cut = "{\"element\":\"p1-t0-0\",\"reason\":\"maintenance\"}";
    r = call("POST", "/api/v1/denylist", dry, cut, &T_READER);
    expect_problem(&r, 403, "/api/v1/denylist", "takes prober");
    r = call("POST", "/api/v1/denylist", dry, cut, &T_PROBER);
    j = body_json(&r);
    ck_assert(json_object_get_boolean(member(j, "refused")));
    ck_assert_int_eq(json_object_get_int64(member(member(j, "blast_radius"), "cut_off_pairs")), 26);
    json_object_put(j);
    free(r.body);
    r = call("POST", "/api/v1/denylist", NULL, cut, &T_OPER);
    ck_assert_str_eq(r.ctype, "application/problem+json");
    j = body_json(&r);
    ck_assert_int_eq(json_object_get_int64(member(member(j, "blast_radius"), "below_floor_pairs")),
                     26);
    json_object_put(j);
    expect_problem(&r, 409, "/api/v1/denylist", "26 host pairs below the capacity floor of 50 %");
    r = call("POST", "/api/v1/denylist", force, cut, &T_PROBER);
    expect_problem(&r, 403, "/api/v1/denylist", "takes operator");
    static const kv bad[] = {{"force", "yes"}, {NULL, NULL}};
    r = call("POST", "/api/v1/denylist", bad, cut, &T_OPER);
    expect_problem(&r, 400, "/api/v1/denylist", "'force' must be true or false");
    after = snapshot();
    ck_assert_str_eq(before, after);
    free(after);
    free(before);
    /* forced: added, and the audit says it was forced */
    int64_t id = add_args(cut, force, &T_OPER);
    json_object *a = ctl_store_audit(ctx.store, 0, 100);
    json_object *last = json_object_array_get_idx(a, json_object_array_length(a) - 1);
    ck_assert_int_eq(json_object_get_int64(member(last, "entry")), id);
    ck_assert(json_object_get_boolean(member(member(last, "detail"), "forced")));
    json_object_put(a);
    /* an entry whose window is over counts no more: the other T1 keeps half of plane 0 (the API
     * refuses such a window now, so the store takes it, as one stored before the window ended) */
    ctl_deny over = {.start = ctl_time_parse("2001-01-01T00:00:00Z"),
                     .end = ctl_time_parse("2001-01-01T01:00:00Z")};
    snprintf(over.element, sizeof(over.element), "p0-t1-1");
    snprintf(over.scope, sizeof(over.scope), "both");
    snprintf(over.source, sizeof(over.source), "operator");
    snprintf(over.author, sizeof(over.author), "olga");
    ck_assert_int_eq(ctl_store_deny_add(ctx.store, &over), 0);
    r = call("POST", "/api/v1/denylist", dry, "{\"element\":\"p0-t1-0\",\"reason\":\"r\"}",
             &T_OPER);
    j = body_json(&r);
    br = member(j, "blast_radius");
    ck_assert_int_eq(json_object_get_int64(member(br, "affected_pairs")), 24);
    ck_assert_double_eq_tol(json_object_get_double(member(br, "min_capacity_left")), 0.75, 1e-9);
    json_object_put(j);
    free(r.body);
}
END_TEST

/* whoami answers each token's holder and role, as util_role_name names it, and nothing else. */
START_TEST(test_ctl_api_whoami)
{
    static const struct {
        const util_token *who;
        const char *golden;
    } want[] = {{&T_READER, "{\"name\":\"rita\",\"role\":\"reader\"}"},
                {&T_AGENT, "{\"name\":\"h3\",\"role\":\"agent\"}"},
                {&T_PROBER, "{\"name\":\"pat\",\"role\":\"prober\"}"},
                {&T_OPER, "{\"name\":\"olga\",\"role\":\"operator\"}"},
                {&T_ADMIN, "{\"name\":\"ada\",\"role\":\"admin\"}"}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ctl_resp r = call("GET", "/api/v1/whoami", NULL, NULL, want[i].who);
        expect_json(&r, 200, want[i].golden);
    }
    ctl_resp r = call("GET", "/api/v1/whoami", NULL, NULL, NULL);
    expect_problem(&r, 401, "/api/v1/whoami", "bearer token");
    r = call("POST", "/api/v1/whoami", NULL, "{}", &T_ADMIN);
    expect_problem(&r, 405, "/api/v1/whoami", "GET only");
}
END_TEST

/* The tokens file of the probers' tests: two probers among other roles. */
static util_token seen_tokens[] = {
    {.role = UTIL_ROLE_READER, .name = (char[]){"rita"}},
    {.role = UTIL_ROLE_PROBER, .name = (char[]){"pat"}},
    {.role = UTIL_ROLE_AGENT, .name = (char[]){"h3"}},
    {.role = UTIL_ROLE_PROBER, .name = (char[]){"pia"}},
};
static const util_auth seen_auth = {.tokens = seen_tokens,
                                    .n = sizeof(seen_tokens) / sizeof(seen_tokens[0])};

/* Every prober token, in the file's order, never seen at first; a request by one (even a
 * refused one) makes it seen now and counts; a request without a token or by a token not of
 * the file counts for none. Without the table: 503. */
START_TEST(test_ctl_api_probers)
{
    ctl_resp r = call("GET", "/api/v1/probers", NULL, NULL, &T_READER);
    expect_problem(&r, 503, "/api/v1/probers", NULL);
    ctx.seen = ctl_seen_new(&seen_auth);
    r = call("GET", "/api/v1/probers", NULL, NULL, &seen_tokens[0]);
    expect_json(&r, 200,
                "{\"total\":2,\"items\":[{\"name\":\"pat\",\"last_seen\":null,\"requests\":0},"
                "{\"name\":\"pia\",\"last_seen\":null,\"requests\":0}]}");
    r = call("GET", "/api/v1/probers", NULL, NULL, NULL);
    expect_problem(&r, 401, "/api/v1/probers", NULL);
    r = call("GET", "/api/v1/fabric", NULL, NULL, &T_PROBER); /* the same name, not of the file */
    free(r.body);
    int64_t t0 = ctl_now_ms();
    r = call("GET", "/api/v1/fabric", NULL, NULL, &seen_tokens[1]);
    free(r.body);
    r = call("POST", "/api/v1/denylist", (kv[]){{"force", "true"}, {0, 0}},
             "{\"element\":\"p0-t0-0\",\"reason\":\"r\"}", &seen_tokens[1]);
    expect_problem(&r, 403, "/api/v1/denylist", "takes operator");
    int64_t t1 = ctl_now_ms();
    r = call("GET", "/api/v1/probers", NULL, NULL, &seen_tokens[2]);
    ck_assert_int_eq(r.status, 200);
    json_object *j = body_json(&r), *items = member(j, "items");
    free(r.body);
    ck_assert_int_eq(json_object_get_int(member(j, "total")), 2);
    json_object *pat = json_object_array_get_idx(items, 0),
                *pia = json_object_array_get_idx(items, 1);
    ck_assert_str_eq(json_object_get_string(member(pat, "name")), "pat");
    ck_assert_int_eq(json_object_get_int64(member(pat, "requests")), 2);
    int64_t seen = rfc3339_ms(json_object_get_string(member(pat, "last_seen")));
    ck_assert_msg(seen >= t0 && seen <= t1, "last seen %lld, not in [%lld, %lld]", (long long)seen,
                  (long long)t0, (long long)t1);
    ck_assert_str_eq(json_object_get_string(member(pia, "name")), "pia");
    ck_assert(json_object_is_type(member(pia, "last_seen"), json_type_null));
    ck_assert_int_eq(json_object_get_int64(member(pia, "requests")), 0);
    json_object_put(j);
}
END_TEST

/* Notes from many threads at once: none lost, the latest time kept. */
static void *note_many(void *arg)
{
    for (int i = 0; i < 20000; i++) {
        ctl_seen_note(arg, &seen_tokens[3], 1000 + i);
    }
    return NULL;
}

START_TEST(test_ctl_api_probers_threads)
{
    ctl_seen *seen = ctl_seen_new(&seen_auth);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, note_many, seen), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
    }
    json_object *j = ctl_seen_list(seen, 1u << UTIL_ROLE_PROBER);
    json_object *pia = json_object_array_get_idx(member(j, "items"), 1);
    ck_assert_int_eq(json_object_get_int64(member(pia, "requests")), 80000);
    ck_assert_int_eq(rfc3339_ms(json_object_get_string(member(pia, "last_seen"))), 1000 + 19999);
    json_object_put(j);
    ctl_seen_free(seen);
}
END_TEST

Suite *ctl_api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ctl_api_fabric);
    tcase_add_test(tc, test_ctl_api_switch);
    tcase_add_test(tc, test_ctl_api_switches_filter_page);
    tcase_add_test(tc, test_ctl_api_switches_bad_args);
    tcase_add_test(tc, test_ctl_api_switch_table);
    tcase_add_test(tc, test_ctl_api_deny_post);
    tcase_add_test(tc, test_ctl_api_deny_window);
    tcase_add_test(tc, test_ctl_api_deny_version_delete);
    tcase_add_test(tc, test_ctl_api_deny_roles);
    tcase_add_test(tc, test_ctl_api_deny_bad_bodies);
    tcase_add_test(tc, test_ctl_api_deny_valid_elements);
    tcase_add_test(tc, test_ctl_api_deny_switch_scope_422);
    tcase_add_test(tc, test_ctl_api_deny_status_not_from_client_text);
    tcase_add_test(tc, test_ctl_api_audit);
    tcase_add_test(tc, test_ctl_api_methods_paths);
    tcase_add_test(tc, test_ctl_api_config);
    tcase_add_test(tc, test_ctl_api_metrics);
    tcase_add_test(tc, test_ctl_api_deny_blast_radius_and_floor);
    tcase_add_test(tc, test_ctl_api_whoami);
    tcase_add_test(tc, test_ctl_api_probers);
    tcase_add_test(tc, test_ctl_api_probers_threads);
    suite_add_tcase(s, tc);
    return s;
}
