/* SPDX-License-Identifier: MIT */
/* mrc-pair's link model: two engines joined by simulated planes with scripted faults. */
#ifndef PAIR_H
#define PAIR_H

#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PAIR_MAX_EV_LOSS 16

typedef struct pair_ev_loss {
    uint32_t ev;
    double p;
} pair_ev_loss;

typedef struct pair_cfg {
    unsigned planes; /* ports per host, one plane each */
    unsigned evs;    /* EVs in the QP's profile, spread over the planes */
    unsigned active; /* of which in use at once (0: all) */
    unsigned min_active;
    uint32_t mtu;        /* path MTU in payload bytes */
    double rate_gbps;    /* per plane */
    uint64_t delay_ns;   /* one way */
    uint64_t reorder_ns; /* extra delay of a reordered packet, uniform in [0, reorder_ns] */
    double loss, reorder, dup, trim, trim_lasthop, ecn; /* probabilities per packet */
    pair_ev_loss ev_loss[PAIR_MAX_EV_LOSS];
    unsigned n_ev_loss;
    int down_plane; /* -1: none */
    uint64_t down_at_ns;
    bool down_both; /* the plane fails at both hosts (a link), else at the sender's NIC */
    unsigned msgs;
    uint32_t size;
    unsigned slots; /* receive buffer slots: messages in flight at once */
    bool imm;       /* Write with Immediate (else plain Write) */
    uint8_t mpr, timeout, linear_cnt, exp_cnt;
    uint64_t seed;
    bool icrc;
    FILE *pcap;
    bool dead_peer;  /* the responder never answers: retry exhaustion */
    uint64_t max_ns; /* simulated time limit */
} pair_cfg;

void pair_cfg_default(pair_cfg *cfg);

/* The EV the pair gives EV number |i| of plane |plane|: plane in bits 31..29, the path index
 * in bits 28..18 (libmrcfab's layout), salt 0. */
uint32_t pair_ev(unsigned plane, unsigned i);

typedef struct pair pair;

int pair_new(const pair_cfg *cfg, pair **ppair);
void pair_free(pair *p);
/* Runs until every message is verified, the QP fails, or the time limit. Returns 0 or a
 * negative engine error from setup. */
int pair_run(pair *p);

typedef struct pair_result {
    uint64_t messages_completed, bytes_verified, bytes_corrupt;
    uint64_t packets_sent, packets_retransmitted, packets_dropped, packets_trimmed;
    uint64_t elapsed_ns;
    bool qp_error;
    mrc_qp_stats req, rsp;
    mrc_ctx_stats ctx_req, ctx_rsp;
    uint32_t ev_states[4];
    double wall_s, cpu_s; /* the run's wall-clock time, and its thread's CPU time */
} pair_result;

void pair_result_get(const pair *p, pair_result *r);
void pair_result_json(const pair_result *r, FILE *out);

/* For tests: the engines and QPs (0: the requester host, 1: the responder host). */
mrc_context *pair_ctx(pair *p, int side);
mrc_qp *pair_qp(pair *p, int side);

#endif
