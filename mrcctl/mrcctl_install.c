/* SPDX-License-Identifier: MIT */
/* Plans and applies the difference between a switch's table and its kernel, owning only the
 * routes and addresses marked with our protocol number. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <linux/seg6_local.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl_install.h"
#include "util.h"

#define METRIC 1024 /* the kernel's default for IPv6; set explicitly so keys compare */

static void push(mrcctl_plan *plan, size_t *cap, const mrcctl_item *item)
{
    if (plan->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        plan->items = util_xrealloc(plan->items, *cap * sizeof(*plan->items));
    }
    plan->items[plan->n++] = *item;
    plan->counts[item->op]++;
}

static bool same_key(const mrcctl_nl_route *a, const mrcctl_nl_route *b)
{
    return a->table == b->table && a->dst_len == b->dst_len && a->priority == b->priority &&
           memcmp(a->dst, b->dst, 16) == 0;
}

static bool same_route(const mrcctl_nl_route *a, const mrcctl_nl_route *b)
{
    if (a->oif != b->oif || a->type != b->type || a->has_gw != b->has_gw ||
        (a->has_gw && memcmp(a->gw, b->gw, 16) != 0) || a->seg6local != b->seg6local) {
        return false;
    }
    return !a->seg6local ||
           (a->action == b->action && a->flv_ops == b->flv_ops && a->lblen == b->lblen &&
            a->nflen == b->nflen && a->counters == b->counters);
}

/* The wanted routes and addresses of |sw|, resolving interface names in |nl|'s namespace. */
static int wanted(const fab_topo *topo, const fab_tables *tables, uint32_t sw, mrcctl_nl *nl,
                  mrcctl_nl_route **proutes, mrcctl_nl_addr **paddrs, size_t *pn, char *errmsg,
                  size_t errmsglen)
{
    const fab_plan *fp = fab_topo_plan(topo);
    fab_switch info;
    size_t n, missing = 0, used = 0;
    const fab_route *r = fab_tables_routes(tables, sw, &n);
    fab_switch_get(topo, sw, &info);
    mrcctl_nl_route *routes = util_xcalloc(n, sizeof(*routes));
    mrcctl_nl_addr *addrs = util_xcalloc(n, sizeof(*addrs));
    errmsg[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        mrcctl_nl_route *w = &routes[i];
        char ifname[FAB_IFNAME_MAX];
        if (r[i].action == FAB_ACT_UN) {
            snprintf(ifname, sizeof(ifname), "%s", info.sid_device);
        } else {
            fab_switch_ifname(topo, sw, r[i].port, ifname, sizeof(ifname));
        }
        int ifindex = mrcctl_nl_ifindex(nl, ifname);
        if (ifindex <= 0) {
            if (missing++ < 8) {
                used += (size_t)snprintf(errmsg + used, errmsglen - used, "%s%s",
                                         missing > 1 ? ", " : "", ifname);
                used = used < errmsglen ? used : errmsglen - 1;
            }
            continue;
        }
        fab_route_prefix(topo, &r[i], w->dst);
        w->dst_len = 48;
        w->table = fp->route_table;
        w->protocol = fp->route_proto;
        w->priority = METRIC;
        w->type = RTN_UNICAST;
        w->oif = ifindex;
        if (r[i].action == FAB_ACT_UN) {
            w->seg6local = true;
            w->action = SEG6_LOCAL_ACTION_END;
            w->flv_ops = 1u << SEG6_LOCAL_FLV_OP_NEXT_CSID;
            w->lblen = 32;
            w->nflen = 16;
            w->counters = true;
            continue;
        }
        if (r[i].peer_kind == FAB_PEER_SWITCH) {
            w->has_gw = true;
            fab_route_nexthop(topo, &r[i], w->gw);
        }
        mrcctl_nl_addr *a = &addrs[i];
        a->ifindex = ifindex;
        fab_switch_port_lladdr(topo, sw, r[i].port, a->addr);
        a->plen = 64;
        a->proto = fp->route_proto;
    }
    if (missing) {
        char list[512];
        snprintf(list, sizeof(list), "%s", errmsg);
        snprintf(errmsg, errmsglen, "%s needs %zu interface%s that do not exist: %s%s", info.name,
                 missing, missing > 1 ? "s" : "", list, missing > 8 ? ", ..." : "");
        free(routes);
        free(addrs);
        return -ENODEV;
    }
    *proutes = routes;
    *paddrs = addrs;
    *pn = n;
    return 0;
}

int mrcctl_install_plan(const fab_topo *topo, const fab_tables *tables, uint32_t sw, mrcctl_nl *nl,
                     mrcctl_plan *plan, char *errmsg, size_t errmsglen)
{
    const fab_plan *fp = fab_topo_plan(topo);
    mrcctl_nl_route *want = NULL, *have = NULL;
    mrcctl_nl_addr *wantaddr = NULL, *haveaddr = NULL;
    size_t nwant = 0, nhave = 0, nhaveaddr = 0, cap = 0;
    bool *matched = NULL;
    int rv;
    memset(plan, 0, sizeof(*plan));
    if ((rv = wanted(topo, tables, sw, nl, &want, &wantaddr, &nwant, errmsg, errmsglen)) != 0 ||
        (rv = mrcctl_nl_routes_dump(nl, &have, &nhave, errmsg, errmsglen)) != 0 ||
        (rv = mrcctl_nl_addrs_dump(nl, &haveaddr, &nhaveaddr, errmsg, errmsglen)) != 0) {
        goto out;
    }
    /* a table is O(radix) routes; the quadratic match stays well under a millisecond */
    matched = util_xcalloc(nhave + 1, sizeof(bool));
    for (size_t i = 0; i < nwant; i++) {
        mrcctl_item item = {.route = want[i]};
        size_t k;
        for (k = 0; k < nhave; k++) {
            if (have[k].table == fp->route_table && same_key(&have[k], &want[i])) {
                break;
            }
        }
        if (k == nhave) {
            item.op = MRCCTL_OP_ADD;
        } else {
            matched[k] = true;
            if (have[k].protocol != fp->route_proto) {
                item.op = MRCCTL_OP_CONFLICT;
                item.route = have[k];
            } else if (same_route(&have[k], &want[i])) {
                plan->unchanged++;
                continue;
            } else {
                item.op = MRCCTL_OP_CHANGE;
            }
        }
        push(plan, &cap, &item);
    }
    for (size_t k = 0; k < nhave; k++) {
        if (!matched[k] && have[k].table == fp->route_table &&
            have[k].protocol == fp->route_proto) {
            mrcctl_item item = {.op = MRCCTL_OP_REMOVE, .route = have[k]};
            push(plan, &cap, &item);
        }
    }
    free(matched);
    matched = util_xcalloc(nhaveaddr + 1, sizeof(bool));
    for (size_t i = 0; i < nwant; i++) {
        if (wantaddr[i].ifindex == 0) {
            continue; /* the uN route has no address */
        }
        size_t k;
        for (k = 0; k < nhaveaddr; k++) {
            if (haveaddr[k].ifindex == wantaddr[i].ifindex &&
                memcmp(haveaddr[k].addr, wantaddr[i].addr, 16) == 0) {
                break;
            }
        }
        if (k < nhaveaddr) {
            matched[k] = true;
            plan->unchanged++;
            continue;
        }
        mrcctl_item item = {.op = MRCCTL_OP_ADD, .is_addr = true, .addr = wantaddr[i]};
        push(plan, &cap, &item);
    }
    for (size_t k = 0; k < nhaveaddr; k++) {
        if (!matched[k] && haveaddr[k].proto == fp->route_proto) {
            mrcctl_item item = {.op = MRCCTL_OP_REMOVE, .is_addr = true, .addr = haveaddr[k]};
            push(plan, &cap, &item);
        }
    }
out:
    free(matched);
    free(want);
    free(have);
    free(wantaddr);
    free(haveaddr);
    if (rv != 0) {
        mrcctl_plan_fini(plan);
    }
    return rv;
}

static int apply_one(mrcctl_nl *nl, const mrcctl_item *it, char *errmsg, size_t errmsglen)
{
    if (it->is_addr) {
        return it->op == MRCCTL_OP_ADD ? mrcctl_nl_addr_add(nl, &it->addr, errmsg, errmsglen)
                                    : mrcctl_nl_addr_del(nl, &it->addr, errmsg, errmsglen);
    }
    switch (it->op) {
    case MRCCTL_OP_ADD:
        return mrcctl_nl_route_add(nl, &it->route, false, errmsg, errmsglen);
    case MRCCTL_OP_CHANGE:
        return mrcctl_nl_route_add(nl, &it->route, true, errmsg, errmsglen);
    case MRCCTL_OP_REMOVE:
        return mrcctl_nl_route_del(nl, &it->route, errmsg, errmsglen);
    default:
        return 0;
    }
}

int mrcctl_install_apply(mrcctl_nl *nl, const mrcctl_plan *plan, char *errmsg, size_t errmsglen)
{
    /* addresses first (neighbours resolve our link-locals), stale routes before new ones */
    static const struct {
        bool is_addr;
        mrcctl_op op;
    } order[] = {{true, MRCCTL_OP_ADD},
                 {false, MRCCTL_OP_REMOVE},
                 {false, MRCCTL_OP_CHANGE},
                 {false, MRCCTL_OP_ADD},
                 {true, MRCCTL_OP_REMOVE}};
    for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
        for (size_t i = 0; i < plan->n; i++) {
            const mrcctl_item *it = &plan->items[i];
            if (it->is_addr != order[o].is_addr || it->op != order[o].op) {
                continue;
            }
            char what[512], why[512];
            int rv = apply_one(nl, it, why, sizeof(why));
            if (rv != 0) {
                mrcctl_item_describe(nl, it, what, sizeof(what));
                snprintf(errmsg, errmsglen, "%s %s: %s", mrcctl_op_name(it->op), what, why);
                return rv;
            }
        }
    }
    return 0;
}

void mrcctl_plan_fini(mrcctl_plan *plan)
{
    free(plan->items);
    memset(plan, 0, sizeof(*plan));
}

const char *mrcctl_op_name(mrcctl_op op)
{
    static const char *const names[] = {"add", "change", "remove", "conflict"};
    return op <= MRCCTL_OP_CONFLICT ? names[op] : "?";
}

void mrcctl_item_describe(mrcctl_nl *nl, const mrcctl_item *it, char *dest, size_t destlen)
{
    char addr[48], gw[48], dev[32];
    if (it->is_addr) {
        mrcctl_nl_ifname(nl, it->addr.ifindex, dev, sizeof(dev));
        snprintf(dest, destlen, "address %s/%u dev %s", fab_addr_str(it->addr.addr, addr),
                 it->addr.plen, dev);
        return;
    }
    const mrcctl_nl_route *r = &it->route;
    mrcctl_nl_ifname(nl, r->oif, dev, sizeof(dev));
    fab_addr_str(r->dst, addr);
    if (r->seg6local) {
        snprintf(dest, destlen,
                 "route %s/%u encap seg6local action %s%s lblen %u nflen %u%s dev %s proto %u "
                 "table %u",
                 addr, r->dst_len, r->action == SEG6_LOCAL_ACTION_END ? "End" : "other",
                 (r->flv_ops & (1u << SEG6_LOCAL_FLV_OP_NEXT_CSID)) ? " flavors next-csid" : "",
                 r->lblen, r->nflen, r->counters ? " count" : "", dev, r->protocol, r->table);
    } else if (r->has_gw) {
        snprintf(dest, destlen, "route %s/%u via %s dev %s proto %u table %u", addr, r->dst_len,
                 fab_addr_str(r->gw, gw), dev, r->protocol, r->table);
    } else {
        snprintf(dest, destlen, "route %s/%u dev %s proto %u table %u", addr, r->dst_len, dev,
                 r->protocol, r->table);
    }
}
