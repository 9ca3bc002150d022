/* SPDX-License-Identifier: MIT */
/* bench_ctl_health: the fabric-wide health reads on a live mrc-controller. It seeds the
 * controller as the localizers do (every plane's coverage, lossy results on --lossy links
 * per plane, a verdict for each), then times, over --rounds requests each: a plane's matrix
 * (GET /api/v1/health/matrix?plane=P, every T0 x T1 direction) answered in full and answered
 * 304 to its own ETag, the summary and the first page of the problem list. Prints one JSON
 * line with p50, p99 and max of each and the matrix's size beside the targets (a matrix in
 * 50 ms or less, well under 1 MiB); exits 0 when every request was answered, 1 otherwise, 2
 * on bad arguments. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ctl_http.h"

static const char usage[] = "usage: bench_ctl_health --port PORT --tokens FILE [options]\n"
                            "  --ip ADDR      the controller's address (127.0.0.1)\n"
                            "  --planes N     planes seeded and read (8)\n"
                            "  --t0 N         T0s per plane (512), --t1 N T1s per plane (256)\n"
                            "  --lossy N      lossy links seeded per plane (64)\n"
                            "  --rounds N     requests timed per figure (50)\n";

typedef struct series {
    double *ms;
    unsigned n;
} series;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(series *s, double p)
{
    if (!s->n) {
        return -1;
    }
    qsort(s->ms, s->n, sizeof(double), cmp);
    unsigned i = (unsigned)(p * (s->n - 1) + 0.5);
    return s->ms[i];
}

typedef struct bench {
    const char *ip;
    unsigned port;
    char *reader, *localizer;
    unsigned failures;
} bench;

/* One request; its status and body (the caller frees), and its time in ms. */
static int once(bench *b, const char *method, const char *target, const char *token,
                const char *extra, const char *body, int *pstatus, char **pbody, double *pms)
{
    char head[1024];
    size_t bl = body ? strlen(body) : 0;
    int n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer %s\r\n%s"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\nConnection: close"
                     "\r\n\r\n",
                     method, target, token, extra ? extra : "", bl);
    char *req = malloc((size_t)n + bl + 1);
    memcpy(req, head, (size_t)n);
    if (body) {
        memcpy(req + n, body, bl);
    }
    uint64_t t0 = bench_now_ns();
    int rv = bench_http_once(b->ip, b->port, req, (size_t)n + bl, 30000, pstatus, pbody);
    *pms = (double)(bench_now_ns() - t0) / 1e6;
    free(req);
    return rv;
}

static void post(bench *b, const char *body)
{
    int status;
    char *ans = NULL;
    double ms;
    if (once(b, "POST", "/api/v1/probes", b->localizer, NULL, body, &status, &ans, &ms) != 0 ||
        status != 202) {
        fprintf(stderr, "bench_ctl_health: the seed was refused (%d): %.200s\n", status,
                ans ? ans : "");
        b->failures++;
    }
    free(ans);
}

/* The "version" member of a JSON body into |dest| (the matrix's ETag), "" when absent. */
static void version_of(const char *body, char *dest, size_t len)
{
    const char *k = body ? strstr(body, "\"version\":\"") : NULL;
    dest[0] = '\0';
    if (!k) {
        return;
    }
    k += 11;
    size_t i = 0;
    while (k[0] && !(k[0] == '"' && k[-1] != '\\') && i + 1 < len) {
        dest[i++] = *k++;
    }
    dest[i] = '\0';
    /* the ETag is the version as sent: a JSON string's escaped quotes are its own */
    char *w = dest;
    for (char *r = dest; *r; r++) {
        if (!(r[0] == '\\' && r[1] == '"')) {
            *w++ = *r;
        }
    }
    *w = '\0';
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ip", required_argument, NULL, 'i'},     {"port", required_argument, NULL, 'p'},
        {"tokens", required_argument, NULL, 't'}, {"planes", required_argument, NULL, 'P'},
        {"t0", required_argument, NULL, 'a'},     {"t1", required_argument, NULL, 'j'},
        {"lossy", required_argument, NULL, 'l'},  {"rounds", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    bench b = {.ip = "127.0.0.1"};
    const char *tokens = NULL;
    unsigned planes = 8, nt0 = 512, nt1 = 256, lossy = 64, rounds = 50;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        unsigned long v = optarg ? strtoul(optarg, NULL, 10) : 0;
        switch (c) {
        case 'i':
            b.ip = optarg;
            break;
        case 'p':
            b.port = (unsigned)v;
            break;
        case 't':
            tokens = optarg;
            break;
        case 'P':
            planes = (unsigned)v;
            break;
        case 'a':
            nt0 = (unsigned)v;
            break;
        case 'j':
            nt1 = (unsigned)v;
            break;
        case 'l':
            lossy = (unsigned)v;
            break;
        case 'r':
            rounds = (unsigned)v;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    char *tok[1];
    if (!b.port || !tokens || !planes || !nt0 || !nt1 || !rounds || planes > 16) {
        fputs(usage, stderr);
        return 2;
    }
    if (bench_tokens(tokens, "reader", tok, 1) != 1) {
        fprintf(stderr, "bench_ctl_health: no reader token in %s\n", tokens);
        return 2;
    }
    b.reader = tok[0];
    if (bench_tokens(tokens, "localizer", tok, 1) != 1) {
        fprintf(stderr,
                "bench_ctl_health: no localizer token in %s (the evidence is its to post)\n",
                tokens);
        return 2;
    }
    b.localizer = tok[0];

    /* the seed: every plane's coverage, then its lossy links, each with a verdict */
    size_t cap = 1u << 20;
    char *body = malloc(cap);
    for (unsigned p = 0; p < planes; p++) {
        size_t n = (size_t)snprintf(body, cap,
                                    "{\"coverage\":[{\"plane\":%u,\"nic\":1408,\"uplink\":1280,"
                                    "\"hosts\":%u}],\"results\":[",
                                    p, nt0 * 256);
        for (unsigned k = 0; k < lossy; k++) {
            unsigned a = (k * 97 + p * 13) % nt0, j = (k * 31 + p * 7) % nt1;
            n += (size_t)snprintf(body + n, cap - n,
                                  "%s{\"element\":\"p%u-t0-%u~p%u-t1-%u\",\"scope\":\"up\","
                                  "\"sent\":1280,\"lost\":%u}",
                                  k ? "," : "", p, a, p, j, 13 + k % 50);
        }
        n += (size_t)snprintf(body + n, cap - n, "]}");
        post(&b, body);
    }
    size_t n = (size_t)snprintf(body, cap, "{\"verdicts\":[");
    for (unsigned p = 0; p < planes; p++) {
        for (unsigned k = 0; k < lossy; k++) {
            unsigned a = (k * 97 + p * 13) % nt0, j = (k * 31 + p * 7) % nt1;
            n += (size_t)snprintf(body + n, cap - n,
                                  "%s{\"component\":\"p%u U t0=%u t1=%u\",\"kind\":\"link\","
                                  "\"elements\":[{\"element\":\"p%u-t0-%u~p%u-t1-%u\",\"scope\":"
                                  "\"up\"}],\"loss\":0.02,\"state\":\"denied\"}",
                                  p || k ? "," : "", p, a, j, p, a, p, j);
        }
    }
    snprintf(body + n, cap - n, "]}");
    post(&b, body);
    free(body);

    series full = {calloc(rounds * planes, sizeof(double)), 0},
           nm = {calloc(rounds * planes, sizeof(double)), 0},
           sum = {calloc(rounds, sizeof(double)), 0}, prob = {calloc(rounds, sizeof(double)), 0};
    size_t size = 0;
    double first = -1;
    for (unsigned p = 0; p < planes; p++) {
        char target[128], etag[96] = "", extra[160];
        snprintf(target, sizeof(target), "/api/v1/health/matrix?plane=%u", p);
        for (unsigned r = 0; r < rounds; r++) {
            int status;
            char *ans = NULL;
            double ms;
            if (once(&b, "GET", target, b.reader, NULL, NULL, &status, &ans, &ms) != 0 ||
                status != 200) {
                b.failures++;
            } else {
                full.ms[full.n++] = ms;
                size = strlen(ans);
                version_of(ans, etag, sizeof(etag));
                first = first < 0 ? ms : first;
            }
            free(ans);
            ans = NULL;
            snprintf(extra, sizeof(extra), "If-None-Match: %s\r\n", etag);
            if (once(&b, "GET", target, b.reader, extra, NULL, &status, &ans, &ms) != 0 ||
                status != 304) {
                b.failures++;
            } else {
                nm.ms[nm.n++] = ms;
            }
            free(ans);
        }
    }
    for (unsigned r = 0; r < rounds; r++) {
        int status;
        char *ans = NULL;
        double ms;
        if (once(&b, "GET", "/api/v1/health/summary", b.reader, NULL, NULL, &status, &ans, &ms) !=
                0 ||
            status != 200) {
            b.failures++;
        } else {
            sum.ms[sum.n++] = ms;
        }
        free(ans);
        ans = NULL;
        if (once(&b, "GET", "/api/v1/health/problems?limit=100", b.reader, NULL, NULL, &status,
                 &ans, &ms) != 0 ||
            status != 200) {
            b.failures++;
        } else {
            prob.ms[prob.n++] = ms;
        }
        free(ans);
    }
    printf("{\"planes\": %u, \"t0\": %u, \"t1\": %u, \"lossy_per_plane\": %u, \"rounds\": %u, "
           "\"matrix_first_ms\": %.2f, \"matrix_p50_ms\": %.2f, \"matrix_p99_ms\": %.2f, "
           "\"matrix_max_ms\": %.2f, \"matrix_bytes\": %zu, \"matrix_304_p50_ms\": %.2f, "
           "\"matrix_304_p99_ms\": %.2f, \"summary_p50_ms\": %.2f, \"summary_p99_ms\": %.2f, "
           "\"problems_p50_ms\": %.2f, \"problems_p99_ms\": %.2f, \"target_matrix_ms\": 50, "
           "\"target_matrix_bytes\": 1048576, \"failures\": %u}\n",
           planes, nt0, nt1, lossy, rounds, first, pct(&full, 0.5), pct(&full, 0.99),
           pct(&full, 1.0), size, pct(&nm, 0.5), pct(&nm, 0.99), pct(&sum, 0.5), pct(&sum, 0.99),
           pct(&prob, 0.5), pct(&prob, 0.99), b.failures);
    free(full.ms);
    free(nm.ms);
    free(sum.ms);
    free(prob.ms);
    free(b.reader);
    free(b.localizer);
    return b.failures ? 1 : 0;
}
