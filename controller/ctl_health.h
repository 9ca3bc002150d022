/* SPDX-License-Identifier: MIT */
/* The health engine: agent reports (per-EV counters between host ports) and probe results
 * (counters on named elements) become per-direction health of every NIC-T0 and T0-T1 link,
 * correlated across reporters, and from the links the health of switches. In memory: the
 * evidence is recent by nature, and a restarted controller learns it again within a report
 * interval. */
#ifndef CTL_HEALTH_H
#define CTL_HEALTH_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdint.h>

#include "util.h"

typedef struct ctl_health ctl_health;

/* Evidence counts within |window_ms| (two half windows, the older one aging out). */
ctl_health *ctl_health_new(const fab_topo *topo, uint64_t window_ms);
void ctl_health_free(ctl_health *h);

/* The most EVs and state transitions one agent report holds. */
#define CTL_REPORT_MAX_EVS 4096
#define CTL_REPORT_MAX_TRANSITIONS 256

/* An agent report (schemas/openapi.yaml, AgentReport), from |reporter|: each EV's sent, lost
 * and state, and its transitions into assumed_bad for loss or a timeout, which count as an EV
 * in that state (once per EV). The other members are ctl_agents_report_check's to check.
 * Returns 0, or a status (400 malformed, 422 naming what is not in the fabric) with a
 * sentence in |why|; nothing is counted unless the whole report is good. */
int ctl_health_report(ctl_health *h, json_object *report, const char *reporter, int64_t now_ms,
                      char *why, size_t whylen);
/* Probe results (ProbeResults): counters on named links and host ports, from |reporter|. */
int ctl_health_probes(ctl_health *h, json_object *results, const char *reporter, int64_t now_ms,
                      char *why, size_t whylen);

struct ctl_store;
/* Takes the denylist's entries in force now from |store|, for "denied" beside the states and
 * the entries a path's EVs are excluded by: after every change of the denylist and at every
 * window's start and end. 0 or -EIO (the views keep the entries they had). */
int ctl_health_denials(ctl_health *h, struct ctl_store *store, int64_t now);

/* Saves the evidence that matters and the verdicts as the store's checkpoint, and the
 * history samples taken since the last save, removing history older than |keep_ms|. 0 or
 * -EIO (the next save tries again). */
int ctl_health_save(ctl_health *h, struct ctl_store *store, int64_t now, int64_t keep_ms);
/* Loads what an earlier run on the same fabric saved (before serving). 0 (nothing saved is
 * 0 too), or -EINVAL / -EIO with a sentence in |err|: the engine starts afresh. */
int ctl_health_load(ctl_health *h, struct ctl_store *store, int64_t now, int64_t keep_ms,
                    char *err, size_t errlen);

/* Once a second: drops the verdicts of a localizer silent for a whole window, and takes the
 * snapshot if it is due (from then on, a snapshot too costly to take within a query is left
 * to this tick). */
void ctl_health_tick(ctl_health *h, int64_t now);

/* Filters for the link list; state NULL or "ok", "degraded", "bad", "no_data". */
typedef struct ctl_link_filter {
    unsigned plane; /* UINT32_MAX: any */
    uint32_t sw;    /* FAB_NONE: any */
    const char *state;
    uint64_t offset, limit;
} ctl_link_filter;

/* A page of T0-T1 and NIC-T0 links with their health, as {total, offset, items}: as JSON
 * text (heap, its length in |*plen|: what the API sends), or parsed. */
char *ctl_health_links_text(ctl_health *h, const ctl_link_filter *f, int64_t now_ms, size_t *plen);
json_object *ctl_health_links(ctl_health *h, const ctl_link_filter *f, int64_t now_ms);
/* Switches with the count of their links by state and their own state. */
json_object *ctl_health_switches(ctl_health *h, const ctl_link_filter *f, int64_t now_ms);
/* Hosts with the health of their plane ports (a host is as bad as its worst port). */
json_object *ctl_health_hosts(ctl_health *h, const ctl_link_filter *f, int64_t now);
/* The bounded history of |element| (a switch, a T0-T1 link or a host port): its state now and
 * its changes of state, and samples while it is unhealthy, oldest first. 0, or -EINVAL with
 * a sentence when it is not in the fabric. */
int ctl_health_history(ctl_health *h, const char *element, int64_t now, json_object **out,
                       char *why, size_t whylen);
/* Per EV (plane, T1) between two host ports: the links it crosses and their health. */
json_object *ctl_health_path(ctl_health *h, uint32_t src, uint32_t dst, int64_t now_ms);
/* Each plane's elements by state and how many are denied (GET /api/v1/health/summary), as
 * JSON text (heap, its length in |*plen|). */
char *ctl_health_summary_text(ctl_health *h, int64_t now, size_t *plen);
/* What is wrong now: every switch, T0-T1 link and host port not ok or denied, of |plane| (or
 * UINT32_MAX: all), bad first, then degraded, then denied only; a page of it as JSON text. */
char *ctl_health_problems_text(ctl_health *h, unsigned plane, uint64_t offset, uint64_t limit,
                               int64_t now, size_t *plen);
/* Every T0-T1 link direction of |plane| in one answer (GET /api/v1/health/matrix), its ETag
 * (of its content) into |etag|. Returns 0 with the JSON text in |*pbody| (heap) and |*plen|;
 * 1 when |if_none_match| holds that ETag already (no body: 304); -EINVAL for no such plane. */
int ctl_health_matrix(ctl_health *h, unsigned plane, const char *if_none_match, int64_t now,
                      char *etag, size_t etaglen, char **pbody, size_t *plen);
/* The per-plane health gauges of /metrics (Prometheus text) appended to |b|. */
void ctl_health_metrics(ctl_health *h, int64_t now, util_buf *b);
/* How many links are in each state: no_data, ok, degraded, bad. */
void ctl_health_counts(ctl_health *h, int64_t now_ms, uint64_t n[4]);
/* How many reports and probe results were accepted. */
uint64_t ctl_health_ingested(const ctl_health *h);

#endif
