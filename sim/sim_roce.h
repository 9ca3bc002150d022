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
    uint32_t psn;
    uint32_t len; /* DATA: payload bytes */
} sim_roce_pkt;

/* A completed message: on the sender once every packet is acknowledged, on the receiver once
 * every packet arrived, in posting order. */
typedef struct sim_roce_done {
    uint64_t cookie; /* the sender's, echoed on both sides */
    uint64_t bytes;
    bool recv; /* the receiving side's completion */
} sim_roce_done;

typedef struct sim_roce_stats {
    uint64_t data_pkts_sent, data_bytes_sent, retx_pkts;
    uint64_t acks_sent, naks_sent, cnps_sent;
    uint64_t acks_rcvd, naks_rcvd, cnps_rcvd;
    uint64_t data_pkts_rcvd, out_of_order_dropped, dup_rcvd;
    uint64_t timeouts;
    uint64_t rate_decreases;
    double rate_gbps; /* DCQCN's current rate */
} sim_roce_stats;

typedef struct sim_roce_qp sim_roce_qp;

/*
 * One end of a connection, sending and receiving, with id |id| and peer |peer| (the ids the
 * packets carry in dst_qp), on a port of |line_gbps|. Copies |cfg|. Returns NULL only when
 * out of memory.
 */
sim_roce_qp *sim_roce_qp_new(const sim_roce_cfg *cfg, double line_gbps, uint32_t id, uint32_t peer,
                             uint64_t now_ps);
void sim_roce_qp_free(sim_roce_qp *qp);

/* Queues a message of |bytes| (an RDMA Write; 0 is one empty packet). Returns 0, or -1 once
 * the QP has failed. */
int sim_roce_post(sim_roce_qp *qp, uint64_t bytes, uint64_t cookie, uint64_t now_ps);

/*
 * The next packet this end sends at |now|: data paced at the current rate (the line rate
 * without DCQCN), and its ACKs, NAKs and CNPs, which go first and unpaced. Returns 1 with |out|
 * filled, 0 when nothing may go now (sim_roce_next_tx says when), -1 once failed.
 */
int sim_roce_write(sim_roce_qp *qp, uint64_t now_ps, sim_roce_pkt *out);
/* The earliest time sim_roce_write may return a packet; SIM_NEVER when it has nothing. */
uint64_t sim_roce_next_tx(const sim_roce_qp *qp);

/* Takes in a packet for this end. */
void sim_roce_read(sim_roce_qp *qp, const sim_roce_pkt *in, uint64_t now_ps);

/* Timers: the retransmission timeout and DCQCN's. */
uint64_t sim_roce_expiry(const sim_roce_qp *qp);
void sim_roce_on_timer(sim_roce_qp *qp, uint64_t now_ps);

/* The next completion: returns 1 with |out| filled, 0 when there is none. */
int sim_roce_poll(sim_roce_qp *qp, sim_roce_done *out);

/* Failed after |retry| timeouts in a row without progress. */
bool sim_roce_failed(const sim_roce_qp *qp);
const sim_roce_stats *sim_roce_get_stats(const sim_roce_qp *qp);

#endif
