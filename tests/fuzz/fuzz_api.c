/* SPDX-License-Identifier: MIT */
/* libFuzzer target: request bodies (denylist entries, agent reports and registrations, probe
 * results) and query
 * arguments of the controller's REST API, against the lab fabric, a health engine and an
 * in-memory store. The first input byte picks the request; the rest is its body (POST) or a
 * query argument's value (GET). */
#include <mrcfab/fabric.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_api.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ctl_ctx ctx;
static util_token operator = {.role = UTIL_ROLE_OPERATOR, .name = "fuzz"};
static util_token admin = {.role = UTIL_ROLE_ADMIN, .name = "fuzz"};
static uint64_t opt_n;
static const util_opt opts[] = {
    {"n", UTIL_OPT_UINT, "1", 0, 10, &opt_n, "a setting", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};

static void die(const char *what)
{
    fprintf(stderr, "fuzz_api: %s\n", what);
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fab_topo *topo = NULL;
    fab_tables *tables = NULL;
    fab_error err;
    char msg[256];
    ctl_store *store = NULL;
    ctl_agents *agents = NULL;
    if (fab_topo_load_file(MRCFAB_ROOT "/deploy/topologies/lab.json", &topo, &err) != 0 ||
        fab_tables_compute(topo, &tables) != 0 || ctl_store_open(":memory:", &store, msg, sizeof(msg)) != 0 ||
        ctl_agents_open(topo, store, 10000, &agents, msg, sizeof(msg)) != 0) {
        die("cannot set up");
    }
    util_opt_defaults(opts);
    ctx = (ctl_ctx){.topo = topo,
                    .tables = tables,
                    .store = store,
                    .health = ctl_health_new(topo, 60000),
                    .blast = ctl_blast_new(topo),
                    .agents = agents,
                    .floor = 0.5,
                    .opts = opts};
    return 0;
}

static const char *value;

static const char *arg(void *user, const char *name)
{
    (void)user;
    (void)name;
    return value;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const gets[] = {"/api/v1/switches", "/api/v1/audit",
                                       "/api/v1/switches/p0-t0-0/table"};
    if (size < 1) {
        return 0;
    }
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    ctl_req q = {.arg = arg, .who = &operator};
    unsigned pick = data[0] % 9;
    int64_t before = ctl_store_version(ctx.store);
    if (pick < 5) {
        /* the denylist, an agent's report, probe results, an agent's registration (an admin
         * may register any host) */
        static const char *const posts[] = {"/api/v1/denylist", "/api/v1/denylist",
                                            "/api/v1/reports", "/api/v1/probes", "/api/v1/agents"};
        q.method = "POST";
        q.path = posts[pick];
        q.body = text;
        q.bodylen = size - 1;
        q.who = pick == 4 ? &admin : &operator;
    } else if (pick < 8) {
        q.method = "GET";
        q.path = gets[pick - 5];
        value = text;
    } else {
        /* a path of its own: routing must refuse anything it does not know */
        q.method = "DELETE";
        q.path = text;
    }
    ctl_resp r;
    ctl_api_handle(&ctx, &q, &r);
    if (r.status < 200 || r.status > 599 || !r.ctype || (r.len && !r.body)) {
        die("a response without a status, type or body");
    }
    int64_t after = ctl_store_version(ctx.store);
    bool changed = after != before;
    if (changed != (r.status == 201 || r.status == 204) && r.status != 202) {
        die("the store changed and the status does not say so, or the reverse");
    }
    if (r.status >= 400) {
        json_object *j = json_tokener_parse(r.body);
        json_object *st;
        if (!j || !json_object_object_get_ex(j, "status", &st) || json_object_get_int(st) != r.status) {
            die("a fault that is no problem document");
        }
        json_object_put(j);
    }
    if (r.status == 201) {
        /* keep the store small: remove what was added */
        json_object *j = json_tokener_parse(r.body), *id;
        json_object_object_get_ex(j, "id", &id);
        ctl_store_deny_del(ctx.store, json_object_get_int64(id), "fuzz");
        json_object_put(j);
    }
    free(r.body);
    value = NULL;
    free(text);
    return 0;
}
