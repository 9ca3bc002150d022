/* SPDX-License-Identifier: MIT */
/* mrc-sim: run a scenario, or compare the results of several runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_out.h"
#include "sim_run.h"
#include "sim_scenario.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: mrc-sim run SCENARIO.json [--seed S] [--out DIR] [--reduced] [--quiet]\n"
               "       mrc-sim report DIR...\n"
               "\n"
               "run     simulates the scenario and writes summary.json, flows.csv, planes.csv,\n"
               "        throughput.svg and utilization.svg into DIR (default: results/NAME)\n"
               "report  writes the Markdown table comparing the runs in DIR... with the paper\n"
               "\n"
               "exit status: 0 done, 1 the run or its output failed, 2 bad arguments or a bad\n"
               "scenario (the message names the field at fault)\n");
    return f == stdout ? 0 : 2;
}

static int cmd_run(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    uint64_t seed = UINT64_MAX;
    bool reduced = false, quiet = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            char *end;
            seed = strtoull(argv[++i], &end, 0);
            if (*end || !*argv[i]) {
                fprintf(stderr, "mrc-sim: --seed: not a number: %s\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--reduced") == 0) {
            reduced = true;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "mrc-sim: unexpected argument: %s\n", argv[i]);
            return usage(stderr);
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        return usage(stderr);
    }
    char errmsg[512];
    sim_scenario *sc;
    if (sim_scenario_load(path, reduced, seed, &sc, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s: %s\n", path, errmsg);
        return 2;
    }
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", out ? out : "results");
    if (!out) {
        snprintf(dir, sizeof(dir), "results/%s", sc->name);
    }
    sim_results res;
    sim_series ts;
    int rv = 1;
    if (sim_run(sc, !quiet, &res, &ts, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s: %s\n", path, errmsg);
        goto out;
    }
    res.reduced = reduced;
    if (sim_out_write(dir, &res, &ts, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s\n", errmsg);
    } else {
        if (!quiet) {
            fprintf(stderr, "mrc-sim: %s: %u flows, %llu events in %.2f s, results in %s\n",
                    sc->name, res.nflows, (unsigned long long)res.sim.events, res.sim.wall_s, dir);
        }
        rv = 0;
    }
    sim_results_free(&res, &ts);
out:
    sim_scenario_free(sc);
    return rv;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return usage(stderr);
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        return usage(stdout);
    }
    if (strcmp(argv[1], "run") == 0) {
        return cmd_run(argc - 2, argv + 2);
    }
    if (strcmp(argv[1], "report") == 0) {
        if (argc < 3) {
            return usage(stderr);
        }
        char errmsg[512];
        if (sim_report((const char *const *)argv + 2, (unsigned)(argc - 2), stdout, errmsg,
                       sizeof(errmsg)) != 0) {
            fprintf(stderr, "mrc-sim: %s\n", errmsg);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "mrc-sim: no command %s\n", argv[1]);
    return usage(stderr);
}
