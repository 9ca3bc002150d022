/* SPDX-License-Identifier: MIT */
/* mrcctl: the operator's command line — shared state of its subcommands. */
#ifndef MRCCTL_H
#define MRCCTL_H

#include <json-c/json.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdint.h>

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
    const char *cacert;     /* --cacert FILE: the CAs an https controller's certificate chains to */
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
/* Parses a common option (--json, -t/--topology, --controller, --token-file, --cacert) for
 * getopt_long loops; 1 if it was one. */
int mrcctl_common_opt(mrcctl *c, int opt);

/* An option of a subcommand: --|name| VALUE sets |*pvalue| (borrowed from argv; NULL when
 * not given), or with |pflag| a flag --|name| sets |*pflag| (false when not given). */
typedef struct mrcctl_opt {
    const char *name;
    const char **pvalue;
    bool *pflag;
} mrcctl_opt;
#define MRCCTL_OPTS_MAX 16
/* Parses the options of a subcommand's |argv| (argv[0] is its name): the common ones and
 * |own| (at most MRCCTL_OPTS_MAX, ended by a NULL name). Leaves optind at the first operand.
 * An option that is not one of these, or lacks its value, is said in one line with |usage|.
 * Returns the exit code. */
int mrcctl_parse_opts(mrcctl *c, int argc, char **argv, const mrcctl_opt *own, const char *usage);

int mrcctl_topo(mrcctl *c, int argc, char **argv);
int mrcctl_routes(mrcctl *c, int argc, char **argv);
int mrcctl_path(mrcctl *c, int argc, char **argv);
/* The controller's denylist over its REST API (mrcctl_deny.c). */
int mrcctl_deny(mrcctl *c, int argc, char **argv);
int mrcctl_drain(mrcctl *c, int argc, char **argv);
int mrcctl_undrain(mrcctl *c, int argc, char **argv);
/* The controller's view of link, switch and path health (mrcctl_health.c). */
int mrcctl_health(mrcctl *c, int argc, char **argv);

/* The controller's client (mrcctl_client.c). |method| on |path| (under the controller's URL:
 * --controller, $MRCFAB_CONTROLLER or MRCCTL_CONTROLLER; over https the certificate chains to
 * --cacert, $MRCFAB_CACERT or the system's CAs) with |body| (may be NULL, not consumed) and the
 * bearer token (--token-file, $MRCFAB_TOKEN or $MRCFAB_TOKEN_FILE). Returns 0 when the status is
 * |want|, with the answer's JSON in |*pdoc| (NULL for an empty body; |pdoc| may be NULL; the
 * caller drops it), or when it is |quiet| (a fault the caller takes as an answer: nothing
 * printed, |*pdoc| NULL); the status goes in |*pstatus| (may be NULL). Otherwise prints the
 * fault (a problem document's sentence and the status) and returns the exit code: 2 for no
 * token, a bad URL or a 4xx, 1 for a 5xx or a controller out of reach. */
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

/* The getopt values of the options every command takes. */
#define MRCCTL_OPT_CONTROLLER 'C'
#define MRCCTL_OPT_TOKEN_FILE 'K'
#define MRCCTL_OPT_CACERT 'A'

#define MRCCTL_COMMON_LONGOPTS                                                                     \
    {"json", no_argument, NULL, 'J'}, {"topology", required_argument, NULL, 't'},                  \
        {"controller", required_argument, NULL, MRCCTL_OPT_CONTROLLER},                            \
        {"token-file", required_argument, NULL, MRCCTL_OPT_TOKEN_FILE},                            \
        {"cacert", required_argument, NULL, MRCCTL_OPT_CACERT},                                    \
    {                                                                                              \
        "help", no_argument, NULL, 'h'                                                             \
    }

#endif
