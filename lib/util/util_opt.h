/* SPDX-License-Identifier: MIT */
/* The command-line convention of every mrcfab program: option tables that drive the command
 * line, the config file, the defaults, the range checks, --help, --version and the JSON the
 * settings are reported in. */
#ifndef UTIL_OPT_H
#define UTIL_OPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* Exit statuses, the same for every program and script: done, the system failed (I/O, the
 * network, a peer), the input was wrong (arguments, files, a refusal for cause). */
#define UTIL_EXIT_OK 0
#define UTIL_EXIT_FAIL 1
#define UTIL_EXIT_USAGE 2

typedef enum util_opt_kind {
    UTIL_OPT_STR,    /* char *, heap-owned (util_opt_free) */
    UTIL_OPT_UINT,   /* uint64_t within [min, max] */
    UTIL_OPT_BOOL,   /* bool: --name and --no-name (or --name=true|false, 'name = true') */
    UTIL_OPT_DOUBLE, /* double within [min, max] */
} util_opt_kind;

struct util_opt;
/* A check beyond kind and range (a power of two, an address): 0, or -EINVAL with a sentence
 * in |err| that names the option. */
typedef int (*util_opt_check)(const struct util_opt *o, char *err, size_t errlen);

/* One setting. Names are spelled with hyphens ("token-file"); a name spelled with underscores
 * is still taken, with a warning, for one release. A table ends with an entry whose name is
 * NULL. */
typedef struct util_opt {
    const char *name;
    util_opt_kind kind;
    const char *def;   /* the default as text; NULL: none (a string stays NULL, a number or a
                        * flag keeps what its storage held before util_opt_defaults) */
    uint64_t min, max; /* numbers: the range (both 0: any) */
    void *dest;
    const char *help;
    bool secret;           /* reported only as whether it is set */
    const char *arg;       /* the value's name in --help (FILE, URL); NULL: from the kind */
    const char *choices;   /* a string's values, '|'-separated ("srv6|ecmp"); NULL: any */
    char letter;           /* a short spelling, -t; 0: none */
    bool required;         /* the program cannot run without it */
    util_opt_check check;  /* NULL: none */
} util_opt;

/* The options of one program or subcommand. */
typedef struct util_cli {
    const char *prog;  /* "mrc-probe node": what messages start with and --help names */
    const char *usage; /* the synopsis after 'usage: ', lines of it */
    const char *about; /* what it does, a paragraph for --help (may be NULL) */
    const util_opt *const *tables; /* the option tables, ended by NULL */
    bool config;       /* takes --config FILE ('key = value' lines, read first; flags win) */
    bool stop_at_operand; /* the first operand ends the options (a command follows) */
    unsigned min_operands, max_operands;
    const char *operands; /* what they are, for the sentence when they are missing ("FILE") */
    const char *more; /* text for --help after the options (commands, files); may be NULL */
    /* Called with each fault's line as stderr has it, without the program's name in front
     * ("MESSAGE; see PROG --help"), for a program that also says it elsewhere (mrcctl --json's
     * error document); NULL: none. */
    void (*fault)(void *user, const char *sentence);
    void *fault_user;
} util_cli;

/* util_cli_parse's answer when the program is to go on. */
#define UTIL_CLI_RUN (-1)

/*
 * Sets every table's defaults, then reads --config FILE (when |cli| takes one), then the
 * options of argv[1..argc-1] on top: '--name VALUE', '--name=VALUE', '-x VALUE', '--flag',
 * '--no-flag', and '--' before operands that start with '-'. Operands may come between the
 * options (not after the first one with cli->stop_at_operand); they go in |*poperands|
 * (pointers into argv; the caller frees the array) and their count in |*pnoperands|. Both may
 * be NULL when the program takes none.
 * Returns UTIL_CLI_RUN to go on; or, having printed --help or --version on stdout, 0; or,
 * having printed one line on stderr that names the fault and points at --help, 2.
 */
int util_cli_parse(const util_cli *cli, int argc, char **argv, int *pnoperands,
                   char ***poperands);
/* Prints one line 'PROG: MESSAGE; see PROG --help' on stderr and returns 2, for the faults a
 * program finds in its arguments after util_cli_parse. */
int util_cli_fail(const util_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void util_cli_help(const util_cli *cli, FILE *f);
/* "0.2.0 (git 1a2b3c4d5e6f)": the version and the revision the build was made from. */
const char *util_version(void);

/* Sets every option of |opts| to its default; a string's earlier value (NULL, or one an
 * earlier call set) is freed. */
void util_opt_defaults(const util_opt *opts);
void util_opt_free(const util_opt *opts);
/* The entry called |name| (hyphens; underscores taken as hyphens), or NULL. */
const util_opt *util_opt_find(const util_opt *opts, const char *name, size_t namelen);
/* One setting from its text; 0, or -EINVAL / -ERANGE with a sentence in |err| that names the
 * option as --NAME. */
int util_opt_set(const util_opt *o, const char *value, char *err, size_t errlen);
/* 'key = value' lines and '#' comments into |tables| (ended by NULL); 0, or a negative errno
 * with 'FILE:LINE: fault' in |err|. A key spelled with underscores is taken with a warning on
 * stderr, prefixed with |prog|. */
int util_opt_load_file(const util_opt *const *tables, const char *prog, const char *path,
                       char *err, size_t errlen);
/* The same from |text| (NUL-terminated, modified in place), named |path| in messages. */
int util_opt_load_text(const util_opt *const *tables, const char *prog, const char *path,
                       char *text, char *err, size_t errlen);
/* The largest config file taken. */
#define UTIL_OPT_FILE_MAX ((size_t)1 << 20)
/* The options as --help lists them, one a line with its value's name, range and default. */
void util_opt_usage(const util_opt *opts, FILE *f);
/* {"name": value, ...}: a secret only as whether it is set. */
json_object *util_opt_json(const util_opt *opts);

/* The options more than one program takes, declared once: one name, range, default and help
 * for all. Each takes where the value is stored (and, for the topology, whether the program
 * needs one). */
#define UTIL_OPT_TOPOLOGY(d, req)                                                                 \
    {.name = "topology", .kind = UTIL_OPT_STR, .dest = (d), .arg = "FILE", .letter = 't',       \
     .required = (req), .help = "the fabric's topology file"}
#define UTIL_OPT_MTU(d)                                                                            \
    {.name = "mtu", .kind = UTIL_OPT_UINT, .def = "4096", .min = 256, .max = 8192, .dest = (d),  \
     .arg = "BYTES", .check = util_opt_check_pow2,                                                 \
     .help = "payload bytes per packet, a power of two"}
#define UTIL_OPT_BASE_RTT_NS(d)                                                                    \
    {.name = "base-rtt-ns", .kind = UTIL_OPT_UINT, .def = "4000", .min = 100,                     \
     .max = 100000000, .dest = (d), .arg = "NS",                                                   \
     .help = "unloaded round trip of the fabric's longest path (NSCC's base RTT)"}
#define UTIL_OPT_PORT_GBPS(d)                                                                      \
    {.name = "port-gbps", .kind = UTIL_OPT_UINT, .def = "100", .min = 1, .max = 1600,           \
     .dest = (d), .arg = "GBPS", .help = "rate of one plane port (NSCC's link rate)"}
#define UTIL_OPT_CC(d)                                                                             \
    {.name = "cc", .kind = UTIL_OPT_STR, .def = "uet-1.0-nscc", .dest = (d), .arg = "NAME",      \
     .choices = "uet-1.0-nscc|none", .help = "congestion control of the hosts' QPs"}
#define UTIL_OPT_CONTROLLER(d)                                                                     \
    {.name = "controller", .kind = UTIL_OPT_STR, .dest = (d), .arg = "URL,...",                   \
     .help = "the controllers, http[s]://HOST:PORT, comma-separated: requests go to their "       \
             "leader"}
#define UTIL_OPT_CACERT(d)                                                                         \
    {.name = "cacert", .kind = UTIL_OPT_STR, .dest = (d), .arg = "FILE",                          \
     .help = "PEM file of the CAs an https controller's certificate must chain to (default: "     \
             "the system's)"}
/* The client's side of mutual TLS: named client-cert and client-key, for a program that also
 * serves (mrc-probe localize) may have --cert and --key of its own. */
#define UTIL_OPT_CLIENT_CERT(d)                                                                    \
    {.name = "client-cert", .kind = UTIL_OPT_STR, .dest = (d), .arg = "FILE",                     \
     .help = "PEM certificate (its chain after it) offered to an https server that asks for "     \
             "one (with --client-key)"}
#define UTIL_OPT_CLIENT_KEY(d)                                                                     \
    {.name = "client-key", .kind = UTIL_OPT_STR, .dest = (d), .arg = "FILE", .secret = true,      \
     .help = "PEM private key of --client-cert (no passphrase)"}
#define UTIL_OPT_TOKEN_FILE(d)                                                                     \
    {.name = "token-file", .kind = UTIL_OPT_STR, .dest = (d), .arg = "FILE",                      \
     .help = "file whose first word is the bearer token sent to the controller"}
#define UTIL_OPT_LOG(d)                                                                            \
    {.name = "log", .kind = UTIL_OPT_STR, .def = "info", .dest = (d), .arg = "LEVEL",            \
     .choices = "debug|info|notice|warning|err", .help = "the least level logged"}
#define UTIL_OPT_END {.name = NULL}

/* A check: the value is a power of two. */
int util_opt_check_pow2(const util_opt *o, char *err, size_t errlen);

#endif
