/* SPDX-License-Identifier: MIT */
#include "probe_shard.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "util_peers.h"

uint64_t probe_shard_all(unsigned nplanes)
{
    return nplanes >= 64 ? UINT64_MAX : (1ull << nplanes) - 1;
}

static int plane_num(const char **ps, unsigned nplanes, unsigned *pv)
{
    const char *s = *ps;
    unsigned long v = 0;
    if (!isdigit((unsigned char)*s)) {
        return -EINVAL;
    }
    while (isdigit((unsigned char)*s) && v < 1000) {
        v = v * 10 + (unsigned long)(*s++ - '0');
    }
    if (v >= nplanes) {
        return -ERANGE;
    }
    *pv = (unsigned)v;
    *ps = s;
    return 0;
}

int probe_shard_parse(const char *list, unsigned nplanes, uint64_t *pmask, char *err, size_t errlen)
{
    uint64_t mask = 0;
    const char *s = list ? list : "";
    if (nplanes == 0 || nplanes > PROBE_SHARD_MAX_PLANES) {
        snprintf(err, errlen, "a fabric of %u planes cannot be sharded (1 to %d)", nplanes,
                 PROBE_SHARD_MAX_PLANES);
        return -EINVAL;
    }
    if (strcmp(s, "all") == 0) {
        *pmask = probe_shard_all(nplanes);
        return 0;
    }
    for (;;) {
        unsigned a, b;
        int rv = plane_num(&s, nplanes, &a);
        if (rv == 0 && *s == '-') {
            s++;
            rv = plane_num(&s, nplanes, &b);
        } else {
            b = a;
        }
        if (rv == -ERANGE) {
            snprintf(err, errlen, "planes '%.64s': the fabric has planes 0 to %u", list,
                     nplanes - 1);
            return -EINVAL;
        }
        if (rv != 0 || b < a || (*s != ',' && *s != '\0')) {
            snprintf(err, errlen,
                     "planes '%.64s': want 'all' or planes and ranges, comma-separated (0, 0-1, "
                     "2,3)",
                     list);
            return -EINVAL;
        }
        for (unsigned p = a; p <= b; p++) {
            if (mask >> p & 1) {
                snprintf(err, errlen, "planes '%.64s': plane %u is named twice", list, p);
                return -EINVAL;
            }
            mask |= 1ull << p;
        }
        if (*s == '\0') {
            break;
        }
        s++;
    }
    *pmask = mask;
    return 0;
}

void probe_shard_str(uint64_t mask, char *dest, size_t len)
{
    size_t at = 0;
    dest[0] = '\0';
    for (unsigned p = 0; p < 64 && at < len;) {
        if (!(mask >> p & 1)) {
            p++;
            continue;
        }
        unsigned q = p;
        while (q + 1 < 64 && mask >> (q + 1) & 1) {
            q++;
        }
        int n = q == p ? snprintf(dest + at, len - at, "%s%u", at ? "," : "", p)
                       : snprintf(dest + at, len - at, "%s%u-%u", at ? "," : "", p, q);
        at += n > 0 ? (size_t)n : 0;
        p = q + 1;
    }
    if (!mask) {
        snprintf(dest, len, "none");
    }
}

int probe_shard_dest_add(probe_shard_dest *d, size_t *pn, const char *value, unsigned nplanes,
                         char *err, size_t errlen)
{
    const char *eq = strchr(value, '=');
    const char *urls = eq ? eq + 1 : value;
    uint64_t mask = probe_shard_all(nplanes);
    char planes[128];
    if (*pn >= PROBE_SHARD_MAX) {
        snprintf(err, errlen, "--localizer: at most %d shards", PROBE_SHARD_MAX);
        return -EINVAL;
    }
    if (eq) {
        snprintf(planes, sizeof(planes), "%.*s", (int)(eq - value), value);
        char why[192];
        if (probe_shard_parse(planes, nplanes, &mask, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "--localizer %.200s: %s", value, why);
            return -EINVAL;
        }
    }
    util_peers p;
    char why[256];
    if (util_peers_parse(&p, urls, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--localizer %.200s: %s", value, why);
        return -EINVAL;
    }
    util_peers_free(&p);
    for (size_t i = 0; i < *pn; i++) {
        if (d[i].planes & mask) {
            probe_shard_str(d[i].planes & mask, planes, sizeof(planes));
            snprintf(err, errlen, "--localizer %.200s: plane %s has a shard already (%.200s)",
                     value, planes, d[i].urls);
            return -EINVAL;
        }
    }
    d[*pn] = (probe_shard_dest){.planes = mask, .urls = util_xstrdup(urls)};
    (*pn)++;
    return 0;
}

void probe_shard_dests_free(probe_shard_dest *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(d[i].urls);
        d[i].urls = NULL;
    }
}
