/* SPDX-License-Identifier: MIT */
/* The event queue. A 4-ary heap does half the levels of a binary one for the same pops, and
 * its four children share a cache line. */
#include <assert.h>
#include <stdlib.h>

#include "sim_event.h"
#include "util.h"

void sim_evq_init(sim_evq *q)
{
    *q = (sim_evq){0};
}

void sim_evq_fini(sim_evq *q)
{
    free(q->heap);
    *q = (sim_evq){0};
}

/* Earlier time first; at equal times the earlier push (sequence numbers compared as serial
 * numbers, so their wrap changes nothing). */
static inline bool before(const sim_ev *a, const sim_ev *b)
{
    return a->t < b->t || (a->t == b->t && (int32_t)(a->seq - b->seq) < 0);
}

void sim_evq_push(sim_evq *q, uint64_t t, uint32_t tgt)
{
    assert(t >= q->now);
    if (q->len == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 1024;
        q->heap = util_xrealloc(q->heap, q->cap * sizeof(*q->heap));
    }
    sim_ev e = {.t = t, .seq = q->seq++, .tgt = tgt};
    size_t i = q->len++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&e, &q->heap[parent])) {
            break;
        }
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
}

bool sim_evq_pop(sim_evq *q, sim_ev *out)
{
    if (q->len == 0) {
        return false;
    }
    *out = q->heap[0];
    q->now = out->t;
    q->popped++;
    sim_ev last = q->heap[--q->len];
    size_t n = q->len, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) {
            break;
        }
        size_t best = c, end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++) {
            if (before(&q->heap[k], &q->heap[best])) {
                best = k;
            }
        }
        if (!before(&q->heap[best], &last)) {
            break;
        }
        q->heap[i] = q->heap[best];
        i = best;
    }
    if (n) {
        q->heap[i] = last;
    }
    return true;
}
