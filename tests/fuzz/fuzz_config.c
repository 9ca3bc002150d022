/* SPDX-License-Identifier: MIT */
/* libFuzzer target: config files ('key = value' lines, util_opt_load_text) into a table with
 * every kind of setting, the shared ones the daemons take among them. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "util_opt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *topology, *controller, *cacert, *token_file, *log_to, *mode, *name;
static uint64_t mtu, base_rtt, port_gbps, count;
static bool flag;
static double fraction;
static char *cc;

static int check_even(const util_opt *o, char *err, size_t errlen)
{
    if (*(uint64_t *)o->dest % 2) {
        snprintf(err, errlen, "--%s must be even", o->name);
        return -EINVAL;
    }
    return 0;
}

static const util_opt shared[] = {
    UTIL_OPT_TOPOLOGY(&topology, false),
    UTIL_OPT_MTU(&mtu),
    UTIL_OPT_BASE_RTT_NS(&base_rtt),
    UTIL_OPT_PORT_GBPS(&port_gbps),
    UTIL_OPT_CC(&cc),
    UTIL_OPT_CONTROLLER(&controller),
    UTIL_OPT_CACERT(&cacert),
    UTIL_OPT_TOKEN_FILE(&token_file),
    UTIL_OPT_LOG(&log_to),
    UTIL_OPT_END,
};
static const util_opt own[] = {
    {.name = "mode", .kind = UTIL_OPT_STR, .def = "srv6", .dest = &mode, .choices = "srv6|ecmp"},
    {.name = "name", .kind = UTIL_OPT_STR, .dest = &name, .secret = true},
    {.name = "count", .kind = UTIL_OPT_UINT, .def = "4", .min = 2, .max = 1000, .dest = &count,
     .check = check_even},
    {.name = "flag", .kind = UTIL_OPT_BOOL, .def = "false", .dest = &flag},
    {.name = "fraction", .kind = UTIL_OPT_DOUBLE, .def = "0.25", .min = 0, .max = 1,
     .dest = &fraction},
    UTIL_OPT_END,
};
static const util_opt *const tables[] = {shared, own, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > UTIL_OPT_FILE_MAX) {
        return 0;
    }
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char err[512];
    util_opt_defaults(shared);
    util_opt_defaults(own);
    if (util_opt_load_text(tables, "fuzz_config", "fuzz.conf", text, err, sizeof(err)) != 0 &&
        !memchr(err, '\0', sizeof(err))) {
        abort(); /* a fault's sentence is always terminated */
    }
    json_object_put(util_opt_json(own));
    util_opt_free(shared);
    util_opt_free(own);
    free(text);
    return 0;
}
