/* SPDX-License-Identifier: MIT */
/* mrcctl: validate and expand topologies, render and install switch tables, show paths, keep
 * the controller's denylist and show its view of the fabric's health. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

/* the common options, and at most this many tables of a command's own */
#define OWN_TABLES_MAX 4
#define NCOMMON 8

static const mrcctl_cmd *const commands[] = {
    &mrcctl_topo_cmd,   &mrcctl_routes_cmd,  &mrcctl_path_cmd,
    &mrcctl_deny_cmd,   &mrcctl_drain_cmd,   &mrcctl_undrain_cmd,
    &mrcctl_health_cmd, &mrcctl_cluster_cmd, NULL,
};

static const char about[] =
    "The operator's command line of the fabric: checks and expands topology files, renders the\n"
    "switches' tables and installs them over netlink, shows the path of each EV, keeps the\n"
    "controller's denylist and shows its view of the fabric's health.";

static const char epilogue[] =
    "\nThe options above go before or after the command (mrcctl --json deny ls, or mrcctl deny\n"
    "ls --json); each command also has its own. mrcctl help COMMAND is mrcctl COMMAND --help.\n"
    "\n"
    "environment:\n"
    "  MRCFAB_TOPOLOGY            the topology file when -t gives none\n"
    "  MRCFAB_CONTROLLER          the controller when --controller gives none\n"
    "  MRCFAB_TOKEN               the bearer token itself, when --token-file gives none\n"
    "  MRCFAB_TOKEN_FILE          else a file whose first word is the token\n"
    "  MRCFAB_CACERT              the CA certificates when --cacert gives none\n"
    "  MRCFAB_CLIENT_CERT         the client certificate when --client-cert gives none\n"
    "  MRCFAB_CLIENT_KEY          its key when --client-key gives none\n";

static void say(mrcctl *c, int code, const char *prog, const char *jpath, const char *msg)
{
    if (jpath && jpath[0]) {
        fprintf(stderr, "%s: %s: %s\n", prog, jpath, msg);
    } else {
        fprintf(stderr, "%s: %s\n", prog, msg);
    }
    if (c->json) {
        json_object *err = json_object_new_object();
        json_object_object_add(err, "code", json_object_new_int(code));
        if (jpath && jpath[0]) {
            json_object_object_add(err, "path", json_object_new_string(jpath));
        }
        json_object_object_add(err, "message", json_object_new_string(msg));
        json_object *doc = json_object_new_object();
        json_object_object_add(doc, "error", err);
        mrcctl_print_json(doc);
    }
}

int mrcctl_fail(mrcctl *c, int code, const char *jpath, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    say(c, code, "mrcctl", jpath, msg);
    return code;
}

int mrcctl_usage(mrcctl *c, const char *fmt, ...)
{
    char msg[1024], line[1200];
    const char *prog = c->cli ? c->cli->prog : "mrcctl";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* the same line as util_cli_fail's */
    snprintf(line, sizeof(line), "%s; see %s --help", msg, prog);
    say(c, MRCCTL_BADINPUT, prog, NULL, line);
    return MRCCTL_BADINPUT;
}

void mrcctl_print_json(json_object *obj)
{
    fputs(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                  JSON_C_TO_STRING_NOSLASHESCAPE),
          stdout);
    fputc('\n', stdout);
    json_object_put(obj);
}

int mrcctl_sink_file(void *user, const char *data, size_t datalen)
{
    return fwrite(data, 1, datalen, (FILE *)user) == datalen ? 0 : -1;
}

int mrcctl_load(mrcctl *c, const char *path)
{
    fab_error err = {{0}, {0}};
    if (path) {
        c->topology = path;
    }
    int rv = fab_topo_load_file(c->topology, &c->topo, &err);
    if (rv == FAB_ERR_INVAL) {
        return mrcctl_fail(c, MRCCTL_BADINPUT, err.path, "%s: %s", c->topology, err.msg);
    }
    if (rv != 0) {
        return mrcctl_fail(c, rv == FAB_ERR_IO ? MRCCTL_BADINPUT : MRCCTL_FAIL, NULL, "%s",
                           err.msg[0] ? err.msg : fab_strerror(rv));
    }
    return MRCCTL_OK;
}

/* The common options into |t| (NCOMMON entries), stored in |dest|, each starting from what
 * |from| holds: the level before, or at the top the environment and the defaults. */
static void common_table(util_opt *t, mrcctl_common *dest, const mrcctl_common *from)
{
    /* clang-format off */
    const util_opt opts[NCOMMON] = {
        UTIL_OPT_TOPOLOGY(&dest->topology, false),
        {.name = "controller", .kind = UTIL_OPT_STR, .dest = &dest->controller, .arg = "URL[,URL...]", .help = "the controllers, http[s]://HOST:PORT, comma-separated (any one will do)"},
        UTIL_OPT_TOKEN_FILE(&dest->token_file),
        UTIL_OPT_CACERT(&dest->cacert),
        UTIL_OPT_CLIENT_CERT(&dest->client_cert),
        UTIL_OPT_CLIENT_KEY(&dest->client_key),
        {.name = "json", .kind = UTIL_OPT_BOOL, .dest = &dest->json, .help = "print JSON instead of text (each output's schema is in schemas/mrcctl/)"},
        UTIL_OPT_END,
    };
    /* clang-format on */
    memcpy(t, opts, sizeof(opts));
    t[0].def = from->topology;
    t[1].def = from->controller;
    t[2].def = from->token_file;
    /* --cacert's help already says the default is the system's; $MRCFAB_CACERT is read later */
    t[3].def = from->cacert;
    t[4].def = from->client_cert;
    t[5].def = from->client_key;
    dest->json = from->json; /* a flag without a default keeps what it holds */
}

/* Whether the arguments of a level ask for --json (the last of --json and --no-json before a
 * "--" wins; |json| when neither is given). */
static bool wants_json(int argc, char **argv, bool json)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--json=true") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--no-json") == 0 || strcmp(argv[i], "--json=false") == 0) {
            json = false;
        }
    }
    return json;
}

/* A fault of the command line, with --json, also as an error document on stdout. */
static void json_fault(void *user, const char *sentence)
{
    (void)user;
    json_object *err = json_object_new_object(), *doc = json_object_new_object();
    json_object_object_add(err, "code", json_object_new_int(UTIL_EXIT_USAGE));
    json_object_object_add(err, "message", json_object_new_string(sentence));
    json_object_object_add(doc, "error", err);
    mrcctl_print_json(doc);
}

/* util_cli_parse, its faults also as error documents when the level asks for --json. */
static int parse_level(mrcctl *c, const util_cli *cli, int argc, char **argv, int *pn, char ***pops)
{
    util_cli with = *cli;
    with.fault = wants_json(argc, argv, c->json) ? json_fault : NULL;
    return util_cli_parse(&with, argc, argv, pn, pops);
}

static void common_free(mrcctl_common *o)
{
    free(o->topology);
    free(o->controller);
    free(o->token_file);
    free(o->cacert);
    free(o->client_cert);
    free(o->client_key);
    memset(o, 0, sizeof(*o));
}

/* What the level parsed becomes what the commands read. */
static void common_take(mrcctl *c, mrcctl_common *next)
{
    common_free(&c->opt);
    c->opt = *next;
    memset(next, 0, sizeof(*next));
    c->topology = c->opt.topology;
    c->controller = c->opt.controller;
    c->token_file = c->opt.token_file;
    c->cacert = c->opt.cacert;
    c->client_cert = c->opt.client_cert;
    c->client_key = c->opt.client_key;
    c->json = c->opt.json;
}

static const mrcctl_cmd *find_cmd(const mrcctl_cmd *const *list, const char *name)
{
    for (; *list; list++) {
        if (strcmp((*list)->name, name) == 0 || ((*list)->alias && !strcmp((*list)->alias, name))) {
            return *list;
        }
    }
    return NULL;
}

/* A group's commands as a list of pointers, ended by NULL, in |list| (SUBS_MAX entries). */
#define SUBS_MAX 16
static void sub_list(const mrcctl_cmd *subs, const mrcctl_cmd **list)
{
    size_t k = 0;
    for (; subs->name && k + 1 < SUBS_MAX; subs++) {
        list[k++] = subs;
    }
    list[k] = NULL;
}

/* The commands of a group for its --help: each with its words after |prefix| and its summary;
 * a group in the list is shown as its commands. */
static void list_cmds(char *dest, size_t destlen, const mrcctl_cmd *const *list, const char *prefix)
{
    size_t n = strlen(dest);
    for (; *list && n < destlen; list++) {
        const mrcctl_cmd *cmd = *list;
        char words[64];
        if (cmd->subs) {
            const mrcctl_cmd *subs[SUBS_MAX];
            sub_list(cmd->subs, subs);
            snprintf(words, sizeof(words), "%s%s ", prefix, cmd->name);
            list_cmds(dest, destlen, subs, words);
            n = strlen(dest);
            continue;
        }
        snprintf(words, sizeof(words), "%s%s", prefix, cmd->name);
        n += (size_t)snprintf(dest + n, destlen - n, "  %-17s %s\n", words, cmd->summary);
    }
}

/* One level of the command line: |cmd|'s options and operands in argv[1..argc-1] (argv[0] is
 * its name), then the command of a group, or the command itself. */
static int run_level(mrcctl *c, const mrcctl_cmd *cmd, const mrcctl_cmd *const *subs,
                     const char *prog, int argc, char **argv)
{
    util_opt common[NCOMMON];
    const util_opt *tables[OWN_TABLES_MAX + 2];
    mrcctl_common next = {0};
    util_cli cli;
    char usage[160], more[4096] = "", header[160];
    char **operands = NULL;
    int n = 0, rv;
    size_t nt = 0;

    if (subs) {
        snprintf(usage, sizeof(usage), "%s [OPTIONS] COMMAND [ARGS]", prog);
        snprintf(header, sizeof(header), "\ncommands (%s COMMAND --help tells more):\n", prog);
        snprintf(more, sizeof(more), "%s", header);
        list_cmds(more, sizeof(more), subs, "");
        if (!cmd) {
            snprintf(more + strlen(more), sizeof(more) - strlen(more), "%s", epilogue);
        }
        cli = (util_cli){
            .prog = prog,
            .usage = usage,
            .about = cmd ? cmd->summary : about,
            .stop_at_operand = true,
            .min_operands = 1,
            .max_operands = UINT32_MAX,
            .operands = "COMMAND",
            .more = more + 1, /* util_cli_help puts a blank line before it */
        };
    } else {
        cli = *cmd->cli;
        for (const util_opt *const *t = cmd->cli->tables; t && *t && nt < OWN_TABLES_MAX; t++) {
            tables[nt++] = *t;
        }
    }
    common_table(common, &next, &c->opt);
    tables[nt++] = common;
    tables[nt] = NULL;
    cli.tables = tables;
    rv = parse_level(c, &cli, argc, argv, &n, &operands);
    if (rv != UTIL_CLI_RUN) {
        util_opt_free(common);
        return rv;
    }
    common_take(c, &next);
    if (!subs) {
        c->cli = &cli;
        c->cmd = strncmp(cli.prog, "mrcctl ", 7) == 0 ? cli.prog + 7 : cli.prog;
        rv = cmd->run(c, n, operands);
        c->cli = NULL;
        free(operands);
        return rv;
    }
    const mrcctl_cmd *sub = find_cmd(subs, operands[0]);
    char subprog[96];
    if (!sub && !cmd && strcmp(operands[0], "help") == 0) {
        /* mrcctl help [COMMAND...]: that command's --help */
        char **args = util_xcalloc((size_t)n + 3, sizeof(*args));
        memcpy(args, operands, (size_t)n * sizeof(*args));
        args[0] = (char *)prog;
        args[n] = "--help";
        rv = run_level(c, NULL, subs, prog, n + 1, args);
        free(args);
        free(operands);
        return rv;
    }
    if (!sub) {
        c->cli = &cli;
        c->json = wants_json(n, operands, c->json); /* mrcctl deny frob --json */
        rv = mrcctl_usage(c, "no command '%s'", operands[0]);
        c->cli = NULL;
        free(operands);
        return rv;
    }
    snprintf(subprog, sizeof(subprog), "%s %s", prog, sub->name);
    if (sub->subs) {
        const mrcctl_cmd *list[SUBS_MAX];
        sub_list(sub->subs, list);
        rv = run_level(c, sub, list, subprog, n, operands);
    } else {
        rv = run_level(c, sub, NULL, subprog, n, operands);
    }
    free(operands);
    return rv;
}

int main(int argc, char **argv)
{
    mrcctl c = {0};
    const char *topo = getenv("MRCFAB_TOPOLOGY"), *ctl = getenv("MRCFAB_CONTROLLER");
    util_log_init("mrcctl", stderr);
    c.opt.topology = util_xstrdup(topo && topo[0] ? topo : MRCCTL_TOPOLOGY);
    c.opt.controller = util_xstrdup(ctl && ctl[0] ? ctl : MRCCTL_CONTROLLER);
    int rv = run_level(&c, NULL, commands, "mrcctl", argc, argv);
    fab_topo_free(c.topo);
    common_free(&c.opt);
    return rv;
}
