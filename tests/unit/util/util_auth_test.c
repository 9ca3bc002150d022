/* SPDX-License-Identifier: MIT */
/* Unit tests of the tokens file and the token lookup: every role parses, comments and blank
 * lines are skipped, each bad line is refused with its file and line (and nothing is loaded),
 * a hashed line stands for its secret, a file others could read or that another user owns is
 * refused, and a lookup finds a token only by its exact, whole text. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pwd.h>
#include <unistd.h>

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

/* A tokens file as a daemon wants it: the test's own, mode 0600. */
static void write_tokens(const char *name, const char *text, char *path, size_t pathlen)
{
    util_test_write(dir, name, text, path, pathlen);
    ck_assert_int_eq(chmod(path, 0600), 0);
}

/* SHA-256("rd-0123456789abcdef"), from sha256sum: the hashed form of GOOD's reader. */
#define RD_HEX "e3b7ff8c4026fc14fdabff09311189af22c9edfe8e6c42b7c401553a6d835616"
#define RD_HEX_UPPER "E3B7FF8C4026FC14FDABFF09311189AF22C9EDFE8E6C42B7C401553A6D835616"
#define RD_HEX_BAD "g3b7ff8c4026fc14fdabff09311189af22c9edfe8e6c42b7c401553a6d835616"
#define T64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* 513 characters: one over the bound */
#define LONG_TOKEN T64 T64 T64 T64 T64 T64 T64 T64 "x"

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
    write_tokens("good", GOOD, path, sizeof(path));
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
    static const char *const names[] = {"none",      "reader",   "agent", "prober",
                                        "localizer", "operator", "admin"};
    for (int r = UTIL_ROLE_NONE; r <= UTIL_ROLE_ADMIN; r++) {
        ck_assert_str_eq(util_role_name((util_role)r), names[r]);
        ck_assert_int_eq(util_role_parse(names[r]), r == UTIL_ROLE_NONE ? UTIL_ROLE_NONE : r);
    }
    ck_assert(UTIL_ROLE_READER < UTIL_ROLE_AGENT && UTIL_ROLE_AGENT < UTIL_ROLE_PROBER &&
              UTIL_ROLE_PROBER < UTIL_ROLE_LOCALIZER && UTIL_ROLE_LOCALIZER < UTIL_ROLE_OPERATOR &&
              UTIL_ROLE_OPERATOR < UTIL_ROLE_ADMIN);
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
        {"rd-0123456789abcdef reader rita\nrd-0123456789abcdef reader rita\n", 2, "line 1"},
        {"rd-0123456789abcdef reader rita\n" LONG_TOKEN " admin ada\n", 2, "512"},
        {"sha256:" RD_HEX " reader rita\nrd-0123456789abcdef admin ada\n", 2, "rita on line 1"},
        {"rd-0123456789abcdef reader rita\n\nsha256:" RD_HEX " admin ada\n", 3, "rita on line 1"},
        {"sha256:" RD_HEX " reader rita\nsha256:" RD_HEX_UPPER " admin ada\n", 2, "line 1"},
        {"sha256:" RD_HEX "0 reader rita\n", 1, "64 hex"},
        {"sha256:0123 reader rita\n", 1, "64 hex"},
        {"sha256:" RD_HEX_BAD " reader rita\n", 1, "64 hex"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[512], err[512] = "", prefix[600];
        write_tokens("bad", bad[i].text, path, sizeof(path));
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
    write_tokens("sixteen", "0123456789abcdef reader rita\n", path, sizeof(path));
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
    write_tokens("blank", "rd-0123456789abcdef reader rita\n\n\nbad line\n", path, sizeof(path));
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
        write_tokens("empty", texts[i], path, sizeof(path));
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
    ck_assert_msg(strstr(err, path) && strstr(err, "No such file"), "'%s'", err);
}
END_TEST

/* Only the exact, whole token is found: not a prefix, not the token with more after it, not
 * another case, not the empty string, not NULL. */
START_TEST(test_util_auth_find_exact)
{
    char path[512], err[512] = "";
    write_tokens("find", GOOD, path, sizeof(path));
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

static void hex(const uint8_t *d, size_t n, char *dest)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(dest + 2 * i, 3, "%02x", d[i]);
    }
}

/* SHA-256 gives the FIPS 180-4 example digests (one block, two blocks, the empty message). */
START_TEST(test_util_auth_sha256_vectors)
{
    static const struct {
        const char *msg, *want;
    } v[] = {
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    };
    for (size_t i = 0; i < 3; i++) {
        uint8_t d[32];
        char h[65];
        util_sha256(v[i].msg, strlen(v[i].msg), d);
        hex(d, 32, h);
        ck_assert_str_eq(h, v[i].want);
    }
}
END_TEST

/* A 'sha256:HEX' line (either case) stands for its secret: the secret finds it, the hashed
 * text itself does not (nor the bare hex). */
START_TEST(test_util_auth_hashed)
{
    char path[512], err[512] = "";
    write_tokens("hashed",
                 "sha256:" RD_HEX " reader grafana\n"
                 "ad-0123456789abcdef admin ada\n"
                 "sha256:" T64 " operator olga\n",
                 path, sizeof(path));
    util_auth a;
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(a.n, 3);
    ck_assert_ptr_eq(util_auth_find(&a, "rd-0123456789abcdef"), &a.tokens[0]);
    ck_assert_ptr_eq(util_auth_find(&a, "ad-0123456789abcdef"), &a.tokens[1]);
    ck_assert_ptr_null(util_auth_find(&a, "sha256:" RD_HEX));
    ck_assert_ptr_null(util_auth_find(&a, RD_HEX));
    ck_assert_ptr_null(util_auth_find(&a, "sha256:" T64));
    util_auth_free(&a);

    write_tokens("upper", "sha256:" RD_HEX_UPPER " reader grafana\n", path, sizeof(path));
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_ptr_eq(util_auth_find(&a, "rd-0123456789abcdef"), &a.tokens[0]);
    util_auth_free(&a);
}
END_TEST

/* A tokens file readable or writable by group or others is refused, with a sentence naming it
 * and its mode; 0600 and 0400 are taken. */
START_TEST(test_util_auth_modes)
{
    static const mode_t bad[] = {0644, 0660, 0666, 0640, 0604, 0620, 0602};
    char path[512], err[512] = "", want[700];
    util_auth a;
    write_tokens("modes", GOOD, path, sizeof(path));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(chmod(path, bad[i]), 0);
        ck_assert_int_eq(util_auth_load(path, &a, err, sizeof(err)), -EPERM);
        snprintf(want, sizeof(want),
                 "tokens file %s is mode %04o: it must not be readable or writable by group or "
                 "others (chmod 600)",
                 path, (unsigned)bad[i]);
        ck_assert_str_eq(err, want);
        ck_assert_uint_eq(a.n, 0);
        ck_assert_ptr_null(a.tokens);
    }
    static const mode_t good[] = {0600, 0400, 0700};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ck_assert_int_eq(chmod(path, good[i]), 0);
        ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
        ck_assert_uint_eq(a.n, 5);
        util_auth_free(&a);
    }
    /* a directory is no tokens file */
    ck_assert_int_eq(util_auth_load(dir, &a, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "not a regular file"), "'%s'", err);
}
END_TEST

/* A tokens file another user owns is refused, even 0600: as root, one chowned to nobody (root
 * reads only root's files). Skipped when not root: no other owner can be given. */
START_TEST(test_util_auth_owner)
{
    if (geteuid() != 0) {
        fprintf(stderr, "util.auth owner: not root, skipped\n");
        return;
    }
    struct passwd *pw = getpwnam("nobody");
    ck_assert_ptr_nonnull(pw);
    char path[512], err[512] = "";
    util_auth a;
    write_tokens("owner", GOOD, path, sizeof(path));
    ck_assert_int_eq(chown(path, pw->pw_uid, (gid_t)-1), 0);
    ck_assert_int_eq(util_auth_load(path, &a, err, sizeof(err)), -EPERM);
    ck_assert_msg(strstr(err, path) && strstr(err, "is owned by nobody") &&
                      strstr(err, "must be owned by root"),
                  "'%s'", err);
    ck_assert_int_eq(chown(path, 0, (gid_t)-1), 0);
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    util_auth_free(&a);
}
END_TEST

/* The bounds: 512 characters is a token, 513 a bad line; a presented token over 512 bytes,
 * even one whose first 512 are a token, is a miss (and a 32 KiB one is no work); under 16
 * too. util_auth_findn takes bytes, not a string: a NUL inside is not the end. */
START_TEST(test_util_auth_long_tokens)
{
    char path[512], err[512] = "";
#define T512 T64 T64 T64 T64 T64 T64 T64 T64
    static const char t512[] = T512;
    write_tokens("long", T512 " admin ada\n0123456789abcdef reader rita\n", path, sizeof(path));
    util_auth a;
    ck_assert_msg(util_auth_load(path, &a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_ptr_eq(util_auth_find(&a, t512), &a.tokens[0]);
    ck_assert_ptr_eq(util_auth_findn(&a, t512, 512), &a.tokens[0]);
    ck_assert_ptr_null(util_auth_find(&a, LONG_TOKEN));
    ck_assert_ptr_null(util_auth_findn(&a, LONG_TOKEN, 513));
    ck_assert_ptr_null(util_auth_findn(&a, "0123456789abcde", 15));
    ck_assert_ptr_eq(util_auth_findn(&a, "0123456789abcdefXX", 16), &a.tokens[1]);
    ck_assert_ptr_null(util_auth_findn(&a, "0123456789abcdef\0", 17));
    size_t big = 32 * 1024;
    char *huge = malloc(big + 1);
    ck_assert_ptr_nonnull(huge);
    memset(huge, 'a', big);
    memcpy(huge, t512, 512);
    huge[big] = '\0';
    ck_assert_ptr_null(util_auth_find(&a, huge));
    free(huge);
    util_auth_free(&a);
}
END_TEST

/* Text straight to util_auth_parse (the fuzzer's way in): a NUL byte is refused with its
 * offset; no newline at the end is fine; many tokens (the table grows past its first size)
 * are each found, and a duplicate far apart is named with both lines. */
START_TEST(test_util_auth_parse_many)
{
    char err[512] = "";
    util_auth a;
    static const char nul[] = "rd-0123456789abcdef reader rita\n\0x";
    ck_assert_int_eq(util_auth_parse(nul, sizeof(nul) - 1, "mem", &a, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "mem: a NUL byte at offset 32"), "'%s'", err);
    enum { N = 20000 };
    util_buf b = {0};
    char line[128];
    for (int i = 0; i < N; i++) {
        int len = snprintf(line, sizeof(line), "tok-%012d-abcdef agent h%d\n", i, i);
        util_buf_put(&b, line, (size_t)len);
    }
    ck_assert_msg(util_auth_parse(b.s, b.len, "mem", &a, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(a.n, N);
    ck_assert_uint_ge(a.nslots, 2 * N);
    for (int i = 0; i < N; i += 97) {
        snprintf(line, sizeof(line), "tok-%012d-abcdef", i);
        ck_assert_ptr_eq(util_auth_find(&a, line), &a.tokens[i]);
    }
    ck_assert_ptr_null(util_auth_find(&a, "tok-000000020000-abcdef"));
    util_auth_free(&a);
    util_buf_put(&b, "tok-000000000007-abcdef admin ada\n", 34);
    ck_assert_int_eq(util_auth_parse(b.s, b.len, "mem", &a, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "mem:20001: this token is already given to h7 on line 8"), "'%s'",
                  err);
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
    tcase_add_test(tc, test_util_auth_sha256_vectors);
    tcase_add_test(tc, test_util_auth_hashed);
    tcase_add_test(tc, test_util_auth_modes);
    tcase_add_test(tc, test_util_auth_owner);
    tcase_add_test(tc, test_util_auth_long_tokens);
    tcase_add_test(tc, test_util_auth_parse_many);
    suite_add_tcase(s, tc);
    return s;
}
