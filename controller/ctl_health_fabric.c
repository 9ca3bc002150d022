/* SPDX-License-Identifier: MIT */
/* The fabric-wide views, read from the snapshot: each plane's counts by state, the list of
 * what is wrong now (every element not ok, or denied, most severe first), and a plane's
 * compact state matrix (every T0 x T1 link direction in one answer, tagged by its content so
 * that polling an unchanged plane costs one comparison). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_health_int.h"

/* The plane of link |l|. */
static unsigned plane_of(const ctl_health *h, uint64_t l)
{
    if (l >= h->nlinks) {
        return (unsigned)((l - h->nlinks) / h->nhosts);
    }
    unsigned p = 0;
    while (p + 1 < h->planes && l >= h->base[p + 1]) {
        p++;
    }
    return p;
}

/* A direction's state as the snapshot has it: measured, raised to what names it. */
static int snap_dir(const ctl_health *h, uint64_t di)
{
    int m = (h->dst[di / 2] >> (2 * (di % 2))) & 3;
    if (!(h->has[di / 128] >> (di / 2 % 64) & 1)) {
        m = ST_NODATA;
    }
    return worst(m, ctl_health_named(h, di, FAB_NONE));
}

/* Whether an entry in force names element |l| (a link or host port) or switch |sw| itself. */
static bool denied_itself(const ctl_health *h, uint64_t l, uint32_t sw)
{
    size_t first;
    if (sw != FAB_NONE) {
        return ctl_hmarks_find(&h->deny, SWKEY(h, sw), &first) > 0;
    }
    return ctl_hmarks_find(&h->deny, 2 * l, &first) > 0 ||
           ctl_hmarks_find(&h->deny, 2 * l + 1, &first) > 0;
}

/* One plane's counts: T0-T1 links, host ports and switches by state, elements denied. */
typedef struct plane_counts {
    uint64_t links[4], ports[4], sws[4], denied;
} plane_counts;

/* With h->lock held for reading. */
static void count_plane(const ctl_health *h, unsigned p, plane_counts *c)
{
    memset(c, 0, sizeof(*c));
    if (p >= 16) {
        return;
    }
    memcpy(c->links, h->plane_links[p], sizeof(c->links));
    memcpy(c->ports, h->plane_ports[p], sizeof(c->ports));
    c->links[ST_NODATA] = (uint64_t)h->nt0[p] * h->nt1[p] - c->links[ST_OK] -
                          c->links[ST_DEGRADED] - c->links[ST_BAD];
    c->ports[ST_NODATA] =
        h->plane_nports[p] - c->ports[ST_OK] - c->ports[ST_DEGRADED] - c->ports[ST_BAD];
    for (uint32_t sw = 0; sw < h->nsw; sw++) {
        fab_switch s;
        if (fab_switch_get(h->topo, sw, &s) == 0 && s.plane == p) {
            c->sws[h->sw_st[sw]]++;
            c->denied += denied_itself(h, 0, sw);
        }
    }
    uint64_t last = UINT64_MAX;
    for (size_t i = 0; i < h->deny.n; i++) {
        uint64_t key = h->deny.pairs[i].key;
        if (key < 2 * h->nall && key / 2 != last && plane_of(h, key / 2) == p) {
            c->denied++;
            last = key / 2;
        }
    }
}

char *ctl_health_summary_text(ctl_health *h, int64_t now, size_t *plen)
{
    ctl_health_fresh(h, now);
    util_buf b = {0};
    pthread_rwlock_rdlock(&h->lock);
    util_buf_printf(&b, "{\"version\":\"h%" PRIu64 "-d%" PRId64 "\",\"planes\":[", h->snap_seq,
                    h->deny_version);
    for (unsigned p = 0; p < h->planes; p++) {
        plane_counts c;
        count_plane(h, p, &c);
        util_buf_printf(&b, "%s{\"plane\":%u", p ? "," : "", p);
        const char *names[] = {"links", "host_ports", "switches"};
        const uint64_t *counts[] = {c.links, c.ports, c.sws};
        for (int k = 0; k < 3; k++) {
            util_buf_printf(&b, ",\"%s\":{", names[k]);
            for (int s = 0; s < 4; s++) {
                util_buf_printf(&b, "%s\"%s\":%" PRIu64, s ? "," : "", states[s], counts[k][s]);
            }
            util_buf_lit(&b, "}");
        }
        util_buf_printf(&b, ",\"bad\":%" PRIu64 ",\"degraded\":%" PRIu64 ",\"denied\":%" PRIu64 "}",
                        c.links[ST_BAD] + c.ports[ST_BAD] + c.sws[ST_BAD],
                        c.links[ST_DEGRADED] + c.ports[ST_DEGRADED] + c.sws[ST_DEGRADED], c.denied);
    }
    util_buf_lit(&b, "]}");
    pthread_rwlock_unlock(&h->lock);
    *plen = b.len;
    return b.s;
}

void ctl_health_metrics(ctl_health *h, int64_t now, util_buf *b)
{
    static const char *const kinds[] = {"link", "host_port", "switch", "optic"};
    ctl_health_fresh(h, now);
    plane_counts *c = util_xcalloc(h->planes + 1, sizeof(*c));
    uint64_t (*verdicts)[4] = util_xcalloc(h->planes + 1, sizeof(*verdicts));
    pthread_rwlock_rdlock(&h->lock);
    for (unsigned p = 0; p < h->planes; p++) {
        count_plane(h, p, &c[p]);
    }
    for (size_t i = 0; i < h->nvflat; i++) {
        const hverdict *v = h->vflat[i];
        fab_element el;
        char why[8];
        if (v->nel && fab_element_parse(h->topo, v->element[0], &el, why, sizeof(why)) == 0 &&
            el.plane < h->planes) {
            for (int k = 0; k < 4; k++) {
                verdicts[el.plane][k] += strcmp(v->kind, kinds[k]) == 0;
            }
        }
    }
    pthread_rwlock_unlock(&h->lock);
    const char *fam[] = {"links", "host_ports", "switches"};
    const char *help[] = {"T0-T1 links", "host ports (NIC-T0 links)", "switches"};
    for (int k = 0; k < 3; k++) {
        util_buf_printf(b, "# HELP mrcfab_health_%s The %s of each plane by health state.\n", fam[k],
                        help[k]);
        util_buf_printf(b, "# TYPE mrcfab_health_%s gauge\n", fam[k]);
        for (unsigned p = 0; p < h->planes; p++) {
            const uint64_t *n = k == 0 ? c[p].links : k == 1 ? c[p].ports : c[p].sws;
            for (int s = 0; s < 4; s++) {
                util_buf_printf(b, "mrcfab_health_%s{plane=\"%u\",state=\"%s\"} %" PRIu64 "\n",
                                fam[k], p, states[s], n[s]);
            }
        }
    }
    util_buf_lit(b, "# HELP mrcfab_health_denied Elements of each plane a denylist entry in force "
                    "takes out of use.\n# TYPE mrcfab_health_denied gauge\n");
    for (unsigned p = 0; p < h->planes; p++) {
        util_buf_printf(b, "mrcfab_health_denied{plane=\"%u\"} %" PRIu64 "\n", p, c[p].denied);
    }
    util_buf_lit(b, "# HELP mrcfab_health_verdicts The localizers' verdicts held, by plane and "
                    "kind.\n# TYPE mrcfab_health_verdicts gauge\n");
    for (unsigned p = 0; p < h->planes; p++) {
        for (int k = 0; k < 4; k++) {
            util_buf_printf(b, "mrcfab_health_verdicts{plane=\"%u\",kind=\"%s\"} %" PRIu64 "\n", p,
                            kinds[k], verdicts[p][k]);
        }
    }
    free(c);
    free(verdicts);
}

/* One element of the problem list: its severity (0 bad, 1 degraded, 2 denied only), plane,
 * kind (0 switch, 1 T0-T1 link, 2 host port) and index (a switch's id or a link's). */
typedef struct problem {
    uint8_t sev, kind;
    uint16_t plane;
    uint64_t id;
} problem;

static int problem_cmp(const void *a, const void *b)
{
    const problem *x = a, *y = b;
    if (x->sev != y->sev) {
        return x->sev < y->sev ? -1 : 1;
    }
    if (x->plane != y->plane) {
        return x->plane < y->plane ? -1 : 1;
    }
    if (x->kind != y->kind) {
        return x->kind < y->kind ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id;
}

static void problem_push(problem **v, size_t *n, size_t *cap, problem p)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *v = util_xrealloc(*v, *cap * sizeof(**v));
    }
    (*v)[(*n)++] = p;
}

char *ctl_health_problems_text(ctl_health *h, unsigned plane, uint64_t offset, uint64_t limit,
                               int64_t now, size_t *plen)
{
    ctl_health_fresh(h, now);
    problem *v = NULL;
    size_t n = 0, cap = 0;
    util_buf items = {0};
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t sw = 0; sw < h->nsw; sw++) {
        fab_switch s;
        if (fab_switch_get(h->topo, sw, &s) != 0 || (plane != UINT32_MAX && s.plane != plane)) {
            continue;
        }
        int st = h->sw_st[sw];
        bool den = denied_itself(h, 0, sw);
        if (st >= ST_DEGRADED || den) {
            problem_push(&v, &n, &cap,
                         (problem){st == ST_BAD ? 0 : st == ST_DEGRADED ? 1 : 2, 0,
                                   (uint16_t)s.plane, sw});
        }
    }
    for (int st = ST_DEGRADED; st <= ST_BAD; st++) {
        for (size_t i = 0; i < h->by_state[st].n; i++) {
            uint64_t l = h->by_state[st].v[i];
            unsigned p = plane_of(h, l);
            if (plane == UINT32_MAX || p == plane) {
                problem_push(&v, &n, &cap,
                             (problem){st == ST_BAD ? 0 : 1, l < h->nlinks ? 1 : 2, (uint16_t)p, l});
            }
        }
    }
    uint64_t last = UINT64_MAX;
    for (size_t i = 0; i < h->deny.n; i++) {
        uint64_t key = h->deny.pairs[i].key, l = key / 2;
        if (key >= 2 * h->nall || l == last || h->st[l] >= ST_DEGRADED) {
            continue; /* a switch, seen, or listed for its state already */
        }
        last = l;
        unsigned p = plane_of(h, l);
        if (plane == UINT32_MAX || p == plane) {
            problem_push(&v, &n, &cap, (problem){2, l < h->nlinks ? 1 : 2, (uint16_t)p, l});
        }
    }
    if (n > 1) {
        qsort(v, n, sizeof(*v), problem_cmp);
    }
    for (uint64_t i = offset; i < n && i < offset + limit; i++) {
        const problem *pr = &v[i];
        util_buf_put(&items, i > offset ? "," : "", i > offset);
        ctl_health_element_text(&items, h, pr->kind == 0 ? UINT64_MAX : pr->id,
                                pr->kind == 0 ? (uint32_t)pr->id : FAB_NONE, now);
    }
    util_buf b = {0};
    util_buf_printf(&b,
                    "{\"total\":%zu,\"offset\":%" PRIu64 ",\"version\":\"h%" PRIu64 "-d%" PRId64
                    "\",\"items\":[",
                    n, offset, h->snap_seq, h->deny_version);
    pthread_rwlock_unlock(&h->lock);
    util_buf_put(&b, items.s ? items.s : "", items.len);
    util_buf_lit(&b, "]}");
    free(items.s);
    free(v);
    *plen = b.len;
    return b.s;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(util_buf *b, const uint8_t *data, size_t len)
{
    size_t need = b->len + 4 * ((len + 2) / 3) + 1;
    if (need > b->cap) {
        b->cap = need;
        b->s = util_xrealloc(b->s, b->cap);
    }
    char *o = b->s + b->len;
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t x = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        *o++ = b64[x >> 18];
        *o++ = b64[x >> 12 & 63];
        *o++ = b64[x >> 6 & 63];
        *o++ = b64[x & 63];
    }
    if (i < len) {
        uint32_t x = (uint32_t)data[i] << 16 | (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0);
        *o++ = b64[x >> 18];
        *o++ = b64[x >> 12 & 63];
        *o++ = i + 1 < len ? b64[x >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    b->len = (size_t)(o - b->s);
}

static uint64_t fnv64(const uint8_t *data, size_t len)
{
    uint64_t x = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        x = (x ^ data[i]) * 1099511628211ull;
    }
    return x;
}

int ctl_health_matrix(ctl_health *h, unsigned plane, const char *if_none_match, int64_t now,
                      char *etag, size_t etaglen, char **pbody, size_t *plen)
{
    if (plane >= h->planes) {
        return -EINVAL;
    }
    ctl_health_fresh(h, now);
    uint32_t nt0 = h->nt0[plane], nt1 = h->nt1[plane];
    uint8_t *cells = util_xmalloc((size_t)nt0 * nt1 + 1);
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t a = 0; a < nt0; a++) {
        for (uint32_t j = 0; j < nt1; j++) {
            uint64_t l = t0t1_index(h, plane, a, j);
            uint8_t nib[2];
            for (unsigned d = 0; d < 2; d++) {
                uint64_t di = 2 * l + d;
                nib[d] = (uint8_t)(snap_dir(h, di) | ctl_hmarks_dir(&h->deny, di) << 2 |
                                   ctl_hmarks_dir(&h->named, di) << 3);
            }
            cells[(size_t)a * nt1 + j] = (uint8_t)(nib[0] << 4 | nib[1]);
        }
    }
    pthread_rwlock_unlock(&h->lock);
    snprintf(etag, etaglen, "\"m%u-%016" PRIx64 "\"", plane, fnv64(cells, (size_t)nt0 * nt1));
    int rv = 0;
    if (if_none_match && strstr(if_none_match, etag)) {
        rv = 1; /* unchanged: 304 */
        goto out;
    }
    util_buf b = {0};
    util_buf_printf(&b, "{\"plane\":%u,\"t0\":%u,\"t1\":%u,\"version\":", plane, nt0, nt1);
    util_buf_json_str(&b, etag);
    const char *lists[2] = {"t0_names", "t1_names"};
    for (int t = 0; t < 2; t++) {
        util_buf_printf(&b, ",\"%s\":[", lists[t]);
        uint32_t count = t == 0 ? nt0 : nt1;
        for (uint32_t i = 0; i < count; i++) {
            fab_switch s;
            uint32_t sw = fab_switch_at(h->topo, plane, t == 0 ? FAB_TIER_T0 : FAB_TIER_T1, i);
            util_buf_put(&b, i ? "," : "", i > 0);
            util_buf_json_str(&b, sw != FAB_NONE && fab_switch_get(h->topo, sw, &s) == 0 ? s.name
                                                                                       : "");
        }
        util_buf_lit(&b, "]");
    }
    util_buf_lit(&b, ",\"encoding\":\"base64\",\"cells\":\"");
    base64(&b, cells, (size_t)nt0 * nt1);
    util_buf_lit(&b, "\"}");
    *pbody = b.s;
    *plen = b.len;
out:
    free(cells);
    return rv;
}
