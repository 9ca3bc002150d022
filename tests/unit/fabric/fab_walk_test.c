/* SPDX-License-Identifier: MIT */
/* The proof by walking: packets forwarded through the computed tables as the kernel would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_test.h"

/*
 * An independent model of the data plane. Each switch gets a longest-prefix-match table
 * built from nothing but fab_tables_routes() and fab_route_prefix(); a packet is forwarded
 * the way the kernel forwards it with these routes:
 *  - look up the destination address;
 *  - the switch's uN (End, flavour next-csid, lblen 32, nflen 16): if the argument (bits
 *    48..127) is all zero there is nothing to shift and, with no SRH, the packet is dropped;
 *    otherwise shift bits 48..127 left by 16 and look up again on the same switch;
 *  - a forward route: decrement the hop limit (dropped at 0) and move to whatever is cabled
 *    to that port (fab_switch_peer); a host port delivers the packet when the destination is
 *    the address the host port owns (fab_host_usid_addr), and drops it otherwise;
 *  - no route: dropped.
 * The LPM handles any prefix lengths: entries sorted by (length descending, masked prefix),
 * one binary search per distinct length.
 */
typedef struct lpm_entry {
    uint64_t hi, lo; /* the prefix, masked to its length */
    uint32_t route;  /* index into the switch's routes */
    uint8_t len;
} lpm_entry;

typedef struct lpm_table {
    lpm_entry *e;
    size_t n;
    uint8_t lens[129]; /* distinct lengths, longest first */
    size_t start[130]; /* lens[i] occupies e[start[i] .. start[i + 1]) */
    unsigned nlens;
} lpm_table;

typedef struct walker {
    const fab_topo *topo;
    const fab_tables *tables;
    lpm_table **lpm; /* per switch, built on first visit */
    uint32_t nsw;
    uint64_t lookups;
} walker;

typedef enum walk_outcome {
    WALK_DELIVERED = 0,
    WALK_DROP_NO_ROUTE,
    WALK_DROP_END_NO_ARG, /* uN with nothing left to shift */
    WALK_DROP_HOP_LIMIT,
    WALK_DROP_NO_PEER,   /* the egress port has no cable */
    WALK_DROP_NOT_OWNER, /* reached a host port that does not own the address */
} walk_outcome;

static const char *const outcome_names[] = {
    "delivered", "no route",           "End without argument",
    "hop limit", "port without cable", "host does not own the address"};

#define WALK_MAX_VISITS 80

typedef struct walk_result {
    walk_outcome outcome;
    uint32_t host; /* the host port reached, when delivered or not the owner */
    unsigned port;
    uint32_t visited[WALK_MAX_VISITS]; /* switches in order of arrival */
    unsigned nvisited;
} walk_result;

static void split(const uint8_t a[16], uint64_t *phi, uint64_t *plo)
{
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | a[i];
        lo = lo << 8 | a[8 + i];
    }
    *phi = hi;
    *plo = lo;
}

static void mask(unsigned len, uint64_t *phi, uint64_t *plo)
{
    uint64_t mhi = len == 0 ? 0 : len >= 64 ? ~0ull : ~0ull << (64 - len);
    uint64_t mlo = len <= 64 ? 0 : len >= 128 ? ~0ull : ~0ull << (128 - len);
    *phi &= mhi;
    *plo &= mlo;
}

static int cmp_entry(const void *x, const void *y)
{
    const lpm_entry *a = x, *b = y;
    if (a->len != b->len) {
        return a->len > b->len ? -1 : 1;
    }
    if (a->hi != b->hi) {
        return a->hi < b->hi ? -1 : 1;
    }
    if (a->lo != b->lo) {
        return a->lo < b->lo ? -1 : 1;
    }
    return 0;
}

static lpm_table *lpm_build(const walker *w, uint32_t sw)
{
    size_t n;
    const fab_route *r = fab_tables_routes(w->tables, sw, &n);
    lpm_table *t = calloc(1, sizeof(*t));
    ck_assert_ptr_nonnull(t);
    t->e = calloc(n ? n : 1, sizeof(lpm_entry));
    ck_assert_ptr_nonnull(t->e);
    t->n = n;
    for (size_t i = 0; i < n; i++) {
        uint8_t pfx[16];
        fab_route_prefix(w->topo, &r[i], pfx);
        lpm_entry *e = &t->e[i];
        e->len = 48; /* every route of the plan is block:usid::/48 */
        split(pfx, &e->hi, &e->lo);
        mask(e->len, &e->hi, &e->lo);
        e->route = (uint32_t)i;
    }
    qsort(t->e, n, sizeof(lpm_entry), cmp_entry);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && cmp_entry(&t->e[i - 1], &t->e[i]) == 0) {
            ck_abort_msg("switch %u has two routes for one prefix", sw);
        }
        if (t->nlens == 0 || t->lens[t->nlens - 1] != t->e[i].len) {
            t->lens[t->nlens] = t->e[i].len;
            t->start[t->nlens++] = i;
        }
    }
    t->start[t->nlens] = n;
    return t;
}

/* The route of |sw| that the longest matching prefix of |dst| selects, or NULL. */
static const fab_route *lpm_lookup(walker *w, uint32_t sw, const uint8_t dst[16])
{
    if (!w->lpm[sw]) {
        w->lpm[sw] = lpm_build(w, sw);
    }
    const lpm_table *t = w->lpm[sw];
    w->lookups++;
    uint64_t hi, lo;
    split(dst, &hi, &lo);
    for (unsigned l = 0; l < t->nlens; l++) {
        uint64_t mhi = hi, mlo = lo;
        mask(t->lens[l], &mhi, &mlo);
        size_t a = t->start[l], b = t->start[l + 1];
        while (a < b) {
            size_t m = a + (b - a) / 2;
            const lpm_entry *e = &t->e[m];
            if (e->hi == mhi && e->lo == mlo) {
                size_t n;
                return &fab_tables_routes(w->tables, sw, &n)[e->route];
            }
            if (e->hi < mhi || (e->hi == mhi && e->lo < mlo)) {
                a = m + 1;
            } else {
                b = m;
            }
        }
    }
    return NULL;
}

static void walker_init(walker *w, const fab_topo *topo, const fab_tables *tables)
{
    memset(w, 0, sizeof(*w));
    w->topo = topo;
    w->tables = tables;
    w->nsw = fab_topo_nswitches(topo);
    w->lpm = calloc(w->nsw, sizeof(lpm_table *));
    ck_assert_ptr_nonnull(w->lpm);
}

static void walker_fini(walker *w)
{
    for (uint32_t i = 0; i < w->nsw; i++) {
        if (w->lpm[i]) {
            free(w->lpm[i]->e);
            free(w->lpm[i]);
        }
    }
    free(w->lpm);
}

/* Sends a packet for |dst| into switch |sw| (as if from a host port cabled to it). */
static void walk(walker *w, uint32_t sw, const uint8_t dst[16], walk_result *res)
{
    static const uint8_t zero[10];
    uint8_t a[16];
    unsigned hop_limit = 64;
    memcpy(a, dst, 16);
    res->nvisited = 0;
    res->host = FAB_NONE;
    res->visited[res->nvisited++] = sw;
    for (;;) {
        const fab_route *r = lpm_lookup(w, sw, a);
        if (!r) {
            res->outcome = WALK_DROP_NO_ROUTE;
            return;
        }
        if (r->action == FAB_ACT_UN) {
            if (memcmp(a + 6, zero, 10) == 0) {
                res->outcome = WALK_DROP_END_NO_ARG;
                return;
            }
            /* next-csid with a 32-bit block and 16-bit nodes: shift the argument */
            memmove(a + 4, a + 6, 10);
            a[14] = 0;
            a[15] = 0;
            continue;
        }
        if (--hop_limit == 0) {
            res->outcome = WALK_DROP_HOP_LIMIT;
            return;
        }
        fab_peer peer;
        FAB_REQUIRE(fab_switch_peer(w->topo, sw, r->port, &peer) == 0, "switch %u has no port %u",
                    sw, (unsigned)r->port);
        if (peer.kind == FAB_PEER_NONE) {
            res->outcome = WALK_DROP_NO_PEER;
            return;
        }
        if (peer.kind == FAB_PEER_HOST) {
            uint8_t owned[16];
            res->host = peer.id;
            res->port = peer.port;
            FAB_REQUIRE(fab_host_usid_addr(w->topo, peer.id, peer.port, owned) == 0,
                        "host %u port %u is cabled but owns no address", peer.id, peer.port);
            res->outcome = memcmp(owned, a, 16) == 0 ? WALK_DELIVERED : WALK_DROP_NOT_OWNER;
            return;
        }
        sw = peer.id;
        if (res->nvisited < WALK_MAX_VISITS) {
            res->visited[res->nvisited++] = sw;
        }
    }
}

/* Walks |outer| from host port (src, p) and checks the outcome against |path|. */
static void walk_check(walker *w, uint32_t src, uint32_t dst, unsigned p, const fab_path *path,
                       const uint8_t outer[16])
{
    uint32_t sw;
    unsigned x;
    walk_result res;
    char text[46];
    FAB_REQUIRE(fab_host_attach(w->topo, src, p, &sw, &x) == 0, "host %u port %u", src, p);
    walk(w, sw, outer, &res);
    if (!path->usable) {
        /* dropped on a switch: it reaches no host port at all */
        FAB_REQUIRE(res.outcome != WALK_DELIVERED && res.host == FAB_NONE,
                    "%u:%u -> %u:%u over the missing cable of T1 %d reached %u:%u (%s)", src, p,
                    dst, p, path->t1, res.host, res.port, outcome_names[res.outcome]);
        return;
    }
    FAB_REQUIRE(res.outcome == WALK_DELIVERED,
                "%u:%u -> %u:%u EV 0x%08x to %s: %s after %u switches", src, p, dst, p, path->ev,
                fab_addr_str(outer, text), outcome_names[res.outcome], res.nvisited);
    FAB_REQUIRE(res.host == dst && res.port == p, "%u:%u -> %u:%u EV 0x%08x delivered to %u:%u",
                src, p, dst, p, path->ev, res.host, res.port);
    FAB_REQUIRE(res.nvisited == path->nhops, "%u:%u -> %u:%u EV 0x%08x: %u switches, not %u", src,
                p, dst, p, path->ev, res.nvisited, path->nhops);
    for (unsigned i = 0; i < path->nhops; i++) {
        FAB_REQUIRE(res.visited[i] == path->hops[i],
                    "%u:%u -> %u:%u EV 0x%08x: hop %u is switch %u, not %u", src, p, dst, p,
                    path->ev, i, res.visited[i], path->hops[i]);
    }
}

/* The T1 a path crosses must be the T1 its EV names. */
static void check_t1(const fab_topo *t, const fab_path *path, uint32_t ev)
{
    if (path->nhops == 3) {
        fab_switch s;
        ck_assert_int_eq(fab_switch_get(t, path->hops[1], &s), 0);
        FAB_REQUIRE(s.tier == FAB_TIER_T1 && s.index == fab_ev_t1(fab_topo_plan(t), ev) &&
                        s.plane == fab_ev_plane(fab_topo_plan(t), ev),
                    "EV 0x%08x crosses %s", ev, s.name);
    }
}

typedef struct walk_counts {
    uint64_t delivered, dropped;
} walk_counts;

/* Every (source host port, destination host port, EV) of a fabric: each EV of the plane,
 * from the enumeration and from the template with random salts. */
static walk_counts walk_all(const char *file)
{
    fab_topo *t = fab_test_load_file(file);
    fab_tables *tab = fab_test_tables(t);
    const fab_plan *plan = fab_topo_plan(t);
    walker w;
    walker_init(&w, t, tab);
    walk_counts c = {0, 0};
    uint64_t rng = 0x1234567;
    for (uint32_t src = 0; src < fab_topo_nhosts(t); src++) {
        for (uint32_t dst = 0; dst < fab_topo_nhosts(t); dst++) {
            fab_template tmpl;
            if (src == dst || fab_template_init(t, src, dst, &tmpl) != 0) {
                continue;
            }
            for (unsigned p = 0; p < fab_topo_planes(t); p++) {
                fab_path paths[64];
                size_t n;
                if (!(tmpl.planes_ok & (1u << p))) {
                    continue;
                }
                ck_assert_int_eq(fab_path_enum(t, src, p, dst, p, paths, 64, &n), 0);
                for (unsigned j = 0; j < fab_topo_nt1(t, p); j++) {
                    const fab_path *path = &paths[n == 1 ? 0 : j];
                    check_t1(t, path, fab_ev_make(plan, p, j, 0));
                    walk_check(&w, src, dst, p, path, path->outer);
                    for (int k = 0; k < 4; k++) {
                        uint32_t ev = fab_ev_make(plan, p, j, (uint32_t)fab_test_rand(&rng));
                        uint8_t outer[16];
                        fab_path byev;
                        ck_assert_int_eq(fab_template_outer(&tmpl, ev, outer), 0);
                        ck_assert_int_eq(fab_path_of_ev(t, src, dst, ev, &byev), 0);
                        ck_assert_mem_eq(byev.outer, outer, 16);
                        check_t1(t, &byev, ev);
                        walk_check(&w, src, dst, p, &byev, outer);
                    }
                    if (path->usable) {
                        c.delivered += 5;
                    } else {
                        c.dropped += 5;
                    }
                }
            }
        }
    }
    walker_fini(&w);
    fab_tables_free(tab);
    fab_topo_free(t);
    return c;
}

START_TEST(test_fab_walk_lab_every_triple)
{
    walk_counts c = walk_all(FAB_TEST_LAB);
    /* 2 planes x 8 x 7 ordered pairs; 6 pairs per plane share a T0 (one path, both EVs) */
    ck_assert_uint_eq(c.delivered, 2ull * 8 * 7 * 2 * 5);
    ck_assert_uint_eq(c.dropped, 0);
    printf("fabric.walk: lab: %llu walks delivered\n", (unsigned long long)c.delivered);
}
END_TEST

START_TEST(test_fab_walk_overrides_every_triple)
{
    walk_counts c = walk_all(FAB_TEST_SMALL);
    ck_assert_uint_gt(c.delivered, 0);
    /* plane 0: p0-t0-1 (h4-h7) lost T1 0; plane 1: p1-t0-2 (h8, h9) lost T1 1, h5 is absent.
     * Ordered cross-T0 pairs over the broken T1: plane 0 2 x 4 x 6, plane 1 2 x 2 x 7. */
    ck_assert_uint_eq(c.dropped, 5ull * (2 * 4 * 6 + 2 * 2 * 7));
    printf("fabric.walk: small with overrides: %llu walks delivered, %llu dropped\n",
           (unsigned long long)c.delivered, (unsigned long long)c.dropped);
}
END_TEST

START_TEST(test_fab_walk_full_random)
{
    const uint32_t triples = 100000;
    double t0 = fab_test_now();
    fab_topo *t = fab_test_load_file(FAB_TEST_FULL);
    fab_tables *tab = fab_test_tables(t);
    const fab_plan *plan = fab_topo_plan(t);
    double t1 = fab_test_now();
    walker w;
    walker_init(&w, t, tab);
    uint64_t rng = 0xfab0fab0fab0fab0ull;
    uint32_t nhosts = fab_topo_nhosts(t), local = 0;
    unsigned planes = fab_topo_planes(t);
    for (uint32_t i = 0; i < triples; i++) {
        uint32_t src = fab_test_rand_below(&rng, nhosts), dst;
        unsigned p = fab_test_rand_below(&rng, planes);
        if (i % 16 == 0) {
            /* a neighbour on the same T0, so that T0-local paths are walked too */
            uint32_t sw;
            unsigned x;
            fab_switch s;
            fab_peer q;
            ck_assert_int_eq(fab_host_attach(t, src, p, &sw, &x), 0);
            ck_assert_int_eq(fab_switch_get(t, sw, &s), 0);
            do {
                ck_assert_int_eq(fab_switch_peer(t, sw, fab_test_rand_below(&rng, s.nports), &q),
                                 0);
            } while (q.kind != FAB_PEER_HOST || q.id == src);
            dst = q.id;
        } else {
            do {
                dst = fab_test_rand_below(&rng, nhosts);
            } while (dst == src);
        }
        uint32_t j = fab_test_rand_below(&rng, fab_topo_nt1(t, p));
        uint32_t ev = fab_ev_make(plan, p, j, (uint32_t)fab_test_rand(&rng));
        fab_template tmpl;
        fab_path path;
        uint8_t outer[16];
        FAB_REQUIRE(fab_template_init(t, src, dst, &tmpl) == 0, "template %u -> %u", src, dst);
        FAB_REQUIRE(fab_template_outer(&tmpl, ev, outer) == 0, "outer of 0x%08x", ev);
        FAB_REQUIRE(fab_path_of_ev(t, src, dst, ev, &path) == 0, "path of 0x%08x", ev);
        FAB_REQUIRE(memcmp(path.outer, outer, 16) == 0, "template and path of 0x%08x differ", ev);
        FAB_REQUIRE(path.usable, "%u -> %u EV 0x%08x unusable in a complete fabric", src, dst, ev);
        local += path.nhops == 1;
        check_t1(t, &path, ev);
        walk_check(&w, src, dst, p, &path, outer);
    }
    double t2 = fab_test_now();
    ck_assert_uint_ge(local, triples / 16);
    printf("fabric.walk: full: %u triples (%u T0-local) walked in %.3f s, %llu lookups; "
           "load and tables %.3f s\n",
           triples, local, t2 - t1, (unsigned long long)w.lookups, t1 - t0);
    walker_fini(&w);
    fab_tables_free(tab);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_fab_walk_model_drops)
{
    /* the walker itself: what the kernel drops, it drops */
    fab_topo *t = fab_test_load_file(FAB_TEST_LAB);
    fab_tables *tab = fab_test_tables(t);
    const fab_plan *plan = fab_topo_plan(t);
    walker w;
    walker_init(&w, t, tab);
    walk_result res;
    uint8_t a[16];
    uint32_t t0 = fab_test_switch(t, "p0-t0-0");
    /* a container that ends on a switch's own uN */
    fab_plan_container(plan, (const uint16_t[]){0x0800}, 1, a);
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DROP_END_NO_ARG);
    fab_plan_container(plan, (const uint16_t[]){0x0800, 0x1000}, 2, a);
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DROP_END_NO_ARG);
    ck_assert_uint_eq(res.nvisited, 2);
    /* a uSID nobody routes; another host's address */
    fab_plan_container(plan, (const uint16_t[]){0x0800, 0x1005}, 2, a);
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DROP_NO_ROUTE);
    fab_plan_container(plan, (const uint16_t[]){0x0801, 0x1801}, 2, a);
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DROP_NO_ROUTE);
    /* back and forth, T0 0 -> T1 0 -> T0 0 -> ..., until the container ends on a uN */
    fab_plan_container(plan, (const uint16_t[]){0x0800, 0x1000, 0x0800, 0x1000, 0x0800, 0x1000}, 6,
                       a);
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DROP_END_NO_ARG);
    ck_assert_uint_eq(res.nvisited, 6);
    /* the host port's own address is delivered straight from its T0 */
    fab_plan_container(plan, (const uint16_t[]){0x1801}, 1, a);
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DELIVERED);
    ck_assert_uint_eq(res.host, 1);
    ck_assert_uint_eq(res.port, 0);
    /* an address with bits after the last uSID is not the host's */
    a[15] = 1;
    walk(&w, t0, a, &res);
    ck_assert_int_eq(res.outcome, WALK_DROP_NOT_OWNER);
    walker_fini(&w);
    fab_tables_free(tab);
    fab_topo_free(t);
}
END_TEST

Suite *fab_walk_suite(void)
{
    Suite *s = suite_create("walk");
    TCase *tc = tcase_create("walk");
    tcase_add_test(tc, test_fab_walk_model_drops);
    tcase_add_test(tc, test_fab_walk_lab_every_triple);
    tcase_add_test(tc, test_fab_walk_overrides_every_triple);
    tcase_add_test(tc, test_fab_walk_full_random);
    /* seconds in a plain build; the CTest TIMEOUT bounds the whole suite */
    tcase_set_timeout(tc, 240);
    suite_add_tcase(s, tc);
    return s;
}
