/* SPDX-License-Identifier: MIT */
/* Localization's shards (docs/prober.md §11): a localizer takes the reports of a set of planes
 * only, and a node sends each plane's share of its report to the localizers of that plane's
 * shard. Here: the planes' lists ("0", "0-1", "2,3") and a node's map of shards to replicas. */
#ifndef PROBE_SHARD_H
#define PROBE_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* planes are at most this many (a mask of 64 bits) */
#define PROBE_SHARD_MAX_PLANES 64
/* shards a node may name */
#define PROBE_SHARD_MAX 64

/* |list| ("all", or comma-separated planes and ranges: "0", "0-1", "2,3,5-7") of a fabric of
 * |nplanes| planes into |*pmask| (bit p: plane p). 0, or -EINVAL with a sentence in |err| (a
 * plane the fabric has not, an empty or reversed range, a plane named twice). */
int probe_shard_parse(const char *list, unsigned nplanes, uint64_t *pmask, char *err,
                      size_t errlen);
/* The canonical form of |mask| ("0-1", "2,3,5-7") into |dest|; "none" for no plane. */
void probe_shard_str(uint64_t mask, char *dest, size_t len);
/* The mask of every plane of a fabric of |nplanes|. */
uint64_t probe_shard_all(unsigned nplanes);

/* One shard as a node names it: its planes and its replicas' base URLs (comma-separated), or
 * (legacy --report-url) one URL that takes every report whole. */
typedef struct probe_shard_dest {
    uint64_t planes;
    char *urls;     /* heap */
    bool whole_url; /* |urls| is one full URL (--report-url), no replicas */
} probe_shard_dest;

/* Parses one --localizer value, "PLANES=URL[,URL...]" or "URL[,URL...]" (every plane), and
 * adds it to |d| (|*pn| of them, at most PROBE_SHARD_MAX). 0, or -EINVAL with a sentence (a
 * plane another shard of |d| holds already, no URL). The URLs are checked by util_peers. */
int probe_shard_dest_add(probe_shard_dest *d, size_t *pn, const char *value, unsigned nplanes,
                         char *err, size_t errlen);
void probe_shard_dests_free(probe_shard_dest *d, size_t n);

#endif
