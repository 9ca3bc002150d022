/* SPDX-License-Identifier: MIT */
/* mrcctl topo: validate, expand, and list the cables and host ports of a topology. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

static int parse_opts(mrcctl *c, int argc, char **argv, const char **pout, const char **pfile)
{
    static const struct option opts[] = {
        MRCCTL_COMMON_LONGOPTS, {"out", required_argument, NULL, 'o'}, {NULL, 0, NULL, 0}};
    int opt;
    optind = 0;
    while ((opt = getopt_long(argc, argv, "t:o:", opts, NULL)) != -1) {
        if (mrcctl_common_opt(c, opt)) {
            continue;
        }
        if (opt == 'o' && pout) {
            *pout = optarg;
            continue;
        }
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "bad option for 'topo %s'", argv[0]);
    }
    if (optind < argc - 1) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "'topo %s' takes one file", argv[0]);
    }
    *pfile = optind < argc ? argv[optind] : NULL;
    return MRCCTL_OK;
}

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

/* Every cable once, from its T0 end: "host" (host port to T0) or "uplink" (T0 to T1). */
static int cables(mrcctl *c)
{
    const fab_topo *topo = c->topo;
    json_object *list = c->json ? json_object_new_array() : NULL;
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
                printf("%s %u %s %u %s %s %u %s\n", kind, s.plane, s.name, x, aif, bname, peer.port,
                       bif);
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
    const fab_topo *topo = c->topo;
    json_object *list = c->json ? json_object_new_array() : NULL;
    char block[48], a[64];
    fab_addr_str(fab_topo_plan(topo)->block, block);
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
                printf("%s %u %s %s %s %s %s %u %s %s/32\n", fab_host_name(topo, h), p, ifname, a,
                       ua, g, t0.name, x, t0if, block);
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
    const fab_topo *topo = c->topo;
    json_object *list = c->json ? json_object_new_array() : NULL;
    for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
        fab_switch s;
        char usid[8];
        fab_switch_get(topo, sw, &s);
        snprintf(usid, sizeof(usid), "0x%04x", s.usid);
        const char *tier = s.tier == FAB_TIER_T0 ? "t0" : "t1";
        if (!list) {
            printf("%s %u %s %u %s %s %u\n", s.name, s.plane, tier, s.index, usid, s.sid_device,
                   s.nports);
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
    if (list) {
        json_object *doc = json_object_new_object();
        json_object_object_add(doc, "switches", list);
        mrcctl_print_json(doc);
    }
    return MRCCTL_OK;
}

int mrcctl_topo(mrcctl *c, int argc, char **argv)
{
    static const char *const verbs[] = {"validate", "expand", "cables", "hosts", "switches"};
    const char *out = NULL, *file = NULL;
    int verb = -1, rv;
    for (int i = 0; argc > 1 && i < 5; i++) {
        if (strcmp(argv[1], verbs[i]) == 0) {
            verb = i;
        }
    }
    if (verb < 0) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                           "usage: mrcctl topo validate|expand|cables|hosts|switches [FILE]");
    }
    if ((rv = parse_opts(c, argc - 1, argv + 1, verb == 1 ? &out : NULL, &file)) != 0) {
        return rv;
    }
    if (verb == 0 && c->json) {
        /* a failed validation is an answer, not only an error: say so in the document */
        fab_error err = {{0}, {0}};
        const char *path = file ? file : c->topology;
        rv = fab_topo_load_file(path, &c->topo, &err);
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
    if ((rv = mrcctl_load(c, file)) != 0) {
        return rv;
    }
    switch (verb) {
    case 0:
        return validate(c);
    case 1:
        return expand(c, out);
    case 2:
        return cables(c);
    case 3:
        return hosts(c);
    default:
        return switches(c);
    }
}
