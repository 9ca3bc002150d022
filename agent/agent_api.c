/* SPDX-License-Identifier: MIT */
/* The agent's local API over a unix socket: one JSON object per line each way. */
#include "agent_api.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "agent_perf.h"
#include "agent_ring.h"
#include "util.h"

#define API_MAX_LINE 65536

struct agent_api {
    agent_node *node;
    struct evconnlistener *lis;
    agent_api_status_fn status;
    void *user;
};

typedef struct api_conn {
    agent_api *api;
    struct bufferevent *bev;
    agent_perf *perf;
    agent_ring *ring;
    bool running;
} api_conn;

static socklen_t unix_addr(const char *path, struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(sa->sun_path)) {
        return 0;
    }
    memcpy(sa->sun_path, path, n);
    if (path[0] == '@') {
        sa->sun_path[0] = '\0';
    }
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

static void reply(api_conn *c, json_object *o)
{
    const char *s =
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    evbuffer_add_printf(bufferevent_get_output(c->bev), "%s\n", s);
    json_object_put(o);
}

static void reply_error(api_conn *c, const char *msg)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(msg));
    reply(c, o);
}

static void conn_free(api_conn *c)
{
    agent_perf_free(c->perf);
    agent_ring_free(c->ring);
    bufferevent_free(c->bev);
    free(c);
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static int64_t get_int(json_object *o, const char *key, int64_t def)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) {
        return def;
    }
    return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

static json_object *hello(const agent_api *api)
{
    const fab_topo *topo = agent_node_topo(api->node);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "host",
                           json_object_new_string(fab_host_name(topo, agent_node_host(api->node))));
    json_object_object_add(o, "version", json_object_new_string(agent_version()));
    json_object_object_add(o, "mtu", json_object_new_uint64(agent_node_mtu(api->node)));
    return o;
}

static json_object *status(const agent_api *api)
{
    json_object *o = hello(api);
    agent_io_stats st;
    mrc_ctx_stats cs;
    agent_io_get_stats(agent_node_io(api->node), &st);
    mrc_ctx_get_stats(agent_node_ctx(api->node), &cs);
    json_object *io = json_object_new_object();
    json_object_object_add(io, "rx_pkts", json_object_new_uint64(st.rx_pkts));
    json_object_object_add(io, "tx_pkts", json_object_new_uint64(st.tx_pkts));
    json_object_object_add(io, "rx_garbage", json_object_new_uint64(st.rx_garbage));
    json_object_object_add(io, "tx_unmapped", json_object_new_uint64(st.tx_unmapped));
    json_object_object_add(io, "tx_errors", json_object_new_uint64(st.tx_errors));
    json_object_object_add(io, "tx_blocked", json_object_new_uint64(st.tx_blocked));
    json_object_object_add(io, "tx_frames", json_object_new_uint64(st.tx_frames));
    json_object_object_add(io, "engine_garbage", json_object_new_uint64(cs.garbage));
    /* by the wire fault mrc.h names: short, ip, port, opcode, pad, icrc, field */
    json_object *gb = json_object_new_array();
    for (unsigned i = 0; i < sizeof(cs.garbage_by_err) / sizeof(cs.garbage_by_err[0]); i++) {
        json_object_array_add(gb, json_object_new_uint64(cs.garbage_by_err[i]));
    }
    json_object_object_add(io, "engine_garbage_by_err", gb);
    json_object_object_add(io, "engine_no_qp", json_object_new_uint64(cs.no_qp));
    json_object_object_add(io, "psu_sent", json_object_new_uint64(cs.psu_sent));
    json_object_object_add(io, "psu_rcvd", json_object_new_uint64(cs.psu_rcvd));
    json_object_object_add(io, "ep_reqs_rcvd", json_object_new_uint64(cs.ep_reqs_rcvd));
    json_object *rxp = json_object_new_array(), *txp = json_object_new_array();
    for (unsigned p = 0; p < fab_topo_planes(agent_node_topo(api->node)); p++) {
        json_object_array_add(rxp, json_object_new_uint64(st.rx_port[p]));
        json_object_array_add(txp, json_object_new_uint64(st.tx_port[p]));
    }
    json_object_object_add(io, "rx_port", rxp);
    json_object_object_add(io, "tx_port", txp);
    json_object_object_add(o, "io", io);
    const uint32_t *peers;
    size_t n;
    agent_node_qps(api->node, &peers, &n);
    json_object_object_add(o, "qps", json_object_new_uint64(n));
    if (api->status) {
        api->status(api->user, o);
    }
    return o;
}

/* Every EV of every QP: who it leads to, its path and its state. */
static json_object *evs(const agent_api *api)
{
    static const char *const states[4] = {"good", "skip", "assumed_bad", "denied"};
    const fab_topo *topo = agent_node_topo(api->node);
    const fab_plan *plan = fab_topo_plan(topo);
    const uint32_t *peers;
    size_t n;
    mrc_qp *const *qps = agent_node_qps(api->node, &peers, &n);
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        for (unsigned k = 0; k < mrc_qp_ev_count(qps[i]); k++) {
            mrc_ev_stats st;
            if (mrc_qp_get_ev_stats(qps[i], k, &st) != 0) {
                continue;
            }
            json_object *o = json_object_new_object();
            json_object_object_add(o, "qpn", json_object_new_uint64(mrc_qp_num(qps[i])));
            json_object_object_add(o, "peer",
                                   json_object_new_string(fab_host_name(topo, peers[i])));
            json_object_object_add(o, "ev", json_object_new_uint64(st.ev));
            json_object_object_add(o, "plane", json_object_new_uint64(fab_ev_plane(plan, st.ev)));
            json_object_object_add(o, "t1", json_object_new_uint64(fab_ev_t1(plan, st.ev)));
            json_object_object_add(o, "state", json_object_new_string(states[st.state & 3]));
            json_object_object_add(o, "sent", json_object_new_uint64(st.pkts_sent));
            json_object_object_add(o, "lost", json_object_new_uint64(st.lost + st.timeouts));
            json_object_object_add(o, "probes_sent", json_object_new_uint64(st.probes_sent));
            json_object_object_add(o, "probes_ok", json_object_new_uint64(st.probes_ok));
            json_object_object_add(o, "probes_lost", json_object_new_uint64(st.probes_lost));
            json_object_array_add(a, o);
        }
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "evs", a);
    return o;
}

static void run_done(void *user, json_object *result)
{
    api_conn *c = user;
    c->running = false;
    reply(c, json_object_get(result));
}

static void ring_progress(void *user, json_object *o)
{
    reply(user, json_object_get(o));
}

static void ring_create(api_conn *c, json_object *req)
{
    const fab_topo *topo = agent_node_topo(c->api->node);
    const char *prev = get_str(req, "prev"), *next = get_str(req, "next");
    uint32_t p = prev ? fab_host_find(topo, prev) : FAB_NONE;
    uint32_t n = next ? fab_host_find(topo, next) : FAB_NONE;
    int64_t rank = get_int(req, "rank", -1), ranks = get_int(req, "ranks", -1),
            size = get_int(req, "size", 1 << 20);
    char err[256];
    if (c->perf || c->ring) {
        reply_error(c, "this connection already has a session");
    } else if (p == FAB_NONE || n == FAB_NONE) {
        reply_error(c, "\"prev\" and \"next\" must name hosts of the fabric");
    } else if (rank < 0 || ranks < 2 || rank >= ranks || ranks > 128 || size < 1) {
        reply_error(c, "\"rank\" must be 0..ranks-1 of \"ranks\" (2..128), \"size\" positive");
    } else {
        agent_ring_cfg cfg = {.rank = (unsigned)rank, .n = (unsigned)ranks, .size = (uint64_t)size};
        if (agent_ring_new(c->api->node, p, n, &cfg, &c->ring, err, sizeof(err)) != 0) {
            reply_error(c, err);
        } else {
            reply(c, agent_ring_local(c->ring));
        }
    }
}

static void ring_op(api_conn *c, const char *op, json_object *req)
{
    json_object *next, *prev;
    char err[256];
    if (strcmp(op, "ring_connect") == 0) {
        if (!json_object_object_get_ex(req, "next", &next) ||
            !json_object_object_get_ex(req, "prev", &prev)) {
            reply_error(c, "\"ring_connect\" needs the neighbours' \"next\" and \"prev\"");
        } else if (agent_ring_connect(c->ring, next, prev, err, sizeof(err)) != 0) {
            reply_error(c, err);
        } else {
            reply(c, json_object_new_object());
            agent_io_kick(agent_node_io(c->api->node));
        }
    } else if (strcmp(op, "ring_run") == 0) {
        int64_t ms = get_int(req, "duration_ms", 5000), iters = get_int(req, "iters", 0),
                every = get_int(req, "progress_ms", 0);
        if (ms < 0 || iters < 0 || every < 0 || ms > 86400000) {
            reply_error(c, "\"duration_ms\", \"iters\" and \"progress_ms\" are whole numbers");
        } else if (c->running || agent_ring_run(c->ring, (uint64_t)ms * 1000000ull, (uint64_t)iters,
                                                (uint64_t)every * 1000000ull,
                                                every ? ring_progress : NULL, run_done, c) != 0) {
            reply_error(c, "the ring runs once connected, one run at a time");
        } else {
            c->running = true;
        }
    } else if (strcmp(op, "ring_stop") == 0) {
        /* the answer is the run's result, once every rank has finished the iteration the
         * stop can still reach */
        if (agent_ring_stop(c->ring) != 0) {
            reply_error(c, "the ring is not running");
        }
    } else if (strcmp(op, "stats") == 0) {
        reply(c, agent_ring_stats(c->ring));
    } else {
        reply_error(c, "unknown \"op\"");
    }
}

static void create(api_conn *c, json_object *req)
{
    static const char *const roles[] = {"source", "sink", "ping", "pong"};
    const fab_topo *topo = agent_node_topo(c->api->node);
    const char *peer = get_str(req, "peer"), *role = get_str(req, "role");
    char err[256];
    agent_perf_cfg cfg = {.qps = (unsigned)get_int(req, "qps", 1),
                          .size = (uint32_t)get_int(req, "size", 65536),
                          .slots = (unsigned)get_int(req, "slots", 16)};
    uint32_t host = peer ? fab_host_find(topo, peer) : FAB_NONE;
    int r = -1;
    for (int k = 0; role && k < 4; k++) {
        r = strcmp(role, roles[k]) == 0 ? k : r;
    }
    if (c->perf || c->ring) {
        reply_error(c, "this connection already has a session");
    } else if (host == FAB_NONE) {
        reply_error(c, "\"peer\" must name a host of the fabric");
    } else if (r < 0) {
        reply_error(c, "\"role\" must be source, sink, ping or pong");
    } else if (get_int(req, "qps", 1) < 1 || get_int(req, "size", 1) < 1 ||
               get_int(req, "slots", 2) < 2) {
        reply_error(c, "\"qps\", \"size\" and \"slots\" must be positive whole numbers");
    } else if ((cfg.role = (agent_perf_role)r,
                agent_perf_new(c->api->node, host, &cfg, &c->perf, err, sizeof(err))) != 0) {
        reply_error(c, err);
    } else {
        json_object *o = hello(c->api);
        json_object_object_add(o, "qps", agent_perf_local(c->perf));
        reply(c, o);
    }
}

static void handle(api_conn *c, json_object *req)
{
    const char *op = get_str(req, "op");
    char err[256];
    if (!op) {
        reply_error(c, "a request is an object with \"op\"");
    } else if (strcmp(op, "hello") == 0) {
        reply(c, hello(c->api));
    } else if (strcmp(op, "status") == 0) {
        reply(c, status(c->api));
    } else if (strcmp(op, "evs") == 0) {
        reply(c, evs(c->api));
    } else if (strcmp(op, "create") == 0) {
        create(c, req);
    } else if (strcmp(op, "ring_create") == 0) {
        ring_create(c, req);
    } else if (c->ring) {
        ring_op(c, op, req);
    } else if (!c->perf) {
        reply_error(c, "no session: \"create\" first");
    } else if (strcmp(op, "connect") == 0) {
        json_object *qps;
        if (!json_object_object_get_ex(req, "qps", &qps)) {
            reply_error(c, "\"connect\" needs the peer's \"qps\"");
        } else if (agent_perf_connect(c->perf, qps, err, sizeof(err)) != 0) {
            reply_error(c, err);
        } else {
            reply(c, json_object_new_object());
            agent_io_kick(agent_node_io(c->api->node));
        }
    } else if (strcmp(op, "run") == 0) {
        int64_t ms = get_int(req, "duration_ms", 5000), iters = get_int(req, "iters", 0);
        if (ms < 0 || iters < 0 || ms > 86400000) {
            reply_error(c, "\"duration_ms\" (up to a day) and \"iters\" must be whole numbers");
        } else if (c->running || agent_perf_run(c->perf, (uint64_t)ms * 1000000ull, (uint64_t)iters,
                                                run_done, c) != 0) {
            reply_error(c, "only a connected source or ping runs, and one run at a time");
        } else {
            c->running = true;
        }
    } else if (strcmp(op, "stats") == 0) {
        reply(c, agent_perf_stats(c->perf));
    } else {
        reply_error(c, "unknown \"op\"");
    }
}

static void on_read(struct bufferevent *bev, void *arg)
{
    api_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    char *line;
    size_t len;
    while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF))) {
        json_tokener *tok = json_tokener_new();
        json_object *req = json_tokener_parse_ex(tok, line, (int)len);
        bool whole = req && json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        free(line);
        if (!whole || !json_object_is_type(req, json_type_object)) {
            reply_error(c, "each line must be one JSON object");
        } else {
            handle(c, req);
        }
        json_object_put(req);
    }
    if (evbuffer_get_length(in) > API_MAX_LINE) {
        util_log(UTIL_LOG_WARNING, "api: a request line over %d bytes: closing", API_MAX_LINE);
        conn_free(c);
    }
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        conn_free(arg);
    }
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    agent_api *api = arg;
    (void)lis;
    (void)sa;
    (void)salen;
    api_conn *c = util_xcalloc(1, sizeof(*c));
    c->api = api;
    c->bev = bufferevent_socket_new(evconnlistener_get_base(api->lis), fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

int agent_api_new(agent_node *node, const char *path, agent_api_status_fn st, void *user,
                  agent_api **papi, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    socklen_t len = unix_addr(path, &sa);
    if (!len) {
        snprintf(err, errlen, "API socket %s: empty or too long", path);
        return -EINVAL;
    }
    if (path[0] != '@') {
        unlink(path);
    }
    agent_api *api = util_xcalloc(1, sizeof(*api));
    api->node = node;
    api->status = st;
    api->user = user;
    api->lis = evconnlistener_new_bind(agent_node_base(node), on_accept, api,
                                       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
                                       (struct sockaddr *)&sa, (int)len);
    if (!api->lis) {
        int rv = -errno;
        snprintf(err, errlen, "API socket %s: %s (is another agent running here?)", path,
                 strerror(errno));
        free(api);
        return rv ? rv : -EIO;
    }
    *papi = api;
    return 0;
}

void agent_api_free(agent_api *api)
{
    if (!api) {
        return;
    }
    evconnlistener_free(api->lis);
    free(api);
}

int agent_api_connect(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    socklen_t len = unix_addr(path, &sa);
    int fd = len ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) != 0) {
        int rv = len ? -errno : -EINVAL;
        /* an abstract socket is one per network namespace: the usual miss is the namespace */
        snprintf(err, errlen,
                 "no agent at %s (%s): start mrc-agent on this host, or run this in the host's "
                 "network namespace (in the lab: ip netns exec PREFIX-HOST mrc-perf ...), or "
                 "give the agent's socket with --agent",
                 path, strerror(-rv));
        if (fd >= 0) {
            close(fd);
        }
        return rv;
    }
    return fd;
}

/* The next line the agent sends; read byte by byte so that nothing past it is taken. */
int agent_api_read(int fd, json_object **pans, char *err, size_t errlen)
{
    size_t cap = 4096, len = 0;
    char *buf = util_xmalloc(cap);
    int rv = 0;
    for (;;) {
        if (len + 1 == cap) {
            buf = util_xrealloc(buf, cap *= 2);
        }
        ssize_t k = read(fd, buf + len, 1);
        if (k <= 0) {
            rv = k < 0 ? -errno : -ECONNRESET;
            snprintf(err, errlen, "agent: %s", k < 0 ? strerror(errno) : "closed the connection");
            goto out;
        }
        if (buf[len] == '\n') {
            break;
        }
        len++;
    }
    buf[len] = '\0';
    *pans = json_tokener_parse(buf);
    if (!*pans) {
        rv = -EPROTO;
        snprintf(err, errlen, "agent: an answer that is not JSON");
    }
out:
    free(buf);
    return rv;
}

int agent_api_call(int fd, json_object *req, json_object **pans, char *err, size_t errlen)
{
    const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    size_t n = strlen(s);
    if (write(fd, s, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
        snprintf(err, errlen, "agent: %s", strerror(errno));
        return -errno;
    }
    return agent_api_read(fd, pans, err, errlen);
}
