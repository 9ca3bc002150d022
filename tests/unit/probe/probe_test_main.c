/* SPDX-License-Identifier: MIT */
/* The runner of one probe unit test file: PROBE_TEST_SUITE names its suite function. */
#include <check.h>
#include <stdlib.h>

Suite *PROBE_TEST_SUITE(void);

int main(void)
{
    SRunner *sr = srunner_create(PROBE_TEST_SUITE());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
