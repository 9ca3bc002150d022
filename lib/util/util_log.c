/* SPDX-License-Identifier: MIT */
/* One-line logs: UTC time, program, level, message. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util.h"

util_level util_log_level = UTIL_LOG_INFO;
static const char *log_program = "mrcfab";
static FILE *log_stream;

void util_log_init(const char *program, FILE *stream)
{
    log_program = program;
    log_stream = stream;
}

void util_log_write(util_level level, const char *fmt, ...)
{
    static const char *const names[] = {"DEBUG", "INFO", "NOTICE", "WARNING", "ERR"};
    FILE *f = log_stream ? log_stream : stderr;
    struct timespec ts;
    struct tm tm;
    char when[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(f, "%s.%03ldZ %s %s %s\n", when, ts.tv_nsec / 1000000, log_program,
            names[level <= UTIL_LOG_ERR ? level : UTIL_LOG_ERR], line);
    fflush(f);
}

int util_log_level_parse(const char *name)
{
    static const char *const names[] = {"debug", "info", "notice", "warning", "err"};
    for (int i = 0; i < 5; i++) {
        if (strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}
