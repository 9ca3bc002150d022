/* SPDX-License-Identifier: MIT */
/* The libmrcfab unit test runner: every suite, one of them picked with CK_RUN_SUITE. */
#include <stdio.h>
#include <stdlib.h>

#include "fab_test.h"

int main(void)
{
    SRunner *sr = srunner_create(fab_plan_suite());
    srunner_add_suite(sr, fab_load_suite());
    srunner_add_suite(sr, fab_tables_suite());
    srunner_add_suite(sr, fab_path_suite());
    srunner_add_suite(sr, fab_walk_suite());
    /* CK_ENV: verbosity from CK_VERBOSITY; Check itself honours CK_RUN_SUITE/CK_RUN_CASE */
    srunner_run_all(sr, CK_ENV);
    int nrun = srunner_ntests_run(sr);
    int nfailed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (nrun == 0) {
        /* a misspelt CK_RUN_SUITE must not pass by running nothing */
        fprintf(stderr, "no test ran (CK_RUN_SUITE=%s)\n",
                getenv("CK_RUN_SUITE") ? getenv("CK_RUN_SUITE") : "");
        return EXIT_FAILURE;
    }
    return nfailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
