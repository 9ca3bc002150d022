/* SPDX-License-Identifier: MIT */
/* A small HTTP/1.1 client for the controller's load generators: keep-alive connections over
 * plain sockets, driven by the caller's epoll loop, one request in flight per connection. */
#ifndef BENCH_CTL_HTTP_H
#define BENCH_CTL_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bench_conn {
    int fd;
    char *out; /* the request being written (heap, owned) */
    size_t outlen, outoff;
    char *in; /* what was read of the response (heap, owned) */
    size_t inlen, incap;
    /* the response once bench_conn_read returned 1: valid until bench_conn_next */
    int status;
    const char *body;
    size_t bodylen, resplen;
    bool close;       /* the server said Connection: close */
    uint64_t sent_ns; /* when the request's first byte was written */
    void *user;
} bench_conn;

/* Monotonic time in nanoseconds. */
uint64_t bench_now_ns(void);

/* Connects |c| to |ip|:|port| over TCP (blocking connect, then non-blocking, TCP_NODELAY).
 * Returns 0 or a negative errno. */
int bench_conn_open(bench_conn *c, const char *ip, unsigned port);
void bench_conn_close(bench_conn *c);

/* Queues a request (takes a copy of |req|, |reqlen| bytes, head and body) and writes what the
 * socket takes. Returns 0, or a negative errno when the socket failed. */
int bench_conn_send(bench_conn *c, const char *req, size_t reqlen);
/* Writes more of a queued request. Returns 1 when all of it is written, 0 when some is left,
 * a negative errno on failure. */
int bench_conn_flush(bench_conn *c);
/* Reads what the socket has. Returns 1 when a whole response is in (status, body filled), 0
 * when more is needed, -EPIPE when the server closed the connection, another negative errno
 * on failure or -EPROTO on a response that is not HTTP/1.1. */
int bench_conn_read(bench_conn *c);
/* Drops the response bench_conn_read returned, keeping whatever followed it. */
void bench_conn_next(bench_conn *c);

/* One request on a new connection, waiting at most |timeout_ms| for the whole response:
 * stores the status and a copy of the body (NUL-terminated, the caller frees). Returns 0 or a
 * negative errno (-ETIMEDOUT). */
int bench_http_once(const char *ip, unsigned port, const char *req, size_t reqlen, int timeout_ms,
                    int *pstatus, char **pbody);

/* Formats a request into |dest|: METHOD TARGET with the bearer |token| (none if NULL) and, if
 * |body| is not NULL, a JSON body. Returns its length, or 0 when it does not fit. */
size_t bench_http_request(char *dest, size_t destlen, const char *method, const char *target,
                          const char *token, const char *body, size_t bodylen);

/* The value of the Prometheus sample |name| (no labels) in |text|, or -1 when absent. */
double bench_metric(const char *text, const char *name);

/* The tokens of role |role| in a controller tokens file ('TOKEN ROLE NAME' lines, '#'
 * comments): fills up to |max| of them into |tokens| (heap strings the caller frees) and
 * returns how many, or a negative errno when the file cannot be read. */
int bench_tokens(const char *path, const char *role, char **tokens, int max);

#endif
