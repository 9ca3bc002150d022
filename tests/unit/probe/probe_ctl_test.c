/* SPDX-License-Identifier: MIT */
/* probe_ctl, the localizer's client of several controllers, against small HTTP servers on
 * loopback that answer as a controller's leader, follower or leaderless follower does: the
 * answers a real cluster gives only in a race (followers naming each other, a redirect off the
 * list's scheme) are made to order here; integration.probe_leader runs it on real controllers.
 * Checks: an answer as it came; a follower's 307 followed at once with the same method and
 * body; a 503 "no leader" and a refused connection passed over to the next; a whole round of
 * failures given once, as the last one; redirects past the limit -ELOOP; a redirect to
 * another scheme -EPERM; a 307 without the header is an answer; every request shares which
 * controller is current; a cancelled request's callback never runs. */
#include <check.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "probe_ctl.h"

enum { LEAD, FOLLOW, NOLEADER, BARE307 };

/* A controller: how it answers, where a follower sends, what it was asked. */
typedef struct srv {
    struct evhttp *http;
    unsigned port;
    int mode;
    char leader[64]; /* FOLLOW: the leader it names */
    unsigned hits;
    char method[8], path[64], body[64];
} srv;

static void on_req(struct evhttp_request *req, void *arg)
{
    srv *s = arg;
    struct evbuffer *in = evhttp_request_get_input_buffer(req), *out = evbuffer_new();
    size_t len = evbuffer_get_length(in);
    s->hits++;
    len = len < sizeof(s->body) - 1 ? len : sizeof(s->body) - 1;
    evbuffer_copyout(in, s->body, len);
    s->body[len] = '\0';
    snprintf(s->method, sizeof(s->method), "%s",
             evhttp_request_get_command(req) == EVHTTP_REQ_POST ? "POST" : "GET");
    snprintf(s->path, sizeof(s->path), "%s", evhttp_request_get_uri(req));
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    switch (s->mode) {
    case LEAD:
        evbuffer_add_printf(out, "{\"port\":%u}", s->port);
        evhttp_send_reply(req, 201, "Created", out);
        break;
    case FOLLOW:
    case BARE307:
        if (s->mode == FOLLOW) {
            evhttp_add_header(h, "X-Mrcfab-Leader", s->leader);
        }
        evbuffer_add_printf(out, "{\"title\":\"not the leader\"}");
        evhttp_send_reply(req, 307, "Temporary Redirect", out);
        break;
    default:
        evhttp_add_header(h, "Retry-After", "1");
        evbuffer_add_printf(out, "{\"title\":\"no leader\",\"status\":503}");
        evhttp_send_reply(req, 503, "Service Unavailable", out);
    }
    evbuffer_free(out);
}

static void srv_start(srv *s, struct event_base *base, int mode)
{
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->http = evhttp_new(base);
    evhttp_set_gencb(s->http, on_req, s);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(bs);
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &sl), 0);
    s->port = ntohs(sa.sin_port);
}

static void srv_follows(srv *s, const srv *leader)
{
    s->mode = FOLLOW;
    snprintf(s->leader, sizeof(s->leader), "http://127.0.0.1:%u", leader->port);
}

/* What a request's callback saw. */
typedef struct got {
    unsigned calls;
    int rv, status;
    char body[64], err[256];
} got;

static void on_done(void *user, util_http_result *res)
{
    got *g = user;
    g->calls++;
    g->rv = res->rv;
    g->status = res->status;
    snprintf(g->body, sizeof(g->body), "%s", res->body ? res->body : "");
    snprintf(g->err, sizeof(g->err), "%s", res->err ? res->err : "");
}

#define RUN_UNTIL(base, cond)                                                                      \
    do {                                                                                           \
        for (int _i = 0; _i < 300 && !(cond); _i++) {                                              \
            struct timeval _tv = {0, 10000};                                                       \
            event_base_loopexit(base, &_tv);                                                       \
            event_base_dispatch(base);                                                             \
        }                                                                                          \
        ck_assert_msg(cond, "timed out waiting for " #cond);                                       \
    } while (0)

static probe_ctl *make(struct event_base *base, const char *urls)
{
    char err[256];
    probe_ctl *c = NULL;
    probe_ctl_cfg cfg = {.base = base, .urls = urls, .token = "t"};
    ck_assert_msg(probe_ctl_new(&cfg, &c, err, sizeof(err)) == 0, "%s", err);
    return c;
}

static void post(probe_ctl *c, got *g, probe_ctl_req **preq)
{
    char err[256];
    memset(g, 0, sizeof(*g));
    ck_assert_int_eq(probe_ctl_start(c, "POST", "/api/v1/denylist", "{\"x\":1}", 1000, on_done, g,
                                     preq, err, sizeof(err)),
                     0);
}

/* a free port: bound, then closed */
static unsigned dead_port(struct event_base *base)
{
    srv s;
    srv_start(&s, base, LEAD);
    evhttp_free(s.http);
    return s.port;
}

START_TEST(test_probe_ctl_follows)
{
    struct event_base *base = event_base_new();
    srv lead, fol, none;
    got g;
    probe_ctl_req *req;
    char urls[256], want[64];
    signal(SIGPIPE, SIG_IGN);
    srv_start(&lead, base, LEAD);
    srv_start(&fol, base, FOLLOW);
    srv_start(&none, base, NOLEADER);
    srv_follows(&fol, &lead);
    unsigned dead = dead_port(base);
    /* the dead one first, then no leader, then a follower: the leader is found in one request */
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%u,http://127.0.0.1:%u/,http://127.0.0.1:%u",
             dead, none.port, fol.port);
    probe_ctl *c = make(base, urls);
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_int_eq(g.rv, 0);
    ck_assert_int_eq(g.status, 201);
    snprintf(want, sizeof(want), "{\"port\":%u}", lead.port);
    ck_assert_str_eq(g.body, want);
    ck_assert_uint_eq(none.hits, 1);
    ck_assert_uint_eq(fol.hits, 1);
    ck_assert_uint_eq(lead.hits, 1);
    /* the same method, path and body at the leader */
    ck_assert_str_eq(lead.method, "POST");
    ck_assert_str_eq(lead.path, "/api/v1/denylist");
    ck_assert_str_eq(lead.body, "{\"x\":1}");
    snprintf(want, sizeof(want), "http://127.0.0.1:%u", lead.port);
    ck_assert_str_eq(probe_ctl_current(c), want);
    ck_assert_uint_eq(probe_ctl_count(c), 4); /* the leader a redirect named is added */
    /* the next request goes straight to the leader */
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_uint_eq(lead.hits, 2);
    ck_assert_uint_eq(fol.hits + none.hits, 2);
    /* a cancelled request's callback never runs */
    post(c, &g, &req);
    probe_ctl_cancel(req);
    probe_ctl_cancel(NULL);
    struct timeval tv = {0, 200000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    ck_assert_uint_eq(g.calls, 0);
    probe_ctl_free(c);
    evhttp_free(lead.http);
    evhttp_free(fol.http);
    evhttp_free(none.http);
    event_base_free(base);
}
END_TEST

START_TEST(test_probe_ctl_rounds)
{
    struct event_base *base = event_base_new();
    srv a, b, bare;
    got g;
    probe_ctl_req *req;
    char urls[256], err[256];
    signal(SIGPIPE, SIG_IGN);
    /* no leader anywhere: one round, each asked once, the last answer given */
    srv_start(&a, base, NOLEADER);
    srv_start(&b, base, NOLEADER);
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%u,http://127.0.0.1:%u", a.port, b.port);
    probe_ctl *c = make(base, urls);
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_int_eq(g.rv, 0);
    ck_assert_int_eq(g.status, 503);
    ck_assert_uint_eq(a.hits + b.hits, 2);
    /* followers naming each other: over the hops, each once, then -ELOOP */
    srv_follows(&a, &b);
    srv_follows(&b, &a);
    a.hits = b.hits = 0;
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_int_eq(g.rv, -ELOOP);
    ck_assert_ptr_nonnull(strstr(g.err, "redirects"));
    ck_assert_uint_eq(a.hits + b.hits, 2 * (UTIL_HTTP_MAX_HOPS + 1));
    probe_ctl_free(c);
    /* a redirect to another scheme is not followed */
    snprintf(a.leader, sizeof(a.leader), "https://127.0.0.1:%u", b.port);
    b.mode = LEAD;
    a.hits = b.hits = 0;
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%u", a.port);
    c = make(base, urls);
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_int_eq(g.rv, -EPERM);
    ck_assert_uint_eq(b.hits, 0);
    probe_ctl_free(c);
    /* a 307 without the header names nowhere to go: an answer */
    srv_start(&bare, base, BARE307);
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%u,http://127.0.0.1:%u", bare.port, b.port);
    c = make(base, urls);
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_int_eq(g.rv, 0);
    ck_assert_int_eq(g.status, 307);
    ck_assert_uint_eq(b.hits, 0);
    probe_ctl_free(c);
    /* nobody there: a single controller's failure, given once */
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%u", dead_port(base));
    c = make(base, urls);
    post(c, &g, &req);
    RUN_UNTIL(base, g.calls);
    ck_assert_int_eq(g.rv, -ECONNREFUSED);
    probe_ctl_free(c);
    /* lists it does not take */
    probe_ctl_cfg cfg = {.base = base};
    const char *bad[] = {"", "ftp://x", "http://a:1,https://b:2", "http://a:1/api", "http://a,"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cfg.urls = bad[i];
        ck_assert_int_eq(probe_ctl_new(&cfg, &c, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(probe_ctl_check(bad[i], err, sizeof(err)), -EINVAL);
        ck_assert_uint_gt(strlen(err), 0);
    }
    ck_assert_int_eq(probe_ctl_check("http://a:1/,http://b:2", err, sizeof(err)), 0);
    probe_ctl_free(NULL);
    evhttp_free(a.http);
    evhttp_free(b.http);
    evhttp_free(bare.http);
    event_base_free(base);
}
END_TEST

Suite *probe_ctl_suite(void)
{
    Suite *s = suite_create("probe_ctl");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_probe_ctl_follows);
    tcase_add_test(tc, test_probe_ctl_rounds);
    suite_add_tcase(s, tc);
    return s;
}
