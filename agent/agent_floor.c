/* SPDX-License-Identifier: MIT */
/* The denylist floor: the EVs kept past the denylist, ranked by what they cross, and the peers
 * held at the floor with each transition logged once. */
#include "agent_floor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_deny.h"
#include "util.h"

#define FLOOR_MAX_EVS 1024 /* an EV profile's largest */

struct agent_floor {
    agent_floor_cfg cfg;
    const fab_topo *topo;
    agent_floor_peer *peers; /* in host order */
    size_t npeers;
    agent_floor_totals totals;
};

int agent_floor_cfg_check(const agent_floor_cfg *cfg, char *err, size_t errlen)
{
    if (!(cfg->fraction >= 0 && cfg->fraction <= 1)) {
        snprintf(err, errlen, "the denylist floor must be a fraction from 0 to 1, not %g",
                 cfg->fraction);
        return -EINVAL;
    }
    if (cfg->planes < 1 || cfg->planes > MRC_MAX_PORTS) {
        snprintf(err, errlen,
                 "the denylist floor's planes must be 1 to %d (0 would let it reach no EV), "
                 "not %u",
                 MRC_MAX_PORTS, cfg->planes);
        return -EINVAL;
    }
    return 0;
}

/* A denied EV that the floor could keep, with its rank. */
typedef struct cand {
    agent_deny_ev_cost cost;
    unsigned idx;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->cost.failures != y->cost.failures) {
        return x->cost.failures < y->cost.failures ? -1 : 1;
    }
    if (x->cost.drains != y->cost.drains) {
        return x->cost.drains < y->cost.drains ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void agent_floor_pick(const agent_floor_cfg *cfg, const agent_deny *deny, uint32_t src,
                      uint32_t dst, const mrc_ev *evs, unsigned n, bool *pdenied,
                      agent_floor_qp *pqp)
{
    uint32_t planes_all = 0, planes_used = 0;
    n = n > FLOOR_MAX_EVS ? FLOOR_MAX_EVS : n;
    *pqp = (agent_floor_qp){.nevs = n};
    for (unsigned i = 0; i < n; i++) {
        pdenied[i] = deny && agent_deny_ev(deny, src, dst, evs[i].val);
        planes_all |= 1u << (evs[i].port % 32);
        if (!pdenied[i]) {
            pqp->allowed++;
            planes_used |= 1u << (evs[i].port % 32);
        }
    }
    /* rounded up, less a hair so that 0.3 x 10 is 3 and not 4 */
    double want = cfg->fraction * n;
    unsigned need = (unsigned)want;
    need += (double)need < want - 1e-9;
    unsigned nplanes = (unsigned)__builtin_popcount(planes_all);
    unsigned need_planes = cfg->planes < nplanes ? cfg->planes : nplanes;
    if (pqp->allowed >= need && (unsigned)__builtin_popcount(planes_used) >= need_planes) {
        return;
    }
    pqp->floored = true;
    cand c[FLOOR_MAX_EVS];
    unsigned nc = 0;
    for (unsigned i = 0; i < n; i++) {
        if (pdenied[i] && agent_deny_cost(deny, src, dst, evs[i].val, &c[nc].cost) == 0) {
            c[nc++].idx = i;
        }
    }
    qsort(c, nc, sizeof(c[0]), cand_cmp);
    for (unsigned k = 0; k < nc && (unsigned)__builtin_popcount(planes_used) < need_planes; k++) {
        uint32_t bit = 1u << (evs[c[k].idx].port % 32);
        if (!(planes_used & bit)) {
            planes_used |= bit;
            pdenied[c[k].idx] = false;
            pqp->kept++;
        }
    }
    for (unsigned k = 0; k < nc && pqp->allowed + pqp->kept < need; k++) {
        if (pdenied[c[k].idx]) {
            pdenied[c[k].idx] = false;
            pqp->kept++;
        }
    }
}

agent_floor *agent_floor_new(const agent_floor_cfg *cfg, const fab_topo *topo)
{
    agent_floor *f = util_xcalloc(1, sizeof(*f));
    f->cfg = *cfg;
    f->topo = topo;
    return f;
}

void agent_floor_free(agent_floor *f)
{
    if (f) {
        free(f->peers);
        free(f);
    }
}

const agent_floor_cfg *agent_floor_get_cfg(const agent_floor *f)
{
    return &f->cfg;
}

static int peer_cmp(const void *a, const void *b)
{
    const agent_floor_peer *x = a, *y = b;
    return x->peer < y->peer ? -1 : x->peer > y->peer;
}

/* The record of |peer|, made (not floored, never entered) when there is none. */
static agent_floor_peer *record(agent_floor *f, uint32_t peer)
{
    agent_floor_peer key = {.peer = peer};
    /* bsearch wants a table even of no rows */
    agent_floor_peer *r =
        f->npeers ? bsearch(&key, f->peers, f->npeers, sizeof(key), peer_cmp) : NULL;
    if (r) {
        return r;
    }
    f->peers = util_xrealloc(f->peers, (f->npeers + 1) * sizeof(*f->peers));
    size_t at = 0;
    while (at < f->npeers && f->peers[at].peer < peer) {
        at++;
    }
    memmove(f->peers + at + 1, f->peers + at, (f->npeers - at) * sizeof(*f->peers));
    f->npeers++;
    f->peers[at] = key;
    return &f->peers[at];
}

void agent_floor_update(agent_floor *f, const uint32_t *peers, const agent_floor_qp *qps, size_t n)
{
    /* every record made first (a new one not floored before), so that none moves after */
    for (size_t i = 0; i < n; i++) {
        if (qps[i].floored) {
            record(f, peers[i]);
        }
    }
    bool *was = util_xcalloc(f->npeers + 1, sizeof(bool));
    for (size_t i = 0; i < f->npeers; i++) {
        agent_floor_peer *r = &f->peers[i];
        was[i] = r->floored;
        *r = (agent_floor_peer){.peer = r->peer, .entered = r->entered};
    }
    for (size_t i = 0; i < n; i++) {
        if (qps[i].floored) {
            agent_floor_peer *r = record(f, peers[i]);
            r->floored = true;
            r->qps++;
            r->nevs += qps[i].nevs;
            r->allowed += qps[i].allowed;
            r->kept += qps[i].kept;
        }
    }
    f->totals.peers = f->totals.kept = 0;
    for (size_t i = 0; i < f->npeers; i++) {
        agent_floor_peer *r = &f->peers[i];
        const char *name = fab_host_name(f->topo, r->peer);
        if (r->floored && !was[i]) {
            r->entered++;
            f->totals.entered++;
            util_log(UTIL_LOG_WARNING,
                     "denylist floor: %s: the denylist leaves %u of %u EVs, below the floor "
                     "(%g of them, on %u plane%s): %u of the least bad kept in use",
                     name ? name : "?", r->allowed, r->nevs, f->cfg.fraction, f->cfg.planes,
                     f->cfg.planes == 1 ? "" : "s", r->kept);
        } else if (!r->floored && was[i]) {
            util_log(UTIL_LOG_NOTICE,
                     "denylist floor: %s: off the floor (the denylist leaves enough EVs, or its "
                     "QPs are gone)",
                     name ? name : "?");
        }
        f->totals.peers += r->floored;
        f->totals.kept += r->kept;
    }
    free(was);
}

void agent_floor_get_totals(const agent_floor *f, agent_floor_totals *ptotals)
{
    *ptotals = f->totals;
}

const agent_floor_peer *agent_floor_peers(const agent_floor *f, size_t *pn)
{
    *pn = f->npeers;
    return f->peers;
}
