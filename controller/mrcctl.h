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

/* The controller when neither --controller nor $MRCFAB_CONTROLLER names one. */
#define MRCCTL_CONTROLLER "http://127.0.0.1:8080"

typedef struct mrcctl {
    const char *topology; /* -t FILE, $MRCFAB_TOPOLOGY or the default */
    bool json;
    fab_topo *topo;
    const char *controller; /* --controller URL, else $MRCFAB_CONTROLLER or the default */
    const char *token_file; /* --token-file FILE */
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
/* Parses a common option (--json, -t/--topology, --controller, --token-file) for getopt_long
 * loops; 1 if it was one. */
int mrcctl_common_opt(mrcctl *c, int opt);

int mrcctl_topo(mrcctl *c, int argc, char **argv);
int mrcctl_routes(mrcctl *c, int argc, char **argv);
int mrcctl_path(mrcctl *c, int argc, char **argv);
/* The controller's denylist over its REST API (mrcctl_deny.c). */
int mrcctl_deny(mrcctl *c, int argc, char **argv);
int mrcctl_drain(mrcctl *c, int argc, char **argv);
int mrcctl_undrain(mrcctl *c, int argc, char **argv);

/* The getopt values of the options every command takes. */
#define MRCCTL_OPT_CONTROLLER 'C'
#define MRCCTL_OPT_TOKEN_FILE 'K'

#define MRCCTL_COMMON_LONGOPTS                                                                     \
    {"json", no_argument, NULL, 'J'}, {"topology", required_argument, NULL, 't'},                  \
        {"controller", required_argument, NULL, MRCCTL_OPT_CONTROLLER},                            \
        {"token-file", required_argument, NULL, MRCCTL_OPT_TOKEN_FILE},                            \
    {                                                                                              \
        "help", no_argument, NULL, 'h'                                                             \
    }

#endif
