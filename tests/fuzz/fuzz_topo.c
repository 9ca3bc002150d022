/* SPDX-License-Identifier: MIT */
/* libFuzzer target: topology files, and everything a loaded one feeds (tables, renders, expand). */
#include <json-c/json.h>
#include <math.h>
#include <mrcfab/fabric.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A 64 KiB input can ask for a fabric of millions of ports ("radix": 65535). The loader does
 * exactly what is asked, so such inputs only measure memory and time, and would end the run
 * as out-of-memory or timeout reports. They are skipped before loading; everything below the
 * bounds is loaded, rendered and expanded in full.
 */
#define MAX_PORTS (1u << 16)
#define MAX_HOST_PORTS (1u << 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the library: say which, then crash so that libFuzzer keeps the input. */
static void die(const char *what)
{
    fprintf(stderr, "fuzz_topo: %s\n", what);
    abort();
}

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static int buf_sink(void *user, const char *data, size_t datalen)
{
    buf *b = user;
    if (b->len + datalen > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + datalen) {
            cap *= 2;
        }
        char *n = realloc(b->data, cap);
        if (!n) {
            die("out of memory");
        }
        b->data = n;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, datalen);
    b->len += datalen;
    return 0;
}

/* Counts the bytes and reads each one, so that a render that hands out bad memory shows. */
typedef struct count {
    size_t bytes;
    unsigned sum;
} count;

static int count_sink(void *user, const char *data, size_t datalen)
{
    count *c = user;
    for (size_t i = 0; i < datalen; i++) {
        c->sum += (unsigned char)data[i];
    }
    c->bytes += datalen;
    return 0;
}

static int64_t get_int(json_object *obj, const char *key, int64_t dflt)
{
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_int)) {
        return dflt;
    }
    return json_object_get_int64(v);
}

/*
 * An upper bound of the switch ports and host ports the input would build, mirroring the
 * loader's own sizing; inputs the loader rejects before it allocates count as small.
 */
static void estimate(json_object *root, uint64_t *pports, uint64_t *phostports)
{
    json_object *v;
    int64_t planes = get_int(root, "planes", 0);
    *pports = *phostports = 0;
    if (planes < 1 || planes > FAB_MAX_PLANES || !json_object_object_get_ex(root, "form", &v) ||
        !json_object_is_type(v, json_type_string)) {
        return;
    }
    if (strcmp(json_object_get_string(v), "parametric") == 0) {
        int64_t radix = get_int(root, "radix", 0), hosts = get_int(root, "hosts", 0);
        double os = 1.0;
        if (json_object_object_get_ex(root, "oversubscription", &v)) {
            os = json_object_get_double(v);
        }
        if (radix < 2 || radix > 65535 || hosts < 1 || hosts > (1 << 24) || !isfinite(os) ||
            os < 1.0 || os > 64) {
            return;
        }
        int64_t d = llround((double)radix * os / (os + 1.0));
        if (d < 1 || d >= radix) {
            return;
        }
        int64_t nt0 = (hosts + d - 1) / d;
        if (nt0 > radix) {
            return;
        }
        *pports = (uint64_t)(planes * (nt0 + radix - d) * radix);
        *phostports = (uint64_t)(planes * hosts);
        return;
    }
    json_object *sws, *hosts;
    int64_t radix = get_int(root, "radix", 0);
    if (json_object_object_get_ex(root, "switches", &sws) &&
        json_object_is_type(sws, json_type_array)) {
        size_t n = json_object_array_length(sws);
        for (size_t i = 0; i < n; i++) {
            int64_t np = get_int(json_object_array_get_idx(sws, i), "ports", radix);
            *pports += np > 0 && np <= 65535 ? (uint64_t)np : 0;
        }
    }
    if (json_object_object_get_ex(root, "hosts", &hosts) &&
        json_object_is_type(hosts, json_type_array)) {
        *phostports = (uint64_t)planes * json_object_array_length(hosts);
    }
}

static bool too_big(const uint8_t *data, size_t size)
{
    /* parsed exactly as the loader parses, so both see the same values */
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) {
        die("out of memory");
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, (const char *)data, (int)size);
    uint64_t ports = 0, hostports = 0;
    if (root && json_object_is_type(root, json_type_object)) {
        estimate(root, &ports, &hostports);
    }
    json_object_put(root);
    json_tokener_free(tok);
    return ports > MAX_PORTS || hostports > MAX_HOST_PORTS;
}

static bool same_plan(const fab_plan *a, const fab_plan *b)
{
    return memcmp(a->block, b->block, 16) == 0 && memcmp(a->host_block, b->host_block, 16) == 0 &&
           a->plane_bits == b->plane_bits && a->kind_bits == b->kind_bits &&
           a->index_bits == b->index_bits && a->kind_t0 == b->kind_t0 && a->kind_t1 == b->kind_t1 &&
           a->kind_dl == b->kind_dl && a->udp_port == b->udp_port &&
           a->route_table == b->route_table && a->route_proto == b->route_proto;
}

/* What two loads of one fabric must agree on. */
static void check_same(const fab_topo *a, const fab_topo *b)
{
    if (fab_topo_planes(a) != fab_topo_planes(b) ||
        fab_topo_nswitches(a) != fab_topo_nswitches(b) ||
        fab_topo_nhosts(a) != fab_topo_nhosts(b) || fab_topo_ncables(a) != fab_topo_ncables(b) ||
        fab_topo_nmissing(a) != fab_topo_nmissing(b) ||
        strcmp(fab_topo_name(a), fab_topo_name(b)) != 0 ||
        !same_plan(fab_topo_plan(a), fab_topo_plan(b))) {
        die("the expansion loads as a different fabric");
    }
}

static void exercise(const fab_topo *topo)
{
    fab_tables *tables;
    if (fab_tables_compute(topo, &tables) != 0) {
        die("fab_tables_compute failed on a loaded fabric");
    }
    count c = {0};
    for (uint32_t sw = 0; sw < fab_topo_nswitches(topo); sw++) {
        fab_switch info;
        if (fab_switch_get(topo, sw, &info) != 0 || fab_switch_find(topo, info.name) != sw) {
            die("a switch is not found by its own name");
        }
        for (int fmt = FAB_FMT_JSON; fmt <= FAB_FMT_FRR; fmt++) {
            if (fab_render_switch(topo, tables, sw, (fab_format)fmt, count_sink, &c) != 0) {
                die("fab_render_switch failed on a loaded fabric");
            }
        }
    }
    fab_tables_free(tables);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (too_big(data, size)) {
        return 0;
    }
    fab_topo *topo, *again;
    fab_error err = {{0}, {0}};
    int rv = fab_topo_load((const char *)data, size, &topo, &err);
    if (rv != 0) {
        /* every rejection names the value at fault (fabric.h: |*perr| is filled) */
        if (rv == FAB_ERR_INVAL && (err.path[0] != '$' || err.msg[0] == '\0')) {
            fprintf(stderr, "fuzz_topo: rejected without a message (path '%s')\n", err.path);
            abort();
        }
        return 0;
    }
    exercise(topo);

    /* the explicit form must load again as the same fabric, and expand to the same text */
    buf first = {0}, second = {0};
    if (fab_topo_expand(topo, buf_sink, &first) != 0) {
        die("fab_topo_expand failed on a loaded fabric");
    }
    if (fab_topo_load(first.data, first.len, &again, &err) != 0) {
        fprintf(stderr, "fuzz_topo: the expansion does not load: %s: %s\n", err.path, err.msg);
        abort();
    }
    check_same(topo, again);
    if (fab_topo_expand(again, buf_sink, &second) != 0 || second.len != first.len ||
        memcmp(first.data, second.data, first.len) != 0) {
        die("expanding the expansion gives another text");
    }
    fab_topo_free(again);
    fab_topo_free(topo);
    free(first.data);
    free(second.data);
    return 0;
}
