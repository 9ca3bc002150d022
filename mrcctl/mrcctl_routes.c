/* SPDX-License-Identifier: MIT */
/* mrcctl routes: render switch tables in four formats, and install them over netlink. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mrcctl_install.h"
#include "mrcctl_netlink.h"
#include "mrcctl.h"
#include "util.h"

typedef struct routes_opts {
    const char *sw;
    const char *fmt;
    const char *out;
    const char *netns;
    bool all;
    bool dry_run;
} routes_opts;

static int parse_opts(mrcctl *c, int argc, char **argv, routes_opts *o)
{
    static const struct option opts[] = {MRCCTL_COMMON_LONGOPTS,
                                         {"switch", required_argument, NULL, 's'},
                                         {"all", no_argument, NULL, 'a'},
                                         {"format", required_argument, NULL, 'f'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"netns", required_argument, NULL, 'n'},
                                         {"dry-run", no_argument, NULL, 'd'},
                                         {NULL, 0, NULL, 0}};
    int opt;
    optind = 0;
    while ((opt = getopt_long(argc, argv, "t:s:af:o:n:d", opts, NULL)) != -1) {
        if (mrcctl_common_opt(c, opt)) {
            continue;
        }
        switch (opt) {
        case 's':
            o->sw = optarg;
            break;
        case 'a':
            o->all = true;
            break;
        case 'f':
            o->fmt = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'n':
            o->netns = optarg;
            break;
        case 'd':
            o->dry_run = true;
            break;
        default:
            return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "bad option for 'routes %s'", argv[0]);
        }
    }
    if (optind < argc) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "unexpected argument '%s'", argv[optind]);
    }
    return MRCCTL_OK;
}

static const char *const extensions[] = {".json", ".ip", ".config_db.json", ".frr.conf"};

static int render_dir(mrcctl *c, const fab_tables *tables, fab_format fmt, uint32_t first,
                      uint32_t last, const char *dir)
{
    const fab_topo *topo = c->topo;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot create %s: %s", dir, strerror(errno));
    }
    json_object *written = c->json ? json_object_new_array() : NULL;
    int rv = MRCCTL_OK;
    for (uint32_t sw = first; sw < last; sw++) {
        fab_switch s;
        char path[4096];
        util_afile af;
        fab_switch_get(topo, sw, &s);
        snprintf(path, sizeof(path), "%s/%s%s", dir, s.name, extensions[fmt]);
        int err = util_afile_open(&af, path);
        if (err != 0) {
            rv = mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write %s: %s", path, strerror(-err));
            break;
        }
        if (fab_render_switch(topo, tables, sw, fmt, mrcctl_sink_file, af.f) != 0) {
            util_afile_abort(&af);
            rv = mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write %s", path);
            break;
        }
        if ((err = util_afile_commit(&af)) != 0) {
            rv = mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write %s: %s", path, strerror(-err));
            break;
        }
        if (written) {
            json_object *w = json_object_new_object();
            json_object_object_add(w, "switch", json_object_new_string(s.name));
            json_object_object_add(w, "file", json_object_new_string(path));
            json_object_array_add(written, w);
        }
    }
    if (rv == MRCCTL_OK && written) {
        json_object *doc = json_object_new_object();
        json_object_object_add(doc, "written", written);
        mrcctl_print_json(doc);
    } else if (rv == MRCCTL_OK) {
        printf("wrote %u file%s to %s\n", last - first, last - first == 1 ? "" : "s", dir);
    } else {
        json_object_put(written);
    }
    return rv;
}

/* Several switches on stdout: a JSON array, a SONiC object keyed by switch, or plain text. */
static int render_stdout(mrcctl *c, const fab_tables *tables, fab_format fmt, uint32_t first,
                         uint32_t last)
{
    bool many = last - first > 1;
    if (many && fmt == FAB_FMT_JSON) {
        fputs("[\n", stdout);
    } else if (many && fmt == FAB_FMT_SONIC) {
        fputs("{\n", stdout);
    }
    for (uint32_t sw = first; sw < last; sw++) {
        fab_switch s;
        fab_switch_get(c->topo, sw, &s);
        if (many && fmt == FAB_FMT_SONIC) {
            printf("\"%s\":\n", s.name);
        }
        if (fab_render_switch(c->topo, tables, sw, fmt, mrcctl_sink_file, stdout) != 0) {
            return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write: %s", strerror(errno));
        }
        if (many && (fmt == FAB_FMT_JSON || fmt == FAB_FMT_SONIC) && sw + 1 < last) {
            fputs(",\n", stdout);
        }
    }
    if (many && fmt == FAB_FMT_JSON) {
        fputs("]\n", stdout);
    } else if (many && fmt == FAB_FMT_SONIC) {
        fputs("}\n", stdout);
    }
    return fflush(stdout) == 0
               ? MRCCTL_OK
               : mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write: %s", strerror(errno));
}

static int find_switch(mrcctl *c, const char *name, uint32_t *psw)
{
    *psw = fab_switch_find(c->topo, name);
    if (*psw == FAB_NONE) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "no switch named '%s' in %s", name,
                           c->topology);
    }
    return MRCCTL_OK;
}

static int render(mrcctl *c, const routes_opts *o)
{
    int fmt = o->fmt ? fab_format_parse(o->fmt) : FAB_FMT_JSON;
    uint32_t first = 0, last = 0;
    fab_tables *tables = NULL;
    int rv;
    if (fmt < 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "unknown format '%s' (json, iproute2, sonic or frr)", o->fmt);
    }
    if (!!o->sw == o->all) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "give either --switch NAME or --all");
    }
    if ((rv = mrcctl_load(c, NULL)) != 0) {
        return rv;
    }
    if (o->sw) {
        if ((rv = find_switch(c, o->sw, &first)) != 0) {
            return rv;
        }
        last = first + 1;
    } else {
        last = fab_topo_nswitches(c->topo);
    }
    if (fab_tables_compute(c->topo, &tables) != 0) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "out of memory");
    }
    rv = o->out ? render_dir(c, tables, (fab_format)fmt, first, last, o->out)
                : render_stdout(c, tables, (fab_format)fmt, first, last);
    fab_tables_free(tables);
    return rv;
}

static void print_plan(mrcctl *c, mrcctl_nl *nl, const mrcctl_plan *plan, const routes_opts *o,
                       bool applied)
{
    char line[512];
    if (!c->json) {
        printf("%s%s%s: %zu to add, %zu to change, %zu to remove, %zu unchanged, %zu "
               "conflict%s\n",
               o->sw, o->netns ? " in netns " : "", o->netns ? o->netns : "",
               plan->counts[MRCCTL_OP_ADD], plan->counts[MRCCTL_OP_CHANGE], plan->counts[MRCCTL_OP_REMOVE],
               plan->unchanged, plan->counts[MRCCTL_OP_CONFLICT],
               plan->counts[MRCCTL_OP_CONFLICT] == 1 ? "" : "s");
        for (size_t i = 0; i < plan->n; i++) {
            mrcctl_item_describe(nl, &plan->items[i], line, sizeof(line));
            printf("  %-8s %s\n", mrcctl_op_name(plan->items[i].op), line);
        }
        if (o->dry_run) {
            printf("dry run: nothing changed\n");
        } else if (applied && plan->n > plan->counts[MRCCTL_OP_CONFLICT]) {
            printf("applied\n");
        }
        return;
    }
    json_object *doc = json_object_new_object(), *counts = json_object_new_object();
    json_object *changes = json_object_new_array();
    json_object_object_add(doc, "switch", json_object_new_string(o->sw));
    json_object_object_add(doc, "netns", o->netns ? json_object_new_string(o->netns) : NULL);
    json_object_object_add(doc, "dry_run", json_object_new_boolean(o->dry_run));
    json_object_object_add(doc, "applied", json_object_new_boolean(applied));
    json_object_object_add(doc, "unchanged", json_object_new_int64((int64_t)plan->unchanged));
    for (int op = 0; op <= MRCCTL_OP_CONFLICT; op++) {
        json_object_object_add(counts, mrcctl_op_name((mrcctl_op)op),
                               json_object_new_int64((int64_t)plan->counts[op]));
    }
    json_object_object_add(doc, "counts", counts);
    for (size_t i = 0; i < plan->n; i++) {
        const mrcctl_item *it = &plan->items[i];
        json_object *ch = json_object_new_object();
        char a[48], pfx[64];
        json_object_object_add(ch, "op", json_object_new_string(mrcctl_op_name(it->op)));
        json_object_object_add(ch, "kind",
                               json_object_new_string(it->is_addr ? "address" : "route"));
        if (it->is_addr) {
            snprintf(pfx, sizeof(pfx), "%s/%u", fab_addr_str(it->addr.addr, a), it->addr.plen);
        } else {
            snprintf(pfx, sizeof(pfx), "%s/%u", fab_addr_str(it->route.dst, a), it->route.dst_len);
        }
        json_object_object_add(ch, it->is_addr ? "address" : "prefix", json_object_new_string(pfx));
        mrcctl_item_describe(nl, it, line, sizeof(line));
        json_object_object_add(ch, "text", json_object_new_string(line));
        json_object_array_add(changes, ch);
    }
    json_object_object_add(doc, "changes", changes);
    mrcctl_print_json(doc);
}

static int install(mrcctl *c, const routes_opts *o)
{
    fab_tables *tables = NULL;
    mrcctl_nl *nl = NULL;
    mrcctl_plan plan = {0};
    uint32_t sw;
    char errmsg[1024];
    int rv;
    if (!o->sw) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "give --switch NAME");
    }
    if ((rv = mrcctl_load(c, NULL)) != 0 || (rv = find_switch(c, o->sw, &sw)) != 0) {
        return rv;
    }
    if (fab_tables_compute(c->topo, &tables) != 0) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "out of memory");
    }
    if (mrcctl_nl_open(o->netns, &nl, errmsg, sizeof(errmsg)) != 0) {
        rv = mrcctl_fail(c, o->netns ? MRCCTL_BADINPUT : MRCCTL_FAIL, NULL, "%s", errmsg);
        goto out;
    }
    if (mrcctl_install_plan(c->topo, tables, sw, nl, &plan, errmsg, sizeof(errmsg)) != 0) {
        rv = mrcctl_fail(c, MRCCTL_FAIL, NULL, "%s", errmsg);
        goto out;
    }
    if (mrcctl_nl_sysctl6(nl, "conf/all/forwarding") == 0) {
        fprintf(stderr,
                "mrcctl: warning: IPv6 forwarding is off on %s: the routes will not "
                "forward (sysctl net.ipv6.conf.all.forwarding=1)\n",
                o->sw);
    }
    bool applied = false;
    if (!o->dry_run) {
        if (mrcctl_install_apply(nl, &plan, errmsg, sizeof(errmsg)) != 0) {
            print_plan(c, nl, &plan, o, false);
            rv = mrcctl_fail(c, MRCCTL_FAIL, NULL, "%s", errmsg);
            goto out;
        }
        applied = true;
    }
    print_plan(c, nl, &plan, o, applied);
    if (plan.counts[MRCCTL_OP_CONFLICT]) {
        fprintf(stderr,
                "mrcctl: %zu route%s not owned by mrcfab (protocol %u) hold prefixes of %s; "
                "left alone\n",
                plan.counts[MRCCTL_OP_CONFLICT], plan.counts[MRCCTL_OP_CONFLICT] == 1 ? "" : "s",
                fab_topo_plan(c->topo)->route_proto, o->sw);
        rv = MRCCTL_FAIL;
    }
out:
    mrcctl_plan_fini(&plan);
    mrcctl_nl_close(nl);
    fab_tables_free(tables);
    return rv;
}

int mrcctl_routes(mrcctl *c, int argc, char **argv)
{
    routes_opts o = {0};
    int rv;
    if (argc < 2 || (strcmp(argv[1], "render") != 0 && strcmp(argv[1], "install") != 0)) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "usage: mrcctl routes render|install ...");
    }
    if ((rv = parse_opts(c, argc - 1, argv + 1, &o)) != 0) {
        return rv;
    }
    return argv[1][0] == 'r' ? render(c, &o) : install(c, &o);
}
