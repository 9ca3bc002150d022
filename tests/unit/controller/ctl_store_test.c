/* SPDX-License-Identifier: MIT */
/* Unit tests of the controller's SQLite store: what a commit promises survives closing and
 * reopening (entries, ids, the version), ids are never given twice, a failed removal changes
 * nothing, every change leaves one audit record, the database is in WAL mode, and a store
 * that cannot be opened says why. */
#include <check.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util_test.h"
#include "ctl_store.h"

static char dir[256];

static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "ctl_store");
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
}

/* A path of its own for each test's database, with no file of a former run behind it. */
static void db_path(const char *name, char *dest, size_t destlen)
{
    snprintf(dest, destlen, "%s/%s-%ld.db", dir, name, (long)getpid());
    static const char *const tails[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof(p), "%s%s", dest, tails[i]);
        unlink(p);
    }
}

static ctl_store *open_ok(const char *path)
{
    char err[256] = "";
    ctl_store *s = NULL;
    ck_assert_msg(ctl_store_open(path, &s, err, sizeof(err)) == 0, "%s", err);
    ck_assert_ptr_nonnull(s);
    return s;
}

static ctl_deny entry(const char *element, const char *scope, const char *author, int64_t start,
                      int64_t end)
{
    ctl_deny d;
    memset(&d, 0, sizeof(d));
    snprintf(d.element, sizeof(d.element), "%s", element);
    snprintf(d.scope, sizeof(d.scope), "%s", scope);
    snprintf(d.reason, sizeof(d.reason), "reason for %s", element);
    snprintf(d.source, sizeof(d.source), "operator");
    snprintf(d.author, sizeof(d.author), "%s", author);
    d.start = start;
    d.end = end;
    return d;
}

static char *list_text(ctl_store *s)
{
    json_object *l = ctl_store_deny_list(s);
    ck_assert_ptr_nonnull(l);
    char *t = strdup(json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN));
    json_object_put(l);
    return t;
}

/* Entries, their fields and the version are on disk once committed: a reopened store lists
 * exactly what was added (as ctl_deny_json renders the structs), oldest first. */
START_TEST(test_ctl_store_reopen_keeps_entries)
{
    char path[512];
    db_path("reopen", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ck_assert_int_eq(ctl_store_version(s), 0);
    char *empty = list_text(s);
    ck_assert_str_eq(empty, "[]");
    free(empty);
    ctl_deny a = entry("p0-t0-0", "both", "olga", 0, 0);
    ctl_deny b = entry("p0-t0-1~p0-t1-0", "up", "pat", 1796004000000, 1796013000250);
    int64_t t0 = ctl_now_ms();
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &b), 0);
    ck_assert_int_ge(a.created, t0);
    ck_assert_int_le(b.created, ctl_now_ms());
    ck_assert_int_gt(a.id, 0);
    ck_assert_int_gt(b.id, a.id);
    ck_assert_int_eq(ctl_store_version(s), 2);
    ctl_store_close(s);

    s = open_ok(path);
    ck_assert_int_eq(ctl_store_version(s), 2);
    json_object *want = json_object_new_array();
    json_object_array_add(want, ctl_deny_json(&a, ctl_now_ms()));
    json_object_array_add(want, ctl_deny_json(&b, ctl_now_ms()));
    json_object *got = ctl_store_deny_list(s);
    ck_assert_msg(json_object_equal(want, got), "got  %s\nwant %s", json_object_to_json_string(got),
                  json_object_to_json_string(want));
    json_object *one = ctl_store_deny_get(s, b.id), *wb = json_object_array_get_idx(want, 1);
    ck_assert_msg(one && json_object_equal(one, wb), "get %lld: %s", (long long)b.id,
                  one ? json_object_to_json_string(one) : "NULL");
    json_object_put(one);
    json_object_put(want);
    json_object_put(got);
    ck_assert_ptr_null(ctl_store_deny_get(s, b.id + 1));
    ctl_deny c = entry("h3:0", "both", "ada", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &c), 0);
    ck_assert_int_gt(c.id, b.id);
    ck_assert_int_eq(ctl_store_version(s), 3);
    ctl_store_close(s);
}
END_TEST

/* An id names one entry for good: after the newest entry is removed and the store reopened,
 * the next entry gets a new id (agents and the audit log refer to entries by id). */
START_TEST(test_ctl_store_ids_not_reused)
{
    char path[512];
    db_path("ids", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ctl_deny d[3];
    for (int i = 0; i < 3; i++) {
        d[i] = entry("p0-t0-0", "both", "olga", 0, 0);
        ck_assert_int_eq(ctl_store_deny_add(s, &d[i]), 0);
        ck_assert(i == 0 || d[i].id > d[i - 1].id);
    }
    ck_assert_int_eq(ctl_store_deny_del(s, d[2].id, "olga"), 0);
    ck_assert_int_eq(ctl_store_version(s), 4);
    ctl_store_close(s);
    s = open_ok(path);
    ctl_deny e = entry("p0-t0-1", "both", "olga", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &e), 0);
    ck_assert_int_gt(e.id, d[2].id);
    ck_assert_int_eq(ctl_store_version(s), 5);
    ctl_store_close(s);
}
END_TEST

/* Removing an id that is not there is -ENOENT and commits nothing: no version bump, no audit
 * record, the entries as they were. */
START_TEST(test_ctl_store_delete_missing)
{
    char path[512];
    db_path("delmissing", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ctl_deny a = entry("p0-t0-0", "both", "olga", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    ck_assert_int_eq(ctl_store_deny_del(s, a.id, "olga"), 0);
    ctl_deny b = entry("p0-t0-1", "both", "olga", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &b), 0);
    char *before = list_text(s);
    int64_t v = ctl_store_version(s);
    ck_assert_int_eq(v, 3);
    const int64_t missing[] = {a.id, b.id + 1, 0, -1, INT64_MAX};
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
        ck_assert_int_eq(ctl_store_deny_del(s, missing[i], "olga"), -ENOENT);
    }
    ck_assert_int_eq(ctl_store_version(s), v);
    char *after = list_text(s);
    ck_assert_str_eq(after, before);
    json_object *au = ctl_store_audit(s, 0, 100);
    ck_assert_uint_eq(json_object_array_length(au), 3);
    json_object_put(au);
    free(before);
    free(after);
    /* and the store still takes changes: the failed removals left no transaction open */
    ck_assert_int_eq(ctl_store_deny_del(s, b.id, "olga"), 0);
    ck_assert_int_eq(ctl_store_version(s), 4);
    ctl_store_close(s);
}
END_TEST

static json_object *rec(json_object *a, size_t i, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(json_object_array_get_idx(a, i), key, &v),
                  "record %zu has no '%s'", i, key);
    return v;
}

/* One audit record per change, in order: who, what, which entry; an add records the entry
 * as it was committed, a remove records nothing more. after and limit page by record id, and
 * the log survives reopening. */
START_TEST(test_ctl_store_audit)
{
    char path[512];
    db_path("audit", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ctl_deny a = entry("p0-t0-0", "both", "olga", 0, 0);
    ctl_deny b = entry("h1:1", "down", "pat", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &b), 0);
    ck_assert_int_eq(ctl_store_deny_del(s, a.id, "ada"), 0);
    ctl_store_close(s);
    s = open_ok(path);
    json_object *au = ctl_store_audit(s, 0, 100);
    ck_assert_uint_eq(json_object_array_length(au), 3);
    static const struct {
        const char *actor, *action;
    } want[] = {{"olga", "add"}, {"pat", "add"}, {"ada", "remove"}};
    const int64_t entries[] = {a.id, b.id, a.id};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(json_object_get_int64(rec(au, i, "id")), (int64_t)i + 1);
        ck_assert_str_eq(json_object_get_string(rec(au, i, "actor")), want[i].actor);
        ck_assert_str_eq(json_object_get_string(rec(au, i, "action")), want[i].action);
        ck_assert_int_eq(json_object_get_int64(rec(au, i, "entry")), entries[i]);
        ck_assert_uint_eq(strlen(json_object_get_string(rec(au, i, "time"))), 24);
    }
    json_object *wb = ctl_deny_json(&b, b.created); /* as the audit record took it */
    ck_assert_msg(json_object_equal(rec(au, 1, "detail"), wb), "detail %s",
                  json_object_to_json_string(rec(au, 1, "detail")));
    json_object_put(wb);
    ck_assert_int_eq(json_object_object_length(rec(au, 2, "detail")), 0);
    json_object_put(au);
    au = ctl_store_audit(s, 1, 1);
    ck_assert_uint_eq(json_object_array_length(au), 1);
    ck_assert_int_eq(json_object_get_int64(rec(au, 0, "id")), 2);
    json_object_put(au);
    au = ctl_store_audit(s, 3, 100);
    ck_assert_uint_eq(json_object_array_length(au), 0);
    json_object_put(au);
    ctl_store_close(s);
}
END_TEST

/* A store that cannot be opened fails with a negative errno and a sentence naming the path,
 * and hands back no store: a missing directory, and a file that is not a database. */
START_TEST(test_ctl_store_open_fails)
{
    char path[512], err[256] = "";
    snprintf(path, sizeof(path), "%s/no-such-dir/ctl.db", dir);
    ctl_store *s = NULL;
    ck_assert_int_lt(ctl_store_open(path, &s, err, sizeof(err)), 0);
    ck_assert_ptr_null(s);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strlen(err) > strlen(path) + 2,
                  "err '%s'", err);
    db_path("garbage", path, sizeof(path));
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 512; i++) {
        fputs("this is not an SQLite database. ", f);
    }
    fclose(f);
    err[0] = '\0';
    ck_assert_int_lt(ctl_store_open(path, &s, err, sizeof(err)), 0);
    ck_assert_ptr_null(s);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strlen(err) > strlen(path) + 2,
                  "err '%s'", err);
}
END_TEST

static void expect_wal(const char *path)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The database is in WAL mode (readers never block the commit), as another connection sees
 * it while the store is open and after it is closed. */
START_TEST(test_ctl_store_wal)
{
    char path[512];
    db_path("wal", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ctl_deny a = entry("p0-t0-0", "both", "olga", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    expect_wal(path);
    ctl_store_close(s);
    expect_wal(path);
}
END_TEST

/* "One entry, or NULL when there is none": there is never an entry 0, however many the list
 * holds (the API refuses id 0 itself, but the store's own contract must not depend on it). */
START_TEST(test_ctl_store_get_no_entry_zero)
{
    char path[512];
    db_path("zero", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ctl_deny a = entry("p0-t0-0", "both", "olga", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    json_object *none = ctl_store_deny_get(s, -1), *zero = ctl_store_deny_get(s, 0);
    ck_assert_ptr_null(none);
    ck_assert_msg(zero == NULL, "entry 0 is %s", json_object_to_json_string(zero));
    ctl_store_close(s);
}
END_TEST

/* Maintenance windows: a tick records each start and end that passed since the last tick,
 * once, and bumps the version once per tick that found any; the last tick is kept in the store,
 * so a reopened store neither records a boundary again nor misses one that passed meanwhile.
 * The next boundary is the nearest start or end ahead. */
START_TEST(test_ctl_store_windows)
{
    char path[512];
    db_path("windows", path, sizeof(path));
    ctl_store *s = open_ok(path);
    ctl_deny a = entry("p0-t1-0", "both", "olga", 10000, 20000);
    ctl_deny b = entry("p0-t1-1", "both", "olga", 15000, 30000);
    ctl_deny c = entry("p1-t1-0", "both", "olga", 0, 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &b), 0);
    ck_assert_int_eq(ctl_store_deny_add(s, &c), 0);
    ck_assert_int_eq(ctl_store_version(s), 3);
    ck_assert_int_eq(ctl_store_next_boundary(s, 5000), 10000);
    ck_assert_int_eq(ctl_store_next_boundary(s, 10000), 15000);
    ck_assert_int_eq(ctl_store_next_boundary(s, 16000), 20000);
    ck_assert_int_eq(ctl_store_next_boundary(s, 30000), 0);
    ck_assert_int_eq(ctl_store_window_tick(s, 5000), 0);
    ck_assert_int_eq(ctl_store_version(s), 3);
    ck_assert_int_eq(ctl_store_window_tick(s, 16000), 2); /* a and b start */
    ck_assert_int_eq(ctl_store_version(s), 4);
    ck_assert_int_eq(ctl_store_window_tick(s, 16000), 0);
    ck_assert_int_eq(ctl_store_version(s), 4);
    ctl_store_close(s);
    s = open_ok(path);
    ck_assert_int_eq(ctl_store_window_tick(s, 40000), 2); /* a and b end, while it was down */
    ck_assert_int_eq(ctl_store_version(s), 5);
    ck_assert_int_eq(ctl_store_window_tick(s, 50000), 0);
    json_object *au = ctl_store_audit(s, 3, 100);
    ck_assert_uint_eq(json_object_array_length(au), 4);
    static const char *const actions[] = {"window start", "window start", "window end",
                                          "window end"};
    const int64_t ids[] = {a.id, b.id, a.id, b.id};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_str_eq(json_object_get_string(rec(au, i, "action")), actions[i]);
        ck_assert_str_eq(json_object_get_string(rec(au, i, "actor")), "controller");
        ck_assert_int_eq(json_object_get_int64(rec(au, i, "entry")), ids[i]);
    }
    json_object_put(au);
    /* active: inside the window only */
    json_object *l = ctl_store_deny_list(s);
    json_object *act;
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(l, 2), "active", &act));
    ck_assert(json_object_get_boolean(act)); /* no window: always */
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(l, 0), "active", &act));
    ck_assert(!json_object_get_boolean(act)); /* its window ended long ago */
    json_object_put(l);
    ctl_deny now = entry("p1-t1-1", "both", "olga", ctl_now_ms() - 1000, ctl_now_ms() + 60000);
    json_object *j = ctl_deny_json(&now, ctl_now_ms());
    ck_assert(json_object_object_get_ex(j, "active", &act) && json_object_get_boolean(act));
    json_object_put(j);
    ctl_store_close(s);
}
END_TEST

/* Times are RFC 3339 UTC with milliseconds, whatever the local time zone. */
START_TEST(test_ctl_time_str)
{
    static const struct {
        int64_t ms;
        const char *text;
    } want[] = {{0, "1970-01-01T00:00:00.000Z"},
                {1796004000000, "2026-11-30T02:00:00.000Z"},
                {1796013000250, "2026-11-30T04:30:00.250Z"},
                {951782400999, "2000-02-29T00:00:00.999Z"}};
    setenv("TZ", "America/New_York", 1);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char t[40];
        ctl_time_str(want[i].ms, t, sizeof(t));
        ck_assert_str_eq(t, want[i].text);
    }
}
END_TEST

Suite *ctl_store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_test(tc, test_ctl_store_reopen_keeps_entries);
    tcase_add_test(tc, test_ctl_store_ids_not_reused);
    tcase_add_test(tc, test_ctl_store_delete_missing);
    tcase_add_test(tc, test_ctl_store_audit);
    tcase_add_test(tc, test_ctl_store_open_fails);
    tcase_add_test(tc, test_ctl_store_wal);
    tcase_add_test(tc, test_ctl_store_get_no_entry_zero);
    tcase_add_test(tc, test_ctl_time_str);
    tcase_add_test(tc, test_ctl_store_windows);
    suite_add_tcase(s, tc);
    return s;
}
