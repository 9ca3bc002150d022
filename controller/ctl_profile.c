/* SPDX-License-Identifier: MIT */
/* Host profiles. Destinations are grouped by the T1s both T0s are cabled to: on a whole
 * fabric that is two classes per plane (the host's own T0, every other T0), and a missing
 * cable splits off only the T0s it touches, so the profile stays small at any scale. */
#include <mrcfab/mrc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_profile.h"
#include "util.h"

/* Appends "a" or "a-b" for the run [a, b] to |buf|. */
static void range_put(char **buf, size_t *len, size_t *cap, uint32_t a, uint32_t b)
{
    char t[32];
    int n = a == b ? snprintf(t, sizeof(t), "%s%u", *len ? "," : "", a)
                   : snprintf(t, sizeof(t), "%s%u-%u", *len ? "," : "", a, b);
    if (*len + (size_t)n + 1 > *cap) {
        *cap = 2 * (*cap + (size_t)n + 1);
        *buf = util_xrealloc(*buf, *cap);
    }
    memcpy(*buf + *len, t, (size_t)n + 1);
    *len += (size_t)n;
}

/* The set bits of |mask| (n bits) as ranges, "0-4,6,9-255". */
static json_object *ranges(const uint64_t *mask, uint32_t n)
{
    char *buf = util_xcalloc(1, 1);
    size_t len = 0, cap = 1;
    for (uint32_t i = 0; i < n;) {
        if (!(mask[i / 64] >> (i % 64) & 1)) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j + 1 < n && (mask[(j + 1) / 64] >> ((j + 1) % 64) & 1)) {
            j++;
        }
        range_put(&buf, &len, &cap, i, j);
        i = j + 1;
    }
    json_object *s = json_object_new_string(buf);
    free(buf);
    return s;
}

static json_object *hex16(uint16_t v)
{
    char t[8];
    snprintf(t, sizeof(t), "%04x", v);
    return json_object_new_string(t);
}

static json_object *addr(const uint8_t a[16])
{
    char t[64];
    return json_object_new_string(fab_addr_str(a, t));
}

static json_object *port_json(const fab_topo *topo, uint32_t host, unsigned p, uint32_t *pt0)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "port", json_object_new_int((int)p));
    json_object_object_add(j, "plane", json_object_new_int((int)p));
    uint32_t sw;
    unsigned swport;
    fab_switch s;
    char ifname[FAB_IFNAME_MAX];
    uint8_t a[16];
    *pt0 = FAB_NONE;
    if (fab_host_attach(topo, host, p, &sw, &swport) != 0 || fab_switch_get(topo, sw, &s) != 0) {
        json_object_object_add(j, "cabled", json_object_new_boolean(false));
        return j;
    }
    *pt0 = s.index;
    json_object_object_add(j, "cabled", json_object_new_boolean(true));
    if (fab_host_ifname(topo, host, p, ifname, sizeof(ifname)) == 0) {
        json_object_object_add(j, "ifname", json_object_new_string(ifname));
    }
    if (fab_host_addr(topo, host, p, a) == 0) {
        json_object_object_add(j, "address", addr(a));
    }
    if (fab_host_usid_addr(topo, host, p, a) == 0) {
        json_object_object_add(j, "usid_address", addr(a));
    }
    json_object_object_add(j, "t0", json_object_new_string(s.name));
    json_object_object_add(j, "t0_port", json_object_new_int((int)swport));
    json_object_object_add(j, "t0_usid", hex16(s.usid));
    return j;
}

static json_object *class_json(const fab_plan *plan, unsigned p, const char *kind, json_object *t0s,
                               const uint64_t *t1s, uint32_t nt1)
{
    json_object *c = json_object_new_object(), *evs = json_object_new_array();
    json_object_object_add(c, "plane", json_object_new_int((int)p));
    json_object_object_add(c, "kind", json_object_new_string(kind));
    json_object_object_add(c, "t0s", t0s);
    if (t1s) {
        json_object_object_add(c, "t1s", ranges(t1s, nt1));
        for (uint32_t j = 0; j < nt1; j++) {
            if (t1s[j / 64] >> (j % 64) & 1) {
                json_object_array_add(evs, json_object_new_int64(fab_ev_make(plan, p, j, 0)));
            }
        }
    } else {
        json_object_array_add(evs, json_object_new_int64(fab_ev_make(plan, p, 0, 0)));
    }
    json_object_object_add(c, "evs", evs);
    return c;
}

/* The classes of destinations of T0 |a| on plane |p|: its own T0, then the other T0s
 * grouped by the T1s they share with it. */
static void plane_classes(const fab_topo *topo, const ctl_blast *b, unsigned p, uint32_t a,
                          json_object *out)
{
    const fab_plan *plan = fab_topo_plan(topo);
    uint32_t nt0 = fab_topo_nt0(topo, p), nt1 = fab_topo_nt1(topo, p);
    unsigned W;
    const uint64_t *mine = ctl_blast_uplinks(b, p, a, &W);
    uint64_t *own = util_xcalloc((nt0 + 63) / 64 + 1, sizeof(uint64_t));
    own[a / 64] |= 1ull << (a % 64);
    json_object_array_add(out, class_json(plan, p, "local", ranges(own, nt0), NULL, 0));
    /* classes: their shared T1s, and the T0s that have them */
    uint64_t *shared = util_xcalloc((size_t)nt0 * W + 1, sizeof(uint64_t));
    uint32_t *cls = util_xcalloc(nt0 + 1, sizeof(uint32_t)), ncls = 0;
    uint32_t *first = util_xcalloc(nt0 + 1, sizeof(uint32_t));
    for (uint32_t c = 0; c < nt0; c++) {
        if (c == a) {
            continue;
        }
        unsigned w2;
        const uint64_t *theirs = ctl_blast_uplinks(b, p, c, &w2);
        uint64_t *m = &shared[(size_t)c * W];
        for (unsigned w = 0; w < W; w++) {
            m[w] = mine[w] & theirs[w];
        }
        uint32_t k = 0;
        while (k < ncls && memcmp(&shared[(size_t)first[k] * W], m, W * sizeof(*m)) != 0) {
            k++;
        }
        if (k == ncls) {
            first[ncls++] = c;
        }
        cls[c] = k;
    }
    for (uint32_t k = 0; k < ncls; k++) {
        memset(own, 0, ((nt0 + 63) / 64 + 1) * sizeof(uint64_t));
        for (uint32_t c = 0; c < nt0; c++) {
            if (c != a && cls[c] == k) {
                own[c / 64] |= 1ull << (c % 64);
            }
        }
        json_object_array_add(out, class_json(plan, p, "remote", ranges(own, nt0),
                                              &shared[(size_t)first[k] * W], nt1));
    }
    free(first);
    free(cls);
    free(shared);
    free(own);
}

static json_object *cc_json(const ctl_profile_cfg *cfg, unsigned planes)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "algorithm", json_object_new_string(cfg->cc));
    json_object_object_add(j, "mtu", json_object_new_int64(cfg->mtu));
    json_object_object_add(j, "trimming", json_object_new_boolean(cfg->trimming));
    if (strcmp(cfg->cc, "none") == 0) {
        return j;
    }
    /* one QP sprays over every plane port of the host */
    mrc_cc_nscc_cfg in = {.link_gbps = cfg->port_gbps * planes, .base_rtt_ns = cfg->base_rtt_ns}, n;
    if (mrc_cc_nscc_resolve(&in, cfg->mtu, cfg->trimming, &n) != 0) {
        json_object_put(j);
        return NULL;
    }
    json_object *x = json_object_new_object();
    json_object_object_add(x, "link_gbps", json_object_new_double(n.link_gbps));
    json_object_object_add(x, "base_rtt_ns", json_object_new_int64((int64_t)n.base_rtt_ns));
    json_object_object_add(x, "target_delay_ns", json_object_new_int64((int64_t)n.target_delay_ns));
    json_object_object_add(x, "max_cwnd", json_object_new_int64((int64_t)n.max_cwnd));
    json_object_object_add(x, "gamma", json_object_new_double(n.gamma));
    json_object_object_add(x, "max_md_jump", json_object_new_double(n.max_md_jump));
    json_object_object_add(x, "fi", json_object_new_double(n.fi));
    json_object_object_add(x, "fi_scale", json_object_new_double(n.fi_scale));
    json_object_object_add(x, "eta", json_object_new_double(n.eta));
    json_object_object_add(x, "qa_gate", json_object_new_int((int)n.qa_gate));
    /* no delay triggers quick adapt with trimming: the trims do */
    json_object_object_add(
        x, "qa_threshold_ns",
        n.qa_threshold_ns == UINT64_MAX ? NULL : json_object_new_int64((int64_t)n.qa_threshold_ns));
    json_object_object_add(x, "adjust_bytes", json_object_new_int64((int64_t)n.adjust_bytes));
    json_object_object_add(x, "adjust_period_ns",
                           json_object_new_int64((int64_t)n.adjust_period_ns));
    json_object_object_add(x, "fi_delay_ns", json_object_new_int64((int64_t)n.fi_delay_ns));
    json_object_object_add(x, "delay_gain", json_object_new_double(n.delay_gain));
    json_object_object_add(j, "nscc", x);
    return j;
}

static json_object *peer_json(const fab_topo *topo, uint32_t host, uint32_t peer)
{
    json_object *j = json_object_new_object(), *paths = json_object_new_array();
    json_object_object_add(j, "host", json_object_new_string(fab_host_name(topo, peer)));
    for (unsigned p = 0; p < fab_topo_planes(topo); p++) {
        size_t n = 0;
        if (fab_path_enum(topo, host, p, peer, p, NULL, 0, &n) != FAB_ERR_NOSPACE || n == 0) {
            continue;
        }
        fab_path *v = util_xcalloc(n, sizeof(*v));
        if (fab_path_enum(topo, host, p, peer, p, v, n, &n) == 0) {
            for (size_t i = 0; i < n; i++) {
                if (!v[i].usable) {
                    continue;
                }
                json_object *o = json_object_new_object();
                json_object_object_add(o, "ev", json_object_new_int64(v[i].ev));
                json_object_object_add(o, "plane", json_object_new_int((int)p));
                if (v[i].t1 >= 0) {
                    json_object_object_add(o, "t1", json_object_new_int(v[i].t1));
                }
                json_object_object_add(o, "outer", addr(v[i].outer));
                json_object_array_add(paths, o);
            }
        }
        free(v);
    }
    json_object_object_add(j, "paths", paths);
    return j;
}

json_object *ctl_profile_json(const fab_topo *topo, const ctl_blast *b, const ctl_profile_cfg *cfg,
                              uint32_t host, uint32_t peer)
{
    const fab_plan *plan = fab_topo_plan(topo);
    unsigned planes = fab_topo_planes(topo), cabled = 0;
    json_object *cc = NULL;
    json_object *j = json_object_new_object(), *ports = json_object_new_array(),
                *classes = json_object_new_array(), *t1u = json_object_new_array();
    json_object_object_add(j, "host", json_object_new_string(fab_host_name(topo, host)));
    for (unsigned p = 0; p < planes; p++) {
        uint32_t a;
        json_object_array_add(ports, port_json(topo, host, p, &a));
        json_object *u = json_object_new_array();
        for (uint32_t k = 0; k < fab_topo_nt1(topo, p); k++) {
            fab_switch s;
            uint32_t sw = fab_switch_at(topo, p, FAB_TIER_T1, k);
            json_object_array_add(
                u, sw != FAB_NONE && fab_switch_get(topo, sw, &s) == 0 ? hex16(s.usid) : NULL);
        }
        json_object_array_add(t1u, u);
        if (a != FAB_NONE) {
            cabled++;
            plane_classes(topo, b, p, a, classes);
        }
    }
    json_object_object_add(j, "ports", ports);
    json_object *codec = json_object_new_object();
    unsigned salt = 32u - plan->plane_bits - plan->index_bits;
    json_object_object_add(codec, "plane_bits", json_object_new_int(plan->plane_bits));
    json_object_object_add(codec, "t1_bits", json_object_new_int(plan->index_bits));
    json_object_object_add(codec, "salt_bits", json_object_new_int((int)salt));
    json_object_object_add(codec, "udp_port", json_object_new_int(plan->udp_port));
    json_object_object_add(j, "ev_codec", codec);
    json_object_object_add(j, "classes", classes);
    json_object *tmpl = json_object_new_object();
    uint8_t block[16] = {0};
    memcpy(block, plan->block, 4);
    char t[80];
    snprintf(t, sizeof(t), "%s/32", fab_addr_str(block, (char[64]){0}));
    json_object_object_add(tmpl, "block", json_object_new_string(t));
    json_object_object_add(tmpl, "remote", json_object_new_string("block:T0:T1:T0':DL'::"));
    json_object_object_add(tmpl, "local", json_object_new_string("block:T0:DL'::"));
    json_object_object_add(tmpl, "t1_usids", t1u);
    json_object_object_add(j, "templates", tmpl);
    if (!(cc = cc_json(cfg, cabled ? cabled : 1))) {
        json_object_put(j);
        return NULL;
    }
    json_object_object_add(j, "cc", cc);
    if (peer != FAB_NONE) {
        json_object_object_add(j, "peer", peer_json(topo, host, peer));
    }
    return j;
}
