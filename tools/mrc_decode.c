/* SPDX-License-Identifier: MIT */
/* mrc-decode: the MRC packets of a pcap file, decoded by the engine's own wire decoder, one
 * JSON object per line. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_wire.h"

static const char usage[] = "usage: mrc-decode [--udp_port P] FILE.pcap\n"
                            "  --udp_port P   MRC's UDP destination port (4791; 4971 is accepted "
                            "too, as by the engine)\n";

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
#define NH_UDP 17
#define NH_IPV6 41
/* mrc_wire_decode takes this port besides |udp_port| (the MRC 1.0 PDF's transposition); the
 * filter must let through what the engine would read. */
#define ALT_UDP_PORT 4971

typedef struct pcap_in {
    FILE *f;
    bool swap; /* written on a host of the other byte order */
    uint32_t linktype;
    uint8_t *buf; /* PCAP_SNAP_MAX bytes */
} pcap_in;

/* What the receiving engine is configured with: the settings the tool decodes by. */
typedef struct dec_cfg {
    uint16_t udp_port;
    uint8_t dscp_trimmed, dscp_trimmed_lasthop;
    bool icrc;
} dec_cfg;

/* Where a frame's MRC packet is: |outer| NULL when the inner packet came bare (UDP mode). */
typedef struct mrc_view {
    const uint8_t *outer;
    size_t outerlen; /* outer header and what arrived of the inner packet */
    const uint8_t *inner;
    size_t innerlen;
    bool partial; /* the IPv6 header declares more than the frame holds */
} mrc_view;

static uint32_t rd32(const pcap_in *in, const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return in->swap ? __builtin_bswap32(v) : v;
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
        type = len >= off ? ld16(p + 12) : 0;
        break;
    case LINKTYPE_LINUX_SLL:
        off = 16;
        type = len >= off ? ld16(p + 14) : 0;
        break;
    case LINKTYPE_LINUX_SLL2:
        off = 20;
        type = len >= off ? ld16(p) : 0;
        break;
    default: /* raw IP: the version nibble tells IPv4 from IPv6 */
        off = 0;
        type = len >= 1 && p[0] >> 4 == 6 ? ETHERTYPE_IPV6_ : 0;
        break;
    }
    while ((type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) && len >= off + 4) {
        type = ld16(p + off + 2);
        off += 4;
    }
    if (type != ETHERTYPE_IPV6_ || len < off + MRC_IP6_LEN || p[off] >> 4 != 6) {
        return NULL;
    }
    *piplen = len - off;
    return p + off;
}

/*
 * Finds an MRC packet in IPv6 packet |ip|: IPv6-in-IPv6 (SRv6 mode) or bare (UDP mode), whose
 * inner packet is IPv6/UDP to the MRC port. Returns false for anything else: not for us.
 * Lengths come from the IPv6 headers, so Ethernet padding or an FCS is not taken as packet.
 */
static bool frame_mrc(const uint8_t *ip, size_t iplen, const dec_cfg *cfg, mrc_view *v)
{
    size_t wire = MRC_IP6_LEN + (size_t)ld16(ip + 4);

    memset(v, 0, sizeof(*v));
    v->partial = iplen < wire;
    if (iplen > wire) {
        iplen = wire;
    }
    if (ip[6] == NH_IPV6) {
        v->outer = ip;
        v->outerlen = iplen;
        v->inner = ip + MRC_IP6_LEN;
        v->innerlen = iplen - MRC_IP6_LEN;
    } else if (ip[6] == NH_UDP) {
        v->inner = ip;
        v->innerlen = iplen;
    } else {
        return false;
    }
    if (v->innerlen < MRC_IP6_LEN + MRC_UDP_LEN || v->inner[0] >> 4 != 6 || v->inner[6] != NH_UDP) {
        return false;
    }
    uint16_t dport = ld16(v->inner + MRC_IP6_LEN + 2);
    return dport == cfg->udp_port || dport == ALT_UDP_PORT;
}

static void print_ip6(const char *name, const mrc_ip6 *ip)
{
    char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, ip->src, src, sizeof(src));
    inet_ntop(AF_INET6, ip->dst, dst, sizeof(dst));
    printf(",\"%s\":{\"src\":\"%s\",\"dst\":\"%s\",\"flow\":%" PRIu32 ",\"tc\":%u,\"hlim\":%u}",
           name, src, dst, ip->flowlabel, ip->tc, ip->hlim);
}

static void print_ts(const char *name, const mrc_tseth *ts)
{
    printf(",\"%s\":{\"ts\":%u,\"tsr\":%u,\"fmt\":%u}", name, ts->ts, ts->tsr, ts->fmt);
}

static const char *tf(unsigned bit)
{
    return bit ? "true" : "false";
}

/* The headers the packet's opcode carries, keyed by their mrc_pkt member names. */
static void print_ext(const mrc_pkt *k)
{
    if (k->has & MRC_HAS_METH) {
        printf(",\"meth\":{\"rqmsn\":%u,\"msn\":%u}", k->meth.rqmsn, k->meth.msn);
    }
    if (k->has & MRC_HAS_TSETH) {
        print_ts("tseth", &k->tseth);
    }
    if (k->has & MRC_HAS_RETH) {
        printf(",\"reth\":{\"va\":%" PRIu64 ",\"rkey\":%" PRIu32 ",\"dmalen\":%" PRIu32 "}",
               k->reth.va, k->reth.rkey, k->reth.dmalen);
    }
    if (k->has & MRC_HAS_IMM) {
        printf(",\"imm\":%" PRIu32, k->imm);
    }
    if (k->has & MRC_HAS_AETH) {
        printf(",\"aeth\":{\"syndrome\":%u,\"msn\":%" PRIu32 "}", k->aeth.syndrome, k->aeth.msn);
    }
    if (k->has & MRC_HAS_SETH) {
        const mrc_seth *s = &k->seth;
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
    if (k->has & MRC_HAS_NETH) {
        const mrc_neth *n = &k->neth;
        printf(",\"neth\":{\"reason\":%u,\"vendor\":%u,\"entropy\":%" PRIu32
               ",\"spdcid\":%u,\"dpdcid\":%u,\"nack_psn\":%" PRIu32
               ",\"cc_type\":%u,\"cc_flags\":%u,\"ts\":%u}",
               n->reason, n->vendor, n->entropy, n->spdcid, n->dpdcid, n->nack_psn, n->cc_type,
               n->cc_flags, n->ts);
    }
    if (k->has & MRC_HAS_PETH) {
        printf(",\"peth\":{\"vendor\":%u,\"probe_id\":%u,\"spdcid\":%u,\"dpdcid\":%u",
               k->peth.vendor, k->peth.probe_id, k->peth.spdcid, k->peth.dpdcid);
        print_ts("ts", &k->peth.ts);
        printf("}");
    }
    if (k->has & MRC_HAS_ERTH) {
        printf(",\"erth\":{\"op\":%u,\"vendor\":%u,\"port_status\":%" PRIu32, k->erth.op,
               k->erth.vendor, k->erth.port_status);
        print_ts("ts", &k->erth.ts);
        printf("}");
    }
    if (k->has & MRC_HAS_EETH) {
        printf(",\"eeth\":{\"op\":%u,\"entropy\":%" PRIu32 ",\"svc_time_ns\":%" PRIu32
               ",\"ts\":%u}",
               k->eeth.op, k->eeth.entropy, k->eeth.svc_time_ns, k->eeth.ts);
    }
}

static void print_pkt(uint64_t frame, const mrc_ip6 *outer, const mrc_pkt *k)
{
    /* the EV as the engine reads it (mrc_wire.c ev_get): inner flow label bits 15:0 above the
     * inner UDP source port; the outer flow label is the sender's copy, for ECMP on the way */
    uint32_t ev = (k->ip.flowlabel & 0xffff) << 16 | k->udp.sport;
    const mrc_bth *b = &k->bth;

    printf("{\"frame\":%" PRIu64, frame);
    if (outer) {
        print_ip6("outer", outer);
    }
    print_ip6("inner", &k->ip);
    printf(",\"udp\":{\"sport\":%u,\"dport\":%u,\"csum\":%u}", k->udp.sport, k->udp.dport,
           k->udp.csum);
    printf(",\"bth\":{\"opcode\":%u,\"se\":%s,\"mig\":%s,\"padcnt\":%u,\"pkey\":%u,\"resv8a\":%u,"
           "\"dqpn\":%" PRIu32 ",\"ackreq\":%s,\"rtx\":%s,\"ts\":%s,\"psn\":%" PRIu32 "}",
           b->opcode, tf(b->se), tf(b->mig), b->padcnt, b->pkey, b->resv8a, b->dqpn, tf(b->ackreq),
           tf(b->rtx), tf(b->ts), b->psn);
    print_ext(k);
    printf(",\"payload_len\":%zu,\"trimmed\":%s,\"ev\":%" PRIu32 "}\n", k->payload_len,
           tf(k->trimmed), ev);
}

/* Decodes one MRC packet as the receiving engine would; returns 0 or a negative MRC_WIRE_E*. */
static int decode_one(uint64_t frame, const mrc_view *v, const dec_cfg *cfg)
{
    mrc_ip6 outer = {0};
    mrc_pkt pkt;
    int rv = 0;

    if (v->outer) {
        rv = mrc_wire_outer_decode(v->outer, v->outerlen, &outer);
        if (rv != 0) {
            goto out;
        }
    }
    /* as mrc_ctx.c read_one: a trimming switch re-marks the DSCP of the header it forwards by
     * (the outer one in SRv6 mode), and only then may the packet end before its lengths say */
    unsigned dscp = (v->outer ? outer.tc : (unsigned)(ld16(v->inner) >> 4) & 0xff) >> 2;
    bool trimmed = dscp == cfg->dscp_trimmed || dscp == cfg->dscp_trimmed_lasthop;
    unsigned flags = (cfg->icrc ? 0 : MRC_DECODE_NO_ICRC) | (trimmed ? MRC_DECODE_TRIMMED : 0);
    rv = mrc_wire_decode(v->inner, v->innerlen, cfg->udp_port, flags, &pkt);
    if (rv != 0) {
        goto out;
    }
    print_pkt(frame, v->outer ? &outer : NULL, &pkt);
out:
    return rv;
}

/* Prints every MRC packet of |path|; counts in |*perrors| those the decoder refuses. */
static int decode_file(const char *path, const dec_cfg *cfg, unsigned *perrors, char *errmsg,
                       size_t errmsglen)
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
        mrc_view v;
        frame++;
        const uint8_t *ip = frame_ip6(in.linktype, in.buf, caplen, &iplen);
        if (!ip || !frame_mrc(ip, iplen, cfg, &v)) {
            continue;
        }
        /* a snapshot length cut: the decoder would call it short, which the packet was not */
        if (caplen < origlen && v.partial) {
            printf("{\"frame\":%" PRIu64 ",\"error\":\"cut by the capture's snapshot length "
                   "(%" PRIu32 " of %" PRIu32 " bytes)\"}\n",
                   frame, caplen, origlen);
            ++*perrors;
            continue;
        }
        int err = decode_one(frame, &v, cfg);
        if (err != 0) {
            printf("{\"frame\":%" PRIu64 ",\"error\":\"%s\"}\n", frame, mrc_wire_strerror(err));
            ++*perrors;
        }
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

static int port_arg(const char *s, uint16_t *pport)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v == 0 || v > 65535) {
        return -EINVAL;
    }
    *pport = (uint16_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"udp_port", 1, 0, 'p'}, {"udp-port", 1, 0, 'p'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    mrc_settings s;
    mrc_settings_default(&s);
    dec_cfg cfg = {.udp_port = s.udp_port,
                   .dscp_trimmed = s.dscp_trimmed,
                   .dscp_trimmed_lasthop = s.dscp_trimmed_lasthop,
                   .icrc = s.icrc};
    int opt;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (opt == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        if (opt != 'p' || port_arg(optarg, &cfg.udp_port) != 0) {
            if (opt == 'p') {
                fprintf(stderr, "mrc-decode: bad value for --udp_port: '%s'\n", optarg);
            }
            fputs(usage, stderr);
            return 2;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "mrc-decode: %s\n%s", optind < argc ? "one file only" : "no file", usage);
        return 2;
    }
    char errmsg[512];
    unsigned errors = 0;
    int rv = decode_file(argv[optind], &cfg, &errors, errmsg, sizeof(errmsg));
    fflush(stdout);
    if (rv != 0) {
        fprintf(stderr, "mrc-decode: %s\n", errmsg);
        return 2;
    }
    return errors ? 1 : 0;
}
