/* SPDX-License-Identifier: MIT */
/* bench_ctl_reports: agent reports against a live mrc-controller as fast as it takes them.
 * Many reporters at once over keep-alive connections (one report in flight each), each report
 * with its host's own agent token from the tokens file (a token reports only for the host its
 * name names, as every agent does). The
 * reporters walk every host of the fabric in a scrambled order, as a fabric's agents would
 * each report in turn; a host always names the same peers and EVs, so the controller sees
 * the host pairs and paths of a real fabric. A few T0-T1 links of one plane are made lossy so
 * the health engine has something to blame. Every response must be 202. Prints one JSON line;
 * exits 0 when every report was accepted, 1 otherwise, 2 on bad arguments. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "bench_ctl_http.h"

#define MAX_BAD 64
#define BODY_MAX 65536 /* the controller's default max_body */

static const char usage[] =
    "usage: bench_ctl_reports --port PORT --topology FILE --tokens FILE [options]\n"
    "  --ip ADDR        the controller's address (127.0.0.1)\n"
    "  --reports N      reports to send (131072)\n"
    "  --conns N        connections, one report in flight on each (64)\n"
    "  --peers N        peers named in each report (4)\n"
    "  --evs N          EVs per peer (8)\n"
    "  --bad-links N    lossy T0-T1 links, all in plane 3 (16)\n"
    "  --seed N         seed of the choice of peers, EVs and counters (1)\n"
    "  --seconds N      send no new report after N seconds (no limit)\n"
    "  --grace N        then wait N seconds at most for the answers in flight (10)\n";

typedef struct badlink {
    unsigned p, a, j;
} badlink;

typedef struct gen {
    const fab_topo *topo;
    const fab_plan *plan;
    uint32_t nhosts;
    unsigned planes, peers, evs;
    uint64_t seed;
    badlink bad[MAX_BAD];
    unsigned nbad;
    uint64_t lossy_evs, evs_sent;
} gen;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t h3(const gen *g, uint64_t a, uint64_t b, uint64_t c)
{
    return mix(g->seed ^ mix(a ^ mix(b ^ mix(c + 0x9e3779b97f4a7c15ull))));
}

/* The T0 index of host |host| on plane |p|, -1 when not cabled. */
static int t0_index(const gen *g, uint32_t host, unsigned p)
{
    uint32_t sw;
    unsigned port;
    fab_switch s;
    if (fab_host_attach(g->topo, host, p, &sw, &port) != 0 ||
        fab_switch_get(g->topo, sw, &s) != 0) {
        return -1;
    }
    return (int)s.index;
}

static bool is_bad(const gen *g, unsigned p, int a, unsigned j)
{
    for (unsigned i = 0; i < g->nbad; i++) {
        if (g->bad[i].p == p && (int)g->bad[i].a == a && g->bad[i].j == j) {
            return true;
        }
    }
    return false;
}

/* Appends to a body without snprintf: the generator shares the controller's two cores, and
 * every cycle it spends formatting is one the controller does not get. */
typedef struct out {
    char *buf;
    size_t len, cap;
    bool full;
} out;

static void put(out *o, const char *s)
{
    size_t n = strlen(s);
    if (o->len + n >= o->cap) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void put_u64(out *o, uint64_t v)
{
    char d[24];
    size_t i = sizeof(d);
    d[--i] = '\0';
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(o, d + i);
}

/* The report of host |host| into |dest|: its peers, each with its EVs and their counters.
 * Returns the length, 0 if it does not fit. */
static size_t report(gen *g, uint32_t host, uint64_t round, char *dest, size_t destlen)
{
    out o = {dest, 0, destlen, false};
    put(&o, "{\"host\":\"");
    put(&o, fab_host_name(g->topo, host));
    put(&o, "\",\"evs\":[");
    for (unsigned k = 0; k < g->peers; k++) {
        uint32_t peer = (uint32_t)((host + 1 + h3(g, host, k, 0) % (g->nhosts - 1)) % g->nhosts);
        const char *pname = fab_host_name(g->topo, peer);
        for (unsigned e = 0; e < g->evs; e++) {
            unsigned p = (k * g->evs + e) % g->planes;
            uint32_t nt1 = fab_topo_nt1(g->topo, p);
            unsigned j = (unsigned)(h3(g, host, k, e + 1) % nt1);
            uint32_t salt = (uint32_t)(h3(g, host, k, e + 1000) & 0x3ffff);
            uint32_t ev = fab_ev_make(g->plan, p, j, salt);
            int a = t0_index(g, host, p), b = t0_index(g, peer, p);
            /* counters of this reporting interval: they vary from round to round */
            uint64_t sent = 2000 + h3(g, host, k * 64 + e, round) % 60000, lost = 0;
            const char *state = "good";
            if (a >= 0 && b >= 0 && a != b && (is_bad(g, p, a, j) || is_bad(g, p, b, j))) {
                lost = sent / 50; /* 2 % */
                state = h3(g, host, e, round + 7) % 4 == 0 ? "assumed_bad" : "good";
                g->lossy_evs++;
            } else if (h3(g, host, e, round + 9) % 64 == 0) {
                state = "skip";
            }
            g->evs_sent++;
            put(&o, k || e ? ",{\"peer\":\"" : "{\"peer\":\"");
            put(&o, pname);
            put(&o, "\",\"ev\":");
            put_u64(&o, ev);
            put(&o, ",\"sent\":");
            put_u64(&o, sent);
            put(&o, ",\"lost\":");
            put_u64(&o, lost);
            put(&o, ",\"state\":\"");
            put(&o, state);
            put(&o, "\"}");
        }
    }
    put(&o, "]}");
    return o.full ? 0 : o.len;
}

/* Each host's agent token ('TOKEN agent HOST' lines of |path|) into |tokens| by host index.
 * Returns 0, how many hosts have none, or -errno. */
static int host_tokens(const char *path, const fab_topo *topo, char **tokens)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return -errno;
    }
    char line[512], tok[256], role[64], name[128];
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || sscanf(line, "%255s %63s %127s", tok, role, name) != 3 ||
            strcmp(role, "agent") != 0) {
            continue;
        }
        uint32_t h = fab_host_find(topo, name);
        if (h != FAB_NONE && !tokens[h]) {
            tokens[h] = strdup(tok);
        }
    }
    fclose(f);
    int missing = 0;
    for (uint32_t h = 0; h < fab_topo_nhosts(topo); h++) {
        missing += !tokens[h];
    }
    return missing;
}

typedef struct run {
    gen *g;
    const char *ip;
    unsigned port;
    char **tokens; /* by host index */
    uint64_t total, issued, done, accepted, failed, bytes;
    uint32_t stride, start;
    char first_failure[256];
    char *body, *req;
    int ep;
} run;

/* Sends the next report on connection |i|. */
static int issue(run *r, bench_conn *c, unsigned i)
{
    uint64_t k = r->issued++;
    uint32_t host = (uint32_t)((r->start + k * r->stride) % r->g->nhosts);
    size_t blen = report(r->g, host, k / r->g->nhosts, r->body, BODY_MAX);
    if (blen == 0) {
        fprintf(stderr, "bench_ctl_reports: a report is over %d bytes\n", BODY_MAX);
        return -1;
    }
    size_t len = bench_http_request(r->req, BODY_MAX + 1024, "POST", "/api/v1/reports",
                                    r->tokens[host], r->body, blen);
    r->bytes += blen;
    int rv = bench_conn_send(c, r->req, len);
    if (rv != 0 || c->outoff == c->outlen) {
        return rv;
    }
    /* the rest when the socket takes it */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = i};
    return epoll_ctl(r->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void failure(run *r, const char *what)
{
    r->failed++;
    if (!r->first_failure[0]) {
        snprintf(r->first_failure, sizeof(r->first_failure), "%s", what);
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"port", required_argument, NULL, 'P'},
        {"topology", required_argument, NULL, 't'},
        {"tokens", required_argument, NULL, 'k'},
        {"ip", required_argument, NULL, 'i'},
        {"reports", required_argument, NULL, 'n'},
        {"conns", required_argument, NULL, 'c'},
        {"peers", required_argument, NULL, 'p'},
        {"evs", required_argument, NULL, 'e'},
        {"bad-links", required_argument, NULL, 'b'},
        {"seed", required_argument, NULL, 's'},
        {"seconds", required_argument, NULL, 'S'},
        {"grace", required_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *topofile = NULL, *tokfile = NULL, *ip = "127.0.0.1";
    unsigned port = 0, conns = 64;
    gen g = {.peers = 4, .evs = 8, .seed = 1, .nbad = 16};
    uint64_t total = 131072, limit_s = 0, grace_s = 10;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (opt) {
        case 'P':
            port = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 't':
            topofile = optarg;
            break;
        case 'k':
            tokfile = optarg;
            break;
        case 'i':
            ip = optarg;
            break;
        case 'n':
            total = strtoull(optarg, NULL, 10);
            break;
        case 'c':
            conns = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'p':
            g.peers = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'e':
            g.evs = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'b':
            g.nbad = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 's':
            g.seed = strtoull(optarg, NULL, 10);
            break;
        case 'S':
            limit_s = strtoull(optarg, NULL, 10);
            break;
        case 'G':
            grace_s = strtoull(optarg, NULL, 10);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!port || port > 65535 || !topofile || !tokfile || !conns || !g.peers || !g.evs ||
        g.nbad > MAX_BAD || !total) {
        fputs(usage, stderr);
        return 2;
    }
    fab_topo *topo;
    fab_error ferr;
    if (fab_topo_load_file(topofile, &topo, &ferr) != 0) {
        fprintf(stderr, "bench_ctl_reports: %s: %s\n", topofile, ferr.msg);
        return 2;
    }
    g.topo = topo;
    g.plan = fab_topo_plan(topo);
    g.nhosts = fab_topo_nhosts(topo);
    g.planes = fab_topo_planes(topo);
    if (g.nhosts < 2 || (g.nbad && g.planes < 4)) {
        fprintf(stderr, "bench_ctl_reports: the fabric needs 2 hosts and 4 planes\n");
        return 2;
    }
    for (unsigned i = 0; i < g.nbad; i++) {
        g.bad[i] = (badlink){3, (unsigned)(h3(&g, 77, i, 1) % fab_topo_nt0(topo, 3)),
                             (unsigned)(h3(&g, 77, i, 2) % fab_topo_nt1(topo, 3))};
    }
    char **tokens = calloc(g.nhosts, sizeof(*tokens));
    int missing = tokens ? host_tokens(tokfile, topo, tokens) : -ENOMEM;
    if (missing != 0) {
        fprintf(stderr, "bench_ctl_reports: %s: %s\n", tokfile,
                missing > 0 ? "not every host of the fabric has an agent token named for it"
                            : strerror(-missing));
        return 2;
    }

    run r = {.g = &g,
             .ip = ip,
             .port = port,
             .tokens = tokens,
             .total = total,
             .start = (uint32_t)(h3(&g, 5, 5, 5) % g.nhosts)};
    /* an odd stride below a power of two visits every host once a round, scattered */
    r.stride = (uint32_t)(g.nhosts * 0.618) | 1;
    while (r.stride > 1) {
        uint32_t a = r.stride, b = g.nhosts;
        while (b) {
            uint32_t t = a % b;
            a = b;
            b = t;
        }
        if (a == 1) {
            break;
        }
        r.stride += 2;
    }
    r.body = malloc(BODY_MAX);
    r.req = malloc(BODY_MAX + 1024);
    bench_conn *cs = calloc(conns, sizeof(*cs));
    r.ep = epoll_create1(EPOLL_CLOEXEC);
    if (!r.body || !r.req || !cs || r.ep < 0) {
        fprintf(stderr, "bench_ctl_reports: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < conns; i++) {
        int rv = bench_conn_open(&cs[i], ip, port);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
        if (rv != 0 || epoll_ctl(r.ep, EPOLL_CTL_ADD, cs[i].fd, &ev) != 0) {
            fprintf(stderr, "bench_ctl_reports: connection %u to %s:%u: %s\n", i, ip, port,
                    strerror(rv ? -rv : errno));
            return 1;
        }
    }
    uint64_t t0 = bench_now_ns(), last = t0;
    /* a controller far from the target would hold the run for minutes: stop sending, and give
     * up on the answers still due a while later (the controller may go on with them) */
    uint64_t deadline = limit_s ? t0 + limit_s * 1000000000u : UINT64_MAX;
    uint64_t give_up = limit_s ? deadline + grace_s * 1000000000u : UINT64_MAX;
    uint64_t in_time = 0; /* answers before the deadline */
    bool stopped = false;
    int status = 0;
    for (unsigned i = 0; i < conns && r.issued < total; i++) {
        if (issue(&r, &cs[i], i) != 0) {
            status = 1;
            goto out;
        }
    }
    struct epoll_event evs[256];
    while (r.done < r.issued) {
        int n = epoll_wait(r.ep, evs, 256, limit_s ? 100 : 10000);
        uint64_t now = bench_now_ns();
        if (now >= deadline && !stopped) {
            stopped = r.issued < total;
            total = r.issued;
        }
        if (now >= give_up) {
            break;
        }
        if (n == 0 && !limit_s) {
            fprintf(stderr,
                    "bench_ctl_reports: no answer in 10 s (%" PRIu64 " of %" PRIu64 " answered)\n",
                    r.done, r.issued);
            status = 1;
            goto out;
        }
        for (int k = 0; k < n; k++) {
            unsigned i = evs[k].data.u32;
            bench_conn *c = &cs[i];
            if ((evs[k].events & EPOLLOUT) && bench_conn_flush(c) == 1) {
                struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
                epoll_ctl(r.ep, EPOLL_CTL_MOD, c->fd, &ev);
            }
            int rv = bench_conn_read(c);
            if (rv == 0) {
                continue;
            }
            if (rv < 0) {
                /* the controller closed or broke the connection: count it, open another */
                char what[128];
                snprintf(what, sizeof(what), "connection lost: %s", strerror(-rv));
                failure(&r, what);
                r.done++;
                epoll_ctl(r.ep, EPOLL_CTL_DEL, c->fd, NULL);
                bench_conn_close(c);
                struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
                if (bench_conn_open(c, ip, port) != 0 ||
                    epoll_ctl(r.ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
                    status = 1;
                    goto out;
                }
            } else {
                r.done++;
                if (c->status == 202) {
                    r.accepted++;
                } else {
                    char what[200];
                    snprintf(what, sizeof(what), "HTTP %d: %.*s", c->status,
                             (int)(c->bodylen < 150 ? c->bodylen : 150), c->body);
                    failure(&r, what);
                }
                bool close_it = c->close;
                bench_conn_next(c);
                if (close_it) {
                    epoll_ctl(r.ep, EPOLL_CTL_DEL, c->fd, NULL);
                    bench_conn_close(c);
                    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
                    if (bench_conn_open(c, ip, port) != 0 ||
                        epoll_ctl(r.ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
                        status = 1;
                        goto out;
                    }
                }
            }
            in_time += now < deadline;
            if (r.issued < total && issue(&r, c, i) != 0) {
                status = 1;
                goto out;
            }
        }
        last = n ? bench_now_ns() : last;
    }
out:;
    double secs = (double)(last - t0) / 1e9;
    /* the generator's own CPU, so that the driver can tell what else the machine was doing */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    printf("{\"reports\": %" PRIu64 ", \"answered\": %" PRIu64 ", \"accepted\": %" PRIu64
           ", \"failed\": %" PRIu64 ", \"seconds\": %.3f, \"per_second\": %.0f, "
           "\"connections\": %u, \"agent_tokens\": %u, \"evs_per_report\": %u, "
           "\"avg_body_bytes\": %.0f, \"lossy_evs\": %" PRIu64 ", \"bad_links\": %u, "
           "\"cpu_seconds\": %.2f, \"stopped_early\": %s, \"answered_in_time\": %" PRIu64
           ", \"unanswered\": %" PRIu64 ", \"first_failure\": \"",
           r.issued, r.done, r.accepted, r.failed, secs, secs > 0 ? (double)r.accepted / secs : 0,
           conns, g.nhosts, g.peers * g.evs, r.issued ? (double)r.bytes / (double)r.issued : 0,
           g.lossy_evs, g.nbad, cpu, stopped ? "true" : "false", in_time, r.issued - r.done);
    for (const char *s = r.first_failure; *s; s++) {
        if (*s == '"' || *s == '\\') {
            putchar('\\');
        }
        putchar((unsigned char)*s < 0x20 ? ' ' : *s);
    }
    printf("\"}\n");
    for (unsigned i = 0; i < conns; i++) {
        bench_conn_close(&cs[i]);
    }
    for (uint32_t i = 0; i < g.nhosts; i++) {
        free(tokens[i]);
    }
    free(tokens);
    free(cs);
    free(r.body);
    free(r.req);
    fab_topo_free(topo);
    if (status == 0 && (r.failed || r.accepted != total || stopped || r.done != r.issued)) {
        status = 1;
    }
    return status;
}
