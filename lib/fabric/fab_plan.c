/* SPDX-License-Identifier: MIT */
/* The addressing plan: uSID numbering, containers and the 32-bit EV codec. */
#include <string.h>

#include "fab_internal.h"

const char *fab_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
    case FAB_ERR_INVAL:
        return "invalid input";
    case FAB_ERR_NOMEM:
        return "out of memory";
    case FAB_ERR_IO:
        return "input/output error";
    case FAB_ERR_NOTFOUND:
        return "not found";
    case FAB_ERR_NOSPACE:
        return "buffer too small";
    default:
        return "unknown error";
    }
}

void fab_plan_default(fab_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->block[0] = 0xfc;
    plan->block[1] = 0xbb;
    plan->block[2] = 0xbb;
    plan->block[3] = 0x00;
    plan->host_block[0] = 0xfd;
    plan->host_block[1] = 0xbb;
    plan->host_block[2] = 0xbb;
    plan->host_block[3] = 0x00;
    plan->plane_bits = 3;
    plan->kind_bits = 2;
    plan->index_bits = 11;
    plan->kind_t0 = 1;
    plan->kind_t1 = 2;
    plan->kind_dl = 3;
    plan->udp_port = 4791;
    plan->route_table = 254;
    plan->route_proto = 201;
}

uint16_t fab_plan_usid(const fab_plan *plan, unsigned plane, unsigned kind, unsigned index)
{
    unsigned ib = plan->index_bits, kb = plan->kind_bits, pb = plan->plane_bits;
    unsigned v = ((plane & ((1u << pb) - 1)) << (kb + ib)) | ((kind & ((1u << kb) - 1)) << ib) |
                 (index & ((1u << ib) - 1));
    return (uint16_t)v;
}

void fab_plan_container(const fab_plan *plan, const uint16_t *usids, size_t n, uint8_t dest[16])
{
    memset(dest, 0, 16);
    memcpy(dest, plan->block, 4);
    for (size_t i = 0; i < n && i < 6; i++) {
        dest[4 + 2 * i] = (uint8_t)(usids[i] >> 8);
        dest[5 + 2 * i] = (uint8_t)usids[i];
    }
}

uint32_t fab_ev_make(const fab_plan *plan, unsigned plane, unsigned t1, uint32_t salt)
{
    unsigned pshift = 32u - plan->plane_bits;
    unsigned tshift = pshift - plan->index_bits;
    uint32_t pmask = (1u << plan->plane_bits) - 1, tmask = (1u << plan->index_bits) - 1;
    uint32_t smask = (1u << tshift) - 1;
    return ((uint32_t)(plane & pmask) << pshift) | ((uint32_t)(t1 & tmask) << tshift) |
           (salt & smask);
}

unsigned fab_ev_plane(const fab_plan *plan, uint32_t ev)
{
    return ev >> (32u - plan->plane_bits);
}

unsigned fab_ev_t1(const fab_plan *plan, uint32_t ev)
{
    unsigned tshift = 32u - plan->plane_bits - plan->index_bits;
    return (ev >> tshift) & ((1u << plan->index_bits) - 1);
}

uint32_t fab_ev_salt(const fab_plan *plan, uint32_t ev)
{
    unsigned tshift = 32u - plan->plane_bits - plan->index_bits;
    return ev & ((1u << tshift) - 1);
}

void fab_ev_to_wire(uint32_t ev, uint16_t *psport, uint32_t *pflowlabel)
{
    *psport = (uint16_t)ev;
    *pflowlabel = ev >> 16;
}

uint32_t fab_ev_from_wire(uint16_t sport, uint32_t flowlabel)
{
    return ((flowlabel & 0xffffu) << 16) | sport;
}
