/* SPDX-License-Identifier: MIT */
/* mrcctl: validate and expand topologies, render and install switch tables, show paths, keep
 * the controller's denylist and show its view of the fabric's health. */
#include <assert.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrcctl.h"
#include "util.h"

#define DEFAULT_TOPOLOGY "/etc/mrcfab/topology.json"

static const char usage[] =
    "usage: mrcctl [-t FILE] [--controller URL] [--token-file FILE] [--cacert FILE] [--json]\n"
    "              COMMAND ...\n"
    "\n"
    "  topo validate [FILE]          check a topology file (exit 2 and the JSON path if bad)\n"
    "  topo expand [FILE] [--out F]  write the explicit form: every switch, host and cable\n"
    "  topo cables [FILE]            list every cable with its interface names\n"
    "  topo hosts [FILE]             list every host port with its addresses and gateway\n"
    "  topo switches [FILE]          list every switch with its uSID and SID device\n"
    "  routes render (--switch NAME | --all) [--format json|iproute2|sonic|frr] [--out DIR]\n"
    "  routes install --switch NAME [--netns NS] [--dry-run]\n"
    "                                reconcile a Linux switch with its table over netlink\n"
    "  path --from HOST:PORT --to HOST:PORT [--ev EV]\n"
    "                                the hops and outer address of each EV\n"
    "\n"
    "  on the controller (mrc-controller):\n"
    "  deny ls                       the denylist's entries\n"
    "  deny add ELEMENT --reason TEXT [--scope both|up|down] [--from TIME --to TIME] [--force]\n"
    "                                deny a switch, host port (h3:1) or link (A~B)\n"
    "  deny rm ID                    remove entry ID\n"
    "  deny check ELEMENT [--scope S] [--from TIME --to TIME]\n"
    "                                the blast radius of denying ELEMENT; exit 1 if the\n"
    "                                controller would refuse it (below its capacity floor)\n"
    "  drain ELEMENT [--reason TEXT] [--from TIME --to TIME] [--force]\n"
    "                                deny ELEMENT with a reason starting 'drain'\n"
    "  undrain ELEMENT               remove every entry of ELEMENT whose reason starts 'drain'\n"
    "                                (TIME is RFC 3339 UTC: 2026-12-01T02:00:00Z)\n"
    "  health links [--state STATE] [--plane P] [--switch NAME] [--offset N] [--limit N]\n"
    "                                T0-T1 and NIC-T0 links with their health per direction\n"
    "  health switch [NAME] [--state STATE] [--plane P] [--offset N] [--limit N]\n"
    "                                one switch's health and its links, or the switches'\n"
    "  health path HOST:PORT HOST:PORT\n"
    "                                every EV between two host ports, hop by hop\n"
    "                                (STATE is ok, degraded, bad or no_data)\n"
    "\n"
    "  -t, --topology FILE  topology file (default $MRCFAB_TOPOLOGY, else " DEFAULT_TOPOLOGY ")\n"
    "  --controller URL     the controller's URL (default $MRCFAB_CONTROLLER, else\n"
    "                       " MRCCTL_CONTROLLER ")\n"
    "  --token-file FILE    the bearer token is FILE's first word (default $MRCFAB_TOKEN,\n"
    "                       else the first word of $MRCFAB_TOKEN_FILE)\n"
    "  --cacert FILE        PEM CA certificates an https controller's certificate must chain\n"
    "                       to (default $MRCFAB_CACERT, else the system's)\n"
    "  --json               machine-readable output (schemas in schemas/mrcctl/)\n"
    "\n"
    "exit status: 0 done, 1 the system failed, 2 bad input\n";

int mrcctl_fail(mrcctl *c, int code, const char *jpath, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (jpath && jpath[0]) {
        fprintf(stderr, "mrcctl: %s: %s\n", jpath, msg);
    } else {
        fprintf(stderr, "mrcctl: %s\n", msg);
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
    return code;
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

int mrcctl_common_opt(mrcctl *c, int opt)
{
    switch (opt) {
    case 'J':
        c->json = true;
        return 1;
    case 't':
        c->topology = optarg;
        return 1;
    case MRCCTL_OPT_CONTROLLER:
        c->controller = optarg;
        return 1;
    case MRCCTL_OPT_TOKEN_FILE:
        c->token_file = optarg;
        return 1;
    case MRCCTL_OPT_CACERT:
        c->cacert = optarg;
        return 1;
    default:
        return 0;
    }
}

int mrcctl_parse_opts(mrcctl *c, int argc, char **argv, const mrcctl_opt *own, const char *usage)
{
    static const struct option common[] = {MRCCTL_COMMON_LONGOPTS};
    enum { NCOMMON = sizeof(common) / sizeof(common[0]), OWN = 256 };
    struct option opts[NCOMMON + MRCCTL_OPTS_MAX + 1];
    size_t n = 0, nown = 0;
    int opt, rv = MRCCTL_OK, li = -1;
    for (size_t i = 0; i < NCOMMON; i++) {
        opts[n++] = common[i];
    }
    for (; own && own[nown].name; nown++) {
        assert(nown < MRCCTL_OPTS_MAX);
        bool flag = own[nown].pflag != NULL;
        opts[n++] = (struct option){own[nown].name, flag ? no_argument : required_argument, NULL,
                                    OWN + (int)nown};
        if (flag) {
            *own[nown].pflag = false;
        } else {
            *own[nown].pvalue = NULL;
        }
    }
    opts[n] = (struct option){NULL, 0, NULL, 0};
    optind = 0;
    opterr = 0; /* the faults are said below, in one line */
    while (rv == MRCCTL_OK && (opt = getopt_long(argc, argv, ":t:", opts, &li)) != -1) {
        char name[64];
        if (li >= 0) {
            snprintf(name, sizeof(name), "--%s", opts[li].name);
        } else if (opt == '?' && optopt && optopt < OWN) {
            snprintf(name, sizeof(name), "-%c", optopt);
        } else {
            snprintf(name, sizeof(name), "%s", optind > 0 ? argv[optind - 1] : "");
        }
        li = -1;
        if (opt == ':') {
            rv =
                mrcctl_fail(c, MRCCTL_BADINPUT, NULL, "'%s' takes a value; usage: %s", name, usage);
        } else if (opt >= OWN && opt < OWN + (int)nown && own[opt - OWN].pflag) {
            *own[opt - OWN].pflag = true;
        } else if (opt >= OWN && opt < OWN + (int)nown) {
            *own[opt - OWN].pvalue = optarg;
        } else if (opt == '?' || !mrcctl_common_opt(c, opt)) {
            rv = mrcctl_fail(c, MRCCTL_BADINPUT, NULL,
                             "'%s' is no option of this command; usage: %s", name, usage);
        }
    }
    opterr = 1;
    return rv;
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

int main(int argc, char **argv)
{
    static const struct option opts[] = {MRCCTL_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
    mrcctl c = {.topology = getenv("MRCFAB_TOPOLOGY")};
    int opt, rv;
    util_log_init("mrcctl", stderr);
    if (!c.topology || !c.topology[0]) {
        c.topology = DEFAULT_TOPOLOGY;
    }
    while ((opt = getopt_long(argc, argv, "+t:h", opts, NULL)) != -1) {
        if (mrcctl_common_opt(&c, opt)) {
            continue;
        }
        fputs(usage, opt == 'h' ? stdout : stderr);
        return opt == 'h' ? MRCCTL_OK : MRCCTL_BADINPUT;
    }
    argc -= optind;
    argv += optind;
    if (argc < 1) {
        fputs(usage, stderr);
        return MRCCTL_BADINPUT;
    }
    optind = 0; /* a fresh getopt scan for the subcommand, which sees argv[0] as its name */
    if (strcmp(argv[0], "topo") == 0) {
        rv = mrcctl_topo(&c, argc, argv);
    } else if (strcmp(argv[0], "routes") == 0) {
        rv = mrcctl_routes(&c, argc, argv);
    } else if (strcmp(argv[0], "path") == 0) {
        rv = mrcctl_path(&c, argc, argv);
    } else if (strcmp(argv[0], "deny") == 0) {
        rv = mrcctl_deny(&c, argc, argv);
    } else if (strcmp(argv[0], "drain") == 0) {
        rv = mrcctl_drain(&c, argc, argv);
    } else if (strcmp(argv[0], "undrain") == 0) {
        rv = mrcctl_undrain(&c, argc, argv);
    } else if (strcmp(argv[0], "health") == 0) {
        rv = mrcctl_health(&c, argc, argv);
    } else if (strcmp(argv[0], "help") == 0) {
        fputs(usage, stdout);
        rv = MRCCTL_OK;
    } else {
        rv = mrcctl_fail(&c, MRCCTL_BADINPUT, NULL, "unknown command '%s' (try mrcctl --help)",
                         argv[0]);
    }
    fab_topo_free(c.topo);
    return rv;
}
