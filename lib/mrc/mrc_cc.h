/* SPDX-License-Identifier: MIT */
/* NSCC (UEC §3.6.13; lib/mrc/README.md#congestion-control), the window of one QP congestion
 * controller: pure arithmetic on what SACKs and NACKs report, with the time passed in. The QPCC
 * around it, shared by the QPs to one peer, lives in mrc_cc.c too. */
#ifndef MRC_CC_H
#define MRC_CC_H

#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mrc_nscc {
    /* parameters, derived once from the profile, the MTU and trimming */
    double mtu, gamma, max_md_jump, fi, fi_scale, eta, alpha, gain, link; /* link: B/ns */
    uint64_t cfg_base_rtt, target, qa_threshold, adjust_bytes, adjust_period, fi_delay;
    unsigned qa_gate;
    bool disable_qa, derive_max;
    /* state (UEC Table 3-77) */
    double cwnd, max_wnd, saved_cwnd, inc_bytes, avg_delay;
    int64_t inflight;
    uint64_t base_rtt, achieved, received, fi_count, to_ignore, ignored;
    uint64_t qa_end, last_adjust, last_dec;
    bool trigger_qa, increase;
    bool lasthop; /* a last-hop trim came, and no delay below the target since: no fair increase */
    /* what it did */
    uint64_t n_md, n_qa, n_fast, n_pen;
} mrc_nscc;

/* What one SACK tells the controller. */
typedef struct mrc_nscc_ack {
    uint64_t newly; /* bytes newly received, from the SACK's running total */
    uint64_t rtt;   /* ns; 0 when the SACK gives no unambiguous sample */
    bool ecn;       /* the triggering packet was CE-marked (m != NONE) */
    uint8_t pen;    /* the receiver's window penalty, 0..127 */
    bool rc;        /* ... and its restore bit */
} mrc_nscc_ack;

/* Fills the parameters from |cfg| (zeros take their defaults) and starts at the maximum
 * window. Returns 0, or MRC_ERR_INVAL without a link rate or base RTT. */
int mrc_nscc_init(mrc_nscc *cc, const mrc_cc_nscc_cfg *cfg, uint32_t mtu, bool trimming,
                  uint64_t now);
/* Checks a profile's parameters without a QP: 0 or MRC_ERR_INVAL. */
int mrc_nscc_check(const mrc_cc_nscc_cfg *cfg);
void mrc_nscc_on_ack(mrc_nscc *cc, const mrc_nscc_ack *a, uint64_t now);
/* A NACK for a packet of |len| bytes trimmed, |lasthop| on the receiver's downlink. */
void mrc_nscc_on_trim(mrc_nscc *cc, uint32_t len, bool lasthop, uint64_t now);
/* A packet of |len| bytes lost without a trim (inferred or timed out). */
void mrc_nscc_on_loss(mrc_nscc *cc, uint32_t len);

static inline bool mrc_nscc_can_send(const mrc_nscc *cc, uint32_t len)
{
    return (double)cc->inflight + len <= cc->cwnd;
}

#endif
