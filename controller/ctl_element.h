/* SPDX-License-Identifier: MIT */
/* Fabric elements by name, as denylist entries and probe results give them: a switch
 * ("p3-t1-17"), a T0-T1 link ("p3-t0-5~p3-t1-17", either order) or a host port ("h3:1"). */
#ifndef CTL_ELEMENT_H
#define CTL_ELEMENT_H

#include <mrcfab/fabric.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ctl_element_kind { CTL_EL_SWITCH, CTL_EL_LINK, CTL_EL_PORT } ctl_element_kind;

typedef struct ctl_element {
    ctl_element_kind kind;
    unsigned plane;
    uint32_t sw;    /* switch: its id */
    fab_tier tier;  /* switch: its tier */
    unsigned index; /* switch: its T0 or T1 index in the plane */
    unsigned t0, t1; /* link: the T0 index a and the T1 index j */
    uint32_t host;  /* host port: the host; its port is |plane| */
} ctl_element;

/* Parses |name| into |el|. Returns 0, or -EINVAL with a sentence in |why| naming what is not
 * in the fabric (a link must be cabled, a host port must exist). */
int ctl_element_parse(const fab_topo *topo, const char *name, ctl_element *el, char *why,
                      size_t whylen);

#endif
