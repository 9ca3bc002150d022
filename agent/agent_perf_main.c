/* SPDX-License-Identifier: MIT */
/* mrc-perf: perftest-style write bandwidth and latency between hosts, and a ring all-reduce,
 * on their agents' engines. The mrc-perf processes meet out of band over TCP and swap host
 * names, QP numbers, PSNs, buffer addresses and rkeys; each asks its own agent (the local API)
 * to make and connect the QPs; the client's agent writes, the server's checks every byte. */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent_api.h"
#include "agent_ring.h"
#include "util.h"

#define PERF_LINE 262144
#define RING_SIZE_DEFAULT (4ull << 20)
#define RANK_UNSET UINT64_MAX

static struct {
    char *agent, *bind, *test, *hosts;
    uint64_t port, size, qps, slots, iters, progress, rank;
    double duration;
    bool once;
    char portstr[8]; /* --port as getaddrinfo takes it */
} o;

static int check_duration(const util_opt *opt, char *err, size_t errlen)
{
    if (*(double *)opt->dest <= 0) {
        snprintf(err, errlen, "--%s must be more than 0 seconds", opt->name);
        return -EINVAL;
    }
    return 0;
}

static int check_float32s(const util_opt *opt, char *err, size_t errlen)
{
    if (*(uint64_t *)opt->dest % 4) {
        snprintf(err, errlen, "--%s %llu is not whole float32s (a multiple of 4 bytes)", opt->name,
                 (unsigned long long)*(uint64_t *)opt->dest);
        return -EINVAL;
    }
    return 0;
}

#define PERF_OPT_AGENT                                                                             \
    {                                                                                              \
        .name = "agent", .kind = UTIL_OPT_STR, .def = AGENT_API_DEFAULT, .dest = &o.agent,         \
        .arg = "SOCK", .help = "the local agent's API socket (a leading @: an abstract name)"      \
    }
#define PERF_OPT_PORT                                                                              \
    {                                                                                              \
        .name = "port", .kind = UTIL_OPT_UINT, .def = "7471", .min = 1, .max = 65535,              \
        .dest = &o.port, .arg = "PORT", .letter = 'p',                                             \
        .help = "the TCP port of the setup connections"                                            \
    }
#define PERF_OPT_BIND                                                                              \
    {                                                                                              \
        .name = "bind", .kind = UTIL_OPT_STR, .dest = &o.bind, .arg = "ADDR",                      \
        .help = "the address to listen on (default: every address)"                                \
    }
#define PERF_OPT_DURATION                                                                          \
    {                                                                                              \
        .name = "duration", .kind = UTIL_OPT_DOUBLE, .def = "5", .min = 0, .max = 86400,           \
        .dest = &o.duration, .arg = "S", .letter = 'd', .check = check_duration,                   \
        .help = "seconds to run, a fraction allowed"                                               \
    }
#define PERF_OPT_ITERS(what)                                                                       \
    {                                                                                              \
        .name = "iters", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = UINT32_MAX,           \
        .dest = &o.iters, .letter = 'n', .help = what " instead of --duration (0: by --duration)"  \
    }

/* clang-format off */
static const util_opt agent_opts[] = {PERF_OPT_AGENT, UTIL_OPT_END};
static const util_opt server_opts[] = {
    PERF_OPT_PORT,
    PERF_OPT_BIND,
    {.name = "once", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.once, .help = "serve one client, then exit (1 if its checks failed)"},
    UTIL_OPT_END,
};
static const util_opt client_opts[] = {
    PERF_OPT_PORT,
    {.name = "test", .kind = UTIL_OPT_STR, .def = "bw", .dest = &o.test, .arg = "TEST", .choices = "bw|lat", .letter = 't', .help = "bw: write bandwidth; lat: one message at a time, echoed"},
    {.name = "size", .kind = UTIL_OPT_UINT, .def = "65536", .min = 1, .max = 64u << 20, .dest = &o.size, .arg = "BYTES", .letter = 's', .help = "bytes per message"},
    {.name = "qps", .kind = UTIL_OPT_UINT, .def = "1", .min = 1, .max = 64, .dest = &o.qps, .help = "QPs the messages go on (bw)"},
    {.name = "slots", .kind = UTIL_OPT_UINT, .def = "16", .min = 2, .max = 65536, .dest = &o.slots, .help = "message slots of each QP's buffer, at most half of them in flight (bw)"},
    PERF_OPT_DURATION,
    PERF_OPT_ITERS("messages to write"),
    UTIL_OPT_END,
};
/* --rank and --size have no default: left as main set them, they say they were not given */
static const util_opt ring_opts[] = {
    {.name = "hosts", .kind = UTIL_OPT_STR, .dest = &o.hosts, .arg = "A,B,...", .required = true, .help = "the ranks' setup addresses, in ring order (2..128)"},
    {.name = "rank", .kind = UTIL_OPT_UINT, .min = 0, .max = AGENT_RING_MAX_RANKS - 1, .dest = &o.rank, .arg = "R", .letter = 'r', .help = "this host's place in --hosts (default: found among its addresses)"},
    {.name = "size", .kind = UTIL_OPT_UINT, .min = 4, .max = AGENT_RING_MAX_SIZE, .dest = &o.size, .arg = "BYTES", .letter = 's', .check = check_float32s, .help = "bytes of the float32 vector summed, at least 4 per rank (not given: 4194304, 4 MiB)"},
    PERF_OPT_DURATION,
    PERF_OPT_ITERS("iterations to run"),
    {.name = "progress", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 86400000, .dest = &o.progress, .arg = "MS", .help = "print a JSON line of progress every MS ms (0: none)"},
    PERF_OPT_PORT,
    PERF_OPT_BIND,
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const server_tables[] = {server_opts, agent_opts, NULL};
static const util_opt *const client_tables[] = {client_opts, agent_opts, NULL};
static const util_opt *const ring_tables[] = {ring_opts, agent_opts, NULL};
static const util_opt *const agent_tables[] = {agent_opts, NULL};

static const util_cli server_cli = {
    .prog = "mrc-perf server",
    .usage = "mrc-perf server [--port PORT] [--bind ADDR] [--once] [--agent SOCK]",
    .about = "Waits for mrc-perf clients on the TCP port; for each, makes the QPs it asks for "
             "on the local agent,\nchecks every byte written (bw) or echoes each message (lat), "
             "and when the client's run ends\nprints what it checked (one JSON object: bytes, "
             "errors, the transport's counters) on stdout.",
    .tables = server_tables,
};
static const util_cli client_cli = {
    .prog = "mrc-perf client",
    .usage = "mrc-perf client SERVER [--test bw|lat] [--size BYTES] [--qps N] [--duration S] "
             "[--iters N] [options]",
    .about = "Runs a test against the mrc-perf server at SERVER (its setup address).\n"
             "bw: writes SIZE-byte messages (Write with Immediate) on N QPs for S seconds, at "
             "most SLOTS/2\nin flight per QP; the server checks every byte. lat: one QP, one "
             "message at a time, echoed\nback; latency is half the round trip. Prints one JSON "
             "object, its own result and the server's\nchecks, and exits 1 if a byte was wrong "
             "or a QP failed.",
    .tables = client_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "SERVER",
};
static const util_cli ring_cli = {
    .prog = "mrc-perf ring",
    .usage = "mrc-perf ring --hosts A,B,... [--rank R] [--size BYTES] [--duration S] "
             "[--iters N] [--progress MS] [options]",
    .about = "One rank of a ring all-reduce (float32 sums of SIZE bytes: reduce-scatter, then "
             "all-gather), run\non every host of --hosts at once. Every element of every result "
             "is checked. Every rank ends\nafter the same iteration and prints the same result "
             "(one JSON object: iterations, the slowest\nrank's time, bus bandwidth as "
             "nccl-tests counts it, the ring's checks) with its own under \"local\";\nit exits 1 "
             "if any rank found a wrong element, a QP failed or a rank left. SIGINT or SIGTERM\n"
             "ends the run early, with its result (a second one at once).",
    .tables = ring_tables,
};
static const util_cli status_cli = {
    .prog = "mrc-perf status",
    .usage = "mrc-perf status [--agent SOCK]",
    .about = "Prints the local agent's state and counters (JSON).",
    .tables = agent_tables,
};
static const util_cli evs_cli = {
    .prog = "mrc-perf evs",
    .usage = "mrc-perf evs [--agent SOCK]",
    .about = "Prints every EV of the local agent's QPs with its peer, path and state (JSON).",
    .tables = agent_tables,
};

/* One JSON object per line over the setup connection: written straight to the socket, read
 * through the FILE (a stdio stream may not switch from reading to writing on a socket). */
static int send_fd(int fd, json_object *o)
{
    int rv = dprintf(fd, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0
                 ? -EIO
                 : 0;
    json_object_put(o);
    return rv;
}

static int send_line(FILE *f, json_object *o)
{
    return send_fd(fileno(f), o);
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

static void print_json(json_object *o)
{
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    fflush(stdout);
}

/* Whether the checks of a bandwidth or latency run (a side's result) found a fault. */
static bool perf_failed(json_object *res)
{
    return json_object_get_int64(field(res, "bytes_bad")) != 0 ||
           json_object_get_int64(field(res, "errors")) != 0 ||
           json_object_get_boolean(field(field(res, "transport"), "qp_error"));
}

/* One client: its host, our sink or pong, the swap, and at the end our checks, sent to the
 * client and printed. 0, or 1 if the client went wrong or the checks found a fault. */
static int serve_one(FILE *f, char *buf)
{
    int rv = 1, fd = -1;
    json_object *hello = NULL, *req = NULL, *made = NULL, *ans = NULL;
    char err[256];
    if ((fd = agent_api_connect(o.agent, err, sizeof(err))) < 0) {
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
    bool lat = str_of(req, "test") && strcmp(str_of(req, "test"), "lat") == 0;
    if (!(made = ask(fd, create_req(str_of(req, "host") ? str_of(req, "host") : "",
                                    lat ? "pong" : "sink", req)))) {
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
    /* the client's "done", or its end: what was checked is printed either way */
    ans = read_line(f, buf);
    bool done = ans && field(ans, "done");
    json_object_put(ans);
    if (!(ans = ask(fd, op("stats")))) {
        goto out;
    }
    json_object *res = json_object_new_object();
    json_object_object_add(res, "test", json_object_new_string(lat ? "write_lat" : "write_bw"));
    json_object_object_add(res, "server", json_object_get(ans));
    print_json(res);
    json_object_put(res);
    if (!done) {
        fprintf(stderr, "mrc-perf: the client left before its run ended\n");
    }
    rv = send_line(f, json_object_get(ans)) == 0 && done && !perf_failed(ans) ? 0 : 1;
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

static int status(const char *what)
{
    char err[256];
    int fd = agent_api_connect(o.agent, err, sizeof(err));
    if (fd < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        return UTIL_EXIT_FAIL;
    }
    json_object *ans = ask(fd, op(what));
    close(fd);
    if (!ans) {
        return UTIL_EXIT_FAIL;
    }
    print_json(ans);
    json_object_put(ans);
    return UTIL_EXIT_OK;
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
 * there (every rank ends after the same iteration) and its result is printed as at the end of
 * --duration; a second signal ends mrc-perf at once. */
static volatile sig_atomic_t ring_fd = -1;

static void on_stop_signal(int sig)
{
    static const char stop[] = "{\"op\":\"ring_stop\"}\n";
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    (void)sig;
    if (ring_fd >= 0 && write(ring_fd, stop, sizeof(stop) - 1) < 0) {
        _exit(UTIL_EXIT_FAIL);
    }
}

/* The result every rank prints: a tally goes around the ring over the setup connections, each
 * rank adding its own result, then the full tally once more. The ranks end within about an
 * iteration of each other, so each waits that long (and 10 s) for its previous rank. NULL if a
 * neighbour left or did not answer in time. */
static json_object *ring_agree(FILE *nf, FILE *pf, unsigned rank, unsigned n, json_object *local,
                               char *buf)
{
    uint64_t it = json_object_get_uint64(field(local, "iterations"));
    double per =
        (double)json_object_get_uint64(field(local, "elapsed_ns")) / 1e9 / (double)(it ? it : 1);
    struct timeval tv = {.tv_sec = (time_t)(10 + 3 * per)};
    json_object *in = NULL, *full = NULL;
    setsockopt(fileno(pf), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (rank == 0) {
        if (send_line(nf, agent_ring_tally(NULL, local)) != 0 || !(full = read_line(pf, buf)) ||
            send_line(nf, json_object_get(full)) != 0) {
            goto fail;
        }
        return full;
    }
    if (!(in = read_line(pf, buf)) || send_line(nf, agent_ring_tally(in, local)) != 0 ||
        !(full = read_line(pf, buf)) ||
        (rank + 1 < n && send_line(nf, json_object_get(full)) != 0)) {
        goto fail;
    }
    json_object_put(in);
    return full;
fail:
    json_object_put(in);
    json_object_put(full);
    return NULL;
}

static int ring(void)
{
    char *list = util_xstrdup(o.hosts), *save = NULL, *hosts[AGENT_RING_MAX_RANKS], err[256];
    unsigned n = 0, count = 0;
    long rank = o.rank == RANK_UNSET ? -1 : (long)o.rank;
    int rv = UTIL_EXIT_USAGE, fd = -1;
    FILE *lf = NULL, *nf = NULL, *pf = NULL;
    char *buf = util_xmalloc(PERF_LINE);
    json_object *hello = NULL, *nh = NULL, *ph = NULL, *made = NULL, *nq = NULL, *pq = NULL,
                *res = NULL, *agreed = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save), count++) {
        if (n < AGENT_RING_MAX_RANKS) {
            hosts[n++] = t;
        }
    }
    if (count < 2 || count > AGENT_RING_MAX_RANKS) {
        util_cli_fail(&ring_cli, "--hosts names %u address%s; a ring has 2..%d", count,
                      count == 1 ? "" : "es", AGENT_RING_MAX_RANKS);
        goto out;
    }
    if (rank >= (long)n) {
        util_cli_fail(&ring_cli, "--rank %ld is not one of the %u ranks of --hosts (0..%u)", rank,
                      n, n - 1);
        goto out;
    }
    for (unsigned i = 0; rank < 0 && i < n; i++) {
        rank = is_local(hosts[i]) ? (long)i : -1;
    }
    if (rank < 0) {
        util_cli_fail(&ring_cli, "no address of --hosts is this host's (give --rank)");
        goto out;
    }
    agent_ring_cfg cfg = {
        .rank = (unsigned)rank, .n = n, .size = o.size ? o.size : RING_SIZE_DEFAULT};
    if (agent_ring_cfg_check(&cfg, err, sizeof(err)) != 0) {
        util_cli_fail(&ring_cli, "--size %llu: %s", (unsigned long long)cfg.size, err);
        goto out;
    }
    rv = UTIL_EXIT_FAIL;
    if ((fd = agent_api_connect(o.agent, err, sizeof(err))) < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        goto out;
    }
    if (!(hello = ask(fd, op("hello"))) || !(lf = tcp_open(NULL, o.portstr, true, o.bind, false))) {
        goto out;
    }
    /* the next rank may not listen yet: try for 30 s */
    const char *next = hosts[(rank + 1) % n];
    for (int i = 0; i < 300 && !nf; i++) {
        nf = tcp_open(next, o.portstr, false, NULL, i < 299);
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
    json_object_object_add(rc, "size", json_object_new_uint64(cfg.size));
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
                           json_object_new_uint64((uint64_t)llround(o.duration * 1e3)));
    json_object_object_add(run, "iters", json_object_new_uint64(o.iters));
    json_object_object_add(run, "progress_ms", json_object_new_uint64(o.progress));
    /* sent before the signals are taken, so that a ring_stop cannot come before it */
    rv = send_fd(fd, run);
    ring_fd = fd;
    struct sigaction sa = {.sa_handler = on_stop_signal, .sa_flags = SA_RESTART};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (rv != 0 || agent_api_read(fd, &res, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-perf: %s\n", rv != 0 ? "agent: cannot send the run" : err);
        rv = UTIL_EXIT_FAIL;
        goto out;
    }
    rv = UTIL_EXIT_FAIL;
    if (str_of(res, "error")) {
        fprintf(stderr, "mrc-perf: agent: %s\n", str_of(res, "error"));
        goto out;
    }
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
    ring_fd = -1;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    json_object *full = ring_agree(nf, pf, (unsigned)rank, n, res, buf);
    if (!full) {
        fprintf(stderr,
                "mrc-perf: the other ranks' results did not come round (a rank left or "
                "stalled): the result below is rank %ld's alone\n",
                rank);
        print_json(res);
        goto out;
    }
    agreed = agent_ring_summary(full, (unsigned)rank, json_object_get(res));
    json_object_put(full);
    print_json(agreed);
    rv = agent_ring_failed(agreed) ? UTIL_EXIT_FAIL : UTIL_EXIT_OK;
out:
    ring_fd = -1;
    json_object_put(hello);
    json_object_put(nh);
    json_object_put(ph);
    json_object_put(made);
    json_object_put(nq);
    json_object_put(pq);
    json_object_put(res);
    json_object_put(agreed);
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

static int server(void)
{
    FILE *lf = tcp_open(NULL, o.portstr, true, o.bind, false);
    char *buf = util_xmalloc(PERF_LINE);
    int rv = UTIL_EXIT_FAIL;
    if (!lf) {
        goto out;
    }
    fprintf(stderr, "mrc-perf: server listening on port %s\n", o.portstr);
    for (;;) {
        int fd = accept(fileno(lf), NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("mrc-perf: accept");
            rv = UTIL_EXIT_FAIL;
            break;
        }
        FILE *f = fdopen(fd, "r+");
        rv = serve_one(f, buf);
        fclose(f);
        if (o.once) {
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

static int client(const char *srv)
{
    int rv = UTIL_EXIT_FAIL, fd = -1;
    char err[256], *buf = util_xmalloc(PERF_LINE);
    bool lat = strcmp(o.test, "lat") == 0;
    FILE *f = NULL;
    json_object *hello = NULL, *peer = NULL, *params = NULL, *made = NULL, *theirs = NULL,
                *result = NULL, *checks = NULL;
    if ((fd = agent_api_connect(o.agent, err, sizeof(err))) < 0) {
        fprintf(stderr, "mrc-perf: %s\n", err);
        goto out;
    }
    if (!(hello = ask(fd, op("hello"))) || !(f = tcp_open(srv, o.portstr, false, NULL, false))) {
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
    json_object_object_add(params, "test", json_object_new_string(o.test));
    json_object_object_add(params, "qps", json_object_new_uint64(lat ? 1 : o.qps));
    json_object_object_add(params, "size", json_object_new_uint64(o.size));
    json_object_object_add(params, "slots", json_object_new_uint64(lat ? 2 : o.slots));
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
                           json_object_new_uint64((uint64_t)llround(o.duration * 1e3)));
    json_object_object_add(run, "iters", json_object_new_uint64(o.iters));
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
    print_json(out);
    json_object_put(out);
    rv = perf_failed(result) || perf_failed(checks) ? UTIL_EXIT_FAIL : UTIL_EXIT_OK;
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

/* A command's options (its name is argv[0]), then the command. */
static int run(const util_cli *cli, int argc, char **argv)
{
    char **args = NULL;
    int n = 0, rv;
    /* left as they are by the tables (no default): not given */
    o.rank = RANK_UNSET;
    o.size = 0;
    if ((rv = util_cli_parse(cli, argc, argv, &n, &args)) != UTIL_CLI_RUN) {
        goto out;
    }
    snprintf(o.portstr, sizeof(o.portstr), "%u", (unsigned)o.port);
    signal(SIGPIPE, SIG_IGN);
    if (cli == &server_cli) {
        rv = server();
    } else if (cli == &client_cli) {
        rv = client(args[0]);
    } else if (cli == &ring_cli) {
        rv = ring();
    } else {
        rv = status(cli == &status_cli ? "status" : "evs");
    }
out:
    free(args);
    for (const util_opt *const *t = cli->tables; *t; t++) {
        util_opt_free(*t);
    }
    return rv;
}

int main(int argc, char **argv)
{
    static const util_opt *const none[] = {NULL};
    static const util_cli top = {
        .prog = "mrc-perf",
        .usage = "mrc-perf COMMAND [options]",
        .about = "Tests on the hosts' agents (their software MRC NICs): write bandwidth and "
                 "latency between two\nhosts, a ring all-reduce over many, the agent's state.",
        .tables = none,
        .stop_at_operand = true,
        .min_operands = 1,
        .max_operands = UINT32_MAX,
        .operands = "COMMAND",
        .more = "commands (each with its own --help):\n"
                "  server     check what clients write, or echo it\n"
                "  client     write to a server: bandwidth (bw) or latency (lat)\n"
                "  ring       one rank of a ring all-reduce, run on every host of the ring\n"
                "  status     the local agent's state and counters\n"
                "  evs        every EV of the local agent's QPs\n",
    };
    static const struct {
        const char *name;
        const util_cli *cli;
    } cmds[] = {{"server", &server_cli},
                {"client", &client_cli},
                {"ring", &ring_cli},
                {"status", &status_cli},
                {"evs", &evs_cli}};
    char **args = NULL;
    int n = 0, rv;
    util_log_init("mrc-perf", stderr);
    if ((rv = util_cli_parse(&top, argc, argv, &n, &args)) != UTIL_CLI_RUN) {
        return rv;
    }
    /* the command's own parse sees its name as argv[0] */
    int at = 1;
    while (argv[at] != args[0]) {
        at++;
    }
    const char *cmd = args[0];
    free(args);
    for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
        if (strcmp(cmd, cmds[k].name) == 0) {
            return run(cmds[k].cli, argc - at, argv + at);
        }
    }
    return util_cli_fail(&top, "no command '%s' (server, client, ring, status or evs)", cmd);
}
