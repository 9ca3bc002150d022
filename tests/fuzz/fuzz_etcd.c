/* SPDX-License-Identifier: MIT */
/* libFuzzer target: what an etcd member answers, as util_etcd reads it: a range's kvs
 * (util_etcd_kvs) and the numbers in it (util_etcd_int) out of arbitrary JSON, base64 strings
 * (util_etcd_unb64) and a prefix's range end (util_etcd_prefix_end). */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_etcd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the parser: say which, then crash so that libFuzzer keeps the input. */
static void die(const char *what)
{
    fprintf(stderr, "fuzz_etcd: %s\n", what);
    abort();
}

/* |j| decoded; when it is taken, encoding the bytes and decoding that gives them again */
static void unb64_checked(json_object *j)
{
    size_t len = 0;
    char *dec = util_etcd_unb64(j, &len);
    if (!dec) {
        return;
    }
    size_t n = (size_t)json_object_get_string_len(j);
    if (n % 4 || len > n / 4 * 3 || len + 2 < n / 4 * 3 || dec[len] != '\0') {
        die("a decoding of the wrong length or without its NUL");
    }
    json_object *enc = util_etcd_b64(dec, len);
    if ((size_t)json_object_get_string_len(enc) != n) {
        die("the bytes of a base64 string encode to another length");
    }
    size_t len2 = 0;
    char *again = util_etcd_unb64(enc, &len2);
    if (!again || len2 != len || memcmp(again, dec, len) != 0) {
        die("encoded and decoded, the bytes came back otherwise");
    }
    free(again);
    json_object_put(enc);
    free(dec);
}

/* Every member of the answer, and the objects in its arrays, read as util_etcd reads them. */
static void walk(json_object *j, int depth)
{
    if (depth > 8) {
        return;
    }
    if (json_object_is_type(j, json_type_string)) {
        unb64_checked(j);
        return;
    }
    if (json_object_is_type(j, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(j) && i < 64; i++) {
            walk(json_object_array_get_idx(j, i), depth + 1);
        }
        return;
    }
    if (!json_object_is_type(j, json_type_object)) {
        return;
    }
    util_etcd_kv *v = (util_etcd_kv *)1;
    size_t n = 1;
    int rv = util_etcd_kvs(j, &v, &n);
    if (rv != 0) {
        if (rv != -EPROTO || v || n) {
            die("a refused range left kvs behind or said something else than -EPROTO");
        }
    } else {
        if (n && !v) {
            die("kvs counted but not given");
        }
        for (size_t i = 0; i < n; i++) {
            if (!v[i].key || !v[i].value || v[i].value[v[i].vlen] != '\0' ||
                strlen(v[i].value) > v[i].vlen) {
                die("a kv without its key or value, or a value of the wrong length");
            }
        }
        util_etcd_kvs_free(v, n);
    }
    json_object_object_foreach(j, key, val)
    {
        int64_t a = util_etcd_int(j, key, -1), b = util_etcd_int(j, key, -2);
        if (a != b && (a != -1 || b != -2)) {
            die("a number read otherwise with another default");
        }
        walk(val, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) {
        return 0;
    }
    /* the whole input as an answer */
    json_tokener *tok = json_tokener_new_ex(16);
    json_object *j = json_tokener_parse_ex(tok, (const char *)data, (int)size);
    json_tokener_free(tok);
    if (j) {
        walk(j, 0);
        json_object_put(j);
    }
    /* the whole input as one base64 string, NULs and all */
    json_object *s = json_object_new_string_len((const char *)data, (int)size);
    unb64_checked(s);
    json_object_put(s);
    /* the input up to its first NUL as a prefix: its end is after every key that has it */
    char *prefix = strndup((const char *)data, size);
    size_t plen = strlen(prefix);
    json_object *pe = util_etcd_prefix_end(prefix);
    size_t elen = 0;
    char *end = util_etcd_unb64(pe, &elen);
    if (!end || elen == 0 || elen > (plen ? plen : 1)) {
        die("a prefix's end that does not decode or is too long");
    }
    bool all = elen == 1 && end[0] == '\0'; /* every key from the prefix on */
    if (!all) {
        int c = memcmp(end, prefix, elen < plen ? elen : plen);
        if (c <= 0 || (elen <= plen && memcmp(end, prefix, elen - 1) != 0)) {
            die("a prefix's end that is not just after the prefix's keys");
        }
    } else {
        for (size_t i = 0; i < plen; i++) {
            if ((unsigned char)prefix[i] != 0xff) {
                die("every key, for a prefix that has an end");
            }
        }
    }
    free(end);
    json_object_put(pe);
    free(prefix);
    return 0;
}
