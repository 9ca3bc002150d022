/* SPDX-License-Identifier: MIT */
/* libFuzzer target: every handler of the controller's REST API, each row of the role table
 * (ctl_roles.c) with every role, against the lab fabric, a health engine and an in-memory
 * store. The first input byte picks the row, the second the role (or no token); the rest up to
 * a newline fills the path's {parameters} and every query argument, what follows is the body.
 * Each answer must have a status, a type and a body as it says; a fault is a problem document;
 * the store changes exactly when the status says it did. */
#include <mrcfab/fabric.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_api.h"
#include "ctl_roles.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ctl_ctx ctx;
/* one token of each role; the agent's and the prober node's are named for a host of the lab */
static util_token tokens[] = {
    {.role = UTIL_ROLE_READER, .name = "rita"},   {.role = UTIL_ROLE_AGENT, .name = "h3"},
    {.role = UTIL_ROLE_PROBER, .name = "h5"},     {.role = UTIL_ROLE_LOCALIZER, .name = "loc"},
    {.role = UTIL_ROLE_OPERATOR, .name = "olga"}, {.role = UTIL_ROLE_ADMIN, .name = "ada"},
};
static uint64_t opt_n;
static const util_opt opts[] = {
    {.name = "n", .kind = UTIL_OPT_UINT, .def = "1", .max = 10, .dest = &opt_n, .help = "a setting"},
    UTIL_OPT_END,
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

/* |pattern| with each {parameter} and a final * as |param| into |dest|. */
static void fill(const char *pattern, const char *param, char *dest, size_t len)
{
    size_t n = 0;
    for (const char *p = pattern; *p && n + 1 < len; p++) {
        if (*p == '{' || *p == '*') {
            n += (size_t)snprintf(dest + n, len - n, "%s", param);
            n = n < len ? n : len - 1;
            if (*p == '{') {
                p += strcspn(p, "}");
                if (!*p) {
                    break;
                }
            }
        } else {
            dest[n++] = *p;
        }
    }
    dest[n] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t nroutes;
    const ctl_route *routes = ctl_roles_table(&nroutes);
    if (size < 2) {
        return 0;
    }
    const ctl_route *route = &routes[data[0] % nroutes];
    unsigned role = data[1] % (sizeof(tokens) / sizeof(tokens[0]) + 1);
    char *text = malloc(size - 1);
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    char *body = strchr(text, '\n');
    if (body) {
        *body++ = '\0';
    }
    char path[512];
    fill(route->pattern, text, path, sizeof(path));
    value = text;
    ctl_req q = {.method = route->method,
                 .path = path,
                 .arg = arg,
                 .body = body,
                 .bodylen = body ? size - 2 - (size_t)(body - text) : 0,
                 .who = role ? &tokens[role - 1] : NULL};
    int64_t before = ctl_store_version(ctx.store);
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
    if (!q.who && r.status != 401 && r.status != 404) {
        die("an answer without a token");
    }
    if (r.status >= 400) {
        json_object *j = json_tokener_parse(r.body);
        json_object *st;
        if (!j || !json_object_object_get_ex(j, "status", &st) || json_object_get_int(st) != r.status) {
            die("a fault that is no problem document");
        }
        json_object_put(j);
    }
    if (r.status == 201 && strcmp(route->method, "POST") == 0 &&
        strncmp(path, "/api/v1/denylist", 16) == 0) {
        /* keep the store small: remove what was added */
        json_object *j = json_tokener_parse(r.body), *id;
        if (json_object_object_get_ex(j, "id", &id)) {
            ctl_store_deny_del(ctx.store, json_object_get_int64(id), "fuzz");
        }
        json_object_put(j);
    }
    free(r.body);
    value = NULL;
    free(text);
    return 0;
}
