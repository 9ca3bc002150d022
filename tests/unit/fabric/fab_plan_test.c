/* SPDX-License-Identifier: MIT */
/* Unit tests of the addressing plan: defaults, uSID layout, containers, EV codec, addresses. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "fab_test.h"

/* A plan with the given widths; everything else from the defaults. */
static fab_plan plan_with(unsigned pb, unsigned kb, unsigned ib)
{
    fab_plan plan;
    fab_plan_default(&plan);
    plan.plane_bits = (uint8_t)pb;
    plan.kind_bits = (uint8_t)kb;
    plan.index_bits = (uint8_t)ib;
    return plan;
}

START_TEST(test_fab_plan_default_values)
{
    static const uint8_t block[16] = {0xfc, 0xbb, 0xbb, 0x00};
    static const uint8_t host_block[16] = {0xfd, 0xbb, 0xbb, 0x00};
    fab_plan plan;
    memset(&plan, 0xa5, sizeof(plan));
    fab_plan_default(&plan);
    ck_assert_mem_eq(plan.block, block, 16);
    ck_assert_mem_eq(plan.host_block, host_block, 16);
    ck_assert_uint_eq(plan.plane_bits, 3);
    ck_assert_uint_eq(plan.kind_bits, 2);
    ck_assert_uint_eq(plan.index_bits, 11);
    ck_assert_uint_eq(plan.kind_t0, 1);
    ck_assert_uint_eq(plan.kind_t1, 2);
    ck_assert_uint_eq(plan.kind_dl, 3);
    ck_assert_uint_eq(plan.udp_port, 4791);
    ck_assert_uint_eq(plan.route_table, 254);
    ck_assert_uint_eq(plan.route_proto, 201);
}
END_TEST

START_TEST(test_fab_plan_usid_layout)
{
    fab_plan plan;
    fab_plan_default(&plan);
    /* plane | kind | index, high bits first: 3 + 2 + 11 */
    ck_assert_uint_eq(fab_plan_usid(&plan, 0, plan.kind_t0, 0), 0x0800);
    ck_assert_uint_eq(fab_plan_usid(&plan, 0, plan.kind_t1, 0), 0x1000);
    ck_assert_uint_eq(fab_plan_usid(&plan, 0, plan.kind_dl, 0), 0x1800);
    ck_assert_uint_eq(fab_plan_usid(&plan, 7, plan.kind_t1, 255), 0xf0ff);
    ck_assert_uint_eq(fab_plan_usid(&plan, 1, plan.kind_t0, 5), 0x2805);
    ck_assert_uint_eq(fab_plan_usid(&plan, 3, plan.kind_t1, 2047), 0x77ff);
    ck_assert_uint_eq(fab_plan_usid(&plan, 7, plan.kind_dl, 2047), 0xffff);
    for (unsigned p = 0; p < 8; p++) {
        for (unsigned k = 1; k < 4; k++) {
            for (unsigned i = 0; i < 2048; i += 7) {
                FAB_REQUIRE(fab_plan_usid(&plan, p, k, i) == (p << 13 | k << 11 | i),
                            "usid(%u, %u, %u)", p, k, i);
            }
        }
    }
    /* other widths: 4 plane bits, 2 kind bits, 10 index bits */
    fab_plan w = plan_with(4, 2, 10);
    ck_assert_uint_eq(fab_plan_usid(&w, 15, 3, 1023), 0xffff);
    ck_assert_uint_eq(fab_plan_usid(&w, 9, 1, 3), 9u << 12 | 1u << 10 | 3u);
    w = plan_with(1, 2, 13);
    ck_assert_uint_eq(fab_plan_usid(&w, 1, 2, 8191), 0xdfff);
    ck_assert_uint_eq(fab_plan_usid(&w, 0, 1, 1), 0x2001);
}
END_TEST

START_TEST(test_fab_plan_container)
{
    fab_plan plan;
    fab_plan_default(&plan);
    const uint16_t u[6] = {0x0801, 0x1002, 0x0803, 0x1804, 0x2805, 0x3006};
    char text[46];
    uint8_t a[16];
    static const char *const want[7] = {
        "fcbb:bb00::",
        "fcbb:bb00:801::",
        "fcbb:bb00:801:1002::",
        "fcbb:bb00:801:1002:803::",
        "fcbb:bb00:801:1002:803:1804::",
        "fcbb:bb00:801:1002:803:1804:2805:0",
        "fcbb:bb00:801:1002:803:1804:2805:3006",
    };
    for (size_t n = 0; n <= 6; n++) {
        memset(a, 0xee, sizeof(a));
        fab_plan_container(&plan, u, n, a);
        ck_assert_mem_eq(a, plan.block, 4);
        for (size_t i = 0; i < 6; i++) {
            uint16_t got = (uint16_t)(a[4 + 2 * i] << 8 | a[5 + 2 * i]);
            ck_assert_uint_eq(got, i < n ? u[i] : 0);
        }
        ck_assert_str_eq(fab_addr_str(a, text), want[n]);
    }
    /* the block is taken from the plan */
    plan.block[0] = 0x20;
    plan.block[1] = 0x01;
    plan.block[2] = 0x0d;
    plan.block[3] = 0xb8;
    fab_plan_container(&plan, u, 2, a);
    ck_assert_str_eq(fab_addr_str(a, text), "2001:db8:801:1002::");
}
END_TEST

/* Round trips of many random (plane, t1, salt) under |plan|, and the documented bit layout. */
static void ev_round_trips(const fab_plan *plan, uint64_t *rng)
{
    unsigned pb = plan->plane_bits, ib = plan->index_bits, sb = 32 - pb - ib;
    for (int i = 0; i < 100000; i++) {
        unsigned p = fab_test_rand_below(rng, 1u << pb);
        unsigned j = fab_test_rand_below(rng, 1u << ib);
        uint32_t salt = (uint32_t)fab_test_rand(rng) & ((1u << sb) - 1);
        uint32_t ev = fab_ev_make(plan, p, j, salt);
        FAB_REQUIRE(ev == ((uint32_t)p << (32 - pb) | (uint32_t)j << sb | salt),
                    "layout of (%u, %u, %u) under %u/%u: 0x%08x", p, j, salt, pb, ib, ev);
        FAB_REQUIRE(fab_ev_plane(plan, ev) == p, "plane of 0x%08x", ev);
        FAB_REQUIRE(fab_ev_t1(plan, ev) == j, "t1 of 0x%08x", ev);
        FAB_REQUIRE(fab_ev_salt(plan, ev) == salt, "salt of 0x%08x", ev);
        /* every 32-bit value is some EV and decodes back to itself */
        uint32_t any = (uint32_t)fab_test_rand(rng);
        uint32_t again = fab_ev_make(plan, fab_ev_plane(plan, any), fab_ev_t1(plan, any),
                                     fab_ev_salt(plan, any));
        FAB_REQUIRE(again == any, "0x%08x decodes to 0x%08x", any, again);
        /* fields that overflow their width are truncated */
        uint32_t over = fab_ev_make(plan, p | 1u << pb, j | 1u << ib, salt | 1u << sb);
        FAB_REQUIRE(over == ev, "overflow of (%u, %u, %u): 0x%08x, not 0x%08x", p, j, salt, over,
                    ev);
    }
}

START_TEST(test_fab_plan_ev_round_trip_default)
{
    fab_plan plan;
    fab_plan_default(&plan);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    ev_round_trips(&plan, &rng);
    /* the documented default: plane 31:29, T1 28:18, salt 17:0 */
    ck_assert_uint_eq(fab_ev_make(&plan, 7, 0, 0), 0xe0000000u);
    ck_assert_uint_eq(fab_ev_make(&plan, 0, 2047, 0), 0x1ffc0000u);
    ck_assert_uint_eq(fab_ev_make(&plan, 0, 0, 0x3ffff), 0x0003ffffu);
    ck_assert_uint_eq(fab_ev_make(&plan, 5, 300, 12345), 5u << 29 | 300u << 18 | 12345u);
}
END_TEST

START_TEST(test_fab_plan_ev_round_trip_widths)
{
    static const unsigned widths[][3] = {{1, 2, 13}, {2, 3, 11}, {4, 2, 10}, {4, 4, 8},
                                         {2, 2, 12}, {3, 5, 8},  {1, 8, 7}};
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
        fab_plan plan = plan_with(widths[w][0], widths[w][1], widths[w][2]);
        ev_round_trips(&plan, &rng);
    }
}
END_TEST

START_TEST(test_fab_plan_ev_wire)
{
    uint16_t sport;
    uint32_t flow;
    fab_ev_to_wire(0x12345678u, &sport, &flow);
    ck_assert_uint_eq(sport, 0x5678);
    ck_assert_uint_eq(flow, 0x1234);
    ck_assert_uint_eq(fab_ev_from_wire(0x5678, 0x1234), 0x12345678u);
    uint64_t rng = 42;
    for (int i = 0; i < 100000; i++) {
        uint32_t ev = (uint32_t)fab_test_rand(&rng);
        fab_ev_to_wire(ev, &sport, &flow);
        FAB_REQUIRE(sport == (ev & 0xffff), "sport of 0x%08x", ev);
        FAB_REQUIRE((flow & 0xffff) == ev >> 16, "flow label of 0x%08x", ev);
        FAB_REQUIRE((flow & 0xf0000) == 0 && flow <= 0xfffff, "flow label bits 19:16 of 0x%08x",
                    ev);
        FAB_REQUIRE(fab_ev_from_wire(sport, flow) == ev, "wire round trip of 0x%08x", ev);
        /* bits 19:16 of a received flow label carry nothing of the EV */
        uint32_t hi = (uint32_t)fab_test_rand_below(&rng, 16) << 16;
        FAB_REQUIRE(fab_ev_from_wire(sport, flow | hi) == ev, "flow label 0x%05x", flow | hi);
    }
}
END_TEST

START_TEST(test_fab_plan_addr_str_vectors)
{
    static const struct {
        uint16_t g[8];
        const char *text;
    } v[] = {
        {{0, 0, 0, 0, 0, 0, 0, 0}, "::"},
        {{0, 0, 0, 0, 0, 0, 0, 1}, "::1"},
        {{1, 0, 0, 0, 0, 0, 0, 0}, "1::"},
        {{0x2001, 0xdb8, 0, 0, 0, 0, 0, 1}, "2001:db8::1"},
        {{0xfe80, 0, 0, 0, 0, 0, 0x801, 3}, "fe80::801:3"},
        {{1, 0, 0, 2, 0, 0, 3, 4}, "1::2:0:0:3:4"},    /* tie: the first run */
        {{1, 0, 0, 2, 0, 0, 0, 4}, "1:0:0:2::4"},      /* the longest run */
        {{1, 0, 2, 3, 4, 5, 6, 7}, "1:0:2:3:4:5:6:7"}, /* one zero group stays */
        {{1, 2, 3, 4, 5, 6, 7, 0}, "1:2:3:4:5:6:7:0"},
        {{0, 1, 2, 3, 4, 5, 6, 7}, "0:1:2:3:4:5:6:7"},
        {{0xfcbb, 0xbb00, 0x800, 0x1000, 0x801, 0x1801, 0, 0}, "fcbb:bb00:800:1000:801:1801::"},
        {{0xabcd, 0xef, 0xf, 0x100, 0xffff, 0x10, 0x1000, 0xa}, "abcd:ef:f:100:ffff:10:1000:a"},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        uint8_t a[16];
        char text[46];
        for (int k = 0; k < 8; k++) {
            a[2 * k] = (uint8_t)(v[i].g[k] >> 8);
            a[2 * k + 1] = (uint8_t)v[i].g[k];
        }
        ck_assert_ptr_eq(fab_addr_str(a, text), text);
        ck_assert_str_eq(text, v[i].text);
    }
}
END_TEST

START_TEST(test_fab_plan_addr_str_matches_inet_ntop)
{
    uint64_t rng = 0x5eed;
    int compared = 0;
    for (int i = 0; i < 200000; i++) {
        uint8_t a[16];
        /* each group zero with probability 1/2, otherwise of a random width, so that zero
         * runs of every length and position and every leading-zero case come up */
        for (int k = 0; k < 8; k++) {
            uint32_t r = (uint32_t)fab_test_rand(&rng);
            uint16_t g = 0;
            if (r & 1) {
                g = (uint16_t)((r >> 8) & (0xffffu >> (4 * ((r >> 1) & 3))));
            }
            a[2 * k] = (uint8_t)(g >> 8);
            a[2 * k + 1] = (uint8_t)g;
        }
        static const uint8_t zero80[10];
        if (memcmp(a, zero80, 10) == 0) {
            continue; /* inet_ntop writes ::ffff:a.b.c.d and ::a.b.c.d there */
        }
        char want[INET6_ADDRSTRLEN], got[46];
        FAB_REQUIRE(inet_ntop(AF_INET6, a, want, sizeof(want)) != NULL, "inet_ntop");
        fab_addr_str(a, got);
        FAB_REQUIRE(strcmp(want, got) == 0, "fab_addr_str gives %s, inet_ntop %s", got, want);
        compared++;
    }
    ck_assert_int_gt(compared, 190000);
}
END_TEST

START_TEST(test_fab_plan_strerror)
{
    static const int codes[] = {0,          FAB_ERR_INVAL,    FAB_ERR_NOMEM,
                                FAB_ERR_IO, FAB_ERR_NOTFOUND, FAB_ERR_NOSPACE};
    const size_t n = sizeof(codes) / sizeof(codes[0]);
    for (size_t i = 0; i < n; i++) {
        const char *s = fab_strerror(codes[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_gt((int)strlen(s), 0);
        for (size_t k = 0; k < i; k++) {
            ck_assert_str_ne(s, fab_strerror(codes[k]));
        }
    }
    ck_assert_str_eq(fab_strerror(0), "success");
    ck_assert_str_eq(fab_strerror(FAB_ERR_INVAL), "invalid input");
    ck_assert_str_eq(fab_strerror(FAB_ERR_NOSPACE), "buffer too small");
    /* anything else is unknown but still a string */
    ck_assert_str_eq(fab_strerror(-99), "unknown error");
    ck_assert_str_eq(fab_strerror(7), "unknown error");
}
END_TEST

Suite *fab_plan_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_fab_plan_default_values);
    tcase_add_test(tc, test_fab_plan_usid_layout);
    tcase_add_test(tc, test_fab_plan_container);
    tcase_add_test(tc, test_fab_plan_ev_round_trip_default);
    tcase_add_test(tc, test_fab_plan_ev_round_trip_widths);
    tcase_add_test(tc, test_fab_plan_ev_wire);
    tcase_add_test(tc, test_fab_plan_addr_str_vectors);
    tcase_add_test(tc, test_fab_plan_addr_str_matches_inet_ntop);
    tcase_add_test(tc, test_fab_plan_strerror);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
