/* SPDX-License-Identifier: MIT */
/* Tokens: loaded once, looked up per request. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util.h"

static const char *const roles[] = {"none",      "reader",   "agent", "prober",
                                    "localizer", "operator", "admin"};

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
    free(a->slots);
    a->tokens = NULL;
    a->n = 0;
    a->slots = NULL;
    a->nslots = 0;
}

/* FNV-1a over |s| from a secret |key|: where a guess lands says nothing of the tokens without
 * the key, and the time it takes depends on its length only. */
static uint64_t token_hash(uint64_t key, const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull ^ key;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    }
    return h ^ (h >> 29);
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

/* The index of a->tokens; the place of a token given twice into |*pdup| (else SIZE_MAX). */
static void index_build(util_auth *a, size_t *pdup, size_t *pfirst)
{
    *pdup = SIZE_MAX;
    if (getrandom(&a->key, sizeof(a->key), GRND_NONBLOCK) != (ssize_t)sizeof(a->key)) {
        a->key = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)a;
    }
    for (a->nslots = 16; a->nslots < 2 * a->n; a->nslots *= 2) {
    }
    a->slots = util_xcalloc(a->nslots, sizeof(*a->slots));
    for (size_t i = 0; i < a->n; i++) {
        size_t at = token_hash(a->key, a->tokens[i].token) & (a->nslots - 1);
        for (; a->slots[at]; at = (at + 1) & (a->nslots - 1)) {
            if (strcmp(a->tokens[a->slots[at] - 1].token, a->tokens[i].token) == 0) {
                *pdup = i;
                *pfirst = a->slots[at] - 1;
                return;
            }
        }
        a->slots[at] = (uint32_t)(i + 1);
    }
}

int util_auth_load(const char *path, util_auth *a, char *err, size_t errlen)
{
    unsigned *lines = NULL;
    char *data;
    size_t len;
    a->tokens = NULL;
    a->n = 0;
    a->slots = NULL;
    a->nslots = 0;
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
        if (a->n >= UINT32_MAX - 1) {
            snprintf(err, errlen, "%s:%u: too many tokens", path, line);
            rv = -EINVAL;
            break;
        }
        /* doubling: a fabric's file has a line per agent */
        if ((a->n & (a->n - 1)) == 0) {
            size_t cap = a->n ? 2 * a->n : 1;
            a->tokens = util_xrealloc(a->tokens, cap * sizeof(*a->tokens));
            lines = util_xrealloc(lines, cap * sizeof(*lines));
        }
        lines[a->n] = line;
        a->tokens[a->n++] =
            (util_token){.token = util_xstrdup(f[0]), .role = role, .name = util_xstrdup(f[2])};
    }
    free(data);
    if (rv == 0 && a->n > 0) {
        size_t dup, first;
        index_build(a, &dup, &first);
        if (dup != SIZE_MAX) {
            snprintf(err, errlen, "%s:%u: this token is already given to %s", path, lines[dup],
                     a->tokens[first].name);
            rv = -EINVAL;
        }
    }
    free(lines);
    if (rv == 0 && a->n == 0) {
        snprintf(err, errlen, "%s: no token", path);
        rv = -EINVAL;
    }
    if (rv != 0) {
        util_auth_free(a);
    }
    return rv;
}

const util_token *util_auth_find(const util_auth *a, const char *bearer)
{
    const util_token *found = NULL;
    if (!bearer) {
        return NULL;
    }
    if (a->slots) {
        size_t at = token_hash(a->key, bearer) & (a->nslots - 1);
        for (; a->slots[at]; at = (at + 1) & (a->nslots - 1)) {
            const util_token *t = &a->tokens[a->slots[at] - 1];
            if (ct_equal(t->token, bearer)) {
                found = t;
            }
        }
        return found;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (ct_equal(a->tokens[i].token, bearer)) {
            found = &a->tokens[i];
        }
    }
    return found;
}
