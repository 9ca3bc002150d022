/* SPDX-License-Identifier: MIT */
/* Unit tests of every NACK reason: made by the responder from the right condition, handled by
 * the requester (resend at once, resend later, or fail), and counted on both sides. */
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

#define PSN(base, d) mrc_psn_add((base), (d))
#define NACK_RETRY 20000

/* Defaults for these tests: a requester a and a responder b, resource NACKs resent 20 us later. */
static void opts(mrc_test_opts *o)
{
    mrc_test_opts_default(o);
    o->set.nack_retry_ns = NACK_RETRY;
    o->set.sack_every = 2;
    o->timeout = 12; /* 4.2 ms: no timer fires in these tests */
}

static void fill(mrc_test_node *n, size_t len, uint8_t salt)
{
    for (size_t i = 0; i < len; i++) {
        n->mem[i] = (uint8_t)(i * 29 + salt);
    }
}

/* NACKs of |reason| sent by b and received by a, and no other reason on either side. */
static void nack_counts(const mrc_test_node *a, const mrc_test_node *b, uint8_t reason,
                        uint64_t sent, uint64_t rcvd)
{
    mrc_qp_stats sa = mrc_test_stats(a), sb = mrc_test_stats(b);
    int want = mrc_nack_index(reason);
    ck_assert_int_ge(want, 0);
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        ck_assert_msg(sb.nacks_sent[i] == (i == want ? sent : 0), "nacks_sent[%s] = %llu",
                      mrc_nack_name(i), (unsigned long long)sb.nacks_sent[i]);
        ck_assert_msg(sa.nacks_rcvd[i] == (i == want ? rcvd : 0), "nacks_rcvd[%s] = %llu",
                      mrc_nack_name(i), (unsigned long long)sa.nacks_rcvd[i]);
    }
}

/* Moves everything b has to a; returns the NACKs among them, the last in |last|. */
static unsigned b_to_a(mrc_test_node *b, mrc_test_node *a, uint64_t now, mrc_test_pkt *last)
{
    mrc_test_pkt p;
    unsigned n = 0;
    while (mrc_test_pull(b, &p, now) > 0) {
        if (p.pkt.bth.opcode == MRC_OP_NACK) {
            n++;
            if (last) {
                *last = p;
            }
        }
        ck_assert_int_eq(mrc_test_push(a, &p, NULL, now), 0);
    }
    if (last && n) {
        mrc_test_pkt_decode(last, b->icrc);
    }
    return n;
}

/* The next data packet a sends, running its timers from |now| with nothing answered; its time. */
static uint64_t next_data(mrc_test_node *a, uint64_t now, mrc_test_pkt *p)
{
    for (unsigned i = 0; i < 10000; i++) {
        while (mrc_test_pull(a, p, now) > 0) {
            if (mrc_test_is_data(p)) {
                return now;
            }
        }
        uint64_t e = mrc_get_expiry(a->ctx);
        ck_assert_msg(e != UINT64_MAX, "no data and no timer");
        now = e > now ? e : now;
        mrc_handle_expiry(a->ctx, now);
    }
    ck_abort_msg("no data");
    return 0;
}

/* The header-only remains of a data packet a trimming switch cut. */
static void trim(mrc_test_pkt *p)
{
    p->len = MRC_BASE_LEN + mrc_wire_ext_len(p->pkt.bth.opcode, p->pkt.bth.ts);
}

static void trimmed_case(bool lasthop)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    opts(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    fill(&a, 3072, 1);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 3072, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p[3];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 3, 0), 3);
    uint32_t ev1 = p[1].info.ev;
    trim(&p[1]);
    mrc_rx_info rx = mrc_test_rx(&p[1]);
    rx.dscp = lasthop ? o.set.dscp_trimmed_lasthop : o.set.dscp_trimmed;
    ck_assert_int_eq(mrc_test_push(&b, &p[0], NULL, 10), 0);
    ck_assert_int_eq(mrc_test_push(&b, &p[1], &rx, 10), 0);
    ck_assert_int_eq(mrc_test_push(&b, &p[2], NULL, 10), 0);
    /* nothing of the trimmed packet reached memory */
    for (size_t i = 1024; i < 2048; i++) {
        MRC_REQUIRE(b.mem[i] == 0, "byte %zu of a trimmed packet placed", i);
    }
    mrc_test_pkt nk;
    ck_assert_uint_eq(b_to_a(&b, &a, 20, &nk), 1);
    uint8_t reason = lasthop ? MRC_NACK_TRIMMED_LASTHOP : MRC_NACK_TRIMMED;
    ck_assert_uint_eq(nk.pkt.neth.reason, reason);
    ck_assert_uint_eq(nk.pkt.neth.nack_psn, PSN(o.sq_psn, 1));
    ck_assert_uint_eq(nk.pkt.neth.entropy, ev1);
    ck_assert(nk.info.control);
    ck_assert_uint_eq(nk.info.dscp, o.set.dscp_control);
    nack_counts(&a, &b, reason, 1, 1);
    /* the EV: a mid-fabric trim skips it, a last-hop trim (incast) does not */
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev1);
    mrc_qp_stats sa = mrc_test_stats(&a);
    ck_assert_uint_eq(es.state, lasthop ? MRC_EV_GOOD : MRC_EV_SKIP);
    ck_assert_uint_eq(es.trims, lasthop ? 0 : 1);
    ck_assert_uint_eq(sa.ev_transitions[MRC_EV_GOOD][MRC_EV_SKIP], lasthop ? 0 : 1);
    /* resent at once, flagged, on another EV */
    mrc_test_pkt r;
    ck_assert_int_gt(mrc_test_pull(&a, &r, 20), 0);
    ck_assert(mrc_test_is_data(&r));
    ck_assert_uint_eq(r.pkt.bth.psn, PSN(o.sq_psn, 1));
    ck_assert_uint_eq(r.pkt.bth.rtx, 1);
    ck_assert_uint_eq(r.info.dscp, o.set.dscp_retx);
    ck_assert_uint_ne(r.info.ev, ev1);
    sa = mrc_test_stats(&a);
    ck_assert_uint_eq(sa.retx_by_cause[MRC_RETX_NACK], 1);
    ck_assert_uint_eq(sa.retx_pkts, 1);
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, 30), 0);
    mrc_test_pump(&a, &b, 30, NULL, NULL);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 3072);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}

/* TRIMMED: the trimmed header gets a NACK; the EV goes to SKIP; the packet is resent at once. */
START_TEST(test_mrc_nack_trimmed)
{
    trimmed_case(false);
}
END_TEST

/* TRIMMED_LASTHOP: resent at once, the EV untouched (incast at the destination). */
START_TEST(test_mrc_nack_trimmed_lasthop)
{
    trimmed_case(true);
}
END_TEST

/* A packet trimmed again and again (an incast that lasts) is resent every time and completes:
 * NACK resends do not use up the retry budget, here 2, meant for silence. */
START_TEST(test_mrc_nack_trimmed_beyond_retry_budget)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    opts(&o);
    o.linear_cnt = 1;
    o.exp_cnt = 1;
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    fill(&a, 1024, 3);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 1024, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p;
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    uint64_t now = 10;
    for (unsigned i = 0; i < 6; i++, now += 10) {
        ck_assert(mrc_test_is_data(&p));
        ck_assert_uint_eq(p.pkt.bth.psn, o.sq_psn);
        trim(&p);
        mrc_rx_info rx = mrc_test_rx(&p);
        rx.dscp = o.set.dscp_trimmed_lasthop;
        ck_assert_int_eq(mrc_test_push(&b, &p, &rx, now), 0);
        ck_assert_uint_eq(b_to_a(&b, &a, now, NULL), 1);
        ck_assert_int_gt(mrc_test_pull(&a, &p, now), 0);
    }
    ck_assert_uint_eq(mrc_test_stats(&a).state, MRC_QPS_RTS);
    ck_assert_int_eq(mrc_test_push(&b, &p, NULL, now), 0);
    mrc_test_pump(&a, &b, now, NULL, NULL);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 1024);
    ck_assert_uint_eq(mrc_test_stats(&a).retx_by_cause[MRC_RETX_NACK], 6);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A resource NACK of |reason| for PSN |psn| arrived at a at |now|: nothing is resent before
 * nack_retry_ns, then the PSN is; returns the resend. */
static void resent_later(mrc_test_node *a, uint32_t psn, uint64_t now, mrc_test_pkt *r)
{
    mrc_test_pkt p;
    while (mrc_test_pull(a, &p, now) > 0) {
        ck_assert_msg(!mrc_test_is_data(&p) || p.pkt.bth.psn != psn,
                      "PSN 0x%x resent at once after a resource NACK", psn);
    }
    uint64_t t = next_data(a, now, r);
    ck_assert_msg(t == now + NACK_RETRY, "resent %llu ns after the NACK, not %d",
                  (unsigned long long)(t - now), NACK_RETRY);
    ck_assert_uint_eq(r->pkt.bth.psn, psn);
    ck_assert_uint_eq(r->pkt.bth.rtx, 1);
}

/* NO_BITMAP: more out-of-order PSNs than max_ooo_tracked; resent after nack_retry_ns. */
START_TEST(test_mrc_nack_no_bitmap)
{
    mrc_test_opts o, ob;
    mrc_test_node a, b;
    opts(&o);
    ob = o;
    ob.set.max_ooo_tracked = 2;
    mrc_test_pair_new(&a, &o, &b, &ob, 0);
    fill(&a, 6144, 2);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 6144, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p[6];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 6, 0), 6);
    static const int order[] = {1, 2, 3, 4, 0, 5};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(mrc_test_push(&b, &p[order[i]], NULL, 10), 0);
    }
    /* +1 and +2 held; +3 and +4 refused; +0 closes the gap; +5 is one out of order again */
    for (size_t i = 3072; i < 5120; i++) {
        MRC_REQUIRE(b.mem[i] == 0, "byte %zu of a refused packet placed", i);
    }
    ck_assert_uint_eq(b_to_a(&b, &a, 20, NULL), 2);
    nack_counts(&a, &b, MRC_NACK_NO_BITMAP, 2, 2);
    mrc_test_pkt r;
    resent_later(&a, PSN(o.sq_psn, 3), 20, &r);
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, 20 + NACK_RETRY), 0);
    ck_assert_int_gt(mrc_test_pull(&a, &r, 20 + NACK_RETRY), 0);
    ck_assert_uint_eq(r.pkt.bth.psn, PSN(o.sq_psn, 4));
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, 20 + NACK_RETRY), 0);
    mrc_test_pump(&a, &b, 20 + NACK_RETRY, NULL, NULL);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 6144);
    mrc_qp_stats sa = mrc_test_stats(&a);
    ck_assert_uint_eq(sa.retx_by_cause[MRC_RETX_NACK], 2);
    ck_assert_uint_eq(sa.retx_pkts, 2);
    /* a resource NACK is no verdict on the path */
    ck_assert_uint_eq(sa.ev_count[MRC_EV_GOOD], 8);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* NO_PKT_BUFFER: the host had no buffer for the payload (MRC_RX_NOBUF). */
START_TEST(test_mrc_nack_no_pkt_buffer)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    opts(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    fill(&a, 1000, 3);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 1000, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p;
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    mrc_rx_info rx = mrc_test_rx(&p);
    rx.flags = MRC_RX_NOBUF;
    ck_assert_int_eq(mrc_test_push(&b, &p, &rx, 10), 0);
    ck_assert_uint_eq(b.mem[0], 0);
    ck_assert_uint_eq(mrc_test_stats(&b).data_pkts_rcvd, 0);
    mrc_test_pkt nk;
    ck_assert_uint_eq(b_to_a(&b, &a, 20, &nk), 1);
    ck_assert_uint_eq(nk.pkt.neth.nack_psn, o.sq_psn);
    nack_counts(&a, &b, MRC_NACK_NO_PKT_BUFFER, 1, 1);
    mrc_test_pkt r;
    resent_later(&a, o.sq_psn, 20, &r);
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, 20 + NACK_RETRY), 0);
    mrc_test_pump(&a, &b, 20 + NACK_RETRY, NULL, NULL);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 1000);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* NO_RESOURCE: a Write with Immediate and no receive posted (MRC has no RNR). The receive
 * posted meanwhile takes the resend. */
START_TEST(test_mrc_nack_no_resource)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    opts(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    fill(&a, 2048, 4);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, true, 77, 0, 2048, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p[2];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 2, 0), 2);
    ck_assert_int_eq(mrc_test_push(&b, &p[0], NULL, 10), 0);
    ck_assert_int_eq(mrc_test_push(&b, &p[1], NULL, 10), 0);
    mrc_test_pkt nk;
    ck_assert_uint_eq(b_to_a(&b, &a, 20, &nk), 1);
    ck_assert_uint_eq(nk.pkt.neth.nack_psn, PSN(o.sq_psn, 1));
    nack_counts(&a, &b, MRC_NACK_NO_RESOURCE, 1, 1);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&b, &wc, 1), 0);
    mrc_test_post_recvs(&b, 40, 1);
    mrc_test_pkt r;
    resent_later(&a, PSN(o.sq_psn, 1), 20, &r);
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, 20 + NACK_RETRY), 0);
    ck_assert_int_eq(mrc_test_poll(&b, &wc, 1), 1);
    ck_assert_uint_eq(wc.wr_id, 40);
    ck_assert_uint_eq(wc.imm_data, 77);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    mrc_test_pump(&a, &b, 20 + NACK_RETRY, NULL, NULL);
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 2048);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* PSN_OOR_WINDOW: the requester's window (mpr 2) is wider than the responder's (mpr_dest 1);
 * a PSN beyond cack + 128 is refused and resent later, when it fits. */
START_TEST(test_mrc_nack_psn_oor_window)
{
    mrc_test_opts oa, ob;
    mrc_test_node a, b;
    opts(&oa);
    oa.mtu = 256;
    oa.mpr = 2;
    ob = oa;
    ob.mpr_dest = 1;
    mrc_test_pair_new(&a, &oa, &b, &ob, 0);
    fill(&a, 200 * 256, 5);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 200 * 256, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    mrc_test_pkt *p = calloc(200, sizeof(*p));
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 200, 0), 200);
    mrc_test_pkt_decode(&p[150], true);
    ck_assert_int_eq(mrc_test_push(&b, &p[150], NULL, 10), 0);
    mrc_test_pkt nk;
    ck_assert_uint_eq(b_to_a(&b, &a, 10, &nk), 1);
    ck_assert_uint_eq(nk.pkt.neth.reason, MRC_NACK_PSN_OOR_WINDOW);
    ck_assert_uint_eq(nk.pkt.neth.nack_psn, PSN(oa.sq_psn, 150));
    for (int k = 0; k < 200; k++) {
        if (k != 150) {
            mrc_test_pkt_decode(&p[k], true);
            ck_assert_int_eq(mrc_test_push(&b, &p[k], NULL, 10), 0);
        }
    }
    b_to_a(&b, &a, 10, NULL);
    nack_counts(&a, &b, MRC_NACK_PSN_OOR_WINDOW, 1, 1);
    mrc_test_pkt r;
    resent_later(&a, PSN(oa.sq_psn, 150), 10, &r);
    ck_assert_int_eq(mrc_test_push(&b, &r, NULL, 10 + NACK_RETRY), 0);
    mrc_test_pump(&a, &b, 10 + NACK_RETRY, NULL, NULL);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 200 * 256);
    nack_counts(&a, &b, MRC_NACK_PSN_OOR_WINDOW, 1, 1);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* UNEXP_EVENT: a write the responder cannot honour fails the requester with REM_OP_ERR on the
 * request, the rest flushed, and places nothing. */
typedef enum unexp_kind {
    BAD_RKEY,
    BAD_VA_END,
    BAD_VA_BELOW,
    MR_NO_REMOTE,
    QP_NO_REMOTE
} unexp_kind;

static void unexp_case(unexp_kind kind)
{
    mrc_test_opts oa, ob;
    mrc_test_node a, b;
    opts(&oa);
    ob = oa;
    if (kind == QP_NO_REMOTE) {
        ob.qp_access = 0;
    }
    mrc_test_pair_new(&a, &oa, &b, &ob, 0);
    fill(&a, 1024, 6);
    uint32_t rkey = mrc_mr_rkey(b.mr);
    uint64_t va = mrc_test_va(&b, 0);
    static uint8_t local_only[4096];
    mrc_mr *lmr = NULL;
    switch (kind) {
    case BAD_RKEY:
        rkey += 0x100;
        break;
    case BAD_VA_END:
        va = mrc_test_va(&b, b.memlen - 512);
        break;
    case BAD_VA_BELOW:
        va -= 64;
        break;
    case MR_NO_REMOTE:
        ck_assert_int_eq(
            mrc_reg_mr(b.ctx, local_only, sizeof(local_only), MRC_ACCESS_LOCAL_WRITE, &lmr), 0);
        rkey = mrc_mr_rkey(lmr);
        va = (uint64_t)(uintptr_t)local_only;
        break;
    case QP_NO_REMOTE:
        break;
    }
    uint8_t before[512];
    memcpy(before, b.mem + b.memlen - 512, 512);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 1024, va, rkey, 0), 0);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 2, false, 0, 0, 100, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p;
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    ck_assert_int_eq(mrc_test_push(&b, &p, NULL, 10), 0);
    mrc_test_pkt nk;
    ck_assert_uint_eq(b_to_a(&b, &a, 20, &nk), 1);
    ck_assert_uint_eq(nk.pkt.neth.reason, MRC_NACK_UNEXP_EVENT);
    ck_assert_uint_eq(nk.pkt.neth.nack_psn, oa.sq_psn);
    nack_counts(&a, &b, MRC_NACK_UNEXP_EVENT, 1, 1);
    for (size_t i = 0; i < 1024; i++) {
        MRC_REQUIRE(b.mem[i] == 0, "byte %zu placed", i);
    }
    ck_assert_mem_eq(b.mem + b.memlen - 512, before, 512);
    for (size_t i = 0; i < sizeof(local_only); i++) {
        MRC_REQUIRE(local_only[i] == 0, "a region without remote access written at %zu", i);
    }
    mrc_qp_stats sa = mrc_test_stats(&a);
    ck_assert_uint_eq(sa.state, MRC_QPS_ERR);
    ck_assert_uint_eq(sa.retx_pkts, 0);
    mrc_wc wc[4];
    ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 2);
    ck_assert_uint_eq(wc[0].wr_id, 1);
    ck_assert_int_eq(wc[0].status, MRC_WC_REM_OP_ERR);
    ck_assert_uint_eq(wc[1].wr_id, 2);
    ck_assert_int_eq(wc[1].status, MRC_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(mrc_test_pull(&a, &p, 30), 0);
    ck_assert_uint_eq(mrc_get_expiry(a.ctx), UINT64_MAX);
    if (lmr) {
        ck_assert_int_eq(mrc_dereg_mr(lmr), 0);
    }
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}

START_TEST(test_mrc_nack_unexp_event_bad_rkey)
{
    unexp_case(BAD_RKEY);
}
END_TEST

START_TEST(test_mrc_nack_unexp_event_va_past_end)
{
    unexp_case(BAD_VA_END);
}
END_TEST

START_TEST(test_mrc_nack_unexp_event_va_below)
{
    unexp_case(BAD_VA_BELOW);
}
END_TEST

START_TEST(test_mrc_nack_unexp_event_mr_no_remote_write)
{
    unexp_case(MR_NO_REMOTE);
}
END_TEST

START_TEST(test_mrc_nack_unexp_event_qp_no_remote_write)
{
    unexp_case(QP_NO_REMOTE);
}
END_TEST

/* More Writes with Immediate waiting than max_wimm_dest: the Transport NAK (Invalid Request)
 * fails the requester with REM_INV_REQ_ERR. */
START_TEST(test_mrc_nack_wimm_limit_inv_req)
{
    mrc_test_opts oa, ob;
    mrc_test_node a, b;
    opts(&oa);
    oa.max_wimm = 4;
    ob = oa;
    ob.max_wimm_dest = 1;
    mrc_test_pair_new(&a, &oa, &b, &ob, 0);
    mrc_test_post_recvs(&b, 10, 4);
    uint32_t rkey = mrc_mr_rkey(b.mr);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, true, 1, 0, 2048, mrc_test_va(&b, 0), rkey, 0), 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 2, true, 2, 0, 100, mrc_test_va(&b, 4096), rkey, 0),
                     0);
    ck_assert_int_eq(mrc_test_post_write(&a, 3, true, 3, 0, 100, mrc_test_va(&b, 8192), rkey, 0),
                     0);
    mrc_test_pkt p[4];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 4, 0), 4);
    /* messages 2 and 3 before 1: 2 waits with its immediate, 3 is one too many */
    ck_assert_int_eq(mrc_test_push(&b, &p[2], NULL, 10), 0);
    ck_assert_int_eq(mrc_test_push(&b, &p[3], NULL, 10), 0);
    mrc_test_pkt c;
    bool nak = false;
    while (mrc_test_pull(&b, &c, 10) > 0) {
        if (c.pkt.bth.opcode == MRC_OP_ACK) {
            ck_assert_uint_eq(c.pkt.aeth.syndrome, MRC_AETH_NAK_INV_REQ);
            nak = true;
        }
        ck_assert_int_eq(mrc_test_push(&a, &c, NULL, 10), 0);
    }
    ck_assert(nak);
    mrc_qp_stats sa = mrc_test_stats(&a);
    ck_assert_uint_eq(sa.state, MRC_QPS_ERR);
    ck_assert_uint_eq(sa.acks_rcvd, 1);
    mrc_wc wc[4];
    ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 3);
    ck_assert_int_eq(wc[0].status, MRC_WC_REM_INV_REQ_ERR);
    ck_assert_int_eq(wc[1].status, MRC_WC_WR_FLUSH_ERR);
    ck_assert_int_eq(wc[2].status, MRC_WC_WR_FLUSH_ERR);
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        ck_assert_uint_eq(sa.nacks_rcvd[i], 0);
    }
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Each Transport NAK fails the requester with its own status, the rest flushed. */
START_TEST(test_mrc_nack_transport_nak_status)
{
    static const struct {
        uint8_t syndrome;
        mrc_wc_status status;
    } naks[] = {
        {MRC_AETH_NAK_INV_REQ, MRC_WC_REM_INV_REQ_ERR},
        {MRC_AETH_NAK_REM_ACCESS, MRC_WC_REM_ACCESS_ERR},
        {MRC_AETH_NAK_REM_OP, MRC_WC_REM_OP_ERR},
    };
    for (size_t i = 0; i < sizeof(naks) / sizeof(naks[0]); i++) {
        mrc_test_opts o;
        mrc_test_node a;
        opts(&o);
        mrc_test_node_new(&a, &o, 0);
        mrc_test_node_up(&a, &o, MRC_TEST_PEER_QPN, 0);
        ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
        ck_assert_int_eq(mrc_test_post_write(&a, 2, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
        mrc_test_post_recvs(&a, 7, 1);
        mrc_test_pkt p, k;
        ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
        mrc_test_build_ack(&k, &a, naks[i].syndrome, 0, 0);
        ck_assert_int_eq(mrc_test_push(&a, &k, NULL, 10), 0);
        mrc_qp_stats st = mrc_test_stats(&a);
        ck_assert_uint_eq(st.state, MRC_QPS_ERR);
        ck_assert_uint_eq(st.acks_rcvd, 1);
        mrc_wc wc[4];
        ck_assert_int_eq(mrc_test_poll(&a, wc, 4), 3);
        ck_assert_uint_eq(wc[0].wr_id, 1);
        ck_assert_int_eq(wc[0].status, naks[i].status);
        ck_assert_int_eq(wc[1].status, MRC_WC_WR_FLUSH_ERR);
        ck_assert_int_eq(wc[2].status, MRC_WC_WR_FLUSH_ERR);
        ck_assert_int_eq(wc[2].opcode, MRC_WC_RECV_RDMA_WITH_IMM);
        ck_assert_int_eq(mrc_test_pull(&a, &p, 10), 0);
        mrc_test_node_free(&a);
    }
}
END_TEST

/* Each requester-side reason on its own, from a made-up responder, for the bookkeeping: which
 * reasons resend at once, which later, which fail. */
START_TEST(test_mrc_nack_requester_handling_by_reason)
{
    static const struct {
        uint8_t reason;
        int resend; /* 0: at once, 1: after nack_retry_ns, -1: QP error */
        bool skip;  /* the EV goes to SKIP */
    } cases[] = {
        {MRC_NACK_TRIMMED, 0, true},       {MRC_NACK_TRIMMED_LASTHOP, 0, false},
        {MRC_NACK_NO_BITMAP, 1, false},    {MRC_NACK_NO_PKT_BUFFER, 1, false},
        {MRC_NACK_NO_RESOURCE, 1, false},  {MRC_NACK_PSN_OOR_WINDOW, 1, false},
        {MRC_NACK_UNEXP_EVENT, -1, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mrc_test_opts o;
        mrc_test_node a;
        opts(&o);
        mrc_test_node_new(&a, &o, 0);
        mrc_test_node_up(&a, &o, MRC_TEST_PEER_QPN, 0);
        ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
        mrc_test_pkt p, nk;
        ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
        mrc_test_build_nack(&nk, &a, cases[i].reason, o.sq_psn, p.info.ev, p.info.port);
        ck_assert_int_eq(mrc_test_push(&a, &nk, NULL, 100), 0);
        mrc_qp_stats st = mrc_test_stats(&a);
        ck_assert_uint_eq(st.nacks_rcvd[mrc_nack_index(cases[i].reason)], 1);
        ck_assert_uint_eq(mrc_test_ev_stats(&a, p.info.ev).state,
                          cases[i].skip ? MRC_EV_SKIP : MRC_EV_GOOD);
        if (cases[i].resend < 0) {
            ck_assert_uint_eq(st.state, MRC_QPS_ERR);
            mrc_wc wc;
            ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
            ck_assert_int_eq(wc.status, MRC_WC_REM_OP_ERR);
        } else if (cases[i].resend == 0) {
            mrc_test_pkt r;
            ck_assert_int_gt(mrc_test_pull(&a, &r, 100), 0);
            ck_assert(mrc_test_is_data(&r) && r.pkt.bth.rtx);
        } else {
            mrc_test_pkt r;
            resent_later(&a, o.sq_psn, 100, &r);
        }
        mrc_test_node_free(&a);
    }
}
END_TEST

Suite *mrc_nack_suite(void)
{
    Suite *s = suite_create("nack");
    TCase *tc = tcase_create("nack");
    tcase_add_test(tc, test_mrc_nack_trimmed);
    tcase_add_test(tc, test_mrc_nack_trimmed_lasthop);
    tcase_add_test(tc, test_mrc_nack_trimmed_beyond_retry_budget);
    tcase_add_test(tc, test_mrc_nack_no_bitmap);
    tcase_add_test(tc, test_mrc_nack_no_pkt_buffer);
    tcase_add_test(tc, test_mrc_nack_no_resource);
    tcase_add_test(tc, test_mrc_nack_psn_oor_window);
    tcase_add_test(tc, test_mrc_nack_unexp_event_bad_rkey);
    tcase_add_test(tc, test_mrc_nack_unexp_event_va_past_end);
    tcase_add_test(tc, test_mrc_nack_unexp_event_va_below);
    tcase_add_test(tc, test_mrc_nack_unexp_event_mr_no_remote_write);
    tcase_add_test(tc, test_mrc_nack_unexp_event_qp_no_remote_write);
    tcase_add_test(tc, test_mrc_nack_wimm_limit_inv_req);
    tcase_add_test(tc, test_mrc_nack_transport_nak_status);
    tcase_add_test(tc, test_mrc_nack_requester_handling_by_reason);
    suite_add_tcase(s, tc);
    return s;
}
