/* SPDX-License-Identifier: MIT */
/* The HTTP server layer over libmicrohttpd (util_httpd.h). A waker thread does what MHD does
 * not: it resumes suspended requests (on a change, at their wait, when their client closes:
 * MHD polls no suspended socket, so their fds sit in an epoll set of its own) and shuts down a
 * connection whose request has run past its deadline (MHD's own timeout is an idle timer that
 * any byte resets). All shared state is under one lock; only the waker resumes. */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "util_httpd.h"

/* How long a resumed request has to be answered after its wait; and the waker's tick (the
 * granularity of waits and deadlines). */
#define RESUME_MARGIN_NS (5ull * 1000000000)
#define TICK_MS 250
#define FD_SPARE 256 /* descriptors beyond the connections: the store, files, the listener */

typedef enum cstate { C_REQUEST, C_IDLE, C_WAITING } cstate;

/* One TCP connection (MHD's socket context). */
typedef struct hconn {
    int fd;
    cstate state;
    bool cut;
    uint64_t deadline_ns;
    struct hconn *prev, *next;
} hconn;

/* A token's rate and how many requests it holds suspended. */
typedef struct tokstate {
    const util_token *t;
    unsigned waiting;
    double bucket;
    uint64_t last_ns;
} tokstate;

struct util_httpd_req {
    util_httpd *h;
    struct MHD_Connection *mc;
    hconn *conn;
    const char *method, *path;
    const util_token *who;
    char *body;
    size_t len, max_body;
    bool too_big, answered, resumed, waiting;
    unsigned suspends; /* util_httpd_suspend calls that held it */
    uint64_t start_ns, wait_deadline_ns;
    tokstate *ts;
    util_httpd_req *wprev, *wnext;
    char peer[INET6_ADDRSTRLEN];
};

struct util_httpd {
    util_httpd_cfg cfg;
    char name[32];
    struct MHD_Daemon *d;
    unsigned port;
    pthread_mutex_t lock;
    hconn *conns;
    uint64_t nconns;
    util_httpd_req *waiters;
    uint64_t nwaiting;
    tokstate **tab; /* open addressing by token pointer */
    size_t tabcap, tabn;
    tokstate anon; /* requests without a token */
    atomic_uint_fast64_t refused, rate_limited, cut;
    bool stopping, wake_all;
    int wep, evfd;
    pthread_t waker;
    bool waker_started;
    struct event *ev_mhd, *ev_timer, *ev_kick;
    int kick; /* external mode: the waker's resumes reach the loop through it */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

const char *util_httpd_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 413:
        return "Content Too Large";
    case 421:
        return "Misdirected Request";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 503:
        return "Service Unavailable";
    default:
        return status >= 500 ? "Internal Server Error" : "Error";
    }
}

json_object *util_httpd_problem_obj(int status, const char *instance, const char *detail)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "type", json_object_new_string("about:blank"));
    json_object_object_add(j, "title", json_object_new_string(util_httpd_reason(status)));
    json_object_object_add(j, "status", json_object_new_int(status));
    json_object_object_add(j, "detail", json_object_new_string(detail));
    json_object_object_add(j, "instance", json_object_new_string(instance));
    return j;
}

/* --- tokens: rate and waiting count --------------------------------------------------------- */

static size_t tok_slot(const util_httpd *h, const util_token *t)
{
    uintptr_t x = (uintptr_t)t;
    x ^= x >> 17;
    x *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(x ^ (x >> 29)) & (h->tabcap - 1);
}

/* |t|'s state (the lock held), made on first sight; the set of tokens is fixed, so the table
 * only grows. */
static tokstate *tok_get(util_httpd *h, const util_token *t)
{
    if (!t) {
        return &h->anon;
    }
    if ((h->tabn + 1) * 2 > h->tabcap) {
        size_t oldcap = h->tabcap;
        tokstate **old = h->tab;
        h->tabcap = oldcap ? oldcap * 2 : 64;
        h->tab = util_xcalloc(h->tabcap, sizeof(*h->tab));
        for (size_t i = 0; i < oldcap; i++) {
            if (old[i]) {
                size_t s = tok_slot(h, old[i]->t);
                while (h->tab[s]) {
                    s = (s + 1) & (h->tabcap - 1);
                }
                h->tab[s] = old[i];
            }
        }
        free(old);
    }
    size_t s = tok_slot(h, t);
    while (h->tab[s] && h->tab[s]->t != t) {
        s = (s + 1) & (h->tabcap - 1);
    }
    if (!h->tab[s]) {
        tokstate *ts = util_xcalloc(1, sizeof(*ts));
        ts->t = t;
        ts->bucket = h->cfg.burst;
        ts->last_ns = now_ns();
        h->tab[s] = ts;
        h->tabn++;
    }
    return h->tab[s];
}

/* Takes one request from |t|'s bucket; false with the seconds until one is there. */
static bool rate_take(util_httpd *h, const util_token *t, unsigned *pretry)
{
    if (h->cfg.rate == UINT32_MAX) {
        return true;
    }
    pthread_mutex_lock(&h->lock);
    tokstate *ts = tok_get(h, t);
    uint64_t now = now_ns();
    ts->bucket += (double)(now - ts->last_ns) / 1e9 * h->cfg.rate;
    if (ts->bucket > h->cfg.burst) {
        ts->bucket = h->cfg.burst;
    }
    ts->last_ns = now;
    bool ok = ts->bucket >= 1;
    if (ok) {
        ts->bucket -= 1;
    } else {
        *pretry = (unsigned)((1 - ts->bucket) / h->cfg.rate) + 1;
    }
    pthread_mutex_unlock(&h->lock);
    return ok;
}

/* --- answers -------------------------------------------------------------------------------- */

static int respond_h(util_httpd_req *r, int status, const char *ctype, char *body, size_t len,
                     const char *const *headers, bool close)
{
    util_httpd *h = r->h;
    struct MHD_Response *resp =
        body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
             : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    r->answered = true;
    if (!resp) {
        free(body);
        return -EIO;
    }
    if (ctype) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    }
    if (status == 401) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    }
    for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2) {
        MHD_add_response_header(resp, headers[i], headers[i + 1]);
    }
    if (close) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    }
    enum MHD_Result rv = MHD_queue_response(r->mc, (unsigned)status, resp);
    MHD_destroy_response(resp);
    if (h->cfg.done) {
        h->cfg.done(h->cfg.user, status, (now_ns() - r->start_ns) / 1000);
    }
    return rv == MHD_YES ? 0 : -EIO;
}

int util_httpd_respond(util_httpd_req *r, int status, const char *ctype, char *body, size_t len,
                       const char *const *headers)
{
    return respond_h(r, status, ctype, body, len, headers, false);
}

static int problem_h(util_httpd_req *r, int status, const char *const *headers, bool close,
                     const char *detail)
{
    json_object *j = util_httpd_problem_obj(status, r->path, detail);
    size_t len;
    const char *s = json_object_to_json_string_length(j, JSON_C_TO_STRING_PLAIN, &len);
    char *body = util_xmalloc(len + 1);
    memcpy(body, s, len + 1);
    json_object_put(j);
    return respond_h(r, status, "application/problem+json", body, len, headers, close);
}

int util_httpd_problem(util_httpd_req *r, int status, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    return problem_h(r, status, NULL, false, detail);
}

/* A refusal before the body: counted, said in one log line, answered (the connection closes
 * after it when a body was announced: MHD reads no more of it). */
static void refuse(util_httpd_req *r, int status, const char *const *headers, const char *detail)
{
    util_httpd *h = r->h;
    atomic_fetch_add(&h->refused, 1);
    if (status == 429) {
        atomic_fetch_add(&h->rate_limited, 1);
    }
    util_log(UTIL_LOG_INFO, "%s: refused %d %s %.200s from %s%s%s: %s", h->name, status,
             r->method, r->path, r->peer, r->who ? " token of " : "",
             r->who ? r->who->name : "", detail);
    problem_h(r, status, headers, false, detail);
}

/* --- the request's accessors ------------------------------------------------------------------ */

const char *util_httpd_req_method(const util_httpd_req *r)
{
    return r->method;
}

const char *util_httpd_req_path(const util_httpd_req *r)
{
    return r->path;
}

const char *util_httpd_req_header(const util_httpd_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->mc, MHD_HEADER_KIND, name);
}

const char *util_httpd_req_arg(const util_httpd_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->mc, MHD_GET_ARGUMENT_KIND, name);
}

static void pct(util_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            util_buf_printf(b, "%c", c);
        } else {
            util_buf_printf(b, "%%%c%c", hex[c >> 4], hex[c & 15]);
        }
    }
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    util_buf *b = cls;
    util_buf_printf(b, "%s", b->len ? "&" : "?");
    pct(b, key);
    if (value) {
        util_buf_printf(b, "=");
        pct(b, value);
    }
    return MHD_YES;
}

char *util_httpd_req_query(const util_httpd_req *r)
{
    util_buf b = {0};
    MHD_get_connection_values(r->mc, MHD_GET_ARGUMENT_KIND, query_arg, &b);
    return b.s ? b.s : util_xstrdup("");
}

const util_token *util_httpd_req_token(const util_httpd_req *r)
{
    return r->who;
}

const char *util_httpd_req_body(const util_httpd_req *r, size_t *plen)
{
    *plen = r->len;
    return r->body;
}

bool util_httpd_req_resumed(const util_httpd_req *r)
{
    return r->resumed;
}

const char *util_httpd_req_peer(const util_httpd_req *r)
{
    return r->peer;
}

/* --- admission -------------------------------------------------------------------------------- */

/* A client certificate that chains to the client CA; false with the reason. */
static bool client_verified(util_httpd_req *r, const char **pwhy)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    unsigned st = 0;
    if (!ci || !ci->tls_session) {
        *pwhy = "a client certificate is needed (TLS)";
        return false;
    }
    int rv = gnutls_certificate_verify_peers2((gnutls_session_t)ci->tls_session, &st);
    if (rv == GNUTLS_E_NO_CERTIFICATE_FOUND ||
        gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &(unsigned){0}) == NULL) {
        *pwhy = "a client certificate signed by the server's client CA is needed (a client of mrcfab gives one with --client-cert FILE --client-key FILE)";
        return false;
    }
    if (rv != 0 || st != 0) {
        *pwhy = "the client certificate does not verify under the server's client CA";
        return false;
    }
    return true;
}

static void admission(util_httpd *h, util_httpd_req *r)
{
    char detail[512] = "";
    char retry[16];
    const char *retry_hdr[] = {MHD_HTTP_HEADER_RETRY_AFTER, retry, NULL};
    const char *why = NULL;
    if (h->cfg.client_ca_pem && !client_verified(r, &why)) {
        refuse(r, 401, NULL, why);
        return;
    }
    const char *a = util_httpd_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    if (a && strncasecmp(a, "Bearer ", 7) == 0) {
        const char *b = a + 7;
        if (strnlen(b, UTIL_HTTPD_BEARER_MAX + 1) > UTIL_HTTPD_BEARER_MAX) {
            refuse(r, 401, NULL, "the bearer token is over 512 bytes: no token is that long");
            return;
        }
        r->who = h->cfg.auth ? util_auth_find(h->cfg.auth, b) : NULL;
    }
    unsigned wait_s = 0;
    if (r->who && !rate_take(h, r->who, &wait_s)) {
        snprintf(retry, sizeof(retry), "%u", wait_s);
        snprintf(detail, sizeof(detail),
                 "the token of %s is over its rate of %u requests per second (burst %u); retry "
                 "in %u s",
                 r->who->name, h->cfg.rate, h->cfg.burst, wait_s);
        refuse(r, 429, retry_hdr, detail);
        return;
    }
    int status = h->cfg.admit
                     ? h->cfg.admit(h->cfg.user, r, &r->max_body, detail, sizeof(detail))
                     : 0;
    if (status == 429) {
        snprintf(retry, sizeof(retry), "1");
        refuse(r, status, retry_hdr, detail[0] ? detail : "too many requests");
        return;
    }
    if (status != 0) {
        refuse(r, status, NULL, detail[0] ? detail : util_httpd_reason(status));
        return;
    }
    const char *cl = util_httpd_req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (errno || n > r->max_body) {
            snprintf(detail, sizeof(detail), "the body is over %zu bytes", r->max_body);
            refuse(r, 413, NULL, detail);
        }
    }
}

/* --- MHD's callbacks -------------------------------------------------------------------------- */

static hconn *conn_of(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void peer_of(struct MHD_Connection *mc, char *dest, size_t destlen)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(dest, destlen, "?");
    if (!ci || !ci->client_addr) {
        return;
    }
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, dest,
                  (socklen_t)destlen);
    } else if (sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, dest,
                  (socklen_t)destlen);
    }
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *mc, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls)
{
    (void)version;
    util_httpd *h = cls;
    util_httpd_req *r = *con_cls;
    if (!r) {
        r = util_xcalloc(1, sizeof(*r));
        r->h = h;
        r->mc = mc;
        r->conn = conn_of(mc);
        r->method = method;
        r->path = url;
        r->max_body = h->cfg.max_body;
        r->start_ns = now_ns();
        peer_of(mc, r->peer, sizeof(r->peer));
        *con_cls = r;
        admission(h, r);
        return MHD_YES;
    }
    if (*upload_size) {
        /* after a refusal MHD reads no more; a body past its limit (chunked, or longer than
         * announced) is dropped as it comes and answered 413 at its end, or cut at the
         * request's deadline: never more than the limit is held */
        if (!r->answered && !r->too_big && *upload_size <= r->max_body - r->len) {
            r->body = util_xrealloc(r->body, r->len + *upload_size + 1);
            memcpy(r->body + r->len, upload, *upload_size);
            r->len += *upload_size;
            r->body[r->len] = '\0';
        } else if (!r->too_big) {
            r->too_big = true;
            free(r->body);
            r->body = NULL;
            r->len = 0;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->answered) {
        return MHD_YES;
    }
    if (r->too_big) {
        char detail[128];
        snprintf(detail, sizeof(detail), "the body is over %zu bytes", r->max_body);
        atomic_fetch_add(&h->refused, 1);
        util_log(UTIL_LOG_INFO, "%s: refused 413 %s %.200s from %s: %s", h->name, r->method,
                 r->path, r->peer, detail);
        problem_h(r, 413, NULL, true, detail);
        return MHD_YES;
    }
    unsigned suspends = r->suspends;
    h->cfg.handle(h->cfg.user, r);
    if (!r->answered && r->suspends == suspends) {
        util_log(UTIL_LOG_ERR, "%s: %s %.200s was not answered", h->name, r->method, r->path);
        util_httpd_problem(r, 500, "the server did not answer this request");
    }
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    util_httpd *h = cls;
    util_httpd_req *r = *con_cls;
    hconn *c = conn_of(mc);
    pthread_mutex_lock(&h->lock);
    if (c) {
        c->state = C_IDLE;
        c->deadline_ns = now_ns() + (uint64_t)h->cfg.idle_timeout_s * 1000000000;
    }
    pthread_mutex_unlock(&h->lock);
    if (r) {
        free(r->body);
        free(r);
        *con_cls = NULL;
    }
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    util_httpd *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        hconn *c = util_xcalloc(1, sizeof(*c));
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        c->fd = ci ? ci->connect_fd : -1;
        c->state = C_REQUEST;
        c->deadline_ns = now_ns() + (uint64_t)h->cfg.request_timeout_ms * 1000000;
        pthread_mutex_lock(&h->lock);
        c->next = h->conns;
        if (h->conns) {
            h->conns->prev = c;
        }
        h->conns = c;
        h->nconns++;
        pthread_mutex_unlock(&h->lock);
        *socket_context = c;
        return;
    }
    hconn *c = *socket_context;
    if (!c) {
        return;
    }
    /* MHD closes the socket after this: unlinked under the lock, the reaper never shuts down a
     * descriptor that has been given to another connection */
    pthread_mutex_lock(&h->lock);
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        h->conns = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    h->nconns--;
    pthread_mutex_unlock(&h->lock);
    free(c);
    *socket_context = NULL;
}

/* The request line is in: a keep-alive connection's next request begins. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
    (void)uri;
    util_httpd *h = cls;
    hconn *c = conn_of(mc);
    pthread_mutex_lock(&h->lock);
    if (c && c->state == C_IDLE) {
        c->state = C_REQUEST;
        c->deadline_ns = now_ns() + (uint64_t)h->cfg.request_timeout_ms * 1000000;
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    util_httpd *h = cls;
    char line[512];
    /* libmicrohttpd's own format and arguments, passed on as they are */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    vsnprintf(line, sizeof(line), fmt, ap);
#pragma GCC diagnostic pop
    line[strcspn(line, "\n")] = '\0';
    util_log(UTIL_LOG_INFO, "%s: libmicrohttpd: %s", h->name, line);
}

/* --- suspension and the waker ----------------------------------------------------------------- */

static void waker_signal(util_httpd *h)
{
    uint64_t one = 1;
    ssize_t n = write(h->evfd, &one, sizeof(one));
    (void)n;
}

int util_httpd_suspend(util_httpd_req *r, unsigned wait_ms)
{
    util_httpd *h = r->h;
    char detail[256];
    pthread_mutex_lock(&h->lock);
    if (h->stopping) {
        pthread_mutex_unlock(&h->lock);
        problem_h(r, 503, NULL, true, "the server is stopping");
        return -ESHUTDOWN;
    }
    tokstate *ts = tok_get(h, r->who);
    if (ts->waiting >= h->cfg.max_waiting) {
        pthread_mutex_unlock(&h->lock);
        snprintf(detail, sizeof(detail),
                 "%s%s already holds %u waiting requests, the most one token may", r->who ? "the token of " : "a request without a token", r->who ? r->who->name : "",
                 h->cfg.max_waiting);
        const char *retry[] = {MHD_HTTP_HEADER_RETRY_AFTER, "1", NULL};
        refuse(r, 429, retry, detail);
        return -EAGAIN;
    }
    ts->waiting++;
    r->suspends++;
    r->ts = ts;
    r->waiting = true;
    r->resumed = false;
    r->wait_deadline_ns = now_ns() + (uint64_t)wait_ms * 1000000;
    r->wnext = h->waiters;
    r->wprev = NULL;
    if (h->waiters) {
        h->waiters->wprev = r;
    }
    h->waiters = r;
    h->nwaiting++;
    if (r->conn) {
        r->conn->state = C_WAITING;
        r->conn->deadline_ns = r->wait_deadline_ns + RESUME_MARGIN_NS;
        struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLHUP | EPOLLONESHOT, .data.ptr = r};
        epoll_ctl(h->wep, EPOLL_CTL_ADD, r->conn->fd, &ev);
    }
    MHD_suspend_connection(r->mc);
    pthread_mutex_unlock(&h->lock);
    return 0;
}

/* The lock held; only the waker calls it. */
static void resume(util_httpd *h, util_httpd_req *r)
{
    if (r->wprev) {
        r->wprev->wnext = r->wnext;
    } else {
        h->waiters = r->wnext;
    }
    if (r->wnext) {
        r->wnext->wprev = r->wprev;
    }
    r->ts->waiting--;
    h->nwaiting--;
    r->waiting = false;
    r->resumed = true;
    if (r->conn) {
        epoll_ctl(h->wep, EPOLL_CTL_DEL, r->conn->fd, NULL);
        r->conn->state = C_REQUEST;
        r->conn->deadline_ns = now_ns() + (uint64_t)h->cfg.request_timeout_ms * 1000000;
    }
    MHD_resume_connection(r->mc);
    if (h->kick >= 0) {
        uint64_t one = 1;
        ssize_t n = write(h->kick, &one, sizeof(one));
        (void)n;
    }
}

/* Connections whose request is past its deadline are shut down; MHD sees the socket fail and
 * closes it (the lock held). */
static void reap(util_httpd *h, uint64_t now)
{
    for (hconn *c = h->conns; c; c = c->next) {
        if (c->state == C_REQUEST && !c->cut && c->deadline_ns <= now && c->fd >= 0) {
            c->cut = true;
            shutdown(c->fd, SHUT_RDWR);
            atomic_fetch_add(&h->cut, 1);
            util_log(UTIL_LOG_INFO, "%s: cut a connection whose request ran past %u ms", h->name,
                     h->cfg.request_timeout_ms);
        }
    }
}

static void *waker(void *arg)
{
    util_httpd *h = arg;
    struct epoll_event evs[64];
    uint64_t last_scan = 0;
    for (;;) {
        int n = epoll_wait(h->wep, evs, 64, TICK_MS);
        pthread_mutex_lock(&h->lock);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == h) {
                uint64_t v;
                ssize_t rn = read(h->evfd, &v, sizeof(v));
                (void)rn;
                continue;
            }
            util_httpd_req *r = evs[i].data.ptr;
            if (r->waiting) {
                resume(h, r); /* its client closed: MHD sees it once it polls the socket */
            }
        }
        bool all = h->wake_all || h->stopping;
        h->wake_all = false;
        uint64_t now = now_ns();
        if (all || now - last_scan >= (uint64_t)TICK_MS * 1000000) {
            for (util_httpd_req *r = h->waiters, *next; r; r = next) {
                next = r->wnext;
                if (all || r->wait_deadline_ns <= now) {
                    resume(h, r);
                }
            }
        }
        if (now - last_scan >= (uint64_t)TICK_MS * 1000000) {
            reap(h, now);
            last_scan = now;
        }
        bool done = h->stopping && !h->waiters;
        pthread_mutex_unlock(&h->lock);
        if (done) {
            return NULL;
        }
    }
}

void util_httpd_wake(util_httpd *h)
{
    pthread_mutex_lock(&h->lock);
    h->wake_all = true;
    pthread_mutex_unlock(&h->lock);
    waker_signal(h);
}

void util_httpd_stats_get(util_httpd *h, util_httpd_stats *st)
{
    pthread_mutex_lock(&h->lock);
    st->connections = h->nconns;
    st->waiting = h->nwaiting;
    pthread_mutex_unlock(&h->lock);
    st->refused = atomic_load(&h->refused);
    st->rate_limited = atomic_load(&h->rate_limited);
    st->cut = atomic_load(&h->cut);
}

void util_httpd_metrics(util_httpd *h, util_buf *b)
{
    util_httpd_stats st;
    util_httpd_stats_get(h, &st);
    util_buf_printf(b,
                    "# HELP mrcfab_http_connections HTTP connections open.\n"
                    "# TYPE mrcfab_http_connections gauge\n"
                    "mrcfab_http_connections %" PRIu64 "\n"
                    "# HELP mrcfab_http_waiting HTTP requests suspended (long-polls).\n"
                    "# TYPE mrcfab_http_waiting gauge\n"
                    "mrcfab_http_waiting %" PRIu64 "\n"
                    "# HELP mrcfab_http_refused_total HTTP requests refused before their body.\n"
                    "# TYPE mrcfab_http_refused_total counter\n"
                    "mrcfab_http_refused_total %" PRIu64 "\n"
                    "# HELP mrcfab_http_rate_limited_total HTTP requests refused 429 (a "
                    "token's rate or waiting cap).\n"
                    "# TYPE mrcfab_http_rate_limited_total counter\n"
                    "mrcfab_http_rate_limited_total %" PRIu64 "\n"
                    "# HELP mrcfab_http_cut_total HTTP connections shut down at their request's "
                    "deadline.\n"
                    "# TYPE mrcfab_http_cut_total counter\n"
                    "mrcfab_http_cut_total %" PRIu64 "\n",
                    st.connections, st.waiting, st.refused, st.rate_limited, st.cut);
}

/* --- external mode: the caller's libevent loop drives MHD ------------------------------------- */

static void ext_rearm(util_httpd *h)
{
    MHD_UNSIGNED_LONG_LONG to = 0;
    if (MHD_get_timeout(h->d, &to) == MHD_YES) {
        struct timeval tv = {.tv_sec = (time_t)(to / 1000), .tv_usec = (suseconds_t)(to % 1000) * 1000};
        evtimer_add(h->ev_timer, &tv);
    } else {
        evtimer_del(h->ev_timer);
    }
}

static void ext_run(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    util_httpd *h = arg;
    if (fd == h->kick) {
        uint64_t v;
        ssize_t n = read(h->kick, &v, sizeof(v));
        (void)n;
    }
    MHD_run(h->d);
    ext_rearm(h);
}

/* --- start and stop --------------------------------------------------------------------------- */

/* ADDR:PORT, [ADDR6]:PORT or :PORT into a socket address. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen)
{
    char host[64] = "";
    const char *colon = s ? strrchr(s, ':') : NULL;
    memset(ss, 0, sizeof(*ss));
    if (!colon || colon - s >= (long)sizeof(host)) {
        snprintf(err, errlen, "listen: want ADDR:PORT, not '%s'", s ? s : "");
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

/* MHD's option items take a void *; the PEM text is only read. */
static void *unconst(const void *p)
{
    union {
        const void *c;
        void *m;
    } u = {.c = p};
    return u.m;
}

/* Raises the soft descriptor limit to what |want| connections need, up to the hard limit;
 * returns the connections the limit allows. */
static unsigned fd_budget(const char *name, unsigned want)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)want + FD_SPARE;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return want;
    }
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        /* the hard limit too, where the process may (root, CAP_SYS_RESOURCE) */
        struct rlimit up = {need, need};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
            rl = up;
        }
    }
    if (rl.rlim_cur < need) {
        rlim_t old = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            rl.rlim_cur = old;
        }
    }
    static atomic_bool said;
    if (rl.rlim_cur < need) {
        unsigned can = rl.rlim_cur > 2 * FD_SPARE ? (unsigned)(rl.rlim_cur - FD_SPARE) : FD_SPARE;
        if (atomic_exchange(&said, true)) {
            return can;
        }
        util_log(UTIL_LOG_WARNING,
                 "%s: the descriptor limit (RLIMIT_NOFILE %llu, hard %llu) allows %u "
                 "connections, not %u: raise it (LimitNOFILE=) to serve them all",
                 name, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, can,
                 want);
        return can;
    }
    return want;
}

int util_httpd_start(const util_httpd_cfg *cfg, util_httpd **ph, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    int rv = parse_listen(cfg->listen, &ss, err, errlen);
    if (rv != 0) {
        return rv;
    }
    util_httpd *h = util_xcalloc(1, sizeof(*h));
    h->cfg = *cfg;
    snprintf(h->name, sizeof(h->name), "%s", cfg->name ? cfg->name : "httpd");
    util_httpd_cfg *c = &h->cfg;
    c->max_connections = c->max_connections ? c->max_connections : UTIL_HTTPD_MAX_CONNECTIONS;
    c->per_client = c->per_client ? c->per_client : UTIL_HTTPD_PER_CLIENT;
    c->conn_memory = c->conn_memory ? c->conn_memory : UTIL_HTTPD_CONN_MEMORY;
    c->request_timeout_ms = c->request_timeout_ms ? c->request_timeout_ms
                                                  : UTIL_HTTPD_REQUEST_TIMEOUT_MS;
    c->idle_timeout_s = c->idle_timeout_s ? c->idle_timeout_s : UTIL_HTTPD_IDLE_TIMEOUT_S;
    c->rate = c->rate ? c->rate : UTIL_HTTPD_RATE;
    c->burst = c->burst ? c->burst : (c->rate == UINT32_MAX ? 1 : UTIL_HTTPD_BURST);
    c->max_waiting = c->max_waiting ? c->max_waiting : UTIL_HTTPD_MAX_WAITING;
    c->threads = c->threads ? c->threads : 1;
    c->listen = NULL;
    bool tls = cfg->cert_pem && cfg->key_pem;
    c->cert_pem = c->key_pem = NULL;
    c->client_ca_pem = tls && cfg->client_ca_pem ? "" : NULL; /* only whether there is one */
    if (cfg->client_ca_pem && !tls) {
        snprintf(err, errlen, "a client CA needs HTTPS (a certificate and its key)");
        free(h);
        return -EINVAL;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->kick = -1;
    h->wep = epoll_create1(EPOLL_CLOEXEC);
    h->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = h};
    epoll_ctl(h->wep, EPOLL_CTL_ADD, h->evfd, &ev);
    unsigned maxc = fd_budget(h->name, c->max_connections);

    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (!cfg->base) {
        flags |= MHD_USE_INTERNAL_POLLING_THREAD;
    }
    if (ss.ss_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
    }
    if (tls) {
        flags |= MHD_USE_TLS;
    }
    struct MHD_OptionItem opt[8];
    size_t no = 0;
    if (tls) {
        opt[no++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, unconst(cfg->cert_pem)};
        opt[no++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, unconst(cfg->key_pem)};
        opt[no++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                            unconst(UTIL_HTTPD_TLS_PRIORITIES)};
        if (cfg->client_ca_pem) {
            opt[no++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
                                                unconst(cfg->client_ca_pem)};
        }
    }
    if (!cfg->base && c->threads > 1) {
        opt[no++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, c->threads, NULL};
    }
    opt[no] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    errno = 0;
    h->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
        MHD_OPTION_SOCK_ADDR, &ss,
        MHD_OPTION_CONNECTION_LIMIT, maxc, MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_client,
        MHD_OPTION_CONNECTION_TIMEOUT, c->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        c->conn_memory, MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, h, MHD_OPTION_ARRAY, opt, MHD_OPTION_END);
    if (!h->d) {
        int e = errno;
        if (tls) {
            snprintf(err, errlen,
                     "cannot serve HTTPS on %s: %s (the port in use, or a certificate, key or "
                     "client CA GnuTLS does not take?)",
                     cfg->listen, e ? strerror(e) : "refused");
        } else {
            snprintf(err, errlen, "cannot serve on %s: %s (in use, or not an address here?)",
                     cfg->listen, strerror(e ? e : EADDRINUSE));
        }
        close(h->wep);
        close(h->evfd);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return tls ? -EINVAL : -EADDRINUSE;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : 0;
    if (cfg->base) {
        info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
        h->ev_mhd = event_new(cfg->base, info->epoll_fd, EV_READ | EV_PERSIST, ext_run, h);
        h->ev_timer = evtimer_new(cfg->base, ext_run, h);
        h->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        h->ev_kick = event_new(cfg->base, h->kick, EV_READ | EV_PERSIST, ext_run, h);
        event_add(h->ev_mhd, NULL);
        event_add(h->ev_kick, NULL);
        ext_rearm(h);
    }
    pthread_create(&h->waker, NULL, waker, h);
    h->waker_started = true;
    *ph = h;
    return 0;
}

unsigned util_httpd_port(const util_httpd *h)
{
    return h->port;
}

void util_httpd_free(util_httpd *h)
{
    if (!h) {
        return;
    }
    /* no new connection; then no request may suspend, and the waker resumes every one
     * suspended before it ends: MHD_stop_daemon aborts on a suspended connection */
    MHD_socket lfd = MHD_quiesce_daemon(h->d);
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_mutex_unlock(&h->lock);
    waker_signal(h);
    pthread_join(h->waker, NULL);
    if (h->ev_mhd) {
        event_free(h->ev_mhd);
        event_free(h->ev_timer);
        event_free(h->ev_kick);
        close(h->kick);
    }
    MHD_stop_daemon(h->d);
    if (lfd != MHD_INVALID_SOCKET) {
        close(lfd);
    }
    for (size_t i = 0; i < h->tabcap; i++) {
        free(h->tab[i]);
    }
    free(h->tab);
    close(h->wep);
    close(h->evfd);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
