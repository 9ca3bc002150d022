/* SPDX-License-Identifier: MIT */
/* Reconciling one switch's kernel state with its computed table: plan the diff, then apply it. */
#ifndef CTL_INSTALL_H
#define CTL_INSTALL_H

#include <mrcfab/fabric.h>

#include "ctl_netlink.h"

typedef enum ctl_op {
    CTL_OP_ADD = 0,  /* wanted, absent */
    CTL_OP_CHANGE,   /* ours, present, different: replaced */
    CTL_OP_REMOVE,   /* ours (our protocol), no longer wanted */
    CTL_OP_CONFLICT, /* wanted, but a route or address we do not own holds its place */
} ctl_op;

typedef struct ctl_item {
    ctl_op op;
    bool is_addr;
    ctl_nl_route route; /* the wanted one, or the installed one for remove/conflict */
    ctl_nl_addr addr;
} ctl_item;

typedef struct ctl_plan {
    ctl_item *items;
    size_t n;
    size_t unchanged;
    size_t counts[4]; /* by ctl_op */
} ctl_plan;

/*
 * Compares what switch |sw| should hold with what |nl|'s namespace holds. Only routes of the
 * plan's table and protocol count as ours; anything else is never touched. Returns 0, or
 * -ENODEV when an interface the table names does not exist (|errmsg| lists them), or the
 * netlink error.
 */
int ctl_install_plan(const fab_topo *topo, const fab_tables *tables, uint32_t sw, ctl_nl *nl,
                     ctl_plan *plan, char *errmsg, size_t errmsglen);
/* Applies additions, changes and removals (conflicts are left alone). Stops at the first
 * failure; returns 0 or its negative errno. */
int ctl_install_apply(ctl_nl *nl, const ctl_plan *plan, char *errmsg, size_t errmsglen);
void ctl_plan_fini(ctl_plan *plan);

/* One line in iproute2 words: "route fcbb:bb00:800::/48 encap seg6local ... dev sr0". */
void ctl_item_describe(ctl_nl *nl, const ctl_item *item, char *dest, size_t destlen);
const char *ctl_op_name(ctl_op op);

#endif
