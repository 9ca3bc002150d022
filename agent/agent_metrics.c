/* SPDX-License-Identifier: MIT */
/* mrc-agent's Prometheus endpoint: evhttp on the agent's loop, the counters read at each scrape
 * (nothing is added to the packet path). */
#include "agent_metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define METRICS_MAX_HEADERS 8192
#define METRICS_MAX_BODY 1024
#define METRICS_TIMEOUT_S 10
#define METRICS_BACKLOG 64

struct agent_metrics {
    struct evhttp *http;
    agent_metrics_fill_fn fill;
    void *user;
    uint16_t port;
    uint64_t scrapes;
};

/* The names of mrc_retx_cause, mrc_ev_state: the label values the dashboards select on. */
static const char *const retx_causes[MRC_RETX_CAUSES] = {"timeout", "nack", "inferred", "probe",
                                                         "port"};
static const char *const ev_states[4] = {"good", "skip", "assumed_bad", "denied"};

void agent_metrics_qp_add(agent_metrics_qp_sums *sums, const mrc_qp *qp)
{
    mrc_qp_stats st;
    if (mrc_qp_get_stats(qp, &st) != 0) {
        return;
    }
    for (int k = 0; k < MRC_RETX_CAUSES; k++) {
        sums->retx_by_cause[k] += st.retx_by_cause[k];
    }
    for (int k = 0; k < MRC_NACK_REASONS; k++) {
        sums->nacks_sent[k] += st.nacks_sent[k];
        sums->nacks_rcvd[k] += st.nacks_rcvd[k];
    }
    sums->sacks_sent += st.sacks_sent;
    sums->sacks_rcvd += st.sacks_rcvd;
    for (unsigned i = 0; i < mrc_qp_ev_count(qp); i++) {
        mrc_ev_stats es;
        if (mrc_qp_get_ev_stats(qp, i, &es) == 0) {
            sums->trims += es.trims;
        }
    }
}

void agent_metrics_from_node(agent_node *node, const agent_metrics_qp_sums *retired,
                             agent_metrics_snapshot *s)
{
    agent_io_stats io;
    mrc_ctx_stats cs;
    agent_io_get_stats(agent_node_io(node), &io);
    mrc_ctx_get_stats(agent_node_ctx(node), &cs);
    unsigned nports = fab_topo_planes(agent_node_topo(node));
    s->nports = nports < MRC_MAX_PORTS ? nports : MRC_MAX_PORTS;
    for (unsigned p = 0; p < s->nports; p++) {
        s->rx_pkts[p] = io.rx_port[p];
        s->tx_pkts[p] = io.tx_port[p];
        s->rx_bytes[p] = io.rx_port_bytes[p];
        s->tx_bytes[p] = io.tx_port_bytes[p];
    }
    s->rx_filtered = io.rx_garbage;
    s->rx_garbage = cs.garbage;
    s->rx_no_qp = cs.no_qp;
    s->tx_unmapped = io.tx_unmapped;
    s->tx_errors = io.tx_errors;
    s->tx_blocked = io.tx_blocked;
    s->sums = retired ? *retired : (agent_metrics_qp_sums){0};
    const uint32_t *peers;
    size_t n;
    mrc_qp *const *qps = agent_node_qps(node, &peers, &n);
    s->qps = n;
    for (size_t i = 0; i < n; i++) {
        mrc_qp_stats st;
        if (mrc_qp_get_stats(qps[i], &st) == 0) {
            for (int k = 0; k < 4; k++) {
                s->evs[k] += st.ev_count[k];
            }
        }
        agent_metrics_qp_add(&s->sums, qps[i]);
    }
}

void agent_metrics_label(util_buf *b, const char *v)
{
    util_buf_put(b, "\"", 1);
    for (; *v; v++) {
        if (*v == '\\') {
            util_buf_put(b, "\\\\", 2);
        } else if (*v == '"') {
            util_buf_put(b, "\\\"", 2);
        } else if (*v == '\n') {
            util_buf_put(b, "\\n", 2);
        } else {
            util_buf_put(b, v, 1);
        }
    }
    util_buf_put(b, "\"", 1);
}

/* HELP and TYPE of a family; a HELP text escapes backslash and newline (the format's rule). */
static void family(util_buf *b, const char *name, const char *type, const char *help)
{
    util_buf_printf(b, "# HELP %s ", name);
    for (const char *c = help; *c; c++) {
        if (*c == '\\') {
            util_buf_put(b, "\\\\", 2);
        } else if (*c == '\n') {
            util_buf_put(b, "\\n", 2);
        } else {
            util_buf_put(b, c, 1);
        }
    }
    util_buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

typedef struct label {
    const char *k, *v;
} label;

static void sample(util_buf *b, const char *name, const label *l, size_t nl, uint64_t v)
{
    util_buf_put(b, name, strlen(name));
    for (size_t i = 0; i < nl; i++) {
        util_buf_printf(b, "%s%s=", i ? "," : "{", l[i].k);
        agent_metrics_label(b, l[i].v);
    }
    util_buf_printf(b, "%s %" PRIu64 "\n", nl ? "}" : "", v);
}

static void one(util_buf *b, const char *name, const char *type, const char *help, uint64_t v)
{
    family(b, name, type, help);
    sample(b, name, NULL, 0, v);
}

/* A family with one sample per port and direction. */
static void per_port(util_buf *b, const agent_metrics_snapshot *s, const char *name,
                     const char *help, const uint64_t *tx, const uint64_t *rx)
{
    char port[12];
    family(b, name, "counter", help);
    for (unsigned p = 0; p < s->nports; p++) {
        snprintf(port, sizeof(port), "%u", p);
        sample(b, name, (label[]){{"port", port}, {"dir", "tx"}}, 2, tx[p]);
        sample(b, name, (label[]){{"port", port}, {"dir", "rx"}}, 2, rx[p]);
    }
}

void agent_metrics_render(const agent_metrics_snapshot *s, util_buf *b)
{
    const agent_metrics_qp_sums *q = &s->sums;
    char port[12];
    family(b, "mrcfab_agent_info", "gauge", "This agent: its host, version and mode (always 1).");
    sample(b, "mrcfab_agent_info",
           (label[]){{"host", s->host ? s->host : ""},
                     {"version", s->version ? s->version : ""},
                     {"mode", s->mode ? s->mode : ""}},
           3, 1);
    one(b, "mrcfab_agent_qps", "gauge", "QPs the agent carries now.", s->qps);
    family(b, "mrcfab_agent_port_up", "gauge",
           "Whether the plane port is up (netlink: up, running, carrier).");
    for (unsigned p = 0; p < s->nports; p++) {
        snprintf(port, sizeof(port), "%u", p);
        sample(b, "mrcfab_agent_port_up", (label[]){{"port", port}}, 1, s->port_up[p]);
    }
    per_port(b, s, "mrcfab_agent_packets_total",
             "MRC packets per plane port: tx handed to the kernel, rx taken by the agent.",
             s->tx_pkts, s->rx_pkts);
    per_port(b, s, "mrcfab_agent_bytes_total",
             "Bytes of those packets (the MRC packet, without the outer header of srv6 mode).",
             s->tx_bytes, s->rx_bytes);
    family(b, "mrcfab_agent_rx_dropped_total", "counter",
           "Arrivals dropped: filter (not for this host's ports), garbage (the engine could not "
           "decode them), no_qp (for a QP this host does not have).");
    sample(b, "mrcfab_agent_rx_dropped_total", (label[]){{"reason", "filter"}}, 1, s->rx_filtered);
    sample(b, "mrcfab_agent_rx_dropped_total", (label[]){{"reason", "garbage"}}, 1, s->rx_garbage);
    sample(b, "mrcfab_agent_rx_dropped_total", (label[]){{"reason", "no_qp"}}, 1, s->rx_no_qp);
    family(b, "mrcfab_agent_tx_dropped_total", "counter",
           "Packets not sent: unmapped (no path for the EV), error (the kernel refused it).");
    sample(b, "mrcfab_agent_tx_dropped_total", (label[]){{"reason", "unmapped"}}, 1,
           s->tx_unmapped);
    sample(b, "mrcfab_agent_tx_dropped_total", (label[]){{"reason", "error"}}, 1, s->tx_errors);
    one(b, "mrcfab_agent_tx_blocked_total", "counter",
        "Times a port's socket was full and the port waited (the engine resends what it lost).",
        s->tx_blocked);
    family(b, "mrcfab_agent_retransmits_total", "counter",
           "Packets resent, by cause: timeout, nack, inferred (holes a SACK showed), probe (a "
           "tail-loss probe's answer), port (a port went down). QPs since freed included.");
    for (int k = 0; k < MRC_RETX_CAUSES; k++) {
        sample(b, "mrcfab_agent_retransmits_total", (label[]){{"cause", retx_causes[k]}}, 1,
               q->retx_by_cause[k]);
    }
    family(b, "mrcfab_agent_nacks_total", "counter",
           "NACKs sent (dir tx) and received (dir rx), by reason. QPs since freed included.");
    for (int k = 0; k < MRC_NACK_REASONS; k++) {
        sample(b, "mrcfab_agent_nacks_total",
               (label[]){{"dir", "tx"}, {"reason", mrc_nack_name(k)}}, 2, q->nacks_sent[k]);
        sample(b, "mrcfab_agent_nacks_total",
               (label[]){{"dir", "rx"}, {"reason", mrc_nack_name(k)}}, 2, q->nacks_rcvd[k]);
    }
    one(b, "mrcfab_agent_trims_total", "counter",
        "Packets this host sent that a switch trimmed (its EVs' count). QPs since freed included.",
        q->trims);
    family(b, "mrcfab_agent_sacks_total", "counter",
           "SACKs sent (dir tx) and received (dir rx). QPs since freed included.");
    sample(b, "mrcfab_agent_sacks_total", (label[]){{"dir", "tx"}}, 1, q->sacks_sent);
    sample(b, "mrcfab_agent_sacks_total", (label[]){{"dir", "rx"}}, 1, q->sacks_rcvd);
    family(b, "mrcfab_agent_evs", "gauge", "EVs of the QPs now, by state.");
    for (int k = 0; k < 4; k++) {
        sample(b, "mrcfab_agent_evs", (label[]){{"state", ev_states[k]}}, 1, s->evs[k]);
    }
    one(b, "mrcfab_agent_denylist_version", "gauge",
        "Version of the denylist the agent applies (0: none).", s->denylist_version);
    one(b, "mrcfab_agent_deny_floor_peers", "gauge",
        "Peers the denylist would leave below the floor, held at it now.", s->floor_peers);
    one(b, "mrcfab_agent_deny_floor_evs", "gauge",
        "EVs the denylist denies that the floor keeps in use now (the least bad).", s->floor_kept);
    one(b, "mrcfab_agent_deny_floor_entered_total", "counter",
        "Times a peer went to the denylist floor.", s->floor_entered);
    one(b, "mrcfab_agent_controller_connected", "gauge",
        "1 while the controller's channel is up and the agent up to date with it, else 0 (also "
        "without --controller).",
        s->connected);
    family(b, "mrcfab_agent_reports_total", "counter",
           "Reports to the controller: sent (accepted) and dropped (the controller away, refused, "
           "or replaced by a newer one).");
    sample(b, "mrcfab_agent_reports_total", (label[]){{"result", "sent"}}, 1, s->reports_sent);
    sample(b, "mrcfab_agent_reports_total", (label[]){{"result", "dropped"}}, 1,
           s->reports_dropped);
}

int agent_metrics_parse_addr(const char *s, char *addr, size_t addrlen, uint16_t *pport, char *err,
                             size_t errlen)
{
    const char *a = s, *colon;
    size_t alen;
    struct in6_addr a6;
    struct in_addr a4;
    char *end;
    bool v6 = s[0] == '[';
    if (v6) {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':') {
            snprintf(err, errlen, "%s: want [IPV6]:PORT", s);
            return -EINVAL;
        }
        a = s + 1;
        alen = (size_t)(close - a);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        alen = colon ? (size_t)(colon - s) : 0;
    }
    if (!colon || alen == 0) {
        snprintf(err, errlen, "%s: want ADDR:PORT ([ADDR]:PORT for IPv6)", s);
        return -EINVAL;
    }
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end || errno || port > 65535) {
        snprintf(err, errlen, "%s: the port must be 0..65535", s);
        return -EINVAL;
    }
    if (alen >= addrlen) {
        snprintf(err, errlen, "%s: the address is too long", s);
        return -EINVAL;
    }
    memcpy(addr, a, alen);
    addr[alen] = '\0';
    if (v6 ? inet_pton(AF_INET6, addr, &a6) != 1 : inet_pton(AF_INET, addr, &a4) != 1) {
        snprintf(err, errlen, "%s: %s", s,
                 v6                  ? "not an IPv6 address"
                 : strchr(addr, ':') ? "an IPv6 address goes in brackets, [ADDR]:PORT"
                                     : "not a numeric IPv4 address (or [IPv6] in brackets)");
        return -EINVAL;
    }
    *pport = (uint16_t)port;
    return 0;
}

int agent_metrics_check_addr(const util_opt *o, char *err, size_t errlen)
{
    const char *v = *(char **)o->dest;
    char addr[INET6_ADDRSTRLEN], why[256];
    uint16_t port;
    if (!v) {
        return 0;
    }
    if (agent_metrics_parse_addr(v, addr, sizeof(addr), &port, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--%s %s", o->name, why);
        return -EINVAL;
    }
    return 0;
}

static void free_text(const void *data, size_t len, void *arg)
{
    (void)len;
    (void)arg;
    free((void *)data);
}

static void send_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
    struct evbuffer *body = evbuffer_new();
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; charset=utf-8");
    evbuffer_add(body, text, strlen(text));
    evhttp_send_reply(req, code, reason, body);
    evbuffer_free(body);
}

static void on_request(struct evhttp_request *req, void *arg)
{
    agent_metrics *m = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    if (!path || strcmp(path, "/metrics") != 0) {
        send_text(req, HTTP_NOTFOUND, "Not Found", "not found: the agent serves GET /metrics\n");
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        evhttp_add_header(out, "Allow", "GET");
        send_text(req, 405, "Method Not Allowed", "/metrics takes GET only\n");
        return;
    }
    agent_metrics_snapshot s;
    memset(&s, 0, sizeof(s));
    m->fill(m->user, &s);
    util_buf b = {0};
    agent_metrics_render(&s, &b);
    m->scrapes++;
    struct evbuffer *body = evbuffer_new();
    evhttp_add_header(out, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    evhttp_add_header(out, "Cache-Control", "no-store");
    evbuffer_add_reference(body, b.s, b.len, free_text, NULL); /* the buffer frees the text */
    evhttp_send_reply(req, HTTP_OK, "OK", body);
    evbuffer_free(body);
}

/* A listening socket of our own rather than evhttp_bind_socket: its errno reaches the log. */
static int listen_on(const char *addr, uint16_t port, uint16_t *pbound)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof(ss));
    if (strchr(addr, ':')) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        inet_pton(AF_INET6, addr, &s6->sin6_addr);
        len = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        inet_pton(AF_INET, addr, &s4->sin_addr);
        len = sizeof(*s4);
    }
    int one = 1, rv;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, METRICS_BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        rv = -errno;
        close(fd);
        return rv;
    }
    *pbound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

int agent_metrics_new(struct event_base *base, const char *listen, agent_metrics_fill_fn fill,
                      void *user, agent_metrics **pm, char *err, size_t errlen)
{
    char addr[INET6_ADDRSTRLEN], why[256];
    uint16_t port;
    int rv = agent_metrics_parse_addr(listen, addr, sizeof(addr), &port, why, sizeof(why));
    if (rv != 0) {
        snprintf(err, errlen, "--metrics %s", why);
        return rv;
    }
    agent_metrics *m = util_xcalloc(1, sizeof(*m));
    m->fill = fill;
    m->user = user;
    int fd = listen_on(addr, port, &m->port);
    if (fd < 0) {
        rv = fd;
        snprintf(err, errlen, "--metrics %s: %s", listen, strerror(-rv));
        goto fail_listen;
    }
    m->http = evhttp_new(base);
    if (!m->http) {
        rv = -ENOMEM;
        snprintf(err, errlen, "--metrics %s: evhttp_new failed", listen);
        goto fail_http;
    }
    /* every method reaches on_request, which answers 405 rather than evhttp's 501 */
    evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
    evhttp_set_max_headers_size(m->http, METRICS_MAX_HEADERS);
    evhttp_set_max_body_size(m->http, METRICS_MAX_BODY);
    evhttp_set_timeout(m->http, METRICS_TIMEOUT_S);
    evhttp_set_gencb(m->http, on_request, m);
    if (!evhttp_accept_socket_with_handle(m->http, fd)) {
        rv = -ENOMEM;
        snprintf(err, errlen, "--metrics %s: evhttp could not take the socket", listen);
        goto fail_accept;
    }
    *pm = m;
    return 0;
fail_accept:
    evhttp_free(m->http);
fail_http:
    close(fd);
fail_listen:
    free(m);
    return rv;
}

uint16_t agent_metrics_port(const agent_metrics *m)
{
    return m->port;
}

uint64_t agent_metrics_scrapes(const agent_metrics *m)
{
    return m->scrapes;
}

void agent_metrics_free(agent_metrics *m)
{
    if (!m) {
        return;
    }
    evhttp_free(m->http); /* closes the listening socket and the connections */
    free(m);
}
