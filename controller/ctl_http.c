/* SPDX-License-Identifier: MIT */
/* The controller's side of the HTTP server (util_httpd does the serving, the limits and the
 * suspended requests): what each request may bring before its body is read, routing to the
 * API's handlers, /metrics, the dashboard's files, and the push channel's versions. A
 * push-channel request that has nothing new is suspended, not parked on a thread, so a
 * thousand agents waiting cost a thousand sockets; a denylist change resumes them all. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl_http.h"
#include "ctl_proxy.h"
#include "util_peers.h"
#include "ctl_roles.h"
#include "ctl_web.h"
#include "util_httpd.h"

#define PUSH_PATH "/api/v1/denylist/version"
/* The largest body a request may bring: --max-body, and for the prober's evidence (a
 * localizer's post holds every verdict it has, which may not be split) PROBES_MAX_BODY, but
 * only with a token the role table admits there: no other request gets the larger room. */
#define PROBES_MAX_BODY (4u << 20)

struct ctl_http {
    util_httpd *srv;
    ctl_ctx *ctx;
    ctl_http_cfg cfg;
    ctl_proxy *proxy; /* a follower's fetches from the leader */
};

static void record(void *user, int status, uint64_t us)
{
    static const uint64_t le[] = CTL_LATENCY_BUCKETS;
    ctl_http *h = user;
    ctl_metrics *m = &h->ctx->metrics;
    if (status >= 100 && status < 600) {
        atomic_fetch_add(&m->requests[status / 100], 1);
    }
    for (size_t i = 0; i < sizeof(le) / sizeof(le[0]); i++) {
        if (us <= le[i]) {
            atomic_fetch_add(&m->latency_le[i], 1);
        }
    }
    atomic_fetch_add(&m->latency_count, 1);
    atomic_fetch_add(&m->latency_sum_us, us);
}

/* Sends |r| (its body taken). An answer on a dashboard path (|web|) may be cached but must be
 * checked again each time (the files change under a running controller), is never sniffed
 * for another type, and carries the page's content security policy. */
static void send_any(util_httpd_req *req, ctl_resp *r, bool web)
{
    const char *hdr[12];
    size_t n = 0;
    hdr[n++] = "Cache-Control";
    hdr[n++] = web ? "no-cache" : "no-store";
    if (web) {
        hdr[n++] = "Content-Security-Policy";
        hdr[n++] = CTL_WEB_CSP;
        hdr[n++] = "X-Content-Type-Options";
        hdr[n++] = "nosniff";
    }
    if (web && r->status == 405) {
        hdr[n++] = "Allow";
        hdr[n++] = "GET, HEAD";
    }
    if (r->etag[0]) {
        hdr[n++] = "ETag";
        hdr[n++] = r->etag;
    }
    hdr[n] = NULL;
    util_httpd_respond(req, r->status, r->ctype, r->body, r->len, hdr);
    r->body = NULL;
}

static const char *arg_of(void *user, const char *name)
{
    return util_httpd_req_arg(user, name);
}

static const char *header_of(void *user, const char *name)
{
    return util_httpd_req_header(user, name);
}

static void push_answer(ctl_http *h, util_httpd_req *req)
{
    ctl_resp r = {.status = 200, .ctype = "application/json"};
    char buf[48];
    long long epoch = (long long)ctl_store_epoch(h->ctx->store);
    snprintf(buf, sizeof(buf), "{\"version\":%lld,\"epoch\":%lld}",
             (long long)ctl_store_version(h->ctx->store), epoch);
    r.body = util_xstrdup(buf);
    r.len = strlen(buf);
    send_any(req, &r, false);
}

/* The push channel: GET PUSH_PATH?after=V&wait=S answers with the version once it is past V,
 * or after S seconds with the version as it is. The token was checked in admission. */
static void push(ctl_http *h, util_httpd_req *req, const util_token *who)
{
    if (util_httpd_req_resumed(req)) {
        push_answer(h, req);
        return;
    }
    ctl_seen_note(h->ctx->seen, who, ctl_now_ms());
    const char *after = util_httpd_req_arg(req, "after"), *wait = util_httpd_req_arg(req, "wait");
    char *end = NULL;
    long long a = after ? strtoll(after, &end, 10) : -1;
    long long w = wait ? strtoll(wait, &end, 10) : 30;
    if ((after && (!*after || *end || a < 0)) || w < 0 || w > (long long)h->cfg.max_wait_s) {
        util_httpd_problem(req, 400,
                           "want after=VERSION (a whole number) and wait=SECONDS (0 to %u)",
                           h->cfg.max_wait_s);
        return;
    }
    if (ctl_store_version(h->ctx->store) > a || w == 0) {
        push_answer(h, req);
        return;
    }
    if (util_httpd_suspend(req, (unsigned)w * 1000) != 0) {
        return; /* answered: the token's cap, or a stop */
    }
    /* the version may have moved between the check and the suspension: look again */
    if (ctl_store_version(h->ctx->store) > a) {
        util_httpd_wake(h->srv);
    }
}

static bool has_body(util_httpd_req *req)
{
    const char *cl = util_httpd_req_header(req, "Content-Length");
    return (cl && strtoull(cl, NULL, 10) > 0) || util_httpd_req_header(req, "Transfer-Encoding");
}

/* Before the body: every API path needs a valid token (what ctl_api_handle would say, but
 * said before a byte of the body is read), a body must be JSON, and a prober's evidence may be
 * larger. */
static int admit(void *user, util_httpd_req *req, size_t *pmax_body, char *detail, size_t detaillen)
{
    ctl_http *h = user;
    const char *path = util_httpd_req_path(req), *method = util_httpd_req_method(req);
    const util_token *t = util_httpd_req_token(req);
    if (strncmp(path, "/api/v1/", 8) == 0) {
        int status = ctl_api_admit(method, path, t, detail, detaillen);
        if (status != 0) {
            return status;
        }
    }
    if ((strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0) && has_body(req)) {
        const char *ct = util_httpd_req_header(req, "Content-Type");
        if (!ct || strncmp(ct, "application/json", 16) != 0) {
            snprintf(detail, detaillen, "the body must be application/json");
            return 415;
        }
    }
    if (strcmp(path, "/api/v1/probes") == 0 && t && ctl_roles_allow("POST", path, t->role) &&
        h->cfg.max_body < PROBES_MAX_BODY) {
        *pmax_body = PROBES_MAX_BODY;
    }
    return 0;
}

static void metrics(ctl_http *h, util_httpd_req *req)
{
    util_httpd_stats st;
    util_httpd_stats_get(h->srv, &st);
    atomic_store(&h->ctx->metrics.subscribers, (int_fast64_t)st.waiting);
    size_t len;
    char *text = ctl_metrics_text(h->ctx, &len);
    util_buf b = {.s = text, .len = len, .cap = len + 1};
    util_httpd_metrics(h->srv, &b);
    util_httpd_respond(req, 200, "text/plain; version=0.0.4; charset=utf-8", b.s, b.len, NULL);
}

/* What only the leader does: every change, the reports it computes health from, and the
 * views of that health and of the agents that registered with it */
static bool leader_only(const char *method, const char *path)
{
    if (strncmp(path, "/api/v1/", 8) != 0) {
        return false;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        return true;
    }
    return strncmp(path, "/api/v1/health", 14) == 0 || strncmp(path, "/api/v1/agents", 14) == 0 ||
           strcmp(path, "/api/v1/probers") == 0;
}

/* A follower's answer: a read fetched from the leader (ctl_proxy.h: a browser loses its token
 * on a redirect to another origin), anything else 307 to the leader (the same method, path,
 * query and body), or 503 when none is known (an election under way, or etcd out of reach) */
static void to_leader(ctl_http *h, util_httpd_req *req)
{
    char leader[512];
    int64_t epoch;
    ctl_ha_leader(h->ctx->ha, leader, sizeof(leader), &epoch);
    if (!leader[0]) {
        const char *hdr[] = {"Retry-After", "1", NULL};
        util_buf b = {0};
        util_buf_printf(&b,
                        "{\"type\":\"about:blank\",\"title\":\"no leader\",\"status\":503,"
                        "\"detail\":\"no controller leads at the moment (an election, or etcd out "
                        "of reach); reads are served; retry in a second\"}");
        util_httpd_respond(req, 503, "application/problem+json", b.s, b.len, hdr);
        return;
    }
    const char *method = util_httpd_req_method(req);
    if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
        ctl_proxy_serve(h->proxy, leader, req);
        return;
    }
    char *query = util_httpd_req_query(req);
    util_buf loc = {0}, b = {0};
    util_buf_printf(&loc, "%s%s%s", leader, util_httpd_req_path(req), query);
    free(query);
    util_buf_printf(&b,
                    "{\"type\":\"about:blank\",\"title\":\"not the leader\",\"status\":307,"
                    "\"detail\":\"this controller follows; the leader (epoch %lld) takes it\","
                    "\"leader\":",
                    (long long)epoch);
    util_buf_json_str(&b, leader);
    util_buf_printf(&b, "}");
    const char *hdr[] = {"Location", loc.s, UTIL_PEERS_LEADER_HEADER, leader, NULL};
    util_httpd_respond(req, 307, "application/problem+json", b.s, b.len, hdr);
    free(loc.s);
}

static void handle(void *user, util_httpd_req *req)
{
    ctl_http *h = user;
    const char *url = util_httpd_req_path(req), *method = util_httpd_req_method(req);
    ctl_resp r = {0};
    size_t len;
    const char *body = util_httpd_req_body(req, &len);
    ctl_req q = {.method = method,
                 .path = url,
                 .arg = arg_of,
                 .arg_user = req,
                 .header = header_of,
                 .body = body,
                 .bodylen = len,
                 .who = util_httpd_req_token(req)};
    if (strcmp(url, "/metrics") == 0) {
        if (strcmp(method, "GET") != 0) {
            util_httpd_problem(req, 405, "/metrics takes GET only");
            return;
        }
        metrics(h, req);
        return;
    }
    if (ctl_web_path(url)) {
        /* no token: the page holds no data, and every API call it makes needs one */
        ctl_web_serve(h->cfg.web_dir, method, url, &r);
        send_any(req, &r, true);
        return;
    }
    if (h->ctx->ha && leader_only(method, url) && !ctl_ha_leading(h->ctx->ha)) {
        to_leader(h, req);
        return;
    }
    if (strcmp(url, PUSH_PATH) == 0 && strcmp(method, "GET") == 0) {
        push(h, req, q.who);
        return;
    }
    ctl_api_handle(h->ctx, &q, &r);
    send_any(req, &r, false);
}

static void changed(void *user)
{
    ctl_http *h = user;
    util_httpd_wake(h->srv);
}

int ctl_http_start(ctl_ctx *ctx, const util_auth *auth, const ctl_http_cfg *cfg, ctl_http **ph,
                   char *err, size_t errlen)
{
    ctl_http *h = util_xcalloc(1, sizeof(*h));
    h->ctx = ctx;
    h->cfg = *cfg;
    util_httpd_cfg sc = {.name = "http",
                         .listen = cfg->listen,
                         .threads = cfg->threads,
                         .max_body = cfg->max_body,
                         .max_connections = cfg->max_connections,
                         .per_client = cfg->per_client,
                         .request_timeout_ms = cfg->request_timeout_ms,
                         .rate = cfg->rate,
                         .burst = cfg->burst,
                         .max_waiting = cfg->max_waiting,
                         .cert_pem = cfg->cert_pem,
                         .key_pem = cfg->key_pem,
                         .client_ca_pem = cfg->client_ca_pem,
                         .auth = auth,
                         .admit = admit,
                         .handle = handle,
                         .done = record,
                         .user = h};
    /* every thread but one may wait on the leader: the reads served here keep one */
    ctl_proxy_cfg pc = {.cafile = cfg->peer_cafile,
                        .certfile = cfg->peer_certfile,
                        .keyfile = cfg->peer_keyfile,
                        .timeout_ms = CTL_PROXY_TIMEOUT_MS,
                        .max_inflight = cfg->threads > 1 ? cfg->threads - 1 : 1};
    h->proxy = ctl_proxy_new(&pc);
    int rv = util_httpd_start(&sc, &h->srv, err, errlen);
    if (rv != 0) {
        ctl_proxy_free(h->proxy);
        free(h);
        return rv;
    }
    ctx->changed = changed;
    ctx->changed_user = h;
    *ph = h;
    return 0;
}

unsigned ctl_http_port(const ctl_http *h)
{
    return util_httpd_port(h->srv);
}

void ctl_http_stop(ctl_http *h)
{
    if (!h) {
        return;
    }
    util_httpd_free(h->srv);
    h->ctx->changed = NULL;
    ctl_proxy_free(h->proxy);
    free(h);
}
