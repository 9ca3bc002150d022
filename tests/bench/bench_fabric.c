/* SPDX-License-Identifier: MIT */
/* Benchmark of the full fabric: load and expand, compute every table, render every switch. */
#include <errno.h>
#include <inttypes.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_DEFAULT_TOPO
#define BENCH_DEFAULT_TOPO "deploy/topologies/full.json"
#endif

/* The targets of the issue: what the controller must manage at full scale on one machine. */
#define TARGET_BUILD_MS 1000.0  /* load + expand + compute every table */
#define TARGET_PEAK_MIB 512.0   /* peak resident memory of the whole run */
#define TARGET_RENDER_MS 5000.0 /* render every switch (SONiC) in memory */

#define MAX_STAGES 8

typedef struct stage {
    const char *name;
    double wall_ms;
    uint64_t peak_kib; /* VmHWM after the stage, reset before it */
} stage;

typedef struct bench {
    stage stages[MAX_STAGES];
    size_t nstages;
    bool peak_reset; /* /proc/self/clear_refs accepted the reset */
    uint64_t t0;
} bench;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A /proc/self/status field in KiB ("VmHWM", "VmRSS"), 0 if it cannot be read. */
static uint64_t status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t v = 0;
    size_t n = strlen(field);
    if (!f) {
        return 0;
    }
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtoull(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Resets the peak RSS to the current RSS (Linux 4.0+), so the next VmHWM is this stage's. */
static bool reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) {
        return false;
    }
    bool ok = fputs("5", f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok;
}

static void stage_begin(bench *b)
{
    b->peak_reset = reset_peak() && b->peak_reset;
    b->t0 = now_ns();
}

static void stage_end(bench *b, const char *name)
{
    uint64_t t1 = now_ns();
    stage *s = &b->stages[b->nstages++];
    s->name = name;
    s->wall_ms = (double)(t1 - b->t0) / 1e6;
    s->peak_kib = status_kib("VmHWM");
}

static const stage *stage_find(const bench *b, const char *name)
{
    for (size_t i = 0; i < b->nstages; i++) {
        if (strcmp(b->stages[i].name, name) == 0) {
            return &b->stages[i];
        }
    }
    return NULL;
}

/* Counts what a writer produces; the text itself is dropped. */
static int count_sink(void *user, const char *data, size_t datalen)
{
    (void)data;
    *(uint64_t *)user += datalen;
    return 0;
}

static int file_sink(void *user, const char *data, size_t datalen)
{
    return fwrite(data, 1, datalen, user) == datalen ? 0 : -1;
}

static int render_all(const fab_topo *topo, const fab_tables *tables, uint64_t *pbytes)
{
    for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
        int rv = fab_render_switch(topo, tables, sw, FAB_FMT_SONIC, count_sink, pbytes);
        if (rv != 0) {
            return rv;
        }
    }
    return 0;
}

/* --out DIR: one config_db file per switch, DIR/NAME.sonic.json. */
static int write_all(const fab_topo *topo, const fab_tables *tables, const char *dir)
{
    char path[4096];
    for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
        fab_switch info;
        fab_switch_get(topo, sw, &info);
        snprintf(path, sizeof(path), "%s/%s.sonic.json", dir, info.name);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "bench_fabric: cannot create %s: %s\n", path, strerror(errno));
            return -1;
        }
        int rv = fab_render_switch(topo, tables, sw, FAB_FMT_SONIC, file_sink, f);
        if (fclose(f) != 0 || rv != 0) {
            fprintf(stderr, "bench_fabric: cannot write %s\n", path);
            return -1;
        }
    }
    return 0;
}

typedef struct target {
    const char *name;
    const char *unit;
    double value, limit;
} target;

/* A JSON string; paths and names may hold quotes or backslashes. */
static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_fabric [--json] [--check] [--out DIR] [TOPOLOGY]\n"
            "  TOPOLOGY  topology file (default %s)\n"
            "  --json    print one JSON object on stdout (the human lines go to stderr)\n"
            "  --check   exit 1 when a target is missed\n"
            "  --out DIR also write every switch's SONiC config_db to DIR (timed apart)\n",
            BENCH_DEFAULT_TOPO);
}

int main(int argc, char **argv)
{
    const char *topo_path = BENCH_DEFAULT_TOPO, *outdir = NULL;
    bool json = false, check = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            outdir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            usage(stderr);
            return 2;
        } else {
            topo_path = argv[i];
        }
    }
    FILE *human = json ? stderr : stdout;
    bench b = {.peak_reset = true};
    uint64_t base_kib = status_kib("VmRSS");
    fab_topo *topo = NULL;
    fab_tables *tables = NULL;
    fab_error err;
    int rv;

    stage_begin(&b);
    rv = fab_topo_load_file(topo_path, &topo, &err);
    stage_end(&b, "load+expand");
    if (rv != 0) {
        fprintf(stderr, "bench_fabric: %s: %s: %s\n", topo_path,
                rv == FAB_ERR_INVAL || rv == FAB_ERR_IO ? err.path : "$",
                rv == FAB_ERR_INVAL || rv == FAB_ERR_IO ? err.msg : fab_strerror(rv));
        return 2;
    }
    stage_begin(&b);
    rv = fab_tables_compute(topo, &tables);
    stage_end(&b, "compute");
    if (rv != 0) {
        fprintf(stderr, "bench_fabric: computing the tables: %s\n", fab_strerror(rv));
        return 2;
    }
    uint64_t rendered = 0, expanded = 0;
    stage_begin(&b);
    rv = render_all(topo, tables, &rendered);
    stage_end(&b, "render-sonic");
    if (rv != 0) {
        fprintf(stderr, "bench_fabric: rendering: %s\n", fab_strerror(rv));
        return 2;
    }
    stage_begin(&b);
    rv = fab_topo_expand(topo, count_sink, &expanded);
    stage_end(&b, "expand-text");
    if (rv != 0) {
        fprintf(stderr, "bench_fabric: expanding: %s\n", fab_strerror(rv));
        return 2;
    }
    if (outdir) {
        stage_begin(&b);
        rv = write_all(topo, tables, outdir);
        stage_end(&b, "write-files");
        if (rv != 0) {
            return 2;
        }
    }

    uint64_t peak_kib = 0;
    for (size_t i = 0; i < b.nstages; i++) {
        peak_kib = b.stages[i].peak_kib > peak_kib ? b.stages[i].peak_kib : peak_kib;
    }
    const target targets[] = {
        {"load+expand+compute", "ms",
         stage_find(&b, "load+expand")->wall_ms + stage_find(&b, "compute")->wall_ms,
         TARGET_BUILD_MS},
        {"peak memory", "MiB", (double)peak_kib / 1024.0, TARGET_PEAK_MIB},
        {"render all (SONiC)", "ms", stage_find(&b, "render-sonic")->wall_ms, TARGET_RENDER_MS},
    };
    size_t ntargets = sizeof(targets) / sizeof(targets[0]);
    bool all_pass = true;
    for (size_t i = 0; i < ntargets; i++) {
        all_pass = all_pass && targets[i].value <= targets[i].limit;
    }

    fprintf(human, "bench_fabric: %s (%s)\n", topo_path, fab_topo_name(topo));
    fprintf(human,
            "fabric: %u planes, %" PRIu32 " switches, %" PRIu32 " hosts, %" PRIu64
            " links, %" PRIu64 " missing, %" PRIu64 " routes\n",
            fab_topo_planes(topo), fab_topo_nswitches(topo), fab_topo_nhosts(topo),
            fab_topo_ncables(topo), fab_topo_nmissing(topo), fab_tables_nroutes(tables));
    fprintf(human, "bytes: %" PRIu64 " rendered (SONiC, all switches), %" PRIu64 " expanded\n",
            rendered, expanded);
    fprintf(human, "%-14s %10s %14s\n", "stage", "wall ms", "peak RSS MiB");
    for (size_t i = 0; i < b.nstages; i++) {
        fprintf(human, "%-14s %10.1f %14.1f\n", b.stages[i].name, b.stages[i].wall_ms,
                (double)b.stages[i].peak_kib / 1024.0);
    }
    if (!b.peak_reset) {
        fprintf(human, "note: /proc/self/clear_refs refused the reset: each stage's peak is the "
                       "peak so far\n");
    }
    fprintf(human, "RSS before loading: %.1f MiB\n", (double)base_kib / 1024.0);
    for (size_t i = 0; i < ntargets; i++) {
        fprintf(human, "target %-20s %10.1f %-3s <= %6.0f %-3s %s\n", targets[i].name,
                targets[i].value, targets[i].unit, targets[i].limit, targets[i].unit,
                targets[i].value <= targets[i].limit ? "PASS" : "FAIL");
    }

    if (json) {
        printf("{\"topology\":");
        json_str(topo_path);
        printf(",\"name\":");
        json_str(fab_topo_name(topo));
        printf(",\"planes\":%u,\"switches\":%" PRIu32 ",\"hosts\":%" PRIu32 ",\"links\":%" PRIu64
               ",\"missing\":%" PRIu64 ",\"routes\":%" PRIu64 ",\"bytes_rendered\":%" PRIu64
               ",\"bytes_expanded\":%" PRIu64 ",\"rss_before_kib\":%" PRIu64
               ",\"peak_rss_kib\":%" PRIu64 ",\"peak_reset\":%s,\"stages\":[",
               fab_topo_planes(topo), fab_topo_nswitches(topo), fab_topo_nhosts(topo),
               fab_topo_ncables(topo), fab_topo_nmissing(topo), fab_tables_nroutes(tables),
               rendered, expanded, base_kib, peak_kib, b.peak_reset ? "true" : "false");
        for (size_t i = 0; i < b.nstages; i++) {
            printf("%s{\"name\":\"%s\",\"wall_ms\":%.3f,\"peak_rss_kib\":%" PRIu64 "}",
                   i ? "," : "", b.stages[i].name, b.stages[i].wall_ms, b.stages[i].peak_kib);
        }
        printf("],\"targets\":[");
        for (size_t i = 0; i < ntargets; i++) {
            printf("%s{\"name\":\"%s\",\"value\":%.3f,\"limit\":%.0f,\"unit\":\"%s\",\"pass\":%s}",
                   i ? "," : "", targets[i].name, targets[i].value, targets[i].limit,
                   targets[i].unit, targets[i].value <= targets[i].limit ? "true" : "false");
        }
        printf("],\"pass\":%s}\n", all_pass ? "true" : "false");
    }
    fab_tables_free(tables);
    fab_topo_free(topo);
    return check && !all_pass ? 1 : 0;
}
