/* SPDX-License-Identifier: MIT */
/* A denylist change as etcd's log keeps it (ctl_change.c): the exact text of each kind, the
 * way back, and the records a controller must refuse; and a replica's store taking changes
 * by their own versions (ctl_store_apply), once each. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl_change.h"
#include "ctl_store.h"
#include "util_test.h"

static const char add_text[] =
    "{\"version\":7,\"epoch\":2,\"time\":1764650000000,\"op\":\"add\",\"entry\":{\"id\":7,"
    "\"element\":\"p0-t1-0\",\"scope\":\"both\",\"reason\":\"drain\",\"source\":\"operator\","
    "\"author\":\"bob\",\"created\":1764650000000,\"start\":0,\"end\":0,\"forced\":false}}";

START_TEST(test_ctl_change_vectors)
{
    ctl_change c = {.version = 7, .epoch = 2, .time = 1764650000000, .op = CTL_CHANGE_ADD};
    c.entry = (ctl_deny){.id = 7, .created = 1764650000000};
    snprintf(c.entry.element, sizeof(c.entry.element), "p0-t1-0");
    snprintf(c.entry.scope, sizeof(c.entry.scope), "both");
    snprintf(c.entry.reason, sizeof(c.entry.reason), "drain");
    snprintf(c.entry.source, sizeof(c.entry.source), "operator");
    snprintf(c.entry.author, sizeof(c.entry.author), "bob");
    char *t = ctl_change_text(&c);
    ck_assert_str_eq(t, add_text);
    ctl_change back;
    ck_assert_int_eq(ctl_change_parse(t, &back), 0);
    ck_assert_int_eq(memcmp(&back.entry, &c.entry, sizeof(c.entry)), 0);
    ck_assert(back.op == CTL_CHANGE_ADD && back.version == 7 && back.epoch == 2);
    free(t);

    ctl_change r = {.version = 8, .epoch = 2, .time = 5, .op = CTL_CHANGE_REMOVE, .id = 7};
    snprintf(r.actor, sizeof(r.actor), "bob");
    t = ctl_change_text(&r);
    ck_assert_str_eq(t, "{\"version\":8,\"epoch\":2,\"time\":5,\"op\":\"remove\",\"id\":7,"
                        "\"actor\":\"bob\"}");
    ck_assert_int_eq(ctl_change_parse(t, &back), 0);
    ck_assert(back.op == CTL_CHANGE_REMOVE && back.id == 7 && strcmp(back.actor, "bob") == 0);
    free(t);

    ctl_change k = {.version = 9, .epoch = 5, .time = 6, .op = CTL_CHANGE_TICK};
    t = ctl_change_text(&k);
    ck_assert_str_eq(t, "{\"version\":9,\"epoch\":5,\"time\":6,\"op\":\"tick\"}");
    free(t);
}
END_TEST

START_TEST(test_ctl_change_refused)
{
    static const char *const bad[] = {
        "",
        "[]",
        "{}",
        "{\"version\":0,\"epoch\":1,\"time\":1,\"op\":\"tick\"}",
        "{\"version\":1,\"epoch\":1,\"time\":1,\"op\":\"drop\"}",
        "{\"version\":\"1\",\"epoch\":1,\"time\":1,\"op\":\"tick\"}",
        "{\"version\":1,\"epoch\":1,\"time\":1,\"op\":\"add\"}",
        "{\"version\":1,\"epoch\":1,\"time\":1,\"op\":\"add\",\"entry\":{\"id\":0}}",
        "{\"version\":1,\"epoch\":1,\"time\":1,\"op\":\"remove\",\"id\":3}",
        /* an actor over 63 bytes (one literal in two: the parentheses say so to clang) */
        ("{\"version\":1,\"epoch\":1,\"time\":1,\"op\":\"remove\",\"id\":3,\"actor\":"
         "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}"),
        "{\"version\":1,\"epoch\":1,\"time\":1,\"op\":\"tick\"",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ctl_change c;
        ck_assert_msg(ctl_change_parse(bad[i], &c) == -EINVAL, "taken: %s", bad[i]);
    }
}
END_TEST

START_TEST(test_ctl_change_apply)
{
    char dir[256], path[300], err[256];
    util_test_mkdtemp(dir, sizeof(dir), "ctl_change");
    snprintf(path, sizeof(path), "%s/s.db", dir);
    ctl_store *s;
    ck_assert_int_eq(ctl_store_open(path, &s, err, sizeof(err)), 0);
    ctl_change c;
    ck_assert_int_eq(ctl_change_parse(add_text, &c), 0);
    c.version = 1;
    c.entry.id = 1;
    ck_assert_int_eq(ctl_store_apply(s, &c), 0);
    ck_assert_int_eq(ctl_store_version(s), 1);
    ck_assert_int_eq(ctl_store_epoch(s), 2);
    /* the same change again (the leader's own apply and its log's follower): taken once */
    ck_assert_int_eq(ctl_store_apply(s, &c), 1);
    ck_assert_uint_eq(ctl_store_deny_count(s), 1);
    json_object *e = ctl_store_deny_get(s, 1);
    ck_assert_ptr_nonnull(e);
    json_object_put(e);
    ctl_change r = {.version = 2, .epoch = 3, .time = 1, .op = CTL_CHANGE_REMOVE, .id = 1};
    snprintf(r.actor, sizeof(r.actor), "bob");
    ck_assert_int_eq(ctl_store_apply(s, &r), 0);
    ck_assert_uint_eq(ctl_store_deny_count(s), 0);
    ck_assert_int_eq(ctl_store_epoch(s), 3);
    /* a removal of an entry gone already (a resync came first) still moves the version */
    r.version = 3;
    ck_assert_int_eq(ctl_store_apply(s, &r), 0);
    ck_assert_int_eq(ctl_store_version(s), 3);
    ctl_store_close(s);
    util_test_rmdir(dir);
}
END_TEST

Suite *ctl_change_suite(void);
Suite *ctl_change_suite(void)
{
    Suite *s = suite_create("change");
    TCase *tc = tcase_create("change");
    tcase_add_test(tc, test_ctl_change_vectors);
    tcase_add_test(tc, test_ctl_change_refused);
    tcase_add_test(tc, test_ctl_change_apply);
    suite_add_tcase(s, tc);
    return s;
}
