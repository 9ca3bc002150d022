/* SPDX-License-Identifier: MIT */
/* mrcctl health: what its commands share — the list filters, the API's pages, and the words
 * every table uses for the denylist entries in force, the prober's verdicts and the age of
 * evidence (mrcctl_health.c: links and switch; mrcctl_health_fabric.c: path, summary and
 * problems). */
#ifndef MRCCTL_HEALTH_H
#define MRCCTL_HEALTH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "mrcctl.h"

#define MRCCTL_HEALTH "/api/v1/health"
/* the API's largest page: a switch's links fit in one (a T1 has radix of them) */
#define MRCCTL_HEALTH_PAGE_MAX 1000
/* the width a table is laid out to fit (its last column may run over) */
#define MRCCTL_HEALTH_COLUMNS 100

/* The filters of the lists: --state, --plane, --switch, --offset, --limit (NONE: not given). */
#define MRCCTL_HEALTH_NONE UINT64_MAX
typedef struct mrcctl_health_filters {
    char *state, *sw;
    uint64_t plane, offset, limit;
} mrcctl_health_filters;

/* What the health commands' options set (one command runs per process). */
extern mrcctl_health_filters mrcctl_health_opt;

/* GETs MRCCTL_HEALTH/|resource| with |f| as its query: a page {total, offset, items} into
 * |*pdoc| (the caller drops it). Returns the exit code, the fault printed. */
int mrcctl_health_get_page(mrcctl *c, const char *resource, const mrcctl_health_filters *f,
                           json_object **pdoc);
/* The items of a page (borrowed). */
json_object *mrcctl_health_items(json_object *doc);
/* The page's last line: how many (|one| or |many| of them), and where the next page starts. */
void mrcctl_health_page_footer(json_object *doc, const char *one, const char *many);

/* A denylist entry in force as the tables name it: "#12 (p0-t1-1, operator: drain: swap)",
 * the scope after the element when it is not both. Returns what snprintf does. */
int mrcctl_health_entry_text(json_object *entry, char *dest, size_t destlen);
/* The ids of the entries of |denied| (an array of entries) that take direction |dir| ("up",
 * "down"; NULL: any) out of use, as "#3,#12"; "-" when none does. */
void mrcctl_health_ids_text(json_object *denied, const char *dir, char *dest, size_t destlen);
/* A verdict's name: "p1 D t0=2 t1=1 (link, denied #12)", with its |kind| and its entries'
 * |ids| (0, an entry not had yet, left out) or without; "-" for null. */
void mrcctl_health_verdict_name(json_object *verdict, bool kind, bool ids, char *dest,
                                size_t destlen);
/* A verdict in full: its name with its kind (and |ids|), then ": 3.125% lost (40/1280) in 1 s,
 * since TIME" (to the second). */
void mrcctl_health_verdict_text(json_object *verdict, bool ids, char *dest, size_t destlen);

/* The entries of every |denied| array collected by mrcctl_health_entries_add, each once, in
 * the order first seen: the footer of a table. */
typedef struct mrcctl_health_entries {
    json_object *byid;  /* id text -> entry */
    json_object *count; /* id text -> how many rows it was seen on */
} mrcctl_health_entries;
void mrcctl_health_entries_init(mrcctl_health_entries *e);
void mrcctl_health_entries_add(mrcctl_health_entries *e, json_object *denied);
/* Prints "|title|:" and a line per entry ("  #12 (p0-t1-1, operator: drain)", and with
 * |what| ": excludes 3 paths"), nothing when none was added or |title| is NULL; frees |e|. */
void mrcctl_health_entries_print(mrcctl_health_entries *e, const char *title, const char *what);

/* Seconds from the RFC 3339 UTC time |text| to |now|, as "3 s ago", "5 min ago", "2 h ago",
 * "4 d ago" (0 for a time ahead of this machine's clock); "" when |text| is not such a time. */
void mrcctl_health_age_text(const char *text, time_t now, char *dest, size_t destlen);
/* A loss rate as "3.125%". */
void mrcctl_health_pct(double rate, char *dest, size_t destlen);

/* The links of a page as a table: a row per link (its state, the age of its latest evidence,
 * the ids of the entries in force on it and its switches), a row per direction (up toward the
 * T1, or from the host) with its state beside the agents' and the prober's lost/sent and loss,
 * the agents reporting, the entries taking it out of use and its measured state where it
 * differs, then the verdict naming the link; with |entries|, each entry in full after the
 * table. */
void mrcctl_health_print_links(json_object *items, bool entries);

/* The commands of mrcctl_health_fabric.c. */
int mrcctl_health_path(mrcctl *c, int n, char **operands);
int mrcctl_health_summary(mrcctl *c, int n, char **operands);
int mrcctl_health_problems(mrcctl *c, int n, char **operands);

#endif
