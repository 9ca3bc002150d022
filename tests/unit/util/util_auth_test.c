/* SPDX-License-Identifier: MIT */
/* Unit tests of the tokens file and the token lookup: every role parses, comments and blank
 * lines are skipped, each bad line is refused with its file and line (and nothing is loaded),
 * and a lookup finds a token only by its exact, whole text. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_test.h"
#include "util.h"

static char dir[256];

static void setup_once(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "util_auth");
}

static void teardown_once(void)
{
    util_test_rmdir(dir);
}

#define GOOD                                                                                       \
    "# mrc-controller tokens: TOKEN ROLE NAME\n"                                                   \
    "\n"                                                                                           \
    "rd-0123456789abcdef   reader   grafana\n"                                                     \
    "   # an indented comment\n"                                                                   \
    "ag-0123456789abcdef\tagent\th3\n"                                                             \
    "pr-0123456789abcdef prober probe-1\r\n"                                                       \
    "\n"                                                                                           \
    "\n"                                                                                           \
    "op-0123456789abcdef operator olga\n"                                                          \
    "ad-0123456789abcdef admin ada"

/* Every role parses, in file order, with its name; comments, blank lines, tabs and a CRLF
 * line are no tokens; the last line needs no newline. */
START_TEST(test_util_auth_load)
{
    char path[512], err[512] = "";
    util_test_write(dir, "good", GOOD, path, sizeof(path));
    util_auth a;
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    static const struct {
        const char *token;
        util_role role;
        const char *name;
    } want[] = {{"rd-0123456789abcdef", UTIL_ROLE_READER, "grafana"},
                {"ag-0123456789abcdef", UTIL_ROLE_AGENT, "h3"},
                {"pr-0123456789abcdef", UTIL_ROLE_PROBER, "probe-1"},
                {"op-0123456789abcdef", UTIL_ROLE_OPERATOR, "olga"},
                {"ad-0123456789abcdef", UTIL_ROLE_ADMIN, "ada"}};
    ck_assert_uint_eq(a.n, 5);
    for (size_t i = 0; i < 5; i++) {
        ck_assert_str_eq(a.tokens[i].token, want[i].token);
        ck_assert_int_eq(a.tokens[i].role, want[i].role);
        ck_assert_str_eq(a.tokens[i].name, want[i].name);
        ck_assert_ptr_eq(util_auth_find(&a, want[i].token), &a.tokens[i]);
    }
    util_auth_free(&a);
    ck_assert_uint_eq(a.n, 0);
    ck_assert_ptr_null(a.tokens);
}
END_TEST

/* Role names both ways, ordered reader < agent < prober < operator < admin; only the exact
 * lower-case names parse ("none" is no role one can be given). */
START_TEST(test_util_auth_roles)
{
    static const char *const names[] = {"none", "reader", "agent", "prober", "operator", "admin"};
    for (int r = UTIL_ROLE_NONE; r <= UTIL_ROLE_ADMIN; r++) {
        ck_assert_str_eq(util_role_name((util_role)r), names[r]);
        ck_assert_int_eq(util_role_parse(names[r]), r == UTIL_ROLE_NONE ? UTIL_ROLE_NONE : r);
    }
    ck_assert(UTIL_ROLE_READER < UTIL_ROLE_AGENT && UTIL_ROLE_AGENT < UTIL_ROLE_PROBER &&
              UTIL_ROLE_PROBER < UTIL_ROLE_OPERATOR && UTIL_ROLE_OPERATOR < UTIL_ROLE_ADMIN);
    ck_assert_int_eq(util_role_parse("Admin"), UTIL_ROLE_NONE);
    ck_assert_int_eq(util_role_parse("admin "), UTIL_ROLE_NONE);
    ck_assert_int_eq(util_role_parse(""), UTIL_ROLE_NONE);
    ck_assert_str_eq(util_role_name((util_role)42), "none");
}
END_TEST

/* A bad line refuses the whole file with "FILE:LINE:" and no tokens loaded: an unknown role,
 * a missing name, a fourth field, a token under 16 characters, a token given twice (the
 * message names its first owner). 16 characters is enough. */
START_TEST(test_util_auth_bad_lines)
{
    static const struct {
        const char *text;
        unsigned line;
        const char *needle;
    } bad[] = {
        {"rd-0123456789abcdef superuser root\n", 1, "role"},
        {"# c\nrd-0123456789abcdef reader\n", 2, "NAME"},
        {"rd-0123456789abcdef reader rita extra\n", 1, "NAME"},
        {"rd-0123456789abcdef\n", 1, "NAME"},
        {"rd-0123456789abcdef reader rita\n0123456789abcde admin ada\n", 2, "16"},
        {"rd-0123456789abcdef reader rita\n# c\nrd-0123456789abcdef admin ada\n", 3, "rita"},
        {"rd-0123456789abcdef reader rita\nrd-0123456789abcdef reader rita\n", 2, "rita"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[512], err[512] = "", prefix[600];
        util_test_write(dir, "bad", bad[i].text, path, sizeof(path));
        util_auth a = {0};
        int rv = util_auth_load(path, &a, err, sizeof(err));
        ck_assert_msg(rv == -EINVAL, "case %zu: %d", i, rv);
        snprintf(prefix, sizeof(prefix), "%s:%u: ", path, bad[i].line);
        ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "case %zu: '%s', want '%s...'", i,
                      err, prefix);
        ck_assert_msg(strstr(err, bad[i].needle), "case %zu: '%s' lacks '%s'", i, err,
                      bad[i].needle);
        ck_assert_uint_eq(a.n, 0);
        ck_assert_ptr_null(a.tokens);
    }
    char path[512], err[512] = "";
    util_test_write(dir, "sixteen", "0123456789abcdef reader rita\n", path, sizeof(path));
    util_auth a;
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(a.n, 1);
    util_auth_free(&a);
}
END_TEST

/* The line in "FILE:LINE:" is the line of the file an editor shows, blank lines counted. */
START_TEST(test_util_auth_line_counts_blank_lines)
{
    char path[512], err[512] = "", prefix[600];
    util_test_write(dir, "blank", "rd-0123456789abcdef reader rita\n\n\nbad line\n", path,
                    sizeof(path));
    util_auth a;
    ck_assert_int_eq(util_auth_load(path, &a, err, sizeof(err)), -EINVAL);
    snprintf(prefix, sizeof(prefix), "%s:4: ", path);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "'%s', want '%s...'", err, prefix);
}
END_TEST

/* A file with no token (empty, or only comments and blank lines) is refused: a controller
 * nobody can use is a mistake; so is a file that is not there. */
START_TEST(test_util_auth_empty)
{
    static const char *const texts[] = {"", "\n\n", "# only\n   # comments\n\t\n"};
    for (size_t i = 0; i < 3; i++) {
        char path[512], err[512] = "";
        util_test_write(dir, "empty", texts[i], path, sizeof(path));
        util_auth a;
        ck_assert_int_eq(util_auth_load(path, &a, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err, "no token"), "'%s'",
                      err);
        ck_assert_uint_eq(a.n, 0);
    }
    char path[512], err[512] = "";
    snprintf(path, sizeof(path), "%s/missing", dir);
    util_auth a;
    ck_assert_int_eq(util_auth_load(path, &a, err, sizeof(err)), -ENOENT);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "'%s'", err);
}
END_TEST

/* Only the exact, whole token is found: not a prefix, not the token with more after it, not
 * another case, not the empty string, not NULL. */
START_TEST(test_util_auth_find_exact)
{
    char path[512], err[512] = "";
    util_test_write(dir, "find", GOOD, path, sizeof(path));
    util_auth a;
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    const util_token *t = util_auth_find(&a, "op-0123456789abcdef");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->role, UTIL_ROLE_OPERATOR);
    ck_assert_str_eq(t->name, "olga");
    static const char *const misses[] = {"op-0123456789abcde",
                                         "op-0123456789abcdef0",
                                         "op-0123456789abcdef ",
                                         "OP-0123456789ABCDEF",
                                         "op-0123456789abcdeF",
                                         "o",
                                         "",
                                         "olga",
                                         "operator",
                                         "op-0123456789abcdefad-0123456789abcdef"};
    for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++) {
        ck_assert_msg(util_auth_find(&a, misses[i]) == NULL, "'%s' found", misses[i]);
    }
    ck_assert_ptr_null(util_auth_find(&a, NULL));
    util_auth_free(&a);
    util_auth none = {0};
    ck_assert_ptr_null(util_auth_find(&none, "op-0123456789abcdef"));
}
END_TEST

/* A fabric's file, a token per agent: each is found by its index, a near miss is not, and a
 * token given twice is named at its second line. */
START_TEST(test_util_auth_find_many)
{
    enum { N = 131072 };
    char path[512], err[512] = "", tok[64];
    util_buf b = {0};
    for (unsigned i = 0; i < N; i++) {
        util_buf_printf(&b, "tok-agent-%012u agent h%u\n", i, i);
    }
    util_test_write(dir, "many", b.s, path, sizeof(path));
    util_auth a = {0};
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(a.n, N);
    ck_assert_ptr_nonnull(a.slots);
    for (unsigned i = 0; i < N; i++) {
        snprintf(tok, sizeof(tok), "tok-agent-%012u", i);
        const util_token *t = util_auth_find(&a, tok);
        ck_assert_ptr_eq(t, &a.tokens[i]);
    }
    ck_assert_ptr_null(util_auth_find(&a, "tok-agent-00000000000"));
    ck_assert_ptr_null(util_auth_find(&a, "tok-agent-0000000000000"));
    ck_assert_ptr_null(util_auth_find(&a, "tok-agent-999999999999"));
    util_auth_free(&a);
    ck_assert_ptr_null(a.slots);
    util_buf_printf(&b, "tok-agent-%012u agent again\n", 70000u);
    util_test_write(dir, "twice", b.s, path, sizeof(path));
    ck_assert_int_eq(util_auth_load(path, &a, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, ":131073: this token is already given to h70000") != NULL, "%s", err);
    free(b.s);
}
END_TEST

Suite *util_auth_suite(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("auth");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_add_test(tc, test_util_auth_load);
    tcase_add_test(tc, test_util_auth_roles);
    tcase_add_test(tc, test_util_auth_bad_lines);
    tcase_add_test(tc, test_util_auth_line_counts_blank_lines);
    tcase_add_test(tc, test_util_auth_empty);
    tcase_add_test(tc, test_util_auth_find_exact);
    tcase_add_test(tc, test_util_auth_find_many);
    suite_add_tcase(s, tc);
    return s;
}
