/* SPDX-License-Identifier: MIT */
/* mrcctl deny|drain|undrain: the controller's denylist over its REST API (the calls and their
 * faults: mrcctl_client.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

#define DENYLIST "/api/v1/denylist"
#define DRAIN "drain"

/* The options of the commands that add an entry. */
typedef struct deny_opts {
    char *reason, *scope, *from, *to;
    bool force; /* past the controller's capacity floor (operator) */
} deny_opts;

static deny_opts d;

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

/* What the options say beyond their kinds and choices. Returns the exit code. */
static int opts_valid(mrcctl *c)
{
    if ((d.from != NULL) != (d.to != NULL)) {
        return mrcctl_usage(c, "a window takes both --from TIME and --to TIME (RFC 3339 UTC)");
    }
    if (d.reason && !d.reason[0]) {
        return mrcctl_usage(c, "--reason must not be empty");
    }
    return MRCCTL_OK;
}

/* The body of an entry for |element|. */
static json_object *entry_body(const char *element, const char *reason, const deny_opts *o)
{
    json_object *body = json_object_new_object();
    json_object_object_add(body, "element", json_object_new_string(element));
    json_object_object_add(body, "reason", json_object_new_string(reason));
    if (o->scope) {
        json_object_object_add(body, "scope", json_object_new_string(o->scope));
    }
    if (o->from) {
        json_object *w = json_object_new_object();
        json_object_object_add(w, "start", json_object_new_string(o->from));
        json_object_object_add(w, "end", json_object_new_string(o->to));
        json_object_object_add(body, "window", w);
    }
    return body;
}

/* POSTs an entry for |element| and prints it. */
static int add_entry(mrcctl *c, const char *element, const char *reason)
{
    json_object *body = entry_body(element, reason, &d), *entry;
    int status = 0;
    int rv = mrcctl_api_call(c, "POST", d.force ? DENYLIST "?force=true" : DENYLIST, body, 201, 0,
                             &status, &entry);
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
        /* 200: the same entry (element, scope, window, author) was in force already */
        print_entry(status == 200 ? "in force already:" : "added", entry);
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

static int deny_ls(mrcctl *c, int n, char **operands)
{
    json_object *doc;
    int rv;
    (void)n;
    (void)operands;
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

static int deny_add(mrcctl *c, int n, char **operands)
{
    int rv = opts_valid(c);
    (void)n;
    return rv != 0 ? rv : add_entry(c, operands[0], d.reason);
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
 * says whether this call removed it (|premoved| may be NULL), |*pstatus| the status (|pstatus|
 * may be NULL). */
static int remove_entry(mrcctl *c, int64_t id, bool gone_ok, bool *premoved, int *pstatus)
{
    char path[64];
    int status = 0;
    snprintf(path, sizeof(path), DENYLIST "/%lld", (long long)id);
    int rv = mrcctl_api_call(c, "DELETE", path, NULL, 204, gone_ok ? 404 : 0, &status, NULL);
    if (premoved) {
        *premoved = rv == 0 && status == 204;
    }
    if (pstatus) {
        *pstatus = status;
    }
    return rv;
}

static int deny_rm(mrcctl *c, int n, char **operands)
{
    int64_t id;
    int status = 0, rv;
    (void)n;
    if (!parse_id(operands[0], &id)) {
        return mrcctl_usage(c,
                            "'%s' is not an entry id (a whole number from 1; mrcctl deny ls "
                            "lists them)",
                            operands[0]);
    }
    if ((rv = remove_entry(c, id, true, NULL, &status)) != 0) {
        return rv;
    }
    if (status == 404) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "there is no denylist entry %lld; mrcctl deny ls lists them (HTTP 404)",
                           (long long)id);
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

/* The blast radius of an entry, nothing stored (the API's dry run). Exit 1 when it would be
 * refused, so that a script can ask before it drains. */
static int deny_check(mrcctl *c, int n, char **operands)
{
    json_object *doc;
    int rv = opts_valid(c);
    (void)n;
    if (rv != 0) {
        return rv;
    }
    json_object *body = entry_body(operands[0], d.reason ? d.reason : "check", &d);
    rv = mrcctl_api_call(c, "POST", DENYLIST "?dry_run=true", body, 200, 0, NULL, &doc);
    json_object_put(body);
    if (rv != 0) {
        return rv;
    }
    bool refused = mrcctl_member_bool(doc, "refused");
    if (c->json) {
        mrcctl_print_json(doc);
    } else {
        print_blast(operands[0], doc);
        json_object_put(doc);
    }
    return refused ? MRCCTL_FAIL : MRCCTL_OK;
}

static int run_drain(mrcctl *c, int n, char **operands)
{
    char reason[256];
    int rv = opts_valid(c);
    (void)n;
    if (rv != 0) {
        return rv;
    }
    /* undrain finds the entry by its reason: keep it starting with "drain" */
    if (!d.reason) {
        snprintf(reason, sizeof(reason), DRAIN);
    } else if (strncmp(d.reason, DRAIN, sizeof(DRAIN) - 1) == 0) {
        snprintf(reason, sizeof(reason), "%s", d.reason);
    } else {
        snprintf(reason, sizeof(reason), DRAIN ": %s", d.reason);
    }
    return add_entry(c, operands[0], reason);
}

static int run_undrain(mrcctl *c, int noperands, char **operands)
{
    json_object *doc, *entries;
    const char *element = operands[0];
    int rv;
    (void)noperands;
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
        if ((rv = remove_entry(c, ids[i], true, &removed, NULL)) != 0) {
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

/* clang-format off */
#define OPT_SCOPE {.name = "scope", .kind = UTIL_OPT_STR, .dest = &d.scope, .arg = "SCOPE", .choices = "both|up|down", .help = "which direction of a link or host port is denied (up: toward the T1, or from the host; default both)"}
#define OPT_FROM {.name = "from", .kind = UTIL_OPT_STR, .dest = &d.from, .arg = "TIME", .help = "the start of a maintenance window (with --to)"}
#define OPT_TO {.name = "to", .kind = UTIL_OPT_STR, .dest = &d.to, .arg = "TIME", .help = "its end"}
#define OPT_FORCE {.name = "force", .kind = UTIL_OPT_BOOL, .dest = &d.force, .help = "add it even below the controller's capacity floor (an operator's token)"}
static const util_opt add_opts[] = {
    {.name = "reason", .kind = UTIL_OPT_STR, .dest = &d.reason, .arg = "TEXT", .required = true, .help = "why, for the audit log and mrcctl deny ls"},
    OPT_SCOPE, OPT_FROM, OPT_TO, OPT_FORCE, UTIL_OPT_END,
};
static const util_opt check_opts[] = {
    OPT_SCOPE, OPT_FROM, OPT_TO,
    {.name = "reason", .kind = UTIL_OPT_STR, .dest = &d.reason, .arg = "TEXT", .help = "the reason the entry would have (default: check)"},
    UTIL_OPT_END,
};
static const util_opt drain_opts[] = {
    {.name = "reason", .kind = UTIL_OPT_STR, .dest = &d.reason, .arg = "TEXT", .help = "why: the entry's reason is 'drain: TEXT' (default: drain)"},
    OPT_FROM, OPT_TO, OPT_FORCE, UTIL_OPT_END,
};
/* clang-format on */
static const util_opt *const no_tables[] = {NULL};
static const util_opt *const add_tables[] = {add_opts, NULL};
static const util_opt *const check_tables[] = {check_opts, NULL};
static const util_opt *const drain_tables[] = {drain_opts, NULL};

#define ELEMENT_NOTE                                                                               \
    "An ELEMENT is a switch (p3-t1-17), a host port (h12:3) or a T0-T1 link (p0-t0-1~p0-t1-3); "   \
    "a\n"                                                                                          \
    "TIME is RFC 3339 UTC (2026-12-01T02:00:00Z)."

static const util_cli ls_cli = {
    .prog = "mrcctl deny ls",
    .usage = "mrcctl deny ls [OPTIONS]",
    .about = "Lists the controller's denylist: each entry's id, element, scope, whether it is\n"
             "active, its window, author and reason.",
    .tables = no_tables,
};
static const util_cli add_cli = {
    .prog = "mrcctl deny add",
    .usage =
        "mrcctl deny add ELEMENT --reason TEXT [--scope both|up|down] [--from TIME --to TIME]\n"
        "                       [--force] [OPTIONS]",
    .about = "Adds a denylist entry: the hosts stop using every path through ELEMENT (in its\n"
             "window, if it has one). The controller refuses an entry that would cut a host pair\n"
             "below its capacity floor unless --force is given (mrcctl deny check tells "
             "first).\n" ELEMENT_NOTE,
    .tables = add_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "ELEMENT",
};
static const util_cli rm_cli = {
    .prog = "mrcctl deny rm",
    .usage = "mrcctl deny rm ID [OPTIONS]",
    .about = "Removes denylist entry ID (mrcctl deny ls lists them).",
    .tables = no_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "ID",
};
static const util_cli check_cli = {
    .prog = "mrcctl deny check",
    .usage = "mrcctl deny check ELEMENT [--scope both|up|down] [--from TIME --to TIME]\n"
             "                         [--reason TEXT] [OPTIONS]",
    .about = "The blast radius of denying ELEMENT, nothing added: the host pairs that lose path\n"
             "capacity, how much they keep, the hardest hit. Exit 1 if the controller would\n"
             "refuse it (below its capacity floor; mrcctl deny add --force adds it "
             "anyway).\n" ELEMENT_NOTE,
    .tables = check_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "ELEMENT",
};
static const util_cli drain_cli = {
    .prog = "mrcctl drain",
    .usage = "mrcctl drain ELEMENT [--reason TEXT] [--from TIME --to TIME] [--force] [OPTIONS]",
    .about =
        "Denies ELEMENT with a reason starting 'drain' (mrcctl undrain removes it).\n" ELEMENT_NOTE,
    .tables = drain_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "ELEMENT",
};
static const util_cli undrain_cli = {
    .prog = "mrcctl undrain",
    .usage = "mrcctl undrain ELEMENT [OPTIONS]",
    .about = "Removes every denylist entry of ELEMENT whose reason starts with 'drain', and says\n"
             "how many (exit 0 with nothing to undrain).",
    .tables = no_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "ELEMENT",
};

static const mrcctl_cmd deny_cmds[] = {
    {.name = "ls",
     .alias = "list",
     .summary = "the denylist's entries",
     .cli = &ls_cli,
     .run = deny_ls},
    {.name = "add",
     .summary = "deny a switch, host port (h3:1) or link (A~B)",
     .cli = &add_cli,
     .run = deny_add},
    {.name = "rm", .alias = "remove", .summary = "remove entry ID", .cli = &rm_cli, .run = deny_rm},
    {.name = "check",
     .summary = "the blast radius of denying an element; exit 1 if refused",
     .cli = &check_cli,
     .run = deny_check},
    {.name = NULL},
};

const mrcctl_cmd mrcctl_deny_cmd = {
    .name = "deny",
    .summary = "Keeps the controller's denylist (mrc-controller, over its API).",
    .subs = deny_cmds,
};
const mrcctl_cmd mrcctl_drain_cmd = {
    .name = "drain",
    .summary = "deny an element with a reason starting 'drain'",
    .cli = &drain_cli,
    .run = run_drain,
};
const mrcctl_cmd mrcctl_undrain_cmd = {
    .name = "undrain",
    .summary = "remove every entry of an element whose reason starts 'drain'",
    .cli = &undrain_cli,
    .run = run_undrain,
};
