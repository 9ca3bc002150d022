/* SPDX-License-Identifier: MIT */
/* The per-host agents: their registrations (kept in the store), when each was last heard from
 * and the summary of its latest report (in memory), and the checks of the members of an agent
 * report that are not the health engine's evidence. */
#ifndef CTL_AGENTS_H
#define CTL_AGENTS_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_store.h"

#define CTL_REPORT_MAX_PEERS 1024 /* "peers" of one report */
#define CTL_AGENT_MAX_PORTS 16    /* "ports" of one registration */
#define CTL_NACK_REASONS 7        /* trimmed ... unexp_event, as mrc_nack_name() names them */
#define CTL_PEER_COUNTERS 7       /* qps ... ecn_echoes, see ctl_agents.c */

typedef struct ctl_agents ctl_agents;

/* One report in sum: what it holds, and its peers' counters totalled (saturating). */
typedef struct ctl_report_sum {
    int64_t time;       /* its own "time" in Unix ms, -1 when it gave none */
    int64_t interval_s; /* its "interval_s", 0 when it gave none */
    uint32_t nevs, npeers, ntransitions;
    bool truncated;       /* it had a "truncated" member */
    uint64_t left_out[3]; /* its "truncated": peers, evs, transitions */
    uint64_t peer[CTL_PEER_COUNTERS];
    uint64_t nacks_rcvd[CTL_NACK_REASONS];
    uint64_t ev_states[4]; /* good, skip, assumed_bad, denied */
    bool floored;          /* it had a "deny_floor" member: its denylist floor holds peers */
    uint64_t floor[3];     /* its "deny_floor": peers, evs, entered */
} ctl_report_sum;

/* The registry of |topo|'s agents with the registrations |store| holds (both borrowed until
 * ctl_agents_free). An agent not heard from for 3 x |interval_ms| is stale; after a restart an
 * agent was last heard from when it registered. A stored registration the fabric no longer
 * fits (a new topology) is left out with a warning. Returns 0, or -EIO with a sentence in
 * |err| when the store cannot be read. */
int ctl_agents_open(const fab_topo *topo, ctl_store *store, int64_t interval_ms,
                    ctl_agents **pagents, char *err, size_t errlen);
void ctl_agents_free(ctl_agents *agents);

/* Registers the agent a registration |body| (schemas/openapi.yaml, AgentRegistration)
 * describes, at |now|, committed to the store; |only| (or NULL for any) is the one host the
 * caller may register as. Returns 0 with the agent as GET /api/v1/agents lists it in |*pout|
 * (a new reference), or a status with a sentence in |why|: 400 malformed, 403 another host
 * than |only|, 422 a host or port the fabric lacks, 503 the store failed (nothing changed). */
int ctl_agents_register(ctl_agents *agents, json_object *body, const char *only, int64_t now,
                        json_object **pout, char *why, size_t whylen);

/* Checks the members of agent report |report| beyond the health engine's evidence (which
 * ctl_health_report checks): interval_s, time, each EV's counters, NACKs and path, peers,
 * transitions, deny_floor and truncated; and sums it up into |sum|. Returns 0, or 400 (malformed)
 * or 422 (a peer not of |topo|) with a sentence in |why|. */
int ctl_agents_report_check(const fab_topo *topo, json_object *report, ctl_report_sum *sum,
                            char *why, size_t whylen);
/* Notes a report from |host| (a host of the fabric) accepted at |now|: its agent was heard
 * from, and |sum| is its latest report. */
void ctl_agents_report_note(ctl_agents *agents, const char *host, const ctl_report_sum *sum,
                            int64_t now);

/* Registered agents in fabric order from the |offset|th, at most |limit|, as {total, fresh,
 * stale, offset, items} (a new reference). */
json_object *ctl_agents_list(ctl_agents *agents, uint64_t offset, uint64_t limit, int64_t now);
/* The agent of |host| with its latest report's summary, or NULL when it has not registered. */
json_object *ctl_agents_get(ctl_agents *agents, const char *host, int64_t now);
/* How many registered agents are fresh and how many stale at |now|. */
void ctl_agents_counts(ctl_agents *agents, int64_t now, uint64_t *pfresh, uint64_t *pstale);

#endif
