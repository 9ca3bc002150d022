/* SPDX-License-Identifier: MIT */
/* Option tables: one description of a program's settings serves its command line, its config
 * file, its defaults, its range checks, its --help and the JSON it reports them in. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Whether |name| (|len| bytes) spells |o|'s name, an underscore standing for a hyphen. */
static bool spells(const util_opt *o, const char *name, size_t len)
{
    if (strlen(o->name) != len) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i] == '_' ? '-' : name[i];
        if (c != o->name[i]) {
            return false;
        }
    }
    return true;
}

const util_opt *util_opt_find(const util_opt *opts, const char *name, size_t namelen)
{
    for (const util_opt *o = opts; o->name; o++) {
        if (spells(o, name, namelen)) {
            return o;
        }
    }
    return NULL;
}

static const util_opt *find_in(const util_opt *const *tables, const char *name, size_t len)
{
    for (; tables && *tables; tables++) {
        const util_opt *o = util_opt_find(*tables, name, len);
        if (o) {
            return o;
        }
    }
    return NULL;
}

static const util_opt *find_letter(const util_opt *const *tables, char letter)
{
    for (; tables && *tables; tables++) {
        for (const util_opt *o = *tables; o->name; o++) {
            if (o->letter && o->letter == letter) {
                return o;
            }
        }
    }
    return NULL;
}

/* Whether |value| is one of the '|'-separated |choices|. */
static bool one_of(const char *choices, const char *value)
{
    size_t n = strlen(value);
    for (const char *c = choices; *c;) {
        size_t len = strcspn(c, "|");
        if (len == n && strncmp(c, value, n) == 0) {
            return true;
        }
        c += len + (c[len] == '|');
    }
    return false;
}

static int range_err(const util_opt *o, const char *value, char *err, size_t errlen)
{
    snprintf(err, errlen, "--%s %s is out of range (%" PRIu64 " to %" PRIu64 ")", o->name, value,
             o->min, o->max);
    return -ERANGE;
}

int util_opt_set(const util_opt *o, const char *value, char *err, size_t errlen)
{
    int rv = 0;
    switch (o->kind) {
    case UTIL_OPT_STR:
        if (value && o->choices && !one_of(o->choices, value)) {
            char list[256];
            snprintf(list, sizeof(list), "%s", o->choices);
            for (char *p = list; (p = strchr(p, '|')) != NULL;) {
                *p = ',';
            }
            snprintf(err, errlen, "--%s takes one of %s, not '%s'", o->name, list, value);
            return -EINVAL;
        }
        free(*(char **)o->dest);
        *(char **)o->dest = value ? util_xstrdup(value) : NULL;
        break;
    case UTIL_OPT_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0 || strcmp(value, "yes") == 0) {
            *(bool *)o->dest = true;
        } else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
                   strcmp(value, "no") == 0) {
            *(bool *)o->dest = false;
        } else {
            snprintf(err, errlen, "--%s is true or false, not '%s'", o->name, value);
            return -EINVAL;
        }
        break;
    case UTIL_OPT_UINT: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (!isdigit((unsigned char)value[0]) || *end || errno) {
            snprintf(err, errlen, "--%s takes a whole number, not '%s'", o->name, value);
            return -EINVAL;
        }
        if ((o->min || o->max) && (v < o->min || v > o->max)) {
            return range_err(o, value, err, errlen);
        }
        *(uint64_t *)o->dest = v;
        break;
    }
    case UTIL_OPT_DOUBLE: {
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        if (!*value || isspace((unsigned char)value[0]) || *end || errno || !isfinite(v)) {
            snprintf(err, errlen, "--%s takes a number, not '%s'", o->name, value);
            return -EINVAL;
        }
        if ((o->min || o->max) && (v < (double)o->min || v > (double)o->max)) {
            return range_err(o, value, err, errlen);
        }
        *(double *)o->dest = v;
        break;
    }
    default:
        return -EINVAL;
    }
    if (o->check && (rv = o->check(o, err, errlen)) != 0) {
        return rv;
    }
    return 0;
}

int util_opt_check_pow2(const util_opt *o, char *err, size_t errlen)
{
    uint64_t v = *(uint64_t *)o->dest;
    if (v & (v - 1)) {
        snprintf(err, errlen, "--%s %" PRIu64 " is not a power of two", o->name, v);
        return -EINVAL;
    }
    return 0;
}

void util_opt_defaults(const util_opt *opts)
{
    char err[128];
    for (const util_opt *o = opts; o->name; o++) {
        if (o->kind == UTIL_OPT_STR) {
            free(*(char **)o->dest);
            *(char **)o->dest = NULL;
        }
        if (o->def) {
            int rv = util_opt_set(o, o->def, err, sizeof(err));
            (void)rv; /* the table's own defaults are in range */
        }
    }
}

void util_opt_free(const util_opt *opts)
{
    for (const util_opt *o = opts; o->name; o++) {
        if (o->kind == UTIL_OPT_STR) {
            free(*(char **)o->dest);
            *(char **)o->dest = NULL;
        }
    }
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    return s;
}

int util_opt_load_text(const util_opt *const *tables, const char *prog, const char *path,
                       char *data, char *err, size_t errlen)
{
    int rv = 0;
    unsigned line = 0;
    char *cursor = data;
    for (char *l; (l = util_line_next(&cursor)) != NULL;) {
        line++;
        l = trim(l);
        if (*l == '#' || *l == '\0') {
            continue;
        }
        char *eq = strchr(l, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%u: not 'key = value'", path, line);
            rv = -EINVAL;
            break;
        }
        *eq = '\0';
        char *key = trim(l), *v = trim(eq + 1);
        const util_opt *o = find_in(tables, key, strlen(key));
        if (!o) {
            snprintf(err, errlen, "%s:%u: unknown key '%.64s'", path, line, key);
            rv = -EINVAL;
            break;
        }
        if (strcmp(key, o->name) != 0) {
            char where[512];
            snprintf(where, sizeof(where), "%s:%u: ", path, line);
            fprintf(stderr, "%s: warning: %s'%s' is spelled '%s' now (the old spelling goes in "
                    "the next release)\n", prog, where, key, o->name);
        }
        char sub[256];
        if ((rv = util_opt_set(o, v, sub, sizeof(sub))) != 0) {
            /* in a file the key is named as the file spells it */
            snprintf(err, errlen, "%s:%u: %s", path, line, sub[0] == '-' ? sub + 2 : sub);
            break;
        }
    }
    return rv;
}

int util_opt_load_file(const util_opt *const *tables, const char *prog, const char *path,
                       char *err, size_t errlen)
{
    char *data;
    size_t len;
    int rv = util_read_file_max(path, UTIL_OPT_FILE_MAX, &data, &len);
    if (rv != 0) {
        snprintf(err, errlen, "--config %s: %s", path,
                 rv == -EFBIG ? "over 1 MiB: not a config file" : strerror(-rv));
        return rv;
    }
    rv = util_opt_load_text(tables, prog, path, data, err, errlen);
    free(data);
    return rv;
}

int util_cli_fail(const util_cli *cli, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char line[1200];
    snprintf(line, sizeof(line), "%s; see %s --help", msg, cli->prog);
    fprintf(stderr, "%s: %s\n", cli->prog, line);
    if (cli->fault) {
        cli->fault(cli->fault_user, line);
    }
    return UTIL_EXIT_USAGE;
}

static const char *arg_name(const util_opt *o)
{
    if (o->arg) {
        return o->arg;
    }
    switch (o->kind) {
    case UTIL_OPT_UINT:
        return "N";
    case UTIL_OPT_DOUBLE:
        return "X";
    default:
        return "VALUE";
    }
}

/* One item of --help: |lhs| in the first 28 columns (alone on its line when longer), |text|
 * wrapped at 100 columns under it. */
static void print_item(FILE *f, const char *lhs, const char *text)
{
    enum { INDENT = 29, WIDTH = 100 };
    size_t col = (size_t)fprintf(f, "  %s", lhs);
    if (col + 1 > INDENT) {
        fputc('\n', f);
        col = 0;
    }
    fprintf(f, "%*s", (int)(INDENT - col), "");
    col = INDENT;
    for (const char *w = text; *w;) {
        size_t len = strcspn(w, " ");
        if (col > INDENT && col + 1 + len > WIDTH) {
            fprintf(f, "\n%*s", INDENT, "");
            col = INDENT;
        } else if (col > INDENT) {
            fputc(' ', f);
            col++;
        }
        fwrite(w, 1, len, f);
        col += len;
        w += len;
        while (*w == ' ') {
            w++;
        }
    }
    fputc('\n', f);
}

void util_opt_usage(const util_opt *opts, FILE *f)
{
    for (const util_opt *o = opts; o->name; o++) {
        char lhs[96], tail[160] = "";
        if (o->kind == UTIL_OPT_BOOL) {
            snprintf(lhs, sizeof(lhs), "--%s, --no-%s", o->name, o->name);
        } else if (o->letter) {
            snprintf(lhs, sizeof(lhs), "-%c, --%s %s", o->letter, o->name, arg_name(o));
        } else {
            snprintf(lhs, sizeof(lhs), "--%s %s", o->name, arg_name(o));
        }
        size_t n = 0;
        if (o->choices) {
            n += (size_t)snprintf(tail + n, sizeof(tail) - n, "; %s", o->choices);
        } else if ((o->kind == UTIL_OPT_UINT || o->kind == UTIL_OPT_DOUBLE) && (o->min || o->max)) {
            n += (size_t)snprintf(tail + n, sizeof(tail) - n, "; %" PRIu64 "..%" PRIu64, o->min,
                                  o->max);
        }
        if (o->required) {
            snprintf(tail + n, sizeof(tail) - n, " (required)");
        } else if (o->kind == UTIL_OPT_BOOL && o->def) {
            snprintf(tail + n, sizeof(tail) - n, " (default %s)",
                     strcmp(o->def, "true") == 0 ? "on" : "off");
        } else if (o->def && o->def[0]) {
            snprintf(tail + n, sizeof(tail) - n, " (default %s)", o->def);
        }
        char text[1024];
        snprintf(text, sizeof(text), "%s%s", o->help, tail);
        print_item(f, lhs, text);
    }
}

void util_cli_help(const util_cli *cli, FILE *f)
{
    fprintf(f, "usage: %s\n", cli->usage);
    if (cli->about) {
        fprintf(f, "\n%s\n", cli->about);
    }
    bool any = false;
    for (const util_opt *const *t = cli->tables; t && *t; t++) {
        any = any || (*t)->name;
    }
    if (any) {
        fprintf(f, "\noptions%s:\n", cli->config ? " (each also a 'key = value' line of --config)"
                                                 : "");
        for (const util_opt *const *t = cli->tables; t && *t; t++) {
            util_opt_usage(*t, f);
        }
    } else {
        fprintf(f, "\noptions:\n");
    }
    if (cli->config) {
        print_item(f, "--config FILE", "read 'key = value' lines first; flags win");
    }
    print_item(f, "-h, --help", "print this help and exit");
    print_item(f, "--version", "print the version and exit");
    if (cli->more) {
        fprintf(f, "\n%s", cli->more);
        if (cli->more[0] && cli->more[strlen(cli->more) - 1] != '\n') {
            fputc('\n', f);
        }
    }
    fprintf(f, "\nexit status: 0 done, 1 the system failed, 2 bad input\n");
}

/* The value of the option at argv[*pi] (|inline_value| after '=', or the next argument). */
static int take_value(const util_cli *cli, const util_opt *o, const char *shown,
                      const char *inline_value, int argc, char **argv, int *pi, bool negated)
{
    char err[512];
    const char *value = inline_value;
    if (o->kind == UTIL_OPT_BOOL) {
        if (negated && value) {
            return util_cli_fail(cli, "%s takes no value", shown);
        }
        value = negated ? "false" : value ? value : "true";
    } else if (negated) {
        return util_cli_fail(cli, "unknown option '%s'", shown);
    } else if (!value) {
        if (*pi + 1 >= argc) {
            return util_cli_fail(cli, "%s needs a value (%s)", shown, arg_name(o));
        }
        value = argv[++*pi];
    }
    if (util_opt_set(o, value, err, sizeof(err)) != 0) {
        return util_cli_fail(cli, "%s", err);
    }
    return UTIL_CLI_RUN;
}

/* One '--name[=value]' or '--no-name' at argv[*pi]. */
static int long_option(const util_cli *cli, int argc, char **argv, int *pi)
{
    const char *a = argv[*pi], *name = a + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const util_opt *o = find_in(cli->tables, name, len);
    bool negated = false;
    if (!o && len > 3 && strncmp(name, "no-", 3) == 0) {
        o = find_in(cli->tables, name + 3, len - 3);
        negated = o && o->kind == UTIL_OPT_BOOL;
        o = negated ? o : NULL;
    }
    if (!o) {
        return util_cli_fail(cli, "unknown option '%.*s'", (int)(len + 2), a);
    }
    const char *spelled = negated ? name + 3 : name;
    if (strncmp(spelled, o->name, strlen(o->name)) != 0) {
        char given[128];
        snprintf(given, sizeof(given), "--%s%.*s", negated ? "no-" : "",
                 (int)(negated ? len - 3 : len), spelled);
        fprintf(stderr, "%s: warning: %s is spelled --%s%s now (the old spelling goes in the "
                "next release)\n", cli->prog, given, negated ? "no-" : "", o->name);
    }
    char shown[128];
    snprintf(shown, sizeof(shown), "--%s%s", negated ? "no-" : "", o->name);
    return take_value(cli, o, shown, eq ? eq + 1 : NULL, argc, argv, pi, negated);
}

/* Whether the option |a| takes the next argument as its value. */
static bool takes_next(const util_cli *cli, const char *a)
{
    const util_opt *o = NULL;
    if (a[1] == '-') {
        if (strchr(a, '=')) {
            return false;
        }
        if (cli->config && strcmp(a, "--config") == 0) {
            return true;
        }
        o = find_in(cli->tables, a + 2, strlen(a + 2));
    } else if (a[2] == '\0') {
        o = find_letter(cli->tables, a[1]);
    }
    return o && o->kind != UTIL_OPT_BOOL;
}

int util_cli_parse(const util_cli *cli, int argc, char **argv, int *pnoperands,
                   char ***poperands)
{
    char err[768];
    char **operands = util_xcalloc((size_t)argc + 1, sizeof(*operands));
    int n = 0, rv = UTIL_CLI_RUN;
    for (const util_opt *const *t = cli->tables; t && *t; t++) {
        util_opt_defaults(*t);
    }
    /* --help and --version win over everything else among the options */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (argv[i][0] != '-' || argv[i][1] == '\0') {
            if (cli->stop_at_operand) {
                break;
            }
            continue;
        }
        if (takes_next(cli, argv[i])) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            util_cli_help(cli, stdout);
            rv = UTIL_EXIT_OK;
            goto out;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s (mrcfab) %s\n", cli->prog, util_version());
            rv = UTIL_EXIT_OK;
            goto out;
        }
    }
    /* the config file first, so that flags override it */
    for (int i = 1; cli->config && i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *path = NULL;
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            path = argv[i + 1];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            path = argv[i] + 9;
        }
        if (path && util_opt_load_file(cli->tables, cli->prog, path, err, sizeof(err)) != 0) {
            rv = util_cli_fail(cli, "%s", err);
            goto out;
        }
    }
    bool only_operands = false;
    for (int i = 1; i < argc && rv == UTIL_CLI_RUN; i++) {
        const char *a = argv[i];
        if (only_operands || a[0] != '-' || a[1] == '\0') {
            operands[n++] = argv[i];
            if (cli->stop_at_operand) {
                only_operands = true;
            }
        } else if (strcmp(a, "--") == 0) {
            only_operands = true;
        } else if (cli->config && strcmp(a, "--config") == 0) {
            if (++i >= argc) {
                rv = util_cli_fail(cli, "--config needs a value (FILE)");
            }
        } else if (cli->config && strncmp(a, "--config=", 9) == 0) {
            continue;
        } else if (a[1] == '-') {
            rv = long_option(cli, argc, argv, &i);
        } else {
            const util_opt *o = a[2] == '\0' ? find_letter(cli->tables, a[1]) : NULL;
            rv = o ? take_value(cli, o, a, NULL, argc, argv, &i, false)
                   : util_cli_fail(cli, "unknown option '%s'", a);
        }
    }
    if (rv != UTIL_CLI_RUN) {
        goto out;
    }
    for (const util_opt *const *t = cli->tables; t && *t; t++) {
        for (const util_opt *o = *t; o->name; o++) {
            if (o->required && o->kind == UTIL_OPT_STR && !*(char **)o->dest) {
                rv = util_cli_fail(cli, "--%s %s is required", o->name, arg_name(o));
                goto out;
            }
        }
    }
    if ((unsigned)n < cli->min_operands) {
        rv = util_cli_fail(cli, "%s %s missing", cli->operands ? cli->operands : "an operand",
                           cli->operands && strchr(cli->operands, ' ') ? "are" : "is");
    } else if ((unsigned)n > cli->max_operands) {
        rv = util_cli_fail(cli, "unexpected argument '%s'", operands[cli->max_operands]);
    }
out:
    if (rv == UTIL_CLI_RUN && poperands) {
        *poperands = operands;
    } else {
        free(operands);
    }
    if (pnoperands) {
        *pnoperands = rv == UTIL_CLI_RUN ? n : 0;
    }
    return rv;
}

json_object *util_opt_json(const util_opt *opts)
{
    json_object *j = json_object_new_object();
    for (const util_opt *o = opts; o->name; o++) {
        json_object *v = NULL;
        if (o->secret) {
            /* only whether it is set: a secret is text (a key, a password) */
            v = json_object_new_boolean(o->kind != UTIL_OPT_STR || *(char **)o->dest != NULL);
        } else if (o->kind == UTIL_OPT_STR) {
            const char *s = *(char **)o->dest;
            v = s ? json_object_new_string(s) : NULL;
        } else if (o->kind == UTIL_OPT_BOOL) {
            v = json_object_new_boolean(*(bool *)o->dest);
        } else if (o->kind == UTIL_OPT_DOUBLE) {
            v = json_object_new_double(*(double *)o->dest);
        } else {
            v = json_object_new_uint64(*(uint64_t *)o->dest);
        }
        json_object_object_add(j, o->name, v);
    }
    return j;
}
