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

struct agent_deny {
    fab_deny *deny;
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
    if (fab_deny_new(topo, &set->deny) != 0) {
        rv = -ENOMEM;
        goto out;
    }
    size_t n = json_object_array_length(entries);
    set->counts.entries = n;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i), *el, *scope, *active;
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
