/* SPDX-License-Identifier: MIT */
/* Unit tests of reliability: SACKs, duplicates, placement, in-order completion, the MPR window,
 * PSN wrap, timeouts and retries, tail-loss and reliability probes. */
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

#define PSN(base, d) mrc_psn_add((base), (d))

/* A responder alone, its peer made up by the test. */
static void responder(mrc_test_node *b, const mrc_test_opts *o)
{
    mrc_test_node_new(b, o, 1);
    mrc_test_node_up(b, o, MRC_TEST_PEER_QPN, 0);
}

/* A requester alone, its peer made up by the test. */
static void requester(mrc_test_node *a, const mrc_test_opts *o)
{
    mrc_test_node_new(a, o, 0);
    mrc_test_node_up(a, o, MRC_TEST_PEER_QPN, 0);
}

/* Pulls one packet and requires it to be of |opcode|. */
#define expect_pkt(n, p, op_, now)                                                                 \
    do {                                                                                           \
        ck_assert_msg(mrc_test_pull((n), (p), (now)) > 0, "expected opcode 0x%02x, got nothing",   \
                      (op_));                                                                      \
        ck_assert_msg((p)->pkt.bth.opcode == (op_), "expected opcode 0x%02x, got 0x%02x", (op_),   \
                      (p)->pkt.bth.opcode);                                                        \
    } while (0)

#define expect_nothing(n, now)                                                                     \
    do {                                                                                           \
        mrc_test_pkt p_;                                                                           \
        int len_ = mrc_test_pull((n), &p_, (now));                                                 \
        ck_assert_msg(len_ == 0, "expected nothing, got opcode 0x%02x",                            \
                      len_ ? p_.pkt.bth.opcode : 0);                                               \
    } while (0)

/* Pulls every packet |n| has; |last| gets the last SACK among them. Returns how many SACKs. */
static unsigned drain_sacks(mrc_test_node *n, mrc_test_pkt *last, uint64_t now)
{
    mrc_test_pkt p;
    unsigned k = 0;
    while (mrc_test_pull(n, &p, now) > 0) {
        if (p.pkt.bth.opcode == MRC_OP_SACK) {
            *last = p;
            mrc_test_pkt_decode(last, n->icrc);
            k++;
        }
    }
    return k;
}

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 131 + (i >> 8) * 7 + 1);
}

/* A data packet of the made-up requester to |b|: packet |k| of a |npkts|-packet message |msn|
 * written to |b|'s memory at |off|, full MTU payloads of the pattern. */
static void data_to(mrc_test_pkt *p, const mrc_test_node *b, uint32_t psn, uint16_t msn, uint32_t k,
                    uint32_t npkts, size_t off, uint32_t ev, unsigned port)
{
    static uint8_t payload[4096];
    uint8_t op = npkts == 1       ? MRC_OP_WRITE_ONLY
                 : k == 0         ? MRC_OP_WRITE_FIRST
                 : k == npkts - 1 ? MRC_OP_WRITE_LAST
                                  : MRC_OP_WRITE_MIDDLE;
    for (uint32_t i = 0; i < b->mtu; i++) {
        payload[i] = pattern(off + (size_t)k * b->mtu + i);
    }
    mrc_test_build_data(p, b, op, psn, msn, 0, mrc_test_va(b, off + (size_t)k * b->mtu),
                        mrc_mr_rkey(b->mr), npkts * b->mtu, payload, b->mtu, ev, port);
}

/* The SACK: cumulative PSN, bitmap from the right base, the trigger's EV and timestamp. */
START_TEST(test_mrc_reliability_sack_fields)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    o.set.sack_every = 2;
    responder(&b, &o);
    uint32_t p0 = o.rq_psn;
    mrc_test_pkt d, s;
    /* two in order: the second one triggers a SACK (sack_every = 2) */
    data_to(&d, &b, p0, 1, 0, 8, 0, mrc_test_ev(0, 1), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    expect_nothing(&b, 0);
    data_to(&d, &b, PSN(p0, 1), 1, 1, 8, 0, mrc_test_ev(1, 2), 1);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 100), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 100);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, PSN(p0, 1));
    ck_assert_uint_eq(s.pkt.bth.psn, PSN(p0, 1));
    ck_assert_uint_eq(s.pkt.bth.dqpn, MRC_TEST_PEER_QPN);
    ck_assert_int_eq(s.pkt.seth.ack_psn_offset, 0);
    ck_assert_uint_eq(s.pkt.seth.entropy, mrc_test_ev(1, 2));
    ck_assert_uint_eq(s.pkt.cc.ts, d.pkt.tseth.ts);
    ck_assert_uint_eq(s.pkt.seth.m, MRC_M_NONE);
    ck_assert_uint_eq(s.pkt.seth.pr, 0);
    ck_assert_int_eq(s.pkt.seth.sack_offset, 1);
    ck_assert_uint_eq(s.pkt.seth.bitmap, 0);
    ck_assert_uint_eq(s.pkt.seth.mpr, o.mpr_dest);
    ck_assert_uint_eq(s.pkt.cc.ooo_count, 0);
    ck_assert_uint_eq(s.pkt.cc.rcvd_bytes, (2 * 1024 + 255) / 256);
    ck_assert(s.info.control);
    ck_assert_uint_eq(s.info.dscp, o.set.dscp_control);
    ck_assert_uint_eq(s.info.port, 1); /* the plane the trigger came on */
    /* a gap: PSN +3 before +2 is answered at once, the bitmap showing +3 */
    data_to(&d, &b, PSN(p0, 3), 1, 3, 8, 0, mrc_test_ev(0, 3), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 200), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 200);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, PSN(p0, 1));
    ck_assert_int_eq(s.pkt.seth.ack_psn_offset, 2);
    ck_assert_int_eq(s.pkt.seth.sack_offset, 1);
    ck_assert_uint_eq(s.pkt.seth.bitmap, 1u << 1);
    ck_assert_uint_eq(s.pkt.seth.entropy, mrc_test_ev(0, 3));
    ck_assert_uint_eq(s.pkt.cc.ts, d.pkt.tseth.ts);
    ck_assert_uint_eq(s.pkt.cc.ooo_count, 1);
    ck_assert_uint_eq(s.info.port, 0);
    /* a trigger 99 past cack: the bitmap base moves up so that its last bit is the trigger */
    data_to(&d, &b, PSN(p0, 100), 2, 0, 64, 8192, mrc_test_ev(1, 0), 1);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 300), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 300);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, PSN(p0, 1));
    ck_assert_int_eq(s.pkt.seth.ack_psn_offset, 99);
    uint32_t base = PSN(s.pkt.seth.cack_psn, s.pkt.seth.sack_offset);
    ck_assert_int_le(mrc_psn_diff(base, PSN(p0, 100)), 0);
    ck_assert_int_gt(mrc_psn_diff(base, PSN(p0, 100)), -64);
    ck_assert_uint_eq(s.pkt.seth.bitmap, 1ull << mrc_psn_diff(PSN(p0, 100), base));
    ck_assert_uint_eq(s.pkt.cc.ooo_count, 2);
    /* the gap filled and one more: cack jumps over +3 */
    data_to(&d, &b, PSN(p0, 2), 1, 2, 8, 0, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 400), 0);
    data_to(&d, &b, PSN(p0, 4), 1, 4, 8, 0, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 400), 0);
    ck_assert_uint_ge(drain_sacks(&b, &s, 400), 1);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, PSN(p0, 4));
    ck_assert_uint_eq(s.pkt.cc.ooo_count, 1);
    ck_assert_uint_eq(s.pkt.cc.rcvd_bytes, (6 * 1024 + 255) / 256);
    for (size_t i = 0; i < 5 * 1024; i++) {
        MRC_REQUIRE(b.mem[i] == pattern(i), "byte %zu not placed", i);
    }
    mrc_qp_stats st = mrc_test_stats(&b);
    ck_assert_uint_eq(st.data_pkts_rcvd, 6);
    mrc_test_node_free(&b);
}
END_TEST

/* A duplicate is SACKed again (the first answer may be lost) and not placed again. */
START_TEST(test_mrc_reliability_duplicate_resacked)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    responder(&b, &o);
    uint32_t p0 = o.rq_psn;
    uint8_t x[100], y[100];
    memset(x, 0x11, sizeof(x));
    memset(y, 0x22, sizeof(y));
    mrc_test_pkt d, s;
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, p0, 1, 0, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr),
                        100, x, 100, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 0);
    expect_pkt(&b, &s, MRC_OP_ACK, 0);
    ck_assert_uint_eq(s.pkt.aeth.msn, 1);
    /* the same PSN again, other bytes in it */
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, p0, 1, 0, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr),
                        100, y, 100, mrc_test_ev(1, 1), 1);
    for (int rep = 0; rep < 3; rep++) {
        ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 10), 0);
        expect_pkt(&b, &s, MRC_OP_SACK, 10);
        ck_assert_uint_eq(s.pkt.seth.cack_psn, p0);
        ck_assert_uint_eq(s.pkt.seth.entropy, mrc_test_ev(1, 1));
        ck_assert_uint_eq(s.info.port, 1);
        expect_pkt(&b, &s, MRC_OP_ACK, 10);
        ck_assert_uint_eq(s.pkt.aeth.msn, 1);
    }
    ck_assert_mem_eq(b.mem, x, 100);
    mrc_qp_stats st = mrc_test_stats(&b);
    ck_assert_uint_eq(st.dup_pkts_rcvd, 3);
    ck_assert_uint_eq(st.data_pkts_rcvd, 1);
    ck_assert_uint_eq(st.msgs_rcvd_done, 1);
    ck_assert_uint_eq(st.data_bytes_rcvd, 100);
    mrc_test_node_free(&b);
}
END_TEST

/* Out of order straight into memory: a message delivered backwards is placed packet by packet
 * and completes once, when its last missing packet arrives. */
START_TEST(test_mrc_reliability_ooo_placement)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    for (size_t i = 0; i < 8192; i++) {
        a.mem[i] = pattern(i);
    }
    mrc_test_post_recvs(&b, 500, 2);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, true, 0xbeef, 0, 8192, mrc_test_va(&b, 100),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    mrc_test_pkt *p = calloc(8, sizeof(*p));
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 8, 0), 8);
    mrc_wc wc[4];
    for (int k = 7; k >= 0; k--) {
        mrc_test_pkt_decode(&p[k], true);
        ck_assert_uint_eq(p[k].pkt.bth.psn, PSN(o.sq_psn, k));
        ck_assert_int_eq(mrc_test_push(&b, &p[k], NULL, 10), 0);
        /* this packet's bytes are in place already; nothing before it is */
        ck_assert_mem_eq(b.mem + 100 + (size_t)k * 1024, a.mem + (size_t)k * 1024, 1024);
        if (k > 0) {
            ck_assert_uint_eq(b.mem[100 + (size_t)k * 1024 - 1], 0);
            ck_assert_int_eq(mrc_test_poll(&b, wc, 4), 0);
        }
    }
    ck_assert_int_eq(mrc_test_poll(&b, wc, 4), 1);
    ck_assert_uint_eq(wc[0].wr_id, 500);
    ck_assert_int_eq(wc[0].status, MRC_WC_SUCCESS);
    ck_assert_int_eq(wc[0].opcode, MRC_WC_RECV_RDMA_WITH_IMM);
    ck_assert_uint_eq(wc[0].byte_len, 8192);
    ck_assert_uint_eq(wc[0].imm_data, 0xbeef);
    ck_assert_mem_eq(b.mem + 100, a.mem, 8192);
    ck_assert_uint_eq(b.mem[99], 0);
    ck_assert_uint_eq(b.mem[100 + 8192], 0);
    mrc_test_pump(&a, &b, 10, NULL, NULL);
    ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 1);
    ck_assert_int_eq(wc[0].status, MRC_WC_SUCCESS);
    ck_assert_int_eq(mrc_test_poll(&b, wc, 4), 0);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Writes with Immediate complete in message order: 3 (with immediate) and 2 (plain) arrive
 * before 1; the receive completions come for 1, then 3, and a plain write takes no receive. */
START_TEST(test_mrc_reliability_wimm_completes_in_order)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    uint32_t rkey = mrc_mr_rkey(b.mr);
    mrc_test_post_recvs(&b, 100, 3);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, true, 11, 0, 2048, mrc_test_va(&b, 0), rkey, 0), 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 2, false, 0, 0, 1024, mrc_test_va(&b, 4096), rkey, 0),
                     0);
    ck_assert_int_eq(mrc_test_post_write(&a, 3, true, 33, 0, 2048, mrc_test_va(&b, 8192), rkey, 0),
                     0);
    mrc_test_pkt *p = calloc(5, sizeof(*p));
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 5, 0), 5);
    mrc_wc wc[8];
    /* message 3 (PSNs 3, 4), then message 2 (PSN 2) */
    for (int k = 4; k >= 2; k--) {
        mrc_test_pkt_decode(&p[k], true);
        ck_assert_int_eq(mrc_test_push(&b, &p[k], NULL, 10), 0);
    }
    ck_assert_int_eq(mrc_test_poll(&b, wc, 8), 0);
    /* the ACK must not claim messages 2 and 3 while 1 is missing */
    mrc_test_pkt c;
    while (mrc_test_pull(&b, &c, 10) > 0) {
        ck_assert_uint_ne(c.pkt.bth.opcode, MRC_OP_ACK);
    }
    mrc_test_pkt_decode(&p[1], true);
    ck_assert_int_eq(mrc_test_push(&b, &p[1], NULL, 20), 0);
    ck_assert_int_eq(mrc_test_poll(&b, wc, 8), 0);
    mrc_test_pkt_decode(&p[0], true);
    ck_assert_int_eq(mrc_test_push(&b, &p[0], NULL, 30), 0);
    ck_assert_int_eq(mrc_test_poll(&b, wc, 8), 2);
    ck_assert_uint_eq(wc[0].imm_data, 11);
    ck_assert_uint_eq(wc[0].wr_id, 100);
    ck_assert_uint_eq(wc[0].byte_len, 2048);
    ck_assert_uint_eq(wc[1].imm_data, 33);
    ck_assert_uint_eq(wc[1].wr_id, 101);
    mrc_qp_stats st = mrc_test_stats(&b);
    ck_assert_uint_eq(st.msgs_rcvd_done, 3);
    /* one receive is left for the next immediate */
    mrc_test_pump(&a, &b, 30, NULL, NULL);
    ck_assert_int_eq(mrc_test_poll(&a, wc, 8), 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(wc[i].wr_id, (uint64_t)i + 1);
        ck_assert_int_eq(wc[i].status, MRC_WC_SUCCESS);
    }
    ck_assert_int_eq(mrc_test_post_write(&a, 4, true, 44, 0, 10, mrc_test_va(&b, 0), rkey, 40), 0);
    mrc_test_pump(&a, &b, 40, NULL, NULL);
    ck_assert_int_eq(mrc_test_poll(&b, wc, 8), 1);
    ck_assert_uint_eq(wc[0].wr_id, 102);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Send completions follow the Transport ACK: every PSN SACKed is not yet a completion. */
START_TEST(test_mrc_reliability_ack_drives_send_completion)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    uint32_t rkey = mrc_mr_rkey(b.mr);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 2048, mrc_test_va(&b, 0), rkey, 0), 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 2, false, 0, 0, 1000, mrc_test_va(&b, 0), rkey, 0), 0);
    mrc_test_pkt p, acks[4];
    unsigned nacks = 0;
    while (mrc_test_pull(&a, &p, 0) > 0) {
        ck_assert_int_eq(mrc_test_push(&b, &p, NULL, 1), 0);
    }
    while (mrc_test_pull(&b, &p, 1) > 0) {
        if (p.pkt.bth.opcode == MRC_OP_ACK) {
            ck_assert_uint_lt(nacks, 4);
            acks[nacks++] = p;
        } else {
            ck_assert_uint_eq(p.pkt.bth.opcode, MRC_OP_SACK);
            ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 2), 0);
        }
    }
    mrc_wc wc[4];
    ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 0);
    ck_assert_uint_eq(mrc_test_stats(&a).inflight_pkts, 0);
    ck_assert_uint_ge(nacks, 1);
    /* the last ACK covers both messages */
    mrc_test_pkt_decode(&acks[nacks - 1], true);
    ck_assert_uint_eq(acks[nacks - 1].pkt.aeth.msn, 2);
    ck_assert_uint_eq(acks[nacks - 1].pkt.aeth.syndrome, MRC_AETH_ACK);
    ck_assert_int_eq(mrc_test_push(&a, &acks[nacks - 1], NULL, 3), 0);
    ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 2);
    ck_assert_uint_eq(wc[0].wr_id, 1);
    ck_assert_uint_eq(wc[0].byte_len, 2048);
    ck_assert_int_eq(wc[0].opcode, MRC_WC_RDMA_WRITE);
    ck_assert_uint_eq(wc[1].wr_id, 2);
    ck_assert_uint_eq(wc[1].byte_len, 1000);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 2);
    ck_assert_uint_eq(st.acks_rcvd, 1);
    /* an older ACK afterwards changes nothing */
    for (unsigned i = 0; i + 1 < nacks; i++) {
        mrc_test_pkt_decode(&acks[i], true);
        ck_assert_int_eq(mrc_test_push(&a, &acks[i], NULL, 4), 0);
    }
    ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 0);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* The requester never sends a PSN beyond cack + MPR, whatever the bitmap says. */
START_TEST(test_mrc_reliability_mpr_requester_window)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.mtu = 256;
    o.mpr = 1; /* 128 PSNs */
    o.memlen = 300 * 256;
    requester(&a, &o);
    uint32_t p0 = o.sq_psn;
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 300 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    unsigned n = 0;
    while (mrc_test_pull(&a, &p, 0) > 0) {
        ck_assert(mrc_test_is_data(&p));
        ck_assert_uint_eq(p.pkt.bth.psn, PSN(p0, (int32_t)n));
        n++;
    }
    ck_assert_uint_eq(n, 128);
    /* cumulative ack of 10: 10 more, up to cack + 128 */
    mrc_test_build_sack(&p, &a, PSN(p0, 9), 0, 1, 0, MRC_M_NONE, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 0), 0);
    while (mrc_test_pull(&a, &p, 0) > 0) {
        ck_assert(mrc_test_is_data(&p));
        ck_assert_int_le(mrc_psn_diff(p.pkt.bth.psn, PSN(p0, 9)), 128);
        n++;
    }
    ck_assert_uint_eq(n, 138);
    /* selective acks of everything above a hole open nothing */
    mrc_test_build_sack(&p, &a, PSN(p0, 9), 1, 2, UINT64_MAX, MRC_M_NONE, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 0), 0);
    while (mrc_test_pull(&a, &p, 0) > 0) {
        ck_assert_msg(!mrc_test_is_data(&p) || p.pkt.bth.rtx, "new PSN 0x%x sent beyond cack + MPR",
                      p.pkt.bth.psn);
    }
    ck_assert_uint_eq(mrc_test_stats(&a).data_pkts_sent, 138);
    mrc_test_node_free(&a);
}
END_TEST

/* The responder NACKs PSN_OOR_WINDOW just beyond its window and takes the PSN just inside. */
START_TEST(test_mrc_reliability_mpr_responder_window)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    o.mpr_dest = 1; /* 128 PSNs: cack + 1 .. cack + 128 */
    o.memlen = 256 * 1024;
    responder(&b, &o);
    uint32_t p0 = o.rq_psn;
    mrc_test_pkt d, s;
    data_to(&d, &b, PSN(p0, 128), 1, 0, 1, 0, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    expect_pkt(&b, &s, MRC_OP_NACK, 0);
    ck_assert_uint_eq(s.pkt.neth.reason, MRC_NACK_PSN_OOR_WINDOW);
    ck_assert_uint_eq(s.pkt.neth.nack_psn, PSN(p0, 128));
    ck_assert_uint_eq(s.pkt.neth.entropy, mrc_test_ev(0, 0));
    ck_assert_uint_eq(b.mem[0], 0);
    mrc_qp_stats st = mrc_test_stats(&b);
    ck_assert_uint_eq(st.nacks_sent[mrc_nack_index(MRC_NACK_PSN_OOR_WINDOW)], 1);
    ck_assert_uint_eq(st.data_pkts_rcvd, 0);
    /* the last PSN inside is placed */
    data_to(&d, &b, PSN(p0, 127), 1, 0, 1, 0, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 0);
    ck_assert_uint_eq(b.mem[0], pattern(0));
    /* the window moves with cack: +128 fits once +0 is in */
    data_to(&d, &b, p0, 2, 0, 1, 1024, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    data_to(&d, &b, PSN(p0, 128), 3, 0, 1, 2048, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    st = mrc_test_stats(&b);
    ck_assert_uint_eq(st.nacks_sent[mrc_nack_index(MRC_NACK_PSN_OOR_WINDOW)], 1);
    ck_assert_uint_eq(st.data_pkts_rcvd, 3);
    mrc_test_node_free(&b);
}
END_TEST

/* Filters for the link: reverse the order of data packets in each batch. */
typedef struct batch {
    mrc_test_pkt *held;
    unsigned n, cap;
} batch;

static bool hold_data(void *user, unsigned from, mrc_test_pkt *p, mrc_rx_info *info)
{
    batch *b = user;
    (void)info;
    if (from == 0 && mrc_test_is_data(p) && b->n < b->cap) {
        b->held[b->n++] = *p;
        return false;
    }
    return true;
}

/* PSNs cross the 24-bit wrap: every byte lands, completions come, cack wraps. */
START_TEST(test_mrc_reliability_psn_wrap)
{
    static const uint32_t starts[] = {0xfffff0, 0xffffff, 0x000000, 0x7fffc0, 0xffffc1};
    for (size_t t = 0; t < sizeof(starts) / sizeof(starts[0]); t++) {
        mrc_test_opts oa, ob;
        mrc_test_node a, b;
        mrc_test_opts_default(&oa);
        oa.mpr = oa.mpr_dest = 1;
        oa.sq_psn = starts[t];
        ob = oa;
        ob.sq_psn = 0x123;
        mrc_test_pair_new(&a, &oa, &b, &ob, 0);
        for (size_t i = 0; i < 65536; i++) {
            a.mem[i] = pattern(i + t);
        }
        mrc_test_post_recvs(&b, 0, 4);
        for (unsigned m = 0; m < 4; m++) {
            ck_assert_int_eq(mrc_test_post_write(&a, m, m & 1, m, (size_t)m * 16384, 16384,
                                                 mrc_test_va(&b, (size_t)m * 16384),
                                                 mrc_mr_rkey(b.mr), 0),
                             0);
        }
        batch h = {.held = calloc(128, sizeof(mrc_test_pkt)), .cap = 128};
        mrc_test_pump(&a, &b, 0, hold_data, &h);
        ck_assert_uint_eq(h.n, 64);
        for (unsigned k = h.n; k-- > 0;) {
            mrc_test_pkt_decode(&h.held[k], true);
            ck_assert_uint_eq(h.held[k].pkt.bth.psn, PSN(starts[t], (int32_t)k));
            ck_assert_int_eq(mrc_test_push(&b, &h.held[k], NULL, 1), 0);
        }
        mrc_test_pump(&a, &b, 1, NULL, NULL);
        ck_assert_mem_eq(b.mem, a.mem, 65536);
        mrc_wc wc[16];
        int n = mrc_test_poll(&a, wc, 16);
        ck_assert_int_eq(n, 4);
        n = mrc_test_poll(&b, wc, 16);
        ck_assert_int_eq(n, 2);
        mrc_qp_stats sa = mrc_test_stats(&a), sb = mrc_test_stats(&b);
        ck_assert_uint_eq(sa.msgs_sent_done, 4);
        ck_assert_uint_eq(sa.inflight_pkts, 0);
        ck_assert_uint_eq(sa.retx_pkts, 0);
        ck_assert_uint_eq(sb.data_pkts_rcvd, 64);
        ck_assert_uint_eq(sb.dup_pkts_rcvd, 0);
        /* the next write starts at the wrapped PSN */
        ck_assert_int_eq(
            mrc_test_post_write(&a, 9, false, 0, 0, 10, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 2),
            0);
        mrc_test_pkt p;
        ck_assert_int_gt(mrc_test_pull(&a, &p, 2), 0);
        ck_assert_uint_eq(p.pkt.bth.psn, PSN(starts[t], 64));
        free(h.held);
        mrc_test_node_free(&a);
        mrc_test_node_free(&b);
    }
}
END_TEST

/* A responder whose first PSN is just below the wrap, packets delivered backwards. */
START_TEST(test_mrc_reliability_psn_wrap_responder)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    o.rq_psn = 0xfffffe;
    responder(&b, &o);
    mrc_test_pkt d, s;
    for (int k = 3; k >= 0; k--) {
        data_to(&d, &b, PSN(o.rq_psn, k), 1, (uint32_t)k, 4, 0, mrc_test_ev(0, 0), 0);
        ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    }
    uint32_t last = 0xdead;
    while (mrc_test_pull(&b, &s, 0) > 0) {
        if (s.pkt.bth.opcode == MRC_OP_SACK) {
            last = s.pkt.seth.cack_psn;
        }
    }
    ck_assert_uint_eq(last, 0x000001);
    for (size_t i = 0; i < 4096; i++) {
        MRC_REQUIRE(b.mem[i] == pattern(i), "byte %zu", i);
    }
    ck_assert_uint_eq(mrc_test_stats(&b).msgs_rcvd_done, 1);
    /* a packet from before the wrap is now a duplicate */
    data_to(&d, &b, 0xffffff, 1, 1, 4, 0, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
    ck_assert_uint_eq(mrc_test_stats(&b).dup_pkts_rcvd, 1);
    mrc_test_node_free(&b);
}
END_TEST

/* Runs |a|'s timers with nothing answered until the QP fails or |limit|; records when each
 * transmission of PSN |psn| went out. Returns how many. */
static unsigned run_unanswered(mrc_test_node *a, uint32_t psn, uint64_t *times, unsigned max,
                               uint64_t limit, uint64_t *pend)
{
    unsigned n = 0;
    uint64_t now = 0;
    mrc_test_pkt p;
    for (unsigned i = 0; i < 100000; i++) {
        while (mrc_test_pull(a, &p, now) > 0) {
            if (mrc_test_is_data(&p) && p.pkt.bth.psn == psn) {
                ck_assert_uint_lt(n, max);
                ck_assert_uint_eq(p.pkt.bth.rtx, n > 0);
                ck_assert_uint_eq(p.info.dscp, n > 0 ? 8 : 4);
                times[n++] = now;
            }
        }
        if (mrc_test_stats(a).state == MRC_QPS_ERR) {
            break;
        }
        uint64_t e = mrc_get_expiry(a->ctx);
        if (e > limit) {
            break;
        }
        now = e > now ? e : now;
        mrc_handle_expiry(a->ctx, now);
    }
    *pend = now;
    return n;
}

/* Local ACK timeout 1.024 us x 2^timeout: linear_cnt retries at the base timeout, then each
 * retry waits twice as long; past linear_cnt + exp_cnt retries the QP fails, the oldest request
 * with RETRY_EXC_ERR, the rest flushed. */
START_TEST(test_mrc_reliability_timeouts_linear_then_exponential)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.set.tlp_pct = 0; /* no tail-loss probe: timeouts alone */
    o.timeout = 1;     /* 2048 ns */
    o.linear_cnt = 2;
    o.exp_cnt = 3;
    o.min_active = 8; /* keep every EV in use: the timer is under test here */
    requester(&a, &o);
    const uint64_t base = 2048;
    for (unsigned w = 1; w <= 3; w++) {
        ck_assert_int_eq(mrc_test_post_write(&a, w, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    }
    mrc_test_post_recvs(&a, 10, 1);
    uint64_t t[16], end;
    unsigned n = run_unanswered(&a, o.sq_psn, t, 16, 1000000000, &end);
    /* the original and 5 retries: waits b (original), b, b (linear retries), 2b, 4b, 8b */
    static const uint64_t waits[] = {1, 1, 1, 2, 4, 8};
    ck_assert_uint_eq(n, 6);
    for (unsigned i = 1; i < n; i++) {
        ck_assert_msg(t[i] - t[i - 1] == waits[i - 1] * base, "retry %u after %llu ns, not %llu", i,
                      (unsigned long long)(t[i] - t[i - 1]),
                      (unsigned long long)(waits[i - 1] * base));
    }
    ck_assert_uint_eq(end - t[n - 1], waits[n - 1] * base);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.state, MRC_QPS_ERR);
    ck_assert_uint_eq(st.timeouts, 3 * 6);
    ck_assert_uint_eq(st.retx_by_cause[MRC_RETX_TIMEOUT], 3 * 6);
    ck_assert_uint_eq(st.retx_pkts, 3 * 5);
    mrc_wc wc[8];
    ck_assert_int_eq(mrc_test_poll(&a, wc, 8), 4);
    ck_assert_uint_eq(wc[0].wr_id, 1);
    ck_assert_int_eq(wc[0].status, MRC_WC_RETRY_EXC_ERR);
    ck_assert_uint_eq(wc[1].wr_id, 2);
    ck_assert_int_eq(wc[1].status, MRC_WC_WR_FLUSH_ERR);
    ck_assert_uint_eq(wc[2].wr_id, 3);
    ck_assert_int_eq(wc[2].status, MRC_WC_WR_FLUSH_ERR);
    ck_assert_uint_eq(wc[3].wr_id, 10);
    ck_assert_int_eq(wc[3].status, MRC_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(wc[3].opcode, MRC_WC_RECV_RDMA_WITH_IMM);
    ck_assert_uint_eq(mrc_get_expiry(a.ctx), UINT64_MAX);
    mrc_test_node_free(&a);
}
END_TEST

/* The timeout and the retry counts may change in RTS: the next timer runs by the new ones. */
START_TEST(test_mrc_reliability_timeout_changed_in_rts)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.set.tlp_pct = 0;
    o.timeout = 1; /* 2048 ns */
    o.linear_cnt = 7;
    o.exp_cnt = 7;
    o.min_active = 8;
    requester(&a, &o);
    mrc_qp_attr attr = {
        .qp_state = MRC_QPS_RTS, .timeout = 3, .retry = {.linear_cnt = 1, .exp_cnt = 1}};
    ck_assert_int_eq(
        mrc_modify_qp(a.qp, &attr, MRC_QP_STATE | MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT, 0), 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    uint64_t t[8], end;
    unsigned n = run_unanswered(&a, o.sq_psn, t, 8, 1000000000, &end);
    /* 8192 ns at the base for the original and the one linear retry, then 16384 ns */
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(t[1] - t[0], 8192);
    ck_assert_uint_eq(t[2] - t[1], 8192);
    ck_assert_uint_eq(end - t[2], 16384);
    ck_assert_uint_eq(mrc_test_stats(&a).state, MRC_QPS_ERR);
    mrc_test_node_free(&a);
}
END_TEST

/* exp_cnt 25 is unlimited; the back-off stops doubling at 2^rto_backoff_max. */
START_TEST(test_mrc_reliability_retry_unlimited_backoff_capped)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.set.tlp_pct = 0;
    o.set.rto_backoff_max = 3;
    o.timeout = 1;
    o.linear_cnt = 0;
    o.exp_cnt = 25;
    o.min_active = 8;
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    uint64_t t[64], end;
    unsigned n = run_unanswered(&a, o.sq_psn, t, 64, 40 * 2048 * 8, &end);
    ck_assert_uint_ge(n, 30);
    static const uint64_t waits[] = {1, 2, 4, 8};
    for (unsigned i = 1; i < n; i++) {
        uint64_t want = 2048 * waits[i - 1 < 3 ? i - 1 : 3];
        ck_assert_msg(t[i] - t[i - 1] == want, "retry %u after %llu ns, not %llu", i,
                      (unsigned long long)(t[i] - t[i - 1]), (unsigned long long)want);
    }
    ck_assert_uint_eq(mrc_test_stats(&a).state, MRC_QPS_RTS);
    mrc_test_node_free(&a);
}
END_TEST

/* A dead peer with many packets out: they left a microsecond apart, so each times out on its
 * own; the retry budget must still run out in about the time one packet's would, not once per
 * packet in flight with the back-off doubled at every one. */
START_TEST(test_mrc_reliability_retry_exhaustion_many_in_flight)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.set.tlp_pct = 0;
    o.timeout = 1; /* 2048 ns */
    o.linear_cnt = 2;
    o.exp_cnt = 3;
    o.min_active = 8; /* EVs stay in use: the timers are under test */
    o.mtu = 256;
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 32 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    uint64_t now = 0;
    for (unsigned k = 0; k < 32; k++, now += 1000) {
        ck_assert_int_gt(mrc_test_pull(&a, &p, now), 0);
    }
    /* one packet alone would fail after 2048 x (1 + 1 + 1 + 2 + 4 + 8) = 34816 ns */
    const uint64_t limit = 32000 + 10 * 34816;
    for (unsigned i = 0; i < 1000000 && mrc_test_stats(&a).state == MRC_QPS_RTS; i++) {
        uint64_t e = mrc_get_expiry(a.ctx);
        if (e > limit) {
            break;
        }
        now = e > now ? e : now;
        mrc_handle_expiry(a.ctx, now);
        while (mrc_test_pull(&a, &p, now) > 0) {
        }
    }
    mrc_qp_stats st = mrc_test_stats(&a);
    /* a regression test: at 35bd501 mrc_req_on_timer doubled the QP's back-off at every
     * timeout event and an event took only the packets whose own deadline had passed, so with
     * packets sent apart a packet reached its retry limit only after about one event per packet
     * in flight: mrc-pair's dead peer was still in RTS after 60 s (fixed by b0df818) */
    ck_assert_msg(st.state == MRC_QPS_ERR,
                  "still in RTS at %llu ns (one packet's budget: 34816 ns): %llu timeouts, "
                  "%llu resends",
                  (unsigned long long)now, (unsigned long long)st.timeouts,
                  (unsigned long long)st.retx_pkts);
    mrc_test_node_free(&a);
}
END_TEST

/* A dead peer ends in RETRY_EXC_ERR even when the timeouts have put every EV ASSUMED_BAD (no
 * floor): the QP must neither hang with a retransmission that has no EV nor stop probing. */
START_TEST(test_mrc_reliability_retry_exhaustion_all_evs_bad)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.evs_per_port = 1;
    o.min_active = 0;
    o.set.tlp_pct = 0;
    o.timeout = 1;
    o.linear_cnt = 2;
    o.exp_cnt = 3;
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    uint64_t t[16], end;
    run_unanswered(&a, o.sq_psn, t, 16, 10000000000ull, &end);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ev_count[MRC_EV_ASSUMED_BAD], 2);
    /* a regression test: at 35bd501 mrc_req_write returned at the head of the retransmit queue
     * when no EV was usable, before the queued recovery probes, so none went out, no timer was
     * left and the QP hung in RTS for ever (fixed by b0df818) */
    ck_assert_msg(st.probes_sent > 0, "no recovery probe sent while every EV is ASSUMED_BAD");
    ck_assert_msg(st.state == MRC_QPS_ERR, "QP still in state %u at %llu ns, next timer %llu",
                  st.state, (unsigned long long)end, (unsigned long long)mrc_get_expiry(a.ctx));
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_RETRY_EXC_ERR);
    mrc_test_node_free(&a);
}
END_TEST

/* Drops the data packet whose PSN is in |user| (once). */
typedef struct drop_psn {
    uint32_t psn;
    unsigned dropped;
    bool acks; /* drop Transport ACKs instead */
} drop_psn;

static bool drop_one(void *user, unsigned from, mrc_test_pkt *p, mrc_rx_info *info)
{
    drop_psn *d = user;
    (void)info;
    if (d->acks) {
        if (from == 1 && p->pkt.bth.opcode == MRC_OP_ACK) {
            d->dropped++;
            return false;
        }
        return true;
    }
    if (from == 0 && mrc_test_is_data(p) && p->pkt.bth.psn == d->psn && !d->dropped) {
        d->dropped++;
        return false;
    }
    return true;
}

/* Tail loss: the last packet is lost; at tlp_pct of the timeout a Reliability Probe goes out,
 * its answer shows the hole, and the packet is resent long before the timeout. */
START_TEST(test_mrc_reliability_tail_loss_probe)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    o.timeout = 10; /* 1048576 ns; the probe at 25% */
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 3000, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    drop_psn d = {.psn = PSN(o.sq_psn, 2)};
    mrc_test_pump(&a, &b, 0, drop_one, &d);
    ck_assert_uint_eq(d.dropped, 1);
    uint64_t rto = 1024ull << 10, now = mrc_get_expiry(a.ctx);
    ck_assert_uint_le(now, rto * 25 / 100);
    while (mrc_test_stats(&a).probes_sent == 0) {
        ck_assert_uint_le(now, rto * 25 / 100);
        mrc_handle_expiry(a.ctx, now);
        mrc_test_pkt p;
        if (mrc_test_pull(&a, &p, now) > 0) {
            ck_assert_uint_eq(p.pkt.bth.opcode, MRC_OP_PROBE);
            ck_assert_uint_eq(now, rto * 25 / 100);
            ck_assert_int_eq(mrc_test_push(&b, &p, NULL, now), 0);
            break;
        }
        now = mrc_get_expiry(a.ctx);
    }
    /* the answer: a SACK with pr = 1; the hole is resent at once */
    mrc_test_pkt s;
    expect_pkt(&b, &s, MRC_OP_SACK, now);
    ck_assert_uint_eq(s.pkt.seth.pr, 1);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, PSN(o.sq_psn, 1));
    ck_assert_int_eq(mrc_test_push(&a, &s, NULL, now), 0);
    mrc_test_pkt r;
    ck_assert_int_gt(mrc_test_pull(&a, &r, now), 0);
    ck_assert(mrc_test_is_data(&r));
    ck_assert_uint_eq(r.pkt.bth.psn, PSN(o.sq_psn, 2));
    ck_assert_uint_eq(r.pkt.bth.rtx, 1);
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, now), 0);
    mrc_test_pump(&a, &b, now, NULL, NULL);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.retx_by_cause[MRC_RETX_PROBE], 1);
    ck_assert_uint_eq(st.timeouts, 0);
    ck_assert_uint_eq(st.probes_answered, 1);
    ck_assert_uint_eq(mrc_test_stats(&b).probes_rcvd, 1);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A lost Transport ACK: everything SACKed, the probe's answer brings the ACK again. */
START_TEST(test_mrc_reliability_tail_loss_probe_lost_ack)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 3000, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    drop_psn d = {.acks = true};
    mrc_test_pump(&a, &b, 0, drop_one, &d);
    ck_assert_uint_ge(d.dropped, 1);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 0);
    ck_assert_uint_eq(mrc_test_stats(&a).inflight_pkts, 0);
    uint64_t end = mrc_test_run(&a, &b, 0, (1024ull << 10) / 2, NULL, NULL);
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_uint_le(end, (1024ull << 10) * 25 / 100);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.probes_sent, 1);
    ck_assert_uint_eq(st.retx_pkts, 0);
    ck_assert_uint_eq(st.timeouts, 0);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A Reliability Probe is answered by a SACK with pr = 1 carrying its id, EV and timestamp, and
 * by a Transport ACK once a message is complete. */
START_TEST(test_mrc_reliability_probe_answered)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    responder(&b, &o);
    mrc_test_pkt q, s;
    mrc_test_build_probe(&q, &b, 0x4321, o.rq_psn, mrc_test_ev(1, 3), 1);
    ck_assert_int_eq(mrc_test_push(&b, &q, NULL, 0), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 0);
    ck_assert_uint_eq(s.pkt.seth.pr, 1);
    ck_assert_uint_eq((uint16_t)s.pkt.seth.ack_psn_offset, 0x4321);
    ck_assert_uint_eq(s.pkt.seth.entropy, mrc_test_ev(1, 3));
    ck_assert_uint_eq(s.pkt.cc.ts, q.pkt.peth.ts.ts);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, PSN(o.rq_psn, -1));
    ck_assert_uint_eq(s.info.port, 1);
    expect_nothing(&b, 0); /* no message complete: no ACK */
    mrc_test_pkt d;
    data_to(&d, &b, o.rq_psn, 1, 0, 1, 0, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 1), 0);
    while (mrc_test_pull(&b, &s, 1) > 0) {
    }
    mrc_test_build_probe(&q, &b, 7, o.rq_psn, mrc_test_ev(0, 2), 0);
    ck_assert_int_eq(mrc_test_push(&b, &q, NULL, 2), 0);
    expect_pkt(&b, &s, MRC_OP_SACK, 2);
    ck_assert_uint_eq(s.pkt.seth.pr, 1);
    ck_assert_uint_eq(s.pkt.seth.ack_psn_offset, 7);
    ck_assert_uint_eq(s.pkt.seth.cack_psn, o.rq_psn);
    expect_pkt(&b, &s, MRC_OP_ACK, 2);
    ck_assert_uint_eq(s.pkt.aeth.msn, 1);
    ck_assert_uint_eq(mrc_test_stats(&b).probes_rcvd, 2);
    mrc_test_node_free(&b);
}
END_TEST

/* The loss detector's view in the QP's statistics: the smoothed and minimum RTT from a SACK,
 * the reordering window at its start, the timeout from the attribute. */
START_TEST(test_mrc_reliability_rtt_in_stats)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.timeout = 4;
    requester(&a, &o);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.srtt_ns, 0);
    ck_assert_uint_eq(st.rto_ns, 1024u << 4);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    ck_assert_int_gt(mrc_test_pull(&a, &p, 1000), 0);
    mrc_test_build_sack(&p, &a, o.sq_psn, 0, 1, 0, MRC_M_NONE, p.info.ev, 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 6000), 0);
    st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.srtt_ns, 5000);
    ck_assert_uint_eq(st.min_rtt_ns, 5000);
    ck_assert_uint_eq(st.reo_wnd_ns, o.set.reorder_ns);
    ck_assert_uint_eq(st.rto_ns, 1024u << 4);
    mrc_test_node_free(&a);
}
END_TEST

/* One EV is one path, which keeps order: a packet the SACK reports missing while a later first
 * copy on its EV is reported received is lost, at once, within any reordering window; with
 * ev_in_order off the same SACK is mere reordering. */
/* A requester on one port of two EVs that sent a write of eight 256-byte packets at time 0, from
 * PSN *|pp0|, their EVs in |ev|. */
static void eight_sent(mrc_test_node *a, bool in_order, uint32_t *pp0, uint32_t ev[8])
{
    mrc_test_opts o;
    mrc_test_opts_default(&o);
    o.ports = 1;
    o.evs_per_port = 2;
    o.mtu = 256;
    o.set.ev_in_order = in_order;
    requester(a, &o);
    *pp0 = o.sq_psn;
    ck_assert_int_eq(mrc_test_post_write(a, 1, false, 0, 0, 8 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    for (unsigned k = 0; k < 8; k++) {
        ck_assert_int_gt(mrc_test_pull(a, &p, 0), 0);
        ev[k] = p.info.ev;
    }
}

static void path_order_case(bool in_order)
{
    mrc_test_node a;
    mrc_test_pkt p;
    uint32_t p0, ev[8];
    eight_sent(&a, in_order, &p0, ev);
    unsigned later = 1;
    while (later < 8 && ev[later] != ev[0]) {
        later++;
    }
    ck_assert_uint_lt(later, 8); /* eight packets on two EVs: a later one shares the first's */
    /* +1 .. +7 received, +0 not */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 7, 1, 0xfe, MRC_M_NONE, ev[7], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 1000), 0);
    if (in_order) {
        ck_assert_int_gt(mrc_test_pull(&a, &p, 1000), 0);
        ck_assert(mrc_test_is_data(&p));
        ck_assert_uint_eq(p.pkt.bth.psn, p0);
        ck_assert_uint_eq(p.pkt.bth.rtx, 1);
        ck_assert_uint_eq(mrc_test_stats(&a).retx_by_cause[MRC_RETX_INFERRED], 1);
    }
    expect_nothing(&a, 1000);
    ck_assert_uint_eq(mrc_test_stats(&a).retx_pkts, in_order ? 1 : 0);
    mrc_test_node_free(&a);
}

/* A SACK repeats most of the last one's bitmap while a hole waits: the requester acknowledges
 * what is new in it, whether the bitmap starts where the last did or later, and an older SACK
 * arriving late changes nothing. Each packet is acknowledged once. */
static uint64_t acked_all(const mrc_test_node *a, const uint32_t *ev, unsigned n)
{
    uint64_t sum = 0;
    for (unsigned k = 0; k < n; k++) {
        bool again = false;
        for (unsigned j = 0; j < k; j++) {
            again |= ev[j] == ev[k];
        }
        sum += again ? 0 : mrc_test_ev_stats(a, ev[k]).acked;
    }
    return sum;
}

START_TEST(test_mrc_reliability_sack_repeated_bits)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 1;
    o.evs_per_port = 4;
    o.mtu = 256;
    o.set.ev_in_order = false; /* the holes would be lost at once, which is not the point */
    requester(&a, &o);
    uint32_t p0 = o.sq_psn;
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 10 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    uint32_t ev[10];
    for (unsigned k = 0; k < 10; k++) {
        ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
        ev[k] = p.info.ev;
    }
    /* +2, +3 received (bit 0 is cack + 1 = +0) */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 3, 1, 0xc, MRC_M_NONE, ev[3], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 100), 0);
    ck_assert_uint_eq(acked_all(&a, ev, 10), 2);
    /* the same and +4, +5 */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 5, 1, 0x3c, MRC_M_NONE, ev[5], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 110), 0);
    ck_assert_uint_eq(acked_all(&a, ev, 10), 4);
    /* the first, late */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 3, 1, 0xc, MRC_M_NONE, ev[3], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 120), 0);
    ck_assert_uint_eq(acked_all(&a, ev, 10), 4);
    /* a bitmap starting at +3: +3 .. +7, of which +6 and +7 are new */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 7, 4, 0x1f, MRC_M_NONE, ev[7], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 130), 0);
    ck_assert_uint_eq(acked_all(&a, ev, 10), 6);
    /* cack at +1, the bitmap from +2 again (its bit 0 is now snd_una): +8 new */
    mrc_test_build_sack(&p, &a, PSN(p0, 1), 8, 1, 0x7f, MRC_M_NONE, ev[8], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 140), 0);
    ck_assert_uint_eq(acked_all(&a, ev, 10), 9);
    ck_assert_uint_eq(mrc_test_stats(&a).retx_pkts, 0);
    /* and the last, by the cumulative PSN */
    mrc_test_build_sack(&p, &a, PSN(p0, 9), 9, 1, 0, MRC_M_NONE, ev[9], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 150), 0);
    ck_assert_uint_eq(acked_all(&a, ev, 10), 10);
    mrc_test_node_free(&a);
}
END_TEST

START_TEST(test_mrc_reliability_loss_by_path_order)
{
    path_order_case(true);
    path_order_case(false);
}
END_TEST

/* A SACK that reflects the send time |ts_ns| of its trigger's copy. */
static void sack_at(mrc_test_pkt *out, const mrc_test_node *to, uint32_t cack, int16_t ack_off,
                    uint64_t bitmap, uint32_t ev, uint64_t ts_ns)
{
    mrc_pkt pkt;
    mrc_test_pkt_init(&pkt, to, MRC_OP_SACK, 0, mrc_test_ev(0, 0), cack);
    pkt.has = MRC_HAS_SETH;
    pkt.seth.ack_psn_offset = ack_off;
    pkt.seth.entropy = ev;
    pkt.seth.cack_psn = cack & 0xffffff;
    pkt.seth.sack_offset = 1;
    pkt.seth.bitmap = bitmap;
    pkt.cc.ts = (uint16_t)(ts_ns >> MRC_TS_SHIFT);
    mrc_test_build(out, &pkt, NULL, 0, to->icrc);
}

/* Eight packets at time 0, all but the first acknowledged at 1 us (the minimum RTT), the first
 * resent by RACK; then the first acknowledged |late| after its resend, by a SACK whose trigger
 * is the first and reflects |ts_ns|. Returns the statistics after it. */
static mrc_qp_stats resent_then_acked(bool in_order, uint64_t late, uint64_t ts_ns)
{
    mrc_test_node a;
    mrc_test_pkt p;
    uint32_t p0, ev[8];
    eight_sent(&a, in_order, &p0, ev);
    uint32_t ev0 = ev[0];
    sack_at(&p, &a, PSN(p0, -1), 7, 0xfe, ev0, 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 1000), 0);
    uint64_t now = 1000;
    while (mrc_test_pull(&a, &p, now) == 0) {
        now = mrc_get_expiry(a.ctx);
        ck_assert_uint_lt(now, 1000000);
        mrc_handle_expiry(a.ctx, now);
    }
    ck_assert_uint_eq(p.pkt.bth.psn, p0);
    ck_assert_uint_eq(p.pkt.bth.rtx, 1);
    sack_at(&p, &a, PSN(p0, 7), -7, 0, ev0, ts_ns ? now + ts_ns : 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, now + late), 0);
    mrc_qp_stats st = mrc_test_stats(&a);
    mrc_test_node_free(&a);
    return st;
}

/* A resend acknowledged by a SACK whose trigger's timestamp predates it was spurious, however
 * long after the resend the SACK came (a queue stretched the round trip far past the minimum
 * RTT): the reordering window widens. A trigger sent after the resend proves nothing. */
START_TEST(test_mrc_reliability_spurious_by_timestamp)
{
    mrc_qp_stats st = resent_then_acked(false, 50000, 0);
    ck_assert_uint_eq(st.retx_pkts, 1);
    ck_assert_uint_eq(st.retx_spurious, 1);
    ck_assert_uint_gt(st.reo_wnd_ns, 2000);
    st = resent_then_acked(false, 50000, 1000); /* its trigger went out 1 us after the resend */
    ck_assert_uint_eq(st.retx_spurious, 0);
    ck_assert_uint_eq(st.reo_wnd_ns, 2000);
    st = resent_then_acked(false, 200, 1000); /* sooner than half the minimum RTT */
    ck_assert_uint_eq(st.retx_spurious, 1);
}
END_TEST

/* A resend the path-order rule made that turns out spurious proves that the EV's path
 * reordered its own packets: the rule stops for the QP. A RACK resend says nothing of it. */
START_TEST(test_mrc_reliability_path_order_stops)
{
    mrc_qp_stats st = resent_then_acked(true, 50000, 0);
    ck_assert_uint_eq(st.retx_by_cause[MRC_RETX_INFERRED], 1);
    ck_assert_uint_eq(st.retx_spurious, 1);
    ck_assert(st.path_order_off);
    st = resent_then_acked(true, 50000, 1000);
    ck_assert(!st.path_order_off);
    st = resent_then_acked(false, 50000, 0);
    ck_assert(!st.path_order_off);
}
END_TEST

/* A resend that waits for an EV and is then acknowledged (its first copy arrived after all)
 * leaves no deadline behind: the timer neither fires for it nor spins on it. A regression
 * test: the stall's deadline stayed in the expiry with nothing to resend, and mrc_handle_expiry
 * pushed it a nanosecond at a time, a timer event per nanosecond in the simulator. */
START_TEST(test_mrc_reliability_stall_then_acked)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 1;
    o.mtu = 256;
    o.set.tlp_pct = 0;
    o.timeout = 4; /* 16 us */
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 2 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, mrc_test_ev(0, i), MRC_EV_DENIED, 10), 0);
    }
    /* the first packet is trimmed: its resend finds no EV and waits */
    mrc_test_build_nack(&p, &a, MRC_NACK_TRIMMED_LASTHOP, o.sq_psn, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 20), 0);
    expect_nothing(&a, 20);
    /* ... and both arrive after all */
    mrc_test_build_sack(&p, &a, PSN(o.sq_psn, 1), 0, 1, 0, MRC_M_NONE, mrc_test_ev(0, 1), 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 30), 0);
    expect_nothing(&a, 30);
    uint64_t now = 30;
    for (unsigned i = 0; i < 8; i++) {
        uint64_t e = mrc_get_expiry(a.ctx);
        if (e == UINT64_MAX) {
            break;
        }
        ck_assert_msg(e > now + 1000, "timer %u due %llu ns after the last", i,
                      (unsigned long long)(e - now));
        now = e;
        mrc_handle_expiry(a.ctx, now);
    }
    ck_assert_uint_eq(mrc_test_stats(&a).state, MRC_QPS_RTS);
    mrc_test_node_free(&a);
}
END_TEST

/* Loss inferred from SACKs: once later packets sent a reordering window after a packet are
 * acknowledged, it is resent at once; mere reordering within the window is not. */
START_TEST(test_mrc_reliability_loss_inferred_from_sacks)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.mtu = 256;
    requester(&a, &o);
    uint32_t p0 = o.sq_psn;
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 8 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    /* PSN k leaves at k us */
    for (unsigned k = 0; k < 8; k++) {
        ck_assert_int_gt(mrc_test_pull_mask(&a, &p, UINT32_MAX, k * 1000ull), 0);
        ck_assert_uint_eq(p.pkt.bth.psn, PSN(p0, (int32_t)k));
    }
    /* +1 .. +4 acknowledged (sent 1-4 us after +0): +0 is lost */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 4, 1, 0x1e, MRC_M_NONE, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 10000), 0);
    ck_assert_int_gt(mrc_test_pull(&a, &p, 10000), 0);
    ck_assert(mrc_test_is_data(&p));
    ck_assert_uint_eq(p.pkt.bth.psn, p0);
    ck_assert_uint_eq(p.pkt.bth.rtx, 1);
    expect_nothing(&a, 10000);
    ck_assert_uint_eq(mrc_test_stats(&a).retx_by_cause[MRC_RETX_INFERRED], 1);
    mrc_test_node_free(&a);

    /* the same, every packet sent at once: within the reordering window, nothing is resent */
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 8 * 256, 0x10000, 0x101, 0), 0);
    for (unsigned k = 0; k < 8; k++) {
        ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    }
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 7, 1, 0xfe, MRC_M_NONE, mrc_test_ev(0, 0), 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 1000), 0);
    expect_nothing(&a, 1000);
    ck_assert_uint_eq(mrc_test_stats(&a).retx_pkts, 0);
    mrc_test_node_free(&a);
}
END_TEST

Suite *mrc_reliability_suite(void)
{
    Suite *s = suite_create("reliability");
    TCase *tc = tcase_create("reliability");
    tcase_add_test(tc, test_mrc_reliability_sack_fields);
    tcase_add_test(tc, test_mrc_reliability_duplicate_resacked);
    tcase_add_test(tc, test_mrc_reliability_ooo_placement);
    tcase_add_test(tc, test_mrc_reliability_wimm_completes_in_order);
    tcase_add_test(tc, test_mrc_reliability_ack_drives_send_completion);
    tcase_add_test(tc, test_mrc_reliability_mpr_requester_window);
    tcase_add_test(tc, test_mrc_reliability_mpr_responder_window);
    tcase_add_test(tc, test_mrc_reliability_psn_wrap);
    tcase_add_test(tc, test_mrc_reliability_psn_wrap_responder);
    tcase_add_test(tc, test_mrc_reliability_timeouts_linear_then_exponential);
    tcase_add_test(tc, test_mrc_reliability_timeout_changed_in_rts);
    tcase_add_test(tc, test_mrc_reliability_retry_unlimited_backoff_capped);
    tcase_add_test(tc, test_mrc_reliability_retry_exhaustion_many_in_flight);
    tcase_add_test(tc, test_mrc_reliability_retry_exhaustion_all_evs_bad);
    tcase_add_test(tc, test_mrc_reliability_tail_loss_probe);
    tcase_add_test(tc, test_mrc_reliability_tail_loss_probe_lost_ack);
    tcase_add_test(tc, test_mrc_reliability_probe_answered);
    tcase_add_test(tc, test_mrc_reliability_loss_inferred_from_sacks);
    tcase_add_test(tc, test_mrc_reliability_stall_then_acked);
    tcase_add_test(tc, test_mrc_reliability_loss_by_path_order);
    tcase_add_test(tc, test_mrc_reliability_sack_repeated_bits);
    tcase_add_test(tc, test_mrc_reliability_rtt_in_stats);
    tcase_add_test(tc, test_mrc_reliability_spurious_by_timestamp);
    tcase_add_test(tc, test_mrc_reliability_path_order_stops);
    suite_add_tcase(s, tc);
    return s;
}
