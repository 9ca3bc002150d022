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

/* The dashboard's folder when --web is not given: the source tree's web/ (CMake sets it). */
#ifndef CTL_WEB_DEFAULT
#define CTL_WEB_DEFAULT ""
#endif

static struct {
    char *topology, *db, *listen, *tokens, *cert, *key, *cc, *web;
    uint64_t threads, max_body, max_wait, max_connections, window, floor, agent_interval;
    uint64_t port_gbps, base_rtt_ns, mtu;
    bool trimming;
} o;

static const util_opt opts[] = {
    {"topology", UTIL_OPT_STR, NULL, 0, 0, &o.topology, "topology file (required)", false},
    {"db", UTIL_OPT_STR, NULL, 0, 0, &o.db, "SQLite database, created if missing (required)", false},
    {"listen", UTIL_OPT_STR, "127.0.0.1:8080", 0, 0, &o.listen, "ADDR:PORT to serve on", false},
    {"tokens", UTIL_OPT_STR, NULL, 0, 0, &o.tokens, "file of 'TOKEN ROLE NAME' lines (required)", false},
    {"cert", UTIL_OPT_STR, NULL, 0, 0, &o.cert, "PEM certificate: serve HTTPS (with --key)", false},
    {"key", UTIL_OPT_STR, NULL, 0, 0, &o.key, "PEM private key of --cert", true},
    {"threads", UTIL_OPT_UINT, "0", 0, 64, &o.threads, "threads serving requests; 0: one per CPU", false},
    {"max_body", UTIL_OPT_UINT, "65536", 1024, 16777216, &o.max_body, "largest request body, bytes", false},
    {"max_wait", UTIL_OPT_UINT, "60", 1, 600, &o.max_wait, "longest push-channel wait, seconds", false},
    {"max_connections", UTIL_OPT_UINT, "8192", 16, 65536, &o.max_connections, "open connections at most", false},
    {"window", UTIL_OPT_UINT, "60", 2, 86400, &o.window, "seconds of evidence health is judged on", false},
    {"agent_interval", UTIL_OPT_UINT, "10", 1, 3600, &o.agent_interval, "seconds between an agent's reports; an agent silent for 3 of them is stale", false},
    {"floor", UTIL_OPT_UINT, "50", 0, 100, &o.floor, "percent of its path capacity a denylist entry may not cut a host pair below (without force)", false},
    {"cc", UTIL_OPT_STR, "uet-1.0-nscc", 0, 0, &o.cc, "hosts' congestion control: uet-1.0-nscc or none", false},
    {"port_gbps", UTIL_OPT_UINT, "100", 1, 1600, &o.port_gbps, "rate of one plane port, Gb/s (NSCC's link rate: x planes)", false},
    {"base_rtt_ns", UTIL_OPT_UINT, "4000", 100, 1000000, &o.base_rtt_ns, "unloaded round trip of the longest path, ns", false},
    {"mtu", UTIL_OPT_UINT, "4096", 256, 9000, &o.mtu, "payload bytes per packet", false},
    {"web", UTIL_OPT_STR, CTL_WEB_DEFAULT, 0, 0, &o.web, "folder of the dashboard's files, served at / and /ui/ without a token ('': none)", false},
    {"trimming", UTIL_OPT_BOOL, "true", 0, 0, &o.trimming, "switches trim packets instead of dropping them", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: mrc-controller --topology FILE --db PATH --tokens FILE [--listen ADDR:PORT]\n"
               "                      [--config FILE] [options]\n\noptions (also 'key = value' "
               "lines of --config):\n");
    util_opt_usage(opts, f);
}

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
    char *cert = NULL, *key = NULL;
    ctl_ctx *ctx = util_xcalloc(1, sizeof(*ctx));
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    util_log_init("mrc-controller", stderr);
    util_opt_defaults(opts);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        status = 0;
        goto out;
    }
    if (util_opt_parse(opts, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "mrc-controller: %s\n", err);
        usage(stderr);
        status = 2;
        goto out;
    }
    if (!o.topology || !o.db || !o.tokens || (!o.cert != !o.key)) {
        fprintf(stderr, "mrc-controller: %s\n",
                !o.topology ? "--topology is required"
                : !o.db     ? "--db is required"
                : !o.tokens ? "--tokens is required"
                            : "--cert and --key go together");
        status = 2;
        goto out;
    }
    if (strcmp(o.cc, "uet-1.0-nscc") != 0 && strcmp(o.cc, "none") != 0) {
        fprintf(stderr, "mrc-controller: --cc must be uet-1.0-nscc or none, not '%s'\n", o.cc);
        status = 2;
        goto out;
    }
    /* the signals are waited for here, so every thread started below blocks them */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    fab_error ferr;
    int rv = fab_topo_load_file(o.topology, &topo, &ferr);
    if (rv != 0) {
        util_log(UTIL_LOG_ERR, "%s: %s", o.topology, ferr.msg);
        goto out;
    }
    if ((rv = fab_tables_compute(topo, &tables)) != 0) {
        util_log(UTIL_LOG_ERR, "%s: computing the tables: %s", o.topology, fab_strerror(rv));
        goto out;
    }
    if (util_auth_load(o.tokens, &auth, err, sizeof(err)) != 0 ||
        ctl_store_open(o.db, &store, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
        goto out;
    }
    if (o.cert && (util_read_file(o.cert, &cert, &(size_t){0}) != 0 ||
                   util_read_file(o.key, &key, &(size_t){0}) != 0)) {
        util_log(UTIL_LOG_ERR, "cannot read %s or %s", o.cert, o.key);
        goto out;
    }
    if (o.cert && tls_check(cert, key, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
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
    ctx->blast = ctl_blast_new(topo);
    ctx->floor = (double)o.floor / 100;
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
                       .cert_pem = cert,
                       .key_pem = key,
                       .web_dir = o.web};
    if (ctl_http_start(ctx, &auth, &hc, &http, err, sizeof(err)) != 0) {
        util_log(UTIL_LOG_ERR, "%s", err);
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
    free(ctx);
    util_opt_free(opts);
    return status;
}
