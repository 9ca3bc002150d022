/* SPDX-License-Identifier: MIT */
/* The ring all-reduce's arithmetic, without an engine: the chunks of every vector size over
 * 2..128 ranks (whole elements, tiling it, as even as they go), the refusals, the step
 * schedule run in memory until every rank holds the sum, the "last iteration" mark reaching
 * every rank within its iteration, and the tally every rank's printed result comes from. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_ring.h"

/* Check writes down where every ck_assert passes: the loops below over millions of cases
 * test with if and call ck_abort_msg only on a fault. */
#define check_that(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)

/* Vector sizes for |n| ranks: the fewest elements, one more, n-1 over a multiple, odd and
 * prime counts, the default 4 MiB and its neighbours, the largest. */
static size_t sizes_for(unsigned n, uint64_t *v)
{
    size_t k = 0;
    v[k++] = 4ull * n;
    v[k++] = 4ull * n + 4;
    v[k++] = 4ull * (2 * n - 1);
    v[k++] = 4ull * (7 * n + n - 1);
    v[k++] = 4ull * 1001;
    v[k++] = 4ull * 999983;
    v[k++] = 4ull << 20;
    v[k++] = (4ull << 20) + 4;
    v[k++] = (4ull << 20) - 4;
    v[k++] = AGENT_RING_MAX_SIZE;
    return k;
}

START_TEST(test_agent_ring_chunks_tile)
{
    uint64_t sizes[16];
    for (unsigned n = 2; n <= AGENT_RING_MAX_RANKS; n++) {
        size_t ns = sizes_for(n, sizes);
        for (size_t k = 0; k < ns; k++) {
            uint64_t size = sizes[k], at = 0, lo = UINT64_MAX, hi = 0, off, len, len0;
            if (size < 4ull * n) {
                continue; /* 1001 elements for more than 1001 ranks: not a ring */
            }
            agent_ring_chunk(size, n, 0, &off, &len0);
            for (unsigned c = 0; c < n; c++) {
                agent_ring_chunk(size, n, c, &off, &len);
                check_that(off == at, "n %u size %llu chunk %u at %llu, want %llu", n,
                           (unsigned long long)size, c, (unsigned long long)off,
                           (unsigned long long)at);
                check_that(off % 4 == 0 && len % 4 == 0 && len >= 4,
                           "n %u size %llu chunk %u: %llu bytes at %llu", n,
                           (unsigned long long)size, c, (unsigned long long)len,
                           (unsigned long long)off);
                /* chunk 0 is a longest: the staging slot */
                check_that(len <= len0, "n %u size %llu: chunk %u longer than chunk 0", n,
                           (unsigned long long)size, c);
                lo = len < lo ? len : lo;
                hi = len > hi ? len : hi;
                at += len;
            }
            check_that(at == size, "n %u: chunks cover %llu of %llu bytes", n,
                       (unsigned long long)at, (unsigned long long)size);
            check_that(hi - lo <= 4, "n %u size %llu: chunks of %llu to %llu bytes", n,
                       (unsigned long long)size, (unsigned long long)lo, (unsigned long long)hi);
            check_that(len0 == 4 * ((size / 4 + n - 1) / n), "n %u size %llu: chunk 0 of %llu", n,
                       (unsigned long long)size, (unsigned long long)len0);
        }
    }
}
END_TEST

START_TEST(test_agent_ring_cfg_check)
{
    char err[256];
    /* the default, 4 MiB, for every rank count, at every rank */
    for (unsigned n = 2; n <= AGENT_RING_MAX_RANKS; n++) {
        for (unsigned r = 0; r < n; r++) {
            agent_ring_cfg cfg = {.rank = r, .n = n, .size = 4u << 20};
            check_that(agent_ring_cfg_check(&cfg, err, sizeof(err)) == 0, "n %u: %s", n, err);
        }
        agent_ring_cfg least = {.rank = 0, .n = n, .size = 4ull * n};
        check_that(agent_ring_cfg_check(&least, err, sizeof(err)) == 0, "n %u: %s", n, err);
    }
    static const agent_ring_cfg bad[] = {
        {.rank = 0, .n = 1, .size = 4096},
        {.rank = 0, .n = AGENT_RING_MAX_RANKS + 1, .size = 4u << 20},
        {.rank = 3, .n = 3, .size = 4u << 20},
        {.rank = 0, .n = 3, .size = (4u << 20) + 1},
        {.rank = 0, .n = 3, .size = 1002},
        {.rank = 0, .n = 8, .size = 28},
        {.rank = 0, .n = 2, .size = 0},
        {.rank = 0, .n = 2, .size = AGENT_RING_MAX_SIZE + 4},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        err[0] = '\0';
        ck_assert_msg(agent_ring_cfg_check(&bad[k], err, sizeof(err)) == -EINVAL,
                      "ranks %u rank %u size %llu taken", bad[k].n, bad[k].rank,
                      (unsigned long long)bad[k].size);
        ck_assert_msg(strlen(err) > 10, "no sentence for case %zu", k);
    }
    agent_ring_cfg odd = {.rank = 0, .n = 3, .size = 1002};
    agent_ring_cfg_check(&odd, err, sizeof(err));
    ck_assert_msg(strstr(err, "1002") && strstr(err, "multiple of 4"), "%s", err);
}
END_TEST

/* The agent's schedule in lockstep over n ranks of |elems| float32s: at step s every rank
 * writes its send chunk to the next rank's staging, then adds (reduce-scatter) or copies
 * (all-gather) what it received. Every rank must end with the sum, exactly. */
static void run_schedule(unsigned n, uint64_t elems)
{
    uint64_t size = 4 * elems, slot, off, len;
    unsigned steps = 2 * (n - 1);
    float *v = malloc(sizeof(float) * n * elems);
    agent_ring_chunk(size, n, 0, &off, &slot);
    float *staging = malloc(n * slot);
    uint64_t *staged = calloc(n, sizeof(uint64_t));
    check_that(v && staging && staged, "out of memory");
    for (unsigned r = 0; r < n; r++) {
        for (uint64_t j = 0; j < elems; j++) {
            v[r * elems + j] = (float)((r + 1) * (j % 13 + 1));
        }
    }
    for (unsigned s = 0; s < steps; s++) {
        for (unsigned r = 0; r < n; r++) {
            unsigned c = agent_ring_send_chunk(r, n, s), to = (r + 1) % n;
            check_that(c < n, "n %u rank %u step %u: chunk %u", n, r, s, c);
            /* a rank passes on the chunk it has just finished */
            check_that(s + 1 == steps ||
                           agent_ring_send_chunk(r, n, s + 1) == agent_ring_recv_chunk(r, n, s),
                       "n %u rank %u: step %u sends another chunk than step %u finished", n, r,
                       s + 1, s);
            agent_ring_chunk(size, n, c, &off, &len);
            memcpy(staging + (uint64_t)to * slot / 4, v + r * elems + off / 4, len);
            staged[to] = c;
        }
        for (unsigned r = 0; r < n; r++) {
            unsigned c = agent_ring_recv_chunk(r, n, s);
            check_that(c == staged[r], "n %u rank %u step %u: receives chunk %u, sent %llu", n, r,
                       s, c, (unsigned long long)staged[r]);
            agent_ring_chunk(size, n, c, &off, &len);
            float *out = v + r * elems + off / 4;
            const float *in = staging + (uint64_t)r * slot / 4;
            for (uint64_t j = 0; j < len / 4; j++) {
                out[j] = s < n - 1 ? out[j] + in[j] : in[j];
            }
        }
    }
    uint64_t bad = 0;
    for (unsigned r = 0; r < n; r++) {
        for (uint64_t j = 0; j < elems; j++) {
            bad += v[r * elems + j] != (float)((uint64_t)n * (n + 1) / 2 * (j % 13 + 1));
        }
    }
    check_that(bad == 0, "%u ranks of %llu elements: %llu wrong", n, (unsigned long long)elems,
               (unsigned long long)bad);
    free(staged);
    free(staging);
    free(v);
}

START_TEST(test_agent_ring_schedule_sums)
{
    for (unsigned n = 2; n <= AGENT_RING_MAX_RANKS; n++) {
        run_schedule(n, n);
        run_schedule(n, n + 1);
        run_schedule(n, 2 * n - 1);
        run_schedule(n, 1001 > n ? 1001 : n + 3);
    }
    /* the default vector on the rank counts that did not divide it */
    static const unsigned odd[] = {3, 5, 6, 7};
    for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
        run_schedule(odd[k], (4u << 20) / 4);
    }
}
END_TEST

/* Whether every rank knows of a mark that rank |o| puts on its writes from step |s0| on, by
 * the end of the iteration: a rank passes it on in every write after it received it. */
static bool mark_reaches_all(unsigned n, unsigned o, unsigned s0)
{
    bool know[AGENT_RING_MAX_RANKS] = {false}, sent[AGENT_RING_MAX_RANKS];
    for (unsigned s = 0; s < 2 * (n - 1); s++) {
        know[o] = know[o] || s >= s0;
        for (unsigned r = 0; r < n; r++) {
            sent[r] = know[r];
        }
        for (unsigned r = 0; r < n; r++) {
            know[(r + 1) % n] = know[(r + 1) % n] || sent[r];
        }
    }
    for (unsigned r = 0; r < n; r++) {
        if (!know[r]) {
            return false;
        }
    }
    return true;
}

START_TEST(test_agent_ring_mark_reaches_every_rank)
{
    for (unsigned n = 2; n <= AGENT_RING_MAX_RANKS; n++) {
        unsigned steps = 2 * (n - 1), origins[] = {0, n / 2, n - 1};
        ck_assert(agent_ring_can_mark(n, 0)); /* a rank can always mark the next iteration */
        for (unsigned s = 0; s < steps; s++) {
            /* the ring is symmetric: the origins of a mark need not all be tried, and the
             * steps only around the bound */
            if (s > 1 && s + 1 < n) {
                continue;
            }
            for (size_t k = 0; k < sizeof(origins) / sizeof(origins[0]); k++) {
                if (agent_ring_can_mark(n, s)) {
                    check_that(mark_reaches_all(n, origins[k], s),
                               "n %u: a mark from rank %u at step %u misses a rank", n, origins[k],
                               s);
                } else {
                    /* and the rule is tight: a later mark misses a rank */
                    check_that(!mark_reaches_all(n, origins[k], s),
                               "n %u: step %u refused though a mark there reaches all", n, s);
                }
            }
        }
        ck_assert(!agent_ring_can_mark(n, n)); /* for n = 2 the loop has no step past it */
    }
}
END_TEST

static json_object *result(unsigned rank, unsigned n, uint64_t iters, uint64_t ns, uint64_t bad)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "rank", json_object_new_uint64(rank));
    json_object_object_add(o, "ranks", json_object_new_uint64(n));
    json_object_object_add(o, "size", json_object_new_uint64(4u << 20));
    json_object_object_add(o, "iterations", json_object_new_uint64(iters));
    json_object_object_add(o, "elapsed_ns", json_object_new_uint64(ns));
    json_object_object_add(o, "elements_checked", json_object_new_uint64(iters << 20));
    json_object_object_add(o, "elements_bad", json_object_new_uint64(bad));
    json_object_object_add(o, "out_of_order", json_object_new_uint64(0));
    json_object_object_add(o, "errors", json_object_new_uint64(0));
    json_object_object_add(o, "retx_pkts", json_object_new_uint64(rank));
    json_object_object_add(o, "qp_error", json_object_new_boolean(0));
    json_object_object_add(o, "stalled", json_object_new_boolean(0));
    return o;
}

/* The tally around the ring as mrc-perf passes it, through JSON text at every hop. */
static json_object *around(json_object **res, unsigned n)
{
    json_object *t = NULL;
    for (unsigned r = 0; r < n; r++) {
        json_object *next = agent_ring_tally(t, res[r]);
        json_object_put(t);
        t = json_tokener_parse(json_object_to_json_string(next));
        json_object_put(next);
    }
    return t;
}

/* The summary rank |r| prints, without its own parts, as text. */
static char *shared_part(json_object *tally, unsigned r, json_object *local)
{
    json_object *s = agent_ring_summary(tally, r, json_object_get(local));
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "rank")), r);
    ck_assert_ptr_eq(json_object_object_get(s, "local"), local);
    json_object_object_del(s, "rank");
    json_object_object_del(s, "local");
    char *text = strdup(json_object_to_json_string(s));
    json_object_put(s);
    return text;
}

START_TEST(test_agent_ring_summary_same_on_every_rank)
{
    enum { N = 7 };
    json_object *res[N];
    for (unsigned r = 0; r < N; r++) {
        res[r] = result(r, N, 12, 2000000000ull + 1000003ull * r, 0);
    }
    json_object *full = around(res, N);
    /* rank 0 has the tally from the lap, the others from rank 0's text of it */
    json_object *sent = json_tokener_parse(json_object_to_json_string(full));
    char *first = shared_part(full, 0, res[0]);
    for (unsigned r = 1; r < N; r++) {
        char *mine = shared_part(sent, r, res[r]);
        ck_assert_str_eq(mine, first);
        free(mine);
    }
    json_object *s = agent_ring_summary(full, 3, json_object_get(res[3]));
    double secs = json_object_get_double(json_object_object_get(s, "seconds"));
    double algbw = json_object_get_double(json_object_object_get(s, "algbw_gbps"));
    double busbw = json_object_get_double(json_object_object_get(s, "busbw_gbps"));
    ck_assert_double_eq(secs, (2000000000ull + 1000003ull * (N - 1)) / 1e9); /* the slowest */
    ck_assert_double_eq_tol(algbw, 12.0 * (4 << 20) * 8 / secs / 1e9, 1e-12);
    ck_assert_double_eq_tol(busbw, algbw * 2 * (N - 1) / N, 1e-12);
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "iterations")), 12);
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "elements_checked")),
                      (uint64_t)N * 12 << 20);
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "retx_pkts")),
                      N * (N - 1) / 2);
    ck_assert(json_object_get_boolean(json_object_object_get(s, "agreed")));
    ck_assert(!agent_ring_failed(s));
    json_object_put(s);
    free(first);
    json_object_put(sent);
    json_object_put(full);
    for (unsigned r = 0; r < N; r++) {
        json_object_put(res[r]);
    }
}
END_TEST

START_TEST(test_agent_ring_summary_failures)
{
    enum { N = 3 };
    json_object *res[N], *t, *s;
    /* one rank's wrong element fails every rank */
    for (unsigned r = 0; r < N; r++) {
        res[r] = result(r, N, 5, 1000000000, r == 2);
    }
    ck_assert(agent_ring_failed(res[2]) && !agent_ring_failed(res[0]));
    t = around(res, N);
    s = agent_ring_summary(t, 0, NULL);
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "ranks_failed")), 1);
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "elements_bad")), 1);
    ck_assert(agent_ring_failed(s));
    json_object_put(s);
    json_object_put(t);
    /* ranks that counted different iterations did not agree */
    json_object_object_add(res[2], "elements_bad", json_object_new_uint64(0));
    json_object_object_add(res[1], "iterations", json_object_new_uint64(4));
    t = around(res, N);
    s = agent_ring_summary(t, 0, NULL);
    ck_assert(!json_object_get_boolean(json_object_object_get(s, "agreed")));
    ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(s, "iterations")), 4);
    ck_assert(agent_ring_failed(s));
    json_object_put(s);
    json_object_put(t);
    /* a tally that missed a rank did not agree either */
    json_object_object_add(res[1], "iterations", json_object_new_uint64(5));
    t = around(res, N - 1);
    s = agent_ring_summary(t, 0, NULL);
    ck_assert(agent_ring_failed(s));
    json_object_put(s);
    json_object_put(t);
    /* nor one of ranks of another ring */
    json_object_object_add(res[1], "ranks", json_object_new_uint64(4));
    t = around(res, N);
    s = agent_ring_summary(t, 0, NULL);
    ck_assert(agent_ring_failed(s));
    json_object_put(s);
    json_object_put(t);
    /* a stalled rank fails the ring */
    json_object_object_add(res[1], "ranks", json_object_new_uint64(N));
    json_object_object_add(res[1], "stalled", json_object_new_boolean(1));
    t = around(res, N);
    s = agent_ring_summary(t, 0, NULL);
    ck_assert(json_object_get_boolean(json_object_object_get(s, "stalled")));
    ck_assert(agent_ring_failed(s));
    json_object_put(s);
    json_object_put(t);
    for (unsigned r = 0; r < N; r++) {
        json_object_put(res[r]);
    }
}
END_TEST

Suite *agent_ring_suite(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("ring");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_agent_ring_chunks_tile);
    tcase_add_test(tc, test_agent_ring_cfg_check);
    tcase_add_test(tc, test_agent_ring_schedule_sums);
    tcase_add_test(tc, test_agent_ring_mark_reaches_every_rank);
    tcase_add_test(tc, test_agent_ring_summary_same_on_every_rank);
    tcase_add_test(tc, test_agent_ring_summary_failures);
    suite_add_tcase(s, tc);
    return s;
}
