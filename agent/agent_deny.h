/* SPDX-License-Identifier: MIT */
/* The agent's view of the controller's denylist (docs/architecture.md#denylists): the active
 * entries of GET /api/v1/denylist resolved against the agent's fabric, and which EVs they
 * exclude. */
#ifndef AGENT_DENY_H
#define AGENT_DENY_H

#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The rule is libmrcfab's (fab_deny_ev), the one the controller's blast radius counts host
 * pairs with: EV (p, j) from the local host port under T0 a to the peer's under T0 b is
 * excluded when switch T0 a, T0 b or T1 j, link a–j up, link b–j down, the local port on
 * plane p up or the peer's port on plane p down is denied; a T0-local path only by T0 a or
 * the two ports.
 *
 * Only the data direction counts, not the acknowledgements that come back over the same
 * path (mrc_settings.ev_symmetric). The blast radius counted the data direction; excluding
 * the ack side as well would let a one-way entry take paths from pairs the controller's floor
 * check never charged. An ack lost on a denied return direction costs little: SACKs are
 * cumulative, so the next one on any other EV covers the data, which the forward direction
 * delivered. The peer's own agent, sending the other way, excludes that direction for its
 * data.
 */
typedef struct agent_deny agent_deny;

/*
 * Parses the body of GET /api/v1/denylist (|json|, |len| bytes, NUL not needed) against
 * |topo|, which must outlive the set. Entries whose "active" is false are left out; an
 * element |topo| does not know (a newer controller's fabric) is skipped and counted, not an
 * error. An entry's "source" and "reason" are optional (strings when given). On success stores a
 * new set in
 * |*pset| (free it with agent_deny_free()). Returns 0, or -EINVAL with a sentence in |err| (a body
 * that is not JSON or not the schema's shape; nothing is stored, so the caller keeps its old set)
 * or -ENOMEM.
 */
int agent_deny_parse(const fab_topo *topo, const char *json, size_t len, agent_deny **pset,
                     char *err, size_t errlen);
void agent_deny_free(agent_deny *set);

/* The denylist version the body carried. */
uint64_t agent_deny_version(const agent_deny *set);

/* What parsing did with the entries: applied (active and known), inactive (outside their
 * window), skipped (active, but the element is not in this fabric). */
typedef struct agent_deny_counts {
    size_t entries, applied, inactive, skipped;
} agent_deny_counts;

void agent_deny_counts_get(const agent_deny *set, agent_deny_counts *pcounts);
/* The first skipped element's name ("" if none), for a log line; borrowed from |set|. */
const char *agent_deny_first_skipped(const agent_deny *set);

/* Whether |set| excludes EV |ev| from host |src_host| to host |dst_host| (the EV's plane and
 * T1 by the topology's plan; the host ports are the hosts' ports on that plane). An EV that
 * names no path in the topology is reported excluded. O(1), no allocation, no strings; safe
 * from any number of threads. */
bool agent_deny_ev(const agent_deny *set, uint32_t src_host, uint32_t dst_host, uint32_t ev);

/* How much of the denylist an EV's path crosses: the applied entries that deny a part of it
 * by the rule above, the drains (an operator's entry whose reason starts with "drain": planned
 * maintenance, docs/architecture.md#denylists) apart from the rest (the prober's verdicts, an
 * operator's entry for any other reason, an entry without a source or reason: failures). The
 * denylist floor (agent_floor.h) ranks EVs by it. */
typedef struct agent_deny_ev_cost {
    unsigned failures, drains;
} agent_deny_ev_cost;

/* |set|'s cost of EV |ev| from |src_host| to |dst_host| into |*pcost|. Returns 0, or -ENOENT
 * when the EV names no path (then |*pcost| is zero). O(entries), no allocation. */
int agent_deny_cost(const agent_deny *set, uint32_t src_host, uint32_t dst_host, uint32_t ev,
                    agent_deny_ev_cost *pcost);

/* The libmrcfab set behind |set| (borrowed), for callers that need the rule's other forms. */
const fab_deny *agent_deny_set(const agent_deny *set);

#endif
