/* SPDX-License-Identifier: MIT */
/* probe_feed: a fleet of prober nodes without their sockets, for tests on loopback. Each window
 * (the wall clock's, as the nodes') it makes every host's report as the plan says it would be
 * (bench_reports: a background loss and host-port faults) and sends it as a node does, through
 * the node's own sender (probe_send: each shard's share to its replicas, following a
 * follower's redirect). At the end one line: what the localizers did with the reports.
 *
 *   probe_feed --topology FILE --localizer [PLANES=]URL,... [--localizer ...] [--seconds N]
 *              [--fault PLANE:T0:PORT:up|down:LOSS] [--token TOKEN] [--p0 P]
 *              [--window-ms MS] [--rate N] (the plan's, as the localizers')
 */
#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_reports.h"
#include "probe_node.h"
#include "probe_send.h"
#include "probe_shard.h"
#include "util.h"

typedef struct feed {
    struct event_base *base;
    struct event *tick;
    bench_reports *rep;
    probe_send *send;
    uint64_t window_ns, next, last;
    bench_fault faults[8];
    size_t nfaults;
    uint64_t reports;
} feed;

static void on_report(void *user, json_object *r)
{
    feed *f = user;
    probe_send_report(f->send, r);
    f->reports++;
}

/* a window's reports a grace after it closes, as a node's */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    feed *f = arg;
    (void)fd;
    (void)what;
    uint64_t now = probe_node_clock();
    while ((f->next + 1) * f->window_ns + 300000000ull <= now) {
        if (f->next > f->last) {
            event_base_loopexit(f->base, NULL);
            return;
        }
        bench_reports_window(f->rep, f->next, 1, f->faults, f->nfaults, on_report, f);
        f->next++;
    }
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"topology", 1, 0, 't'},  {"localizer", 1, 0, 'l'}, {"seconds", 1, 0, 's'},
        {"fault", 1, 0, 'f'},     {"token", 1, 0, 'k'},     {"p0", 1, 0, 'p'},
        {"window-ms", 1, 0, 'w'}, {"rate", 1, 0, 'r'},      {0, 0, 0, 0}};
    const char *topo_path = NULL, *token = NULL;
    probe_shard_dest dests[PROBE_SHARD_MAX];
    size_t nd = 0;
    unsigned seconds = 10;
    double p0 = 1e-5;
    feed f = {0};
    char err[512];
    fab_topo *topo = NULL;
    probe_plan *plan = NULL;
    fab_error ferr;
    char *vals[PROBE_SHARD_MAX];
    size_t nv = 0;
    int c;
    unsigned window_ms = 1000, rate = 1408;
    util_log_init("probe_feed", stderr);
    signal(SIGPIPE, SIG_IGN);
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 't':
            topo_path = optarg;
            break;
        case 'l':
            if (nv < PROBE_SHARD_MAX) {
                vals[nv++] = optarg;
            }
            break;
        case 's':
            seconds = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'k':
            token = optarg;
            break;
        case 'p':
            p0 = strtod(optarg, NULL);
            break;
        case 'w':
            window_ms = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'r':
            rate = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'f': {
            bench_fault *x = &f.faults[f.nfaults];
            char dir[8];
            if (f.nfaults == 8 ||
                sscanf(optarg, "%u:%u:%u:%7[a-z]:%lf", &x->plane, &x->t0, &x->port, dir,
                       &x->loss) != 5 ||
                (strcmp(dir, "up") != 0 && strcmp(dir, "down") != 0)) {
                fprintf(stderr, "probe_feed: --fault PLANE:T0:PORT:up|down:LOSS, not '%s'\n",
                        optarg);
                return 2;
            }
            x->down = strcmp(dir, "down") == 0;
            f.nfaults++;
            break;
        }
        default:
            return 2;
        }
    }
    if (!topo_path || !nv) {
        fprintf(stderr, "usage: probe_feed --topology FILE --localizer [PLANES=]URL,... "
                        "[--seconds N] [--fault P:T0:PORT:up|down:LOSS] [--token T] [--p0 P]\n");
        return 2;
    }
    if (fab_topo_load_file(topo_path, &topo, &ferr) != 0) {
        fprintf(stderr, "probe_feed: %s: %s\n", topo_path, ferr.msg);
        return 2;
    }
    probe_cfg pc;
    probe_cfg_default(&pc);
    pc.window_ns = (uint64_t)(window_ms ? window_ms : 1000) * 1000000ull;
    pc.rate_per_port = rate ? rate : 1408;
    int status = 1;
    if (probe_plan_new(topo, &pc, &plan) != 0) {
        fprintf(stderr, "probe_feed: no plan\n");
        goto out;
    }
    uint64_t mask = 0;
    for (size_t i = 0; i < nv; i++) {
        if (probe_shard_dest_add(dests, &nd, vals[i], fab_topo_planes(topo), err, sizeof(err)) !=
            0) {
            fprintf(stderr, "probe_feed: %s\n", err);
            goto out;
        }
        mask |= dests[nd - 1].planes;
    }
    f.base = event_base_new();
    f.window_ns = pc.window_ns;
    probe_send_cfg sc = {.base = f.base, .dests = dests, .ndests = nd, .token = token};
    if (probe_send_new(&sc, &f.send, err, sizeof(err)) != 0 ||
        bench_reports_new(topo, plan, mask, p0, 7, &f.rep) != 0) {
        fprintf(stderr, "probe_feed: %s\n", err);
        goto out;
    }
    f.next = probe_node_clock() / f.window_ns;
    f.last = f.next + seconds * 1000000000ull / f.window_ns;
    f.tick = event_new(f.base, -1, EV_PERSIST, on_tick, &f);
    struct timeval tv = {0, 20000};
    event_add(f.tick, &tv);
    event_base_dispatch(f.base);
    /* what is still on its way gets its answer */
    struct timeval drain = {4, 0};
    event_del(f.tick);
    event_base_loopexit(f.base, &drain);
    event_base_dispatch(f.base);
    probe_send_stats st;
    probe_send_stats_get(f.send, &st);
    printf("reports %" PRIu64 " taken %" PRIu64 " refused %" PRIu64 " redirected %" PRIu64
           " dropped %" PRIu64 "\n",
           f.reports, st.taken, st.refused, st.redirected, st.dropped);
    status = 0;
out:
    probe_shard_dests_free(dests, nd);
    probe_send_free(f.send);
    bench_reports_free(f.rep);
    if (f.tick) {
        event_free(f.tick);
    }
    if (f.base) {
        event_base_free(f.base);
    }
    probe_plan_free(plan);
    fab_topo_free(topo);
    return status;
}
