/* SPDX-License-Identifier: MIT */
/* What the unit tests share: a scratch directory of their own and files in it
 * (util_test_scratch.c). */
#ifndef UTIL_TEST_H
#define UTIL_TEST_H

#include <stddef.h>

/* A new directory under $TMPDIR (or /tmp) named after |name|, into |dir|. */
void util_test_mkdtemp(char *dir, size_t len, const char *name);
/* Removes |dir| and the files in it. */
void util_test_rmdir(const char *dir);
/* Writes |text| to a new file |name|-PID in |dir|; its path into |path|. */
void util_test_write(const char *dir, const char *name, const char *text, char *path,
                     size_t pathlen);

#endif
