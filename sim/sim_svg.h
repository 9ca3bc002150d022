/* SPDX-License-Identifier: MIT */
/* A small SVG line-chart writer for mrc-sim's time series, and the text cleaning that the
 * output files share (JSON, CSV, XML and Markdown all want valid UTF-8 without controls). */
#ifndef SIM_SVG_H
#define SIM_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One line of a chart. */
typedef struct sim_svg_series {
    const char *name; /* legend text, borrowed; NULL or "": "series<i>" */
    const double *y;  /* the value of point i is y[i * stride]; borrowed */
    size_t stride;
    bool bold; /* a thick black line: an aggregate such as the mean */
} sim_svg_series;

/* A chart of values over time: point i is at the end of interval i, (i + 1) x |step_ps|. */
typedef struct sim_svg_chart {
    const char *title;   /* borrowed; may be NULL */
    const char *y_label; /* the axis title with its unit, e.g. "goodput (Gb/s)"; borrowed */
    double y_scale;      /* values are multiplied by this (100 for a percentage); 0 means 1 */
    double y_max;        /* > 0: the axis never goes above this (100 for a percentage) */
    uint64_t step_ps;
    size_t npoints;
    const sim_svg_series *series; /* borrowed */
    size_t nseries;
    const char *empty; /* the text shown when there are points but no series ("no flows") */
} sim_svg_chart;

/*
 * Writes |c| to |f| as one self-contained SVG document: a viewBox, axes with ticks and unit
 * labels (time in us, ms or s, whichever fits the run), a legend and a distinct colour per
 * series. Without points it still writes a valid document that says "no samples". Text is
 * cleaned and escaped; non-finite values are drawn as 0. Long series are reduced to the
 * minimum and maximum of each pixel column. Returns 0, or -errno of the first failed write.
 */
int sim_svg_write_chart(FILE *f, const sim_svg_chart *c);

/*
 * Copies at most |srclen| bytes of |src| (less if a NUL comes first) into |dest| as valid
 * UTF-8 without control characters: each byte that is not part of a well-formed character,
 * and each C0 control, DEL or U+FFFE/U+FFFF, becomes '?'. Truncates at a character boundary
 * when |dest| is too small and always NUL-terminates (|destlen| > 0). |src| NULL gives "".
 * Returns the length written.
 */
size_t sim_svg_clean(char *dest, size_t destlen, const char *src, size_t srclen);

/* The same into a new heap string (util_xmalloc; the caller frees it). NULL gives NULL. */
char *sim_svg_clean_dup(const char *src);

#endif
