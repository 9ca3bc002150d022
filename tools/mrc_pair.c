/* SPDX-License-Identifier: MIT */
/* mrc-pair: two MRC engines over an in-memory multi-plane link with scripted faults; writes
 * known data, checks every byte at the far side, prints one JSON summary. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"

static const char usage[] =
    "usage: mrc-pair [options]\n"
    "  --msgs N          messages to write (100)          --size BYTES   message size (65536)\n"
    "  --loss P          random loss per packet           --reorder P    reordered share\n"
    "  --dup P           duplicated share                 --trim P       trimmed share "
    "(mid-fabric)\n"
    "  --trim-lasthop P  trimmed at the last hop          --ecn P        ECN-CE marked share\n"
    "  --ev-loss EV:P    loss on one EV (repeatable; EV of plane p, path i is p<<29 | i<<18)\n"
    "  --down-plane N@T  plane N fails at time T (ns; suffix us, ms or s)\n"
    "  --down-both       ... at both hosts (a link), not only the sender's NIC\n"
    "  --planes N (4)    --evs N (128)    --active N (all)    --min-active N (0)\n"
    "  --mtu BYTES (4096)    --rate GBPS per plane (100)    --delay NS one way (2000)\n"
    "  --mpr N (8, x128 PSNs)    --timeout T (8: 1.024us x 2^T)    --retry LIN,EXP (7,7)\n"
    "  --slots N (8)     --no-imm (plain writes)    --no-icrc    --dead-peer\n"
    "  --seed S (1)      --pcap FILE    --max-time T (60s simulated)\n";

static int number(const char *s, double *pv)
{
    char *end;
    errno = 0;
    *pv = strtod(s, &end);
    return errno || end == s || *end ? -1 : 0;
}

static int duration(const char *s, uint64_t *pv)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double mult = 1;
    if (!strcmp(end, "us")) {
        mult = 1e3;
    } else if (!strcmp(end, "ms")) {
        mult = 1e6;
    } else if (!strcmp(end, "s")) {
        mult = 1e9;
    } else if (*end && strcmp(end, "ns")) {
        return -1;
    }
    if (errno || end == s || v < 0) {
        return -1;
    }
    *pv = (uint64_t)(v * mult);
    return 0;
}

static int prob(const char *s, double *pv)
{
    return number(s, pv) == 0 && *pv >= 0 && *pv <= 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    enum {
        O_LOSS = 256,
        O_EVLOSS,
        O_REORDER,
        O_DUP,
        O_TRIM,
        O_TRIMLH,
        O_ECN,
        O_DOWN,
        O_DOWNBOTH,
        O_MSGS,
        O_SIZE,
        O_EVS,
        O_ACTIVE,
        O_MINACT,
        O_PLANES,
        O_MTU,
        O_RATE,
        O_DELAY,
        O_MPR,
        O_TIMEOUT,
        O_RETRY,
        O_SLOTS,
        O_NOIMM,
        O_NOICRC,
        O_DEAD,
        O_SEED,
        O_PCAP,
        O_MAXT
    };
    static const struct option opts[] = {{"loss", 1, 0, O_LOSS},
                                         {"ev-loss", 1, 0, O_EVLOSS},
                                         {"reorder", 1, 0, O_REORDER},
                                         {"dup", 1, 0, O_DUP},
                                         {"trim", 1, 0, O_TRIM},
                                         {"trim-lasthop", 1, 0, O_TRIMLH},
                                         {"ecn", 1, 0, O_ECN},
                                         {"down-plane", 1, 0, O_DOWN},
                                         {"down-both", 0, 0, O_DOWNBOTH},
                                         {"msgs", 1, 0, O_MSGS},
                                         {"size", 1, 0, O_SIZE},
                                         {"evs", 1, 0, O_EVS},
                                         {"active", 1, 0, O_ACTIVE},
                                         {"min-active", 1, 0, O_MINACT},
                                         {"planes", 1, 0, O_PLANES},
                                         {"mtu", 1, 0, O_MTU},
                                         {"rate", 1, 0, O_RATE},
                                         {"delay", 1, 0, O_DELAY},
                                         {"mpr", 1, 0, O_MPR},
                                         {"timeout", 1, 0, O_TIMEOUT},
                                         {"retry", 1, 0, O_RETRY},
                                         {"slots", 1, 0, O_SLOTS},
                                         {"no-imm", 0, 0, O_NOIMM},
                                         {"no-icrc", 0, 0, O_NOICRC},
                                         {"dead-peer", 0, 0, O_DEAD},
                                         {"seed", 1, 0, O_SEED},
                                         {"pcap", 1, 0, O_PCAP},
                                         {"max-time", 1, 0, O_MAXT},
                                         {"help", 0, 0, 'h'},
                                         {0, 0, 0, 0}};
    pair_cfg c;
    pair_cfg_default(&c);
    const char *pcap = NULL;
    int opt;
    double v;
    while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (opt) {
        case O_LOSS:
            bad = prob(optarg, &c.loss);
            break;
        case O_REORDER:
            bad = prob(optarg, &c.reorder);
            break;
        case O_DUP:
            bad = prob(optarg, &c.dup);
            break;
        case O_TRIM:
            bad = prob(optarg, &c.trim);
            break;
        case O_TRIMLH:
            bad = prob(optarg, &c.trim_lasthop);
            break;
        case O_ECN:
            bad = prob(optarg, &c.ecn);
            break;
        case O_EVLOSS: {
            const char *colon = strchr(optarg, ':');
            char *end;
            unsigned long ev = colon ? strtoul(optarg, &end, 0) : 0;
            bad = !colon || end != colon || c.n_ev_loss == PAIR_MAX_EV_LOSS ||
                  prob(colon + 1, &c.ev_loss[c.n_ev_loss].p) || ev > 0xffffffffu;
            if (!bad) {
                c.ev_loss[c.n_ev_loss++].ev = (uint32_t)ev;
            }
            break;
        }
        case O_DOWN: {
            const char *at = strchr(optarg, '@');
            char *end;
            long plane = strtol(optarg, &end, 10);
            bad = !at || end != at || plane < 0 || duration(at + 1, &c.down_at_ns);
            c.down_plane = (int)plane;
            break;
        }
        case O_DOWNBOTH:
            c.down_both = true;
            break;
        case O_MSGS:
            bad = number(optarg, &v) || v < 1 || v > 1e9;
            c.msgs = (unsigned)v;
            break;
        case O_SIZE:
            bad = number(optarg, &v) || v < 1 || v > (1 << 30);
            c.size = (uint32_t)v;
            break;
        case O_EVS:
            bad = number(optarg, &v) || v < 1 || v > 1024;
            c.evs = (unsigned)v;
            break;
        case O_ACTIVE:
            bad = number(optarg, &v) || v < 0 || v > 1024;
            c.active = (unsigned)v;
            break;
        case O_MINACT:
            bad = number(optarg, &v) || v < 0 || v > 1024;
            c.min_active = (unsigned)v;
            break;
        case O_PLANES:
            bad = number(optarg, &v) || v < 1 || v > 16;
            c.planes = (unsigned)v;
            break;
        case O_MTU:
            bad = number(optarg, &v) || v < 256 || v > 8192;
            c.mtu = (uint32_t)v;
            break;
        case O_RATE:
            bad = number(optarg, &c.rate_gbps) || c.rate_gbps <= 0;
            break;
        case O_DELAY:
            bad = duration(optarg, &c.delay_ns);
            break;
        case O_MPR:
            bad = number(optarg, &v) || v < 1 || v > 255;
            c.mpr = (uint8_t)v;
            break;
        case O_TIMEOUT:
            bad = number(optarg, &v) || v < 1 || v > 24;
            c.timeout = (uint8_t)v;
            break;
        case O_RETRY: {
            unsigned lin, exp;
            bad = sscanf(optarg, "%u,%u", &lin, &exp) != 2 || lin > 7 || exp > 25;
            c.linear_cnt = (uint8_t)lin;
            c.exp_cnt = (uint8_t)exp;
            break;
        }
        case O_SLOTS:
            bad = number(optarg, &v) || v < 1 || v > 4096;
            c.slots = (unsigned)v;
            break;
        case O_NOIMM:
            c.imm = false;
            break;
        case O_NOICRC:
            c.icrc = false;
            break;
        case O_DEAD:
            c.dead_peer = true;
            break;
        case O_SEED:
            bad = number(optarg, &v) || v < 0;
            c.seed = (uint64_t)v;
            break;
        case O_PCAP:
            pcap = optarg;
            break;
        case O_MAXT:
            bad = duration(optarg, &c.max_ns);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            bad = 1;
            break;
        }
        if (bad) {
            fprintf(stderr, "mrc-pair: bad value for --%s: '%s'\n%s", opts[opt - O_LOSS].name,
                    optarg ? optarg : "", usage);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mrc-pair: unexpected argument '%s'\n%s", argv[optind], usage);
        return 2;
    }
    if (c.down_plane >= (int)c.planes) {
        fprintf(stderr, "mrc-pair: --down-plane %d: there are %u planes\n", c.down_plane, c.planes);
        return 2;
    }
    if (pcap && !(c.pcap = fopen(pcap, "wb"))) {
        fprintf(stderr, "mrc-pair: cannot write %s: %s\n", pcap, strerror(errno));
        return 1;
    }
    pair *p;
    int rv = pair_new(&c, &p);
    if (rv != 0) {
        fprintf(stderr, "mrc-pair: cannot set up the engines: %s\n", mrc_strerror(rv));
        return 1;
    }
    pair_run(p);
    pair_result r;
    pair_result_get(p, &r);
    pair_result_json(&r, stdout);
    pair_free(p);
    if (c.pcap) {
        fclose(c.pcap);
    }
    bool ok = r.messages_completed == c.msgs && r.bytes_corrupt == 0 && !r.qp_error;
    return ok ? 0 : 1;
}
