/* SPDX-License-Identifier: MIT */
/* Tokens: loaded once, looked up per request. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const roles[] = {"none", "reader", "agent", "prober", "localizer", "operator", "admin"};

const char *util_role_name(util_role role)
{
    return role <= UTIL_ROLE_ADMIN ? roles[role] : "none";
}

util_role util_role_parse(const char *name)
{
    for (unsigned r = UTIL_ROLE_READER; r <= UTIL_ROLE_ADMIN; r++) {
        if (strcmp(name, roles[r]) == 0) {
            return (util_role)r;
        }
    }
    return UTIL_ROLE_NONE;
}

void util_auth_free(util_auth *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->tokens[i].token);
        free(a->tokens[i].name);
    }
    free(a->tokens);
    a->tokens = NULL;
    a->n = 0;
}

int util_auth_load(const char *path, util_auth *a, char *err, size_t errlen)
{
    char *data;
    size_t len;
    a->tokens = NULL;
    a->n = 0;
    int rv = util_read_file(path, &data, &len);
    if (rv != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rv));
        return rv;
    }
    unsigned line = 0;
    char *cursor = data;
    for (char *l; (l = util_line_next(&cursor)) != NULL;) {
        line++;
        char *f[4] = {0};
        unsigned nf = 0;
        char *s2 = NULL;
        for (char *w = strtok_r(l, " \t\r", &s2); w && nf < 4; w = strtok_r(NULL, " \t\r", &s2)) {
            f[nf++] = w;
        }
        if (nf == 0 || f[0][0] == '#') {
            continue;
        }
        util_role role = nf >= 2 ? util_role_parse(f[1]) : UTIL_ROLE_NONE;
        if (nf != 3 || role == UTIL_ROLE_NONE || strlen(f[0]) < 16) {
            snprintf(err, errlen,
                     "%s:%u: want 'TOKEN ROLE NAME' with a token of 16 characters or more and "
                     "a role of reader, agent, prober, localizer, operator or admin",
                     path, line);
            rv = -EINVAL;
            break;
        }
        for (size_t i = 0; i < a->n; i++) {
            if (strcmp(a->tokens[i].token, f[0]) == 0) {
                snprintf(err, errlen, "%s:%u: this token is already given to %s", path, line,
                         a->tokens[i].name);
                rv = -EINVAL;
            }
        }
        if (rv != 0) {
            break;
        }
        a->tokens = util_xrealloc(a->tokens, (a->n + 1) * sizeof(*a->tokens));
        a->tokens[a->n++] =
            (util_token){.token = util_xstrdup(f[0]), .role = role, .name = util_xstrdup(f[2])};
    }
    free(data);
    if (rv == 0 && a->n == 0) {
        snprintf(err, errlen, "%s: no token", path);
        rv = -EINVAL;
    }
    if (rv != 0) {
        util_auth_free(a);
    }
    return rv;
}

/* Equal strings, in time that depends on the lengths only. */
static int ct_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < la ? (unsigned char)a[i] : 0, y = i < lb ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

const util_token *util_auth_find(const util_auth *a, const char *bearer)
{
    const util_token *found = NULL;
    if (!bearer) {
        return NULL;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (ct_equal(a->tokens[i].token, bearer)) {
            found = &a->tokens[i];
        }
    }
    return found;
}
