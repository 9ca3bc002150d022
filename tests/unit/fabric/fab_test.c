/* SPDX-License-Identifier: MIT */
/* Shared helpers of the libmrcfab unit tests: loading, in-memory sinks and a seeded PRNG. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fab_test.h"

int fab_test_buf_sink(void *user, const char *data, size_t datalen)
{
    fab_test_buf *buf = user;
    if (buf->len + datalen + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 4096;
        while (buf->len + datalen + 1 > cap) {
            cap *= 2;
        }
        char *n = realloc(buf->data, cap);
        if (!n) {
            return FAB_ERR_NOMEM;
        }
        buf->data = n;
        buf->cap = cap;
    }
    memcpy(buf->data + buf->len, data, datalen);
    buf->len += datalen;
    buf->data[buf->len] = '\0';
    return 0;
}

void fab_test_buf_free(fab_test_buf *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}

fab_topo *fab_test_load_file(const char *path)
{
    fab_topo *topo = NULL;
    fab_error err = {{0}, {0}};
    int rv = fab_topo_load_file(path, &topo, &err);
    ck_assert_msg(rv == 0, "loading %s: %s at %s: %s", path, fab_strerror(rv), err.path, err.msg);
    ck_assert_ptr_nonnull(topo);
    return topo;
}

int fab_test_load_str(const char *json, fab_topo **ptopo, fab_error *perr)
{
    return fab_topo_load(json, strlen(json), ptopo, perr);
}

fab_topo *fab_test_load_json(const char *json)
{
    fab_topo *topo = NULL;
    fab_error err = {{0}, {0}};
    int rv = fab_test_load_str(json, &topo, &err);
    ck_assert_msg(rv == 0, "loading JSON: %s at %s: %s\n%.2000s", fab_strerror(rv), err.path,
                  err.msg, json);
    ck_assert_ptr_nonnull(topo);
    return topo;
}

char *fab_test_expand(const fab_topo *topo)
{
    fab_test_buf buf = {0};
    int rv = fab_topo_expand(topo, fab_test_buf_sink, &buf);
    ck_assert_msg(rv == 0, "fab_topo_expand: %s", fab_strerror(rv));
    ck_assert_ptr_nonnull(buf.data);
    return buf.data;
}

fab_tables *fab_test_tables(const fab_topo *topo)
{
    fab_tables *tables = NULL;
    int rv = fab_tables_compute(topo, &tables);
    ck_assert_msg(rv == 0, "fab_tables_compute: %s", fab_strerror(rv));
    ck_assert_ptr_nonnull(tables);
    return tables;
}

uint32_t fab_test_switch(const fab_topo *topo, const char *name)
{
    uint32_t sw = fab_switch_find(topo, name);
    ck_assert_msg(sw != FAB_NONE, "no switch named %s", name);
    return sw;
}

uint16_t fab_test_usid(const fab_topo *topo, uint32_t sw)
{
    fab_switch s;
    ck_assert_int_eq(fab_switch_get(topo, sw, &s), 0);
    return s.usid;
}

int fab_test_port_to(const fab_topo *topo, uint32_t sw, uint32_t peer)
{
    fab_switch s;
    ck_assert_int_eq(fab_switch_get(topo, sw, &s), 0);
    for (unsigned x = 0; x < s.nports; x++) {
        fab_peer q;
        ck_assert_int_eq(fab_switch_peer(topo, sw, x, &q), 0);
        if (q.kind == FAB_PEER_SWITCH && q.id == peer) {
            return (int)x;
        }
    }
    return -1;
}

uint64_t fab_test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint32_t fab_test_rand_below(uint64_t *state, uint32_t n)
{
    /* the high half is the best-mixed; the modulo bias is far below anything a test sees */
    return (uint32_t)((fab_test_rand(state) >> 32) % n);
}

double fab_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
