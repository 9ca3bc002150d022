/* SPDX-License-Identifier: MIT */
/* libmicrohttpd glue. Its own epoll thread pool serves requests (each handler is short: the
 * store's transactions and the fabric model's lookups); a push-channel request that has
 * nothing new is suspended rather than parked on a thread, so a thousand agents waiting cost
 * a thousand sockets, not a thousand threads, and a waker thread resumes them all when the
 * denylist changes or their wait runs out. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_http.h"
#include "ctl_web.h"

#define PUSH_PATH "/api/v1/denylist/version"

typedef struct conn {
    char *body;
    size_t len;
    bool too_big;
    size_t max_body; /* what this request's body may hold (body_limit) */
    struct timespec start;
    /* push channel */
    bool suspended, resumed;
    uint64_t deadline_ms;
    struct MHD_Connection *mc;
    struct conn *next;
} conn;

struct ctl_http {
    struct MHD_Daemon *d;
    ctl_ctx *ctx;
    const util_auth *auth;
    ctl_http_cfg cfg;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    conn *waiters;
    bool stopping, woken;
    pthread_t waker;
    unsigned port;
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void record(ctl_ctx *ctx, int status, const struct timespec *start)
{
    static const uint64_t le[] = CTL_LATENCY_BUCKETS;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t us = (uint64_t)(now.tv_sec - start->tv_sec) * 1000000 +
                  (uint64_t)((now.tv_nsec - start->tv_nsec) / 1000);
    ctl_metrics *m = &ctx->metrics;
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
static enum MHD_Result send_any(ctl_http *h, conn *c, struct MHD_Connection *mc, ctl_resp *r,
                                bool web)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    r->body = NULL;
    if (!resp) {
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
    MHD_add_response_header(resp, "Cache-Control", web ? "no-cache" : "no-store");
    if (web) {
        MHD_add_response_header(resp, "Content-Security-Policy", CTL_WEB_CSP);
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    }
    if (web && r->status == 405) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    }
    if (r->status == 401) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    }
    if (r->etag[0]) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, r->etag);
    }
    enum MHD_Result rv = MHD_queue_response(mc, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    record(h->ctx, r->status, &c->start);
    return rv;
}

static enum MHD_Result send_resp(ctl_http *h, conn *c, struct MHD_Connection *mc, ctl_resp *r)
{
    return send_any(h, c, mc, r, false);
}

static const char *arg_of(void *user, const char *name)
{
    return MHD_lookup_connection_value(user, MHD_GET_ARGUMENT_KIND, name);
}

static const char *header_of(void *user, const char *name)
{
    return MHD_lookup_connection_value(user, MHD_HEADER_KIND, name);
}

static const util_token *who(ctl_http *h, struct MHD_Connection *mc)
{
    const char *a = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!a || strncmp(a, "Bearer ", 7) != 0) {
        return NULL;
    }
    return util_auth_find(h->auth, a + 7);
}

static void push_answer(ctl_http *h, ctl_resp *r)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "version", json_object_new_int64(ctl_store_version(h->ctx->store)));
    const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    r->status = 200;
    r->ctype = "application/json";
    r->body = util_xstrdup(s);
    r->len = strlen(s);
    json_object_put(j);
}

/* The push channel: GET PUSH_PATH?after=V&wait=S answers with the version once it is past V,
 * or after S seconds with the version as it is. */
static enum MHD_Result push(ctl_http *h, conn *c, struct MHD_Connection *mc, const ctl_req *q)
{
    ctl_resp r = {0};
    if (c->resumed) {
        push_answer(h, &r);
        return send_resp(h, c, mc, &r);
    }
    if (!q->who) {
        ctl_api_problem(&r, 401, q->path, "a valid bearer token is needed");
        return send_resp(h, c, mc, &r);
    }
    ctl_seen_note(h->ctx->seen, q->who, ctl_now_ms());
    const char *after = arg_of(mc, "after"), *wait = arg_of(mc, "wait");
    char *end = NULL;
    long long a = after ? strtoll(after, &end, 10) : -1;
    long long w = wait ? strtoll(wait, &end, 10) : 30;
    if ((after && (!*after || *end || a < 0)) || w < 0 || w > (long long)h->cfg.max_wait_s) {
        ctl_api_problem(&r, 400, q->path,
                        "want after=VERSION (a whole number) and wait=SECONDS (0 to %u)",
                        h->cfg.max_wait_s);
        return send_resp(h, c, mc, &r);
    }
    if (ctl_store_version(h->ctx->store) > a || w == 0) {
        push_answer(h, &r);
        return send_resp(h, c, mc, &r);
    }
    pthread_mutex_lock(&h->lock);
    c->deadline_ms = mono_ms() + (uint64_t)w * 1000;
    c->mc = mc;
    c->suspended = true;
    c->next = h->waiters;
    h->waiters = c;
    atomic_fetch_add(&h->ctx->metrics.subscribers, 1);
    MHD_suspend_connection(mc);
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    /* the version may have moved between the check and the suspension: look again */
    if (ctl_store_version(h->ctx->store) > a) {
        pthread_mutex_lock(&h->lock);
        h->woken = true;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->lock);
    }
    return MHD_YES;
}

/* The largest body a request may bring: --max-body, and for a prober's evidence (a
 * localizer's post holds every verdict it has, which may not be split) PROBES_MAX_BODY, but
 * only with a prober's token: a request without one is never given the larger room. */
#define PROBES_MAX_BODY (4u << 20)

static size_t body_limit(ctl_http *h, struct MHD_Connection *mc, const char *url)
{
    const util_token *t = strcmp(url, "/api/v1/probes") == 0 ? who(h, mc) : NULL;
    return t && ctl_roles_allow("POST", url, t->role) && h->cfg.max_body < PROBES_MAX_BODY
               ? PROBES_MAX_BODY
               : h->cfg.max_body;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *mc, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    ctl_http *h = cls;
    conn *c = *con_cls;
    if (!c) {
        c = util_xcalloc(1, sizeof(*c));
        clock_gettime(CLOCK_MONOTONIC, &c->start);
        c->max_body = body_limit(h, mc, url);
        *con_cls = c;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!c->too_big && c->len + *upload_size <= c->max_body) {
            c->body = util_xrealloc(c->body, c->len + *upload_size + 1);
            memcpy(c->body + c->len, upload, *upload_size);
            c->len += *upload_size;
            c->body[c->len] = '\0';
        } else {
            c->too_big = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    ctl_resp r = {0};
    ctl_req q = {.method = method,
                 .path = url,
                 .arg = arg_of,
                 .arg_user = mc,
                 .header = header_of,
                 .body = c->body,
                 .bodylen = c->len,
                 .who = who(h, mc)};
    if (c->too_big) {
        ctl_api_problem(&r, 413, url, "the body is over %zu bytes", c->max_body);
        return send_resp(h, c, mc, &r);
    }
    if (strcmp(url, "/metrics") == 0) {
        if (strcmp(method, "GET") != 0) {
            ctl_api_problem(&r, 405, url, "/metrics takes GET only");
        } else {
            r.status = 200;
            r.ctype = "text/plain; version=0.0.4; charset=utf-8";
            r.body = ctl_metrics_text(h->ctx, &r.len);
        }
        return send_resp(h, c, mc, &r);
    }
    if (ctl_web_path(url)) {
        /* no token: the page holds no data, and every API call it makes needs one */
        ctl_web_serve(h->cfg.web_dir, method, url, &r);
        return send_any(h, c, mc, &r, true);
    }
    if (strcmp(url, PUSH_PATH) == 0 && strcmp(method, "GET") == 0) {
        return push(h, c, mc, &q);
    }
    if ((strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0) && c->len) {
        const char *ct = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_TYPE);
        if (!ct || strncmp(ct, "application/json", 16) != 0) {
            ctl_api_problem(&r, 415, url, "the body must be application/json");
            return send_resp(h, c, mc, &r);
        }
    }
    ctl_api_handle(h->ctx, &q, &r);
    return send_resp(h, c, mc, &r);
}

static void completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)mc;
    (void)toe;
    conn *c = *con_cls;
    if (c) {
        free(c->body);
        free(c);
        *con_cls = NULL;
    }
}

/* Resumes the waiters whose version moved (all, when woken) or whose time ran out. */
static void *waker(void *arg)
{
    ctl_http *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        uint64_t now = mono_ms(), next = now + 1000;
        bool all = h->woken;
        h->woken = false;
        conn **pp = &h->waiters;
        while (*pp) {
            conn *c = *pp;
            if (all || c->deadline_ms <= now || h->stopping) {
                *pp = c->next;
                c->suspended = false;
                c->resumed = true;
                atomic_fetch_sub(&h->ctx->metrics.subscribers, 1);
                MHD_resume_connection(c->mc);
            } else {
                next = c->deadline_ms < next ? c->deadline_ms : next;
                pp = &c->next;
            }
        }
        if (h->woken) {
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t wait = next > now ? next - now : 0;
        ts.tv_sec += (time_t)(wait / 1000);
        ts.tv_nsec += (long)(wait % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&h->cond, &h->lock, &ts);
    }
    for (conn *c = h->waiters; c; c = c->next) {
        c->resumed = true;
        MHD_resume_connection(c->mc);
    }
    h->waiters = NULL;
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void changed(void *user)
{
    ctl_http *h = user;
    pthread_mutex_lock(&h->lock);
    h->woken = true;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

/* ADDR:PORT, [ADDR6]:PORT or :PORT into a socket address. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen)
{
    char host[64] = "";
    const char *colon = strrchr(s, ':');
    memset(ss, 0, sizeof(*ss));
    if (!colon || colon - s >= (long)sizeof(host)) {
        snprintf(err, errlen, "listen: want ADDR:PORT, not '%s'", s);
        return -EINVAL;
    }
    memcpy(host, s, (size_t)(colon - s));
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535) {
        snprintf(err, errlen, "listen: bad port in '%s'", s);
        return -EINVAL;
    }
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    size_t hl = strlen(host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) != 1) {
            snprintf(err, errlen, "listen: bad IPv6 address in '%s'", s);
            return -EINVAL;
        }
        return 0;
    }
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    if (hl == 0) {
        v4->sin_addr.s_addr = htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET, host, &v4->sin_addr) != 1) {
        snprintf(err, errlen, "listen: bad IPv4 address in '%s'", s);
        return -EINVAL;
    }
    return 0;
}

int ctl_http_start(ctl_ctx *ctx, const util_auth *auth, const ctl_http_cfg *cfg, ctl_http **ph,
                   char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    int rv = parse_listen(cfg->listen, &ss, err, errlen);
    if (rv != 0) {
        return rv;
    }
    ctl_http *h = util_xcalloc(1, sizeof(*h));
    h->ctx = ctx;
    h->auth = auth;
    h->cfg = *cfg;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    ctx->changed = changed;
    ctx->changed_user = h;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
    }
    if (cfg->cert_pem && cfg->key_pem) {
        flags |= MHD_USE_TLS;
    }
    struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
    if (cfg->cert_pem && cfg->key_pem) {
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cfg->cert_pem};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)cfg->key_pem};
        tls[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, h, MHD_OPTION_SOCK_ADDR, &ss,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->threads,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(cfg->max_wait_s + 30),
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, h, MHD_OPTION_ARRAY, tls,
                            MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "cannot serve on %s: %s (in use, or not an address here?)",
                 cfg->listen, strerror(errno ? errno : EADDRINUSE));
        free(h);
        return -EADDRINUSE;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : 0;
    pthread_create(&h->waker, NULL, waker, h);
    *ph = h;
    return 0;
}

unsigned ctl_http_port(const ctl_http *h)
{
    return h->port;
}

void ctl_http_stop(ctl_http *h)
{
    if (!h) {
        return;
    }
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->waker, NULL);
    MHD_stop_daemon(h->d);
    h->ctx->changed = NULL;
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->cond);
    free(h);
}
