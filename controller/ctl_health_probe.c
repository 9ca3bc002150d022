/* SPDX-License-Identifier: MIT */
/* The prober's side of health: the localizer's posts (POST /api/v1/probes) bring, per window,
 * the coverage of each probed plane (every direction of a class carried so many probes), the
 * loss it attributes to the few directions it names, and the whole set of its verdicts. A
 * direction's prober evidence is its own loss (no correlation across paths, unlike an agent's
 * EV counters); a verdict names its elements until the localizer drops it, and a prober's
 * denylist entry in force names its element as long as it stands, so that an element the
 * prober took out of use is never shown ok. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_element.h"
#include "ctl_health_int.h"

static uint32_t half_of(const ctl_health *h, int64_t now)
{
    return (uint32_t)((uint64_t)now / h->half_ms);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

void ctl_health_probe_init(ctl_health *h)
{
    (void)h;
}

static void reporter_clear(reporter *r)
{
    free(r->v);
    free(r->json);
    memset(r, 0, sizeof(*r));
}

void ctl_health_probe_fini(ctl_health *h)
{
    free(h->pdirs);
    for (unsigned i = 0; i < REPORTERS; i++) {
        reporter_clear(&h->rep[i]);
    }
    free(h->vflat);
    ctl_hmarks_free(&h->named);
}

static pdir *pdir_find(const ctl_health *h, uint64_t di)
{
    if (!h->pdir_cap) {
        return NULL;
    }
    uint64_t k = mix(di + 1) & (h->pdir_cap - 1);
    pdir *p;
    while ((p = &h->pdirs[k])->dir) {
        if (p->dir == di + 1) {
            return p;
        }
        k = (k + 1) & (h->pdir_cap - 1);
    }
    return NULL;
}

/* The slot of direction |di|, made if new; the table keeps only directions with evidence in
 * the window (the others go when it grows). */
static pdir *pdir_get(ctl_health *h, uint64_t di, int64_t now)
{
    pdir *p = pdir_find(h, di);
    if (p) {
        return p;
    }
    if (2 * (h->npdirs + 1) > h->pdir_cap) {
        uint32_t e = half_of(h, now);
        pdir *old = h->pdirs;
        uint64_t oldcap = h->pdir_cap;
        h->pdir_cap = oldcap ? 2 * oldcap : 256;
        h->pdirs = util_xcalloc(h->pdir_cap, sizeof(pdir));
        h->npdirs = 0;
        for (uint64_t i = 0; i < oldcap; i++) {
            if (old[i].dir && old[i].epoch + 1 >= e) {
                uint64_t k = mix(old[i].dir) & (h->pdir_cap - 1);
                while (h->pdirs[k].dir) {
                    k = (k + 1) & (h->pdir_cap - 1);
                }
                h->pdirs[k] = old[i];
                h->npdirs++;
            }
        }
        free(old);
    }
    uint64_t k = mix(di + 1) & (h->pdir_cap - 1);
    while (h->pdirs[k].dir) {
        k = (k + 1) & (h->pdir_cap - 1);
    }
    p = &h->pdirs[k];
    *p = (pdir){.dir = di + 1, .epoch = half_of(h, now)};
    h->npdirs++;
    return p;
}

/* Two counts kept as half windows, brought to the half of |now|. */
static void age2(uint32_t *epoch, uint32_t a[2], uint32_t b[2], uint32_t e)
{
    if (*epoch == e) {
        return;
    }
    bool prev = *epoch + 1 == e;
    a[1] = prev ? a[0] : 0;
    b[1] = prev ? b[0] : 0;
    a[0] = b[0] = 0;
    *epoch = e;
}

/* Counts of half windows as of |now|: both halves when [0] is now's, [0] alone a half later. */
static uint64_t sum2(uint32_t epoch, const uint32_t a[2], uint32_t e)
{
    return epoch == e ? (uint64_t)a[0] + a[1] : epoch + 1 == e ? a[0] : 0;
}

static uint32_t sat_add(uint32_t a, uint64_t b)
{
    return b >= UINT32_MAX - a ? UINT32_MAX : a + (uint32_t)b;
}

probeview ctl_health_probe_view(const ctl_health *h, uint64_t di, int64_t now)
{
    probeview v = {0};
    uint32_t e = half_of(h, now);
    const pdir *p = pdir_find(h, di);
    if (p && (v.sent = sum2(p->epoch, p->sent, e)) > 0) {
        v.lost = sum2(p->epoch, p->lost, e);
        v.last_ms = p->last_ms;
        v.own = true;
        return v;
    }
    unsigned pl, a, j;
    uint32_t host;
    ctl_health_where(h, di / 2, &pl, &a, &j, &host);
    const coverage *c = pl < 16 ? &h->cov[pl] : NULL;
    if (c && c->last_ms) {
        v.sent = sum2(c->epoch, host != FAB_NONE ? c->nic : c->up, e);
        v.last_ms = v.sent ? c->last_ms : 0;
    }
    return v;
}

void ctl_health_cover(ctl_health *h, unsigned p)
{
    /* every link of the plane has the prober's evidence: each is judged */
    uint64_t ranges[2][2] = {{h->base[p], h->base[p] + (uint64_t)h->nt0[p] * h->nt1[p]},
                             {nic_index(h, 0, p), nic_index(h, 0, p) + h->nhosts}};
    for (int k = 0; k < 2; k++) {
        for (uint64_t l = ranges[k][0]; l < ranges[k][1]; l++) {
            if (link_exists(h, l)) {
                h->has[l / 64] |= 1ull << (l % 64);
            }
        }
    }
}

void ctl_health_pdir_restore(ctl_health *h, const pdir *p, int64_t now)
{
    pdir *slot = pdir_get(h, p->dir - 1, now);
    *slot = *p;
    uint64_t l = (p->dir - 1) / 2;
    h->has[l / 64] |= 1ull << (l % 64);
}

/* --- the verdicts' marks -------------------------------------------------------------------- */

void ctl_health_named_rebuild(ctl_health *h)
{
    hmarks m = {0};
    size_t cap = 0, n = 0;
    for (unsigned r = 0; r < REPORTERS; r++) {
        n += h->rep[r].n;
    }
    free(h->vflat);
    h->vflat = util_xcalloc(n + 1, sizeof(*h->vflat));
    h->nvflat = 0;
    for (unsigned r = 0; r < REPORTERS; r++) {
        for (size_t i = 0; i < h->rep[r].n; i++) {
            const hverdict *v = &h->rep[r].v[i];
            if (strcmp(v->state, "healed") == 0) {
                continue; /* the localizer is sure it is over; its entry, if any, still marks */
            }
            for (unsigned k = 0; k < v->nel; k++) {
                fab_element el;
                char why[8];
                if (fab_element_parse(h->topo, v->element[k], &el, why, sizeof(why)) == 0) {
                    ctl_hmarks_add(h, &m, &cap, &el, fab_dir_parse(v->scope[k]),
                                   (uint32_t)h->nvflat);
                }
            }
            h->vflat[h->nvflat++] = v;
        }
    }
    for (size_t i = 0; i < h->ndenials; i++) {
        const ctl_deny *d = &h->denials[i];
        fab_element el;
        char why[8];
        if (strcmp(d->source, "prober") == 0 &&
            fab_element_parse(h->topo, d->element, &el, why, sizeof(why)) == 0) {
            ctl_hmarks_add(h, &m, &cap, &el, fab_dir_parse(d->scope),
                           (uint32_t)(h->nvflat + i));
        }
    }
    ctl_hmarks_done(&m);
    ctl_hmarks_free(&h->named);
    h->named = m;
    /* a named link is judged at the next snapshot even with no evidence of its own */
    for (size_t i = 0; i < m.n; i++) {
        if (m.pairs[i].key < 2 * h->nall) {
            uint64_t l = m.pairs[i].key / 2;
            h->has[l / 64] |= 1ull << (l % 64);
        }
    }
    h->dirty = true;
}

/* The state one named thing gives: a verdict its measured loss's, a prober's entry degraded. */
static int named_one(const ctl_health *h, uint32_t idx)
{
    if (idx >= h->nvflat) {
        return ST_DEGRADED;
    }
    return h->vflat[idx]->loss >= 0.01 ? ST_BAD : ST_DEGRADED;
}

static int named_key(const ctl_health *h, uint64_t key, int st)
{
    size_t first, n = ctl_hmarks_find(&h->named, key, &first);
    for (size_t i = 0; i < n; i++) {
        st = worst(st, named_one(h, h->named.pairs[first + i].idx));
    }
    return st;
}

/* The switches a direction's link ends on, as hmarks keys. */
static unsigned dir_switch_keys(const ctl_health *h, uint64_t di, uint64_t out[2])
{
    unsigned p, a, j, n = 0;
    uint32_t host, sw;
    ctl_health_where(h, di / 2, &p, &a, &j, &host);
    if ((int)a >= 0 && (sw = fab_switch_at(h->topo, p, FAB_TIER_T0, a)) != FAB_NONE) {
        out[n++] = SWKEY(h, sw);
    }
    if (host == FAB_NONE && (sw = fab_switch_at(h->topo, p, FAB_TIER_T1, j)) != FAB_NONE) {
        out[n++] = SWKEY(h, sw);
    }
    return n;
}

int ctl_health_named(const ctl_health *h, uint64_t di, uint32_t sw)
{
    if (di == UINT64_MAX) {
        return ctl_hmarks_sw(&h->named, sw) ? named_key(h, SWKEY(h, sw), ST_NODATA) : ST_NODATA;
    }
    if (!ctl_hmarks_dir(&h->named, di)) {
        return ST_NODATA;
    }
    uint64_t keys[2];
    int st = named_key(h, di, ST_NODATA);
    for (unsigned k = 0, n = dir_switch_keys(h, di, keys); k < n; k++) {
        st = named_key(h, keys[k], st);
    }
    return st;
}

const hverdict *ctl_health_verdict_of(const ctl_health *h, uint64_t di, uint32_t sw)
{
    uint64_t keys[3];
    unsigned n = 0;
    if (di == UINT64_MAX) {
        keys[n++] = SWKEY(h, sw);
    } else {
        keys[n++] = di;
        n += dir_switch_keys(h, di, keys + 1);
    }
    for (unsigned k = 0; k < n; k++) {
        size_t first, m = ctl_hmarks_find(&h->named, keys[k], &first);
        for (size_t i = 0; i < m; i++) {
            uint32_t idx = h->named.pairs[first + i].idx;
            if (idx < h->nvflat) {
                return h->vflat[idx];
            }
        }
    }
    return NULL;
}

/* Drops the verdicts of a localizer that has not posted for a whole window: a localizer that
 * stopped holds none (its entries, while they stand, still name their elements). */
void ctl_health_named_expire(ctl_health *h, int64_t now)
{
    bool changed = false;
    for (unsigned r = 0; r < REPORTERS; r++) {
        if (h->rep[r].id && now - h->rep[r].posted_ms > (int64_t)(2 * h->half_ms)) {
            reporter_clear(&h->rep[r]);
            changed = true;
        }
    }
    if (changed) {
        ctl_health_named_rebuild(h);
    }
}

void ctl_health_tick(ctl_health *h, int64_t now)
{
    pthread_rwlock_wrlock(&h->lock);
    ctl_health_named_expire(h, now);
    pthread_rwlock_unlock(&h->lock);
    atomic_store(&h->ticking, false);
    ctl_health_fresh(h, now); /* the snapshot a query would not wait for */
    atomic_store(&h->ticking, true);
}

/* --- POST /api/v1/probes -------------------------------------------------------------------- */

static bool get_u64(json_object *o, const char *key, bool need, uint64_t max, uint64_t *v)
{
    json_object *x;
    *v = 0;
    if (!json_object_object_get_ex(o, key, &x)) {
        return !need;
    }
    if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0 ||
        (uint64_t)json_object_get_int64(x) > max) {
        return false;
    }
    *v = (uint64_t)json_object_get_int64(x);
    return true;
}

static bool get_num(json_object *o, const char *key, double lo, double hi, double *v)
{
    json_object *x;
    *v = 0;
    if (!json_object_object_get_ex(o, key, &x)) {
        return true;
    }
    if (!json_object_is_type(x, json_type_int) && !json_object_is_type(x, json_type_double)) {
        return false;
    }
    *v = json_object_get_double(x);
    return *v >= lo && *v <= hi;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *x;
    return json_object_object_get_ex(o, key, &x) && json_object_is_type(x, json_type_string)
               ? json_object_get_string(x)
               : NULL;
}

static bool one_of(const char *s, const char *const *set)
{
    for (; s && *set; set++) {
        if (strcmp(s, *set) == 0) {
            return true;
        }
    }
    return false;
}

/* A string member that must fit |size| bytes. */
static bool copy_str(json_object *o, const char *key, bool need, char *dest, size_t size)
{
    const char *s = get_str(o, key);
    if (!s) {
        dest[0] = '\0';
        json_object *x;
        return !need && !json_object_object_get_ex(o, key, &x);
    }
    if (strlen(s) >= size) {
        return false;
    }
    memcpy(dest, s, strlen(s) + 1);
    return true;
}

/* One verdict of a post into |v|: 0, or 400/422 with a sentence. */
static int parse_verdict(const ctl_health *h, json_object *o, size_t i, hverdict *v, char *why,
                         size_t whylen)
{
    static const char *const kinds[] = {"link", "host_port", "switch", "optic", NULL};
    static const char *const vstates[] = {"adding",  "denied", "refused", "lifting",
                                          "healed",  "logged", NULL};
    json_object *els, *ents;
    memset(v, 0, sizeof(*v));
    if (!json_object_is_type(o, json_type_object) ||
        !copy_str(o, "component", true, v->component, sizeof(v->component)) ||
        !copy_str(o, "kind", true, v->kind, sizeof(v->kind)) || !one_of(v->kind, kinds) ||
        !copy_str(o, "state", true, v->state, sizeof(v->state)) || !one_of(v->state, vstates) ||
        !json_object_object_get_ex(o, "elements", &els) ||
        !json_object_is_type(els, json_type_array) || json_object_array_length(els) == 0 ||
        json_object_array_length(els) > VERDICT_ELEMENTS) {
        snprintf(why, whylen,
                 "verdicts[%zu] needs 'component' (a string), 'kind' (link, host_port, switch or "
                 "optic), 'state' (adding, denied, refused, lifting, healed or logged) and "
                 "'elements' (1 to %d of {element, scope})",
                 i, VERDICT_ELEMENTS);
        return 400;
    }
    if (!get_num(o, "loss", 0, 1, &v->loss) || !get_u64(o, "lost", false, UINT32_MAX, &v->lost) ||
        !get_u64(o, "sent", false, UINT32_MAX, &v->sent) || v->lost > v->sent ||
        !get_num(o, "horizon_s", 0, 1e6, &v->horizon_s) || !get_num(o, "llr", 0, 1e12, &v->llr)) {
        snprintf(why, whylen,
                 "verdicts[%zu]: 'loss' is 0 to 1, 'lost' and 'sent' whole numbers (lost no more "
                 "than sent), 'horizon_s' and 'llr' numbers of 0 or more",
                 i);
        return 400;
    }
    const char *since = get_str(o, "since");
    v->since_ms = since ? ctl_time_parse(since) : 0;
    if (since && v->since_ms < 0) {
        snprintf(why, whylen, "verdicts[%zu]: 'since' is an RFC 3339 UTC time", i);
        return 400;
    }
    v->nel = (unsigned)json_object_array_length(els);
    for (unsigned k = 0; k < v->nel; k++) {
        json_object *e = json_object_array_get_idx(els, k);
        fab_element el;
        char bad[160];
        if (!json_object_is_type(e, json_type_object) ||
            !copy_str(e, "element", true, v->element[k], sizeof(v->element[k])) ||
            !copy_str(e, "scope", false, v->scope[k], sizeof(v->scope[k]))) {
            snprintf(why, whylen, "verdicts[%zu].elements[%u] needs 'element' and 'scope'", i, k);
            return 400;
        }
        if (!v->scope[k][0]) {
            snprintf(v->scope[k], sizeof(v->scope[k]), "both");
        }
        if (!fab_dir_parse(v->scope[k])) {
            snprintf(why, whylen, "verdicts[%zu].elements[%u]: 'scope' is both, up or down", i, k);
            return 400;
        }
        if (ctl_element_parse(h->topo, v->element[k], &el, bad, sizeof(bad)) != 0) {
            snprintf(why, whylen, "verdicts[%zu].elements[%u]: %s", i, k, bad);
            return 422;
        }
    }
    if (json_object_object_get_ex(o, "entries", &ents)) {
        if (!json_object_is_type(ents, json_type_array) ||
            json_object_array_length(ents) > VERDICT_ELEMENTS) {
            snprintf(why, whylen, "verdicts[%zu]: 'entries' is an array of at most %d ids", i,
                     VERDICT_ELEMENTS);
            return 400;
        }
        v->nentries = (unsigned)json_object_array_length(ents);
        for (unsigned k = 0; k < v->nentries; k++) {
            json_object *x = json_object_array_get_idx(ents, k);
            if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0) {
                snprintf(why, whylen, "verdicts[%zu].entries[%u] is an entry id", i, k);
                return 400;
            }
            v->entries[k] = json_object_get_int64(x);
        }
    }
    return 0;
}

/* |who|'s verdict set becomes |v| (taken, |n| of them), |json| its posted text (copied, for
 * the checkpoint); with h->lock held for writing. */
static void verdicts_take(ctl_health *h, const char *who, hverdict *v, size_t n, const char *json,
                          int64_t posted_ms)
{
    uint32_t id = ctl_health_name_hash(who);
    reporter *slot = NULL, *spare = NULL, *oldest = &h->rep[0];
    for (unsigned k = 0; k < REPORTERS; k++) {
        reporter *rp = &h->rep[k];
        slot = rp->id == id ? rp : slot;
        spare = !spare && !rp->id ? rp : spare;
        oldest = rp->posted_ms < oldest->posted_ms ? rp : oldest;
    }
    slot = slot ? slot : spare ? spare : oldest;
    reporter_clear(slot);
    slot->id = id;
    snprintf(slot->name, sizeof(slot->name), "%s", who);
    slot->v = v;
    slot->n = n;
    slot->json = util_xstrdup(json);
    slot->posted_ms = posted_ms;
    ctl_health_named_rebuild(h);
}

int ctl_health_verdicts_restore(ctl_health *h, const char *who, const char *json,
                                int64_t posted_ms)
{
    char why[256];
    json_object *ver = util_json_parse("saved verdicts", json, strlen(json), why, sizeof(why));
    size_t n = json_object_is_type(ver, json_type_array) ? json_object_array_length(ver) : 0;
    int rv = ver && json_object_is_type(ver, json_type_array) && n <= VERDICTS_MAX ? 0 : -EINVAL;
    hverdict *v = util_xcalloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n && rv == 0; i++) {
        rv = parse_verdict(h, json_object_array_get_idx(ver, i), i, &v[i], why, sizeof(why)) == 0
                 ? 0
                 : -EINVAL;
    }
    if (rv == 0) {
        verdicts_take(h, who, v, n, json, posted_ms);
    } else {
        free(v);
    }
    json_object_put(ver);
    return rv;
}

typedef struct presult {
    uint64_t di;
    uint64_t sent, lost;
} presult;

typedef struct pcov {
    unsigned plane;
    uint64_t nic, up, hosts;
} pcov;

int ctl_health_probes(ctl_health *h, json_object *r, const char *who, int64_t now, char *why,
                      size_t whylen)
{
    json_object *res = NULL, *cov = NULL, *ver = NULL;
    if (!json_object_is_type(r, json_type_object)) {
        snprintf(why, whylen, "probe results must be a JSON object");
        return 400;
    }
    bool has_res = json_object_object_get_ex(r, "results", &res),
         has_cov = json_object_object_get_ex(r, "coverage", &cov),
         has_ver = json_object_object_get_ex(r, "verdicts", &ver);
    if ((!has_res && !has_cov && !has_ver) || (has_res && !json_object_is_type(res, json_type_array)) ||
        (has_cov && !json_object_is_type(cov, json_type_array)) ||
        (has_ver && !json_object_is_type(ver, json_type_array))) {
        snprintf(why, whylen,
                 "probe results need 'results', 'coverage' or 'verdicts' (arrays; "
                 "schemas/openapi.yaml, ProbeResults)");
        return 400;
    }
    size_t nr = has_res ? json_object_array_length(res) : 0,
           nc = has_cov ? json_object_array_length(cov) : 0,
           nv = has_ver ? json_object_array_length(ver) : 0;
    if (nr > MAX_ENTRIES || nv > VERDICTS_MAX || nc > h->planes) {
        snprintf(why, whylen, "at most %d results, %d verdicts and one coverage per plane (%u)",
                 MAX_ENTRIES, VERDICTS_MAX, h->planes);
        return 400;
    }
    presult *pr = util_xcalloc(nr + 1, sizeof(*pr));
    pcov *pc = util_xcalloc(nc + 1, sizeof(*pc));
    hverdict *pv = nv ? util_xcalloc(nv, sizeof(*pv)) : NULL;
    int status = 0;
    for (size_t i = 0; i < nr && !status; i++) {
        json_object *e = json_object_array_get_idx(res, i);
        const char *el = json_object_is_type(e, json_type_object) ? get_str(e, "element") : NULL;
        const char *scope = el ? get_str(e, "scope") : NULL;
        ctl_element x;
        char bad[160];
        if (!el || !scope || (strcmp(scope, "up") != 0 && strcmp(scope, "down") != 0)) {
            snprintf(why, whylen, "results[%zu] needs 'element' and 'scope' (up or down)", i);
            status = 400;
        } else if (!get_u64(e, "sent", false, UINT32_MAX, &pr[i].sent) ||
                   !get_u64(e, "lost", false, UINT32_MAX, &pr[i].lost)) {
            snprintf(why, whylen, "results[%zu]: 'sent' and 'lost' are whole numbers of 0 or more",
                     i);
            status = 400;
        } else if (pr[i].lost > pr[i].sent) {
            snprintf(why, whylen, "results[%zu]: lost is more than sent", i);
            status = 400;
        } else if (ctl_element_parse(h->topo, el, &x, bad, sizeof(bad)) != 0 ||
                   x.kind == CTL_EL_SWITCH) {
            snprintf(why, whylen, "results[%zu]: %s", i,
                     x.kind == CTL_EL_SWITCH ? "a probe result names a link or a host port" : bad);
            status = 422;
        } else {
            uint64_t l = x.kind == CTL_EL_PORT ? nic_index(h, x.host, x.plane)
                                               : t0t1_index(h, x.plane, x.t0, x.t1);
            pr[i].di = 2 * l + (strcmp(scope, "up") == 0 ? 0 : 1);
        }
    }
    for (size_t i = 0; i < nc && !status; i++) {
        json_object *e = json_object_array_get_idx(cov, i);
        uint64_t plane = 0;
        if (!json_object_is_type(e, json_type_object) ||
            !get_u64(e, "plane", true, h->planes - 1, &plane) ||
            !get_u64(e, "nic", true, UINT32_MAX, &pc[i].nic) ||
            !get_u64(e, "uplink", true, UINT32_MAX, &pc[i].up) ||
            !get_u64(e, "hosts", false, UINT32_MAX, &pc[i].hosts)) {
            snprintf(why, whylen,
                     "coverage[%zu] needs 'plane' (0 to %u), 'nic' and 'uplink' (whole numbers)", i,
                     h->planes - 1);
            status = 400;
        }
        pc[i].plane = (unsigned)plane;
    }
    for (size_t i = 0; i < nv && !status; i++) {
        status = parse_verdict(h, json_object_array_get_idx(ver, i), i, &pv[i], why, whylen);
    }
    if (status != 0) {
        free(pr);
        free(pc);
        free(pv);
        return status;
    }
    uint32_t id = ctl_health_name_hash(who), e = half_of(h, now);
    pthread_rwlock_wrlock(&h->lock);
    for (size_t i = 0; i < nr; i++) {
        pdir *p = pdir_get(h, pr[i].di, now);
        age2(&p->epoch, p->sent, p->lost, e);
        p->sent[0] = sat_add(p->sent[0], pr[i].sent);
        p->lost[0] = sat_add(p->lost[0], pr[i].lost);
        p->last_ms = now;
        uint64_t l = pr[i].di / 2;
        h->has[l / 64] |= 1ull << (l % 64);
    }
    for (size_t i = 0; i < nc; i++) {
        coverage *c = &h->cov[pc[i].plane];
        bool fresh = c->epoch != e || !c->last_ms;
        age2(&c->epoch, c->nic, c->up, e);
        c->nic[0] = sat_add(c->nic[0], pc[i].nic);
        c->up[0] = sat_add(c->up[0], pc[i].up);
        c->hosts = (uint32_t)pc[i].hosts;
        c->last_ms = now;
        if (fresh) {
            ctl_health_cover(h, pc[i].plane);
        }
    }
    if (has_ver) {
        verdicts_take(h, who, pv, nv, json_object_to_json_string_ext(ver, JSON_C_TO_STRING_PLAIN),
                      now);
        pv = NULL;
    }
    for (unsigned k = 0; k < REPORTERS; k++) {
        if (h->rep[k].id == id) {
            h->rep[k].posted_ms = now;
        }
    }
    h->ingested++;
    h->dirty = true;
    pthread_rwlock_unlock(&h->lock);
    free(pr);
    free(pc);
    free(pv);
    return 0;
}
