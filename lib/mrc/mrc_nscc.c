/* SPDX-License-Identifier: MIT */
/* NSCC as UEC 1.0 gives it (lib/mrc/README.md#congestion-control): four cases on ECN and queueing
 * delay, quick adapt, fast increase, adjustments at most once per period, multiplicative decrease
 * at most once per base RTT, and the receiver's window penalty. */
#include "mrc_cc.h"

#define DEFAULT(v, d) ((v) ? (v) : (d))

static double dflt(double v, double d)
{
    return v != 0 ? v : d;
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

int mrc_nscc_check(const mrc_cc_nscc_cfg *cfg)
{
    if (!(cfg->link_gbps > 0 && cfg->link_gbps <= 1e6) || cfg->base_rtt_ns == 0 ||
        cfg->base_rtt_ns > 1000000000ull || cfg->gamma < 0 || cfg->gamma > 1 ||
        cfg->max_md_jump < 0 || cfg->max_md_jump >= 1 || cfg->fi < 0 || cfg->fi_scale < 0 ||
        cfg->eta < 0 || cfg->qa_gate > 32 || cfg->delay_gain < 0 || cfg->delay_gain > 1) {
        return MRC_ERR_INVAL;
    }
    return 0;
}

int mrc_nscc_init(mrc_nscc *cc, const mrc_cc_nscc_cfg *cfg, uint32_t mtu, bool trimming,
                  uint64_t now)
{
    if (mrc_nscc_check(cfg) != 0) {
        return MRC_ERR_INVAL;
    }
    *cc = (mrc_nscc){0};
    double link = cfg->link_gbps / 8; /* bytes per ns */
    double bdp = link * (double)cfg->base_rtt_ns;
    uint64_t target =
        DEFAULT(cfg->target_delay_ns, trimming ? cfg->base_rtt_ns * 3 / 4 : cfg->base_rtt_ns);
    double a = bdp / 150000, b = (double)target / 12000;
    cc->mtu = mtu;
    cc->link = link;
    cc->cfg_base_rtt = cc->base_rtt = cfg->base_rtt_ns;
    cc->target = target ? target : 1;
    cc->gamma = dflt(cfg->gamma, 0.8);
    cc->max_md_jump = dflt(cfg->max_md_jump, 0.5);
    cc->fi = dflt(cfg->fi, 5 * cc->mtu * a);
    cc->fi_scale = dflt(cfg->fi_scale, 0.25 * a);
    cc->eta = dflt(cfg->eta, 0.15 * cc->mtu * a);
    cc->alpha = 4.0 * cc->mtu * a * b / (double)cc->target;
    cc->gain = dflt(cfg->delay_gain, 0.0125);
    cc->qa_gate = DEFAULT(cfg->qa_gate, 3u);
    cc->qa_threshold = DEFAULT(cfg->qa_threshold_ns, trimming ? UINT64_MAX : 4 * cc->target);
    cc->disable_qa = cfg->disable_qa;
    cc->adjust_bytes = DEFAULT(cfg->adjust_bytes, 8ull * mtu);
    cc->adjust_period = DEFAULT(cfg->adjust_period_ns, cfg->base_rtt_ns);
    cc->fi_delay = DEFAULT(cfg->fi_delay_ns, 1000u);
    cc->derive_max = cfg->max_cwnd == 0;
    cc->max_wnd = cfg->max_cwnd ? (double)cfg->max_cwnd : 1.5 * bdp;
    cc->max_wnd = dmax(cc->max_wnd, cc->mtu);
    cc->cwnd = cc->max_wnd;
    cc->last_adjust = now;
    return 0;
}

int mrc_cc_nscc_resolve(const mrc_cc_nscc_cfg *cfg, uint32_t mtu, bool trimming,
                        mrc_cc_nscc_cfg *out)
{
    mrc_nscc cc;
    if (mtu == 0 || mrc_nscc_init(&cc, cfg, mtu, trimming, 0) != 0) {
        return MRC_ERR_INVAL;
    }
    *out = (mrc_cc_nscc_cfg){.link_gbps = cfg->link_gbps,
                             .base_rtt_ns = cfg->base_rtt_ns,
                             .target_delay_ns = cc.target,
                             .max_cwnd = (uint64_t)cc.max_wnd,
                             .gamma = cc.gamma,
                             .max_md_jump = cc.max_md_jump,
                             .fi = cc.fi,
                             .fi_scale = cc.fi_scale,
                             .eta = cc.eta,
                             .qa_gate = cc.qa_gate,
                             .qa_threshold_ns = cc.qa_threshold,
                             .disable_qa = cc.disable_qa,
                             .adjust_bytes = cc.adjust_bytes,
                             .adjust_period_ns = cc.adjust_period,
                             .fi_delay_ns = cc.fi_delay,
                             .delay_gain = cc.gain};
    return 0;
}

/* A shorter round trip than any so far is the new base, and the maximum window follows it
 * when it is derived. */
static void update_base_rtt(mrc_nscc *cc, uint64_t rtt)
{
    if (rtt >= cc->base_rtt) {
        return;
    }
    cc->base_rtt = rtt;
    if (cc->derive_max) {
        cc->max_wnd = dmax(1.5 * cc->link * (double)rtt, cc->mtu);
        cc->cwnd = dmin(cc->cwnd, cc->max_wnd);
    }
}

static void update_delay(mrc_nscc *cc, double delay)
{
    cc->avg_delay += cc->gain * (delay - cc->avg_delay);
}

static void clear_fast(mrc_nscc *cc)
{
    cc->increase = false;
    cc->fi_count = 0;
}

/* Once per base RTT plus target: a window that achieved less than max_wnd >> qa_gate under a
 * trim, a loss or a long delay was far too big, so it drops to what got through, and ECN
 * echoes of the packets sent before are then ignored. */
static bool quick_adapt(mrc_nscc *cc, bool loss, uint64_t delay, uint64_t now)
{
    if (cc->disable_qa || now < cc->qa_end) {
        return false;
    }
    bool done = false;
    if (cc->qa_end != 0 && (cc->trigger_qa || loss || delay > cc->qa_threshold) &&
        (double)cc->achieved < cc->max_wnd / (double)(1ull << cc->qa_gate)) {
        cc->cwnd = dmax((double)cc->achieved, cc->mtu);
        cc->to_ignore = cc->inflight > 0 ? (uint64_t)cc->inflight : 0;
        cc->ignored = 0;
        clear_fast(cc);
        cc->n_qa++;
        done = true;
    }
    cc->trigger_qa = false;
    cc->achieved = 0;
    cc->qa_end = now + cc->base_rtt + cc->target;
    return done;
}

/* No queueing for a window's worth of bytes: grow by a share of each acknowledgement. */
static void fast_increase(mrc_nscc *cc, uint64_t newly, uint64_t delay)
{
    if (delay >= cc->fi_delay) {
        clear_fast(cc);
        return;
    }
    cc->fi_count += newly;
    if (cc->increase || (double)cc->fi_count > cc->cwnd) {
        if (!cc->increase) {
            cc->n_fast++;
        }
        cc->cwnd = dmin(cc->cwnd + (double)newly * cc->fi_scale, cc->max_wnd);
        cc->increase = true;
    }
}

static void multiplicative_decrease(mrc_nscc *cc, uint64_t now)
{
    clear_fast(cc);
    double avg = cc->avg_delay, target = (double)cc->target;
    if (avg > target && now - cc->last_dec > cc->base_rtt) {
        double f = dmax(1 - cc->gamma * (avg - target) / avg, cc->max_md_jump);
        cc->cwnd = dmax(cc->cwnd * f, cc->mtu);
        cc->last_dec = now;
        cc->n_md++;
    }
}

static void fulfill_adjustment(mrc_nscc *cc, uint64_t now)
{
    cc->cwnd += cc->inc_bytes / cc->cwnd;
    if (now - cc->last_adjust >= cc->adjust_period) {
        cc->cwnd += cc->eta;
        cc->last_adjust = now;
    }
    cc->cwnd = dmin(cc->cwnd, cc->max_wnd);
    cc->inc_bytes = 0;
    cc->received = 0;
}

/* The receiver's backpressure: a penalty shrinks the window by pen/128 of each
 * acknowledgement, having saved it once; the restore bit brings the saved window back. */
static bool apply_penalty(mrc_nscc *cc, uint8_t pen, bool rc, uint64_t newly)
{
    if (pen > 0) {
        if (cc->saved_cwnd == 0) {
            cc->saved_cwnd = cc->cwnd;
        }
        cc->cwnd = dmin(cc->cwnd, (double)cc->inflight);
        cc->cwnd = dmax(cc->mtu, cc->cwnd - (double)((pen * newly) >> 7));
        cc->n_pen++;
        return true;
    }
    if (rc && cc->saved_cwnd > 0) {
        cc->cwnd = dmin(cc->saved_cwnd, cc->max_wnd);
        cc->saved_cwnd = 0;
    }
    return false;
}

void mrc_nscc_on_ack(mrc_nscc *cc, const mrc_nscc_ack *a, uint64_t now)
{
    cc->inflight -= (int64_t)a->newly;
    cc->ignored += a->newly;
    cc->received += a->newly;
    cc->achieved += a->newly;
    bool limited = apply_penalty(cc, a->pen, a->rc, a->newly);
    if (a->rtt == 0) {
        return;
    }
    update_base_rtt(cc, a->rtt);
    uint64_t delay = a->rtt - cc->base_rtt;
    update_delay(cc, (double)delay);
    if (quick_adapt(cc, false, delay, now)) {
        return;
    }
    /* after a last-hop trim, until a delay below the target shows the receiver's queue
     * drained, a long delay is that queue: no fair increase into it */
    cc->lasthop = cc->lasthop && delay >= cc->target;
    if (a->ecn && cc->ignored < cc->to_ignore) {
        return; /* the echo of a packet sent before quick adapt cut the window */
    }
    if (!a->ecn && !limited && !cc->lasthop) {
        if (delay >= cc->target) {
            clear_fast(cc); /* a queue: the run of ~zero delays fast increase needs is over */
            cc->inc_bytes += cc->fi * (double)a->newly; /* fair increase */
        } else {
            fast_increase(cc, a->newly, delay);
            if (!cc->increase) { /* proportional increase */
                cc->inc_bytes += cc->alpha * (double)a->newly * (double)(cc->target - delay);
            }
        }
    } else if (a->ecn && delay >= cc->target) {
        multiplicative_decrease(cc, now);
    }
    /* ECN without delay: the path is busy, not the receiver; the EV's SKIP handles it */
    if (now - cc->last_adjust >= cc->adjust_period || cc->received > cc->adjust_bytes) {
        fulfill_adjustment(cc, now);
    }
}

void mrc_nscc_on_trim(mrc_nscc *cc, uint32_t len, bool lasthop, uint64_t now)
{
    /* a trim is a full queue somewhere: as much delay as the base RTT */
    update_delay(cc, (double)cc->cfg_base_rtt);
    cc->ignored += len;
    cc->trigger_qa = true;
    if (!quick_adapt(cc, true, 0, now)) {
        cc->cwnd = dmax(cc->cwnd - len, cc->mtu);
    }
    if (lasthop) {
        /* MRC's switches do not mark the receiver's downlink (lib/mrc/README.md#switches), where
         * UEC's last hop would mark most packets of a standing queue: its trims are the incast's
         * marks, so each is NSCC's ECN-with-delay case, and the increase gathered goes */
        cc->lasthop = true;
        cc->inc_bytes = 0;
        multiplicative_decrease(cc, now);
    }
}

void mrc_nscc_on_loss(mrc_nscc *cc, uint32_t len)
{
    cc->cwnd = dmax(cc->cwnd - len, cc->mtu);
}
