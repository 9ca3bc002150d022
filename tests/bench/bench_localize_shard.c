/* SPDX-License-Identifier: MIT */
/* bench_localize_shard: what one shard's localizer costs a window on the full fabric (issue 20:
 * at 131,072 hosts one localizer would take 131,072 reports a second). A shard of one plane
 * takes each host's report of that plane's port: the bench makes a window's reports as the
 * plan says they would be (a background loss, host-port faults; bench_reports), then, on one
 * core and timed, parses each as the endpoint does, hands it to the localizer
 * (probe_localize_report) and evaluates the window (probe_localize_poll: the inference and the
 * verdicts), in the thread's CPU time. It prints the shard's figure beside its budget (one window:
 * 1 s) and beside the unsharded localizer's (every plane) measured in the same run. */
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_reports.h"
#include "probe_localize.h"
#include "probe_shard.h"
#include "util.h"

#ifndef BENCH_DEFAULT_TOPO
#define BENCH_DEFAULT_TOPO "deploy/topologies/full.json"
#endif

static uint64_t sim_now; /* the localizer's clock: the bench's */

static uint64_t sim_clock(void)
{
    return sim_now;
}

/* The time this thread ran: what the window costs one core, however loaded the machine (a
 * shared one runs other work beside it, which the wall clock would count) */
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct run {
    probe_localize *loc;
    uint64_t ingest_ns, reports, refused, bytes;
} run;

static void on_report(void *user, json_object *r)
{
    run *x = user;
    size_t len;
    /* the body as a node sends it; making it is not the localizer's cost */
    const char *t = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN, &len);
    char err[256];
    uint64_t t0 = mono_ns();
    json_object *j = util_json_parse("report", t, len, err, sizeof(err));
    int rv = j ? probe_localize_report(x->loc, j, NULL, err, sizeof(err)) : -EINVAL;
    json_object_put(j);
    x->ingest_ns += mono_ns() - t0;
    x->bytes += len;
    x->reports++;
    if (rv != 0 && x->refused++ == 0) {
        fprintf(stderr, "bench_localize_shard: a report refused: %s\n", err);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct figures {
    double window_p50_ms, window_max_ms, ingest_p50_ms, infer_p50_ms, infer_max_ms;
    uint64_t reports, ports_per_report, bytes;
    unsigned verdicts;
} figures;

/* |windows| windows of the localizer of |planes|; 0 or -1 (a report refused, no localizer). */
static int measure(const fab_topo *topo, const probe_plan *plan, const probe_cfg *pc,
                   uint64_t planes, unsigned windows, const bench_fault *faults, size_t nf,
                   figures *fig)
{
    struct event_base *base = event_base_new();
    probe_localize *loc = NULL;
    bench_reports *rep = NULL;
    char err[512];
    int rv = -1;
    uint64_t *win = calloc(windows, sizeof(*win)), *ing = calloc(windows, sizeof(*ing)),
             *inf = calloc(windows, sizeof(*inf));
    uint64_t W = pc->window_ns, start = 1000000;
    sim_now = start * W;
    probe_localize_cfg lc = {.base = base,
                             .topo = topo,
                             .plan = plan,
                             .window_ns = W,
                             .epoch = 1,
                             .deadline_ns = 1500000000ull,
                             .hold_ns = 30000000000ull,
                             .hold_max_ns = 3600000000000ull,
                             .planes = planes,
                             .clock = sim_clock};
    uint32_t nt0, nt1, np;
    probe_plan_shape(plan, 0, &nt0, &nt1, &np);
    probe_infer_cfg_default(&lc.infer, probe_plan_planes(plan), nt0, nt1, np);
    unsigned g = 4;
    while (g > 1 && nt1 % g) {
        g--;
    }
    lc.infer.optic_group = g;
    probe_infer_cfg_from_plan(&lc.infer, plan);
    if (probe_localize_new(&lc, &loc, err, sizeof(err)) != 0 ||
        bench_reports_new(topo, plan, planes, 1e-5, 42, &rep) != 0) {
        fprintf(stderr, "bench_localize_shard: %s\n", err);
        goto out;
    }
    run x = {.loc = loc};
    for (unsigned i = 0; i < windows; i++) {
        uint64_t w = start + 1 + i;
        /* the window has closed and the nodes' grace passed: their reports come */
        sim_now = (w + 1) * W + 300000000ull;
        x.ingest_ns = 0;
        bench_reports_window(rep, w, 1, faults, nf, on_report, &x);
        json_object *st = probe_localize_status(loc);
        uint64_t before = json_object_get_uint64(json_object_object_get(st, "evaluated"));
        json_object_put(st);
        uint64_t t0 = mono_ns();
        probe_localize_poll(loc); /* every host reported: the window is evaluated now */
        inf[i] = mono_ns() - t0;
        ing[i] = x.ingest_ns;
        win[i] = ing[i] + inf[i];
        st = probe_localize_status(loc);
        if (json_object_get_uint64(json_object_object_get(st, "evaluated")) != before + 1) {
            fprintf(stderr, "bench_localize_shard: window %" PRIu64 " was not evaluated\n", w);
            json_object_put(st);
            goto out;
        }
        fig->verdicts = (unsigned)json_object_array_length(json_object_object_get(st, "verdicts"));
        json_object_put(st);
    }
    if (x.refused) {
        fprintf(stderr, "bench_localize_shard: %" PRIu64 " reports refused\n", x.refused);
        goto out;
    }
    double max_inf = 0, max_win = 0;
    for (unsigned i = 0; i < windows; i++) {
        max_inf = (double)inf[i] > max_inf ? (double)inf[i] : max_inf;
        max_win = (double)win[i] > max_win ? (double)win[i] : max_win;
    }
    qsort(win, windows, sizeof(*win), cmp_u64);
    qsort(ing, windows, sizeof(*ing), cmp_u64);
    qsort(inf, windows, sizeof(*inf), cmp_u64);
    fig->window_p50_ms = (double)win[windows / 2] / 1e6;
    fig->window_max_ms = max_win / 1e6;
    fig->ingest_p50_ms = (double)ing[windows / 2] / 1e6;
    fig->infer_p50_ms = (double)inf[windows / 2] / 1e6;
    fig->infer_max_ms = max_inf / 1e6;
    fig->reports = x.reports / windows;
    fig->bytes = x.bytes / windows;
    rv = 0;
out:
    bench_reports_free(rep);
    probe_localize_free(loc);
    event_base_free(base);
    free(win);
    free(ing);
    free(inf);
    return rv;
}

static void print(const char *what, const figures *f)
{
    printf("%s: %" PRIu64 " reports (%.1f MB) a window, %u verdicts held at the end\n", what,
           f->reports, (double)f->bytes / 1e6, f->verdicts);
    printf("  ingest p50 %.1f ms, inference p50 %.1f ms (max %.1f ms)\n", f->ingest_p50_ms,
           f->infer_p50_ms, f->infer_max_ms);
}

int main(int argc, char **argv)
{
    const char *topo_path = BENCH_DEFAULT_TOPO, *shard_list = "0";
    unsigned windows = 8, base_windows = 3;
    bool smoke = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--topo") == 0 && i + 1 < argc) {
            topo_path = argv[++i];
        } else if (strcmp(argv[i], "--planes") == 0 && i + 1 < argc) {
            shard_list = argv[++i];
        } else if (strcmp(argv[i], "--windows") == 0 && i + 1 < argc) {
            windows = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--smoke") == 0) {
            smoke = true;
        } else {
            fprintf(stderr,
                    "usage: %s [--topo FILE] [--planes LIST] [--windows N] [--smoke]\n"
                    "  one shard's localizer (--planes, 0) on the full fabric: a window's reports "
                    "taken and\n  evaluated on one core, beside the 1 s window and the unsharded "
                    "localizer; --smoke: 2 windows\n",
                    argv[0]);
            return 2;
        }
    }
    if (smoke) {
        windows = 2;
        base_windows = 1;
    }
    if (windows == 0) {
        windows = 1;
    }
    /* one core: the localizer's loop is one thread, and so is this */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    sched_setaffinity(0, sizeof(one), &one);
    util_log_init("bench_localize_shard", stderr);
    util_log_level = UTIL_LOG_WARNING;
    fab_topo *topo = NULL;
    probe_plan *plan = NULL;
    fab_error ferr;
    if (fab_topo_load_file(topo_path, &topo, &ferr) != 0) {
        fprintf(stderr, "bench_localize_shard: %s: %s\n", topo_path, ferr.msg);
        return 2;
    }
    probe_cfg pc;
    probe_cfg_default(&pc);
    int status = 1;
    char err[256], sname[128], aname[128];
    uint64_t shard, all = probe_shard_all(fab_topo_planes(topo));
    if (probe_plan_new(topo, &pc, &plan) != 0) {
        fprintf(stderr, "bench_localize_shard: no plan for %s\n", topo_path);
        goto out;
    }
    if (probe_shard_parse(shard_list, fab_topo_planes(topo), &shard, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_localize_shard: --planes: %s\n", err);
        status = 2;
        goto out;
    }
    probe_shard_str(shard, sname, sizeof(sname));
    probe_shard_str(all, aname, sizeof(aname));
    uint32_t nt0, nt1, np;
    probe_plan_shape(plan, 0, &nt0, &nt1, &np);
    /* a fault on a host port of each plane, either way, at 1 % */
    bench_fault faults[2 * 64];
    size_t nf = 0;
    for (unsigned p = 0; p < fab_topo_planes(topo) && p < 64; p++) {
        faults[nf++] = (bench_fault){p, p % nt0, 1 % np, 0, 0.01};
        faults[nf++] = (bench_fault){p, (p + nt0 / 2) % nt0, 0, 1, 0.01};
    }
    printf("bench_localize_shard: %s, %u planes of %u T0s x %u ports (%u T1s), %u probes a port "
           "a window of %.0f ms\n",
           topo_path, fab_topo_planes(topo), nt0, np, nt1, probe_plan_per_window(plan),
           (double)pc.window_ns / 1e6);
    figures fs = {0}, fa = {0};
    if (measure(topo, plan, &pc, shard, windows, faults, nf, &fs) != 0 ||
        measure(topo, plan, &pc, all, base_windows, faults, nf, &fa) != 0) {
        goto out;
    }
    char what[200];
    snprintf(what, sizeof(what), "shard of planes %s, %u windows", sname, windows);
    print(what, &fs);
    snprintf(what, sizeof(what), "unsharded (planes %s), %u windows", aname, base_windows);
    print(what, &fa);
    double budget = (double)pc.window_ns / 1e6;
    printf("target shard window ingest+inference  %10.1f ms   budget %.0f ms (one window), "
           "unsharded %.1f ms\n",
           fs.window_p50_ms, budget, fa.window_p50_ms);
    printf("target shard window max               %10.1f ms   budget %.0f ms\n", fs.window_max_ms,
           budget);
    printf("target shard share of the window       %9.1f %%    unsharded %.1f %%\n",
           100.0 * fs.window_p50_ms / budget, 100.0 * fa.window_p50_ms / budget);
    status = 0;
out:
    probe_plan_free(plan);
    fab_topo_free(topo);
    return status;
}
