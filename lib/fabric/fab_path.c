/* SPDX-License-Identifier: MIT */
/* Paths between host ports, the per-QP address template, and decoding outer addresses. */
#include <string.h>

#include "fab_internal.h"

/* Whether T0 |t0| has its cable to T1 index |j| (a declared-missing cable breaks the path). */
static bool uplink_ok(const fab_topo *topo, uint32_t t0, unsigned j)
{
    const fab_sw *s = &topo->sw[t0];
    uint32_t t1 = topo->t1_of[s->plane][j];
    /* parametric fabrics put uplink j on port d + j; explicit ones may cable any port */
    if (topo->dl_ports && topo->dl_ports + j < s->nports) {
        const fab_port *pt = &topo->ports[s->port0 + topo->dl_ports + j];
        return pt->peer_kind == FAB_PEER_SWITCH && pt->peer == t1;
    }
    for (unsigned x = 0; x < s->nports; x++) {
        const fab_port *pt = &topo->ports[s->port0 + x];
        if (pt->peer_kind == FAB_PEER_SWITCH && pt->peer == t1) {
            return true;
        }
    }
    return false;
}

static void fill_path(const fab_topo *topo, uint32_t a, uint32_t b, unsigned bport, unsigned p,
                      int j, fab_path *path)
{
    const fab_plan *plan = &topo->plan;
    uint16_t u[4];
    size_t n = 0;
    memset(path, 0, sizeof(*path));
    path->plane = p;
    path->t1 = j;
    path->ev = fab_ev_make(plan, p, j < 0 ? 0 : (unsigned)j, 0);
    path->hops[path->nhops++] = a;
    u[n++] = topo->sw[a].usid;
    path->usable = true;
    if (j >= 0) {
        uint32_t t1 = topo->t1_of[p][j];
        path->hops[path->nhops++] = t1;
        path->hops[path->nhops++] = b;
        u[n++] = topo->sw[t1].usid;
        u[n++] = topo->sw[b].usid;
        path->usable = uplink_ok(topo, a, (unsigned)j) && uplink_ok(topo, b, (unsigned)j);
    }
    u[n++] = fab_plan_usid(plan, p, plan->kind_dl, bport);
    fab_plan_container(plan, u, n, path->outer);
}

int fab_path_enum(const fab_topo *topo, uint32_t src, unsigned sport, uint32_t dst, unsigned dport,
                  fab_path *paths, size_t maxpaths, size_t *pnpaths)
{
    uint32_t a, b;
    unsigned ax, bx;
    if (sport != dport || (src == dst) || fab_host_attach(topo, src, sport, &a, &ax) != 0 ||
        fab_host_attach(topo, dst, dport, &b, &bx) != 0) {
        return FAB_ERR_INVAL;
    }
    unsigned p = sport;
    size_t n = a == b ? 1 : topo->nt1[p];
    *pnpaths = n;
    if (n > maxpaths) {
        return FAB_ERR_NOSPACE;
    }
    if (a == b) {
        fill_path(topo, a, b, bx, p, -1, &paths[0]);
        return 0;
    }
    for (size_t j = 0; j < n; j++) {
        fill_path(topo, a, b, bx, p, (int)j, &paths[j]);
    }
    return 0;
}

int fab_path_of_ev(const fab_topo *topo, uint32_t src, uint32_t dst, uint32_t ev, fab_path *ppath)
{
    const fab_plan *plan = &topo->plan;
    unsigned p = fab_ev_plane(plan, ev), j = fab_ev_t1(plan, ev);
    uint32_t a, b;
    unsigned ax, bx;
    if (p >= topo->planes || src == dst || fab_host_attach(topo, src, p, &a, &ax) != 0 ||
        fab_host_attach(topo, dst, p, &b, &bx) != 0) {
        return FAB_ERR_INVAL;
    }
    /* an EV is valid when its T1 exists, even where the path does not cross a T1 */
    if (j >= topo->nt1[p]) {
        return FAB_ERR_INVAL;
    }
    fill_path(topo, a, b, bx, p, a == b ? -1 : (int)j, ppath);
    ppath->ev = ev;
    return 0;
}

int fab_template_init(const fab_topo *topo, uint32_t src, uint32_t dst, fab_template *tmpl)
{
    const fab_plan *plan = &topo->plan;
    memset(tmpl, 0, sizeof(*tmpl));
    if (src == dst) {
        return FAB_ERR_INVAL;
    }
    tmpl->plane_shift = (uint8_t)(32 - plan->plane_bits);
    tmpl->t1_shift = (uint8_t)(32 - plan->plane_bits - plan->index_bits);
    tmpl->t1_mask = (1u << plan->index_bits) - 1;
    for (unsigned p = 0; p < topo->planes; p++) {
        uint32_t a, b;
        unsigned ax, bx;
        if (fab_host_attach(topo, src, p, &a, &ax) != 0 ||
            fab_host_attach(topo, dst, p, &b, &bx) != 0) {
            continue;
        }
        uint16_t u[4];
        size_t n = 0;
        u[n++] = topo->sw[a].usid;
        if (a != b) {
            u[n++] = 0; /* the T1 slot, written per packet */
            u[n++] = topo->sw[b].usid;
        }
        u[n++] = fab_plan_usid(plan, p, plan->kind_dl, bx);
        fab_plan_container(plan, u, n, tmpl->base[p]);
        tmpl->local[p] = a == b;
        tmpl->t1_usid[p] = topo->t1_usid[p];
        tmpl->nt1[p] = (uint16_t)topo->nt1[p];
        tmpl->planes_ok |= (uint16_t)(1u << p);
    }
    return tmpl->planes_ok ? 0 : FAB_ERR_INVAL;
}

int fab_template_outer(const fab_template *tmpl, uint32_t ev, uint8_t dest[16])
{
    unsigned p = ev >> tmpl->plane_shift;
    unsigned j = (ev >> tmpl->t1_shift) & tmpl->t1_mask;
    if (p >= FAB_MAX_PLANES || !(tmpl->planes_ok & (1u << p))) {
        return FAB_ERR_INVAL;
    }
    if (j >= tmpl->nt1[p]) {
        return FAB_ERR_INVAL;
    }
    memcpy(dest, tmpl->base[p], 16);
    if (!tmpl->local[p]) {
        uint16_t u = tmpl->t1_usid[p][j];
        dest[6] = (uint8_t)(u >> 8);
        dest[7] = (uint8_t)u;
    }
    return 0;
}

static uint16_t usid_at(const uint8_t addr[16], int slot)
{
    return (uint16_t)(addr[4 + 2 * slot] << 8 | addr[5 + 2 * slot]);
}

int fab_outer_decode(const fab_topo *topo, const uint8_t addr[16], fab_outer *pout)
{
    const fab_plan *plan = &topo->plan;
    if (memcmp(addr, plan->block, 4) != 0) {
        return FAB_ERR_INVAL;
    }
    uint16_t u[6];
    int n = 0;
    for (int i = 0; i < 6; i++) {
        u[i] = usid_at(addr, i);
    }
    while (n < 6 && u[n] != 0) {
        n++;
    }
    for (int i = n; i < 6; i++) {
        if (u[i] != 0) {
            return FAB_ERR_INVAL;
        }
    }
    if (n != 2 && n != 4) {
        return FAB_ERR_INVAL;
    }
    uint32_t a = topo->usid_sw[u[0]];
    uint32_t t1 = n == 4 ? topo->usid_sw[u[1]] : FAB_NONE;
    uint32_t b = n == 4 ? topo->usid_sw[u[2]] : a;
    unsigned kdl = (u[n - 1] >> plan->index_bits) & ((1u << plan->kind_bits) - 1);
    unsigned x = u[n - 1] & ((1u << plan->index_bits) - 1);
    if (a == FAB_NONE || b == FAB_NONE || topo->sw[a].tier != FAB_TIER_T0 ||
        topo->sw[b].tier != FAB_TIER_T0 || topo->sw[a].plane != topo->sw[b].plane ||
        kdl != plan->kind_dl || x >= topo->sw[b].nports ||
        u[n - 1] != fab_plan_usid(plan, topo->sw[b].plane, plan->kind_dl, x)) {
        return FAB_ERR_INVAL;
    }
    if (n == 4 && (t1 == FAB_NONE || topo->sw[t1].tier != FAB_TIER_T1 ||
                   topo->sw[t1].plane != topo->sw[a].plane || a == b)) {
        return FAB_ERR_INVAL;
    }
    /* only a down-port with a host on it ends a path: nothing owns the others' addresses */
    if (topo->ports[topo->sw[b].port0 + x].peer_kind != FAB_PEER_HOST) {
        return FAB_ERR_INVAL;
    }
    pout->plane = topo->sw[a].plane;
    pout->src_t0 = a;
    pout->t1 = t1;
    pout->dst_t0 = b;
    pout->dst_port = x;
    return 0;
}
