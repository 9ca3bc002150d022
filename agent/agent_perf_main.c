/* SPDX-License-Identifier: MIT */
/* mrc-perf: perftest-style write bandwidth and latency between hosts, on their agents'
 * engines. The two mrc-perf processes meet out of band over TCP and swap host names, QP
 * numbers, PSNs, buffer addresses and rkeys; each asks its own agent (the local API) to make
 * and connect the QPs; the client's agent writes, the server's checks every byte. */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_api.h"
#include "util.h"

#define PERF_PORT "7471"
#define PERF_LINE 262144

typedef struct perf_opts {
    const char *agent, *port, *bind, *test;
    uint64_t size, qps, slots, iters;
    double duration;
    bool once;
} perf_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mrc-perf server [--port P] [--bind ADDR] [--once] [--agent SOCK]\n"
            "       mrc-perf client SERVER [--port P] [--test bw|lat] [--size B] [--qps N]\n"
            "                [--duration S] [--iters N] [--slots N] [--agent SOCK]\n"
            "       mrc-perf status|evs [--agent SOCK]\n\n"
            "  bw: the client writes SIZE-byte messages (Write with Immediate) on N QPs for S\n"
            "  seconds, at most SLOTS/2 in flight per QP; the server checks every byte.\n"
            "  lat: one QP, one message at a time, echoed back; latency is half the round trip.\n"
            "  Setup goes over TCP to SERVER:P (default %s); each side's agent is at SOCK\n"
            "  (default %s). The client prints one JSON object and exits 1 if a byte was wrong\n"
            "  or a QP failed. status prints the local agent's state and counters, evs every EV\n"
            "  of its QPs with its path and state.\n",
            PERF_PORT, AGENT_API_DEFAULT);
}

/* One JSON object per line over the setup connection. */
static int send_line(FILE *f, json_object *o)
{
    int rv = fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0 ||
                     fflush(f) != 0
                 ? -EIO
                 : 0;
    json_object_put(o);
    return rv;
}

static json_object *read_line(FILE *f, char *buf)
{
    if (!fgets(buf, PERF_LINE, f)) {
        return NULL;
    }
    json_object *o = json_tokener_parse(buf);
    if (o && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static json_object *field(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Asks the agent; an answer with "error" is a failure, printed. */
static json_object *ask(int fd, json_object *req)
{
    char err[256];
    json_object *ans = NULL;
    int rv = agent_api_call(fd, req, &ans, err, sizeof(err));
    json_object_put(req);
    if (rv != 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        return NULL;
    }
    if (str_of(ans, "error")) {
        fprintf(stderr, "mrc-perf: agent: %s\n", str_of(ans, "error"));
        json_object_put(ans);
        return NULL;
    }
    return ans;
}

static json_object *op(const char *name)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "op", json_object_new_string(name));
    return o;
}

static json_object *create_req(const char *peer, const char *role, json_object *params)
{
    json_object *o = op("create");
    json_object_object_add(o, "peer", json_object_new_string(peer));
    json_object_object_add(o, "role", json_object_new_string(role));
    static const char *const keys[] = {"qps", "size", "slots"};
    for (size_t k = 0; k < 3; k++) {
        json_object_object_add(o, keys[k], json_object_get(field(params, keys[k])));
    }
    return o;
}

static FILE *tcp_open(const char *host, const char *port, bool listen_, const char *bind_)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = listen_ ? AI_PASSIVE : 0,
                             .ai_family = listen_ && !bind_ ? AF_INET6 : AF_UNSPEC},
                    *res, *ai;
    int rv = getaddrinfo(listen_ ? bind_ : host, port, &hints, &res), fd = -1;
    if (rv != 0) {
        fprintf(stderr, "mrc-perf: %s: %s\n", listen_ ? (bind_ ? bind_ : "[::]") : host,
                gai_strerror(rv));
        return NULL;
    }
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        int one = 1;
        if (fd >= 0 && listen_) {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        }
        if (fd >= 0 && (listen_ ? bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 4) != 0
                                : connect(fd, ai->ai_addr, ai->ai_addrlen) != 0)) {
            fprintf(stderr, "mrc-perf: %s port %s: %s\n", listen_ ? "listen" : host, port,
                    strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd < 0 ? NULL : fdopen(fd, "r+");
}

/* One client: its host, our sink or pong, the swap, and at the end our checks. */
static int serve_one(FILE *f, const perf_opts *po, char *buf)
{
    int rv = 1, fd = -1;
    json_object *hello = NULL, *req = NULL, *made = NULL, *ans = NULL;
    char err[256];
    if ((fd = agent_api_connect(po->agent, err, sizeof(err))) < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        goto out;
    }
    if (!(hello = ask(fd, op("hello"))) || !(req = read_line(f, buf)) || !str_of(req, "host")) {
        fprintf(stderr, "mrc-perf: a client that does not speak mrc-perf\n");
        goto out;
    }
    json_object *me = json_object_new_object();
    json_object_object_add(me, "host", json_object_get(field(hello, "host")));
    if (send_line(f, me) != 0) {
        goto out;
    }
    json_object_put(req);
    if (!(req = read_line(f, buf))) {
        goto out;
    }
    const char *role =
        str_of(req, "test") && strcmp(str_of(req, "test"), "lat") == 0 ? "pong" : "sink";
    if (!(made = ask(fd, create_req(str_of(req, "host") ? str_of(req, "host") : "", role, req)))) {
        goto out;
    }
    json_object *conn = op("connect");
    json_object_object_add(conn, "qps", json_object_get(field(req, "qps_info")));
    if (!(ans = ask(fd, conn))) {
        goto out;
    }
    json_object *reply = json_object_new_object();
    json_object_object_add(reply, "qps_info", json_object_get(field(made, "qps")));
    if (send_line(f, reply) != 0) {
        goto out;
    }
    json_object_put(ans);
    ans = read_line(f, buf); /* the client's "done", or its end */
    json_object_put(ans);
    if (!(ans = ask(fd, op("stats")))) {
        goto out;
    }
    rv = send_line(f, json_object_get(ans)) == 0 ? 0 : 1;
out:
    json_object_put(hello);
    json_object_put(req);
    json_object_put(made);
    json_object_put(ans);
    if (fd >= 0) {
        close(fd);
    }
    return rv;
}

static int status(const perf_opts *po, const char *what)
{
    char err[256];
    int fd = agent_api_connect(po->agent, err, sizeof(err));
    if (fd < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        return 1;
    }
    json_object *ans = ask(fd, op(what));
    close(fd);
    if (!ans) {
        return 1;
    }
    printf("%s\n", json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PRETTY |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(ans);
    return 0;
}

static int server(const perf_opts *po)
{
    FILE *lf = tcp_open(NULL, po->port, true, po->bind);
    char *buf = util_xmalloc(PERF_LINE);
    int rv = 1;
    if (!lf) {
        goto out;
    }
    fprintf(stderr, "mrc-perf: server listening on port %s\n", po->port);
    for (;;) {
        int fd = accept(fileno(lf), NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("mrc-perf: accept");
            break;
        }
        FILE *f = fdopen(fd, "r+");
        rv = serve_one(f, po, buf);
        fclose(f);
        if (po->once) {
            break;
        }
    }
out:
    if (lf) {
        fclose(lf);
    }
    free(buf);
    return rv;
}

static int client(const char *srv, const perf_opts *po)
{
    int rv = 1, fd = -1;
    char err[256], *buf = util_xmalloc(PERF_LINE);
    bool lat = strcmp(po->test, "lat") == 0;
    FILE *f = NULL;
    json_object *hello = NULL, *peer = NULL, *params = NULL, *made = NULL, *theirs = NULL,
                *result = NULL, *checks = NULL;
    if ((fd = agent_api_connect(po->agent, err, sizeof(err))) < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        goto out;
    }
    if (!(hello = ask(fd, op("hello"))) || !(f = tcp_open(srv, po->port, false, NULL))) {
        goto out;
    }
    json_object *me = json_object_new_object();
    json_object_object_add(me, "host", json_object_get(field(hello, "host")));
    if (send_line(f, me) != 0 || !(peer = read_line(f, buf)) || !str_of(peer, "host")) {
        fprintf(stderr, "mrc-perf: %s is not an mrc-perf server\n", srv);
        goto out;
    }
    params = json_object_new_object();
    json_object_object_add(params, "host", json_object_get(field(hello, "host")));
    json_object_object_add(params, "test", json_object_new_string(po->test));
    json_object_object_add(params, "qps", json_object_new_uint64(lat ? 1 : po->qps));
    json_object_object_add(params, "size", json_object_new_uint64(po->size));
    json_object_object_add(params, "slots", json_object_new_uint64(lat ? 2 : po->slots));
    if (!(made = ask(fd, create_req(str_of(peer, "host"), lat ? "ping" : "source", params)))) {
        goto out;
    }
    json_object_object_add(params, "qps_info", json_object_get(field(made, "qps")));
    if (send_line(f, json_object_get(params)) != 0 || !(theirs = read_line(f, buf)) ||
        !field(theirs, "qps_info")) {
        fprintf(stderr, "mrc-perf: the server could not set up its side (see its log)\n");
        goto out;
    }
    json_object *conn = op("connect");
    json_object_object_add(conn, "qps", json_object_get(field(theirs, "qps_info")));
    json_object *ok = ask(fd, conn);
    if (!ok) {
        goto out;
    }
    json_object_put(ok);
    json_object *run = op("run");
    json_object_object_add(run, "duration_ms",
                           json_object_new_uint64((uint64_t)(po->duration * 1e3)));
    json_object_object_add(run, "iters", json_object_new_uint64(po->iters));
    if (!(result = ask(fd, run))) {
        goto out;
    }
    json_object *done = json_object_new_object();
    json_object_object_add(done, "done", json_object_new_boolean(1));
    if (send_line(f, done) != 0 || !(checks = read_line(f, buf))) {
        fprintf(stderr, "mrc-perf: the server did not report its checks\n");
        goto out;
    }
    json_object *out = json_object_new_object();
    json_object_object_add(out, "test", json_object_new_string(lat ? "write_lat" : "write_bw"));
    json_object_object_add(out, "client", json_object_get(result));
    json_object_object_add(out, "server", json_object_get(checks));
    printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY));
    json_object *t = field(field(result, "transport"), "qp_error");
    bool failed = json_object_get_int64(field(checks, "bytes_bad")) != 0 ||
                  json_object_get_int64(field(result, "errors")) != 0 ||
                  json_object_get_boolean(t) ||
                  json_object_get_boolean(field(field(checks, "transport"), "qp_error"));
    json_object_put(out);
    rv = failed ? 1 : 0;
out:
    json_object_put(hello);
    json_object_put(peer);
    json_object_put(params);
    json_object_put(made);
    json_object_put(theirs);
    json_object_put(result);
    json_object_put(checks);
    if (f) {
        fclose(f);
    }
    if (fd >= 0) {
        close(fd);
    }
    free(buf);
    return rv;
}

int main(int argc, char **argv)
{
    perf_opts po = {.agent = AGENT_API_DEFAULT,
                    .port = PERF_PORT,
                    .test = "bw",
                    .size = 65536,
                    .qps = 1,
                    .slots = 16,
                    .duration = 5};
    static const struct option longs[] = {
        {"agent", required_argument, NULL, 'a'},    {"port", required_argument, NULL, 'p'},
        {"bind", required_argument, NULL, 'b'},     {"test", required_argument, NULL, 't'},
        {"size", required_argument, NULL, 's'},     {"qps", required_argument, NULL, 'q'},
        {"slots", required_argument, NULL, 'S'},    {"iters", required_argument, NULL, 'n'},
        {"duration", required_argument, NULL, 'd'}, {"once", no_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        errno = 0;
        switch (c) {
        case 'a':
            po.agent = optarg;
            break;
        case 'p':
            po.port = optarg;
            break;
        case 'b':
            po.bind = optarg;
            break;
        case 't':
            po.test = optarg;
            break;
        case 's':
            po.size = strtoull(optarg, &end, 10);
            break;
        case 'q':
            po.qps = strtoull(optarg, &end, 10);
            break;
        case 'S':
            po.slots = strtoull(optarg, &end, 10);
            break;
        case 'n':
            po.iters = strtoull(optarg, &end, 10);
            break;
        case 'd':
            po.duration = strtod(optarg, &end);
            break;
        case 'o':
            po.once = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
        if (strchr("sqSnd", c) && (errno || *end || end == optarg)) {
            fprintf(stderr, "mrc-perf: --%s needs a number, not '%s'\n",
                    c == 's'   ? "size"
                    : c == 'q' ? "qps"
                    : c == 'S' ? "slots"
                    : c == 'n' ? "iters"
                               : "duration",
                    optarg);
            return 2;
        }
    }
    if ((strcmp(po.test, "bw") != 0 && strcmp(po.test, "lat") != 0) || po.duration <= 0 ||
        po.duration > 86400) {
        fprintf(stderr, "mrc-perf: --test is bw or lat, --duration 0..86400 seconds\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (optind + 1 == argc &&
        (strcmp(argv[optind], "status") == 0 || strcmp(argv[optind], "evs") == 0)) {
        return status(&po, argv[optind]);
    }
    if (optind < argc && strcmp(argv[optind], "server") == 0 && optind + 1 == argc) {
        return server(&po);
    }
    if (optind + 1 < argc && strcmp(argv[optind], "client") == 0 && optind + 2 == argc) {
        return client(argv[optind + 1], &po);
    }
    usage(stderr);
    return 2;
}
