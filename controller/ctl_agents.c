/* SPDX-License-Identifier: MIT */
/* The agent registry. Registrations are few and rare (one per agent start), so each is
 * committed to the store under the registry's lock, which keeps the store and memory in the
 * same order; reports only touch memory: a slot per host of the fabric, made on first use. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <mrcfab/mrc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_agents.h"
#include "ctl_health.h"
#include "util.h"

#define STALE_INTERVALS 3
#define TEXT_MAX 64 /* version and oob, with their NUL */

static const char *const states[] = {"good", "skip", "assumed_bad", "denied"};
/* as mrc_ev_reason numbers them */
static const char *const reasons[] = {"ecn",      "trim", "always_skip", "timeout", "rotation",
                                      "probe_ok", "deny", "allow",       "loss"};
static const char *const peer_counters[CTL_PEER_COUNTERS] = {
    "qps",        "data_pkts_sent", "data_bytes_sent", "retx_pkts",
    "sacks_rcvd", "timeouts",       "ecn_echoes"};
static const char *const ev_counters[] = {"retx",   "acked",       "timeouts",    "ecn",
                                          "trims",  "transitions", "probes_sent", "probes_ok",
                                          "rtt_ns", "probe_rtt_ns"};
static const char *const left_out[] = {"peers", "evs", "transitions"};
static const char *const floor_counts[] = {"peers", "evs", "entered"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct port_state {
    uint8_t port;
    bool up;
} port_state;

/* A registration, as checked. */
typedef struct reg {
    uint32_t host;
    char version[TEXT_MAX], mode[8], oob[TEXT_MAX];
    unsigned nports;
    port_state ports[CTL_AGENT_MAX_PORTS];
} reg;

typedef struct agent {
    bool registered, reported;
    reg r;
    int64_t registered_ms, last_seen_ms, received_ms;
    uint64_t reports;
    ctl_report_sum last;
} agent;

struct ctl_agents {
    const fab_topo *topo;
    ctl_store *store;
    int64_t interval_ms;
    uint32_t nhosts;
    pthread_mutex_t lock;
    agent **by_host; /* NULL until the host registers or reports */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return b > (uint64_t)INT64_MAX - a ? (uint64_t)INT64_MAX : a + b;
}

/* A whole number from 0 to INT64_MAX (what JSON carries exactly here); false if not one. */
static bool get_count(json_object *v, uint64_t *out)
{
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
        json_object_get_uint64(v) > (uint64_t)INT64_MAX) {
        return false;
    }
    *out = (uint64_t)json_object_get_int64(v);
    return true;
}

static int find(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], s) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* A string of printable ASCII, 1 to |max| - 1 bytes, into |dest|. */
static bool get_text(json_object *v, char *dest, size_t max)
{
    if (!json_object_is_type(v, json_type_string)) {
        return false;
    }
    const char *s = json_object_get_string(v);
    size_t len = strlen(s);
    if (len == 0 || len >= max || (size_t)json_object_get_string_len(v) != len) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e) {
            return false;
        }
    }
    memcpy(dest, s, len + 1);
    return true;
}

/* "[IPv6]:PORT" or "IPv4:PORT", the port from 1 to 65535. */
static bool addr_port_ok(const char *s)
{
    char addr[INET6_ADDRSTRLEN + 1];
    const char *colon;
    int af;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':') {
            return false;
        }
        colon = end + 1;
        s++;
        af = AF_INET6;
    } else {
        colon = strrchr(s, ':');
        af = AF_INET;
    }
    size_t n = colon ? (size_t)(colon - s) - (af == AF_INET6) : sizeof(addr);
    unsigned char buf[sizeof(struct in6_addr)];
    if (!colon || n == 0 || n >= sizeof(addr)) {
        return false;
    }
    memcpy(addr, s, n);
    addr[n] = '\0';
    const char *p = colon + 1;
    unsigned long port = 0;
    size_t digits = strspn(p, "0123456789");
    if (digits == 0 || digits > 5 || p[digits] != '\0' || inet_pton(af, addr, buf) != 1) {
        return false;
    }
    port = strtoul(p, NULL, 10);
    return port >= 1 && port <= 65535;
}

/* Registration |o| into |g|: 0, or 400/403/422 with |why| (see ctl_agents_register). */
static int reg_parse(const ctl_agents *a, json_object *o, const char *only, reg *g, char *why,
                     size_t whylen)
{
    static const char *const keys[] = {"host", "version", "mode", "ports", "oob"};
    char host[96];
    json_object *v, *ports;
    memset(g, 0, sizeof(*g));
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(why, whylen, "a registration is a JSON object");
        return 400;
    }
    json_object_object_foreach(o, key, val)
    {
        (void)val;
        if (find(keys, COUNT(keys), key) < 0) {
            snprintf(why, whylen, "unknown member '%s' (host, version, mode, ports, oob)", key);
            return 400;
        }
    }
    if (!json_object_object_get_ex(o, "host", &v) || !get_text(v, host, sizeof(host))) {
        snprintf(why, whylen, "'host' is required: the agent's host, a string");
        return 400;
    }
    if (only && strcmp(only, host) != 0) {
        snprintf(why, whylen, "the token of '%s' may register only as '%s', not as '%s'", only,
                 only, host);
        return 403;
    }
    if (!json_object_object_get_ex(o, "version", &v) ||
        !get_text(v, g->version, sizeof(g->version))) {
        snprintf(why, whylen, "'version' is required: 1 to %d printable characters", TEXT_MAX - 1);
        return 400;
    }
    if (!json_object_object_get_ex(o, "mode", &v) || !json_object_is_type(v, json_type_string) ||
        (strcmp(json_object_get_string(v), "srv6") != 0 &&
         strcmp(json_object_get_string(v), "ecmp") != 0)) {
        snprintf(why, whylen, "'mode' is required: srv6 or ecmp");
        return 400;
    }
    snprintf(g->mode, sizeof(g->mode), "%s", json_object_get_string(v));
    if (!json_object_object_get_ex(o, "ports", &ports) ||
        !json_object_is_type(ports, json_type_array) ||
        json_object_array_length(ports) > CTL_AGENT_MAX_PORTS) {
        snprintf(why, whylen, "'ports' is required: an array of at most %d {\"port\", \"up\"}",
                 CTL_AGENT_MAX_PORTS);
        return 400;
    }
    unsigned planes = fab_topo_planes(a->topo), beyond = UINT32_MAX;
    g->nports = (unsigned)json_object_array_length(ports);
    for (unsigned i = 0; i < g->nports; i++) {
        json_object *p = json_object_array_get_idx(ports, i), *pn, *up;
        uint64_t port;
        if (!json_object_is_type(p, json_type_object) || json_object_object_length(p) != 2 ||
            !json_object_object_get_ex(p, "port", &pn) || !get_count(pn, &port) ||
            port >= CTL_AGENT_MAX_PORTS || !json_object_object_get_ex(p, "up", &up) ||
            !json_object_is_type(up, json_type_boolean)) {
            snprintf(why, whylen,
                     "ports[%u] must be {\"port\": 0 to %d, \"up\": true or false}, nothing more",
                     i, CTL_AGENT_MAX_PORTS - 1);
            return 400;
        }
        for (unsigned k = 0; k < i; k++) {
            if (g->ports[k].port == port) {
                snprintf(why, whylen, "ports[%u]: port %" PRIu64 " is listed twice", i, port);
                return 400;
            }
        }
        g->ports[i] = (port_state){(uint8_t)port, json_object_get_boolean(up)};
        beyond = port >= planes && beyond == UINT32_MAX ? i : beyond;
    }
    if (json_object_object_get_ex(o, "oob", &v) &&
        (!get_text(v, g->oob, sizeof(g->oob)) || !addr_port_ok(g->oob))) {
        snprintf(why, whylen,
                 "'oob' must be where the agent's mrc-perf setup listens: [IPv6]:PORT or "
                 "IPv4:PORT");
        return 400;
    }
    if ((g->host = fab_host_find(a->topo, host)) == FAB_NONE) {
        snprintf(why, whylen, "'%s' is no host of fabric '%s'", host, fab_topo_name(a->topo));
        return 422;
    }
    if (beyond != UINT32_MAX) {
        snprintf(why, whylen, "ports[%u]: fabric '%s' has %u planes, so ports 0 to %u", beyond,
                 fab_topo_name(a->topo), planes, planes - 1);
        return 422;
    }
    return 0;
}

/* |g| as the JSON the store keeps (a registration body). */
static json_object *reg_json(const ctl_agents *a, const reg *g)
{
    json_object *j = json_object_new_object(), *ports = json_object_new_array();
    json_object_object_add(j, "host", json_object_new_string(fab_host_name(a->topo, g->host)));
    json_object_object_add(j, "version", json_object_new_string(g->version));
    json_object_object_add(j, "mode", json_object_new_string(g->mode));
    for (unsigned i = 0; i < g->nports; i++) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "port", json_object_new_int(g->ports[i].port));
        json_object_object_add(p, "up", json_object_new_boolean(g->ports[i].up));
        json_object_array_add(ports, p);
    }
    json_object_object_add(j, "ports", ports);
    if (g->oob[0]) {
        json_object_object_add(j, "oob", json_object_new_string(g->oob));
    }
    return j;
}

static bool stale(const ctl_agents *a, const agent *ag, int64_t now)
{
    return now - ag->last_seen_ms > STALE_INTERVALS * a->interval_ms;
}

static void add_time(json_object *j, const char *key, int64_t ms)
{
    char t[40];
    ctl_time_str(ms, t, sizeof(t));
    json_object_object_add(j, key, json_object_new_string(t));
}

static json_object *counts_json(const char *const *names, const uint64_t *v, size_t n)
{
    json_object *j = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object_object_add(j, names[i], json_object_new_int64((int64_t)v[i]));
    }
    return j;
}

static json_object *nack_names_json(const uint64_t *v)
{
    const char *names[CTL_NACK_REASONS];
    for (int i = 0; i < CTL_NACK_REASONS; i++) {
        names[i] = mrc_nack_name(i);
    }
    return counts_json(names, v, CTL_NACK_REASONS);
}

static json_object *sum_json(const agent *ag)
{
    const ctl_report_sum *s = &ag->last;
    json_object *j = json_object_new_object();
    add_time(j, "time", s->time >= 0 ? s->time : ag->received_ms);
    add_time(j, "received", ag->received_ms);
    if (s->interval_s) {
        json_object_object_add(j, "interval_s", json_object_new_int64(s->interval_s));
    }
    json_object_object_add(j, "evs", json_object_new_int64(s->nevs));
    json_object_object_add(j, "peers", json_object_new_int64(s->npeers));
    json_object_object_add(j, "transitions", json_object_new_int64(s->ntransitions));
    if (s->truncated) {
        json_object_object_add(j, "truncated", counts_json(left_out, s->left_out, 3));
    }
    json_object *t = counts_json(peer_counters, s->peer, CTL_PEER_COUNTERS);
    json_object_object_add(t, "nacks_rcvd", nack_names_json(s->nacks_rcvd));
    json_object_object_add(t, "ev_states", counts_json(states, s->ev_states, 4));
    json_object_object_add(j, "totals", t);
    return j;
}

static json_object *agent_json(const ctl_agents *a, const agent *ag, int64_t now, bool report)
{
    json_object *j = reg_json(a, &ag->r);
    add_time(j, "registered", ag->registered_ms);
    add_time(j, "last_seen", ag->last_seen_ms);
    json_object_object_add(j, "reports", json_object_new_int64((int64_t)ag->reports));
    json_object_object_add(j, "stale", json_object_new_boolean(stale(a, ag, now)));
    /* in the listing too: an agent whose denylist floor holds peers is one to look at */
    if (ag->reported && ag->last.floored) {
        json_object_object_add(j, "deny_floor", counts_json(floor_counts, ag->last.floor, 3));
    }
    if (report && ag->reported) {
        json_object_object_add(j, "report", sum_json(ag));
    }
    return j;
}

static agent *slot(ctl_agents *a, uint32_t host)
{
    if (!a->by_host[host]) {
        a->by_host[host] = util_xcalloc(1, sizeof(agent));
    }
    return a->by_host[host];
}

typedef struct loading {
    ctl_agents *a;
    unsigned loaded, skipped;
} loading;

static void load_row(void *user, const char *host, const char *record, int64_t registered)
{
    loading *l = user;
    char why[256];
    reg g;
    json_object *o = json_tokener_parse(record);
    int status = o ? reg_parse(l->a, o, NULL, &g, why, sizeof(why)) : 400;
    json_object_put(o);
    if (status == 0 && strcmp(fab_host_name(l->a->topo, g.host), host) != 0) {
        snprintf(why, sizeof(why), "it is %s's", fab_host_name(l->a->topo, g.host));
        status = 400;
    }
    if (status != 0) {
        util_log(UTIL_LOG_WARNING, "the stored registration of agent %s does not fit: %s", host,
                 o ? why : "not JSON");
        l->skipped++;
        return;
    }
    agent *ag = slot(l->a, g.host);
    ag->registered = true;
    ag->r = g;
    ag->registered_ms = ag->last_seen_ms = registered;
    l->loaded++;
}

int ctl_agents_open(const fab_topo *topo, ctl_store *store, int64_t interval_ms,
                    ctl_agents **pagents, char *err, size_t errlen)
{
    ctl_agents *a = util_xcalloc(1, sizeof(*a));
    a->topo = topo;
    a->store = store;
    a->interval_ms = interval_ms;
    a->nhosts = fab_topo_nhosts(topo);
    a->by_host = util_xcalloc(a->nhosts + 1, sizeof(*a->by_host));
    pthread_mutex_init(&a->lock, NULL);
    loading l = {a, 0, 0};
    if (ctl_store_agent_all(store, load_row, &l) != 0) {
        snprintf(err, errlen, "the agents' registrations could not be read from the store");
        ctl_agents_free(a);
        return -EIO;
    }
    if (l.loaded || l.skipped) {
        util_log(UTIL_LOG_INFO, "agents: %u registered, %u left out", l.loaded, l.skipped);
    }
    *pagents = a;
    return 0;
}

void ctl_agents_free(ctl_agents *a)
{
    if (a) {
        for (uint32_t h = 0; h < a->nhosts; h++) {
            free(a->by_host[h]);
        }
        free(a->by_host);
        pthread_mutex_destroy(&a->lock);
        free(a);
    }
}

int ctl_agents_register(ctl_agents *a, json_object *body, const char *only, int64_t now,
                        json_object **pout, char *why, size_t whylen)
{
    reg g;
    int status = reg_parse(a, body, only, &g, why, whylen);
    if (status != 0) {
        return status;
    }
    json_object *rec = reg_json(a, &g);
    pthread_mutex_lock(&a->lock);
    int rv = ctl_store_agent_put(a->store, fab_host_name(a->topo, g.host),
                                 json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN), now);
    if (rv != 0) {
        snprintf(why, whylen, "%s; the registration was not committed; nothing was changed",
                 ctl_store_strerror(rv));
        status = 503;
    } else {
        agent *ag = slot(a, g.host);
        ag->registered = true;
        ag->r = g;
        ag->registered_ms = ag->last_seen_ms = now;
        *pout = agent_json(a, ag, now, false);
    }
    pthread_mutex_unlock(&a->lock);
    json_object_put(rec);
    return status;
}

/* A {reason: count} object of NACK reasons into |v| (added); false if not one. */
static bool nacks_sum(json_object *o, uint64_t v[CTL_NACK_REASONS])
{
    if (!json_object_is_type(o, json_type_object)) {
        return false;
    }
    json_object_object_foreach(o, key, val)
    {
        int k = -1;
        uint64_t n;
        for (int i = 0; i < CTL_NACK_REASONS && k < 0; i++) {
            k = strcmp(mrc_nack_name(i), key) == 0 ? i : -1;
        }
        if (k < 0 || !get_count(val, &n)) {
            return false;
        }
        v[k] = sat_add(v[k], n);
    }
    return true;
}

#define NACKS_WHY                                                                                  \
    "an object of NACK reason (trimmed, trimmed_lasthop, no_bitmap, no_pkt_buffer, "               \
    "no_resource, psn_oor_window, unexp_event) to count"

/* An EV's members beyond its evidence. */
static int ev_check(json_object *e, size_t i, char *why, size_t whylen)
{
    json_object *v;
    uint64_t n, scratch[CTL_NACK_REASONS] = {0};
    if (!json_object_is_type(e, json_type_object)) {
        return 0; /* the health engine's to refuse */
    }
    for (size_t k = 0; k < COUNT(ev_counters); k++) {
        if (json_object_object_get_ex(e, ev_counters[k], &v) && !get_count(v, &n)) {
            snprintf(why, whylen, "evs[%zu]: '%s' must be a whole number of 0 or more", i,
                     ev_counters[k]);
            return 400;
        }
    }
    if (json_object_object_get_ex(e, "nacks", &v) && !nacks_sum(v, scratch)) {
        snprintf(why, whylen, "evs[%zu]: 'nacks' must be " NACKS_WHY, i);
        return 400;
    }
    char path[256];
    if (json_object_object_get_ex(e, "path", &v) && !get_text(v, path, sizeof(path))) {
        snprintf(why, whylen, "evs[%zu]: 'path' must be 1 to %zu printable characters", i,
                 sizeof(path) - 1);
        return 400;
    }
    return 0;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* One of "peers": 0 with its counters added to |s| and its host in |*phost|, or 400/422. */
static int peer_check(const fab_topo *topo, json_object *p, size_t i, ctl_report_sum *s,
                      uint32_t *phost, char *why, size_t whylen)
{
    json_object *v;
    if (!json_object_is_type(p, json_type_object) || !json_object_object_get_ex(p, "peer", &v) ||
        !json_object_is_type(v, json_type_string)) {
        snprintf(why, whylen, "peers[%zu] must be an object with 'peer' (a host)", i);
        return 400;
    }
    const char *peer = json_object_get_string(v);
    json_object_object_foreach(p, key, val)
    {
        int k = find(peer_counters, CTL_PEER_COUNTERS, key);
        uint64_t n;
        if (k >= 0) {
            if (!get_count(val, &n)) {
                snprintf(why, whylen, "peers[%zu]: '%s' must be a whole number of 0 or more", i,
                         key);
                return 400;
            }
            s->peer[k] = sat_add(s->peer[k], n);
        } else if (strcmp(key, "nacks_rcvd") == 0) {
            if (!nacks_sum(val, s->nacks_rcvd)) {
                snprintf(why, whylen, "peers[%zu]: 'nacks_rcvd' must be " NACKS_WHY, i);
                return 400;
            }
        } else if (strcmp(key, "ev_states") == 0) {
            bool ok = json_object_is_type(val, json_type_object);
            uint64_t add[4] = {0};
            if (ok) {
                json_object_object_foreach(val, st, cnt)
                {
                    int x = find(states, 4, st);
                    ok = ok && x >= 0 && get_count(cnt, &add[x]);
                }
            }
            if (!ok) {
                snprintf(why, whylen,
                         "peers[%zu]: 'ev_states' must be an object of state (good, skip, "
                         "assumed_bad, denied) to how many EVs are in it",
                         i);
                return 400;
            }
            for (int x = 0; x < 4; x++) {
                s->ev_states[x] = sat_add(s->ev_states[x], add[x]);
            }
        } else if (strcmp(key, "peer") != 0) {
            snprintf(why, whylen,
                     "peers[%zu]: unknown member '%s' (peer, qps, data_pkts_sent, "
                     "data_bytes_sent, retx_pkts, sacks_rcvd, nacks_rcvd, timeouts, ecn_echoes, "
                     "ev_states)",
                     i, key);
            return 400;
        }
    }
    if ((*phost = fab_host_find(topo, peer)) == FAB_NONE) {
        snprintf(why, whylen, "peers[%zu]: '%s' is no host of fabric '%s'", i, peer,
                 fab_topo_name(topo));
        return 422;
    }
    return 0;
}

static int state_of(json_object *t, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(t, key, &v) && json_object_is_type(v, json_type_string)
               ? find(states, 4, json_object_get_string(v))
               : -1;
}

/* One of "transitions": 0, or 400/422. */
static int transition_check(const fab_topo *topo, json_object *t, size_t i, char *why,
                            size_t whylen)
{
    static const char *const keys[] = {"time", "peer", "ev", "from", "to", "reason"};
    json_object *v, *peer, *ev;
    uint64_t ns, n;
    bool ok = json_object_is_type(t, json_type_object) &&
              json_object_object_length(t) == (int)COUNT(keys);
    if (ok) {
        json_object_object_foreach(t, key, val)
        {
            (void)val;
            ok = ok && find(keys, COUNT(keys), key) >= 0;
        }
    }
    int from = ok ? state_of(t, "from") : -1, to = ok ? state_of(t, "to") : -1;
    if (!ok || !json_object_object_get_ex(t, "time", &v) || !get_count(v, &ns) ||
        !json_object_object_get_ex(t, "peer", &peer) ||
        !json_object_is_type(peer, json_type_string) || !json_object_object_get_ex(t, "ev", &ev) ||
        !get_count(ev, &n) || n > UINT32_MAX || from < 0 || to < 0 ||
        !json_object_object_get_ex(t, "reason", &v) || !json_object_is_type(v, json_type_string) ||
        find(reasons, COUNT(reasons), json_object_get_string(v)) < 0) {
        snprintf(why, whylen,
                 "transitions[%zu] must be {\"time\": ns, \"peer\": host, \"ev\": 32-bit EV, "
                 "\"from\" and \"to\": good, skip, assumed_bad or denied, \"reason\": ecn, "
                 "trim, always_skip, timeout, rotation, probe_ok, deny, allow or loss}",
                 i);
        return 400;
    }
    if (from == to) {
        snprintf(why, whylen, "transitions[%zu]: 'from' and 'to' are both %s", i, states[to]);
        return 400;
    }
    if (fab_host_find(topo, json_object_get_string(peer)) == FAB_NONE) {
        snprintf(why, whylen, "transitions[%zu]: '%s' is no host of fabric '%s'", i,
                 json_object_get_string(peer), fab_topo_name(topo));
        return 422;
    }
    const fab_plan *plan = fab_topo_plan(topo);
    unsigned p = fab_ev_plane(plan, (uint32_t)n);
    if (p >= fab_topo_planes(topo) || fab_ev_t1(plan, (uint32_t)n) >= fab_topo_nt1(topo, p)) {
        snprintf(why, whylen, "transitions[%zu]: the EV names no plane and T1 of the fabric", i);
        return 422;
    }
    return 0;
}

/* |key| of |r|, an array of at most |max|: 1 with it in |*pa|, 0 absent, -1 not one. */
static int get_array(json_object *r, const char *key, size_t max, json_object **pa)
{
    if (!json_object_object_get_ex(r, key, pa)) {
        return 0;
    }
    return json_object_is_type(*pa, json_type_array) && json_object_array_length(*pa) <= max ? 1
                                                                                             : -1;
}

int ctl_agents_report_check(const fab_topo *topo, json_object *r, ctl_report_sum *s, char *why,
                            size_t whylen)
{
    json_object *v, *evs, *peers, *tr;
    uint64_t n;
    uint32_t *hosts = NULL;
    int status = 400;
    memset(s, 0, sizeof(*s));
    s->time = -1;
    if (!json_object_is_type(r, json_type_object)) {
        snprintf(why, whylen, "the report must be a JSON object");
        goto out;
    }
    if (json_object_object_get_ex(r, "interval_s", &v)) {
        if (!get_count(v, &n) || n == 0 || n > 86400) {
            snprintf(why, whylen, "'interval_s' must be a whole number of seconds from 1 to 86400");
            goto out;
        }
        s->interval_s = (int64_t)n;
    }
    if (json_object_object_get_ex(r, "time", &v) &&
        (!json_object_is_type(v, json_type_string) ||
         (s->time = ctl_time_parse(json_object_get_string(v))) < 0)) {
        snprintf(why, whylen, "'time' must be RFC 3339 UTC, like 2026-11-30T02:00:00.250Z");
        goto out;
    }
    int got = get_array(r, "evs", CTL_REPORT_MAX_EVS, &evs);
    if (got < 0) {
        snprintf(why, whylen, "'evs' must be an array of at most %d", CTL_REPORT_MAX_EVS);
        goto out;
    }
    s->nevs = got ? (uint32_t)json_object_array_length(evs) : 0;
    for (size_t i = 0; i < s->nevs; i++) {
        if ((status = ev_check(json_object_array_get_idx(evs, i), i, why, whylen)) != 0) {
            goto out;
        }
    }
    status = 400;
    if ((got = get_array(r, "peers", CTL_REPORT_MAX_PEERS, &peers)) < 0) {
        snprintf(why, whylen, "'peers' must be an array of at most %d", CTL_REPORT_MAX_PEERS);
        goto out;
    }
    s->npeers = got ? (uint32_t)json_object_array_length(peers) : 0;
    hosts = util_xmalloc((s->npeers + 1) * sizeof(*hosts));
    for (size_t i = 0; i < s->npeers; i++) {
        status =
            peer_check(topo, json_object_array_get_idx(peers, i), i, s, &hosts[i], why, whylen);
        if (status != 0) {
            goto out;
        }
    }
    status = 400;
    /* a peer twice would count twice in the totals */
    qsort(hosts, s->npeers, sizeof(*hosts), cmp_u32);
    for (size_t i = 1; i < s->npeers; i++) {
        if (hosts[i] == hosts[i - 1]) {
            snprintf(why, whylen, "peers: '%s' is listed twice", fab_host_name(topo, hosts[i]));
            goto out;
        }
    }
    if ((got = get_array(r, "transitions", CTL_REPORT_MAX_TRANSITIONS, &tr)) < 0) {
        snprintf(why, whylen, "'transitions' must be an array of at most %d",
                 CTL_REPORT_MAX_TRANSITIONS);
        goto out;
    }
    s->ntransitions = got ? (uint32_t)json_object_array_length(tr) : 0;
    for (size_t i = 0; i < s->ntransitions; i++) {
        status = transition_check(topo, json_object_array_get_idx(tr, i), i, why, whylen);
        if (status != 0) {
            goto out;
        }
    }
    status = 400;
    if (json_object_object_get_ex(r, "truncated", &v)) {
        bool ok = json_object_is_type(v, json_type_object);
        if (ok) {
            json_object_object_foreach(v, key, val)
            {
                int k = find(left_out, COUNT(left_out), key);
                ok = ok && k >= 0 && get_count(val, &s->left_out[k]);
            }
        }
        if (!ok) {
            snprintf(why, whylen,
                     "'truncated' must be an object of what the agent left out (peers, evs, "
                     "transitions) to how many");
            goto out;
        }
        s->truncated = true;
    }
    if (json_object_object_get_ex(r, "deny_floor", &v)) {
        bool ok = json_object_is_type(v, json_type_object);
        if (ok) {
            json_object_object_foreach(v, key, val)
            {
                int k = find(floor_counts, COUNT(floor_counts), key);
                ok = ok && k >= 0 && get_count(val, &s->floor[k]);
            }
        }
        if (!ok) {
            snprintf(why, whylen,
                     "'deny_floor' must be an object of the agent's denylist floor (peers, evs, "
                     "entered) to how many");
            goto out;
        }
        s->floored = true;
    }
    status = 0;
out:
    free(hosts);
    return status;
}

void ctl_agents_report_note(ctl_agents *a, const char *host, const ctl_report_sum *sum, int64_t now)
{
    uint32_t h = fab_host_find(a->topo, host);
    if (h == FAB_NONE) {
        return;
    }
    pthread_mutex_lock(&a->lock);
    agent *ag = slot(a, h);
    ag->reported = true;
    ag->last = *sum;
    ag->received_ms = ag->last_seen_ms = now;
    ag->reports++;
    pthread_mutex_unlock(&a->lock);
}

json_object *ctl_agents_list(ctl_agents *a, uint64_t offset, uint64_t limit, int64_t now)
{
    json_object *items = json_object_new_array(), *j = json_object_new_object();
    uint64_t total = 0, nstale = 0;
    pthread_mutex_lock(&a->lock);
    for (uint32_t h = 0; h < a->nhosts; h++) {
        const agent *ag = a->by_host[h];
        if (!ag || !ag->registered) {
            continue;
        }
        if (total >= offset && total - offset < limit) {
            json_object_array_add(items, agent_json(a, ag, now, false));
        }
        total++;
        nstale += stale(a, ag, now);
    }
    pthread_mutex_unlock(&a->lock);
    json_object_object_add(j, "total", json_object_new_int64((int64_t)total));
    json_object_object_add(j, "fresh", json_object_new_int64((int64_t)(total - nstale)));
    json_object_object_add(j, "stale", json_object_new_int64((int64_t)nstale));
    json_object_object_add(j, "offset", json_object_new_int64((int64_t)offset));
    json_object_object_add(j, "items", items);
    return j;
}

json_object *ctl_agents_get(ctl_agents *a, const char *host, int64_t now)
{
    uint32_t h = fab_host_find(a->topo, host);
    json_object *j = NULL;
    if (h == FAB_NONE) {
        return NULL;
    }
    pthread_mutex_lock(&a->lock);
    if (a->by_host[h] && a->by_host[h]->registered) {
        j = agent_json(a, a->by_host[h], now, true);
    }
    pthread_mutex_unlock(&a->lock);
    return j;
}

void ctl_agents_counts(ctl_agents *a, int64_t now, uint64_t *pfresh, uint64_t *pstale)
{
    uint64_t fresh = 0, old = 0;
    pthread_mutex_lock(&a->lock);
    for (uint32_t h = 0; h < a->nhosts; h++) {
        const agent *ag = a->by_host[h];
        if (ag && ag->registered) {
            bool s = stale(a, ag, now);
            old += s;
            fresh += !s;
        }
    }
    pthread_mutex_unlock(&a->lock);
    *pfresh = fresh;
    *pstale = old;
}
