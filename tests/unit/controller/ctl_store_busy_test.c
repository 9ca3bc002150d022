/* SPDX-License-Identifier: MIT */
/* Unit tests of the store under a stalled writer, on a real SQLite file: a read is answered at
 * once while another process holds the write lock, and a write that cannot have the store
 * within the bound fails with -EBUSY and changes nothing. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util_test.h"
#include "ctl_store.h"

static char dir[256];

static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "ctl_store_busy");
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static ctl_deny entry(const char *element)
{
    ctl_deny d;
    memset(&d, 0, sizeof(d));
    snprintf(d.element, sizeof(d.element), "%s", element);
    snprintf(d.scope, sizeof(d.scope), "both");
    snprintf(d.reason, sizeof(d.reason), "test");
    snprintf(d.source, sizeof(d.source), "operator");
    snprintf(d.author, sizeof(d.author), "olga");
    return d;
}

/* A second process that holds BEGIN IMMEDIATE on |path| (and has written in it) for |secs|;
 * returns once it holds the lock. */
static pid_t hold_write_lock(const char *path, int secs)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(p[0]);
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
            sqlite3_exec(db,
                         "BEGIN IMMEDIATE; INSERT INTO audit (time, actor, action, entry, "
                         "detail) VALUES (0, 'stall', 'stall', 0, '{}')",
                         NULL, NULL, NULL) != SQLITE_OK) {
            _exit(1);
        }
        (void)!write(p[1], "x", 1);
        sleep((unsigned)secs);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        _exit(0);
    }
    close(p[1]);
    char c;
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL); /* not TERM: the child has Check's handler, which kills the group */
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
}

typedef struct stalled {
    ctl_store *s;
    int rv;
} stalled;

/* A write of ours that waits for the other process's lock, holding the writer's mutex. */
static void *stalled_write(void *arg)
{
    stalled *w = arg;
    ctl_deny d = entry("p0-t0-9");
    w->rv = ctl_store_deny_add(w->s, &d);
    return NULL;
}

/* While another process holds the write lock for 5 s and a write of ours waits for it (with
 * the writer's mutex), every read is answered in well under a second and sees the last commit
 * (not the stalled writer's row); the waiting write then gives up with -EBUSY. */
START_TEST(test_ctl_store_read_while_writer_stalls)
{
    char path[512], err[256] = "";
    snprintf(path, sizeof(path), "%s/read-%ld.db", dir, (long)getpid());
    ctl_store *s = NULL;
    ck_assert_msg(ctl_store_open(path, &s, err, sizeof(err)) == 0, "%s", err);
    ctl_deny a = entry("p0-t0-0");
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    ctl_store_set_busy_ms(s, 3000);
    pid_t pid = hold_write_lock(path, 5);
    stalled w = {s, 1};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, stalled_write, &w), 0);
    usleep(200 * 1000); /* the write is waiting inside the store */
    double t0 = now_s();
    json_object *list = ctl_store_deny_list(s);
    int64_t v = ctl_store_version(s);
    json_object *audit = ctl_store_audit(s, 0, 100);
    double took = now_s() - t0;
    ck_assert_ptr_nonnull(list);
    ck_assert_uint_eq(json_object_array_length(list), 1);
    ck_assert_int_eq(v, 1);
    ck_assert_ptr_nonnull(audit);
    ck_assert_uint_eq(json_object_array_length(audit), 1);
    ck_assert_msg(took < 0.5, "the reads took %.3f s behind the stalled writer", took);
    json_object_put(list);
    json_object_put(audit);
    pthread_join(th, NULL);
    ck_assert_int_eq(w.rv, -EBUSY);
    reap(pid);
    ctl_store_close(s);
}
END_TEST

/* A write that cannot have the store within the bound (another process holds the write lock
 * past it) fails with -EBUSY after about the bound, and nothing is changed: not the entries,
 * not the version, not the audit log. Once the lock is gone, the same write commits. */
START_TEST(test_ctl_store_write_busy)
{
    char path[512], err[256] = "";
    snprintf(path, sizeof(path), "%s/busy-%ld.db", dir, (long)getpid());
    ctl_store *s = NULL;
    ck_assert_msg(ctl_store_open(path, &s, err, sizeof(err)) == 0, "%s", err);
    ctl_store_set_busy_ms(s, 400);
    ctl_deny a = entry("p0-t0-0");
    ck_assert_int_eq(ctl_store_deny_add(s, &a), 0);
    pid_t pid = hold_write_lock(path, 5);
    ctl_deny b = entry("p0-t0-1");
    double t0 = now_s();
    int rv = ctl_store_deny_add(s, &b);
    double took = now_s() - t0;
    ck_assert_int_eq(rv, -EBUSY);
    ck_assert_msg(took >= 0.35 && took < 2.0, "gave up after %.3f s", took);
    ck_assert_int_eq(ctl_store_deny_del(s, a.id, "olga"), -EBUSY);
    ck_assert_int_eq(ctl_store_agent_put(s, "h0", "{}", 1), -EBUSY);
    ck_assert_ptr_nonnull(strstr(ctl_store_strerror(-EBUSY), "busy"));
    json_object *list = ctl_store_deny_list(s);
    ck_assert_uint_eq(json_object_array_length(list), 1);
    json_object_put(list);
    ck_assert_int_eq(ctl_store_version(s), 1);
    reap(pid);
    ck_assert_int_eq(ctl_store_deny_add(s, &b), 0);
    ck_assert_int_eq(ctl_store_version(s), 2);
    json_object *audit = ctl_store_audit(s, 0, 100);
    ck_assert_uint_eq(json_object_array_length(audit), 2);
    json_object_put(audit);
    ctl_store_close(s);
}
END_TEST

Suite *ctl_store_busy_suite(void)
{
    Suite *s = suite_create("store_busy");
    TCase *tc = tcase_create("store_busy");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_test(tc, test_ctl_store_read_while_writer_stalls);
    tcase_add_test(tc, test_ctl_store_write_busy);
    suite_add_tcase(s, tc);
    return s;
}
