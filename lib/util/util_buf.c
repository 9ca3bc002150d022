/* SPDX-License-Identifier: MIT */
/* A growing text buffer, for documents written straight out rather than built as objects:
 * a page of a hundred links renders several times faster this way than through json-c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static void reserve(util_buf *b, size_t more)
{
    if (b->len + more + 1 > b->cap) {
        b->cap = (b->len + more + 1) * 2;
        b->s = util_xrealloc(b->s, b->cap);
    }
}

int util_buf_put(void *buf, const char *data, size_t len)
{
    util_buf *b = buf;
    reserve(b, len);
    memcpy(b->s + b->len, data, len);
    b->len += len;
    b->s[b->len] = '\0';
    return 0;
}

void util_buf_printf(util_buf *b, const char *fmt, ...)
{
    va_list ap;
    /* room first: vsnprintf into a buffer too small to hold the text is many times slower */
    reserve(b, 256);
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void util_buf_json_str(util_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    reserve(b, strlen(s) + 2);
    b->s[b->len++] = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            util_buf_put(b, e, 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            util_buf_put(b, e, 6);
        } else {
            util_buf_put(b, (const char *)&c, 1);
        }
    }
    util_buf_put(b, "\"", 1);
}
