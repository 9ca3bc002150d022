/* SPDX-License-Identifier: MIT */
/* The unit tests' scratch directories (util_test.h). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util_test.h"

void util_test_mkdtemp(char *dir, size_t len, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/%s_XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
}

void util_test_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            unlink(p);
        }
    }
    if (d) {
        closedir(d);
    }
    rmdir(dir);
}

void util_test_write(const char *dir, const char *name, const char *text, char *path,
                     size_t pathlen)
{
    snprintf(path, pathlen, "%s/%s-%ld", dir, name, (long)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}
