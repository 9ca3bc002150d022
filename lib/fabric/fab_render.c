/* SPDX-License-Identifier: MIT */
/* Switch tables rendered for Linux (ip -batch), SONiC config_db, FRR and our own JSON. */
#include <string.h>

#include "fab_internal.h"

/* The locator/SID names used in SONiC and FRR: one locator per switch, its own uN. */
#define LOCATOR_NAME "MRCFAB"

/* The locator of a switch: the /32 block and its 16-bit uSID; its uN takes a 16-bit function. */
#define LOC_BLOCK_LEN 32u
#define LOC_NODE_LEN 16u
#define LOC_FUNC_LEN 16u

/*
 * FRR 10.4's defaults for a locator's prefix line (zebra/zebra_srv6_vty.h): zebra_sr_config()
 * prints block-len only when it is not the prefix length less 24, node-len only when it is not
 * 24 and func-bits only when it is not 16, so a file with the defaults spelled out differs from
 * the running config and frr-reload.py deletes the locator and adds it back.
 */
#define FRR_NODE_LEN_DEFAULT 24u
#define FRR_FUNC_LEN_DEFAULT 16u

/* The interface FRR 10.4's staticd attaches every uN SID to (DEFAULT_SRV6_IFNAME, lib/srv6.h). */
#define FRR_SRV6_IFNAME "sr0"

int fab_format_parse(const char *name)
{
    static const char *const names[] = {"json", "iproute2", "sonic", "frr"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static void out_prefix(fab_out *out, const fab_topo *topo, uint16_t usid)
{
    uint8_t a[16];
    fab_plan_container(&topo->plan, &usid, 1, a);
    fab_out_addr(out, a);
    fab_out_fmt(out, "/%u", LOC_BLOCK_LEN + LOC_NODE_LEN);
}

static void out_ifname(fab_out *out, const fab_topo *topo, uint32_t sw, unsigned port)
{
    char name[FAB_IFNAME_MAX];
    fab_switch_ifname(topo, sw, port, name, sizeof(name));
    fab_out_str(out, name);
}

static void out_lladdr(fab_out *out, const fab_topo *topo, uint32_t sw, unsigned port)
{
    uint8_t a[16];
    fab_switch_port_lladdr(topo, sw, port, a);
    fab_out_addr(out, a);
}

static void out_table(fab_out *out, const fab_topo *topo)
{
    if (topo->plan.route_table == 254) {
        fab_out_str(out, "main");
    } else {
        fab_out_uint(out, topo->plan.route_table);
    }
}

static void render_iproute2(fab_out *out, const fab_topo *topo, uint32_t sw, const fab_route *r,
                            size_t n)
{
    const fab_sw *s = &topo->sw[sw];
    fab_out_fmt(out, "# mrcfab static SRv6 table of %s (plane %u, %s %u, uSID 0x%04x)\n",
                fab_str(topo, s->name), s->plane, s->tier == FAB_TIER_T0 ? "T0" : "T1", s->index,
                s->usid);
    /* ip -batch stops at the first line that fails, so one missing port would leave every
     * route after it out: each line is a replace, and -force goes on past a failed one */
    fab_out_str(out, "# apply with: ip -force -batch FILE\n"
                     "#   every line replaces, so a second run changes nothing; -force applies "
                     "every line\n"
                     "#   it can and exits 1 if one failed (plain ip -batch stops at the first "
                     "failure)\n"
                     "# before it:\n");
    fab_out_fmt(out,
                "#   the %zu ports named below exist and are up (a route through a missing "
                "or down port fails)\n",
                n - 1);
    fab_out_fmt(out, "#   the SID device %s exists and is up (e.g. ip link add %s type dummy)\n",
                fab_str(topo, s->sid_dev), fab_str(topo, s->sid_dev));
    fab_out_str(out, "#   IPv6 forwarding is on (sysctl -w net.ipv6.conf.all.forwarding=1)\n");
    for (size_t i = 1; i < n; i++) {
        fab_out_str(out, "address replace ");
        out_lladdr(out, topo, sw, r[i].port);
        fab_out_str(out, "/64 dev ");
        out_ifname(out, topo, sw, r[i].port);
        fab_out_str(out, " nodad\n");
    }
    for (size_t i = 0; i < n; i++) {
        fab_out_str(out, "route replace ");
        out_prefix(out, topo, r[i].usid);
        if (r[i].action == FAB_ACT_UN) {
            fab_out_str(out, " encap seg6local action End flavors next-csid lblen 32 nflen 16 "
                             "count dev ");
            fab_out_str(out, fab_str(topo, s->sid_dev));
        } else {
            if (r[i].peer_kind == FAB_PEER_SWITCH) {
                fab_out_str(out, " via ");
                out_lladdr(out, topo, r[i].peer, r[i].peer_port);
            }
            fab_out_str(out, " dev ");
            out_ifname(out, topo, sw, r[i].port);
        }
        fab_out_str(out, " proto ");
        fab_out_uint(out, topo->plan.route_proto);
        fab_out_str(out, " table ");
        out_table(out, topo);
        fab_out_char(out, '\n');
    }
}

static void out_neighbor(fab_out *out, const fab_topo *topo, const fab_route *r)
{
    if (r->peer_kind == FAB_PEER_HOST) {
        fab_out_char(out, '"');
        fab_out_str(out, fab_str(topo, topo->host_name[r->peer]));
        fab_out_char(out, ':');
        fab_out_uint(out, r->peer_port);
        fab_out_char(out, '"');
    } else {
        fab_out_json_str(out, fab_str(topo, topo->sw[r->peer].name));
    }
}

static void render_json(fab_out *out, const fab_topo *topo, uint32_t sw, const fab_route *r,
                        size_t n)
{
    const fab_sw *s = &topo->sw[sw];
    fab_out_str(out, "{\"switch\":");
    fab_out_json_str(out, fab_str(topo, s->name));
    fab_out_fmt(out, ",\"plane\":%u,\"tier\":\"t%u\",\"index\":%u,\"usid\":\"0x%04x\",", s->plane,
                s->tier, s->index, s->usid);
    fab_out_str(out, "\"sid_device\":");
    fab_out_json_str(out, fab_str(topo, s->sid_dev));
    fab_out_fmt(out, ",\"table\":%u,\"protocol\":%u,\"addresses\":[", topo->plan.route_table,
                topo->plan.route_proto);
    for (size_t i = 1; i < n; i++) {
        fab_out_str(out, i > 1 ? ",{\"port\":" : "{\"port\":");
        fab_out_uint(out, r[i].port);
        fab_out_str(out, ",\"ifname\":\"");
        out_ifname(out, topo, sw, r[i].port);
        fab_out_str(out, "\",\"address\":\"");
        out_lladdr(out, topo, sw, r[i].port);
        fab_out_str(out, "/64\"}");
    }
    fab_out_str(out, "],\"routes\":[");
    for (size_t i = 0; i < n; i++) {
        fab_out_str(out, i ? ",\n{\"prefix\":\"" : "\n{\"prefix\":\"");
        out_prefix(out, topo, r[i].usid);
        if (r[i].action == FAB_ACT_UN) {
            fab_out_str(out, "\",\"action\":\"uN\",\"behavior\":\"End\",\"flavor\":\"next-csid\","
                             "\"lblen\":32,\"nflen\":16,\"device\":");
            fab_out_json_str(out, fab_str(topo, s->sid_dev));
            fab_out_char(out, '}');
            continue;
        }
        fab_out_str(out, "\",\"action\":\"forward\",\"port\":");
        fab_out_uint(out, r[i].port);
        fab_out_str(out, ",\"ifname\":\"");
        out_ifname(out, topo, sw, r[i].port);
        fab_out_str(out, "\",\"neighbor\":");
        out_neighbor(out, topo, &r[i]);
        fab_out_str(out, ",\"neighbor_port\":");
        fab_out_uint(out, r[i].peer_port);
        if (r[i].peer_kind == FAB_PEER_SWITCH) {
            fab_out_str(out, ",\"via\":\"");
            out_lladdr(out, topo, r[i].peer, r[i].peer_port);
            fab_out_str(out, "\"}");
        } else {
            fab_out_str(out, ",\"via\":null}");
        }
    }
    fab_out_str(out, "\n]}\n");
}

static void render_sonic(fab_out *out, const fab_topo *topo, uint32_t sw, const fab_route *r,
                         size_t n)
{
    const fab_sw *s = &topo->sw[sw];
    uint8_t loc[16];
    fab_plan_container(&topo->plan, &s->usid, 1, loc);
    fab_out_str(out, "{\n\"SRV6_MY_LOCATORS\": {\"" LOCATOR_NAME "\": {\"prefix\": \"");
    fab_out_addr(out, loc);
    fab_out_fmt(out,
                "\", \"block_len\": \"%u\", \"node_len\": \"%u\", \"func_len\": \"%u\", "
                "\"arg_len\": \"0\"}},\n",
                LOC_BLOCK_LEN, LOC_NODE_LEN, LOC_FUNC_LEN);
    fab_out_str(out, "\"SRV6_MY_SIDS\": {\"" LOCATOR_NAME "|");
    out_prefix(out, topo, s->usid);
    fab_out_str(out, "\": {\"action\": \"uN\", \"decap_dscp_mode\": \"pipe\"}},\n\"INTERFACE\": {");
    for (size_t i = 1; i < n; i++) {
        fab_out_str(out, i > 1 ? ",\n\"" : "\n\"");
        out_ifname(out, topo, sw, r[i].port);
        fab_out_str(out, "\": {},\n\"");
        out_ifname(out, topo, sw, r[i].port);
        fab_out_char(out, '|');
        out_lladdr(out, topo, sw, r[i].port);
        fab_out_str(out, "/64\": {}");
    }
    fab_out_str(out, "},\n\"STATIC_ROUTE\": {");
    for (size_t i = 1; i < n; i++) {
        fab_out_str(out, i > 1 ? ",\n\"default|" : "\n\"default|");
        out_prefix(out, topo, r[i].usid);
        fab_out_str(out, "\": {");
        if (r[i].peer_kind == FAB_PEER_SWITCH) {
            fab_out_str(out, "\"nexthop\": \"");
            out_lladdr(out, topo, r[i].peer, r[i].peer_port);
            fab_out_str(out, "\", ");
        }
        fab_out_str(out, "\"ifname\": \"");
        out_ifname(out, topo, sw, r[i].port);
        /* bgpcfgd (managers_static_rt.py) tags a route without "advertise": "false" for
         * redistribution into BGP, whatever the YANG model's default says */
        fab_out_str(out, "\", \"advertise\": \"false\"}");
    }
    fab_out_str(out, "}\n}\n");
}

/*
 * The locator's prefix line as FRR 10.4's zebra prints it in its running config
 * (zebra_sr_config(), zebra/zebra_srv6_vty.c): each length only when it is not FRR's default.
 */
static void out_frr_locator_prefix(fab_out *out, const fab_topo *topo, uint16_t usid)
{
    const unsigned plen = LOC_BLOCK_LEN + LOC_NODE_LEN;
    fab_out_str(out, "    prefix ");
    out_prefix(out, topo, usid);
    if (LOC_BLOCK_LEN != plen - FRR_NODE_LEN_DEFAULT) {
        fab_out_fmt(out, " block-len %u", LOC_BLOCK_LEN);
    }
    if (LOC_NODE_LEN != FRR_NODE_LEN_DEFAULT) {
        fab_out_fmt(out, " node-len %u", LOC_NODE_LEN);
    }
    if (LOC_FUNC_LEN != FRR_FUNC_LEN_DEFAULT) {
        fab_out_fmt(out, " func-bits %u", LOC_FUNC_LEN);
    }
    fab_out_char(out, '\n');
}

static void render_frr(fab_out *out, const fab_topo *topo, uint32_t sw, const fab_route *r,
                       size_t n)
{
    const fab_sw *s = &topo->sw[sw];
    const char *sid_dev = fab_str(topo, s->sid_dev);
    fab_out_fmt(out, "! mrcfab static SRv6 table of %s (plane %u, %s %u, uSID 0x%04x)\n",
                fab_str(topo, s->name), s->plane, s->tier == FAB_TIER_T0 ? "T0" : "T1", s->index,
                s->usid);
    fab_out_str(out, "! for FRR 10.4 (static-sids with uN need 10.3 or later; 10.5.0 does not "
                     "install static SIDs)\n");
    fab_out_fmt(out,
                "! before it: the %zu ports named below exist and are up, and the SID "
                "device " FRR_SRV6_IFNAME " exists and is up\n",
                n - 1);
    fab_out_str(out, "! (e.g. ip link add " FRR_SRV6_IFNAME " type dummy): staticd installs the uN "
                     "SID on " FRR_SRV6_IFNAME " only once it is up\n");
    if (strcmp(sid_dev, FRR_SRV6_IFNAME) != 0) {
        /* staticd 10.4 looks up DEFAULT_SRV6_IFNAME by name for every uN: another name is
         * never used, and saying nothing would leave an operator creating the wrong device */
        fab_out_fmt(out,
                    "! the topology names %s as this switch's SID device, but FRR 10.4 "
                    "attaches SIDs to " FRR_SRV6_IFNAME " only\n",
                    sid_dev);
    }
    /* zebra leaves the kernel's forwarding as it finds it (off in a new namespace) unless told,
     * and a switch that does not forward drops every packet its uN and routes send on. Once on,
     * zebra shows no line for it (zebra_ipv6_forwarding_cli_write), so frr-reload.py sends it
     * again on every reload: that changes nothing, and the comment says so */
    fab_out_str(out, "!\n! FRR does not show ipv6 forwarding once it is on: frr-reload.py sends it "
                     "again\n! on every reload, which changes nothing\nipv6 forwarding\n!\n");
    for (size_t i = 1; i < n; i++) {
        fab_out_str(out, "interface ");
        out_ifname(out, topo, sw, r[i].port);
        fab_out_str(out, "\n ipv6 address ");
        out_lladdr(out, topo, sw, r[i].port);
        fab_out_str(out, "/64\nexit\n");
    }
    fab_out_str(out, "!\nsegment-routing\n srv6\n  locators\n   locator " LOCATOR_NAME "\n");
    out_frr_locator_prefix(out, topo, s->usid);
    fab_out_str(out, "    behavior usid\n   exit\n   !\n  exit\n  !\n  static-sids\n   sid ");
    out_prefix(out, topo, s->usid);
    fab_out_str(out, " locator " LOCATOR_NAME " behavior uN\n  exit\n  !\n exit\n !\nexit\n!\n");
    for (size_t i = 1; i < n; i++) {
        fab_out_str(out, "ipv6 route ");
        out_prefix(out, topo, r[i].usid);
        if (r[i].peer_kind == FAB_PEER_SWITCH) {
            fab_out_char(out, ' ');
            out_lladdr(out, topo, r[i].peer, r[i].peer_port);
        }
        fab_out_char(out, ' ');
        out_ifname(out, topo, sw, r[i].port);
        if (topo->plan.route_table != 254) {
            fab_out_str(out, " table ");
            fab_out_uint(out, topo->plan.route_table);
        }
        fab_out_char(out, '\n');
    }
    fab_out_str(out, "!\n");
}

int fab_render_switch(const fab_topo *topo, const fab_tables *tables, uint32_t sw, fab_format fmt,
                      fab_sink_fn fn, void *user)
{
    size_t n;
    const fab_route *r = fab_tables_routes(tables, sw, &n);
    if (!r) {
        return FAB_ERR_NOTFOUND;
    }
    fab_out out;
    fab_out_init(&out, fn, user);
    switch (fmt) {
    case FAB_FMT_JSON:
        render_json(&out, topo, sw, r, n);
        break;
    case FAB_FMT_IPROUTE2:
        render_iproute2(&out, topo, sw, r, n);
        break;
    case FAB_FMT_SONIC:
        render_sonic(&out, topo, sw, r, n);
        break;
    case FAB_FMT_FRR:
        render_frr(&out, topo, sw, r, n);
        break;
    default:
        return FAB_ERR_INVAL;
    }
    return fab_out_flush(&out);
}
