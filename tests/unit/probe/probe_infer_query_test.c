/* SPDX-License-Identifier: MIT */
/* probe_infer's read-only queries for the localizer's evidence (issue 18): a window's lost
 * probes per component, exact, without stalled senders, refused out of the grid and out of the
 * ring; the components selected but not yet confirmed. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "probe_infer.h"

#define NT0 4
#define NT1 4
#define NP 4

static probe_infer *make(void)
{
    probe_infer_cfg cfg;
    probe_infer *inf = NULL;
    probe_infer_cfg_default(&cfg, 1, NT0, NT1, NP);
    cfg.confirm = 2;
    ck_assert_int_eq(probe_infer_new(&cfg, &inf), 0);
    return inf;
}

/* |n| lost cross probes of window |w| from (a, k) over T1 |j| to (b, m), one record each. */
static void feed(probe_infer *inf, uint64_t w, unsigned a, unsigned k, unsigned j, unsigned b,
                 unsigned m, unsigned n)
{
    probe_link l[4] = {{0, PROBE_NIC_T0, (uint16_t)a, (uint16_t)k},
                       {0, PROBE_T0_T1, (uint16_t)a, (uint16_t)j},
                       {0, PROBE_T1_T0, (uint16_t)b, (uint16_t)j},
                       {0, PROBE_T0_NIC, (uint16_t)b, (uint16_t)m}};
    for (unsigned i = 0; i < n; i++) {
        ck_assert_int_eq(probe_infer_add(inf, w, l, 4, 1), 0);
    }
}

static uint64_t lost_of(probe_infer *inf, uint64_t w, unsigned type, unsigned t0, unsigned other)
{
    probe_comp c = {(uint8_t)type, 0, (uint16_t)t0, (uint16_t)other};
    uint64_t n = UINT64_MAX;
    ck_assert_int_eq(probe_infer_window_lost(inf, w, &c, &n), 0);
    return n;
}

START_TEST(test_probe_infer_query_window_lost)
{
    probe_infer *inf = make();
    probe_verdict v[16];
    /* window 100: T0 1 -> T1 2 loses 300 probes from two senders; a stray loss elsewhere */
    feed(inf, 100, 1, 0, 2, 3, 1, 200);
    feed(inf, 100, 1, 1, 2, 0, 2, 100);
    feed(inf, 100, 2, 0, 0, 3, 1, 1);
    /* the query wants an evaluated window */
    probe_comp up = {PROBE_COMP_T0_T1, 0, 1, 2};
    uint64_t n;
    ck_assert_int_eq(probe_infer_window_lost(inf, 100, &up, &n), -ENOENT);
    ck_assert_int_ge(probe_infer_eval(inf, 100, v, 16), 0);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T0_T1, 1, 2), 300);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_NIC_T0, 1, 0), 200);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_NIC_T0, 1, 1), 100);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T1_T0, 3, 2), 200);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T0_NIC, 3, 1), 201);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T1, 0, 2), 300);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T0, 1, 0), 300);
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T0_T1, 0, 0), 0);
    /* window 101: sender (1, 0) fell short of its plan: its losses are a host's issue */
    feed(inf, 101, 1, 0, 2, 3, 1, 50);
    feed(inf, 101, 1, 1, 2, 0, 2, 7);
    ck_assert_int_eq(probe_infer_add_sent(inf, 101, 0, 1, 0, 3, 1408), 0);
    ck_assert_int_ge(probe_infer_eval(inf, 101, v, 16), 0);
    ck_assert_uint_eq(lost_of(inf, 101, PROBE_COMP_T0_T1, 1, 2), 7);
    ck_assert_uint_eq(lost_of(inf, 101, PROBE_COMP_NIC_T0, 1, 0), 0);
    /* the earlier window stays readable while the ring holds it */
    ck_assert_uint_eq(lost_of(inf, 100, PROBE_COMP_T0_T1, 1, 2), 300);
    /* out of the grid */
    probe_comp bad[] = {{PROBE_COMP_TYPES, 0, 0, 0},   {PROBE_COMP_T0_T1, 1, 0, 0},
                        {PROBE_COMP_T0_T1, 0, NT0, 0}, {PROBE_COMP_T0_T1, 0, 0, NT1},
                        {PROBE_COMP_NIC_T0, 0, 0, NP}, {PROBE_COMP_OPTIC, 0, 0, NT1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(probe_infer_window_lost(inf, 101, &bad[i], &n), -EINVAL);
    }
    /* not evaluated yet, and gone from the ring (32 windows) */
    ck_assert_int_eq(probe_infer_window_lost(inf, 102, &up, &n), -ENOENT);
    ck_assert_int_ge(probe_infer_eval(inf, 140, v, 16), 0);
    ck_assert_int_eq(probe_infer_window_lost(inf, 100, &up, &n), -ENOENT);
    ck_assert_uint_eq(lost_of(inf, 139, PROBE_COMP_T0_T1, 1, 2), 0);
    probe_infer_free(inf);
}
END_TEST

START_TEST(test_probe_infer_query_pending)
{
    probe_infer *inf = make();
    probe_verdict v[16];
    /* a link losing half its probes, from many senders and to many receivers */
    for (uint64_t w = 10; w < 13; w++) {
        for (unsigned k = 0; k < NP; k++) {
            for (unsigned b = 0; b < NT0; b++) {
                if (b != 1) {
                    feed(inf, w, 1, k, 2, b, (k + b) % NP, 40);
                }
            }
        }
    }
    ck_assert_uint_eq(probe_infer_pending(inf), 0);
    /* selected once: pending, not confirmed */
    ck_assert_int_eq(probe_infer_eval(inf, 10, v, 16), 0);
    ck_assert_uint_eq(probe_infer_pending(inf), 1);
    /* selected twice: a verdict, no longer pending */
    ck_assert_int_eq(probe_infer_eval(inf, 11, v, 16), 1);
    ck_assert_uint_eq(v[0].comp.type, PROBE_COMP_T0_T1);
    ck_assert_uint_eq(v[0].comp.t0, 1);
    ck_assert_uint_eq(v[0].comp.other, 2);
    ck_assert_uint_eq(probe_infer_pending(inf), 0);
    probe_infer_free(inf);
}
END_TEST

Suite *probe_infer_query_suite(void)
{
    Suite *s = suite_create("probe_infer_query");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_probe_infer_query_window_lost);
    tcase_add_test(tc, test_probe_infer_query_pending);
    suite_add_tcase(s, tc);
    return s;
}
