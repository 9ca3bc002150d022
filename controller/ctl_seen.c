/* SPDX-License-Identifier: MIT */
/* The last-seen table: one slot per token, indexed like the tokens file. Every authenticated
 * request notes itself, on every serving thread: a slot's fields are atomics, so a note is two
 * uncontended atomic operations and no lock the threads would queue on. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctl_seen.h"
#include "ctl_store.h"

typedef struct slot {
    _Atomic int64_t last; /* Unix ms; 0: never */
    _Atomic uint64_t requests;
} slot;

struct ctl_seen {
    const util_auth *auth;
    slot *slots; /* auth->n */
};

ctl_seen *ctl_seen_new(const util_auth *auth)
{
    ctl_seen *s = util_xcalloc(1, sizeof(*s));
    s->auth = auth;
    s->slots = util_xcalloc(auth->n ? auth->n : 1, sizeof(*s->slots));
    return s;
}

void ctl_seen_free(ctl_seen *s)
{
    if (!s) {
        return;
    }
    free(s->slots);
    free(s);
}

void ctl_seen_note(ctl_seen *s, const util_token *who, int64_t now)
{
    /* found by address (as integers: pointers into different objects do not compare); a
     * token not of the table (a test's own) has no slot */
    uintptr_t at = (uintptr_t)who, first = s ? (uintptr_t)s->auth->tokens : 0;
    if (!s || !who || at < first || at >= first + s->auth->n * sizeof(*who) ||
        (at - first) % sizeof(*who)) {
        return;
    }
    slot *sl = &s->slots[(at - first) / sizeof(*who)];
    int64_t last = atomic_load_explicit(&sl->last, memory_order_relaxed);
    /* the latest wins: a thread that read the clock earlier may note after another */
    while (now > last && !atomic_compare_exchange_weak_explicit(
                             &sl->last, &last, now, memory_order_relaxed, memory_order_relaxed)) {
    }
    atomic_fetch_add_explicit(&sl->requests, 1, memory_order_relaxed);
}

json_object *ctl_seen_list(ctl_seen *s, unsigned roles)
{
    json_object *j = json_object_new_object(), *items = json_object_new_array();
    int64_t total = 0;
    for (size_t i = 0; i < s->auth->n; i++) {
        const util_token *t = &s->auth->tokens[i];
        if (!(roles & (1u << (unsigned)t->role))) {
            continue;
        }
        json_object *o = json_object_new_object();
        json_object *last = NULL;
        int64_t ms = atomic_load_explicit(&s->slots[i].last, memory_order_relaxed);
        if (ms) {
            char when[40];
            ctl_time_str(ms, when, sizeof(when));
            last = json_object_new_string(when);
        }
        json_object_object_add(o, "name", json_object_new_string(t->name));
        json_object_object_add(o, "last_seen", last);
        json_object_object_add(o, "requests",
                               json_object_new_uint64(atomic_load_explicit(&s->slots[i].requests,
                                                                           memory_order_relaxed)));
        json_object_array_add(items, o);
        total++;
    }
    json_object_object_add(j, "total", json_object_new_int64(total));
    json_object_object_add(j, "items", items);
    return j;
}
