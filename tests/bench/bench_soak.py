#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_soak: the controller under steady valid load with every attack of issue 19 mixed in.

For --duration seconds (600) on loopback: readers, an operator adding and removing denylist
entries, agents holding the push channel, at --rate valid requests a second in all; beside
them, from another source address (127.0.0.2, so that a per-client limit is the attackers'),
unfinished bodies with no token, a huge body with no token, a slow client sending a byte a
second, a wrong 32 KiB token, one token holding many long-polls, long-polls closed at once,
the same entry posted again and again, windows wholly in the past, a prober removing an
operator's drain, an agent speaking for another host, garbage bytes and a pile of idle
connections. Then: the controller's RSS after warm-up against the end (<= 5 % growth), every
valid request answered as it should be, every attack refused, the store holding exactly the
acknowledged writes, before and after a SIGTERM and a restart.

Prints a table; exits 0 when all of it held, 1 otherwise, 2 on bad arguments.
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOK = {
    "reader": "soak-reader-00000000001",
    "operator": "soak-operator-000000001",
    "prober": "soak-prober-00000000001",
    "localizer": "soak-localizer-00000001",
}
AGENTS = [f"h{i}" for i in range(8)]


def agent_token(h):
    return f"soak-agent-{h}-000000000001"


class Tally:
    """Counts by name, thread-safe; the failures keep their first few reasons."""

    def __init__(self):
        self.lock = threading.Lock()
        self.n = {}
        self.why = {}

    def add(self, name, ok, why=""):
        with self.lock:
            good, bad = self.n.get(name, (0, 0))
            self.n[name] = (good + ok, bad + (not ok))
            if not ok and len(self.why.setdefault(name, [])) < 3:
                self.why[name].append(why)


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Client:
    """One keep-alive connection from |src|; reconnects after a fault."""

    def __init__(self, port, token, src="127.0.0.1", timeout=15):
        self.port, self.token, self.src, self.timeout = port, token, src, timeout
        self.c = None

    def req(self, method, path, body=None):
        for attempt in (0, 1):
            if self.c is None:
                self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout,
                                                    source_address=(self.src, 0))
            h = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                h["Content-Type"] = "application/json"
            try:
                self.c.request(method, path, body=data, headers=h)
                r = self.c.getresponse()
                raw = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.c.close()
                    self.c = None
                try:
                    return r.status, json.loads(raw) if raw else None
                except ValueError:
                    return r.status, raw
            except (OSError, http.client.HTTPException) as e:
                self.c.close()
                self.c = None
                if attempt:
                    return 0, str(e)
        return 0, "unreachable"


def start(binary, topo, db, tokens, log, extra):
    open(log, "w").close()
    p = subprocess.Popen([binary, "--topology", topo, "--db", db, "--tokens", tokens, "--listen",
                          "127.0.0.1:0", "--floor", "0"] + extra,
                         stdout=subprocess.DEVNULL, stderr=open(log, "a"))
    for _ in range(400):
        m = re.search(r" port (\d+) \(http\)", open(log).read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.05)
    sys.exit(f"bench_soak: the controller did not start: {open(log).read()}")


def entries(port):
    """Every entry, following the pages when the list is paged."""
    c = Client(port, TOK["reader"])
    out, after = {}, None
    for _ in range(10000):
        s, d = c.req("GET", "/api/v1/denylist" + (f"?after={after}" if after else ""))
        if s != 200:
            return None
        for e in d["entries"]:
            out[e["id"]] = e
        after = d.get("next")
        if not after:
            return out
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--warmup", type=float, help="seconds before RSS counts (default 10 %%)")
    ap.add_argument("--rate", type=float, default=100, help="valid requests a second")
    ap.add_argument("--topology", default=os.path.join(ROOT, "deploy/topologies/full.json"),
                    help="the fabric (default: the full one, 131,072 hosts)")
    a = ap.parse_args()
    if a.duration < 5 or a.rate <= 0:
        ap.error("want --duration of 5 s or more and a positive --rate")
    warm = a.warmup if a.warmup is not None else max(2.0, a.duration / 10)
    tmp = tempfile.mkdtemp(prefix="soak.")
    tokens = os.path.join(tmp, "tokens")
    with open(os.open(tokens, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(f"{TOK['reader']} reader alice\n{TOK['operator']} operator bob\n")
        f.write(f"{TOK['prober']} prober h1\n{TOK['localizer']} localizer loc\n")
        for h in AGENTS:
            f.write(f"{agent_token(h)} agent {h}\n")
    db, log = os.path.join(tmp, "c.db"), os.path.join(tmp, "controller.log")
    ctl = os.path.join(a.bin, "mrc-controller")
    proc, port = start(ctl, a.topology, db, tokens, log, [])
    links = [i["link"] for i in Client(port, TOK["reader"]).req("GET", "/api/v1/health/links")[1]["items"]]

    valid, attacks = Tally(), Tally()
    acked = {}  # id -> entry the operator was told is committed and has not removed
    acked_lock = threading.Lock()
    stop = threading.Event()
    t_end = time.monotonic() + a.duration
    per_thread = a.rate / 4  # four paced valid workers; the agents' polls come on top

    def paced(fn):
        def run():
            gap = 1.0 / per_thread
            nxt = time.monotonic()
            while not stop.is_set():
                fn()
                nxt += gap
                time.sleep(max(0, nxt - time.monotonic()))
        return run

    local = threading.local()
    reads = ["/api/v1/health/summary", "/api/v1/health/links?plane=0", "/api/v1/fabric",
             "/api/v1/denylist/version", "/api/v1/health/problems", "/api/v1/whoami"]

    def read():
        if not hasattr(local, "rd"):
            local.rd = Client(port, TOK["reader"])
        p = random.choice(reads)
        s, d = local.rd.req("GET", p)
        valid.add("read", s == 200, f"{p}: {s} {str(d)[:120]}")

    op = Client(port, TOK["operator"])
    mine = []

    def write():
        if len(mine) < 20 and random.random() < 0.6 or not mine:
            el = random.choice(links)
            body = {"element": el, "reason": f"soak {random.randrange(1 << 30)}"}
            s, d = op.req("POST", "/api/v1/denylist", body)
            # 200: the same element, scope and window of ours in force already (the reason is
            # not what makes an entry)
            ok = s in (200, 201) and isinstance(d, dict) and "id" in d
            valid.add("deny add", ok, f"{s} {str(d)[:160]}")
            if ok:
                with acked_lock:
                    acked[d["id"]] = d
                if d["id"] not in mine:
                    mine.append(d["id"])
        else:
            i = mine.pop(random.randrange(len(mine)))
            s, d = op.req("DELETE", f"/api/v1/denylist/{i}")
            ok = s in (200, 204)
            valid.add("deny remove", ok, f"{s} {str(d)[:160]}")
            if ok:
                with acked_lock:
                    acked.pop(i, None)

    def agent_loop(h):
        c = Client(port, agent_token(h), timeout=30)
        ver = 0
        while not stop.is_set():
            s, d = c.req("GET", f"/api/v1/denylist/version?after={ver}&wait=5")
            ok = s == 200 and isinstance(d, dict)
            valid.add("push poll", ok, f"{s} {str(d)[:120]}")
            if ok:
                ver = d["version"]
            else:
                time.sleep(0.5)

    # --- the attacks, from 127.0.0.2 --------------------------------------------------------
    ATT = "127.0.0.2"

    def raw_conn(timeout=10):
        s = socket.socket()
        s.settimeout(timeout)
        s.bind((ATT, 0))
        s.connect(("127.0.0.1", port))
        return s

    def status_of(s):
        try:
            got = s.recv(4096)
        except socket.timeout:
            return -1  # held, unanswered: let in
        except OSError:
            return 0  # reset or cut: refused without an answer
        m = re.match(rb"HTTP/1\.[01] (\d{3})", got)
        return int(m.group(1)) if m else 0

    def unfinished_bodies():
        socks = []
        for _ in range(48):
            try:
                s = raw_conn(5)
                s.sendall(b"POST /api/v1/denylist HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1048576\r\n\r\n{\"element\": ")
                socks.append(s)
            except OSError:
                attacks.add("48 unfinished bodies, no token", True)  # refused at connect
        for s in socks:
            st = status_of(s)
            attacks.add("48 unfinished bodies, no token", st in (0, 401), f"answered {st}")
            s.close()

    def huge_body():
        try:
            s = raw_conn(5)
            s.sendall(b"POST /api/v1/denylist HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 314572800\r\n\r\n")
            s.sendall(b"x" * 65536)
            st = status_of(s)
            attacks.add("a 300 MiB body, no token", st in (0, 401, 413), f"answered {st}")
            s.close()
        except OSError:
            attacks.add("a 300 MiB body, no token", True)

    def slow_client():
        try:
            s = raw_conn(2)
            t0 = time.monotonic()
            line = b"GET /api/v1/fabric HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
            cut = False
            for ch in line:
                if stop.is_set() and time.monotonic() - t0 > 60:
                    break
                try:
                    s.send(bytes([ch]))
                    time.sleep(1)
                except OSError:
                    cut = True
                    break
                if time.monotonic() - t0 > 45:
                    break
            attacks.add("a byte a second (cut within 45 s)", cut, "never cut")
            s.close()
        except OSError:
            attacks.add("a byte a second (cut within 45 s)", True)

    att_reader = Client(port, "a" * 32768, src=ATT)

    def long_token():
        t0 = time.monotonic()
        s, _ = att_reader.req("GET", "/api/v1/fabric")
        attacks.add("a wrong 32 KiB token", s in (0, 400, 401, 431) and time.monotonic() - t0 < 1,
                    f"{s} after {time.monotonic() - t0:.3f} s")

    def hog_polls():
        socks, refused = [], 0
        for _ in range(72):
            try:
                s = raw_conn(3)
                s.sendall(f"GET /api/v1/denylist/version?after=999999999&wait=20 HTTP/1.1\r\nHost: x\r\n"
                          f"Authorization: Bearer {TOK['reader']}\r\n\r\n".encode())
                socks.append(s)
            except OSError:
                refused += 1
        time.sleep(0.5)
        for s in socks:
            s.setblocking(False)
            try:
                got = s.recv(4096)
                refused += bool(re.match(rb"HTTP/1\.[01] 429", got))
            except OSError:
                pass
        attacks.add("one token holding 72 long-polls (refused beyond its cap)", refused > 0,
                    f"all 72 held")
        for s in socks:
            s.close()

    def closed_polls():
        for _ in range(20):
            try:
                s = raw_conn(3)
                s.sendall(f"GET /api/v1/denylist/version?after=999999999&wait=30 HTTP/1.1\r\nHost: x\r\n"
                          f"Authorization: Bearer {agent_token('h7')}\r\n\r\n".encode())
                time.sleep(0.05)
                s.close()
            except OSError:
                pass
        # each closed one's slot is free at once: within a second only the 8 valid agents'
        # polls may be waiting
        left = None
        for _ in range(10):
            left = subscribers()
            if left is not None and left <= len(AGENTS):
                break
            time.sleep(0.1)
        attacks.add("long-polls closed at once (slots freed within 1 s)",
                    left is not None and left <= len(AGENTS), f"{left} still waiting")

    att_op = Client(port, TOK["operator"], src=ATT)

    def subscribers():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
                data = b""
                while chunk := c.recv(65536):
                    data += chunk
            m = re.search(rb"^mrcfab_push_subscribers (\d+)", data, re.M)
            return int(m.group(1)) if m else None
        except OSError:
            return None

    def same_entry():
        # a window of its own, so that the valid writer's entries are never this one
        body = {"element": links[0], "reason": "soak: the same drain again",
                "window": {"start": "2095-01-01T00:00:00Z", "end": "2095-01-01T01:00:00Z"}}
        ids = set()
        for _ in range(50):
            s, d = att_op.req("POST", "/api/v1/denylist", body)
            if s in (200, 201) and isinstance(d, dict):
                ids.add(d.get("id"))
        attacks.add("the same entry 50 times (one entry)", len(ids) <= 1, f"{len(ids)} entries")
        for i in ids:
            att_op.req("DELETE", f"/api/v1/denylist/{i}")

    def past_window():
        body = {"element": links[1], "reason": "soak: past",
                "window": {"start": "2020-01-01T00:00:00Z", "end": "2020-01-01T01:00:00Z"}}
        s, d = att_op.req("POST", "/api/v1/denylist", body)
        attacks.add("a window wholly in the past", s == 400, f"{s}")
        if s in (200, 201) and isinstance(d, dict):
            att_op.req("DELETE", f"/api/v1/denylist/{d['id']}")

    att_prober = Client(port, TOK["prober"], src=ATT)

    def prober_removes():
        with acked_lock:
            ids = list(acked)
        if not ids:
            return
        i = random.choice(ids)
        s, _ = att_prober.req("DELETE", f"/api/v1/denylist/{i}")
        attacks.add("a prober removing an operator's entry", s in (403, 404), f"{s}")
        if s in (200, 204):
            with acked_lock:
                acked.pop(i, None)

    att_agent = Client(port, agent_token("h0"), src=ATT)

    def other_host():
        s, _ = att_agent.req("POST", "/api/v1/agents", {"host": "h1"})
        attacks.add("an agent registering another host", s == 403, f"{s}")
        s, _ = att_agent.req("POST", "/api/v1/reports", {"host": "h2", "evs": []})
        attacks.add("an agent reporting for another host", s == 403, f"{s}")
        s, _ = att_prober.req("POST", "/api/v1/reports", {"host": "h3", "evs": []})
        attacks.add("a prober node reporting for another host", s == 403, f"{s}")

    def garbage():
        try:
            s = raw_conn(3)
            s.sendall(os.urandom(4096) + b"\r\n\r\n")
            st = status_of(s)
            attacks.add("garbage bytes", st in (0, 400, 414, 431), f"{st}")
            s.close()
        except OSError:
            attacks.add("garbage bytes", True)

    def idle_pile():
        socks = []
        for _ in range(300):
            try:
                socks.append(raw_conn(2))
            except OSError:
                break
        time.sleep(1)
        # while they are held, another client is served at once
        t0 = time.monotonic()
        st, _ = Client(port, TOK["reader"], timeout=5).req("GET", "/api/v1/fabric")
        took = time.monotonic() - t0
        time.sleep(1)
        for s in socks:
            s.close()
        attacks.add("300 idle connections from one client (others served meanwhile)",
                    st == 200 and took < 1, f"another client got {st} after {took:.2f} s")

    attack_fns = [unfinished_bodies, huge_body, long_token, hog_polls, closed_polls, same_entry,
                  past_window, prober_removes, other_host, garbage, idle_pile]

    def attacker():
        while not stop.is_set():
            random.choice(attack_fns)()
            time.sleep(random.uniform(0.2, 1.0))

    def slow_attacker():
        while not stop.is_set():
            slow_client()

    threads = [threading.Thread(target=paced(read)) for _ in range(3)]
    threads.append(threading.Thread(target=paced(write)))
    threads += [threading.Thread(target=agent_loop, args=(h,)) for h in AGENTS]
    threads += [threading.Thread(target=attacker), threading.Thread(target=slow_attacker)]
    for t in threads:
        t.daemon = True
        t.start()

    samples = []
    t0 = time.monotonic()
    while time.monotonic() < t_end:
        time.sleep(1)
        samples.append((time.monotonic() - t0, rss_kib(proc.pid)))
        if proc.poll() is not None:
            break
    stop.set()
    for t in threads:
        t.join(timeout=70)
    alive = proc.poll() is None

    after_warm = [r for (t, r) in samples if t >= warm]
    base = after_warm[0] if after_warm else 0
    end_rss = samples[-1][1] if samples else 0
    peak = max(after_warm) if after_warm else 0
    growth = (end_rss - base) / base * 100 if base else 100.0

    with acked_lock:
        want = dict(acked)
    got = entries(port) if alive else None
    lost = None if got is None else sorted(i for i in want if i not in got)
    extra = None if got is None else sorted(i for i in got if i not in want)
    stopped = False
    if alive:
        proc.send_signal(signal.SIGTERM)
        try:
            stopped = proc.wait(timeout=15) == 0
        except subprocess.TimeoutExpired:
            proc.kill()
    proc2, port2 = start(ctl, a.topology, db, tokens, log, [])
    got2 = entries(port2)
    proc2.send_signal(signal.SIGTERM)
    proc2.wait(timeout=15)
    lost2 = None if got2 is None else sorted(i for i in want if i not in got2)

    print(f"bench_soak: {a.duration:.0f} s, {a.rate:.0f} valid requests/s + 8 agents' long-polls, "
          f"attacks from {ATT}; RSS after {warm:.0f} s of warm-up")
    print(f"{'valid requests':<58} {'answered':>9} {'failed':>7}")
    ok = True
    for k, (g, b) in sorted(valid.n.items()):
        print(f"  {k:<56} {g:>9} {b:>7}" + (f"   e.g. {valid.why[k][0]}" if b else ""))
        ok &= b == 0
    print(f"{'attacks':<58} {'refused':>9} {'let in':>7}")
    for k, (g, b) in sorted(attacks.n.items()):
        print(f"  {k:<56} {g:>9} {b:>7}" + (f"   e.g. {attacks.why[k][0]}" if b else ""))
        ok &= b == 0
    print(f"controller RSS after warm-up  {base / 1024:8.1f} MiB")
    print(f"controller RSS at the end     {end_rss / 1024:8.1f} MiB (peak {peak / 1024:.1f} MiB)")
    print(f"RSS growth after warm-up      {growth:8.2f} %   (target <= 5 %)")
    print(f"acknowledged entries in force {len(want):8d}; lost {len(lost) if lost is not None else '?'},"
          f" not acknowledged {len(extra) if extra is not None else '?'}; after a restart lost "
          f"{len(lost2) if lost2 is not None else '?'}")
    print(f"alive to the end {alive}, SIGTERM clean {stopped}")
    ok &= alive and stopped and growth <= 5 and lost == [] and extra == [] and lost2 == []
    print("PASS" if ok else "FAIL")
    subprocess.run(["rm", "-rf", tmp])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
