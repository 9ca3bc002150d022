#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The attacks of issue 19's review, against a live mrc-controller and mrc-probe localize on
# loopback, each bounded in count and time: 48 unfinished bodies of 1 MiB announced without a
# token (each 401 at once, the controller's RSS within 4 MiB); one body of 300 MiB announced
# to the localizer without a token (401, its RSS flat); one reader token holding 72 long-polls
# (429 past its cap while another agent's long-poll is served); closed long-polls freeing
# their slots (the subscribers gauge drops within 1 s); SIGTERM and SIGINT with 20 suspended
# pushes, ROUNDS times (100; status 0 each, no abort).
#
# Usage: tests/controller/attacks.sh BINDIR [ROUNDS]
set -euo pipefail
bin=${1:?usage: attacks.sh BINDIR [ROUNDS]}
rounds=${2:-100}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
pid=
lpid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    [ -n "$lpid" ] && kill -9 "$lpid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
ctl_tokens "$tmp/tokens"
topo=$root/deploy/topologies/lab.json
reader=tok-reader-000000000001
agent=tok-agent-0000000000001

start() {
    log=$tmp/log
    : >"$log"
    "$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
        --listen 127.0.0.1:0 --max-wait 30 --web '' "$@" 2>"$log" &
    pid=$!
    port=$(served_port "$log" "$pid") || exit 1
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# attack PORT N HEADERS...: N connections send the request's headers (no body), each answer's
# status printed, how long the slowest took, and the RSS of PID while they are all open
attack() {
    python3 - "$@" <<'PY'
import socket, sys, time
port, n, pid, req = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4].replace("\\r\\n", "\r\n")
socks, codes = [], []
t0 = time.monotonic()
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req.encode())
    socks.append(s)
for s in socks:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    codes.append(data.split(b" ")[1].decode() if data else "none")
took = time.monotonic() - t0
rss = [l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0]
print(" ".join(sorted(set(codes))), f"{took:.2f}", rss)
PY
}

start
sleep 0.5
before=$(rss "$pid")
read -r codes took during < <(attack "$port" 48 "$pid" \
    "POST /api/v1/denylist HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n")
after=$(rss "$pid")
check '[ "$codes" = 401 ]' "48 unfinished 1 MiB bodies without a token: each 401 ($codes, all in $took s)"
check '[ $((during - before)) -lt 4096 ] && [ $((after - before)) -lt 4096 ]' \
    "the controller's RSS stays within 4 MiB ($before KiB before, $during during, $after after)"

# one reader token holding 72 long-polls: its cap (4) waits, the rest 429 at once; an agent's
# long-poll is still served
v=$(curl -s -H "Authorization: Bearer $agent" "http://127.0.0.1:$port/api/v1/denylist/version?wait=0" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
python3 - "$port" "$reader" "$v" >"$tmp/polls" <<'PY' &
import socket, sys, time
port, tok, v = int(sys.argv[1]), sys.argv[2], sys.argv[3]
req = f"GET /api/v1/denylist/version?after={v}&wait=20 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {tok}\r\n\r\n".encode()
socks = []
for _ in range(72):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(req)
    socks.append(s)
codes, waiting = [], []
for s in socks:
    s.settimeout(1.0)
    try:
        d = s.recv(4096)
        codes.append(d.split(b" ")[1].decode() if d else "closed")
    except socket.timeout:
        waiting.append(s)
print(len(waiting), codes.count("429"), flush=True)
time.sleep(1.5)  # held while the agent is served
for s in waiting:
    s.close()
print("closed", time.monotonic(), flush=True)
time.sleep(2)
PY
ppid=$!
for _ in $(seq 100); do [ -s "$tmp/polls" ] && break; sleep 0.05; done
t0=$(date +%s%N)
s=$(curl -s -o "$tmp/out" -w '%{http_code}' -H "Authorization: Bearer $agent" \
    "http://127.0.0.1:$port/api/v1/denylist/version?after=$v&wait=1")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
read -r held refused <"$tmp/polls"
check '[ "$held" = 4 ] && [ "$refused" = 68 ]' "one reader token's 72 long-polls: 4 wait, 68 refused 429 (held $held, 429 $refused)"
check '[ "$s" = 200 ] && [ "$ms" -ge 900 ] && [ "$ms" -lt 3000 ]' "meanwhile an agent's long-poll waits its second and is answered ($s after $ms ms)"
subs=$(metric mrcfab_push_subscribers)
check '[ "$subs" = 4 ]' "the subscribers gauge counts the 4 ($subs)"
for _ in $(seq 100); do grep -q closed "$tmp/polls" && break; sleep 0.02; done
t0=$(date +%s%N)
for _ in $(seq 50); do [ "$(metric mrcfab_push_subscribers)" = 0 ] && break; sleep 0.02; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check '[ "$(metric mrcfab_push_subscribers)" = 0 ] && [ "$ms" -lt 1000 ]' "closed long-polls free their slots at once (the gauge is 0 after $ms ms)"
wait "$ppid" || true
kill -TERM "$pid"
wait "$pid" || true
pid=

# the localizer: one 300 MiB body announced without a token
(umask 077 && echo "node-token-h0-0123456789 prober h0" >"$tmp/rtokens")
: >"$tmp/loc.log"
"$bin/mrc-probe" localize --topology "$topo" --listen "127.0.0.1:0" \
    --report-tokens "$tmp/rtokens" >"$tmp/loc.log" 2>&1 &
lpid=$!
lport=$(served_port "$tmp/loc.log" "$lpid") || exit 1
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$lport/api/v1/status" >/dev/null && break; sleep 0.05; done
before=$(rss "$lpid")
read -r codes took during < <(attack "$lport" 1 "$lpid" \
    "POST /api/v1/reports HTTP/1.1\r\nHost: a\r\nContent-Length: 314572800\r\n\r\n")
after=$(rss "$lpid")
check '[ "$codes" = 401 ]' "a 300 MiB body to the localizer without a token: 401 ($codes in $took s)"
check '[ $((after - before)) -lt 2048 ]' "the localizer's RSS stays flat ($before KiB before, $after after)"
kill -TERM "$lpid"
wait "$lpid" || true
lpid=

# SIGTERM and SIGINT with 20 pushes suspended, ROUNDS times: every exit clean
clean=0
for r in $(seq "$rounds"); do
    start --max-waiting 32
    python3 - "$port" "$agent" >"$tmp/held" <<'PY' &
import socket, sys, time
port, tok = int(sys.argv[1]), sys.argv[2]
req = f"GET /api/v1/denylist/version?after=999999&wait=30 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {tok}\r\n\r\n".encode()
socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(20)]
for s in socks:
    s.sendall(req)
print("sent", flush=True)
for s in socks:
    try:
        s.recv(4096)
    except OSError:
        pass
PY
    hpid=$!
    for _ in $(seq 200); do [ "$(metric mrcfab_push_subscribers)" = 20 ] && break; sleep 0.02; done
    sig=TERM
    [ $((r % 2)) = 0 ] && sig=INT
    kill -"$sig" "$pid"
    rc=0
    wait "$pid" || rc=$?
    pid=
    wait "$hpid" || true
    if [ "$rc" = 0 ] && ! grep -qi "abort\|suspended connections" "$log"; then
        clean=$((clean + 1))
    else
        echo "round $r ($sig): status $rc: $(tail -3 "$log")"
    fi
done
check '[ "$clean" = "$rounds" ]' "SIGTERM/SIGINT with 20 suspended pushes: $clean of $rounds clean exits"
finish attacks
