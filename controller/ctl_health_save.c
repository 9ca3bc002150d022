/* SPDX-License-Identifier: MIT */
/* Health that survives a restart. Every few seconds the engine's evidence that matters (the
 * directions that lost or were blamed, the lossy classes the inference walks, the prober's
 * own-loss directions and coverage, the localizers' verdicts) goes to the store as one blob,
 * and the history samples taken since go as rows, kept for a bounded time; a controller that
 * starts on the same fabric loads them before it serves, so that it shows the health it had.
 * Directions that only carried clean traffic are not saved: the next report brings them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_health_int.h"

#define MAGIC 0x4843524du /* "MRCH" */
#define FORMAT 1
#define SAVE_DIRS (1u << 18)    /* directions saved at most */
#define SAVE_CLS (1u << 18)     /* lossy classes saved at most */
#define SAVE_PDIRS (1u << 16)   /* prober directions saved at most */

/* Little-endian fields, so that a blob reads the same on any machine. */
static void put_u(util_buf *b, uint64_t v, unsigned bytes)
{
    uint8_t x[8];
    for (unsigned i = 0; i < bytes; i++) {
        x[i] = (uint8_t)(v >> (8 * i));
    }
    util_buf_put(b, (const char *)x, bytes);
}

typedef struct reader {
    const uint8_t *p, *end;
    bool bad;
} reader;

static uint64_t get_u(reader *r, unsigned bytes)
{
    uint64_t v = 0;
    if ((size_t)(r->end - r->p) < bytes) {
        r->bad = true;
        return 0;
    }
    for (unsigned i = 0; i < bytes; i++) {
        v |= (uint64_t)r->p[i] << (8 * i);
    }
    r->p += bytes;
    return v;
}

/* What the saved indexes mean: the same fabric, cut the same way. */
static uint64_t fingerprint(const ctl_health *h)
{
    uint64_t x = 1469598103934665603ull;
    uint64_t parts[] = {h->nall, h->nlinks, h->nhosts, h->nsw, h->planes, h->half_ms};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        x = (x ^ parts[i]) * 1099511628211ull;
    }
    for (unsigned p = 0; p < h->planes && p < 16; p++) {
        x = (x ^ ((uint64_t)h->nt0[p] << 32 | h->nt1[p])) * 1099511628211ull;
    }
    for (const char *s = fab_topo_name(h->topo); *s; s++) {
        x = (x ^ (uint8_t)*s) * 1099511628211ull;
    }
    return x;
}

static bool worth_saving(const dirstat *d, uint32_t e)
{
    return d->epoch + 1 >= e && (d->lost[0] || d->lost[1] || d->bad_evs || d->blamed ||
                                 d->nlossy[0] || d->nlossy[1]);
}

/* The checkpoint as a blob, with h->lock held for reading. */
static void encode(const ctl_health *h, int64_t now, util_buf *b)
{
    uint32_t e = (uint32_t)((uint64_t)now / h->half_ms);
    put_u(b, MAGIC, 4);
    put_u(b, FORMAT, 4);
    put_u(b, fingerprint(h), 8);
    put_u(b, (uint64_t)now, 8);
    /* directions */
    size_t at = b->len, n = 0;
    put_u(b, 0, 4);
    for (uint64_t w = 0; w < h->nall / 64 + 1 && n < SAVE_DIRS; w++) {
        for (uint64_t bits = h->has[w]; bits && n < SAVE_DIRS; bits &= bits - 1) {
            uint64_t l = w * 64 + (uint64_t)__builtin_ctzll(bits);
            for (unsigned k = 0; k < 2 && n < SAVE_DIRS; k++) {
                const dirstat *d = &h->links[l].dir[k];
                if (!worth_saving(d, e)) {
                    continue;
                }
                put_u(b, 2 * l + k, 8);
                put_u(b, d->epoch, 4);
                for (int i = 0; i < 2; i++) {
                    put_u(b, d->sent[i], 4);
                    put_u(b, d->lost[i], 4);
                    put_u(b, d->ncls[i], 4);
                    put_u(b, d->nlossy[i], 4);
                }
                put_u(b, d->bad_evs, 2);
                put_u(b, d->nsrc, 1);
                put_u(b, d->blamed, 1);
                for (int i = 0; i < SOURCES; i++) {
                    put_u(b, d->src[i], 4);
                }
                put_u(b, (uint64_t)d->last_ms, 8);
                n++;
            }
        }
    }
    for (unsigned i = 0; i < 4; i++) {
        b->s[at + i] = (char)(n >> (8 * i));
    }
    /* lossy classes */
    at = b->len;
    n = 0;
    put_u(b, 0, 4);
    for (uint64_t i = 0; i < h->cls_cap && n < SAVE_CLS; i++) {
        const cls *c = &h->cls[i];
        if (!c->src || c->epoch + 1 < e) {
            continue;
        }
        put_u(b, c->src, 4);
        put_u(b, c->dst, 4);
        put_u(b, c->j, 2);
        put_u(b, c->p, 1);
        put_u(b, c->epoch, 4);
        put_u(b, c->lossy_epoch, 4);
        for (int k = 0; k < 2; k++) {
            put_u(b, c->sent[k], 4);
            put_u(b, c->lost[k], 4);
        }
        put_u(b, c->bad, 2);
        n++;
    }
    for (unsigned i = 0; i < 4; i++) {
        b->s[at + i] = (char)(n >> (8 * i));
    }
    /* the prober's directions and coverage */
    at = b->len;
    n = 0;
    put_u(b, 0, 4);
    for (uint64_t i = 0; i < h->pdir_cap && n < SAVE_PDIRS; i++) {
        const pdir *p = &h->pdirs[i];
        if (!p->dir || p->epoch + 1 < e) {
            continue;
        }
        put_u(b, p->dir, 8);
        put_u(b, p->epoch, 4);
        for (int k = 0; k < 2; k++) {
            put_u(b, p->sent[k], 4);
            put_u(b, p->lost[k], 4);
        }
        put_u(b, (uint64_t)p->last_ms, 8);
        n++;
    }
    for (unsigned i = 0; i < 4; i++) {
        b->s[at + i] = (char)(n >> (8 * i));
    }
    put_u(b, h->planes, 4);
    for (unsigned p = 0; p < h->planes && p < 16; p++) {
        const coverage *c = &h->cov[p];
        put_u(b, c->epoch, 4);
        for (int k = 0; k < 2; k++) {
            put_u(b, c->nic[k], 4);
            put_u(b, c->up[k], 4);
        }
        put_u(b, c->hosts, 4);
        put_u(b, (uint64_t)c->last_ms, 8);
    }
    /* the localizers' verdict sets, as they posted them */
    n = 0;
    for (unsigned r = 0; r < REPORTERS; r++) {
        n += h->rep[r].id && h->rep[r].json;
    }
    put_u(b, n, 4);
    for (unsigned r = 0; r < REPORTERS; r++) {
        const reporter *rp = &h->rep[r];
        if (!rp->id || !rp->json) {
            continue;
        }
        size_t nl = strlen(rp->name), jl = strlen(rp->json);
        put_u(b, nl, 2);
        util_buf_put(b, rp->name, nl);
        put_u(b, (uint64_t)rp->posted_ms, 8);
        put_u(b, jl, 4);
        util_buf_put(b, rp->json, jl);
    }
}

/* The history samples taken after |after|, into |*pv| (heap), their count returned. */
static size_t new_samples(const ctl_health *h, int64_t after, ctl_hsample **pv)
{
    size_t n = 0, cap = 0;
    ctl_hsample *v = NULL;
    for (uint32_t i = 0; i < h->nrings; i++) {
        const ring *r = &h->rings[i];
        for (uint32_t k = 0; k < r->n; k++) {
            const sample *s = &r->s[(r->head + HISTORY - r->n + k) % HISTORY];
            if (s->ms <= after) {
                continue;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                v = util_xrealloc(v, cap * sizeof(*v));
            }
            v[n++] = (ctl_hsample){r->id, s->ms, s->loss, s->state};
        }
    }
    *pv = v;
    return n;
}

int ctl_health_save(ctl_health *h, ctl_store *store, int64_t now, int64_t keep_ms)
{
    util_buf b = {0};
    ctl_hsample *v = NULL;
    pthread_rwlock_rdlock(&h->lock);
    encode(h, now, &b);
    size_t n = new_samples(h, h->saved_ms, &v);
    pthread_rwlock_unlock(&h->lock);
    int rv = ctl_store_blob_put(store, "health", b.s, b.len, now);
    if (rv == 0) {
        rv = ctl_store_history_add(store, v, n, now - keep_ms);
    }
    if (rv == 0) {
        int64_t last = h->saved_ms;
        for (size_t i = 0; i < n; i++) {
            last = v[i].ms > last ? v[i].ms : last;
        }
        h->saved_ms = last; /* only the saving thread reads or writes it */
    }
    free(b.s);
    free(v);
    return rv;
}

/* Applies a checkpoint blob, every index checked against the fabric: a blob that does not
 * fit (another fabric, a damaged file) is refused whole before anything is applied. */
static int decode(ctl_health *h, const uint8_t *data, size_t len, int64_t now, char *err,
                  size_t errlen)
{
    reader r = {data, data + len, false};
    if (get_u(&r, 4) != MAGIC || get_u(&r, 4) != FORMAT) {
        snprintf(err, errlen, "the saved health is not of this version: started afresh");
        return -EINVAL;
    }
    if (get_u(&r, 8) != fingerprint(h)) {
        snprintf(err, errlen, "the saved health is of another fabric or window: started afresh");
        return -EINVAL;
    }
    (void)get_u(&r, 8); /* saved at */
    const uint8_t *start = r.p;
    /* two passes: check everything, then apply */
    for (int pass = 0; pass < 2; pass++) {
        r.p = start;
        uint64_t nd = get_u(&r, 4);
        for (uint64_t i = 0; i < nd && !r.bad; i++) {
            uint64_t di = get_u(&r, 8);
            dirstat d = {0};
            d.epoch = (uint32_t)get_u(&r, 4);
            for (int k = 0; k < 2; k++) {
                d.sent[k] = (uint32_t)get_u(&r, 4);
                d.lost[k] = (uint32_t)get_u(&r, 4);
                d.ncls[k] = (uint32_t)get_u(&r, 4);
                d.nlossy[k] = (uint32_t)get_u(&r, 4);
            }
            d.bad_evs = (uint16_t)get_u(&r, 2);
            d.nsrc = (uint8_t)get_u(&r, 1);
            d.blamed = get_u(&r, 1) & 1;
            for (int k = 0; k < SOURCES; k++) {
                d.src[k] = (uint32_t)get_u(&r, 4);
            }
            d.last_ms = (int64_t)get_u(&r, 8);
            r.bad |= di >= 2 * h->nall || d.nsrc > SOURCES || !link_exists(h, di / 2);
            if (pass == 1 && !r.bad) {
                h->links[di / 2].dir[di % 2] = d;
                h->has[di / 128] |= 1ull << (di / 2 % 64);
                if (d.blamed) {
                    vec_push(&h->blamed, di);
                }
            }
        }
        uint64_t nc = get_u(&r, 4);
        for (uint64_t i = 0; i < nc && !r.bad; i++) {
            cls c = {0};
            c.src = (uint32_t)get_u(&r, 4);
            c.dst = (uint32_t)get_u(&r, 4);
            c.j = (uint16_t)get_u(&r, 2);
            c.p = (uint8_t)get_u(&r, 1);
            c.epoch = (uint32_t)get_u(&r, 4);
            c.lossy_epoch = (uint32_t)get_u(&r, 4);
            for (int k = 0; k < 2; k++) {
                c.sent[k] = (uint32_t)get_u(&r, 4);
                c.lost[k] = (uint32_t)get_u(&r, 4);
            }
            c.bad = (uint16_t)get_u(&r, 2);
            r.bad |= c.src == 0 || c.src > h->nhosts || c.dst == 0 || c.dst > h->nhosts ||
                     c.p >= h->planes || c.j > h->nt1[c.p];
            if (pass == 1 && !r.bad) {
                ctl_health_cls_restore(h, &c, now);
            }
        }
        uint64_t np = get_u(&r, 4);
        for (uint64_t i = 0; i < np && !r.bad; i++) {
            pdir p = {0};
            p.dir = get_u(&r, 8);
            p.epoch = (uint32_t)get_u(&r, 4);
            for (int k = 0; k < 2; k++) {
                p.sent[k] = (uint32_t)get_u(&r, 4);
                p.lost[k] = (uint32_t)get_u(&r, 4);
            }
            p.last_ms = (int64_t)get_u(&r, 8);
            r.bad |= p.dir == 0 || p.dir > 2 * h->nall;
            if (pass == 1 && !r.bad) {
                ctl_health_pdir_restore(h, &p, now);
            }
        }
        uint64_t planes = get_u(&r, 4);
        r.bad |= planes != h->planes;
        for (unsigned p = 0; p < planes && p < 16 && !r.bad; p++) {
            coverage c = {0};
            c.epoch = (uint32_t)get_u(&r, 4);
            for (int k = 0; k < 2; k++) {
                c.nic[k] = (uint32_t)get_u(&r, 4);
                c.up[k] = (uint32_t)get_u(&r, 4);
            }
            c.hosts = (uint32_t)get_u(&r, 4);
            c.last_ms = (int64_t)get_u(&r, 8);
            if (pass == 1) {
                h->cov[p] = c;
                ctl_health_cover(h, p);
            }
        }
        uint64_t nr = get_u(&r, 4);
        r.bad |= nr > REPORTERS;
        for (uint64_t i = 0; i < nr && !r.bad; i++) {
            char name[64], *json;
            uint64_t nl = get_u(&r, 2);
            r.bad |= nl >= sizeof(name) || (uint64_t)(r.end - r.p) < nl;
            if (r.bad) {
                break;
            }
            memcpy(name, r.p, nl);
            name[nl] = '\0';
            r.p += nl;
            int64_t posted = (int64_t)get_u(&r, 8);
            uint64_t jl = get_u(&r, 4);
            r.bad |= (uint64_t)(r.end - r.p) < jl;
            if (r.bad) {
                break;
            }
            json = util_xmalloc(jl + 1);
            memcpy(json, r.p, jl);
            json[jl] = '\0';
            r.p += jl;
            if (pass == 1 && ctl_health_verdicts_restore(h, name, json, posted) != 0) {
                util_log(UTIL_LOG_WARNING, "the saved verdicts of %s do not fit this fabric", name);
            }
            free(json);
        }
        if (r.bad) {
            snprintf(err, errlen, "the saved health is damaged or does not fit the fabric: "
                     "started afresh");
            return -EINVAL;
        }
    }
    h->dirty = true;
    return 0;
}

typedef struct hist_ctx {
    ctl_health *h;
    size_t n;
} hist_ctx;

static void restore_sample(void *user, const ctl_hsample *x)
{
    hist_ctx *c = user;
    ctl_health *h = c->h;
    if (x->element >= h->nall + h->nsw || x->state > ST_BAD) {
        return;
    }
    /* the state it was last seen in is where the next snapshot starts, so that a restart is
     * no change of state */
    if (x->element < h->nall) {
        h->st[x->element] = x->state;
    } else {
        h->sw_st[x->element - h->nall] = x->state;
    }
    ring *r = ctl_health_ring(h, x->element, true);
    if (r) {
        r->s[r->head] = (sample){x->ms, x->loss, x->state};
        r->head = (r->head + 1) % HISTORY;
        r->n += r->n < HISTORY;
        r->last_ms = x->ms;
        c->n++;
    }
}

int ctl_health_load(ctl_health *h, ctl_store *store, int64_t now, int64_t keep_ms, char *err,
                    size_t errlen)
{
    void *data = NULL;
    size_t len = 0;
    err[0] = '\0';
    int rv = ctl_store_blob_get(store, "health", &data, &len);
    if (rv == -ENOENT) {
        rv = 0; /* a new store */
    } else if (rv == 0) {
        pthread_rwlock_wrlock(&h->lock);
        rv = decode(h, data, len, now, err, errlen);
        if (rv == 0) {
            hist_ctx c = {h, 0};
            rv = ctl_store_history_all(store, now - keep_ms, restore_sample, &c);
            h->saved_ms = now; /* what is in the store is saved */
            if (rv != 0) {
                snprintf(err, errlen, "the saved history cannot be read");
            }
        }
        pthread_rwlock_unlock(&h->lock);
    } else {
        snprintf(err, errlen, "the saved health cannot be read");
    }
    free(data);
    return rv;
}
