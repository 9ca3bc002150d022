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
    const char *agent, *port, *bind, *test, *hosts;
    uint64_t size, qps, slots, iters, progress;
    long rank;
    double duration;
    bool once, size_set;
} perf_opts;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: mrc-perf server [--port P] [--bind ADDR] [--once] [--agent SOCK]\n"
        "       mrc-perf client SERVER [--port P] [--test bw|lat] [--size B] [--qps N]\n"
        "                [--duration S] [--iters N] [--slots N] [--agent SOCK]\n"
        "       mrc-perf ring --hosts A,B,... [--rank R] [--size B] [--duration S] [--iters N]\n"
        "                [--progress MS] [--port P] [--agent SOCK]\n"
        "       mrc-perf status|evs [--agent SOCK]\n\n"
        "  bw: the client writes SIZE-byte messages (Write with Immediate) on N QPs for S\n"
        "  seconds, at most SLOTS/2 in flight per QP; the server checks every byte.\n"
        "  lat: one QP, one message at a time, echoed back; latency is half the round trip.\n"
        "  Setup goes over TCP to SERVER:P (default %s); each side's agent is at SOCK\n"
        "  (default %s). The client prints one JSON object and exits 1 if a byte was wrong\n"
        "  or a QP failed.\n"
        "  ring: one rank of a ring all-reduce (float32 sum of SIZE bytes, default 4 MiB)\n"
        "  over the hosts' setup addresses in order, run on every host; the rank is this\n"
        "  host's place in the list (found among its addresses, or --rank); every element\n"
        "  of every result is checked; --progress prints a JSON line every MS ms;\n"
        "  SIGINT or SIGTERM ends the run early, with its result.\n"
        "  status prints the local agent's state and counters, evs every EV\n"
        "  of its QPs with its path and state.\n",
        PERF_PORT, AGENT_API_DEFAULT);
}

/* One JSON object per line over the setup connection: written straight to the socket, read
 * through the FILE (a stdio stream may not switch from reading to writing on a socket). */
static int send_line(FILE *f, json_object *o)
{
    int rv =
        dprintf(fileno(f), "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0
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

static FILE *tcp_open(const char *host, const char *port, bool listen_, const char *bind_,
                      bool quiet)
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
            if (!quiet) {
                fprintf(stderr, "mrc-perf: %s port %s: %s\n", listen_ ? "listen" : host, port,
                        strerror(errno));
            }
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

/* Whether |addr| (text) is one of this host's addresses. */
static bool is_local(const char *addr)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST}, *res;
    if (getaddrinfo(addr, NULL, &hints, &res) != 0) {
        return false;
    }
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    bool local = fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) == 0;
    if (fd >= 0) {
        close(fd);
    }
    freeaddrinfo(res);
    return local;
}

/* Sends |to_next| and |to_prev| to the neighbours, then reads what each sent: every rank
 * sends before it reads, or the ring would wait on itself. 0, or -EIO when one left. */
static int swap(FILE *nf, FILE *pf, json_object *to_next, json_object *to_prev, char *buf,
                json_object **pfrom_next, json_object **pfrom_prev)
{
    int a = send_line(nf, to_next), b = send_line(pf, to_prev);
    *pfrom_next = a == 0 && b == 0 ? read_line(nf, buf) : NULL;
    *pfrom_prev = *pfrom_next ? read_line(pf, buf) : NULL;
    return *pfrom_prev ? 0 : -EIO;
}

/* The agent connection of a running ring: SIGINT or SIGTERM asks the agent to end the run
 * there, and its result is printed as at the end of --duration. */
static volatile sig_atomic_t ring_fd = -1;

static void on_stop_signal(int sig)
{
    static const char stop[] = "{\"op\":\"ring_stop\"}\n";
    (void)sig;
    if (ring_fd >= 0 && write(ring_fd, stop, sizeof(stop) - 1) < 0) {
        _exit(1);
    }
}

static int ring(const perf_opts *po)
{
    char *list = util_xstrdup(po->hosts), *save = NULL, *hosts[128], err[256];
    unsigned n = 0;
    long rank = po->rank;
    int rv = 1, fd = -1;
    FILE *lf = NULL, *nf = NULL, *pf = NULL;
    char *buf = util_xmalloc(PERF_LINE);
    json_object *hello = NULL, *nh = NULL, *ph = NULL, *made = NULL, *nq = NULL, *pq = NULL,
                *res = NULL;
    for (char *t = strtok_r(list, ",", &save); t && n < 128; t = strtok_r(NULL, ",", &save)) {
        hosts[n++] = t;
    }
    for (unsigned i = 0; rank < 0 && i < n; i++) {
        rank = is_local(hosts[i]) ? (long)i : -1;
    }
    if (n < 2 || rank < 0 || rank >= (long)n) {
        fprintf(stderr, "mrc-perf: ring needs 2..128 --hosts with this host among them "
                        "(or --rank)\n");
        goto out;
    }
    if ((fd = agent_api_connect(po->agent, err, sizeof(err))) < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        goto out;
    }
    if (!(hello = ask(fd, op("hello"))) ||
        !(lf = tcp_open(NULL, po->port, true, po->bind, false))) {
        goto out;
    }
    /* the next rank may not listen yet: try for 30 s */
    const char *next = hosts[(rank + 1) % n];
    for (int i = 0; i < 300 && !nf; i++) {
        nf = tcp_open(next, po->port, false, NULL, i < 299);
        if (!nf) {
            usleep(100000);
        }
    }
    int pfd = nf ? accept(fileno(lf), NULL, NULL) : -1;
    if (!nf || pfd < 0 || !(pf = fdopen(pfd, "r+"))) {
        fprintf(stderr, "mrc-perf: the ring's neighbours did not come (next %s)\n", next);
        goto out;
    }
    json_object *me = json_object_new_object();
    json_object_object_add(me, "host", json_object_get(field(hello, "host")));
    if (swap(nf, pf, json_object_get(me), me, buf, &nh, &ph) != 0 || !str_of(nh, "host") ||
        !str_of(ph, "host")) {
        fprintf(stderr, "mrc-perf: a neighbour does not speak mrc-perf ring\n");
        goto out;
    }
    json_object *rc = op("ring_create");
    json_object_object_add(rc, "prev", json_object_new_string(str_of(ph, "host")));
    json_object_object_add(rc, "next", json_object_new_string(str_of(nh, "host")));
    json_object_object_add(rc, "rank", json_object_new_int64(rank));
    json_object_object_add(rc, "ranks", json_object_new_int64(n));
    json_object_object_add(rc, "size", json_object_new_uint64(po->size_set ? po->size : 4u << 20));
    if (!(made = ask(fd, rc))) {
        goto out;
    }
    if (swap(nf, pf, json_object_get(field(made, "to_next")),
             json_object_get(field(made, "from_prev")), buf, &nq, &pq) != 0) {
        fprintf(stderr, "mrc-perf: a neighbour left during setup\n");
        goto out;
    }
    json_object *cn = op("ring_connect");
    json_object_object_add(cn, "next", json_object_get(nq));
    json_object_object_add(cn, "prev", json_object_get(pq));
    json_object *ok = ask(fd, cn);
    if (!ok) {
        goto out;
    }
    json_object_put(ok);
    /* both neighbours connected before anyone writes */
    json_object *ready = json_object_new_object();
    json_object_object_add(ready, "ready", json_object_new_boolean(1));
    json_object *r1, *r2;
    bool both = swap(nf, pf, json_object_get(ready), ready, buf, &r1, &r2) == 0;
    json_object_put(r1);
    json_object_put(r2);
    if (!both) {
        fprintf(stderr, "mrc-perf: a neighbour left during setup\n");
        goto out;
    }
    json_object *run = op("ring_run");
    json_object_object_add(run, "duration_ms",
                           json_object_new_uint64((uint64_t)(po->duration * 1e3)));
    json_object_object_add(run, "iters", json_object_new_uint64(po->iters));
    json_object_object_add(run, "progress_ms", json_object_new_uint64(po->progress));
    if (!(res = ask(fd, run))) {
        goto out;
    }
    ring_fd = fd;
    struct sigaction sa = {.sa_handler = on_stop_signal, .sa_flags = SA_RESTART};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (field(res, "progress")) {
        printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
        fflush(stdout);
        json_object_put(res);
        res = NULL;
        if (agent_api_read(fd, &res, err, sizeof(err)) != 0) {
            fprintf(stderr, "mrc-perf: %s\n", err);
            goto out;
        }
    }
    printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY));
    rv = json_object_get_int64(field(res, "elements_bad")) != 0 ||
                 json_object_get_int64(field(res, "errors")) != 0 ||
                 json_object_get_int64(field(res, "out_of_order")) != 0 ||
                 json_object_get_boolean(field(res, "qp_error"))
             ? 1
             : 0;
out:
    json_object_put(hello);
    json_object_put(nh);
    json_object_put(ph);
    json_object_put(made);
    json_object_put(nq);
    json_object_put(pq);
    json_object_put(res);
    ring_fd = -1;
    if (nf) {
        fclose(nf);
    }
    if (pf) {
        fclose(pf);
    }
    if (lf) {
        fclose(lf);
    }
    if (fd >= 0) {
        close(fd);
    }
    free(buf);
    free(list);
    return rv;
}

static int server(const perf_opts *po)
{
    FILE *lf = tcp_open(NULL, po->port, true, po->bind, false);
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
    if (!(hello = ask(fd, op("hello"))) || !(f = tcp_open(srv, po->port, false, NULL, false))) {
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
                    .duration = 5,
                    .rank = -1};
    static const struct option longs[] = {
        {"agent", required_argument, NULL, 'a'},
        {"port", required_argument, NULL, 'p'},
        {"bind", required_argument, NULL, 'b'},
        {"test", required_argument, NULL, 't'},
        {"size", required_argument, NULL, 's'},
        {"qps", required_argument, NULL, 'q'},
        {"slots", required_argument, NULL, 'S'},
        {"iters", required_argument, NULL, 'n'},
        {"duration", required_argument, NULL, 'd'},
        {"once", no_argument, NULL, 'o'},
        {"hosts", required_argument, NULL, 'H'},
        {"rank", required_argument, NULL, 'r'},
        {"progress", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
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
            po.size_set = true;
            break;
        case 'H':
            po.hosts = optarg;
            break;
        case 'r':
            po.rank = strtol(optarg, &end, 10);
            break;
        case 'P':
            po.progress = strtoull(optarg, &end, 10);
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
        if (strchr("sqSndrP", c) && (errno || *end || end == optarg)) {
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
    if (optind + 1 == argc && strcmp(argv[optind], "ring") == 0 && po.hosts) {
        return ring(&po);
    }
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
