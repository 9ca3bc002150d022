/* SPDX-License-Identifier: MIT */
/* Reconciling one switch's kernel state with its computed table: plan the diff, then apply it. */
#ifndef MRCCTL_INSTALL_H
#define MRCCTL_INSTALL_H

#include <mrcfab/fabric.h>

#include "mrcctl_netlink.h"

typedef enum mrcctl_op {
    MRCCTL_OP_ADD = 0,  /* wanted, absent */
    MRCCTL_OP_CHANGE,   /* ours, present, different: replaced */
    MRCCTL_OP_REMOVE,   /* ours (our protocol), no longer wanted */
    MRCCTL_OP_CONFLICT, /* wanted, but a route or address we do not own holds its place */
} mrcctl_op;

typedef struct mrcctl_item {
    mrcctl_op op;
    bool is_addr;
    mrcctl_nl_route route; /* the wanted one, or the installed one for remove/conflict */
    mrcctl_nl_addr addr;
} mrcctl_item;

typedef struct mrcctl_plan {
    mrcctl_item *items;
    size_t n;
    size_t unchanged;
    size_t counts[4]; /* by mrcctl_op */
} mrcctl_plan;

/*
 * Compares what switch |sw| should hold with what |nl|'s namespace holds. Only routes of the
 * plan's table and protocol count as ours; anything else is never touched. Returns 0, or
 * -ENODEV when an interface the table names does not exist (|errmsg| lists them), or the
 * netlink error.
 */
int mrcctl_install_plan(const fab_topo *topo, const fab_tables *tables, uint32_t sw, mrcctl_nl *nl,
                     mrcctl_plan *plan, char *errmsg, size_t errmsglen);
/* Applies additions, changes and removals (conflicts are left alone). Stops at the first
 * failure; returns 0 or its negative errno. */
int mrcctl_install_apply(mrcctl_nl *nl, const mrcctl_plan *plan, char *errmsg, size_t errmsglen);
void mrcctl_plan_fini(mrcctl_plan *plan);

/* One line in iproute2 words: "route fcbb:bb00:800::/48 encap seg6local ... dev sr0". */
void mrcctl_item_describe(mrcctl_nl *nl, const mrcctl_item *item, char *dest, size_t destlen);
const char *mrcctl_op_name(mrcctl_op op);

#endif
