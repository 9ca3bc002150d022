/* SPDX-License-Identifier: MIT */
/* The scenario loader: SCENARIO.json and its reduced version, the defaults, and validation that
 * names every fault by its JSON path. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_scenario.h"
#include "util.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

/* The loader's state: the scenario being filled and the JSON path of the value in hand. */
typedef struct loader {
    sim_scenario *sc;
    const fab_topo *topo;
    char path[320];
    size_t pathlen;
    char *errmsg;
    size_t errmsglen;
    uint32_t nuplinks; /* T0-T1 cables present, counted on first use (FAB_NONE: not yet) */
} loader;

static const char *const traffic_kinds[] = {"flows",       "allreduce", "alltoall",
                                            "permutation", "incast",    NULL};
static const char *const fault_kinds[] = {"link_down", "link_up", "flap",     "loss",   "ev_loss",
                                          "blackhole", "reboot",  "nic_down", "nic_up", NULL};

void sim_scenario_defaults(sim_scenario *sc)
{
    *sc = (sim_scenario){
        .name = "scenario",
        .net =
            {
                .host = {.gbps = 100, .delay_ps = 500 * SIM_PS_PER_NS},
                .fabric = {.gbps = 100, .delay_ps = 500 * SIM_PS_PER_NS},
                .switch_latency_ps = 300 * SIM_PS_PER_NS,
                .buffer_bytes = 512 * KIB,
                .ctrl_buffer_bytes = 512 * KIB,
                .ecn_kmin = 40 * KIB,
                .ecn_kmax = 160 * KIB,
                .ecn_pmax = 0.2,
                .trim = true,
                .trim_bytes = 96 * KIB,
                .pfc = false,
                .pfc_xoff = 256 * KIB,
                .pfc_xon = 128 * KIB,
                .ecmp_converge_ps = 1000 * SIM_PS_PER_US,
            },
        .mrc =
            {
                .evs = 128,
                .active = 0,
                .min_active = 0,
                .mtu = 4096,
                .mpr = 8,
                .timeout = 8,
                .retry_linear = 7,
                .retry_exp = 7,
                .sack_every = 0,
                .ev_loss_pct = -1,
                .nscc = true,
            },
        .roce =
            {
                .mtu = 4096,
                .qps = 1,
                .dcqcn = false,
                .dc =
                    {
                        .g = 1.0 / 256,
                        .rate_ai_gbps = 5,
                        .rate_hai_gbps = 50,
                        .min_rate_gbps = 0.1,
                        .alpha_timer_ps = 55 * SIM_PS_PER_US,
                        .rate_timer_ps = 55 * SIM_PS_PER_US,
                        .byte_counter = 10 * MIB,
                        .fast_recovery = 5,
                        .cnp_interval_ps = 50 * SIM_PS_PER_US,
                    },
                /* 4.096 us x 2^14, a short setting of a RoCE NIC's local ACK timeout (NCCL's
                 * default, 2^20, is 4.3 s) */
                .timeout_ps = (4096ull << 14) * SIM_PS_PER_NS,
                .retry = 7,
                .ack_every = 16,
                .plane = -1,
            },
        .end_ps = 100000 * SIM_PS_PER_US,
        .sample_ps = 10 * SIM_PS_PER_US,
        .seed = 1,
    };
}

void sim_scenario_free(sim_scenario *sc)
{
    if (!sc) {
        return;
    }
    free(sc->description);
    free(sc->experiment);
    free(sc->paper);
    free(sc->topology_path);
    fab_topo_free(sc->topo);
    for (unsigned i = 0; i < sc->ntraffic; i++) {
        free(sc->traffic[i].hosts);
        free(sc->traffic[i].flows);
    }
    free(sc->traffic);
    for (unsigned i = 0; i < sc->nfaults; i++) {
        free(sc->faults[i].links);
    }
    free(sc->faults);
    free(sc);
}

/* ---- errors and paths ---- */

/* Messages quote the input, which need not be printable: keep them printable ASCII. */
static void printable(char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) {
            *s = '?';
        }
    }
}

static int fail(loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(loader *ld, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ld->errmsg && ld->errmsglen > 0) {
        snprintf(ld->errmsg, ld->errmsglen, "%s: %s", ld->path, msg);
        printable(ld->errmsg);
    }
    return -1;
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

/* The JSON text of |v| for a message, cut to a readable length. */
static const char *quote(json_object *v, char *buf, size_t buflen)
{
    const char *s =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t len = strlen(s);
    if (len < buflen) {
        memcpy(buf, s, len + 1);
    } else {
        snprintf(buf, buflen, "%.*s...", (int)(buflen - 4), s);
    }
    return buf;
}

#define QUOTE_MAX 48

/* "a, b, c" into |buf|. */
static const char *join(const char *const *names, char *buf, size_t buflen)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const char *const *n = names; *n; n++) {
        int w = snprintf(buf + len, buflen - len, "%s%s", n == names ? "" : ", ", *n);
        if (w < 0 || len + (size_t)w >= buflen) {
            break;
        }
        len += (size_t)w;
    }
    return buf;
}

/* Rejects keys not in |allowed| (NULL-terminated): a typo must not be silently ignored.
 * |what| names the object in the message ("net", "a link_down fault"). */
static int check_keys(loader *ld, json_object *obj, const char *const *allowed, const char *what)
{
    json_object_object_foreach(obj, key, val)
    {
        (void)val;
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++) {
            ok = strcmp(key, *a) == 0;
        }
        if (!ok) {
            char keys[400];
            push_key(ld, key);
            return fail(ld, "unknown key (%s takes %s)", what, join(allowed, keys, sizeof(keys)));
        }
    }
    return 0;
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

/* The value at |key| of |obj| in |*pv|: true when the key is there (its value may be null). */
static bool has(json_object *obj, const char *key, json_object **pv)
{
    return json_object_object_get_ex(obj, key, pv);
}

/* Fails at |key| when |obj| lacks it; |why| completes "missing (...)". */
static int require(loader *ld, json_object *obj, const char *key, const char *why)
{
    json_object *v;
    if (has(obj, key, &v)) {
        return 0;
    }
    push_key(ld, key);
    return fail(ld, "missing (%s)", why);
}

/* ---- values ---- */

/* An integer, or a number with no fraction as JSON Schema counts it: sign and magnitude. */
static bool integer_of(json_object *v, bool *pneg, uint64_t *pmag)
{
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        *pneg = i < 0;
        *pmag = i < 0 ? (uint64_t)(-(i + 1)) + 1 : json_object_get_uint64(v);
        return true;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (!isfinite(d) || d != floor(d) || fabs(d) >= 18446744073709551616.0) {
            return false;
        }
        *pneg = d < 0;
        *pmag = (uint64_t)fabs(d);
        return true;
    }
    return false;
}

static int val_uint(loader *ld, json_object *v, uint64_t min, uint64_t max, uint64_t *pval)
{
    char q[QUOTE_MAX];
    bool neg;
    uint64_t mag;
    if (!integer_of(v, &neg, &mag)) {
        return fail(ld, "must be an integer, not %s", quote(v, q, sizeof(q)));
    }
    if (neg || mag < min || mag > max) {
        return fail(ld, "must be an integer from %" PRIu64 " to %" PRIu64 ", not %s", min, max,
                    quote(v, q, sizeof(q)));
    }
    *pval = mag;
    return 0;
}

static int opt_u64(loader *ld, json_object *obj, const char *key, uint64_t min, uint64_t max,
                   uint64_t *pval)
{
    json_object *v;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    int rv = val_uint(ld, v, min, max, pval);
    pop(ld, old);
    return rv;
}

static int opt_uns(loader *ld, json_object *obj, const char *key, unsigned min, unsigned max,
                   unsigned *pval)
{
    uint64_t u = *pval;
    if (opt_u64(ld, obj, key, min, max, &u) != 0) {
        return -1;
    }
    *pval = (unsigned)u;
    return 0;
}

static int val_num(loader *ld, json_object *v, double min, double max, bool min_open, double *pval)
{
    char q[QUOTE_MAX];
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
        return fail(ld, "must be a number, not %s", quote(v, q, sizeof(q)));
    }
    double d = json_object_get_double(v);
    if (!isfinite(d) || d < min || d > max || (min_open && d <= min)) {
        return fail(ld, "must be a number %s %g %s %g, not %s", min_open ? "above" : "from", min,
                    min_open ? "and at most" : "to", max, quote(v, q, sizeof(q)));
    }
    *pval = d;
    return 0;
}

static int opt_num(loader *ld, json_object *obj, const char *key, double min, double max,
                   bool min_open, double *pval)
{
    json_object *v;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    int rv = val_num(ld, v, min, max, min_open, pval);
    pop(ld, old);
    return rv;
}

/* A rate in Gb/s: above 0, at most 1 Pb/s. */
static int opt_gbps(loader *ld, json_object *obj, const char *key, bool zero_ok, double *pval)
{
    return opt_num(ld, obj, key, 0, 1e6, !zero_ok, pval);
}

static int opt_bool(loader *ld, json_object *obj, const char *key, bool *pval)
{
    json_object *v;
    char q[QUOTE_MAX];
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    if (!json_object_is_type(v, json_type_boolean)) {
        return fail(ld, "must be true or false, not %s", quote(v, q, sizeof(q)));
    }
    *pval = json_object_get_boolean(v);
    pop(ld, old);
    return 0;
}

static int val_str(loader *ld, json_object *v, const char **ps)
{
    char q[QUOTE_MAX];
    if (!json_object_is_type(v, json_type_string)) {
        return fail(ld, "must be a string, not %s", quote(v, q, sizeof(q)));
    }
    *ps = json_object_get_string(v);
    return 0;
}

/* An optional string into a new heap copy (the old one freed). */
static int opt_strdup(loader *ld, json_object *obj, const char *key, char **ps)
{
    json_object *v;
    const char *s;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    if (val_str(ld, v, &s) != 0) {
        return -1;
    }
    free(*ps);
    *ps = util_xstrdup(s);
    pop(ld, old);
    return 0;
}

/* A name or label: 1 to |max| characters of A-Z a-z 0-9 . _ - (they name output files and
 * CSV columns). */
static int val_label(loader *ld, json_object *v, char *dest, size_t destlen)
{
    const char *s;
    char q[QUOTE_MAX];
    if (val_str(ld, v, &s) != 0) {
        return -1;
    }
    size_t len = strlen(s);
    bool ok = len > 0 && len < destlen &&
              strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
                        "wxyz0123456789._-") == len;
    if (!ok) {
        return fail(ld, "must be 1 to %zu characters of A-Z a-z 0-9 . _ -, not %s", destlen - 1,
                    quote(v, q, sizeof(q)));
    }
    memcpy(dest, s, len + 1);
    return 0;
}

static int opt_label(loader *ld, json_object *obj, const char *key, char *dest, size_t destlen)
{
    json_object *v;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    int rv = val_label(ld, v, dest, destlen);
    pop(ld, old);
    return rv;
}

/* One of |names| (NULL-terminated): its index in |*pidx|. */
static int val_enum(loader *ld, json_object *v, const char *const *names, unsigned *pidx)
{
    char q[QUOTE_MAX], list[200];
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        for (unsigned i = 0; names[i]; i++) {
            if (strcmp(s, names[i]) == 0) {
                *pidx = i;
                return 0;
            }
        }
    }
    return fail(ld, "must be one of %s, not %s", join(names, list, sizeof(list)),
                quote(v, q, sizeof(q)));
}

typedef struct unit {
    const char *name;
    uint64_t mult;
} unit;

/* Durations in ps and sizes in bytes; a bare number in a string counts in the first unit. */
static const unit duration_units[] = {{"ns", SIM_PS_PER_NS},          {"ps", 1},
                                      {"us", SIM_PS_PER_US},          {"ms", 1000 * SIM_PS_PER_US},
                                      {"s", 1000000 * SIM_PS_PER_US}, {NULL, 0}};
static const unit size_units[] = {
    {"B", 1},     {"KiB", 1ull << 10}, {"MiB", 1ull << 20},   {"GiB", 1ull << 30},
    {"KB", 1000}, {"MB", 1000000},     {"GB", 1000000000ull}, {NULL, 0},
};

enum { AMOUNT_OK = 0, AMOUNT_SYNTAX = -1, AMOUNT_NEGATIVE = -2, AMOUNT_TOO_LARGE = -3 };

/*
 * Parses DIGITS[.DIGITS][UNIT] into a whole count of the base unit, the fraction rounded to
 * the nearest one. The whole part is exact; the fraction is below one |unit|, which a double
 * holds to far better than half a base unit.
 */
static int parse_amount(const char *s, const unit *units, uint64_t *pval)
{
    const char *p = s;
    uint64_t whole = 0, frac = 0, den = 1;
    if (*p == '-' && p[1] >= '0' && p[1] <= '9') {
        return AMOUNT_NEGATIVE;
    }
    if (!(*p >= '0' && *p <= '9')) {
        return AMOUNT_SYNTAX;
    }
    bool overflow = false;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10) {
            overflow = true;
        } else {
            whole = whole * 10 + d;
        }
    }
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) {
            return AMOUNT_SYNTAX;
        }
        for (; *p >= '0' && *p <= '9'; p++) {
            if (den < 1000000000000000000ull) { /* digits past 10^-18 change nothing */
                frac = frac * 10 + (unsigned)(*p - '0');
                den *= 10;
            }
        }
    }
    const unit *u = *p == '\0' ? &units[0] : NULL;
    for (const unit *c = units; !u && c->name; c++) {
        if (strcmp(p, c->name) == 0) {
            u = c;
        }
    }
    if (!u) {
        return AMOUNT_SYNTAX;
    }
    if (overflow || whole > UINT64_MAX / u->mult) {
        return AMOUNT_TOO_LARGE;
    }
    uint64_t val = whole * u->mult;
    double part = round((double)frac / (double)den * (double)u->mult);
    uint64_t add = (uint64_t)part;
    if (val > UINT64_MAX - add) {
        return AMOUNT_TOO_LARGE;
    }
    *pval = val + add;
    return AMOUNT_OK;
}

/* A duration: a number of ns (fractions to the ps) or a string with a unit. Below SIM_NEVER. */
static int val_duration(loader *ld, json_object *v, bool positive, uint64_t *pps)
{
    char q[QUOTE_MAX];
    uint64_t ps = 0;
    int rv = AMOUNT_OK;
    if (json_object_is_type(v, json_type_int)) {
        bool neg;
        uint64_t ns;
        integer_of(v, &neg, &ns);
        if (neg) {
            rv = AMOUNT_NEGATIVE;
        } else if (ns > UINT64_MAX / SIM_PS_PER_NS) {
            rv = AMOUNT_TOO_LARGE;
        } else {
            ps = ns * SIM_PS_PER_NS;
        }
    } else if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (!isfinite(d)) {
            rv = AMOUNT_SYNTAX;
        } else if (d < 0) {
            rv = AMOUNT_NEGATIVE;
        } else if (d * (double)SIM_PS_PER_NS >= 18446744073709551616.0) {
            rv = AMOUNT_TOO_LARGE;
        } else {
            ps = (uint64_t)round(d * (double)SIM_PS_PER_NS);
        }
    } else if (json_object_is_type(v, json_type_string)) {
        rv = parse_amount(json_object_get_string(v), duration_units, &ps);
    } else {
        rv = AMOUNT_SYNTAX;
    }
    if (rv == AMOUNT_OK && ps == SIM_NEVER) {
        rv = AMOUNT_TOO_LARGE;
    }
    switch (rv) {
    case AMOUNT_SYNTAX:
        return fail(ld,
                    "not a duration: %s (a number of ns, or a string like \"1.5us\" with "
                    "unit ps, ns, us, ms or s)",
                    quote(v, q, sizeof(q)));
    case AMOUNT_NEGATIVE:
        return fail(ld, "must not be negative: %s", quote(v, q, sizeof(q)));
    case AMOUNT_TOO_LARGE:
        return fail(ld, "too long: %s", quote(v, q, sizeof(q)));
    default:
        break;
    }
    if (positive && ps == 0) {
        return fail(ld, "must be longer than 0, not %s", quote(v, q, sizeof(q)));
    }
    *pps = ps;
    return 0;
}

static int opt_duration(loader *ld, json_object *obj, const char *key, bool positive, uint64_t *pps)
{
    json_object *v;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    int rv = val_duration(ld, v, positive, pps);
    pop(ld, old);
    return rv;
}

/* A size: a whole number of bytes or a string with a unit, at least |min|, at most |max|. */
static int val_size(loader *ld, json_object *v, uint64_t min, uint64_t max, uint64_t *pval)
{
    char q[QUOTE_MAX];
    uint64_t bytes = 0;
    int rv = AMOUNT_OK;
    bool neg;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
        if (!integer_of(v, &neg, &bytes)) {
            double d = json_object_get_double(v);
            if (d < 0) {
                rv = AMOUNT_NEGATIVE;
            } else if (d >= 18446744073709551616.0) {
                rv = AMOUNT_TOO_LARGE;
            } else {
                return fail(ld, "not a whole number of bytes: %s", quote(v, q, sizeof(q)));
            }
        } else if (neg) {
            rv = AMOUNT_NEGATIVE;
        }
    } else if (json_object_is_type(v, json_type_string)) {
        rv = parse_amount(json_object_get_string(v), size_units, &bytes);
    } else {
        rv = AMOUNT_SYNTAX;
    }
    switch (rv) {
    case AMOUNT_SYNTAX:
        return fail(ld,
                    "not a size: %s (a number of bytes, or a string like \"64KiB\" with unit "
                    "B, KiB, MiB, GiB, KB, MB or GB)",
                    quote(v, q, sizeof(q)));
    case AMOUNT_NEGATIVE:
        return fail(ld, "must not be negative: %s", quote(v, q, sizeof(q)));
    case AMOUNT_TOO_LARGE:
        return fail(ld, "too large: %s", quote(v, q, sizeof(q)));
    default:
        break;
    }
    if (bytes < min || bytes > max) {
        return fail(ld, "must be from %" PRIu64 " to %" PRIu64 " bytes, not %s", min, max,
                    quote(v, q, sizeof(q)));
    }
    *pval = bytes;
    return 0;
}

static int opt_size(loader *ld, json_object *obj, const char *key, uint64_t min, uint64_t max,
                    uint64_t *pval)
{
    json_object *v;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    int rv = val_size(ld, v, min, max, pval);
    pop(ld, old);
    return rv;
}

static int opt_size32(loader *ld, json_object *obj, const char *key, uint64_t min, uint32_t *pval)
{
    uint64_t u = *pval;
    if (opt_size(ld, obj, key, min, UINT32_MAX, &u) != 0) {
        return -1;
    }
    *pval = (uint32_t)u;
    return 0;
}

/* A path MTU: a power of two from 256 to 8192. */
static int opt_mtu(loader *ld, json_object *obj, const char *key, uint32_t *pval)
{
    json_object *v;
    char q[QUOTE_MAX];
    bool neg;
    uint64_t mag;
    if (!has(obj, key, &v)) {
        return 0;
    }
    size_t old = push_key(ld, key);
    if (!integer_of(v, &neg, &mag) || neg || mag < 256 || mag > 8192 || (mag & (mag - 1)) != 0) {
        return fail(ld, "must be a power of two from 256 to 8192, not %s", quote(v, q, sizeof(q)));
    }
    *pval = (uint32_t)mag;
    pop(ld, old);
    return 0;
}

/* An optional sub-object in |*pobj| (NULL when absent). */
static int opt_object(loader *ld, json_object *obj, const char *key, json_object **pobj)
{
    json_object *v;
    char q[QUOTE_MAX];
    *pobj = NULL;
    if (!has(obj, key, &v)) {
        return 0;
    }
    if (!json_object_is_type(v, json_type_object)) {
        push_key(ld, key);
        return fail(ld, "must be an object, not %s", quote(v, q, sizeof(q)));
    }
    *pobj = v;
    return 0;
}

/* A host or switch named by the string at |key|, which must be there. */
static int get_host(loader *ld, json_object *obj, const char *key, uint32_t *phost)
{
    json_object *v;
    const char *s;
    if (require(ld, obj, key, "a host name") != 0) {
        return -1;
    }
    has(obj, key, &v);
    size_t old = push_key(ld, key);
    if (val_str(ld, v, &s) != 0) {
        return -1;
    }
    *phost = fab_host_find(ld->topo, s);
    if (*phost == FAB_NONE) {
        return fail(ld, "no host named %s", s);
    }
    pop(ld, old);
    return 0;
}

static int get_switch(loader *ld, json_object *obj, const char *key, uint32_t *psw)
{
    json_object *v;
    const char *s;
    if (require(ld, obj, key, "a switch name") != 0) {
        return -1;
    }
    has(obj, key, &v);
    size_t old = push_key(ld, key);
    if (val_str(ld, v, &s) != 0) {
        return -1;
    }
    *psw = fab_switch_find(ld->topo, s);
    if (*psw == FAB_NONE) {
        return fail(ld, "no switch named %s", s);
    }
    pop(ld, old);
    return 0;
}

/* A host port (= plane) at |key|, which must be there. */
static int get_port(loader *ld, json_object *obj, const char *key, unsigned *pport)
{
    json_object *v;
    uint64_t port;
    unsigned planes = fab_topo_planes(ld->topo);
    if (require(ld, obj, key, "a host port, which is its plane") != 0) {
        return -1;
    }
    has(obj, key, &v);
    size_t old = push_key(ld, key);
    if (val_uint(ld, v, 0, UINT32_MAX, &port) != 0) {
        return -1;
    }
    if (port >= planes) {
        return fail(ld, "no port %" PRIu64 ": the fabric has %u plane%s (ports 0 to %u)", port,
                    planes, planes == 1 ? "" : "s", planes - 1);
    }
    *pport = (unsigned)port;
    pop(ld, old);
    return 0;
}

/* ---- the document ---- */

/* JSON text into |*proot|, or a message with the line and column where json-c stopped. */
static int parse_json(loader *ld, const char *file, const char *data, size_t len,
                      json_object **proot)
{
    json_tokener *tok = NULL;
    json_object *root = NULL;
    int rv = -1;
    if (len > INT32_MAX) {
        fail(ld, "%s is too large", file);
        goto out;
    }
    tok = json_tokener_new_ex(64);
    if (!tok) {
        fail(ld, "out of memory");
        goto out;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, data, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_success) {
        while (end < len && data[end] != '\0' && strchr(" \t\r\n", data[end])) {
            end++;
        }
    }
    if (jerr == json_tokener_success && end == len) {
        *proot = root;
        root = NULL;
        rv = 0;
        goto out;
    }
    unsigned line = 1, col = 1;
    for (size_t i = 0; i < end && i < len; i++) {
        if (data[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    const char *why = jerr == json_tokener_continue  ? "the text ends early"
                      : jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                     : "text after the JSON value";
    fail(ld, "%s is not JSON: line %u, column %u: %s", file, line, col, why);
out:
    json_object_put(root);
    if (tok) {
        json_tokener_free(tok);
    }
    return rv;
}

/*
 * RFC 7386 JSON merge patch: applies |patch| (borrowed) to |target| (its reference is taken)
 * and returns the result's reference. Objects merge key by key, null deletes a key, anything
 * else replaces. Values taken from the patch are shared by reference, never modified.
 */
static json_object *merge_patch(json_object *target, json_object *patch)
{
    if (!json_object_is_type(patch, json_type_object)) {
        json_object_put(target);
        return json_object_get(patch);
    }
    if (!json_object_is_type(target, json_type_object)) {
        json_object_put(target);
        target = json_object_new_object();
    }
    json_object_object_foreach(patch, key, val)
    {
        json_object *cur = NULL;
        if (val == NULL) {
            json_object_object_del(target, key);
            continue;
        }
        if (has(target, key, &cur)) {
            json_object_get(cur);
        }
        json_object *merged = merge_patch(cur, val);
        if (merged == cur) {
            json_object_put(merged); /* merged in place: the reference taken above */
        } else {
            json_object_object_add(target, key, merged);
        }
    }
    return target;
}

static int parse_link_cfg(loader *ld, json_object *net, const char *key, sim_link_cfg *link)
{
    json_object *o;
    static const char *const keys[] = {"gbps", "delay", NULL};
    if (opt_object(ld, net, key, &o) != 0) {
        return -1;
    }
    if (!o) {
        return 0;
    }
    size_t old = push_key(ld, key);
    if (check_keys(ld, o, keys, "a link class") != 0 ||
        opt_gbps(ld, o, "gbps", false, &link->gbps) != 0 ||
        opt_duration(ld, o, "delay", false, &link->delay_ps) != 0) {
        return -1;
    }
    pop(ld, old);
    return 0;
}

/* |lo| <= |hi|, or a message at whichever of the two the document gave (|hi| if both). */
static int check_order(loader *ld, json_object *obj, const char *lokey, uint64_t lo,
                       const char *hikey, uint64_t hi)
{
    json_object *v;
    if (lo <= hi) {
        return 0;
    }
    if (has(obj, hikey, &v)) {
        push_key(ld, hikey);
        return fail(ld, "must not be below %s (%" PRIu64 " bytes)", lokey, lo);
    }
    push_key(ld, lokey);
    return fail(ld, "must not be above %s (%" PRIu64 " bytes, the default)", hikey, hi);
}

static int parse_net(loader *ld, json_object *root)
{
    static const char *const keys[] = {
        "host",    "fabric", "switch_latency", "buffer", "ctrl_buffer", "ecn", "trim",
        "trim_at", "pfc",    "ecmp_converge",  NULL};
    static const char *const ecn_keys[] = {"kmin", "kmax", "pmax", NULL};
    static const char *const pfc_keys[] = {"enabled", "xoff", "xon", NULL};
    sim_net_cfg *net = &ld->sc->net;
    json_object *o, *ecn, *pfc;
    if (opt_object(ld, root, "net", &o) != 0) {
        return -1;
    }
    if (!o) {
        return 0;
    }
    size_t old = push_key(ld, "net");
    if (check_keys(ld, o, keys, "net") != 0 || parse_link_cfg(ld, o, "host", &net->host) != 0 ||
        parse_link_cfg(ld, o, "fabric", &net->fabric) != 0 ||
        opt_duration(ld, o, "switch_latency", false, &net->switch_latency_ps) != 0 ||
        opt_size32(ld, o, "buffer", 1, &net->buffer_bytes) != 0 ||
        opt_size32(ld, o, "ctrl_buffer", 1, &net->ctrl_buffer_bytes) != 0 ||
        opt_bool(ld, o, "trim", &net->trim) != 0 ||
        opt_size32(ld, o, "trim_at", 1, &net->trim_bytes) != 0 ||
        opt_duration(ld, o, "ecmp_converge", false, &net->ecmp_converge_ps) != 0 ||
        opt_object(ld, o, "ecn", &ecn) != 0 || opt_object(ld, o, "pfc", &pfc) != 0) {
        return -1;
    }
    if (ecn) {
        size_t o2 = push_key(ld, "ecn");
        if (check_keys(ld, ecn, ecn_keys, "net.ecn") != 0 ||
            opt_size32(ld, ecn, "kmin", 0, &net->ecn_kmin) != 0 ||
            opt_size32(ld, ecn, "kmax", 0, &net->ecn_kmax) != 0 ||
            opt_num(ld, ecn, "pmax", 0, 1, false, &net->ecn_pmax) != 0 ||
            check_order(ld, ecn, "kmin", net->ecn_kmin, "kmax", net->ecn_kmax) != 0) {
            return -1;
        }
        pop(ld, o2);
    }
    if (pfc) {
        size_t o2 = push_key(ld, "pfc");
        if (check_keys(ld, pfc, pfc_keys, "net.pfc") != 0 ||
            opt_bool(ld, pfc, "enabled", &net->pfc) != 0 ||
            opt_size32(ld, pfc, "xoff", 1, &net->pfc_xoff) != 0 ||
            opt_size32(ld, pfc, "xon", 0, &net->pfc_xon) != 0 ||
            check_order(ld, pfc, "xon", net->pfc_xon, "xoff", net->pfc_xoff) != 0) {
            return -1;
        }
        pop(ld, o2);
    }
    pop(ld, old);
    return 0;
}

static int parse_mrc(loader *ld, json_object *root)
{
    static const char *const keys[] = {"evs",         "active",  "min_active", "mtu",
                                       "mpr",         "timeout", "retry",      "sack_every",
                                       "ev_loss_pct", "cc",      "base_rtt",   "target_delay",
                                       "max_cwnd",    "reorder", NULL};
    static const char *const ccs[] = {"nscc", "none", NULL};
    sim_mrc_cfg *m = &ld->sc->mrc;
    json_object *o, *v;
    char q[QUOTE_MAX];
    if (opt_object(ld, root, "mrc", &o) != 0) {
        return -1;
    }
    if (!o) {
        return 0;
    }
    size_t old = push_key(ld, "mrc");
    if (check_keys(ld, o, keys, "mrc") != 0 || opt_uns(ld, o, "evs", 1, 1024, &m->evs) != 0 ||
        opt_uns(ld, o, "active", 0, 1024, &m->active) != 0 ||
        opt_uns(ld, o, "min_active", 0, 1024, &m->min_active) != 0 ||
        opt_mtu(ld, o, "mtu", &m->mtu) != 0 || opt_uns(ld, o, "mpr", 1, 255, &m->mpr) != 0 ||
        opt_uns(ld, o, "timeout", 1, 24, &m->timeout) != 0 ||
        opt_uns(ld, o, "sack_every", 0, 64, &m->sack_every) != 0 ||
        opt_num(ld, o, "ev_loss_pct", -1, 100, false, &m->ev_loss_pct) != 0 ||
        opt_duration(ld, o, "base_rtt", false, &m->base_rtt_ps) != 0 ||
        opt_duration(ld, o, "target_delay", false, &m->target_ps) != 0 ||
        opt_size(ld, o, "max_cwnd", 0, UINT32_MAX, &m->max_cwnd) != 0 ||
        opt_duration(ld, o, "reorder", false, &m->reorder_ps) != 0) {
        return -1;
    }
    if (has(o, "cc", &v)) {
        unsigned k;
        size_t o2 = push_key(ld, "cc");
        if (val_enum(ld, v, ccs, &k) != 0) {
            return -1;
        }
        m->nscc = k == 0;
        pop(ld, o2);
    }
    if (has(o, "retry", &v)) {
        size_t o2 = push_key(ld, "retry");
        uint64_t lin, exp;
        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2) {
            return fail(ld, "must be [linear, exponential], two integers, not %s",
                        quote(v, q, sizeof(q)));
        }
        size_t o3 = push_index(ld, 0);
        if (val_uint(ld, json_object_array_get_idx(v, 0), 0, 7, &lin) != 0) {
            return -1;
        }
        pop(ld, o3);
        push_index(ld, 1);
        if (val_uint(ld, json_object_array_get_idx(v, 1), 0, 25, &exp) != 0) {
            return -1;
        }
        pop(ld, o2);
        m->retry_linear = (unsigned)lin;
        m->retry_exp = (unsigned)exp;
    }
    if (m->active > m->evs) {
        push_key(ld, has(o, "active", &v) ? "active" : "evs");
        return fail(ld, "active (%u) must not be above evs (%u)", m->active, m->evs);
    }
    unsigned cap = m->active ? m->active : m->evs;
    if (m->min_active > cap) {
        push_key(ld, "min_active");
        return fail(ld, "must not be above %s (%u)", m->active ? "active" : "evs", cap);
    }
    pop(ld, old);
    return 0;
}

static int parse_roce(loader *ld, json_object *root)
{
    static const char *const keys[] = {"mtu",       "qps",   "timeout", "retry",
                                       "ack_every", "plane", "dcqcn",   NULL};
    static const char *const dc_keys[] = {
        "enabled",     "g",          "rate_ai",      "rate_hai",      "min_rate",
        "alpha_timer", "rate_timer", "byte_counter", "fast_recovery", "cnp_interval",
        NULL};
    sim_roce_cfg *r = &ld->sc->roce;
    json_object *o, *dc, *v;
    if (opt_object(ld, root, "roce", &o) != 0) {
        return -1;
    }
    if (!o) {
        return 0;
    }
    size_t old = push_key(ld, "roce");
    if (check_keys(ld, o, keys, "roce") != 0 || opt_mtu(ld, o, "mtu", &r->mtu) != 0 ||
        opt_uns(ld, o, "qps", 1, 1024, &r->qps) != 0 ||
        opt_duration(ld, o, "timeout", true, &r->timeout_ps) != 0 ||
        opt_uns(ld, o, "retry", 0, 7, &r->retry) != 0 ||
        opt_uns(ld, o, "ack_every", 1, 65536, &r->ack_every) != 0 ||
        opt_object(ld, o, "dcqcn", &dc) != 0) {
        return -1;
    }
    if (has(o, "plane", &v)) {
        char q[QUOTE_MAX];
        bool neg;
        uint64_t mag;
        unsigned planes = fab_topo_planes(ld->topo);
        size_t o2 = push_key(ld, "plane");
        if (!integer_of(v, &neg, &mag) || (neg && mag != 1) || (!neg && mag >= planes)) {
            return fail(ld,
                        "must be -1 (every QP hashes onto a plane) or a plane from 0 to %u, "
                        "not %s",
                        planes - 1, quote(v, q, sizeof(q)));
        }
        r->plane = neg ? -1 : (int)mag;
        pop(ld, o2);
    }
    if (dc) {
        sim_dcqcn_cfg *d = &r->dc;
        size_t o2 = push_key(ld, "dcqcn");
        if (check_keys(ld, dc, dc_keys, "roce.dcqcn") != 0 ||
            opt_bool(ld, dc, "enabled", &r->dcqcn) != 0 ||
            opt_num(ld, dc, "g", 0, 1, true, &d->g) != 0 ||
            opt_gbps(ld, dc, "rate_ai", true, &d->rate_ai_gbps) != 0 ||
            opt_gbps(ld, dc, "rate_hai", true, &d->rate_hai_gbps) != 0 ||
            opt_gbps(ld, dc, "min_rate", false, &d->min_rate_gbps) != 0 ||
            opt_duration(ld, dc, "alpha_timer", true, &d->alpha_timer_ps) != 0 ||
            opt_duration(ld, dc, "rate_timer", true, &d->rate_timer_ps) != 0 ||
            opt_size(ld, dc, "byte_counter", 1, UINT64_MAX, &d->byte_counter) != 0 ||
            opt_uns(ld, dc, "fast_recovery", 0, 1000, &d->fast_recovery) != 0 ||
            opt_duration(ld, dc, "cnp_interval", false, &d->cnp_interval_ps) != 0) {
            return -1;
        }
        pop(ld, o2);
    }
    pop(ld, old);
    return 0;
}

/* A "kind" string of one of |kinds|, which must be there. */
static int get_kind(loader *ld, json_object *obj, const char *const *kinds, unsigned *pkind)
{
    json_object *v;
    char list[200], why[220];
    snprintf(why, sizeof(why), "one of %s", join(kinds, list, sizeof(list)));
    if (require(ld, obj, "kind", why) != 0) {
        return -1;
    }
    has(obj, "kind", &v);
    size_t old = push_key(ld, "kind");
    if (val_enum(ld, v, kinds, pkind) != 0) {
        return -1;
    }
    pop(ld, old);
    return 0;
}

/* An array at |key| (which must be there) with at least one element: its length. */
static int get_array(loader *ld, json_object *obj, const char *key, json_object **parr,
                     size_t *plen)
{
    char q[QUOTE_MAX];
    has(obj, key, parr);
    if (!json_object_is_type(*parr, json_type_array)) {
        push_key(ld, key);
        return fail(ld, "must be an array, not %s", quote(*parr, q, sizeof(q)));
    }
    *plen = json_object_array_length(*parr);
    if (*plen > UINT32_MAX) {
        push_key(ld, key);
        return fail(ld, "too many elements");
    }
    return 0;
}

/* The participants of |t|: "all", {"first": N} or a list of names (each at most once). */
static int parse_hosts(loader *ld, json_object *item, sim_traffic *t)
{
    static const char *const first_keys[] = {"first", NULL};
    static const char *const article[] = {"", "an all-reduce", "an all-to-all", "a permutation",
                                          "an incast"};
    uint32_t nh = fab_topo_nhosts(ld->topo);
    bool incast = t->kind == SIM_TRAFFIC_INCAST;
    uint8_t *seen = NULL;
    json_object *v = NULL;
    char q[QUOTE_MAX];
    int rv = -1;
    bool given = has(item, "hosts", &v);
    size_t old = push_key(ld, "hosts");
    if (!given || (json_object_is_type(v, json_type_string) &&
                   strcmp(json_object_get_string(v), "all") == 0)) {
        /* everyone; an incast's receiver is not among its senders */
        t->hosts = util_xcalloc(nh, sizeof(*t->hosts));
        for (uint32_t h = 0; h < nh; h++) {
            if (!incast || h != t->receiver) {
                t->hosts[t->nhosts++] = h;
            }
        }
    } else if (json_object_is_type(v, json_type_object)) {
        uint64_t n;
        if (check_keys(ld, v, first_keys, "hosts") != 0 ||
            require(ld, v, "first", "the number of hosts, from h0 up") != 0) {
            goto out;
        }
        push_key(ld, "first");
        if (val_uint(ld, json_object_object_get(v, "first"), 1, UINT32_MAX, &n) != 0) {
            goto out;
        }
        if (n > nh) {
            fail(ld, "the fabric has only %" PRIu32 " hosts", nh);
            goto out;
        }
        if (incast && t->receiver < n) {
            fail(ld, "the first %" PRIu64 " hosts include the receiver %s", n,
                 fab_host_name(ld->topo, t->receiver));
            goto out;
        }
        pop(ld, old);
        push_key(ld, "hosts");
        t->hosts = util_xcalloc(n, sizeof(*t->hosts));
        for (uint32_t h = 0; h < n; h++) {
            t->hosts[t->nhosts++] = h;
        }
    } else if (json_object_is_type(v, json_type_array)) {
        size_t n = json_object_array_length(v);
        seen = util_xcalloc(nh ? nh : 1, 1);
        t->hosts = util_xcalloc(n ? n : 1, sizeof(*t->hosts));
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            const char *s;
            size_t o2 = push_index(ld, i);
            if (val_str(ld, e, &s) != 0) {
                goto out;
            }
            uint32_t h = fab_host_find(ld->topo, s);
            if (h == FAB_NONE) {
                fail(ld, "no host named %s", s);
                goto out;
            }
            if (seen[h]) {
                fail(ld, "%s is named twice", s);
                goto out;
            }
            if (incast && h == t->receiver) {
                fail(ld, "%s is the receiver: an incast's receiver is not among its senders", s);
                goto out;
            }
            seen[h] = 1;
            t->hosts[t->nhosts++] = h;
            pop(ld, o2);
        }
    } else {
        fail(ld, "must be \"all\", {\"first\": N} or a list of host names, not %s",
             quote(v, q, sizeof(q)));
        goto out;
    }
    unsigned need = incast ? 1 : 2;
    if (t->nhosts < need) {
        fail(ld, "%s needs at least %u %s, not %u", article[t->kind], need,
             incast ? "sender" : "hosts", t->nhosts);
        goto out;
    }
    pop(ld, old);
    rv = 0;
out:
    free(seen);
    return rv;
}

static int parse_flows(loader *ld, json_object *item, sim_traffic *t)
{
    static const char *const keys[] = {"src", "dst", "bytes", "start", "label", NULL};
    json_object *arr;
    size_t n;
    if (require(ld, item, "flows", "a list of {\"src\", \"dst\", \"bytes\"}") != 0 ||
        get_array(ld, item, "flows", &arr, &n) != 0) {
        return -1;
    }
    size_t old = push_key(ld, "flows");
    if (n == 0) {
        return fail(ld, "must list at least one flow");
    }
    t->flows = util_xcalloc(n, sizeof(*t->flows));
    t->nflows = (unsigned)n;
    for (size_t i = 0; i < n; i++) {
        json_object *f = json_object_array_get_idx(arr, i);
        sim_flow_spec *fs = &t->flows[i];
        char q[QUOTE_MAX];
        size_t o2 = push_index(ld, i);
        if (!json_object_is_type(f, json_type_object)) {
            return fail(ld, "must be an object, not %s", quote(f, q, sizeof(q)));
        }
        snprintf(fs->label, sizeof(fs->label), "flow%zu", i);
        if (check_keys(ld, f, keys, "a flow") != 0 || get_host(ld, f, "src", &fs->src) != 0 ||
            get_host(ld, f, "dst", &fs->dst) != 0 ||
            require(ld, f, "bytes", "the flow's size") != 0 ||
            opt_size(ld, f, "bytes", 1, UINT64_MAX, &fs->bytes) != 0 ||
            opt_duration(ld, f, "start", false, &fs->start_ps) != 0 ||
            opt_label(ld, f, "label", fs->label, sizeof(fs->label)) != 0) {
            return -1;
        }
        if (fs->src == fs->dst) {
            push_key(ld, "dst");
            return fail(ld, "same host as src (%s)", fab_host_name(ld->topo, fs->src));
        }
        pop(ld, o2);
    }
    pop(ld, old);
    return 0;
}

static int parse_traffic_item(loader *ld, json_object *item, sim_traffic *t)
{
    static const char *const flows_keys[] = {"kind",  "transport", "label", "qps",
                                             "start", "flows",     NULL};
    static const char *const group_keys[] = {"kind",  "transport", "label", "qps",
                                             "start", "hosts",     "bytes", NULL};
    static const char *const allreduce_keys[] = {"kind",  "transport", "label",  "qps", "start",
                                                 "hosts", "bytes",     "slices", NULL};
    static const char *const incast_keys[] = {"kind",  "transport", "label",    "qps", "start",
                                              "hosts", "bytes",     "receiver", NULL};
    static const char *const transports[] = {"mrc", "roce", NULL};
    char q[QUOTE_MAX], what[48];
    unsigned kind, transport = SIM_MRC;
    json_object *v;
    if (!json_object_is_type(item, json_type_object)) {
        return fail(ld, "must be an object, not %s", quote(item, q, sizeof(q)));
    }
    if (get_kind(ld, item, traffic_kinds, &kind) != 0) {
        return -1;
    }
    t->kind = (sim_traffic_kind)kind;
    t->receiver = FAB_NONE;
    snprintf(t->label, sizeof(t->label), "%s", traffic_kinds[kind]);
    snprintf(what, sizeof(what), "%s traffic", traffic_kinds[kind]);
    const char *const *keys = t->kind == SIM_TRAFFIC_FLOWS       ? flows_keys
                              : t->kind == SIM_TRAFFIC_INCAST    ? incast_keys
                              : t->kind == SIM_TRAFFIC_ALLREDUCE ? allreduce_keys
                                                                 : group_keys;
    t->slices = 4;
    if (check_keys(ld, item, keys, what) != 0 ||
        opt_label(ld, item, "label", t->label, sizeof(t->label)) != 0 ||
        opt_uns(ld, item, "qps", 0, 1024, &t->qps) != 0 ||
        opt_uns(ld, item, "slices", 1, 64, &t->slices) != 0 ||
        opt_duration(ld, item, "start", false, &t->start_ps) != 0) {
        return -1;
    }
    if (has(item, "transport", &v)) {
        size_t old = push_key(ld, "transport");
        if (val_enum(ld, v, transports, &transport) != 0) {
            return -1;
        }
        pop(ld, old);
    }
    t->transport = (sim_transport)transport;
    if (t->kind == SIM_TRAFFIC_FLOWS) {
        return parse_flows(ld, item, t);
    }
    if (require(ld, item, "bytes", "the bytes of each flow") != 0 ||
        opt_size(ld, item, "bytes", 1, UINT64_MAX, &t->bytes) != 0) {
        return -1;
    }
    if (t->kind == SIM_TRAFFIC_INCAST && get_host(ld, item, "receiver", &t->receiver) != 0) {
        return -1;
    }
    return parse_hosts(ld, item, t);
}

static int parse_traffic(loader *ld, json_object *root)
{
    json_object *arr;
    size_t n;
    if (!has(root, "traffic", &arr)) {
        return 0;
    }
    if (get_array(ld, root, "traffic", &arr, &n) != 0) {
        return -1;
    }
    sim_scenario *sc = ld->sc;
    sc->traffic = util_xcalloc(n ? n : 1, sizeof(*sc->traffic));
    sc->ntraffic = (unsigned)n;
    size_t old = push_key(ld, "traffic");
    for (size_t i = 0; i < n; i++) {
        size_t o2 = push_index(ld, i);
        if (parse_traffic_item(ld, json_object_array_get_idx(arr, i), &sc->traffic[i]) != 0) {
            return -1;
        }
        pop(ld, o2);
    }
    pop(ld, old);
    return 0;
}

/* T0-T1 cables present in the fabric (the pool of random_links). */
static uint32_t count_uplinks(loader *ld)
{
    if (ld->nuplinks != FAB_NONE) {
        return ld->nuplinks;
    }
    uint32_t n = 0;
    for (uint32_t sw = 0; sw < fab_topo_nswitches(ld->topo); sw++) {
        fab_switch info;
        if (fab_switch_get(ld->topo, sw, &info) != 0 || info.tier != FAB_TIER_T0) {
            continue;
        }
        for (unsigned port = 0; port < info.nports; port++) {
            fab_peer peer;
            if (fab_switch_peer(ld->topo, sw, port, &peer) == 0 && peer.kind == FAB_PEER_SWITCH) {
                n++;
            }
        }
    }
    ld->nuplinks = n;
    return n;
}

/* One cable: {"a": SWITCH, "b": SWITCH} or {"host": HOST, "port": P}, with a direction. */
static int parse_cable(loader *ld, json_object *c, sim_link_ref *ref)
{
    static const char *const sw_keys[] = {"a", "b", "direction", NULL};
    static const char *const host_keys[] = {"host", "port", "direction", NULL};
    static const char *const sw_dirs[] = {"both", "a-to-b", "b-to-a", NULL};
    static const char *const host_dirs[] = {"both", "down", "up", NULL};
    char q[QUOTE_MAX];
    json_object *v;
    if (!json_object_is_type(c, json_type_object)) {
        return fail(ld,
                    "must be a cable, {\"a\": SWITCH, \"b\": SWITCH} or {\"host\": HOST, "
                    "\"port\": P}, not %s",
                    quote(c, q, sizeof(q)));
    }
    bool host_form = has(c, "host", &v) || has(c, "port", &v);
    if (host_form) {
        uint32_t host;
        if (check_keys(ld, c, host_keys, "a host cable") != 0 ||
            get_host(ld, c, "host", &host) != 0 || get_port(ld, c, "port", &ref->port) != 0) {
            return -1;
        }
        unsigned hport = ref->port;
        if (fab_host_attach(ld->topo, host, hport, &ref->sw, &ref->port) != 0) {
            return fail(ld, "%s port %u is not cabled", fab_host_name(ld->topo, host), hport);
        }
    } else {
        uint32_t b;
        fab_switch info;
        if (check_keys(ld, c, sw_keys, "a switch cable") != 0 ||
            get_switch(ld, c, "a", &ref->sw) != 0 || get_switch(ld, c, "b", &b) != 0) {
            return -1;
        }
        if (b == ref->sw) {
            push_key(ld, "b");
            return fail(ld, "the same switch as a");
        }
        fab_switch_get(ld->topo, ref->sw, &info);
        bool found = false;
        for (unsigned port = 0; port < info.nports && !found; port++) {
            fab_peer peer;
            if (fab_switch_peer(ld->topo, ref->sw, port, &peer) == 0 &&
                peer.kind == FAB_PEER_SWITCH && peer.id == b) {
                ref->port = port;
                found = true;
            }
        }
        if (!found) {
            fab_switch binfo;
            fab_switch_get(ld->topo, b, &binfo);
            return fail(ld, "no cable between %s and %s", info.name, binfo.name);
        }
    }
    /* sim_dir order: BOTH, OUT (leaving the stored switch end), IN; the stored end is a, or
     * the T0 of a host cable, so "a-to-b" and "down" are OUT */
    unsigned dir = 0;
    if (has(c, "direction", &v)) {
        size_t old = push_key(ld, "direction");
        if (val_enum(ld, v, host_form ? host_dirs : sw_dirs, &dir) != 0) {
            return -1;
        }
        pop(ld, old);
    }
    ref->dir = (sim_dir)dir;
    return 0;
}

static int parse_links(loader *ld, json_object *fo, sim_fault *f, const char *kindname)
{
    static const char *const all_dirs[] = {"both", "down", "up", NULL};
    char q[QUOTE_MAX];
    json_object *v;
    bool links = has(fo, "links", &v), random = has(fo, "random_links", &v);
    if (!links && !random) {
        push_key(ld, "links");
        return fail(ld,
                    f->kind == SIM_FAULT_LINK_UP
                        ? "missing (a link_up fault needs links, a list of cables)"
                        : "missing (a %s fault needs links, a list of cables, or "
                          "random_links, a count)",
                    kindname);
    }
    if (random) {
        uint64_t n;
        uint32_t pool = count_uplinks(ld);
        has(fo, "random_links", &v);
        size_t old = push_key(ld, "random_links");
        if (val_uint(ld, v, 1, UINT32_MAX, &n) != 0) {
            return -1;
        }
        if (n > pool) {
            return fail(ld, "the fabric has only %" PRIu32 " T0-T1 cables", pool);
        }
        f->random_links = (unsigned)n;
        pop(ld, old);
    }
    if (links) {
        has(fo, "links", &v);
        size_t old = push_key(ld, "links");
        const char *set = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        if (strcmp(set, "all") == 0 || strcmp(set, "hosts") == 0) {
            if (f->kind != SIM_FAULT_LOSS) {
                return fail(ld, "\"%s\" is only for loss faults", set);
            }
            f->all_links = true;
            f->hosts_only = set[0] == 'h';
        } else if (json_object_is_type(v, json_type_array)) {
            size_t n = json_object_array_length(v);
            if (n == 0) {
                return fail(ld, "must list at least one cable");
            }
            f->links = util_xcalloc(n, sizeof(*f->links));
            f->nlinks = (unsigned)n;
            for (size_t i = 0; i < n; i++) {
                size_t o2 = push_index(ld, i);
                if (parse_cable(ld, json_object_array_get_idx(v, i), &f->links[i]) != 0) {
                    return -1;
                }
                pop(ld, o2);
            }
        } else {
            return fail(ld, "must be a list of cables%s, not %s",
                        f->kind == SIM_FAULT_LOSS ? ", \"all\" or \"hosts\"" : "",
                        quote(v, q, sizeof(q)));
        }
        pop(ld, old);
    }
    if (has(fo, "direction", &v)) {
        unsigned dir;
        size_t old = push_key(ld, "direction");
        if (!f->all_links) {
            return fail(ld, "only with \"links\": \"all\" or \"hosts\" (a listed cable has its "
                            "own direction)");
        }
        if (val_enum(ld, v, all_dirs, &dir) != 0) {
            return -1;
        }
        f->dir = (sim_dir)dir;
        pop(ld, old);
    }
    return 0;
}

/* The EV of an ev_loss fault: a number, or {"plane", "t1", "salt"} under the fabric's plan. */
static int parse_ev(loader *ld, json_object *fo, sim_fault *f)
{
    static const char *const keys[] = {"plane", "t1", "salt", NULL};
    const fab_plan *plan = fab_topo_plan(ld->topo);
    json_object *v;
    char q[QUOTE_MAX];
    if (require(ld, fo, "ev", "an EV: a number or {\"plane\", \"t1\", \"salt\"}") != 0) {
        return -1;
    }
    has(fo, "ev", &v);
    size_t old = push_key(ld, "ev");
    if (json_object_is_type(v, json_type_object)) {
        uint64_t plane = 0, t1 = 0, salt = 0;
        unsigned planes = fab_topo_planes(ld->topo);
        unsigned salt_bits = 32u - plan->plane_bits - plan->index_bits;
        if (check_keys(ld, v, keys, "an EV") != 0 ||
            require(ld, v, "plane", "the EV's plane") != 0 ||
            require(ld, v, "t1", "the EV's T1 index") != 0 ||
            opt_u64(ld, v, "plane", 0, planes - 1, &plane) != 0) {
            return -1;
        }
        uint32_t nt1 = fab_topo_nt1(ld->topo, (unsigned)plane);
        if (nt1 == 0 || opt_u64(ld, v, "t1", 0, nt1 - 1, &t1) != 0 ||
            opt_u64(ld, v, "salt", 0, (1ull << salt_bits) - 1, &salt) != 0) {
            return nt1 == 0 ? fail(ld, "plane %" PRIu64 " has no T1", plane) : -1;
        }
        f->ev = fab_ev_make(plan, (unsigned)plane, (unsigned)t1, (uint32_t)salt);
    } else if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
        uint64_t ev;
        if (val_uint(ld, v, 0, UINT32_MAX, &ev) != 0) {
            return -1;
        }
        f->ev = (uint32_t)ev;
    } else {
        return fail(ld, "must be a number or {\"plane\", \"t1\", \"salt\"}, not %s",
                    quote(v, q, sizeof(q)));
    }
    fab_path path;
    if (fab_path_of_ev(ld->topo, f->host, f->dst, f->ev, &path) != 0) {
        return fail(ld, "EV 0x%08" PRIx32 " (plane %u, T1 %u) is no path from %s to %s", f->ev,
                    fab_ev_plane(plan, f->ev), fab_ev_t1(plan, f->ev),
                    fab_host_name(ld->topo, f->host), fab_host_name(ld->topo, f->dst));
    }
    pop(ld, old);
    return 0;
}

static int parse_fault(loader *ld, json_object *fo, sim_fault *f)
{
    static const char *const link_down_keys[] = {"kind",     "at",       "links", "random_links",
                                                 "duration", "interval", NULL};
    static const char *const link_up_keys[] = {"kind", "at", "links", "interval", NULL};
    static const char *const flap_keys[] = {
        "kind", "at", "links", "random_links", "duration", "period", "count", "interval", NULL};
    static const char *const loss_keys[] = {"kind", "at",        "links", "random_links",
                                            "rate", "direction", NULL};
    static const char *const ev_loss_keys[] = {"kind", "at", "src", "dst", "ev", "rate", NULL};
    static const char *const blackhole_keys[] = {"kind", "at", "switch", "duration", NULL};
    static const char *const reboot_keys[] = {"kind", "at", "switch", "duration", NULL};
    static const char *const nic_keys[] = {"kind", "at", "host", "port", NULL};
    static const char *const *const kind_keys[] = {
        link_down_keys, link_up_keys, flap_keys, loss_keys, ev_loss_keys,
        blackhole_keys, reboot_keys,  nic_keys,  nic_keys,
    };
    char q[QUOTE_MAX], what[48];
    unsigned kind;
    if (!json_object_is_type(fo, json_type_object)) {
        return fail(ld, "must be an object, not %s", quote(fo, q, sizeof(q)));
    }
    if (get_kind(ld, fo, fault_kinds, &kind) != 0) {
        return -1;
    }
    const char *kindname = fault_kinds[kind];
    f->kind = (sim_fault_kind)kind;
    f->sw = f->host = f->dst = FAB_NONE;
    snprintf(what, sizeof(what), "a %s fault", kindname);
    if (check_keys(ld, fo, kind_keys[kind], what) != 0 ||
        opt_duration(ld, fo, "at", false, &f->at_ps) != 0 ||
        opt_duration(ld, fo, "interval", false, &f->interval_ps) != 0) {
        return -1;
    }
    switch (f->kind) {
    case SIM_FAULT_LINK_DOWN:
    case SIM_FAULT_LINK_UP:
        if (parse_links(ld, fo, f, kindname) != 0 ||
            opt_duration(ld, fo, "duration", false, &f->duration_ps) != 0) {
            return -1;
        }
        break;
    case SIM_FAULT_FLAP:
        if (parse_links(ld, fo, f, kindname) != 0 ||
            require(ld, fo, "duration", "how long each flap keeps the cables down") != 0 ||
            opt_duration(ld, fo, "duration", true, &f->duration_ps) != 0 ||
            require(ld, fo, "period", "the time from one flap to the next") != 0 ||
            opt_duration(ld, fo, "period", true, &f->period_ps) != 0 ||
            opt_uns(ld, fo, "count", 0, UINT32_MAX, &f->count) != 0) {
            return -1;
        }
        if (f->period_ps <= f->duration_ps) {
            push_key(ld, "period");
            return fail(ld, "must be longer than duration");
        }
        break;
    case SIM_FAULT_LOSS:
        if (parse_links(ld, fo, f, kindname) != 0 ||
            require(ld, fo, "rate", "the drop probability per packet, 0 to 1") != 0 ||
            opt_num(ld, fo, "rate", 0, 1, false, &f->loss) != 0) {
            return -1;
        }
        break;
    case SIM_FAULT_EV_LOSS:
        if (get_host(ld, fo, "src", &f->host) != 0 || get_host(ld, fo, "dst", &f->dst) != 0) {
            return -1;
        }
        if (f->host == f->dst) {
            push_key(ld, "dst");
            return fail(ld, "same host as src (%s)", fab_host_name(ld->topo, f->host));
        }
        if (parse_ev(ld, fo, f) != 0 ||
            require(ld, fo, "rate", "the drop probability per packet, 0 to 1") != 0 ||
            opt_num(ld, fo, "rate", 0, 1, false, &f->loss) != 0) {
            return -1;
        }
        break;
    case SIM_FAULT_BLACKHOLE:
    case SIM_FAULT_REBOOT:
        if (get_switch(ld, fo, "switch", &f->sw) != 0) {
            return -1;
        }
        if (f->kind == SIM_FAULT_REBOOT &&
            require(ld, fo, "duration", "how long the switch stays down") != 0) {
            return -1;
        }
        if (opt_duration(ld, fo, "duration", f->kind == SIM_FAULT_REBOOT, &f->duration_ps) != 0) {
            return -1;
        }
        break;
    case SIM_FAULT_NIC_DOWN:
    case SIM_FAULT_NIC_UP: {
        uint32_t t0;
        unsigned t0port;
        if (get_host(ld, fo, "host", &f->host) != 0 || get_port(ld, fo, "port", &f->port) != 0) {
            return -1;
        }
        if (fab_host_attach(ld->topo, f->host, f->port, &t0, &t0port) != 0) {
            push_key(ld, "port");
            return fail(ld, "%s port %u is not cabled", fab_host_name(ld->topo, f->host), f->port);
        }
        break;
    }
    }
    return 0;
}

static int parse_faults(loader *ld, json_object *root)
{
    json_object *arr;
    size_t n;
    if (!has(root, "faults", &arr)) {
        return 0;
    }
    if (get_array(ld, root, "faults", &arr, &n) != 0) {
        return -1;
    }
    sim_scenario *sc = ld->sc;
    sc->faults = util_xcalloc(n ? n : 1, sizeof(*sc->faults));
    sc->nfaults = (unsigned)n;
    size_t old = push_key(ld, "faults");
    for (size_t i = 0; i < n; i++) {
        size_t o2 = push_index(ld, i);
        if (parse_fault(ld, json_object_array_get_idx(arr, i), &sc->faults[i]) != 0) {
            return -1;
        }
        pop(ld, o2);
    }
    pop(ld, old);
    return 0;
}

/* $.topology: a path relative to the scenario's folder, or the topology itself. */
static int parse_topology(loader *ld, json_object *root, const char *file)
{
    sim_scenario *sc = ld->sc;
    json_object *v;
    fab_error ferr = {{0}, {0}};
    char q[QUOTE_MAX];
    int rv;
    if (require(ld, root, "topology",
                "a topology file, relative to this one, or a topology "
                "object") != 0) {
        return -1;
    }
    has(root, "topology", &v);
    size_t old = push_key(ld, "topology");
    if (json_object_is_type(v, json_type_string)) {
        const char *rel = json_object_get_string(v);
        const char *slash = strrchr(file, '/');
        if (rel[0] == '\0') {
            return fail(ld, "must not be empty");
        }
        if (rel[0] == '/' || !slash) {
            sc->topology_path = util_xstrdup(rel);
        } else {
            size_t dirlen = (size_t)(slash - file) + 1, rellen = strlen(rel);
            sc->topology_path = util_xmalloc(dirlen + rellen + 1);
            memcpy(sc->topology_path, file, dirlen);
            memcpy(sc->topology_path + dirlen, rel, rellen + 1);
        }
        rv = fab_topo_load_file(sc->topology_path, &sc->topo, &ferr);
        if (rv == FAB_ERR_INVAL) {
            return fail(ld, "%s: %s: %s", sc->topology_path, ferr.path, ferr.msg);
        }
        if (rv != 0) {
            return fail(ld, "%s", rv == FAB_ERR_IO ? ferr.msg : fab_strerror(rv));
        }
    } else if (json_object_is_type(v, json_type_object)) {
        size_t len;
        const char *text = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &len);
        rv = fab_topo_load(text, len, &sc->topo, &ferr);
        if (rv == FAB_ERR_INVAL) {
            /* the topology's own path continues ours: $.topology.cables[3].b */
            snprintf(ld->path + ld->pathlen, sizeof(ld->path) - ld->pathlen, "%s", ferr.path + 1);
            return fail(ld, "%s", ferr.msg);
        }
        if (rv != 0) {
            return fail(ld, "%s", fab_strerror(rv));
        }
    } else {
        return fail(ld, "must be a file name or a topology object, not %s", quote(v, q, sizeof(q)));
    }
    ld->topo = sc->topo;
    pop(ld, old);
    return 0;
}

static int parse_root(loader *ld, json_object *root, const char *file)
{
    static const char *const keys[] = {"name", "description", "experiment", "paper",   "topology",
                                       "seed", "end",         "sample",     "net",     "mrc",
                                       "roce", "traffic",     "faults",     "reduced", NULL};
    sim_scenario *sc = ld->sc;
    json_object *v;
    char q[QUOTE_MAX];
    /* the name defaults to the file's, without folder and .json */
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    size_t blen = strlen(base);
    if (blen > 5 && strcmp(base + blen - 5, ".json") == 0) {
        blen -= 5;
    }
    if (blen > 0) {
        snprintf(sc->name, sizeof(sc->name), "%.*s", (int)blen, base);
    }
    if (check_keys(ld, root, keys, "a scenario") != 0 ||
        opt_label(ld, root, "name", sc->name, sizeof(sc->name)) != 0 ||
        opt_strdup(ld, root, "description", &sc->description) != 0 ||
        opt_strdup(ld, root, "experiment", &sc->experiment) != 0 ||
        opt_strdup(ld, root, "paper", &sc->paper) != 0 ||
        opt_u64(ld, root, "seed", 0, UINT64_MAX, &sc->seed) != 0 ||
        opt_duration(ld, root, "end", true, &sc->end_ps) != 0 ||
        opt_duration(ld, root, "sample", true, &sc->sample_ps) != 0) {
        return -1;
    }
    if (has(root, "reduced", &v) && !json_object_is_type(v, json_type_object)) {
        push_key(ld, "reduced");
        return fail(ld, "must be an object (a JSON merge patch), not %s", quote(v, q, sizeof(q)));
    }
    if (parse_topology(ld, root, file) != 0 || parse_net(ld, root) != 0 ||
        parse_mrc(ld, root) != 0 || parse_roce(ld, root) != 0 || parse_traffic(ld, root) != 0 ||
        parse_faults(ld, root) != 0) {
        return -1;
    }
    return 0;
}

int sim_scenario_load(const char *path, bool reduced, uint64_t seed, sim_scenario **psc,
                      char *errmsg, size_t errmsglen)
{
    loader ld = {.errmsg = errmsg, .errmsglen = errmsglen, .nuplinks = FAB_NONE};
    char *data = NULL;
    size_t len = 0;
    json_object *root = NULL, *patch = NULL;
    sim_scenario *sc = NULL;
    char q[QUOTE_MAX];
    int rv = -1;
    snprintf(ld.path, sizeof(ld.path), "$");
    ld.pathlen = 1;
    if (errmsg && errmsglen > 0) {
        errmsg[0] = '\0';
    }
    int err = util_read_file(path, &data, &len);
    if (err != 0) {
        fail(&ld, "cannot read %s: %s", path, strerror(-err));
        goto out;
    }
    if (parse_json(&ld, path, data, len, &root) != 0) {
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        fail(&ld, "a scenario is a JSON object, not %s", type_name(root));
        goto out;
    }
    if (reduced && has(root, "reduced", &patch)) {
        if (!json_object_is_type(patch, json_type_object)) {
            push_key(&ld, "reduced");
            fail(&ld, "must be an object (a JSON merge patch), not %s", quote(patch, q, sizeof(q)));
            goto out;
        }
        /* the patch leaves the document before it applies, so that it cannot patch itself */
        json_object_get(patch);
        json_object_object_del(root, "reduced");
        root = merge_patch(root, patch);
        json_object_put(patch);
        json_object_object_del(root, "reduced");
    }
    sc = util_xcalloc(1, sizeof(*sc));
    sim_scenario_defaults(sc);
    ld.sc = sc;
    if (parse_root(&ld, root, path) != 0) {
        goto out;
    }
    if (seed != UINT64_MAX) {
        sc->seed = seed;
    }
    *psc = sc;
    sc = NULL;
    rv = 0;
out:
    sim_scenario_free(sc);
    json_object_put(root);
    free(data);
    return rv;
}
