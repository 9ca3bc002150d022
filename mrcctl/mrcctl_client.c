/* SPDX-License-Identifier: MIT */
/* mrcctl as the controller's client: its URL, the bearer token, one API call with the
 * controller's faults turned into exit codes, and readers of the answers' members. A problem
 * document from the controller is shown as its sentence and the status; 4xx is bad input
 * (exit 2), 5xx and a controller out of reach are the system failing (exit 1). */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"
#include "util_peers.h"

/* The bearer token into |*ptoken| (a heap string): the first word of --token-file, else
 * $MRCFAB_TOKEN, else the first word of $MRCFAB_TOKEN_FILE. Lines starting with '#' are
 * skipped, so a line of the controller's tokens file will do. Returns the exit code. */
static int get_token(mrcctl *c, char **ptoken)
{
    const char *file = c->token_file, *env = getenv("MRCFAB_TOKEN");
    const char *how = "--token-file";
    if (!file && env && env[0]) {
        *ptoken = util_xstrdup(env);
        return MRCCTL_OK;
    }
    if (!file) {
        file = getenv("MRCFAB_TOKEN_FILE");
        how = "$MRCFAB_TOKEN_FILE";
    }
    if (!file || !file[0]) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "no token: give --token-file FILE, or set $MRCFAB_TOKEN or "
                           "$MRCFAB_TOKEN_FILE");
    }
    char *data, *cursor, *line;
    size_t len;
    int rv = util_read_file(file, &data, &len);
    if (rv != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "cannot read the token file %s (%s): %s", file,
                           how, strerror(-rv));
    }
    *ptoken = NULL;
    cursor = data;
    while (!*ptoken && (line = util_line_next(&cursor)) != NULL) {
        while (isspace((unsigned char)*line)) {
            line++;
        }
        size_t n = 0;
        while (line[n] && !isspace((unsigned char)line[n])) {
            n++;
        }
        if (n > 0 && line[0] != '#') {
            line[n] = '\0';
            *ptoken = util_xstrdup(line);
        }
    }
    free(data);
    if (!*ptoken) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "the token file %s (%s) holds no token", file,
                           how);
    }
    return MRCCTL_OK;
}

/* The controllers (--controller, else $MRCFAB_CONTROLLER, else the default: a comma-separated
 * list of base URLs, each without its trailing slashes) into |p|. Returns the exit code. */
static int controllers(mrcctl *c, util_peers *p)
{
    const char *url = c->controller, *env = getenv("MRCFAB_CONTROLLER");
    const char *how = "--controller";
    char err[512];
    if (!url || !url[0]) {
        how = env && env[0] ? "$MRCFAB_CONTROLLER" : "the default";
        url = env && env[0] ? env : MRCCTL_CONTROLLER;
    }
    int rv = util_peers_parse(p, url, err, sizeof(err));
    if (rv != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s: %s", how, err);
    }
    return MRCCTL_OK;
}

/* One call to the leader of |p|'s controllers: the next controller when one is out of reach
 * or has no leader, a follower's redirect followed to the leader it names (the same method
 * and body; util_peers_follow keeps it on the list's scheme). Returns util_http_fetch's code,
 * with the answer in |*pans| and the controller that gave it current in |p|, or with the
 * sentence of the last fault in |err|: -EAGAIN when every controller said it has no leader,
 * -ELOOP for redirects past the limit, -EPERM for a redirect that is not followed. */
static int leader_fetch(util_peers *p, const char *path, const util_http_opts *ho,
                        util_http_answer *pans, char *err, size_t errlen)
{
    char url[2048], why[512];
    unsigned hops = 0, noleader = 0, tries = 0;
    int rv;
    for (;;) {
        snprintf(url, sizeof(url), "%s%s", util_peers_current(p), path);
        rv = util_http_fetch(url, ho, pans, why, sizeof(why));
        switch (util_http_route_of(rv, pans->status, pans->body, pans->len, pans->leader, hops)) {
        case UTIL_HTTP_ANSWERED:
            util_peers_ok(p);
            return 0;
        case UTIL_HTTP_GIVE_UP:
            snprintf(err, errlen, "%s", why);
            return rv;
        case UTIL_HTTP_FOLLOW:
            if (util_peers_follow(p, pans->leader) != 0) {
                snprintf(err, errlen,
                         "%s redirected mrcctl to '%.200s', which is not a controller URL of the "
                         "same scheme (a redirect keeps the list's scheme)",
                         util_peers_current(p), pans->leader);
                util_http_answer_fini(pans);
                return -EPERM;
            }
            util_http_answer_fini(pans);
            hops++;
            continue;
        case UTIL_HTTP_NEXT:
            break;
        }
        if (rv == 0 && pans->status / 100 == 3) {
            snprintf(err, errlen,
                     "the controllers redirected mrcctl %u times without reaching a leader "
                     "(last: %s); are they electing one? try again in a few seconds",
                     hops, util_peers_current(p));
            util_http_answer_fini(pans);
            return -ELOOP;
        }
        if (rv == 0) {
            noleader++;
            snprintf(why, sizeof(why), "%s has no leader", util_peers_current(p));
            util_http_answer_fini(pans);
        }
        snprintf(err, errlen, "%s", why);
        tries++;
        if (!util_peers_failed(p)) {
            break;
        }
        hops = 0;
    }
    if (noleader == tries) {
        snprintf(err, errlen,
                 "no controller has a leader now (%u asked): an election is under way, or etcd "
                 "has lost its quorum; try again in a few seconds",
                 tries);
        return -EAGAIN;
    }
    return rv;
}

/* The CA certificates an https controller's certificate must chain to: --cacert, else
 * $MRCFAB_CACERT, else NULL (the system's). */
static const char *ca_file(const mrcctl *c)
{
    const char *env = getenv("MRCFAB_CACERT");
    if (c->cacert && c->cacert[0]) {
        return c->cacert;
    }
    return env && env[0] ? env : NULL;
}

/* The client certificate or key: the option's |value|, else $|var|, else NULL. */
static const char *client_file(const char *value, const char *var)
{
    const char *env = getenv(var);
    if (value && value[0]) {
        return value;
    }
    return env && env[0] ? env : NULL;
}

/* The sentence of a problem document (RFC 9457), or of whatever else a fault came with. */
static void problem_text(const char *body, char *dest, size_t destlen)
{
    json_object *doc = body && body[0] ? json_tokener_parse(body) : NULL, *v;
    if (doc && json_object_is_type(doc, json_type_object) &&
        ((json_object_object_get_ex(doc, "detail", &v) &&
          json_object_is_type(v, json_type_string)) ||
         (json_object_object_get_ex(doc, "title", &v) &&
          json_object_is_type(v, json_type_string)))) {
        snprintf(dest, destlen, "%s", json_object_get_string(v));
    } else {
        snprintf(dest, destlen, "the controller refused the request with no problem document");
    }
    json_object_put(doc);
}

/* Replaces every |from| in the NUL-terminated |s| (of |size| bytes) with |to|, as far as it
 * fits. */
static void replace_all(char *s, size_t size, const char *from, const char *to)
{
    size_t flen = strlen(from), tlen = strlen(to);
    for (char *p = strstr(s, from); p; p = strstr(p + tlen, from)) {
        size_t rest = strlen(p + flen);
        if ((size_t)(p - s) + tlen + rest + 1 > size) {
            return;
        }
        memmove(p + tlen, p + flen, rest + 1);
        memcpy(p, to, tlen);
    }
}

/* The API's words in the controller's sentences (its query arguments, body members and
 * headers) and what mrcctl's user typed for them. */
static const struct {
    const char *api, *cli;
} words[] = {
    {"force=true", "--force"},
    {"query argument 'state'", "--state"},
    {"query argument 'plane'", "--plane"},
    {"query argument 'switch'", "--switch"},
    {"query argument 'offset'", "--offset"},
    {"query argument 'limit'", "--limit"},
    {"scope must be 'both'", "--scope must be both (or left out)"},
    {"'scope' must be", "--scope must be"},
    {"'reason' must", "--reason must"},
    {"'reason' is required", "--reason is required"},
    {"window times must be", "--from and --to must be"},
    {"a valid bearer token is needed (Authorization: Bearer TOKEN)",
     "the controller takes no such token: give a valid one with --token-file FILE (or "
     "$MRCFAB_TOKEN, $MRCFAB_TOKEN_FILE)"},
};

/* The controller's sentence |text| in the words of mrcctl's command line: a refused role names
 * the command, not the API's method and path, and says what to do. */
static void translate(const mrcctl *c, const char *method, const char *path, char *text,
                      size_t textlen)
{
    char api[512], cli[160];
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        replace_all(text, textlen, words[i].api, words[i].cli);
    }
    snprintf(api, sizeof(api), "may not %s %.*s", method, (int)strcspn(path, "?"), path);
    /* an operator's token is what --force takes beyond the command's own role */
    snprintf(cli, sizeof(cli), "may not run mrcctl %s%s", c->cmd ? c->cmd : "this",
             strstr(path, "force=true") ? " --force" : "");
    if (strstr(text, api)) {
        replace_all(text, textlen, api, cli);
        size_t n = strlen(text);
        snprintf(text + n, textlen - n, "; give a token of such a role with --token-file FILE");
    }
}

/* |err| of util_http_request, which names the URL, without the URL's query (the API's words)
 * and with what to do next where there is something to do. */
static void reach_text(const char *url, const char *err, char *dest, size_t destlen)
{
    size_t qlen = strcspn(url, "?");
    const char *hint = "";
    if (url[qlen] && strncmp(err, url, strlen(url)) == 0) {
        snprintf(dest, destlen, "%.*s%s", (int)qlen, url, err + strlen(url));
    } else {
        snprintf(dest, destlen, "%s", err);
    }
    if (strstr(err, "not trusted")) {
        hint = "; give the CA certificate it chains to with --cacert FILE";
    } else if (strstr(err, "refused") || strstr(err, "resolve")) {
        hint = "; is it running there? --controller URL names another";
    }
    size_t n = strlen(dest);
    snprintf(dest + n, destlen - n, "%s", hint);
}

int mrcctl_api_call(mrcctl *c, const char *method, const char *path, json_object *body, int want,
                    int quiet, int *pstatus, json_object **pdoc)
{
    char base[1024], url[2048], err[512], text[1024];
    char *token = NULL, *answer = NULL;
    int status = 0, rv;
    util_peers peers;
    util_http_answer ans;
    if (pdoc) {
        *pdoc = NULL;
    }
    if ((rv = controllers(c, &peers)) != 0) {
        return rv;
    }
    if ((rv = get_token(c, &token)) != 0) {
        util_peers_free(&peers);
        return rv;
    }
    /* a controller that goes away mid-request is an error to report, not a signal to die of */
    signal(SIGPIPE, SIG_IGN);
    const char *text_body =
        body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
    util_http_opts ho = {.method = method,
                         .bearer = token,
                         .body = text_body,
                         .bodylen = text_body ? strlen(text_body) : 0,
                         .cafile = ca_file(c),
                         .certfile = client_file(c->client_cert, "MRCFAB_CLIENT_CERT"),
                         .keyfile = client_file(c->client_key, "MRCFAB_CLIENT_KEY")};
    rv = leader_fetch(&peers, path, &ho, &ans, err, sizeof(err));
    free(token);
    /* the controller that answered, or the last one asked */
    snprintf(base, sizeof(base), "%s", util_peers_current(&peers));
    snprintf(url, sizeof(url), "%s%s", base, path);
    bool several = peers.n > 1;
    util_peers_free(&peers);
    status = ans.status;
    answer = ans.body;
    free(ans.leader);
    if (pstatus) {
        *pstatus = status;
    }
    if (rv == -EAGAIN || rv == -ELOOP || rv == -EPERM) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "%s", err);
    }
    if (rv != 0 && rv != -EINVAL && several) {
        reach_text(url, err, text, sizeof(text));
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot reach any controller (the last: %s)",
                           text);
    }
    if (rv == -EINVAL) {
        reach_text(url, err, text, sizeof(text));
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s", text);
    }
    if (rv != 0) {
        reach_text(url, err, text, sizeof(text));
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot reach the controller: %s", text);
    }
    /* another success than the one asked for is one too: the caller tells them apart by
     * |*pstatus| (a POST answered 200 with what was there already, not 201) */
    if (status == want || (status / 100 == 2 && want / 100 == 2)) {
        json_object *doc = NULL;
        rv = MRCCTL_OK;
        if (answer[0]) {
            doc = json_tokener_parse(answer);
            if (!doc) {
                rv = mrcctl_fail(c, MRCCTL_FAIL, NULL,
                                 "the controller at %s answered mrcctl %s with something that is "
                                 "not JSON",
                                 base, c->cmd ? c->cmd : "");
            }
        }
        if (pdoc) {
            *pdoc = doc;
        } else {
            json_object_put(doc);
        }
        free(answer);
        return rv;
    }
    if (status == quiet) {
        free(answer);
        return MRCCTL_OK;
    }
    if (status >= 400 && status <= 599) {
        problem_text(answer, text, sizeof(text));
        translate(c, method, path, text, sizeof(text));
        rv = mrcctl_fail(c, status < 500 ? MRCCTL_BADINPUT : MRCCTL_FAIL, NULL, "%s (HTTP %d)",
                         text, status);
    } else {
        rv = mrcctl_fail(c, MRCCTL_FAIL, NULL,
                         "the controller at %s gave mrcctl %s an unexpected answer (HTTP %d)", base,
                         c->cmd ? c->cmd : "", status);
    }
    free(answer);
    return rv;
}

int mrcctl_query_add(char *dest, size_t destlen, const char *key, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n0 = strlen(dest), n = n0;
    if (!value) {
        return 0;
    }
    int k = snprintf(dest + n, destlen - n, "%c%s=", strchr(dest, '?') ? '&' : '?', key);
    if (k < 0 || (size_t)k >= destlen - n) {
        dest[n0] = '\0';
        return -1;
    }
    n += (size_t)k;
    for (const unsigned char *v = (const unsigned char *)value; *v; v++) {
        if (n + 3 >= destlen) {
            dest[n0] = '\0';
            return -1;
        }
        if (isalnum(*v) || strchr("-._~:", *v)) {
            dest[n++] = (char)*v;
        } else {
            dest[n++] = '%';
            dest[n++] = hex[*v >> 4];
            dest[n++] = hex[*v & 15];
        }
    }
    dest[n] = '\0';
    return 0;
}

const char *mrcctl_member(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !v) {
        return "";
    }
    return json_object_get_string(v);
}

int64_t mrcctl_member_int(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

bool mrcctl_member_bool(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

double mrcctl_member_double(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

int mrcctl_width(int w, const char *s)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}
