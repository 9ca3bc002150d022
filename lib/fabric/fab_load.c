/* SPDX-License-Identifier: MIT */
/* Topology loading: JSON (parametric or explicit form) into the model, naming every fault. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

/* The loader's state: the model being built and the JSON path of the value in hand. */
typedef struct loader {
    fab_topo *topo;
    fab_error *err;
    char path[FAB_PATH_MAX];
    size_t pathlen;
    unsigned radix;
    uint8_t *missing_up[FAB_MAX_PLANES]; /* bitmap a * nt1 + j, filled before cabling */
} loader;

/* Messages quote the input, which need not be UTF-8 or printable: keep them printable ASCII so
 * that they go into JSON documents and terminals whole. */
static void printable(char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) {
            *s = '?';
        }
    }
}

static void error_vset(fab_error *perr, const char *path, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void error_vset(fab_error *perr, const char *path, const char *fmt, va_list ap)
{
    snprintf(perr->path, sizeof(perr->path), "%s", path);
    vsnprintf(perr->msg, sizeof(perr->msg), fmt, ap);
    printable(perr->path);
    printable(perr->msg);
}

void fab_error_set(fab_error *perr, const char *path, const char *fmt, ...)
{
    if (!perr) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    error_vset(perr, path, fmt, ap);
    va_end(ap);
}

static int fail(loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(loader *ld, const char *fmt, ...)
{
    if (ld->err) {
        va_list ap;
        va_start(ap, fmt);
        error_vset(ld->err, ld->path, fmt, ap);
        va_end(ap);
    }
    return FAB_ERR_INVAL;
}

static size_t push_key(loader *ld, const char *key)
{
    size_t old = ld->pathlen;
    int n = snprintf(ld->path + old, sizeof(ld->path) - old, ".%s", key);
    ld->pathlen = (n > 0 && old + (size_t)n < sizeof(ld->path)) ? old + (size_t)n : old;
    return old;
}

static size_t push_index(loader *ld, size_t i)
{
    size_t old = ld->pathlen;
    int n = snprintf(ld->path + old, sizeof(ld->path) - old, "[%zu]", i);
    ld->pathlen = (n > 0 && old + (size_t)n < sizeof(ld->path)) ? old + (size_t)n : old;
    return old;
}

static void pop(loader *ld, size_t old)
{
    ld->pathlen = old;
    ld->path[old] = '\0';
}

static const char *type_name(json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_double:
        return "a fraction";
    case json_type_int:
        return "an integer";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    case json_type_string:
        return "a string";
    }
    return "unknown";
}

/* Rejects keys not in |allowed| (NULL-terminated): a typo must not be silently ignored. */
static int check_keys(loader *ld, json_object *obj, const char *const *allowed)
{
    json_object_object_foreach(obj, key, val)
    {
        (void)val;
        bool ok = false;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, key) == 0) {
                ok = true;
                break;
            }
        }
        if (!ok) {
            size_t old = push_key(ld, key);
            int rv = fail(ld, "unknown key '%s'", key);
            pop(ld, old);
            return rv;
        }
    }
    return 0;
}

static int want_type(loader *ld, json_object *o, json_type t, const char *what)
{
    if (!json_object_is_type(o, t)) {
        return fail(ld, "must be %s, not %s", what, type_name(o));
    }
    return 0;
}

/* An integer member |key| in [min, max]; absent members keep |*pv| unless required. */
static int get_uint(loader *ld, json_object *obj, const char *key, uint64_t min, uint64_t max,
                    bool required, uint64_t *pv)
{
    json_object *o;
    size_t old = push_key(ld, key);
    int rv = 0;
    if (!json_object_object_get_ex(obj, key, &o)) {
        if (required) {
            pop(ld, old);
            return fail(ld, "missing required key '%s'", key);
        }
        goto out;
    }
    if (!json_object_is_type(o, json_type_int)) {
        rv = fail(ld, "must be an integer from %" PRIu64 " to %" PRIu64 ", not %s", min, max,
                  type_name(o));
        goto out;
    }
    errno = 0;
    int64_t v = json_object_get_int64(o);
    if (errno != 0 || v < 0 || (uint64_t)v < min || (uint64_t)v > max) {
        rv = fail(ld, "%" PRId64 " is out of range (%" PRIu64 " to %" PRIu64 ")", v, min, max);
        goto out;
    }
    *pv = (uint64_t)v;
out:
    pop(ld, old);
    return rv;
}

static int get_str(loader *ld, json_object *obj, const char *key, bool required, const char **pv)
{
    json_object *o;
    size_t old = push_key(ld, key);
    int rv = 0;
    if (!json_object_object_get_ex(obj, key, &o)) {
        if (required) {
            pop(ld, old);
            return fail(ld, "missing required key '%s'", key);
        }
        goto out;
    }
    if ((rv = want_type(ld, o, json_type_string, "a string")) != 0) {
        goto out;
    }
    *pv = json_object_get_string(o);
out:
    pop(ld, old);
    return rv;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= FAB_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
            return false;
        }
    }
    return true;
}

static int check_name(loader *ld, const char *s)
{
    if (!name_ok(s)) {
        return fail(ld, "'%.80s' is not a valid name (1-%d characters of A-Z a-z 0-9 . _ -)", s,
                    FAB_NAME_MAX - 1);
    }
    return 0;
}

/* An interface name or pattern. Letters, digits, '.', '_' and '-' name every real switch port
 * (Ethernet0, swp1s0, eth0.100) and are safe in JSON, SONiC keys, FRR and shell alike. */
static int check_ifpattern(loader *ld, const char *s, bool pattern)
{
    size_t n = strlen(s);
    const char *at = strstr(s, "{port}");
    if (n == 0 || n >= 64) {
        return fail(ld, "'%.80s' is not a valid interface name", s);
    }
    if (pattern && (!at || strstr(at + 1, "{port}"))) {
        return fail(ld, "interface pattern '%s' must contain '{port}' exactly once", s);
    }
    if (!pattern && n >= FAB_IFNAME_MAX) {
        return fail(ld, "interface name '%s' is longer than %d characters", s, FAB_IFNAME_MAX - 1);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (pattern && at && s + i >= at && s + i < at + 6) {
            continue;
        }
        if (!isalnum(c) && c != '.' && c != '_' && c != '-') {
            return fail(ld, "'%.80s' is not a valid interface name (letters, digits, . _ -)", s);
        }
    }
    return 0;
}

static int parse_block(loader *ld, const char *text, uint8_t dest[16])
{
    char buf[64];
    const char *slash = strchr(text, '/');
    if (!slash || (size_t)(slash - text) >= sizeof(buf)) {
        return fail(ld, "'%.80s' is not an IPv6 prefix (like fcbb:bb00::/32)", text);
    }
    memcpy(buf, text, (size_t)(slash - text));
    buf[slash - text] = '\0';
    char *end;
    long len = strtol(slash + 1, &end, 10);
    /* the length in plain digits: no sign, blank or leading zero */
    if (inet_pton(AF_INET6, buf, dest) != 1 || *end != '\0' || !isdigit((unsigned char)slash[1]) ||
        (slash[1] == '0' && slash[2] != '\0')) {
        return fail(ld, "'%.80s' is not an IPv6 prefix (like fcbb:bb00::/32)", text);
    }
    if (len != 32) {
        return fail(ld, "the block must be a /32, not /%ld", len);
    }
    for (int i = 4; i < 16; i++) {
        if (dest[i] != 0) {
            return fail(ld, "'%s' has bits set beyond /32", text);
        }
    }
    return 0;
}

/* A plan field: an absent key keeps the default already in |*pv|. */
static int get_u8(loader *ld, json_object *obj, const char *key, uint64_t min, uint64_t max,
                  uint8_t *pv)
{
    uint64_t v = *pv;
    int rv = get_uint(ld, obj, key, min, max, false, &v);
    *pv = (uint8_t)v;
    return rv;
}

static int get_u16(loader *ld, json_object *obj, const char *key, uint64_t min, uint64_t max,
                   uint16_t *pv)
{
    uint64_t v = *pv;
    int rv = get_uint(ld, obj, key, min, max, false, &v);
    *pv = (uint16_t)v;
    return rv;
}

static int get_block(loader *ld, json_object *obj, const char *key, uint8_t dest[16])
{
    const char *s = NULL;
    int rv = get_str(ld, obj, key, false, &s);
    if (rv != 0 || !s) {
        return rv;
    }
    size_t old = push_key(ld, key);
    rv = parse_block(ld, s, dest);
    pop(ld, old);
    return rv;
}

static int parse_kinds(loader *ld, json_object *k, fab_plan *plan)
{
    static const char *const kind_keys[] = {"t0", "t1", "dl", NULL};
    uint64_t kmax = (1u << plan->kind_bits) - 1;
    size_t old = push_key(ld, "kinds");
    int rv;
    if ((rv = want_type(ld, k, json_type_object, "an object")) == 0 &&
        (rv = check_keys(ld, k, kind_keys)) == 0 &&
        (rv = get_u8(ld, k, "t0", 1, kmax, &plan->kind_t0)) == 0 &&
        (rv = get_u8(ld, k, "t1", 1, kmax, &plan->kind_t1)) == 0 &&
        (rv = get_u8(ld, k, "dl", 1, kmax, &plan->kind_dl)) == 0 &&
        (plan->kind_t0 == plan->kind_t1 || plan->kind_t0 == plan->kind_dl ||
         plan->kind_t1 == plan->kind_dl)) {
        rv = fail(ld, "the kinds of t0, t1 and dl must differ");
    }
    pop(ld, old);
    return rv;
}

static int parse_addressing(loader *ld, json_object *root)
{
    static const char *const keys[] = {"block",       "host_block", "plane_bits", "kind_bits",
                                       "index_bits",  "kinds",      "udp_port",   "route_table",
                                       "route_proto", NULL};
    fab_plan *plan = &ld->topo->plan;
    json_object *a, *k;
    if (!json_object_object_get_ex(root, "addressing", &a)) {
        return 0;
    }
    size_t old = push_key(ld, "addressing");
    int rv;
    if ((rv = want_type(ld, a, json_type_object, "an object")) != 0 ||
        (rv = check_keys(ld, a, keys)) != 0 || (rv = get_block(ld, a, "block", plan->block)) != 0 ||
        (rv = get_block(ld, a, "host_block", plan->host_block)) != 0 ||
        (rv = get_u8(ld, a, "plane_bits", 1, 4, &plan->plane_bits)) != 0 ||
        (rv = get_u8(ld, a, "kind_bits", 2, 8, &plan->kind_bits)) != 0 ||
        (rv = get_u8(ld, a, "index_bits", 1, 13, &plan->index_bits)) != 0) {
        goto out;
    }
    if (plan->plane_bits + plan->kind_bits + plan->index_bits != 16) {
        rv = fail(ld, "plane_bits + kind_bits + index_bits must be 16 (a uSID), not %u",
                  plan->plane_bits + plan->kind_bits + plan->index_bits);
        goto out;
    }
    if (json_object_object_get_ex(a, "kinds", &k)) {
        if ((rv = parse_kinds(ld, k, plan)) != 0) {
            goto out;
        }
    } else if (plan->kind_dl >= (1u << plan->kind_bits)) {
        rv = fail(ld, "kind_bits %u cannot hold the default kinds (1-3)", plan->kind_bits);
        goto out;
    }
    if ((rv = get_u16(ld, a, "udp_port", 1, 65535, &plan->udp_port)) != 0 ||
        (rv = get_u16(ld, a, "route_table", 1, 65535, &plan->route_table)) != 0) {
        goto out;
    }
    if (plan->route_table == 253 || plan->route_table == 255) {
        size_t o2 = push_key(ld, "route_table");
        rv = fail(ld, "table %u is reserved by the kernel (default/local)", plan->route_table);
        pop(ld, o2);
        goto out;
    }
    rv = get_u8(ld, a, "route_proto", 5, 255, &plan->route_proto);
out:
    pop(ld, old);
    return rv;
}

/* Default interface naming: one spec per tier and one for hosts (ifspecs 0, 1, 2). */
static int parse_interfaces(loader *ld, json_object *root, uint32_t *psid_dev)
{
    static const char *const keys[] = {"t0", "t1", "host", "sid_device", NULL};
    static const char *const tiers[] = {"t0", "t1", "host"};
    fab_topo *topo = ld->topo;
    json_object *o = NULL;
    int rv = 0;
    size_t old = push_key(ld, "interfaces");
    topo->ifspecs = calloc(16, sizeof(fab_ifspec));
    if (!topo->ifspecs) {
        rv = FAB_ERR_NOMEM;
        goto out;
    }
    topo->nifspecs = 3;
    bool have = json_object_object_get_ex(root, "interfaces", &o);
    if (have && ((rv = want_type(ld, o, json_type_object, "an object")) != 0 ||
                 (rv = check_keys(ld, o, keys)) != 0)) {
        goto out;
    }
    for (int i = 0; i < 3; i++) {
        const char *pat = "eth{port}";
        if (have && (rv = get_str(ld, o, tiers[i], false, &pat)) != 0) {
            goto out;
        }
        size_t o2 = push_key(ld, tiers[i]);
        rv = check_ifpattern(ld, pat, true);
        pop(ld, o2);
        if (rv != 0 || (rv = fab_arena_add(topo, pat, strlen(pat), &topo->ifspecs[i].pattern))) {
            goto out;
        }
    }
    const char *sid = "sr0";
    if (have && (rv = get_str(ld, o, "sid_device", false, &sid)) != 0) {
        goto out;
    }
    size_t o2 = push_key(ld, "sid_device");
    rv = check_ifpattern(ld, sid, false);
    pop(ld, o2);
    if (rv == 0) {
        rv = fab_arena_add(topo, sid, strlen(sid), psid_dev);
    }
out:
    pop(ld, old);
    topo->host_ifspec = 2;
    return rv;
}

static int add_ifspec(fab_topo *topo, uint32_t *pidx)
{
    if ((topo->nifspecs & (topo->nifspecs - 1)) == 0 && topo->nifspecs >= 16) {
        fab_ifspec *n = realloc(topo->ifspecs, 2 * topo->nifspecs * sizeof(*n));
        if (!n) {
            return FAB_ERR_NOMEM;
        }
        topo->ifspecs = n;
    }
    memset(&topo->ifspecs[topo->nifspecs], 0, sizeof(fab_ifspec));
    *pidx = topo->nifspecs++;
    return 0;
}

static int cmp_ifexc(const void *a, const void *b)
{
    const fab_ifexc *x = a, *y = b;
    return (int)x->port - (int)y->port;
}

/* A switch's own interface naming: {"pattern": "...", "ports": {"N": "name"}}. */
static int parse_switch_ifspec(loader *ld, uint32_t sw, json_object *o)
{
    static const char *const keys[] = {"pattern", "ports", NULL};
    fab_topo *topo = ld->topo;
    fab_sw *s = &topo->sw[sw];
    int rv;
    uint32_t idx;
    if ((rv = want_type(ld, o, json_type_object, "an object")) != 0 ||
        (rv = check_keys(ld, o, keys)) != 0 || (rv = add_ifspec(topo, &idx)) != 0) {
        return rv;
    }
    fab_ifspec *spec = &topo->ifspecs[idx];
    spec->pattern = topo->ifspecs[s->ifspec].pattern;
    const char *pat = NULL;
    if ((rv = get_str(ld, o, "pattern", false, &pat)) != 0) {
        return rv;
    }
    if (pat) {
        size_t old = push_key(ld, "pattern");
        rv = check_ifpattern(ld, pat, true);
        pop(ld, old);
        if (rv != 0 || (rv = fab_arena_add(topo, pat, strlen(pat), &spec->pattern)) != 0) {
            return rv;
        }
    }
    json_object *ports;
    if (json_object_object_get_ex(o, "ports", &ports)) {
        size_t old = push_key(ld, "ports");
        if ((rv = want_type(ld, ports, json_type_object, "an object")) != 0) {
            pop(ld, old);
            return rv;
        }
        size_t n = (size_t)json_object_object_length(ports);
        fab_ifexc *exc = realloc(topo->ifexc, (topo->nifexc + n + 1) * sizeof(*exc));
        if (!exc) {
            pop(ld, old);
            return FAB_ERR_NOMEM;
        }
        topo->ifexc = exc;
        spec->exc0 = topo->nifexc;
        json_object_object_foreach(ports, key, val)
        {
            size_t o2 = push_key(ld, key);
            char *end;
            unsigned long port = strtoul(key, &end, 10);
            if (*end != '\0' || !isdigit((unsigned char)key[0]) || port >= s->nports) {
                rv = fail(ld, "'%s' is not a port of '%s' (0-%u)", key, fab_str(topo, s->name),
                          s->nports - 1u);
            } else if ((rv = want_type(ld, val, json_type_string, "a string")) == 0 &&
                       (rv = check_ifpattern(ld, json_object_get_string(val), false)) == 0) {
                fab_ifexc *e = &topo->ifexc[topo->nifexc++];
                e->port = (uint16_t)port;
                const char *nm = json_object_get_string(val);
                rv = fab_arena_add(topo, nm, strlen(nm), &e->name);
                spec->nexc++;
            }
            pop(ld, o2);
            if (rv != 0) {
                pop(ld, old);
                return rv;
            }
        }
        qsort(topo->ifexc + spec->exc0, spec->nexc, sizeof(fab_ifexc), cmp_ifexc);
        pop(ld, old);
    }
    s->ifspec = idx;
    return 0;
}

static int parse_usid(loader *ld, json_object *o, uint16_t *pusid)
{
    uint64_t v;
    if (json_object_is_type(o, json_type_int)) {
        int64_t i = json_object_get_int64(o);
        if (i < 1 || i > 0xffff) {
            return fail(ld, "a uSID is 16 bits and not zero: %" PRId64 " is out of range", i);
        }
        v = (uint64_t)i;
    } else if (json_object_is_type(o, json_type_string)) {
        const char *s = json_object_get_string(o);
        const char *digits = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? s + 2 : s;
        char *end;
        errno = 0;
        v = strtoull(digits, &end, 16);
        /* hex digits only after an optional 0x: strtoull would also take blanks and signs */
        if (errno != 0 || *end != '\0' || !isxdigit((unsigned char)digits[0]) || v == 0 ||
            v > 0xffff) {
            return fail(ld, "'%.40s' is not a non-zero 16-bit uSID (like \"0x4001\")", s);
        }
    } else {
        return fail(ld, "a uSID must be an integer or a hex string, not %s", type_name(o));
    }
    *pusid = (uint16_t)v;
    return 0;
}

/* Per-switch settings shared by the explicit switch objects and overrides.switches. */
static int parse_switch_extras(loader *ld, uint32_t sw, json_object *o, uint8_t pin_source)
{
    fab_topo *topo = ld->topo;
    json_object *v;
    int rv = 0;
    if (json_object_object_get_ex(o, "usid", &v)) {
        size_t old = push_key(ld, "usid");
        rv = parse_usid(ld, v, &topo->sw[sw].usid);
        pop(ld, old);
        if (rv != 0) {
            return rv;
        }
        topo->sw[sw].pinned = pin_source;
    }
    if (json_object_object_get_ex(o, "sid_device", &v)) {
        size_t old = push_key(ld, "sid_device");
        if ((rv = want_type(ld, v, json_type_string, "a string")) == 0 &&
            (rv = check_ifpattern(ld, json_object_get_string(v), false)) == 0) {
            const char *s = json_object_get_string(v);
            rv = fab_arena_add(topo, s, strlen(s), &topo->sw[sw].sid_dev);
            topo->sw[sw].sid_source = pin_source;
        }
        pop(ld, old);
        if (rv != 0) {
            return rv;
        }
    }
    if (json_object_object_get_ex(o, "interfaces", &v)) {
        size_t old = push_key(ld, "interfaces");
        rv = parse_switch_ifspec(ld, sw, v);
        pop(ld, old);
        topo->sw[sw].if_source = pin_source;
    }
    return rv;
}

/* Resolves "NAME" to an element, with a sentence for the element that does not exist. */
static int find_elem(loader *ld, const char *name, bool want_host, uint32_t *pid)
{
    uint32_t e = fab_elem_find(ld->topo, name, strlen(name));
    if (e == FAB_NONE) {
        return fail(ld, "no %s named '%.80s'", want_host ? "host" : "switch", name);
    }
    if (want_host != !!(e & FAB_HOST_TAG)) {
        return fail(ld, "'%.80s' is a %s, not a %s", name, want_host ? "switch" : "host",
                    want_host ? "host" : "switch");
    }
    *pid = e & ~FAB_HOST_TAG;
    return 0;
}

static int missing_bitmaps(loader *ld)
{
    fab_topo *topo = ld->topo;
    for (unsigned p = 0; p < topo->planes; p++) {
        size_t n = ((size_t)topo->nt0[p] * topo->nt1[p] + 7) / 8;
        ld->missing_up[p] = calloc(n ? n : 1, 1);
        if (!ld->missing_up[p]) {
            return FAB_ERR_NOMEM;
        }
    }
    return 0;
}

/* overrides: {"missing_cables": [...], "switches": {"NAME": {...}}}; needs the name index. */
static int parse_overrides(loader *ld, json_object *root)
{
    static const char *const keys[] = {"missing_cables", "switches", NULL};
    static const char *const mkeys_up[] = {"t0", "t1", NULL};
    static const char *const mkeys_host[] = {"host", "port", NULL};
    static const char *const swkeys[] = {"usid", "interfaces", "sid_device", NULL};
    fab_topo *topo = ld->topo;
    json_object *ov, *v;
    int rv = 0;
    if ((rv = missing_bitmaps(ld)) != 0) {
        return rv;
    }
    if (!json_object_object_get_ex(root, "overrides", &ov)) {
        return 0;
    }
    size_t old = push_key(ld, "overrides");
    if ((rv = want_type(ld, ov, json_type_object, "an object")) != 0 ||
        (rv = check_keys(ld, ov, keys)) != 0) {
        goto out;
    }
    if (json_object_object_get_ex(ov, "switches", &v)) {
        size_t o2 = push_key(ld, "switches");
        if ((rv = want_type(ld, v, json_type_object, "an object")) == 0) {
            json_object_object_foreach(v, name, so)
            {
                size_t o3 = push_key(ld, name);
                uint32_t sw;
                if ((rv = find_elem(ld, name, false, &sw)) == 0 &&
                    (rv = want_type(ld, so, json_type_object, "an object")) == 0 &&
                    (rv = check_keys(ld, so, swkeys)) == 0) {
                    rv = parse_switch_extras(ld, sw, so, 2);
                }
                pop(ld, o3);
                if (rv != 0) {
                    break;
                }
            }
        }
        pop(ld, o2);
        if (rv != 0) {
            goto out;
        }
    }
    if (!json_object_object_get_ex(ov, "missing_cables", &v)) {
        goto out;
    }
    size_t o2 = push_key(ld, "missing_cables");
    if ((rv = want_type(ld, v, json_type_array, "an array")) != 0) {
        pop(ld, o2);
        goto out;
    }
    size_t n = json_object_array_length(v);
    topo->missing = calloc(n ? n : 1, sizeof(fab_missing));
    if (!topo->missing) {
        rv = FAB_ERR_NOMEM;
        pop(ld, o2);
        goto out;
    }
    for (size_t i = 0; i < n && rv == 0; i++) {
        json_object *m = json_object_array_get_idx(v, i), *tmp;
        size_t o3 = push_index(ld, i);
        const char *a = NULL, *b = NULL;
        fab_missing *ms = &topo->missing[topo->nmissing];
        if ((rv = want_type(ld, m, json_type_object, "an object")) != 0) {
            goto next;
        }
        if (json_object_object_get_ex(m, "host", &tmp)) {
            uint64_t port = 0;
            uint32_t h;
            if ((rv = check_keys(ld, m, mkeys_host)) != 0 ||
                (rv = get_str(ld, m, "host", true, &a)) != 0 ||
                (rv = get_uint(ld, m, "port", 0, topo->planes - 1, true, &port)) != 0) {
                goto next;
            }
            size_t o4 = push_key(ld, "host");
            rv = find_elem(ld, a, true, &h);
            pop(ld, o4);
            if (rv != 0) {
                goto next;
            }
            fab_att *att = &topo->att[(size_t)h * topo->planes + port];
            if (att->pad) {
                rv = fail(ld, "host port %s:%" PRIu64 " is listed twice", a, port);
                goto next;
            }
            att->pad = 1;
            ms->kind = FAB_MISSING_HOST;
            ms->a = h;
            ms->b = (uint32_t)port;
        } else {
            uint32_t t0, t1;
            if ((rv = check_keys(ld, m, mkeys_up)) != 0 ||
                (rv = get_str(ld, m, "t0", true, &a)) != 0 ||
                (rv = get_str(ld, m, "t1", true, &b)) != 0) {
                goto next;
            }
            size_t o4 = push_key(ld, "t0");
            rv = find_elem(ld, a, false, &t0);
            if (rv == 0 && topo->sw[t0].tier != FAB_TIER_T0) {
                rv = fail(ld, "'%s' is not a T0", a);
            }
            pop(ld, o4);
            if (rv != 0) {
                goto next;
            }
            o4 = push_key(ld, "t1");
            rv = find_elem(ld, b, false, &t1);
            if (rv == 0 && topo->sw[t1].tier != FAB_TIER_T1) {
                rv = fail(ld, "'%s' is not a T1", b);
            } else if (rv == 0 && topo->sw[t1].plane != topo->sw[t0].plane) {
                rv = fail(ld, "'%s' and '%s' are in different planes", a, b);
            }
            pop(ld, o4);
            if (rv != 0) {
                goto next;
            }
            unsigned p = topo->sw[t0].plane;
            size_t bit = (size_t)topo->sw[t0].index * topo->nt1[p] + topo->sw[t1].index;
            if (ld->missing_up[p][bit / 8] & (1u << (bit % 8))) {
                rv = fail(ld, "the cable between %s and %s is listed twice", a, b);
                goto next;
            }
            ld->missing_up[p][bit / 8] |= (uint8_t)(1u << (bit % 8));
            ms->kind = FAB_MISSING_UPLINK;
            ms->a = t0;
            ms->b = t1;
        }
        topo->nmissing++;
    next:
        pop(ld, o3);
    }
    pop(ld, o2);
out:
    pop(ld, old);
    return rv;
}

static int cable(loader *ld, uint32_t sa, unsigned pa, fab_peer_kind kb, uint32_t b, unsigned pb)
{
    fab_topo *topo = ld->topo;
    fab_port *x = &topo->ports[topo->sw[sa].port0 + pa];
    x->peer = b;
    x->peer_port = (uint16_t)pb;
    x->peer_kind = (uint8_t)kb;
    if (kb == FAB_PEER_SWITCH) {
        fab_port *y = &topo->ports[topo->sw[b].port0 + pb];
        y->peer = sa;
        y->peer_port = (uint16_t)pa;
        y->peer_kind = FAB_PEER_SWITCH;
    } else {
        fab_att *att = &topo->att[(size_t)b * topo->planes + pb];
        att->sw = sa;
        att->port = (uint16_t)pa;
    }
    topo->ncables++;
    return 0;
}

static int alloc_model(fab_topo *topo, uint32_t nsw, uint32_t nhosts, uint64_t nports)
{
    topo->sw = calloc(nsw ? nsw : 1, sizeof(fab_sw));
    topo->ports = calloc(nports ? nports : 1, sizeof(fab_port));
    topo->host_name = calloc(nhosts ? nhosts : 1, sizeof(uint32_t));
    topo->att = malloc(((size_t)nhosts * topo->planes + 1) * sizeof(fab_att));
    if (!topo->sw || !topo->ports || !topo->host_name || !topo->att) {
        return FAB_ERR_NOMEM;
    }
    for (size_t i = 0; i < (size_t)nhosts * topo->planes; i++) {
        topo->att[i] = (fab_att){.sw = FAB_NONE};
    }
    topo->nports = nports;
    return 0;
}

static int set_plane_counts(loader *ld)
{
    /* nt0/nt1 are one past the highest index; fab_topo_finish checks they are contiguous */
    fab_topo *topo = ld->topo;
    for (uint32_t i = 0; i < topo->nsw; i++) {
        fab_sw *s = &topo->sw[i];
        uint32_t *n = s->tier == FAB_TIER_T0 ? &topo->nt0[s->plane] : &topo->nt1[s->plane];
        if (s->index + 1u > *n) {
            *n = s->index + 1u;
        }
    }
    return 0;
}

static int gen_name(fab_topo *topo, const char *pat, const char *var, unsigned v, uint32_t *poff)
{
    char buf[FAB_NAME_MAX + 16];
    const char *at = strstr(pat, var);
    int n = snprintf(buf, sizeof(buf), "%.*s%u%s", (int)(at - pat), pat, v, at + strlen(var));
    return fab_arena_add(topo, buf, (size_t)n, poff);
}

static int load_parametric(loader *ld, json_object *root, uint32_t sid_dev)
{
    static const char *const keys[] = {
        "form",  "name",  "planes",    "addressing",       "interfaces", "overrides",
        "radix", "hosts", "host_name", "oversubscription", NULL};
    fab_topo *topo = ld->topo;
    const fab_plan *plan = &topo->plan;
    int rv;
    uint64_t radix = 0, hosts = 0;
    if ((rv = check_keys(ld, root, keys)) != 0 ||
        (rv = get_uint(ld, root, "radix", 2, 65535, true, &radix)) != 0 ||
        (rv = get_uint(ld, root, "hosts", 1, 1u << 24, true, &hosts)) != 0) {
        return rv;
    }
    double os = 1.0;
    json_object *o;
    if (json_object_object_get_ex(root, "oversubscription", &o)) {
        size_t old = push_key(ld, "oversubscription");
        if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double)) {
            rv = fail(ld, "must be a number (down-ports per uplink), not %s", type_name(o));
        } else if ((os = json_object_get_double(o)) < 1.0 || !isfinite(os) || os > 64) {
            rv = fail(ld, "%g is out of range (1 to 64)", os);
        }
        pop(ld, old);
        if (rv != 0) {
            return rv;
        }
    }
    /* d down-ports and radix - d uplinks with d / (radix - d) == os */
    double dd = (double)radix * os / (os + 1.0);
    uint64_t d = (uint64_t)llround(dd);
    if (fabs(dd - (double)d) > 1e-6 || d < 1 || d >= radix) {
        size_t old = push_key(ld, "oversubscription");
        rv = fail(ld, "radix %" PRIu64 " cannot be split %g:1 into whole down- and up-ports", radix,
                  os);
        pop(ld, old);
        return rv;
    }
    const char *hpat = "h{n}";
    if ((rv = get_str(ld, root, "host_name", false, &hpat)) != 0) {
        return rv;
    }
    size_t old = push_key(ld, "host_name");
    if (!strstr(hpat, "{n}") || strlen(hpat) > 40) {
        rv = fail(ld, "host name pattern '%.60s' must contain '{n}'", hpat);
    }
    pop(ld, old);
    if (rv != 0) {
        return rv;
    }
    uint64_t nt1 = radix - d, nt0 = (hosts + d - 1) / d, imax = (1u << plan->index_bits) - 1;
    old = push_key(ld, "hosts");
    if (nt0 > radix) {
        rv = fail(ld,
                  "%" PRIu64 " hosts need %" PRIu64 " T0 per plane, but a T1 has only %" PRIu64
                  " ports",
                  hosts, nt0, radix);
    } else if (nt0 - 1 > imax) {
        rv = fail(ld, "T0 index %" PRIu64 " overflows the %u-bit index field (at most %" PRIu64 ")",
                  nt0 - 1, plan->index_bits, imax);
    }
    pop(ld, old);
    old = push_key(ld, "radix");
    if (rv == 0 && nt1 - 1 > imax) {
        rv = fail(ld, "T1 index %" PRIu64 " overflows the %u-bit index field (at most %" PRIu64 ")",
                  nt1 - 1, plan->index_bits, imax);
    } else if (rv == 0 && d - 1 > imax) {
        rv =
            fail(ld, "down-port %" PRIu64 " overflows the %u-bit index field (at most %" PRIu64 ")",
                 d - 1, plan->index_bits, imax);
    }
    pop(ld, old);
    if (rv != 0) {
        return rv;
    }
    uint32_t per_plane = (uint32_t)(nt0 + nt1);
    uint32_t nsw = per_plane * topo->planes;
    if ((rv = alloc_model(topo, nsw, (uint32_t)hosts, (uint64_t)nsw * radix)) != 0) {
        return rv;
    }
    topo->nsw = nsw;
    topo->nhosts = (uint32_t)hosts;
    topo->dl_ports = (uint32_t)d;
    ld->radix = (unsigned)radix;
    for (unsigned p = 0; p < topo->planes; p++) {
        for (uint32_t i = 0; i < per_plane; i++) {
            uint32_t id = p * per_plane + i;
            fab_sw *s = &topo->sw[id];
            bool t0 = i < nt0;
            char buf[FAB_NAME_MAX];
            int n = snprintf(buf, sizeof(buf), "p%u-t%d-%u", p, t0 ? 0 : 1,
                             t0 ? i : (unsigned)(i - nt0));
            if ((rv = fab_arena_add(topo, buf, (size_t)n, &s->name)) != 0) {
                return rv;
            }
            s->plane = (uint8_t)p;
            s->tier = t0 ? FAB_TIER_T0 : FAB_TIER_T1;
            s->index = (uint16_t)(t0 ? i : i - nt0);
            s->nports = (uint16_t)radix;
            s->port0 = id * (uint32_t)radix;
            s->ifspec = s->tier;
            s->sid_dev = sid_dev;
        }
    }
    for (uint32_t h = 0; h < hosts; h++) {
        if ((rv = gen_name(topo, hpat, "{n}", h, &topo->host_name[h])) != 0) {
            return rv;
        }
        if (!name_ok(fab_str(topo, topo->host_name[h]))) {
            old = push_key(ld, "host_name");
            rv = fail(ld, "pattern '%s' makes the invalid name '%s'", hpat,
                      fab_str(topo, topo->host_name[h]));
            pop(ld, old);
            return rv;
        }
    }
    set_plane_counts(ld);
    if ((rv = fab_index_build(topo, ld->err)) != 0 || (rv = parse_overrides(ld, root)) != 0) {
        return rv;
    }
    for (unsigned p = 0; p < topo->planes; p++) {
        for (uint32_t a = 0; a < nt0; a++) {
            uint32_t t0 = p * per_plane + a;
            for (uint32_t j = 0; j < nt1; j++) {
                size_t bit = (size_t)a * nt1 + j;
                if (!(ld->missing_up[p][bit / 8] & (1u << (bit % 8)))) {
                    cable(ld, t0, (unsigned)(d + j), FAB_PEER_SWITCH,
                          p * per_plane + (uint32_t)nt0 + j, a);
                }
            }
        }
        for (uint32_t h = 0; h < hosts; h++) {
            if (!topo->att[(size_t)h * topo->planes + p].pad) {
                cable(ld, p * per_plane + (uint32_t)(h / d), (unsigned)(h % d), FAB_PEER_HOST, h,
                      p);
            }
        }
    }
    return 0;
}

/* "NAME:PORT" of a cable end. */
static int parse_end(loader *ld, json_object *c, const char *key, uint32_t *pelem, unsigned *pport)
{
    const char *s;
    int rv = get_str(ld, c, key, true, &s);
    if (rv != 0) {
        return rv;
    }
    size_t old = push_key(ld, key);
    const char *colon = strrchr(s, ':');
    char *end = NULL;
    unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (!colon || colon == s || !isdigit((unsigned char)colon[1]) || *end != '\0') {
        rv = fail(ld, "'%.80s' is not a cable end (like \"p0-t0-3:12\")", s);
        goto out;
    }
    uint32_t e = fab_elem_find(ld->topo, s, (size_t)(colon - s));
    if (e == FAB_NONE) {
        rv = fail(ld, "no switch or host named '%.*s'",
                  (int)(colon - s) > 80 ? 80 : (int)(colon - s), s);
        goto out;
    }
    unsigned nports = (e & FAB_HOST_TAG) ? ld->topo->planes : ld->topo->sw[e].nports;
    if (port >= nports) {
        rv = fail(ld, "'%.*s' has no port %lu (it has ports 0-%u)", (int)(colon - s), s, port,
                  nports - 1);
        goto out;
    }
    *pelem = e;
    *pport = (unsigned)port;
out:
    pop(ld, old);
    return rv;
}

static int port_used(loader *ld, uint32_t e, unsigned port)
{
    fab_topo *topo = ld->topo;
    if (e & FAB_HOST_TAG) {
        const fab_att *att = &topo->att[(size_t)(e & ~FAB_HOST_TAG) * topo->planes + port];
        if (att->pad) {
            return fail(ld, "host port %s:%u is cabled but listed in overrides.missing_cables",
                        fab_str(topo, topo->host_name[e & ~FAB_HOST_TAG]), port);
        }
        if (att->sw != FAB_NONE) {
            return fail(ld, "host port %s:%u is already cabled (to %s:%u)",
                        fab_str(topo, topo->host_name[e & ~FAB_HOST_TAG]), port,
                        fab_str(topo, topo->sw[att->sw].name), att->port);
        }
        return 0;
    }
    const fab_port *p = &topo->ports[topo->sw[e].port0 + port];
    if (p->peer_kind != FAB_PEER_NONE) {
        const char *peer = p->peer_kind == FAB_PEER_HOST ? fab_str(topo, topo->host_name[p->peer])
                                                         : fab_str(topo, topo->sw[p->peer].name);
        return fail(ld, "port %s:%u is already cabled (to %s:%u)", fab_str(topo, topo->sw[e].name),
                    port, peer, p->peer_port);
    }
    return 0;
}

static int parse_cables(loader *ld, json_object *root)
{
    static const char *const keys[] = {"a", "b", NULL};
    fab_topo *topo = ld->topo;
    json_object *cables;
    int rv;
    if (!json_object_object_get_ex(root, "cables", &cables)) {
        return fail(ld, "missing required key 'cables'");
    }
    size_t old = push_key(ld, "cables");
    if ((rv = want_type(ld, cables, json_type_array, "an array")) != 0) {
        goto out;
    }
    size_t n = json_object_array_length(cables);
    for (size_t i = 0; i < n && rv == 0; i++) {
        json_object *c = json_object_array_get_idx(cables, i);
        size_t o2 = push_index(ld, i);
        uint32_t ea, eb;
        unsigned pa, pb;
        if ((rv = want_type(ld, c, json_type_object, "an object")) != 0 ||
            (rv = check_keys(ld, c, keys)) != 0 || (rv = parse_end(ld, c, "a", &ea, &pa)) != 0 ||
            (rv = parse_end(ld, c, "b", &eb, &pb)) != 0) {
            goto next;
        }
        /* the switch end first; the keys follow their ends so that errors name the right one */
        const char *ka = "a", *kb = "b";
        if ((ea & FAB_HOST_TAG) && !(eb & FAB_HOST_TAG)) {
            uint32_t te = ea;
            unsigned tp = pa;
            ea = eb;
            pa = pb;
            eb = te;
            pb = tp;
            ka = "b";
            kb = "a";
        }
        if (ea & FAB_HOST_TAG) {
            rv = fail(ld, "a cable joins two hosts; hosts connect to T0 switches only");
            goto next;
        }
        const fab_sw *sa = &topo->sw[ea];
        size_t o3 = push_key(ld, ka);
        rv = port_used(ld, ea, pa);
        pop(ld, o3);
        o3 = push_key(ld, kb);
        if (rv == 0) {
            rv = port_used(ld, eb, pb);
        }
        pop(ld, o3);
        if (rv != 0) {
            goto next;
        }
        if (eb & FAB_HOST_TAG) {
            uint32_t h = eb & ~FAB_HOST_TAG;
            unsigned imax = (1u << topo->plan.index_bits) - 1;
            if (sa->tier != FAB_TIER_T0) {
                rv = fail(ld, "host %s is cabled to T1 '%s'; hosts connect to T0 switches only",
                          fab_str(topo, topo->host_name[h]), fab_str(topo, sa->name));
            } else if (sa->plane != pb) {
                rv = fail(ld, "host port %s:%u belongs to plane %u but '%s' is in plane %u",
                          fab_str(topo, topo->host_name[h]), pb, pb, fab_str(topo, sa->name),
                          sa->plane);
            } else if (pa > imax) {
                rv = fail(ld,
                          "T0 port %s:%u carries a host, but down-link uSIDs have an %u-bit "
                          "index (at most %u)",
                          fab_str(topo, sa->name), pa, topo->plan.index_bits, imax);
            } else {
                rv = cable(ld, ea, pa, FAB_PEER_HOST, h, pb);
            }
            goto next;
        }
        const fab_sw *sb = &topo->sw[eb];
        if (sa->tier == sb->tier) {
            rv =
                fail(ld, "'%s' and '%s' are both %s; cables join T0 to T1", fab_str(topo, sa->name),
                     fab_str(topo, sb->name), sa->tier == FAB_TIER_T0 ? "T0" : "T1");
        } else if (sa->plane != sb->plane) {
            rv = fail(ld, "'%s' (plane %u) and '%s' (plane %u) are in different planes",
                      fab_str(topo, sa->name), sa->plane, fab_str(topo, sb->name), sb->plane);
        } else {
            uint32_t t0 = sa->tier == FAB_TIER_T0 ? ea : eb, t1 = sa->tier == FAB_TIER_T0 ? eb : ea;
            unsigned p = sa->plane;
            size_t bit = (size_t)topo->sw[t0].index * topo->nt1[p] + topo->sw[t1].index;
            if (ld->missing_up[p][bit / 8] & (1u << (bit % 8))) {
                rv = fail(
                    ld,
                    "the cable between %s and %s is present but listed in overrides.missing_cables",
                    fab_str(topo, topo->sw[t0].name), fab_str(topo, topo->sw[t1].name));
            } else {
                rv = cable(ld, ea, pa, FAB_PEER_SWITCH, eb, pb);
            }
        }
    next:
        pop(ld, o2);
    }
out:
    pop(ld, old);
    return rv;
}

static int load_explicit(loader *ld, json_object *root, uint32_t sid_dev)
{
    static const char *const keys[] = {"form",       "name",      "planes", "addressing",
                                       "interfaces", "overrides", "radix",  "switches",
                                       "hosts",      "cables",    NULL};
    static const char *const swkeys[] = {"name", "plane",      "tier",       "index", "ports",
                                         "usid", "interfaces", "sid_device", NULL};
    fab_topo *topo = ld->topo;
    json_object *sws, *hosts;
    int rv;
    uint64_t radix = 0;
    if ((rv = check_keys(ld, root, keys)) != 0 ||
        (rv = get_uint(ld, root, "radix", 1, 65535, false, &radix)) != 0) {
        return rv;
    }
    if (!json_object_object_get_ex(root, "switches", &sws)) {
        return fail(ld, "missing required key 'switches'");
    }
    if (!json_object_object_get_ex(root, "hosts", &hosts)) {
        return fail(ld, "missing required key 'hosts'");
    }
    size_t old = push_key(ld, "switches");
    if ((rv = want_type(ld, sws, json_type_array, "an array")) != 0) {
        pop(ld, old);
        return rv;
    }
    pop(ld, old);
    old = push_key(ld, "hosts");
    if ((rv = want_type(ld, hosts, json_type_array, "an array")) != 0) {
        pop(ld, old);
        return rv;
    }
    pop(ld, old);
    size_t nsw = json_object_array_length(sws), nh = json_object_array_length(hosts);
    if (nsw > (1u << 20) || nh > (1u << 24)) {
        return fail(ld, "too many switches or hosts");
    }
    /* ports per switch are needed before the port array can be sized: a first pass */
    uint64_t nports = 0;
    old = push_key(ld, "switches");
    for (size_t i = 0; i < nsw; i++) {
        json_object *s = json_object_array_get_idx(sws, i);
        size_t o2 = push_index(ld, i);
        uint64_t np = radix;
        if ((rv = want_type(ld, s, json_type_object, "an object")) == 0 &&
            (rv = get_uint(ld, s, "ports", 1, 65535, radix == 0, &np)) == 0) {
            nports += np;
        }
        pop(ld, o2);
        if (rv != 0) {
            pop(ld, old);
            return rv;
        }
    }
    pop(ld, old);
    if ((rv = alloc_model(topo, (uint32_t)nsw, (uint32_t)nh, nports)) != 0) {
        return rv;
    }
    topo->nsw = (uint32_t)nsw;
    topo->nhosts = (uint32_t)nh;
    uint64_t port0 = 0;
    unsigned imax = (1u << topo->plan.index_bits) - 1;
    old = push_key(ld, "switches");
    for (size_t i = 0; i < nsw && rv == 0; i++) {
        json_object *s = json_object_array_get_idx(sws, i);
        size_t o2 = push_index(ld, i);
        fab_sw *sw = &topo->sw[i];
        const char *name, *tier;
        uint64_t plane, index, np = radix;
        if ((rv = check_keys(ld, s, swkeys)) != 0 ||
            (rv = get_str(ld, s, "name", true, &name)) != 0 ||
            (rv = get_uint(ld, s, "plane", 0, topo->planes - 1, true, &plane)) != 0 ||
            (rv = get_str(ld, s, "tier", true, &tier)) != 0 ||
            (rv = get_uint(ld, s, "index", 0, UINT16_MAX, true, &index)) != 0 ||
            (rv = get_uint(ld, s, "ports", 1, 65535, false, &np)) != 0) {
            goto next;
        }
        size_t o3 = push_key(ld, "name");
        rv = check_name(ld, name);
        pop(ld, o3);
        if (rv != 0 || (rv = fab_arena_add(topo, name, strlen(name), &sw->name)) != 0) {
            goto next;
        }
        o3 = push_key(ld, "tier");
        if (strcmp(tier, "t0") != 0 && strcmp(tier, "t1") != 0) {
            rv = fail(ld, "tier of '%s' must be \"t0\" or \"t1\", not \"%.20s\"", name, tier);
        }
        pop(ld, o3);
        o3 = push_key(ld, "index");
        if (rv == 0 && index > imax) {
            rv = fail(ld, "index %" PRIu64 " of '%s' overflows the %u-bit index field (at most %u)",
                      index, name, topo->plan.index_bits, imax);
        }
        pop(ld, o3);
        if (rv != 0) {
            goto next;
        }
        sw->plane = (uint8_t)plane;
        sw->tier = tier[1] == '0' ? FAB_TIER_T0 : FAB_TIER_T1;
        sw->index = (uint16_t)index;
        sw->nports = (uint16_t)np;
        sw->port0 = (uint32_t)port0;
        sw->ifspec = sw->tier;
        sw->sid_dev = sid_dev;
        port0 += np;
    next:
        pop(ld, o2);
    }
    pop(ld, old);
    if (rv != 0) {
        return rv;
    }
    old = push_key(ld, "hosts");
    for (size_t i = 0; i < nh && rv == 0; i++) {
        static const char *const hkeys[] = {"name", NULL};
        json_object *h = json_object_array_get_idx(hosts, i);
        size_t o2 = push_index(ld, i);
        const char *name;
        if ((rv = want_type(ld, h, json_type_object, "an object")) == 0 &&
            (rv = check_keys(ld, h, hkeys)) == 0 &&
            (rv = get_str(ld, h, "name", true, &name)) == 0) {
            size_t o3 = push_key(ld, "name");
            rv = check_name(ld, name);
            pop(ld, o3);
            if (rv == 0) {
                rv = fab_arena_add(topo, name, strlen(name), &topo->host_name[i]);
            }
        }
        pop(ld, o2);
    }
    pop(ld, old);
    if (rv != 0) {
        return rv;
    }
    set_plane_counts(ld);
    if ((rv = fab_index_build(topo, ld->err)) != 0) {
        return rv;
    }
    /* per-switch extras after the index, so that errors can name other switches */
    old = push_key(ld, "switches");
    for (size_t i = 0; i < nsw && rv == 0; i++) {
        size_t o2 = push_index(ld, i);
        rv = parse_switch_extras(ld, (uint32_t)i, json_object_array_get_idx(sws, i), 1);
        pop(ld, o2);
    }
    pop(ld, old);
    if (rv != 0 || (rv = parse_overrides(ld, root)) != 0) {
        return rv;
    }
    return parse_cables(ld, root);
}

static int load_json(loader *ld, json_object *root)
{
    static const char *const forms[] = {"parametric", "explicit"};
    fab_topo *topo = ld->topo;
    int rv;
    const char *form = NULL, *name = "fabric";
    uint64_t planes = 0;
    uint32_t sid_dev = 0;
    if ((rv = want_type(ld, root, json_type_object, "an object")) != 0 ||
        (rv = get_str(ld, root, "form", true, &form)) != 0) {
        return rv;
    }
    if (strcmp(form, forms[0]) != 0 && strcmp(form, forms[1]) != 0) {
        size_t old = push_key(ld, "form");
        rv = fail(ld, "form must be \"parametric\" or \"explicit\", not \"%.40s\"", form);
        pop(ld, old);
        return rv;
    }
    if ((rv = get_str(ld, root, "name", false, &name)) != 0) {
        return rv;
    }
    size_t old = push_key(ld, "name");
    rv = check_name(ld, name);
    pop(ld, old);
    if (rv != 0 || (rv = fab_arena_add(topo, name, strlen(name), &topo->name)) != 0 ||
        (rv = parse_addressing(ld, root)) != 0) {
        return rv;
    }
    unsigned pmax = 1u << topo->plan.plane_bits;
    if ((rv = get_uint(ld, root, "planes", 1, pmax, true, &planes)) != 0) {
        return rv;
    }
    topo->planes = (unsigned)planes;
    if ((rv = parse_interfaces(ld, root, &sid_dev)) != 0) {
        return rv;
    }
    topo->sid_dev = sid_dev;
    rv = form[0] == 'p' ? load_parametric(ld, root, sid_dev) : load_explicit(ld, root, sid_dev);
    if (rv != 0) {
        return rv;
    }
    return fab_topo_finish(topo, ld->err);
}

int fab_topo_load(const char *data, size_t datalen, fab_topo **ptopo, fab_error *perr)
{
    loader ld = {.err = perr};
    json_tokener *tok = NULL;
    json_object *root = NULL;
    int rv;
    snprintf(ld.path, sizeof(ld.path), "$");
    ld.pathlen = 1;
    if (datalen > INT32_MAX) {
        rv = fail(&ld, "the file is too large");
        goto out;
    }
    tok = json_tokener_new_ex(64);
    if (!tok) {
        rv = FAB_ERR_NOMEM;
        goto out;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, data, (int)datalen);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_success) {
        while (end < datalen && isspace((unsigned char)data[end])) {
            end++;
        }
    }
    if (jerr == json_tokener_continue) {
        rv = fail(&ld, "the JSON text ends early (after byte %zu)", datalen);
        goto out;
    }
    if (jerr != json_tokener_success || !root || end != datalen) {
        rv = fail(&ld, "JSON syntax error at byte %zu: %s", end,
                  jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                               : "text after the JSON value");
        goto out;
    }
    ld.topo = fab_topo_alloc();
    if (!ld.topo) {
        rv = FAB_ERR_NOMEM;
        goto out;
    }
    rv = load_json(&ld, root);
out:
    for (unsigned p = 0; p < FAB_MAX_PLANES; p++) {
        free(ld.missing_up[p]);
    }
    if (rv == 0) {
        *ptopo = ld.topo;
    } else {
        fab_topo_free(ld.topo);
    }
    json_object_put(root);
    if (tok) {
        json_tokener_free(tok);
    }
    return rv;
}

int fab_topo_load_file(const char *path, fab_topo **ptopo, fab_error *perr)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t len = 0, cap = 0;
    int rv = 0;
    if (!f) {
        fab_error_set(perr, "$", "cannot open %s: %s", path, strerror(errno));
        return FAB_ERR_IO;
    }
    for (;;) {
        if (len + 65536 > cap) {
            cap = cap ? cap * 2 : 1 << 20;
            char *n = realloc(data, cap);
            if (!n) {
                rv = FAB_ERR_NOMEM;
                goto out;
            }
            data = n;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(f)) {
        fab_error_set(perr, "$", "cannot read %s: %s", path, strerror(errno));
        rv = FAB_ERR_IO;
        goto out;
    }
    rv = fab_topo_load(data, len, ptopo, perr);
out:
    free(data);
    fclose(f);
    return rv;
}
