/* SPDX-License-Identifier: MIT */
/* A denylist change and an entry as the JSON etcd keeps them: the log's records and the
 * snapshot's entries (ctl_ha.c). Times stay Unix ms and ids numbers, so a replica applies
 * exactly what the leader committed. */
#include "ctl_change.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const ops[] = {
    [CTL_CHANGE_ADD] = "add", [CTL_CHANGE_REMOVE] = "remove", [CTL_CHANGE_TICK] = "tick"};

json_object *ctl_deny_raw_json(const ctl_deny *d)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "id", json_object_new_int64(d->id));
    json_object_object_add(j, "element", json_object_new_string(d->element));
    json_object_object_add(j, "scope", json_object_new_string(d->scope));
    json_object_object_add(j, "reason", json_object_new_string(d->reason));
    json_object_object_add(j, "source", json_object_new_string(d->source));
    json_object_object_add(j, "author", json_object_new_string(d->author));
    json_object_object_add(j, "created", json_object_new_int64(d->created));
    json_object_object_add(j, "start", json_object_new_int64(d->start));
    json_object_object_add(j, "end", json_object_new_int64(d->end));
    json_object_object_add(j, "forced", json_object_new_boolean(d->forced));
    return j;
}

static int get_int(json_object *j, const char *k, int64_t *v)
{
    json_object *x;
    if (!json_object_object_get_ex(j, k, &x) || !json_object_is_type(x, json_type_int)) {
        return -EINVAL;
    }
    *v = json_object_get_int64(x);
    return 0;
}

static int get_str(json_object *j, const char *k, char *dest, size_t len)
{
    json_object *x;
    if (!json_object_object_get_ex(j, k, &x) || !json_object_is_type(x, json_type_string) ||
        (size_t)json_object_get_string_len(x) >= len) {
        return -EINVAL;
    }
    memcpy(dest, json_object_get_string(x), (size_t)json_object_get_string_len(x) + 1);
    return 0;
}

int ctl_deny_raw_parse(json_object *j, ctl_deny *d)
{
    memset(d, 0, sizeof(*d));
    json_object *f;
    if (!j || !json_object_is_type(j, json_type_object) || get_int(j, "id", &d->id) ||
        get_str(j, "element", d->element, sizeof(d->element)) ||
        get_str(j, "scope", d->scope, sizeof(d->scope)) ||
        get_str(j, "reason", d->reason, sizeof(d->reason)) ||
        get_str(j, "source", d->source, sizeof(d->source)) ||
        get_str(j, "author", d->author, sizeof(d->author)) || get_int(j, "created", &d->created) ||
        get_int(j, "start", &d->start) || get_int(j, "end", &d->end) || d->id <= 0) {
        return -EINVAL;
    }
    d->forced = json_object_object_get_ex(j, "forced", &f) && json_object_get_boolean(f);
    return 0;
}

char *ctl_change_text(const ctl_change *c)
{
    json_object *j = json_object_new_object();
    json_object_object_add(j, "version", json_object_new_int64(c->version));
    json_object_object_add(j, "epoch", json_object_new_int64(c->epoch));
    json_object_object_add(j, "time", json_object_new_int64(c->time));
    json_object_object_add(j, "op", json_object_new_string(ops[c->op]));
    if (c->op == CTL_CHANGE_ADD) {
        json_object_object_add(j, "entry", ctl_deny_raw_json(&c->entry));
    } else if (c->op == CTL_CHANGE_REMOVE) {
        json_object_object_add(j, "id", json_object_new_int64(c->id));
        json_object_object_add(j, "actor", json_object_new_string(c->actor));
    }
    char *s = util_xstrdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    return s;
}

int ctl_change_parse(const char *text, ctl_change *c)
{
    memset(c, 0, sizeof(*c));
    json_object *j = json_tokener_parse(text), *e;
    char op[16];
    int rv = -EINVAL;
    if (!j || !json_object_is_type(j, json_type_object) || get_int(j, "version", &c->version) ||
        get_int(j, "epoch", &c->epoch) || get_int(j, "time", &c->time) ||
        get_str(j, "op", op, sizeof(op)) || c->version <= 0) {
        goto out;
    }
    if (strcmp(op, "add") == 0) {
        c->op = CTL_CHANGE_ADD;
        if (!json_object_object_get_ex(j, "entry", &e) || ctl_deny_raw_parse(e, &c->entry) != 0) {
            goto out;
        }
    } else if (strcmp(op, "remove") == 0) {
        c->op = CTL_CHANGE_REMOVE;
        if (get_int(j, "id", &c->id) || get_str(j, "actor", c->actor, sizeof(c->actor))) {
            goto out;
        }
    } else if (strcmp(op, "tick") == 0) {
        c->op = CTL_CHANGE_TICK;
    } else {
        goto out;
    }
    rv = 0;
out:
    json_object_put(j);
    return rv;
}
