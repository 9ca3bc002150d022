#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The price of high availability, side by side in one run: a denylist change's latency (an
add and its removal, one at a time, each answered only once committed) on a controller alone
(SQLite) and on the leader of three on a three-member etcd on loopback; and agent reports per
second (bench_ctl_reports) into the controller alone and into the leader. On the full fabric
(deploy/topologies/full.json); --smoke: fewer changes and reports.

usage: bench_ha.py --bin DIR [--smoke] [--changes N] [--reports N]"""
import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPER = "tok-operator-bench-00000001"


def call(url, method="GET", body=None, token=OPER):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            t = r.read()
            return r.status, json.loads(t) if t else None
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read())
        except ValueError:
            return e.code, None


def start(bindir, topo, work, name, etcd=None):
    log = os.path.join(work, name + ".log")
    args = [f"{bindir}/mrc-controller", "--topology", topo, "--db", f"{work}/{name}.db",
            "--tokens", f"{work}/tokens", "--listen", "127.0.0.1:0", "--web", "",
            "--rate-limit", "0"]
    if etcd:
        args += ["--etcd", etcd, "--name", name]
    with open(log, "w") as f:
        p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        m = re.search(r" port (\d+) \(http\)", open(log).read())
        if m:
            return p, f"http://127.0.0.1:{m.group(1)}", int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit(f"bench_ha: {name} did not start: {open(log).read()[-1500:]}")


def changes(url, n):
    """n adds then their n removals, one at a time: each one's latency in ms"""
    lat, ids = [], []
    for i in range(n):
        start = datetime.datetime(2032, 1, 1) + datetime.timedelta(minutes=i)
        end = start + datetime.timedelta(days=2)
        body = {"element": "p0-t1-0", "reason": f"bench {i}",
                "window": {"start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           "end": end.strftime("%Y-%m-%dT%H:%M:%SZ")}}
        t = time.perf_counter()
        s, j = call(url + "/api/v1/denylist?force=true", "POST", body)
        lat.append((time.perf_counter() - t) * 1000)
        if s != 201:
            sys.exit(f"bench_ha: an add answered {s}: {j}")
        ids.append(j["id"])
    for eid in ids:
        t = time.perf_counter()
        s, _ = call(f"{url}/api/v1/denylist/{eid}", "DELETE")
        lat.append((time.perf_counter() - t) * 1000)
        if s != 204:
            sys.exit(f"bench_ha: a removal answered {s}")
    return lat


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


def reports(bindir, topo, work, port, n):
    out = subprocess.run([f"{bindir}/bench_ctl_reports", "--port", str(port), "--topology", topo,
                          "--tokens", f"{work}/tokens", "--reports", str(n), "--seconds", "20"],
                         capture_output=True, text=True)
    try:
        j = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"bench_ha: bench_ctl_reports: {out.stdout[-500:]} {out.stderr[-500:]}")
    return j


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--changes", type=int)
    ap.add_argument("--reports", type=int)
    a = ap.parse_args()
    if not shutil.which("etcd"):
        sys.exit("bench_ha: no etcd (deploy/install-deps.sh installs etcd-server)")
    topo = os.path.join(ROOT, "deploy/topologies/full.json")
    nchanges = a.changes or (50 if a.smoke else 500)
    nreports = a.reports or (4096 if a.smoke else 131072)
    work = tempfile.mkdtemp(prefix="bench_ha.")
    procs = []
    etcd_sh = os.path.join(ROOT, "tests/ha/etcd_cluster.sh")
    try:
        hosts = subprocess.run([f"{a.bin}/mrcctl", "-t", topo, "topo", "hosts", "--no-header"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        with open(f"{work}/tokens", "w") as f:
            f.write(f"{OPER} operator bench-operator\n")
            seen = set()
            for line in hosts:
                h = line.split()[0] if line.split() else None
                if h and h not in seen:
                    seen.add(h)
                    f.write(f"tok-agent-bench-{h}-0001 agent {h}\n")
        os.chmod(f"{work}/tokens", 0o600)
        etcd = subprocess.run(["bash", "-c", f"source {etcd_sh}; etcd_up {work} >&2 && "
                               "echo $ETCD_ENDPOINTS"], capture_output=True, text=True)
        if etcd.returncode != 0:
            sys.exit(f"bench_ha: etcd did not start: {etcd.stderr[-800:]}")
        endpoints = etcd.stdout.strip()
        alone = start(a.bin, topo, work, "alone")
        procs.append(alone[0])
        ha = [start(a.bin, topo, work, f"controller-{i}", endpoints) for i in (1, 2, 3)]
        procs += [h[0] for h in ha]
        leader = None
        deadline = time.time() + 20
        while time.time() < deadline and not leader:
            for h in ha:
                s, j = call(h[1] + "/api/v1/cluster")
                if s == 200 and j["self"]["role"] == "leader":
                    leader = h
            time.sleep(0.1)
        if not leader:
            sys.exit("bench_ha: no leader among the three")
        topo_name = os.path.basename(topo)
        print(f"bench_ha: {topo_name}, {nchanges} adds and their removals one at a time, "
              f"{nreports} reports; etcd 3 members on loopback")
        la = changes(alone[1], nchanges)
        lh = changes(leader[1], nchanges)
        print(f"{'change latency':<34}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
        print(f"{'  alone (SQLite)':<34}{pct(la, 50):>10.2f}{pct(la, 99):>10.2f}{max(la):>10.2f}")
        print(f"{'  leader (etcd, then SQLite)':<34}{pct(lh, 50):>10.2f}{pct(lh, 99):>10.2f}"
              f"{max(lh):>10.2f}")
        time.sleep(0.5)
        views = [call(h[1] + "/api/v1/denylist")[1]["version"] for h in ha]
        print(f"  the three controllers' versions after it: {views}")
        ra = reports(a.bin, topo, work, alone[2], nreports)
        rh = reports(a.bin, topo, work, leader[2], nreports)
        print(f"{'reports per second':<34}{'reports/s':>10}{'accepted':>10}")
        for label, r in (("  alone", ra), ("  through the leader", rh)):
            print(f"{label:<34}{r.get('per_second', 0):>10.0f}{r.get('accepted', 0):>10}")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        subprocess.run(["bash", "-c", f"source {etcd_sh}; etcd_down {work}"])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
