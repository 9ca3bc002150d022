/* SPDX-License-Identifier: MIT */
/* The link state of the host's plane ports, watched over netlink in the agent's event loop. */
#ifndef AGENT_PORT_H
#define AGENT_PORT_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A port is up when its interface exists, is administratively up (IFF_UP) and is running with
 * a carrier (IFF_RUNNING and IFF_LOWER_UP, that is operstate up): a veth whose peer is down is
 * down. An interface that does not exist is down, and comes up when it appears and is up; one
 * renamed away, deleted or moved to another namespace goes down.
 *
 * One NETLINK_ROUTE socket subscribed to RTNLGRP_LINK, non-blocking, read by one event of the
 * caller's loop (and a timer only to retry a refused dump); no thread. The state of every port
 * is read before agent_port_new() returns. If the socket's buffer overflows (ENOBUFS: the
 * kernel dropped notifications) every link is read again, so no change is missed: a port whose
 * state differs from what was last reported gets its callback then. A change that came and
 * went while notifications were lost (a flap) is not seen.
 */

/* Called from the event loop when port |port| (an index into the names given) changes state;
 * never for the state read at start, never twice for the same state. It must not free the
 * watcher. */
typedef void (*agent_port_cb)(void *user, unsigned port, bool up);

typedef struct agent_port agent_port;

typedef struct agent_port_stats {
    uint64_t changes;   /* callbacks made */
    uint64_t overflows; /* ENOBUFS (or truncated messages): notifications lost */
    uint64_t dumps;     /* full reads of the link table, the first one included */
} agent_port_stats;

/*
 * Watches the |nports| interfaces named |ifnames| (copied; 1..16 distinct names of fewer than
 * 16 characters) in the current network namespace, calling |cb| with |user| on every change.
 * Returns 0, -EINVAL (a bad argument, said in the log), -ETIMEDOUT (the kernel did not answer
 * the first read within 5 s) or another -errno of the socket.
 */
int agent_port_new(struct event_base *base, const char *const *ifnames, unsigned nports,
                   agent_port_cb cb, void *user, agent_port **pport);
/* Whether |port| is up now (false for an index out of range). */
bool agent_port_up(const agent_port *ap, unsigned port);
void agent_port_get_stats(const agent_port *ap, agent_port_stats *stats);
/* Closes the socket and removes its events. NULL is a no-op. */
void agent_port_free(agent_port *ap);

#endif
