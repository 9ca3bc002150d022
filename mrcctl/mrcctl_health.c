/* SPDX-License-Identifier: MIT */
/* mrcctl health links|switch and the words every health table shares: the controller's view of
 * the fabric's health over its REST API (the calls and their faults: mrcctl_client.c), as
 * tables or, with --json, the API's documents; path, summary and problems are in
 * mrcctl_health_fabric.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl_health.h"

#define NONE MRCCTL_HEALTH_NONE
#define PAGE_MAX MRCCTL_HEALTH_PAGE_MAX

mrcctl_health_filters mrcctl_health_opt = {.plane = NONE, .offset = NONE, .limit = NONE};
#define hf mrcctl_health_opt

static int check_filters(mrcctl *c, const mrcctl_health_filters *f)
{
    if (f->sw && !f->sw[0]) {
        return mrcctl_usage(c, "--switch must name a switch");
    }
    return MRCCTL_OK;
}

/* Appends |key|=|v| to the query unless |v| is NONE. */
static int query_count(char *path, size_t pathlen, const char *key, uint64_t v)
{
    char text[24];
    if (v == NONE) {
        return 0;
    }
    snprintf(text, sizeof(text), "%" PRIu64, v);
    return mrcctl_query_add(path, pathlen, key, text);
}

int mrcctl_health_get_page(mrcctl *c, const char *resource, const mrcctl_health_filters *f,
                           json_object **pdoc)
{
    char path[1024];
    json_object *items;
    snprintf(path, sizeof(path), MRCCTL_HEALTH "/%s", resource);
    if (mrcctl_query_add(path, sizeof(path), "state", f->state) != 0 ||
        query_count(path, sizeof(path), "plane", f->plane) != 0 ||
        mrcctl_query_add(path, sizeof(path), "switch", f->sw) != 0 ||
        query_count(path, sizeof(path), "offset", f->offset) != 0 ||
        query_count(path, sizeof(path), "limit", f->limit) != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "the switch name is too long");
    }
    int rv = mrcctl_api_call(c, "GET", path, NULL, 200, 0, NULL, pdoc);
    if (rv != 0) {
        return rv;
    }
    if (!*pdoc || !json_object_object_get_ex(*pdoc, "items", &items) ||
        !json_object_is_type(items, json_type_array)) {
        json_object_put(*pdoc);
        *pdoc = NULL;
        return mrcctl_fail(c, MRCCTL_FAIL, NULL,
                           "the controller's answer to mrcctl %s has no items (GET %s" MRCCTL_HEALTH
                           "/%s)",
                           c->cmd, c->controller, resource);
    }
    return MRCCTL_OK;
}

json_object *mrcctl_health_items(json_object *doc)
{
    json_object *items;
    json_object_object_get_ex(doc, "items", &items);
    return items;
}

void mrcctl_health_page_footer(json_object *doc, const char *one, const char *many)
{
    uint64_t total = (uint64_t)mrcctl_member_int(doc, "total");
    uint64_t offset = (uint64_t)mrcctl_member_int(doc, "offset");
    uint64_t n = json_object_array_length(mrcctl_health_items(doc));
    if (n == 0) {
        if (total == 0) {
            printf("no %s matches\n", one);
        } else {
            printf("no %s from %" PRIu64 " on: %" PRIu64 " match%s\n", many, offset, total,
                   total == 1 ? "es" : "");
        }
    } else if (offset == 0 && n == total) {
        printf("%" PRIu64 " %s\n", total, total == 1 ? one : many);
    } else {
        printf("%s %" PRIu64 "-%" PRIu64 " of %" PRIu64, many, offset + 1, offset + n, total);
        if (offset + n < total) {
            printf(" (the next page: --offset %" PRIu64 ")", offset + n);
        }
        printf("\n");
    }
}

/* --- the words the tables share ---------------------------------------------------------- */

int mrcctl_health_entry_text(json_object *entry, char *dest, size_t destlen)
{
    const char *scope = mrcctl_member(entry, "scope");
    bool whole = !scope[0] || strcmp(scope, "both") == 0;
    return snprintf(dest, destlen, "#%" PRId64 " (%s%s%s, %s: %s)", mrcctl_member_int(entry, "id"),
                    mrcctl_member(entry, "element"), whole ? "" : " ", whole ? "" : scope,
                    mrcctl_member(entry, "source"), mrcctl_member(entry, "reason"));
}

void mrcctl_health_ids_text(json_object *denied, const char *dir, char *dest, size_t destlen)
{
    size_t n = 0;
    dest[0] = '\0';
    for (size_t i = 0; i < json_object_array_length(denied) && n < destlen; i++) {
        json_object *e = json_object_array_get_idx(denied, i);
        const char *scope = mrcctl_member(e, "scope");
        /* an entry of scope both (a switch's, a whole link or port) takes both directions */
        if (dir && strcmp(scope, "both") != 0 && strcmp(scope, dir) != 0) {
            continue;
        }
        n += (size_t)snprintf(dest + n, destlen - n, "%s#%" PRId64, n ? "," : "",
                              mrcctl_member_int(e, "id"));
    }
    if (!dest[0]) {
        snprintf(dest, destlen, "-");
    }
}

static bool is_null(json_object *o)
{
    return !o || json_object_is_type(o, json_type_null);
}

void mrcctl_health_verdict_name(json_object *v, bool kind, bool ids, char *dest, size_t destlen)
{
    json_object *entries = NULL;
    size_t n;
    if (is_null(v)) {
        snprintf(dest, destlen, "-");
        return;
    }
    n = (size_t)snprintf(dest, destlen, "%s (", mrcctl_member(v, "component"));
    if (kind && n < destlen) {
        n += (size_t)snprintf(dest + n, destlen - n, "%s, ", mrcctl_member(v, "kind"));
    }
    if (n < destlen) {
        n += (size_t)snprintf(dest + n, destlen - n, "%s", mrcctl_member(v, "state"));
    }
    /* 0 stands for an entry the localizer has not had yet */
    json_object_object_get_ex(v, "entries", &entries);
    for (size_t i = 0, k = 0; ids && i < json_object_array_length(entries) && n < destlen; i++) {
        int64_t id = json_object_get_int64(json_object_array_get_idx(entries, i));
        if (id > 0) {
            n += (size_t)snprintf(dest + n, destlen - n, "%s#%" PRId64, k++ ? "," : " ", id);
        }
    }
    if (n < destlen) {
        snprintf(dest + n, destlen - n, ")");
    }
}

void mrcctl_health_pct(double rate, char *dest, size_t destlen)
{
    snprintf(dest, destlen, "%.3f%%", 100.0 * rate);
}

void mrcctl_health_verdict_text(json_object *v, bool ids, char *dest, size_t destlen)
{
    char loss[32];
    mrcctl_health_verdict_name(v, true, ids, dest, destlen);
    if (is_null(v)) {
        return;
    }
    size_t n = strlen(dest);
    const char *since = mrcctl_member(v, "since");
    mrcctl_health_pct(mrcctl_member_double(v, "loss"), loss, sizeof(loss));
    n += (size_t)snprintf(dest + n, destlen - n, ": %s lost (%" PRId64 "/%" PRId64 ") in %g s",
                          loss, mrcctl_member_int(v, "lost"), mrcctl_member_int(v, "sent"),
                          mrcctl_member_double(v, "horizon_s"));
    if (since[0] && n < destlen) {
        /* to the second: the verdict's start, not a measurement */
        size_t whole = strcspn(since, ".");
        snprintf(dest + n, destlen - n, ", since %.*s%s", (int)whole, since,
                 since[whole] ? "Z" : "");
    }
}

void mrcctl_health_entries_init(mrcctl_health_entries *e)
{
    e->byid = json_object_new_object();
    e->count = json_object_new_object();
}

void mrcctl_health_entries_add(mrcctl_health_entries *e, json_object *denied)
{
    char id[24];
    json_object *seen;
    for (size_t i = 0; i < json_object_array_length(denied); i++) {
        json_object *entry = json_object_array_get_idx(denied, i);
        snprintf(id, sizeof(id), "%" PRId64, mrcctl_member_int(entry, "id"));
        if (json_object_object_get_ex(e->count, id, &seen)) {
            json_object_set_int64(seen, json_object_get_int64(seen) + 1);
        } else {
            /* json-c objects keep their members in the order added: first seen, first shown */
            json_object_object_add(e->byid, id, json_object_get(entry));
            json_object_object_add(e->count, id, json_object_new_int64(1));
        }
    }
}

void mrcctl_health_entries_print(mrcctl_health_entries *e, const char *title, const char *what)
{
    char text[1024];
    if (title && json_object_object_length(e->byid) > 0) {
        printf("%s:\n", title);
        json_object_object_foreach(e->byid, id, entry)
        {
            mrcctl_health_entry_text(entry, text, sizeof(text));
            printf("  %s", text);
            if (what) {
                int64_t n = mrcctl_member_int(e->count, id);
                printf(": excludes %" PRId64 " %s%s", n, what, n == 1 ? "" : "s");
            }
            printf("\n");
        }
    }
    json_object_put(e->byid);
    json_object_put(e->count);
    e->byid = e->count = NULL;
}

/* Days from 1970-01-01 to |y|-|m|-|d| of the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void mrcctl_health_age_text(const char *text, time_t now, char *dest, size_t destlen)
{
    int y, mo, d, h, mi, s;
    char t;
    dest[0] = '\0';
    if (sscanf(text, "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &t, &h, &mi, &s) != 7 ||
        (t != 'T' && t != 't') || mo < 1 || mo > 12 || d < 1 || d > 31) {
        return;
    }
    int64_t then = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
    int64_t age = (int64_t)now - then;
    if (age < 0) {
        age = 0; /* the controller's clock is ahead of ours */
    }
    if (age < 120) {
        snprintf(dest, destlen, "%" PRId64 " s ago", age);
    } else if (age < 7200) {
        snprintf(dest, destlen, "%" PRId64 " min ago", age / 60);
    } else if (age < 172800) {
        snprintf(dest, destlen, "%" PRId64 " h ago", age / 3600);
    } else {
        snprintf(dest, destlen, "%" PRId64 " d ago", age / 86400);
    }
}

/* --- health links ------------------------------------------------------------------------ */

/* One source's evidence on a direction: "LOST/SENT" and the loss ("-" for both with nothing
 * sent). */
static void source_text(json_object *s, char *counts, size_t countslen, char *loss, size_t losslen)
{
    int64_t sent = mrcctl_member_int(s, "sent");
    if (sent <= 0) {
        snprintf(counts, countslen, "-");
        snprintf(loss, losslen, "-");
        return;
    }
    snprintf(counts, countslen, "%" PRId64 "/%" PRId64, mrcctl_member_int(s, "lost"), sent);
    mrcctl_health_pct(mrcctl_member_double(s, "loss_rate"), loss, losslen);
}

/* What else a direction says: its measured state where the state was raised above it (by a
 * verdict or a prober's entry naming it), EVs the agents assumed bad. */
static void dir_notes(json_object *d, char *dest, size_t destlen)
{
    json_object *agents = NULL;
    size_t n = 0;
    const char *st = mrcctl_member(d, "state"), *measured = mrcctl_member(d, "measured");
    dest[0] = '\0';
    if (measured[0] && strcmp(st, measured) != 0) {
        n += (size_t)snprintf(dest, destlen, "measured %s", measured);
    }
    json_object_object_get_ex(d, "agents", &agents);
    int64_t bad = agents ? mrcctl_member_int(agents, "assumed_bad_evs")
                         : mrcctl_member_int(d, "assumed_bad_evs");
    if (bad > 0 && n < destlen) {
        snprintf(dest + n, destlen - n, "%s%" PRId64 " EV%s assumed bad", n ? ", " : "", bad,
                 bad == 1 ? "" : "s");
    }
}

/* A direction's row: its cells. */
typedef struct dir_row {
    char acounts[48], aloss[16], asrc[16], pcounts[48], ploss[16], denied[160], notes[96];
} dir_row;

static void dir_row_fill(json_object *l, json_object *d, const char *dir, dir_row *r)
{
    json_object *agents = NULL, *prober = NULL, *denied = NULL;
    json_object_object_get_ex(d, "agents", &agents);
    json_object_object_get_ex(d, "prober", &prober);
    json_object_object_get_ex(l, "denied", &denied);
    source_text(agents, r->acounts, sizeof(r->acounts), r->aloss, sizeof(r->aloss));
    snprintf(r->asrc, sizeof(r->asrc), "%" PRId64, mrcctl_member_int(agents, "sources"));
    source_text(prober, r->pcounts, sizeof(r->pcounts), r->ploss, sizeof(r->ploss));
    mrcctl_health_ids_text(denied, dir, r->denied, sizeof(r->denied));
    if (strcmp(r->denied, "-") == 0 && mrcctl_member_bool(d, "denied")) {
        snprintf(r->denied, sizeof(r->denied), "yes"); /* by an entry past the 16 listed */
    }
    dir_notes(d, r->notes, sizeof(r->notes));
}

/* The later of the two directions' last evidence (RFC 3339 UTC sorts as text), or "". */
static const char *last_evidence(json_object *up, json_object *down)
{
    const char *a = mrcctl_member(up, "last_evidence"), *b = mrcctl_member(down, "last_evidence");
    return strcmp(a, b) >= 0 ? a : b;
}

typedef struct link_widths {
    int link, state, acounts, aloss, asrc, pcounts, ploss, denied;
} link_widths;

static json_object *dir_of(json_object *l, const char *name)
{
    json_object *d = NULL;
    json_object_object_get_ex(l, name, &d);
    return d;
}

/* A direction's row, without the spaces its empty last cells leave. */
static void print_dir_row(const link_widths *w, const char *c1, const char *state, const dir_row *r)
{
    char line[1024];
    int n =
        snprintf(line, sizeof(line), "%-*s  %-*s  %*s  %*s  %*s  %*s  %*s  %-*s  %s", w->link, c1,
                 w->state, state, w->acounts, r->acounts, w->aloss, r->aloss, w->asrc, r->asrc,
                 w->pcounts, r->pcounts, w->ploss, r->ploss, w->denied, r->denied, r->notes);
    while (n > 0 && line[n - 1] == ' ') {
        line[--n] = '\0';
    }
    printf("%s\n", line);
}

void mrcctl_health_print_links(json_object *items, bool entries)
{
    size_t n = json_object_array_length(items);
    link_widths w = {4, 8, 6, 6, 3, 6, 6, 6};
    dir_row r;
    char ev[64], text[1024];
    time_t now = time(NULL);
    if (n == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *l = json_object_array_get_idx(items, i), *denied = NULL;
        w.link = mrcctl_width(w.link, mrcctl_member(l, "link"));
        json_object_object_get_ex(l, "denied", &denied);
        mrcctl_health_ids_text(denied, NULL, text, sizeof(text));
        w.denied = mrcctl_width(w.denied, text);
        for (int k = 0; k < 2; k++) {
            const char *dir = k ? "down" : "up";
            dir_row_fill(l, dir_of(l, dir), dir, &r);
            w.acounts = mrcctl_width(w.acounts, r.acounts);
            w.aloss = mrcctl_width(w.aloss, r.aloss);
            w.asrc = mrcctl_width(w.asrc, r.asrc);
            w.pcounts = mrcctl_width(w.pcounts, r.pcounts);
            w.ploss = mrcctl_width(w.ploss, r.ploss);
            w.denied = mrcctl_width(w.denied, r.denied);
        }
    }
    /* the link's own row spans the evidence columns with the age of its evidence */
    int wevidence = w.acounts + w.aloss + w.asrc + w.pcounts + w.ploss + 8;
    printf("%-*s  %-*s  %*s  %*s  %*s  %*s  %*s  %-*s  NOTES\n", w.link, "LINK", w.state, "STATE",
           w.acounts, "AGENTS", w.aloss, "LOSS", w.asrc, "SRC", w.pcounts, "PROBER", w.ploss,
           "LOSS", w.denied, "DENIED");
    mrcctl_health_entries e;
    mrcctl_health_entries_init(&e);
    for (size_t i = 0; i < n; i++) {
        json_object *l = json_object_array_get_idx(items, i), *denied = NULL, *v = NULL;
        json_object *up = dir_of(l, "up"), *down = dir_of(l, "down");
        char age[32], line[1024];
        mrcctl_health_age_text(last_evidence(up, down), now, age, sizeof(age));
        if (age[0]) {
            snprintf(ev, sizeof(ev), "(evidence %s)", age);
        } else {
            snprintf(ev, sizeof(ev), "(no evidence)");
        }
        json_object_object_get_ex(l, "denied", &denied);
        mrcctl_health_entries_add(&e, denied);
        mrcctl_health_ids_text(denied, NULL, text, sizeof(text));
        /* its measured state, where it differs, is on the rows of its directions */
        int len =
            snprintf(line, sizeof(line), "%-*s  %-*s  %-*s  %s", w.link, mrcctl_member(l, "link"),
                     w.state, mrcctl_member(l, "state"), wevidence, ev, text);
        while (len > 0 && line[len - 1] == ' ') {
            line[--len] = '\0';
        }
        printf("%s\n", line);
        for (int k = 0; k < 2; k++) {
            const char *dir = k ? "down" : "up";
            json_object *d = k ? down : up;
            char c1[16];
            snprintf(c1, sizeof(c1), "  %s", dir);
            dir_row_fill(l, d, dir, &r);
            print_dir_row(&w, c1, mrcctl_member(d, "state"), &r);
        }
        if (json_object_object_get_ex(l, "verdict", &v) && !is_null(v)) {
            mrcctl_health_verdict_text(v, false, text, sizeof(text)); /* its ids are in DENIED */
            printf("  verdict %s\n", text);
        }
    }
    mrcctl_health_entries_print(&e, entries ? "denylist entries in force on these links" : NULL,
                                NULL);
}

static int health_links(mrcctl *c, int n, char **operands)
{
    json_object *doc = NULL;
    int rv = check_filters(c, &hf);
    (void)n;
    (void)operands;
    if (rv != 0 || (rv = mrcctl_health_get_page(c, "links", &hf, &doc)) != 0) {
        return rv;
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    mrcctl_health_print_links(mrcctl_health_items(doc), true);
    mrcctl_health_page_footer(doc, "link", "links");
    json_object_put(doc);
    return MRCCTL_OK;
}

/* --- health switch ----------------------------------------------------------------------- */

/* A switch's links by state: "3 bad, 0 degraded, 1 ok, 0 no_data". */
static void counts_text(json_object *sw, char *dest, size_t destlen)
{
    json_object *links = NULL;
    json_object_object_get_ex(sw, "links", &links);
    snprintf(dest, destlen,
             "%" PRId64 " bad, %" PRId64 " degraded, %" PRId64 " ok, %" PRId64 " no_data",
             mrcctl_member_int(links, "bad"), mrcctl_member_int(links, "degraded"),
             mrcctl_member_int(links, "ok"), mrcctl_member_int(links, "no_data"));
}

/* The switches: each one's state beside its measured state, the entries in force on it, its
 * links by state and the verdict naming it; then each entry in full. */
static void print_switches(json_object *items)
{
    static const char *const keys[4] = {"ok", "degraded", "bad", "no_data"};
    static const char *const heads[4] = {"LINKS OK", "DEGRADED", "BAD", "NO_DATA"};
    size_t n = json_object_array_length(items);
    int wsw = 6, wden = 6, wn[4];
    char text[512], verdict[256], num[24];
    if (n == 0) {
        return;
    }
    for (int k = 0; k < 4; k++) {
        wn[k] = (int)strlen(heads[k]);
    }
    for (size_t i = 0; i < n; i++) {
        json_object *sw = json_object_array_get_idx(items, i), *denied = NULL, *links = NULL;
        wsw = mrcctl_width(wsw, mrcctl_member(sw, "switch"));
        json_object_object_get_ex(sw, "denied", &denied);
        mrcctl_health_ids_text(denied, NULL, text, sizeof(text));
        wden = mrcctl_width(wden, text);
        json_object_object_get_ex(sw, "links", &links);
        for (int k = 0; k < 4; k++) {
            snprintf(num, sizeof(num), "%" PRId64, mrcctl_member_int(links, keys[k]));
            wn[k] = mrcctl_width(wn[k], num);
        }
    }
    printf("%-*s  PLANE  %-8s  %-8s  %-*s  %*s  %*s  %*s  %*s  VERDICT\n", wsw, "SWITCH", "STATE",
           "MEASURED", wden, "DENIED", wn[0], heads[0], wn[1], heads[1], wn[2], heads[2], wn[3],
           heads[3]);
    mrcctl_health_entries e;
    mrcctl_health_entries_init(&e);
    for (size_t i = 0; i < n; i++) {
        json_object *sw = json_object_array_get_idx(items, i), *links = NULL, *denied = NULL;
        json_object *v = NULL;
        json_object_object_get_ex(sw, "links", &links);
        json_object_object_get_ex(sw, "denied", &denied);
        json_object_object_get_ex(sw, "verdict", &v);
        mrcctl_health_entries_add(&e, denied);
        mrcctl_health_ids_text(denied, NULL, text, sizeof(text));
        mrcctl_health_verdict_name(v, false, false, verdict, sizeof(verdict));
        printf("%-*s  %5" PRId64 "  %-8s  %-8s  %-*s  %*" PRId64 "  %*" PRId64 "  %*" PRId64
               "  %*" PRId64 "  %s\n",
               wsw, mrcctl_member(sw, "switch"), mrcctl_member_int(sw, "plane"),
               mrcctl_member(sw, "state"), mrcctl_member(sw, "measured"), wden, text, wn[0],
               mrcctl_member_int(links, keys[0]), wn[1], mrcctl_member_int(links, keys[1]), wn[2],
               mrcctl_member_int(links, keys[2]), wn[3], mrcctl_member_int(links, keys[3]),
               verdict);
    }
    mrcctl_health_entries_print(&e, "denylist entries in force on these switches", NULL);
}

/* One switch: its own state and its links by state; its measured state, the entries in force
 * on it and the verdict naming it; then (without --json) every link of it. */
static int health_one_switch(mrcctl *c, const char *name)
{
    mrcctl_health_filters f = {
        .sw = (char *)name, .plane = NONE, .offset = NONE, .limit = PAGE_MAX};
    json_object *doc = NULL, *links = NULL, *denied = NULL, *v = NULL;
    char counts[160], text[1024];
    int rv = mrcctl_health_get_page(c, "switches", &f, &doc);
    if (rv != 0) {
        return rv;
    }
    json_object *items = mrcctl_health_items(doc), *sw = json_object_array_get_idx(items, 0);
    if (json_object_array_length(items) != 1 || strcmp(mrcctl_member(sw, "switch"), name) != 0) {
        json_object_put(doc);
        return mrcctl_fail(c, MRCCTL_FAIL, NULL,
                           "the controller's answer to mrcctl %s does not hold switch %s", c->cmd,
                           name);
    }
    if (c->json) {
        mrcctl_print_json(json_object_get(sw));
        json_object_put(doc);
        return MRCCTL_OK;
    }
    const char *st = mrcctl_member(sw, "state"), *measured = mrcctl_member(sw, "measured");
    counts_text(sw, counts, sizeof(counts));
    printf("%s, plane %" PRId64 ": %s; its links: %s\n", name, mrcctl_member_int(sw, "plane"), st,
           counts);
    printf("  measured: %s%s\n", measured,
           strcmp(st, measured) != 0 ? " (the state is what a prober's verdict or entry names it)"
                                     : "");
    json_object_object_get_ex(sw, "denied", &denied);
    if (json_object_array_length(denied) == 0) {
        printf("  denied:   no entry in force\n");
    }
    for (size_t i = 0; i < json_object_array_length(denied); i++) {
        mrcctl_health_entry_text(json_object_array_get_idx(denied, i), text, sizeof(text));
        printf("  %s %s\n", i ? "         " : "denied:  ", text);
    }
    json_object_object_get_ex(sw, "verdict", &v);
    if (is_null(v)) {
        printf("  verdict:  none\n");
    } else {
        mrcctl_health_verdict_text(v, true, text, sizeof(text));
        printf("  verdict:  %s\n", text);
    }
    json_object_put(doc);
    if ((rv = mrcctl_health_get_page(c, "links", &f, &links)) != 0) {
        return rv;
    }
    mrcctl_health_print_links(mrcctl_health_items(links), true);
    mrcctl_health_page_footer(links, "link", "links");
    json_object_put(links);
    return MRCCTL_OK;
}

static int health_switch(mrcctl *c, int n, char **operands)
{
    json_object *doc = NULL;
    int rv = check_filters(c, &hf);
    if (rv != 0) {
        return rv;
    }
    if (n == 1) {
        if (hf.state || hf.plane != NONE || hf.offset != NONE || hf.limit != NONE) {
            return mrcctl_usage(c, "a switch's NAME takes no filter (--state, --plane, --offset "
                                   "and --limit list the switches)");
        }
        if (!operands[0][0]) {
            return mrcctl_usage(c, "an empty switch NAME");
        }
        return health_one_switch(c, operands[0]);
    }
    if ((rv = mrcctl_health_get_page(c, "switches", &hf, &doc)) != 0) {
        return rv;
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    print_switches(mrcctl_health_items(doc));
    mrcctl_health_page_footer(doc, "switch", "switches");
    json_object_put(doc);
    return MRCCTL_OK;
}

/* --- the commands ------------------------------------------------------------------------ */

/* clang-format off */
#define OPT_STATE {.name = "state", .kind = UTIL_OPT_STR, .dest = &hf.state, .arg = "STATE", .choices = "ok|degraded|bad|no_data", .help = "only those in this state"}
#define OPT_PLANE {.name = "plane", .kind = UTIL_OPT_UINT, .min = 0, .max = 255, .dest = &hf.plane, .arg = "P", .help = "only those of plane P"}
#define OPT_OFFSET {.name = "offset", .kind = UTIL_OPT_UINT, .min = 0, .max = UINT32_MAX, .dest = &hf.offset, .help = "the page starts after the first N (default 0)"}
#define OPT_LIMIT {.name = "limit", .kind = UTIL_OPT_UINT, .min = 1, .max = PAGE_MAX, .dest = &hf.limit, .help = "at most N on the page (default 100)"}
static const util_opt links_opts[] = {
    OPT_STATE, OPT_PLANE,
    {.name = "switch", .kind = UTIL_OPT_STR, .dest = &hf.sw, .arg = "NAME", .help = "only the links of switch NAME"},
    OPT_OFFSET, OPT_LIMIT, UTIL_OPT_END,
};
static const util_opt switch_opts[] = {OPT_STATE, OPT_PLANE, OPT_OFFSET, OPT_LIMIT, UTIL_OPT_END};
static const util_opt problems_opts[] = {OPT_PLANE, OPT_OFFSET, OPT_LIMIT, UTIL_OPT_END};
/* clang-format on */
static const util_opt *const no_tables[] = {NULL};
static const util_opt *const links_tables[] = {links_opts, NULL};
static const util_opt *const switch_tables[] = {switch_opts, NULL};
static const util_opt *const problems_tables[] = {problems_opts, NULL};

static const util_cli links_cli = {
    .prog = "mrcctl health links",
    .usage = "mrcctl health links [--state STATE] [--plane P] [--switch NAME] [--offset N]\n"
             "                           [--limit N] [OPTIONS]",
    .about = "Lists the T0-T1 links (p0-t0-1~p0-t1-3) and NIC-T0 links (h3:1), a page at a time\n"
             "(the last line says where the next starts). Each link's row has its state, the age\n"
             "of its latest evidence and the denylist entries in force on it or its switches\n"
             "(DENIED: their ids, named in full under the table); then a row per direction (up:\n"
             "toward the T1, or from the host) with its state beside the evidence of each source,\n"
             "lost/sent and loss: the agents' (AGENTS, SRC of them reporting) and the prober's\n"
             "own (PROBER), the entries taking it out of use, and its measured state where a\n"
             "prober's verdict or entry raised the state above it; then the verdict naming the\n"
             "link, if any.",
    .tables = links_tables,
};
static const util_cli switch_cli = {
    .prog = "mrcctl health switch",
    .usage = "mrcctl health switch NAME [OPTIONS]\n"
             "       mrcctl health switch [--state STATE] [--plane P] [--offset N] [--limit N]\n"
             "                            [OPTIONS]",
    .about = "One switch's state and its links by state, its measured state, the denylist\n"
             "entries in force on it and the prober's verdict naming it, then every link of it;\n"
             "or, without NAME, the switches with the same, a page at a time.",
    .tables = switch_tables,
    .max_operands = 1,
    .operands = "NAME",
};
static const util_cli path_cli = {
    .prog = "mrcctl health path",
    .usage = "mrcctl health path HOST:PORT HOST:PORT [OPTIONS]",
    .about = "Every EV between two host ports of one plane (the port is the plane; a bare HOST\n"
             "takes every plane), one a line with its T1, EV and state, each hop's state (FROM\n"
             "the source's NIC link, UP its T0's link to the T1, DOWN the T1's link to the\n"
             "destination's T0, TO the destination's NIC link) and the denylist entries in force\n"
             "that exclude it (EXCLUDED BY); then the lossy links on them as health links shows\n"
             "them, and each entry in full with how many of the paths it excludes. For example:\n"
             "mrcctl health path h3:1 h7:1.",
    .tables = no_tables,
    .max_operands = 2,
    .operands = "HOST:PORT HOST:PORT",
};
static const util_cli summary_cli = {
    .prog = "mrcctl health summary",
    .usage = "mrcctl health summary [OPTIONS]",
    .about = "Each plane's elements bad and degraded (switches, T0-T1 links and host ports),\n"
             "those a denylist entry in force names, and its links, host ports and switches by\n"
             "state; the last line adds up the fabric.",
    .tables = no_tables,
};
static const util_cli problems_cli = {
    .prog = "mrcctl health problems",
    .usage = "mrcctl health problems [--plane P] [--offset N] [--limit N] [OPTIONS]",
    .about =
        "What is wrong now, fabric-wide: every switch, T0-T1 link and host port that is bad\n"
        "or degraded, or that a denylist entry in force names; bad first, then degraded, then\n"
        "denied only. One a line with its kind, plane, state, measured state, loss (a link's\n"
        "lossier direction; a switch's share of links not ok), the entries in force (named\n"
        "in full under the list) and the prober's verdict; a page at a time.",
    .tables = problems_tables,
};

static const mrcctl_cmd health_cmds[] = {
    {.name = "links",
     .summary = "T0-T1 and NIC-T0 links with their health per direction",
     .cli = &links_cli,
     .run = health_links},
    {.name = "switch",
     .alias = "switches",
     .summary = "one switch's health and its links, or the switches'",
     .cli = &switch_cli,
     .run = health_switch},
    {.name = "path",
     .summary = "every EV between two host ports, hop by hop",
     .cli = &path_cli,
     .run = mrcctl_health_path},
    {.name = "summary",
     .summary = "each plane's elements by state, and how many are denied",
     .cli = &summary_cli,
     .run = mrcctl_health_summary},
    {.name = "problems",
     .summary = "every element bad, degraded or denied, bad first",
     .cli = &problems_cli,
     .run = mrcctl_health_problems},
    {.name = NULL},
};

const mrcctl_cmd mrcctl_health_cmd = {
    .name = "health",
    .summary = "Shows the controller's view of the fabric's health (any role reads it).",
    .subs = health_cmds,
};
