/* SPDX-License-Identifier: MIT */
/* mrc-probe: the prober's roles. `node` sends this host's share of the probe plan and reports
 * each window's heartbeat and deficits as one JSON line on stdout (and to --report-url).
 * `localize` takes every node's reports over HTTP (POST /api/v1/reports; GET /api/v1/status and
 * GET /metrics), localizes the failures, sends each window's evidence to the controller and
 * keeps its denylist in step with its verdicts.
 * `validate` sweeps, before a job, every path this host would use with the job's others. */
#include <event2/event.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "probe_ctl.h"
#include "probe_elect.h"
#include "probe_localize.h"
#include "probe_node.h"
#include "probe_send.h"
#include "probe_serve.h"
#include "probe_shard.h"
#include "probe_validate.h"
#include "probe_wire.h"
#include "util.h"
#include "util_peers.h"

static struct {
    char *topology, *host, *log, *report_url, *token_file, *listen, *controller, *cacert,
        *client_cert, *client_key, *report_tokens, *state;
    uint64_t window_ms, rate, epoch, udp_port, grace_ms, seed, max_deficits, tclass, deadline_ms,
        hold_s, hold_max_s, confirm, optic_group, count, pass_pct, timeout_ms, sweep_rate;
    char *hosts;
    bool json, open;
    char *cert, *key, *client_ca;
    uint64_t request_timeout, per_client, rate_limit, rate_burst;
    char *localizer, *planes, *etcd, *name, *advertise;
    uint64_t lease_s;
} o;

/* --localizer, once per shard: each value as it comes (util_opt keeps the last only) */
static struct {
    char *value[PROBE_SHARD_MAX];
    size_t n;
} loc_args;

static int localizer_arg(const util_opt *opt, char *err, size_t errlen)
{
    const char *v = *(char **)opt->dest;
    if (!v) {
        return 0;
    }
    if (loc_args.n == PROBE_SHARD_MAX) {
        snprintf(err, errlen, "--localizer: at most %d shards", PROBE_SHARD_MAX);
        return -EINVAL;
    }
    loc_args.value[loc_args.n++] = util_xstrdup(v);
    return 0;
}

/* The options every role shares: they define the plan, which must be the same everywhere. */
/* clang-format off */
static const util_opt plan_opts[] = {
    UTIL_OPT_TOPOLOGY(&o.topology, true),
    {.name = "window-ms", .kind = UTIL_OPT_UINT, .def = "1000", .min = 10, .max = 60000, .dest = &o.window_ms, .arg = "MS", .help = "the plan's window (every node the same)"},
    {.name = "rate", .kind = UTIL_OPT_UINT, .def = "1408", .min = 1, .max = 1000000, .dest = &o.rate, .help = "probes per second each port sends (every node the same)"},
    {.name = "seed", .kind = UTIL_OPT_UINT, .def = "1", .min = 0, .max = UINT64_MAX, .dest = &o.seed, .help = "the plan's permutations (every node the same)"},
    {.name = "epoch", .kind = UTIL_OPT_UINT, .def = "1", .min = 0, .max = UINT32_MAX, .dest = &o.epoch, .help = "the plan's generation: probes of another are not counted"},
    UTIL_OPT_LOG(&o.log),
    UTIL_OPT_END,
};

static const util_opt node_opts[] = {
    {.name = "host", .kind = UTIL_OPT_STR, .dest = &o.host, .arg = "NAME", .required = true, .help = "this host's name in the topology"},
    {.name = "udp-port", .kind = UTIL_OPT_UINT, .def = "4792", .min = 1, .max = 65535, .dest = &o.udp_port, .arg = "PORT", .help = "the probes' inner UDP port"},
    {.name = "tclass", .kind = UTIL_OPT_UINT, .def = "16", .min = 0, .max = 255, .dest = &o.tclass, .help = "the probes' traffic class (16: DSCP 4, MRC's trimmable data)"},
    {.name = "grace-ms", .kind = UTIL_OPT_UINT, .def = "300", .min = 1, .max = 60000, .dest = &o.grace_ms, .arg = "MS", .help = "a window's counts are final this long after it closes"},
    {.name = "max-deficits", .kind = UTIL_OPT_UINT, .def = "256", .min = 0, .max = 1000000, .dest = &o.max_deficits, .help = "deficits listed per port and window (the rest only counted)"},
    {.name = "report-url", .kind = UTIL_OPT_STR, .dest = &o.report_url, .arg = "URL", .help = "where each report is also POSTed whole (one localizer of every plane)"},
    {.name = "localizer", .kind = UTIL_OPT_STR, .dest = &o.localizer, .arg = "[PLANES=]URL,...", .check = localizer_arg, .help = "a shard's localizers (base URLs; once per shard): its planes' ports are reported there, to the leader among them; without PLANES, every plane"},
    UTIL_OPT_TOKEN_FILE(&o.token_file),
    UTIL_OPT_CACERT(&o.cacert),
    UTIL_OPT_CLIENT_CERT(&o.client_cert),
    UTIL_OPT_CLIENT_KEY(&o.client_key),
    UTIL_OPT_END,
};

static const util_opt val_opts[] = {
    {.name = "host", .kind = UTIL_OPT_STR, .dest = &o.host, .arg = "NAME", .required = true, .help = "this host's name in the topology"},
    {.name = "hosts", .kind = UTIL_OPT_STR, .def = "", .dest = &o.hosts, .arg = "H1,H2,...", .help = "the job's other hosts (their T0s are swept)"},
    {.name = "count", .kind = UTIL_OPT_UINT, .def = "10", .min = 1, .max = 10000, .dest = &o.count, .help = "probes per path"},
    {.name = "sweep-rate", .kind = UTIL_OPT_UINT, .def = "20000", .min = 1, .max = 10000000, .dest = &o.sweep_rate, .help = "probes per second the sweep sends, all ports together"},
    {.name = "pass-pct", .kind = UTIL_OPT_UINT, .def = "90", .min = 1, .max = 100, .dest = &o.pass_pct, .arg = "PCT", .help = "a path passes with this share of its probes back (background loss takes a few)"},
    {.name = "timeout-ms", .kind = UTIL_OPT_UINT, .def = "500", .min = 1, .max = 60000, .dest = &o.timeout_ms, .arg = "MS", .help = "how long the last probes may take to come back"},
    {.name = "udp-port", .kind = UTIL_OPT_UINT, .def = "4794", .min = 1, .max = 65535, .dest = &o.udp_port, .arg = "PORT", .help = "the sweep's inner UDP port (not the nodes')"},
    {.name = "tclass", .kind = UTIL_OPT_UINT, .def = "16", .min = 0, .max = 255, .dest = &o.tclass, .help = "the probes' traffic class"},
    {.name = "json", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.json, .help = "print every path's result as JSON"},
    UTIL_OPT_END,
};

static const util_opt loc_opts[] = {
    {.name = "listen", .kind = UTIL_OPT_STR, .def = "[::1]:4793", .dest = &o.listen, .arg = "ADDR:PORT", .help = "where the nodes report"},
    {.name = "report-tokens", .kind = UTIL_OPT_STR, .dest = &o.report_tokens, .arg = "FILE", .help = "file of 'TOKEN prober HOST' lines: each node's token, good for its host's reports only (required, unless --open)"},
    {.name = "open", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.open, .help = "take reports without tokens, any host's from anyone: for a lab or a test only"},
    {.name = "planes", .kind = UTIL_OPT_STR, .def = "all", .dest = &o.planes, .arg = "LIST", .help = "the shard: the planes whose reports it takes and whose elements it denies (0, 0-1, 2,3)"},
    {.name = "etcd", .kind = UTIL_OPT_STR, .dest = &o.etcd, .arg = "URLS", .help = "etcd's client URLs, comma-separated: the shard's replicas elect a leader, the others follow"},
    {.name = "name", .kind = UTIL_OPT_STR, .dest = &o.name, .arg = "NAME", .help = "this replica's name in the election (default: the host name)"},
    {.name = "advertise", .kind = UTIL_OPT_STR, .dest = &o.advertise, .arg = "URL", .help = "this replica's base URL, where a follower sends the nodes (required with --etcd)"},
    {.name = "lease-s", .kind = UTIL_OPT_UINT, .def = "3", .min = 2, .max = 60, .dest = &o.lease_s, .arg = "S", .help = "the leader's lease: a dead leader's successor leads within it and a second"},
    {.name = "state", .kind = UTIL_OPT_STR, .dest = &o.state, .arg = "FILE", .help = "where verdicts, entries and holds are kept across restarts (default: state.json in $STATE_DIRECTORY when systemd sets it, else none)"},
    UTIL_OPT_CONTROLLER(&o.controller),
    UTIL_OPT_TOKEN_FILE(&o.token_file),
    UTIL_OPT_CACERT(&o.cacert),
    UTIL_OPT_CLIENT_CERT(&o.client_cert),
    UTIL_OPT_CLIENT_KEY(&o.client_key),
    {.name = "deadline-ms", .kind = UTIL_OPT_UINT, .def = "1500", .min = 1, .max = 600000, .dest = &o.deadline_ms, .arg = "MS", .help = "a window is evaluated at the latest this long after it closes"},
    {.name = "confirm", .kind = UTIL_OPT_UINT, .def = "2", .min = 1, .max = 32, .dest = &o.confirm, .help = "consecutive evaluations a verdict needs"},
    {.name = "optic-group", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 64, .dest = &o.optic_group, .help = "uplinks per optic cage (0: 4, or what divides the T1 count)"},
    {.name = "hold-s", .kind = UTIL_OPT_UINT, .def = "30", .min = 1, .max = 86400, .dest = &o.hold_s, .arg = "S", .help = "clean probing before a denylist entry is lifted"},
    {.name = "hold-max-s", .kind = UTIL_OPT_UINT, .def = "3600", .min = 1, .max = 604800, .dest = &o.hold_max_s, .arg = "S", .help = "the longest hold a flapping component earns"},
    {.name = "cert", .kind = UTIL_OPT_STR, .dest = &o.cert, .arg = "FILE", .help = "PEM certificate: serve HTTPS (with --key)"},
    {.name = "key", .kind = UTIL_OPT_STR, .dest = &o.key, .arg = "FILE", .secret = true, .help = "PEM private key of --cert"},
    {.name = "client-ca", .kind = UTIL_OPT_STR, .dest = &o.client_ca, .arg = "FILE", .help = "PEM CA certificates: every client needs a certificate one of them signed (with --cert)"},
    {.name = "request-timeout", .kind = UTIL_OPT_UINT, .def = "10", .min = 1, .max = 3600, .dest = &o.request_timeout, .arg = "S", .help = "seconds from a request's first byte to its answer"},
    {.name = "per-client-connections", .kind = UTIL_OPT_UINT, .def = "128", .min = 1, .max = 1048576, .dest = &o.per_client, .help = "open connections per client address at most"},
    {.name = "rate-limit", .kind = UTIL_OPT_UINT, .def = "200", .min = 0, .max = 10000000, .dest = &o.rate_limit, .arg = "N", .help = "requests per second one token may make (more: 429); 0: no limit"},
    {.name = "rate-burst", .kind = UTIL_OPT_UINT, .def = "2000", .min = 1, .max = 10000000, .dest = &o.rate_burst, .arg = "N", .help = "requests one token may make at once above --rate-limit"},
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const node_tables[] = {plan_opts, node_opts, NULL};
static const util_opt *const val_tables[] = {plan_opts, val_opts, NULL};
static const util_opt *const loc_tables[] = {plan_opts, loc_opts, NULL};

static const util_cli node_cli = {
    .prog = "mrc-probe node",
    .usage = "mrc-probe node --topology FILE --host NAME [--localizer [PLANES=]URL,... ...] "
             "[--token-file FILE] [options]",
    .about = "Sends this host's share of the probe plan on every plane port and reports each "
             "window's\nheartbeat and deficits, one JSON line on stdout and to --report-url, "
             "until SIGTERM.",
    .tables = node_tables,
    .config = true,
};
static const util_cli loc_cli = {
    .prog = "mrc-probe localize",
    .usage = "mrc-probe localize --topology FILE [--listen ADDR:PORT] (--report-tokens FILE | "
             "--open) [--controller URL,... --token-file FILE] [--state FILE] [--planes LIST] "
             "[--etcd URLS --advertise URL [--name NAME]] [options]",
    .about = "Takes every node's reports (POST /api/v1/reports), names each gray failure as a "
             "link direction,\nhost port, switch or optic group, and keeps the controller's "
             "denylist in step with its verdicts\n(GET /api/v1/status lists them; GET /metrics "
             "for Prometheus), until SIGTERM.",
    .tables = loc_tables,
    .config = true,
};
static const util_cli val_cli = {
    .prog = "mrc-probe validate",
    .usage = "mrc-probe validate --topology FILE --host NAME --hosts H1,H2,... [options]",
    .about = "Before a job: sweeps every path this host would use with the job's other hosts "
             "with probes\nthat come back to it, and prints a pass or fail report (exit 1 on a "
             "failed path).",
    .tables = val_tables,
};

typedef struct node_ctx {
    struct event_base *base;
    char *token;
    probe_send *send; /* NULL: reports on stdout only */
} node_ctx;

static void on_report(void *user, json_object *r)
{
    node_ctx *c = user;
    size_t len;
    const char *s = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN, &len);
    fwrite(s, 1, len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    if (c->send) {
        probe_send_report(c->send, r);
    }
    json_object_put(r);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    util_log(UTIL_LOG_NOTICE, "signal %d: stopping", (int)sig);
    event_base_loopexit(arg, NULL);
}

/* What every role does first: its options, the log level, the topology, the plan, the token
 * file. */
typedef struct setup {
    const util_cli *cli;
    fab_topo *topo;
    probe_plan *plan;
    probe_cfg pc;
    char *token;
    uint32_t host; /* --host, for the roles that take one */
} setup;

static int read_token(const char *path, char **ptoken)
{
    size_t len;
    int rv = util_read_file(path, ptoken, &len);
    if (rv != 0) {
        fprintf(stderr, "mrc-probe: --token-file %s: %s\n", path, strerror(-rv));
        return UTIL_EXIT_USAGE;
    }
    (*ptoken)[strcspn(*ptoken, " \t\r\n")] = '\0';
    return 0;
}

/* Returns UTIL_CLI_RUN to go on, or the exit status. */
static int setup_role(setup *su, int argc, char **argv)
{
    int rv = util_cli_parse(su->cli, argc, argv, NULL, NULL);
    fab_error ferr;
    if (rv != UTIL_CLI_RUN) {
        return rv;
    }
    util_log_level = (util_level)util_log_level_parse(o.log);
    rv = fab_topo_load_file(o.topology, &su->topo, &ferr);
    if (rv != 0) {
        fprintf(stderr, "mrc-probe: --topology %s: %s%s%s\n", o.topology, ferr.path,
                ferr.path[0] ? ": " : "", ferr.msg[0] ? ferr.msg : fab_strerror(rv));
        return UTIL_EXIT_USAGE;
    }
    su->host = FAB_NONE;
    if (o.host && (su->host = fab_host_find(su->topo, o.host)) == FAB_NONE) {
        return util_cli_fail(su->cli, "--host %s: no such host in %s", o.host, o.topology);
    }
    probe_cfg_default(&su->pc);
    su->pc.window_ns = o.window_ms * 1000000ull;
    su->pc.rate_per_port = (double)o.rate;
    su->pc.seed = o.seed;
    rv = probe_plan_new(su->topo, &su->pc, &su->plan);
    if (rv != 0) {
        return util_cli_fail(su->cli, "no probe plan for %s at --rate %llu: %s", o.topology,
                             (unsigned long long)o.rate, strerror(-rv));
    }
    if (o.token_file && read_token(o.token_file, &su->token) != 0) {
        return UTIL_EXIT_USAGE;
    }
    char err[512];
    if (util_http_client_check(o.client_cert, o.client_key, "--client-cert", "--client-key", err,
                               sizeof(err)) != 0) {
        fprintf(stderr, "mrc-probe: %s\n", err);
        return UTIL_EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN);
    return UTIL_CLI_RUN;
}

static void setup_free(setup *su)
{
    probe_plan_free(su->plan);
    fab_topo_free(su->topo);
    free(su->token);
    for (const util_opt *const *t = su->cli->tables; *t; t++) {
        util_opt_free(*t);
    }
}

/* Runs |base| until SIGTERM or SIGINT. */
static void run_loop(struct event_base *base)
{
    struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
    event_add(sigterm, NULL);
    event_add(sigint, NULL);
    event_base_dispatch(base);
    event_free(sigterm);
    event_free(sigint);
}

static int run_node(int argc, char **argv)
{
    char err[512];
    setup su = {.cli = &node_cli};
    probe_node *node = NULL;
    node_ctx c = {0};
    int status = setup_role(&su, argc, argv);
    if (status != UTIL_CLI_RUN) {
        goto out;
    }
    status = UTIL_EXIT_FAIL;
    uint32_t host = su.host;
    c.token = su.token;
    c.base = event_base_new();
    probe_shard_dest dests[PROBE_SHARD_MAX + 1];
    size_t nd = 0;
    unsigned nplanes = fab_topo_planes(su.topo);
    for (size_t i = 0; i < loc_args.n; i++) {
        if (probe_shard_dest_add(dests, &nd, loc_args.value[i], nplanes, err, sizeof(err)) != 0) {
            probe_shard_dests_free(dests, nd);
            status = util_cli_fail(&node_cli, "%s", err);
            goto out;
        }
    }
    if (o.report_url && nd) {
        probe_shard_dests_free(dests, nd);
        status = util_cli_fail(&node_cli, "--report-url sends every plane to one localizer: not "
                                          "with --localizer");
        goto out;
    }
    if (o.report_url) {
        dests[nd++] = (probe_shard_dest){.planes = probe_shard_all(nplanes),
                                         .urls = util_xstrdup(o.report_url),
                                         .whole_url = true};
    }
    if (nd) {
        probe_send_cfg pc = {.base = c.base,
                             .dests = dests,
                             .ndests = nd,
                             .token = su.token,
                             .cafile = o.cacert,
                             .certfile = o.client_cert,
                             .keyfile = o.client_key};
        int srv = probe_send_new(&pc, &c.send, err, sizeof(err));
        probe_shard_dests_free(dests, nd);
        if (srv != 0) {
            status = util_cli_fail(&node_cli, "--localizer: %s", err);
            goto out;
        }
    }
    probe_node_cfg nc = {.base = c.base,
                         .topo = su.topo,
                         .plan = su.plan,
                         .host = host,
                         .window_ns = su.pc.window_ns,
                         .epoch = (uint32_t)o.epoch,
                         .udp_port = (uint16_t)o.udp_port,
                         .tclass = (uint8_t)o.tclass,
                         .dscp_trimmed = {12, 16}, /* the engine's defaults (mrc_settings) */
                         .grace_ns = o.grace_ms * 1000000ull,
                         .max_deficits = (unsigned)o.max_deficits,
                         .report = on_report,
                         .user = &c};
    if (probe_node_new(&nc, &node, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-probe: %s\n", err);
        status = 1;
        goto out;
    }
    util_log(UTIL_LOG_NOTICE, "%s: probing, %u probes per port per %llu ms window", o.host,
             probe_plan_per_window(su.plan), (unsigned long long)o.window_ms);
    run_loop(c.base);
    status = 0;
out:
    probe_node_free(node);
    probe_send_free(c.send);
    for (size_t i = 0; i < loc_args.n; i++) {
        free(loc_args.value[i]);
    }
    loc_args.n = 0;
    if (c.base) {
        event_base_free(c.base);
    }
    setup_free(&su);
    return status;
}

/* The election's outcome, read on the loop every tick: the localizer leads or follows. */
typedef struct lead_ctx {
    probe_elect *elect;
    probe_localize *loc;
} lead_ctx;

static void on_lead_tick(evutil_socket_t fd, short what, void *arg)
{
    lead_ctx *lc = arg;
    probe_elect_state st;
    (void)fd;
    (void)what;
    probe_elect_get(lc->elect, &st);
    probe_localize_lead(lc->loc, st.leading);
}

static int run_localize(int argc, char **argv)
{
    char err[512];
    setup su = {.cli = &loc_cli};
    probe_localize *loc = NULL;
    struct event_base *base = NULL;
    probe_serve *http = NULL;
    probe_elect *elect = NULL;
    struct event *lead_ev = NULL;
    lead_ctx lead = {0};
    uint64_t planes = 0;
    util_auth tokens = {0}; /* the nodes' (--report-tokens); none: reports are open */
    char *cert = NULL, *key = NULL, *client_ca = NULL;
    int status = setup_role(&su, argc, argv);
    if (status != UTIL_CLI_RUN) {
        goto out;
    }
    status = UTIL_EXIT_USAGE;
    if (!o.report_tokens && !o.open) {
        status = util_cli_fail(&loc_cli, "reports need the nodes' tokens: give --report-tokens "
                                         "FILE, or --open for a lab or a test");
        goto out;
    }
    if (o.report_tokens && o.open) {
        status = util_cli_fail(&loc_cli, "--open takes reports without tokens: not with "
                                         "--report-tokens");
        goto out;
    }
    if (o.report_tokens && util_auth_load(o.report_tokens, &tokens, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-probe: --report-tokens %s\n", err);
        goto out;
    }
    if (o.report_tokens && !tokens.n) {
        status = util_cli_fail(&loc_cli, "--report-tokens %s holds no token: no node could report",
                               o.report_tokens);
        goto out;
    }
    if (probe_shard_parse(o.planes, probe_plan_planes(su.plan), &planes, err, sizeof(err)) != 0) {
        status = util_cli_fail(&loc_cli, "--planes: %s", err);
        goto out;
    }
    if (o.etcd && !o.advertise) {
        status = util_cli_fail(&loc_cli, "--etcd needs --advertise URL: where a follower sends "
                                         "the nodes to this replica when it leads");
        goto out;
    }
    if ((o.name || o.advertise) && !o.etcd) {
        status = util_cli_fail(&loc_cli, "--name and --advertise are the election's: give --etcd");
        goto out;
    }
    if (o.advertise) {
        util_peers chk;
        if (util_peers_parse(&chk, o.advertise, err, sizeof(err)) != 0 || chk.n != 1) {
            status = util_cli_fail(&loc_cli, "--advertise: %s", chk.n > 1 ? "one URL" : err);
            util_peers_free(&chk);
            goto out;
        }
        util_peers_free(&chk);
    }
    if (o.controller && probe_ctl_check(o.controller, err, sizeof(err)) != 0) {
        status = util_cli_fail(&loc_cli, "--controller: %s", err);
        goto out;
    }
    if (o.open) {
        util_log(UTIL_LOG_WARNING, "--open: reports are taken without tokens, any host's from "
                                   "anyone (for a lab or a test only)");
    }
    /* systemd's StateDirectory= (mrc-localize@.service): the first of its folders */
    char state_def[4096];
    const char *sd = getenv("STATE_DIRECTORY");
    if (!o.state && sd && sd[0]) {
        snprintf(state_def, sizeof(state_def), "%.*s/state.json", (int)strcspn(sd, ":"), sd);
        o.state = util_xstrdup(state_def);
    }
    if (!o.cert != !o.key || (o.client_ca && !o.cert)) {
        util_cli_fail(&loc_cli, "--cert and --key go together, and --client-ca needs them");
        goto out;
    }
    const char *bad = NULL;
    int frv = 0;
    if (o.cert && (frv = util_read_file(o.cert, &cert, &(size_t){0})) != 0) {
        bad = o.cert;
    } else if (o.key && (frv = util_read_file(o.key, &key, &(size_t){0})) != 0) {
        bad = o.key;
    } else if (o.client_ca && (frv = util_read_file(o.client_ca, &client_ca, &(size_t){0})) != 0) {
        bad = o.client_ca;
    }
    if (bad) {
        fprintf(stderr, "mrc-probe: %s: %s\n", bad, strerror(-frv));
        goto out;
    }
    status = UTIL_EXIT_FAIL;
    base = event_base_new();
    probe_localize_cfg lc = {.base = base,
                             .topo = su.topo,
                             .plan = su.plan,
                             .window_ns = su.pc.window_ns,
                             .epoch = (uint32_t)o.epoch,
                             .deadline_ns = o.deadline_ms * 1000000ull,
                             .controller = o.controller,
                             .token = su.token,
                             .cafile = o.cacert,
                             .certfile = o.client_cert,
                             .keyfile = o.client_key,
                             .hold_ns = o.hold_s * 1000000000ull,
                             .hold_max_ns = o.hold_max_s * 1000000000ull,
                             .state_path = o.state && o.state[0] ? o.state : NULL,
                             .planes = planes,
                             .elected = o.etcd != NULL};
    uint32_t nt0, nt1, np;
    probe_plan_shape(su.plan, 0, &nt0, &nt1, &np);
    probe_infer_cfg_default(&lc.infer, probe_plan_planes(su.plan), nt0, nt1, np);
    /* the group must divide the T1 count: a small fabric's cages hold what it has */
    unsigned g = o.optic_group ? (unsigned)o.optic_group : 4;
    while (g > 1 && nt1 % g) {
        g--;
    }
    lc.infer.optic_group = g;
    probe_infer_cfg_from_plan(&lc.infer, su.plan);
    lc.infer.confirm = (unsigned)o.confirm;
    if (probe_localize_new(&lc, &loc, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-probe: %s\n", err);
        goto out;
    }
    probe_serve_cfg sc = {.base = base,
                          .listen = o.listen,
                          .loc = loc,
                          .tokens = &tokens,
                          .per_client = (unsigned)o.per_client,
                          .request_timeout_ms = (unsigned)o.request_timeout * 1000,
                          .rate = o.rate_limit ? (unsigned)o.rate_limit : UINT32_MAX,
                          .burst = (unsigned)o.rate_burst,
                          .cert_pem = cert,
                          .key_pem = key,
                          .client_ca_pem = client_ca};
    if ((frv = probe_serve_start(&sc, &http, err, sizeof(err))) != 0) {
        fprintf(stderr, "mrc-probe: --listen %s: %s\n", o.listen, err);
        status = frv == -EINVAL ? UTIL_EXIT_USAGE : UTIL_EXIT_FAIL;
        goto out;
    }
    char shard[128];
    probe_shard_str(planes, shard, sizeof(shard));
    if (o.etcd) {
        /* --advertise ...:0 (a test's): the port it serves on */
        char adv[512];
        size_t al = strlen(o.advertise);
        if (al > 2 && strcmp(o.advertise + al - 2, ":0") == 0) {
            snprintf(adv, sizeof(adv), "%.*s:%u", (int)(al - 2), o.advertise,
                     probe_serve_port(http));
        } else {
            snprintf(adv, sizeof(adv), "%s", o.advertise);
        }
        char key[256], host[256] = "localizer";
        gethostname(host, sizeof(host) - 1);
        snprintf(key, sizeof(key), "/mrcfab/localizer/%s/leader", shard);
        probe_elect_cfg ec = {.endpoints = o.etcd,
                              .key = key,
                              .name = o.name ? o.name : host,
                              .url = adv,
                              .ttl_s = (unsigned)o.lease_s};
        if ((frv = probe_elect_start(&ec, &elect, err, sizeof(err))) != 0) {
            fprintf(stderr, "mrc-probe: --etcd %s: %s\n", o.etcd, err);
            status = frv == -EINVAL ? UTIL_EXIT_USAGE : UTIL_EXIT_FAIL;
            goto out;
        }
        lead = (lead_ctx){.elect = elect, .loc = loc};
        lead_ev = event_new(base, -1, EV_PERSIST, on_lead_tick, &lead);
        struct timeval ltv = {0, 100000};
        event_add(lead_ev, &ltv);
        probe_serve_set_elect(http, elect);
        util_log(UTIL_LOG_NOTICE, "shard %s: campaigning on %s as %s (%s)", shard, key, ec.name,
                 adv);
    }
    /* the port line has the controller's form, so --listen ...:0 is usable by scripts and tests */
    util_log(UTIL_LOG_NOTICE,
             "localizing on %s: %s port %u (%s), reports at /api/v1/reports, planes %s%s%s",
             o.topology, o.listen, probe_serve_port(http), cert ? "https" : "http", shard,
             o.controller ? ", verdicts to " : " (no controller)",
             o.controller ? o.controller : "");
    run_loop(base);
    status = 0;
out:
    if (lead_ev) {
        event_free(lead_ev);
    }
    /* the election first: a leader resigns while it still serves, so another leads at once */
    probe_elect_stop(elect);
    probe_serve_free(http);
    probe_localize_free(loc);
    if (base) {
        event_base_free(base);
    }
    util_auth_free(&tokens);
    free(cert);
    free(key);
    free(client_ca);
    setup_free(&su);
    return status;
}

static int run_validate(int argc, char **argv)
{
    char err[512];
    setup su = {.cli = &val_cli};
    uint32_t *peers = NULL;
    unsigned npeers = 0;
    json_object *res = NULL;
    int status = setup_role(&su, argc, argv);
    if (status != UTIL_CLI_RUN) {
        goto out;
    }
    status = UTIL_EXIT_USAGE;
    uint32_t host = su.host;
    peers = util_xcalloc(strlen(o.hosts) / 2 + 1, sizeof(*peers));
    for (char *save = NULL, *h = strtok_r(o.hosts, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
        peers[npeers] = fab_host_find(su.topo, h);
        if (peers[npeers] == FAB_NONE) {
            util_cli_fail(&val_cli, "--hosts: no host '%s' in %s", h, o.topology);
            goto out;
        }
        npeers++;
    }
    probe_validate_cfg vc = {.topo = su.topo,
                             .host = host,
                             .peers = peers,
                             .npeers = npeers,
                             .count = (unsigned)o.count,
                             .pass_pct = (unsigned)o.pass_pct,
                             .timeout_ns = o.timeout_ms * 1000000ull,
                             .rate = o.sweep_rate,
                             .udp_port = (uint16_t)o.udp_port,
                             .tclass = (uint8_t)o.tclass};
    if (probe_validate_run(&vc, &res, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-probe: %s\n", err);
        status = 1;
        goto out;
    }
    json_object *arr = json_object_object_get(res, "results");
    if (o.json) {
        printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY));
    } else {
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
            json_object *r = json_object_array_get_idx(arr, i);
            if (json_object_get_boolean(json_object_object_get(r, "pass"))) {
                continue;
            }
            printf("FAIL %s plane %d %s bounce: T0 %d, T1 %d, far T0 %d: %d of %d back\n", o.host,
                   json_object_get_int(json_object_object_get(r, "plane")),
                   json_object_get_string(json_object_object_get(r, "kind")),
                   json_object_get_int(json_object_object_get(r, "t0")),
                   json_object_get_int(json_object_object_get(r, "t1")),
                   json_object_get_int(json_object_object_get(r, "far_t0")),
                   json_object_get_int(json_object_object_get(r, "back")),
                   json_object_get_int(json_object_object_get(r, "sent")));
        }
        printf("%s %s: %" PRId64 " paths, %" PRId64 " failed\n",
               json_object_get_boolean(json_object_object_get(res, "pass")) ? "PASS" : "FAIL",
               o.host, json_object_get_int64(json_object_object_get(res, "paths")),
               json_object_get_int64(json_object_object_get(res, "failed")));
    }
    status = json_object_get_boolean(json_object_object_get(res, "pass")) ? 0 : 1;
out:
    json_object_put(res);
    free(peers);
    setup_free(&su);
    return status;
}

int main(int argc, char **argv)
{
    static const util_opt *const none[] = {NULL};
    static const util_cli top = {
        .prog = "mrc-probe",
        .usage = "mrc-probe ROLE [options]",
        .about = "The Clustermapper-style prober of the fabric.",
        .tables = none,
        .stop_at_operand = true,
        .min_operands = 1,
        .max_operands = UINT32_MAX,
        .operands = "ROLE",
        .more = "roles (each with its own --help):\n"
                "  node       send this host's probes and report each window\n"
                "  localize   name gray failures from the nodes' reports and deny them\n"
                "  validate   sweep a job's paths from this host before it starts\n",
    };
    char **args = NULL;
    int n = 0, rv;
    util_log_init("mrc-probe", stderr);
    if ((rv = util_cli_parse(&top, argc, argv, &n, &args)) != UTIL_CLI_RUN) {
        return rv;
    }
    /* the role's own parse sees its name as argv[0] */
    int at = 1;
    while (argv[at] != args[0]) {
        at++;
    }
    const char *role = args[0];
    free(args);
    if (strcmp(role, "node") == 0) {
        return run_node(argc - at, argv + at);
    }
    if (strcmp(role, "localize") == 0) {
        return run_localize(argc - at, argv + at);
    }
    if (strcmp(role, "validate") == 0) {
        return run_validate(argc - at, argv + at);
    }
    return util_cli_fail(&top, "no role '%s' (node, localize or validate)", role);
}
