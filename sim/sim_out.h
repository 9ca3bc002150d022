/* SPDX-License-Identifier: MIT */
/* A run's results: summary.json, the time series as CSV, the plots as SVG, and the comparison
 * table of several runs (mrc-sim report). */
#ifndef SIM_OUT_H
#define SIM_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_scenario.h"

typedef struct sim_flow_result {
    uint32_t id;
    char label[32];
    sim_transport transport;
    uint32_t src, dst; /* host ids */
    char src_name[FAB_NAME_MAX], dst_name[FAB_NAME_MAX];
    uint64_t bytes;
    uint64_t start_ps;
    uint64_t end_ps;     /* 0: not completed by the end of the run */
    double goodput_gbps; /* bytes over (end - start); 0 when not completed */
    uint64_t retransmissions, timeouts;
    bool failed; /* its QP went to error */
} sim_flow_result;

typedef struct sim_allreduce_result {
    sim_transport transport;
    unsigned ranks;
    uint64_t bytes;            /* each rank's buffer */
    uint64_t start_ps, end_ps; /* end 0: not completed */
    double algbw_gbps;         /* bytes / time */
    double busbw_gbps;         /* algbw x 2(N-1)/N, as nccl-tests reports it */
} sim_allreduce_result;

typedef struct sim_totals {
    uint64_t packets; /* sent by hosts, every kind */
    uint64_t drops;   /* lost in the fabric: full queues, faults, down links */
    uint64_t trims;
    uint64_t nacks; /* MRC NACKs and RoCE NAKs sent */
    uint64_t retransmissions;
    uint64_t timeouts;
    uint64_t ev_state_changes;
    uint64_t qp_failures;
    uint64_t ecn_marks;
    uint64_t pfc_pauses;
} sim_totals;

typedef struct sim_run_stats {
    uint64_t events;
    double wall_s;
    uint64_t simulated_ns;
} sim_run_stats;

typedef struct sim_results {
    const char *scenario;   /* its name */
    const char *experiment; /* may be NULL */
    const char *paper;      /* may be NULL */
    uint64_t seed;
    bool reduced;
    sim_flow_result *flows;
    unsigned nflows;
    sim_allreduce_result *allreduce; /* one per ALLREDUCE traffic item */
    unsigned nallreduce;
    sim_totals totals;
    sim_run_stats sim;
} sim_results;

/* The time series, one row per interval. */
typedef struct sim_series {
    uint64_t interval_ps;
    unsigned nflows;  /* columns of flow_gbps, in the order of sim_results.flows */
    unsigned nplanes; /* columns of plane_util */
    size_t nrows;
    double *flow_gbps;  /* nrows x nflows: the goodput each flow delivered in the interval */
    double *plane_util; /* nrows x nplanes: the mean utilisation of the plane's switch ports
                           (both directions of every cable) in the interval, 0..1 */
} sim_series;

/*
 * Writes into folder |dir| (created if missing): summary.json (schemas/sim-summary.schema.json),
 * flows.csv and planes.csv (a time column in microseconds, then one column per flow or
 * plane), throughput.svg (goodput over time per flow; with many flows the busiest 16 and their
 * mean) and utilization.svg (per plane). Borrows |res| and |ts|; |ts| may be NULL (no samples).
 * When |ts| has rows, its nflows must equal res->nflows and its interval must not be 0. Each
 * file is written under a temporary name, synced and renamed into place. Returns 0, or -1 with
 * a sentence in |errmsg|.
 */
int sim_out_write(const char *dir, const sim_results *res, const sim_series *ts, char *errmsg,
                  size_t errmsglen);

/*
 * Reads summary.json from each folder of |dirs| and writes to |out| the comparison table in
 * Markdown: one row per run, the rows of one experiment together (experiments in the order
 * they first appear), with the paper's result and ours side by side; sim_report.c documents
 * the columns. Every folder is read before anything is written. Returns 0, or -1 with a
 * sentence in |errmsg| naming the folder at fault.
 */
int sim_report(const char *const *dirs, unsigned ndirs, FILE *out, char *errmsg, size_t errmsglen);

#endif
