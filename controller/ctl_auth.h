/* SPDX-License-Identifier: MIT */
/* Bearer tokens and their roles, from a file of 'TOKEN ROLE NAME' lines. */
#ifndef CTL_AUTH_H
#define CTL_AUTH_H

#include <stddef.h>

typedef enum ctl_role {
    CTL_ROLE_NONE = 0,
    CTL_ROLE_READER,   /* reads everything */
    CTL_ROLE_AGENT,    /* ... and reports, and holds the push channel */
    CTL_ROLE_PROBER,   /* ... and posts probe results and its own denylist entries */
    CTL_ROLE_OPERATOR, /* ... and changes the denylist */
    CTL_ROLE_ADMIN,    /* everything */
} ctl_role;

typedef struct ctl_token {
    char *token;
    ctl_role role;
    char *name;
} ctl_token;

typedef struct ctl_auth {
    ctl_token *tokens;
    size_t n;
} ctl_auth;

/* Returns 0, or a negative errno with the file, line and fault in |err|. */
int ctl_auth_load(const char *path, ctl_auth *auth, char *err, size_t errlen);
void ctl_auth_free(ctl_auth *auth);
/* The token |bearer| names, or NULL. Every token is compared in full, in time that does not
 * depend on where a guess first differs. */
const ctl_token *ctl_auth_find(const ctl_auth *auth, const char *bearer);
const char *ctl_role_name(ctl_role role);
ctl_role ctl_role_parse(const char *name);

#endif
