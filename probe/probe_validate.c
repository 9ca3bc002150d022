/* SPDX-License-Identifier: MIT */
#include "probe_validate.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe_sock.h"
#include "probe_wire.h"
#include "util.h"

#define VAL_MAX_PORTS 16
#define VAL_EPOCH 0xfffffffeu /* no node's plan: a running node ignores these */

typedef struct vpath {
    unsigned port;     /* index into the ports */
    uint8_t kind;      /* probe_kind of the bounce's nearest: T0 or T1 bounce */
    uint16_t t1, far;  /* far: the far T0, or UINT16_MAX */
    uint8_t outer[16]; /* the uSID path */
    uint32_t sent, back;
} vpath;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int usid_of(const fab_topo *topo, unsigned plane, fab_tier tier, unsigned idx, uint16_t *u)
{
    fab_switch sw;
    uint32_t id = fab_switch_at(topo, plane, tier, idx);
    if (id == FAB_NONE || fab_switch_get(topo, id, &sw) != 0) {
        return -ENOENT;
    }
    *u = sw.usid;
    return 0;
}

/* The paths of port |pi|: T0 bounce, T1 bounces, far bounces to the T0s in |fars|. */
static unsigned plan_paths(const probe_validate_cfg *cfg, const probe_port *pp, unsigned pi,
                           const uint8_t *fars, unsigned nt0, unsigned nt1, vpath *out)
{
    const fab_plan *plan = fab_topo_plan(cfg->topo);
    unsigned n = 0, pl = pp->plane;
    uint16_t a, j, b, dl = fab_plan_usid(plan, pl, plan->kind_dl, pp->port);
    if (usid_of(cfg->topo, pl, FAB_TIER_T0, pp->t0, &a) != 0) {
        return 0;
    }
    uint16_t u[6] = {a, dl};
    out[n] = (vpath){.port = pi, .kind = PROBE_T0_BOUNCE, .far = UINT16_MAX};
    fab_plan_container(plan, u, 2, out[n++].outer);
    for (unsigned t = 0; t < nt1; t++) {
        if (usid_of(cfg->topo, pl, FAB_TIER_T1, t, &j) != 0) {
            continue;
        }
        uint16_t v[4] = {a, j, a, dl};
        out[n] = (vpath){.port = pi, .kind = PROBE_T1_BOUNCE, .t1 = (uint16_t)t, .far = UINT16_MAX};
        fab_plan_container(plan, v, 4, out[n++].outer);
        for (unsigned f = 0; f < nt0; f++) {
            if (!fars[f] || f == pp->t0 || usid_of(cfg->topo, pl, FAB_TIER_T0, f, &b) != 0) {
                continue;
            }
            uint16_t w[6] = {a, j, b, j, a, dl};
            out[n] =
                (vpath){.port = pi, .kind = PROBE_T1_BOUNCE, .t1 = (uint16_t)t, .far = (uint16_t)f};
            fab_plan_container(plan, w, 6, out[n++].outer);
        }
    }
    return n;
}

static void drain(int rx, probe_port *ports, unsigned nports, const probe_validate_cfg *cfg,
                  vpath *paths, uint32_t npaths, uint8_t *buf, size_t buflen)
{
    for (;;) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t len = recvfrom(rx, buf, buflen, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (len < PROBE_IP6_LEN) {
            return;
        }
        probe_hdr h;
        probe_port *p = probe_sock_arrival(ports, nports, from.sll_ifindex, buf);
        if (!p ||
            probe_wire_decode(buf + PROBE_IP6_LEN, (size_t)len - PROBE_IP6_LEN, cfg->udp_port, &h) <
                0 ||
            h.epoch != VAL_EPOCH) {
            continue;
        }
        /* the index names the path; the sequence within it is the window field */
        uint32_t i = h.spec.index;
        if (i < npaths && paths[i].back < paths[i].sent && &ports[paths[i].port] == p) {
            paths[i].back++;
        }
    }
}

int probe_validate_run(const probe_validate_cfg *cfg, json_object **result, char *err,
                       size_t errlen)
{
    probe_port ports[VAL_MAX_PORTS];
    unsigned nports = 0, planes = fab_topo_planes(cfg->topo);
    vpath *paths = NULL;
    uint32_t npaths = 0, cap = 0;
    int rx = -1, rv = 0;
    uint8_t buf[2048];
    for (unsigned pl = 0; pl < planes && pl < VAL_MAX_PORTS; pl++) {
        rv = probe_sock_port(cfg->topo, cfg->host, pl, cfg->tclass, &ports[nports], err, errlen);
        if (rv < 0) {
            goto out;
        }
        nports += rv == 0;
        rv = 0;
    }
    if (!nports) {
        snprintf(err, errlen, "%s has no cabled port", fab_host_name(cfg->topo, cfg->host));
        rv = -ENODEV;
        goto out;
    }
    rx = probe_sock_rx(cfg->udp_port, err, errlen);
    if (rx < 0) {
        rv = rx;
        goto out;
    }
    for (unsigned i = 0; i < nports; i++) {
        unsigned pl = ports[i].plane, nt0 = 0, nt1 = 0;
        while (fab_switch_at(cfg->topo, pl, FAB_TIER_T0, nt0) != FAB_NONE) {
            nt0++;
        }
        while (fab_switch_at(cfg->topo, pl, FAB_TIER_T1, nt1) != FAB_NONE) {
            nt1++;
        }
        uint8_t *fars = util_xcalloc(nt0 ? nt0 : 1, 1);
        for (unsigned k = 0; k < cfg->npeers; k++) {
            uint32_t sw;
            unsigned swport;
            fab_switch t0;
            if (fab_host_attach(cfg->topo, cfg->peers[k], pl, &sw, &swport) == 0 &&
                fab_switch_get(cfg->topo, sw, &t0) == 0 && t0.index < nt0) {
                fars[t0.index] = 1;
            }
        }
        uint32_t need = 1 + nt1 * (1 + nt0);
        if (npaths + need > cap) {
            cap = (npaths + need) * 2;
            paths = realloc(paths, cap * sizeof(*paths));
            if (!paths) {
                util_log(UTIL_LOG_ERR, "out of memory");
                abort();
            }
        }
        npaths += plan_paths(cfg, &ports[i], i, fars, nt0, nt1, paths + npaths);
        free(fars);
    }
    /* paths in turn, |count| rounds, paced at |rate| */
    uint64_t gap = cfg->rate ? 1000000000ull / cfg->rate : 0, t = now_ns();
    for (unsigned round = 0; round < cfg->count; round++) {
        for (uint32_t i = 0; i < npaths; i++) {
            vpath *vp = &paths[i];
            probe_port *p = &ports[vp->port];
            uint8_t pkt[PROBE_PKT_LEN];
            probe_hdr h = {.epoch = VAL_EPOCH,
                           .window = round,
                           .sent_ns = t,
                           .spec = {.kind = vp->kind,
                                    .plane = (uint8_t)p->plane,
                                    .t1 = vp->t1,
                                    .src_t0 = (uint16_t)p->t0,
                                    .src_port = (uint16_t)p->port,
                                    .index = i}};
            struct sockaddr_in6 to = {.sin6_family = AF_INET6};
            memcpy(to.sin6_addr.s6_addr, vp->outer, 16);
            size_t len = probe_wire_encode(pkt, p->addr, p->addr, cfg->tclass, cfg->udp_port, &h);
            if (sendto(p->fd, pkt, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len) {
                vp->sent++;
            }
            t += gap;
            if ((i & 63) == 63) {
                /* paced in batches: the returns are read between them */
                drain(rx, ports, nports, cfg, paths, npaths, buf, sizeof(buf));
                uint64_t now = now_ns();
                if (now < t) {
                    struct timespec ts = {.tv_sec = (time_t)((t - now) / 1000000000ull),
                                          .tv_nsec = (long)((t - now) % 1000000000ull)};
                    nanosleep(&ts, NULL);
                }
            }
        }
    }
    uint64_t end = now_ns() + cfg->timeout_ns;
    for (uint64_t now = now_ns(); now < end; now = now_ns()) {
        struct pollfd pfd = {.fd = rx, .events = POLLIN};
        poll(&pfd, 1, (int)((end - now) / 1000000 + 1));
        drain(rx, ports, nports, cfg, paths, npaths, buf, sizeof(buf));
    }
    json_object *res = json_object_new_object(), *arr = json_object_new_array();
    uint32_t failed = 0;
    for (uint32_t i = 0; i < npaths; i++) {
        const vpath *vp = &paths[i];
        const probe_port *p = &ports[vp->port];
        bool ok = vp->sent && vp->back * 100 >= vp->sent * cfg->pass_pct;
        failed += !ok;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "plane", json_object_new_int((int)p->plane));
        json_object_object_add(o, "kind",
                               json_object_new_string(vp->kind == PROBE_T0_BOUNCE ? "t0"
                                                      : vp->far == UINT16_MAX     ? "t1"
                                                                                  : "far"));
        json_object_object_add(o, "t0", json_object_new_int((int)p->t0));
        json_object_object_add(o, "t1",
                               json_object_new_int(vp->kind == PROBE_T0_BOUNCE ? -1 : vp->t1));
        json_object_object_add(o, "far_t0",
                               json_object_new_int(vp->far == UINT16_MAX ? -1 : vp->far));
        json_object_object_add(o, "sent", json_object_new_int64(vp->sent));
        json_object_object_add(o, "back", json_object_new_int64(vp->back));
        json_object_object_add(o, "pass", json_object_new_boolean(ok));
        json_object_array_add(arr, o);
    }
    json_object_object_add(res, "host",
                           json_object_new_string(fab_host_name(cfg->topo, cfg->host)));
    json_object_object_add(res, "paths", json_object_new_int64(npaths));
    json_object_object_add(res, "failed", json_object_new_int64(failed));
    json_object_object_add(res, "pass", json_object_new_boolean(failed == 0));
    json_object_object_add(res, "results", arr);
    *result = res;
out:
    for (unsigned i = 0; i < nports; i++) {
        close(ports[i].fd);
    }
    if (rx >= 0) {
        close(rx);
    }
    free(paths);
    return rv;
}
