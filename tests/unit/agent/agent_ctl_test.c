/* SPDX-License-Identifier: MIT */
/* The agent's controller client against the real mrc-controller (started here on loopback):
 * the profile and denylist arrive and are kept on disk, an operator's change reaches the agent
 * within 1 s, a controller that goes away leaves the agent on what it has (and a new agent on
 * what was kept), a restarted one is found again with the changes made meanwhile, a wrong
 * token is said so, https works with the CA file (to a name resolved without blocking) and
 * not without. Against a fake controller on the test's own loop: an answer that is no JSON is
 * neither kept nor handed on, retries back off (one line, one on_link(false)), one report is in
 * flight at a time and the newest waits, a change of ports registers again. And
 * util_http_start itself: a timeout, a cancel, a refused connection, requests side by side.
 * Each test works in /tmp/agent_ctl_test.XXXXXX (the controller's logs too), removed when it
 * passes and left for a look when it fails. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "agent_ctl.h"
#include "util.h"

#define AGENT_TOKEN "tok-agent-h0-0000000001"
#define OPERATOR_TOKEN "tok-operator-000000001"
#define OTHER_TOKEN "tok-agent-h0-9999999999"

/* ---- the test's scratch directory, removed at exit even when an assertion ends the test */

static char scratch[64];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void scratch_remove(void)
{
    if (scratch[0]) {
        nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

static void scratch_make(void)
{
    snprintf(scratch, sizeof(scratch), "/tmp/agent_ctl_test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch));
    atexit(scratch_remove);
}

static char *in_scratch(const char *name)
{
    static char paths[8][192];
    static unsigned next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof(paths[0]), "%s/%s", scratch, name);
    return p;
}

/* ---- the log, kept for the assertions and shown on stderr */

static util_buf logged;

static ssize_t log_write(void *cookie, const char *data, size_t len)
{
    (void)cookie;
    util_buf_put(&logged, data, len);
    fwrite(data, 1, len, stderr);
    return (ssize_t)len;
}

static void log_capture(void)
{
    cookie_io_functions_t io = {.write = log_write};
    FILE *f = fopencookie(NULL, "w", io);
    ck_assert_ptr_nonnull(f);
    setvbuf(f, NULL, _IOLBF, 0);
    util_log_init("agent_ctl_test", f);
    util_log_level = UTIL_LOG_INFO;
    free(logged.s);
    logged = (util_buf){0};
}

static unsigned log_count(const char *needle)
{
    unsigned n = 0;
    for (const char *s = logged.s; s && (s = strstr(s, needle)) != NULL; s++) {
        n++;
    }
    return n;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the loop: runs until |done| holds or |ms| pass; returns whether it holds */

static void tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

static bool run_until(struct event_base *base, bool (*done)(void *), void *arg, unsigned ms)
{
    struct event *t = event_new(base, -1, EV_PERSIST, tick, NULL);
    struct timeval tv = {0, 10000};
    event_add(t, &tv);
    uint64_t end = now_ms() + ms;
    bool ok;
    while (!(ok = done && done(arg)) && now_ms() < end) {
        event_base_loop(base, EVLOOP_ONCE);
    }
    event_free(t);
    return ok;
}

static void run_for(struct event_base *base, unsigned ms)
{
    run_until(base, NULL, NULL, ms);
}

/* ---- what the callbacks saw */

typedef struct seen {
    unsigned profiles, denylists, ups, downs;
    int link; /* -1 none yet */
    uint64_t version;
    uint64_t deny_at; /* now_ms() of the last denylist */
    char *profile, *denylist;
} seen;

static void on_profile(void *user, const char *json, size_t len)
{
    seen *s = user;
    ck_assert_uint_eq(strlen(json), len);
    s->profiles++;
    free(s->profile);
    s->profile = util_xstrdup(json);
}

static void on_denylist(void *user, uint64_t version, const char *json, size_t len)
{
    seen *s = user;
    ck_assert_uint_eq(strlen(json), len);
    s->denylists++;
    s->version = version;
    s->deny_at = now_ms();
    free(s->denylist);
    s->denylist = util_xstrdup(json);
}

static void on_link(void *user, bool up)
{
    seen *s = user;
    /* once per change: never twice the same */
    ck_assert_int_ne(s->link, up);
    s->link = up;
    if (up) {
        s->ups++;
    } else {
        s->downs++;
    }
}

static void seen_init(seen *s)
{
    *s = (seen){.link = -1};
}

static void seen_fini(seen *s)
{
    free(s->profile);
    free(s->denylist);
}

static bool is_up(void *arg)
{
    return ((seen *)arg)->link == 1;
}

static bool is_down(void *arg)
{
    return ((seen *)arg)->link == 0;
}

typedef struct want_version {
    seen *s;
    uint64_t version;
} want_version;

static bool has_version(void *arg)
{
    want_version *w = arg;
    return w->s->version >= w->version;
}

static agent_ctl_cfg cfg_for(const char *url, const char *token, const char *state, seen *s)
{
    static const agent_ctl_port ports[] = {{0, true}, {1, true}};
    return (agent_ctl_cfg){
        .url = url,
        .token = token,
        .host = "h0",
        .state_dir = state,
        .version = "0.1.0-test",
        .mode = "srv6",
        .oob = "127.0.0.1:7000",
        .ports = ports,
        .nports = 2,
        .on_profile = on_profile,
        .on_denylist = on_denylist,
        .on_link = on_link,
        .user = s,
        .backoff_min_ms = 50,
        .backoff_max_ms = 400,
    };
}

static char *file_text(const char *path)
{
    char *data = NULL;
    size_t len;
    return util_read_file(path, &data, &len) == 0 ? data : NULL;
}

/* ---- the real controller */

typedef struct controller {
    pid_t pid;
    unsigned port;
    char url[64];
    unsigned starts;
    bool tls; /* https, with the certificate ctl.pem of 127.0.0.1 and localhost (tls_make) */
} controller;

/* A self-signed certificate for 127.0.0.1 and localhost, ctl.pem and ctl.key, with openssl. */
static void tls_make(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
             "-subj /CN=ctl -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout %s "
             "-out %s 2>%s",
             in_scratch("ctl.key"), in_scratch("ctl.pem"), in_scratch("openssl.log"));
    ck_assert_msg(system(cmd) == 0, "openssl could not make a certificate (see %s)",
                  in_scratch("openssl.log"));
}

static void controller_start(controller *c)
{
    char bin[512], topo[512], listen[64], logname[32];
    snprintf(bin, sizeof(bin), "%s/mrc-controller", AGENT_TEST_BIN);
    snprintf(topo, sizeof(topo), "%s/deploy/topologies/lab.json", AGENT_TEST_ROOT);
    ck_assert_msg(access(bin, X_OK) == 0,
                  "%s is not built (cmake --build ... --target mrc-controller)", bin);
    FILE *f = fopen(in_scratch("tokens"), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# TOKEN ROLE NAME\n%s agent h0\n%s operator bob\n", AGENT_TOKEN, OPERATOR_TOKEN);
    fclose(f);
    /* the controller takes a tokens file only its owner can read */
    ck_assert_int_eq(chmod(in_scratch("tokens"), 0600), 0);
    snprintf(listen, sizeof(listen), "127.0.0.1:%u", c->port);
    snprintf(logname, sizeof(logname), "controller.%u.log", ++c->starts);
    const char *log = in_scratch(logname);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    pid_t parent = getpid();
    c->pid = fork();
    ck_assert_int_ge(c->pid, 0);
    if (c->pid == 0) {
        /* it dies with the test, also when an assertion ends the test at once */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(127);
        }
        dup2(fd, 2);
        if (c->tls) {
            execl(bin, bin, "--topology", topo, "--db", in_scratch("c.db"), "--tokens",
                  in_scratch("tokens"), "--listen", listen, "--floor", "0", "--threads", "2",
                  "--cert", in_scratch("ctl.pem"), "--key", in_scratch("ctl.key"), (char *)NULL);
        } else {
            execl(bin, bin, "--topology", topo, "--db", in_scratch("c.db"), "--tokens",
                  in_scratch("tokens"), "--listen", listen, "--floor", "0", "--threads", "2",
                  (char *)NULL);
        }
        _exit(127);
    }
    close(fd);
    for (int i = 0; i < 400; i++) {
        char *text = file_text(log), *p;
        if (text && (p = strstr(text, " port ")) && strstr(p, "(http")) {
            c->port = (unsigned)strtoul(p + 6, NULL, 10);
            free(text);
            snprintf(c->url, sizeof(c->url), "%s://127.0.0.1:%u", c->tls ? "https" : "http",
                     c->port);
            return;
        }
        free(text);
        ck_assert_msg(waitpid(c->pid, NULL, WNOHANG) == 0, "the controller did not start: %s", log);
        usleep(25000);
    }
    ck_abort_msg("the controller did not start in 10 s");
}

static void controller_kill(controller *c)
{
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
    c->pid = 0;
}

/* An operator's denylist entry for |element|; returns the version it made. */
static uint64_t deny_add(const controller *c, const char *element)
{
    char url[128], body[256], err[512], *answer = NULL;
    int status;
    snprintf(url, sizeof(url), "%s/api/v1/denylist", c->url);
    snprintf(body, sizeof(body), "{\"element\": \"%s\", \"reason\": \"agent_ctl test\"}", element);
    const char *ca = c->tls ? in_scratch("ctl.pem") : NULL;
    util_http_opts post = {.method = "POST",
                           .bearer = OPERATOR_TOKEN,
                           .body = body,
                           .bodylen = strlen(body),
                           .cafile = ca};
    int rv = util_http_request(url, &post, &status, &answer, NULL, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    ck_assert_msg(status == 201, "POST /api/v1/denylist: %d %s", status, answer);
    free(answer);
    snprintf(url, sizeof(url), "%s/api/v1/denylist/version?wait=0", c->url);
    util_http_opts get = {.bearer = OPERATOR_TOKEN, .cafile = ca};
    rv = util_http_request(url, &get, &status, &answer, NULL, err, sizeof(err));
    ck_assert_msg(rv == 0 && status == 200, "%s", err);
    const char *v = strstr(answer, "\"version\"");
    ck_assert_ptr_nonnull(v);
    uint64_t version = strtoull(strchr(v, ':') + 1, NULL, 10);
    free(answer);
    return version;
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    scratch_make();
    log_capture();
}

/* The profile and denylist arrive, are kept on disk as they came, and the agent is told it is
 * connected; an operator's change reaches on_denylist within 1 s; a report is accepted. */
START_TEST(test_agent_ctl_sync_and_push)
{
    controller ctl = {0};
    seen s;
    agent_ctl *c;
    struct event_base *base = event_base_new();
    seen_init(&s);
    controller_start(&ctl);
    agent_ctl_cfg cfg = cfg_for(ctl.url, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert_msg(run_until(base, is_up, &s, 5000), "not connected in 5 s");
    ck_assert_uint_eq(s.profiles, 1);
    ck_assert_uint_eq(s.denylists, 1);
    ck_assert_ptr_nonnull(strstr(s.profile, "\"host\":\"h0\""));
    char *kept = file_text(in_scratch("state/profile.json"));
    ck_assert_str_eq(kept, s.profile);
    free(kept);
    kept = file_text(in_scratch("state/denylist.json"));
    ck_assert_str_eq(kept, s.denylist);
    free(kept);
    ck_assert_uint_eq(log_count("connected"), 1);

    for (int round = 0; round < 3; round++) {
        /* the agent is holding the push channel by now */
        run_for(base, 100);
        uint64_t t0 = now_ms();
        /* three elements: the same entry again would be the one in force, no new version */
        static const char *const elements[] = {"p0-t1-1", "p1-t1-0", "p1-t1-1"};
        uint64_t v = deny_add(&ctl, elements[round]);
        want_version w = {&s, v};
        ck_assert_msg(run_until(base, has_version, &w, 1000), "version %" PRIu64 " not in 1 s", v);
        ck_assert_msg(s.deny_at - t0 < 1000, "the change took %" PRIu64 " ms", s.deny_at - t0);
        fprintf(stderr, "agent_ctl_test: the POST to on_denylist: %" PRIu64 " ms\n",
                s.deny_at - t0);
        ck_assert_uint_eq(s.version, v);
        ck_assert_uint_eq(s.denylists, (unsigned)round + 2);
        kept = file_text(in_scratch("state/denylist.json"));
        ck_assert_str_eq(kept, s.denylist);
        free(kept);
    }
    ck_assert_ptr_nonnull(strstr(s.denylist, "p1-t1-0"));

    static const char report[] = "{\"host\": \"h0\", \"evs\": []}";
    agent_ctl_stats st;
    ck_assert_int_eq(agent_ctl_report(c, report, strlen(report)), 0);
    for (int i = 0; i < 200; i++) {
        agent_ctl_get_stats(c, &st);
        if (st.reports_sent) {
            break;
        }
        run_for(base, 10);
    }
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.reports_sent, 1);
    ck_assert_uint_eq(st.reports_dropped, 0);
    ck_assert(st.connected);
    ck_assert_uint_eq(st.denylist_version, s.version);
    ck_assert_uint_eq(s.ups, 1);
    ck_assert_uint_eq(s.downs, 0);
    ck_assert_uint_eq(s.profiles, 1);
    agent_ctl_free(c);
    controller_kill(&ctl);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* The controller killed: the agent is told once and keeps its profile and denylist; a report
 * is dropped and counted. A new agent started meanwhile gets the kept ones before
 * agent_ctl_new returns. The controller back (a change made meanwhile): both reconnect and
 * see it. */
START_TEST(test_agent_ctl_controller_away)
{
    controller ctl = {0};
    seen s, s2;
    agent_ctl *c, *c2;
    agent_ctl_stats st;
    struct event_base *base = event_base_new();
    seen_init(&s);
    seen_init(&s2);
    controller_start(&ctl);
    deny_add(&ctl, "p0-t1-0");
    agent_ctl_cfg cfg = cfg_for(ctl.url, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert_msg(run_until(base, is_up, &s, 5000), "not connected in 5 s");
    uint64_t v1 = s.version;
    ck_assert_uint_ge(v1, 1);
    char *profile = util_xstrdup(s.profile), *denylist = util_xstrdup(s.denylist);
    run_for(base, 100);

    controller_kill(&ctl);
    ck_assert_msg(run_until(base, is_down, &s, 3000), "the loss not seen in 3 s");
    run_for(base, 1000); /* retries, a few */
    ck_assert_uint_eq(s.downs, 1);
    ck_assert_uint_eq(s.profiles, 1);
    ck_assert_uint_eq(s.denylists, 1);
    agent_ctl_get_stats(c, &st);
    ck_assert(!st.connected);
    ck_assert_uint_eq(st.denylist_version, v1);
    ck_assert_uint_ge(st.failures, 3);
    ck_assert_int_eq(agent_ctl_report(c, "{}", 2), -ENOTCONN);
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.reports_dropped, 1);
    /* one line for the loss, none per retry */
    ck_assert_uint_eq(log_count("lost:"), 1);
    ck_assert_uint_eq(log_count("retrying"), 1);
    char *kept = file_text(in_scratch("state/denylist.json"));
    ck_assert_str_eq(kept, denylist);
    free(kept);

    agent_ctl_cfg cfg2 = cfg_for(ctl.url, AGENT_TOKEN, in_scratch("state"), &s2);
    ck_assert_int_eq(agent_ctl_new(base, &cfg2, &c2), 0);
    ck_assert_uint_eq(s2.profiles, 1);
    ck_assert_uint_eq(s2.denylists, 1);
    ck_assert_str_eq(s2.profile, profile);
    ck_assert_str_eq(s2.denylist, denylist);
    ck_assert_uint_eq(s2.version, v1);
    ck_assert_msg(run_until(base, is_down, &s2, 3000), "the new agent not told in 3 s");

    controller_start(&ctl);
    uint64_t v2 = deny_add(&ctl, "p1-t1-1");
    ck_assert_uint_gt(v2, v1);
    want_version w = {&s, v2}, w2 = {&s2, v2};
    ck_assert_msg(run_until(base, is_up, &s, 5000), "not connected again in 5 s");
    ck_assert_msg(run_until(base, is_up, &s2, 5000), "the new agent not connected in 5 s");
    ck_assert(run_until(base, has_version, &w, 1000));
    ck_assert(run_until(base, has_version, &w2, 1000));
    ck_assert_ptr_nonnull(strstr(s.denylist, "p1-t1-1"));
    ck_assert_str_eq(s.denylist, s2.denylist);
    /* the profile did not change: not handed on again */
    ck_assert_uint_eq(s.profiles, 1);
    ck_assert_uint_eq(s2.profiles, 1);
    ck_assert_uint_eq(s.ups, 2);
    ck_assert_uint_eq(s.downs, 1);
    agent_ctl_get_stats(c, &st);
    ck_assert(st.connected);
    ck_assert_uint_eq(st.denylist_version, v2);
    agent_ctl_free(c);
    agent_ctl_free(c2);
    controller_kill(&ctl);
    free(profile);
    free(denylist);
    event_base_free(base);
    seen_fini(&s);
    seen_fini(&s2);
}
END_TEST

/* A token the controller does not know: said once, clearly, and nothing is fetched. */
START_TEST(test_agent_ctl_wrong_token)
{
    controller ctl = {0};
    seen s;
    agent_ctl *c;
    struct event_base *base = event_base_new();
    seen_init(&s);
    controller_start(&ctl);
    agent_ctl_cfg cfg = cfg_for(ctl.url, OTHER_TOKEN, in_scratch("state"), &s);
    cfg.slow_retry_ms = 200;
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_down, &s, 3000));
    run_for(base, 800);
    ck_assert_uint_eq(s.profiles, 0);
    ck_assert_uint_eq(s.denylists, 0);
    ck_assert_uint_eq(s.ups, 0);
    ck_assert_uint_eq(log_count("refuses the agent's token"), 1);
    ck_assert_uint_eq(log_count("(401: "), 1);
    ck_assert_int_eq(access(in_scratch("state/profile.json"), F_OK), -1);
    agent_ctl_stats st;
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_ge(st.failures, 2);
    agent_ctl_free(c);
    controller_kill(&ctl);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* Over https: the controller named by a host name (resolved without blocking) and trusted
 * through the CA file; a change arrives as over http. Without the CA file: not trusted, and
 * said so. */
START_TEST(test_agent_ctl_https)
{
    controller ctl = {.tls = true};
    seen s, s2;
    agent_ctl *c, *c2;
    char url[64];
    struct event_base *base = event_base_new();
    seen_init(&s);
    seen_init(&s2);
    tls_make();
    controller_start(&ctl);
    snprintf(url, sizeof(url), "https://localhost:%u", ctl.port);
    agent_ctl_cfg cfg = cfg_for(url, AGENT_TOKEN, in_scratch("state"), &s);
    cfg.cafile = in_scratch("ctl.pem");
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert_msg(run_until(base, is_up, &s, 5000), "not connected in 5 s");
    ck_assert_uint_eq(s.profiles, 1);
    run_for(base, 100);
    uint64_t v = deny_add(&ctl, "p0-t1-1");
    want_version w = {&s, v};
    ck_assert_msg(run_until(base, has_version, &w, 1000), "version %" PRIu64 " not in 1 s", v);

    agent_ctl_cfg cfg2 = cfg_for(url, AGENT_TOKEN, in_scratch("state2"), &s2);
    ck_assert_int_eq(agent_ctl_new(base, &cfg2, &c2), 0);
    ck_assert(run_until(base, is_down, &s2, 3000));
    ck_assert_uint_eq(s2.profiles, 0);
    ck_assert_uint_eq(log_count("the server's certificate is not trusted"), 1);
    agent_ctl_free(c);
    agent_ctl_free(c2);
    controller_kill(&ctl);
    event_base_free(base);
    seen_fini(&s);
    seen_fini(&s2);
}
END_TEST

/* ---- a fake controller on the test's own loop */

#define FAKE_HELD 8

typedef struct fake {
    struct evhttp *http;
    unsigned port;
    char url[64];
    bool garbage_profile;     /* answer the profile with what is no JSON */
    bool all_503;             /* answer everything with 503 */
    bool hold_reports;        /* keep reports unanswered */
    bool registration_exists; /* else 404 for POST /api/v1/agents */
    bool no_leader;           /* answer everything 503 "no leader", Retry-After: 1 */
    char leader[64];          /* a follower: every POST is a 307 to this base URL */
    unsigned redirects;       /* the 307s given */
    unsigned requests;        /* every request */
    uint64_t epoch;           /* told beside the version when not 0 */
    uint64_t version;
    uint64_t at[64]; /* when each request came, now_ms() */
    unsigned nat;
    unsigned profiles, registrations, polls;
    char registration[512]; /* the last one's body */
    struct evhttp_request *polls_held[FAKE_HELD];
    struct evhttp_request *reports_held[FAKE_HELD];
    unsigned npolls_held, nreports_held, reports, reports_open_max;
    char report[256]; /* the last one's body */
} fake;

static void fake_reply(struct evhttp_request *req, int status, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add(b, body, strlen(body));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, status, "-", b);
    evbuffer_free(b);
}

static void fake_body(struct evhttp_request *req, char *dest, size_t destlen)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    n = n < destlen - 1 ? n : destlen - 1;
    evbuffer_copyout(in, dest, n);
    dest[n] = '\0';
}

/* {"version": V[, "epoch": E]REST} */
static void fake_version(const fake *f, char *dest, size_t destlen, const char *rest)
{
    if (f->epoch) {
        snprintf(dest, destlen, "{\"version\": %" PRIu64 ", \"epoch\": %" PRIu64 "%s}", f->version,
                 f->epoch, rest);
    } else {
        snprintf(dest, destlen, "{\"version\": %" PRIu64 "%s}", f->version, rest);
    }
}

static void fake_poll_answer(fake *f)
{
    char body[96];
    fake_version(f, body, sizeof(body), "");
    for (unsigned i = 0; i < f->npolls_held; i++) {
        fake_reply(f->polls_held[i], 200, body);
    }
    f->npolls_held = 0;
}

static void fake_handle(struct evhttp_request *req, void *arg)
{
    fake *f = arg;
    const char *uri = evhttp_request_get_uri(req);
    char body[512];
    if (f->nat < 64) {
        f->at[f->nat++] = now_ms();
    }
    f->requests++;
    if (f->all_503) {
        fake_reply(req, 503, "{\"detail\": \"the store is away\"}");
    } else if (f->no_leader) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
        fake_reply(req, 503, "{\"title\": \"no leader\", \"status\": 503}");
    } else if (f->leader[0] && evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
        char to[256];
        f->redirects++;
        snprintf(to, sizeof(to), "%s%s", f->leader, uri);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Location", to);
        evhttp_add_header(evhttp_request_get_output_headers(req), "X-Mrcfab-Leader", f->leader);
        snprintf(body, sizeof(body), "{\"title\": \"not the leader\", \"leader\": \"%s\"}",
                 f->leader);
        fake_reply(req, 307, body);
    } else if (strcmp(uri, "/api/v1/agents") == 0) {
        f->registrations++;
        fake_body(req, f->registration, sizeof(f->registration));
        if (f->registration_exists) {
            fake_reply(req, 201, f->registration);
        } else {
            fake_reply(req, 404, "{\"detail\": \"no resource at /api/v1/agents\"}");
        }
    } else if (strcmp(uri, "/api/v1/hosts/h0/profile") == 0) {
        f->profiles++;
        fake_reply(req, 200, f->garbage_profile ? "{\"host\": \"h0\", " : "{\"host\": \"h0\"}");
    } else if (strcmp(uri, "/api/v1/denylist") == 0) {
        fake_version(f, body, sizeof(body), ", \"entries\": []");
        fake_reply(req, 200, body);
    } else if (strncmp(uri, "/api/v1/denylist/version?after=", 31) == 0) {
        f->polls++;
        if (strtoull(uri + 31, NULL, 10) != f->version || f->npolls_held == FAKE_HELD) {
            fake_version(f, body, sizeof(body), "");
            fake_reply(req, 200, body);
        } else {
            f->polls_held[f->npolls_held++] = req;
        }
    } else if (strcmp(uri, "/api/v1/reports") == 0) {
        f->reports++;
        fake_body(req, f->report, sizeof(f->report));
        if (f->hold_reports && f->nreports_held < FAKE_HELD) {
            f->reports_held[f->nreports_held++] = req;
            if (f->nreports_held > f->reports_open_max) {
                f->reports_open_max = f->nreports_held;
            }
        } else {
            fake_reply(req, 202, "{}");
        }
    } else {
        fake_reply(req, 404, "{\"detail\": \"no such resource\"}");
    }
}

static void fake_start(fake *f, struct event_base *base)
{
    *f = (fake){.version = 7};
    f->http = evhttp_new(base);
    ck_assert_ptr_nonnull(f->http);
    evhttp_set_allowed_methods(f->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
    evhttp_set_gencb(f->http, fake_handle, f);
    struct evhttp_bound_socket *b = evhttp_bind_socket_with_handle(f->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(b);
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(b), (struct sockaddr *)&sin, &len), 0);
    f->port = ntohs(sin.sin_port);
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u/", f->port);
}

static void fake_stop(fake *f)
{
    if (!f->http) {
        return; /* killed */
    }
    fake_poll_answer(f);
    for (unsigned i = 0; i < f->nreports_held; i++) {
        fake_reply(f->reports_held[i], 202, "{}");
    }
    evhttp_free(f->http);
}

/* A controller that dies: its connections close, the requests it holds never answered. */
static void fake_kill(fake *f)
{
    f->npolls_held = f->nreports_held = 0;
    evhttp_free(f->http);
    f->http = NULL;
}

/* The fake's base URL, without the slash of f->url. */
static const char *fake_base(const fake *f)
{
    static char bases[4][64];
    static unsigned next;
    char *b = bases[next++ % 4];
    snprintf(b, sizeof(bases[0]), "http://127.0.0.1:%u", f->port);
    return b;
}

static bool fake_polled(void *arg)
{
    return ((fake *)arg)->npolls_held > 0;
}

/* A profile that is no JSON is neither kept nor handed on, and counts as a failure; a
 * controller without the registration endpoint is said so once and the agent goes on. */
START_TEST(test_agent_ctl_garbage_not_kept)
{
    struct event_base *base = event_base_new();
    fake f;
    seen s;
    agent_ctl *c;
    seen_init(&s);
    fake_start(&f, base);
    f.garbage_profile = true;
    agent_ctl_cfg cfg = cfg_for(f.url, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_down, &s, 2000));
    run_for(base, 500);
    ck_assert_uint_ge(f.profiles, 2);
    ck_assert_uint_eq(s.profiles, 0);
    ck_assert_uint_eq(s.denylists, 0);
    ck_assert_int_eq(access(in_scratch("state/profile.json"), F_OK), -1);
    ck_assert_uint_eq(log_count("the profile is not a JSON object"), 1);
    ck_assert_uint_eq(log_count("the registration is refused (404"), 1);

    f.garbage_profile = false;
    ck_assert(run_until(base, is_up, &s, 2000));
    ck_assert_uint_eq(s.profiles, 1);
    ck_assert_str_eq(s.profile, "{\"host\": \"h0\"}");
    ck_assert_uint_eq(s.version, 7);
    ck_assert_uint_eq(s.downs, 1);
    /* the 404 of the registration said once, however often it came */
    ck_assert_uint_ge(f.registrations, 3);
    ck_assert_uint_eq(log_count("the registration is refused"), 1);
    ck_assert_ptr_nonnull(strstr(f.registration, "\"host\":\"h0\""));
    ck_assert_ptr_nonnull(strstr(f.registration, "\"mode\":\"srv6\""));
    ck_assert_ptr_nonnull(strstr(f.registration, "{\"port\":1,\"up\":true}"));
    ck_assert_ptr_nonnull(strstr(f.registration, "\"oob\":\"127.0.0.1:7000\""));
    char *kept = file_text(in_scratch("state/profile.json"));
    ck_assert_str_eq(kept, "{\"host\": \"h0\"}");
    free(kept);
    agent_ctl_free(c);
    fake_stop(&f);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* A controller that answers 503: retries wait longer each time up to the cap, with jitter (in
 * the upper half of each wait); on_link(false) once, one log line. */
START_TEST(test_agent_ctl_backoff)
{
    struct event_base *base = event_base_new();
    fake f;
    seen s;
    agent_ctl *c;
    seen_init(&s);
    fake_start(&f, base);
    f.all_503 = true;
    agent_ctl_cfg cfg = cfg_for(f.url, AGENT_TOKEN, in_scratch("state"), &s);
    cfg.backoff_min_ms = 100;
    cfg.backoff_max_ms = 800;
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    run_for(base, 4500);
    ck_assert_uint_eq(s.downs, 1);
    ck_assert_uint_eq(log_count("it answers 503 (the store is away)"), 1);
    /* waits of 100, 200, 400, 800, 800, ... each in [w/2, w] */
    ck_assert_uint_ge(f.nat, 6);
    for (unsigned i = 1; i < f.nat; i++) {
        uint64_t w = 100u << (i - 1 < 3 ? i - 1 : 3), got = f.at[i] - f.at[i - 1];
        ck_assert_msg(got + 5 >= w / 2 && got <= w + 150,
                      "wait %u: %" PRIu64 " ms, want %" PRIu64 "/2 to %" PRIu64, i, got, w, w);
    }
    f.all_503 = false;
    ck_assert(run_until(base, is_up, &s, 2000));
    ck_assert_uint_eq(log_count("connected"), 1);
    agent_ctl_free(c);
    fake_stop(&f);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* Reports: one in flight; those given meanwhile wait in one place, the newest kept; the one
 * waiting goes when the one in flight is answered. */
START_TEST(test_agent_ctl_report_one_in_flight)
{
    struct event_base *base = event_base_new();
    fake f;
    seen s;
    agent_ctl *c;
    agent_ctl_stats st;
    char body[64];
    seen_init(&s);
    fake_start(&f, base);
    f.hold_reports = true;
    f.registration_exists = true;
    agent_ctl_cfg cfg = cfg_for(f.url, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_up, &s, 2000));
    for (int i = 1; i <= 5; i++) {
        snprintf(body, sizeof(body), "{\"host\": \"h0\", \"n\": %d}", i);
        ck_assert_int_eq(agent_ctl_report(c, body, strlen(body)), 0);
        run_for(base, 50);
    }
    ck_assert_uint_eq(f.reports, 1);
    ck_assert_uint_eq(f.reports_open_max, 1);
    ck_assert_str_eq(f.report, "{\"host\": \"h0\", \"n\": 1}");
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.reports_dropped, 3); /* 2, 3, 4: each replaced by a newer one */
    f.hold_reports = false;
    fake_reply(f.reports_held[0], 202, "{}");
    f.nreports_held = 0;
    run_for(base, 200);
    ck_assert_uint_eq(f.reports, 2);
    ck_assert_str_eq(f.report, "{\"host\": \"h0\", \"n\": 5}");
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.reports_sent, 2);
    ck_assert_uint_eq(st.reports_dropped, 3);
    ck_assert_int_eq(agent_ctl_report(c, "", 0), -EINVAL);
    agent_ctl_free(c);
    fake_stop(&f);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* A port changing state registers again at once, even while the push channel is held; the
 * push channel is held again after it. Bad ports are refused. */
START_TEST(test_agent_ctl_set_ports)
{
    struct event_base *base = event_base_new();
    fake f;
    seen s;
    agent_ctl *c;
    seen_init(&s);
    fake_start(&f, base);
    f.registration_exists = true;
    agent_ctl_cfg cfg = cfg_for(f.url, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_up, &s, 2000));
    ck_assert(run_until(base, fake_polled, &f, 2000));
    ck_assert_uint_eq(f.registrations, 1);
    unsigned profiles = f.profiles;
    agent_ctl_port ports[] = {{0, true}, {1, false}};
    ck_assert_int_eq(agent_ctl_set_ports(c, ports, 2), 0);
    run_for(base, 300);
    ck_assert_uint_eq(f.registrations, 2);
    ck_assert_ptr_nonnull(strstr(f.registration, "{\"port\":1,\"up\":false}"));
    ck_assert_uint_eq(f.profiles, profiles);
    ck_assert_uint_eq(s.ups, 1);
    ck_assert_uint_eq(s.downs, 0);
    /* the push channel is held again, and still works */
    f.version = 8;
    fake_poll_answer(&f);
    want_version w = {&s, 8};
    ck_assert(run_until(base, has_version, &w, 1000));
    agent_ctl_port twice[] = {{1, true}, {1, false}}, beyond[] = {{16, true}};
    ck_assert_int_eq(agent_ctl_set_ports(c, twice, 2), -EINVAL);
    ck_assert_int_eq(agent_ctl_set_ports(c, beyond, 1), -EINVAL);
    agent_ctl_free(c);
    fake_stop(&f);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* Bad settings are refused with a reason. */
START_TEST(test_agent_ctl_bad_cfg)
{
    struct event_base *base = event_base_new();
    seen s;
    agent_ctl *c = (agent_ctl *)1;
    seen_init(&s);
    agent_ctl_cfg cfg = cfg_for("ftp://x", AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), -EINVAL);
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(log_count("http:// or https://"), 1);
    cfg = cfg_for("http://127.0.0.1:1", AGENT_TOKEN, in_scratch("state"), &s);
    cfg.host = "h0/../x";
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), -EINVAL);
    cfg.host = "h0";
    cfg.mode = "fast";
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), -EINVAL);
    cfg.mode = "ecmp";
    cfg.state_dir = "/proc/no/such/dir";
    ck_assert_int_lt(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert_ptr_null(c);
    event_base_free(base);
}
END_TEST

/* ---- util_http_start */

typedef struct ended {
    unsigned n;
    int rv, status;
    char err[512];
    char *body;
    char leader[128]; /* the X-Mrcfab-Leader header ("" none) */
    unsigned retry_after;
    uint64_t at;
} ended;

static void on_end(void *user, util_http_result *res)
{
    ended *e = user;
    e->n++;
    e->rv = res->rv;
    e->status = res->status;
    e->at = now_ms();
    snprintf(e->err, sizeof(e->err), "%s", res->err);
    snprintf(e->leader, sizeof(e->leader), "%s", res->leader ? res->leader : "");
    e->retry_after = res->retry_after;
    /* taken: freed by the test */
    e->body = res->body;
    res->body = NULL;
}

static bool ended_all(void *arg)
{
    ended *e = arg;
    return e[0].n && e[1].n;
}

static bool ended_one(void *arg)
{
    return ((ended *)arg)->n > 0;
}

/* ---- several controllers (an HA cluster's) */

static bool polled_on(void *arg)
{
    return ((fake *)arg)->npolls_held > 0;
}

static bool logged_once(void *arg)
{
    return log_count(arg) > 0;
}

static bool has_epoch(void *arg)
{
    agent_ctl_stats st;
    agent_ctl_get_stats(((void **)arg)[0], &st);
    return st.epoch == *(uint64_t *)((void **)arg)[1];
}

/* (epoch, version) ordered lexicographically: the epoch first. */
START_TEST(test_agent_ctl_view_order)
{
    ck_assert_int_eq(agent_ctl_view_cmp(1, 5, 1, 5), 0);
    ck_assert_int_lt(agent_ctl_view_cmp(1, 4, 1, 5), 0);
    ck_assert_int_gt(agent_ctl_view_cmp(1, 6, 1, 5), 0);
    ck_assert_int_lt(agent_ctl_view_cmp(1, 900, 2, 1), 0); /* an older leader's higher count */
    ck_assert_int_gt(agent_ctl_view_cmp(3, 0, 2, UINT64_MAX), 0);
    ck_assert_int_lt(agent_ctl_view_cmp(0, 9, 1, 0), 0); /* no epoch counts as 0 */
}
END_TEST

/* The route after one try: the next controller on no answer or no leader, the leader a 307
 * names (3 hops at most), an answer otherwise; a fault of the settings goes nowhere else. */
START_TEST(test_util_http_route)
{
    const char *nl = "{\"title\": \"no leader\", \"status\": 503}";
    const char *ld = "http://10.0.0.1:8080";
    ck_assert_int_eq(util_http_route_of(0, 200, "{}", 2, NULL, 0), UTIL_HTTP_ANSWERED);
    ck_assert_int_eq(util_http_route_of(0, 404, "{}", 2, NULL, 0), UTIL_HTTP_ANSWERED);
    ck_assert_int_eq(util_http_route_of(-ECONNREFUSED, 0, NULL, 0, NULL, 0), UTIL_HTTP_NEXT);
    ck_assert_int_eq(util_http_route_of(-ETIMEDOUT, 0, NULL, 0, NULL, 0), UTIL_HTTP_NEXT);
    ck_assert_int_eq(util_http_route_of(-ECONNRESET, 0, NULL, 0, NULL, 0), UTIL_HTTP_NEXT);
    ck_assert_int_eq(util_http_route_of(-EHOSTUNREACH, 0, NULL, 0, NULL, 0), UTIL_HTTP_NEXT);
    ck_assert_int_eq(util_http_route_of(-EPROTO, 0, NULL, 0, NULL, 0), UTIL_HTTP_GIVE_UP);
    ck_assert_int_eq(util_http_route_of(-EINVAL, 0, NULL, 0, NULL, 0), UTIL_HTTP_GIVE_UP);
    ck_assert_int_eq(util_http_route_of(0, 503, nl, strlen(nl), NULL, 0), UTIL_HTTP_NEXT);
    ck_assert_int_eq(util_http_route_of(0, 503, "{\"title\": \"busy\"}", 17, NULL, 0),
                     UTIL_HTTP_ANSWERED);
    ck_assert_int_eq(util_http_route_of(0, 503, "no leader", 9, NULL, 0), UTIL_HTTP_ANSWERED);
    for (unsigned hops = 0; hops < UTIL_HTTP_MAX_HOPS; hops++) {
        ck_assert_int_eq(util_http_route_of(0, 307, "{}", 2, ld, hops), UTIL_HTTP_FOLLOW);
    }
    ck_assert_int_eq(UTIL_HTTP_MAX_HOPS, 3);
    ck_assert_int_eq(util_http_route_of(0, 307, "{}", 2, ld, 3), UTIL_HTTP_NEXT);
    ck_assert_int_eq(util_http_route_of(0, 307, "{}", 2, NULL, 0), UTIL_HTTP_ANSWERED);
    ck_assert_int_eq(util_http_route_of(0, 307, "{}", 2, "", 0), UTIL_HTTP_ANSWERED);
}
END_TEST

/* A dead controller first in the list: the next one, at once (no backoff), and it stays the
 * one talked to. */
START_TEST(test_agent_ctl_next_on_dead)
{
    struct event_base *base = event_base_new();
    fake f;
    seen s;
    agent_ctl *c;
    char list[160];
    seen_init(&s);
    fake_start(&f, base);
    f.registration_exists = true;
    snprintf(list, sizeof(list), "http://127.0.0.1:1,%s", f.url);
    agent_ctl_cfg cfg = cfg_for(list, AGENT_TOKEN, in_scratch("state"), &s);
    cfg.backoff_min_ms = 5000; /* a backoff would show */
    cfg.backoff_max_ms = 5000;
    uint64_t t0 = now_ms();
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_up, &s, 2000));
    ck_assert_msg(now_ms() - t0 < 1000, "%" PRIu64 " ms", now_ms() - t0);
    ck_assert_str_eq(agent_ctl_current(c), fake_base(&f));
    ck_assert_uint_eq(f.registrations, 1);
    ck_assert_uint_eq(s.downs, 0);
    ck_assert_uint_eq(log_count("controller http://127.0.0.1:1: registration: "), 1);
    agent_ctl_free(c);
    fake_stop(&f);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* A follower's 307: the registration and the reports go to the leader it names, sent again at
 * once; the agent then talks to the leader. util_http gives the header to its caller. */
START_TEST(test_agent_ctl_follows_leader)
{
    struct event_base *base = event_base_new();
    fake fol, lead;
    seen s;
    agent_ctl *c;
    agent_ctl_stats st;
    seen_init(&s);
    fake_start(&fol, base);
    fake_start(&lead, base);
    lead.registration_exists = true;
    snprintf(fol.leader, sizeof(fol.leader), "%s", fake_base(&lead));
    agent_ctl_cfg cfg = cfg_for(fol.url, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_up, &s, 2000));
    ck_assert_uint_eq(fol.redirects, 1);
    ck_assert_uint_eq(fol.registrations, 0);
    ck_assert_uint_eq(lead.registrations, 1);
    ck_assert_msg(strstr(lead.registration, "\"host\":\"h0\""), "%s", lead.registration);
    ck_assert_str_eq(agent_ctl_current(c), fake_base(&lead));
    ck_assert(run_until(base, polled_on, &lead, 2000));
    /* a report to a follower (the list's first, asked again after the leader went) follows too */
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.failures, 0);
    ck_assert_int_eq(agent_ctl_report(c, "{\"host\": \"h0\"}", 14), 0);
    run_for(base, 300);
    ck_assert_uint_eq(lead.reports, 1);
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.reports_sent, 1);
    agent_ctl_free(c);

    /* util_http: the leader's header and Retry-After reach the callback */
    ended e = {0};
    util_http *r;
    char url[128], err[256];
    util_http_opts post = {.method = "POST", .body = "{}", .bodylen = 2};
    snprintf(url, sizeof(url), "%s/api/v1/reports", fake_base(&fol));
    ck_assert_int_eq(util_http_start(base, url, &post, on_end, &e, &r, err, sizeof(err)), 0);
    ck_assert(run_until(base, ended_one, &e, 2000));
    ck_assert_int_eq(e.status, 307);
    ck_assert_str_eq(e.leader, fake_base(&lead));
    free(e.body);
    memset(&e, 0, sizeof(e));
    lead.no_leader = true;
    snprintf(url, sizeof(url), "%s/api/v1/denylist", fake_base(&lead));
    ck_assert_int_eq(util_http_start(base, url, NULL, on_end, &e, &r, err, sizeof(err)), 0);
    ck_assert(run_until(base, ended_one, &e, 2000));
    ck_assert_int_eq(e.status, 503);
    ck_assert_uint_eq(e.retry_after, 1);
    ck_assert_str_eq(e.leader, "");
    free(e.body);
    fake_stop(&fol);
    fake_stop(&lead);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* Followers that name each other in a circle: 3 redirects, then a failure (the backoff), never
 * a fourth hop. */
START_TEST(test_agent_ctl_redirect_limit)
{
    struct event_base *base = event_base_new();
    fake f;
    seen s;
    agent_ctl *c;
    seen_init(&s);
    fake_start(&f, base);
    snprintf(f.leader, sizeof(f.leader), "%s", fake_base(&f)); /* itself */
    agent_ctl_cfg cfg = cfg_for(f.url, AGENT_TOKEN, in_scratch("state"), &s);
    cfg.backoff_min_ms = 2000;
    cfg.backoff_max_ms = 2000;
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, logged_once, "registration: over 3 redirects", 2000));
    run_for(base, 200);
    ck_assert_uint_eq(f.redirects, 4); /* the request and 3 hops */
    ck_assert_uint_eq(f.requests, 4);
    ck_assert_uint_eq(s.ups, 0);
    agent_ctl_free(c);
    fake_stop(&f);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* A controller without a leader: the next one, at once. */
START_TEST(test_agent_ctl_next_on_no_leader)
{
    struct event_base *base = event_base_new();
    fake nl, lead;
    seen s;
    agent_ctl *c;
    char list[160];
    seen_init(&s);
    fake_start(&nl, base);
    fake_start(&lead, base);
    nl.no_leader = true;
    lead.registration_exists = true;
    snprintf(list, sizeof(list), "%s,%s", fake_base(&nl), fake_base(&lead));
    agent_ctl_cfg cfg = cfg_for(list, AGENT_TOKEN, in_scratch("state"), &s);
    cfg.backoff_min_ms = 5000;
    cfg.backoff_max_ms = 5000;
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, is_up, &s, 1000));
    ck_assert_uint_eq(nl.requests, 1);
    ck_assert_uint_eq(lead.registrations, 1);
    ck_assert_uint_eq(log_count("it has no leader (503); trying"), 1);
    agent_ctl_free(c);
    fake_stop(&nl);
    fake_stop(&lead);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

/* The controller holding the push channel dies: the agent registers with the next and holds
 * the push channel there within a second, not after the channel's 25 s; a view older by
 * (epoch, version) than the one applied is left aside, a newer epoch's lower version taken. */
START_TEST(test_agent_ctl_failover)
{
    struct event_base *base = event_base_new();
    fake a, b;
    seen s;
    agent_ctl *c;
    agent_ctl_stats st;
    char list[160];
    seen_init(&s);
    fake_start(&a, base);
    fake_start(&b, base);
    a.registration_exists = b.registration_exists = true;
    a.epoch = 2;
    a.version = 7;
    b.epoch = 1; /* behind: an older leader's view, with a higher count */
    b.version = 9;
    snprintf(list, sizeof(list), "%s,%s", fake_base(&a), fake_base(&b));
    agent_ctl_cfg cfg = cfg_for(list, AGENT_TOKEN, in_scratch("state"), &s);
    ck_assert_int_eq(agent_ctl_new(base, &cfg, &c), 0);
    ck_assert(run_until(base, polled_on, &a, 2000));
    ck_assert_uint_eq(s.version, 7);
    agent_ctl_get_stats(c, &st);
    ck_assert_uint_eq(st.epoch, 2);
    fake_kill(&a);
    uint64_t t0 = now_ms();
    ck_assert(run_until(base, logged_once, "is older than the one applied", 2000));
    ck_assert_msg(now_ms() - t0 < 1000, "%" PRIu64 " ms", now_ms() - t0);
    ck_assert_uint_ge(b.registrations, 1);
    run_for(base, 300);
    ck_assert_uint_eq(s.version, 7); /* (1, 9) < (2, 7): never applied */
    ck_assert_uint_eq(s.denylists, 1);
    /* b becomes the leader, epoch 3, its list counted from 1 */
    b.epoch = 3;
    b.version = 1;
    uint64_t want = 3;
    void *args[2] = {c, &want};
    ck_assert(run_until(base, has_epoch, args, 2000));
    ck_assert_uint_eq(s.version, 1);
    ck_assert_msg(strstr(s.denylist, "\"epoch\": 3"), "%s", s.denylist);
    ck_assert(run_until(base, polled_on, &b, 2000));
    ck_assert_str_eq(agent_ctl_current(c), fake_base(&b));
    ck_assert_int_eq(s.link, 1);
    /* the kept denylist carries its epoch: a restarted agent leaves aside what is older */
    agent_ctl_free(c);
    fake_stop(&b);
    event_base_free(base);
    seen_fini(&s);
}
END_TEST

START_TEST(test_util_http_async)
{
    struct event_base *base = event_base_new();
    fake f;
    ended e[2] = {0};
    util_http *r1, *r2;
    char url[128], err[512];
    fake_start(&f, base);

    /* two side by side on one base */
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/denylist", f.port);
    ck_assert_int_eq(util_http_start(base, url, NULL, on_end, &e[0], &r1, err, sizeof(err)), 0);
    util_http_opts post = {.method = "POST", .body = "{\"a\": 1}xx", .bodylen = 8};
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/reports", f.port);
    ck_assert_int_eq(util_http_start(base, url, &post, on_end, &e[1], &r2, err, sizeof(err)), 0);
    ck_assert_uint_eq(e[0].n + e[1].n, 0); /* never from within the start */
    ck_assert(run_until(base, ended_all, e, 2000));
    ck_assert_int_eq(e[0].rv, 0);
    ck_assert_int_eq(e[0].status, 200);
    ck_assert_str_eq(e[0].body, "{\"version\": 7, \"entries\": []}");
    ck_assert_int_eq(e[1].status, 202);
    ck_assert_str_eq(f.report, "{\"a\": 1}");
    free(e[0].body);
    free(e[1].body);

    /* no answer within the request's own timeout */
    memset(e, 0, sizeof(e));
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/denylist/version?after=7", f.port);
    util_http_opts quick = {.timeout_ms = 300};
    uint64_t t0 = now_ms();
    ck_assert_int_eq(util_http_start(base, url, &quick, on_end, &e[0], &r1, err, sizeof(err)), 0);
    ck_assert(run_until(base, ended_one, &e[0], 3000));
    ck_assert_int_eq(e[0].rv, -ETIMEDOUT);
    ck_assert_ptr_null(e[0].body);
    ck_assert_msg(strstr(e[0].err, "no answer within 300 ms"), "%s", e[0].err);
    ck_assert_msg(e[0].at - t0 >= 290 && e[0].at - t0 < 1000, "%" PRIu64 " ms", e[0].at - t0);

    /* cancelled: never called back */
    memset(e, 0, sizeof(e));
    f.npolls_held = 0;
    ck_assert_int_eq(util_http_start(base, url, NULL, on_end, &e[0], &r1, err, sizeof(err)), 0);
    ck_assert(run_until(base, fake_polled, &f, 2000));
    util_http_cancel(r1);
    util_http_cancel(NULL);
    run_for(base, 300);
    ck_assert_uint_eq(e[0].n, 0);

    /* refused: why, asked of the socket without blocking */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sin);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    close(fd);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/x", ntohs(sin.sin_port));
    ck_assert_int_eq(util_http_start(base, url, NULL, on_end, &e[0], &r1, err, sizeof(err)), 0);
    ck_assert(run_until(base, ended_one, &e[0], 3000));
    ck_assert_int_eq(e[0].rv, -ECONNREFUSED);
    ck_assert_msg(strstr(e[0].err, "Connection refused"), "%s", e[0].err);

    /* bad input: an error at once, no callback */
    memset(e, 0, sizeof(e));
    ck_assert_int_eq(
        util_http_start(base, "gopher://x/", NULL, on_end, &e[0], &r1, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_null(r1);
    util_http_opts bad = {.method = "BREW"};
    ck_assert_int_eq(util_http_start(base, url, &bad, on_end, &e[0], &r1, err, sizeof(err)),
                     -EINVAL);
    ck_assert_msg(strstr(err, "BREW"), "%s", err);
    run_for(base, 50);
    ck_assert_uint_eq(e[0].n, 0);
    fake_stop(&f);
    event_base_free(base);
}
END_TEST

Suite *agent_ctl_suite(void)
{
    Suite *s = suite_create("agent_ctl");
    TCase *live = tcase_create("controller");
    tcase_add_checked_fixture(live, setup, NULL);
    tcase_set_timeout(live, 60);
    tcase_add_test(live, test_agent_ctl_sync_and_push);
    tcase_add_test(live, test_agent_ctl_controller_away);
    tcase_add_test(live, test_agent_ctl_wrong_token);
    tcase_add_test(live, test_agent_ctl_https);
    suite_add_tcase(s, live);
    TCase *fakes = tcase_create("fake");
    tcase_add_checked_fixture(fakes, setup, NULL);
    tcase_set_timeout(fakes, 60);
    tcase_add_test(fakes, test_agent_ctl_garbage_not_kept);
    tcase_add_test(fakes, test_agent_ctl_backoff);
    tcase_add_test(fakes, test_agent_ctl_report_one_in_flight);
    tcase_add_test(fakes, test_agent_ctl_set_ports);
    tcase_add_test(fakes, test_agent_ctl_bad_cfg);
    tcase_add_test(fakes, test_util_http_async);
    tcase_add_test(fakes, test_agent_ctl_view_order);
    tcase_add_test(fakes, test_util_http_route);
    tcase_add_test(fakes, test_agent_ctl_next_on_dead);
    tcase_add_test(fakes, test_agent_ctl_follows_leader);
    tcase_add_test(fakes, test_agent_ctl_redirect_limit);
    tcase_add_test(fakes, test_agent_ctl_next_on_no_leader);
    tcase_add_test(fakes, test_agent_ctl_failover);
    suite_add_tcase(s, fakes);
    return s;
}
