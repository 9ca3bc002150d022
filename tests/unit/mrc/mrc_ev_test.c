/* SPDX-License-Identifier: MIT */
/* Unit tests of the EV state machine: every transition with its reason and counters, recovery
 * probes, denial, same-plane replacement, the min-active floor, spraying, reverse EVs. */
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

#define PSN(base, d) mrc_psn_add((base), (d))

static void requester(mrc_test_node *a, const mrc_test_opts *o)
{
    mrc_test_node_new(a, o, 0);
    mrc_test_node_up(a, o, MRC_TEST_PEER_QPN, 0);
}

/* A SACK from the made-up peer acknowledging nothing, with path feedback |m| for |ev|. */
static void feedback(mrc_test_node *a, uint32_t sq_psn, uint32_t ev, uint8_t m, uint64_t now)
{
    mrc_test_pkt s;
    mrc_test_build_sack(&s, a, PSN(sq_psn, -1), 0, 1, 0, m, ev, 0);
    ck_assert_int_eq(mrc_test_push(a, &s, NULL, now), 0);
}

/* The next EV event of |n|: it must be |ev| going |from| -> |to| for |why|. */
#define expect_event(n, ev_, from_, to_, why_)                                                     \
    do {                                                                                           \
        mrc_ev_event e_;                                                                           \
        ck_assert_msg(mrc_poll_ev_events((n)->ctx, &e_, 1) == 1, "no EV event");                   \
        ck_assert_msg(e_.ev == (ev_) && e_.old_state == (from_) && e_.new_state == (to_) &&        \
                          e_.reason == (why_),                                                     \
                      "event: EV 0x%08x %u -> %u reason %u, want 0x%08x %u -> %u reason %u",       \
                      e_.ev, e_.old_state, e_.new_state, e_.reason, (uint32_t)(ev_),               \
                      (unsigned)(from_), (unsigned)(to_), (unsigned)(why_));                       \
        ck_assert_uint_eq(e_.qpn, mrc_qp_num((n)->qp));                                            \
        ck_assert_uint_eq(e_.port, mrc_test_ev_port(ev_));                                         \
    } while (0)

static void no_events(mrc_test_node *n)
{
    mrc_ev_event e;
    int k = mrc_poll_ev_events(n->ctx, &e, 1);
    ck_assert_msg(k == 0, "unexpected event: EV 0x%08x %u -> %u reason %u", e.ev, e.old_state,
                  e.new_state, e.reason);
}

/* Pulls the next data packet; returns its EV. */
static uint32_t pull_ev(mrc_test_node *a, uint64_t now)
{
    mrc_test_pkt p;
    ck_assert_int_gt(mrc_test_pull(a, &p, now), 0);
    ck_assert(mrc_test_is_data(&p));
    return p.info.ev;
}

/* GOOD -> SKIP by an ECN echo: a CE-marked packet is SACKed at once with m = SKIP_ONCE. */
START_TEST(test_mrc_ev_good_to_skip_by_ecn)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    ck_assert_int_eq(
        mrc_test_post_write(&a, 1, false, 0, 0, 3000, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 0), 0);
    mrc_test_pkt p, s;
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    uint32_t ev = p.info.ev;
    ck_assert_uint_eq(p.info.ecn, MRC_ECN_ECT0);
    mrc_rx_info rx = mrc_test_rx(&p);
    rx.ecn = MRC_ECN_CE;
    ck_assert_int_eq(mrc_test_push(&b, &p, &rx, 10), 0);
    ck_assert_int_gt(mrc_test_pull(&b, &s, 10), 0);
    ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
    ck_assert_uint_eq(s.pkt.seth.m, MRC_M_SKIP_ONCE);
    ck_assert_uint_eq(s.pkt.seth.entropy, ev);
    ck_assert_int_eq(mrc_test_push(&a, &s, NULL, 20), 0);
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
    ck_assert_uint_eq(es.state, MRC_EV_SKIP);
    ck_assert_uint_eq(es.ecn, 1);
    ck_assert_uint_eq(es.transitions, 1);
    ck_assert(es.active); /* SKIP only bypasses it */
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ecn_echoes, 1);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_GOOD][MRC_EV_SKIP], 1);
    ck_assert_uint_eq(st.ev_count[MRC_EV_SKIP], 1);
    ck_assert_uint_eq(st.ev_count[MRC_EV_GOOD], 7);
    expect_event(&a, ev, MRC_EV_GOOD, MRC_EV_SKIP, MRC_EVR_ECN);
    no_events(&a);
    /* a second echo for a SKIP EV counts, but is no transition */
    feedback(&a, o.sq_psn, ev, MRC_M_SKIP_ONCE, 30);
    ck_assert_uint_eq(mrc_test_stats(&a).ev_transitions[MRC_EV_GOOD][MRC_EV_SKIP], 1);
    ck_assert_uint_eq(mrc_test_stats(&a).ecn_echoes, 2);
    no_events(&a);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* GOOD -> SKIP by a mid-fabric trim. */
START_TEST(test_mrc_ev_good_to_skip_by_trim)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    uint32_t ev = pull_ev(&a, 0);
    mrc_test_pkt n;
    mrc_test_build_nack(&n, &a, MRC_NACK_TRIMMED, o.sq_psn, ev, 0);
    ck_assert_int_eq(mrc_test_push(&a, &n, NULL, 10), 0);
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
    ck_assert_uint_eq(es.state, MRC_EV_SKIP);
    ck_assert_uint_eq(es.trims, 1);
    ck_assert_uint_eq(mrc_test_stats(&a).ev_transitions[MRC_EV_GOOD][MRC_EV_SKIP], 1);
    expect_event(&a, ev, MRC_EV_GOOD, MRC_EV_SKIP, MRC_EVR_TRIM);
    no_events(&a);
    mrc_test_node_free(&a);
}
END_TEST

/* One port, 4 active EVs, a long write: the rotations can be watched packet by packet. */
static void rotation_setup(mrc_test_node *a, mrc_test_opts *o)
{
    mrc_test_opts_default(o);
    o->ports = 1;
    o->evs_per_port = 4;
    o->mtu = 256;
    o->set.skip_max_ns = 10000;
    requester(a, o);
    ck_assert_int_eq(mrc_test_post_write(a, 1, false, 0, 0, 64 * 256, 0x10000, 0x101, 0), 0);
}

/* SKIP -> GOOD with the rotation: a skipped EV sits out the rest of the current rotation and
 * is back for the next one. */
START_TEST(test_mrc_ev_skip_to_good_by_rotation)
{
    mrc_test_opts o;
    mrc_test_node a;
    rotation_setup(&a, &o);
    /* rotation 1: every EV once */
    uint32_t seen = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t ev = pull_ev(&a, 0);
        unsigned idx = (ev >> 8 & 0xff) - 1;
        ck_assert_msg(!(seen & 1u << idx), "EV 0x%08x twice in a rotation", ev);
        seen |= 1u << idx;
    }
    /* rotation 2 starts with x; y, not used yet in it, is skipped */
    uint32_t x = pull_ev(&a, 0), y = mrc_test_ev(0, 0) == x ? mrc_test_ev(0, 1) : mrc_test_ev(0, 0);
    feedback(&a, o.sq_psn, y, MRC_M_SKIP_ONCE, 0);
    expect_event(&a, y, MRC_EV_GOOD, MRC_EV_SKIP, MRC_EVR_ECN);
    for (int i = 0; i < 2; i++) {
        uint32_t ev = pull_ev(&a, 0);
        ck_assert_uint_ne(ev, y);
        ck_assert_uint_ne(ev, x);
    }
    ck_assert_uint_eq(mrc_test_ev_stats(&a, y).state, MRC_EV_SKIP);
    /* rotation 3: y is back */
    unsigned ny = 0;
    for (int i = 0; i < 4; i++) {
        ny += pull_ev(&a, 0) == y;
    }
    ck_assert_uint_eq(ny, 1);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, y).state, MRC_EV_GOOD);
    expect_event(&a, y, MRC_EV_SKIP, MRC_EV_GOOD, MRC_EVR_ROTATION);
    no_events(&a);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_SKIP][MRC_EV_GOOD], 1);
    ck_assert_uint_eq(st.ev_count[MRC_EV_GOOD], 4);
    mrc_test_node_free(&a);
}
END_TEST

/* SKIP -> GOOD after skip_max_ns even inside the rotation. */
START_TEST(test_mrc_ev_skip_to_good_by_time)
{
    mrc_test_opts o;
    mrc_test_node a;
    rotation_setup(&a, &o);
    for (int i = 0; i < 4; i++) {
        pull_ev(&a, 0);
    }
    uint32_t x = pull_ev(&a, 0), y = mrc_test_ev(0, 0) == x ? mrc_test_ev(0, 1) : mrc_test_ev(0, 0);
    feedback(&a, o.sq_psn, y, MRC_M_SKIP_ONCE, 0);
    expect_event(&a, y, MRC_EV_GOOD, MRC_EV_SKIP, MRC_EVR_ECN);
    /* the rest of rotation 2, past skip_max_ns: y takes its turn */
    uint64_t later = o.set.skip_max_ns + 1;
    unsigned ny = 0;
    for (int i = 0; i < 3; i++) {
        uint32_t ev = pull_ev(&a, later);
        ck_assert_uint_ne(ev, x);
        ny += ev == y;
    }
    ck_assert_uint_eq(ny, 1);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, y).state, MRC_EV_GOOD);
    /* the engine has no reason code of its own for the time limit */
    expect_event(&a, y, MRC_EV_SKIP, MRC_EV_GOOD, MRC_EVR_ROTATION);
    mrc_test_node_free(&a);
}
END_TEST

/* SKIP ends after skip_max_ns whether or not the QP sends: its state, its count and its event
 * say so once the time has passed and the timers have run. */
START_TEST(test_mrc_ev_skip_expires_while_idle)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.set.skip_max_ns = 10000;
    requester(&a, &o);
    uint32_t y = mrc_test_ev(1, 2);
    feedback(&a, o.sq_psn, y, MRC_M_SKIP_ONCE, 0);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, y).state, MRC_EV_SKIP);
    uint64_t now = 0;
    while (mrc_get_expiry(a.ctx) <= 5 * o.set.skip_max_ns) {
        now = mrc_get_expiry(a.ctx) > now ? mrc_get_expiry(a.ctx) : now;
        mrc_handle_expiry(a.ctx, now);
    }
    now = 5 * o.set.skip_max_ns;
    mrc_handle_expiry(a.ctx, now);
    /* a regression test: at 35bd501 SKIP ended only inside mrc_ev_pick, when the EV's turn
     * came, so an idle QP reported SKIP long after skip_max_ns (fixed by b0df818) */
    ck_assert_msg(mrc_test_ev_stats(&a, y).state == MRC_EV_GOOD,
                  "EV still SKIP %llu ns after it began (skip_max_ns %llu)",
                  (unsigned long long)now, (unsigned long long)o.set.skip_max_ns);
    ck_assert_uint_eq(mrc_test_stats(&a).ev_count[MRC_EV_SKIP], 0);
    mrc_test_node_free(&a);
}
END_TEST

/* GOOD -> ASSUMED_BAD by a timeout: the EV leaves the active set, the resend takes another. */
START_TEST(test_mrc_ev_good_to_bad_by_timeout)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.set.tlp_pct = 0;
    o.timeout = 1;
    o.active = 4; /* 2 active and 2 backups per port */
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 0), 0);
    uint32_t ev = pull_ev(&a, 0);
    ck_assert(mrc_test_ev_stats(&a, ev).active);
    uint64_t now = 0;
    mrc_test_pkt p;
    while (mrc_test_stats(&a).timeouts == 0) {
        now = mrc_get_expiry(a.ctx);
        ck_assert_uint_le(now, 2048);
        mrc_handle_expiry(a.ctx, now);
    }
    ck_assert_uint_eq(now, 2048);
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
    ck_assert_uint_eq(es.state, MRC_EV_ASSUMED_BAD);
    ck_assert_uint_eq(es.timeouts, 1);
    ck_assert(!es.active);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_GOOD][MRC_EV_ASSUMED_BAD], 1);
    ck_assert_uint_eq(st.ev_count[MRC_EV_ASSUMED_BAD], 1);
    ck_assert_uint_eq(st.ev_count[MRC_EV_GOOD], 7);
    expect_event(&a, ev, MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_TIMEOUT);
    no_events(&a);
    ck_assert_int_gt(mrc_test_pull(&a, &p, now), 0);
    ck_assert(mrc_test_is_data(&p) && p.pkt.bth.rtx);
    ck_assert_uint_ne(p.info.ev, ev);
    /* the port still has its 2 active EVs */
    unsigned active = 0;
    for (unsigned i = 0; i < 4; i++) {
        active += mrc_test_ev_stats(&a, mrc_test_ev(mrc_test_ev_port(ev), i)).active;
    }
    ck_assert_uint_eq(active, 2);
    mrc_test_node_free(&a);
}
END_TEST

/* Untrimmed losses are counted on their EV: one that a later first copy on the same EV shows
 * (the path keeps order) in |lost|, one found by a timeout in |timeouts| alone; no other EV is
 * charged. The agent's report adds the two to tell the controller what a path lost. */
START_TEST(test_mrc_ev_lost_counted)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 1;
    o.evs_per_port = 2;
    o.mtu = 256;
    o.timeout = 1;
    o.set.tlp_pct = 0;
    o.set.ev_in_order = true;
    requester(&a, &o);
    uint32_t p0 = o.sq_psn;
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 8 * 256, 0x10000, 0x101, 0), 0);
    mrc_test_pkt p;
    uint32_t ev[8];
    for (unsigned k = 0; k < 8; k++) {
        ev[k] = pull_ev(&a, 0);
    }
    uint32_t other = ev[0] == mrc_test_ev(0, 0) ? mrc_test_ev(0, 1) : mrc_test_ev(0, 0);
    /* +1 .. +7 received, +0 not: a later packet on +0's EV arrived, so +0 is lost */
    mrc_test_build_sack(&p, &a, PSN(p0, -1), 7, 1, 0xfe, MRC_M_NONE, ev[7], 0);
    ck_assert_int_eq(mrc_test_push(&a, &p, NULL, 1000), 0);
    ck_assert_uint_eq(mrc_test_stats(&a).retx_by_cause[MRC_RETX_INFERRED], 1);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, ev[0]).lost, 1);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, ev[0]).timeouts, 0);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, other).lost, 0);
    /* the resend is lost too, and found by the timer */
    ck_assert_int_gt(mrc_test_pull(&a, &p, 1000), 0);
    ck_assert(mrc_test_is_data(&p) && p.pkt.bth.rtx);
    uint32_t rtx_ev = p.info.ev;
    uint64_t now = 1000;
    while (mrc_test_stats(&a).timeouts == 0) {
        now = mrc_get_expiry(a.ctx);
        ck_assert_uint_le(now, 1000000);
        mrc_handle_expiry(a.ctx, now);
    }
    mrc_ev_stats es = mrc_test_ev_stats(&a, rtx_ev);
    ck_assert_uint_eq(es.timeouts, 1);
    ck_assert_uint_eq(es.lost, rtx_ev == ev[0] ? 1 : 0);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, ev[0]).lost + mrc_test_ev_stats(&a, other).lost, 1);
    mrc_test_node_free(&a);
}
END_TEST

/* Marks CE on every data packet a sends on EV |user|. */
static bool ce_on_ev(void *user, unsigned from, mrc_test_pkt *p, mrc_rx_info *info)
{
    if (from == 0 && mrc_test_is_data(p) && p->info.ev == *(uint32_t *)user) {
        info->ecn = MRC_ECN_CE;
    }
    return true;
}

/* The responder's verdict: ALWAYS_SKIP when always_skip_pct of an EV's last always_skip_window
 * packets were CE-marked; SKIP_ONCE for each marked packet before. */
START_TEST(test_mrc_ev_always_skip_verdict)
{
    for (int ce = 5; ce <= 6; ce++) {
        mrc_test_opts o;
        mrc_test_node b;
        mrc_test_opts_default(&o);
        o.set.always_skip_window = 8;
        o.set.always_skip_pct = 75;
        o.set.sack_every = 1;
        mrc_test_node_new(&b, &o, 1);
        mrc_test_node_up(&b, &o, MRC_TEST_PEER_QPN, 0);
        uint32_t ev = mrc_test_ev(0, 3);
        uint8_t last_m = 0xff;
        for (int k = 0; k < 8; k++) {
            static uint8_t pay[1024];
            mrc_test_pkt d, s;
            uint8_t op = k == 0   ? MRC_OP_WRITE_FIRST
                         : k == 7 ? MRC_OP_WRITE_LAST
                                  : MRC_OP_WRITE_MIDDLE;
            mrc_test_build_data(&d, &b, op, PSN(o.rq_psn, k), 1, 0,
                                mrc_test_va(&b, (size_t)k * 1024), mrc_mr_rkey(b.mr), 8 * 1024, pay,
                                1024, ev, 0);
            mrc_rx_info rx = mrc_test_rx(&d);
            rx.ecn = k < ce ? MRC_ECN_CE : MRC_ECN_ECT0;
            ck_assert_int_eq(mrc_test_push(&b, &d, &rx, 0), 0);
            ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
            ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
            ck_assert_uint_eq(s.pkt.seth.entropy, ev);
            if (k < 7) {
                ck_assert_uint_eq(s.pkt.seth.m, k < ce ? MRC_M_SKIP_ONCE : MRC_M_NONE);
            }
            last_m = s.pkt.seth.m;
        }
        ck_assert_uint_eq(last_m, ce == 6 ? MRC_M_ALWAYS_SKIP : MRC_M_NONE);
        mrc_test_node_free(&b);
    }
}
END_TEST

/* Light marks window after window are persistent too: ALWAYS_SKIP once always_skip_runs
 * windows in a row each had a mark, not before, and never with the rule off; a window with
 * no mark starts the count again. */
START_TEST(test_mrc_ev_always_skip_runs)
{
    /* marks: at the start of each window of 8, except where |gap| says */
    for (int runs = 0; runs <= 3; runs += 3) {
        for (int gap = -1; gap <= 1; gap += 2) {
            mrc_test_opts o;
            mrc_test_node b;
            mrc_test_opts_default(&o);
            o.set.always_skip_window = 8;
            o.set.always_skip_pct = 75;
            o.set.always_skip_runs = (unsigned)runs;
            o.set.sack_every = 1;
            mrc_test_node_new(&b, &o, 1);
            mrc_test_node_up(&b, &o, MRC_TEST_PEER_QPN, 0);
            uint32_t ev = mrc_test_ev(0, 3);
            int verdict = -1; /* the packet whose SACK said ALWAYS_SKIP */
            for (int k = 0; k < 40; k++) {
                static uint8_t pay[1024];
                mrc_test_pkt d, s;
                uint8_t op = k == 0 ? MRC_OP_WRITE_FIRST : k == 39 ? MRC_OP_WRITE_LAST
                                                                   : MRC_OP_WRITE_MIDDLE;
                mrc_test_build_data(&d, &b, op, PSN(o.rq_psn, k), 1, 0,
                                    mrc_test_va(&b, (size_t)k * 1024), mrc_mr_rkey(b.mr),
                                    40 * 1024, pay, 1024, ev, 0);
                mrc_rx_info rx = mrc_test_rx(&d);
                rx.ecn = k % 8 == 0 && k / 8 != gap ? MRC_ECN_CE : MRC_ECN_ECT0;
                ck_assert_int_eq(mrc_test_push(&b, &d, &rx, 0), 0);
                while (mrc_test_pull(&b, &s, 0) > 0) {
                    if (s.pkt.bth.opcode == MRC_OP_SACK && s.pkt.seth.m == MRC_M_ALWAYS_SKIP &&
                        verdict < 0) {
                        verdict = k;
                    }
                }
            }
            /* three windows of marks end at packet 23; with the second window unmarked the
             * count starts again at the third and ends at 39 */
            int want = runs == 0 ? -1 : gap < 0 ? 23 : 39;
            ck_assert_int_eq(verdict, want);
            mrc_test_node_free(&b);
        }
    }
}
END_TEST

/* GOOD -> ASSUMED_BAD by ALWAYS_SKIP: a run of CE marks on one EV, end to end. */
START_TEST(test_mrc_ev_good_to_bad_by_always_skip)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    o.set.always_skip_window = 8;
    o.set.always_skip_pct = 75;
    o.set.skip_max_ns = 1000000;
    o.mpr = o.mpr_dest = 2;
    o.memlen = 256 * 1024;
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    uint32_t ev = mrc_test_ev(1, 1);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 200 * 1024, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    mrc_test_pump(&a, &b, 0, ce_on_ev, &ev);
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
    ck_assert_uint_eq(es.state, MRC_EV_ASSUMED_BAD);
    ck_assert_uint_ge(es.ecn, 6);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_ge(st.always_skips, 1); /* a verdict per window of its packets */
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_SKIP][MRC_EV_ASSUMED_BAD] +
                          st.ev_transitions[MRC_EV_GOOD][MRC_EV_ASSUMED_BAD],
                      1);
    /* its SKIPs and returns, then the verdict */
    mrc_ev_event e;
    int n = 0;
    while (mrc_poll_ev_events(a.ctx, &e, 1) == 1) {
        ck_assert_uint_eq(e.ev, ev);
        if (e.new_state == MRC_EV_ASSUMED_BAD) {
            ck_assert_uint_eq(e.reason, MRC_EVR_ALWAYS_SKIP);
            n++;
        } else {
            ck_assert(e.reason == MRC_EVR_ECN || e.reason == MRC_EVR_ROTATION);
        }
    }
    ck_assert_int_eq(n, 1);
    /* and a verdict from a SACK on a GOOD EV takes it out directly */
    uint32_t ev2 = mrc_test_ev(0, 2);
    feedback(&a, o.sq_psn, ev2, MRC_M_ALWAYS_SKIP, 10);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, ev2).state, MRC_EV_ASSUMED_BAD);
    expect_event(&a, ev2, MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_ALWAYS_SKIP);
    ck_assert_uint_eq(mrc_test_stats(&a).always_skips, st.always_skips + 1);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Watches a's probes on |ev|, answers them or not. */
typedef struct probe_watch {
    uint32_t ev;
    bool drop;
    unsigned n;
    uint64_t *times;
    uint64_t now;
} probe_watch;

static bool watch_probes(void *user, unsigned from, mrc_test_pkt *p, mrc_rx_info *info)
{
    probe_watch *w = user;
    (void)info;
    if (from == 0 && p->pkt.bth.opcode == MRC_OP_PROBE) {
        ck_assert_uint_eq(p->info.ev, w->ev);
        ck_assert_uint_lt(w->n, 32);
        w->times[w->n++] = w->now;
        return !w->drop;
    }
    return true;
}

/* Runs the link and the timers from |now| to |until|, the watch told the time. */
static uint64_t run_watched(mrc_test_node *a, mrc_test_node *b, uint64_t now, uint64_t until,
                            probe_watch *w)
{
    for (unsigned i = 0; i < 100000; i++) {
        w->now = now;
        mrc_test_pump(a, b, now, watch_probes, w);
        uint64_t e = mrc_test_expiry(a, b);
        if (e > until) {
            return now;
        }
        now = e > now ? e : now;
        mrc_handle_expiry(a->ctx, now);
        mrc_handle_expiry(b->ctx, now);
    }
    ck_abort_msg("timers never settle");
    return now;
}

/* ASSUMED_BAD -> GOOD after probe_recover recovery probes are answered, each probe_interval_ns
 * after the last. */
START_TEST(test_mrc_ev_bad_to_good_by_probes)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    o.set.probe_interval_ns = 50000;
    o.set.probe_recover = 3;
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    uint32_t ev = mrc_test_ev(1, 3);
    feedback(&a, o.sq_psn, ev, MRC_M_ALWAYS_SKIP, 1000);
    expect_event(&a, ev, MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_ALWAYS_SKIP);
    uint64_t t[32];
    probe_watch w = {.ev = ev, .times = t};
    uint64_t end = run_watched(&a, &b, 1000, 10000000, &w);
    ck_assert_uint_eq(w.n, 3);
    ck_assert_uint_eq(t[0], 1000 + 50000);
    ck_assert_uint_eq(t[1], t[0] + 50000); /* the link answers at once */
    ck_assert_uint_eq(t[2], t[1] + 50000);
    ck_assert_uint_ge(end, t[2]);
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
    ck_assert_uint_eq(es.state, MRC_EV_GOOD);
    ck_assert_uint_eq(es.probes_sent, 3);
    ck_assert_uint_eq(es.probes_ok, 3);
    ck_assert_uint_eq(es.probes_lost, 0);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_ASSUMED_BAD][MRC_EV_GOOD], 1);
    ck_assert_uint_eq(st.ev_count[MRC_EV_GOOD], 8);
    ck_assert_uint_eq(st.probes_answered, 3);
    ck_assert_uint_eq(mrc_test_stats(&b).probes_rcvd, 3);
    expect_event(&a, ev, MRC_EV_ASSUMED_BAD, MRC_EV_GOOD, MRC_EVR_PROBE_OK);
    no_events(&a);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Lost recovery probes back off x2 up to probe_interval_max_ns; the EV stays out until enough
 * probes come back again. */
START_TEST(test_mrc_ev_probe_backoff)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    o.set.probe_interval_ns = 50000;
    o.set.probe_interval_max_ns = 400000;
    o.set.probe_recover = 2;
    o.timeout = 4; /* a probe is lost after 16384 ns */
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    const uint64_t rto = 16384;
    uint32_t ev = mrc_test_ev(0, 1);
    feedback(&a, o.sq_psn, ev, MRC_M_ALWAYS_SKIP, 0);
    uint64_t t[32];
    probe_watch w = {.ev = ev, .drop = true, .times = t};
    uint64_t end = run_watched(&a, &b, 0, 2000000, &w);
    ck_assert_uint_ge(w.n, 5);
    ck_assert_uint_eq(t[0], 50000);
    for (unsigned k = 1; k < w.n; k++) {
        uint64_t ivl = 50000ull << k;
        ivl = ivl < 400000 ? ivl : 400000;
        ck_assert_msg(t[k] == t[k - 1] + rto + ivl, "probe %u at %llu, want %llu", k,
                      (unsigned long long)t[k], (unsigned long long)(t[k - 1] + rto + ivl));
    }
    mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
    ck_assert_uint_eq(es.state, MRC_EV_ASSUMED_BAD);
    ck_assert_uint_ge(es.probes_lost, w.n - 1);
    ck_assert_uint_eq(es.probes_ok, 0);
    /* the path heals: two answered probes and it is back */
    w.drop = false;
    w.n = 0;
    run_watched(&a, &b, end, end + 2000000, &w);
    ck_assert_uint_eq(w.n, 2);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, ev).state, MRC_EV_GOOD);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* DENIED: from GOOD, SKIP and ASSUMED_BAD; no traffic, no probe, no automatic change; back to
 * GOOD only by the controller. */
START_TEST(test_mrc_ev_denied_and_back)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 1;
    o.mtu = 256;
    o.set.probe_interval_ns = 1000;
    o.set.tlp_pct = 0;
    requester(&a, &o);
    uint32_t g = mrc_test_ev(0, 0), s = mrc_test_ev(0, 1), bad = mrc_test_ev(0, 2);
    feedback(&a, o.sq_psn, s, MRC_M_SKIP_ONCE, 0);
    feedback(&a, o.sq_psn, bad, MRC_M_ALWAYS_SKIP, 0);
    mrc_ev_event e;
    while (mrc_poll_ev_events(a.ctx, &e, 1) == 1) {
    }
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, g, MRC_EV_DENIED, 10), 0);
    expect_event(&a, g, MRC_EV_GOOD, MRC_EV_DENIED, MRC_EVR_DENY);
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, s, MRC_EV_DENIED, 10), 0);
    expect_event(&a, s, MRC_EV_SKIP, MRC_EV_DENIED, MRC_EVR_DENY);
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, bad, MRC_EV_DENIED, 10), 0);
    expect_event(&a, bad, MRC_EV_ASSUMED_BAD, MRC_EV_DENIED, MRC_EVR_DENY);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ev_count[MRC_EV_DENIED], 3);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_GOOD][MRC_EV_DENIED], 1);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_SKIP][MRC_EV_DENIED], 1);
    ck_assert_uint_eq(st.ev_transitions[MRC_EV_ASSUMED_BAD][MRC_EV_DENIED], 1);
    /* all traffic on the one EV left; no probe for the denied ones, however long */
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 32 * 256, 0x10000, 0x101, 10), 0);
    mrc_test_pkt p;
    unsigned n = 0;
    while (mrc_test_pull(&a, &p, 10) > 0) {
        ck_assert(mrc_test_is_data(&p));
        ck_assert_uint_eq(p.info.ev, mrc_test_ev(0, 3));
        n++;
    }
    ck_assert_uint_eq(n, 32);
    for (uint64_t now = 10; now < 100000; now += 5000) {
        mrc_handle_expiry(a.ctx, now);
        while (mrc_test_pull(&a, &p, now) > 0) {
            ck_assert_uint_ne(p.pkt.bth.opcode, MRC_OP_PROBE);
        }
    }
    ck_assert_uint_eq(mrc_test_stats(&a).probes_sent, 0);
    /* automatic verdicts leave DENIED alone */
    feedback(&a, o.sq_psn, g, MRC_M_ALWAYS_SKIP, 100000);
    feedback(&a, o.sq_psn, s, MRC_M_SKIP_ONCE, 100000);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, g).state, MRC_EV_DENIED);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, s).state, MRC_EV_DENIED);
    no_events(&a);
    /* GOOD lifts a denial, and only a denial */
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, g, MRC_EV_GOOD, 100000), 0);
    expect_event(&a, g, MRC_EV_DENIED, MRC_EV_GOOD, MRC_EVR_ALLOW);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, g).state, MRC_EV_GOOD);
    feedback(&a, o.sq_psn, mrc_test_ev(0, 3), MRC_M_ALWAYS_SKIP, 100000);
    expect_event(&a, mrc_test_ev(0, 3), MRC_EV_GOOD, MRC_EV_ASSUMED_BAD, MRC_EVR_ALWAYS_SKIP);
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, mrc_test_ev(0, 3), MRC_EV_GOOD, 100000), 0);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, mrc_test_ev(0, 3)).state, MRC_EV_ASSUMED_BAD);
    no_events(&a);
    /* the API's own errors */
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, g, MRC_EV_SKIP, 0), MRC_ERR_INVAL);
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, g, MRC_EV_ASSUMED_BAD, 0), MRC_ERR_INVAL);
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, 0x12345678, MRC_EV_DENIED, 0), MRC_ERR_NOTFOUND);
    mrc_qp_attr r = {.qp_state = MRC_QPS_RESET};
    ck_assert_int_eq(mrc_modify_qp(a.qp, &r, MRC_QP_STATE, 0), 0);
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, g, MRC_EV_DENIED, 0), MRC_ERR_STATE);
    mrc_test_node_free(&a);
}
END_TEST

static unsigned active_on(const mrc_test_node *a, unsigned port, unsigned evs)
{
    unsigned n = 0;
    for (unsigned i = 0; i < evs; i++) {
        n += mrc_test_ev_stats(a, mrc_test_ev(port, i)).active;
    }
    return n;
}

/* An active EV going out is replaced by a backup of its own plane, never of another. */
START_TEST(test_mrc_ev_replacement_same_plane)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.active = 4; /* 2 per port, 2 backups per port */
    requester(&a, &o);
    ck_assert_uint_eq(active_on(&a, 0, 4), 2);
    ck_assert_uint_eq(active_on(&a, 1, 4), 2);
    uint64_t now = 0;
    for (unsigned k = 0; k < 4; k++) {
        /* an active EV of port 0 goes bad */
        uint32_t victim = 0;
        for (unsigned i = 0; i < 4 && !victim; i++) {
            mrc_ev_stats es = mrc_test_ev_stats(&a, mrc_test_ev(0, i));
            victim = es.active ? es.ev : 0;
        }
        ck_assert_uint_ne(victim, 0);
        feedback(&a, o.sq_psn, victim, MRC_M_ALWAYS_SKIP, ++now);
        ck_assert(!mrc_test_ev_stats(&a, victim).active);
        unsigned left = 3 - k; /* GOOD EVs of port 0 */
        ck_assert_uint_eq(active_on(&a, 0, 4), left < 2 ? left : 2);
        ck_assert_uint_eq(active_on(&a, 1, 4), 2);
    }
    /* with plane 0 gone, plane 1 carries everything, still on its 2 active EVs */
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 40 * 1024, 0x10000, 0x101, now), 0);
    mrc_test_pkt p;
    unsigned n = 0;
    while (mrc_test_pull(&a, &p, now) > 0) {
        ck_assert_uint_eq(p.info.port, 1);
        ck_assert(mrc_test_ev_stats(&a, p.info.ev).active);
        n++;
    }
    ck_assert_uint_eq(n, 40);
    mrc_test_node_free(&a);
}
END_TEST

/* The floor: automatic verdicts never leave fewer than min_active EVs usable. */
START_TEST(test_mrc_ev_min_active_floor)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 1;
    o.min_active = 2;
    o.set.tlp_pct = 0;
    o.timeout = 1;
    requester(&a, &o);
    for (unsigned i = 0; i < 4; i++) {
        feedback(&a, o.sq_psn, mrc_test_ev(0, i), MRC_M_ALWAYS_SKIP, i);
    }
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.ev_count[MRC_EV_ASSUMED_BAD], 2);
    ck_assert_uint_eq(st.ev_count[MRC_EV_GOOD], 2);
    ck_assert_uint_eq(st.floor_hits, 2);
    ck_assert_uint_eq(st.always_skips, 4);
    ck_assert_uint_eq(mrc_test_ev_stats(&a, mrc_test_ev(0, 2)).state, MRC_EV_GOOD);
    /* a timeout is refused the same way */
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 100, 0x10000, 0x101, 10), 0);
    uint32_t ev = pull_ev(&a, 10);
    uint64_t now = 10;
    while (mrc_test_stats(&a).timeouts == 0) {
        now = mrc_get_expiry(a.ctx) > now ? mrc_get_expiry(a.ctx) : now;
        mrc_handle_expiry(a.ctx, now);
    }
    ck_assert_uint_eq(mrc_test_ev_stats(&a, ev).state, MRC_EV_GOOD);
    st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.floor_hits, 3);
    ck_assert_uint_eq(st.ev_count[MRC_EV_GOOD], 2);
    /* the controller is not held by the floor */
    ck_assert_int_eq(mrc_qp_ev_set_state(a.qp, ev, MRC_EV_DENIED, now), 0);
    ck_assert_uint_eq(mrc_test_stats(&a).ev_count[MRC_EV_GOOD], 1);
    mrc_test_node_free(&a);
}
END_TEST

/* Spraying: every active EV once per rotation, so planes and EVs get equal shares; backups
 * nothing; the order differs between rotations. */
START_TEST(test_mrc_ev_spraying_equal)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 4;
    o.evs_per_port = 8;
    o.active = 16;
    o.mtu = 256;
    o.mpr = 3;
    o.memlen = 320 * 256;
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 320 * 256, 0x10000, 0x101, 0), 0);
    uint32_t order[320];
    for (unsigned k = 0; k < 320; k++) {
        order[k] = pull_ev(&a, 0);
    }
    unsigned per_port[4] = {0};
    for (unsigned port = 0; port < 4; port++) {
        for (unsigned i = 0; i < 8; i++) {
            uint32_t ev = mrc_test_ev(port, i);
            mrc_ev_stats es = mrc_test_ev_stats(&a, ev);
            unsigned n = 0;
            for (unsigned k = 0; k < 320; k++) {
                n += order[k] == ev;
            }
            ck_assert_uint_eq(n, es.pkts_sent);
            ck_assert_uint_eq(n, es.active ? 20 : 0);
            per_port[port] += n;
        }
        ck_assert_uint_eq(active_on(&a, port, 8), 4);
        ck_assert_uint_eq(per_port[port], 80);
    }
    /* each run of 16 is a rotation: all 16 active EVs once */
    unsigned same = 0;
    for (unsigned r = 0; r < 20; r++) {
        for (unsigned i = 0; i < 16; i++) {
            for (unsigned j = 0; j < i; j++) {
                ck_assert_uint_ne(order[r * 16 + i], order[r * 16 + j]);
            }
        }
        same += r > 0 && memcmp(&order[r * 16], &order[(r - 1) * 16], 16 * sizeof(uint32_t)) == 0;
    }
    ck_assert_uint_lt(same, 3);
    mrc_test_node_free(&a);
}
END_TEST

/* Ports that pull one at a time, in any order (a NIC's ports as each frees up), each spray a
 * rotation of their own: every run of a port's active EVs has each of them once, so no path of
 * a plane gets twice its share because the other planes' ports were busy. */
START_TEST(test_mrc_ev_spraying_per_port)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.ports = 4;
    o.evs_per_port = 8;
    o.mtu = 256;
    o.mpr = 3;
    o.memlen = 384 * 256;
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 384 * 256, 0x10000, 0x101, 0), 0);
    /* ports 0 and 1 pull three times as often as 2 and 3, in a shuffled pattern */
    static const unsigned pattern[8] = {0, 1, 0, 2, 1, 0, 3, 1};
    uint32_t seq[4][96];
    unsigned n[4] = {0};
    for (unsigned k = 0; k < 384; k++) {
        unsigned port = pattern[k % 8];
        if (n[port] == 96) {
            port = port ^ 2; /* 0 and 1 are done: the others catch up */
        }
        mrc_test_pkt p;
        ck_assert_int_gt(mrc_test_pull_mask(&a, &p, 1u << port, 0), 0);
        ck_assert(mrc_test_is_data(&p));
        ck_assert_uint_eq(p.info.port, port);
        seq[port][n[port]++] = p.info.ev;
    }
    for (unsigned port = 0; port < 4; port++) {
        ck_assert_uint_eq(n[port], 96);
        for (unsigned r = 0; r < 12; r++) {
            for (unsigned i = 0; i < 8; i++) {
                ck_assert_uint_eq(mrc_test_ev_port(seq[port][r * 8 + i]), port);
                for (unsigned j = 0; j < i; j++) {
                    ck_assert_uint_ne(seq[port][r * 8 + i], seq[port][r * 8 + j]);
                }
            }
        }
    }
    mrc_test_node_free(&a);
}
END_TEST

/* A resend never takes the EV its packet last used. */
START_TEST(test_mrc_ev_retransmission_fresh_ev)
{
    mrc_test_opts o;
    mrc_test_node a;
    mrc_test_opts_default(&o);
    o.mtu = 256;
    requester(&a, &o);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 40 * 256, 0x10000, 0x101, 0), 0);
    uint32_t ev[40];
    for (unsigned k = 0; k < 40; k++) {
        ev[k] = pull_ev(&a, 0);
    }
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned k = 0; k < 40; k++) {
            mrc_test_pkt n, r;
            mrc_test_build_nack(&n, &a, MRC_NACK_TRIMMED_LASTHOP, PSN(o.sq_psn, (int32_t)k), ev[k],
                                0);
            ck_assert_int_eq(mrc_test_push(&a, &n, NULL, 10), 0);
            ck_assert_int_gt(mrc_test_pull(&a, &r, 10), 0);
            ck_assert(mrc_test_is_data(&r) && r.pkt.bth.rtx);
            ck_assert_uint_eq(r.pkt.bth.psn, PSN(o.sq_psn, (int32_t)k));
            ck_assert_msg(r.info.ev != ev[k], "PSN +%u resent on its last EV 0x%08x", k, ev[k]);
            ev[k] = r.info.ev;
        }
    }
    mrc_test_node_free(&a);
}
END_TEST

/* Control packets go back on the plane their trigger came on; a duplicate (a hint that an
 * answer was lost) moves that plane's reverse EV to another of the same plane. */
START_TEST(test_mrc_ev_reverse_same_plane)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    o.ports = 4;
    o.evs_per_port = 2;
    mrc_test_node_new(&b, &o, 1);
    mrc_test_node_up(&b, &o, MRC_TEST_PEER_QPN, 0);
    static uint8_t pay[64];
    for (unsigned port = 0; port < 4; port++) {
        mrc_test_pkt d, s;
        mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, (int32_t)port),
                            (uint16_t)(port + 1), 0, mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 64, pay,
                            64, mrc_test_ev(port, 1), port);
        ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
        unsigned n = 0;
        while (mrc_test_pull(&b, &s, 0) > 0) {
            ck_assert(s.pkt.bth.opcode == MRC_OP_SACK || s.pkt.bth.opcode == MRC_OP_ACK);
            ck_assert_uint_eq(s.info.port, port);
            ck_assert_uint_eq(mrc_test_ev_port(s.info.ev), port);
            ck_assert_uint_eq(s.pkt.ip.src[15], port);
            n++;
        }
        ck_assert_uint_eq(n, 2);
    }
    /* a NACK too */
    mrc_test_pkt d, s;
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, 4), 5, 0, mrc_test_va(&b, 0),
                        mrc_mr_rkey(b.mr), 64, pay, 64, mrc_test_ev(2, 0), 2);
    mrc_rx_info rx = mrc_test_rx(&d);
    rx.flags = MRC_RX_NOBUF;
    ck_assert_int_eq(mrc_test_push(&b, &d, &rx, 0), 0);
    ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
    ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_NACK);
    ck_assert_uint_eq(s.info.port, 2);
    /* duplicates on plane 1: each answer on another EV of plane 1 */
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, 1), 2, 0, mrc_test_va(&b, 0),
                        mrc_mr_rkey(b.mr), 64, pay, 64, mrc_test_ev(1, 1), 1);
    uint32_t last = 0;
    for (int rep = 0; rep < 3; rep++) {
        ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 1), 0);
        ck_assert_int_gt(mrc_test_pull(&b, &s, 1), 0);
        ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
        ck_assert_uint_eq(s.info.port, 1);
        ck_assert_uint_eq(mrc_test_ev_port(s.info.ev), 1);
        ck_assert_uint_ne(s.info.ev, last);
        last = s.info.ev;
        while (mrc_test_pull(&b, &s, 1) > 0) {
        }
    }
    /* the plane it came on is down here: the answer takes a live one */
    ck_assert_int_eq(mrc_port_set_state(b.ctx, 3, false, 2), 0);
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, 5), 6, 0, mrc_test_va(&b, 0),
                        mrc_mr_rkey(b.mr), 64, pay, 64, mrc_test_ev(3, 0), 3);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 2), 0);
    unsigned n = 0;
    while (mrc_test_pull(&b, &s, 2) > 0) {
        if (s.pkt.bth.opcode == MRC_OP_SACK || s.pkt.bth.opcode == MRC_OP_ACK) {
            ck_assert_uint_ne(s.info.port, 3);
            ck_assert_uint_eq(mrc_test_ev_port(s.info.ev), s.info.port);
            n++;
        }
    }
    ck_assert_uint_ge(n, 1);
    mrc_test_node_free(&b);
}
END_TEST

/* With symmetric EVs a SACK or NACK goes back by its data's EV and port, a duplicate's too;
 * a Transport ACK by the plane's reverse EV; with that plane down here, by a live one. */
START_TEST(test_mrc_ev_symmetric)
{
    mrc_test_opts o;
    mrc_test_node b;
    mrc_test_opts_default(&o);
    o.ports = 4;
    o.evs_per_port = 4;
    o.set.ev_symmetric = true;
    o.set.sack_every = 1;
    mrc_test_node_new(&b, &o, 1);
    mrc_test_node_up(&b, &o, MRC_TEST_PEER_QPN, 0);
    static uint8_t pay[64];
    mrc_test_pkt d, s;
    /* one packet, answered: the SACK by its EV, the Transport ACK by the plane's reverse EV;
     * again as a duplicate, the same */
    for (int rep = 0; rep < 2; rep++) {
        mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, 0), 1, 0,
                            mrc_test_va(&b, 0), mrc_mr_rkey(b.mr), 64, pay, 64,
                            mrc_test_ev(2, 3), 2);
        ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 0), 0);
        unsigned sacks = 0;
        while (mrc_test_pull(&b, &s, 0) > 0) {
            ck_assert_uint_eq(s.info.port, 2);
            if (s.pkt.bth.opcode == MRC_OP_SACK) {
                ck_assert_uint_eq(s.info.ev, mrc_test_ev(2, 3));
                sacks++;
            } else {
                ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_ACK);
                ck_assert_uint_eq(mrc_test_ev_port(s.info.ev), 2);
            }
        }
        ck_assert_uint_eq(sacks, 1);
    }
    /* a NACK (the packet found no buffer): by its EV */
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, 1), 2, 0, mrc_test_va(&b, 0),
                        mrc_mr_rkey(b.mr), 64, pay, 64, mrc_test_ev(1, 2), 1);
    mrc_rx_info rx = mrc_test_rx(&d);
    rx.flags = MRC_RX_NOBUF;
    ck_assert_int_eq(mrc_test_push(&b, &d, &rx, 0), 0);
    ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
    ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_NACK);
    ck_assert_uint_eq(s.info.ev, mrc_test_ev(1, 2));
    ck_assert_uint_eq(s.info.port, 1);
    /* the plane the data came by is down here: a live plane's reverse EV */
    ck_assert_int_eq(mrc_port_set_state(b.ctx, 0, false, 2), 0);
    mrc_test_build_data(&d, &b, MRC_OP_WRITE_ONLY, PSN(o.rq_psn, 1), 2, 0, mrc_test_va(&b, 0),
                        mrc_mr_rkey(b.mr), 64, pay, 64, mrc_test_ev(0, 1), 0);
    ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 2), 0);
    unsigned n = 0;
    while (mrc_test_pull(&b, &s, 2) > 0) {
        ck_assert_uint_ne(s.info.port, 0);
        ck_assert_uint_eq(mrc_test_ev_port(s.info.ev), s.info.port);
        n++;
    }
    ck_assert_uint_ge(n, 1);
    mrc_test_node_free(&b);
}
END_TEST

/* A QP that receives and sends no data re-validates its reverse EVs: after rev_refresh_ns an
 * EV probe per plane on one of its GOOD EVs, whose answer makes that EV the plane's reverse
 * EV; a QP that sends data, or receives nothing, does not probe. */
START_TEST(test_mrc_ev_reverse_refresh)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    o.set.rev_refresh_ns = 50000;
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 0, 4 * o.mtu, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    mrc_test_pump(&a, &b, 10, NULL, NULL);
    ck_assert_uint_eq(mrc_test_stats(&b).rev_refreshes, 0);
    /* b received and sent no data: its timer comes within the interval */
    uint64_t due = mrc_get_expiry(b.ctx);
    ck_assert_uint_le(due, 10 + o.set.rev_refresh_ns);
    mrc_handle_expiry(b.ctx, 10 + o.set.rev_refresh_ns);
    ck_assert_uint_eq(mrc_test_stats(&b).rev_refreshes, o.ports);
    mrc_test_pkt probes[8], ans;
    unsigned n = mrc_test_pull_all(&b, probes, 8, 10 + o.set.rev_refresh_ns);
    ck_assert_uint_eq(n, o.ports);
    uint32_t probed[8] = {0};
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_eq(probes[i].pkt.bth.opcode, MRC_OP_EP_REQ);
        ck_assert_uint_eq(probes[i].pkt.erth.op, MRC_EP_OP_EV_PROBE);
        ck_assert_uint_eq(mrc_test_ev_port(probes[i].info.ev), probes[i].info.port);
        probed[probes[i].info.port] = probes[i].info.ev;
        ck_assert_int_eq(mrc_test_push(&a, &probes[i], NULL, 20 + o.set.rev_refresh_ns), 0);
        ck_assert_int_gt(mrc_test_pull(&a, &ans, 20 + o.set.rev_refresh_ns), 0);
        ck_assert_uint_eq(ans.pkt.bth.opcode, MRC_OP_EP_RSP);
        ck_assert_int_eq(mrc_test_push(&b, &ans, NULL, 30 + o.set.rev_refresh_ns), 0);
    }
    /* b's answers on each plane now leave by the probed EV */
    ck_assert_int_eq(mrc_test_post_write(&a, 2, false, 0, 0, 2 * o.mtu, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 40 + o.set.rev_refresh_ns),
                     0);
    mrc_test_pkt d, c;
    while (mrc_test_pull(&a, &d, 40 + o.set.rev_refresh_ns) > 0) {
        ck_assert_int_eq(mrc_test_push(&b, &d, NULL, 40 + o.set.rev_refresh_ns), 0);
        while (mrc_test_pull(&b, &c, 40 + o.set.rev_refresh_ns) > 0) {
            ck_assert_uint_eq(c.info.ev, probed[c.info.port]);
        }
    }
    /* received again in the next interval: probed again; then nothing received: no more */
    mrc_handle_expiry(b.ctx, 100 + 3 * o.set.rev_refresh_ns);
    ck_assert_uint_eq(mrc_test_stats(&b).rev_refreshes, 2 * o.ports);
    ck_assert_uint_eq(mrc_test_pull_all(&b, probes, 8, 100 + 3 * o.set.rev_refresh_ns), o.ports);
    /* those go unanswered: they time out, and then nothing is due */
    mrc_handle_expiry(b.ctx, 100 + 3 * o.set.rev_refresh_ns + o.set.ep_timeout_ns);
    ck_assert_uint_eq(mrc_get_expiry(b.ctx), UINT64_MAX);
    ck_assert_uint_eq(mrc_test_stats(&b).rev_refreshes, 2 * o.ports);
    /* a sends data: it never probes */
    ck_assert_uint_eq(mrc_test_stats(&a).rev_refreshes, 0);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* EV probes time out by the deadline the context keeps: an answered probe leaves it early, and
 * the expiry handler then finds the one still pending instead of timing out either too soon;
 * the last one gone, nothing is due. */
START_TEST(test_mrc_ev_probe_timeouts)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    uint64_t t = o.set.ep_timeout_ns;
    uint8_t dst[16];
    mrc_test_addr(dst, 1, 0);
    uint16_t r1, r2;
    mrc_test_pkt req, ans, lost;
    ck_assert_int_eq(mrc_ep_probe(a.ctx, dst, mrc_test_ev(0, 0), 0, 20, &r1), 0);
    ck_assert_int_gt(mrc_test_pull(&a, &req, 20), 0);
    ck_assert_int_eq(mrc_ep_probe(a.ctx, dst, mrc_test_ev(0, 1), 0, 30, &r2), 0);
    ck_assert_int_gt(mrc_test_pull(&a, &lost, 30), 0); /* never delivered */
    ck_assert_uint_eq(mrc_get_expiry(a.ctx), 20 + t);
    /* the first is answered: the second still times out at its own deadline */
    ck_assert_int_eq(mrc_test_push(&b, &req, NULL, 40), 0);
    ck_assert_int_gt(mrc_test_pull(&b, &ans, 40), 0);
    ck_assert_int_eq(mrc_test_push(&a, &ans, NULL, 50), 0);
    ck_assert_uint_le(mrc_get_expiry(a.ctx), 30 + t);
    mrc_handle_expiry(a.ctx, 20 + t);
    ck_assert_uint_eq(mrc_test_ctx_stats(&a).ep_timeouts, 0);
    ck_assert_uint_eq(mrc_get_expiry(a.ctx), 30 + t);
    mrc_handle_expiry(a.ctx, 30 + t - 1);
    ck_assert_uint_eq(mrc_test_ctx_stats(&a).ep_timeouts, 0);
    mrc_handle_expiry(a.ctx, 30 + t);
    ck_assert_uint_eq(mrc_test_ctx_stats(&a).ep_timeouts, 1);
    ck_assert_uint_eq(mrc_get_expiry(a.ctx), UINT64_MAX);
    mrc_ep_result res[4];
    ck_assert_int_eq(mrc_poll_ep_results(a.ctx, res, 4), 2);
    ck_assert(res[0].ok && res[0].req_id == r1);
    ck_assert(!res[1].ok && res[1].req_id == r2);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

Suite *mrc_ev_suite(void)
{
    Suite *s = suite_create("ev");
    TCase *tc = tcase_create("ev");
    tcase_add_test(tc, test_mrc_ev_good_to_skip_by_ecn);
    tcase_add_test(tc, test_mrc_ev_probe_timeouts);
    tcase_add_test(tc, test_mrc_ev_good_to_skip_by_trim);
    tcase_add_test(tc, test_mrc_ev_skip_to_good_by_rotation);
    tcase_add_test(tc, test_mrc_ev_skip_to_good_by_time);
    tcase_add_test(tc, test_mrc_ev_skip_expires_while_idle);
    tcase_add_test(tc, test_mrc_ev_good_to_bad_by_timeout);
    tcase_add_test(tc, test_mrc_ev_lost_counted);
    tcase_add_test(tc, test_mrc_ev_always_skip_verdict);
    tcase_add_test(tc, test_mrc_ev_always_skip_runs);
    tcase_add_test(tc, test_mrc_ev_good_to_bad_by_always_skip);
    tcase_add_test(tc, test_mrc_ev_bad_to_good_by_probes);
    tcase_add_test(tc, test_mrc_ev_probe_backoff);
    tcase_add_test(tc, test_mrc_ev_denied_and_back);
    tcase_add_test(tc, test_mrc_ev_replacement_same_plane);
    tcase_add_test(tc, test_mrc_ev_min_active_floor);
    tcase_add_test(tc, test_mrc_ev_spraying_equal);
    tcase_add_test(tc, test_mrc_ev_spraying_per_port);
    tcase_add_test(tc, test_mrc_ev_retransmission_fresh_ev);
    tcase_add_test(tc, test_mrc_ev_reverse_same_plane);
    tcase_add_test(tc, test_mrc_ev_symmetric);
    tcase_add_test(tc, test_mrc_ev_reverse_refresh);
    suite_add_tcase(s, tc);
    return s;
}
