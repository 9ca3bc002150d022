/* SPDX-License-Identifier: MIT */
/* Unit tests of garbage: random bytes, truncations, bit flips, unknown QPs, acknowledgements of
 * what was never sent, packets for a QP in the wrong state. Each is counted by the context and
 * changes nothing: not the QP's stats or EVs, not memory, not what is sent, not the timers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

#define PSN(base, d) mrc_psn_add((base), (d))

/* Two nodes in the middle of a transfer: a has sent 4 packets (two writes), b got the first
 * two and answered; a keeps a sample of every kind of packet for the tests to spoil. */
typedef struct fixture {
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_pkt data, sack, ack, nack, probe, ep;
    mrc_test_snap sa, sb;
    uint64_t ea, eb; /* expiries */
    mrc_ctx_stats ca, cb;
} fixture;

static void snap(fixture *f)
{
    mrc_test_snap_free(&f->sa);
    mrc_test_snap_free(&f->sb);
    mrc_test_snap_take(&f->sa, &f->a);
    mrc_test_snap_take(&f->sb, &f->b);
    f->ea = mrc_get_expiry(f->a.ctx);
    f->eb = mrc_get_expiry(f->b.ctx);
    f->ca = mrc_test_ctx_stats(&f->a);
    f->cb = mrc_test_ctx_stats(&f->b);
}

static void fixture_up(fixture *f)
{
    memset(f, 0, sizeof(*f));
    mrc_test_opts_default(&f->o);
    f->o.set.sack_every = 1;
    mrc_test_pair_new(&f->a, &f->o, &f->b, &f->o, 0);
    for (size_t i = 0; i < 4096; i++) {
        f->a.mem[i] = (uint8_t)(i * 13 + 5);
    }
    mrc_test_post_recvs(&f->b, 100, 2);
    uint32_t rkey = mrc_mr_rkey(f->b.mr);
    ck_assert_int_eq(
        mrc_test_post_write(&f->a, 1, false, 0, 0, 3072, mrc_test_va(&f->b, 0), rkey, 0), 0);
    ck_assert_int_eq(
        mrc_test_post_write(&f->a, 2, true, 9, 0, 512, mrc_test_va(&f->b, 8192), rkey, 0), 0);
    mrc_test_pkt p[4];
    ck_assert_uint_eq(mrc_test_pull_all(&f->a, p, 4, 0), 4);
    ck_assert_int_eq(mrc_test_push(&f->b, &p[0], NULL, 10), 0);
    ck_assert_int_eq(mrc_test_push(&f->b, &p[1], NULL, 10), 0);
    mrc_test_pkt c;
    while (mrc_test_pull(&f->b, &c, 10) > 0) {
        if (c.pkt.bth.opcode == MRC_OP_SACK) {
            f->sack = c;
        }
        ck_assert_int_eq(mrc_test_push(&f->a, &c, NULL, 20), 0);
    }
    ck_assert_uint_eq(f->sack.pkt.bth.opcode, MRC_OP_SACK);
    f->data = p[2];
    /* an ACK, a NACK, a probe and an endpoint request, all valid, none delivered */
    mrc_test_build_ack(&f->ack, &f->a, MRC_AETH_ACK, 0, 1);
    mrc_test_build_nack(&f->nack, &f->a, MRC_NACK_TRIMMED, PSN(f->o.sq_psn, 2), p[2].info.ev, 0);
    mrc_test_build_probe(&f->probe, &f->b, 3, PSN(f->o.sq_psn, 4), mrc_test_ev(1, 0), 1);
    uint8_t dst[16];
    mrc_test_addr(dst, 1, 0);
    uint16_t req;
    ck_assert_int_eq(mrc_ep_probe(f->a.ctx, dst, mrc_test_ev(0, 2), 0, 20, &req), 0);
    ck_assert_int_gt(mrc_test_pull(&f->a, &f->ep, 20), 0);
    ck_assert_uint_eq(f->ep.pkt.bth.opcode, MRC_OP_EP_REQ);
    ck_assert_int_eq(mrc_test_pull(&f->a, &c, 20), 0);
    ck_assert_int_eq(mrc_test_pull(&f->b, &c, 20), 0);
    snap(f);
}

static void fixture_free(fixture *f)
{
    mrc_test_snap_free(&f->sa);
    mrc_test_snap_free(&f->sb);
    mrc_test_node_free(&f->a);
    mrc_test_node_free(&f->b);
}

/* Nothing moved since the snapshot, but the counters named: the garbage count of each context
 * went up by |ga| and |gb|, no_qp by |nq|, bad_state by |bs| (of the node given). */
static void unchanged(fixture *f, const char *what)
{
    mrc_test_snap_check(&f->sa, &f->a, what);
    mrc_test_snap_check(&f->sb, &f->b, what);
    MRC_REQUIRE(mrc_get_expiry(f->a.ctx) == f->ea && mrc_get_expiry(f->b.ctx) == f->eb,
                "%s moved a timer", what);
    mrc_test_pkt p;
    MRC_REQUIRE(mrc_test_pull(&f->a, &p, 30) == 0 && mrc_test_pull(&f->b, &p, 30) == 0,
                "%s made a packet to send", what);
    mrc_wc wc;
    MRC_REQUIRE(mrc_test_poll(&f->a, &wc, 1) == 0 && mrc_test_poll(&f->b, &wc, 1) == 0,
                "%s made a completion", what);
}

static void counted(const mrc_test_node *n, const mrc_ctx_stats *before, uint64_t garbage,
                    uint64_t no_qp, uint64_t bad_state, const char *what)
{
    mrc_ctx_stats c = mrc_test_ctx_stats(n);
    MRC_REQUIRE(c.garbage - before->garbage == garbage, "%s: garbage +%llu, want +%llu", what,
                (unsigned long long)(c.garbage - before->garbage), (unsigned long long)garbage);
    MRC_REQUIRE(c.no_qp - before->no_qp == no_qp, "%s: no_qp +%llu, want +%llu", what,
                (unsigned long long)(c.no_qp - before->no_qp), (unsigned long long)no_qp);
    MRC_REQUIRE(c.bad_state - before->bad_state == bad_state, "%s: bad_state +%llu, want +%llu",
                what, (unsigned long long)(c.bad_state - before->bad_state),
                (unsigned long long)bad_state);
    uint64_t by = 0;
    for (int i = 0; i < 8; i++) {
        by += c.garbage_by_err[i] - before->garbage_by_err[i];
    }
    MRC_REQUIRE(by == garbage, "%s: garbage by fault adds up to %llu, not %llu", what,
                (unsigned long long)by, (unsigned long long)garbage);
}

START_TEST(test_mrc_garbage_random_bytes)
{
    fixture f;
    fixture_up(&f);
    uint64_t seed = 0x5eed0001;
    static uint8_t buf[2100];
    unsigned n = 0;
    for (unsigned i = 0; i < 4000; i++) {
        size_t len = mrc_test_rand_below(&seed, sizeof(buf));
        mrc_test_rand_fill(&seed, buf, len);
        if (i & 1 && len > 64) {
            /* a plausible start: a real packet's IPv6 and UDP headers, the rest random */
            const mrc_test_pkt *src = i & 2 ? &f.data : &f.sack;
            memcpy(buf, src->buf, 48);
        }
        mrc_test_node *to = i & 4 ? &f.a : &f.b;
        int rv = mrc_read_pkt(to->ctx, buf, len, NULL, 30);
        MRC_REQUIRE(rv == MRC_ERR_PROTO, "random packet %u (%zu bytes) accepted", i, len);
        n++;
    }
    counted(&f.a, &f.ca, n / 2, 0, 0, "random bytes to a");
    counted(&f.b, &f.cb, n / 2, 0, 0, "random bytes to b");
    ck_assert_uint_eq(mrc_test_ctx_stats(&f.a).pkts_rcvd - f.ca.pkts_rcvd, n / 2);
    unchanged(&f, "random bytes");
    fixture_free(&f);
}
END_TEST

/* Every packet kind cut at every length short of whole. */
START_TEST(test_mrc_garbage_truncations)
{
    fixture f;
    fixture_up(&f);
    const struct {
        const char *what;
        mrc_test_pkt *p;
        mrc_test_node *to;
    } kinds[] = {
        {"data", &f.data, &f.b}, {"SACK", &f.sack, &f.a},   {"ACK", &f.ack, &f.a},
        {"NACK", &f.nack, &f.a}, {"probe", &f.probe, &f.b}, {"EP request", &f.ep, &f.b},
    };
    uint64_t na = 0, nb = 0;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        for (size_t len = 0; len < kinds[k].p->len; len++) {
            int rv = mrc_read_pkt(kinds[k].to->ctx, kinds[k].p->buf, len, NULL, 30);
            MRC_REQUIRE(rv == MRC_ERR_PROTO, "%s cut to %zu of %zu bytes accepted", kinds[k].what,
                        len, kinds[k].p->len);
            if (kinds[k].to == &f.a) {
                na++;
            } else {
                nb++;
            }
        }
    }
    counted(&f.a, &f.ca, na, 0, 0, "truncations to a");
    counted(&f.b, &f.cb, nb, 0, 0, "truncations to b");
    unchanged(&f, "truncations");
    fixture_free(&f);
}
END_TEST

/* Whether the ICRC covers bit |bit| of a packet (RoCEv2 masks the traffic class, flow label,
 * hop limit, UDP checksum and BTH resv8a). */
static bool icrc_covered(size_t bit)
{
    size_t byte = bit / 8;
    unsigned b = 7 - (unsigned)(bit % 8); /* bit 7 is the first on the wire */
    if (byte == 0) {
        return b >= 4; /* the version; the TC's high nibble follows */
    }
    if (byte == 1 || byte == 2 || byte == 3 || byte == 7) {
        return false; /* TC low nibble and flow label; hop limit */
    }
    if (byte == 46 || byte == 47 || byte == 52) {
        return false; /* UDP checksum; BTH resv8a */
    }
    return true;
}

/* Every single-bit flip the ICRC covers, in each packet kind, is caught. */
START_TEST(test_mrc_garbage_bit_flips)
{
    fixture f;
    fixture_up(&f);
    const struct {
        const char *what;
        mrc_test_pkt *p;
        mrc_test_node *to;
    } kinds[] = {
        {"data", &f.data, &f.b}, {"SACK", &f.sack, &f.a},   {"ACK", &f.ack, &f.a},
        {"NACK", &f.nack, &f.a}, {"probe", &f.probe, &f.b}, {"EP request", &f.ep, &f.b},
    };
    static uint8_t buf[MRC_TEST_PKT_ROOM];
    uint64_t na = 0, nb = 0;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        size_t len = kinds[k].p->len;
        for (size_t bit = 0; bit < 8 * len; bit++) {
            if (!icrc_covered(bit)) {
                continue;
            }
            memcpy(buf, kinds[k].p->buf, len);
            buf[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
            int rv = mrc_read_pkt(kinds[k].to->ctx, buf, len, NULL, 30);
            MRC_REQUIRE(rv == MRC_ERR_PROTO, "%s with bit %zu flipped accepted", kinds[k].what,
                        bit);
            if (kinds[k].to == &f.a) {
                na++;
            } else {
                nb++;
            }
        }
    }
    counted(&f.a, &f.ca, na, 0, 0, "bit flips to a");
    counted(&f.b, &f.cb, nb, 0, 0, "bit flips to b");
    /* most are ICRC failures, counted as such */
    ck_assert_uint_gt(mrc_test_ctx_stats(&f.b).garbage_by_err[6] - f.cb.garbage_by_err[6], nb / 2);
    unchanged(&f, "bit flips");
    fixture_free(&f);
}
END_TEST

/* |p| again, addressed to QPN |qpn|, with a valid ICRC. */
static void readdress(mrc_test_pkt *out, const mrc_test_pkt *p, uint32_t qpn)
{
    mrc_test_pkt tmp = *p;
    mrc_test_pkt_decode(&tmp, true);
    tmp.pkt.bth.dqpn = qpn;
    mrc_test_build(out, &tmp.pkt, tmp.pkt.payload, tmp.pkt.payload_len, true);
}

/* Valid packets for QPs the context does not have: reserved numbers, unused ones, freed ones. */
START_TEST(test_mrc_garbage_unknown_qpn)
{
    fixture f;
    fixture_up(&f);
    /* a QP made and freed in each context */
    mrc_qp *qa, *qb;
    mrc_qp_init_attr ia = {.send_cq = f.a.cq,
                           .recv_cq = f.a.cq,
                           .max_send_wr = 1,
                           .max_recv_wr = 1,
                           .max_send_sge = 1};
    ck_assert_int_eq(mrc_qp_new(f.a.ctx, &ia, &qa), 0);
    ia.send_cq = ia.recv_cq = f.b.cq;
    ck_assert_int_eq(mrc_qp_new(f.b.ctx, &ia, &qb), 0);
    uint32_t freed_a = mrc_qp_num(qa), freed_b = mrc_qp_num(qb);
    mrc_qp_free(qa);
    mrc_qp_free(qb);
    snap(&f);
    const uint32_t qpns[] = {0, 1, 2, 3, 15, 0xffffff, 1024 + 16, mrc_qp_num(f.a.qp) + 7};
    mrc_test_pkt *kinds_a[] = {&f.sack, &f.ack, &f.nack};
    mrc_test_pkt *kinds_b[] = {&f.data, &f.probe};
    mrc_test_pkt q;
    uint64_t na = 0, nb = 0;
    for (size_t i = 0; i <= sizeof(qpns) / sizeof(qpns[0]); i++) {
        uint32_t qa_n = i < sizeof(qpns) / sizeof(qpns[0]) ? qpns[i] : freed_a;
        uint32_t qb_n = i < sizeof(qpns) / sizeof(qpns[0]) ? qpns[i] : freed_b;
        for (size_t k = 0; k < 3; k++) {
            readdress(&q, kinds_a[k], qa_n);
            MRC_REQUIRE(mrc_test_push(&f.a, &q, NULL, 30) == MRC_ERR_PROTO,
                        "packet for QPN %u accepted", qa_n);
            na++;
        }
        for (size_t k = 0; k < 2; k++) {
            readdress(&q, kinds_b[k], qb_n);
            MRC_REQUIRE(mrc_test_push(&f.b, &q, NULL, 30) == MRC_ERR_PROTO,
                        "packet for QPN %u accepted", qb_n);
            nb++;
        }
    }
    counted(&f.a, &f.ca, 0, na, 0, "unknown QPNs to a");
    counted(&f.b, &f.cb, 0, nb, 0, "unknown QPNs to b");
    unchanged(&f, "packets for unknown QPs");
    fixture_free(&f);
}
END_TEST

/* A SACK whose cumulative PSN is beyond anything sent. */
START_TEST(test_mrc_garbage_sack_never_sent)
{
    fixture f;
    fixture_up(&f);
    /* a sent PSNs sq .. sq+3 */
    const int32_t cacks[] = {4, 5, 100, 0x7fffff};
    mrc_test_pkt s;
    for (size_t i = 0; i < sizeof(cacks) / sizeof(cacks[0]); i++) {
        mrc_test_build_sack(&s, &f.a, PSN(f.o.sq_psn, cacks[i]), 0, 1, 0xff, MRC_M_SKIP_ONCE,
                            f.data.info.ev, 0);
        ck_assert_int_eq(mrc_test_push(&f.a, &s, NULL, 30), MRC_ERR_PROTO);
    }
    counted(&f.a, &f.ca, 0, 0, 4, "SACKs of PSNs never sent");
    unchanged(&f, "SACKs of PSNs never sent");
    fixture_free(&f);
}
END_TEST

/* Bitmap bits for PSNs not sent yet are no acknowledgement of them once they are sent. */
START_TEST(test_mrc_garbage_sack_bitmap_ahead_ignored)
{
    fixture f;
    fixture_up(&f);
    /* cack as it is (sq + 1); the bitmap claims sq + 4 .. sq + 67, never sent */
    mrc_test_pkt s;
    mrc_test_build_sack(&s, &f.a, PSN(f.o.sq_psn, 1), 0, 3, UINT64_MAX, MRC_M_NONE, f.data.info.ev,
                        0);
    ck_assert_int_eq(mrc_test_push(&f.a, &s, NULL, 30), 0);
    ck_assert_uint_eq(mrc_test_stats(&f.a).inflight_pkts, 2);
    /* now they are sent, and nothing answers: they are outstanding, and time out */
    ck_assert_int_eq(mrc_test_post_write(&f.a, 3, false, 0, 0, 4096, mrc_test_va(&f.b, 0),
                                         mrc_mr_rkey(f.b.mr), 30),
                     0);
    mrc_test_pkt p;
    unsigned n = 0;
    while (mrc_test_pull(&f.a, &p, 30) > 0) {
        n++;
    }
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(mrc_test_stats(&f.a).inflight_pkts, 6);
    uint64_t now = 30;
    while (mrc_test_stats(&f.a).retx_pkts < 6 && now < 100000000) {
        now = mrc_get_expiry(f.a.ctx) > now ? mrc_get_expiry(f.a.ctx) : now;
        mrc_handle_expiry(f.a.ctx, now);
        while (mrc_test_pull(&f.a, &p, now) > 0) {
        }
    }
    ck_assert_uint_ge(mrc_test_stats(&f.a).retx_pkts, 6);
    fixture_free(&f);
}
END_TEST

/* NACKs for PSNs never sent, of every reason. */
START_TEST(test_mrc_garbage_nack_never_sent)
{
    char bad[512] = "";
    size_t used = 0;
    for (int r = 0; r < MRC_NACK_REASONS; r++) {
        fixture f;
        fixture_up(&f);
        uint8_t code = mrc_nack_code(r);
        mrc_test_pkt n;
        mrc_test_build_nack(&n, &f.a, code, PSN(f.o.sq_psn, 10), f.data.info.ev, 0);
        MRC_REQUIRE(mrc_test_push(&f.a, &n, NULL, 30) == MRC_ERR_PROTO,
                    "a NACK (%s) for a PSN never sent", mrc_nack_name(r));
        mrc_qp_stats st = mrc_test_stats(&f.a);
        mrc_ctx_stats c = mrc_test_ctx_stats(&f.a);
        const char *d = mrc_test_qp_stats_diff(&f.sa.st, &st);
        mrc_wc wc;
        bool failed = st.state != MRC_QPS_RTS || mrc_test_poll(&f.a, &wc, 1) != 0;
        if ((failed || d[0] || c.bad_state != f.ca.bad_state + 1) && used < sizeof(bad) - 100) {
            used += (size_t)snprintf(bad + used, sizeof(bad) - used, " [%s: %s%s, bad_state +%llu]",
                                     mrc_nack_name(r), failed ? "QP failed; " : "", d[0] ? d : "-",
                                     (unsigned long long)(c.bad_state - f.ca.bad_state));
        }
        fixture_free(&f);
    }
    /* a regression test: at 35bd501 mrc_req_on_nack counted nacks_rcvd before it knew the PSN
     * was outstanding, took a PSN beyond snd_nxt for a late NACK, and failed the QP on
     * UNEXP_EVENT before looking at the PSN at all (fixed by b0df818) */
    ck_assert_msg(used == 0, "NACKs for PSNs never sent:%s", bad);
}
END_TEST

/* A Transport ACK for messages never sent. */
START_TEST(test_mrc_garbage_ack_absurd_msn)
{
    const uint32_t msns[] = {3, 100, 0x7fffff};
    for (size_t i = 0; i < sizeof(msns) / sizeof(msns[0]); i++) {
        fixture f;
        fixture_up(&f);
        /* a has sent messages 1 and 2, neither complete */
        mrc_test_pkt k;
        mrc_test_build_ack(&k, &f.a, MRC_AETH_ACK, msns[i], 0);
        ck_assert_int_eq(mrc_test_push(&f.a, &k, NULL, 30), MRC_ERR_PROTO);
        mrc_wc wc;
        /* a regression test: at 35bd501 mrc_req_on_ack completed every sent request the ACK's
         * MSN covered without checking that the MSN was ever sent, so an ACK for message 3
         * completed messages 1 and 2 though their packets were still missing (fixed by
         * b0df818) */
        ck_assert_msg(mrc_test_poll(&f.a, &wc, 1) == 0,
                      "an ACK for MSN %u (never sent) completed request %llu", msns[i],
                      (unsigned long long)wc.wr_id);
        counted(&f.a, &f.ca, 0, 0, 1, "ACK with an absurd MSN");
        unchanged(&f, "an ACK with an absurd MSN");
        fixture_free(&f);
    }
}
END_TEST

/* A Transport ACK with a syndrome that is neither ACK nor NAK, a NACK with a reason MRC does not
 * define: the decoder refuses them. */
START_TEST(test_mrc_garbage_reserved_codes)
{
    const uint8_t syn[] = {0x20, 0x3f, 0x40, 0x5f, 0x80, 0x9f, 0xff};
    const uint8_t reasons[] = {0x00, 0x03, 0x05, 0x08, 0x09, 0x0c, 0x18, 0x1a, 0x55, 0xff};
    fixture f;
    fixture_up(&f);
    mrc_test_pkt k;
    mrc_pkt pkt;
    for (size_t i = 0; i < sizeof(syn) / sizeof(syn[0]); i++) {
        mrc_test_pkt_init(&pkt, &f.a, MRC_OP_ACK, 0, mrc_test_ev(0, 0), 0);
        pkt.has = MRC_HAS_AETH;
        pkt.aeth.syndrome = syn[i];
        pkt.aeth.msn = 2;
        mrc_test_build_raw(&k, &pkt, NULL, 0, true);
        MRC_REQUIRE(mrc_test_push(&f.a, &k, NULL, 30) == MRC_ERR_PROTO,
                    "ACK syndrome 0x%02x accepted", syn[i]);
    }
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        mrc_test_pkt_init(&pkt, &f.a, MRC_OP_NACK, 0, mrc_test_ev(0, 0), PSN(f.o.sq_psn, 2));
        pkt.has = MRC_HAS_NETH;
        pkt.neth.reason = reasons[i];
        pkt.neth.nack_psn = PSN(f.o.sq_psn, 2);
        pkt.neth.entropy = f.data.info.ev;
        mrc_test_build_raw(&k, &pkt, NULL, 0, true);
        MRC_REQUIRE(mrc_test_push(&f.a, &k, NULL, 30) == MRC_ERR_PROTO,
                    "NACK reason 0x%02x accepted", reasons[i]);
    }
    size_t n = sizeof(syn) / sizeof(syn[0]) + sizeof(reasons) / sizeof(reasons[0]);
    counted(&f.a, &f.ca, n, 0, 0, "reserved codes");
    ck_assert_uint_eq(mrc_test_ctx_stats(&f.a).garbage_by_err[7] - f.ca.garbage_by_err[7], n);
    unchanged(&f, "reserved codes");
    fixture_free(&f);
}
END_TEST

/* A QP not ready for a packet: requests before RTR, acknowledgements before RTS, anything in
 * ERR or RESET. */
START_TEST(test_mrc_garbage_wrong_state)
{
    static const mrc_qp_state states[] = {MRC_QPS_RESET, MRC_QPS_INIT, MRC_QPS_RTR, MRC_QPS_ERR};
    for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
        fixture f;
        fixture_up(&f);
        /* c: a third node whose QP is in the state under test */
        mrc_test_node c;
        mrc_test_opts o = f.o;
        mrc_test_node_new(&c, &o, 1);
        mrc_qp_attr a;
        mrc_test_attr(&a, &o, 1, MRC_TEST_PEER_QPN);
        static const uint32_t masks[] = {MRC_TEST_INIT_MASK, MRC_TEST_RTR_MASK, MRC_TEST_RTS_MASK};
        for (mrc_qp_state st = MRC_QPS_INIT; st <= states[s] && st <= MRC_QPS_RTS; st++) {
            a.qp_state = st;
            ck_assert_int_eq(mrc_modify_qp(c.qp, &a, masks[st - 1], 0), 0);
        }
        if (states[s] == MRC_QPS_ERR) {
            a.qp_state = MRC_QPS_ERR;
            ck_assert_int_eq(mrc_modify_qp(c.qp, &a, MRC_QP_STATE, 0), 0);
        }
        mrc_test_snap sc;
        mrc_test_snap_take(&sc, &c);
        mrc_ctx_stats before = mrc_test_ctx_stats(&c);
        uint64_t expiry = mrc_get_expiry(c.ctx);
        /* requests are fine from RTR on; acknowledgements only in RTS */
        bool req_ok = states[s] == MRC_QPS_RTR;
        mrc_test_pkt *kinds[] = {&f.data, &f.probe, &f.sack, &f.ack, &f.nack};
        uint64_t bad = 0;
        for (size_t k = 0; k < 5; k++) {
            if (req_ok && k < 2) {
                continue;
            }
            mrc_test_pkt q;
            readdress(&q, kinds[k], mrc_qp_num(c.qp));
            MRC_REQUIRE(mrc_test_push(&c, &q, NULL, 30) == MRC_ERR_PROTO,
                        "opcode 0x%02x accepted in state %u", q.pkt.bth.opcode, states[s]);
            bad++;
        }
        counted(&c, &before, 0, 0, bad, "packets in the wrong state");
        mrc_test_snap_check(&sc, &c, "a packet in the wrong state");
        ck_assert_uint_eq(mrc_get_expiry(c.ctx), expiry);
        mrc_test_pkt p;
        ck_assert_int_eq(mrc_test_pull(&c, &p, 30), 0);
        mrc_test_snap_free(&sc);
        mrc_test_node_free(&c);
        fixture_free(&f);
    }
}
END_TEST

Suite *mrc_garbage_suite(void)
{
    Suite *s = suite_create("garbage");
    TCase *tc = tcase_create("garbage");
    tcase_add_test(tc, test_mrc_garbage_random_bytes);
    tcase_add_test(tc, test_mrc_garbage_truncations);
    tcase_add_test(tc, test_mrc_garbage_bit_flips);
    tcase_add_test(tc, test_mrc_garbage_unknown_qpn);
    tcase_add_test(tc, test_mrc_garbage_sack_never_sent);
    tcase_add_test(tc, test_mrc_garbage_sack_bitmap_ahead_ignored);
    tcase_add_test(tc, test_mrc_garbage_nack_never_sent);
    tcase_add_test(tc, test_mrc_garbage_ack_absurd_msn);
    tcase_add_test(tc, test_mrc_garbage_reserved_codes);
    tcase_add_test(tc, test_mrc_garbage_wrong_state);
    suite_add_tcase(s, tc);
    return s;
}
