/* SPDX-License-Identifier: MIT */
/* mrc-sim report: the comparison table of several runs, read from their summary.json files. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_out.h"
#include "sim_svg.h"
#include "util.h"

/*
 * The table, in Markdown. Its columns are stable (sim/experiments/README.md pastes it):
 *
 *   experiment       $.experiment, or $.scenario when it has none; rows of one experiment are
 *                    adjacent, experiments in the order they first appear in the folders given
 *   transport        the transports of the run's flows and all-reduces: "MRC", "RoCE" or
 *                    "MRC + RoCE" ("—" without traffic)
 *   result           ours: for a run with all-reduces, "busbw B Gb/s in T" per all-reduce
 *                    (prefixed "MRC: "/"RoCE: " when there are several; "all-reduce not
 *                    completed"); otherwise "goodput min/median/max A / B / C Gb/s over N flows"
 *                    (", K not completed" when some were not, their goodput counting as 0).
 *                    Then, for each flow labelled "victim", "victim V Gb/s" (or "victim not
 *                    completed"), after "; ". "no traffic" when there is nothing to report.
 *   retransmissions  $.totals.retransmissions
 *   timeouts         $.totals.timeouts
 *   QP failures      $.totals.qp_failures
 *   paper            $.paper, the paper's result ("—" when null)
 *   scenario         $.scenario, with " (reduced)" for a --reduced run
 *
 * Text cells are cleaned to valid UTF-8 on one line, with "|", "<" and ">" escaped by a
 * backslash.
 */

#define REPORT_HEADER                                                                              \
    "| experiment | transport | result | retransmissions | timeouts | QP failures | paper | "      \
    "scenario |\n"                                                                                 \
    "|---|---|---|---:|---:|---:|---|---|\n"

/* One run's row, every cell already formatted. */
typedef struct report_row {
    char *experiment;
    char *transport;
    char *result;
    uint64_t retransmissions, timeouts, qp_failures;
    char *paper;
    char *scenario;
    bool done; /* written */
} report_row;

/* A growing string. */
typedef struct report_buf {
    char *s;
    size_t len, cap;
} report_buf;

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

static void buf_add(report_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_add(report_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) {
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = b->len + (size_t)n + 1 + 128;
        b->s = util_xrealloc(b->s, b->cap);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The cell text of |s|: valid UTF-8 on one line (sim_svg_clean turns line breaks into '?'),
 * with "|" escaped and "<", ">" too, so that no cell is taken for HTML; a new heap string. */
static char *cell(const char *s)
{
    report_buf b = {0};
    char *clean = sim_svg_clean_dup(s ? s : "");
    buf_add(&b, "%s", "");
    for (const char *p = clean; *p; p++) {
        if (*p == '|' || *p == '<' || *p == '>') {
            buf_add(&b, "\\%c", *p);
        } else {
            buf_add(&b, "%c", *p);
        }
    }
    free(clean);
    return b.s;
}

/* Gb/s with three significant digits below 10, one decimal above. */
static void fmt_gbps(double v, char *dest, size_t destlen)
{
    if (!isfinite(v)) {
        v = 0;
    }
    if (v == 0) {
        snprintf(dest, destlen, "0");
    } else if (v < 10) {
        snprintf(dest, destlen, "%.3g", v);
    } else {
        snprintf(dest, destlen, "%.1f", v);
    }
}

/* A duration with a unit and three significant digits. */
static void fmt_time(double ns, char *dest, size_t destlen)
{
    const char *unit = "ns";
    if (ns >= 1e9) {
        ns /= 1e9;
        unit = "s";
    } else if (ns >= 1e6) {
        ns /= 1e6;
        unit = "ms";
    } else if (ns >= 1e3) {
        ns /= 1e3;
        unit = "\xc2\xb5s";
    }
    int dec = ns < 10 ? 2 : ns < 100 ? 1 : 0;
    snprintf(dest, destlen, "%.*f %s", dec, ns, unit);
}

/* ---- reading summary.json ---- */

/* |key| of |obj| if it has type |type| (a double also accepts an integer). */
static json_object *get(json_object *obj, const char *key, json_type type)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || !v) {
        return NULL;
    }
    json_type t = json_object_get_type(v);
    if (t == type || (type == json_type_double && t == json_type_int)) {
        return v;
    }
    return NULL;
}

/* True if |key| is absent or null. */
static bool is_null(json_object *obj, const char *key)
{
    json_object *v = NULL;
    return !json_object_object_get_ex(obj, key, &v) || !v;
}

/* A transport name: 1 MRC, 2 RoCE, 0 neither. */
static unsigned transport_bit(json_object *obj)
{
    json_object *t = get(obj, "transport", json_type_string);
    const char *s = t ? json_object_get_string(t) : "";
    return strcmp(s, "mrc") == 0 ? 1u : strcmp(s, "roce") == 0 ? 2u : 0u;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The result cell of the all-reduces |ars|; returns -1 with |errmsg| on a bad element. */
static int result_allreduce(json_object *ars, report_buf *b, const char *dir, char *errmsg,
                            size_t errmsglen)
{
    size_t n = json_object_array_length(ars);
    for (size_t i = 0; i < n; i++) {
        json_object *ar = json_object_array_get_idx(ars, i);
        json_object *bus = ar ? get(ar, "busbw_gbps", json_type_double) : NULL;
        json_object *time = ar ? get(ar, "time_ns", json_type_double) : NULL;
        unsigned t = ar ? transport_bit(ar) : 0;
        if (!bus || t == 0 || (!time && !is_null(ar, "time_ns"))) {
            seterr(errmsg, errmsglen,
                   "%s/summary.json: allreduce[%zu] lacks a transport, busbw_gbps or time_ns", dir,
                   i);
            return -1;
        }
        if (i > 0) {
            buf_add(b, "; ");
        }
        if (n > 1) {
            buf_add(b, "%s: ", t == 1 ? "MRC" : "RoCE");
        }
        if (!time) {
            buf_add(b, "all-reduce not completed");
            continue;
        }
        char g[32], d[32];
        fmt_gbps(json_object_get_double(bus), g, sizeof(g));
        fmt_time(json_object_get_double(time), d, sizeof(d));
        buf_add(b, "busbw %s Gb/s in %s", g, d);
    }
    return 0;
}

/* The result cell of the flows |flows| (the all-reduces already written unless |summary|). */
static int result_flows(json_object *flows, bool summary, report_buf *b, const char *dir,
                        char *errmsg, size_t errmsglen)
{
    size_t n = json_object_array_length(flows), incomplete = 0;
    double *gp = util_xcalloc(n ? n : 1, sizeof(*gp));
    int rv = -1;
    for (size_t i = 0; i < n; i++) {
        json_object *fl = json_object_array_get_idx(flows, i);
        json_object *g = fl ? get(fl, "goodput_gbps", json_type_double) : NULL;
        json_object *c = fl ? get(fl, "completion_ns", json_type_double) : NULL;
        if (!g || transport_bit(fl) == 0 || (!c && !is_null(fl, "completion_ns"))) {
            seterr(errmsg, errmsglen,
                   "%s/summary.json: flows[%zu] lacks a transport, goodput_gbps or completion_ns",
                   dir, i);
            goto out;
        }
        gp[i] = c ? json_object_get_double(g) : 0.0;
        gp[i] = isfinite(gp[i]) ? gp[i] : 0.0;
        incomplete += !c;
    }
    if (summary && n > 0) {
        qsort(gp, n, sizeof(*gp), cmp_double);
        double median = n % 2 ? gp[n / 2] : (gp[n / 2 - 1] + gp[n / 2]) / 2;
        char lo[32], mid[32], hi[32];
        fmt_gbps(gp[0], lo, sizeof(lo));
        fmt_gbps(median, mid, sizeof(mid));
        fmt_gbps(gp[n - 1], hi, sizeof(hi));
        buf_add(b, "goodput min/median/max %s / %s / %s Gb/s over %zu flow%s", lo, mid, hi, n,
                n == 1 ? "" : "s");
        if (incomplete) {
            buf_add(b, ", %zu not completed", incomplete);
        }
    }
    for (size_t i = 0; i < n; i++) {
        json_object *fl = json_object_array_get_idx(flows, i);
        json_object *label = get(fl, "label", json_type_string);
        if (!label || strcmp(json_object_get_string(label), "victim") != 0) {
            continue;
        }
        buf_add(b, "%s", b->len ? "; " : "");
        if (is_null(fl, "completion_ns")) {
            buf_add(b, "victim not completed");
        } else {
            char g[32];
            fmt_gbps(json_object_get_double(get(fl, "goodput_gbps", json_type_double)), g,
                     sizeof(g));
            buf_add(b, "victim %s Gb/s", g);
        }
    }
    rv = 0;
out:
    free(gp);
    return rv;
}

/* A count of $.totals; returns -1 with |errmsg| when it is missing or negative. */
static int total(json_object *totals, const char *key, uint64_t *pv, const char *dir, char *errmsg,
                 size_t errmsglen)
{
    json_object *v = get(totals, key, json_type_int);
    if (!v || json_object_get_int64(v) < 0) {
        seterr(errmsg, errmsglen, "%s/summary.json: totals.%s is missing or not a count", dir, key);
        return -1;
    }
    *pv = json_object_get_uint64(v);
    return 0;
}

/* Reads |dir|/summary.json into |row|. Returns 0, or -1 with |errmsg| naming |dir|. */
static int read_row(const char *dir, report_row *row, char *errmsg, size_t errmsglen)
{
    int rv = -1;
    char *data = NULL;
    size_t len = 0, n = strlen(dir) + sizeof("/summary.json");
    char *path = util_xmalloc(n);
    json_object *root = NULL;
    report_buf res = {0};
    snprintf(path, n, "%s/summary.json", dir);

    int err = util_read_file(path, &data, &len);
    if (err) {
        seterr(errmsg, errmsglen, "%s holds no readable summary.json (%s)", dir, strerror(-err));
        goto out;
    }
    enum json_tokener_error jerr = json_tokener_success;
    root = json_tokener_parse_verbose(data, &jerr);
    if (!root || json_object_get_type(root) != json_type_object) {
        seterr(errmsg, errmsglen, "%s/summary.json is not a JSON object (%s)", dir,
               root ? "another type" : json_tokener_error_desc(jerr));
        goto out;
    }
    json_object *scenario = get(root, "scenario", json_type_string);
    json_object *experiment = get(root, "experiment", json_type_string);
    json_object *paper = get(root, "paper", json_type_string);
    json_object *reduced = get(root, "reduced", json_type_boolean);
    json_object *flows = get(root, "flows", json_type_array);
    json_object *ars = get(root, "allreduce", json_type_array);
    json_object *totals = get(root, "totals", json_type_object);
    if (!scenario || (!experiment && !is_null(root, "experiment")) ||
        (!paper && !is_null(root, "paper")) || (!reduced && !is_null(root, "reduced")) || !flows ||
        !ars || !totals) {
        seterr(errmsg, errmsglen,
               "%s/summary.json lacks scenario, flows, allreduce or totals, or has a wrong type",
               dir);
        goto out;
    }

    unsigned transports = 0;
    for (size_t i = 0; i < json_object_array_length(flows); i++) {
        transports |= transport_bit(json_object_array_get_idx(flows, i));
    }
    for (size_t i = 0; i < json_object_array_length(ars); i++) {
        transports |= transport_bit(json_object_array_get_idx(ars, i));
    }
    buf_add(&res, "%s", "");
    if (json_object_array_length(ars) > 0 &&
        result_allreduce(ars, &res, dir, errmsg, errmsglen) != 0) {
        goto out;
    }
    if (result_flows(flows, json_object_array_length(ars) == 0, &res, dir, errmsg, errmsglen) !=
        0) {
        goto out;
    }
    if (res.len == 0) {
        buf_add(&res, "no traffic");
    }
    if (total(totals, "retransmissions", &row->retransmissions, dir, errmsg, errmsglen) != 0 ||
        total(totals, "timeouts", &row->timeouts, dir, errmsg, errmsglen) != 0 ||
        total(totals, "qp_failures", &row->qp_failures, dir, errmsg, errmsglen) != 0) {
        goto out;
    }

    const char *name = json_object_get_string(scenario);
    row->experiment = cell(experiment ? json_object_get_string(experiment) : name);
    row->transport = cell(transports == 3   ? "MRC + RoCE"
                          : transports == 1 ? "MRC"
                          : transports == 2 ? "RoCE"
                                            : "\xe2\x80\x94");
    row->result = cell(res.s);
    row->paper = cell(paper ? json_object_get_string(paper) : "\xe2\x80\x94");
    report_buf sc = {0};
    buf_add(&sc, "%s%s", name, reduced && json_object_get_boolean(reduced) ? " (reduced)" : "");
    row->scenario = cell(sc.s);
    free(sc.s);
    rv = 0;
out:
    json_object_put(root);
    free(res.s);
    free(data);
    free(path);
    return rv;
}

static void row_fini(report_row *row)
{
    free(row->experiment);
    free(row->transport);
    free(row->result);
    free(row->paper);
    free(row->scenario);
}

/* Writes the header and |rows| grouped by experiment. Returns 0 or -errno. */
static int write_table(FILE *out, report_row *rows, unsigned nrows)
{
    errno = 0;
    if (fputs(REPORT_HEADER, out) == EOF) {
        return errno ? -errno : -EIO;
    }
    for (unsigned g = 0; g < nrows; g++) {
        if (rows[g].done) {
            continue;
        }
        for (unsigned i = g; i < nrows; i++) {
            report_row *r = &rows[i];
            if (r->done || strcmp(r->experiment, rows[g].experiment) != 0) {
                continue;
            }
            r->done = true;
            if (fprintf(out, "| %s | %s | %s | %llu | %llu | %llu | %s | %s |\n", r->experiment,
                        r->transport, r->result, (unsigned long long)r->retransmissions,
                        (unsigned long long)r->timeouts, (unsigned long long)r->qp_failures,
                        r->paper, r->scenario) < 0) {
                return errno ? -errno : -EIO;
            }
        }
    }
    if (fflush(out) != 0) {
        return errno ? -errno : -EIO;
    }
    return 0;
}

int sim_report(const char *const *dirs, unsigned ndirs, FILE *out, char *errmsg, size_t errmsglen)
{
    int rv = -1;
    report_row *rows = util_xcalloc(ndirs ? ndirs : 1, sizeof(*rows));
    if (!out || (ndirs && !dirs)) {
        seterr(errmsg, errmsglen, "no folders or no output were given");
        goto out;
    }
    for (unsigned i = 0; i < ndirs; i++) {
        if (!dirs[i]) {
            seterr(errmsg, errmsglen, "folder %u of %u has no name", i + 1, ndirs);
            goto out;
        }
        if (read_row(dirs[i], &rows[i], errmsg, errmsglen) != 0) {
            goto out;
        }
    }

    /* Every row is read before the first is written: a bad folder leaves no half table. */
    int err = write_table(out, rows, ndirs);
    if (err) {
        seterr(errmsg, errmsglen, "cannot write the table: %s", strerror(-err));
        goto out;
    }
    rv = 0;
out:
    for (unsigned i = 0; i < ndirs; i++) {
        row_fini(&rows[i]);
    }
    free(rows);
    return rv;
}
