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
#include "ctl_store.h"
#include "util_test.h"

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

/* --- the prober's evidence, verdicts, denials, the fabric-wide views, the checkpoint ------- */

#define NOW 1800000000000

static int64_t probe(ctl_health *h, const char *body, int64_t now)
{
    char why[256] = "";
    json_object *r = json_tokener_parse(body);
    ck_assert_msg(r != NULL, "%s", body);
    int st = ctl_health_probes(h, r, "localizer", now, why, sizeof(why));
    json_object_put(r);
    ck_assert_msg(st == 0, "%s: %d %s", body, st, why);
    return st;
}

/* A link item's member (a string) by the link's name, from a page of every link. */
static const char *link_member(ctl_health *h, const char *link, const char *key, int64_t now,
                               char *out, size_t len)
{
    ctl_link_filter all = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    json_object *page = ctl_health_links(h, &all, now), *items;
    json_object_object_get_ex(page, "items", &items);
    out[0] = '\0';
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *it = json_object_array_get_idx(items, i), *n, *v;
        json_object_object_get_ex(it, "link", &n);
        if (strcmp(json_object_get_string(n), link) == 0 && json_object_object_get_ex(it, key, &v)) {
            snprintf(out, len, "%s", json_object_get_string(v));
        }
    }
    json_object_put(page);
    return out;
}

static const char *COVER0 = "{\"coverage\":[{\"plane\":0,\"nic\":1408,\"uplink\":1280,\"hosts\":8}]";

/* With no data traffic at all, the prober's coverage makes every link of its plane ok and its
 * result on a lossy direction makes that link bad; the other plane, unprobed, has no data. */
START_TEST(test_ctl_health_prober_alone)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    char body[1024], got[512];
    snprintf(body, sizeof(body),
             "%s,\"results\":[{\"element\":\"p0-t0-1~p0-t1-0\",\"scope\":\"up\",\"sent\":1280,"
             "\"lost\":27}]}",
             COVER0);
    probe(h, body, NOW);
    ctl_link_filter all = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    json_object *page = ctl_health_links(h, &all, NOW + 1);
    names(page, "link", "bad", got, sizeof(got));
    ck_assert_str_eq(got, "p0-t0-1~p0-t1-0");
    names(page, "link", "ok", got, sizeof(got));
    ck_assert_str_eq(got, "p0-t0-0~p0-t1-0,p0-t0-0~p0-t1-1,p0-t0-1~p0-t1-1,p0-t0-2~p0-t1-0,"
                          "p0-t0-2~p0-t1-1,p0-t0-3~p0-t1-0,p0-t0-3~p0-t1-1,h0:0,h1:0,h2:0,h3:0,"
                          "h4:0,h5:0,h6:0,h7:0");
    names(page, "link", "no_data", got, sizeof(got));
    ck_assert(strstr(got, "p1-t0-0~p1-t1-0") && !strstr(got, ":0"));
    /* the evidence by source: the prober's own, none of the agents' */
    json_object *items, *it = NULL, *up, *pr, *ag, *x;
    json_object_object_get_ex(page, "items", &items);
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *n;
        json_object_object_get_ex(json_object_array_get_idx(items, i), "link", &n);
        it = strcmp(json_object_get_string(n), "p0-t0-1~p0-t1-0") == 0
                 ? json_object_array_get_idx(items, i)
                 : it;
    }
    ck_assert_ptr_nonnull(it);
    json_object_object_get_ex(it, "up", &up);
    json_object_object_get_ex(up, "prober", &pr);
    json_object_object_get_ex(up, "agents", &ag);
    json_object_object_get_ex(pr, "lost", &x);
    ck_assert_int_eq(json_object_get_int(x), 27);
    json_object_object_get_ex(pr, "own", &x);
    ck_assert(json_object_get_boolean(x));
    json_object_object_get_ex(ag, "sent", &x);
    ck_assert_int_eq(json_object_get_int(x), 0);
    json_object_put(page);
    /* the coverage ages out with its window like any evidence */
    ck_assert_str_eq(link_member(h, "p0-t0-0~p0-t1-0", "state", NOW + 61000, got, sizeof(got)),
                     "no_data");
    ctl_health_free(h);
}
END_TEST

/* A post of plane 0's coverage and one verdict on p0-t0-2~p0-t1-1 down, in |state|. */
static void verdict_body(char *out, size_t len, const char *state)
{
    snprintf(out, len,
             "%s,\"verdicts\":[{\"component\":\"p0 D t0=2 t1=1\",\"kind\":\"link\","
             "\"elements\":[{\"element\":\"p0-t0-2~p0-t1-1\",\"scope\":\"down\"}],"
             "\"loss\":0.004,\"lost\":50,\"sent\":12800,\"horizon_s\":10,\"llr\":40,"
             "\"since\":\"2027-01-15T08:00:00Z\",\"state\":\"%s\",\"entries\":[7]}]}",
             COVER0, state);
}

/* An element a verdict names is never ok while the verdict stands, whatever was measured;
 * an empty set lifts it; a healed verdict names nothing. */
START_TEST(test_ctl_health_verdict_names)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    char body[1024], got[512];
    verdict_body(body, sizeof(body), "denied");
    probe(h, body, NOW);
    ck_assert_str_eq(link_member(h, "p0-t0-2~p0-t1-1", "state", NOW + 1, got, sizeof(got)),
                     "degraded");
    ck_assert_str_eq(link_member(h, "p0-t0-2~p0-t1-1", "measured", NOW + 1, got, sizeof(got)),
                     "ok");
    ck_assert(strstr(link_member(h, "p0-t0-2~p0-t1-1", "verdict", NOW + 1, got, sizeof(got)),
                     "p0 D t0=2 t1=1"));
    verdict_body(body, sizeof(body), "healed");
    probe(h, body, NOW + 2);
    ck_assert_str_eq(link_member(h, "p0-t0-2~p0-t1-1", "state", NOW + 3, got, sizeof(got)), "ok");
    verdict_body(body, sizeof(body), "lifting");
    probe(h, body, NOW + 4);
    ck_assert_str_eq(link_member(h, "p0-t0-2~p0-t1-1", "state", NOW + 5, got, sizeof(got)),
                     "degraded");
    probe(h, "{\"verdicts\":[]}", NOW + 6);
    ck_assert_str_eq(link_member(h, "p0-t0-2~p0-t1-1", "state", NOW + 7, got, sizeof(got)), "ok");
    /* a localizer silent for a whole window holds no verdict any more */
    verdict_body(body, sizeof(body), "denied");
    probe(h, body, NOW + 8);
    ctl_health_tick(h, NOW + 8 + 61000);
    ck_assert_str_eq(link_member(h, "p0-t0-2~p0-t1-1", "state", NOW + 8 + 61001, got, sizeof(got)),
                     "no_data");
    /* verdicts that do not fit are refused whole */
    static const char *const bad[] = {
        "{\"verdicts\":[{\"component\":\"x\",\"kind\":\"wire\",\"elements\":[{\"element\":"
        "\"p0-t1-0\"}],\"state\":\"denied\"}]}",
        "{\"verdicts\":[{\"component\":\"x\",\"kind\":\"switch\",\"elements\":[{\"element\":"
        "\"p9-t1-0\"}],\"state\":\"denied\"}]}",
        "{\"verdicts\":[{\"component\":\"x\",\"kind\":\"switch\",\"elements\":[],\"state\":\"denied\"}]}",
        "{\"verdicts\":[{\"component\":\"x\",\"kind\":\"switch\",\"elements\":[{\"element\":"
        "\"p0-t1-0\"}],\"state\":\"denied\",\"loss\":2}]}",
        "{\"coverage\":[{\"plane\":5,\"nic\":1,\"uplink\":1}]}",
        "{\"coverage\":{}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char why[256] = "";
        json_object *r = json_tokener_parse(bad[i]);
        int st = ctl_health_probes(h, r, "localizer", NOW + 9, why, sizeof(why));
        ck_assert_msg(st == 400 || st == 422, "%s: %d", bad[i], st);
        ck_assert(why[0]);
        json_object_put(r);
    }
    ctl_health_free(h);
}
END_TEST

static char store_dir[256];
static ctl_store *open_store(const char *name)
{
    char path[512], err[256];
    ctl_store *st;
    snprintf(path, sizeof(path), "%s/%s.db", store_dir, name);
    ck_assert_msg(ctl_store_open(path, &st, err, sizeof(err)) == 0, "%s", err);
    return st;
}

static int64_t add_entry(ctl_store *st, const char *element, const char *scope,
                         const char *source)
{
    ctl_deny d = {0};
    snprintf(d.element, sizeof(d.element), "%s", element);
    snprintf(d.scope, sizeof(d.scope), "%s", scope);
    snprintf(d.reason, sizeof(d.reason), "%s test", source);
    snprintf(d.source, sizeof(d.source), "%s", source);
    snprintf(d.author, sizeof(d.author), "test");
    ck_assert_int_eq(ctl_store_deny_add(st, &d), 0);
    return d.id;
}

/* Denied beside the state: the entries on a link and its switches, a drained switch, the EVs
 * of a path an entry excludes (by the agents' rule: the data direction only), and a prober's
 * entry naming its element not ok. */
START_TEST(test_ctl_health_denied)
{
    util_test_mkdtemp(store_dir, sizeof(store_dir), "ctl_health");
    ctl_store *st = open_store("denied");
    ctl_health *h = ctl_health_new(topo, 60000);
    char got[512];
    int64_t drain = add_entry(st, "p0-t1-1", "both", "operator");
    int64_t up = add_entry(st, "p0-t0-3~p0-t1-0", "up", "operator");
    ck_assert_int_eq(ctl_health_denials(h, st, NOW), 0);
    report_all(h, F_NONE, NOW);
    ck_assert(strstr(link_member(h, "p0-t0-0~p0-t1-1", "denied", NOW + 1, got, sizeof(got)),
                     "\"p0-t1-1\""));
    ck_assert_str_eq(link_member(h, "p0-t0-0~p0-t1-1", "state", NOW + 1, got, sizeof(got)), "ok");
    ck_assert_str_eq(link_member(h, "p0-t0-0~p0-t1-0", "denied", NOW + 1, got, sizeof(got)), "[ ]");
    /* h0 (T0 0) to h7 (T0 3): over T1 1 the drain; over T1 0 the entry on 3~0 is up only, and
     * h0 -> h7 crosses it down: not excluded; h7 -> h0 crosses it up: excluded */
    uint32_t h0 = fab_host_find(topo, "h0"), h7 = fab_host_find(topo, "h7");
    for (int dir = 0; dir < 2; dir++) {
        json_object *p = ctl_health_path(h, dir ? h7 : h0, dir ? h0 : h7, NOW + 1), *evs;
        json_object_object_get_ex(p, "evs", &evs);
        for (size_t i = 0; i < json_object_array_length(evs); i++) {
            json_object *e = json_object_array_get_idx(evs, i), *pl, *t1, *ex, *den;
            json_object_object_get_ex(e, "plane", &pl);
            json_object_object_get_ex(e, "t1", &t1);
            json_object_object_get_ex(e, "excluded", &ex);
            json_object_object_get_ex(e, "denied", &den);
            bool want = json_object_get_int(pl) == 0 &&
                        (strcmp(json_object_get_string(t1), "p0-t1-1") == 0 ||
                         (dir == 1 && strcmp(json_object_get_string(t1), "p0-t1-0") == 0));
            ck_assert_msg(json_object_get_boolean(ex) == want, "dir %d ev %zu", dir, i);
            if (want) {
                json_object *id;
                json_object_object_get_ex(json_object_array_get_idx(den, 0), "id", &id);
                ck_assert_int_eq(json_object_get_int64(id),
                                 strcmp(json_object_get_string(t1), "p0-t1-1") == 0 ? drain : up);
            }
        }
        json_object_put(p);
    }
    /* a prober's entry names its element: never ok while it stands */
    int64_t pid = add_entry(st, "h3:1", "up", "prober");
    ck_assert_int_eq(ctl_health_denials(h, st, NOW + 2), 0);
    ck_assert_str_eq(link_member(h, "h3:1", "state", NOW + 3, got, sizeof(got)), "degraded");
    ck_assert_int_eq(ctl_store_deny_del(st, pid, "test"), 0);
    ck_assert_int_eq(ctl_health_denials(h, st, NOW + 4), 0);
    ck_assert_str_eq(link_member(h, "h3:1", "state", NOW + 5, got, sizeof(got)), "ok");
    ctl_health_free(h);
    ctl_store_close(st);
}
END_TEST

/* A T1 that drops on every link is the switch, and none of its links reads ok. */
START_TEST(test_ctl_health_t1_links)
{
    ctl_health *h = ctl_health_new(topo, 60000);
    char got[512];
    report_all(h, F_T1, NOW);
    for (unsigned a = 0; a < 4; a++) {
        char link[64];
        snprintf(link, sizeof(link), "p0-t0-%u~p0-t1-0", a);
        ck_assert_str_eq(link_member(h, link, "state", NOW + 1, got, sizeof(got)), "bad");
    }
    ck_assert_str_eq(link_member(h, "p0-t0-0~p0-t1-1", "state", NOW + 1, got, sizeof(got)), "ok");
    ctl_health_free(h);
}
END_TEST

/* The matrix's cell byte of T0 |a|, T1 |j|. */
static unsigned cell(const char *body, unsigned a, unsigned j, unsigned nt1)
{
    json_object *o = json_tokener_parse(body), *c;
    json_object_object_get_ex(o, "cells", &c);
    const char *s = json_object_get_string(c);
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint8_t out[64];
    size_t n = 0;
    for (size_t i = 0; s[i] && s[i] != '='; i += 4) {
        uint32_t x = 0;
        for (int k = 0; k < 4; k++) {
            const char *q = s[i + k] && s[i + k] != '=' ? strchr(b64, s[i + k]) : b64;
            x = x << 6 | (uint32_t)(q - b64);
        }
        out[n++] = (uint8_t)(x >> 16);
        out[n++] = (uint8_t)(x >> 8);
        out[n++] = (uint8_t)x;
    }
    json_object_put(o);
    return out[a * nt1 + j];
}

/* The fabric-wide views: counts per plane, the problem list's order, the matrix's cells and
 * its tag, unchanged until the content changes. */
START_TEST(test_ctl_health_fabric_views)
{
    util_test_mkdtemp(store_dir, sizeof(store_dir), "ctl_health");
    ctl_store *st = open_store("fabric");
    ctl_health *h = ctl_health_new(topo, 60000);
    char body[1024], tag[48], tag2[48];
    add_entry(st, "p1-t1-0", "both", "operator");
    ck_assert_int_eq(ctl_health_denials(h, st, NOW), 0);
    snprintf(body, sizeof(body),
             "%s,\"results\":[{\"element\":\"p0-t0-1~p0-t1-0\",\"scope\":\"up\",\"sent\":1280,"
             "\"lost\":27},{\"element\":\"h4:0\",\"scope\":\"down\",\"sent\":1408,\"lost\":3}]}",
             COVER0);
    probe(h, body, NOW);
    size_t len;
    char *t = ctl_health_summary_text(h, NOW + 2000, &len);
    json_object *sum = json_tokener_parse(t), *planes, *p0, *p1, *x;
    free(t);
    json_object_object_get_ex(sum, "planes", &planes);
    p0 = json_object_array_get_idx(planes, 0);
    p1 = json_object_array_get_idx(planes, 1);
    json_object_object_get_ex(p0, "bad", &x);
    ck_assert_int_eq(json_object_get_int(x), 1);
    json_object_object_get_ex(p0, "degraded", &x);
    ck_assert_int_eq(json_object_get_int(x), 1);
    json_object_object_get_ex(p1, "denied", &x);
    ck_assert_msg(json_object_get_int(x) == 1, "%s", json_object_to_json_string(sum));
    json_object_put(sum);
    t = ctl_health_problems_text(h, UINT32_MAX, 0, 100, NOW + 2000, &len);
    json_object *pr = json_tokener_parse(t), *items;
    free(t);
    json_object_object_get_ex(pr, "items", &items);
    ck_assert_uint_eq(json_object_array_length(items), 3);
    const char *want[] = {"p0-t0-1~p0-t1-0", "h4:0", "p1-t1-0"};
    for (size_t i = 0; i < 3; i++) {
        json_object_object_get_ex(json_object_array_get_idx(items, i), "element", &x);
        ck_assert_str_eq(json_object_get_string(x), want[i]);
    }
    json_object_put(pr);
    char *m = NULL;
    ck_assert_int_eq(ctl_health_matrix(h, 0, NULL, NOW + 2000, tag, sizeof(tag), &m, &len), 0);
    ck_assert_uint_eq(cell(m, 1, 0, 2), 0x31); /* up bad, down ok */
    ck_assert_uint_eq(cell(m, 0, 0, 2), 0x11);
    free(m);
    m = NULL;
    ck_assert_int_eq(ctl_health_matrix(h, 0, tag, NOW + 4000, tag2, sizeof(tag2), &m, &len), 1);
    ck_assert_ptr_null(m);
    ck_assert_str_eq(tag, tag2);
    ck_assert_int_eq(ctl_health_matrix(h, 1, NULL, NOW + 4000, tag2, sizeof(tag2), &m, &len), 0);
    ck_assert_uint_eq(cell(m, 2, 0, 2), 0x44); /* no data, denied both ways */
    free(m);
    m = NULL;
    snprintf(body, sizeof(body),
             "{\"results\":[{\"element\":\"p0-t0-3~p0-t1-1\",\"scope\":\"down\",\"sent\":1280,"
             "\"lost\":40}]}");
    probe(h, body, NOW + 6000);
    ck_assert_int_eq(ctl_health_matrix(h, 0, tag, NOW + 8000, tag2, sizeof(tag2), &m, &len), 0);
    ck_assert_str_ne(tag, tag2);
    ck_assert_uint_eq(cell(m, 3, 1, 2), 0x13);
    free(m);
    ck_assert_int_eq(ctl_health_matrix(h, 2, NULL, NOW + 8000, tag2, sizeof(tag2), &m, &len), -EINVAL);
    ctl_health_free(h);
    ctl_store_close(st);
}
END_TEST

/* A restarted engine shows the health it had: evidence, verdicts and history from the
 * checkpoint; a damaged blob or another fabric's is refused whole. */
START_TEST(test_ctl_health_save_load)
{
    util_test_mkdtemp(store_dir, sizeof(store_dir), "ctl_health");
    ctl_store *st = open_store("save");
    ctl_health *h = ctl_health_new(topo, 60000);
    char body[1400], got[512], got2[512], err[256];
    snprintf(body, sizeof(body),
             "%s,\"verdicts\":[{\"component\":\"p0 T1 1\",\"kind\":\"switch\",\"elements\":[{"
             "\"element\":\"p0-t1-1\"}],\"loss\":0.03,\"state\":\"denied\"}]}",
             COVER0);
    report_all(h, F_NIC, NOW);
    probe(h, body, NOW);
    ctl_link_filter all = {.plane = UINT32_MAX, .sw = FAB_NONE, .limit = 1000};
    json_object *before = ctl_health_links(h, &all, NOW + 1);
    json_object *sw_before = ctl_health_switches(h, &all, NOW + 1);
    ck_assert_int_eq(ctl_health_save(h, st, NOW + 1, 86400000), 0);
    ctl_health_free(h);
    h = ctl_health_new(topo, 60000);
    ck_assert_int_eq(ctl_health_load(h, st, NOW + 2, 86400000, err, sizeof(err)), 0);
    json_object *after = ctl_health_links(h, &all, NOW + 2);
    names(before, "link", "bad", got, sizeof(got));
    names(after, "link", "bad", got2, sizeof(got2));
    ck_assert_str_eq(got, got2);
    ck_assert(strstr(got, "h5:1") && strstr(got, "p0-t0-0~p0-t1-1"));
    json_object *sw_after = ctl_health_switches(h, &all, NOW + 2);
    names(sw_before, "switch", "bad", got, sizeof(got));
    names(sw_after, "switch", "bad", got2, sizeof(got2));
    ck_assert_str_eq(got, got2);
    ck_assert_str_eq(got, "p0-t1-1");
    json_object *hist;
    ck_assert_int_eq(ctl_health_history(h, "h5:1", NOW + 2, &hist, err, sizeof(err)), 0);
    ck_assert(strstr(json_object_to_json_string(hist), "\"bad\""));
    json_object_put(hist);
    json_object_put(before);
    json_object_put(after);
    json_object_put(sw_before);
    json_object_put(sw_after);
    ctl_health_free(h);
    /* a damaged blob, and another fabric's: refused, the engine empty */
    static const char junk[] = "MRCH\1\0\0\0garbage";
    ck_assert_int_eq(ctl_store_blob_put(st, "health", junk, sizeof(junk), NOW), 0);
    h = ctl_health_new(topo, 60000);
    ck_assert_int_eq(ctl_health_load(h, st, NOW + 3, 86400000, err, sizeof(err)), -EINVAL);
    ck_assert(strstr(err, "started afresh"));
    ck_assert_str_eq(link_member(h, "h5:1", "state", NOW + 3, got, sizeof(got)), "no_data");
    ctl_health_free(h);
    h = ctl_health_new(topo, 30000); /* another window: its halves mean other times */
    ctl_health_free(h);
    ctl_store_close(st);
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
    tcase_add_test(tc, test_ctl_health_prober_alone);
    tcase_add_test(tc, test_ctl_health_verdict_names);
    tcase_add_test(tc, test_ctl_health_denied);
    tcase_add_test(tc, test_ctl_health_t1_links);
    tcase_add_test(tc, test_ctl_health_fabric_views);
    tcase_add_test(tc, test_ctl_health_save_load);
    suite_add_tcase(s, tc);
    return s;
}
