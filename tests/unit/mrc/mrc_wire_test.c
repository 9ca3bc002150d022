/* SPDX-License-Identifier: MIT */
/* Unit tests of the MRC wire format: vectors both ways, every fault, trimming, PSN arithmetic. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_test.h"

#define MRC_PORT 4791
#define ALT_PORT 4971

/* The packet kinds tests/vectors must hold, one file each. */
static const char *const required_vectors[] = {
    "write_first",
    "write_middle",
    "write_last",
    "write_last_imm",
    "write_only",
    "write_only_imm",
    "write_tseth",
    "write_trimmed",
    "ack",
    "nak",
    "sack",
    "sack_probe",
    "nack_trimmed",
    "nack_trimmed_lasthop",
    "nack_no_bitmap",
    "nack_no_pkt_buffer",
    "nack_no_resource",
    "nack_psn_oor_window",
    "nack_unexp_event",
    "probe",
    "ep_req_psu",
    "ep_req_ev_probe",
    "ep_rsp",
    "outer",
};

/* How a vector's field name maps onto the parsed struct. */
typedef enum field_kind { K_UINT, K_SINT, K_BYTES } field_kind;

typedef struct field_desc {
    const char *name;
    size_t off, size;
    field_kind kind;
} field_desc;

#define MEMBER_SIZE(type, m) sizeof(((type *)0)->m)
#define PKT(m) offsetof(mrc_pkt, m), MEMBER_SIZE(mrc_pkt, m)
#define IP6(m) offsetof(mrc_ip6, m), MEMBER_SIZE(mrc_ip6, m)

/* Every member of mrc_pkt but the payload pointer; the names the vector files use. */
static const field_desc pkt_fields[] = {
    {"ip.tc", PKT(ip.tc), K_UINT},
    {"ip.flowlabel", PKT(ip.flowlabel), K_UINT},
    {"ip.plen", PKT(ip.plen), K_UINT},
    {"ip.nxt", PKT(ip.nxt), K_UINT},
    {"ip.hlim", PKT(ip.hlim), K_UINT},
    {"ip.src", PKT(ip.src), K_BYTES},
    {"ip.dst", PKT(ip.dst), K_BYTES},
    {"udp.sport", PKT(udp.sport), K_UINT},
    {"udp.dport", PKT(udp.dport), K_UINT},
    {"udp.len", PKT(udp.len), K_UINT},
    {"udp.csum", PKT(udp.csum), K_UINT},
    {"bth.opcode", PKT(bth.opcode), K_UINT},
    {"bth.se", PKT(bth.se), K_UINT},
    {"bth.mig", PKT(bth.mig), K_UINT},
    {"bth.padcnt", PKT(bth.padcnt), K_UINT},
    {"bth.tver", PKT(bth.tver), K_UINT},
    {"bth.pkey", PKT(bth.pkey), K_UINT},
    {"bth.resv8a", PKT(bth.resv8a), K_UINT},
    {"bth.dqpn", PKT(bth.dqpn), K_UINT},
    {"bth.ackreq", PKT(bth.ackreq), K_UINT},
    {"bth.rtx", PKT(bth.rtx), K_UINT},
    {"bth.ts", PKT(bth.ts), K_UINT},
    {"bth.psn", PKT(bth.psn), K_UINT},
    {"has", PKT(has), K_UINT},
    {"meth.rqmsn", PKT(meth.rqmsn), K_UINT},
    {"meth.msn", PKT(meth.msn), K_UINT},
    {"tseth.ts", PKT(tseth.ts), K_UINT},
    {"tseth.tsr", PKT(tseth.tsr), K_UINT},
    {"tseth.fmt", PKT(tseth.fmt), K_UINT},
    {"reth.va", PKT(reth.va), K_UINT},
    {"reth.rkey", PKT(reth.rkey), K_UINT},
    {"reth.dmalen", PKT(reth.dmalen), K_UINT},
    {"imm", PKT(imm), K_UINT},
    {"aeth.syndrome", PKT(aeth.syndrome), K_UINT},
    {"aeth.msn", PKT(aeth.msn), K_UINT},
    {"seth.m", PKT(seth.m), K_UINT},
    {"seth.pr", PKT(seth.pr), K_UINT},
    {"seth.ack_psn_offset", PKT(seth.ack_psn_offset), K_SINT},
    {"seth.entropy", PKT(seth.entropy), K_UINT},
    {"seth.spdcid", PKT(seth.spdcid), K_UINT},
    {"seth.dpdcid", PKT(seth.dpdcid), K_UINT},
    {"seth.cack_psn", PKT(seth.cack_psn), K_UINT},
    {"seth.cc_type", PKT(seth.cc_type), K_UINT},
    {"seth.cc_flags", PKT(seth.cc_flags), K_UINT},
    {"seth.mpr", PKT(seth.mpr), K_UINT},
    {"seth.sack_offset", PKT(seth.sack_offset), K_SINT},
    {"seth.bitmap", PKT(seth.bitmap), K_UINT},
    {"cc.ts", PKT(cc.ts), K_UINT},
    {"cc.ooo_count", PKT(cc.ooo_count), K_UINT},
    {"cc.rc", PKT(cc.rc), K_UINT},
    {"cc.pen", PKT(cc.pen), K_UINT},
    {"cc.rcvd_bytes", PKT(cc.rcvd_bytes), K_UINT},
    {"neth.reason", PKT(neth.reason), K_UINT},
    {"neth.vendor", PKT(neth.vendor), K_UINT},
    {"neth.entropy", PKT(neth.entropy), K_UINT},
    {"neth.spdcid", PKT(neth.spdcid), K_UINT},
    {"neth.dpdcid", PKT(neth.dpdcid), K_UINT},
    {"neth.nack_psn", PKT(neth.nack_psn), K_UINT},
    {"neth.cc_type", PKT(neth.cc_type), K_UINT},
    {"neth.cc_flags", PKT(neth.cc_flags), K_UINT},
    {"neth.ts", PKT(neth.ts), K_UINT},
    {"peth.vendor", PKT(peth.vendor), K_UINT},
    {"peth.probe_id", PKT(peth.probe_id), K_UINT},
    {"peth.spdcid", PKT(peth.spdcid), K_UINT},
    {"peth.dpdcid", PKT(peth.dpdcid), K_UINT},
    {"peth.ts.ts", PKT(peth.ts.ts), K_UINT},
    {"peth.ts.tsr", PKT(peth.ts.tsr), K_UINT},
    {"peth.ts.fmt", PKT(peth.ts.fmt), K_UINT},
    {"erth.op", PKT(erth.op), K_UINT},
    {"erth.vendor", PKT(erth.vendor), K_UINT},
    {"erth.port_status", PKT(erth.port_status), K_UINT},
    {"erth.ts.ts", PKT(erth.ts.ts), K_UINT},
    {"erth.ts.tsr", PKT(erth.ts.tsr), K_UINT},
    {"erth.ts.fmt", PKT(erth.ts.fmt), K_UINT},
    {"eeth.op", PKT(eeth.op), K_UINT},
    {"eeth.entropy", PKT(eeth.entropy), K_UINT},
    {"eeth.svc_time_ns", PKT(eeth.svc_time_ns), K_UINT},
    {"eeth.ts", PKT(eeth.ts), K_UINT},
    {"payload_len", PKT(payload_len), K_UINT},
    {"trimmed", PKT(trimmed), K_UINT},
};
#define NPKT_FIELDS (sizeof(pkt_fields) / sizeof(pkt_fields[0]))

static const field_desc outer_fields[] = {
    {"outer.tc", IP6(tc), K_UINT},     {"outer.flowlabel", IP6(flowlabel), K_UINT},
    {"outer.plen", IP6(plen), K_UINT}, {"outer.nxt", IP6(nxt), K_UINT},
    {"outer.hlim", IP6(hlim), K_UINT}, {"outer.src", IP6(src), K_BYTES},
    {"outer.dst", IP6(dst), K_BYTES},
};
#define NOUTER_FIELDS (sizeof(outer_fields) / sizeof(outer_fields[0]))

static const field_desc *find_field(const field_desc *tab, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tab[i].name, name) == 0) {
            return &tab[i];
        }
    }
    return NULL;
}

/* The member as a 64-bit value, sign-extended for K_SINT. */
static uint64_t get_field(const void *base, const field_desc *f)
{
    const uint8_t *p = (const uint8_t *)base + f->off;
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64 = 0;
    int16_t s16;

    if (f->kind == K_SINT) {
        memcpy(&s16, p, sizeof(s16));
        return (uint64_t)(int64_t)s16;
    }
    switch (f->size) {
    case 1:
        memcpy(&v8, p, 1);
        v64 = v8;
        break;
    case 2:
        memcpy(&v16, p, 2);
        v64 = v16;
        break;
    case 4:
        memcpy(&v32, p, 4);
        v64 = v32;
        break;
    default:
        memcpy(&v64, p, 8);
        break;
    }
    return v64;
}

static void set_field(void *base, const field_desc *f, uint64_t v)
{
    uint8_t *p = (uint8_t *)base + f->off;
    uint8_t v8 = (uint8_t)v;
    uint16_t v16 = (uint16_t)v;
    uint32_t v32 = (uint32_t)v;

    switch (f->size) {
    case 1:
        memcpy(p, &v8, 1);
        break;
    case 2:
        memcpy(p, &v16, 2);
        break;
    case 4:
        memcpy(p, &v32, 4);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
}

static size_t parse_hex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    if (strcmp(s, "-") == 0) {
        return 0;
    }
    ck_assert_msg(strlen(s) % 2 == 0, "odd hex string %s", s);
    for (; s[0] && s[1]; s += 2) {
        unsigned byte;
        ck_assert_msg(sscanf(s, "%2x", &byte) == 1, "bad hex %s", s);
        ck_assert_uint_lt(n, max);
        out[n++] = (uint8_t)byte;
    }
    return n;
}

static uint64_t parse_num(const char *s, field_kind kind)
{
    char *end;
    uint64_t v;
    if (kind == K_SINT) {
        v = (uint64_t)strtoll(s, &end, 0);
    } else {
        v = strtoull(s, &end, 0);
    }
    ck_assert_msg(*s && *end == '\0', "not a number: %s", s);
    return v;
}

static uint64_t vec_num(const mrc_test_vec *vec, const char *name, uint64_t dflt)
{
    const char *s = mrc_test_vec_get(vec, name);
    return s ? parse_num(s, K_UINT) : dflt;
}

static bool is_outer(const mrc_test_vec *vec)
{
    return mrc_test_vec_get(vec, "outer.nxt") != NULL;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

/* Recomputes the ICRC of a packet of |len| bytes after a test changed a field in it. */
static void reseal(uint8_t *pkt, size_t len)
{
    put_le32(pkt + len - MRC_ICRC_LEN, mrc_icrc(pkt, len - MRC_ICRC_LEN));
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Sets the IPv6 payload length and the UDP length together. */
static void set_lengths(uint8_t *pkt, unsigned plen)
{
    put16(pkt + 4, plen);
    put16(pkt + MRC_IP6_LEN + 4, plen);
}

static size_t hdr_len(const uint8_t *pkt)
{
    uint8_t op = pkt[MRC_IP6_LEN + MRC_UDP_LEN];
    bool ts = pkt[MRC_IP6_LEN + MRC_UDP_LEN + 8] & 0x10;
    return MRC_BASE_LEN + mrc_wire_ext_len(op, ts);
}

/* Compares every field the vector lists with the decoded packet. */
static void check_fields(const mrc_test_vec *vec, const mrc_pkt *pkt)
{
    for (size_t i = 0; i < vec->nfields; i++) {
        const mrc_test_field *tf = &vec->fields[i];
        if (strncmp(tf->name, "decode.", 7) == 0 || strncmp(tf->name, "encode.", 7) == 0) {
            continue;
        }
        if (strcmp(tf->name, "icrc") == 0) {
            uint32_t icrc = (uint32_t)parse_num(tf->value, K_UINT);
            ck_assert_msg(le32(vec->data + vec->len - 4) == icrc, "%s: icrc bytes", vec->name);
            ck_assert_msg(mrc_icrc(vec->data, vec->len - 4) == icrc, "%s: mrc_icrc %08x != %08x",
                          vec->name, mrc_icrc(vec->data, vec->len - 4), icrc);
            continue;
        }
        if (strcmp(tf->name, "udp.csum_sealed") == 0) {
            /* the vector's bytes are the encoder's, checksum 0; the engine seals them so */
            uint8_t copy[MRC_TEST_VEC_MAX];
            memcpy(copy, vec->data, vec->len);
            ck_assert_msg(!mrc_udp6_csum_ok(copy, vec->len), "%s: checksum 0 taken", vec->name);
            ck_assert_int_eq(mrc_udp6_csum_set(copy, vec->len), 0);
            unsigned got = (unsigned)copy[MRC_IP6_LEN + 6] << 8 | copy[MRC_IP6_LEN + 7];
            ck_assert_msg(got == parse_num(tf->value, K_UINT), "%s: UDP checksum %04x, vector %s",
                          vec->name, got, tf->value);
            ck_assert_msg(mrc_udp6_csum_ok(copy, vec->len), "%s: sealed checksum", vec->name);
            copy[vec->len - 1] ^= 0x10;
            ck_assert_msg(!mrc_udp6_csum_ok(copy, vec->len), "%s: a flipped bit", vec->name);
            continue;
        }
        if (strcmp(tf->name, "payload") == 0) {
            uint8_t want[MRC_TEST_VEC_MAX];
            size_t n = parse_hex(tf->value, want, sizeof(want));
            ck_assert_msg(pkt->payload_len == n, "%s: payload_len %zu != %zu", vec->name,
                          pkt->payload_len, n);
            ck_assert_msg(n == 0 || memcmp(pkt->payload, want, n) == 0, "%s: payload bytes",
                          vec->name);
            continue;
        }
        const field_desc *fd = find_field(pkt_fields, NPKT_FIELDS, tf->name);
        ck_assert_msg(fd != NULL, "%s: unknown field %s", vec->name, tf->name);
        if (fd->kind == K_BYTES) {
            uint8_t want[16];
            ck_assert_uint_eq(parse_hex(tf->value, want, sizeof(want)), fd->size);
            ck_assert_msg(memcmp((const uint8_t *)pkt + fd->off, want, fd->size) == 0,
                          "%s: field %s", vec->name, tf->name);
            continue;
        }
        uint64_t want = parse_num(tf->value, fd->kind);
        uint64_t got = get_field(pkt, fd);
        ck_assert_msg(got == want, "%s: field %s = %llx, vector says %llx", vec->name, tf->name,
                      (unsigned long long)got, (unsigned long long)want);
    }
}

/* A packet from the vector's field list alone; returns the payload length given to encode. */
static size_t pkt_from_fields(const mrc_test_vec *vec, mrc_pkt *pkt, uint8_t *payload,
                              size_t *ppresent)
{
    size_t present = 0;

    memset(pkt, 0, sizeof(*pkt));
    for (size_t i = 0; i < vec->nfields; i++) {
        const mrc_test_field *tf = &vec->fields[i];
        if (strcmp(tf->name, "payload") == 0) {
            present = parse_hex(tf->value, payload, MRC_TEST_VEC_MAX);
            continue;
        }
        const field_desc *fd = find_field(pkt_fields, NPKT_FIELDS, tf->name);
        if (!fd) {
            continue; /* icrc, decode.*, encode.*: not packet members */
        }
        if (fd->kind == K_BYTES) {
            parse_hex(tf->value, (uint8_t *)pkt + fd->off, fd->size);
        } else {
            set_field(pkt, fd, parse_num(tf->value, fd->kind));
        }
    }
    pkt->payload = payload;
    *ppresent = present;
    return (size_t)vec_num(vec, "encode.payload_len", present);
}

static mrc_test_vec *load_all(size_t *pn)
{
    static char names[64][64];
    size_t n = mrc_test_vec_names(names, 64);
    mrc_test_vec *vecs = calloc(n, sizeof(*vecs));
    ck_assert_ptr_nonnull(vecs);
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *v = mrc_test_vec_load(names[i]);
        vecs[i] = *v;
        mrc_test_vec_free(v);
    }
    *pn = n;
    return vecs;
}

/* The inner, complete (not trimmed) vectors: the base of the fault tests. */
static bool is_full_inner(const mrc_test_vec *vec)
{
    return !is_outer(vec) && vec_num(vec, "trimmed", 0) == 0;
}

static int decode_vec(const uint8_t *data, size_t len, unsigned flags, mrc_pkt *pkt)
{
    return mrc_wire_decode(data, len, MRC_PORT, flags, pkt);
}

START_TEST(test_mrc_wire_vectors_present)
{
    char names[64][64];
    size_t n = mrc_test_vec_names(names, 64);
    for (size_t i = 0; i < sizeof(required_vectors) / sizeof(required_vectors[0]); i++) {
        bool found = false;
        for (size_t j = 0; j < n; j++) {
            found = found || strcmp(names[j], required_vectors[i]) == 0;
        }
        ck_assert_msg(found, "tests/vectors/%s.hex is missing", required_vectors[i]);
    }
}
END_TEST

START_TEST(test_mrc_wire_vectors_decode)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (is_outer(vec)) {
            mrc_ip6 ip;
            ck_assert_int_eq(mrc_wire_outer_decode(vec->data, vec->len, &ip), 0);
            for (size_t k = 0; k < vec->nfields; k++) {
                const field_desc *fd = find_field(outer_fields, NOUTER_FIELDS, vec->fields[k].name);
                ck_assert_msg(fd != NULL, "%s: unknown field %s", vec->name, vec->fields[k].name);
                if (fd->kind == K_BYTES) {
                    uint8_t want[16];
                    parse_hex(vec->fields[k].value, want, 16);
                    ck_assert_mem_eq((const uint8_t *)&ip + fd->off, want, 16);
                } else {
                    ck_assert_uint_eq(get_field(&ip, fd), parse_num(vec->fields[k].value, 0));
                }
            }
            continue;
        }
        mrc_pkt pkt;
        unsigned flags = (unsigned)vec_num(vec, "decode.flags", 0);
        uint16_t port = (uint16_t)vec_num(vec, "decode.udp_port", MRC_PORT);
        int rv = mrc_wire_decode(vec->data, vec->len, port, flags, &pkt);
        ck_assert_msg(rv == 0, "%s: %s", vec->name, mrc_wire_strerror(rv));
        check_fields(vec, &pkt);
    }
    free(vecs);
}
END_TEST

START_TEST(test_mrc_wire_vectors_encode)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    static uint8_t payload[MRC_TEST_VEC_MAX], buf[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (is_outer(vec)) {
            mrc_ip6 ip;
            memset(&ip, 0, sizeof(ip));
            for (size_t k = 0; k < vec->nfields; k++) {
                const field_desc *fd = find_field(outer_fields, NOUTER_FIELDS, vec->fields[k].name);
                ck_assert_ptr_nonnull(fd);
                if (fd->kind == K_BYTES) {
                    parse_hex(vec->fields[k].value, (uint8_t *)&ip + fd->off, 16);
                } else {
                    set_field(&ip, fd, parse_num(vec->fields[k].value, 0));
                }
            }
            mrc_wire_outer(buf, ip.src, ip.dst, ip.plen, ip.tc, ip.flowlabel, ip.hlim);
            ck_assert_uint_eq(vec->len, MRC_IP6_LEN);
            ck_assert_msg(memcmp(buf, vec->data, MRC_IP6_LEN) == 0, "%s: bytes", vec->name);
            continue;
        }
        mrc_pkt pkt;
        size_t present;
        size_t plen = pkt_from_fields(vec, &pkt, payload, &present);
        memset(buf, 0xa5, sizeof(buf));
        size_t h = mrc_wire_encode(buf, sizeof(buf), &pkt, plen);
        ck_assert_msg(h > 0, "%s: encode failed", vec->name);
        memcpy(buf + h, payload, present);
        if (vec_num(vec, "trimmed", 0)) {
            /* only what survived the trim can be compared */
            ck_assert_uint_eq(h + present, vec->len);
        } else {
            ck_assert_uint_eq(mrc_wire_finish(buf, sizeof(buf), h + present), vec->len);
        }
        for (size_t k = 0; k < vec->len; k++) {
            ck_assert_msg(buf[k] == vec->data[k], "%s: byte %zu is %02x, vector has %02x",
                          vec->name, k, buf[k], vec->data[k]);
        }
    }
    free(vecs);
}
END_TEST

/* decode then encode gives the same bytes back, for every vector */
START_TEST(test_mrc_wire_vectors_reencode)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    static uint8_t buf[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (is_outer(vec)) {
            continue;
        }
        mrc_pkt pkt;
        unsigned flags = (unsigned)vec_num(vec, "decode.flags", 0);
        ck_assert_int_eq(decode_vec(vec->data, vec->len, flags, &pkt), 0);
        size_t wire_payload =
            pkt.ip.plen + MRC_IP6_LEN - hdr_len(vec->data) - MRC_ICRC_LEN - pkt.bth.padcnt;
        size_t h = mrc_wire_encode(buf, sizeof(buf), &pkt, wire_payload);
        ck_assert_uint_eq(h, hdr_len(vec->data));
        memcpy(buf + h, pkt.payload, pkt.payload_len);
        if (!pkt.trimmed) {
            ck_assert_uint_eq(mrc_wire_finish(buf, sizeof(buf), h + pkt.payload_len), vec->len);
        }
        ck_assert_msg(memcmp(buf, vec->data, vec->len) == 0, "%s", vec->name);
    }
    free(vecs);
}
END_TEST

/* An independent statement of the opcode table of lib/mrc/README.md#opcodes. */
static uint32_t expected_headers(unsigned op, bool ts, size_t *pext)
{
    uint32_t has = 0;
    size_t ext = 0;
    if (op >= 0xc6 && op <= 0xcb) {
        has = MRC_HAS_METH | MRC_HAS_RETH;
        ext = 4 + 16;
        if (ts) {
            has |= MRC_HAS_TSETH;
            ext += 4;
        }
        if (op == 0xc9 || op == 0xcb) {
            has |= MRC_HAS_IMM;
            ext += 4;
        }
    } else if (op == 0xd1) {
        has = MRC_HAS_AETH;
        ext = 4;
    } else if (op == 0xd8) {
        has = MRC_HAS_ERTH;
        ext = 16;
    } else if (op == 0xd9) {
        has = MRC_HAS_EETH;
        ext = 36;
    } else if (op == 0xdc) {
        has = MRC_HAS_SETH;
        ext = 28 + 8;
    } else if (op == 0xdd) {
        has = MRC_HAS_NETH;
        ext = 20;
    } else if (op == 0xde) {
        has = MRC_HAS_PETH;
        ext = 16;
    }
    *pext = ext;
    return has;
}

START_TEST(test_mrc_wire_headers_table)
{
    for (unsigned op = 0; op < 256; op++) {
        for (int ts = 0; ts < 2; ts++) {
            size_t ext;
            uint32_t has = expected_headers(op, ts, &ext);
            ck_assert_msg(mrc_wire_headers((uint8_t)op, ts) == has, "opcode %02x ts %d", op, ts);
            ck_assert_msg(mrc_wire_ext_len((uint8_t)op, ts) == ext, "opcode %02x ts %d", op, ts);
        }
    }
}
END_TEST

/* Every vector cut short by 1..all of its bytes, with each flag combination. */
START_TEST(test_mrc_wire_truncated)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (!is_full_inner(vec)) {
            continue;
        }
        mrc_pkt full, pkt;
        ck_assert_int_eq(decode_vec(vec->data, vec->len, 0, &full), 0);
        size_t hlen = hdr_len(vec->data);
        for (size_t len = 0; len < vec->len; len++) {
            int rv = decode_vec(vec->data, len, 0, &pkt);
            MRC_REQUIRE(rv == MRC_WIRE_ESHORT, "%s cut to %zu: %d", vec->name, len, rv);
            rv = decode_vec(vec->data, len, MRC_DECODE_NO_ICRC, &pkt);
            MRC_REQUIRE(rv == MRC_WIRE_ESHORT, "%s cut to %zu: %d", vec->name, len, rv);
            rv = decode_vec(vec->data, len, MRC_DECODE_TRIMMED, &pkt);
            if (len < hlen) {
                MRC_REQUIRE(rv == MRC_WIRE_ESHORT, "%s trimmed to %zu: %d", vec->name, len, rv);
                continue;
            }
            /* the headers survive: a trimmed packet, with what is left of the payload */
            MRC_REQUIRE(rv == 0, "%s trimmed to %zu: %d", vec->name, len, rv);
            MRC_REQUIRE(pkt.trimmed, "%s trimmed to %zu", vec->name, len);
            size_t left = len - hlen;
            size_t want = left < full.payload_len ? left : full.payload_len;
            MRC_REQUIRE(pkt.payload_len == want, "%s trimmed to %zu: payload %zu", vec->name, len,
                        pkt.payload_len);
            pkt.trimmed = false;
            pkt.payload_len = full.payload_len;
            MRC_REQUIRE(memcmp(&pkt, &full, sizeof(pkt)) == 0, "%s trimmed to %zu: fields",
                        vec->name, len);
        }
    }
    free(vecs);
}
END_TEST

/*
 * The length fields shortened by 1..all bytes: with the packet left as it is, and with the
 * packet cut to match (then the ICRC is sought in the wrong place, or the pad is wrong).
 */
START_TEST(test_mrc_wire_short_lengths)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    static uint8_t buf[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (!is_full_inner(vec)) {
            continue;
        }
        mrc_pkt pkt;
        unsigned plen = (unsigned)(vec->len - MRC_IP6_LEN);
        size_t hlen = hdr_len(vec->data);
        bool data_op = mrc_wire_headers(vec->data[MRC_IP6_LEN + MRC_UDP_LEN], false) & MRC_HAS_METH;
        unsigned padcnt = vec->data[MRC_IP6_LEN + MRC_UDP_LEN + 1] >> 4 & 3;
        for (unsigned d = 1; d <= plen; d++) {
            memcpy(buf, vec->data, vec->len);
            set_lengths(buf, plen - d);
            int rv = decode_vec(buf, vec->len, 0, &pkt);
            MRC_REQUIRE(rv == MRC_WIRE_EIP, "%s plen-%u: %d", vec->name, d, rv);
            rv = decode_vec(buf, vec->len, MRC_DECODE_TRIMMED, &pkt);
            MRC_REQUIRE(rv == MRC_WIRE_EIP, "%s plen-%u trimmed: %d", vec->name, d, rv);
            /* only one of the two lengths shortened */
            memcpy(buf, vec->data, vec->len);
            put16(buf + 4, plen - d);
            MRC_REQUIRE(decode_vec(buf, vec->len, 0, &pkt) == MRC_WIRE_EIP, "%s", vec->name);
            memcpy(buf, vec->data, vec->len);
            put16(buf + MRC_IP6_LEN + 4, plen - d);
            MRC_REQUIRE(decode_vec(buf, vec->len, 0, &pkt) == MRC_WIRE_EIP, "%s", vec->name);

            /* packet and lengths agree, both shorter */
            memcpy(buf, vec->data, vec->len);
            set_lengths(buf, plen - d);
            size_t len = vec->len - d;
            int want;
            if (len < hlen + MRC_ICRC_LEN) {
                want = MRC_WIRE_ESHORT;
            } else if (!data_op) {
                want = MRC_WIRE_EIP;
            } else {
                size_t padded = len - hlen - MRC_ICRC_LEN;
                want = (padded % 4 || padcnt > padded) ? MRC_WIRE_EPAD : MRC_WIRE_EICRC;
            }
            rv = decode_vec(buf, len, 0, &pkt);
            MRC_REQUIRE(rv == want, "%s cut by %u with lengths: %d, want %d", vec->name, d, rv,
                        want);
        }
    }
    free(vecs);
}
END_TEST

START_TEST(test_mrc_wire_longer)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    static uint8_t buf[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (!is_full_inner(vec)) {
            continue;
        }
        mrc_pkt pkt;
        memcpy(buf, vec->data, vec->len);
        for (size_t extra = 1; extra <= 8; extra++) {
            buf[vec->len + extra - 1] = 0;
            for (unsigned flags = 0; flags < 4; flags++) {
                int rv = decode_vec(buf, vec->len + extra, flags, &pkt);
                ck_assert_msg(rv == MRC_WIRE_EIP, "%s + %zu bytes, flags %u: %d", vec->name, extra,
                              flags, rv);
            }
        }
    }
    free(vecs);
}
END_TEST

/* Each fault class of mrc_wire_decode(), the packet otherwise valid (the ICRC recomputed). */
START_TEST(test_mrc_wire_faults)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    static uint8_t buf[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (!is_full_inner(vec)) {
            continue;
        }
        mrc_pkt pkt;
        size_t len = vec->len;
        uint8_t *bth = buf + MRC_IP6_LEN + MRC_UDP_LEN;
        uint8_t *udp = buf + MRC_IP6_LEN;
        unsigned plen = (unsigned)(len - MRC_IP6_LEN);
        bool data_op = mrc_wire_headers(vec->data[MRC_IP6_LEN + MRC_UDP_LEN], false) & MRC_HAS_METH;

        for (unsigned v = 0; v < 16; v++) {
            memcpy(buf, vec->data, len);
            buf[0] = (uint8_t)(v << 4 | (buf[0] & 0x0f));
            reseal(buf, len);
            ck_assert_int_eq(decode_vec(buf, len, 0, &pkt), v == 6 ? 0 : MRC_WIRE_EIP);
        }
        for (unsigned nh = 0; nh < 256; nh++) {
            memcpy(buf, vec->data, len);
            buf[6] = (uint8_t)nh;
            reseal(buf, len);
            MRC_REQUIRE(decode_vec(buf, len, 0, &pkt) == (nh == 17 ? 0 : MRC_WIRE_EIP), "nh %u",
                        nh);
        }
        for (unsigned d = 1; d < 65536; d += 97) {
            memcpy(buf, vec->data, len);
            put16(udp + 4, (plen + d) & 0xffff);
            MRC_REQUIRE(decode_vec(buf, len, MRC_DECODE_NO_ICRC, &pkt) == MRC_WIRE_EIP,
                        "udp len +%u", d);
        }
        for (unsigned port = 0; port < 65536; port += 7) {
            memcpy(buf, vec->data, len);
            put16(udp + 2, port);
            reseal(buf, len);
            int want = (port == MRC_PORT || port == ALT_PORT) ? 0 : MRC_WIRE_EPORT;
            MRC_REQUIRE(decode_vec(buf, len, 0, &pkt) == want, "port %u", port);
        }
        memcpy(buf, vec->data, len);
        put16(udp + 2, ALT_PORT);
        reseal(buf, len);
        ck_assert_int_eq(decode_vec(buf, len, 0, &pkt), 0);
        ck_assert_int_eq(mrc_wire_decode(buf, len, 1234, 0, &pkt), 0);
        put16(udp + 2, MRC_PORT);
        reseal(buf, len);
        ck_assert_int_eq(mrc_wire_decode(buf, len, 1234, 0, &pkt), MRC_WIRE_EPORT);
        ck_assert_int_eq(mrc_wire_decode(buf, len, MRC_PORT, 0, &pkt), 0);

        for (unsigned op = 0; op < 256; op++) {
            size_t ext;
            if (expected_headers(op, false, &ext)) {
                continue;
            }
            memcpy(buf, vec->data, len);
            bth[0] = (uint8_t)op;
            reseal(buf, len);
            MRC_REQUIRE(decode_vec(buf, len, 0, &pkt) == MRC_WIRE_EOPCODE, "opcode %02x", op);
        }
        for (unsigned tver = 1; tver < 16; tver++) {
            memcpy(buf, vec->data, len);
            bth[1] = (uint8_t)((bth[1] & 0xf0) | tver);
            reseal(buf, len);
            ck_assert_int_eq(decode_vec(buf, len, 0, &pkt), MRC_WIRE_EOPCODE);
        }

        /* the pad count, and payloads that are not whole words */
        size_t padded = len - hdr_len(vec->data) - MRC_ICRC_LEN;
        for (unsigned pad = 0; pad < 4; pad++) {
            memcpy(buf, vec->data, len);
            bth[1] = (uint8_t)((bth[1] & 0xcf) | pad << 4);
            reseal(buf, len);
            int want = data_op ? (pad > padded ? MRC_WIRE_EPAD : 0) : (pad ? MRC_WIRE_EPAD : 0);
            ck_assert_msg(decode_vec(buf, len, 0, &pkt) == want, "%s pad %u", vec->name, pad);
        }
        for (unsigned extra = 1; extra <= 4; extra++) {
            memcpy(buf, vec->data, len);
            memset(buf + len, 0, extra);
            set_lengths(buf, plen + extra);
            reseal(buf, len + extra);
            int want = data_op ? (extra == 4 ? 0 : MRC_WIRE_EPAD) : MRC_WIRE_EIP;
            ck_assert_msg(decode_vec(buf, len + extra, 0, &pkt) == want, "%s + %u", vec->name,
                          extra);
        }

        /* the ICRC: each byte wrong, then not checked */
        for (size_t k = len - 4; k < len; k++) {
            for (unsigned bit = 0; bit < 8; bit++) {
                memcpy(buf, vec->data, len);
                buf[k] ^= (uint8_t)(1u << bit);
                ck_assert_int_eq(decode_vec(buf, len, 0, &pkt), MRC_WIRE_EICRC);
                ck_assert_int_eq(decode_vec(buf, len, MRC_DECODE_NO_ICRC, &pkt), 0);
                ck_assert_int_eq(decode_vec(buf, len, MRC_DECODE_TRIMMED, &pkt), MRC_WIRE_EICRC);
            }
        }
    }
    free(vecs);
}
END_TEST

/* Sets byte |off| of vector |name|'s first header after BTH to (byte & keep) | val. */
static int field_case(const char *name, size_t off, uint8_t keep, uint8_t val)
{
    static uint8_t buf[MRC_TEST_VEC_MAX];
    mrc_test_vec *vec = mrc_test_vec_load(name);
    mrc_pkt pkt;
    memcpy(buf, vec->data, vec->len);
    uint8_t *p = buf + MRC_BASE_LEN + off;
    *p = (uint8_t)((*p & keep) | val);
    reseal(buf, vec->len);
    int rv = decode_vec(buf, vec->len, 0, &pkt);
    /* the reserved bits around a field never matter, ICRC or not */
    mrc_test_vec_free(vec);
    return rv;
}

START_TEST(test_mrc_wire_bad_fields)
{
    /* SETH m: 0..2, never 3 */
    for (unsigned m = 0; m < 4; m++) {
        ck_assert_int_eq(field_case("sack", 1, 0x9f, (uint8_t)(m << 5)),
                         m == 3 ? MRC_WIRE_EFIELD : 0);
    }
    /* ERTH op in byte 1 bits 1:0, EETH op in bits 3:2: PSU or EV probe */
    for (unsigned op = 0; op < 4; op++) {
        ck_assert_int_eq(field_case("ep_req_psu", 1, 0xfc, (uint8_t)op),
                         op > 1 ? MRC_WIRE_EFIELD : 0);
        ck_assert_int_eq(field_case("ep_rsp", 1, 0xf3, (uint8_t)(op << 2)),
                         op > 1 ? MRC_WIRE_EFIELD : 0);
    }
    /* timestamp format types 0 and 1 exist: TSETH (after METH), PETH and ERTH blocks */
    for (unsigned fmt = 0; fmt < 16; fmt++) {
        int want = fmt > 1 ? MRC_WIRE_EFIELD : 0;
        ck_assert_int_eq(field_case("write_tseth", 4 + 3, 0xf0, (uint8_t)fmt), want);
        ck_assert_int_eq(field_case("probe", 12 + 3, 0xf0, (uint8_t)fmt), want);
        ck_assert_int_eq(field_case("ep_req_ev_probe", 12 + 3, 0xf0, (uint8_t)fmt), want);
    }
    /* AETH: ACK (00) or NAK (11) types, bit 7 clear */
    for (unsigned s = 0; s < 256; s++) {
        int want = (s >> 5 == 0 || s >> 5 == 3) ? 0 : MRC_WIRE_EFIELD;
        MRC_REQUIRE(field_case("ack", 0, 0, (uint8_t)s) == want, "syndrome %02x", s);
    }
    /* NETH: the seven reasons MRC defines */
    unsigned accepted = 0;
    for (unsigned r = 0; r < 256; r++) {
        int rv = field_case("nack_trimmed", 2, 0, (uint8_t)r);
        bool known = r == MRC_NACK_TRIMMED || r == MRC_NACK_TRIMMED_LASTHOP ||
                     r == MRC_NACK_NO_BITMAP || r == MRC_NACK_NO_PKT_BUFFER ||
                     r == MRC_NACK_NO_RESOURCE || r == MRC_NACK_PSN_OOR_WINDOW ||
                     r == MRC_NACK_UNEXP_EVENT;
        MRC_REQUIRE(rv == (known ? 0 : MRC_WIRE_EFIELD), "reason %02x: %d", r, rv);
        accepted += rv == 0;
    }
    ck_assert_uint_eq(accepted, 7);
}
END_TEST

/* Endpoint operations go to QPN 2 and nowhere else. */
START_TEST(test_mrc_wire_ep_qpn)
{
    static const char *const names[] = {"ep_req_psu", "ep_req_ev_probe", "ep_rsp"};
    static uint8_t buf[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < 3; i++) {
        mrc_test_vec *vec = mrc_test_vec_load(names[i]);
        mrc_pkt pkt;
        for (unsigned qpn = 0; qpn < 8; qpn++) {
            memcpy(buf, vec->data, vec->len);
            buf[MRC_IP6_LEN + MRC_UDP_LEN + 7] = (uint8_t)qpn;
            reseal(buf, vec->len);
            ck_assert_int_eq(decode_vec(buf, vec->len, 0, &pkt),
                             qpn == MRC_EP_QPN ? 0 : MRC_WIRE_EFIELD);
        }
        mrc_test_vec_free(vec);
    }
}
END_TEST

/* Reserved bits and the UDP checksum: ignored on decode, written as zero by encode. */
START_TEST(test_mrc_wire_reserved)
{
    static const struct {
        const char *name;
        size_t off; /* from the end of BTH */
        uint8_t mask;
    } cases[] = {
        {"sack", 0, 0xff},
        {"sack", 1, 0x9d},
        {"sack", 12, 0xff},
        {"sack", 28 + 2, 0x80},
        {"nack_no_bitmap", 0, 0xff},
        {"nack_no_bitmap", 1, 0xff},
        {"nack_no_bitmap", 12, 0xff},
        {"nack_no_bitmap", 17, 0xff},
        {"probe", 0, 0xff},
        {"probe", 2, 0xff},
        {"probe", 6, 0xff},
        {"probe", 14, 0x7f},
        {"probe", 15, 0xf0},
        {"ep_req_psu", 0, 0xff},
        {"ep_req_psu", 1, 0xfc},
        {"ep_req_psu", 2, 0xff},
        {"ep_req_psu", 8, 0xff},
        {"ep_req_psu", 11, 0xff},
        {"ep_rsp", 0, 0xff},
        {"ep_rsp", 1, 0xf3},
        {"ep_rsp", 3, 0xff},
        {"ep_rsp", 12, 0xff},
        {"ep_rsp", 27, 0xff},
        {"ep_rsp", 30, 0xff},
        {"ep_rsp", 35, 0xff},
        {"write_tseth", 4 + 2, 0x7f},
        {"write_tseth", 4 + 3, 0xf0},
    };
    static uint8_t buf[MRC_TEST_VEC_MAX], out[MRC_TEST_VEC_MAX];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mrc_test_vec *vec = mrc_test_vec_load(cases[i].name);
        mrc_pkt ref, pkt;
        ck_assert_int_eq(decode_vec(vec->data, vec->len, 0, &ref), 0);
        memcpy(buf, vec->data, vec->len);
        buf[MRC_BASE_LEN + cases[i].off] |= cases[i].mask;
        reseal(buf, vec->len);
        ck_assert_msg(decode_vec(buf, vec->len, 0, &pkt) == 0, "%s +%zu", cases[i].name,
                      cases[i].off);
        pkt.payload = ref.payload;
        ck_assert_msg(memcmp(&pkt, &ref, sizeof(pkt)) == 0, "%s +%zu changed a field",
                      cases[i].name, cases[i].off);
        size_t h = mrc_wire_encode(out, sizeof(out), &pkt, pkt.payload_len);
        memcpy(out + h, pkt.payload, pkt.payload_len);
        ck_assert_uint_eq(mrc_wire_finish(out, sizeof(out), h + pkt.payload_len), vec->len);
        ck_assert_msg(memcmp(out, vec->data, vec->len) == 0, "%s +%zu", cases[i].name,
                      cases[i].off);
        mrc_test_vec_free(vec);
    }
    /* BTH byte 8 bits 6 and 3:0 */
    mrc_test_vec *vec = mrc_test_vec_load("write_first");
    mrc_pkt ref, pkt;
    ck_assert_int_eq(decode_vec(vec->data, vec->len, 0, &ref), 0);
    memcpy(buf, vec->data, vec->len);
    buf[MRC_IP6_LEN + MRC_UDP_LEN + 8] |= 0x4f;
    reseal(buf, vec->len);
    ck_assert_int_eq(decode_vec(buf, vec->len, 0, &pkt), 0);
    pkt.payload = ref.payload;
    ck_assert_mem_eq(&pkt, &ref, sizeof(pkt));
    /* the UDP checksum is reported but masked in the ICRC */
    memcpy(buf, vec->data, vec->len);
    buf[MRC_IP6_LEN + 6] = 0x12;
    buf[MRC_IP6_LEN + 7] = 0x34;
    ck_assert_int_eq(decode_vec(buf, vec->len, 0, &pkt), 0);
    ck_assert_uint_eq(pkt.udp.csum, 0x1234);
    size_t h = mrc_wire_encode(out, sizeof(out), &pkt, pkt.payload_len);
    ck_assert_uint_eq(out[MRC_IP6_LEN + 6] | out[MRC_IP6_LEN + 7], 0);
    ck_assert_uint_gt(h, 0);
    mrc_test_vec_free(vec);
}
END_TEST

/* The bytes the ICRC does not cover: IPv6 TC, flow label, hop limit, UDP checksum, BTH byte 4. */
static bool icrc_masked(size_t off, unsigned bit)
{
    return (off == 0 && bit < 4) || (off >= 1 && off <= 3) || off == 7 || off == MRC_IP6_LEN + 6 ||
           off == MRC_IP6_LEN + 7 || off == MRC_IP6_LEN + MRC_UDP_LEN + 4;
}

/* Every single-bit error is caught: by a structural check, or else by the ICRC. */
START_TEST(test_mrc_wire_bitflips)
{
    size_t n;
    mrc_test_vec *vecs = load_all(&n);
    static uint8_t buf[MRC_TEST_VEC_MAX];
    uint64_t rng = 0x5eed;
    for (size_t i = 0; i < n; i++) {
        mrc_test_vec *vec = &vecs[i];
        if (!is_full_inner(vec)) {
            continue;
        }
        mrc_pkt pkt;
        size_t len = vec->len;
        for (size_t off = 0; off < len; off++) {
            for (unsigned bit = 0; bit < 8; bit++) {
                memcpy(buf, vec->data, len);
                buf[off] ^= (uint8_t)(1u << bit);
                int r0 = decode_vec(buf, len, 0, &pkt);
                int r1 = decode_vec(buf, len, MRC_DECODE_NO_ICRC, &pkt);
                if (icrc_masked(off, bit)) {
                    MRC_REQUIRE(r0 == 0, "%s byte %zu bit %u: %d", vec->name, off, bit, r0);
                    continue;
                }
                MRC_REQUIRE(r0 != 0, "%s byte %zu bit %u not caught", vec->name, off, bit);
                if (r1 == 0) {
                    MRC_REQUIRE(r0 == MRC_WIRE_EICRC, "%s byte %zu bit %u: %d", vec->name, off, bit,
                                r0);
                }
            }
        }
        /* bursts of up to 32 bits in the covered part past BTH: always an ICRC failure */
        for (int k = 0; k < 2000; k++) {
            size_t span = len - MRC_BASE_LEN;
            size_t start = MRC_BASE_LEN * 8 + mrc_test_rand_below(&rng, (uint32_t)(span * 8 - 32));
            uint32_t burst = (uint32_t)mrc_test_rand(&rng) | 1u | 1u << 31;
            memcpy(buf, vec->data, len);
            for (unsigned b = 0; b < 32; b++) {
                if (burst >> b & 1) {
                    buf[(start + b) / 8] ^= (uint8_t)(1u << ((start + b) % 8));
                }
            }
            int r1 = decode_vec(buf, len, MRC_DECODE_NO_ICRC, &pkt);
            int r0 = decode_vec(buf, len, 0, &pkt);
            MRC_REQUIRE(r0 != 0, "%s: burst at bit %zu not caught", vec->name, start);
            if (r1 == 0) {
                MRC_REQUIRE(r0 == MRC_WIRE_EICRC, "%s: burst at %zu: %d", vec->name, start, r0);
            }
        }
    }
    free(vecs);
}
END_TEST

/* Random field values for every opcode: encode, finish and decode give them all back. */
static void random_pkt(uint64_t *rng, uint8_t op, mrc_pkt *pkt, uint8_t *payload, size_t *plen)
{
    static const uint8_t reasons[] = {0x01, 0x02, 0x06, 0x07, 0x0a, 0x0b, 0x19};
    uint8_t r[64];
    mrc_test_rand_fill(rng, r, sizeof(r));
    memset(pkt, 0, sizeof(*pkt));
    pkt->ip.tc = r[0];
    pkt->ip.flowlabel = (uint32_t)mrc_test_rand(rng) & 0xfffff;
    pkt->ip.hlim = r[1];
    mrc_test_rand_fill(rng, pkt->ip.src, 16);
    mrc_test_rand_fill(rng, pkt->ip.dst, 16);
    pkt->udp.sport = (uint16_t)mrc_test_rand(rng);
    pkt->udp.dport = r[2] & 1 ? MRC_PORT : ALT_PORT;
    pkt->bth.opcode = op;
    pkt->bth.se = r[3] & 1;
    pkt->bth.mig = r[3] >> 1 & 1;
    pkt->bth.pkey = (uint16_t)mrc_test_rand(rng);
    pkt->bth.resv8a = r[4];
    pkt->bth.dqpn = (uint32_t)mrc_test_rand(rng) & 0xffffff;
    pkt->bth.ackreq = r[3] >> 2 & 1;
    pkt->bth.rtx = r[3] >> 3 & 1;
    pkt->bth.ts = r[3] >> 4 & 1;
    pkt->bth.psn = (uint32_t)mrc_test_rand(rng) & 0xffffff;
    pkt->has = mrc_wire_headers(op, pkt->bth.ts);
    *plen = 0;
    if (pkt->has & MRC_HAS_METH) {
        pkt->meth.rqmsn = (uint16_t)mrc_test_rand(rng);
        pkt->meth.msn = (uint16_t)mrc_test_rand(rng);
        if (pkt->has & MRC_HAS_TSETH) {
            pkt->tseth.ts = (uint16_t)mrc_test_rand(rng);
            pkt->tseth.tsr = r[5] & 1;
            pkt->tseth.fmt = r[5] >> 1 & 1;
        }
        pkt->reth.va = mrc_test_rand(rng);
        pkt->reth.rkey = (uint32_t)mrc_test_rand(rng);
        pkt->reth.dmalen = (uint32_t)mrc_test_rand(rng);
        if (pkt->has & MRC_HAS_IMM) {
            pkt->imm = (uint32_t)mrc_test_rand(rng);
        }
        *plen = r[6] & 1 ? 4096 : mrc_test_rand_below(rng, 4200);
        mrc_test_rand_fill(rng, payload, *plen);
    }
    switch (op) {
    case MRC_OP_ACK:
        pkt->aeth.syndrome = r[7] & 1 ? MRC_AETH_ACK : (uint8_t)(0x60 | (r[7] >> 3));
        pkt->aeth.msn = (uint32_t)mrc_test_rand(rng) & 0xffffff;
        break;
    case MRC_OP_SACK:
        pkt->seth.m = (uint8_t)(r[8] % 3);
        pkt->seth.pr = r[9] & 1;
        pkt->seth.ack_psn_offset = (int16_t)(uint16_t)mrc_test_rand(rng);
        pkt->seth.entropy = (uint32_t)mrc_test_rand(rng);
        pkt->seth.spdcid = (uint16_t)mrc_test_rand(rng);
        pkt->seth.dpdcid = (uint16_t)mrc_test_rand(rng);
        pkt->seth.cack_psn = (uint32_t)mrc_test_rand(rng) & 0xffffff;
        pkt->seth.cc_type = r[10] & 0x0f;
        pkt->seth.cc_flags = r[11] & 0x0f;
        pkt->seth.mpr = r[12];
        pkt->seth.sack_offset = (int16_t)(uint16_t)mrc_test_rand(rng);
        pkt->seth.bitmap = mrc_test_rand(rng);
        pkt->cc.ts = (uint16_t)mrc_test_rand(rng);
        pkt->cc.ooo_count = (uint16_t)mrc_test_rand(rng) & 0x7fff;
        pkt->cc.rc = r[13] & 1;
        pkt->cc.pen = r[14] & 0x7f;
        pkt->cc.rcvd_bytes = (uint32_t)mrc_test_rand(rng) & 0xffffff;
        break;
    case MRC_OP_NACK:
        pkt->neth.reason = reasons[r[15] % sizeof(reasons)];
        pkt->neth.vendor = r[16];
        pkt->neth.entropy = (uint32_t)mrc_test_rand(rng);
        pkt->neth.spdcid = (uint16_t)mrc_test_rand(rng);
        pkt->neth.dpdcid = (uint16_t)mrc_test_rand(rng);
        pkt->neth.nack_psn = (uint32_t)mrc_test_rand(rng) & 0xffffff;
        pkt->neth.cc_type = r[17] & 0x0f;
        pkt->neth.cc_flags = r[18] & 0x0f;
        pkt->neth.ts = (uint16_t)mrc_test_rand(rng);
        break;
    case MRC_OP_PROBE:
        pkt->peth.vendor = r[19];
        pkt->peth.probe_id = (uint16_t)mrc_test_rand(rng);
        pkt->peth.spdcid = (uint16_t)mrc_test_rand(rng);
        pkt->peth.dpdcid = (uint16_t)mrc_test_rand(rng);
        pkt->peth.ts.ts = (uint16_t)mrc_test_rand(rng);
        pkt->peth.ts.tsr = r[20] & 1;
        pkt->peth.ts.fmt = r[20] >> 1 & 1;
        break;
    case MRC_OP_EP_REQ:
        pkt->bth.dqpn = MRC_EP_QPN;
        pkt->erth.op = r[21] & 1;
        pkt->erth.vendor = r[22];
        pkt->erth.port_status = (uint32_t)mrc_test_rand(rng);
        pkt->erth.ts.ts = (uint16_t)mrc_test_rand(rng);
        pkt->erth.ts.tsr = r[23] & 1;
        pkt->erth.ts.fmt = r[23] >> 1 & 1;
        break;
    case MRC_OP_EP_RSP:
        pkt->bth.dqpn = MRC_EP_QPN;
        pkt->eeth.op = r[24] & 1;
        pkt->eeth.entropy = (uint32_t)mrc_test_rand(rng);
        pkt->eeth.svc_time_ns = (uint32_t)mrc_test_rand(rng);
        pkt->eeth.ts = (uint16_t)mrc_test_rand(rng);
        break;
    default:
        break;
    }
    /* what decode fills in by itself */
    pkt->bth.padcnt = (uint8_t)((0u - *plen) & 3);
    pkt->ip.nxt = 17;
    pkt->ip.plen = (uint16_t)(MRC_UDP_LEN + MRC_BTH_LEN + mrc_wire_ext_len(op, pkt->bth.ts) +
                              *plen + pkt->bth.padcnt + MRC_ICRC_LEN);
    pkt->udp.len = pkt->ip.plen;
    pkt->payload = payload;
    pkt->payload_len = *plen;
}

static const uint8_t all_ops[] = {0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb,
                                  0xd1, 0xd8, 0xd9, 0xdc, 0xdd, 0xde};

START_TEST(test_mrc_wire_roundtrip_random)
{
    static uint8_t payload[8192], buf[8192 + 128];
    uint64_t rng = 0x1234567;
    for (int iter = 0; iter < 3000; iter++) {
        uint8_t op = all_ops[iter % sizeof(all_ops)];
        mrc_pkt src, got;
        size_t plen;
        random_pkt(&rng, op, &src, payload, &plen);
        size_t h = mrc_wire_encode(buf, sizeof(buf), &src, plen);
        MRC_REQUIRE(h == MRC_BASE_LEN + mrc_wire_ext_len(op, src.bth.ts), "op %02x", op);
        memcpy(buf + h, payload, plen);
        /* garbage where the pad goes: finish must zero it */
        memset(buf + h + plen, 0xee, 3);
        size_t total = mrc_wire_finish(buf, sizeof(buf), h + plen);
        MRC_REQUIRE(total == MRC_IP6_LEN + (size_t)src.ip.plen, "op %02x: %zu", op, total);
        for (unsigned k = 0; k < src.bth.padcnt; k++) {
            MRC_REQUIRE(buf[h + plen + k] == 0, "pad byte %u", k);
        }
        int rv = mrc_wire_decode(buf, total, MRC_PORT, 0, &got);
        MRC_REQUIRE(rv == 0, "op %02x: %s", op, mrc_wire_strerror(rv));
        /* the payload pointer is never NULL: control packets point past their headers */
        MRC_REQUIRE(got.payload == buf + h, "op %02x: payload pointer", op);
        MRC_REQUIRE(memcmp(got.payload, payload, plen) == 0, "payload bytes");
        for (size_t f = 0; f < NPKT_FIELDS; f++) {
            const field_desc *fd = &pkt_fields[f];
            int same = fd->kind == K_BYTES ? memcmp((uint8_t *)&got + fd->off,
                                                    (uint8_t *)&src + fd->off, fd->size) == 0
                                           : get_field(&got, fd) == get_field(&src, fd);
            MRC_REQUIRE(same, "op %02x: field %s: %llx != %llx", op, fd->name,
                        (unsigned long long)get_field(&got, fd),
                        (unsigned long long)get_field(&src, fd));
        }
    }
}
END_TEST

/* Random bytes, and random bytes behind a valid prefix: no crash, and re-encoding is stable. */
START_TEST(test_mrc_wire_random_bytes)
{
    static uint8_t buf[512], out[1024];
    uint64_t rng = 42;
    mrc_test_vec *vec = mrc_test_vec_load("write_first");
    unsigned ok = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t len = mrc_test_rand_below(&rng, 300);
        unsigned flags = mrc_test_rand_below(&rng, 4);
        mrc_pkt pkt, again;
        mrc_test_rand_fill(&rng, buf, len);
        if (iter & 1 && len >= MRC_BASE_LEN) {
            /* a valid IPv6/UDP prefix with a real opcode, so the parse goes deeper */
            memcpy(buf, vec->data, MRC_IP6_LEN + 4);
            set_lengths(buf, (unsigned)(len - MRC_IP6_LEN));
            buf[MRC_IP6_LEN + MRC_UDP_LEN] = all_ops[mrc_test_rand_below(&rng, sizeof(all_ops))];
            buf[MRC_IP6_LEN + MRC_UDP_LEN + 1] &= 0xf0;
            flags |= MRC_DECODE_NO_ICRC;
        }
        if (mrc_wire_decode(buf, len, MRC_PORT, flags, &pkt) != 0) {
            continue;
        }
        ok++;
        size_t wire_payload =
            pkt.ip.plen + MRC_IP6_LEN - hdr_len(buf) - MRC_ICRC_LEN - pkt.bth.padcnt;
        size_t h = mrc_wire_encode(out, sizeof(out), &pkt, wire_payload);
        MRC_REQUIRE(h == hdr_len(buf), "re-encode of a decoded packet");
        memset(out + h, 0, wire_payload);
        memcpy(out + h, pkt.payload, pkt.payload_len);
        size_t total = mrc_wire_finish(out, sizeof(out), h + wire_payload);
        MRC_REQUIRE(total == MRC_IP6_LEN + (size_t)pkt.ip.plen, "finish");
        MRC_REQUIRE(mrc_wire_decode(out, total, MRC_PORT, 0, &again) == 0, "decode again");
        again.payload = pkt.payload;
        again.payload_len = pkt.payload_len;
        again.trimmed = pkt.trimmed;
        again.udp.csum = pkt.udp.csum;
        MRC_REQUIRE(memcmp(&again, &pkt, sizeof(pkt)) == 0, "decode(encode(decode(x)))");
    }
    /* the structured half decodes often enough for the check above to mean something */
    ck_assert_uint_gt(ok, 1000);
    mrc_test_vec_free(vec);
}
END_TEST

START_TEST(test_mrc_wire_trimmed)
{
    static uint8_t buf[MRC_TEST_VEC_MAX];
    mrc_test_vec *vec = mrc_test_vec_load("write_trimmed");
    mrc_pkt pkt;
    size_t hlen = hdr_len(vec->data);

    ck_assert_int_eq(decode_vec(vec->data, vec->len, 0, &pkt), MRC_WIRE_ESHORT);
    ck_assert_int_eq(decode_vec(vec->data, vec->len, MRC_DECODE_NO_ICRC, &pkt), MRC_WIRE_ESHORT);
    ck_assert_int_eq(decode_vec(vec->data, vec->len, MRC_DECODE_TRIMMED, &pkt), 0);
    ck_assert(pkt.trimmed);
    ck_assert_uint_eq(pkt.payload_len, 6);
    ck_assert_ptr_eq(pkt.payload, vec->data + hlen);
    ck_assert_uint_eq(pkt.ip.plen, 8 + 12 + 20 + 4096 + 4);
    for (size_t len = hlen; len <= vec->len; len++) {
        ck_assert_int_eq(decode_vec(vec->data, len, MRC_DECODE_TRIMMED, &pkt), 0);
        ck_assert_uint_eq(pkt.payload_len, len - hlen);
    }
    for (size_t len = 0; len < hlen; len++) {
        ck_assert_int_eq(decode_vec(vec->data, len, MRC_DECODE_TRIMMED | MRC_DECODE_NO_ICRC, &pkt),
                         MRC_WIRE_ESHORT);
    }
    /* the lengths of a trimmed packet are still checked */
    memcpy(buf, vec->data, vec->len);
    put16(buf + MRC_IP6_LEN + 4, 100);
    ck_assert_int_eq(decode_vec(buf, vec->len, MRC_DECODE_TRIMMED, &pkt), MRC_WIRE_EIP);
    memcpy(buf, vec->data, vec->len);
    set_lengths(buf, 8 + 12 + 20 + 4095 + 4);
    ck_assert_int_eq(decode_vec(buf, vec->len, MRC_DECODE_TRIMMED, &pkt), MRC_WIRE_EPAD);
    memcpy(buf, vec->data, vec->len);
    set_lengths(buf, 8 + 12 + 19);
    ck_assert_int_eq(decode_vec(buf, vec->len, MRC_DECODE_TRIMMED, &pkt), MRC_WIRE_EIP);
    mrc_test_vec_free(vec);

    /* a complete packet decoded with MRC_DECODE_TRIMMED is not trimmed, and its ICRC counts */
    vec = mrc_test_vec_load("write_last");
    ck_assert_int_eq(decode_vec(vec->data, vec->len, MRC_DECODE_TRIMMED, &pkt), 0);
    ck_assert(!pkt.trimmed);
    ck_assert_uint_eq(pkt.payload_len, 5);
    memcpy(buf, vec->data, vec->len);
    buf[vec->len - 1] ^= 1;
    ck_assert_int_eq(decode_vec(buf, vec->len, MRC_DECODE_TRIMMED, &pkt), MRC_WIRE_EICRC);
    ck_assert_int_eq(decode_vec(buf, vec->len, MRC_DECODE_TRIMMED | MRC_DECODE_NO_ICRC, &pkt), 0);
    /* cut inside the pad or the ICRC: the payload is whole, never more */
    for (size_t cut = 1; cut <= 7; cut++) {
        ck_assert_int_eq(decode_vec(vec->data, vec->len - cut, MRC_DECODE_TRIMMED, &pkt), 0);
        ck_assert(pkt.trimmed);
        ck_assert_uint_eq(pkt.payload_len, 5);
    }
    mrc_test_vec_free(vec);
}
END_TEST

START_TEST(test_mrc_wire_encode_limits)
{
    static uint8_t buf[70000], payload[70000];
    uint64_t rng = 7;
    for (size_t i = 0; i < sizeof(all_ops); i++) {
        mrc_pkt pkt;
        size_t plen;
        random_pkt(&rng, all_ops[i], &pkt, payload, &plen);
        size_t hlen = MRC_BASE_LEN + mrc_wire_ext_len(all_ops[i], pkt.bth.ts);
        for (size_t destlen = 0; destlen < hlen; destlen++) {
            memset(buf, 0xcc, hlen + 8);
            ck_assert_uint_eq(mrc_wire_encode(buf, destlen, &pkt, plen), 0);
            for (size_t k = destlen; k < hlen + 8; k++) {
                ck_assert_uint_eq(buf[k], 0xcc);
            }
        }
        ck_assert_uint_eq(mrc_wire_encode(buf, hlen, &pkt, plen), hlen);
        if (!(pkt.has & MRC_HAS_METH)) {
            /* control packets carry no payload */
            ck_assert_uint_eq(mrc_wire_encode(buf, sizeof(buf), &pkt, 4), 0);
            continue;
        }
        /*
         * The largest payload the 16-bit IPv6 length can describe once padded (headers are
         * whole words, so the length is at most 65532), and one more byte.
         */
        size_t max = (65535 - (hlen - MRC_IP6_LEN) - MRC_ICRC_LEN) & ~(size_t)3;
        ck_assert_uint_eq(mrc_wire_encode(buf, sizeof(buf), &pkt, max), hlen);
        memset(buf + hlen, 0x5a, max);
        ck_assert_uint_eq(mrc_wire_finish(buf, sizeof(buf), hlen + max), MRC_IP6_LEN + 65532);
        mrc_pkt got;
        ck_assert_int_eq(mrc_wire_decode(buf, MRC_IP6_LEN + 65532, MRC_PORT, 0, &got), 0);
        ck_assert_uint_eq(got.payload_len, max);
        ck_assert_uint_eq(mrc_wire_encode(buf, sizeof(buf), &pkt, max + 1), 0);
        ck_assert_uint_eq(mrc_wire_encode(buf, sizeof(buf), &pkt, SIZE_MAX), 0);
        ck_assert_uint_eq(mrc_wire_encode(buf, sizeof(buf), &pkt, SIZE_MAX - 2), 0);
    }
    /* unknown opcodes write nothing */
    for (unsigned op = 0; op < 256; op++) {
        size_t ext;
        if (expected_headers(op, false, &ext)) {
            continue;
        }
        mrc_pkt pkt;
        memset(&pkt, 0, sizeof(pkt));
        pkt.bth.opcode = (uint8_t)op;
        MRC_REQUIRE(mrc_wire_encode(buf, sizeof(buf), &pkt, 0) == 0, "opcode %02x", op);
    }
    /* finish: room for pad and ICRC, and a length that matches the headers */
    mrc_pkt pkt;
    size_t plen;
    random_pkt(&rng, MRC_OP_WRITE_ONLY, &pkt, payload, &plen);
    size_t h = mrc_wire_encode(buf, sizeof(buf), &pkt, 5);
    ck_assert_uint_gt(h, 0);
    size_t total = h + 5 + 3 + MRC_ICRC_LEN;
    for (size_t destlen = 0; destlen < total; destlen++) {
        ck_assert_uint_eq(mrc_wire_finish(buf, destlen, h + 5), 0);
    }
    ck_assert_uint_eq(mrc_wire_finish(buf, sizeof(buf), h + 4), 0);
    ck_assert_uint_eq(mrc_wire_finish(buf, sizeof(buf), h + 6), 0);
    ck_assert_uint_eq(mrc_wire_finish(buf, sizeof(buf), 10), 0);
    ck_assert_uint_eq(mrc_wire_finish(buf, total, h + 5), total);
}
END_TEST

START_TEST(test_mrc_wire_outer)
{
    static const uint8_t src[16] = {0xfd, 0xbb, 0xbb, 0, 0, 1, [15] = 1};
    static const uint8_t dst[16] = {0xfc, 0xbb, 0xbb, 0, 0x08, 0, 0x10, 0, [15] = 0xe0};
    uint8_t buf[MRC_IP6_LEN + 200];
    mrc_ip6 ip;

    mrc_wire_outer(buf, src, dst, 200, 0xb9, 0xfffff, 1);
    ck_assert_uint_eq(buf[0], 0x6b);
    ck_assert_uint_eq(buf[1], 0x9f);
    ck_assert_uint_eq(buf[6], 41);
    ck_assert_int_eq(mrc_wire_outer_decode(buf, sizeof(buf), &ip), 0);
    ck_assert_uint_eq(ip.tc, 0xb9);
    ck_assert_uint_eq(ip.flowlabel, 0xfffff);
    ck_assert_uint_eq(ip.plen, 200);
    ck_assert_uint_eq(ip.nxt, 41);
    ck_assert_uint_eq(ip.hlim, 1);
    ck_assert_mem_eq(ip.src, src, 16);
    ck_assert_mem_eq(ip.dst, dst, 16);
    /* shorter than the length says (trimmed): fine; longer: not */
    ck_assert_int_eq(mrc_wire_outer_decode(buf, MRC_IP6_LEN + 10, &ip), 0);
    ck_assert_int_eq(mrc_wire_outer_decode(buf, MRC_IP6_LEN, &ip), 0);
    mrc_wire_outer(buf, src, dst, 10, 0, 0, 64);
    ck_assert_int_eq(mrc_wire_outer_decode(buf, MRC_IP6_LEN + 11, &ip), MRC_WIRE_EIP);
    for (size_t len = 0; len < MRC_IP6_LEN; len++) {
        ck_assert_int_eq(mrc_wire_outer_decode(buf, len, &ip), MRC_WIRE_EIP);
    }
    for (unsigned nh = 0; nh < 256; nh++) {
        buf[6] = (uint8_t)nh;
        ck_assert_int_eq(mrc_wire_outer_decode(buf, MRC_IP6_LEN, &ip), nh == 41 ? 0 : MRC_WIRE_EIP);
    }
    buf[6] = 41;
    buf[0] = 0x4b;
    ck_assert_int_eq(mrc_wire_outer_decode(buf, MRC_IP6_LEN, &ip), MRC_WIRE_EIP);
}
END_TEST

START_TEST(test_mrc_wire_strerror_all)
{
    const char *seen[8];
    for (int err = 0; err >= MRC_WIRE_EFIELD; err--) {
        const char *s = mrc_wire_strerror(err);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_gt(strlen(s), 0);
        for (int k = 0; k < -err; k++) {
            ck_assert_str_ne(s, seen[k]);
        }
        seen[-err] = s;
    }
    ck_assert_str_eq(mrc_wire_strerror(-8), mrc_wire_strerror(1));
    ck_assert_str_eq(mrc_wire_strerror(-1000), mrc_wire_strerror(1));
    ck_assert_str_ne(mrc_wire_strerror(-8), mrc_wire_strerror(0));
}
END_TEST

START_TEST(test_mrc_wire_psn)
{
    ck_assert_int_eq(mrc_psn_diff(5, 3), 2);
    ck_assert_int_eq(mrc_psn_diff(3, 5), -2);
    ck_assert_int_eq(mrc_psn_diff(0, 0xffffff), 1);
    ck_assert_int_eq(mrc_psn_diff(0xffffff, 0), -1);
    ck_assert_int_eq(mrc_psn_diff(0x7fffff, 0), 0x7fffff);
    ck_assert_int_eq(mrc_psn_diff(0x800000, 0), -0x800000);
    ck_assert_int_eq(mrc_psn_diff(0, 0x800000), -0x800000);
    ck_assert_int_eq(mrc_psn_diff(0x000010, 0xfffff0), 0x20);
    ck_assert_uint_eq(mrc_psn_add(0xffffff, 1), 0);
    ck_assert_uint_eq(mrc_psn_add(0, -1), 0xffffff);
    ck_assert_uint_eq(mrc_psn_add(0xfffff0, 0x20), 0x10);
    ck_assert_uint_eq(mrc_psn_add(0x10, -0x20), 0xfffff0);
    ck_assert_uint_eq(mrc_psn_add(0x123456, 0), 0x123456);
    uint64_t rng = 99;
    for (int i = 0; i < 100000; i++) {
        uint32_t a = (uint32_t)mrc_test_rand(&rng) & 0xffffff;
        uint32_t b = (uint32_t)mrc_test_rand(&rng) & 0xffffff;
        int32_t d = mrc_psn_diff(a, b);
        MRC_REQUIRE(d >= -0x800000 && d < 0x800000, "range");
        MRC_REQUIRE(mrc_psn_add(b, d) == a, "b + (a - b) == a");
        MRC_REQUIRE(d == -0x800000 || mrc_psn_diff(b, a) == -d, "antisymmetric");
        int32_t small = (int32_t)mrc_test_rand_below(&rng, 0x1000000) - 0x800000;
        MRC_REQUIRE(mrc_psn_diff(mrc_psn_add(a, small), a) == small, "add then diff");
    }
}
END_TEST

/* Not a pass/fail check: the per-packet cost the engine's budget is counted against. */
START_TEST(test_mrc_wire_speed)
{
    static uint8_t payload[4096], buf[4096 + 128];
    uint64_t rng = 3;
    mrc_pkt pkt, got;
    size_t plen;
    random_pkt(&rng, MRC_OP_WRITE_MIDDLE, &pkt, payload, &plen);
    int iters = 20000;
    double t0 = mrc_test_now();
    size_t total = 0;
    for (int i = 0; i < iters; i++) {
        size_t h = mrc_wire_encode(buf, sizeof(buf), &pkt, sizeof(payload));
        memcpy(buf + h, payload, sizeof(payload));
        total = mrc_wire_finish(buf, sizeof(buf), h + sizeof(payload));
    }
    double t1 = mrc_test_now();
    for (int i = 0; i < iters; i++) {
        MRC_REQUIRE(mrc_wire_decode(buf, total, MRC_PORT, 0, &got) == 0, "decode");
    }
    double t2 = mrc_test_now();
    for (int i = 0; i < iters; i++) {
        MRC_REQUIRE(mrc_wire_decode(buf, total, MRC_PORT, MRC_DECODE_NO_ICRC, &got) == 0, "dec");
    }
    double t3 = mrc_test_now();
    random_pkt(&rng, MRC_OP_SACK, &pkt, payload, &plen);
    size_t h = mrc_wire_encode(buf, sizeof(buf), &pkt, 0);
    size_t sack = mrc_wire_finish(buf, sizeof(buf), h);
    double t4 = mrc_test_now();
    for (int i = 0; i < iters; i++) {
        MRC_REQUIRE(mrc_wire_decode(buf, sack, MRC_PORT, 0, &got) == 0, "sack");
    }
    double t5 = mrc_test_now();
    fprintf(stderr,
            "wire, 4 KiB write: encode+copy+finish %.0f ns, decode %.0f ns, decode without "
            "ICRC %.0f ns; SACK decode %.0f ns\n",
            (t1 - t0) * 1e9 / iters, (t2 - t1) * 1e9 / iters, (t3 - t2) * 1e9 / iters,
            (t5 - t4) * 1e9 / iters);
}
END_TEST

Suite *mrc_wire_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("vectors");
    tcase_add_test(tc, test_mrc_wire_vectors_present);
    tcase_add_test(tc, test_mrc_wire_vectors_decode);
    tcase_add_test(tc, test_mrc_wire_vectors_encode);
    tcase_add_test(tc, test_mrc_wire_vectors_reencode);
    tcase_add_test(tc, test_mrc_wire_headers_table);
    suite_add_tcase(s, tc);

    tc = tcase_create("faults");
    tcase_add_test(tc, test_mrc_wire_truncated);
    tcase_add_test(tc, test_mrc_wire_short_lengths);
    tcase_add_test(tc, test_mrc_wire_longer);
    tcase_add_test(tc, test_mrc_wire_faults);
    tcase_add_test(tc, test_mrc_wire_bad_fields);
    tcase_add_test(tc, test_mrc_wire_ep_qpn);
    tcase_add_test(tc, test_mrc_wire_reserved);
    tcase_add_test(tc, test_mrc_wire_bitflips);
    tcase_add_test(tc, test_mrc_wire_random_bytes);
    tcase_add_test(tc, test_mrc_wire_trimmed);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);

    tc = tcase_create("codec");
    tcase_add_test(tc, test_mrc_wire_roundtrip_random);
    tcase_add_test(tc, test_mrc_wire_encode_limits);
    tcase_add_test(tc, test_mrc_wire_outer);
    tcase_add_test(tc, test_mrc_wire_strerror_all);
    tcase_add_test(tc, test_mrc_wire_psn);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);

    tc = tcase_create("speed");
    tcase_add_test(tc, test_mrc_wire_speed);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
