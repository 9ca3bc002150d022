/* SPDX-License-Identifier: MIT */
/* Option tables: one description of a daemon's settings serves its command line, its config
 * file, its defaults, its range checks and the JSON it reports them in. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const util_opt *find(const util_opt *opts, const char *name, size_t len)
{
    for (const util_opt *o = opts; o->name; o++) {
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
            return o;
        }
    }
    return NULL;
}

int util_opt_set(const util_opt *o, const char *value, char *err, size_t errlen)
{
    switch (o->kind) {
    case UTIL_OPT_STR:
        free(*(char **)o->dest);
        *(char **)o->dest = value ? util_xstrdup(value) : NULL;
        return 0;
    case UTIL_OPT_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0) {
            *(bool *)o->dest = true;
        } else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) {
            *(bool *)o->dest = false;
        } else {
            snprintf(err, errlen, "%s: not true or false: '%s'", o->name, value);
            return -EINVAL;
        }
        return 0;
    case UTIL_OPT_UINT: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (!isdigit((unsigned char)value[0]) || *end || errno) {
            snprintf(err, errlen, "%s: not a whole number: '%s'", o->name, value);
            return -EINVAL;
        }
        if (v < o->min || v > o->max) {
            snprintf(err, errlen, "%s: %llu is out of range [%" PRIu64 ", %" PRIu64 "]", o->name,
                     v, o->min, o->max);
            return -ERANGE;
        }
        *(uint64_t *)o->dest = v;
        return 0;
    }
    }
    return -EINVAL;
}

void util_opt_defaults(const util_opt *opts)
{
    char err[8];
    for (const util_opt *o = opts; o->name; o++) {
        if (o->kind == UTIL_OPT_STR) {
            *(char **)o->dest = NULL;
        }
        if (o->def) {
            int rv = util_opt_set(o, o->def, err, sizeof(err));
            (void)rv; /* the table's own defaults are in range */
        }
    }
}

void util_opt_free(const util_opt *opts)
{
    for (const util_opt *o = opts; o->name; o++) {
        if (o->kind == UTIL_OPT_STR) {
            free(*(char **)o->dest);
            *(char **)o->dest = NULL;
        }
    }
}

int util_opt_load_file(const util_opt *opts, const char *path, char *err, size_t errlen)
{
    char *data;
    size_t len;
    int rv = util_read_file(path, &data, &len);
    if (rv != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rv));
        return rv;
    }
    unsigned line = 0;
    char *cursor = data;
    for (char *l; (l = util_line_next(&cursor)) != NULL;) {
        line++;
        while (isspace((unsigned char)*l)) {
            l++;
        }
        if (*l == '#' || *l == '\0') {
            continue;
        }
        char *eq = strchr(l, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%u: not 'key = value'", path, line);
            rv = -EINVAL;
            break;
        }
        char *kend = eq;
        while (kend > l && isspace((unsigned char)kend[-1])) {
            kend--;
        }
        char *v = eq + 1;
        while (isspace((unsigned char)*v)) {
            v++;
        }
        size_t vlen = strlen(v);
        while (vlen > 0 && isspace((unsigned char)v[vlen - 1])) {
            v[--vlen] = '\0';
        }
        const util_opt *o = find(opts, l, (size_t)(kend - l));
        if (!o || strcmp(o->name, "config") == 0) {
            snprintf(err, errlen, "%s:%u: unknown key '%.*s'", path, line, (int)(kend - l), l);
            rv = -EINVAL;
            break;
        }
        char sub[256];
        if ((rv = util_opt_set(o, v, sub, sizeof(sub))) != 0) {
            snprintf(err, errlen, "%s:%u: %s", path, line, sub);
            break;
        }
    }
    free(data);
    return rv;
}

int util_opt_parse(const util_opt *opts, int argc, char **argv, char *err, size_t errlen)
{
    /* the config file first, so that flags override it */
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--config") == 0) {
            int rv = util_opt_load_file(opts, argv[i + 1], err, errlen);
            if (rv != 0) {
                return rv;
            }
        }
    }
    /* pairs: --key value */
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s'", a);
            return -EINVAL;
        }
        const util_opt *o = find(opts, a + 2, strlen(a + 2));
        if (!o && strcmp(a + 2, "config") != 0) {
            snprintf(err, errlen, "unknown option '%s'", a);
            return -EINVAL;
        }
        if (i + 1 >= argc) {
            snprintf(err, errlen, "%s needs a value", a);
            return -EINVAL;
        }
        if (o) {
            int rv = util_opt_set(o, argv[i + 1], err, errlen);
            if (rv != 0) {
                return rv;
            }
        }
    }
    return 0;
}

void util_opt_usage(const util_opt *opts, FILE *f)
{
    for (const util_opt *o = opts; o->name; o++) {
        fprintf(f, "  --%-14s %s%s%s%s\n", o->name, o->help, o->def ? " (default " : "",
                o->def ? o->def : "", o->def ? ")" : "");
    }
}

json_object *util_opt_json(const util_opt *opts)
{
    json_object *j = json_object_new_object();
    for (const util_opt *o = opts; o->name; o++) {
        json_object *v = NULL;
        if (o->secret) {
            /* only whether it is set: a secret is text (a key, a password) */
            v = json_object_new_boolean(o->kind != UTIL_OPT_STR || *(char **)o->dest != NULL);
        } else if (o->kind == UTIL_OPT_STR) {
            const char *s = *(char **)o->dest;
            v = s ? json_object_new_string(s) : NULL;
        } else if (o->kind == UTIL_OPT_BOOL) {
            v = json_object_new_boolean(*(bool *)o->dest);
        } else {
            v = json_object_new_uint64(*(uint64_t *)o->dest);
        }
        json_object_object_add(j, o->name, v);
    }
    return j;
}
