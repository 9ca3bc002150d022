/* SPDX-License-Identifier: MIT */
/* The denylist as the agent holds it: each active entry's element parsed once per version
 * into libmrcfab's bit sets, so judging an EV is a few loads and no string is touched. */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_deny.h"
#include "util.h"

/* An applied entry as the floor ranks EVs by it (agent_deny_cost). */
typedef struct deny_ent {
    fab_element el;
    unsigned dirs;
    bool failure;
} deny_ent;

struct agent_deny {
    const fab_topo *topo;
    fab_deny *deny;
    deny_ent *ents; /* the applied entries, in the body's order */
    size_t nents;
    uint64_t version;
    agent_deny_counts counts;
    char first_skipped[FAB_NAME_MAX * 2];
};

static void say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static json_object *member(json_object *o, const char *where, const char *key, json_type type,
                           char *err, size_t errlen)
{
    return util_json_member("denylist body", o, where, key, type, err, errlen);
}

int agent_deny_parse(const fab_topo *topo, const char *json, size_t len, agent_deny **pset,
                     char *err, size_t errlen)
{
    int rv = -EINVAL;
    agent_deny *set = NULL;
    json_object *root =
                    util_json_parse("denylist body", json ? json : "", json ? len : 0, err, errlen),
                *v, *entries;
    if (!root) {
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        say(err, errlen, "denylist body: the top level must be an object, not %s",
            util_json_type_name(json_object_get_type(root)));
        goto out;
    }
    if (!(v = member(root, "", "version", json_type_int, err, errlen)) ||
        !(entries = member(root, "", "entries", json_type_array, err, errlen))) {
        goto out;
    }
    if (json_object_get_int64(v) < 0) {
        say(err, errlen, "denylist body: version must not be negative, not %lld",
            (long long)json_object_get_int64(v));
        goto out;
    }
    set = util_xcalloc(1, sizeof(*set));
    set->version = (uint64_t)json_object_get_int64(v);
    set->topo = topo;
    if (fab_deny_new(topo, &set->deny) != 0) {
        rv = -ENOMEM;
        goto out;
    }
    size_t n = json_object_array_length(entries);
    set->counts.entries = n;
    set->ents = util_xcalloc(n ? n : 1, sizeof(*set->ents));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i), *el, *scope, *active, *src = NULL,
                    *reason = NULL;
        char where[48];
        snprintf(where, sizeof(where), "entries[%zu].", i);
        if (!json_object_is_type(e, json_type_object)) {
            say(err, errlen, "denylist body: entries[%zu] must be an object, not %s", i,
                util_json_type_name(json_object_get_type(e)));
            goto out;
        }
        if (!(el = member(e, where, "element", json_type_string, err, errlen)) ||
            !(scope = member(e, where, "scope", json_type_string, err, errlen)) ||
            !(active = member(e, where, "active", json_type_boolean, err, errlen))) {
            goto out;
        }
        unsigned dirs = fab_dir_parse(json_object_get_string(scope));
        if (dirs == 0) {
            say(err, errlen, "denylist body: entries[%zu].scope must be both, up or down, not '%s'",
                i, json_object_get_string(scope));
            goto out;
        }
        /* optional here: only the floor's ranking reads them (agent_deny_cost) */
        static const char *const texts[] = {"source", "reason"};
        json_object **tv[] = {&src, &reason};
        for (int k = 0; k < 2; k++) {
            if (json_object_object_get_ex(e, texts[k], tv[k]) &&
                !json_object_is_type(*tv[k], json_type_string)) {
                say(err, errlen, "denylist body: entries[%zu].%s must be a string, not %s", i,
                    texts[k], util_json_type_name(json_object_get_type(*tv[k])));
                goto out;
            }
        }
        if (!json_object_get_boolean(active)) {
            set->counts.inactive++;
            continue;
        }
        fab_element x;
        char why[FAB_MSG_MAX];
        const char *name = json_object_get_string(el);
        if (fab_element_parse(topo, name, &x, why, sizeof(why)) != 0) {
            if (set->counts.skipped++ == 0) {
                snprintf(set->first_skipped, sizeof(set->first_skipped), "%s", name);
            }
            continue;
        }
        int r = fab_deny_add(set->deny, &x, dirs);
        if (r == FAB_ERR_NOMEM) {
            rv = -ENOMEM;
            goto out;
        }
        set->counts.applied += r == 0;
        set->counts.skipped += r != 0;
        if (r == 0) {
            /* docs/architecture.md#denylists: a drain's reason starts with "drain" (mrcctl
             * drain, lab.sh drain); only an operator's entry is one */
            bool drain = src && strcmp(json_object_get_string(src), "operator") == 0 && reason &&
                         strncmp(json_object_get_string(reason), "drain", 5) == 0;
            set->ents[set->nents++] = (deny_ent){.el = x, .dirs = dirs, .failure = !drain};
        }
    }
    *pset = set;
    set = NULL;
    rv = 0;
out:
    if (rv == -ENOMEM) {
        say(err, errlen, "denylist body: out of memory");
    }
    agent_deny_free(set);
    json_object_put(root);
    return rv;
}

void agent_deny_free(agent_deny *set)
{
    if (set) {
        fab_deny_free(set->deny);
        free(set->ents);
        free(set);
    }
}

uint64_t agent_deny_version(const agent_deny *set)
{
    return set->version;
}

void agent_deny_counts_get(const agent_deny *set, agent_deny_counts *pcounts)
{
    *pcounts = set->counts;
}

const char *agent_deny_first_skipped(const agent_deny *set)
{
    return set->first_skipped;
}

bool agent_deny_ev(const agent_deny *set, uint32_t src_host, uint32_t dst_host, uint32_t ev)
{
    return fab_deny_ev(set->deny, src_host, dst_host, ev);
}

const fab_deny *agent_deny_set(const agent_deny *set)
{
    return set->deny;
}

/* The T0 index of switch |sw|. */
static unsigned t0_index(const fab_topo *topo, uint32_t sw)
{
    fab_switch s;
    return fab_switch_get(topo, sw, &s) == 0 ? s.index : UINT32_MAX;
}

/* Whether entry |e| denies a part of |path| from |src| to |dst| by fab_deny_ev's rule. */
static bool crosses(const fab_topo *topo, const deny_ent *e, const fab_path *path, uint32_t src,
                    uint32_t dst)
{
    const fab_element *x = &e->el;
    switch (x->kind) {
    case FAB_EL_SWITCH:
        for (unsigned h = 0; h < path->nhops; h++) {
            if (path->hops[h] == x->sw) {
                return true;
            }
        }
        return false;
    case FAB_EL_LINK:
        if (x->plane != path->plane || path->nhops != 3 || path->t1 != (int)x->t1) {
            return false;
        }
        return ((e->dirs & FAB_DIR_UP) && t0_index(topo, path->hops[0]) == x->t0) ||
               ((e->dirs & FAB_DIR_DOWN) && t0_index(topo, path->hops[2]) == x->t0);
    case FAB_EL_PORT:
        return x->plane == path->plane && (((e->dirs & FAB_DIR_UP) && x->host == src) ||
                                           ((e->dirs & FAB_DIR_DOWN) && x->host == dst));
    }
    return false;
}

int agent_deny_cost(const agent_deny *set, uint32_t src, uint32_t dst, uint32_t ev,
                    agent_deny_ev_cost *pcost)
{
    fab_path path;
    *pcost = (agent_deny_ev_cost){0};
    if (src == dst || fab_path_of_ev(set->topo, src, dst, ev, &path) != 0) {
        return -ENOENT;
    }
    for (size_t i = 0; i < set->nents; i++) {
        if (crosses(set->topo, &set->ents[i], &path, src, dst)) {
            pcost->failures += set->ents[i].failure;
            pcost->drains += !set->ents[i].failure;
        }
    }
    return 0;
}
