/* SPDX-License-Identifier: MIT */
/* The REST API under /api/v1: routing, validation, and the resources the store and the
 * fabric model answer. Every input is checked before it reaches the store. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_api.h"
#include "ctl_element.h"
#include "ctl_profile.h"
#include "util_httpd.h"
#include "ctl_roles.h"

#define PREFIX "/api/v1"
#define PAGE_MAX 1000
#define DENY_PAGE 100 /* a page of the denylist: 88 kB at most (881 bytes an entry) */

static pthread_mutex_t deny_lock = PTHREAD_MUTEX_INITIALIZER;

/* A problem document (RFC 9457) of |status| saying |detail|, as every server of ours writes
 * it; callers may add members. */
static json_object *problem_obj(int status, const char *instance, const char *detail)
{
    return util_httpd_problem_obj(status, instance, detail);
}

/* |j| (consumed) as the body, of content type |ctype|. */
static void send_body(ctl_resp *r, int status, const char *ctype, json_object *j)
{
    const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    r->status = status;
    r->ctype = ctype;
    r->len = strlen(s);
    r->body = util_xstrdup(s);
    json_object_put(j);
}

void ctl_api_problem(ctl_resp *r, int status, const char *instance, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    send_body(r, status, "application/problem+json", problem_obj(status, instance, detail));
}

/* |j| (consumed) as the response body. */
static void send_json(ctl_resp *r, int status, json_object *j)
{
    send_body(r, status, "application/json", j);
}

int ctl_api_admit(const char *method, const char *path, const util_token *who, char *detail,
                  size_t len)
{
    if (!who) {
        snprintf(detail, len, "a valid bearer token is needed (Authorization: Bearer TOKEN)");
        return 401;
    }
    unsigned mask;
    if (ctl_roles_need(method, path, &mask, NULL) == 0 && !(mask & CTL_ROLE_BIT(who->role))) {
        char names[96];
        ctl_roles_names(mask, names, sizeof(names));
        snprintf(detail, len, "the %s role of '%s' may not %s %s; it takes %s",
                 util_role_name(who->role), who->name, method, path, names);
        return 403;
    }
    return 0;
}

static bool admitted(const ctl_req *q, ctl_resp *r)
{
    char detail[512];
    int status = ctl_api_admit(q->method, q->path, q->who, detail, sizeof(detail));
    if (status != 0) {
        ctl_api_problem(r, status, q->path, "%s", detail);
        return false;
    }
    return true;
}

/* A whole number query argument in [lo, hi], |def| when absent; false after a problem. */
static bool arg_uint(const ctl_req *q, ctl_resp *r, const char *name, uint64_t def, uint64_t lo,
                     uint64_t hi, uint64_t *out)
{
    const char *v = q->arg ? q->arg(q->arg_user, name) : NULL;
    if (!v) {
        *out = def;
        return true;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || x < lo || x > hi) {
        ctl_api_problem(r, 400, q->path,
                        "query argument '%s' must be a whole number from %" PRIu64 " to %" PRIu64
                        ", not '%s'",
                        name, lo, hi, v);
        return false;
    }
    *out = x;
    return true;
}

/* A boolean query argument (true, false, 1, 0), false when absent; false after a problem. */
static bool arg_bool(const ctl_req *q, ctl_resp *r, const char *name, bool *out)
{
    const char *v = q->arg ? q->arg(q->arg_user, name) : NULL;
    *out = v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
    if (v && !*out && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
        ctl_api_problem(r, 400, q->path, "query argument '%s' must be true or false, not '%s'",
                        name, v);
        return false;
    }
    return true;
}

static const char *tier_name(fab_tier t)
{
    return t == FAB_TIER_T0 ? "t0" : "t1";
}

static json_object *switch_json(const ctl_ctx *c, uint32_t sw, const fab_switch *s)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "name", json_object_new_string(s->name));
    json_object_object_add(j, "plane", json_object_new_int((int)s->plane));
    json_object_object_add(j, "tier", json_object_new_string(tier_name(s->tier)));
    json_object_object_add(j, "index", json_object_new_int((int)s->index));
    json_object_object_add(j, "ports", json_object_new_int((int)s->nports));
    char usid[8];
    snprintf(usid, sizeof(usid), "%04x", s->usid);
    json_object_object_add(j, "usid", json_object_new_string(usid));
    size_t nroutes = 0;
    fab_tables_routes(c->tables, sw, &nroutes);
    json_object_object_add(j, "routes", json_object_new_int64((int64_t)nroutes));
    return j;
}

static void get_fabric(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    (void)q;
    json_object *j = json_object_new_object();
    json_object_object_add(j, "name", json_object_new_string(fab_topo_name(c->topo)));
    json_object_object_add(j, "planes", json_object_new_int((int)fab_topo_planes(c->topo)));
    json_object_object_add(j, "hosts", json_object_new_int64(fab_topo_nhosts(c->topo)));
    json_object_object_add(j, "switches", json_object_new_int64(fab_topo_nswitches(c->topo)));
    json_object_object_add(j, "cables", json_object_new_int64((int64_t)fab_topo_ncables(c->topo)));
    json_object_object_add(j, "missing_cables",
                           json_object_new_int64((int64_t)fab_topo_nmissing(c->topo)));
    json_object_object_add(j, "routes",
                           json_object_new_int64((int64_t)fab_tables_nroutes(c->tables)));
    json_object *per = json_object_new_array();
    for (unsigned p = 0; p < fab_topo_planes(c->topo); p++) {
        json_object *pj = json_object_new_object();
        json_object_object_add(pj, "plane", json_object_new_int((int)p));
        json_object_object_add(pj, "t0", json_object_new_int64(fab_topo_nt0(c->topo, p)));
        json_object_object_add(pj, "t1", json_object_new_int64(fab_topo_nt1(c->topo, p)));
        json_object_array_add(per, pj);
    }
    json_object_object_add(j, "per_plane", per);
    json_object_object_add(j, "denylist_version",
                           json_object_new_int64(ctl_store_version(c->store)));
    send_json(r, 200, j);
}

static void get_switches(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    uint64_t plane, offset, limit;
    const char *tier = q->arg ? q->arg(q->arg_user, "tier") : NULL;
    if (!arg_uint(q, r, "plane", UINT32_MAX, 0, fab_topo_planes(c->topo) - 1, &plane) ||
        !arg_uint(q, r, "offset", 0, 0, UINT32_MAX, &offset) ||
        !arg_uint(q, r, "limit", 100, 1, PAGE_MAX, &limit)) {
        return;
    }
    if (tier && strcmp(tier, "t0") != 0 && strcmp(tier, "t1") != 0) {
        ctl_api_problem(r, 400, q->path, "query argument 'tier' must be t0 or t1, not '%s'", tier);
        return;
    }
    json_object *items = json_object_new_array();
    uint64_t matched = 0;
    for (uint32_t sw = 0; sw < fab_topo_nswitches(c->topo); sw++) {
        fab_switch s;
        if (fab_switch_get(c->topo, sw, &s) != 0 || (plane != UINT32_MAX && s.plane != plane) ||
            (tier && strcmp(tier, tier_name(s.tier)) != 0)) {
            continue;
        }
        if (matched >= offset && matched < offset + limit) {
            json_object_array_add(items, switch_json(c, sw, &s));
        }
        matched++;
    }
    json_object *j = json_object_new_object();
    json_object_object_add(j, "total", json_object_new_int64((int64_t)matched));
    json_object_object_add(j, "offset", json_object_new_int64((int64_t)offset));
    json_object_object_add(j, "items", items);
    send_json(r, 200, j);
}

static void get_switch(ctl_ctx *c, const ctl_req *q, ctl_resp *r, const char *name, bool table)
{
    uint32_t sw = fab_switch_find(c->topo, name);
    fab_switch s;
    if (sw == FAB_NONE || fab_switch_get(c->topo, sw, &s) != 0) {
        ctl_api_problem(r, 404, q->path, "no switch is called '%s' in fabric '%s'", name,
                        fab_topo_name(c->topo));
        return;
    }
    if (!table) {
        send_json(r, 200, switch_json(c, sw, &s));
        return;
    }
    const char *fname = q->arg ? q->arg(q->arg_user, "format") : NULL;
    int fmt = fab_format_parse(fname ? fname : "json");
    if (fmt < 0) {
        ctl_api_problem(r, 400, q->path,
                        "query argument 'format' must be json, iproute2, sonic or frr, not '%s'",
                        fname);
        return;
    }
    util_buf out = {0};
    int rv = fab_render_switch(c->topo, c->tables, sw, (fab_format)fmt, util_buf_put, &out);
    if (rv != 0) {
        free(out.s);
        ctl_api_problem(r, 500, q->path, "rendering the table of %s failed: %s", name,
                        fab_strerror(rv));
        return;
    }
    r->status = 200;
    r->ctype = fmt == FAB_FMT_JSON || fmt == FAB_FMT_SONIC ? "application/json"
                                                           : "text/plain; charset=utf-8";
    r->body = out.s ? out.s : util_xstrdup("");
    r->len = out.len;
}

/* Whether |element| is in the fabric and |scope| fits it. */
static bool element_ok(const ctl_ctx *c, const char *element, const char *scope, char *why,
                       size_t whylen)
{
    ctl_element el;
    if (ctl_element_parse(c->topo, element, &el, why, whylen) != 0) {
        return false;
    }
    if (el.kind == CTL_EL_SWITCH && strcmp(scope, "both") != 0) {
        snprintf(why, whylen, "a switch is denied whole: scope must be 'both'");
        return false;
    }
    return true;
}

/* A string member of at most |max| - 1 bytes, |def| when absent; false with |why| set. */
static bool member_str(json_object *o, const char *key, const char *def, char *dest, size_t max,
                       char *why, size_t whylen)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) {
        if (!def) {
            snprintf(why, whylen, "'%s' is required", key);
            return false;
        }
        snprintf(dest, max, "%s", def);
        return true;
    }
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(why, whylen, "'%s' must be a string", key);
        return false;
    }
    const char *s = json_object_get_string(v);
    size_t len = strlen(s);
    if (len == 0 || len >= max) {
        snprintf(why, whylen, "'%s' must be 1 to %zu characters", key, max - 1);
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)s[i] < 0x20) {
            snprintf(why, whylen, "'%s' must not hold control characters", key);
            return false;
        }
    }
    memcpy(dest, s, len + 1);
    return true;
}

/* The body as one strict JSON document (a new reference), or NULL with a sentence. */
static json_object *body_json(const ctl_req *q, char *why, size_t whylen)
{
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(tok, q->body ? q->body : "", (int)q->bodylen);
    bool whole = json_tokener_get_error(tok) == json_tokener_success &&
                 json_tokener_get_parse_end(tok) == q->bodylen;
    json_tokener_free(tok);
    if (!o || !whole || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        snprintf(why, whylen, "the body must be one JSON object");
        return NULL;
    }
    return o;
}

/* 0, or the status of the fault (400 malformed, 422 well formed but not of this fabric) with
 * a sentence in |why|. */
static int parse_deny(const ctl_ctx *c, const ctl_req *q, ctl_deny *d, char *why, size_t whylen)
{
    static const char *const keys[] = {"element", "scope", "reason", "window", NULL};
    memset(d, 0, sizeof(*d));
    int status = 400;
    json_object *o = body_json(q, why, whylen);
    if (!o) {
        goto out;
    }
    json_object_object_foreach(o, key, val)
    {
        (void)val;
        bool known = false;
        for (const char *const *k = keys; *k; k++) {
            known |= strcmp(*k, key) == 0;
        }
        if (!known) {
            snprintf(why, whylen, "unknown member '%s' (element, scope, reason, window)", key);
            goto out;
        }
    }
    if (!member_str(o, "element", NULL, d->element, sizeof(d->element), why, whylen) ||
        !member_str(o, "scope", "both", d->scope, sizeof(d->scope), why, whylen) ||
        !member_str(o, "reason", NULL, d->reason, sizeof(d->reason), why, whylen)) {
        goto out;
    }
    if (strcmp(d->scope, "both") != 0 && strcmp(d->scope, "up") != 0 &&
        strcmp(d->scope, "down") != 0) {
        snprintf(why, whylen, "'scope' must be both, up or down, not '%s'", d->scope);
        goto out;
    }
    if (!element_ok(c, d->element, d->scope, why, whylen)) {
        status = 422;
        goto out;
    }
    json_object *w;
    if (json_object_object_get_ex(o, "window", &w)) {
        json_object *ws, *we;
        if (!json_object_is_type(w, json_type_object) ||
            !json_object_object_get_ex(w, "start", &ws) ||
            !json_object_object_get_ex(w, "end", &we) ||
            !json_object_is_type(ws, json_type_string) ||
            !json_object_is_type(we, json_type_string) || json_object_object_length(w) != 2) {
            snprintf(why, whylen, "'window' must be {\"start\": TIME, \"end\": TIME}");
            goto out;
        }
        d->start = ctl_time_parse(json_object_get_string(ws));
        d->end = ctl_time_parse(json_object_get_string(we));
        if (d->start < 0 || d->end < 0) {
            snprintf(why, whylen, "window times must be RFC 3339 UTC, like 2026-11-30T02:00:00Z");
            goto out;
        }
        if (d->end <= d->start) {
            snprintf(why, whylen, "the window must end after it starts");
            goto out;
        }
        if (d->end <= ctl_now_ms()) {
            snprintf(why, whylen,
                     "the window ended before now: an entry for it would never be in force");
            goto out;
        }
    }
    status = 0;
out:
    json_object_put(o);
    return status;
}

/* Whether entry |e| is in force at some time that |d| would be: entries that never meet a
 * window cannot add up with it. */
static bool overlaps(const ctl_deny *e, const ctl_deny *d, int64_t now)
{
    int64_t from = d->start ? d->start : now, to = d->end ? d->end : INT64_MAX;
    return !(e->end && e->end <= from) && !(e->start && e->start >= to);
}

static unsigned scope_dirs(const char *scope)
{
    return strcmp(scope, "up") == 0 ? 1 : strcmp(scope, "down") == 0 ? 2 : 3;
}

/* The blast radius of adding |d| (checked) to the entries it could meet. 0 or -EIO. */
static int blast(ctl_ctx *c, const ctl_deny *d, ctl_blast_result *res)
{
    ctl_deny *all;
    size_t n, k = 0;
    if (ctl_store_deny_all(c->store, &all, &n) != 0) {
        return -EIO;
    }
    ctl_blast_entry *v = util_xcalloc(n + 1, sizeof(*v)), add = {.dirs = scope_dirs(d->scope)};
    int64_t now = ctl_now_ms();
    char why[256];
    for (size_t i = 0; i < n; i++) {
        /* an entry the fabric no longer has (a new topology) denies nothing */
        if (overlaps(&all[i], d, now) &&
            ctl_element_parse(c->topo, all[i].element, &v[k].el, why, sizeof(why)) == 0) {
            v[k++].dirs = scope_dirs(all[i].scope);
        }
    }
    ctl_element_parse(c->topo, d->element, &add.el, why, sizeof(why));
    ctl_blast_eval(c->blast, v, k, &add, c->floor, res);
    free(v);
    free(all);
    return 0;
}

/* GET /api/v1/denylist: without limit or after the whole list with its version in one
 * answer, which is what the agents and the localizer fetch (a list read page by page could
 * mix two versions; --max-entries keeps the whole far under an agent's 64 MiB); with either, a
 * page for people and their tools, "next" the cursor for after= (null on the last page). */
static void bound_refused(const ctl_req *q, ctl_resp *r, size_t max)
{
    ctl_api_problem(r, 409, q->path,
                    "the denylist holds its limit of %zu entries (--max-entries); nothing was "
                    "changed: remove entries no longer needed first",
                    max);
}

static void get_denylist(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    bool paged = q->arg && (q->arg(q->arg_user, "limit") || q->arg(q->arg_user, "after"));
    uint64_t after, limit;
    if (!arg_uint(q, r, "after", 0, 0, INT64_MAX, &after) ||
        !arg_uint(q, r, "limit", DENY_PAGE, 1, PAGE_MAX, &limit)) {
        return;
    }
    /* the version first: a change after it moves the version past it, so a client that
     * compares never takes stale entries for new */
    int64_t epoch = ctl_store_epoch(c->store), version = ctl_store_version(c->store), next = 0;
    json_object *entries = paged ? ctl_store_deny_page(c->store, (int64_t)after,
                                                       (unsigned)limit, &next)
                                 : ctl_store_deny_list(c->store);
    if (!entries) {
        ctl_api_problem(r, 503, q->path, "the store could not be read");
        return;
    }
    json_object *j = json_object_new_object();
    json_object_object_add(j, "version", json_object_new_int64(version));
    /* the leader that wrote it: a client orders views by (epoch, version) */
    json_object_object_add(j, "epoch", json_object_new_int64(epoch));
    json_object_object_add(j, "entries", entries);
    if (paged) {
        json_object_object_add(j, "next", next ? json_object_new_int64(next) : NULL);
    }
    send_json(r, 200, j);
}

static void denylist(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    if (strcmp(q->method, "GET") == 0) {
        get_denylist(c, q, r);
        return;
    }
    if (strcmp(q->method, "POST") != 0) {
        ctl_api_problem(r, 405, q->path, "%s takes GET or POST", q->path);
        return;
    }
    bool dry, force;
    if (!arg_bool(q, r, "dry_run", &dry) || !arg_bool(q, r, "force", &force)) {
        return;
    }
    if (force && !dry && !ctl_roles_allow_q("POST", q->path, "force=true", q->who->role)) {
        char names[96];
        unsigned mask = 0;
        size_t n;
        const ctl_route *t = ctl_roles_table(&n);
        for (size_t i = 0; i < n; i++) {
            mask |= t[i].qualifier && strcmp(t[i].qualifier, "force=true") == 0 ? t[i].roles : 0;
        }
        ctl_roles_names(mask, names, sizeof(names));
        ctl_api_problem(r, 403, q->path,
                        "the %s role of '%s' may not add an entry with force=true; it takes %s",
                        util_role_name(q->who->role), q->who->name, names);
        return;
    }
    ctl_deny d;
    char why[256];
    int status = parse_deny(c, q, &d, why, sizeof(why));
    if (status != 0) {
        ctl_api_problem(r, status, q->path, "%s", why);
        return;
    }
    snprintf(d.author, sizeof(d.author), "%s", q->who->name);
    /* the localizer's entries are the prober's, as its node tokens' are */
    bool by_prober = q->who->role == UTIL_ROLE_PROBER || q->who->role == UTIL_ROLE_LOCALIZER;
    snprintf(d.source, sizeof(d.source), "%s", by_prober ? "prober" : "operator");
    /* the check and the add are one step, or two entries each fine alone could pass together */
    pthread_mutex_lock(&deny_lock);
    ctl_blast_result br;
    ctl_deny same;
    int found = dry ? 0 : ctl_store_deny_find(c->store, &d, &same);
    size_t max = c->max_entries;
    if (found < 0) {
        ctl_api_problem(r, 503, q->path, "the store could not be read; nothing was changed");
    } else if (found) {
        /* the same request again (a retry, a second drain) is the entry it made */
        send_json(r, 200, ctl_deny_json(&same, ctl_now_ms()));
    } else if (!dry && max && ctl_store_deny_count(c->store) >= max) {
        bound_refused(q, r, max);
    } else if (blast(c, &d, &br) != 0) {
        ctl_api_problem(r, 503, q->path, "the store could not be read; nothing was changed");
    } else if (dry) {
        json_object *j = json_object_new_object(), *e = ctl_deny_json(&d, ctl_now_ms());
        json_object_object_del(e, "id");
        json_object_object_del(e, "created");
        json_object_object_add(j, "entry", e);
        json_object_object_add(j, "blast_radius", ctl_blast_json(c->blast, &br));
        json_object_object_add(j, "refused", json_object_new_boolean(br.below_floor > 0));
        send_json(r, 200, j);
    } else if (br.below_floor > 0 && !force) {
        char detail[400];
        snprintf(detail, sizeof(detail),
                 "denying %s would leave %" PRIu64 " host pairs below the capacity floor of "
                 "%.0f %% (the least left: %.1f %%); nothing was changed; an operator may add it "
                 "with force=true",
                 d.element, br.below_floor, c->floor * 100, br.min_left * 100);
        json_object *j = problem_obj(409, q->path, detail);
        json_object_object_add(j, "blast_radius", ctl_blast_json(c->blast, &br));
        send_body(r, 409, "application/problem+json", j);
    } else {
        d.forced = br.below_floor > 0;
        char why2[512];
        int rv = ctl_change_add(c, &d, why2, sizeof(why2));
        if (rv == -EDQUOT) {
            bound_refused(q, r, max);
        } else if (rv == -EPERM || rv == -EAGAIN) {
            ctl_api_problem(r, 503, q->path, "%s; the entry was not committed", why2);
        } else if (rv != 0) {
            ctl_api_problem(r, 503, q->path, "%s; the entry was not committed; nothing was changed",
                            ctl_store_strerror(rv));
        } else {
            atomic_fetch_add(&c->metrics.denylist_changes, 1);
            ctl_api_denylist_changed(c);
            send_json(r, 201, ctl_deny_json(&d, ctl_now_ms()));
        }
    }
    pthread_mutex_unlock(&deny_lock);
}

int ctl_change_add(ctl_ctx *c, ctl_deny *d, char *err, size_t errlen)
{
    if (!c->ha) {
        return ctl_store_deny_add(c->store, d);
    }
    if (c->max_entries && ctl_store_deny_count(c->store) >= c->max_entries) {
        return -EDQUOT;
    }
    ctl_change ch = {.op = CTL_CHANGE_ADD, .entry = *d};
    int rv = ctl_ha_commit(c->ha, &ch, err, errlen);
    if (rv == 0) {
        *d = ch.entry;
    } else if (rv == -EAGAIN) {
        char why[400];
        snprintf(why, sizeof(why), "%s", err);
        snprintf(err, errlen, "etcd cannot commit changes now (%s)", why);
    } else if (rv == -EPERM) {
        snprintf(err, errlen, "this controller has just lost the lead; retry at the leader");
    }
    return rv;
}

int ctl_change_del(ctl_ctx *c, int64_t id, const char *actor, const char *source, char *err,
                   size_t errlen)
{
    if (!c->ha) {
        return ctl_store_deny_del_if(c->store, id, actor, source);
    }
    /* the owner checked on the leader's store, which holds the log's every change: a removal
     * racing it fails the version's compare in etcd */
    json_object *e = ctl_store_deny_get(c->store, id), *src = NULL;
    if (!e) {
        return -ENOENT;
    }
    bool other = source && json_object_object_get_ex(e, "source", &src) &&
                 strcmp(json_object_get_string(src), source) != 0;
    json_object_put(e);
    if (other) {
        return -EPERM;
    }
    ctl_change ch = {.op = CTL_CHANGE_REMOVE, .id = id};
    snprintf(ch.actor, sizeof(ch.actor), "%s", actor);
    int rv = ctl_ha_commit(c->ha, &ch, err, errlen);
    if (rv == -EAGAIN) {
        char why[400];
        snprintf(why, sizeof(why), "%s", err);
        snprintf(err, errlen, "etcd cannot commit changes now (%s)", why);
    } else if (rv == -EPERM) {
        snprintf(err, errlen, "this controller has just lost the lead; retry at the leader");
        rv = -ENOTCONN; /* not the caller's permission */
    }
    return rv;
}

int ctl_change_tick(ctl_ctx *c, int64_t now)
{
    if (!c->ha) {
        return ctl_store_window_tick(c->store, now);
    }
    /* the leader ticks for all, and only when a window starts or ends */
    int n = ctl_store_window_due(c->store, now);
    if (n <= 0 || !ctl_ha_leading(c->ha)) {
        return n < 0 ? n : 0;
    }
    ctl_change ch = {.op = CTL_CHANGE_TICK};
    char err[512];
    int rv = ctl_ha_commit(c->ha, &ch, err, sizeof(err));
    if (rv != 0) {
        util_log(UTIL_LOG_WARNING, "a maintenance window's tick was not committed: %s", err);
        return 0;
    }
    return n;
}

void ctl_api_denylist_changed(ctl_ctx *c)
{
    if (c->health && c->store && ctl_health_denials(c->health, c->store, ctl_now_ms()) != 0) {
        util_log(UTIL_LOG_WARNING, "the health views could not read the denylist's entries");
    }
    if (c->changed) {
        c->changed(c->changed_user);
    }
}

static void deny_one(ctl_ctx *c, const ctl_req *q, ctl_resp *r, const char *idtext)
{
    char *end;
    errno = 0;
    long long id = strtoll(idtext, &end, 10);
    if (!*idtext || *end || errno || id <= 0) {
        ctl_api_problem(r, 404, q->path, "'%s' is no denylist entry id", idtext);
        return;
    }
    if (strcmp(q->method, "GET") == 0) {
        json_object *j = ctl_store_deny_get(c->store, id);
        if (!j) {
            ctl_api_problem(r, 404, q->path, "there is no denylist entry %lld", id);
            return;
        }
        send_json(r, 200, j);
        return;
    }
    if (strcmp(q->method, "DELETE") != 0) {
        ctl_api_problem(r, 405, q->path, "%s takes GET or DELETE", q->path);
        return;
    }
    ctl_own own;
    bool probers_only = ctl_roles_own(q->method, q->path, q->who->role, &own) &&
                        own == CTL_OWN_PROBER;
    char why[512];
    int rv = ctl_change_del(c, id, q->who->name, probers_only ? "prober" : NULL, why, sizeof(why));
    if (rv == -EAGAIN || rv == -ENOTCONN) {
        ctl_api_problem(r, 503, q->path, "%s; the removal was not committed", why);
        return;
    }
    if (rv == -EPERM) {
        ctl_api_problem(r, 403, q->path,
                        "the %s role of '%s' may remove only prober entries, and entry %lld is an "
                        "operator's; an operator or admin may remove it",
                        util_role_name(q->who->role), q->who->name, id);
        return;
    }
    if (rv == -ENOENT) {
        ctl_api_problem(r, 404, q->path, "there is no denylist entry %lld", id);
        return;
    }
    if (rv != 0) {
        ctl_api_problem(r, 503, q->path, "%s; the removal was not committed; nothing was changed",
                        ctl_store_strerror(rv));
        return;
    }
    atomic_fetch_add(&c->metrics.denylist_changes, 1);
    ctl_api_denylist_changed(c);
    r->status = 204;
    r->ctype = "application/json";
    r->body = util_xstrdup("");
    r->len = 0;
}

static void get_audit(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    uint64_t after, limit;
    if (!arg_uint(q, r, "after", 0, 0, INT64_MAX, &after) ||
        !arg_uint(q, r, "limit", 100, 1, PAGE_MAX, &limit)) {
        return;
    }
    json_object *a = ctl_store_audit(c->store, (int64_t)after, (unsigned)limit);
    if (!a) {
        ctl_api_problem(r, 503, q->path, "the store could not be read");
        return;
    }
    json_object *j = json_object_new_object();
    json_object_object_add(j, "records", a);
    send_json(r, 200, j);
}

/* A token its row holds to its own host (an agent's, a prober node's) speaks only for the host
 * its name names. */
static bool own_host(const ctl_req *q, const char *host, char *why, size_t whylen)
{
    ctl_own own;
    if (!ctl_roles_own(q->method, q->path, q->who->role, &own) || own != CTL_OWN_HOST ||
        strcmp(host, q->who->name) == 0) {
        return true;
    }
    snprintf(why, whylen, "the token of '%s' may report only as '%s', not as '%s'", q->who->name,
             q->who->name, host);
    return false;
}

/* POST /api/v1/reports (an agent's) or /api/v1/probes (a prober's): evidence for the health
 * engine, counted only when the whole of it is good. */
static void post_evidence(ctl_ctx *c, const ctl_req *q, ctl_resp *r, bool probes)
{
    if (strcmp(q->method, "POST") != 0) {
        ctl_api_problem(r, 405, q->path, "%s takes POST only", q->path);
        return;
    }
    char why[256];
    json_object *o = body_json(q, why, sizeof(why)), *h;
    const char *host =
        o && json_object_object_get_ex(o, "host", &h) && json_object_is_type(h, json_type_string)
            ? json_object_get_string(h)
            : NULL;
    ctl_report_sum sum;
    int64_t now = ctl_now_ms();
    int status = 400;
    if (o && probes) {
        status = ctl_health_probes(c->health, o, q->who->name, now, why, sizeof(why));
    } else if (o) {
        if (!host) {
            snprintf(why, sizeof(why), "the report names no 'host' (a string)");
        } else if (!own_host(q, host, why, sizeof(why))) {
            status = 403;
        } else if ((status = ctl_agents_report_check(c->topo, o, &sum, why, sizeof(why))) == 0) {
            status = ctl_health_report(c->health, o, q->who->name, now, why, sizeof(why));
        }
        if (status == 0 && c->agents) {
            ctl_agents_report_note(c->agents, host, &sum, now);
        }
    }
    json_object_put(o);
    if (status) {
        ctl_api_problem(r, status, q->path, "%s", why);
        return;
    }
    atomic_fetch_add(&c->metrics.reports, 1);
    send_json(r, 202, json_object_new_object());
}

/* /api/v1/agents: GET lists the registered agents, POST registers one (an agent as its own
 * host, or an admin as any). */
static void agents(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    bool get = strcmp(q->method, "GET") == 0;
    if (!get && strcmp(q->method, "POST") != 0) {
        ctl_api_problem(r, 405, q->path, "%s takes GET or POST", q->path);
        return;
    }
    if (!c->agents) {
        ctl_api_problem(r, 503, q->path, "this controller keeps no agent registry");
        return;
    }
    if (get) {
        uint64_t offset, limit;
        if (arg_uint(q, r, "offset", 0, 0, UINT32_MAX, &offset) &&
            arg_uint(q, r, "limit", UINT32_MAX, 1, UINT32_MAX, &limit)) {
            send_json(r, 200, ctl_agents_list(c->agents, offset, limit, ctl_now_ms()));
        }
        return;
    }
    char why[256];
    ctl_own own;
    bool own_only = ctl_roles_own(q->method, q->path, q->who->role, &own) && own == CTL_OWN_HOST;
    json_object *o = body_json(q, why, sizeof(why)), *out = NULL;
    int status = o ? ctl_agents_register(c->agents, o, own_only ? q->who->name : NULL,
                                         ctl_now_ms(), &out, why, sizeof(why))
                   : 400;
    json_object_put(o);
    if (status) {
        ctl_api_problem(r, status, q->path, "%s", why);
        return;
    }
    send_json(r, 200, out);
}

/* GET /api/v1/agents/{host} */
static void get_agent(ctl_ctx *c, const ctl_req *q, ctl_resp *r, const char *host)
{
    json_object *j;
    if (!c->agents) {
        ctl_api_problem(r, 503, q->path, "this controller keeps no agent registry");
    } else if (fab_host_find(c->topo, host) == FAB_NONE) {
        ctl_api_problem(r, 404, q->path, "no host is called '%s'", host);
    } else if (!(j = ctl_agents_get(c->agents, host, ctl_now_ms()))) {
        ctl_api_problem(r, 404, q->path, "the agent of '%s' has not registered", host);
    } else {
        send_json(r, 200, j);
    }
}

static void get_health(ctl_ctx *c, const ctl_req *q, ctl_resp *r, const char *what)
{
    int64_t now = ctl_now_ms();
    if (strcmp(what, "path") == 0) {
        const char *from = q->arg ? q->arg(q->arg_user, "from") : NULL;
        const char *to = q->arg ? q->arg(q->arg_user, "to") : NULL;
        uint32_t a = from ? fab_host_find(c->topo, from) : FAB_NONE;
        uint32_t b = to ? fab_host_find(c->topo, to) : FAB_NONE;
        if (!from || !to) {
            ctl_api_problem(r, 400, q->path, "want from=HOST&to=HOST");
        } else if (a == FAB_NONE || b == FAB_NONE) {
            ctl_api_problem(r, 404, q->path, "'%s' is no host of fabric '%s'",
                            a == FAB_NONE ? from : to, fab_topo_name(c->topo));
        } else {
            send_json(r, 200, ctl_health_path(c->health, a, b, now));
        }
        return;
    }
    if (strcmp(what, "history") == 0) {
        const char *el = q->arg ? q->arg(q->arg_user, "element") : NULL;
        json_object *j;
        char why[256];
        if (!el) {
            ctl_api_problem(r, 400, q->path,
                            "want element=NAME (a switch, a link A~B or a host port)");
        } else if (ctl_health_history(c->health, el, now, &j, why, sizeof(why)) != 0) {
            ctl_api_problem(r, 404, q->path, "%s", why);
        } else {
            send_json(r, 200, j);
        }
        return;
    }
    uint64_t plane;
    if (strcmp(what, "summary") == 0) {
        r->status = 200;
        r->ctype = "application/json";
        r->body = ctl_health_summary_text(c->health, now, &r->len);
        return;
    }
    if (strcmp(what, "matrix") == 0) {
        if (!q->arg || !q->arg(q->arg_user, "plane")) {
            ctl_api_problem(r, 400, q->path, "want plane=P (0 to %u)", fab_topo_planes(c->topo) - 1);
            return;
        }
        if (!arg_uint(q, r, "plane", 0, 0, fab_topo_planes(c->topo) - 1, &plane)) {
            return;
        }
        const char *inm = q->header ? q->header(q->arg_user, "If-None-Match") : NULL;
        int rv = ctl_health_matrix(c->health, (unsigned)plane, inm, now, r->etag,
                                   sizeof(r->etag), &r->body, &r->len);
        r->status = rv == 1 ? 304 : 200;
        r->ctype = "application/json";
        if (rv == 1) {
            r->body = util_xstrdup("");
            r->len = 0;
        }
        return;
    }
    ctl_link_filter f = {.sw = FAB_NONE};
    const char *sw = q->arg ? q->arg(q->arg_user, "switch") : NULL;
    f.state = q->arg ? q->arg(q->arg_user, "state") : NULL;
    if (!arg_uint(q, r, "plane", UINT32_MAX, 0, fab_topo_planes(c->topo) - 1, &plane) ||
        !arg_uint(q, r, "offset", 0, 0, UINT32_MAX, &f.offset) ||
        !arg_uint(q, r, "limit", 100, 1, PAGE_MAX, &f.limit)) {
        return;
    }
    f.plane = (unsigned)plane;
    if (f.state && strcmp(f.state, "ok") != 0 && strcmp(f.state, "degraded") != 0 &&
        strcmp(f.state, "bad") != 0 && strcmp(f.state, "no_data") != 0) {
        ctl_api_problem(r, 400, q->path,
                        "query argument 'state' must be ok, degraded, bad or no_data, not '%s'",
                        f.state);
        return;
    }
    if (sw && (f.sw = fab_switch_find(c->topo, sw)) == FAB_NONE) {
        ctl_api_problem(r, 404, q->path, "no switch is called '%s'", sw);
        return;
    }
    if (strcmp(what, "problems") == 0) {
        r->status = 200;
        r->ctype = "application/json";
        r->body = ctl_health_problems_text(c->health, f.plane, f.offset, f.limit, now, &r->len);
        return;
    }
    if (strcmp(what, "links") == 0) { /* the busiest query, written out as text */
        r->status = 200;
        r->ctype = "application/json";
        r->body = ctl_health_links_text(c->health, &f, now, &r->len);
        return;
    }
    send_json(r, 200,
              strcmp(what, "hosts") == 0 ? ctl_health_hosts(c->health, &f, now)
                                         : ctl_health_switches(c->health, &f, now));
}

/* GET /api/v1/cluster: the controllers, which leads, and this one's part */
static void get_cluster(ctl_ctx *c, ctl_resp *r)
{
    if (c->ha) {
        send_json(r, 200, ctl_ha_cluster_json(c->ha));
        return;
    }
    json_object *j = json_object_new_object(), *self = json_object_new_object();
    json_object_object_add(self, "role", json_object_new_string("alone"));
    json_object_object_add(j, "self", self);
    json_object_object_add(j, "leader", NULL);
    json_object_object_add(j, "members", json_object_new_array());
    send_json(r, 200, j);
}

/* GET /api/v1/whoami: the token's holder and role, for a client to show only what it may do
 * (every change is still checked against the role). */
static void get_whoami(const ctl_req *q, ctl_resp *r)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "name", json_object_new_string(q->who->name));
    json_object_object_add(j, "role", json_object_new_string(util_role_name(q->who->role)));
    send_json(r, 200, j);
}

/* GET /api/v1/probers: every prober token with its last request, so that a localizer that has
 * nothing to change still shows alive (it sends a heartbeat). */
static void get_probers(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    if (!c->seen) {
        ctl_api_problem(r, 503, q->path, "this controller keeps no record of its tokens' use");
        return;
    }
    send_json(r, 200, ctl_seen_list(c->seen, CTL_ROLE_BIT(UTIL_ROLE_PROBER) | CTL_ROLE_BIT(UTIL_ROLE_LOCALIZER)));
}

static void get_hosts(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    uint64_t offset, limit;
    if (!arg_uint(q, r, "offset", 0, 0, UINT32_MAX, &offset) ||
        !arg_uint(q, r, "limit", 100, 1, PAGE_MAX, &limit)) {
        return;
    }
    uint32_t n = fab_topo_nhosts(c->topo);
    json_object *items = json_object_new_array();
    for (uint64_t h = offset; h < n && h < offset + limit; h++) {
        json_object *o = json_object_new_object();
        unsigned cabled = 0;
        for (unsigned p = 0; p < fab_topo_planes(c->topo); p++) {
            uint32_t sw;
            unsigned port;
            cabled += fab_host_attach(c->topo, (uint32_t)h, p, &sw, &port) == 0;
        }
        json_object_object_add(o, "host",
                               json_object_new_string(fab_host_name(c->topo, (uint32_t)h)));
        json_object_object_add(o, "ports", json_object_new_int((int)cabled));
        json_object_array_add(items, o);
    }
    json_object *j = json_object_new_object();
    json_object_object_add(j, "total", json_object_new_int64(n));
    json_object_object_add(j, "offset", json_object_new_int64((int64_t)offset));
    json_object_object_add(j, "items", items);
    send_json(r, 200, j);
}

/* GET /api/v1/hosts/{name}/profile[?peer=HOST] */
static void get_profile(ctl_ctx *c, const ctl_req *q, ctl_resp *r, const char *rest)
{
    char name[96];
    const char *slash = strchr(rest, '/');
    size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
    if (!slash || strcmp(slash, "/profile") != 0 || n >= sizeof(name)) {
        ctl_api_problem(r, 404, q->path, "no resource at %s (a host's is /hosts/NAME/profile)",
                        q->path);
        return;
    }
    snprintf(name, sizeof(name), "%.*s", (int)n, rest);
    uint32_t host = fab_host_find(c->topo, name), peer = FAB_NONE;
    const char *pn = q->arg ? q->arg(q->arg_user, "peer") : NULL;
    if (host == FAB_NONE) {
        ctl_api_problem(r, 404, q->path, "no host is called '%s'", name);
        return;
    }
    if (pn && ((peer = fab_host_find(c->topo, pn)) == FAB_NONE || peer == host)) {
        ctl_api_problem(r, peer == host ? 400 : 404, q->path,
                        peer == host ? "the peer must be another host"
                                     : "no host is called '%s' (query argument 'peer')",
                        pn);
        return;
    }
    json_object *j = ctl_profile_json(c->topo, c->blast, &c->profile, host, peer);
    if (!j) {
        ctl_api_problem(r, 500, q->path, "the CC settings do not resolve (see GET /api/v1/config)");
        return;
    }
    send_json(r, 200, j);
}

void ctl_api_handle(ctl_ctx *c, const ctl_req *q, ctl_resp *r)
{
    memset(r, 0, sizeof(*r));
    const char *p = q->path;
    if (strncmp(p, PREFIX "/", sizeof(PREFIX)) != 0) {
        ctl_api_problem(r, 404, p, "no resource at %s (the API is under " PREFIX ")", p);
        return;
    }
    if (!admitted(q, r)) {
        return;
    }
    ctl_seen_note(c->seen, q->who, ctl_now_ms());
    const char *rest = p + sizeof(PREFIX);
    bool get = strcmp(q->method, "GET") == 0;
    if (strcmp(rest, "denylist") == 0) {
        denylist(c, q, r);
    } else if (strcmp(rest, "reports") == 0 || strcmp(rest, "probes") == 0) {
        post_evidence(c, q, r, rest[0] == 'p');
    } else if (strncmp(rest, "denylist/", 9) == 0) {
        deny_one(c, q, r, rest + 9);
    } else if (strcmp(rest, "agents") == 0) {
        agents(c, q, r);
    } else if (!get) {
        ctl_api_problem(r, 405, p, "%s takes GET only", p);
    } else if (strcmp(rest, "whoami") == 0) {
        get_whoami(q, r);
    } else if (strcmp(rest, "cluster") == 0) {
        get_cluster(c, r);
    } else if (strcmp(rest, "probers") == 0) {
        get_probers(c, q, r);
    } else if (strcmp(rest, "config") == 0) {
        send_json(r, 200, util_opt_json(c->opts));
    } else if (strcmp(rest, "fabric") == 0) {
        get_fabric(c, q, r);
    } else if (strcmp(rest, "switches") == 0) {
        get_switches(c, q, r);
    } else if (strncmp(rest, "switches/", 9) == 0) {
        char name[96];
        const char *slash = strchr(rest + 9, '/');
        size_t n = slash ? (size_t)(slash - (rest + 9)) : strlen(rest + 9);
        snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
                 rest + 9);
        if (slash && strcmp(slash, "/table") != 0) {
            ctl_api_problem(r, 404, p, "no resource at %s", p);
        } else {
            get_switch(c, q, r, name, slash != NULL);
        }
    } else if (strcmp(rest, "hosts") == 0) {
        get_hosts(c, q, r);
    } else if (strncmp(rest, "hosts/", 6) == 0) {
        get_profile(c, q, r, rest + 6);
    } else if (strncmp(rest, "agents/", 7) == 0 && !strchr(rest + 7, '/')) {
        get_agent(c, q, r, rest + 7);
    } else if (strcmp(rest, "audit") == 0) {
        get_audit(c, q, r);
    } else if (strcmp(rest, "health/links") == 0 || strcmp(rest, "health/switches") == 0 ||
               strcmp(rest, "health/path") == 0 || strcmp(rest, "health/hosts") == 0 ||
               strcmp(rest, "health/history") == 0 || strcmp(rest, "health/summary") == 0 ||
               strcmp(rest, "health/problems") == 0 || strcmp(rest, "health/matrix") == 0) {
        get_health(c, q, r, rest + 7);
    } else {
        ctl_api_problem(r, 404, p, "no resource at %s", p);
    }
}

char *ctl_metrics_text(ctl_ctx *c, size_t *plen)
{
    util_buf s = {0};
    static const uint64_t le[] = CTL_LATENCY_BUCKETS;
    ctl_metrics *m = &c->metrics;
#define EMIT(...) util_buf_printf(&s, __VA_ARGS__)
    EMIT("# HELP mrcfab_http_requests_total HTTP requests answered, by status class.\n");
    EMIT("# TYPE mrcfab_http_requests_total counter\n");
    for (int k = 1; k <= 5; k++) {
        EMIT("mrcfab_http_requests_total{code=\"%dxx\"} %" PRIuFAST64 "\n", k,
             atomic_load(&m->requests[k]));
    }
    EMIT("# HELP mrcfab_http_request_duration_seconds Time to answer a request.\n");
    EMIT("# TYPE mrcfab_http_request_duration_seconds histogram\n");
    for (size_t i = 0; i < sizeof(le) / sizeof(le[0]); i++) {
        EMIT("mrcfab_http_request_duration_seconds_bucket{le=\"%g\"} %" PRIuFAST64 "\n",
             (double)le[i] / 1e6, atomic_load(&m->latency_le[i]));
    }
    EMIT("mrcfab_http_request_duration_seconds_bucket{le=\"+Inf\"} %" PRIuFAST64 "\n",
         atomic_load(&m->latency_count));
    EMIT("mrcfab_http_request_duration_seconds_sum %.6f\n",
         (double)atomic_load(&m->latency_sum_us) / 1e6);
    EMIT("mrcfab_http_request_duration_seconds_count %" PRIuFAST64 "\n",
         atomic_load(&m->latency_count));
    EMIT("# HELP mrcfab_reports_ingested_total Agent reports and probe results accepted.\n");
    EMIT("# TYPE mrcfab_reports_ingested_total counter\n");
    EMIT("mrcfab_reports_ingested_total %" PRIuFAST64 "\n", atomic_load(&m->reports));
    EMIT("# HELP mrcfab_denylist_changes_total Denylist entries added or removed.\n");
    EMIT("# TYPE mrcfab_denylist_changes_total counter\n");
    EMIT("mrcfab_denylist_changes_total %" PRIuFAST64 "\n", atomic_load(&m->denylist_changes));
    /* a count kept on each change: /metrics is open to anyone and must cost the same at any
     * length of the list */
    EMIT("# HELP mrcfab_denylist_entries Entries in the denylist.\n");
    EMIT("# TYPE mrcfab_denylist_entries gauge\n");
    EMIT("mrcfab_denylist_entries %zu\n", ctl_store_deny_count(c->store));
    EMIT("# HELP mrcfab_denylist_max_entries The bound on the denylist's entries "
         "(--max-entries; 0 none).\n");
    EMIT("# TYPE mrcfab_denylist_max_entries gauge\n");
    EMIT("mrcfab_denylist_max_entries %zu\n", c->max_entries);
    EMIT("# HELP mrcfab_denylist_version The denylist's version.\n");
    EMIT("# TYPE mrcfab_denylist_version gauge\n");
    EMIT("mrcfab_denylist_version %" PRId64 "\n", ctl_store_version(c->store));
    EMIT("# HELP mrcfab_push_subscribers Agents waiting on the push channel.\n");
    EMIT("# TYPE mrcfab_push_subscribers gauge\n");
    EMIT("mrcfab_push_subscribers %" PRIdFAST64 "\n", atomic_load(&m->subscribers));
    if (c->health) {
        uint64_t n[4];
        ctl_health_counts(c->health, ctl_now_ms(), n);
        EMIT("# HELP mrcfab_links Links (T0-T1 and NIC-T0) by health state.\n");
        EMIT("# TYPE mrcfab_links gauge\n");
        static const char *const names[] = {"no_data", "ok", "degraded", "bad"};
        for (int k = 0; k < 4; k++) {
            EMIT("mrcfab_links{state=\"%s\"} %" PRIu64 "\n", names[k], n[k]);
        }
        ctl_health_metrics(c->health, ctl_now_ms(), &s);
    }
    if (c->agents) {
        uint64_t fresh, stale;
        ctl_agents_counts(c->agents, ctl_now_ms(), &fresh, &stale);
        EMIT("# HELP mrcfab_agents Registered agents: fresh (heard from within 3 report "
             "intervals) or stale.\n");
        EMIT("# TYPE mrcfab_agents gauge\n");
        EMIT("mrcfab_agents{state=\"fresh\"} %" PRIu64 "\n", fresh);
        EMIT("mrcfab_agents{state=\"stale\"} %" PRIu64 "\n", stale);
    }
#undef EMIT
    *plen = s.len;
    return s.s;
}
