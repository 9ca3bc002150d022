/* SPDX-License-Identifier: MIT */
/* mrc-sim: the command line. */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "mrc-sim: not yet\n");
    return 2;
}
