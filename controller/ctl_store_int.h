/* SPDX-License-Identifier: MIT */
/* The store's insides, shared by its files (ctl_store.c: the connections, the denylist, audit
 * and agents; ctl_store_health.c: the health engine's checkpoint and history). */
#ifndef CTL_STORE_INT_H
#define CTL_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdatomic.h>

#include "ctl_store.h"

/* Read-only connections kept open for the serving threads; more readers than this at once
 * wait for one to come back (never for the writer). */
#define CTL_STORE_READERS 16

struct ctl_store {
    sqlite3 *db;          /* the writer's connection: writes only */
    pthread_mutex_t lock; /* one write at a time on |db|, taken within busy_ms or -EBUSY */
    int busy_ms;
    bool memory; /* ":memory:": one database, one connection; reads take |lock| too */
    char *path;
    /* a store on a read-only disk: opened immutable (what is there is all there will be), every
     * write -EROFS at once; |path| is then the file: URI the readers open too */
    bool readonly;
    /* the readers' pool: each a read-only WAL connection, reading a snapshot of the last
     * commit while a write goes on */
    pthread_mutex_t rlock;
    pthread_cond_t rfree;
    sqlite3 *readers[CTL_STORE_READERS];
    bool rbusy[CTL_STORE_READERS];
    /* the denylist's entries, kept on each committed add and removal so that a count (the
     * bound, /metrics) never walks the list under |lock| */
    atomic_size_t ndeny;
    size_t max_deny; /* the bound on ndeny; 0 for none */
};

/* A read-only connection for one read (its statements, then ctl_store_rput), or NULL when none
 * could be opened. Never waits behind a write. */
sqlite3 *ctl_store_rget(ctl_store *s);
void ctl_store_rput(ctl_store *s, sqlite3 *db);
/* The writer's lock: 0, or -EBUSY when another write held it for the whole bound. */
int ctl_store_wlock(ctl_store *s);
void ctl_store_wunlock(ctl_store *s);
/* The errno of the last failure on |db|: -EBUSY (the database locked past the bound),
 * -ENOSPC (its disk full), -EROFS (its file or disk read-only) or -EIO. */
int ctl_store_errno(sqlite3 *db);

#endif
