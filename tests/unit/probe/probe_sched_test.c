/* SPDX-License-Identifier: MIT */
/* The probe plan: rate, determinism, valid paths, expect() as get()'s inverse, exact balance. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_sched.h"

#define LAB PROBE_TEST_ROOT "/deploy/topologies/lab.json"
#define FULL PROBE_TEST_ROOT "/deploy/topologies/full.json"

/* ck_assert_msg() without its per-call mark point: for checks in loops run millions of times. */
#define REQUIRE(expr, ...)                                                                         \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)

#define FABRIC(body)                                                                               \
    "{\"form\": \"parametric\", \"name\": \"t\", " body ", \"interfaces\": {\"t0\": "              \
    "\"eth{port}\", \"t1\": \"eth{port}\", \"host\": \"eth{port}\", \"sid_device\": \"sr0\"}}"

/* 2 planes of 16 T0s, 16 T1s, 16 down-ports. */
static const char mid_json[] = FABRIC("\"planes\": 2, \"radix\": 32, \"hosts\": 256");
/* 5 T0s of 4 down-ports, 3 T1s (J does not divide D: the T1 stream is a multiple of 3), and
 * 19 hosts, so T0 4's port 3 is a hole. */
static const char odd_json[] =
    FABRIC("\"planes\": 1, \"radix\": 7, \"oversubscription\": 1.3333333333333333, "
           "\"hosts\": 19");
/* one T0 per plane: no cross probes */
static const char one_t0_json[] = FABRIC("\"planes\": 2, \"radix\": 4, \"hosts\": 2");
/* one host per T0: no intra probes */
static const char one_port_json[] = FABRIC("\"planes\": 1, \"radix\": 2, \"hosts\": 2");
/* one T0 with one host: bounces only */
static const char lone_json[] = FABRIC("\"planes\": 1, \"radix\": 2, \"hosts\": 1");

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static fab_topo *load_file(const char *path)
{
    fab_topo *topo = NULL;
    fab_error err;
    int rv = fab_topo_load_file(path, &topo, &err);
    ck_assert_msg(rv == 0, "%s: %s at %s", path, err.msg, err.path);
    return topo;
}

static fab_topo *load_json(const char *json)
{
    fab_topo *topo = NULL;
    fab_error err;
    int rv = fab_topo_load(json, strlen(json), &topo, &err);
    ck_assert_msg(rv == 0, "%s at %s", err.msg, err.path);
    return topo;
}

static probe_plan *plan_of(const fab_topo *topo, const probe_cfg *cfg)
{
    probe_cfg def;
    probe_plan *plan = NULL;
    if (!cfg) {
        probe_cfg_default(&def);
        cfg = &def;
    }
    int rv = probe_plan_new(topo, cfg, &plan);
    ck_assert_msg(rv == 0, "probe_plan_new: %d", rv);
    return plan;
}

static bool is_one_way(const probe_spec *s)
{
    return s->kind == PROBE_CROSS || s->kind == PROBE_INTRA;
}

START_TEST(test_probe_sched_rate)
{
    fab_topo *topo = load_file(LAB);
    probe_cfg cfg;
    probe_cfg_default(&cfg);
    ck_assert_uint_eq(cfg.window_ns, 1000000000u);
    probe_plan *plan = plan_of(topo, &cfg);
    uint32_t r = probe_plan_per_window(plan);
    /* about 1,400 probes/s per port, and the default mix exactly on a fabric that takes it */
    ck_assert_uint_eq(r, 1408);
    ck_assert_uint_eq(probe_plan_kind_count(plan, 0, PROBE_T0_BOUNCE), 64);
    ck_assert_uint_eq(probe_plan_kind_count(plan, 0, PROBE_T1_BOUNCE), 256);
    ck_assert_uint_eq(probe_plan_kind_count(plan, 0, PROBE_CROSS), 1024);
    ck_assert_uint_eq(probe_plan_kind_count(plan, 0, PROBE_INTRA), 64);
    /* spread evenly over the window */
    ck_assert_uint_eq(probe_plan_offset_ns(plan, 0), 0);
    for (uint32_t i = 1; i < r; i++) {
        uint64_t d = probe_plan_offset_ns(plan, i) - probe_plan_offset_ns(plan, i - 1);
        REQUIRE(d >= 710226 && d <= 710228, "gap %llu before index %u", (unsigned long long)d, i);
    }
    probe_plan_free(plan);

    /* probes per window = rate * window, rounded */
    static const struct {
        double rate;
        uint64_t window_ns;
        uint32_t per_window;
    } cases[] = {{1400, 1000000000u, 1400},   {100, 500000000u, 50}, {333.3, 3000000000u, 1000},
                 {1400.4, 1000000000u, 1400}, {10, 250000000u, 3},   {7, 1000000000u, 7},
                 {1e6, 100000000u, 100000}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cfg.rate_per_port = cases[c].rate;
        cfg.window_ns = cases[c].window_ns;
        plan = plan_of(topo, &cfg);
        ck_assert_uint_eq(probe_plan_per_window(plan), cases[c].per_window);
        for (unsigned p = 0; p < probe_plan_planes(plan); p++) {
            uint32_t sum = 0;
            for (unsigned k = 0; k < PROBE_KINDS; k++) {
                sum += probe_plan_kind_count(plan, p, (probe_kind)k);
            }
            ck_assert_uint_eq(sum, cases[c].per_window);
        }
        /* each index is due once, in order, inside the window */
        uint64_t last = probe_plan_offset_ns(plan, cases[c].per_window - 1);
        ck_assert_uint_lt(last, cases[c].window_ns);
        probe_plan_free(plan);
    }
    fab_topo_free(topo);
}
END_TEST

START_TEST(test_probe_sched_invalid)
{
    fab_topo *topo = load_file(LAB);
    probe_plan *plan = (probe_plan *)0x1;
    probe_cfg cfg;
    probe_cfg_default(&cfg);
    ck_assert_int_eq(probe_plan_new(NULL, &cfg, &plan), -EINVAL);
    ck_assert_int_eq(probe_plan_new(topo, NULL, &plan), -EINVAL);
    cfg.window_ns = 0;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    probe_cfg_default(&cfg);
    cfg.rate_per_port = 0;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    cfg.rate_per_port = -5;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    cfg.rate_per_port = 0.0 / 0.0;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    cfg.rate_per_port = 1.0 / 0.0;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    /* less than one probe a window, and more than the most */
    cfg.rate_per_port = 0.4;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    cfg.rate_per_port = 2e6;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    probe_cfg_default(&cfg);
    cfg.share[PROBE_CROSS] = -1;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    cfg.share[PROBE_CROSS] = 0.0 / 0.0;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    ck_assert_ptr_eq(plan, (probe_plan *)0x1); /* nothing stored on failure */
    fab_topo_free(topo);

    /* 3 T1s over 4 down-ports need a T1 stream of a multiple of 3: 2 probes cannot */
    topo = load_json(odd_json);
    probe_cfg_default(&cfg);
    cfg.rate_per_port = 2;
    memset(cfg.share, 0, sizeof(cfg.share));
    cfg.share[PROBE_CROSS] = 1;
    ck_assert_int_eq(probe_plan_new(topo, &cfg, &plan), -EINVAL);
    cfg.rate_per_port = 3;
    plan = plan_of(topo, &cfg);
    ck_assert_uint_eq(probe_plan_kind_count(plan, 0, PROBE_CROSS), 3);
    /* out of range */
    probe_spec s;
    ck_assert_int_eq(probe_plan_get(plan, 0, 1, 0, 0, 0, &s), -ERANGE);
    ck_assert_int_eq(probe_plan_get(plan, 0, 0, 5, 0, 0, &s), -ERANGE);
    ck_assert_int_eq(probe_plan_get(plan, 0, 0, 0, 4, 0, &s), -ERANGE);
    ck_assert_int_eq(probe_plan_get(plan, 0, 0, 0, 0, 3, &s), -ERANGE);
    ck_assert_uint_eq(probe_plan_expect(plan, 0, 0, 5, 0, &s, 1), 0);
    ck_assert_uint_eq(probe_plan_link_load(plan, 1, PROBE_NIC_T0), 0);
    probe_plan_free(plan);
    probe_plan_free(NULL);
    fab_topo_free(topo);
}
END_TEST

/* Every probe of sender (p, a, k) in |window|, into |out| (per_window entries). */
static void sender_window(const probe_plan *plan, uint64_t window, unsigned p, unsigned a,
                          unsigned k, probe_spec *out)
{
    for (uint32_t i = 0; i < probe_plan_per_window(plan); i++) {
        int rv = probe_plan_get(plan, window, p, a, k, i, &out[i]);
        REQUIRE(rv == 0, "get(%u, %u, %u, %u) = %d", p, a, k, i, rv);
    }
}

START_TEST(test_probe_sched_deterministic)
{
    fab_topo *topo = load_json(mid_json);
    probe_cfg cfg;
    probe_cfg_default(&cfg);
    probe_plan *p1 = plan_of(topo, &cfg), *p2 = plan_of(topo, &cfg);
    cfg.seed ^= 1;
    probe_plan *p3 = plan_of(topo, &cfg);
    uint32_t r = probe_plan_per_window(p1);
    probe_spec *a = calloc(r, sizeof(*a)), *b = calloc(r, sizeof(*b));
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    static const uint64_t windows[] = {0, 1, 2, 1000, 1ull << 40, UINT64_MAX};
    for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
        for (unsigned port = 0; port < 16; port += 5) {
            sender_window(p1, windows[w], 1, 7, port, a);
            sender_window(p2, windows[w], 1, 7, port, b);
            ck_assert_mem_eq(a, b, r * sizeof(*a));
            /* another seed, another plan (same kinds, other partners) */
            sender_window(p3, windows[w], 1, 7, port, b);
            ck_assert(memcmp(a, b, r * sizeof(*a)) != 0);
            /* another window, other partners */
            sender_window(p1, windows[w] + 1, 1, 7, port, b);
            unsigned same = 0, one_way = 0;
            for (uint32_t i = 0; i < r; i++) {
                ck_assert_uint_eq(a[i].kind, b[i].kind);
                if (is_one_way(&a[i])) {
                    one_way++;
                    same += a[i].dst_t0 == b[i].dst_t0 && a[i].dst_port == b[i].dst_port;
                }
            }
            /* by chance 1 in 255 cross and 1 in 15 intra keep their receiver */
            ck_assert_uint_lt(same, one_way / 20);
        }
    }
    free(a);
    free(b);
    probe_plan_free(p1);
    probe_plan_free(p2);
    probe_plan_free(p3);
    fab_topo_free(topo);
}
END_TEST

/* The host cabled to down-port |k| of T0 |a|, or FAB_NONE for a hole. */
static uint32_t host_at(const fab_topo *topo, unsigned p, unsigned a, unsigned k)
{
    fab_peer peer;
    uint32_t sw = fab_switch_at(topo, p, FAB_TIER_T0, a);
    if (fab_switch_peer(topo, sw, k, &peer) != 0 || peer.kind != FAB_PEER_HOST || peer.port != p) {
        return FAB_NONE;
    }
    return peer.id;
}

/* Whether T0 |a| of plane |p| is cabled to T1 |j|. */
static bool uplink_at(const fab_topo *topo, unsigned p, unsigned a, unsigned j)
{
    uint32_t sw = fab_switch_at(topo, p, FAB_TIER_T0, a);
    uint32_t t1 = fab_switch_at(topo, p, FAB_TIER_T1, j);
    fab_switch info;
    fab_peer peer;
    if (fab_switch_get(topo, sw, &info) != 0) {
        return false;
    }
    for (unsigned x = 0; x < info.nports; x++) {
        if (fab_switch_peer(topo, sw, x, &peer) == 0 && peer.kind == FAB_PEER_SWITCH &&
            peer.id == t1) {
            return true;
        }
    }
    return false;
}

/* What is wrong with probe |s| of sender (plane, a, k) = host |src|, or NULL: fields in
 * range, the kind's shape, and the fabric's own path (fab_path_enum) between the ports. */
static const char *probe_fault(const fab_topo *topo, uint32_t nt0, uint32_t nt1, uint32_t np,
                               uint32_t src, const probe_spec *s)
{
    fab_path paths[64];
    probe_link links[6];
    size_t npaths;
    unsigned n = probe_spec_links(s, links), a = s->src_t0, p = s->plane;
    if (s->kind >= PROBE_KINDS || s->t1 >= nt1 || s->dst_t0 >= nt0 || s->dst_port >= np) {
        return "a field out of range";
    }
    bool bounce = s->kind == PROBE_T0_BOUNCE || s->kind == PROBE_T1_BOUNCE;
    if (bounce != (s->dst_t0 == a && s->dst_port == s->src_port)) {
        return "a bounce that does not return, or a one-way probe to itself";
    }
    if (n != (s->kind == PROBE_T0_BOUNCE || s->kind == PROBE_INTRA ? 2u : 4u)) {
        return "the wrong number of links";
    }
    if ((s->kind == PROBE_CROSS) != (s->dst_t0 != a)) {
        return "a cross probe under its own T0, or another kind leaving it";
    }
    if ((s->kind == PROBE_T0_BOUNCE || s->kind == PROBE_INTRA) && s->t1 != 0) {
        return "a T1 on a probe that crosses none";
    }
    uint32_t dst = host_at(topo, p, s->dst_t0, s->dst_port);
    if (src == FAB_NONE || dst == FAB_NONE) {
        return NULL; /* a hole of the grid: the node role sends nothing */
    }
    if (bounce) {
        return s->kind == PROBE_T1_BOUNCE && !uplink_at(topo, p, a, s->t1) ? "no such uplink"
                                                                           : NULL;
    }
    if (fab_path_enum(topo, src, p, dst, p, paths, 64, &npaths) != 0) {
        return "no path between the two host ports";
    }
    bool cross = s->kind == PROBE_CROSS;
    const fab_path *path = cross ? &paths[s->t1] : &paths[0];
    if (npaths != (cross ? nt1 : 1) || !path->usable || path->t1 != (cross ? (int)s->t1 : -1) ||
        path->nhops != (cross ? 3u : 1u) ||
        path->hops[0] != fab_switch_at(topo, p, FAB_TIER_T0, a) ||
        (cross && path->hops[1] != fab_switch_at(topo, p, FAB_TIER_T1, s->t1)) ||
        path->hops[path->nhops - 1] != fab_switch_at(topo, p, FAB_TIER_T0, s->dst_t0)) {
        return "not the fabric's path";
    }
    return NULL;
}

/* Checks every probe of every sender in |window| with probe_fault(). */
static void check_paths(const fab_topo *topo, const probe_plan *plan, uint64_t window)
{
    for (unsigned p = 0; p < probe_plan_planes(plan); p++) {
        uint32_t nt0, nt1, np;
        ck_assert_int_eq(probe_plan_shape(plan, p, &nt0, &nt1, &np), 0);
        ck_assert_uint_eq(nt0, fab_topo_nt0(topo, p));
        ck_assert_uint_eq(nt1, fab_topo_nt1(topo, p));
        for (unsigned a = 0; a < nt0; a++) {
            for (unsigned k = 0; k < np; k++) {
                uint32_t src = host_at(topo, p, a, k);
                for (uint32_t i = 0; i < probe_plan_per_window(plan); i++) {
                    probe_spec s;
                    int rv = probe_plan_get(plan, window, p, a, k, i, &s);
                    REQUIRE(rv == 0 && s.plane == p && s.src_t0 == a && s.src_port == k &&
                                s.index == i,
                            "get(%u, %u, %u, %u) = %d, or not that sender's", p, a, k, i, rv);
                    const char *why = probe_fault(topo, nt0, nt1, np, src, &s);
                    REQUIRE(why == NULL, "probe %u of %u/%u/%u (kind %u, T1 %u, to %u/%u): %s", i,
                            p, a, k, s.kind, s.t1, s.dst_t0, s.dst_port, why);
                }
            }
        }
    }
}

START_TEST(test_probe_sched_paths)
{
    const char *const jsons[] = {mid_json, odd_json, one_t0_json, one_port_json, lone_json};
    fab_topo *topo = load_file(LAB);
    probe_plan *plan = plan_of(topo, NULL);
    check_paths(topo, plan, 0);
    check_paths(topo, plan, 77);
    probe_plan_free(plan);
    fab_topo_free(topo);
    for (size_t f = 0; f < sizeof(jsons) / sizeof(jsons[0]); f++) {
        topo = load_json(jsons[f]);
        plan = plan_of(topo, NULL);
        check_paths(topo, plan, 3);
        probe_plan_free(plan);
        fab_topo_free(topo);
    }
}
END_TEST

static int spec_by_receiver(const void *x, const void *y)
{
    const probe_spec *a = x, *b = y;
    if (a->plane != b->plane) {
        return a->plane < b->plane ? -1 : 1;
    }
    if (a->dst_t0 != b->dst_t0) {
        return a->dst_t0 < b->dst_t0 ? -1 : 1;
    }
    if (a->dst_port != b->dst_port) {
        return a->dst_port < b->dst_port ? -1 : 1;
    }
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Every one-way probe of every sender in |window|, grouped by receiver, against what
 * probe_plan_expect() says each receiver should get: the very same probes, in index order. */
static void check_inverse(const probe_plan *plan, uint64_t window)
{
    uint32_t r = probe_plan_per_window(plan);
    probe_spec *got = NULL, *exp = calloc(r + 1, sizeof(*exp));
    size_t n = 0, cap = 0;
    ck_assert_ptr_nonnull(exp);
    for (unsigned p = 0; p < probe_plan_planes(plan); p++) {
        uint32_t nt0, nt1, np;
        ck_assert_int_eq(probe_plan_shape(plan, p, &nt0, &nt1, &np), 0);
        for (unsigned a = 0; a < nt0; a++) {
            for (unsigned k = 0; k < np; k++) {
                for (uint32_t i = 0; i < r; i++) {
                    if (n == cap) {
                        cap = cap ? 2 * cap : 4096;
                        got = realloc(got, cap * sizeof(*got));
                        ck_assert_ptr_nonnull(got);
                    }
                    int rv = probe_plan_get(plan, window, p, a, k, i, &got[n]);
                    REQUIRE(rv == 0, "get(%u, %u, %u, %u) = %d", p, a, k, i, rv);
                    n += is_one_way(&got[n]);
                }
            }
        }
    }
    if (n > 0) {
        qsort(got, n, sizeof(*got), spec_by_receiver);
    }
    size_t at = 0;
    for (unsigned p = 0; p < probe_plan_planes(plan); p++) {
        uint32_t nt0, nt1, np;
        ck_assert_int_eq(probe_plan_shape(plan, p, &nt0, &nt1, &np), 0);
        uint32_t want = probe_plan_kind_count(plan, p, PROBE_CROSS) +
                        probe_plan_kind_count(plan, p, PROBE_INTRA);
        for (unsigned b = 0; b < nt0; b++) {
            for (unsigned m = 0; m < np; m++) {
                uint32_t c = probe_plan_expect(plan, window, p, b, m, exp, r + 1);
                REQUIRE(c == want, "receiver %u/%u/%u expects %u, not %u", p, b, m, c, want);
                /* a short buffer still gets the count */
                REQUIRE(probe_plan_expect(plan, window, p, b, m, NULL, 0) == want,
                        "the count without a buffer");
                REQUIRE(at + c <= n, "more expected than sent");
                for (uint32_t e = 0; e < c; e++) {
                    const probe_spec *g = &got[at + e];
                    REQUIRE(memcmp(g, &exp[e], sizeof(*g)) == 0,
                            "receiver %u/%u/%u: expected #%u (index %u from %u/%u) but got "
                            "index %u from %u/%u to %u/%u",
                            p, b, m, e, exp[e].index, exp[e].src_t0, exp[e].src_port, g->index,
                            g->src_t0, g->src_port, g->dst_t0, g->dst_port);
                    REQUIRE(e == 0 || exp[e].index > exp[e - 1].index, "index order");
                }
                at += c;
            }
        }
    }
    ck_assert_uint_eq(at, n);
    free(got);
    free(exp);
}

START_TEST(test_probe_sched_expect_inverse)
{
    const char *const jsons[] = {mid_json, odd_json, one_t0_json, one_port_json, lone_json};
    fab_topo *topo = load_file(LAB);
    probe_plan *plan = plan_of(topo, NULL);
    check_inverse(plan, 0);
    check_inverse(plan, 12345);
    probe_plan_free(plan);
    fab_topo_free(topo);
    probe_cfg cfg;
    probe_cfg_default(&cfg);
    cfg.rate_per_port = 101;
    for (size_t f = 0; f < sizeof(jsons) / sizeof(jsons[0]); f++) {
        topo = load_json(jsons[f]);
        plan = plan_of(topo, NULL);
        check_inverse(plan, 5);
        probe_plan_free(plan);
        plan = plan_of(topo, &cfg);
        check_inverse(plan, 1ull << 33);
        probe_plan_free(plan);
        fab_topo_free(topo);
    }
}
END_TEST

/*
 * Per-plane link counters: one slot per directed link (NIC links by T0 * ports + port, T0-T1
 * links by T0 * T1s + T1), and optionally a bitmap of the distinct partners per link (the far
 * host port of the probes over a NIC link, the sender port over a T0-T1 link).
 */
typedef struct counts {
    uint32_t nt0, nt1, np;
    uint32_t *c[PROBE_DIRS];
    uint64_t *seen[PROBE_DIRS]; /* words per link: (nt0 * np + 63) / 64 */
    size_t words;
} counts;

static size_t nlinks(const counts *cn, unsigned dir)
{
    return (size_t)cn->nt0 * (dir <= PROBE_T0_NIC ? cn->np : cn->nt1);
}

static void counts_init(counts *cn, const probe_plan *plan, unsigned p, bool partners)
{
    memset(cn, 0, sizeof(*cn));
    ck_assert_int_eq(probe_plan_shape(plan, p, &cn->nt0, &cn->nt1, &cn->np), 0);
    cn->words = partners ? ((size_t)cn->nt0 * cn->np + 63) / 64 : 0;
    for (unsigned d = 0; d < PROBE_DIRS; d++) {
        cn->c[d] = calloc(nlinks(cn, d), sizeof(uint32_t));
        ck_assert_ptr_nonnull(cn->c[d]);
        if (partners) {
            cn->seen[d] = calloc(nlinks(cn, d) * cn->words, sizeof(uint64_t));
            ck_assert_ptr_nonnull(cn->seen[d]);
        }
    }
}

static void counts_fini(counts *cn)
{
    for (unsigned d = 0; d < PROBE_DIRS; d++) {
        free(cn->c[d]);
        free(cn->seen[d]);
    }
}

static void counts_add(counts *cn, const probe_spec *s)
{
    probe_link links[6];
    unsigned n = probe_spec_links(s, links);
    for (unsigned x = 0; x < n; x++) {
        unsigned d = links[x].dir;
        size_t l = (size_t)links[x].t0 * (d <= PROBE_T0_NIC ? cn->np : cn->nt1) + links[x].other;
        cn->c[d][l]++;
        if (cn->words) {
            /* the partner: the receiver over the sender's uplink, the sender elsewhere */
            size_t who = d == PROBE_NIC_T0 ? (size_t)s->dst_t0 * cn->np + s->dst_port
                                           : (size_t)s->src_t0 * cn->np + s->src_port;
            cn->seen[d][l * cn->words + who / 64] |= 1ull << (who % 64);
        }
    }
}

static unsigned partners(const counts *cn, unsigned d, size_t l)
{
    unsigned n = 0;
    for (size_t w = 0; w < cn->words; w++) {
        n += (unsigned)__builtin_popcountll(cn->seen[d][l * cn->words + w]);
    }
    return n;
}

/* Counts every probe of every sender of plane |p| in |window| and checks that every directed
 * link of a direction carries probe_plan_link_load(); returns the fewest distinct partners of
 * any link per direction in |pmin| (if non-NULL). */
static void check_balance(const probe_plan *plan, unsigned p, uint64_t window,
                          unsigned pmin[PROBE_DIRS])
{
    counts cn;
    counts_init(&cn, plan, p, pmin != NULL);
    uint32_t r = probe_plan_per_window(plan);
    for (unsigned a = 0; a < cn.nt0; a++) {
        for (unsigned k = 0; k < cn.np; k++) {
            for (uint32_t i = 0; i < r; i++) {
                probe_spec s;
                probe_plan_get(plan, window, p, a, k, i, &s);
                counts_add(&cn, &s);
            }
        }
    }
    for (unsigned d = 0; d < PROBE_DIRS; d++) {
        uint32_t load = probe_plan_link_load(plan, p, (probe_dir)d);
        if (pmin) {
            pmin[d] = UINT32_MAX;
        }
        for (size_t l = 0; l < nlinks(&cn, d); l++) {
            REQUIRE(cn.c[d][l] == load, "plane %u dir %u link %zu: %u probes, not %u", p, d, l,
                    cn.c[d][l], load);
            if (pmin) {
                unsigned n = partners(&cn, d, l);
                pmin[d] = n < pmin[d] ? n : pmin[d];
            }
        }
    }
    counts_fini(&cn);
}

START_TEST(test_probe_sched_balance)
{
    fab_topo *topo = load_file(LAB);
    probe_plan *plan = plan_of(topo, NULL);
    unsigned pmin[PROBE_DIRS];
    for (unsigned p = 0; p < 2; p++) {
        check_balance(plan, p, 0, pmin);
        /* 2 ports under each of 4 T0s: every port is a partner of every NIC link (its own by
         * the bounces) */
        ck_assert_uint_eq(pmin[PROBE_NIC_T0], 8);
        ck_assert_uint_eq(pmin[PROBE_T0_NIC], 8);
        ck_assert_uint_eq(probe_plan_link_load(plan, p, PROBE_NIC_T0), 1408);
        ck_assert_uint_eq(probe_plan_link_load(plan, p, PROBE_T0_T1), 2 * 1280 / 2);
    }
    check_balance(plan, 1, 99, NULL);
    probe_plan_free(plan);
    fab_topo_free(topo);

    /* the mid-size fabric: of 256 ports (its own included), every NIC link and every T1-T0
     * link hears from at least 240 in one window (about 250 by chance); every T0-T1 link
     * from all 16 ports of its T0 */
    topo = load_json(mid_json);
    plan = plan_of(topo, NULL);
    for (uint64_t w = 0; w < 3; w++) {
        check_balance(plan, (unsigned)w % 2, w * 1000003, pmin);
        ck_assert_uint_ge(pmin[PROBE_NIC_T0], 240);
        ck_assert_uint_ge(pmin[PROBE_T0_NIC], 240);
        ck_assert_uint_eq(pmin[PROBE_T0_T1], 16);
        ck_assert_uint_ge(pmin[PROBE_T1_T0], 240);
        ck_assert_uint_eq(probe_plan_link_load(plan, 0, PROBE_T1_T0), 1280);
    }
    probe_plan_free(plan);
    fab_topo_free(topo);

    /* J = 3 does not divide D = 4: the T1 stream is rounded to a multiple of 3 */
    topo = load_json(odd_json);
    probe_cfg cfg;
    probe_cfg_default(&cfg);
    cfg.rate_per_port = 101;
    plan = plan_of(topo, &cfg);
    ck_assert_uint_eq(probe_plan_per_window(plan), 101);
    uint32_t nstream = probe_plan_kind_count(plan, 0, PROBE_T1_BOUNCE) +
                       probe_plan_kind_count(plan, 0, PROBE_CROSS);
    ck_assert_uint_eq(nstream % 3, 0);
    ck_assert_uint_eq(probe_plan_link_load(plan, 0, PROBE_T0_T1), 4 * nstream / 3);
    for (uint64_t w = 0; w < 4; w++) {
        /* of 20 grid ports, with only 101 probes a window */
        check_balance(plan, 0, w, pmin);
        ck_assert_uint_ge(pmin[PROBE_NIC_T0], 17);
        ck_assert_uint_ge(pmin[PROBE_T0_NIC], 17);
        ck_assert_uint_eq(pmin[PROBE_T0_T1], 4);
        ck_assert_uint_ge(pmin[PROBE_T1_T0], 18);
    }
    probe_plan_free(plan);
    fab_topo_free(topo);
}
END_TEST

/* With fewer T1 bounces a window than T1s, a port's bounces sweep every T1 within
 * ceil(J / n_B) windows, and the balance still holds in every one of them. */
START_TEST(test_probe_sched_t1_sweep)
{
    fab_topo *topo = load_json(mid_json);
    probe_cfg cfg;
    probe_cfg_default(&cfg);
    cfg.rate_per_port = 22; /* 20 in the T1 stream, 4 of them bounces, for 16 T1s */
    probe_plan *plan = plan_of(topo, &cfg);
    uint32_t nb = probe_plan_kind_count(plan, 1, PROBE_T1_BOUNCE);
    ck_assert_uint_eq(nb, 4);
    ck_assert_uint_eq(probe_plan_link_load(plan, 1, PROBE_T0_T1),
                      16 * (nb + probe_plan_kind_count(plan, 1, PROBE_CROSS)) / 16);
    probe_spec s[22] = {{0}};
    for (unsigned port = 0; port < 16; port++) {
        for (uint64_t w0 = 0; w0 < 40; w0 += 7) {
            unsigned visited = 0;
            for (uint64_t w = w0; w < w0 + 4; w++) {
                sender_window(plan, w, 1, 9, port, s);
                for (uint32_t i = 0; i < 22; i++) {
                    visited |= s[i].kind == PROBE_T1_BOUNCE ? 1u << s[i].t1 : 0;
                }
            }
            ck_assert_uint_eq(visited, 0xffff);
        }
    }
    for (uint64_t w = 0; w < 5; w++) {
        check_balance(plan, 1, w, NULL);
    }
    probe_plan_free(plan);
    fab_topo_free(topo);
}
END_TEST

/* Fabrics that cannot carry every kind: the missing kinds' shares go to the bounces, the
 * window keeps its size, and the balance holds. */
START_TEST(test_probe_sched_edges)
{
    static const struct {
        const char *json;
        uint32_t n[PROBE_KINDS];
    } cases[] = {
        {one_t0_json, {64, 1280, 0, 64}},
        {one_port_json, {128, 256, 1024, 0}},
        {lone_json, {128, 1280, 0, 0}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        fab_topo *topo = load_json(cases[c].json);
        probe_plan *plan = plan_of(topo, NULL);
        ck_assert_uint_eq(probe_plan_per_window(plan), 1408);
        for (unsigned p = 0; p < probe_plan_planes(plan); p++) {
            for (unsigned k = 0; k < PROBE_KINDS; k++) {
                ck_assert_uint_eq(probe_plan_kind_count(plan, p, (probe_kind)k), cases[c].n[k]);
            }
            for (uint64_t w = 0; w < 3; w++) {
                check_balance(plan, p, w, NULL);
            }
        }
        probe_plan_free(plan);
        fab_topo_free(topo);
    }
}
END_TEST

/*
 * The full fabric: 131,072 NICs a plane. Every probe of every sender of one plane over one
 * window (184 million) is counted on the links it crosses: each directed NIC link carries
 * exactly 1,408, each directed T0-T1 link exactly 1,280. Then the partners of a sample.
 */
START_TEST(test_probe_sched_full_balance)
{
    double t0 = now_s();
    fab_topo *topo = load_file(FULL);
    double t1 = now_s();
    probe_plan *plan = plan_of(topo, NULL);
    double t2 = now_s();
    const unsigned p = 5;
    const uint64_t window = 1776000000;
    uint32_t nt0, nt1, np;
    ck_assert_uint_eq(probe_plan_planes(plan), 8);
    ck_assert_int_eq(probe_plan_shape(plan, p, &nt0, &nt1, &np), 0);
    ck_assert(nt0 == 512 && nt1 == 256 && np == 256);
    uint32_t r = probe_plan_per_window(plan);
    ck_assert_uint_eq(r, 1408);
    ck_assert_uint_eq(probe_plan_link_load(plan, p, PROBE_NIC_T0), 1408);
    ck_assert_uint_eq(probe_plan_link_load(plan, p, PROBE_T0_NIC), 1408);
    ck_assert_uint_eq(probe_plan_link_load(plan, p, PROBE_T0_T1), 1280);
    ck_assert_uint_eq(probe_plan_link_load(plan, p, PROBE_T1_T0), 1280);

    /* compact counters: 4 x 131,072 links x 2 bytes */
    uint16_t *up = calloc((size_t)nt0 * np, 2), *down = calloc((size_t)nt0 * np, 2);
    uint16_t *t0t1 = calloc((size_t)nt0 * nt1, 2), *t1t0 = calloc((size_t)nt0 * nt1, 2);
    ck_assert(up && down && t0t1 && t1t0);
    uint64_t kinds[PROBE_KINDS] = {0};
    for (unsigned a = 0; a < nt0; a++) {
        for (unsigned k = 0; k < np; k++) {
            for (uint32_t i = 0; i < r; i++) {
                probe_spec s;
                probe_plan_get(plan, window, p, a, k, i, &s);
                kinds[s.kind]++;
                up[s.src_t0 * np + s.src_port]++;
                down[s.dst_t0 * np + s.dst_port]++;
                if (s.kind == PROBE_T1_BOUNCE || s.kind == PROBE_CROSS) {
                    t0t1[s.src_t0 * nt1 + s.t1]++;
                    t1t0[s.dst_t0 * nt1 + s.t1]++;
                }
            }
        }
    }
    double t3 = now_s();
    for (size_t l = 0; l < (size_t)nt0 * np; l++) {
        REQUIRE(up[l] == 1408 && down[l] == 1408, "NIC link %zu: %u up, %u down", l, up[l],
                down[l]);
    }
    for (size_t l = 0; l < (size_t)nt0 * nt1; l++) {
        REQUIRE(t0t1[l] == 1280 && t1t0[l] == 1280, "T0-T1 link %zu: %u up, %u down", l, t0t1[l],
                t1t0[l]);
    }
    ck_assert_uint_eq(kinds[PROBE_T0_BOUNCE], 64ull * nt0 * np);
    ck_assert_uint_eq(kinds[PROBE_T1_BOUNCE], 256ull * nt0 * np);
    ck_assert_uint_eq(kinds[PROBE_CROSS], 1024ull * nt0 * np);
    ck_assert_uint_eq(kinds[PROBE_INTRA], 64ull * nt0 * np);

    /*
     * Partners. A receiver's 1,024 cross probes come from 1,024 distinct ports of ~442 of the
     * 511 other T0s (1,024 draws); every T1-to-T0 link of T0 b brings 1,024 cross probes from
     * as many T0s; every port's T1 bounces visit every T1 once.
     */
    probe_spec *exp = calloc(r, sizeof(*exp)), *mine = calloc(r, sizeof(*mine));
    uint8_t *seen_t0 = calloc(nt0, 1), *seen_port = calloc((size_t)nt0 * np, 1);
    uint64_t *seen_t1t0 = calloc((size_t)nt1 * 8, sizeof(uint64_t)); /* 512 bits per T1 */
    ck_assert(exp && mine && seen_t0 && seen_port && seen_t1t0);
    const unsigned b = 311;
    unsigned min_t0 = UINT32_MAX, min_port = UINT32_MAX;
    for (unsigned m = 0; m < np; m++) {
        uint32_t n = probe_plan_expect(plan, window, p, b, m, exp, r);
        ck_assert_uint_eq(n, 1088);
        unsigned dt0 = 0, dport = 0;
        memset(seen_t0, 0, nt0);
        memset(seen_port, 0, (size_t)nt0 * np);
        for (uint32_t e = 0; e < n; e++) {
            if (exp[e].kind != PROBE_CROSS) {
                continue;
            }
            dt0 += !seen_t0[exp[e].src_t0];
            seen_t0[exp[e].src_t0] = 1;
            dport += !seen_port[exp[e].src_t0 * np + exp[e].src_port];
            seen_port[exp[e].src_t0 * np + exp[e].src_port] = 1;
            seen_t1t0[exp[e].t1 * 8 + exp[e].src_t0 / 64] |= 1ull << (exp[e].src_t0 % 64);
        }
        min_t0 = dt0 < min_t0 ? dt0 : min_t0;
        min_port = dport < min_port ? dport : min_port;
        /* the sender side of the same port */
        sender_window(plan, window, p, b, m, mine);
        memset(seen_t0, 0, nt0);
        unsigned t1s = 0, dst_t0 = 0;
        uint64_t t1seen[4] = {0};
        for (uint32_t i = 0; i < r; i++) {
            if (mine[i].kind == PROBE_T1_BOUNCE) {
                t1s += !(t1seen[mine[i].t1 / 64] >> (mine[i].t1 % 64) & 1);
                t1seen[mine[i].t1 / 64] |= 1ull << (mine[i].t1 % 64);
            } else if (mine[i].kind == PROBE_CROSS) {
                dst_t0 += !seen_t0[mine[i].dst_t0];
                seen_t0[mine[i].dst_t0] = 1;
            }
        }
        ck_assert_uint_eq(t1s, 256);
        ck_assert_uint_ge(dst_t0, 400);
    }
    ck_assert_uint_ge(min_t0, 400);
    ck_assert_uint_ge(min_port, 1000);
    unsigned min_link = UINT32_MAX;
    for (unsigned j = 0; j < nt1; j++) {
        unsigned n = 0;
        for (unsigned w = 0; w < 8; w++) {
            n += (unsigned)__builtin_popcountll(seen_t1t0[j * 8 + w]);
        }
        min_link = n < min_link ? n : min_link;
    }
    ck_assert_uint_ge(min_link, 400);
    double t4 = now_s();
    fprintf(stderr,
            "full fabric plane %u: load %.2f s, plan %.3f s, %llu probes counted in %.2f s "
            "(%.1f ns each), partners %.2f s; a receiver hears from >= %u T0s, >= %u ports; a "
            "T1-T0 link from >= %u T0s\n",
            p, t1 - t0, t2 - t1, (unsigned long long)nt0 * np * r, t3 - t2,
            (t3 - t2) * 1e9 / ((double)nt0 * np * r), t4 - t3, min_t0, min_port, min_link);
    free(exp);
    free(mine);
    free(seen_t0);
    free(seen_port);
    free(seen_t1t0);
    free(up);
    free(down);
    free(t0t1);
    free(t1t0);
    probe_plan_free(plan);
    fab_topo_free(topo);
}
END_TEST

Suite *probe_sched_suite(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("sched");
    tcase_add_test(tc, test_probe_sched_rate);
    tcase_add_test(tc, test_probe_sched_invalid);
    tcase_add_test(tc, test_probe_sched_deterministic);
    tcase_add_test(tc, test_probe_sched_paths);
    tcase_add_test(tc, test_probe_sched_expect_inverse);
    tcase_add_test(tc, test_probe_sched_balance);
    tcase_add_test(tc, test_probe_sched_t1_sweep);
    tcase_add_test(tc, test_probe_sched_edges);
    tcase_add_test(tc, test_probe_sched_full_balance);
    /* the full-fabric case takes seconds; leave room for sanitizer builds */
    tcase_set_timeout(tc, 240);
    suite_add_tcase(s, tc);
    return s;
}
