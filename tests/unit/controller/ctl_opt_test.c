/* SPDX-License-Identifier: MIT */
/* Unit tests of util_opt, the option tables the controller's settings come from: defaults,
 * then a --config file, then --key value flags on top; range and type errors that name the
 * option (and the range); unknown names refused; the JSON report that never shows a secret;
 * the usage text that lists every option. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_test.h"
#include "util.h"

static struct {
    char *listen, *name, *key;
    uint64_t threads, max_body;
    bool tls, verbose;
} v;

static const util_opt opts[] = {
    {"listen", UTIL_OPT_STR, "127.0.0.1:8080", 0, 0, &v.listen, "ADDR:PORT to serve on", false},
    {"name", UTIL_OPT_STR, NULL, 0, 0, &v.name, "a name for the logs", false},
    {"key", UTIL_OPT_STR, NULL, 0, 0, &v.key, "PEM private key", true},
    {"threads", UTIL_OPT_UINT, "4", 1, 64, &v.threads, "threads serving requests", false},
    {"max_body", UTIL_OPT_UINT, "65536", 1024, 16777216, &v.max_body, "largest body", false},
    {"tls", UTIL_OPT_BOOL, "false", 0, 0, &v.tls, "serve HTTPS", false},
    {"verbose", UTIL_OPT_BOOL, "true", 0, 0, &v.verbose, "log every request", false},
    {NULL, 0, NULL, 0, 0, NULL, NULL, false},
};

static char dir[256];

static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "ctl_opt");
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
}

static void setup(void)
{
    /* values the defaults must overwrite */
    v.listen = v.name = v.key = (char *)"stale";
    v.threads = v.max_body = 12345;
    v.tls = true;
    v.verbose = false;
    util_opt_defaults(opts);
}

static void teardown(void)
{
    util_opt_free(opts);
}

/* util_opt_parse over a NULL-terminated argument list (argv[0] is the program). */
static int parse(char *err, size_t errlen, ...)
{
    char *argv[32] = {(char *)"mrc-controller"};
    int argc = 1;
    va_list ap;
    va_start(ap, errlen);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;) {
        argv[argc++] = a;
    }
    va_end(ap);
    err[0] = '\0';
    return util_opt_parse(opts, argc, argv, err, errlen);
}

/* Defaults apply to every option that has one; a string without one is NULL. */
START_TEST(test_ctl_opt_defaults)
{
    ck_assert_str_eq(v.listen, "127.0.0.1:8080");
    ck_assert_ptr_null(v.name);
    ck_assert_ptr_null(v.key);
    ck_assert_uint_eq(v.threads, 4);
    ck_assert_uint_eq(v.max_body, 65536);
    ck_assert(!v.tls);
    ck_assert(v.verbose);
    char err[256];
    ck_assert_int_eq(parse(err, sizeof(err), NULL), 0);
    ck_assert_uint_eq(v.threads, 4);
}
END_TEST

/* Precedence: a flag beats the config file, which beats the default, wherever --config
 * stands among the flags; what neither sets keeps its default. */
START_TEST(test_ctl_opt_precedence)
{
    char path[512], err[256];
    util_test_write(dir, "prec",
                    "# controller settings\n"
                    "threads = 8\n"
                    "   listen=10.0.0.1:9000   \n"
                    "tls = true\n"
                    "name = lab controller\n",
                    path, sizeof(path));
    ck_assert_msg(
        parse(err, sizeof(err), "--threads", "16", "--config", path, "--verbose", "0", NULL) == 0,
        "%s", err);
    ck_assert_uint_eq(v.threads, 16);
    ck_assert_str_eq(v.listen, "10.0.0.1:9000");
    ck_assert_str_eq(v.name, "lab controller");
    ck_assert(v.tls);
    ck_assert(!v.verbose);
    ck_assert_uint_eq(v.max_body, 65536);
    ck_assert_msg(parse(err, sizeof(err), "--config", path, "--listen", "[::1]:8443", NULL) == 0,
                  "%s", err);
    ck_assert_str_eq(v.listen, "[::1]:8443");
    ck_assert_uint_eq(v.threads, 8);
}
END_TEST

/* A number out of range is -ERANGE naming the option, the value and the range; one that is
 * no whole number is -EINVAL naming the option; neither changes the setting. */
START_TEST(test_ctl_opt_range)
{
    static const struct {
        const char *name, *value;
        int rv;
        const char *needle;
    } bad[] = {{"threads", "0", -ERANGE, "[1, 64]"},
               {"threads", "65", -ERANGE, "[1, 64]"},
               {"max_body", "1023", -ERANGE, "[1024, 16777216]"},
               {"max_body", "16777217", -ERANGE, "[1024, 16777216]"},
               {"threads", "abc", -EINVAL, "'abc'"},
               {"threads", "-1", -EINVAL, "'-1'"},
               {"threads", "", -EINVAL, "''"},
               {"threads", "4x", -EINVAL, "'4x'"},
               {"threads", " 4", -EINVAL, "' 4'"},
               {"threads", "99999999999999999999", -EINVAL, "99999999999999999999"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char flag[32], err[256];
        snprintf(flag, sizeof(flag), "--%s", bad[i].name);
        int rv = parse(err, sizeof(err), flag, bad[i].value, NULL);
        ck_assert_msg(rv == bad[i].rv, "%s %s: %d", flag, bad[i].value, rv);
        ck_assert_msg(strncmp(err, bad[i].name, strlen(bad[i].name)) == 0 &&
                          strstr(err, bad[i].needle),
                      "%s %s: '%s'", flag, bad[i].value, err);
        if (bad[i].rv == -ERANGE) {
            ck_assert_msg(strstr(err, bad[i].value), "'%s' lacks %s", err, bad[i].value);
        }
    }
    ck_assert_uint_eq(v.threads, 4);
    ck_assert_uint_eq(v.max_body, 65536);
    char err[256];
    ck_assert_int_eq(parse(err, sizeof(err), "--threads", "1", "--max_body", "16777216", NULL), 0);
    ck_assert_uint_eq(v.threads, 1);
    ck_assert_uint_eq(v.max_body, 16777216);
    ck_assert_int_eq(parse(err, sizeof(err), "--threads", "64", NULL), 0);
    ck_assert_uint_eq(v.threads, 64);
}
END_TEST

/* Bools are true/false or 1/0, nothing else (a typo must not read as false). */
START_TEST(test_ctl_opt_bool)
{
    static const struct {
        const char *text;
        int value; /* -1: refused */
    } cases[] = {{"true", 1},  {"1", 1},   {"false", 0}, {"0", 0},  {"yes", -1},
                 {"TRUE", -1}, {"on", -1}, {"", -1},     {"2", -1}, {"true ", -1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256];
        bool before = !cases[i].value;
        v.tls = before;
        int rv = parse(err, sizeof(err), "--tls", cases[i].text, NULL);
        if (cases[i].value < 0) {
            ck_assert_msg(rv == -EINVAL, "'%s': %d", cases[i].text, rv);
            ck_assert_msg(strncmp(err, "tls: ", 5) == 0, "'%s'", err);
            ck_assert(v.tls == before);
        } else {
            ck_assert_msg(rv == 0, "'%s': %s", cases[i].text, err);
            ck_assert_int_eq(v.tls, cases[i].value);
        }
    }
}
END_TEST

/* Unknown flags and keys are refused by name, as are stray words, a flag without its value,
 * "config" inside a config file, a line without '=', and a config file that is not there. */
START_TEST(test_ctl_opt_unknown)
{
    char err[256], path[512];
    ck_assert_int_eq(parse(err, sizeof(err), "--bogus", "1", NULL), -EINVAL);
    ck_assert_str_eq(err, "unknown option '--bogus'");
    ck_assert_int_eq(parse(err, sizeof(err), "--thread", "1", NULL), -EINVAL);
    ck_assert_str_eq(err, "unknown option '--thread'");
    ck_assert_int_eq(parse(err, sizeof(err), "threads", "1", NULL), -EINVAL);
    ck_assert_str_eq(err, "unexpected argument 'threads'");
    ck_assert_int_eq(parse(err, sizeof(err), "--threads=8", NULL), -EINVAL);
    ck_assert_int_eq(parse(err, sizeof(err), "--listen", "x", "--threads", NULL), -EINVAL);
    ck_assert_str_eq(err, "--threads needs a value");
    static const struct {
        const char *text;
        const char *suffix;
    } files[] = {{"# c\nbogus = 1\n", ":2: unknown key 'bogus'"},
                 {"config = /etc/other.conf\n", ":1: unknown key 'config'"},
                 {"threads 8\n", ":1: not 'key = value'"},
                 {"threads = 8\ntls = maybe\n", ":2: tls: not true or false: 'maybe'"},
                 {"max_body = 10\n", ":1: max_body: 10 is out of range [1024, 16777216]"}};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char want[700];
        util_test_write(dir, "unknown", files[i].text, path, sizeof(path));
        snprintf(want, sizeof(want), "%s%s", path, files[i].suffix);
        int rv = parse(err, sizeof(err), "--config", path, NULL);
        ck_assert_msg(rv < 0, "%s: %d", files[i].text, rv);
        ck_assert_str_eq(err, want);
    }
    snprintf(path, sizeof(path), "%s/missing.conf", dir);
    ck_assert_int_eq(parse(err, sizeof(err), "--config", path, NULL), -ENOENT);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "'%s'", err);
}
END_TEST

/* "FILE:LINE:" counts every line of the file, blank ones too. */
START_TEST(test_ctl_opt_line_counts_blank_lines)
{
    char err[256], path[512], want[600];
    util_test_write(dir, "blank", "threads = 8\n\n\nbogus = 1\n", path, sizeof(path));
    ck_assert_int_eq(parse(err, sizeof(err), "--config", path, NULL), -EINVAL);
    snprintf(want, sizeof(want), "%s:4: unknown key 'bogus'", path);
    ck_assert_str_eq(err, want);
}
END_TEST

/* The JSON report holds every option with its type; a secret is only whether it is set. */
START_TEST(test_ctl_opt_json)
{
    json_object *j = util_opt_json(opts),
                *want = json_tokener_parse("{\"listen\":\"127.0.0.1:8080\",\"name\":null,"
                                           "\"key\":false,\"threads\":4,\"max_body\":65536,"
                                           "\"tls\":false,\"verbose\":true}");
    ck_assert_msg(json_object_equal(j, want), "got %s", json_object_to_json_string(j));
    json_object_put(j);
    json_object_put(want);
    char err[256];
    ck_assert_int_eq(parse(err, sizeof(err), "--key", "hunter2-private", "--threads", "12", "--tls",
                           "1", "--name", "lab", NULL),
                     0);
    j = util_opt_json(opts);
    want = json_tokener_parse("{\"listen\":\"127.0.0.1:8080\",\"name\":\"lab\",\"key\":true,"
                              "\"threads\":12,\"max_body\":65536,\"tls\":true,\"verbose\":true}");
    ck_assert_msg(json_object_equal(j, want), "got %s", json_object_to_json_string(j));
    ck_assert_ptr_null(strstr(json_object_to_json_string(j), "hunter2"));
    json_object *k = NULL;
    ck_assert(json_object_object_get_ex(j, "key", &k) && json_object_is_type(k, json_type_boolean));
    json_object_put(j);
    json_object_put(want);
}
END_TEST

/* The usage text has one line per option: its flag, its help, and its default if any. */
START_TEST(test_ctl_opt_usage)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    util_opt_usage(opts, f);
    fclose(f);
    size_t lines = 0;
    for (const char *p = text; *p; p++) {
        lines += *p == '\n';
    }
    ck_assert_uint_eq(lines, 7);
    for (const util_opt *o = opts; o->name; o++) {
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s ", o->name);
        const char *l = strstr(text, flag);
        ck_assert_msg(l, "no %s in\n%s", flag, text);
        const char *eol = strchr(l, '\n'), *h = strstr(l, o->help);
        ck_assert_msg(h && h < eol, "%s: no help", o->name);
        const char *d = strstr(l, "(default ");
        if (o->def) {
            ck_assert_msg(d && d < eol && strncmp(d + 9, o->def, strlen(o->def)) == 0 &&
                              d[9 + strlen(o->def)] == ')',
                          "%s: no default", o->name);
        } else {
            ck_assert_msg(!d || d > eol, "%s: a default it has not", o->name);
        }
    }
    free(text);
}
END_TEST

/* util_opt_free lets go of every string and leaves NULL behind. */
START_TEST(test_ctl_opt_free)
{
    char err[256];
    ck_assert_int_eq(parse(err, sizeof(err), "--name", "x", "--key", "y", NULL), 0);
    util_opt_free(opts);
    ck_assert_ptr_null(v.listen);
    ck_assert_ptr_null(v.name);
    ck_assert_ptr_null(v.key);
}
END_TEST

Suite *ctl_opt_suite(void)
{
    Suite *s = suite_create("opt");
    TCase *tc = tcase_create("opt");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ctl_opt_defaults);
    tcase_add_test(tc, test_ctl_opt_precedence);
    tcase_add_test(tc, test_ctl_opt_range);
    tcase_add_test(tc, test_ctl_opt_bool);
    tcase_add_test(tc, test_ctl_opt_unknown);
    tcase_add_test(tc, test_ctl_opt_line_counts_blank_lines);
    tcase_add_test(tc, test_ctl_opt_json);
    tcase_add_test(tc, test_ctl_opt_usage);
    tcase_add_test(tc, test_ctl_opt_free);
    suite_add_tcase(s, tc);
    return s;
}
