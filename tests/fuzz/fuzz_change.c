/* SPDX-License-Identifier: MIT */
/* libFuzzer target: a denylist change as the controllers read it from etcd's log
 * (ctl_change_parse): whatever it takes must come out of ctl_change_text and back in the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_change.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    ctl_change c, again;
    if (ctl_change_parse(text, &c) == 0) {
        char *out = ctl_change_text(&c);
        if (ctl_change_parse(out, &again) != 0 || again.version != c.version ||
            again.epoch != c.epoch || again.time != c.time || again.op != c.op ||
            again.id != c.id || strcmp(again.actor, c.actor) != 0 ||
            memcmp(&again.entry, &c.entry, sizeof(c.entry)) != 0) {
            fprintf(stderr, "fuzz_change: a change taken is not the same after its text\n");
            abort();
        }
        free(out);
    }
    free(text);
    return 0;
}
