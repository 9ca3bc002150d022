/* SPDX-License-Identifier: MIT */
/* mrcctl path: the hops and outer destination address of each EV between two host ports. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

static void hop_names(const fab_topo *topo, const fab_path *p, const char *from, const char *to,
                      const char **names)
{
    names[0] = from;
    for (unsigned i = 0; i < p->nhops; i++) {
        fab_switch s;
        fab_switch_get(topo, p->hops[i], &s);
        names[1 + i] = s.name;
    }
    names[1 + p->nhops] = to;
}

static void print_text(const fab_topo *topo, const fab_path *paths, size_t n, const char *from,
                       const char *to)
{
    printf("%s -> %s: plane %u, %zu path%s\n", from, to, paths[0].plane, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const fab_path *p = &paths[i];
        const char *names[5];
        char addr[48];
        hop_names(topo, p, from, to, names);
        printf("  EV 0x%08" PRIx32 "  %-8s %-40s", p->ev, p->t1 < 0 ? "T0-local" : names[2],
               fab_addr_str(p->outer, addr));
        for (unsigned k = 0; k < p->nhops + 2; k++) {
            printf("%s%s", k ? " > " : "", names[k]);
        }
        printf("%s\n", p->usable ? "" : "  (unusable: a cable is missing)");
    }
}

static json_object *path_json(const fab_topo *topo, const fab_path *p, const char *from,
                              const char *to)
{
    const char *names[5];
    char addr[48], hex[16];
    json_object *o = json_object_new_object(), *hops = json_object_new_array();
    hop_names(topo, p, from, to, names);
    snprintf(hex, sizeof(hex), "0x%08" PRIx32, p->ev);
    json_object_object_add(o, "ev", json_object_new_int64(p->ev));
    json_object_object_add(o, "ev_hex", json_object_new_string(hex));
    json_object_object_add(o, "plane", json_object_new_int((int)p->plane));
    json_object_object_add(o, "t1", p->t1 < 0 ? NULL : json_object_new_int(p->t1));
    json_object_object_add(o, "usable", json_object_new_boolean(p->usable));
    json_object_object_add(o, "outer_address",
                           json_object_new_string(fab_addr_str(p->outer, addr)));
    for (unsigned k = 0; k < p->nhops + 2; k++) {
        json_object_array_add(hops, json_object_new_string(names[k]));
    }
    json_object_object_add(o, "hops", hops);
    return o;
}

static struct {
    char *from, *to, *ev;
} po; /* --from, --to, --ev */

static int run_path(mrcctl *c, int noperands, char **operands)
{
    const char *from = po.from, *to = po.to, *evtext = po.ev;
    int rv;
    (void)noperands;
    (void)operands;
    uint32_t ev = 0;
    if (evtext) {
        char *end;
        unsigned long long v = strtoull(evtext, &end, 0);
        if (*end != '\0' || end == evtext || evtext[0] == '-' || v > UINT32_MAX) {
            return mrcctl_usage(c, "--ev %s is not an EV (a 32-bit number, decimal or 0x hex)",
                                evtext);
        }
        ev = (uint32_t)v;
    }
    if ((rv = mrcctl_load(c, NULL)) != 0) {
        return rv;
    }
    const fab_topo *topo = c->topo;
    uint32_t src, dst;
    unsigned sport, dport;
    if (fab_hostport_parse(topo, from, &src, &sport) != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "'%s' is not a host port (HOST:PORT) of %s (mrcctl topo hosts lists "
                           "them)",
                           from, c->topology);
    }
    if (fab_hostport_parse(topo, to, &dst, &dport) != 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "'%s' is not a host port (HOST:PORT) of %s (mrcctl topo hosts lists "
                           "them)",
                           to, c->topology);
    }
    if (sport != dport || src == dst) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "%s and %s are not two host ports of one plane (port k is on plane k)",
                           from, to);
    }
    size_t n = 0;
    fab_path *paths = util_xcalloc(fab_topo_nt1(topo, sport) + 1, sizeof(fab_path));
    if (evtext) {
        unsigned plane = fab_ev_plane(fab_topo_plan(topo), ev);
        if (plane != sport) {
            rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                             "EV 0x%08" PRIx32 " is on plane %u, but %s is on plane %u", ev, plane,
                             from, sport);
            goto out;
        }
        if (fab_path_of_ev(topo, src, dst, ev, &paths[0]) != 0) {
            rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                             "EV 0x%08" PRIx32 " names T1 %u, which plane %u does not have", ev,
                             fab_ev_t1(fab_topo_plan(topo), ev), plane);
            goto out;
        }
        n = 1;
    } else if (fab_path_enum(topo, src, sport, dst, dport, paths, fab_topo_nt1(topo, sport) + 1,
                             &n) != 0) {
        rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "%s or %s is not cabled", from, to);
        goto out;
    }
    if (!c->json) {
        print_text(topo, paths, n, from, to);
    } else {
        json_object *doc = json_object_new_object(), *list = json_object_new_array();
        json_object_object_add(doc, "from", json_object_new_string(from));
        json_object_object_add(doc, "to", json_object_new_string(to));
        json_object_object_add(doc, "plane", json_object_new_int((int)sport));
        for (size_t i = 0; i < n; i++) {
            json_object_array_add(list, path_json(topo, &paths[i], from, to));
        }
        json_object_object_add(doc, "paths", list);
        mrcctl_print_json(doc);
    }
out:
    free(paths);
    return rv;
}

/* clang-format off */
static const util_opt path_opts[] = {
    {.name = "from", .kind = UTIL_OPT_STR, .dest = &po.from, .arg = "HOST:PORT", .required = true, .help = "the sending host port (the port is the plane)"},
    {.name = "to", .kind = UTIL_OPT_STR, .dest = &po.to, .arg = "HOST:PORT", .required = true, .help = "the receiving host port, of the same plane"},
    {.name = "ev", .kind = UTIL_OPT_STR, .dest = &po.ev, .arg = "EV", .help = "only the path of this EV (decimal or 0x hex; default: every EV)"},
    UTIL_OPT_END,
};
/* clang-format on */
static const util_opt *const path_tables[] = {path_opts, NULL};

static const util_cli path_cli = {
    .prog = "mrcctl path",
    .usage = "mrcctl path --from HOST:PORT --to HOST:PORT [--ev EV] [OPTIONS]",
    .about = "Lists each EV between two host ports of one plane of the topology (-t FILE): its\n"
             "T1, its outer destination address and its hops.",
    .tables = path_tables,
};

const mrcctl_cmd mrcctl_path_cmd = {
    .name = "path",
    .summary = "the hops and outer address of each EV between two host ports",
    .cli = &path_cli,
    .run = run_path,
};
