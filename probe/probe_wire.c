/* SPDX-License-Identifier: MIT */
#include "probe_wire.h"

#include <errno.h>
#include <mrcfab/mrc.h>
#include <string.h>

static void st16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void st32(uint8_t *p, uint32_t v)
{
    st16(p, (uint16_t)(v >> 16));
    st16(p + 2, (uint16_t)v);
}

static void st64(uint8_t *p, uint64_t v)
{
    st32(p, (uint32_t)(v >> 32));
    st32(p + 4, (uint32_t)v);
}

static uint16_t ld16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)ld16(p) << 16 | ld16(p + 2);
}

static uint64_t ld64(const uint8_t *p)
{
    return (uint64_t)ld32(p) << 32 | ld32(p + 4);
}

size_t probe_wire_encode(uint8_t *dest, const uint8_t src[16], const uint8_t dst[16], uint8_t tc,
                         uint16_t udp_port, const probe_hdr *h)
{
    uint8_t *u = dest + PROBE_IP6_LEN, *b = u + PROBE_UDP_LEN;
    const probe_spec *s = &h->spec;
    uint16_t ulen = PROBE_UDP_LEN + PROBE_BODY_LEN;
    memset(dest, 0, PROBE_PKT_LEN);
    st32(dest, 6u << 28 | (uint32_t)tc << 20);
    st16(dest + 4, ulen);
    dest[6] = 17;
    dest[7] = 64;
    memcpy(dest + 8, src, 16);
    memcpy(dest + 24, dst, 16);
    /* the index in the source port spreads probes of one sender over ECMP hops, if any */
    st16(u, (uint16_t)(0xc000 | (s->index & 0x3fff)));
    st16(u + 2, udp_port);
    st16(u + 4, ulen);
    memcpy(b, "MRCP", 4);
    b[4] = 1;
    b[5] = s->kind;
    st16(b + 6, s->t1);
    st32(b + 8, h->epoch);
    st64(b + 12, h->window);
    b[20] = s->plane;
    st16(b + 22, s->src_t0);
    st16(b + 24, s->src_port);
    st32(b + 28, s->index);
    st64(b + 32, h->sent_ns);
    mrc_udp6_csum_set(dest, PROBE_PKT_LEN);
    return PROBE_PKT_LEN;
}

int probe_wire_decode(const uint8_t *data, size_t len, uint16_t udp_port, probe_hdr *h)
{
    memset(h, 0, sizeof(*h));
    if (len < PROBE_IP6_LEN + PROBE_UDP_LEN) {
        return -EMSGSIZE;
    }
    const uint8_t *u = data + PROBE_IP6_LEN, *b = u + PROBE_UDP_LEN;
    if (data[0] >> 4 != 6 || data[6] != 17 || ld16(u + 2) != udp_port) {
        return -EPROTO;
    }
    size_t body = len - PROBE_IP6_LEN - PROBE_UDP_LEN;
    bool whole = body >= PROBE_BODY_LEN && ld16(data + 4) == PROBE_UDP_LEN + PROBE_BODY_LEN &&
                 ld16(u + 4) == PROBE_UDP_LEN + PROBE_BODY_LEN;
    if (whole && !mrc_udp6_csum_ok(data, PROBE_IP6_LEN + PROBE_UDP_LEN + PROBE_BODY_LEN)) {
        return -EPROTO;
    }
    if (body >= 4 && memcmp(b, "MRCP", 4) != 0) {
        return -EPROTO;
    }
    if (body >= 32) {
        if (b[4] != 1 || b[5] >= PROBE_KINDS) {
            return -EPROTO;
        }
        h->spec.kind = b[5];
        h->spec.t1 = ld16(b + 6);
        h->epoch = ld32(b + 8);
        h->window = ld64(b + 12);
        h->spec.plane = b[20];
        h->spec.src_t0 = ld16(b + 22);
        h->spec.src_port = ld16(b + 24);
        h->spec.index = ld32(b + 28);
    }
    if (whole) {
        h->sent_ns = ld64(b + 32);
        return 0;
    }
    return 1;
}

const char *const probe_kind_names[PROBE_KINDS] = {"t0_bounce", "t1_bounce", "cross", "intra"};

uint32_t probe_wire_host(const fab_topo *topo, unsigned plane, unsigned t0, unsigned port)
{
    uint32_t sw = fab_switch_at(topo, plane, FAB_TIER_T0, t0);
    fab_peer peer;
    if (sw == FAB_NONE || fab_switch_peer(topo, sw, port, &peer) != 0 ||
        peer.kind != FAB_PEER_HOST || peer.port != plane) {
        return FAB_NONE;
    }
    return peer.id;
}

int probe_wire_path(const fab_topo *topo, const probe_spec *s, uint8_t dest[16])
{
    const fab_plan *plan = fab_topo_plan(topo);
    uint16_t u[4];
    size_t n = 0;
    fab_switch a, b, t1;
    uint32_t sa = fab_switch_at(topo, s->plane, FAB_TIER_T0, s->src_t0);
    uint32_t sb = fab_switch_at(topo, s->plane, FAB_TIER_T0, s->dst_t0);
    if (sa == FAB_NONE || sb == FAB_NONE || fab_switch_get(topo, sa, &a) != 0 ||
        fab_switch_get(topo, sb, &b) != 0) {
        return -ENOENT;
    }
    u[n++] = a.usid;
    if (s->kind == PROBE_T1_BOUNCE || s->kind == PROBE_CROSS) {
        uint32_t sj = fab_switch_at(topo, s->plane, FAB_TIER_T1, s->t1);
        if (sj == FAB_NONE || fab_switch_get(topo, sj, &t1) != 0) {
            return -ENOENT;
        }
        u[n++] = t1.usid;
        u[n++] = b.usid;
    }
    u[n++] = fab_plan_usid(plan, s->plane, plan->kind_dl, s->dst_port);
    fab_plan_container(plan, u, n, dest);
    return 0;
}
