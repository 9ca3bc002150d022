/* SPDX-License-Identifier: MIT */
/* mrc-agent's Prometheus endpoint: GET /metrics (text format 0.0.4) on --metrics ADDR:PORT,
 * the counters the agent already keeps read when scraped. */
#ifndef AGENT_METRICS_H
#define AGENT_METRICS_H

#include <event2/event.h>
#include <mrcfab/mrc.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent_node.h"
#include "util.h"

/* The transport's counters summed over QPs (those alive and, kept apart by the caller, those
 * freed: a counter of the sum must not fall when a QP goes). */
typedef struct agent_metrics_qp_sums {
    uint64_t retx_by_cause[MRC_RETX_CAUSES]; /* packets resent, by mrc_retx_cause */
    uint64_t nacks_sent[MRC_NACK_REASONS], nacks_rcvd[MRC_NACK_REASONS];
    uint64_t sacks_sent, sacks_rcvd;
    uint64_t trims; /* of the packets this host sent, those trimmed on the way (its EVs') */
} agent_metrics_qp_sums;

/* Adds |qp|'s counters to |sums|: its QP statistics and its EVs' trims. */
void agent_metrics_qp_add(agent_metrics_qp_sums *sums, const mrc_qp *qp);

/* What one scrape shows; strings borrowed for the call. */
typedef struct agent_metrics_snapshot {
    const char *host, *version, *mode;
    unsigned nports; /* at most MRC_MAX_PORTS */
    bool port_up[MRC_MAX_PORTS];
    uint64_t rx_pkts[MRC_MAX_PORTS], tx_pkts[MRC_MAX_PORTS];
    uint64_t rx_bytes[MRC_MAX_PORTS], tx_bytes[MRC_MAX_PORTS];
    uint64_t rx_filtered; /* arrivals not for this host's ports (agent_io's rx_garbage) */
    uint64_t rx_garbage;  /* refused by the engine's decoder */
    uint64_t rx_no_qp;    /* for a QP this host does not have */
    uint64_t tx_unmapped, tx_errors, tx_blocked;
    uint64_t qps;
    uint64_t evs[4]; /* EVs of the QPs now, by mrc_ev_state */
    agent_metrics_qp_sums sums;
    bool controller; /* --controller given */
    bool connected;  /* its channel is up and the agent up to date */
    uint64_t denylist_version;
    uint64_t floor_peers, floor_kept, floor_entered; /* agent_floor_totals */
    uint64_t reports_sent, reports_dropped;
} agent_metrics_snapshot;

/* Fills the node's part of |s| (ports' packets and bytes, refusals, QPs, EVs, the transport's
 * counters of the live QPs plus |retired|); the rest of |s| is left as it is. */
void agent_metrics_from_node(agent_node *node, const agent_metrics_qp_sums *retired,
                             agent_metrics_snapshot *s);

/* Appends |s| as Prometheus text format 0.0.4 to |b|: every family with HELP and TYPE, the
 * counters' names ending in _total, label values escaped. */
void agent_metrics_render(const agent_metrics_snapshot *s, util_buf *b);

/* Appends |v| as a label value: backslash, double quote and newline escaped. */
void agent_metrics_label(util_buf *b, const char *v);

/* "ADDR:PORT" (an IPv6 address in brackets, numeric addresses only; PORT 0..65535, 0: any
 * free one) into |addr| and |*pport|. Returns 0, or -EINVAL with a sentence in |err|. */
int agent_metrics_parse_addr(const char *s, char *addr, size_t addrlen, uint16_t *pport, char *err,
                             size_t errlen);
/* util_opt's check of --metrics. */
int agent_metrics_check_addr(const util_opt *o, char *err, size_t errlen);

/* Called at each scrape to fill a snapshot (zeroed before the call). */
typedef void (*agent_metrics_fill_fn)(void *user, agent_metrics_snapshot *s);

typedef struct agent_metrics agent_metrics;

/* Serves GET /metrics at |listen| ("ADDR:PORT") on |base|, with |fill| and |user| called at each
 * scrape; any other path is 404, any other method on /metrics 405. Bounded: request headers
 * 8 KiB, bodies 1 KiB, 10 s of silence on a connection closes it. Returns 0 with the server in
 * |*pm|, or -EINVAL (a bad address) or -errno of the socket, with a sentence in |err|. */
int agent_metrics_new(struct event_base *base, const char *listen, agent_metrics_fill_fn fill,
                      void *user, agent_metrics **pm, char *err, size_t errlen);
/* The port it listens on (the one the kernel chose for PORT 0). */
uint16_t agent_metrics_port(const agent_metrics *m);
/* Scrapes answered, for the tests. */
uint64_t agent_metrics_scrapes(const agent_metrics *m);
/* Closes the socket and every connection. NULL is a no-op. */
void agent_metrics_free(agent_metrics *m);

#endif
