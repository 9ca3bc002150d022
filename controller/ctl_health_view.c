/* SPDX-License-Identifier: MIT */
/* The health engine's views: pages of links, switches and hosts read from the snapshot, the
 * path between two hosts and an element's history, each item judged from its live evidence. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_element.h"
#include "ctl_health_int.h"
#include "ctl_store.h"

static double rate_of(uint64_t sent, uint64_t lost)
{
    return sent ? (double)lost / (double)sent : 0;
}

/* One direction's evidence as JSON text: both sources summed, then each. */
static void dir_text(util_buf *b, const ctl_health *h, uint64_t di, int st, int measured,
                     int64_t now)
{
    const dirstat *d = &h->links[di / 2].dir[di % 2];
    dirview v = dir_view(h, d, now);
    probeview pv = ctl_health_probe_view(h, di, now);
    uint64_t sent = v.sent + pv.sent, lost = v.lost + pv.lost;
    util_buf_printf(b,
                    "{\"state\":\"%s\",\"measured\":\"%s\",\"denied\":%s,\"sent\":%" PRIu64
                    ",\"lost\":%" PRIu64 ",\"loss_rate\":%.6g,\"sources\":%u,\"probed\":%s,"
                    "\"assumed_bad_evs\":%u",
                    states[st], states[measured], ctl_hmarks_dir(&h->deny, di) ? "true" : "false",
                    sent, lost, rate_of(sent, lost), v.nsrc, pv.sent ? "true" : "false", v.bad_evs);
    int64_t last = d->last_ms > pv.last_ms ? d->last_ms : pv.last_ms;
    if (last) {
        char t[40];
        ctl_time_str(last, t, sizeof(t));
        util_buf_printf(b, ",\"last_evidence\":\"%s\"", t);
    }
    util_buf_printf(b,
                    ",\"agents\":{\"sent\":%" PRIu64 ",\"lost\":%" PRIu64
                    ",\"loss_rate\":%.6g,\"sources\":%u,\"assumed_bad_evs\":%u}",
                    v.sent, v.lost, loss_rate(&v), v.nsrc, v.bad_evs);
    util_buf_printf(b,
                    ",\"prober\":{\"sent\":%" PRIu64 ",\"lost\":%" PRIu64
                    ",\"loss_rate\":%.6g,\"own\":%s}}",
                    pv.sent, pv.lost, rate_of(pv.sent, pv.lost), pv.own ? "true" : "false");
}

void ctl_health_verdict_text(util_buf *b, const hverdict *v)
{
    if (!v) {
        util_buf_lit(b, "null");
        return;
    }
    util_buf_lit(b, "{\"component\":");
    util_buf_json_str(b, v->component);
    util_buf_printf(b,
                    ",\"kind\":\"%s\",\"state\":\"%s\",\"loss\":%.6g,\"lost\":%" PRIu64
                    ",\"sent\":%" PRIu64 ",\"horizon_s\":%.6g,\"llr\":%.6g",
                    v->kind, v->state, v->loss, v->lost, v->sent, v->horizon_s, v->llr);
    if (v->since_ms) {
        char t[40];
        ctl_time_str(v->since_ms, t, sizeof(t));
        util_buf_printf(b, ",\"since\":\"%s\"", t);
    }
    util_buf_lit(b, ",\"entries\":[");
    for (unsigned k = 0; k < v->nentries; k++) {
        util_buf_printf(b, "%s%lld", k ? "," : "", (long long)v->entries[k]);
    }
    util_buf_lit(b, "]}");
}

static const char *sw_name(const ctl_health *h, unsigned p, fab_tier t, unsigned i)
{
    fab_switch s;
    uint32_t sw = fab_switch_at(h->topo, p, t, i);
    return sw != FAB_NONE && fab_switch_get(h->topo, sw, &s) == 0 ? s.name : "?";
}

static void link_name(const ctl_health *h, uint64_t l, char *name, size_t len)
{
    unsigned p, a, j;
    uint32_t host;
    ctl_health_where(h, l, &p, &a, &j, &host);
    if (host != FAB_NONE) {
        snprintf(name, len, "%s:%u", fab_host_name(h->topo, host), p);
    } else {
        snprintf(name, len, "%s~%s", sw_name(h, p, FAB_TIER_T0, a), sw_name(h, p, FAB_TIER_T1, j));
    }
}

/* The hmarks keys of link |l|'s directions and of the switches it ends on. */
static unsigned link_keys(const ctl_health *h, uint64_t l, uint64_t keys[4])
{
    unsigned p, a, j, n = 0;
    uint32_t host, sw;
    ctl_health_where(h, l, &p, &a, &j, &host);
    keys[n++] = 2 * l;
    keys[n++] = 2 * l + 1;
    if ((int)a >= 0 && (sw = fab_switch_at(h->topo, p, FAB_TIER_T0, a)) != FAB_NONE) {
        keys[n++] = SWKEY(h, sw);
    }
    if (host == FAB_NONE && (sw = fab_switch_at(h->topo, p, FAB_TIER_T1, j)) != FAB_NONE) {
        keys[n++] = SWKEY(h, sw);
    }
    return n;
}

#define DENIED_SHOWN 16 /* entries listed beside one element */

/* Link |l| with its health, as JSON text (pages of them are written out, not built: a
 * hundred links through json-c cost more than the rest of the query). */
static void link_text(util_buf *b, ctl_health *h, uint64_t l, int64_t now, int *pst)
{
    char name[200];
    unsigned p, a, j;
    uint32_t host;
    ctl_health_where(h, l, &p, &a, &j, &host);
    link_name(h, l, name, sizeof(name));
    int mu = ctl_health_measured(h, 2 * l, now), md = ctl_health_measured(h, 2 * l + 1, now);
    int su = worst(mu, ctl_health_named(h, 2 * l, FAB_NONE)),
        sd = worst(md, ctl_health_named(h, 2 * l + 1, FAB_NONE));
    uint64_t keys[4];
    const ctl_deny *den[DENIED_SHOWN];
    size_t nden = ctl_health_denied_by(h, keys, link_keys(h, l, keys), den, DENIED_SHOWN);
    const hverdict *v = ctl_health_verdict_of(h, 2 * l, FAB_NONE);
    v = v ? v : ctl_health_verdict_of(h, 2 * l + 1, FAB_NONE);
    util_buf_lit(b, "{\"link\":");
    util_buf_json_str(b, name);
    util_buf_printf(b, ",\"plane\":%u,\"state\":\"%s\",\"measured\":\"%s\",\"denied\":", p,
                    states[worst(su, sd)], states[worst(mu, md)]);
    ctl_health_deny_json(b, den, nden);
    util_buf_lit(b, ",\"verdict\":");
    ctl_health_verdict_text(b, v);
    util_buf_lit(b, ",\"up\":");
    dir_text(b, h, 2 * l, su, mu, now);
    util_buf_lit(b, ",\"down\":");
    dir_text(b, h, 2 * l + 1, sd, md, now);
    util_buf_lit(b, "}");
    if (pst) {
        *pst = worst(su, sd);
    }
}

void ctl_health_element_text(util_buf *b, ctl_health *h, uint64_t l, uint32_t sw, int64_t now)
{
    char name[200];
    const ctl_deny *den[DENIED_SHOWN];
    size_t nden;
    const hverdict *v;
    int st, measured;
    unsigned plane;
    double loss = 0;
    const char *kind;
    if (sw != FAB_NONE) {
        fab_switch s;
        fab_switch_get(h->topo, sw, &s);
        snprintf(name, sizeof(name), "%s", s.name);
        uint64_t key = SWKEY(h, sw);
        nden = ctl_health_denied_by(h, &key, 1, den, DENIED_SHOWN);
        v = ctl_health_verdict_of(h, UINT64_MAX, sw);
        st = h->sw_st[sw];
        measured = h->sw_mst[sw];
        plane = s.plane;
        kind = "switch";
        const uint32_t *c = h->sw_count[sw];
        uint32_t seen = c[ST_OK] + c[ST_DEGRADED] + c[ST_BAD];
        loss = seen ? (double)(c[ST_DEGRADED] + c[ST_BAD]) / seen : 0; /* its links not ok */
    } else {
        unsigned a, j;
        uint32_t host;
        uint64_t keys[4];
        ctl_health_where(h, l, &plane, &a, &j, &host);
        link_name(h, l, name, sizeof(name));
        nden = ctl_health_denied_by(h, keys, link_keys(h, l, keys), den, DENIED_SHOWN);
        v = ctl_health_verdict_of(h, 2 * l, FAB_NONE);
        v = v ? v : ctl_health_verdict_of(h, 2 * l + 1, FAB_NONE);
        st = h->st[l];
        measured = worst(h->dst[l] & 3, h->dst[l] >> 2 & 3);
        kind = host != FAB_NONE ? "host_port" : "link";
        loss = ctl_health_link_loss(h, l, now);
    }
    util_buf_lit(b, "{\"element\":");
    util_buf_json_str(b, name);
    util_buf_printf(b,
                    ",\"kind\":\"%s\",\"plane\":%u,\"state\":\"%s\",\"measured\":\"%s\","
                    "\"loss_rate\":%.6g,\"denied\":",
                    kind, plane, states[st], states[measured], loss);
    ctl_health_deny_json(b, den, nden);
    util_buf_lit(b, ",\"verdict\":");
    ctl_health_verdict_text(b, v);
    util_buf_lit(b, "}");
}

/* Direction |di|'s state now: what it measured, raised to what names it. */
static int dir_now(const ctl_health *h, uint64_t di, int64_t now)
{
    return worst(ctl_health_measured(h, di, now), ctl_health_named(h, di, FAB_NONE));
}

static json_object *link_item(ctl_health *h, uint64_t l, int64_t now, int *pst)
{
    util_buf b = {0};
    link_text(&b, h, l, now, pst);
    json_object *o = json_tokener_parse(b.s);
    free(b.s);
    return o;
}

/* The links a filter's plane or switch allows, in index order, as ranges [lo, hi) and single
 * links; a T0's host ports are collected, a T1's links are strided. */
typedef struct space {
    uint64_t lo[2], hi[2]; /* up to two ranges */
    unsigned nr;
    vec64 one; /* or these links */
} space;

static void space_of(ctl_health *h, const ctl_link_filter *f, space *sp)
{
    memset(sp, 0, sizeof(*sp));
    if (f->sw != FAB_NONE) {
        fab_switch s;
        fab_switch_get(h->topo, f->sw, &s);
        unsigned p = s.plane;
        if ((f->plane != UINT32_MAX && f->plane != p) || p >= h->planes) {
            return;
        }
        if (s.tier == FAB_TIER_T1) {
            for (uint32_t a = 0; a < h->nt0[p]; a++) {
                vec_push(&sp->one, h->base[p] + (uint64_t)a * h->nt1[p] + s.index);
            }
            return;
        }
        for (uint32_t j = 0; j < h->nt1[p]; j++) {
            vec_push(&sp->one, h->base[p] + (uint64_t)s.index * h->nt1[p] + j);
        }
        size_t first = sp->one.n;
        for (unsigned port = 0; port < s.nports; port++) {
            fab_peer peer;
            if (fab_switch_peer(h->topo, f->sw, port, &peer) == 0 && peer.kind == FAB_PEER_HOST &&
                peer.port == p) {
                vec_push(&sp->one, nic_index(h, peer.id, p));
            }
        }
        /* host ports in index order */
        for (size_t i = first + 1; i < sp->one.n; i++) {
            for (size_t k = i; k > first && sp->one.v[k - 1] > sp->one.v[k]; k--) {
                uint64_t t = sp->one.v[k];
                sp->one.v[k] = sp->one.v[k - 1];
                sp->one.v[k - 1] = t;
            }
        }
        return;
    }
    if (f->plane == UINT32_MAX) {
        sp->lo[0] = 0;
        sp->hi[0] = h->nall;
        sp->nr = 1;
        return;
    }
    unsigned p = f->plane;
    sp->lo[0] = h->base[p];
    sp->hi[0] = h->base[p] + (uint64_t)h->nt0[p] * h->nt1[p];
    sp->lo[1] = nic_index(h, 0, p);
    sp->hi[1] = sp->lo[1] + h->nhosts;
    sp->nr = 2;
}

/* The first index in sorted |v| not below |x|. */
static size_t lower(const vec64 *v, uint64_t x)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->v[mid] < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* A page: {total, offset, items}; |items| is consumed. */
static json_object *page_json(uint64_t total, uint64_t offset, json_object *items)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "total", json_object_new_int64((int64_t)total));
    json_object_object_add(j, "offset", json_object_new_int64((int64_t)offset));
    json_object_object_add(j, "items", items);
    return j;
}

/* How many links of [lo, x) exist (a host port must be cabled), and with |nodata| have no
 * evidence in the snapshot. */
static uint64_t before(const ctl_health *h, uint64_t lo, uint64_t x, bool nodata)
{
    uint64_t n = (x - lo) - (lower(&h->missing, x) - lower(&h->missing, lo));
    for (int s = ST_OK; nodata && s <= ST_BAD; s++) {
        n -= lower(&h->by_state[s], x) - lower(&h->by_state[s], lo);
    }
    return n;
}

typedef struct pager {
    const ctl_link_filter *f;
    util_buf items; /* the page's items, comma-separated */
    uint64_t matched, taken;
    int64_t now;
} pager;

static void take(ctl_health *h, pager *pg, uint64_t l)
{
    if (pg->matched >= pg->f->offset && pg->matched < pg->f->offset + pg->f->limit) {
        if (pg->taken++) {
            util_buf_lit(&pg->items, ",");
        }
        link_text(&pg->items, h, l, pg->now, NULL);
    }
    pg->matched++;
}

char *ctl_health_links_text(ctl_health *h, const ctl_link_filter *f, int64_t now, size_t *plen)
{
    int want = -1;
    for (int s = 0; f->state && s < 4; s++) {
        want = strcmp(f->state, states[s]) == 0 ? s : want;
    }
    ctl_health_fresh(h, now);
    space sp;
    space_of(h, f, &sp);
    pager pg = {.f = f, .now = now};
    pthread_rwlock_rdlock(&h->lock);
    if (sp.one.n || !sp.nr) {
        for (size_t i = 0; i < sp.one.n; i++) {
            if (link_exists(h, sp.one.v[i]) && (want < 0 || h->st[sp.one.v[i]] == want)) {
                take(h, &pg, sp.one.v[i]);
            }
        }
    } else if (want > ST_NODATA) {
        /* the snapshot's list of that state, cut to the filter's ranges */
        const vec64 *v = &h->by_state[want];
        for (unsigned r = 0; r < sp.nr; r++) {
            size_t a = lower(v, sp.lo[r]), b = lower(v, sp.hi[r]);
            uint64_t skip = pg.matched < f->offset ? f->offset - pg.matched : 0;
            if (skip >= b - a) {
                pg.matched += b - a;
                continue;
            }
            pg.matched += skip;
            for (size_t i = a + skip; i < b; i++) {
                if (pg.matched >= f->offset + f->limit) {
                    pg.matched += b - i; /* the rest only counts */
                    break;
                }
                take(h, &pg, v->v[i]);
            }
        }
    } else {
        /* every link, or those without evidence: counted from the missing ports and the
         * snapshot's lists, and the page found by a binary search, not by a walk */
        bool nodata = want == ST_NODATA;
        for (unsigned r = 0; r < sp.nr; r++) {
            uint64_t lo = sp.lo[r], hi = sp.hi[r], n = before(h, lo, hi, nodata);
            uint64_t skip = pg.matched < f->offset ? f->offset - pg.matched : 0;
            if (skip >= n) {
                pg.matched += n;
                continue;
            }
            uint64_t a = lo, b = hi; /* the first link with |skip| before it */
            while (a < b) {
                uint64_t mid = a + (b - a) / 2;
                if (before(h, lo, mid + 1, nodata) <= skip) {
                    a = mid + 1;
                } else {
                    b = mid;
                }
            }
            pg.matched += skip;
            uint64_t taken = skip;
            for (uint64_t l = a; l < hi && pg.matched < f->offset + f->limit; l++) {
                if (link_exists(h, l) && (!nodata || h->st[l] == ST_NODATA)) {
                    take(h, &pg, l);
                    taken++;
                }
            }
            pg.matched += n - taken; /* the rest only counts */
        }
    }
    pthread_rwlock_unlock(&h->lock);
    free(sp.one.v);
    util_buf page = {0};
    util_buf_printf(&page, "{\"total\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"items\":[",
                    pg.matched, f->offset);
    util_buf_put(&page, pg.items.s ? pg.items.s : "", pg.items.len);
    util_buf_lit(&page, "]}");
    free(pg.items.s);
    *plen = page.len;
    return page.s;
}

json_object *ctl_health_links(ctl_health *h, const ctl_link_filter *f, int64_t now)
{
    size_t len;
    char *text = ctl_health_links_text(h, f, now, &len);
    json_object *j = json_tokener_parse(text);
    free(text);
    return j;
}

/* A switch's "denied" (the entries in force on it) and "verdict" members into |j|. */
static void switch_marks(const ctl_health *h, uint32_t sw, json_object *j)
{
    uint64_t key = SWKEY(h, sw);
    const ctl_deny *den[DENIED_SHOWN];
    size_t nden = ctl_health_denied_by(h, &key, 1, den, DENIED_SHOWN);
    util_buf b = {0};
    ctl_health_deny_json(&b, den, nden);
    json_object_object_add(j, "denied", json_tokener_parse(b.s));
    b.len = 0;
    ctl_health_verdict_text(&b, ctl_health_verdict_of(h, UINT64_MAX, sw));
    json_object_object_add(j, "verdict", json_tokener_parse(b.s));
    free(b.s);
}

json_object *ctl_health_switches(ctl_health *h, const ctl_link_filter *f, int64_t now)
{
    ctl_health_fresh(h, now);
    json_object *items = json_object_new_array();
    uint64_t matched = 0;
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t sw = 0; sw < h->nsw; sw++) {
        fab_switch s;
        if (fab_switch_get(h->topo, sw, &s) != 0 ||
            (f->plane != UINT32_MAX && s.plane != f->plane) || (f->sw != FAB_NONE && f->sw != sw)) {
            continue;
        }
        int st = h->sw_st[sw];
        if (f->state && strcmp(f->state, states[st]) != 0) {
            continue;
        }
        if (matched >= f->offset && matched < f->offset + f->limit) {
            /* links without evidence are not in the counts: they are the rest */
            uint32_t c[4];
            memcpy(c, h->sw_count[sw], sizeof(c));
            uint32_t all = s.tier == FAB_TIER_T1 ? h->nt0[s.plane] : h->nt1[s.plane];
            if (s.tier == FAB_TIER_T0) {
                for (unsigned port = 0; port < s.nports; port++) {
                    fab_peer peer;
                    all += fab_switch_peer(h->topo, sw, port, &peer) == 0 &&
                           peer.kind == FAB_PEER_HOST;
                }
            }
            c[ST_NODATA] = all - c[ST_OK] - c[ST_DEGRADED] - c[ST_BAD];
            json_object *j = json_object_new_object();
            json_object_object_add(j, "switch", json_object_new_string(s.name));
            json_object_object_add(j, "plane", json_object_new_int((int)s.plane));
            json_object_object_add(j, "state", json_object_new_string(states[st]));
            json_object_object_add(j, "measured", json_object_new_string(states[h->sw_mst[sw]]));
            switch_marks(h, sw, j);
            json_object *links = json_object_new_object();
            for (int k = 0; k < 4; k++) {
                json_object_object_add(links, states[k], json_object_new_int64(c[k]));
            }
            json_object_object_add(j, "links", links);
            json_object_array_add(items, j);
        }
        matched++;
    }
    pthread_rwlock_unlock(&h->lock);
    return page_json(matched, f->offset, items);
}

json_object *ctl_health_hosts(ctl_health *h, const ctl_link_filter *f, int64_t now)
{
    ctl_health_fresh(h, now);
    json_object *items = json_object_new_array();
    uint64_t matched = 0;
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t host = 0; host < h->nhosts; host++) {
        int st = ST_NODATA;
        bool any = false;
        for (unsigned p = 0; p < h->planes; p++) {
            uint64_t l = nic_index(h, host, p);
            if ((f->plane == UINT32_MAX || p == f->plane) && link_exists(h, l)) {
                st = worst(st, h->st[l]);
                any = true;
            }
        }
        if (!any || (f->state && strcmp(f->state, states[st]) != 0)) {
            continue;
        }
        if (matched >= f->offset && matched < f->offset + f->limit) {
            json_object *j = json_object_new_object(), *ports = json_object_new_array();
            json_object_object_add(j, "host", json_object_new_string(fab_host_name(h->topo, host)));
            json_object_object_add(j, "state", json_object_new_string(states[st]));
            for (unsigned p = 0; p < h->planes; p++) {
                uint64_t l = nic_index(h, host, p);
                if ((f->plane == UINT32_MAX || p == f->plane) && link_exists(h, l)) {
                    json_object_array_add(ports, link_item(h, l, now, NULL));
                }
            }
            json_object_object_add(j, "ports", ports);
            json_object_array_add(items, j);
        }
        matched++;
    }
    pthread_rwlock_unlock(&h->lock);
    return page_json(matched, f->offset, items);
}

/* The entries in force that exclude the EV (p, j) from |src| under T0 |a| to |dst| under T0
 * |b|, by the agents' rule (fab_deny): T0 a, T0 b or T1 j, link a-j up, link b-j down, the
 * sender's port up, the receiver's port down. Into |ev| as "denied" and "excluded". */
static void ev_denials(const ctl_health *h, uint32_t src, uint32_t dst, unsigned p, unsigned a,
                       unsigned b, unsigned j, json_object *ev)
{
    uint64_t keys[7];
    unsigned n = 0;
    uint32_t sw;
    if ((sw = fab_switch_at(h->topo, p, FAB_TIER_T0, a)) != FAB_NONE) {
        keys[n++] = SWKEY(h, sw);
    }
    if (a != b && (sw = fab_switch_at(h->topo, p, FAB_TIER_T0, b)) != FAB_NONE) {
        keys[n++] = SWKEY(h, sw);
    }
    if (a != b) {
        if ((sw = fab_switch_at(h->topo, p, FAB_TIER_T1, j)) != FAB_NONE) {
            keys[n++] = SWKEY(h, sw);
        }
        keys[n++] = 2 * t0t1_index(h, p, a, j);
        keys[n++] = 2 * t0t1_index(h, p, b, j) + 1;
    }
    keys[n++] = 2 * nic_index(h, src, p);
    keys[n++] = 2 * nic_index(h, dst, p) + 1;
    const ctl_deny *den[DENIED_SHOWN];
    size_t nden = ctl_health_denied_by(h, keys, n, den, DENIED_SHOWN);
    util_buf buf = {0};
    ctl_health_deny_json(&buf, den, nden);
    json_object_object_add(ev, "excluded", json_object_new_boolean(nden > 0));
    json_object_object_add(ev, "denied", json_tokener_parse(buf.s));
    free(buf.s);
}

json_object *ctl_health_path(ctl_health *h, uint32_t src, uint32_t dst, int64_t now)
{
    ctl_health_fresh(h, now);
    json_object *evs = json_object_new_array();
    pthread_rwlock_rdlock(&h->lock);
    for (unsigned p = 0; p < h->planes; p++) {
        int a = t0_of(h, src, p), b = t0_of(h, dst, p);
        if (a < 0 || b < 0) {
            continue;
        }
        for (unsigned j = 0; j < h->nt1[p] && (a != b || j == 0); j++) {
            int st;
            json_object *ev = json_object_new_object(), *hops = json_object_new_array();
            json_object_object_add(ev, "plane", json_object_new_int((int)p));
            if (a != b) {
                json_object_object_add(ev, "t1",
                                       json_object_new_string(sw_name(h, p, FAB_TIER_T1, j)));
                json_object_object_add(ev, "ev",
                                       json_object_new_int64(fab_ev_make(h->plan, p, j, 0)));
            }
            /* the EV's state is the directions it crosses, not their links' worse one */
            json_object_array_add(hops, link_item(h, nic_index(h, src, p), now, NULL));
            st = dir_now(h, 2 * nic_index(h, src, p), now);
            if (a != b) {
                uint64_t la = h->base[p] + (uint64_t)a * h->nt1[p] + j;
                uint64_t lb = h->base[p] + (uint64_t)b * h->nt1[p] + j;
                json_object_array_add(hops, link_item(h, la, now, NULL));
                json_object_array_add(hops, link_item(h, lb, now, NULL));
                st = worst(st, worst(dir_now(h, 2 * la, now), dir_now(h, 2 * lb + 1, now)));
            }
            json_object_array_add(hops, link_item(h, nic_index(h, dst, p), now, NULL));
            st = worst(st, dir_now(h, 2 * nic_index(h, dst, p) + 1, now));
            json_object_object_add(ev, "state", json_object_new_string(states[st]));
            ev_denials(h, src, dst, p, (unsigned)a, (unsigned)b, j, ev);
            json_object_object_add(ev, "hops", hops);
            json_object_array_add(evs, ev);
        }
    }
    pthread_rwlock_unlock(&h->lock);
    json_object *j = json_object_new_object();
    json_object_object_add(j, "from", json_object_new_string(fab_host_name(h->topo, src)));
    json_object_object_add(j, "to", json_object_new_string(fab_host_name(h->topo, dst)));
    json_object_object_add(j, "evs", evs);
    return j;
}

int ctl_health_history(ctl_health *h, const char *element, int64_t now, json_object **out,
                       char *why, size_t whylen)
{
    ctl_element el;
    if (ctl_element_parse(h->topo, element, &el, why, whylen) != 0) {
        return -EINVAL;
    }
    uint64_t id = el.kind == CTL_EL_SWITCH ? h->nall + el.sw
                  : el.kind == CTL_EL_PORT
                      ? nic_index(h, el.host, el.plane)
                      : h->base[el.plane] + (uint64_t)el.t0 * h->nt1[el.plane] + el.t1;
    ctl_health_fresh(h, now);
    json_object *j = json_object_new_object(), *samples = json_object_new_array();
    json_object_object_add(j, "element", json_object_new_string(element));
    pthread_rwlock_rdlock(&h->lock);
    int st = el.kind == CTL_EL_SWITCH ? h->sw_st[el.sw] : h->st[id];
    json_object_object_add(j, "state", json_object_new_string(states[st]));
    ring *r = ctl_health_ring(h, id, false);
    for (uint32_t i = 0; r && i < r->n; i++) {
        const sample *s = &r->s[(r->head + HISTORY - r->n + i) % HISTORY];
        char t[40];
        ctl_time_str(s->ms, t, sizeof(t));
        json_object *o = json_object_new_object();
        json_object_object_add(o, "time", json_object_new_string(t));
        json_object_object_add(o, "state", json_object_new_string(states[s->state]));
        char x[32];
        snprintf(x, sizeof(x), "%.6g", s->loss);
        json_object_object_add(o, "loss_rate", json_object_new_double_s(strtod(x, NULL), x));
        json_object_array_add(samples, o);
    }
    pthread_rwlock_unlock(&h->lock);
    json_object_object_add(j, "samples", samples);
    *out = j;
    return 0;
}

void ctl_health_counts(ctl_health *h, int64_t now, uint64_t n[4])
{
    ctl_health_fresh(h, now);
    pthread_rwlock_rdlock(&h->lock);
    n[ST_NODATA] = h->nall;
    for (uint64_t l = h->nlinks; l < h->nall; l++) {
        n[ST_NODATA] -= !link_exists(h, l);
    }
    for (int s = ST_OK; s <= ST_BAD; s++) {
        n[s] = h->by_state[s].n;
        n[ST_NODATA] -= n[s];
    }
    pthread_rwlock_unlock(&h->lock);
}
