/* SPDX-License-Identifier: MIT */
/* bench_ctl_push: how long a denylist change takes to reach every agent waiting on the push
 * channel. N subscribers (agent tokens, round robin) hold GET /api/v1/denylist/version?after=V
 * &wait=S open; once /metrics counts all N as waiting, one POST /api/v1/denylist (operator
 * token) is sent on a connection opened beforehand, and each subscriber's answer is timed from
 * the moment the POST's first byte was written. Every subscriber must get 200 with a version
 * past V. Prints one JSON line; exits 0 when all did, 1 otherwise, 2 on bad arguments. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_ctl_http.h"

#define MAX_TOKENS 1024

static const char usage[] = "usage: bench_ctl_push --port PORT --tokens FILE [options]\n"
                            "  --ip ADDR          the controller's address (127.0.0.1)\n"
                            "  --subscribers N    push-channel subscribers (1000)\n"
                            "  --wait S           their wait= (30 seconds)\n"
                            "  --element NAME     what the POST denies (p3-t1-17)\n";

/* The "version" member of a small JSON body, -1 if none. */
static long long version_of(const char *body, size_t len)
{
    const char *k = NULL;
    for (size_t i = 0; i + 9 <= len; i++) {
        if (memcmp(body + i, "\"version\"", 9) == 0) {
            k = body + i + 9;
            break;
        }
    }
    if (!k) {
        return -1;
    }
    while (*k == ' ' || *k == ':') {
        k++;
    }
    return strtoll(k, NULL, 10);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"port", required_argument, NULL, 'P'}, {"tokens", required_argument, NULL, 'k'},
        {"ip", required_argument, NULL, 'i'},   {"subscribers", required_argument, NULL, 'n'},
        {"wait", required_argument, NULL, 'w'}, {"element", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *tokfile = NULL, *ip = "127.0.0.1", *element = "p3-t1-17";
    unsigned port = 0, nsub = 1000, wait_s = 30;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (opt) {
        case 'P':
            port = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'k':
            tokfile = optarg;
            break;
        case 'i':
            ip = optarg;
            break;
        case 'n':
            nsub = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'w':
            wait_s = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'e':
            element = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!port || port > 65535 || !tokfile || !nsub || !wait_s || strlen(element) > 95) {
        fputs(usage, stderr);
        return 2;
    }
    /* a socket per subscriber, and a few more */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < nsub + 64) {
        rl.rlim_cur =
            rl.rlim_max == RLIM_INFINITY || rl.rlim_max > nsub + 64 ? nsub + 64 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char *agents[MAX_TOKENS], *ops[1];
    int nagents = bench_tokens(tokfile, "agent", agents, MAX_TOKENS);
    int nops = bench_tokens(tokfile, "operator", ops, 1);
    if (nagents <= 0 || nops <= 0) {
        fprintf(stderr, "bench_ctl_push: %s needs an agent and an operator token\n", tokfile);
        return 2;
    }

    char req[2048], *body = NULL;
    int status = 0, rc = 1;
    size_t len = bench_http_request(req, sizeof(req), "GET",
                                    "/api/v1/denylist/version?after=0&wait=0", agents[0], NULL, 0);
    if (bench_http_once(ip, port, req, len, 5000, &status, &body) != 0 || status != 200) {
        fprintf(stderr, "bench_ctl_push: cannot read the denylist version (HTTP %d)\n", status);
        return 1;
    }
    long long v0 = version_of(body, strlen(body));
    free(body);
    body = NULL;

    bench_conn *subs = calloc(nsub + 1, sizeof(*subs));
    uint64_t *lat = calloc(nsub, sizeof(*lat));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (!subs || !lat || ep < 0) {
        fprintf(stderr, "bench_ctl_push: out of memory\n");
        return 1;
    }
    unsigned opened = 0, answered = 0, early = 0, wrong = 0;
    bool post_open = false;
    char target[128], first_failure[256] = "";
    snprintf(target, sizeof(target), "/api/v1/denylist/version?after=%lld&wait=%u", v0, wait_s);
    for (; opened < nsub; opened++) {
        bench_conn *c = &subs[opened];
        int rv = bench_conn_open(c, ip, port);
        if (rv != 0) {
            fprintf(stderr, "bench_ctl_push: subscriber %u cannot connect: %s\n", opened,
                    strerror(-rv));
            goto out;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = opened};
        len = bench_http_request(req, sizeof(req), "GET", target,
                                 agents[opened % (unsigned)nagents], NULL, 0);
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0 ||
            (rv = bench_conn_send(c, req, len)) != 0 || c->outoff < c->outlen) {
            fprintf(stderr, "bench_ctl_push: subscriber %u cannot ask: %s\n", opened,
                    strerror(rv ? -rv : errno));
            goto out;
        }
    }

    /* every subscriber is waiting once the controller counts them */
    len = bench_http_request(req, sizeof(req), "GET", "/metrics", NULL, NULL, 0);
    double waiting = -1;
    uint64_t give_up = bench_now_ns() + 15000000000ull;
    while (bench_now_ns() < give_up) {
        if (bench_http_once(ip, port, req, len, 5000, &status, &body) == 0 && status == 200) {
            waiting = bench_metric(body, "mrcfab_push_subscribers");
        }
        free(body);
        body = NULL;
        if (waiting >= nsub) {
            break;
        }
        sleep_ms(20);
    }
    struct epoll_event evs[256];
    int n = epoll_wait(ep, evs, 256, 0);
    if (waiting < nsub || n != 0) {
        fprintf(stderr,
                "bench_ctl_push: %.0f of %u subscribers waiting, %d answered before the change\n",
                waiting, nsub, n);
        goto out;
    }

    /* the change, on a connection opened before the clock starts */
    bench_conn *post = &subs[nsub];
    char deny[256];
    int dlen = snprintf(deny, sizeof(deny),
                        "{\"element\":\"%s\",\"reason\":\"bench: push channel latency\"}", element);
    len = bench_http_request(req, sizeof(req), "POST", "/api/v1/denylist", ops[0], deny,
                             (size_t)dlen);
    struct epoll_event pev = {.events = EPOLLIN, .data.u32 = nsub};
    post_open = bench_conn_open(post, ip, port) == 0;
    if (!post_open || epoll_ctl(ep, EPOLL_CTL_ADD, post->fd, &pev) != 0) {
        fprintf(stderr, "bench_ctl_push: cannot connect for the POST\n");
        goto out;
    }
    uint64_t t0 = bench_now_ns(), post_ns = 0;
    int post_status = 0;
    long long v1 = -1;
    if (bench_conn_send(post, req, len) != 0 || post->outoff < post->outlen) {
        fprintf(stderr, "bench_ctl_push: cannot send the POST\n");
        goto out;
    }
    bool post_done = false;
    give_up = t0 + 10000000000ull;
    while ((answered + early < nsub || !post_done) && bench_now_ns() < give_up) {
        n = epoll_wait(ep, evs, 256, 1000);
        uint64_t now = bench_now_ns();
        for (int k = 0; k < n; k++) {
            unsigned i = evs[k].data.u32;
            bench_conn *c = &subs[i];
            int rv = bench_conn_read(c);
            if (rv == 0) {
                continue;
            }
            epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
            if (i == nsub) {
                post_done = true;
                post_status = rv == 1 ? c->status : 0;
                post_ns = now - t0;
                continue;
            }
            long long v = rv == 1 ? version_of(c->body, c->bodylen) : -1;
            if (rv == 1 && c->status == 200 && v > v0) {
                lat[answered++] = now - t0;
                v1 = v;
            } else {
                early++;
                wrong++;
                if (!first_failure[0]) {
                    snprintf(first_failure, sizeof(first_failure), "%s HTTP %d version %lld",
                             rv == 1 ? "answered" : "connection lost", rv == 1 ? c->status : 0, v);
                }
            }
        }
    }
    qsort(lat, answered, sizeof(*lat), cmp_u64);
    double ms = 1e-6;
    printf("{\"subscribers\": %u, \"answered\": %u, \"failed\": %u, \"version_before\": %lld, "
           "\"version_after\": %lld, \"post_status\": %d, \"post_ms\": %.3f, "
           "\"first_ms\": %.3f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"last_ms\": %.3f, "
           "\"first_failure\": \"%s\"}\n",
           nsub, answered, nsub - answered, v0, v1, post_status, (double)post_ns * ms,
           answered ? (double)lat[0] * ms : -1, answered ? (double)lat[answered / 2] * ms : -1,
           answered ? (double)lat[(answered * 99 + 99) / 100 - 1] * ms : -1,
           answered ? (double)lat[answered - 1] * ms : -1, first_failure);
    rc = answered == nsub && wrong == 0 && post_status == 201 ? 0 : 1;
out:
    for (unsigned i = 0; i < opened; i++) {
        bench_conn_close(&subs[i]);
    }
    if (post_open) {
        bench_conn_close(&subs[nsub]);
    }
    for (int i = 0; i < nagents; i++) {
        free(agents[i]);
    }
    free(ops[0]);
    free(subs);
    free(lat);
    return rc;
}
