/* SPDX-License-Identifier: MIT */
/* Shared helpers of the libmrc unit tests: a seeded PRNG, a clock, and the wire vectors. */
#ifndef MRC_TEST_H
#define MRC_TEST_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "mrc_wire.h"

/*
 * ck_assert_msg() without its per-call mark point (a write to Check's pipe): for assertions
 * inside loops that run millions of times.
 */
#define MRC_REQUIRE(expr, ...)                                                                     \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)

/*
 * The CRC implementations one by one, as lib/mrc/mrc_crc.c defines them (kept in step by hand:
 * the crc suite fails if an implementation number stops answering).
 */
#define MRC_CRC_IMPL_BYTEWISE 1
#define MRC_CRC_IMPL_SLICE 2
#define MRC_CRC_IMPL_PCLMUL 3
int mrc_crc32_impl(unsigned impl, uint32_t *pcrc, const uint8_t *data, size_t len);

/* xorshift64*: a small PRNG with a fixed seed, so every run walks the same cases. */
uint64_t mrc_test_rand(uint64_t *state);
/* Uniform in [0, n), n > 0. */
uint32_t mrc_test_rand_below(uint64_t *state, uint32_t n);
/* Fills |buf| with PRNG bytes. */
void mrc_test_rand_fill(uint64_t *state, uint8_t *buf, size_t len);

/* Seconds on the monotonic clock. */
double mrc_test_now(void);

/* A vector of tests/vectors (MRC_TEST_VECTORS comes from CMake): its fields and bytes. */
#define MRC_TEST_VEC_MAX 8192
#define MRC_TEST_VEC_FIELDS 128
typedef struct mrc_test_field {
    char name[48];
    char value[512];
} mrc_test_field;

typedef struct mrc_test_vec {
    char name[64];
    uint8_t data[MRC_TEST_VEC_MAX];
    size_t len;
    size_t nfields;
    mrc_test_field fields[MRC_TEST_VEC_FIELDS];
} mrc_test_vec;

/* Loads tests/vectors/|name|.hex or fails the test; the caller frees the result. */
mrc_test_vec *mrc_test_vec_load(const char *name);
void mrc_test_vec_free(mrc_test_vec *vec);
/* The value text of field |name|, or NULL when the vector does not list it. */
const char *mrc_test_vec_get(const mrc_test_vec *vec, const char *name);
/* The names of every .hex file in tests/vectors, sorted, at most |max|; returns the count. */
size_t mrc_test_vec_names(char (*names)[64], size_t max);

Suite *mrc_wire_suite(void);
Suite *mrc_crc_suite(void);

#endif
