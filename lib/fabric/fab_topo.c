/* SPDX-License-Identifier: MIT */
/* The loaded fabric: string arena, name index and the read-only accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

fab_topo *fab_topo_alloc(void)
{
    fab_topo *topo = calloc(1, sizeof(*topo));
    if (!topo) {
        return NULL;
    }
    fab_plan_default(&topo->plan);
    topo->arena_cap = 4096;
    topo->arena = malloc(topo->arena_cap);
    if (!topo->arena) {
        free(topo);
        return NULL;
    }
    /* offset 0 is the empty string, so a zero offset always reads as "" */
    topo->arena[0] = '\0';
    topo->arena_len = 1;
    return topo;
}

void fab_topo_free(fab_topo *topo)
{
    if (!topo) {
        return;
    }
    for (unsigned p = 0; p < FAB_MAX_PLANES; p++) {
        free(topo->t0_of[p]);
        free(topo->t1_of[p]);
        free(topo->t1_usid[p]);
    }
    free(topo->usid_sw);
    free(topo->hash);
    free(topo->missing);
    free(topo->ifexc);
    free(topo->ifspecs);
    free(topo->att);
    free(topo->host_name);
    free(topo->ports);
    free(topo->sw);
    free(topo->arena);
    free(topo);
}

int fab_arena_add(fab_topo *topo, const char *s, size_t len, uint32_t *poff)
{
    if (topo->arena_len + len + 1 > topo->arena_cap) {
        size_t cap = topo->arena_cap;
        while (topo->arena_len + len + 1 > cap) {
            cap *= 2;
        }
        if (cap > UINT32_MAX) {
            return FAB_ERR_NOMEM;
        }
        char *a = realloc(topo->arena, cap);
        if (!a) {
            return FAB_ERR_NOMEM;
        }
        topo->arena = a;
        topo->arena_cap = cap;
    }
    memcpy(topo->arena + topo->arena_len, s, len);
    topo->arena[topo->arena_len + len] = '\0';
    *poff = (uint32_t)topo->arena_len;
    topo->arena_len += len + 1;
    return 0;
}

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    }
    return h;
}

static const char *elem_name(const fab_topo *topo, uint32_t elem)
{
    if (elem & FAB_HOST_TAG) {
        return fab_str(topo, topo->host_name[elem & ~FAB_HOST_TAG]);
    }
    return fab_str(topo, topo->sw[elem].name);
}

uint32_t fab_elem_find(const fab_topo *topo, const char *name, size_t len)
{
    if (!topo->hash) {
        return FAB_NONE;
    }
    for (uint32_t i = name_hash(name, len) & topo->hash_mask;; i = (i + 1) & topo->hash_mask) {
        uint32_t e = topo->hash[i];
        if (e == FAB_NONE) {
            return FAB_NONE;
        }
        const char *n = elem_name(topo, e);
        if (strncmp(n, name, len) == 0 && n[len] == '\0') {
            return e;
        }
    }
}

/* Indexes every switch and host name; a name used twice is an error naming both places. */
int fab_index_build(fab_topo *topo, fab_error *perr)
{
    uint64_t n = (uint64_t)topo->nsw + topo->nhosts;
    uint32_t cap = 16;
    while (cap < 2 * n) {
        cap *= 2;
    }
    topo->hash = malloc((size_t)cap * sizeof(uint32_t));
    if (!topo->hash) {
        return FAB_ERR_NOMEM;
    }
    memset(topo->hash, 0xff, (size_t)cap * sizeof(uint32_t));
    topo->hash_mask = cap - 1;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t e = k < topo->nsw ? (uint32_t)k : ((uint32_t)(k - topo->nsw) | FAB_HOST_TAG);
        const char *name = elem_name(topo, e);
        size_t len = strlen(name);
        uint32_t i = name_hash(name, len) & topo->hash_mask;
        for (; topo->hash[i] != FAB_NONE; i = (i + 1) & topo->hash_mask) {
            uint32_t o = topo->hash[i];
            if (strcmp(elem_name(topo, o), name) != 0) {
                continue;
            }
            if (topo->dl_ports) {
                /* parametric: generated switch names are distinct, so the host pattern clashed */
                fab_error_set(perr, "$.host_name",
                              "the host name pattern makes '%s', which is already a switch's name",
                              name);
                return FAB_ERR_INVAL;
            }
            char first[64], path[64];
            if (o & FAB_HOST_TAG) {
                snprintf(first, sizeof(first), "$.hosts[%u]", o & ~FAB_HOST_TAG);
            } else {
                snprintf(first, sizeof(first), "$.switches[%u]", o);
            }
            if (e & FAB_HOST_TAG) {
                snprintf(path, sizeof(path), "$.hosts[%u].name", e & ~FAB_HOST_TAG);
            } else {
                snprintf(path, sizeof(path), "$.switches[%u].name", e);
            }
            fab_error_set(perr, path, "duplicate name '%s' (first used at %s)", name, first);
            return FAB_ERR_INVAL;
        }
        topo->hash[i] = e;
    }
    return 0;
}

const char *fab_topo_name(const fab_topo *topo)
{
    return fab_str(topo, topo->name);
}

const fab_plan *fab_topo_plan(const fab_topo *topo)
{
    return &topo->plan;
}

unsigned fab_topo_planes(const fab_topo *topo)
{
    return topo->planes;
}

uint32_t fab_topo_nswitches(const fab_topo *topo)
{
    return topo->nsw;
}

uint32_t fab_topo_nhosts(const fab_topo *topo)
{
    return topo->nhosts;
}

uint64_t fab_topo_ncables(const fab_topo *topo)
{
    return topo->ncables;
}

uint64_t fab_topo_nmissing(const fab_topo *topo)
{
    return topo->nmissing;
}

uint32_t fab_topo_nt0(const fab_topo *topo, unsigned plane)
{
    return plane < topo->planes ? topo->nt0[plane] : 0;
}

uint32_t fab_topo_nt1(const fab_topo *topo, unsigned plane)
{
    return plane < topo->planes ? topo->nt1[plane] : 0;
}

int fab_switch_get(const fab_topo *topo, uint32_t sw, fab_switch *pinfo)
{
    if (sw >= topo->nsw) {
        return FAB_ERR_NOTFOUND;
    }
    const fab_sw *s = &topo->sw[sw];
    pinfo->name = fab_str(topo, s->name);
    pinfo->sid_device = fab_str(topo, s->sid_dev);
    pinfo->plane = s->plane;
    pinfo->tier = (fab_tier)s->tier;
    pinfo->index = s->index;
    pinfo->nports = s->nports;
    pinfo->usid = s->usid;
    return 0;
}

uint32_t fab_switch_find(const fab_topo *topo, const char *name)
{
    uint32_t e = fab_elem_find(topo, name, strlen(name));
    return (e == FAB_NONE || (e & FAB_HOST_TAG)) ? FAB_NONE : e;
}

uint32_t fab_switch_at(const fab_topo *topo, unsigned plane, fab_tier tier, unsigned index)
{
    if (plane >= topo->planes) {
        return FAB_NONE;
    }
    if (tier == FAB_TIER_T0) {
        return index < topo->nt0[plane] ? topo->t0_of[plane][index] : FAB_NONE;
    }
    return index < topo->nt1[plane] ? topo->t1_of[plane][index] : FAB_NONE;
}

int fab_ifname_format(const fab_topo *topo, const fab_ifspec *spec, unsigned port, char *dest,
                      size_t destlen)
{
    /* exceptions are sorted by port: binary search */
    /* no array at all when no switch has exceptions: never offset a null pointer */
    const fab_ifexc *exc = spec->nexc ? topo->ifexc + spec->exc0 : NULL;
    size_t lo = 0, hi = spec->nexc;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (exc[mid].port < port) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    int n;
    if (lo < spec->nexc && exc[lo].port == port) {
        n = snprintf(dest, destlen, "%s", fab_str(topo, exc[lo].name));
    } else {
        const char *pat = fab_str(topo, spec->pattern);
        const char *at = strstr(pat, "{port}");
        if (!at) {
            n = snprintf(dest, destlen, "%s", pat);
        } else {
            n = snprintf(dest, destlen, "%.*s%u%s", (int)(at - pat), pat, port, at + 6);
        }
    }
    return (n < 0 || (size_t)n >= destlen) ? FAB_ERR_NOSPACE : 0;
}

int fab_switch_ifname(const fab_topo *topo, uint32_t sw, unsigned port, char *dest, size_t destlen)
{
    if (sw >= topo->nsw || port >= topo->sw[sw].nports) {
        return FAB_ERR_NOTFOUND;
    }
    return fab_ifname_format(topo, &topo->ifspecs[topo->sw[sw].ifspec], port, dest, destlen);
}

void fab_switch_port_lladdr(const fab_topo *topo, uint32_t sw, unsigned port, uint8_t dest[16])
{
    memset(dest, 0, 16);
    dest[0] = 0xfe;
    dest[1] = 0x80;
    uint16_t usid = sw < topo->nsw ? topo->sw[sw].usid : 0;
    dest[12] = (uint8_t)(usid >> 8);
    dest[13] = (uint8_t)usid;
    dest[14] = (uint8_t)(port >> 8);
    dest[15] = (uint8_t)port;
}

int fab_switch_peer(const fab_topo *topo, uint32_t sw, unsigned port, fab_peer *ppeer)
{
    if (sw >= topo->nsw || port >= topo->sw[sw].nports) {
        return FAB_ERR_NOTFOUND;
    }
    const fab_port *p = &topo->ports[topo->sw[sw].port0 + port];
    ppeer->kind = (fab_peer_kind)p->peer_kind;
    ppeer->id = p->peer;
    ppeer->port = p->peer_port;
    return 0;
}

const char *fab_host_name(const fab_topo *topo, uint32_t host)
{
    return host < topo->nhosts ? fab_str(topo, topo->host_name[host]) : NULL;
}

uint32_t fab_host_find(const fab_topo *topo, const char *name)
{
    uint32_t e = fab_elem_find(topo, name, strlen(name));
    return (e == FAB_NONE || !(e & FAB_HOST_TAG)) ? FAB_NONE : (e & ~FAB_HOST_TAG);
}

int fab_host_ifname(const fab_topo *topo, uint32_t host, unsigned port, char *dest, size_t destlen)
{
    if (host >= topo->nhosts || port >= topo->planes) {
        return FAB_ERR_NOTFOUND;
    }
    return fab_ifname_format(topo, &topo->ifspecs[topo->host_ifspec], port, dest, destlen);
}

int fab_host_attach(const fab_topo *topo, uint32_t host, unsigned port, uint32_t *psw,
                    unsigned *pswport)
{
    if (host >= topo->nhosts || port >= topo->planes) {
        return FAB_ERR_NOTFOUND;
    }
    const fab_att *a = &topo->att[(size_t)host * topo->planes + port];
    if (a->sw == FAB_NONE) {
        return FAB_ERR_NOTFOUND;
    }
    *psw = a->sw;
    *pswport = a->port;
    return 0;
}

int fab_host_addr(const fab_topo *topo, uint32_t host, unsigned port, uint8_t dest[16])
{
    uint32_t sw;
    unsigned x;
    int rv = fab_host_attach(topo, host, port, &sw, &x);
    if (rv != 0) {
        return rv;
    }
    unsigned a = topo->sw[sw].index;
    memset(dest, 0, 16);
    memcpy(dest, topo->plan.host_block, 4);
    dest[4] = (uint8_t)(port >> 8);
    dest[5] = (uint8_t)port;
    dest[6] = (uint8_t)(a >> 8);
    dest[7] = (uint8_t)a;
    dest[8] = (uint8_t)(x >> 8);
    dest[9] = (uint8_t)x;
    dest[15] = 1;
    return 0;
}

int fab_host_usid_addr(const fab_topo *topo, uint32_t host, unsigned port, uint8_t dest[16])
{
    uint32_t sw;
    unsigned x;
    int rv = fab_host_attach(topo, host, port, &sw, &x);
    if (rv != 0) {
        return rv;
    }
    uint16_t dl = fab_plan_usid(&topo->plan, port, topo->plan.kind_dl, x);
    fab_plan_container(&topo->plan, &dl, 1, dest);
    return 0;
}

int fab_host_by_addr(const fab_topo *topo, const uint8_t addr[16], uint32_t *phost, unsigned *pport)
{
    static const uint8_t zero[5];
    if (memcmp(addr, topo->plan.host_block, 4) != 0 || memcmp(addr + 10, zero, 5) != 0 ||
        addr[15] != 1) {
        return FAB_ERR_NOTFOUND;
    }
    unsigned p = (unsigned)addr[4] << 8 | addr[5];
    unsigned a = (unsigned)addr[6] << 8 | addr[7];
    unsigned x = (unsigned)addr[8] << 8 | addr[9];
    uint32_t sw = fab_switch_at(topo, p, FAB_TIER_T0, a);
    if (sw == FAB_NONE || x >= topo->sw[sw].nports) {
        return FAB_ERR_NOTFOUND;
    }
    const fab_port *pt = &topo->ports[topo->sw[sw].port0 + x];
    if (pt->peer_kind != FAB_PEER_HOST) {
        return FAB_ERR_NOTFOUND;
    }
    *phost = pt->peer;
    *pport = pt->peer_port;
    return 0;
}

int fab_hostport_parse(const fab_topo *topo, const char *text, uint32_t *phost, unsigned *pport)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || colon[1] == '\0') {
        return FAB_ERR_INVAL;
    }
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end != '\0' || colon[1] < '0' || colon[1] > '9') {
        return FAB_ERR_INVAL;
    }
    uint32_t e = fab_elem_find(topo, text, (size_t)(colon - text));
    if (e == FAB_NONE || !(e & FAB_HOST_TAG) || port >= topo->planes) {
        return FAB_ERR_NOTFOUND;
    }
    *phost = e & ~FAB_HOST_TAG;
    *pport = (unsigned)port;
    return 0;
}
