/* SPDX-License-Identifier: MIT */
/* Unit tests of the public decoder mrc_packet_decode: the wire vectors bare and in SRv6 mode,
 * the trimmed-DSCP rule, the ICRC setting, the ports, what is not MRC, and the same verdict
 * and fields as the engine's receive path on mutated packets. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

/* A field as a vector names it, where it is in the public struct and in the engine's, and the
 * header it belongs to (0: every packet has it). */
typedef struct pub_field {
    const char *name;
    size_t pub_off, pub_size;
    size_t pkt_off, pkt_size;
    uint32_t has;
    bool sign, bytes;
} pub_field;

/* clang-format off */
#define PUB(m) offsetof(mrc_packet, m), sizeof(((mrc_packet *)0)->m)
#define PRIV(m) offsetof(mrc_pkt, m), sizeof(((mrc_pkt *)0)->m)
#define F(name, pub, priv, has) {name, PUB(pub), PRIV(priv), has, false, false}
#define FS(name, pub, priv, has) {name, PUB(pub), PRIV(priv), has, true, false}
#define FB(name, pub, priv) {name, PUB(pub), PRIV(priv), 0, false, true}
/* clang-format on */

/* Every field a vector lists but the payload bytes and the ICRC. */
static const pub_field fields[] = {
    F("ip.tc", inner.tc, ip.tc, 0),
    F("ip.flowlabel", inner.flowlabel, ip.flowlabel, 0),
    F("ip.plen", inner.plen, ip.plen, 0),
    F("ip.nxt", inner.nxt, ip.nxt, 0),
    F("ip.hlim", inner.hlim, ip.hlim, 0),
    FB("ip.src", inner.src, ip.src),
    FB("ip.dst", inner.dst, ip.dst),
    F("udp.sport", udp.sport, udp.sport, 0),
    F("udp.dport", udp.dport, udp.dport, 0),
    F("udp.len", udp.len, udp.len, 0),
    F("udp.csum", udp.csum, udp.csum, 0),
    F("bth.opcode", bth.opcode, bth.opcode, 0),
    F("bth.se", bth.se, bth.se, 0),
    F("bth.mig", bth.mig, bth.mig, 0),
    F("bth.padcnt", bth.padcnt, bth.padcnt, 0),
    F("bth.tver", bth.tver, bth.tver, 0),
    F("bth.pkey", bth.pkey, bth.pkey, 0),
    F("bth.resv8a", bth.resv8a, bth.resv8a, 0),
    F("bth.dqpn", bth.dqpn, bth.dqpn, 0),
    F("bth.ackreq", bth.ackreq, bth.ackreq, 0),
    F("bth.rtx", bth.rtx, bth.rtx, 0),
    F("bth.ts", bth.ts, bth.ts, 0),
    F("bth.psn", bth.psn, bth.psn, 0),
    F("meth.rqmsn", meth.rqmsn, meth.rqmsn, MRC_HAS_METH),
    F("meth.msn", meth.msn, meth.msn, MRC_HAS_METH),
    F("tseth.ts", tseth.ts, tseth.ts, MRC_HAS_TSETH),
    F("tseth.tsr", tseth.tsr, tseth.tsr, MRC_HAS_TSETH),
    F("tseth.fmt", tseth.fmt, tseth.fmt, MRC_HAS_TSETH),
    F("reth.va", reth.va, reth.va, MRC_HAS_RETH),
    F("reth.rkey", reth.rkey, reth.rkey, MRC_HAS_RETH),
    F("reth.dmalen", reth.dmalen, reth.dmalen, MRC_HAS_RETH),
    F("imm", imm, imm, MRC_HAS_IMM),
    F("aeth.syndrome", aeth.syndrome, aeth.syndrome, MRC_HAS_AETH),
    F("aeth.msn", aeth.msn, aeth.msn, MRC_HAS_AETH),
    F("seth.m", seth.m, seth.m, MRC_HAS_SETH),
    F("seth.pr", seth.pr, seth.pr, MRC_HAS_SETH),
    FS("seth.ack_psn_offset", seth.ack_psn_offset, seth.ack_psn_offset, MRC_HAS_SETH),
    F("seth.entropy", seth.entropy, seth.entropy, MRC_HAS_SETH),
    F("seth.spdcid", seth.spdcid, seth.spdcid, MRC_HAS_SETH),
    F("seth.dpdcid", seth.dpdcid, seth.dpdcid, MRC_HAS_SETH),
    F("seth.cack_psn", seth.cack_psn, seth.cack_psn, MRC_HAS_SETH),
    F("seth.cc_type", seth.cc_type, seth.cc_type, MRC_HAS_SETH),
    F("seth.cc_flags", seth.cc_flags, seth.cc_flags, MRC_HAS_SETH),
    F("seth.mpr", seth.mpr, seth.mpr, MRC_HAS_SETH),
    FS("seth.sack_offset", seth.sack_offset, seth.sack_offset, MRC_HAS_SETH),
    F("seth.bitmap", seth.bitmap, seth.bitmap, MRC_HAS_SETH),
    F("cc.ts", cc.ts, cc.ts, MRC_HAS_SETH),
    F("cc.ooo_count", cc.ooo_count, cc.ooo_count, MRC_HAS_SETH),
    F("cc.rc", cc.rc, cc.rc, MRC_HAS_SETH),
    F("cc.pen", cc.pen, cc.pen, MRC_HAS_SETH),
    F("cc.rcvd_bytes", cc.rcvd_bytes, cc.rcvd_bytes, MRC_HAS_SETH),
    F("neth.reason", neth.reason, neth.reason, MRC_HAS_NETH),
    F("neth.vendor", neth.vendor, neth.vendor, MRC_HAS_NETH),
    F("neth.entropy", neth.entropy, neth.entropy, MRC_HAS_NETH),
    F("neth.spdcid", neth.spdcid, neth.spdcid, MRC_HAS_NETH),
    F("neth.dpdcid", neth.dpdcid, neth.dpdcid, MRC_HAS_NETH),
    F("neth.nack_psn", neth.nack_psn, neth.nack_psn, MRC_HAS_NETH),
    F("neth.cc_type", neth.cc_type, neth.cc_type, MRC_HAS_NETH),
    F("neth.cc_flags", neth.cc_flags, neth.cc_flags, MRC_HAS_NETH),
    F("neth.ts", neth.ts, neth.ts, MRC_HAS_NETH),
    F("peth.vendor", peth.vendor, peth.vendor, MRC_HAS_PETH),
    F("peth.probe_id", peth.probe_id, peth.probe_id, MRC_HAS_PETH),
    F("peth.spdcid", peth.spdcid, peth.spdcid, MRC_HAS_PETH),
    F("peth.dpdcid", peth.dpdcid, peth.dpdcid, MRC_HAS_PETH),
    F("peth.ts.ts", peth.ts.ts, peth.ts.ts, MRC_HAS_PETH),
    F("peth.ts.tsr", peth.ts.tsr, peth.ts.tsr, MRC_HAS_PETH),
    F("peth.ts.fmt", peth.ts.fmt, peth.ts.fmt, MRC_HAS_PETH),
    F("erth.op", erth.op, erth.op, MRC_HAS_ERTH),
    F("erth.vendor", erth.vendor, erth.vendor, MRC_HAS_ERTH),
    F("erth.port_status", erth.port_status, erth.port_status, MRC_HAS_ERTH),
    F("erth.ts.ts", erth.ts.ts, erth.ts.ts, MRC_HAS_ERTH),
    F("erth.ts.tsr", erth.ts.tsr, erth.ts.tsr, MRC_HAS_ERTH),
    F("erth.ts.fmt", erth.ts.fmt, erth.ts.fmt, MRC_HAS_ERTH),
    F("eeth.op", eeth.op, eeth.op, MRC_HAS_EETH),
    F("eeth.entropy", eeth.entropy, eeth.entropy, MRC_HAS_EETH),
    F("eeth.svc_time_ns", eeth.svc_time_ns, eeth.svc_time_ns, MRC_HAS_EETH),
    F("eeth.ts", eeth.ts, eeth.ts, MRC_HAS_EETH),
    F("payload_len", payload_len, payload_len, 0),
    F("trimmed", trimmed, trimmed, 0),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* The outer header's fields, as outer.hex names them. */
#define OUT(m) offsetof(mrc_packet, outer.m), sizeof(((mrc_packet *)0)->outer.m)
static const pub_field outer_fields[] = {
    {"outer.tc", OUT(tc), 0, 0, 0, false, false},
    {"outer.flowlabel", OUT(flowlabel), 0, 0, 0, false, false},
    {"outer.plen", OUT(plen), 0, 0, 0, false, false},
    {"outer.nxt", OUT(nxt), 0, 0, 0, false, false},
    {"outer.hlim", OUT(hlim), 0, 0, 0, false, false},
    {"outer.src", OUT(src), 0, 0, 0, false, true},
    {"outer.dst", OUT(dst), 0, 0, 0, false, true},
};
#define NOUTER (sizeof(outer_fields) / sizeof(outer_fields[0]))

static const pub_field *find(const pub_field *tab, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tab[i].name, name) == 0) {
            return &tab[i];
        }
    }
    return NULL;
}

/* The value at |p| of |size| bytes (1, 2, 4 or 8), sign-extended when |sign|. */
static uint64_t load(const void *p, size_t size, bool sign)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (size) {
    case 1:
        memcpy(&v8, p, 1);
        return v8;
    case 2:
        memcpy(&v16, p, 2);
        return sign ? (uint64_t)(int64_t)(int16_t)v16 : v16;
    case 4:
        memcpy(&v32, p, 4);
        return v32;
    default:
        memcpy(&v64, p, 8);
        return v64;
    }
}

static size_t hex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    for (; s[0] && s[1] && n < max; s += 2) {
        unsigned b;
        ck_assert_int_eq(sscanf(s, "%2x", &b), 1);
        out[n++] = (uint8_t)b;
    }
    return n;
}

static uint64_t num(const char *s)
{
    return s[0] == '-' ? (uint64_t)strtoll(s, NULL, 0) : strtoull(s, NULL, 0);
}

static uint64_t vec_num(const mrc_test_vec *v, const char *name, uint64_t dflt)
{
    const char *s = mrc_test_vec_get(v, name);
    return s ? num(s) : dflt;
}

/* Every field |v| lists against |pkt|; |what| names the case in a failure. */
static void check_vec_fields(const mrc_test_vec *v, const mrc_packet *pkt, const char *what)
{
    for (size_t i = 0; i < v->nfields; i++) {
        const mrc_test_field *tf = &v->fields[i];
        if (strncmp(tf->name, "decode.", 7) == 0 || strncmp(tf->name, "encode.", 7) == 0 ||
            strcmp(tf->name, "icrc") == 0 || strcmp(tf->name, "udp.csum_sealed") == 0) {
            continue;
        }
        if (strcmp(tf->name, "has") == 0) {
            ck_assert_msg((pkt->has & ~MRC_PACKET_HAS_OUTER) == num(tf->value),
                          "%s %s: has %#x, vector %s", v->name, what, pkt->has, tf->value);
            continue;
        }
        if (strcmp(tf->name, "payload") == 0) {
            uint8_t want[MRC_TEST_VEC_MAX];
            size_t n = strcmp(tf->value, "-") == 0 ? 0 : hex(tf->value, want, sizeof(want));
            ck_assert_msg(pkt->payload != NULL, "%s %s: payload NULL", v->name, what);
            ck_assert_msg(pkt->payload_len == n && memcmp(pkt->payload, want, n) == 0,
                          "%s %s: payload", v->name, what);
            continue;
        }
        const pub_field *f = find(fields, NFIELDS, tf->name);
        ck_assert_msg(f != NULL, "%s: no public field for %s", v->name, tf->name);
        const uint8_t *at = (const uint8_t *)pkt + f->pub_off;
        if (f->bytes) {
            uint8_t want[16];
            ck_assert_uint_eq(hex(tf->value, want, sizeof(want)), f->pub_size);
            ck_assert_msg(memcmp(at, want, f->pub_size) == 0, "%s %s: %s", v->name, what, tf->name);
            continue;
        }
        uint64_t got = load(at, f->pub_size, f->sign), want = num(tf->value);
        ck_assert_msg(got == want, "%s %s: %s = %llx, vector says %llx", v->name, what, tf->name,
                      (unsigned long long)got, (unsigned long long)want);
    }
}

/* The EV the engine reads from inner packet |p| (mrc_wire.c's rule, restated). */
static uint32_t ev_of(const uint8_t *p)
{
    return (uint32_t)(p[2] << 8 | p[3]) << 16 | (uint32_t)(p[40] << 8 | p[41]);
}

static unsigned dscp_of(const uint8_t *p)
{
    return (unsigned)(p[0] << 8 | p[1]) >> 6 & 0x3f;
}

/* |outer| (outer.hex's header) with traffic class |tc| and payload length |plen|, then |inner|,
 * into |buf|; returns the length. */
static size_t srv6(uint8_t *buf, const mrc_test_vec *outer, uint8_t tc, const uint8_t *inner,
                   size_t len)
{
    memcpy(buf, outer->data, MRC_IP6_LEN);
    buf[0] = (uint8_t)(0x60 | tc >> 4);
    buf[1] = (uint8_t)((tc & 0x0f) << 4 | (buf[1] & 0x0f));
    buf[4] = (uint8_t)(len >> 8);
    buf[5] = (uint8_t)len;
    memcpy(buf + MRC_IP6_LEN, inner, len);
    return MRC_IP6_LEN + len;
}

static bool is_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i]) {
            return false;
        }
    }
    return true;
}

static void reseal(uint8_t *p, size_t len)
{
    uint32_t c = mrc_icrc(p, len - MRC_ICRC_LEN);
    for (int i = 0; i < 4; i++) {
        p[len - 4 + i] = (uint8_t)(c >> (8 * i));
    }
}

static void settings(mrc_settings *s)
{
    mrc_settings_default(s);
}

START_TEST(test_mrc_packet_vectors)
{
    static char names[64][64];
    static uint8_t buf[MRC_TEST_VEC_MAX + MRC_IP6_LEN];
    size_t n = mrc_test_vec_names(names, 64);
    mrc_test_vec *outer = mrc_test_vec_load("outer");
    mrc_settings s;
    settings(&s);
    unsigned decoded = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], "outer") == 0) {
            continue;
        }
        mrc_test_vec *v = mrc_test_vec_load(names[i]);
        mrc_packet pkt;
        s.udp_port = (uint16_t)vec_num(v, "decode.udp_port", MRC_DEFAULT_UDP_PORT);
        unsigned dscp = dscp_of(v->data);
        bool marked = dscp == s.dscp_trimmed || dscp == s.dscp_trimmed_lasthop;
        /* a vector decoded with MRC_DECODE_TRIMMED carries a trimmed DSCP of its own */
        ck_assert_msg(marked == ((vec_num(v, "decode.flags", 0) & MRC_DECODE_TRIMMED) != 0),
                      "%s: DSCP %u", v->name, dscp);

        /* UDP mode: the packet alone */
        memset(&pkt, 0xa5, sizeof(pkt));
        int rv = mrc_packet_decode(&s, v->data, v->len, &pkt);
        ck_assert_msg(rv == 0, "%s: %s", v->name, mrc_packet_strerror(rv));
        check_vec_fields(v, &pkt, "bare");
        ck_assert(!(pkt.has & MRC_PACKET_HAS_OUTER));
        ck_assert(is_zero(&pkt.outer, sizeof(pkt.outer)));
        ck_assert_uint_eq(pkt.ev, ev_of(v->data));
        ck_assert_int_eq(pkt.marked_trimmed, marked);
        ck_assert_ptr_eq(pkt.payload,
                         v->data + (v->len - pkt.payload_len -
                                    (pkt.trimmed ? 0 : MRC_ICRC_LEN + pkt.bth.padcnt)));

        /* SRv6 mode: behind outer.hex's header, with the inner traffic class (as the agent) */
        uint8_t tc = (uint8_t)((v->data[0] & 0x0f) << 4 | v->data[1] >> 4);
        size_t len = srv6(buf, outer, tc, v->data, v->len);
        memset(&pkt, 0xa5, sizeof(pkt));
        rv = mrc_packet_decode(&s, buf, len, &pkt);
        ck_assert_msg(rv == 0, "%s in SRv6: %s", v->name, mrc_packet_strerror(rv));
        check_vec_fields(v, &pkt, "in SRv6");
        ck_assert(pkt.has & MRC_PACKET_HAS_OUTER);
        for (size_t k = 0; k < outer->nfields; k++) {
            const mrc_test_field *tf = &outer->fields[k];
            const pub_field *f = find(outer_fields, NOUTER, tf->name);
            ck_assert_msg(f != NULL, "outer: no public field for %s", tf->name);
            const uint8_t *at = (const uint8_t *)&pkt + f->pub_off;
            if (f->bytes) {
                uint8_t want[16];
                hex(tf->value, want, 16);
                ck_assert_msg(memcmp(at, want, 16) == 0, "%s in SRv6: %s", v->name, tf->name);
            } else if (strcmp(tf->name, "outer.plen") == 0) {
                ck_assert_uint_eq(pkt.outer.plen, v->len);
            } else if (strcmp(tf->name, "outer.tc") == 0) {
                ck_assert_uint_eq(pkt.outer.tc, pkt.inner.tc);
            } else {
                ck_assert_msg(load(at, f->pub_size, false) == num(tf->value), "%s in SRv6: %s",
                              v->name, tf->name);
            }
        }
        ck_assert_uint_eq(pkt.ev, ev_of(v->data));
        ck_assert_int_eq(pkt.marked_trimmed, marked);
        decoded++;
        mrc_test_vec_free(v);
    }
    ck_assert_uint_ge(decoded, 23);
    mrc_test_vec_free(outer);
}
END_TEST

/* Only a trimmed DSCP in the first header (the outer one in SRv6 mode) lets a packet end
 * before its lengths say; the engine takes such a data packet as trimmed even when whole. */
START_TEST(test_mrc_packet_trimmed_dscp)
{
    static uint8_t buf[MRC_TEST_VEC_MAX + MRC_IP6_LEN], in[MRC_TEST_VEC_MAX];
    mrc_test_vec *t = mrc_test_vec_load("write_trimmed");
    mrc_test_vec *w = mrc_test_vec_load("write_first");
    mrc_test_vec *outer = mrc_test_vec_load("outer");
    mrc_settings s;
    mrc_packet pkt;
    ck_assert_uint_eq(dscp_of(t->data), 12);

    settings(&s);
    ck_assert_int_eq(mrc_packet_decode(&s, t->data, t->len, &pkt), 0);
    ck_assert(pkt.trimmed && pkt.marked_trimmed);
    ck_assert_uint_eq(pkt.payload_len, 6);
    /* neither setting names DSCP 12: a short packet, as the engine would call it */
    s.dscp_trimmed = 20;
    s.dscp_trimmed_lasthop = 21;
    memset(&pkt, 0xa5, sizeof(pkt));
    ck_assert_int_eq(mrc_packet_decode(&s, t->data, t->len, &pkt), MRC_PACKET_ESHORT);
    ck_assert(is_zero(&pkt, sizeof(pkt)));
    /* the last hop's value counts the same */
    s.dscp_trimmed_lasthop = 12;
    ck_assert_int_eq(mrc_packet_decode(&s, t->data, t->len, &pkt), 0);
    ck_assert(pkt.trimmed);

    /* SRv6 mode: the outer DSCP decides, whatever the inner one says */
    settings(&s);
    size_t len = srv6(buf, outer, 4 << 2, t->data, t->len);
    ck_assert_int_eq(mrc_packet_decode(&s, buf, len, &pkt), MRC_PACKET_ESHORT);
    memcpy(in, t->data, t->len);
    in[0] = (uint8_t)(0x60 | (4 << 2) >> 4);
    in[1] = (uint8_t)(((4 << 2) & 0x0f) << 4 | (in[1] & 0x0f));
    len = srv6(buf, outer, 16 << 2 | 2, in, t->len);
    ck_assert_int_eq(mrc_packet_decode(&s, buf, len, &pkt), 0);
    ck_assert(pkt.trimmed && pkt.marked_trimmed);
    ck_assert_uint_eq(pkt.inner.tc >> 2, 4);
    ck_assert_uint_eq(pkt.outer.tc, 16 << 2 | 2);

    /* a whole packet so marked decodes whole, and says it is marked */
    len = srv6(buf, outer, 12 << 2, w->data, w->len);
    ck_assert_int_eq(mrc_packet_decode(&s, buf, len, &pkt), 0);
    ck_assert(pkt.marked_trimmed && !pkt.trimmed);
    ck_assert_int_eq(mrc_packet_decode(&s, w->data, w->len, &pkt), 0);
    ck_assert(!pkt.marked_trimmed);
    mrc_test_vec_free(t);
    mrc_test_vec_free(w);
    mrc_test_vec_free(outer);
}
END_TEST

START_TEST(test_mrc_packet_icrc)
{
    static uint8_t p[MRC_TEST_VEC_MAX];
    mrc_test_vec *w = mrc_test_vec_load("write_first");
    mrc_settings s;
    mrc_packet pkt;
    settings(&s);
    memcpy(p, w->data, w->len);
    p[w->len - 5] ^= 0x40; /* a payload byte */
    ck_assert_int_eq(mrc_packet_decode(&s, p, w->len, &pkt), MRC_PACKET_EICRC);
    s.icrc = false;
    ck_assert_int_eq(mrc_packet_decode(&s, p, w->len, &pkt), 0);
    ck_assert_uint_eq(pkt.payload[pkt.payload_len - 1], w->data[w->len - 5] ^ 0x40);
    mrc_test_vec_free(w);
}
END_TEST

START_TEST(test_mrc_packet_ports)
{
    static uint8_t p[MRC_TEST_VEC_MAX];
    mrc_test_vec *w = mrc_test_vec_load("write_first");
    mrc_test_vec *nak = mrc_test_vec_load("nak");
    mrc_settings s;
    mrc_packet pkt;
    settings(&s);
    ck_assert_uint_eq(s.udp_port, MRC_DEFAULT_UDP_PORT);
    ck_assert_int_eq(mrc_packet_decode(&s, nak->data, nak->len, &pkt), 0);
    ck_assert_uint_eq(pkt.udp.dport, MRC_ALT_UDP_PORT);

    memcpy(p, w->data, w->len);
    p[MRC_IP6_LEN + 2] = 4792 >> 8;
    p[MRC_IP6_LEN + 3] = 4792 & 0xff;
    reseal(p, w->len);
    ck_assert_int_eq(mrc_packet_decode(&s, p, w->len, &pkt), MRC_PACKET_EPORT);
    s.udp_port = 4792;
    ck_assert_int_eq(mrc_packet_decode(&s, p, w->len, &pkt), 0);
    ck_assert_uint_eq(pkt.udp.dport, 4792);
    /* the alternate port stays accepted whatever udp_port is */
    ck_assert_int_eq(mrc_packet_decode(&s, nak->data, nak->len, &pkt), 0);
    ck_assert_int_eq(mrc_packet_decode(&s, w->data, w->len, &pkt), MRC_PACKET_EPORT);
    mrc_test_vec_free(w);
    mrc_test_vec_free(nak);
}
END_TEST

/* What is not IPv6/UDP is no MRC traffic; a UDP packet to the port too short for the engine
 * is a fault of MRC's. */
START_TEST(test_mrc_packet_not_udp)
{
    static uint8_t p[MRC_TEST_VEC_MAX + MRC_IP6_LEN];
    mrc_test_vec *w = mrc_test_vec_load("write_first");
    mrc_test_vec *outer = mrc_test_vec_load("outer");
    mrc_settings s;
    mrc_packet pkt;
    settings(&s);

    ck_assert_int_eq(mrc_packet_decode(&s, w->data, MRC_IP6_LEN - 1, &pkt), MRC_PACKET_ENOTUDP);
    ck_assert_int_eq(mrc_packet_decode(&s, w->data, 0, &pkt), MRC_PACKET_ENOTUDP);
    memcpy(p, w->data, w->len);
    p[0] = 0x45; /* IPv4 */
    ck_assert_int_eq(mrc_packet_decode(&s, p, w->len, &pkt), MRC_PACKET_ENOTUDP);
    memcpy(p, w->data, w->len);
    p[6] = 6; /* TCP */
    ck_assert_int_eq(mrc_packet_decode(&s, p, w->len, &pkt), MRC_PACKET_ENOTUDP);
    size_t len = srv6(p, outer, 0, w->data, w->len);
    p[6] = 43; /* a routing header: not the uSID form */
    ck_assert_int_eq(mrc_packet_decode(&s, p, len, &pkt), MRC_PACKET_ENOTUDP);
    len = srv6(p, outer, 0, w->data, w->len);
    p[MRC_IP6_LEN + 6] = 6; /* TCP inside */
    ck_assert_int_eq(mrc_packet_decode(&s, p, len, &pkt), MRC_PACKET_ENOTUDP);
    len = srv6(p, outer, 0, w->data, MRC_IP6_LEN + MRC_UDP_LEN - 1);
    ck_assert_int_eq(mrc_packet_decode(&s, p, len, &pkt), MRC_PACKET_ENOTUDP);
    /* its UDP header shows: the engine's faults from here on */
    len = srv6(p, outer, 0, w->data, MRC_IP6_LEN + MRC_UDP_LEN);
    ck_assert_int_eq(mrc_packet_decode(&s, p, len, &pkt), MRC_PACKET_ESHORT);
    ck_assert_int_eq(mrc_packet_decode(&s, w->data, MRC_BASE_LEN - 1, &pkt), MRC_PACKET_ESHORT);
    /* an outer header claiming less than follows */
    len = srv6(p, outer, 0, w->data, w->len);
    p[5] = (uint8_t)(p[5] - 4);
    ck_assert_int_eq(mrc_packet_decode(&s, p, len, &pkt), MRC_PACKET_EIP);
    ck_assert(is_zero(&pkt, sizeof(pkt)));
    mrc_test_vec_free(w);
    mrc_test_vec_free(outer);
}
END_TEST

START_TEST(test_mrc_packet_strerror)
{
    static const int codes[] = {MRC_PACKET_ESHORT,  MRC_PACKET_EIP,    MRC_PACKET_EPORT,
                                MRC_PACKET_EOPCODE, MRC_PACKET_EPAD,   MRC_PACKET_EICRC,
                                MRC_PACKET_EFIELD,  MRC_PACKET_ENOTUDP};
    const size_t n = sizeof(codes) / sizeof(codes[0]);
    ck_assert_str_eq(mrc_packet_strerror(0), "success");
    for (size_t i = 0; i < n; i++) {
        const char *m = mrc_packet_strerror(codes[i]);
        ck_assert(m && *m);
        ck_assert_str_ne(m, mrc_packet_strerror(-100));
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(m, mrc_packet_strerror(codes[j]));
        }
        /* the decoder's own sentences, which mrc-decode prints */
        if (codes[i] != MRC_PACKET_ENOTUDP) {
            ck_assert_str_eq(m, mrc_wire_strerror(codes[i]));
        }
    }
    ck_assert_str_eq(mrc_packet_strerror(1), mrc_packet_strerror(-100));
}
END_TEST

/*
 * Mutated vectors, bare and in SRv6 mode: whenever the packet is UDP to the MRC port, the
 * public call and the engine fed the same packet (the inner one, with the first header's class
 * as the host passes it) agree: a fault is counted under the same code, a packet that decodes
 * is no garbage, and every field is the engine's decoder's.
 */
START_TEST(test_mrc_packet_as_engine)
{
    static char names[64][64];
    static mrc_test_vec *vecs[64];
    static uint8_t buf[MRC_TEST_VEC_MAX + MRC_IP6_LEN];
    size_t nvec = 0, n = mrc_test_vec_names(names, 64);
    mrc_test_vec *outer = NULL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], "outer") == 0) {
            outer = mrc_test_vec_load(names[i]);
        } else {
            vecs[nvec++] = mrc_test_vec_load(names[i]);
        }
    }
    ck_assert_ptr_nonnull(outer);
    mrc_test_opts o;
    mrc_test_opts_default(&o);
    mrc_test_node node;
    mrc_test_node_new(&node, &o, 1);
    uint64_t rng = 7, now = 1000;
    unsigned by_rv[9] = {0};
    for (int it = 0; it < 20000; it++) {
        const mrc_test_vec *v = vecs[mrc_test_rand_below(&rng, (uint32_t)nvec)];
        bool srv6_mode = mrc_test_rand_below(&rng, 2);
        static const uint8_t classes[] = {4 << 2, 12 << 2, 16 << 2 | 3, 46 << 2};
        uint8_t tc = classes[mrc_test_rand_below(&rng, 4)];
        size_t len = srv6(buf, outer, tc, v->data, v->len);
        uint8_t *inner = buf + MRC_IP6_LEN;
        size_t innerlen = v->len;
        switch (mrc_test_rand_below(&rng, 4)) {
        case 0: /* bits flipped in the headers */
            for (uint32_t k = mrc_test_rand_below(&rng, 3) + 1; k > 0; k--) {
                size_t at = mrc_test_rand_below(&rng, (uint32_t)(innerlen < 96 ? innerlen : 96));
                inner[at] ^= (uint8_t)(1u << mrc_test_rand_below(&rng, 8));
            }
            break;
        case 1: /* cut short, as a switch trims or a link drops the tail */
            innerlen = mrc_test_rand_below(&rng, (uint32_t)innerlen + 1);
            break;
        case 2: /* the inner class re-marked (the ICRC does not cover it) */
            inner[0] = (uint8_t)(0x60 | tc >> 4);
            inner[1] = (uint8_t)((tc & 0x0f) << 4 | (inner[1] & 0x0f));
            break;
        default:
            break;
        }
        len = MRC_IP6_LEN + innerlen;
        buf[4] = (uint8_t)(innerlen >> 8);
        buf[5] = (uint8_t)innerlen;
        const uint8_t *data = srv6_mode ? buf : inner;
        size_t datalen = srv6_mode ? len : innerlen;
        mrc_packet pkt;
        int rv = mrc_packet_decode(&o.set, data, datalen, &pkt);
        MRC_REQUIRE(rv <= 0 && rv >= MRC_PACKET_ENOTUDP, "%s: returned %d", v->name, rv);
        by_rv[-rv]++;
        if (rv == MRC_PACKET_ENOTUDP || rv == MRC_PACKET_EPORT) {
            continue; /* no MRC traffic: the host gives the engine none of it */
        }
        unsigned first_tc = (unsigned)(data[0] << 8 | data[1]) >> 4 & 0xff;
        mrc_rx_info info = {.port = 0, .ecn = first_tc & 3, .dscp = (uint8_t)(first_tc >> 2)};
        mrc_ctx_stats before, after;
        mrc_ctx_get_stats(node.ctx, &before);
        mrc_read_pkt(node.ctx, inner, innerlen, &info, now);
        mrc_ctx_get_stats(node.ctx, &after);
        now += 1000;
        uint64_t garbage = after.garbage - before.garbage;
        if (rv != 0) {
            MRC_REQUIRE(garbage == 1 && after.garbage_by_err[-rv] == before.garbage_by_err[-rv] + 1,
                        "%s (iteration %d): %s, not counted so by the engine", v->name, it,
                        mrc_packet_strerror(rv));
            continue;
        }
        MRC_REQUIRE(garbage == 0, "%s (iteration %d): decoded, garbage to the engine", v->name, it);
        mrc_pkt k;
        unsigned flags = pkt.marked_trimmed ? MRC_DECODE_TRIMMED : 0;
        MRC_REQUIRE(mrc_wire_decode(inner, innerlen, o.set.udp_port, flags, &k) == 0,
                    "%s (iteration %d): the engine's decoder refuses it", v->name, it);
        MRC_REQUIRE((pkt.has & ~MRC_PACKET_HAS_OUTER) == k.has &&
                        !!(pkt.has & MRC_PACKET_HAS_OUTER) == srv6_mode,
                    "%s (iteration %d): has %#x", v->name, it, pkt.has);
        for (size_t i = 0; i < NFIELDS; i++) {
            const pub_field *f = &fields[i];
            const uint8_t *got = (const uint8_t *)&pkt + f->pub_off;
            if (f->has && !(k.has & f->has)) {
                MRC_REQUIRE(is_zero(got, f->pub_size), "%s: %s set without its header", v->name,
                            f->name);
            } else if (f->bytes) {
                MRC_REQUIRE(memcmp(got, (const uint8_t *)&k + f->pkt_off, f->pub_size) == 0,
                            "%s: %s differs from the engine's decoder", v->name, f->name);
            } else {
                MRC_REQUIRE(load(got, f->pub_size, false) ==
                                load((const uint8_t *)&k + f->pkt_off, f->pkt_size, false),
                            "%s: %s differs from the engine's decoder", v->name, f->name);
            }
        }
        MRC_REQUIRE(pkt.payload == k.payload && pkt.ev == ev_of(inner), "%s: payload or EV",
                    v->name);
    }
    /* the mutations reach every verdict but a bad field, which the fault tests of the wire
     * suite make on purpose */
    for (int c = 0; c <= -MRC_PACKET_ENOTUDP; c++) {
        if (c != -MRC_PACKET_EFIELD) {
            ck_assert_msg(by_rv[c] > 0, "no case of %s", mrc_packet_strerror(-c));
        }
    }
    mrc_test_node_free(&node);
    for (size_t i = 0; i < nvec; i++) {
        mrc_test_vec_free(vecs[i]);
    }
    mrc_test_vec_free(outer);
}
END_TEST

Suite *mrc_packet_suite(void)
{
    Suite *s = suite_create("packet");
    TCase *tc = tcase_create("decode");
    tcase_add_test(tc, test_mrc_packet_vectors);
    tcase_add_test(tc, test_mrc_packet_trimmed_dscp);
    tcase_add_test(tc, test_mrc_packet_icrc);
    tcase_add_test(tc, test_mrc_packet_ports);
    tcase_add_test(tc, test_mrc_packet_not_udp);
    tcase_add_test(tc, test_mrc_packet_strerror);
    tcase_add_test(tc, test_mrc_packet_as_engine);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
