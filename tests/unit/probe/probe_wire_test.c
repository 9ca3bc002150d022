/* SPDX-License-Identifier: MIT */
/* The probe's wire format: a vector of the body's bytes, the round trip, the UDP checksum, a
 * trimmed probe, garbage; and the uSID paths of each kind on the lab fabric. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <string.h>

#include "probe_wire.h"

static const uint8_t SRC[16] = {0xfd, 0xbb, 0xbb, 0, [15] = 1};
static const uint8_t DST[16] = {0xfd, 0xbb, 0xbb, 0, 0, 0, 0, 2, 0, 1, [15] = 1};

static probe_hdr sample(void)
{
    probe_hdr h = {.epoch = 7,
                   .window = 0x0102030405060708ull,
                   .sent_ns = 0x1112131415161718ull,
                   .spec = {.kind = PROBE_CROSS,
                            .plane = 1,
                            .t1 = 0x0203,
                            .src_t0 = 0x0a0b,
                            .src_port = 0x0c0d,
                            .index = 0x00abcdef}};
    return h;
}

START_TEST(test_probe_wire_vector)
{
    static const uint8_t body[PROBE_BODY_LEN] = {
        'M',  'R',  'C',  'P',  1,    PROBE_CROSS, 0x02, 0x03, /* magic, version, kind, T1 */
        0,    0,    0,    7,                                   /* epoch */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06,        0x07, 0x08, /* window */
        1,    0,    0x0a, 0x0b, 0x0c, 0x0d,        0,    0,    /* plane, T0, port */
        0,    0xab, 0xcd, 0xef,                                /* index */
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16,        0x17, 0x18, /* sent */
    };
    uint8_t pkt[PROBE_PKT_LEN];
    probe_hdr h = sample();
    ck_assert_uint_eq(probe_wire_encode(pkt, SRC, DST, 0x10, PROBE_DEFAULT_PORT, &h),
                      PROBE_PKT_LEN);
    ck_assert_uint_eq(pkt[0], 0x61); /* version 6, traffic class 0x10 */
    ck_assert_uint_eq(pkt[1], 0x00);
    ck_assert_uint_eq(pkt[4] << 8 | pkt[5], PROBE_UDP_LEN + PROBE_BODY_LEN);
    ck_assert_uint_eq(pkt[6], 17);
    ck_assert_mem_eq(pkt + 8, SRC, 16);
    ck_assert_mem_eq(pkt + 24, DST, 16);
    ck_assert_uint_eq(pkt[40] << 8 | pkt[41], 0xc000 | (0xabcdef & 0x3fff));
    ck_assert_uint_eq(pkt[42] << 8 | pkt[43], PROBE_DEFAULT_PORT);
    ck_assert_mem_eq(pkt + 48, body, sizeof(body));
    /* the checksum as RFC 8200 sums it (pseudo-header: addresses, UDP length, next header;
     * then the UDP header and body): the one's complement sum over all is 0xffff */
    uint32_t sum = 17 + PROBE_UDP_LEN + PROBE_BODY_LEN;
    for (size_t i = 8; i < PROBE_PKT_LEN; i += 2) {
        sum += (uint32_t)(pkt[i] << 8 | pkt[i + 1]);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ck_assert_uint_eq(sum, 0xffff);
}
END_TEST

START_TEST(test_probe_wire_roundtrip)
{
    uint8_t pkt[PROBE_PKT_LEN];
    probe_hdr h = sample(), g;
    size_t len = probe_wire_encode(pkt, SRC, DST, 0x10, PROBE_DEFAULT_PORT, &h);
    ck_assert_int_eq(probe_wire_decode(pkt, len, PROBE_DEFAULT_PORT, &g), 0);
    ck_assert_uint_eq(g.epoch, h.epoch);
    ck_assert_uint_eq(g.window, h.window);
    ck_assert_uint_eq(g.sent_ns, h.sent_ns);
    ck_assert_uint_eq(g.spec.kind, h.spec.kind);
    ck_assert_uint_eq(g.spec.plane, h.spec.plane);
    ck_assert_uint_eq(g.spec.t1, h.spec.t1);
    ck_assert_uint_eq(g.spec.src_t0, h.spec.src_t0);
    ck_assert_uint_eq(g.spec.src_port, h.spec.src_port);
    ck_assert_uint_eq(g.spec.index, h.spec.index);
    /* another port's, a flipped bit, a body that is no probe: refused */
    ck_assert_int_eq(probe_wire_decode(pkt, len, 4791, &g), -EPROTO);
    pkt[60] ^= 0x40;
    ck_assert_int_eq(probe_wire_decode(pkt, len, PROBE_DEFAULT_PORT, &g), -EPROTO);
    pkt[60] ^= 0x40;
    pkt[48] = 'X';
    ck_assert_int_eq(probe_wire_decode(pkt, len, PROBE_DEFAULT_PORT, &g), -EPROTO);
    ck_assert_int_eq(probe_wire_decode(pkt, 20, PROBE_DEFAULT_PORT, &g), -EMSGSIZE);
}
END_TEST

/* A trimmed probe: its identity survives in the first 32 bytes of the body; cut shorter it
 * is still a probe, with nothing to match. */
START_TEST(test_probe_wire_trimmed)
{
    uint8_t pkt[PROBE_PKT_LEN];
    probe_hdr h = sample(), g;
    probe_wire_encode(pkt, SRC, DST, 0x10, PROBE_DEFAULT_PORT, &h);
    ck_assert_int_eq(
        probe_wire_decode(pkt, PROBE_IP6_LEN + PROBE_UDP_LEN + 32, PROBE_DEFAULT_PORT, &g), 1);
    ck_assert_uint_eq(g.spec.index, h.spec.index);
    ck_assert_uint_eq(g.window, h.window);
    ck_assert_uint_eq(g.sent_ns, 0);
    ck_assert_int_eq(
        probe_wire_decode(pkt, PROBE_IP6_LEN + PROBE_UDP_LEN + 4, PROBE_DEFAULT_PORT, &g), 1);
    ck_assert_uint_eq(g.spec.index, 0);
}
END_TEST

static void path_is(const fab_topo *topo, probe_spec s, const char *want)
{
    uint8_t a[16];
    char txt[INET6_ADDRSTRLEN];
    ck_assert_int_eq(probe_wire_path(topo, &s, a), 0);
    inet_ntop(AF_INET6, a, txt, sizeof(txt));
    ck_assert_str_eq(txt, want);
}

/* The lab's plane 0: T0 a is uSID 0x0800 + a, T1 j 0x1000 + j, down-port k 0x1800 + k (the
 * same path as the agent's EVs from h0 to h5 over p0-t1-0). */
START_TEST(test_probe_wire_paths)
{
    fab_topo *topo;
    fab_error err;
    ck_assert_int_eq(fab_topo_load_file(PROBE_TEST_ROOT "/deploy/topologies/lab.json", &topo, &err),
                     0);
    probe_spec s = {.plane = 0, .src_t0 = 0, .src_port = 0, .dst_t0 = 0, .dst_port = 0};
    s.kind = PROBE_T0_BOUNCE;
    path_is(topo, s, "fcbb:bb00:800:1800::");
    s.kind = PROBE_T1_BOUNCE;
    s.t1 = 1;
    path_is(topo, s, "fcbb:bb00:800:1001:800:1800::");
    s.kind = PROBE_INTRA;
    s.dst_port = 1;
    path_is(topo, s, "fcbb:bb00:800:1801::");
    s.kind = PROBE_CROSS;
    s.t1 = 0;
    s.dst_t0 = 2;
    path_is(topo, s, "fcbb:bb00:800:1000:802:1801::");
    s.dst_t0 = 9; /* no such T0 */
    uint8_t a[16];
    ck_assert_int_eq(probe_wire_path(topo, &s, a), -ENOENT);
    fab_topo_free(topo);
}
END_TEST

Suite *probe_wire_suite(void)
{
    Suite *s = suite_create("probe.wire");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, test_probe_wire_vector);
    tcase_add_test(tc, test_probe_wire_roundtrip);
    tcase_add_test(tc, test_probe_wire_trimmed);
    tcase_add_test(tc, test_probe_wire_paths);
    suite_add_tcase(s, tc);
    return s;
}
