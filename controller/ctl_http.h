/* SPDX-License-Identifier: MIT */
/* The controller's HTTP server (util_httpd): what a request may bring, the API's handlers,
 * /metrics, the push channel agents hold open, and the dashboard's files. */
#ifndef CTL_HTTP_H
#define CTL_HTTP_H

#include <stddef.h>

#include "ctl_api.h"
#include "util.h"

typedef struct ctl_http ctl_http;

typedef struct ctl_http_cfg {
    const char *listen; /* ADDR:PORT, [ADDR6]:PORT or :PORT */
    unsigned threads;   /* the pool that serves requests */
    size_t max_body;
    unsigned max_wait_s;     /* longest a push-channel request is held */
    unsigned max_connections;
    unsigned per_client;         /* connections per client address */
    unsigned request_timeout_ms; /* from a request's first byte to its answer */
    unsigned rate, burst;        /* requests per second and token (UINT32_MAX: no limit) */
    unsigned max_waiting;        /* push-channel requests waiting per token */
    const char *cert_pem, *key_pem; /* HTTPS when both are given (the PEM text) */
    const char *client_ca_pem;      /* with HTTPS: clients need a certificate it signed */
    const char *web_dir; /* the dashboard's files, served at / and /ui/; NULL or "": none */
    /* a follower's fetches of the leader-only reads from the leader (ctl_proxy.h): the CA of
     * the leader's certificate (NULL: the system's), and the certificate and key offered to a
     * leader that asks for one (NULL: none) */
    const char *peer_cafile, *peer_certfile, *peer_keyfile;
} ctl_http_cfg;

/* Starts serving |ctx| (its |changed| hook is set to wake the push channel). Returns 0 or a
 * negative errno with a sentence in |err|. */
int ctl_http_start(ctl_ctx *ctx, const util_auth *auth, const ctl_http_cfg *cfg, ctl_http **ph,
                   char *err, size_t errlen);
/* The port it listens on (useful with port 0). */
unsigned ctl_http_port(const ctl_http *h);
void ctl_http_stop(ctl_http *h);

#endif
