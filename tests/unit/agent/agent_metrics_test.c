/* SPDX-License-Identifier: MIT */
/* mrc-agent's /metrics: the text of a known snapshot line by line (HELP and TYPE before every
 * family, counters named _total, label values escaped) and through promtool; --metrics
 * addresses; the endpoint served from a child's event loop to plain sockets: 200 with the
 * format's content type, 404, 405, oversized headers refused, an idle connection closed. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_metrics.h"

static agent_metrics_snapshot known(void)
{
    agent_metrics_snapshot s;
    memset(&s, 0, sizeof(s));
    s.host = "h\"0\\x\ny";
    s.version = "0.2.0 (git abc)";
    s.mode = "srv6";
    s.nports = 2;
    s.port_up[0] = true;
    for (unsigned p = 0; p < 2; p++) {
        s.tx_pkts[p] = 100 + p;
        s.rx_pkts[p] = 200 + p;
        s.tx_bytes[p] = 1000 + p;
        s.rx_bytes[p] = 2000 + p;
    }
    s.rx_filtered = 3;
    s.rx_garbage = 4;
    s.rx_no_qp = 5;
    s.tx_unmapped = 6;
    s.tx_errors = 7;
    s.tx_blocked = 8;
    s.qps = 9;
    s.evs[0] = 120;
    s.evs[2] = 4;
    s.evs[3] = 4;
    s.sums.retx_by_cause[MRC_RETX_NACK] = 11;
    s.sums.retx_by_cause[MRC_RETX_TIMEOUT] = 12;
    s.sums.nacks_sent[0] = 13;
    s.sums.nacks_rcvd[0] = 14;
    s.sums.sacks_sent = 15;
    s.sums.sacks_rcvd = 16;
    s.sums.trims = 17;
    s.connected = true;
    s.controller = true;
    s.denylist_version = 18446744073709551615ull;
    s.floor_peers = 21;
    s.floor_kept = 22;
    s.floor_entered = 23;
    s.reports_sent = 19;
    s.reports_dropped = 20;
    return s;
}

static char *render(const agent_metrics_snapshot *s)
{
    util_buf b = {0};
    agent_metrics_render(s, &b);
    ck_assert_ptr_nonnull(b.s);
    return b.s;
}

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++) {
        if ((p == text || p[-1] == '\n') && p[n] == '\n') {
            return true;
        }
    }
    return false;
}

START_TEST(test_agent_metrics_samples)
{
    agent_metrics_snapshot s = known();
    char *t = render(&s);
    static const char *const want[] = {
        "mrcfab_agent_info{host=\"h\\\"0\\\\x\\ny\",version=\"0.2.0 (git abc)\",mode=\"srv6\"} 1",
        "mrcfab_agent_qps 9",
        "mrcfab_agent_port_up{port=\"0\"} 1",
        "mrcfab_agent_port_up{port=\"1\"} 0",
        "mrcfab_agent_packets_total{port=\"0\",dir=\"tx\"} 100",
        "mrcfab_agent_packets_total{port=\"1\",dir=\"rx\"} 201",
        "mrcfab_agent_bytes_total{port=\"1\",dir=\"tx\"} 1001",
        "mrcfab_agent_bytes_total{port=\"0\",dir=\"rx\"} 2000",
        "mrcfab_agent_rx_dropped_total{reason=\"filter\"} 3",
        "mrcfab_agent_rx_dropped_total{reason=\"garbage\"} 4",
        "mrcfab_agent_rx_dropped_total{reason=\"no_qp\"} 5",
        "mrcfab_agent_tx_dropped_total{reason=\"unmapped\"} 6",
        "mrcfab_agent_tx_dropped_total{reason=\"error\"} 7",
        "mrcfab_agent_tx_blocked_total 8",
        "mrcfab_agent_retransmits_total{cause=\"nack\"} 11",
        "mrcfab_agent_retransmits_total{cause=\"timeout\"} 12",
        "mrcfab_agent_retransmits_total{cause=\"port\"} 0",
        "mrcfab_agent_nacks_total{dir=\"tx\",reason=\"trimmed\"} 13",
        "mrcfab_agent_nacks_total{dir=\"rx\",reason=\"trimmed\"} 14",
        "mrcfab_agent_nacks_total{dir=\"rx\",reason=\"unexp_event\"} 0",
        "mrcfab_agent_sacks_total{dir=\"tx\"} 15",
        "mrcfab_agent_sacks_total{dir=\"rx\"} 16",
        "mrcfab_agent_trims_total 17",
        "mrcfab_agent_evs{state=\"good\"} 120",
        "mrcfab_agent_evs{state=\"skip\"} 0",
        "mrcfab_agent_evs{state=\"assumed_bad\"} 4",
        "mrcfab_agent_evs{state=\"denied\"} 4",
        "mrcfab_agent_denylist_version 18446744073709551615",
        "mrcfab_agent_deny_floor_peers 21",
        "mrcfab_agent_deny_floor_evs 22",
        "mrcfab_agent_deny_floor_entered_total 23",
        "mrcfab_agent_controller_connected 1",
        "mrcfab_agent_reports_total{result=\"sent\"} 19",
        "mrcfab_agent_reports_total{result=\"dropped\"} 20",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ck_assert_msg(has_line(t, want[i]), "no line %s in:\n%s", want[i], t);
    }
    /* no port beyond nports */
    ck_assert_ptr_null(strstr(t, "port=\"2\""));
    free(t);
}
END_TEST

/* Every sample's family was introduced by HELP then TYPE, each family once; a counter's name
 * ends in _total, and every sample is NAME[{...}] VALUE. */
START_TEST(test_agent_metrics_families)
{
    agent_metrics_snapshot s = known();
    char *t = render(&s), *save = NULL;
    char help[128] = "", type[128] = "", kind[32] = "";
    char seen[64][128];
    size_t nseen = 0, samples = 0;
    ck_assert(t[strlen(t) - 1] == '\n');
    for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[128];
        if (strncmp(line, "# HELP ", 7) == 0) {
            ck_assert_int_eq(sscanf(line + 7, "%127s", help), 1);
            for (size_t i = 0; i < nseen; i++) {
                ck_assert_msg(strcmp(seen[i], help) != 0, "family %s twice", help);
            }
            ck_assert_uint_lt(nseen, 64);
            strcpy(seen[nseen++], help);
            ck_assert_msg(strlen(line) > 8 + strlen(help), "%s: an empty HELP", help);
            type[0] = '\0';
            continue;
        }
        if (strncmp(line, "# TYPE ", 7) == 0) {
            ck_assert_int_eq(sscanf(line + 7, "%127s %31s", type, kind), 2);
            ck_assert_str_eq(type, help);
            ck_assert_msg(strcmp(kind, "counter") == 0 || strcmp(kind, "gauge") == 0, "%s", line);
            size_t n = strlen(type);
            bool total = n > 6 && strcmp(type + n - 6, "_total") == 0;
            ck_assert_msg(total == (strcmp(kind, "counter") == 0), "%s: _total iff counter", type);
            continue;
        }
        ck_assert_msg(line[0] != '#', "a comment other than HELP and TYPE: %s", line);
        size_t n = strcspn(line, "{ ");
        ck_assert_uint_lt(n, sizeof(name));
        memcpy(name, line, n);
        name[n] = '\0';
        ck_assert_msg(type[0] && strcmp(name, type) == 0, "sample %s outside its family (%s)", line,
                      type);
        ck_assert_msg(strncmp(name, "mrcfab_agent_", 13) == 0, "%s", name);
        const char *value = strrchr(line, ' ');
        ck_assert_ptr_nonnull(value);
        char *end;
        strtoull(value + 1, &end, 10);
        ck_assert_msg(*end == '\0' && end > value + 1, "not a number: %s", line);
        samples++;
    }
    /* 19 families; 2 ports: 1 + 1 + 2 + 4 + 4 + 3 + 2 + 1 + 5 retransmit causes + 14 NACK
     * reasons and directions + 1 + 2 + 4 EV states + 1 + 3 floor + 1 + 2 samples */
    ck_assert_uint_eq(nseen, 19);
    ck_assert_uint_eq(samples, 51);
    free(t);
}
END_TEST

START_TEST(test_agent_metrics_label_escape)
{
    util_buf b = {0};
    agent_metrics_label(&b, "a\\b\"c\nd\te");
    ck_assert_str_eq(b.s, "\"a\\\\b\\\"c\\nd\te\"");
    free(b.s);
    b = (util_buf){0};
    agent_metrics_label(&b, "");
    ck_assert_str_eq(b.s, "\"\"");
    free(b.s);
}
END_TEST

/* promtool check metrics: the format and the naming lint (deploy/install-deps.sh installs it). */
START_TEST(test_agent_metrics_promtool)
{
    agent_metrics_snapshot s = known();
    char *t = render(&s);
    char path[] = "/tmp/agent-metrics-XXXXXX", cmd[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
    close(fd);
    ck_assert_msg(system("command -v promtool >/dev/null") == 0,
                  "no promtool (deploy/install-deps.sh installs it)");
    snprintf(cmd, sizeof(cmd), "promtool check metrics <%s", path);
    int rv = system(cmd);
    unlink(path);
    ck_assert_msg(rv == 0, "promtool check metrics refused:\n%s", t);
    free(t);
}
END_TEST

START_TEST(test_agent_metrics_addr)
{
    char addr[64], err[256];
    uint16_t port;
    ck_assert_int_eq(
        agent_metrics_parse_addr("127.0.0.1:9464", addr, sizeof(addr), &port, err, sizeof(err)), 0);
    ck_assert_str_eq(addr, "127.0.0.1");
    ck_assert_uint_eq(port, 9464);
    ck_assert_int_eq(
        agent_metrics_parse_addr("[::1]:0", addr, sizeof(addr), &port, err, sizeof(err)), 0);
    ck_assert_str_eq(addr, "::1");
    ck_assert_uint_eq(port, 0);
    ck_assert_int_eq(
        agent_metrics_parse_addr("[::]:65535", addr, sizeof(addr), &port, err, sizeof(err)), 0);
    ck_assert_str_eq(addr, "::");
    ck_assert_uint_eq(port, 65535);
    static const struct {
        const char *in, *why;
    } bad[] = {
        {"9464", "want ADDR:PORT"},
        {":9464", "want ADDR:PORT"},
        {"127.0.0.1:", "the port must be"},
        {"127.0.0.1:65536", "the port must be"},
        {"127.0.0.1:-1", "the port must be"},
        {"127.0.0.1:+1", "the port must be"},
        {"127.0.0.1:80x", "the port must be"},
        {"::1:9464", "in brackets"},
        {"[::1]", "want [IPV6]:PORT"},
        {"[::1:9464", "want [IPV6]:PORT"},
        {"[]:9464", "want ADDR:PORT"},
        {"[127.0.0.1]:9464", "not an IPv6 address"},
        {"localhost:9464", "not a numeric IPv4"},
        {"300.0.0.1:9464", "not a numeric IPv4"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_msg(agent_metrics_parse_addr(bad[i].in, addr, sizeof(addr), &port, err,
                                               sizeof(err)) == -EINVAL,
                      "%s taken", bad[i].in);
        ck_assert_msg(strstr(err, bad[i].in) && strstr(err, bad[i].why), "%s: %s", bad[i].in, err);
    }
    /* the option's check names the option */
    char *v = "10.0.0.1";
    util_opt o = {.name = "metrics", .kind = UTIL_OPT_STR, .dest = &v};
    ck_assert_int_eq(agent_metrics_check_addr(&o, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strncmp(err, "--metrics 10.0.0.1: ", 20) == 0, "%s", err);
    v = NULL;
    ck_assert_int_eq(agent_metrics_check_addr(&o, err, sizeof(err)), 0);
}
END_TEST

/* A server in a child process on its own event loop; the parent talks plain HTTP to it. */
static pid_t server_pid;
static uint16_t server_port;

static void fill_known(void *user, agent_metrics_snapshot *s)
{
    (void)user;
    *s = known();
}

static void start_server(void)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    server_pid = fork();
    ck_assert_int_ge(server_pid, 0);
    if (server_pid == 0) {
        close(p[0]);
        struct event_base *base = event_base_new();
        agent_metrics *m;
        char err[256];
        uint16_t port = 0;
        if (agent_metrics_new(base, "127.0.0.1:0", fill_known, NULL, &m, err, sizeof(err)) == 0) {
            port = agent_metrics_port(m);
        } else {
            fprintf(stderr, "%s\n", err);
        }
        if (write(p[1], &port, sizeof(port)) != sizeof(port) || port == 0) {
            _exit(1);
        }
        close(p[1]);
        event_base_dispatch(base);
        _exit(0);
    }
    close(p[1]);
    ck_assert_int_eq(read(p[0], &server_port, sizeof(server_port)), sizeof(server_port));
    close(p[0]);
    ck_assert_uint_ne(server_port, 0);
}

static void stop_server(void)
{
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(server_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Everything the server sends until it closes or |ms| pass; the caller frees it. */
static char *read_all(int fd, int ms, bool *pclosed)
{
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    *pclosed = false;
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, ms) <= 0) {
            break;
        }
        if (len + 4096 > cap) {
            buf = realloc(buf, cap *= 2);
        }
        ssize_t k = read(fd, buf + len, cap - len - 1);
        if (k <= 0) {
            *pclosed = true;
            break;
        }
        len += (size_t)k;
    }
    buf[len] = '\0';
    return buf;
}

static char *exchange(const char *request)
{
    int fd = dial();
    bool closed;
    ck_assert(write(fd, request, strlen(request)) == (ssize_t)strlen(request));
    char *ans = read_all(fd, 2000, &closed);
    close(fd);
    return ans;
}

START_TEST(test_agent_metrics_http)
{
    start_server();
    char *a = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.1 200 ", 13) == 0, "%s", a);
    ck_assert_msg(strstr(a, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "%s",
                  a);
    ck_assert_msg(strstr(a, "\r\n\r\n# HELP mrcfab_agent_info "), "%.300s", a);
    ck_assert(strstr(a, "\nmrcfab_agent_trims_total 17\n"));
    free(a);
    /* with a query, as some scrapers send one */
    a = exchange("GET /metrics?x=1 HTTP/1.0\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.0 200 ", 13) == 0 || strncmp(a, "HTTP/1.1 200 ", 13) == 0,
                  "%.200s", a);
    free(a);
    a = exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.1 404 ", 13) == 0, "%s", a);
    ck_assert_ptr_null(strstr(a, "mrcfab_agent"));
    free(a);
    a = exchange("GET /metricsx HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.1 404 ", 13) == 0, "%s", a);
    free(a);
    a = exchange("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: "
                 "close\r\n\r\n{}");
    ck_assert_msg(strncmp(a, "HTTP/1.1 405 ", 13) == 0, "%s", a);
    ck_assert_msg(strstr(a, "\r\nAllow: GET\r\n"), "%s", a);
    free(a);
    a = exchange("DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.1 405 ", 13) == 0, "%s", a);
    free(a);
    /* a body over 1 KiB is refused before it is read */
    a = exchange("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nConnection: "
                 "close\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.1 413 ", 13) == 0 || a[0] == '\0', "%s", a);
    free(a);
    /* headers over 8 KiB: no answer but a refusal and the connection closed */
    util_buf big = {0};
    util_buf_printf(&big, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 200; i++) {
        util_buf_printf(&big, "X-Pad-%d: %0100d\r\n", i, 0);
    }
    util_buf_printf(&big, "\r\n");
    int fd = dial();
    bool closed;
    ssize_t w = write(fd, big.s, big.len);
    ck_assert(w > 0);
    a = read_all(fd, 3000, &closed);
    ck_assert_msg(closed, "the connection stayed open");
    ck_assert_msg(!strstr(a, " 200 "), "oversized headers answered: %.200s", a);
    close(fd);
    free(a);
    free(big.s);
    /* still serving */
    a = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ck_assert_msg(strncmp(a, "HTTP/1.1 200 ", 13) == 0, "%.200s", a);
    free(a);
    stop_server();
}
END_TEST

/* A connection that sends nothing is closed after the 10 s timeout, not held. */
START_TEST(test_agent_metrics_idle_timeout)
{
    start_server();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int fd = dial();
    bool closed;
    char *a = read_all(fd, 20000, &closed);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ck_assert_msg(closed, "an idle connection held for %.1f s", s);
    ck_assert_msg(s > 8 && s < 15, "closed after %.1f s", s);
    free(a);
    close(fd);
    stop_server();
}
END_TEST

START_TEST(test_agent_metrics_bind_faults)
{
    struct event_base *base = event_base_new();
    agent_metrics *m = NULL, *m2 = NULL;
    char err[256];
    ck_assert_int_eq(agent_metrics_new(base, "127.0.0.1:0", fill_known, NULL, &m, err, sizeof(err)),
                     0);
    char taken[64];
    snprintf(taken, sizeof(taken), "127.0.0.1:%u", (unsigned)agent_metrics_port(m));
    ck_assert_int_eq(agent_metrics_new(base, taken, fill_known, NULL, &m2, err, sizeof(err)),
                     -EADDRINUSE);
    ck_assert_msg(strstr(err, "--metrics ") && strstr(err, taken) && strstr(err, "in use"), "%s",
                  err);
    ck_assert_int_eq(
        agent_metrics_new(base, "192.0.2.1:0", fill_known, NULL, &m2, err, sizeof(err)),
        -EADDRNOTAVAIL);
    ck_assert_int_eq(agent_metrics_new(base, "nowhere", fill_known, NULL, &m2, err, sizeof(err)),
                     -EINVAL);
    ck_assert_msg(strncmp(err, "--metrics nowhere: ", 19) == 0, "%s", err);
    ck_assert_uint_eq(agent_metrics_scrapes(m), 0);
    agent_metrics_free(m);
    agent_metrics_free(NULL);
    event_base_free(base);
}
END_TEST

Suite *agent_metrics_suite(void)
{
    Suite *s = suite_create("agent_metrics");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, test_agent_metrics_samples);
    tcase_add_test(tc, test_agent_metrics_families);
    tcase_add_test(tc, test_agent_metrics_label_escape);
    tcase_add_test(tc, test_agent_metrics_promtool);
    tcase_add_test(tc, test_agent_metrics_addr);
    suite_add_tcase(s, tc);
    tc = tcase_create("http");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_agent_metrics_http);
    tcase_add_test(tc, test_agent_metrics_idle_timeout);
    tcase_add_test(tc, test_agent_metrics_bind_faults);
    suite_add_tcase(s, tc);
    return s;
}
