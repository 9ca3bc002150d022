/* SPDX-License-Identifier: MIT */
/* mrcctl cluster: the controllers of an HA cluster as the one that answers sees them (GET
 * /api/v1/cluster): each member's name, URL and role, the leader marked. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

/* |doc|'s "members", an array, or NULL. */
static json_object *members_of(json_object *doc)
{
    json_object *m;
    if (!json_object_object_get_ex(doc, "members", &m) ||
        !json_object_is_type(m, json_type_array)) {
        return NULL;
    }
    return m;
}

static void print_text(json_object *doc, json_object *members)
{
    json_object *self = NULL, *leader = NULL;
    json_object_object_get_ex(doc, "self", &self);
    json_object_object_get_ex(doc, "leader", &leader);
    if (leader && !json_object_is_type(leader, json_type_object)) {
        leader = NULL;
    }
    const char *lname = leader ? mrcctl_member(leader, "name") : "";
    const char *sname = self ? mrcctl_member(self, "name") : "";
    size_t n = json_object_array_length(members);
    int wn = 4, wu = 3;
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(members, i);
        wn = mrcctl_width(wn, mrcctl_member(m, "name"));
        wu = mrcctl_width(wu, mrcctl_member(m, "url"));
    }
    printf("  %-*s  %-*s  %s\n", wn, "NAME", wu, "URL", "ROLE");
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(members, i);
        const char *name = mrcctl_member(m, "name");
        bool is_leader = lname[0] && strcmp(name, lname) == 0;
        printf("%c %-*s  %-*s  %s%s\n", is_leader ? '*' : ' ', wn, name, wu,
               mrcctl_member(m, "url"), mrcctl_member(m, "role"),
               sname[0] && strcmp(name, sname) == 0 ? " (answered)" : "");
    }
    if (leader) {
        printf("leader: %s (%s), epoch %" PRId64 "\n", lname, mrcctl_member(leader, "url"),
               mrcctl_member_int(leader, "epoch"));
    } else {
        printf("no leader now: an election is under way, or etcd has lost its quorum\n");
    }
}

static int run_cluster(mrcctl *c, int noperands, char **operands)
{
    json_object *doc = NULL, *members;
    (void)noperands;
    (void)operands;
    int rv = mrcctl_api_call(c, "GET", "/api/v1/cluster", NULL, 200, 0, NULL, &doc);
    if (rv != 0) {
        return rv;
    }
    if (!doc || !json_object_is_type(doc, json_type_object) || !(members = members_of(doc))) {
        json_object_put(doc);
        return mrcctl_fail(c, MRCCTL_FAIL, NULL,
                           "the controller's answer to mrcctl cluster has no members (GET "
                           "/api/v1/cluster)");
    }
    if (c->json) {
        mrcctl_print_json(doc);
        return MRCCTL_OK;
    }
    print_text(doc, members);
    json_object_put(doc);
    return MRCCTL_OK;
}

static const util_opt *const cluster_tables[] = {NULL};

static const util_cli cluster_cli = {
    .prog = "mrcctl cluster",
    .usage = "mrcctl cluster [OPTIONS]",
    .about = "The controllers of the cluster as the one that answers sees them: each one's name,\n"
             "URL and role (leader, follower, or alone without etcd), the leader marked '*', and\n"
             "the leader's epoch. Any role reads it.",
    .tables = cluster_tables,
};

const mrcctl_cmd mrcctl_cluster_cmd = {
    .name = "cluster",
    .summary = "the controllers of an HA cluster, the leader marked",
    .cli = &cluster_cli,
    .run = run_cluster,
};
