/* SPDX-License-Identifier: MIT */
/* mrc-sim: run a scenario, or compare the results of several runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_out.h"
#include "sim_run.h"
#include "sim_scenario.h"
#include "util_opt.h"

static struct {
    uint64_t seed; /* UINT64_MAX: the scenario's own */
    char *out;
    bool reduced, quiet;
} o;

/* clang-format off */
static const util_opt run_opts[] = {
    {.name = "seed", .kind = UTIL_OPT_UINT, .min = 0, .max = UINT64_MAX - 1, .dest = &o.seed, .arg = "S", .help = "the run's seed instead of the scenario's own"},
    {.name = "out", .kind = UTIL_OPT_STR, .dest = &o.out, .arg = "DIR", .help = "where the results go (default: results/NAME, NAME the scenario's)"},
    {.name = "reduced", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.reduced, .help = "the scenario at its reduced size (its \"reduced\" patch)"},
    {.name = "quiet", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.quiet, .help = "no progress or summary line on stderr"},
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const run_tables[] = {run_opts, NULL};
static const util_opt *const none[] = {NULL};

static const util_cli run_cli = {
    .prog = "mrc-sim run",
    .usage = "mrc-sim run SCENARIO.json [--seed S] [--out DIR] [--reduced] [--quiet]",
    .about = "Simulates the scenario and writes summary.json, flows.csv, planes.csv, "
             "throughput.svg and\nutilization.svg into DIR. A bad scenario exits 2 with the JSON "
             "path of the field at fault.",
    .tables = run_tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "SCENARIO.json",
};

static const util_cli report_cli = {
    .prog = "mrc-sim report",
    .usage = "mrc-sim report DIR...",
    .about = "Writes the Markdown table comparing the runs in DIR... (each a run's --out) with "
             "the paper, on stdout.",
    .tables = none,
    .min_operands = 1,
    .max_operands = UINT32_MAX,
    .operands = "the runs' DIRs",
};

static int cmd_run(int argc, char **argv)
{
    char **args = NULL;
    sim_scenario *sc = NULL;
    o.seed = UINT64_MAX; /* the option has no default: unset, it keeps this */
    int rv = util_cli_parse(&run_cli, argc, argv, NULL, &args);
    if (rv != UTIL_CLI_RUN) {
        goto out;
    }
    const char *path = args[0];
    char errmsg[512];
    if (sim_scenario_load(path, o.reduced, o.seed, &sc, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s: %s\n", path, errmsg);
        rv = UTIL_EXIT_USAGE;
        goto out;
    }
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", o.out ? o.out : "results");
    if (!o.out) {
        snprintf(dir, sizeof(dir), "results/%s", sc->name);
    }
    sim_results res;
    sim_series ts;
    rv = UTIL_EXIT_FAIL;
    if (sim_run(sc, !o.quiet, &res, &ts, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s: %s\n", path, errmsg);
        goto out;
    }
    res.reduced = o.reduced;
    if (sim_out_write(dir, &res, &ts, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s\n", errmsg);
    } else {
        if (!o.quiet) {
            fprintf(stderr, "mrc-sim: %s: %u flows, %llu events in %.2f s, results in %s\n",
                    sc->name, res.nflows, (unsigned long long)res.sim.events, res.sim.wall_s, dir);
        }
        rv = UTIL_EXIT_OK;
    }
    sim_results_free(&res, &ts);
out:
    sim_scenario_free(sc);
    free(args);
    util_opt_free(run_opts);
    return rv;
}

static int cmd_report(int argc, char **argv)
{
    char **dirs = NULL;
    int n = 0;
    int rv = util_cli_parse(&report_cli, argc, argv, &n, &dirs);
    if (rv != UTIL_CLI_RUN) {
        return rv;
    }
    char errmsg[512];
    rv = UTIL_EXIT_OK;
    if (sim_report((const char *const *)dirs, (unsigned)n, stdout, errmsg, sizeof(errmsg)) != 0) {
        fprintf(stderr, "mrc-sim: %s\n", errmsg);
        rv = UTIL_EXIT_FAIL;
    }
    free(dirs);
    return rv;
}

int main(int argc, char **argv)
{
    static const util_cli top = {
        .prog = "mrc-sim",
        .usage = "mrc-sim COMMAND [options] ARGS",
        .about = "The packet-level simulator of the fabric: libmrc at every host beside a RoCEv2 "
                 "baseline.",
        .tables = none,
        .stop_at_operand = true,
        .min_operands = 1,
        .max_operands = UINT32_MAX,
        .operands = "COMMAND",
        .more = "commands (each with its own --help):\n"
                "  run SCENARIO.json [--seed S] [--out DIR] [--reduced] [--quiet]\n"
                "             simulate a scenario; its results into DIR (default: results/NAME)\n"
                "  report DIR...\n"
                "             the Markdown table comparing the runs in DIR... with the paper\n",
    };
    char **args = NULL;
    int n = 0;
    int rv = util_cli_parse(&top, argc, argv, &n, &args);
    if (rv != UTIL_CLI_RUN) {
        return rv;
    }
    /* the command's own parse sees its name as argv[0] */
    int at = 1;
    while (argv[at] != args[0]) {
        at++;
    }
    const char *cmd = args[0];
    free(args);
    if (strcmp(cmd, "run") == 0) {
        return cmd_run(argc - at, argv + at);
    }
    if (strcmp(cmd, "report") == 0) {
        return cmd_report(argc - at, argv + at);
    }
    return util_cli_fail(&top, "no command '%s' (run or report)", cmd);
}
