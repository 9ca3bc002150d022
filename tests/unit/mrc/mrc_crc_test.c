/* SPDX-License-Identifier: MIT */
/* Unit tests of CRC-32 and the ICRC: check value, every implementation alike, known packets. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

static const unsigned impls[] = {MRC_CRC_IMPL_BYTEWISE, MRC_CRC_IMPL_SLICE, MRC_CRC_IMPL_PCLMUL};
static const char *const impl_names[] = {"bytewise", "slice-by-8", "pclmul"};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* The definition, one bit at a time: the reference the table and folding code must match. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = crc >> 1 ^ (0xedb88320u & (0u - (crc & 1)));
        }
    }
    return crc;
}

static bool have_impl(unsigned impl)
{
    uint32_t crc = 0;
    return mrc_crc32_impl(impl, &crc, NULL, 0) == 0;
}

/*
 * The ICRC from its definition (IBTA, RoCEv2 annex; Linux rxe): CRC-32 with the register at all
 * ones, over eight 0xff bytes standing for the masked LRH, then the packet with its variant
 * fields set to ones (|mask| lists them), complemented.
 */
static uint32_t icrc_reference(const uint8_t *pkt, size_t len, const size_t *mask, size_t nmask)
{
    static const uint8_t lrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static uint8_t copy[70000];
    ck_assert_uint_le(len, sizeof(copy));
    memcpy(copy, pkt, len);
    for (size_t i = 0; i < nmask; i++) {
        copy[mask[i]] = 0xff;
    }
    uint32_t crc = crc_bitwise(0xffffffffu, lrh, sizeof(lrh));
    return ~crc_bitwise(crc, copy, len);
}

/* IPv6: traffic class and flow label (bytes 0-3 but the version), hop limit, UDP checksum,
 * BTH byte 4. The version nibble is kept: byte 0 is handled by the caller. */
static uint32_t icrc_reference6(const uint8_t *pkt, size_t len)
{
    static const size_t mask[] = {1, 2, 3, 7, 46, 47, 52};
    static uint8_t copy[70000];
    memcpy(copy, pkt, len);
    copy[0] |= 0x0f;
    return icrc_reference(copy, len, mask, sizeof(mask) / sizeof(mask[0]));
}

START_TEST(test_mrc_crc_check_value)
{
    const uint8_t *msg = (const uint8_t *)"123456789";
    ck_assert_uint_eq(~mrc_crc32(0xffffffffu, msg, 9), 0xcbf43926u);
    ck_assert_uint_eq(~crc_bitwise(0xffffffffu, msg, 9), 0xcbf43926u);
    for (size_t i = 0; i < NIMPLS; i++) {
        uint32_t crc = 0xffffffffu;
        if (!have_impl(impls[i])) {
            fprintf(stderr, "crc: %s is not available here\n", impl_names[i]);
            continue;
        }
        ck_assert_int_eq(mrc_crc32_impl(impls[i], &crc, msg, 9), 0);
        ck_assert_uint_eq(~crc, 0xcbf43926u);
    }
    /* the ICRC seed: eight bytes of ones from the all-ones register */
    static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ck_assert_uint_eq(mrc_crc32(0xffffffffu, ff, 8), 0xdebb20e3u);
    /* no inversion inside the update: an empty update is the identity */
    ck_assert_uint_eq(mrc_crc32(0x12345678u, msg, 0), 0x12345678u);
    uint32_t crc = 0;
    ck_assert_int_eq(mrc_crc32_impl(99, &crc, msg, 9), -1);
    ck_assert_int_eq(mrc_crc32_impl(0, &crc, msg, 9), -1);
    ck_assert_uint_eq(crc, 0);
}
END_TEST

START_TEST(test_mrc_crc_impls_agree)
{
    static uint8_t buf[20000];
    uint64_t rng = 0xc0ffee;
    mrc_test_rand_fill(&rng, buf, sizeof(buf));
    /* a full pass of lengths around every boundary the folding code has: 16, 64, tails */
    for (size_t len = 0; len <= 300; len++) {
        for (size_t off = 0; off < 17; off += 3) {
            uint32_t seed = (uint32_t)mrc_test_rand(&rng);
            uint32_t want = crc_bitwise(seed, buf + off, len);
            MRC_REQUIRE(mrc_crc32(seed, buf + off, len) == want, "mrc_crc32 len %zu", len);
            for (size_t i = 0; i < NIMPLS; i++) {
                uint32_t crc = seed;
                if (mrc_crc32_impl(impls[i], &crc, buf + off, len) != 0) {
                    continue;
                }
                MRC_REQUIRE(crc == want, "%s len %zu off %zu", impl_names[i], len, off);
            }
        }
    }
    /* random lengths up to 9000 at random alignments */
    for (int iter = 0; iter < 2000; iter++) {
        size_t off = mrc_test_rand_below(&rng, 64);
        size_t len = mrc_test_rand_below(&rng, 9000);
        uint32_t seed = iter & 1 ? 0xffffffffu : (uint32_t)mrc_test_rand(&rng);
        uint32_t want = crc_bitwise(seed, buf + off, len);
        MRC_REQUIRE(mrc_crc32(seed, buf + off, len) == want, "mrc_crc32 len %zu", len);
        for (size_t i = 0; i < NIMPLS; i++) {
            uint32_t crc = seed;
            if (mrc_crc32_impl(impls[i], &crc, buf + off, len) != 0) {
                continue;
            }
            MRC_REQUIRE(crc == want, "%s len %zu off %zu", impl_names[i], len, off);
        }
        /* the running value carries across calls, wherever the split falls */
        size_t cut = len ? mrc_test_rand_below(&rng, (uint32_t)len + 1) : 0;
        uint32_t crc = mrc_crc32(seed, buf + off, cut);
        MRC_REQUIRE(mrc_crc32(crc, buf + off + cut, len - cut) == want, "split at %zu", cut);
    }
    /* long runs of zeros and ones: the table rows past the first matter here */
    memset(buf, 0, 8192);
    memset(buf + 8192, 0xff, 8192);
    for (size_t i = 0; i < NIMPLS; i++) {
        uint32_t crc = 0xffffffffu;
        if (mrc_crc32_impl(impls[i], &crc, buf, 16384) == 0) {
            ck_assert_uint_eq(crc, crc_bitwise(0xffffffffu, buf, 16384));
        }
    }
    ck_assert_msg(have_impl(MRC_CRC_IMPL_BYTEWISE) && have_impl(MRC_CRC_IMPL_SLICE),
                  "the portable implementations always answer");
#if defined(__x86_64__)
    /* every x86-64 machine this project targets has PCLMULQDQ: make its absence loud */
    ck_assert_msg(have_impl(MRC_CRC_IMPL_PCLMUL), "PCLMUL CRC not selected on x86-64");
#endif
}
END_TEST

/* Every single byte value at every position of an 8-byte block: each slicing table entry. */
START_TEST(test_mrc_crc_tables)
{
    uint8_t block[16];
    for (size_t pos = 0; pos < 16; pos++) {
        for (unsigned v = 0; v < 256; v++) {
            memset(block, 0, sizeof(block));
            block[pos] = (uint8_t)v;
            uint32_t want = crc_bitwise(0, block, sizeof(block));
            uint32_t crc = 0;
            ck_assert_int_eq(mrc_crc32_impl(MRC_CRC_IMPL_SLICE, &crc, block, sizeof(block)), 0);
            MRC_REQUIRE(crc == want, "byte %02x at %zu", v, pos);
            crc = 0;
            ck_assert_int_eq(mrc_crc32_impl(MRC_CRC_IMPL_BYTEWISE, &crc, block, sizeof(block)), 0);
            MRC_REQUIRE(crc == want, "byte %02x at %zu", v, pos);
        }
    }
}
END_TEST

/*
 * A RoCEv2 CNP captured on a ConnectX-4 Lx (IPv4; from scapy's RoCE tests), with the ICRC the
 * NIC computed: it pins the seed, the masking and the byte order of the reference above on
 * hardware output, not on our own reading.
 */
START_TEST(test_mrc_crc_hardware_capture)
{
    static const uint8_t cnp[] = {
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11,
        0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00,
        0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd, 0x00, 0x2a,
    };
    /* IPv4: TOS, TTL, header checksum; UDP checksum; BTH byte 4 */
    static const size_t mask4[] = {1, 8, 10, 11, 26, 27, 32};
    size_t len = sizeof(cnp) - MRC_ICRC_LEN;
    uint32_t icrc = icrc_reference(cnp, len, mask4, sizeof(mask4) / sizeof(mask4[0]));
    uint32_t wire = (uint32_t)cnp[len] | (uint32_t)cnp[len + 1] << 8 |
                    (uint32_t)cnp[len + 2] << 16 | (uint32_t)cnp[len + 3] << 24;
    ck_assert_uint_eq(icrc, wire);
}
END_TEST

START_TEST(test_mrc_crc_icrc_vectors)
{
    char names[64][64];
    size_t n = mrc_test_vec_names(names, 64);
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = mrc_test_vec_load(names[i]);
        const char *s = mrc_test_vec_get(vec, "icrc");
        if (s) {
            uint32_t want = (uint32_t)strtoul(s, NULL, 0);
            size_t len = vec->len - MRC_ICRC_LEN;
            ck_assert_msg(mrc_icrc(vec->data, len) == want, "%s", vec->name);
            ck_assert_msg(icrc_reference6(vec->data, len) == want, "%s: reference", vec->name);
            checked++;
        }
        mrc_test_vec_free(vec);
    }
    ck_assert_uint_ge(checked, 20);
}
END_TEST

/* mrc_icrc() against the reference on random packets of every size up to 9000 bytes. */
START_TEST(test_mrc_crc_icrc_random)
{
    static uint8_t buf[9100];
    uint64_t rng = 77;
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = iter < 200 ? (size_t)iter : mrc_test_rand_below(&rng, 9000);
        mrc_test_rand_fill(&rng, buf, len);
        MRC_REQUIRE(mrc_icrc(buf, len) == icrc_reference6(buf, len), "len %zu", len);
        if (len >= MRC_BASE_LEN) {
            /* the masked fields do not count */
            uint32_t before = mrc_icrc(buf, len);
            buf[0] ^= 0x0f;
            buf[3] ^= 0x5a;
            buf[7] ^= 0xff;
            buf[47] ^= 1;
            buf[52] ^= 0x80;
            MRC_REQUIRE(mrc_icrc(buf, len) == before, "masked fields changed the ICRC");
            buf[0] ^= 0x10;
            MRC_REQUIRE(mrc_icrc(buf, len) != before, "the version counts");
        }
    }
}
END_TEST

static volatile uint32_t sink;

/* MB/s of |impl| (0: mrc_crc32 as selected) over |len|-byte buffers for about |secs|. */
static double throughput(unsigned impl, const uint8_t *buf, size_t len, double secs)
{
    uint64_t bytes = 0;
    uint32_t crc = 0;
    double t0 = mrc_test_now(), t;
    do {
        for (int i = 0; i < 64; i++) {
            if (impl) {
                mrc_crc32_impl(impl, &crc, buf, len);
            } else {
                crc = mrc_crc32(crc, buf, len);
            }
        }
        bytes += 64 * len;
        t = mrc_test_now();
    } while (t - t0 < secs);
    sink = crc;
    return (double)bytes / (t - t0) / 1e6;
}

/* Not a pass/fail check: the figures for the record (run the case alone for stable numbers). */
START_TEST(test_mrc_crc_throughput)
{
    static uint8_t buf[4096 + 80];
    uint64_t rng = 5;
    mrc_test_rand_fill(&rng, buf, sizeof(buf));
    for (size_t i = 0; i < NIMPLS; i++) {
        if (have_impl(impls[i])) {
            fprintf(stderr, "crc32 %-10s 4 KiB: %8.0f MB/s\n", impl_names[i],
                    throughput(impls[i], buf, 4096, 0.3));
        }
    }
    fprintf(stderr, "crc32 %-10s 4 KiB: %8.0f MB/s\n", "selected", throughput(0, buf, 4096, 0.3));
    /* the ICRC of a 4 KiB write: headers masked, then the payload */
    uint64_t bytes = 0;
    double t0 = mrc_test_now(), t;
    size_t len = MRC_BASE_LEN + 20 + 4096;
    do {
        for (int k = 0; k < 64; k++) {
            sink = mrc_icrc(buf, len);
        }
        bytes += 64 * len;
        t = mrc_test_now();
    } while (t - t0 < 0.3);
    fprintf(stderr, "mrc_icrc   4 KiB write: %8.0f MB/s (%.0f ns per packet)\n",
            (double)bytes / (t - t0) / 1e6, (t - t0) * 1e9 / (double)(bytes / len));
}
END_TEST

Suite *mrc_crc_suite(void)
{
    Suite *s = suite_create("crc");
    TCase *tc = tcase_create("crc32");
    tcase_add_test(tc, test_mrc_crc_check_value);
    tcase_add_test(tc, test_mrc_crc_impls_agree);
    tcase_add_test(tc, test_mrc_crc_tables);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);

    tc = tcase_create("icrc");
    tcase_add_test(tc, test_mrc_crc_hardware_capture);
    tcase_add_test(tc, test_mrc_crc_icrc_vectors);
    tcase_add_test(tc, test_mrc_crc_icrc_random);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);

    tc = tcase_create("throughput");
    tcase_add_test(tc, test_mrc_crc_throughput);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
