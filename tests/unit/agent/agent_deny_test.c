/* SPDX-License-Identifier: MIT */
/* The agent's denylist against a brute force that walks each EV's path (fab_path_of_ev) and
 * compares every hop, link and host port by name with the entries: every host pair, plane, T1
 * and a few salts of the lab fabric and of one with missing cables, for a T1, a T0, links and
 * host ports in each scope; then the body's shape, the entries it skips, and speed. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_deny.h"
#include "util.h"

#define LAB AGENT_TEST_ROOT "/deploy/topologies/lab.json"
#define SMALL AGENT_TEST_ROOT "/tests/unit/fabric/data/small.json"
#define FULL AGENT_TEST_ROOT "/deploy/topologies/full.json"
#define DATA AGENT_TEST_ROOT "/tests/unit/agent/data"

static fab_topo *load(const char *path)
{
    fab_topo *t;
    fab_error err;
    ck_assert_msg(fab_topo_load_file(path, &t, &err) == 0, "%s: %s", path, err.msg);
    return t;
}

/* One entry as the test writes it. */
typedef struct ent {
    const char *element, *scope;
    bool active;
} ent;

/* The body GET /api/v1/denylist would give for |v|. */
static char *body_of(uint64_t version, const ent *v, size_t n)
{
    util_buf b = {0};
    util_buf_printf(&b, "{\"version\":%llu,\"entries\":[", (unsigned long long)version);
    for (size_t i = 0; i < n; i++) {
        util_buf_printf(&b,
                        "%s{\"id\":%zu,\"element\":\"%s\",\"scope\":\"%s\",\"reason\":\"test\","
                        "\"source\":\"operator\",\"author\":\"t\",\"created\":"
                        "\"2026-01-01T00:00:00.000Z\",\"active\":%s}",
                        i ? "," : "", i + 1, v[i].element, v[i].scope,
                        v[i].active ? "true" : "false");
    }
    util_buf_printf(&b, "]}");
    return b.s;
}

static agent_deny *parse_ok(const fab_topo *t, const char *body)
{
    agent_deny *set = NULL;
    char err[256] = "";
    int rv = agent_deny_parse(t, body, strlen(body), &set, err, sizeof(err));
    ck_assert_msg(rv == 0, "parse: %d %s", rv, err);
    ck_assert_ptr_nonnull(set);
    return set;
}

static unsigned dirs_of(const char *scope)
{
    return strcmp(scope, "up") == 0 ? 1 : strcmp(scope, "down") == 0 ? 2 : 3;
}

static const char *sw_name(const fab_topo *t, uint32_t sw)
{
    fab_switch s;
    ck_assert_int_eq(fab_switch_get(t, sw, &s), 0);
    return s.name;
}

/* Whether an active entry of |v| names link T0 |t0| – T1 |t1| (either order) in |dir|. */
static bool names_link(const fab_topo *t, const ent *v, size_t n, uint32_t t0, uint32_t t1,
                       unsigned dir)
{
    char x[160], y[160];
    snprintf(x, sizeof(x), "%s~%s", sw_name(t, t0), sw_name(t, t1));
    snprintf(y, sizeof(y), "%s~%s", sw_name(t, t1), sw_name(t, t0));
    for (size_t i = 0; i < n; i++) {
        if (v[i].active && (dirs_of(v[i].scope) & dir) &&
            (strcmp(v[i].element, x) == 0 || strcmp(v[i].element, y) == 0)) {
            return true;
        }
    }
    return false;
}

static bool names(const ent *v, size_t n, const char *name, unsigned dir)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].active && (dirs_of(v[i].scope) & dir) && strcmp(v[i].element, name) == 0) {
            return true;
        }
    }
    return false;
}

/* The rule by hand: the EV's path hop by hop, each switch whole, the first link up, the last
 * link down, the sender's port up and the receiver's port down. An EV with no path is
 * denied. */
static bool brute(const fab_topo *t, const ent *v, size_t n, uint32_t src, uint32_t dst,
                  uint32_t ev)
{
    fab_path path;
    if (fab_path_of_ev(t, src, dst, ev, &path) != 0) {
        return true;
    }
    for (unsigned h = 0; h < path.nhops; h++) {
        if (names(v, n, sw_name(t, path.hops[h]), 3)) {
            return true;
        }
    }
    if (path.nhops == 3 && (names_link(t, v, n, path.hops[0], path.hops[1], 1) ||
                            names_link(t, v, n, path.hops[2], path.hops[1], 2))) {
        return true;
    }
    char sp[96], dp[96];
    snprintf(sp, sizeof(sp), "%s:%u", fab_host_name(t, src), path.plane);
    snprintf(dp, sizeof(dp), "%s:%u", fab_host_name(t, dst), path.plane);
    return names(v, n, sp, 1) || names(v, n, dp, 2);
}

/* Every host pair, plane (and one past), T1 (and one past) and three salts. Returns how many
 * EVs the list denied, so a caller can see that it denied something. */
static unsigned compare_all(const fab_topo *t, const ent *v, size_t n)
{
    char *body = body_of(7, v, n);
    agent_deny *set = parse_ok(t, body);
    const fab_plan *plan = fab_topo_plan(t);
    static const uint32_t salts[] = {0, 1, 0x2abcd};
    uint32_t nh = fab_topo_nhosts(t);
    unsigned denied = 0;
    for (uint32_t s = 0; s < nh; s++) {
        for (uint32_t d = 0; d < nh; d++) {
            for (unsigned p = 0; p <= fab_topo_planes(t); p++) {
                uint32_t nt1 = p < fab_topo_planes(t) ? fab_topo_nt1(t, p) : 1;
                for (unsigned j = 0; j <= nt1; j++) {
                    for (size_t k = 0; k < sizeof(salts) / sizeof(salts[0]); k++) {
                        uint32_t ev = fab_ev_make(plan, p, j, salts[k]);
                        bool want = brute(t, v, n, s, d, ev), got = agent_deny_ev(set, s, d, ev);
                        ck_assert_msg(
                            got == want, "%s -> %s EV %u (plane %u, T1 %u): agent %d, brute %d",
                            fab_host_name(t, s), fab_host_name(t, d), ev, p, j, got, want);
                        denied += got && s != d && p < fab_topo_planes(t) && j < nt1;
                    }
                }
            }
        }
    }
    agent_deny_free(set);
    free(body);
    return denied;
}

START_TEST(test_agent_deny_lab_brute)
{
    fab_topo *t = load(LAB);
    static const ent lists[][4] = {
        {{"p0-t1-1", "both", true}},
        {{"p1-t0-2", "both", true}},
        {{"p0-t0-1~p0-t1-0", "up", true}},
        {{"p0-t1-1~p0-t0-3", "down", true}},
        {{"p1-t0-0~p1-t1-1", "both", true}},
        {{"h2:0", "up", true}},
        {{"h5:1", "down", true}},
        {{"h7:0", "both", true}},
        /* a switch is denied whole, whatever scope a body gives it */
        {{"p1-t1-0", "up", true}},
        {{"p0-t0-0", "down", true}},
        /* an inactive entry denies nothing */
        {{"p0-t0-0", "both", false}, {"h1:1", "both", false}},
        {{"p0-t1-0", "both", true},
         {"p0-t0-2~p0-t1-1", "up", true},
         {"h3:0", "down", true},
         {"p1-t0-3", "both", true}},
        {{"h0:0", "up", true}, {"h0:0", "down", true}, {"p1-t0-1~p1-t1-0", "down", true}},
    };
    static const size_t sizes[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 3};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned denied = compare_all(t, lists[i], sizes[i]);
        ck_assert_msg((denied > 0) == lists[i][0].active, "list %zu denied %u EVs", i, denied);
    }
    ck_assert_uint_eq(compare_all(t, NULL, 0), 0);
    fab_topo_free(t);
}
END_TEST

/* Missing cables: a T0 short of an uplink, a host short of a port. */
START_TEST(test_agent_deny_small_brute)
{
    fab_topo *t = load(SMALL);
    static const ent lists[][3] = {
        {{"p0-t1-1", "both", true}},
        {{"p1-t0-2", "both", true}},
        {{"p0-t0-2~p0-t1-0", "up", true}, {"p1-t1-1~p1-t0-0", "down", true}},
        {{"p0-t0-0~p0-t1-1", "both", true}, {"h5:0", "up", true}, {"h9:1", "down", true}},
        {{"h4:0", "both", true}, {"p1-t1-0", "both", true}},
    };
    static const size_t sizes[] = {1, 1, 2, 3, 2};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        ck_assert_uint_gt(compare_all(t, lists[i], sizes[i]), 0);
    }
    fab_topo_free(t);
}
END_TEST

/* Hand-checked cases of the direction rule on lab (two hosts per T0: h0, h1 under T0 0). */
START_TEST(test_agent_deny_directions)
{
    fab_topo *t = load(LAB);
    const fab_plan *plan = fab_topo_plan(t);
    uint32_t sw;
    unsigned port;
    fab_switch s;
    ck_assert_int_eq(fab_host_attach(t, 2, 0, &sw, &port), 0);
    ck_assert_int_eq(fab_switch_get(t, sw, &s), 0);
    ck_assert_uint_eq(s.index, 1); /* h2 is under T0 1 */
    uint32_t ev00 = fab_ev_make(plan, 0, 0, 5), ev01 = fab_ev_make(plan, 0, 1, 5);
    uint32_t ev10 = fab_ev_make(plan, 1, 0, 5);

    static const ent up[] = {{"p0-t0-1~p0-t1-0", "up", true}};
    char *body = body_of(1, up, 1);
    agent_deny *set = parse_ok(t, body);
    ck_assert(agent_deny_ev(set, 2, 0, ev00));  /* h2 sends up the link */
    ck_assert(!agent_deny_ev(set, 2, 0, ev01)); /* another T1 */
    ck_assert(!agent_deny_ev(set, 0, 2, ev00)); /* h0's data comes down it: not denied */
    ck_assert(!agent_deny_ev(set, 2, 0, ev10)); /* another plane */
    ck_assert(!agent_deny_ev(set, 2, 3, ev00)); /* h2 -> h3 is T0-local */
    agent_deny_free(set);
    free(body);

    static const ent port_down[] = {{"h2:0", "down", true}};
    body = body_of(2, port_down, 1);
    set = parse_ok(t, body);
    ck_assert(agent_deny_ev(set, 0, 2, ev00));
    ck_assert(agent_deny_ev(set, 3, 2, ev01)); /* T0-local, still the port */
    ck_assert(!agent_deny_ev(set, 2, 0, ev00));
    ck_assert(!agent_deny_ev(set, 0, 2, ev10));
    agent_deny_free(set);
    free(body);

    /* a T1 never denies a T0-local path; the T0 does */
    static const ent t1[] = {{"p0-t1-0", "both", true}};
    body = body_of(3, t1, 1);
    set = parse_ok(t, body);
    ck_assert(!agent_deny_ev(set, 0, 1, ev00));
    ck_assert(agent_deny_ev(set, 0, 2, ev00));
    agent_deny_free(set);
    free(body);
    static const ent t0[] = {{"p0-t0-0", "both", true}};
    body = body_of(4, t0, 1);
    set = parse_ok(t, body);
    ck_assert(agent_deny_ev(set, 0, 1, ev00));
    ck_assert(agent_deny_ev(set, 2, 0, ev01));
    ck_assert(!agent_deny_ev(set, 2, 4, ev01));
    agent_deny_free(set);
    free(body);

    /* EVs that name no path */
    set = parse_ok(t, "{\"version\":0,\"entries\":[]}");
    ck_assert(!agent_deny_ev(set, 0, 2, ev00));
    ck_assert(agent_deny_ev(set, 0, 0, ev00));                       /* itself */
    ck_assert(agent_deny_ev(set, 0, 99, ev00));                      /* no such host */
    ck_assert(agent_deny_ev(set, 0, 2, fab_ev_make(plan, 0, 2, 0))); /* no T1 2 */
    ck_assert(agent_deny_ev(set, 0, 2, fab_ev_make(plan, 2, 0, 0))); /* no plane 2 */
    agent_deny_free(set);
    fab_topo_free(t);
}
END_TEST

/* The real controller's body (tests/unit/agent/data/denylist_lab.json): a T1, a link up, a host
 * port down, a window not yet open, and a link in an open window. */
START_TEST(test_agent_deny_controller_body)
{
    fab_topo *t = load(LAB);
    char *data;
    size_t len;
    ck_assert_int_eq(util_read_file(DATA "/denylist_lab.json", &data, &len), 0);
    agent_deny *set = NULL;
    char err[256];
    ck_assert_int_eq(agent_deny_parse(t, data, len, &set, err, sizeof(err)), 0);
    ck_assert_uint_eq(agent_deny_version(set), 5);
    agent_deny_counts c;
    agent_deny_counts_get(set, &c);
    ck_assert_uint_eq(c.entries, 5);
    ck_assert_uint_eq(c.applied, 4);
    ck_assert_uint_eq(c.inactive, 1);
    ck_assert_uint_eq(c.skipped, 0);
    ck_assert_str_eq(agent_deny_first_skipped(set), "");
    static const ent same[] = {{"p1-t1-0", "both", true},
                               {"p0-t0-1~p0-t1-1", "up", true},
                               {"h6:0", "down", true},
                               {"p0-t0-3", "both", false},
                               {"p1-t0-2~p1-t1-1", "down", true}};
    const fab_plan *plan = fab_topo_plan(t);
    for (uint32_t s = 0; s < fab_topo_nhosts(t); s++) {
        for (uint32_t d = 0; d < fab_topo_nhosts(t); d++) {
            for (unsigned p = 0; p < 2; p++) {
                for (unsigned j = 0; j < 2; j++) {
                    uint32_t ev = fab_ev_make(plan, p, j, 77);
                    ck_assert(agent_deny_ev(set, s, d, ev) == brute(t, same, 5, s, d, ev));
                }
            }
        }
    }
    agent_deny_free(set);
    free(data);
    fab_topo_free(t);
}
END_TEST

/* Elements this fabric does not know are skipped and counted; the rest still apply. */
START_TEST(test_agent_deny_unknown_skipped)
{
    fab_topo *t = load(LAB);
    static const ent v[] = {
        {"p5-t1-0", "both", true},         /* no plane 5 */
        {"p0-t1-0", "both", true},         /* known */
        {"p0-t1-7", "both", true},         /* no T1 7 */
        {"h99:0", "up", true},             /* no host */
        {"h1:4", "up", true},              /* no port 4 */
        {"p0-t0-0~p0-t0-1", "both", true}, /* not a T0-T1 link */
        {"p0-t0-0~p1-t1-0", "both", true}, /* not cabled */
        {"something-new", "both", true},   /* a kind of element from the future */
        {"p0-t1-9", "both", false},        /* inactive: not even looked at */
    };
    char *body = body_of(9, v, sizeof(v) / sizeof(v[0]));
    agent_deny *set = parse_ok(t, body);
    agent_deny_counts c;
    agent_deny_counts_get(set, &c);
    ck_assert_uint_eq(c.entries, 9);
    ck_assert_uint_eq(c.applied, 1);
    ck_assert_uint_eq(c.skipped, 7);
    ck_assert_uint_eq(c.inactive, 1);
    ck_assert_str_eq(agent_deny_first_skipped(set), "p5-t1-0");
    const fab_plan *plan = fab_topo_plan(t);
    ck_assert(agent_deny_ev(set, 0, 2, fab_ev_make(plan, 0, 0, 0)));
    ck_assert(!agent_deny_ev(set, 0, 2, fab_ev_make(plan, 0, 1, 0)));
    ck_assert(!agent_deny_ev(set, 0, 2, fab_ev_make(plan, 1, 0, 0)));
    agent_deny_free(set);
    free(body);
    fab_topo_free(t);
}
END_TEST

/* Bodies that are not JSON or not the schema's shape are refused with a sentence, and the
 * caller's set is left alone. */
START_TEST(test_agent_deny_bad_bodies)
{
    fab_topo *t = load(LAB);
    static const struct {
        const char *body, *says;
    } bad[] = {
        {"", "ends early"},
        {"{", "ends early"},
        {"not json", "not JSON"},
        {"{\"version\":1,\"entries\":[]} x", "not JSON: at byte 27"},
        {"{\"version\":1,\"entries\":[]}{}", "not JSON: at byte 26"},
        {"{\"version\":null,\"entries\":[]}", "version has the wrong type"},
        {"{\"version\":1,\"entries\":[],}", "not JSON"},
        {"[]", "must be an object, not an array"},
        {"null", "must be an object"},
        {"{\"entries\":[]}", "version is missing"},
        {"{\"version\":\"3\",\"entries\":[]}", "version has the wrong type"},
        {"{\"version\":1.5,\"entries\":[]}", "version has the wrong type"},
        {"{\"version\":-1,\"entries\":[]}", "version must not be negative"},
        {"{\"version\":1}", "entries is missing"},
        {"{\"version\":1,\"entries\":{}}", "entries has the wrong type"},
        {"{\"version\":1,\"entries\":[3]}", "entries[0] must be an object"},
        {"{\"version\":1,\"entries\":[{\"scope\":\"both\",\"active\":true}]}",
         "entries[0].element is missing"},
        {"{\"version\":1,\"entries\":[{\"element\":7,\"scope\":\"both\",\"active\":true}]}",
         "entries[0].element has the wrong type"},
        {"{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"active\":true}]}",
         "entries[0].scope is missing"},
        {"{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"scope\":\"both\",\"active\":true},"
         "{\"element\":\"h1:0\",\"scope\":\"sideways\",\"active\":true}]}",
         "entries[1].scope must be both, up or down, not 'sideways'"},
        {"{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"scope\":\"up\"}]}",
         "entries[0].active is missing"},
        {"{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"scope\":\"up\",\"active\":1}]}",
         "entries[0].active has the wrong type"},
    };
    agent_deny *keep = parse_ok(t, "{\"version\":1,\"entries\":[]}");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        agent_deny *set = keep;
        char err[256] = "";
        int rv = agent_deny_parse(t, bad[i].body, strlen(bad[i].body), &set, err, sizeof(err));
        ck_assert_msg(rv == -EINVAL, "'%s': %d", bad[i].body, rv);
        ck_assert_ptr_eq(set, keep);
        ck_assert_msg(strstr(err, bad[i].says) && strncmp(err, "denylist body", 13) == 0,
                      "'%s' says '%s', not '%s'", bad[i].body, err, bad[i].says);
    }
    /* a length that stops inside the text: only |len| bytes count */
    const char *whole = "{\"version\":1,\"entries\":[]}";
    agent_deny *set = keep;
    char err[256];
    ck_assert_int_eq(agent_deny_parse(t, whole, strlen(whole) - 1, &set, err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_eq(set, keep);
    /* a NUL inside the body */
    ck_assert_int_eq(
        agent_deny_parse(t, "{\"version\":1,\"entries\":[]}\0x", 29, &set, err, sizeof(err)),
        -EINVAL);
    ck_assert_ptr_eq(set, keep);
    /* white space around the value is fine */
    set = parse_ok(t, " {\"version\":2,\"entries\":[]}\r\n");
    ck_assert_uint_eq(agent_deny_version(set), 2);
    agent_deny_free(set);
    set = keep;
    /* no error buffer */
    ck_assert_int_eq(agent_deny_parse(t, "{", 1, &set, NULL, 0), -EINVAL);
    agent_deny_free(keep);
    fab_topo_free(t);
}
END_TEST

/* The agent judges every EV of every QP on each version: at full scale (131,072 hosts, 256
 * T1s per plane, a few hundred entries) an EV must cost nanoseconds, not a string compare. */
START_TEST(test_agent_deny_speed_full)
{
    fab_topo *t = load(FULL);
    util_buf b = {0};
    util_buf_printf(&b, "{\"version\":3,\"entries\":[");
    for (unsigned i = 0; i < 300; i++) {
        unsigned p = i % 8;
        if (i % 3 == 0) {
            util_buf_printf(&b, "%s{\"element\":\"p%u-t1-%u\",\"scope\":\"both\",\"active\":true}",
                            i ? "," : "", p, i % 256);
        } else if (i % 3 == 1) {
            util_buf_printf(&b,
                            ",{\"element\":\"p%u-t0-%u~p%u-t1-%u\",\"scope\":\"up\",\"active\":"
                            "true}",
                            p, i % 512, p, (i * 7) % 256);
        } else {
            util_buf_printf(&b, ",{\"element\":\"h%u:%u\",\"scope\":\"down\",\"active\":true}",
                            i * 401, p);
        }
    }
    util_buf_printf(&b, "]}");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    agent_deny *set = parse_ok(t, b.s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double parse_ms =
        (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    agent_deny_counts c;
    agent_deny_counts_get(set, &c);
    ck_assert_uint_eq(c.applied, 300);
    const fab_plan *plan = fab_topo_plan(t);
    uint32_t evs[256];
    for (unsigned k = 0; k < 256; k++) {
        evs[k] = fab_ev_make(plan, k % 8, (k * 37) % 256, k);
    }
    uint64_t denied = 0, n = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t peer = 1; peer < 131072; peer += 13) {
        for (unsigned k = 0; k < 256; k++, n++) {
            denied += agent_deny_ev(set, 0, peer, evs[k]);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns =
        ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n;
    printf("agent_deny: parse of 300 entries %.2f ms; %llu EVs judged at %.1f ns each, %llu "
           "denied\n",
           parse_ms, (unsigned long long)n, ns, (unsigned long long)denied);
    ck_assert_uint_gt(denied, 0);
    /* generous for sanitizer builds on a loaded machine: a string compare per entry would be
     * microseconds */
    ck_assert_msg(ns < 500, "%.1f ns per EV", ns);
    agent_deny_free(set);
    free(b.s);
    fab_topo_free(t);
}
END_TEST

Suite *agent_deny_suite(void)
{
    Suite *s = suite_create("deny");
    TCase *tc = tcase_create("deny");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_agent_deny_lab_brute);
    tcase_add_test(tc, test_agent_deny_small_brute);
    tcase_add_test(tc, test_agent_deny_directions);
    tcase_add_test(tc, test_agent_deny_controller_body);
    tcase_add_test(tc, test_agent_deny_unknown_skipped);
    tcase_add_test(tc, test_agent_deny_bad_bodies);
    tcase_add_test(tc, test_agent_deny_speed_full);
    suite_add_tcase(s, tc);
    return s;
}
