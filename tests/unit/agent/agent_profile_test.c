/* SPDX-License-Identifier: MIT */
/* Host profiles as the real controller serves them (tests/unit/agent/data/profile_*.json, taken
 * from mrc-controller on lab.json and on tests/unit/fabric/data/small.json): their fields,
 * the EVs toward every peer against the fabric model's own path list (fab_path_enum), the
 * port addresses, and bodies that are broken or that describe another fabric. */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_profile.h"
#include "util.h"

#define LAB AGENT_TEST_ROOT "/deploy/topologies/lab.json"
#define SMALL AGENT_TEST_ROOT "/tests/unit/fabric/data/small.json"
#define DATA AGENT_TEST_ROOT "/tests/unit/agent/data"

static fab_topo *load(const char *path)
{
    fab_topo *t;
    fab_error err;
    ck_assert_msg(fab_topo_load_file(path, &t, &err) == 0, "%s: %s", path, err.msg);
    return t;
}

static char *fixture(const char *name, size_t *plen)
{
    char path[512], *data;
    size_t len;
    snprintf(path, sizeof(path), "%s/%s", DATA, name);
    ck_assert_msg(util_read_file(path, &data, &len) == 0, "%s", path);
    if (plen) {
        *plen = len;
    }
    return data;
}

static agent_profile *parse_ok(const fab_topo *t, const char *body)
{
    agent_profile *prof = NULL;
    char err[512] = "";
    int rv = agent_profile_parse(t, body, strlen(body), &prof, err, sizeof(err));
    ck_assert_msg(rv == 0, "parse: %d %s", rv, err);
    ck_assert_ptr_nonnull(prof);
    return prof;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* For every peer: agent_profile_evs gives, plane by plane, the EVs of the usable paths the
 * fabric model enumerates from this host to it, each on the port of its plane. */
static void check_evs_all_peers(const fab_topo *t, const agent_profile *prof)
{
    for (uint32_t peer = 0; peer < fab_topo_nhosts(t); peer++) {
        mrc_ev evs[64];
        unsigned n;
        int rv = agent_profile_evs(prof, t, peer, evs, 64, &n);
        if (peer == prof->host_id) {
            ck_assert_int_eq(rv, -EINVAL);
            continue;
        }
        uint32_t want[64], got[64];
        unsigned nw = 0;
        for (unsigned p = 0; p < fab_topo_planes(t); p++) {
            fab_path paths[64];
            size_t np;
            if (fab_path_enum(t, prof->host_id, p, peer, p, paths, 64, &np) != 0) {
                continue;
            }
            for (size_t k = 0; k < np; k++) {
                if (paths[k].usable) {
                    want[nw++] = paths[k].ev;
                }
            }
        }
        ck_assert_int_eq(rv, nw ? 0 : -ENOENT);
        ck_assert_uint_eq(n, nw);
        for (unsigned k = 0; k < n; k++) {
            ck_assert_uint_eq(evs[k].port, fab_ev_plane(fab_topo_plan(t), evs[k].val));
            ck_assert(k == 0 || evs[k].port >= evs[k - 1].port); /* planes in order */
            got[k] = evs[k].val;
        }
        qsort(want, nw, sizeof(*want), cmp_u32);
        qsort(got, n, sizeof(*got), cmp_u32);
        ck_assert_msg(memcmp(want, got, n * sizeof(*got)) == 0, "%s -> %s", prof->host,
                      fab_host_name(t, peer));
    }
}

START_TEST(test_agent_profile_lab_h0)
{
    fab_topo *t = load(LAB);
    char *body = fixture("profile_lab_h0.json", NULL);
    agent_profile *prof = parse_ok(t, body);
    ck_assert_str_eq(prof->host, "h0");
    ck_assert_uint_eq(prof->host_id, fab_host_find(t, "h0"));
    ck_assert_uint_eq(prof->nports, 2);
    for (unsigned p = 0; p < 2; p++) {
        const agent_profile_port *pt = &prof->ports[p];
        uint8_t a[16];
        ck_assert_uint_eq(pt->port, p);
        ck_assert_uint_eq(pt->plane, p);
        ck_assert(pt->cabled);
        ck_assert_str_eq(pt->ifname, p ? "eth1" : "eth0");
        ck_assert_str_eq(pt->t0, p ? "p1-t0-0" : "p0-t0-0");
        ck_assert_uint_eq(pt->t0_index, 0);
        ck_assert_uint_eq(pt->t0_port, 0);
        ck_assert_int_eq(fab_host_addr(t, 0, p, a), 0);
        ck_assert_mem_eq(pt->address, a, 16);
        ck_assert_int_eq(fab_host_usid_addr(t, 0, p, a), 0);
        ck_assert_mem_eq(pt->usid_address, a, 16);
    }
    ck_assert_uint_eq(prof->nclasses, 4);
    const agent_profile_class *cl = agent_profile_class_of(prof, 0, 0);
    ck_assert_ptr_eq(cl, &prof->classes[0]);
    ck_assert_int_eq(cl->kind, AGENT_CLASS_LOCAL);
    ck_assert_uint_eq(cl->nevs, 1);
    ck_assert_uint_eq(cl->evs[0], 0);
    cl = agent_profile_class_of(prof, 1, 3);
    ck_assert_ptr_eq(cl, &prof->classes[3]);
    ck_assert_int_eq(cl->kind, AGENT_CLASS_REMOTE);
    ck_assert_uint_eq(cl->nevs, 2);
    ck_assert_uint_eq(cl->evs[0], 536870912);
    ck_assert_uint_eq(cl->evs[1], 537133056);
    ck_assert_ptr_null(agent_profile_class_of(prof, 1, 4));
    ck_assert_ptr_null(agent_profile_class_of(prof, 2, 0));

    const agent_profile_cc *cc = &prof->cc;
    ck_assert_str_eq(cc->algorithm, "uet-1.0-nscc");
    ck_assert_uint_eq(cc->mtu, 4096);
    ck_assert(cc->trimming);
    ck_assert(cc->has_nscc);
    ck_assert_double_eq(cc->nscc.link_gbps, 200.0);
    ck_assert_uint_eq(cc->nscc.base_rtt_ns, 4000);
    ck_assert_uint_eq(cc->nscc.target_delay_ns, 3000);
    ck_assert_uint_eq(cc->nscc.max_cwnd, 150000);
    ck_assert_double_eq_tol(cc->nscc.gamma, 0.8, 1e-12);
    ck_assert_double_eq_tol(cc->nscc.max_md_jump, 0.5, 1e-12);
    ck_assert_double_eq_tol(cc->nscc.fi, 13653.333333333332, 1e-6);
    ck_assert_double_eq_tol(cc->nscc.fi_scale, 0.16666666666666666, 1e-12);
    ck_assert_double_eq_tol(cc->nscc.eta, 409.6, 1e-9);
    ck_assert_uint_eq(cc->nscc.qa_gate, 3);
    ck_assert_uint_eq(cc->nscc.qa_threshold_ns, UINT64_MAX);
    ck_assert(!cc->nscc.disable_qa);
    ck_assert_uint_eq(cc->nscc.adjust_bytes, 32768);
    ck_assert_uint_eq(cc->nscc.adjust_period_ns, 4000);
    ck_assert_uint_eq(cc->nscc.fi_delay_ns, 1000);
    ck_assert_double_eq_tol(cc->nscc.delay_gain, 0.0125, 1e-12);
    /* what the controller resolved is what the engine resolves from it */
    mrc_cc_nscc_cfg again;
    ck_assert_int_eq(mrc_cc_nscc_resolve(&cc->nscc, cc->mtu, cc->trimming, &again), 0);
    ck_assert_uint_eq(again.max_cwnd, cc->nscc.max_cwnd);
    ck_assert_uint_eq(again.qa_threshold_ns, cc->nscc.qa_threshold_ns);

    check_evs_all_peers(t, prof);
    /* h1 shares h0's T0 on both planes: the local EV of each */
    mrc_ev evs[8];
    unsigned n;
    ck_assert_int_eq(agent_profile_evs(prof, t, 1, evs, 8, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(evs[0].val, 0);
    ck_assert_uint_eq(evs[0].port, 0);
    ck_assert_uint_eq(evs[1].val, fab_ev_make(fab_topo_plan(t), 1, 0, 0));
    ck_assert_uint_eq(evs[1].port, 1);
    /* too little room: how much is needed */
    ck_assert_int_eq(agent_profile_evs(prof, t, 5, evs, 3, &n), -ENOSPC);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(agent_profile_evs(prof, t, 99, evs, 8, &n), -EINVAL);
    agent_profile_free(prof);
    free(body);
    fab_topo_free(t);
}
END_TEST

/* The same body with ?peer=: the extra member is not in the way, and the EVs the agent picks
 * toward that peer are the paths the controller lists for it. */
START_TEST(test_agent_profile_peer_paths)
{
    fab_topo *t = load(LAB);
    char *body = fixture("profile_lab_h5_peer_h2.json", NULL);
    agent_profile *prof = parse_ok(t, body);
    ck_assert_str_eq(prof->host, "h5");
    json_object *root = json_tokener_parse(body), *peer, *paths, *host;
    ck_assert(json_object_object_get_ex(root, "peer", &peer));
    ck_assert(json_object_object_get_ex(peer, "host", &host));
    uint32_t ph = fab_host_find(t, json_object_get_string(host));
    ck_assert(json_object_object_get_ex(peer, "paths", &paths));
    mrc_ev evs[16];
    unsigned n;
    ck_assert_int_eq(agent_profile_evs(prof, t, ph, evs, 16, &n), 0);
    ck_assert_uint_eq(n, json_object_array_length(paths));
    for (unsigned k = 0; k < n; k++) {
        json_object *x = json_object_array_get_idx(paths, k), *ev, *plane;
        ck_assert(json_object_object_get_ex(x, "ev", &ev));
        ck_assert(json_object_object_get_ex(x, "plane", &plane));
        ck_assert_uint_eq(evs[k].val, (uint32_t)json_object_get_int64(ev));
        ck_assert_uint_eq(evs[k].port, (unsigned)json_object_get_int(plane));
    }
    check_evs_all_peers(t, prof);
    json_object_put(root);
    agent_profile_free(prof);
    free(body);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_agent_profile_cc_none)
{
    fab_topo *t = load(LAB);
    char *body = fixture("profile_lab_h3_ccnone.json", NULL);
    agent_profile *prof = parse_ok(t, body);
    ck_assert_str_eq(prof->host, "h3");
    ck_assert_str_eq(prof->cc.algorithm, "none");
    ck_assert_uint_eq(prof->cc.mtu, 1024);
    ck_assert(!prof->cc.trimming);
    ck_assert(!prof->cc.has_nscc);
    check_evs_all_peers(t, prof);
    agent_profile_free(prof);
    free(body);
    fab_topo_free(t);
}
END_TEST

/* small.json: h5 has no port on plane 1; T0 1 of plane 0 lacks its uplink to T1 0, and T0 2 of
 * plane 1 its uplink to T1 1, so h1's destinations split into more classes. */
START_TEST(test_agent_profile_missing_cables)
{
    fab_topo *t = load(SMALL);
    char *body = fixture("profile_small_h5.json", NULL);
    agent_profile *prof = parse_ok(t, body);
    ck_assert(prof->ports[0].cabled);
    ck_assert(!prof->ports[1].cabled);
    ck_assert_str_eq(prof->ports[0].ifname, "nic0");
    ck_assert_uint_eq(prof->nclasses, 2);
    ck_assert(!prof->cc.trimming);
    ck_assert_uint_eq(prof->cc.nscc.qa_threshold_ns, 16000);
    uint8_t addrs[4][16], a[16];
    unsigned n;
    ck_assert_int_eq(agent_profile_addrs(prof, false, addrs, 4, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(fab_host_addr(t, prof->host_id, 0, a), 0);
    ck_assert_mem_eq(addrs[0], a, 16);
    static const uint8_t zero[16];
    ck_assert_mem_eq(addrs[1], zero, 16);
    ck_assert_int_eq(agent_profile_addrs(prof, true, addrs, 4, &n), 0);
    ck_assert_int_eq(fab_host_usid_addr(t, prof->host_id, 0, a), 0);
    ck_assert_mem_eq(addrs[0], a, 16);
    ck_assert_int_eq(agent_profile_addrs(prof, true, addrs, 1, &n), -ENOSPC);
    ck_assert_uint_eq(n, 2);
    check_evs_all_peers(t, prof);
    agent_profile_free(prof);
    free(body);

    body = fixture("profile_small_h1.json", NULL);
    prof = parse_ok(t, body);
    ck_assert_uint_eq(prof->nclasses, 6);
    check_evs_all_peers(t, prof);
    ck_assert_int_eq(agent_profile_addrs(prof, false, addrs, 4, &n), 0);
    for (unsigned p = 0; p < 2; p++) {
        ck_assert_int_eq(fab_host_addr(t, prof->host_id, p, a), 0);
        ck_assert_mem_eq(addrs[p], a, 16);
    }
    agent_profile_free(prof);
    free(body);
    fab_topo_free(t);
}
END_TEST

/* A profile of another fabric: the first disagreement is named. */
START_TEST(test_agent_profile_other_fabric)
{
    fab_topo *lab = load(LAB), *small = load(SMALL);
    char *body = fixture("profile_lab_h0.json", NULL);
    agent_profile *prof = (agent_profile *)&prof;
    char err[512];
    ck_assert_int_eq(agent_profile_parse(small, body, strlen(body), &prof, err, sizeof(err)),
                     -EINVAL);
    ck_assert_ptr_eq(prof, (agent_profile *)&prof);
    ck_assert_msg(strstr(err, "ports[0].ifname is 'eth0', but fabric 'small' names it 'nic0'"),
                  "%s", err);
    free(body);
    body = fixture("profile_small_h5.json", NULL);
    ck_assert_int_eq(agent_profile_parse(lab, body, strlen(body), &prof, err, sizeof(err)),
                     -EINVAL);
    ck_assert_msg(strstr(err, "ports[0].address is fdbb:bb00:0:1:1::1, but fabric 'lab' gives "
                              "that port fdbb:bb00:0:2:1::1"),
                  "%s", err);
    free(body);
    fab_topo_free(lab);
    fab_topo_free(small);
}
END_TEST

/* |text| with the first |from| replaced by |to| (which must be there). */
static char *edit(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "'%s' is not in the fixture", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return s;
}

START_TEST(test_agent_profile_bad_bodies)
{
    fab_topo *t = load(LAB);
    char *good = fixture("profile_lab_h0.json", NULL);
    static const struct {
        const char *from, *to, *says;
    } bad[] = {
        {"{\"host\":\"h0\",", "{", "host is missing: it must be a string"},
        {"\"host\":\"h0\"", "\"host\":0", "host has the wrong type"},
        {"\"host\":\"h0\"", "\"host\":\"h99\"", "host 'h99' is not in fabric 'lab'"},
        {"\"ports\":[", "\"ports\":7,\"x\":[", "ports has the wrong type"},
        {"\"ports\":[{\"port\":0,", "\"ports\":[{\"port\":1,",
         "ports[0] must be port 0 on plane 0, not port 1 on plane 0"},
        {"\"port\":1,\"plane\":1", "\"port\":1,\"plane\":0",
         "ports[1] must be port 1 on plane 1, not port 1 on plane 0"},
        {"\"port\":1,\"plane\":1", "\"port\":1,\"plane\":5",
         "ports[1].plane is 5: it must be 0 to 1"},
        {"\"cabled\":true,\"ifname\":\"eth0\"", "\"cabled\":false,\"ifname\":\"eth0\"",
         "ports[0] is not cabled, but in fabric 'lab' h0:0 is cabled"},
        {"\"cabled\":true,\"ifname\":\"eth0\"", "\"cabled\":\"yes\",\"ifname\":\"eth0\"",
         "ports[0].cabled has the wrong type"},
        {"\"ifname\":\"eth1\"", "\"ifname\":\"eth1-with-a-name-too-long\"",
         "ports[1].ifname is longer than 15 characters"},
        {"\"address\":\"fdbb:bb00::1\"", "\"address\":\"fdbb:bb00::2\"",
         "ports[0].address is fdbb:bb00::2, but fabric 'lab' gives that port fdbb:bb00::1"},
        {"\"address\":\"fdbb:bb00::1\"", "\"address\":\"10.0.0.1\"",
         "ports[0].address '10.0.0.1' is no IPv6 address"},
        {"\"usid_address\":\"fcbb:bb00:1800::\",", "", "ports[0].usid_address is missing"},
        {"\"t0\":\"p0-t0-0\"", "\"t0\":\"p0-t0-1\"",
         "ports[0] is cabled to p0-t0-1 port 0, but in fabric 'lab' h0:0 is on p0-t0-0 port 0"},
        {"\"t0_port\":0,\"t0_usid\":\"2800\"", "\"t0_port\":1,\"t0_usid\":\"2800\"",
         "ports[1] is cabled to p1-t0-0 port 1"},
        {"\"plane_bits\":3", "\"plane_bits\":4", "ev_codec is 4 plane, 11 T1 and 18 salt bits"},
        {"\"udp_port\":4791", "\"udp_port\":4792", "on UDP port 4792; fabric 'lab' has"},
        {"\"ev_codec\":{", "\"ev_codec\":[],\"x\":{", "ev_codec has the wrong type"},
        {"\"classes\":[", "\"classes\":{},\"x\":[", "classes has the wrong type"},
        {"\"classes\":[", "\"classes\":[1,", "classes[0] must be an object"},
        {"{\"plane\":0,\"kind\":\"local\"", "{\"plane\":2,\"kind\":\"local\"",
         "classes[0].plane is 2: it must be 0 to 1"},
        {"\"kind\":\"local\"", "\"kind\":\"nearby\"",
         "classes[0].kind must be local or remote, not 'nearby'"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\"1-4\"", "classes[1].t0s '1-4': 1-4 is not within 0-3"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\"3-1\"", "classes[1].t0s '3-1': 3-1 is not within 0-3"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\"1-\"", "classes[1].t0s '1-' is not a list"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\"1,,2\"", "classes[1].t0s '1,,2' is not a list"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\"1,2,\"", "classes[1].t0s '1,2,' is not a list"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\" 1\"", "classes[1].t0s ' 1' is not a list"},
        {"\"t0s\":\"1-3\"", "\"t0s\":3", "classes[1].t0s has the wrong type"},
        {"\"t0s\":\"1-3\"", "\"t0s\":\"0-3\"",
         "classes[1].t0s has T0 0 of plane 0, which another class has"},
        {"\"kind\":\"local\",\"t0s\":\"0\"", "\"kind\":\"local\",\"t0s\":\"0-1\"",
         "classes[0] is a local class with t0s '0-1'"},
        {"{\"plane\":0,\"kind\":\"local\",\"t0s\":\"0\",\"evs\":[0]},", "",
         "classes has no local class for plane 0"},
        {"\"t1s\":\"0-1\"", "\"t1s\":\"0-2\"", "classes[1].t1s '0-2': 0-2 is not within 0-1"},
        {"\"t1s\":\"0-1\",\"evs\":[0,262144]", "\"t1s\":\"1\",\"evs\":[0,262144]",
         "classes[1].evs[0] is EV 0 of plane 0 and T1 0"},
        {"\"evs\":[0,262144]", "\"evs\":[0,536870912]",
         "classes[1].evs[1] is EV 536870912 of plane 1 and T1 0: the class is on plane 0"},
        {"\"evs\":[0,262144]", "\"evs\":[0,524288]",
         "classes[1].evs[1] is EV 524288 of plane 0 and T1 2"},
        {"\"evs\":[0,262144]", "\"evs\":[0,-1]", "classes[1].evs[1] must be an EV"},
        {"\"evs\":[0,262144]", "\"evs\":[0,\"1\"]", "classes[1].evs[1] must be an EV"},
        {"\"evs\":[0,262144]", "\"evs\":[0,4294967296]", "classes[1].evs[1] must be an EV"},
        {"\"evs\":[0,262144]", "\"evs\":0", "classes[1].evs has the wrong type"},
        {"\"cc\":{", "\"cc\":1,\"x\":{", "cc has the wrong type"},
        {"\"algorithm\":\"uet-1.0-nscc\"", "\"algorithm\":\"cubic\"",
         "cc.algorithm must be uet-1.0-nscc or none, not 'cubic'"},
        {"\"mtu\":4096", "\"mtu\":0", "cc.mtu is 0: it must be 1 to 4294967295"},
        {"\"trimming\":true", "\"trimming\":null", "cc.trimming has the wrong type"},
        {",\"nscc\":{", ",\"other\":{", "cc.nscc is missing"},
        {"\"gamma\":0.80000000000000004", "\"gamma\":\"0.8\"", "cc.nscc.gamma has the wrong type"},
        {"\"base_rtt_ns\":4000", "\"base_rtt_ns\":4000.5",
         "cc.nscc.base_rtt_ns has the wrong type"},
        {"\"max_cwnd\":150000,", "", "cc.nscc.max_cwnd is missing"},
        {"\"qa_threshold_ns\":null,", "", "cc.nscc.qa_threshold_ns is missing"},
        {"\"qa_threshold_ns\":null", "\"qa_threshold_ns\":-5", "cc.nscc.qa_threshold_ns is -5"},
        {"\"qa_gate\":3", "\"qa_gate\":64", "cc.nscc.qa_gate is 64: it must be 0 to 63"},
        {"\"link_gbps\":200.0", "\"link_gbps\":0", "cc.nscc is not a profile the engine takes"},
        {"\"delay_gain\":0.012500000000000001}",
         "\"delay_gain\":0.012500000000000001,\"disable_qa\":3}",
         "cc.nscc.disable_qa has the wrong type"},
        {"{\"host\"", "[{\"host\"", "not JSON"},
        {"{\"host\"", "{\"host\":\"h0\",\"host\"", ""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *body = edit(good, bad[i].from, bad[i].to);
        agent_profile *prof = (agent_profile *)&prof;
        char err[512] = "";
        int rv = agent_profile_parse(t, body, strlen(body), &prof, err, sizeof(err));
        if (!*bad[i].says) { /* a repeated member: json-c keeps the last, which is fine */
            ck_assert_int_eq(rv, 0);
            agent_profile_free(prof);
            free(body);
            continue;
        }
        ck_assert_msg(rv == -EINVAL, "case %zu (%s -> %s): %d", i, bad[i].from, bad[i].to, rv);
        ck_assert_ptr_eq(prof, (agent_profile *)&prof);
        ck_assert_msg(strncmp(err, "profile body: ", 14) == 0 && strstr(err, bad[i].says),
                      "case %zu (%s -> %s) says '%s', not '%s'", i, bad[i].from, bad[i].to, err,
                      bad[i].says);
        free(body);
    }
    /* the accepted form of an edit: disable_qa as a boolean */
    char *body = edit(good, "\"delay_gain\":0.012500000000000001}",
                      "\"delay_gain\":0.012500000000000001,\"disable_qa\":true}");
    agent_profile *prof = parse_ok(t, body);
    ck_assert(prof->cc.nscc.disable_qa);
    agent_profile_free(prof);
    free(body);
    /* not JSON at all, cut short, or text after it */
    static const char *const junk[] = {"", "{", "[]", "null", "{\"host\":\"h0\"} x"};
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        prof = NULL;
        char err[512] = "";
        ck_assert_int_eq(agent_profile_parse(t, junk[i], strlen(junk[i]), &prof, err, sizeof(err)),
                         -EINVAL);
        ck_assert_ptr_null(prof);
        ck_assert_msg(strncmp(err, "profile body: ", 14) == 0 && strlen(err) > 20, "'%s': %s",
                      junk[i], err);
    }
    ck_assert_int_eq(agent_profile_parse(t, good, strlen(good) - 1, &prof, NULL, 0), -EINVAL);
    free(good);
    fab_topo_free(t);
}
END_TEST

Suite *agent_profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_add_test(tc, test_agent_profile_lab_h0);
    tcase_add_test(tc, test_agent_profile_peer_paths);
    tcase_add_test(tc, test_agent_profile_cc_none);
    tcase_add_test(tc, test_agent_profile_missing_cables);
    tcase_add_test(tc, test_agent_profile_other_fabric);
    tcase_add_test(tc, test_agent_profile_bad_bodies);
    suite_add_tcase(s, tc);
    return s;
}
