/* SPDX-License-Identifier: MIT */
/* util_http's client certificate (mutual TLS) against a real TLS server that requires one:
 * openssl s_server with a throwaway CA, answering each GET with its status page. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "util_test.h"

static char dir[256];
static pid_t server = -1;
static unsigned port;

static const char *in_dir(const char *name)
{
    static char paths[8][512];
    static unsigned next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

/* Runs the shell command |fmt| in the scratch directory; fails the test if it fails. */
static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
    char cmd[2048], line[2048 + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "cd '%s' && { %s; } >>openssl.log 2>&1", dir, cmd);
    ck_assert_msg(system(line) == 0, "failed: %s (see %s/openssl.log)", cmd, dir);
}

/* NAME.pem and NAME.key, signed by the CA CA (CA.pem, CA.key) with the extension EXT. */
static void issue(const char *name, const char *ca, const char *ext)
{
    sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=%s "
       "-keyout %s.key -out %s.csr && printf '%%s\\n' '%s' >%s.ext && "
       "openssl x509 -req -in %s.csr -CA %s.pem -CAkey %s.key -CAcreateserial -days 2 "
       "-extfile %s.ext -out %s.pem",
       name, name, name, ext, name, name, ca, ca, name, name);
}

static void ca(const char *name)
{
    sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
       "-subj /CN=%s -keyout %s.key -out %s.pem",
       name, name, name);
}

static void setup(void)
{
    util_test_mkdtemp(dir, sizeof(dir), "util_http");
    ca("ca");
    ca("other");
    issue("srv", "ca", "subjectAltName=IP:127.0.0.1");
    issue("h0", "ca", "extendedKeyUsage=clientAuth");
    issue("stranger", "other", "extendedKeyUsage=clientAuth");
    sh("printf 'not a certificate\\n' >junk.pem");
    /* a server that asks every client for a certificate that chains to ca.pem, and fails the
     * handshake without one */
    server = fork();
    ck_assert_int_ge(server, 0);
    if (server == 0) {
        if (!freopen(in_dir("server.out"), "w", stdout) ||
            !freopen(in_dir("server.err"), "w", stderr)) {
            _exit(127);
        }
        execlp("openssl", "openssl", "s_server", "-accept", "127.0.0.1:0", "-cert",
               in_dir("srv.pem"), "-key", in_dir("srv.key"), "-CAfile", in_dir("ca.pem"),
               "-Verify", "1", "-verify_return_error", "-www", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && !port; i++) {
        FILE *f = fopen(in_dir("server.out"), "r");
        char line[256];
        while (f && fgets(line, sizeof(line), f)) {
            const char *colon = strrchr(line, ':');
            if (strncmp(line, "ACCEPT ", 7) == 0 && colon) {
                port = (unsigned)strtoul(colon + 1, NULL, 10);
            }
        }
        if (f) {
            fclose(f);
        }
        usleep(25000);
    }
    ck_assert_msg(port != 0, "openssl s_server did not start (see %s/server.err)", dir);
}

static void teardown(void)
{
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
    }
    util_test_rmdir(dir);
}

/* A GET of the server's status page offering |cert| and |key| (may be NULL). */
static int get(const char *cert, const char *key, int *pstatus, char *err, size_t errlen)
{
    char url[64], *body = NULL;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/", port);
    util_http_opts o = {.cafile = in_dir("ca.pem"), .certfile = cert, .keyfile = key};
    int rv = util_http_request(url, &o, pstatus, &body, NULL, err, errlen);
    if (rv == 0) {
        ck_assert_msg(strstr(body, "<HTML>") != NULL, "not the status page: %s", body);
    }
    free(body);
    return rv;
}

START_TEST(test_util_http_client_cert_accepted)
{
    char err[512] = "";
    int status = 0;
    int rv = get(in_dir("h0.pem"), in_dir("h0.key"), &status, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    ck_assert_int_eq(status, 200);
}
END_TEST

START_TEST(test_util_http_client_cert_missing)
{
    char err[512] = "";
    int status = 0;
    ck_assert_int_eq(get(NULL, NULL, &status, err, sizeof(err)), -EPROTO);
    ck_assert_msg(strstr(err, "the server requires a client certificate (give one with "
                              "--client-cert FILE --client-key FILE)") != NULL,
                  "%s", err);
}
END_TEST

START_TEST(test_util_http_client_cert_other_ca)
{
    char err[512] = "";
    int status = 0;
    ck_assert_int_eq(get(in_dir("stranger.pem"), in_dir("stranger.key"), &status, err,
                         sizeof(err)),
                     -EPROTO);
    ck_assert_msg(strstr(err, "the server refused the client certificate: ") != NULL, "%s", err);
}
END_TEST

/* A certificate or key that cannot be used is bad input, named before anything is sent. */
START_TEST(test_util_http_client_cert_unusable)
{
    static const struct {
        const char *cert, *key, *says;
    } bad[] = {
        {"h0.pem", NULL, "--client-cert and --client-key go together"},
        {NULL, "h0.key", "--client-cert and --client-key go together"},
        {"none.pem", "h0.key", "cannot read the client certificate "},
        {"h0.pem", "none.key", "cannot read the client key "},
        {"junk.pem", "h0.key", "junk.pem holds no PEM certificate (--client-cert)"},
        {"h0.pem", "junk.pem", "junk.pem holds no PEM private key, or one with a passphrase"},
        {"h0.pem", "stranger.key", "stranger.key is not the key of the certificate in "},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *cert = bad[i].cert ? in_dir(bad[i].cert) : NULL;
        const char *key = bad[i].key ? in_dir(bad[i].key) : NULL;
        char err[512] = "";
        int status = 0;
        ck_assert_int_eq(util_http_client_check(cert, key, "--client-cert", "--client-key", err,
                                                sizeof(err)),
                         -EINVAL);
        ck_assert_msg(strstr(err, bad[i].says) != NULL, "case %zu: %s", i, err);
        err[0] = '\0';
        ck_assert_int_eq(get(cert, key, &status, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, bad[i].says) != NULL, "case %zu, request: %s", i, err);
    }
    char err[64];
    ck_assert_int_eq(util_http_client_check(NULL, NULL, "--client-cert", "--client-key", err,
                                            sizeof(err)),
                     0);
    ck_assert_int_eq(util_http_client_check(in_dir("h0.pem"), in_dir("h0.key"), "--client-cert",
                                            "--client-key", err, sizeof(err)),
                     0);
}
END_TEST

Suite *util_http_suite(void)
{
    Suite *s = suite_create("util_http");
    TCase *tc = tcase_create("client_cert");
    /* one server and one set of certificates for the whole case, made before the forks */
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_util_http_client_cert_accepted);
    tcase_add_test(tc, test_util_http_client_cert_missing);
    tcase_add_test(tc, test_util_http_client_cert_other_ca);
    tcase_add_test(tc, test_util_http_client_cert_unusable);
    suite_add_tcase(s, tc);
    return s;
}
