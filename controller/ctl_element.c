/* SPDX-License-Identifier: MIT */
/* Element names into the fabric model, checked against the cabling so that an entry never
 * names a link that is not there. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl_element.h"

static int parse_switch(const fab_topo *topo, const char *name, fab_switch *s, uint32_t *psw)
{
    *psw = fab_switch_find(topo, name);
    return *psw != FAB_NONE && fab_switch_get(topo, *psw, s) == 0 ? 0 : -EINVAL;
}

int ctl_element_parse(const fab_topo *topo, const char *name, ctl_element *el, char *why,
                      size_t whylen)
{
    memset(el, 0, sizeof(*el));
    fab_switch s;
    const char *tilde = strchr(name, '~');
    if (!tilde) {
        unsigned port;
        if (parse_switch(topo, name, &s, &el->sw) == 0) {
            el->kind = CTL_EL_SWITCH;
            el->plane = s.plane;
            el->tier = s.tier;
            el->index = s.index;
            return 0;
        }
        if (strchr(name, ':') && fab_hostport_parse(topo, name, &el->host, &port) == 0 &&
            port < fab_topo_planes(topo)) {
            el->kind = CTL_EL_PORT;
            el->plane = port;
            return 0;
        }
        snprintf(why, whylen,
                 "'%s' is no switch or host port of fabric '%s' (a link is 'SWITCH~SWITCH')", name,
                 fab_topo_name(topo));
        return -EINVAL;
    }
    char a[96];
    snprintf(a, sizeof(a), "%.*s", (int)(tilde - name), name);
    fab_switch s1;
    uint32_t x, y;
    if (parse_switch(topo, a, &s, &x) != 0 || parse_switch(topo, tilde + 1, &s1, &y) != 0) {
        snprintf(why, whylen, "'%s' is no switch of fabric '%s'",
                 fab_switch_find(topo, a) == FAB_NONE ? a : tilde + 1, fab_topo_name(topo));
        return -EINVAL;
    }
    if (s.tier == FAB_TIER_T1) { /* T0 first */
        fab_switch t = s;
        s = s1;
        s1 = t;
        uint32_t u = x;
        x = y;
        y = u;
    }
    for (unsigned p = 0; s.tier == FAB_TIER_T0 && s1.tier == FAB_TIER_T1 && p < s.nports; p++) {
        fab_peer peer;
        if (fab_switch_peer(topo, x, p, &peer) == 0 && peer.kind == FAB_PEER_SWITCH &&
            peer.id == y) {
            el->kind = CTL_EL_LINK;
            el->plane = s.plane;
            el->t0 = s.index;
            el->t1 = s1.index;
            return 0;
        }
    }
    snprintf(why, whylen, "no cable joins %s and %s", a, tilde + 1);
    return -EINVAL;
}
