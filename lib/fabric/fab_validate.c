/* SPDX-License-Identifier: MIT */
/* Whole-fabric checks after loading: indexes, uSIDs, the T0–T1 mesh and host cabling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

static bool is_explicit(const fab_topo *topo)
{
    return topo->dl_ports == 0;
}

/* The JSON path that describes switch |sw|: its object, or its override, or the document. */
static void sw_path(const fab_topo *topo, uint32_t sw, const char *suffix, bool usid, char *dest,
                    size_t destlen)
{
    if (usid && topo->sw[sw].pinned == 2) {
        snprintf(dest, destlen, "$.overrides.switches.%s%s", fab_str(topo, topo->sw[sw].name),
                 suffix);
    } else if (is_explicit(topo)) {
        snprintf(dest, destlen, "$.switches[%u]%s", sw, suffix);
    } else {
        snprintf(dest, destlen, "$");
    }
}

static const char *tier_name(unsigned tier)
{
    return tier == FAB_TIER_T0 ? "T0" : "T1";
}

static int index_planes(fab_topo *topo, fab_error *perr)
{
    char path[FAB_PATH_MAX];
    for (unsigned p = 0; p < topo->planes; p++) {
        topo->t0_of[p] = malloc((topo->nt0[p] + 1) * sizeof(uint32_t));
        topo->t1_of[p] = malloc((topo->nt1[p] + 1) * sizeof(uint32_t));
        topo->t1_usid[p] = calloc(topo->nt1[p] + 1, sizeof(uint16_t));
        if (!topo->t0_of[p] || !topo->t1_of[p] || !topo->t1_usid[p]) {
            return FAB_ERR_NOMEM;
        }
        memset(topo->t0_of[p], 0xff, (topo->nt0[p] + 1) * sizeof(uint32_t));
        memset(topo->t1_of[p], 0xff, (topo->nt1[p] + 1) * sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < topo->nsw; i++) {
        const fab_sw *s = &topo->sw[i];
        uint32_t *slot = s->tier == FAB_TIER_T0 ? &topo->t0_of[s->plane][s->index]
                                                : &topo->t1_of[s->plane][s->index];
        if (*slot != FAB_NONE) {
            sw_path(topo, i, ".index", false, path, sizeof(path));
            fab_error_set(perr, path, "'%s' has the same plane, tier and index as '%s'",
                          fab_str(topo, s->name), fab_str(topo, topo->sw[*slot].name));
            return FAB_ERR_INVAL;
        }
        *slot = i;
    }
    for (unsigned p = 0; p < topo->planes; p++) {
        for (int t = 0; t < 2; t++) {
            uint32_t n = t == 0 ? topo->nt0[p] : topo->nt1[p];
            uint32_t *of = t == 0 ? topo->t0_of[p] : topo->t1_of[p];
            if (n == 0) {
                fab_error_set(perr, is_explicit(topo) ? "$.switches" : "$",
                              "plane %u has no %s switch", p, tier_name((unsigned)t));
                return FAB_ERR_INVAL;
            }
            for (uint32_t k = 0; k < n; k++) {
                if (of[k] == FAB_NONE) {
                    fab_error_set(perr, "$.switches",
                                  "plane %u has no %s with index %u (indexes run from 0 "
                                  "without gaps; the highest is %u)",
                                  p, tier_name((unsigned)t), k, n - 1);
                    return FAB_ERR_INVAL;
                }
            }
        }
    }
    return 0;
}

static int assign_usids(fab_topo *topo, fab_error *perr)
{
    const fab_plan *plan = &topo->plan;
    char path[FAB_PATH_MAX];
    topo->usid_sw = malloc(65536 * sizeof(uint32_t));
    if (!topo->usid_sw) {
        return FAB_ERR_NOMEM;
    }
    memset(topo->usid_sw, 0xff, 65536 * sizeof(uint32_t));
    for (uint32_t i = 0; i < topo->nsw; i++) {
        fab_sw *s = &topo->sw[i];
        if (!s->pinned) {
            unsigned kind = s->tier == FAB_TIER_T0 ? plan->kind_t0 : plan->kind_t1;
            s->usid = fab_plan_usid(plan, s->plane, kind, s->index);
        } else if (((s->usid >> plan->index_bits) & ((1u << plan->kind_bits) - 1)) ==
                   plan->kind_dl) {
            /* every T0 routes the whole down-link kind, so a switch there would be shadowed */
            sw_path(topo, i, ".usid", true, path, sizeof(path));
            fab_error_set(perr, path,
                          "uSID 0x%04x of '%s' collides with the down-link uSIDs (kind %u)",
                          s->usid, fab_str(topo, s->name), plan->kind_dl);
            return FAB_ERR_INVAL;
        }
    }
    /* pinned first so that a collision blames a pinned switch, not a derived one */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < topo->nsw; i++) {
            fab_sw *s = &topo->sw[i];
            if (!!s->pinned != (pass == 0)) {
                continue;
            }
            uint32_t other = topo->usid_sw[s->usid];
            if (other != FAB_NONE) {
                uint32_t blamed = topo->sw[other].pinned && !s->pinned ? other : i;
                uint32_t with = blamed == i ? other : i;
                sw_path(topo, blamed, ".usid", true, path, sizeof(path));
                fab_error_set(perr, path, "uSID 0x%04x of '%s' collides with '%s'", s->usid,
                              fab_str(topo, topo->sw[blamed].name),
                              fab_str(topo, topo->sw[with].name));
                return FAB_ERR_INVAL;
            }
            topo->usid_sw[s->usid] = i;
            if (s->tier == FAB_TIER_T1) {
                topo->t1_usid[s->plane][s->index] = s->usid;
            }
        }
    }
    return 0;
}

/* Every T0 must reach every T1 of its plane exactly once, unless the cable is declared missing. */
static int check_mesh(fab_topo *topo, fab_error *perr)
{
    char path[FAB_PATH_MAX];
    uint32_t maxt1 = 0;
    for (unsigned p = 0; p < topo->planes; p++) {
        maxt1 = topo->nt1[p] > maxt1 ? topo->nt1[p] : maxt1;
    }
    int32_t *seen = malloc(maxt1 * sizeof(int32_t));
    uint8_t *declared = calloc(maxt1, 1);
    int rv = 0;
    if (!seen || !declared) {
        rv = FAB_ERR_NOMEM;
        goto out;
    }
    /* missing uplinks by T0, found by a scan of the (short) override list */
    for (uint32_t i = 0; i < topo->nsw && rv == 0; i++) {
        const fab_sw *s = &topo->sw[i];
        if (s->tier != FAB_TIER_T0) {
            continue;
        }
        uint32_t nt1 = topo->nt1[s->plane];
        memset(seen, 0xff, nt1 * sizeof(int32_t));
        for (unsigned x = 0; x < s->nports; x++) {
            const fab_port *pt = &topo->ports[s->port0 + x];
            if (pt->peer_kind != FAB_PEER_SWITCH) {
                continue;
            }
            unsigned j = topo->sw[pt->peer].index;
            if (seen[j] >= 0) {
                sw_path(topo, i, "", false, path, sizeof(path));
                fab_error_set(perr, path, "T0 '%s' is cabled twice to T1 '%s' (ports %d and %u)",
                              fab_str(topo, s->name), fab_str(topo, topo->sw[pt->peer].name),
                              seen[j], x);
                rv = FAB_ERR_INVAL;
                goto out;
            }
            seen[j] = (int32_t)x;
        }
        memset(declared, 0, nt1);
        for (uint32_t m = 0; m < topo->nmissing; m++) {
            if (topo->missing[m].kind == FAB_MISSING_UPLINK && topo->missing[m].a == i) {
                declared[topo->sw[topo->missing[m].b].index] = 1;
            }
        }
        for (uint32_t j = 0; j < nt1; j++) {
            if (seen[j] < 0 && !declared[j]) {
                sw_path(topo, i, "", false, path, sizeof(path));
                fab_error_set(perr, path,
                              "T0 '%s' has no cable to T1 '%s' (every T0 is wired once to each "
                              "T1 of its plane; list a cable that is really absent in "
                              "overrides.missing_cables)",
                              fab_str(topo, s->name),
                              fab_str(topo, topo->sw[topo->t1_of[s->plane][j]].name));
                rv = FAB_ERR_INVAL;
                goto out;
            }
        }
    }
out:
    free(seen);
    free(declared);
    return rv;
}

static int check_hosts(fab_topo *topo, fab_error *perr)
{
    char path[FAB_PATH_MAX];
    for (uint32_t h = 0; h < topo->nhosts; h++) {
        for (unsigned p = 0; p < topo->planes; p++) {
            const fab_att *a = &topo->att[(size_t)h * topo->planes + p];
            if (a->sw == FAB_NONE && !a->pad) {
                snprintf(path, sizeof(path), "$.hosts[%u]", h);
                fab_error_set(perr, path,
                              "host '%s' has no cable on port %u (plane %u); list a cable that "
                              "is really absent in overrides.missing_cables",
                              fab_str(topo, topo->host_name[h]), p, p);
                return FAB_ERR_INVAL;
            }
        }
    }
    return 0;
}

static unsigned digits(unsigned v)
{
    unsigned n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* The port whose name |pat| makes equal to |name| (a canonical decimal in place of {port}). */
static bool pattern_port(const char *pat, const char *name, unsigned *pport)
{
    const char *at = strstr(pat, "{port}");
    size_t pre = (size_t)(at - pat), post = strlen(at + 6), n = strlen(name);
    if (n <= pre + post || strncmp(name, pat, pre) != 0 || strcmp(name + n - post, at + 6) != 0) {
        return false;
    }
    const char *d = name + pre;
    size_t nd = n - pre - post;
    if (nd > 5 || (d[0] == '0' && nd > 1)) {
        return false;
    }
    unsigned v = 0;
    for (size_t k = 0; k < nd; k++) {
        if (d[k] < '0' || d[k] > '9') {
            return false;
        }
        v = v * 10 + (unsigned)(d[k] - '0');
    }
    *pport = v;
    return true;
}

/* Whether |name| is the name of a port of switch |sw| other than |self|. */
static bool names_port(const fab_topo *topo, const fab_sw *s, const char *name, int self,
                       unsigned *pport)
{
    const fab_ifspec *spec = &topo->ifspecs[s->ifspec];
    /* no array at all when no switch has exceptions: never offset a null pointer */
    const fab_ifexc *exc = spec->nexc ? topo->ifexc + spec->exc0 : NULL;
    for (uint32_t k = 0; k < spec->nexc; k++) {
        if ((int)exc[k].port != self && strcmp(fab_str(topo, exc[k].name), name) == 0) {
            *pport = exc[k].port;
            return true;
        }
    }
    unsigned q;
    if (!pattern_port(fab_str(topo, spec->pattern), name, &q) || q >= s->nports || (int)q == self) {
        return false;
    }
    for (uint32_t k = 0; k < spec->nexc; k++) {
        if (exc[k].port == q) {
            return false; /* port q has an exception: the pattern's name is not used */
        }
    }
    *pport = q;
    return true;
}

/* The path of |suffix| (".pattern", ".ports.3") under the interfaces of switch |sw|. */
static void if_path(const fab_topo *topo, uint32_t sw, const char *suffix, char *dest,
                    size_t destlen)
{
    char sub[48];
    if (topo->sw[sw].if_source == 2) {
        snprintf(dest, destlen, "$.overrides.switches.%s.interfaces%s",
                 fab_str(topo, topo->sw[sw].name), suffix);
    } else {
        snprintf(sub, sizeof(sub), ".interfaces%s", suffix);
        sw_path(topo, sw, sub, false, dest, destlen);
    }
}

/* Interface names fit the kernel's 15 characters and name one port each, never the SID device:
 * two ports on one device would merge their routes. Patterns are unique by construction, so
 * only exceptions and SID devices need a look. */
static int check_ifnames(const fab_topo *topo, fab_error *perr)
{
    char path[FAB_PATH_MAX];
    static const char *const tiers[] = {"t0", "t1", "host"};
    for (uint32_t i = 0; i <= topo->nsw; i++) {
        uint32_t spec = i < topo->nsw ? topo->sw[i].ifspec : topo->host_ifspec;
        unsigned maxport = i < topo->nsw ? topo->sw[i].nports - 1u : topo->planes - 1u;
        const char *pat = fab_str(topo, topo->ifspecs[spec].pattern);
        size_t len = strlen(pat) - 6 + digits(maxport);
        if (len >= FAB_IFNAME_MAX) {
            if (spec < 3) {
                snprintf(path, sizeof(path), "$.interfaces.%s", tiers[spec]);
            } else {
                if_path(topo, i, ".pattern", path, sizeof(path));
            }
            fab_error_set(perr, path,
                          "pattern '%s' makes interface names longer than %d characters (port %u)",
                          pat, FAB_IFNAME_MAX - 1, maxport);
            return FAB_ERR_INVAL;
        }
        if (i == topo->nsw) {
            break;
        }
        const fab_sw *s = &topo->sw[i];
        const fab_ifspec *sp = &topo->ifspecs[spec];
        unsigned q;
        for (uint32_t k = 0; k < sp->nexc; k++) {
            const fab_ifexc *x = &topo->ifexc[sp->exc0 + k];
            if (names_port(topo, s, fab_str(topo, x->name), x->port, &q)) {
                char suffix[32];
                snprintf(suffix, sizeof(suffix), ".ports.%u", x->port);
                if_path(topo, i, suffix, path, sizeof(path));
                fab_error_set(perr, path, "'%s' names ports %u and %u of '%s'",
                              fab_str(topo, x->name), x->port, q, fab_str(topo, s->name));
                return FAB_ERR_INVAL;
            }
        }
        if (names_port(topo, s, fab_str(topo, s->sid_dev), -1, &q)) {
            if (s->sid_source == 2) {
                snprintf(path, sizeof(path), "$.overrides.switches.%s.sid_device",
                         fab_str(topo, s->name));
            } else if (s->sid_source == 1) {
                sw_path(topo, i, ".sid_device", false, path, sizeof(path));
            } else {
                snprintf(path, sizeof(path), "$.interfaces.sid_device");
            }
            fab_error_set(perr, path, "the SID device '%s' of '%s' is also the name of port %u",
                          fab_str(topo, s->sid_dev), fab_str(topo, s->name), q);
            return FAB_ERR_INVAL;
        }
    }
    return 0;
}

int fab_topo_finish(fab_topo *topo, fab_error *perr)
{
    int rv;
    if ((rv = index_planes(topo, perr)) != 0 || (rv = assign_usids(topo, perr)) != 0 ||
        (rv = check_mesh(topo, perr)) != 0 || (rv = check_hosts(topo, perr)) != 0 ||
        (rv = check_ifnames(topo, perr)) != 0) {
        return rv;
    }
    return 0;
}
