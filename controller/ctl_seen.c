/* SPDX-License-Identifier: MIT */
/* The last-seen table: one slot per token, indexed like the tokens file, under one lock (a
 * note is a few stores; the serving threads never hold it for longer). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctl_seen.h"
#include "ctl_store.h"

typedef struct slot {
    int64_t last; /* Unix ms; 0: never */
    uint64_t requests;
} slot;

struct ctl_seen {
    const util_auth *auth;
    pthread_mutex_t lock;
    slot *slots; /* auth->n */
};

ctl_seen *ctl_seen_new(const util_auth *auth)
{
    ctl_seen *s = util_xcalloc(1, sizeof(*s));
    s->auth = auth;
    s->slots = util_xcalloc(auth->n ? auth->n : 1, sizeof(*s->slots));
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void ctl_seen_free(ctl_seen *s)
{
    if (!s) {
        return;
    }
    pthread_mutex_destroy(&s->lock);
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
    pthread_mutex_lock(&s->lock);
    sl->last = now > sl->last ? now : sl->last;
    sl->requests++;
    pthread_mutex_unlock(&s->lock);
}

json_object *ctl_seen_list(ctl_seen *s, util_role role)
{
    json_object *j = json_object_new_object(), *items = json_object_new_array();
    int64_t total = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->auth->n; i++) {
        const util_token *t = &s->auth->tokens[i];
        if (t->role != role) {
            continue;
        }
        json_object *o = json_object_new_object();
        json_object *last = NULL;
        if (s->slots[i].last) {
            char when[40];
            ctl_time_str(s->slots[i].last, when, sizeof(when));
            last = json_object_new_string(when);
        }
        json_object_object_add(o, "name", json_object_new_string(t->name));
        json_object_object_add(o, "last_seen", last);
        json_object_object_add(o, "requests", json_object_new_uint64(s->slots[i].requests));
        json_object_array_add(items, o);
        total++;
    }
    pthread_mutex_unlock(&s->lock);
    json_object_object_add(j, "total", json_object_new_int64(total));
    json_object_object_add(j, "items", items);
    return j;
}
