/* SPDX-License-Identifier: MIT */
/* The event queue: a 4-ary min-heap of (time, sequence) keys. Equal times pop in the order
 * they were pushed, which with one seed makes every run the same. There is no cancel: an
 * owner keeps the time of the event it is waiting for and ignores stale ones. */
#ifndef SIM_EVENT_H
#define SIM_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An event's target: a kind in the top 4 bits, an index below. */
#define SIM_EV_KIND(tgt) ((unsigned)((tgt) >> 28))
#define SIM_EV_INDEX(tgt) ((uint32_t)(tgt)&0x0fffffffu)
#define SIM_EV_TARGET(kind, index) ((uint32_t)(kind) << 28 | (uint32_t)(index))
#define SIM_EV_MAX_INDEX 0x0fffffffu

typedef struct sim_ev {
    uint64_t t; /* ps */
    uint32_t seq;
    uint32_t tgt;
} sim_ev;

typedef struct sim_evq {
    sim_ev *heap;
    size_t len, cap;
    uint32_t seq;
    uint64_t now;    /* the time of the last event popped */
    uint64_t popped; /* events dispatched so far */
} sim_evq;

void sim_evq_init(sim_evq *q);
void sim_evq_fini(sim_evq *q);
/* Schedules |tgt| at |t| (never before now). */
void sim_evq_push(sim_evq *q, uint64_t t, uint32_t tgt);
/* The earliest event: returns false when there is none; sets q->now. */
bool sim_evq_pop(sim_evq *q, sim_ev *out);
/* The earliest event's time without taking it; UINT64_MAX when empty. */
static inline uint64_t sim_evq_peek(const sim_evq *q)
{
    return q->len ? q->heap[0].t : UINT64_MAX;
}

#endif
