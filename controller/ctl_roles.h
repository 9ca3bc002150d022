/* SPDX-License-Identifier: MIT */
/* Who may call what: the one table of (method, endpoint) and the roles that may call it, which
 * the API's handlers consult and docs/controller.md shows (tests/controller/roles.sh checks
 * both). No role implies another: each row names every role it admits. */
#ifndef CTL_ROLES_H
#define CTL_ROLES_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* A role's bit in a mask; CTL_ROLE_BIT(UTIL_ROLE_NONE) admits a request without a token. */
#define CTL_ROLE_BIT(r) (1u << (unsigned)(r))

/* What a role admitted only for its own things may touch. */
typedef enum ctl_own {
    CTL_OWN_NONE = 0,
    CTL_OWN_HOST,    /* the host in the path or body is the token's NAME */
    CTL_OWN_PROBER,  /* denylist entries whose source is prober, not an operator's */
} ctl_own;

typedef struct ctl_route {
    const char *method;
    /* the path: {x} is one segment, a final * any rest */
    const char *pattern;
    /* NULL, or the query argument (e.g. "force=true") that narrows the row's roles; the
     * handler asks for it with ctl_roles_allow_q, the admission step cannot */
    const char *qualifier;
    unsigned roles;   /* CTL_ROLE_BIT of each role admitted */
    unsigned own;     /* CTL_ROLE_BIT of each admitted role held to |own_kind| */
    ctl_own own_kind;
    const char *what;
} ctl_route;

/* The table, |*pn| rows. */
const ctl_route *ctl_roles_table(size_t *pn);

/* The roles that may call |method| |path| (no query, no body: usable before the body is read)
 * into |*pmask|, and the row into |*prow| (either may be NULL). Returns 0, -ENOENT when no row
 * has the path, or -EPERM when rows have the path but none the method (405). */
int ctl_roles_need(const char *method, const char *path, unsigned *pmask,
                   const ctl_route **prow);
/* Whether |role| may call |method| |path| (false for a path or method of no row). */
bool ctl_roles_allow(const char *method, const char *path, util_role role);
/* The same for the row of |qualifier| (a query argument, "force=true"). */
bool ctl_roles_allow_q(const char *method, const char *path, const char *qualifier,
                       util_role role);
/* Whether the row holds |role| to its own things (then |*pkind| says which). */
bool ctl_roles_own(const char *method, const char *path, util_role role, ctl_own *pkind);
/* The roles of |mask| as "agent, prober", into |dest|. */
void ctl_roles_names(unsigned mask, char *dest, size_t destlen);

#endif
