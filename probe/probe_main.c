/* SPDX-License-Identifier: MIT */
/* mrc-probe: the prober's roles. `node` sends this host's share of the probe plan and reports
 * each window's heartbeat and deficits as one JSON line on stdout (and to --report_url).
 * `localize` takes every node's reports over HTTP (POST /api/v1/reports, GET /api/v1/status),
 * localizes the failures and keeps the controller's denylist in step with its verdicts.
 * `validate` sweeps, before a job, every path this host would use with the job's others. */
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_localize.h"
#include "probe_node.h"
#include "probe_validate.h"
#include "probe_wire.h"
#include "util.h"

static struct {
    char *topology, *host, *log, *report_url, *token_file, *listen, *controller, *cacert,
        *report_tokens;
    uint64_t window_ms, rate, epoch, udp_port, grace_ms, seed, max_deficits, tclass, deadline_ms,
        hold_s, hold_max_s, confirm, optic_group, count, pass_pct, timeout_ms, sweep_rate;
    char *hosts;
    bool json;
} o;

/* The options every role shares: they define the plan, which must be the same everywhere. */
#define PLAN_OPTS                                                                                  \
    {"topology", UTIL_OPT_STR, NULL, 0, 0, &o.topology, "topology file (required)", false},        \
        {"window_ms",                                                                              \
         UTIL_OPT_UINT,                                                                            \
         "1000",                                                                                   \
         10,                                                                                       \
         60000,                                                                                    \
         &o.window_ms,                                                                             \
         "the plan's window, ms (every node the same)",                                            \
         false},                                                                                   \
        {"rate",                                                                                   \
         UTIL_OPT_UINT,                                                                            \
         "1408",                                                                                   \
         1,                                                                                        \
         1000000,                                                                                  \
         &o.rate,                                                                                  \
         "probes per second each port sends (every node the same)",                                \
         false},                                                                                   \
        {"seed",                                                                                   \
         UTIL_OPT_UINT,                                                                            \
         "1",                                                                                      \
         0,                                                                                        \
         UINT64_MAX,                                                                               \
         &o.seed,                                                                                  \
         "the plan's permutations (every node the same)",                                          \
         false},                                                                                   \
        {"epoch",                                                                                  \
         UTIL_OPT_UINT,                                                                            \
         "1",                                                                                      \
         0,                                                                                        \
         UINT32_MAX,                                                                               \
         &o.epoch,                                                                                 \
         "the plan's generation: probes of another are not counted",                               \
         false},                                                                                   \
    {                                                                                              \
        "log", UTIL_OPT_STR, "info", 0, 0, &o.log, "log level: debug, info, notice, warning, err", \
            false                                                                                  \
    }

/* clang-format off */
static const util_opt node_opts[] = {
    PLAN_OPTS,
    {"host", UTIL_OPT_STR, NULL, 0, 0, &o.host, "this host's name in the topology (required)", false},
    {"udp_port", UTIL_OPT_UINT, "4792", 1, 65535, &o.udp_port, "the probes' inner UDP port", false},
    {"tclass", UTIL_OPT_UINT, "16", 0, 255, &o.tclass, "the probes' traffic class (16: DSCP 4, MRC's trimmable data)", false},
    {"grace_ms", UTIL_OPT_UINT, "300", 1, 60000, &o.grace_ms, "a window's counts are final this long after it closes", false},
    {"max_deficits", UTIL_OPT_UINT, "256", 0, 1000000, &o.max_deficits, "deficits listed per port and window (the rest only counted)", false},
    {"report_url", UTIL_OPT_STR, NULL, 0, 0, &o.report_url, "where each report is also POSTed (mrc-probe localize)", false},
    {"token_file", UTIL_OPT_STR, NULL, 0, 0, &o.token_file, "file holding the bearer token for --report_url", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};

static const util_opt val_opts[] = {
    PLAN_OPTS,
    {"host", UTIL_OPT_STR, NULL, 0, 0, &o.host, "this host's name in the topology (required)", false},
    {"hosts", UTIL_OPT_STR, "", 0, 0, &o.hosts, "the job's other hosts, comma-separated (their T0s are swept)", false},
    {"count", UTIL_OPT_UINT, "10", 1, 10000, &o.count, "probes per path", false},
    {"sweep_rate", UTIL_OPT_UINT, "20000", 1, 10000000, &o.sweep_rate, "probes per second the sweep sends, all ports together", false},
    {"pass_pct", UTIL_OPT_UINT, "90", 1, 100, &o.pass_pct, "a path passes with this % of its probes back (background loss takes a few)", false},
    {"timeout_ms", UTIL_OPT_UINT, "500", 1, 60000, &o.timeout_ms, "how long the last probes may take to come back", false},
    {"udp_port", UTIL_OPT_UINT, "4794", 1, 65535, &o.udp_port, "the sweep's inner UDP port (not the nodes')", false},
    {"tclass", UTIL_OPT_UINT, "16", 0, 255, &o.tclass, "the probes' traffic class", false},
    {"json", UTIL_OPT_BOOL, "false", 0, 0, &o.json, "print every path's result as JSON", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};

static const util_opt loc_opts[] = {
    PLAN_OPTS,
    {"listen", UTIL_OPT_STR, "[::1]:4793", 0, 0, &o.listen, "ADDR:PORT the nodes report to", false},
    {"report_tokens", UTIL_OPT_STR, NULL, 0, 0, &o.report_tokens, "file of 'TOKEN prober HOST' lines: each node's token, good for its host's reports only (none: reports are open)", false},
    {"controller", UTIL_OPT_STR, NULL, 0, 0, &o.controller, "the controller's URL (none: verdicts are only logged)", false},
    {"token_file", UTIL_OPT_STR, NULL, 0, 0, &o.token_file, "file holding a prober token for the controller", false},
    {"cacert", UTIL_OPT_STR, NULL, 0, 0, &o.cacert, "PEM file of the CAs that sign the controller's certificate (https)", false},
    {"deadline_ms", UTIL_OPT_UINT, "1500", 1, 600000, &o.deadline_ms, "a window is evaluated at the latest this long after it closes", false},
    {"confirm", UTIL_OPT_UINT, "2", 1, 32, &o.confirm, "consecutive evaluations a verdict needs", false},
    {"optic_group", UTIL_OPT_UINT, "0", 0, 64, &o.optic_group, "uplinks per optic cage (0: 4, or what divides the T1 count)", false},
    {"hold_s", UTIL_OPT_UINT, "30", 1, 86400, &o.hold_s, "clean probing before a denylist entry is lifted, s", false},
    {"hold_max_s", UTIL_OPT_UINT, "3600", 1, 604800, &o.hold_max_s, "the longest hold a flapping component earns, s", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};
/* clang-format on */

typedef struct node_ctx {
    struct event_base *base;
    char *token;
} node_ctx;

static void on_posted(void *user, util_http_result *res)
{
    (void)user;
    if (res->rv != 0 || res->status / 100 != 2) {
        util_log(UTIL_LOG_WARNING, "report: %s", res->rv ? res->err : "refused");
    }
}

static void on_report(void *user, json_object *r)
{
    node_ctx *c = user;
    size_t len;
    const char *s = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN, &len);
    fwrite(s, 1, len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    if (o.report_url) {
        char err[256];
        util_http *req;
        util_http_opts ho = {.method = "POST", .bearer = c->token, .body = s, .bodylen = len};
        if (util_http_start(c->base, o.report_url, &ho, on_posted, c, &req, err, sizeof(err)) !=
            0) {
            util_log(UTIL_LOG_WARNING, "report: %s", err);
        }
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
 * file. Returns 0, or the exit status (0 after --help). */
typedef struct setup {
    const char *role, *usage;
    bool needs_host;
    const util_opt *opts;
    fab_topo *topo;
    probe_plan *plan;
    probe_cfg pc;
    char *token;
} setup;

static int read_token(const char *path, char **ptoken)
{
    size_t len;
    int rv = util_read_file(path, ptoken, &len);
    if (rv != 0) {
        fprintf(stderr, "mrc-probe: %s: %s\n", path, strerror(-rv));
        return 1;
    }
    (*ptoken)[strcspn(*ptoken, " \t\r\n")] = '\0';
    return 0;
}

static int setup_role(setup *su, int argc, char **argv, bool *done)
{
    char err[512] = "";
    int level = -1, rv;
    fab_error ferr;
    util_opt_defaults(su->opts);
    *done = false;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: %s\n\n", su->usage);
        util_opt_usage(su->opts, stdout);
        *done = true;
        return 0;
    }
    bool needs_host = su->needs_host;
    if (util_opt_parse(su->opts, argc, argv, err, sizeof(err)) == 0) {
        level = util_log_level_parse(o.log);
        snprintf(err, sizeof(err), "%s",
                 !o.topology             ? "--topology is required"
                 : needs_host && !o.host ? "--host is required"
                                         : "--log must be debug, info, notice, warning or err");
    }
    if (!o.topology || (needs_host && !o.host) || level < 0) {
        fprintf(stderr, "mrc-probe %s: %s\nusage: %s\n\n", su->role, err, su->usage);
        util_opt_usage(su->opts, stderr);
        return 2;
    }
    util_log_level = (util_level)level;
    rv = fab_topo_load_file(o.topology, &su->topo, &ferr);
    if (rv != 0) {
        fprintf(stderr, "mrc-probe: %s: %s%s%s\n", o.topology,
                rv == FAB_ERR_INVAL ? ferr.path : fab_strerror(rv), rv == FAB_ERR_INVAL ? ": " : "",
                rv == FAB_ERR_INVAL ? ferr.msg : "");
        return 1;
    }
    probe_cfg_default(&su->pc);
    su->pc.window_ns = o.window_ms * 1000000ull;
    su->pc.rate_per_port = (double)o.rate;
    su->pc.seed = o.seed;
    rv = probe_plan_new(su->topo, &su->pc, &su->plan);
    if (rv != 0) {
        fprintf(stderr, "mrc-probe: no probe plan for %s at %llu probes/s: %s\n", o.topology,
                (unsigned long long)o.rate, strerror(-rv));
        return 2;
    }
    if (o.token_file && read_token(o.token_file, &su->token) != 0) {
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static void setup_free(setup *su)
{
    probe_plan_free(su->plan);
    fab_topo_free(su->topo);
    free(su->token);
    util_opt_free(su->opts);
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
    bool done;
    setup su = {.role = "node",
                .needs_host = true,
                .usage = "mrc-probe node --topology FILE --host NAME [options]",
                .opts = node_opts};
    probe_node *node = NULL;
    node_ctx c = {0};
    int status = setup_role(&su, argc, argv, &done);
    if (status != 0 || done) {
        goto out;
    }
    status = 2;
    uint32_t host = fab_host_find(su.topo, o.host);
    if (host == FAB_NONE) {
        fprintf(stderr, "mrc-probe: no host '%s' in %s\n", o.host, o.topology);
        goto out;
    }
    c.token = su.token;
    c.base = event_base_new();
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
    if (c.base) {
        event_base_free(c.base);
    }
    setup_free(&su);
    return status;
}

/* --- localize: the reports' HTTP endpoint ---------------------------------------------------- */

typedef struct loc_ctx {
    probe_localize *loc;
    util_auth tokens; /* the nodes' (--report_tokens); none: reports are open */
} loc_ctx;

static void reply(struct evhttp_request *req, int code, json_object *body)
{
    struct evbuffer *b = evbuffer_new();
    const char *s = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
    evbuffer_add(b, s, strlen(s));
    evbuffer_add(b, "\n", 1);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      code / 100 == 2 ? "application/json" : "application/problem+json");
    evhttp_send_reply(req, code, code / 100 == 2 ? "OK" : "Refused", b);
    evbuffer_free(b);
    json_object_put(body);
}

static void problem(struct evhttp_request *req, int code, const char *detail)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "status", json_object_new_int(code));
    json_object_object_add(p, "detail", json_object_new_string(detail));
    reply(req, code, p);
}

static void on_http(struct evhttp_request *req, void *arg)
{
    loc_ctx *c = arg;
    const char *uri = evhttp_request_get_uri(req);
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    char err[512];
    if (strcmp(uri, "/api/v1/status") == 0 && cmd == EVHTTP_REQ_GET) {
        reply(req, 200, probe_localize_status(c->loc));
        return;
    }
    if (strcmp(uri, "/api/v1/reports") != 0) {
        problem(req, 404, "this localizer serves POST /api/v1/reports and GET /api/v1/status");
        return;
    }
    if (cmd != EVHTTP_REQ_POST) {
        problem(req, 405, "/api/v1/reports takes POST");
        return;
    }
    const util_token *t = NULL;
    if (c->tokens.n) {
        const char *auth =
            evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
        t = auth && strncmp(auth, "Bearer ", 7) == 0 ? util_auth_find(&c->tokens, auth + 7) : NULL;
        if (!t) {
            problem(req, 401,
                    "a report needs its node's bearer token (Authorization: Bearer TOKEN), one "
                    "of --report_tokens");
            return;
        }
        if (t->role != UTIL_ROLE_PROBER) {
            snprintf(err, sizeof(err),
                     "the %s token of %s may not report: nodes report with prober tokens",
                     util_role_name(t->role), t->name);
            problem(req, 403, err);
            return;
        }
    }
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    if (len > (1u << 22)) {
        problem(req, 413, "a report is at most 4 MiB");
        return;
    }
    json_object *r =
        util_json_parse("report", (const char *)evbuffer_pullup(in, -1), len, err, sizeof(err));
    int rv = r ? probe_localize_report(c->loc, r, t ? t->name : NULL, err, sizeof(err)) : -EINVAL;
    json_object_put(r);
    if (rv != 0) {
        problem(req, rv == -ESTALE ? 409 : rv == -EPERM ? 403 : 400, err);
        return;
    }
    reply(req, 202, json_object_new_object());
}

static int run_localize(int argc, char **argv)
{
    char err[512];
    bool done;
    setup su = {.role = "localize",
                .usage = "mrc-probe localize --topology FILE [options]",
                .opts = loc_opts};
    probe_localize *loc = NULL;
    struct event_base *base = NULL;
    struct evhttp *http = NULL;
    loc_ctx c = {0};
    int status = setup_role(&su, argc, argv, &done);
    if (status != 0 || done) {
        goto out;
    }
    status = 1;
    if (o.report_tokens && util_auth_load(o.report_tokens, &c.tokens, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-probe: %s\n", err);
        goto out;
    }
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
                             .hold_ns = o.hold_s * 1000000000ull,
                             .hold_max_ns = o.hold_max_s * 1000000000ull};
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
    /* --listen ADDR:PORT, an IPv6 address in brackets */
    char addr[128];
    const char *colon = strrchr(o.listen, ':');
    size_t alen = colon ? (size_t)(colon - o.listen) : 0;
    if (!colon || alen >= sizeof(addr) || !colon[1]) {
        fprintf(stderr, "mrc-probe: --listen %s: want ADDR:PORT\n", o.listen);
        status = 2;
        goto out;
    }
    memcpy(addr, o.listen, alen);
    addr[alen] = '\0';
    if (addr[0] == '[' && alen >= 2 && addr[alen - 1] == ']') {
        memmove(addr, addr + 1, alen - 2);
        addr[alen - 2] = '\0';
    }
    http = evhttp_new(base);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
    evhttp_set_gencb(http, on_http, &c);
    c.loc = loc;
    if (evhttp_bind_socket(http, addr, (uint16_t)atoi(colon + 1)) != 0) {
        fprintf(stderr, "mrc-probe: cannot listen on %s\n", o.listen);
        goto out;
    }
    util_log(UTIL_LOG_NOTICE, "localizing on %s: reports at http://%s/api/v1/reports%s%s",
             o.topology, o.listen, o.controller ? ", verdicts to " : " (no controller)",
             o.controller ? o.controller : "");
    run_loop(base);
    status = 0;
out:
    if (http) {
        evhttp_free(http);
    }
    probe_localize_free(loc);
    if (base) {
        event_base_free(base);
    }
    util_auth_free(&c.tokens);
    setup_free(&su);
    return status;
}

static int run_validate(int argc, char **argv)
{
    char err[512];
    bool done;
    setup su = {.role = "validate",
                .needs_host = true,
                .usage =
                    "mrc-probe validate --topology FILE --host NAME --hosts H1,H2,... [options]",
                .opts = val_opts};
    uint32_t *peers = NULL;
    unsigned npeers = 0;
    json_object *res = NULL;
    int status = setup_role(&su, argc, argv, &done);
    if (status != 0 || done) {
        goto out;
    }
    status = 2;
    uint32_t host = fab_host_find(su.topo, o.host);
    if (host == FAB_NONE) {
        fprintf(stderr, "mrc-probe: no host '%s' in %s\n", o.host, o.topology);
        goto out;
    }
    peers = util_xcalloc(strlen(o.hosts) / 2 + 1, sizeof(*peers));
    for (char *save = NULL, *h = strtok_r(o.hosts, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
        peers[npeers] = fab_host_find(su.topo, h);
        if (peers[npeers] == FAB_NONE) {
            fprintf(stderr, "mrc-probe: --hosts: no host '%s' in %s\n", h, o.topology);
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
    util_log_init("mrc-probe", stderr);
    if (argc >= 2 && strcmp(argv[1], "node") == 0) {
        return run_node(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "localize") == 0) {
        return run_localize(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "validate") == 0) {
        return run_validate(argc - 1, argv + 1);
    }
    FILE *f = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) ? stdout
                                                                                          : stderr;
    fprintf(f, "usage: mrc-probe node --topology FILE --host NAME [options]\n"
               "       mrc-probe localize --topology FILE [options]\n"
               "       mrc-probe validate --topology FILE --host NAME --hosts H1,H2,... [options]\n"
               "       mrc-probe ROLE --help\n");
    return f == stdout ? 0 : 2;
}
