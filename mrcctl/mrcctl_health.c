/* SPDX-License-Identifier: MIT */
/* mrcctl health links|switch|path: the controller's view of the fabric's health over its REST
 * API (the calls and their faults: mrcctl_client.c), as tables or, with --json, the API's
 * documents. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"

#define HEALTH "/api/v1/health"
/* the API's largest page: a switch's links fit in one (a T1 has radix of them) */
#define PAGE_MAX 1000

/* The filters of the lists: --state, --plane, --switch, --offset, --limit (NONE: not given). */
#define NONE UINT64_MAX
typedef struct filters {
    char *state, *sw;
    uint64_t plane, offset, limit;
} filters;

static filters hf = {.plane = NONE, .offset = NONE, .limit = NONE};

/* A whole number of at most 10 digits. */
static bool is_count(const char *s)
{
    size_t n = strspn(s, "0123456789");
    return n > 0 && n <= 10 && s[n] == '\0';
}

static int check_filters(mrcctl *c, const filters *f)
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

/* GETs HEALTH/|resource| with the filters as its query: a page {total, offset, items} into
 * |*pdoc|. */
static int get_page(mrcctl *c, const char *resource, const filters *f, json_object **pdoc)
{
    char path[1024];
    json_object *items;
    snprintf(path, sizeof(path), HEALTH "/%s", resource);
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
                           "the controller's answer to mrcctl %s has no items (GET %s" HEALTH
                           "/%s)",
                           c->cmd, c->controller, resource);
    }
    return MRCCTL_OK;
}

static json_object *items_of(json_object *doc)
{
    json_object *items;
    json_object_object_get_ex(doc, "items", &items);
    return items;
}

/* The page's last line: how many, and where the next page starts. */
static void print_page_footer(json_object *doc, const char *one, const char *many)
{
    uint64_t total = (uint64_t)mrcctl_member_int(doc, "total");
    uint64_t offset = (uint64_t)mrcctl_member_int(doc, "offset");
    uint64_t n = json_object_array_length(items_of(doc));
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

/* One direction of a link: "LOST/SENT" and the loss in percent ("-" with nothing sent). */
static void dir_text(json_object *d, char *counts, size_t countslen, char *loss, size_t losslen)
{
    json_object *v;
    int64_t sent = mrcctl_member_int(d, "sent");
    snprintf(counts, countslen, "%" PRId64 "/%" PRId64, mrcctl_member_int(d, "lost"), sent);
    if (sent > 0 && json_object_object_get_ex(d, "loss_rate", &v)) {
        snprintf(loss, losslen, "%.3f%%", 100.0 * json_object_get_double(v));
    } else {
        snprintf(loss, losslen, "-");
    }
}

/* What else a link's directions say: probes, EVs assumed bad. */
static void notes_text(json_object *up, json_object *down, char *dest, size_t destlen)
{
    json_object *dirs[2] = {up, down};
    const char *names[2] = {"up", "down"};
    size_t n = 0;
    dest[0] = '\0';
    for (int i = 0; i < 2; i++) {
        int64_t bad = mrcctl_member_int(dirs[i], "assumed_bad_evs");
        if (mrcctl_member_bool(dirs[i], "probed") && n < destlen) {
            n += (size_t)snprintf(dest + n, destlen - n, "%sprobed %s", n ? ", " : "", names[i]);
        }
        if (bad > 0 && n < destlen) {
            n += (size_t)snprintf(dest + n, destlen - n, "%s%" PRId64 " EV%s assumed bad %s",
                                  n ? ", " : "", bad, bad == 1 ? "" : "s", names[i]);
        }
    }
    if (!dest[0]) {
        snprintf(dest, destlen, "-");
    }
}

/* The later of the two directions' last evidence (RFC 3339 UTC sorts as text), or "-". */
static const char *last_text(json_object *up, json_object *down)
{
    const char *a = mrcctl_member(up, "last_evidence"), *b = mrcctl_member(down, "last_evidence");
    const char *t = strcmp(a, b) >= 0 ? a : b;
    return t[0] ? t : "-";
}

typedef struct link_row {
    char plane[16], ucounts[48], uloss[16], dcounts[48], dloss[16], sources[32], notes[160];
    json_object *up, *down;
} link_row;

static void link_row_fill(json_object *l, link_row *r)
{
    if (!json_object_object_get_ex(l, "up", &r->up)) {
        r->up = NULL;
    }
    if (!json_object_object_get_ex(l, "down", &r->down)) {
        r->down = NULL;
    }
    snprintf(r->plane, sizeof(r->plane), "%" PRId64, mrcctl_member_int(l, "plane"));
    dir_text(r->up, r->ucounts, sizeof(r->ucounts), r->uloss, sizeof(r->uloss));
    dir_text(r->down, r->dcounts, sizeof(r->dcounts), r->dloss, sizeof(r->dloss));
    snprintf(r->sources, sizeof(r->sources), "%" PRId64 "/%" PRId64,
             mrcctl_member_int(r->up, "sources"), mrcctl_member_int(r->down, "sources"));
    notes_text(r->up, r->down, r->notes, sizeof(r->notes));
}

/* The links of a page as a table: per direction (up toward the T1, or from the host) its
 * state, lost/sent and loss, then the reporters of each, the latest evidence and notes. */
static void print_links(json_object *items)
{
    size_t n = json_object_array_length(items);
    link_row r;
    int wl = 4, wp = 5, ws = 8, wuc = 9, wul = 7, wdc = 9, wdl = 7, wsrc = 7, wlast = 13;
    if (n == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *l = json_object_array_get_idx(items, i);
        link_row_fill(l, &r);
        wl = mrcctl_width(wl, mrcctl_member(l, "link"));
        wp = mrcctl_width(wp, r.plane);
        wuc = mrcctl_width(wuc, r.ucounts);
        wul = mrcctl_width(wul, r.uloss);
        wdc = mrcctl_width(wdc, r.dcounts);
        wdl = mrcctl_width(wdl, r.dloss);
        wsrc = mrcctl_width(wsrc, r.sources);
        wlast = mrcctl_width(wlast, last_text(r.up, r.down));
    }
    printf("%-*s  %*s  %-*s  %-*s  %*s  %*s  %-*s  %*s  %*s  %-*s  %-*s  %s\n", wl, "LINK", wp,
           "PLANE", ws, "STATE", ws, "UP", wuc, "LOST/SENT", wul, "LOSS", ws, "DOWN", wdc,
           "LOST/SENT", wdl, "LOSS", wsrc, "SOURCES", wlast, "LAST EVIDENCE", "NOTES");
    for (size_t i = 0; i < n; i++) {
        json_object *l = json_object_array_get_idx(items, i);
        link_row_fill(l, &r);
        printf("%-*s  %*s  %-*s  %-*s  %*s  %*s  %-*s  %*s  %*s  %-*s  %-*s  %s\n", wl,
               mrcctl_member(l, "link"), wp, r.plane, ws, mrcctl_member(l, "state"), ws,
               mrcctl_member(r.up, "state"), wuc, r.ucounts, wul, r.uloss, ws,
               mrcctl_member(r.down, "state"), wdc, r.dcounts, wdl, r.dloss, wsrc, r.sources, wlast,
               last_text(r.up, r.down), r.notes);
    }
}

static int health_links(mrcctl *c, int n, char **operands)
{
    json_object *doc;
    int rv = check_filters(c, &hf);
    (void)n;
    (void)operands;
    if (rv != 0 || (rv = get_page(c, "links", &hf, &doc)) != 0) {
        return rv;
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    print_links(items_of(doc));
    print_page_footer(doc, "link", "links");
    json_object_put(doc);
    return MRCCTL_OK;
}

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

static void print_switches(json_object *items)
{
    size_t n = json_object_array_length(items);
    int wsw = 6;
    if (n == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        wsw = mrcctl_width(wsw, mrcctl_member(json_object_array_get_idx(items, i), "switch"));
    }
    printf("%-*s  %5s  %-8s  %8s  %8s  %8s  %8s\n", wsw, "SWITCH", "PLANE", "STATE", "LINKS OK",
           "DEGRADED", "BAD", "NO_DATA");
    for (size_t i = 0; i < n; i++) {
        json_object *sw = json_object_array_get_idx(items, i), *links = NULL;
        json_object_object_get_ex(sw, "links", &links);
        printf("%-*s  %5" PRId64 "  %-8s  %8" PRId64 "  %8" PRId64 "  %8" PRId64 "  %8" PRId64 "\n",
               wsw, mrcctl_member(sw, "switch"), mrcctl_member_int(sw, "plane"),
               mrcctl_member(sw, "state"), mrcctl_member_int(links, "ok"),
               mrcctl_member_int(links, "degraded"), mrcctl_member_int(links, "bad"),
               mrcctl_member_int(links, "no_data"));
    }
}

/* One switch: its own state and its links by state, then (without --json) every link. */
static int health_one_switch(mrcctl *c, const char *name)
{
    filters f = {.sw = (char *)name, .plane = NONE, .offset = NONE, .limit = PAGE_MAX};
    json_object *doc, *links;
    char counts[160];
    int rv = get_page(c, "switches", &f, &doc);
    if (rv != 0) {
        return rv;
    }
    json_object *items = items_of(doc), *sw = json_object_array_get_idx(items, 0);
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
    counts_text(sw, counts, sizeof(counts));
    printf("%s, plane %" PRId64 ": %s; its links: %s\n", name, mrcctl_member_int(sw, "plane"),
           mrcctl_member(sw, "state"), counts);
    json_object_put(doc);
    if ((rv = get_page(c, "links", &f, &links)) != 0) {
        return rv;
    }
    print_links(items_of(links));
    print_page_footer(links, "link", "links");
    json_object_put(links);
    return MRCCTL_OK;
}

static int health_switch(mrcctl *c, int n, char **operands)
{
    json_object *doc;
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
    if ((rv = get_page(c, "switches", &hf, &doc)) != 0) {
        return rv;
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    print_switches(items_of(doc));
    print_page_footer(doc, "switch", "switches");
    json_object_put(doc);
    return MRCCTL_OK;
}

/* A path's end: "HOST:PORT" (the port is the plane) or "HOST" (every plane). */
typedef struct path_end {
    char host[96];
    int port; /* -1: none given */
} path_end;

static int parse_end(mrcctl *c, const char *text, path_end *e)
{
    const char *colon = strchr(text, ':');
    size_t hlen = colon ? (size_t)(colon - text) : strlen(text);
    e->port = -1;
    if (hlen == 0 || hlen >= sizeof(e->host) || (colon && !is_count(colon + 1)) ||
        (colon && strlen(colon + 1) > 3)) {
        return mrcctl_usage(c,
                            "'%s' is not a host port: want HOST:PORT (h3:1; the port is the "
                            "plane) or a HOST",
                            text);
    }
    for (size_t i = 0; i < hlen; i++) {
        if (isspace((unsigned char)text[i]) || text[i] == '~') {
            return mrcctl_usage(c, "'%s' is not a host port: want HOST:PORT (h3:1) or a HOST",
                                text);
        }
    }
    memcpy(e->host, text, hlen);
    e->host[hlen] = '\0';
    if (colon) {
        e->port = atoi(colon + 1);
    }
    return MRCCTL_OK;
}

/* Keeps the EVs of plane |plane| in |doc|'s evs; returns how many are left. */
static size_t keep_plane(json_object *doc, int plane)
{
    json_object *evs, *kept = json_object_new_array();
    json_object_object_get_ex(doc, "evs", &evs);
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        json_object *ev = json_object_array_get_idx(evs, i);
        if (mrcctl_member_int(ev, "plane") == plane) {
            json_object_array_add(kept, json_object_get(ev));
        }
    }
    size_t n = json_object_array_length(kept);
    json_object_object_add(doc, "evs", kept);
    return n;
}

/* The EVs, one a line: plane, T1, EV, state and each hop with its state; then the lossy links
 * on them, each once, per direction. */
static void print_path(json_object *doc, const char *from, const char *to, int plane)
{
    json_object *evs = NULL;
    json_object_object_get_ex(doc, "evs", &evs);
    size_t n = json_object_array_length(evs), nbad = 0, ndeg = 0;
    int wt1 = 2;
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_object_array_get_idx(evs, i);
        const char *st = mrcctl_member(ev, "state");
        nbad += strcmp(st, "bad") == 0;
        ndeg += strcmp(st, "degraded") == 0;
        wt1 = mrcctl_width(wt1, mrcctl_member(ev, "t1"));
    }
    printf("%s -> %s: ", from, to);
    if (plane >= 0) {
        printf("plane %d, ", plane);
    }
    printf("%zu path%s, %zu bad, %zu degraded\n", n, n == 1 ? "" : "s", nbad, ndeg);
    if (n == 0) {
        if (plane >= 0) {
            printf("(%s or %s is not cabled in plane %d)\n", from, to, plane);
        }
        return;
    }
    printf("%5s  %-*s  %-10s  %-8s  %s\n", "PLANE", wt1, "T1", "EV", "STATE", "HOPS");
    json_object *lossy = json_object_new_object(); /* link name -> hop, each once */
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_object_array_get_idx(evs, i), *hops = NULL, *v;
        char evtext[16] = "-";
        if (json_object_object_get_ex(ev, "ev", &v)) {
            snprintf(evtext, sizeof(evtext), "0x%08" PRIx64, (uint64_t)json_object_get_int64(v));
        }
        const char *t1 = mrcctl_member(ev, "t1");
        printf("%5" PRId64 "  %-*s  %-10s  %-8s  ", mrcctl_member_int(ev, "plane"), wt1,
               t1[0] ? t1 : "-", evtext, mrcctl_member(ev, "state"));
        json_object_object_get_ex(ev, "hops", &hops);
        for (size_t k = 0; k < json_object_array_length(hops); k++) {
            json_object *hop = json_object_array_get_idx(hops, k);
            const char *st = mrcctl_member(hop, "state");
            printf("%s%s %s", k ? " > " : "", mrcctl_member(hop, "link"), st);
            if (strcmp(st, "bad") == 0 || strcmp(st, "degraded") == 0) {
                json_object_object_add(lossy, mrcctl_member(hop, "link"), json_object_get(hop));
            }
        }
        printf("\n");
    }
    if (json_object_object_length(lossy) > 0) {
        printf("lossy links on these paths:\n");
        json_object_object_foreach(lossy, name, hop)
        {
            json_object *up = NULL, *down = NULL;
            char counts[48], loss[16];
            json_object_object_get_ex(hop, "up", &up);
            json_object_object_get_ex(hop, "down", &down);
            printf("  %s %s:", name, mrcctl_member(hop, "state"));
            dir_text(up, counts, sizeof(counts), loss, sizeof(loss));
            printf(" up %s (%s lost, %s)", mrcctl_member(up, "state"), counts, loss);
            dir_text(down, counts, sizeof(counts), loss, sizeof(loss));
            printf(", down %s (%s lost, %s)\n", mrcctl_member(down, "state"), counts, loss);
        }
    }
    json_object_put(lossy);
}

static int health_path(mrcctl *c, int n, char **operands)
{
    path_end a, b;
    char path[512];
    json_object *doc, *evs;
    int rv;
    if (n < 2) {
        return mrcctl_usage(c, "%s",
                            n == 0 ? "HOST:PORT HOST:PORT are missing"
                                   : "the second HOST:PORT is missing");
    }
    if ((rv = parse_end(c, operands[0], &a)) != 0 || (rv = parse_end(c, operands[1], &b)) != 0) {
        return rv;
    }
    if (a.port >= 0 && b.port >= 0 && a.port != b.port) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "%s and %s are on different planes (%d and %d): a path stays in its "
                           "plane, so the ports must be the same",
                           operands[0], operands[1], a.port, b.port);
    }
    int plane = a.port >= 0 ? a.port : b.port;
    snprintf(path, sizeof(path), HEALTH "/path");
    if (mrcctl_query_add(path, sizeof(path), "from", a.host) != 0 ||
        mrcctl_query_add(path, sizeof(path), "to", b.host) != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "the host names are too long");
    }
    if ((rv = mrcctl_api_call(c, "GET", path, NULL, 200, 0, NULL, &doc)) != 0) {
        return rv;
    }
    if (!doc || !json_object_object_get_ex(doc, "evs", &evs) ||
        !json_object_is_type(evs, json_type_array)) {
        json_object_put(doc);
        return mrcctl_fail(c, MRCCTL_FAIL, NULL,
                           "the controller's answer to mrcctl %s has no evs (GET %s" HEALTH
                           "/path)",
                           c->cmd, c->controller);
    }
    if (plane >= 0 && keep_plane(doc, plane) == 0) {
        /* no EV in that plane: a port the hosts do not have, or one not cabled */
        json_object *fabric;
        if ((rv = mrcctl_api_call(c, "GET", "/api/v1/fabric", NULL, 200, 0, NULL, &fabric)) != 0) {
            json_object_put(doc);
            return rv;
        }
        int64_t planes = mrcctl_member_int(fabric, "planes");
        if (plane >= planes) {
            rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                             "'%s:%d' is no host port of fabric '%s': its ports are 0 to %" PRId64
                             ", one per plane",
                             a.port >= 0 ? a.host : b.host, plane, mrcctl_member(fabric, "name"),
                             planes - 1);
            json_object_put(fabric);
            json_object_put(doc);
            return rv;
        }
        json_object_put(fabric);
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    char from[128], to[128];
    if (plane >= 0) {
        snprintf(from, sizeof(from), "%s:%d", a.host, plane);
        snprintf(to, sizeof(to), "%s:%d", b.host, plane);
    } else {
        snprintf(from, sizeof(from), "%s", a.host);
        snprintf(to, sizeof(to), "%s", b.host);
    }
    print_path(doc, from, to, plane);
    json_object_put(doc);
    return MRCCTL_OK;
}

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
/* clang-format on */
static const util_opt *const no_tables[] = {NULL};
static const util_opt *const links_tables[] = {links_opts, NULL};
static const util_opt *const switch_tables[] = {switch_opts, NULL};

static const util_cli links_cli = {
    .prog = "mrcctl health links",
    .usage = "mrcctl health links [--state STATE] [--plane P] [--switch NAME] [--offset N]\n"
             "                           [--limit N] [OPTIONS]",
    .about = "Lists the T0-T1 links (p0-t0-1~p0-t1-3) and NIC-T0 links (h3:1) with each\n"
             "direction's state (up: toward the T1, or from the host), lost/sent, loss, reporters\n"
             "and latest evidence, a page at a time (the last line says where the next starts).",
    .tables = links_tables,
};
static const util_cli switch_cli = {
    .prog = "mrcctl health switch",
    .usage = "mrcctl health switch NAME [OPTIONS]\n"
             "       mrcctl health switch [--state STATE] [--plane P] [--offset N] [--limit N]\n"
             "                            [OPTIONS]",
    .about = "One switch's own state and then every link of it; or, without NAME, the switches\n"
             "with their links counted by state, a page at a time.",
    .tables = switch_tables,
    .max_operands = 1,
    .operands = "NAME",
};
static const util_cli path_cli = {
    .prog = "mrcctl health path",
    .usage = "mrcctl health path HOST:PORT HOST:PORT [OPTIONS]",
    .about = "Every EV between two host ports of one plane (the port is the plane; a bare HOST\n"
             "takes every plane), one a line with its T1, EV and state and each hop's state, then\n"
             "the lossy links on them per direction. For example: mrcctl health path h3:1 h7:1.",
    .tables = no_tables,
    .max_operands = 2,
    .operands = "HOST:PORT HOST:PORT",
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
     .run = health_path},
    {.name = NULL},
};

const mrcctl_cmd mrcctl_health_cmd = {
    .name = "health",
    .summary = "Shows the controller's view of the fabric's health (any role reads it).",
    .subs = health_cmds,
};
