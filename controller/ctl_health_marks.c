/* SPDX-License-Identifier: MIT */
/* Marks on the fabric's elements: which directions and switches a set of denylist entries or
 * verdicts touches, as bitmaps for the views' O(1) questions and sorted (key, index) pairs
 * for the ones that name the entries. */
#include <stdlib.h>
#include <string.h>

#include "ctl_health_int.h"

static void set_bit(uint64_t *bits, uint64_t i)
{
    bits[i / 64] |= 1ull << (i % 64);
}

static bool get_bit(const uint64_t *bits, uint64_t i)
{
    return bits && (bits[i / 64] >> (i % 64) & 1);
}

bool ctl_hmarks_dir(const hmarks *m, uint64_t di)
{
    return get_bit(m->dirbits, di);
}

bool ctl_hmarks_sw(const hmarks *m, uint32_t sw)
{
    return get_bit(m->swbits, sw);
}

size_t ctl_hmarks_find(const hmarks *m, uint64_t key, size_t *pfirst)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->pairs[mid].key < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    size_t end = lo;
    while (end < m->n && m->pairs[end].key == key) {
        end++;
    }
    *pfirst = lo;
    return end - lo;
}

void ctl_hmarks_free(hmarks *m)
{
    free(m->pairs);
    free(m->dirbits);
    free(m->swbits);
    memset(m, 0, sizeof(*m));
}

static void pair_push(hmarks *m, size_t *pcap, uint64_t key, uint32_t idx)
{
    if (m->n == *pcap) {
        *pcap = *pcap ? 2 * *pcap : 64;
        m->pairs = util_xrealloc(m->pairs, *pcap * sizeof(*m->pairs));
    }
    m->pairs[m->n++] = (hpair){key, idx};
}

typedef struct bits_ctx {
    uint64_t *bits;
} bits_ctx;

static void mark_dir(void *user, uint64_t di)
{
    set_bit(((bits_ctx *)user)->bits, di);
}

void ctl_health_switch_dirs(const ctl_health *h, uint32_t sw, void (*fn)(void *, uint64_t),
                            void *user)
{
    fab_switch s;
    if (fab_switch_get(h->topo, sw, &s) != 0 || s.plane >= h->planes) {
        return;
    }
    unsigned p = s.plane;
    if (s.tier == FAB_TIER_T1) {
        for (uint32_t a = 0; a < h->nt0[p]; a++) {
            uint64_t l = t0t1_index(h, p, a, s.index);
            fn(user, 2 * l);
            fn(user, 2 * l + 1);
        }
        return;
    }
    for (uint32_t j = 0; j < h->nt1[p]; j++) {
        uint64_t l = t0t1_index(h, p, s.index, j);
        fn(user, 2 * l);
        fn(user, 2 * l + 1);
    }
    for (unsigned port = 0; port < s.nports; port++) {
        fab_peer peer;
        if (fab_switch_peer(h->topo, sw, port, &peer) == 0 && peer.kind == FAB_PEER_HOST &&
            peer.port == p) {
            uint64_t l = nic_index(h, peer.id, p);
            fn(user, 2 * l);
            fn(user, 2 * l + 1);
        }
    }
}

void ctl_hmarks_add(const ctl_health *h, hmarks *m, size_t *pcap, const fab_element *el,
                    unsigned dirs, uint32_t idx)
{
    if (!m->dirbits) {
        m->dirbits = util_xcalloc(2 * h->nall / 64 + 1, sizeof(uint64_t));
        m->swbits = util_xcalloc(h->nsw / 64 + 1, sizeof(uint64_t));
    }
    if (el->kind == FAB_EL_SWITCH) {
        pair_push(m, pcap, SWKEY(h, el->sw), idx);
        set_bit(m->swbits, el->sw);
        bits_ctx c = {m->dirbits};
        ctl_health_switch_dirs(h, el->sw, mark_dir, &c);
        return;
    }
    uint64_t l = el->kind == FAB_EL_PORT ? nic_index(h, el->host, el->plane)
                                         : t0t1_index(h, el->plane, el->t0, el->t1);
    for (unsigned d = 0; d < 2; d++) {
        if (dirs & (d == 0 ? FAB_DIR_UP : FAB_DIR_DOWN)) {
            pair_push(m, pcap, 2 * l + d, idx);
            set_bit(m->dirbits, 2 * l + d);
        }
    }
}

static int pair_cmp(const void *a, const void *b)
{
    const hpair *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : x->idx < y->idx ? -1 : x->idx > y->idx;
}

void ctl_hmarks_done(hmarks *m)
{
    if (m->n) {
        qsort(m->pairs, m->n, sizeof(*m->pairs), pair_cmp);
    }
}
