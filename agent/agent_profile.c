/* SPDX-License-Identifier: MIT */
/* Host profiles into the agent's terms. Everything the profile says that the agent's own
 * fabric also says (cabling, T0s, addresses, the EV codec) must agree: a controller that
 * runs another fabric would otherwise have the agent spray onto paths that do not exist. */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_profile.h"
#include "util.h"

static void say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(err, errlen, "profile body: ");
    if (n >= 0 && (size_t)n < errlen) {
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    }
    va_end(ap);
}

/* The parser's state: the body's names for where it is, and the error sentence. */
typedef struct ctx {
    const fab_topo *topo;
    char *err;
    size_t errlen;
} ctx;

static json_object *member(ctx *c, json_object *o, const char *where, const char *key,
                           json_type type)
{
    return util_json_member("profile body", o, where, key, type, c->err, c->errlen);
}

/* An integer member in [lo, hi]. */
static int member_uint(ctx *c, json_object *o, const char *where, const char *key, uint64_t lo,
                       uint64_t hi, uint64_t *pval)
{
    json_object *v = member(c, o, where, key, json_type_int);
    if (!v) {
        return -EINVAL;
    }
    int64_t x = json_object_get_int64(v);
    if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi) {
        say(c->err, c->errlen, "%s%s is %lld: it must be %llu to %llu", where, key, (long long)x,
            (unsigned long long)lo, (unsigned long long)hi);
        return -EINVAL;
    }
    *pval = (uint64_t)x;
    return 0;
}

/* A string member that fits |destlen| with its NUL. */
static int member_str(ctx *c, json_object *o, const char *where, const char *key, char *dest,
                      size_t destlen)
{
    json_object *v = member(c, o, where, key, json_type_string);
    if (!v) {
        return -EINVAL;
    }
    if ((size_t)json_object_get_string_len(v) >= destlen) {
        say(c->err, c->errlen, "%s%s is longer than %zu characters", where, key, destlen - 1);
        return -EINVAL;
    }
    memcpy(dest, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
    return 0;
}

/* An address member, which must be |want| (what the agent's fabric gives that port). */
static int member_addr(ctx *c, json_object *o, const char *where, const char *key,
                       const uint8_t want[16], uint8_t dest[16])
{
    json_object *v = member(c, o, where, key, json_type_string);
    if (!v) {
        return -EINVAL;
    }
    if (inet_pton(AF_INET6, json_object_get_string(v), dest) != 1) {
        say(c->err, c->errlen, "%s%s '%s' is no IPv6 address", where, key,
            json_object_get_string(v));
        return -EINVAL;
    }
    if (memcmp(dest, want, 16) != 0) {
        char t[64];
        say(c->err, c->errlen, "%s%s is %s, but fabric '%s' gives that port %s", where, key,
            json_object_get_string(v), fab_topo_name(c->topo), fab_addr_str(want, t));
        return -EINVAL;
    }
    return 0;
}

/* Ranges text "0,2-511" into |bits| (|n| bits, zeroed by the caller). The empty text is the
 * empty set. */
static int ranges_parse(ctx *c, const char *where, const char *key, const char *text, uint32_t n,
                        uint64_t *bits)
{
    const char *s = text;
    while (*s) {
        char *end;
        unsigned long a, b;
        if (*s < '0' || *s > '9') {
            goto bad;
        }
        a = b = strtoul(s, &end, 10);
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9') {
                goto bad;
            }
            b = strtoul(end + 1, &end, 10);
        }
        if (*end != ',' && *end != '\0') {
            goto bad;
        }
        if (a > b || b >= n) {
            say(c->err, c->errlen, "%s%s '%s': %lu-%lu is not within 0-%u", where, key, text, a, b,
                n ? n - 1 : 0);
            return -EINVAL;
        }
        for (unsigned long i = a; i <= b; i++) {
            bits[i / 64] |= 1ull << (i % 64);
        }
        s = *end == ',' ? end + 1 : end;
        if (*end == ',' && *s == '\0') {
            goto bad;
        }
    }
    return 0;
bad:
    say(c->err, c->errlen, "%s%s '%s' is not a list of indexes and ranges like '0,2-511'", where,
        key, text);
    return -EINVAL;
}

static bool bit_get(const uint64_t *bits, uint32_t i)
{
    return bits[i / 64] >> (i % 64) & 1;
}

static int port_parse(ctx *c, agent_profile *prof, json_object *o, unsigned i)
{
    const fab_topo *topo = c->topo;
    char where[32];
    snprintf(where, sizeof(where), "ports[%u].", i);
    uint64_t port, plane, t0_port;
    json_object *cabled;
    if (!json_object_is_type(o, json_type_object)) {
        say(c->err, c->errlen, "ports[%u] must be an object", i);
        return -EINVAL;
    }
    if (member_uint(c, o, where, "port", 0, prof->nports - 1, &port) != 0 ||
        member_uint(c, o, where, "plane", 0, prof->nports - 1, &plane) != 0 ||
        !(cabled = member(c, o, where, "cabled", json_type_boolean))) {
        return -EINVAL;
    }
    if (port != i || plane != port) {
        say(c->err, c->errlen, "ports[%u] must be port %u on plane %u, not port %llu on plane %llu",
            i, i, i, (unsigned long long)port, (unsigned long long)plane);
        return -EINVAL;
    }
    agent_profile_port *pt = &prof->ports[i];
    pt->port = pt->plane = i;
    pt->cabled = json_object_get_boolean(cabled);
    uint32_t sw;
    unsigned swport;
    bool topo_cabled = fab_host_attach(topo, prof->host_id, i, &sw, &swport) == 0;
    if (pt->cabled != topo_cabled) {
        say(c->err, c->errlen, "ports[%u] is %scabled, but in fabric '%s' %s:%u is %scabled", i,
            pt->cabled ? "" : "not ", fab_topo_name(topo), prof->host, i,
            topo_cabled ? "" : "not ");
        return -EINVAL;
    }
    if (!pt->cabled) {
        return 0;
    }
    fab_switch s;
    char ifname[FAB_IFNAME_MAX];
    uint8_t a[16], u[16];
    if (fab_switch_get(topo, sw, &s) != 0 || fab_host_addr(topo, prof->host_id, i, a) != 0 ||
        fab_host_usid_addr(topo, prof->host_id, i, u) != 0 ||
        fab_host_ifname(topo, prof->host_id, i, ifname, sizeof(ifname)) != 0) {
        say(c->err, c->errlen, "ports[%u]: fabric '%s' cannot name %s:%u", i, fab_topo_name(topo),
            prof->host, i);
        return -EINVAL;
    }
    if (member_str(c, o, where, "ifname", pt->ifname, sizeof(pt->ifname)) != 0 ||
        member_addr(c, o, where, "address", a, pt->address) != 0 ||
        member_addr(c, o, where, "usid_address", u, pt->usid_address) != 0 ||
        member_str(c, o, where, "t0", pt->t0, sizeof(pt->t0)) != 0 ||
        member_uint(c, o, where, "t0_port", 0, UINT16_MAX, &t0_port) != 0) {
        return -EINVAL;
    }
    if (strcmp(pt->ifname, ifname) != 0) {
        say(c->err, c->errlen, "ports[%u].ifname is '%s', but fabric '%s' names it '%s'", i,
            pt->ifname, fab_topo_name(topo), ifname);
        return -EINVAL;
    }
    if (strcmp(pt->t0, s.name) != 0 || t0_port != swport) {
        say(c->err, c->errlen,
            "ports[%u] is cabled to %s port %llu, but in fabric '%s' %s:%u is on %s port %u", i,
            pt->t0, (unsigned long long)t0_port, fab_topo_name(topo), prof->host, i, s.name,
            swport);
        return -EINVAL;
    }
    pt->t0_index = s.index;
    pt->t0_port = swport;
    return 0;
}

static int codec_check(ctx *c, json_object *root)
{
    const fab_plan *plan = fab_topo_plan(c->topo);
    json_object *o = member(c, root, "", "ev_codec", json_type_object);
    uint64_t pb, tb, sb, udp;
    if (!o || member_uint(c, o, "ev_codec.", "plane_bits", 0, 32, &pb) != 0 ||
        member_uint(c, o, "ev_codec.", "t1_bits", 0, 32, &tb) != 0 ||
        member_uint(c, o, "ev_codec.", "salt_bits", 0, 32, &sb) != 0 ||
        member_uint(c, o, "ev_codec.", "udp_port", 0, UINT16_MAX, &udp) != 0) {
        return -EINVAL;
    }
    unsigned salt = 32u - plan->plane_bits - plan->index_bits;
    if (pb != plan->plane_bits || tb != plan->index_bits || sb != salt || udp != plan->udp_port) {
        say(c->err, c->errlen,
            "ev_codec is %llu plane, %llu T1 and %llu salt bits on UDP port %llu; fabric '%s' "
            "has %u, %u and %u on %u",
            (unsigned long long)pb, (unsigned long long)tb, (unsigned long long)sb,
            (unsigned long long)udp, fab_topo_name(c->topo), plan->plane_bits, plan->index_bits,
            salt, plan->udp_port);
        return -EINVAL;
    }
    return 0;
}

/* Class |i| into |cl|; |seen| (per plane, nt0 bits) catches a T0 that two classes claim. */
static int class_parse(ctx *c, agent_profile *prof, json_object *o, unsigned i,
                       agent_profile_class *cl, uint64_t **seen)
{
    const fab_topo *topo = c->topo;
    const fab_plan *plan = fab_topo_plan(topo);
    char where[32], kind[16];
    snprintf(where, sizeof(where), "classes[%u].", i);
    uint64_t plane;
    json_object *evs, *t1s;
    if (!json_object_is_type(o, json_type_object)) {
        say(c->err, c->errlen, "classes[%u] must be an object", i);
        return -EINVAL;
    }
    if (member_uint(c, o, where, "plane", 0, prof->nports - 1, &plane) != 0 ||
        member_str(c, o, where, "kind", kind, sizeof(kind)) != 0 ||
        !(evs = member(c, o, where, "evs", json_type_array))) {
        return -EINVAL;
    }
    json_object *t0v = member(c, o, where, "t0s", json_type_string);
    if (!t0v) {
        return -EINVAL;
    }
    unsigned p = (unsigned)plane;
    cl->plane = p;
    if (strcmp(kind, "local") == 0) {
        cl->kind = AGENT_CLASS_LOCAL;
    } else if (strcmp(kind, "remote") == 0) {
        cl->kind = AGENT_CLASS_REMOTE;
    } else {
        say(c->err, c->errlen, "classes[%u].kind must be local or remote, not '%s'", i, kind);
        return -EINVAL;
    }
    if (!prof->ports[p].cabled) {
        say(c->err, c->errlen, "classes[%u] is on plane %u, where %s is not cabled", i, p,
            prof->host);
        return -EINVAL;
    }
    uint32_t nt0 = fab_topo_nt0(topo, p), nt1 = fab_topo_nt1(topo, p),
             own = prof->ports[p].t0_index;
    size_t words = (size_t)(nt0 + 63) / 64 + 1;
    cl->nt0 = nt0;
    cl->t0s = util_xcalloc(words, sizeof(uint64_t));
    if (ranges_parse(c, where, "t0s", json_object_get_string(t0v), nt0, cl->t0s) != 0) {
        return -EINVAL;
    }
    /* the local class is the host's own T0 alone, and no remote class has it */
    for (uint32_t a = 0; a < nt0; a++) {
        bool in = bit_get(cl->t0s, a);
        if (in && bit_get(seen[p], a)) {
            say(c->err, c->errlen, "classes[%u].t0s has T0 %u of plane %u, which another class has",
                i, a, p);
            return -EINVAL;
        }
        if (cl->kind == AGENT_CLASS_LOCAL ? in != (a == own) : in && a == own) {
            say(c->err, c->errlen,
                "classes[%u] is a %s class with t0s '%s': only the local class has the host's own "
                "T0 (%u), and only that",
                i, kind, json_object_get_string(t0v), own);
            return -EINVAL;
        }
        seen[p][a / 64] |= in ? 1ull << (a % 64) : 0;
    }
    uint64_t *t1bits = NULL;
    if (json_object_object_get_ex(o, "t1s", &t1s)) {
        if (!json_object_is_type(t1s, json_type_string)) {
            say(c->err, c->errlen, "classes[%u].t1s has the wrong type: it must be a string", i);
            return -EINVAL;
        }
        t1bits = util_xcalloc((size_t)(nt1 + 63) / 64 + 1, sizeof(uint64_t));
        if (ranges_parse(c, where, "t1s", json_object_get_string(t1s), nt1, t1bits) != 0) {
            free(t1bits);
            return -EINVAL;
        }
    }
    int rv = 0;
    size_t n = json_object_array_length(evs);
    cl->evs = util_xcalloc(n + 1, sizeof(uint32_t));
    for (size_t k = 0; k < n; k++) {
        json_object *e = json_object_array_get_idx(evs, k);
        int64_t x = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
        if (x < 0 || x > UINT32_MAX) {
            say(c->err, c->errlen, "classes[%u].evs[%zu] must be an EV, 0 to 4294967295", i, k);
            rv = -EINVAL;
            goto out;
        }
        uint32_t ev = (uint32_t)x;
        unsigned ep = fab_ev_plane(plan, ev), ej = fab_ev_t1(plan, ev);
        if (ep != p || ej >= nt1 ||
            (t1bits && cl->kind == AGENT_CLASS_REMOTE && !bit_get(t1bits, ej))) {
            say(c->err, c->errlen,
                "classes[%u].evs[%zu] is EV %u of plane %u and T1 %u: the class is on plane %u "
                "with %s",
                i, k, ev, ep, ej, p,
                t1bits && cl->kind == AGENT_CLASS_REMOTE ? "the T1s of its t1s" : "its T1s");
            rv = -EINVAL;
            goto out;
        }
        cl->evs[cl->nevs++] = ev;
    }
out:
    free(t1bits);
    return rv;
}

static int nscc_parse(ctx *c, json_object *o, mrc_cc_nscc_cfg *n)
{
    static const char *const where = "cc.nscc.";
    static const struct {
        const char *key;
        size_t off;
        bool real;
    } fields[] = {
        {"link_gbps", offsetof(mrc_cc_nscc_cfg, link_gbps), true},
        {"base_rtt_ns", offsetof(mrc_cc_nscc_cfg, base_rtt_ns), false},
        {"target_delay_ns", offsetof(mrc_cc_nscc_cfg, target_delay_ns), false},
        {"max_cwnd", offsetof(mrc_cc_nscc_cfg, max_cwnd), false},
        {"gamma", offsetof(mrc_cc_nscc_cfg, gamma), true},
        {"max_md_jump", offsetof(mrc_cc_nscc_cfg, max_md_jump), true},
        {"fi", offsetof(mrc_cc_nscc_cfg, fi), true},
        {"fi_scale", offsetof(mrc_cc_nscc_cfg, fi_scale), true},
        {"eta", offsetof(mrc_cc_nscc_cfg, eta), true},
        {"adjust_bytes", offsetof(mrc_cc_nscc_cfg, adjust_bytes), false},
        {"adjust_period_ns", offsetof(mrc_cc_nscc_cfg, adjust_period_ns), false},
        {"fi_delay_ns", offsetof(mrc_cc_nscc_cfg, fi_delay_ns), false},
        {"delay_gain", offsetof(mrc_cc_nscc_cfg, delay_gain), true},
    };
    memset(n, 0, sizeof(*n));
    /* every field is required: the controller resolved them all, and a field the agent read as
     * 0 would silently take the engine's default instead of the controller's value */
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        char *dst = (char *)n + fields[i].off;
        if (fields[i].real) {
            json_object *v = member(c, o, where, fields[i].key, json_type_double);
            if (!v) {
                return -EINVAL;
            }
            double x = json_object_get_double(v);
            memcpy(dst, &x, sizeof(x));
        } else {
            uint64_t x;
            if (member_uint(c, o, where, fields[i].key, 0, INT64_MAX, &x) != 0) {
                return -EINVAL;
            }
            memcpy(dst, &x, sizeof(x));
        }
    }
    uint64_t gate;
    if (member_uint(c, o, where, "qa_gate", 0, 63, &gate) != 0) {
        return -EINVAL;
    }
    n->qa_gate = (unsigned)gate;
    json_object *v;
    if (!json_object_object_get_ex(o, "qa_threshold_ns", &v)) {
        say(c->err, c->errlen, "cc.nscc.qa_threshold_ns is missing: it must be an integer or null");
        return -EINVAL;
    }
    if (v == NULL) {
        n->qa_threshold_ns = UINT64_MAX; /* no delay triggers quick adapt */
    } else if (member_uint(c, o, where, "qa_threshold_ns", 0, INT64_MAX, &n->qa_threshold_ns) !=
               0) {
        return -EINVAL;
    }
    if (json_object_object_get_ex(o, "disable_qa", &v)) {
        if (!json_object_is_type(v, json_type_boolean)) {
            say(c->err, c->errlen,
                "cc.nscc.disable_qa has the wrong type: it must be true or false");
            return -EINVAL;
        }
        n->disable_qa = json_object_get_boolean(v);
    }
    return 0;
}

static int cc_parse(ctx *c, json_object *root, agent_profile_cc *cc)
{
    json_object *o = member(c, root, "", "cc", json_type_object), *trim, *nscc;
    uint64_t mtu;
    if (!o || member_str(c, o, "cc.", "algorithm", cc->algorithm, sizeof(cc->algorithm)) != 0 ||
        member_uint(c, o, "cc.", "mtu", 1, UINT32_MAX, &mtu) != 0 ||
        !(trim = member(c, o, "cc.", "trimming", json_type_boolean))) {
        return -EINVAL;
    }
    cc->mtu = (uint32_t)mtu;
    cc->trimming = json_object_get_boolean(trim);
    if (strcmp(cc->algorithm, "none") == 0) {
        return 0;
    }
    if (strcmp(cc->algorithm, "uet-1.0-nscc") != 0) {
        say(c->err, c->errlen, "cc.algorithm must be uet-1.0-nscc or none, not '%s'",
            cc->algorithm);
        return -EINVAL;
    }
    if (!(nscc = member(c, o, "cc.", "nscc", json_type_object)) ||
        nscc_parse(c, nscc, &cc->nscc) != 0) {
        return -EINVAL;
    }
    mrc_cc_nscc_cfg out;
    if (mrc_cc_nscc_resolve(&cc->nscc, cc->mtu, cc->trimming, &out) != 0) {
        say(c->err, c->errlen,
            "cc.nscc is not a profile the engine takes (link %g Gb/s, base RTT "
            "%llu ns, MTU %u)",
            cc->nscc.link_gbps, (unsigned long long)cc->nscc.base_rtt_ns, cc->mtu);
        return -EINVAL;
    }
    cc->has_nscc = true;
    return 0;
}

int agent_profile_parse(const fab_topo *topo, const char *json, size_t len, agent_profile **pprof,
                        char *err, size_t errlen)
{
    ctx c = {.topo = topo, .err = err, .errlen = errlen};
    int rv = -EINVAL;
    agent_profile *prof = NULL;
    uint64_t *seen[FAB_MAX_PLANES] = {0};
    json_object *root =
                    util_json_parse("profile body", json ? json : "", json ? len : 0, err, errlen),
                *ports, *classes;
    if (!root) {
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        say(err, errlen, "the top level must be an object, not %s",
            util_json_type_name(json_object_get_type(root)));
        goto out;
    }
    prof = util_xcalloc(1, sizeof(*prof));
    prof->nports = fab_topo_planes(topo);
    if (member_str(&c, root, "", "host", prof->host, sizeof(prof->host)) != 0) {
        goto out;
    }
    if ((prof->host_id = fab_host_find(topo, prof->host)) == FAB_NONE) {
        say(err, errlen, "host '%s' is not in fabric '%s'", prof->host, fab_topo_name(topo));
        goto out;
    }
    if (!(ports = member(&c, root, "", "ports", json_type_array))) {
        goto out;
    }
    if (json_object_array_length(ports) != prof->nports) {
        say(err, errlen, "ports has %zu ports: %s has one per plane of fabric '%s', %u",
            json_object_array_length(ports), prof->host, fab_topo_name(topo), prof->nports);
        goto out;
    }
    for (unsigned i = 0; i < prof->nports; i++) {
        if (port_parse(&c, prof, json_object_array_get_idx(ports, i), i) != 0) {
            goto out;
        }
    }
    if (codec_check(&c, root) != 0 ||
        !(classes = member(&c, root, "", "classes", json_type_array))) {
        goto out;
    }
    size_t ncls = json_object_array_length(classes);
    prof->classes = util_xcalloc(ncls + 1, sizeof(*prof->classes));
    for (unsigned p = 0; p < prof->nports; p++) {
        seen[p] = util_xcalloc((size_t)(fab_topo_nt0(topo, p) + 63) / 64 + 1, sizeof(uint64_t));
    }
    for (size_t i = 0; i < ncls; i++) {
        agent_profile_class *cl = &prof->classes[prof->nclasses++];
        if (class_parse(&c, prof, json_object_array_get_idx(classes, i), (unsigned)i, cl, seen) !=
            0) {
            goto out;
        }
    }
    /* every cabled plane has its local class: an agent must reach the hosts of its own T0 */
    for (unsigned p = 0; p < prof->nports; p++) {
        if (prof->ports[p].cabled && !bit_get(seen[p], prof->ports[p].t0_index)) {
            say(err, errlen, "classes has no local class for plane %u", p);
            goto out;
        }
    }
    if (cc_parse(&c, root, &prof->cc) != 0) {
        goto out;
    }
    *pprof = prof;
    prof = NULL;
    rv = 0;
out:
    for (unsigned p = 0; p < FAB_MAX_PLANES; p++) {
        free(seen[p]);
    }
    agent_profile_free(prof);
    json_object_put(root);
    return rv;
}

void agent_profile_free(agent_profile *prof)
{
    if (!prof) {
        return;
    }
    for (unsigned i = 0; i < prof->nclasses; i++) {
        free(prof->classes[i].t0s);
        free(prof->classes[i].evs);
    }
    free(prof->classes);
    free(prof);
}

const agent_profile_class *agent_profile_class_of(const agent_profile *prof, unsigned plane,
                                                  uint32_t t0)
{
    for (unsigned i = 0; i < prof->nclasses; i++) {
        const agent_profile_class *cl = &prof->classes[i];
        if (cl->plane == plane && t0 < cl->nt0 && bit_get(cl->t0s, t0)) {
            return cl;
        }
    }
    return NULL;
}

int agent_profile_evs(const agent_profile *prof, const fab_topo *topo, uint32_t peer_host,
                      mrc_ev *evs, unsigned max, unsigned *pn)
{
    *pn = 0;
    if (peer_host >= fab_topo_nhosts(topo) || peer_host == prof->host_id ||
        fab_topo_planes(topo) != prof->nports) {
        return -EINVAL;
    }
    unsigned n = 0;
    for (unsigned p = 0; p < prof->nports; p++) {
        uint32_t sw;
        unsigned swport;
        fab_switch s;
        if (!prof->ports[p].cabled || fab_host_attach(topo, peer_host, p, &sw, &swport) != 0 ||
            fab_switch_get(topo, sw, &s) != 0) {
            continue;
        }
        const agent_profile_class *cl = agent_profile_class_of(prof, p, s.index);
        for (unsigned k = 0; cl && k < cl->nevs; k++, n++) {
            if (n < max) {
                evs[n] = (mrc_ev){.val = cl->evs[k], .port = (uint8_t)p};
            }
        }
    }
    *pn = n;
    return n > max ? -ENOSPC : n == 0 ? -ENOENT : 0;
}

int agent_profile_addrs(const agent_profile *prof, bool usid, uint8_t (*dest)[16], unsigned max,
                        unsigned *pn)
{
    *pn = prof->nports;
    if (prof->nports > max) {
        return -ENOSPC;
    }
    for (unsigned p = 0; p < prof->nports; p++) {
        const agent_profile_port *pt = &prof->ports[p];
        if (pt->cabled) {
            memcpy(dest[p], usid ? pt->usid_address : pt->address, 16);
        } else {
            memset(dest[p], 0, 16);
        }
    }
    return 0;
}
