/* SPDX-License-Identifier: MIT */
#include "probe_localize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_node.h"
#include "probe_wire.h"
#include "util.h"

#define LOC_PENDING 8     /* windows awaiting their reports */
#define LOC_VERDICTS 4096 /* confirmed verdicts read per evaluation */
#define LOC_ACTIONS 1024  /* components with denylist entries (in force or on their way) */
#define LOC_ENTRIES 16    /* entries per component (an optic group's links) */
#define LOC_TICK_US 100000
#define LOC_HEARTBEAT_S 5 /* GET /api/v1/whoami: the controller's list of probers sees it alive */
#define MAX_PLANE 64

typedef struct lwin {
    uint64_t window; /* UINT64_MAX: free */
    uint32_t nreports;
    uint8_t *reported; /* per host */
} lwin;

enum { ACT_FREE = 0, ACT_ADDING, ACT_IN_FORCE, ACT_REFUSED, ACT_LIFTING };

typedef struct action {
    int state;
    probe_comp comp;
    probe_verdict v;
    int64_t ids[LOC_ENTRIES];
    unsigned nids, pending; /* requests in flight */
    bool seen;              /* in the last evaluation's verdicts */
    uint64_t clean_since;   /* ns, 0: not clean */
    uint64_t lifted_at;     /* ns, 0: never */
    uint64_t lifted_window; /* the window evaluated when it was lifted */
    unsigned flaps;
    uint64_t hold_ns;
} action;

struct probe_localize {
    probe_localize_cfg cfg;
    probe_infer *inf;
    uint32_t R, nhosts;
    uint32_t nt0, nt1, nports; /* the plan's grid */
    uint64_t last_eval;        /* every window up to this one is evaluated */
    lwin win[LOC_PENDING];
    action act[LOC_ACTIONS];
    probe_verdict *vbuf;
    struct event *tick;
    uint64_t evaluated, reports, posts, deletes, failures;
    struct event *beat;
    util_http *beat_req; /* the heartbeat in flight, or NULL */
    bool beat_failing;   /* said once, until the controller answers again */
};

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

int probe_localize_report(probe_localize *loc, json_object *r, const char *sender, char *err,
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
    for (int pass = 0; pass < 2; pass++) {
        /* the report's form first (pass 0), then whether its window is one being collected */
        if (pass == 1) {
            if ((uint64_t)window <= loc->last_eval) {
                snprintf(err, errlen, "window %" PRId64 " is evaluated already", window);
                return -ESTALE;
            }
            uint64_t now_w = probe_node_clock() / loc->cfg.window_ns;
            w = (uint64_t)window <= now_w ? win_get(loc, (uint64_t)window, true) : NULL;
            if (!w) {
                snprintf(err, errlen, "window %" PRId64 " is not one this localizer is collecting",
                         window);
                return -EINVAL;
            }
            if (w->reported[host]) {
                snprintf(err, errlen, "%s reported window %" PRId64 " already",
                         json_object_get_string(jh), window);
                return -EINVAL;
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
            if (pass == 1) {
                probe_infer_add_sent(loc->inf, (uint64_t)window, (unsigned)plane, (unsigned)t0,
                                     (unsigned)port, (uint32_t)sent, loc->R);
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
    return 0;
}

/* --- verdicts to denylist entries ---------------------------------------------------------- */

typedef struct elem {
    char element[96];
    const char *scope;
} elem;

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

typedef struct req_ctx {
    probe_localize *loc;
    action *act;
    unsigned slot;
} req_ctx;

static void on_added(void *user, util_http_result *res)
{
    req_ctx *q = user;
    action *a = q->act;
    char name[64];
    probe_comp_name(&a->comp, name, sizeof(name));
    a->pending--;
    char perr[128];
    json_object *id,
        *body = res->rv == 0 && res->body
                    ? util_json_parse("answer", res->body, res->len, perr, sizeof(perr))
                    : NULL;
    if (res->rv == 0 && res->status == 201 && body && json_object_object_get_ex(body, "id", &id)) {
        a->ids[q->slot] = json_object_get_int64(id);
        util_log(UTIL_LOG_NOTICE, "denied %s: entry %" PRId64, name, a->ids[q->slot]);
    } else {
        q->loc->failures++;
        util_log(UTIL_LOG_WARNING, "the controller did not take the entry for %s: %s%d %.200s",
                 name, res->rv ? res->err : "HTTP ", res->rv ? 0 : res->status,
                 res->body ? res->body : "");
        if (res->rv == 0 && res->status == 409) {
            a->state = ACT_REFUSED; /* the blast radius: an operator decides */
        }
    }
    json_object_put(body);
    if (!a->pending && a->state == ACT_ADDING) {
        a->state = ACT_IN_FORCE;
    }
    free(q);
}

static void on_lifted(void *user, util_http_result *res)
{
    req_ctx *q = user;
    action *a = q->act;
    a->pending--;
    if (res->rv != 0 || (res->status / 100 != 2 && res->status != 404)) {
        q->loc->failures++;
        util_log(UTIL_LOG_WARNING, "lifting entry %" PRId64 ": %s%d", a->ids[q->slot],
                 res->rv ? res->err : "HTTP ", res->rv ? 0 : res->status);
    }
    a->ids[q->slot] = 0;
    if (!a->pending) {
        char name[64];
        probe_comp_name(&a->comp, name, sizeof(name));
        util_log(UTIL_LOG_NOTICE, "lifted %s after %.0f s of clean probing", name,
                 (double)a->hold_ns / 1e9);
        a->state = ACT_FREE;
        a->nids = 0;
    }
    free(q);
}

static void request(probe_localize *loc, action *a, unsigned slot, const char *method,
                    const char *url, const char *body, util_http_cb cb)
{
    char err[256];
    util_http *req;
    req_ctx *q = util_xmalloc(sizeof(*q));
    *q = (req_ctx){.loc = loc, .act = a, .slot = slot};
    util_http_opts o = {.method = method,
                        .bearer = loc->cfg.token,
                        .body = body,
                        .bodylen = body ? strlen(body) : 0,
                        .cafile = loc->cfg.cafile};
    if (util_http_start(loc->cfg.base, url, &o, cb, q, &req, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_WARNING, "the controller: %s", err);
        loc->failures++;
        free(q);
        return;
    }
    a->pending++;
}

static void deny(probe_localize *loc, action *a, uint64_t now)
{
    elem el[LOC_ENTRIES];
    char name[64], url[512], reason[256];
    unsigned n = comp_elements(loc, &a->comp, el);
    probe_comp_name(&a->comp, name, sizeof(name));
    /* dampening: failing again within the longest hold of its last lifting doubles the hold */
    bool flap = a->lifted_at && now - a->lifted_at < loc->cfg.hold_max_ns;
    a->flaps = flap ? a->flaps + 1 : 0;
    a->hold_ns = loc->cfg.hold_ns << (a->flaps < 16 ? a->flaps : 16);
    a->hold_ns = a->hold_ns < loc->cfg.hold_max_ns ? a->hold_ns : loc->cfg.hold_max_ns;
    snprintf(reason, sizeof(reason),
             "prober: %s loses %.3g %% (%" PRIu64 " of %" PRIu64 " probes over %.3g s, LLR %.0f)",
             name, a->v.loss * 100, a->v.lost, a->v.sent,
             (double)a->v.horizon * (double)loc->cfg.window_ns / 1e9, a->v.llr);
    util_log(UTIL_LOG_NOTICE, "verdict: %s (hold %.0f s)", reason, (double)a->hold_ns / 1e9);
    a->state = ACT_ADDING;
    a->nids = n;
    a->clean_since = 0;
    if (!loc->cfg.controller) {
        a->state = ACT_IN_FORCE;
        return;
    }
    snprintf(url, sizeof(url), "%s/api/v1/denylist", loc->cfg.controller);
    for (unsigned i = 0; i < n; i++) {
        json_object *b = json_object_new_object();
        json_object_object_add(b, "element", json_object_new_string(el[i].element));
        json_object_object_add(b, "scope", json_object_new_string(el[i].scope));
        json_object_object_add(b, "reason", json_object_new_string(reason));
        a->ids[i] = 0;
        request(loc, a, i, "POST", url, json_object_to_json_string(b), on_added);
        json_object_put(b);
        loc->posts++;
    }
    if (!a->pending) {
        a->state = ACT_REFUSED;
    }
}

static void lift(probe_localize *loc, action *a, uint64_t now)
{
    char url[512];
    a->lifted_at = now;
    a->lifted_window = loc->last_eval;
    if (!loc->cfg.controller) {
        a->state = ACT_FREE;
        return;
    }
    a->state = ACT_LIFTING;
    for (unsigned i = 0; i < a->nids; i++) {
        if (a->ids[i] > 0) {
            snprintf(url, sizeof(url), "%s/api/v1/denylist/%" PRId64, loc->cfg.controller,
                     a->ids[i]);
            request(loc, a, i, "DELETE", url, NULL, on_lifted);
            loc->deletes++;
        }
    }
    if (!a->pending) {
        a->state = ACT_FREE;
        a->nids = 0;
    }
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

static void evaluate(probe_localize *loc, uint64_t window, uint64_t now)
{
    for (uint32_t h = 0; h < loc->nhosts; h++) {
        lwin *w = win_get(loc, window, true);
        if (w && w->reported[h]) {
            continue;
        }
        /* no report: the host sent nothing (a stalled host is no network loss) */
        for (unsigned p = 0; p < fab_topo_planes(loc->cfg.topo); p++) {
            uint32_t sw;
            unsigned swport;
            fab_switch t0;
            if (fab_host_attach(loc->cfg.topo, h, p, &sw, &swport) == 0 &&
                fab_switch_get(loc->cfg.topo, sw, &t0) == 0) {
                probe_infer_add_sent(loc->inf, window, p, t0.index, swport, 0, loc->R);
            }
        }
    }
    int n = probe_infer_eval(loc->inf, window, loc->vbuf, LOC_VERDICTS);
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
        bool clean = !a->seen || a->v.healed;
        if (a->state != ACT_IN_FORCE && a->state != ACT_REFUSED) {
            continue;
        }
        if (!clean) {
            continue;
        }
        if (!a->clean_since) {
            a->clean_since = now;
        }
        if (now - a->clean_since >= a->hold_ns) {
            lift(loc, a, now);
        }
    }
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    probe_localize *loc = arg;
    (void)fd;
    (void)what;
    uint64_t now = probe_node_clock(), W = loc->cfg.window_ns;
    for (uint64_t w = loc->last_eval + 1; (w + 1) * W <= now; w++) {
        lwin *lw = win_get(loc, w, false);
        bool all = lw && lw->nreports == loc->nhosts;
        if (!all && now < (w + 1) * W + loc->cfg.deadline_ns) {
            break;
        }
        evaluate(loc, w, now);
    }
}

/* The heartbeat's answer. A failure is said once (info) and not counted among the
 * localizer's failures: those are the denylist's, which its status reports. */
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
    loc->beat_failing = !ok;
}

/* Every LOC_HEARTBEAT_S, one authenticated GET to the controller, started like the denylist's
 * requests (never waited for); one at a time, so a slow controller gets no pile of them. */
static void heartbeat(evutil_socket_t fd, short what, void *arg)
{
    probe_localize *loc = arg;
    char url[512], err[256];
    (void)fd;
    (void)what;
    if (loc->beat_req) {
        return;
    }
    snprintf(url, sizeof(url), "%s/api/v1/whoami", loc->cfg.controller);
    util_http_opts o = {
        .bearer = loc->cfg.token, .cafile = loc->cfg.cafile, .timeout_ms = LOC_HEARTBEAT_S * 1000};
    int rv =
        util_http_start(loc->cfg.base, url, &o, on_beat, loc, &loc->beat_req, err, sizeof(err));
    if (rv != 0) {
        loc->beat_req = NULL;
        util_log(loc->beat_failing ? UTIL_LOG_DEBUG : UTIL_LOG_INFO, "heartbeat: %s", err);
        loc->beat_failing = true;
    }
}

int probe_localize_new(const probe_localize_cfg *cfg, probe_localize **ploc, char *err,
                       size_t errlen)
{
    probe_localize *loc = util_xcalloc(1, sizeof(*loc));
    int rv;
    loc->cfg = *cfg;
    loc->R = probe_plan_per_window(cfg->plan);
    loc->nhosts = fab_topo_nhosts(cfg->topo);
    probe_plan_shape(cfg->plan, 0, &loc->nt0, &loc->nt1, &loc->nports);
    /* windows that began before it came are not its own */
    loc->last_eval = probe_node_clock() / cfg->window_ns;
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
    loc->tick = event_new(cfg->base, -1, EV_PERSIST, on_tick, loc);
    struct timeval tv = {0, LOC_TICK_US};
    event_add(loc->tick, &tv);
    if (cfg->controller) {
        struct timeval btv = {LOC_HEARTBEAT_S, 0};
        loc->beat = event_new(cfg->base, -1, EV_PERSIST, heartbeat, loc);
        event_add(loc->beat, &btv);
        heartbeat(-1, 0, loc); /* at once: alive from the start */
    }
    *ploc = loc;
    return 0;
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
    util_http_cancel(loc->beat_req);
    for (unsigned i = 0; i < LOC_PENDING; i++) {
        free(loc->win[i].reported);
    }
    probe_infer_free(loc->inf);
    free(loc->vbuf);
    free(loc);
}

json_object *probe_localize_status(const probe_localize *loc)
{
    static const char *const states[] = {"none", "adding", "denied", "refused", "lifting"};
    json_object *o = json_object_new_object(), *vs = json_object_new_array();
    json_object_object_add(o, "last_window", json_object_new_uint64(loc->last_eval));
    json_object_object_add(o, "evaluated", json_object_new_uint64(loc->evaluated));
    json_object_object_add(o, "reports", json_object_new_uint64(loc->reports));
    json_object_object_add(o, "failures", json_object_new_uint64(loc->failures));
    for (unsigned i = 0; i < LOC_ACTIONS; i++) {
        const action *a = &loc->act[i];
        if (a->state == ACT_FREE) {
            continue;
        }
        char name[64];
        elem el[LOC_ENTRIES];
        unsigned n = comp_elements(loc, &a->comp, el);
        probe_comp_name(&a->comp, name, sizeof(name));
        json_object *v = json_object_new_object(), *els = json_object_new_array(),
                    *ids = json_object_new_array();
        json_object_object_add(v, "component", json_object_new_string(name));
        for (unsigned k = 0; k < n; k++) {
            char s[128];
            snprintf(s, sizeof(s), "%s %s", el[k].element, el[k].scope);
            json_object_array_add(els, json_object_new_string(s));
            json_object_array_add(ids, json_object_new_int64(k < a->nids ? a->ids[k] : 0));
        }
        json_object_object_add(v, "elements", els);
        json_object_object_add(v, "entries", ids);
        json_object_object_add(v, "state", json_object_new_string(states[a->state]));
        json_object_object_add(v, "loss", json_object_new_double(a->v.loss));
        json_object_object_add(v, "lost", json_object_new_uint64(a->v.lost));
        json_object_object_add(v, "sent", json_object_new_uint64(a->v.sent));
        json_object_object_add(v, "horizon", json_object_new_int((int)a->v.horizon));
        json_object_object_add(v, "llr", json_object_new_double(a->v.llr));
        json_object_object_add(v, "healed", json_object_new_boolean(a->v.healed));
        json_object_object_add(v, "hold_s", json_object_new_double((double)a->hold_ns / 1e9));
        json_object_array_add(vs, v);
    }
    json_object_object_add(o, "verdicts", vs);
    return o;
}
