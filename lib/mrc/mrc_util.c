/* SPDX-License-Identifier: MIT */
/* Engine utilities: allocation through the host's allocator, logging without stdio, names. */
#include <stdarg.h>

#include "mrc_internal.h"

void *mrc_alloc(mrc_context *ctx, size_t size)
{
    return ctx->set.alloc.malloc(size ? size : 1, ctx->set.alloc.user);
}

void *mrc_calloc(mrc_context *ctx, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        return NULL;
    }
    size_t total = n * size;
    void *p = mrc_alloc(ctx, total);
    if (p) {
        memset(p, 0, total ? total : 1);
    }
    return p;
}

void mrc_dealloc(mrc_context *ctx, void *p)
{
    if (p) {
        ctx->set.alloc.free(p, ctx->set.alloc.user);
    }
}

uint32_t mrc_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v) {
        p <<= 1;
    }
    return p;
}

static size_t put_uint(char *dest, size_t left, uint64_t v, unsigned base)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    size_t k = 0;
    for (; k < n && k < left; k++) {
        dest[k] = tmp[n - 1 - k];
    }
    return k;
}

/* %u (unsigned), %x (unsigned, hex), %lu/%lx (uint64_t) and %s: all the engine's logs need,
 * with no stdio in the engine. */
void mrc_log(mrc_context *ctx, uint64_t now, const char *fmt, ...)
{
    if (!ctx->set.cb.log) {
        return;
    }
    char buf[256];
    size_t n = 0, cap = sizeof(buf) - 1;
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f && n < cap; f++) {
        if (*f != '%') {
            buf[n++] = *f;
            continue;
        }
        f++;
        bool wide = *f == 'l';
        if (wide) {
            f++;
        }
        if (*f == 's') {
            for (const char *s = va_arg(ap, const char *); *s && n < cap; s++) {
                buf[n++] = *s;
            }
        } else if (*f == 'u' || *f == 'x') {
            uint64_t v = wide ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            n += put_uint(buf + n, cap - n, v, *f == 'x' ? 16 : 10);
        } else if (*f == '\0') {
            break;
        }
    }
    va_end(ap);
    buf[n] = '\0';
    ctx->set.cb.log(ctx->set.user, now, buf);
}

const char *mrc_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
    case MRC_ERR_INVAL:
        return "invalid argument";
    case MRC_ERR_NOMEM:
        return "out of memory";
    case MRC_ERR_FULL:
        return "queue full";
    case MRC_ERR_STATE:
        return "not allowed in this QP state";
    case MRC_ERR_NOTFOUND:
        return "not found";
    case MRC_ERR_PROTO:
        return "invalid packet";
    case MRC_ERR_NOBUF:
        return "buffer too small";
    case MRC_ERR_ACCESS:
        return "local buffer outside its memory region";
    case MRC_ERR_RETRY_EXC:
        return "retry count exceeded";
    case MRC_ERR_REM_ACCESS:
        return "remote access error";
    case MRC_ERR_REM_OP:
        return "remote operation error";
    case MRC_ERR_REM_INV_REQ:
        return "remote invalid request";
    default:
        return "unknown error";
    }
}

static const uint8_t nack_codes[MRC_NACK_REASONS] = {
    MRC_NACK_TRIMMED,     MRC_NACK_TRIMMED_LASTHOP, MRC_NACK_NO_BITMAP,   MRC_NACK_NO_PKT_BUFFER,
    MRC_NACK_NO_RESOURCE, MRC_NACK_PSN_OOR_WINDOW,  MRC_NACK_UNEXP_EVENT,
};

int mrc_nack_index(uint8_t reason)
{
    for (int i = 0; i < MRC_NACK_REASONS; i++) {
        if (nack_codes[i] == reason) {
            return i;
        }
    }
    return -1;
}

uint8_t mrc_nack_code(int index)
{
    return index >= 0 && index < MRC_NACK_REASONS ? nack_codes[index] : 0;
}

const char *mrc_nack_name(int index)
{
    static const char *const names[MRC_NACK_REASONS] = {
        "trimmed",     "trimmed_lasthop", "no_bitmap",   "no_pkt_buffer",
        "no_resource", "psn_oor_window",  "unexp_event",
    };
    return index >= 0 && index < MRC_NACK_REASONS ? names[index] : "unknown";
}
