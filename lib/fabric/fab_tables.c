/* SPDX-License-Identifier: MIT */
/* Static tables: each switch's uN SID and one /48 route per neighbour uSID, O(radix) each. */
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

struct fab_tables {
    const fab_topo *topo;
    fab_route *routes;
    uint64_t *off; /* nsw + 1 */
};

int fab_tables_compute(const fab_topo *topo, fab_tables **ptables)
{
    fab_tables *t = calloc(1, sizeof(*t));
    if (!t) {
        return FAB_ERR_NOMEM;
    }
    t->topo = topo;
    t->off = malloc(((size_t)topo->nsw + 1) * sizeof(uint64_t));
    /* one uN per switch plus at most one route per cabled port */
    t->routes = malloc(((size_t)topo->nsw + topo->nports) * sizeof(fab_route) + 1);
    if (!t->off || !t->routes) {
        fab_tables_free(t);
        return FAB_ERR_NOMEM;
    }
    const fab_plan *plan = &topo->plan;
    uint64_t n = 0;
    for (uint32_t i = 0; i < topo->nsw; i++) {
        const fab_sw *s = &topo->sw[i];
        t->off[i] = n;
        t->routes[n++] = (fab_route){.usid = s->usid, .action = FAB_ACT_UN};
        for (unsigned x = 0; x < s->nports; x++) {
            const fab_port *pt = &topo->ports[s->port0 + x];
            fab_route *r = &t->routes[n];
            if (pt->peer_kind == FAB_PEER_SWITCH) {
                r->usid = topo->sw[pt->peer].usid;
            } else if (pt->peer_kind == FAB_PEER_HOST) {
                r->usid = fab_plan_usid(plan, s->plane, plan->kind_dl, x);
            } else {
                continue;
            }
            r->action = FAB_ACT_FORWARD;
            r->peer_kind = pt->peer_kind;
            r->port = (uint16_t)x;
            r->peer_port = pt->peer_port;
            r->peer = pt->peer;
            n++;
        }
    }
    t->off[topo->nsw] = n;
    *ptables = t;
    return 0;
}

void fab_tables_free(fab_tables *tables)
{
    if (!tables) {
        return;
    }
    free(tables->routes);
    free(tables->off);
    free(tables);
}

const fab_route *fab_tables_routes(const fab_tables *tables, uint32_t sw, size_t *pn)
{
    if (sw >= tables->topo->nsw) {
        *pn = 0;
        return NULL;
    }
    *pn = (size_t)(tables->off[sw + 1] - tables->off[sw]);
    return tables->routes + tables->off[sw];
}

uint64_t fab_tables_nroutes(const fab_tables *tables)
{
    return tables->off[tables->topo->nsw];
}

void fab_route_prefix(const fab_topo *topo, const fab_route *route, uint8_t dest[16])
{
    fab_plan_container(&topo->plan, &route->usid, 1, dest);
}

void fab_route_nexthop(const fab_topo *topo, const fab_route *route, uint8_t dest[16])
{
    if (route->action == FAB_ACT_FORWARD && route->peer_kind == FAB_PEER_SWITCH) {
        fab_switch_port_lladdr(topo, route->peer, route->peer_port, dest);
    } else {
        memset(dest, 0, 16);
    }
}
