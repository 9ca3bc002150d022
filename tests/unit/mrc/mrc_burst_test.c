/* SPDX-License-Identifier: MIT */
/* The burst forms, mrc_write_pkts and mrc_read_pkts: the same packets, bytes and outcomes as the
 * one-packet calls, whatever the burst size, and the same answers to what does not fit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"
#include "mrc_wire.h"

#define MAXPKTS 4096

/* Everything a node wrote, in order. */
typedef struct trace {
    mrc_test_pkt *pkts;
    unsigned n;
} trace;

static void trace_add(trace *t, const uint8_t *data, size_t len, const mrc_tx_info *info)
{
    ck_assert_uint_lt(t->n, MAXPKTS);
    mrc_test_pkt *p = &t->pkts[t->n++];
    memcpy(p->buf, data, len);
    p->len = len;
    p->info = *info;
}

/* Pulls what |n| has, |burst| at a time (1: mrc_write_pkt). */
static unsigned pull(mrc_test_node *n, unsigned burst, trace *t, uint64_t now)
{
    static uint8_t room[64][MRC_TEST_PKT_ROOM];
    unsigned total = 0;
    for (;;) {
        if (burst == 1) {
            mrc_tx_info info;
            int rv = mrc_write_pkt(n->ctx, room[0], sizeof(room[0]), UINT32_MAX, &info, now);
            ck_assert_int_ge(rv, 0);
            if (rv == 0) {
                return total;
            }
            trace_add(t, room[0], (size_t)rv, &info);
            total++;
            continue;
        }
        mrc_tx_pkt tx[64];
        for (unsigned k = 0; k < burst; k++) {
            tx[k] = (mrc_tx_pkt){.data = room[k], .room = sizeof(room[k])};
        }
        int m = mrc_write_pkts(n->ctx, tx, burst, UINT32_MAX, now);
        ck_assert_int_ge(m, 0);
        if (m == 0) {
            return total;
        }
        for (int k = 0; k < m; k++) {
            trace_add(t, tx[k].data, tx[k].len, &tx[k].info);
        }
        total += (unsigned)m;
    }
}

/* Pushes packets |from|..|to| of |t| into |n|, |burst| at a time (1: mrc_read_pkt). */
static void push(mrc_test_node *n, const trace *t, unsigned from, unsigned to, unsigned burst,
                 uint64_t now)
{
    for (unsigned i = from; i < to;) {
        unsigned k = to - i < burst ? to - i : burst;
        if (burst == 1) {
            mrc_rx_info info = mrc_test_rx(&t->pkts[i]);
            ck_assert_int_eq(mrc_read_pkt(n->ctx, t->pkts[i].buf, t->pkts[i].len, &info, now), 0);
        } else {
            mrc_rx_pkt rx[64];
            for (unsigned j = 0; j < k; j++) {
                rx[j] = (mrc_rx_pkt){t->pkts[i + j].buf, t->pkts[i + j].len,
                                     mrc_test_rx(&t->pkts[i + j])};
            }
            ck_assert_int_eq(mrc_read_pkts(n->ctx, rx, k, now), (int)k);
        }
        i += k;
    }
}

/* A transfer through one burst size on each side; the traces of what each side wrote. */
typedef struct outcome {
    trace data, ctrl;
    uint64_t base; /* the receiver's memory, as its RETH addresses see it */
    uint8_t *mem;
    mrc_qp_stats sa, sb;
    unsigned completions;
} outcome;

static void transfer(unsigned wburst, unsigned rburst, outcome *out)
{
    mrc_test_opts o;
    mrc_test_opts_default(&o);
    o.mtu = 1024;
    o.memlen = 1 << 20;
    o.mpr = o.mpr_dest = 8;
    mrc_test_node a, b;
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    for (size_t i = 0; i < o.memlen; i++) {
        a.mem[i] = (uint8_t)(i * 7 + 3);
    }
    mrc_test_post_recvs(&b, 0, 8);
    /* plain writes, a write with immediate, a short one and one of a single packet */
    static const size_t sizes[] = {200000, 100000, 3000, 700, 65536};
    size_t off = 0;
    for (unsigned m = 0; m < 5; m++) {
        ck_assert_int_eq(mrc_test_post_write(&a, m, m == 1, 40 + m, off, sizes[m],
                                             mrc_test_va(&b, off), mrc_mr_rkey(b.mr), 0),
                         0);
        off += sizes[m];
    }
    out->data = (trace){calloc(MAXPKTS, sizeof(mrc_test_pkt)), 0};
    out->ctrl = (trace){calloc(MAXPKTS, sizeof(mrc_test_pkt)), 0};
    /* a round: a's packets to b, b's answers to a, until neither has any */
    for (unsigned round = 0; round < 1000; round++) {
        unsigned d0 = out->data.n, c0 = out->ctrl.n;
        pull(&a, wburst, &out->data, 10);
        push(&b, &out->data, d0, out->data.n, rburst, 10);
        pull(&b, wburst, &out->ctrl, 10);
        push(&a, &out->ctrl, c0, out->ctrl.n, rburst, 10);
        if (out->data.n == d0 && out->ctrl.n == c0) {
            break;
        }
    }
    out->base = mrc_test_va(&b, 0);
    out->mem = malloc(o.memlen);
    memcpy(out->mem, b.mem, o.memlen);
    out->sa = mrc_test_stats(&a);
    out->sb = mrc_test_stats(&b);
    mrc_wc wc[16];
    out->completions = (unsigned)mrc_test_poll(&a, wc, 16) + (unsigned)mrc_test_poll(&b, wc, 16);
    ck_assert_mem_eq(out->mem, a.mem, off);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}

static void outcome_free(outcome *o)
{
    free(o->data.pkts);
    free(o->ctrl.pkts);
    free(o->mem);
}

/* The same packet but for where the receiver's memory happens to be: decoded, with the RETH
 * address relative to that memory (|basex|, |basey|), and the ICRC and UDP checksum, which
 * cover it, left out. */
static bool same_pkt(const mrc_test_pkt *x, uint64_t basex, const mrc_test_pkt *y, uint64_t basey)
{
    mrc_pkt px, py;
    if (x->len != y->len || memcmp(&x->info, &y->info, sizeof(mrc_tx_info)) != 0 ||
        mrc_wire_decode(x->buf, x->len, 4791, MRC_DECODE_NO_ICRC, &px) != 0 ||
        mrc_wire_decode(y->buf, y->len, 4791, MRC_DECODE_NO_ICRC, &py) != 0 ||
        px.payload_len != py.payload_len || memcmp(px.payload, py.payload, px.payload_len) != 0) {
        return false;
    }
    if (px.has & MRC_HAS_RETH) {
        px.reth.va -= basex;
        py.reth.va -= basey;
    }
    px.payload = py.payload = NULL;
    px.udp.csum = py.udp.csum = 0;
    return memcmp(&px, &py, sizeof(px)) == 0;
}

static void same_trace(const outcome *x, const outcome *y, bool data, unsigned burst)
{
    const trace *tx = data ? &x->data : &x->ctrl, *ty = data ? &y->data : &y->ctrl;
    const char *what = data ? "data" : "answers";
    ck_assert_msg(tx->n == ty->n, "%s: %u packets one at a time, %u in bursts of %u", what, tx->n,
                  ty->n, burst);
    for (unsigned i = 0; i < tx->n; i++) {
        MRC_REQUIRE(same_pkt(&tx->pkts[i], x->base, &ty->pkts[i], y->base),
                    "%s: packet %u differs in bursts of %u", what, i, burst);
    }
}

/* Writing in bursts gives the very packets, byte for byte and EV for EV, of writing one at a
 * time, for every burst size (runs of middle packets and everything else mixed). */
START_TEST(test_mrc_burst_write_same_packets)
{
    static const unsigned bursts[] = {2, 3, 16, 64};
    outcome one;
    transfer(1, 1, &one);
    ck_assert_uint_eq(one.completions, 5 + 1);
    for (size_t i = 0; i < sizeof(bursts) / sizeof(bursts[0]); i++) {
        outcome many;
        transfer(bursts[i], 1, &many);
        same_trace(&one, &many, true, bursts[i]);
        same_trace(&one, &many, false, bursts[i]);
        ck_assert_mem_eq(one.mem, many.mem, 1 << 20);
        outcome_free(&many);
    }
    outcome_free(&one);
}
END_TEST

/* Reading in bursts places the same bytes and ends in the same state; only the answers are
 * fewer, coalesced over the burst. */
START_TEST(test_mrc_burst_read_same_outcome)
{
    static const unsigned bursts[] = {2, 16, 64};
    outcome one;
    transfer(1, 1, &one);
    for (size_t i = 0; i < sizeof(bursts) / sizeof(bursts[0]); i++) {
        outcome many;
        transfer(1, bursts[i], &many);
        ck_assert_mem_eq(one.mem, many.mem, 1 << 20);
        ck_assert_uint_eq(many.completions, one.completions);
        ck_assert_uint_eq(many.sb.data_pkts_rcvd, one.sb.data_pkts_rcvd);
        ck_assert_uint_eq(many.sb.data_bytes_rcvd, one.sb.data_bytes_rcvd);
        ck_assert_uint_eq(many.sa.data_pkts_sent, one.sa.data_pkts_sent);
        ck_assert_uint_eq(many.sa.retx_pkts, 0);
        ck_assert_uint_eq(many.sa.msgs_sent_done, 5);
        ck_assert_uint_eq(many.sb.dup_pkts_rcvd, 0);
        ck_assert_msg(many.sb.sacks_sent <= one.sb.sacks_sent, "%llu SACKs in bursts of %u, %llu",
                      (unsigned long long)many.sb.sacks_sent, bursts[i],
                      (unsigned long long)one.sb.sacks_sent);
        outcome_free(&many);
    }
    outcome_free(&one);
}
END_TEST

/* No room for the first packet: MRC_ERR_NOBUF and nothing sent; no room for a later one: the
 * burst stops there, and the rest comes next time. */
START_TEST(test_mrc_burst_write_room)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 8 * o.mtu, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    static uint8_t room[8][MRC_TEST_PKT_ROOM];
    mrc_tx_pkt tx[8];
    for (unsigned k = 0; k < 8; k++) {
        tx[k] = (mrc_tx_pkt){.data = room[k], .room = sizeof(room[k])};
    }
    tx[0].room = 100;
    ck_assert_int_eq(mrc_write_pkts(a.ctx, tx, 8, UINT32_MAX, 0), MRC_ERR_NOBUF);
    ck_assert_uint_eq(mrc_test_stats(&a).data_pkts_sent, 0);
    tx[0].room = sizeof(room[0]);
    tx[3].room = 100;
    ck_assert_int_eq(mrc_write_pkts(a.ctx, tx, 8, UINT32_MAX, 0), 3);
    ck_assert_uint_eq(mrc_test_stats(&a).data_pkts_sent, 3);
    tx[3].room = sizeof(room[3]);
    ck_assert_int_eq(mrc_write_pkts(a.ctx, tx, 8, UINT32_MAX, 0), 5);
    ck_assert_int_eq(mrc_write_pkts(a.ctx, tx, 8, UINT32_MAX, 0), 0);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Garbage in a burst is counted and skipped; the good packets around it are taken. */
START_TEST(test_mrc_burst_read_garbage)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 4 * o.mtu, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    trace t = {calloc(16, sizeof(mrc_test_pkt)), 0};
    ck_assert_uint_eq(pull(&a, 8, &t, 0), 4);
    static uint8_t junk[64];
    memset(junk, 0x5a, sizeof(junk));
    mrc_rx_pkt rx[6] = {{t.pkts[0].buf, t.pkts[0].len, mrc_test_rx(&t.pkts[0])},
                        {junk, sizeof(junk), {0}},
                        {t.pkts[1].buf, t.pkts[1].len, mrc_test_rx(&t.pkts[1])},
                        {t.pkts[2].buf, 10, {0}},
                        {t.pkts[2].buf, t.pkts[2].len, mrc_test_rx(&t.pkts[2])},
                        {t.pkts[3].buf, t.pkts[3].len, mrc_test_rx(&t.pkts[3])}};
    mrc_ctx_stats before = mrc_test_ctx_stats(&b);
    ck_assert_int_eq(mrc_read_pkts(b.ctx, rx, 6, 0), 4);
    ck_assert_uint_eq(mrc_test_ctx_stats(&b).garbage - before.garbage, 2);
    ck_assert_uint_eq(mrc_test_stats(&b).data_pkts_rcvd, 4);
    ck_assert_mem_eq(b.mem, a.mem, 4 * o.mtu);
    free(t.pkts);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

Suite *mrc_burst_suite(void)
{
    Suite *s = suite_create("burst");
    TCase *tc = tcase_create("burst");
    tcase_add_test(tc, test_mrc_burst_write_same_packets);
    tcase_add_test(tc, test_mrc_burst_read_same_outcome);
    tcase_add_test(tc, test_mrc_burst_write_room);
    tcase_add_test(tc, test_mrc_burst_read_garbage);
    suite_add_tcase(s, tc);
    return s;
}
