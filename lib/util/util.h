/* SPDX-License-Identifier: MIT */
/* libutil: what the daemons and tools share — logging, aborting allocation, atomic files. */
#ifndef UTIL_H
#define UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

typedef enum util_level {
    UTIL_LOG_DEBUG = 0,
    UTIL_LOG_INFO,
    UTIL_LOG_NOTICE,
    UTIL_LOG_WARNING,
    UTIL_LOG_ERR,
} util_level;

extern util_level util_log_level;
/* The level called |name| (debug, info, notice, warning, err), or -1. */
int util_log_level_parse(const char *name);

/* Sets the program name printed on every line and where lines go (stderr by default). */
void util_log_init(const char *program, FILE *stream);
void util_log_write(util_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The level is checked before the arguments are evaluated. */
#define util_log(level, ...)                                                                       \
    do {                                                                                           \
        if ((level) >= util_log_level) {                                                           \
            util_log_write((level), __VA_ARGS__);                                                  \
        }                                                                                          \
    } while (0)

/* Allocation that aborts with a log line on failure: daemons cannot go on without memory. */
void *util_xmalloc(size_t size);
void *util_xcalloc(size_t n, size_t size);
void *util_xrealloc(void *p, size_t size);
char *util_xstrdup(const char *s);

/* A file written under a temporary name and renamed into place on commit, so that readers
 * never see half a file and a failed run leaves nothing behind. */
typedef struct util_afile {
    FILE *f;
    char *path;
    char *tmp;
} util_afile;

/* Returns 0 or -errno. */
int util_afile_open(util_afile *af, const char *path);
/* Flushes and renames into place; returns 0 or -errno (the temporary file is removed). No
 * fsync: these are generated files that a rerun recreates, and thousands are written at once. */
int util_afile_commit(util_afile *af);
void util_afile_abort(util_afile *af);

/* Reads a whole file of at most |max| bytes into a NUL-terminated heap buffer. Returns 0,
 * -EFBIG when it holds more, or -errno. util_read_file's bound is UTIL_FILE_MAX. */
#define UTIL_FILE_MAX ((size_t)1 << 30)
int util_read_file_max(const char *path, size_t max, char **pdata, size_t *plen);
int util_read_file(const char *path, char **pdata, size_t *plen);
/* The path of |name| (may be "") in the installed data folder: share/mrcfab beside the bin
 * folder this program runs from (so /usr/bin/mrc-controller finds /usr/share/mrcfab, and a
 * build tree's bin/ the share/mrcfab it mirrors). Returns 0 or a negative errno. */
int util_data_path(const char *name, char *dest, size_t destlen);
/* Where the configuration files are, for the install prefix the build was made for. */
#define UTIL_CONF_DIR UTIL_SYSCONFDIR

/* The next line of the NUL-terminated text at |*cursor|, cut in place (its newline becomes a
 * NUL), empty lines included so that line numbers count them; NULL at the end. */
char *util_line_next(char **cursor);

/* Bearer tokens and their roles, from a file of 'TOKEN ROLE NAME' lines. Each role may do what
 * the ones before it may (below, what each means to the controller); NAME is the token's holder
 * (for an agent or a prober node, its host). */
typedef enum util_role {
    UTIL_ROLE_NONE = 0,
    UTIL_ROLE_READER,    /* reads everything */
    UTIL_ROLE_AGENT,     /* ... and reports, and holds the push channel */
    UTIL_ROLE_PROBER,    /* ... and posts probe results and its own denylist entries */
    UTIL_ROLE_LOCALIZER, /* speaks for every host: the fabric's evidence, verdicts, entries */
    UTIL_ROLE_OPERATOR,  /* ... and changes the denylist */
    UTIL_ROLE_ADMIN,     /* everything */
} util_role;

/* A token of the file: the SHA-256 of its secret (the secret itself is never kept), its role and
 * its holder. */
typedef struct util_token {
    uint8_t digest[32];
    util_role role;
    char *name;
} util_token;

/* The tokens of a file, in its order, and a hash table over their digests. A table built by
 * hand ({tokens, n}, no slots) finds nothing but may be listed. */
typedef struct util_auth {
    util_token *tokens;
    size_t n;
    uint32_t *slots; /* open addressing on the digest: 1 + an index into |tokens|, 0 empty */
    size_t nslots;   /* a power of two, at least twice |n| */
} util_auth;

/* A secret is 16 to 512 bytes; a longer presented one is a miss without being hashed. */
#define UTIL_AUTH_TOKEN_MIN 16
#define UTIL_AUTH_TOKEN_MAX 512

/* Loads the tokens file |path|: 'TOKEN ROLE NAME' lines, where TOKEN is the secret or
 * 'sha256:' and the 64 hex digits of its SHA-256. The file must be a regular file owned by the
 * user this program runs as (geteuid) and neither readable nor writable by group or others, as
 * it holds the secrets. Returns 0, or a negative errno with one sentence naming the file (and
 * the line) and the fault in |err|: -EPERM for a file of the wrong mode or owner, -EINVAL for a
 * bad line, a duplicate token or no token, -EFBIG for a file over 64 MiB. On failure |auth| is
 * empty. */
int util_auth_load(const char *path, util_auth *auth, char *err, size_t errlen);
/* Parses |datalen| bytes of |data| (a tokens file's text; need not be NUL-terminated, may hold
 * anything) into |auth|; |what| names the text in messages. Returns as util_auth_load. */
int util_auth_parse(const char *data, size_t datalen, const char *what, util_auth *auth, char *err,
                    size_t errlen);
void util_auth_free(util_auth *auth);
/* The token |bearer| (NUL-terminated; may be NULL) names, or NULL. In time that does not depend
 * on the number of tokens nor on the bearer's length beyond UTIL_AUTH_TOKEN_MAX: one SHA-256 of
 * at most that many bytes and a hash table probe whose digests compare in constant time. */
const util_token *util_auth_find(const util_auth *auth, const char *bearer);
/* As util_auth_find, for the |bearerlen| bytes at |bearer|. */
const util_token *util_auth_findn(const util_auth *auth, const char *bearer, size_t bearerlen);
/* The SHA-256 of |datalen| bytes of |data| into |digest|. */
void util_sha256(const void *data, size_t datalen, uint8_t digest[32]);
const char *util_role_name(util_role role);
util_role util_role_parse(const char *name);

/* A growing text buffer, always NUL-terminated once written to; free |s|. */
typedef struct util_buf {
    char *s;
    size_t len, cap;
} util_buf;
/* Appends |len| bytes of |data| to the util_buf |buf|; returns 0 (a fab_sink_fn). */
int util_buf_put(void *buf, const char *data, size_t len);
void util_buf_printf(util_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the string literal |lit| (its length counted by the compiler). */
#define util_buf_lit(b, lit) util_buf_put((b), "" lit, sizeof(lit) - 1)
/* |s| as a JSON string: quoted, with '"', '\\' and control characters escaped. */
void util_buf_json_str(util_buf *b, const char *s);

#include "util_opt.h"

struct event_base;
struct evdns_base;

/* One HTTP/1.1 request in flight (util_http_start). */
typedef struct util_http util_http;

/* How a request ended, as its callback sees it. */
typedef struct util_http_result {
    /* 0: answered, with |status| and |body|; else one of the codes of util_http_request */
    int rv;
    int status;
    /* the answer's body, NUL-terminated (NULL when rv != 0), and its length; freed after the
     * callback returns, unless the callback takes it by setting |body| to NULL (then it frees
     * it) */
    char *body;
    size_t len;
    const char *err; /* why, when rv != 0 (else ""); valid during the callback only */
    /* the answer's X-Mrcfab-Leader header (UTIL_PEERS_LEADER_HEADER: a follower's redirect
     * names the leader there), or NULL; valid during the callback only */
    const char *leader;
    unsigned retry_after; /* the answer's Retry-After, in seconds (0: none, or not seconds) */
} util_http_result;

typedef void (*util_http_cb)(void *user, util_http_result *res);

typedef struct util_http_opts {
    const char *method; /* NULL: GET */
    const char *bearer; /* may be NULL: sent in an Authorization header */
    const char *body;   /* may be NULL: |bodylen| bytes sent as application/json */
    size_t bodylen;
    const char *cafile; /* over https: the PEM file of trusted CAs (NULL: the system's) */
    /* over https: the client's certificate (PEM, its chain after it) and its private key, for
     * a server that asks for one (mutual TLS); both or neither (NULL: none is offered) */
    const char *certfile, *keyfile;
    unsigned timeout_ms;    /* the whole request may take this long; 0: 10 s */
    struct evdns_base *dns; /* NULL: a host name is resolved with a blocking getaddrinfo */
} util_http_opts;

/* Starts one HTTP/1.1 request to an http:// or https:// |url| (host[:port] and a path with its
 * query; an IPv6 host in brackets) on |base|, the connection closed after it; |opts| may be
 * NULL (a GET). Over https the server's certificate must chain to a CA certificate of
 * opts->cafile and name the URL's host (a DNS name, or the IP address it is); TLS 1.2 or
 * later. |opts| and what it points to are borrowed for this call only. The request never
 * blocks |base|'s loop beyond a host name's resolution when opts->dns is NULL (an IP address
 * needs none).
 * A host name is resolved (through opts->dns, else blocking) to at most 8 addresses, tried in
 * their order: the next when one refuses the connection or has not taken it within 2 s; the
 * whole request, all addresses together, within opts->timeout_ms.
 * Returns 0 with the request in |*preq|: |cb| is then called exactly once, from |base|'s loop
 * and never from within this call, with |user| and the result; the request is gone when |cb|
 * runs (do not cancel it there). Or returns -EINVAL (a bad URL, method, token or CA file),
 * -ENOMEM or -EIO with a sentence in |err|, and |cb| is never called. */
int util_http_start(struct event_base *base, const char *url, const util_http_opts *opts,
                    util_http_cb cb, void *user, util_http **preq, char *err, size_t errlen);
/* Ends a request whose callback has not run yet, closing its connection; its callback will
 * never run. NULL is a no-op. */
void util_http_cancel(util_http *req);

/* One blocking request, util_http_start on a base of its own, with |opts| as there (may be
 * NULL: a GET with no token). Gives up after opts->timeout_ms (0: 10 s).
 * Returns 0 with the HTTP status in |*pstatus| and the answer's body, NUL-terminated, in
 * |*pbody| (the caller frees it) and its length in |*plen| (may be NULL); or one of -EINVAL (a
 * bad URL or method, a CA file that cannot be read or holds no certificate, a client
 * certificate or key that cannot be used), -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH (a host
 * that does not resolve or cannot be reached), -ECONNRESET, -EPROTO (not HTTP; a certificate
 * not trusted, a failed TLS handshake, a client certificate missing or refused), -EMSGSIZE,
 * -ENOMEM, -EIO, with a sentence in |err|. Writing to a peer that has gone may raise SIGPIPE
 * (here and in util_http_start): a caller that does not want to die of it ignores it. */
int util_http_request(const char *url, const util_http_opts *opts, int *pstatus, char **pbody,
                      size_t *plen, char *err, size_t errlen);

/* An answer as util_http_fetch gives it: the caller owns |body| and |leader|
 * (util_http_answer_fini frees them). */
typedef struct util_http_answer {
    int status;
    char *body; /* NUL-terminated; |len| bytes */
    size_t len;
    char *leader;         /* the X-Mrcfab-Leader header, or NULL */
    unsigned retry_after; /* Retry-After in seconds, or 0 */
} util_http_answer;

/* util_http_request with the answer's headers that matter to a client of replicas. Returns as
 * util_http_request, |*pans| zeroed unless it returns 0. */
int util_http_fetch(const char *url, const util_http_opts *opts, util_http_answer *pans, char *err,
                    size_t errlen);
void util_http_answer_fini(util_http_answer *ans);

/* A client of several replicas of one service (util_peers.h) follows a leader's redirect at
 * most this many times for one request. */
#define UTIL_HTTP_MAX_HOPS 3

/* What a client of replicas does after one try. */
typedef enum util_http_route {
    UTIL_HTTP_ANSWERED, /* an answer to act on (whatever its status) */
    UTIL_HTTP_FOLLOW,   /* a follower's 307 naming the leader: ask it, at once */
    UTIL_HTTP_NEXT,     /* no answer, "no leader" (503), or redirects past the limit: the next */
    UTIL_HTTP_GIVE_UP,  /* a fault that every replica would meet (a bad setting, TLS) */
} util_http_route;

/* The route after a try that ended with |rv| (util_http's code), and when rv is 0 the answer's
 * |status|, |body| (|len| bytes, may be NULL) and X-Mrcfab-Leader |leader| (may be NULL);
 * |hops| is how many redirects this request has followed so far. A 307 without the header is
 * an answer: only the header names where to go. */
util_http_route util_http_route_of(int rv, int status, const char *body, size_t len,
                                   const char *leader, unsigned hops);

/* Checks a client certificate and key as util_http will offer them, for a program to call at
 * start: both or neither given, each readable, a PEM certificate and a PEM private key without
 * a passphrase, the key the certificate's. |certopt| and |keyopt| are the options' names for
 * the sentence ("--client-cert"). Returns 0 (also when neither is given), or -EINVAL with one
 * sentence in |err| that names the file at fault. */
int util_http_client_check(const char *certfile, const char *keyfile, const char *certopt,
                           const char *keyopt, char *err, size_t errlen);

/* |data| (|len| bytes) as exactly one JSON value (strict; trailing whitespace allowed), or NULL
 * with a sentence naming |what| ("profile body") and the byte where it stopped. */
json_object *util_json_parse(const char *what, const char *data, size_t len, char *err,
                             size_t errlen);
/* "an integer", "an object"...: a JSON type as a sentence names it. */
const char *util_json_type_name(json_type type);
/* Member |key| of |o| (|where| names |o| in the body: "" or "entries[3].") if it has |type| (a
 * number also takes an integer); NULL with a sentence when it is missing or of another type. */
json_object *util_json_member(const char *what, json_object *o, const char *where, const char *key,
                              json_type type, char *err, size_t errlen);

#endif
