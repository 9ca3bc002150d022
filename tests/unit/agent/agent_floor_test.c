/* SPDX-License-Identifier: MIT */
/* The denylist floor on the lab fabric's EV profile from h0 to h2 (two planes, two T1s each,
 * 32 salts: 128 EVs): a deny-everything list keeps a quarter, the least bad; a floor of 0 keeps
 * one EV per floor plane; a plane floor over denied planes keeps the least bad plane; exactly at
 * the floor nothing extra is kept; the settings' checks; the peers' counts and the log, once per
 * transition. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_deny.h"
#include "agent_floor.h"
#include "util.h"

#define LAB AGENT_TEST_ROOT "/deploy/topologies/lab.json"
#define NEV 128

static fab_topo *load(void)
{
    fab_topo *t;
    fab_error err;
    ck_assert_msg(fab_topo_load_file(LAB, &t, &err) == 0, "%s", err.msg);
    return t;
}

/* The profile agent_node builds from h0 to h2 with --evs 128: salt by salt, each of the four
 * paths (plane 0 T1 0, plane 0 T1 1, plane 1 T1 0, plane 1 T1 1). */
static void profile(const fab_topo *t, mrc_ev *evs)
{
    const fab_plan *plan = fab_topo_plan(t);
    for (unsigned i = 0; i < NEV; i++) {
        unsigned path = i % 4, salt = i / 4;
        evs[i] = (mrc_ev){.val = fab_ev_make(plan, path / 2, path % 2, salt),
                          .port = (uint8_t)(path / 2)};
    }
}

/* An entry and its kind: "drain" (the operator's, its reason "drain: ..."), "operator" (the
 * operator's for another reason), "prober", or NULL (no source, a reason "drain"). */
typedef struct ent {
    const char *element, *scope, *kind;
} ent;

static agent_deny *deny_of(const fab_topo *t, const ent *v, size_t n)
{
    util_buf b = {0};
    util_buf_printf(&b, "{\"version\":3,\"entries\":[");
    for (size_t i = 0; i < n; i++) {
        util_buf_printf(&b, "%s{\"element\":\"%s\",\"scope\":\"%s\",\"active\":true", i ? "," : "",
                        v[i].element, v[i].scope);
        const char *k = v[i].kind;
        if (!k) {
            util_buf_printf(&b, ",\"reason\":\"drain\"");
        } else if (strcmp(k, "drain") == 0) {
            util_buf_printf(&b, ",\"source\":\"operator\",\"reason\":\"drain: test\"");
        } else {
            util_buf_printf(&b, ",\"source\":\"%s\",\"reason\":\"loses 3 %%\"", k);
        }
        util_buf_printf(&b, "}");
    }
    util_buf_printf(&b, "]}");
    agent_deny *set = NULL;
    char err[256];
    ck_assert_msg(agent_deny_parse(t, b.s, b.len, &set, err, sizeof(err)) == 0, "%s", err);
    free(b.s);
    return set;
}

static const agent_floor_cfg dflt = {AGENT_FLOOR_FRACTION, AGENT_FLOOR_PLANES};

/* EVs on path |path| (0..3) that |denied| leaves in use. */
static unsigned in_use_on(const bool *denied, unsigned path)
{
    unsigned n = 0;
    for (unsigned i = path; i < NEV; i += 4) {
        n += !denied[i];
    }
    return n;
}

/* Every T1 of both planes denied, by the operator; T1 0 of plane 0 is a failure as well, and
 * plane 1's T1 1 crosses a second drain: a quarter is kept, from the two paths that cross one
 * drain only, salt by salt. */
START_TEST(test_agent_floor_everything_denied)
{
    fab_topo *t = load();
    mrc_ev evs[NEV];
    bool denied[NEV];
    profile(t, evs);
    static const ent v[] = {
        {"p0-t1-0", "both", "drain"},         {"p0-t1-1", "both", "drain"},
        {"p1-t1-0", "both", "drain"},         {"p1-t1-1", "both", "drain"},
        {"p0-t0-0~p0-t1-0", "up", "prober"},  /* h0 is under T0 0 */
        {"p1-t0-1~p1-t1-1", "down", "drain"}, /* h2 is under T0 1 */
    };
    agent_deny *set = deny_of(t, v, sizeof(v) / sizeof(v[0]));
    agent_deny_ev_cost c;
    ck_assert_int_eq(agent_deny_cost(set, 0, 2, evs[0].val, &c), 0);
    ck_assert_uint_eq(c.failures, 1);
    ck_assert_uint_eq(c.drains, 1);
    ck_assert_int_eq(agent_deny_cost(set, 0, 2, evs[3].val, &c), 0);
    ck_assert_uint_eq(c.failures, 0);
    ck_assert_uint_eq(c.drains, 2);
    ck_assert_int_eq(agent_deny_cost(set, 2, 0, evs[3].val, &c), 0); /* the other way: 1 */
    ck_assert_uint_eq(c.drains, 1);
    ck_assert_int_eq(agent_deny_cost(set, 0, 0, evs[3].val, &c), -ENOENT);

    agent_floor_qp q;
    agent_floor_pick(&dflt, set, 0, 2, evs, NEV, denied, &q);
    ck_assert(q.floored);
    ck_assert_uint_eq(q.nevs, NEV);
    ck_assert_uint_eq(q.allowed, 0);
    ck_assert_uint_eq(q.kept, NEV / 4);
    ck_assert_uint_eq(in_use_on(denied, 0), 0);  /* a failure */
    ck_assert_uint_eq(in_use_on(denied, 1), 16); /* one drain */
    ck_assert_uint_eq(in_use_on(denied, 2), 16); /* one drain */
    ck_assert_uint_eq(in_use_on(denied, 3), 0);  /* two drains */
    for (unsigned i = 0; i < NEV; i++) {
        bool first_salts = i / 4 < 16 && (i % 4 == 1 || i % 4 == 2);
        ck_assert_msg(denied[i] == !first_salts, "EV %u", i);
    }
    /* the same list again: the same EVs */
    bool again[NEV];
    agent_floor_pick(&dflt, set, 0, 2, evs, NEV, again, &q);
    ck_assert_mem_eq(again, denied, sizeof(again));

    /* a half, on both planes */
    agent_floor_cfg half = {0.5, 2};
    agent_floor_pick(&half, set, 0, 2, evs, NEV, denied, &q);
    ck_assert_uint_eq(q.kept, 64);
    ck_assert_uint_eq(in_use_on(denied, 1) + in_use_on(denied, 2), 64);
    /* everything */
    agent_floor_cfg all = {1, 1};
    agent_floor_pick(&all, set, 0, 2, evs, NEV, denied, &q);
    ck_assert_uint_eq(q.kept, NEV);
    agent_deny_free(set);
    fab_topo_free(t);
}
END_TEST

/* --deny-floor 0: one EV on each floor plane, never none. */
START_TEST(test_agent_floor_zero)
{
    fab_topo *t = load();
    mrc_ev evs[NEV];
    bool denied[NEV];
    profile(t, evs);
    static const ent v[] = {{"p0-t1-0", "both", "prober"},
                            {"p0-t1-1", "both", "drain"},
                            {"p1-t1-0", "both", "prober"},
                            {"p1-t1-1", "both", "prober"}};
    agent_deny *set = deny_of(t, v, 4);
    agent_floor_qp q;
    agent_floor_cfg zero = {0, 1};
    agent_floor_pick(&zero, set, 0, 2, evs, NEV, denied, &q);
    ck_assert(q.floored);
    ck_assert_uint_eq(q.kept, 1);
    ck_assert(!denied[1]); /* the drain's first salt */
    zero.planes = 2;
    agent_floor_pick(&zero, set, 0, 2, evs, NEV, denied, &q);
    ck_assert_uint_eq(q.kept, 2);
    ck_assert(!denied[1] && !denied[2]); /* and plane 1's first EV: all failures, the first */
    /* a floor of 0 the denylist does not reach changes nothing */
    agent_deny *none = deny_of(t, NULL, 0);
    agent_floor_pick(&zero, none, 0, 2, evs, NEV, denied, &q);
    ck_assert(!q.floored);
    ck_assert_uint_eq(q.allowed, NEV);
    ck_assert_uint_eq(q.kept, 0);
    agent_floor_pick(&dflt, NULL, 0, 2, evs, NEV, denied, &q);
    ck_assert(!q.floored);
    ck_assert_uint_eq(q.allowed, NEV);
    agent_deny_free(none);
    agent_deny_free(set);
    fab_topo_free(t);
}
END_TEST

/* The plane floor: plane 1 denied whole while plane 0 is clean keeps plane 1's least bad EV
 * only when the floor asks for two planes; both planes denied (plane 0 by a failure of h0's
 * port, plane 1 by drains) keeps the drained plane. */
START_TEST(test_agent_floor_planes)
{
    fab_topo *t = load();
    mrc_ev evs[NEV];
    bool denied[NEV];
    profile(t, evs);
    agent_floor_qp q;
    static const ent p1[] = {{"p1-t1-0", "both", "operator"}, {"p1-t1-1", "both", "drain"}};
    agent_deny *set = deny_of(t, p1, 2);
    agent_floor_pick(&dflt, set, 0, 2, evs, NEV, denied, &q);
    ck_assert(!q.floored); /* 64 of 128 left, on one plane: the default floor holds */
    ck_assert_uint_eq(q.allowed, 64);
    agent_floor_cfg two = {AGENT_FLOOR_FRACTION, 2};
    agent_floor_pick(&two, set, 0, 2, evs, NEV, denied, &q);
    ck_assert(q.floored);
    ck_assert_uint_eq(q.kept, 1);
    ck_assert(!denied[3]); /* plane 1 T1 1: the drain, not the operator's other entry */
    /* more planes than the peer has: all of its planes */
    agent_floor_cfg many = {0, 16};
    agent_floor_pick(&many, set, 0, 2, evs, NEV, denied, &q);
    ck_assert_uint_eq(q.kept, 1);
    agent_deny_free(set);

    static const ent both[] = {
        {"h0:0", "up", "prober"}, {"p1-t1-0", "both", NULL}, {"p1-t1-1", "both", "drain"}};
    set = deny_of(t, both, 3);
    agent_floor_cfg one = {0, 1};
    agent_floor_pick(&one, set, 0, 2, evs, NEV, denied, &q);
    ck_assert_uint_eq(q.allowed, 0);
    ck_assert_uint_eq(q.kept, 1);
    /* a reason "drain" without a source is a failure: p1-t1-1's drain is the least bad */
    ck_assert(!denied[3]);
    agent_floor_pick(&dflt, set, 0, 2, evs, NEV, denied, &q);
    ck_assert_uint_eq(q.kept, 32);
    ck_assert_uint_eq(in_use_on(denied, 3), 32);
    agent_deny_free(set);
    fab_topo_free(t);
}
END_TEST

/* At the floor exactly nothing is kept past the denylist; just below it, the difference. */
START_TEST(test_agent_floor_exact)
{
    fab_topo *t = load();
    mrc_ev evs[NEV];
    bool denied[NEV];
    profile(t, evs);
    static const ent v[] = {
        {"p0-t1-0", "both", "drain"}, {"p0-t1-1", "both", "drain"}, {"p1-t1-0", "both", "drain"}};
    agent_deny *set = deny_of(t, v, 3);
    agent_floor_qp q;
    agent_floor_pick(&dflt, set, 0, 2, evs, NEV, denied, &q);
    ck_assert(!q.floored);
    ck_assert_uint_eq(q.allowed, 32);
    ck_assert_uint_eq(q.kept, 0);
    ck_assert_uint_eq(in_use_on(denied, 3), 32);
    ck_assert_uint_eq(in_use_on(denied, 0) + in_use_on(denied, 1) + in_use_on(denied, 2), 0);
    agent_floor_cfg more = {0.26, 1}; /* 33.28: 34 */
    agent_floor_pick(&more, set, 0, 2, evs, NEV, denied, &q);
    ck_assert(q.floored);
    ck_assert_uint_eq(q.kept, 2);
    ck_assert(!denied[0] && !denied[1]); /* ties: the profile's first */
    agent_floor_cfg tenth = {0.3, 1};    /* of 10 EVs: 3, not 4 */
    agent_floor_pick(&tenth, set, 0, 2, evs, 10, denied, &q);
    ck_assert_uint_eq(q.allowed, 2);
    ck_assert_uint_eq(q.kept, 1);
    /* the T0-local pair h0 -> h1 crosses no T1: nothing denied */
    agent_floor_pick(&dflt, set, 0, 1, evs, NEV, denied, &q);
    ck_assert(!q.floored);
    agent_deny_free(set);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_agent_floor_cfg)
{
    char err[160];
    static const struct {
        agent_floor_cfg cfg;
        const char *says;
    } bad[] = {
        {{-0.1, 1}, "a fraction from 0 to 1, not -0.1"},
        {{1.5, 1}, "a fraction from 0 to 1, not 1.5"},
        {{NAN, 1}, "a fraction from 0 to 1"},
        {{0.25, 0}, "planes must be 1 to 16 (0 would let it reach no EV), not 0"},
        {{0.25, 17}, "planes must be 1 to 16"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_int_eq(agent_floor_cfg_check(&bad[i].cfg, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, bad[i].says), "'%s', not '%s'", err, bad[i].says);
    }
    ck_assert_int_eq(agent_floor_cfg_check(&dflt, err, sizeof(err)), 0);
    ck_assert_int_eq(agent_floor_cfg_check(&(agent_floor_cfg){0, 1}, err, sizeof(err)), 0);
    ck_assert_int_eq(agent_floor_cfg_check(&(agent_floor_cfg){1, 16}, err, sizeof(err)), 0);
}
END_TEST

static unsigned occurrences(const char *text, const char *what)
{
    unsigned n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) {
        n++;
    }
    return n;
}

/* The peers' counts, and one log line per transition however often a state is given again. */
START_TEST(test_agent_floor_counts_and_log)
{
    fab_topo *t = load();
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    util_log_init("agent_floor_test", log);
    agent_floor *f = agent_floor_new(&dflt, t);
    uint32_t peers[3] = {2, 2, 5};
    agent_floor_qp held = {.nevs = 128, .allowed = 0, .kept = 32, .floored = true};
    agent_floor_qp fine = {.nevs = 128, .allowed = 128};
    agent_floor_qp qps[3] = {held, held, fine};
    agent_floor_totals tot;
    for (int k = 0; k < 5; k++) { /* fetches of an unchanged list */
        agent_floor_update(f, peers, qps, 3);
    }
    fflush(log);
    ck_assert_uint_eq(occurrences(text, "denylist floor: h2: the denylist leaves 0 of 256 EVs"), 1);
    ck_assert_uint_eq(occurrences(text, "64 of the least bad kept in use"), 1);
    ck_assert_uint_eq(occurrences(text, "h5"), 0);
    agent_floor_get_totals(f, &tot);
    ck_assert_uint_eq(tot.peers, 1);
    ck_assert_uint_eq(tot.kept, 64);
    ck_assert_uint_eq(tot.entered, 1);
    size_t n;
    const agent_floor_peer *p = agent_floor_peers(f, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(p[0].peer, 2);
    ck_assert(p[0].floored);
    ck_assert_uint_eq(p[0].qps, 2);
    ck_assert_uint_eq(p[0].nevs, 256);
    ck_assert_uint_eq(p[0].kept, 64);
    ck_assert_uint_eq(p[0].entered, 1);

    /* h5 goes too; one of h2's QPs leaves the floor: h2 stays held */
    qps[1] = fine;
    qps[2] = held;
    agent_floor_update(f, peers, qps, 3);
    agent_floor_update(f, peers, qps, 3);
    fflush(log);
    ck_assert_uint_eq(occurrences(text, "denylist floor: h5: the denylist leaves 0 of 128"), 1);
    ck_assert_uint_eq(occurrences(text, "off the floor"), 0);
    agent_floor_get_totals(f, &tot);
    ck_assert_uint_eq(tot.peers, 2);
    ck_assert_uint_eq(tot.kept, 64);
    ck_assert_uint_eq(tot.entered, 2);

    /* the list lifted: both leave, once each */
    qps[0] = qps[2] = fine;
    for (int k = 0; k < 3; k++) {
        agent_floor_update(f, peers, qps, 3);
    }
    fflush(log);
    ck_assert_uint_eq(occurrences(text, "denylist floor: h2: off the floor"), 1);
    ck_assert_uint_eq(occurrences(text, "denylist floor: h5: off the floor"), 1);
    agent_floor_get_totals(f, &tot);
    ck_assert_uint_eq(tot.peers, 0);
    ck_assert_uint_eq(tot.kept, 0);
    ck_assert_uint_eq(tot.entered, 2);
    p = agent_floor_peers(f, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert(!p[0].floored && !p[1].floored);
    ck_assert_uint_eq(p[0].entered, 1);

    /* h2 back to the floor: a second entry; its QPs gone: off once more */
    qps[0] = held;
    agent_floor_update(f, peers, qps, 3);
    agent_floor_update(f, peers + 1, qps + 1, 2);
    agent_floor_update(f, NULL, NULL, 0);
    fflush(log);
    ck_assert_uint_eq(occurrences(text, "denylist floor: h2: the denylist leaves"), 2);
    ck_assert_uint_eq(occurrences(text, "denylist floor: h2: off the floor"), 2);
    p = agent_floor_peers(f, &n);
    ck_assert_uint_eq(p[0].entered, 2);
    agent_floor_get_totals(f, &tot);
    ck_assert_uint_eq(tot.entered, 3);
    ck_assert_uint_eq(tot.peers, 0);

    util_log_init("agent_floor_test", NULL);
    fclose(log);
    free(text);
    agent_floor_free(f);
    agent_floor_free(NULL);
    fab_topo_free(t);
}
END_TEST

/* The entries' "source" and "reason" are optional, strings when given. */
START_TEST(test_agent_floor_source_checked)
{
    fab_topo *t = load();
    agent_deny *set = NULL;
    char err[256] = "";
    const char *body = "{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"scope\":\"up\","
                       "\"active\":true,\"source\":7}]}";
    ck_assert_int_eq(agent_deny_parse(t, body, strlen(body), &set, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_null(set);
    ck_assert_msg(strstr(err, "entries[0].source must be a string, not an integer"), "%s", err);
    body = "{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"scope\":\"up\","
           "\"active\":false,\"reason\":null}]}";
    ck_assert_int_eq(agent_deny_parse(t, body, strlen(body), &set, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "entries[0].reason must be a string, not null"), "%s", err);
    body = "{\"version\":1,\"entries\":[{\"element\":\"h1:0\",\"scope\":\"up\","
           "\"active\":true,\"source\":null,\"reason\":\"x\"}]}";
    ck_assert_int_eq(agent_deny_parse(t, body, strlen(body), &set, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "entries[0].source must be a string, not null"), "%s", err);
    ck_assert_ptr_null(set);
    fab_topo_free(t);
}
END_TEST

Suite *agent_floor_suite(void)
{
    Suite *s = suite_create("floor");
    TCase *tc = tcase_create("floor");
    tcase_add_test(tc, test_agent_floor_everything_denied);
    tcase_add_test(tc, test_agent_floor_zero);
    tcase_add_test(tc, test_agent_floor_planes);
    tcase_add_test(tc, test_agent_floor_exact);
    tcase_add_test(tc, test_agent_floor_cfg);
    tcase_add_test(tc, test_agent_floor_counts_and_log);
    tcase_add_test(tc, test_agent_floor_source_checked);
    suite_add_tcase(s, tc);
    return s;
}
