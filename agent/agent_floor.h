/* SPDX-License-Identifier: MIT */
/* The denylist floor (docs/agent.md#the-denylist-floor): the share of a QP's EVs the agent keeps
 * in use whatever the denylist denies, which ones (the least bad), and each peer's state. */
#ifndef AGENT_FLOOR_H
#define AGENT_FLOOR_H

#include <mrcfab/fabric.h>
#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_deny;

/*
 * A health signal may steer traffic, never stop it all (Envoy's max_ejection_percent): the
 * denylist takes a QP's EVs down to the floor and no further. The floor is
 * max(ceil(fraction x EVs), 1 EV on each of |planes| planes); when the denylist leaves fewer,
 * the agent keeps the least bad of the EVs it denies, by rank:
 *
 *   1. fewer failures crossed: every entry but a drain (the prober's verdicts, an operator's
 *      entry for another reason): a failed element loses packets;
 *   2. fewer drains crossed: an operator's entries whose reason starts with "drain"
 *      (maintenance: the element most often still forwards until the work starts);
 *   3. the EV's place in the profile (which spreads a tie over every path and plane, salt by
 *      salt).
 *
 * First the best EV of each plane not yet used, best plane first, until |planes| planes are
 * used (or every plane the QP has); then the best of the rest until the count is met. An EV
 * that names no path is never kept. The same denylist and profile give the same EVs, so a
 * fetch of an unchanged list changes nothing.
 */
#define AGENT_FLOOR_FRACTION 0.25
#define AGENT_FLOOR_PLANES 1

typedef struct agent_floor_cfg {
    double fraction; /* 0..1; 0: only the plane floor (one EV on each of |planes|) */
    unsigned planes; /* 1..MRC_MAX_PORTS: never 0, so the floor is never zero EVs */
} agent_floor_cfg;

/* Returns 0, or -EINVAL with a sentence in |err| naming the bad value. */
int agent_floor_cfg_check(const agent_floor_cfg *cfg, char *err, size_t errlen);

/* One QP's EVs as the floor left them. */
typedef struct agent_floor_qp {
    unsigned nevs;    /* EVs of its profile */
    unsigned allowed; /* of them, those the denylist leaves */
    unsigned kept;    /* of those it denies, the ones the floor keeps in use */
    bool floored;     /* the denylist left fewer than the floor */
} agent_floor_qp;

/*
 * Which of the |n| EVs |evs| (at most 1024) of a QP from host |src| to host |dst| the agent
 * denies under |deny| (NULL: none) and the floor |cfg|: |pdenied[i]| for EV i, the tally in
 * |*pqp|. O(n) when the denylist leaves enough, O(n log n + n x entries) when the floor binds.
 */
void agent_floor_pick(const agent_floor_cfg *cfg, const struct agent_deny *deny, uint32_t src,
                      uint32_t dst, const mrc_ev *evs, unsigned n, bool *pdenied,
                      agent_floor_qp *pqp);

/* A peer held at the floor now or earlier: its floored QPs' EVs added up. */
typedef struct agent_floor_peer {
    uint32_t peer;
    bool floored;     /* now */
    unsigned qps;     /* QPs toward it at the floor now */
    unsigned nevs;    /* their EVs, */
    unsigned allowed; /* those the denylist leaves, */
    unsigned kept;    /* and those the floor keeps */
    uint64_t entered; /* times it went to the floor */
} agent_floor_peer;

typedef struct agent_floor_totals {
    uint64_t peers;   /* held at the floor now */
    uint64_t kept;    /* EVs kept past the denylist now */
    uint64_t entered; /* times a peer went to the floor since the start */
} agent_floor_totals;

/* The floor's state over a node's QPs. Borrows |topo| (for peers' names in the log). */
typedef struct agent_floor agent_floor;

agent_floor *agent_floor_new(const agent_floor_cfg *cfg, const fab_topo *topo);
void agent_floor_free(agent_floor *f);
const agent_floor_cfg *agent_floor_get_cfg(const agent_floor *f);

/*
 * The state after the latest verdicts of every QP: |qps[i]| toward |peers[i]|, |n| of them.
 * A peer goes to the floor when one of its QPs is floored, and leaves it when none is (or its
 * QPs are gone); each such transition is logged once (a warning going, a notice leaving) and
 * each going counted, however often the same state is given again.
 */
void agent_floor_update(agent_floor *f, const uint32_t *peers, const agent_floor_qp *qps, size_t n);
void agent_floor_get_totals(const agent_floor *f, agent_floor_totals *ptotals);
/* The peers held now or earlier, in host order: |*pn| of them, borrowed until the next
 * update. */
const agent_floor_peer *agent_floor_peers(const agent_floor *f, size_t *pn);

#endif
