/* SPDX-License-Identifier: MIT */
/* A QP's EV set: spraying order, the EV state machine, same-plane replacement, reverse EVs. */
#include "mrc_internal.h"

static uint32_t ev_hash(uint32_t v)
{
    v ^= v >> 16;
    v *= 0x7feb352du;
    v ^= v >> 15;
    return v;
}

uint32_t mrc_ev_lookup(const mrc_qp *qp, uint32_t val)
{
    for (uint32_t i = ev_hash(val) & qp->evmap_mask;; i = (i + 1) & qp->evmap_mask) {
        uint16_t e = qp->evmap[i];
        if (e == 0) {
            return MRC_NONE;
        }
        if (qp->evs[e - 1].val == val) {
            return e - 1u;
        }
    }
}

static unsigned port_active(const mrc_qp *qp, unsigned port)
{
    unsigned n = 0;
    for (unsigned i = 0; i < qp->nact; i++) {
        n += qp->evs[qp->act[i]].port == port;
    }
    return n;
}

static void activate(mrc_qp *qp, uint32_t evi)
{
    qp->evs[evi].active = 1;
    qp->act[qp->nact++] = (uint16_t)evi;
    qp->rot_dirty = true;
}

static void deactivate(mrc_qp *qp, uint32_t evi)
{
    for (unsigned i = 0; i < qp->nact; i++) {
        if (qp->act[i] == evi) {
            qp->act[i] = qp->act[--qp->nact];
            break;
        }
    }
    qp->evs[evi].active = 0;
    qp->rot_dirty = true;
}

/* Replacement comes from the same plane only: rebalancing across planes would make a healthy
 * plane look loaded and a sick one look idle, hiding real faults (lib/mrc/README.md#evs). */
static void promote_backup(mrc_qp *qp, unsigned port)
{
    if (port_active(qp, port) >= qp->quota[port]) {
        return;
    }
    for (uint32_t i = 0; i < qp->nevs; i++) {
        mrc_qev *e = &qp->evs[i];
        if (!e->active && e->port == port && e->state == MRC_EV_GOOD) {
            activate(qp, i);
            return;
        }
    }
}

static void pick_reverse(mrc_qp *qp, unsigned port, uint32_t after)
{
    uint32_t n = qp->nevs, start = after == MRC_NONE ? 0 : after + 1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (start + k) % n;
        if (qp->evs[i].port == port && qp->evs[i].state == MRC_EV_GOOD) {
            qp->rev[port] = (uint16_t)i;
            return;
        }
    }
    /* no GOOD EV on that plane: keep the old one, the data path avoids the plane anyway */
}

int mrc_ev_setup(mrc_qp *qp, const mrc_ev_profile *p)
{
    mrc_context *ctx = qp->ctx;
    qp->nevs = p->nevs;
    qp->evmap_mask = mrc_pow2(2 * p->nevs) - 1;
    qp->evs = mrc_calloc(ctx, p->nevs, sizeof(mrc_qev));
    qp->evmap = mrc_calloc(ctx, qp->evmap_mask + 1, sizeof(uint16_t));
    qp->act = mrc_calloc(ctx, p->nevs, sizeof(uint16_t));
    qp->rot = mrc_calloc(ctx, p->nevs, sizeof(uint16_t));
    if (!qp->evs || !qp->evmap || !qp->act || !qp->rot) {
        mrc_ev_teardown(qp);
        return MRC_ERR_NOMEM;
    }
    unsigned per_port[MRC_MAX_PORTS] = {0}, ports = 0;
    for (uint32_t i = 0; i < p->nevs; i++) {
        mrc_qev *e = &qp->evs[i];
        e->val = p->evs[i].val;
        e->port = p->evs[i].port;
        e->state = MRC_EV_GOOD;
        e->min_rtt = UINT64_MAX;
        ports += per_port[e->port]++ == 0;
        uint32_t h = ev_hash(e->val) & qp->evmap_mask;
        while (qp->evmap[h]) {
            h = (h + 1) & qp->evmap_mask;
        }
        qp->evmap[h] = (uint16_t)(i + 1);
    }
    unsigned active = p->active && p->active < p->nevs ? p->active : p->nevs;
    for (unsigned port = 0; port < MRC_MAX_PORTS; port++) {
        unsigned q = ports ? active / ports : 0;
        qp->quota[port] = per_port[port] < q ? per_port[port] : (q ? q : per_port[port] ? 1 : 0);
    }
    /* each plane's active EVs are a random subset of its EVs */
    uint16_t *order = qp->rot;
    for (uint32_t i = 0; i < p->nevs; i++) {
        order[i] = (uint16_t)i;
    }
    for (uint32_t i = p->nevs; i > 1; i--) {
        uint32_t j = mrc_rng_below(&ctx->rng, i);
        uint16_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    unsigned taken[MRC_MAX_PORTS] = {0};
    for (uint32_t k = 0; k < p->nevs; k++) {
        uint32_t i = order[k];
        unsigned port = qp->evs[i].port;
        if (taken[port] < qp->quota[port]) {
            taken[port]++;
            qp->evs[i].active = 1;
            qp->act[qp->nact++] = (uint16_t)i;
        }
    }
    qp->rot_dirty = true;
    qp->draw = mrc_rng_next(&ctx->rng);
    qp->last_sent_data = qp->last_rcvd = qp->last_rev_refresh = 0;
    qp->rev_urgent = false;
    qp->min_active = p->min_active;
    qp->event_mask = p->event_mask;
    qp->st.ev_count[MRC_EV_GOOD] = p->nevs;
    qp->next_ev_probe = UINT64_MAX;
    qp->skip_end = UINT64_MAX;
    for (unsigned port = 0; port < MRC_MAX_PORTS; port++) {
        qp->rev[port] = 0;
        if (per_port[port]) {
            pick_reverse(qp, port, MRC_NONE);
        }
    }
    return 0;
}

void mrc_ev_teardown(mrc_qp *qp)
{
    mrc_context *ctx = qp->ctx;
    mrc_dealloc(ctx, qp->evs);
    mrc_dealloc(ctx, qp->evmap);
    mrc_dealloc(ctx, qp->act);
    mrc_dealloc(ctx, qp->rot);
    qp->evs = NULL;
    qp->evmap = NULL;
    qp->act = qp->rot = NULL;
    qp->nevs = qp->nact = 0;
}

/* A rotation of port |p|: every active EV of the port once, in a fresh random order; SKIPs
 * of the port end with it. The order is drawn as it goes (one step of a Fisher-Yates shuffle
 * per pick), which spreads the cost of a uniform permutation over the packets instead of
 * paying it at the start. */
static void new_rotation(mrc_qp *qp, unsigned p, uint64_t now)
{
    qp->rot_no[p]++;
    for (unsigned i = qp->rot_beg[p]; qp->st.ev_count[MRC_EV_SKIP] && i < qp->rot_end[p]; i++) {
        mrc_qev *e = &qp->evs[qp->rot[i]];
        if (e->state == MRC_EV_SKIP && e->skip_rot != qp->rot_no[p]) {
            mrc_ev_set(qp, qp->rot[i], MRC_EV_GOOD, MRC_EVR_ROTATION, now);
        }
    }
    qp->rot_pos[p] = qp->rot_beg[p];
}

/* The active set changed: the ports' rotations start again over their new EVs. */
static void rebuild_rotations(mrc_qp *qp, uint64_t now)
{
    uint16_t at = 0;
    for (unsigned p = 0; p < MRC_MAX_PORTS; p++) {
        qp->rot_beg[p] = qp->rot_end[p] = at;
        for (unsigned i = 0; i < qp->nact; i++) {
            if (qp->evs[qp->act[i]].port == p) {
                qp->rot[at++] = qp->act[i];
            }
        }
        qp->rot_end[p] = at;
    }
    qp->rot_dirty = false;
    for (unsigned p = 0; p < MRC_MAX_PORTS; p++) {
        new_rotation(qp, p, now);
    }
}

uint32_t mrc_ev_pick_slow(mrc_qp *qp, uint32_t port_mask, uint32_t avoid, uint32_t drawn,
                          uint64_t now)
{
    uint32_t second = MRC_NONE, m = port_mask & mrc_ev_port_mask(qp);
    if (qp->rot_dirty) {
        rebuild_rotations(qp, now);
        drawn = MRC_NONE;
    }
    /* the ports of the mask in turn; in each, two passes at most: the rest of its rotation,
     * then a whole fresh one */
    for (unsigned k = 0; k < MRC_MAX_PORTS; k++) {
        unsigned p = (qp->rot_next + k) % MRC_MAX_PORTS;
        unsigned n = qp->rot_end[p] - qp->rot_beg[p];
        if (!(m & (1u << p)) || n == 0) {
            continue;
        }
        for (unsigned tries = 0; tries <= 2 * n; tries++) {
            uint32_t evi = drawn;
            drawn = MRC_NONE;
            if (evi == MRC_NONE) {
                if (qp->rot_pos[p] >= qp->rot_end[p]) {
                    new_rotation(qp, p, now);
                }
                evi = mrc_ev_draw(qp, p);
            }
            mrc_qev *e = &qp->evs[evi];
            if (e->state == MRC_EV_SKIP && now >= e->skip_until) {
                mrc_ev_set(qp, evi, MRC_EV_GOOD, MRC_EVR_ROTATION, now);
            }
            if (e->state != MRC_EV_GOOD || !(m & (1u << e->port))) {
                continue;
            }
            if (evi == avoid) {
                second = evi;
                continue;
            }
            qp->rot_next = p + 1;
            return evi;
        }
    }
    return second;
}

void mrc_ev_set(mrc_qp *qp, uint32_t evi, mrc_ev_state to, mrc_ev_reason why, uint64_t now)
{
    mrc_qev *e = &qp->evs[evi];
    mrc_ev_state from = (mrc_ev_state)e->state;
    if (from == to) {
        return;
    }
    e->state = (uint8_t)to;
    e->transitions++;
    qp->st.ev_transitions[from][to]++;
    qp->st.ev_count[from]--;
    qp->st.ev_count[to]++;
    bool out = to == MRC_EV_ASSUMED_BAD || to == MRC_EV_DENIED;
    if (out && e->active) {
        deactivate(qp, evi);
        promote_backup(qp, e->port);
    }
    switch (to) {
    case MRC_EV_SKIP:
        e->skip_rot = qp->rot_no[e->port];
        e->skip_until = now + qp->ctx->set.skip_max_ns;
        if (e->skip_until < qp->skip_end) {
            /* an idle QP must end it too: its state is read by the controller */
            qp->skip_end = e->skip_until;
            mrc_qp_timer_arm(qp, e->skip_until);
        }
        break;
    case MRC_EV_ASSUMED_BAD:
        e->probe_ivl = qp->ctx->set.probe_interval_ns;
        e->next_probe = now + e->probe_ivl;
        e->probe_ok = 0;
        if (e->next_probe < qp->next_ev_probe) {
            qp->next_ev_probe = e->next_probe;
        }
        break;
    case MRC_EV_GOOD:
        if (from != MRC_EV_SKIP) {
            e->loss = 0; /* probes or the controller vouched for the path */
        }
        if (!e->active && port_active(qp, e->port) < qp->quota[e->port]) {
            activate(qp, evi);
        }
        mrc_qp_ready(qp); /* a retransmission may have waited for an EV */
        break;
    default:
        break;
    }
    if (to != MRC_EV_GOOD && qp->rev[e->port] == evi) {
        pick_reverse(qp, e->port, evi);
    }
    if (qp->event_mask & (1u << to)) {
        mrc_ev_event ev = {.time = now,
                           .qpn = qp->qpn,
                           .ev = e->val,
                           .port = e->port,
                           .old_state = (uint8_t)from,
                           .new_state = (uint8_t)to,
                           .reason = (uint8_t)why};
        mrc_ev_event_push(qp->ctx, &ev);
    }
    if (to == MRC_EV_ASSUMED_BAD) {
        mrc_qp_timer_arm(qp, e->next_probe);
    }
}

uint64_t mrc_ev_rev_due(const mrc_qp *qp)
{
    uint64_t ivl = qp->ctx->set.rev_refresh_ns;
    if (!ivl || !qp->evs || qp->last_rcvd <= qp->last_rev_refresh) {
        return UINT64_MAX; /* off, or nothing received since the last refresh */
    }
    if (qp->rev_urgent) {
        /* at most one refresh per eighth of the interval, however many duplicates come */
        return qp->last_rev_refresh + ivl / 8;
    }
    uint64_t since =
        qp->last_sent_data > qp->last_rev_refresh ? qp->last_sent_data : qp->last_rev_refresh;
    return since + ivl;
}

/* A period with arrivals and no data sent: no SACK of ours has shown which reverse EVs work,
 * so each plane probes one of its GOOD EVs at random; an answer makes it the plane's reverse
 * EV (mrc_ctx.c, ep_result). With data flowing both ways the data's own SACKs do this. */
void mrc_ev_rev_refresh(mrc_qp *qp, uint64_t now)
{
    uint64_t due = mrc_ev_rev_due(qp);
    if (due > now) {
        return;
    }
    qp->last_rev_refresh = now;
    qp->rev_urgent = false;
    uint32_t up = mrc_ev_port_mask(qp);
    for (unsigned port = 0; port < qp->attr.ah.nports; port++) {
        if (!(up & (1u << port))) {
            continue;
        }
        uint32_t start = mrc_rng_below(&qp->ctx->rng, qp->nevs);
        for (uint32_t k = 0; k < qp->nevs; k++) {
            uint32_t i = (start + k) % qp->nevs;
            const mrc_qev *e = &qp->evs[i];
            if (e->port == port && e->state == MRC_EV_GOOD) {
                mrc_ep_send(qp->ctx, MRC_EP_OP_EV_PROBE, qp->attr.ah.dgid[port], e->val, port, qp,
                            now, NULL);
                qp->st.rev_refreshes++;
                break;
            }
        }
    }
}

void mrc_ev_skip_expire(mrc_qp *qp, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < qp->nevs; i++) {
        mrc_qev *e = &qp->evs[i];
        if (e->state != MRC_EV_SKIP) {
            continue;
        }
        if (e->skip_until <= now) {
            mrc_ev_set(qp, i, MRC_EV_GOOD, MRC_EVR_ROTATION, now);
        } else if (e->skip_until < next) {
            next = e->skip_until;
        }
    }
    qp->skip_end = next;
}

void mrc_ev_bad(mrc_qp *qp, uint32_t evi, mrc_ev_reason why, uint64_t now)
{
    mrc_qev *e = &qp->evs[evi];
    if (e->state == MRC_EV_ASSUMED_BAD || e->state == MRC_EV_DENIED) {
        return;
    }
    /* the floor: never let automatic verdicts leave fewer than min_active usable EVs */
    uint32_t usable = qp->st.ev_count[MRC_EV_GOOD] + qp->st.ev_count[MRC_EV_SKIP];
    if (usable <= qp->min_active) {
        qp->st.floor_hits++;
        return;
    }
    mrc_ev_set(qp, evi, MRC_EV_ASSUMED_BAD, why, now);
}

/* Untrimmed loss is path evidence (trimming turns congestion into NACKs), but a single loss
 * on a lossy link is no verdict: an EV goes ASSUMED_BAD when a moving share over about its
 * last 32 packets (mrc_ev_delivered decays it) passes ev_loss_pct; a low setting makes one
 * loss enough, as [P1] does. */
void mrc_ev_lost(mrc_qp *qp, uint32_t evi, uint64_t now)
{
    mrc_qev *e = &qp->evs[evi];
    e->lost++;
    e->loss = (uint16_t)(e->loss + ((65535u - e->loss) >> 5));
    unsigned pct = qp->ctx->set.ev_loss_pct;
    if (pct && e->loss * 100u >= pct * 65535u) {
        mrc_ev_bad(qp, evi, MRC_EVR_LOSS, now);
    }
}

void mrc_ev_probe_result(mrc_qp *qp, uint32_t evi, bool ok, uint8_t m, uint64_t now)
{
    mrc_qev *e = &qp->evs[evi];
    const mrc_settings *s = &qp->ctx->set;
    e->probing = 0;
    if (e->state != MRC_EV_ASSUMED_BAD) {
        return;
    }
    if (ok && m != MRC_M_ALWAYS_SKIP) {
        e->probes_ok++;
        if (++e->probe_ok >= s->probe_recover) {
            mrc_ev_set(qp, evi, MRC_EV_GOOD, MRC_EVR_PROBE_OK, now);
            return;
        }
    } else {
        /* a lost probe starts the count again and backs off, up to the cap */
        e->probes_lost += !ok;
        e->probe_ok = 0;
        e->probe_ivl = e->probe_ivl * 2 < s->probe_interval_max_ns ? e->probe_ivl * 2
                                                                   : s->probe_interval_max_ns;
    }
    e->next_probe = now + e->probe_ivl;
    if (e->next_probe < qp->next_ev_probe) {
        qp->next_ev_probe = e->next_probe;
    }
    mrc_qp_timer_arm(qp, e->next_probe);
}

uint32_t mrc_ev_reverse(mrc_qp *qp, unsigned port)
{
    uint32_t up = mrc_ev_port_mask(qp);
    if (port < MRC_MAX_PORTS && (up & (1u << port)) && qp->evs[qp->rev[port]].port == port) {
        return qp->rev[port];
    }
    for (unsigned p = 0; p < MRC_MAX_PORTS; p++) {
        if ((up & (1u << p)) && qp->evs[qp->rev[p]].port == p) {
            return qp->rev[p];
        }
    }
    return qp->rev[port < MRC_MAX_PORTS ? port : 0];
}

void mrc_ev_reverse_suspect(mrc_qp *qp, unsigned port)
{
    if (port < MRC_MAX_PORTS) {
        pick_reverse(qp, port, qp->rev[port]);
    }
}
