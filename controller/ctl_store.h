/* SPDX-License-Identifier: MIT */
/* The controller's state in SQLite (WAL): the denylist, its version and its audit log, and the
 * agents' registrations. Every change is one transaction; a function that returns 0 has
 * committed it. */
#ifndef CTL_STORE_H
#define CTL_STORE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ctl_store ctl_store;

/* One denylist entry. Times are Unix milliseconds; start and end 0 when not given. */
typedef struct ctl_deny {
    int64_t id;
    char element[96];
    char scope[16];  /* "both", "up" or "down": the whole element or one direction */
    char reason[256];
    char source[16]; /* "operator", "prober" or "agent" */
    char author[64];
    int64_t created, start, end;
    bool forced; /* added over the capacity floor; the audit record says so */
} ctl_deny;

/* One change of the denylist as a leader decided it and etcd committed it, for each replica to
 * apply (ctl_ha.c): its version, the epoch of the leader that wrote it, and when. */
typedef enum ctl_change_op { CTL_CHANGE_ADD, CTL_CHANGE_REMOVE, CTL_CHANGE_TICK } ctl_change_op;
typedef struct ctl_change {
    int64_t version, epoch, time;
    ctl_change_op op;
    ctl_deny entry;  /* ADD: the entry, its id and created set */
    int64_t id;      /* REMOVE: the entry's id */
    char actor[64];  /* REMOVE: who */
} ctl_change;

/* Opens (creating if needed) the database at |path|. Returns 0 or a negative errno with a
 * sentence in |err|. */
int ctl_store_open(const char *path, ctl_store **pstore, char *err, size_t errlen);
void ctl_store_close(ctl_store *store);
/* How long a write waits for the store (another write of ours, or another process's) before it
 * gives up with -EBUSY, changing nothing. */
#define CTL_STORE_BUSY_MS 3000
void ctl_store_set_busy_ms(ctl_store *store, int busy_ms);
/* A write's failure as the start of a sentence (its API answer is 503 and this, then "; nothing
 * was changed"): -EBUSY, -ENOSPC (the disk full), -EROFS (read-only), else any other. Reads go
 * on in each case. */
const char *ctl_store_strerror(int rv);

/* Bounds the denylist at |max| entries (0: no bound); entries already stored stay. */
void ctl_store_deny_set_max(ctl_store *store, size_t max);
/* The number of entries, without the store's lock (kept on each commit). */
size_t ctl_store_deny_count(ctl_store *store);
/* Adds |d| (its id and created are set) and bumps the version. 0; -EDQUOT when the list holds
 * its bound of entries already (nothing is written, not even to the audit log); or -EBUSY,
 * -ENOSPC, -EROFS, -EIO (every write of the store: nothing changed). */
int ctl_store_deny_add(ctl_store *store, ctl_deny *d);
/* The entry identical to |d| (the same element, scope, window and author) into |*pfound|:
 * 1 when there is one, 0 when not, -EIO. */
int ctl_store_deny_find(ctl_store *store, const ctl_deny *d, ctl_deny *pfound);
/* Removes entry |id|; 0, -ENOENT or -EIO. */
int ctl_store_deny_del(ctl_store *store, int64_t id, const char *actor);
/* The same, only if the entry's source is |source| (NULL: any): -EPERM, with nothing changed,
 * when it is another's. */
int ctl_store_deny_del_if(ctl_store *store, int64_t id, const char *actor, const char *source);
/* The entries as a JSON array (a new reference), oldest first; NULL on a store error. */
json_object *ctl_store_deny_list(ctl_store *store);
/* At most |limit| entries with ids above |after|, oldest first; |*pnext| is the last one's id
 * when more follow, else 0. NULL on a store error. */
json_object *ctl_store_deny_page(ctl_store *store, int64_t after, unsigned limit,
                                 int64_t *pnext);
/* Every entry, oldest first, into a new array |*pv| of |*pn|. 0 or -EIO. */
int ctl_store_deny_all(ctl_store *store, ctl_deny **pv, size_t *pn);
/* One entry as JSON, or NULL when there is none. */
json_object *ctl_store_deny_get(ctl_store *store, int64_t id);
int64_t ctl_store_version(ctl_store *store);
/* Audit records after id |after|, at most |limit|, as a JSON array; NULL on a store error. */
json_object *ctl_store_audit(ctl_store *store, int64_t after, unsigned limit);

/* Maintenance windows: records a 'window start' or 'window end' audit record for each entry
 * whose window starts or ends after the last tick and by |now|, bumps the version once if
 * there was any, and keeps |now| as the last tick; returns how many, or -EIO. */
int ctl_store_window_tick(ctl_store *store, int64_t now);
/* The next window start or end after |now|, 0 if none. */
int64_t ctl_store_next_boundary(ctl_store *store, int64_t now);

/* Replication (ctl_ha.c). Applies |c| with its own id, version and epoch: 0, 1 when the store
 * is at its version or past it already (nothing done), or a store error. */
int ctl_store_apply(ctl_store *store, const ctl_change *c);
/* The version and epoch set, nothing else changed (a removal whose entry is gone already). */
int ctl_store_resync_version(ctl_store *store, int64_t version, int64_t epoch);
/* Replaces the whole denylist with |v| of |n| at |version| of |epoch| with its last window
 * tick, in one transaction, audited as a resync: a replica too far behind etcd's log, or one
 * whose store is not etcd's (etcd is the truth). */
int ctl_store_resync(ctl_store *store, const ctl_deny *v, size_t n, int64_t version,
                     int64_t epoch, int64_t window_tick);
/* The epoch of the leader whose change the store holds last (0: a controller alone). */
int64_t ctl_store_epoch(ctl_store *store);
/* How many window starts and ends fall after the last tick and by |now| (what
 * ctl_store_window_tick would record), or -EIO; and the last tick. */
int ctl_store_window_due(ctl_store *store, int64_t now);
int64_t ctl_store_window_last(ctl_store *store);

/* Registers (or registers again) the agent of |host|: |record| is its registration as JSON
 * text (ctl_agents.c writes and reads it), |registered| when, in Unix ms. 0 or -EIO. */
int ctl_store_agent_put(ctl_store *store, const char *host, const char *record, int64_t registered);
/* Calls |fn| with every registration, by host name; |fn| must not call the store (its lock is
 * held). 0 or -EIO. */
int ctl_store_agent_all(ctl_store *store,
                        void (*fn)(void *user, const char *host, const char *record,
                                   int64_t registered),
                        void *user);

/* A named blob (the health engine's checkpoint): put replaces it, in one statement; get
 * returns 0 with a heap copy (the caller frees it), -ENOENT when there is none, or -EIO. */
int ctl_store_blob_put(ctl_store *store, const char *name, const void *data, size_t len,
                       int64_t now);
int ctl_store_blob_get(ctl_store *store, const char *name, void **pdata, size_t *plen);

/* One sample of an element's health history: the health engine's element id, when (Unix
 * ms), its loss and state. */
typedef struct ctl_hsample {
    uint64_t element;
    int64_t ms;
    float loss;
    uint8_t state;
} ctl_hsample;
/* Adds |n| samples and removes those older than |keep_after| (ms), in one transaction.
 * 0 or -EIO. */
int ctl_store_history_add(ctl_store *store, const ctl_hsample *v, size_t n, int64_t keep_after);
/* Calls |fn| with every sample since |after|, by element then time; |fn| must not call the
 * store. 0 or -EIO. */
int ctl_store_history_all(ctl_store *store, int64_t after,
                          void (*fn)(void *user, const ctl_hsample *sample), void *user);

/* |d| as JSON; "active" is whether it applies at |now| (no window, or inside it). */
json_object *ctl_deny_json(const ctl_deny *d, int64_t now);
/* An RFC 3339 UTC time ("2026-11-30T02:00:00Z", optional fraction) in Unix ms, or -1 if it
 * is not one: two digits a field, and a date that exists (not 2026-02-30). */
int64_t ctl_time_parse(const char *s);
/* RFC 3339 UTC with milliseconds. */
void ctl_time_str(int64_t ms, char *dest, size_t destlen);
int64_t ctl_now_ms(void);

#endif
