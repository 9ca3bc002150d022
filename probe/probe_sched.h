/* SPDX-License-Identifier: MIT */
/* The probe plan (issue 8, item 1): a pure, deterministic schedule of SRv6 probes on uSID
 * paths, a known function of (window, sender port, T1, index), that gives every directed
 * NIC-T0 and T0-T1 link the same probe count per window from many distinct partners. Every
 * node computes the same plan, so a receiver knows what should arrive without being told.
 *
 * Construction (per plane, with A T0s, J T1s and D down-ports per T0). Every sender port sends
 * R = round(rate * window) probes per window; probe |index| has the same kind and rank within
 * its kind for every sender of the plane (the kinds are interleaved evenly over the window).
 *  - T1 bounces and cross probes form one "T1 stream" of n_B + n_C positions per sender;
 *    position u of port k uses T1 j = (k * (n_B + n_C) + u + s_w) mod J, s_w a seeded rotation
 *    that moves by n_B each window (so a port's T1 bounces sweep every T1). Under one T0 the
 *    positions are D * (n_B + n_C) consecutive integers, so every uplink gets exactly
 *    D(n_B + n_C) / J; the plan rounds n_B + n_C to a multiple of J / gcd(J, D) to make that
 *    whole. Rank r of a kind takes position (r + k) mod n within the kind's n positions, so
 *    at one index the ports of a T0 go over different T1s.
 *  - Cross probe (window w, index i) of port (a, k) goes to port (a + delta, mu(k)) with mu a
 *    seeded affine permutation of the down-ports keyed by (w, i) and delta in 1..A-1 keyed by
 *    (w, i, k): for each (w, i) a bijection of the plane's ports with no T0 fixed, so every
 *    port receives exactly n_C cross probes and every T1-to-T0 link exactly what every
 *    T0-to-T1 link carries. The inverse is closed-form (probe_plan_expect).
 *  - Intra probe (w, i) of port (a, k) goes to sigma^-1(sigma(k) + delta') under the same T0,
 *    sigma affine keyed by (w, i), delta' in 1..D-1 keyed by (w, i, a): a derangement.
 * So every directed NIC link carries exactly R probes per window each way, every directed
 * T0-T1 link exactly D(n_B + n_C) / J, with no rounding slack.
 *
 * The plan is defined on the nominal grid (T0 index x down-port index) of each plane. A host
 * port the topology leaves uncabled is a hole: it sends nothing, and the probes the plan
 * addresses to it have no receiver (the node role skips them; fab_switch_peer() says which
 * down-ports are cabled). A declared-missing T0-T1 cable likewise breaks the probes over it. */
#ifndef PROBE_SCHED_H
#define PROBE_SCHED_H

#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum probe_kind {
    PROBE_T0_BOUNCE = 0, /* port -> T0 -> same port */
    PROBE_T1_BOUNCE,     /* port -> T0 -> T1 -> T0 -> same port */
    PROBE_CROSS,         /* port -> T0 a -> T1 -> T0 b -> port under b (one way) */
    PROBE_INTRA,         /* port -> T0 -> another port under the same T0 (one way) */
    PROBE_KINDS
} probe_kind;

/* A directed link of one plane, the unit the probes measure. */
typedef enum probe_dir {
    PROBE_NIC_T0 = 0, /* host port k of T0 a, upward */
    PROBE_T0_NIC,     /* downward to that port */
    PROBE_T0_T1,      /* T0 a to T1 j */
    PROBE_T1_T0,      /* T1 j to T0 a */
} probe_dir;

#define PROBE_DIRS 4

typedef struct probe_link {
    uint8_t plane;
    uint8_t dir;    /* probe_dir */
    uint16_t t0;    /* T0 index a within the plane */
    uint16_t other; /* the down-port k (NIC links) or the T1 index j (T0-T1 links) */
} probe_link;

/* One probe of the plan. The sender is host port (src_t0, src_port) of |plane|; a bounce's
 * receiver is the sender. */
typedef struct probe_spec {
    uint8_t kind; /* probe_kind */
    uint8_t plane;
    uint16_t t1; /* T1 index (T1 bounce, cross); 0 otherwise */
    uint16_t src_t0, src_port;
    uint16_t dst_t0, dst_port;
    uint32_t index; /* within the sender's window */
} probe_spec;

/* Most probes one sender port may send per window. */
#define PROBE_MAX_PER_WINDOW (1u << 20)

typedef struct probe_cfg {
    uint64_t window_ns;   /* default 1 s */
    double rate_per_port; /* probes per second each sender port sends; default 1408 */
    /* shares of the kinds in each sender's window (any scale); 0 0 0 0 = the default mix,
     * 64 : 256 : 1024 : 64 (docs/prober.md §2.1) */
    double share[PROBE_KINDS];
    uint64_t seed; /* the plan's permutations (the same on every node) */
} probe_cfg;

/* Fills |cfg| with the defaults: a 1-s window, 1,408 probes/s per port (about 0.001 % of a
 * 100G port at ~110 B a probe) split 64 T0 bounces, 256 T1 bounces, 1,024 cross and 64 intra,
 * so that on the full fabric (256 T1s) each port's T1 bounces visit every T1 once a window. */
void probe_cfg_default(probe_cfg *cfg);

typedef struct probe_plan probe_plan;

/*
 * Builds the plan for the fabric of |topo| (planes, T0s, T1s, down-ports per T0). Borrows
 * |topo| only during the call; |cfg| is copied. A kind the fabric cannot carry gives its share
 * to its nearest substitute: cross to T1 bounce on a plane with one T0, intra to T0 bounce on
 * a plane with one down-port per T0. Stores a new plan in |*pplan|, which the caller frees
 * with probe_plan_free(). Returns 0 or a negative errno: -EINVAL (a configuration the fabric
 * cannot balance: no window, a rate or share that is not a finite positive number, fewer than
 * 1 or more than PROBE_MAX_PER_WINDOW probes per window, fewer probes than the
 * J / gcd(J, D) the T1 stream needs, a plane without T0, T1 or host, or a T0 whose host ports
 * are not its lowest-numbered ports), -ENOMEM.
 */
int probe_plan_new(const fab_topo *topo, const probe_cfg *cfg, probe_plan **pplan);
/* Frees |plan|; NULL is a no-op. */
void probe_plan_free(probe_plan *plan);

/* Probes each sender port sends per window (R, the same on every plane). */
uint32_t probe_plan_per_window(const probe_plan *plan);

/* The plan's planes, and the nominal grid of |plane|: T0s, T1s and down-ports per T0.
 * Returns 0 or -ERANGE. */
unsigned probe_plan_planes(const probe_plan *plan);
int probe_plan_shape(const probe_plan *plan, unsigned plane, uint32_t *pnt0, uint32_t *pnt1,
                     uint32_t *pnports);

/* Probes of |kind| each sender port of |plane| sends per window (also how many of that kind
 * each port receives); 0 for a plane or kind out of range. */
uint32_t probe_plan_kind_count(const probe_plan *plan, unsigned plane, probe_kind kind);

/* Probes every directed link of direction |dir| on |plane| carries per window: exactly this
 * many on each such link. 0 for a plane or direction out of range. */
uint32_t probe_plan_link_load(const probe_plan *plan, unsigned plane, probe_dir dir);

/* When probe |index| is due, in nanoseconds after its window starts: the probes are spread
 * evenly over the window. */
uint64_t probe_plan_offset_ns(const probe_plan *plan, uint32_t index);

/* The |index|-th probe sender (plane, t0, port) sends in |window|. Returns 0 or -ERANGE. */
int probe_plan_get(const probe_plan *plan, uint64_t window, unsigned plane, unsigned t0,
                   unsigned port, uint32_t index, probe_spec *out);

/* The one-way probes host port (plane, t0, port) should receive in |window| (from other
 * senders): up to |max| written to |out| in order of index (the sender's index, hence the
 * order they are sent in), the count returned (it may exceed |max|; 0 for a port out of
 * range). O(probes per window). */
uint32_t probe_plan_expect(const probe_plan *plan, uint64_t window, unsigned plane, unsigned t0,
                           unsigned port, probe_spec *out, uint32_t max);

/* The directed links probe |s| crosses, in order (at most 6; a plan's probes cross 2 or 4). */
unsigned probe_spec_links(const probe_spec *s, probe_link out[6]);

#endif
