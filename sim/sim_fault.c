/* SPDX-License-Identifier: MIT */
/* The fault timeline: each scenario fault becomes timed actions on ports, switches and NICs.
 * Hosts notice a dead NIC cable at once (carrier loss); nobody is told of a dead T0-T1 cable
 * or a switch that drops while up: MRC finds out by itself, and ECMP (the RoCE baseline)
 * stops using a dead cable once routing has reconverged. */
#include <stdlib.h>
#include <string.h>

#include "sim_fault.h"
#include "util.h"

enum {
    ACT_PORT_DOWN,
    ACT_PORT_UP,
    ACT_PORT_LOSS,
    ACT_ECMP,      /* routing reconverged: ECMP sees the port as it is now */
    ACT_BLACKHOLE, /* a: switch, x: 1 on, 0 off */
    ACT_SW_DOWN,
    ACT_SW_UP,
    ACT_EV_LOSS, /* a: fault index */
};

typedef struct sim_action {
    uint8_t kind;
    uint32_t a;
    double x;
} sim_action;

struct sim_faults {
    sim_action *acts;
    uint32_t n, cap;
};

static void add(sim_world *w, uint64_t at, uint8_t kind, uint32_t a, double x)
{
    sim_faults *fs = w->faults;
    if (at >= w->sc->end_ps) {
        return;
    }
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 64;
        fs->acts = util_xrealloc(fs->acts, fs->cap * sizeof(sim_action));
    }
    fs->acts[fs->n] = (sim_action){kind, a, x};
    sim_evq_push(&w->q, at, SIM_EV_TARGET(SIM_EV_FAULT, fs->n));
    fs->n++;
}

/* The ports (directions) a cable reference names. */
static unsigned ports_of(const sim_world *w, const sim_link_ref *l, uint32_t out[2])
{
    uint32_t p = sim_net_port_of(w, l->sw, l->port);
    if (p == SIM_NONE) {
        return 0;
    }
    unsigned n = 0;
    if (l->dir != SIM_DIR_IN) {
        out[n++] = p;
    }
    if (l->dir != SIM_DIR_OUT && w->ports[p].reverse != SIM_NONE) {
        out[n++] = w->ports[p].reverse;
    }
    return n;
}

static void port_action(sim_world *w, uint64_t at, uint8_t kind, const sim_link_ref *l, double x)
{
    uint32_t ps[2];
    unsigned n = ports_of(w, l, ps);
    for (unsigned i = 0; i < n; i++) {
        add(w, at, kind, ps[i], x);
        if (kind == ACT_PORT_DOWN || kind == ACT_PORT_UP) {
            add(w, at + w->sc->net.ecmp_converge_ps, ACT_ECMP, ps[i], 0);
        }
    }
}

/* |count| distinct T0-T1 cables drawn from the run's generator. */
static sim_link_ref *random_cables(sim_world *w, unsigned count)
{
    uint32_t n = 0;
    sim_link_ref *all = NULL;
    for (uint32_t sw = 0; sw < w->nsws; sw++) {
        const sim_sw *s = &w->sws[sw];
        for (uint32_t j = 0; s->info.tier == FAB_TIER_T0 && j < s->nt1; j++) {
            if (s->t1_port[j] != SIM_NONE) {
                all = util_xrealloc(all, (n + 1) * sizeof(sim_link_ref));
                all[n++] = (sim_link_ref){sw, s->t1_port[j], SIM_DIR_BOTH};
            }
        }
    }
    count = count < n ? count : n;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t j = i + (uint32_t)(sim_rng_next(&w->rng) % (n - i));
        sim_link_ref t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    return all;
}

static void cables(sim_world *w, const sim_fault *f, uint64_t at, uint8_t kind, double x)
{
    sim_link_ref *rnd = f->random_links ? random_cables(w, f->random_links) : NULL;
    unsigned n = f->nlinks + f->random_links;
    for (unsigned i = 0; i < n; i++) {
        const sim_link_ref *l = i < f->nlinks ? &f->links[i] : &rnd[i - f->nlinks];
        uint64_t t = at + i * f->interval_ps;
        port_action(w, t, kind, l, x);
        if (kind == ACT_PORT_DOWN && f->duration_ps) {
            port_action(w, t + f->duration_ps, ACT_PORT_UP, l, 0);
        }
    }
    free(rnd);
}

int sim_fault_build(sim_world *w, char *errmsg, size_t errmsglen)
{
    (void)errmsg;
    (void)errmsglen;
    w->faults = util_xcalloc(1, sizeof(sim_faults));
    for (unsigned i = 0; i < w->sc->nfaults; i++) {
        const sim_fault *f = &w->sc->faults[i];
        switch (f->kind) {
        case SIM_FAULT_LINK_DOWN:
            cables(w, f, f->at_ps, ACT_PORT_DOWN, 0);
            break;
        case SIM_FAULT_LINK_UP:
            cables(w, f, f->at_ps, ACT_PORT_UP, 0);
            break;
        case SIM_FAULT_FLAP:
            for (unsigned c = 0; f->count == 0 || c < f->count; c++) {
                uint64_t t = f->at_ps + c * f->period_ps;
                if (t >= w->sc->end_ps || (c > 0 && f->period_ps == 0)) {
                    break;
                }
                sim_fault down = *f;
                cables(w, &down, t, ACT_PORT_DOWN, 0);
            }
            break;
        case SIM_FAULT_LOSS:
            if (f->all_links) {
                /* seen from each cable's upper end: IN is upward (host to T0, T0 to T1) */
                for (uint32_t p = 0; p < w->nports; p++) {
                    const sim_port *pt = &w->ports[p];
                    bool up = pt->from_host ||
                              (!pt->to_host && w->sws[pt->from].info.tier == FAB_TIER_T0);
                    if (f->hosts_only && !pt->from_host && !pt->to_host) {
                        continue;
                    }
                    if (f->dir == SIM_DIR_BOTH || (f->dir == SIM_DIR_IN) == up) {
                        add(w, f->at_ps, ACT_PORT_LOSS, p, f->loss);
                    }
                }
            } else {
                cables(w, f, f->at_ps, ACT_PORT_LOSS, f->loss);
            }
            break;
        case SIM_FAULT_EV_LOSS:
            add(w, f->at_ps, ACT_EV_LOSS, i, 0);
            break;
        case SIM_FAULT_BLACKHOLE:
            add(w, f->at_ps, ACT_BLACKHOLE, f->sw, 1);
            if (f->duration_ps) {
                add(w, f->at_ps + f->duration_ps, ACT_BLACKHOLE, f->sw, 0);
            }
            break;
        case SIM_FAULT_REBOOT:
            add(w, f->at_ps, ACT_SW_DOWN, f->sw, 0);
            add(w, f->at_ps + f->duration_ps, ACT_SW_UP, f->sw, 0);
            break;
        case SIM_FAULT_NIC_DOWN:
        case SIM_FAULT_NIC_UP: {
            const sim_host *h = &w->hosts[f->host];
            if (f->port < w->planes && h->t0[f->port] != SIM_NONE) {
                sim_link_ref l = {h->t0[f->port], h->t0_port[f->port], SIM_DIR_BOTH};
                port_action(w, f->at_ps,
                            f->kind == SIM_FAULT_NIC_DOWN ? ACT_PORT_DOWN : ACT_PORT_UP, &l, 0);
            }
            break;
        }
        }
    }
    return 0;
}

void sim_fault_free(sim_world *w)
{
    if (w->faults) {
        free(w->faults->acts);
        free(w->faults);
    }
    free(w->ev_loss);
    w->faults = NULL;
    w->ev_loss = NULL;
}

/* A cable direction changes: a NIC at either end notices; the engine is told. */
static void port_set(sim_world *w, uint32_t port, bool up)
{
    sim_port *pt = &w->ports[port];
    if (pt->up == up) {
        return;
    }
    sim_net_port_set(w, port, up);
    if (pt->from_host) {
        sim_host_port_state(w, pt->from, pt->from_port, up);
    } else if (pt->to_host) {
        sim_host_port_state(w, pt->to, pt->to_port, up);
    }
    if (up && !pt->from_host && !pt->busy) {
        sim_net_on_tx(w, port);
    }
}

static void switch_set(sim_world *w, uint32_t sw, bool up)
{
    sim_sw *s = &w->sws[sw];
    s->down = !up;
    for (unsigned x = 0; x < s->info.nports; x++) {
        uint32_t p = s->out[x];
        if (p == SIM_NONE) {
            continue;
        }
        uint32_t ps[2] = {p, w->ports[p].reverse};
        for (int k = 0; k < 2; k++) {
            if (ps[k] != SIM_NONE) {
                port_set(w, ps[k], up);
                add(w, w->q.now + w->sc->net.ecmp_converge_ps, ACT_ECMP, ps[k], 0);
            }
        }
    }
}

void sim_fault_on_event(sim_world *w, uint32_t index)
{
    const sim_action *a = &w->faults->acts[index];
    switch (a->kind) {
    case ACT_PORT_DOWN:
        port_set(w, a->a, false);
        break;
    case ACT_PORT_UP:
        port_set(w, a->a, true);
        break;
    case ACT_PORT_LOSS:
        w->ports[a->a].loss = a->x;
        break;
    case ACT_ECMP:
        w->ecmp_ok[a->a] = w->ports[a->a].up;
        break;
    case ACT_BLACKHOLE:
        w->sws[a->a].blackhole = a->x != 0;
        break;
    case ACT_SW_DOWN:
        switch_set(w, a->a, false);
        break;
    case ACT_SW_UP:
        switch_set(w, a->a, true);
        break;
    case ACT_EV_LOSS:
        w->ev_loss = util_xrealloc(w->ev_loss, (w->nev_loss + 1) * sizeof(*w->ev_loss));
        w->ev_loss[w->nev_loss++] = &w->sc->faults[a->a];
        break;
    }
}
