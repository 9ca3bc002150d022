/* SPDX-License-Identifier: MIT */
/* Atomic file writes and whole-file reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int util_afile_open(util_afile *af, const char *path)
{
    size_t n = strlen(path) + 32;
    af->path = util_xstrdup(path);
    af->tmp = util_xmalloc(n);
    snprintf(af->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    af->f = fopen(af->tmp, "w");
    if (!af->f) {
        int err = -errno;
        free(af->path);
        free(af->tmp);
        af->path = af->tmp = NULL;
        return err;
    }
    return 0;
}

int util_afile_commit(util_afile *af)
{
    int rv = 0;
    if (fflush(af->f) != 0 || ferror(af->f)) {
        rv = -errno;
    }
    if (fclose(af->f) != 0 && rv == 0) {
        rv = -errno;
    }
    af->f = NULL;
    if (rv == 0 && rename(af->tmp, af->path) != 0) {
        rv = -errno;
    }
    if (rv != 0) {
        unlink(af->tmp);
    }
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
    return rv;
}

void util_afile_abort(util_afile *af)
{
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
    }
    if (af->tmp) {
        unlink(af->tmp);
    }
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
}

int util_read_file_max(const char *path, size_t max, char **pdata, size_t *plen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return -errno;
    }
    size_t len = 0, cap = 65536;
    char *data = util_xmalloc(cap);
    int rv = 0;
    for (;;) {
        size_t got = fread(data + len, 1, cap - len - 1, f);
        len += got;
        if (len > max) {
            /* a file that grows without end (a FIFO, /dev/zero) costs |max|, not memory */
            rv = -EFBIG;
            break;
        }
        if (got == 0) {
            break;
        }
        if (cap - len - 1 == 0) {
            cap *= 2;
            data = util_xrealloc(data, cap);
        }
    }
    if (rv == 0 && ferror(f)) {
        rv = -EIO;
    }
    fclose(f);
    if (rv != 0) {
        free(data);
        return rv;
    }
    data[len] = '\0';
    *pdata = data;
    *plen = len;
    return 0;
}

int util_read_file(const char *path, char **pdata, size_t *plen)
{
    return util_read_file_max(path, UTIL_FILE_MAX, pdata, plen);
}

char *util_line_next(char **cursor)
{
    char *line = *cursor;
    if (!line || !*line) {
        return NULL;
    }
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = line + strlen(line);
    }
    return line;
}

int util_data_path(const char *name, char *dest, size_t destlen)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        return -errno;
    }
    exe[n] = '\0';
    /* the program's folder, then up one folder for each '../' of the way to the data */
    const char *rel = UTIL_DATA_FROM_BIN;
    char *slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0';
    }
    while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(exe, '/')) != NULL && slash != exe) {
        *slash = '\0';
        rel += 3;
    }
    int len = snprintf(dest, destlen, "%s/%s%s%s", exe, rel, name[0] ? "/" : "", name);
    return len < 0 || (size_t)len >= destlen ? -ENAMETOOLONG : 0;
}
