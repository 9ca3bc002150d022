/* SPDX-License-Identifier: MIT */
/* The central role (issue 8, items 3 and 4; issue 18): takes every node's window reports, feeds
 * their heartbeats and deficits to the inference (probe_infer), evaluates each window once every
 * node has reported (or a deadline passed: a node that never reported sent nothing), sends the
 * window's evidence to the controller (POST /api/v1/probes: coverage, the loss of the directions
 * it names, its verdicts), and turns each confirmed verdict into denylist entries at the
 * controller, retried until taken, which it lifts after the component has probed clean for the
 * hold time; a component that fails again soon after doubles its next hold (dampening). */
#ifndef PROBE_LOCALIZE_H
#define PROBE_LOCALIZE_H

#include <event2/event.h>
#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdint.h>

#include "probe_infer.h"
#include "probe_sched.h"
#include "util.h"

typedef struct probe_localize_cfg {
    struct event_base *base;
    const fab_topo *topo;
    const probe_plan *plan;
    probe_infer_cfg infer;
    uint64_t window_ns;
    uint32_t epoch;
    uint64_t deadline_ns; /* a window is evaluated at the latest this long after it closes */
    /* the controllers' base URLs, comma-separated: every request goes to their leader
     * (probe_ctl.h); NULL: verdicts are only logged */
    const char *controller;
    const char *token; /* a prober token */
    const char *cafile;
    const char *certfile, *keyfile; /* the client certificate offered to the controller, or NULL */
    uint64_t hold_ns;               /* clean probing before an entry is lifted */
    uint64_t hold_max_ns;           /* dampening's cap */
    /* The state file (docs/prober.md §8.1): its verdicts, entries and holds, written whole
     * (a temporary file, fsync, rename) whenever they change and loaded by probe_localize_new;
     * NULL: none (the entries it owns at the controller are still adopted at a start). */
    const char *state_path;
    /* The shard (docs/prober.md §11): the planes whose reports it takes and whose elements it
     * denies and lifts; 0: every plane. */
    uint64_t planes;
    /* Elected (--etcd): it starts as a follower and infers, posts and keeps entries only while
     * probe_localize_lead says it leads. */
    bool elected;
    /* The windows' clock in ns (NULL: probe_node_clock, the wall clock); a benchmark's own. */
    uint64_t (*clock)(void);
} probe_localize_cfg;

typedef struct probe_localize probe_localize;

/* Creates the localizer; with a state file, loads it first (a file that is not one, or not of
 * this fabric, is logged, kept as FILE.bad and discarded) and writes it back once. Returns 0,
 * or a negative errno with a sentence in |err|: the inference's (-EINVAL), a state file that
 * cannot be read (not a missing one) or written. */
int probe_localize_new(const probe_localize_cfg *cfg, probe_localize **ploc, char *err,
                       size_t errlen);
void probe_localize_free(probe_localize *loc);

/* Takes one node report (the JSON of probe_node) sent by the node of host |sender| (its token's
 * name), which may report for its own host only (NULL: an open localizer, for any). A host's
 * first report of a window is the one kept: a second is refused, so what was fed is never
 * counted twice (with tokens only the host's own node can send either). Returns 0, or with a
 * sentence in |err|: -EINVAL (not a report of this plan, a host or port not in the fabric, a
 * window not being collected), -EXDEV (a port of a plane another shard takes), -EPERM (a report for
 * another host than |sender|), -ESTALE (the window takes no more of this host: evaluated already,
 * or this host's report of it taken already). Each refusal is counted (probe_localize_refused). */
int probe_localize_report(probe_localize *loc, json_object *report, const char *sender, char *err,
                          size_t errlen);

/* Why a report was refused, for the metrics. */
typedef enum probe_refusal {
    PROBE_REFUSED_UNAUTHORIZED, /* no token, or one the localizer does not know (401) */
    PROBE_REFUSED_FORBIDDEN,    /* a token that may not report, or not for that host (403) */
    PROBE_REFUSED_INVALID,      /* not a report of this fabric and plan (400) */
    PROBE_REFUSED_LATE,         /* its window is evaluated already (409) */
    PROBE_REFUSED_TOO_LARGE,    /* over the body's bound (413) */
    PROBE_REFUSED_DUPLICATE,    /* its host's report of that window is taken already (409) */
    PROBE_REFUSED_MISDIRECTED,  /* a port of a plane another shard takes (421) */
    PROBE_REFUSED_NOT_LEADER,   /* a follower's: sent to the leader (307) or none known (503) */
    PROBE_REFUSALS
} probe_refusal;

/* Leads (true) or follows (false) from now on, as the election says (an elected localizer
 * only; called from its loop). Taking the lead: the windows that began before are not its own,
 * the predecessor's entries are adopted from the controller's list, and what it held is held
 * as restored. Losing it: its entries' requests are cancelled and its actions forgotten (the
 * new leader adopts them); nothing is lifted, nothing written. */
void probe_localize_lead(probe_localize *loc, bool leading);
bool probe_localize_leading(const probe_localize *loc);

/* What the loop's tick does, now: evaluates each window every node of the shard reported (or
 * whose deadline passed), retries the entries, saves the state. For a caller with its own
 * clock (a benchmark); the tick calls it every 100 ms. */
void probe_localize_poll(probe_localize *loc);

/* Counts a report the HTTP endpoint refused before it reached probe_localize_report. */
void probe_localize_refused(probe_localize *loc, probe_refusal why);

/* The state: windows evaluated, verdicts with their entries, the evidence posts, as JSON. */
json_object *probe_localize_status(const probe_localize *loc);

/* Appends the Prometheus text exposition (format 0.0.4) of the localizer's metrics to |b|. */
void probe_localize_metrics(const probe_localize *loc, util_buf *b);

#endif
