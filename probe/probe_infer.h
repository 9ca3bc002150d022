/* SPDX-License-Identifier: MIT */
/* Gray-failure localization (issue 8, item 3): pure inference of the faulty components of the
 * fabric from per-window probe loss counts (docs/prober.md §5). No I/O and no clock: the caller
 * feeds each window's lossy paths and the senders' heartbeats, then asks for the confirmed
 * verdicts of a window. */
#ifndef PROBE_INFER_H
#define PROBE_INFER_H

#include "probe_sched.h"

#include <stdbool.h>
#include <stdint.h>

/* The component classes a verdict names. The four directed link classes take the values of
 * probe_dir, so a probe_link's dir is its component type. */
typedef enum probe_comp_type {
    PROBE_COMP_NIC_T0 = PROBE_NIC_T0, /* t0, other = down-port */
    PROBE_COMP_T0_NIC = PROBE_T0_NIC, /* t0, other = down-port */
    PROBE_COMP_T0_T1 = PROBE_T0_T1,   /* t0, other = T1 */
    PROBE_COMP_T1_T0 = PROBE_T1_T0,   /* t0, other = T1 */
    PROBE_COMP_T0,                    /* the T0 device t0; other = 0 */
    PROBE_COMP_T1,                    /* the T1 device other; t0 = 0 */
    PROBE_COMP_OPTIC,                 /* uplinks (t0, other*group .. +group-1), both directions */
    PROBE_COMP_TYPES
} probe_comp_type;

typedef struct probe_comp {
    uint8_t type; /* probe_comp_type */
    uint8_t plane;
    uint16_t t0;
    uint16_t other;
} probe_comp;

typedef struct probe_infer_cfg {
    /* The fabric's grid, the same on every plane. */
    unsigned planes, nt0, nt1, nports;
    unsigned optic_group; /* uplinks per optic group (a cage); default 4; nt1 % group == 0 */
    /*
     * Probes each component carries per window. The plan is balanced (probe_sched.h: every
     * directed link of a class carries exactly the same count), so these counts stand for
     * every component of a class and no per-link sent counter is kept: that is the assumption
     * of this module. probe_infer_cfg_from_plan() fills them from a plan.
     */
    double n_nic;   /* each directed NIC-T0 / T0-NIC link */
    double n_up;    /* each directed T0-T1 / T1-T0 link */
    double n_t0;    /* distinct probes through one T0 */
    double n_t1;    /* distinct probes through one T1 */
    double n_optic; /* distinct probes through one optic group */
    /* Background loss per probe; 0 = estimate it (median per-T1 loss over the longest horizon,
     * floored at p0_floor). */
    double p0;
    double p0_floor;
    double tau;            /* nats a component must gain to be selected (default 25) */
    double tau_loo;        /* nats left without its worst window, for horizons >= 2; also what a
                            * component must gain beyond a rival with the same lost probes, and
                            * what makes a device's loss off its worst cable more than noise
                            * (docs/prober.md §5.4-5.6; default 8) */
    double floor_loss;     /* smallest loss estimate reported (default 2e-4) */
    unsigned horizons;     /* horizons 1, 2, 4, ... 2^(horizons-1) windows; default 6, at most 6 */
    unsigned confirm;      /* consecutive evaluations a component must be selected in, each by
                            * a horizon run in it, not repeated from an earlier run (default 2) */
    unsigned heal_windows; /* clean windows that make a confirmed verdict healed (default 8) */
    /* Lost-probe records kept per window; above it a window is thinned by a hash of the path
     * (a uniform subsample, its counts scaled), which bounds memory under a dead switch. */
    uint32_t max_records;
} probe_infer_cfg;

/* Fills |cfg| with the defaults for a fabric of |planes| x |nt0| T0s x |nports| down-ports, |nt1|
 * T1s, and per-component counts of the default plan mix (probe_cfg_default()). */
void probe_infer_cfg_default(probe_infer_cfg *cfg, unsigned planes, unsigned nt0, unsigned nt1,
                             unsigned nports);

/* Fills the per-component counts of |cfg| (and its grid) from |plan|, plane 0. Returns 0 or
 * -EINVAL (a plan without planes). */
int probe_infer_cfg_from_plan(probe_infer_cfg *cfg, const probe_plan *plan);

/* One confirmed verdict. */
typedef struct probe_verdict {
    probe_comp comp;
    double loss;        /* estimated loss of the component's probes */
    uint64_t lost;      /* evidence: lost probes explained by the component ... */
    uint64_t sent;      /* ... out of this many through it ... */
    unsigned horizon;   /* ... over this many windows ... */
    double llr;         /* ... scoring this many nats against the background */
    uint64_t since;     /* window in which the verdict was confirmed */
    uint64_t last_seen; /* last window whose evaluation selected the component */
    bool healed;        /* its last heal_windows windows are clean: a denylist may be lifted */
} probe_verdict;

typedef struct probe_infer probe_infer;

/* Creates an inference state for |cfg| (copied). Returns 0 or -EINVAL (a grid out of range, a
 * group that does not divide nt1, a count or threshold that is not positive), -ENOMEM. */
int probe_infer_new(const probe_infer_cfg *cfg, probe_infer **pinf);
/* Frees |inf|; NULL is a no-op. */
void probe_infer_free(probe_infer *inf);

/*
 * Feeds one observed probe path of |window|: the |nlinks| directed links it crosses (from
 * probe_spec_links(); borrowed for the call) and |lost| probes of it lost. Trimmed probes are
 * congestion and must not be counted as lost. Paths without loss need not be fed (counts come
 * from the plan). The sender is the first NIC->T0 link. Returns 0 or one of: -EINVAL (no link,
 * more than 6, a link out of the grid), -ESTALE (|window| already evaluated or older than the
 * longest horizon), -ENOMEM.
 */
int probe_infer_add(probe_infer *inf, uint64_t window, const probe_link *links, unsigned nlinks,
                    uint32_t lost);

/* Feeds the "sent" heartbeat of host port (plane, t0, port) for |window|: it sent |sent| of the
 * |planned| probes of the plan. A sender that sent fewer is a host issue: its probes' losses in
 * that window are ignored. Returns 0 or -EINVAL, -ESTALE, -ENOMEM as probe_infer_add(). */
int probe_infer_add_sent(probe_infer *inf, uint64_t window, unsigned plane, unsigned t0,
                         unsigned port, uint32_t sent, uint32_t planned);

/*
 * Evaluates every horizon ending at |window| (all of whose observations must have been fed; it
 * becomes read-only) and returns the number of confirmed verdicts, writing up to |max| of them
 * to |out| (healed ones included, flagged; a healed verdict is dropped once no horizon selects
 * it any more). Windows must be evaluated in increasing order; a
 * skipped window counts as clean. Returns the count or -ESTALE (|window| not after the last
 * evaluated one), -ENOMEM.
 */
int probe_infer_eval(probe_infer *inf, uint64_t window, probe_verdict *out, size_t max);

/* Components selected in the last evaluation but not (yet) confirmed, for diagnostics. */
size_t probe_infer_pending(const probe_infer *inf);

/* A short name of |c| into |dest| ("p0 U t0=3 t1=17", "p1 T1 5", ...). Returns the length
 * snprintf would write. */
int probe_comp_name(const probe_comp *c, char *dest, size_t destlen);

/* The lost probes of evaluated |window| on the paths that cross component |c| (senders short of
 * their plan left out; scaled back up when the window was thinned, an estimate then) into
 * |*plost|. Read-only. Returns 0, or -EINVAL (|c| not of the grid), -ENOENT (|window| not
 * evaluated, or no longer among the windows of the longest horizon). */
int probe_infer_window_lost(const probe_infer *inf, uint64_t window, const probe_comp *c,
                            uint64_t *plost);

#endif
