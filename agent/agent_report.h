/* SPDX-License-Identifier: MIT */
/* The agent's periodic report to the controller: per-peer totals, the worst EVs and the EV
 * state transitions of one interval, as JSON text bounded in size at any scale. */
#ifndef AGENT_REPORT_H
#define AGENT_REPORT_H

#include <mrcfab/fabric.h>
#include <mrcfab/mrc.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define AGENT_REPORT_DEFAULT_PEERS 1024
#define AGENT_REPORT_DEFAULT_EVS 256
#define AGENT_REPORT_DEFAULT_TRANSITIONS 256
#define AGENT_REPORT_PATH_MAX 256 /* room for an EV's path text, its NUL included */

/*
 * Names an EV's path for the report ("p0-t0-1~p0-t1-0~p0-t0-3"): writes NUL-terminated text
 * into |dest| (|destlen| is AGENT_REPORT_PATH_MAX) and returns 0, or returns a negative value
 * to leave "path" out. Text with a character outside '!'..'~', a '"' or a '\' is left out too.
 * Called only for the EVs a report carries, at most max_evs per report.
 */
typedef int (*agent_report_path_fn)(void *user, const char *peer, uint32_t ev, unsigned port,
                                    char *dest, size_t destlen);

typedef struct agent_report_cfg {
    const char *host;          /* this host's name (copied): FAB_NAME_MAX rules */
    unsigned interval_s;       /* the reporting interval: the first report's "interval_s" */
    unsigned max_peers;        /* peers reported, the busiest (0: 1024) */
    unsigned max_evs;          /* EVs reported, the worst (0: 256) */
    unsigned max_transitions;  /* transitions kept, the newest (0: 256) */
    size_t max_bytes;          /* 0, or a cap on the text: what does not fit is truncated */
    agent_report_path_fn path; /* may be NULL: no "path" */
    void *user;                /* for |path| */
    const mrc_context *ctx;    /* may be NULL; else the EV events its queue dropped count as
                                  truncated transitions */
} agent_report_cfg;

typedef struct agent_report agent_report;

/*
 * The report, in this order (the controller's POST /api/v1/reports):
 *
 *   {"host":"h0","interval_s":10,"time":"2026-11-30T18:00:00Z","evs":[...],
 *    "peers":[...],"transitions":[...],"deny_floor":{"peers":n,"evs":n,"entered":n},
 *    "truncated":{"peers":n,"evs":n,"transitions":n}}
 *
 * "host", "interval_s", "time" and "evs" are always there (the heartbeat; an idle interval
 * has nothing else and "evs" is []); "peers" and "transitions" only when not empty,
 * "deny_floor" only while the floor holds a peer, and
 * "truncated" only when something was left out. Counters are deltas over the interval.
 *
 * "evs": one row per (peer, EV), its QPs to that peer added up:
 *   {"peer","ev","path","state","sent","lost","retx","acked","timeouts","ecn","trims",
 *    "transitions","probes_sent","probes_ok","rtt_ns"}
 * where "sent" counts every transmission on the EV (first copies and resends), "lost" the
 * transmissions found lost untrimmed (the engine's timeouts plus the losses it inferred from
 * later acknowledgements or a tail probe; a trimmed packet is no loss: see "trims"), "state"
 * is the EV's state now (of several QPs, the highest of good < skip < assumed_bad < denied),
 * "rtt_ns" the last RTT measured on it (left out when none was: TSETH off). The engine has no
 * probe RTT and no NACK count per EV, so there is no "probe_rtt_ns" and no "nacks".
 * An EV is a candidate when its interval saw any of these counters move or it is SKIP or
 * ASSUMED_BAD; a GOOD or DENIED EV with no traffic is not (the controller denied the second
 * and knows it; a denied T1 would otherwise fill every report with idle EVs). The worst
 * max_evs are reported: not GOOD first, then by loss rate (lost / max(sent, lost)), then by
 * lost count, then by sent (ties in a fixed order).
 *
 * "peers": {"peer","qps","data_pkts_sent","data_bytes_sent","retx_pkts","sacks_rcvd",
 *   "nacks_rcvd":{"trimmed",...,"unexp_event"},"timeouts","ecn_echoes",
 *   "ev_states":{"good","skip","assumed_bad","denied"}}: the sums of its QPs, deltas but for
 * "qps" and "ev_states" (now). A peer is a candidate when a counter of it moved (data received
 * counts); the busiest max_peers (data packets sent plus received) are reported.
 *
 * "deny_floor": {"peers","evs","entered"}, only while the denylist floor holds a peer: the
 * peers held now, the EVs the floor keeps past the denylist now, and the times a peer went to
 * the floor since the agent started (agent_report_set_floor; agent_floor.h).
 *
 * "transitions": {"time" (the engine's now, ns),"peer","ev","from","to","reason"}, oldest
 * first, the newest max_transitions since the last committed report; "reason" is one of
 * ecn, trim, always_skip, timeout, rotation, probe_ok, deny, allow, loss.
 *
 * Size: names are at most FAB_NAME_MAX - 1 bytes of A-Z a-z 0-9 . _ - and paths at most
 * AGENT_REPORT_PATH_MAX - 1 bytes needing no escape, so each row has a largest size (an EV
 * row 711 bytes, a peer row 699, a transition 181) and a report is never longer than
 * agent_report_max_size(): 945,982 bytes with the default bounds and a two-letter host name,
 * 25,822 with 16 peers, 16 EVs and 16 transitions (counters of 20 digits; real ones are
 * shorter). max_bytes caps it lower (the controller's default body limit is 64 KiB), leaving
 * out the rows that do not fit (the least bad EVs, the least busy peers, the oldest
 * transitions) and counting them in "truncated".
 */

/* Returns 0, or -EINVAL (no host, a bad host name, max_bytes below the smallest report) with
 * a sentence in |errmsg|. */
int agent_report_new(const agent_report_cfg *cfg, agent_report **prep, char *errmsg,
                     size_t errmsglen);
/* Frees it; the QPs it borrowed are the caller's. NULL is a no-op. */
void agent_report_free(agent_report *rep);

/* The largest report |cfg| can make, in bytes (its NUL not counted). */
size_t agent_report_max_size(const agent_report_cfg *cfg);

/*
 * Reports |qp| (borrowed until agent_report_qp_remove) as a QP toward host |peer|; its
 * counters from now on count. Returns 0, or -EINVAL (a bad peer name) or -EEXIST (already
 * added) with a sentence in |errmsg|.
 */
int agent_report_qp_add(agent_report *rep, mrc_qp *qp, const char *peer, char *errmsg,
                        size_t errmsglen);
/*
 * The caller is about to free |qp|: its counters are read one last time and go into the next
 * committed report, so nothing it did is lost. Returns 0 or -ENOENT.
 */
int agent_report_qp_remove(agent_report *rep, mrc_qp *qp);

/* One EV event of the context (mrc_poll_ev_events): kept for "transitions", the newest
 * max_transitions of them. Events of QPs not added are ignored. */
void agent_report_ev_event(agent_report *rep, const mrc_ev_event *event);

/*
 * Writes the report of everything since the last committed one into |out| (replacing what it
 * held), stamped with |wall_ns| (UTC, ns since the epoch). "interval_s" is the time since the
 * last committed report, rounded, at least 1 (the first: cfg->interval_s). Nothing is
 * consumed: until agent_report_commit(), the next build covers this interval again, so a
 * report the controller did not take is not lost. Returns 0 or -EINVAL (|out| NULL).
 */
int agent_report_build(agent_report *rep, uint64_t wall_ns, util_buf *out);
/* The denylist floor's totals now (agent_floor_totals: peers held, EVs kept, times entered),
 * for the reports built from now on; "deny_floor" is left out while |peers| is 0. */
void agent_report_set_floor(agent_report *rep, uint64_t peers, uint64_t evs, uint64_t entered);

/* The last report built was delivered: the next one starts from its counters. What happened
 * since that build (counters, transitions, removed QPs) stays for the next. */
void agent_report_commit(agent_report *rep);

#endif
