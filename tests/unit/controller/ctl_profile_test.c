/* SPDX-License-Identifier: MIT */
/* Host profiles: on the lab fabric every EV of a class names a path fab_path_enum has, and the
 * peer's paths carry the outer addresses the template makes; on a fabric with missing cables
 * the destinations split into classes by the T1s they share; the CC profile is the engine's. */
#include <check.h>
#include <mrcfab/mrc.h>
#include <stdio.h>
#include <string.h>

#include "ctl_profile.h"
#include "util_test.h"

#define LAB CTL_TEST_ROOT "/deploy/topologies/lab.json"
#define SMALL CTL_TEST_ROOT "/tests/unit/fabric/data/small.json"

static const ctl_profile_cfg CFG = {"uet-1.0-nscc", 100, 12000, 4096, true};

static fab_topo *load(const char *path)
{
    fab_topo *t;
    fab_error err;
    ck_assert_msg(fab_topo_load_file(path, &t, &err) == 0, "%s: %s", path, err.msg);
    return t;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no '%s' in %s", key,
                  json_object_to_json_string(o));
    return v;
}

/* The classes of plane |p| as "kind t0s t1s;" in order. */
static void classes_of(json_object *prof, unsigned p, char *out, size_t len)
{
    json_object *cl = get(prof, "classes");
    out[0] = 0;
    for (size_t i = 0; i < json_object_array_length(cl); i++) {
        json_object *c = json_object_array_get_idx(cl, i), *t1s = NULL;
        if ((unsigned)json_object_get_int(get(c, "plane")) != p) {
            continue;
        }
        json_object_object_get_ex(c, "t1s", &t1s);
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s %s %s;", json_object_get_string(get(c, "kind")),
                 json_object_get_string(get(c, "t0s")), t1s ? json_object_get_string(t1s) : "-");
    }
}

START_TEST(test_ctl_profile_lab)
{
    fab_topo *t = load(LAB);
    ctl_blast *b = ctl_blast_new(t);
    uint32_t h3 = fab_host_find(t, "h3"), h5 = fab_host_find(t, "h5");
    json_object *prof = ctl_profile_json(t, b, &CFG, h3, h5);
    ck_assert_ptr_nonnull(prof);
    ck_assert_str_eq(json_object_get_string(get(prof, "host")), "h3");
    json_object *ports = get(prof, "ports");
    ck_assert_uint_eq(json_object_array_length(ports), 2);
    json_object *p1 = json_object_array_get_idx(ports, 1);
    ck_assert_str_eq(json_object_get_string(get(p1, "t0")), "p1-t0-1");
    ck_assert_str_eq(json_object_get_string(get(p1, "address")), "fdbb:bb00:1:1:1::1");
    char cls[256];
    classes_of(prof, 0, cls, sizeof(cls));
    ck_assert_str_eq(cls, "local 1 -;remote 0,2-3 0-1;");
    /* every path to the peer: its EV names it, and its outer address is the template's */
    fab_template tmpl;
    ck_assert_int_eq(fab_template_init(t, h3, h5, &tmpl), 0);
    json_object *paths = get(get(prof, "peer"), "paths");
    ck_assert_uint_eq(json_object_array_length(paths), 4);
    for (size_t i = 0; i < 4; i++) {
        json_object *x = json_object_array_get_idx(paths, i);
        uint32_t ev = (uint32_t)json_object_get_int64(get(x, "ev"));
        uint8_t want[16];
        char s[64];
        ck_assert_int_eq(fab_template_outer(&tmpl, ev, want), 0);
        ck_assert_str_eq(json_object_get_string(get(x, "outer")), fab_addr_str(want, s));
        fab_path path;
        ck_assert_int_eq(fab_path_of_ev(t, h3, h5, ev, &path), 0);
        ck_assert_int_eq(path.t1, json_object_get_int(get(x, "t1")));
    }
    /* the CC profile is what the engine resolves: 2 ports x 100 Gb/s x 12 us */
    json_object *nscc = get(get(prof, "cc"), "nscc");
    mrc_cc_nscc_cfg in = {.link_gbps = 200, .base_rtt_ns = 12000}, out;
    ck_assert_int_eq(mrc_cc_nscc_resolve(&in, 4096, true, &out), 0);
    ck_assert_int_eq(json_object_get_int64(get(nscc, "max_cwnd")), (int64_t)out.max_cwnd);
    ck_assert_int_eq(json_object_get_int64(get(nscc, "target_delay_ns")), 9000);
    ck_assert(json_object_get_type(get(nscc, "qa_threshold_ns")) == json_type_null);
    json_object_put(prof);
    ctl_blast_free(b);
    fab_topo_free(t);
}
END_TEST

START_TEST(test_ctl_profile_missing_cables)
{
    /* small.json: 3 T0 and 2 T1 per plane; p0-t0-1 has no cable to p0-t1-0, p1-t0-2 none to
     * p1-t1-1; h5 (under T0 1) has no port 1 */
    fab_topo *t = load(SMALL);
    ctl_blast *b = ctl_blast_new(t);
    json_object *prof = ctl_profile_json(t, b, &CFG, fab_host_find(t, "h0"), FAB_NONE);
    char cls[256];
    classes_of(prof, 0, cls, sizeof(cls));
    ck_assert_str_eq(cls, "local 0 -;remote 1 1;remote 2 0-1;");
    classes_of(prof, 1, cls, sizeof(cls));
    ck_assert_str_eq(cls, "local 0 -;remote 1 0-1;remote 2 0;");
    ck_assert(!json_object_object_get_ex(prof, "peer", NULL));
    json_object_put(prof);
    prof = ctl_profile_json(t, b, &CFG, fab_host_find(t, "h5"), FAB_NONE);
    json_object *port1 = json_object_array_get_idx(get(prof, "ports"), 1);
    ck_assert(!json_object_get_boolean(get(port1, "cabled")));
    classes_of(prof, 1, cls, sizeof(cls));
    ck_assert_str_eq(cls, "");
    /* one cabled port: NSCC's link is one port's rate */
    ck_assert_double_eq_tol(json_object_get_double(get(get(get(prof, "cc"), "nscc"), "link_gbps")),
                            100, 1e-9);
    json_object_put(prof);
    ctl_profile_cfg none = CFG, bad = CFG;
    none.cc = "none";
    prof = ctl_profile_json(t, b, &none, 0, FAB_NONE);
    ck_assert(!json_object_object_get_ex(get(prof, "cc"), "nscc", NULL));
    json_object_put(prof);
    bad.base_rtt_ns = 0;
    ck_assert_ptr_null(ctl_profile_json(t, b, &bad, 0, FAB_NONE));
    ctl_blast_free(b);
    fab_topo_free(t);
}
END_TEST

Suite *ctl_profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_add_test(tc, test_ctl_profile_lab);
    tcase_add_test(tc, test_ctl_profile_missing_cables);
    suite_add_tcase(s, tc);
    return s;
}
