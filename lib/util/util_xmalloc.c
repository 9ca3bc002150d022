/* SPDX-License-Identifier: MIT */
/* Aborting allocation for daemons and tools. */
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void oom(size_t size)
{
    util_log_write(UTIL_LOG_ERR, "out of memory allocating %zu bytes", size);
    abort();
}

void *util_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) {
        oom(size);
    }
    return p;
}

void *util_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        oom(n * size);
    }
    return p;
}

void *util_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q) {
        oom(size);
    }
    return q;
}

char *util_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = util_xmalloc(n);
    memcpy(p, s, n);
    return p;
}
