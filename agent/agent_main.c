/* SPDX-License-Identifier: MIT */
/* mrc-agent: the host's software MRC NIC. Runs the engine on the host's plane ports and serves
 * the local API until SIGTERM or SIGINT. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_api.h"
#include "agent_daemon.h"
#include "agent_metrics.h"
#include "util.h"

static struct {
    char *topology, *host, *mode, *api, *cc, *log, *controller, *token_file, *cacert, *client_cert,
        *client_key, *state_dir, *oob, *metrics;
    uint64_t mtu, evs, port_gbps, base_rtt_ns, seed, timeout, reorder_us, busy_poll_us, report_interval,
        report_max, deny_floor_planes;
    double deny_floor;
} o;

/* 0 (the ports decide) or a path MTU the engine takes */
static int check_mtu(const util_opt *opt, char *err, size_t errlen)
{
    uint64_t v = *(uint64_t *)opt->dest;
    if (v && (v < 256 || (v & (v - 1)))) {
        snprintf(err, errlen, "--mtu %llu: want a power of two from 256 to 8192, or 0",
                 (unsigned long long)v);
        return -EINVAL;
    }
    return 0;
}

/* clang-format off */
static const util_opt opts[] = {
    UTIL_OPT_TOPOLOGY(&o.topology, true),
    {.name = "host", .kind = UTIL_OPT_STR, .dest = &o.host, .arg = "NAME", .required = true, .help = "this host's name in the topology"},
    {.name = "mode", .kind = UTIL_OPT_STR, .def = "srv6", .dest = &o.mode, .arg = "MODE", .choices = "srv6|ecmp", .help = "srv6: the path in the outer address; ecmp: the EV in the UDP source port only"},
    {.name = "api", .kind = UTIL_OPT_STR, .def = AGENT_API_DEFAULT, .dest = &o.api, .arg = "SOCKET", .help = "the local API's unix socket ('@' first: abstract, one per network namespace)"},
    {.name = "controller", .kind = UTIL_OPT_STR, .dest = &o.controller, .arg = "URL[,URL...]", .help = "the controllers, http[s]://HOST:PORT, comma-separated (any one will do)"},
    UTIL_OPT_TOKEN_FILE(&o.token_file),
    UTIL_OPT_CACERT(&o.cacert),
    UTIL_OPT_CLIENT_CERT(&o.client_cert),
    UTIL_OPT_CLIENT_KEY(&o.client_key),
    {.name = "state-dir", .kind = UTIL_OPT_STR, .dest = &o.state_dir, .arg = "DIR", .help = "where the last profile and denylist are kept (needed with --controller)"},
    {.name = "oob", .kind = UTIL_OPT_STR, .dest = &o.oob, .arg = "[ADDR]:PORT", .help = "where mrc-perf setup reaches this host, told to the controller"},
    {.name = "report-interval", .kind = UTIL_OPT_UINT, .def = "10", .min = 1, .max = 3600, .dest = &o.report_interval, .arg = "S", .help = "seconds between reports to the controller"},
    {.name = "report-max", .kind = UTIL_OPT_UINT, .def = "65000", .min = 4096, .max = 16777216, .dest = &o.report_max, .arg = "BYTES", .help = "largest report (at most the controller's --max-body)"},
    {.name = "metrics", .kind = UTIL_OPT_STR, .dest = &o.metrics, .arg = "ADDR:PORT", .check = agent_metrics_check_addr, .help = "serve Prometheus metrics at GET /metrics there ([ADDR]:PORT for IPv6; not given: not served)"},
    {.name = "mtu", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 8192, .dest = &o.mtu, .arg = "BYTES", .check = check_mtu, .help = "payload bytes per packet, a power of two from 256 (0: the largest the ports' MTU fits; a controller's profile may set it)"},
    {.name = "deny-floor", .kind = UTIL_OPT_DOUBLE, .def = "0.25", .min = 0, .max = 1, .dest = &o.deny_floor, .arg = "FRACTION", .help = "share of a peer's EVs kept in use however many the denylist denies (the least bad of them; 0: only --deny-floor-planes)"},
    {.name = "deny-floor-planes", .kind = UTIL_OPT_UINT, .def = "1", .min = 1, .max = 16, .dest = &o.deny_floor_planes, .arg = "N", .help = "planes on which the denylist leaves a peer at least one EV (the least bad; at most the planes it has)"},
    {.name = "evs", .kind = UTIL_OPT_UINT, .def = "128", .min = 1, .max = 1024, .dest = &o.evs, .help = "EVs per peer, spread over its paths"},
    UTIL_OPT_CC(&o.cc),
    UTIL_OPT_PORT_GBPS(&o.port_gbps),
    UTIL_OPT_BASE_RTT_NS(&o.base_rtt_ns),
    {.name = "timeout", .kind = UTIL_OPT_UINT, .def = "14", .min = 1, .max = 24, .dest = &o.timeout, .help = "QPs' local ACK timeout: 1.024 us x 2^N (14: 16.8 ms; hosts whose switches are software queue for milliseconds)"},
    {.name = "reorder-us", .kind = UTIL_OPT_UINT, .def = "200", .min = 1, .max = 100000, .dest = &o.reorder_us, .arg = "US", .help = "first reordering window of loss detection (it adapts; a kernel that forwards in software reorders by far more than a switch)"},
    {.name = "busy-poll-us", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 1000, .dest = &o.busy_poll_us, .arg = "US", .help = "after a packet arrives, keep reading the ports this long before sleeping: lower latency for a core spent spinning (0: sleep at once)"},
    {.name = "seed", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = UINT64_MAX, .dest = &o.seed, .help = "the engine's random seed; 0: from the clock"},
    UTIL_OPT_LOG(&o.log),
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const tables[] = {opts, NULL};
static const util_cli cli = {
    .prog = "mrc-agent",
    .usage = "mrc-agent --topology FILE --host NAME [--controller URL[,URL...] --token-file FILE "
             "--state-dir DIR] [options]",
    .about = "The host's software MRC NIC: runs the MRC engine on the host's plane ports, takes "
             "its profile\nand denylist from the controller, reports to it, and serves the local "
             "API mrc-perf uses,\nuntil SIGTERM.",
    .tables = tables,
    .config = true,
};

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    util_log(UTIL_LOG_NOTICE, "signal %d: stopping", (int)sig);
    event_base_loopexit(arg, NULL);
}

int main(int argc, char **argv)
{
    char err[512];
    int status = UTIL_EXIT_FAIL;
    fab_topo *topo = NULL;
    fab_error ferr;
    struct event_base *base = NULL;
    struct event *sigterm = NULL, *sigint = NULL;
    agent_daemon *d = NULL;
    char *token = NULL;
    util_log_init("mrc-agent", stderr);
    if ((status = util_cli_parse(&cli, argc, argv, NULL, NULL)) != UTIL_CLI_RUN) {
        goto out;
    }
    status = UTIL_EXIT_USAGE;
    util_log_level = (util_level)util_log_level_parse(o.log);
    int rv = fab_topo_load_file(o.topology, &topo, &ferr);
    if (rv != 0) {
        fprintf(stderr, "mrc-agent: --topology %s: %s%s%s\n", o.topology, ferr.path,
                ferr.path[0] ? ": " : "", ferr.msg[0] ? ferr.msg : fab_strerror(rv));
        goto out;
    }
    uint32_t host = fab_host_find(topo, o.host);
    if (host == FAB_NONE) {
        util_cli_fail(&cli, "--host %s: no such host in %s", o.host, o.topology);
        goto out;
    }
    if (o.controller && (!o.token_file || !o.state_dir)) {
        util_cli_fail(&cli, "--controller needs --token-file and --state-dir");
        goto out;
    }
    if (util_http_client_check(o.client_cert, o.client_key, "--client-cert", "--client-key", err,
                               sizeof(err)) != 0) {
        fprintf(stderr, "mrc-agent: %s\n", err);
        goto out;
    }
    if (o.token_file) {
        size_t len;
        rv = util_read_file(o.token_file, &token, &len);
        if (rv != 0) {
            fprintf(stderr, "mrc-agent: --token-file %s: %s\n", o.token_file, strerror(-rv));
            goto out;
        }
        token[strcspn(token, " \t\r\n")] = '\0';
    }
    status = UTIL_EXIT_FAIL;
    signal(SIGPIPE, SIG_IGN); /* a controller that goes away mid-write */
    base = event_base_new();
    agent_node_cfg nc = {.base = base,
                         .topo = topo,
                         .host = host,
                         .mode = strcmp(o.mode, "ecmp") == 0 ? AGENT_IO_ECMP : AGENT_IO_SRV6,
                         .mtu = (uint32_t)o.mtu,
                         .evs_per_peer = (unsigned)o.evs,
                         .cc = o.cc,
                         .port_gbps = (double)o.port_gbps,
                         .base_rtt_ns = o.base_rtt_ns,
                         .timeout = (uint8_t)o.timeout,
                         .reorder_ns = o.reorder_us * 1000,
                         .busy_poll_ns = o.busy_poll_us * 1000,
                         .floor = {.fraction = o.deny_floor,
                                   .planes = (unsigned)o.deny_floor_planes},
                         .seed = o.seed ? o.seed : agent_now() ^ (uint64_t)host << 40};
    agent_daemon_cfg dc = {.node = nc,
                           .api = o.api,
                           .url = o.controller,
                           .token = token,
                           .cafile = o.cacert,
                           .certfile = o.client_cert,
                           .keyfile = o.client_key,
                           .state_dir = o.state_dir,
                           .oob = o.oob,
                           .report_s = (unsigned)o.report_interval,
                           .report_max = (size_t)o.report_max,
                           .metrics = o.metrics};
    if (agent_daemon_new(&dc, &d, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-agent: %s\n", err);
        goto out;
    }
    sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    sigint = evsignal_new(base, SIGINT, on_signal, base);
    evsignal_add(sigterm, NULL);
    evsignal_add(sigint, NULL);
    util_log(UTIL_LOG_NOTICE, "%s: %s mode on %u planes, API %s", o.host, o.mode,
             fab_topo_planes(topo), o.api);
    event_base_dispatch(base);
    status = 0;
out:
    agent_daemon_free(d);
    free(token);
    if (sigterm) {
        event_free(sigterm);
        event_free(sigint);
    }
    if (base) {
        event_base_free(base);
    }
    fab_topo_free(topo);
    util_opt_free(opts);
    return status;
}
