/* SPDX-License-Identifier: MIT */
/* mrc-pair: two MRC engines over an in-memory multi-plane link with scripted faults; writes
 * known data, checks every byte at the far side, prints one JSON summary. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "util_opt.h"

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

/* The options' storage; the link's settings are made from it after the parse. */
static struct {
    double loss, reorder, dup, trim, trim_lasthop, ecn, rate;
    uint64_t msgs, size, evs, active, min_active, planes, mtu, mpr, timeout, slots, seed;
    char *ev_loss, *down_plane, *delay, *retry, *max_time, *pcap;
    bool down_both, imm, icrc, dead_peer;
} o;

/* --ev-loss is repeatable and the layer keeps one value per option: each is taken here as it
 * is set. */
static pair_ev_loss ev_losses[PAIR_MAX_EV_LOSS];
static unsigned n_ev_losses;

static int check_ev_loss(const util_opt *opt, char *err, size_t errlen)
{
    const char *s = *(char **)opt->dest, *colon = strchr(s, ':');
    char *end;
    double p;
    unsigned long ev = colon ? strtoul(s, &end, 0) : 0;
    if (!colon || end != colon || ev > 0xffffffffu || prob(colon + 1, &p)) {
        snprintf(err, errlen, "--%s takes EV:P (P from 0 to 1), not '%s'", opt->name, s);
        return -EINVAL;
    }
    if (n_ev_losses == PAIR_MAX_EV_LOSS) {
        snprintf(err, errlen, "--%s: at most %d of them", opt->name, PAIR_MAX_EV_LOSS);
        return -EINVAL;
    }
    ev_losses[n_ev_losses++] = (pair_ev_loss){.ev = (uint32_t)ev, .p = p};
    return 0;
}

/* PLANE@TIME into |pplane| and |pat|. */
static int down_arg(const char *s, int *pplane, uint64_t *pat)
{
    const char *at = strchr(s, '@');
    char *end;
    errno = 0;
    long plane = strtol(s, &end, 10);
    if (!at || end != at || end == s || errno || plane < 0 || plane > INT_MAX ||
        duration(at + 1, pat)) {
        return -1;
    }
    *pplane = (int)plane;
    return 0;
}

static int check_down(const util_opt *opt, char *err, size_t errlen)
{
    int plane;
    uint64_t at;
    if (down_arg(*(char **)opt->dest, &plane, &at) != 0) {
        snprintf(err, errlen, "--%s takes PLANE@TIME (TIME in ns, or with us, ms or s), not '%s'",
                 opt->name, *(char **)opt->dest);
        return -EINVAL;
    }
    return 0;
}

static int check_duration(const util_opt *opt, char *err, size_t errlen)
{
    uint64_t v;
    if (duration(*(char **)opt->dest, &v) != 0) {
        snprintf(err, errlen, "--%s takes a time in ns, or with us, ms or s, not '%s'", opt->name,
                 *(char **)opt->dest);
        return -EINVAL;
    }
    return 0;
}

/* LINEAR,EXP: the retry counts. */
static int retry_arg(const char *s, uint8_t *plin, uint8_t *pexp)
{
    unsigned lin, exp;
    if (sscanf(s, "%u,%u", &lin, &exp) != 2 || lin > 7 || exp > 25) {
        return -1;
    }
    *plin = (uint8_t)lin;
    *pexp = (uint8_t)exp;
    return 0;
}

static int check_retry(const util_opt *opt, char *err, size_t errlen)
{
    uint8_t lin, exp;
    if (retry_arg(*(char **)opt->dest, &lin, &exp) != 0) {
        snprintf(err, errlen, "--%s takes LINEAR,EXP (0..7 and 0..25), not '%s'", opt->name,
                 *(char **)opt->dest);
        return -EINVAL;
    }
    return 0;
}

static int check_positive(const util_opt *opt, char *err, size_t errlen)
{
    if (!(*(double *)opt->dest > 0)) {
        snprintf(err, errlen, "--%s must be above 0", opt->name);
        return -EINVAL;
    }
    return 0;
}

/* The defaults are pair_cfg_default's. */
/* clang-format off */
static const util_opt faults[] = {
    {.name = "loss", .kind = UTIL_OPT_DOUBLE, .def = "0", .min = 0, .max = 1, .dest = &o.loss, .arg = "P", .help = "random loss per packet"},
    {.name = "reorder", .kind = UTIL_OPT_DOUBLE, .def = "0", .min = 0, .max = 1, .dest = &o.reorder, .arg = "P", .help = "share of packets reordered (up to 20 us late)"},
    {.name = "dup", .kind = UTIL_OPT_DOUBLE, .def = "0", .min = 0, .max = 1, .dest = &o.dup, .arg = "P", .help = "share of packets duplicated"},
    {.name = "trim", .kind = UTIL_OPT_DOUBLE, .def = "0", .min = 0, .max = 1, .dest = &o.trim, .arg = "P", .help = "share of packets trimmed mid-fabric"},
    {.name = "trim-lasthop", .kind = UTIL_OPT_DOUBLE, .def = "0", .min = 0, .max = 1, .dest = &o.trim_lasthop, .arg = "P", .help = "share of packets trimmed at the last hop"},
    {.name = "ecn", .kind = UTIL_OPT_DOUBLE, .def = "0", .min = 0, .max = 1, .dest = &o.ecn, .arg = "P", .help = "share of packets ECN-CE marked"},
    {.name = "ev-loss", .kind = UTIL_OPT_STR, .dest = &o.ev_loss, .arg = "EV:P", .check = check_ev_loss, .help = "loss on one EV, repeatable (up to 16); the EV of plane p, path i is p<<29 | i<<18"},
    {.name = "down-plane", .kind = UTIL_OPT_STR, .dest = &o.down_plane, .arg = "PLANE@TIME", .check = check_down, .help = "plane PLANE fails at TIME (ns, or with us, ms or s)"},
    {.name = "down-both", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.down_both, .help = "the plane fails at both hosts (a link), not only at the sender's NIC"},
    {.name = "dead-peer", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &o.dead_peer, .help = "the responder never answers: the QP exhausts its retries"},
    UTIL_OPT_END,
};

static const util_opt link_opts[] = {
    {.name = "msgs", .kind = UTIL_OPT_UINT, .def = "100", .min = 1, .max = 1000000000, .dest = &o.msgs, .help = "messages to write"},
    {.name = "size", .kind = UTIL_OPT_UINT, .def = "65536", .min = 1, .max = 1073741824, .dest = &o.size, .arg = "BYTES", .help = "message size"},
    {.name = "planes", .kind = UTIL_OPT_UINT, .def = "4", .min = 1, .max = 16, .dest = &o.planes, .help = "ports per host, one plane each"},
    {.name = "evs", .kind = UTIL_OPT_UINT, .def = "128", .min = 1, .max = 1024, .dest = &o.evs, .help = "EVs in the QP's profile, spread over the planes"},
    {.name = "active", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 1024, .dest = &o.active, .help = "EVs in use at once (0: all)"},
    {.name = "min-active", .kind = UTIL_OPT_UINT, .def = "0", .min = 0, .max = 1024, .dest = &o.min_active, .help = "EVs kept usable whatever the verdicts"},
    UTIL_OPT_MTU(&o.mtu),
    {.name = "rate", .kind = UTIL_OPT_DOUBLE, .def = "100", .dest = &o.rate, .arg = "GBPS", .check = check_positive, .help = "rate of each plane"},
    {.name = "delay", .kind = UTIL_OPT_STR, .def = "2000", .dest = &o.delay, .arg = "TIME", .check = check_duration, .help = "one-way delay (ns, or with us, ms or s)"},
    {.name = "mpr", .kind = UTIL_OPT_UINT, .def = "8", .min = 1, .max = 255, .dest = &o.mpr, .help = "the window, in 128-PSN units"},
    {.name = "timeout", .kind = UTIL_OPT_UINT, .def = "8", .min = 1, .max = 24, .dest = &o.timeout, .arg = "T", .help = "local ACK timeout: 1.024 us x 2^T"},
    {.name = "retry", .kind = UTIL_OPT_STR, .def = "7,7", .dest = &o.retry, .arg = "LINEAR,EXP", .check = check_retry, .help = "retries at the base timeout (0..7), then with back-off (0..25, 25: unlimited)"},
    {.name = "slots", .kind = UTIL_OPT_UINT, .def = "8", .min = 1, .max = 4096, .dest = &o.slots, .help = "receive buffer slots: messages in flight at once"},
    {.name = "imm", .kind = UTIL_OPT_BOOL, .def = "true", .dest = &o.imm, .help = "Write with Immediate (--no-imm: plain writes)"},
    {.name = "icrc", .kind = UTIL_OPT_BOOL, .def = "true", .dest = &o.icrc, .help = "compute and check the ICRC"},
    {.name = "seed", .kind = UTIL_OPT_UINT, .def = "1", .min = 0, .max = UINT64_MAX, .dest = &o.seed, .help = "the faults' and the engines' PRNG seed"},
    {.name = "pcap", .kind = UTIL_OPT_STR, .dest = &o.pcap, .arg = "FILE", .help = "write every packet on the link to FILE"},
    {.name = "max-time", .kind = UTIL_OPT_STR, .def = "60s", .dest = &o.max_time, .arg = "TIME", .check = check_duration, .help = "simulated time limit"},
    UTIL_OPT_END,
};
/* clang-format on */

static const util_opt *const tables[] = {link_opts, faults, NULL};

static const util_cli cli = {
    .prog = "mrc-pair",
    .usage = "mrc-pair [options]",
    .about = "Two MRC engines over an in-memory multi-plane link with scripted faults: writes "
             "--msgs messages of\n--size bytes, checks every byte at the far side and prints "
             "one JSON summary on stdout.",
    .tables = tables,
    .more = "The exit status is 1 also when a message did not arrive intact or the QP failed.\n",
};

int main(int argc, char **argv)
{
    int rv = util_cli_parse(&cli, argc, argv, NULL, NULL);
    if (rv != UTIL_CLI_RUN) {
        goto out;
    }
    pair_cfg c;
    pair_cfg_default(&c);
    c.loss = o.loss;
    c.reorder = o.reorder;
    c.dup = o.dup;
    c.trim = o.trim;
    c.trim_lasthop = o.trim_lasthop;
    c.ecn = o.ecn;
    memcpy(c.ev_loss, ev_losses, sizeof(ev_losses));
    c.n_ev_loss = n_ev_losses;
    if (o.down_plane) {
        down_arg(o.down_plane, &c.down_plane, &c.down_at_ns);
    }
    c.down_both = o.down_both;
    c.dead_peer = o.dead_peer;
    c.msgs = (unsigned)o.msgs;
    c.size = (uint32_t)o.size;
    c.planes = (unsigned)o.planes;
    c.evs = (unsigned)o.evs;
    c.active = (unsigned)o.active;
    c.min_active = (unsigned)o.min_active;
    c.mtu = (uint32_t)o.mtu;
    c.rate_gbps = o.rate;
    duration(o.delay, &c.delay_ns);
    c.mpr = (uint8_t)o.mpr;
    c.timeout = (uint8_t)o.timeout;
    retry_arg(o.retry, &c.linear_cnt, &c.exp_cnt);
    c.slots = (unsigned)o.slots;
    c.imm = o.imm;
    c.icrc = o.icrc;
    c.seed = o.seed;
    duration(o.max_time, &c.max_ns);
    if (c.down_plane >= (int)c.planes) {
        rv = util_cli_fail(&cli, "--down-plane %d: there are %u planes (0 to %u)", c.down_plane,
                           c.planes, c.planes - 1);
        goto out;
    }
    if (o.pcap && !(c.pcap = fopen(o.pcap, "wb"))) {
        fprintf(stderr, "mrc-pair: cannot write %s: %s\n", o.pcap, strerror(errno));
        rv = UTIL_EXIT_FAIL;
        goto out;
    }
    pair *p;
    int err = pair_new(&c, &p);
    if (err != 0) {
        fprintf(stderr, "mrc-pair: cannot set up the engines: %s\n", mrc_strerror(err));
        rv = UTIL_EXIT_FAIL;
        if (c.pcap) {
            fclose(c.pcap);
        }
        goto out;
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
    rv = ok ? UTIL_EXIT_OK : UTIL_EXIT_FAIL;
out:
    for (const util_opt *const *t = tables; *t; t++) {
        util_opt_free(*t);
    }
    return rv;
}
