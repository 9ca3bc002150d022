/* SPDX-License-Identifier: MIT */
/* A small blocking HTTP/1.1 client on libevent's evhttp, over TLS (OpenSSL) for https://: one
 * request per call, on its own event base, for tools that talk to the controller. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "util.h"

#define TIMEOUT_S 10
#define MAX_BODY (64u << 20)

/* The parts of an http:// or https:// URL: host (no brackets), port, and the path with its
 * query (the query alone, with no path, is that of "/"). */
typedef struct http_url {
    char host[256];
    unsigned port;
    bool tls; /* https:// */
    const char *path, *query;
} http_url;

typedef struct http_call {
    struct event_base *base;
    bool done;     /* the request's callback ran */
    bool answered; /* with an answer */
    bool errored;  /* the error callback ran, with |error| */
    bool timedout; /* the whole request's deadline passed */
    enum evhttp_request_error error;
    SSL *ssl; /* over TLS: the connection's, owned by its bufferevent */
    int status;
    char *body;
    size_t len;
} http_call;

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
    http_call *h = arg;
    h->errored = true;
    h->error = error;
}

/* Called with NULL after an error, and with a request whose code is 0 when the connection
 * could not be made (evhttp says no more). */
static void on_done(struct evhttp_request *req, void *arg)
{
    http_call *h = arg;
    h->done = true;
    event_base_loopbreak(h->base);
    if (!req || evhttp_request_get_response_code(req) == 0) {
        return;
    }
    h->answered = true;
    h->status = evhttp_request_get_response_code(req);
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    h->body = util_xmalloc(n + 1);
    h->len = n > 0 && evbuffer_remove(in, h->body, n) == (int)n ? n : 0;
    h->body[h->len] = '\0';
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    http_call *h = arg;
    (void)fd;
    (void)what;
    h->timedout = true;
    event_base_loopbreak(h->base);
}

/* Why a connection to |u| cannot be made: evhttp does not tell, so one more attempt, of at
 * most a second, asks the socket. 0 if it connects now. */
static int connect_errno(const http_url *u)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
    char port[8];
    int e = EHOSTUNREACH;
    snprintf(port, sizeof(port), "%u", u->port);
    if (getaddrinfo(u->host, port, &hints, &ai) != 0) {
        return e;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
        e = errno;
        goto out;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        e = 0;
    } else if (errno != EINPROGRESS) {
        e = errno;
    } else {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        socklen_t len = sizeof(e);
        if (poll(&p, 1, 1000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) {
            e = ETIMEDOUT;
        }
    }
    close(fd);
out:
    freeaddrinfo(ai);
    return e;
}

/* The reason of OpenSSL error |e| (0: none), else |none|; empties the thread's queue. */
static const char *ssl_reason(unsigned long e, const char *none)
{
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    ERR_clear_error();
    return why ? why : none;
}

/* A TLS client connection for |u| on |base|: the peer's certificate must chain to a CA of
 * |cafile| (NULL: the system's) and name u->host (a DNS name, or the IP address it is).
 * Returns the bufferevent, with the connection's SSL in |*pssl| (the bufferevent owns it), or
 * NULL with -EINVAL (a CA file that cannot be used) or -ENOMEM in |*prv| and a sentence in
 * |err|. */
static struct bufferevent *tls_connection(struct event_base *base, const http_url *u,
                                          const char *cafile, SSL **pssl, int *prv, char *err,
                                          size_t errlen)
{
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
static int tls_failure(const http_call *h, struct evhttp_connection *conn, const http_url *u,
                       const char *url, char *err, size_t errlen)
{
    if (!h->ssl) {
        return 0;
    }
    long verify = SSL_get_verify_result(h->ssl);
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        snprintf(err, errlen, "%s: the server's certificate is not for %s (%s)", url, u->host,
                 X509_verify_cert_error_string(verify));
        return -EPROTO;
    }
    if (verify != X509_V_OK) {
        snprintf(err, errlen,
                 "%s: the server's certificate is not trusted: %s (is its CA, or the "
                 "certificate itself, in the CA file?)",
                 url, X509_verify_cert_error_string(verify));
        return -EPROTO;
    }
    unsigned long e = bufferevent_get_openssl_error(evhttp_connection_get_bufferevent(conn));
    const char *why = ssl_reason(e ? e : ERR_peek_last_error(), NULL);
    if (why) {
        snprintf(err, errlen, "%s: the TLS handshake failed: %s (is the server https?)", url, why);
        return -EPROTO;
    }
    return 0;
}

/* The sentence for a request that got no answer; returns the negative errno. */
static int failure(const http_call *h, struct evhttp_connection *conn, const http_url *u,
                   const char *url, char *err, size_t errlen)
{
    int dnserr = bufferevent_socket_get_dns_error(evhttp_connection_get_bufferevent(conn)), rv;
    if (h->timedout || (h->errored && h->error == EVREQ_HTTP_TIMEOUT)) {
        snprintf(err, errlen, "%s: no answer within %d s (timed out)", url, TIMEOUT_S);
        return -ETIMEDOUT;
    }
    if (dnserr) {
        snprintf(err, errlen, "%s: cannot resolve '%s': %s", url, u->host,
                 evutil_gai_strerror(dnserr));
        return -EHOSTUNREACH;
    }
    if ((rv = tls_failure(h, conn, u, url, err, errlen)) != 0) {
        return rv;
    }
    if (h->errored && h->error == EVREQ_HTTP_DATA_TOO_LONG) {
        snprintf(err, errlen, "%s: the answer is over %u MiB", url, MAX_BODY >> 20);
        return -EMSGSIZE;
    }
    if (h->errored && h->error == EVREQ_HTTP_INVALID_HEADER) {
        snprintf(err, errlen, "%s: the answer is not HTTP", url);
        return -EPROTO;
    }
    if (h->done && !h->errored) {
        /* the connection was never made */
        int e = connect_errno(u);
        if (e == ETIMEDOUT) {
            snprintf(err, errlen, "%s: cannot connect to port %u of %s (timed out)", url, u->port,
                     u->host);
            return -ETIMEDOUT;
        }
        if (e != 0) {
            snprintf(err, errlen, "%s: cannot connect to port %u of %s (%s)", url, u->port, u->host,
                     strerror(e));
            return -e;
        }
        snprintf(err, errlen, "%s: cannot connect to port %u of %s", url, u->port, u->host);
        return -ECONNREFUSED;
    }
    /* a TLS server drops a plain request */
    snprintf(err, errlen, "%s: the connection closed without an answer%s", url,
             u->tls ? "" : " (if the server speaks https, use an https:// URL)");
    return -ECONNRESET;
}

int util_http_request(const char *url, const char *method, const char *bearer, const char *body,
                      const char *cafile, int *pstatus, char **pbody, size_t *plen, char *err,
                      size_t errlen)
{
    http_url u;
    enum evhttp_cmd_type type;
    http_call h = {0};
    struct evhttp_connection *conn = NULL;
    struct event *deadline = NULL;
    char hostport[272];
    int rv = parse_url(url, &u, err, errlen);
    *pstatus = 0;
    *pbody = NULL;
    if (plen) {
        *plen = 0;
    }
    if (rv != 0) {
        return rv;
    }
    if (method_type(method, &type) != 0) {
        snprintf(err, errlen, "'%s' is not an HTTP method this client knows", method);
        return -EINVAL;
    }
    if (bearer && strpbrk(bearer, "\r\n")) {
        snprintf(err, errlen, "the token holds a line break");
        return -EINVAL;
    }
    h.base = event_base_new();
    if (!h.base) {
        snprintf(err, errlen, "cannot make an event base");
        return -ENOMEM;
    }
    rv = -ENOMEM;
    if (u.tls) {
        struct bufferevent *bev = tls_connection(h.base, &u, cafile, &h.ssl, &rv, err, errlen);
        if (!bev) {
            goto out;
        }
        conn =
            evhttp_connection_base_bufferevent_new(h.base, NULL, bev, u.host, (ev_uint16_t)u.port);
        if (!conn) {
            bufferevent_free(bev);
        }
        rv = -ENOMEM;
    } else {
        conn = evhttp_connection_base_new(h.base, NULL, u.host, (ev_uint16_t)u.port);
    }
    deadline = evtimer_new(h.base, on_deadline, &h);
    struct evhttp_request *req = evhttp_request_new(on_done, &h);
    if (!conn || !deadline || !req) {
        if (req) {
            evhttp_request_free(req);
        }
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    evhttp_connection_set_timeout(conn, TIMEOUT_S);
    evhttp_connection_set_retries(conn, 0);
    evhttp_connection_set_max_body_size(conn, MAX_BODY);
    evhttp_request_set_error_cb(req, on_error);
    struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
    if (strchr(u.host, ':')) {
        snprintf(hostport, sizeof(hostport), "[%s]:%u", u.host, u.port);
    } else {
        snprintf(hostport, sizeof(hostport), "%s:%u", u.host, u.port);
    }
    evhttp_add_header(hdr, "Host", hostport);
    evhttp_add_header(hdr, "Connection", "close");
    evhttp_add_header(hdr, "Accept", "application/json, application/problem+json");
    evhttp_add_header(hdr, "User-Agent", "mrcfab-util-http");
    if (bearer && bearer[0]) {
        size_t n = strlen(bearer) + sizeof("Bearer ");
        char *auth = util_xmalloc(n);
        snprintf(auth, n, "Bearer %s", bearer);
        evhttp_add_header(hdr, "Authorization", auth);
        free(auth);
    }
    if (body) {
        char clen[32];
        snprintf(clen, sizeof(clen), "%zu", strlen(body));
        evhttp_add_header(hdr, "Content-Type", "application/json");
        evhttp_add_header(hdr, "Content-Length", clen);
        evbuffer_add(evhttp_request_get_output_buffer(req), body, strlen(body));
    }
    /* evhttp owns |req| from here, and frees it when it is done or the connection goes */
    size_t tlen = strlen(u.path) + strlen(u.query) + 1;
    char *target = util_xmalloc(tlen);
    snprintf(target, tlen, "%s%s", u.path, u.query);
    rv = evhttp_make_request(conn, req, type, target);
    free(target);
    if (rv != 0) {
        snprintf(err, errlen, "%s: the request could not be made", url);
        rv = -EIO;
        goto out;
    }
    struct timeval tv = {TIMEOUT_S, 0};
    evtimer_add(deadline, &tv);
    /* the request may be done already (a host that does not resolve fails at once), and a
     * loopbreak before the loop runs is forgotten: loop only while it is not */
    while (!h.done && !h.timedout) {
        if (event_base_loop(h.base, EVLOOP_ONCE) != 0) {
            break;
        }
    }
    if (!h.answered || h.timedout) {
        rv = failure(&h, conn, &u, url, err, errlen);
        free(h.body);
        goto out;
    }
    *pstatus = h.status;
    *pbody = h.body;
    if (plen) {
        *plen = h.len;
    }
    rv = 0;
out:
    if (deadline) {
        event_free(deadline);
    }
    if (conn) {
        evhttp_connection_free(conn);
    }
    event_base_free(h.base);
    return rv;
}
