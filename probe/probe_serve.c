/* SPDX-License-Identifier: MIT */
/* The localizer's endpoint: which request may bring a body is decided on its headers (a
 * report needs its node's token when --report-tokens is given), then the report goes to the
 * localizer on its own loop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe_serve.h"
#include "util_httpd.h"
#include "util_peers.h"

/* A report holds one node's windows and deficits; never more than this. */
#define REPORT_MAX_BODY (4u << 20)

struct probe_serve {
    util_httpd *srv;
    probe_localize *loc;
    const util_auth *tokens;
    probe_elect *elect;
};

static bool open_reports(const probe_serve *s)
{
    return !s->tokens || !s->tokens->n;
}

static int admit(void *user, util_httpd_req *req, size_t *pmax_body, char *detail, size_t detaillen)
{
    probe_serve *s = user;
    const char *path = util_httpd_req_path(req), *method = util_httpd_req_method(req);
    bool get = strcmp(method, "GET") == 0;
    *pmax_body = REPORT_MAX_BODY;
    if (strcmp(path, "/api/v1/status") == 0 || strcmp(path, "/metrics") == 0) {
        if (!get) {
            snprintf(detail, detaillen, "%s takes GET", path);
            return 405;
        }
        *pmax_body = 0;
        return 0;
    }
    if (strcmp(path, "/api/v1/reports") != 0) {
        snprintf(detail, detaillen,
                 "this localizer serves POST /api/v1/reports, GET /api/v1/status and GET /metrics");
        return 404;
    }
    if (strcmp(method, "POST") != 0) {
        snprintf(detail, detaillen, "/api/v1/reports takes POST");
        return 405;
    }
    const util_token *t = util_httpd_req_token(req);
    if (!open_reports(s) && !t) {
        probe_localize_refused(s->loc, PROBE_REFUSED_UNAUTHORIZED);
        snprintf(detail, detaillen,
                 "a report needs its node's bearer token (Authorization: Bearer TOKEN), one of "
                 "--report-tokens");
        return 401;
    }
    if (!open_reports(s) && t->role != UTIL_ROLE_PROBER) {
        probe_localize_refused(s->loc, PROBE_REFUSED_FORBIDDEN);
        snprintf(detail, detaillen,
                 "the %s token of %s may not report: nodes report with prober tokens",
                 util_role_name(t->role), t->name);
        return 403;
    }
    return 0;
}

/* Every 413 is a report over its bound, refused before or while its body came. */
static void done(void *user, int status, uint64_t us)
{
    (void)us;
    probe_serve *s = user;
    if (status == 413) {
        probe_localize_refused(s->loc, PROBE_REFUSED_TOO_LARGE);
    }
}

static void reply_json(util_httpd_req *req, int status, json_object *j)
{
    size_t len;
    const char *t = json_object_to_json_string_length(j, JSON_C_TO_STRING_PLAIN, &len);
    char *body = util_xmalloc(len + 2);
    memcpy(body, t, len);
    body[len] = '\n';
    body[len + 1] = '\0';
    json_object_put(j);
    util_httpd_respond(req, status, "application/json", body, len + 1, NULL);
}

/* A follower's answer to a report: the leader's address, in the headers for any client and in
 * the problem document's "leader" for one that reads only bodies. */
static void not_leader(probe_serve *s, util_httpd_req *req)
{
    probe_elect_state st = {0};
    if (s->elect) {
        probe_elect_get(s->elect, &st);
    }
    probe_localize_refused(s->loc, PROBE_REFUSED_NOT_LEADER);
    json_object *p = json_object_new_object();
    if (!st.leader[0] || st.leading) {
        /* none known, or leading this instant but not yet told: the node tries again */
        json_object_object_add(p, "title", json_object_new_string("Service Unavailable"));
        json_object_object_add(p, "status", json_object_new_int(503));
        json_object_object_add(
            p, "detail",
            json_object_new_string("this localizer follows and knows no leader of its "
                                   "shard yet: try again in a second"));
        size_t len;
        const char *t = json_object_to_json_string_length(p, JSON_C_TO_STRING_PLAIN, &len);
        char *body = util_xstrdup(t);
        json_object_put(p);
        const char *const hdr[] = {"Retry-After", "1", NULL};
        util_httpd_respond(req, 503, "application/problem+json", body, len, hdr);
        return;
    }
    char loc[600], detail[700];
    snprintf(loc, sizeof(loc), "%s/api/v1/reports", st.leader);
    snprintf(detail, sizeof(detail), "this localizer follows: its shard's leader is %s (%s)",
             st.name, st.leader);
    json_object_object_add(p, "title", json_object_new_string("Temporary Redirect"));
    json_object_object_add(p, "status", json_object_new_int(307));
    json_object_object_add(p, "detail", json_object_new_string(detail));
    json_object_object_add(p, "leader", json_object_new_string(st.leader));
    size_t len;
    const char *t = json_object_to_json_string_length(p, JSON_C_TO_STRING_PLAIN, &len);
    char *body = util_xstrdup(t);
    json_object_put(p);
    const char *const hdr[] = {"Location", loc, UTIL_PEERS_LEADER_HEADER, st.leader, NULL};
    util_httpd_respond(req, 307, "application/problem+json", body, len, hdr);
}

static void handle(void *user, util_httpd_req *req)
{
    probe_serve *s = user;
    const char *path = util_httpd_req_path(req);
    char err[512];
    if (strcmp(path, "/api/v1/status") == 0) {
        reply_json(req, 200, probe_localize_status(s->loc));
        return;
    }
    if (strcmp(path, "/metrics") == 0) {
        util_buf m = {0};
        probe_localize_metrics(s->loc, &m);
        util_httpd_metrics(s->srv, &m);
        util_httpd_respond(req, 200, "text/plain; version=0.0.4; charset=utf-8", m.s, m.len, NULL);
        return;
    }
    if (!probe_localize_leading(s->loc)) {
        not_leader(s, req);
        return;
    }
    size_t len;
    const char *body = util_httpd_req_body(req, &len);
    const util_token *t = open_reports(s) ? NULL : util_httpd_req_token(req);
    json_object *r = util_json_parse("report", body ? body : "", len, err, sizeof(err));
    if (!r) {
        probe_localize_refused(s->loc, PROBE_REFUSED_INVALID);
    }
    int rv = r ? probe_localize_report(s->loc, r, t ? t->name : NULL, err, sizeof(err)) : -EINVAL;
    json_object_put(r);
    if (rv != 0) {
        /* 421: the request is for another shard, which a client fixes by sending it there */
        util_httpd_problem(req,
                           rv == -ESTALE  ? 409
                           : rv == -EPERM ? 403
                           : rv == -EXDEV ? 421
                                          : 400,
                           "%s", err);
        return;
    }
    reply_json(req, 202, json_object_new_object());
}

int probe_serve_start(const probe_serve_cfg *cfg, probe_serve **ps, char *err, size_t errlen)
{
    probe_serve *s = util_xcalloc(1, sizeof(*s));
    s->loc = cfg->loc;
    s->tokens = cfg->tokens;
    s->elect = cfg->elect;
    util_httpd_cfg hc = {.name = "localize",
                         .listen = cfg->listen,
                         .base = cfg->base,
                         .max_body = REPORT_MAX_BODY,
                         .max_connections = cfg->max_connections,
                         .per_client = cfg->per_client,
                         .request_timeout_ms = cfg->request_timeout_ms,
                         .rate = cfg->rate,
                         .burst = cfg->burst,
                         .cert_pem = cfg->cert_pem,
                         .key_pem = cfg->key_pem,
                         .client_ca_pem = cfg->client_ca_pem,
                         .auth = cfg->tokens,
                         .admit = admit,
                         .handle = handle,
                         .done = done,
                         .user = s};
    int rv = util_httpd_start(&hc, &s->srv, err, errlen);
    if (rv != 0) {
        free(s);
        return rv;
    }
    *ps = s;
    return 0;
}

void probe_serve_set_elect(probe_serve *s, probe_elect *elect)
{
    s->elect = elect;
}

unsigned probe_serve_port(const probe_serve *s)
{
    return util_httpd_port(s->srv);
}

void probe_serve_free(probe_serve *s)
{
    if (!s) {
        return;
    }
    util_httpd_free(s->srv);
    free(s);
}
