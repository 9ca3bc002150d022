/* SPDX-License-Identifier: MIT */
/* libmrc: the MRC transport engine, sans-IO. Verbs-style application API plus a packet face. */
#ifndef MRCFAB_MRC_H
#define MRCFAB_MRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The engine never reads a clock, opens a socket, sleeps or allocates on the data path: the
 * host passes |now| (nanoseconds, any epoch, never decreasing) to every call, pushes received
 * packets in with mrc_read_pkt(), pulls packets to send with mrc_write_pkt(), and calls
 * mrc_handle_expiry() when mrc_get_expiry() says a timer is due. Memory is allocated only when
 * objects are created or a QP changes state, through the allocator in mrc_settings.
 *
 * MRC 1.0 has RDMA Write and RDMA Write with Immediate only: no Send, no Read, no atomics.
 */

/* Error codes. Codes at or below MRC_ERR_FATAL have put the QP into the error state. */
#define MRC_ERR_INVAL -1    /* an argument or attribute is not valid */
#define MRC_ERR_NOMEM -2    /* the allocator failed */
#define MRC_ERR_FULL -3     /* a queue (send, receive, completion) has no room */
#define MRC_ERR_STATE -4    /* not allowed in the QP's current state */
#define MRC_ERR_NOTFOUND -5 /* no such QP, profile, memory region or EV */
#define MRC_ERR_PROTO -6    /* a received packet is not valid: counted and dropped */
#define MRC_ERR_NOBUF -7    /* the caller's buffer is too small for the packet */
#define MRC_ERR_ACCESS -8   /* a local buffer is outside its memory region */
#define MRC_ERR_FATAL -100
#define MRC_ERR_RETRY_EXC -101   /* a packet was retried beyond the QP's retry counts */
#define MRC_ERR_REM_ACCESS -102  /* the responder refused the rkey, bounds or access */
#define MRC_ERR_REM_OP -103      /* the responder failed the operation (UNEXP_EVENT) */
#define MRC_ERR_REM_INV_REQ -104 /* the responder refused the request (e.g. WIMM limit) */

/* Returns a static sentence for an MRC_ERR_* code. */
const char *mrc_strerror(int err);

#define MRC_MAX_PORTS 16 /* NIC ports, one per plane */
#define MRC_MAX_SGE 4    /* scatter/gather entries per work request */
#define MRC_DEFAULT_UDP_PORT 4791

typedef struct mrc_context mrc_context;
typedef struct mrc_qp mrc_qp;
typedef struct mrc_cq mrc_cq;
typedef struct mrc_mr mrc_mr;

/* The allocator used when objects are created; never on the data path. */
typedef struct mrc_allocator {
    void *(*malloc)(size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *user;
} mrc_allocator;

/* EV states (the OCP controller API exposes GOOD, ASSUMED_BAD and DENIED). */
typedef enum mrc_ev_state {
    MRC_EV_GOOD = 0,
    MRC_EV_SKIP = 1,
    MRC_EV_ASSUMED_BAD = 2,
    MRC_EV_DENIED = 3,
} mrc_ev_state;

/* Why an EV changed state. */
typedef enum mrc_ev_reason {
    MRC_EVR_ECN = 0,     /* SACK echoed ECN-CE (SKIP_ONCE) */
    MRC_EVR_TRIM,        /* a mid-fabric trim NACK */
    MRC_EVR_ALWAYS_SKIP, /* the responder judged the path persistently congested */
    MRC_EVR_TIMEOUT,     /* a packet sent on it timed out */
    MRC_EVR_ROTATION,    /* SKIP ended with the rotation */
    MRC_EVR_PROBE_OK,    /* enough recovery probes succeeded */
    MRC_EVR_DENY,        /* the controller denied it */
    MRC_EVR_ALLOW,       /* the controller lifted the denial */
    MRC_EVR_LOSS,        /* its packets were lost, untrimmed, beyond ev_loss_pct */
} mrc_ev_reason;

/* An EV state change, as the controller API reports them. */
typedef struct mrc_ev_event {
    uint64_t time;
    uint32_t qpn;
    uint32_t ev;
    uint8_t port;
    uint8_t old_state, new_state; /* mrc_ev_state */
    uint8_t reason;               /* mrc_ev_reason */
} mrc_ev_event;

/* The result of an endpoint EV probe (mrc_ep_probe). */
typedef struct mrc_ep_result {
    uint64_t time;
    uint16_t req_id;
    uint32_t ev;
    uint8_t port;
    bool ok;         /* false: no response within ep_timeout_ns */
    uint64_t rtt_ns; /* with the responder's service time taken out */
} mrc_ep_result;

/* Callbacks; any may be NULL. They must not call back into the engine. */
typedef struct mrc_callbacks {
    /* One 64-bit seed for the engine's PRNG, asked once when the context is created. */
    uint64_t (*seed)(void *user);
    void (*ev_event)(void *user, const mrc_ev_event *event);
    void (*ep_result)(void *user, const mrc_ep_result *result);
    /* A line of diagnostics, carrying the engine's own |now|. */
    void (*log)(void *user, uint64_t now, const char *msg);
} mrc_callbacks;

/*
 * Context settings: the node and the engine's policy knobs (each documented in
 * lib/mrc/README.md with the reasoning behind its default). Start from mrc_settings_default().
 */
typedef struct mrc_settings {
    mrc_allocator alloc;
    mrc_callbacks cb;
    void *user;
    unsigned nports;                 /* ports of this node, 1..MRC_MAX_PORTS */
    uint8_t addr[MRC_MAX_PORTS][16]; /* this node's address on each port */
    uint16_t udp_port; /* MRC's UDP port (4971, as the spec prints, is also accepted) */
    uint32_t max_qps;
    uint32_t max_mrs;
    uint32_t max_ev_profiles;
    bool icrc;         /* compute and check the ICRC */
    bool udp_checksum; /* compute the UDP checksum IPv6 requires (receivers leave it to the ICRC) */
    bool tseth;        /* carry TSETH timestamps on data packets */
    /* traffic classes: DSCP values */
    uint8_t dscp_data, dscp_retx, dscp_no_trim, dscp_control, dscp_trimmed, dscp_trimmed_lasthop;
    bool trimmable; /* mark first transmissions trimmable */
    /* responder */
    unsigned sack_every;         /* SACK after this many in-order packets (1 = each) */
    unsigned always_skip_window; /* packets per EV judged for ALWAYS_SKIP */
    unsigned always_skip_pct;    /* ... and the CE share that triggers it */
    unsigned always_skip_runs;   /* ... or this many windows in a row each with a mark (0: off) */
    unsigned max_ooo_tracked;    /* out-of-order PSNs tracked before NO_BITMAP (0: window) */
    /* requester */
    bool ev_in_order;         /* an EV is one path whose data queues keep order (static uSID
                                 routes, no adaptive routing): a later first copy reported on
                                 an EV proves an earlier one that is not reported lost */
    bool ev_symmetric;        /* an EV names one path both ways (a uSID path through one T1,
                                 over cables that fail both ways): a SACK or NACK goes back by
                                 its data's EV, which just proved that path, rather than by a
                                 reverse EV (ECMP hashing is no such fabric) */
    unsigned reorder_pkts;    /* transmissions acked after a packet that make it lost */
    uint64_t reorder_ns;      /* ... sent this much later: the initial reordering window */
    unsigned tlp_pct;         /* tail-loss probe after this % of the RTO without a SACK */
    uint64_t nack_retry_ns;   /* delay before resending after a resource NACK */
    unsigned rto_backoff_max; /* cap of the exponential back-off exponent */
    /* EVs */
    uint64_t skip_max_ns; /* SKIP ends with the rotation or after this, whichever first */
    unsigned ev_loss_pct; /* untrimmed loss share (over ~32 packets) that makes an EV ASSUMED_BAD */
    uint64_t probe_interval_ns;     /* first recovery probe of an ASSUMED_BAD EV */
    uint64_t probe_interval_max_ns; /* back-off cap between recovery probes */
    unsigned probe_recover;         /* consecutive good probes that make an EV GOOD again */
    uint64_t rev_refresh_ns;        /* receive-only QPs re-validate reverse EVs this often */
    /* endpoint operations */
    uint64_t ep_timeout_ns;
    unsigned psu_repeat; /* Port Status Updates sent per change */
    uint64_t psu_interval_ns;
    unsigned ev_event_queue; /* capacity of the EV event queue */
    /* congestion control and scheduling */
    bool svc_time;         /* a responder adds how long a packet waited for its answer to the
                              timestamp it reflects (MRC_DEVICE_CAP_SVC_TIME) */
    unsigned ctrl_weight;  /* control packets sent per data packet when both wait */
    uint64_t rx_budget;    /* bytes a responder holds out of order across its QPs (0: none) */
    unsigned bp_start_pct; /* receiver pressure (%) where the window penalty starts */
} mrc_settings;

void mrc_settings_default(mrc_settings *settings);

/* Creates a context. Returns 0 or MRC_ERR_INVAL / MRC_ERR_NOMEM. */
int mrc_context_new(const mrc_settings *settings, uint64_t now, mrc_context **pctx);
/* Frees the context and everything in it (QPs, CQs, MRs, profiles). NULL is a no-op. */
void mrc_context_free(mrc_context *ctx);

/* Memory regions: |addr| is the caller's memory, borrowed until mrc_dereg_mr(). The remote
 * side addresses it by its virtual address (the pointer value) and the rkey. */
#define MRC_ACCESS_LOCAL_WRITE (1u << 0)
#define MRC_ACCESS_REMOTE_WRITE (1u << 1)
int mrc_reg_mr(mrc_context *ctx, void *addr, size_t length, unsigned access, mrc_mr **pmr);
uint32_t mrc_mr_lkey(const mrc_mr *mr);
uint32_t mrc_mr_rkey(const mrc_mr *mr);
/* Returns 0 or MRC_ERR_STATE while a posted work request still uses it. */
int mrc_dereg_mr(mrc_mr *mr);

/* An EV with the port (plane) it leaves from. */
typedef struct mrc_ev {
    uint32_t val;
    uint8_t port; /* 0-based */
} mrc_ev;

/*
 * An EV profile: the EVs a QP may spray over, |active| of them in use at once (spread
 * equally over the ports, the rest kept as backups), never fewer than |min_active| in use,
 * and which state changes go to the event queue (bit per mrc_ev_state).
 */
typedef struct mrc_ev_profile_attr {
    const mrc_ev *evs; /* copied */
    unsigned nevs;     /* up to 1024 */
    unsigned active;   /* 128-256 typical; 0: all */
    unsigned min_active;
    uint32_t event_mask;
} mrc_ev_profile_attr;

int mrc_ev_profile_create(mrc_context *ctx, uint64_t id, const mrc_ev_profile_attr *attr);

/*
 * NSCC's parameters (UEC 1.0 Table 3-82; lib/mrc/README.md#congestion-control). Only the link rate
 * and the base RTT are required: every other field left 0 takes its default, derived from them and
 * the QP's MTU as lib/mrc/README.md#congestion-control gives it (BDP = link x base RTT, a = BDP /
 * 150,000 B, b = target / 12 us). Windows are payload bytes.
 */
typedef struct mrc_cc_nscc_cfg {
    double link_gbps;         /* what one QP can send at: its ports together */
    uint64_t base_rtt_ns;     /* the longest path's unloaded round trip of an MTU packet */
    uint64_t target_delay_ns; /* 0.75 x base RTT with trimming, 1.0 x without */
    uint64_t max_cwnd;        /* 1.5 x BDP; also the initial window */
    double gamma;             /* 0.8: multiplicative decrease gain */
    double max_md_jump;       /* 0.5: the smallest factor of one decrease */
    double fi;                /* fair increase per RTT: 5 x MTU x a */
    double fi_scale;          /* fast increase, of the bytes acknowledged: 0.25 x a */
    double eta;               /* added once per adjust period: 0.15 x MTU x a */
    unsigned qa_gate;         /* 3: quick adapt only below max_cwnd >> qa_gate achieved */
    uint64_t qa_threshold_ns; /* delay that triggers quick adapt: none with trimming, 4 x target */
    bool disable_qa;
    uint64_t adjust_bytes;     /* 8 x MTU */
    uint64_t adjust_period_ns; /* the base RTT */
    uint64_t fi_delay_ns;      /* queueing delay that counts as none, for fast increase: 1 us */
    double delay_gain;         /* 0.0125: weight of a sample in the average delay */
} mrc_cc_nscc_cfg;

/* A congestion-control profile: "none" (the MPR window alone) or "uet-1.0-nscc". */
typedef struct mrc_cc_profile_attr {
    const char *algorithm;
    mrc_cc_nscc_cfg nscc;
} mrc_cc_profile_attr;

int mrc_cc_profile_create(mrc_context *ctx, uint64_t id, const mrc_cc_profile_attr *attr);
/* The parameters |cfg| comes to on a QP of |mtu| (with or without trimming): every field
 * its default took, as the engine will use them, into |out|. 0 or MRC_ERR_INVAL. */
int mrc_cc_nscc_resolve(const mrc_cc_nscc_cfg *cfg, uint32_t mtu, bool trimming,
                        mrc_cc_nscc_cfg *out);

/* Completions. */
typedef enum mrc_wc_status {
    MRC_WC_SUCCESS = 0,
    MRC_WC_RETRY_EXC_ERR,
    MRC_WC_REM_ACCESS_ERR,
    MRC_WC_REM_OP_ERR,
    MRC_WC_REM_INV_REQ_ERR,
    MRC_WC_LOC_PROT_ERR,
    MRC_WC_WR_FLUSH_ERR,
} mrc_wc_status;

typedef enum mrc_wc_opcode {
    MRC_WC_RDMA_WRITE = 0,
    MRC_WC_RECV_RDMA_WITH_IMM,
} mrc_wc_opcode;

typedef struct mrc_wc {
    uint64_t wr_id;
    uint32_t status; /* mrc_wc_status */
    uint32_t opcode; /* mrc_wc_opcode */
    uint32_t qp_num;
    uint32_t byte_len; /* RECV_RDMA_WITH_IMM: the message length */
    uint32_t imm_data;
} mrc_wc;

int mrc_cq_new(mrc_context *ctx, unsigned cqe, mrc_cq **pcq);
void mrc_cq_free(mrc_cq *cq);
/* Takes up to |n| completions, oldest first; returns how many. */
int mrc_poll_cq(mrc_cq *cq, int n, mrc_wc *wc);

/* QP states and attributes. */
typedef enum mrc_qp_state {
    MRC_QPS_RESET = 0,
    MRC_QPS_INIT,
    MRC_QPS_RTR,
    MRC_QPS_RTS,
    MRC_QPS_ERR,
} mrc_qp_state;

typedef struct mrc_qp_init_attr {
    mrc_cq *send_cq, *recv_cq;
    uint32_t max_send_wr, max_recv_wr;
    uint32_t max_send_sge; /* up to MRC_MAX_SGE */
    bool sq_sig_all;
    void *qp_context;
} mrc_qp_init_attr;

/* The peer: per port, this node's and the peer's address (the inner IPv6 header's). */
typedef struct mrc_ah {
    unsigned nports;
    uint8_t sgid[MRC_MAX_PORTS][16];
    uint8_t dgid[MRC_MAX_PORTS][16];
} mrc_ah;

#define MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED (1u << 0)
#define MRC_QP_CAP_DYNAMIC_MPR (1u << 1)
#define MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED (1u << 2)
#define MRC_QP_CAP_HOST_BP_DISABLE (1u << 3) /* this responder sends no window penalty */

/* The largest path MTU (256 .. 8192, a power of two) whose data packets, with every header
 * MRC may put on them, pad and ICRC, and |encap| bytes of encapsulation in front (40 for
 * SRv6's outer IPv6 header), fit a link of |link_mtu| bytes (the interface's MTU, which counts
 * the IP header); 0 when not even 256 fits. RoCE picks its MTU from the interface the same way. */
uint32_t mrc_path_mtu_fit(uint32_t link_mtu, uint32_t encap);

typedef struct mrc_qp_attr {
    mrc_qp_state qp_state;
    uint32_t dest_qp_num;
    uint32_t sq_psn, rq_psn; /* 24 bits */
    uint32_t path_mtu;       /* payload bytes per packet: 256 .. 8192, a power of two */
    unsigned access_flags;   /* MRC_ACCESS_REMOTE_WRITE to accept writes */
    mrc_ah ah;
    struct {
        uint8_t mpr, mpr_dest; /* window in 128-PSN units: requestor's, responder's */
    } mpr;
    struct {
        uint16_t max_wimm, max_wimm_dest;
    } wimm;
    uint8_t timeout; /* local ACK timeout: 1.024 us x 2^timeout, 1..24 */
    struct {
        uint64_t ev_profile_id, cc_profile_id;
    } profile;
    struct {
        uint8_t linear_cnt; /* 0..7 retries at the base timeout */
        uint8_t exp_cnt;    /* 0..25 retries with exponential back-off; 25: unlimited */
    } retry;
    uint32_t cap; /* MRC_QP_CAP_* */
} mrc_qp_attr;

/* Attribute mask bits for mrc_modify_qp. */
#define MRC_QP_STATE (1u << 0)
#define MRC_QP_DEST_QPN (1u << 1)
#define MRC_QP_SQ_PSN (1u << 2)
#define MRC_QP_RQ_PSN (1u << 3)
#define MRC_QP_PATH_MTU (1u << 4)
#define MRC_QP_ACCESS_FLAGS (1u << 5)
#define MRC_QP_AV (1u << 6)
#define MRC_QP_MPR (1u << 7)
#define MRC_QP_MPR_DEST (1u << 8)
#define MRC_QP_MAX_WIMM (1u << 9)
#define MRC_QP_MAX_WIMM_DEST (1u << 10)
#define MRC_QP_TIMEOUT (1u << 11)
#define MRC_QP_EV_PROFILE_ID (1u << 12)
#define MRC_QP_CC_PROFILE_ID (1u << 13)
#define MRC_QP_RETRY_CNT (1u << 14)
#define MRC_QP_CAP (1u << 15)

/* Creates a QP in RESET. Returns 0, MRC_ERR_INVAL, MRC_ERR_FULL (max_qps) or MRC_ERR_NOMEM. */
int mrc_qp_new(mrc_context *ctx, const mrc_qp_init_attr *attr, mrc_qp **pqp);
void mrc_qp_free(mrc_qp *qp);
uint32_t mrc_qp_num(const mrc_qp *qp);
void *mrc_qp_context(const mrc_qp *qp);
/*
 * Moves the QP along RESET -> INIT -> RTR -> RTS (any state -> ERR or RESET). Needs for
 * INIT: EV_PROFILE_ID, CC_PROFILE_ID; RTR: DEST_QPN, RQ_PSN, PATH_MTU, AV, MPR_DEST,
 * MAX_WIMM_DEST; RTS: SQ_PSN, MPR, MAX_WIMM, TIMEOUT, RETRY_CNT. Returns 0, MRC_ERR_INVAL
 * (a missing or out-of-range attribute), MRC_ERR_STATE or MRC_ERR_NOMEM.
 */
int mrc_modify_qp(mrc_qp *qp, const mrc_qp_attr *attr, uint32_t mask, uint64_t now);
int mrc_query_qp(const mrc_qp *qp, mrc_qp_attr *attr);

/* Work requests. */
typedef struct mrc_sge {
    uint64_t addr; /* a pointer into a memory region */
    uint32_t length;
    uint32_t lkey;
} mrc_sge;

typedef enum mrc_wr_opcode {
    MRC_WR_RDMA_WRITE = 0,
    MRC_WR_RDMA_WRITE_WITH_IMM,
} mrc_wr_opcode;

#define MRC_SEND_SIGNALED (1u << 0)

typedef struct mrc_send_wr {
    uint64_t wr_id;
    mrc_wr_opcode opcode;
    unsigned send_flags;
    const mrc_sge *sg_list; /* copied */
    unsigned num_sge;
    uint64_t remote_addr;
    uint32_t rkey;
    uint32_t imm_data;
} mrc_send_wr;

typedef struct mrc_recv_wr {
    uint64_t wr_id;
} mrc_recv_wr;

/* Queues a write. Returns 0, MRC_ERR_STATE (not RTS), MRC_ERR_FULL, MRC_ERR_INVAL or
 * MRC_ERR_ACCESS (a buffer outside its region). */
int mrc_post_send(mrc_qp *qp, const mrc_send_wr *wr, uint64_t now);
/* Posts a receive for one Write-with-Immediate completion (MRC has no RNR: post ahead). */
int mrc_post_recv(mrc_qp *qp, const mrc_recv_wr *wr);

/* ECN codepoints of the IPv6 traffic class's low two bits. */
#define MRC_ECN_NOT_ECT 0
#define MRC_ECN_ECT1 1
#define MRC_ECN_ECT0 2
#define MRC_ECN_CE 3

/* What the host knows of a received packet beyond its bytes. */
typedef struct mrc_rx_info {
    uint8_t port;   /* the port it arrived on */
    uint8_t ecn;    /* of the outer header in SRv6 mode (switches mark that one) */
    uint8_t dscp;   /* likewise: a trimming switch re-marks it */
    unsigned flags; /* MRC_RX_* */
} mrc_rx_info;

#define MRC_RX_NOBUF (1u << 0) /* the host had no buffer for the payload: NACK NO_PKT_BUFFER */

/*
 * Pushes in one received packet: the inner IPv6 packet (IPv6, UDP, BTH, ... ICRC). |info| may
 * be NULL: then the inner header's ECN and DSCP count. Returns 0, or MRC_ERR_PROTO when the
 * packet is garbage, for a QP this context does not have, or not valid in its state: it is
 * counted and changes nothing.
 */
int mrc_read_pkt(mrc_context *ctx, const uint8_t *data, size_t datalen, const mrc_rx_info *info,
                 uint64_t now);

/* Where a packet written by mrc_write_pkt must go. */
typedef struct mrc_tx_info {
    uint32_t ev;  /* its EV: the host maps it to an outer address (SRv6) or sends as is */
    uint8_t port; /* the port to leave from */
    uint8_t dscp;
    uint8_t ecn;
    bool control;    /* SACK, NACK, ACK or endpoint response: the control class */
    uint32_t qpn;    /* the sending QP, 0 for endpoint operations */
    uint8_t dst[16]; /* the inner destination address (the peer's port address) */
} mrc_tx_info;

/*
 * Pulls the next packet to send into |dest| (room for path MTU + 128 bytes suffices), on a
 * port in |port_mask| (bit p: port p has room). Returns its length, 0 when nothing is due,
 * or MRC_ERR_NOBUF.
 */
int mrc_write_pkt(mrc_context *ctx, uint8_t *dest, size_t destlen, uint32_t port_mask,
                  mrc_tx_info *info, uint64_t now);
/*
 * The burst forms, as a NIC driver or a recvmmsg/sendmmsg loop uses them: the same as
 * mrc_read_pkt() or mrc_write_pkt() for each packet in turn, for less work per packet. Acks
 * to a burst read are coalesced until the next write (as with interrupt moderation).
 * mrc_read_pkts() returns how many packets were accepted (the rest are counted as with
 * mrc_read_pkt); mrc_write_pkts() fills |pkts| in order and returns how many it wrote (0 when
 * nothing is due), or MRC_ERR_NOBUF when the first has no room.
 */
typedef struct mrc_rx_pkt {
    const uint8_t *data;
    size_t len;
    mrc_rx_info info;
} mrc_rx_pkt;

typedef struct mrc_tx_pkt {
    uint8_t *data; /* in: where the packet goes */
    size_t room;   /* in: how much fits there */
    size_t len;    /* out */
    mrc_tx_info info;
} mrc_tx_pkt;

int mrc_read_pkts(mrc_context *ctx, const mrc_rx_pkt *pkts, unsigned n, uint64_t now);
int mrc_write_pkts(mrc_context *ctx, mrc_tx_pkt *pkts, unsigned n, uint32_t port_mask,
                   uint64_t now);

/* When the engine next needs mrc_handle_expiry(); UINT64_MAX when never. */
uint64_t mrc_get_expiry(const mrc_context *ctx);
int mrc_handle_expiry(mrc_context *ctx, uint64_t now);

/* Local port state: a port going down moves its EVs' traffic to the other ports and tells
 * every peer with a Port Status Update; coming back restores them. */
int mrc_port_set_state(mrc_context *ctx, unsigned port, bool up, uint64_t now);
uint32_t mrc_port_mask(const mrc_context *ctx);

/* Sends an endpoint EV probe to the node at |dst| (its address on |port|) over |ev|; the
 * result comes through the ep_result callback and mrc_poll_ep_results. Returns 0 and the
 * request id, or MRC_ERR_FULL when too many probes are outstanding. */
int mrc_ep_probe(mrc_context *ctx, const uint8_t dst[16], uint32_t ev, unsigned port, uint64_t now,
                 uint16_t *preq_id);
int mrc_poll_ep_results(mrc_context *ctx, mrc_ep_result *results, int n);

/* The controller's denial: DENIED takes the EV out of use on this QP until set GOOD again. */
int mrc_qp_ev_set_state(mrc_qp *qp, uint32_t ev, mrc_ev_state state, uint64_t now);

/* Takes up to |n| EV events, oldest first; returns how many. */
int mrc_poll_ev_events(mrc_context *ctx, mrc_ev_event *events, int n);

/* Statistics: plain counters the caller reads. */
#define MRC_NACK_REASONS                                                                           \
    7 /* TRIMMED, TRIMMED_LASTHOP, NO_BITMAP, NO_PKT_BUFFER, NO_RESOURCE,                          \
         PSN_OOR_WINDOW, UNEXP_EVENT */
/* The index of a NACK reason code in the per-reason arrays, or -1. */
int mrc_nack_index(uint8_t reason);
uint8_t mrc_nack_code(int index);
const char *mrc_nack_name(int index);

typedef enum mrc_retx_cause {
    MRC_RETX_TIMEOUT = 0,
    MRC_RETX_NACK,
    MRC_RETX_INFERRED, /* holes a later SACK showed */
    MRC_RETX_PROBE,    /* a tail-loss probe's answer showed */
    MRC_RETX_PORT,     /* its port or the peer's went down */
    MRC_RETX_CAUSES,
} mrc_retx_cause;

typedef struct mrc_qp_stats {
    uint64_t data_pkts_sent, data_bytes_sent;
    uint64_t retx_pkts, retx_bytes, retx_by_cause[MRC_RETX_CAUSES];
    uint64_t retx_spurious; /* resends an acknowledgement of the copy before showed needless */
    bool path_order_off;    /* a path reordered within an EV: the path-order rule stopped */
    uint64_t sacks_sent, sacks_rcvd, acks_sent, acks_rcvd;
    uint64_t nacks_sent[MRC_NACK_REASONS], nacks_rcvd[MRC_NACK_REASONS];
    uint64_t timeouts, ecn_echoes, always_skips;
    uint64_t probes_sent, probes_answered, probes_rcvd;
    uint64_t rev_refreshes; /* EV probes sent to re-validate a reverse EV */
    uint64_t data_pkts_rcvd, data_bytes_rcvd, dup_pkts_rcvd;
    uint64_t msgs_sent_done, msgs_rcvd_done;
    uint64_t ev_transitions[4][4]; /* [from][to] mrc_ev_state */
    uint64_t floor_hits;           /* ASSUMED_BAD refused to keep min_active EVs */
    uint32_t ev_count[4];          /* EVs now in each state */
    uint64_t srtt_ns, min_rtt_ns, reo_wnd_ns, rto_ns; /* the loss detector's view now */
    uint32_t inflight_pkts;
    uint32_t state; /* mrc_qp_state */
    /* congestion control: the QP's controller (QPCC), shared by its QPs to the same peer */
    uint32_t cc_state;       /* mrc_qpcc_state of this QP */
    uint64_t cwnd, max_cwnd; /* bytes (UINT64_MAX: no congestion control) */
    int64_t cc_inflight;     /* bytes, signed: driven by the SACKs' received bytes */
    uint64_t base_rtt_ns, avg_delay_ns;
    uint64_t cc_md, cc_qa, cc_fast; /* multiplicative decreases, quick adapts, fast increases */
    uint64_t cc_pen;                /* SACKs whose window penalty cut the window */
    uint64_t ackreq_sent;           /* data packets asking for a SACK: the window nearly full */
    uint64_t pen_sent;              /* SACKs this responder sent with a window penalty */
} mrc_qp_stats;

/* A QP's scheduling state (lib/mrc/README.md#congestion-control). */
typedef enum mrc_qpcc_state {
    MRC_QPCC_IDLE = 0, /* nothing to send, nothing in flight */
    MRC_QPCC_ACTIVE,   /* data waiting, the window closed */
    MRC_QPCC_READY,    /* data waiting, the window open: in the round robin */
    MRC_QPCC_PENDING,  /* in flight, nothing new to send */
} mrc_qpcc_state;

int mrc_qp_get_stats(const mrc_qp *qp, mrc_qp_stats *stats);

typedef struct mrc_ev_stats {
    uint32_t ev;
    uint8_t port;
    uint8_t state; /* mrc_ev_state */
    bool active;   /* in the active set (else a backup) */
    uint64_t pkts_sent, retx_sent, acked;
    uint64_t lost; /* transmissions on it found lost untrimmed by later acknowledgements or a
                      tail probe's answer; a timeout counts in |timeouts| instead */
    uint64_t timeouts, ecn, trims, transitions;
    uint64_t probes_sent, probes_ok, probes_lost;
    uint64_t last_rtt_ns, min_rtt_ns;
} mrc_ev_stats;

unsigned mrc_qp_ev_count(const mrc_qp *qp);
int mrc_qp_get_ev_stats(const mrc_qp *qp, unsigned index, mrc_ev_stats *stats);

typedef struct mrc_ctx_stats {
    uint64_t pkts_rcvd, pkts_sent;
    uint64_t garbage;           /* failed to decode */
    uint64_t garbage_by_err[8]; /* by wire fault: short, ip, port, opcode, pad, icrc, field */
    uint64_t no_qp;             /* for a QP number we do not have */
    uint64_t bad_state;         /* for a QP not ready for it */
    uint64_t ep_reqs_rcvd, ep_rsps_rcvd, ep_timeouts, psu_sent, psu_rcvd;
    uint64_t ev_events_dropped;
} mrc_ctx_stats;

void mrc_ctx_get_stats(const mrc_context *ctx, mrc_ctx_stats *stats);

/*
 * A packet's headers as the receive path reads them, for tools that look at MRC traffic
 * (capture decoders, tests): mrc_packet_decode() runs the engine's own decoder with the checks
 * mrc_read_pkt() makes. Field names are the headers' (tests/vectors/README.md#layouts); multi-byte
 * fields are in host order; fields narrower than their type say so.
 */
#define MRC_ALT_UDP_PORT 4971 /* the port the MRC 1.0 PDF prints, accepted besides udp_port */

typedef struct mrc_packet_ip6 {
    uint8_t tc;         /* DSCP << 2 | ECN */
    uint32_t flowlabel; /* 20 bits */
    uint16_t plen;
    uint8_t nxt;
    uint8_t hlim;
    uint8_t src[16];
    uint8_t dst[16];
} mrc_packet_ip6;

typedef struct mrc_packet_udp {
    uint16_t sport, dport, len, csum;
} mrc_packet_udp;

typedef struct mrc_packet_bth {
    uint8_t opcode;
    bool se, mig;
    uint8_t padcnt, tver;
    uint16_t pkey;
    uint8_t resv8a;
    uint32_t dqpn; /* 24 bits */
    bool ackreq, rtx, ts;
    uint32_t psn; /* 24 bits */
} mrc_packet_bth;

typedef struct mrc_packet_meth {
    uint16_t rqmsn, msn;
} mrc_packet_meth;

/* TSETH, and the timestamp block of PETH and ERTH: 16 bits of 128 ns ticks. */
typedef struct mrc_packet_tseth {
    uint16_t ts;
    uint8_t tsr;
    uint8_t fmt;
} mrc_packet_tseth;

typedef struct mrc_packet_reth {
    uint64_t va;
    uint32_t rkey;
    uint32_t dmalen;
} mrc_packet_reth;

typedef struct mrc_packet_aeth {
    uint8_t syndrome;
    uint32_t msn; /* 24 bits */
} mrc_packet_aeth;

typedef struct mrc_packet_seth {
    uint8_t m;  /* path feedback: 0 none, 1 SKIP_ONCE, 2 ALWAYS_SKIP */
    uint8_t pr; /* 1: answers a reliability probe, whose id ack_psn_offset holds */
    int16_t ack_psn_offset;
    uint32_t entropy;
    uint16_t spdcid, dpdcid;
    uint32_t cack_psn; /* 24 bits */
    uint8_t cc_type, cc_flags;
    uint8_t mpr; /* in 128-PSN units, 0: ignore */
    int16_t sack_offset;
    uint64_t bitmap; /* bit i: PSN cack_psn + sack_offset + i received */
} mrc_packet_seth;

/* A SACK's CC_STATE. */
typedef struct mrc_packet_ccstate {
    uint16_t ts;         /* the reflected transmit timestamp */
    uint16_t ooo_count;  /* 15 bits */
    uint8_t rc;          /* restore the window */
    uint8_t pen;         /* window penalty, 0..127 */
    uint32_t rcvd_bytes; /* 24 bits, 256-byte units */
} mrc_packet_ccstate;

typedef struct mrc_packet_neth {
    uint8_t reason, vendor; /* reason: the UET PDS code (mrc_nack_index) */
    uint32_t entropy;
    uint16_t spdcid, dpdcid;
    uint32_t nack_psn; /* 24 bits */
    uint8_t cc_type, cc_flags;
    uint16_t ts;
} mrc_packet_neth;

typedef struct mrc_packet_peth {
    uint8_t vendor;
    uint16_t probe_id;
    uint16_t spdcid, dpdcid;
    mrc_packet_tseth ts;
} mrc_packet_peth;

typedef struct mrc_packet_erth {
    uint8_t op; /* 0 Port Status Update, 1 EV Probe */
    uint8_t vendor;
    uint32_t port_status; /* bit N-1: port N is up (1-based ports) */
    mrc_packet_tseth ts;
} mrc_packet_erth;

/* EETH, as lib/mrc/README.md lays it out where the readings disagree. */
typedef struct mrc_packet_eeth {
    uint8_t op;           /* byte 1 bits 3:2 */
    uint32_t entropy;     /* bytes 4-7: the request's EV, echoed */
    uint32_t svc_time_ns; /* bytes 8-11: the responder's service time */
    uint16_t ts;          /* bytes 28-29: the reflected transmit timestamp */
} mrc_packet_eeth;

/* Which headers a decoded packet has (mrc_packet.has); the members of the others read 0. */
#define MRC_PACKET_HAS_METH (1u << 0)
#define MRC_PACKET_HAS_TSETH (1u << 1)
#define MRC_PACKET_HAS_RETH (1u << 2)
#define MRC_PACKET_HAS_IMM (1u << 3)
#define MRC_PACKET_HAS_AETH (1u << 4)
#define MRC_PACKET_HAS_SETH (1u << 5) /* with its CC_STATE, |cc| */
#define MRC_PACKET_HAS_NETH (1u << 6)
#define MRC_PACKET_HAS_PETH (1u << 7)
#define MRC_PACKET_HAS_ERTH (1u << 8)
#define MRC_PACKET_HAS_EETH (1u << 9)
#define MRC_PACKET_HAS_OUTER (1u << 10) /* SRv6 mode's outer IPv6 header came first */

typedef struct mrc_packet {
    uint32_t has; /* MRC_PACKET_HAS_* */
    mrc_packet_ip6 outer;
    mrc_packet_ip6 inner; /* the MRC packet's own IPv6 header, which its ICRC covers */
    mrc_packet_udp udp;
    mrc_packet_bth bth;
    mrc_packet_meth meth;
    mrc_packet_tseth tseth;
    mrc_packet_reth reth;
    uint32_t imm;
    mrc_packet_aeth aeth;
    mrc_packet_seth seth;
    mrc_packet_ccstate cc;
    mrc_packet_neth neth;
    mrc_packet_peth peth;
    mrc_packet_erth erth;
    mrc_packet_eeth eeth;
    uint32_t ev;            /* the EV as the engine reads it: inner flow label[15:0] << 16 |
                               UDP source port (the outer flow label is the sender's copy) */
    const uint8_t *payload; /* a data packet's payload without pad bytes, in the caller's
                               |data|; never NULL */
    size_t payload_len;     /* of it: as much as arrived of a trimmed packet */
    bool marked_trimmed;    /* the DSCP of its first header (the outer one in SRv6 mode) is
                               dscp_trimmed or dscp_trimmed_lasthop: the engine NACKs such a
                               data packet as trimmed, whatever its length */
    bool trimmed;           /* marked so, and shorter than its lengths say */
} mrc_packet;

/* The faults of a received packet (mrc_packet_decode), a code space of their own (not
 * MRC_ERR_*). mrc_read_pkt() drops a packet for fault -N (1..7) and counts it in
 * mrc_ctx_stats.garbage_by_err[N]; one that is not IPv6/UDP counts there as ESHORT or EIP. */
#define MRC_PACKET_ESHORT -1  /* shorter than its headers, or than its lengths unless marked */
#define MRC_PACKET_EIP -2     /* IPv6 and UDP lengths that disagree with it or each other */
#define MRC_PACKET_EPORT -3   /* UDP to a port other than udp_port and MRC_ALT_UDP_PORT */
#define MRC_PACKET_EOPCODE -4 /* not an MRC opcode, or BTH TVer not 0 */
#define MRC_PACKET_EPAD -5    /* pad count beyond the payload, or a payload not 4-aligned */
#define MRC_PACKET_EICRC -6   /* ICRC mismatch */
#define MRC_PACKET_EFIELD -7  /* a header field with a value no MRC packet has */
/* not IPv6 carrying UDP, bare or inside IPv6 (next header 41), or too short for the UDP header */
#define MRC_PACKET_ENOTUDP -8

/*
 * Decodes |data| (|datalen| bytes), an IPv6 packet as it arrives at a host: in SRv6 mode the
 * outer IPv6 header (next header 41) and the MRC packet inside, in UDP mode the MRC packet
 * alone (IPv6, UDP, BTH, MRC headers, payload, ICRC). It is read as mrc_read_pkt() reads a
 * packet on a context created with |settings|, of which it uses udp_port (and
 * MRC_ALT_UDP_PORT), icrc (whether the ICRC is checked), dscp_trimmed and
 * dscp_trimmed_lasthop: only a packet whose first header carries one of those DSCPs may end
 * before its lengths say. |datalen| is the IPv6 packet's, without link-layer padding.
 * MRC_PACKET_ENOTUDP and MRC_PACKET_EPORT say the packet is no MRC traffic at all. Borrows
 * |data|, which pkt->payload points into, and fills |pkt| (zeroed first, also on failure).
 * Returns 0 or one of: MRC_PACKET_ENOTUDP, MRC_PACKET_EPORT (both checked first), then the
 * first fault the receive path finds: MRC_PACKET_ESHORT, MRC_PACKET_EIP, MRC_PACKET_EOPCODE,
 * MRC_PACKET_EPAD, MRC_PACKET_EICRC, MRC_PACKET_EFIELD.
 */
int mrc_packet_decode(const mrc_settings *settings, const uint8_t *data, size_t datalen,
                      mrc_packet *pkt);
/* Returns a static sentence for an MRC_PACKET_E* code (and "success" for 0). */
const char *mrc_packet_strerror(int err);

/*
 * The UDP checksum of the IPv6 packet at |pkt| (|len| bytes, its IPv6 header first, UDP next,
 * as the UDP header's length says), which IPv6 makes mandatory (RFC 8200 §8.1): the engine
 * writes it on every packet when settings.udp_checksum is on (the default).
 * mrc_udp6_csum_set() writes it (0 goes out as 0xffff); returns 0, or MRC_ERR_INVAL when the
 * packet is no UDP in IPv6 or shorter than its UDP length. mrc_udp6_csum_ok() says whether
 * such a packet's checksum is present and right.
 */
int mrc_udp6_csum_set(uint8_t *pkt, size_t len);
bool mrc_udp6_csum_ok(const uint8_t *pkt, size_t len);

#ifdef __cplusplus
}
#endif

#endif
