/* SPDX-License-Identifier: MIT */
/* Unit tests of the scenario loader: defaults, every field of the README example, units, the
 * reduced merge patch, the seed override, both topology forms, and every rejected input. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_scenario.h"

#define GOOD SIM_TEST_DATA "/scenario/good"
#define BAD SIM_TEST_DATA "/scenario/bad"
/* 4 planes of 8 T0 and 8 T1 switches (radix 16), hosts h0-h63: 8 per T0 */
#define AR64 GOOD "/topologies/ar64.json"

#define PS_MS (1000 * SIM_PS_PER_US)

/* Loads |path| or fails the test with the loader's message. */
static sim_scenario *load_ok(const char *path, bool reduced, uint64_t seed)
{
    sim_scenario *sc = NULL;
    char err[512] = "";
    int rv = sim_scenario_load(path, reduced, seed, &sc, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s: %s", path, err);
    ck_assert_ptr_nonnull(sc);
    ck_assert_ptr_nonnull(sc->topo);
    return sc;
}

/*
 * A scratch scenario file: |doc| with ' for " (so that the tables stay readable). A |doc| that
 * starts with a key ('...': ...) is the inside of the root object, after "topology": AR64; any
 * other is the whole file.
 */
typedef struct scratch {
    char dir[64];
    char path[96];
} scratch;

static void scratch_write(scratch *s, const char *doc)
{
    snprintf(s->dir, sizeof(s->dir), "/tmp/sim_scenario_test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    snprintf(s->path, sizeof(s->path), "%s/scenario.json", s->dir);
    FILE *f = fopen(s->path, "w");
    ck_assert_ptr_nonnull(f);
    bool inner = doc[0] == '\'';
    if (inner) {
        fprintf(f, "{\"topology\": \"%s\", ", AR64);
    }
    for (const char *p = doc; *p; p++) {
        fputc(*p == '\'' ? '"' : *p, f);
    }
    if (inner) {
        fputc('}', f);
    }
    ck_assert_int_eq(fclose(f), 0);
}

static void scratch_remove(scratch *s)
{
    unlink(s->path);
    rmdir(s->dir);
}

/* Loads |doc| (as scratch_write takes it); the loader's return value and message. */
static int load_doc(const char *doc, bool reduced, sim_scenario **psc, char *err, size_t errlen)
{
    scratch s;
    scratch_write(&s, doc);
    int rv = sim_scenario_load(s.path, reduced, UINT64_MAX, psc, err, errlen);
    scratch_remove(&s);
    return rv;
}

static sim_scenario *load_doc_ok(const char *doc)
{
    sim_scenario *sc = NULL;
    char err[512] = "";
    int rv = load_doc(doc, false, &sc, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s: %s", doc, err);
    return sc;
}

static uint32_t host(const sim_scenario *sc, const char *name)
{
    uint32_t h = fab_host_find(sc->topo, name);
    ck_assert_msg(h != FAB_NONE, "no host %s", name);
    return h;
}

static uint32_t sw(const sim_scenario *sc, const char *name)
{
    uint32_t s = fab_switch_find(sc->topo, name);
    ck_assert_msg(s != FAB_NONE, "no switch %s", name);
    return s;
}

/* Checks that |ref| is the cable of switch |a| to switch |b|, leaving |a| in direction |dir|. */
static void check_cable(const sim_scenario *sc, const sim_link_ref *ref, const char *a,
                        const char *b, sim_dir dir)
{
    fab_peer peer;
    ck_assert_uint_eq(ref->sw, sw(sc, a));
    ck_assert_int_eq(fab_switch_peer(sc->topo, ref->sw, ref->port, &peer), 0);
    ck_assert_int_eq(peer.kind, FAB_PEER_SWITCH);
    ck_assert_uint_eq(peer.id, sw(sc, b));
    ck_assert_int_eq(ref->dir, dir);
}

/* Checks that |ref| is the T0 end of host |h|'s port |port|, in direction |dir|. */
static void check_host_cable(const sim_scenario *sc, const sim_link_ref *ref, const char *h,
                             unsigned port, sim_dir dir)
{
    uint32_t t0;
    unsigned t0port;
    ck_assert_int_eq(fab_host_attach(sc->topo, host(sc, h), port, &t0, &t0port), 0);
    ck_assert_uint_eq(ref->sw, t0);
    ck_assert_uint_eq(ref->port, t0port);
    ck_assert_int_eq(ref->dir, dir);
}

static void check_default_net(const sim_net_cfg *n)
{
    ck_assert_double_eq(n->host.gbps, 100);
    ck_assert_uint_eq(n->host.delay_ps, 500 * SIM_PS_PER_NS);
    ck_assert_double_eq(n->fabric.gbps, 100);
    ck_assert_uint_eq(n->fabric.delay_ps, 500 * SIM_PS_PER_NS);
    ck_assert_uint_eq(n->switch_latency_ps, 300 * SIM_PS_PER_NS);
    ck_assert_uint_eq(n->buffer_bytes, 512 * 1024);
    ck_assert_uint_eq(n->ctrl_buffer_bytes, 512 * 1024);
    ck_assert_uint_eq(n->trim_bytes, 96 * 1024);
    ck_assert_uint_eq(n->ecn_kmin, 40 * 1024);
    ck_assert_uint_eq(n->ecn_kmax, 160 * 1024);
    ck_assert_double_eq(n->ecn_pmax, 0.2);
    ck_assert(n->trim);
    ck_assert(!n->pfc);
    ck_assert_uint_eq(n->pfc_xoff, 256 * 1024);
    ck_assert_uint_eq(n->pfc_xon, 128 * 1024);
    ck_assert_uint_eq(n->ecmp_converge_ps, PS_MS);
}

static void check_default_mrc(const sim_mrc_cfg *m)
{
    ck_assert_uint_eq(m->evs, 128);
    ck_assert_uint_eq(m->active, 0);
    ck_assert_uint_eq(m->min_active, 0);
    ck_assert_uint_eq(m->mtu, 4096);
    ck_assert_uint_eq(m->mpr, 8);
    ck_assert_uint_eq(m->timeout, 8);
    ck_assert_uint_eq(m->retry_linear, 7);
    ck_assert_uint_eq(m->retry_exp, 7);
    ck_assert_uint_eq(m->sack_every, 0);
    ck_assert_double_eq(m->ev_loss_pct, -1);
}

static void check_default_roce(const sim_roce_cfg *r)
{
    ck_assert_uint_eq(r->mtu, 4096);
    ck_assert_uint_eq(r->qps, 1);
    ck_assert_uint_eq(r->timeout_ps, 67108864 * SIM_PS_PER_NS);
    ck_assert_uint_eq(r->retry, 7);
    ck_assert_uint_eq(r->ack_every, 16);
    ck_assert_int_eq(r->plane, -1);
    ck_assert(!r->dcqcn);
    ck_assert_double_eq(r->dc.g, 1.0 / 256);
    ck_assert_double_eq(r->dc.rate_ai_gbps, 5);
    ck_assert_double_eq(r->dc.rate_hai_gbps, 50);
    ck_assert_double_eq(r->dc.min_rate_gbps, 0.1);
    ck_assert_uint_eq(r->dc.alpha_timer_ps, 55 * SIM_PS_PER_US);
    ck_assert_uint_eq(r->dc.rate_timer_ps, 55 * SIM_PS_PER_US);
    ck_assert_uint_eq(r->dc.byte_counter, 10 * 1024 * 1024);
    ck_assert_uint_eq(r->dc.fast_recovery, 5);
    ck_assert_uint_eq(r->dc.cnp_interval_ps, 50 * SIM_PS_PER_US);
}

START_TEST(test_sim_scenario_defaults)
{
    sim_scenario sc;
    memset(&sc, 0xa5, sizeof(sc));
    sim_scenario_defaults(&sc);
    check_default_net(&sc.net);
    check_default_mrc(&sc.mrc);
    check_default_roce(&sc.roce);
    ck_assert_uint_eq(sc.end_ps, 100 * PS_MS);
    ck_assert_uint_eq(sc.sample_ps, 10 * SIM_PS_PER_US);
    ck_assert_uint_eq(sc.seed, 1);
    ck_assert_ptr_null(sc.topo);
    ck_assert_ptr_null(sc.topology_path);
    ck_assert_ptr_null(sc.description);
    ck_assert_ptr_null(sc.traffic);
    ck_assert_ptr_null(sc.faults);
    ck_assert_uint_eq(sc.ntraffic, 0);
    ck_assert_uint_eq(sc.nfaults, 0);
}
END_TEST

START_TEST(test_sim_scenario_minimal_is_defaults)
{
    sim_scenario *sc = load_ok(GOOD "/minimal.json", false, UINT64_MAX);
    check_default_net(&sc->net);
    check_default_mrc(&sc->mrc);
    check_default_roce(&sc->roce);
    ck_assert_uint_eq(sc->end_ps, 100 * PS_MS);
    ck_assert_uint_eq(sc->sample_ps, 10 * SIM_PS_PER_US);
    ck_assert_uint_eq(sc->seed, 1);
    ck_assert_str_eq(sc->name, "minimal"); /* the file's name */
    ck_assert_ptr_null(sc->description);
    ck_assert_ptr_null(sc->experiment);
    ck_assert_ptr_null(sc->paper);
    ck_assert_str_eq(sc->topology_path, GOOD "/topologies/ar64.json");
    ck_assert_uint_eq(fab_topo_nhosts(sc->topo), 64);
    ck_assert_uint_eq(sc->ntraffic, 0);
    ck_assert_uint_eq(sc->nfaults, 0);
    sim_scenario_free(sc);
    sim_scenario_free(NULL);
}
END_TEST

/* Every field of the README's example, which the fixture holds verbatim. */
START_TEST(test_sim_scenario_readme_example)
{
    sim_scenario *sc = load_ok(GOOD "/readme-example.json", false, UINT64_MAX);
    ck_assert_str_eq(sc->name, "allreduce-mrc");
    ck_assert_str_eq(sc->description, "64-rank ring all-reduce, one MRC QP per neighbour");
    ck_assert_str_eq(sc->experiment, "64-rank ring all-reduce");
    ck_assert_str_eq(sc->paper, "one MRC QP reaches the bus bandwidth 16 RoCE QPs do not");
    ck_assert_str_eq(sc->topology_path, GOOD "/topologies/ar64.json");
    ck_assert_str_eq(fab_topo_name(sc->topo), "ar64");
    ck_assert_uint_eq(sc->seed, 1);
    ck_assert_uint_eq(sc->end_ps, 50 * PS_MS);
    ck_assert_uint_eq(sc->sample_ps, 10 * SIM_PS_PER_US);
    check_default_net(&sc->net);
    check_default_mrc(&sc->mrc);
    check_default_roce(&sc->roce);

    ck_assert_uint_eq(sc->ntraffic, 4);
    const sim_traffic *t = &sc->traffic[0];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_ALLREDUCE);
    ck_assert_int_eq(t->transport, SIM_MRC);
    ck_assert_str_eq(t->label, "allreduce");
    ck_assert_uint_eq(t->qps, 0);
    ck_assert_uint_eq(t->start_ps, 0);
    ck_assert_uint_eq(t->bytes, 16 << 20);
    ck_assert_uint_eq(t->slices, 4);
    ck_assert_uint_eq(t->nhosts, 64);
    for (unsigned i = 0; i < 64; i++) {
        ck_assert_uint_eq(t->hosts[i], i);
    }
    ck_assert_uint_eq(t->receiver, FAB_NONE);
    ck_assert_uint_eq(t->nflows, 0);
    t = &sc->traffic[1];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_PERMUTATION);
    ck_assert_int_eq(t->transport, SIM_ROCE);
    ck_assert_str_eq(t->label, "permutation");
    ck_assert_uint_eq(t->qps, 4);
    ck_assert_uint_eq(t->bytes, 2 << 20);
    ck_assert_uint_eq(t->nhosts, 64);
    ck_assert_uint_eq(t->hosts[63], 63);
    t = &sc->traffic[2];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_INCAST);
    ck_assert_int_eq(t->transport, SIM_MRC);
    ck_assert_str_eq(t->label, "incast");
    ck_assert_uint_eq(t->bytes, 4 << 20);
    ck_assert_uint_eq(t->nhosts, 2);
    ck_assert_uint_eq(t->hosts[0], host(sc, "h1"));
    ck_assert_uint_eq(t->hosts[1], host(sc, "h2"));
    ck_assert_uint_eq(t->receiver, host(sc, "h0"));
    t = &sc->traffic[3];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_FLOWS);
    ck_assert_str_eq(t->label, "flows");
    ck_assert_uint_eq(t->nhosts, 0);
    ck_assert_uint_eq(t->nflows, 1);
    ck_assert_uint_eq(t->flows[0].src, host(sc, "h8"));
    ck_assert_uint_eq(t->flows[0].dst, host(sc, "h1"));
    ck_assert_uint_eq(t->flows[0].bytes, 64 << 20);
    ck_assert_uint_eq(t->flows[0].start_ps, 0);
    ck_assert_str_eq(t->flows[0].label, "victim");

    ck_assert_uint_eq(sc->nfaults, 8);
    const sim_fault *f = &sc->faults[0];
    ck_assert_int_eq(f->kind, SIM_FAULT_LINK_DOWN);
    ck_assert_uint_eq(f->at_ps, PS_MS);
    ck_assert_uint_eq(f->duration_ps, 2 * PS_MS);
    ck_assert_uint_eq(f->interval_ps, 100 * SIM_PS_PER_US);
    ck_assert_uint_eq(f->nlinks, 1);
    check_cable(sc, &f->links[0], "p0-t0-0", "p0-t1-3", SIM_DIR_BOTH);
    ck_assert_uint_eq(f->random_links, 0);
    ck_assert(!f->all_links);
    f = &sc->faults[1];
    ck_assert_int_eq(f->kind, SIM_FAULT_LINK_DOWN);
    ck_assert_uint_eq(f->at_ps, PS_MS);
    ck_assert_uint_eq(f->duration_ps, 0);
    ck_assert_uint_eq(f->random_links, 20);
    ck_assert_uint_eq(f->nlinks, 0);
    ck_assert_ptr_null(f->links);
    ck_assert_uint_eq(f->interval_ps, 200 * SIM_PS_PER_US);
    f = &sc->faults[2];
    ck_assert_int_eq(f->kind, SIM_FAULT_FLAP);
    ck_assert_uint_eq(f->nlinks, 1);
    check_host_cable(sc, &f->links[0], "h5", 2, SIM_DIR_BOTH);
    ck_assert_uint_eq(f->duration_ps, 50 * SIM_PS_PER_US);
    ck_assert_uint_eq(f->period_ps, 500 * SIM_PS_PER_US);
    ck_assert_uint_eq(f->count, 4);
    f = &sc->faults[3];
    ck_assert_int_eq(f->kind, SIM_FAULT_LOSS);
    ck_assert_uint_eq(f->at_ps, 0);
    ck_assert(f->all_links);
    ck_assert_uint_eq(f->nlinks, 0);
    ck_assert_int_eq(f->dir, SIM_DIR_BOTH);
    ck_assert_double_eq(f->loss, 0.001);
    f = &sc->faults[4];
    ck_assert_int_eq(f->kind, SIM_FAULT_EV_LOSS);
    ck_assert_uint_eq(f->host, host(sc, "h0"));
    ck_assert_uint_eq(f->dst, host(sc, "h1"));
    ck_assert_uint_eq(f->ev, fab_ev_make(fab_topo_plan(sc->topo), 1, 3, 0));
    ck_assert_double_eq(f->loss, 0.2);
    f = &sc->faults[5];
    ck_assert_int_eq(f->kind, SIM_FAULT_BLACKHOLE);
    ck_assert_uint_eq(f->sw, sw(sc, "p0-t1-2"));
    ck_assert_uint_eq(f->at_ps, PS_MS);
    ck_assert_uint_eq(f->duration_ps, 0);
    f = &sc->faults[6];
    ck_assert_int_eq(f->kind, SIM_FAULT_REBOOT);
    ck_assert_uint_eq(f->sw, sw(sc, "p0-t1-2"));
    ck_assert_uint_eq(f->at_ps, 3 * PS_MS);
    ck_assert_uint_eq(f->duration_ps, 2 * PS_MS);
    f = &sc->faults[7];
    ck_assert_int_eq(f->kind, SIM_FAULT_NIC_DOWN);
    ck_assert_uint_eq(f->host, host(sc, "h3"));
    ck_assert_uint_eq(f->port, 1);
    ck_assert_uint_eq(f->sw, FAB_NONE);
    sim_scenario_free(sc);
}
END_TEST

/* Every kind, every cable direction, an EV given as a number, the largest seed. */
START_TEST(test_sim_scenario_every_kind)
{
    sim_scenario *sc = load_ok(GOOD "/every-kind.json", false, UINT64_MAX);
    const fab_plan *plan = fab_topo_plan(sc->topo);
    ck_assert_uint_eq(sc->seed, UINT64_MAX - 1);
    ck_assert_uint_eq(sc->ntraffic, 3);
    const sim_traffic *t = &sc->traffic[0];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_ALLTOALL);
    ck_assert_uint_eq(t->bytes, 512 * 1024);
    ck_assert_uint_eq(t->nhosts, 3);
    ck_assert_uint_eq(t->hosts[0], host(sc, "h3"));
    ck_assert_uint_eq(t->hosts[1], host(sc, "h9"));
    ck_assert_uint_eq(t->hosts[2], host(sc, "h17"));
    t = &sc->traffic[1];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_INCAST);
    ck_assert_int_eq(t->transport, SIM_ROCE);
    ck_assert_str_eq(t->label, "in-cast");
    ck_assert_uint_eq(t->bytes, 1000);
    ck_assert_uint_eq(t->receiver, host(sc, "h63"));
    ck_assert_uint_eq(t->nhosts, 63); /* "all" but the receiver */
    for (unsigned i = 0; i < t->nhosts; i++) {
        ck_assert_uint_ne(t->hosts[i], t->receiver);
    }
    t = &sc->traffic[2];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_PERMUTATION);
    ck_assert_uint_eq(t->bytes, 1000000000);
    ck_assert_uint_eq(t->start_ps, 1250 * SIM_PS_PER_US);
    ck_assert_uint_eq(t->nhosts, 64);

    ck_assert_uint_eq(sc->nfaults, 12);
    const sim_fault *f = &sc->faults[0];
    ck_assert_uint_eq(f->at_ps, 1000 * PS_MS);
    ck_assert_uint_eq(f->nlinks, 5);
    check_cable(sc, &f->links[0], "p3-t1-7", "p3-t0-6", SIM_DIR_IN);
    check_cable(sc, &f->links[1], "p0-t0-1", "p0-t1-0", SIM_DIR_OUT);
    check_host_cable(sc, &f->links[2], "h10", 3, SIM_DIR_IN);
    check_host_cable(sc, &f->links[3], "h11", 0, SIM_DIR_OUT);
    check_host_cable(sc, &f->links[4], "h12", 1, SIM_DIR_BOTH);
    f = &sc->faults[1];
    ck_assert_int_eq(f->kind, SIM_FAULT_LINK_UP);
    ck_assert_uint_eq(f->interval_ps, 10 * SIM_PS_PER_NS);
    check_host_cable(sc, &f->links[0], "h10", 3, SIM_DIR_BOTH);
    f = &sc->faults[2];
    ck_assert_int_eq(f->kind, SIM_FAULT_FLAP);
    ck_assert_uint_eq(f->at_ps, 0);
    ck_assert_uint_eq(f->random_links, 3);
    ck_assert_uint_eq(f->count, 0);
    f = &sc->faults[3];
    ck_assert_int_eq(f->kind, SIM_FAULT_LOSS);
    ck_assert(f->all_links && !f->hosts_only);
    ck_assert_int_eq(f->dir, SIM_DIR_IN);
    ck_assert_double_eq(f->loss, 1);
    f = &sc->faults[4];
    ck_assert(!f->all_links);
    ck_assert_uint_eq(f->random_links, 2);
    ck_assert_uint_eq(f->nlinks, 1);
    check_cable(sc, &f->links[0], "p2-t0-2", "p2-t1-5", SIM_DIR_BOTH);
    ck_assert_double_eq(f->loss, 0);
    f = &sc->faults[5];
    ck_assert_int_eq(f->kind, SIM_FAULT_EV_LOSS);
    ck_assert_uint_eq(f->ev, 0x40000005u);
    ck_assert_uint_eq(fab_ev_plane(plan, f->ev), 2);
    ck_assert_uint_eq(fab_ev_salt(plan, f->ev), 5);
    f = &sc->faults[6];
    ck_assert_uint_eq(f->ev, fab_ev_make(plan, 3, 7, 262143));
    ck_assert_uint_eq(fab_ev_t1(plan, f->ev), 7);
    ck_assert_uint_eq(fab_ev_salt(plan, f->ev), 262143);
    f = &sc->faults[7];
    ck_assert_int_eq(f->kind, SIM_FAULT_BLACKHOLE);
    ck_assert_uint_eq(f->sw, sw(sc, "p1-t0-5"));
    ck_assert_uint_eq(f->duration_ps, 2 * PS_MS);
    ck_assert_uint_eq(f->host, FAB_NONE);
    ck_assert_uint_eq(f->dst, FAB_NONE);
    f = &sc->faults[8];
    ck_assert_int_eq(f->kind, SIM_FAULT_REBOOT);
    ck_assert_uint_eq(f->duration_ps, SIM_PS_PER_NS);
    f = &sc->faults[9];
    ck_assert_int_eq(f->kind, SIM_FAULT_NIC_DOWN);
    ck_assert_uint_eq(f->host, host(sc, "h20"));
    ck_assert_uint_eq(f->port, 0);
    f = &sc->faults[10];
    ck_assert_int_eq(f->kind, SIM_FAULT_NIC_UP);
    f = &sc->faults[11];
    ck_assert_int_eq(f->kind, SIM_FAULT_LOSS);
    ck_assert(f->all_links && f->hosts_only);
    ck_assert_int_eq(f->dir, SIM_DIR_OUT);
    ck_assert_double_eq(f->loss, 0.01);
    sim_scenario_free(sc);
}
END_TEST

/* The topology as an object in the scenario, and the default labels and starts of flows. */
START_TEST(test_sim_scenario_inline_topology)
{
    sim_scenario *sc = load_ok(GOOD "/inline-topology.json", false, UINT64_MAX);
    ck_assert_ptr_null(sc->topology_path);
    ck_assert_str_eq(fab_topo_name(sc->topo), "lab");
    ck_assert_uint_eq(fab_topo_nhosts(sc->topo), 8);
    ck_assert_uint_eq(fab_topo_planes(sc->topo), 2);
    ck_assert_uint_eq(sc->end_ps, 2 * PS_MS);
    ck_assert_uint_eq(sc->sample_ps, 1500); /* 1.5 ns */
    ck_assert_uint_eq(sc->ntraffic, 2);
    const sim_traffic *t = &sc->traffic[0];
    ck_assert_uint_eq(t->nflows, 2);
    ck_assert_str_eq(t->flows[0].label, "flow0");
    ck_assert_str_eq(t->flows[1].label, "flow1");
    ck_assert_uint_eq(t->flows[0].src, host(sc, "h0"));
    ck_assert_uint_eq(t->flows[0].dst, host(sc, "h7"));
    ck_assert_uint_eq(t->flows[0].bytes, 65536);
    ck_assert_uint_eq(t->flows[1].bytes, 1536);
    ck_assert_uint_eq(t->flows[0].start_ps, 0);
    ck_assert_uint_eq(t->flows[1].start_ps, 2 * SIM_PS_PER_US);
    t = &sc->traffic[1];
    ck_assert_int_eq(t->kind, SIM_TRAFFIC_ALLTOALL);
    ck_assert_int_eq(t->transport, SIM_ROCE);
    ck_assert_str_eq(t->label, "a2a");
    ck_assert_uint_eq(t->bytes, 1000000);
    ck_assert_uint_eq(t->start_ps, 10 * SIM_PS_PER_US);
    ck_assert_uint_eq(t->nhosts, 4);
    ck_assert_uint_eq(sc->nfaults, 1);
    check_cable(sc, &sc->faults[0].links[0], "p1-t1-1", "p1-t0-3", SIM_DIR_BOTH);
    sim_scenario_free(sc);

    /* a flow's start counts from its item's */
    sc = load_doc_ok("'traffic': [{'kind': 'flows', 'start': '3us', 'flows': "
                     "[{'src': 'h0', 'dst': 'h1', 'bytes': 1}, "
                     "{'src': 'h0', 'dst': 'h1', 'bytes': 1, 'start': '1us'}]}]");
    ck_assert_uint_eq(sc->traffic[0].start_ps, 3 * SIM_PS_PER_US);
    ck_assert_uint_eq(sc->traffic[0].flows[0].start_ps, 0);
    ck_assert_uint_eq(sc->traffic[0].flows[1].start_ps, SIM_PS_PER_US);
    sim_scenario_free(sc);
}
END_TEST

/* The reduced version: objects merge, arrays are replaced, null deletes (back to defaults). */
START_TEST(test_sim_scenario_reduced_merge_patch)
{
    sim_scenario *full = load_ok(GOOD "/reduced.json", false, UINT64_MAX);
    sim_scenario *red = load_ok(GOOD "/reduced.json", true, UINT64_MAX);

    ck_assert_str_eq(full->name, "reduced-full");
    ck_assert_str_eq(red->name, "reduced-small");
    ck_assert_ptr_nonnull(full->description);
    ck_assert_ptr_null(red->description); /* null deletes */
    ck_assert_str_eq(red->experiment, "merge patch");
    ck_assert_uint_eq(full->end_ps, 50 * PS_MS);
    ck_assert_uint_eq(red->end_ps, 5 * PS_MS); /* and not the patch's own "reduced" */
    ck_assert_uint_eq(red->sample_ps, 5 * SIM_PS_PER_US);

    /* objects merge key by key */
    ck_assert_double_eq(full->net.host.gbps, 400);
    ck_assert_double_eq(red->net.host.gbps, 100);
    ck_assert_uint_eq(red->net.host.delay_ps, SIM_PS_PER_US);
    ck_assert_uint_eq(red->net.buffer_bytes, 1 << 20);
    ck_assert_uint_eq(full->net.ecn_kmin, 100 * 1024);
    ck_assert_uint_eq(red->net.ecn_kmin, 40 * 1024); /* the object deleted */
    ck_assert_uint_eq(red->net.ecn_kmax, 160 * 1024);
    ck_assert_uint_eq(full->mrc.evs, 256);
    ck_assert_uint_eq(red->mrc.evs, 128); /* one key deleted */
    ck_assert_uint_eq(red->mrc.mtu, 8192);
    ck_assert(!full->roce.dcqcn);
    ck_assert(red->roce.dcqcn); /* an object the document did not have */
    ck_assert_double_eq(red->roce.dc.g, 1.0 / 256);

    /* arrays are replaced whole */
    ck_assert_uint_eq(full->ntraffic, 2);
    ck_assert_uint_eq(red->ntraffic, 1);
    ck_assert_int_eq(red->traffic[0].kind, SIM_TRAFFIC_ALLREDUCE);
    ck_assert_uint_eq(red->traffic[0].nhosts, 8);
    ck_assert_uint_eq(red->traffic[0].bytes, 1 << 20);
    ck_assert_uint_eq(full->nfaults, 1);
    ck_assert_uint_eq(red->nfaults, 0);
    sim_scenario_free(full);
    sim_scenario_free(red);

    /* the README example's reduced version */
    red = load_ok(GOOD "/readme-example.json", true, UINT64_MAX);
    ck_assert_uint_eq(red->end_ps, 5 * PS_MS);
    ck_assert_uint_eq(red->ntraffic, 1);
    ck_assert_uint_eq(red->traffic[0].bytes, 1 << 20);
    ck_assert_uint_eq(red->nfaults, 8);
    sim_scenario_free(red);

    /* without $.reduced, --reduced changes nothing */
    red = load_ok(GOOD "/minimal.json", true, UINT64_MAX);
    ck_assert_uint_eq(red->end_ps, 100 * PS_MS);
    sim_scenario_free(red);

    /* the patch applies before validation: the reduced version alone may be wrong */
    const char *doc = "'end': '1ms', 'reduced': {'end': 0}";
    char err[256];
    red = load_doc_ok(doc);
    sim_scenario_free(red);
    red = NULL;
    ck_assert_int_eq(load_doc(doc, true, &red, err, sizeof(err)), -1);
    ck_assert_ptr_null(red);
    ck_assert_str_eq(err, "$.end: must be longer than 0, not 0");
    /* and the patch may fix what the full version gets wrong */
    ck_assert_int_eq(load_doc("'end': 0, 'reduced': {'end': 1}", false, &red, err, sizeof(err)),
                     -1);
    red = NULL;
    ck_assert_int_eq(load_doc("'end': 0, 'reduced': {'end': 1}", true, &red, err, sizeof(err)), 0);
    ck_assert_uint_eq(red->end_ps, 1000);
    sim_scenario_free(red);
}
END_TEST

START_TEST(test_sim_scenario_seed_override)
{
    sim_scenario *sc = load_ok(GOOD "/every-kind.json", false, UINT64_MAX);
    ck_assert_uint_eq(sc->seed, UINT64_MAX - 1);
    sim_scenario_free(sc);
    sc = load_ok(GOOD "/every-kind.json", false, 42);
    ck_assert_uint_eq(sc->seed, 42);
    sim_scenario_free(sc);
    sc = load_ok(GOOD "/minimal.json", true, 0);
    ck_assert_uint_eq(sc->seed, 0);
    sim_scenario_free(sc);
    sc = load_ok(GOOD "/minimal.json", false, UINT64_MAX);
    ck_assert_uint_eq(sc->seed, 1);
    sim_scenario_free(sc);
}
END_TEST

/* Durations and sizes in every spelling. */
typedef struct unit_case {
    const char *json;
    uint64_t expect;
} unit_case;

static const unit_case duration_cases[] = {
    {"1", 1000},
    {"0.5", 500},
    {"1.0004", 1000}, /* rounded to the ps */
    {"1.0006", 1001},
    {"'7'", 7000},
    {"'10ps'", 10},
    {"'500ns'", 500000},
    {"'1.5us'", 1500000},
    {"'2ms'", 2000000000ull},
    {"'1s'", 1000000000000ull},
    {"'0.000000000001s'", 1},
    {"'1.25ms'", 1250000000ull},
    {"'0.1us'", 100000},
    {"'18446744073709551ns'", 18446744073709551000ull},
};

static const unit_case size_cases[] = {
    {"1", 1},
    {"4096", 4096},
    {"2.0", 2},
    {"'4096'", 4096},
    {"'7B'", 7},
    {"'64KiB'", 65536},
    {"'2MiB'", 2097152},
    {"'1GiB'", 1073741824},
    {"'1.5KiB'", 1536},
    {"'0.5MiB'", 524288},
    {"'1KB'", 1000},
    {"'1.5MB'", 1500000},
    {"'3GB'", 3000000000ull},
    {"'0.1KB'", 100},
    {"'18446744073709551615'", UINT64_MAX},
};

START_TEST(test_sim_scenario_units)
{
    char doc[256];
    for (size_t i = 0; i < sizeof(duration_cases) / sizeof(duration_cases[0]); i++) {
        snprintf(doc, sizeof(doc), "'end': %s", duration_cases[i].json);
        sim_scenario *sc = load_doc_ok(doc);
        ck_assert_msg(sc->end_ps == duration_cases[i].expect, "%s: %" PRIu64 " ps, not %" PRIu64,
                      duration_cases[i].json, sc->end_ps, duration_cases[i].expect);
        sim_scenario_free(sc);
    }
    for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
        snprintf(doc, sizeof(doc), "'roce': {'dcqcn': {'byte_counter': %s}}", size_cases[i].json);
        sim_scenario *sc = load_doc_ok(doc);
        ck_assert_msg(sc->roce.dc.byte_counter == size_cases[i].expect,
                      "%s: %" PRIu64 " bytes, not %" PRIu64, size_cases[i].json,
                      sc->roce.dc.byte_counter, size_cases[i].expect);
        sim_scenario_free(sc);
    }
}
END_TEST

/*
 * Rejected input: |name| is a fixture in data/scenario/bad (|doc| NULL) or a scratch document (see
 * scratch_write); the message must start with |expect|, the JSON path first.
 */
typedef struct bad_case {
    const char *name;
    const char *doc;
    const char *expect;
} bad_case;

/* A one-host and a two-plane fabric for the cases that need them. */
#define TOPO1 "{'topology': {'form': 'parametric', 'planes': 1, 'radix': 2, 'hosts': 1}, "
#define LAB "{'topology': {'form': 'parametric', 'planes': 2, 'radix': 4, 'hosts': 8}, "

static const bad_case bad_cases[] = {
    /* fixtures: faults the schema sees too (tests/schema/check-scenarios.sh) */
    {"root-unknown-key", NULL, "$.sed: unknown key (a scenario takes name, description"},
    {"net-unknown-key", NULL, "$.net.bufer: unknown key (net takes host, fabric,"},
    {"dcqcn-unknown-key", NULL, "$.roce.dcqcn.kmin: unknown key"},
    {"topology-missing", NULL, "$.topology: missing"},
    {"topology-number", NULL, "$.topology: must be a file name or a topology object, not 7"},
    {"duration-bad-unit", NULL, "$.faults[0].at: not a duration: \"1x\""},
    {"duration-negative", NULL, "$.end: must not be negative: \"-1us\""},
    {"duration-zero-end", NULL, "$.end: must be longer than 0"},
    {"duration-space", NULL, "$.sample: not a duration: \"10 us\""},
    {"size-negative", NULL, "$.net.buffer: must not be negative: -5"},
    {"size-bad-unit", NULL, "$.traffic[0].bytes: not a size: \"16Mb\""},
    {"size-fraction", NULL, "$.roce.dcqcn.byte_counter: not a whole number of bytes: 1.5"},
    {"gbps-zero", NULL, "$.net.fabric.gbps: must be a number above 0"},
    {"mrc-mtu-not-power-of-two", NULL,
     "$.mrc.mtu: must be a power of two from 256 to 8192, not 3000"},
    {"roce-mtu-too-big", NULL, "$.roce.mtu: must be a power of two from 256 to 8192, not 16384"},
    {"mrc-evs-zero", NULL, "$.mrc.evs: must be an integer from 1 to 1024, not 0"},
    {"mrc-evs-too-many", NULL, "$.mrc.evs: must be an integer from 1 to 1024, not 2000"},
    {"mrc-evs-string", NULL, "$.mrc.evs: must be an integer, not \"128\""},
    {"mrc-retry-one", NULL, "$.mrc.retry: must be [linear, exponential]"},
    {"mrc-timeout-zero", NULL, "$.mrc.timeout: must be an integer from 1 to 24"},
    {"ecn-pmax-above-1", NULL, "$.net.ecn.pmax: must be a number from 0 to 1, not 1.5"},
    {"trim-string", NULL, "$.net.trim: must be true or false, not \"yes\""},
    {"trim-at-zero", NULL, "$.net.trim_at: must be"},
    {"allreduce-slices-zero", NULL, "$.traffic[0].slices: must be an integer from 1 to 64"},
    {"permutation-slices", NULL, "$.traffic[0].slices: unknown key (permutation traffic takes"},
    {"loss-links-bad-set", NULL,
     "$.faults[0].links: must be a list of cables, \"all\" or \"hosts\", not \"hostz\""},
    {"roce-plane-below-minus-1", NULL, "$.roce.plane: must be -1"},
    {"name-bad-char", NULL, "$.name: must be 1 to 63 characters"},
    {"reduced-array", NULL, "$.reduced: must be an object (a JSON merge patch), not [1]"},
    {"traffic-not-array", NULL, "$.traffic: must be an array"},
    {"traffic-kind-unknown", NULL,
     "$.traffic[0].kind: must be one of flows, allreduce, alltoall, permutation, incast, not "
     "\"broadcast\""},
    {"traffic-kind-missing", NULL, "$.traffic[0].kind: missing"},
    {"traffic-transport-unknown", NULL, "$.traffic[0].transport: must be one of mrc, roce"},
    {"traffic-no-bytes", NULL, "$.traffic[0].bytes: missing"},
    {"traffic-key-of-other-kind", NULL,
     "$.traffic[0].receiver: unknown key (allreduce traffic takes"},
    {"traffic-label-too-long", NULL, "$.traffic[0].label: must be 1 to 31 characters"},
    {"hosts-twice", NULL, "$.traffic[0].hosts[2]: h1 is named twice"},
    {"allreduce-one-host", NULL, "$.traffic[0].hosts: an all-reduce needs at least 2 hosts, not 1"},
    {"alltoall-one-host", NULL, "$.traffic[0].hosts: an all-to-all needs at least 2 hosts, not 1"},
    {"permutation-no-host", NULL,
     "$.traffic[0].hosts: a permutation needs at least 2 hosts, not 0"},
    {"hosts-bad-string", NULL, "$.traffic[0].hosts: must be \"all\", {\"first\": N} or a list"},
    {"incast-no-receiver", NULL, "$.traffic[0].receiver: missing"},
    {"flows-missing", NULL, "$.traffic[0].flows: missing"},
    {"flows-empty", NULL, "$.traffic[0].flows: must list at least one flow"},
    {"flow-no-dst", NULL, "$.traffic[0].flows[0].dst: missing"},
    {"flow-zero-bytes", NULL, "$.traffic[0].flows[0].bytes: must be from 1 to"},
    {"fault-kind-unknown", NULL, "$.faults[0].kind: must be one of link_down, link_up, flap"},
    {"link-down-no-links", NULL,
     "$.faults[0].links: missing (a link_down fault needs links, a list of cables, or "
     "random_links"},
    {"link-down-links-empty", NULL, "$.faults[0].links: must list at least one cable"},
    {"link-down-all", NULL, "$.faults[0].links: \"all\" is only for loss faults"},
    {"link-up-random", NULL, "$.faults[0].random_links: unknown key (a link_up fault takes"},
    {"cable-no-b", NULL, "$.faults[0].links[0].b: missing"},
    {"cable-mixed", NULL, "$.faults[0].links[0].b: unknown key (a host cable takes"},
    {"cable-host-direction-a-to-b", NULL,
     "$.faults[0].links[0].direction: must be one of both, down, up, not \"a-to-b\""},
    {"cable-switch-direction-up", NULL,
     "$.faults[0].links[0].direction: must be one of both, a-to-b, b-to-a, not \"up\""},
    {"flap-no-period", NULL, "$.faults[0].period: missing"},
    {"flap-no-duration", NULL, "$.faults[0].duration: missing"},
    {"random-links-zero", NULL, "$.faults[0].random_links: must be an integer from 1"},
    {"loss-no-rate", NULL, "$.faults[0].rate: missing"},
    {"loss-rate-above-1", NULL, "$.faults[0].rate: must be a number from 0 to 1, not 1.5"},
    {"loss-rate-negative", NULL, "$.faults[0].rate: must be a number from 0 to 1, not -0.1"},
    {"loss-direction-without-all", NULL, "$.faults[0].direction: only with \"links\": \"all\""},
    {"loss-duration", NULL, "$.faults[0].duration: unknown key (a loss fault takes"},
    {"ev-loss-no-src", NULL, "$.faults[0].src: missing"},
    {"ev-loss-no-dst", NULL, "$.faults[0].dst: missing"},
    {"ev-loss-no-ev", NULL, "$.faults[0].ev: missing"},
    {"ev-loss-no-rate", NULL, "$.faults[0].rate: missing"},
    {"ev-loss-ev-no-t1", NULL, "$.faults[0].ev.t1: missing"},
    {"ev-loss-ev-negative", NULL, "$.faults[0].ev: must be an integer from 0 to 4294967295"},
    {"blackhole-no-switch", NULL, "$.faults[0].switch: missing"},
    {"nic-down-duration", NULL, "$.faults[0].duration: unknown key (a nic_down fault takes"},
    {"reboot-no-duration", NULL, "$.faults[0].duration: missing"},
    {"nic-down-no-port", NULL, "$.faults[0].port: missing"},
    {"nic-up-no-host", NULL, "$.faults[0].host: missing"},
    {"root-array", NULL, "$: a scenario is a JSON object, not an array"},

    /* faults only the loader sees: they tie values together or need the fabric */
    {"not-json", "{'end': 1x}", "$: "},
    {"not-json-line", "{\n  'end': 1,\n  'sample': tru\n}", "$: "},
    {"not-json-trailing", "{} {}", "$: "},
    {"topology-file-missing", "{'topology': 'nowhere.json'}", "$.topology: cannot open "},
    {"topology-inline-bad",
     "{'topology': {'form': 'parametric', 'planes': 0, 'radix': 4, "
     "'hosts': 8}}",
     "$.topology.planes: "},
    {"topology-empty", "{'topology': ''}", "$.topology: must not be empty"},
    {"kmax-below-kmin", "'net': {'ecn': {'kmin': '100KiB', 'kmax': '50KiB'}}",
     "$.net.ecn.kmax: must not be below kmin (102400 bytes)"},
    {"kmin-above-default-kmax", "'net': {'ecn': {'kmin': '1MiB'}}",
     "$.net.ecn.kmin: must not be above kmax (163840 bytes, the default)"},
    {"xon-above-xoff", "'net': {'pfc': {'xoff': '100KiB', 'xon': '200KiB'}}",
     "$.net.pfc.xoff: must not be below xon (204800 bytes)"},
    {"xoff-below-default-xon", "'net': {'pfc': {'enabled': true, 'xoff': '64KiB'}}",
     "$.net.pfc.xoff: must not be below xon (131072 bytes)"},
    {"buffer-too-large", "'net': {'buffer': '4GiB'}", "$.net.buffer: must be from 1 to 4294967295"},
    {"size-beyond-64-bits", "'traffic': [{'kind': 'allreduce', 'bytes': 1e20}]",
     "$.traffic[0].bytes: too large: 1e20"},
    {"size-string-beyond-64-bits", "'traffic': [{'kind': 'allreduce', 'bytes': '17179869184GiB'}]",
     "$.traffic[0].bytes: too large: \"17179869184GiB\""},
    {"duration-too-long", "'end': '18446745s'", "$.end: too long: \"18446745s\""},
    {"mrc-active-above-evs", "'mrc': {'evs': 16, 'active': 32}",
     "$.mrc.active: active (32) must not be above evs (16)"},
    {"mrc-evs-below-default-active", "'mrc': {'active': 64, 'evs': 32}", "$.mrc.active: "},
    {"mrc-min-active-above-active", "'mrc': {'active': 8, 'min_active': 9}",
     "$.mrc.min_active: must not be above active (8)"},
    {"roce-plane-beyond", "'roce': {'plane': 4}",
     "$.roce.plane: must be -1 (every QP hashes onto a plane) or a plane from 0 to 3, not 4"},
    {"receiver-unknown", "'traffic': [{'kind': 'incast', 'receiver': 'h99', 'bytes': 1}]",
     "$.traffic[0].receiver: no host named h99"},
    {"hosts-unknown", "'traffic': [{'kind': 'allreduce', 'hosts': ['h1', 'x'], 'bytes': 1}]",
     "$.traffic[0].hosts[1]: no host named x"},
    {"hosts-not-strings", "'traffic': [{'kind': 'allreduce', 'hosts': ['h1', 2], 'bytes': 1}]",
     "$.traffic[0].hosts[1]: must be a string, not 2"},
    {"hosts-first-beyond",
     "'traffic': [{'kind': 'permutation', 'hosts': {'first': 65}, "
     "'bytes': 1}]",
     "$.traffic[0].hosts.first: the fabric has only 64 hosts"},
    {"hosts-first-key", "'traffic': [{'kind': 'permutation', 'hosts': {'last': 2}, 'bytes': 1}]",
     "$.traffic[0].hosts.last: unknown key"},
    {"incast-receiver-sender",
     "'traffic': [{'kind': 'incast', 'receiver': 'h2', "
     "'hosts': ['h1', 'h2'], 'bytes': 1}]",
     "$.traffic[0].hosts[1]: h2 is the receiver"},
    {"incast-receiver-first",
     "'traffic': [{'kind': 'incast', 'receiver': 'h2', "
     "'hosts': {'first': 4}, 'bytes': 1}]",
     "$.traffic[0].hosts.first: the first 4 hosts include the receiver h2"},
    {"allreduce-all-of-one", TOPO1 "'traffic': [{'kind': 'allreduce', 'bytes': 1}]}",
     "$.traffic[0].hosts: an all-reduce needs at least 2 hosts, not 1"},
    {"incast-all-of-one", TOPO1 "'traffic': [{'kind': 'incast', 'receiver': 'h0', 'bytes': 1}]}",
     "$.traffic[0].hosts: an incast needs at least 1 sender, not 0"},
    {"kind-is-transport", "'traffic': [{'kind': 'mrc'}]", "$.traffic[0].kind: must be one of"},
    {"flow-same-host",
     "'traffic': [{'kind': 'flows', 'flows': [{'src': 'h1', 'dst': 'h2', "
     "'bytes': 1}, {'src': 'h8', 'dst': 'h8', 'bytes': 1}]}]",
     "$.traffic[0].flows[1].dst: same host as src (h8)"},
    {"flow-unknown-host",
     "'traffic': [{'kind': 'flows', 'flows': [{'src': 'h64', 'dst': 'h2', "
     "'bytes': 1}]}]",
     "$.traffic[0].flows[0].src: no host named h64"},
    {"traffic-second-item",
     "'traffic': [{'kind': 'allreduce', 'bytes': 1}, {'kind': 'incast', "
     "'receiver': 'h99', 'bytes': 1}]",
     "$.traffic[1].receiver: no host named h99"},
    {"cable-not-cabled",
     "'faults': [{'kind': 'link_down', 'links': [{'a': 'p0-t0-0', "
     "'b': 'p1-t1-0'}]}]",
     "$.faults[0].links[0]: no cable between p0-t0-0 and p1-t1-0"},
    {"cable-t0-t0",
     "'faults': [{'kind': 'link_down', 'links': [{'a': 'p0-t0-0', "
     "'b': 'p0-t0-1'}]}]",
     "$.faults[0].links[0]: no cable between p0-t0-0 and p0-t0-1"},
    {"cable-same-switch",
     "'faults': [{'kind': 'link_down', 'links': [{'a': 'p0-t0-0', "
     "'b': 'p0-t0-0'}]}]",
     "$.faults[0].links[0].b: the same switch as a"},
    {"cable-unknown-switch",
     "'faults': [{'kind': 'link_down', 'links': [{'a': 'p9-t0-0', "
     "'b': 'p0-t1-0'}]}]",
     "$.faults[0].links[0].a: no switch named p9-t0-0"},
    {"cable-host-port-beyond",
     "'faults': [{'kind': 'flap', 'duration': 1, 'period': 2, "
     "'links': [{'host': 'h1', 'port': 4}]}]",
     "$.faults[0].links[0].port: no port 4: the fabric has 4 planes (ports 0 to 3)"},
    {"lab-host-port-beyond",
     LAB "'faults': [{'kind': 'loss', 'rate': 0.1, "
         "'links': [{'host': 'h1', 'port': 2}]}]}",
     "$.faults[0].links[0].port: no port 2: the fabric has 2 planes (ports 0 to 1)"},
    {"cable-host-not-cabled",
     "{'topology': {'form': 'parametric', 'planes': 2, 'radix': 4, 'hosts': 8, 'overrides': "
     "{'missing_cables': [{'host': 'h1', 'port': 1}]}}, 'faults': [{'kind': 'loss', 'rate': 0.1, "
     "'links': [{'host': 'h1', 'port': 1}]}]}",
     "$.faults[0].links[0]: h1 port 1 is not cabled"},
    {"nic-not-cabled",
     "{'topology': {'form': 'parametric', 'planes': 2, 'radix': 4, 'hosts': 8, 'overrides': "
     "{'missing_cables': [{'host': 'h1', 'port': 1}]}}, 'faults': [{'kind': 'nic_down', "
     "'host': 'h1', 'port': 1}]}",
     "$.faults[0].port: h1 port 1 is not cabled"},
    {"random-links-beyond", "'faults': [{'kind': 'link_down', 'random_links': 257}]",
     "$.faults[0].random_links: the fabric has only 256 T0-T1 cables"},
    {"switch-unknown", "'faults': [{'kind': 'blackhole', 'switch': 'p0-t2-0'}]",
     "$.faults[0].switch: no switch named p0-t2-0"},
    {"switch-is-host", "'faults': [{'kind': 'reboot', 'switch': 'h0', 'duration': 1}]",
     "$.faults[0].switch: no switch named h0"},
    {"nic-port-beyond", "'faults': [{'kind': 'nic_down', 'host': 'h3', 'port': 7}]",
     "$.faults[0].port: no port 7: the fabric has 4 planes"},
    {"nic-host-unknown", "'faults': [{'kind': 'nic_up', 'host': 'p0-t0-0', 'port': 0}]",
     "$.faults[0].host: no host named p0-t0-0"},
    {"flap-period-short",
     "'faults': [{'kind': 'flap', 'random_links': 1, 'duration': '2us', "
     "'period': '2us'}]",
     "$.faults[0].period: must be longer than duration"},
    {"ev-loss-same-host",
     "'faults': [{'kind': 'ev_loss', 'src': 'h1', 'dst': 'h1', 'ev': 0, "
     "'rate': 0.5}]",
     "$.faults[0].dst: same host as src (h1)"},
    {"ev-loss-plane-beyond",
     "'faults': [{'kind': 'ev_loss', 'src': 'h1', 'dst': 'h2', "
     "'ev': {'plane': 4, 't1': 0}, 'rate': 0.5}]",
     "$.faults[0].ev.plane: must be an integer from 0 to 3, not 4"},
    {"ev-loss-t1-beyond",
     "'faults': [{'kind': 'ev_loss', 'src': 'h1', 'dst': 'h2', "
     "'ev': {'plane': 1, 't1': 8}, 'rate': 0.5}]",
     "$.faults[0].ev.t1: must be an integer from 0 to 7, not 8"},
    {"ev-loss-salt-beyond",
     "'faults': [{'kind': 'ev_loss', 'src': 'h1', 'dst': 'h2', "
     "'ev': {'plane': 1, 't1': 1, 'salt': 262144}, 'rate': 0.5}]",
     "$.faults[0].ev.salt: must be an integer from 0 to 262143, not 262144"},
    {"ev-loss-number-no-path",
     "'faults': [{'kind': 'ev_loss', 'src': 'h1', 'dst': 'h2', "
     "'ev': 3758096384, 'rate': 0.5}]",
     "$.faults[0].ev: EV 0xe0000000 (plane 7, T1 0) is no path from h1 to h2"},
    {"ev-loss-rate-beyond",
     "'faults': [{'kind': 'ev_loss', 'src': 'h1', 'dst': 'h2', 'ev': 0, "
     "'rate': 2}]",
     "$.faults[0].rate: must be a number from 0 to 1, not 2"},
    {"second-fault",
     "'faults': [{'kind': 'nic_down', 'host': 'h3', 'port': 1}, "
     "{'kind': 'link_down', 'at': '1x', 'random_links': 1}]",
     "$.faults[1].at: not a duration: \"1x\""},
    {"null-value", "'net': null", "$.net: must be an object, not null"},
    {"null-integer", "'mrc': {'evs': null}", "$.mrc.evs: must be an integer, not null"},
};

START_TEST(test_sim_scenario_rejects)
{
    const bad_case *c = &bad_cases[_i];
    char err[600], path[256];
    const char *expect = c->expect;
    sim_scenario *sc = (sim_scenario *)&err; /* must stay untouched */
    int rv;
    memset(err, 'x', sizeof(err));
    if (c->doc) {
        rv = load_doc(c->doc, false, &sc, err, sizeof(err));
    } else {
        snprintf(path, sizeof(path), "%s/%s.json", BAD, c->name);
        ck_assert_msg(access(path, R_OK) == 0, "%s: no fixture %s", c->name, path);
        rv = sim_scenario_load(path, false, UINT64_MAX, &sc, err, sizeof(err));
    }
    ck_assert_msg(rv == -1, "%s: accepted", c->name);
    ck_assert_msg(sc == (sim_scenario *)&err, "%s: *psc was written", c->name);
    ck_assert_msg(memchr(err, '\0', sizeof(err)) != NULL, "%s: no NUL", c->name);
    ck_assert_msg(strncmp(err, expect, strlen(expect)) == 0, "%s: \"%s\", expected \"%s...\"",
                  c->name, err, expect);
    for (const char *p = err; *p; p++) {
        ck_assert_msg(*p >= 0x20 && *p <= 0x7e, "%s: unprintable message", c->name);
    }
}
END_TEST

/* Every fixture in data/scenario/bad has a row in the table (so that each is checked by path). */
START_TEST(test_sim_scenario_bad_fixtures_listed)
{
    DIR *d = opendir(BAD);
    struct dirent *e;
    unsigned n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) {
            continue;
        }
        bool found = false;
        for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]) && !found; i++) {
            found = !bad_cases[i].doc && strlen(bad_cases[i].name) == len - 5 &&
                    strncmp(bad_cases[i].name, e->d_name, len - 5) == 0;
        }
        ck_assert_msg(found, "%s has no row in bad_cases", e->d_name);
        n++;
    }
    closedir(d);
    ck_assert_uint_gt(n, 50);
}
END_TEST

/* Loads every .json of folder |dir| (absent: none), full and reduced; returns how many. */
static unsigned load_folder(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned n = 0;
    if (!d) {
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[512];
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        sim_scenario_free(load_ok(path, false, UINT64_MAX));
        sim_scenario_free(load_ok(path, true, UINT64_MAX));
        n++;
    }
    closedir(d);
    return n;
}

/* The good fixtures and the experiments of sim/experiments (if any), in both versions. */
START_TEST(test_sim_scenario_every_good_file)
{
    ck_assert_uint_ge(load_folder(GOOD), 5);
    load_folder(SIM_TEST_ROOT "/sim/experiments");
}
END_TEST

/* json-c's position of a syntax error, as line and column. */
START_TEST(test_sim_scenario_not_json)
{
    char err[300];
    sim_scenario *sc = NULL;
    ck_assert_int_eq(load_doc("{\n  'end': 1,\n  'sample': tru\n}", false, &sc, err, sizeof(err)),
                     -1);
    ck_assert_msg(strstr(err, "is not JSON: line 3, column ") != NULL, "%s", err);
    ck_assert_int_eq(load_doc("{'end': 1", false, &sc, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "is not JSON: line 1, column 10: the text ends early") != NULL, "%s",
                  err);
    ck_assert_int_eq(load_doc("{} x", false, &sc, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "is not JSON: line 1, column 4: ") != NULL, "%s", err);
    /* a NUL byte after the value is not white space */
    scratch s;
    scratch_write(&s, "");
    FILE *f = fopen(s.path, "wb");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"topology\": \"%s\"}\n", AR64);
    fputc('\0', f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(sim_scenario_load(s.path, false, UINT64_MAX, &sc, err, sizeof(err)), -1);
    scratch_remove(&s);
    ck_assert_msg(strstr(err, "is not JSON: line 2, column 1") != NULL, "%s", err);
    ck_assert_int_eq(load_doc("", false, &sc, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "is not JSON: line 1, column 1") != NULL, "%s", err);
    ck_assert_int_eq(
        sim_scenario_load(SIM_TEST_DATA "/nowhere.json", false, UINT64_MAX, &sc, err, sizeof(err)),
        -1);
    ck_assert_str_eq(err,
                     "$: cannot read " SIM_TEST_DATA "/nowhere.json: No such file or directory");
    ck_assert_ptr_null(sc);
}
END_TEST

/* The message is cut to the caller's buffer, and no buffer at all is fine. */
START_TEST(test_sim_scenario_errmsg_truncated)
{
    char err[12];
    sim_scenario *sc = NULL;
    memset(err, 'x', sizeof(err));
    ck_assert_int_eq(load_doc("'mrc': {'evs': 0}", false, &sc, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "$.mrc.evs: ");
    ck_assert_int_eq(load_doc("'mrc': {'evs': 0}", false, &sc, NULL, 0), -1);
    ck_assert_int_eq(load_doc("'mrc': {'evs': 0}", false, &sc, err, 1), -1);
    ck_assert_str_eq(err, "");
    ck_assert_ptr_null(sc);
}
END_TEST

/* Errors deep inside the document, after much is allocated, free it all (ASan's leak check
 * in the sanitizer build sees what this cannot). */
START_TEST(test_sim_scenario_error_after_allocations)
{
    static const char *const docs[] = {
        "'description': 'd', 'experiment': 'e', 'paper': 'p', 'traffic': [{'kind': 'allreduce', "
        "'bytes': 1}, {'kind': 'flows', 'flows': [{'src': 'h1', 'dst': 'h2', 'bytes': 1}]}], "
        "'faults': [{'kind': 'link_down', 'links': [{'host': 'h1', 'port': 0}]}, "
        "{'kind': 'blackhole', 'switch': 'nope'}]",
        "'traffic': [{'kind': 'allreduce', 'hosts': ['h1', 'h2', 'h3', 'h1'], 'bytes': 1}]",
        "'faults': [{'kind': 'link_down', 'links': [{'host': 'h1', 'port': 0}, {'a': 'x'}]}]",
        "'traffic': [{'kind': 'flows', 'flows': [{'src': 'h1', 'dst': 'h2', 'bytes': 1}, 7]}]",
        "'roce': {'plane': 9}, 'reduced': {'roce': {'plane': 1}}",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        char err[256];
        sim_scenario *sc = NULL;
        ck_assert_int_eq(load_doc(docs[i], false, &sc, err, sizeof(err)), -1);
        ck_assert_ptr_null(sc);
        ck_assert(err[0] == '$');
    }
    /* the last one, reduced, is fine */
    sim_scenario *sc = NULL;
    char err[256];
    ck_assert_int_eq(load_doc(docs[4], true, &sc, err, sizeof(err)), 0);
    ck_assert_int_eq(sc->roce.plane, 1);
    sim_scenario_free(sc);
}
END_TEST

Suite *sim_scenario_suite(void)
{
    Suite *s = suite_create("sim_scenario");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_sim_scenario_defaults);
    tcase_add_test(tc, test_sim_scenario_minimal_is_defaults);
    tcase_add_test(tc, test_sim_scenario_readme_example);
    tcase_add_test(tc, test_sim_scenario_every_kind);
    tcase_add_test(tc, test_sim_scenario_inline_topology);
    tcase_add_test(tc, test_sim_scenario_reduced_merge_patch);
    tcase_add_test(tc, test_sim_scenario_seed_override);
    tcase_add_test(tc, test_sim_scenario_units);
    tcase_add_test(tc, test_sim_scenario_every_good_file);
    suite_add_tcase(s, tc);
    tc = tcase_create("reject");
    tcase_add_loop_test(tc, test_sim_scenario_rejects, 0,
                        (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(tc, test_sim_scenario_bad_fixtures_listed);
    tcase_add_test(tc, test_sim_scenario_not_json);
    tcase_add_test(tc, test_sim_scenario_errmsg_truncated);
    tcase_add_test(tc, test_sim_scenario_error_after_allocations);
    suite_add_tcase(s, tc);
    return s;
}
