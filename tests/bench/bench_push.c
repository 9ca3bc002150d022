/* SPDX-License-Identifier: MIT */
/* bench_push: whether the controller holds one push connection per agent at the fabric's size
 * (issue 19 item 5), and what its queries cost meanwhile. Starts mrc-controller on loopback
 * (plain HTTP, a tokens file of N agent tokens h0..hN-1 and a reader, --max-connections above
 * N) and opens N idle push connections to it from this one process, each a long-poll GET
 * /api/v1/denylist/version?after=<current>&wait=<max> with its own agent token and its own
 * source address in 127.0.0.0/8 (so that neither ephemeral ports nor a per-address limit is
 * what stops it), epoll-driven, non-blocking connects in bounded batches, a poll re-issued
 * when one is answered. A separate thread times GET /api/v1/health/summary and GET
 * /api/v1/denylist with the reader token with none held (the baseline) and with the N held;
 * the controller's VmRSS before, with all N, and after they close. Prints one table; exits 0
 * when all N were held, 1 when fewer (saying how many and why), 2 on bad arguments. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_ctl_http.h"

#ifndef BENCH_DEFAULT_TOPO
#define BENCH_DEFAULT_TOPO "deploy/topologies/full.json"
#endif

static const char usage[] =
    "usage: bench_push --bin DIR [options]\n"
    "  --bin DIR          where mrc-controller is\n"
    "  --topology FILE    the controller's topology (" BENCH_DEFAULT_TOPO ")\n"
    "  --conns N          push connections held (131072)\n"
    "  --queries N        timed requests per phase, half of each path (4000)\n"
    "  --batch N          connects in flight at once (2048)\n"
    "  --wait S           the polls' wait=, the controller's --max-wait (600)\n"
    "  --hold S           how long the N are held while the queries run, at least (5)\n";

enum { C_CONNECTING, C_WAITING, C_DEAD };

typedef struct push_conn {
    int fd;
    unsigned char state;
} push_conn;

static struct {
    const char *bin, *topo;
    unsigned conns, queries, batch, wait_s, hold_s;
    unsigned port;
    pid_t ctl;
    char dir[256];
    long long version;
} g = {.topo = BENCH_DEFAULT_TOPO,
       .conns = 131072,
       .queries = 4000,
       .batch = 2048,
       .wait_s = 600,
       .hold_s = 5};

static const char reader[] = "tok-bench-reader-0000000001";

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* The controller's resident memory in KiB, -1 if unknown. */
static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
        }
    }
    if (f) {
        fclose(f);
    }
    return kib;
}

/* The tokens file: N agents h0..hN-1 and a reader, mode 0600. */
static int tokens_write(const char *path, unsigned n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        return -errno;
    }
    fprintf(f, "%s reader bench\n", reader);
    for (unsigned i = 0; i < n; i++) {
        fprintf(f, "tok-bench-agent-%010u agent h%u\n", i, i);
    }
    return fclose(f) == 0 ? 0 : -errno;
}

/* Starts the controller; its port into g.port. */
static int controller_start(void)
{
    char tokens[300], db[300], log[300], exe[512], maxc[32], maxw[32];
    snprintf(tokens, sizeof(tokens), "%s/tokens", g.dir);
    snprintf(db, sizeof(db), "%s/ctl.db", g.dir);
    snprintf(log, sizeof(log), "%s/ctl.log", g.dir);
    snprintf(exe, sizeof(exe), "%s/mrc-controller", g.bin);
    snprintf(maxc, sizeof(maxc), "%u", g.conns + 512);
    snprintf(maxw, sizeof(maxw), "%u", g.wait_s);
    int rv = tokens_write(tokens, g.conns);
    if (rv != 0) {
        fprintf(stderr, "bench_push: %s: %s\n", tokens, strerror(-rv));
        return rv;
    }
    g.ctl = fork();
    if (g.ctl < 0) {
        return -errno;
    }
    if (g.ctl == 0) {
        if (!freopen(log, "w", stderr)) {
            _exit(127);
        }
        execl(exe, exe, "--topology", g.topo, "--db", db, "--tokens", tokens, "--listen",
              "127.0.0.1:0", "--max-connections", maxc, "--max-wait", maxw, "--web", "", "--floor",
              "0", /* the queries come from one reader token, faster than its rate allows */
              "--rate-limit", "0", (char *)NULL);
        fprintf(stderr, "bench_push: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    /* it says its port once it serves; a large tokens file takes a while to load */
    for (int i = 0; i < 1200 && !g.port; i++) {
        FILE *f = fopen(log, "r");
        char line[1024];
        while (f && fgets(line, sizeof(line), f)) {
            const char *p = strstr(line, " port ");
            if (p && strstr(line, "(http)")) {
                g.port = (unsigned)strtoul(p + 6, NULL, 10);
            }
        }
        if (f) {
            fclose(f);
        }
        if (!g.port && waitpid(g.ctl, NULL, WNOHANG) == g.ctl) {
            g.ctl = -1;
            break;
        }
        sleep_ms(50);
    }
    if (!g.port) {
        char cmd[400];
        fprintf(stderr, "bench_push: the controller did not start; its log:\n");
        snprintf(cmd, sizeof(cmd), "tail -n 5 '%s' >&2", log);
        if (system(cmd) != 0) {
            fprintf(stderr, "(no log)\n");
        }
        return -EIO;
    }
    return 0;
}

/* --- the queries: one keep-alive connection, one request at a time, from a thread --------- */

typedef struct phase {
    double p50[2], p99[2]; /* ms: health/summary, denylist */
    unsigned failed;
    char why[160];
} phase;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void *queries(void *arg)
{
    phase *ph = arg;
    static const char *const paths[2] = {"/api/v1/health/summary", "/api/v1/denylist"};
    unsigned each = g.queries / 2 ? g.queries / 2 : 1;
    uint64_t *lat[2] = {calloc(each, sizeof(uint64_t)), calloc(each, sizeof(uint64_t))};
    unsigned n[2] = {0, 0};
    bench_conn c = {.fd = -1};
    char req[2][512];
    size_t len[2];
    for (int p = 0; p < 2; p++) {
        len[p] = bench_http_request(req[p], sizeof(req[p]), "GET", paths[p], reader, NULL, 0);
    }
    for (unsigned i = 0; i < 2 * each; i++) {
        int p = (int)(i % 2), rv;
        if (c.fd < 0 && (rv = bench_conn_open(&c, "127.0.0.1", g.port)) != 0) {
            snprintf(ph->why, sizeof(ph->why), "cannot connect: %s", strerror(-rv));
            ph->failed++;
            c.fd = -1;
            continue;
        }
        uint64_t t0 = bench_now_ns();
        rv = bench_conn_send(&c, req[p], len[p]);
        while (rv == 0 && (rv = bench_conn_read(&c)) == 0) {
            struct pollfd pfd = {.fd = c.fd, .events = POLLIN};
            if (poll(&pfd, 1, 10000) != 1) {
                rv = -ETIMEDOUT;
            }
        }
        uint64_t t1 = bench_now_ns();
        if (rv == 1 && c.status == 200) {
            lat[p][n[p]++] = t1 - t0;
        } else {
            ph->failed++;
            snprintf(ph->why, sizeof(ph->why), "%s: %s", paths[p],
                     rv == 1 ? "not 200" : strerror(-rv));
        }
        bool close_it = rv != 1 || c.close;
        if (rv == 1) {
            bench_conn_next(&c);
        }
        if (close_it) {
            bench_conn_close(&c);
            c.fd = -1;
        }
    }
    if (c.fd >= 0) {
        bench_conn_close(&c);
    }
    for (int p = 0; p < 2; p++) {
        qsort(lat[p], n[p], sizeof(uint64_t), cmp_u64);
        ph->p50[p] = n[p] ? (double)lat[p][n[p] / 2] / 1e6 : -1;
        ph->p99[p] = n[p] ? (double)lat[p][(n[p] * 99 + 99) / 100 - 1] / 1e6 : -1;
        free(lat[p]);
    }
    return NULL;
}

static void run_queries(phase *ph)
{
    pthread_t t;
    memset(ph, 0, sizeof(*ph));
    pthread_create(&t, NULL, queries, ph);
    pthread_join(t, NULL);
}

/* --- the push connections ------------------------------------------------------------------ */

static push_conn *conns;
static int ep = -1;
static unsigned connecting, waiting, answered, lost, refused;
static int first_errno;
static char first_answer[160];

static void conn_fail(push_conn *c, int e)
{
    if (!first_errno) {
        first_errno = e;
    }
    if (c->state == C_CONNECTING) {
        connecting--;
        refused++;
    } else if (c->state == C_WAITING) {
        waiting--;
        lost++;
    }
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->state = C_DEAD;
}

/* The poll of connection |i|, written at once (it fits any socket buffer). */
static int poll_send(unsigned i)
{
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "GET /api/v1/denylist/version?after=%lld&wait=%u HTTP/1.1\r\nHost: bench\r\n"
                     "Authorization: Bearer tok-bench-agent-%010u\r\n\r\n",
                     g.version, g.wait_s, i);
    ssize_t w = send(conns[i].fd, req, (size_t)n, MSG_NOSIGNAL);
    return w == n ? 0 : w < 0 ? -errno : -EAGAIN;
}

/* Opens connection |i| from 127.x.y.z (x.y.z from |i|, never 127.0.0.1), non-blocking. */
static int conn_open(unsigned i)
{
    push_conn *c = &conns[i];
    uint32_t src = (127u << 24) + (1u << 16) + i + 1;
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(src)};
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)g.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        return -errno;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* no TIME_WAIT left behind on close: the runs follow each other */
    struct linger lg = {1, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    if (bind(c->fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
        (connect(c->fd, (struct sockaddr *)&to, sizeof(to)) != 0 && errno != EINPROGRESS)) {
        int e = errno;
        close(c->fd);
        c->fd = -1;
        return -e;
    }
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u32 = i};
    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
    c->state = C_CONNECTING;
    connecting++;
    return 0;
}

static void conn_event(unsigned i, uint32_t events)
{
    push_conn *c = &conns[i];
    if (c->state == C_CONNECTING) {
        int e = 0;
        socklen_t el = sizeof(e);
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e || (events & (EPOLLERR | EPOLLHUP))) {
            conn_fail(c, e ? e : ECONNRESET);
            return;
        }
        int rv = poll_send(i);
        if (rv != 0) {
            conn_fail(c, -rv);
            return;
        }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->state = C_WAITING;
        connecting--;
        waiting++;
        return;
    }
    if (c->state != C_WAITING) {
        return;
    }
    /* an answer (its wait ran out, or the version moved), or the end: a poll is small enough
     * to come in one read; a closed connection is counted lost */
    char buf[4096];
    ssize_t r = recv(c->fd, buf, sizeof(buf) - 1, 0);
    if (r <= 0) {
        if (r < 0 && errno == EAGAIN) {
            return;
        }
        conn_fail(c, r == 0 ? ECONNRESET : errno);
        return;
    }
    buf[r] = '\0';
    answered++;
    if (!first_answer[0]) {
        snprintf(first_answer, sizeof(first_answer), "%.*s", (int)strcspn(buf, "\r\n"), buf);
    }
    if (strstr(buf, "Connection: close") || strstr(buf, "connection: close") ||
        strncmp(buf, "HTTP/1.1 200", 12) != 0 || poll_send(i) != 0) {
        conn_fail(c, EPROTO);
    }
}

/* Runs the loop for up to |ms|, or until every connection is settled (none connecting) when
 * |settle|. */
static void loop(long ms, bool settle)
{
    struct epoll_event evs[1024];
    uint64_t until = bench_now_ns() + (uint64_t)ms * 1000000;
    while (bench_now_ns() < until && !(settle && connecting == 0)) {
        int n = epoll_wait(ep, evs, 1024, 50);
        for (int k = 0; k < n; k++) {
            conn_event(evs[k].data.u32, evs[k].events);
        }
    }
}

/* The version the polls wait past: the current one. */
static int version_now(void)
{
    char req[512], *body = NULL;
    int status = 0;
    size_t len = bench_http_request(req, sizeof(req), "GET",
                                    "/api/v1/denylist/version?after=0&wait=0", reader, NULL, 0);
    if (bench_http_once("127.0.0.1", g.port, req, len, 5000, &status, &body) != 0 ||
        status != 200) {
        free(body);
        return -EIO;
    }
    const char *v = strstr(body, "\"version\"");
    g.version = v ? strtoll(v + 10 + strspn(v + 10, " :"), NULL, 10) : 0;
    free(body);
    return 0;
}

/* What the controller counts as waiting on the push channel, -1 if unknown. */
static double subscribers(void)
{
    char req[256], *body = NULL;
    int status = 0;
    double v = -1;
    size_t len = bench_http_request(req, sizeof(req), "GET", "/metrics", NULL, NULL, 0);
    if (bench_http_once("127.0.0.1", g.port, req, len, 5000, &status, &body) == 0 &&
        status == 200) {
        v = bench_metric(body, "mrcfab_push_subscribers");
    }
    free(body);
    return v;
}

static void row(const char *what, unsigned held, const phase *ph, long rss)
{
    char q[96] = "";
    if (ph) {
        snprintf(q, sizeof(q), "%8.3f %8.3f %8.3f %8.3f", ph->p50[0], ph->p99[0], ph->p50[1],
                 ph->p99[1]);
    } else {
        snprintf(q, sizeof(q), "%8s %8s %8s %8s", "-", "-", "-", "-");
    }
    printf("%-22s %8u %s %10.1f\n", what, held, q, (double)rss / 1024);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bin", required_argument, NULL, 'b'},
        {"topology", required_argument, NULL, 't'},
        {"conns", required_argument, NULL, 'n'},
        {"queries", required_argument, NULL, 'q'},
        {"batch", required_argument, NULL, 'B'},
        {"wait", required_argument, NULL, 'w'},
        {"hold", required_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt, rc = 1;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        unsigned long v = optarg ? strtoul(optarg, NULL, 10) : 0;
        switch (opt) {
        case 'b':
            g.bin = optarg;
            break;
        case 't':
            g.topo = optarg;
            break;
        case 'n':
            g.conns = (unsigned)v;
            break;
        case 'q':
            g.queries = (unsigned)v;
            break;
        case 'B':
            g.batch = (unsigned)v;
            break;
        case 'w':
            g.wait_s = (unsigned)v;
            break;
        case 'H':
            g.hold_s = (unsigned)v;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!g.bin || !g.conns || g.conns > (1u << 23) || !g.queries || !g.batch || !g.wait_s ||
        g.wait_s > 600) {
        fputs(usage, stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    /* a socket per connection here and in the controller (which inherits the limit) */
    struct rlimit rl;
    rlim_t want = (rlim_t)g.conns + 4096;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max < want) {
        struct rlimit up = {want, want};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
            rl = up;
        }
    }
    rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    /* a hard limit that cannot be raised (no CAP_SYS_RESOURCE) bounds both processes: measure
     * what fits, and say so */
    unsigned asked = g.conns;
    if (rl.rlim_cur < (rlim_t)g.conns + 1024) {
        g.conns = rl.rlim_cur > 2048 ? (unsigned)(rl.rlim_cur - 1024) : 1024;
        fprintf(stderr,
                "bench_push: RLIMIT_NOFILE is %llu here and cannot be raised (root with "
                "CAP_SYS_RESOURCE, or ulimit -Hn, can): %u connections, not %u\n",
                (unsigned long long)rl.rlim_cur, g.conns, asked);
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(g.dir, sizeof(g.dir), "%s/bench_push_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g.dir)) {
        perror("bench_push: mkdtemp");
        return 1;
    }
    conns = calloc(g.conns, sizeof(*conns));
    ep = epoll_create1(EPOLL_CLOEXEC);
    uint64_t t_start = bench_now_ns();
    if (!conns || ep < 0 || controller_start() != 0 || version_now() != 0) {
        fprintf(stderr, "bench_push: cannot start\n");
        goto out;
    }
    double start_s = (double)(bench_now_ns() - t_start) / 1e9;

    phase base, held_q;
    run_queries(&base);
    long rss0 = rss_kib(g.ctl);

    /* the N, in batches of connects in flight */
    uint64_t t0 = bench_now_ns();
    unsigned next = 0, open_failed = 0;
    int open_errno = 0;
    while (next < g.conns && bench_now_ns() - t0 < 600ull * 1000000000) {
        while (next < g.conns && connecting < g.batch) {
            int rv = conn_open(next);
            if (rv != 0) {
                open_failed++;
                open_errno = open_errno ? open_errno : -rv;
                conns[next].state = C_DEAD;
                conns[next].fd = -1;
            }
            next++;
        }
        loop(20, false);
    }
    loop(20000, true);
    double connect_s = (double)(bench_now_ns() - t0) / 1e9;
    /* held: what the controller counts as waiting, once it has read every poll */
    double subs = -1;
    for (int i = 0; i < 200; i++) {
        loop(50, false);
        subs = subscribers();
        if (subs >= waiting) {
            break;
        }
    }
    long rss1 = rss_kib(g.ctl);
    run_queries(&held_q);
    loop((long)g.hold_s * 1000, false);
    unsigned held = waiting;
    double subs_end = subscribers();

    for (unsigned i = 0; i < g.conns; i++) {
        if (conns[i].fd >= 0) {
            close(conns[i].fd);
        }
    }
    /* the controller notices the closes at its next look at each connection */
    long rss2 = -1;
    for (int i = 0; i < 40; i++) {
        sleep_ms(250);
        if (subscribers() <= 0) {
            break;
        }
    }
    sleep_ms(1000);
    phase after;
    run_queries(&after);
    rss2 = rss_kib(g.ctl);

    printf("bench_push: %u push connections to mrc-controller on 127.0.0.1:%u (%s), "
           "RLIMIT_NOFILE %llu, %u connects in flight; the controller started in %.1f s, the "
           "connections took %.1f s\n",
           g.conns, g.port, g.topo, (unsigned long long)rl.rlim_cur, g.batch, start_s, connect_s);
    printf("%-22s %8s %8s %8s %8s %8s %10s\n", "", "held", "summ p50", "summ p99", "deny p50",
           "deny p99", "RSS MiB");
    row("baseline (none held)", 0, &base, rss0);
    row("with the push held", held, &held_q, rss1);
    row("after they closed", 0, &after, rss2);
    printf("(latencies in ms, %u requests a phase, half of each path)\n", g.queries);
    printf("held %u of %u (the controller counted %.0f waiting, %.0f at the end); answered "
           "and re-issued %u; lost %u; refused %u; not opened %u%s%s\n",
           held, g.conns, subs, subs_end, answered, lost, refused, open_failed,
           first_errno || open_errno ? "; first error: " : "",
           first_errno  ? strerror(first_errno)
           : open_errno ? strerror(open_errno)
                        : "");
    if (first_answer[0]) {
        printf("first answer: %s\n", first_answer);
    }
    if (held && rss1 > 0 && rss0 > 0) {
        printf("RSS per held connection: %.2f KiB\n", (double)(rss1 - rss0) / held);
    }
    if (base.failed || held_q.failed || after.failed) {
        printf("queries failed: %u, %u, %u (%s)\n", base.failed, held_q.failed, after.failed,
               held_q.why[0] ? held_q.why
               : base.why[0] ? base.why
                             : after.why);
    }
    if (asked > g.conns) {
        printf("bench_push: asked for %u, measured %u: this machine's RLIMIT_NOFILE hard "
               "limit is %llu, for the controller too\n",
               asked, g.conns, (unsigned long long)rl.rlim_cur);
    }
    if (held < g.conns) {
        printf("bench_push: held %u of %u: %s\n", held, g.conns,
               rl.rlim_cur < (rlim_t)g.conns + 64
                   ? "RLIMIT_NOFILE is below N here (raise the hard limit: run as root or "
                     "ulimit -Hn)"
               : refused || lost ? "the controller refused or closed the rest (its "
                                   "--max-connections, its file limit, or its log)"
                                 : "the rest did not connect in time");
    }
    rc = held == g.conns && !held_q.failed && !base.failed ? 0 : 1;
    fflush(stdout);
out:
    if (g.ctl > 0) {
        uint64_t t_stop = bench_now_ns();
        kill(g.ctl, SIGTERM);
        waitpid(g.ctl, NULL, 0);
        printf("the controller stopped %.1f s after SIGTERM\n",
               (double)(bench_now_ns() - t_stop) / 1e9);
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g.dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_push: cannot remove %s\n", g.dir);
    }
    free(conns);
    return rc;
}
