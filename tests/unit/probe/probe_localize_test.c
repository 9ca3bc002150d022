/* SPDX-License-Identifier: MIT */
/* probe_localize on the lab fabric with 100 ms windows, fed node reports whose deficits make a
 * T1 lose, against a small stand-in of the controller on loopback that records what it is
 * sent (the real controller is tested with the localizer in integration.probe_lab). Built with
 * posts of 300 bytes at most, so that a window's results are split: every post of a window is
 * JSON in the health API's form, the first alone with coverage and the whole verdict set, the
 * results of the T1's directions each once over them. The stand-in's denylist read fails once
 * (tried again after the backoff) and then holds the localizer's own entry, which is found
 * again rather than added; healed, the entry is deleted. */
#include <check.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "probe_localize.h"
#include "probe_node.h"

#define LAB PROBE_TEST_ROOT "/deploy/topologies/lab.json"
#define WINDOW_NS 100000000ull
#define MAXPOSTS 4096
#define LOC_TEST_FILE_MAX (6u << 20)

/* The stand-in and what it saw. */
typedef struct standin {
    struct evhttp *http;
    unsigned port;
    char *posts[MAXPOSTS]; /* bodies of POST /api/v1/probes */
    size_t nposts;
    unsigned lists, list_fail; /* GET /api/v1/denylist: served, to fail first */
    unsigned adds, deletes;
    char deleted[64];
} standin;

static void answer(struct evhttp_request *req, int code, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "%s", body);
    evhttp_send_reply(req, code, "X", b);
    evbuffer_free(b);
}

static void on_req(struct evhttp_request *req, void *arg)
{
    standin *s = arg;
    const char *uri = evhttp_request_get_uri(req);
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    const char *auth = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    ck_assert_msg(auth && strcmp(auth, "Bearer prober-token") == 0, "%s without the token", uri);
    if (strcmp(uri, "/api/v1/probes") == 0 && cmd == EVHTTP_REQ_POST) {
        struct evbuffer *in = evhttp_request_get_input_buffer(req);
        size_t len = evbuffer_get_length(in);
        ck_assert_uint_lt(s->nposts, MAXPOSTS);
        char *body = malloc(len + 1);
        evbuffer_copyout(in, body, len);
        body[len] = '\0';
        s->posts[s->nposts++] = body;
        answer(req, 202, "{}");
    } else if (strcmp(uri, "/api/v1/whoami") == 0) {
        answer(req, 200, "{\"name\":\"loc\",\"role\":\"prober\"}");
    } else if (strcmp(uri, "/api/v1/denylist") == 0 && cmd == EVHTTP_REQ_GET) {
        s->lists++;
        if (s->list_fail) {
            s->list_fail--;
            answer(req, 503, "{\"status\":503}");
            return;
        }
        /* its own entry, among one of another author and one with a window */
        answer(req, 200,
               "{\"version\":3,\"entries\":["
               "{\"id\":75,\"element\":\"p0-t1-1\",\"scope\":\"both\",\"source\":\"prober\","
               "\"author\":\"someone-else\"},"
               "{\"id\":76,\"element\":\"p0-t1-1\",\"scope\":\"both\",\"source\":\"prober\","
               "\"author\":\"loc\",\"window\":{\"start\":\"x\",\"end\":\"y\"}},"
               "{\"id\":77,\"element\":\"p0-t1-1\",\"scope\":\"both\",\"source\":\"prober\","
               "\"author\":\"loc\"}]}");
    } else if (strcmp(uri, "/api/v1/denylist") == 0 && cmd == EVHTTP_REQ_POST) {
        s->adds++;
        answer(req, 201, "{\"id\":99}");
    } else if (strncmp(uri, "/api/v1/denylist/", 17) == 0 && cmd == EVHTTP_REQ_DELETE) {
        s->deletes++;
        snprintf(s->deleted, sizeof(s->deleted), "%s", uri + 17);
        evhttp_send_reply(req, 204, "No Content", NULL);
    } else {
        answer(req, 404, "{}");
    }
}

/* The feeder: every node's report of each window as it closes, lossy or not. */
typedef struct feeder {
    probe_localize *loc;
    const fab_topo *topo;
    uint32_t R;
    uint64_t last; /* the last window fed */
    bool lossy;    /* T1 1 of plane 0 loses 1 in 4 of the cross probes that cross it */
    unsigned taken, refused;
} feeder;

/* Host |h|'s report of window |w|: every port sent its |R| probes; when |lossy| its plane-0
 * port misses some cross probes via T1 1. */
static json_object *report_of(const fab_topo *topo, uint32_t h, uint64_t w, uint32_t R, bool lossy)
{
    feeder fv = {.topo = topo, .R = R, .lossy = lossy}, *f = &fv;
    {
        json_object *r = json_object_new_object(), *ports = json_object_new_array();
        json_object_object_add(r, "host", json_object_new_string(fab_host_name(f->topo, h)));
        json_object_object_add(r, "window", json_object_new_uint64(w));
        json_object_object_add(r, "epoch", json_object_new_int(1));
        for (unsigned p = 0; p < fab_topo_planes(f->topo); p++) {
            uint32_t sw;
            unsigned k;
            fab_switch t0;
            ck_assert_int_eq(fab_host_attach(f->topo, h, p, &sw, &k), 0);
            ck_assert_int_eq(fab_switch_get(f->topo, sw, &t0), 0);
            json_object *o = json_object_new_object(), *def = json_object_new_array();
            json_object_object_add(o, "plane", json_object_new_int((int)p));
            json_object_object_add(o, "t0", json_object_new_int((int)t0.index));
            json_object_object_add(o, "port", json_object_new_int((int)k));
            json_object_object_add(o, "sent", json_object_new_int((int)f->R));
            /* cross probes from every other T0 via T1 1: their indexes are not the plan's,
             * which the localizer does not check (it maps a deficit to its links) */
            for (unsigned a = 0; f->lossy && p == 0 && a < 4; a++) {
                for (unsigned i = 0; a != t0.index && i < 6; i++) {
                    json_object *d = json_object_new_array();
                    json_object_array_add(d, json_object_new_string("cross"));
                    json_object_array_add(d, json_object_new_int((int)a));
                    json_object_array_add(d, json_object_new_int((int)(i % 2)));
                    json_object_array_add(d, json_object_new_int(1));
                    json_object_array_add(d, json_object_new_int((int)(i + 7 * a)));
                    json_object_array_add(def, d);
                }
            }
            json_object_object_add(o, "deficits", def);
            json_object_array_add(ports, o);
        }
        json_object_object_add(r, "ports", ports);
        return r;
    }
}

static void feed_window(feeder *f, uint64_t w)
{
    for (uint32_t h = 0; h < fab_topo_nhosts(f->topo); h++) {
        json_object *r = report_of(f->topo, h, w, f->R, f->lossy);
        char err[256];
        if (probe_localize_report(f->loc, r, NULL, err, sizeof(err)) == 0) {
            f->taken++;
        } else {
            f->refused++; /* the first window, begun before the localizer */
        }
        json_object_put(r);
    }
}

static void on_feed(evutil_socket_t fd, short what, void *arg)
{
    feeder *f = arg;
    (void)fd;
    (void)what;
    uint64_t w = probe_node_clock() / WINDOW_NS;
    if (w > 0 && w - 1 > f->last) {
        f->last = w - 1;
        feed_window(f, f->last);
    }
}

static void run_for(struct event_base *base, double s)
{
    struct timeval tv = {(time_t)s, (suseconds_t)((s - floor(s)) * 1e6)};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static json_object *member(json_object *o, const char *key)
{
    json_object *m = NULL;
    json_object_object_get_ex(o, key, &m);
    return m;
}

START_TEST(test_probe_localize_evidence)
{
    struct event_base *base = event_base_new();
    fab_topo *topo;
    probe_plan *plan;
    fab_error ferr;
    probe_cfg pc;
    standin s = {.list_fail = 1};
    char url[64], err[256];
    signal(SIGPIPE, SIG_IGN);
    ck_assert_int_eq(fab_topo_load_file(LAB, &topo, &ferr), 0);
    probe_cfg_default(&pc);
    pc.window_ns = WINDOW_NS;
    ck_assert_int_eq(probe_plan_new(topo, &pc, &plan), 0);
    s.http = evhttp_new(base);
    evhttp_set_allowed_methods(s.http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
    evhttp_set_gencb(s.http, on_req, &s);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(s.http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(bs);
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &sl), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
    probe_localize_cfg lc = {.base = base,
                             .topo = topo,
                             .plan = plan,
                             .window_ns = WINDOW_NS,
                             .epoch = 1,
                             .deadline_ns = 2 * WINDOW_NS,
                             .controller = url,
                             .token = "prober-token",
                             .hold_ns = 200000000ull,
                             .hold_max_ns = 10000000000ull};
    uint32_t nt0, nt1, np;
    probe_plan_shape(plan, 0, &nt0, &nt1, &np);
    probe_infer_cfg_default(&lc.infer, probe_plan_planes(plan), nt0, nt1, np);
    lc.infer.optic_group = 2;
    ck_assert_int_eq(probe_infer_cfg_from_plan(&lc.infer, plan), 0);
    probe_localize *loc = NULL;
    ck_assert_int_eq(probe_localize_new(&lc, &loc, err, sizeof(err)), 0);
    feeder f = {.loc = loc,
                .topo = topo,
                .R = probe_plan_per_window(plan),
                .last = probe_node_clock() / WINDOW_NS,
                .lossy = true};
    struct event *feed = event_new(base, -1, EV_PERSIST, on_feed, &f);
    struct timeval ftv = {0, 10000};
    event_add(feed, &ftv);
    /* the T1 fails for 2.5 s: named, its entry found again after one failed read */
    run_for(base, 2.5);
    ck_assert_uint_gt(f.taken, 0);
    ck_assert_uint_ge(s.lists, 2);
    ck_assert_uint_eq(s.adds, 0);
    json_object *st = probe_localize_status(loc), *vs = member(st, "verdicts");
    ck_assert_msg(json_object_array_length(vs) == 1, "verdicts: %s",
                  json_object_to_json_string(vs));
    json_object *v0 = json_object_array_get_idx(vs, 0);
    ck_assert_str_eq(json_object_get_string(member(v0, "component")), "p0 T1 1");
    ck_assert_str_eq(json_object_get_string(member(v0, "state")), "denied");
    ck_assert_int_eq(json_object_get_int64(json_object_array_get_idx(member(v0, "entries"), 0)),
                     77);
    json_object_put(st);

    /* every post: JSON of the form, at most 300 bytes and a result but the first of a window */
    size_t nwin = 0, named = 0;
    double n_up = round(lc.infer.n_up), n_nic = round(lc.infer.n_nic);
    int64_t prev = -1;
    for (size_t i = 0; i < s.nposts; i++) {
        json_object *p = json_tokener_parse(s.posts[i]), *res = member(p, "results");
        ck_assert_msg(p && json_object_is_type(res, json_type_array), "post %zu: %s", i,
                      s.posts[i]);
        ck_assert_int_eq(json_object_get_int(member(p, "window_ms")), 100);
        json_object *cov = member(p, "coverage"), *ver = member(p, "verdicts");
        int64_t w = json_object_get_int64(member(p, "window"));
        ck_assert_int_ge(w, prev);
        bool first = w != prev;
        prev = w;
        ck_assert_msg(first == (cov != NULL) && first == (ver != NULL),
                      "post %zu: coverage and verdicts in the first post of a window only: %s", i,
                      s.posts[i]);
        if (!first) {
            ck_assert_msg(strlen(s.posts[i]) <= 300 + 100, "post %zu of %zu bytes", i,
                          strlen(s.posts[i]));
        }
        if (first) {
            nwin++;
            ck_assert_uint_eq(json_object_array_length(cov), 2);
            for (unsigned pl = 0; pl < 2; pl++) {
                json_object *c = json_object_array_get_idx(cov, pl);
                ck_assert_int_eq(json_object_get_int(member(c, "plane")), (int)pl);
                ck_assert_int_eq(json_object_get_int(member(c, "hosts")), 8);
                ck_assert_int_eq(json_object_get_int(member(c, "nic")), (int)n_nic);
                ck_assert_int_eq(json_object_get_int(member(c, "uplink")), (int)n_up);
            }
        }
        for (size_t k = 0; k < json_object_array_length(res); k++) {
            json_object *r = json_object_array_get_idx(res, k);
            int64_t sent = json_object_get_int64(member(r, "sent"));
            int64_t lost = json_object_get_int64(member(r, "lost"));
            const char *scope = json_object_get_string(member(r, "scope"));
            ck_assert_msg(strcmp(scope, "up") == 0 || strcmp(scope, "down") == 0, "%s", scope);
            ck_assert_int_eq(sent, strchr(json_object_get_string(member(r, "element")), '~')
                                       ? (int64_t)n_up
                                       : (int64_t)n_nic);
            ck_assert(lost >= 0 && lost <= sent);
        }
        json_object_put(p);
    }
    ck_assert_uint_gt(nwin, 10);
    /* the last window's posts: the T1's eight directions each once, with their loss */
    size_t from = s.nposts;
    while (from > 0 && !strstr(s.posts[from - 1], "\"coverage\"")) {
        from--;
    }
    ck_assert_uint_gt(from, 0);
    from--;
    ck_assert_uint_ge(s.nposts - from, 3); /* split */
    char seen[8] = {0};
    for (size_t i = from; i < s.nposts; i++) {
        json_object *p = json_tokener_parse(s.posts[i]), *res = member(p, "results");
        if (i == from) {
            json_object *ver = member(p, "verdicts");
            ck_assert_uint_eq(json_object_array_length(ver), 1);
            json_object *v = json_object_array_get_idx(ver, 0);
            ck_assert_str_eq(json_object_get_string(member(v, "component")), "p0 T1 1");
            ck_assert_str_eq(json_object_get_string(member(v, "kind")), "switch");
            ck_assert_str_eq(json_object_get_string(member(v, "state")), "denied");
            ck_assert_str_eq(
                json_object_to_json_string_ext(member(v, "elements"), JSON_C_TO_STRING_PLAIN),
                "[{\"element\":\"p0-t1-1\",\"scope\":\"both\"}]");
            ck_assert_str_eq(json_object_to_json_string(member(v, "entries")), "[ 77 ]");
            double loss = json_object_get_double(member(v, "loss"));
            ck_assert(loss > 0 && loss <= 1);
            ck_assert(json_object_get_double(member(v, "llr")) > 0);
            ck_assert(json_object_get_double(member(v, "horizon_s")) >= 0.1);
            ck_assert_int_le(json_object_get_int64(member(v, "lost")),
                             json_object_get_int64(member(v, "sent")));
            const char *since = json_object_get_string(member(v, "since"));
            ck_assert_msg(strlen(since) == 24 && since[10] == 'T' && since[23] == 'Z', "%s", since);
        }
        for (size_t k = 0; k < json_object_array_length(res); k++) {
            json_object *r = json_object_array_get_idx(res, k);
            const char *el = json_object_get_string(member(r, "element"));
            unsigned a;
            if (sscanf(el, "p0-t0-%u~p0-t1-1", &a) == 1 && a < 4) {
                unsigned d =
                    2 * a + (strcmp(json_object_get_string(member(r, "scope")), "down") == 0);
                ck_assert_msg(!seen[d], "%s twice", el);
                seen[d] = 1;
                named += json_object_get_int64(member(r, "lost")) > 0;
            }
        }
        json_object_put(p);
    }
    for (unsigned d = 0; d < 8; d++) {
        ck_assert_msg(seen[d], "direction %u of T1 1 not among the results", d);
    }
    ck_assert_uint_gt(named, 0);

    /* healed: after the hold its entry goes */
    f.lossy = false;
    for (int i = 0; i < 40 && !s.deletes; i++) {
        run_for(base, 0.1);
    }
    ck_assert_uint_eq(s.deletes, 1);
    ck_assert_str_eq(s.deleted, "77");
    run_for(base, 0.3);
    st = probe_localize_status(loc);
    ck_assert_uint_eq(json_object_array_length(member(st, "verdicts")), 0);
    ck_assert_int_eq(json_object_get_int(member(member(st, "evidence"), "failed")), 0);
    json_object_put(st);
    util_buf m = {0};
    probe_localize_metrics(loc, &m);
    ck_assert_ptr_nonnull(strstr(m.s, "mrcfab_localizer_controller_failures_total{request="
                                      "\"denylist\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(m.s, "mrcfab_localizer_verdicts{kind=\"switch\",state="
                                      "\"denied\"} 0\n"));
    free(m.s);

    event_free(feed);
    probe_localize_free(loc);
    evhttp_free(s.http);
    for (size_t i = 0; i < s.nposts; i++) {
        free(s.posts[i]);
    }
    probe_plan_free(plan);
    fab_topo_free(topo);
    event_base_free(base);
}
END_TEST

/* The lab's localizer of 100 ms windows, with the stand-in as its controller when |controller|,
 * keeping its state in |state| (NULL: none). */
typedef struct fix {
    struct event_base *base;
    fab_topo *topo;
    probe_plan *plan;
    probe_localize_cfg lc;
    standin s;
    char url[64];
} fix;

static void fix_init(fix *x, bool controller, const char *state)
{
    fab_error ferr;
    probe_cfg pc;
    memset(x, 0, sizeof(*x));
    signal(SIGPIPE, SIG_IGN);
    x->base = event_base_new();
    ck_assert_int_eq(fab_topo_load_file(LAB, &x->topo, &ferr), 0);
    probe_cfg_default(&pc);
    pc.window_ns = WINDOW_NS;
    ck_assert_int_eq(probe_plan_new(x->topo, &pc, &x->plan), 0);
    if (controller) {
        x->s.http = evhttp_new(x->base);
        evhttp_set_allowed_methods(x->s.http,
                                   EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
        evhttp_set_gencb(x->s.http, on_req, &x->s);
        struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(x->s.http, "127.0.0.1", 0);
        ck_assert_ptr_nonnull(bs);
        struct sockaddr_in sa;
        socklen_t sl = sizeof(sa);
        ck_assert_int_eq(getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &sl),
                         0);
        snprintf(x->url, sizeof(x->url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
    }
    x->lc = (probe_localize_cfg){.base = x->base,
                                 .topo = x->topo,
                                 .plan = x->plan,
                                 .window_ns = WINDOW_NS,
                                 .epoch = 1,
                                 .deadline_ns = 2 * WINDOW_NS,
                                 .controller = controller ? x->url : NULL,
                                 .token = "prober-token",
                                 .hold_ns = 200000000ull,
                                 .hold_max_ns = 10000000000ull,
                                 .state_path = state};
    uint32_t nt0, nt1, np;
    probe_plan_shape(x->plan, 0, &nt0, &nt1, &np);
    probe_infer_cfg_default(&x->lc.infer, probe_plan_planes(x->plan), nt0, nt1, np);
    x->lc.infer.optic_group = 2;
    ck_assert_int_eq(probe_infer_cfg_from_plan(&x->lc.infer, x->plan), 0);
}

static void fix_fini(fix *x)
{
    if (x->s.http) {
        evhttp_free(x->s.http);
    }
    for (size_t i = 0; i < x->s.nposts; i++) {
        free(x->s.posts[i]);
    }
    probe_plan_free(x->plan);
    fab_topo_free(x->topo);
    event_base_free(x->base);
}

/* The one verdict of the localizer's status (NULL when it holds none), owned by |*pst|. */
static json_object *only_verdict(probe_localize *loc, json_object **pst)
{
    *pst = probe_localize_status(loc);
    json_object *vs = member(*pst, "verdicts");
    ck_assert_uint_le(json_object_array_length(vs), 1);
    return json_object_array_length(vs) ? json_object_array_get_idx(vs, 0) : NULL;
}

static char *slurp(const char *path, size_t *plen)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *buf = malloc(LOC_TEST_FILE_MAX + 1);
    size_t n = fread(buf, 1, LOC_TEST_FILE_MAX, f);
    fclose(f);
    buf[n] = '\0';
    if (plen) {
        *plen = n;
    }
    return buf;
}

static void spit(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* A node reports for its own host only; a host's second report of a window is refused, the
 * first kept; an open localizer (no sender) takes any host's. */
START_TEST(test_probe_localize_own_host)
{
    fix x;
    char err[256];
    probe_localize *loc = NULL;
    fix_init(&x, false, NULL);
    ck_assert_int_eq(probe_localize_new(&x.lc, &loc, err, sizeof(err)), 0);
    uint32_t R = probe_plan_per_window(x.plan);
    uint64_t w = probe_node_clock() / WINDOW_NS + 1;
    while (probe_node_clock() < w * WINDOW_NS) {
        usleep(2000);
    }
    uint32_t h1 = fab_host_find(x.topo, "h1"), h2 = fab_host_find(x.topo, "h2");
    json_object *r1 = report_of(x.topo, h1, w, R, false), *r2 = report_of(x.topo, h2, w, R, false);
    ck_assert_int_eq(probe_localize_report(loc, r1, "h0", err, sizeof(err)), -EPERM);
    ck_assert_str_eq(err, "token of h0 may not report for h1");
    ck_assert_int_eq(probe_localize_report(loc, r1, "h1", err, sizeof(err)), 0);
    ck_assert_int_eq(probe_localize_report(loc, r1, "h1", err, sizeof(err)), -ESTALE);
    ck_assert_msg(strstr(err, "h1 reported window") && strstr(err, "its first report is kept"),
                  "%s", err);
    ck_assert_int_eq(probe_localize_report(loc, r2, NULL, err, sizeof(err)), 0);
    json_object_put(r1);
    json_object_put(r2);
    util_buf m = {0};
    probe_localize_metrics(loc, &m);
    ck_assert_ptr_nonnull(strstr(m.s, "mrcfab_localizer_reports_total 2\n"));
    ck_assert_ptr_nonnull(
        strstr(m.s, "mrcfab_localizer_reports_refused_total{reason=\"forbidden\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(m.s, "mrcfab_localizer_reports_refused_total{reason=\"duplicate\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(m.s, "mrcfab_localizer_reports_refused_total{reason=\"late\"} 0\n"));
    free(m.s);
    probe_localize_free(loc);
    fix_fini(&x);
}
END_TEST

/* Denied, then "killed" (freed, nothing lifted): a localizer started on the same state file has
 * the verdict and its entry at once, keeps it while the T1 still loses (no second entry, no
 * lifting) and lifts it once healed. The file is written whole, mode 0600, nothing else left. */
START_TEST(test_probe_localize_state)
{
    fix x;
    char dir[] = "/tmp/lz-state-XXXXXX", path[64], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/state.json", dir);
    fix_init(&x, true, path);
    probe_localize *loc = NULL;
    ck_assert_int_eq(probe_localize_new(&x.lc, &loc, err, sizeof(err)), 0);
    feeder f = {.loc = loc,
                .topo = x.topo,
                .R = probe_plan_per_window(x.plan),
                .last = probe_node_clock() / WINDOW_NS,
                .lossy = true};
    struct event *feed = event_new(x.base, -1, EV_PERSIST, on_feed, &f);
    struct timeval ftv = {0, 10000};
    event_add(feed, &ftv);
    json_object *st, *v = NULL;
    for (int i = 0; i < 30; i++) {
        run_for(x.base, 0.1);
        v = only_verdict(loc, &st);
        bool done = v && strcmp(json_object_get_string(member(v, "state")), "denied") == 0;
        json_object_put(st);
        if (done) {
            break;
        }
    }
    run_for(x.base, 0.2);
    /* the file: the verdict, its entry; written atomically (no temporary left), 0600 */
    char *txt = slurp(path, NULL);
    json_object *j = json_tokener_parse(txt), *acts = member(j, "actions");
    free(txt);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_object_get_int(member(j, "version")), 1);
    ck_assert_uint_eq(json_object_array_length(acts), 1);
    json_object *a0 = json_object_array_get_idx(acts, 0);
    ck_assert_str_eq(json_object_get_string(member(a0, "component")), "p0 T1 1");
    ck_assert_str_eq(json_object_get_string(member(a0, "state")), "in_force");
    ck_assert_str_eq(json_object_to_json_string_ext(member(a0, "entries"), JSON_C_TO_STRING_PLAIN),
                     "[{\"id\":77,\"st\":\"held\"}]");
    json_object_put(j);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);
    DIR *d = opendir(dir);
    unsigned files = 0;
    for (struct dirent *de; (de = readdir(d));) {
        files += de->d_name[0] != '.';
    }
    closedir(d);
    ck_assert_uint_eq(files, 1);
    unsigned adds = x.s.adds;
    ck_assert_uint_eq(x.s.deletes, 0);
    probe_localize_free(loc);

    /* restarted while the T1 still loses: restored at once, kept, not added again */
    ck_assert_int_eq(probe_localize_new(&x.lc, &loc, err, sizeof(err)), 0);
    f.loc = loc;
    v = only_verdict(loc, &st);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(json_object_get_string(member(v, "component")), "p0 T1 1");
    ck_assert_str_eq(json_object_to_json_string(member(v, "entries")), "[ 77 ]");
    ck_assert(json_object_get_boolean(member(v, "restored")));
    json_object_put(st);
    run_for(x.base, 4.0); /* past the 32 windows and the hold a restored action waits */
    v = only_verdict(loc, &st);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(json_object_get_string(member(v, "state")), "denied");
    ck_assert_str_eq(json_object_to_json_string(member(v, "entries")), "[ 77 ]");
    json_object_put(st);
    ck_assert_uint_eq(x.s.adds, adds);
    ck_assert_uint_eq(x.s.deletes, 0);

    /* healed: lifted, and the file says so */
    f.lossy = false;
    for (int i = 0; i < 60 && !x.s.deletes; i++) {
        run_for(x.base, 0.1);
    }
    ck_assert_uint_eq(x.s.deletes, 1);
    ck_assert_str_eq(x.s.deleted, "77");
    run_for(x.base, 0.3);
    txt = slurp(path, NULL);
    j = json_tokener_parse(txt);
    free(txt);
    a0 = json_object_array_get_idx(member(j, "actions"), 0);
    ck_assert_str_eq(json_object_get_string(member(a0, "state")), "lifted"); /* dampening */
    json_object_put(j);
    event_free(feed);
    probe_localize_free(loc);
    fix_fini(&x);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* A state file that is not one, not of this fabric, or over its bound is discarded (kept as
 * FILE.bad) and the localizer starts clean; one it cannot read or write stops it with a
 * sentence. */
START_TEST(test_probe_localize_state_bad)
{
    char dir[] = "/tmp/lz-state-XXXXXX", path[64], bad[80], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/state.json", dir);
    snprintf(bad, sizeof(bad), "%s.bad", path);
    const char *cases[] = {
        "{\"version\":1,\"actions\":[",
        "{\"version\":9,\"written_ms\":0,\"actions\":[]}",
        /* a T1 the lab does not have */
        "{\"version\":1,\"written_ms\":0,\"actions\":[{\"component\":\"p0 T1 9\",\"type\":5,"
        "\"plane\":0,\"t0\":0,\"other\":9,\"state\":\"in_force\",\"restored\":true,\"flaps\":0,"
        "\"hold_ms\":200,\"lifted_window\":0,\"entries\":[{\"id\":5,\"st\":\"held\"}],"
        "\"lifted_ago_ms\":-1,\"verdict\":{\"loss\":0.1,\"lost\":1,\"sent\":10,\"horizon\":1,"
        "\"llr\":30,\"since\":1,\"healed\":false}}]}",
        /* the right T1, an entry too many */
        "{\"version\":1,\"written_ms\":0,\"actions\":[{\"component\":\"p0 T1 1\",\"type\":5,"
        "\"plane\":0,\"t0\":0,\"other\":1,\"state\":\"in_force\",\"restored\":true,\"flaps\":0,"
        "\"hold_ms\":200,\"lifted_window\":0,\"entries\":[{\"id\":5,\"st\":\"held\"},{\"id\":6,"
        "\"st\":\"held\"}],\"lifted_ago_ms\":-1,\"verdict\":{\"loss\":0.1,\"lost\":1,\"sent\":10,"
        "\"horizon\":1,\"llr\":30,\"since\":1,\"healed\":false}}]}",
        NULL, /* 5 MiB */
    };
    for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        fix x;
        size_t len;
        char *big = NULL;
        if (cases[c]) {
            spit(path, cases[c], strlen(cases[c]));
        } else {
            len = 5u << 20;
            big = malloc(len);
            memset(big, ' ', len);
            spit(path, big, len);
            free(big);
        }
        fix_init(&x, false, path);
        probe_localize *loc = NULL;
        ck_assert_msg(probe_localize_new(&x.lc, &loc, err, sizeof(err)) == 0, "case %u: %s", c,
                      err);
        json_object *st;
        ck_assert_ptr_null(only_verdict(loc, &st));
        json_object_put(st);
        /* the bad one kept aside whole, a clean one in its place */
        struct stat sb;
        ck_assert_int_eq(stat(bad, &sb), 0);
        ck_assert_int_eq(sb.st_size, cases[c] ? (off_t)strlen(cases[c]) : (off_t)(5u << 20));
        char *txt = slurp(path, &len);
        json_object *j = json_tokener_parse(txt);
        free(txt);
        ck_assert_msg(j && json_object_array_length(member(j, "actions")) == 0, "case %u", c);
        json_object_put(j);
        probe_localize_free(loc);
        fix_fini(&x);
        unlink(bad);
    }
    /* a folder is no state file; one in a folder that is not there cannot be written */
    fix x;
    probe_localize *loc = NULL;
    fix_init(&x, false, dir);
    ck_assert_int_eq(probe_localize_new(&x.lc, &loc, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
    fix_fini(&x);
    char nowhere[96];
    snprintf(nowhere, sizeof(nowhere), "%s/no/such/state.json", dir);
    fix_init(&x, false, nowhere);
    ck_assert_int_eq(probe_localize_new(&x.lc, &loc, err, sizeof(err)), -ENOENT);
    ck_assert_msg(strstr(err, "cannot write it"), "%s", err);
    fix_fini(&x);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* No state: the entry of ours the controller lists (77, p0-t1-1 both) is adopted as the T1's
 * verdict, not others' or one with a maintenance window; nothing added; with the T1 probing
 * clean it is lifted, though not before the 32 windows a restored hold waits. */
START_TEST(test_probe_localize_adopt)
{
    fix x;
    char err[256];
    fix_init(&x, true, NULL);
    probe_localize *loc = NULL;
    ck_assert_int_eq(probe_localize_new(&x.lc, &loc, err, sizeof(err)), 0);
    feeder f = {.loc = loc,
                .topo = x.topo,
                .R = probe_plan_per_window(x.plan),
                .last = probe_node_clock() / WINDOW_NS};
    struct event *feed = event_new(x.base, -1, EV_PERSIST, on_feed, &f);
    struct timeval ftv = {0, 10000};
    event_add(feed, &ftv);
    json_object *st, *v = NULL;
    for (int i = 0; i < 20 && !v; i++) {
        run_for(x.base, 0.1);
        v = only_verdict(loc, &st);
        if (!v) {
            json_object_put(st);
        }
    }
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(json_object_get_string(member(v, "component")), "p0 T1 1");
    ck_assert_str_eq(json_object_to_json_string(member(v, "entries")), "[ 77 ]");
    ck_assert_str_eq(json_object_get_string(member(v, "state")), "healed");
    ck_assert(json_object_get_boolean(member(v, "restored")));
    json_object_put(st);
    run_for(x.base, 2.0);
    ck_assert_uint_eq(x.s.deletes, 0); /* 32 windows of 100 ms first */
    for (int i = 0; i < 40 && !x.s.deletes; i++) {
        run_for(x.base, 0.1);
    }
    ck_assert_uint_eq(x.s.deletes, 1);
    ck_assert_str_eq(x.s.deleted, "77");
    ck_assert_uint_eq(x.s.adds, 0);
    event_free(feed);
    probe_localize_free(loc);
    fix_fini(&x);
}
END_TEST

Suite *probe_localize_suite(void)
{
    Suite *s = suite_create("probe_localize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_probe_localize_evidence);
    tcase_add_test(tc, test_probe_localize_own_host);
    tcase_add_test(tc, test_probe_localize_state);
    tcase_add_test(tc, test_probe_localize_state_bad);
    tcase_add_test(tc, test_probe_localize_adopt);
    suite_add_tcase(s, tc);
    return s;
}
