/* SPDX-License-Identifier: MIT */
/* The runner of one controller unit test file: CTL_TEST_SUITE names its suite function. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_test.h"

Suite *CTL_TEST_SUITE(void);

void ctl_test_mkdtemp(char *dir, size_t len, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/%s_XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
}

void ctl_test_rmdir(const char *dir)
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

int main(void)
{
    SRunner *sr = srunner_create(CTL_TEST_SUITE());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
