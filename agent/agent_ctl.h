/* SPDX-License-Identifier: MIT */
/* The agent's controller client: registers, fetches the host's profile and the denylist, holds the
 * push channel, sends reports, and keeps the last profile and denylist on disk so that the agent
 * runs on them while the controller is away (docs/architecture.md#running-without-the-controller).
 * Runs on the agent's libevent loop and never blocks it (a controller URL by IP address, or a name
 * resolved asynchronously). */
#ifndef AGENT_CTL_H
#define AGENT_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef struct agent_ctl agent_ctl;

/* One plane port of the host as the registration tells it. */
typedef struct agent_ctl_port {
    unsigned port; /* the plane */
    bool up;
} agent_ctl_port;

typedef struct agent_ctl_cfg {
    /* the controllers' base URLs, comma-separated: http[s]://HOST[:PORT][,...] (one scheme);
     * any of them serves reads, and a follower's redirect names the leader for writes */
    const char *url;
    const char *token;     /* the agent's bearer token (role agent, named after the host) */
    const char *cafile;    /* over https: the PEM file of trusted CAs; NULL: the system's */
    const char *certfile;  /* over https: the client certificate offered; NULL: none */
    const char *keyfile;   /* its private key */
    const char *host;      /* this host's name in the fabric: letters, digits, '.', '_', '-' */
    const char *state_dir; /* where profile.json and denylist.json are kept; made if missing */
    /* for the registration: the agent's version, its mode (srv6 or ecmp), its plane ports and
     * where its mrc-perf setup listens (oob, [IPv6]:PORT or IPv4:PORT; NULL: not told) */
    const char *version, *mode, *oob;
    const agent_ctl_port *ports;
    size_t nports;
    /* Each gets |user|. on_profile: a profile, a JSON object, new or from the state directory;
     * on_denylist: the denylist of |version|, a JSON object {version, entries}; both are
     * borrowed during the call. on_link: the controller became reachable (the agent has its
     * profile and denylist of now) or stopped being so (the agent keeps what it has). They may
     * call agent_ctl_report and agent_ctl_set_ports, but not agent_ctl_free. Any may be NULL. */
    void (*on_profile)(void *user, const char *json, size_t len);
    void (*on_denylist)(void *user, uint64_t version, const char *json, size_t len);
    void (*on_link)(void *user, bool connected);
    void *user;
    /* retries after a failure wait from backoff_min_ms, doubling up to backoff_max_ms, with
     * jitter (0: 100 ms and 10 s); a refused token or an unknown host waits slow_retry_ms
     * (0: 30 s); the push channel is held poll_wait_s at a time (0: 25 s) */
    unsigned backoff_min_ms, backoff_max_ms, slow_retry_ms, poll_wait_s;
} agent_ctl_cfg;

/* What the client has done, for the agent's own report and the tests. */
typedef struct agent_ctl_stats {
    bool connected;            /* the controller answers, and the agent is up to date */
    uint64_t denylist_version; /* of the denylist last handed on (0 also when none) */
    uint64_t reports_sent;     /* accepted by the controller */
    uint64_t reports_dropped;  /* not: the controller away, refused, or a newer one came */
    uint64_t failures;         /* of the exchange with the controller (each retry counts) */
    uint64_t epoch;            /* the leader's epoch of that denylist (0: no etcd, or none) */
} agent_ctl_stats;

/* Starts the client on |base| with a copy of |cfg|. A profile and a denylist kept in
 * cfg->state_dir by an earlier run go to on_profile and on_denylist before this returns; the
 * rest happens on |base|'s loop. Returns 0 with the client in |*pctl|, or -EINVAL (a bad
 * setting: logged with why) or -errno (the state directory cannot be made or used). */
int agent_ctl_new(struct event_base *base, const agent_ctl_cfg *cfg, agent_ctl **pctl);
/* Cancels everything in flight; no callback runs after it. NULL is a no-op. */
void agent_ctl_free(agent_ctl *ctl);

/* Sends report |json| (|len| bytes, an AgentReport of schemas/openapi.yaml) to the controller.
 * One is in flight at a time; a report given meanwhile waits in its place, and a newer one
 * replaces it (the older is dropped). Returns 0, or -ENOTCONN when the controller is away (the
 * report is dropped), -EINVAL for an empty report. Every drop is counted. */
int agent_ctl_report(agent_ctl *ctl, const char *json, size_t len);

/* The plane ports have changed (a copy of |ports| is taken): registers again. Returns 0, or
 * -EINVAL when |nports| is over 16 or a port is listed twice. */
int agent_ctl_set_ports(agent_ctl *ctl, const agent_ctl_port *ports, size_t nports);

void agent_ctl_get_stats(const agent_ctl *ctl, agent_ctl_stats *pstats);
/* The controller the client talks to now (of cfg->url's list, or a leader a redirect named);
 * borrowed until the client's next callback or call. */
const char *agent_ctl_current(const agent_ctl *ctl);

/* Orders two views of the denylist by (epoch, version), lexicographically: negative when a is
 * older than b, 0 when the same, positive when newer. A view older than the one applied is
 * never applied (between controllers without etcd, both at epoch 0, any other version is). */
int agent_ctl_view_cmp(uint64_t epoch_a, uint64_t version_a, uint64_t epoch_b, uint64_t version_b);

#endif
