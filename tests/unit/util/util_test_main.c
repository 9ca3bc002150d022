/* SPDX-License-Identifier: MIT */
/* The runner of one libutil unit test file: UTIL_TEST_SUITE names its suite function. */
#include <check.h>
#include <stdlib.h>

Suite *UTIL_TEST_SUITE(void);

int main(void)
{
    SRunner *sr = srunner_create(UTIL_TEST_SUITE());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
