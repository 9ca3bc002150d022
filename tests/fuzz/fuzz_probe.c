/* SPDX-License-Identifier: MIT */
/* libFuzzer target: what the prober reads from outside, against the lab fabric. The first byte
 * picks the parser:
 * - odd: a probe's inner packet (probe_wire_decode). It returns 0, 1 (trimmed), -EPROTO or
 *   -EMSGSIZE; a whole probe's fields come back the same through encode and decode again.
 * - even: a node's report (util_json_parse, then probe_localize_report). It is taken (0) or
 *   refused with -EINVAL or -ESTALE and a sentence, and a refused one changes nothing: the
 *   localizer's count of reports stays. */
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_localize.h"
#include "probe_wire.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static probe_localize *loc;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_probe: %s\n", what);
    abort();
}

static void setup(void)
{
    static struct event_base *base;
    static fab_topo *topo;
    static probe_plan *plan;
    fab_error ferr;
    probe_cfg pc;
    char err[256];
    util_log_level = UTIL_LOG_ERR;
    base = event_base_new();
    if (!base || fab_topo_load_file(MRCFAB_ROOT "/deploy/topologies/lab.json", &topo, &ferr)) {
        die("no lab fabric");
    }
    probe_cfg_default(&pc);
    if (probe_plan_new(topo, &pc, &plan) != 0) {
        die("no plan");
    }
    probe_localize_cfg lc = {.base = base,
                             .topo = topo,
                             .plan = plan,
                             .window_ns = pc.window_ns,
                             .epoch = 1,
                             .deadline_ns = 1000000000ull,
                             .hold_ns = 1000000000ull,
                             .hold_max_ns = 10000000000ull};
    uint32_t nt0, nt1, np;
    probe_plan_shape(plan, 0, &nt0, &nt1, &np);
    probe_infer_cfg_default(&lc.infer, probe_plan_planes(plan), nt0, nt1, np);
    lc.infer.optic_group = 2;
    probe_infer_cfg_from_plan(&lc.infer, plan);
    if (probe_localize_new(&lc, &loc, err, sizeof(err)) != 0) {
        die(err);
    }
}

static uint64_t reports(void)
{
    json_object *st = probe_localize_status(loc), *n;
    uint64_t v = json_object_object_get_ex(st, "reports", &n) ? json_object_get_uint64(n) : 0;
    json_object_put(st);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!loc) {
        setup();
    }
    if (size == 0) {
        return 0;
    }
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    if (data[0] & 1) {
        probe_hdr h, g;
        int rv = probe_wire_decode(in, len, PROBE_DEFAULT_PORT, &h);
        if (rv != 0 && rv != 1 && rv != -EPROTO && rv != -EMSGSIZE) {
            die("probe_wire_decode: an unexpected answer");
        }
        if (rv == 0) {
            uint8_t pkt[PROBE_PKT_LEN];
            probe_wire_encode(pkt, in + 8, in + 24, 0, PROBE_DEFAULT_PORT, &h);
            if (probe_wire_decode(pkt, sizeof(pkt), PROBE_DEFAULT_PORT, &g) != 0 ||
                g.epoch != h.epoch || g.window != h.window || g.sent_ns != h.sent_ns ||
                g.spec.kind != h.spec.kind || g.spec.plane != h.spec.plane ||
                g.spec.t1 != h.spec.t1 || g.spec.src_t0 != h.spec.src_t0 ||
                g.spec.src_port != h.spec.src_port || g.spec.index != h.spec.index) {
                die("a decoded probe does not come back through encode");
            }
        }
        return 0;
    }
    char err[512] = "";
    json_object *r = util_json_parse("report", (const char *)in, len, err, sizeof(err));
    if (!r) {
        return 0;
    }
    uint64_t before = reports();
    err[0] = '\0';
    int rv = probe_localize_report(loc, r, NULL, err, sizeof(err));
    json_object_put(r);
    if (rv != 0 && rv != -EINVAL && rv != -ESTALE) {
        die("probe_localize_report: an unexpected answer");
    }
    if (rv != 0 && (!err[0] || reports() != before)) {
        die("a refused report without a sentence, or taken anyway");
    }
    return 0;
}
