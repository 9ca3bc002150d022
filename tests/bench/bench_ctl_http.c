/* SPDX-License-Identifier: MIT */
/* A small HTTP/1.1 client for the controller's load generators (bench_ctl_http.h). Plain
 * sockets rather than libevent's client: the generators must cost the controller's two cores
 * as little as they can, and a response here is one read and one scan. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_ctl_http.h"

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_conn_open(bench_conn *c, const char *ip, unsigned port)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
        return -EINVAL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    c->fd = fd;
    return 0;
}

void bench_conn_close(bench_conn *c)
{
    if (c->fd >= 0) {
        close(c->fd);
    }
    free(c->out);
    free(c->in);
    c->fd = -1;
    c->out = c->in = NULL;
    c->outlen = c->outoff = c->inlen = c->incap = 0;
}

int bench_conn_flush(bench_conn *c)
{
    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (n < 0) {
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        }
        c->outoff += (size_t)n;
    }
    return 1;
}

int bench_conn_send(bench_conn *c, const char *req, size_t reqlen)
{
    free(c->out);
    c->out = malloc(reqlen);
    if (!c->out) {
        return -ENOMEM;
    }
    memcpy(c->out, req, reqlen);
    c->outlen = reqlen;
    c->outoff = 0;
    c->sent_ns = bench_now_ns();
    int rv = bench_conn_flush(c);
    return rv < 0 ? rv : 0;
}

/* The value of header |name| in the head |head| (|headlen| bytes), or NULL. */
static const char *header(const char *head, size_t headlen, const char *name, size_t *pvlen)
{
    size_t n = strlen(name);
    const char *end = head + headlen;
    for (const char *l = memchr(head, '\n', headlen); l && l + 1 < end;
         l = memchr(l + 1, '\n', (size_t)(end - l - 1))) {
        const char *s = l + 1;
        if ((size_t)(end - s) > n && strncasecmp(s, name, n) == 0 && s[n] == ':') {
            const char *v = s + n + 1;
            while (v < end && (*v == ' ' || *v == '\t')) {
                v++;
            }
            const char *e = v;
            while (e < end && *e != '\r' && *e != '\n') {
                e++;
            }
            *pvlen = (size_t)(e - v);
            return v;
        }
    }
    return NULL;
}

/* 1 when |c->in| holds a whole response (fills status, body), 0 if not yet, -EPROTO. */
static int parse(bench_conn *c)
{
    const char *in = c->in;
    const char *eoh = NULL;
    for (size_t i = 0; i + 3 < c->inlen; i++) {
        if (in[i] == '\r' && in[i + 1] == '\n' && in[i + 2] == '\r' && in[i + 3] == '\n') {
            eoh = in + i + 4;
            break;
        }
    }
    if (!eoh) {
        return c->inlen > 65536 ? -EPROTO : 0;
    }
    size_t headlen = (size_t)(eoh - in);
    if (headlen < 12 || strncmp(in, "HTTP/1.", 7) != 0) {
        return -EPROTO;
    }
    int status = atoi(in + 9);
    size_t vlen = 0;
    const char *cl = header(in, headlen, "Content-Length", &vlen);
    if (!cl) {
        return -EPROTO; /* every answer of the controller has a length */
    }
    size_t bodylen = strtoul(cl, NULL, 10);
    if (c->inlen < headlen + bodylen) {
        return 0;
    }
    const char *conn = header(in, headlen, "Connection", &vlen);
    c->close = conn && vlen == 5 && strncasecmp(conn, "close", 5) == 0;
    c->status = status;
    c->body = eoh;
    c->bodylen = bodylen;
    c->resplen = headlen + bodylen;
    return 1;
}

int bench_conn_read(bench_conn *c)
{
    int rv = parse(c);
    if (rv != 0) {
        return rv; /* a second response already in the buffer */
    }
    for (;;) {
        if (c->incap - c->inlen < 4096) {
            size_t cap = c->incap ? 2 * c->incap : 16384;
            char *in = realloc(c->in, cap + 1);
            if (!in) {
                return -ENOMEM;
            }
            c->in = in;
            c->incap = cap;
        }
        ssize_t n = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, 0);
        if (n == 0) {
            return -EPIPE;
        }
        if (n < 0) {
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        }
        c->inlen += (size_t)n;
        c->in[c->inlen] = '\0';
        if ((rv = parse(c)) != 0) {
            return rv;
        }
    }
}

void bench_conn_next(bench_conn *c)
{
    memmove(c->in, c->in + c->resplen, c->inlen - c->resplen);
    c->inlen -= c->resplen;
    c->resplen = 0;
    c->body = NULL;
    c->bodylen = 0;
}

int bench_http_once(const char *ip, unsigned port, const char *req, size_t reqlen, int timeout_ms,
                    int *pstatus, char **pbody)
{
    bench_conn c;
    int rv = bench_conn_open(&c, ip, port);
    if (rv != 0) {
        return rv;
    }
    uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000u;
    rv = bench_conn_send(&c, req, reqlen);
    while (rv == 0) {
        uint64_t now = bench_now_ns();
        if (now >= deadline) {
            rv = -ETIMEDOUT;
            break;
        }
        bool writing = c.outoff < c.outlen;
        struct pollfd p = {.fd = c.fd, .events = (short)(POLLIN | (writing ? POLLOUT : 0))};
        if (poll(&p, 1, (int)((deadline - now) / 1000000u) + 1) < 0 && errno != EINTR) {
            rv = -errno;
            break;
        }
        if (writing && (rv = bench_conn_flush(&c)) < 0) {
            break;
        }
        rv = bench_conn_read(&c);
    }
    if (rv == 1) {
        *pstatus = c.status;
        *pbody = malloc(c.bodylen + 1);
        if (*pbody) {
            memcpy(*pbody, c.body, c.bodylen);
            (*pbody)[c.bodylen] = '\0';
        }
        rv = *pbody ? 0 : -ENOMEM;
    }
    bench_conn_close(&c);
    return rv;
}

size_t bench_http_request(char *dest, size_t destlen, const char *method, const char *target,
                          const char *token, const char *body, size_t bodylen)
{
    char auth[256] = "";
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
    }
    int n = body ? snprintf(dest, destlen,
                            "%s %s HTTP/1.1\r\nHost: bench\r\n%sContent-Type: application/json\r\n"
                            "Content-Length: %zu\r\n\r\n",
                            method, target, auth, bodylen)
                 : snprintf(dest, destlen, "%s %s HTTP/1.1\r\nHost: bench\r\n%s\r\n", method,
                            target, auth);
    if (n < 0 || (size_t)n + (body ? bodylen : 0) >= destlen) {
        return 0;
    }
    if (body) {
        memcpy(dest + n, body, bodylen);
    }
    return (size_t)n + (body ? bodylen : 0);
}

double bench_metric(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, name, n) == 0 && l[n] == ' ') {
            return strtod(l + n + 1, NULL);
        }
    }
    return -1;
}

int bench_tokens(const char *path, const char *role, char **tokens, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return -errno;
    }
    char line[512], tok[256], r[64];
    int n = 0;
    while (n < max && fgets(line, sizeof(line), f)) {
        if (line[0] != '#' && sscanf(line, "%255s %63s", tok, r) == 2 && strcmp(r, role) == 0) {
            tokens[n] = strdup(tok);
            n += tokens[n] != NULL;
        }
    }
    fclose(f);
    return n;
}
