/* SPDX-License-Identifier: MIT */
/* What the controller's unit tests share: a scratch directory of their own. */
#ifndef CTL_TEST_H
#define CTL_TEST_H

#include <stddef.h>

/* A new directory under $TMPDIR (or /tmp) named after |name|, into |dir|. */
void ctl_test_mkdtemp(char *dir, size_t len, const char *name);
/* Removes |dir| and the files in it. */
void ctl_test_rmdir(const char *dir);

#endif
