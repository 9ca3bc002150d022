/* SPDX-License-Identifier: MIT */
/* Unit tests of topology loading and validation: both forms, expansion, every rejected input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_test.h"

/*
 * Compares two loaded fabrics in everything the API shows: the plan, every switch with its
 * ports, names and peers, every host port and every route.
 */
static void compare_fabrics(const fab_topo *x, const fab_topo *y)
{
    ck_assert_str_eq(fab_topo_name(x), fab_topo_name(y));
    const fab_plan *px = fab_topo_plan(x), *py = fab_topo_plan(y);
    ck_assert_mem_eq(px->block, py->block, 16);
    ck_assert_mem_eq(px->host_block, py->host_block, 16);
    ck_assert_uint_eq(px->plane_bits, py->plane_bits);
    ck_assert_uint_eq(px->kind_bits, py->kind_bits);
    ck_assert_uint_eq(px->index_bits, py->index_bits);
    ck_assert_uint_eq(px->kind_t0, py->kind_t0);
    ck_assert_uint_eq(px->kind_t1, py->kind_t1);
    ck_assert_uint_eq(px->kind_dl, py->kind_dl);
    ck_assert_uint_eq(px->udp_port, py->udp_port);
    ck_assert_uint_eq(px->route_table, py->route_table);
    ck_assert_uint_eq(px->route_proto, py->route_proto);
    ck_assert_uint_eq(fab_topo_planes(x), fab_topo_planes(y));
    ck_assert_uint_eq(fab_topo_nswitches(x), fab_topo_nswitches(y));
    ck_assert_uint_eq(fab_topo_nhosts(x), fab_topo_nhosts(y));
    ck_assert_uint_eq(fab_topo_ncables(x), fab_topo_ncables(y));
    ck_assert_uint_eq(fab_topo_nmissing(x), fab_topo_nmissing(y));
    for (unsigned p = 0; p < fab_topo_planes(x); p++) {
        ck_assert_uint_eq(fab_topo_nt0(x, p), fab_topo_nt0(y, p));
        ck_assert_uint_eq(fab_topo_nt1(x, p), fab_topo_nt1(y, p));
    }
    for (uint32_t i = 0; i < fab_topo_nswitches(x); i++) {
        fab_switch a, b;
        ck_assert_int_eq(fab_switch_get(x, i, &a), 0);
        ck_assert_int_eq(fab_switch_get(y, i, &b), 0);
        ck_assert_str_eq(a.name, b.name);
        ck_assert_str_eq(a.sid_device, b.sid_device);
        ck_assert_uint_eq(a.plane, b.plane);
        ck_assert_uint_eq(a.tier, b.tier);
        ck_assert_uint_eq(a.index, b.index);
        ck_assert_uint_eq(a.nports, b.nports);
        ck_assert_uint_eq(a.usid, b.usid);
        ck_assert_uint_eq(fab_switch_find(y, a.name), i);
        ck_assert_uint_eq(fab_switch_at(y, a.plane, a.tier, a.index), i);
        for (unsigned port = 0; port < a.nports; port++) {
            char na[FAB_IFNAME_MAX], nb[FAB_IFNAME_MAX];
            fab_peer qa, qb;
            ck_assert_int_eq(fab_switch_ifname(x, i, port, na, sizeof(na)), 0);
            ck_assert_int_eq(fab_switch_ifname(y, i, port, nb, sizeof(nb)), 0);
            ck_assert_str_eq(na, nb);
            ck_assert_int_eq(fab_switch_peer(x, i, port, &qa), 0);
            ck_assert_int_eq(fab_switch_peer(y, i, port, &qb), 0);
            ck_assert_msg(qa.kind == qb.kind, "%s port %u: peer kind %d vs %d", a.name, port,
                          qa.kind, qb.kind);
            if (qa.kind != FAB_PEER_NONE) {
                ck_assert_uint_eq(qa.id, qb.id);
                ck_assert_uint_eq(qa.port, qb.port);
            }
        }
    }
    for (uint32_t h = 0; h < fab_topo_nhosts(x); h++) {
        ck_assert_str_eq(fab_host_name(x, h), fab_host_name(y, h));
        ck_assert_uint_eq(fab_host_find(y, fab_host_name(x, h)), h);
        for (unsigned p = 0; p < fab_topo_planes(x); p++) {
            char na[FAB_IFNAME_MAX], nb[FAB_IFNAME_MAX];
            ck_assert_int_eq(fab_host_ifname(x, h, p, na, sizeof(na)), 0);
            ck_assert_int_eq(fab_host_ifname(y, h, p, nb, sizeof(nb)), 0);
            ck_assert_str_eq(na, nb);
            uint32_t swa = 0, swb = 0;
            unsigned xa = 0, xb = 0;
            int ra = fab_host_attach(x, h, p, &swa, &xa);
            int rb = fab_host_attach(y, h, p, &swb, &xb);
            ck_assert_int_eq(ra, rb);
            if (ra == 0) {
                ck_assert_uint_eq(swa, swb);
                ck_assert_uint_eq(xa, xb);
            }
        }
    }
    fab_tables *tx = fab_test_tables(x), *ty = fab_test_tables(y);
    ck_assert_uint_eq(fab_tables_nroutes(tx), fab_tables_nroutes(ty));
    for (uint32_t i = 0; i < fab_topo_nswitches(x); i++) {
        size_t na, nb;
        const fab_route *ra = fab_tables_routes(tx, i, &na);
        const fab_route *rb = fab_tables_routes(ty, i, &nb);
        ck_assert_uint_eq(na, nb);
        for (size_t k = 0; k < na; k++) {
            ck_assert_uint_eq(ra[k].usid, rb[k].usid);
            ck_assert_uint_eq(ra[k].action, rb[k].action);
            ck_assert_uint_eq(ra[k].peer_kind, rb[k].peer_kind);
            ck_assert_uint_eq(ra[k].port, rb[k].port);
            ck_assert_uint_eq(ra[k].peer_port, rb[k].peer_port);
            ck_assert_uint_eq(ra[k].peer, rb[k].peer);
        }
    }
    fab_tables_free(tx);
    fab_tables_free(ty);
}

/* Loads |path|, expands it, loads the expansion and compares; the expansion is a fixed point. */
static void check_round_trip(const char *path)
{
    fab_topo *x = fab_test_load_file(path);
    char *text = fab_test_expand(x);
    ck_assert_ptr_nonnull(strstr(text, "\"form\": \"explicit\""));
    fab_topo *y = fab_test_load_json(text);
    compare_fabrics(x, y);
    char *again = fab_test_expand(y);
    ck_assert_str_eq(text, again);
    free(again);
    free(text);
    fab_topo_free(y);
    fab_topo_free(x);
}

START_TEST(test_fab_load_lab_parametric)
{
    fab_topo *t = fab_test_load_file(FAB_TEST_LAB);
    /* radix 4, 1:1 => 2 down-ports and 2 uplinks per T0; 8 hosts => 4 T0 per plane */
    ck_assert_str_eq(fab_topo_name(t), "lab");
    ck_assert_uint_eq(fab_topo_planes(t), 2);
    ck_assert_uint_eq(fab_topo_nswitches(t), 12);
    ck_assert_uint_eq(fab_topo_nhosts(t), 8);
    ck_assert_uint_eq(fab_topo_ncables(t), 2 * (8 + 4 * 2));
    ck_assert_uint_eq(fab_topo_nmissing(t), 0);
    for (unsigned p = 0; p < 2; p++) {
        ck_assert_uint_eq(fab_topo_nt0(t, p), 4);
        ck_assert_uint_eq(fab_topo_nt1(t, p), 2);
    }
    ck_assert_uint_eq(fab_topo_nt0(t, 2), 0);
    fab_switch s;
    uint32_t sw = fab_test_switch(t, "p1-t1-1");
    ck_assert_int_eq(fab_switch_get(t, sw, &s), 0);
    ck_assert_uint_eq(s.plane, 1);
    ck_assert_uint_eq(s.tier, FAB_TIER_T1);
    ck_assert_uint_eq(s.index, 1);
    ck_assert_uint_eq(s.nports, 4);
    ck_assert_uint_eq(s.usid, 0x3001);
    ck_assert_str_eq(s.sid_device, "sr0");
    ck_assert_int_eq(fab_switch_get(t, 12, &s), FAB_ERR_NOTFOUND);
    ck_assert_uint_eq(fab_switch_find(t, "h0"), FAB_NONE);
    ck_assert_uint_eq(fab_host_find(t, "p0-t0-0"), FAB_NONE);
    ck_assert_ptr_null(fab_host_name(t, 8));
    /* host n is on T0 n / 2, port n % 2, in every plane; uplink j is port 2 + j */
    for (uint32_t h = 0; h < 8; h++) {
        for (unsigned p = 0; p < 2; p++) {
            uint32_t t0;
            unsigned x;
            ck_assert_int_eq(fab_host_attach(t, h, p, &t0, &x), 0);
            ck_assert_uint_eq(t0, fab_switch_at(t, p, FAB_TIER_T0, h / 2));
            ck_assert_uint_eq(x, h % 2);
        }
    }
    fab_peer peer;
    ck_assert_int_eq(fab_switch_peer(t, fab_test_switch(t, "p0-t0-3"), 3, &peer), 0);
    ck_assert_int_eq(peer.kind, FAB_PEER_SWITCH);
    ck_assert_uint_eq(peer.id, fab_test_switch(t, "p0-t1-1"));
    ck_assert_uint_eq(peer.port, 3);
    ck_assert_int_eq(fab_switch_peer(t, sw, 4, &peer), FAB_ERR_NOTFOUND);
    char name[FAB_IFNAME_MAX];
    ck_assert_int_eq(fab_switch_ifname(t, sw, 3, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "eth3");
    ck_assert_int_eq(fab_switch_ifname(t, sw, 3, name, 4), FAB_ERR_NOSPACE);
    ck_assert_int_eq(fab_switch_ifname(t, sw, 4, name, sizeof(name)), FAB_ERR_NOTFOUND);
    fab_topo_free(t);
    fab_topo_free(NULL);
}
END_TEST

START_TEST(test_fab_load_lab_forms_agree)
{
    check_round_trip(FAB_TEST_LAB);
}
END_TEST

START_TEST(test_fab_load_overrides_applied)
{
    fab_topo *t = fab_test_load_file(FAB_TEST_SMALL);
    /* radix 6 at 2:1 => 4 down-ports, 2 uplinks; 10 hosts => 3 T0 per plane */
    ck_assert_uint_eq(fab_topo_nswitches(t), 10);
    ck_assert_uint_eq(fab_topo_nmissing(t), 3);
    ck_assert_uint_eq(fab_topo_ncables(t), 2 * (10 + 3 * 2) - 3);
    fab_switch s;
    ck_assert_int_eq(fab_switch_get(t, fab_test_switch(t, "p0-t1-1"), &s), 0);
    ck_assert_uint_eq(s.usid, 0x1400);
    ck_assert_int_eq(fab_switch_get(t, fab_test_switch(t, "p1-t1-1"), &s), 0);
    ck_assert_uint_eq(s.usid, 0x5123);
    ck_assert_int_eq(fab_switch_get(t, fab_test_switch(t, "p0-t0-2"), &s), 0);
    ck_assert_uint_eq(s.usid, 0x0f00);
    ck_assert_int_eq(fab_switch_get(t, fab_test_switch(t, "p0-t1-0"), &s), 0);
    ck_assert_uint_eq(s.usid, 0x1000);
    ck_assert_str_eq(s.sid_device, "srx");
    ck_assert_int_eq(fab_switch_get(t, fab_test_switch(t, "p1-t1-0"), &s), 0);
    ck_assert_str_eq(s.sid_device, "sr0");
    char name[FAB_IFNAME_MAX];
    uint32_t sw = fab_test_switch(t, "p0-t0-0");
    ck_assert_int_eq(fab_switch_ifname(t, sw, 3, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "Ethernet3");
    ck_assert_int_eq(fab_switch_ifname(t, sw, 4, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "uplink-a");
    ck_assert_int_eq(fab_switch_ifname(t, sw, 5, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "Ethernet5");
    ck_assert_int_eq(fab_switch_ifname(t, fab_test_switch(t, "p0-t0-1"), 4, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "swp4");
    ck_assert_int_eq(fab_host_ifname(t, 3, 1, name, sizeof(name)), 0);
    ck_assert_str_eq(name, "nic1");
    /* the missing cables: both ends are free, and the host port has no T0 */
    fab_peer peer;
    ck_assert_int_eq(fab_switch_peer(t, fab_test_switch(t, "p0-t0-1"), 4, &peer), 0);
    ck_assert_int_eq(peer.kind, FAB_PEER_NONE);
    ck_assert_int_eq(fab_switch_peer(t, fab_test_switch(t, "p0-t1-0"), 1, &peer), 0);
    ck_assert_int_eq(peer.kind, FAB_PEER_NONE);
    uint32_t t0;
    unsigned x;
    ck_assert_int_eq(fab_host_attach(t, fab_host_find(t, "h5"), 1, &t0, &x), FAB_ERR_NOTFOUND);
    ck_assert_int_eq(fab_host_attach(t, fab_host_find(t, "h5"), 0, &t0, &x), 0);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_fab_load_overrides_forms_agree)
{
    check_round_trip(FAB_TEST_SMALL);
}
END_TEST

START_TEST(test_fab_load_full_fabric)
{
    double t0 = fab_test_now();
    fab_topo *t = fab_test_load_file(FAB_TEST_FULL);
    double dt = fab_test_now() - t0;
    ck_assert_uint_eq(fab_topo_planes(t), 8);
    ck_assert_uint_eq(fab_topo_nhosts(t), 131072);
    /* 512 T0 + 256 T1 per plane, every T0 wired once to every T1 */
    ck_assert_uint_eq(fab_topo_nswitches(t), 8 * (512 + 256));
    ck_assert_uint_eq(fab_topo_ncables(t), 8ull * (131072 + 512 * 256));
    for (unsigned p = 0; p < 8; p++) {
        ck_assert_uint_eq(fab_topo_nt0(t, p), 512);
        ck_assert_uint_eq(fab_topo_nt1(t, p), 256);
    }
    fab_switch s;
    ck_assert_int_eq(fab_switch_get(t, fab_test_switch(t, "p7-t1-255"), &s), 0);
    ck_assert_uint_eq(s.usid, 0xf0ff);
    ck_assert_str_eq(s.name, "p7-t1-255");
    uint32_t h = fab_host_find(t, "h131071");
    ck_assert_uint_eq(h, 131071);
    fab_topo_free(t);
    printf("fabric.load: full.json loaded in %.0f ms\n", dt * 1e3);
}
END_TEST

/*
 * Bad inputs. The small explicit fabric below (one plane, T0 0-1, T1 0-1, radix 4, hosts
 * h0-h3) loads; each case breaks one thing. JSON is written with ' for " and converted.
 */
#define X_SW                                                                                       \
    "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"                                          \
    "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"                                          \
    "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"                                          \
    "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}"
#define X_SW_P1                                                                                    \
    "{'name':'p1-t0-0','plane':1,'tier':'t0','index':0},"                                          \
    "{'name':'p1-t1-0','plane':1,'tier':'t1','index':0}"
#define X_HOSTS "{'name':'h0'},{'name':'h1'},{'name':'h2'},{'name':'h3'}"
/* cables[0-3] hosts, cables[4-7] the T0-T1 mesh; cables[6] is p0-t0-1 - p0-t1-0 */
#define X_CABLES_HOSTS                                                                             \
    "{'a':'h0:0','b':'p0-t0-0:0'},{'a':'h1:0','b':'p0-t0-0:1'},"                                   \
    "{'a':'h2:0','b':'p0-t0-1:0'},{'a':'h3:0','b':'p0-t0-1:1'}"
#define X_CABLES_MESH3                                                                             \
    "{'a':'p0-t0-0:2','b':'p0-t1-0:0'},{'a':'p0-t0-0:3','b':'p0-t1-1:0'},"                         \
    "{'a':'p0-t0-1:2','b':'p0-t1-0:1'}"
#define X_CABLES X_CABLES_HOSTS "," X_CABLES_MESH3 ",{'a':'p0-t0-1:3','b':'p0-t1-1:1'}"

static char xbuf[8192];

/* Replaces ' with " in place. */
static const char *dq(char *s)
{
    for (char *c = s; *c; c++) {
        if (*c == '\'') {
            *c = '"';
        }
    }
    return s;
}

/* An explicit document: NULL parts take the defaults above; |tail| adds top-level members. */
static const char *xdoc(unsigned planes, const char *sw, const char *hosts, const char *cables,
                        const char *tail)
{
    int n = snprintf(xbuf, sizeof(xbuf),
                     "{'form':'explicit','name':'x','planes':%u,'radix':4,'switches':[%s],"
                     "'hosts':[%s],'cables':[%s]%s}",
                     planes, sw ? sw : X_SW, hosts ? hosts : X_HOSTS, cables ? cables : X_CABLES,
                     tail ? tail : "");
    ck_assert_int_lt(n, (int)sizeof(xbuf));
    return dq(xbuf);
}

/* A parametric document from its members (without braces), in ' quoting. */
static const char *pdoc(const char *members)
{
    int n = snprintf(xbuf, sizeof(xbuf), "{'form':'parametric','name':'p',%s}", members);
    ck_assert_int_lt(n, (int)sizeof(xbuf));
    return dq(xbuf);
}

/* Loads |json|, which must fail with FAB_ERR_INVAL at |path| with |part| in the message. */
static void expect_inval(const char *json, const char *path, const char *part, int line)
{
    fab_topo *sentinel = (fab_topo *)(uintptr_t)0x5a5a5a5a;
    fab_topo *t = sentinel;
    fab_error err;
    memset(&err, 0, sizeof(err));
    int rv = fab_test_load_str(json, &t, &err);
    if (rv == 0) {
        fab_topo_free(t);
    }
    ck_assert_msg(rv == FAB_ERR_INVAL, "line %d: load gave %d (%s), not FAB_ERR_INVAL\n%.3000s",
                  line, rv, fab_strerror(rv), json);
    ck_assert_msg(t == sentinel, "line %d: a failed load changed *ptopo", line);
    ck_assert_msg(strcmp(err.path, path) == 0, "line %d: error path %s, want %s (%s)", line,
                  err.path, path, err.msg);
    ck_assert_msg(strstr(err.msg, part) != NULL, "line %d: error message \"%s\" lacks \"%s\"", line,
                  err.msg, part);
    /* the same input without an error buffer fails the same way */
    t = sentinel;
    ck_assert_int_eq(fab_test_load_str(json, &t, NULL), FAB_ERR_INVAL);
    ck_assert_ptr_eq(t, sentinel);
}

#define EXPECT_INVAL(json, path, part) expect_inval((json), (path), (part), __LINE__)

START_TEST(test_fab_load_explicit_base_loads)
{
    fab_topo *t = fab_test_load_json(xdoc(1, NULL, NULL, NULL, NULL));
    ck_assert_uint_eq(fab_topo_nswitches(t), 4);
    ck_assert_uint_eq(fab_topo_nhosts(t), 4);
    ck_assert_uint_eq(fab_topo_ncables(t), 8);
    fab_topo_free(t);
    /* so that every case below fails for its own reason only */
    t = fab_test_load_json(xdoc(2, X_SW "," X_SW_P1, NULL,
                                X_CABLES
                                ",{'a':'p1-t0-0:3','b':'p1-t1-0:0'},"
                                "{'a':'h0:1','b':'p1-t0-0:0'},{'a':'h1:1','b':'p1-t0-0:1'},"
                                "{'a':'h2:1','b':'p1-t0-0:2'}",
                                ",'overrides':{'missing_cables':[{'host':'h3','port':1}]}"));
    ck_assert_uint_eq(fab_topo_planes(t), 2);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_fab_load_rejects_bad_json)
{
    char doc[256];
    EXPECT_INVAL("{\"form\": \"explicit\",}", "$", "JSON syntax error");
    EXPECT_INVAL("{\"form\": \"explicit\" \"name\": \"x\"}", "$", "JSON syntax error");
    EXPECT_INVAL("{\"form\": \"parametric\", \"planes\": 2", "$", "ends early");
    EXPECT_INVAL("", "$", "ends early");
    /* trailing garbage after a complete, valid document of 63 bytes: the error says where */
    const char *valid = pdoc("'planes':1,'radix':4,'hosts':4");
    ck_assert_uint_eq(strlen(valid), 63);
    snprintf(doc, sizeof(doc), "%s x", valid);
    EXPECT_INVAL(doc, "$", "JSON syntax error at byte 64");
    snprintf(doc, sizeof(doc), "%s {}", pdoc("'planes':1,'radix':4,'hosts':4"));
    EXPECT_INVAL(doc, "$", "JSON syntax error at byte 64");
    snprintf(doc, sizeof(doc), "%s}", pdoc("'planes':1,'radix':4,'hosts':4"));
    EXPECT_INVAL(doc, "$", "JSON syntax error at byte 63");
    snprintf(doc, sizeof(doc), "%s \n\t ", pdoc("'planes':1,'radix':4,'hosts':4"));
    fab_topo_free(fab_test_load_json(doc));
    EXPECT_INVAL("[]", "$", "must be an object");
    /* a missing key is blamed on the object that lacks it */
    EXPECT_INVAL("{}", "$", "missing required key 'form'");
    EXPECT_INVAL(dq((char[]){"{'form':'implicit'}"}), "$.form", "\"implicit\"");
}
END_TEST

START_TEST(test_fab_load_rejects_unknown_keys)
{
    EXPECT_INVAL(xdoc(1, NULL, NULL, NULL, ",'radx':4"), "$.radx", "unknown key 'radx'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'host':4"), "$.host", "unknown key 'host'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'plane_bit':3}"),
                 "$.addressing.plane_bit", "unknown key 'plane_bit'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'kinds':{'t2':2}}"),
                 "$.addressing.kinds.t2", "unknown key 't2'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'t2':'e{port}'}"),
                 "$.interfaces.t2", "unknown key 't2'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'missing':[]}"),
                 "$.overrides.missing", "unknown key 'missing'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usd':'0x0a00'}}}"),
                 "$.overrides.switches.p0-t0-1.usd", "unknown key 'usd'");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'missing_cables':[{'t0':'p0-t0-0','t':'p0-t1-0'}]}"),
                 "$.overrides.missing_cables[0].t", "unknown key 't'");
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1,'indx':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[1].indx", "unknown key 'indx'");
    EXPECT_INVAL(xdoc(1, NULL, "{'name':'h0'},{'name':'h1','port':0},{'name':'h2'},{'name':'h3'}",
                      NULL, NULL),
                 "$.hosts[1].port", "unknown key 'port'");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'h0:0','c':'p0-t0-0:0'}", NULL),
                 "$.cables[8].c", "unknown key 'c'");
}
END_TEST

START_TEST(test_fab_load_rejects_wrong_types)
{
    EXPECT_INVAL(pdoc("'planes':'1','radix':4,'hosts':4"), "$.planes",
                 "must be an integer from 1 to 8, not a string");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4.5,'hosts':4"), "$.radix", "not a fraction");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':true"), "$.hosts", "not a boolean");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'oversubscription':'1'"),
                 "$.oversubscription", "must be a number");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'name':5"), "$.name",
                 "must be a string, not an integer");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':[]"), "$.addressing",
                 "must be an object, not an array");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':32}"),
                 "$.addressing.block", "must be a string");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'t0':null}"), "$.interfaces.t0",
                 "must be a string, not null");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'missing_cables':{}}"),
                 "$.overrides.missing_cables", "must be an array");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':[1]}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "must be an integer or a hex string");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':'0xg1'}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "'0xg1' is not a non-zero 16-bit uSID");
    EXPECT_INVAL(xdoc(1, NULL, NULL, NULL, ",'switches':{}"), "$.switches",
                 "must be an array, not an object");
    EXPECT_INVAL(xdoc(1, NULL, "{'name':'h0'},{'name':5},{'name':'h2'},{'name':'h3'}", NULL, NULL),
                 "$.hosts[1].name", "must be a string");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':3,'b':'p0-t0-0:0'}", NULL), "$.cables[8].a",
                 "must be a string");
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t2','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[2].tier", "tier of 'p0-t1-0' must be \"t0\" or \"t1\"");
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-1','plane':1,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[1].plane", "1 is out of range (0 to 0)");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t0-0','b':'p0-t1-0:2'}", NULL),
                 "$.cables[8].a", "'p0-t0-0' is not a cable end");
    EXPECT_INVAL(
        xdoc(1, NULL, "{'name':'h0'},{'name':'h 1'},{'name':'h2'},{'name':'h3'}", NULL, NULL),
        "$.hosts[1].name", "'h 1' is not a valid name");
}
END_TEST

START_TEST(test_fab_load_rejects_duplicate_names)
{
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[1].name", "duplicate name 'p0-t0-0' (first used at $.switches[0])");
    EXPECT_INVAL(
        xdoc(1, NULL, "{'name':'h0'},{'name':'h1'},{'name':'h1'},{'name':'h3'}", NULL, NULL),
        "$.hosts[2].name", "duplicate name 'h1' (first used at $.hosts[1])");
    EXPECT_INVAL(
        xdoc(1, NULL, "{'name':'h0'},{'name':'h1'},{'name':'h2'},{'name':'p0-t1-1'}", NULL, NULL),
        "$.hosts[3].name", "duplicate name 'p0-t1-1' (first used at $.switches[3])");
    /* two switches at one (plane, tier, index) */
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1},"
                      "{'name':'p0-t1-x','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[4].index",
                 "'p0-t1-x' has the same plane, tier and index as 'p0-t1-1'");
}
END_TEST

START_TEST(test_fab_load_rejects_bad_cable_ends)
{
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t0-9:0','b':'p0-t1-0:2'}", NULL),
                 "$.cables[8].a", "no switch or host named 'p0-t0-9'");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t0-0:1','b':'p0-t1-7:2'}", NULL),
                 "$.cables[8].b", "no switch or host named 'p0-t1-7'");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t0-0:4','b':'p0-t1-0:2'}", NULL),
                 "$.cables[8].a", "'p0-t0-0' has no port 4 (it has ports 0-3)");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t1-0:2','b':'h0:1'}", NULL),
                 "$.cables[8].b", "'h0' has no port 1 (it has ports 0-0)");
    EXPECT_INVAL(
        xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t1-0:2','b':'p0-t0-0:9999999999999'}", NULL),
        "$.cables[8].b", "'p0-t0-0' has no port");
}
END_TEST

START_TEST(test_fab_load_rejects_port_cabled_twice)
{
    /* a switch port, T0 end first */
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t0-0:2','b':'p0-t1-1:2'}", NULL),
                 "$.cables[8].a", "port p0-t0-0:2 is already cabled (to p0-t1-0:0)");
    /* a T1 port */
    EXPECT_INVAL(xdoc(1, NULL, NULL,
                      X_CABLES_HOSTS "," X_CABLES_MESH3 ",{'a':'p0-t0-1:3','b':'p0-t1-0:0'}", NULL),
                 "$.cables[7].b", "port p0-t1-0:0 is already cabled (to p0-t0-0:2)");
    /* a host port, host end second */
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,'ports':5},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, X_CABLES ",{'a':'p0-t0-0:4','b':'h2:0'}", NULL),
                 "$.cables[8].b", "host port h2:0 is already cabled (to p0-t0-1:0)");
}
END_TEST

/*
 * BUG: parse_cables() (lib/fabric/fab_load.c) swaps the ends of a host-first cable so that
 * |ea| is the switch, then checks |ea| under the path ".a" and |eb| under ".b": for
 * {"a": "HOST:P", "b": "T0:X"} - the order fab_topo_expand() itself writes - a fault of the
 * T0 port is reported at .a and a fault of the host port at .b, the wrong ends.
 */
START_TEST(test_fab_load_cable_error_names_the_faulty_end)
{
    const char *sw5 = "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,'ports':5},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}";
    /* the T0 port (in .b) is taken */
    EXPECT_INVAL(xdoc(1, NULL,
                      "{'name':'h0'},{'name':'h1'},{'name':'h2'},{'name':'h3'},"
                      "{'name':'h4'}",
                      X_CABLES ",{'a':'h4:0','b':'p0-t0-0:1'}", NULL),
                 "$.cables[8].b", "port p0-t0-0:1 is already cabled (to h1:0)");
    /* the host port (in .a) is taken */
    EXPECT_INVAL(xdoc(1, sw5, NULL, X_CABLES ",{'a':'h2:0','b':'p0-t0-0:4'}", NULL),
                 "$.cables[8].a", "host port h2:0 is already cabled (to p0-t0-1:0)");
    /* the host port (in .a) is declared missing */
    EXPECT_INVAL(
        xdoc(1, NULL, NULL, X_CABLES, ",'overrides':{'missing_cables':[{'host':'h1','port':0}]}"),
        "$.cables[1].a", "host port h1:0 is cabled but listed in overrides");
}
END_TEST

START_TEST(test_fab_load_rejects_wrong_cabling)
{
    const char *sw5 = "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,'ports':5},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1,'ports':5},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}";
    const char *hosts5 = X_HOSTS ",{'name':'h4'}";
    /* a host on a T1 */
    EXPECT_INVAL(xdoc(1, NULL, hosts5, X_CABLES ",{'a':'p0-t1-0:2','b':'h4:0'}", NULL),
                 "$.cables[8]", "host h4 is cabled to T1 'p0-t1-0'");
    /* two hosts */
    EXPECT_INVAL(xdoc(2, X_SW "," X_SW_P1, hosts5, X_CABLES ",{'a':'h4:0','b':'h0:1'}", NULL),
                 "$.cables[8]", "a cable joins two hosts");
    /* host port 1 lives on plane 1, not on a T0 of plane 0 */
    EXPECT_INVAL(xdoc(2,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,'ports':5}," X_SW_P1
                      ",{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, X_CABLES ",{'a':'p0-t0-0:4','b':'h0:1'}", NULL),
                 "$.cables[8]", "host port h0:1 belongs to plane 1 but 'p0-t0-0' is in plane 0");
    /* T0 to T0, T1 to T1 */
    EXPECT_INVAL(xdoc(1, sw5, NULL, X_CABLES ",{'a':'p0-t0-0:4','b':'p0-t0-1:4'}", NULL),
                 "$.cables[8]", "'p0-t0-0' and 'p0-t0-1' are both T0");
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES ",{'a':'p0-t1-0:2','b':'p0-t1-1:2'}", NULL),
                 "$.cables[8]", "'p0-t1-0' and 'p0-t1-1' are both T1");
    /* across planes */
    EXPECT_INVAL(
        xdoc(2, X_SW "," X_SW_P1, NULL, X_CABLES ",{'a':'p1-t0-0:2','b':'p0-t1-0:2'}", NULL),
        "$.cables[8]", "'p1-t0-0' (plane 1) and 'p0-t1-0' (plane 0) are in different");
}
END_TEST

START_TEST(test_fab_load_rejects_broken_mesh)
{
    /* p0-t0-1 lacks its cable to p0-t1-1 */
    EXPECT_INVAL(xdoc(1, NULL, NULL, X_CABLES_HOSTS "," X_CABLES_MESH3, NULL), "$.switches[1]",
                 "T0 'p0-t0-1' has no cable to T1 'p0-t1-1'");
    /* p0-t0-1 wired to p0-t1-0 twice (and so not to p0-t1-1) */
    EXPECT_INVAL(xdoc(1, NULL, NULL,
                      X_CABLES_HOSTS "," X_CABLES_MESH3 ",{'a':'p0-t0-1:3','b':'p0-t1-0:2'}", NULL),
                 "$.switches[1]", "T0 'p0-t0-1' is cabled twice to T1 'p0-t1-0' (ports 2 and 3)");
    /* a missing-cable override naming a cable that is present */
    EXPECT_INVAL(xdoc(1, NULL, NULL, NULL,
                      ",'overrides':{'missing_cables':[{'t0':'p0-t0-1','t1':'p0-t1-1'}]}"),
                 "$.cables[7]",
                 "the cable between p0-t0-1 and p0-t1-1 is present but listed in overrides");
    /* the same missing cable twice, and overrides naming the wrong things */
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'missing_cables':["
                      "{'t0':'p0-t0-1','t1':'p0-t1-1'},{'t0':'p0-t0-1','t1':'p0-t1-1'}]}"),
                 "$.overrides.missing_cables[1]", "listed twice");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'missing_cables':["
                      "{'t0':'p0-t1-1','t1':'p0-t1-0'}]}"),
                 "$.overrides.missing_cables[0].t0", "'p0-t1-1' is not a T0");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'missing_cables':["
                      "{'host':'p0-t0-0','port':0}]}"),
                 "$.overrides.missing_cables[0].host", "'p0-t0-0' is a switch, not a host");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'switches':{'p0-t0-5':{}}}"),
                 "$.overrides.switches.p0-t0-5", "no switch named 'p0-t0-5'");
    /* a host port without cable nor override */
    EXPECT_INVAL(xdoc(1, NULL, NULL,
                      "{'a':'h0:0','b':'p0-t0-0:0'},{'a':'h1:0','b':'p0-t0-0:1'},"
                      "{'a':'h2:0','b':'p0-t0-1:0'}," X_CABLES_MESH3
                      ",{'a':'p0-t0-1:3','b':'p0-t1-1:1'}",
                      NULL),
                 "$.hosts[3]", "host 'h3' has no cable on port 0 (plane 0)");
    /* ... which an override allows */
    fab_topo *t =
        fab_test_load_json(xdoc(1, NULL, NULL,
                                "{'a':'h0:0','b':'p0-t0-0:0'},{'a':'h1:0','b':'p0-t0-0:1'},"
                                "{'a':'h2:0','b':'p0-t0-1:0'}," X_CABLES_MESH3,
                                ",'overrides':{'missing_cables':[{'host':'h3','port':0},"
                                "{'t0':'p0-t0-1','t1':'p0-t1-1'}]}"));
    ck_assert_uint_eq(fab_topo_nmissing(t), 2);
    ck_assert_uint_eq(fab_topo_ncables(t), 6);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_fab_load_rejects_bad_indexes)
{
    /* gaps: T1 indexes 0 and 2 */
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':2}",
                      NULL, NULL, NULL),
                 "$.switches", "plane 0 has no T1 with index 1");
    /* a plane without T1 */
    EXPECT_INVAL(
        xdoc(2, X_SW ",{'name':'p1-t0-0','plane':1,'tier':'t0','index':0}", NULL, NULL, NULL),
        "$.switches", "plane 1 has no T1 switch");
    /* an index beyond the 11-bit field */
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':2048},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[1].index",
                 "index 2048 of 'p0-t0-1' overflows the 11-bit index field (at most 2047)");
    /* a host on T0 down-port 2048, which no down-link uSID can name */
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,'ports':2050},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      X_HOSTS ",{'name':'h4'}", X_CABLES ",{'a':'h4:0','b':'p0-t0-0:2048'}", NULL),
                 "$.cables[8]", "T0 port p0-t0-0:2048 carries a host");
    /* ... while down-port 2047 is fine */
    fab_topo *t = fab_test_load_json(
        xdoc(1,
             "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,'ports':2050},"
             "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
             "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
             "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
             X_HOSTS ",{'name':'h4'}", X_CABLES ",{'a':'h4:0','b':'p0-t0-0:2047'}", NULL));
    fab_topo_free(t);
    /* parametric: more T0 than a T1 has ports, and indexes past the field */
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':9"), "$.hosts",
                 "9 hosts need 5 T0 per plane, but a T1 has only 4 ports");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'oversubscription':2"), "$.oversubscription",
                 "radix 4 cannot be split 2:1");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':0"), "$.hosts", "0 is out of range");
    EXPECT_INVAL(pdoc("'planes':9,'radix':4,'hosts':4"), "$.planes", "9 is out of range (1 to 8)");
    EXPECT_INVAL(pdoc("'planes':1,'radix':64,'hosts':256,"
                      "'addressing':{'plane_bits':4,'kind_bits':8,'index_bits':4}"),
                 "$.radix", "T1 index 31 overflows the 4-bit index field (at most 15)");
}
END_TEST

START_TEST(test_fab_load_rejects_bad_usids)
{
    const char *pinned2 = "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                          "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                          "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0,'usid':'0x0a00'},"
                          "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1,'usid':2560}";
    EXPECT_INVAL(xdoc(1, pinned2, NULL, NULL, NULL), "$.switches[3].usid",
                 "uSID 0x0a00 of 'p0-t1-1' collides with 'p0-t1-0'");
    /* pinned onto a derived uSID: the pinned switch is blamed, before or after the other */
    const char *late = "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                       "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                       "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                       "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1,'usid':'0x0800'}";
    EXPECT_INVAL(xdoc(1, late, NULL, NULL, NULL), "$.switches[3].usid",
                 "uSID 0x0800 of 'p0-t1-1' collides with 'p0-t0-0'");
    const char *early = "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                        "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1,'usid':'0x1001'},"
                        "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                        "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}";
    EXPECT_INVAL(xdoc(1, early, NULL, NULL, NULL), "$.switches[1].usid",
                 "uSID 0x1001 of 'p0-t0-1' collides with 'p0-t1-1'");
    EXPECT_INVAL(pdoc("'planes':2,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p1-t1-1':{'usid':'0x0800'}}}"),
                 "$.overrides.switches.p1-t1-1.usid",
                 "uSID 0x0800 of 'p1-t1-1' collides with 'p0-t0-0'");
    /* the down-link kind belongs to the T0 down-ports */
    const char *dl = "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0},"
                     "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                     "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0,'usid':'0x1805'},"
                     "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}";
    EXPECT_INVAL(xdoc(1, dl, NULL, NULL, NULL), "$.switches[2].usid",
                 "uSID 0x1805 of 'p0-t1-0' collides with the down-link uSIDs (kind 3)");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':'0x7800'}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "collides with the down-link uSIDs");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':0}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "16 bits and not zero");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':'0x10000'}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "not a non-zero 16-bit uSID");
}
END_TEST

START_TEST(test_fab_load_rejects_bad_addressing)
{
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':'fcbb:bb00::/48'}"),
                 "$.addressing.block", "the block must be a /32, not /48");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':'fcbb:bb00:1::/32'}"),
                 "$.addressing.block", "'fcbb:bb00:1::/32' has bits set beyond /32");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'addressing':{'host_block':'fdbb:bb00::1/32'}"),
                 "$.addressing.host_block", "has bits set beyond /32");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':'fcbb:bb00::'}"),
                 "$.addressing.block", "is not an IPv6 prefix");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':'fcbb:zz00::/32'}"),
                 "$.addressing.block", "is not an IPv6 prefix");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'index_bits':10}"),
                 "$.addressing", "plane_bits + kind_bits + index_bits must be 16 (a uSID), not 15");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'addressing':{'plane_bits':4,'kind_bits':3,'index_bits':10}"),
                 "$.addressing", "must be 16 (a uSID), not 17");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'kinds':{'t0':2}}"),
                 "$.addressing.kinds", "the kinds of t0, t1 and dl must differ");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'kinds':{'dl':4}}"),
                 "$.addressing.kinds.dl", "4 is out of range (1 to 3)");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'route_table':255}"),
                 "$.addressing.route_table", "reserved");
    /* the prefix length in plain digits, as the schema has it */
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':'fcbb:bb00::/032'}"),
                 "$.addressing.block", "is not an IPv6 prefix");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'addressing':{'block':'fcbb:bb00::/ 32'}"),
                 "$.addressing.block", "is not an IPv6 prefix");
}
END_TEST

START_TEST(test_fab_load_usid_spelling_and_printable_errors)
{
    /* hex digits after an optional 0x; strtoull alone would take blanks and signs */
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':' 1'}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "not a non-zero 16-bit uSID");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':'+1'}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "not a non-zero 16-bit uSID");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,"
                      "'overrides':{'switches':{'p0-t0-1':{'usid':'0x'}}}"),
                 "$.overrides.switches.p0-t0-1.usid", "not a non-zero 16-bit uSID");
    /* messages quote the input; bytes that are not printable ASCII come out as '?' */
    static const char doc[] = "{\"form\":\"parametric\",\"name\":\"\xc3\x28\x01x\","
                              "\"planes\":1,\"radix\":4,\"hosts\":2}";
    fab_topo *t = NULL;
    fab_error err;
    ck_assert_int_eq(fab_topo_load(doc, sizeof(doc) - 1, &t, &err), FAB_ERR_INVAL);
    ck_assert_str_eq(err.path, "$.name");
    ck_assert_ptr_nonnull(strstr(err.msg, "'?(?x' is not a valid name"));
}
END_TEST

START_TEST(test_fab_load_rejects_bad_interfaces)
{
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'t0':'eth'}"),
                 "$.interfaces.t0", "interface pattern 'eth' must contain '{port}' exactly once");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'host':'e{port}{port}'}"),
                 "$.interfaces.host", "must contain '{port}' exactly once");
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'t1':'eth/{port}'}"),
                 "$.interfaces.t1", "is not a valid interface name");
    EXPECT_INVAL(
        pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'sid_device':'sr0{port}xyzabcdefgh'}"),
        "$.interfaces.sid_device", "longer than 15 characters");
    /* names over 15 characters: the pattern at the highest port */
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'interfaces':{'t1':'EthernetLonger-{port}'}"),
                 "$.interfaces.t1",
                 "pattern 'EthernetLonger-{port}' makes interface names longer "
                 "than 15 characters (port 3)");
    EXPECT_INVAL(pdoc("'planes':1,'radix':16,'hosts':4,'interfaces':{'t0':'EthernetLonger{port}'}"),
                 "$.interfaces.t0", "(port 15)");
    /* 15 characters at port 15 are fine */
    fab_topo *t = fab_test_load_json(
        pdoc("'planes':1,'radix':16,'hosts':4,'interfaces':{'t0':'EthernetLonge{port}'}"));
    fab_topo_free(t);
    /* a switch's own pattern and exceptions */
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,"
                      "'interfaces':{'pattern':'swp'}},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[0].interfaces.pattern", "must contain '{port}'");
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,"
                      "'interfaces':{'pattern':'EthernetLonger-{port}'}},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[0].interfaces.pattern", "longer than 15 characters");
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,"
                      "'interfaces':{'ports':{'1':'averyveryverylongname'}}},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[0].interfaces.ports.1", "longer than 15 characters");
    EXPECT_INVAL(xdoc(1,
                      "{'name':'p0-t0-0','plane':0,'tier':'t0','index':0,"
                      "'interfaces':{'ports':{'4':'spare'}}},"
                      "{'name':'p0-t0-1','plane':0,'tier':'t0','index':1},"
                      "{'name':'p0-t1-0','plane':0,'tier':'t1','index':0},"
                      "{'name':'p0-t1-1','plane':0,'tier':'t1','index':1}",
                      NULL, NULL, NULL),
                 "$.switches[0].interfaces.ports.4", "'4' is not a port of 'p0-t0-0' (0-3)");
}
END_TEST

/*
 * BUG: check_ifnames() (lib/fabric/fab_validate.c) names a too-long per-switch pattern with
 * sw_path(), which knows only explicit switch objects: a pattern from
 * overrides.switches.NAME.interfaces is reported at "$" (parametric) or at
 * "$.switches[i].interfaces.pattern", a value that does not exist (explicit).
 */
START_TEST(test_fab_load_override_pattern_error_path)
{
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'switches':{'p0-t0-1':"
                      "{'interfaces':{'pattern':'EthernetLonger-{port}'}}}}"),
                 "$.overrides.switches.p0-t0-1.interfaces.pattern", "longer than 15 characters");
    EXPECT_INVAL(xdoc(1, NULL, NULL, NULL,
                      ",'overrides':{'switches':{'p0-t0-1':"
                      "{'interfaces':{'pattern':'EthernetLonger-{port}'}}}}"),
                 "$.overrides.switches.p0-t0-1.interfaces.pattern", "longer than 15 characters");
}
END_TEST

/*
 * BUG: fab_index_build() (lib/fabric/fab_topo.c) always names a duplicate as
 * "$.hosts[i].name" / "$.switches[i]", which a parametric file does not have ("hosts" is a
 * count there): a host_name pattern that makes a switch's name is reported at
 * "$.hosts[0].name" instead of at the pattern, "$.host_name".
 */
START_TEST(test_fab_load_parametric_name_clash_path)
{
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'host_name':'p0-t1-{n}'"), "$.host_name",
                 "p0-t1-0");
}
END_TEST

/*
 * BUG (validation gap): nothing checks that the interface names of one switch differ. A
 * per-port exception equal to the name the pattern gives another port loads, and the renders
 * then put both ports' addresses and routes on one device.
 */
START_TEST(test_fab_load_rejects_duplicate_ifnames)
{
    EXPECT_INVAL(pdoc("'planes':1,'radix':4,'hosts':4,'overrides':{'switches':{'p0-t0-0':"
                      "{'interfaces':{'ports':{'3':'eth0'}}}}}"),
                 "$.overrides.switches.p0-t0-0.interfaces.ports.3", "eth0");
}
END_TEST

START_TEST(test_fab_load_file_errors)
{
    fab_topo *sentinel = (fab_topo *)(uintptr_t)0x5a5a5a5a;
    fab_topo *t = sentinel;
    fab_error err;
    memset(&err, 0, sizeof(err));
    int rv = fab_topo_load_file(FAB_TEST_DATA "/no-such-file.json", &t, &err);
    ck_assert_int_eq(rv, FAB_ERR_IO);
    ck_assert_ptr_eq(t, sentinel);
    ck_assert_str_eq(err.path, "$");
    ck_assert_ptr_nonnull(strstr(err.msg, "no-such-file.json"));
    ck_assert_int_eq(fab_topo_load_file(FAB_TEST_DATA "/no-such-file.json", &t, NULL), FAB_ERR_IO);
    /* a directory opens but does not read */
    rv = fab_topo_load_file(FAB_TEST_DATA, &t, &err);
    ck_assert_int_eq(rv, FAB_ERR_IO);
    ck_assert_ptr_eq(t, sentinel);
}
END_TEST

Suite *fab_load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("forms");
    tcase_add_test(tc, test_fab_load_lab_parametric);
    tcase_add_test(tc, test_fab_load_lab_forms_agree);
    tcase_add_test(tc, test_fab_load_overrides_applied);
    tcase_add_test(tc, test_fab_load_overrides_forms_agree);
    tcase_add_test(tc, test_fab_load_full_fabric);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("invalid");
    tcase_add_test(tc, test_fab_load_explicit_base_loads);
    tcase_add_test(tc, test_fab_load_rejects_bad_json);
    tcase_add_test(tc, test_fab_load_rejects_unknown_keys);
    tcase_add_test(tc, test_fab_load_rejects_wrong_types);
    tcase_add_test(tc, test_fab_load_rejects_duplicate_names);
    tcase_add_test(tc, test_fab_load_rejects_bad_cable_ends);
    tcase_add_test(tc, test_fab_load_rejects_port_cabled_twice);
    tcase_add_test(tc, test_fab_load_cable_error_names_the_faulty_end);
    tcase_add_test(tc, test_fab_load_rejects_wrong_cabling);
    tcase_add_test(tc, test_fab_load_rejects_broken_mesh);
    tcase_add_test(tc, test_fab_load_rejects_bad_indexes);
    tcase_add_test(tc, test_fab_load_rejects_bad_usids);
    tcase_add_test(tc, test_fab_load_rejects_bad_addressing);
    tcase_add_test(tc, test_fab_load_usid_spelling_and_printable_errors);
    tcase_add_test(tc, test_fab_load_rejects_bad_interfaces);
    tcase_add_test(tc, test_fab_load_override_pattern_error_path);
    tcase_add_test(tc, test_fab_load_parametric_name_clash_path);
    tcase_add_test(tc, test_fab_load_rejects_duplicate_ifnames);
    tcase_add_test(tc, test_fab_load_file_errors);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
