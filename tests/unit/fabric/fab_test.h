/* SPDX-License-Identifier: MIT */
/* Shared helpers of the libmrcfab unit tests: loading, in-memory sinks and a seeded PRNG. */
#ifndef FAB_TEST_H
#define FAB_TEST_H

#include <check.h>
#include <stdint.h>

#include <mrcfab/fabric.h>

/* FAB_TEST_DATA (tests/unit/fabric/data) and FAB_TEST_ROOT (the repository) come from CMake. */
#define FAB_TEST_LAB FAB_TEST_ROOT "/deploy/topologies/lab.json"
#define FAB_TEST_FULL FAB_TEST_ROOT "/deploy/topologies/full.json"
/* A parametric fabric with every kind of override: missing cables, pinned uSIDs, naming. */
#define FAB_TEST_SMALL FAB_TEST_DATA "/small.json"

/*
 * ck_assert_msg() without its per-call mark point (a write to Check's pipe): for assertions
 * inside loops that run millions of times.
 */
#define FAB_REQUIRE(expr, ...)                                                                     \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)

/* A growing, NUL-terminated text buffer that is also a fab_sink_fn target. */
typedef struct fab_test_buf {
    char *data;
    size_t len, cap;
} fab_test_buf;

int fab_test_buf_sink(void *user, const char *data, size_t datalen);
void fab_test_buf_free(fab_test_buf *buf);

/* Loads |path| or fails the test with the loader's error. */
fab_topo *fab_test_load_file(const char *path);
/* Loads the NUL-terminated JSON text |json|; the result of fab_topo_load(). */
int fab_test_load_str(const char *json, fab_topo **ptopo, fab_error *perr);
/* Loads |json| or fails the test with the loader's error. */
fab_topo *fab_test_load_json(const char *json);
/* The explicit form of |topo| as a NUL-terminated string the caller frees. */
char *fab_test_expand(const fab_topo *topo);
/* The tables of |topo| or a failed test. */
fab_tables *fab_test_tables(const fab_topo *topo);
/* The id of the switch called |name|, or a failed test. */
uint32_t fab_test_switch(const fab_topo *topo, const char *name);
/* The uSID of switch |sw|. */
uint16_t fab_test_usid(const fab_topo *topo, uint32_t sw);
/* The port of switch |sw| cabled to switch |peer|, or -1 when they share no cable. */
int fab_test_port_to(const fab_topo *topo, uint32_t sw, uint32_t peer);

/* xorshift64*: a small PRNG with a fixed seed, so every run walks the same cases. */
uint64_t fab_test_rand(uint64_t *state);
/* Uniform in [0, n), n > 0. */
uint32_t fab_test_rand_below(uint64_t *state, uint32_t n);

/* Seconds on the monotonic clock. */
double fab_test_now(void);

Suite *fab_plan_suite(void);
Suite *fab_load_suite(void);
Suite *fab_tables_suite(void);
Suite *fab_path_suite(void);
Suite *fab_walk_suite(void);

#endif
