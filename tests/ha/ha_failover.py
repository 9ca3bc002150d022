#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Three mrc-controllers on a three-member etcd on loopback, and their failures:
  - kill -9 of the leader in the middle of a stream of denylist writes, KILLS times: no
    acknowledged entry lost, a new leader answering within 3 s, a push-channel client resumed
    within 5 s (p50 and max printed);
  - one etcd member of three stopped: no effect; two: changes refused with 503 and a sentence,
    reads served; one back: changes again;
  - the leader cut off from etcd (its etcd connections through proxies that stop forwarding):
    it stops leading within its lease's TTL, another leads, and it never acknowledges a change
    meanwhile: never two leaders acknowledging.
Usage: ha_failover.py BINDIR TOPOLOGY WORKDIR ETCD_ENDPOINTS KILLS (etcd_cluster.sh started the
members, ha.sh calls this and stops them)."""
import datetime
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

BIN, TOPO, WORK, ETCD, KILLS = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
TTL = 2
OPER = "tok-operator-0000000001"
READER = "tok-reader-000000000001"
AGENT = "tok-agent-0000000000001"
failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures += 1


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


opener = urllib.request.build_opener(NoRedirect)


def call(url, method="GET", body=None, token=READER, timeout=5):
    """(status, json or None, headers); status 0 when nothing answered"""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with opener.open(req, timeout=timeout) as r:
            text = r.read()
            return r.status, (json.loads(text) if text else None), r.headers
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            j = json.loads(text)
        except ValueError:
            j = None
        return e.code, j, e.headers
    except (OSError, ValueError):
        return 0, None, {}


class Controller:
    def __init__(self, i, etcd):
        self.i, self.etcd, self.proc, self.url = i, etcd, None, None
        self.log = os.path.join(WORK, f"controller-{i}.log")
        self.port = 0

    def start(self):
        # the same port again after a kill: clients keep their list
        listen = f"127.0.0.1:{self.port}"
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                [f"{BIN}/mrc-controller", "--topology", TOPO, "--db", f"{WORK}/c{self.i}.db",
                 "--tokens", f"{WORK}/tokens", "--listen", listen, "--web", "",
                 "--etcd", self.etcd, "--name", f"controller-{self.i}", "--lease-ttl", str(TTL),
                 "--rate-limit", "0"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            with open(self.log) as f:
                m = re.findall(r" port (\d+) \(http\)", f.read())
            if m and (self.port == 0 or int(m[-1]) == self.port):
                self.port = int(m[-1])
                self.url = f"http://127.0.0.1:{self.port}"
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"controller-{self.i} did not start: {open(self.log).read()[-2000:]}")

    def kill(self, sig=signal.SIGKILL):
        self.proc.send_signal(sig)
        self.proc.wait()


def leader_of(ctls):
    """the controllers that say they lead"""
    out = []
    for c in ctls:
        if c.proc.poll() is not None:
            continue
        s, j, _ = call(c.url + "/api/v1/cluster", timeout=2)
        if s == 200 and j["self"]["role"] == "leader":
            out.append(c)
    return out


def wait_leader(ctls, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        ls = leader_of(ctls)
        if len(ls) == 1:
            return ls[0]
        time.sleep(0.05)
    return None


def post_entry(urls, n, hops=3):
    """an add through the list as a client does (next on failure, follow a 307): (status, id)"""
    # a window of its own for each n (a minute apart): the same window again would be the
    # same entry (an add is idempotent)
    start = datetime.datetime(2031, 1, 1) + datetime.timedelta(minutes=n)
    end = start + datetime.timedelta(days=1)
    body = {"element": "p0-t1-0", "reason": f"ha stream {n}",
            "window": {"start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "end": end.strftime("%Y-%m-%dT%H:%M:%SZ")}}
    url = urls[0]
    for _ in range(hops + len(urls)):
        s, j, h = call(url + "/api/v1/denylist?force=true", "POST", body, OPER, timeout=4)
        if s in (200, 201):
            return s, j["id"]
        if s == 307 and h.get("X-Mrcfab-Leader"):
            url = h["X-Mrcfab-Leader"]
            continue
        url = urls[(urls.index(url) + 1) % len(urls)] if url in urls else urls[0]
    return s, None


def main():
    subprocess.run(["bash", "-c", f"source {os.path.dirname(__file__)}/../controller/ctl_common.sh;"
                    f" ctl_tokens {WORK}/tokens"], check=True)
    ctls = [Controller(i, ETCD) for i in (1, 2, 3)]
    for c in ctls:
        c.start()
    lead = wait_leader(ctls)
    check(lead is not None, f"one of three leads ({lead.url if lead else 'none'})")
    urls = [c.url for c in ctls]

    # --- a push-channel client: long-polls any controller, next on failure -----------------
    push = {"version": -1, "epoch": -1, "gaps": [], "stop": False, "alive": time.time()}

    def poller():
        i, lost = 0, None
        while not push["stop"]:
            url = urls[i % len(urls)]
            s, j, _ = call(f"{url}/api/v1/denylist/version?after={max(push['version'], 0)}&wait=2",
                           token=AGENT, timeout=4)
            if s == 200:
                if lost is not None:
                    push["gaps"].append(time.time() - lost)
                    lost = None
                if (j.get("epoch", 0), j["version"]) >= (push["epoch"], push["version"]):
                    push["epoch"], push["version"] = j.get("epoch", 0), j["version"]
                push["alive"] = time.time()
            else:
                if lost is None:
                    lost = time.time()
                i += 1
                time.sleep(0.05)

    pt = threading.Thread(target=poller, daemon=True)
    pt.start()

    # --- the stream of writes and the kills -----------------------------------------------
    acked, refused, n = {}, 0, 0
    stop = threading.Event()

    def writer():
        nonlocal n, refused
        while not stop.is_set():
            n += 1
            s, eid = post_entry(urls, n)
            if eid:
                acked[n] = eid
            else:
                refused += 1
                time.sleep(0.05)

    wt = threading.Thread(target=writer, daemon=True)
    wt.start()
    failover, resumed = [], []
    for k in range(KILLS):
        time.sleep(0.6)
        lead = wait_leader(ctls)
        if not lead:
            check(False, f"kill {k + 1}: a leader before it")
            break
        before = len(acked)
        t0 = time.time()
        lead.kill()
        # a new leader answering: the first acknowledged write after the kill
        while time.time() - t0 < 10 and len(acked) == before:
            time.sleep(0.01)
        failover.append(time.time() - t0)
        lead.start()  # back as a follower, on its port
        gaps_before = len(push["gaps"])
        while time.time() - t0 < 10 and push["alive"] < t0 + 0.001:
            time.sleep(0.01)
        resumed.append(max(0.0, push["alive"] - t0) if push["alive"] > t0 else 10.0)
        del gaps_before
    stop.set()
    wt.join(10)
    time.sleep(1)
    push["stop"] = True
    p50, mx = statistics.median(failover), max(failover)
    print(f"failover over {len(failover)} kills: p50 {p50:.2f} s, max {mx:.2f} s; "
          f"push resumed p50 {statistics.median(resumed):.2f} s, max {max(resumed):.2f} s; "
          f"{len(acked)} writes acknowledged, {refused} refused meanwhile", flush=True)
    check(mx <= 3.0, f"a new leader answers within 3 s of each kill (max {mx:.2f} s)")
    check(max(resumed) <= 5.0, f"the push channel resumes within 5 s (max {max(resumed):.2f} s)")

    # every acknowledged entry, on every controller, and the three the same
    time.sleep(1)
    views, reasons = [], {}
    for c in ctls:
        s, j, _ = call(c.url + "/api/v1/denylist")
        views.append((j["version"], sorted(e["id"] for e in j["entries"])) if s == 200 else None)
        if c is ctls[0] and s == 200:
            reasons = {e["id"]: e["reason"] for e in j["entries"]}
    ids = set(views[0][1]) if views[0] else set()
    lost = [eid for eid in acked.values() if eid not in ids]
    distinct = len(set(acked.values()))
    check(distinct == len(acked), f"each acknowledged add is an entry of its own "
          f"({distinct} ids for {len(acked)} adds)")
    print(f"  the final denylist: {len(ids)} entries, version {views[0][0] if views[0] else None}")
    check(not lost, f"no acknowledged entry lost ({len(acked)} acknowledged, {len(lost)} missing)")
    # a version written twice would leave the id but the later add's entry under it
    changed = [n for n, eid in acked.items() if eid in ids and reasons.get(eid) != f"ha stream {n}"]
    check(not changed, f"each acknowledged entry is the one added ({len(changed)} hold another's)")
    check(views[0] is not None and views.count(views[0]) == 3,
          f"the three controllers hold one denylist (versions {[v[0] if v else None for v in views]})")

    # --- etcd members stopped ----------------------------------------------------------------
    def etcd(cmd):
        subprocess.run(["bash", "-c", f"source {os.path.dirname(__file__)}/etcd_cluster.sh; {cmd}"],
                       check=True)

    etcd(f"etcd_stop {WORK} 3")
    time.sleep(0.5)
    s, eid = post_entry(urls, 100000)
    check(eid is not None, f"one etcd member of three stopped: a change is committed ({s})")
    etcd(f"etcd_stop {WORK} 2")
    t0 = time.time()
    lead = wait_leader(ctls, 3) or ctls[0]
    s, j, _ = call(lead.url + "/api/v1/denylist?force=true", "POST",
                   {"element": "p0-t1-1", "reason": "no quorum"}, OPER, timeout=12)
    took = time.time() - t0
    detail = (j or {}).get("detail", "")
    check(s == 503 and "etcd" in detail,
          f"two stopped: a change is refused with 503 and a sentence in {took:.1f} s ({s}: {detail})")
    reads = [call(c.url + "/api/v1/denylist")[0] for c in ctls]
    check(reads == [200, 200, 200], f"two stopped: every controller serves reads ({reads})")
    s, j, _ = call(urls[0] + "/api/v1/denylist/version?after=0&wait=0", token=AGENT)
    check(s == 200, f"two stopped: the push channel answers ({s})")
    etcd(f"etcd_start {WORK} 2")
    ok, t0 = False, time.time()
    while time.time() - t0 < 20 and not ok:
        s, eid = post_entry(urls, 100001)
        ok = eid is not None
        if not ok:
            time.sleep(0.5)
    check(ok, f"one member back: changes are committed again (after {time.time() - t0:.1f} s)")
    etcd(f"etcd_start {WORK} 3")

    for c in ctls:
        c.kill(signal.SIGTERM)
    return failures


class Proxy:
    """a TCP proxy to one etcd member that can stop forwarding (a partition: the bytes go
    nowhere, the connections stay open)"""

    def __init__(self, target):
        self.target = target
        self.cut = False
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            a, _ = self.srv.accept()
            if self.cut:
                continue  # never answered, never closed: what a partition looks like
            try:
                b = socket.create_connection(self.target, timeout=2)
            except OSError:
                a.close()
                continue
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self.pipe, args=(x, y), daemon=True).start()

    def pipe(self, x, y):
        try:
            while True:
                d = x.recv(65536)
                if not d or self.cut:
                    break
                y.sendall(d)
        except OSError:
            pass


def cut_off():
    """the leader cut off from etcd stops leading within its TTL; never two leaders"""
    members = [(u.split("//")[1].split(":")[0], int(u.rsplit(":", 1)[1])) for u in ETCD.split(",")]
    proxies = [Proxy(m) for m in members]
    via = ",".join(f"http://127.0.0.1:{p.port}" for p in proxies)
    c1 = Controller(4, via)
    c1.start()
    time.sleep(1)
    others = [Controller(5, ETCD), Controller(6, ETCD)]
    for c in others:
        c.start()
    allc = [c1] + others
    lead = wait_leader(allc)
    if lead is not c1:
        # make the proxied one lead: stop the others' leads until it does
        for _ in range(6):
            lead = wait_leader(allc)
            if lead is c1:
                break
            lead.kill()
            time.sleep(0.2)
            lead.start()
    check(lead is c1, "the controller behind the proxies leads")
    two, acked_by_c1 = 0, 0
    t0 = time.time()
    for p in proxies:
        p.cut = True
    stepped = None
    done = threading.Event()

    def writes():
        nonlocal acked_by_c1
        while not done.is_set():
            s, _, _ = call(c1.url + "/api/v1/denylist?force=true", "POST",
                           {"element": "p0-t1-0", "reason": f"cut {time.time()}"}, OPER, timeout=5)
            if s in (200, 201) and time.time() - t0 > TTL:
                acked_by_c1 += 1
            time.sleep(0.2)

    wt = threading.Thread(target=writes, daemon=True)
    wt.start()
    while time.time() - t0 < TTL + 6:
        ls = leader_of(allc)
        if len(ls) > 1:
            two += 1
        if stepped is None and c1 not in ls:
            stepped = time.time() - t0
        time.sleep(0.05)
    done.set()
    wt.join(10)
    new = [c for c in leader_of(allc) if c is not c1]
    check(stepped is not None and stepped <= TTL,
          f"cut off from etcd, it stops leading within its TTL of {TTL} s "
          f"({'after %.1f s' % stepped if stepped is not None else 'never'})")
    check(len(new) == 1, f"another controller leads ({[c.i for c in new]})")
    check(two == 0 and acked_by_c1 == 0,
          f"never two leaders ({two} times) and no change acknowledged by the cut-off one "
          f"after its TTL ({acked_by_c1})")
    for p in proxies:
        p.cut = False
    for c in allc:
        c.kill(signal.SIGTERM)


if __name__ == "__main__":
    main()
    cut_off()
    print("ha_failover: " + ("all passed" if failures == 0 else f"{failures} failed"))
    sys.exit(1 if failures else 0)
