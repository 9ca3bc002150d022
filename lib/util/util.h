/* SPDX-License-Identifier: MIT */
/* libutil: what the daemons and tools share — logging, aborting allocation, atomic files. */
#ifndef UTIL_H
#define UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum util_level {
    UTIL_LOG_DEBUG = 0,
    UTIL_LOG_INFO,
    UTIL_LOG_NOTICE,
    UTIL_LOG_WARNING,
    UTIL_LOG_ERR,
} util_level;

extern util_level util_log_level;

/* Sets the program name printed on every line and where lines go (stderr by default). */
void util_log_init(const char *program, FILE *stream);
void util_log_write(util_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The level is checked before the arguments are evaluated. */
#define util_log(level, ...)                                                                       \
    do {                                                                                           \
        if ((level) >= util_log_level) {                                                           \
            util_log_write((level), __VA_ARGS__);                                                  \
        }                                                                                          \
    } while (0)

/* Allocation that aborts with a log line on failure: daemons cannot go on without memory. */
void *util_xmalloc(size_t size);
void *util_xcalloc(size_t n, size_t size);
void *util_xrealloc(void *p, size_t size);
char *util_xstrdup(const char *s);

/* A file written under a temporary name and renamed into place on commit, so that readers
 * never see half a file and a failed run leaves nothing behind. */
typedef struct util_afile {
    FILE *f;
    char *path;
    char *tmp;
} util_afile;

/* Returns 0 or -errno. */
int util_afile_open(util_afile *af, const char *path);
/* Flushes and renames into place; returns 0 or -errno (the temporary file is removed). No
 * fsync: these are generated files that a rerun recreates, and thousands are written at once. */
int util_afile_commit(util_afile *af);
void util_afile_abort(util_afile *af);

/* Reads a whole file into a NUL-terminated heap buffer. Returns 0 or -errno. */
int util_read_file(const char *path, char **pdata, size_t *plen);

#endif
