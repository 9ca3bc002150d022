/* SPDX-License-Identifier: MIT */
/* mrc-agent: the host's software MRC NIC. Runs the engine on the host's plane ports and serves
 * the local API until SIGTERM or SIGINT. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_api.h"
#include "agent_daemon.h"
#include "util.h"

static struct {
    char *topology, *host, *mode, *api, *cc, *log, *controller, *token_file, *cacert, *state_dir,
        *oob;
    uint64_t mtu, evs, port_gbps, base_rtt_ns, seed, timeout, reorder_us, report_interval,
        report_max;
} o;

/* clang-format off */
static const util_opt opts[] = {
    {"topology", UTIL_OPT_STR, NULL, 0, 0, &o.topology, "topology file (required)", false},
    {"host", UTIL_OPT_STR, NULL, 0, 0, &o.host, "this host's name in the topology (required)", false},
    {"mode", UTIL_OPT_STR, "srv6", 0, 0, &o.mode, "srv6 (the path in the outer address) or ecmp (the EV in the UDP source port only)", false},
    {"api", UTIL_OPT_STR, AGENT_API_DEFAULT, 0, 0, &o.api, "local API socket ('@' first: abstract, one per network namespace)", false},
    {"controller", UTIL_OPT_STR, NULL, 0, 0, &o.controller, "the controller's URL, http[s]://HOST:PORT (none: run alone on the topology)", false},
    {"token_file", UTIL_OPT_STR, NULL, 0, 0, &o.token_file, "file holding this agent's bearer token (role agent, named after the host)", false},
    {"cacert", UTIL_OPT_STR, NULL, 0, 0, &o.cacert, "PEM file of the CAs that sign the controller's certificate (https)", false},
    {"state_dir", UTIL_OPT_STR, NULL, 0, 0, &o.state_dir, "where the last profile and denylist are kept (required with --controller)", false},
    {"oob", UTIL_OPT_STR, NULL, 0, 0, &o.oob, "[ADDR]:PORT where mrc-perf setup reaches this host, told to the controller", false},
    {"report_interval", UTIL_OPT_UINT, "10", 1, 3600, &o.report_interval, "seconds between reports to the controller", false},
    {"report_max", UTIL_OPT_UINT, "65000", 4096, 16777216, &o.report_max, "largest report, bytes (at most the controller's max_body)", false},
    {"mtu", UTIL_OPT_UINT, "4096", 256, 8192, &o.mtu, "payload bytes per packet (a power of two)", false},
    {"evs", UTIL_OPT_UINT, "128", 1, 1024, &o.evs, "EVs per peer, spread over its paths", false},
    {"cc", UTIL_OPT_STR, "none", 0, 0, &o.cc, "congestion control: none or uet-1.0-nscc", false},
    {"port_gbps", UTIL_OPT_UINT, "100", 1, 1600, &o.port_gbps, "rate of one plane port, Gb/s (NSCC)", false},
    {"base_rtt_ns", UTIL_OPT_UINT, "4000", 100, 100000000, &o.base_rtt_ns, "unloaded round trip of the longest path, ns (NSCC)", false},
    {"timeout", UTIL_OPT_UINT, "14", 1, 24, &o.timeout, "QPs' local ACK timeout: 1.024 us x 2^N (14: 16.8 ms; hosts whose switches are software queue for milliseconds)", false},
    {"reorder_us", UTIL_OPT_UINT, "200", 1, 100000, &o.reorder_us, "first reordering window of loss detection, us (it adapts; a host kernel that forwards in software reorders by far more than a switch)", false},
    {"seed", UTIL_OPT_UINT, "0", 0, UINT64_MAX, &o.seed, "the engine's random seed; 0: from the clock", false},
    {"log", UTIL_OPT_STR, "info", 0, 0, &o.log, "log level: debug, info, notice, warning, err", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};
/* clang-format on */

static void usage(FILE *f)
{
    fprintf(f, "usage: mrc-agent --topology FILE --host NAME [options] (or --config FILE)\n\n");
    util_opt_usage(opts, f);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    util_log(UTIL_LOG_NOTICE, "signal %d: stopping", (int)sig);
    event_base_loopexit(arg, NULL);
}

int main(int argc, char **argv)
{
    char err[512];
    int status = 1, level;
    fab_topo *topo = NULL;
    fab_error ferr;
    struct event_base *base = NULL;
    struct event *sigterm = NULL, *sigint = NULL;
    agent_daemon *d = NULL;
    char *token = NULL;
    util_log_init("mrc-agent", stderr);
    util_opt_defaults(opts);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        status = 0;
        goto out;
    }
    if (util_opt_parse(opts, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-agent: %s\n", err);
        usage(stderr);
        status = 2;
        goto out;
    }
    level = util_log_level_parse(o.log);
    if (!o.topology || !o.host || level < 0 ||
        (strcmp(o.mode, "srv6") != 0 && strcmp(o.mode, "ecmp") != 0) ||
        (strcmp(o.cc, "none") != 0 && strcmp(o.cc, "uet-1.0-nscc") != 0) || (o.mtu & (o.mtu - 1))) {
        fprintf(stderr, "mrc-agent: %s\n",
                !o.topology ? "--topology is required"
                : !o.host   ? "--host is required"
                : level < 0 ? "--log must be debug, info, notice, warning or err"
                : strcmp(o.mode, "srv6") != 0 && strcmp(o.mode, "ecmp") != 0
                    ? "--mode must be srv6 or ecmp"
                : strcmp(o.cc, "none") != 0 && strcmp(o.cc, "uet-1.0-nscc") != 0
                    ? "--cc must be none or uet-1.0-nscc"
                    : "--mtu must be a power of two");
        status = 2;
        goto out;
    }
    util_log_level = (util_level)level;
    int rv = fab_topo_load_file(o.topology, &topo, &ferr);
    if (rv != 0) {
        fprintf(stderr, "mrc-agent: %s: %s%s%s\n", o.topology,
                rv == FAB_ERR_INVAL ? ferr.path : fab_strerror(rv), rv == FAB_ERR_INVAL ? ": " : "",
                rv == FAB_ERR_INVAL ? ferr.msg : "");
        goto out;
    }
    uint32_t host = fab_host_find(topo, o.host);
    if (host == FAB_NONE) {
        fprintf(stderr, "mrc-agent: no host '%s' in %s\n", o.host, o.topology);
        status = 2;
        goto out;
    }
    if (o.controller && (!o.token_file || !o.state_dir)) {
        fprintf(stderr, "mrc-agent: --controller needs --token_file and --state_dir\n");
        status = 2;
        goto out;
    }
    if (o.token_file) {
        size_t len;
        rv = util_read_file(o.token_file, &token, &len);
        if (rv != 0) {
            fprintf(stderr, "mrc-agent: %s: %s\n", o.token_file, strerror(-rv));
            goto out;
        }
        token[strcspn(token, " \t\r\n")] = '\0';
    }
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
                         .seed = o.seed ? o.seed : agent_now() ^ (uint64_t)host << 40};
    agent_daemon_cfg dc = {.node = nc,
                           .api = o.api,
                           .url = o.controller,
                           .token = token,
                           .cafile = o.cacert,
                           .state_dir = o.state_dir,
                           .oob = o.oob,
                           .report_s = (unsigned)o.report_interval,
                           .report_max = (size_t)o.report_max};
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
