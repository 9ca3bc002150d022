# SPDX-License-Identifier: MIT
"""The paper's qualitative results on mrc-sim's reduced experiments (sim/experiments/README.md).

Usage: python3 experiments.py DIR, where DIR holds one result folder per experiment, named as
its scenario. Prints PASS or FAIL per claim; exits 1 on any FAIL or missing result.
"""
import json
import os
import sys

out = sys.argv[1]
failures = 0
runs = {}


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what)
    failures += not ok


for name in sorted(os.listdir(out)):
    path = os.path.join(out, name, "summary.json")
    if os.path.isdir(os.path.join(out, name)):
        try:
            with open(path) as f:
                runs[name] = json.load(f)
        except (OSError, ValueError) as e:
            check(False, f"{name}: no summary ({e})")

experiments = sorted(f[:-5] for f in os.listdir(os.path.join(os.path.dirname(__file__), "..", "..",
                                                           "sim", "experiments"))
                     if f.endswith(".json"))
check(sorted(runs) == experiments, f"a summary for each of the {len(experiments)} experiments")


def busbw(name):
    """Bus bandwidth of the run's all-reduce, 0 if it did not complete."""
    ar = runs[name].get("allreduce") or [{}]
    return ar[0].get("busbw_gbps") or 0.0


def aggregate(name):
    """Bytes of all the run's flows over the time the last one took, in Gb/s."""
    flows = runs[name]["flows"]
    if any(f["completion_ns"] is None for f in flows):
        return 0.0
    return sum(f["bytes"] for f in flows) * 8 / max(f["completion_ns"] for f in flows)


def flow(name, label):
    return next(f for f in runs[name]["flows"] if f["label"] == label)


def ratio(a, b):
    return a / b if b else 0.0


try:
    for name, s in sorted(runs.items()):
        if any(f["transport"] == "mrc" for f in s["flows"]):
            check(s["totals"]["qp_failures"] == 0, f"{name}: no MRC QP fails")

    mrc = busbw("ar-mrc")
    for qps in (1, 4, 8, 16):
        roce = busbw(f"ar-roce{qps}")
        check(mrc > roce, f"all-reduce: one MRC QP ({mrc:.0f} Gb/s) beats RoCE with {qps} QPs "
              f"({roce:.0f})")

    lossy, roce, roce_lossy = busbw("ar-mrc-loss0.1"), busbw("ar-roce16"), busbw("ar-roce16-loss0.1")
    check(lossy >= 0.9 * mrc, f"0.1 % loss: MRC stays near line rate, {lossy:.0f} of {mrc:.0f} Gb/s")
    check(roce_lossy <= 0.5 * roce,
          f"0.1 % loss: RoCE (16 QPs) falls, {roce_lossy:.0f} of {roce:.0f} Gb/s")
    lossy1, roce_lossy1 = busbw("ar-mrc-loss1"), busbw("ar-roce16-loss1")
    check(lossy1 >= mrc / 3 and lossy1 > roce_lossy1,
          f"1 % loss: MRC keeps at least a third, {lossy1:.0f} Gb/s, RoCE {roce_lossy1:.0f}")

    alone = aggregate("evloss-base")
    victim = flow("incast-mrc", "victim")["goodput_gbps"]
    dcqcn = flow("incast-roce-dcqcn", "victim")["goodput_gbps"]
    check(victim >= 0.8 * alone,
          f"incast: the victim keeps its share under MRC, {victim:.0f} Gb/s (alone {alone:.0f})")
    check(dcqcn <= 0.5 * victim,
          f"incast: the victim loses it under RoCE+DCQCN, {dcqcn:.0f} Gb/s")
    incast = [f for f in runs["incast-mrc"]["flows"] if f["label"] != "victim"]
    check(all(f["completion_ns"] for f in incast), "incast: every MRC sender completes")

    ev = aggregate("evloss-mrc")
    check(ev >= 0.95 * alone, f"20 % loss on one EV: bandwidth unchanged, {ev:.0f} of {alone:.0f} Gb/s")

    base, t0t1 = aggregate("t0t1-base"), aggregate("t0t1-mrc")
    check(t0t1 >= 0.85 * base, f"T0-T1 links down and flapping: {t0t1:.0f} of {base:.0f} Gb/s")
    for name in ("t0glitch-mrc", "t1bh-mrc"):
        v = busbw(name)
        check(v >= 0.85 * mrc, f"{name}: the all-reduce barely notices, {v:.0f} of {mrc:.0f} Gb/s")
    # NSCC (the congestion-control issue). The ideal is the host's line rate in payload (a data
    # packet carries 4,096 B in 4,262 B on the wire: inner IPv6, UDP, BTH, METH, RETH, TSETH
    # and ICRC, 4,184 B, in an outer IPv6 header and Ethernet's 38 B) and a base round trip.
    goodput = 400 * 4096 / 4262

    def ideal_ns(nbytes):
        return nbytes * 8 / goodput + 7000

    # the permutation's slowest flow against one flow alone on an idle fabric
    perm = runs["perm-mrc"]["flows"]
    slowest = max(f["completion_ns"] or float("inf") for f in perm)
    ideal = ideal_ns(perm[0]["bytes"])
    check(slowest <= 1.25 * ideal,
          f"permutation: the slowest flow within 1.25 x the ideal, {slowest / ideal:.2f} x")
    # the incast's last completion against all its bytes at the receiver's line rate (full size
    # reaches 96 %; the reduced 31-to-1 of 512 KiB each spends more of its time starting)
    inc = runs["incast127-mrc"]["flows"]
    last = max(f["completion_ns"] or float("inf") for f in inc)
    share = ideal_ns(sum(f["bytes"] for f in inc)) / last
    check(share >= 0.9, f"incast127: {100 * share:.1f} % of the ideal completion")
    # two flows on one EV: the persistent marks move one, and both run near line rate
    ecn2 = [f["goodput_gbps"] for f in runs["ecn2-mrc"]["flows"]]
    check(min(ecn2) >= 80, f"ecn2: ECN moves a flow, both near line rate: {min(ecn2):.0f} and "
          f"{max(ecn2):.0f} Gb/s")
    for name in ("nicdown-mrc", "t0t1-ar-mrc"):
        check(aggregate(name) > 0 or busbw(name) > 0, f"{name}: completes")
except (KeyError, StopIteration) as e:
    check(False, f"a result is missing: {e!r}")

sys.exit(1 if failures else 0)
