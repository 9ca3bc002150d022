/* SPDX-License-Identifier: MIT */
/* Shards' plane lists and a node's map of shards: every form taken, every bad one refused with
 * a sentence, the canonical form round-trips, two shards may not share a plane. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "probe_shard.h"

START_TEST(test_probe_shard_lists)
{
    static const struct {
        const char *in, *canon;
        uint64_t mask;
    } good[] = {{"0", "0", 0x1},      {"0-1", "0-1", 0x3},          {"2,3", "2-3", 0xc},
                {"all", "0-7", 0xff}, {"7,0,2-4", "0,2-4,7", 0x9d}, {"5-5", "5", 0x20}};
    char err[256], s[64];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        uint64_t m = 0;
        ck_assert_int_eq(probe_shard_parse(good[i].in, 8, &m, err, sizeof(err)), 0);
        ck_assert_uint_eq(m, good[i].mask);
        probe_shard_str(m, s, sizeof(s));
        ck_assert_str_eq(s, good[i].canon);
        uint64_t again = 0;
        ck_assert_int_eq(probe_shard_parse(s, 8, &again, err, sizeof(err)), 0);
        ck_assert_uint_eq(again, m);
    }
    static const char *const bad[] = {"",   "8",  "1-0", "0,,1", "0,",    "x",
                                      "0-", "-1", "0 1", "1,1",  "0-2,2", "99999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t m = 0xdead;
        err[0] = '\0';
        ck_assert_msg(probe_shard_parse(bad[i], 8, &m, err, sizeof(err)) == -EINVAL, "%s", bad[i]);
        ck_assert_msg(err[0] != '\0', "no sentence for '%s'", bad[i]);
        ck_assert_uint_eq(m, 0xdead); /* nothing written on a refusal */
    }
    ck_assert(strstr((probe_shard_parse("9", 8, &(uint64_t){0}, err, sizeof(err)), err),
                     "planes 0 to 7"));
    probe_shard_str(0, s, sizeof(s));
    ck_assert_str_eq(s, "none");
}
END_TEST

START_TEST(test_probe_shard_dests)
{
    probe_shard_dest d[PROBE_SHARD_MAX];
    size_t n = 0;
    char err[512];
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "0-1=http://a:1,http://b:1", 4, err, sizeof(err)),
                     0);
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "2=https://c:2", 4, err, sizeof(err)), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(d[0].planes, 0x3);
    ck_assert_str_eq(d[0].urls, "http://a:1,http://b:1");
    ck_assert_uint_eq(d[1].planes, 0x4);
    /* plane 1 is the first shard's */
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "1,3=http://d:1", 4, err, sizeof(err)), -EINVAL);
    ck_assert(strstr(err, "plane 1 has a shard already"));
    /* no planes: every plane, which overlaps */
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "http://e:1", 4, err, sizeof(err)), -EINVAL);
    /* a URL with a path, a plane out of the fabric */
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "3=http://e:1/api", 4, err, sizeof(err)), -EINVAL);
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "4=http://e:1", 4, err, sizeof(err)), -EINVAL);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "3=http://e:1", 4, err, sizeof(err)), 0);
    probe_shard_dests_free(d, n);
    /* the old form: every plane */
    n = 0;
    ck_assert_int_eq(probe_shard_dest_add(d, &n, "http://a:1", 8, err, sizeof(err)), 0);
    ck_assert_uint_eq(d[0].planes, 0xff);
    probe_shard_dests_free(d, n);
}
END_TEST

Suite *probe_shard_suite(void)
{
    Suite *s = suite_create("probe.shard");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_probe_shard_lists);
    tcase_add_test(tc, test_probe_shard_dests);
    suite_add_tcase(s, tc);
    return s;
}
