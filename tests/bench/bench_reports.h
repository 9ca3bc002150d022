/* SPDX-License-Identifier: MIT */
/* Node reports without nodes: each window, every host's report (docs/prober.md §3) as the
 * probe plan says it would be, its deficits those of a background loss and of host-port faults,
 * for the localizer's benchmark (bench_localize_shard) and its shard test (probe_feed). */
#ifndef BENCH_REPORTS_H
#define BENCH_REPORTS_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdint.h>

#include "probe_sched.h"

/* A host port that loses |loss| of its probes upward (NIC->T0) or downward (T0->NIC). */
typedef struct bench_fault {
    unsigned plane, t0, port;
    int down; /* 0: NIC->T0, 1: T0->NIC */
    double loss;
} bench_fault;

typedef struct bench_reports bench_reports;

/* Reports of the ports of |planes| (a mask) of |topo| under |plan|, with a background loss of
 * |p0| per probe. 0 or -EINVAL. */
int bench_reports_new(const fab_topo *topo, const probe_plan *plan, uint64_t planes, double p0,
                      uint64_t seed, bench_reports **pr);
void bench_reports_free(bench_reports *r);

/* Window |window|'s reports of epoch |epoch|: |cb| is called once per host that has a port of
 * the planes, with its report (borrowed for the call). Returns the deficits listed. */
uint64_t bench_reports_window(bench_reports *r, uint64_t window, uint32_t epoch,
                              const bench_fault *faults, size_t nfaults,
                              void (*cb)(void *user, json_object *report), void *user);

#endif
