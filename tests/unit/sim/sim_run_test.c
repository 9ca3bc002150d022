/* SPDX-License-Identifier: MIT */
/* Unit tests of whole runs on small fabrics: trimming at the last hop and no ECN mark there,
 * drops without trimming, PFC's lossless class, a NIC port down taking its plane out, and
 * byte-for-byte determinism for a seed. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim_run.h"

#define DATA SIM_TEST_DATA "/run"

typedef struct run {
    sim_scenario *sc;
    sim_results res;
    sim_series ts;
} run;

static void load(run *r, const char *name, uint64_t seed)
{
    char err[512], path[512];
    snprintf(path, sizeof(path), DATA "/%s", name);
    memset(r, 0, sizeof(*r));
    ck_assert_msg(sim_scenario_load(path, false, seed, &r->sc, err, sizeof(err)) == 0, "%s: %s",
                  name, err);
}

static void go(run *r)
{
    char err[512];
    ck_assert_msg(sim_run(r->sc, false, &r->res, &r->ts, err, sizeof(err)) == 0, "%s", err);
}

static void done(run *r)
{
    sim_results_free(&r->res, &r->ts);
    sim_scenario_free(r->sc);
}

static void all_complete(const run *r)
{
    for (unsigned i = 0; i < r->res.nflows; i++) {
        const sim_flow_result *f = &r->res.flows[i];
        ck_assert_msg(f->end_ps > 0 && !f->failed, "flow %s did not complete", f->label);
    }
    ck_assert_uint_eq(r->res.totals.qp_failures, 0);
}

/* Two MRC senders into one host: only its T0's port to it is short, and there MRC packets are
 * trimmed, not dropped, and not ECN-marked (MRC wants no marks on the last hop). */
START_TEST(test_sim_run_trims_at_last_hop)
{
    run r;
    load(&r, "incast.json", UINT64_MAX);
    go(&r);
    all_complete(&r);
    const sim_totals *t = &r.res.totals;
    ck_assert_uint_gt(t->trims, 0);
    ck_assert_uint_eq(t->drops, 0);
    ck_assert_uint_eq(t->ecn_marks, 0);
    ck_assert_uint_ge(t->nacks, t->trims);
    ck_assert_uint_ge(t->retransmissions, t->trims);
    done(&r);
}
END_TEST

/* ... and with trimming off the same queue drops them, which MRC repairs. */
START_TEST(test_sim_run_drops_without_trimming)
{
    run r;
    load(&r, "incast.json", UINT64_MAX);
    r.sc->net.trim = false;
    r.sc->net.buffer_bytes = 96 * 1024; /* what trim_at holds */
    go(&r);
    all_complete(&r);
    ck_assert_uint_eq(r.res.totals.trims, 0);
    ck_assert_uint_gt(r.res.totals.drops, 0);
    ck_assert_uint_ge(r.res.totals.retransmissions, r.res.totals.drops);
    done(&r);
}
END_TEST

/* RoCE with PFC: the same incast pauses its senders and drops nothing; without PFC it drops
 * and go-back-N repairs. */
START_TEST(test_sim_run_pfc_lossless)
{
    run r;
    load(&r, "incast-roce.json", UINT64_MAX);
    go(&r);
    all_complete(&r);
    ck_assert_uint_gt(r.res.totals.pfc_pauses, 0);
    ck_assert_uint_eq(r.res.totals.drops, 0);
    ck_assert_uint_eq(r.res.totals.retransmissions, 0);
    done(&r);
    load(&r, "incast-roce.json", UINT64_MAX);
    r.sc->net.pfc = false;
    go(&r);
    all_complete(&r);
    ck_assert_uint_eq(r.res.totals.pfc_pauses, 0);
    ck_assert_uint_gt(r.res.totals.drops, 0);
    ck_assert_uint_gt(r.res.totals.retransmissions, 0);
    done(&r);
}
END_TEST

/* A NIC port down from the start: the flow completes on the other plane, and the dead plane
 * carries next to nothing (the receiver's reverse-EV probes toward the dead port). */
START_TEST(test_sim_run_nic_down_plane)
{
    run r;
    load(&r, "nicdown.json", UINT64_MAX);
    go(&r);
    all_complete(&r);
    ck_assert_uint_eq(r.ts.nplanes, 2);
    double util[2] = {0, 0};
    for (size_t i = 0; i < r.ts.nrows; i++) {
        util[0] += r.ts.plane_util[i * 2];
        util[1] += r.ts.plane_util[i * 2 + 1];
    }
    ck_assert_double_gt(util[0], 0);
    ck_assert_msg(util[1] < util[0] / 100, "plane 1 %.4f, plane 0 %.4f", util[1], util[0]);
    done(&r);
}
END_TEST

static bool same(const run *a, const run *b)
{
    if (a->res.nflows != b->res.nflows || a->ts.nrows != b->ts.nrows ||
        memcmp(&a->res.totals, &b->res.totals, sizeof(a->res.totals)) != 0 ||
        a->res.sim.events != b->res.sim.events) {
        return false;
    }
    for (unsigned i = 0; i < a->res.nflows; i++) {
        const sim_flow_result *x = &a->res.flows[i], *y = &b->res.flows[i];
        if (x->end_ps != y->end_ps || x->retransmissions != y->retransmissions ||
            x->src != y->src || x->dst != y->dst) {
            return false;
        }
    }
    size_t cells = a->ts.nrows * a->ts.nflows;
    return memcmp(a->ts.flow_gbps, b->ts.flow_gbps, cells * sizeof(double)) == 0;
}

/* One scenario and seed, one run: MRC and RoCE, random loss, a random permutation. */
START_TEST(test_sim_run_deterministic)
{
    run a, b, c;
    load(&a, "permutation.json", 7);
    load(&b, "permutation.json", 7);
    load(&c, "permutation.json", 8);
    go(&a);
    go(&b);
    go(&c);
    all_complete(&a);
    ck_assert_uint_gt(a.res.totals.drops, 0);
    ck_assert(same(&a, &b));
    ck_assert(!same(&a, &c));
    done(&a);
    done(&b);
    done(&c);
}
END_TEST

Suite *sim_run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("run");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sim_run_trims_at_last_hop);
    tcase_add_test(tc, test_sim_run_drops_without_trimming);
    tcase_add_test(tc, test_sim_run_pfc_lossless);
    tcase_add_test(tc, test_sim_run_nic_down_plane);
    tcase_add_test(tc, test_sim_run_deterministic);
    suite_add_tcase(s, tc);
    return s;
}
