/* SPDX-License-Identifier: MIT */
/* The RoCEv2 RC baseline: one end of a reliable connection with go-back-N recovery and optional
 * DCQCN, in the same sans-IO shape as libmrc. The simulator carries its packets as structs
 * (sim_roce_pkt) and charges them their wire size; there are no bytes to build. */
#ifndef SIM_ROCE_H
#define SIM_ROCE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_scenario.h"

/* Wire sizes: IPv6 + UDP + BTH (+ RETH on the first packet of a message, counted on all) +
 * ICRC for data; ACK, NAK and CNP are small. */
#define SIM_ROCE_DATA_HDR 80u
#define SIM_ROCE_CTRL_LEN 64u

/* Receive completions one end holds until polled (sim_roce_poll). */
#define SIM_ROCE_RECV_CQ 256u

typedef enum sim_roce_kind {
    SIM_ROCE_DATA = 0,
    SIM_ROCE_ACK, /* cumulative: every PSN below |psn| received */
    SIM_ROCE_NAK, /* sequence error: |psn| is the one expected; resend from it */
    SIM_ROCE_CNP, /* congestion notification (DCQCN) */
} sim_roce_kind;

typedef struct sim_roce_pkt {
    uint8_t kind;    /* sim_roce_kind */
    bool ce;         /* DATA: ECN-CE, set by the fabric */
    bool last;       /* DATA: the last packet of its message */
    uint32_t dst_qp; /* the receiving end's id */
    uint32_t psn;    /* 24 bits */
    uint32_t len;    /* DATA: payload bytes */
    uint64_t cookie; /* DATA: its message's cookie, for the receiver's completion */
} sim_roce_pkt;

/* A completed message: on the sender once every packet is acknowledged, on the receiver once
 * every packet arrived, in posting order. */
typedef struct sim_roce_done {
    uint64_t cookie; /* the sender's, echoed on both sides */
    uint64_t bytes;
    bool recv; /* the receiving side's completion */
} sim_roce_done;

typedef struct sim_roce_stats {
    uint64_t data_pkts_sent, data_bytes_sent, retx_pkts; /* packets and payload bytes, resent
                                                            ones included; retx: resent ones */
    uint64_t acks_sent, naks_sent, cnps_sent;
    uint64_t acks_rcvd, naks_rcvd, cnps_rcvd;
    uint64_t data_pkts_rcvd, out_of_order_dropped, dup_rcvd; /* rcvd: every arrival */
    uint64_t cq_full_dropped; /* in-order last packets refused: the receive CQ was full */
    uint64_t timeouts;
    uint64_t rate_decreases; /* CNPs acted on */
    double rate_gbps;        /* DCQCN's current rate (the line rate without DCQCN) */
    double target_gbps;      /* DCQCN's target rate */
    double alpha;            /* DCQCN's alpha */
} sim_roce_stats;

typedef struct sim_roce_qp sim_roce_qp;

/*
 * One end of a connection, sending and receiving, with id |id| and peer |peer| (the ids the
 * packets carry in dst_qp), on a port of |line_gbps|. Copies |cfg|. The first PSN of each
 * direction is drawn from the pair of ids (as a NIC draws it at random), so both ends agree
 * and some connections cross the 24-bit wrap. Returns NULL when out of memory or when |cfg|
 * cannot work (mtu 0, |line_gbps| not positive).
 */
sim_roce_qp *sim_roce_qp_new(const sim_roce_cfg *cfg, double line_gbps, uint32_t id, uint32_t peer,
                             uint64_t now_ps);
void sim_roce_qp_free(sim_roce_qp *qp);

/* Sets the first PSN this end sends (|send_psn|) and the first it expects (|recv_psn|), 24
 * bits each, in place of the drawn ones: for tests. Returns 0, or -1 once a message was posted
 * or a packet moved. */
int sim_roce_qp_set_psn(sim_roce_qp *qp, uint32_t send_psn, uint32_t recv_psn);

/* Queues a message of |bytes| (an RDMA Write; 0 is one empty packet). Returns 0, or -1 once
 * the QP has failed, when out of memory, or when the messages posted and not yet acknowledged
 * would span 2^23 PSNs (half the PSN space: 32 GiB at a 4 KiB MTU). */
int sim_roce_post(sim_roce_qp *qp, uint64_t bytes, uint64_t cookie, uint64_t now_ps);

/*
 * The next packet this end sends at |now|: data paced at the current rate (the line rate
 * without DCQCN), and its ACKs, NAKs and CNPs, which go first and unpaced. Returns 1 with |out|
 * filled, 0 when nothing may go now (sim_roce_next_tx says when), -1 once failed.
 */
int sim_roce_write(sim_roce_qp *qp, uint64_t now_ps, sim_roce_pkt *out);
/* The earliest time sim_roce_write may return a packet: 0 when an ACK, NAK or CNP waits,
 * SIM_NEVER when it has nothing (or failed). */
uint64_t sim_roce_next_tx(const sim_roce_qp *qp);

/* Takes in a packet for this end (ignored if |in|->dst_qp is not this end's id, or failed). */
void sim_roce_read(sim_roce_qp *qp, const sim_roce_pkt *in, uint64_t now_ps);

/* Timers: the retransmission timeout and DCQCN's (only while this end has data posted and not
 * acknowledged; an idle end says SIM_NEVER and catches DCQCN up on its next call). */
uint64_t sim_roce_expiry(const sim_roce_qp *qp);
void sim_roce_on_timer(sim_roce_qp *qp, uint64_t now_ps);

/* The next completion, both sides in the order they happened: returns 1 with |out| filled, 0
 * when there is none. The receiving side holds SIM_ROCE_RECV_CQ completions; a message's
 * last packet that finds it full is refused (dropped, as an RNR) until a poll makes room. */
int sim_roce_poll(sim_roce_qp *qp, sim_roce_done *out);

/* Failed after |retry| timeouts in a row without progress. */
bool sim_roce_failed(const sim_roce_qp *qp);
const sim_roce_stats *sim_roce_get_stats(const sim_roce_qp *qp);

#endif
