/* SPDX-License-Identifier: MIT */
/* Sockets as the agent's (agent/agent_io.c): a raw protocol-41 socket per plane port sends,
 * bound to the port and its uSID address, the kernel writing the outer header; one packet
 * socket filtered to IPv6-in-IPv6 probes reads every port's arrivals. The windows are the wall
 * clock's, so that every node of the fabric numbers them alike. */
#include "probe_node.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe_sock.h"
#include "probe_wire.h"
#include "util.h"

#define NODE_SLOTS 4             /* windows kept: the one sent, the ones in their grace time */
#define NODE_TICK_US 2000        /* the send timer: probes due are sent in batches this often */
#define NODE_LATE_NS 10000000ull /* a window's last probes may still go this late */
#define NODE_MAX_PORTS 16
#define NODE_RX_BATCH 64

enum { GOT_NONE = 0, GOT_WHOLE, GOT_TRIMMED };

typedef struct wslot {
    uint64_t window; /* UINT64_MAX: empty */
    uint32_t sent, nexp;
    probe_spec *exp; /* the one-way probes due here, in index order */
    uint8_t *got;    /* per index of the window: GOT_* (a bounce's or a one-way probe's) */
    uint32_t rcvd, trimmed, unexpected;
} wslot;

typedef struct nport {
    probe_port pp;
    uint64_t cur;  /* the window being sent, UINT64_MAX before the first */
    uint32_t next; /* its next index */
    wslot slot[NODE_SLOTS];
} nport;

struct probe_node {
    probe_node_cfg cfg;
    uint32_t R;
    unsigned nports;
    nport ports[NODE_MAX_PORTS];
    int rxfd;
    struct event *rx_ev, *tick;
    uint64_t first;    /* the first whole window this node sends */
    uint64_t reported; /* every window up to this one is reported */
    probe_node_stats st;
    uint8_t rxbuf[2048];
};

uint64_t probe_node_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static wslot *slot_of(nport *p, uint64_t window)
{
    wslot *s = &p->slot[window % NODE_SLOTS];
    return s->window == window ? s : NULL;
}

/* Readies the slot of |window| on |p| (the window it held is long reported). */
static wslot *slot_open(probe_node *n, nport *p, uint64_t window)
{
    wslot *s = &p->slot[window % NODE_SLOTS];
    if (s->window == window) {
        return s;
    }
    s->window = window;
    s->sent = s->rcvd = s->trimmed = s->unexpected = 0;
    memset(s->got, GOT_NONE, n->R);
    s->nexp =
        probe_plan_expect(n->cfg.plan, window, p->pp.plane, p->pp.t0, p->pp.port, s->exp, n->R);
    s->nexp = s->nexp < n->R ? s->nexp : n->R;
    return s;
}

/* The inner address of the host port at (plane, t0, port) of the plan; -ENOENT for a hole. */
static int port_addr(const fab_topo *topo, unsigned plane, unsigned t0, unsigned port,
                     uint8_t addr[16])
{
    uint32_t h = probe_wire_host(topo, plane, t0, port);
    return h != FAB_NONE && fab_host_addr(topo, h, plane, addr) == 0 ? 0 : -ENOENT;
}

static void send_one(probe_node *n, nport *p, wslot *s, uint32_t index, uint64_t now)
{
    probe_spec spec;
    uint8_t pkt[PROBE_PKT_LEN], dst[16];
    struct sockaddr_in6 to = {.sin6_family = AF_INET6};
    if (probe_plan_get(n->cfg.plan, p->cur, p->pp.plane, p->pp.t0, p->pp.port, index, &spec) != 0 ||
        probe_wire_path(n->cfg.topo, &spec, to.sin6_addr.s6_addr) != 0 ||
        port_addr(n->cfg.topo, spec.plane, spec.dst_t0, spec.dst_port, dst) != 0) {
        return; /* a hole in the fabric: the plan's probe has no receiver */
    }
    probe_hdr h = {.epoch = n->cfg.epoch, .window = p->cur, .sent_ns = now, .spec = spec};
    size_t len = probe_wire_encode(pkt, p->pp.addr, dst, n->cfg.tclass, n->cfg.udp_port, &h);
    if (sendto(p->pp.fd, pkt, len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to)) < 0) {
        n->st.send_errors++; /* a port down: the receivers' deficits and our heartbeat say so */
        return;
    }
    n->st.sent++;
    s->sent++;
}

/* One deficit of a report: [kind, sender T0, sender port, T1, index], while there is room. */
static void deficit(json_object *def, unsigned max, const probe_spec *s, uint32_t index)
{
    if (json_object_array_length(def) >= max) {
        return;
    }
    json_object *d = json_object_new_array();
    json_object_array_add(d, json_object_new_string(probe_kind_names[s->kind]));
    json_object_array_add(d, json_object_new_int(s->src_t0));
    json_object_array_add(d, json_object_new_int(s->src_port));
    json_object_array_add(d, json_object_new_int(s->t1));
    json_object_array_add(d, json_object_new_int64(index));
    json_object_array_add(def, d);
}

/* The report of |window|: per port the heartbeat and the deficits. */
static json_object *report(probe_node *n, uint64_t window)
{
    json_object *r = json_object_new_object(), *ports = json_object_new_array();
    json_object_object_add(r, "host",
                           json_object_new_string(fab_host_name(n->cfg.topo, n->cfg.host)));
    json_object_object_add(r, "window", json_object_new_uint64(window));
    json_object_object_add(r, "epoch", json_object_new_uint64(n->cfg.epoch));
    /* since the node began: what it could not read as a probe, and probes it did not expect
     * (another plan's, misrouted, duplicated) or that came after their window's report */
    json_object_object_add(r, "garbage", json_object_new_uint64(n->st.garbage));
    json_object_object_add(r, "unexpected", json_object_new_uint64(n->st.unexpected));
    json_object_object_add(r, "late", json_object_new_uint64(n->st.late));
    for (unsigned i = 0; i < n->nports; i++) {
        nport *p = &n->ports[i];
        wslot *s = slot_of(p, window);
        json_object *o = json_object_new_object(), *def = json_object_new_array();
        uint32_t expected = 0, missing = 0;
        json_object_object_add(o, "plane", json_object_new_int((int)p->pp.plane));
        json_object_object_add(o, "t0", json_object_new_int((int)p->pp.t0));
        json_object_object_add(o, "port", json_object_new_int((int)p->pp.port));
        json_object_object_add(o, "sent", json_object_new_int64(s ? s->sent : 0));
        for (uint32_t k = 0; s && k < n->R; k++) {
            probe_spec spec;
            bool bounce = false;
            if (probe_plan_get(n->cfg.plan, window, p->pp.plane, p->pp.t0, p->pp.port, k, &spec) ==
                0) {
                bounce = spec.kind == PROBE_T0_BOUNCE || spec.kind == PROBE_T1_BOUNCE;
            }
            /* our bounces of the window were sent in index order: the first |sent| of them */
            if (bounce && k < s->sent) {
                expected++;
                if (s->got[k] == GOT_NONE) {
                    missing++;
                    deficit(def, n->cfg.max_deficits, &spec, k);
                }
            }
        }
        for (uint32_t k = 0; s && k < s->nexp; k++) {
            const probe_spec *e = &s->exp[k];
            if (probe_wire_host(n->cfg.topo, e->plane, e->src_t0, e->src_port) == FAB_NONE) {
                continue; /* from a hole */
            }
            expected++;
            if (s->got[e->index] != GOT_NONE) {
                continue;
            }
            missing++;
            deficit(def, n->cfg.max_deficits, e, e->index);
        }
        json_object_object_add(o, "expected", json_object_new_int64(expected));
        json_object_object_add(o, "received", json_object_new_int64(s ? s->rcvd : 0));
        json_object_object_add(o, "trimmed", json_object_new_int64(s ? s->trimmed : 0));
        json_object_object_add(o, "unexpected", json_object_new_int64(s ? s->unexpected : 0));
        json_object_object_add(o, "missing", json_object_new_int64(missing));
        json_object_object_add(o, "deficits", def);
        json_object_array_add(ports, o);
    }
    json_object_object_add(r, "ports", ports);
    return r;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    probe_node *n = arg;
    (void)fd;
    (void)what;
    uint64_t now = probe_node_clock(), W = n->cfg.window_ns, w = now / W;
    if (n->first == UINT64_MAX) {
        n->first = w + 1; /* a window begun before we came would report what we missed */
        n->reported = w;
    }
    for (unsigned i = 0; i < n->nports && w >= n->first; i++) {
        nport *p = &n->ports[i];
        if (p->cur != w) {
            /* the last probes of the window before were due since the tick before: late by
             * less than a tick they still go; what a stall left unsent stays so (the
             * heartbeat says it) */
            wslot *ps = p->cur + 1 == w && now - w * W < NODE_LATE_NS ? slot_of(p, p->cur) : NULL;
            while (ps && p->next < n->R) {
                send_one(n, p, ps, p->next++, now);
            }
            p->cur = w;
            p->next = 0;
        }
        wslot *s = slot_open(n, p, w);
        while (p->next < n->R && w * W + probe_plan_offset_ns(n->cfg.plan, p->next) <= now) {
            send_one(n, p, s, p->next++, now);
        }
    }
    while ((n->reported + 2) * W + n->cfg.grace_ns <= now) {
        uint64_t rw = ++n->reported;
        if (rw >= n->first) {
            n->st.reports++;
            n->cfg.report(n->cfg.user, report(n, rw));
        }
    }
}

static void on_probe(probe_node *n, nport *p, const uint8_t *pkt, size_t len, bool trimmed)
{
    probe_hdr h;
    int rv = probe_wire_decode(pkt, len, n->cfg.udp_port, &h);
    if (rv < 0) {
        n->st.garbage++;
        return;
    }
    trimmed |= rv == 1;
    n->st.rcvd++;
    n->st.trimmed += trimmed;
    const probe_spec *sp = &h.spec;
    if (len < PROBE_IP6_LEN + PROBE_UDP_LEN + 32) {
        return; /* trimmed past its identity: congestion, counted, and nothing to match */
    }
    /* a probe of the window this node has not yet begun (a sender's clock a little ahead)
     * opens it; one of a window already reported is late */
    uint64_t w = probe_node_clock() / n->cfg.window_ns;
    wslot *s = slot_of(p, h.window);
    if (!s && h.window > n->reported && h.window <= w + 1 && n->first != UINT64_MAX) {
        s = slot_open(n, p, h.window);
    }
    if (!s) {
        n->st.late++;
        return;
    }
    bool ok = h.epoch == n->cfg.epoch && sp->plane == p->pp.plane && sp->index < n->R;
    if (ok && (sp->kind == PROBE_T0_BOUNCE || sp->kind == PROBE_T1_BOUNCE)) {
        ok = sp->src_t0 == p->pp.t0 && sp->src_port == p->pp.port;
    } else if (ok) {
        /* the one probe of that index due here, from that sender */
        uint32_t lo = 0, hi = s->nexp;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (s->exp[mid].index < sp->index) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        const probe_spec *e = lo < s->nexp ? &s->exp[lo] : NULL;
        ok = e && e->index == sp->index && e->src_t0 == sp->src_t0 && e->src_port == sp->src_port &&
             e->kind == sp->kind;
    }
    if (!ok || s->got[sp->index] != GOT_NONE) {
        s->unexpected++; /* another plan's, misrouted, or a duplicate */
        n->st.unexpected++;
        return;
    }
    s->got[sp->index] = trimmed ? GOT_TRIMMED : GOT_WHOLE;
    s->rcvd++;
    s->trimmed += trimmed;
}

static void on_rx(evutil_socket_t fd, short what, void *arg)
{
    probe_node *n = arg;
    (void)what;
    for (int i = 0; i < NODE_RX_BATCH; i++) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t len =
            recvfrom(fd, n->rxbuf, sizeof(n->rxbuf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (len < 0) {
            break;
        }
        const uint8_t *o = n->rxbuf;
        nport *p = NULL;
        for (unsigned k = 0; k < n->nports && len >= PROBE_IP6_LEN; k++) {
            if (probe_sock_arrival(&n->ports[k].pp, 1, from.sll_ifindex, o)) {
                p = &n->ports[k];
            }
        }
        if (!p) {
            n->st.garbage++;
            continue;
        }
        uint8_t dscp = (uint8_t)((o[0] & 0xf) << 2 | o[1] >> 6);
        bool trimmed = dscp == n->cfg.dscp_trimmed[0] || dscp == n->cfg.dscp_trimmed[1];
        on_probe(n, p, o + PROBE_IP6_LEN, (size_t)len - PROBE_IP6_LEN, trimmed);
    }
}

static int open_port(probe_node *n, nport *p, unsigned plane, char *err, size_t errlen)
{
    int rv = probe_sock_port(n->cfg.topo, n->cfg.host, plane, n->cfg.tclass, &p->pp, err, errlen);
    if (rv != 0) {
        return rv;
    }
    p->cur = UINT64_MAX;
    for (unsigned k = 0; k < NODE_SLOTS; k++) {
        p->slot[k].window = UINT64_MAX;
        p->slot[k].exp = util_xcalloc(n->R, sizeof(probe_spec));
        p->slot[k].got = util_xcalloc(n->R, 1);
    }
    return 0;
}

int probe_node_new(const probe_node_cfg *cfg, probe_node **pnode, char *err, size_t errlen)
{
    probe_node *n = util_xcalloc(1, sizeof(*n));
    int rv = 0;
    n->cfg = *cfg;
    n->R = probe_plan_per_window(cfg->plan);
    if (!cfg->window_ns || cfg->grace_ns >= cfg->window_ns) {
        /* a window's slot is reused two windows after it closes */
        snprintf(err, errlen, "the grace time must be shorter than the window");
        rv = -EINVAL;
        goto out;
    }
    n->rxfd = -1;
    n->first = UINT64_MAX;
    for (unsigned i = 0; i < NODE_MAX_PORTS; i++) {
        n->ports[i].pp.fd = -1;
    }
    unsigned planes = fab_topo_planes(cfg->topo);
    for (unsigned pl = 0; pl < planes && pl < NODE_MAX_PORTS; pl++) {
        rv = open_port(n, &n->ports[n->nports], pl, err, errlen);
        n->nports += rv <= 0;
        if (rv < 0) {
            goto out;
        }
        rv = 0;
    }
    n->rxfd = probe_sock_rx(cfg->udp_port, err, errlen);
    if (n->rxfd < 0) {
        rv = n->rxfd;
        goto out;
    }
    n->rx_ev = event_new(cfg->base, n->rxfd, EV_READ | EV_PERSIST, on_rx, n);
    n->tick = event_new(cfg->base, -1, EV_PERSIST, on_tick, n);
    struct timeval tv = {0, NODE_TICK_US};
    event_add(n->rx_ev, NULL);
    event_add(n->tick, &tv);
out:
    if (rv != 0) {
        probe_node_free(n);
        return rv;
    }
    *pnode = n;
    return 0;
}

void probe_node_free(probe_node *n)
{
    if (!n) {
        return;
    }
    for (unsigned i = 0; i < NODE_MAX_PORTS; i++) {
        nport *p = &n->ports[i];
        if (p->pp.fd >= 0) {
            close(p->pp.fd);
        }
        for (unsigned k = 0; k < NODE_SLOTS; k++) {
            free(p->slot[k].exp);
            free(p->slot[k].got);
        }
    }
    if (n->rx_ev) {
        event_free(n->rx_ev);
    }
    if (n->tick) {
        event_free(n->tick);
    }
    if (n->rxfd >= 0) {
        close(n->rxfd);
    }
    free(n);
}

void probe_node_get_stats(const probe_node *n, probe_node_stats *st)
{
    *st = n->st;
}
