/* SPDX-License-Identifier: MIT */
/* Unit tests of congestion control (lib/mrc/README.md#congestion-control): NSCC's arithmetic fed
 * hand-made SACKs and NACKs, then the engine around it: the SACK's byte count, the window, the
 * ACK-request bit, the QPCC shared by the QPs to one peer, the responder's window penalty and
 * service time, the control ring's weight and the scheduling states. */
#include <stdlib.h>
#include <string.h>

#include "mrc_cc.h"
#include "mrc_test.h"

/* NSCC alone: 400 Gb/s and 6 us give a BDP of 300,000 B, so a = 2 and every default is an easy
 * number. */
#define MTU 4096
#define BASE 6000
#define TARGET 4500 /* 0.75 x BASE: trimming */
#define MAXW 450000.0
#define NEVER (1ull << 62) /* an adjust period or byte count that never comes */

static mrc_cc_nscc_cfg cfg400(void)
{
    return (mrc_cc_nscc_cfg){.link_gbps = 400, .base_rtt_ns = BASE};
}

static void nscc_new(mrc_nscc *cc, const mrc_cc_nscc_cfg *cfg, bool trimming)
{
    ck_assert_int_eq(mrc_nscc_init(cc, cfg, MTU, trimming, 0), 0);
}

/* A SACK for |newly| bytes whose packet queued |delay| ns beyond the base RTT. */
static void ack(mrc_nscc *cc, uint64_t newly, uint64_t delay, bool ecn, uint64_t now)
{
    mrc_nscc_ack a = {.newly = newly, .rtt = cc->base_rtt + delay, .ecn = ecn};
    mrc_nscc_on_ack(cc, &a, now);
}

static void ack_pen(mrc_nscc *cc, uint64_t newly, uint64_t rtt, uint8_t pen, bool rc, uint64_t now)
{
    mrc_nscc_ack a = {.newly = newly, .rtt = rtt, .pen = pen, .rc = rc};
    mrc_nscc_on_ack(cc, &a, now);
}

/* The defaults follow from the link rate and the base RTT
 * (lib/mrc/README.md#congestion-control). */
START_TEST(test_mrc_cc_nscc_defaults)
{
    for (int trim = 0; trim < 2; trim++) {
        mrc_cc_nscc_cfg cfg = cfg400();
        mrc_nscc cc;
        nscc_new(&cc, &cfg, trim);
        double target = trim ? TARGET : BASE, a = 300000.0 / 150000, b = target / 12000;
        ck_assert_double_eq_tol(cc.max_wnd, MAXW, 1e-6);
        ck_assert_double_eq_tol(cc.cwnd, MAXW, 1e-6);
        ck_assert_uint_eq(cc.target, (uint64_t)target);
        ck_assert_uint_eq(cc.base_rtt, BASE);
        ck_assert_double_eq_tol(cc.fi, 5.0 * MTU * a, 1e-6);
        ck_assert_double_eq_tol(cc.fi_scale, 0.25 * a, 1e-9);
        ck_assert_double_eq_tol(cc.eta, 0.15 * MTU * a, 1e-6);
        ck_assert_double_eq_tol(cc.alpha, 4.0 * MTU * a * b / target, 1e-9);
        ck_assert_double_eq_tol(cc.gamma, 0.8, 1e-12);
        ck_assert_double_eq_tol(cc.max_md_jump, 0.5, 1e-12);
        ck_assert_uint_eq(cc.qa_gate, 3);
        ck_assert_uint_eq(cc.qa_threshold, trim ? UINT64_MAX : 4 * (uint64_t)target);
        ck_assert_uint_eq(cc.adjust_bytes, 8 * MTU);
        ck_assert_uint_eq(cc.adjust_period, BASE);
        ck_assert_uint_eq(cc.fi_delay, 1000);
        ck_assert(!cc.disable_qa);
        ck_assert_int_eq(cc.inflight, 0);
    }
    /* another rate and RTT: 100 Gb/s x 12 us is 150,000 B, a = 1 */
    mrc_cc_nscc_cfg cfg = {.link_gbps = 100, .base_rtt_ns = 12000};
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    ck_assert_double_eq_tol(cc.max_wnd, 225000, 1e-6);
    ck_assert_uint_eq(cc.target, 9000);
    ck_assert_double_eq_tol(cc.fi, 5.0 * MTU, 1e-6);
    ck_assert_double_eq_tol(cc.alpha, 4.0 * MTU * 0.75 / 9000, 1e-9);
    /* what is given wins, and b follows the target given */
    cfg = cfg400();
    cfg.target_delay_ns = 3000;
    cfg.max_cwnd = 100000;
    cfg.fi = 1000;
    nscc_new(&cc, &cfg, false);
    ck_assert_uint_eq(cc.target, 3000);
    ck_assert_double_eq_tol(cc.max_wnd, 100000, 1e-6);
    ck_assert_double_eq_tol(cc.cwnd, 100000, 1e-6);
    ck_assert_double_eq_tol(cc.fi, 1000, 1e-9);
    ck_assert_double_eq_tol(cc.alpha, 4.0 * MTU * 2 * (3000.0 / 12000) / 3000, 1e-9);
    ck_assert_uint_eq(cc.qa_threshold, 12000);
}
END_TEST

/* A profile resolves to what the engine runs with: the defaults filled in, the given kept. */
START_TEST(test_mrc_cc_nscc_resolve)
{
    mrc_cc_nscc_cfg cfg = {.link_gbps = 100, .base_rtt_ns = 12000, .gamma = 0.5}, out;
    ck_assert_int_eq(mrc_cc_nscc_resolve(&cfg, MTU, true, &out), 0);
    ck_assert_double_eq_tol(out.link_gbps, 100, 1e-12);
    ck_assert_uint_eq(out.base_rtt_ns, 12000);
    ck_assert_uint_eq(out.target_delay_ns, 9000);
    ck_assert_uint_eq(out.max_cwnd, 225000);
    ck_assert_double_eq_tol(out.gamma, 0.5, 1e-12);
    ck_assert_double_eq_tol(out.max_md_jump, 0.5, 1e-12);
    ck_assert_double_eq_tol(out.fi, 5.0 * MTU, 1e-6);
    ck_assert_double_eq_tol(out.fi_scale, 0.25, 1e-12);
    ck_assert_double_eq_tol(out.eta, 0.15 * MTU, 1e-6);
    ck_assert_uint_eq(out.qa_gate, 3);
    ck_assert_uint_eq(out.qa_threshold_ns, UINT64_MAX);
    ck_assert_uint_eq(out.adjust_bytes, 8 * MTU);
    ck_assert_uint_eq(out.adjust_period_ns, 12000);
    ck_assert_uint_eq(out.fi_delay_ns, 1000);
    ck_assert_double_eq_tol(out.delay_gain, 0.0125, 1e-12);
    /* resolving what was resolved changes nothing */
    mrc_cc_nscc_cfg again;
    ck_assert_int_eq(mrc_cc_nscc_resolve(&out, MTU, true, &again), 0);
    ck_assert_uint_eq(again.target_delay_ns, out.target_delay_ns);
    ck_assert_uint_eq(again.max_cwnd, out.max_cwnd);
    ck_assert_double_eq_tol(again.fi, out.fi, 1e-9);
    ck_assert_uint_eq(again.qa_threshold_ns, out.qa_threshold_ns);
    cfg.link_gbps = 0;
    ck_assert_int_eq(mrc_cc_nscc_resolve(&cfg, MTU, true, &out), MRC_ERR_INVAL);
    cfg.link_gbps = 100;
    ck_assert_int_eq(mrc_cc_nscc_resolve(&cfg, 0, true, &out), MRC_ERR_INVAL);
}
END_TEST

/* Without a link rate or a base RTT there is nothing to derive from: refused, by NSCC and by
 * the profile; "none" needs neither, and other algorithms are unknown. */
START_TEST(test_mrc_cc_nscc_config_refused)
{
    mrc_nscc cc;
    mrc_cc_nscc_cfg no_link = {.base_rtt_ns = BASE}, no_rtt = {.link_gbps = 400};
    ck_assert_int_eq(mrc_nscc_init(&cc, &no_link, MTU, true, 0), MRC_ERR_INVAL);
    ck_assert_int_eq(mrc_nscc_init(&cc, &no_rtt, MTU, true, 0), MRC_ERR_INVAL);
    mrc_test_opts o;
    mrc_test_node n;
    mrc_test_opts_default(&o);
    mrc_test_node_new(&n, &o, 0);
    mrc_cc_profile_attr pa = {.algorithm = "uet-1.0-nscc", .nscc = no_link};
    ck_assert_int_eq(mrc_cc_profile_create(n.ctx, 5, &pa), MRC_ERR_INVAL);
    pa.nscc = no_rtt;
    ck_assert_int_eq(mrc_cc_profile_create(n.ctx, 5, &pa), MRC_ERR_INVAL);
    pa.nscc = cfg400();
    ck_assert_int_eq(mrc_cc_profile_create(n.ctx, 5, &pa), 0);
    ck_assert_int_eq(mrc_cc_profile_create(n.ctx, 5, &pa), MRC_ERR_INVAL); /* the id is taken */
    mrc_cc_profile_attr none = {.algorithm = "none"};
    ck_assert_int_eq(mrc_cc_profile_create(n.ctx, 6, &none), 0);
    mrc_cc_profile_attr other = {.algorithm = "cubic", .nscc = cfg400()};
    ck_assert_int_eq(mrc_cc_profile_create(n.ctx, 7, &other), MRC_ERR_INVAL);
    mrc_test_node_free(&n);
}
END_TEST

/* |n| SACKs of |newly| bytes with |delay|, |step| ns apart from |now|; returns the time after. */
static uint64_t acks(mrc_nscc *cc, unsigned n, uint64_t newly, uint64_t delay, bool ecn,
                     uint64_t now, uint64_t step)
{
    for (unsigned i = 0; i < n; i++, now += step) {
        ack(cc, newly, delay, ecn, now);
    }
    return now;
}

/* The growth of a window of |c| bytes over one window of SACKs with |delay| and no ECN, the
 * adjust period never elapsing: adjustments come every 9 SACKs of an MTU (> 8 x MTU). */
static double growth(double c, uint64_t delay)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_period_ns = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = c;
    acks(&cc, (unsigned)(c / MTU), MTU, delay, false, 1000, 1);
    ck_assert_uint_eq(cc.n_md + cc.n_qa + cc.n_fast, 0);
    return cc.cwnd - c;
}

/* No ECN, delay at or above the target: fair increase, about fi per window of bytes, applied
 * at each adjustment as inc_bytes / cwnd. */
START_TEST(test_mrc_cc_nscc_fair_increase)
{
    double c = 90.0 * MTU, fi = 5.0 * MTU * 2;
    double g = growth(c, 5000);
    ck_assert_msg(g > 0.85 * fi && g <= fi, "growth %.1f, fi %.1f", g, fi);
    double w = c;
    for (int k = 0; k < 10; k++) {
        w += fi * 9 * MTU / w;
    }
    ck_assert_double_eq_tol(c + g, w, 1e-6);
    /* at the target exactly it is still fair increase, independent of the delay */
    ck_assert_double_eq_tol(growth(c, TARGET), g, 1e-6);
    ck_assert_double_eq_tol(growth(c, 50000), g, 1e-6);
}
END_TEST

/* No ECN, delay below the target: proportional increase, alpha x (target - delay) per window. */
START_TEST(test_mrc_cc_nscc_proportional_increase)
{
    double c = 90.0 * MTU, alpha = 4.0 * MTU * 2 * 0.375 / TARGET;
    double g2 = growth(c, 2000), g4 = growth(c, 4000), g1 = growth(c, 1000);
    ck_assert_msg(g2 > 0 && g4 > 0, "growth %.1f %.1f", g2, g4);
    ck_assert_double_eq_tol(g2 / g4, 2500.0 / 500, 0.05);
    ck_assert_double_eq_tol(g1 / g4, 3500.0 / 500, 0.07);
    ck_assert_double_eq_tol(g2, alpha * 2500, alpha * 2500 * 0.01);
    ck_assert_double_lt(g2, growth(c, 5000)); /* less than the fair increase here */
}
END_TEST

/* ECN with the delay at or above the target: cwnd x max(1 - gamma (avg - target) / avg,
 * max_md_jump); ECN below the target: nothing, whatever the average says. */
START_TEST(test_mrc_cc_nscc_decrease)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.delay_gain = 1; /* the average is the last sample */
    cfg.adjust_period_ns = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 400000;
    ack(&cc, MTU, 6000, true, 100000);
    ck_assert_double_eq_tol(cc.cwnd, 400000 * (1 - 0.8 * 1500 / 6000), 1e-6);
    ck_assert_uint_eq(cc.n_md, 1);
    /* a large delay: the step is at most max_md_jump */
    ack(&cc, MTU, 60000, true, 100000 + BASE + 1);
    ck_assert_double_eq_tol(cc.cwnd, 320000 * 0.5, 1e-6);
    ck_assert_uint_eq(cc.n_md, 2);

    /* ECN below the target, the average above it: no change at all */
    cfg.delay_gain = 0.5;
    cfg.adjust_bytes = 1; /* any increase would show at once */
    nscc_new(&cc, &cfg, true);
    acks(&cc, 3, MTU, 30000, false, 1000, 10);
    cc.cwnd = 400000;
    ck_assert_double_gt(cc.avg_delay, 2 * TARGET);
    ack(&cc, MTU, 1000, true, 100000);
    ck_assert_double_eq_tol(cc.cwnd, 400000, 1e-9);
    ack(&cc, MTU, TARGET - 1, true, 100000 + 2 * BASE);
    ck_assert_double_eq_tol(cc.cwnd, 400000, 1e-9);
    ck_assert_uint_eq(cc.n_md, 0);

    /* the decrease follows the average delay, not the one sample (default gain) */
    cfg = cfg400();
    cfg.adjust_period_ns = NEVER;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 400000;
    ack(&cc, MTU, 6000, true, 100000);
    ck_assert_double_eq_tol(cc.cwnd, 400000, 1e-9);
    ck_assert_uint_eq(cc.n_md, 0);
}
END_TEST

/* One multiplicative decrease per base RTT: a second ECN echo within it cuts nothing. */
START_TEST(test_mrc_cc_nscc_decrease_once_per_rtt)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.delay_gain = 1;
    cfg.adjust_period_ns = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 400000;
    uint64_t t0 = 100000;
    ack(&cc, MTU, 6000, true, t0);
    ck_assert_double_eq_tol(cc.cwnd, 320000, 1e-6);
    ack(&cc, MTU, 6000, true, t0 + 1);
    ack(&cc, MTU, 6000, true, t0 + BASE - 1);
    ck_assert_double_eq_tol(cc.cwnd, 320000, 1e-6);
    ck_assert_uint_eq(cc.n_md, 1);
    ack(&cc, MTU, 6000, true, t0 + BASE + 1);
    ck_assert_double_eq_tol(cc.cwnd, 256000, 1e-6);
    ck_assert_uint_eq(cc.n_md, 2);
}
END_TEST

/* Starts a quick-adapt window at |now| (the first SACK of a window only opens it), then SACKs
 * |achieved| bytes in it; returns when the window ends. */
static uint64_t qa_window(mrc_nscc *cc, uint64_t achieved, uint64_t now)
{
    ack(cc, MTU, 0, false, now);
    for (uint64_t b = 0; b < achieved; b += MTU) {
        ack(cc, MTU, 0, false, now + 1 + b / MTU);
    }
    return now + cc->base_rtt + cc->target;
}

/* A trim after a window that got less than max_wnd >> qa_gate through drops cwnd to what got
 * through, at most once per window; ECN echoes of what was in flight then are ignored until
 * that many bytes are acknowledged. */
START_TEST(test_mrc_cc_nscc_quick_adapt)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.delay_gain = 1;
    cfg.adjust_period_ns = NEVER;
    cfg.adjust_bytes = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.inflight = 200000;
    uint64_t end = qa_window(&cc, 3 * MTU, 1000);
    ck_assert_double_eq_tol(cc.cwnd, MAXW, 1e-9);
    /* within the window a trim only takes its length */
    mrc_nscc_on_trim(&cc, MTU, false, end - 1);
    ck_assert_double_eq_tol(cc.cwnd, MAXW - MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 0);
    mrc_nscc_on_trim(&cc, MTU, false, end);
    ck_assert_double_eq_tol(cc.cwnd, 3 * MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 1);
    int64_t in_flight = cc.inflight;
    ck_assert_int_gt(in_flight, 0);
    /* once per window: the next trim takes its length */
    mrc_nscc_on_trim(&cc, MTU, false, end + 1);
    ck_assert_double_eq_tol(cc.cwnd, 2 * MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 1);
    /* the echoes of what was in flight: no decrease until those bytes are acknowledged (all
     * within this window: at its end the trim above would quick-adapt again) */
    uint64_t now = end + 2, gone = MTU; /* the trimmed packet was one of them */
    while (gone + MTU < (uint64_t)in_flight) {
        ack(&cc, MTU, 6000, true, now);
        gone += MTU;
        now += 10;
        MRC_REQUIRE(cc.n_md == 0, "an echo cut the window after %llu bytes",
                    (unsigned long long)gone);
    }
    ck_assert_double_eq_tol(cc.cwnd, 2 * MTU, 1e-9);
    ack(&cc, MTU, 6000, true, now);
    ck_assert_uint_eq(cc.n_md, 1);
    ck_assert_double_eq_tol(cc.cwnd, 2 * MTU * 0.8, 1e-9);

    /* nothing got through: one MTU is left */
    nscc_new(&cc, &cfg, true);
    end = qa_window(&cc, 0, 1000);
    mrc_nscc_on_trim(&cc, MTU, false, end);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 1);
}
END_TEST

/* Without quick adapt a trim takes its length off cwnd, never below one MTU: when it is
 * disabled, or when the window got max_wnd >> qa_gate through. */
START_TEST(test_mrc_cc_nscc_trim_without_quick_adapt)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_period_ns = NEVER;
    cfg.adjust_bytes = NEVER;
    mrc_nscc cc;
    /* disabled */
    cfg.disable_qa = true;
    nscc_new(&cc, &cfg, true);
    uint64_t end = qa_window(&cc, 3 * MTU, 1000);
    mrc_nscc_on_trim(&cc, MTU, false, end + 1);
    ck_assert_double_eq_tol(cc.cwnd, MAXW - MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 0);
    cc.cwnd = MTU + 100;
    mrc_nscc_on_trim(&cc, MTU, false, end + 2);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    mrc_nscc_on_trim(&cc, MTU, false, end + 3);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    /* enough got through: 56,250 B is max_wnd >> 3 */
    cfg.disable_qa = false;
    nscc_new(&cc, &cfg, true);
    end = qa_window(&cc, 14 * MTU, 1000);
    mrc_nscc_on_trim(&cc, MTU, false, end + 1);
    ck_assert_double_eq_tol(cc.cwnd, MAXW - MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 0);
    /* just below it the same trim quick-adapts */
    nscc_new(&cc, &cfg, true);
    end = qa_window(&cc, 13 * MTU, 1000);
    mrc_nscc_on_trim(&cc, MTU, false, end + 1);
    ck_assert_double_eq_tol(cc.cwnd, 13 * MTU, 1e-9);
    ck_assert_uint_eq(cc.n_qa, 1);
}
END_TEST

/* A last-hop trim stands in for the mark the receiver's downlink does not set: it decreases
 * (once per base RTT, as ECN does) and drops the increase gathered so far; until a delay below
 * the target, unmarked SACKs above it hold the window instead of increasing fairly. A
 * mid-fabric trim does none of this. */
START_TEST(test_mrc_cc_nscc_lasthop_trim)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.delay_gain = 1; /* the average is the last sample */
    cfg.disable_qa = true;
    cfg.adjust_period_ns = NEVER;
    cfg.adjust_bytes = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    uint64_t t = 100000;
    cc.cwnd = 400000;
    ack(&cc, MTU, 6000, false, t); /* fair increase gathered, not yet applied */
    ck_assert_double_gt(cc.inc_bytes, 0);
    /* a mid-fabric trim: its length off, nothing else */
    mrc_nscc_on_trim(&cc, MTU, false, t + 1);
    ck_assert_double_eq_tol(cc.cwnd, 400000 - MTU, 1e-6);
    ck_assert_double_gt(cc.inc_bytes, 0);
    ck_assert_uint_eq(cc.n_md, 0);
    ck_assert(!cc.lasthop);
    /* a last-hop trim: its length off, then a decrease on the average delay (the trim's own
     * sample, the configured base RTT) */
    mrc_nscc_on_trim(&cc, MTU, true, t + 2);
    double w = (400000 - 2 * MTU) * (1 - 0.8 * (BASE - TARGET) / (double)BASE);
    ck_assert_double_eq_tol(cc.cwnd, w, 1e-6);
    ck_assert_double_eq_tol(cc.inc_bytes, 0, 1e-9);
    ck_assert_uint_eq(cc.n_md, 1);
    ck_assert(cc.lasthop);
    /* a second one within the base RTT: its length off, no second decrease */
    mrc_nscc_on_trim(&cc, MTU, true, t + 3);
    ck_assert_double_eq_tol(cc.cwnd, w - MTU, 1e-6);
    ck_assert_uint_eq(cc.n_md, 1);
    /* long delays unmarked: the window holds */
    acks(&cc, 3, MTU, 6000, false, t + 4, 1);
    ck_assert_double_eq_tol(cc.cwnd, w - MTU, 1e-6);
    ck_assert_double_eq_tol(cc.inc_bytes, 0, 1e-9);
    ck_assert_uint_eq(cc.n_md, 1);
    /* a delay below the target: the queue drained, the rule ends */
    ack(&cc, MTU, TARGET - 1, false, t + 10);
    ck_assert(!cc.lasthop);
    double inc = cc.inc_bytes;
    ack(&cc, MTU, 6000, false, t + 11);
    ck_assert_double_eq_tol(cc.inc_bytes - inc, cc.fi * MTU, 1e-6); /* fair increase again */
    ck_assert_uint_eq(cc.n_md, 1);
}
END_TEST

/* Without trimming, a delay beyond qa_threshold (4 x target) quick-adapts too. */
START_TEST(test_mrc_cc_nscc_quick_adapt_delay)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_period_ns = NEVER;
    cfg.adjust_bytes = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, false);
    uint64_t end = qa_window(&cc, 2 * MTU, 1000);
    ack(&cc, MTU, 4 * BASE, false, end);
    ck_assert_uint_eq(cc.n_qa, 0);
    ck_assert_double_eq_tol(cc.cwnd, MAXW, 1e-9);
    nscc_new(&cc, &cfg, false);
    end = qa_window(&cc, 2 * MTU, 1000);
    ack(&cc, MTU, 4 * BASE + 1, false, end);
    ck_assert_uint_eq(cc.n_qa, 1);
    ck_assert_double_eq_tol(cc.cwnd, 3 * MTU, 1e-9); /* its own bytes got through too */
}
END_TEST

/* Returns after the SACK that turned fast increase on, checking it came once more than a
 * window of bytes was acknowledged with ~no delay (|acked| of them already), and not before. */
static uint64_t fast_on(mrc_nscc *cc, uint64_t acked, uint64_t now)
{
    double before = cc->cwnd;
    uint64_t fast = cc->n_fast;
    while (cc->n_fast == fast) {
        MRC_REQUIRE(acked <= before, "no fast increase after %llu bytes",
                    (unsigned long long)acked);
        MRC_REQUIRE(cc->cwnd == before, "the window moved before fast increase");
        ack(cc, MTU, 999, false, now++);
        acked += MTU;
    }
    ck_assert_msg(acked > before, "fast increase after %llu bytes, the window %.0f",
                  (unsigned long long)acked, before);
    ck_assert_double_eq_tol(cc->cwnd, before + MTU * 0.5, 1e-9);
    return now;
}

/* Fast increase: more than a window of bytes with a delay under fi_delay, then cwnd grows by
 * newly x fi_scale per SACK; any delayed SACK leaves the mode. Adjustments never come here, so
 * only fast increase moves the window. */
START_TEST(test_mrc_cc_nscc_fast_increase)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_period_ns = NEVER;
    cfg.adjust_bytes = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 100000;
    uint64_t now = fast_on(&cc, 0, 1000);
    ck_assert_uint_eq(cc.n_fast, 1);
    for (int i = 0; i < 5; i++) {
        double w = cc.cwnd;
        ack(&cc, MTU, 0, false, now++);
        ck_assert_double_eq_tol(cc.cwnd, w + MTU * 0.5, 1e-9);
    }
    /* a delay of fi_delay or more, below the target, and of the target or more: each ends it */
    uint64_t delays[] = {1000, TARGET - 1, TARGET, 5 * BASE};
    for (unsigned d = 0; d < sizeof(delays) / sizeof(delays[0]); d++) {
        double w = cc.cwnd;
        ack(&cc, MTU, delays[d], false, now++);
        ck_assert_double_eq_tol(cc.cwnd, w, 1e-9);
        ack(&cc, MTU, 0, false, now++);
        ck_assert_msg(cc.cwnd == w, "still fast after a delay of %llu",
                      (unsigned long long)delays[d]);
        now = fast_on(&cc, MTU, now);
        ck_assert_uint_eq(cc.n_fast, d + 2);
    }
    /* never past the maximum */
    cc.cwnd = MAXW - 100;
    ack(&cc, MTU, 0, false, now++);
    ck_assert_double_eq_tol(cc.cwnd, MAXW, 1e-9);
    ack(&cc, MTU, 0, false, now++);
    ck_assert_double_eq_tol(cc.cwnd, MAXW, 1e-9);
}
END_TEST

/* cwnd stays between one MTU and the maximum window whatever the SACKs say. */
START_TEST(test_mrc_cc_nscc_clamp)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_bytes = 1; /* an adjustment per SACK */
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = MAXW - 100;
    uint64_t now = 1000;
    for (int i = 0; i < 200; i++, now += 1000) {
        ack(&cc, 10 * MTU, i % 2 ? 5000 : 0, false, now);
        MRC_REQUIRE(cc.cwnd <= MAXW, "cwnd %.1f beyond the maximum", cc.cwnd);
    }
    ck_assert_double_eq_tol(cc.cwnd, MAXW, 1e-9);
    /* decreases, trims, losses and penalties stop at one MTU */
    cfg.delay_gain = 1;
    cfg.adjust_period_ns = NEVER; /* no eta */
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 1.5 * MTU;
    for (int i = 0; i < 4; i++, now += 2 * BASE) {
        ack(&cc, MTU, 20 * BASE, true, now);
        ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    }
    ck_assert_uint_ge(cc.n_md, 1);
    mrc_nscc_on_loss(&cc, MTU);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    mrc_nscc_on_trim(&cc, MTU, false, now);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    ack_pen(&cc, 100 * MTU, 0, 127, false, now);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
}
END_TEST

/* A shorter round trip is the new base RTT, and the derived maximum window follows it: 1.5 x
 * link x base RTT; a longer one changes neither, and a configured maximum stays. */
START_TEST(test_mrc_cc_nscc_base_rtt)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_period_ns = NEVER;
    cfg.adjust_bytes = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    ack_pen(&cc, MTU, 4000, 0, false, 1000);
    ck_assert_uint_eq(cc.base_rtt, 4000);
    ck_assert_double_eq_tol(cc.max_wnd, 1.5 * 50 * 4000, 1e-6);
    ck_assert_double_eq_tol(cc.cwnd, 300000, 1e-6);
    ack_pen(&cc, MTU, 5000, 0, false, 2000);
    ck_assert_uint_eq(cc.base_rtt, 4000);
    ck_assert_double_eq_tol(cc.max_wnd, 300000, 1e-6);
    /* a window saved before the maximum fell comes back no bigger than the maximum */
    nscc_new(&cc, &cfg, true);
    cc.inflight = 100000;
    ack_pen(&cc, MTU, 0, 64, false, 1000);
    ack_pen(&cc, MTU, 3000, 0, false, 2000);
    ck_assert_double_eq_tol(cc.max_wnd, 225000, 1e-6);
    ack_pen(&cc, MTU, 0, 0, true, 3000);
    ck_assert_double_eq_tol(cc.cwnd, 225000, 1e-6);
    /* configured */
    cfg.max_cwnd = 100000;
    nscc_new(&cc, &cfg, true);
    ack_pen(&cc, MTU, 1000, 0, false, 1000);
    ck_assert_uint_eq(cc.base_rtt, 1000);
    ck_assert_double_eq_tol(cc.max_wnd, 100000, 1e-6);
    ck_assert_double_eq_tol(cc.cwnd, 100000, 1e-6);
}
END_TEST

/* The receiver's penalty: the window saved once, cut to min(cwnd, inflight) less
 * (pen x newly) >> 7, never below an MTU, no increase meanwhile; the restore bit brings the
 * saved window back, and does nothing without one. */
START_TEST(test_mrc_cc_nscc_penalty)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    cfg.adjust_bytes = 1; /* any increase would show at once */
    cfg.adjust_period_ns = NEVER;
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 200000;
    cc.inflight = 100000;
    ack_pen(&cc, 2 * MTU, BASE, 64, false, 1000);
    ck_assert_int_eq(cc.inflight, 100000 - 2 * MTU);
    ck_assert_double_eq_tol(cc.cwnd, 100000 - 2 * MTU - (64 * 2 * MTU >> 7), 1e-9);
    ck_assert_uint_eq(cc.n_pen, 1);
    /* cwnd below inflight now: the cut is from cwnd */
    double w = cc.cwnd;
    ack_pen(&cc, 1024, BASE, 10, false, 2000);
    ck_assert_double_eq_tol(cc.cwnd, w - (10 * 1024 >> 7), 1e-9);
    /* inflight below cwnd: the cut is from inflight */
    cc.inflight = 50000;
    ack_pen(&cc, MTU, BASE, 1, false, 3000);
    ck_assert_double_eq_tol(cc.cwnd, 50000 - MTU - (MTU >> 7), 1e-9);
    ck_assert_uint_eq(cc.n_pen, 3);
    /* no penalty, no restore: increases again */
    w = cc.cwnd;
    ack_pen(&cc, MTU, BASE, 0, false, 4000);
    ck_assert_double_gt(cc.cwnd, w);
    /* the restore bit: the window saved by the first penalty */
    ack_pen(&cc, 0, 0, 0, true, 5000);
    ck_assert_double_eq_tol(cc.cwnd, 200000, 1e-9);
    /* a restore bit with nothing saved */
    mrc_nscc_on_loss(&cc, 50000);
    ack_pen(&cc, 0, 0, 0, true, 6000);
    ck_assert_double_eq_tol(cc.cwnd, 150000, 1e-9);
    /* with inflight negative the window is one MTU */
    cc.inflight = -5000;
    ack_pen(&cc, MTU, 0, 1, false, 7000);
    ck_assert_double_eq_tol(cc.cwnd, MTU, 1e-9);
    ack_pen(&cc, 0, 0, 0, true, 8000);
    ck_assert_double_eq_tol(cc.cwnd, 150000, 1e-9);
}
END_TEST

/* inflight is signed: SACKs may count more than was sent (256-byte rounding) and drive it
 * below zero; a packet may go while inflight + len <= cwnd. */
START_TEST(test_mrc_cc_nscc_inflight)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    ck_assert(mrc_nscc_can_send(&cc, 450000));
    ck_assert(!mrc_nscc_can_send(&cc, 450001));
    cc.inflight = 446000;
    ck_assert(mrc_nscc_can_send(&cc, 4000));
    ck_assert(!mrc_nscc_can_send(&cc, 4001));
    mrc_nscc_ack a = {.newly = 500000};
    mrc_nscc_on_ack(&cc, &a, 1000);
    ck_assert_int_eq(cc.inflight, -54000);
    ck_assert(mrc_nscc_can_send(&cc, 504000));
    ck_assert(!mrc_nscc_can_send(&cc, 504001));
}
END_TEST

/* A loss without a trim takes its length off cwnd. */
START_TEST(test_mrc_cc_nscc_loss)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    mrc_nscc_on_loss(&cc, MTU);
    ck_assert_double_eq_tol(cc.cwnd, MAXW - MTU, 1e-9);
    mrc_nscc_on_loss(&cc, 1000);
    ck_assert_double_eq_tol(cc.cwnd, MAXW - MTU - 1000, 1e-9);
    ck_assert_uint_eq(cc.n_qa + cc.n_md, 0);
}
END_TEST

/* eta is added once per adjust period, with nothing else to add. */
START_TEST(test_mrc_cc_nscc_eta)
{
    mrc_cc_nscc_cfg cfg = cfg400();
    mrc_nscc cc;
    nscc_new(&cc, &cfg, true);
    cc.cwnd = 100000;
    double eta = 0.15 * MTU * 2;
    ack(&cc, 1024, 1000, true, 1000); /* ECN below the target: nothing to add */
    ck_assert_double_eq_tol(cc.cwnd, 100000, 1e-9);
    ack(&cc, 1024, 1000, true, BASE);
    ck_assert_double_eq_tol(cc.cwnd, 100000 + eta, 1e-9);
    ack(&cc, 1024, 1000, true, 2 * BASE - 1);
    ck_assert_double_eq_tol(cc.cwnd, 100000 + eta, 1e-9);
    ack(&cc, 1024, 1000, true, 2 * BASE);
    ck_assert_double_eq_tol(cc.cwnd, 100000 + 2 * eta, 1e-9);
}
END_TEST

/*
 * The engine. Both nodes get NSCC profile CC_ID at 100 Gb/s and 6 us; the zero-delay link makes
 * every round trip one timestamp tick or less, so each test gives the maximum window.
 */
#define CC_ID 2
#define EMTU 1024 /* the test nodes' MTU */

static void cc_profile(mrc_test_node *n, uint64_t max_cwnd)
{
    mrc_cc_profile_attr pa = {
        .algorithm = "uet-1.0-nscc",
        .nscc = {.link_gbps = 100, .base_rtt_ns = BASE, .max_cwnd = max_cwnd}};
    ck_assert_int_eq(mrc_cc_profile_create(n->ctx, CC_ID, &pa), 0);
}

/* |qp| of the node at |side| to RTS towards QP |dest_qpn| of the node at |peer|. */
static void qp_up(mrc_qp *qp, const mrc_test_opts *o, unsigned side, unsigned peer,
                  uint32_t dest_qpn, uint64_t cc_id, uint64_t now)
{
    mrc_qp_attr a;
    mrc_test_attr(&a, o, side, dest_qpn);
    a.profile.cc_profile_id = cc_id;
    for (unsigned port = 0; port < o->ports; port++) {
        mrc_test_addr(a.ah.dgid[port], peer, port);
    }
    a.qp_state = MRC_QPS_INIT;
    ck_assert_int_eq(mrc_modify_qp(qp, &a, MRC_TEST_INIT_MASK, now), 0);
    a.qp_state = MRC_QPS_RTR;
    ck_assert_int_eq(mrc_modify_qp(qp, &a, MRC_TEST_RTR_MASK, now), 0);
    a.qp_state = MRC_QPS_RTS;
    ck_assert_int_eq(mrc_modify_qp(qp, &a, MRC_TEST_RTS_MASK, now), 0);
}

/* mrc_test_pair_new with NSCC on both QPs. */
static void cc_pair(mrc_test_node *a, const mrc_test_opts *oa, mrc_test_node *b,
                    const mrc_test_opts *ob, uint64_t max_cwnd)
{
    mrc_test_opts ca = *oa, cb = *ob;
    ca.rq_psn = ob->sq_psn;
    cb.rq_psn = oa->sq_psn;
    mrc_test_node_new(a, &ca, 0);
    mrc_test_node_new(b, &cb, 1);
    cc_profile(a, max_cwnd);
    cc_profile(b, max_cwnd);
    qp_up(a->qp, &ca, 0, 1, mrc_qp_num(b->qp), CC_ID, 0);
    qp_up(b->qp, &cb, 1, 0, mrc_qp_num(a->qp), CC_ID, 0);
}

static void cc_opts(mrc_test_opts *o)
{
    mrc_test_opts_default(o);
    o->timeout = 12; /* 4.2 ms: no timer fires in these tests */
}

static mrc_qp_stats qp_stats(const mrc_qp *qp)
{
    mrc_qp_stats st;
    ck_assert_int_eq(mrc_qp_get_stats(qp, &st), 0);
    return st;
}

/* Pushes |n| packets into |to|. */
static void deliver(mrc_test_node *to, const mrc_test_pkt *p, unsigned n, uint64_t now)
{
    for (unsigned i = 0; i < n; i++) {
        ck_assert_int_eq(mrc_test_push(to, &p[i], NULL, now), 0);
    }
}

/* Pulls a burst from |n| with mrc_write_pkts into |out|; returns the count. */
static unsigned pull_burst(mrc_test_node *n, mrc_test_pkt *out, unsigned max, uint64_t now)
{
    mrc_tx_pkt tx[32];
    ck_assert_uint_le(max, 32);
    for (unsigned k = 0; k < max; k++) {
        tx[k] = (mrc_tx_pkt){.data = out[k].buf, .room = sizeof(out[k].buf)};
    }
    int m = mrc_write_pkts(n->ctx, tx, max, UINT32_MAX, now);
    ck_assert_int_ge(m, 0);
    for (int k = 0; k < m; k++) {
        out[k].len = tx[k].len;
        out[k].info = tx[k].info;
        mrc_test_pkt_decode(&out[k], n->icrc);
    }
    return (unsigned)m;
}

static int post(mrc_test_node *a, const mrc_test_node *b, uint64_t id, bool imm, size_t off,
                uint32_t len)
{
    return mrc_test_post_write(a, id, imm, (uint32_t)id, off, len, mrc_test_va(b, off),
                               mrc_mr_rkey(b->mr), 0);
}

/* The SACKs' received bytes drive inflight: a SACK for 8 of 12 packets leaves 4 in flight, an
 * older SACK arriving after it changes nothing, the last brings it to 0. */
START_TEST(test_mrc_cc_sack_bytes)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 12 * EMTU), 0);
    mrc_test_pkt *p = calloc(16, sizeof(*p)), s[3];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 16, 0), 12);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 12 * EMTU);
    deliver(&b, p, 4, 0);
    ck_assert_int_gt(mrc_test_pull(&b, &s[0], 0), 0);
    deliver(&b, p + 4, 4, 0);
    ck_assert_int_gt(mrc_test_pull(&b, &s[1], 0), 0);
    ck_assert_uint_eq(s[0].pkt.bth.opcode, MRC_OP_SACK);
    ck_assert_uint_eq(s[1].pkt.bth.opcode, MRC_OP_SACK);
    ck_assert_uint_eq(s[0].pkt.cc.rcvd_bytes, 4 * EMTU / 256);
    ck_assert_uint_eq(s[1].pkt.cc.rcvd_bytes, 8 * EMTU / 256);
    deliver(&a, &s[1], 1, 0);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 4 * EMTU);
    deliver(&a, &s[0], 1, 0);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 4 * EMTU);
    deliver(&b, p + 8, 4, 0);
    mrc_test_pump(&a, &b, 0, NULL, NULL);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 1);
    ck_assert_int_eq(st.cc_inflight, 0);
    ck_assert_uint_eq(st.cc_state, MRC_QPCC_IDLE);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A Transport ACK that overtakes the SACKs clears the QP's share; the late SACKs then take
 * nothing more off: inflight stays at 0, not minus a message, and the window stays shut to
 * no one. */
START_TEST(test_mrc_cc_ack_overtakes_sacks)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 12 * EMTU), 0);
    mrc_test_pkt *p = calloc(16, sizeof(*p)), *c = calloc(16, sizeof(*c));
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 16, 0), 12);
    deliver(&b, p, 12, 0);
    unsigned n = mrc_test_pull_all(&b, c, 16, 0), acks = 0;
    for (unsigned i = 0; i < n; i++) { /* the Transport ACK first */
        if (c[i].pkt.bth.opcode == MRC_OP_ACK) {
            deliver(&a, &c[i], 1, 0);
            acks++;
        }
    }
    ck_assert_uint_eq(acks, 1);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 0);
    for (unsigned i = 0; i < n; i++) {
        if (c[i].pkt.bth.opcode == MRC_OP_SACK) {
            deliver(&a, &c[i], 1, 0);
        }
    }
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 1);
    ck_assert_int_eq(st.cc_inflight, 0);
    free(p);
    free(c);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Over a link with no delay every RTT sample is below the timestamp's 128 ns tick: no sample,
 * so the base RTT and the maximum window derived from it stay as configured instead of
 * collapsing to one MTU. */
START_TEST(test_mrc_cc_subtick_rtt)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 0);
    uint64_t max = mrc_test_stats(&a).max_cwnd;
    ck_assert_uint_eq(max, 100 * BASE * 3 / 16); /* 1.5 x 100 Gb/s x base RTT */
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 64 * EMTU), 0);
    mrc_test_pump(&a, &b, 0, NULL, NULL);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 1);
    ck_assert_uint_eq(st.base_rtt_ns, BASE);
    ck_assert_uint_eq(st.max_cwnd, max);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* With a window of 4 MTUs the sender never has more than that outstanding, by single packets
 * or bursts; every SACK opens it again until the transfer is done. */
START_TEST(test_mrc_cc_window_limits)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 4 * EMTU);
    ck_assert_uint_eq(mrc_test_stats(&a).cwnd, 4 * EMTU);
    ck_assert_uint_eq(mrc_test_stats(&a).max_cwnd, 4 * EMTU);
    for (unsigned k = 0; k < 32 * EMTU; k++) {
        a.mem[k] = (uint8_t)(k * 7 + 1);
    }
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 32 * EMTU), 0);
    mrc_test_pkt *p = calloc(32, sizeof(*p));
    unsigned sent = 0;
    for (unsigned round = 0; sent < 32; round++) {
        ck_assert_uint_lt(round, 8);
        unsigned k = round % 2 ? pull_burst(&a, p, 32, 0) : mrc_test_pull_all(&a, p, 32, 0);
        ck_assert_uint_eq(k, 4);
        mrc_qp_stats st = mrc_test_stats(&a);
        ck_assert_int_eq(st.cc_inflight, 4 * EMTU);
        ck_assert_uint_eq(st.inflight_pkts, 4);
        sent += k;
        deliver(&b, p, k, 0);
        unsigned m = mrc_test_pull_all(&b, p, 32, 0);
        ck_assert_uint_ge(m, 1);
        deliver(&a, p, m, 0);
        ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 0);
    }
    mrc_wc wc;
    ck_assert_int_eq(mrc_test_poll(&a, &wc, 1), 1);
    ck_assert_int_eq(wc.status, MRC_WC_SUCCESS);
    ck_assert_mem_eq(b.mem, a.mem, 32 * EMTU);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 0);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A congestion window full of packets lost on the way (on a path just gone): no later packet
 * can go out to reveal them, so a tail-loss probe does, long before the timeout, and its
 * answer has them resent. */
START_TEST(test_mrc_cc_window_full_probe)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 4 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 32 * EMTU), 0);
    mrc_test_pkt *p = calloc(32, sizeof(*p));
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 32, 0), 4); /* all four lost */
    uint64_t rto = mrc_test_stats(&a).rto_ns, now = mrc_get_expiry(a.ctx);
    ck_assert_uint_lt(now, rto / 2);
    mrc_handle_expiry(a.ctx, now);
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 32, now), 1);
    ck_assert_uint_eq(p[0].pkt.bth.opcode, MRC_OP_PROBE);
    deliver(&b, p, 1, now);
    unsigned m = mrc_test_pull_all(&b, p, 32, now);
    ck_assert_uint_ge(m, 1);
    deliver(&a, p, m, now);
    unsigned k = mrc_test_pull_all(&a, p, 32, now);
    ck_assert_uint_ge(k, 1);
    ck_assert(mrc_test_is_data(&p[0]));
    ck_assert_uint_eq(p[0].pkt.bth.rtx, 1);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.timeouts, 0);
    ck_assert_uint_ge(st.retx_by_cause[MRC_RETX_PROBE], 1);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* The data packet after which less than an MTU of the window is left asks for a SACK (BTH
 * AckReq), and the responder answers it at once rather than after sack_every packets. The bit
 * does not make a middle packet a last one (a Write with Immediate's last packet is 4 bytes
 * longer: the burst form once sent it with a header that did not fit and no length). Loop: 0
 * a Write, 1 a Write with Immediate. */
START_TEST(test_mrc_cc_ackreq)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    o.set.sack_every = 16;
    cc_pair(&a, &o, &b, &o, 4 * EMTU);
    if (_i) {
        mrc_test_post_recvs(&b, 9, 1);
    }
    ck_assert_int_eq(post(&a, &b, 1, _i, 0, 32 * EMTU), 0);
    mrc_test_pkt *p = calloc(8, sizeof(*p));
    for (unsigned round = 0; round < 2; round++) {
        unsigned k = round ? pull_burst(&a, p, 8, 0) : mrc_test_pull_all(&a, p, 8, 0);
        ck_assert_uint_eq(k, 4);
        for (unsigned i = 0; i < 4; i++) {
            ck_assert_msg(p[i].pkt.bth.ackreq == (i == 3), "round %u packet %u: AckReq %u", round,
                          i, p[i].pkt.bth.ackreq);
            ck_assert_uint_eq(p[i].pkt.bth.opcode,
                              round || i ? MRC_OP_WRITE_MIDDLE : MRC_OP_WRITE_FIRST);
        }
        ck_assert_uint_eq(mrc_test_stats(&a).ackreq_sent, round + 1);
        mrc_test_pkt s;
        deliver(&b, p, 3, 0);
        ck_assert_int_eq(mrc_test_pull(&b, &s, 0), 0);
        deliver(&b, p + 3, 1, 0);
        ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
        ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
        deliver(&a, &s, 1, 0);
    }
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* Two QPs to the same peer with the same profile share one window: the second waits for the
 * first's packets and goes when a SACK opens it; a QP to another peer has its own window. A QP
 * that goes takes its bytes out of the shared window. */
START_TEST(test_mrc_cc_shared_window)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 4 * EMTU);
    mrc_qp_init_attr qa = {
        .send_cq = a.cq, .recv_cq = a.cq, .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1};
    mrc_qp *a2, *a3, *b2;
    ck_assert_int_eq(mrc_qp_new(a.ctx, &qa, &a2), 0);
    ck_assert_int_eq(mrc_qp_new(a.ctx, &qa, &a3), 0);
    qa.send_cq = qa.recv_cq = b.cq;
    ck_assert_int_eq(mrc_qp_new(b.ctx, &qa, &b2), 0);
    mrc_test_opts oa = o, ob = o;
    oa.rq_psn = ob.sq_psn;
    ob.rq_psn = oa.sq_psn;
    qp_up(a2, &oa, 0, 1, mrc_qp_num(b2), CC_ID, 0);
    qp_up(b2, &ob, 1, 0, mrc_qp_num(a2), CC_ID, 0);
    qp_up(a3, &oa, 0, 2, MRC_TEST_PEER_QPN, CC_ID, 0); /* to a third node */
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 8 * EMTU), 0);
    mrc_test_pkt *p = calloc(16, sizeof(*p));
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 16, 0), 4);
    mrc_sge g = {.addr = mrc_test_va(&a, 0), .length = 8 * EMTU, .lkey = mrc_mr_lkey(a.mr)};
    mrc_send_wr wr = {.wr_id = 2,
                      .opcode = MRC_WR_RDMA_WRITE,
                      .sg_list = &g,
                      .num_sge = 1,
                      .remote_addr = mrc_test_va(&b, 8 * EMTU),
                      .rkey = mrc_mr_rkey(b.mr)};
    ck_assert_int_eq(mrc_post_send(a2, &wr, 0), 0);
    ck_assert_int_eq(mrc_post_send(a3, &wr, 0), 0);
    mrc_test_pkt q[16];
    ck_assert_uint_eq(mrc_test_pull_all(&a, q, 16, 0), 4);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_uint_eq(q[i].info.qpn, mrc_qp_num(a3));
    }
    mrc_qp_stats s2 = qp_stats(a2), s3 = qp_stats(a3);
    ck_assert_uint_eq(s2.data_pkts_sent, 0);
    ck_assert_int_eq(s2.cc_inflight, 4 * EMTU);
    ck_assert_uint_eq(s2.cc_state, MRC_QPCC_ACTIVE);
    ck_assert_int_eq(s3.cc_inflight, 4 * EMTU);
    ck_assert_uint_eq(s3.cc_state, MRC_QPCC_ACTIVE);
    /* the first QP's SACK opens the shared window: the second QP gets its turn, the third
     * waits on its own */
    deliver(&b, p, 4, 0);
    unsigned m = mrc_test_pull_all(&b, q, 16, 0);
    deliver(&a, q, m, 0);
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 16, 0), 4);
    unsigned n2 = 0;
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_uint_ne(p[i].info.qpn, mrc_qp_num(a3));
        n2 += p[i].info.qpn == mrc_qp_num(a2);
    }
    ck_assert_uint_ge(n2, 1);
    ck_assert_uint_eq(qp_stats(a2).data_pkts_sent, n2);
    ck_assert_int_eq(qp_stats(a.qp).cc_inflight, 4 * EMTU);
    /* the second QP goes: what it had in flight leaves the window */
    mrc_qp_free(a2);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, (int64_t)(4 - n2) * EMTU);
    ck_assert_uint_eq(mrc_test_pull_all(&a, q, 16, 0), n2);
    mrc_qp_free(a3);
    mrc_qp_free(b2);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* How the responder gets under pressure in the penalty tests. */
enum { PRESS_WIMM, PRESS_RECV, PRESS_OOO, PRESS_STARVED };

/* The responder under pressure sends a window penalty, the requester's window shrinks to one
 * MTU; when the pressure ends the SACKs carry the restore bit and the window comes back. With
 * MRC_QP_CAP_HOST_BP_DISABLE none of that, nor with the penalty starting at |start| % when the
 * pressure stays at 75 % or less. */
static void penalty_case(int press, bool disabled, unsigned start)
{
    mrc_test_opts o, ob;
    mrc_test_node a, b;
    cc_opts(&o);
    ob = o;
    ob.set.bp_start_pct = start;
    if (press == PRESS_WIMM) {
        ob.max_wimm_dest = 4;
    }
    if (press == PRESS_OOO) {
        ob.set.rx_budget = 6 * EMTU;
    }
    if (disabled) {
        ob.cap = MRC_QP_CAP_HOST_BP_DISABLE;
    }
    bool quiet = disabled || (press != PRESS_STARVED && start >= 75);
    cc_pair(&a, &o, &b, &ob, 16 * EMTU);
    mrc_test_post_recvs(&b, 100, press == PRESS_RECV ? 4 : press == PRESS_STARVED ? 0 : 16);
    mrc_test_pkt *p = calloc(8, sizeof(*p)), s;
    unsigned pens = 0;
    uint64_t pen_before = 0;
    if (press == PRESS_STARVED) {
        /* an immediate with no receive posted: NACKed, and the next SACK is under pressure */
        ck_assert_int_eq(post(&a, &b, 1, true, 0, 512), 0);
        ck_assert_int_eq(post(&a, &b, 2, false, 1024, 512), 0);
        ck_assert_uint_eq(mrc_test_pull_all(&a, p, 8, 0), 2);
        deliver(&b, p, 1, 0);
        ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
        ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_NACK);
        deliver(&a, &s, 1, 0);
        deliver(&b, p + 1, 1, 0);
        ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
        ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
        ck_assert_uint_eq(s.pkt.cc.pen > 0, !disabled);
        pens += s.pkt.cc.pen > 0;
        deliver(&a, &s, 1, 0);
        mrc_test_post_recvs(&b, 100, 1);
        mrc_test_run(&a, &b, 0, 100000, NULL, NULL); /* the resend after nack_retry_ns */
    } else {
        /* message 1 (two packets) then three immediates (or plain writes); the first packet
         * held back, the immediates wait in the stash for it, and every packet after it is
         * held out of order */
        ck_assert_int_eq(post(&a, &b, 1, false, 0, 2 * EMTU), 0);
        for (unsigned i = 0; i < 3; i++) {
            ck_assert_int_eq(post(&a, &b, 2 + i, press != PRESS_OOO, (3 + i) * EMTU, 512), 0);
        }
        ck_assert_uint_eq(mrc_test_pull_all(&a, p, 8, 0), 5);
        uint64_t cwnd = mrc_test_stats(&a).cwnd;
        ck_assert_uint_eq(cwnd, 16 * EMTU);
        for (unsigned i = 1; i < 5; i++) {
            deliver(&b, p + i, 1, 0);
            ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
            ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
            /* 0, 1, 2 and 3 of 4 immediates held, or 1 to 4 of 6 packets: the penalty starts
             * past half */
            ck_assert_msg((s.pkt.cc.pen > 0) == (i == 4 && !quiet), "SACK %u: pen %u", i,
                          s.pkt.cc.pen);
            ck_assert_uint_eq(s.pkt.cc.rc, 0);
            pens += s.pkt.cc.pen > 0;
            deliver(&a, &s, 1, 0);
        }
        mrc_qp_stats st = mrc_test_stats(&a);
        ck_assert_uint_eq(st.cc_pen, quiet ? 0 : 1);
        ck_assert_uint_eq(st.cwnd, quiet ? cwnd : EMTU);
        pen_before = st.cc_pen;
        deliver(&b, p, 1, 0);
        ck_assert_int_gt(mrc_test_pull(&b, &s, 0), 0);
        ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
        ck_assert_uint_eq(s.pkt.cc.pen, 0);
        ck_assert_uint_eq(s.pkt.cc.rc, !quiet);
        deliver(&a, &s, 1, 0);
        ck_assert_uint_eq(mrc_test_stats(&a).cwnd, cwnd);
        mrc_test_pump(&a, &b, 0, NULL, NULL);
    }
    ck_assert_uint_eq(mrc_test_stats(&b).pen_sent, pens);
    ck_assert_uint_eq(pens, quiet ? 0 : 1);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_ge(st.cc_pen, pen_before);
    ck_assert_uint_eq(st.msgs_sent_done, press == PRESS_STARVED ? 2 : 4);
    ck_assert_uint_eq(st.cwnd, 16 * EMTU); /* restored (or never cut) */
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}

/* The immediates stashed against max_wimm_dest. */
START_TEST(test_mrc_cc_penalty_wimm)
{
    penalty_case(PRESS_WIMM, false, 50);
}
END_TEST

/* The posted receives the stashed immediates reserve. */
START_TEST(test_mrc_cc_penalty_recv)
{
    penalty_case(PRESS_RECV, false, 50);
}
END_TEST

/* The bytes held out of order against rx_budget. */
START_TEST(test_mrc_cc_penalty_rx_budget)
{
    penalty_case(PRESS_OOO, false, 50);
}
END_TEST

/* An immediate that found no posted receive: full pressure on the next SACK. */
START_TEST(test_mrc_cc_penalty_starved)
{
    penalty_case(PRESS_STARVED, false, 50);
}
END_TEST

/* bp_start_pct: 75 % is no pressure when the penalty starts there, and is from 70 %. */
START_TEST(test_mrc_cc_penalty_start)
{
    penalty_case(PRESS_WIMM, false, 75);
    penalty_case(PRESS_OOO, false, 75);
    penalty_case(PRESS_WIMM, false, 70);
}
END_TEST

START_TEST(test_mrc_cc_penalty_disabled)
{
    penalty_case(PRESS_WIMM, true, 50);
    penalty_case(PRESS_RECV, true, 50);
    penalty_case(PRESS_OOO, true, 50);
    penalty_case(PRESS_STARVED, true, 50);
}
END_TEST

/* A trimmed packet leaves the window (its NACK takes its length off cwnd) and its resend counts
 * again: inflight follows every step. */
START_TEST(test_mrc_cc_trim)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 4 * EMTU), 0);
    mrc_test_pkt p[4], c[4];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 4, 0), 4);
    mrc_test_pkt tr = p[1];
    tr.len = MRC_BASE_LEN + mrc_wire_ext_len(tr.pkt.bth.opcode, tr.pkt.bth.ts);
    mrc_rx_info rx = mrc_test_rx(&tr);
    rx.dscp = o.set.dscp_trimmed;
    deliver(&b, p, 1, 0);
    ck_assert_int_eq(mrc_test_push(&b, &tr, &rx, 0), 0);
    deliver(&b, p + 2, 2, 0);
    unsigned m = mrc_test_pull_all(&b, c, 4, 0);
    ck_assert_uint_ge(m, 2);
    ck_assert_uint_eq(c[0].pkt.bth.opcode, MRC_OP_NACK);
    deliver(&a, c, 1, 0);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.cwnd, 15 * EMTU);
    ck_assert_int_eq(st.cc_inflight, 3 * EMTU);
    deliver(&a, c + 1, m - 1, 0);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, 0);
    ck_assert_int_gt(mrc_test_pull(&a, p, 0), 0);
    ck_assert_uint_eq(p[0].pkt.bth.rtx, 1);
    ck_assert_int_eq(mrc_test_stats(&a).cc_inflight, EMTU);
    deliver(&b, p, 1, 0);
    mrc_test_pump(&a, &b, 0, NULL, NULL);
    st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 1);
    ck_assert_int_eq(st.cc_inflight, 0);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A loss the SACKs reveal (a failed path, or a packet overtaken) leaves the window as it is;
 * a timeout takes the packet off it (lib/mrc/README.md#congestion-control). */
START_TEST(test_mrc_cc_loss_kinds)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 8 * EMTU), 0);
    mrc_test_pkt p[8], c[16];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 8, 0), 8);
    deliver(&b, p + 1, 7, 0); /* the first is lost */
    unsigned m = mrc_test_pull_all(&b, c, 16, 0);
    deliver(&a, c, m, 1000);
    /* a round trip and a reordering window later the hole is lost, on RACK's timer */
    uint64_t now = mrc_get_expiry(a.ctx);
    mrc_handle_expiry(a.ctx, now);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.retx_by_cause[MRC_RETX_INFERRED], 1);
    ck_assert_uint_eq(st.timeouts, 0);
    ck_assert_uint_eq(st.cwnd, 16 * EMTU);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);

    /* the packet and every probe for it lost: the timeout */
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, EMTU), 0);
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 8, 0), 1);
    for (int i = 0; i < 16 && mrc_test_stats(&a).timeouts == 0; i++) {
        now = mrc_get_expiry(a.ctx);
        mrc_handle_expiry(a.ctx, now);
        mrc_test_pull_all(&a, p, 8, now);
    }
    st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.timeouts, 1);
    ck_assert_uint_eq(st.cwnd, 15 * EMTU);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* The loss detector's round trip comes from the timestamp a SACK reflects, a resend's too: a
 * QP whose every packet was trimmed once would otherwise have none. */
START_TEST(test_mrc_cc_resend_rtt)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, EMTU), 0);
    mrc_test_pkt p, c[4];
    ck_assert_int_gt(mrc_test_pull(&a, &p, 0), 0);
    p.len = MRC_BASE_LEN + mrc_wire_ext_len(p.pkt.bth.opcode, p.pkt.bth.ts);
    mrc_rx_info rx = mrc_test_rx(&p);
    rx.dscp = o.set.dscp_trimmed;
    ck_assert_int_eq(mrc_test_push(&b, &p, &rx, 1000), 0);
    unsigned m = mrc_test_pull_all(&b, c, 4, 1000);
    deliver(&a, c, m, 2000);
    ck_assert_int_gt(mrc_test_pull(&a, &p, 2000), 0); /* the resend */
    ck_assert_uint_eq(p.pkt.bth.rtx, 1);
    ck_assert_uint_eq(mrc_test_stats(&a).srtt_ns, 0);
    deliver(&b, &p, 1, 3000);
    m = mrc_test_pull_all(&b, c, 4, 3000);
    deliver(&a, c, m, 12000);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 1);
    /* 10 us, to the 128 ns tick */
    ck_assert_uint_ge(st.srtt_ns, 10000 - 128);
    ck_assert_uint_le(st.srtt_ns, 10000 + 128);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* A NACK for a copy already declared lost and resent (it arrives late, or twice) names the
 * old copy's EV: the resend is still out and keeps its place in the window. */
START_TEST(test_mrc_cc_stale_nack)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 2 * EMTU), 0);
    mrc_test_pkt p[2], c[4], r;
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 2, 0), 2);
    mrc_test_pkt tr = p[1];
    tr.len = MRC_BASE_LEN + mrc_wire_ext_len(tr.pkt.bth.opcode, tr.pkt.bth.ts);
    mrc_rx_info rx = mrc_test_rx(&tr);
    rx.dscp = o.set.dscp_trimmed;
    deliver(&b, p, 1, 0);
    ck_assert_int_eq(mrc_test_push(&b, &tr, &rx, 0), 0);
    unsigned m = mrc_test_pull_all(&b, c, 4, 0);
    unsigned k = 0;
    while (k < m && c[k].pkt.bth.opcode != MRC_OP_NACK) {
        k++;
    }
    ck_assert_uint_lt(k, m);
    deliver(&a, c, m, 0);
    ck_assert_int_gt(mrc_test_pull(&a, &r, 0), 0); /* the resend */
    ck_assert_uint_eq(r.pkt.bth.rtx, 1);
    ck_assert_uint_ne(r.info.ev, p[1].info.ev);
    int64_t infl = mrc_test_stats(&a).cc_inflight;
    ck_assert_int_ge(infl, EMTU); /* the resend at least */
    /* the NACK again: nothing changes, nothing is resent */
    deliver(&a, c + k, 1, 0);
    mrc_qp_stats st = mrc_test_stats(&a);
    ck_assert_int_eq(st.cc_inflight, infl);
    ck_assert_uint_eq(st.retx_pkts, 1);
    ck_assert_int_eq(mrc_test_pull(&a, p, 0), 0);
    deliver(&b, &r, 1, 0);
    mrc_test_pump(&a, &b, 0, NULL, NULL);
    st = mrc_test_stats(&a);
    ck_assert_uint_eq(st.msgs_sent_done, 1);
    ck_assert_int_eq(st.cc_inflight, 0);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

/* The responder adds how long an answer waited to the timestamp it reflects (128 ns ticks),
 * SACK and NACK alike, when svc_time is on: the requester's RTT is then the network's. */
static void svc_case(bool on)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    o.set.svc_time = on;
    cc_pair(&a, &o, &b, &o, 16 * EMTU);
    uint64_t t0 = 1000000, wait = 200 << MRC_TS_SHIFT;
    ck_assert_int_eq(post(&a, &b, 1, false, 0, EMTU), 0);
    ck_assert_int_eq(post(&a, &b, 2, false, EMTU, EMTU), 0);
    mrc_test_pkt p[2], s;
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 2, t0), 2);
    uint16_t ts = (uint16_t)(t0 >> MRC_TS_SHIFT);
    ck_assert_uint_eq(p[0].pkt.tseth.ts, ts);
    uint64_t t1 = t0 + 1000;
    deliver(&b, p, 1, t1);
    ck_assert_int_gt(mrc_test_pull(&b, &s, t1 + wait), 0);
    ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_SACK);
    ck_assert_uint_eq(s.pkt.cc.ts, (uint16_t)(ts + (on ? 200 : 0)));
    ck_assert_int_eq(mrc_test_push(&a, &s, NULL, t1 + wait + 1000), 0);
    uint64_t base = mrc_test_stats(&a).base_rtt_ns;
    if (on) {
        ck_assert_uint_le(base, 2000 + 2 * 128);
    } else {
        ck_assert_uint_eq(base, BASE); /* 27.6 us is no new base */
    }
    /* a NACK's timestamp the same way */
    mrc_test_pkt tr = p[1];
    tr.len = MRC_BASE_LEN + mrc_wire_ext_len(tr.pkt.bth.opcode, tr.pkt.bth.ts);
    mrc_rx_info rx = mrc_test_rx(&tr);
    rx.dscp = o.set.dscp_trimmed;
    while (mrc_test_pull(&b, &s, t1 + wait) > 0) {
    }
    uint64_t t2 = t1 + 100000;
    ck_assert_int_eq(mrc_test_push(&b, &tr, &rx, t2), 0);
    ck_assert_int_gt(mrc_test_pull(&b, &s, t2 + wait), 0);
    ck_assert_uint_eq(s.pkt.bth.opcode, MRC_OP_NACK);
    ck_assert_uint_eq(s.pkt.neth.ts, (uint16_t)(ts + (on ? 200 : 0)));
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}

START_TEST(test_mrc_cc_svc_time)
{
    svc_case(true);
    svc_case(false);
}
END_TEST

/* With data and control both waiting on one context, ctrl_weight control packets go per data
 * packet, by single packets; by bursts never more control than that per data packet. */
static void ctrl_case(unsigned weight, bool burst)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    mrc_test_opts_default(&o);
    o.timeout = 12;
    o.set.ctrl_weight = weight;
    mrc_test_pair_new(&a, &o, &b, &o, 0);
    /* a's data: 24 packets */
    ck_assert_int_eq(mrc_test_post_write(&a, 1, false, 0, 32768, 24 * EMTU, mrc_test_va(&b, 0),
                                         mrc_mr_rkey(b.mr), 0),
                     0);
    /* a's control: a SACK for each CE-marked packet of b's 30-packet message, then an ACK */
    static uint8_t payload[EMTU];
    for (unsigned i = 0; i < 30; i++) {
        uint8_t op = i == 0    ? MRC_OP_WRITE_FIRST
                     : i == 29 ? MRC_OP_WRITE_LAST
                               : MRC_OP_WRITE_MIDDLE;
        mrc_test_pkt d;
        mrc_test_build_data(&d, &a, op, mrc_psn_add(o.sq_psn, (int32_t)i), 1, 0,
                            mrc_test_va(&a, i * EMTU), mrc_mr_rkey(a.mr), 30 * EMTU, payload, EMTU,
                            mrc_test_ev(i % 2, 0), i % 2);
        mrc_rx_info rx = mrc_test_rx(&d);
        rx.ecn = MRC_ECN_CE;
        ck_assert_int_eq(mrc_test_push(&a, &d, &rx, 0), 0);
    }
    mrc_test_pkt *p = calloc(64, sizeof(*p));
    unsigned n = 0;
    while (n < 64) {
        unsigned k = burst ? pull_burst(&a, p + n, 8, 0) : mrc_test_pull_all(&a, p + n, 1, 0);
        if (k == 0) {
            break;
        }
        n += k;
    }
    ck_assert_uint_eq(n, 24 + 31);
    unsigned ctrl_left = 31, data_left = 24, run = 0;
    for (unsigned i = 0; i < n; i++) {
        bool data = mrc_test_is_data(&p[i]);
        if (data) {
            /* a data packet while control waits: only after the control's share */
            /* bursts too: one data packet at a time while control waits */
            MRC_REQUIRE(!ctrl_left || run == weight, "packet %u: data after %u control packets", i,
                        run);
            data_left--;
            run = 0;
        } else {
            run++;
            ctrl_left--;
            MRC_REQUIRE(run <= weight || !data_left, "packet %u: %u control packets in a row", i,
                        run);
        }
    }
    ck_assert_uint_eq(ctrl_left + data_left, 0);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}

START_TEST(test_mrc_cc_ctrl_weight)
{
    ctrl_case(10, false);
    ctrl_case(3, false);
    ctrl_case(1, false);
    ctrl_case(3, true);
}
END_TEST

/* A QP's scheduling state: IDLE, READY with data and an open window, ACTIVE when the window
 * closed on it, PENDING with everything sent and in flight, IDLE again when acknowledged. */
START_TEST(test_mrc_cc_state)
{
    mrc_test_opts o;
    mrc_test_node a, b;
    cc_opts(&o);
    cc_pair(&a, &o, &b, &o, 4 * EMTU);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_IDLE);
    ck_assert_int_eq(post(&a, &b, 1, false, 0, 6 * EMTU), 0);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_READY);
    mrc_test_pkt *p = calloc(8, sizeof(*p)), s[4];
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 1, 0), 1);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_READY);
    ck_assert_uint_eq(mrc_test_pull_all(&a, p + 1, 8, 0), 3);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_ACTIVE);
    deliver(&b, p, 4, 0);
    unsigned m = mrc_test_pull_all(&b, s, 4, 0);
    deliver(&a, s, m, 0);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_READY);
    ck_assert_uint_eq(mrc_test_pull_all(&a, p, 8, 0), 2);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_PENDING);
    deliver(&b, p, 2, 0);
    m = mrc_test_pull_all(&b, s, 4, 0);
    ck_assert_uint_ge(m, 1);
    ck_assert_uint_eq(s[0].pkt.bth.opcode, MRC_OP_SACK);
    deliver(&a, s, 1, 0); /* the SACK alone: nothing in flight, the send not yet complete */
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_IDLE);
    deliver(&a, s + 1, m - 1, 0);
    ck_assert_uint_eq(mrc_test_stats(&a).cc_state, MRC_QPCC_IDLE);
    ck_assert_uint_eq(mrc_test_stats(&a).msgs_sent_done, 1);
    free(p);
    mrc_test_node_free(&a);
    mrc_test_node_free(&b);
}
END_TEST

Suite *mrc_cc_suite(void)
{
    Suite *s = suite_create("cc");
    TCase *tc = tcase_create("nscc");
    tcase_add_test(tc, test_mrc_cc_nscc_defaults);
    tcase_add_test(tc, test_mrc_cc_nscc_resolve);
    tcase_add_test(tc, test_mrc_cc_nscc_config_refused);
    tcase_add_test(tc, test_mrc_cc_nscc_fair_increase);
    tcase_add_test(tc, test_mrc_cc_nscc_proportional_increase);
    tcase_add_test(tc, test_mrc_cc_nscc_decrease);
    tcase_add_test(tc, test_mrc_cc_nscc_decrease_once_per_rtt);
    tcase_add_test(tc, test_mrc_cc_nscc_quick_adapt);
    tcase_add_test(tc, test_mrc_cc_nscc_trim_without_quick_adapt);
    tcase_add_test(tc, test_mrc_cc_nscc_lasthop_trim);
    tcase_add_test(tc, test_mrc_cc_nscc_quick_adapt_delay);
    tcase_add_test(tc, test_mrc_cc_nscc_fast_increase);
    tcase_add_test(tc, test_mrc_cc_nscc_clamp);
    tcase_add_test(tc, test_mrc_cc_nscc_base_rtt);
    tcase_add_test(tc, test_mrc_cc_nscc_penalty);
    tcase_add_test(tc, test_mrc_cc_nscc_inflight);
    tcase_add_test(tc, test_mrc_cc_nscc_loss);
    tcase_add_test(tc, test_mrc_cc_nscc_eta);
    suite_add_tcase(s, tc);
    tc = tcase_create("engine");
    tcase_add_test(tc, test_mrc_cc_sack_bytes);
    tcase_add_test(tc, test_mrc_cc_ack_overtakes_sacks);
    tcase_add_test(tc, test_mrc_cc_subtick_rtt);
    tcase_add_test(tc, test_mrc_cc_window_limits);
    tcase_add_test(tc, test_mrc_cc_window_full_probe);
    tcase_add_loop_test(tc, test_mrc_cc_ackreq, 0, 2);
    tcase_add_test(tc, test_mrc_cc_shared_window);
    tcase_add_test(tc, test_mrc_cc_penalty_wimm);
    tcase_add_test(tc, test_mrc_cc_penalty_recv);
    tcase_add_test(tc, test_mrc_cc_penalty_rx_budget);
    tcase_add_test(tc, test_mrc_cc_penalty_starved);
    tcase_add_test(tc, test_mrc_cc_penalty_start);
    tcase_add_test(tc, test_mrc_cc_penalty_disabled);
    tcase_add_test(tc, test_mrc_cc_trim);
    tcase_add_test(tc, test_mrc_cc_stale_nack);
    tcase_add_test(tc, test_mrc_cc_resend_rtt);
    tcase_add_test(tc, test_mrc_cc_loss_kinds);
    tcase_add_test(tc, test_mrc_cc_svc_time);
    tcase_add_test(tc, test_mrc_cc_ctrl_weight);
    tcase_add_test(tc, test_mrc_cc_state);
    suite_add_tcase(s, tc);
    return s;
}
