/* SPDX-License-Identifier: MIT */
/* mrcctl deny|drain|undrain: the controller's denylist over its REST API (the calls and their
 * faults: mrcctl_client.c). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
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
    bool force; /* past the controller's capacity floor (operator) */
} deny_opts;

/* "START..END", or "-" without a window. */
static void window_text(json_object *e, char *dest, size_t destlen)
{
    json_object *w;
    if (!json_object_object_get_ex(e, "window", &w) || !w) {
        snprintf(dest, destlen, "-");
        return;
    }
    snprintf(dest, destlen, "%s..%s", mrcctl_member(w, "start"), mrcctl_member(w, "end"));
}

/* One entry as a sentence. */
static void print_entry(const char *verb, json_object *e)
{
    char window[160];
    json_object *w;
    printf("%s denylist entry %lld: %s, scope %s, ", verb, (long long)mrcctl_member_int(e, "id"),
           mrcctl_member(e, "element"), mrcctl_member(e, "scope"));
    if (json_object_object_get_ex(e, "window", &w) && w) {
        window_text(e, window, sizeof(window));
        printf("window %s, ", window);
    }
    printf("%s, by %s: %s\n", mrcctl_member_bool(e, "active") ? "active now" : "not active now",
           mrcctl_member(e, "author"), mrcctl_member(e, "reason"));
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
        snprintf(id, sizeof(id), "%lld", (long long)mrcctl_member_int(e, "id"));
        window_text(e, window, sizeof(window));
        wid = mrcctl_width(wid, id);
        wel = mrcctl_width(wel, mrcctl_member(e, "element"));
        wsc = mrcctl_width(wsc, mrcctl_member(e, "scope"));
        wwin = mrcctl_width(wwin, window);
        wau = mrcctl_width(wau, mrcctl_member(e, "author"));
    }
    printf("%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", wid, "ID", wel, "ELEMENT", wsc, "SCOPE", wac,
           "ACTIVE", wwin, "WINDOW", wau, "AUTHOR", "REASON");
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        snprintf(id, sizeof(id), "%lld", (long long)mrcctl_member_int(e, "id"));
        window_text(e, window, sizeof(window));
        printf("%*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", wid, id, wel, mrcctl_member(e, "element"),
               wsc, mrcctl_member(e, "scope"), wac, mrcctl_member_bool(e, "active") ? "yes" : "no",
               wwin, window, wau, mrcctl_member(e, "author"), mrcctl_member(e, "reason"));
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

/* Parses the options of |argv| (argv[0] is the verb); |allowed| lists the letters of the
 * deny_opts taken ('r' reason, 's' scope, 'f'/'o' from/to, 'F' force). Leaves optind at the first
 * operand. Returns the exit code. */
static int parse_opts(mrcctl *c, int argc, char **argv, const char *allowed, const char *what,
                      deny_opts *d)
{
    const mrcctl_opt all[] = {{"reason", &d->reason, NULL},
                              {"scope", &d->scope, NULL},
                              {"from", &d->from, NULL},
                              {"to", &d->to, NULL},
                              {"force", NULL, &d->force}};
    mrcctl_opt own[sizeof(all) / sizeof(all[0]) + 1];
    size_t n = 0;
    memset(d, 0, sizeof(*d));
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strchr(allowed, "rsfoF"[i])) {
            own[n++] = all[i];
        }
    }
    own[n] = (mrcctl_opt){NULL, NULL, NULL};
    int rv = mrcctl_parse_opts(c, argc, argv, own, what);
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

/* The body of an entry for |element|. */
static json_object *entry_body(const char *element, const char *reason, const deny_opts *d)
{
    json_object *body = json_object_new_object();
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
    return body;
}

/* POSTs an entry for |element| and prints it. */
static int add_entry(mrcctl *c, const char *element, const char *reason, const deny_opts *d)
{
    json_object *body = entry_body(element, reason, d), *entry;
    int rv = mrcctl_api_call(c, "POST", d->force ? DENYLIST "?force=true" : DENYLIST, body, 201, 0,
                             NULL, &entry);
    json_object_put(body);
    if (rv != 0) {
        return rv;
    }
    if (!entry || !json_object_is_type(entry, json_type_object) ||
        mrcctl_member_int(entry, "id") <= 0) {
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
    int rv = mrcctl_api_call(c, "GET", DENYLIST, NULL, 200, 0, NULL, pdoc);
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
    static const char usage[] = "mrcctl deny add ELEMENT --reason TEXT [--scope both|up|down] "
                                "[--from TIME --to TIME] [--force]";
    deny_opts d;
    int rv = parse_opts(c, argc, argv, "rsfoF", usage, &d);
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
    int rv = mrcctl_api_call(c, "DELETE", path, NULL, 204, gone_ok ? 404 : 0, &status, NULL);
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

/* The blast radius as lines: the counts, the capacity left, the hardest hit pairs. */
static void print_blast(const char *element, json_object *doc)
{
    json_object *br = NULL, *bins, *worst;
    json_object_object_get_ex(doc, "blast_radius", &br);
    printf("denying %s: %lld of %lld host pairs lose path capacity, %lld cut off, %lld below the "
           "floor of %.0f %%; the least left: %.1f %%\n",
           element, (long long)mrcctl_member_int(br, "affected_pairs"),
           (long long)mrcctl_member_int(br, "pairs"),
           (long long)mrcctl_member_int(br, "cut_off_pairs"),
           (long long)mrcctl_member_int(br, "below_floor_pairs"),
           100 * mrcctl_member_double(br, "floor"),
           100 * mrcctl_member_double(br, "min_capacity_left"));
    for (size_t i = 0; json_object_object_get_ex(br, "capacity_left", &bins) &&
                       i < json_object_array_length(bins);
         i++) {
        json_object *b = json_object_array_get_idx(bins, i);
        printf("  %3.0f-%3.0f %% left: %lld pairs\n", 100 * mrcctl_member_double(b, "from"),
               100 * mrcctl_member_double(b, "to"), (long long)mrcctl_member_int(b, "pairs"));
    }
    for (size_t i = 0;
         json_object_object_get_ex(br, "worst", &worst) && i < json_object_array_length(worst);
         i++) {
        json_object *w = json_object_array_get_idx(worst, i);
        printf("  %s -> %s: %.1f %% -> %.1f %%\n", mrcctl_member(w, "src"), mrcctl_member(w, "dst"),
               100 * mrcctl_member_double(w, "before"), 100 * mrcctl_member_double(w, "after"));
    }
    printf("%s\n", mrcctl_member_bool(doc, "refused")
                       ? "the controller would refuse it (an operator may force it: --force)"
                       : "the controller would take it");
}

/* The dry run: the blast radius of an entry, nothing stored. Exit 1 when it would be
 * refused, so that a script can ask before it drains. */
static int deny_check(mrcctl *c, int argc, char **argv)
{
    static const char usage[] =
        "mrcctl deny check ELEMENT [--scope both|up|down] [--from TIME --to TIME] [--reason TEXT]";
    deny_opts d;
    json_object *doc;
    int rv = parse_opts(c, argc, argv, "rsfo", usage, &d);
    if (rv != 0) {
        return rv;
    }
    if (optind != argc - 1) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s: usage: %s",
                           optind == argc ? "no element" : "one element only", usage);
    }
    json_object *body = entry_body(argv[optind], d.reason ? d.reason : "check", &d);
    rv = mrcctl_api_call(c, "POST", DENYLIST "?dry_run=true", body, 200, 0, NULL, &doc);
    json_object_put(body);
    if (rv != 0) {
        return rv;
    }
    bool refused = mrcctl_member_bool(doc, "refused");
    if (c->json) {
        mrcctl_print_json(doc);
    } else {
        print_blast(argv[optind], doc);
        json_object_put(doc);
    }
    return refused ? MRCCTL_FAIL : MRCCTL_OK;
}

int mrcctl_deny(mrcctl *c, int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "check") == 0) {
        return deny_check(c, argc - 1, argv + 1);
    }
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
                       "[--from TIME --to TIME] [--force] | rm ID | check ELEMENT [--scope S] "
                       "[--from TIME --to TIME]");
}

int mrcctl_drain(mrcctl *c, int argc, char **argv)
{
    static const char usage[] =
        "mrcctl drain ELEMENT [--reason TEXT] [--from TIME --to TIME] [--force]";
    deny_opts d;
    char reason[256];
    int rv = parse_opts(c, argc, argv, "rfoF", usage, &d);
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
        if (strcmp(mrcctl_member(e, "element"), element) == 0 &&
            strncmp(mrcctl_member(e, "reason"), DRAIN, sizeof(DRAIN) - 1) == 0 &&
            mrcctl_member_int(e, "id") > 0) {
            ids[nids++] = mrcctl_member_int(e, "id");
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
