/* SPDX-License-Identifier: MIT */
/* Pre-job validation (issue 8, item 7): before a job starts on a set of hosts, each of them
 * sweeps every path it would use with bounces that come back to it, so that one host needs
 * no other to answer:
 *   T0 bounce    port -> T0 -> port                               (its NIC link)
 *   T1 bounce    port -> T0 a -> T1 j -> T0 a -> port, every T1     (its uplinks)
 *   far bounce   port -> T0 a -> T1 j -> T0 b -> T1 j -> T0 a -> port, for every T1 and every
 *                T0 b that one of the job's hosts hangs off in that plane (the far T0's links)
 * The far hosts' own NIC links are theirs to sweep: run on every host of the job, the sweeps
 * cover every link of every path between them. */
#ifndef PROBE_VALIDATE_H
#define PROBE_VALIDATE_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdint.h>

typedef struct probe_validate_cfg {
    const fab_topo *topo;
    uint32_t host;         /* where this runs */
    const uint32_t *peers; /* the job's other hosts */
    unsigned npeers;
    unsigned count;      /* probes per path */
    unsigned pass_pct;   /* a path passes with at least this % of its probes back */
    uint64_t timeout_ns; /* how long the last probe may take to come back */
    uint64_t rate;       /* probes per second, all ports together */
    uint16_t udp_port;
    uint8_t tclass;
} probe_validate_cfg;

/* Runs the sweep (blocking) and stores its report in |*result|: every path with its probes
 * sent and back and a verdict, and the totals. Returns 0 (whatever the verdicts) or a negative
 * errno with a sentence in |err| (no port open, no socket). */
int probe_validate_run(const probe_validate_cfg *cfg, json_object **result, char *err,
                       size_t errlen);

#endif
