/* SPDX-License-Identifier: MIT */
/* Shared helpers of the libmrc unit tests: a seeded PRNG, a clock, and the wire vectors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrc_test.h"

uint64_t mrc_test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint32_t mrc_test_rand_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)((mrc_test_rand(state) >> 32) % n);
}

void mrc_test_rand_fill(uint64_t *state, uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t)(mrc_test_rand(state) >> 56);
    }
}

double mrc_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* One line of a vector file: a field, a comment, or bytes as pairs of hex digits. */
static void parse_line(mrc_test_vec *vec, const char *line, const char *path, int lineno)
{
    static const char field[] = "# field ";

    if (strncmp(line, field, sizeof(field) - 1) == 0) {
        const char *name = line + sizeof(field) - 1;
        const char *eq = strchr(name, '=');
        ck_assert_msg(eq && eq > name, "%s:%d: a field line without name=value", path, lineno);
        ck_assert_msg(vec->nfields < MRC_TEST_VEC_FIELDS, "%s:%d: too many fields", path, lineno);
        mrc_test_field *f = &vec->fields[vec->nfields++];
        size_t nlen = (size_t)(eq - name);
        size_t vlen = strcspn(eq + 1, "\r\n");
        ck_assert_msg(nlen < sizeof(f->name) && vlen < sizeof(f->value), "%s:%d: too long", path,
                      lineno);
        memcpy(f->name, name, nlen);
        f->name[nlen] = '\0';
        memcpy(f->value, eq + 1, vlen);
        f->value[vlen] = '\0';
        ck_assert_msg(!mrc_test_vec_get(vec, f->name) || mrc_test_vec_get(vec, f->name) == f->value,
                      "%s:%d: field %s listed twice", path, lineno, f->name);
        return;
    }
    if (line[0] == '#') {
        return;
    }
    for (const char *p = line; *p;) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            p++;
            continue;
        }
        int hi = hexval(p[0]);
        int lo = hexval(p[1]);
        ck_assert_msg(hi >= 0 && lo >= 0, "%s:%d: not a hex byte: %.8s", path, lineno, p);
        ck_assert_msg(vec->len < MRC_TEST_VEC_MAX, "%s:%d: too many bytes", path, lineno);
        vec->data[vec->len++] = (uint8_t)(hi << 4 | lo);
        p += 2;
    }
}

mrc_test_vec *mrc_test_vec_load(const char *name)
{
    char path[512];
    char line[1024];
    int lineno = 0;
    mrc_test_vec *vec = calloc(1, sizeof(*vec));
    ck_assert_ptr_nonnull(vec);
    ck_assert_uint_lt(strlen(name), sizeof(vec->name));
    strcpy(vec->name, name);
    snprintf(path, sizeof(path), "%s/%s.hex", MRC_TEST_VECTORS, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        ck_assert_msg(strchr(line, '\n') || feof(f), "%s:%d: line too long", path, lineno);
        parse_line(vec, line, path, lineno);
    }
    fclose(f);
    ck_assert_msg(vec->len > 0 && vec->nfields > 0, "%s: no bytes or no fields", path);
    return vec;
}

void mrc_test_vec_free(mrc_test_vec *vec)
{
    free(vec);
}

const char *mrc_test_vec_get(const mrc_test_vec *vec, const char *name)
{
    for (size_t i = 0; i < vec->nfields; i++) {
        if (strcmp(vec->fields[i].name, name) == 0) {
            return vec->fields[i].value;
        }
    }
    return NULL;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(a, b);
}

size_t mrc_test_vec_names(char (*names)[64], size_t max)
{
    size_t n = 0;
    DIR *dir = opendir(MRC_TEST_VECTORS);
    ck_assert_msg(dir != NULL, "cannot open %s", MRC_TEST_VECTORS);
    for (struct dirent *de; (de = readdir(dir)) != NULL;) {
        size_t len = strlen(de->d_name);
        if (len <= 4 || strcmp(de->d_name + len - 4, ".hex") != 0) {
            continue;
        }
        ck_assert_uint_lt(n, max);
        ck_assert_uint_lt(len - 4, 64);
        memcpy(names[n], de->d_name, len - 4);
        names[n][len - 4] = '\0';
        n++;
    }
    closedir(dir);
    qsort(names, n, sizeof(names[0]), cmp_names);
    return n;
}
