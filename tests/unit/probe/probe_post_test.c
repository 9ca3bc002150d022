/* SPDX-License-Identifier: MIT */
/* probe_post, the localizer's evidence sender, against a small HTTP server on loopback that
 * holds each request until the test answers it: one request in flight at a time, a window's
 * bodies in order, the next window's replacing those still waiting (counted), and failures
 * counted: an error answer, no server, no answer within the timeout. */
#include <check.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "probe_post.h"

/* The server: the requests it holds, and every body it was sent, in order. */
typedef struct srv {
    struct event_base *base;
    struct evhttp *http;
    unsigned port;
    struct evhttp_request *held[8];
    unsigned nheld, maxheld;
    char bodies[32][32];
    unsigned nbodies;
} srv;

static void on_req(struct evhttp_request *req, void *arg)
{
    srv *s = arg;
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    ck_assert_uint_lt(s->nbodies, 32);
    ck_assert_uint_lt(len, 32);
    evbuffer_copyout(in, s->bodies[s->nbodies], len);
    s->bodies[s->nbodies++][len] = '\0';
    ck_assert_uint_lt(s->nheld, 8);
    s->held[s->nheld++] = req;
    s->maxheld = s->nheld > s->maxheld ? s->nheld : s->maxheld;
}

static void srv_start(srv *s, struct event_base *base)
{
    memset(s, 0, sizeof(*s));
    s->base = base;
    s->http = evhttp_new(base);
    evhttp_set_gencb(s->http, on_req, s);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(bs);
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &sl), 0);
    s->port = ntohs(sa.sin_port);
}

/* Answers the oldest request held with |code|. */
static void srv_answer(srv *s, int code)
{
    ck_assert_uint_gt(s->nheld, 0);
    struct evhttp_request *req = s->held[0];
    memmove(s->held, s->held + 1, (s->nheld - 1) * sizeof(s->held[0]));
    s->nheld--;
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "{}");
    evhttp_send_reply(req, code, "X", b);
    evbuffer_free(b);
}

/* Runs the loop until |cond| holds or 3 s pass. */
#define RUN_UNTIL(base, cond)                                                                      \
    do {                                                                                           \
        for (int _i = 0; _i < 300 && !(cond); _i++) {                                              \
            struct timeval _tv = {0, 10000};                                                       \
            event_base_loopexit(base, &_tv);                                                       \
            event_base_dispatch(base);                                                             \
        }                                                                                          \
        ck_assert_msg(cond, "timed out waiting for " #cond);                                       \
    } while (0)

/* |n| bodies "name0", "name1", ... */
static void batch(probe_post *p, const char *name, size_t n)
{
    char *b[8];
    for (size_t i = 0; i < n; i++) {
        b[i] = malloc(32);
        snprintf(b[i], 32, "\"%s%zu\"", name, i);
    }
    probe_post_send(p, b, n);
}

/* The controller (one, |port|'s) and the sender; the test frees both, the sender first. */
static probe_ctl *ctl;

static probe_post *make(struct event_base *base, unsigned port, unsigned timeout_ms)
{
    char url[64], err[256];
    probe_post *p = NULL;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/", port);
    probe_ctl_cfg cc = {.base = base, .urls = url, .token = "t"};
    ck_assert_int_eq(probe_ctl_new(&cc, &ctl, err, sizeof(err)), 0);
    probe_post_cfg cfg = {.ctl = ctl, .path = "/api/v1/probes", .timeout_ms = timeout_ms};
    ck_assert_int_eq(probe_post_new(&cfg, &p), 0);
    return p;
}

static void unmake(probe_post *p)
{
    probe_post_free(p);
    probe_ctl_free(ctl);
    ctl = NULL;
}

START_TEST(test_probe_post_one_at_a_time)
{
    struct event_base *base = event_base_new();
    srv s;
    probe_post_stats st;
    signal(SIGPIPE, SIG_IGN);
    srv_start(&s, base);
    probe_post *p = make(base, s.port, 0);
    ck_assert(probe_post_idle(p));
    /* a window of three posts: they go in order, one at a time */
    batch(p, "a", 3);
    ck_assert(!probe_post_idle(p));
    RUN_UNTIL(base, s.nbodies == 1);
    ck_assert_str_eq(s.bodies[0], "\"a0\"");
    srv_answer(&s, 202);
    RUN_UNTIL(base, s.nbodies == 2);
    /* the next window's while a1 is in flight: a2 never goes */
    batch(p, "b", 2);
    probe_post_stats_get(p, &st);
    ck_assert_uint_eq(st.replaced, 1);
    srv_answer(&s, 202);
    RUN_UNTIL(base, s.nbodies == 3);
    srv_answer(&s, 500);
    RUN_UNTIL(base, s.nbodies == 4);
    srv_answer(&s, 202);
    RUN_UNTIL(base, probe_post_idle(p));
    ck_assert_str_eq(s.bodies[1], "\"a1\"");
    ck_assert_str_eq(s.bodies[2], "\"b0\"");
    ck_assert_str_eq(s.bodies[3], "\"b1\"");
    ck_assert_uint_eq(s.maxheld, 1);
    probe_post_stats_get(p, &st);
    ck_assert_uint_eq(st.accepted, 3);
    ck_assert_uint_eq(st.failed, 1);
    ck_assert_uint_eq(st.replaced, 1);
    ck_assert_int_eq(st.last_status, 202);
    /* an empty batch drops what waits and sends nothing */
    batch(p, "c", 2);
    batch(p, "d", 0);
    RUN_UNTIL(base, s.nbodies == 5);
    srv_answer(&s, 202);
    RUN_UNTIL(base, probe_post_idle(p));
    ck_assert_uint_eq(s.nbodies, 5);
    probe_post_stats_get(p, &st);
    ck_assert_uint_eq(st.replaced, 2);
    unmake(p);
    evhttp_free(s.http);
    event_base_free(base);
}
END_TEST

START_TEST(test_probe_post_failures)
{
    struct event_base *base = event_base_new();
    srv s;
    probe_post_stats st;
    signal(SIGPIPE, SIG_IGN);
    srv_start(&s, base);
    /* a server that does not answer: the request times out, and the next goes */
    probe_post *p = make(base, s.port, 200);
    batch(p, "a", 2);
    RUN_UNTIL(base, s.nbodies == 2);
    probe_post_stats_get(p, &st);
    ck_assert_uint_eq(st.failed, 1);
    ck_assert_int_eq(st.last_status, 0);
    unmake(p); /* with a1 in flight: cancelled */
    /* nobody listening */
    unsigned port = s.port;
    evhttp_free(s.http);
    s.http = NULL;
    p = make(base, port, 0);
    batch(p, "x", 3);
    RUN_UNTIL(base, probe_post_idle(p));
    probe_post_stats_get(p, &st);
    ck_assert_uint_eq(st.failed, 3);
    ck_assert_uint_eq(st.accepted, 0);
    unmake(p);
    /* a request util_http refuses to start: a CA file that is not there */
    char err[256];
    probe_ctl_cfg cc = {.base = base, .urls = "https://127.0.0.1:1", .cafile = "/nonexistent"};
    ck_assert_int_eq(probe_ctl_new(&cc, &ctl, err, sizeof(err)), 0);
    probe_post_cfg pc = {.ctl = ctl, .path = "/api/v1/probes"};
    ck_assert_int_eq(probe_post_new(&pc, &p), 0);
    batch(p, "y", 2);
    ck_assert(probe_post_idle(p));
    probe_post_stats_get(p, &st);
    ck_assert_uint_eq(st.failed, 2);
    unmake(p);
    probe_post_free(NULL);
    /* no controller URL, or not one */
    cc = (probe_ctl_cfg){.base = base, .urls = "ftp://127.0.0.1/"};
    ck_assert_int_eq(probe_ctl_new(&cc, &ctl, err, sizeof(err)), -EINVAL);
    probe_post_cfg none = {.path = "/api/v1/probes"};
    ck_assert_int_eq(probe_post_new(&none, &p), -EINVAL);
    event_base_free(base);
}
END_TEST

Suite *probe_post_suite(void)
{
    Suite *s = suite_create("probe_post");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_probe_post_one_at_a_time);
    tcase_add_test(tc, test_probe_post_failures);
    suite_add_tcase(s, tc);
    return s;
}
