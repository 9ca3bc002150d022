/* SPDX-License-Identifier: MIT */
/* mrc-controller: loads the topology, opens the store and serves the REST API until SIGTERM. */
#include <errno.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl_api.h"
#include "ctl_http.h"
#include "ctl_window.h"
#include "util.h"

static struct {
    char *topology, *db, *listen, *tokens, *cert, *key, *client_ca, *cc, *web, *log;
    char *etcd, *etcd_prefix, *name, *advertise, *peer_ca;
    uint64_t lease_ttl;
    uint64_t threads, max_body, max_wait, max_connections, window, floor, agent_interval,
        history_days, max_entries;
    uint64_t request_timeout, per_client, max_waiting, rate_limit, rate_burst;
    uint64_t port_gbps, base_rtt_ns, mtu;
    bool trimming;
} o;

static void ha_changed(void *user)
{
    ctl_api_denylist_changed(user);
}

/* One of several controllers (--etcd): named, and reachable at its advertised URL */
static int start_ha(ctl_ctx *ctx, ctl_http *http, bool tls, char *err, size_t errlen)
{
    char name[256], url[512];
    if (o.name && o.name[0]) {
        snprintf(name, sizeof(name), "%s", o.name);
    } else if (gethostname(name, sizeof(name)) != 0) {
        snprintf(name, sizeof(name), "controller");
    }
    if (o.advertise && o.advertise[0]) {
        snprintf(url, sizeof(url), "%s", o.advertise);
    } else {
        /* the host of --listen and the port it got; a wildcard address is nobody's URL */
        const char *colon = strrchr(o.listen, ':');
        size_t hlen = colon ? (size_t)(colon - o.listen) : strlen(o.listen);
        if ((hlen == 7 && strncmp(o.listen, "0.0.0.0", 7) == 0) ||
            (hlen == 4 && strncmp(o.listen, "[::]", 4) == 0) || hlen == 0) {
            snprintf(err, errlen, "--listen %s is no address a client can reach: give --advertise "
                     "URL", o.listen);
            return -EINVAL;
        }
        snprintf(url, sizeof(url), "%s://%.*s:%u", tls ? "https" : "http", (int)hlen, o.listen,
                 ctl_http_port(http));
    }
    ctl_ha_cfg hc = {.etcd = o.etcd,
                     .prefix = o.etcd_prefix,
                     .name = name,
                     .url = url,
                     .ttl_s = (unsigned)o.lease_ttl,
                     .store = ctx->store,
                     .changed = ha_changed,
                     .user = ctx};
    int rv = ctl_ha_start(&hc, &ctx->ha, err, errlen);
    if (rv == 0) {
        util_log(UTIL_LOG_NOTICE, "one of several controllers: %s at %s, through etcd %s", name,
                 url, o.etcd);
    }
    return rv;
}

/* The dashboard's folder when --web is not given: share/mrcfab/web of the install prefix. */
static char web_default[4096];

/* clang-format off */
static const util_opt opts[] = {
    UTIL_OPT_TOPOLOGY(&o.topology, true),
    {.name = "db", .kind = UTIL_OPT_STR, .dest = &o.db, .arg = "PATH", .required = true, .help = "the SQLite database, created if missing"},
    {.name = "tokens", .kind = UTIL_OPT_STR, .dest = &o.tokens, .arg = "FILE", .required = true, .help = "file of 'TOKEN ROLE NAME' lines"},
    {.name = "listen", .kind = UTIL_OPT_STR, .def = "127.0.0.1:8080", .dest = &o.listen, .arg = "ADDR:PORT", .help = "where to serve"},
    {.name = "cert", .kind = UTIL_OPT_STR, .dest = &o.cert, .arg = "FILE", .help = "PEM certificate: serve HTTPS (with --key)"},
    {.name = "key", .kind = UTIL_OPT_STR, .dest = &o.key, .arg = "FILE", .secret = true, .help = "PEM private key of --cert"},
    {.name = "client-ca", .kind = UTIL_OPT_STR, .dest = &o.client_ca, .arg = "FILE", .help = "PEM CA certificates: every client needs a certificate one of them signed (with --cert)"},
    {.name = "threads", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 64, .dest = &o.threads, .help = "threads serving requests; 0: one per CPU"},
    {.name = "max-body", .kind = UTIL_OPT_UINT, .def = "65536", .min = 1024, .max = 16777216, .dest = &o.max_body, .arg = "BYTES", .help = "largest request body"},
    {.name = "max-wait", .kind = UTIL_OPT_UINT, .def = "60", .min = 1, .max = 600, .dest = &o.max_wait, .arg = "S", .help = "longest push-channel wait, seconds"},
    {.name = "max-connections", .kind = UTIL_OPT_UINT, .def = "262144", .min = 16, .max = 1048576, .dest = &o.max_connections, .help = "open connections at most (RLIMIT_NOFILE is raised to match)"},
    {.name = "per-client-connections", .kind = UTIL_OPT_UINT, .def = "128", .min = 1, .max = 1048576, .dest = &o.per_client, .help = "open connections per client address at most"},
    {.name = "request-timeout", .kind = UTIL_OPT_UINT, .def = "10", .min = 1, .max = 3600, .dest = &o.request_timeout, .arg = "S", .help = "seconds from a request's first byte to its answer (a push-channel wait adds its own)"},
    {.name = "max-waiting", .kind = UTIL_OPT_UINT, .def = "4", .min = 1, .max = 1048576, .dest = &o.max_waiting, .help = "push-channel requests one token may hold waiting (more: 429)"},
    {.name = "rate-limit", .kind = UTIL_OPT_UINT, .def = "200", .min = 0, .max = 10000000, .dest = &o.rate_limit, .arg = "N", .help = "requests per second one token may make (more: 429); 0: no limit"},
    {.name = "rate-burst", .kind = UTIL_OPT_UINT, .def = "2000", .min = 1, .max = 10000000, .dest = &o.rate_burst, .arg = "N", .help = "requests one token may make at once above --rate-limit"},
    {.name = "window", .kind = UTIL_OPT_UINT, .def = "60", .min = 2, .max = 86400, .dest = &o.window, .arg = "S", .help = "seconds of evidence health is judged on"},
    {.name = "agent-interval", .kind = UTIL_OPT_UINT, .def = "10", .min = 1, .max = 3600, .dest = &o.agent_interval, .arg = "S", .help = "seconds between an agent's reports; an agent silent for 3 of them is stale"},
    {.name = "history-days", .kind = UTIL_OPT_UINT, .def = "7", .min = 1, .max = 3650, .dest = &o.history_days, .arg = "DAYS", .help = "how long the elements' health history is kept in the store"},
    {.name = "floor", .kind = UTIL_OPT_UINT, .def = "50", .min = 0, .max = 100, .dest = &o.floor, .arg = "PCT", .help = "percent of its path capacity a denylist entry may not cut a host pair below (without force)"},
    /* 4096 entries: at the longest fields (a 95-character element, a 255-character reason all
     * escaped to two bytes a character, a 63-character author, a window) an entry is 881 bytes
     * of the list (tests/controller/denylist.sh measures), so the whole list stays under
     * 3.5 MiB (4096 x 881), a nineteenth of an agent's 64 MiB body limit */
    {.name = "max-entries", .kind = UTIL_OPT_UINT, .def = "4096", .min = 1, .max = 16384, .dest = &o.max_entries, .arg = "N", .help = "denylist entries at most; an add beyond is refused (409)"},
    UTIL_OPT_CC(&o.cc),
    UTIL_OPT_PORT_GBPS(&o.port_gbps),
    UTIL_OPT_BASE_RTT_NS(&o.base_rtt_ns),
    UTIL_OPT_MTU(&o.mtu),
    {.name = "trimming", .kind = UTIL_OPT_BOOL, .def = "true", .dest = &o.trimming, .help = "the switches trim packets instead of dropping them"},
    {.name = "etcd", .kind = UTIL_OPT_STR, .dest = &o.etcd, .arg = "URLS", .help = "etcd members' client URLs, comma-separated: one of several controllers, the leader elected through etcd (docs/ha.md)"},
    {.name = "etcd-prefix", .kind = UTIL_OPT_STR, .def = "/mrcfab/", .dest = &o.etcd_prefix, .arg = "KEY", .help = "with --etcd: the keys' prefix, one per fabric"},
    {.name = "name", .kind = UTIL_OPT_STR, .dest = &o.name, .arg = "NAME", .help = "with --etcd: this controller's name among them (default: the host name)"},
    {.name = "advertise", .kind = UTIL_OPT_STR, .dest = &o.advertise, .arg = "URL", .help = "with --etcd: the base URL clients reach this controller at (default: from --listen)"},
    {.name = "peer-ca", .kind = UTIL_OPT_STR, .dest = &o.peer_ca, .arg = "FILE", .help = "with --etcd: PEM CA certificates that signed the other controllers' certificates, for a follower's fetches from the leader over https (default: --client-ca, else the system's)"},
    {.name = "lease-ttl", .kind = UTIL_OPT_UINT, .def = "2", .min = 2, .max = 60, .dest = &o.lease_ttl, .arg = "S", .help = "with --etcd: the leader's lease; a leader cut off from etcd stops leading within it"},
    {.name = "web", .kind = UTIL_OPT_STR, .def = web_default, .dest = &o.web, .arg = "DIR", .help = "folder of the dashboard's files, served at / and /ui/ without a token ('': none)"},
    UTIL_OPT_LOG(&o.log),
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const tables[] = {opts, NULL};
static const util_cli cli = {
    .prog = "mrc-controller",
    .usage = "mrc-controller --topology FILE --db PATH --tokens FILE [options]",
    .about = "The fabric's controller: every switch's static table and every host's profile "
             "from the topology,\nthe denylist with its audit log in SQLite, path health from "
             "the agents' and the prober's\nreports, the push channel, /metrics and the "
             "dashboard, over a REST API until SIGTERM.",
    .tables = tables,
    .config = true,
};

/* The certificate and key as a TLS server takes them: PEM, and the key the certificate's.
 * Checked before serving, so that a bad file is named rather than taken for a busy port. */
static int tls_check(const char *cert, const char *key, char *err, size_t errlen)
{
    int rv = -EINVAL;
    BIO *cb = BIO_new_mem_buf(cert, -1), *kb = BIO_new_mem_buf(key, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    if (!x) {
        snprintf(err, errlen, "%s holds no PEM certificate (--cert)", o.cert);
    } else if (!k) {
        snprintf(err, errlen, "%s holds no PEM private key, or one with a passphrase (--key)",
                 o.key);
    } else if (X509_check_private_key(x, k) != 1) {
        snprintf(err, errlen, "the key in %s is not the key of the certificate in %s", o.key,
                 o.cert);
    } else {
        rv = 0;
    }
    EVP_PKEY_free(k);
    X509_free(x);
    BIO_free(kb);
    BIO_free(cb);
    return rv;
}

/* A dashboard folder that is not there is said at once, but serving goes on: the files are
 * read per request, so the folder may come later, and the API does not need it. */
static void web_check(const char *dir)
{
    struct stat st;
    if (!dir || !*dir) {
        util_log(UTIL_LOG_INFO, "no dashboard (--web is empty)");
    } else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        util_log(UTIL_LOG_WARNING, "the dashboard's folder %s is not a folder here: / and /ui/ "
                 "answer 404 until it is", dir);
    } else {
        util_log(UTIL_LOG_INFO, "the dashboard from %s at / and /ui/", dir);
    }
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
    char err[512];
    int status = 1;
    fab_topo *topo = NULL;
    fab_tables *tables = NULL;
    ctl_store *store = NULL;
    util_auth auth = {0};
    ctl_http *http = NULL;
    ctl_window *window = NULL;
    char *cert = NULL, *key = NULL, *client_ca = NULL;
    ctl_ctx *ctx = util_xcalloc(1, sizeof(*ctx));
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    util_log_init("mrc-controller", stderr);
    if (util_data_path("web", web_default, sizeof(web_default)) != 0) {
        web_default[0] = '\0';
    }
    if ((status = util_cli_parse(&cli, argc, argv, NULL, NULL)) != UTIL_CLI_RUN) {
        goto out;
    }
    status = UTIL_EXIT_USAGE;
    if (!o.cert != !o.key) {
        util_cli_fail(&cli, "--cert and --key go together");
        goto out;
    }
    if (o.client_ca && !o.cert) {
        util_cli_fail(&cli, "--client-ca needs HTTPS (--cert and --key)");
        goto out;
    }
    util_log_level = (util_level)util_log_level_parse(o.log);
    status = UTIL_EXIT_FAIL;
    /* the signals are waited for here, so every thread started below blocks them */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* a file that cannot be used is bad input (2); what fails after is the system (1) */
    status = UTIL_EXIT_USAGE;
    fab_error ferr;
    int rv = fab_topo_load_file(o.topology, &topo, &ferr);
    if (rv != 0) {
        util_log(UTIL_LOG_ERR, "--topology %s: %s%s%s", o.topology, ferr.path,
                 ferr.path[0] ? ": " : "", ferr.msg[0] ? ferr.msg : fab_strerror(rv));
        goto out;
    }
    if ((rv = fab_tables_compute(topo, &tables)) != 0) {
        util_log(UTIL_LOG_ERR, "%s: computing the tables: %s", o.topology, fab_strerror(rv));
        goto out;
    }
    if (util_auth_load(o.tokens, &auth, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "--tokens %s", err);
        goto out;
    }
    if (o.cert && ((rv = util_read_file(o.cert, &cert, &(size_t){0})) != 0 ||
                   (rv = util_read_file(o.key, &key, &(size_t){0})) != 0)) {
        util_log(UTIL_LOG_ERR, "--%s %s: %s", cert ? "key" : "cert", cert ? o.key : o.cert,
                 strerror(-rv));
        goto out;
    }
    if (o.client_ca && (rv = util_read_file(o.client_ca, &client_ca, &(size_t){0})) != 0) {
        util_log(UTIL_LOG_ERR, "--client-ca %s: %s", o.client_ca, strerror(-rv));
        goto out;
    }
    /* a follower fetches the leader's reads: the leader's certificate checked against
     * --peer-ca, and this controller's own offered where the controllers ask for one */
    const char *peer_ca = o.peer_ca && o.peer_ca[0] ? o.peer_ca : o.client_ca;
    if (o.peer_ca && o.peer_ca[0]) {
        char *pem = NULL;
        rv = util_read_file(o.peer_ca, &pem, &(size_t){0});
        free(pem);
        if (rv != 0) {
            util_log(UTIL_LOG_ERR, "--peer-ca %s: %s", o.peer_ca, strerror(-rv));
            goto out;
        }
    }
    if (o.cert && tls_check(cert, key, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
        goto out;
    }
    status = UTIL_EXIT_FAIL;
    if (ctl_store_open(o.db, &store, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "--db %s", err);
        goto out;
    }
    ctx->topo = topo;
    ctx->tables = tables;
    ctx->store = store;
    if (ctl_agents_open(topo, store, (int64_t)o.agent_interval * 1000, &ctx->agents, err,
                        sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
        goto out;
    }
    ctx->health = ctl_health_new(topo, o.window * 1000);
    ctx->history_ms = (int64_t)o.history_days * 86400 * 1000;
    if (ctl_health_load(ctx->health, store, ctl_now_ms(), ctx->history_ms, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_WARNING, "--db %s: %s", o.db, err);
    }
    if (ctl_health_denials(ctx->health, store, ctl_now_ms()) != 0) {
        util_log(UTIL_LOG_ERR, "--db %s: the denylist's entries cannot be read", o.db);
        goto out;
    }
    ctx->blast = ctl_blast_new(topo);
    ctx->floor = (double)o.floor / 100;
    ctx->max_entries = (size_t)o.max_entries;
    ctl_store_deny_set_max(store, ctx->max_entries);
    ctx->profile = (ctl_profile_cfg){o.cc, (double)o.port_gbps, o.base_rtt_ns, (uint32_t)o.mtu,
                                     o.trimming};
    ctx->opts = opts;
    ctx->seen = ctl_seen_new(&auth);
    web_check(o.web);
    /* as many as CPUs: more only take turns on them, and the turns are the queries' tail */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = o.threads ? (unsigned)o.threads : ncpu > 0 ? (unsigned)ncpu : 2;
    ctl_http_cfg hc = {.listen = o.listen,
                       .threads = threads,
                       .max_body = o.max_body,
                       .max_wait_s = (unsigned)o.max_wait,
                       .max_connections = (unsigned)o.max_connections,
                       .per_client = (unsigned)o.per_client,
                       .request_timeout_ms = (unsigned)o.request_timeout * 1000,
                       .rate = o.rate_limit ? (unsigned)o.rate_limit : UINT32_MAX,
                       .burst = (unsigned)o.rate_burst,
                       .max_waiting = (unsigned)o.max_waiting,
                       .client_ca_pem = client_ca,
                       .cert_pem = cert,
                       .key_pem = key,
                       .web_dir = o.web,
                       .peer_cafile = peer_ca,
                       .peer_certfile = o.client_ca ? o.cert : NULL,
                       .peer_keyfile = o.client_ca ? o.key : NULL};
    if (ctl_http_start(ctx, &auth, &hc, &http, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
        goto out;
    }
    if (o.etcd && o.etcd[0] && start_ha(ctx, http, cert != NULL, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
        status = UTIL_EXIT_USAGE;
        goto out;
    }
    window = ctl_window_start(ctx);
    util_log(UTIL_LOG_NOTICE,
             "serving %s (%u hosts, %u switches, denylist version %lld) on %s port %u (%s) "
             "after %.2f s",
             fab_topo_name(topo), fab_topo_nhosts(topo), fab_topo_nswitches(topo),
             (long long)ctl_store_version(store), o.listen, ctl_http_port(http),
             cert ? "https" : "http", since(&t0));
    int sig = 0;
    sigwait(&sigs, &sig);
    util_log(UTIL_LOG_NOTICE, "%s: stopping", strsignal(sig));
    status = 0;
out:
    ctl_window_stop(window);
    ctl_ha_stop(ctx->ha); /* resigns: another leads at once */
    ctl_http_stop(http);
    ctl_agents_free(ctx->agents);
    ctl_seen_free(ctx->seen);
    ctl_store_close(store);
    util_auth_free(&auth);
    ctl_health_free(ctx->health);
    ctl_blast_free(ctx->blast);
    fab_tables_free(tables);
    fab_topo_free(topo);
    free(cert);
    free(key);
    free(client_ca);
    free(ctx);
    util_opt_free(opts);
    return status;
}
