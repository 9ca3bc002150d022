/* SPDX-License-Identifier: MIT */
/* Unit tests of mrc-sim's result files (summary.json, CSV, SVG) and of `mrc-sim report`. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_out.h"
#include "sim_svg.h"
#include "util.h"

#define DATA SIM_TEST_DATA "/out"
#define MIB (1024ull * 1024ull)

/* ---- helpers ---- */

static char *tmpdir_new(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof(tmpl), "%s/sim_out_XXXXXX", base && *base ? base : "/tmp");
    char *dir = mkdtemp(tmpl);
    ck_assert_msg(dir != NULL, "mkdtemp: %s", strerror(errno));
    return util_xstrdup(dir);
}

/* rm -r of a folder the test made. */
static void tmpdir_rm(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        unlink(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            tmpdir_rm(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

static char *slurp(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    char *data = NULL;
    size_t len = 0;
    int rv = util_read_file(path, &data, &len);
    ck_assert_msg(rv == 0, "cannot read %s: %s", path, strerror(-rv));
    return data;
}

static json_object *load_json(const char *dir, const char *name)
{
    char *text = slurp(dir, name);
    enum json_tokener_error err;
    json_object *o = json_tokener_parse_verbose(text, &err);
    ck_assert_msg(o != NULL, "%s/%s does not parse: %s", dir, name, json_tokener_error_desc(err));
    free(text);
    return o;
}

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no key %s", key);
    return v;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/* Run A into |flows_a| and |ar_a|: a victim, a RoCE flow that failed (with a label CSV must
 * quote) and an unlabelled flow; one all-reduce. */
static sim_results results_a(sim_flow_result fa[3], sim_allreduce_result ar_a[1])
{
    fa[0] = (sim_flow_result){.id = 0,
                              .label = "victim",
                              .transport = SIM_MRC,
                              .src = 8,
                              .dst = 1,
                              .src_name = "h8",
                              .dst_name = "h1",
                              .bytes = 64 * MIB,
                              .start_ps = 2000000,
                              .end_ps = 2000000 + 5500000500ull,
                              .goodput_gbps = 97.6116,
                              .retransmissions = 3,
                              .timeouts = 1};
    fa[1] = (sim_flow_result){.id = 1,
                              .label = "a,\"b\"",
                              .transport = SIM_ROCE,
                              .src = 2,
                              .dst = 3,
                              .src_name = "h2",
                              .dst_name = "h3",
                              .bytes = 4096,
                              .retransmissions = 40,
                              .timeouts = 7,
                              .failed = true};
    fa[2] = (sim_flow_result){.id = 7,
                              .transport = SIM_MRC,
                              .src = 4,
                              .dst = 5,
                              .src_name = "h4",
                              .dst_name = "h5",
                              .bytes = MIB,
                              .end_ps = 100000000,
                              .goodput_gbps = 0.1};
    ar_a[0] = (sim_allreduce_result){.transport = SIM_MRC,
                                     .ranks = 8,
                                     .bytes = 16 * MIB,
                                     .start_ps = 0,
                                     .end_ps = 2000000000,
                                     .algbw_gbps = 67.108864,
                                     .busbw_gbps = 117.440512};
    return (sim_results){
        .scenario = "ar<&>\"x",
        .experiment = "64-rank ring all-reduce",
        .paper = NULL,
        .seed = UINT64_MAX,
        .reduced = false,
        .flows = fa,
        .nflows = 3,
        .allreduce = ar_a,
        .nallreduce = 1,
        .totals = {.packets = 1000000,
                   .drops = 2,
                   .trims = 3,
                   .nacks = 4,
                   .retransmissions = 43,
                   .timeouts = 8,
                   .ev_state_changes = 7,
                   .qp_failures = 1,
                   .ecn_marks = 9,
                   .pfc_pauses = 10},
        .sim = {.events = 123456789, .wall_s = 1.25, .simulated_ns = 50000000},
    };
}

/* Run B into |flows_b|: an incast on RoCE with a victim, one flow not completed, a reduced
 * run. */
static sim_results results_b(sim_flow_result flows_b[4])
{
    static const double gbps[4] = {20.0, 30.5, 10.25, 0};
    static const char *const labels[4] = {"victim", "incast", "incast", "incast"};
    for (unsigned i = 0; i < 4; i++) {
        flows_b[i] = (sim_flow_result){.id = i,
                                       .transport = SIM_ROCE,
                                       .src = i + 1,
                                       .dst = 0,
                                       .dst_name = "h0",
                                       .bytes = MIB,
                                       .end_ps = i < 3 ? 419430400ull : 0,
                                       .goodput_gbps = gbps[i]};
        snprintf(flows_b[i].label, sizeof(flows_b[i].label), "%s", labels[i]);
        snprintf(flows_b[i].src_name, sizeof(flows_b[i].src_name), "h%u", i + 1);
    }
    return (sim_results){
        .scenario = "incast-roce",
        .experiment = "incast | victim",
        .paper = "the victim keeps its rate | RoCE's collapses",
        .seed = 1,
        .reduced = true,
        .flows = flows_b,
        .nflows = 4,
        .totals = {.retransmissions = 5, .timeouts = 2},
        .sim = {.events = 10, .wall_s = 0.5, .simulated_ns = 5000000},
    };
}

/* A time series of |nflows| flows and |nplanes| planes: flow f carries f + r in row r, plane k
 * (k + 1) / 10. */
static sim_series series_new(unsigned nflows, unsigned nplanes, size_t nrows, uint64_t interval)
{
    sim_series ts = {.interval_ps = interval, .nflows = nflows, .nplanes = nplanes, .nrows = nrows};
    ts.flow_gbps = util_xcalloc(nrows * nflows + 1, sizeof(double));
    ts.plane_util = util_xcalloc(nrows * nplanes + 1, sizeof(double));
    for (size_t r = 0; r < nrows; r++) {
        for (unsigned f = 0; f < nflows; f++) {
            ts.flow_gbps[r * nflows + f] = (double)(f + r);
        }
        for (unsigned k = 0; k < nplanes; k++) {
            ts.plane_util[r * nplanes + k] = (k + 1) / 10.0;
        }
    }
    return ts;
}

static void series_free(sim_series *ts)
{
    free(ts->flow_gbps);
    free(ts->plane_util);
}

/* A CSV file parsed per RFC 4180. */
typedef struct csv {
    size_t nrows;
    size_t ncols[64]; /* per row, the first 64 */
    char *header[64]; /* the first row's fields, unquoted */
    size_t nheader;
} csv;

static csv csv_parse(const char *s)
{
    csv c = {0};
    char field[256];
    size_t flen = 0, cols = 0;
    bool quoted = false, any = false;
    for (const char *p = s; *p; p++) {
        if (quoted) {
            if (*p == '"' && p[1] == '"') {
                field[flen++] = '"';
                p++;
            } else if (*p == '"') {
                quoted = false;
            } else {
                field[flen++] = *p;
            }
        } else if (*p == '"') {
            ck_assert_msg(flen == 0, "a quote in the middle of an unquoted field");
            quoted = true;
        } else if (*p == ',' || *p == '\n') {
            field[flen] = '\0';
            if (c.nrows == 0 && c.nheader < 64) {
                c.header[c.nheader++] = util_xstrdup(field);
            }
            flen = 0;
            cols++;
            if (*p == '\n') {
                if (c.nrows < 64) {
                    c.ncols[c.nrows] = cols;
                }
                c.nrows++;
                cols = 0;
            }
        } else {
            ck_assert_msg(*p != '\r', "a carriage return in the CSV");
            field[flen++] = *p;
        }
        ck_assert(flen < sizeof(field));
        any = true;
    }
    ck_assert_msg(!quoted, "an unterminated quote");
    ck_assert_msg(!any || s[strlen(s) - 1] == '\n', "the last line is not terminated");
    return c;
}

static void csv_free(csv *c)
{
    for (size_t i = 0; i < c->nheader; i++) {
        free(c->header[i]);
    }
}

/* A small well-formedness check of an XML document: one root element, balanced tags, quoted
 * attributes without '<', known entities only, no control characters. Returns NULL or what is
 * wrong. */
static const char *xml_check(const char *s)
{
    char stack[64][64];
    size_t depth = 0, roots = 0;
    const char *p = s;
    if (strncmp(p, "<?xml", 5) == 0) {
        p = strstr(p, "?>");
        if (!p) {
            return "unterminated XML declaration";
        }
        p += 2;
    }
    while (*p) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
            return "control character";
        }
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            size_t k;
            for (k = 0; k < 5 && strncmp(p, ents[k], strlen(ents[k])) != 0; k++) {
            }
            if (k == 5) {
                return "unknown entity in text";
            }
            p++;
            continue;
        }
        if (*p != '<') {
            if (depth == 0 && !strchr(" \t\r\n", *p)) {
                return "text outside the root element";
            }
            p++;
            continue;
        }
        if (strncmp(p, "<!--", 4) == 0) {
            p = strstr(p, "-->");
            if (!p) {
                return "unterminated comment";
            }
            p += 3;
            continue;
        }
        bool closing = p[1] == '/';
        p += closing ? 2 : 1;
        char name[64];
        size_t n = 0;
        while (*p && (isalnum((unsigned char)*p) || strchr("_:.-", *p)) && n < 63) {
            name[n++] = *p++;
        }
        name[n] = '\0';
        if (n == 0) {
            return "a tag without a name";
        }
        if (closing) {
            while (*p == ' ') {
                p++;
            }
            if (*p != '>') {
                return "bad closing tag";
            }
            p++;
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0) {
                return "closing tag does not match";
            }
            depth--;
            continue;
        }
        if (depth == 0 && ++roots > 1) {
            return "more than one root element";
        }
        for (;;) {
            while (*p && strchr(" \t\r\n", *p)) {
                p++;
            }
            if (strncmp(p, "/>", 2) == 0) {
                p += 2;
                break;
            }
            if (*p == '>') {
                p++;
                if (depth == 64) {
                    return "too deep";
                }
                snprintf(stack[depth++], sizeof(stack[0]), "%s", name);
                break;
            }
            size_t an = 0;
            while (*p && (isalnum((unsigned char)*p) || strchr("_:.-", *p))) {
                p++;
                an++;
            }
            if (an == 0 || *p != '=' || (p[1] != '"' && p[1] != '\'')) {
                return "bad attribute";
            }
            char q = p[1];
            p += 2;
            while (*p && *p != q) {
                if (*p == '<') {
                    return "'<' in an attribute value";
                }
                if (*p == '&' && strncmp(p, "&amp;", 5) != 0 && strncmp(p, "&lt;", 4) != 0 &&
                    strncmp(p, "&gt;", 4) != 0 && strncmp(p, "&quot;", 6) != 0 &&
                    strncmp(p, "&apos;", 6) != 0) {
                    return "unknown entity in an attribute";
                }
                p++;
            }
            if (!*p) {
                return "unterminated attribute";
            }
            p++;
        }
    }
    if (depth != 0) {
        return "unclosed element";
    }
    return roots == 1 ? NULL : "no root element";
}

static void assert_svg(const char *dir, const char *name)
{
    char *svg = slurp(dir, name);
    const char *why = xml_check(svg);
    ck_assert_msg(why == NULL, "%s/%s is not well-formed XML: %s", dir, name, why);
    ck_assert_ptr_nonnull(strstr(svg, "viewBox=\"0 0 "));
    free(svg);
    /* A real parser when there is one; the check above stands alone otherwise. */
    if (access("/usr/bin/xmllint", X_OK) == 0) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "/usr/bin/xmllint --noout '%s/%s'", dir, name);
        ck_assert_msg(system(cmd) == 0, "xmllint rejects %s/%s", dir, name);
    }
}

/* Whether ajv (tests/schema/node_modules) can run here. */
static bool have_ajv(void)
{
    return access(SIM_TEST_ROOT "/tests/schema/node_modules/.bin/ajv", X_OK) == 0 &&
           system("command -v node >/dev/null 2>&1") == 0;
}

/* Validates |file| against schemas/sim-summary.schema.json with the pinned ajv; true if valid. */
static bool ajv_valid(const char *file)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "cd '" SIM_TEST_ROOT "/tests/schema' && ./node_modules/.bin/ajv validate "
             "--spec=draft2020 -c ajv-formats -s '" SIM_TEST_ROOT
             "/schemas/sim-summary.schema.json' -d '%s' >/dev/null 2>&1",
             file);
    return system(cmd) == 0;
}

/* ---- summary.json ---- */

START_TEST(test_sim_out_summary_fields)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    char *dir = tmpdir_new();
    sim_results res = results_a(fa, ara);
    sim_series ts = series_new(3, 2, 4, 10 * 1000000ull);
    char err[256] = "";
    ck_assert_msg(sim_out_write(dir, &res, &ts, err, sizeof(err)) == 0, "%s", err);

    json_object *o = load_json(dir, "summary.json");
    ck_assert_str_eq(json_object_get_string(jget(o, "scenario")), "ar<&>\"x");
    ck_assert_str_eq(json_object_get_string(jget(o, "experiment")), "64-rank ring all-reduce");
    ck_assert_ptr_null(jget(o, "paper"));
    ck_assert(json_object_get_uint64(jget(o, "seed")) == UINT64_MAX);
    ck_assert(json_object_get_boolean(jget(o, "reduced")) == 0);

    json_object *flows = jget(o, "flows");
    ck_assert_uint_eq(json_object_array_length(flows), 3);
    json_object *f0 = json_object_array_get_idx(flows, 0);
    ck_assert_int_eq(json_object_get_int64(jget(f0, "id")), 0);
    ck_assert_str_eq(json_object_get_string(jget(f0, "label")), "victim");
    ck_assert_str_eq(json_object_get_string(jget(f0, "transport")), "mrc");
    ck_assert_str_eq(json_object_get_string(jget(f0, "src")), "h8");
    ck_assert_str_eq(json_object_get_string(jget(f0, "dst")), "h1");
    ck_assert_int_eq(json_object_get_int64(jget(f0, "bytes")), 64 * MIB);
    ck_assert_int_eq(json_object_get_int64(jget(f0, "start_ns")), 2000);
    ck_assert_int_eq(json_object_get_int64(jget(f0, "completion_ns")), 5500000);
    ck_assert(json_object_get_double(jget(f0, "goodput_gbps")) == 97.6116);
    ck_assert_int_eq(json_object_get_int64(jget(f0, "retransmissions")), 3);
    ck_assert_int_eq(json_object_get_int64(jget(f0, "timeouts")), 1);
    ck_assert(json_object_get_boolean(jget(f0, "failed")) == 0);
    json_object *f1 = json_object_array_get_idx(flows, 1);
    ck_assert_str_eq(json_object_get_string(jget(f1, "label")), "a,\"b\"");
    ck_assert_str_eq(json_object_get_string(jget(f1, "transport")), "roce");
    ck_assert_ptr_null(jget(f1, "completion_ns"));
    ck_assert(json_object_get_double(jget(f1, "goodput_gbps")) == 0.0);
    ck_assert(json_object_get_boolean(jget(f1, "failed")) == 1);
    json_object *f2 = json_object_array_get_idx(flows, 2);
    ck_assert_int_eq(json_object_get_int64(jget(f2, "id")), 7);
    ck_assert_str_eq(json_object_get_string(jget(f2, "label")), "flow7");
    ck_assert_int_eq(json_object_get_int64(jget(f2, "completion_ns")), 100000);
    ck_assert(json_object_get_double(jget(f2, "goodput_gbps")) == 0.1);

    json_object *ars = jget(o, "allreduce");
    ck_assert_uint_eq(json_object_array_length(ars), 1);
    json_object *ar = json_object_array_get_idx(ars, 0);
    ck_assert_str_eq(json_object_get_string(jget(ar, "transport")), "mrc");
    ck_assert_int_eq(json_object_get_int64(jget(ar, "ranks")), 8);
    ck_assert_int_eq(json_object_get_int64(jget(ar, "bytes")), 16 * MIB);
    ck_assert_int_eq(json_object_get_int64(jget(ar, "time_ns")), 2000000);
    ck_assert(json_object_get_double(jget(ar, "algbw_gbps")) == 67.108864);
    ck_assert(json_object_get_double(jget(ar, "busbw_gbps")) == 117.440512);

    json_object *t = jget(o, "totals");
    static const char *const keys[] = {
        "packets",          "drops",       "trims",     "nacks",     "retransmissions", "timeouts",
        "ev_state_changes", "qp_failures", "ecn_marks", "pfc_pauses"};
    const uint64_t want[] = {1000000, 2, 3, 4, 43, 8, 7, 1, 9, 10};
    for (size_t i = 0; i < 10; i++) {
        ck_assert_msg(json_object_get_uint64(jget(t, keys[i])) == want[i], "totals.%s", keys[i]);
    }
    ck_assert_int_eq(json_object_object_length(t), 10);
    json_object *s = jget(o, "sim");
    ck_assert_int_eq(json_object_get_int64(jget(s, "events")), 123456789);
    ck_assert(json_object_get_double(jget(s, "wall_s")) == 1.25);
    ck_assert_int_eq(json_object_get_int64(jget(s, "simulated_ns")), 50000000);
    ck_assert_int_eq(json_object_object_length(o), 9);

    /* The fixture the schema check and the report tests read is this very output. */
    json_object *golden = load_json(DATA "/ar-mrc", "summary.json");
    ck_assert_msg(json_object_equal(o, golden), "summary.json differs from %s/ar-mrc", DATA);
    json_object_put(golden);
    json_object_put(o);

    /* No temporary file is left behind. */
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t files = 0;
    while ((e = readdir(d)) != NULL) {
        ck_assert_msg(strstr(e->d_name, ".tmp") == NULL, "left behind: %s", e->d_name);
        files += e->d_name[0] != '.';
    }
    closedir(d);
    ck_assert_uint_eq(files, 5);

    series_free(&ts);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

START_TEST(test_sim_out_summary_golden_b)
{
    sim_flow_result fb[4];
    char *dir = tmpdir_new();
    sim_results res = results_b(fb);
    char err[256] = "";
    ck_assert_msg(sim_out_write(dir, &res, NULL, err, sizeof(err)) == 0, "%s", err);
    json_object *o = load_json(dir, "summary.json");
    json_object *golden = load_json(DATA "/incast-roce", "summary.json");
    ck_assert_msg(json_object_equal(o, golden), "summary.json differs from %s/incast-roce", DATA);
    ck_assert_uint_eq(json_object_array_length(jget(o, "allreduce")), 0);
    json_object_put(golden);
    json_object_put(o);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

START_TEST(test_sim_out_summary_schema)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    if (!have_ajv()) {
        fprintf(stderr, "SKIP schema validation: no ajv under tests/schema/node_modules "
                        "(tests/schema/check-sim-summary.sh covers it)\n");
        return;
    }
    char *dir = tmpdir_new(), *empty = tmpdir_new();
    sim_results res = results_a(fa, ara), none = {.scenario = "empty"};
    char err[256] = "", file[1100];
    ck_assert_msg(sim_out_write(dir, &res, NULL, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(sim_out_write(empty, &none, NULL, err, sizeof(err)) == 0, "%s", err);
    snprintf(file, sizeof(file), "%s/summary.json", dir);
    ck_assert_msg(ajv_valid(file), "%s is not valid against the schema", file);
    snprintf(file, sizeof(file), "%s/summary.json", empty);
    ck_assert_msg(ajv_valid(file), "%s is not valid against the schema", file);
    ck_assert(ajv_valid(DATA "/incast-roce/summary.json"));
    ck_assert(!ajv_valid(DATA "/bad/negative-goodput.json"));
    tmpdir_rm(dir);
    tmpdir_rm(empty);
    free(dir);
    free(empty);
}
END_TEST

/* ---- CSV ---- */

START_TEST(test_sim_out_csv)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    char *dir = tmpdir_new();
    sim_results res = results_a(fa, ara);
    sim_series ts = series_new(3, 2, 4, 1500000); /* 1.5 us */
    ts.flow_gbps[1] = NAN;
    ts.flow_gbps[2] = 12.345;
    char err[256] = "";
    ck_assert_msg(sim_out_write(dir, &res, &ts, err, sizeof(err)) == 0, "%s", err);

    char *text = slurp(dir, "flows.csv");
    ck_assert_str_eq(text, "time_us,victim,\"a,\"\"b\"\"\",flow7\n"
                           "1.5,0,0,12.345\n"
                           "3,1,2,3\n"
                           "4.5,2,3,4\n"
                           "6,3,4,5\n");
    csv c = csv_parse(text);
    ck_assert_uint_eq(c.nrows, 5);
    for (size_t r = 0; r < c.nrows; r++) {
        ck_assert_uint_eq(c.ncols[r], 4);
    }
    ck_assert_str_eq(c.header[1], "victim");
    ck_assert_str_eq(c.header[2], "a,\"b\"");
    ck_assert_str_eq(c.header[3], "flow7");
    csv_free(&c);
    free(text);

    text = slurp(dir, "planes.csv");
    ck_assert_str_eq(text, "time_us,plane0,plane1\n1.5,0.1,0.2\n3,0.1,0.2\n4.5,0.1,0.2\n"
                           "6,0.1,0.2\n");
    free(text);
    series_free(&ts);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

/* ---- SVG ---- */

START_TEST(test_sim_out_svg)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    char *dir = tmpdir_new();
    sim_results res = results_a(fa, ara);
    sim_series ts = series_new(3, 2, 50, 10 * 1000000ull);
    char err[256] = "";
    ck_assert_msg(sim_out_write(dir, &res, &ts, err, sizeof(err)) == 0, "%s", err);
    assert_svg(dir, "throughput.svg");
    assert_svg(dir, "utilization.svg");

    char *svg = slurp(dir, "throughput.svg");
    ck_assert_ptr_nonnull(strstr(svg, "ar&lt;&amp;&gt;&quot;x: goodput per flow"));
    ck_assert_ptr_nonnull(strstr(svg, "goodput (Gb/s)"));
    ck_assert_ptr_nonnull(strstr(svg, "time (\xc2\xb5s)")); /* 500 us */
    ck_assert_ptr_nonnull(strstr(svg, ">victim</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">a,&quot;b&quot;</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">flow7</text>"));
    ck_assert_uint_eq(count(svg, "<polyline"), 3);
    /* Three distinct colours. */
    ck_assert_ptr_nonnull(strstr(svg, "stroke=\"#1f77b4\""));
    ck_assert_ptr_nonnull(strstr(svg, "stroke=\"#ff7f0e\""));
    ck_assert_ptr_nonnull(strstr(svg, "stroke=\"#2ca02c\""));
    free(svg);

    svg = slurp(dir, "utilization.svg");
    ck_assert_ptr_nonnull(strstr(svg, "utilization (%)"));
    ck_assert_ptr_nonnull(strstr(svg, ">plane0</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">plane1</text>"));
    ck_assert_uint_eq(count(svg, "<polyline"), 2);
    free(svg);
    series_free(&ts);

    /* A longer run is in milliseconds, and a very long series is thinned. */
    ts = series_new(3, 2, 20000, 10 * 1000000ull);
    ck_assert_msg(sim_out_write(dir, &res, &ts, err, sizeof(err)) == 0, "%s", err);
    assert_svg(dir, "throughput.svg");
    svg = slurp(dir, "throughput.svg");
    ck_assert_ptr_nonnull(strstr(svg, "time (ms)"));
    ck_assert_uint_lt(strlen(svg), 200000);
    free(svg);
    series_free(&ts);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

START_TEST(test_sim_out_svg_top16)
{
    char *dir = tmpdir_new();
    sim_flow_result flows[20];
    memset(flows, 0, sizeof(flows));
    for (unsigned i = 0; i < 20; i++) {
        flows[i].id = i;
        flows[i].transport = SIM_MRC;
        flows[i].bytes = 1000ull * ((i * 7) % 20 + 1); /* the smallest: flows 0, 3, 6, 9 */
        snprintf(flows[i].label, sizeof(flows[i].label), "f%02u", i);
    }
    sim_results res = {.scenario = "many", .flows = flows, .nflows = 20};
    sim_series ts = series_new(20, 1, 10, 1000000);
    char err[256] = "";
    ck_assert_msg(sim_out_write(dir, &res, &ts, err, sizeof(err)) == 0, "%s", err);
    assert_svg(dir, "throughput.svg");
    char *svg = slurp(dir, "throughput.svg");
    for (unsigned i = 0; i < 20; i++) {
        char tag[32];
        snprintf(tag, sizeof(tag), ">f%02u</text>", i);
        bool dropped = i == 0 || i == 3 || i == 6 || i == 9;
        ck_assert_msg((strstr(svg, tag) == NULL) == dropped, "flow %u %s", i,
                      dropped ? "should not be drawn" : "is missing");
    }
    ck_assert_ptr_nonnull(strstr(svg, ">mean of all 20 flows</text>"));
    ck_assert_uint_eq(count(svg, "<polyline"), 17);
    ck_assert_uint_eq(count(svg, "stroke=\"#000000\" stroke-width=\"3\""), 2); /* line, key */
    /* The mean of row r is r + 9.5: row 0 at 9.5 Gb/s on a 0..30 axis (height 360). */
    char *mean = strstr(svg, "stroke=\"#000000\" stroke-width=\"3\" stroke-linejoin");
    ck_assert_ptr_nonnull(mean);
    ck_assert_ptr_nonnull(strstr(mean, "points=\" 142.0,296.0 "));
    free(svg);

    /* The CSV keeps every flow. */
    char *text = slurp(dir, "flows.csv");
    csv c = csv_parse(text);
    ck_assert_uint_eq(c.nrows, 11);
    ck_assert_uint_eq(c.ncols[0], 21);
    ck_assert_uint_eq(c.ncols[10], 21);
    csv_free(&c);
    free(text);
    series_free(&ts);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

/* ---- empty and bad input ---- */

START_TEST(test_sim_out_empty)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    char *dir = tmpdir_new();
    char sub[600], err[256] = "";
    snprintf(sub, sizeof(sub), "%s/a/b", dir); /* made with its parents */
    sim_results res = {.scenario = NULL};
    ck_assert_msg(sim_out_write(sub, &res, NULL, err, sizeof(err)) == 0, "%s", err);
    json_object *o = load_json(sub, "summary.json");
    ck_assert_str_eq(json_object_get_string(jget(o, "scenario")), "");
    ck_assert_uint_eq(json_object_array_length(jget(o, "flows")), 0);
    ck_assert_uint_eq(json_object_array_length(jget(o, "allreduce")), 0);
    ck_assert_ptr_null(jget(o, "experiment"));
    json_object_put(o);
    char *text = slurp(sub, "flows.csv");
    ck_assert_str_eq(text, "time_us\n");
    free(text);
    text = slurp(sub, "planes.csv");
    ck_assert_str_eq(text, "time_us\n");
    free(text);
    assert_svg(sub, "throughput.svg");
    assert_svg(sub, "utilization.svg");
    text = slurp(sub, "throughput.svg");
    ck_assert_ptr_nonnull(strstr(text, ">no samples</text>"));
    free(text);

    /* Flows but no rows: headers only. */
    sim_results a = results_a(fa, ara);
    sim_series ts = {.interval_ps = 0, .nflows = 0, .nplanes = 4};
    ck_assert_msg(sim_out_write(dir, &a, &ts, err, sizeof(err)) == 0, "%s", err);
    text = slurp(dir, "planes.csv");
    ck_assert_str_eq(text, "time_us,plane0,plane1,plane2,plane3\n");
    free(text);
    text = slurp(dir, "flows.csv");
    ck_assert_str_eq(text, "time_us,victim,\"a,\"\"b\"\"\",flow7\n");
    free(text);
    text = slurp(dir, "utilization.svg");
    ck_assert_ptr_nonnull(strstr(text, ">no samples</text>"));
    free(text);

    /* Rows but no flows and no planes. */
    ts = series_new(0, 0, 3, 1000000);
    ck_assert_msg(sim_out_write(dir, &res, &ts, err, sizeof(err)) == 0, "%s", err);
    text = slurp(dir, "flows.csv");
    ck_assert_str_eq(text, "time_us\n1\n2\n3\n");
    free(text);
    assert_svg(dir, "throughput.svg");
    assert_svg(dir, "utilization.svg");
    text = slurp(dir, "throughput.svg");
    ck_assert_ptr_nonnull(strstr(text, ">no flows</text>"));
    free(text);
    series_free(&ts);

    /* One row: a polyline of one point draws nothing, so there is a dot too. */
    ts = series_new(3, 1, 1, 1000000);
    ck_assert_msg(sim_out_write(dir, &a, &ts, err, sizeof(err)) == 0, "%s", err);
    assert_svg(dir, "throughput.svg");
    text = slurp(dir, "throughput.svg");
    ck_assert_uint_eq(count(text, "<circle"), 3);
    free(text);
    series_free(&ts);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

START_TEST(test_sim_out_bad_input)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    char *dir = tmpdir_new();
    char err[256] = "";
    sim_results a = results_a(fa, ara);

    ck_assert_int_eq(sim_out_write(dir, NULL, NULL, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "there are no results to write");
    ck_assert_int_eq(sim_out_write(NULL, &a, NULL, err, sizeof(err)), -1);
    ck_assert_int_eq(sim_out_write(dir, NULL, NULL, NULL, 0), -1);

    /* A short buffer gets a truncated sentence, still terminated. */
    char tiny[8];
    memset(tiny, 'x', sizeof(tiny));
    ck_assert_int_eq(sim_out_write(dir, NULL, NULL, tiny, sizeof(tiny)), -1);
    ck_assert_str_eq(tiny, "there a");

    sim_series ts = series_new(2, 1, 3, 1000000);
    ck_assert_int_eq(sim_out_write(dir, &a, &ts, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "the time series has 2 flow columns but the results 3 flows");
    series_free(&ts);

    ts = series_new(3, 1, 3, 0);
    ck_assert_int_eq(sim_out_write(dir, &a, &ts, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "no interval"));
    free(ts.flow_gbps);
    ts.flow_gbps = NULL;
    ts.interval_ps = 1000000;
    ck_assert_int_eq(sim_out_write(dir, &a, &ts, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "lacks their values"));
    series_free(&ts);

    sim_results none = {.nflows = 2};
    ck_assert_int_eq(sim_out_write(dir, &none, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "lack them"));

    fa[2].transport = (sim_transport)7;
    ck_assert_int_eq(sim_out_write(dir, &a, NULL, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "flow 7 has an unknown transport (7)");
    a = results_a(fa, ara);

    /* The folder is a file. */
    char file[600];
    snprintf(file, sizeof(file), "%s/file", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(sim_out_write(file, &a, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, file));

    /* Labels that fill their array, bytes that are not UTF-8, controls, NaN and infinity. */
    memset(fa[0].label, 'x', sizeof(fa[0].label));
    snprintf(fa[1].label, sizeof(fa[1].label), "\xff\xfe<a\nb>\xc3\xa9");
    memset(fa[1].src_name, 'y', sizeof(fa[1].src_name));
    fa[0].goodput_gbps = NAN;
    a.sim.wall_s = INFINITY;
    a.paper = "caf\xc3\xa9 \xe2\x82\xac \xed\xa0\x80";
    ts = series_new(3, 1, 3, 1000000);
    ts.flow_gbps[0] = INFINITY;
    ts.plane_util[0] = NAN;
    ck_assert_msg(sim_out_write(dir, &a, &ts, err, sizeof(err)) == 0, "%s", err);
    json_object *o = load_json(dir, "summary.json");
    json_object *fl = json_object_array_get_idx(jget(o, "flows"), 0);
    ck_assert_str_eq(json_object_get_string(jget(fl, "label")), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    ck_assert(json_object_get_double(jget(fl, "goodput_gbps")) == 0.0);
    fl = json_object_array_get_idx(jget(o, "flows"), 1);
    ck_assert_str_eq(json_object_get_string(jget(fl, "label")), "?\?<a?b>\xc3\xa9");
    ck_assert_uint_eq(strlen(json_object_get_string(jget(fl, "src"))), sizeof(fa[1].src_name));
    ck_assert_str_eq(json_object_get_string(jget(o, "paper")), "caf\xc3\xa9 \xe2\x82\xac ???");
    ck_assert(json_object_get_double(jget(jget(o, "sim"), "wall_s")) == 0.0);
    json_object_put(o);
    char *text = slurp(dir, "flows.csv");
    ck_assert_ptr_nonnull(strstr(text, "\n1,0,"));
    ck_assert_ptr_null(strstr(text, "inf"));
    free(text);
    text = slurp(dir, "planes.csv");
    ck_assert_str_eq(text, "time_us,plane0\n1,0\n2,0.1\n3,0.1\n");
    free(text);
    assert_svg(dir, "throughput.svg");
    text = slurp(dir, "throughput.svg");
    ck_assert_ptr_nonnull(strstr(text, ">?\?&lt;a?b&gt;\xc3\xa9</text>"));
    free(text);
    series_free(&ts);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

START_TEST(test_sim_svg_clean)
{
    char buf[8];
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "abc", 3), 3);
    ck_assert_str_eq(buf, "abc");
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "abcdefghij", 10), 7);
    ck_assert_str_eq(buf, "abcdefg");
    /* A character is never cut: the euro sign needs three bytes, two are left. */
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "abcde\xe2\x82\xac", 8), 5);
    ck_assert_str_eq(buf, "abcde");
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), NULL, 5), 0);
    ck_assert_str_eq(buf, "");
    /* Overlong, surrogate, out of range, truncated, U+FFFF, DEL. */
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "\xc0\xaf\xed\xa0\x80", 5), 5);
    ck_assert_str_eq(buf, "?????");
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "\xf4\x90\x80\x80", 4), 4);
    ck_assert_str_eq(buf, "????");
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "\xe2\x82", 2), 2);
    ck_assert_str_eq(buf, "??");
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "\xef\xbf\xbf\x7f", 4), 4);
    ck_assert_str_eq(buf, "????");
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), "\xf0\x9f\x98\x80", 4), 4);
    ck_assert_str_eq(buf, "\xf0\x9f\x98\x80");
    /* |srclen| bounds the read: the source needs no NUL. */
    const char unterminated[3] = {'a', 'b', 'c'};
    ck_assert_uint_eq(sim_svg_clean(buf, sizeof(buf), unterminated, 2), 2);
    ck_assert_str_eq(buf, "ab");
    ck_assert_uint_eq(sim_svg_clean(buf, 0, "abc", 3), 0);
}
END_TEST

/* ---- mrc-sim report ---- */

static char *report(const char *const *dirs, unsigned n, int *prv, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    *prv = sim_report(dirs, n, f, err, errlen);
    fclose(f);
    return text;
}

START_TEST(test_sim_report_table)
{
    sim_flow_result fa[3];
    sim_allreduce_result ara[1];
    sim_flow_result fb[4];
    const char *dirs[] = {DATA "/ar-mrc", DATA "/incast-roce"};
    char err[512] = "";
    int rv;
    char *table = report(dirs, 2, &rv, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    char *want = slurp(DATA, "report.md");
    ck_assert_str_eq(table, want);
    free(table);

    /* The same from freshly written folders. */
    char *a = tmpdir_new(), *b = tmpdir_new();
    sim_results ra = results_a(fa, ara), rb = results_b(fb);
    ck_assert_msg(sim_out_write(a, &ra, NULL, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(sim_out_write(b, &rb, NULL, err, sizeof(err)) == 0, "%s", err);
    const char *fresh[] = {a, b};
    table = report(fresh, 2, &rv, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    ck_assert_str_eq(table, want);
    free(table);
    free(want);
    tmpdir_rm(a);
    tmpdir_rm(b);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_sim_report_groups)
{
    sim_flow_result fb[4];
    char *d[4];
    char err[512] = "";
    int rv;
    sim_results r = results_b(fb);
    static const char *const exps[4] = {"X", "Y", NULL, "X"};
    static const char *const names[4] = {"x-mrc", "y-mrc", "lone", "x-roce"};
    for (unsigned i = 0; i < 4; i++) {
        d[i] = tmpdir_new();
        r.experiment = exps[i];
        r.scenario = names[i];
        r.reduced = false;
        r.nallreduce = 0;
        r.nflows = i == 2 ? 0 : 4;
        ck_assert_msg(sim_out_write(d[i], &r, NULL, err, sizeof(err)) == 0, "%s", err);
    }
    const char *dirs[4] = {d[0], d[1], d[2], d[3]};
    char *table = report(dirs, 4, &rv, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    /* X (x-mrc, x-roce), then Y, then the scenario without an experiment. */
    const char *x1 = strstr(table, "| x-mrc |"), *x2 = strstr(table, "| x-roce |");
    const char *y = strstr(table, "| y-mrc |"), *lone = strstr(table, "| lone |");
    ck_assert(x1 && x2 && y && lone);
    ck_assert(x1 < x2 && x2 < y && y < lone);
    ck_assert_ptr_nonnull(strstr(table, "\n| lone | \xe2\x80\x94 | no traffic | 5 | 2 | 0 |"));
    ck_assert_uint_eq(count(table, "\n"), 6);
    free(table);

    /* No folders: the header alone. */
    table = report(dirs, 0, &rv, err, sizeof(err));
    ck_assert_int_eq(rv, 0);
    ck_assert_uint_eq(count(table, "\n"), 2);
    free(table);
    for (unsigned i = 0; i < 4; i++) {
        tmpdir_rm(d[i]);
        free(d[i]);
    }
}
END_TEST

START_TEST(test_sim_report_bad)
{
    char err[512] = "";
    int rv;
    char *dir = tmpdir_new();
    const char *dirs[] = {DATA "/ar-mrc", dir};

    /* No summary.json: fails naming the folder, and writes nothing. */
    char *table = report(dirs, 2, &rv, err, sizeof(err));
    ck_assert_int_eq(rv, -1);
    ck_assert_msg(strstr(err, dir) != NULL, "the message does not name %s: %s", dir, err);
    ck_assert_ptr_nonnull(strstr(err, "summary.json"));
    ck_assert_str_eq(table, "");
    free(table);

    /* Not JSON, the wrong type, missing keys, a bad flow. */
    static const char *const bad[] = {
        "{\"scenario\": ",
        "[1, 2]",
        "{\"scenario\": \"s\", \"flows\": [], \"allreduce\": []}",
        "{\"scenario\": 3, \"flows\": [], \"allreduce\": [], \"totals\": {}}",
        "{\"scenario\": \"s\", \"flows\": [], \"allreduce\": [], \"totals\": {\"retransmissions\": "
        "1, \"timeouts\": 1}}",
        "{\"scenario\": \"s\", \"flows\": [{\"transport\": \"tcp\", \"goodput_gbps\": 1, "
        "\"completion_ns\": 1}], \"allreduce\": [], \"totals\": {\"retransmissions\": 1, "
        "\"timeouts\": 1, \"qp_failures\": 0}}",
        "{\"scenario\": \"s\", \"flows\": [], \"allreduce\": [{\"transport\": \"mrc\"}], "
        "\"totals\": {\"retransmissions\": 1, \"timeouts\": 1, \"qp_failures\": 0}}",
        "{\"scenario\": \"s\", \"flows\": [], \"allreduce\": [], \"totals\": {\"retransmissions\": "
        "-1, \"timeouts\": 1, \"qp_failures\": 0}}",
    };
    char path[600];
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(bad[i], f), 0);
        ck_assert_int_eq(fclose(f), 0);
        err[0] = '\0';
        table = report(dirs, 2, &rv, err, sizeof(err));
        ck_assert_msg(rv == -1, "bad summary %zu accepted", i);
        ck_assert_msg(strstr(err, dir) != NULL, "bad summary %zu: %s", i, err);
        ck_assert_str_eq(table, "");
        free(table);
    }

    /* A good one in the same folder passes. */
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"scenario\": \"s|t\", \"flows\": [], \"allreduce\": [], \"totals\": "
          "{\"retransmissions\": 1, \"timeouts\": 2, \"qp_failures\": 3}}",
          f);
    ck_assert_int_eq(fclose(f), 0);
    table = report(dirs + 1, 1, &rv, err, sizeof(err));
    ck_assert_msg(rv == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(table, "| s\\|t | \xe2\x80\x94 | no traffic | 1 | 2 | 3 | "
                                        "\xe2\x80\x94 | s\\|t |\n"));
    free(table);

    /* NULL folder names and output. */
    const char *nulls[] = {NULL};
    ck_assert_int_eq(sim_report(nulls, 1, stdout, err, sizeof(err)), -1);
    ck_assert_int_eq(sim_report(NULL, 1, stdout, err, sizeof(err)), -1);
    ck_assert_int_eq(sim_report(dirs, 1, NULL, NULL, 0), -1);
    tmpdir_rm(dir);
    free(dir);
}
END_TEST

Suite *sim_out_suite(void)
{
    Suite *s = suite_create("sim_out");
    TCase *tc = tcase_create("out");
    tcase_add_test(tc, test_sim_out_summary_fields);
    tcase_add_test(tc, test_sim_out_summary_golden_b);
    tcase_add_test(tc, test_sim_out_summary_schema);
    tcase_add_test(tc, test_sim_out_csv);
    tcase_add_test(tc, test_sim_out_svg);
    tcase_add_test(tc, test_sim_out_svg_top16);
    tcase_add_test(tc, test_sim_out_empty);
    tcase_add_test(tc, test_sim_out_bad_input);
    tcase_add_test(tc, test_sim_svg_clean);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    TCase *rep = tcase_create("report");
    tcase_add_test(rep, test_sim_report_table);
    tcase_add_test(rep, test_sim_report_groups);
    tcase_add_test(rep, test_sim_report_bad);
    suite_add_tcase(s, rep);
    return s;
}
