/* SPDX-License-Identifier: MIT */
/* When each token of the tokens file was last used, and how often: in memory only (a restart
 * forgets it), so that GET /api/v1/probers shows which probers are alive. */
#ifndef CTL_SEEN_H
#define CTL_SEEN_H

#include <json-c/json.h>
#include <stdint.h>

#include "util.h"

typedef struct ctl_seen ctl_seen;

/* A table of one slot per token of |auth|, which it borrows for its whole life (the slots are
 * found by a token's place in it). */
ctl_seen *ctl_seen_new(const util_auth *auth);
void ctl_seen_free(ctl_seen *seen);

/* Notes an authenticated request by |who| at |now| (Unix ms). |who| must be one of the tokens
 * of the table's util_auth (as util_auth_find gives them); any other is ignored. Safe from any
 * thread. */
void ctl_seen_note(ctl_seen *seen, const util_token *who, int64_t now);

/* Every token whose role's bit (1 << role) is in |roles|, in the tokens file's order, as
 * {"total": N, "items": [{"name", "last_seen" (RFC 3339 UTC, or null when never seen),
 * "requests"}]} (a new reference). */
json_object *ctl_seen_list(ctl_seen *seen, unsigned roles);

#endif
