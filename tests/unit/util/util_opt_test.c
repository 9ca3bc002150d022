/* SPDX-License-Identifier: MIT */
/* Unit tests of util_opt: the option tables and the one command-line convention every program
 * follows (defaults, --config under the flags, ranges and kinds, --flag/--no-flag, the
 * underscore spellings, --help, --version, operands, the one-line faults). */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util_test.h"
#include "util.h"

static struct {
    char *listen, *name, *key, *mode;
    uint64_t threads, max_body, mtu;
    double duration;
    bool tls, verbose;
} v;

/* clang-format off */
static const util_opt opts[] = {
    {.name = "listen", .kind = UTIL_OPT_STR, .def = "127.0.0.1:8080", .dest = &v.listen, .arg = "ADDR:PORT", .help = "where to serve"},
    {.name = "name", .kind = UTIL_OPT_STR, .dest = &v.name, .letter = 'n', .help = "a name for the logs"},
    {.name = "key", .kind = UTIL_OPT_STR, .dest = &v.key, .secret = true, .help = "PEM private key"},
    {.name = "mode", .kind = UTIL_OPT_STR, .def = "srv6", .dest = &v.mode, .choices = "srv6|ecmp", .help = "how paths are named"},
    {.name = "threads", .kind = UTIL_OPT_UINT, .def = "4", .min = 1, .max = 64, .dest = &v.threads, .help = "threads serving requests"},
    {.name = "max-body", .kind = UTIL_OPT_UINT, .def = "65536", .min = 1024, .max = 16777216, .dest = &v.max_body, .help = "largest body"},
    UTIL_OPT_MTU(&v.mtu),
    {.name = "duration", .kind = UTIL_OPT_DOUBLE, .def = "5", .min = 0, .max = 86400, .dest = &v.duration, .help = "seconds"},
    {.name = "tls", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &v.tls, .help = "serve HTTPS"},
    {.name = "verbose", .kind = UTIL_OPT_BOOL, .def = "true", .dest = &v.verbose, .help = "log every request"},
    UTIL_OPT_END,
};
/* clang-format on */
static const util_opt *const tables[] = {opts, NULL};

static util_cli cli = {.prog = "prog", .usage = "prog [options] FILE...", .tables = tables,
                       .config = true, .max_operands = 8, .operands = "FILE"};

static char dir[256], out_path[512], err_path[512];
static char *operands[8];
static int noperands;

static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "util_opt");
    snprintf(out_path, sizeof(out_path), "%s/stdout", dir);
    snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
}

static void setup(void)
{
    /* values the defaults must overwrite */
    v.listen = v.name = v.key = v.mode = NULL;
    v.threads = v.max_body = v.mtu = 12345;
    v.tls = true;
    v.verbose = false;
    cli.stop_at_operand = false;
    cli.min_operands = 0;
}

static void teardown(void)
{
    util_opt_free(opts);
}

/* A whole file as text (the test's own scratch files); "" when missing. */
static char *slurp(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    buf[n] = '\0';
    if (f) {
        fclose(f);
    }
    return buf;
}

/* util_cli_parse over a NULL-terminated argument list, its stdout and stderr caught in the
 * scratch files; the operands into |operands|. */
static int parse(const char *first, ...)
{
    char *argv[32] = {(char *)"prog"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *)) {
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    ck_assert_ptr_nonnull(freopen(out_path, "w", stdout));
    ck_assert_ptr_nonnull(freopen(err_path, "w", stderr));
    char **ops = NULL;
    int rv = util_cli_parse(&cli, argc, argv, &noperands, &ops);
    fflush(stdout);
    fflush(stderr);
    memset(operands, 0, sizeof(operands));
    for (int i = 0; ops && i < noperands && i < 8; i++) {
        operands[i] = ops[i];
    }
    free(ops);
    return rv;
}

/* The fault line on stderr, without its newline. */
static const char *fault(void)
{
    char *s = slurp(err_path);
    s[strcspn(s, "\n")] = '\0';
    return s;
}

/* Defaults apply to every option that has one; a string without one is NULL. */
START_TEST(test_util_opt_defaults)
{
    ck_assert_int_eq(parse(NULL), UTIL_CLI_RUN);
    ck_assert_str_eq(v.listen, "127.0.0.1:8080");
    ck_assert_ptr_null(v.name);
    ck_assert_uint_eq(v.threads, 4);
    ck_assert_uint_eq(v.mtu, 4096);
    ck_assert(!v.tls);
    ck_assert(v.verbose);
    ck_assert_str_eq(slurp(err_path), "");
}
END_TEST

/* The config file is read first, wherever --config is, so that flags win over it. */
START_TEST(test_util_opt_precedence)
{
    char path[512];
    util_test_write(dir, "prec",
                    "# settings\n"
                    "threads = 8\n"
                    "   listen=10.0.0.1:9000   \n"
                    "tls = true\n"
                    "name = lab controller\n",
                    path, sizeof(path));
    ck_assert_int_eq(parse("--threads", "16", "--config", path, "--no-verbose", NULL),
                     UTIL_CLI_RUN);
    ck_assert_uint_eq(v.threads, 16);
    ck_assert_str_eq(v.listen, "10.0.0.1:9000");
    ck_assert_str_eq(v.name, "lab controller");
    ck_assert(v.tls);
    ck_assert(!v.verbose);
    char inline_form[600];
    snprintf(inline_form, sizeof(inline_form), "--config=%s", path);
    ck_assert_int_eq(parse(inline_form, "--threads", "2", NULL), UTIL_CLI_RUN);
    ck_assert_uint_eq(v.threads, 2);
    ck_assert_str_eq(v.name, "lab controller");
    ck_assert_int_eq(parse(NULL), UTIL_CLI_RUN);
    ck_assert_uint_eq(v.threads, 4);
    ck_assert_ptr_null(v.name);
}
END_TEST

/* Values out of range or of the wrong kind are exit 2 with one line naming the option as
 * typed, the value and the range, and pointing at --help. */
START_TEST(test_util_opt_bad_values)
{
    static const struct {
        const char *flag, *value, *line;
    } bad[] = {
        {"--threads", "0", "prog: --threads 0 is out of range (1 to 64); see prog --help"},
        {"--max-body", "16777217",
         "prog: --max-body 16777217 is out of range (1024 to 16777216); see prog --help"},
        {"--threads", "abc", "prog: --threads takes a whole number, not 'abc'; see prog --help"},
        {"--threads", "-1", "prog: --threads takes a whole number, not '-1'; see prog --help"},
        {"--threads", "4x", "prog: --threads takes a whole number, not '4x'; see prog --help"},
        {"--threads", "99999999999999999999",
         "prog: --threads takes a whole number, not '99999999999999999999'; see prog --help"},
        {"--mtu", "3000", "prog: --mtu 3000 is not a power of two; see prog --help"},
        {"--mtu", "16384", "prog: --mtu 16384 is out of range (256 to 8192); see prog --help"},
        {"--duration", "x", "prog: --duration takes a number, not 'x'; see prog --help"},
        {"--duration", "1e9", "prog: --duration 1e9 is out of range (0 to 86400); see prog --help"},
        {"--mode", "udp", "prog: --mode takes one of srv6,ecmp, not 'udp'; see prog --help"},
        {"--tls=maybe", NULL, "prog: --tls is true or false, not 'maybe'; see prog --help"},
        {"--no-tls=true", NULL, "prog: --no-tls takes no value; see prog --help"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rv = parse(bad[i].flag, bad[i].value, NULL);
        ck_assert_msg(rv == UTIL_EXIT_USAGE, "%s %s: %d", bad[i].flag, bad[i].value, rv);
        ck_assert_str_eq(fault(), bad[i].line);
        ck_assert_str_eq(slurp(out_path), "");
    }
    ck_assert_int_eq(parse("--duration", "2.5", "--mode", "ecmp", NULL), UTIL_CLI_RUN);
    ck_assert(v.duration == 2.5);
    ck_assert_str_eq(v.mode, "ecmp");
}
END_TEST

/* Booleans: --flag, --no-flag, --flag=VALUE; a flag takes no next argument. */
START_TEST(test_util_opt_bool)
{
    ck_assert_int_eq(parse("--tls", "--no-verbose", NULL), UTIL_CLI_RUN);
    ck_assert(v.tls && !v.verbose);
    ck_assert_int_eq(parse("--tls=false", "--verbose=yes", NULL), UTIL_CLI_RUN);
    ck_assert(!v.tls && v.verbose);
    /* "true" after a flag is an operand, not its value */
    ck_assert_int_eq(parse("--tls", "true", NULL), UTIL_CLI_RUN);
    ck_assert_int_eq(noperands, 1);
    ck_assert_str_eq(operands[0], "true");
    ck_assert_int_eq(parse("--no-threads", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: unknown option '--no-threads'; see prog --help");
}
END_TEST

/* Unknown options and missing values are one line each. */
START_TEST(test_util_opt_unknown)
{
    ck_assert_int_eq(parse("--bogus", "1", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: unknown option '--bogus'; see prog --help");
    ck_assert_int_eq(parse("--bogus=1", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: unknown option '--bogus'; see prog --help");
    ck_assert_int_eq(parse("-x", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: unknown option '-x'; see prog --help");
    ck_assert_int_eq(parse("--thread", "4", NULL), UTIL_EXIT_USAGE);
    ck_assert_int_eq(parse("--threads", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: --threads needs a value (N); see prog --help");
    ck_assert_int_eq(parse("--listen", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: --listen needs a value (ADDR:PORT); see prog --help");
    ck_assert_int_eq(parse("--config", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: --config needs a value (FILE); see prog --help");
}
END_TEST

/* An underscore spelling is taken, with one warning naming the new spelling. */
START_TEST(test_util_opt_underscores)
{
    char path[512];
    ck_assert_int_eq(parse("--max_body", "2048", NULL), UTIL_CLI_RUN);
    ck_assert_uint_eq(v.max_body, 2048);
    ck_assert_str_eq(slurp(err_path), "prog: warning: --max_body is spelled --max-body now (the "
                                      "old spelling goes in the next release)\n");
    util_test_write(dir, "under", "max_body = 4096\n", path, sizeof(path));
    ck_assert_int_eq(parse("--config", path, NULL), UTIL_CLI_RUN);
    ck_assert_uint_eq(v.max_body, 4096);
    ck_assert_ptr_nonnull(strstr(slurp(err_path), ":1: 'max_body' is spelled 'max-body' now"));
}
END_TEST

/* --help and --version print on stdout and answer 0, whatever else the line holds. */
START_TEST(test_util_opt_help_version)
{
    ck_assert_int_eq(parse("--threads", "999", "--help", NULL), UTIL_EXIT_OK);
    const char *text = slurp(out_path);
    ck_assert_ptr_nonnull(strstr(text, "usage: prog [options] FILE...\n"));
    for (const util_opt *o = opts; o->name; o++) {
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s", o->name);
        ck_assert_msg(strstr(text, flag) != NULL, "--help lacks %s", flag);
    }
    ck_assert_ptr_nonnull(strstr(text, "--tls, --no-tls"));
    ck_assert_ptr_nonnull(strstr(text, "(default 127.0.0.1:8080)"));
    ck_assert_ptr_nonnull(strstr(text, "-n, --name VALUE"));
    ck_assert_ptr_nonnull(strstr(text, "exit status: 0 done, 1 the system failed, 2 bad input"));
    ck_assert_str_eq(slurp(err_path), "");
    /* a value that looks like --help is a value */
    ck_assert_int_eq(parse("--name", "--help", NULL), UTIL_CLI_RUN);
    ck_assert_str_eq(v.name, "--help");
    ck_assert_int_eq(parse("-h", NULL), UTIL_EXIT_OK);
    ck_assert_int_eq(parse("--version", NULL), UTIL_EXIT_OK);
    char want[256];
    snprintf(want, sizeof(want), "prog (mrcfab) %s\n", util_version());
    ck_assert_str_eq(slurp(out_path), want);
    ck_assert_ptr_nonnull(strstr(util_version(), "(git "));
}
END_TEST

/* Operands may come between options; '--' ends the options; a command ends them with
 * stop_at_operand; counts are checked. */
START_TEST(test_util_opt_operands)
{
    ck_assert_int_eq(parse("a", "--threads", "2", "b", "-n", "x", "--", "--tls", NULL),
                     UTIL_CLI_RUN);
    ck_assert_int_eq(noperands, 3);
    ck_assert_str_eq(operands[0], "a");
    ck_assert_str_eq(operands[1], "b");
    ck_assert_str_eq(operands[2], "--tls");
    ck_assert_str_eq(v.name, "x");
    ck_assert(!v.tls);
    cli.stop_at_operand = true;
    ck_assert_int_eq(parse("--tls", "cmd", "--threads", "9", "--help", NULL), UTIL_CLI_RUN);
    ck_assert_int_eq(noperands, 4);
    ck_assert_str_eq(operands[1], "--threads");
    ck_assert_uint_eq(v.threads, 4);
    ck_assert(v.tls);
    cli.stop_at_operand = false;
    cli.min_operands = 1;
    ck_assert_int_eq(parse("--tls", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: FILE is missing; see prog --help");
    ck_assert_int_eq(parse("1", "2", "3", "4", "5", "6", "7", "8", "9", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: unexpected argument '9'; see prog --help");
}
END_TEST

/* A required option missing is named; a config line that is no option, or is malformed,
 * names the file and line. */
START_TEST(test_util_opt_required_and_files)
{
    static char *path_value;
    static const util_opt req[] = {
        {.name = "db", .kind = UTIL_OPT_STR, .dest = &path_value, .arg = "PATH",
         .required = true, .help = "the store"},
        UTIL_OPT_END,
    };
    static const util_opt *const req_tables[] = {opts, req, NULL};
    const util_opt *const *saved = cli.tables;
    cli.tables = req_tables;
    ck_assert_int_eq(parse(NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: --db PATH is required; see prog --help");
    char path[512], want[1024];
    util_test_write(dir, "bad", "threads = 4\n\n# c\nthreads 5\n", path, sizeof(path));
    ck_assert_int_eq(parse("--db", "x", "--config", path, NULL), UTIL_EXIT_USAGE);
    snprintf(want, sizeof(want), "prog: %s:4: not 'key = value'; see prog --help", path);
    ck_assert_str_eq(fault(), want);
    util_test_write(dir, "unknown", "bogus = 1\n", path, sizeof(path));
    ck_assert_int_eq(parse("--db", "x", "--config", path, NULL), UTIL_EXIT_USAGE);
    snprintf(want, sizeof(want), "prog: %s:1: unknown key 'bogus'; see prog --help", path);
    ck_assert_str_eq(fault(), want);
    util_test_write(dir, "range", "threads = 100\n", path, sizeof(path));
    ck_assert_int_eq(parse("--db", "x", "--config", path, NULL), UTIL_EXIT_USAGE);
    snprintf(want, sizeof(want), "prog: %s:1: threads 100 is out of range (1 to 64); see prog --help",
             path);
    ck_assert_str_eq(fault(), want);
    ck_assert_int_eq(parse("--db", "x", "--config", "/nonexistent/x.conf", NULL),
                     UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: --config /nonexistent/x.conf: No such file or directory; "
                              "see prog --help");
    /* a config file is read up to its bound, never whole: /dev/zero costs 1 MiB */
    ck_assert_int_eq(parse("--db", "x", "--config", "/dev/zero", NULL), UTIL_EXIT_USAGE);
    ck_assert_str_eq(fault(), "prog: --config /dev/zero: over 1 MiB: not a config file; "
                              "see prog --help");
    cli.tables = saved;
    util_opt_free(req);
}
END_TEST

/* The JSON report never shows a secret's value, only whether it is set. */
START_TEST(test_util_opt_json)
{
    ck_assert_int_eq(parse("--key", "hunter2", NULL), UTIL_CLI_RUN);
    json_object *j = util_opt_json(opts);
    ck_assert_ptr_null(strstr(json_object_to_json_string(j), "hunter2"));
    ck_assert(json_object_get_boolean(json_object_object_get(j, "key")));
    ck_assert_int_eq(json_object_get_int(json_object_object_get(j, "max-body")), 65536);
    ck_assert(json_object_object_get_ex(j, "name", NULL));
    ck_assert_ptr_null(json_object_object_get(j, "name"));
    json_object_put(j);
}
END_TEST

Suite *util_opt_suite(void)
{
    Suite *s = suite_create("util_opt");
    TCase *tc = tcase_create("opt");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_util_opt_defaults);
    tcase_add_test(tc, test_util_opt_precedence);
    tcase_add_test(tc, test_util_opt_bad_values);
    tcase_add_test(tc, test_util_opt_bool);
    tcase_add_test(tc, test_util_opt_unknown);
    tcase_add_test(tc, test_util_opt_underscores);
    tcase_add_test(tc, test_util_opt_help_version);
    tcase_add_test(tc, test_util_opt_operands);
    tcase_add_test(tc, test_util_opt_required_and_files);
    tcase_add_test(tc, test_util_opt_json);
    suite_add_tcase(s, tc);
    return s;
}
