/* SPDX-License-Identifier: MIT */
/* A client of etcd's v3 JSON gateway (HTTP/1.1, keys and values in base64), over util_http:
 * the few calls the controller and the localizer need, and a leader election built on them.
 * Every call blocks for at most the client's timeout; call them from a thread of their own,
 * never from an event loop. One util_etcd is used by one thread at a time. */
#ifndef UTIL_ETCD_H
#define UTIL_ETCD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct util_etcd util_etcd;

/* A client of the members at |endpoints|, comma-separated http:// base URLs. A call goes to the
 * member that answered last and moves on to the next when one does not answer; |timeout_ms| bounds
 * each call to one member (0: 2000). 0, or -EINVAL with a sentence in |err|. */
int util_etcd_new(const char *endpoints, unsigned timeout_ms, util_etcd **pe, char *err,
                  size_t errlen);
void util_etcd_free(util_etcd *e);
/* The member the last call reached ("" before any). */
const char *util_etcd_endpoint(const util_etcd *e);

/* One gateway call: POST |path| (e.g. "/v3/kv/txn") with |body| (borrowed). 0 with the
 * answer in |*pans| (the caller puts it); -ETIMEDOUT or -ECONNREFUSED when no member
 * answered in time; -EAGAIN when every member that answered refused it for the cluster's
 * sake (no raft leader, too many requests: a majority is down); -EPROTO for an answer that is
 * no JSON or an error of the call itself. A sentence in |err| in each failing case. */
int util_etcd_call(util_etcd *e, const char *path, json_object *body, json_object **pans, char *err,
                   size_t errlen);

/* base64 of |len| bytes of |s|, as the gateway wants keys and values (a new JSON string). */
json_object *util_etcd_b64(const char *s, size_t len);
/* The bytes of a base64 JSON string into a new NUL-terminated heap buffer (|*plen| its length,
 * may be NULL); NULL when |j| is no base64 string. */
char *util_etcd_unb64(json_object *j, size_t *plen);
/* The smallest key after every key that starts with |prefix|: a range_end for a prefix (a
 * new JSON string in base64). */
json_object *util_etcd_prefix_end(const char *prefix);
/* A number the gateway sent as a string ("123") or as a number; |dflt| when absent. */
int64_t util_etcd_int(json_object *obj, const char *field, int64_t dflt);

/* One key and its value, as a range answered them. */
typedef struct util_etcd_kv {
    char *key, *value; /* NUL-terminated heap copies */
    size_t vlen;
    int64_t create_rev, mod_rev, lease;
} util_etcd_kv;
void util_etcd_kvs_free(util_etcd_kv *v, size_t n);
/* The kvs of a range answer (|range| is the object holding "kvs") into a new array. 0 or
 * -EPROTO. */
int util_etcd_kvs(json_object *range, util_etcd_kv **pv, size_t *pn);

/* Every key from |key| up to |range_end| (NULL: |key| alone), at most |limit| (0: all), in
 * key order, into |*pv| of |*pn|, and the store's revision in |*prev| (may be NULL). */
int util_etcd_range(util_etcd *e, const char *key, const char *range_end, int64_t limit,
                    util_etcd_kv **pv, size_t *pn, int64_t *prev, char *err, size_t errlen);

/* Leases: grant one of |ttl_s| seconds; keep it alive once (-ENOENT when it has expired);
 * revoke it (its keys go at once). */
int util_etcd_lease_grant(util_etcd *e, unsigned ttl_s, int64_t *pid, char *err, size_t errlen);
int util_etcd_lease_keepalive(util_etcd *e, int64_t id, char *err, size_t errlen);
int util_etcd_lease_revoke(util_etcd *e, int64_t id, char *err, size_t errlen);

/* A leader election for one key: the leader holds |key| under a lease of its own, created
 * by a transaction that succeeds only while the key does not exist; the key's create
 * revision is the leader's epoch, which grows with every new leader. A deposed leader's
 * writes are refused by fencing them on that revision (util_elect_fence). */
typedef struct util_elect {
    util_etcd *etcd; /* borrowed */
    char key[256];
    char value[512];     /* what this candidate publishes as leader (its name and URL) */
    unsigned ttl_s;      /* the lease's TTL */
    int64_t lease;       /* this candidate's lease, 0 when it holds none */
    bool leader;         /* whether this candidate leads, as of its last step */
    int64_t epoch;       /* the leader key's create revision, this candidate's or another's */
    int64_t won;         /* the create revision this candidate took the key at (0: none held) */
    char current[512];   /* the current leader's value ("" when there is none) */
    int64_t lease_ok_ns; /* CLOCK_MONOTONIC of the last keepalive that reached a member */
} util_elect;

/* Sets up |el| (no call is made). |ttl_s| 0: 3. */
void util_elect_init(util_elect *el, util_etcd *etcd, const char *key, const char *value,
                     unsigned ttl_s);
/* One step of the campaign, to be called at least every ttl_s/3: keeps this candidate's
 * lease alive (a new one when it expired), takes the key when nobody holds it, and reads who
 * does. Stops leading at once when the lease cannot be kept alive for ttl_s - 0.5 seconds, so
 * that a candidate cut off from etcd has stopped before its lease lets another lead. 0 with
 * |el| updated; or a negative code with |el->leader| false when etcd could not be asked
 * (|current| and |epoch| then stay what they were). */
int util_elect_step(util_elect *el, char *err, size_t errlen);
/* Whether this candidate leads now: it did at its last step and its lease was kept alive less
 * than ttl_s - 0.5 seconds ago (a step blocked on a member that does not answer cannot make it
 * lead for longer than its lease). */
bool util_elect_leading(const util_elect *el);
/* Leaves the lead (and the candidacy): revokes the lease, so that another may lead at once. */
void util_elect_resign(util_elect *el);
/* Adds to the txn |compare| array the condition that this candidate still leads: the leader
 * key exists with the create revision this candidate won it at (|won|, not |epoch|: a deposed
 * leader that has stepped since knows the new leader's epoch). A candidate that holds no key
 * adds a condition that never holds. */
void util_elect_fence(const util_elect *el, json_object *compare);

#endif
