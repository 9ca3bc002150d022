/* SPDX-License-Identifier: MIT */
/* Unit tests of the RoCEv2 RC baseline: two ends over a tiny in-test wire (a delay, drops and
 * CE marks by rule) or one end driven by hand; go-back-N, timeouts, pacing and DCQCN. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim_roce.h"

#define PSN_MASK 0xffffffu
#define US SIM_PS_PER_US
#define ANY_PSN UINT32_MAX
#define WIRE_MAX 65536u
#define LOG_MAX 4096u
#define DONE_MAX 64u
#define TOL 1e-6

/* A rule of the wire: drop |count| packets of |kind| from end |from| (with PSN |psn| unless
 * ANY_PSN). */
typedef struct drop_rule {
    unsigned from;
    uint8_t kind;
    uint32_t psn;
    unsigned count;
} drop_rule;

typedef struct wire_pkt {
    uint64_t at;
    unsigned to;
    sim_roce_pkt p;
} wire_pkt;

/* Two ends, 0 and 1, and the wire between them; every packet takes |delay|. */
typedef struct net {
    sim_roce_qp *q[2];
    uint64_t now, delay;
    wire_pkt w[WIRE_MAX];
    size_t whead, wtail;
    drop_rule rules[4];
    unsigned nrules;
    bool dead[2];         /* everything from this end is lost */
    uint64_t ce_until[2]; /* data from this end sent before this is marked CE */
    unsigned dropped;
    /* data packets sent by each end, and when */
    sim_roce_pkt log[2][LOG_MAX];
    uint64_t log_t[2][LOG_MAX];
    unsigned nlog[2];
    /* completions polled at each end, and when */
    sim_roce_done done[2][DONE_MAX];
    uint64_t done_t[2][DONE_MAX];
    unsigned ndone[2];
    uint64_t steps;
} net;

static sim_roce_cfg cfg_base(void)
{
    return (sim_roce_cfg){
        .mtu = 1000,
        .qps = 1,
        .dcqcn = false,
        .dc = {.g = 1.0 / 256,
               .rate_ai_gbps = 5,
               .rate_hai_gbps = 50,
               .min_rate_gbps = 0.1,
               .alpha_timer_ps = 55 * US,
               .rate_timer_ps = 55 * US,
               .byte_counter = 10ull << 20,
               .fast_recovery = 5,
               .cnp_interval_ps = 50 * US},
        .timeout_ps = 100 * US,
        .retry = 7,
        .ack_every = 4,
        .plane = -1,
    };
}

static net *net_new(const sim_roce_cfg *cfg, double gbps, uint64_t delay)
{
    net *n = calloc(1, sizeof(*n));
    ck_assert_ptr_nonnull(n);
    n->delay = delay;
    n->q[0] = sim_roce_qp_new(cfg, gbps, 1, 2, 0);
    n->q[1] = sim_roce_qp_new(cfg, gbps, 2, 1, 0);
    ck_assert_ptr_nonnull(n->q[0]);
    ck_assert_ptr_nonnull(n->q[1]);
    return n;
}

static void net_free(net *n)
{
    sim_roce_qp_free(n->q[0]);
    sim_roce_qp_free(n->q[1]);
    free(n);
}

static void net_drop(net *n, unsigned from, uint8_t kind, uint32_t psn, unsigned count)
{
    ck_assert_uint_lt(n->nrules, 4);
    n->rules[n->nrules++] = (drop_rule){.from = from, .kind = kind, .psn = psn, .count = count};
}

/* The wire's verdict on |p| from end |from|: true to lose it; may mark it CE. */
static bool net_lose(net *n, unsigned from, sim_roce_pkt *p)
{
    if (p->kind == SIM_ROCE_DATA && n->now < n->ce_until[from]) {
        p->ce = true;
    }
    if (n->dead[from]) {
        return true;
    }
    for (unsigned i = 0; i < n->nrules; i++) {
        drop_rule *r = &n->rules[i];
        if (r->count > 0 && r->from == from && r->kind == p->kind &&
            (r->psn == ANY_PSN || r->psn == p->psn)) {
            r->count--;
            return true;
        }
    }
    return false;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Runs every event up to |until|: arrivals, then timers, then each end's packets. */
static void net_run(net *n, uint64_t until)
{
    for (;;) {
        uint64_t t = n->whead < n->wtail ? n->w[n->whead].at : SIM_NEVER;
        for (unsigned i = 0; i < 2; i++) {
            uint64_t tx = sim_roce_next_tx(n->q[i]);
            t = min64(t, tx < n->now ? n->now : tx);
            t = min64(t, sim_roce_expiry(n->q[i]));
        }
        if (t == SIM_NEVER || t > until) {
            break;
        }
        ck_assert_uint_ge(t, n->now);
        n->now = t;
        ck_assert_uint_lt(++n->steps, 10000000);
        while (n->whead < n->wtail && n->w[n->whead].at <= n->now) {
            const wire_pkt *wp = &n->w[n->whead++ % WIRE_MAX];
            sim_roce_read(n->q[wp->to], &wp->p, n->now);
        }
        for (unsigned i = 0; i < 2; i++) {
            if (sim_roce_expiry(n->q[i]) <= n->now) {
                sim_roce_on_timer(n->q[i], n->now);
            }
        }
        for (unsigned i = 0; i < 2; i++) {
            sim_roce_pkt p;
            while (sim_roce_write(n->q[i], n->now, &p) == 1) {
                if (p.kind == SIM_ROCE_DATA && n->nlog[i] < LOG_MAX) {
                    n->log[i][n->nlog[i]] = p;
                    n->log_t[i][n->nlog[i]++] = n->now;
                }
                if (net_lose(n, i, &p)) {
                    n->dropped++;
                    continue;
                }
                ck_assert_uint_lt(n->wtail - n->whead, WIRE_MAX);
                n->w[n->wtail++ % WIRE_MAX] =
                    (wire_pkt){.at = n->now + n->delay, .to = 1 - i, .p = p};
            }
            sim_roce_done d;
            while (sim_roce_poll(n->q[i], &d) == 1) {
                ck_assert_uint_lt(n->ndone[i], DONE_MAX);
                n->done[i][n->ndone[i]] = d;
                n->done_t[i][n->ndone[i]++] = n->now;
            }
        }
    }
    if (until != SIM_NEVER && until > n->now) {
        n->now = until;
    }
}

static const sim_roce_stats *st(const sim_roce_qp *qp)
{
    return sim_roce_get_stats(qp);
}

static void expect_done(const sim_roce_done *d, uint64_t cookie, uint64_t bytes, bool recv)
{
    ck_assert_uint_eq(d->cookie, cookie);
    ck_assert_uint_eq(d->bytes, bytes);
    ck_assert_int_eq(d->recv, recv);
}

/* Both ends idle: nothing to send, no timer. */
static void expect_idle(const net *n)
{
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_uint_eq(sim_roce_expiry(n->q[i]), SIM_NEVER);
        ck_assert_uint_eq(sim_roce_next_tx(n->q[i]), SIM_NEVER);
    }
}

/* The PSNs of end |i|'s data packets, relative to its first. */
static uint32_t rel_psn(const net *n, unsigned i, unsigned k)
{
    return (n->log[i][k].psn - n->log[i][0].psn) & PSN_MASK;
}

/* One end alone, PSNs from 0, driven by hand. */
static sim_roce_qp *lone(const sim_roce_cfg *cfg, double gbps)
{
    sim_roce_qp *qp = sim_roce_qp_new(cfg, gbps, 1, 2, 0);
    ck_assert_ptr_nonnull(qp);
    ck_assert_int_eq(sim_roce_qp_set_psn(qp, 0, 0), 0);
    return qp;
}

static sim_roce_pkt ctrl(uint8_t kind, uint32_t psn)
{
    return (sim_roce_pkt){.kind = kind, .dst_qp = 1, .psn = psn};
}

static sim_roce_pkt data(uint32_t psn, uint32_t len, bool last, bool ce, uint64_t cookie)
{
    return (sim_roce_pkt){.kind = SIM_ROCE_DATA,
                          .ce = ce,
                          .last = last,
                          .dst_qp = 1,
                          .psn = psn,
                          .len = len,
                          .cookie = cookie};
}

/* Takes every packet |qp| has at |now|; counts them by kind into |kinds| (may be NULL). */
static unsigned drain(sim_roce_qp *qp, uint64_t now, unsigned kinds[4], sim_roce_pkt *lastp)
{
    sim_roce_pkt p;
    unsigned k = 0;
    while (sim_roce_write(qp, now, &p) == 1) {
        if (kinds) {
            kinds[p.kind]++;
        }
        if (lastp) {
            *lastp = p;
        }
        k++;
    }
    return k;
}

/* ---- delivery ---- */

START_TEST(test_sim_roce_message_completes)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10500, 0xc0ffee, 0), 0);
    net_run(n, SIM_NEVER);

    ck_assert_uint_eq(n->ndone[0], 1);
    expect_done(&n->done[0][0], 0xc0ffee, 10500, false);
    ck_assert_uint_eq(n->ndone[1], 1);
    expect_done(&n->done[1][0], 0xc0ffee, 10500, true);
    /* 11 packets, consecutive PSNs, the last one short and flagged */
    ck_assert_uint_eq(n->nlog[0], 11);
    for (unsigned k = 0; k < 11; k++) {
        ck_assert_uint_eq(rel_psn(n, 0, k), k);
        ck_assert_uint_eq(n->log[0][k].len, k < 10 ? 1000 : 500);
        ck_assert_int_eq(n->log[0][k].last, k == 10);
        ck_assert_uint_eq(n->log[0][k].cookie, 0xc0ffee);
        ck_assert_uint_eq(n->log[0][k].dst_qp, 2);
    }
    /* ACKs after 4, 8 and the last */
    ck_assert_uint_eq(st(n->q[1])->acks_sent, 3);
    ck_assert_uint_eq(st(n->q[0])->acks_rcvd, 3);
    ck_assert_uint_eq(st(n->q[0])->data_pkts_sent, 11);
    ck_assert_uint_eq(st(n->q[0])->data_bytes_sent, 10500);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 0);
    ck_assert_uint_eq(st(n->q[1])->data_pkts_rcvd, 11);
    ck_assert_uint_eq(st(n->q[1])->naks_sent, 0);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 0);
    expect_idle(n);
    net_free(n);
}
END_TEST

START_TEST(test_sim_roce_empty_message)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    ck_assert_int_eq(sim_roce_post(n->q[0], 0, 5, 0), 0);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(n->nlog[0], 1);
    ck_assert_uint_eq(n->log[0][0].len, 0);
    ck_assert_int_eq(n->log[0][0].last, true);
    ck_assert_uint_eq(n->ndone[0], 1);
    expect_done(&n->done[0][0], 5, 0, false);
    ck_assert_uint_eq(n->ndone[1], 1);
    expect_done(&n->done[1][0], 5, 0, true);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* Each end sends and receives at once; each sees its own send completion and the peer's. */
START_TEST(test_sim_roce_bidirectional)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    ck_assert_int_eq(sim_roce_post(n->q[0], 5000, 100, 0), 0);
    ck_assert_int_eq(sim_roce_post(n->q[1], 2000, 200, 0), 0);
    net_run(n, SIM_NEVER);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_uint_eq(n->ndone[i], 2);
        unsigned snd = n->done[i][0].recv ? 1 : 0;
        expect_done(&n->done[i][snd], i == 0 ? 100 : 200, i == 0 ? 5000 : 2000, false);
        expect_done(&n->done[i][1 - snd], i == 0 ? 200 : 100, i == 0 ? 2000 : 5000, true);
    }
    expect_idle(n);
    net_free(n);
}
END_TEST

START_TEST(test_sim_roce_completions_in_order)
{
    static const uint64_t sizes[] = {3000, 0, 1, 2500, 1000, 7000};
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 2 * US);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[0], 0, 0), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[1], 0, 0), 0);
    for (unsigned m = 0; m < 6; m++) {
        ck_assert_int_eq(sim_roce_post(n->q[0], sizes[m], 10 + m, 0), 0);
    }
    /* the first packet of message 3 (PSN 5) is lost once: go-back-N across messages */
    net_drop(n, 0, SIM_ROCE_DATA, 5, 1);
    net_run(n, SIM_NEVER);

    ck_assert_uint_eq(n->ndone[0], 6);
    ck_assert_uint_eq(n->ndone[1], 6);
    for (unsigned m = 0; m < 6; m++) {
        expect_done(&n->done[0][m], 10 + m, sizes[m], false);
        expect_done(&n->done[1][m], 10 + m, sizes[m], true);
    }
    ck_assert_uint_eq(st(n->q[1])->naks_sent, 1);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 0);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* The message crosses the 24-bit wrap both ways, a loss just after it included. */
START_TEST(test_sim_roce_psn_wrap)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 10 * US);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[0], PSN_MASK - 4, PSN_MASK - 1), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[1], PSN_MASK - 1, PSN_MASK - 4), 0);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10000, 1, 0), 0);
    ck_assert_int_eq(sim_roce_post(n->q[1], 3000, 2, 0), 0);
    net_drop(n, 0, SIM_ROCE_DATA, 1, 1);
    net_run(n, SIM_NEVER);

    /* PSNs 2^24-5 .. 2^24-1, 0 .. 4, then go back to 1 */
    static const uint32_t want[] = {PSN_MASK - 4,
                                    PSN_MASK - 3,
                                    PSN_MASK - 2,
                                    PSN_MASK - 1,
                                    PSN_MASK,
                                    0,
                                    1,
                                    2,
                                    3,
                                    4,
                                    1,
                                    2,
                                    3,
                                    4};
    ck_assert_uint_eq(n->nlog[0], 14);
    for (unsigned k = 0; k < 14; k++) {
        ck_assert_uint_eq(n->log[0][k].psn, want[k]);
    }
    ck_assert_uint_eq(st(n->q[1])->naks_sent, 1);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 4);
    ck_assert_uint_eq(n->ndone[0], 2);
    ck_assert_uint_eq(n->ndone[1], 2);
    for (unsigned i = 0; i < 2; i++) {
        for (unsigned k = 0; k < 2; k++) {
            const sim_roce_done *d = &n->done[i][k];
            bool mine = d->recv == false;
            uint64_t cookie = (i == 0) == mine ? 1 : 2;
            expect_done(d, cookie, cookie == 1 ? 10000 : 3000, !mine);
        }
    }
    expect_idle(n);
    net_free(n);
}
END_TEST

/* The drawn first PSNs differ from pair to pair, and the two ends of a pair agree. */
START_TEST(test_sim_roce_drawn_psns)
{
    sim_roce_cfg cfg = cfg_base();
    uint32_t seen[4];
    for (uint32_t k = 0; k < 4; k++) {
        sim_roce_qp *a = sim_roce_qp_new(&cfg, 100, 10 + k, 20 + k, 0);
        sim_roce_qp *b = sim_roce_qp_new(&cfg, 100, 20 + k, 10 + k, 0);
        ck_assert_int_eq(sim_roce_post(a, 1, k, 0), 0);
        sim_roce_pkt p, ack;
        ck_assert_int_eq(sim_roce_write(a, 0, &p), 1);
        seen[k] = p.psn;
        ck_assert_uint_le(p.psn, PSN_MASK);
        sim_roce_read(b, &p, 0);
        ck_assert_uint_eq(st(b)->data_pkts_rcvd, 1);
        ck_assert_uint_eq(st(b)->out_of_order_dropped, 0);
        ck_assert_int_eq(sim_roce_write(b, 0, &ack), 1);
        ck_assert_uint_eq(ack.kind, SIM_ROCE_ACK);
        ck_assert_uint_eq(ack.psn, (p.psn + 1) & PSN_MASK);
        sim_roce_qp_free(a);
        sim_roce_qp_free(b);
    }
    ck_assert_uint_ne(seen[0], seen[1]);
    ck_assert_uint_ne(seen[1], seen[2]);
    ck_assert_uint_ne(seen[2], seen[3]);
}
END_TEST

/* ---- pacing ---- */

/* A packet of L wire bytes at R Gb/s takes L*8/R ns: k packets take k of those. */
START_TEST(test_sim_roce_pacing_line_rate)
{
    sim_roce_cfg cfg = cfg_base();
    cfg.mtu = 4096;
    static const double rates[] = {100, 25, 400};
    for (unsigned r = 0; r < 3; r++) {
        net *n = net_new(&cfg, rates[r], 1 * US);
        ck_assert_int_eq(sim_roce_post(n->q[0], 10 * 4096, 1, 0), 0);
        net_run(n, SIM_NEVER);
        uint64_t wt = (uint64_t)((4096.0 + SIM_ROCE_DATA_HDR) * 8000.0 / rates[r] + 0.5);
        ck_assert_uint_eq(n->nlog[0], 10);
        for (unsigned k = 0; k < 10; k++) {
            ck_assert_uint_eq(n->log_t[0][k], k * wt);
        }
        ck_assert_uint_eq(n->ndone[0], 1);
        net_free(n);
    }
    /* 4176 bytes at 100 Gb/s: 334.08 ns */
    ck_assert_uint_eq((uint64_t)(4176 * 8000.0 / 100 + 0.5), 334080);
}
END_TEST

/* By hand: the next packet may go when the previous one's transmission ends; ACKs wait for
 * nothing. */
START_TEST(test_sim_roce_pacing_by_hand)
{
    sim_roce_cfg cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    uint64_t wt = 1080 * 80; /* 1080 bytes at 100 Gb/s: 86.4 ns */
    ck_assert_uint_eq(sim_roce_next_tx(qp), SIM_NEVER);
    ck_assert_int_eq(sim_roce_post(qp, 3000, 1, 5), 0);
    ck_assert_uint_le(sim_roce_next_tx(qp), 5);
    sim_roce_pkt p;
    ck_assert_int_eq(sim_roce_write(qp, 5, &p), 1);
    ck_assert_uint_eq(sim_roce_next_tx(qp), 5 + wt);
    ck_assert_int_eq(sim_roce_write(qp, 5 + wt - 1, &p), 0);
    /* an ACK it owes goes at once */
    sim_roce_pkt in = data(0, 10, true, false, 9);
    sim_roce_read(qp, &in, 5 + wt - 1);
    ck_assert_uint_eq(sim_roce_next_tx(qp), 0);
    ck_assert_int_eq(sim_roce_write(qp, 5 + wt - 1, &p), 1);
    ck_assert_uint_eq(p.kind, SIM_ROCE_ACK);
    ck_assert_int_eq(sim_roce_write(qp, 5 + wt - 1, &p), 0);
    ck_assert_int_eq(sim_roce_write(qp, 5 + wt, &p), 1);
    ck_assert_uint_eq(p.psn, 1);
    /* late: the next one is paced from when this one went */
    ck_assert_int_eq(sim_roce_write(qp, 1 * US, &p), 1);
    ck_assert_uint_eq(p.psn, 2);
    ck_assert_uint_eq(sim_roce_next_tx(qp), SIM_NEVER);
    sim_roce_qp_free(qp);
}
END_TEST

/* ---- loss and go-back-N ---- */

/* A lost data packet: the receiver drops what follows and NAKs once; the sender goes back to
 * it and sends everything after it again. */
START_TEST(test_sim_roce_lost_data_nak_go_back_n)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 10 * US);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[0], 0, 0), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[1], 0, 0), 0);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10000, 3, 0), 0);
    net_drop(n, 0, SIM_ROCE_DATA, 3, 1);
    net_run(n, SIM_NEVER);

    ck_assert_uint_eq(n->nlog[0], 17);
    for (unsigned k = 0; k < 17; k++) {
        ck_assert_uint_eq(n->log[0][k].psn, k < 10 ? k : k - 7);
    }
    ck_assert_uint_eq(st(n->q[1])->out_of_order_dropped, 6);
    ck_assert_uint_eq(st(n->q[1])->naks_sent, 1);
    ck_assert_uint_eq(st(n->q[0])->naks_rcvd, 1);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 7);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 0);
    ck_assert_uint_eq(st(n->q[1])->dup_rcvd, 0);
    /* the resend starts when the NAK arrives: 20 us after the packet that found the gap */
    ck_assert_uint_eq(n->log_t[0][10], n->log_t[0][4] + 20 * US);
    ck_assert_uint_eq(n->ndone[0], 1);
    expect_done(&n->done[0][0], 3, 10000, false);
    ck_assert_uint_eq(n->ndone[1], 1);
    expect_done(&n->done[1][0], 3, 10000, true);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* A lost ACK is covered by the next one (they are cumulative). */
START_TEST(test_sim_roce_lost_ack_healed_by_later_ack)
{
    sim_roce_cfg cfg = cfg_base();
    cfg.ack_every = 2;
    net *n = net_new(&cfg, 100, 1 * US);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10000, 4, 0), 0);
    net_drop(n, 1, SIM_ROCE_ACK, ANY_PSN, 1);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(st(n->q[1])->acks_sent, 5);
    ck_assert_uint_eq(st(n->q[0])->acks_rcvd, 4);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 0);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 0);
    ck_assert_uint_eq(n->ndone[0], 1);
    expect_done(&n->done[0][0], 4, 10000, false);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* The last ACK lost: the sender times out and resends from the oldest unacknowledged PSN; the
 * duplicates draw a fresh ACK; the receiver completes once. */
START_TEST(test_sim_roce_lost_ack_healed_by_duplicate)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[0], 0, 0), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[1], 0, 0), 0);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10000, 4, 0), 0);
    net_drop(n, 1, SIM_ROCE_ACK, 10, 1);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 1);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 2); /* 8 and 9: ACK(8) had arrived */
    ck_assert_uint_eq(n->log[0][10].psn, 8);
    ck_assert_uint_eq(n->log[0][11].psn, 9);
    ck_assert_uint_eq(st(n->q[1])->dup_rcvd, 2);
    ck_assert_uint_eq(n->ndone[0], 1);
    expect_done(&n->done[0][0], 4, 10000, false);
    ck_assert_uint_eq(n->ndone[1], 1);
    /* the timer ran from ACK(8)'s arrival */
    ck_assert_uint_eq(n->log_t[0][10], n->log_t[0][7] + 2 * US + 100 * US);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* The NAK lost too: the receiver does not NAK again; the timeout sends everything again from
 * the oldest unacknowledged PSN. */
START_TEST(test_sim_roce_lost_nak_timeout)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 10 * US);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[0], 0, 0), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[1], 0, 0), 0);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10000, 4, 0), 0);
    net_drop(n, 0, SIM_ROCE_DATA, 3, 1);
    net_drop(n, 1, SIM_ROCE_NAK, ANY_PSN, 1);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(st(n->q[1])->naks_sent, 1);
    ck_assert_uint_eq(st(n->q[1])->out_of_order_dropped, 6);
    ck_assert_uint_eq(st(n->q[0])->naks_rcvd, 0);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 1);
    /* nothing was acknowledged (3 in order < ack_every): all 10 again, 0..2 duplicates */
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 10);
    ck_assert_uint_eq(st(n->q[1])->dup_rcvd, 3);
    ck_assert_uint_eq(n->log[0][10].psn, 0);
    ck_assert_uint_eq(n->log_t[0][10], 100 * US);
    ck_assert_uint_eq(n->ndone[0], 1);
    ck_assert_uint_eq(n->ndone[1], 1);
    expect_done(&n->done[1][0], 4, 10000, true);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* The tail lost: nothing follows it to raise a NAK; the timeout resends it. */
START_TEST(test_sim_roce_lost_tail_timeout)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[0], 0, 0), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(n->q[1], 0, 0), 0);
    ck_assert_int_eq(sim_roce_post(n->q[0], 10000, 4, 0), 0);
    net_drop(n, 0, SIM_ROCE_DATA, 9, 1);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(st(n->q[1])->naks_sent, 0);
    ck_assert_uint_eq(st(n->q[0])->timeouts, 1);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 2);
    ck_assert_uint_eq(st(n->q[1])->dup_rcvd, 1);
    ck_assert_uint_eq(n->ndone[0], 1);
    ck_assert_uint_eq(n->ndone[1], 1);
    expect_done(&n->done[1][0], 4, 10000, true);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* A dead peer: |retry| timeouts in a row, then the QP fails and refuses everything. */
START_TEST(test_sim_roce_dead_peer_fails)
{
    sim_roce_cfg cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    n->dead[0] = true;
    ck_assert_int_eq(sim_roce_post(n->q[0], 3000, 4, 0), 0);
    net_run(n, SIM_NEVER);
    ck_assert(sim_roce_failed(n->q[0]));
    ck_assert(!sim_roce_failed(n->q[1]));
    ck_assert_uint_eq(st(n->q[0])->timeouts, 7);
    ck_assert_uint_eq(st(n->q[0])->data_pkts_sent, 3 * 7);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 3 * 6);
    ck_assert_uint_eq(n->now, 7 * 100 * US);
    ck_assert_uint_eq(n->ndone[0], 0);
    sim_roce_pkt p;
    ck_assert_int_eq(sim_roce_write(n->q[0], n->now, &p), -1);
    ck_assert_int_eq(sim_roce_post(n->q[0], 1, 1, n->now), -1);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* Progress (an ACK that moves) resets the count of timeouts in a row. */
START_TEST(test_sim_roce_progress_resets_retry)
{
    sim_roce_cfg cfg = cfg_base();
    cfg.retry = 3;
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 1000, 1, 0), 0);
    ck_assert_int_eq(sim_roce_post(qp, 1000, 2, 0), 0);
    sim_roce_pkt p;
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER); /* nothing out yet */
    ck_assert_uint_eq(drain(qp, 0, NULL, NULL), 1);
    ck_assert_uint_eq(drain(qp, 1 * US, NULL, NULL), 1);
    ck_assert_uint_eq(sim_roce_expiry(qp), 100 * US);
    sim_roce_on_timer(qp, 100 * US);
    ck_assert_uint_eq(drain(qp, 100 * US, NULL, &p), 1);
    ck_assert_uint_eq(p.psn, 0);
    ck_assert_uint_eq(sim_roce_expiry(qp), 200 * US);
    sim_roce_on_timer(qp, 200 * US);
    ck_assert_uint_eq(st(qp)->timeouts, 2);
    sim_roce_pkt ack = ctrl(SIM_ROCE_ACK, 1);
    sim_roce_read(qp, &ack, 250 * US);
    sim_roce_done d;
    ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
    expect_done(&d, 1, 1000, false);
    ck_assert_int_eq(sim_roce_poll(qp, &d), 0);
    ck_assert_uint_eq(sim_roce_expiry(qp), 350 * US);
    sim_roce_on_timer(qp, 350 * US);
    sim_roce_on_timer(qp, 450 * US);
    ck_assert(!sim_roce_failed(qp));
    sim_roce_on_timer(qp, 549 * US); /* not due: nothing happens */
    ck_assert_uint_eq(st(qp)->timeouts, 4);
    sim_roce_on_timer(qp, 550 * US);
    ck_assert(sim_roce_failed(qp));
    ck_assert_uint_eq(st(qp)->timeouts, 5);
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER);
    sim_roce_qp_free(qp);
}
END_TEST

/* ACKs beyond anything sent and NAKs older than what is acknowledged change nothing. */
START_TEST(test_sim_roce_bad_acks_ignored)
{
    sim_roce_cfg cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 5000, 1, 0), 0);
    ck_assert_uint_eq(drain(qp, 0, NULL, NULL), 1);
    ck_assert_uint_eq(drain(qp, 1 * US, NULL, NULL), 1); /* PSNs 0, 1 out */
    sim_roce_pkt in = ctrl(SIM_ROCE_ACK, 4);             /* beyond what was sent */
    sim_roce_read(qp, &in, 2 * US);
    in = ctrl(SIM_ROCE_ACK, PSN_MASK); /* behind */
    sim_roce_read(qp, &in, 2 * US);
    sim_roce_done d;
    ck_assert_int_eq(sim_roce_poll(qp, &d), 0);
    ck_assert_uint_eq(sim_roce_expiry(qp), 100 * US); /* no progress */
    in = ctrl(SIM_ROCE_ACK, 2);
    sim_roce_read(qp, &in, 3 * US);
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER); /* nothing out */
    in = ctrl(SIM_ROCE_NAK, 1);                        /* stale */
    sim_roce_read(qp, &in, 3 * US);
    sim_roce_pkt p;
    ck_assert_uint_eq(drain(qp, 3 * US, NULL, &p), 1);
    ck_assert_uint_eq(p.psn, 2); /* not 1 */
    ck_assert_uint_eq(st(qp)->retx_pkts, 0);
    /* a packet for another QP is not ours */
    in = ctrl(SIM_ROCE_ACK, 3);
    in.dst_qp = 7;
    sim_roce_read(qp, &in, 4 * US);
    ck_assert_uint_eq(st(qp)->acks_rcvd, 3);
    sim_roce_qp_free(qp);
}
END_TEST

/* ---- the responder by hand ---- */

/* One NAK per sequence error; duplicates draw ACKs; the NAK acknowledges what came before. */
START_TEST(test_sim_roce_responder_one_nak)
{
    sim_roce_cfg cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    unsigned kinds[4] = {0};
    sim_roce_pkt p, last = {0};
    p = data(0, 1000, false, false, 1);
    sim_roce_read(qp, &p, 0);
    for (uint32_t psn = 2; psn < 6; psn++) {
        p = data(psn, 1000, false, false, 1);
        sim_roce_read(qp, &p, psn * US);
        drain(qp, psn * US, kinds, &last);
    }
    ck_assert_uint_eq(kinds[SIM_ROCE_NAK], 1);
    ck_assert_uint_eq(kinds[SIM_ROCE_ACK], 0);
    ck_assert_uint_eq(last.psn, 1);
    ck_assert_uint_eq(st(qp)->out_of_order_dropped, 4);
    /* the expected one ends the episode; the next gap NAKs again */
    p = data(1, 1000, false, false, 1);
    sim_roce_read(qp, &p, 10 * US);
    p = data(3, 1000, false, false, 1);
    sim_roce_read(qp, &p, 11 * US);
    drain(qp, 11 * US, kinds, &last);
    ck_assert_uint_eq(kinds[SIM_ROCE_NAK], 2);
    ck_assert_uint_eq(last.kind, SIM_ROCE_NAK);
    ck_assert_uint_eq(last.psn, 2);
    /* a duplicate draws a cumulative ACK */
    p = data(0, 1000, false, false, 1);
    sim_roce_read(qp, &p, 12 * US);
    drain(qp, 12 * US, kinds, &last);
    ck_assert_uint_eq(kinds[SIM_ROCE_ACK], 1);
    ck_assert_uint_eq(last.psn, 2);
    ck_assert_uint_eq(st(qp)->dup_rcvd, 1);
    ck_assert_uint_eq(st(qp)->data_pkts_rcvd, 8);
    sim_roce_qp_free(qp);
}
END_TEST

/* The receive CQ full: the last packet of a message is refused until a poll makes room. */
START_TEST(test_sim_roce_recv_cq_full)
{
    sim_roce_cfg cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    sim_roce_pkt p;
    for (uint32_t k = 0; k <= SIM_ROCE_RECV_CQ; k++) {
        p = data(k, 8, true, false, k);
        sim_roce_read(qp, &p, k);
    }
    ck_assert_uint_eq(st(qp)->cq_full_dropped, 1);
    sim_roce_done d;
    ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
    expect_done(&d, 0, 8, true);
    p = data(SIM_ROCE_RECV_CQ, 8, true, false, SIM_ROCE_RECV_CQ);
    sim_roce_read(qp, &p, 1 * US);
    ck_assert_uint_eq(st(qp)->cq_full_dropped, 1);
    for (uint64_t k = 1; k <= SIM_ROCE_RECV_CQ; k++) {
        ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
        expect_done(&d, k, 8, true);
    }
    ck_assert_int_eq(sim_roce_poll(qp, &d), 0);
    sim_roce_qp_free(qp);
}
END_TEST

/* Completions of both sides come out in the order they happened. */
START_TEST(test_sim_roce_poll_order)
{
    sim_roce_cfg cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 10, 1, 0), 0);
    ck_assert_int_eq(sim_roce_post(qp, 10, 2, 0), 0);
    drain(qp, 0, NULL, NULL);
    drain(qp, 1 * US, NULL, NULL);
    sim_roce_pkt p = data(0, 5, true, false, 70);
    sim_roce_read(qp, &p, 2 * US);
    p = ctrl(SIM_ROCE_ACK, 1);
    sim_roce_read(qp, &p, 3 * US);
    p = data(1, 6, true, false, 71);
    sim_roce_read(qp, &p, 4 * US);
    p = ctrl(SIM_ROCE_ACK, 2);
    sim_roce_read(qp, &p, 5 * US);
    sim_roce_done d;
    ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
    expect_done(&d, 70, 5, true);
    ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
    expect_done(&d, 1, 10, false);
    ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
    expect_done(&d, 71, 6, true);
    ck_assert_int_eq(sim_roce_poll(qp, &d), 1);
    expect_done(&d, 2, 10, false);
    ck_assert_int_eq(sim_roce_poll(qp, &d), 0);
    sim_roce_qp_free(qp);
}
END_TEST

/* ---- DCQCN ---- */

static sim_roce_cfg cfg_dcqcn(void)
{
    sim_roce_cfg cfg = cfg_base();
    cfg.dcqcn = true;
    return cfg;
}

static void cnp_at(sim_roce_qp *qp, uint64_t now)
{
    sim_roce_pkt p = ctrl(SIM_ROCE_CNP, 0);
    sim_roce_read(qp, &p, now);
}

/* CE marks draw CNPs, at most one per cnp_interval. */
START_TEST(test_sim_roce_cnp_interval)
{
    static const uint64_t at[] = {0, 10 * US, 49 * US, 50 * US, 99 * US, 120 * US, 121 * US};
    static const bool want[] = {true, false, false, true, false, true, false};
    sim_roce_cfg cfg = cfg_dcqcn();
    sim_roce_qp *qp = lone(&cfg, 100);
    for (unsigned k = 0; k < 7; k++) {
        sim_roce_pkt p = data(k, 1000, false, true, 1);
        sim_roce_read(qp, &p, at[k]);
        unsigned kinds[4] = {0};
        drain(qp, at[k], kinds, NULL);
        ck_assert_uint_eq(kinds[SIM_ROCE_CNP], want[k]);
    }
    ck_assert_uint_eq(st(qp)->cnps_sent, 3);
    /* unmarked packets draw none */
    sim_roce_pkt p = data(7, 1000, false, false, 1);
    sim_roce_read(qp, &p, 500 * US);
    ck_assert_uint_eq(drain(qp, 500 * US, NULL, NULL), 1); /* the ACK after 8 */
    ck_assert_uint_eq(st(qp)->cnps_sent, 3);
    sim_roce_qp_free(qp);
}
END_TEST

/* Without DCQCN, CE marks draw no CNP, and a CNP changes nothing. */
START_TEST(test_sim_roce_no_dcqcn_ignores_ce)
{
    sim_roce_cfg cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    unsigned kinds[4] = {0};
    for (uint32_t k = 0; k < 8; k++) {
        sim_roce_pkt p = data(k, 1000, false, true, 1);
        sim_roce_read(qp, &p, k * 100 * US);
        drain(qp, k * 100 * US, kinds, NULL);
    }
    ck_assert_uint_eq(kinds[SIM_ROCE_CNP], 0);
    ck_assert_uint_eq(kinds[SIM_ROCE_ACK], 2);
    ck_assert_int_eq(sim_roce_post(qp, 1 << 20, 1, 0), 0);
    cnp_at(qp, 1 * US);
    ck_assert_uint_eq(st(qp)->cnps_rcvd, 1);
    ck_assert_uint_eq(st(qp)->rate_decreases, 0);
    ck_assert_double_eq(st(qp)->rate_gbps, 100);
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER);
    /* the end to end version: the wire marks everything */
    net *n = net_new(&cfg, 100, 1 * US);
    n->ce_until[0] = SIM_NEVER;
    ck_assert_int_eq(sim_roce_post(n->q[0], 100000, 1, 0), 0);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(st(n->q[1])->cnps_sent, 0);
    ck_assert_double_eq(st(n->q[0])->rate_gbps, 100);
    ck_assert_uint_eq(n->ndone[1], 1);
    net_free(n);
    sim_roce_qp_free(qp);
}
END_TEST

/* The DCQCN paper's rules, step by step, for the tests' expectations. */
typedef struct ref {
    double rc, rt, alpha;
    unsigned t, bc;
} ref;

static void ref_cnp(ref *r, double g)
{
    r->rt = r->rc;
    r->rc *= 1 - r->alpha / 2;
    r->alpha = (1 - g) * r->alpha + g;
    r->t = r->bc = 0;
}

static void ref_increase(ref *r, const sim_roce_cfg *cfg, double line, bool timer)
{
    unsigned f = cfg->dc.fast_recovery;
    unsigned lo = r->t < r->bc ? r->t : r->bc, hi = r->t < r->bc ? r->bc : r->t;
    if (lo > f) {
        r->rt += cfg->dc.rate_hai_gbps;
    } else if (hi >= f) {
        r->rt += cfg->dc.rate_ai_gbps;
    }
    if (r->rt > line) {
        r->rt = line;
    }
    r->rc = (r->rt + r->rc) / 2;
    if (timer) {
        r->t++;
    } else {
        r->bc++;
    }
}

static void expect_rate(const sim_roce_qp *qp, double rc, double rt)
{
    ck_assert_double_eq_tol(st(qp)->rate_gbps, rc, TOL);
    ck_assert_double_eq_tol(st(qp)->target_gbps, rt, TOL);
}

/* A CNP cuts the rate by alpha/2 and remembers the old rate as the target; the timer then
 * brings it back: fast recovery F times, then additive increase, up to the line rate, where
 * the timer stops. */
START_TEST(test_sim_roce_dcqcn_cut_and_timer_recovery)
{
    sim_roce_cfg cfg = cfg_dcqcn();
    cfg.dc.alpha_timer_ps = 1000000 * US;
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 1 << 30, 1, 0), 0); /* busy; nothing sent */
    expect_rate(qp, 100, 100);
    ck_assert_double_eq(st(qp)->alpha, 1);
    cnp_at(qp, 1 * US);
    expect_rate(qp, 50, 100);
    cnp_at(qp, 2 * US);
    expect_rate(qp, 25, 50);
    ck_assert_double_eq_tol(st(qp)->alpha, 1, 1e-12); /* (1-g)*1 + g */
    ck_assert_uint_eq(st(qp)->rate_decreases, 2);
    ck_assert_uint_eq(sim_roce_expiry(qp), 57 * US);

    /* the numbers by hand: fast recovery halves the gap to 50 five times, then additive
     * increase raises the target by 5 */
    static const double fr[] = {37.5, 43.75, 46.875, 48.4375, 49.21875};
    for (unsigned k = 0; k < 5; k++) {
        sim_roce_on_timer(qp, 2 * US + (k + 1) * 55 * US);
        expect_rate(qp, fr[k], 50);
    }
    sim_roce_on_timer(qp, 2 * US + 6 * 55 * US);
    expect_rate(qp, 52.109375, 55);
    sim_roce_on_timer(qp, 2 * US + 7 * 55 * US);
    expect_rate(qp, 56.0546875, 60);

    /* then against the rules, up to the line rate */
    ref r = {.rc = 56.0546875, .rt = 60, .t = 7};
    unsigned k = 8;
    for (; k < 200 && sim_roce_expiry(qp) < 1000000 * US; k++) {
        uint64_t t = 2 * US + k * 55 * US;
        ck_assert_uint_eq(sim_roce_expiry(qp), t);
        sim_roce_on_timer(qp, t);
        ref_increase(&r, &cfg, 100, true);
        expect_rate(qp, r.rc, r.rt);
    }
    /* at the line rate the rate timer stops; alpha's is left */
    ck_assert_uint_lt(k, 200);
    ck_assert_double_eq(st(qp)->rate_gbps, 100);
    ck_assert_double_eq(st(qp)->target_gbps, 100);
    ck_assert_uint_eq(sim_roce_expiry(qp), 2 * US + 1000000 * US);
    sim_roce_qp_free(qp);
}
END_TEST

/* The byte counter counts rate increase events too; once both counters passed F, hyper
 * increase raises the target by rate_hai. */
START_TEST(test_sim_roce_dcqcn_byte_counter_hyper)
{
    sim_roce_cfg cfg = cfg_dcqcn();
    cfg.dc.alpha_timer_ps = 10000 * US;
    cfg.dc.byte_counter = 1000 + SIM_ROCE_DATA_HDR; /* every data packet */
    cfg.dc.rate_ai_gbps = 1;
    cfg.dc.rate_hai_gbps = 10;
    cfg.timeout_ps = 10000 * US;
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 1 << 20, 1, 0), 0);
    ref r = {.rc = 100, .rt = 100, .alpha = 1};
    for (unsigned k = 0; k < 2; k++) {
        cnp_at(qp, 0);
        ref_cnp(&r, cfg.dc.g);
        expect_rate(qp, r.rc, r.rt);
        ck_assert_double_eq_tol(st(qp)->alpha, r.alpha, 1e-12);
    }
    ck_assert_double_eq(r.rc, 25);
    /* six timer events: five of fast recovery, one additive */
    for (unsigned k = 1; k <= 6; k++) {
        sim_roce_on_timer(qp, k * 55 * US);
        ref_increase(&r, &cfg, 100, true);
        expect_rate(qp, r.rc, r.rt);
    }
    ck_assert_double_eq_tol(r.rt, 51, TOL);
    /* six data packets: additive (the timer's stage is past F, the bytes' is not); the
     * seventh: both past F, hyper */
    uint64_t now = 6 * 55 * US;
    for (unsigned k = 1; k <= 7; k++) {
        double rt0 = st(qp)->target_gbps;
        ck_assert_uint_le(sim_roce_next_tx(qp), now);
        ck_assert_uint_eq(drain(qp, now, NULL, NULL), 1);
        ref_increase(&r, &cfg, 100, false);
        expect_rate(qp, r.rc, r.rt);
        ck_assert_double_eq_tol(st(qp)->target_gbps - rt0, k < 7 ? 1 : 10, TOL);
        /* the next packet waits for this one at the rate now in force */
        uint64_t wt = (uint64_t)(1080 * 8000.0 / st(qp)->rate_gbps + 0.5);
        ck_assert_uint_eq(sim_roce_next_tx(qp), now + wt);
        now += wt;
    }
    ck_assert_uint_lt(now, 7 * 55 * US);
    sim_roce_qp_free(qp);
}
END_TEST

/* Alpha decays by (1-g) every alpha_timer without a CNP, and the next cut uses it. */
START_TEST(test_sim_roce_dcqcn_alpha_decay)
{
    sim_roce_cfg cfg = cfg_dcqcn();
    cfg.dc.g = 1.0 / 16;
    cfg.dc.alpha_timer_ps = 10 * US;
    cfg.dc.rate_timer_ps = 1000 * US;
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 1 << 20, 1, 0), 0);
    cnp_at(qp, 0);
    ck_assert_double_eq_tol(st(qp)->alpha, 1, 1e-12);
    double a = 1;
    for (unsigned k = 1; k <= 5; k++) {
        ck_assert_uint_eq(sim_roce_expiry(qp), k * 10 * US);
        sim_roce_on_timer(qp, k * 10 * US);
        a *= 15.0 / 16;
        ck_assert_double_eq_tol(st(qp)->alpha, a, 1e-12);
    }
    ck_assert_uint_eq(sim_roce_expiry(qp), 60 * US);
    cnp_at(qp, 55 * US);
    ck_assert_double_eq_tol(st(qp)->rate_gbps, 50 * (1 - a / 2), TOL);
    ck_assert_double_eq_tol(st(qp)->target_gbps, 50, TOL);
    ck_assert_double_eq_tol(st(qp)->alpha, a * 15 / 16 + 1.0 / 16, 1e-12);
    ck_assert_uint_eq(sim_roce_expiry(qp), 65 * US); /* restarted by the CNP */
    /* several periods at once are caught up in order */
    sim_roce_on_timer(qp, 95 * US);
    double a2 = a * 15 / 16 + 1.0 / 16;
    for (unsigned k = 0; k < 4; k++) { /* 65, 75, 85, 95 us */
        a2 *= 15.0 / 16;
    }
    ck_assert_double_eq_tol(st(qp)->alpha, a2, 1e-12);
    ck_assert_uint_eq(sim_roce_expiry(qp), 105 * US);
    sim_roce_qp_free(qp);
}
END_TEST

/* An idle end has no timer at all, DCQCN's included; posting again catches them up. */
START_TEST(test_sim_roce_idle_expiry_never)
{
    sim_roce_cfg cfg = cfg_dcqcn();
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER);
    ck_assert_uint_eq(sim_roce_next_tx(qp), SIM_NEVER);
    cnp_at(qp, 0);
    ck_assert_double_eq(st(qp)->rate_gbps, 50);
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER);
    ck_assert_uint_eq(sim_roce_next_tx(qp), SIM_NEVER);
    /* 110 us later: two rate timer periods and two alpha periods went by */
    ck_assert_int_eq(sim_roce_post(qp, 1000, 1, 110 * US), 0);
    ck_assert_double_eq_tol(st(qp)->rate_gbps, 87.5, TOL);
    ck_assert_double_eq_tol(st(qp)->alpha, (255.0 / 256) * (255.0 / 256), 1e-12);
    ck_assert_uint_eq(sim_roce_expiry(qp), 165 * US);
    sim_roce_pkt p;
    ck_assert_int_eq(sim_roce_write(qp, 110 * US, &p), 1);
    p = ctrl(SIM_ROCE_ACK, 1);
    sim_roce_read(qp, &p, 120 * US);
    ck_assert_uint_eq(sim_roce_expiry(qp), SIM_NEVER);
    ck_assert_uint_eq(sim_roce_next_tx(qp), SIM_NEVER);
    sim_roce_qp_free(qp);

    /* and a pair after a whole exchange, without DCQCN */
    cfg = cfg_base();
    net *n = net_new(&cfg, 100, 1 * US);
    expect_idle(n);
    ck_assert_int_eq(sim_roce_post(n->q[0], 50000, 1, 0), 0);
    net_run(n, SIM_NEVER);
    expect_idle(n);
    net_free(n);
}
END_TEST

/* End to end: the wire marks CE for 150 us; CNPs come once per 50 us, the sender's rate drops
 * with each and climbs back once the marks stop; every byte arrives. */
START_TEST(test_sim_roce_dcqcn_end_to_end)
{
    sim_roce_cfg cfg = cfg_dcqcn();
    net *n = net_new(&cfg, 100, 1 * US);
    n->ce_until[0] = 150 * US;
    ck_assert_int_eq(sim_roce_post(n->q[0], 20000000, 9, 0), 0);
    net_run(n, 140 * US);
    /* CE data arrives from 1 us on: CNPs at 1, 51, 101 us */
    ck_assert_uint_eq(st(n->q[1])->cnps_sent, 3);
    ck_assert_uint_eq(st(n->q[0])->rate_decreases, 3);
    double low = st(n->q[0])->rate_gbps;
    ck_assert_double_lt(low, 100);
    net_run(n, 400 * US);
    ck_assert_uint_eq(st(n->q[1])->cnps_sent, 3);
    ck_assert_double_gt(st(n->q[0])->rate_gbps, low);
    net_run(n, SIM_NEVER);
    ck_assert_uint_eq(n->ndone[0], 1);
    expect_done(&n->done[0][0], 9, 20000000, false);
    ck_assert_uint_eq(n->ndone[1], 1);
    expect_done(&n->done[1][0], 9, 20000000, true);
    ck_assert_uint_eq(st(n->q[0])->retx_pkts, 0);
    /* slower than the line rate would have been */
    ck_assert_uint_gt(n->done_t[1][0], 20000 * (uint64_t)(1080 * 80));
    expect_idle(n);
    net_free(n);
}
END_TEST

/* A bad configuration is refused at creation. */
START_TEST(test_sim_roce_bad_cfg)
{
    sim_roce_cfg cfg = cfg_base();
    ck_assert_ptr_null(sim_roce_qp_new(&cfg, 0, 1, 2, 0));
    cfg.mtu = 0;
    ck_assert_ptr_null(sim_roce_qp_new(&cfg, 100, 1, 2, 0));
    sim_roce_qp_free(NULL);
    /* PSNs are fixed once a message is posted */
    cfg = cfg_base();
    sim_roce_qp *qp = lone(&cfg, 100);
    ck_assert_int_eq(sim_roce_post(qp, 1, 1, 0), 0);
    ck_assert_int_eq(sim_roce_qp_set_psn(qp, 5, 5), -1);
    /* half the PSN space at most outstanding */
    ck_assert_int_eq(sim_roce_post(qp, (uint64_t)1000 * 0x800000u, 2, 0), -1);
    ck_assert_int_eq(sim_roce_post(qp, (uint64_t)1000 * (0x800000u - 2), 2, 0), 0);
    sim_roce_qp_free(qp);
}
END_TEST

Suite *sim_roce_suite(void)
{
    Suite *s = suite_create("roce");
    TCase *tc = tcase_create("roce");
    tcase_add_test(tc, test_sim_roce_message_completes);
    tcase_add_test(tc, test_sim_roce_empty_message);
    tcase_add_test(tc, test_sim_roce_bidirectional);
    tcase_add_test(tc, test_sim_roce_completions_in_order);
    tcase_add_test(tc, test_sim_roce_psn_wrap);
    tcase_add_test(tc, test_sim_roce_drawn_psns);
    tcase_add_test(tc, test_sim_roce_pacing_line_rate);
    tcase_add_test(tc, test_sim_roce_pacing_by_hand);
    tcase_add_test(tc, test_sim_roce_lost_data_nak_go_back_n);
    tcase_add_test(tc, test_sim_roce_lost_ack_healed_by_later_ack);
    tcase_add_test(tc, test_sim_roce_lost_ack_healed_by_duplicate);
    tcase_add_test(tc, test_sim_roce_lost_nak_timeout);
    tcase_add_test(tc, test_sim_roce_lost_tail_timeout);
    tcase_add_test(tc, test_sim_roce_dead_peer_fails);
    tcase_add_test(tc, test_sim_roce_progress_resets_retry);
    tcase_add_test(tc, test_sim_roce_bad_acks_ignored);
    tcase_add_test(tc, test_sim_roce_responder_one_nak);
    tcase_add_test(tc, test_sim_roce_recv_cq_full);
    tcase_add_test(tc, test_sim_roce_poll_order);
    tcase_add_test(tc, test_sim_roce_cnp_interval);
    tcase_add_test(tc, test_sim_roce_no_dcqcn_ignores_ce);
    tcase_add_test(tc, test_sim_roce_dcqcn_cut_and_timer_recovery);
    tcase_add_test(tc, test_sim_roce_dcqcn_byte_counter_hyper);
    tcase_add_test(tc, test_sim_roce_dcqcn_alpha_decay);
    tcase_add_test(tc, test_sim_roce_idle_expiry_never);
    tcase_add_test(tc, test_sim_roce_dcqcn_end_to_end);
    tcase_add_test(tc, test_sim_roce_bad_cfg);
    suite_add_tcase(s, tc);
    return s;
}
