/* SPDX-License-Identifier: MIT */
/* A denylist change and an entry as JSON text, the form etcd keeps them in (ctl_ha.c). */
#ifndef CTL_CHANGE_H
#define CTL_CHANGE_H

#include <json-c/json.h>

#include "ctl_store.h"
#include "util.h"

/* |d| with its raw fields (times in Unix ms): a new object. */
json_object *ctl_deny_raw_json(const ctl_deny *d);
/* The reverse: 0, or -EINVAL for anything but such an object (a field missing, of another
 * type or too long, an id not above 0). */
int ctl_deny_raw_parse(json_object *j, ctl_deny *d);
/* |c| as one line of JSON (a heap string). */
char *ctl_change_text(const ctl_change *c);
/* The reverse: 0, or -EINVAL. */
int ctl_change_parse(const char *text, ctl_change *c);

#endif
