/* SPDX-License-Identifier: MIT */
/* mrcctl routes: render switch tables in four formats, and install them over netlink. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mrcctl_install.h"
#include "mrcctl_netlink.h"
#include "mrcctl.h"
#include "util.h"

typedef struct routes_opts {
    char *sw;
    char *fmt;
    char *out;
    char *netns;
    bool all;
    bool dry_run;
} routes_opts;

static routes_opts ro;

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
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "no switch named '%s' in %s (mrcctl topo switches lists them)", name,
                           c->topology);
    }
    return MRCCTL_OK;
}

static int render(mrcctl *c, const routes_opts *o)
{
    int fmt = fab_format_parse(o->fmt); /* one of the choices of --format */
    uint32_t first = 0, last = 0;
    fab_tables *tables = NULL;
    int rv;
    if (fmt < 0) {
        return mrcctl_usage(c, "--format takes json, iproute2, sonic or frr, not '%s'", o->fmt);
    }
    if (o->sw && o->all) {
        return mrcctl_usage(c, "give --switch NAME or --all, not both");
    }
    if (!o->sw && !o->all) {
        return mrcctl_usage(c, "give --switch NAME (one switch) or --all (every switch)");
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
               plan->counts[MRCCTL_OP_ADD], plan->counts[MRCCTL_OP_CHANGE],
               plan->counts[MRCCTL_OP_REMOVE], plan->unchanged, plan->counts[MRCCTL_OP_CONFLICT],
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

static int run_render(mrcctl *c, int n, char **operands)
{
    (void)n;
    (void)operands;
    return render(c, &ro);
}

static int run_install(mrcctl *c, int n, char **operands)
{
    (void)n;
    (void)operands;
    return install(c, &ro);
}

/* clang-format off */
static const util_opt render_opts[] = {
    {.name = "switch", .kind = UTIL_OPT_STR, .dest = &ro.sw, .arg = "NAME", .help = "the switch whose table is rendered"},
    {.name = "all", .kind = UTIL_OPT_BOOL, .dest = &ro.all, .help = "every switch's table"},
    {.name = "format", .kind = UTIL_OPT_STR, .def = "json", .dest = &ro.fmt, .arg = "FORMAT", .choices = "json|iproute2|sonic|frr", .help = "json (the table), iproute2 (for ip -force -batch), sonic (config_db) or frr (FRR 10.4)"},
    {.name = "out", .kind = UTIL_OPT_STR, .dest = &ro.out, .arg = "DIR", .help = "write one file per switch into DIR (created if missing) instead of stdout"},
    UTIL_OPT_END,
};
static const util_opt install_opts[] = {
    {.name = "switch", .kind = UTIL_OPT_STR, .dest = &ro.sw, .arg = "NAME", .required = true, .help = "the switch this is (its table is installed here)"},
    {.name = "netns", .kind = UTIL_OPT_STR, .dest = &ro.netns, .arg = "NS", .help = "the network namespace the switch is (default: this one)"},
    {.name = "dry-run", .kind = UTIL_OPT_BOOL, .dest = &ro.dry_run, .help = "print the difference only; change nothing"},
    UTIL_OPT_END,
};
/* clang-format on */
static const util_opt *const render_tables[] = {render_opts, NULL};
static const util_opt *const install_tables[] = {install_opts, NULL};

static const util_cli render_cli = {
    .prog = "mrcctl routes render",
    .usage = "mrcctl routes render (--switch NAME | --all) [--format json|iproute2|sonic|frr]\n"
             "                          [--out DIR] [OPTIONS]",
    .about =
        "Renders the static table of a switch, or of every switch, from the topology (-t FILE):\n"
        "on stdout (several as one JSON array or SONiC object), or one file per switch in DIR.",
    .tables = render_tables,
};
static const util_cli install_cli = {
    .prog = "mrcctl routes install",
    .usage = "mrcctl routes install --switch NAME [--netns NS] [--dry-run] [OPTIONS]",
    .about = "Reconciles a Linux switch with its table over netlink: prints the difference, adds\n"
             "what is missing, replaces what changed, removes the stale routes and addresses it\n"
             "owns (the plan's route protocol) and leaves anything else alone; a foreign route on\n"
             "a prefix it wants is a conflict (exit 1).",
    .tables = install_tables,
};

static const mrcctl_cmd routes_cmds[] = {
    {.name = "render",
     .summary = "render switch tables: json, iproute2, sonic or frr",
     .cli = &render_cli,
     .run = run_render},
    {.name = "install",
     .summary = "reconcile a Linux switch with its table over netlink",
     .cli = &install_cli,
     .run = run_install},
    {.name = NULL},
};

const mrcctl_cmd mrcctl_routes_cmd = {
    .name = "routes",
    .summary = "Renders the switches' static tables and installs them into Linux switches.",
    .subs = routes_cmds,
};
