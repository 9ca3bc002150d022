/* SPDX-License-Identifier: MIT */
/* mrc-decode: the MRC packets of a pcap file, decoded by the engine's own decoder
 * (mrc_packet_decode), one JSON object per line. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mrcfab/mrc.h>

#include "util_opt.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAPNG_MAGIC 0x0a0d0d0au
#define PCAP_HDR_LEN 24
#define PCAP_REC_LEN 16
/* libpcap's MAXIMUM_SNAPLEN: a record claiming more is a damaged file, not a packet */
#define PCAP_SNAP_MAX 262144u

#define LINKTYPE_ETHERNET 1
#define LINKTYPE_RAW 101
#define LINKTYPE_LINUX_SLL 113
#define LINKTYPE_IPV6 229
#define LINKTYPE_LINUX_SLL2 276

#define ETHERTYPE_IPV6_ 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define IP6_LEN 40

typedef struct pcap_in {
    FILE *f;
    bool swap; /* written on a host of the other byte order */
    uint32_t linktype;
    uint8_t *buf; /* PCAP_SNAP_MAX bytes */
} pcap_in;

static uint32_t rd32(const pcap_in *in, const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return in->swap ? __builtin_bswap32(v) : v;
}

/* A big-endian 16-bit field of a frame. */
static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* Reads the file header; on failure |errmsg| says what is wrong with the file. */
static int pcap_open(pcap_in *in, const char *path, char *errmsg, size_t errmsglen)
{
    uint8_t h[PCAP_HDR_LEN];
    uint32_t magic;
    int rv = 0;

    memset(in, 0, sizeof(*in));
    in->f = fopen(path, "rb");
    if (!in->f) {
        rv = -errno;
        snprintf(errmsg, errmsglen, "cannot open %s: %s", path, strerror(errno));
        goto out;
    }
    if (fread(h, 1, sizeof(h), in->f) != sizeof(h)) {
        rv = -EINVAL;
        snprintf(errmsg, errmsglen, "%s: not a pcap file (shorter than a pcap header)", path);
        goto out;
    }
    memcpy(&magic, h, 4);
    if (magic == PCAPNG_MAGIC) {
        rv = -ENOTSUP;
        snprintf(errmsg, errmsglen,
                 "%s: pcapng is not supported; convert it: editcap -F pcap %s OUT.pcap", path,
                 path);
        goto out;
    }
    in->swap =
        magic == __builtin_bswap32(PCAP_MAGIC_US) || magic == __builtin_bswap32(PCAP_MAGIC_NS);
    if (!in->swap && magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS) {
        rv = -EINVAL;
        snprintf(errmsg, errmsglen, "%s: not a pcap file (magic 0x%08" PRIx32 ")", path, magic);
        goto out;
    }
    /* bits 16-31 of the link type field carry FCS length flags, not the link type */
    in->linktype = rd32(in, h + 20) & 0xffff;
    if (in->linktype != LINKTYPE_ETHERNET && in->linktype != LINKTYPE_LINUX_SLL &&
        in->linktype != LINKTYPE_LINUX_SLL2 && in->linktype != LINKTYPE_RAW &&
        in->linktype != LINKTYPE_IPV6) {
        rv = -ENOTSUP;
        snprintf(errmsg, errmsglen,
                 "%s: link type %" PRIu32 " is not supported (Ethernet 1, Linux cooked 113 and "
                 "276, raw IP 101 and 229 are)",
                 path, in->linktype);
        goto out;
    }
    in->buf = malloc(PCAP_SNAP_MAX);
    if (!in->buf) {
        rv = -ENOMEM;
        snprintf(errmsg, errmsglen, "out of memory");
    }
out:
    return rv;
}

static void pcap_close(pcap_in *in)
{
    if (in->f) {
        fclose(in->f);
    }
    free(in->buf);
}

/* The next record into |in->buf|: 0, -ENODATA at the end of the file, or -EINVAL for a record
 * the file cuts short or that claims more than a capture holds. */
static int pcap_next(pcap_in *in, uint32_t *pcaplen, uint32_t *porig)
{
    uint8_t h[PCAP_REC_LEN];
    size_t n = fread(h, 1, sizeof(h), in->f);
    int rv = 0;

    if (n == 0 && !ferror(in->f)) {
        rv = -ENODATA;
        goto out;
    }
    if (n != sizeof(h)) {
        rv = ferror(in->f) ? -EIO : -EINVAL;
        goto out;
    }
    *pcaplen = rd32(in, h + 8);
    *porig = rd32(in, h + 12);
    if (*pcaplen > PCAP_SNAP_MAX) {
        rv = -EINVAL;
        goto out;
    }
    if (fread(in->buf, 1, *pcaplen, in->f) != *pcaplen) {
        rv = ferror(in->f) ? -EIO : -EINVAL;
    }
out:
    return rv;
}

/* The IPv6 packet a frame carries, past its link header and any VLAN tags; NULL if none. */
static const uint8_t *frame_ip6(uint32_t linktype, const uint8_t *p, size_t len, size_t *piplen)
{
    size_t off;
    uint16_t type;

    switch (linktype) {
    case LINKTYPE_ETHERNET:
        off = 14;
        type = len >= off ? be16(p + 12) : 0;
        break;
    case LINKTYPE_LINUX_SLL:
        off = 16;
        type = len >= off ? be16(p + 14) : 0;
        break;
    case LINKTYPE_LINUX_SLL2:
        off = 20;
        type = len >= off ? be16(p) : 0;
        break;
    default: /* raw IP: the version nibble tells IPv4 from IPv6 */
        off = 0;
        type = len >= 1 && p[0] >> 4 == 6 ? ETHERTYPE_IPV6_ : 0;
        break;
    }
    while ((type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) && len >= off + 4) {
        type = be16(p + off + 2);
        off += 4;
    }
    if (type != ETHERTYPE_IPV6_ || len < off + IP6_LEN || p[off] >> 4 != 6) {
        return NULL;
    }
    *piplen = len - off;
    return p + off;
}

static void print_ip6(const char *name, const mrc_packet_ip6 *ip)
{
    char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, ip->src, src, sizeof(src));
    inet_ntop(AF_INET6, ip->dst, dst, sizeof(dst));
    printf(",\"%s\":{\"src\":\"%s\",\"dst\":\"%s\",\"flow\":%" PRIu32 ",\"tc\":%u,\"hlim\":%u}",
           name, src, dst, ip->flowlabel, ip->tc, ip->hlim);
}

static void print_ts(const char *name, const mrc_packet_tseth *ts)
{
    printf(",\"%s\":{\"ts\":%u,\"tsr\":%u,\"fmt\":%u}", name, ts->ts, ts->tsr, ts->fmt);
}

static const char *tf(unsigned bit)
{
    return bit ? "true" : "false";
}

/* The headers the packet's opcode carries, keyed by their mrc_packet member names. */
static void print_ext(const mrc_packet *k)
{
    if (k->has & MRC_PACKET_HAS_METH) {
        printf(",\"meth\":{\"rqmsn\":%u,\"msn\":%u}", k->meth.rqmsn, k->meth.msn);
    }
    if (k->has & MRC_PACKET_HAS_TSETH) {
        print_ts("tseth", &k->tseth);
    }
    if (k->has & MRC_PACKET_HAS_RETH) {
        printf(",\"reth\":{\"va\":%" PRIu64 ",\"rkey\":%" PRIu32 ",\"dmalen\":%" PRIu32 "}",
               k->reth.va, k->reth.rkey, k->reth.dmalen);
    }
    if (k->has & MRC_PACKET_HAS_IMM) {
        printf(",\"imm\":%" PRIu32, k->imm);
    }
    if (k->has & MRC_PACKET_HAS_AETH) {
        printf(",\"aeth\":{\"syndrome\":%u,\"msn\":%" PRIu32 "}", k->aeth.syndrome, k->aeth.msn);
    }
    if (k->has & MRC_PACKET_HAS_SETH) {
        const mrc_packet_seth *s = &k->seth;
        printf(",\"seth\":{\"m\":%u,\"pr\":%u,\"ack_psn_offset\":%d,\"entropy\":%" PRIu32
               ",\"spdcid\":%u,\"dpdcid\":%u,\"cack_psn\":%" PRIu32
               ",\"cc_type\":%u,\"cc_flags\":%u,\"mpr\":%u,\"sack_offset\":%d,\"bitmap\":%" PRIu64
               "}",
               s->m, s->pr, s->ack_psn_offset, s->entropy, s->spdcid, s->dpdcid, s->cack_psn,
               s->cc_type, s->cc_flags, s->mpr, s->sack_offset, s->bitmap);
        printf(",\"cc\":{\"ts\":%u,\"ooo_count\":%u,\"rc\":%u,\"pen\":%u,\"rcvd_bytes\":%" PRIu32
               "}",
               k->cc.ts, k->cc.ooo_count, k->cc.rc, k->cc.pen, k->cc.rcvd_bytes);
    }
    if (k->has & MRC_PACKET_HAS_NETH) {
        const mrc_packet_neth *n = &k->neth;
        printf(",\"neth\":{\"reason\":%u,\"vendor\":%u,\"entropy\":%" PRIu32
               ",\"spdcid\":%u,\"dpdcid\":%u,\"nack_psn\":%" PRIu32
               ",\"cc_type\":%u,\"cc_flags\":%u,\"ts\":%u}",
               n->reason, n->vendor, n->entropy, n->spdcid, n->dpdcid, n->nack_psn, n->cc_type,
               n->cc_flags, n->ts);
    }
    if (k->has & MRC_PACKET_HAS_PETH) {
        printf(",\"peth\":{\"vendor\":%u,\"probe_id\":%u,\"spdcid\":%u,\"dpdcid\":%u",
               k->peth.vendor, k->peth.probe_id, k->peth.spdcid, k->peth.dpdcid);
        print_ts("ts", &k->peth.ts);
        printf("}");
    }
    if (k->has & MRC_PACKET_HAS_ERTH) {
        printf(",\"erth\":{\"op\":%u,\"vendor\":%u,\"port_status\":%" PRIu32, k->erth.op,
               k->erth.vendor, k->erth.port_status);
        print_ts("ts", &k->erth.ts);
        printf("}");
    }
    if (k->has & MRC_PACKET_HAS_EETH) {
        printf(",\"eeth\":{\"op\":%u,\"entropy\":%" PRIu32 ",\"svc_time_ns\":%" PRIu32
               ",\"ts\":%u}",
               k->eeth.op, k->eeth.entropy, k->eeth.svc_time_ns, k->eeth.ts);
    }
}

static void print_pkt(uint64_t frame, const mrc_packet *k)
{
    const mrc_packet_bth *b = &k->bth;

    printf("{\"frame\":%" PRIu64, frame);
    if (k->has & MRC_PACKET_HAS_OUTER) {
        print_ip6("outer", &k->outer);
    }
    print_ip6("inner", &k->inner);
    printf(",\"udp\":{\"sport\":%u,\"dport\":%u,\"csum\":%u}", k->udp.sport, k->udp.dport,
           k->udp.csum);
    printf(",\"bth\":{\"opcode\":%u,\"se\":%s,\"mig\":%s,\"padcnt\":%u,\"pkey\":%u,\"resv8a\":%u,"
           "\"dqpn\":%" PRIu32 ",\"ackreq\":%s,\"rtx\":%s,\"ts\":%s,\"psn\":%" PRIu32 "}",
           b->opcode, tf(b->se), tf(b->mig), b->padcnt, b->pkey, b->resv8a, b->dqpn, tf(b->ackreq),
           tf(b->rtx), tf(b->ts), b->psn);
    print_ext(k);
    printf(",\"payload_len\":%zu,\"trimmed\":%s,\"ev\":%" PRIu32 "}\n", k->payload_len,
           tf(k->trimmed), k->ev);
}

/* Prints every MRC packet of |path|; counts in |*perrors| those the decoder refuses. */
static int decode_file(const char *path, const mrc_settings *settings, unsigned *perrors,
                       char *errmsg, size_t errmsglen)
{
    pcap_in in;
    uint64_t frame = 0;
    uint32_t caplen, origlen;
    int rv = pcap_open(&in, path, errmsg, errmsglen);

    if (rv != 0) {
        goto out;
    }
    while ((rv = pcap_next(&in, &caplen, &origlen)) == 0) {
        size_t iplen;
        mrc_packet pkt;
        frame++;
        const uint8_t *ip = frame_ip6(in.linktype, in.buf, caplen, &iplen);
        if (!ip) {
            continue;
        }
        /* lengths come from the IPv6 header, so Ethernet padding or an FCS is not taken as
         * packet */
        size_t wire = IP6_LEN + (size_t)be16(ip + 4);
        bool partial = iplen < wire;
        if (iplen > wire) {
            iplen = wire;
        }
        int err = mrc_packet_decode(settings, ip, iplen, &pkt);
        if (err == MRC_PACKET_ENOTUDP || err == MRC_PACKET_EPORT) {
            continue; /* not MRC traffic */
        }
        /* a snapshot length cut: the decoder would call it short, which the packet was not */
        if (caplen < origlen && partial) {
            printf("{\"frame\":%" PRIu64 ",\"error\":\"cut by the capture's snapshot length "
                   "(%" PRIu32 " of %" PRIu32 " bytes)\"}\n",
                   frame, caplen, origlen);
            ++*perrors;
            continue;
        }
        if (err != 0) {
            printf("{\"frame\":%" PRIu64 ",\"error\":\"%s\"}\n", frame, mrc_packet_strerror(err));
            ++*perrors;
            continue;
        }
        print_pkt(frame, &pkt);
    }
    if (rv == -ENODATA) {
        rv = 0;
    } else {
        snprintf(errmsg, errmsglen, "%s: record %" PRIu64 ": %s", path, frame + 1,
                 rv == -EIO ? strerror(EIO) : "cut short or damaged");
    }
out:
    pcap_close(&in);
    return rv;
}

static uint64_t udp_port;

/* clang-format off */
static const util_opt opts[] = {
    {.name = "udp-port", .kind = UTIL_OPT_UINT, .def = STR(MRC_DEFAULT_UDP_PORT), .min = 1, .max = 65535, .dest = &udp_port, .arg = "PORT", .help = "MRC's UDP destination port (" STR(MRC_ALT_UDP_PORT) " is accepted too, as by the engine)"},
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const tables[] = {opts, NULL};

static const util_cli cli = {
    .prog = "mrc-decode",
    .usage = "mrc-decode [--udp-port PORT] FILE.pcap",
    .about = "Prints the MRC packets of a pcap file (Ethernet, Linux cooked or raw IP; SRv6 or "
             "UDP mode), one JSON\nobject per line, as the engine's receive path decodes them "
             "(mrc_packet_decode, the default\nmrc_settings): every header field, the payload "
             "length, whether it was trimmed and its EV. A packet\nthe engine would refuse is a "
             "line {\"frame\":N,\"error\":\"...\"}; frames that are not MRC are skipped.",
    .tables = tables,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "FILE.pcap",
    .more = "The exit status is 1 also when an MRC packet was refused, and 2 when the file "
            "cannot be read or\nis not a pcap.\n",
};

int main(int argc, char **argv)
{
    char **files = NULL;
    int rv = util_cli_parse(&cli, argc, argv, NULL, &files);
    if (rv != UTIL_CLI_RUN) {
        return rv;
    }
    mrc_settings s;
    mrc_settings_default(&s);
    s.udp_port = (uint16_t)udp_port;
    char errmsg[512];
    unsigned errors = 0;
    rv = decode_file(files[0], &s, &errors, errmsg, sizeof(errmsg));
    free(files);
    fflush(stdout);
    if (rv != 0) {
        fprintf(stderr, "mrc-decode: %s\n", errmsg);
        return UTIL_EXIT_USAGE;
    }
    return errors ? UTIL_EXIT_FAIL : UTIL_EXIT_OK;
}
