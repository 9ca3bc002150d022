/* SPDX-License-Identifier: MIT */
/* Unit tests of the health engine on the lab fabric (2 planes, 4 T0 and 2 T1 each, 8 hosts,
 * h0-h1 under T0 0 and so on): every host reports every EV to every peer, one element of the
 * fabric loses, and the engine must name that element and nothing else; bad reports are
 * refused whole. */
#include <check.h>
#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl_health.h"

static fab_topo *topo;

static void setup(void)
{
    fab_error err;
    ck_assert_msg(fab_topo_load_file(CTL_TEST_ROOT "/deploy/topologies/lab.json", &topo, &err) == 0,
                  "%s", err.msg);
}

static void teardown(void)
{
    fab_topo_free(topo);
}

typedef enum fault { F_NONE, F_LINK, F_NIC, F_T1, F_ONE_REPORTER } fault;

/* Whether the EV (p, j) from host s to host d loses under |f|. */
static bool loses(fault f, unsigned s, unsigned d, unsigned p, unsigned j)
{
    unsigned a = s / 2, b = d / 2;
    switch (f) {
    case F_LINK: /* p0-t0-0 -> p0-t1-1, up only */
    case F_ONE_REPORTER:
        return p == 0 && j == 1 && a == 0 && b != 0;
    case F_NIC: /* h5's plane-1 NIC, sending */
        return p == 1 && s == 5;
    case F_T1: /* p0-t1-0 drops everything */
        return p == 0 && j == 0 && a != b;
    default:
        return false;
    }
}

static void report_all(ctl_health *h, fault f, int64_t now)
{
    const fab_plan *plan = fab_topo_plan(topo);
    for (unsigned s = 0; s < 8; s++) {
        if (f == F_ONE_REPORTER && s != 0) {
            continue;
        }
        json_object *r = json_object_new_object(), *evs = json_object_new_array();
        char name[16], reporter[16];
        snprintf(name, sizeof(name), "h%u", s);
        snprintf(reporter, sizeof(reporter), "agent-h%u", s);
        json_object_object_add(r, "host", json_object_new_string(name));
        for (unsigned d = 0; d < 8; d++) {
            for (unsigned p = 0; p < 2 && d != s; p++) {
                for (unsigned j = 0; j < 2; j++) {
                    json_object *e = json_object_new_object();
                    char peer[16];
                    snprintf(peer, sizeof(peer), "h%u", d);
                    json_object_object_add(e, "peer", json_object_new_string(peer));
                    json_object_object_add(e, "ev",
                                           json_object_new_int64(fab_ev_make(plan, p, j, 5)));
                    json_object_object_add(e, "sent", json_object_new_int64(10000));
                    json_object_object_add(e, "lost",
                                           json_object_new_int64(loses(f, s, d, p, j) ? 200 : 0));
                    json_object_array_add(evs, e);
                }
            }
        }
        json_object_object_add(r, "evs", evs);
        char why[256] = "";
        ck_assert_msg(ctl_health_report(h, r, reporter, now, why, sizeof(why)) == 0, "%s", why);
        json_object_put(r);
    }
}

/* The names of the links (or switches) in |state|, comma-separated, sorted as listed. */
static void names(json_object *page, const char *key, const char *state, char *out, size_t len)
{
    json_object *items;
    out[0] = '\0';
    ck_assert(json_object_object_get_ex(page, "items", &items));
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i), *st, *n;
        json_object_object_get_ex(it, "state", &st);
        json_object_object_get_ex(it, key, &n);
        if (strcmp(json_object_get_string(st), state) == 0) {
            snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "",
                     json_object_get_string(n));
        }
    }
}

static void verdict(fault f, const char *links, const char *switches)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    int64_t now = 1800000000000;
    report_all(h, f, now);
    ctl_link_filter all = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    char got[512];
    json_object *page = ctl_health_links(h, &all, now + 1);
    names(page, "link", "bad", got, sizeof(got));
    ck_assert_str_eq(got, links);
    json_object_put(page);
    page = ctl_health_switches(h, &all, now + 1);
    names(page, "switch", "bad", got, sizeof(got));
    ck_assert_str_eq(got, switches);
    json_object_put(page);
    ctl_health_free(h);
}

/* One lossy T0-T1 direction: it alone, not the other links and NICs on the same paths. */
START_TEST(test_ctl_health_link)
{
    verdict(F_LINK, "p0-t0-0~p0-t1-1", "");
}
END_TEST

/* A NIC that loses what it sends: the NIC, not its T0's uplinks nor the receivers' ports. */
START_TEST(test_ctl_health_nic)
{
    verdict(F_NIC, "h5:1", "");
}
END_TEST

/* A T1 that drops everything: the T1 itself, from its links. */
START_TEST(test_ctl_health_t1)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    report_all(h, F_T1, 1800000000000);
    ctl_link_filter all = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    char got[512];
    json_object *page = ctl_health_switches(h, &all, 1800000000001);
    names(page, "switch", "bad", got, sizeof(got));
    ck_assert_str_eq(got, "p0-t1-0");
    json_object_put(page);
    ctl_health_free(h);
}
END_TEST

/* Nothing lost, nothing blamed; and one reporter's word blames no T0-T1 link. */
START_TEST(test_ctl_health_clean_and_one_reporter)
{
    verdict(F_NONE, "", "");
    verdict(F_ONE_REPORTER, "", "");
}
END_TEST

/* Evidence ages out: two half windows later the same link has no data. */
START_TEST(test_ctl_health_ages_out)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    report_all(h, F_LINK, 1800000000000);
    ctl_link_filter f = {.plane = UINT32_MAX, .sw = FAB_NONE, .state = "no_data", .limit = 1000};
    json_object *page = ctl_health_links(h, &f, 1800000000000 + 61000);
    json_object *total;
    json_object_object_get_ex(page, "total", &total);
    ck_assert_int_eq(json_object_get_int(total), 8 * 2 + 8 * 2); /* every link and NIC */
    json_object_put(page);
    ctl_health_free(h);
}
END_TEST

/* A prober's counters on a named link count on their own; bad reports and results are
 * refused whole, with the status that fits, and change nothing. */
START_TEST(test_ctl_health_probes_and_bad_input)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    char why[256];
    json_object *r = json_tokener_parse("{\"results\":[{\"element\":\"p1-t0-2~p1-t1-0\",\"scope\":"
                                        "\"down\",\"sent\":5000,\"lost\":100}]}");
    ck_assert_int_eq(ctl_health_probes(h, r, "probe1", 1800000000000, why, sizeof(why)), 0);
    json_object_put(r);
    ck_assert_uint_eq(ctl_health_ingested(h), 1);
    static const struct {
        int status;
        const char *body;
        bool probes;
    } bad[] = {
        {400, "[]", false},
        {400, "{\"host\":\"h0\"}", false},
        {422, "{\"host\":\"h99\",\"evs\":[]}", false},
        {422, "{\"host\":\"h0\",\"evs\":[{\"peer\":\"h42\",\"ev\":1,\"sent\":1}]}", false},
        {400, "{\"host\":\"h0\",\"evs\":[{\"peer\":\"h1\",\"ev\":-1,\"sent\":1}]}", false},
        {400, "{\"host\":\"h0\",\"evs\":[{\"peer\":\"h1\",\"ev\":1,\"sent\":1,\"lost\":2}]}",
         false},
        {400, "{\"host\":\"h0\",\"evs\":[{\"peer\":\"h1\",\"ev\":1,\"sent\":\"x\"}]}", false},
        {422, "{\"host\":\"h0\",\"evs\":[{\"peer\":\"h1\",\"ev\":4294967295,\"sent\":1}]}", false},
        {400, "{\"results\":[{\"element\":\"p0-t1-0\",\"sent\":1}]}", true},
        {422, "{\"results\":[{\"element\":\"p0-t1-0~p0-t1-1\",\"scope\":\"up\",\"sent\":1}]}",
         true},
        {400, "{\"results\":{}}", true},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = json_tokener_parse(bad[i].body);
        ck_assert_ptr_nonnull(r);
        int st = bad[i].probes ? ctl_health_probes(h, r, "x", 1800000000000, why, sizeof(why))
                               : ctl_health_report(h, r, "x", 1800000000000, why, sizeof(why));
        ck_assert_msg(st == bad[i].status, "%s: %d (%s), want %d", bad[i].body, st, why,
                      bad[i].status);
        ck_assert(why[0] != '\0');
        json_object_put(r);
    }
    ck_assert_uint_eq(ctl_health_ingested(h), 1);
    ctl_link_filter f = {.plane = UINT32_MAX, .sw = FAB_NONE, .state = "bad", .limit = 1000};
    json_object *page = ctl_health_links(h, &f, 1800000000001);
    char got[256];
    names(page, "link", "bad", got, sizeof(got));
    ck_assert_str_eq(got, "p1-t0-2~p1-t1-0");
    json_object_put(page);
    ctl_health_free(h);
}
END_TEST

/* The path view: every EV between two hosts with the links it crosses. */
START_TEST(test_ctl_health_path)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    report_all(h, F_LINK, 1800000000000);
    json_object *p =
        ctl_health_path(h, fab_host_find(topo, "h0"), fab_host_find(topo, "h4"), 1800000000001);
    json_object *evs, *st, *hops;
    ck_assert(json_object_object_get_ex(p, "evs", &evs));
    ck_assert_uint_eq(json_object_array_length(evs), 4); /* 2 planes x 2 T1s */
    json_object *e = json_object_array_get_idx(evs, 1);  /* plane 0, T1 1 */
    json_object_object_get_ex(e, "state", &st);
    ck_assert_str_eq(json_object_get_string(st), "bad");
    json_object_object_get_ex(e, "hops", &hops);
    ck_assert_uint_eq(json_object_array_length(hops), 4);
    json_object_object_get_ex(json_object_array_get_idx(evs, 0), "state", &st);
    ck_assert_str_eq(json_object_get_string(st), "ok");
    json_object_put(p);
    ctl_health_free(h);
}
END_TEST

/* The snapshot's filters agree with the whole list: every state, plane and switch. */
START_TEST(test_ctl_health_filters_agree)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    int64_t now = 1800000000000;
    report_all(h, F_LINK, now);
    ctl_link_filter all = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    json_object *whole = ctl_health_links(h, &all, now + 1), *items, *total;
    json_object_object_get_ex(whole, "items", &items);
    size_t n = json_object_array_length(items);
    ck_assert_uint_eq(n, 32);
    static const char *const sts[] = {NULL, "no_data", "ok", "degraded", "bad"};
    static const char *const sws[] = {NULL, "p0-t0-0", "p0-t1-1", "p1-t0-3"};
    for (int si = 0; si < 5; si++) {
        for (unsigned plane = 0; plane < 3; plane++) {
            for (int wi = 0; wi < 4; wi++) {
                for (uint64_t off = 0; off < 3; off++) {
                    ctl_link_filter f = {.plane = plane == 2 ? UINT32_MAX : plane,
                                         .sw = sws[wi] ? fab_switch_find(topo, sws[wi]) : FAB_NONE,
                                         .state = sts[si],
                                         .offset = off * 3,
                                         .limit = 2};
                    /* what the whole list says */
                    char want[2048] = "", got[2048] = "";
                    uint64_t matched = 0;
                    for (size_t i = 0; i < n; i++) {
                        json_object *it = json_object_array_get_idx(items, i), *x;
                        json_object_object_get_ex(it, "state", &x);
                        const char *st = json_object_get_string(x);
                        json_object_object_get_ex(it, "plane", &x);
                        unsigned p = (unsigned)json_object_get_int(x);
                        json_object_object_get_ex(it, "link", &x);
                        const char *name = json_object_get_string(x);
                        bool of_sw = !sws[wi] || strstr(name, sws[wi]) ||
                                     (strcmp(sws[wi], "p0-t0-0") == 0 &&
                                      (strcmp(name, "h0:0") == 0 || strcmp(name, "h1:0") == 0)) ||
                                     (strcmp(sws[wi], "p1-t0-3") == 0 &&
                                      (strcmp(name, "h6:1") == 0 || strcmp(name, "h7:1") == 0));
                        if ((f.state && strcmp(st, f.state) != 0) ||
                            (f.plane != UINT32_MAX && p != f.plane) || !of_sw) {
                            continue;
                        }
                        if (matched >= f.offset && matched < f.offset + f.limit) {
                            snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s,", name);
                        }
                        matched++;
                    }
                    json_object *page = ctl_health_links(h, &f, now + 1), *pi;
                    json_object_object_get_ex(page, "items", &pi);
                    json_object_object_get_ex(page, "total", &total);
                    for (size_t i = 0; i < json_object_array_length(pi); i++) {
                        json_object *x;
                        json_object_object_get_ex(json_object_array_get_idx(pi, i), "link", &x);
                        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s,",
                                 json_object_get_string(x));
                    }
                    ck_assert_msg(
                        strcmp(got, want) == 0 && (uint64_t)json_object_get_int64(total) == matched,
                        "state %s plane %u switch %s offset %lu: got %s (%ld), want %s (%lu)",
                        sts[si] ? sts[si] : "-", plane, sws[wi] ? sws[wi] : "-",
                        (unsigned long)f.offset, got, (long)json_object_get_int64(total), want,
                        (unsigned long)matched);
                    json_object_put(page);
                }
            }
        }
    }
    json_object_put(whole);
    ctl_health_free(h);
}
END_TEST

/* Hosts are as bad as their worst port; an element's history keeps its changes of state. */
START_TEST(test_ctl_health_hosts_and_history)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    int64_t now = 1800000000000;
    report_all(h, F_NIC, now);
    ctl_link_filter f = {.plane = UINT32_MAX, .sw = FAB_NONE, .state = "bad", .limit = 100};
    json_object *page = ctl_health_hosts(h, &f, now + 1);
    char got[256];
    names(page, "host", "bad", got, sizeof(got));
    ck_assert_str_eq(got, "h5");
    json_object_put(page);
    f.plane = 0; /* h5's plane-0 port is fine */
    page = ctl_health_hosts(h, &f, now + 1);
    names(page, "host", "bad", got, sizeof(got));
    ck_assert_str_eq(got, "");
    json_object_put(page);
    json_object *hist, *samples, *x;
    char why[256];
    ck_assert_int_eq(ctl_health_history(h, "h5:1", now + 1, &hist, why, sizeof(why)), 0);
    json_object_object_get_ex(hist, "samples", &samples);
    ck_assert_uint_eq(json_object_array_length(samples), 1);
    json_object_object_get_ex(json_object_array_get_idx(samples, 0), "state", &x);
    ck_assert_str_eq(json_object_get_string(x), "bad");
    json_object_put(hist);
    /* a healthy element has none; a name not of the fabric is refused */
    ck_assert_int_eq(ctl_health_history(h, "h4:1", now + 1, &hist, why, sizeof(why)), 0);
    json_object_object_get_ex(hist, "samples", &samples);
    ck_assert_uint_eq(json_object_array_length(samples), 0);
    json_object_put(hist);
    ck_assert_int_eq(ctl_health_history(h, "h99:1", now + 1, &hist, why, sizeof(why)), -EINVAL);
    /* the evidence ages out: the change to no_data is kept, after the bad */
    ck_assert_int_eq(ctl_health_history(h, "h5:1", now + 61000, &hist, why, sizeof(why)), 0);
    json_object_object_get_ex(hist, "samples", &samples);
    ck_assert_uint_eq(json_object_array_length(samples), 2);
    json_object_object_get_ex(json_object_array_get_idx(samples, 1), "state", &x);
    ck_assert_str_eq(json_object_get_string(x), "no_data");
    json_object_object_get_ex(hist, "state", &x);
    ck_assert_str_eq(json_object_get_string(x), "no_data");
    json_object_put(hist);
    ctl_health_free(h);
}
END_TEST

/* A fabric with a missing host port: pages of every size add up to the whole list, which
 * leaves the missing port out, with and without a state filter. */
START_TEST(test_ctl_health_pages_skip_missing_ports)
{
    fab_topo *t;
    fab_error err;
    ck_assert(fab_topo_load_file(CTL_TEST_ROOT "/tests/unit/fabric/data/small.json", &t, &err) ==
              0);
    ctl_health *h = ctl_health_new(t, 60000);
    static const char *const sts[] = {NULL, "no_data"};
    for (int si = 0; si < 2; si++) {
        for (unsigned plane = 0; plane < 3; plane++) {
            ctl_link_filter all = {.plane = plane == 2 ? UINT32_MAX : plane,
                                   .sw = FAB_NONE,
                                   .state = sts[si],
                                   .limit = 1000};
            json_object *whole = ctl_health_links(h, &all, 1800000000000), *items, *total;
            json_object_object_get_ex(whole, "items", &items);
            json_object_object_get_ex(whole, "total", &total);
            size_t n = json_object_array_length(items);
            ck_assert_uint_eq((uint64_t)json_object_get_int64(total), n);
            /* 2 planes x (3 T0 x 2 T1 + 10 host ports), one of them missing (h5:1) */
            ck_assert_uint_eq(n, plane == 2 ? 31 : plane == 1 ? 15 : 16);
            ck_assert(!strstr(json_object_to_json_string(items), "\"h5:1\""));
            for (uint64_t lim = 1; lim <= 4; lim++) {
                for (uint64_t off = 0; off < n + 2; off += lim) {
                    ctl_link_filter f = all;
                    f.offset = off;
                    f.limit = lim;
                    json_object *page = ctl_health_links(h, &f, 1800000000000), *pi, *pt;
                    json_object_object_get_ex(page, "items", &pi);
                    json_object_object_get_ex(page, "total", &pt);
                    ck_assert_uint_eq((uint64_t)json_object_get_int64(pt), n);
                    for (size_t i = 0; i < json_object_array_length(pi); i++) {
                        ck_assert(json_object_equal(json_object_array_get_idx(pi, i),
                                                    json_object_array_get_idx(items, off + i)));
                    }
                    ck_assert_uint_eq(json_object_array_length(pi),
                                      off >= n ? 0 : (n - off < lim ? n - off : lim));
                    json_object_put(page);
                }
            }
            json_object_put(whole);
        }
    }
    ctl_health_free(h);
    fab_topo_free(t);
}
END_TEST

Suite *ctl_health_suite(void);

Suite *ctl_health_suite(void)
{
    Suite *s = suite_create("health");
    TCase *tc = tcase_create("health");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ctl_health_link);
    tcase_add_test(tc, test_ctl_health_nic);
    tcase_add_test(tc, test_ctl_health_t1);
    tcase_add_test(tc, test_ctl_health_clean_and_one_reporter);
    tcase_add_test(tc, test_ctl_health_ages_out);
    tcase_add_test(tc, test_ctl_health_probes_and_bad_input);
    tcase_add_test(tc, test_ctl_health_path);
    tcase_add_test(tc, test_ctl_health_filters_agree);
    tcase_add_test(tc, test_ctl_health_hosts_and_history);
    tcase_add_test(tc, test_ctl_health_pages_skip_missing_ports);
    suite_add_tcase(s, tc);
    return s;
}
