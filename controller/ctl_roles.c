/* SPDX-License-Identifier: MIT */
/* The role table: every endpoint with the roles that may call it, and its lookup. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl_roles.h"

#define R(x) CTL_ROLE_BIT(UTIL_ROLE_##x)
#define TOKENS (R(READER) | R(AGENT) | R(PROBER) | R(LOCALIZER) | R(OPERATOR) | R(ADMIN))
#define OPEN (R(NONE) | TOKENS)
#define DENIERS (R(PROBER) | R(LOCALIZER) | R(OPERATOR) | R(ADMIN))
#define GET_ALL(p, w) {"GET", p, NULL, TOKENS, 0, CTL_OWN_NONE, w}

/* Reading is every token's; a change names each role it admits. A prober (a prober node's
 * token, named for its host) and the localizer add entries whose source is prober and remove
 * only those: an operator's drain stays until an operator or admin lifts it. An agent or a
 * prober reports for the host its token names; the localizer alone posts the evidence of every
 * host. */
static const ctl_route table[] = {
    GET_ALL("/api/v1/fabric", "the fabric's summary and the denylist's version"),
    GET_ALL("/api/v1/switches", "switches, paged"),
    GET_ALL("/api/v1/switches/{name}", "one switch"),
    GET_ALL("/api/v1/switches/{name}/table", "its static table"),
    GET_ALL("/api/v1/denylist", "the entries and version (the whole list, or a page)"),
    {"POST", "/api/v1/denylist", NULL, DENIERS, 0, CTL_OWN_NONE,
     "add an entry (a prober's or the localizer's has source prober), or its blast radius"},
    {"POST", "/api/v1/denylist", "force=true", R(OPERATOR) | R(ADMIN), 0, CTL_OWN_NONE,
     "add an entry below the capacity floor"},
    GET_ALL("/api/v1/denylist/version", "the push channel"),
    GET_ALL("/api/v1/denylist/{id}", "one entry"),
    {"DELETE", "/api/v1/denylist/{id}", NULL, DENIERS, R(PROBER) | R(LOCALIZER), CTL_OWN_PROBER,
     "remove an entry"},
    GET_ALL("/api/v1/audit", "every change"),
    {"POST", "/api/v1/reports", NULL, R(AGENT) | R(PROBER), R(AGENT) | R(PROBER), CTL_OWN_HOST,
     "a host's report"},
    GET_ALL("/api/v1/agents", "every agent"),
    {"POST", "/api/v1/agents", NULL, R(AGENT) | R(ADMIN), R(AGENT), CTL_OWN_HOST,
     "register an agent"},
    GET_ALL("/api/v1/agents/{host}", "one agent"),
    {"POST", "/api/v1/probes", NULL, R(LOCALIZER), 0, CTL_OWN_NONE,
     "the localizer's evidence and verdicts, for every host"},
    GET_ALL("/api/v1/health/links", "links' health"),
    GET_ALL("/api/v1/health/switches", "switches' health"),
    GET_ALL("/api/v1/health/hosts", "hosts' health"),
    GET_ALL("/api/v1/health/summary", "each plane's counts"),
    GET_ALL("/api/v1/health/problems", "what is bad, degraded or denied"),
    GET_ALL("/api/v1/health/matrix", "a plane's T0 x T1 matrix"),
    GET_ALL("/api/v1/health/history", "an element's history"),
    GET_ALL("/api/v1/health/path", "the EVs between two hosts"),
    GET_ALL("/api/v1/hosts", "the hosts"),
    GET_ALL("/api/v1/hosts/{name}/profile", "a host's profile"),
    GET_ALL("/api/v1/config", "the options in effect"),
    GET_ALL("/api/v1/whoami", "the token's name and role"),
    GET_ALL("/api/v1/cluster", "the controllers, their leader and its epoch"),
    GET_ALL("/api/v1/probers", "the prober and localizer tokens' last requests"),
    {"GET", "/metrics", NULL, OPEN, 0, CTL_OWN_NONE, "Prometheus text"},
    {"GET", "/", NULL, OPEN, 0, CTL_OWN_NONE, "the dashboard's index.html"},
    {"HEAD", "/", NULL, OPEN, 0, CTL_OWN_NONE, "the same, headers only"},
    {"GET", "/ui/*", NULL, OPEN, 0, CTL_OWN_NONE, "the dashboard's files"},
    {"HEAD", "/ui/*", NULL, OPEN, 0, CTL_OWN_NONE, "the same, headers only"},
};

const ctl_route *ctl_roles_table(size_t *pn)
{
    *pn = sizeof(table) / sizeof(table[0]);
    return table;
}

/* Whether |path| has the shape of |pattern|: {x} one non-empty segment, a final * any rest. */
static bool path_match(const char *pattern, const char *path)
{
    const char *p = pattern, *s = path;
    while (*p) {
        if (p[0] == '*' && p[1] == '\0') {
            return true;
        }
        if (*p == '{') {
            const char *close = strchr(p, '}');
            size_t n = strcspn(s, "/");
            if (!close || n == 0) {
                return false;
            }
            p = close + 1;
            s += n;
            continue;
        }
        if (*p++ != *s++) {
            return false;
        }
    }
    return *s == '\0';
}

static const ctl_route *find(const char *method, const char *path, const char *qualifier,
                             bool *ppath)
{
    *ppath = false;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        const ctl_route *t = &table[i];
        if (!path_match(t->pattern, path)) {
            continue;
        }
        *ppath = true;
        bool q = qualifier ? t->qualifier && strcmp(t->qualifier, qualifier) == 0 : !t->qualifier;
        if (q && strcmp(t->method, method) == 0) {
            return t;
        }
    }
    return NULL;
}

int ctl_roles_need(const char *method, const char *path, unsigned *pmask,
                   const ctl_route **prow)
{
    bool any;
    const ctl_route *t = find(method, path, NULL, &any);
    if (pmask) {
        *pmask = t ? t->roles : 0;
    }
    if (prow) {
        *prow = t;
    }
    return t ? 0 : any ? -EPERM : -ENOENT;
}

bool ctl_roles_allow(const char *method, const char *path, util_role role)
{
    unsigned mask;
    return ctl_roles_need(method, path, &mask, NULL) == 0 && (mask & CTL_ROLE_BIT(role));
}

bool ctl_roles_allow_q(const char *method, const char *path, const char *qualifier,
                       util_role role)
{
    bool any;
    const ctl_route *t = find(method, path, qualifier, &any);
    return t && (t->roles & CTL_ROLE_BIT(role));
}

bool ctl_roles_own(const char *method, const char *path, util_role role, ctl_own *pkind)
{
    const ctl_route *t;
    if (ctl_roles_need(method, path, NULL, &t) != 0 || !(t->own & CTL_ROLE_BIT(role))) {
        return false;
    }
    *pkind = t->own_kind;
    return true;
}

void ctl_roles_names(unsigned mask, char *dest, size_t destlen)
{
    size_t at = 0;
    dest[0] = '\0';
    for (unsigned r = UTIL_ROLE_NONE; r <= UTIL_ROLE_ADMIN && at < destlen; r++) {
        if (mask & CTL_ROLE_BIT(r)) {
            int n = snprintf(dest + at, destlen - at, "%s%s", at ? ", " : "",
                             util_role_name((util_role)r));
            at += n > 0 ? (size_t)n : 0;
        }
    }
}
