/* SPDX-License-Identifier: MIT */
/* The localizer: reports in, evaluations, evidence and denylist entries out (probe_localize.h). */
#include "probe_localize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe_ctl.h"
#include "probe_node.h"
#include "probe_post.h"
#include "probe_shard.h"
#include "probe_wire.h"

#define LOC_PENDING 8     /* windows awaiting their reports */
#define LOC_VERDICTS 4096 /* confirmed verdicts read per evaluation */
#define LOC_ACTIONS 1024  /* components with denylist entries (in force or on their way) */
#define LOC_ENTRIES 16    /* entries per component (an optic group's links) */
#define LOC_TICK_US 100000
#define LOC_HEARTBEAT_S 5 /* GET /api/v1/whoami: the controller's list of probers sees it alive */
#define MAX_PLANE 64
/* results, and verdicts, in one evidence post (the API's bound) */
#define LOC_POST_MAX 4096
/* the size a post aims under: the controller's default --max-body is 64 KiB (a unit test
 * builds it smaller) */
#ifndef LOC_POST_BYTES
#define LOC_POST_BYTES 60000
#endif
#define LOC_POST_TIMEOUT_MS 5000
/* a failed denylist request is tried again after this, doubling up to the second */
#define LOC_RETRY_MS 500
#define LOC_RETRY_MAX_MS 10000
/* the state file: its form's version, and its bound (a full one, 1,024 optic groups of 16
 * entries, takes about 1.5 MiB) */
#define LOC_STATE_VERSION 1
#define LOC_STATE_MAX (4u << 20)

/* Every verdict travels in one post: the controller takes the set whole (a verdict missing from
 * the next post is over), so it cannot be split; there are never more of them than actions. */
_Static_assert(LOC_ACTIONS <= LOC_POST_MAX, "the verdicts fit one post");

typedef struct lwin {
    uint64_t window; /* UINT64_MAX: free */
    uint32_t nreports;
    uint8_t *reported;               /* per host */
    uint32_t plane_hosts[MAX_PLANE]; /* nodes that reported a port of each plane */
} lwin;

/* A denylist entry of an action, one per element (probe_localize.h): on its way, at the
 * controller, or given up. A request that failed for want of an answer (the controller away,
 * 5xx, a timeout) is tried again after a backoff; before each add the controller's list is
 * read, so an entry that is there already (a POST whose answer was lost, a localizer restarted)
 * is found again rather than made twice. */
enum {
    ENT_WANT,     /* to be added, at next_try */
    ENT_LOOKUP,   /* waiting for the controller's list */
    ENT_POSTING,  /* POST in flight */
    ENT_HELD,     /* at the controller: id (to be deleted at next_try when lifting) */
    ENT_REFUSED,  /* the controller will not take it (409: the blast radius; 4xx) */
    ENT_DELETING, /* DELETE in flight */
    ENT_GONE,     /* lifted, or never added */
};

typedef struct action action;

/* What an entry's request's callback needs: where the entry is. */
typedef struct req_ctx {
    probe_localize *loc;
    action *act;
    unsigned slot;
} req_ctx;

typedef struct ent {
    int64_t id; /* the controller's, 0: none */
    uint8_t st;
    unsigned tries;      /* failed requests in a row */
    uint32_t backoff_ms; /* the next wait after a failure */
    uint64_t next_try;   /* monotonic ns */
    probe_ctl_req *req;  /* in flight, or NULL */
    req_ctx ctx;         /* its callback's */
} ent;

typedef struct elem {
    char element[96];
    const char *scope;
} elem;

enum { ACT_FREE = 0, ACT_ADDING, ACT_IN_FORCE, ACT_REFUSED, ACT_LIFTING };

struct action {
    int state;
    probe_comp comp;
    probe_verdict v;
    elem els[LOC_ENTRIES];
    ent ents[LOC_ENTRIES];
    unsigned nels;
    bool seen;              /* in the last evaluation's verdicts */
    uint64_t clean_since;   /* ns, 0: not clean */
    uint64_t lifted_at;     /* ns, 0: never */
    uint64_t lifted_window; /* the window evaluated when it was lifted */
    unsigned flaps;
    uint64_t hold_ns;
    /* loaded from the state file or adopted from the controller's list: its hold's clock waits
     * until the localizer has evaluated as many windows as its longest horizon, so that a
     * fault it confirmed before its restart is confirmed again first */
    bool restored;
};

struct probe_localize {
    probe_localize_cfg cfg;
    probe_infer *inf;
    uint32_t R, nhosts;
    uint32_t nt0, nt1, nports; /* the plan's grid */
    unsigned planes;
    uint64_t last_eval; /* every window up to this one is evaluated */
    lwin win[LOC_PENDING];
    action act[LOC_ACTIONS];
    probe_verdict *vbuf;
    struct event *tick;
    uint64_t evaluated, reports, posts, deletes, failures;
    uint64_t refused[PROBE_REFUSALS];
    uint64_t probes_sent[MAX_PLANE], probes_lost[MAX_PLANE];
    double infer_sum_s, infer_last_s, infer_max_s; /* probe_infer_eval's time, monotonic */
    probe_ctl *ctl; /* the controllers (NULL: verdicts are only logged) */
    struct event *beat;
    probe_ctl_req *beat_req; /* the heartbeat in flight, or NULL */
    bool beat_failing;       /* said once, until the controller answers again */
    uint64_t beat_failures;
    char me[64];             /* the token's name, as whoami says: the author of our entries */
    probe_ctl_req *list_req; /* GET /api/v1/denylist in flight, or NULL */
    probe_post *post;        /* the evidence */
    uint64_t results_posted, results_dropped;
    uint64_t regain;       /* windows to evaluate before a restored action may count clean */
    bool adopt_pending;    /* the entries it owns at the controller not yet read (whoami first) */
    char *saved;           /* the state last written, without its volatile fields */
    bool save_failing;     /* said once until a write works again */
    uint64_t mask;         /* the shard's planes */
    uint32_t expect_hosts; /* hosts with a port of the shard's planes: a window is complete
                            * when each reported */
    bool leading;          /* not elected, or elected and leading */
};

static void adopt_owned(probe_localize *loc, json_object *entries);
static void state_sync(probe_localize *loc);

static uint64_t loc_now(const probe_localize *loc)
{
    return loc->cfg.clock ? loc->cfg.clock() : probe_node_clock();
}

static bool in_shard(const probe_localize *loc, unsigned plane)
{
    return plane < 64 && (loc->mask >> plane & 1);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static lwin *win_get(probe_localize *loc, uint64_t window, bool open)
{
    lwin *w = &loc->win[window % LOC_PENDING];
    if (w->window == window) {
        return w;
    }
    if (!open || (w->window != UINT64_MAX && w->window > loc->last_eval)) {
        return NULL; /* its slot still holds a window not yet evaluated */
    }
    w->window = window;
    w->nreports = 0;
    memset(w->reported, 0, loc->nhosts);
    memset(w->plane_hosts, 0, sizeof(w->plane_hosts));
    return w;
}

static int jint(json_object *o, const char *key, int64_t *v)
{
    json_object *m;
    if (!json_object_object_get_ex(o, key, &m) || !json_object_is_type(m, json_type_int)) {
        return -EINVAL;
    }
    *v = json_object_get_int64(m);
    return 0;
}

static int report_take(probe_localize *loc, json_object *r, const char *sender, char *err,
                       size_t errlen)
{
    const fab_topo *topo = loc->cfg.topo;
    json_object *jh, *ports;
    int64_t window, epoch;
    if (!json_object_is_type(r, json_type_object) || !json_object_object_get_ex(r, "host", &jh) ||
        !json_object_is_type(jh, json_type_string) || jint(r, "window", &window) != 0 ||
        jint(r, "epoch", &epoch) != 0 || !json_object_object_get_ex(r, "ports", &ports) ||
        !json_object_is_type(ports, json_type_array) || window < 0) {
        snprintf(err, errlen, "not a probe report: host, window, epoch and ports are required");
        return -EINVAL;
    }
    uint32_t host = fab_host_find(topo, json_object_get_string(jh));
    if (host == FAB_NONE) {
        snprintf(err, errlen, "no host '%s' in the fabric", json_object_get_string(jh));
        return -EINVAL;
    }
    if (sender && strcmp(sender, json_object_get_string(jh)) != 0) {
        snprintf(err, errlen, "token of %s may not report for %s", sender,
                 json_object_get_string(jh));
        return -EPERM;
    }
    if ((uint64_t)epoch != loc->cfg.epoch) {
        snprintf(err, errlen, "a report of epoch %" PRId64 ": this plan is epoch %u", epoch,
                 loc->cfg.epoch);
        return -EINVAL;
    }
    /* everything checked before anything is fed: a bad report changes nothing */
    size_t n = json_object_array_length(ports);
    lwin *w = NULL;
    uint64_t planes = 0; /* the planes of the report's ports */
    uint64_t sent_by[MAX_PLANE] = {0}, lost_by[MAX_PLANE] = {0};
    for (int pass = 0; pass < 2; pass++) {
        /* the report's form first (pass 0), then whether its window is one being collected */
        if (pass == 1) {
            if ((uint64_t)window <= loc->last_eval) {
                snprintf(err, errlen, "window %" PRId64 " is evaluated already", window);
                return -ESTALE;
            }
            uint64_t now_w = loc_now(loc) / loc->cfg.window_ns;
            w = (uint64_t)window <= now_w ? win_get(loc, (uint64_t)window, true) : NULL;
            if (!w) {
                snprintf(err, errlen, "window %" PRId64 " is not one this localizer is collecting",
                         window);
                return -EINVAL;
            }
            if (w->reported[host]) {
                /* the first is kept: its counts are fed already, and a second would count them
                 * twice; with tokens only the host's own node sends either */
                snprintf(err, errlen,
                         "%s reported window %" PRId64 " already; its first report is kept",
                         json_object_get_string(jh), window);
                return -EEXIST;
            }
        }
        for (size_t i = 0; i < n; i++) {
            json_object *p = json_object_array_get_idx(ports, i), *def;
            int64_t plane, t0, port, sent;
            if (jint(p, "plane", &plane) || jint(p, "t0", &t0) || jint(p, "port", &port) ||
                jint(p, "sent", &sent) || !json_object_object_get_ex(p, "deficits", &def) ||
                !json_object_is_type(def, json_type_array) || plane < 0 || t0 < 0 || port < 0 ||
                sent < 0 || sent > loc->R || plane >= MAX_PLANE || t0 > UINT16_MAX ||
                port > UINT16_MAX ||
                probe_wire_host(topo, (unsigned)plane, (unsigned)t0, (unsigned)port) != host) {
                snprintf(err, errlen,
                         "port %zu: not a port of %s (plane, t0, port, sent, deficits)", i,
                         json_object_get_string(jh));
                return -EINVAL;
            }
            if (!in_shard(loc, (unsigned)plane)) {
                char mine[128];
                probe_shard_str(loc->mask, mine, sizeof(mine));
                snprintf(err, errlen,
                         "port %zu is of plane %" PRId64 ": this localizer takes planes %s only "
                         "(send each plane's ports to its own shard)",
                         i, plane, mine);
                return -EXDEV;
            }
            if (pass == 1) {
                probe_infer_add_sent(loc->inf, (uint64_t)window, (unsigned)plane, (unsigned)t0,
                                     (unsigned)port, (uint32_t)sent, loc->R);
                /* lost: what the node found missing, of which it lists the deficits (at most
                 * --max-deficits); a report without the count has its deficits only */
                int64_t missing = 0;
                size_t nd = json_object_array_length(def);
                if (jint(p, "missing", &missing) != 0 || missing < (int64_t)nd ||
                    missing > UINT32_MAX) {
                    missing = (int64_t)nd;
                }
                planes |= 1ull << plane;
                sent_by[plane] += (uint64_t)sent;
                lost_by[plane] += (uint64_t)missing;
            }
            for (size_t k = 0; k < json_object_array_length(def); k++) {
                json_object *d = json_object_array_get_idx(def, k);
                probe_spec s = {
                    .plane = (uint8_t)plane, .dst_t0 = (uint16_t)t0, .dst_port = (uint16_t)port};
                int kind = -1;
                bool arr =
                    json_object_is_type(d, json_type_array) && json_object_array_length(d) == 5;
                json_object *k0 = arr ? json_object_array_get_idx(d, 0) : NULL;
                const char *kn =
                    json_object_is_type(k0, json_type_string) ? json_object_get_string(k0) : NULL;
                for (int c = 0; c < PROBE_KINDS && kn; c++) {
                    kind = strcmp(kn, probe_kind_names[c]) == 0 ? c : kind;
                }
                int64_t v[4];
                for (int c = 0; c < 4; c++) {
                    json_object *e = arr ? json_object_array_get_idx(d, (size_t)c + 1) : NULL;
                    v[c] = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
                }
                if (!arr || kind < 0 || v[0] < 0 || v[0] >= loc->nt0 || v[1] < 0 ||
                    v[1] >= loc->nports || v[2] < 0 || v[2] >= loc->nt1 || v[3] < 0 ||
                    v[3] >= loc->R) {
                    snprintf(err, errlen, "port %zu, deficit %zu: want [kind, t0, port, t1, index]",
                             i, k);
                    return -EINVAL;
                }
                s.kind = (uint8_t)kind;
                s.src_t0 = (uint16_t)v[0];
                s.src_port = (uint16_t)v[1];
                s.t1 = (uint16_t)v[2];
                s.index = (uint32_t)v[3];
                if (kind == PROBE_T0_BOUNCE || kind == PROBE_T1_BOUNCE) {
                    s.src_t0 = s.dst_t0;
                    s.src_port = s.dst_port;
                }
                probe_link links[6];
                unsigned nl = probe_spec_links(&s, links);
                if (pass == 1 && probe_infer_add(loc->inf, (uint64_t)window, links, nl, 1) != 0) {
                    loc->failures++; /* out of the grid: the plan's own checks missed it */
                }
            }
        }
    }
    w->reported[host] = 1;
    w->nreports++;
    loc->reports++;
    for (unsigned p = 0; p < MAX_PLANE; p++) {
        if (planes >> p & 1) {
            w->plane_hosts[p]++;
            loc->probes_sent[p] += sent_by[p];
            loc->probes_lost[p] += lost_by[p];
        }
    }
    return 0;
}

int probe_localize_report(probe_localize *loc, json_object *r, const char *sender, char *err,
                          size_t errlen)
{
    int rv = report_take(loc, r, sender, err, errlen);
    if (rv != 0) {
        probe_localize_refused(loc, rv == -EPERM    ? PROBE_REFUSED_FORBIDDEN
                                    : rv == -ESTALE ? PROBE_REFUSED_LATE
                                    : rv == -EEXIST ? PROBE_REFUSED_DUPLICATE
                                    : rv == -EXDEV  ? PROBE_REFUSED_MISDIRECTED
                                                    : PROBE_REFUSED_INVALID);
    }
    /* a duplicate is a conflict with the window's state, as a late report is (409) */
    return rv == -EEXIST ? -ESTALE : rv;
}

void probe_localize_refused(probe_localize *loc, probe_refusal why)
{
    if ((unsigned)why < PROBE_REFUSALS) {
        loc->refused[why]++;
    }
}

/* --- verdicts to denylist entries ---------------------------------------------------------- */

static void switch_name(const fab_topo *topo, unsigned plane, fab_tier tier, unsigned idx,
                        char *dest, size_t len)
{
    fab_switch sw;
    uint32_t id = fab_switch_at(topo, plane, tier, idx);
    if (id == FAB_NONE || fab_switch_get(topo, id, &sw) != 0) {
        snprintf(dest, len, "?");
        return;
    }
    snprintf(dest, len, "%s", sw.name);
}

/* The denylist elements that take component |c| out of use. */
static unsigned comp_elements(const probe_localize *loc, const probe_comp *c, elem *out)
{
    const fab_topo *topo = loc->cfg.topo;
    char a[48], b[48];
    unsigned n = 0;
    switch (c->type) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC: {
        uint32_t h = probe_wire_host(topo, c->plane, c->t0, c->other);
        if (h != FAB_NONE) {
            snprintf(out[n].element, sizeof(out[n].element), "%s:%u", fab_host_name(topo, h),
                     (unsigned)c->plane);
            out[n++].scope = c->type == PROBE_COMP_NIC_T0 ? "up" : "down";
        }
        break;
    }
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0:
        switch_name(topo, c->plane, FAB_TIER_T0, c->t0, a, sizeof(a));
        switch_name(topo, c->plane, FAB_TIER_T1, c->other, b, sizeof(b));
        snprintf(out[n].element, sizeof(out[n].element), "%s~%s", a, b);
        out[n++].scope = c->type == PROBE_COMP_T0_T1 ? "up" : "down";
        break;
    case PROBE_COMP_T0:
        switch_name(topo, c->plane, FAB_TIER_T0, c->t0, out[n].element, sizeof(out[n].element));
        out[n++].scope = "both";
        break;
    case PROBE_COMP_T1:
        switch_name(topo, c->plane, FAB_TIER_T1, c->other, out[n].element, sizeof(out[n].element));
        out[n++].scope = "both";
        break;
    case PROBE_COMP_OPTIC: {
        unsigned g = loc->cfg.infer.optic_group;
        switch_name(topo, c->plane, FAB_TIER_T0, c->t0, a, sizeof(a));
        for (unsigned j = c->other * g; j < (c->other + 1u) * g && n < LOC_ENTRIES; j++) {
            switch_name(topo, c->plane, FAB_TIER_T1, j, b, sizeof(b));
            snprintf(out[n].element, sizeof(out[n].element), "%s~%s", a, b);
            out[n++].scope = "both";
        }
        break;
    }
    default:
        break;
    }
    return n;
}

static const char *comp_kind(const probe_comp *c)
{
    switch (c->type) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC:
        return "host_port";
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0:
        return "link";
    case PROBE_COMP_OPTIC:
        return "optic";
    default:
        return "switch";
    }
}

/* Whether the action's component probes clean: no verdict in the last evaluation, or a healed
 * one. */
static bool act_clean(const action *a)
{
    return !a->seen || a->v.healed;
}

/* The verdict's state as the controller's health API names it. */
static const char *act_state(const probe_localize *loc, const action *a)
{
    if (a->state == ACT_LIFTING) {
        return "lifting";
    }
    if (!loc->cfg.controller) {
        return act_clean(a) ? "healed" : "logged";
    }
    if (a->state == ACT_REFUSED) {
        return "refused";
    }
    if (act_clean(a)) {
        return "healed"; /* its entries stand until the hold is over */
    }
    return a->state == ACT_ADDING ? "adding" : "denied";
}

/* A request of entry |e| that got no answer worth keeping: tried again after the backoff. */
static void ent_retry(probe_localize *loc, action *a, ent *e, int st, const char *what,
                      const char *why)
{
    char name[64];
    probe_comp_name(&a->comp, name, sizeof(name));
    loc->failures++;
    e->st = (uint8_t)st;
    e->next_try = mono_ns() + (uint64_t)e->backoff_ms * 1000000ull;
    util_log(e->tries ? UTIL_LOG_DEBUG : UTIL_LOG_WARNING,
             "%s for %s: %s; tried again in %.1f s and on (said once until it works)", what, name,
             why, e->backoff_ms / 1000.0);
    e->tries++;
    e->backoff_ms = e->backoff_ms * 2 < LOC_RETRY_MAX_MS ? e->backoff_ms * 2 : LOC_RETRY_MAX_MS;
}

static void ent_ok(ent *e)
{
    e->tries = 0;
    e->backoff_ms = LOC_RETRY_MS;
    e->next_try = 0;
}

static void act_settle(probe_localize *loc, action *a);

/* A request's failure in words: the transport's, or the status and the start of the body. */
static void res_why(const util_http_result *res, char *dest, size_t len)
{
    if (res->rv) {
        snprintf(dest, len, "%s", res->err);
    } else {
        snprintf(dest, len, "HTTP %d %.160s", res->status, res->body ? res->body : "");
        dest[strcspn(dest, "\n")] = '\0';
    }
}

/* Worth trying again: no answer, a server's error, or one that says to come back. */
static bool res_transient(const util_http_result *res)
{
    return res->rv != 0 || res->status / 100 == 5 || res->status == 408 || res->status == 429;
}

static void on_added(void *user, util_http_result *res)
{
    req_ctx *q = user;
    probe_localize *loc = q->loc;
    action *a = q->act;
    ent *e = &a->ents[q->slot];
    char name[64], why[256];
    probe_comp_name(&a->comp, name, sizeof(name));
    e->req = NULL;
    char perr[128];
    json_object *id,
        *body = res->rv == 0 && res->body
                    ? util_json_parse("answer", res->body, res->len, perr, sizeof(perr))
                    : NULL;
    if (res->rv == 0 && res->status == 201 && body && json_object_object_get_ex(body, "id", &id) &&
        json_object_get_int64(id) > 0) {
        e->id = json_object_get_int64(id);
        e->st = ENT_HELD;
        util_log(UTIL_LOG_NOTICE, "denied %s: entry %" PRId64 " (%s %s)%s", name, e->id,
                 a->els[q->slot].element, a->els[q->slot].scope,
                 e->tries ? " after the controller's failures" : "");
        ent_ok(e);
    } else if (res_transient(res) || (res->rv == 0 && res->status == 201)) {
        /* it may have been committed all the same: the list read before the next try tells
         * (and, when the action is lifting by then, whether there is an entry to delete) */
        res_why(res, why, sizeof(why));
        ent_retry(loc, a, e, ENT_WANT, "adding the entry", why);
    } else {
        /* 409: the blast radius, an operator decides; another 4xx will not change by asking
         * again */
        loc->failures++;
        res_why(res, why, sizeof(why));
        util_log(UTIL_LOG_WARNING, "the controller did not take the entry for %s: %s", name, why);
        e->st = ENT_REFUSED;
    }
    json_object_put(body);
    act_settle(loc, a);
    state_sync(loc);
}

static void on_deleted(void *user, util_http_result *res)
{
    req_ctx *q = user;
    probe_localize *loc = q->loc;
    action *a = q->act;
    ent *e = &a->ents[q->slot];
    char why[256];
    e->req = NULL;
    if (res->rv == 0 && (res->status / 100 == 2 || res->status == 404)) {
        e->st = ENT_GONE;
        e->id = 0;
        ent_ok(e);
    } else if (res_transient(res)) {
        res_why(res, why, sizeof(why));
        ent_retry(loc, a, e, ENT_HELD, "lifting the entry", why);
    } else {
        /* refused for good (403: our token may not): the entry stays for an operator */
        loc->failures++;
        res_why(res, why, sizeof(why));
        util_log(UTIL_LOG_WARNING, "lifting entry %" PRId64 ": %s; left to an operator", e->id,
                 why);
        e->st = ENT_GONE;
    }
    act_settle(loc, a);
    state_sync(loc);
}

/* Starts entry |slot|'s request; on failure to start it counts as one without an answer. */
static void ent_request(probe_localize *loc, action *a, unsigned slot, const char *method,
                        const char *path, const char *body, util_http_cb cb)
{
    char err[256];
    ent *e = &a->ents[slot];
    e->ctx = (req_ctx){.loc = loc, .act = a, .slot = slot};
    if (probe_ctl_start(loc->ctl, method, path, body, 0, cb, &e->ctx, &e->req, err, sizeof(err)) !=
        0) {
        e->req = NULL;
        ent_retry(loc, a, e, cb == on_added ? ENT_WANT : ENT_HELD, method, err);
        return;
    }
    e->st = cb == on_added ? ENT_POSTING : ENT_DELETING;
}

static void ent_post(probe_localize *loc, action *a, unsigned i)
{
    char name[64], reason[256];
    probe_comp_name(&a->comp, name, sizeof(name));
    snprintf(reason, sizeof(reason),
             "prober: %s loses %.3g %% (%" PRIu64 " of %" PRIu64 " probes over %.3g s, LLR %.0f)",
             name, a->v.loss * 100, a->v.lost, a->v.sent,
             (double)a->v.horizon * (double)loc->cfg.window_ns / 1e9, a->v.llr);
    json_object *b = json_object_new_object();
    json_object_object_add(b, "element", json_object_new_string(a->els[i].element));
    json_object_object_add(b, "scope", json_object_new_string(a->els[i].scope));
    json_object_object_add(b, "reason", json_object_new_string(reason));
    ent_request(loc, a, i, "POST", "/api/v1/denylist", json_object_to_json_string(b), on_added);
    json_object_put(b);
    loc->posts++;
}

/* Whether entry |id| is some action's already. */
static bool id_taken(const probe_localize *loc, int64_t id)
{
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        const action *a = &loc->act[i];
        for (unsigned k = 0; a->state != ACT_FREE && k < a->nels; k++) {
            if (a->ents[k].id == id) {
                return true;
            }
        }
    }
    return false;
}

/* The controller's entry for element |el| made by this localizer's token: a prober's, of the
 * same element and scope, no maintenance window, its author our token's name (once whoami
 * told it). Returns its id or 0. */
static int64_t list_match(const probe_localize *loc, json_object *entries, const elem *el)
{
    for (size_t i = 0; i < json_object_array_length(entries); i++) {
        json_object *e = json_object_array_get_idx(entries, i), *m;
        const char *f[4] = {"element", "scope", "source", "author"}, *v[4];
        for (int k = 0; k < 4; k++) {
            v[k] =
                json_object_object_get_ex(e, f[k], &m) && json_object_is_type(m, json_type_string)
                    ? json_object_get_string(m)
                    : "";
        }
        int64_t id = json_object_object_get_ex(e, "id", &m) ? json_object_get_int64(m) : 0;
        if (id > 0 && strcmp(v[0], el->element) == 0 && strcmp(v[1], el->scope) == 0 &&
            strcmp(v[2], "prober") == 0 && (!loc->me[0] || strcmp(v[3], loc->me) == 0) &&
            !json_object_object_get_ex(e, "window", &m) && !id_taken(loc, id)) {
            return id;
        }
    }
    return 0;
}

/* The controller's list is in: each entry waiting for it is found there, or added now (none
 * when its action is lifting). A list that did not come puts them back to wait. */
static void on_listed(void *user, util_http_result *res)
{
    probe_localize *loc = user;
    char why[256], perr[128];
    json_object *body = NULL, *entries = NULL;
    bool counted = false;
    loc->list_req = NULL;
    if (res->rv == 0 && res->status == 200 && res->body) {
        body = util_json_parse("the denylist", res->body, res->len, perr, sizeof(perr));
    }
    if (!body || !json_object_object_get_ex(body, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array)) {
        entries = NULL;
        res_why(res, why, sizeof(why));
        if (res->rv == 0 && res->status == 200) {
            snprintf(why, sizeof(why), "not a denylist: %s", perr);
        }
    }
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        action *a = &loc->act[i];
        for (unsigned k = 0; a->state != ACT_FREE && k < a->nels; k++) {
            ent *e = &a->ents[k];
            if (e->st != ENT_LOOKUP) {
                continue;
            }
            if (!entries) {
                ent_retry(loc, a, e, ENT_WANT, "reading the denylist", why);
                counted = true;
                continue;
            }
            int64_t id = list_match(loc, entries, &a->els[k]);
            if (id) {
                char name[64];
                probe_comp_name(&a->comp, name, sizeof(name));
                util_log(UTIL_LOG_NOTICE, "denied %s: entry %" PRId64 " (%s %s), found again", name,
                         id, a->els[k].element, a->els[k].scope);
                e->id = id;
                e->st = ENT_HELD;
                ent_ok(e);
            } else if (a->state == ACT_LIFTING) {
                e->st = ENT_GONE;
            } else {
                ent_post(loc, a, k);
            }
        }
        if (a->state != ACT_FREE) {
            act_settle(loc, a);
        }
    }
    if (entries && loc->adopt_pending && loc->me[0]) {
        loc->adopt_pending = false;
        adopt_owned(loc, entries);
    } else if (!entries && !counted) {
        /* the read for the entries it owns: tried again at the next heartbeat */
        loc->failures++;
        util_log(UTIL_LOG_INFO, "reading the denylist: %s; tried again in %d s", why,
                 LOC_HEARTBEAT_S);
    }
    json_object_put(body);
    state_sync(loc);
}

static void list_start(probe_localize *loc)
{
    char err[256];
    if (loc->list_req) {
        return;
    }
    if (probe_ctl_start(loc->ctl, NULL, "/api/v1/denylist", NULL, 0, on_listed, loc, &loc->list_req,
                        err, sizeof(err)) != 0) {
        loc->list_req = NULL;
        util_http_result res = {.rv = -EIO, .err = err};
        on_listed(loc, &res);
    }
}

/* The action's state from its entries' (adding while one is on its way; lifting until none is
 * left at the controller), and the requests now due: an add waits for the controller's list
 * (never while the component probes clean: a healed verdict needs no entry), a lift deletes. */
static void act_settle(probe_localize *loc, action *a)
{
    uint64_t now = mono_ns();
    bool want_list = false, busy = false, adding = false, refused = false;
    char path[64];
    if (a->state == ACT_FREE || !loc->cfg.controller) {
        return;
    }
    for (unsigned k = 0; k < a->nels; k++) {
        ent *e = &a->ents[k];
        if (a->state == ACT_LIFTING) {
            if (e->st == ENT_WANT) {
                /* never taken, as far as we know; a POST that timed out may have been committed
                 * all the same, which the list tells */
                if (e->tries && now >= e->next_try) {
                    e->st = ENT_LOOKUP;
                    want_list = true;
                } else if (!e->tries) {
                    e->st = ENT_GONE;
                }
            } else if (e->st == ENT_HELD && now >= e->next_try) {
                snprintf(path, sizeof(path), "/api/v1/denylist/%" PRId64, e->id);
                ent_request(loc, a, k, "DELETE", path, NULL, on_deleted);
                loc->deletes++;
            }
            busy |= e->st != ENT_GONE && e->st != ENT_REFUSED;
            continue;
        }
        if (e->st == ENT_WANT && now >= e->next_try && !act_clean(a)) {
            e->st = ENT_LOOKUP;
            want_list = true;
        }
        want_list |= e->st == ENT_LOOKUP && !loc->list_req;
        adding |= e->st == ENT_WANT || e->st == ENT_LOOKUP || e->st == ENT_POSTING;
        refused |= e->st == ENT_REFUSED;
    }
    if (a->state == ACT_LIFTING) {
        if (!busy && !want_list) {
            char name[64];
            probe_comp_name(&a->comp, name, sizeof(name));
            util_log(UTIL_LOG_NOTICE, "lifted %s after %.0f s of clean probing", name,
                     (double)a->hold_ns / 1e9);
            a->state = ACT_FREE;
        }
    } else {
        a->state = adding ? ACT_ADDING : refused ? ACT_REFUSED : ACT_IN_FORCE;
    }
    if (want_list) {
        list_start(loc);
    }
}

static void deny(probe_localize *loc, action *a, uint64_t now)
{
    char name[64];
    probe_comp_name(&a->comp, name, sizeof(name));
    /* dampening: failing again within the longest hold of its last lifting doubles the hold */
    bool flap = a->lifted_at && now - a->lifted_at < loc->cfg.hold_max_ns;
    a->flaps = flap ? a->flaps + 1 : 0;
    a->hold_ns = loc->cfg.hold_ns << (a->flaps < 16 ? a->flaps : 16);
    a->hold_ns = a->hold_ns < loc->cfg.hold_max_ns ? a->hold_ns : loc->cfg.hold_max_ns;
    util_log(UTIL_LOG_NOTICE,
             "verdict: %s loses %.3g %% (%" PRIu64 " of %" PRIu64 " probes over %.3g s, LLR %.0f) "
             "(hold %.0f s)",
             name, a->v.loss * 100, a->v.lost, a->v.sent,
             (double)a->v.horizon * (double)loc->cfg.window_ns / 1e9, a->v.llr,
             (double)a->hold_ns / 1e9);
    a->nels = comp_elements(loc, &a->comp, a->els);
    for (unsigned i = 0; i < a->nels; i++) {
        a->ents[i] = (ent){.st = ENT_WANT, .backoff_ms = LOC_RETRY_MS};
    }
    a->clean_since = 0;
    a->state = loc->cfg.controller ? ACT_ADDING : ACT_IN_FORCE;
    act_settle(loc, a);
}

static void lift(probe_localize *loc, action *a, uint64_t now)
{
    a->lifted_at = now;
    a->lifted_window = loc->last_eval;
    if (!loc->cfg.controller) {
        a->state = ACT_FREE;
        return;
    }
    a->state = ACT_LIFTING;
    for (unsigned k = 0; k < a->nels; k++) {
        if (a->ents[k].st == ENT_HELD) {
            a->ents[k].next_try = 0; /* at once, whatever a failure before said */
        }
    }
    act_settle(loc, a);
}

/* The action of component |c|, or a new one when |make|. A lifted component's action is kept
 * for its dampening memory (hold_max after the lifting), then its slot is free again. */
static action *action_of(probe_localize *loc, const probe_comp *c, bool make, uint64_t now)
{
    action *spare = NULL;
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        action *a = &loc->act[i];
        bool remembered = a->lifted_at && now - a->lifted_at < loc->cfg.hold_max_ns;
        if ((a->state != ACT_FREE || remembered) && memcmp(&a->comp, c, sizeof(*c)) == 0) {
            return a;
        }
        if (!spare && a->state == ACT_FREE && !remembered) {
            spare = a;
        }
    }
    if (!make) {
        return NULL;
    }
    if (!spare) {
        char name[64];
        probe_comp_name(c, name, sizeof(name));
        util_log(UTIL_LOG_WARNING, "verdict on %s: %u components are denied already, no room", name,
                 LOC_ACTIONS);
        loc->failures++;
        return NULL;
    }
    memset(spare, 0, sizeof(*spare));
    spare->comp = *c;
    return spare;
}

/* --- the evidence: POST /api/v1/probes after each window ----------------------------------- */

/* A link direction packed dir << 30 | plane << 24 | t0 << 12 | other (sorts by class). */
static uint32_t dir_pack(unsigned dir, unsigned plane, unsigned t0, unsigned other)
{
    return (uint32_t)dir << 30 | (uint32_t)plane << 24 | (uint32_t)t0 << 12 | (uint32_t)other;
}

typedef struct dirset {
    uint32_t *d;
    size_t n, cap;
} dirset;

static void dirset_add(dirset *s, uint32_t d)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->d = util_xrealloc(s->d, s->cap * sizeof(*s->d));
    }
    s->d[s->n++] = d;
}

/* Every link direction of component |c|: a link's own, a switch's or an optic group's each. */
static void comp_dirs(const probe_localize *loc, const probe_comp *c, dirset *s)
{
    unsigned p = c->plane, g = loc->cfg.infer.optic_group;
    switch (c->type) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC:
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0:
        dirset_add(s, dir_pack(c->type, p, c->t0, c->other));
        break;
    case PROBE_COMP_T0:
        for (unsigned k = 0; k < loc->nports; k++) {
            dirset_add(s, dir_pack(PROBE_NIC_T0, p, c->t0, k));
            dirset_add(s, dir_pack(PROBE_T0_NIC, p, c->t0, k));
        }
        for (unsigned j = 0; j < loc->nt1; j++) {
            dirset_add(s, dir_pack(PROBE_T0_T1, p, c->t0, j));
            dirset_add(s, dir_pack(PROBE_T1_T0, p, c->t0, j));
        }
        break;
    case PROBE_COMP_T1:
        for (unsigned a = 0; a < loc->nt0; a++) {
            dirset_add(s, dir_pack(PROBE_T0_T1, p, a, c->other));
            dirset_add(s, dir_pack(PROBE_T1_T0, p, a, c->other));
        }
        break;
    case PROBE_COMP_OPTIC:
        for (unsigned j = c->other * g; j < (c->other + 1u) * g && j < loc->nt1; j++) {
            dirset_add(s, dir_pack(PROBE_T0_T1, p, c->t0, j));
            dirset_add(s, dir_pack(PROBE_T1_T0, p, c->t0, j));
        }
        break;
    default:
        break;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Direction |d| as a result's element and scope; false for a direction the fabric has no cable
 * for (a hole, a missing T0-T1 cable), which the controller would refuse. */
static bool dir_element(const probe_localize *loc, uint32_t d, char *el, size_t ellen,
                        const char **pscope)
{
    unsigned dir = d >> 30, p = d >> 24 & 63, t0 = d >> 12 & 4095, o = d & 4095;
    const fab_topo *topo = loc->cfg.topo;
    fab_element fe;
    char a[48], b[48], why[8];
    *pscope = dir == PROBE_NIC_T0 || dir == PROBE_T0_T1 ? "up" : "down";
    if (dir == PROBE_NIC_T0 || dir == PROBE_T0_NIC) {
        uint32_t h = probe_wire_host(topo, p, t0, o);
        if (h == FAB_NONE) {
            return false;
        }
        snprintf(el, ellen, "%s:%u", fab_host_name(topo, h), p);
        return true;
    }
    switch_name(topo, p, FAB_TIER_T0, t0, a, sizeof(a));
    switch_name(topo, p, FAB_TIER_T1, o, b, sizeof(b));
    snprintf(el, ellen, "%s~%s", a, b);
    return fab_element_parse(topo, el, &fe, why, sizeof(why)) == 0;
}

/* A finite number in [lo, hi] for JSON, which has no NaN. */
static double num(double x, double lo, double hi)
{
    return isfinite(x) ? (x < lo ? lo : x > hi ? hi : x) : lo;
}

static void time_str(uint64_t ns, char *dest, size_t len)
{
    time_t t = (time_t)(ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(dest, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(ns / 1000000ull % 1000));
}

/* One verdict of the post (the contract's form). */
static void verdict_json(const probe_localize *loc, const action *a, util_buf *b)
{
    char name[64], since[40];
    probe_comp_name(&a->comp, name, sizeof(name));
    time_str(a->v.since * loc->cfg.window_ns, since, sizeof(since));
    util_buf_printf(b, "{\"component\":");
    util_buf_json_str(b, name);
    util_buf_printf(b, ",\"kind\":\"%s\",\"elements\":[", comp_kind(&a->comp));
    for (unsigned k = 0; k < a->nels; k++) {
        util_buf_printf(b, "%s{\"element\":", k ? "," : "");
        util_buf_json_str(b, a->els[k].element);
        util_buf_printf(b, ",\"scope\":\"%s\"}", a->els[k].scope);
    }
    util_buf_printf(b,
                    "],\"loss\":%.6g,\"lost\":%" PRIu64 ",\"sent\":%" PRIu64
                    ",\"horizon_s\":%.6g,\"llr\":%.6g,\"since\":\"%s\",\"state\":\"%s\","
                    "\"entries\":[",
                    num(a->v.loss, 0, 1), a->v.lost < a->v.sent ? a->v.lost : a->v.sent, a->v.sent,
                    (double)a->v.horizon * (double)loc->cfg.window_ns / 1e9, num(a->v.llr, 0, 1e12),
                    since, act_state(loc, a));
    for (unsigned k = 0; k < a->nels; k++) {
        util_buf_printf(b, "%s%" PRId64, k ? "," : "", a->ents[k].id > 0 ? a->ents[k].id : 0);
    }
    util_buf_printf(b, "]}");
}

/* The head every post of window |window| begins with. */
static void post_head(const probe_localize *loc, uint64_t window, util_buf *b)
{
    util_buf_printf(b, "{\"window\":%" PRIu64 ",\"window_ms\":%" PRIu64, window,
                    loc->cfg.window_ns / (uint64_t)1000000);
}

/*
 * The evidence of evaluated |window| (its |nv| confirmed verdicts in vbuf): results only for
 * what the localizer stands by, its confirmed verdicts and the components holding entries (a
 * component selected once and not yet confirmed is often a burst, and the controller takes a
 * result as the direction's own loss); the first post holds
 * the coverage of each plane whose nodes reported, the whole set of verdicts (they cannot be
 * split: the controller takes each post's set as the whole) and the first results; results are
 * split over further posts when there are more than LOC_POST_MAX or than LOC_POST_BYTES hold,
 * since each is a count of its own that adds up wherever it travels.
 */
static void evidence(probe_localize *loc, uint64_t window, int nv)
{
    if (!loc->post) {
        return;
    }
    dirset ds = {0};
    for (int i = 0; i < nv; i++) {
        comp_dirs(loc, &loc->vbuf[i].comp, &ds);
    }
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        if (loc->act[i].state != ACT_FREE) {
            comp_dirs(loc, &loc->act[i].comp, &ds);
        }
    }
    if (ds.n) {
        qsort(ds.d, ds.n, sizeof(*ds.d), cmp_u32);
    }
    char *bodies[64];
    size_t nb = 0;
    util_buf b = {0};
    post_head(loc, window, &b);
    util_buf_printf(&b, ",\"coverage\":[");
    lwin *w = win_get(loc, window, false);
    for (unsigned p = 0, first = 1; w && p < loc->planes && p < MAX_PLANE; p++) {
        if (w->plane_hosts[p]) {
            util_buf_printf(&b, "%s{\"plane\":%u,\"nic\":%.0f,\"uplink\":%.0f,\"hosts\":%u}",
                            first ? "" : ",", p, loc->cfg.infer.n_nic, loc->cfg.infer.n_up,
                            w->plane_hosts[p]);
            first = 0;
        }
    }
    util_buf_printf(&b, "],\"verdicts\":[");
    for (unsigned i = 0, k = 0; i < LOC_ACTIONS; i++) {
        const action *a = &loc->act[i];
        if (a->state != ACT_FREE && a->nels) {
            util_buf_printf(&b, "%s", k++ ? "," : "");
            verdict_json(loc, a, &b);
        }
    }
    util_buf_printf(&b, "],\"results\":[");
    size_t inpost = 0;
    uint32_t n_nic = (uint32_t)lround(loc->cfg.infer.n_nic),
             n_up = (uint32_t)lround(loc->cfg.infer.n_up);
    for (size_t i = 0; i < ds.n; i++) {
        if (i && ds.d[i] == ds.d[i - 1]) {
            continue;
        }
        char el[96];
        const char *scope;
        if (!dir_element(loc, ds.d[i], el, sizeof(el), &scope)) {
            continue;
        }
        unsigned dir = ds.d[i] >> 30;
        probe_comp c = {(uint8_t)dir, (uint8_t)(ds.d[i] >> 24 & 63),
                        (uint16_t)(ds.d[i] >> 12 & 4095), (uint16_t)(ds.d[i] & 4095)};
        uint64_t lost = 0, sent = dir <= PROBE_T0_NIC ? n_nic : n_up;
        if (probe_infer_window_lost(loc->inf, window, &c, &lost) != 0) {
            continue;
        }
        if (inpost == LOC_POST_MAX || (inpost && b.len > LOC_POST_BYTES)) {
            if (nb + 2 > sizeof(bodies) / sizeof(bodies[0])) {
                /* more than 64 posts a window (some fifty thousand directions): the rest is
                 * left out, counted; the next window's evidence comes soon enough */
                for (size_t j = i; j < ds.n; j++) {
                    loc->results_dropped += j == i || ds.d[j] != ds.d[j - 1];
                }
                break;
            }
            util_buf_printf(&b, "]}");
            bodies[nb++] = b.s;
            b = (util_buf){0};
            post_head(loc, window, &b);
            util_buf_printf(&b, ",\"results\":[");
            inpost = 0;
        }
        util_buf_printf(&b, "%s{\"element\":", inpost ? "," : "");
        util_buf_json_str(&b, el);
        util_buf_printf(&b, ",\"scope\":\"%s\",\"sent\":%" PRIu64 ",\"lost\":%" PRIu64 "}", scope,
                        sent, lost < sent ? lost : sent);
        inpost++;
        loc->results_posted++;
    }
    util_buf_printf(&b, "]}");
    bodies[nb++] = b.s;
    free(ds.d);
    probe_post_send(loc->post, bodies, nb);
}

/* --- evaluation ------------------------------------------------------------------------------ */

static void evaluate(probe_localize *loc, uint64_t window, uint64_t now)
{
    for (uint32_t h = 0; h < loc->nhosts; h++) {
        lwin *w = win_get(loc, window, true);
        if (w && w->reported[h]) {
            continue;
        }
        /* no report: the host sent nothing (a stalled host is no network loss) */
        for (unsigned p = 0; p < fab_topo_planes(loc->cfg.topo); p++) {
            if (!in_shard(loc, p)) {
                continue;
            }
            uint32_t sw;
            unsigned swport;
            fab_switch t0;
            if (fab_host_attach(loc->cfg.topo, h, p, &sw, &swport) == 0 &&
                fab_switch_get(loc->cfg.topo, sw, &t0) == 0) {
                probe_infer_add_sent(loc->inf, window, p, t0.index, swport, 0, loc->R);
            }
        }
    }
    uint64_t t = mono_ns();
    int n = probe_infer_eval(loc->inf, window, loc->vbuf, LOC_VERDICTS);
    double took = (double)(mono_ns() - t) / 1e9;
    loc->infer_last_s = took;
    loc->infer_sum_s += took;
    loc->infer_max_s = took > loc->infer_max_s ? took : loc->infer_max_s;
    loc->last_eval = window;
    loc->evaluated++;
    if (n < 0) {
        util_log(UTIL_LOG_WARNING, "window %" PRIu64 ": %s", window, strerror(-n));
        return;
    }
    n = n < LOC_VERDICTS ? n : LOC_VERDICTS;
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        loc->act[i].seen = false;
    }
    for (int i = 0; i < n; i++) {
        const probe_verdict *v = &loc->vbuf[i];
        action *a = action_of(loc, &v->comp, !v->healed, now);
        if (!a) {
            continue;
        }
        if (a->state == ACT_FREE && a->lifted_at && window - v->horizon < a->lifted_window) {
            /* the evidence reaches back before its lifting: the same failure, not a new one
             * (a new one shows on the horizons that begin after) */
            continue;
        }
        a->seen = true;
        a->v = *v;
        if (!v->healed && a->state == ACT_FREE) {
            deny(loc, a, now);
        } else if (!v->healed) {
            a->clean_since = 0;
        }
    }
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        action *a = &loc->act[i];
        if (a->state == ACT_FREE || a->state == ACT_LIFTING || !act_clean(a) ||
            (a->restored && loc->evaluated < loc->regain)) {
            continue;
        }
        /* an entry still on its way counts too: a verdict that healed before the controller
         * took it is over all the same */
        if (!a->clean_since) {
            a->clean_since = now;
        }
        if (now - a->clean_since >= a->hold_ns) {
            lift(loc, a, now);
        }
    }
    evidence(loc, window, n);
}

void probe_localize_poll(probe_localize *loc)
{
    uint64_t now = loc_now(loc), W = loc->cfg.window_ns;
    if (!loc->leading) {
        /* a follower takes no report: the windows pass unevaluated, none of them its own */
        loc->last_eval = now / W > loc->last_eval ? now / W : loc->last_eval;
        return;
    }
    for (uint64_t w = loc->last_eval + 1; (w + 1) * W <= now; w++) {
        lwin *lw = win_get(loc, w, false);
        bool all = lw && lw->nreports == loc->expect_hosts;
        if (!all && now < (w + 1) * W + loc->cfg.deadline_ns) {
            break;
        }
        evaluate(loc, w, now);
    }
    /* the entries' retries when their backoff is over */
    for (unsigned i = 0; loc->cfg.controller && i < LOC_ACTIONS; i++) {
        if (loc->act[i].state == ACT_ADDING || loc->act[i].state == ACT_LIFTING) {
            act_settle(loc, &loc->act[i]);
        }
    }
    state_sync(loc);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    probe_localize_poll(arg);
}

/* The heartbeat's answer. A failure is said once (info) and counted apart from the denylist's
 * (the status's failures), among the controller's in the metrics. Its answer names our token,
 * the author of the entries the localizer finds again. */
static void on_beat(void *user, util_http_result *res)
{
    probe_localize *loc = user;
    bool ok = res->rv == 0 && res->status == 200;
    loc->beat_req = NULL;
    if (ok && loc->beat_failing) {
        util_log(UTIL_LOG_INFO, "heartbeat: the controller answers again");
    } else if (!ok && res->rv) {
        util_log(loc->beat_failing ? UTIL_LOG_DEBUG : UTIL_LOG_INFO,
                 "heartbeat to the controller: %s (said once until it answers)", res->err);
    } else if (!ok) {
        util_log(loc->beat_failing ? UTIL_LOG_DEBUG : UTIL_LOG_INFO,
                 "heartbeat to the controller: HTTP %d (said once until it answers)", res->status);
    }
    if (ok && res->body) {
        char perr[64];
        json_object *b = util_json_parse("whoami", res->body, res->len, perr, sizeof(perr)), *m;
        if (b && json_object_object_get_ex(b, "name", &m) &&
            json_object_is_type(m, json_type_string)) {
            snprintf(loc->me, sizeof(loc->me), "%s", json_object_get_string(m));
        }
        json_object_put(b);
    }
    if (loc->adopt_pending && loc->leading && loc->me[0]) {
        list_start(loc); /* the entries it owns, once it knows its name; again each beat */
    }
    loc->beat_failures += !ok;
    loc->beat_failing = !ok;
}

/* Every LOC_HEARTBEAT_S, one authenticated GET to the controller, started like the denylist's
 * requests (never waited for); one at a time, so a slow controller gets no pile of them. */
static void heartbeat(evutil_socket_t fd, short what, void *arg)
{
    probe_localize *loc = arg;
    char err[256];
    (void)fd;
    (void)what;
    if (loc->beat_req) {
        return;
    }
    /* the leader's list of probers is the one shown, and a follower answers whoami itself: with
     * several controllers, once whoami named our token, the heartbeat is a small GET that only
     * the leader answers (a follower sends it there) */
    const char *path =
        loc->me[0] && probe_ctl_count(loc->ctl) > 1 ? "/api/v1/agents?limit=1" : "/api/v1/whoami";
    int rv = probe_ctl_start(loc->ctl, NULL, path, NULL, LOC_HEARTBEAT_S * 1000, on_beat, loc,
                             &loc->beat_req, err, sizeof(err));
    if (rv != 0) {
        loc->beat_req = NULL;
        util_log(loc->beat_failing ? UTIL_LOG_DEBUG : UTIL_LOG_INFO, "heartbeat: %s", err);
        loc->beat_failing = true;
        loc->beat_failures++;
    }
}

/* --- the state file and the entries it owns (docs/prober.md §8.1) ---------------------------- */

static const char *const act_names[] = {"lifted", "adding", "in_force", "refused", "lifting"};

/* Whether |c| is a component of this fabric's grid with an entry to make. */
static bool comp_valid(const probe_localize *loc, const probe_comp *c)
{
    unsigned g = loc->cfg.infer.optic_group ? loc->cfg.infer.optic_group : 1;
    elem els[LOC_ENTRIES];
    bool in = false;
    if (c->plane >= loc->planes) {
        return false;
    }
    switch (c->type) {
    case PROBE_COMP_NIC_T0:
    case PROBE_COMP_T0_NIC:
        in = c->t0 < loc->nt0 && c->other < loc->nports;
        break;
    case PROBE_COMP_T0_T1:
    case PROBE_COMP_T1_T0:
        in = c->t0 < loc->nt0 && c->other < loc->nt1;
        break;
    case PROBE_COMP_T0:
        in = c->t0 < loc->nt0 && c->other == 0;
        break;
    case PROBE_COMP_T1:
        in = c->t0 == 0 && c->other < loc->nt1;
        break;
    case PROBE_COMP_OPTIC:
        in = c->t0 < loc->nt0 && c->other < loc->nt1 / g;
        break;
    default:
        break;
    }
    return in && comp_elements(loc, c, els) > 0;
}

/* The component whose entries include |element| |scope| (comp_elements' inverse). Returns 0 or
 * -EINVAL (not an element of this fabric, or no scope a verdict of ours gives it). */
static int entry_comp(const probe_localize *loc, const char *element, const char *scope,
                      probe_comp *c)
{
    const fab_topo *topo = loc->cfg.topo;
    fab_element fe;
    fab_switch sw;
    uint32_t swid;
    unsigned k, dirs = fab_dir_parse(scope), g = loc->cfg.infer.optic_group;
    char why[160];
    if (!dirs || fab_element_parse(topo, element, &fe, why, sizeof(why)) != 0) {
        return -EINVAL;
    }
    memset(c, 0, sizeof(*c));
    c->plane = (uint8_t)fe.plane;
    switch (fe.kind) {
    case FAB_EL_PORT:
        if (dirs == FAB_DIR_BOTH || fab_host_attach(topo, fe.host, fe.plane, &swid, &k) != 0 ||
            fab_switch_get(topo, swid, &sw) != 0) {
            return -EINVAL;
        }
        c->type = dirs == FAB_DIR_UP ? PROBE_COMP_NIC_T0 : PROBE_COMP_T0_NIC;
        c->t0 = (uint16_t)sw.index;
        c->other = (uint16_t)k;
        break;
    case FAB_EL_LINK:
        c->type = dirs == FAB_DIR_UP     ? PROBE_COMP_T0_T1
                  : dirs == FAB_DIR_DOWN ? PROBE_COMP_T1_T0
                                         : PROBE_COMP_OPTIC;
        c->t0 = (uint16_t)fe.t0;
        c->other = (uint16_t)(c->type == PROBE_COMP_OPTIC ? fe.t1 / (g ? g : 1) : fe.t1);
        break;
    case FAB_EL_SWITCH:
        if (dirs != FAB_DIR_BOTH) {
            return -EINVAL;
        }
        c->type = fe.tier == FAB_TIER_T0 ? PROBE_COMP_T0 : PROBE_COMP_T1;
        c->t0 = (uint16_t)(fe.tier == FAB_TIER_T0 ? fe.index : 0);
        c->other = (uint16_t)(fe.tier == FAB_TIER_T0 ? 0 : fe.index);
        break;
    default:
        return -EINVAL;
    }
    return comp_valid(loc, c) ? 0 : -EINVAL;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *m;
    return json_object_object_get_ex(o, key, &m) && json_object_is_type(m, json_type_string)
               ? json_object_get_string(m)
               : "";
}

static bool list_has(json_object *entries, int64_t id)
{
    for (size_t i = 0; i < json_object_array_length(entries); i++) {
        int64_t v;
        if (jint(json_object_array_get_idx(entries, i), "id", &v) == 0 && v == id) {
            return true;
        }
    }
    return false;
}

/*
 * The controller's list at a start, once whoami named our token: every entry of ours (source
 * prober, author our name, no maintenance window) that no action holds is adopted by the action
 * of its component, a new one in force when it has none, restored: kept while the component
 * fails again, lifted once it probed clean for the hold after the evidence is rebuilt, never
 * kept for ever. A restored entry the controller no longer has (an operator removed it) is
 * forgotten: added again only if its component fails again.
 */
static void adopt_owned(probe_localize *loc, json_object *entries)
{
    uint64_t now = loc_now(loc); /* the actions' clock: the windows' */
    char name[64];
    unsigned adopted = 0;
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        action *a = &loc->act[i];
        for (unsigned k = 0; a->state != ACT_FREE && a->restored && k < a->nels; k++) {
            ent *e = &a->ents[k];
            if (e->st == ENT_HELD && !e->req && !list_has(entries, e->id)) {
                probe_comp_name(&a->comp, name, sizeof(name));
                util_log(UTIL_LOG_NOTICE,
                         "entry %" PRId64 " (%s %s) of %s is gone from the controller: added "
                         "again only if it fails again",
                         e->id, a->els[k].element, a->els[k].scope, name);
                *e = (ent){.st = ENT_WANT, .backoff_ms = LOC_RETRY_MS};
            }
        }
    }
    for (size_t i = 0; i < json_object_array_length(entries); i++) {
        json_object *je = json_object_array_get_idx(entries, i), *m;
        const char *el = jstr(je, "element"), *scope = jstr(je, "scope");
        int64_t id;
        probe_comp c;
        if (jint(je, "id", &id) != 0 || id <= 0 || strcmp(jstr(je, "source"), "prober") != 0 ||
            strcmp(jstr(je, "author"), loc->me) != 0 ||
            json_object_object_get_ex(je, "window", &m) || id_taken(loc, id)) {
            continue;
        }
        if (entry_comp(loc, el, scope, &c) == 0 && !in_shard(loc, c.plane)) {
            continue; /* another shard's (a token shared by shards): that shard lifts it */
        }
        if (entry_comp(loc, el, scope, &c) != 0) {
            util_log(UTIL_LOG_WARNING,
                     "entry %" PRId64 " (%s %s) is ours but names no component of %s's fabric; "
                     "left to an operator",
                     id, el, scope, loc->me);
            continue;
        }
        action *a = action_of(loc, &c, true, now);
        if (!a) {
            continue;
        }
        elem els[LOC_ENTRIES];
        unsigned n = comp_elements(loc, &c, els), k = 0;
        while (k < n && !(strcmp(els[k].element, el) == 0 && strcmp(els[k].scope, scope) == 0)) {
            k++;
        }
        probe_comp_name(&c, name, sizeof(name));
        if (k == n || (a->state != ACT_FREE && a->ents[k].st == ENT_HELD)) {
            util_log(UTIL_LOG_WARNING,
                     "entry %" PRId64 " (%s %s) is ours, but %s holds %s; left to an operator", id,
                     el, scope, name, k == n ? "no such element" : "another entry for it");
            continue;
        }
        if (a->state == ACT_FREE) {
            uint64_t hold = a->hold_ns ? a->hold_ns : loc->cfg.hold_ns;
            a->comp = c;
            a->v = (probe_verdict){.comp = c, .since = loc->last_eval, .healed = true};
            a->nels = n;
            memcpy(a->els, els, sizeof(els));
            for (unsigned j = 0; j < n; j++) {
                a->ents[j] = (ent){.st = ENT_WANT, .backoff_ms = LOC_RETRY_MS};
            }
            a->hold_ns = hold;
            a->clean_since = 0;
            a->seen = false;
            a->restored = true;
            a->state = ACT_IN_FORCE;
        }
        a->ents[k] = (ent){.id = id, .st = ENT_HELD, .backoff_ms = LOC_RETRY_MS};
        util_log(UTIL_LOG_NOTICE,
                 "adopted entry %" PRId64 " (%s %s) of %s: lifted once it probes clean for %.0f s "
                 "after %" PRIu64 " windows",
                 id, el, scope, name, (double)a->hold_ns / 1e9, loc->regain);
        adopted++;
        act_settle(loc, a);
    }
    util_log(UTIL_LOG_INFO, "the controller's denylist read: %u entries of ours adopted", adopted);
}

/* The state as JSON; |full| adds the fields that change without an event of their own (the
 * verdicts' evidence, the times), which alone do not call for a write. */
static void state_build(const probe_localize *loc, bool full, util_buf *b)
{
    static const char *const est[] = {"want",    "posting", "posting", "held",
                                      "refused", "held",    "gone"};
    /* lifted_at is of the windows' clock, as every time of an action is */
    uint64_t wall = loc_now(loc);
    util_buf_printf(b, "{\"version\":%d,\"window_ms\":%" PRIu64 ",\"epoch\":%u", LOC_STATE_VERSION,
                    (uint64_t)(loc->cfg.window_ns / 1000000u), loc->cfg.epoch);
    if (full) {
        util_buf_printf(b, ",\"written_ms\":%" PRIu64, (uint64_t)(wall / 1000000u));
    }
    util_buf_printf(b, ",\"actions\":[");
    for (unsigned i = 0, first = 1; i < LOC_ACTIONS; i++) {
        const action *a = &loc->act[i];
        bool remembered = a->lifted_at && wall - a->lifted_at < loc->cfg.hold_max_ns;
        if (a->state == ACT_FREE && !remembered) {
            continue;
        }
        char name[64];
        probe_comp_name(&a->comp, name, sizeof(name));
        util_buf_printf(b, "%s\n{\"component\":", first ? "" : ",");
        first = 0;
        util_buf_json_str(b, name);
        util_buf_printf(b,
                        ",\"type\":%u,\"plane\":%u,\"t0\":%u,\"other\":%u,\"state\":\"%s\","
                        "\"restored\":%s,\"flaps\":%u,\"hold_ms\":%" PRIu64
                        ",\"lifted_window\":%" PRIu64 ",\"entries\":[",
                        a->comp.type, a->comp.plane, a->comp.t0, a->comp.other, act_names[a->state],
                        a->restored ? "true" : "false", a->flaps, (uint64_t)(a->hold_ns / 1000000u),
                        a->lifted_at ? a->lifted_window : 0);
        for (unsigned k = 0; a->state != ACT_FREE && k < a->nels; k++) {
            util_buf_printf(b, "%s{\"id\":%" PRId64 ",\"st\":\"%s\"}", k ? "," : "", a->ents[k].id,
                            est[a->ents[k].st]);
        }
        util_buf_printf(b, "]");
        if (full) {
            util_buf_printf(b,
                            ",\"lifted_ago_ms\":%" PRId64
                            ",\"verdict\":{\"loss\":%.17g,\"lost\":%" PRIu64 ",\"sent\":%" PRIu64
                            ",\"horizon\":%u,\"llr\":%.17g,\"since\":%" PRIu64 ",\"healed\":%s}",
                            a->lifted_at ? (int64_t)((wall - a->lifted_at) / 1000000ull) : -1,
                            num(a->v.loss, 0, 1), a->v.lost, a->v.sent, a->v.horizon,
                            num(a->v.llr, 0, 1e12), a->v.since, a->v.healed ? "true" : "false");
        }
        util_buf_printf(b, "}");
    }
    util_buf_printf(b, "]}\n");
}

/* Writes |len| bytes of |data| to |path| whole or not at all, synced to the disk with its
 * folder's entry: a crash leaves the old state or the new one. Returns 0 or -errno. */
static int state_write(const char *path, const char *data, size_t len)
{
    util_afile af;
    int rv = util_afile_open(&af, path);
    if (rv != 0) {
        return rv;
    }
    errno = 0;
    if (fchmod(fileno(af.f), 0600) != 0 || fwrite(data, 1, len, af.f) != len || fflush(af.f) != 0 ||
        fsync(fileno(af.f)) != 0) {
        rv = errno ? -errno : -EIO;
        util_afile_abort(&af);
        return rv;
    }
    if ((rv = util_afile_commit(&af)) != 0) {
        return rv;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

/* Writes the state when it changed; a failure is said once and tried again at the next call. */
static int state_save(probe_localize *loc, bool force)
{
    util_buf key = {0}, full = {0};
    int rv = 0;
    if (!loc->cfg.state_path) {
        return 0;
    }
    state_build(loc, false, &key);
    if (!force && loc->saved && strcmp(loc->saved, key.s) == 0) {
        goto out;
    }
    state_build(loc, true, &full);
    rv = state_write(loc->cfg.state_path, full.s, full.len);
    if (rv != 0) {
        util_log(loc->save_failing ? UTIL_LOG_DEBUG : UTIL_LOG_WARNING,
                 "state file %s: cannot write it: %s; tried again at each change (said once "
                 "until it works)",
                 loc->cfg.state_path, strerror(-rv));
        loc->save_failing = true;
        goto out;
    }
    if (loc->save_failing) {
        util_log(UTIL_LOG_NOTICE, "state file %s: written again", loc->cfg.state_path);
    }
    loc->save_failing = false;
    free(loc->saved);
    loc->saved = key.s;
    key.s = NULL;
out:
    free(key.s);
    free(full.s);
    return rv;
}

static void state_sync(probe_localize *loc)
{
    state_save(loc, false);
}

static int jnum(json_object *o, const char *key, double *v)
{
    json_object *m;
    if (!json_object_object_get_ex(o, key, &m) ||
        !(json_object_is_type(m, json_type_double) || json_object_is_type(m, json_type_int))) {
        return -EINVAL;
    }
    *v = json_object_get_double(m);
    return isfinite(*v) ? 0 : -EINVAL;
}

/* One action of the file into |a|; false with a sentence in |why| when it is not one of this
 * fabric's. |age_ns| is how long ago the file was written. */
static bool state_action(const probe_localize *loc, json_object *o, uint64_t age_ns, action *a,
                         bool *pkeep, char *why, size_t whylen)
{
    static const char *const est[] = {"want", "posting", "held", "refused", "gone"};
    static const uint8_t est_st[] = {ENT_WANT, ENT_WANT, ENT_HELD, ENT_REFUSED, ENT_GONE};
    int64_t type, plane, t0, other, flaps, hold_ms, lwin, ago, horizon, lost, sent, since;
    double loss, llr;
    json_object *ents, *v, *m;
    const char *st = jstr(o, "state");
    int state = -1;
    for (int i = 0; i < (int)(sizeof(act_names) / sizeof(act_names[0])); i++) {
        state = strcmp(st, act_names[i]) == 0 ? i : state;
    }
    if (!json_object_is_type(o, json_type_object) || jint(o, "type", &type) ||
        jint(o, "plane", &plane) || jint(o, "t0", &t0) || jint(o, "other", &other) ||
        jint(o, "flaps", &flaps) || jint(o, "hold_ms", &hold_ms) ||
        jint(o, "lifted_window", &lwin) || jint(o, "lifted_ago_ms", &ago) || state < 0 ||
        !json_object_object_get_ex(o, "entries", &ents) ||
        !json_object_is_type(ents, json_type_array) ||
        !json_object_object_get_ex(o, "verdict", &v) || jnum(v, "loss", &loss) ||
        jnum(v, "llr", &llr) || jint(v, "lost", &lost) || jint(v, "sent", &sent) ||
        jint(v, "horizon", &horizon) || jint(v, "since", &since) ||
        !json_object_object_get_ex(v, "healed", &m) || !json_object_is_type(m, json_type_boolean)) {
        snprintf(why, whylen,
                 "want type, plane, t0, other, state, flaps, hold_ms, "
                 "lifted_window, lifted_ago_ms, entries and verdict");
        return false;
    }
    if (type < 0 || type >= PROBE_COMP_TYPES || plane < 0 || plane >= MAX_PLANE || t0 < 0 ||
        t0 > UINT16_MAX || other < 0 || other > UINT16_MAX || flaps < 0 || flaps > 64 ||
        hold_ms < 0 || lwin < 0 || ago < -1 || lost < 0 || sent < 0 || horizon < 0 ||
        horizon > 64 || since < 0 || loss < 0 || loss > 1) {
        snprintf(why, whylen, "a field out of its range");
        return false;
    }
    memset(a, 0, sizeof(*a));
    a->comp = (probe_comp){(uint8_t)type, (uint8_t)plane, (uint16_t)t0, (uint16_t)other};
    if (!comp_valid(loc, &a->comp)) {
        snprintf(why, whylen, "not a component of this fabric");
        return false;
    }
    a->nels = comp_elements(loc, &a->comp, a->els);
    size_t n = json_object_array_length(ents);
    if (state != ACT_FREE && n != a->nels) {
        snprintf(why, whylen, "%zu entries, its component has %u", n, a->nels);
        return false;
    }
    for (size_t k = 0; state != ACT_FREE && k < n; k++) {
        json_object *e = json_object_array_get_idx(ents, k);
        int64_t id;
        const char *es = jstr(e, "st");
        int x = -1;
        for (int i = 0; i < 5; i++) {
            x = strcmp(es, est[i]) == 0 ? i : x;
        }
        if (jint(e, "id", &id) || id < 0 || x < 0 || (est_st[x] == ENT_HELD && id == 0)) {
            snprintf(why, whylen, "entry %zu: want an id and a state", k);
            return false;
        }
        /* one that was on its way may have been committed: the list tells before a lift */
        a->ents[k] = (ent){.id = est_st[x] == ENT_HELD ? id : 0,
                           .st = est_st[x],
                           .tries = x == 1,
                           .backoff_ms = LOC_RETRY_MS};
    }
    a->state = state;
    a->flaps = (unsigned)flaps;
    a->hold_ns = (uint64_t)hold_ms * 1000000ull;
    a->hold_ns = a->hold_ns < loc->cfg.hold_ns       ? loc->cfg.hold_ns
                 : a->hold_ns > loc->cfg.hold_max_ns ? loc->cfg.hold_max_ns
                                                     : a->hold_ns;
    a->v = (probe_verdict){.comp = a->comp,
                           .loss = loss,
                           .lost = (uint64_t)lost,
                           .sent = (uint64_t)sent,
                           .horizon = (unsigned)horizon,
                           .llr = llr,
                           .since = (uint64_t)since,
                           .last_seen = (uint64_t)since,
                           .healed = json_object_get_boolean(m)};
    *pkeep = true;
    if (ago >= 0) {
        uint64_t now = loc_now(loc), age = age_ns + (uint64_t)ago * 1000000ull;
        a->lifted_window = (uint64_t)lwin;
        a->lifted_at = now > age ? now - age : 1;
        /* a lifted one is kept for its dampening memory only */
        *pkeep = state != ACT_FREE || age < loc->cfg.hold_max_ns;
    } else if (state == ACT_FREE) {
        snprintf(why, whylen, "lifted but no lifted_ago_ms");
        return false;
    }
    a->restored = state != ACT_FREE;
    return true;
}

/* Reads the state file into the actions: all of it or, a file that is not one of ours or not of
 * this fabric, none (logged, kept as FILE.bad: the entries it named are adopted from the
 * controller). Returns 0, or -errno with a sentence in |err| for a file that cannot be read. */
static int state_load(probe_localize *loc, char *err, size_t errlen)
{
    const char *path = loc->cfg.state_path;
    char why[256] = "", perr[160];
    struct stat st;
    json_object *j = NULL, *acts;
    action *tmp = NULL;
    char *data = NULL;
    size_t n = 0, nt = 0;
    int rv = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) {
            util_log(UTIL_LOG_INFO, "state file %s: none yet, starting clean", path);
            return 0;
        }
        rv = -errno;
        snprintf(err, errlen, "--state %s: %s", path, strerror(-rv));
        return rv;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        rv = -EINVAL;
        snprintf(err, errlen, "--state %s: not a regular file", path);
        goto out;
    }
    if (st.st_size > LOC_STATE_MAX) {
        snprintf(why, sizeof(why), "%lld bytes, over its bound of %u", (long long)st.st_size,
                 LOC_STATE_MAX);
        goto discard;
    }
    data = util_xmalloc((size_t)st.st_size + 1);
    n = fread(data, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        rv = -EIO;
        snprintf(err, errlen, "--state %s: %s", path, strerror(EIO));
        goto out;
    }
    data[n] = '\0';
    j = util_json_parse("the state", data, n, perr, sizeof(perr));
    int64_t version, written;
    if (!j) {
        snprintf(why, sizeof(why), "%s", perr);
        goto discard;
    }
    if (jint(j, "version", &version) || version != LOC_STATE_VERSION ||
        jint(j, "written_ms", &written) || written < 0 ||
        !json_object_object_get_ex(j, "actions", &acts) ||
        !json_object_is_type(acts, json_type_array)) {
        snprintf(why, sizeof(why),
                 "not a localizer's state of version %d (version, written_ms, "
                 "actions)",
                 LOC_STATE_VERSION);
        goto discard;
    }
    if (json_object_array_length(acts) > LOC_ACTIONS) {
        snprintf(why, sizeof(why), "%zu components, over the %u it keeps",
                 json_object_array_length(acts), LOC_ACTIONS);
        goto discard;
    }
    uint64_t wall_ms = loc_now(loc) / 1000000ull;
    uint64_t age = wall_ms > (uint64_t)written ? (wall_ms - (uint64_t)written) * 1000000ull : 0;
    tmp = util_xcalloc(LOC_ACTIONS, sizeof(*tmp));
    for (size_t i = 0; i < json_object_array_length(acts); i++) {
        bool keep = false;
        char awhy[192];
        if (!state_action(loc, json_object_array_get_idx(acts, i), age, &tmp[nt], &keep, awhy,
                          sizeof(awhy))) {
            snprintf(why, sizeof(why), "component %zu: %s", i, awhy);
            goto discard;
        }
        for (size_t k = 0; k < nt; k++) {
            if (memcmp(&tmp[k].comp, &tmp[nt].comp, sizeof(tmp[k].comp)) == 0) {
                snprintf(why, sizeof(why), "component %zu: listed twice", i);
                goto discard;
            }
        }
        if (keep && !in_shard(loc, tmp[nt].comp.plane)) {
            char name[64];
            probe_comp_name(&tmp[nt].comp, name, sizeof(name));
            /* --planes changed across the restart: the shard that takes its plane adopts its
             * entries from the controller's list */
            util_log(UTIL_LOG_NOTICE, "state file %s: %s is of another shard's plane; left to it",
                     path, name);
            keep = false;
        }
        nt += keep;
    }
    for (size_t i = 0; i < nt; i++) {
        loc->act[i] = tmp[i];
    }
    util_log(UTIL_LOG_NOTICE, "state file %s: %zu components restored", path, nt);
    goto out;
discard : {
    char bad[4096];
    snprintf(bad, sizeof(bad), "%s.bad", path);
    rename(path, bad);
    util_log(UTIL_LOG_WARNING,
             "state file %s: %s; discarded (kept as %s): the entries it held are adopted from the "
             "controller's denylist",
             path, why, bad);
}
out:
    fclose(f);
    json_object_put(j);
    free(data);
    free(tmp);
    return rv;
}

int probe_localize_new(const probe_localize_cfg *cfg, probe_localize **ploc, char *err,
                       size_t errlen)
{
    probe_localize *loc = util_xcalloc(1, sizeof(*loc));
    int rv;
    loc->cfg = *cfg;
    loc->R = probe_plan_per_window(cfg->plan);
    loc->nhosts = fab_topo_nhosts(cfg->topo);
    loc->planes = probe_plan_planes(cfg->plan);
    loc->mask = probe_shard_all(loc->planes) & (cfg->planes ? cfg->planes : UINT64_MAX);
    loc->leading = !cfg->elected;
    for (uint32_t h = 0; h < loc->nhosts; h++) {
        bool has = false;
        for (unsigned p = 0; p < fab_topo_planes(cfg->topo) && !has; p++) {
            uint32_t sw;
            unsigned swport;
            has = in_shard(loc, p) && fab_host_attach(cfg->topo, h, p, &sw, &swport) == 0;
        }
        loc->expect_hosts += has;
    }
    probe_plan_shape(cfg->plan, 0, &loc->nt0, &loc->nt1, &loc->nports);
    /* windows that began before it came are not its own */
    loc->last_eval = loc_now(loc) / cfg->window_ns;
    loc->vbuf = util_xcalloc(LOC_VERDICTS, sizeof(*loc->vbuf));
    for (unsigned i = 0; i < LOC_PENDING; i++) {
        loc->win[i].window = UINT64_MAX;
        loc->win[i].reported = util_xcalloc(loc->nhosts, 1);
    }
    rv = probe_infer_new(&cfg->infer, &loc->inf);
    if (rv != 0) {
        snprintf(err, errlen, "the inference: %s", strerror(-rv));
        probe_localize_free(loc);
        return rv;
    }
    if (cfg->controller) {
        char perr[320];
        probe_ctl_cfg cc = {.base = cfg->base,
                            .urls = cfg->controller,
                            .token = cfg->token,
                            .cafile = cfg->cafile,
                            .certfile = cfg->certfile,
                            .keyfile = cfg->keyfile};
        if ((rv = probe_ctl_new(&cc, &loc->ctl, perr, sizeof(perr))) != 0) {
            snprintf(err, errlen, "--controller: %s", perr);
            probe_localize_free(loc);
            return rv;
        }
    }
    loc->regain = 1ull << (cfg->infer.horizons ? cfg->infer.horizons - 1 : 0);
    loc->adopt_pending = cfg->controller != NULL;
    if (cfg->state_path) {
        rv = state_load(loc, err, errlen);
        if (rv == 0 && (rv = state_save(loc, true)) != 0) {
            snprintf(err, errlen, "--state %s: cannot write it: %s", cfg->state_path,
                     strerror(-rv));
        }
        if (rv != 0) {
            probe_localize_free(loc);
            return rv;
        }
    }
    loc->tick = event_new(cfg->base, -1, EV_PERSIST, on_tick, loc);
    struct timeval tv = {0, LOC_TICK_US};
    event_add(loc->tick, &tv);
    if (cfg->controller) {
        probe_post_cfg pc = {
            .ctl = loc->ctl, .path = "/api/v1/probes", .timeout_ms = LOC_POST_TIMEOUT_MS};
        rv = probe_post_new(&pc, &loc->post);
        if (rv != 0) {
            snprintf(err, errlen, "the evidence's sender: %s", strerror(-rv));
            probe_localize_free(loc);
            return rv;
        }
        struct timeval btv = {LOC_HEARTBEAT_S, 0};
        loc->beat = event_new(cfg->base, -1, EV_PERSIST, heartbeat, loc);
        event_add(loc->beat, &btv);
        heartbeat(-1, 0, loc); /* at once: alive from the start */
    }
    *ploc = loc;
    return 0;
}

void probe_localize_lead(probe_localize *loc, bool leading)
{
    if (!loc->cfg.elected || leading == loc->leading) {
        return;
    }
    loc->leading = leading;
    uint64_t now_w = loc_now(loc) / loc->cfg.window_ns;
    if (leading) {
        /* the windows that began before it led are not its own: their reports went elsewhere */
        loc->last_eval = now_w > loc->last_eval ? now_w : loc->last_eval;
        /* whatever it holds (its state file's) waits for the evidence to be rebuilt, as after
         * a restart, and the predecessor's entries are adopted from the controller's list */
        loc->regain =
            loc->evaluated + (1ull << (loc->cfg.infer.horizons ? loc->cfg.infer.horizons - 1 : 0));
        for (unsigned i = 0; i < LOC_ACTIONS; i++) {
            if (loc->act[i].state != ACT_FREE) {
                loc->act[i].restored = true;
                loc->act[i].clean_since = 0;
            }
        }
        loc->adopt_pending = loc->cfg.controller != NULL;
        if (loc->adopt_pending && loc->me[0]) {
            list_start(loc);
        }
        util_log(UTIL_LOG_NOTICE, "leading: evaluating from window %" PRIu64 "%s", now_w + 1,
                 loc->adopt_pending ? ", the predecessor's entries adopted from the controller"
                                    : "");
        return;
    }
    /* the new leader owns the entries now: nothing lifted, nothing on its way */
    probe_ctl_cancel(loc->list_req);
    loc->list_req = NULL;
    unsigned dropped = 0;
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        for (unsigned k = 0; k < LOC_ENTRIES; k++) {
            probe_ctl_cancel(loc->act[i].ents[k].req);
        }
        dropped += loc->act[i].state != ACT_FREE;
        memset(&loc->act[i], 0, sizeof(loc->act[i]));
    }
    loc->adopt_pending = false;
    util_log(UTIL_LOG_NOTICE, "following: %u components left to the leader", dropped);
}

bool probe_localize_leading(const probe_localize *loc)
{
    return loc->leading;
}

void probe_localize_free(probe_localize *loc)
{
    if (!loc) {
        return;
    }
    if (loc->tick) {
        event_free(loc->tick);
    }
    if (loc->beat) {
        event_free(loc->beat);
    }
    probe_ctl_cancel(loc->beat_req);
    probe_ctl_cancel(loc->list_req);
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        for (unsigned k = 0; k < LOC_ENTRIES; k++) {
            probe_ctl_cancel(loc->act[i].ents[k].req);
        }
    }
    probe_post_free(loc->post);
    probe_ctl_free(loc->ctl);
    free(loc->saved);
    for (unsigned i = 0; i < LOC_PENDING; i++) {
        free(loc->win[i].reported);
    }
    probe_infer_free(loc->inf);
    free(loc->vbuf);
    free(loc);
}

json_object *probe_localize_status(const probe_localize *loc)
{
    static const char *const est[] = {"to add",  "looking up", "adding", "held",
                                      "refused", "deleting",   "gone"};
    json_object *o = json_object_new_object(), *vs = json_object_new_array();
    json_object_object_add(o, "last_window", json_object_new_uint64(loc->last_eval));
    json_object_object_add(o, "evaluated", json_object_new_uint64(loc->evaluated));
    json_object_object_add(o, "reports", json_object_new_uint64(loc->reports));
    json_object_object_add(o, "failures", json_object_new_uint64(loc->failures));
    char planes[128];
    probe_shard_str(loc->mask, planes, sizeof(planes));
    json_object *sh = json_object_new_object();
    json_object_object_add(sh, "planes", json_object_new_string(planes));
    json_object_object_add(sh, "role",
                           json_object_new_string(!loc->cfg.elected ? "alone"
                                                  : loc->leading    ? "leader"
                                                                    : "follower"));
    json_object_object_add(sh, "hosts", json_object_new_uint64(loc->expect_hosts));
    json_object_object_add(o, "shard", sh);
    if (loc->ctl) {
        json_object_object_add(o, "controller",
                               json_object_new_string(probe_ctl_current(loc->ctl)));
    }
    if (loc->post) {
        probe_post_stats st;
        probe_post_stats_get(loc->post, &st);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "accepted", json_object_new_uint64(st.accepted));
        json_object_object_add(e, "failed", json_object_new_uint64(st.failed));
        json_object_object_add(e, "replaced", json_object_new_uint64(st.replaced));
        json_object_object_add(e, "last_status", json_object_new_int(st.last_status));
        json_object_object_add(e, "results", json_object_new_uint64(loc->results_posted));
        json_object_object_add(e, "results_dropped", json_object_new_uint64(loc->results_dropped));
        json_object_object_add(o, "evidence", e);
    }
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        const action *a = &loc->act[i];
        if (a->state == ACT_FREE) {
            continue;
        }
        char name[64];
        probe_comp_name(&a->comp, name, sizeof(name));
        json_object *v = json_object_new_object(), *els = json_object_new_array(),
                    *ids = json_object_new_array(), *ests = json_object_new_array();
        json_object_object_add(v, "component", json_object_new_string(name));
        json_object_object_add(v, "kind", json_object_new_string(comp_kind(&a->comp)));
        for (unsigned k = 0; k < a->nels; k++) {
            char s[128];
            snprintf(s, sizeof(s), "%s %s", a->els[k].element, a->els[k].scope);
            json_object_array_add(els, json_object_new_string(s));
            json_object_array_add(ids, json_object_new_int64(a->ents[k].id));
            json_object_array_add(ests, json_object_new_string(est[a->ents[k].st]));
        }
        json_object_object_add(v, "elements", els);
        json_object_object_add(v, "entries", ids);
        if (loc->cfg.controller) {
            json_object_object_add(v, "entry_states", ests);
        } else {
            json_object_put(ests);
        }
        json_object_object_add(v, "state", json_object_new_string(act_state(loc, a)));
        json_object_object_add(v, "loss", json_object_new_double(a->v.loss));
        json_object_object_add(v, "lost", json_object_new_uint64(a->v.lost));
        json_object_object_add(v, "sent", json_object_new_uint64(a->v.sent));
        json_object_object_add(v, "horizon", json_object_new_int((int)a->v.horizon));
        json_object_object_add(v, "llr", json_object_new_double(a->v.llr));
        json_object_object_add(v, "healed", json_object_new_boolean(a->v.healed));
        json_object_object_add(v, "hold_s", json_object_new_double((double)a->hold_ns / 1e9));
        json_object_object_add(v, "restored", json_object_new_boolean(a->restored));
        json_object_array_add(vs, v);
    }
    json_object_object_add(o, "verdicts", vs);
    return o;
}

/* --- GET /metrics ---------------------------------------------------------------------------- */

void probe_localize_metrics(const probe_localize *loc, util_buf *b)
{
    static const char *const reasons[PROBE_REFUSALS] = {"unauthorized", "forbidden", "invalid",
                                                        "late",         "too_large", "duplicate",
                                                        "misdirected",  "not_leader"};
    static const char *const kinds[] = {"link", "host_port", "switch", "optic"};
    static const char *const states[] = {"adding",  "denied", "refused",
                                         "lifting", "healed", "logged"};
    uint64_t held[4][6] = {{0}};
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        const action *a = &loc->act[i];
        if (a->state == ACT_FREE) {
            continue;
        }
        const char *k = comp_kind(&a->comp), *s = act_state(loc, a);
        for (unsigned x = 0; x < 4; x++) {
            for (unsigned y = 0; y < 6; y++) {
                held[x][y] += strcmp(k, kinds[x]) == 0 && strcmp(s, states[y]) == 0;
            }
        }
    }
#define HEAD(name, type, help)                                                                     \
    util_buf_printf(b, "# HELP " name " " help "\n# TYPE " name " " type "\n")
    HEAD("mrcfab_localizer_reports_total", "counter", "Node reports taken.");
    util_buf_printf(b, "mrcfab_localizer_reports_total %" PRIu64 "\n", loc->reports);
    HEAD("mrcfab_localizer_reports_refused_total", "counter", "Node reports refused, by reason.");
    for (unsigned r = 0; r < PROBE_REFUSALS; r++) {
        util_buf_printf(b, "mrcfab_localizer_reports_refused_total{reason=\"%s\"} %" PRIu64 "\n",
                        reasons[r], loc->refused[r]);
    }
    HEAD("mrcfab_localizer_windows_evaluated_total", "counter", "Windows evaluated.");
    util_buf_printf(b, "mrcfab_localizer_windows_evaluated_total %" PRIu64 "\n", loc->evaluated);
    HEAD("mrcfab_localizer_probes_sent_total", "counter",
         "Probes the nodes sent, by plane (their heartbeats).");
    for (unsigned p = 0; p < loc->planes && p < MAX_PLANE; p++) {
        util_buf_printf(b, "mrcfab_localizer_probes_sent_total{plane=\"%u\"} %" PRIu64 "\n", p,
                        loc->probes_sent[p]);
    }
    HEAD("mrcfab_localizer_probes_lost_total", "counter",
         "Probes of the plan the nodes found missing, by plane (their deficits).");
    for (unsigned p = 0; p < loc->planes && p < MAX_PLANE; p++) {
        util_buf_printf(b, "mrcfab_localizer_probes_lost_total{plane=\"%u\"} %" PRIu64 "\n", p,
                        loc->probes_lost[p]);
    }
    HEAD("mrcfab_localizer_inference_seconds", "summary",
         "Time of one evaluation of the inference (monotonic clock).");
    util_buf_printf(b, "mrcfab_localizer_inference_seconds_sum %.9f\n", loc->infer_sum_s);
    util_buf_printf(b, "mrcfab_localizer_inference_seconds_count %" PRIu64 "\n", loc->evaluated);
    HEAD("mrcfab_localizer_inference_seconds_last", "gauge", "Time of the last evaluation.");
    util_buf_printf(b, "mrcfab_localizer_inference_seconds_last %.9f\n", loc->infer_last_s);
    HEAD("mrcfab_localizer_inference_seconds_max", "gauge", "Time of the slowest evaluation.");
    util_buf_printf(b, "mrcfab_localizer_inference_seconds_max %.9f\n", loc->infer_max_s);
    HEAD("mrcfab_localizer_verdicts", "gauge", "Verdicts held, by kind and state.");
    for (unsigned x = 0; x < 4; x++) {
        for (unsigned y = 0; y < 6; y++) {
            util_buf_printf(b, "mrcfab_localizer_verdicts{kind=\"%s\",state=\"%s\"} %" PRIu64 "\n",
                            kinds[x], states[y], held[x][y]);
        }
    }
    probe_post_stats st = {0};
    if (loc->post) {
        probe_post_stats_get(loc->post, &st);
    }
    HEAD("mrcfab_localizer_controller_failures_total", "counter",
         "Requests to the controller that failed, by request: evidence posts not taken or "
         "replaced by the next window's before they were sent, denylist changes and reads, "
         "heartbeats.");
    util_buf_printf(b,
                    "mrcfab_localizer_controller_failures_total{request=\"probes\"} %" PRIu64 "\n"
                    "mrcfab_localizer_controller_failures_total{request=\"denylist\"} %" PRIu64 "\n"
                    "mrcfab_localizer_controller_failures_total{request=\"heartbeat\"} %" PRIu64
                    "\n",
                    st.failed + st.replaced, loc->failures, loc->beat_failures);
    HEAD("mrcfab_localizer_evidence_posts_total", "counter",
         "Evidence posts (POST /api/v1/probes) the controller took.");
    util_buf_printf(b, "mrcfab_localizer_evidence_posts_total %" PRIu64 "\n", st.accepted);
    HEAD("mrcfab_localizer_evidence_results_dropped_total", "counter",
         "Results of a window beyond what its posts hold (64 posts), never sent.");
    util_buf_printf(b, "mrcfab_localizer_evidence_results_dropped_total %" PRIu64 "\n",
                    loc->results_dropped);
    HEAD("mrcfab_localizer_leader", "gauge",
         "1 while this localizer infers and keeps the denylist for its planes (alone, or the "
         "elected leader of its shard), 0 while it follows.");
    util_buf_printf(b, "mrcfab_localizer_leader %d\n", loc->leading ? 1 : 0);
#undef HEAD
}
