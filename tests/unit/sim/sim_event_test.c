/* SPDX-License-Identifier: MIT */
/* Unit tests of the event queue: time order, push order among equal times, growth. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim_event.h"

/* Equal times pop in the order pushed: what makes one seed one run. */
START_TEST(test_sim_event_order)
{
    sim_evq q;
    sim_evq_init(&q);
    ck_assert_uint_eq(sim_evq_peek(&q), UINT64_MAX);
    sim_evq_push(&q, 30, 1);
    sim_evq_push(&q, 10, 2);
    sim_evq_push(&q, 30, 3);
    sim_evq_push(&q, 10, 4);
    sim_evq_push(&q, 20, 5);
    ck_assert_uint_eq(sim_evq_peek(&q), 10);
    static const uint32_t want[] = {2, 4, 5, 1, 3};
    static const uint64_t at[] = {10, 10, 20, 30, 30};
    sim_ev e;
    for (unsigned i = 0; i < 5; i++) {
        ck_assert(sim_evq_pop(&q, &e));
        ck_assert_uint_eq(e.tgt, want[i]);
        ck_assert_uint_eq(e.t, at[i]);
        ck_assert_uint_eq(q.now, at[i]);
    }
    ck_assert(!sim_evq_pop(&q, &e));
    ck_assert_uint_eq(q.popped, 5);
    sim_evq_fini(&q);
}
END_TEST

/* A million events pushed in random order, with pushes between pops as a run does, come out
 * sorted by (time, push order). */
START_TEST(test_sim_event_many)
{
    sim_evq q;
    sim_evq_init(&q);
    uint64_t x = 88172645463325252ull;
    for (unsigned i = 0; i < 500000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sim_evq_push(&q, x % 100000, i & SIM_EV_MAX_INDEX);
    }
    sim_ev e, last = {0, 0, 0};
    unsigned n = 0;
    while (sim_evq_pop(&q, &e)) {
        ck_assert(e.t > last.t || (e.t == last.t && e.seq > last.seq) || n == 0);
        if (n < 500000) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            sim_evq_push(&q, e.t + x % 1000, SIM_EV_TARGET(3, n));
        }
        last = e;
        n++;
    }
    ck_assert_uint_eq(n, 1000000);
    ck_assert_uint_eq(q.popped, 1000000);
    sim_evq_fini(&q);
}
END_TEST

START_TEST(test_sim_event_target)
{
    uint32_t t = SIM_EV_TARGET(9, 123456);
    ck_assert_uint_eq(SIM_EV_KIND(t), 9);
    ck_assert_uint_eq(SIM_EV_INDEX(t), 123456);
    t = SIM_EV_TARGET(15, SIM_EV_MAX_INDEX);
    ck_assert_uint_eq(SIM_EV_KIND(t), 15);
    ck_assert_uint_eq(SIM_EV_INDEX(t), SIM_EV_MAX_INDEX);
}
END_TEST

Suite *sim_event_suite(void)
{
    Suite *s = suite_create("event");
    TCase *tc = tcase_create("event");
    tcase_add_test(tc, test_sim_event_order);
    tcase_add_test(tc, test_sim_event_many);
    tcase_add_test(tc, test_sim_event_target);
    tcase_set_timeout(tc, 60); /* many events under the sanitizers on a loaded machine */
    suite_add_tcase(s, tc);
    return s;
}
