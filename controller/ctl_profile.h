/* SPDX-License-Identifier: MIT */
/* A host's profile, what its agent runs on: its plane ports and their addresses, the EV set
 * per class of destination (the destinations it reaches over the same T1s), the uSIDs its
 * packets' outer addresses are built from, and the congestion-control profile resolved as
 * the engine will use it. */
#ifndef CTL_PROFILE_H
#define CTL_PROFILE_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl_blast.h"

/* The fabric-wide transport settings a profile carries. */
typedef struct ctl_profile_cfg {
    const char *cc;       /* "uet-1.0-nscc" or "none" */
    double port_gbps;     /* one plane port */
    uint64_t base_rtt_ns; /* the longest path's unloaded round trip */
    uint32_t mtu;
    bool trimming;
} ctl_profile_cfg;

/* The profile of |host|; with |peer| (not FAB_NONE) also every usable path to it with its EV
 * and outer address. |b| indexes the cabling. NULL when the CC settings do not resolve. */
json_object *ctl_profile_json(const fab_topo *topo, const ctl_blast *b, const ctl_profile_cfg *cfg,
                              uint32_t host, uint32_t peer);

#endif
