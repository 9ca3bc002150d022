/* SPDX-License-Identifier: MIT */
/* The agent's controller client: one sequence of requests (register, profile, denylist, then
 * the push channel held open) restarted with backoff after any failure, reports beside it, and
 * the last profile and denylist kept on disk. Of several controllers it talks to one at a time
 * (util_peers): the next at once when one does not answer or has no leader, the leader a
 * follower's redirect names (again at once); the backoff only after a whole round failed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "agent_ctl.h"
#include "util.h"
#include "util_peers.h"

#define MAX_PORTS 16 /* as the controller takes them */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 10000
#define SLOW_RETRY_MS 30000
#define POLL_WAIT_S 25
#define REQUEST_MS 10000 /* any request but the push channel's */
#define PROFILE_FILE "profile.json"
#define DENYLIST_FILE "denylist.json"

/* The sequence: each step's answer starts the next; the push channel repeats itself, and goes
 * back to DENYLIST when the version moves and to REGISTER when the ports change. */
typedef enum ctl_step { STEP_REGISTER, STEP_PROFILE, STEP_DENYLIST, STEP_POLL } ctl_step;

/* Why the sequence failed, for one log line per change of reason. */
typedef enum ctl_fault {
    FAULT_NONE,
    FAULT_DOWN,   /* no answer, or a 5xx */
    FAULT_AUTH,   /* 401 or 403: the token */
    FAULT_HOST,   /* the controller does not know this host */
    FAULT_ANSWER, /* an answer that makes no sense */
    FAULT_LOCAL,  /* the request could not be made here */
} ctl_fault;

struct agent_ctl {
    struct event_base *base;
    struct evdns_base *dns;
    util_peers peers; /* the controllers; which one is asked */
    char *token, *cafile, *certfile, *keyfile, *host, *version, *mode, *oob;
    char *profile_path, *denylist_path, *state_dir;
    agent_ctl_port ports[MAX_PORTS];
    size_t nports;
    bool ports_dirty; /* changed since the registration in flight or done */
    void (*on_profile)(void *user, const char *json, size_t len);
    void (*on_denylist)(void *user, uint64_t version, const char *json, size_t len);
    void (*on_link)(void *user, bool connected);
    void *user;
    unsigned backoff_min_ms, backoff_max_ms, slow_retry_ms;

    ctl_step step;
    util_http *req;      /* the sequence's request in flight, or NULL */
    unsigned hops;       /* redirects the sequence's request followed */
    struct event *retry; /* pending while waiting to start again */
    unsigned backoff_ms; /* the next wait after a failure, before jitter */
    int link;            /* -1 not known yet, 0 away, 1 connected */
    ctl_fault fault;     /* of the last failure logged */
    int reg_logged;      /* the registration's last status logged as refused (0: none) */
    unsigned poll_wait_s;
    bool poll_logged; /* the shorter wait the controller takes was logged */

    /* what was handed on last, as the controller wrote it */
    char *profile, *denylist;
    size_t profile_len, denylist_len;
    uint64_t deny_version; /* as the controller has it, handed on or not */
    uint64_t deny_epoch;   /* the leader's epoch of that view (agent_ctl_view_cmp) */

    util_http *report_req;
    char *report_cur; /* the report in flight, sent again to the leader a redirect names */
    size_t report_cur_len;
    unsigned report_hops;
    char *report_next; /* the report waiting for the one in flight, or NULL */
    size_t report_next_len;
    int report_logged; /* the last report failure logged: -errno or a status; 0: none */

    agent_ctl_stats stats;
    uint64_t rng;
};

static void step_start(agent_ctl *c);
static void step_send(agent_ctl *c);
static bool next(agent_ctl *c, const char *what, const util_http_result *res);

/* The controller asked now, for the log lines. */
static const char *cur(const agent_ctl *c)
{
    return util_peers_current(&c->peers);
}

int agent_ctl_view_cmp(uint64_t epoch_a, uint64_t version_a, uint64_t epoch_b, uint64_t version_b)
{
    if (epoch_a != epoch_b) {
        return epoch_a < epoch_b ? -1 : 1;
    }
    return version_a < version_b ? -1 : version_a > version_b;
}

/* Whether a view (|epoch|, |version|) is older than the one applied and must be left aside.
 * Between controllers without etcd (epoch 0 on both sides) a lower version is taken all the
 * same: a controller restarted on a new store counts from lower again. */
static bool view_stale(const agent_ctl *c, uint64_t epoch, uint64_t version)
{
    if (epoch == 0 && c->deny_epoch == 0) {
        return false;
    }
    return agent_ctl_view_cmp(epoch, version, c->deny_epoch, c->deny_version) < 0;
}

/* Member "epoch" of |j|: a non-negative integer, 0 when absent (a controller without etcd). */
static uint64_t epoch_of(json_object *j)
{
    json_object *e;
    if (j && json_object_object_get_ex(j, "epoch", &e) && json_object_is_type(e, json_type_int) &&
        json_object_get_int64(e) > 0) {
        return (uint64_t)json_object_get_int64(e);
    }
    return 0;
}

static bool host_ok(const char *h)
{
    if (!h[0] || strlen(h) > 95) {
        return false;
    }
    for (const char *s = h; *s; s++) {
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') &&
            *s != '.' && *s != '_' && *s != '-') {
            return false;
        }
    }
    return true;
}

static char *dup_or_null(const char *s)
{
    return s ? util_xstrdup(s) : NULL;
}

static uint64_t rng_next(agent_ctl *c)
{
    /* xorshift64*: jitter only needs agents not to retry in step */
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * 0x2545F4914F6CDD1Dull;
}

/* |ms| with jitter: somewhere in its upper half. */
static unsigned jitter(agent_ctl *c, unsigned ms)
{
    return ms / 2 + (unsigned)(rng_next(c) % (ms / 2 + 1));
}

/* The JSON value of exactly |len| bytes of |data| (trailing white space allowed), or NULL. */
static json_object *parse_json(const char *data, size_t len)
{
    if (!data || len == 0 || len > INT_MAX) {
        return NULL;
    }
    json_tokener *tok = json_tokener_new();
    json_object *j = json_tokener_parse_ex(tok, data, (int)len);
    size_t end = json_tokener_get_parse_end(tok);
    if (j && json_tokener_get_error(tok) == json_tokener_success) {
        while (end < len && strchr(" \t\r\n", data[end]) && data[end]) {
            end++;
        }
    }
    if (!j || end != len) {
        json_object_put(j);
        j = NULL;
    }
    json_tokener_free(tok);
    return j;
}

/* A profile for this host: a JSON object whose "host" is ours. */
static bool profile_ok(const agent_ctl *c, const char *data, size_t len, char *why, size_t whylen)
{
    json_object *j = parse_json(data, len), *h;
    bool ok = false;
    if (!j || !json_object_is_type(j, json_type_object)) {
        snprintf(why, whylen, "the profile is not a JSON object");
    } else if (!json_object_object_get_ex(j, "host", &h) ||
               !json_object_is_type(h, json_type_string) ||
               strcmp(json_object_get_string(h), c->host) != 0) {
        snprintf(why, whylen, "the profile is not that of host '%s'", c->host);
    } else {
        ok = true;
    }
    json_object_put(j);
    return ok;
}

/* A denylist: {"version": N, "entries": [...]}. */
static bool denylist_ok(const char *data, size_t len, uint64_t *pepoch, uint64_t *pversion,
                        char *why, size_t whylen)
{
    json_object *j = parse_json(data, len), *v, *e;
    bool ok = false;
    if (!j || !json_object_is_type(j, json_type_object)) {
        snprintf(why, whylen, "the denylist is not a JSON object");
    } else if (!json_object_object_get_ex(j, "version", &v) ||
               !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
        snprintf(why, whylen, "the denylist has no version");
    } else if (!json_object_object_get_ex(j, "entries", &e) ||
               !json_object_is_type(e, json_type_array)) {
        snprintf(why, whylen, "the denylist has no entries array");
    } else {
        *pversion = (uint64_t)json_object_get_int64(v);
        *pepoch = epoch_of(j);
        ok = true;
    }
    json_object_put(j);
    return ok;
}

/* What a refusal says, for the log: its problem document's detail, else the start of it. */
static void problem_detail(const util_http_result *res, char *dest, size_t destlen)
{
    json_object *j = parse_json(res->body, res->len), *d;
    if (j && json_object_object_get_ex(j, "detail", &d) &&
        json_object_is_type(d, json_type_string)) {
        snprintf(dest, destlen, "%s", json_object_get_string(d));
    } else {
        size_t n = 0;
        for (size_t i = 0; i < res->len && n + 1 < destlen && n < 120; i++) {
            char ch = res->body[i];
            dest[n++] = ch >= 0x20 && ch < 0x7f ? ch : ' ';
        }
        dest[n] = '\0';
        if (n == 0) {
            snprintf(dest, destlen, "no explanation");
        }
    }
    json_object_put(j);
}

/* Writes |len| bytes of |data| to |path| whole or not at all, synced to the disk (with the
 * directory's entry) so that a crash leaves the old file or the new one. Returns 0 or
 * -errno. */
static int persist(const agent_ctl *c, const char *path, const char *data, size_t len)
{
    util_afile af;
    int rv = util_afile_open(&af, path);
    if (rv != 0) {
        return rv;
    }
    errno = 0;
    if (fwrite(data, 1, len, af.f) != len || fflush(af.f) != 0 || fsync(fileno(af.f)) != 0) {
        rv = errno ? -errno : -EIO;
        util_afile_abort(&af);
        return rv;
    }
    if ((rv = util_afile_commit(&af)) != 0) {
        return rv;
    }
    int dfd = open(c->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

/* Keeps |data| as the last of its kind: on disk first, then in |*pkeep|. */
static void keep(agent_ctl *c, const char *path, char **pkeep, size_t *pkeeplen, const char *data,
                 size_t len)
{
    int rv = persist(c, path, data, len);
    if (rv != 0) {
        /* the agent runs on it all the same: only a restart without the controller misses it */
        util_log(UTIL_LOG_ERR, "controller client: cannot keep %s: %s", path, strerror(-rv));
    }
    free(*pkeep);
    *pkeep = util_xmalloc(len + 1);
    memcpy(*pkeep, data, len);
    (*pkeep)[len] = '\0';
    *pkeeplen = len;
}

static bool same(const char *a, size_t alen, const char *b, size_t blen)
{
    return a && alen == blen && memcmp(a, b, alen) == 0;
}

static void profile_hand_on(agent_ctl *c, const char *data, size_t len)
{
    if (same(c->profile, c->profile_len, data, len)) {
        return;
    }
    keep(c, c->profile_path, &c->profile, &c->profile_len, data, len);
    util_log(UTIL_LOG_INFO, "controller client: a new profile (%zu bytes)", len);
    if (c->on_profile) {
        c->on_profile(c->user, c->profile, c->profile_len);
    }
}

static void denylist_hand_on(agent_ctl *c, uint64_t epoch, uint64_t version, const char *data,
                             size_t len)
{
    c->deny_version = version;
    c->deny_epoch = epoch;
    c->stats.epoch = epoch;
    if (same(c->denylist, c->denylist_len, data, len)) {
        return;
    }
    keep(c, c->denylist_path, &c->denylist, &c->denylist_len, data, len);
    c->stats.denylist_version = version;
    util_log(UTIL_LOG_INFO, "controller client: denylist version %" PRIu64, version);
    if (c->on_denylist) {
        c->on_denylist(c->user, version, c->denylist, c->denylist_len);
    }
}

/* The profile and denylist an earlier run kept, handed on as they are. */
static void load_kept(agent_ctl *c)
{
    char *data = NULL, why[128];
    size_t len = 0;
    uint64_t version = 0, epoch = 0;
    int rv = util_read_file(c->profile_path, &data, &len);
    if (rv == 0 && profile_ok(c, data, len, why, sizeof(why))) {
        c->profile = data;
        c->profile_len = len;
        if (c->on_profile) {
            c->on_profile(c->user, c->profile, c->profile_len);
        }
    } else {
        if (rv == 0) {
            util_log(UTIL_LOG_WARNING, "controller client: %s is left aside: %s", c->profile_path,
                     why);
        } else if (rv != -ENOENT) {
            util_log(UTIL_LOG_WARNING, "controller client: cannot read %s: %s", c->profile_path,
                     strerror(-rv));
        }
        free(data);
    }
    data = NULL;
    rv = util_read_file(c->denylist_path, &data, &len);
    if (rv == 0 && denylist_ok(data, len, &epoch, &version, why, sizeof(why))) {
        c->denylist = data;
        c->denylist_len = len;
        c->deny_version = c->stats.denylist_version = version;
        c->deny_epoch = c->stats.epoch = epoch;
        if (c->on_denylist) {
            c->on_denylist(c->user, version, c->denylist, c->denylist_len);
        }
    } else {
        if (rv == 0) {
            util_log(UTIL_LOG_WARNING, "controller client: %s is left aside: %s", c->denylist_path,
                     why);
        } else if (rv != -ENOENT) {
            util_log(UTIL_LOG_WARNING, "controller client: cannot read %s: %s", c->denylist_path,
                     strerror(-rv));
        }
        free(data);
    }
    if (c->profile || c->denylist) {
        util_log(UTIL_LOG_NOTICE, "controller client: running on the kept %s%s%s until %s answers",
                 c->profile ? "profile" : "", c->profile && c->denylist ? " and " : "",
                 c->denylist ? "denylist" : "", c->peers.n > 1 ? "a controller" : cur(c));
    }
}

/* What the agent runs on while the controller is away, for the log. */
static void running_on(const agent_ctl *c, char *dest, size_t destlen)
{
    if (c->profile && c->denylist) {
        snprintf(dest, destlen, "running on the last profile and denylist version %" PRIu64,
                 c->deny_version);
    } else if (c->profile) {
        snprintf(dest, destlen, "running on the last profile, with no denylist yet");
    } else if (c->denylist) {
        snprintf(dest, destlen,
                 "running on the last denylist version %" PRIu64 ", with no profile yet",
                 c->deny_version);
    } else {
        snprintf(dest, destlen, "no profile or denylist yet");
    }
}

static void report_drop_waiting(agent_ctl *c)
{
    if (c->report_next) {
        free(c->report_next);
        c->report_next = NULL;
        c->stats.reports_dropped++;
    }
}

/* The sequence failed: the link is away (said once), and it starts again after a wait. */
static void fail(agent_ctl *c, ctl_fault fault, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(agent_ctl *c, ctl_fault fault, const char *fmt, ...)
{
    char why[640], state[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    c->stats.failures++;
    bool slow = fault == FAULT_AUTH || fault == FAULT_HOST;
    unsigned wait = slow ? c->slow_retry_ms : c->backoff_ms;
    if (!slow) {
        c->backoff_ms =
            c->backoff_ms > c->backoff_max_ms / 2 ? c->backoff_max_ms : c->backoff_ms * 2;
    }
    if (c->link != 0 || fault != c->fault) {
        running_on(c, state, sizeof(state));
        util_level level = fault == FAULT_DOWN ? UTIL_LOG_WARNING : UTIL_LOG_ERR;
        util_log(level, "controller %s: %s%s; %s; retrying %s", cur(c),
                 c->link == 1 ? "lost: " : "", why, state, slow ? "slowly" : "with backoff");
    } else {
        util_log(UTIL_LOG_DEBUG, "controller %s: %s; retrying in %u ms", cur(c), why, wait);
    }
    c->fault = fault;
    c->step = STEP_REGISTER;
    struct timeval tv;
    unsigned ms = jitter(c, wait);
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    evtimer_add(c->retry, &tv);
    if (c->link != 0) {
        c->link = 0;
        c->stats.connected = false;
        report_drop_waiting(c);
        if (c->on_link) {
            c->on_link(c->user, false);
        }
    }
}

/* Fails for an answer with a status that is not the one hoped for. */
static void fail_status(agent_ctl *c, const char *what, const util_http_result *res)
{
    char detail[256];
    problem_detail(res, detail, sizeof(detail));
    if (res->status == 401 || res->status == 403) {
        fail(c, FAULT_AUTH, "it refuses the agent's token for %s (%d: %s); is the token right?",
             what, res->status, detail);
    } else if (res->status >= 500) {
        fail(c, FAULT_DOWN, "%s: it answers %d (%s)", what, res->status, detail);
    } else {
        fail(c, FAULT_ANSWER, "%s: unexpected answer %d (%s)", what, res->status, detail);
    }
}

static void connected(agent_ctl *c)
{
    c->backoff_ms = c->backoff_min_ms;
    c->fault = FAULT_NONE;
    if (c->link == 1) {
        return;
    }
    c->link = 1;
    c->stats.connected = true;
    util_log(UTIL_LOG_NOTICE,
             "controller %s: connected; profile and denylist version %" PRIu64 " are current",
             cur(c), c->deny_version);
    if (c->on_link) {
        c->on_link(c->user, true);
    }
}

/* The push channel next, or the registration when the ports changed meanwhile. */
static void poll_next(agent_ctl *c)
{
    c->step = c->ports_dirty ? STEP_REGISTER : STEP_POLL;
    step_start(c);
}

/* A controller whose view is older than the one applied (a follower behind the leader): left
 * for the next one, asked after the shortest backoff so that a round of laggards does not
 * spin. */
static void behind(agent_ctl *c, uint64_t epoch, uint64_t version)
{
    util_log(UTIL_LOG_INFO,
             "controller %s: its denylist (epoch %" PRIu64 ", version %" PRIu64
             ") is older than the one applied (epoch %" PRIu64 ", version %" PRIu64
             "); asking another",
             cur(c), epoch, version, c->deny_epoch, c->deny_version);
    util_peers_failed(&c->peers);
    struct timeval tv = {0, 0};
    unsigned ms = jitter(c, c->backoff_min_ms);
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    evtimer_add(c->retry, &tv);
}

static void answer_register(agent_ctl *c, util_http_result *res)
{
    char detail[256];
    if (res->status == 401 || res->status == 403 || res->status >= 500) {
        fail_status(c, "registration", res);
        return;
    }
    if (res->status >= 300) {
        /* the registration says who we are; the profile and denylist do not depend on it */
        if (res->status != c->reg_logged) {
            problem_detail(res, detail, sizeof(detail));
            util_log(UTIL_LOG_WARNING,
                     "controller %s: the registration is refused (%d: %s)%s; going on "
                     "unregistered",
                     cur(c), res->status, detail,
                     res->status == 404 ? ", has it POST /api/v1/agents?" : "");
            c->reg_logged = res->status;
        }
    } else if (c->reg_logged) {
        util_log(UTIL_LOG_NOTICE, "controller %s: registered", cur(c));
        c->reg_logged = 0;
    }
    if (c->link == 1) {
        /* registered again for a change of ports: up to date otherwise */
        poll_next(c);
        return;
    }
    c->step = STEP_PROFILE;
    step_start(c);
}

static void answer_profile(agent_ctl *c, util_http_result *res)
{
    char why[128], detail[256];
    if (res->status == 404) {
        problem_detail(res, detail, sizeof(detail));
        fail(c, FAULT_HOST, "it has no profile for host '%s' (404: %s)", c->host, detail);
        return;
    }
    if (res->status != 200) {
        fail_status(c, "profile", res);
        return;
    }
    if (!profile_ok(c, res->body, res->len, why, sizeof(why))) {
        fail(c, FAULT_ANSWER, "%s", why);
        return;
    }
    profile_hand_on(c, res->body, res->len);
    c->step = STEP_DENYLIST;
    step_start(c);
}

static void answer_denylist(agent_ctl *c, util_http_result *res)
{
    char why[128];
    uint64_t version, epoch;
    if (res->status != 200) {
        fail_status(c, "denylist", res);
        return;
    }
    if (!denylist_ok(res->body, res->len, &epoch, &version, why, sizeof(why))) {
        fail(c, FAULT_ANSWER, "%s", why);
        return;
    }
    if (view_stale(c, epoch, version)) {
        behind(c, epoch, version);
        return;
    }
    denylist_hand_on(c, epoch, version, res->body, res->len);
    connected(c);
    poll_next(c);
}

static void answer_poll(agent_ctl *c, util_http_result *res)
{
    json_object *j = NULL, *v;
    if (res->status == 400 && c->poll_wait_s > 1) {
        /* a controller whose longest wait is shorter than ours */
        c->poll_wait_s /= 2;
        if (!c->poll_logged) {
            util_log(UTIL_LOG_WARNING,
                     "controller %s: the push channel refuses a long wait; holding it %u s", cur(c),
                     c->poll_wait_s);
        }
        c->poll_logged = true;
        poll_next(c);
        return;
    }
    if (res->status != 200) {
        fail_status(c, "push channel", res);
        return;
    }
    j = parse_json(res->body, res->len);
    if (!j || !json_object_object_get_ex(j, "version", &v) ||
        !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
        json_object_put(j);
        fail(c, FAULT_ANSWER, "the push channel's answer has no version");
        return;
    }
    uint64_t version = (uint64_t)json_object_get_int64(v), epoch = epoch_of(j);
    json_object_put(j);
    if (view_stale(c, epoch, version)) {
        behind(c, epoch, version);
        return;
    }
    /* not only a newer one: a controller with a new store may count from lower; and a new
     * leader's epoch with the same version may be another list */
    if (version != c->deny_version || epoch != c->deny_epoch) {
        c->step = STEP_DENYLIST;
        step_start(c);
        return;
    }
    poll_next(c);
}

static void on_answer(void *user, util_http_result *res)
{
    static const char *const what[] = {"registration", "profile", "denylist", "push channel"};
    agent_ctl *c = user;
    c->req = NULL;
    switch (util_http_route_of(res->rv, res->status, res->body, res->len, res->leader, c->hops)) {
    case UTIL_HTTP_FOLLOW:
        if (util_peers_follow(&c->peers, res->leader) != 0) {
            fail(c, FAULT_ANSWER,
                 "%s: a redirect to '%.200s', which is no controller of the list's scheme",
                 what[c->step], res->leader);
            return;
        }
        c->hops++;
        util_log(UTIL_LOG_INFO, "controller client: %s goes to the leader, %s", what[c->step],
                 cur(c));
        step_send(c);
        return;
    case UTIL_HTTP_NEXT:
        if (!res->rv && res->status >= 300 && res->status < 400) {
            /* redirects past the limit: followers that do not agree on a leader */
            fail(c, FAULT_DOWN, "%s: over %d redirects", what[c->step], UTIL_HTTP_MAX_HOPS);
            return;
        }
        if (next(c, what[c->step], res)) {
            return;
        }
        break;
    case UTIL_HTTP_ANSWERED:
        util_peers_ok(&c->peers);
        break;
    case UTIL_HTTP_GIVE_UP:
        break;
    }
    if (res->rv != 0) {
        /* a certificate not trusted, or no HTTP: a setting to fix rather than a controller
         * away */
        fail(c, res->rv == -EPROTO ? FAULT_ANSWER : FAULT_DOWN, "%s: %s", what[c->step], res->err);
        return;
    }
    switch (c->step) {
    case STEP_REGISTER:
        answer_register(c, res);
        break;
    case STEP_PROFILE:
        answer_profile(c, res);
        break;
    case STEP_DENYLIST:
        answer_denylist(c, res);
        break;
    case STEP_POLL:
        answer_poll(c, res);
        break;
    }
}

/* The controller asked did not answer, or has no leader: the next one at once, from the
 * registration (a new leader may not know this agent), while the round is not over. Returns
 * whether it went on; false: the caller fails (the backoff). */
static bool next(agent_ctl *c, const char *what, const util_http_result *res)
{
    char was[256];
    snprintf(was, sizeof(was), "%s", cur(c));
    if (!util_peers_failed(&c->peers)) {
        return false;
    }
    c->stats.failures++;
    util_log(UTIL_LOG_WARNING, "controller %s: %s: %s; trying %s", was, what,
             res->rv ? res->err : "it has no leader (503)", cur(c));
    c->step = STEP_REGISTER;
    step_start(c);
    return true;
}

/* The registration's body: {"host", "version", "mode", "ports": [{"port", "up"}], "oob"}. */
static void registration(agent_ctl *c, util_buf *b)
{
    util_buf_printf(b, "{\"host\":");
    util_buf_json_str(b, c->host);
    util_buf_printf(b, ",\"version\":");
    util_buf_json_str(b, c->version);
    util_buf_printf(b, ",\"mode\":");
    util_buf_json_str(b, c->mode);
    util_buf_printf(b, ",\"ports\":[");
    for (size_t i = 0; i < c->nports; i++) {
        util_buf_printf(b, "%s{\"port\":%u,\"up\":%s}", i ? "," : "", c->ports[i].port,
                        c->ports[i].up ? "true" : "false");
    }
    util_buf_printf(b, "]");
    if (c->oob) {
        util_buf_printf(b, ",\"oob\":");
        util_buf_json_str(b, c->oob);
    }
    util_buf_printf(b, "}");
}

/* The sequence's step as a new request: the redirects are counted from none. */
static void step_start(agent_ctl *c)
{
    c->hops = 0;
    step_send(c);
}

static void step_send(agent_ctl *c)
{
    util_http_opts o = {.bearer = c->token,
                        .cafile = c->cafile,
                        .certfile = c->certfile,
                        .keyfile = c->keyfile,
                        .dns = c->dns};
    util_buf url = {0}, body = {0};
    char err[512];
    util_buf_printf(&url, "%s", cur(c));
    o.timeout_ms = REQUEST_MS;
    switch (c->step) {
    case STEP_REGISTER:
        util_buf_printf(&url, "/api/v1/agents");
        registration(c, &body);
        c->ports_dirty = false;
        o.method = "POST";
        o.body = body.s;
        o.bodylen = body.len;
        break;
    case STEP_PROFILE:
        util_buf_printf(&url, "/api/v1/hosts/%s/profile", c->host);
        break;
    case STEP_DENYLIST:
        util_buf_printf(&url, "/api/v1/denylist");
        break;
    case STEP_POLL:
        util_buf_printf(&url, "/api/v1/denylist/version?after=%" PRIu64 "&wait=%u", c->deny_version,
                        c->poll_wait_s);
        o.timeout_ms = c->poll_wait_s * 1000 + REQUEST_MS;
        break;
    }
    int rv = util_http_start(c->base, url.s, &o, on_answer, c, &c->req, err, sizeof(err));
    free(url.s);
    free(body.s);
    if (rv != 0) {
        fail(c, FAULT_LOCAL, "%s", err);
    }
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    agent_ctl *c = arg;
    (void)fd;
    (void)what;
    step_start(c);
}

static int ports_check(const agent_ctl_port *ports, size_t nports)
{
    if (nports > MAX_PORTS || (nports && !ports)) {
        util_log(UTIL_LOG_ERR, "controller client: %zu ports: at most %d", nports, MAX_PORTS);
        return -EINVAL;
    }
    for (size_t i = 0; i < nports; i++) {
        if (ports[i].port >= MAX_PORTS) {
            util_log(UTIL_LOG_ERR, "controller client: port %u: ports are 0 to %d", ports[i].port,
                     MAX_PORTS - 1);
            return -EINVAL;
        }
        for (size_t k = 0; k < i; k++) {
            if (ports[k].port == ports[i].port) {
                util_log(UTIL_LOG_ERR, "controller client: port %u is listed twice", ports[i].port);
                return -EINVAL;
            }
        }
    }
    return 0;
}

static int cfg_check(const agent_ctl_cfg *cfg)
{
    const char *why = NULL;
    util_peers peers;
    char perr[320];
    if (util_peers_parse(&peers, cfg->url, perr, sizeof(perr)) != 0) {
        util_log(UTIL_LOG_ERR, "controller client: --controller: %s", perr);
        return -EINVAL;
    }
    util_peers_free(&peers);
    if (!cfg->token || !cfg->token[0] || strpbrk(cfg->token, "\r\n")) {
        why = "the agent needs its token, one line";
    } else if (!cfg->host || !host_ok(cfg->host)) {
        why = "the host name must be 1 to 95 letters, digits, '.', '_' or '-'";
    } else if (!cfg->state_dir || !cfg->state_dir[0]) {
        why = "the state directory is not set";
    } else if (!cfg->version || !cfg->version[0]) {
        why = "the agent's version is not set";
    } else if (!cfg->mode || (strcmp(cfg->mode, "srv6") != 0 && strcmp(cfg->mode, "ecmp") != 0)) {
        why = "the mode must be srv6 or ecmp";
    } else if (cfg->backoff_max_ms && cfg->backoff_min_ms > cfg->backoff_max_ms) {
        why = "the shortest backoff is longer than the longest";
    }
    if (why) {
        util_log(UTIL_LOG_ERR, "controller client: %s", why);
        return -EINVAL;
    }
    return ports_check(cfg->ports, cfg->nports);
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = util_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int agent_ctl_new(struct event_base *base, const agent_ctl_cfg *cfg, agent_ctl **pctl)
{
    int rv;
    *pctl = NULL;
    if (!base || !cfg) {
        return -EINVAL;
    }
    if ((rv = cfg_check(cfg)) != 0) {
        return rv;
    }
    if (mkdir(cfg->state_dir, 0700) != 0 && errno != EEXIST) {
        rv = -errno;
        util_log(UTIL_LOG_ERR, "controller client: cannot make the state directory %s: %s",
                 cfg->state_dir, strerror(errno));
        return rv;
    }
    if (access(cfg->state_dir, W_OK | X_OK) != 0) {
        rv = -errno;
        util_log(UTIL_LOG_ERR, "controller client: cannot write in the state directory %s: %s",
                 cfg->state_dir, strerror(errno));
        return rv;
    }
    agent_ctl *c = util_xcalloc(1, sizeof(*c));
    c->base = base;
    char perr[320];
    util_peers_parse(&c->peers, cfg->url, perr, sizeof(perr)); /* checked above */
    c->token = util_xstrdup(cfg->token);
    c->cafile = dup_or_null(cfg->cafile);
    c->certfile = dup_or_null(cfg->certfile);
    c->keyfile = dup_or_null(cfg->keyfile);
    c->host = util_xstrdup(cfg->host);
    c->version = util_xstrdup(cfg->version);
    c->mode = util_xstrdup(cfg->mode);
    c->oob = cfg->oob && cfg->oob[0] ? util_xstrdup(cfg->oob) : NULL;
    c->state_dir = util_xstrdup(cfg->state_dir);
    c->profile_path = path_in(cfg->state_dir, PROFILE_FILE);
    c->denylist_path = path_in(cfg->state_dir, DENYLIST_FILE);
    if (cfg->nports) {
        memcpy(c->ports, cfg->ports, cfg->nports * sizeof(cfg->ports[0]));
    }
    c->nports = cfg->nports;
    c->on_profile = cfg->on_profile;
    c->on_denylist = cfg->on_denylist;
    c->on_link = cfg->on_link;
    c->user = cfg->user;
    c->backoff_min_ms = cfg->backoff_min_ms ? cfg->backoff_min_ms : BACKOFF_MIN_MS;
    c->backoff_max_ms = cfg->backoff_max_ms ? cfg->backoff_max_ms : BACKOFF_MAX_MS;
    if (c->backoff_min_ms > c->backoff_max_ms) {
        c->backoff_min_ms = c->backoff_max_ms;
    }
    c->slow_retry_ms = cfg->slow_retry_ms ? cfg->slow_retry_ms : SLOW_RETRY_MS;
    c->poll_wait_s = cfg->poll_wait_s ? cfg->poll_wait_s : POLL_WAIT_S;
    c->backoff_ms = c->backoff_min_ms;
    c->link = -1;
    c->step = STEP_REGISTER;
    if (getrandom(&c->rng, sizeof(c->rng), GRND_NONBLOCK) != (ssize_t)sizeof(c->rng)) {
        c->rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    }
    c->rng |= 1;
    /* names resolve without blocking the loop; an IP address needs no resolver at all */
    c->dns =
        evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE);
    if (!c->dns) {
        util_log(UTIL_LOG_WARNING,
                 "controller client: no asynchronous resolver (/etc/resolv.conf?): a controller "
                 "named by a host name is resolved blocking");
    }
    c->retry = evtimer_new(base, on_retry, c);
    if (!c->retry) {
        agent_ctl_free(c);
        return -ENOMEM;
    }
    load_kept(c);
    step_start(c);
    *pctl = c;
    return 0;
}

void agent_ctl_free(agent_ctl *c)
{
    if (!c) {
        return;
    }
    util_http_cancel(c->req);
    util_http_cancel(c->report_req);
    if (c->retry) {
        event_free(c->retry);
    }
    if (c->dns) {
        evdns_base_free(c->dns, 0);
    }
    util_peers_free(&c->peers);
    free(c->report_cur);
    free(c->token);
    free(c->cafile);
    free(c->certfile);
    free(c->keyfile);
    free(c->host);
    free(c->version);
    free(c->mode);
    free(c->oob);
    free(c->state_dir);
    free(c->profile_path);
    free(c->denylist_path);
    free(c->profile);
    free(c->denylist);
    free(c->report_next);
    free(c);
}

static int report_send(agent_ctl *c, const char *json, size_t len);
static int report_start(agent_ctl *c);

static void on_report(void *user, util_http_result *res)
{
    agent_ctl *c = user;
    c->report_req = NULL;
    util_http_route route =
        util_http_route_of(res->rv, res->status, res->body, res->len, res->leader, c->report_hops);
    if (route == UTIL_HTTP_FOLLOW && util_peers_follow(&c->peers, res->leader) == 0) {
        /* a report is a write: the leader takes it; the sequence goes there too */
        c->report_hops++;
        if (report_start(c) == 0) {
            return;
        }
    } else if (res->rv == 0 && res->status >= 200 && res->status < 300) {
        c->stats.reports_sent++;
        if (c->report_logged) {
            util_log(UTIL_LOG_NOTICE, "controller %s: reports are delivered again", cur(c));
            c->report_logged = 0;
        }
    } else {
        int key = res->rv != 0 ? res->rv : res->status;
        char detail[256];
        c->stats.reports_dropped++;
        if (key != c->report_logged) {
            if (res->rv != 0) {
                snprintf(detail, sizeof(detail), "%s", res->err);
            } else {
                problem_detail(res, detail, sizeof(detail));
            }
            util_log(UTIL_LOG_WARNING, "controller %s: a report is dropped (%d: %s)", cur(c),
                     res->status, detail);
            c->report_logged = key;
        }
    }
    free(c->report_cur);
    c->report_cur = NULL;
    if (c->report_next) {
        char *next = c->report_next;
        size_t len = c->report_next_len;
        c->report_next = NULL;
        if (c->link == 1) {
            report_send(c, next, len);
        } else {
            c->stats.reports_dropped++;
        }
        free(next);
    }
}

/* Sends c->report_cur to the controller asked now. */
static int report_start(agent_ctl *c)
{
    util_http_opts o = {.method = "POST",
                        .bearer = c->token,
                        .body = c->report_cur,
                        .bodylen = c->report_cur_len,
                        .cafile = c->cafile,
                        .certfile = c->certfile,
                        .keyfile = c->keyfile,
                        .timeout_ms = REQUEST_MS,
                        .dns = c->dns};
    char url[1024], err[512];
    snprintf(url, sizeof(url), "%s/api/v1/reports", cur(c));
    int rv = util_http_start(c->base, url, &o, on_report, c, &c->report_req, err, sizeof(err));
    if (rv != 0) {
        c->stats.reports_dropped++;
        util_log(UTIL_LOG_ERR, "controller client: a report cannot be sent: %s", err);
        free(c->report_cur);
        c->report_cur = NULL;
    }
    return rv;
}

static int report_send(agent_ctl *c, const char *json, size_t len)
{
    c->report_cur = util_xmalloc(len);
    memcpy(c->report_cur, json, len);
    c->report_cur_len = len;
    c->report_hops = 0;
    return report_start(c);
}

int agent_ctl_report(agent_ctl *c, const char *json, size_t len)
{
    if (!json || len == 0) {
        c->stats.reports_dropped++;
        return -EINVAL;
    }
    if (c->link != 1) {
        c->stats.reports_dropped++;
        return -ENOTCONN;
    }
    if (c->report_req) {
        /* the newest report is the one that matters */
        report_drop_waiting(c);
        c->report_next = util_xmalloc(len);
        memcpy(c->report_next, json, len);
        c->report_next_len = len;
        return 0;
    }
    return report_send(c, json, len);
}

int agent_ctl_set_ports(agent_ctl *c, const agent_ctl_port *ports, size_t nports)
{
    int rv = ports_check(ports, nports);
    if (rv != 0) {
        return rv;
    }
    if (nports) {
        memcpy(c->ports, ports, nports * sizeof(ports[0]));
    }
    c->nports = nports;
    c->ports_dirty = true;
    if (c->step == STEP_POLL && c->req) {
        /* the push channel is given up for the registration; the sequence comes back to it */
        util_http_cancel(c->req);
        c->req = NULL;
        c->step = STEP_REGISTER;
        step_start(c);
    }
    /* otherwise: a failure restarts with the registration, and the sequence in flight
     * registers again before it holds the push channel */
    return 0;
}

void agent_ctl_get_stats(const agent_ctl *c, agent_ctl_stats *pstats)
{
    *pstats = c->stats;
}

const char *agent_ctl_current(const agent_ctl *c)
{
    return cur(c);
}
