/* SPDX-License-Identifier: MIT */
/* Unit tests of the HTTP server layer, a real server on 127.0.0.1:0 and raw sockets: refusals
 * before the body (no token with 100 MB announced, a body over the limit, chunked or not, a
 * 32 KiB token), the request deadline against a client sending a byte at a time, the rate and
 * the waiting cap per token, a closed suspended request freeing its slot, stops with suspended
 * requests, and the external mode on a libevent loop. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include <event2/event.h>

#include "util_httpd.h"
#include "util_test.h"

#define TOK_A "tok-agent-0000000000001"
#define TOK_B "tok-agent-0000000000002"

static char dir[256];
static util_auth auth;

static void setup_once(void)
{
    char path[512], err[256];
    signal(SIGPIPE, SIG_IGN);
    util_test_mkdtemp(dir, sizeof(dir), "util_httpd");
    util_test_write(dir, "tokens", TOK_A " agent h0\n" TOK_B " agent h1\n", path, sizeof(path));
    chmod(path, 0600); /* util_auth_load refuses a tokens file others may read */
    ck_assert_int_eq(util_auth_load(path, &auth, err, sizeof(err)), 0);
}

static void teardown_once(void)
{
    util_auth_free(&auth);
    util_test_rmdir(dir);
}

static uint64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The test server: /api/ needs a token (401 in admission); /wait suspends for ?ms= (answers
 * "resumed" after); anything else answers 200 with the body's length. */
static int admit(void *user, util_httpd_req *req, size_t *pmax_body, char *detail, size_t len)
{
    (void)user;
    (void)pmax_body;
    if (strncmp(util_httpd_req_path(req), "/api/", 5) == 0 && !util_httpd_req_token(req)) {
        snprintf(detail, len, "a valid bearer token is needed");
        return 401;
    }
    return 0;
}

static void handle(void *user, util_httpd_req *req)
{
    (void)user;
    if (strcmp(util_httpd_req_path(req), "/wait") == 0) {
        if (util_httpd_req_resumed(req)) {
            util_httpd_respond(req, 200, "text/plain", util_xstrdup("resumed"), 7, NULL);
            return;
        }
        const char *ms = util_httpd_req_arg(req, "ms");
        util_httpd_suspend(req, ms ? (unsigned)atoi(ms) : 5000);
        return;
    }
    size_t len;
    util_httpd_req_body(req, &len);
    char *b = util_xmalloc(32);
    int n = snprintf(b, 32, "%zu", len);
    util_httpd_respond(req, 200, "text/plain", b, (size_t)n, NULL);
}

static util_httpd *serve(util_httpd_cfg *over)
{
    char err[256];
    util_httpd_cfg c = {.name = "test",
                        .listen = "127.0.0.1:0",
                        .threads = 2,
                        .max_body = 1024,
                        .auth = &auth,
                        .admit = admit,
                        .handle = handle};
    if (over) {
        c.request_timeout_ms = over->request_timeout_ms;
        c.rate = over->rate;
        c.burst = over->burst;
        c.max_waiting = over->max_waiting;
        c.base = over->base;
    }
    util_httpd *h = NULL;
    int rv = util_httpd_start(&c, &h, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    return h;
}

static int dial(const util_httpd *h)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)util_httpd_port(h))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void put(int fd, const char *s)
{
    size_t n = strlen(s);
    ck_assert_int_eq(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* What arrives within |ms| (until the peer closes, or |ms| passes): into |buf|; the status of
 * the answer in it (0: none), and whether the connection closed (*pclosed). */
static int answer(int fd, unsigned ms, char *buf, size_t buflen, bool *pclosed)
{
    size_t got = 0;
    uint64_t end = ms_now() + ms;
    bool closed = false;
    buf[0] = '\0';
    while (ms_now() < end && got + 1 < buflen) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(end - ms_now())) <= 0) {
            break;
        }
        ssize_t n = recv(fd, buf + got, buflen - 1 - got, 0);
        if (n <= 0) {
            closed = true;
            break;
        }
        got += (size_t)n;
        buf[got] = '\0';
        char *hdr = strstr(buf, "\r\n\r\n");
        const char *cl = strcasestr(buf, "Content-Length: ");
        if (!pclosed && hdr && cl && got >= (size_t)(hdr + 4 - buf) + strtoul(cl + 16, NULL, 10)) {
            break; /* the whole answer, and the caller does not wait for the close */
        }
    }
    if (pclosed) {
        *pclosed = closed;
    }
    int status = 0;
    sscanf(buf, "HTTP/1.1 %d", &status);
    return status;
}

static int waiting(util_httpd *h)
{
    util_httpd_stats st;
    util_httpd_stats_get(h, &st);
    return (int)st.waiting;
}

/* Waits up to |ms| for |n| suspended requests. */
static bool waiting_reaches(util_httpd *h, int n, unsigned ms)
{
    uint64_t end = ms_now() + ms;
    while (waiting(h) != n && ms_now() < end) {
        usleep(10000);
    }
    return waiting(h) == n;
}

/* 100 MB announced without a token and no byte of it sent: 401 at once, and the connection
 * closed (the body is never read). */
START_TEST(test_util_httpd_refuse_before_body)
{
    util_httpd *h = serve(NULL);
    int fd = dial(h);
    char buf[4096];
    bool closed;
    uint64_t t0 = ms_now();
    put(fd, "POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            "Content-Length: 100000000\r\n\r\n");
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), &closed), 401);
    ck_assert_msg(closed && ms_now() - t0 < 1000, "answered and closed in %llu ms",
                  (unsigned long long)(ms_now() - t0));
    ck_assert_ptr_nonnull(strstr(buf, "application/problem+json"));
    ck_assert_ptr_nonnull(strstr(buf, "\"status\":401"));
    ck_assert_ptr_nonnull(strstr(buf, "WWW-Authenticate: Bearer"));
    close(fd);
    util_httpd_stats st;
    util_httpd_stats_get(h, &st);
    ck_assert_uint_eq(st.refused, 1);
    util_httpd_free(h);
}
END_TEST

/* A Content-Length over the limit, with a good token: 413 before the body. */
START_TEST(test_util_httpd_content_length_over)
{
    util_httpd *h = serve(NULL);
    int fd = dial(h);
    char buf[4096];
    bool closed;
    put(fd, "POST /api/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " TOK_A "\r\n"
            "Content-Length: 1025\r\n\r\n");
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), &closed), 413);
    ck_assert_ptr_nonnull(strstr(buf, "over 1024 bytes"));
    close(fd);
    /* at the limit it is read */
    fd = dial(h);
    char req[2048];
    snprintf(req, sizeof(req),
             "POST /api/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " TOK_A "\r\n"
             "Content-Length: 1024\r\n\r\n%01024d",
             0);
    put(fd, req);
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 200);
    ck_assert_ptr_nonnull(strstr(buf, "\r\n\r\n1024"));
    close(fd);
    util_httpd_free(h);
}
END_TEST

/* A chunked body that grows past the limit: 413, and the connection closed. */
START_TEST(test_util_httpd_chunked_over)
{
    util_httpd *h = serve(NULL);
    int fd = dial(h);
    char buf[4096];
    bool closed;
    put(fd, "POST /api/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " TOK_A "\r\n"
            "Transfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 6; i++) {
        char c[600];
        memset(c, 'x', sizeof(c));
        memcpy(c, "200\r\n", 5);
        memcpy(c + 5 + 512, "\r\n", 3);
        ck_assert_int_eq(send(fd, c, 5 + 512 + 2, MSG_NOSIGNAL), 519);
    }
    put(fd, "0\r\n\r\n");
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), &closed), 413);
    ck_assert(closed);
    close(fd);
    util_httpd_free(h);
}
END_TEST

/* A wrong token of 32 KiB: 401 at once, never looked up; one of 500 bytes: looked up, 401. */
START_TEST(test_util_httpd_long_token)
{
    util_httpd *h = serve(NULL);
    size_t n = 32768;
    char *req = util_xmalloc(n + 256), buf[4096];
    int off = snprintf(req, n + 256, "GET /api/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ");
    memset(req + off, 'k', n);
    strcpy(req + off + n, "\r\n\r\n");
    int fd = dial(h);
    uint64_t t0 = ms_now();
    put(fd, req);
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 401);
    ck_assert_msg(ms_now() - t0 < 500, "401 after %llu ms", (unsigned long long)(ms_now() - t0));
    ck_assert_ptr_nonnull(strstr(buf, "over 512 bytes"));
    close(fd);
    strcpy(req + off + 500, "\r\n\r\n");
    fd = dial(h);
    put(fd, req);
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 401);
    ck_assert_ptr_nonnull(strstr(buf, "a valid bearer token is needed"));
    close(fd);
    free(req);
    util_httpd_free(h);
}
END_TEST

/* A client sending a byte every 300 ms is cut at the request's deadline (1 s), though it is
 * never idle. */
START_TEST(test_util_httpd_deadline)
{
    util_httpd *h = serve(&(util_httpd_cfg){.request_timeout_ms = 1000});
    const char *req = "GET /slow HTTP/1.1\r\nHost: a\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    int fd = dial(h);
    uint64_t t0 = ms_now(), cut = 0;
    for (size_t i = 0; req[i] && !cut; i++) {
        if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1) {
            cut = ms_now();
            break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 300) > 0) {
            char b[256];
            if (recv(fd, b, sizeof(b), 0) <= 0) {
                cut = ms_now();
            }
        }
    }
    ck_assert_msg(cut, "never cut");
    ck_assert_msg(cut - t0 >= 900 && cut - t0 < 2000, "cut after %llu ms",
                  (unsigned long long)(cut - t0));
    close(fd);
    util_httpd_stats st;
    util_httpd_stats_get(h, &st);
    ck_assert_uint_eq(st.cut, 1);
    util_httpd_free(h);
}
END_TEST

/* Over its rate a token is refused 429 with Retry-After; another token is not. */
START_TEST(test_util_httpd_rate)
{
    util_httpd *h = serve(&(util_httpd_cfg){.rate = 1, .burst = 3});
    char buf[4096];
    for (int i = 0; i < 4; i++) {
        int fd = dial(h);
        put(fd, "GET /x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " TOK_A "\r\n\r\n");
        ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), i < 3 ? 200 : 429);
        close(fd);
    }
    ck_assert_ptr_nonnull(strstr(buf, "Retry-After: 1"));
    int fd = dial(h);
    put(fd, "GET /x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " TOK_B "\r\n\r\n");
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 200);
    close(fd);
    util_httpd_free(h);
}
END_TEST

#define WAIT_REQ(tok) "GET /wait?ms=20000 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " tok "\r\n\r\n"

/* A token holds at most max_waiting suspended requests: the next is 429 at once; another token
 * still waits; a wake answers them all. */
START_TEST(test_util_httpd_waiting_cap)
{
    util_httpd *h = serve(&(util_httpd_cfg){.max_waiting = 2});
    char buf[4096];
    int fd[4];
    for (int i = 0; i < 2; i++) {
        fd[i] = dial(h);
        put(fd[i], WAIT_REQ(TOK_A));
    }
    ck_assert(waiting_reaches(h, 2, 2000));
    fd[2] = dial(h);
    put(fd[2], WAIT_REQ(TOK_A));
    ck_assert_int_eq(answer(fd[2], 2000, buf, sizeof(buf), NULL), 429);
    ck_assert_ptr_nonnull(strstr(buf, "Retry-After: 1"));
    fd[3] = dial(h);
    put(fd[3], WAIT_REQ(TOK_B));
    ck_assert(waiting_reaches(h, 3, 2000));
    util_httpd_wake(h);
    for (int i = 0; i < 4; i++) {
        if (i != 2) {
            ck_assert_int_eq(answer(fd[i], 2000, buf, sizeof(buf), NULL), 200);
            ck_assert_ptr_nonnull(strstr(buf, "resumed"));
        }
        close(fd[i]);
    }
    ck_assert(waiting_reaches(h, 0, 1000));
    util_httpd_free(h);
}
END_TEST

/* A suspended request whose client closes frees its slot within a second. */
START_TEST(test_util_httpd_closed_frees)
{
    util_httpd *h = serve(&(util_httpd_cfg){.max_waiting = 1});
    char buf[4096];
    int fd = dial(h);
    put(fd, WAIT_REQ(TOK_A));
    ck_assert(waiting_reaches(h, 1, 2000));
    uint64_t t0 = ms_now();
    close(fd);
    ck_assert(waiting_reaches(h, 0, 1000));
    ck_assert_msg(ms_now() - t0 < 1000, "freed after %llu ms", (unsigned long long)(ms_now() - t0));
    fd = dial(h);
    put(fd, WAIT_REQ(TOK_A));
    ck_assert(waiting_reaches(h, 1, 2000));
    ck_assert_int_eq(answer(fd, 200, buf, sizeof(buf), NULL), 0); /* waiting, not refused */
    close(fd);
    util_httpd_free(h);
}
END_TEST

/* A wait runs out: answered after it, not before. */
START_TEST(test_util_httpd_wait_runs_out)
{
    util_httpd *h = serve(NULL);
    char buf[4096];
    int fd = dial(h);
    uint64_t t0 = ms_now();
    put(fd, "GET /wait?ms=600 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " TOK_A "\r\n\r\n");
    ck_assert_int_eq(answer(fd, 3000, buf, sizeof(buf), NULL), 200);
    uint64_t took = ms_now() - t0;
    ck_assert_msg(took >= 550 && took < 1500, "answered after %llu ms", (unsigned long long)took);
    close(fd);
    util_httpd_free(h);
}
END_TEST

/* Stops with suspended requests, 100 times: each ends (MHD would abort on one left
 * suspended), and every waiting client gets its answer or its connection closed. */
START_TEST(test_util_httpd_stop_suspended)
{
    char buf[4096];
    for (int round = 0; round < 100; round++) {
        util_httpd *h = serve(&(util_httpd_cfg){.max_waiting = 8});
        int fd[5];
        for (int i = 0; i < 5; i++) {
            fd[i] = dial(h);
            put(fd[i], i % 2 ? WAIT_REQ(TOK_A) : WAIT_REQ(TOK_B));
        }
        ck_assert(waiting_reaches(h, 5, 2000));
        util_httpd_free(h);
        for (int i = 0; i < 5; i++) {
            bool closed;
            answer(fd[i], 1000, buf, sizeof(buf), &closed);
            ck_assert(closed);
            close(fd[i]);
        }
    }
}
END_TEST

/* --- external mode ------------------------------------------------------------------------- */

static void *loop_main(void *arg)
{
    event_base_loop(arg, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

/* On a libevent loop: answers, a refusal before the body, a suspended request resumed by a
 * wake from another thread, and a stop with one suspended. */
START_TEST(test_util_httpd_external)
{
    struct event_base *base = event_base_new();
    util_httpd *h = serve(&(util_httpd_cfg){.base = base});
    pthread_t t;
    pthread_create(&t, NULL, loop_main, base);
    char buf[4096];
    int fd = dial(h);
    put(fd, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 200);
    close(fd);
    fd = dial(h);
    put(fd, "POST /api/x HTTP/1.1\r\nHost: a\r\nContent-Length: 300000000\r\n\r\n");
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 401);
    close(fd);
    fd = dial(h);
    put(fd, WAIT_REQ(TOK_A));
    ck_assert(waiting_reaches(h, 1, 2000));
    util_httpd_wake(h);
    ck_assert_int_eq(answer(fd, 2000, buf, sizeof(buf), NULL), 200);
    close(fd);
    fd = dial(h);
    put(fd, WAIT_REQ(TOK_A));
    ck_assert(waiting_reaches(h, 1, 2000));
    event_base_loopbreak(base);
    pthread_join(t, NULL);
    util_httpd_free(h);
    close(fd);
    event_base_free(base);
}
END_TEST

Suite *util_httpd_suite(void)
{
    Suite *s = suite_create("util_httpd");
    TCase *tc = tcase_create("httpd");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_util_httpd_refuse_before_body);
    tcase_add_test(tc, test_util_httpd_content_length_over);
    tcase_add_test(tc, test_util_httpd_chunked_over);
    tcase_add_test(tc, test_util_httpd_long_token);
    tcase_add_test(tc, test_util_httpd_deadline);
    tcase_add_test(tc, test_util_httpd_rate);
    tcase_add_test(tc, test_util_httpd_waiting_cap);
    tcase_add_test(tc, test_util_httpd_closed_frees);
    tcase_add_test(tc, test_util_httpd_wait_runs_out);
    tcase_add_test(tc, test_util_httpd_stop_suspended);
    tcase_add_test(tc, test_util_httpd_external);
    suite_add_tcase(s, tc);
    return s;
}
