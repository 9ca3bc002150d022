/* SPDX-License-Identifier: MIT */
/* Tests of the agent registry and of agent reports through the REST API's handlers (no HTTP),
 * on the lab fabric (2 planes, 4 T0 and 2 T1 per plane, 8 hosts, h0-h1 under T0 0 and so on):
 * registration, the list and one agent, each role and each wrong host, bad bodies (each a
 * problem document, the store and the registry unchanged), registrations surviving a restart,
 * staleness and its metric, the richer reports (good ones summed up, bad ones refused whole)
 * and transitions into assumed_bad as health evidence. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_api.h"
#include "ctl_test_tokens.h"
#include "util_test.h"

#define LAB CTL_TEST_ROOT "/deploy/topologies/lab.json"
#define INTERVAL_MS 10000

static const util_token T_AGENT5 = {.role = UTIL_ROLE_AGENT, .name = (char[]){"h5"}};

static const char REG_H3[] = "{\"host\":\"h3\",\"version\":\"0.1.0\",\"mode\":\"srv6\","
                             "\"ports\":[{\"port\":0,\"up\":true},{\"port\":1,\"up\":false}],"
                             "\"oob\":\"[fd00::3]:7471\"}";
static const char REG_H5[] = "{\"host\":\"h5\",\"version\":\"0.1.0\",\"mode\":\"ecmp\","
                             "\"ports\":[{\"port\":1,\"up\":true}]}";

static char dir[256], dbpath[512];
static fab_topo *topo;
static ctl_ctx ctx;

static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "ctl_agents");
    fab_error ferr;
    ck_assert_msg(fab_topo_load_file(LAB, &topo, &ferr) == 0, "%s: %s", LAB, ferr.msg);
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
    fab_topo_free(topo);
}

static void open_agents(void)
{
    char err[256];
    ck_assert_msg(ctl_agents_open(topo, ctx.store, INTERVAL_MS, &ctx.agents, err, sizeof(err)) == 0,
                  "%s", err);
}

/* Before each test: an empty store, a registry on it and a health engine. */
static void setup(void)
{
    char err[256];
    snprintf(dbpath, sizeof(dbpath), "%s/agents-%ld.db", dir, (long)getpid());
    static const char *const tails[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof(p), "%s%s", dbpath, tails[i]);
        unlink(p);
    }
    memset(&ctx, 0, sizeof(ctx));
    ck_assert_msg(ctl_store_open(dbpath, &ctx.store, err, sizeof(err)) == 0, "%s", err);
    ctx.topo = topo;
    ctx.health = ctl_health_new(topo, 60000);
    open_agents();
}

static void teardown(void)
{
    ctl_agents_free(ctx.agents);
    ctl_health_free(ctx.health);
    ctl_store_close(ctx.store);
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

static ctl_resp call_args(const char *method, const char *path, const kv *args, const char *body,
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

static ctl_resp call(const char *method, const char *path, const char *body, const util_token *who)
{
    return call_args(method, path, NULL, body, who);
}

/* The body of a |status| JSON response (freed) as JSON. */
static json_object *expect_json(ctl_resp *r, int status)
{
    ck_assert_msg(r->status == status, "status %d, want %d: %s", r->status, status, r->body);
    ck_assert_str_eq(r->ctype, "application/json");
    json_object *j = json_tokener_parse(r->body);
    ck_assert_msg(j != NULL, "not JSON: %s", r->body);
    free(r->body);
    return j;
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no '%s' in %s", key,
                  json_object_to_json_string(o));
    return v;
}

static int64_t int_of(json_object *o, const char *key)
{
    json_object *v = member(o, key);
    ck_assert_msg(json_object_is_type(v, json_type_int), "'%s' is no integer", key);
    return json_object_get_int64(v);
}

/* A problem document (RFC 9457) of |status| whose detail holds |needle| (if any); freed. */
static void expect_problem(ctl_resp *r, int status, const char *instance, const char *needle)
{
    ck_assert_msg(r->status == status, "%s: status %d, want %d: %s", instance, r->status, status,
                  r->body);
    ck_assert_str_eq(r->ctype, "application/problem+json");
    json_object *j = json_tokener_parse(r->body);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_object_object_length(j), 5);
    ck_assert_int_eq(int_of(j, "status"), status);
    ck_assert_str_eq(json_object_get_string(member(j, "instance")), instance);
    const char *detail = json_object_get_string(member(j, "detail"));
    ck_assert_msg(!needle || strstr(detail, needle), "detail '%s' lacks '%s'", detail, needle);
    json_object_put(j);
    free(r->body);
}

static void row_count(void *user, const char *host, const char *record, int64_t registered)
{
    (void)host;
    (void)record;
    (void)registered;
    (*(int *)user)++;
}

static int stored_rows(void)
{
    int n = 0;
    ck_assert_int_eq(ctl_store_agent_all(ctx.store, row_count, &n), 0);
    return n;
}

/* GET /api/v1/agents as text, for before-and-after comparisons. */
static char *list_text(void)
{
    ctl_resp r = call("GET", "/api/v1/agents", NULL, &T_READER);
    ck_assert_int_eq(r.status, 200);
    return r.body;
}

/* |got| without its times equals |golden|; the times are RFC 3339 UTC. */
static void expect_agent(json_object *got, const char *golden)
{
    json_object *want = json_tokener_parse(golden), *copy = NULL;
    ck_assert_ptr_nonnull(want);
    json_object_deep_copy(got, &copy, NULL);
    static const char *const times[] = {"registered", "last_seen"};
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(ctl_time_parse(json_object_get_string(member(copy, times[i]))) > 0,
                      "'%s' is no time", times[i]);
        json_object_object_del(copy, times[i]);
    }
    ck_assert_msg(json_object_equal(want, copy), "got  %s\nwant %s",
                  json_object_to_json_string(copy), golden);
    json_object_put(want);
    json_object_put(copy);
}

#define H3_RECORD                                                                                  \
    "\"host\":\"h3\",\"version\":\"0.1.0\",\"mode\":\"srv6\",\"ports\":[{\"port\":0,\"up\":true}," \
    "{\"port\":1,\"up\":false}],\"oob\":\"[fd00::3]:7471\""

/* An agent registers as its own host and reads back what was stored; an admin registers any
 * host; registering again replaces the registration; the list is in fabric order; every role
 * reads the list and one agent. */
START_TEST(test_ctl_agents_register_list_one)
{
    ctl_resp r = call("POST", "/api/v1/agents", REG_H3, &T_AGENT);
    json_object *j = expect_json(&r, 200);
    expect_agent(j, "{" H3_RECORD ",\"reports\":0,\"stale\":false}");
    ck_assert_str_eq(json_object_get_string(member(j, "registered")),
                     json_object_get_string(member(j, "last_seen")));
    json_object_put(j);
    ck_assert_int_eq(stored_rows(), 1);
    r = call("GET", "/api/v1/agents/h3", NULL, &T_READER);
    j = expect_json(&r, 200);
    ck_assert(!json_object_object_get_ex(j, "report", NULL)); /* none yet */
    expect_agent(j, "{" H3_RECORD ",\"reports\":0,\"stale\":false}");
    json_object_put(j);

    r = call("POST", "/api/v1/agents", REG_H5, &T_ADMIN);
    json_object_put(expect_json(&r, 200));
    r = call("POST", "/api/v1/agents",
             "{\"host\":\"h3\",\"version\":\"0.2.0\",\"mode\":\"srv6\",\"ports\":[]}", &T_AGENT);
    json_object_put(expect_json(&r, 200));
    ck_assert_int_eq(stored_rows(), 2);

    const util_token *roles[] = {&T_READER, &T_AGENT, &T_PROBER, &T_OPER, &T_ADMIN};
    for (size_t i = 0; i < 5; i++) {
        r = call("GET", "/api/v1/agents", NULL, roles[i]);
        j = expect_json(&r, 200);
        ck_assert_int_eq(int_of(j, "total"), 2);
        ck_assert_int_eq(int_of(j, "fresh"), 2);
        ck_assert_int_eq(int_of(j, "stale"), 0);
        ck_assert_int_eq(int_of(j, "offset"), 0);
        json_object *items = member(j, "items");
        ck_assert_int_eq(json_object_array_length(items), 2);
        expect_agent(json_object_array_get_idx(items, 0),
                     "{\"host\":\"h3\",\"version\":\"0.2.0\",\"mode\":\"srv6\",\"ports\":[],"
                     "\"reports\":0,\"stale\":false}");
        expect_agent(json_object_array_get_idx(items, 1),
                     "{\"host\":\"h5\",\"version\":\"0.1.0\",\"mode\":\"ecmp\",\"ports\":[{"
                     "\"port\":1,\"up\":true}],\"reports\":0,\"stale\":false}");
        json_object_put(j);
        r = call("GET", "/api/v1/agents/h5", NULL, roles[i]);
        json_object_put(expect_json(&r, 200));
    }
    /* a page of the list */
    static const kv page[] = {{"offset", "1"}, {"limit", "1"}, {NULL, NULL}};
    r = call_args("GET", "/api/v1/agents", page, NULL, &T_READER);
    j = expect_json(&r, 200);
    ck_assert_int_eq(int_of(j, "total"), 2);
    ck_assert_int_eq(int_of(j, "offset"), 1);
    ck_assert_int_eq(json_object_array_length(member(j, "items")), 1);
    ck_assert_str_eq(
        json_object_get_string(member(json_object_array_get_idx(member(j, "items"), 0), "host")),
        "h5");
    json_object_put(j);
    static const kv bad_page[] = {{"limit", "0"}, {NULL, NULL}};
    r = call_args("GET", "/api/v1/agents", bad_page, NULL, &T_READER);
    expect_problem(&r, 400, "/api/v1/agents", "'limit'");

    r = call("GET", "/api/v1/agents/h6", NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/agents/h6", "has not registered");
    r = call("GET", "/api/v1/agents/h99", NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/agents/h99", "no host");
    r = call("GET", "/api/v1/agents/h3/x", NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/agents/h3/x", NULL);
    r = call("GET", "/api/v1/agents", NULL, NULL);
    expect_problem(&r, 401, "/api/v1/agents", NULL);
}
END_TEST

/* Only an agent (as the host its token names) or an admin registers; a refused registration
 * stores nothing. */
START_TEST(test_ctl_agents_register_roles)
{
    char *before = list_text();
    const util_token *weak[] = {&T_READER, &T_PROBER, &T_LOCAL, &T_OPER};
    for (size_t i = 0; i < 4; i++) {
        ctl_resp r = call("POST", "/api/v1/agents", REG_H3, weak[i]);
        expect_problem(&r, 403, "/api/v1/agents", "it takes agent, admin");
    }
    ctl_resp r = call("POST", "/api/v1/agents", REG_H5, &T_AGENT);
    expect_problem(&r, 403, "/api/v1/agents", "may register only as 'h3', not as 'h5'");
    /* another host is refused before the rest of the body is looked at */
    r = call("POST", "/api/v1/agents",
             "{\"host\":\"h4\",\"version\":\"0.1.0\",\"mode\":\"rdma\",\"ports\":[]}", &T_AGENT);
    expect_problem(&r, 403, "/api/v1/agents", "not as 'h4'");
    r = call("POST", "/api/v1/agents", REG_H3, NULL);
    expect_problem(&r, 401, "/api/v1/agents", NULL);
    r = call("PUT", "/api/v1/agents", REG_H3, &T_ADMIN);
    expect_problem(&r, 405, "/api/v1/agents", "GET or POST");
    r = call("DELETE", "/api/v1/agents/h3", NULL, &T_ADMIN);
    expect_problem(&r, 405, "/api/v1/agents/h3", "GET only");
    r = call("POST", "/api/v1/agents/h3", REG_H3, &T_AGENT);
    expect_problem(&r, 405, "/api/v1/agents/h3", "GET only");
    char *after = list_text();
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(stored_rows(), 0);
    free(before);
    free(after);
}
END_TEST

/* Every malformed registration is a 400 and one the fabric cannot have a 422, each naming what
 * is wrong; none stores anything. Then the address forms that are good. */
START_TEST(test_ctl_agents_register_bad_bodies)
{
#define B(rest) "{\"host\":\"h3\",\"version\":\"0.1.0\",\"mode\":\"srv6\"" rest "}"
#define P(ports) B(",\"ports\":" ports)
#define O(oob) B(",\"ports\":[],\"oob\":" oob)
    static const struct {
        int status;
        const char *body, *needle;
    } bad[] = {
        {400, "[1]", "one JSON object"},
        {400, "{\"host\":\"h3\"", "one JSON object"},
        {400, "{}", "'host'"},
        {400, "{\"host\":3,\"version\":\"0.1.0\",\"mode\":\"srv6\",\"ports\":[]}", "'host'"},
        {400, "{\"host\":\"\",\"version\":\"0.1.0\",\"mode\":\"srv6\",\"ports\":[]}", "'host'"},
        {400, P("[],\"colour\":\"red\""), "unknown member 'colour'"},
        {400, "{\"host\":\"h3\",\"mode\":\"srv6\",\"ports\":[]}", "'version'"},
        {400, "{\"host\":\"h3\",\"version\":\"\",\"mode\":\"srv6\",\"ports\":[]}", "'version'"},
        {400, "{\"host\":\"h3\",\"version\":\"0.1\\u0001\",\"mode\":\"srv6\",\"ports\":[]}",
         "'version'"},
        {400,
         "{\"host\":\"h3\",\"version\":\"0123456789012345678901234567890123456789012345678901"
         "234567890123\",\"mode\":\"srv6\",\"ports\":[]}",
         "'version'"},
        {400, "{\"host\":\"h3\",\"version\":\"0.1.0\",\"mode\":\"rdma\",\"ports\":[]}", "'mode'"},
        {400, "{\"host\":\"h3\",\"version\":\"0.1.0\",\"ports\":[]}", "'mode'"},
        {400, B(""), "'ports'"},
        {400, P("{}"), "'ports'"},
        {400,
         P("[{\"port\":0,\"up\":true},{\"port\":1,\"up\":true},{\"port\":2,\"up\":true},"
           "{\"port\":3,\"up\":true},{\"port\":4,\"up\":true},{\"port\":5,\"up\":true},"
           "{\"port\":6,\"up\":true},{\"port\":7,\"up\":true},{\"port\":8,\"up\":true},"
           "{\"port\":9,\"up\":true},{\"port\":10,\"up\":true},{\"port\":11,\"up\":true},"
           "{\"port\":12,\"up\":true},{\"port\":13,\"up\":true},{\"port\":14,\"up\":true},"
           "{\"port\":15,\"up\":true},{\"port\":0,\"up\":true}]"),
         "at most 16"},
        {400, P("[{\"port\":0}]"), "ports[0]"},
        {400, P("[{\"port\":0,\"up\":1}]"), "ports[0]"},
        {400, P("[{\"port\":-1,\"up\":true}]"), "ports[0]"},
        {400, P("[{\"port\":1.5,\"up\":true}]"), "ports[0]"},
        {400, P("[{\"port\":16,\"up\":true}]"), "ports[0]"},
        {400, P("[{\"port\":0,\"up\":true,\"speed\":100}]"), "ports[0]"},
        {400, P("[{\"port\":0,\"up\":true},{\"port\":0,\"up\":false}]"), "listed twice"},
        {400, P("[7]"), "ports[0]"},
        {400, O("\"fd00::3:7471\""), "'oob'"},
        {400, O("\"[fd00::3]\""), "'oob'"},
        {400, O("\"[fd00::3]:0\""), "'oob'"},
        {400, O("\"[fd00::3]:65536\""), "'oob'"},
        {400, O("\"[fd00::zz]:7471\""), "'oob'"},
        {400, O("\"10.0.0.3:74x1\""), "'oob'"},
        {400, O("\"10.0.0.3:\""), "'oob'"},
        {400, O("\"host.example:7471\""), "'oob'"},
        {400, O("7471"), "'oob'"},
        {422, "{\"host\":\"h99\",\"version\":\"0.1.0\",\"mode\":\"srv6\",\"ports\":[]}",
         "no host of fabric 'lab'"},
        {422, P("[{\"port\":0,\"up\":true},{\"port\":2,\"up\":true}]"),
         "ports[1]: fabric 'lab' has 2 planes"},
    };
    char *before = list_text();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ctl_resp r = call("POST", "/api/v1/agents", bad[i].body, &T_ADMIN);
        ck_assert_msg(r.status == bad[i].status, "%s: %d, want %d: %s", bad[i].body, r.status,
                      bad[i].status, r.body);
        expect_problem(&r, bad[i].status, "/api/v1/agents", bad[i].needle);
    }
    char *after = list_text();
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(stored_rows(), 0);
    free(before);
    free(after);
    static const char *const good[] = {O("\"10.0.0.3:7471\""), O("\"[::1]:1\""),
                                       O("\"[fd00::3]:65535\""), P("[]")};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ctl_resp r = call("POST", "/api/v1/agents", good[i], &T_AGENT);
        json_object_put(expect_json(&r, 200));
    }
#undef O
#undef P
#undef B
}
END_TEST

static void put_row(const char *host, const char *record)
{
    ck_assert_int_eq(ctl_store_agent_put(ctx.store, host, record, 1700000000000), 0);
}

/* Registrations survive a restart (last heard from when they registered; no reports yet); a
 * stored one the fabric does not have is left out. */
START_TEST(test_ctl_agents_persist)
{
    ctl_resp r = call("POST", "/api/v1/agents", REG_H3, &T_AGENT);
    json_object *h3 = expect_json(&r, 200);
    r = call("POST", "/api/v1/agents", REG_H5, &T_AGENT5);
    json_object_put(expect_json(&r, 200));
    r = call("POST", "/api/v1/reports",
             "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h5\",\"ev\":0,\"sent\":10,\"lost\":0}]}",
             &T_AGENT);
    ck_assert_int_eq(r.status, 202);
    free(r.body);
    put_row("h99", "{\"host\":\"h99\",\"version\":\"1\",\"mode\":\"srv6\",\"ports\":[]}");
    put_row("h4", "{\"host\":\"h4\",\"version\":\"1\",\"mode\":\"srv6\",\"ports\":[{\"port\":5,"
                  "\"up\":true}]}");
    put_row("h2", "not json");
    put_row("h1", "{\"host\":\"h6\",\"version\":\"1\",\"mode\":\"srv6\",\"ports\":[]}");
    ctl_agents_free(ctx.agents);
    open_agents();
    r = call("GET", "/api/v1/agents", NULL, &T_READER);
    json_object *j = expect_json(&r, 200);
    ck_assert_int_eq(int_of(j, "total"), 2);
    json_object *again = json_object_array_get_idx(member(j, "items"), 0);
    ck_assert_str_eq(json_object_get_string(member(again, "registered")),
                     json_object_get_string(member(h3, "registered")));
    ck_assert_str_eq(json_object_get_string(member(again, "last_seen")),
                     json_object_get_string(member(h3, "registered")));
    expect_agent(again, "{" H3_RECORD ",\"reports\":0,\"stale\":false}");
    json_object_put(j);
    json_object_put(h3);
    r = call("GET", "/api/v1/agents/h3", NULL, &T_READER);
    j = expect_json(&r, 200);
    ck_assert(!json_object_object_get_ex(j, "report", NULL));
    json_object_put(j);
}
END_TEST

/* An agent not heard from for more than 3 report intervals is stale, a report makes it fresh
 * again, and /metrics counts both. */
START_TEST(test_ctl_agents_stale_and_metrics)
{
    int64_t t = ctl_now_ms() - 10 * INTERVAL_MS; /* so that /metrics below finds it stale */
    char why[256];
    json_object *body = json_tokener_parse(REG_H3), *out = NULL;
    ck_assert_int_eq(ctl_agents_register(ctx.agents, body, NULL, t, &out, why, sizeof(why)), 0);
    json_object_put(out);
    json_object_put(body);
    uint64_t fresh, stale;
    ctl_agents_counts(ctx.agents, t + 3 * INTERVAL_MS, &fresh, &stale);
    ck_assert(fresh == 1 && stale == 0);
    ctl_agents_counts(ctx.agents, t + 3 * INTERVAL_MS + 1, &fresh, &stale);
    ck_assert(fresh == 0 && stale == 1);
    json_object *l = ctl_agents_list(ctx.agents, 0, 10, t + 3 * INTERVAL_MS + 1);
    ck_assert(
        json_object_get_boolean(member(json_object_array_get_idx(member(l, "items"), 0), "stale")));
    ck_assert_int_eq(int_of(l, "stale"), 1);
    json_object_put(l);
    ctl_report_sum sum = {.time = -1};
    ctl_agents_report_note(ctx.agents, "h3", &sum, t + 5 * INTERVAL_MS);
    ctl_agents_counts(ctx.agents, t + 8 * INTERVAL_MS, &fresh, &stale);
    ck_assert(fresh == 1 && stale == 0);
    ctl_agents_counts(ctx.agents, t + 8 * INTERVAL_MS + 1, &fresh, &stale);
    ck_assert(fresh == 0 && stale == 1);

    /* /metrics: h3 registered long ago, h5 now */
    ctl_resp r = call("POST", "/api/v1/agents", REG_H5, &T_ADMIN);
    json_object_put(expect_json(&r, 200));
    size_t len;
    char *text = ctl_metrics_text(&ctx, &len);
    ck_assert_msg(strstr(text, "# TYPE mrcfab_agents gauge\n"), "%s", text);
    ck_assert_msg(strstr(text, "\nmrcfab_agents{state=\"fresh\"} 1\n"), "%s", text);
    ck_assert_msg(strstr(text, "\nmrcfab_agents{state=\"stale\"} 1\n"), "%s", text);
    free(text);
}
END_TEST

static void register_h3(void)
{
    ctl_resp r = call("POST", "/api/v1/agents", REG_H3, &T_AGENT);
    json_object_put(expect_json(&r, 200));
}

static json_object *agent_h3(void)
{
    ctl_resp r = call("GET", "/api/v1/agents/h3", NULL, &T_READER);
    return expect_json(&r, 200);
}

/* A report with every new member is taken whole and summed up: the peers' counters added
 * (saturating), NACK reasons and EV states by name, what it holds and left out; the next report
 * replaces the summary. */
START_TEST(test_ctl_agents_report_fields)
{
    register_h3();
    static const char full[] =
        "{\"host\":\"h3\",\"interval_s\":10,\"time\":\"2026-11-30T02:00:00.250Z\","
        "\"evs\":[{\"peer\":\"h5\",\"ev\":0,\"sent\":1000,\"lost\":2,\"state\":\"good\","
        "\"retx\":2,\"acked\":998,\"timeouts\":1,\"ecn\":4,\"trims\":1,\"transitions\":2,"
        "\"probes_sent\":3,\"probes_ok\":3,\"rtt_ns\":8000,\"probe_rtt_ns\":7000,"
        "\"nacks\":{\"trimmed\":1,\"no_bitmap\":0},\"path\":\"fcbb:bb00:2001:4000:2002:6001::\"},"
        "{\"peer\":\"h7\",\"ev\":1,\"sent\":5,\"lost\":0}],"
        "\"peers\":[{\"peer\":\"h5\",\"qps\":2,\"data_pkts_sent\":1000,\"data_bytes_sent\":"
        "9223372036854775807,\"retx_pkts\":2,\"sacks_rcvd\":500,\"nacks_rcvd\":{\"trimmed\":1,"
        "\"unexp_event\":2},\"timeouts\":1,\"ecn_echoes\":4,\"ev_states\":{\"good\":250,"
        "\"skip\":4,\"assumed_bad\":2}},"
        "{\"peer\":\"h7\",\"qps\":1,\"data_bytes_sent\":5,\"nacks_rcvd\":{\"trimmed\":3},"
        "\"ev_states\":{\"good\":256,\"denied\":1}}],"
        "\"transitions\":[{\"time\":1800000000000000000,\"peer\":\"h5\",\"ev\":0,"
        "\"from\":\"good\",\"to\":\"skip\",\"reason\":\"ecn\"},{\"time\":1800000000000000001,"
        "\"peer\":\"h5\",\"ev\":0,\"from\":\"skip\",\"to\":\"good\",\"reason\":\"rotation\"}],"
        "\"deny_floor\":{\"peers\":1,\"evs\":32,\"entered\":2},"
        "\"truncated\":{\"peers\":0,\"evs\":12,\"transitions\":3}}";
    ctl_resp r = call("POST", "/api/v1/reports", full, &T_AGENT);
    ck_assert_msg(r.status == 202, "%d %s", r.status, r.body);
    free(r.body);
    ck_assert_uint_eq(ctl_health_ingested(ctx.health), 1);
    json_object
        *j = agent_h3(),
        *rep = member(j, "report"),
        *want = json_tokener_parse(
            "{\"time\":\"2026-11-30T02:00:00.250Z\",\"interval_s\":10,\"evs\":2,\"peers\":2,"
            "\"transitions\":2,\"truncated\":{\"peers\":0,\"evs\":12,\"transitions\":3},"
            "\"totals\":{\"qps\":3,\"data_pkts_sent\":1000,\"data_bytes_sent\":9223372036854775807,"
            "\"retx_pkts\":2,\"sacks_rcvd\":500,\"timeouts\":1,\"ecn_echoes\":4,\"nacks_rcvd\":{"
            "\"trimmed\":4,\"trimmed_lasthop\":0,\"no_bitmap\":0,\"no_pkt_buffer\":0,"
            "\"no_resource\":0,\"psn_oor_window\":0,\"unexp_event\":2},\"ev_states\":{\"good\":506,"
            "\"skip\":4,\"assumed_bad\":2,\"denied\":1}}}");
    ck_assert_int_eq(int_of(j, "reports"), 1);
    const char *received = json_object_get_string(member(rep, "received"));
    ck_assert(ctl_time_parse(received) > 0);
    ck_assert_str_eq(json_object_get_string(member(j, "last_seen")), received);
    json_object_object_del(rep, "received");
    /* the floor is the agent's, beside its registration, in the listing as well */
    ck_assert_str_eq(json_object_to_json_string(member(j, "deny_floor")),
                     "{ \"peers\": 1, \"evs\": 32, \"entered\": 2 }");
    r = call("GET", "/api/v1/agents", NULL, &T_READER);
    json_object *list = expect_json(&r, 200);
    json_object *item = json_object_array_get_idx(member(list, "items"), 0);
    ck_assert_str_eq(json_object_get_string(member(item, "host")), "h3");
    ck_assert_int_eq(int_of(member(item, "deny_floor"), "evs"), 32);
    json_object_put(list);
    ck_assert_msg(json_object_equal(rep, want), "got  %s\nwant %s", json_object_to_json_string(rep),
                  json_object_to_json_string(want));
    json_object_put(want);
    json_object_put(j);

    /* today's bare report: its time is when it came */
    r = call("POST", "/api/v1/reports",
             "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h5\",\"ev\":0,\"sent\":10,\"lost\":0}]}",
             &T_AGENT);
    ck_assert_int_eq(r.status, 202);
    free(r.body);
    j = agent_h3();
    rep = member(j, "report");
    ck_assert_int_eq(int_of(j, "reports"), 2);
    ck_assert_str_eq(json_object_get_string(member(rep, "time")),
                     json_object_get_string(member(rep, "received")));
    ck_assert(!json_object_object_get_ex(rep, "interval_s", NULL));
    ck_assert(!json_object_object_get_ex(rep, "truncated", NULL));
    ck_assert(!json_object_object_get_ex(j, "deny_floor", NULL)); /* off the floor */
    ck_assert_int_eq(int_of(rep, "evs"), 1);
    ck_assert_int_eq(int_of(rep, "peers"), 0);
    ck_assert_int_eq(int_of(member(rep, "totals"), "qps"), 0);
    json_object_put(j);
}
END_TEST

/* Each bad report is refused whole with the status of its fault: nothing reaches the health
 * engine and the agent was not heard from. */
START_TEST(test_ctl_agents_report_bad)
{
#define R(rest)                                                                                    \
    "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h5\",\"ev\":0,\"sent\":10,\"lost\":0}]" rest "}"
#define E(ev) "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h5\",\"ev\":0,\"sent\":10,\"lost\":0," ev "}]}"
#define PEER(x) R(",\"peers\":[{\"peer\":\"h5\"," x "}]")
#define T(x) R(",\"transitions\":[" x "]")
#define TR(more) "{\"time\":1,\"peer\":\"h5\",\"ev\":0,\"from\":\"good\"" more "}"
    static const struct {
        int status;
        const char *body, *needle;
    } bad[] = {
        {400, R(",\"interval_s\":0"), "'interval_s'"},
        {400, R(",\"interval_s\":86401"), "'interval_s'"},
        {400, R(",\"interval_s\":\"10\""), "'interval_s'"},
        {400, R(",\"interval_s\":1.5"), "'interval_s'"},
        {400, R(",\"time\":\"2026-13-01T00:00:00Z\""), "'time'"},
        {400, R(",\"time\":\"2026-02-30T00:00:00Z\""), "'time'"},
        {400, R(",\"time\":\"2026-01-01T00:00:00+01:00\""), "'time'"},
        {400, R(",\"time\":1800000000"), "'time'"},
        {400, E("\"retx\":-1"), "evs[0]: 'retx'"},
        {400, E("\"acked\":\"3\""), "evs[0]: 'acked'"},
        {400, E("\"rtt_ns\":1.5"), "evs[0]: 'rtt_ns'"},
        {400, E("\"probes_ok\":9223372036854775808"), "evs[0]: 'probes_ok'"},
        {400, E("\"nacks\":{\"bogus\":1}"), "evs[0]: 'nacks'"},
        {400, E("\"nacks\":{\"trimmed\":-1}"), "evs[0]: 'nacks'"},
        {400, E("\"nacks\":[1]"), "evs[0]: 'nacks'"},
        {400, E("\"path\":\"\""), "evs[0]: 'path'"},
        {400, E("\"path\":7"), "evs[0]: 'path'"},
        {400, E("\"state\":\"sideways\""), "evs[0]: 'state'"},
        {400, E("\"state\":2"), "evs[0]: 'state'"},
        {400, R(",\"peers\":{}"), "'peers'"},
        {400, R(",\"peers\":[{\"qps\":1}]"), "peers[0]"},
        {400, R(",\"peers\":[7]"), "peers[0]"},
        {400, PEER("\"colour\":1"), "unknown member 'colour'"},
        {400, PEER("\"qps\":-1"), "peers[0]: 'qps'"},
        {400, PEER("\"data_bytes_sent\":1e3"), "peers[0]: 'data_bytes_sent'"},
        {400, PEER("\"nacks_rcvd\":{\"x\":1}"), "peers[0]: 'nacks_rcvd'"},
        {400, PEER("\"ev_states\":{\"bad\":1}"), "peers[0]: 'ev_states'"},
        {400, PEER("\"ev_states\":{\"good\":-1}"), "peers[0]: 'ev_states'"},
        {400, PEER("\"ev_states\":[]"), "peers[0]: 'ev_states'"},
        {400, R(",\"peers\":[{\"peer\":\"h5\"},{\"peer\":\"h7\"},{\"peer\":\"h5\"}]"),
         "'h5' is listed twice"},
        {400, R(",\"transitions\":{}"), "'transitions'"},
        {400, T(TR(",\"to\":\"assumed_bad\"")), "transitions[0]"},
        {400, T(TR(",\"to\":\"broken\",\"reason\":\"loss\"")), "transitions[0]"},
        {400, T(TR(",\"to\":\"skip\",\"reason\":\"bogus\"")), "transitions[0]"},
        {400, T(TR(",\"to\":\"skip\",\"reason\":\"ecn\",\"qpn\":3")), "transitions[0]"},
        {400, T(TR(",\"to\":\"good\",\"reason\":\"ecn\"")), "'from' and 'to' are both good"},
        {400,
         T("{\"time\":-1,\"peer\":\"h5\",\"ev\":0,\"from\":\"good\",\"to\":\"skip\","
           "\"reason\":\"ecn\"}"),
         "transitions[0]"},
        {400,
         T("{\"time\":1,\"peer\":\"h5\",\"ev\":4294967296,\"from\":\"good\",\"to\":\"skip\","
           "\"reason\":\"ecn\"}"),
         "transitions[0]"},
        {400, R(",\"truncated\":[]"), "'truncated'"},
        {400, R(",\"truncated\":{\"qps\":1}"), "'truncated'"},
        {400, R(",\"truncated\":{\"evs\":-1}"), "'truncated'"},
        {400, R(",\"deny_floor\":[]"), "'deny_floor' must be an object"},
        {400, R(",\"deny_floor\":{\"qps\":1}"), "'deny_floor'"},
        {400, R(",\"deny_floor\":{\"peers\":-1}"), "'deny_floor'"},
        {400, R(",\"deny_floor\":{\"evs\":1.5}"), "'deny_floor'"},
        {400, "{\"host\":\"h3\"}", "'evs'"},
        {422, PEER("\"qps\":1},{\"peer\":\"h99\""), "peers[1]: 'h99' is no host"},
        {422,
         T("{\"time\":1,\"peer\":\"h99\",\"ev\":0,\"from\":\"good\",\"to\":\"skip\","
           "\"reason\":\"ecn\"}"),
         "transitions[0]: 'h99' is no host"},
        {422,
         T("{\"time\":1,\"peer\":\"h5\",\"ev\":4294967295,\"from\":\"good\",\"to\":\"skip\","
           "\"reason\":\"ecn\"}"),
         "transitions[0]: the EV names no plane"},
        {422, "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h99\",\"ev\":0}]}", "evs[0]"},
    };
#undef TR
#undef T
#undef PEER
#undef E
#undef R
    register_h3();
    json_object *before = agent_h3();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ctl_resp r = call("POST", "/api/v1/reports", bad[i].body, &T_AGENT);
        ck_assert_msg(r.status == bad[i].status, "%s: %d, want %d: %s", bad[i].body, r.status,
                      bad[i].status, r.body);
        expect_problem(&r, bad[i].status, "/api/v1/reports", bad[i].needle);
    }
    ck_assert_uint_eq(ctl_health_ingested(ctx.health), 0);
    ck_assert_uint_eq(atomic_load(&ctx.metrics.reports), 0);
    json_object *after = agent_h3();
    ck_assert_msg(json_object_equal(before, after), "%s\nbecame %s",
                  json_object_to_json_string(before), json_object_to_json_string(after));
    json_object_put(before);
    json_object_put(after);
}
END_TEST

/* The bounds: 4096 EVs, 1024 peers, 256 transitions; one more is refused. */
START_TEST(test_ctl_agents_report_bounds)
{
    static const struct {
        const char *key, *item;
        int max;
    } arrays[] = {
        {"evs", "{\"peer\":\"h5\",\"ev\":0,\"sent\":1,\"lost\":0}", 4096},
        {"transitions",
         "{\"time\":1,\"peer\":\"h5\",\"ev\":0,\"from\":\"good\",\"to\":\"skip\",\"reason\":"
         "\"ecn\"}",
         256},
        {"peers", "{\"peer\":\"h5\"}", 1024},
    };
    for (size_t k = 0; k < 3; k++) {
        for (int n = arrays[k].max; n <= arrays[k].max + 1; n++) {
            size_t cap = (size_t)(n + 1) * (strlen(arrays[k].item) + 1) + 200;
            char *body = malloc(cap), *p = body;
            p += sprintf(p, "{\"host\":\"h3\",%s\"%s\":[", k ? "\"evs\":[]," : "", arrays[k].key);
            for (int i = 0; i < n; i++) {
                p += sprintf(p, "%s%s", i ? "," : "", arrays[k].item);
            }
            strcpy(p, "]}");
            ctl_resp r = call("POST", "/api/v1/reports", body, &T_AGENT);
            char want[64];
            snprintf(want, sizeof(want), "at most %d", arrays[k].max);
            if (n > arrays[k].max) {
                expect_problem(&r, 400, "/api/v1/reports", want);
            } else if (k == 2) {
                /* so many distinct peers the lab has not: the bound passed, the repeat not */
                expect_problem(&r, 400, "/api/v1/reports", "listed twice");
            } else {
                ck_assert_msg(r.status == 202, "%s %d: %d %s", arrays[k].key, n, r.status, r.body);
                free(r.body);
            }
            free(body);
        }
    }
}
END_TEST

/* An agent's token, and a prober node's, reports for its own host only; no other role reports
 * (the localizer posts its evidence to /api/v1/probes); a host that never registered may
 * report, and is still not listed. */
START_TEST(test_ctl_agents_report_host)
{
    static const char h5[] =
        "{\"host\":\"h5\",\"evs\":[{\"peer\":\"h3\",\"ev\":0,\"sent\":10,\"lost\":0}]}";
    ctl_resp r = call("POST", "/api/v1/reports", h5, &T_AGENT);
    expect_problem(&r, 403, "/api/v1/reports", "may report only as 'h3', not as 'h5'");
    ck_assert_uint_eq(ctl_health_ingested(ctx.health), 0);
    r = call("POST", "/api/v1/reports", h5, &T_PROBER); /* the node of 'pat' */
    expect_problem(&r, 403, "/api/v1/reports", "may report only as 'pat', not as 'h5'");
    r = call("POST", "/api/v1/reports", h5, &T_AGENT5);
    ck_assert_msg(r.status == 202, "%d %s", r.status, r.body);
    free(r.body);
    const util_token *no[] = {&T_READER, &T_LOCAL, &T_OPER, &T_ADMIN};
    for (size_t i = 0; i < 4; i++) {
        r = call("POST", "/api/v1/reports", h5, no[i]);
        expect_problem(&r, 403, "/api/v1/reports", "it takes agent, prober");
    }
    ck_assert_uint_eq(ctl_health_ingested(ctx.health), 1);
    r = call("GET", "/api/v1/agents/h5", NULL, &T_READER);
    expect_problem(&r, 404, "/api/v1/agents/h5", "has not registered");
    /* once it registers, the report it sent before is its latest */
    r = call("POST", "/api/v1/agents", REG_H5, &T_AGENT5);
    json_object_put(expect_json(&r, 200));
    r = call("GET", "/api/v1/agents/h5", NULL, &T_READER);
    json_object *j = expect_json(&r, 200);
    ck_assert_int_eq(int_of(j, "reports"), 1);
    ck_assert_int_eq(int_of(member(j, "report"), "evs"), 1);
    json_object_put(j);
}
END_TEST

/* The assumed_bad EVs the health engine counted on host port |link| (h3:0 ...) in direction
 * |dir|, 0 when it has no evidence. */
static int64_t bad_evs(const char *link, const char *dir)
{
    ctl_link_filter f = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    json_object *page = ctl_health_links(ctx.health, &f, 1800000000000), *items;
    int64_t n = 0;
    ck_assert(json_object_object_get_ex(page, "items", &items));
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i);
        if (strcmp(json_object_get_string(member(it, "link")), link) == 0) {
            n = int_of(member(it, dir), "assumed_bad_evs");
        }
    }
    json_object_put(page);
    return n;
}

static int report(const char *body, int64_t now)
{
    char why[256] = "";
    json_object *o = json_tokener_parse(body);
    ck_assert_msg(o != NULL, "not JSON: %s", body);
    int status = ctl_health_report(ctx.health, o, "h3", now, why, sizeof(why));
    json_object_put(o);
    return status;
}

/* Transitions into assumed_bad for loss or a timeout count as an EV in that state on the links
 * of its path, once per EV, whether the report lists the EV or not; other transitions (ECN,
 * trims, always_skip, recoveries) do not. */
START_TEST(test_ctl_agents_transitions_evidence)
{
    const fab_plan *plan = fab_topo_plan(topo);
    uint32_t e00 = fab_ev_make(plan, 0, 0, 1), e01 = fab_ev_make(plan, 0, 1, 1),
             e10 = fab_ev_make(plan, 1, 0, 1), e11 = fab_ev_make(plan, 1, 1, 1);
    int64_t now = 1800000000000;
    char body[2048];
    snprintf(body, sizeof(body),
             "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h5\",\"ev\":%u,\"sent\":100,\"lost\":0,"
             "\"state\":\"good\"}],\"transitions\":["
             "{\"time\":1,\"peer\":\"h5\",\"ev\":%u,\"from\":\"good\",\"to\":\"assumed_bad\","
             "\"reason\":\"loss\"},"
             "{\"time\":2,\"peer\":\"h5\",\"ev\":%u,\"from\":\"assumed_bad\",\"to\":\"good\","
             "\"reason\":\"probe_ok\"},"
             "{\"time\":3,\"peer\":\"h5\",\"ev\":%u,\"from\":\"good\",\"to\":\"assumed_bad\","
             "\"reason\":\"loss\"},"
             "{\"time\":4,\"peer\":\"h5\",\"ev\":%u,\"from\":\"good\",\"to\":\"assumed_bad\","
             "\"reason\":\"timeout\"},"
             "{\"time\":5,\"peer\":\"h5\",\"ev\":%u,\"from\":\"good\",\"to\":\"assumed_bad\","
             "\"reason\":\"always_skip\"},"
             "{\"time\":6,\"peer\":\"h5\",\"ev\":%u,\"from\":\"good\",\"to\":\"skip\","
             "\"reason\":\"trim\"},"
             "{\"time\":7,\"peer\":\"h5\",\"ev\":%u,\"from\":\"good\",\"to\":\"assumed_bad\","
             "\"reason\":\"loss\"}]}",
             e00, e00, e00, e00, e01, e10, e11, e01);
    ck_assert_int_eq(report(body, now), 0);
    /* e00 once (listed, went bad twice) and e01 once (not listed, went bad twice) on h3's
     * plane-0 uplink */
    ck_assert_int_eq(bad_evs("h3:0", "up"), 2);
    ck_assert_int_eq(bad_evs("h5:0", "down"), 2);
    ck_assert_int_eq(bad_evs("p0-t0-1~p0-t1-0", "up"), 1);
    ck_assert_int_eq(bad_evs("p0-t0-1~p0-t1-1", "up"), 1);
    ck_assert_int_eq(bad_evs("h3:1", "up"), 0);
    /* an EV reported assumed_bad that also went there counts once */
    snprintf(body, sizeof(body),
             "{\"host\":\"h3\",\"evs\":[{\"peer\":\"h5\",\"ev\":%u,\"sent\":100,\"lost\":5,"
             "\"state\":\"assumed_bad\"}],\"transitions\":[{\"time\":1,\"peer\":\"h5\",\"ev\":%u,"
             "\"from\":\"good\",\"to\":\"assumed_bad\",\"reason\":\"loss\"}]}",
             e10, e10);
    ck_assert_int_eq(report(body, now), 0);
    ck_assert_int_eq(bad_evs("h3:1", "up"), 1);
    ck_assert_uint_eq(ctl_health_ingested(ctx.health), 2);

    /* what the health engine refuses of transitions on its own, counting nothing */
    static const struct {
        int status;
        const char *body;
    } bad[] = {
        {400, "{\"host\":\"h3\",\"evs\":[],\"transitions\":7}"},
        {400, "{\"host\":\"h3\",\"evs\":[],\"transitions\":[{\"peer\":\"h5\",\"ev\":0}]}"},
        {400, "{\"host\":\"h3\",\"evs\":[],\"transitions\":[{\"peer\":\"h5\",\"ev\":-1,\"to\":"
              "\"skip\",\"reason\":\"ecn\"}]}"},
        {422, "{\"host\":\"h3\",\"evs\":[],\"transitions\":[{\"peer\":\"h99\",\"ev\":0,\"to\":"
              "\"assumed_bad\",\"reason\":\"loss\"}]}"},
        {422, "{\"host\":\"h3\",\"evs\":[],\"transitions\":[{\"peer\":\"h5\",\"ev\":4294967295,"
              "\"to\":\"assumed_bad\",\"reason\":\"timeout\"}]}"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(report(bad[i].body, now) == bad[i].status, "%s", bad[i].body);
    }
    ck_assert_uint_eq(ctl_health_ingested(ctx.health), 2);
    ck_assert_int_eq(bad_evs("h3:0", "up"), 2);
}
END_TEST

Suite *ctl_agents_suite(void)
{
    Suite *s = suite_create("agents");
    TCase *tc = tcase_create("agents");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ctl_agents_register_list_one);
    tcase_add_test(tc, test_ctl_agents_register_roles);
    tcase_add_test(tc, test_ctl_agents_register_bad_bodies);
    tcase_add_test(tc, test_ctl_agents_persist);
    tcase_add_test(tc, test_ctl_agents_stale_and_metrics);
    tcase_add_test(tc, test_ctl_agents_report_fields);
    tcase_add_test(tc, test_ctl_agents_report_bad);
    tcase_add_test(tc, test_ctl_agents_report_bounds);
    tcase_add_test(tc, test_ctl_agents_report_host);
    tcase_add_test(tc, test_ctl_agents_transitions_evidence);
    suite_add_tcase(s, tc);
    return s;
}
