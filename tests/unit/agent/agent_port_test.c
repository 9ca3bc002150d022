/* SPDX-License-Identifier: MIT */
/* Unit tests of the port watcher: veth pairs in a network namespace of the test's own, their
 * link state changed with ip(8), every callback awaited (bounded) and none to spare. Needs
 * root, and Check's fork mode: each test process enters a namespace that dies with it. */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_port.h"

#define MAX_CALLS 64
#define WAIT_MS 5000  /* a change comes within a second (the kernel's linkwatch delay) */
#define SETTLE_MS 400 /* how long nothing more must come */

typedef struct calls {
    unsigned n;
    unsigned port[MAX_CALLS];
    bool up[MAX_CALLS];
} calls;

static void on_change(void *user, unsigned port, bool up)
{
    calls *c = user;
    if (c->n < MAX_CALLS) {
        c->port[c->n] = port;
        c->up[c->n] = up;
    }
    c->n++;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs a shell command; fails the test if it fails. */
static void sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "'%s' failed", cmd);
}

/* This test process moves to a namespace of its own: whatever happens, it goes when the
 * process ends, with every interface made in it. */
static void enter_netns(void)
{
    ck_assert_msg(geteuid() == 0, "needs root: it makes a network namespace");
    const char *fork_mode = getenv("CK_FORK");
    ck_assert_msg(!fork_mode || strcmp(fork_mode, "no") != 0,
                  "needs Check's fork mode: it leaves the runner's network namespace");
    ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
    sh("ip link set lo up");
}

static void veth_up(const char *a, const char *b)
{
    sh("ip link add %s type veth peer name %s && ip link set %s up && ip link set %s up", a, b, a,
       b);
}

/* Runs the loop for |ms|, or until |c| has |until| calls (0: no such end). */
static void run(struct event_base *base, calls *c, unsigned until, unsigned ms)
{
    uint64_t end = now_ms() + ms;
    while ((!until || c->n < until) && now_ms() < end) {
        struct timeval tv = {0, 20000};
        event_base_loopexit(base, &tv);
        ck_assert_int_ge(event_base_dispatch(base), 0);
    }
}

/* The next call must be |port| going |up|, and nothing more may follow. */
static void expect(struct event_base *base, calls *c, unsigned port, bool up)
{
    unsigned n = c->n;
    run(base, c, n + 1, WAIT_MS);
    ck_assert_msg(c->n > n, "no call for port %u going %s within %d ms", port, up ? "up" : "down",
                  WAIT_MS);
    ck_assert_msg(c->port[n] == port && c->up[n] == up, "call: port %u %s, want port %u %s",
                  c->port[n], c->up[n] ? "up" : "down", port, up ? "up" : "down");
    run(base, c, 0, SETTLE_MS);
    ck_assert_msg(c->n == n + 1, "%u calls more than one (the next: port %u %s)", c->n - n - 1,
                  c->port[n + 1], c->up[n + 1] ? "up" : "down");
}

static void expect_none(struct event_base *base, calls *c)
{
    unsigned n = c->n;
    run(base, c, 0, SETTLE_MS);
    ck_assert_msg(c->n == n, "a call not asked for: port %u %s", c->port[n],
                  c->up[n] ? "up" : "down");
}

/* Bad arguments are refused before any socket is opened. */
START_TEST(test_agent_port_bad_args)
{
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    calls c = {0};
    agent_port *ap = NULL;
    const char *one[] = {"eth0"};
    const char *empty[] = {""};
    const char *longn[] = {"abcdefghijklmnop"}; /* 16: one too many */
    const char *slash[] = {"a/b"};
    const char *space[] = {"a b"};
    const char *dup[] = {"eth0", "eth1", "eth0"};
    const char *null[] = {NULL};
    const char *many[17];
    for (unsigned i = 0; i < 17; i++) {
        many[i] = "x";
    }
    ck_assert_int_eq(agent_port_new(NULL, one, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, NULL, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, one, 0, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, many, 17, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, one, 1, NULL, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, empty, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, longn, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, slash, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, space, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, dup, 3, on_change, &c, &ap), -EINVAL);
    ck_assert_int_eq(agent_port_new(base, null, 1, on_change, &c, &ap), -EINVAL);
    ck_assert_ptr_null(ap);
    ck_assert(!agent_port_up(NULL, 0));
    agent_port_free(NULL);
    event_base_free(base);
}
END_TEST

/* The state read at start; a peer down and up, the port down and up, deleted and made again,
 * a missing port appearing, a port renamed away and back; other links changing change
 * nothing. */
START_TEST(test_agent_port_changes)
{
    enter_netns();
    veth_up("a0", "b0");
    sh("ip link add a1 type veth peer name b1 && ip link set a1 up"); /* its peer is down */
    veth_up("x0", "y0");
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    calls c = {0};
    agent_port *ap = NULL;
    const char *names[] = {"a0", "a1", "a2"};
    /* linkwatch may not have run yet for a0: wait until the kernel calls it running */
    sh("for i in $(seq 50); do ip link show a0 | grep -q 'state UP' && exit 0; sleep 0.1; done; "
       "exit 1");
    ck_assert_int_eq(agent_port_new(base, names, 3, on_change, &c, &ap), 0);
    ck_assert(agent_port_up(ap, 0));
    ck_assert(!agent_port_up(ap, 1));
    ck_assert(!agent_port_up(ap, 2));
    ck_assert(!agent_port_up(ap, 3));
    ck_assert_uint_eq(c.n, 0); /* the state at start is no change */
    expect_none(base, &c);

    sh("ip link set b0 down");
    expect(base, &c, 0, false);
    sh("ip link set b0 up");
    expect(base, &c, 0, true);
    sh("ip link set a0 down");
    expect(base, &c, 0, false);
    ck_assert(!agent_port_up(ap, 0));
    sh("ip link set a0 up");
    expect(base, &c, 0, true);

    /* the peer of a1 comes up: a1 runs */
    sh("ip link set b1 up");
    expect(base, &c, 1, true);

    sh("ip link del a0");
    expect(base, &c, 0, false);
    veth_up("a0", "b0");
    expect(base, &c, 0, true);

    veth_up("a2", "b2");
    expect(base, &c, 2, true);
    ck_assert(agent_port_up(ap, 2));

    /* others' links: no calls */
    sh("ip link set y0 down && ip link set x0 down && ip link set x0 up && ip link set y0 up");
    sh("ip link del x0");
    expect_none(base, &c);

    /* renamed away while up (this kernel allows it), then back */
    sh("ip link set a2 name z2");
    expect(base, &c, 2, false);
    sh("ip link set z2 name a2");
    expect(base, &c, 2, true);
    /* a link renamed to a port's name while that port's interface is gone */
    sh("ip link del a1");
    expect(base, &c, 1, false);
    sh("ip link add q1 type veth peer name r1 && ip link set q1 name a1 && ip link set r1 up && "
       "ip link set a1 up");
    expect(base, &c, 1, true);

    agent_port_stats st;
    agent_port_get_stats(ap, &st);
    ck_assert_uint_eq(st.changes, c.n);
    ck_assert_uint_eq(st.overflows, 0);
    ck_assert_uint_eq(st.dumps, 1);
    agent_port_free(ap);
    event_base_free(base);
}
END_TEST

/* The socket's buffer overflows while the loop is away; the changes made after that (a peer
 * down, a port deleted) were lost with the rest, and a full read finds them: one call each, no
 * more. */
START_TEST(test_agent_port_overflow)
{
    enter_netns();
    veth_up("a0", "b0");
    veth_up("a1", "b1");
    sh("for i in $(seq 50); do ip link show a0 | grep -q 'state UP' && ip link show a1 | "
       "grep -q 'state UP' && exit 0; sleep 0.1; done; exit 1");
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    calls c = {0};
    agent_port *ap = NULL;
    const char *names[] = {"a0", "a1"};
    ck_assert_int_eq(agent_port_new(base, names, 2, on_change, &c, &ap), 0);
    ck_assert(agent_port_up(ap, 0) && agent_port_up(ap, 1));

    /* a flood of notifications far beyond the buffer, the loop not reading */
    char path[] = "/tmp/agent_port_test.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    for (unsigned i = 0; i < 600; i++) {
        fprintf(f, "link add f%u type veth peer name g%u\nlink set f%u up\nlink set g%u up\n", i, i,
                i, i);
    }
    fclose(f);
    sh("ip -batch %s", path);
    unlink(path);
    sh("ip link set b0 down && ip link del a1");
    run(base, &c, 2, WAIT_MS);
    run(base, &c, 0, SETTLE_MS);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_msg(c.port[0] != c.port[1] && !c.up[0] && !c.up[1], "calls: %u %d, %u %d", c.port[0],
                  c.up[0], c.port[1], c.up[1]);
    ck_assert(!agent_port_up(ap, 0) && !agent_port_up(ap, 1));
    agent_port_stats st;
    agent_port_get_stats(ap, &st);
    ck_assert_uint_ge(st.overflows, 1);
    ck_assert_uint_ge(st.dumps, 2);
    ck_assert_uint_eq(st.changes, 2);

    /* and it keeps watching */
    sh("ip link set b0 up");
    expect(base, &c, 0, true);
    agent_port_free(ap);
    event_base_free(base);
}
END_TEST

Suite *agent_port_suite(void)
{
    Suite *s = suite_create("port");
    TCase *tc = tcase_create("port");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_agent_port_bad_args);
    tcase_add_test(tc, test_agent_port_changes);
    tcase_add_test(tc, test_agent_port_overflow);
    suite_add_tcase(s, tc);
    return s;
}
