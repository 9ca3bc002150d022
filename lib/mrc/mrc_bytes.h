/* SPDX-License-Identifier: MIT */
/* Big-endian loads and stores for the wire format, shared by its inline encoders. */
#ifndef MRC_BYTES_H
#define MRC_BYTES_H

#include <stdint.h>
#include <string.h>

/* Big-endian loads and stores, alignment-free. memcpy of a fixed size plus a byte swap is one
 * load or store and one bswap on little-endian hosts; byte-by-byte shifts, which compilers do
 * not always fuse, cost several instructions per field on every packet. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BE16(x) __builtin_bswap16(x)
#define BE32(x) __builtin_bswap32(x)
#define BE64(x) __builtin_bswap64(x)
#else
#define BE16(x) (x)
#define BE32(x) (x)
#define BE64(x) (x)
#endif

static inline uint16_t ld16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return BE16(v);
}

static inline uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return BE32(v);
}

/* A 24-bit field is always preceded by a byte of the same header: load 32 bits ending with it. */
static inline uint32_t ld24(const uint8_t *p)
{
    return ld32(p - 1) & 0xffffff;
}

static inline uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return BE64(v);
}

/* The ICRC is the one little-endian field. */
static inline uint32_t ld32le(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline void st16(uint8_t *p, uint32_t v)
{
    uint16_t x = BE16((uint16_t)v);
    memcpy(p, &x, 2);
}

static inline void st24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    st16(p + 1, v);
}

static inline void st32(uint8_t *p, uint32_t v)
{
    uint32_t x = BE32(v);
    memcpy(p, &x, 4);
}

static inline void st64(uint8_t *p, uint64_t v)
{
    uint64_t x = BE64(v);
    memcpy(p, &x, 8);
}

static inline void st32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
