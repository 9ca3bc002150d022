/* SPDX-License-Identifier: MIT */
/* Denylists: element names into the fabric model, and the one rule, shared by the
 * controller's blast radius and the agents, that turns denied elements into denied paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

static int parse_switch(const fab_topo *topo, const char *name, fab_switch *s, uint32_t *psw)
{
    *psw = fab_switch_find(topo, name);
    return *psw != FAB_NONE && fab_switch_get(topo, *psw, s) == 0 ? 0 : FAB_ERR_INVAL;
}

int fab_element_parse(const fab_topo *topo, const char *name, fab_element *el, char *why,
                      size_t whylen)
{
    memset(el, 0, sizeof(*el));
    fab_switch s;
    const char *tilde = strchr(name, '~');
    if (!tilde) {
        unsigned port;
        if (parse_switch(topo, name, &s, &el->sw) == 0) {
            el->kind = FAB_EL_SWITCH;
            el->plane = s.plane;
            el->tier = s.tier;
            el->index = s.index;
            return 0;
        }
        if (strchr(name, ':') && fab_hostport_parse(topo, name, &el->host, &port) == 0 &&
            port < fab_topo_planes(topo)) {
            el->kind = FAB_EL_PORT;
            el->plane = port;
            return 0;
        }
        snprintf(why, whylen,
                 "'%s' is no switch or host port of fabric '%s' (a link is 'SWITCH~SWITCH')", name,
                 fab_topo_name(topo));
        return FAB_ERR_INVAL;
    }
    char a[96];
    snprintf(a, sizeof(a), "%.*s", (int)(tilde - name), name);
    fab_switch s1;
    uint32_t x, y;
    if (parse_switch(topo, a, &s, &x) != 0 || parse_switch(topo, tilde + 1, &s1, &y) != 0) {
        snprintf(why, whylen, "'%s' is no switch of fabric '%s'",
                 fab_switch_find(topo, a) == FAB_NONE ? a : tilde + 1, fab_topo_name(topo));
        return FAB_ERR_INVAL;
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
            el->kind = FAB_EL_LINK;
            el->plane = s.plane;
            el->t0 = s.index;
            el->t1 = s1.index;
            return 0;
        }
    }
    snprintf(why, whylen, "no cable joins %s and %s", a, tilde + 1);
    return FAB_ERR_INVAL;
}

unsigned fab_dir_parse(const char *scope)
{
    return strcmp(scope, "both") == 0   ? FAB_DIR_BOTH
           : strcmp(scope, "up") == 0   ? FAB_DIR_UP
           : strcmp(scope, "down") == 0 ? FAB_DIR_DOWN
                                        : 0;
}

/* Per plane, bits so that a path is a handful of loads: T0s by index, T1s by index, and per
 * T0 |words| words of T1 bits for each direction of its uplinks. Host ports are a word per
 * host (bits 0-15 up by plane, 16-31 down), only once a host port is denied: at full scale
 * that is 512 KiB a set that names none need not pay. */
struct fab_deny {
    const fab_topo *topo;
    unsigned planes;
    uint32_t words[FAB_MAX_PLANES];
    uint8_t *t0dead[FAB_MAX_PLANES];
    uint64_t *t1dead[FAB_MAX_PLANES];
    uint64_t *updeny[FAB_MAX_PLANES], *downdeny[FAB_MAX_PLANES];
    bool dirty[FAB_MAX_PLANES];
    uint32_t *hostdirs;
};

int fab_deny_new(const fab_topo *topo, fab_deny **pdeny)
{
    fab_deny *d = calloc(1, sizeof(*d));
    if (!d) {
        return FAB_ERR_NOMEM;
    }
    d->topo = topo;
    d->planes = topo->planes;
    for (unsigned p = 0; p < d->planes; p++) {
        size_t n = (size_t)topo->nt0[p] * ((topo->nt1[p] + 63) / 64) + 1;
        d->words[p] = (topo->nt1[p] + 63) / 64;
        d->t0dead[p] = calloc((size_t)topo->nt0[p] + 1, 1);
        d->t1dead[p] = calloc((size_t)d->words[p] + 1, sizeof(uint64_t));
        d->updeny[p] = calloc(n, sizeof(uint64_t));
        d->downdeny[p] = calloc(n, sizeof(uint64_t));
        if (!d->t0dead[p] || !d->t1dead[p] || !d->updeny[p] || !d->downdeny[p]) {
            fab_deny_free(d);
            return FAB_ERR_NOMEM;
        }
    }
    *pdeny = d;
    return 0;
}

void fab_deny_free(fab_deny *deny)
{
    if (!deny) {
        return;
    }
    for (unsigned p = 0; p < deny->planes; p++) {
        free(deny->t0dead[p]);
        free(deny->t1dead[p]);
        free(deny->updeny[p]);
        free(deny->downdeny[p]);
    }
    free(deny->hostdirs);
    free(deny);
}

int fab_deny_add(fab_deny *deny, const fab_element *el, unsigned dirs)
{
    const fab_topo *t = deny->topo;
    unsigned p = el->plane;
    dirs &= FAB_DIR_BOTH;
    if (p >= deny->planes || (el->kind != FAB_EL_SWITCH && dirs == 0)) {
        return FAB_ERR_INVAL;
    }
    switch (el->kind) {
    case FAB_EL_SWITCH:
        if (el->tier == FAB_TIER_T0 && el->index < t->nt0[p]) {
            deny->t0dead[p][el->index] = 1;
        } else if (el->tier == FAB_TIER_T1 && el->index < t->nt1[p]) {
            deny->t1dead[p][el->index / 64] |= 1ull << (el->index % 64);
        } else {
            return FAB_ERR_INVAL;
        }
        break;
    case FAB_EL_LINK: {
        if (el->t0 >= t->nt0[p] || el->t1 >= t->nt1[p]) {
            return FAB_ERR_INVAL;
        }
        size_t w = (size_t)el->t0 * deny->words[p] + el->t1 / 64;
        uint64_t bit = 1ull << (el->t1 % 64);
        if (dirs & FAB_DIR_UP) {
            deny->updeny[p][w] |= bit;
        }
        if (dirs & FAB_DIR_DOWN) {
            deny->downdeny[p][w] |= bit;
        }
        break;
    }
    case FAB_EL_PORT:
        if (el->host >= t->nhosts) {
            return FAB_ERR_INVAL;
        }
        if (!deny->hostdirs && !(deny->hostdirs = calloc((size_t)t->nhosts + 1, 4))) {
            return FAB_ERR_NOMEM;
        }
        deny->hostdirs[el->host] |=
            ((dirs & FAB_DIR_UP) ? 1u << p : 0) | ((dirs & FAB_DIR_DOWN) ? 1u << (16 + p) : 0);
        return 0; /* a host port is no switch or link of its plane */
    default:
        return FAB_ERR_INVAL;
    }
    deny->dirty[p] = true;
    return 0;
}

bool fab_deny_ev(const fab_deny *deny, uint32_t src, uint32_t dst, uint32_t ev)
{
    const fab_topo *t = deny->topo;
    unsigned P = deny->planes, p = fab_ev_plane(&t->plan, ev), j = fab_ev_t1(&t->plan, ev);
    if (p >= P || src >= t->nhosts || dst >= t->nhosts || src == dst || j >= t->nt1[p]) {
        return true;
    }
    uint32_t sa = t->att[(size_t)src * P + p].sw, sb = t->att[(size_t)dst * P + p].sw;
    if (sa == FAB_NONE || sb == FAB_NONE) {
        return true;
    }
    if (deny->hostdirs &&
        ((deny->hostdirs[src] >> p & 1) || (deny->hostdirs[dst] >> (16 + p) & 1))) {
        return true;
    }
    if (!deny->dirty[p]) {
        return false;
    }
    uint32_t a = t->sw[sa].index, b = t->sw[sb].index;
    if (deny->t0dead[p][a] || deny->t0dead[p][b]) {
        return true;
    }
    if (a == b) {
        return false;
    }
    uint32_t W = deny->words[p];
    uint64_t bit = 1ull << (j % 64);
    return ((deny->t1dead[p][j / 64] | deny->updeny[p][(size_t)a * W + j / 64] |
             deny->downdeny[p][(size_t)b * W + j / 64]) &
            bit) != 0;
}

bool fab_deny_plane_clean(const fab_deny *deny, unsigned plane)
{
    return plane >= deny->planes || !deny->dirty[plane];
}

unsigned fab_deny_t1s(const fab_deny *deny, unsigned plane, uint32_t a, uint32_t b,
                      const uint64_t *ua, const uint64_t *ub, unsigned words)
{
    const fab_topo *t = deny->topo;
    if (plane >= deny->planes || a >= t->nt0[plane] || b >= t->nt0[plane] ||
        deny->t0dead[plane][a] || deny->t0dead[plane][b]) {
        return 0;
    }
    if (a == b) {
        return 1;
    }
    unsigned W = deny->words[plane] < words ? deny->words[plane] : words, n = 0;
    const uint64_t *da = &deny->updeny[plane][(size_t)a * deny->words[plane]];
    const uint64_t *db = &deny->downdeny[plane][(size_t)b * deny->words[plane]];
    const uint64_t *dead = deny->t1dead[plane];
    for (unsigned w = 0; w < W; w++) {
        n += (unsigned)__builtin_popcountll(ua[w] & ub[w] & ~dead[w] & ~da[w] & ~db[w]);
    }
    return n;
}

void fab_deny_host(const fab_deny *deny, uint32_t host, uint32_t *psrc_planes,
                   uint32_t *pdst_planes)
{
    uint32_t x = deny->hostdirs && host < deny->topo->nhosts ? deny->hostdirs[host] : 0;
    *psrc_planes = x & 0xffffu;
    *pdst_planes = x >> 16;
}
