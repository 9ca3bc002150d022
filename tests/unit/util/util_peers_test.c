/* SPDX-License-Identifier: MIT */
/* util_peers: the lists it takes and refuses, the rounds of failures, and following a leader. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util_peers.h"

static void parse_ok(util_peers *p, const char *list)
{
    char err[256] = "";
    ck_assert_msg(util_peers_parse(p, list, err, sizeof(err)) == 0, "'%s' refused: %s", list, err);
}

static void parse_refused(const char *list)
{
    util_peers p;
    char err[256] = "";
    ck_assert_msg(util_peers_parse(&p, list, err, sizeof(err)) == -EINVAL, "'%s' taken", list);
    ck_assert_msg(err[0], "'%s' refused without a sentence", list);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_str_eq(util_peers_current(&p), "");
}

START_TEST(test_util_peers_parse_good)
{
    util_peers p;
    parse_ok(&p, "http://127.0.0.1:2379");
    ck_assert_uint_eq(p.n, 1);
    ck_assert_str_eq(util_peers_current(&p), "http://127.0.0.1:2379");
    util_peers_free(&p);
    ck_assert_uint_eq(p.n, 0);

    parse_ok(&p, "https://a.example:8443,https://b.example,HTTPS://[::1]:9");
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.url[0], "https://a.example:8443");
    ck_assert_str_eq(p.url[1], "https://b.example");
    ck_assert_str_eq(p.url[2], "HTTPS://[::1]:9");
    ck_assert_str_eq(util_peers_current(&p), "https://a.example:8443");
    util_peers_free(&p);

    /* trailing slashes go, as people write a base URL */
    parse_ok(&p, "http://a:1/,http://b//,http://c");
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.url[0], "http://a:1");
    ck_assert_str_eq(p.url[1], "http://b");
    ck_assert_str_eq(p.url[2], "http://c");
    util_peers_free(&p);

    /* sixteen is the most */
    char list[1024] = "";
    for (int i = 0; i < UTIL_PEERS_MAX; i++) {
        char one[64];
        snprintf(one, sizeof(one), "%shttp://10.0.0.%d:80", i ? "," : "", i);
        strcat(list, one);
    }
    parse_ok(&p, list);
    ck_assert_uint_eq(p.n, UTIL_PEERS_MAX);
    ck_assert_str_eq(p.url[UTIL_PEERS_MAX - 1], "http://10.0.0.15:80");
    util_peers_free(&p);
}
END_TEST

START_TEST(test_util_peers_parse_refused)
{
    static const char *bad[] = {
        NULL,
        "",
        ",",
        "http://a,",
        ",http://a",
        "http://a,,http://b",
        "http://a:1/v3",
        "http://a?x=1",
        "http://a#f",
        "http://",
        "http:///x",
        "ftp://a",
        "a:2379",
        "127.0.0.1:2379",
        "http://a, http://b",
        " http://a",
        "http://a ",
        "http://user@a",
        "http://a\tb",
        "http://a,https://b",
        "https://a,http://b",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!bad[i]) {
            util_peers p;
            char err[256] = "";
            ck_assert_int_eq(util_peers_parse(&p, NULL, err, sizeof(err)), -EINVAL);
            ck_assert(err[0]);
            continue;
        }
        parse_refused(bad[i]);
    }
    /* the sentence says which */
    util_peers p;
    char err[256] = "";
    ck_assert_int_eq(util_peers_parse(&p, "http://a,http://b/x", err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "http://b/x"), "%s", err);
    ck_assert_int_eq(util_peers_parse(&p, "http://a,https://b", err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "same scheme"), "%s", err);

    char list[1024] = "";
    for (int i = 0; i <= UTIL_PEERS_MAX; i++) {
        char one[64];
        snprintf(one, sizeof(one), "%shttp://10.0.0.%d", i ? "," : "", i);
        strcat(list, one);
    }
    ck_assert_int_eq(util_peers_parse(&p, list, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "more than 16"), "%s", err);
    ck_assert_uint_eq(p.n, 0);
    /* a long bad item is named in a bounded sentence */
    char longurl[4096];
    memset(longurl, 'x', sizeof(longurl) - 1);
    longurl[sizeof(longurl) - 1] = '\0';
    ck_assert_int_eq(util_peers_parse(&p, longurl, err, sizeof(err)), -EINVAL);
    ck_assert_uint_lt(strlen(err), sizeof(err));
}
END_TEST

START_TEST(test_util_peers_rounds)
{
    util_peers p;
    parse_ok(&p, "http://a,http://b,http://c");
    ck_assert_str_eq(util_peers_current(&p), "http://a");
    /* a round is every replica failing once since the last answer */
    ck_assert(util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://b");
    ck_assert(util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://c");
    ck_assert(!util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://a");
    /* the count starts over after a round */
    ck_assert(util_peers_failed(&p));
    ck_assert(util_peers_failed(&p));
    ck_assert(!util_peers_failed(&p));
    /* an answer starts it over too, and the one that answered stays current */
    ck_assert(util_peers_failed(&p));
    ck_assert(util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://c");
    util_peers_ok(&p);
    ck_assert_str_eq(util_peers_current(&p), "http://c");
    ck_assert(util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://a");
    ck_assert(util_peers_failed(&p));
    ck_assert(!util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://c");
    util_peers_free(&p);

    /* one replica: every failure ends a round */
    parse_ok(&p, "http://only");
    ck_assert(!util_peers_failed(&p));
    ck_assert(!util_peers_failed(&p));
    ck_assert_str_eq(util_peers_current(&p), "http://only");
    util_peers_free(&p);
}
END_TEST

START_TEST(test_util_peers_follow)
{
    util_peers p;
    parse_ok(&p, "http://a:1,http://b:2");
    /* a known URL becomes current, however it is spelled */
    ck_assert_int_eq(util_peers_follow(&p, "http://b:2"), 0);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(util_peers_current(&p), "http://b:2");
    ck_assert_int_eq(util_peers_follow(&p, "HTTP://A:1"), 0);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(util_peers_current(&p), "http://a:1");
    /* a URL with a path, a query or a fragment is reduced to its base */
    ck_assert_int_eq(util_peers_follow(&p, "http://b:2/api/v1/denylist?x=1"), 0);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_str_eq(util_peers_current(&p), "http://b:2");
    /* a new one is added and becomes current */
    ck_assert_int_eq(util_peers_follow(&p, "http://c:3/v3/kv/put"), 0);
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.url[2], "http://c:3");
    ck_assert_str_eq(util_peers_current(&p), "http://c:3");
    ck_assert_int_eq(util_peers_follow(&p, "http://d:4#x"), 0);
    ck_assert_str_eq(util_peers_current(&p), "http://d:4");
    ck_assert_uint_eq(p.n, 4);
    /* refused: another scheme (off TLS or onto it), no URL, no authority, user information */
    static const char *bad[] = {NULL,      "",         "https://a:1", "ftp://a",    "a:1",
                                "http://", "http:///", "http://u@e",  "http://a b", "http://a,b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(util_peers_follow(&p, bad[i]) == -EINVAL, "'%s' followed",
                      bad[i] ? bad[i] : "NULL");
    }
    ck_assert_uint_eq(p.n, 4);
    ck_assert_str_eq(util_peers_current(&p), "http://d:4");
    util_peers_free(&p);

    /* a TLS list follows only TLS */
    parse_ok(&p, "https://a");
    ck_assert_int_eq(util_peers_follow(&p, "http://a"), -EINVAL);
    ck_assert_int_eq(util_peers_follow(&p, "https://b/x"), 0);
    ck_assert_str_eq(util_peers_current(&p), "https://b");
    util_peers_free(&p);

    /* an empty list follows nobody */
    util_peers none = {0};
    ck_assert_int_eq(util_peers_follow(&none, "http://a"), -EINVAL);

    /* a full list: the new one takes the last place, the others stay */
    char list[1024] = "";
    for (int i = 0; i < UTIL_PEERS_MAX; i++) {
        char one[64];
        snprintf(one, sizeof(one), "%shttp://h%d", i ? "," : "", i);
        strcat(list, one);
    }
    parse_ok(&p, list);
    ck_assert_int_eq(util_peers_follow(&p, "http://h3/"), 0);
    ck_assert_uint_eq(p.cur, 3);
    ck_assert_int_eq(util_peers_follow(&p, "http://new/"), 0);
    ck_assert_uint_eq(p.n, UTIL_PEERS_MAX);
    ck_assert_uint_eq(p.cur, UTIL_PEERS_MAX - 1);
    ck_assert_str_eq(p.url[UTIL_PEERS_MAX - 1], "http://new");
    ck_assert_str_eq(p.url[UTIL_PEERS_MAX - 2], "http://h14");
    ck_assert_str_eq(p.url[0], "http://h0");
    ck_assert_int_eq(util_peers_follow(&p, "http://newer"), 0);
    ck_assert_uint_eq(p.n, UTIL_PEERS_MAX);
    ck_assert_str_eq(util_peers_current(&p), "http://newer");
    ck_assert_str_eq(p.url[UTIL_PEERS_MAX - 2], "http://h14");
    /* the round goes over the list as it is now */
    for (size_t i = 0; i + 1 < UTIL_PEERS_MAX; i++) {
        ck_assert(util_peers_failed(&p));
    }
    ck_assert_str_eq(util_peers_current(&p), "http://h14");
    ck_assert(!util_peers_failed(&p));
    util_peers_free(&p);
}
END_TEST

Suite *util_peers_suite(void)
{
    Suite *s = suite_create("util_peers");
    TCase *tc = tcase_create("peers");
    tcase_add_test(tc, test_util_peers_parse_good);
    tcase_add_test(tc, test_util_peers_parse_refused);
    tcase_add_test(tc, test_util_peers_rounds);
    tcase_add_test(tc, test_util_peers_follow);
    suite_add_tcase(s, tc);
    return s;
}
