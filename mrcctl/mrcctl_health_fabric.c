/* SPDX-License-Identifier: MIT */
/* mrcctl health path|summary|problems: the EVs between two hosts with what excludes them, and
 * the fabric-wide views (each plane by state; everything bad, degraded or denied). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl_health.h"

/* A whole number of at most 10 digits. */
static bool is_count(const char *s)
{
    size_t n = strspn(s, "0123456789");
    return n > 0 && n <= 10 && s[n] == '\0';
}

/* --- health path ------------------------------------------------------------------------- */

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

/* The hops of an EV by place: the source's NIC link, its T0's link to the T1 (NULL under one
 * T0), the T1's link to the destination's T0 (NULL too) and the destination's NIC link. */
static void hops_of(json_object *ev, json_object *hop[4])
{
    json_object *hops = NULL;
    json_object_object_get_ex(ev, "hops", &hops);
    size_t n = json_object_array_length(hops);
    hop[0] = n > 0 ? json_object_array_get_idx(hops, 0) : NULL;
    hop[1] = n == 4 ? json_object_array_get_idx(hops, 1) : NULL;
    hop[2] = n == 4 ? json_object_array_get_idx(hops, 2) : NULL;
    hop[3] = n > 1 ? json_object_array_get_idx(hops, n - 1) : NULL;
}

static const char *hop_state(json_object *hop)
{
    return hop ? mrcctl_member(hop, "state") : "-";
}

/* The state of the direction an EV crosses at hop column |k|: the source's port and its T0's
 * uplink up, the far T0's link and the receiver's port down. */
static const char *crossed_state(json_object *hop, int k)
{
    json_object *dir;
    if (!hop || !json_object_object_get_ex(hop, k < 2 ? "up" : "down", &dir)) {
        return "-";
    }
    return mrcctl_member(dir, "state");
}

/* The EV's excluding entries in a cell of at most |width| characters: "#12 (p0-t1-1,
 * operator: drain: ...)", cut with "..." (the footer names each in full); "-" for none. */
static void excluded_text(json_object *ev, int width, char *dest, size_t destlen)
{
    json_object *denied = NULL;
    char one[1024];
    size_t n = 0;
    dest[0] = '\0';
    json_object_object_get_ex(ev, "denied", &denied);
    for (size_t i = 0; i < json_object_array_length(denied) && n < destlen; i++) {
        mrcctl_health_entry_text(json_object_array_get_idx(denied, i), one, sizeof(one));
        n += (size_t)snprintf(dest + n, destlen - n, "%s%s", n ? ", " : "", one);
    }
    if (!dest[0]) {
        snprintf(dest, destlen, "%s", mrcctl_member_bool(ev, "excluded") ? "yes" : "-");
        return;
    }
    size_t len = strlen(dest);
    if (width > 3 && len > (size_t)width && (size_t)width < destlen) {
        size_t cut = (size_t)width - 3;
        while (cut > 0 && ((unsigned char)dest[cut] & 0xC0) == 0x80) {
            cut--; /* not inside a UTF-8 character */
        }
        snprintf(dest + cut, destlen - cut, "...");
    }
}

/* "h0:1, UP p1-t0-0~T1, ..." for the EVs of one plane, from its first EV's hops. */
static void legend_text(json_object *ev, char *dest, size_t destlen)
{
    json_object *hop[4];
    hops_of(ev, hop);
    const char *from = mrcctl_member(hop[0], "link"), *to = mrcctl_member(hop[3], "link");
    if (!hop[1]) {
        snprintf(dest, destlen, "FROM %s, TO %s (under one T0: no T1)", from, to);
        return;
    }
    const char *up = mrcctl_member(hop[1], "link"), *down = mrcctl_member(hop[2], "link");
    snprintf(dest, destlen, "FROM %s, UP %.*s~T1, DOWN %.*s~T1, TO %s", from, (int)strcspn(up, "~"),
             up, (int)strcspn(down, "~"), down, to);
}

/* The EVs, one a line: plane, T1, EV, state, each hop's state and the entries that exclude
 * it; then what each hop column is, the lossy links on them as health links shows them, and
 * each excluding entry in full with how many of the paths it excludes. */
static void print_path(json_object *doc, const char *from, const char *to, int plane)
{
    static const char *const heads[4] = {"FROM", "UP", "DOWN", "TO"};
    json_object *evs = NULL;
    json_object_object_get_ex(doc, "evs", &evs);
    size_t n = json_object_array_length(evs), nbad = 0, ndeg = 0, nexcl = 0;
    int wt1 = 2, wst = 5, wh[4];
    for (int k = 0; k < 4; k++) {
        wh[k] = (int)strlen(heads[k]);
    }
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_object_array_get_idx(evs, i), *hop[4];
        const char *st = mrcctl_member(ev, "state");
        nbad += strcmp(st, "bad") == 0;
        ndeg += strcmp(st, "degraded") == 0;
        nexcl += mrcctl_member_bool(ev, "excluded");
        wt1 = mrcctl_width(wt1, mrcctl_member(ev, "t1"));
        wst = mrcctl_width(wst, st);
        hops_of(ev, hop);
        for (int k = 0; k < 4; k++) {
            wh[k] = mrcctl_width(wh[k], crossed_state(hop[k], k));
        }
    }
    printf("%s -> %s: ", from, to);
    if (plane >= 0) {
        printf("plane %d, ", plane);
    }
    printf("%zu path%s, %zu bad, %zu degraded, %zu excluded\n", n, n == 1 ? "" : "s", nbad, ndeg,
           nexcl);
    if (n == 0) {
        if (plane >= 0) {
            printf("(%s or %s is not cabled in plane %d)\n", from, to, plane);
        }
        return;
    }
    int col = 5 + 2 + wt1 + 2 + 10 + 2 + wst + 2;
    for (int k = 0; k < 4; k++) {
        col += wh[k] + 2;
    }
    int budget = MRCCTL_HEALTH_COLUMNS - col < 24 ? 24 : MRCCTL_HEALTH_COLUMNS - col;
    printf("PLANE  %-*s  %-10s  %-*s  %-*s  %-*s  %-*s  %-*s  EXCLUDED BY\n", wt1, "T1", "EV", wst,
           "STATE", wh[0], heads[0], wh[1], heads[1], wh[2], heads[2], wh[3], heads[3]);
    json_object *lossy = json_object_new_object(); /* link name -> hop, each once */
    mrcctl_health_entries excl;
    mrcctl_health_entries_init(&excl);
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_object_array_get_idx(evs, i), *hop[4], *v, *denied = NULL;
        char evtext[16] = "-", cell[1024];
        if (json_object_object_get_ex(ev, "ev", &v)) {
            snprintf(evtext, sizeof(evtext), "0x%08" PRIx64, (uint64_t)json_object_get_int64(v));
        }
        const char *t1 = mrcctl_member(ev, "t1");
        hops_of(ev, hop);
        excluded_text(ev, budget, cell, sizeof(cell));
        printf("%5" PRId64 "  %-*s  %-10s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n",
               mrcctl_member_int(ev, "plane"), wt1, t1[0] ? t1 : "-", evtext, wst,
               mrcctl_member(ev, "state"), wh[0], crossed_state(hop[0], 0), wh[1],
               crossed_state(hop[1], 1), wh[2], crossed_state(hop[2], 2), wh[3],
               crossed_state(hop[3], 3), cell);
        json_object_object_get_ex(ev, "denied", &denied);
        mrcctl_health_entries_add(&excl, denied);
        for (int k = 0; k < 4; k++) {
            const char *st = hop_state(hop[k]);
            if (hop[k] && (strcmp(st, "bad") == 0 || strcmp(st, "degraded") == 0)) {
                json_object_object_add(lossy, mrcctl_member(hop[k], "link"),
                                       json_object_get(hop[k]));
            }
        }
    }
    /* what each hop column is, once per plane */
    int64_t shown = -1;
    for (size_t i = 0; i < n; i++) {
        json_object *ev = json_object_array_get_idx(evs, i);
        char legend[512];
        if (mrcctl_member_int(ev, "plane") != shown) {
            shown = mrcctl_member_int(ev, "plane");
            legend_text(ev, legend, sizeof(legend));
            printf("hops of plane %" PRId64 ": %s\n", shown, legend);
        }
    }
    if (json_object_object_length(lossy) > 0) {
        json_object *list = json_object_new_array();
        json_object_object_foreach(lossy, name, hop)
        {
            (void)name;
            json_object_array_add(list, json_object_get(hop));
        }
        printf("lossy links on these paths:\n");
        mrcctl_health_print_links(list, false);
        json_object_put(list);
    }
    json_object_put(lossy);
    mrcctl_health_entries_print(&excl, "denylist entries in force that exclude these paths",
                                "path");
}

int mrcctl_health_path(mrcctl *c, int n, char **operands)
{
    path_end a, b;
    char path[512];
    json_object *doc = NULL, *evs;
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
    snprintf(path, sizeof(path), MRCCTL_HEALTH "/path");
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
                           "the controller's answer to mrcctl %s has no evs (GET %s" MRCCTL_HEALTH
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

/* --- health summary ---------------------------------------------------------------------- */

#define NKINDS 3
static const char *const kind_keys[NKINDS] = {"links", "host_ports", "switches"};
static const char *const kind_names[NKINDS] = {"links", "host ports", "switches"};
static const char *const state_keys[4] = {"ok", "degraded", "bad", "no_data"};
static const char *const state_heads[4] = {"OK", "DEGRADED", "BAD", "NO_DATA"};

static int digits(int w, int64_t v)
{
    char num[24];
    snprintf(num, sizeof(num), "%" PRId64, v);
    return mrcctl_width(w, num);
}

/* Each plane: its elements bad, degraded and denied, then a row per kind of element with its
 * count in each state; the last line adds the planes up. */
static void print_summary(json_object *doc)
{
    json_object *planes = NULL;
    json_object_object_get_ex(doc, "planes", &planes);
    size_t n = json_object_array_length(planes);
    int wbad = 3, wdeg = 8, wden = 6, ws[4];
    int64_t bad = 0, deg = 0, den = 0;
    for (int k = 0; k < 4; k++) {
        ws[k] = (int)strlen(state_heads[k]);
    }
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(planes, i);
        wbad = digits(wbad, mrcctl_member_int(p, "bad"));
        wdeg = digits(wdeg, mrcctl_member_int(p, "degraded"));
        wden = digits(wden, mrcctl_member_int(p, "denied"));
        for (int k = 0; k < NKINDS; k++) {
            json_object *counts = NULL;
            json_object_object_get_ex(p, kind_keys[k], &counts);
            for (int s = 0; s < 4; s++) {
                ws[s] = digits(ws[s], mrcctl_member_int(counts, state_keys[s]));
            }
        }
    }
    printf("PLANE  %*s  %*s  %*s  %-10s  %*s  %*s  %*s  %*s\n", wbad, "BAD", wdeg, "DEGRADED", wden,
           "DENIED", "ELEMENTS", ws[0], state_heads[0], ws[1], state_heads[1], ws[2],
           state_heads[2], ws[3], state_heads[3]);
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(planes, i);
        bad += mrcctl_member_int(p, "bad");
        deg += mrcctl_member_int(p, "degraded");
        den += mrcctl_member_int(p, "denied");
        for (int k = 0; k < NKINDS; k++) {
            json_object *counts = NULL;
            json_object_object_get_ex(p, kind_keys[k], &counts);
            if (k == 0) {
                printf("%5" PRId64 "  %*" PRId64 "  %*" PRId64 "  %*" PRId64 "  ",
                       mrcctl_member_int(p, "plane"), wbad, mrcctl_member_int(p, "bad"), wdeg,
                       mrcctl_member_int(p, "degraded"), wden, mrcctl_member_int(p, "denied"));
            } else {
                printf("%*s", 5 + 2 + wbad + 2 + wdeg + 2 + wden + 2, "");
            }
            printf("%-10s", kind_names[k]);
            for (int s = 0; s < 4; s++) {
                printf("  %*" PRId64, ws[s], mrcctl_member_int(counts, state_keys[s]));
            }
            printf("\n");
        }
    }
    printf("%zu plane%s: %" PRId64 " bad, %" PRId64 " degraded, %" PRId64 " denied (version %s)\n",
           n, n == 1 ? "" : "s", bad, deg, den, mrcctl_member(doc, "version"));
}

int mrcctl_health_summary(mrcctl *c, int n, char **operands)
{
    json_object *doc = NULL, *planes;
    (void)n;
    (void)operands;
    int rv = mrcctl_api_call(c, "GET", MRCCTL_HEALTH "/summary", NULL, 200, 0, NULL, &doc);
    if (rv != 0) {
        return rv;
    }
    if (!doc || !json_object_object_get_ex(doc, "planes", &planes) ||
        !json_object_is_type(planes, json_type_array)) {
        json_object_put(doc);
        return mrcctl_fail(
            c, MRCCTL_FAIL, NULL,
            "the controller's answer to mrcctl %s has no planes (GET %s" MRCCTL_HEALTH "/summary)",
            c->cmd, c->controller);
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    print_summary(doc);
    json_object_put(doc);
    return MRCCTL_OK;
}

/* --- health problems --------------------------------------------------------------------- */

/* A problem's loss: a link's lossier direction, or a switch's share of its links not ok. */
static void problem_loss(json_object *it, char *dest, size_t destlen)
{
    double rate = mrcctl_member_double(it, "loss_rate");
    if (strcmp(mrcctl_member(it, "kind"), "switch") == 0) {
        snprintf(dest, destlen, "%.0f%% links", 100.0 * rate);
    } else {
        mrcctl_health_pct(rate, dest, destlen);
    }
}

static void print_problems(json_object *items)
{
    size_t n = json_object_array_length(items);
    int wel = 7, wkind = 4, wst = 5, wmeas = 8, wloss = 4, wden = 6;
    char loss[32], ids[256], verdict[256];
    if (n == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i), *denied = NULL;
        wel = mrcctl_width(wel, mrcctl_member(it, "element"));
        wkind = mrcctl_width(wkind, mrcctl_member(it, "kind"));
        wst = mrcctl_width(wst, mrcctl_member(it, "state"));
        wmeas = mrcctl_width(wmeas, mrcctl_member(it, "measured"));
        problem_loss(it, loss, sizeof(loss));
        wloss = mrcctl_width(wloss, loss);
        json_object_object_get_ex(it, "denied", &denied);
        mrcctl_health_ids_text(denied, NULL, ids, sizeof(ids));
        wden = mrcctl_width(wden, ids);
    }
    printf("%-*s  %-*s  PLANE  %-*s  %-*s  %*s  %-*s  VERDICT\n", wel, "ELEMENT", wkind, "KIND",
           wst, "STATE", wmeas, "MEASURED", wloss, "LOSS", wden, "DENIED");
    mrcctl_health_entries e;
    mrcctl_health_entries_init(&e);
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i), *denied = NULL, *v = NULL;
        json_object_object_get_ex(it, "denied", &denied);
        json_object_object_get_ex(it, "verdict", &v);
        mrcctl_health_entries_add(&e, denied);
        problem_loss(it, loss, sizeof(loss));
        mrcctl_health_ids_text(denied, NULL, ids, sizeof(ids));
        mrcctl_health_verdict_name(v, false, false, verdict, sizeof(verdict));
        printf("%-*s  %-*s  %5" PRId64 "  %-*s  %-*s  %*s  %-*s  %s\n", wel,
               mrcctl_member(it, "element"), wkind, mrcctl_member(it, "kind"),
               mrcctl_member_int(it, "plane"), wst, mrcctl_member(it, "state"), wmeas,
               mrcctl_member(it, "measured"), wloss, loss, wden, ids, verdict);
    }
    mrcctl_health_entries_print(&e, "denylist entries in force on these elements", NULL);
}

int mrcctl_health_problems(mrcctl *c, int n, char **operands)
{
    json_object *doc = NULL;
    const mrcctl_health_filters *f = &mrcctl_health_opt;
    (void)n;
    (void)operands;
    int rv = mrcctl_health_get_page(c, "problems", f, &doc);
    if (rv != 0) {
        return rv;
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    print_problems(mrcctl_health_items(doc));
    if (mrcctl_member_int(doc, "total") == 0) {
        printf("nothing is wrong");
        if (f->plane != MRCCTL_HEALTH_NONE) {
            printf(" in plane %" PRIu64, f->plane);
        }
        printf(": no element is bad, degraded or denied\n");
    } else {
        mrcctl_health_page_footer(doc, "problem", "problems");
    }
    json_object_put(doc);
    return MRCCTL_OK;
}
