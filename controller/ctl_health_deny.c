/* SPDX-License-Identifier: MIT */
/* The denylist as the health views see it: the entries in force now, which directions and
 * switches each takes out of use, so that a view shows "denied" beside an element's state
 * and a path names the entries that exclude each of its EVs. Rebuilt from the store after
 * every change of the denylist and at each maintenance window's start and end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_health_int.h"

void ctl_health_deny_fini(ctl_health *h)
{
    free(h->denials);
    ctl_hmarks_free(&h->deny);
}

int ctl_health_denials(ctl_health *h, ctl_store *store, int64_t now)
{
    ctl_deny *all = NULL;
    size_t n = 0, cap = 0, kept = 0;
    int64_t version = ctl_store_version(store);
    if (ctl_store_deny_all(store, &all, &n) != 0) {
        return -EIO;
    }
    hmarks m = {0};
    for (size_t i = 0; i < n; i++) {
        const ctl_deny *d = &all[i];
        fab_element el;
        char why[8];
        bool active = !(d->start || d->end) || (d->start <= now && now < d->end);
        if (!active || fab_element_parse(h->topo, d->element, &el, why, sizeof(why)) != 0) {
            continue;
        }
        all[kept] = *d;
        ctl_hmarks_add(h, &m, &cap, &el, fab_dir_parse(d->scope), (uint32_t)kept);
        kept++;
    }
    ctl_hmarks_done(&m);
    pthread_rwlock_wrlock(&h->lock);
    free(h->denials);
    ctl_hmarks_free(&h->deny);
    h->denials = all;
    h->ndenials = kept;
    h->deny = m;
    h->deny_version = version;
    /* the prober's entries name their elements too */
    ctl_health_named_rebuild(h);
    pthread_rwlock_unlock(&h->lock);
    return 0;
}

/* The entries paired with |key|, each once, into |out| (at most |max|); how many. */
static size_t entries_of(const ctl_health *h, uint64_t key, const ctl_deny **out, size_t n,
                         size_t max)
{
    size_t first, m = ctl_hmarks_find(&h->deny, key, &first);
    for (size_t i = 0; i < m && n < max; i++) {
        const ctl_deny *d = &h->denials[h->deny.pairs[first + i].idx];
        bool seen = false;
        for (size_t k = 0; k < n; k++) {
            seen |= out[k] == d;
        }
        if (!seen) {
            out[n++] = d;
        }
    }
    return n;
}

size_t ctl_health_denied_by(const ctl_health *h, const uint64_t *keys, unsigned nkeys,
                            const ctl_deny **out, size_t max)
{
    size_t n = 0;
    for (unsigned k = 0; k < nkeys; k++) {
        n = entries_of(h, keys[k], out, n, max);
    }
    return n;
}

void ctl_health_deny_json(util_buf *b, const ctl_deny *const *v, size_t n)
{
    util_buf_lit(b, "[");
    for (size_t i = 0; i < n; i++) {
        util_buf_printf(b, "%s{\"id\":%lld,\"element\":", i ? "," : "", (long long)v[i]->id);
        util_buf_json_str(b, v[i]->element);
        util_buf_lit(b, ",\"scope\":");
        util_buf_json_str(b, v[i]->scope);
        util_buf_lit(b, ",\"source\":");
        util_buf_json_str(b, v[i]->source);
        util_buf_lit(b, ",\"reason\":");
        util_buf_json_str(b, v[i]->reason);
        util_buf_lit(b, "}");
    }
    util_buf_lit(b, "]");
}
