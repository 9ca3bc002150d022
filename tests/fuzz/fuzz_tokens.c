/* SPDX-License-Identifier: MIT */
/* libFuzzer target: tokens files, through util_auth_parse (the text util_auth_load reads). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the parser: say which, then crash so that libFuzzer keeps the input. */
static void die(const char *what)
{
    fprintf(stderr, "fuzz_tokens: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    util_auth a;
    char err[512] = "";
    int rv = util_auth_parse((const char *)data, size, "fuzz", &a, err, sizeof(err));
    if (rv != 0) {
        if (a.n || a.tokens || a.slots || !err[0] || strncmp(err, "fuzz", 4) != 0) {
            die("a refusal left tokens behind or said nothing about the text");
        }
        return 0;
    }
    if (a.n == 0 || a.nslots < 2 * a.n || (a.nslots & (a.nslots - 1))) {
        die("a table without tokens, more than half full or not a power of two");
    }
    size_t used = 0;
    for (size_t s = 0; s < a.nslots; s++) {
        if (a.slots[s] > a.n) {
            die("a slot points past the tokens");
        }
        used += a.slots[s] != 0;
    }
    if (used != a.n) {
        die("a token without a slot, or one in two");
    }
    for (size_t i = 0; i < a.n; i++) {
        if (a.tokens[i].role <= UTIL_ROLE_NONE || a.tokens[i].role > UTIL_ROLE_ADMIN ||
            !a.tokens[i].name[0]) {
            die("a token without a role or a name");
        }
    }
    /* the text's first line as a bearer: found only as a token of the table */
    const uint8_t *nl = memchr(data, '\n', size);
    size_t len = nl ? (size_t)(nl - data) : size;
    const util_token *t = util_auth_findn(&a, (const char *)data, len);
    if (t && (t < a.tokens || t >= a.tokens + a.n)) {
        die("a lookup found something not of the table");
    }
    /* the same text parses the same way */
    util_auth b;
    if (util_auth_parse((const char *)data, size, "fuzz", &b, err, sizeof(err)) != 0 ||
        b.n != a.n || memcmp(a.tokens[0].digest, b.tokens[0].digest, 32) != 0) {
        die("the same text parsed twice gave two tables");
    }
    util_auth_free(&b);
    util_auth_free(&a);
    return 0;
}
