/* SPDX-License-Identifier: MIT */
/* libmrc private state: context, QP requester and responder halves, EV set. */
#ifndef MRC_INTERNAL_H
#define MRC_INTERNAL_H

#include <mrcfab/mrc.h>
#include <string.h>

#include "mrc_cc.h"
#include "mrc_wire.h"

#define MRC_NONE UINT32_MAX
#define MRC_MIN_QPN 16 /* 0-15 reserved; 2 is the endpoint-operation QPN */
#define MRC_MAX_PROBES 16
#define MRC_CTRL_QUEUE 64
#define MRC_CE_SLOTS 64
#define MRC_EP_SLOTS 64
#define MRC_CC_PROFILES 8
#define MRC_CC_NSCC "uet-1.0-nscc"
#define MRC_BP_RESTORE_SACKS 8 /* SACKs that carry the restore bit after a penalty */
#define MRC_TS_WRAP_NS (65536ull << MRC_TS_SHIFT)

/* xorshift128+: fast, and seeded once so that a run replays exactly. */
typedef struct mrc_rng {
    uint64_t s0, s1;
} mrc_rng;

static inline uint64_t mrc_rng_next(mrc_rng *r)
{
    uint64_t x = r->s0, y = r->s1;
    r->s0 = y;
    x ^= x << 23;
    r->s1 = x ^ y ^ (x >> 17) ^ (y >> 26);
    return r->s1 + y;
}

/* A uniform value below |n| (n > 0); the bias of the multiply-shift is below 2^-32. */
static inline uint32_t mrc_rng_below(mrc_rng *r, uint32_t n)
{
    return (uint32_t)(((mrc_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* A memory key: the generation above the slot number (1-based, so no key is 0). */
#define MR_SLOT_BITS 20
#define MR_SLOT_MASK ((1u << MR_SLOT_BITS) - 1)
#define MR_GEN_MASK 0xfffu

struct mrc_mr {
    mrc_context *ctx;
    uint8_t *addr;
    size_t len;
    unsigned access;
    uint32_t key;
    uint32_t refs; /* posted send WRs reading it */
};

typedef struct mrc_ev_profile {
    uint64_t id;
    mrc_ev *evs;
    unsigned nevs, active, min_active;
    uint32_t event_mask;
    bool used;
} mrc_ev_profile;

typedef struct mrc_cc_profile {
    uint64_t id;
    bool used;
    bool nscc; /* else "none" */
    mrc_cc_nscc_cfg cfg;
} mrc_cc_profile;

typedef struct mrc_qpcc mrc_qpcc;

/* The context's round-robin rings of QPs: those that may have data, retransmissions or
 * probes to send, and those with control packets queued. */
#define MRC_RING_DATA 0
#define MRC_RING_CTRL 1
#define MRC_RINGS 2

typedef struct mrc_ring_link {
    mrc_qp *next, *prev;
    bool in;
} mrc_ring_link;

typedef struct mrc_ring {
    mrc_qp *cur; /* whose turn it is */
    uint32_t n;
} mrc_ring;

struct mrc_cq {
    mrc_context *ctx;
    mrc_cq *prev, *next; /* the context's CQs, for mrc_context_free */
    mrc_wc *ring;
    unsigned cap, head, count;
    uint64_t overflows;
};

/* A QP's view of one EV. */
typedef struct mrc_qev {
    uint32_t val;
    uint8_t port;
    uint8_t state;   /* mrc_ev_state */
    uint8_t active;  /* in the active set */
    uint8_t probing; /* a recovery probe is out */
    uint8_t probe_ok;
    uint16_t loss;       /* moving share of its packets lost untrimmed, in 1/65536 */
    uint32_t skip_rot;   /* rotation in which SKIP began */
    uint64_t skip_until; /* SKIP also ends at this time */
    uint64_t next_probe;
    uint64_t probe_ivl;
    /* counters */
    uint64_t pkts_sent, retx_sent, acked, lost, timeouts, ecn, trims, transitions;
    uint64_t probes_sent, probes_ok, probes_lost;
    uint64_t last_rtt, min_rtt;
} mrc_qev;

/* An outstanding request packet, by PSN. */
typedef struct mrc_txp {
    uint32_t wr;     /* send-queue slot */
    uint32_t off;    /* byte offset in the message */
    uint32_t tx_seq; /* transmission number of its latest copy */
    uint16_t len;
    uint16_t evi;
    uint8_t flags;
    uint8_t attempts; /* retransmissions so far (saturating) */
    uint8_t charged;  /* those that count against the retry budget */
    uint32_t age;     /* how long the previous copy had been out when this one was sent (ns) */
    uint64_t sent;
} mrc_txp;

#define TXP_ACKED (1u << 0)
#define TXP_QUEUED (1u << 2) /* waiting in the retransmit FIFO */
#define TXP_HELD (1u << 3)   /* waiting out a resource NACK */
#define TXP_NACKED (1u << 4) /* queued by a NACK: the resend is free of the retry budget */
#define TXP_INFL (1u << 5)   /* its latest copy counts in the congestion window */
#define TXP_PORDER (1u << 6) /* found lost by path order: a spurious resend disproves it */

typedef struct mrc_swqe {
    uint64_t wr_id;
    uint64_t remote_addr;
    uint32_t rkey, imm, length;
    uint32_t msn; /* 24 bits */
    uint32_t first_psn, npkts, nsent;
    uint16_t rqmsn;
    uint8_t opcode, signaled, nsge;
    mrc_sge sge[MRC_MAX_SGE];
    mrc_mr *mr[MRC_MAX_SGE];
} mrc_swqe;

/* Why a probe was sent. */
#define PROBE_TAIL 1
#define PROBE_EV 2

typedef struct mrc_probe {
    uint16_t id;
    uint8_t kind; /* 0: free slot */
    uint16_t evi;
    uint32_t tx_seq;
    uint64_t sent;
} mrc_probe;

/* A control packet waiting to go out from the responder half. */
typedef struct mrc_ctrl {
    uint8_t op;   /* MRC_OP_SACK, MRC_OP_NACK or MRC_OP_ACK */
    uint8_t m;    /* SACK: path feedback; NACK: reason; ACK: syndrome */
    uint8_t pr;   /* SACK answers probe |probe_id| */
    uint8_t port; /* the plane the trigger came in on */
    uint16_t probe_id;
    uint16_t ts; /* reflected timestamp */
    bool has_ts;
    uint64_t arrived; /* when its trigger arrived: the reflected timestamp grows by the wait */
    uint32_t psn;     /* trigger or NACKed PSN */
    uint32_t lo, hi;  /* SACK: the lowest and highest PSN its bitmap should show */
    uint32_t ev;      /* trigger's EV */
} mrc_ctrl;

typedef struct mrc_rmsg {
    uint32_t npkts, nrcvd, len, imm;
    uint16_t rqmsn;
    uint8_t flags;
} mrc_rmsg;

#define RMSG_SEEN (1u << 0)
#define RMSG_IMM (1u << 1)
#define RMSG_RESERVED (1u << 2) /* holds a posted receive */

typedef struct mrc_ce_slot {
    uint32_t ev;
    uint16_t pkts, ce;
    uint16_t runs; /* windows in a row with a mark */
} mrc_ce_slot;

struct mrc_qp {
    mrc_context *ctx;
    uint32_t qpn;
    uint32_t state;
    mrc_qp_init_attr init;
    mrc_qp_attr attr;
    uint8_t tmpl[MRC_MAX_PORTS][MRC_BASE_LEN]; /* each port's fixed IPv6/UDP/BTH, from RTR */
    uint32_t heap_idx;
    uint64_t expiry;
    mrc_ring_link rl[MRC_RINGS];

    /* EV set */
    mrc_qev *evs;
    unsigned nevs;
    uint16_t *evmap; /* open addressing by EV value -> index + 1 */
    uint32_t evmap_mask;
    uint16_t *act, *rot;
    unsigned nact;
    /* a rotation per port: port p's active EVs are rot[rot_beg[p], rot_end[p]), those before
     * rot_pos[p] already drawn in its rotation number rot_no[p] */
    uint16_t rot_beg[MRC_MAX_PORTS], rot_end[MRC_MAX_PORTS], rot_pos[MRC_MAX_PORTS];
    uint32_t rot_no[MRC_MAX_PORTS];
    unsigned rot_next; /* the port a pick over several ports tries first */
    uint64_t draw;     /* the rotations' random state */
    bool rot_dirty;
    unsigned quota[MRC_MAX_PORTS];
    unsigned min_active;
    uint32_t event_mask;
    uint32_t remote_ports;       /* peer's ports up, from its Port Status Updates */
    uint16_t rev[MRC_MAX_PORTS]; /* reverse EV per port for control packets */
    uint64_t next_ev_probe;      /* earliest recovery probe due */
    uint64_t skip_end;           /* no SKIP outlasts this (UINT64_MAX: none) */
    uint64_t last_sent_data, last_rev_refresh;
    bool rev_urgent; /* a duplicate arrived: an answer was lost, refresh the reverse EVs soon */

    /* requester */
    mrc_swqe *sq;
    uint32_t sq_head, sq_count, sq_send; /* sq_send: WRs fully segmented, from head */
    mrc_txp *txp;
    uint32_t win;      /* W: the MPR window in PSNs */
    uint32_t txp_mask; /* ring capacity - 1 (a power of two >= W) */
    uint32_t snd_una, snd_nxt, una_slot;
    /* the send log: every transmission in send order, by slot and tx_seq; an entry is dead
     * once its slot was sent again, acknowledged or found lost, and dead entries are dropped
     * when they reach the head, which is so the oldest live transmission */
    struct mrc_txlog {
        uint32_t slot, seq;
    } * log;
    uint32_t log_mask, log_head, log_tail;
    uint32_t tx_seq, max_acked_seq;
    uint32_t sack_seen_psn;  /* of sack_seen's first bit */
    uint64_t max_acked_sent; /* send time of the latest-sent acknowledged transmission */
    /* the outstanding PSNs the last SACK read showed received: each SACK repeats most of the
     * last one's bitmap while a hole waits */
    uint64_t sack_seen;
    uint64_t reo_wnd; /* reordering window, grown by spurious retransmissions */
    uint32_t acks_since_spurious;
    bool path_order; /* the path-order rule is on: ev_in_order, until a path reorders */
    /* while a SACK is read: when its trigger's copy went out (0: unknown), and its slot */
    uint64_t sack_trig_sent;
    uint32_t sack_trig_slot;
    uint64_t reo_widened;   /* when the reordering window last grew */
    uint64_t stalled_since; /* a retransmission has waited for an EV since (0: none) */
    uint64_t min_rtt, srtt;
    uint32_t *retx;
    uint32_t retx_head, retx_count;
    uint32_t *held;
    uint64_t *held_until;
    uint32_t held_head, held_count;
    uint32_t msn_next; /* 24 bits */
    uint32_t wimm_out; /* Writes with Immediate started and not yet completed */
    uint16_t rqmsn_next;
    uint32_t ack_msn;
    uint32_t backoff;
    uint64_t backoff_hold; /* timeouts before this belong to the last back-off step */
    uint64_t rto_base, last_progress;
    uint64_t rto, arm_delay; /* from mrc_req_timing() */
    uint8_t dscp_tx[2];      /* first transmissions, retransmissions */
    mrc_qpcc *cc;            /* NULL: no congestion control */
    mrc_qp *cc_next;         /* the QPCC's other QPs */
    int64_t cc_infl;         /* this QP's share of the QPCC's bytes in flight */
    uint32_t cc_rcvd;        /* the peer's received bytes (256-byte units) last reported */
    /* per port: the middle packets' headers of the message tagged (MSN | 1 << 24) */
    uint8_t dtmpl[MRC_MAX_PORTS][MRC_BASE_LEN + MRC_METH_LEN + MRC_TSETH_LEN + MRC_RETH_LEN];
    uint32_t dtmpl_tag[MRC_MAX_PORTS];
    uint32_t dtmpl_len;
    mrc_probe probes[MRC_MAX_PROBES];
    uint16_t probe_seq;
    uint8_t probes_queued, probes_out; /* slots waiting to be sent, and sent and unanswered */
    bool tlp_out;

    /* responder */
    uint32_t rq_cap, rq_head, rq_count, rq_reserved;
    uint64_t *rq;
    uint32_t rwin; /* MPR_dest window in PSNs */
    uint32_t rcap_mask;
    uint32_t cack, rhead;
    uint32_t rmax; /* highest PSN received */
    uint64_t *bitmap;
    uint32_t ooo;
    mrc_rmsg *rmsg;
    uint32_t rmsg_mask, rmsg_head;
    uint32_t msn_done; /* 24 bits: messages complete in order */
    uint32_t wimm_stash;
    bool rq_starved;    /* an immediate found no posted receive since the last SACK */
    uint8_t bp_restore; /* SACKs still to carry the restore bit */
    uint32_t rcvd_bytes;
    uint32_t since_sack;
    mrc_ctrl ctrl[MRC_CTRL_QUEUE];
    uint32_t ctrl_head, ctrl_count;
    mrc_ce_slot ce[MRC_CE_SLOTS];
    uint64_t last_rcvd;

    mrc_qp_stats st;
};

typedef struct mrc_ep_out {
    uint16_t req_id;
    uint8_t op;    /* MRC_OP_EP_REQ or MRC_OP_EP_RSP */
    uint8_t ep_op; /* MRC_EP_OP_* */
    uint8_t port;
    uint32_t ev;
    uint32_t port_status;
    uint16_t ts;
    uint8_t dst[16];
} mrc_ep_out;

typedef struct mrc_ep_pending {
    uint16_t req_id;
    bool used;
    uint32_t ev;
    uint8_t port;
    uint64_t sent;
    bool refresh; /* a reverse-EV refresh, whose answer is the engine's, not the host's */
    mrc_qp *qp;   /* ... for this QP (NULL once the QP has gone) */
} mrc_ep_pending;

struct mrc_context {
    mrc_settings set;
    mrc_rng rng;
    mrc_qp **qps; /* by qpn - MRC_MIN_QPN */
    uint32_t nqps;
    mrc_mr **mrs;      /* by key & MR_SLOT_MASK, less one */
    uint16_t *mr_gens; /* per slot: registrations it has held */
    uint32_t mr_next;  /* where the search for a free slot starts */
    mrc_cq *cqs;
    mrc_ev_profile *evp;
    mrc_cc_profile ccp[MRC_CC_PROFILES];
    mrc_qpcc *qpccs;
    uint64_t rx_held; /* bytes its responders hold out of order */
    mrc_qp **heap;
    uint32_t heap_len;
    mrc_ring ring[MRC_RINGS];
    unsigned ctrl_run; /* control packets sent since the last data packet */
    uint32_t ports_up;
    /* endpoint operations */
    mrc_ep_out ep_out[MRC_EP_SLOTS];
    uint32_t ep_head, ep_count;
    mrc_ep_pending ep_pend[MRC_EP_SLOTS];
    uint32_t ep_pend_count;
    /* no pending probe times out before this (UINT64_MAX: none pending); an answer leaves it
     * early, the expiry handler sets it right (lib/mrc/README.md#timers-and-retries) */
    uint64_t ep_due;
    uint16_t ep_seq;
    mrc_ep_result ep_res[MRC_EP_SLOTS];
    uint32_t ep_res_head, ep_res_count;
    unsigned psu_left;
    uint64_t psu_next;
    /* EV events */
    mrc_ev_event *events;
    uint32_t ev_head, ev_count;
    mrc_ctx_stats st;
};

/* mrc_util.c */
void *mrc_alloc(mrc_context *ctx, size_t size);
void *mrc_calloc(mrc_context *ctx, size_t n, size_t size);
void mrc_dealloc(mrc_context *ctx, void *p);
uint32_t mrc_pow2(uint32_t v);
void mrc_log(mrc_context *ctx, uint64_t now, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A QP's write found something to send, but not on the ports the host has room on. */
#define MRC_BLOCKED -50

/* mrc_ctx.c: scheduling and timers shared by the QP code */
void mrc_qp_ready(mrc_qp *qp);
/* The QP has control packets to send. */
void mrc_qp_ctrl_ready(mrc_qp *qp);
void mrc_qp_unlink(mrc_qp *qp);
/* Recomputes the QP's next deadline from scratch. */
void mrc_qp_timer_update(mrc_qp *qp);
void mrc_qp_timer_set(mrc_qp *qp, uint64_t deadline);
/* Makes sure the QP wakes no later than |deadline|: per packet, so inline while it already
 * does. */
static inline void mrc_qp_timer_arm(mrc_qp *qp, uint64_t deadline)
{
    if (deadline < qp->expiry) {
        mrc_qp_timer_set(qp, deadline);
    }
}
mrc_ev_profile *mrc_evp_find(const mrc_context *ctx, uint64_t id);
void mrc_ev_event_push(mrc_context *ctx, const mrc_ev_event *e);
int mrc_ep_send(mrc_context *ctx, uint8_t ep_op, const uint8_t dst[16], uint32_t ev, unsigned port,
                mrc_qp *qp, uint64_t now, uint16_t *preq_id);
/* The QP is going: its pending reverse-EV probes are answered to no one. */
void mrc_ep_forget(mrc_context *ctx, const mrc_qp *qp);
bool mrc_cq_push(mrc_cq *cq, const mrc_wc *wc);

/* mrc_cc.c: the QP's congestion controller; every call but attach/detach/open/stats needs
 * qp->cc */
bool mrc_cc_profile_known(const mrc_context *ctx, uint64_t id);
int mrc_cc_attach(mrc_qp *qp, bool trimming, uint64_t now);
void mrc_cc_detach(mrc_qp *qp);
void mrc_cc_free_all(mrc_context *ctx);
bool mrc_cc_open(const mrc_qp *qp, uint32_t len);
bool mrc_cc_nearly_full(const mrc_qp *qp);
void mrc_cc_sent(mrc_qp *qp, uint32_t len);
/* |len| bytes sent are gone without being received (found lost, or refused for a while) */
void mrc_cc_gone(mrc_qp *qp, uint32_t len);
void mrc_cc_wake(mrc_qpcc *c);
void mrc_cc_idle(mrc_qp *qp);
void mrc_cc_on_sack(mrc_qp *qp, const mrc_sack_hdr *s, uint64_t rtt_local, uint64_t now);
void mrc_cc_on_trim(mrc_qp *qp, uint32_t len, bool lasthop, uint64_t now);
void mrc_cc_on_loss(mrc_qp *qp, uint32_t len);
void mrc_cc_stats(const mrc_qp *qp, mrc_qp_stats *st);
/* The responder's window penalty and restore bit for the SACK it is writing. */
void mrc_cc_penalty(mrc_qp *qp, uint8_t *pen, uint8_t *rc);

/* mrc_ev.c: the EV set of a QP */
int mrc_ev_setup(mrc_qp *qp, const mrc_ev_profile *p);
void mrc_ev_teardown(mrc_qp *qp);
uint32_t mrc_ev_lookup(const mrc_qp *qp, uint32_t val);
/* mrc_ev_pick() past its common case; |drawn| is the EV it drew already, or MRC_NONE. */
uint32_t mrc_ev_pick_slow(mrc_qp *qp, uint32_t port_mask, uint32_t avoid, uint32_t drawn,
                          uint64_t now);
void mrc_ev_set(mrc_qp *qp, uint32_t evi, mrc_ev_state to, mrc_ev_reason why, uint64_t now);
/* Automatic ASSUMED_BAD, refused below the min-active floor. */
void mrc_ev_bad(mrc_qp *qp, uint32_t evi, mrc_ev_reason why, uint64_t now);
/* A QP that receives but sends no data re-validates its reverse EVs with EV probes
 * (lib/mrc/README.md#reverse-evs): when that is due (UINT64_MAX: not), and doing it. */
uint64_t mrc_ev_rev_due(const mrc_qp *qp);
void mrc_ev_rev_refresh(mrc_qp *qp, uint64_t now);
/* Ends the SKIPs whose time is up (the rotation ends the others). */
void mrc_ev_skip_expire(mrc_qp *qp, uint64_t now);
/* A packet sent on the EV was found lost without a trim. */
void mrc_ev_lost(mrc_qp *qp, uint32_t evi, uint64_t now);
/* ... or was acknowledged: once per packet, so inline. */
static inline void mrc_ev_delivered(mrc_qev *e)
{
    e->acked++;
    e->loss = (uint16_t)(e->loss - (e->loss >> 5));
}
void mrc_ev_probe_result(mrc_qp *qp, uint32_t evi, bool ok, uint8_t m, uint64_t now);
/* The EV for a control packet towards the peer, leaving from |port| if it can. */
uint32_t mrc_ev_reverse(mrc_qp *qp, unsigned port);
void mrc_ev_reverse_suspect(mrc_qp *qp, unsigned port);

/* mrc_req.c: the requester half */
int mrc_req_setup(mrc_qp *qp, uint64_t now);
void mrc_req_teardown(mrc_qp *qp);
/* After the back-off, the timeout or the retry counts change. */
void mrc_req_timing(mrc_qp *qp);
int mrc_req_write(mrc_qp *qp, uint8_t *dest, size_t destlen, uint32_t port_mask, mrc_tx_info *info,
                  uint64_t now);
/* Up to |n| packets: returns how many were written (filling |pkts| in order), 0 or an error
 * as mrc_req_write for the first. */
int mrc_req_write_burst(mrc_qp *qp, mrc_tx_pkt *pkts, unsigned n, uint32_t port_mask, uint64_t now);
/* Each returns 0, or MRC_ERR_PROTO for a packet that answers nothing of ours (counted). */
int mrc_req_on_sack(mrc_qp *qp, const mrc_sack_hdr *s, uint64_t now);
int mrc_req_on_nack(mrc_qp *qp, const mrc_pkt *pkt, uint64_t now);
int mrc_req_on_ack(mrc_qp *qp, const mrc_pkt *pkt, uint64_t now);
void mrc_req_on_timer(mrc_qp *qp, uint64_t now);
uint64_t mrc_req_expiry(const mrc_qp *qp);
void mrc_req_port_lost(mrc_qp *qp, uint32_t usable_ports, uint64_t now);
void mrc_qp_fail(mrc_qp *qp, int err, uint64_t now);

/* mrc_rsp.c: the responder half */
int mrc_rsp_setup(mrc_qp *qp);
void mrc_rsp_teardown(mrc_qp *qp);
void mrc_rsp_on_data(mrc_qp *qp, const mrc_data_rx *d, const mrc_rx_info *info, bool trimmed,
                     uint64_t now);
void mrc_rsp_on_probe(mrc_qp *qp, const mrc_pkt *pkt, const mrc_rx_info *info, uint64_t now);
int mrc_rsp_write(mrc_qp *qp, uint8_t *dest, size_t destlen, uint32_t port_mask, mrc_tx_info *info,
                  uint64_t now);
void mrc_rsp_flush(mrc_qp *qp);

/* Sets the per-packet fields of an outgoing packet of |qp| with |ev|: traffic class, flow label
 * and UDP source port from the EV, the opcode, and BTH flags cleared. The fixed part comes from
 * the QP's template for the EV's port when the packet is encoded. */
void mrc_pkt_base(mrc_pkt *pkt, uint8_t opcode, uint32_t ev, uint8_t dscp, uint8_t ecn);
/* A send work request is done with its memory regions. */
void mrc_wqe_release(mrc_swqe *w);
/* Encodes the payload-less |pkt| into |dest| (over |tmpl| when given), finishes it and fills
 * |info|'s DSCP, ECN and destination; returns the length or MRC_ERR_NOBUF. */
int mrc_pkt_emit(mrc_context *ctx, uint8_t *dest, size_t destlen, const uint8_t *tmpl,
                 const mrc_pkt *pkt, mrc_tx_info *info);

static inline uint16_t mrc_ts_now(uint64_t now)
{
    return (uint16_t)(now >> MRC_TS_SHIFT);
}

/* The RTT from a reflected 16-bit timestamp, modulo its 8.39 ms wrap. */
static inline uint64_t mrc_ts_rtt(uint16_t ts, uint64_t now)
{
    return (uint64_t)(uint16_t)(mrc_ts_now(now) - ts) << MRC_TS_SHIFT;
}

/* After headers and payload (|len| bytes) are in |dest|: pad, the ICRC when it is on, then the
 * UDP checksum, which covers the ICRC (the ICRC masks the checksum, so the order is free). */
static inline size_t mrc_finish(mrc_context *ctx, uint8_t *dest, size_t destlen, size_t len)
{
    size_t n;
    if (ctx->set.icrc) {
        n = mrc_wire_finish(dest, destlen, len);
    } else {
        /* no ICRC wanted: the pad and a zero ICRC keep the packet's shape */
        size_t pad = (4 - (len & 3)) & 3;
        if (len + pad + MRC_ICRC_LEN > destlen) {
            return 0;
        }
        /* two fixed-size stores rather than a call: the pad bytes and the ICRC */
        memset(dest + len, 0, 4);
        memset(dest + len + pad, 0, 4);
        n = len + pad + MRC_ICRC_LEN;
    }
    if (n && ctx->set.udp_checksum) {
        mrc_udp6_csum_set(dest, n);
    }
    return n;
}

/* The ports a QP can use: up here and at the peer. */
static inline uint32_t mrc_ev_port_mask(const mrc_qp *qp)
{
    return qp->ctx->ports_up & qp->remote_ports;
}

static inline bool mrc_ev_usable(const mrc_qp *qp, uint32_t evi, uint32_t port_mask)
{
    const mrc_qev *e = &qp->evs[evi];
    return e->state == MRC_EV_GOOD && (mrc_ev_port_mask(qp) & port_mask & (1u << e->port));
}

/* Port |p|'s rotation's next EV: a uniform draw from the rest of it, swapped into place. */
static inline __attribute__((always_inline)) uint32_t mrc_ev_draw(mrc_qp *qp, unsigned p)
{
    uint32_t pos = qp->rot_pos[p]++;
    /* a per-QP LCG, whose high half is random enough to spray and costs a multiply */
    qp->draw = qp->draw * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t j = pos + (uint32_t)(((qp->draw >> 32) * (uint64_t)(qp->rot_end[p] - pos)) >> 32);
    uint16_t evi = qp->rot[j];
    qp->rot[j] = qp->rot[pos];
    qp->rot[pos] = evi;
    return evi;
}

/* The next EV to spray on, over ports in |port_mask|, avoiding |avoid|; MRC_NONE if none. Per
 * packet, so its common case (the next port's rotation goes on, its next EV is usable) is
 * inline. The ports of the mask take turns, and each port draws from its own rotation: one
 * rotation over all of them, drawn for whichever port was free, would spend the draws for the
 * busy ones and leave some paths twice as loaded as others. */
static inline __attribute__((always_inline)) uint32_t mrc_ev_pick(mrc_qp *qp, uint32_t port_mask,
                                                                  uint32_t avoid, uint64_t now)
{
    uint32_t evi = MRC_NONE, m = port_mask & mrc_ev_port_mask(qp);
    if (m && !qp->rot_dirty) {
        uint32_t later = m & (~0u << qp->rot_next);
        unsigned p = (unsigned)__builtin_ctz(later ? later : m);
        if (qp->rot_pos[p] < qp->rot_end[p]) {
            evi = mrc_ev_draw(qp, p);
            if (evi != avoid && qp->evs[evi].state == MRC_EV_GOOD) {
                qp->rot_next = p + 1;
                return evi;
            }
        }
    }
    return mrc_ev_pick_slow(qp, port_mask, avoid, evi, now);
}

/* The region a key names, or NULL: per data packet, so inline. */
static inline mrc_mr *mrc_mr_find(mrc_context *ctx, uint32_t key)
{
    uint32_t i = key & MR_SLOT_MASK;
    if (i == 0 || i > ctx->set.max_mrs) {
        return NULL;
    }
    mrc_mr *mr = ctx->mrs[i - 1];
    return mr && mr->key == key ? mr : NULL;
}

#endif
