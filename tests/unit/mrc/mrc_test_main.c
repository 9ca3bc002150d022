/* SPDX-License-Identifier: MIT */
/* The libmrc unit test runner: every suite of the table, one of them picked with CK_RUN_SUITE. */
#include <stdio.h>
#include <stdlib.h>

#include "mrc_test.h"

/* One entry per suite; add a suite here and to MRC_TEST_SUITES in CMakeLists.txt. */
static Suite *(*const suites[])(void) = {
    mrc_wire_suite,  mrc_crc_suite, mrc_qp_suite,      mrc_reliability_suite,
    mrc_nack_suite,  mrc_ev_suite,  mrc_garbage_suite, mrc_pair_suite,
    mrc_burst_suite, mrc_cc_suite,  mrc_packet_suite,  mrc_csum_suite,
};

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
        srunner_add_suite(sr, suites[i]());
    }
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
