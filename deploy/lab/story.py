#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The lab's story, on a lab that `lab.sh up` brought up: a ring all-reduce over every host
while a T0-T1 link flaps, another goes 2 % lossy, an operator drains a T1, reboots it and
undrains it, the controller is killed and restarted (on a lab that came up with --ha: the
leading controller of three is killed during the drain, and another leads), and the lossy
link heals. One line per step with the all-reduce bandwidth and what the controller knows;
every claim of the story is checked (a line each at the end), and the exit status is 1 if one
failed.

It starts from a clean lab: with a fault in force (lab.sh status lists them) or an entry in the
controller's denylist it refuses, exit 2, saying how to clear them. Exit status: 0 every claim
held, 1 one failed (or the system did), 2 bad input.

usage: story.py [-b BINDIR] [-t TOPOLOGY] [-p PREFIX] [-d DIR] [-P PORT] [--pcap FILE]
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# MRC's inner UDP destination port, and where a T1's uSID sits in an outer address arriving at
# a T0 from a host (bytes 6-7: block(4) then the T0's uSID) and the inner UDP port (40 + 40 + 2)
MRC_PORT = 4791
T1_USID_BIT = (24 + 6) * 8
INNER_DPORT_BIT = (40 + 40 + 2) * 8


class Lab:
    def __init__(self, a):
        self.a = a
        self.sh = [os.path.join(HERE, "lab.sh"), "-b", a.bin, "-t", a.topo, "-p", a.prefix,
                   "-d", a.dir, "-P", str(a.port)]
        conf = dict(line.strip().split("=", 1) for line in open(os.path.join(a.dir, "lab.conf")))
        self.hold_s = float(conf["hold_s"])
        self.window_s = float(conf["window_ms"]) / 1000
        root = self.run("addr", "root").strip()
        # the controller speaks https unless the lab came up with --no-tls: trust its CA and
        # offer the operator's client certificate (lab.sh's DIR/tls)
        self.tls = conf.get("tls") == "true"
        tlsdir = os.path.join(a.dir, "tls")
        self.ha = conf.get("ha") == "true"
        self.ctl = f"{'https' if self.tls else 'http'}://[{root}]:{a.port}"
        # up --ha: the three controllers, as lab.sh status lists them; any serves reads
        self.ctls = [self.ctl]
        if self.ha:
            self.ctls = [l.split()[1] for l in self.run("status").splitlines()
                         if l.startswith("controller-") and l.split()[1].startswith("http")]
            self.ctl = ",".join(self.ctls)
        self.ssl = None
        self.tls_args = []
        if self.tls:
            self.ssl = ssl.create_default_context(cafile=os.path.join(tlsdir, "ca.pem"))
            self.ssl.load_cert_chain(os.path.join(tlsdir, "admin.pem"),
                                     os.path.join(tlsdir, "admin.key"))
            self.tls_args = ["--cacert", os.path.join(tlsdir, "ca.pem"),
                             "--client-cert", os.path.join(tlsdir, "admin.pem"),
                             "--client-key", os.path.join(tlsdir, "admin.key")]
        self.loc = f"http://[{root}]:{a.port + 1}"
        self.reader = open(os.path.join(a.dir, "token", "reader")).read().strip()
        self.switches = [l.split() for l in self.mrcctl("topo", "switches", "--no-header").splitlines()]
        self.host_ports = [l.split() for l in self.mrcctl("topo", "hosts", "--no-header").splitlines()]
        self.hosts = list(dict.fromkeys(h[0] for h in self.host_ports))

    def run(self, *args):
        r = subprocess.run(self.sh + list(args), capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"lab.sh {' '.join(args)} failed: {r.stderr.strip()}")
        return r.stdout

    def mrcctl(self, *args):
        return subprocess.run([os.path.join(self.a.bin, "mrcctl"), "-t", self.a.topo] +
                              list(args), check=True, capture_output=True, text=True).stdout

    def netns(self, element):
        return f"{self.a.prefix}-{element}"

    def nsx(self, element, *cmd, **kw):
        return subprocess.run(["ip", "netns", "exec", self.netns(element)] + list(cmd),
                              capture_output=True, text=True, **kw)

    def get(self, url, timeout=2):
        """GET a URL; one of self.ctl's is asked of each controller in turn until one answers
        (a follower's 307 to the leader is followed, the token kept)"""
        tries = [url]
        if url.startswith(self.ctl):
            path = url[len(self.ctl):]
            tries = [c + path for c in self.ctls]
        last = None
        for u in tries:
            req = urllib.request.Request(u, headers={"Authorization": f"Bearer {self.reader}"})
            tls = self.ssl if u.startswith("https:") else None
            try:
                with urllib.request.urlopen(req, timeout=timeout, context=tls) as r:
                    return json.load(r)
            except OSError as e:
                last = e
        raise last

    def leader(self):
        """the leading controller's service name (up --ha)"""
        return self.run("leader").split()[0]

    def leader_among(self, urls):
        """the service name of the one of |urls| that says it leads, or None"""
        for u in urls:
            try:
                if self.get(u + "/api/v1/cluster", timeout=1)["self"]["role"] == "leader":
                    return f"controller-{self.ctls.index(u) + 1}"
            except (OSError, ValueError, KeyError):
                pass
        return None

    def pid(self, name):
        return int(open(os.path.join(self.a.dir, "run", f"{name}.pid")).read())


class Ring:
    """One mrc-perf ring rank per host; rank 0's progress lines give the bandwidth."""

    def __init__(self, lab, size=4 << 20, progress_ms=500):
        self.lab, self.size, self.n = lab, size, len(lab.hosts)
        addrs = ",".join(lab.run("addr", h).strip() for h in lab.hosts)
        self.procs, self.lines, self.finals = [], {}, {}
        self.points = []  # (monotonic time, iterations) of rank 0
        self.lock = threading.Lock()
        for rank, h in enumerate(lab.hosts):
            p = subprocess.Popen(["ip", "netns", "exec", lab.netns(h),
                                  os.path.join(lab.a.bin, "mrc-perf"), "ring", "--hosts", addrs,
                                  "--size", str(size), "--duration", "3600",
                                  "--progress", str(progress_ms)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
            self.lines[rank] = []
            threading.Thread(target=self.read, args=(rank, p), daemon=True).start()

    def read(self, rank, p):
        rest = []
        for line in p.stdout:
            now = time.monotonic()
            if line.startswith('{"progress"'):
                o = json.loads(line)
                with self.lock:
                    self.lines[rank].append(now)
                    if rank == 0:
                        self.points.append((now, o["iterations"]))
            else:
                rest.append(line)
        try:
            self.finals[rank] = json.loads("".join(rest))
        except ValueError:
            self.finals[rank] = {"unreadable": "".join(rest)[-400:]}

    def started(self):
        return len(self.points) >= 2

    def gbps(self, t0, t1):
        """Bus bandwidth between monotonic times t0 and t1 (the progress lines within)."""
        with self.lock:
            pts = [p for p in self.points if t0 <= p[0] <= t1]
        if len(pts) < 2 or pts[-1][0] == pts[0][0]:
            return 0.0
        it = pts[-1][1] - pts[0][1]
        return it * self.size * 8 * 2 * (self.n - 1) / self.n / (pts[-1][0] - pts[0][0]) / 1e9

    def longest_gap(self, since):
        """The longest time any rank went without finishing an iteration."""
        now, worst = time.monotonic(), 0.0
        with self.lock:
            for ts in self.lines.values():
                ts = [since] + [t for t in ts if t >= since] + [now]
                worst = max([worst] + [b - a for a, b in zip(ts, ts[1:])])
        return worst

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        time.sleep(0.2)
        return [self.finals.get(r, {"missing": True}) for r in range(self.n)]


class Denylist:
    """The controller's denylist, polled: when each entry was first and last seen."""

    def __init__(self, lab):
        self.lab, self.seen, self.gone, self.current, self.errors = lab, {}, {}, [], 0
        self.stopping = False
        threading.Thread(target=self.poll, daemon=True).start()

    def poll(self):
        while not self.stopping:
            try:
                entries = self.lab.get(f"{self.lab.ctl}/api/v1/denylist")["entries"]
            except Exception:  # the controller restarting: the next poll will do
                self.errors += 1
                time.sleep(0.25)
                continue
            now = time.monotonic()
            ids = set()
            for e in entries:
                ids.add(e["id"])
                self.seen.setdefault(e["id"], (now, e))
                self.gone.pop(e["id"], None)
            for i in self.seen:
                if i not in ids and i not in self.gone:
                    self.gone[i] = now
            self.current = entries
            time.sleep(0.25)

    def since(self, t, source=None):
        return [e for i, (ts, e) in self.seen.items() if ts >= t and
                (source is None or e["source"] == source)]

    def wait(self, pred, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            hit = [e for e in self.current if pred(e)]
            if hit:
                return hit
            time.sleep(0.1)
        return []

    def gone_at(self, entry_id):
        return self.gone.get(entry_id)


def describe(entries):
    if not entries:
        return "no denylist entry"
    parts = [f"{e['element']} {e['scope']} ({e['source']})" for e in entries]
    return f"{len(entries)} denied: " + ", ".join(parts)


class Story:
    def __init__(self, a, lab):
        self.a = a
        self.lab = lab
        self.base = None  # the steady state's bandwidth, once measured
        # the share of it each step must keep; with --ha, three etcd members, three
        # controllers and four localizers share the lab's CPUs with the ring, and the claim
        # that matters there is that it never stops
        self.floor = 0.5 if lab.ha else 0.75
        self.checks = []
        self.t_start = time.monotonic()
        sw = {(s[1], s[2], int(s[3])): s[0] for s in self.lab.switches}
        planes = sorted({s[1] for s in self.lab.switches}, key=int)
        self.flap = (sw[(planes[0], "t0", 1)], sw[(planes[0], "t1", 0)])
        self.gray = (sw[(planes[0], "t0", 2)], sw[(planes[0], "t1", 1)])
        last = planes[-1]
        t1s = sorted(i for (p, t, i) in sw if p == last and t == "t1")
        self.drained = sw[(last, "t1", t1s[-1])]
        self.drained_plane, self.drained_index = int(last), t1s[-1]
        self.drained_usid = int(next(s[4] for s in self.lab.switches if s[0] == self.drained), 16)
        self.plane_t0s = [sw[k] for k in sw if k[0] == last and k[1] == "t0"]

    def check(self, ok, what):
        self.checks.append((bool(ok), what))
        return ok

    def say(self, what, t0=None):
        bw = ""
        if t0 is not None:
            g = self.ring.gbps(t0, time.monotonic())
            bw = f"ring {g:5.2f} Gb/s"
            if self.base:
                bw += f" ({100 * g / self.base:3.0f} %)"
        try:
            agents = self.lab.get(f"{self.lab.ctl}/api/v1/agents")
            know = f"{describe(self.deny.current)}; agents {agents['fresh']}/{agents['total']}"
        except Exception:
            know = "controller not answering"
        print(f"[{time.monotonic() - self.t_start:6.1f}s] {what:<52} {bw:<22} {know}", flush=True)

    def link(self, pair):
        return f"{pair[0]}~{pair[1]}"

    # --- the steps ------------------------------------------------------------------------

    def steady(self):
        t = time.monotonic()
        self.wire_check()
        time.sleep(max(0.0, 8 - (time.monotonic() - t)))
        self.base = self.ring.gbps(t, time.monotonic())
        self.say("steady state", t)
        self.check(self.base > 0, f"steady state: the ring runs at {self.base:.2f} Gb/s")

    def flapping(self):
        t = time.monotonic()
        self.lab.run("fault", "flap", *self.flap, "2")
        time.sleep(12)
        bw = self.ring.gbps(t, time.monotonic())
        self.say(f"{self.link(self.flap)} flaps every 2 s", t)
        self.lab.run("heal", *self.flap)
        self.check(bw >= self.floor * self.base,
                   f"while {self.link(self.flap)} flapped the ring kept {100 * bw / self.base:.0f} %"
                   f" of its bandwidth (>= {100 * self.floor:.0f} %)")
        named = self.deny.since(t, "prober")
        self.check(all(e["element"] == self.link(self.flap) for e in named),
                   f"the prober denied no element but the flapping link: {describe(named)}")
        # its entry (if the prober made one) is lifted after the hold: the next fault alone
        for e in named:
            while self.deny.gone_at(e["id"]) is None and time.monotonic() - t < 60:
                time.sleep(0.2)
        self.say(f"{self.link(self.flap)} healed", t)

    def gray_link(self):
        t = time.monotonic()
        self.lab.run("fault", "loss", *self.gray, "2")
        self.t_gray = t
        hit = self.deny.wait(lambda e: e["element"] == self.link(self.gray) and
                             e["source"] == "prober", 30)
        took = time.monotonic() - t
        self.check(hit, f"the 2 % lossy link {self.link(self.gray)} was denied "
                   f"{took:.1f} s after the fault (<= 30 s)")
        self.gray_entries = hit
        time.sleep(6)
        bw = self.ring.gbps(t, time.monotonic())
        self.say(f"{self.link(self.gray)} loses 2 %: localized in {took:.1f} s", t)
        self.check(bw >= self.floor * self.base,
                   f"while {self.link(self.gray)} was lossy the ring kept "
                   f"{100 * bw / self.base:.0f} % (>= {100 * self.floor:.0f} %)")
        others = [e for e in self.deny.since(t) if e["element"] != self.link(self.gray)]
        self.check(not others, f"no other element was denied meanwhile ({describe(others)})")

    def agent_on(self, host, dead):
        """Whether host's agent is connected to a controller other than |dead|"""
        r = self.lab.nsx(host, os.path.join(self.a.bin, "mrc-perf"), "status")
        try:
            c = json.loads(r.stdout)["controller"]
        except (ValueError, KeyError):
            return False
        return c.get("connected") and c.get("current", dead) != dead

    def evs_denied(self):
        """Whether every agent holds its EVs over the drained T1 denied."""
        for h in self.lab.hosts:
            r = self.lab.nsx(h, os.path.join(self.a.bin, "mrc-perf"), "evs")
            evs = [e for e in json.loads(r.stdout)["evs"]
                   if e["plane"] == self.drained_plane and e["t1"] == self.drained_index]
            if not evs or any(e["state"] != "denied" for e in evs):
                return False
        return True

    def count_install(self):
        """A counter at each of the plane's T0s of the MRC packets arriving from hosts that are
        addressed through the drained T1."""
        rules = ("table inet story {\n chain toward { type filter hook prerouting priority -10; "
                 f"ip6 nexthdr 41 @nh,{T1_USID_BIT},16 {self.drained_usid} "
                 f"@nh,{INNER_DPORT_BIT},16 {MRC_PORT} counter; }}\n}}\n")
        for t0 in self.plane_t0s:
            self.lab.nsx(t0, "nft", "-f", "-", input=rules, check=True)

    def count_toward(self):
        """What the counters of count_install() hold, summed."""
        total = 0
        for t0 in self.plane_t0s:
            out = self.lab.nsx(t0, "nft", "-j", "list", "table", "inet", "story", check=True)
            for o in json.loads(out.stdout)["nftables"]:
                for x in o.get("rule", {}).get("expr", []):
                    total += x.get("counter", {}).get("packets", 0)
        return total

    def drain(self):
        t = time.monotonic()
        self.count_install()
        self.lab.run("drain", self.drained, "firmware upgrade")
        for _ in range(100):
            if self.evs_denied():
                break
            time.sleep(0.1)
        applied = time.monotonic() - t
        self.check(self.evs_denied(), f"every agent stopped using {self.drained} "
                   f"{applied:.1f} s after the drain")
        time.sleep(0.5)  # what was already in flight drains
        before = self.count_toward()
        self.say(f"operator drains {self.drained} (applied in {applied:.1f} s)", t)

        # the controller dies while the entries are in force, and comes back; with three, the
        # leader dies and another leads
        t = time.monotonic()
        snapshot = {e["id"]: (e["element"], e["scope"]) for e in self.deny.current}
        restart = None
        if self.lab.ha:
            old = self.lab.leader()
            dead = self.lab.ctls[int(old.rsplit("-", 1)[1]) - 1]
            self.lab.run("kill", old)
            t = time.monotonic()
            new, took = None, None
            while time.monotonic() - t < 10 and new is None:
                new = self.lab.leader_among([c for c in self.lab.ctls if c != dead])
                if new is None:
                    time.sleep(0.05)
            took = time.monotonic() - t
            self.check(new and new != old and took <= 3,
                       f"the leader {old} killed during the drain: {new} leads "
                       f"{took if took is not None else -1:.1f} s later")
            resumed = None
            with concurrent.futures.ThreadPoolExecutor(len(self.lab.hosts)) as pool:
                while time.monotonic() - t < 10 and resumed is None:
                    asked = time.monotonic()
                    if all(pool.map(lambda h: self.agent_on(h, dead), self.lab.hosts)):
                        resumed = asked - t  # every agent was on a live one when asked
                    else:
                        time.sleep(0.05)
            self.check(resumed is not None and resumed <= 5,
                       f"every agent's push channel resumed on a live controller "
                       f"{resumed if resumed is not None else -1:.1f} s after the kill")
            restart = old  # after the data plane is judged: a start costs the lab's CPUs
        else:
            os.kill(self.lab.pid("controller"), signal.SIGKILL)
            time.sleep(1)
            self.lab.run("restart", "controller")
        back = None
        for _ in range(100):
            try:
                back = {e["id"]: (e["element"], e["scope"]) for e in
                        self.lab.get(f"{self.lab.ctl}/api/v1/denylist")["entries"]}
                break
            except Exception:
                time.sleep(0.1)
        lost = [k for k in snapshot if back is None or back.get(k) != snapshot[k]]
        self.check(back is not None and not lost,
                   f"the controller, killed and restarted, kept all {len(snapshot)} denylist "
                   f"entries (lost: {lost or 'none'})")
        time.sleep(3)
        bw = self.ring.gbps(t, time.monotonic())
        self.say("the leader is killed; another leads" if self.lab.ha else
                 "the controller is killed and restarted", t)
        self.check(bw >= self.floor * self.base and self.evs_denied(),
                   f"the data plane did not notice: {100 * bw / self.base:.0f} % of the "
                   "bandwidth, the drained T1 still unused")
        if restart:
            self.lab.run("restart", restart)

        t = time.monotonic()
        self.lab.run("reboot", self.drained, "6")
        self.say(f"{self.drained} rebooted (6 s, links down)", t)
        t = time.monotonic()
        self.lab.run("undrain", self.drained)
        sent = self.count_toward() - before
        self.check(sent == 0, f"no MRC packet was sent toward {self.drained} while it was "
                   f"drained ({sent} counted at the T0s)")
        for t0 in self.plane_t0s:
            self.lab.nsx(t0, "nft", "delete", "table", "inet", "story")
        time.sleep(3)
        self.say(f"operator undrains {self.drained}", t)

    def heal(self):
        t = time.monotonic()
        self.lab.run("heal", *self.gray)
        ids = [e["id"] for e in self.gray_entries]
        # with --ha the lift goes through the shard's leader and the controllers' leader (a
        # follower answers the localizer's removal with a redirect): two more hops, a second
        limit = self.lab.hold_s + 8 * self.lab.window_s + 3 + (2 if self.lab.ha else 0)
        while time.monotonic() - t < limit + 10 and any(self.deny.gone_at(i) is None for i in ids):
            time.sleep(0.2)
        took = max(((self.deny.gone_at(i) or time.monotonic()) for i in ids), default=time.monotonic()) - t
        # the hold runs from the last window that showed the loss, which may end a window or
        # two before the heal; at most it adds the windows the localizer takes to see it clean
        least = self.lab.hold_s - 2 * self.lab.window_s
        self.check(ids and least <= took <= limit,
                   f"{self.link(self.gray)} was lifted {took:.1f} s after the heal (the hold: "
                   f"{self.lab.hold_s:.0f} s of clean probing; {least:.0f}-{limit:.0f} s)")
        # whatever the reboot made the prober deny is lifted too, before the end
        end = time.monotonic() + 2 * limit
        while self.deny.current and time.monotonic() < end:
            time.sleep(0.2)
        self.check(not self.deny.current, f"at the end the denylist is empty "
                   f"({describe(self.deny.current)})")
        self.say(f"{self.link(self.gray)} heals; its entry is lifted after {took:.1f} s", t)

    def wire_check(self):
        """A capture on h0's first port (at its T0's end), decoded by tshark and by the
        engine's decoder (mrc-decode): the outer uSID address is one of the host's paths, the
        inner UDP port 4791, and the BTH fields agree."""
        h, port, _, _, _, _, t0, t0port, t0if, _ = self.lab.host_ports[0]
        pcap = self.a.pcap or os.path.join(self.a.dir, "log", "wire.pcap")
        bpf = f"ip6[6] == 41 and ip6[46] == 17 and ip6[82:2] == {MRC_PORT}"
        # 3 s of capture from when it starts (tshark takes seconds to start on a loaded
        # machine), at most 500 packets; the outer timeout only bounds a capture that hangs
        r = self.lab.nsx(t0, "timeout", "30", "tshark", "-q", "-i", t0if, "-f", bpf,
                         "-a", "duration:3", "-c", "500", "-F", "pcap", "-w", pcap)
        if not os.path.exists(pcap):
            self.check(False, f"wire: tshark captured nothing at {t0}'s port to {h}:{port} "
                       f"(exit {r.returncode}: {r.stderr.strip()[-200:]})")
            return
        os.chmod(pcap, 0o644)
        fields = ["frame.number", "ipv6.dst", "udp.dstport", "udp.srcport", "ipv6.flow",
                  "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn"]
        # the EV's low bits are the UDP source port, and tshark decodes by the lower port
        # first: a port below 4791 with a dissector of its own (7 is echo) is told RoCEv2 too
        shark = ["tshark", "-r", pcap, "-o", "udp.ignore_ipv6_zero_checksum:TRUE", "-T", "fields"]
        sports = subprocess.run(shark + ["-e", "udp.srcport"], capture_output=True, text=True,
                                check=True).stdout.split()
        low = sorted({int(p) for p in sports if int(p) < MRC_PORT})
        out = subprocess.run(shark + sum((["-d", f"udp.port=={p},infiniband"] for p in low), []) +
                             sum((["-e", f] for f in fields), []),
                             capture_output=True, text=True, check=True).stdout
        shark = {}
        for line in out.splitlines():
            v = line.split("\t")
            if len(v) == len(fields) and v[5]:
                shark[int(v[0])] = v
        dec = subprocess.run([os.path.join(self.a.bin, "mrc-decode"), pcap],
                             capture_output=True, text=True)
        mine = {}
        for line in dec.stdout.splitlines():
            o = json.loads(line)
            mine[o["frame"]] = o
        # the outer addresses h's port may send to: every EV path to every other host
        paths = set()
        for hp in self.lab.host_ports:
            if hp[0] != h and hp[1] == port:
                for l in self.lab.mrcctl("path", "--from", f"{h}:{port}",
                                         "--to", f"{hp[0]}:{port}").splitlines():
                    if l.strip().startswith("EV"):
                        paths.add(l.split()[3])
        sent = [f for f, o in mine.items() if o["outer"]["dst"] in paths]
        agree = [f for f, v in shark.items() if f in mine and
                 [int(x, 0) for x in v[5:8]] == [mine[f]["bth"]["opcode"], mine[f]["bth"]["dqpn"],
                                                 mine[f]["bth"]["psn"]] and
                 v[1].split(",")[0] == mine[f]["outer"]["dst"] and int(v[2]) == MRC_PORT]
        ok = (dec.returncode == 0 and len(shark) >= 50 and len(agree) == len(shark) == len(mine)
              and len(sent) > 0)
        example = ""
        if sent:
            v = shark.get(sent[0])
            if v:
                example = (f"; e.g. outer dst {v[1].split(',')[0]} (a path of {h}:{port}), "
                           f"udp {v[2]}, BTH opcode {int(v[5], 0):#x} dest QP {int(v[6], 0)} "
                           f"PSN {v[7]}")
        self.check(ok, f"wire: {len(shark)} MRC packets captured at {t0}'s port to {h}:{port}; "
                   f"tshark and the engine's decoder agree on {len(agree)}; {len(sent)} leave "
                   f"{h} on one of its uSID paths{example}")

    def run(self):
        self.deny = Denylist(self.lab)
        self.ring = Ring(self.lab)
        print(f"ring all-reduce over {len(self.lab.hosts)} hosts "
              f"({self.ring.size >> 20} MiB of float32 per rank), the lab's prober windows "
              f"{self.lab.window_s * 1000:.0f} ms, hold {self.lab.hold_s:.0f} s", flush=True)
        for _ in range(300):
            if self.ring.started():
                break
            time.sleep(0.1)
        if not self.check(self.ring.started(), "the ring all-reduce started"):
            return self.report(self.ring.stop())
        t_ring = time.monotonic()
        try:
            self.steady()
            self.flapping()
            self.gray_link()
            self.drain()
            self.heal()
        except RuntimeError as e:
            self.check(False, str(e))
        finally:
            gap = self.ring.longest_gap(t_ring)
            finals = self.ring.stop()
            self.deny.stopping = True
        self.check(gap < 3, f"the ring never stopped: its longest pause was {gap:.2f} s")
        return self.report(finals)

    def report(self, finals):
        bad = [f for f in finals if f.get("elements_bad", 1) or f.get("errors", 1) or
               f.get("out_of_order", 1) or f.get("qp_error", True)]
        iters = min((f.get("iterations", 0) for f in finals), default=0)
        self.check(not bad, f"every rank finished with every element right and no QP failed "
                   f"({iters} iterations; bad ranks: {len(bad)})")
        print()
        for ok, what in self.checks:
            print(f"{'PASS' if ok else 'FAIL'}: {what}")
        failed = sum(not ok for ok, _ in self.checks)
        print(f"the story took {time.monotonic() - self.t_start:.0f} s; "
              f"{len(self.checks) - failed} of {len(self.checks)} checks passed")
        return 1 if failed else 0


class Refused(Exception):
    """The story cannot start: the message says why and what to do; exit status 2."""


def clean_start(lab):
    """Refuses a lab with a fault in force or a denylist entry at the controller: the claims
    (nothing but the gray link denied, the lift, an empty denylist at the end) need a clean
    one. Returns a sentence for each thing to clear, saying how, or none."""
    why = []
    faults = [l[len("fault "):] for l in lab.run("status").splitlines() if l.startswith("fault ")]
    if faults:
        n = len(faults)
        why.append(f"the lab has {n} fault{'s' * (n > 1)} in force ({'; '.join(faults)}): "
                   f"clear {'them' if n > 1 else 'it'} with "
                   f"{shlex.join(lab.sh + ['heal', '--all'])}, then run story.py again")
    entries = lab.get(f"{lab.ctl}/api/v1/denylist")["entries"]
    if entries:
        n = len(entries)
        rm = shlex.join([os.path.join(lab.a.bin, "mrcctl"), "-t", lab.a.topo, "--controller",
                         lab.ctl, "--token-file", os.path.join(lab.a.dir, "token", "admin")] +
                        lab.tls_args + ["deny", "rm"])
        what = "; ".join(f"{e['id']}: {e['element']}, {e.get('reason') or e['source']}"
                         for e in entries)
        why.append(f"the controller holds {n} denylist entr{'ies' if n > 1 else 'y'} ({what}): "
                   f"remove {'each' if n > 1 else 'it'} with {rm} ID (ID "
                   f"{', '.join(str(e['id']) for e in entries)}; the prober lifts its own after "
                   f"{lab.hold_s:.0f} s of clean probing), then run story.py again")
    return why


def default_bin():
    """The source tree's build, else the folder of the mrcctl on PATH (installed)."""
    built = os.path.join(ROOT, "build", "bin")
    found = shutil.which("mrcctl")
    if not os.access(os.path.join(built, "mrcctl"), os.X_OK) and found:
        return os.path.dirname(found)
    return built


def default_topo(bindir):
    """lab.json of the topologies beside story.py (the source tree's deploy/topologies, an
    installed share/mrcfab/topologies), else of the programs' share/mrcfab."""
    for t in (os.path.join(HERE, "..", "topologies", "lab.json"),
              os.path.join(bindir, "..", "share", "mrcfab", "topologies", "lab.json")):
        if os.path.exists(t):
            return t
    return t


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="exit status: 0 every claim held, 1 one failed (or the system did), 2 bad input "
               "(a lab that is not up, not clean, or bad options)")
    p.add_argument("-b", dest="bin", metavar="BINDIR",
                   help="where mrcctl, mrc-perf and mrc-decode are (default build/bin of the "
                        "source tree, else the folder of the mrcctl on PATH; /usr/bin installed)")
    p.add_argument("-t", dest="topo", metavar="TOPOLOGY",
                   help="the lab's topology file, as given to lab.sh (default lab.json)")
    p.add_argument("-p", dest="prefix", metavar="PREFIX", default="mf",
                   help="the lab's namespace prefix, as given to lab.sh (default mf)")
    p.add_argument("-d", dest="dir", metavar="DIR",
                   help="the lab's folder, as given to lab.sh (default /var/lib/mrcfab/lab-PREFIX)")
    p.add_argument("-P", dest="port", metavar="PORT", type=int, default=8080,
                   help="the controller's port, as given to lab.sh (default 8080)")
    p.add_argument("--pcap", metavar="FILE",
                   help="where the wire capture is kept (default DIR/log/wire.pcap)")
    a = p.parse_args()
    a.bin = os.path.abspath(a.bin or default_bin())
    a.topo = os.path.abspath(a.topo or default_topo(a.bin))
    a.dir = os.path.abspath(a.dir or f"/var/lib/mrcfab/lab-{a.prefix}")
    try:
        for prog in ("mrcctl", "mrc-perf", "mrc-decode"):
            if not os.access(os.path.join(a.bin, prog), os.X_OK):
                raise Refused(f"-b {a.bin} has no {prog} (want the folder of mrcctl and the "
                              "daemons: build/bin of a build, /usr/bin where the packages "
                              "installed them)")
        if not os.path.isfile(a.topo):
            raise Refused(f"-t {a.topo}: no such topology file")
        if not shutil.which("tshark"):
            raise Refused("no tshark on PATH: the wire check decodes the capture with it "
                          "(apt-get install tshark)")
        # lab.sh down keeps lab.conf and the tokens, not the run folder
        if not os.path.exists(os.path.join(a.dir, "lab.conf")) or not any(
                os.path.exists(os.path.join(a.dir, "run", f"{c}.pid"))
                for c in ("controller", "controller-1")):
            raise Refused(f"no system running in {a.dir}: bring the lab up first with "
                          f"{os.path.join(HERE, 'lab.sh')} -p {a.prefix} -d {a.dir} up "
                          "(not --fabric-only), and give story.py the same -p, -d and -P")
        lab = Lab(a)
        why = clean_start(lab)
        if why:
            raise Refused("\nstory: ".join(why))
    except Refused as e:
        print(f"story: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"story: the lab does not answer: {e}", file=sys.stderr)
        return 1
    return Story(a, lab).run()


if __name__ == "__main__":
    sys.exit(main())
