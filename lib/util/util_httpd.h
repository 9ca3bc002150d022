/* SPDX-License-Identifier: MIT */
/* One HTTP server layer over libmicrohttpd for every daemon that serves: admission before the
 * body, bounded memory per connection, a deadline per request, a rate per token, suspended
 * long-polls, TLS, problem documents, one log line per refusal, and clean stops. */
#ifndef UTIL_HTTPD_H
#define UTIL_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "util.h"

struct event_base;

typedef struct util_httpd util_httpd;
/* One request, from its headers to its answer; valid until the handler has answered. */
typedef struct util_httpd_req util_httpd_req;

/* Defaults (a field left 0 takes them). */
#define UTIL_HTTPD_MAX_CONNECTIONS 262144u
#define UTIL_HTTPD_PER_CLIENT 128u
#define UTIL_HTTPD_CONN_MEMORY (48u << 10)
#define UTIL_HTTPD_REQUEST_TIMEOUT_MS 10000u
#define UTIL_HTTPD_IDLE_TIMEOUT_S 30u
#define UTIL_HTTPD_MAX_WAITING 4u
#define UTIL_HTTPD_RATE 200u  /* requests per second and token */
#define UTIL_HTTPD_BURST 2000u
/* The longest bearer token looked up; a longer one is refused (401) unread. */
#define UTIL_HTTPD_BEARER_MAX 512u
/* TLS 1.2 and 1.3, AEAD ciphers only, the server's order. */
#define UTIL_HTTPD_TLS_PRIORITIES                                                                  \
    "SECURE:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:"          \
    "+CHACHA20-POLY1305:%SERVER_PRECEDENCE"

/* Called once per request when its headers are in, before any byte of its body is read:
 * returns 0 to admit it (|*pmax_body| starts at cfg.max_body and may be changed: the largest
 * body this request may bring), or an HTTP status (401, 403, 404, 405, 413, 415, 429...) with
 * one sentence in |detail|, which is answered at once as a problem document without reading
 * the body. The server has already refused (401) a bearer token over UTIL_HTTPD_BEARER_MAX
 * bytes, a client certificate that does not verify under cfg.client_ca_pem, and (429) a token
 * over its rate; it refuses (413) a Content-Length over |*pmax_body| after the call. */
typedef int (*util_httpd_admit_fn)(void *user, util_httpd_req *req, size_t *pmax_body,
                                   char *detail, size_t detaillen);
/* Called with an admitted request's whole body (or again after util_httpd_suspend, with
 * util_httpd_req_resumed() true): must answer it once with util_httpd_respond or
 * util_httpd_problem, or suspend it. Left unanswered, it is answered 500. */
typedef void (*util_httpd_handle_fn)(void *user, util_httpd_req *req);
/* Called for every answer, refusals included: its status and how long the request took since
 * its headers, in microseconds (for metrics). May be NULL. */
typedef void (*util_httpd_done_fn)(void *user, int status, uint64_t us);

typedef struct util_httpd_cfg {
    const char *name;   /* in log lines ("controller") */
    const char *listen; /* ADDR:PORT, [ADDR6]:PORT or :PORT (all IPv4 addresses) */
    /* NULL: the server runs its own polling thread pool of |threads| (0: 1) and the handlers
     * run on them, concurrently; else the server runs on this loop (the handlers run there,
     * one at a time), which must outlive it */
    struct event_base *base;
    unsigned threads;
    size_t max_body;           /* a request's body limit unless admit says otherwise */
    unsigned max_connections;  /* all together; 0: UTIL_HTTPD_MAX_CONNECTIONS */
    unsigned per_client;       /* per client IP address; 0: UTIL_HTTPD_PER_CLIENT */
    size_t conn_memory;        /* per connection, headers included; 0: UTIL_HTTPD_CONN_MEMORY */
    unsigned request_timeout_ms; /* from a request's first byte to its answer; 0: default */
    unsigned idle_timeout_s;     /* an idle keep-alive connection's; 0: default */
    /* per token: requests per second (0: UTIL_HTTPD_RATE; UINT32_MAX: unlimited) and burst */
    unsigned rate, burst;
    unsigned max_waiting; /* suspended requests per token; 0: UTIL_HTTPD_MAX_WAITING */
    /* HTTPS when both are given (PEM text, borrowed for util_httpd_start only); with
     * |client_ca_pem| a client must present a certificate that chains to it */
    const char *cert_pem, *key_pem, *client_ca_pem;
    const util_auth *auth; /* borrowed until util_httpd_free; NULL: no token is known */
    util_httpd_admit_fn admit; /* may be NULL: every request is admitted */
    util_httpd_handle_fn handle;
    util_httpd_done_fn done;
    void *user;
} util_httpd_cfg;

/* What the server counts, for /metrics. */
typedef struct util_httpd_stats {
    uint64_t connections; /* open now */
    uint64_t waiting;     /* suspended requests now */
    uint64_t refused;     /* answered in admission, before any body */
    uint64_t rate_limited; /* of which 429 for a token's rate or waiting cap */
    uint64_t cut;         /* connections shut down at their request deadline */
} util_httpd_stats;

/* Starts serving |cfg| (copied; its strings borrowed for this call only, but |auth|, |base|
 * and |user| until util_httpd_free). Raises RLIMIT_NOFILE towards what max_connections needs
 * (and says in the log when it cannot, serving fewer). Returns 0 with the server in |*ph|, or
 * -EINVAL (a bad listen address, TLS material or priority string) or -EADDRINUSE (cannot
 * bind) with a sentence in |err|. */
int util_httpd_start(const util_httpd_cfg *cfg, util_httpd **ph, char *err, size_t errlen);
/* The port it listens on (useful with port 0). */
unsigned util_httpd_port(const util_httpd *h);
/* Stops cleanly: no new connection, every suspended request resumed (and answered), then the
 * daemon stopped. In external mode, call it from |base|'s thread. NULL is a no-op. */
void util_httpd_free(util_httpd *h);
/* Resumes every suspended request (something they wait for changed). Any thread. */
void util_httpd_wake(util_httpd *h);
void util_httpd_stats_get(util_httpd *h, util_httpd_stats *st);
/* Appends the stats to |b| in Prometheus's text format (mrcfab_http_connections,
 * mrcfab_http_waiting, mrcfab_http_refused_total, mrcfab_http_rate_limited_total,
 * mrcfab_http_cut_total): every server exports the same names. */
void util_httpd_metrics(util_httpd *h, util_buf *b);

/* The request, for the admit and handle callbacks. */
const char *util_httpd_req_method(const util_httpd_req *req);
const char *util_httpd_req_path(const util_httpd_req *req); /* without the query */
const char *util_httpd_req_header(const util_httpd_req *req, const char *name); /* or NULL */
const char *util_httpd_req_arg(const util_httpd_req *req, const char *name);    /* or NULL */
/* The bearer token's entry in cfg.auth, or NULL (none given, or not one of them). */
const util_token *util_httpd_req_token(const util_httpd_req *req);
/* The query as "?a=1&b=2" (each name and value percent-encoded again; "" for none), for a
 * redirect to repeat it: a new string the caller frees. */
char *util_httpd_req_query(const util_httpd_req *req);
/* The body (NUL-terminated, NULL when empty) and its length. */
const char *util_httpd_req_body(const util_httpd_req *req, size_t *plen);
/* True when the handler is called again after util_httpd_suspend. */
bool util_httpd_req_resumed(const util_httpd_req *req);
/* The client's address as text ("127.0.0.1"). */
const char *util_httpd_req_peer(const util_httpd_req *req);

/* Answers |req| with |status|, |ctype| and |body| (heap, taken: freed by the server; may be
 * NULL when |len| is 0). |headers| is NULL or a NULL-terminated list of name, value pairs
 * added to the answer (borrowed for this call). A 401 gets WWW-Authenticate: Bearer. Returns 0
 * or -EIO (the connection could not take it; |body| is freed anyway). */
int util_httpd_respond(util_httpd_req *req, int status, const char *ctype, char *body,
                       size_t len, const char *const *headers);
/* Answers |req| with a problem document (application/problem+json) of |status| whose detail
 * is the sentence |fmt|. Returns as util_httpd_respond. */
int util_httpd_problem(util_httpd_req *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Holds |req| unanswered for at most |wait_ms|: the handler is called again (resumed) when
 * util_httpd_wake is called, the wait runs out, the client closes or the server stops. The
 * request's deadline becomes the wait plus a margin. Returns 0 (suspended), or -EAGAIN with a
 * 429 answered (the token already holds cfg.max_waiting suspended requests) or -ESHUTDOWN with
 * a 503 answered (the server is stopping). */
int util_httpd_suspend(util_httpd_req *req, unsigned wait_ms);

/* The problem document (RFC 9457) every server writes: type, title, status, detail, instance.
 * The caller owns the object. */
json_object *util_httpd_problem_obj(int status, const char *instance, const char *detail);
/* "Not Found": the reason phrase of |status| as problem documents title it. */
const char *util_httpd_reason(int status);

#endif
