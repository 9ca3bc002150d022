/* SPDX-License-Identifier: MIT */
/* The tokens table's costs: load time and a request's authentication, against the linear table
 * it replaced (kept here alone, as the baseline). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static const char usage[] =
    "usage: bench_auth [--smoke]\n"
    "\n"
    "  Times loading a tokens file of 5, 65,541 and 262,144 tokens, and a request's\n"
    "  authentication (ns, p50 and p99) with 5 and with 262,144 tokens for a valid token, a\n"
    "  wrong one of the same length and a wrong one of 32 KiB; each beside the linear table\n"
    "  mrcfab had before (the baseline). --smoke: fewer lookups, and the baseline's slow cases\n"
    "  at smaller sizes.\n";

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- baseline: the table before issue 19, copied from lib/util/util_auth.c at 538a623 ---- */

typedef struct base_token {
    char *token;
    util_role role;
    char *name;
} base_token;

typedef struct base_auth {
    base_token *tokens;
    size_t n;
} base_auth;

static void base_free(base_auth *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->tokens[i].token);
        free(a->tokens[i].name);
    }
    free(a->tokens);
    a->tokens = NULL;
    a->n = 0;
}

/* |dupcheck| 0 skips the quadratic duplicate check (which the lookups do not depend on), so that
 * the baseline's lookups can be timed on 262,144 tokens without minutes of loading first. */
static int base_load(const char *path, base_auth *a, int dupcheck)
{
    char *data;
    size_t len;
    a->tokens = NULL;
    a->n = 0;
    int rv = util_read_file(path, &data, &len);
    if (rv != 0) {
        return rv;
    }
    char *cursor = data;
    for (char *l; (l = util_line_next(&cursor)) != NULL;) {
        char *f[4] = {0};
        unsigned nf = 0;
        char *s2 = NULL;
        for (char *w = strtok_r(l, " \t\r", &s2); w && nf < 4; w = strtok_r(NULL, " \t\r", &s2)) {
            f[nf++] = w;
        }
        if (nf == 0 || f[0][0] == '#') {
            continue;
        }
        util_role role = nf >= 2 ? util_role_parse(f[1]) : UTIL_ROLE_NONE;
        if (nf != 3 || role == UTIL_ROLE_NONE || strlen(f[0]) < 16) {
            rv = -EINVAL;
            break;
        }
        for (size_t i = 0; dupcheck && i < a->n; i++) {
            if (strcmp(a->tokens[i].token, f[0]) == 0) {
                rv = -EINVAL;
            }
        }
        if (rv != 0) {
            break;
        }
        a->tokens = util_xrealloc(a->tokens, (a->n + 1) * sizeof(*a->tokens));
        a->tokens[a->n++] =
            (base_token){.token = util_xstrdup(f[0]), .role = role, .name = util_xstrdup(f[2])};
    }
    free(data);
    if (rv != 0) {
        base_free(a);
    }
    return rv;
}

static int base_ct_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < la ? (unsigned char)a[i] : 0, y = i < lb ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

static const base_token *base_find(const base_auth *a, const char *bearer)
{
    const base_token *found = NULL;
    for (size_t i = 0; i < a->n; i++) {
        if (base_ct_equal(a->tokens[i].token, bearer)) {
            found = &a->tokens[i];
        }
    }
    return found;
}

/* ---- the bench ---- */

static char dir[] = "/tmp/bench_auth.XXXXXX";

/* Token i of every file: 40 characters, as `openssl rand -hex 20` makes. */
static void token_of(size_t i, char *dest)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15u + 0x1234567;
    snprintf(dest, 41, "%08zx%016llx%016llx", i, (unsigned long long)x,
             (unsigned long long)(x * 0xff51afd7ed558ccdu));
}

/* A tokens file of |n| agents, mode 0600; its path into |path|. */
static void write_file(size_t n, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "%s/tokens-%zu", dir, n);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "bench_auth: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    char tok[41];
    for (size_t i = 0; i < n; i++) {
        token_of(i, tok);
        fprintf(f, "%s agent h%zu\n", tok, i);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_auth: %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef enum kind { VALID, WRONG_SAME, WRONG_32K, NKINDS } kind;
static const char *const kind_name[] = {"valid", "wrong, same length", "wrong, 32 KiB"};

/* The bearer of lookup |i| of |kind| among |n| tokens into |buf| (32 KiB + 1). */
static const char *bearer_of(kind k, size_t i, size_t n, char *buf)
{
    if (k == WRONG_32K) {
        return buf; /* made once */
    }
    token_of((i * 7919) % n, buf);
    if (k == WRONG_SAME) {
        buf[39] = buf[39] == 'x' ? 'y' : 'x';
    }
    return buf;
}

/* p50 and p99 of |count| lookups, ns each, by the new table (|a|) or the baseline (|b|). */
static void time_lookups(const util_auth *a, const base_auth *b, size_t n, kind k, size_t count,
                         uint64_t *p50, uint64_t *p99)
{
    uint64_t *t = util_xcalloc(count, sizeof(*t));
    char *buf = util_xmalloc(32 * 1024 + 1);
    memset(buf, 'a', 32 * 1024);
    buf[32 * 1024] = '\0';
    size_t hits = 0;
    for (size_t i = 0; i < count; i++) {
        const char *bearer = bearer_of(k, i, n, buf);
        uint64_t t0 = now_ns();
        const void *found =
            a ? (const void *)util_auth_find(a, bearer) : (const void *)base_find(b, bearer);
        t[i] = now_ns() - t0;
        hits += found != NULL;
    }
    if (hits != (k == VALID ? count : 0)) {
        fprintf(stderr, "bench_auth: %zu of %zu %s lookups found a token\n", hits, count,
                kind_name[k]);
        exit(1);
    }
    qsort(t, count, sizeof(*t), cmp_u64);
    *p50 = t[count / 2];
    *p99 = t[count * 99 / 100];
    free(t);
    free(buf);
}

static void fmt_ns(uint64_t ns, char *dest, size_t destlen)
{
    if (ns >= 10000000) {
        snprintf(dest, destlen, "%.0f ms", (double)ns / 1e6);
    } else if (ns >= 10000) {
        snprintf(dest, destlen, "%.0f us", (double)ns / 1e3);
    } else {
        snprintf(dest, destlen, "%llu ns", (unsigned long long)ns);
    }
}

int main(int argc, char **argv)
{
    int smoke = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            smoke = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "bench_auth: unknown argument '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench_auth: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    static const size_t sizes[] = {5, 65541, 262144};
    /* the baseline's load is quadratic: 262,144 would take minutes, so it is not run */
    const size_t base_load_max = smoke ? 8192 : 65541;
    char path[3][512], err[512];
    util_auth a[3];
    printf("load (util_auth_load of a file of N tokens, ms)\n");
    printf("%-10s %12s %14s\n", "N", "new", "baseline");
    double base_ms_max = 0;
    size_t base_n_max = 0;
    if (smoke) {
        /* the base of the extrapolation below */
        char p[512];
        base_auth b;
        write_file(base_load_max, p, sizeof(p));
        uint64_t t0 = now_ns();
        if (base_load(p, &b, 1) != 0) {
            fprintf(stderr, "bench_auth: the baseline could not load %s\n", p);
            return 1;
        }
        base_ms_max = (double)(now_ns() - t0) / 1e6;
        base_n_max = base_load_max;
        printf("load %-8zu %12s %11.1f\n", base_load_max, "-", base_ms_max);
        base_free(&b);
        unlink(p);
    }
    for (int s = 0; s < 3; s++) {
        write_file(sizes[s], path[s], sizeof(path[s]));
        uint64_t t0 = now_ns();
        if (util_auth_load(path[s], &a[s], err, sizeof(err)) != 0) {
            fprintf(stderr, "bench_auth: %s\n", err);
            return 1;
        }
        double new_ms = (double)(now_ns() - t0) / 1e6;
        char base[64];
        if (sizes[s] <= base_load_max) {
            base_auth b;
            t0 = now_ns();
            if (base_load(path[s], &b, 1) != 0) {
                fprintf(stderr, "bench_auth: the baseline could not load %s\n", path[s]);
                return 1;
            }
            double ms = (double)(now_ns() - t0) / 1e6;
            if (sizes[s] > base_n_max) {
                base_ms_max = ms;
                base_n_max = sizes[s];
            }
            snprintf(base, sizeof(base), "%.1f", ms);
            base_free(&b);
        } else {
            double r = (double)sizes[s] / (double)base_n_max;
            snprintf(base, sizeof(base), "not run (n^2: ~%.0f s)", base_ms_max * r * r / 1e3);
        }
        printf("load %-8zu %9.1f ms %14s\n", sizes[s], new_ms, base);
    }

    printf("\nauthentication (one util_auth_find, ns; p50 / p99 over the lookups)\n");
    printf("%-8s %-7s %-20s %10s %10s %8s\n", "table", "tokens", "bearer", "p50", "p99", "lookups");
    size_t at[2] = {0, 2};
    for (int ai = 0; ai < 2; ai++) {
        size_t n = sizes[at[ai]];
        base_auth b;
        if (base_load(path[at[ai]], &b, 0) != 0) {
            fprintf(stderr, "bench_auth: the baseline could not load %s\n", path[at[ai]]);
            return 1;
        }
        for (int k = 0; k < NKINDS; k++) {
            for (int impl = 0; impl < 2; impl++) {
                size_t count = smoke ? 20000 : 200000;
                if (impl == 1) {
                    /* the baseline's lookup is linear in the tokens (and in the bearer's
                     * length): fewer of them at 262,144 */
                    count = n < 100 ? count : (k == WRONG_32K ? 2 : (smoke ? 10 : 200));
                }
                if (impl == 1 && smoke && k == WRONG_32K && n > 100) {
                    /* 20 s a lookup: not at the smoke size */
                    printf("auth %-8s %-7zu %-20s %10s\n", "baseline", n, kind_name[k],
                           "not run (smoke)");
                    continue;
                }
                uint64_t p50, p99;
                time_lookups(impl == 0 ? &a[at[ai]] : NULL, &b, n, (kind)k, count, &p50, &p99);
                char s50[32], s99[32];
                fmt_ns(p50, s50, sizeof(s50));
                fmt_ns(p99, s99, sizeof(s99));
                printf("auth %-8s %-7zu %-20s %10s %10s %8zu\n", impl == 0 ? "new" : "baseline", n,
                       kind_name[k], s50, s99, count);
                fflush(stdout);
            }
        }
        base_free(&b);
    }
    for (int s = 0; s < 3; s++) {
        util_auth_free(&a[s]);
        unlink(path[s]);
    }
    rmdir(dir);
    return 0;
}
