/* SPDX-License-Identifier: MIT */
/* The UDP checksum of an IPv6 packet (RFC 8200 §8.1, RFC 768), which IPv6 makes mandatory:
 * a kernel UDP socket, and tshark's validation, drop a packet whose checksum is 0 or wrong.
 * The ones' complement sum does not depend on byte order (RFC 1071 §2(B)): the words are added
 * as the machine loads them and the folded sum stored the same way, which lets the loop add
 * whole 64-bit words; a data packet is up to 8 KiB, summed once per transmission (32-bit words
 * into a 64-bit sum took 4,300 instructions for a 4 KiB packet, these 2,000). */
#include <mrcfab/mrc.h>
#include <string.h>

#define IP6_LEN 40
#define UDP_LEN 8

/* One 64-bit word into the sum, the carry out of it added back in (end-around carry: the
 * ones' complement sum of 64-bit words folds to that of the 16-bit words, RFC 1071 §2(C)). */
static inline uint64_t add64(uint64_t acc, uint64_t w)
{
    acc += w;
    return acc + (acc < w);
}

static uint64_t add_words(uint64_t acc, const uint8_t *p, size_t n)
{
    uint64_t a0 = 0, a1 = 0, w0, w1, w2, w3;
    size_t i = 0;
    /* two chains of carries, four words a turn: the adds of one overlap those of the other */
    for (; i + 32 <= n; i += 32) {
        memcpy(&w0, p + i, 8);
        memcpy(&w1, p + i + 8, 8);
        memcpy(&w2, p + i + 16, 8);
        memcpy(&w3, p + i + 24, 8);
        a0 = add64(add64(a0, w0), w2);
        a1 = add64(add64(a1, w1), w3);
    }
    for (; i + 8 <= n; i += 8) {
        memcpy(&w0, p + i, 8);
        a0 = add64(a0, w0);
    }
    if (i < n) {
        /* the tail, zero-filled in place: an odd last byte is the high byte of its word */
        uint8_t t[8] = {0};
        memcpy(t, p + i, n - i);
        memcpy(&w0, t, 8);
        a1 = add64(a1, w0);
    }
    return add64(add64(acc, a0), a1);
}

static uint16_t fold(uint64_t s)
{
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffu) + (s >> 16);
    s = (s & 0xffffu) + (s >> 16);
    return (uint16_t)s;
}

/* The sum of the pseudo-header and the UDP part (header and payload, |ulen| bytes). */
static uint16_t sum_udp6(const uint8_t *pkt, size_t ulen)
{
    const uint8_t ph[8] = {(uint8_t)(ulen >> 24),
                           (uint8_t)(ulen >> 16),
                           (uint8_t)(ulen >> 8),
                           (uint8_t)ulen,
                           0,
                           0,
                           0,
                           17};
    uint64_t acc = add_words(0, pkt + 8, 32); /* source and destination addresses */
    acc = add_words(acc, ph, sizeof(ph));
    return fold(add_words(acc, pkt + IP6_LEN, ulen));
}

static size_t udp_len_of(const uint8_t *pkt, size_t len)
{
    if (len < IP6_LEN + UDP_LEN || pkt[0] >> 4 != 6 || pkt[6] != 17) {
        return 0;
    }
    size_t ulen = (size_t)pkt[IP6_LEN + 4] << 8 | pkt[IP6_LEN + 5];
    return ulen >= UDP_LEN && IP6_LEN + ulen <= len ? ulen : 0;
}

int mrc_udp6_csum_set(uint8_t *pkt, size_t len)
{
    size_t ulen = udp_len_of(pkt, len);
    if (!ulen) {
        return MRC_ERR_INVAL;
    }
    memset(pkt + IP6_LEN + 6, 0, 2);
    uint16_t c = (uint16_t)~sum_udp6(pkt, ulen);
    /* 0 means "no checksum", which IPv6 forbids: its ones' complement twin goes out instead */
    c = c ? c : 0xffff;
    memcpy(pkt + IP6_LEN + 6, &c, 2);
    return 0;
}

bool mrc_udp6_csum_ok(const uint8_t *pkt, size_t len)
{
    size_t ulen = udp_len_of(pkt, len);
    bool zero = ulen && pkt[IP6_LEN + 6] == 0 && pkt[IP6_LEN + 7] == 0;
    return ulen && !zero && sum_udp6(pkt, ulen) == 0xffff;
}
