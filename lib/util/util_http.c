/* SPDX-License-Identifier: MIT */
/* A small HTTP/1.1 client on libevent's evhttp, over TLS (OpenSSL) for https://: one request per
 * connection, run on a caller's event base (util_http_start) or, for tools, blocking on a base of
 * its own (util_http_fetch, util_http_request: thin wrappers over the first). A host name is
 * resolved here, not by evhttp (which tries only the first address), so that each of its
 * addresses is tried in turn until one takes the connection. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "util.h"
#include "util_peers.h"

#define TIMEOUT_MS 10000u
#define MAX_BODY (64u << 20)
/* how long the second connection attempt that asks why the first failed may take */
#define PROBE_MS 1000
/* the addresses of one name tried, at most */
#define MAX_ADDRS 8
/* how long a connection to one of several addresses may take before the next is tried */
#define CONNECT_MS 2000
/* the longest answer header kept (X-Mrcfab-Leader) */
#define MAX_HEADER 1024

/* The parts of an http:// or https:// URL: host (no brackets), port, and the path with its
 * query (the query alone, with no path, is that of "/"). */
typedef struct http_url {
    char host[256];
    unsigned port;
    bool tls; /* https:// */
    const char *path, *query;
} http_url;

struct util_http {
    struct event_base *base;
    util_http_cb cb;
    void *user;
    char *url; /* for the sentences */
    http_url u;
    unsigned timeout_ms;
    uint64_t start_ms;              /* CLOCK_MONOTONIC */
    struct evhttp_connection *conn; /* until the end is known */
    struct event *deadline;         /* the whole request's */
    struct event *finish;           /* ends the request outside evhttp's own callbacks */
    struct event *probe;            /* the probe's connection attempt, on |probe_fd| */
    int probe_fd;
    bool done;     /* the request's callback ran */
    bool answered; /* with an answer */
    bool errored;  /* the error callback ran, with |error| */
    bool timedout; /* the whole request's deadline passed */
    enum evhttp_request_error error;
    SSL *ssl;         /* over TLS: the connection's, owned by its bufferevent */
    bool client_cert; /* over TLS: a client certificate is offered */
    int status;
    char *body;
    size_t len;
    char *leader;         /* the answer's X-Mrcfab-Leader, or NULL */
    unsigned retry_after; /* the answer's Retry-After in seconds, or 0 */

    /* what each connection attempt sends, copied from the caller's options */
    enum evhttp_cmd_type type;
    char *target, *auth, *reqbody;
    size_t reqbodylen;
    char hostport[272];
    util_http_opts tls;                /* cafile, certfile, keyfile: the copies below */
    char *cafile, *certfile, *keyfile; /* owned */

    /* the host's addresses, tried in turn; |dnserr| an EVUTIL_EAI_* when it does not resolve */
    struct sockaddr_storage addr[MAX_ADDRS];
    socklen_t addrlen[MAX_ADDRS];
    unsigned naddr, iaddr;
    int dnserr;
    struct evdns_getaddrinfo_request *dnsreq;
    bool starting;          /* within util_http_start: the end waits for the loop */
    struct event *next_try; /* a connection to one of several addresses that takes too long */
};

static int parse_url(const char *url, http_url *u, char *err, size_t errlen)
{
    static const char http[] = "http://", https[] = "https://";
    for (const char *s = url; *s; s++) {
        if ((unsigned char)*s <= 0x20 || *s == 0x7f) {
            snprintf(err, errlen, "'%s' is not a URL: it holds a space or a control character",
                     url);
            return -EINVAL;
        }
    }
    u->tls = strncasecmp(url, https, sizeof(https) - 1) == 0;
    if (!u->tls && strncasecmp(url, http, sizeof(http) - 1) != 0) {
        snprintf(err, errlen, "'%s' is not an http:// or https:// URL", url);
        return -EINVAL;
    }
    const char *a = url + (u->tls ? sizeof(https) : sizeof(http)) - 1;
    size_t alen = strcspn(a, "/?#");
    const char *rest = a + alen;
    const char *hend, *colon;
    if (memchr(a, '@', alen)) {
        snprintf(err, errlen, "'%s': credentials in the URL are not taken", url);
        return -EINVAL;
    }
    if (alen > 0 && a[0] == '[') {
        const char *close = memchr(a, ']', alen);
        if (!close || close == a + 1) {
            snprintf(err, errlen, "'%s': an IPv6 address in the URL must be in [brackets]", url);
            return -EINVAL;
        }
        hend = close + 1;
        colon = hend < rest && *hend == ':' ? hend : NULL;
        if (hend < rest && !colon) {
            snprintf(err, errlen, "'%s' is not a URL: junk after the address", url);
            return -EINVAL;
        }
        a++;
        hend = close;
    } else {
        colon = memchr(a, ':', alen);
        hend = colon ? colon : rest;
    }
    size_t hlen = (size_t)(hend - a);
    if (hlen == 0 || hlen >= sizeof(u->host)) {
        snprintf(err, errlen, "'%s' is not a URL: %s", url,
                 hlen ? "the host name is over 255 characters" : "it names no host");
        return -EINVAL;
    }
    memcpy(u->host, a, hlen);
    u->host[hlen] = '\0';
    u->port = u->tls ? 443 : 80;
    if (colon) {
        char *end;
        errno = 0;
        unsigned long port = strtoul(colon + 1, &end, 10);
        if (end == colon + 1 || end != rest || errno || colon[1] == '-' || port == 0 ||
            port > 65535) {
            snprintf(err, errlen, "'%s' is not a URL: bad port", url);
            return -EINVAL;
        }
        u->port = (unsigned)port;
    }
    u->path = *rest == '/' ? rest : "/";
    u->query = *rest == '?' ? rest : "";
    if (*rest == '#' || strchr(rest, '#')) {
        snprintf(err, errlen, "'%s': a fragment (#) has no place in a request", url);
        return -EINVAL;
    }
    return 0;
}

static int method_type(const char *method, enum evhttp_cmd_type *ptype)
{
    static const struct {
        const char *name;
        enum evhttp_cmd_type type;
    } methods[] = {
        {"GET", EVHTTP_REQ_GET},         {"POST", EVHTTP_REQ_POST}, {"PUT", EVHTTP_REQ_PUT},
        {"DELETE", EVHTTP_REQ_DELETE},   {"HEAD", EVHTTP_REQ_HEAD}, {"PATCH", EVHTTP_REQ_PATCH},
        {"OPTIONS", EVHTTP_REQ_OPTIONS},
    };
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        if (strcmp(method, methods[i].name) == 0) {
            *ptype = methods[i].type;
            return 0;
        }
    }
    return -EINVAL;
}

static void on_error(enum evhttp_request_error error, void *arg)
{
    util_http *h = arg;
    h->errored = true;
    h->error = error;
}

/* Called with NULL after an error, and with a request whose code is 0 when the connection
 * could not be made (evhttp says no more). The end is left to on_finish: evhttp goes on using
 * the connection after this returns, so it may not be freed here. */
static void on_done(struct evhttp_request *req, void *arg)
{
    util_http *h = arg;
    h->done = true;
    event_active(h->finish, 0, 0);
    if (!req || evhttp_request_get_response_code(req) == 0) {
        return;
    }
    h->answered = true;
    h->status = evhttp_request_get_response_code(req);
    struct evkeyvalq *in_hdr = evhttp_request_get_input_headers(req);
    const char *leader = evhttp_find_header(in_hdr, UTIL_PEERS_LEADER_HEADER);
    const char *after = evhttp_find_header(in_hdr, "Retry-After");
    if (leader && strlen(leader) <= MAX_HEADER) {
        h->leader = util_xstrdup(leader);
    }
    if (after && strspn(after, "0123456789") == strlen(after) && strlen(after) <= 4) {
        h->retry_after = (unsigned)atoi(after);
    }
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    h->body = util_xmalloc(n + 1);
    h->len = n > 0 && evbuffer_remove(in, h->body, n) == (int)n ? n : 0;
    h->body[h->len] = '\0';
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    util_http *h = arg;
    (void)fd;
    (void)what;
    h->timedout = true;
    event_active(h->finish, 0, 0);
}

/* The reason of OpenSSL error |e| (0: none), else |none|; empties the thread's queue. */
static const char *ssl_reason(unsigned long e, const char *none)
{
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    ERR_clear_error();
    return why ? why : none;
}

/* The client certificate of |certfile| and key of |keyfile| into |ctx|: 0, or -EINVAL with a
 * sentence naming |certopt| or |keyopt| and the file. */
static int client_cert_use(SSL_CTX *ctx, const char *certfile, const char *keyfile,
                           const char *certopt, const char *keyopt, char *err, size_t errlen)
{
    if (!certfile != !keyfile) {
        snprintf(err, errlen, "%s and %s go together", certopt, keyopt);
        return -EINVAL;
    }
    if (!certfile) {
        return 0;
    }
    const char *files[2] = {certfile, keyfile}, *opts[2] = {certopt, keyopt};
    for (int i = 0; i < 2; i++) {
        if (access(files[i], R_OK) != 0) {
            snprintf(err, errlen, "cannot read the client %s %s (%s): %s",
                     i ? "key" : "certificate", files[i], opts[i], strerror(errno));
            return -EINVAL;
        }
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, certfile) != 1) {
        snprintf(err, errlen, "%s holds no PEM certificate (%s): %s", certfile, certopt,
                 ssl_reason(ERR_peek_last_error(), "unreadable"));
        return -EINVAL;
    }
    /* read apart from the certificate: OpenSSL's own loader takes a key of another
     * certificate for one it cannot read */
    FILE *f = fopen(keyfile, "r");
    EVP_PKEY *k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
    int rv = -EINVAL;
    if (f) {
        fclose(f);
    }
    ERR_clear_error();
    if (!k) {
        snprintf(err, errlen, "%s holds no PEM private key, or one with a passphrase (%s)", keyfile,
                 keyopt);
    } else if (X509_check_private_key(SSL_CTX_get0_certificate(ctx), k) != 1 ||
               SSL_CTX_use_PrivateKey(ctx, k) != 1) {
        snprintf(err, errlen, "the key in %s is not the key of the certificate in %s", keyfile,
                 certfile);
        ERR_clear_error();
    } else {
        rv = 0;
    }
    EVP_PKEY_free(k);
    return rv;
}

int util_http_client_check(const char *certfile, const char *keyfile, const char *certopt,
                           const char *keyopt, char *err, size_t errlen)
{
    if (!certfile && !keyfile) {
        return 0;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        snprintf(err, errlen, "cannot make a TLS context: %s",
                 ssl_reason(ERR_get_error(), "out of memory"));
        return -ENOMEM;
    }
    int rv = client_cert_use(ctx, certfile, keyfile, certopt, keyopt, err, errlen);
    SSL_CTX_free(ctx);
    return rv;
}

/* A TLS client connection for |u| on |base|: the peer's certificate must chain to a CA of
 * o->cafile (NULL: the system's) and name u->host (a DNS name, or the IP address it is); the
 * client certificate of o->certfile and o->keyfile is offered, if any.
 * Returns the bufferevent, with the connection's SSL in |*pssl| (the bufferevent owns it), or
 * NULL with -EINVAL (a CA file, client certificate or key that cannot be used) or -ENOMEM in
 * |*prv| and a sentence in |err|. */
static struct bufferevent *tls_connection(struct event_base *base, const http_url *u,
                                          const util_http_opts *o, SSL **pssl, int *prv, char *err,
                                          size_t errlen)
{
    const char *cafile = o->cafile;
    struct bufferevent *bev = NULL;
    unsigned char ip[16];
    bool literal = inet_pton(AF_INET, u->host, ip) == 1 || inet_pton(AF_INET6, u->host, ip) == 1;
    SSL *ssl = NULL;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    *prv = -ENOMEM;
    if (!ctx) {
        snprintf(err, errlen, "cannot make a TLS context: %s",
                 ssl_reason(ERR_get_error(), "out of memory"));
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (cafile) {
        if (access(cafile, R_OK) != 0) {
            snprintf(err, errlen, "cannot read the CA file %s: %s", cafile, strerror(errno));
            *prv = -EINVAL;
            goto out;
        }
        if (SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1) {
            snprintf(err, errlen, "the CA file %s holds no PEM certificate (%s)", cafile,
                     ssl_reason(ERR_peek_last_error(), "unreadable"));
            *prv = -EINVAL;
            goto out;
        }
    } else {
        SSL_CTX_set_default_verify_paths(ctx);
    }
    if ((*prv = client_cert_use(ctx, o->certfile, o->keyfile, "--client-cert", "--client-key", err,
                                errlen)) != 0) {
        goto out;
    }
    *prv = -ENOMEM;
    if (!(ssl = SSL_new(ctx))) {
        snprintf(err, errlen, "cannot make a TLS connection: %s",
                 ssl_reason(ERR_get_error(), "out of memory"));
        goto out;
    }
    /* a name is checked against the certificate's DNS names, an address against its IP
     * addresses; only a name goes in the SNI */
    char sni[256]; /* OpenSSL's SNI macro casts its name to void *: hand it one it may */
    snprintf(sni, sizeof(sni), "%s", u->host);
    if (literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), u->host) != 1
                : SSL_set1_host(ssl, u->host) != 1 || SSL_set_tlsext_host_name(ssl, sni) != 1) {
        snprintf(err, errlen, "cannot check the certificate against '%s'", u->host);
        goto out;
    }
    bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
                                         BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (!bev) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    /* the server closes the connection after its answer (Connection: close), maybe with no
     * close_notify; the answer's length is known from its headers all the same */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    *pssl = ssl;
    ssl = NULL;
    *prv = 0;
out:
    SSL_free(ssl);
    SSL_CTX_free(ctx); /* the connection holds its own reference */
    return bev;
}

/* Why a TLS connection failed, if it did: a sentence in |err| and -EPROTO; else 0. */
static int tls_failure(const util_http *h, char *err, size_t errlen)
{
    if (!h->ssl) {
        return 0;
    }
    long verify = SSL_get_verify_result(h->ssl);
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        snprintf(err, errlen, "%s: the server's certificate is not for %s (%s)", h->url, h->u.host,
                 X509_verify_cert_error_string(verify));
        return -EPROTO;
    }
    if (verify != X509_V_OK) {
        snprintf(err, errlen,
                 "%s: the server's certificate is not trusted: %s (is its CA, or the "
                 "certificate itself, in the CA file?)",
                 h->url, X509_verify_cert_error_string(verify));
        return -EPROTO;
    }
    unsigned long e = bufferevent_get_openssl_error(evhttp_connection_get_bufferevent(h->conn));
    if (!e) {
        e = ERR_peek_last_error();
    }
    /* a server that wants a client certificate says so with an alert: in TLS 1.3 only after
     * the handshake, so this is the first the client hears of it */
    int reason = e ? ERR_GET_REASON(e) : 0;
    if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
        (!h->client_cert && reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE)) {
        ERR_clear_error();
        snprintf(err, errlen,
                 "%s: the server requires a client certificate (give one with --client-cert "
                 "FILE --client-key FILE)",
                 h->url);
        return -EPROTO;
    }
    if (h->client_cert &&
        (reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE || reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
         reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN ||
         reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR ||
         reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE ||
         reason == SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED ||
         reason == SSL_R_TLSV1_ALERT_ACCESS_DENIED)) {
        snprintf(err, errlen,
                 "%s: the server refused the client certificate: %s (is it signed by a CA the "
                 "server trusts?)",
                 h->url, ssl_reason(e, "refused"));
        return -EPROTO;
    }
    const char *why = ssl_reason(e, NULL);
    if (why) {
        snprintf(err, errlen, "%s: the TLS handshake failed: %s (is the server https?)", h->url,
                 why);
        return -EPROTO;
    }
    return 0;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* |ms| as a short duration for a sentence. */
static void duration(char *dest, size_t destlen, unsigned ms)
{
    if (ms % 1000 == 0) {
        snprintf(dest, destlen, "%u s", ms / 1000);
    } else {
        snprintf(dest, destlen, "%u ms", ms);
    }
}

/* The sentence for a request that got no answer; returns the negative errno, or 1 when the
 * connection was never made and only a second attempt can tell why (evhttp does not). */
static int failure(const util_http *h, char *err, size_t errlen)
{
    int dnserr = h->dnserr, rv;
    if (!dnserr && h->conn) {
        dnserr = bufferevent_socket_get_dns_error(evhttp_connection_get_bufferevent(h->conn));
    }
    if (h->timedout || (h->errored && h->error == EVREQ_HTTP_TIMEOUT)) {
        char d[32];
        duration(d, sizeof(d), h->timeout_ms);
        snprintf(err, errlen, "%s: no answer within %s (timed out)", h->url, d);
        return -ETIMEDOUT;
    }
    if (dnserr) {
        snprintf(err, errlen, "%s: cannot resolve '%s': %s", h->url, h->u.host,
                 evutil_gai_strerror(dnserr));
        return -EHOSTUNREACH;
    }
    if (!h->conn) {
        return 1;
    }
    if ((rv = tls_failure(h, err, errlen)) != 0) {
        return rv;
    }
    if (h->errored && h->error == EVREQ_HTTP_DATA_TOO_LONG) {
        snprintf(err, errlen, "%s: the answer is over %u MiB", h->url, MAX_BODY >> 20);
        return -EMSGSIZE;
    }
    if (h->errored && h->error == EVREQ_HTTP_INVALID_HEADER) {
        snprintf(err, errlen, "%s: the answer is not HTTP", h->url);
        return -EPROTO;
    }
    if (h->done && !h->errored) {
        return 1;
    }
    /* a TLS server drops a plain request at once; a long wait ended by a server that went
     * away is no such case */
    bool early = mono_ms() - h->start_ms < 2000;
    snprintf(err, errlen, "%s: the connection closed without an answer%s", h->url,
             !h->u.tls && early ? " (if the server speaks https, use an https:// URL)" : "");
    return -ECONNRESET;
}

/* The sentence for a connection that could not be made, from what the probe found (|e|, an
 * errno; 0: it connects now). */
static int connect_failure(const util_http *h, int e, char *err, size_t errlen)
{
    if (e == ETIMEDOUT) {
        snprintf(err, errlen, "%s: cannot connect to port %u of %s (timed out)", h->url, h->u.port,
                 h->u.host);
        return -ETIMEDOUT;
    }
    if (e != 0) {
        snprintf(err, errlen, "%s: cannot connect to port %u of %s (%s)", h->url, h->u.port,
                 h->u.host, strerror(e));
        return -e;
    }
    snprintf(err, errlen, "%s: cannot connect to port %u of %s", h->url, h->u.port, h->u.host);
    return -ECONNREFUSED;
}

static void event_free_null(struct event **pev)
{
    if (*pev) {
        event_free(*pev);
        *pev = NULL;
    }
}

/* Drops the connection of the attempt in flight (and the request queued on it, without calling
 * it back), to make another or to end. */
static void attempt_drop(util_http *h)
{
    if (h->conn) {
        evhttp_connection_free(h->conn);
        h->conn = NULL;
        h->ssl = NULL;
    }
    if (h->next_try) {
        event_del(h->next_try);
    }
}

/* Frees what the request holds, but not |h| itself. No callback runs after this. */
static void release(util_http *h)
{
    attempt_drop(h);
    if (h->dnsreq) {
        /* calls on_resolved at once with EVUTIL_EAI_CANCEL, which it ignores */
        struct evdns_getaddrinfo_request *r = h->dnsreq;
        h->dnsreq = NULL;
        evdns_getaddrinfo_cancel(r);
    }
    if (h->probe) {
        event_free(h->probe);
        h->probe = NULL;
    }
    if (h->probe_fd >= 0) {
        close(h->probe_fd);
        h->probe_fd = -1;
    }
    event_free_null(&h->deadline);
    event_free_null(&h->finish);
    event_free_null(&h->next_try);
    free(h->body);
    h->body = NULL;
    free(h->url);
    h->url = NULL;
    free(h->leader);
    free(h->target);
    free(h->auth);
    free(h->reqbody);
    free(h->cafile);
    free(h->certfile);
    free(h->keyfile);
    h->cafile = h->certfile = h->keyfile = NULL;
    h->leader = h->target = h->auth = h->reqbody = NULL;
    h->tls = (util_http_opts){0};
}

/* Ends the request: everything is freed before the callback runs, so that it may start, or
 * cancel, other requests (and free the base's owner) as it likes. */
static void complete(util_http *h, int rv, const char *err)
{
    util_http_result res = {.rv = rv, .err = err};
    util_http_cb cb = h->cb;
    void *user = h->user;
    char *leader = NULL;
    if (rv == 0) {
        res.status = h->status;
        res.body = h->body;
        res.len = h->len;
        res.retry_after = h->retry_after;
        res.leader = leader = h->leader;
        h->body = NULL;
        h->leader = NULL;
    }
    release(h);
    free(h);
    cb(user, &res);
    free(res.body);
    free(leader);
}

static void on_probe(evutil_socket_t fd, short what, void *arg)
{
    util_http *h = arg;
    char err[512];
    int e = ETIMEDOUT;
    socklen_t len = sizeof(e);
    if ((what & EV_WRITE) && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) {
        e = errno;
    }
    complete(h, connect_failure(h, e, err, sizeof(err)), err);
}

/* Asks the socket why the connection could not be made, with one more attempt at the last
 * address tried, of at most PROBE_MS; ends the request when the answer is known. */
static void probe_start(util_http *h)
{
    char err[512];
    int e = 0;
    attempt_drop(h);
    event_del(h->deadline);
    if (h->naddr == 0) {
        goto out;
    }
    const struct sockaddr_storage *ss = &h->addr[h->iaddr];
    h->probe_fd = socket(ss->ss_family, SOCK_STREAM, 0);
    if (h->probe_fd < 0) {
        e = errno;
        goto out;
    }
    if (evutil_make_socket_nonblocking(h->probe_fd) != 0 ||
        evutil_make_socket_closeonexec(h->probe_fd) != 0) {
        e = errno;
        goto out;
    }
    if (connect(h->probe_fd, (const struct sockaddr *)ss, h->addrlen[h->iaddr]) == 0) {
        goto out;
    }
    if (errno != EINPROGRESS) {
        e = errno;
        goto out;
    }
    struct timeval tv = {PROBE_MS / 1000, (PROBE_MS % 1000) * 1000};
    h->probe = event_new(h->base, h->probe_fd, EV_WRITE, on_probe, h);
    if (h->probe && event_add(h->probe, &tv) == 0) {
        return;
    }
    e = ENOMEM;
out:
    complete(h, connect_failure(h, e, err, sizeof(err)), err);
}

/* One connection to address h->iaddr, and the request on it. 0, or -ENOMEM, -EINVAL (the TLS
 * settings) or -EIO with a sentence in |err|. */
static int attempt_start(util_http *h, char *err, size_t errlen)
{
    char ip[INET6_ADDRSTRLEN];
    const struct sockaddr *sa = (const struct sockaddr *)&h->addr[h->iaddr];
    unsigned port = h->u.port;
    int rv = -ENOMEM;
    h->done = h->errored = false;
    if (sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof(ip));
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
    }
    /* evhttp gets the address, never the name: it resolves nothing, and the Host header and
     * the certificate's check still use the name */
    if (h->u.tls) {
        struct bufferevent *bev =
            tls_connection(h->base, &h->u, &h->tls, &h->ssl, &rv, err, errlen);
        if (!bev) {
            return rv;
        }
        h->client_cert = h->tls.certfile != NULL;
        h->conn = evhttp_connection_base_bufferevent_new(h->base, NULL, bev, ip, (ev_uint16_t)port);
        if (!h->conn) {
            bufferevent_free(bev);
            h->ssl = NULL;
        }
    } else {
        h->conn = evhttp_connection_base_new(h->base, NULL, ip, (ev_uint16_t)port);
    }
    struct evhttp_request *req = evhttp_request_new(on_done, h);
    if (!h->conn || !req) {
        if (req) {
            evhttp_request_free(req);
        }
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    struct timeval tv = {(time_t)(h->timeout_ms / 1000),
                         (suseconds_t)(h->timeout_ms % 1000) * 1000};
    evhttp_connection_set_timeout_tv(h->conn, &tv);
    evhttp_connection_set_retries(h->conn, 0);
    evhttp_connection_set_max_body_size(h->conn, MAX_BODY);
    evhttp_request_set_error_cb(req, on_error);
    struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
    evhttp_add_header(hdr, "Host", h->hostport);
    evhttp_add_header(hdr, "Connection", "close");
    evhttp_add_header(hdr, "Accept", "application/json, application/problem+json");
    evhttp_add_header(hdr, "User-Agent", "mrcfab-util-http");
    if (h->auth) {
        evhttp_add_header(hdr, "Authorization", h->auth);
    }
    if (h->reqbody) {
        char clen[32];
        snprintf(clen, sizeof(clen), "%zu", h->reqbodylen);
        evhttp_add_header(hdr, "Content-Type", "application/json");
        evhttp_add_header(hdr, "Content-Length", clen);
        evbuffer_add(evhttp_request_get_output_buffer(req), h->reqbody, h->reqbodylen);
    }
    /* evhttp owns |req| from here, and frees it when it is done or the connection goes */
    if (evhttp_make_request(h->conn, req, h->type, h->target) != 0) {
        snprintf(err, errlen, "%s: the request could not be made", h->url);
        return -EIO;
    }
    if (h->iaddr + 1 < h->naddr) {
        struct timeval ct = {CONNECT_MS / 1000, (CONNECT_MS % 1000) * 1000};
        evtimer_add(h->next_try, &ct);
    }
    return 0;
}

/* The attempt in flight failed to connect: the next address, or 1 when there is none (or it
 * cannot be tried: the request then ends). */
static int attempt_next(util_http *h)
{
    char err[512];
    if (h->iaddr + 1 >= h->naddr) {
        return 1;
    }
    attempt_drop(h);
    h->iaddr++;
    int rv = attempt_start(h, err, sizeof(err));
    if (rv != 0) {
        complete(h, rv, err);
    }
    return 0;
}

/* One of several addresses has not taken the connection within CONNECT_MS: the next one. A
 * connection made is left to the request's own deadline. */
static void on_next_try(evutil_socket_t fd, short what, void *arg)
{
    util_http *h = arg;
    struct sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    (void)fd;
    (void)what;
    if (h->done) {
        return; /* on_finish, already due, tells what happened */
    }
    evutil_socket_t s =
        h->conn ? bufferevent_getfd(evhttp_connection_get_bufferevent(h->conn)) : -1;
    if (s >= 0 && getpeername(s, (struct sockaddr *)&peer, &plen) == 0) {
        return;
    }
    attempt_next(h);
}

static void on_finish(evutil_socket_t fd, short what, void *arg)
{
    util_http *h = arg;
    char err[512];
    (void)fd;
    (void)what;
    if (h->answered) {
        complete(h, 0, "");
        return;
    }
    int rv = failure(h, err, sizeof(err));
    if (rv == 1) {
        if (attempt_next(h) == 1) {
            probe_start(h);
        }
        return;
    }
    complete(h, rv, err);
}

/* The addresses of |ai| into |h|, up to MAX_ADDRS. */
static void addrs_take(util_http *h, const struct evutil_addrinfo *ai)
{
    for (; ai && h->naddr < MAX_ADDRS; ai = ai->ai_next) {
        if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
            ai->ai_addrlen <= sizeof(h->addr[0])) {
            memcpy(&h->addr[h->naddr], ai->ai_addr, ai->ai_addrlen);
            h->addrlen[h->naddr++] = (socklen_t)ai->ai_addrlen;
        }
    }
}

static void on_resolved(int result, struct evutil_addrinfo *ai, void *arg)
{
    util_http *h = arg;
    char err[512];
    if (result == EVUTIL_EAI_CANCEL) {
        return;
    }
    h->dnsreq = NULL;
    if (result == 0) {
        addrs_take(h, ai);
        evutil_freeaddrinfo(ai);
    }
    if (h->naddr == 0) {
        h->dnserr = result ? result : EVUTIL_EAI_NONAME;
    }
    if (h->starting) {
        /* util_http_start goes on from here */
        return;
    }
    if (h->dnserr) {
        event_active(h->finish, 0, 0);
        return;
    }
    int rv = attempt_start(h, err, sizeof(err));
    if (rv != 0) {
        complete(h, rv, err);
    }
}

/* |h|'s host to addresses: an IP address as it is, a name through opts->dns (the answer may
 * come later: on_resolved), else a blocking look-up. */
static void resolve(util_http *h, struct evdns_base *dns)
{
    struct evutil_addrinfo hints = {.ai_family = AF_UNSPEC,
                                    .ai_socktype = SOCK_STREAM,
                                    .ai_protocol = IPPROTO_TCP,
                                    .ai_flags = EVUTIL_AI_ADDRCONFIG};
    struct evutil_addrinfo *ai = NULL;
    char port[8];
    snprintf(port, sizeof(port), "%u", h->u.port);
    struct evutil_addrinfo numeric = hints;
    numeric.ai_flags = EVUTIL_AI_NUMERICHOST;
    if (evutil_getaddrinfo(h->u.host, port, &numeric, &ai) == 0) {
        addrs_take(h, ai);
        evutil_freeaddrinfo(ai);
        return;
    }
    if (dns) {
        h->dnsreq = evdns_getaddrinfo(dns, h->u.host, port, &hints, on_resolved, h);
        return;
    }
    int e = evutil_getaddrinfo(h->u.host, port, &hints, &ai);
    on_resolved(e, e == 0 ? ai : NULL, h);
}

int util_http_start(struct event_base *base, const char *url, const util_http_opts *opts,
                    util_http_cb cb, void *user, util_http **preq, char *err, size_t errlen)
{
    static const util_http_opts none = {0};
    int rv;
    *preq = NULL;
    if (!opts) {
        opts = &none;
    }
    const char *method = opts->method ? opts->method : "GET";
    if (!base || !url || !cb) {
        snprintf(err, errlen, "a request needs an event base, a URL and a callback");
        return -EINVAL;
    }
    util_http *h = util_xcalloc(1, sizeof(*h));
    h->base = base;
    h->cb = cb;
    h->user = user;
    h->probe_fd = -1;
    h->timeout_ms = opts->timeout_ms ? opts->timeout_ms : TIMEOUT_MS;
    h->url = util_xstrdup(url);
    h->start_ms = mono_ms();
    if ((rv = parse_url(h->url, &h->u, err, errlen)) != 0) {
        goto fail;
    }
    rv = -EINVAL;
    if (method_type(method, &h->type) != 0) {
        snprintf(err, errlen, "'%s' is not an HTTP method this client knows", method);
        goto fail;
    }
    if (opts->bearer && strpbrk(opts->bearer, "\r\n")) {
        snprintf(err, errlen, "the token holds a line break");
        goto fail;
    }
    if (opts->body && opts->bodylen > MAX_BODY) {
        snprintf(err, errlen, "%s: the request's body is over %u MiB", url, MAX_BODY >> 20);
        goto fail;
    }
    if (h->u.tls) {
        /* the TLS settings are checked now, and kept for each address's connection */
        h->tls.cafile = h->cafile = opts->cafile ? util_xstrdup(opts->cafile) : NULL;
        h->tls.certfile = h->certfile = opts->certfile ? util_xstrdup(opts->certfile) : NULL;
        h->tls.keyfile = h->keyfile = opts->keyfile ? util_xstrdup(opts->keyfile) : NULL;
        SSL *ssl = NULL;
        struct bufferevent *bev = tls_connection(base, &h->u, &h->tls, &ssl, &rv, err, errlen);
        if (!bev) {
            goto fail;
        }
        bufferevent_free(bev);
    }
    if (strchr(h->u.host, ':')) {
        snprintf(h->hostport, sizeof(h->hostport), "[%s]:%u", h->u.host, h->u.port);
    } else {
        snprintf(h->hostport, sizeof(h->hostport), "%s:%u", h->u.host, h->u.port);
    }
    if (opts->bearer && opts->bearer[0]) {
        size_t n = strlen(opts->bearer) + sizeof("Bearer ");
        h->auth = util_xmalloc(n);
        snprintf(h->auth, n, "Bearer %s", opts->bearer);
    }
    if (opts->body) {
        h->reqbody = util_xmalloc(opts->bodylen + 1);
        memcpy(h->reqbody, opts->body, opts->bodylen);
        h->reqbodylen = opts->bodylen;
    }
    size_t tlen = strlen(h->u.path) + strlen(h->u.query) + 1;
    h->target = util_xmalloc(tlen);
    snprintf(h->target, tlen, "%s%s", h->u.path, h->u.query);
    rv = -ENOMEM;
    h->deadline = evtimer_new(base, on_deadline, h);
    h->finish = event_new(base, -1, 0, on_finish, h);
    h->next_try = evtimer_new(base, on_next_try, h);
    if (!h->deadline || !h->finish || !h->next_try) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    h->starting = true;
    resolve(h, opts->dns);
    h->starting = false;
    if (h->naddr > 0 && (rv = attempt_start(h, err, errlen)) != 0) {
        goto fail;
    }
    if (h->dnserr) {
        /* said from the loop, as any other end */
        event_active(h->finish, 0, 0);
    }
    struct timeval tv = {(time_t)(h->timeout_ms / 1000),
                         (suseconds_t)(h->timeout_ms % 1000) * 1000};
    evtimer_add(h->deadline, &tv);
    *preq = h;
    return 0;
fail:
    release(h);
    free(h);
    return rv;
}

void util_http_cancel(util_http *req)
{
    if (!req) {
        return;
    }
    release(req);
    free(req);
}

/* What util_http_fetch waits for. */
typedef struct http_wait {
    bool done;
    int rv;
    util_http_answer *ans;
    char *err;
    size_t errlen;
} http_wait;

static void on_blocking_done(void *user, util_http_result *res)
{
    http_wait *w = user;
    w->done = true;
    w->rv = res->rv;
    if (res->rv != 0) {
        snprintf(w->err, w->errlen, "%s", res->err);
        return;
    }
    w->ans->status = res->status;
    w->ans->body = res->body;
    w->ans->len = res->len;
    w->ans->leader = res->leader ? util_xstrdup(res->leader) : NULL;
    w->ans->retry_after = res->retry_after;
    res->body = NULL;
}

int util_http_fetch(const char *url, const util_http_opts *opts, util_http_answer *pans, char *err,
                    size_t errlen)
{
    http_wait w = {.ans = pans, .err = err, .errlen = errlen};
    util_http *req = NULL;
    int rv;
    memset(pans, 0, sizeof(*pans));
    struct event_base *base = event_base_new();
    if (!base) {
        snprintf(err, errlen, "cannot make an event base");
        return -ENOMEM;
    }
    if ((rv = util_http_start(base, url, opts, on_blocking_done, &w, &req, err, errlen)) != 0) {
        goto out;
    }
    while (!w.done) {
        if (event_base_loop(base, EVLOOP_ONCE) != 0) {
            /* nothing left to wait for, yet no end: cannot happen while |req| lives */
            util_http_cancel(req);
            snprintf(err, errlen, "%s: the request was lost", url);
            rv = -EIO;
            goto out;
        }
    }
    rv = w.rv;
out:
    event_base_free(base);
    return rv;
}

void util_http_answer_fini(util_http_answer *ans)
{
    free(ans->body);
    free(ans->leader);
    memset(ans, 0, sizeof(*ans));
}

int util_http_request(const char *url, const util_http_opts *opts, int *pstatus, char **pbody,
                      size_t *plen, char *err, size_t errlen)
{
    util_http_answer ans;
    int rv = util_http_fetch(url, opts, &ans, err, errlen);
    *pstatus = ans.status;
    *pbody = ans.body;
    if (plen) {
        *plen = ans.len;
    }
    free(ans.leader);
    return rv;
}

/* Whether the problem document |body| is titled "no leader". */
static bool no_leader(const char *body, size_t len)
{
    char why[64];
    json_object *doc = body && len ? util_json_parse("answer", body, len, why, sizeof(why)) : NULL;
    json_object *t = NULL;
    bool yes = doc && json_object_is_type(doc, json_type_object) &&
               json_object_object_get_ex(doc, "title", &t) &&
               json_object_is_type(t, json_type_string) &&
               strcasecmp(json_object_get_string(t), "no leader") == 0;
    json_object_put(doc);
    return yes;
}

util_http_route util_http_route_of(int rv, int status, const char *body, size_t len,
                                   const char *leader, unsigned hops)
{
    if (rv == -EINVAL || rv == -ENOMEM || rv == -EPROTO || rv == -EMSGSIZE) {
        /* a setting or this host at fault: another replica would fail the same */
        return UTIL_HTTP_GIVE_UP;
    }
    if (rv != 0) {
        return UTIL_HTTP_NEXT;
    }
    if (status == 307 || status == 308) {
        if (!leader || !leader[0]) {
            return UTIL_HTTP_ANSWERED; /* a redirect of someone else's: the caller's to judge */
        }
        return hops < UTIL_HTTP_MAX_HOPS ? UTIL_HTTP_FOLLOW : UTIL_HTTP_NEXT;
    }
    if (status == 503 && no_leader(body, len)) {
        return UTIL_HTTP_NEXT;
    }
    return UTIL_HTTP_ANSWERED;
}
