/* SPDX-License-Identifier: MIT */
/* Fabric elements by name, as denylist entries and probe results give them: a switch
 * ("p3-t1-17"), a T0-T1 link ("p3-t0-5~p3-t1-17", either order) or a host port ("h3:1").
 * The parser lives in libmrcfab (fab_element_parse), shared with the agents. */
#ifndef CTL_ELEMENT_H
#define CTL_ELEMENT_H

#include <mrcfab/fabric.h>
#include <stddef.h>
#include <stdint.h>

typedef fab_element_kind ctl_element_kind;
#define CTL_EL_SWITCH FAB_EL_SWITCH
#define CTL_EL_LINK FAB_EL_LINK
#define CTL_EL_PORT FAB_EL_PORT

typedef fab_element ctl_element;

/* Parses |name| into |el|. Returns 0, or -EINVAL with a sentence in |why| naming what is not
 * in the fabric (a link must be cabled, a host port must exist). */
int ctl_element_parse(const fab_topo *topo, const char *name, ctl_element *el, char *why,
                      size_t whylen);

#endif
