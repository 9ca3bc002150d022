/* SPDX-License-Identifier: MIT */
/* mrcctl: the operator's command line — shared state of its subcommands. */
#ifndef MRCCTL_H
#define MRCCTL_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>

/* Exit codes: 0 done, 1 the system failed us (netlink, I/O), 2 the input is wrong. */
#define MRCCTL_OK 0
#define MRCCTL_FAIL 1
#define MRCCTL_BADINPUT 2

typedef struct mrcctl {
    const char *topology; /* -t FILE, $MRCFAB_TOPOLOGY or the default */
    bool json;
    fab_topo *topo;
} mrcctl;

/* Loads |path| (or c->topology) into c->topo; on failure prints the error and returns the
 * exit code. */
int mrcctl_load(mrcctl *c, const char *path);
/* Prints an error: a line on stderr, and with --json a {"error": ...} document on stdout.
 * Returns |code|. */
int mrcctl_fail(mrcctl *c, int code, const char *jpath, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints |obj| (pretty, no slash escaping) to stdout and drops the reference. */
void mrcctl_print_json(json_object *obj);
/* The sink the library renders into: a FILE *. */
int mrcctl_sink_file(void *user, const char *data, size_t datalen);
/* Parses a common option (--json, -t/--topology) for getopt_long loops; 1 if it was one. */
int mrcctl_common_opt(mrcctl *c, int opt);

int mrcctl_topo(mrcctl *c, int argc, char **argv);
int mrcctl_routes(mrcctl *c, int argc, char **argv);
int mrcctl_path(mrcctl *c, int argc, char **argv);

#define MRCCTL_COMMON_LONGOPTS                                                                     \
    {"json", no_argument, NULL, 'J'}, {"topology", required_argument, NULL, 't'},                  \
    {                                                                                              \
        "help", no_argument, NULL, 'h'                                                             \
    }

#endif
