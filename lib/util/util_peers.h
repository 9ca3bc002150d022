/* SPDX-License-Identifier: MIT */
/* A client's list of replicas of one service (controllers, a shard's localizers, etcd
 * members), and which one it talks to: the one that answered last, the next one when that one
 * does not answer, and the leader a follower names in a redirect. Pure bookkeeping, no I/O:
 * the callers' HTTP clients ask it where to go and tell it what happened. */
#ifndef UTIL_PEERS_H
#define UTIL_PEERS_H

#include <stdbool.h>
#include <stddef.h>

/* at most this many replicas in one list, those a redirect named included */
#define UTIL_PEERS_MAX 16

/* The header a follower names the leader in, beside a 307's Location. */
#define UTIL_PEERS_LEADER_HEADER "X-Mrcfab-Leader"

typedef struct util_peers {
    char *url[UTIL_PEERS_MAX]; /* base URLs (scheme://host[:port], no trailing slash) */
    size_t n;
    size_t cur;     /* the one to ask next */
    unsigned tried; /* replicas tried since one last answered: a round is n */
} util_peers;

/* |list|: comma-separated http:// or https:// base URLs (trailing slashes are dropped; a
 * path or a query is refused: the callers add the API's paths). 0, or -EINVAL with a sentence in |err| (and
 * |p| empty). */
int util_peers_parse(util_peers *p, const char *list, char *err, size_t errlen);
void util_peers_free(util_peers *p);
/* The base URL to ask. */
const char *util_peers_current(const util_peers *p);
/* The current one answered (any HTTP answer that is not a redirect or a "no leader" 503). */
void util_peers_ok(util_peers *p);
/* The current one did not answer (or has no leader): the next one becomes current. Returns
 * true while the round is not over, false once every replica has failed since the last
 * answer (the caller waits before it goes round again; the count starts over). */
bool util_peers_failed(util_peers *p);
/* A follower named |leader| (a base URL, or a URL whose path is dropped): it becomes current,
 * added to the list if it is not in it (in the last place when the list is full). 0, or
 * -EINVAL when |leader| is no http(s) URL or has another scheme than the list's first (a redirect
 * may not take the client off TLS). */
int util_peers_follow(util_peers *p, const char *leader);

#endif
