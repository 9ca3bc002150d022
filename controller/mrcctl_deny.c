/* SPDX-License-Identifier: MIT */
/* mrcctl deny|drain|undrain: the controller's denylist over its REST API. A problem document
 * from the controller is shown as its sentence and the status; 4xx is bad input (exit 2), 5xx
 * and a controller out of reach are the system failing (exit 1). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

#define DENYLIST "/api/v1/denylist"
#define DRAIN "drain"

/* The options of the commands that add an entry. */
typedef struct deny_opts {
    const char *reason, *scope, *from, *to;
} deny_opts;

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

/* The controller's base URL, without a trailing slash, in |dest|. */
static void base_url(const mrcctl *c, char *dest, size_t destlen)
{
    const char *url = c->controller, *env = getenv("MRCFAB_CONTROLLER");
    if (!url || !url[0]) {
        url = env && env[0] ? env : MRCCTL_CONTROLLER;
    }
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/') {
        n--;
    }
    snprintf(dest, destlen, "%.*s", (int)n, url);
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

/* |method| on |path| (under the controller's URL) with |body| (may be NULL, not consumed).
 * Returns 0 when the status is |want|, with the answer's JSON in |*pdoc| (NULL for an empty
 * body; |pdoc| may be NULL), or when it is |quiet| (a fault the caller takes as an answer:
 * nothing printed, |*pdoc| NULL); the status goes in |*pstatus| (may be NULL). Otherwise
 * prints the fault and returns the exit code. */
static int api_call(mrcctl *c, const char *method, const char *path, json_object *body, int want,
                    int quiet, int *pstatus, json_object **pdoc)
{
    char base[1024], url[1280], err[512], text[512];
    char *token = NULL, *answer = NULL;
    int status = 0, rv;
    if (pdoc) {
        *pdoc = NULL;
    }
    if ((rv = get_token(c, &token)) != 0) {
        return rv;
    }
    base_url(c, base, sizeof(base));
    snprintf(url, sizeof(url), "%s%s", base, path);
    /* a controller that goes away mid-request is an error to report, not a signal to die of */
    signal(SIGPIPE, SIG_IGN);
    const char *text_body =
        body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
    rv = util_http_request(url, method, token, text_body, &status, &answer, NULL, err, sizeof(err));
    free(token);
    if (pstatus) {
        *pstatus = status;
    }
    if (rv == -EINVAL) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s", err);
    }
    if (rv != 0) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot reach the controller: %s", err);
    }
    if (status == want) {
        json_object *doc = NULL;
        rv = MRCCTL_OK;
        if (answer[0]) {
            doc = json_tokener_parse(answer);
            if (!doc) {
                rv = mrcctl_fail(c, MRCCTL_FAIL, NULL,
                                 "the controller's answer to %s %s is not JSON", method, url);
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
        rv = mrcctl_fail(c, status < 500 ? MRCCTL_BADINPUT : MRCCTL_FAIL, NULL, "%s (HTTP %d)",
                         text, status);
    } else {
        rv = mrcctl_fail(c, MRCCTL_FAIL, NULL, "unexpected answer to %s %s (HTTP %d)", method, url,
                         status);
    }
    free(answer);
    return rv;
}

static const char *member(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !v) {
        return "";
    }
    return json_object_get_string(v);
}

static int64_t member_id(json_object *o)
{
    json_object *v;
    return json_object_object_get_ex(o, "id", &v) ? json_object_get_int64(v) : 0;
}

static bool member_bool(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* "START..END", or "-" without a window. */
static void window_text(json_object *e, char *dest, size_t destlen)
{
    json_object *w;
    if (!json_object_object_get_ex(e, "window", &w) || !w) {
        snprintf(dest, destlen, "-");
        return;
    }
    snprintf(dest, destlen, "%s..%s", member(w, "start"), member(w, "end"));
}

/* One entry as a sentence. */
static void print_entry(const char *verb, json_object *e)
{
    char window[160];
    json_object *w;
    printf("%s denylist entry %lld: %s, scope %s, ", verb, (long long)member_id(e),
           member(e, "element"), member(e, "scope"));
    if (json_object_object_get_ex(e, "window", &w) && w) {
        window_text(e, window, sizeof(window));
        printf("window %s, ", window);
    }
    printf("%s, by %s: %s\n", member_bool(e, "active") ? "active now" : "not active now",
           member(e, "author"), member(e, "reason"));
}

static int width(int w, const char *s)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}

static void print_table(json_object *doc)
{
    json_object *entries;
    json_object *version;
    if (!json_object_object_get_ex(doc, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array)) {
        entries = NULL;
    }
    size_t n = entries ? json_object_array_length(entries) : 0;
    json_object_object_get_ex(doc, "version", &version);
    if (n == 0) {
        printf("the denylist is empty (version %lld)\n", (long long)json_object_get_int64(version));
        return;
    }
    char id[24], window[160];
    int wid = 2, wel = 7, wsc = 5, wac = 6, wwin = 6, wau = 6;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        snprintf(id, sizeof(id), "%lld", (long long)member_id(e));
        window_text(e, window, sizeof(window));
        wid = width(wid, id);
        wel = width(wel, member(e, "element"));
        wsc = width(wsc, member(e, "scope"));
        wwin = width(wwin, window);
        wau = width(wau, member(e, "author"));
    }
    printf("%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", wid, "ID", wel, "ELEMENT", wsc, "SCOPE", wac,
           "ACTIVE", wwin, "WINDOW", wau, "AUTHOR", "REASON");
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        snprintf(id, sizeof(id), "%lld", (long long)member_id(e));
        window_text(e, window, sizeof(window));
        printf("%*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", wid, id, wel, member(e, "element"), wsc,
               member(e, "scope"), wac, member_bool(e, "active") ? "yes" : "no", wwin, window, wau,
               member(e, "author"), member(e, "reason"));
    }
    printf("%zu entr%s, version %lld\n", n, n == 1 ? "y" : "ies",
           (long long)json_object_get_int64(version));
}

/* {"removed": [ids], "element"?} */
static void print_removed(const char *element, const int64_t *ids, size_t n)
{
    json_object *doc = json_object_new_object(), *list = json_object_new_array();
    if (element) {
        json_object_object_add(doc, "element", json_object_new_string(element));
    }
    for (size_t i = 0; i < n; i++) {
        json_object_array_add(list, json_object_new_int64(ids[i]));
    }
    json_object_object_add(doc, "removed", list);
    mrcctl_print_json(doc);
}

/* Parses the options of |argv| (argv[0] is the verb); |allowed| lists the short letters of
 * deny_opts taken ('r' reason, 's' scope, 'f'/'o' from/to). Leaves optind at the first
 * operand. Returns the exit code. */
static int parse_opts(mrcctl *c, int argc, char **argv, const char *allowed, const char *what,
                      deny_opts *d)
{
    static const struct option opts[] = {MRCCTL_COMMON_LONGOPTS,
                                         {"reason", required_argument, NULL, 'r'},
                                         {"scope", required_argument, NULL, 's'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 'o'},
                                         {NULL, 0, NULL, 0}};
    int opt, rv = MRCCTL_OK, li = -1;
    memset(d, 0, sizeof(*d));
    optind = 0;
    opterr = 0; /* the faults are said below, in one line */
    while (rv == MRCCTL_OK && (opt = getopt_long(argc, argv, ":t:", opts, &li)) != -1) {
        char name[64];
        if (li >= 0) {
            snprintf(name, sizeof(name), "--%s", opts[li].name);
        } else if (opt == '?' && optopt) {
            snprintf(name, sizeof(name), "-%c", optopt);
        } else {
            snprintf(name, sizeof(name), "%s", optind > 0 ? argv[optind - 1] : "");
        }
        li = -1;
        if (opt == ':') {
            rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "'%s' takes a value; usage: %s", name, what);
        } else if (mrcctl_common_opt(c, opt)) {
            continue;
        } else if (opt == '?' || !strchr(allowed, opt)) {
            rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                             "'%s' is no option of this command; usage: %s", name, what);
        } else if (opt == 'r') {
            d->reason = optarg;
        } else if (opt == 's') {
            d->scope = optarg;
        } else if (opt == 'f') {
            d->from = optarg;
        } else {
            d->to = optarg;
        }
    }
    opterr = 1;
    if (rv != MRCCTL_OK) {
        return rv;
    }
    if ((d->from != NULL) != (d->to != NULL)) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "a window takes both --from TIME and --to TIME (RFC 3339 UTC)");
    }
    if (d->scope && strcmp(d->scope, "both") != 0 && strcmp(d->scope, "up") != 0 &&
        strcmp(d->scope, "down") != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "--scope must be both, up or down, not '%s'",
                           d->scope);
    }
    if (d->reason && !d->reason[0]) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "--reason must not be empty");
    }
    return MRCCTL_OK;
}

/* POSTs an entry for |element| and prints it. */
static int add_entry(mrcctl *c, const char *element, const char *reason, const deny_opts *d)
{
    json_object *body = json_object_new_object(), *entry;
    json_object_object_add(body, "element", json_object_new_string(element));
    json_object_object_add(body, "reason", json_object_new_string(reason));
    if (d->scope) {
        json_object_object_add(body, "scope", json_object_new_string(d->scope));
    }
    if (d->from) {
        json_object *w = json_object_new_object();
        json_object_object_add(w, "start", json_object_new_string(d->from));
        json_object_object_add(w, "end", json_object_new_string(d->to));
        json_object_object_add(body, "window", w);
    }
    int rv = api_call(c, "POST", DENYLIST, body, 201, 0, NULL, &entry);
    json_object_put(body);
    if (rv != 0) {
        return rv;
    }
    if (!entry || !json_object_is_type(entry, json_type_object) || member_id(entry) <= 0) {
        json_object_put(entry);
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "the controller's answer holds no entry");
    }
    if (c->json) {
        mrcctl_print_json(entry);
    } else {
        print_entry("added", entry);
        json_object_put(entry);
    }
    return MRCCTL_OK;
}

/* The denylist document ({"version", "entries"}) into |*pdoc|. */
static int get_list(mrcctl *c, json_object **pdoc)
{
    json_object *entries;
    int rv = api_call(c, "GET", DENYLIST, NULL, 200, 0, NULL, pdoc);
    if (rv != 0) {
        return rv;
    }
    if (!*pdoc || !json_object_object_get_ex(*pdoc, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array)) {
        json_object_put(*pdoc);
        *pdoc = NULL;
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "the controller's denylist has no entries array");
    }
    return MRCCTL_OK;
}

static int deny_ls(mrcctl *c, int argc, char **argv)
{
    deny_opts d;
    json_object *doc;
    int rv = parse_opts(c, argc, argv, "", "mrcctl deny ls", &d);
    if (rv != 0) {
        return rv;
    }
    if (optind < argc) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "'deny ls' takes no operand ('%s')",
                           argv[optind]);
    }
    if ((rv = get_list(c, &doc)) != 0) {
        return rv;
    }
    if (c->json) {
        mrcctl_print_json(doc);
    } else {
        print_table(doc);
        json_object_put(doc);
    }
    return MRCCTL_OK;
}

static int deny_add(mrcctl *c, int argc, char **argv)
{
    static const char usage[] =
        "mrcctl deny add ELEMENT --reason TEXT [--scope both|up|down] [--from TIME --to TIME]";
    deny_opts d;
    int rv = parse_opts(c, argc, argv, "rsfo", usage, &d);
    if (rv != 0) {
        return rv;
    }
    if (optind != argc - 1 || !d.reason) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s: usage: %s",
                           optind == argc      ? "no element"
                           : optind < argc - 1 ? "one element only"
                                               : "no --reason",
                           usage);
    }
    return add_entry(c, argv[optind], d.reason, &d);
}

/* An entry id: digits, at least 1. */
static bool parse_id(const char *s, int64_t *pid)
{
    char *end;
    if (!isdigit((unsigned char)s[0])) {
        return false;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v <= 0) {
        return false;
    }
    *pid = v;
    return true;
}

/* DELETEs entry |id|. With |gone_ok|, an entry already gone (404) is no fault: |*premoved|
 * says whether this call removed it. */
static int remove_entry(mrcctl *c, int64_t id, bool gone_ok, bool *premoved)
{
    char path[64];
    int status = 0;
    snprintf(path, sizeof(path), DENYLIST "/%lld", (long long)id);
    int rv = api_call(c, "DELETE", path, NULL, 204, gone_ok ? 404 : 0, &status, NULL);
    if (premoved) {
        *premoved = rv == 0 && status == 204;
    }
    return rv;
}

static int deny_rm(mrcctl *c, int argc, char **argv)
{
    deny_opts d;
    int64_t id;
    int rv = parse_opts(c, argc, argv, "", "mrcctl deny rm ID", &d);
    if (rv != 0) {
        return rv;
    }
    if (optind != argc - 1) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "usage: mrcctl deny rm ID (one entry id)");
    }
    if (!parse_id(argv[optind], &id)) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "'%s' is not an entry id (a whole number from 1; see mrcctl deny ls)",
                           argv[optind]);
    }
    if ((rv = remove_entry(c, id, false, NULL)) != 0) {
        return rv;
    }
    if (c->json) {
        print_removed(NULL, &id, 1);
    } else {
        printf("removed denylist entry %lld\n", (long long)id);
    }
    return MRCCTL_OK;
}

int mrcctl_deny(mrcctl *c, int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "ls") == 0 || strcmp(argv[1], "list") == 0)) {
        return deny_ls(c, argc - 1, argv + 1);
    }
    if (argc > 1 && strcmp(argv[1], "add") == 0) {
        return deny_add(c, argc - 1, argv + 1);
    }
    if (argc > 1 && (strcmp(argv[1], "rm") == 0 || strcmp(argv[1], "remove") == 0)) {
        return deny_rm(c, argc - 1, argv + 1);
    }
    return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                       "usage: mrcctl deny ls | add ELEMENT --reason TEXT [--scope both|up|down] "
                       "[--from TIME --to TIME] | rm ID");
}

int mrcctl_drain(mrcctl *c, int argc, char **argv)
{
    static const char usage[] = "mrcctl drain ELEMENT [--reason TEXT] [--from TIME --to TIME]";
    deny_opts d;
    char reason[256];
    int rv = parse_opts(c, argc, argv, "rfo", usage, &d);
    if (rv != 0) {
        return rv;
    }
    if (optind != argc - 1) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s: usage: %s",
                           optind == argc ? "no element" : "one element only", usage);
    }
    /* undrain finds the entry by its reason: keep it starting with "drain" */
    if (!d.reason) {
        snprintf(reason, sizeof(reason), DRAIN);
    } else if (strncmp(d.reason, DRAIN, sizeof(DRAIN) - 1) == 0) {
        snprintf(reason, sizeof(reason), "%s", d.reason);
    } else {
        snprintf(reason, sizeof(reason), DRAIN ": %s", d.reason);
    }
    return add_entry(c, argv[optind], reason, &d);
}

int mrcctl_undrain(mrcctl *c, int argc, char **argv)
{
    deny_opts d;
    json_object *doc, *entries;
    int rv = parse_opts(c, argc, argv, "", "mrcctl undrain ELEMENT", &d);
    if (rv != 0) {
        return rv;
    }
    if (optind != argc - 1) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "usage: mrcctl undrain ELEMENT");
    }
    const char *element = argv[optind];
    if ((rv = get_list(c, &doc)) != 0) {
        return rv;
    }
    json_object_object_get_ex(doc, "entries", &entries);
    size_t n = json_object_array_length(entries), nids = 0, nremoved = 0;
    int64_t *ids = util_xcalloc(n + 1, sizeof(*ids));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        if (strcmp(member(e, "element"), element) == 0 &&
            strncmp(member(e, "reason"), DRAIN, sizeof(DRAIN) - 1) == 0 && member_id(e) > 0) {
            ids[nids++] = member_id(e);
        }
    }
    json_object_put(doc);
    for (size_t i = 0; i < nids; i++) {
        bool removed;
        /* an entry removed meanwhile by someone else is no fault: it is undrained */
        if ((rv = remove_entry(c, ids[i], true, &removed)) != 0) {
            if (nremoved > 0) {
                fprintf(stderr, "mrcctl: %zu of %zu drain entries of %s were removed first\n",
                        nremoved, nids, element);
            }
            goto out;
        }
        if (removed) {
            ids[nremoved++] = ids[i];
        }
    }
    if (c->json) {
        print_removed(element, ids, nremoved);
    } else if (nremoved == 0) {
        printf("nothing to undrain: %s has no entry whose reason starts with '" DRAIN "'\n",
               element);
    } else {
        printf("undrained %s: removed denylist entr%s", element, nremoved == 1 ? "y" : "ies");
        for (size_t i = 0; i < nremoved; i++) {
            printf("%s %lld", i ? "," : "", (long long)ids[i]);
        }
        printf("\n");
    }
    rv = MRCCTL_OK;
out:
    free(ids);
    return rv;
}
