/* SPDX-License-Identifier: MIT */
/* mrc-agent's parts joined. The controller's profile and denylist go to the node as they
 * arrive (from the controller or, at start, from the state directory); the ports' link state
 * goes to the engine and to the controller; every interval a bounded report goes out; a scrape
 * of /metrics reads the counters of all of them. */
#include "agent_daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "agent_api.h"
#include "agent_ctl.h"
#include "agent_deny.h"
#include "agent_metrics.h"
#include "agent_port.h"
#include "agent_profile.h"
#include "agent_report.h"
#include "util.h"

struct agent_daemon {
    agent_daemon_cfg cfg;
    const fab_topo *topo;
    agent_node *node;
    agent_api *api;
    agent_metrics *metrics;
    agent_ctl *ctl;
    agent_port *ports;
    agent_report *report;
    struct event *report_timer;
    agent_profile *prof;
    agent_deny *deny;
    unsigned nports;
    bool linked;
    uint64_t denied_changes;
    agent_metrics_qp_sums retired; /* the counters of the QPs freed, for /metrics */
};

static void on_profile(void *user, const char *json, size_t len)
{
    agent_daemon *d = user;
    agent_profile *prof;
    char err[256];
    if (agent_profile_parse(d->topo, json, len, &prof, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "a profile this agent cannot use (kept the last one): %s", err);
        return;
    }
    agent_node_set_profile(d->node, prof);
    agent_profile_free(d->prof);
    d->prof = prof;
    util_log(UTIL_LOG_NOTICE, "profile: %s, mtu %u, %u EV classes", prof->cc.algorithm,
             prof->cc.mtu, prof->nclasses);
}

static void on_denylist(void *user, uint64_t version, const char *json, size_t len)
{
    agent_daemon *d = user;
    agent_deny *deny;
    char err[256];
    if (agent_deny_parse(d->topo, json, len, &deny, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "denylist %llu refused (kept the last one): %s",
                 (unsigned long long)version, err);
        return;
    }
    unsigned changed = agent_node_set_deny(d->node, deny);
    agent_deny_free(d->deny);
    d->deny = deny;
    d->denied_changes += changed;
    agent_deny_counts c;
    agent_deny_counts_get(deny, &c);
    agent_floor_totals ft;
    agent_floor_get_totals(agent_node_floor(d->node), &ft);
    util_log(UTIL_LOG_NOTICE,
             "denylist %llu: %zu entries in force, %u EV states changed, %llu peers at the floor",
             (unsigned long long)version, c.applied, changed, (unsigned long long)ft.peers);
    if (c.skipped) {
        util_log(UTIL_LOG_WARNING, "denylist %llu: %zu elements not in this topology (first: %s)",
                 (unsigned long long)version, c.skipped, agent_deny_first_skipped(deny));
    }
}

static void on_link(void *user, bool connected)
{
    agent_daemon *d = user;
    d->linked = connected;
}

static void port_states(const agent_daemon *d, agent_ctl_port *out)
{
    for (unsigned p = 0; p < d->nports; p++) {
        out[p] = (agent_ctl_port){.port = p, .up = d->ports && agent_port_up(d->ports, p)};
    }
}

static void on_port(void *user, unsigned port, bool up)
{
    agent_daemon *d = user;
    agent_ctl_port st[FAB_MAX_PLANES];
    util_log(UTIL_LOG_NOTICE, "port %u %s", port,
             up ? "up: its EVs return" : "down: its EVs move to the other planes");
    mrc_port_set_state(agent_node_ctx(d->node), port, up, agent_now());
    agent_io_kick(agent_node_io(d->node));
    if (d->ctl) {
        port_states(d, st);
        agent_ctl_set_ports(d->ctl, st, d->nports);
    }
}

static void on_qp_new(void *user, mrc_qp *qp, uint32_t peer)
{
    agent_daemon *d = user;
    char err[128];
    if (agent_report_qp_add(d->report, qp, fab_host_name(d->topo, peer), err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_WARNING, "reports will miss a QP: %s", err);
    }
}

static void on_qp_free(void *user, mrc_qp *qp)
{
    agent_daemon *d = user;
    agent_report_qp_remove(d->report, qp);
    agent_metrics_qp_add(&d->retired, qp); /* so that the sums over QPs never fall */
}

static void on_ev_event(void *user, const mrc_ev_event *event)
{
    agent_report_ev_event(((agent_daemon *)user)->report, event);
}

/* An EV's path as the controller names elements: p0-t0-1~p0-t1-0~p0-t0-3. */
static int path_name(void *user, const char *peer, uint32_t ev, unsigned port, char *dest,
                     size_t destlen)
{
    agent_daemon *d = user;
    fab_path path;
    size_t off = 0;
    (void)port;
    if (fab_path_of_ev(d->topo, agent_node_host(d->node), fab_host_find(d->topo, peer), ev,
                       &path) != 0) {
        return -1;
    }
    for (unsigned i = 0; i < path.nhops; i++) {
        fab_switch sw;
        fab_switch_get(d->topo, path.hops[i], &sw);
        int n = snprintf(dest + off, destlen - off, "%s%s", i ? "~" : "", sw.name);
        if (n < 0 || (size_t)n >= destlen - off) {
            return -1;
        }
        off += (size_t)n;
    }
    return 0;
}

static void on_report(evutil_socket_t fd, short what, void *arg)
{
    agent_daemon *d = arg;
    util_buf b = {0};
    (void)fd;
    (void)what;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    agent_floor_totals ft;
    agent_floor_get_totals(agent_node_floor(d->node), &ft);
    agent_report_set_floor(d->report, ft.peers, ft.kept, ft.entered);
    if (agent_report_build(d->report, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
                           &b) == 0 &&
        agent_ctl_report(d->ctl, b.s, b.len) == 0) {
        agent_report_commit(d->report); /* else the next report covers this interval too */
    }
    free(b.s);
}

static json_object *floor_json(const agent_daemon *d);

static void api_status(void *user, json_object *o)
{
    agent_daemon *d = user;
    json_object *ctl = json_object_new_object();
    json_object_object_add(ctl, "url", d->cfg.url ? json_object_new_string(d->cfg.url) : NULL);
    json_object_object_add(ctl, "connected", json_object_new_boolean(d->linked));
    json_object_object_add(ctl, "profile", json_object_new_boolean(d->prof != NULL));
    json_object_object_add(ctl, "denylist_version",
                           json_object_new_uint64(d->deny ? agent_deny_version(d->deny) : 0));
    if (d->ctl) {
        agent_ctl_stats st;
        agent_ctl_get_stats(d->ctl, &st);
        json_object_object_add(ctl, "reports_sent", json_object_new_uint64(st.reports_sent));
        json_object_object_add(ctl, "reports_dropped", json_object_new_uint64(st.reports_dropped));
        /* of the list in "url", the one talked to now, and the leader's epoch of the denylist */
        json_object_object_add(ctl, "current", json_object_new_string(agent_ctl_current(d->ctl)));
        json_object_object_add(ctl, "epoch", json_object_new_uint64(st.epoch));
    }
    json_object_object_add(o, "controller", ctl);
    json_object *ports = json_object_new_array();
    for (unsigned p = 0; p < d->nports; p++) {
        json_object_array_add(ports,
                              json_object_new_boolean(d->ports && agent_port_up(d->ports, p)));
    }
    json_object_object_add(o, "ports_up", ports);
    /* EVs by state over every QP: what the denylist and the engine's judgement left */
    static const char *const names[4] = {"good", "skip", "assumed_bad", "denied"};
    uint64_t count[4] = {0};
    const uint32_t *peers;
    size_t n;
    mrc_qp *const *qps = agent_node_qps(d->node, &peers, &n);
    for (size_t i = 0; i < n; i++) {
        mrc_qp_stats st;
        mrc_qp_get_stats(qps[i], &st);
        for (int k = 0; k < 4; k++) {
            count[k] += st.ev_count[k];
        }
    }
    json_object *evs = json_object_new_object();
    for (int k = 0; k < 4; k++) {
        json_object_object_add(evs, names[k], json_object_new_uint64(count[k]));
    }
    json_object_object_add(o, "ev_states", evs);
    json_object_object_add(o, "deny_floor", floor_json(d));
}

#define STATUS_FLOOR_PEERS 64 /* peers listed in the status's "deny_floor" */

/* The denylist floor for the status: its settings, the totals, and the peers held now. */
static json_object *floor_json(const agent_daemon *d)
{
    const agent_floor *f = agent_node_floor(d->node);
    const agent_floor_cfg *cfg = agent_floor_get_cfg(f);
    agent_floor_totals t;
    size_t n, listed = 0;
    const agent_floor_peer *p = agent_floor_peers(f, &n);
    agent_floor_get_totals(f, &t);
    json_object *o = json_object_new_object(), *held = json_object_new_array();
    json_object_object_add(o, "fraction", json_object_new_double(cfg->fraction));
    json_object_object_add(o, "planes", json_object_new_uint64(cfg->planes));
    json_object_object_add(o, "peers", json_object_new_uint64(t.peers));
    json_object_object_add(o, "kept", json_object_new_uint64(t.kept));
    json_object_object_add(o, "entered", json_object_new_uint64(t.entered));
    /* bounded: a deny-everything list holds every peer the host talks to */
    for (size_t i = 0; i < n && listed < STATUS_FLOOR_PEERS; i++) {
        if (!p[i].floored) {
            continue;
        }
        json_object *r = json_object_new_object();
        json_object_object_add(r, "peer",
                               json_object_new_string(fab_host_name(d->topo, p[i].peer)));
        json_object_object_add(r, "qps", json_object_new_uint64(p[i].qps));
        json_object_object_add(r, "evs", json_object_new_uint64(p[i].nevs));
        json_object_object_add(r, "allowed", json_object_new_uint64(p[i].allowed));
        json_object_object_add(r, "kept", json_object_new_uint64(p[i].kept));
        json_object_object_add(r, "entered", json_object_new_uint64(p[i].entered));
        json_object_array_add(held, r);
        listed++;
    }
    json_object_object_add(o, "held", held);
    if (t.peers > listed) {
        json_object_object_add(o, "held_not_listed", json_object_new_uint64(t.peers - listed));
    }
    return o;
}

/* A scrape of /metrics: the node's counters, then what the daemon holds. */
static void metrics_fill(void *user, agent_metrics_snapshot *s)
{
    agent_daemon *d = user;
    agent_metrics_from_node(d->node, &d->retired, s);
    s->host = fab_host_name(d->topo, agent_node_host(d->node));
    s->version = agent_version();
    s->mode = d->cfg.node.mode == AGENT_IO_ECMP ? "ecmp" : "srv6";
    for (unsigned p = 0; p < s->nports; p++) {
        s->port_up[p] = d->ports && agent_port_up(d->ports, p);
    }
    s->controller = d->cfg.url != NULL;
    s->connected = d->linked;
    s->denylist_version = d->deny ? agent_deny_version(d->deny) : 0;
    agent_floor_totals ft;
    agent_floor_get_totals(agent_node_floor(d->node), &ft);
    s->floor_peers = ft.peers;
    s->floor_kept = ft.kept;
    s->floor_entered = ft.entered;
    if (d->ctl) {
        agent_ctl_stats st;
        agent_ctl_get_stats(d->ctl, &st);
        s->reports_sent = st.reports_sent;
        s->reports_dropped = st.reports_dropped;
    }
}

int agent_daemon_new(const agent_daemon_cfg *cfg, agent_daemon **pd, char *err, size_t errlen)
{
    agent_daemon *d = util_xcalloc(1, sizeof(*d));
    struct event_base *base = cfg->node.base;
    const char *ifnames[FAB_MAX_PLANES];
    char names[FAB_MAX_PLANES][FAB_IFNAME_MAX];
    int rv;
    d->cfg = *cfg;
    d->topo = cfg->node.topo;
    d->nports = fab_topo_planes(d->topo);
    rv = agent_node_new(&cfg->node, &d->node, err, errlen);
    if (rv != 0) {
        goto out;
    }
    const char *host = fab_host_name(d->topo, cfg->node.host);
    agent_report_cfg rc = {.host = host,
                           .interval_s = cfg->report_s,
                           .max_bytes = cfg->report_max,
                           .path = path_name,
                           .user = d,
                           .ctx = agent_node_ctx(d->node)};
    rv = agent_report_new(&rc, &d->report, err, errlen);
    if (rv != 0) {
        goto out;
    }
    agent_node_hooks hooks = {
        .qp_new = on_qp_new, .qp_free = on_qp_free, .ev_event = on_ev_event, .user = d};
    agent_node_set_hooks(d->node, &hooks);
    for (unsigned p = 0; p < d->nports; p++) {
        fab_host_ifname(d->topo, cfg->node.host, p, names[p], sizeof(names[p]));
        ifnames[p] = names[p];
    }
    rv = agent_port_new(base, ifnames, d->nports, on_port, d, &d->ports);
    if (rv != 0) {
        snprintf(err, errlen, "watching the plane ports: %s", strerror(-rv));
        goto out;
    }
    for (unsigned p = 0; p < d->nports; p++) {
        if (!agent_port_up(d->ports, p)) {
            util_log(UTIL_LOG_WARNING, "port %u (%s) is down at start", p, ifnames[p]);
            mrc_port_set_state(agent_node_ctx(d->node), p, false, agent_now());
        }
    }
    if (cfg->url) {
        agent_ctl_port st[FAB_MAX_PLANES];
        port_states(d, st);
        agent_ctl_cfg cc = {.url = cfg->url,
                            .token = cfg->token,
                            .cafile = cfg->cafile,
                            .certfile = cfg->certfile,
                            .keyfile = cfg->keyfile,
                            .host = host,
                            .state_dir = cfg->state_dir,
                            .version = agent_version(),
                            .mode = cfg->node.mode == AGENT_IO_ECMP ? "ecmp" : "srv6",
                            .oob = cfg->oob,
                            .ports = st,
                            .nports = d->nports,
                            .on_profile = on_profile,
                            .on_denylist = on_denylist,
                            .on_link = on_link,
                            .user = d};
        rv = agent_ctl_new(base, &cc, &d->ctl);
        if (rv != 0) {
            snprintf(err, errlen, "the controller client: %s", strerror(-rv));
            goto out;
        }
        d->report_timer = event_new(base, -1, EV_PERSIST, on_report, d);
        struct timeval tv = {.tv_sec = cfg->report_s};
        event_add(d->report_timer, &tv);
    }
    rv = agent_api_new(d->node, cfg->api, api_status, d, &d->api, err, errlen);
    if (rv == 0 && cfg->metrics) {
        rv = agent_metrics_new(base, cfg->metrics, metrics_fill, d, &d->metrics, err, errlen);
        if (rv == 0) {
            util_log(UTIL_LOG_NOTICE, "metrics: GET /metrics on %s (port %u)", cfg->metrics,
                     (unsigned)agent_metrics_port(d->metrics));
        }
    }
out:
    if (rv != 0) {
        agent_daemon_free(d);
        return rv;
    }
    *pd = d;
    return 0;
}

void agent_daemon_free(agent_daemon *d)
{
    if (!d) {
        return;
    }
    agent_metrics_free(d->metrics);
    agent_api_free(d->api);
    if (d->report_timer) {
        event_free(d->report_timer);
    }
    agent_ctl_free(d->ctl);
    agent_port_free(d->ports);
    agent_node_free(d->node); /* its QPs' hooks still reach the report */
    agent_report_free(d->report);
    agent_profile_free(d->prof);
    agent_deny_free(d->deny);
    free(d);
}
