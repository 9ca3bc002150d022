/* SPDX-License-Identifier: MIT */
/* High availability on etcd (docs/ha.md): the controllers campaign for one leader key; the
 * leader commits each denylist change to etcd's log in a transaction fenced on its leader key,
 * then applies it to its SQLite store; every controller follows the log into its own store.
 * The etcd calls run on a thread of their own (the campaign and the log's follower) and, for
 * a change, on the HTTP thread that asked for it, never on an event loop. */
#ifndef CTL_HA_H
#define CTL_HA_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_store.h"

typedef struct ctl_ha ctl_ha;

typedef struct ctl_ha_cfg {
    const char *etcd;   /* comma-separated client URLs of the members */
    const char *prefix; /* every key under it ("/mrcfab/") */
    const char *name;   /* this controller's name among them */
    const char *url;    /* the base URL clients reach this controller at */
    unsigned ttl_s;     /* the leader lease's TTL */
    ctl_store *store;
    /* called (from the follower's thread) after the store took changes from the log */
    void (*changed)(void *user);
    void *user;
} ctl_ha_cfg;

/* Starts the campaign and the follower. 0, or -EINVAL (a bad --etcd) with a sentence. */
int ctl_ha_start(const ctl_ha_cfg *cfg, ctl_ha **pha, char *err, size_t errlen);
/* Resigns the lead (another controller leads at once) and stops. NULL is a no-op. */
void ctl_ha_stop(ctl_ha *ha);

/* Whether this controller leads now, and able to commit (caught up with the log). */
bool ctl_ha_leading(ctl_ha *ha);
/* The leader's base URL ("" when none is known) into |url|, and its epoch. */
void ctl_ha_leader(ctl_ha *ha, char *url, size_t len, int64_t *pepoch);

/* Commits |c| (its op and fields; its version, epoch and time are set here, and an added
 * entry's id and created) to etcd, then to the store. 0 once etcd committed it (the store may
 * lag and catch up from the log); -EPERM when this controller does not lead (nothing was
 * written); -EAGAIN when etcd could not commit it (no quorum, no member answering: nothing
 * was written, or a write that may have landed is read back before the answer); with a
 * sentence in |err|. */
int ctl_ha_commit(ctl_ha *ha, ctl_change *c, char *err, size_t errlen);

/* {"self": ..., "leader": ..., "members": [...]} as of the last step (a new object). */
json_object *ctl_ha_cluster_json(ctl_ha *ha);

#endif
