/* SPDX-License-Identifier: MIT */
/* mrcctl topo: validate and expand a topology, and list its cables, host ports and switches. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mrcctl.h"
#include "util.h"

static json_object *plane_counts(const fab_topo *topo,
                                 uint32_t (*count)(const fab_topo *, unsigned))
{
    json_object *a = json_object_new_array();
    for (unsigned p = 0; p < fab_topo_planes(topo); p++) {
        json_object_array_add(a, json_object_new_int64(count(topo, p)));
    }
    return a;
}

static int validate(mrcctl *c)
{
    fab_tables *tables;
    const fab_topo *topo = c->topo;
    if (fab_tables_compute(topo, &tables) != 0) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "out of memory");
    }
    uint64_t nroutes = fab_tables_nroutes(tables);
    fab_tables_free(tables);
    if (!c->json) {
        printf("%s: valid: fabric '%s', %u planes, %u switches, %u hosts, %llu cables "
               "(%llu declared missing), %llu routes\n",
               c->topology, fab_topo_name(topo), fab_topo_planes(topo), fab_topo_nswitches(topo),
               fab_topo_nhosts(topo), (unsigned long long)fab_topo_ncables(topo),
               (unsigned long long)fab_topo_nmissing(topo), (unsigned long long)nroutes);
        return MRCCTL_OK;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "valid", json_object_new_boolean(1));
    json_object_object_add(o, "file", json_object_new_string(c->topology));
    json_object_object_add(o, "name", json_object_new_string(fab_topo_name(topo)));
    json_object_object_add(o, "planes", json_object_new_int((int)fab_topo_planes(topo)));
    json_object_object_add(o, "switches", json_object_new_int64(fab_topo_nswitches(topo)));
    json_object_object_add(o, "t0_per_plane", plane_counts(topo, fab_topo_nt0));
    json_object_object_add(o, "t1_per_plane", plane_counts(topo, fab_topo_nt1));
    json_object_object_add(o, "hosts", json_object_new_int64(fab_topo_nhosts(topo)));
    json_object_object_add(o, "cables", json_object_new_int64((int64_t)fab_topo_ncables(topo)));
    json_object_object_add(o, "missing_cables",
                           json_object_new_int64((int64_t)fab_topo_nmissing(topo)));
    json_object_object_add(o, "routes", json_object_new_int64((int64_t)nroutes));
    mrcctl_print_json(o);
    return MRCCTL_OK;
}

static int expand(mrcctl *c, const char *out)
{
    if (!out) {
        return fab_topo_expand(c->topo, mrcctl_sink_file, stdout) == 0
                   ? MRCCTL_OK
                   : mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write: %s", strerror(errno));
    }
    util_afile af;
    int rv = util_afile_open(&af, out);
    if (rv != 0) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write %s: %s", out, strerror(-rv));
    }
    if (fab_topo_expand(c->topo, mrcctl_sink_file, af.f) != 0) {
        util_afile_abort(&af);
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write %s", out);
    }
    rv = util_afile_commit(&af);
    if (rv != 0) {
        return mrcctl_fail(c, MRCCTL_FAIL, NULL, "cannot write %s: %s", out, strerror(-rv));
    }
    return MRCCTL_OK;
}

static json_object *end_json(const char *elem, unsigned port, const char *ifname)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "element", json_object_new_string(elem));
    json_object_object_add(o, "port", json_object_new_int((int)port));
    json_object_object_add(o, "ifname", json_object_new_string(ifname));
    return o;
}

/* The lists print one row a line. With the header line that names the columns (the default)
 * the columns are aligned under it, padded to the widest value, which takes a first pass over
 * the rows; with --no-header (scripts that read the rows) they are one space apart, in one
 * pass. */
#define COLS_MAX 10
typedef struct row {
    const char *col[COLS_MAX]; /* borrowed */
} row;

typedef struct table {
    unsigned ncols;
    const char *const *names;
    int width[COLS_MAX];
    bool printing; /* the second pass */
} table;

static bool header; /* --header, the default */


static void table_init(table *t, const char *const *names, unsigned ncols)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
    t->names = names;
    for (unsigned i = 0; i < ncols; i++) {
        t->width[i] = header ? (int)strlen(names[i]) : 0;
    }
}

static void table_row(table *t, const row *r)
{
    if (!t->printing) {
        for (unsigned i = 0; i < t->ncols; i++) {
            t->width[i] = mrcctl_width(t->width[i], r->col[i]);
        }
        return;
    }
    for (unsigned i = 0; i < t->ncols; i++) {
        size_t len = strlen(r->col[i]);
        fwrite(r->col[i], 1, len, stdout);
        if (i + 1 == t->ncols) {
            break; /* the last column is not padded: no trailing blanks */
        }
        for (int pad = header ? t->width[i] - (int)len : 0; pad > 0; pad--) {
            putchar(' ');
        }
        putchar(' ');
    }
    putchar('\n');
}

/* After the first pass: the header line, and the rows from now on. */
static void table_start(table *t)
{
    t->printing = true;
    if (!header) {
        return;
    }
    row h;
    for (unsigned i = 0; i < t->ncols; i++) {
        h.col[i] = t->names[i];
    }
    table_row(t, &h);
}

/* Every cable once, from its T0 end: "host" (host port to T0) or "uplink" (T0 to T1). */
static int cables(mrcctl *c)
{
    static const char *const names[] = {"KIND",  "PLANE", "T0",        "T0-PORT",
                                        "T0-IF", "PEER",  "PEER-PORT", "PEER-IF"};
    const fab_topo *topo = c->topo;
    json_object *list = c->json ? json_object_new_array() : NULL;
    table t;
    table_init(&t, names, 8);
    for (int pass = list || !header ? 1 : 0; pass < 2; pass++) {
        if (pass == 1 && !list) {
            table_start(&t);
        }
        for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
            fab_switch s;
            fab_switch_get(topo, sw, &s);
            if (s.tier != FAB_TIER_T0) {
                continue;
            }
            for (unsigned x = 0; x < s.nports; x++) {
                fab_peer peer;
                char aif[FAB_IFNAME_MAX], bif[FAB_IFNAME_MAX], bname[FAB_NAME_MAX];
                fab_switch_peer(topo, sw, x, &peer);
                if (peer.kind == FAB_PEER_NONE) {
                    continue;
                }
                fab_switch_ifname(topo, sw, x, aif, sizeof(aif));
                if (peer.kind == FAB_PEER_HOST) {
                    fab_host_ifname(topo, peer.id, peer.port, bif, sizeof(bif));
                    snprintf(bname, sizeof(bname), "%s", fab_host_name(topo, peer.id));
                } else {
                    fab_switch t1;
                    fab_switch_get(topo, peer.id, &t1);
                    fab_switch_ifname(topo, peer.id, peer.port, bif, sizeof(bif));
                    snprintf(bname, sizeof(bname), "%s", t1.name);
                }
                const char *kind = peer.kind == FAB_PEER_HOST ? "host" : "uplink";
                if (!list) {
                    char plane[12], port[12], bport[12];
                    snprintf(plane, sizeof(plane), "%u", s.plane);
                    snprintf(port, sizeof(port), "%u", x);
                    snprintf(bport, sizeof(bport), "%u", peer.port);
                    row r = {{kind, plane, s.name, port, aif, bname, bport, bif}};
                    table_row(&t, &r);
                    continue;
                }
                json_object *o = json_object_new_object();
                json_object_object_add(o, "kind", json_object_new_string(kind));
                json_object_object_add(o, "plane", json_object_new_int((int)s.plane));
                json_object_object_add(o, "t0", end_json(s.name, x, aif));
                json_object_object_add(o, peer.kind == FAB_PEER_HOST ? "host" : "t1",
                                       end_json(bname, peer.port, bif));
                json_object_array_add(list, o);
            }
        }
    }
    if (list) {
        json_object *doc = json_object_new_object();
        json_object_object_add(doc, "cables", list);
        mrcctl_print_json(doc);
    }
    return MRCCTL_OK;
}

/* Every cabled host port: its interface, own address, uSID address, the T0 gateway, and the
 * uSID block the host reaches through that gateway. */
static int hosts(mrcctl *c)
{
    static const char *const names[] = {"HOST",    "PORT", "IFNAME",  "ADDRESS", "USID-ADDRESS",
                                        "GATEWAY", "T0",   "T0-PORT", "T0-IF",   "BLOCK"};
    const fab_topo *topo = c->topo;
    json_object *list = c->json ? json_object_new_array() : NULL;
    char block[48], blocklen[56], a[64];
    table t;
    table_init(&t, names, 10);
    fab_addr_str(fab_topo_plan(topo)->block, block);
    snprintf(blocklen, sizeof(blocklen), "%s/32", block);
    for (int pass = list || !header ? 1 : 0; pass < 2; pass++) {
        if (pass == 1 && !list) {
            table_start(&t);
        }
        for (uint32_t h = 0; h < fab_topo_nhosts(topo); h++) {
            for (unsigned p = 0; p < fab_topo_planes(topo); p++) {
                uint32_t sw;
                unsigned x;
                if (fab_host_attach(topo, h, p, &sw, &x) != 0) {
                    continue;
                }
                fab_switch t0;
                uint8_t addr[16], uaddr[16], gw[16];
                char ifname[FAB_IFNAME_MAX], t0if[FAB_IFNAME_MAX], ua[48], g[48];
                fab_switch_get(topo, sw, &t0);
                fab_host_ifname(topo, h, p, ifname, sizeof(ifname));
                fab_switch_ifname(topo, sw, x, t0if, sizeof(t0if));
                fab_host_addr(topo, h, p, addr);
                fab_host_usid_addr(topo, h, p, uaddr);
                fab_switch_port_lladdr(topo, sw, x, gw);
                fab_addr_str(addr, a);
                fab_addr_str(uaddr, ua);
                fab_addr_str(gw, g);
                if (!list) {
                    char port[12], t0port[12];
                    snprintf(port, sizeof(port), "%u", p);
                    snprintf(t0port, sizeof(t0port), "%u", x);
                    row r = {{fab_host_name(topo, h), port, ifname, a, ua, g, t0.name, t0port, t0if,
                              blocklen}};
                    table_row(&t, &r);
                    continue;
                }
                json_object *o = json_object_new_object();
                json_object_object_add(o, "host", json_object_new_string(fab_host_name(topo, h)));
                json_object_object_add(o, "port", json_object_new_int((int)p));
                json_object_object_add(o, "ifname", json_object_new_string(ifname));
                json_object_object_add(o, "address", json_object_new_string(a));
                json_object_object_add(o, "usid_address", json_object_new_string(ua));
                json_object_object_add(o, "gateway", json_object_new_string(g));
                json_object_object_add(o, "t0", end_json(t0.name, x, t0if));
                json_object_array_add(list, o);
            }
        }
    }
    if (list) {
        json_object *doc = json_object_new_object();
        snprintf(a, sizeof(a), "%s/32", block);
        json_object_object_add(doc, "block", json_object_new_string(a));
        json_object_object_add(doc, "host_ports", list);
        mrcctl_print_json(doc);
    }
    return MRCCTL_OK;
}

/* Every switch: plane, tier, index, uSID, SID device and port count. */
static int switches(mrcctl *c)
{
    static const char *const names[] = {"NAME", "PLANE",      "TIER", "INDEX",
                                        "USID", "SID-DEVICE", "PORTS"};
    const fab_topo *topo = c->topo;
    json_object *list = c->json ? json_object_new_array() : NULL;
    table t;
    table_init(&t, names, 7);
    for (int pass = list || !header ? 1 : 0; pass < 2; pass++) {
        if (pass == 1 && !list) {
            table_start(&t);
        }
        for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
            fab_switch s;
            char usid[8];
            fab_switch_get(topo, sw, &s);
            snprintf(usid, sizeof(usid), "0x%04x", s.usid);
            const char *tier = s.tier == FAB_TIER_T0 ? "t0" : "t1";
            if (!list) {
                char plane[12], index[12], ports[12];
                snprintf(plane, sizeof(plane), "%u", s.plane);
                snprintf(index, sizeof(index), "%u", s.index);
                snprintf(ports, sizeof(ports), "%u", s.nports);
                row r = {{s.name, plane, tier, index, usid, s.sid_device, ports}};
                table_row(&t, &r);
                continue;
            }
            json_object *o = json_object_new_object();
            json_object_object_add(o, "name", json_object_new_string(s.name));
            json_object_object_add(o, "plane", json_object_new_int((int)s.plane));
            json_object_object_add(o, "tier", json_object_new_string(tier));
            json_object_object_add(o, "index", json_object_new_int((int)s.index));
            json_object_object_add(o, "usid", json_object_new_string(usid));
            json_object_object_add(o, "sid_device", json_object_new_string(s.sid_device));
            json_object_object_add(o, "ports", json_object_new_int((int)s.nports));
            json_object_array_add(list, o);
        }
    }
    if (list) {
        json_object *doc = json_object_new_object();
        json_object_object_add(doc, "switches", list);
        mrcctl_print_json(doc);
    }
    return MRCCTL_OK;
}

/* validate with --json: a failed validation is an answer, not only an error, and says so in
 * its document. */
static int validate_json(mrcctl *c, const char *file)
{
    fab_error err = {{0}, {0}};
    const char *path = file ? file : c->topology;
    int rv = fab_topo_load_file(path, &c->topo, &err);
    if (rv != 0) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "path", json_object_new_string(err.path));
        json_object_object_add(e, "message", json_object_new_string(err.msg));
        json_object *o = json_object_new_object();
        json_object_object_add(o, "valid", json_object_new_boolean(0));
        json_object_object_add(o, "file", json_object_new_string(path));
        json_object_object_add(o, "error", e);
        mrcctl_print_json(o);
        fprintf(stderr, "mrcctl: %s: %s: %s\n", err.path, path, err.msg);
        return rv == FAB_ERR_NOMEM ? MRCCTL_FAIL : MRCCTL_BADINPUT;
    }
    c->topology = path;
    return validate(c);
}

static const char *file_of(int n, char **operands)
{
    return n > 0 ? operands[0] : NULL;
}

static int run_validate(mrcctl *c, int n, char **operands)
{
    int rv;
    if (c->json) {
        return validate_json(c, file_of(n, operands));
    }
    if ((rv = mrcctl_load(c, file_of(n, operands))) != 0) {
        return rv;
    }
    return validate(c);
}

static char *out; /* --out F of topo expand */

static int run_expand(mrcctl *c, int n, char **operands)
{
    int rv = mrcctl_load(c, file_of(n, operands));
    return rv != 0 ? rv : expand(c, out);
}

static int run_cables(mrcctl *c, int n, char **operands)
{
    int rv = mrcctl_load(c, file_of(n, operands));
    return rv != 0 ? rv : cables(c);
}

static int run_hosts(mrcctl *c, int n, char **operands)
{
    int rv = mrcctl_load(c, file_of(n, operands));
    return rv != 0 ? rv : hosts(c);
}

static int run_switches(mrcctl *c, int n, char **operands)
{
    int rv = mrcctl_load(c, file_of(n, operands));
    return rv != 0 ? rv : switches(c);
}

/* clang-format off */
static const util_opt expand_opts[] = {
    {.name = "out", .kind = UTIL_OPT_STR, .dest = &out, .arg = "F", .help = "write the explicit form into F (atomically) instead of stdout"},
    UTIL_OPT_END,
};
static const util_opt list_opts[] = {
    {.name = "header", .kind = UTIL_OPT_BOOL, .def = "true", .dest = &header, .help = "a first line naming the columns, and the columns aligned under it (--no-header: rows alone, one space apart, for scripts)"},
    UTIL_OPT_END,
};
/* clang-format on */
static const util_opt *const no_tables[] = {NULL};
static const util_opt *const expand_tables[] = {expand_opts, NULL};
static const util_opt *const list_tables[] = {list_opts, NULL};

#define FILE_NOTE                                                                                  \
    "FILE is the topology file (default: -t FILE, $MRCFAB_TOPOLOGY or " MRCCTL_TOPOLOGY ")."

static const util_cli validate_cli = {
    .prog = "mrcctl topo validate",
    .usage = "mrcctl topo validate [FILE] [OPTIONS]",
    .about = "Checks a topology file: its counts if it is good; exit 2 and the JSON path of the\n"
             "first fault if not (with --json, a verdict document either way).\n" FILE_NOTE,
    .tables = no_tables,
    .max_operands = 1,
};
static const util_cli expand_cli = {
    .prog = "mrcctl topo expand",
    .usage = "mrcctl topo expand [FILE] [--out F] [OPTIONS]",
    .about = "Writes the explicit form of a topology: every switch, host and cable.\n" FILE_NOTE,
    .tables = expand_tables,
    .max_operands = 1,
};
static const util_cli cables_cli = {
    .prog = "mrcctl topo cables",
    .usage = "mrcctl topo cables [FILE] [--no-header] [--json] [OPTIONS]",
    .about =
        "Lists every cable once, from its T0 end, with the interface names at both ends:\n"
        "KIND (host or uplink), PLANE, T0, T0-PORT, T0-IF, PEER, PEER-PORT, PEER-IF.\n" FILE_NOTE,
    .tables = list_tables,
    .max_operands = 1,
};
static const util_cli hosts_cli = {
    .prog = "mrcctl topo hosts",
    .usage = "mrcctl topo hosts [FILE] [--no-header] [--json] [OPTIONS]",
    .about = "Lists every cabled host port with its addresses and gateway: HOST, PORT, IFNAME,\n"
             "ADDRESS, USID-ADDRESS, GATEWAY, T0, T0-PORT, T0-IF and the uSID BLOCK.\n" FILE_NOTE,
    .tables = list_tables,
    .max_operands = 1,
};
static const util_cli switches_cli = {
    .prog = "mrcctl topo switches",
    .usage = "mrcctl topo switches [FILE] [--no-header] [--json] [OPTIONS]",
    .about =
        "Lists every switch: NAME, PLANE, TIER, INDEX, USID, SID-DEVICE and PORTS.\n" FILE_NOTE,
    .tables = list_tables,
    .max_operands = 1,
};

static const mrcctl_cmd topo_cmds[] = {
    {.name = "validate",
     .summary = "check a topology file (exit 2 and the JSON path if bad)",
     .cli = &validate_cli,
     .run = run_validate},
    {.name = "expand",
     .summary = "write the explicit form: every switch, host and cable",
     .cli = &expand_cli,
     .run = run_expand},
    {.name = "cables",
     .summary = "list every cable with its interface names",
     .cli = &cables_cli,
     .run = run_cables},
    {.name = "hosts",
     .summary = "list every host port with its addresses and gateway",
     .cli = &hosts_cli,
     .run = run_hosts},
    {.name = "switches",
     .summary = "list every switch with its uSID and SID device",
     .cli = &switches_cli,
     .run = run_switches},
    {.name = NULL},
};

const mrcctl_cmd mrcctl_topo_cmd = {
    .name = "topo",
    .summary = "Checks, expands and lists topology files.",
    .subs = topo_cmds,
};
