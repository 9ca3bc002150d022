/* SPDX-License-Identifier: MIT */
/* bench_udp_pingpong: the baseline bench_agent.sh sets mrc-perf's latency beside. A client
 * sends one UDP datagram at a time to a server that echoes it; latency is half the round
 * trip, with the same percentiles as mrc-perf's latency test (sorted samples, index
 * round(q x (n - 1))). Both ends sleep in the kernel between datagrams, as the agent's event
 * loop does. The client prints one JSON object and exits 0 when it measured at least one round
 * trip, 1 otherwise, 2 on bad arguments. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PP_HDR 16 /* sequence number and send time lead every datagram */
#define PP_MAX_SIZE 8192
#define PP_MAX_SAMPLES (1u << 22)

static const char usage[] =
    "usage: bench_udp_pingpong server [--bind ADDR] [--port P] [--idle S]\n"
    "       bench_udp_pingpong client SERVER [--bind ADDR] [--port P] [--size B]\n"
    "                [--duration S] [--timeout MS]\n"
    "\n"
    "  server: echoes every datagram to its sender; exits after S seconds without one\n"
    "          (--idle, default 60; 0: never).\n"
    "  client: one SIZE-byte datagram (default 64, at least 16) at a time to SERVER:P\n"
    "          (default port 7481) for S seconds (default 5); one unanswered within MS\n"
    "          (default 100) counts as lost. Prints p50/p90/p99/p999/max of half the round\n"
    "          trip in microseconds as JSON.\n";

typedef struct pp_opts {
    const char *bind, *server;
    unsigned port, size, timeout_ms;
    double duration, idle;
} pp_opts;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* An IPv6 UDP socket bound to |addr| (NULL: any) and |port| (0: any). */
static int open_socket(const char *addr, unsigned port)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    if (addr && inet_pton(AF_INET6, addr, &sa.sin6_addr) != 1) {
        fprintf(stderr, "bench_udp_pingpong: %s is not an IPv6 address\n", addr);
        return -EINVAL;
    }
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = -errno;
        fprintf(stderr, "bench_udp_pingpong: bind [%s]:%u: %s\n", addr ? addr : "::", port,
                strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return e;
    }
    return fd;
}

static int run_server(const pp_opts *o)
{
    uint8_t buf[PP_MAX_SIZE];
    int fd = open_socket(o->bind, o->port), rv = 0;
    if (fd < 0) {
        return fd;
    }
    int wait_ms = o->idle > 0 ? (int)(o->idle * 1000) : -1;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int k = poll(&pfd, 1, wait_ms);
        if (k == 0) {
            break; /* idle: the client is gone */
        }
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k < 0) {
            rv = -errno;
            fprintf(stderr, "bench_udp_pingpong: poll: %s\n", strerror(errno));
            break;
        }
        struct sockaddr_in6 from;
        socklen_t fromlen = sizeof(from);
        ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
        if (n < 0) {
            continue; /* e.g. an ICMP error queued on the socket */
        }
        /* a lost echo is the client's to count */
        (void)sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fromlen);
    }
    close(fd);
    return rv;
}

/* Waits for the echo of |seq| until |deadline|: 1 and its round trip, 0 on timeout. */
static int await_echo(int fd, uint64_t seq, uint64_t deadline, uint8_t *buf, uint64_t *rtt)
{
    for (;;) {
        uint64_t t = now_ns();
        if (t >= deadline) {
            return 0;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int k = poll(&pfd, 1, (int)((deadline - t + 999999) / 1000000));
        if (k < 0 && errno != EINTR) {
            return -errno;
        }
        if (k <= 0) {
            continue;
        }
        ssize_t n = recv(fd, buf, PP_MAX_SIZE, 0);
        uint64_t at = now_ns();
        uint64_t got, sent;
        if (n < PP_HDR) {
            continue; /* an ICMP error or a runt: not an answer */
        }
        memcpy(&got, buf, 8);
        memcpy(&sent, buf + 8, 8);
        if (got == seq) {
            *rtt = at - sent;
            return 1;
        }
        /* a late echo of an earlier datagram, already counted lost */
    }
}

static void print_json(const pp_opts *o, uint64_t *v, size_t n, uint64_t sent, uint64_t lost,
                       double seconds)
{
    static const struct {
        const char *name;
        double q;
    } pct[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}};
    printf("{\n  \"test\":\"udp_pingpong\",\n  \"server\":\"%s\",\n  \"size\":%u,\n"
           "  \"sent\":%" PRIu64 ",\n  \"lost\":%" PRIu64 ",\n  \"seconds\":%.6f",
           o->server, o->size, sent, lost, seconds);
    if (n) {
        qsort(v, n, sizeof(*v), cmp_u64);
        printf(",\n  \"latency_us\":{");
        for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
            size_t at = (size_t)(pct[k].q * (double)(n - 1) + 0.5);
            printf("\"%s\":%.3f, ", pct[k].name, (double)v[at] / 1e3);
        }
        printf("\"max\":%.3f, \"samples\":%zu}", (double)v[n - 1] / 1e3, n);
    }
    printf("\n}\n");
}

static int run_client(const pp_opts *o)
{
    struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)o->port)};
    uint8_t out[PP_MAX_SIZE] = {0}, in[PP_MAX_SIZE];
    uint64_t *lat = NULL, sent = 0, lost = 0;
    size_t n = 0;
    int fd = -1, rv = 0;
    if (inet_pton(AF_INET6, o->server, &to.sin6_addr) != 1) {
        fprintf(stderr, "bench_udp_pingpong: %s is not an IPv6 address\n", o->server);
        rv = -EINVAL;
        goto out;
    }
    lat = malloc(PP_MAX_SAMPLES * sizeof(*lat));
    if (!lat) {
        rv = -ENOMEM;
        goto out;
    }
    fd = open_socket(o->bind, 0);
    if (fd < 0) {
        rv = fd;
        goto out;
    }
    /* connected: ICMP errors and strangers' datagrams stay away from the samples */
    if (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
        rv = -errno;
        fprintf(stderr, "bench_udp_pingpong: connect %s: %s\n", o->server, strerror(errno));
        goto out;
    }
    uint64_t start = now_ns(), end = start + (uint64_t)(o->duration * 1e9);
    for (uint64_t seq = 1; now_ns() < end && n < PP_MAX_SAMPLES; seq++) {
        uint64_t t = now_ns(), rtt = 0;
        memcpy(out, &seq, 8);
        memcpy(out + 8, &t, 8);
        sent++;
        if (send(fd, out, o->size, 0) != (ssize_t)o->size) {
            lost++; /* e.g. ECONNREFUSED from an earlier ICMP error: try the next one */
            continue;
        }
        int k = await_echo(fd, seq, t + (uint64_t)o->timeout_ms * 1000000ull, in, &rtt);
        if (k < 0) {
            rv = k;
            fprintf(stderr, "bench_udp_pingpong: poll: %s\n", strerror(-k));
            goto out;
        }
        if (k == 0) {
            lost++;
            continue;
        }
        lat[n++] = rtt / 2;
    }
    print_json(o, lat, n, sent, lost, (double)(now_ns() - start) / 1e9);
    if (n == 0) {
        fprintf(stderr, "bench_udp_pingpong: no answer from %s\n", o->server);
        rv = -ETIMEDOUT;
    }
out:
    if (fd >= 0) {
        close(fd);
    }
    free(lat);
    return rv;
}

/* |s| as a number in [lo, hi] (a whole one if |whole|), or -1. */
static double number(const char *s, double lo, double hi, bool whole)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < lo || v > hi || (whole && v != (double)(uint64_t)v)) {
        return -1;
    }
    return v;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"bind", required_argument, NULL, 'b'},    {"port", required_argument, NULL, 'p'},
        {"size", required_argument, NULL, 's'},    {"duration", required_argument, NULL, 'd'},
        {"timeout", required_argument, NULL, 't'}, {"idle", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    pp_opts o = {.port = 7481, .size = 64, .timeout_ms = 100, .duration = 5, .idle = 60};
    if (argc < 2 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
        fputs(usage, stderr);
        return 2;
    }
    bool server = strcmp(argv[1], "server") == 0;
    int c, li = 0;
    optind = 2;
    while ((c = getopt_long(argc, argv, "", longopts, &li)) != -1) {
        double v = 0;
        switch (c) {
        case 'b':
            o.bind = optarg;
            break;
        case 'p':
            v = number(optarg, 1, 65535, true);
            o.port = (unsigned)v;
            break;
        case 's':
            v = number(optarg, PP_HDR, PP_MAX_SIZE, true);
            o.size = (unsigned)v;
            break;
        case 'd':
            v = number(optarg, 0.001, 86400, false);
            o.duration = v;
            break;
        case 't':
            v = number(optarg, 1, 60000, true);
            o.timeout_ms = (unsigned)v;
            break;
        case 'i':
            v = number(optarg, 0, 86400, false);
            o.idle = v;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
        if (v < 0) {
            fprintf(stderr, "bench_udp_pingpong: --%s %s: out of range\n", longopts[li].name,
                    optarg);
            return 2;
        }
    }
    if (server ? optind != argc : optind != argc - 1) {
        fputs(usage, stderr);
        return 2;
    }
    if (!server) {
        o.server = argv[optind];
    }
    int rv = server ? run_server(&o) : run_client(&o);
    return rv == 0 ? 0 : rv == -EINVAL ? 2 : 1;
}
