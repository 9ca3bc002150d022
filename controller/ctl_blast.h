/* SPDX-License-Identifier: MIT */
/* The blast radius of a denylist entry: which host pairs lose how much of their path
 * capacity. A pair's capacity is the share of its planes' paths it may use: on each plane
 * both hosts are cabled on, the usable share of that plane's paths (the T0-local path, or
 * the T1s both T0s reach), averaged over those planes; 1 with nothing denied. Because
 * spraying spreads a pair over all its paths, that share is what it keeps under load.
 * Hosts cabled to the same T0 on every plane behave alike, so the work is per pair of such
 * classes, not per pair of hosts: about (T0s per plane)^2, whatever the fabric's size. */
#ifndef CTL_BLAST_H
#define CTL_BLAST_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_element.h"

typedef struct ctl_blast ctl_blast;

/* One denied element; |dirs| bit 0 its up direction, bit 1 its down one (a switch: 3). */
typedef struct ctl_blast_entry {
    ctl_element el;
    unsigned dirs;
} ctl_blast_entry;

#define CTL_BLAST_WORST 5

typedef struct ctl_blast_pair {
    uint32_t src, dst; /* hosts */
    double before, after;
} ctl_blast_pair;

typedef struct ctl_blast_result {
    uint64_t pairs;       /* ordered host pairs with a path at all */
    uint64_t affected;    /* pairs whose capacity the entry lowers */
    uint64_t cut_off;     /* of those, pairs left with no path */
    uint64_t below_floor; /* of those, pairs left below the floor */
    double floor;
    double min_left;      /* the least capacity an affected pair keeps; 1 when none */
    uint64_t by_left[10]; /* affected pairs by capacity left: [0, 0.1), ..., [0.9, 1) */
    ctl_blast_pair worst[CTL_BLAST_WORST]; /* the hardest hit, least left first */
    unsigned nworst;
} ctl_blast_result;

/* Classes the hosts of |topo| (which must outlive it). */
ctl_blast *ctl_blast_new(const fab_topo *topo);
void ctl_blast_free(ctl_blast *b);

/* The blast radius of denying |add| while |active| (n entries) are denied, against |floor|
 * (a share, 0..1). Thread safe: |b| is only read. */
void ctl_blast_eval(const ctl_blast *b, const ctl_blast_entry *active, size_t n,
                    const ctl_blast_entry *add, double floor, ctl_blast_result *res);

/* The T1s T0 |t0| of plane |plane| is cabled to, as |*pwords| words of bits; NULL if there
 * is no such T0. */
const uint64_t *ctl_blast_uplinks(const ctl_blast *b, unsigned plane, uint32_t t0,
                                  unsigned *pwords);

json_object *ctl_blast_json(const ctl_blast *b, const ctl_blast_result *res);

#endif
