/* SPDX-License-Identifier: MIT */
/* Element names into the fabric model, checked against the cabling so that an entry never
 * names a link that is not there: libmrcfab's parser, with the daemon's error codes. */
#include <errno.h>

#include "ctl_element.h"

int ctl_element_parse(const fab_topo *topo, const char *name, ctl_element *el, char *why,
                      size_t whylen)
{
    return fab_element_parse(topo, name, el, why, whylen) == 0 ? 0 : -EINVAL;
}
