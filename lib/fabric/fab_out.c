/* SPDX-License-Identifier: MIT */
/* A buffered text writer to a sink, with the few formatters the renders need, kept fast. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fab_internal.h"

void fab_out_init(fab_out *out, fab_sink_fn fn, void *user)
{
    out->fn = fn;
    out->user = user;
    out->err = 0;
    out->len = 0;
}

int fab_out_flush(fab_out *out)
{
    if (out->err == 0 && out->len > 0) {
        out->err = out->fn(out->user, out->buf, out->len);
    }
    out->len = 0;
    return out->err;
}

void fab_out_mem(fab_out *out, const char *data, size_t len)
{
    if (out->len + len > sizeof(out->buf)) {
        fab_out_flush(out);
        if (len > sizeof(out->buf)) {
            if (out->err == 0) {
                out->err = out->fn(out->user, data, len);
            }
            return;
        }
    }
    memcpy(out->buf + out->len, data, len);
    out->len += len;
}

void fab_out_str(fab_out *out, const char *s)
{
    fab_out_mem(out, s, strlen(s));
}

void fab_out_char(fab_out *out, char c)
{
    if (out->len == sizeof(out->buf)) {
        fab_out_flush(out);
    }
    out->buf[out->len++] = c;
}

void fab_out_uint(fab_out *out, uint64_t v)
{
    char tmp[24];
    size_t n = sizeof(tmp);
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    fab_out_mem(out, tmp + n, sizeof(tmp) - n);
}

static const char hexdig[] = "0123456789abcdef";

void fab_out_hex(fab_out *out, unsigned v)
{
    char tmp[8];
    size_t n = sizeof(tmp);
    do {
        tmp[--n] = hexdig[v & 15];
        v >>= 4;
    } while (v);
    fab_out_mem(out, tmp + n, sizeof(tmp) - n);
}

char *fab_addr_str(const uint8_t addr[16], char *dest)
{
    unsigned g[8];
    for (int i = 0; i < 8; i++) {
        g[i] = (unsigned)addr[2 * i] << 8 | addr[2 * i + 1];
    }
    /* RFC 5952: the longest run of two or more zero groups, the first on a tie, becomes :: */
    int best = -1, bestlen = 1;
    for (int i = 0; i < 8;) {
        if (g[i] != 0) {
            i++;
            continue;
        }
        int j = i;
        while (j < 8 && g[j] == 0) {
            j++;
        }
        if (j - i > bestlen) {
            best = i;
            bestlen = j - i;
        }
        i = j;
    }
    char *p = dest;
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            *p++ = ':';
            *p++ = ':';
            i += bestlen - 1;
            continue;
        }
        if (i > 0 && i != best + bestlen) {
            *p++ = ':';
        }
        unsigned v = g[i];
        int shift = v >= 0x1000 ? 12 : v >= 0x100 ? 8 : v >= 0x10 ? 4 : 0;
        for (; shift >= 0; shift -= 4) {
            *p++ = hexdig[(v >> shift) & 15];
        }
    }
    *p = '\0';
    return dest;
}

void fab_out_addr(fab_out *out, const uint8_t addr[16])
{
    char tmp[48];
    fab_addr_str(addr, tmp);
    fab_out_str(out, tmp);
}

void fab_out_json_str(fab_out *out, const char *s)
{
    fab_out_char(out, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fab_out_char(out, '\\');
            fab_out_char(out, (char)c);
        } else if (c < 0x20) {
            char tmp[8];
            snprintf(tmp, sizeof(tmp), "\\u%04x", c);
            fab_out_str(out, tmp);
        } else {
            fab_out_char(out, (char)c);
        }
    }
    fab_out_char(out, '"');
}

void fab_out_fmt(fab_out *out, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0) {
        fab_out_mem(out, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
    }
}
