/* SPDX-License-Identifier: MIT */
/* A run's result files: summary.json, flows.csv, planes.csv, throughput.svg, utilization.svg. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_out.h"
#include "sim_svg.h"
#include "util.h"

/* throughput.svg draws at most this many flows (the ones with the most bytes) and their mean. */
#define OUT_MAX_PLOTTED 16

/* A display name: the flow's label, or "flow<id>"; "plane<k>". */
typedef struct out_name {
    char s[48];
} out_name;

/* What the file writers share. */
typedef struct out_ctx {
    const sim_results *res;
    const sim_series *ts; /* never NULL: an empty series stands in */
    size_t nrows;         /* rows of |ts| to write (0 when it has none) */
    out_name *flows;      /* res->nflows names */
    out_name *planes;     /* ts->nplanes names */
} out_ctx;

static void seterr(char *errmsg, size_t errmsglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void seterr(char *errmsg, size_t errmsglen, const char *fmt, ...)
{
    if (!errmsg || errmsglen == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, errmsglen, fmt, ap);
    va_end(ap);
}

/* A write with its result checked; the first failure sticks in |*perr| (0 or -errno). */
static void put(FILE *f, int *perr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(FILE *f, int *perr, const char *fmt, ...)
{
    if (*perr) {
        return;
    }
    errno = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(f, fmt, ap);
    va_end(ap);
    if (n < 0) {
        *perr = errno ? -errno : -EIO;
    }
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = util_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* mkdir -p. Returns 0 or -errno. */
static int make_dir(const char *dir)
{
    int rv = 0;
    char *p = util_xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') {
            continue;
        }
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rv = -errno;
            goto out;
        }
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        rv = -errno;
        goto out;
    }
    struct stat st;
    if (stat(p, &st) != 0) {
        rv = -errno;
    } else if (!S_ISDIR(st.st_mode)) {
        rv = -ENOTDIR;
    }
out:
    free(p);
    return rv;
}

/* The shortest of %.15g, %.16g and %.17g that reads back as |v|; non-finite values give 0. */
static void fmt_double(double v, char *dest, size_t destlen)
{
    if (!isfinite(v)) {
        v = 0.0;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(dest, destlen, "%.*g", prec, v);
        if (strtod(dest, NULL) == v) {
            break;
        }
    }
}

/* Time |ps| in microseconds, exactly: "10", "1.5", "0.000001". */
static void fmt_us(uint64_t ps, char *dest, size_t destlen)
{
    uint64_t frac = ps % SIM_PS_PER_US;
    int n = snprintf(dest, destlen, "%" PRIu64 ".%06" PRIu64, ps / (uint64_t)SIM_PS_PER_US, frac);
    if (n <= 0 || (size_t)n >= destlen) {
        return;
    }
    char *end = dest + n - 1;
    while (*end == '0') {
        *end-- = '\0';
    }
    if (*end == '.') {
        *end = '\0';
    }
}

static const char *transport_name(sim_transport t)
{
    return t == SIM_ROCE ? "roce" : "mrc";
}

/* ---- summary.json ---- */

/* Adds |val| to |obj| under |key|; returns -1 (and frees |val|) on failure. */
static int jadd(json_object *obj, const char *key, json_object *val)
{
    if (!val) {
        return -1;
    }
    if (json_object_object_add(obj, key, val) != 0) {
        json_object_put(val);
        return -1;
    }
    return 0;
}

static int jadd_u64(json_object *obj, const char *key, uint64_t v)
{
    return jadd(obj, key, json_object_new_uint64(v));
}

static int jadd_double(json_object *obj, const char *key, double v)
{
    char buf[40];
    fmt_double(v, buf, sizeof(buf));
    return jadd(obj, key, json_object_new_double_s(isfinite(v) ? v : 0.0, buf));
}

/* A string cleaned to valid UTF-8 (|maxlen| bounds fixed-size fields), or null for NULL. */
static int jadd_str(json_object *obj, const char *key, const char *s, size_t maxlen)
{
    if (!s) {
        return json_object_object_add(obj, key, NULL) == 0 ? 0 : -1;
    }
    size_t len = strnlen(s, maxlen);
    char *clean = util_xmalloc(len + 1);
    size_t n = sim_svg_clean(clean, len + 1, s, len);
    int rv = jadd(obj, key, json_object_new_string_len(clean, (int)n));
    free(clean);
    return rv;
}

static int jadd_null(json_object *obj, const char *key)
{
    return json_object_object_add(obj, key, NULL) == 0 ? 0 : -1;
}

/* Duration in whole nanoseconds from picoseconds, or null when not completed. */
static int jadd_duration(json_object *obj, const char *key, uint64_t start_ps, uint64_t end_ps)
{
    if (end_ps == 0 || end_ps < start_ps) {
        return jadd_null(obj, key);
    }
    return jadd_u64(obj, key, (end_ps - start_ps) / SIM_PS_PER_NS);
}

static json_object *json_flow(const sim_flow_result *fl, const out_name *name)
{
    json_object *o = json_object_new_object();
    if (!o) {
        return NULL;
    }
    int rv = jadd_u64(o, "id", fl->id);
    rv |= jadd_str(o, "label", name->s, sizeof(name->s));
    rv |= jadd_str(o, "transport", transport_name(fl->transport), SIZE_MAX);
    rv |= jadd_str(o, "src", fl->src_name, sizeof(fl->src_name));
    rv |= jadd_str(o, "dst", fl->dst_name, sizeof(fl->dst_name));
    rv |= jadd_u64(o, "bytes", fl->bytes);
    rv |= jadd_u64(o, "start_ns", fl->start_ps / SIM_PS_PER_NS);
    rv |= jadd_duration(o, "completion_ns", fl->start_ps, fl->end_ps);
    rv |= jadd_double(o, "goodput_gbps", fl->goodput_gbps);
    rv |= jadd_u64(o, "retransmissions", fl->retransmissions);
    rv |= jadd_u64(o, "timeouts", fl->timeouts);
    rv |= jadd(o, "failed", json_object_new_boolean(fl->failed));
    if (rv) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *json_allreduce(const sim_allreduce_result *ar)
{
    json_object *o = json_object_new_object();
    if (!o) {
        return NULL;
    }
    int rv = jadd_str(o, "transport", transport_name(ar->transport), SIZE_MAX);
    rv |= jadd_u64(o, "ranks", ar->ranks);
    rv |= jadd_u64(o, "bytes", ar->bytes);
    rv |= jadd_duration(o, "time_ns", ar->start_ps, ar->end_ps);
    rv |= jadd_double(o, "algbw_gbps", ar->algbw_gbps);
    rv |= jadd_double(o, "busbw_gbps", ar->busbw_gbps);
    if (rv) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *json_totals(const sim_totals *t)
{
    json_object *o = json_object_new_object();
    if (!o) {
        return NULL;
    }
    int rv = jadd_u64(o, "packets", t->packets);
    rv |= jadd_u64(o, "drops", t->drops);
    rv |= jadd_u64(o, "trims", t->trims);
    rv |= jadd_u64(o, "nacks", t->nacks);
    rv |= jadd_u64(o, "retransmissions", t->retransmissions);
    rv |= jadd_u64(o, "timeouts", t->timeouts);
    rv |= jadd_u64(o, "ev_state_changes", t->ev_state_changes);
    rv |= jadd_u64(o, "qp_failures", t->qp_failures);
    rv |= jadd_u64(o, "ecn_marks", t->ecn_marks);
    rv |= jadd_u64(o, "pfc_pauses", t->pfc_pauses);
    if (rv) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *json_sim(const sim_run_stats *s)
{
    json_object *o = json_object_new_object();
    if (!o) {
        return NULL;
    }
    int rv = jadd_u64(o, "events", s->events);
    rv |= jadd_double(o, "wall_s", s->wall_s);
    rv |= jadd_u64(o, "simulated_ns", s->simulated_ns);
    if (rv) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static int write_summary(FILE *f, const out_ctx *ctx)
{
    const sim_results *res = ctx->res;
    int rv = -ENOMEM;
    json_object *root = json_object_new_object();
    json_object *flows = json_object_new_array();
    json_object *ars = json_object_new_array();
    if (!root || !flows || !ars) {
        json_object_put(flows);
        json_object_put(ars);
        goto out;
    }
    for (unsigned i = 0; i < res->nflows; i++) {
        json_object *fl = json_flow(&res->flows[i], &ctx->flows[i]);
        if (!fl || json_object_array_add(flows, fl) != 0) {
            json_object_put(fl);
            json_object_put(flows);
            json_object_put(ars);
            goto out;
        }
    }
    for (unsigned i = 0; i < res->nallreduce; i++) {
        json_object *ar = json_allreduce(&res->allreduce[i]);
        if (!ar || json_object_array_add(ars, ar) != 0) {
            json_object_put(ar);
            json_object_put(flows);
            json_object_put(ars);
            goto out;
        }
    }
    int bad = jadd_str(root, "scenario", res->scenario ? res->scenario : "", SIZE_MAX);
    bad |= jadd_str(root, "experiment", res->experiment, SIZE_MAX);
    bad |= jadd_str(root, "paper", res->paper, SIZE_MAX);
    bad |= jadd_u64(root, "seed", res->seed);
    bad |= jadd(root, "reduced", json_object_new_boolean(res->reduced));
    bad |= jadd(root, "flows", flows);
    bad |= jadd(root, "allreduce", ars);
    bad |= jadd(root, "totals", json_totals(&res->totals));
    bad |= jadd(root, "sim", json_sim(&res->sim));
    if (bad) {
        goto out;
    }
    int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
    const char *text = json_object_to_json_string_ext(root, flags);
    if (!text) {
        goto out;
    }
    rv = 0;
    put(f, &rv, "%s\n", text);
out:
    json_object_put(root);
    return rv;
}

/* ---- CSV ---- */

/* One CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break. */
static void put_csv_field(FILE *f, int *perr, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        put(f, perr, "%s", s);
        return;
    }
    put(f, perr, "\"");
    for (const char *p = s; *p; p++) {
        put(f, perr, "%s%c", *p == '"' ? "\"" : "", *p);
    }
    put(f, perr, "\"");
}

/* time_us, then one column per name; row r holds values[r * ncols + c]. */
static int write_csv(FILE *f, const out_ctx *ctx, const out_name *names, size_t ncols,
                     const double *values)
{
    int rv = 0;
    put(f, &rv, "time_us");
    for (size_t c = 0; c < ncols; c++) {
        put(f, &rv, ",");
        put_csv_field(f, &rv, names[c].s);
    }
    put(f, &rv, "\n");
    for (size_t r = 0; r < ctx->nrows && !rv; r++) {
        char t[32];
        fmt_us((uint64_t)(r + 1) * ctx->ts->interval_ps, t, sizeof(t));
        put(f, &rv, "%s", t);
        for (size_t c = 0; c < ncols; c++) {
            double v = values[r * ncols + c];
            put(f, &rv, ",%.9g", isfinite(v) ? v : 0.0);
        }
        put(f, &rv, "\n");
    }
    return rv;
}

static int write_flows_csv(FILE *f, const out_ctx *ctx)
{
    return write_csv(f, ctx, ctx->flows, ctx->res->nflows, ctx->ts->flow_gbps);
}

static int write_planes_csv(FILE *f, const out_ctx *ctx)
{
    return write_csv(f, ctx, ctx->planes, ctx->ts->nplanes, ctx->ts->plane_util);
}

/* ---- SVG ---- */

typedef struct by_bytes {
    uint64_t bytes;
    unsigned idx;
} by_bytes;

/* Most bytes first, then the order of the flows. */
static int cmp_by_bytes(const void *a, const void *b)
{
    const by_bytes *x = a, *y = b;
    if (x->bytes != y->bytes) {
        return x->bytes > y->bytes ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static int write_throughput_svg(FILE *f, const out_ctx *ctx)
{
    const sim_results *res = ctx->res;
    unsigned n = res->nflows, nplot = n > OUT_MAX_PLOTTED ? OUT_MAX_PLOTTED : n;
    size_t nrows = ctx->nrows;
    sim_svg_series *series = util_xcalloc(nplot + 1, sizeof(*series));
    unsigned *pick = util_xcalloc(nplot + 1, sizeof(*pick));
    double *mean = NULL;
    char title[160], mean_name[64];

    if (n > OUT_MAX_PLOTTED) {
        by_bytes *order = util_xcalloc(n, sizeof(*order));
        for (unsigned i = 0; i < n; i++) {
            order[i] = (by_bytes){.bytes = res->flows[i].bytes, .idx = i};
        }
        qsort(order, n, sizeof(*order), cmp_by_bytes);
        for (unsigned i = 0; i < nplot; i++) {
            pick[i] = order[i].idx;
        }
        free(order);
        qsort(pick, nplot, sizeof(*pick), cmp_unsigned);
    } else {
        for (unsigned i = 0; i < nplot; i++) {
            pick[i] = i;
        }
    }
    for (unsigned i = 0; i < nplot; i++) {
        series[i] = (sim_svg_series){.name = ctx->flows[pick[i]].s,
                                     .y = nrows ? ctx->ts->flow_gbps + pick[i] : NULL,
                                     .stride = n};
    }
    size_t nseries = nplot;
    snprintf(title, sizeof(title), "%.64s: goodput per flow", res->scenario ? res->scenario : "");
    if (n > OUT_MAX_PLOTTED) {
        mean = util_xcalloc(nrows ? nrows : 1, sizeof(*mean));
        for (size_t r = 0; r < nrows; r++) {
            double sum = 0;
            for (unsigned i = 0; i < n; i++) {
                double v = ctx->ts->flow_gbps[r * n + i];
                sum += isfinite(v) ? v : 0.0;
            }
            mean[r] = sum / n;
        }
        snprintf(mean_name, sizeof(mean_name), "mean of all %u flows", n);
        series[nseries++] =
            (sim_svg_series){.name = mean_name, .y = mean, .stride = 1, .bold = true};
        snprintf(title, sizeof(title), "%.64s: goodput of the %u largest of %u flows",
                 res->scenario ? res->scenario : "", nplot, n);
    }
    sim_svg_chart chart = {
        .title = title,
        .y_label = "goodput (Gb/s)",
        .step_ps = ctx->ts->interval_ps,
        .npoints = nrows,
        .series = series,
        .nseries = nseries,
        .empty = "no flows",
    };
    int rv = sim_svg_write_chart(f, &chart);
    free(mean);
    free(pick);
    free(series);
    return rv;
}

static int write_utilization_svg(FILE *f, const out_ctx *ctx)
{
    unsigned np = ctx->ts->nplanes;
    sim_svg_series *series = util_xcalloc(np ? np : 1, sizeof(*series));
    char title[160];
    for (unsigned k = 0; k < np; k++) {
        series[k] = (sim_svg_series){.name = ctx->planes[k].s,
                                     .y = ctx->nrows ? ctx->ts->plane_util + k : NULL,
                                     .stride = np};
    }
    snprintf(title, sizeof(title), "%.64s: utilization per plane",
             ctx->res->scenario ? ctx->res->scenario : "");
    sim_svg_chart chart = {
        .title = title,
        .y_label = "utilization (%)",
        .y_scale = 100.0,
        .y_max = 100.0,
        .step_ps = ctx->ts->interval_ps,
        .npoints = ctx->nrows,
        .series = series,
        .nseries = np,
        .empty = "no planes",
    };
    int rv = sim_svg_write_chart(f, &chart);
    free(series);
    return rv;
}

/* ---- the files ---- */

/* Writes |dir|/|name| under a temporary name, syncs it and renames it into place. */
static int write_file(const char *dir, const char *name, int (*fn)(FILE *, const out_ctx *),
                      const out_ctx *ctx, char *errmsg, size_t errmsglen)
{
    char *path = path_join(dir, name);
    util_afile af;
    int rv = util_afile_open(&af, path);
    if (rv) {
        seterr(errmsg, errmsglen, "cannot create %s: %s", path, strerror(-rv));
        goto out;
    }
    rv = fn(af.f, ctx);
    if (rv == 0 && (fflush(af.f) != 0 || fsync(fileno(af.f)) != 0)) {
        rv = -errno;
    }
    if (rv) {
        util_afile_abort(&af);
        seterr(errmsg, errmsglen, "cannot write %s: %s", path, strerror(-rv));
        goto out;
    }
    rv = util_afile_commit(&af);
    if (rv) {
        seterr(errmsg, errmsglen, "cannot write %s: %s", path, strerror(-rv));
    }
out:
    free(path);
    return rv ? -1 : 0;
}

/* Refuses results and series that do not fit together; returns 0 or -1 with |errmsg|. */
static int check_input(const sim_results *res, const sim_series *ts, char *errmsg, size_t errmsglen)
{
    if (!res) {
        seterr(errmsg, errmsglen, "there are no results to write");
        return -1;
    }
    if ((res->nflows && !res->flows) || (res->nallreduce && !res->allreduce)) {
        seterr(errmsg, errmsglen, "the results count %u flows and %u all-reduces but lack them",
               res->nflows, res->nallreduce);
        return -1;
    }
    for (unsigned i = 0; i < res->nflows; i++) {
        if (res->flows[i].transport != SIM_MRC && res->flows[i].transport != SIM_ROCE) {
            seterr(errmsg, errmsglen, "flow %u has an unknown transport (%d)", res->flows[i].id,
                   (int)res->flows[i].transport);
            return -1;
        }
    }
    for (unsigned i = 0; i < res->nallreduce; i++) {
        if (res->allreduce[i].transport != SIM_MRC && res->allreduce[i].transport != SIM_ROCE) {
            seterr(errmsg, errmsglen, "all-reduce %u has an unknown transport (%d)", i,
                   (int)res->allreduce[i].transport);
            return -1;
        }
    }
    if (!ts || ts->nrows == 0) {
        return 0;
    }
    if (ts->nflows != res->nflows) {
        seterr(errmsg, errmsglen, "the time series has %u flow columns but the results %u flows",
               ts->nflows, res->nflows);
        return -1;
    }
    if ((ts->nflows && !ts->flow_gbps) || (ts->nplanes && !ts->plane_util)) {
        seterr(errmsg, errmsglen, "the time series has %zu rows but lacks their values", ts->nrows);
        return -1;
    }
    size_t cols = ts->nflows > ts->nplanes ? ts->nflows : ts->nplanes;
    if (cols && ts->nrows > SIZE_MAX / sizeof(double) / cols) {
        seterr(errmsg, errmsglen, "the time series is too long (%zu rows)", ts->nrows);
        return -1;
    }
    if (ts->interval_ps == 0) {
        seterr(errmsg, errmsglen, "the time series has %zu rows but no interval", ts->nrows);
        return -1;
    }
    return 0;
}

int sim_out_write(const char *dir, const sim_results *res, const sim_series *ts, char *errmsg,
                  size_t errmsglen)
{
    int rv = -1;
    const sim_series none = {0};
    out_ctx ctx = {0};
    if (!dir || !*dir) {
        seterr(errmsg, errmsglen, "no output folder was given");
        return -1;
    }
    if (check_input(res, ts, errmsg, errmsglen) != 0) {
        return -1;
    }
    int err = make_dir(dir);
    if (err) {
        seterr(errmsg, errmsglen, "cannot create the folder %s: %s", dir, strerror(-err));
        return -1;
    }

    ctx.res = res;
    ctx.ts = ts ? ts : &none;
    ctx.nrows = ctx.ts->nrows;
    ctx.flows = util_xcalloc(res->nflows ? res->nflows : 1, sizeof(*ctx.flows));
    for (unsigned i = 0; i < res->nflows; i++) {
        const sim_flow_result *fl = &res->flows[i];
        if (sim_svg_clean(ctx.flows[i].s, sizeof(ctx.flows[i].s), fl->label, sizeof(fl->label)) ==
            0) {
            snprintf(ctx.flows[i].s, sizeof(ctx.flows[i].s), "flow%" PRIu32, fl->id);
        }
    }
    ctx.planes = util_xcalloc(ctx.ts->nplanes ? ctx.ts->nplanes : 1, sizeof(*ctx.planes));
    for (unsigned k = 0; k < ctx.ts->nplanes; k++) {
        snprintf(ctx.planes[k].s, sizeof(ctx.planes[k].s), "plane%u", k);
    }

    if (write_file(dir, "summary.json", write_summary, &ctx, errmsg, errmsglen) != 0 ||
        write_file(dir, "flows.csv", write_flows_csv, &ctx, errmsg, errmsglen) != 0 ||
        write_file(dir, "planes.csv", write_planes_csv, &ctx, errmsg, errmsglen) != 0 ||
        write_file(dir, "throughput.svg", write_throughput_svg, &ctx, errmsg, errmsglen) != 0 ||
        write_file(dir, "utilization.svg", write_utilization_svg, &ctx, errmsg, errmsglen) != 0) {
        goto out;
    }
    rv = 0;
out:
    free(ctx.flows);
    free(ctx.planes);
    return rv;
}
