/* SPDX-License-Identifier: MIT */
/* mrcctl: the operator's command line — its commands, their shared state and options. */
#ifndef MRCCTL_H
#define MRCCTL_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Exit codes, every program's (util_opt.h): 0 done, 1 the system failed us (netlink, I/O, the
 * controller), 2 the input is wrong (arguments, files, a refusal for cause). */
#define MRCCTL_OK UTIL_EXIT_OK
#define MRCCTL_FAIL UTIL_EXIT_FAIL
#define MRCCTL_BADINPUT UTIL_EXIT_USAGE

/* The controller when neither --controller nor $MRCFAB_CONTROLLER names one. */
#define MRCCTL_CONTROLLER "http://127.0.0.1:8080"
/* The topology when neither -t nor $MRCFAB_TOPOLOGY names one. */
#define MRCCTL_TOPOLOGY UTIL_CONF_DIR "/topology.json"

/* The options every command takes, before or after its name (mrcctl --json deny ls, mrcctl
 * deny ls --json): each level of the command line (mrcctl, mrcctl deny, mrcctl deny add)
 * starts from what the level before it set. The strings are heap-owned. */
typedef struct mrcctl_common {
    char *topology, *controller, *token_file, *cacert, *client_cert, *client_key;
    bool json;
} mrcctl_common;

typedef struct mrcctl {
    mrcctl_common opt;
    const char *topology; /* the file loaded: -t FILE, $MRCFAB_TOPOLOGY, the default, or a
                           * command's FILE */
    bool json;            /* --json */
    /* --controller URL[,URL...], else $MRCFAB_CONTROLLER or the default */
    const char *controller;
    const char *token_file; /* --token-file FILE (NULL: $MRCFAB_TOKEN, $MRCFAB_TOKEN_FILE) */
    const char *cacert;     /* --cacert FILE: the CAs an https controller's certificate chains to */
    /* --client-cert FILE, --client-key FILE (else $MRCFAB_CLIENT_CERT, $MRCFAB_CLIENT_KEY): the
     * certificate offered to a controller that wants one (mutual TLS) */
    const char *client_cert, *client_key;
    fab_topo *topo;
    const util_cli *cli; /* the command running, whose --help a fault in its arguments names */
    const char *cmd;     /* its words after "mrcctl " ("deny add"), for the controller's faults */
} mrcctl;

/* A command: a group of commands (mrcctl deny) or one that runs (mrcctl deny add). */
typedef struct mrcctl_cmd mrcctl_cmd;
struct mrcctl_cmd {
    const char *name;
    const char *alias;   /* another name it answers to ("list" for "ls"); NULL: none */
    const char *summary; /* one line, for the listing of --help */
    /* One that runs: its prog ("mrcctl deny add"), usage, about, operands and its own option
     * tables (the common ones are added). NULL for a group, whose command line is made from
     * its name, summary and commands. */
    const util_cli *cli;
    const mrcctl_cmd *subs; /* a group's commands, ended by a NULL name; NULL: one that runs */
    /* Runs it on its |operands| (borrowed); returns the exit code. */
    int (*run)(mrcctl *c, int noperands, char **operands);
};

/* The commands (mrcctl_topo.c, mrcctl_routes.c, mrcctl_path.c, mrcctl_deny.c for deny, drain
 * and undrain, mrcctl_health.c, mrcctl_cluster.c). */
extern const mrcctl_cmd mrcctl_topo_cmd, mrcctl_routes_cmd, mrcctl_path_cmd, mrcctl_deny_cmd,
    mrcctl_drain_cmd, mrcctl_undrain_cmd, mrcctl_health_cmd, mrcctl_cluster_cmd;

/* Loads |path| (or c->topology) into c->topo; on failure prints the error and returns the
 * exit code. */
int mrcctl_load(mrcctl *c, const char *path);
/* Prints an error: a line on stderr, and with --json a {"error": ...} document on stdout.
 * Returns |code|. */
int mrcctl_fail(mrcctl *c, int code, const char *jpath, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A fault in the running command's arguments, found after its options were parsed: one line
 * 'mrcctl deny add: MESSAGE; see mrcctl deny add --help' on stderr (and with --json the
 * error document). Returns 2. */
int mrcctl_usage(mrcctl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints |obj| (pretty, no slash escaping) to stdout and drops the reference. */
void mrcctl_print_json(json_object *obj);
/* The sink the library renders into: a FILE *. */
int mrcctl_sink_file(void *user, const char *data, size_t datalen);

/* The controller's client (mrcctl_client.c). |method| on |path| (under the controller's URL:
 * --controller, $MRCFAB_CONTROLLER or MRCCTL_CONTROLLER; over https the certificate chains to
 * --cacert, $MRCFAB_CACERT or the system's CAs) with |body| (may be NULL, not consumed) and the
 * bearer token (--token-file, $MRCFAB_TOKEN or $MRCFAB_TOKEN_FILE). Returns 0 when the status is
 * |want| (or another 2xx when |want| is one), with the answer's JSON in |*pdoc| (NULL for an empty
 * body; |pdoc| may be NULL; the caller drops it), or when it is |quiet| (a fault the caller takes
 * as an answer: nothing printed, |*pdoc| NULL); the status goes in |*pstatus| (may be NULL).
 * Otherwise prints the fault (a problem document's sentence, in mrcctl's words rather than the
 * API's, and the status) and returns the exit code: 2 for no token, a bad URL or a 4xx, 1 for a 5xx
 * or a controller out of reach. */
int mrcctl_api_call(mrcctl *c, const char *method, const char *path, json_object *body, int want,
                    int quiet, int *pstatus, json_object **pdoc);
/* Appends "?key=value" (or "&key=value" after a query) to the NUL-terminated |dest|, the value
 * percent-encoded; nothing for a NULL |value|. Returns 0, or -1 with |dest| unchanged when it
 * would not fit in |destlen|. */
int mrcctl_query_add(char *dest, size_t destlen, const char *key, const char *value);
/* Member |key| of object |o| as a string (borrowed; "" when absent), a whole number or a
 * number (0 when absent) or a boolean (false when absent). */
const char *mrcctl_member(json_object *o, const char *key);
int64_t mrcctl_member_int(json_object *o, const char *key);
bool mrcctl_member_bool(json_object *o, const char *key);
double mrcctl_member_double(json_object *o, const char *key);
/* The width of a table's column: |w| or the length of |s|, whichever is more. */
int mrcctl_width(int w, const char *s);

#endif
