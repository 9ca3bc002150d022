/* SPDX-License-Identifier: MIT */
/* The blast radius against a brute force that walks every host pair's paths with
 * fab_path_enum (the fabric model's own path list, missing cables and all) and checks each
 * hop against the denied elements: on the lab fabric and on one with missing cables, for
 * hand-picked and for random sets of entries. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_blast.h"
#include "util_test.h"

#define LAB CTL_TEST_ROOT "/deploy/topologies/lab.json"
#define SMALL CTL_TEST_ROOT "/tests/unit/fabric/data/small.json"

static fab_topo *load(const char *path)
{
    fab_topo *t;
    fab_error err;
    ck_assert_msg(fab_topo_load_file(path, &t, &err) == 0, "%s: %s", path, err.msg);
    return t;
}

static ctl_blast_entry entry(const fab_topo *t, const char *name, unsigned dirs)
{
    ctl_blast_entry e = {.dirs = dirs};
    char why[256];
    ck_assert_msg(ctl_element_parse(t, name, &e.el, why, sizeof(why)) == 0, "%s: %s", name, why);
    return e;
}

static bool denies_switch(const ctl_blast_entry *v, size_t n, uint32_t sw)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].el.kind == CTL_EL_SWITCH && v[i].el.sw == sw) {
            return true;
        }
    }
    return false;
}

static bool denies_link(const fab_topo *t, const ctl_blast_entry *v, size_t n, uint32_t t0,
                        uint32_t t1, unsigned dir)
{
    fab_switch a, b;
    fab_switch_get(t, t0, &a);
    fab_switch_get(t, t1, &b);
    for (size_t i = 0; i < n; i++) {
        if (v[i].el.kind == CTL_EL_LINK && v[i].el.plane == a.plane && v[i].el.t0 == a.index &&
            v[i].el.t1 == b.index && (v[i].dirs & dir)) {
            return true;
        }
    }
    return false;
}

static bool denies_port(const ctl_blast_entry *v, size_t n, uint32_t host, unsigned p, unsigned dir)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].el.kind == CTL_EL_PORT && v[i].el.host == host && v[i].el.plane == p &&
            (v[i].dirs & dir)) {
            return true;
        }
    }
    return false;
}

/* A pair's capacity share under entries |v|, path by path; -1 when it has no path. */
static double brute_pair(const fab_topo *t, uint32_t s, uint32_t d, const ctl_blast_entry *v,
                         size_t n)
{
    double sum = 0;
    unsigned planes = 0;
    for (unsigned p = 0; p < fab_topo_planes(t); p++) {
        fab_path paths[64];
        size_t np;
        if (fab_path_enum(t, s, p, d, p, paths, 64, &np) != 0) {
            continue;
        }
        unsigned base = 0, ok = 0;
        for (size_t k = 0; k < np; k++) {
            const fab_path *x = &paths[k];
            if (!x->usable) {
                continue;
            }
            base++;
            bool bad = denies_port(v, n, s, p, 1) || denies_port(v, n, d, p, 2);
            for (unsigned h = 0; h < x->nhops; h++) {
                bad |= denies_switch(v, n, x->hops[h]);
            }
            if (x->nhops == 3) {
                bad |= denies_link(t, v, n, x->hops[0], x->hops[1], 1) ||
                       denies_link(t, v, n, x->hops[2], x->hops[1], 2);
            }
            ok += !bad;
        }
        if (base) {
            planes++;
            sum += (double)ok / base;
        }
    }
    return planes ? sum / planes : -1;
}

static void brute(const fab_topo *t, const ctl_blast_entry *v, size_t n, double floor,
                  ctl_blast_result *res)
{
    memset(res, 0, sizeof(*res));
    res->min_left = 1;
    uint32_t nh = fab_topo_nhosts(t);
    for (uint32_t s = 0; s < nh; s++) {
        for (uint32_t d = 0; d < nh; d++) {
            if (s == d) {
                continue;
            }
            double before = brute_pair(t, s, d, v, n - 1), after = brute_pair(t, s, d, v, n);
            if (before < 0) {
                continue;
            }
            res->pairs++;
            if (after < before - 1e-9) {
                res->affected++;
                res->cut_off += after < 1e-9;
                res->below_floor += after < floor - 1e-9;
                res->min_left = fmin(res->min_left, after);
                res->by_left[(int)(after * 10 + 1e-9) > 9 ? 9 : (int)(after * 10 + 1e-9)]++;
            }
        }
    }
}

/* ctl_blast_eval of the last of |v| over the others, as the brute force has it. */
static void check(const fab_topo *t, const ctl_blast *b, const ctl_blast_entry *v, size_t n,
                  double floor, ctl_blast_result *got)
{
    ctl_blast_result want;
    ctl_blast_eval(b, v, n - 1, &v[n - 1], floor, got);
    brute(t, v, n, floor, &want);
    ck_assert_uint_eq(got->pairs, want.pairs);
    ck_assert_uint_eq(got->affected, want.affected);
    ck_assert_uint_eq(got->cut_off, want.cut_off);
    ck_assert_uint_eq(got->below_floor, want.below_floor);
    ck_assert_double_eq_tol(got->min_left, want.min_left, 1e-9);
    for (int i = 0; i < 10; i++) {
        ck_assert_uint_eq(got->by_left[i], want.by_left[i]);
    }
    for (unsigned i = 0; i < got->nworst; i++) {
        const ctl_blast_pair *w = &got->worst[i];
        ck_assert_double_eq_tol(w->after, brute_pair(t, w->src, w->dst, v, n), 1e-9);
        ck_assert_double_eq_tol(w->before, brute_pair(t, w->src, w->dst, v, n - 1), 1e-9);
        ck_assert(i == 0 || got->worst[i - 1].after <= w->after);
    }
}

START_TEST(test_ctl_blast_lab_by_hand)
{
    fab_topo *t = load(LAB);
    ctl_blast *b = ctl_blast_new(t);
    ctl_blast_result r;
    /* a T1 of plane 0: every pair across T0s keeps plane 1 and half of plane 0 */
    ctl_blast_entry v[3] = {entry(t, "p0-t1-0", 3)};
    check(t, b, v, 1, 0.5, &r);
    ck_assert_uint_eq(r.pairs, 56);
    ck_assert_uint_eq(r.affected, 48);
    ck_assert_double_eq_tol(r.min_left, 0.75, 1e-9);
    ck_assert_uint_eq(r.by_left[7], 48);
    ck_assert_uint_eq(r.below_floor, 0);
    /* a T0 of plane 0: its two hosts lose plane 0 with everyone (26 ordered pairs) */
    v[0] = entry(t, "p0-t0-0", 3);
    check(t, b, v, 1, 0.5, &r);
    ck_assert_uint_eq(r.affected, 26);
    ck_assert_double_eq_tol(r.min_left, 0.5, 1e-9);
    ck_assert_uint_eq(r.below_floor, 0);
    /* then the same T0 of plane 1: those pairs are cut off */
    v[1] = entry(t, "p1-t0-0", 3);
    check(t, b, v, 2, 0.5, &r);
    ck_assert_uint_eq(r.cut_off, 26);
    ck_assert_uint_eq(r.below_floor, 26);
    ck_assert_double_eq_tol(r.min_left, 0, 1e-9);
    ck_assert_uint_eq(r.nworst, CTL_BLAST_WORST);
    /* one direction of a T0-T1 link: the 12 pairs leaving T0 0 across plane 0 */
    v[0] = entry(t, "p0-t1-1~p0-t0-0", 1);
    check(t, b, v, 1, 0.5, &r);
    ck_assert_uint_eq(r.affected, 12);
    v[0].dirs = 3;
    check(t, b, v, 1, 0.5, &r);
    ck_assert_uint_eq(r.affected, 24);
    /* a host port's receiving side: the 7 pairs toward it */
    v[0] = entry(t, "h5:1", 2);
    check(t, b, v, 1, 0.5, &r);
    ck_assert_uint_eq(r.affected, 7);
    ck_assert_uint_eq(r.worst[0].dst, fab_host_find(t, "h5"));
    /* an entry already in force changes nothing */
    v[1] = v[0];
    check(t, b, v, 2, 0.5, &r);
    ck_assert_uint_eq(r.affected, 0);
    ck_assert_uint_eq(r.nworst, 0);
    ck_assert_double_eq_tol(r.min_left, 1, 1e-9);
    ctl_blast_free(b);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_ctl_blast_missing_cables)
{
    /* small.json: p0-t0-1 has no cable to p0-t1-0, p1-t0-2 none to p1-t1-1, h5 no port 1 */
    fab_topo *t = load(SMALL);
    ctl_blast *b = ctl_blast_new(t);
    ctl_blast_result r;
    /* p0-t1-1 is the only T1 between T0 0 and T0 1 of plane 0, and h5 has no plane 1 */
    ctl_blast_entry v[1] = {entry(t, "p0-t1-1", 3)};
    check(t, b, v, 1, 0.5, &r);
    ck_assert_uint_gt(r.cut_off, 0);
    ck_assert_double_eq_tol(r.min_left, 0, 1e-9);
    ctl_blast_free(b);
    fab_topo_free(t);
}
END_TEST

/* Every element name of |t|, with the directions an entry may give it. */
static size_t all_elements(const fab_topo *t, char (*names)[96], size_t max)
{
    size_t n = 0;
    for (uint32_t sw = 0; sw < fab_topo_nswitches(t) && n < max; sw++) {
        fab_switch s;
        fab_switch_get(t, sw, &s);
        snprintf(names[n++], 96, "%s", s.name);
        for (unsigned p = 0; s.tier == FAB_TIER_T0 && p < s.nports && n < max; p++) {
            fab_peer peer;
            fab_switch x;
            if (fab_switch_peer(t, sw, p, &peer) == 0 && peer.kind == FAB_PEER_SWITCH &&
                fab_switch_get(t, peer.id, &x) == 0) {
                snprintf(names[n++], 96, "%s~%s", s.name, x.name);
            }
        }
    }
    for (uint32_t h = 0; h < fab_topo_nhosts(t) && n < max; h++) {
        for (unsigned p = 0; p < fab_topo_planes(t) && n < max; p++) {
            snprintf(names[n++], 96, "%s:%u", fab_host_name(t, h), p);
        }
    }
    return n;
}

START_TEST(test_ctl_blast_random_sets)
{
    static const char *const files[] = {LAB, SMALL};
    char names[256][96];
    unsigned seed = 12345;
    for (int f = 0; f < 2; f++) {
        fab_topo *t = load(files[f]);
        ctl_blast *b = ctl_blast_new(t);
        size_t nn = all_elements(t, names, 256);
        for (int round = 0; round < 60; round++) {
            ctl_blast_entry v[6];
            size_t n = 1 + (size_t)(rand_r(&seed) % 6);
            for (size_t i = 0; i < n; i++) {
                v[i] = entry(t, names[rand_r(&seed) % nn], 0);
                v[i].dirs = v[i].el.kind == CTL_EL_SWITCH ? 3 : 1 + (unsigned)(rand_r(&seed) % 3);
            }
            ctl_blast_result r;
            check(t, b, v, n, 0.25 * (rand_r(&seed) % 5), &r);
        }
        ctl_blast_free(b);
        fab_topo_free(t);
    }
}
END_TEST

Suite *ctl_blast_suite(void)
{
    Suite *s = suite_create("blast");
    TCase *tc = tcase_create("blast");
    tcase_add_test(tc, test_ctl_blast_lab_by_hand);
    tcase_add_test(tc, test_ctl_blast_missing_cables);
    tcase_add_test(tc, test_ctl_blast_random_sets);
    suite_add_tcase(s, tc);
    return s;
}
