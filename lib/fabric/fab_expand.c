/* SPDX-License-Identifier: MIT */
/* The explicit form of a loaded fabric: every switch, host and cable, loadable again. */
#include "fab_internal.h"

static void out_block(fab_out *out, const uint8_t block[16])
{
    fab_out_char(out, '"');
    fab_out_addr(out, block);
    fab_out_str(out, "/32\"");
}

static void out_plan(fab_out *out, const fab_plan *plan)
{
    fab_out_str(out, "\"addressing\": {\"block\": ");
    out_block(out, plan->block);
    fab_out_str(out, ", \"host_block\": ");
    out_block(out, plan->host_block);
    fab_out_fmt(out,
                ", \"plane_bits\": %u, \"kind_bits\": %u, \"index_bits\": %u, \"kinds\": "
                "{\"t0\": %u, \"t1\": %u, \"dl\": %u}, \"udp_port\": %u, \"route_table\": %u, "
                "\"route_proto\": %u},\n",
                plan->plane_bits, plan->kind_bits, plan->index_bits, plan->kind_t0, plan->kind_t1,
                plan->kind_dl, plan->udp_port, plan->route_table, plan->route_proto);
}

static void out_switch(fab_out *out, const fab_topo *topo, uint32_t i)
{
    const fab_sw *s = &topo->sw[i];
    fab_out_str(out, "  {\"name\": ");
    fab_out_json_str(out, fab_str(topo, s->name));
    fab_out_fmt(out, ", \"plane\": %u, \"tier\": \"t%u\", \"index\": %u, \"ports\": %u", s->plane,
                s->tier, s->index, s->nports);
    if (s->pinned) {
        fab_out_fmt(out, ", \"usid\": \"0x%04x\"", s->usid);
    }
    if (s->sid_dev != topo->sid_dev) {
        fab_out_str(out, ", \"sid_device\": ");
        fab_out_json_str(out, fab_str(topo, s->sid_dev));
    }
    if (s->ifspec >= 3) {
        const fab_ifspec *spec = &topo->ifspecs[s->ifspec];
        fab_out_str(out, ", \"interfaces\": {\"pattern\": ");
        fab_out_json_str(out, fab_str(topo, spec->pattern));
        fab_out_str(out, ", \"ports\": {");
        for (uint32_t e = 0; e < spec->nexc; e++) {
            const fab_ifexc *x = &topo->ifexc[spec->exc0 + e];
            fab_out_fmt(out, "%s\"%u\": ", e ? ", " : "", x->port);
            fab_out_json_str(out, fab_str(topo, x->name));
        }
        fab_out_str(out, "}}");
    }
    fab_out_char(out, '}');
}

static void out_cables(fab_out *out, const fab_topo *topo)
{
    bool first = true;
    for (uint32_t i = 0; i < topo->nsw; i++) {
        const fab_sw *s = &topo->sw[i];
        if (s->tier != FAB_TIER_T0) {
            continue;
        }
        for (unsigned x = 0; x < s->nports; x++) {
            const fab_port *pt = &topo->ports[s->port0 + x];
            if (pt->peer_kind == FAB_PEER_NONE) {
                continue;
            }
            fab_out_str(out, first ? "\n  {\"a\": \"" : ",\n  {\"a\": \"");
            first = false;
            if (pt->peer_kind == FAB_PEER_HOST) {
                fab_out_str(out, fab_str(topo, topo->host_name[pt->peer]));
                fab_out_char(out, ':');
                fab_out_uint(out, pt->peer_port);
                fab_out_str(out, "\", \"b\": \"");
                fab_out_str(out, fab_str(topo, s->name));
                fab_out_char(out, ':');
                fab_out_uint(out, x);
            } else {
                fab_out_str(out, fab_str(topo, s->name));
                fab_out_char(out, ':');
                fab_out_uint(out, x);
                fab_out_str(out, "\", \"b\": \"");
                fab_out_str(out, fab_str(topo, topo->sw[pt->peer].name));
                fab_out_char(out, ':');
                fab_out_uint(out, pt->peer_port);
            }
            fab_out_str(out, "\"}");
        }
    }
}

int fab_topo_expand(const fab_topo *topo, fab_sink_fn fn, void *user)
{
    fab_out out;
    fab_out_init(&out, fn, user);
    fab_out_str(&out, "{\n\"form\": \"explicit\",\n\"name\": ");
    fab_out_json_str(&out, fab_str(topo, topo->name));
    fab_out_fmt(&out, ",\n\"planes\": %u,\n", topo->planes);
    out_plan(&out, &topo->plan);
    fab_out_str(&out, "\"interfaces\": {\"t0\": ");
    fab_out_json_str(&out, fab_str(topo, topo->ifspecs[0].pattern));
    fab_out_str(&out, ", \"t1\": ");
    fab_out_json_str(&out, fab_str(topo, topo->ifspecs[1].pattern));
    fab_out_str(&out, ", \"host\": ");
    fab_out_json_str(&out, fab_str(topo, topo->ifspecs[2].pattern));
    fab_out_str(&out, ", \"sid_device\": ");
    fab_out_json_str(&out, fab_str(topo, topo->sid_dev));
    fab_out_str(&out, "},\n\"switches\": [\n");
    for (uint32_t i = 0; i < topo->nsw; i++) {
        out_switch(&out, topo, i);
        fab_out_str(&out, i + 1 < topo->nsw ? ",\n" : "\n");
    }
    fab_out_str(&out, "],\n\"hosts\": [\n");
    for (uint32_t h = 0; h < topo->nhosts; h++) {
        fab_out_str(&out, "  {\"name\": ");
        fab_out_json_str(&out, fab_str(topo, topo->host_name[h]));
        fab_out_str(&out, h + 1 < topo->nhosts ? "},\n" : "}\n");
    }
    fab_out_str(&out, "],\n\"cables\": [");
    out_cables(&out, topo);
    fab_out_str(&out, "\n],\n\"overrides\": {\"missing_cables\": [");
    for (uint32_t m = 0; m < topo->nmissing; m++) {
        const fab_missing *ms = &topo->missing[m];
        fab_out_str(&out, m ? ",\n  " : "\n  ");
        if (ms->kind == FAB_MISSING_HOST) {
            fab_out_str(&out, "{\"host\": ");
            fab_out_json_str(&out, fab_str(topo, topo->host_name[ms->a]));
            fab_out_fmt(&out, ", \"port\": %u}", ms->b);
        } else {
            fab_out_str(&out, "{\"t0\": ");
            fab_out_json_str(&out, fab_str(topo, topo->sw[ms->a].name));
            fab_out_str(&out, ", \"t1\": ");
            fab_out_json_str(&out, fab_str(topo, topo->sw[ms->b].name));
            fab_out_char(&out, '}');
        }
    }
    fab_out_str(&out, topo->nmissing ? "\n]}\n}\n" : "]}\n}\n");
    return fab_out_flush(&out);
}
