/* SPDX-License-Identifier: MIT */
/* The SVG line charts of mrc-sim (throughput.svg, utilization.svg) and the text cleaning shared
 * by its output files. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim_svg.h"
#include "util.h"

/* The canvas, in SVG user units: the plot area, then the legend on its right. */
#define SVG_W 960.0
#define SVG_LEFT 80.0
#define SVG_TOP 50.0
#define SVG_PLOT_W 620.0
#define SVG_PLOT_H 360.0
#define SVG_BOTTOM 60.0
#define SVG_LEGEND_ROW 18.0
#define SVG_H_MIN (SVG_TOP + SVG_PLOT_H + SVG_BOTTOM)
/* Above this many points a series is drawn as the minimum and maximum of each pixel column. */
#define SVG_MAX_POINTS ((size_t)(2 * SVG_PLOT_W))

/* Distinct colours for the first 16 lines (Tableau 10 and six darker ones); later lines step
 * round the hue circle by the golden angle. */
static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#e7ba52", "#7b4173", "#6baed6",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* A stream with a sticky error: every write is checked, the first failure is kept. */
typedef struct svg_out {
    FILE *f;
    int err; /* 0 or -errno */
} svg_out;

static void emit(svg_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(svg_out *o, const char *fmt, ...)
{
    if (o->err) {
        return;
    }
    errno = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(o->f, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->err = errno ? -errno : -EIO;
    }
}

/* Length of the well-formed character at |s| (at most |avail| bytes) that XML and JSON accept
 * as text, or 0 if there is none. */
static size_t char_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        return c < 0x20 || c == 0x7f ? 0 : 1;
    }
    if (c < 0xc2 || c > 0xf4) {
        return 0;
    }
    size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (avail < n) {
        return 0;
    }
    unsigned char lo = 0x80, hi = 0xbf;
    if (c == 0xe0) {
        lo = 0xa0;
    } else if (c == 0xed) {
        hi = 0x9f; /* surrogates */
    } else if (c == 0xf0) {
        lo = 0x90;
    } else if (c == 0xf4) {
        hi = 0x8f;
    }
    if (s[1] < lo || s[1] > hi) {
        return 0;
    }
    for (size_t k = 2; k < n; k++) {
        if (s[k] < 0x80 || s[k] > 0xbf) {
            return 0;
        }
    }
    if (n == 3 && c == 0xef && s[1] == 0xbf && s[2] >= 0xbe) {
        return 0; /* U+FFFE, U+FFFF: not XML characters */
    }
    return n;
}

size_t sim_svg_clean(char *dest, size_t destlen, const char *src, size_t srclen)
{
    if (!dest || destlen == 0) {
        return 0;
    }
    size_t o = 0;
    for (size_t i = 0; src && i < srclen && src[i];) {
        size_t n = char_len((const unsigned char *)src + i, srclen - i);
        size_t out = n ? n : 1;
        if (o + out > destlen - 1) {
            break;
        }
        if (n) {
            memcpy(dest + o, src + i, n);
        } else {
            dest[o] = '?';
        }
        o += out;
        i += out;
    }
    dest[o] = '\0';
    return o;
}

char *sim_svg_clean_dup(const char *src)
{
    if (!src) {
        return NULL;
    }
    size_t len = strlen(src);
    char *s = util_xmalloc(len + 1);
    sim_svg_clean(s, len + 1, src, len);
    return s;
}

/* Writes |s| cleaned and escaped for XML text and attribute values. */
static void emit_text(svg_out *o, const char *s)
{
    char *clean = sim_svg_clean_dup(s ? s : "");
    for (const char *p = clean; *p && !o->err; p++) {
        switch (*p) {
        case '&':
            emit(o, "&amp;");
            break;
        case '<':
            emit(o, "&lt;");
            break;
        case '>':
            emit(o, "&gt;");
            break;
        case '"':
            emit(o, "&quot;");
            break;
        case '\'':
            emit(o, "&apos;");
            break;
        default:
            if (fputc(*p, o->f) == EOF) {
                o->err = errno ? -errno : -EIO;
            }
            break;
        }
    }
    free(clean);
}

/* The colour of the |k|-th thin line. */
static void line_colour(size_t k, char *dest, size_t destlen)
{
    if (k < NPALETTE) {
        snprintf(dest, destlen, "%s", palette[k]);
        return;
    }
    /* HSV with s = 0.65, v = 0.75 and the hue stepped by the golden angle. */
    double h = fmod((double)(k - NPALETTE) * 137.50776405, 360.0) / 60.0;
    double v = 0.75, s = 0.65, c = v * s;
    double x = c * (1.0 - fabs(fmod(h, 2.0) - 1.0)), m = v - c;
    double r = 0, g = 0, b = 0;
    switch ((int)h) {
    case 0:
        r = c, g = x;
        break;
    case 1:
        r = x, g = c;
        break;
    case 2:
        g = c, b = x;
        break;
    case 3:
        g = x, b = c;
        break;
    case 4:
        r = x, b = c;
        break;
    default:
        r = c, b = x;
        break;
    }
    snprintf(dest, destlen, "#%02x%02x%02x", (unsigned)lround((r + m) * 255.0),
             (unsigned)lround((g + m) * 255.0), (unsigned)lround((b + m) * 255.0));
}

/* A tick step of 1, 2 or 5 times a power of ten that cuts |range| into about |target| parts. */
static double nice_step(double range, double target)
{
    double raw = range / target;
    if (!(raw > 0) || !isfinite(raw)) {
        return 1.0;
    }
    double mag = pow(10.0, floor(log10(raw)));
    double n = raw / mag;
    return (n <= 1.0 ? 1.0 : n <= 2.0 ? 2.0 : n <= 5.0 ? 5.0 : 10.0) * mag;
}

/* Decimals that print every multiple of |step| exactly. */
static int step_decimals(double step)
{
    double d = -floor(log10(step) + 1e-9);
    return d <= 0 ? 0 : d > 9 ? 9 : (int)d;
}

/* The value drawn for point |i| of |s|: scaled, 0 if not finite. */
static double value(const sim_svg_chart *c, const sim_svg_series *s, size_t i)
{
    double scale = c->y_scale != 0 ? c->y_scale : 1.0;
    double v = s->y ? s->y[i * s->stride] * scale : 0.0;
    return isfinite(v) ? v : 0.0;
}

static void emit_head(svg_out *o, const sim_svg_chart *c, double h)
{
    emit(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    emit(o,
         "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
         "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
         SVG_W, h, SVG_W, h);
    emit(o, "<title>");
    emit_text(o, c->title ? c->title : "mrc-sim");
    emit(o, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
    emit(o, "<text x=\"%.1f\" y=\"28\" font-size=\"15\" text-anchor=\"middle\">",
         SVG_LEFT + SVG_PLOT_W / 2);
    emit_text(o, c->title ? c->title : "");
    emit(o, "</text>\n");
}

/* The frame, the ticks, the grid and both axis titles. */
static void emit_axes(svg_out *o, const sim_svg_chart *c, double xmax, const char *xunit,
                      double ytop, double ystep)
{
    double bottom = SVG_TOP + SVG_PLOT_H;
    double xstep = nice_step(xmax, 6.0);
    int xdec = step_decimals(xstep), ydec = step_decimals(ystep);
    emit(o, "<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
    for (unsigned k = 1; k * ystep <= ytop * (1 + 1e-9); k++) {
        double y = bottom - k * ystep / ytop * SVG_PLOT_H;
        emit(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", SVG_LEFT, y,
             SVG_LEFT + SVG_PLOT_W, y);
    }
    emit(o, "</g>\n<g stroke=\"#000000\" stroke-width=\"1\">\n");
    emit(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\"/>\n",
         SVG_LEFT, SVG_TOP, SVG_PLOT_W, SVG_PLOT_H);
    for (unsigned k = 0; k * xstep <= xmax * (1 + 1e-9); k++) {
        double x = SVG_LEFT + k * xstep / xmax * SVG_PLOT_W;
        emit(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, bottom, x,
             bottom + 5);
    }
    for (unsigned k = 0; k * ystep <= ytop * (1 + 1e-9); k++) {
        double y = bottom - k * ystep / ytop * SVG_PLOT_H;
        emit(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", SVG_LEFT - 5, y,
             SVG_LEFT, y);
    }
    emit(o, "</g>\n<g text-anchor=\"middle\">\n");
    for (unsigned k = 0; k * xstep <= xmax * (1 + 1e-9); k++) {
        double x = SVG_LEFT + k * xstep / xmax * SVG_PLOT_W;
        emit(o, "<text x=\"%.1f\" y=\"%.1f\">%.*f</text>\n", x, bottom + 18, xdec, k * xstep);
    }
    emit(o, "<text x=\"%.1f\" y=\"%.1f\">time (%s)</text>\n", SVG_LEFT + SVG_PLOT_W / 2,
         bottom + 42, xunit);
    emit(o, "</g>\n<g text-anchor=\"end\">\n");
    for (unsigned k = 0; k * ystep <= ytop * (1 + 1e-9); k++) {
        double y = bottom - k * ystep / ytop * SVG_PLOT_H;
        emit(o, "<text x=\"%.1f\" y=\"%.1f\">%.*f</text>\n", SVG_LEFT - 8, y + 4, ydec, k * ystep);
    }
    emit(o, "</g>\n<text transform=\"translate(20,%.1f) rotate(-90)\" text-anchor=\"middle\">",
         SVG_TOP + SVG_PLOT_H / 2);
    emit_text(o, c->y_label ? c->y_label : "");
    emit(o, "</text>\n");
}

static void emit_point(svg_out *o, const sim_svg_chart *c, const sim_svg_series *s, size_t i,
                       double ytop)
{
    double x = SVG_LEFT + (double)(i + 1) / (double)c->npoints * SVG_PLOT_W;
    double v = value(c, s, i);
    v = v < 0 ? 0 : v > ytop ? ytop : v;
    emit(o, " %.1f,%.1f", x, SVG_TOP + SVG_PLOT_H - v / ytop * SVG_PLOT_H);
}

/* One series as a polyline; long ones as the minimum and maximum of each pixel column, in the
 * order they occur, so that peaks and dips survive. */
static void emit_series(svg_out *o, const sim_svg_chart *c, const sim_svg_series *s,
                        const char *colour, double ytop)
{
    size_t n = c->npoints;
    emit(o,
         "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-linejoin=\"round\" "
         "points=\"",
         colour, s->bold ? "3" : "1.5");
    if (n <= SVG_MAX_POINTS) {
        for (size_t i = 0; i < n; i++) {
            emit_point(o, c, s, i, ytop);
        }
    } else {
        size_t buckets = (size_t)SVG_PLOT_W;
        for (size_t b = 0; b < buckets; b++) {
            size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
            if (lo == hi) {
                continue;
            }
            size_t imin = lo, imax = lo;
            for (size_t i = lo; i < hi; i++) {
                if (value(c, s, i) < value(c, s, imin)) {
                    imin = i;
                }
                if (value(c, s, i) > value(c, s, imax)) {
                    imax = i;
                }
            }
            emit_point(o, c, s, imin < imax ? imin : imax, ytop);
            if (imin != imax) {
                emit_point(o, c, s, imin < imax ? imax : imin, ytop);
            }
        }
    }
    emit(o, "\"/>\n");
    if (n == 1) {
        /* A one-point polyline draws nothing. */
        double v = value(c, s, 0);
        v = v < 0 ? 0 : v > ytop ? ytop : v;
        emit(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", SVG_LEFT + SVG_PLOT_W,
             SVG_TOP + SVG_PLOT_H - v / ytop * SVG_PLOT_H, colour);
    }
}

static void emit_legend(svg_out *o, const sim_svg_chart *c)
{
    double x = SVG_LEFT + SVG_PLOT_W + 20;
    size_t thin = 0;
    for (size_t i = 0; i < c->nseries; i++) {
        const sim_svg_series *s = &c->series[i];
        char colour[8];
        if (s->bold) {
            snprintf(colour, sizeof(colour), "#000000");
        } else {
            line_colour(thin++, colour, sizeof(colour));
        }
        double y = SVG_TOP + 8 + (double)i * SVG_LEGEND_ROW;
        emit(o,
             "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
             "stroke-width=\"%s\"/>\n",
             x, y, x + 24, y, colour, s->bold ? "3" : "2");
        emit(o, "<text x=\"%.1f\" y=\"%.1f\">", x + 30, y + 4);
        if (s->name && s->name[0]) {
            emit_text(o, s->name);
        } else {
            emit(o, "series%zu", i);
        }
        emit(o, "</text>\n");
    }
}

int sim_svg_write_chart(FILE *f, const sim_svg_chart *c)
{
    svg_out o = {.f = f};
    if (!f || !c) {
        return -EINVAL;
    }
    double h = SVG_H_MIN;
    double legend_h = SVG_TOP + (double)c->nseries * SVG_LEGEND_ROW + 20;
    if (c->npoints > 0 && legend_h > h) {
        h = legend_h;
    }
    emit_head(&o, c, h);
    if (c->npoints == 0 || c->nseries == 0 || !c->series) {
        emit(&o,
             "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
             "stroke=\"#000000\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"16\" "
             "text-anchor=\"middle\">",
             SVG_LEFT, SVG_TOP, SVG_PLOT_W, SVG_PLOT_H, SVG_LEFT + SVG_PLOT_W / 2,
             SVG_TOP + SVG_PLOT_H / 2);
        emit_text(&o, c->npoints == 0 ? "no samples" : c->empty ? c->empty : "no series");
        emit(&o, "</text>\n</svg>\n");
        return o.err;
    }

    /* Time axis: microseconds, or milliseconds or seconds for longer runs. */
    double xmax_us = (double)c->npoints * (double)c->step_ps / 1e6;
    double xdiv = 1.0;
    const char *xunit = "\xc2\xb5s";
    if (xmax_us >= 1e6) {
        xdiv = 1e6;
        xunit = "s";
    } else if (xmax_us >= 1e3) {
        xdiv = 1e3;
        xunit = "ms";
    }
    double xmax = xmax_us / xdiv;
    if (!(xmax > 0)) {
        xmax = 1.0; /* a zero interval: every point at the right edge */
    }

    double ymax = 0;
    for (size_t k = 0; k < c->nseries; k++) {
        for (size_t i = 0; i < c->npoints; i++) {
            double v = value(c, &c->series[k], i);
            ymax = v > ymax ? v : ymax;
        }
    }
    double ystep = nice_step(ymax, 5.0);
    double ytop = ceil(ymax / ystep - 1e-9) * ystep;
    if (!(ytop > 0)) {
        ytop = 1.0;
        ystep = 0.2;
    }
    if (c->y_max > 0 && ytop > c->y_max) {
        ytop = c->y_max;
        ystep = nice_step(ytop, 5.0);
    }

    emit_axes(&o, c, xmax, xunit, ytop, ystep);
    size_t thin = 0;
    for (size_t k = 0; k < c->nseries; k++) {
        char colour[8];
        if (c->series[k].bold) {
            snprintf(colour, sizeof(colour), "#000000");
        } else {
            line_colour(thin++, colour, sizeof(colour));
        }
        emit_series(&o, c, &c->series[k], colour, ytop);
    }
    emit_legend(&o, c);
    emit(&o, "</svg>\n");
    return o.err;
}
