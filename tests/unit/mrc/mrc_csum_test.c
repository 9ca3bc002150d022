/* SPDX-License-Identifier: MIT */
/* The UDP checksum (mrc_csum.c): against a word-at-a-time reference on random packets of every
 * length, and on everything a pair of engines sends each other. The wire vectors carry the
 * value an independent reading computes (gen_vectors.py); the wire suite checks those. */
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

/* RFC 1071 as written: 16-bit big-endian words, the pseudo-header of RFC 8200 §8.1. */
static uint16_t reference(const uint8_t *pkt, size_t ulen)
{
    uint64_t s = 0;
    for (size_t i = 8; i < 40; i += 2) {
        s += (uint32_t)pkt[i] << 8 | pkt[i + 1];
    }
    s += (ulen >> 16) + (ulen & 0xffff) + 17;
    for (size_t i = 0; i < ulen; i += 2) {
        s += (uint32_t)pkt[40 + i] << 8 | (i + 1 < ulen ? pkt[40 + i + 1] : 0);
    }
    while (s >> 16) {
        s = (s & 0xffff) + (s >> 16);
    }
    uint16_t c = (uint16_t)~s;
    return c ? c : 0xffff;
}

static void ip6_udp(uint8_t *pkt, size_t ulen)
{
    pkt[0] = 0x60;
    pkt[4] = (uint8_t)(ulen >> 8);
    pkt[5] = (uint8_t)ulen;
    pkt[6] = 17;
    pkt[40 + 4] = (uint8_t)(ulen >> 8);
    pkt[40 + 5] = (uint8_t)ulen;
}

START_TEST(test_mrc_csum_random)
{
    uint64_t rng = 0x5eed;
    uint8_t *pkt = malloc(40 + 9000);
    for (size_t ulen = 8; ulen <= 9000; ulen += 1 + ulen / 64) {
        mrc_test_rand_fill(&rng, pkt, 40 + ulen);
        ip6_udp(pkt, ulen);
        MRC_REQUIRE(mrc_udp6_csum_set(pkt, 40 + ulen) == 0, "ulen %zu", ulen);
        unsigned got = (unsigned)pkt[46] << 8 | pkt[47];
        pkt[46] = pkt[47] = 0;
        MRC_REQUIRE(got == reference(pkt, ulen), "ulen %zu: %04x, reference %04x", ulen, got,
                    reference(pkt, ulen));
        pkt[46] = (uint8_t)(got >> 8);
        pkt[47] = (uint8_t)got;
        MRC_REQUIRE(mrc_udp6_csum_ok(pkt, 40 + ulen), "ulen %zu: not ok", ulen);
        /* one flipped bit anywhere the checksum covers (the addresses, 8..39, or the UDP part)
         * is seen */
        size_t at = 8 + mrc_test_rand_below(&rng, (uint32_t)(32 + ulen));
        pkt[at] ^= (uint8_t)(1u << mrc_test_rand_below(&rng, 8));
        MRC_REQUIRE(!mrc_udp6_csum_ok(pkt, 40 + ulen), "ulen %zu: flip at %zu unseen", ulen, at);
    }
    free(pkt);
}
END_TEST

START_TEST(test_mrc_csum_refuses)
{
    uint8_t pkt[64] = {0};
    ip6_udp(pkt, 24);
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 64), 0);
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 40 + 23), MRC_ERR_INVAL); /* shorter than UDP says */
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 47), MRC_ERR_INVAL);      /* no whole UDP header */
    pkt[40 + 4] = 0;
    pkt[40 + 5] = 7; /* a UDP length below its header */
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 64), MRC_ERR_INVAL);
    ip6_udp(pkt, 24);
    pkt[6] = 6; /* TCP */
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 64), MRC_ERR_INVAL);
    ck_assert(!mrc_udp6_csum_ok(pkt, 64));
    pkt[6] = 17;
    pkt[0] = 0x45; /* IPv4 */
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 64), MRC_ERR_INVAL);
    /* a sum that comes to 0 goes out as 0xffff, and is taken */
    memset(pkt, 0, sizeof(pkt));
    ip6_udp(pkt, 8);
    unsigned s = 8 + 17 + 8, sport = 0xffff - s; /* pseudo-header length and next header, UDP
                                                    length: the source port brings it to ~0 */
    pkt[40] = (uint8_t)(sport >> 8);
    pkt[41] = (uint8_t)sport;
    ck_assert_int_eq(mrc_udp6_csum_set(pkt, 48), 0);
    ck_assert_uint_eq((unsigned)pkt[46] << 8 | pkt[47], 0xffff);
    pkt[46] = pkt[47] = 0;
    ck_assert_uint_eq(reference(pkt, 8), 0xffff);
    pkt[46] = pkt[47] = 0xff;
    ck_assert(mrc_udp6_csum_ok(pkt, 48));
}
END_TEST

/* Everything a pair of engines sends (data, SACKs, ACKs) carries a right checksum; with the
 * setting off, the engine writes 0, RoCEv2's custom. */
static bool check_sum(void *user, unsigned from, mrc_test_pkt *p, mrc_rx_info *info)
{
    bool *want = user;
    (void)from;
    (void)info;
    MRC_REQUIRE(mrc_udp6_csum_ok(p->buf, p->len) == *want, "opcode %02x: checksum ok is %d",
                p->buf[48], !*want);
    if (!*want) {
        MRC_REQUIRE(p->buf[46] == 0 && p->buf[47] == 0, "checksum written while off");
    }
    return true;
}

START_TEST(test_mrc_csum_engine)
{
    for (int on = 1; on >= 0; on--) {
        mrc_test_opts o;
        mrc_test_node a, b;
        bool want = on;
        mrc_test_opts_default(&o);
        o.set.udp_checksum = want;
        mrc_test_pair_new(&a, &o, &b, &o, 0);
        mrc_test_post_recvs(&b, 100, 2);
        for (size_t i = 0; i < 20000; i++) {
            a.mem[i] = (uint8_t)(i * 7);
        }
        ck_assert_int_eq(
            mrc_test_post_write(&a, 1, true, 5, 0, 20000, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0),
            0);
        ck_assert_int_eq(
            mrc_test_post_write(&a, 2, false, 0, 3, 999, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0),
            0);
        mrc_test_run(&a, &b, 0, 100000000, check_sum, &want);
        mrc_wc wc[4];
        ck_assert_int_ge(mrc_poll_cq(a.cq, 4, wc), 2);
        mrc_test_node_free(&a);
        mrc_test_node_free(&b);
    }
}
END_TEST

Suite *mrc_csum_suite(void)
{
    Suite *s = suite_create("csum");
    TCase *tc = tcase_create("csum");
    tcase_add_test(tc, test_mrc_csum_random);
    tcase_add_test(tc, test_mrc_csum_refuses);
    tcase_add_test(tc, test_mrc_csum_engine);
    suite_add_tcase(s, tc);
    return s;
}
