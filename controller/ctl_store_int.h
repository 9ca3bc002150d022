/* SPDX-License-Identifier: MIT */
/* The store's insides, shared by its files (ctl_store.c: the denylist, audit and agents;
 * ctl_store_health.c: the health engine's checkpoint and history). */
#ifndef CTL_STORE_INT_H
#define CTL_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>

#include "ctl_store.h"

struct ctl_store {
    sqlite3 *db;
    pthread_mutex_t lock; /* one statement or transaction at a time on |db| */
    /* the denylist's entries, kept on each committed add and removal so that a count (the
     * bound, /metrics) never walks the list under |lock| */
    atomic_size_t ndeny;
    size_t max_deny; /* the bound on ndeny; 0 for none */
};

#endif
