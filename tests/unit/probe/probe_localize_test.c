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

#include "probe_localize.h"
#include "probe_node.h"

#define LAB PROBE_TEST_ROOT "/deploy/topologies/lab.json"
#define WINDOW_NS 100000000ull
#define MAXPOSTS 4096

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

static void feed_window(feeder *f, uint64_t w)
{
    for (uint32_t h = 0; h < fab_topo_nhosts(f->topo); h++) {
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

Suite *probe_localize_suite(void)
{
    Suite *s = suite_create("probe_localize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_probe_localize_evidence);
    suite_add_tcase(s, tc);
    return s;
}
