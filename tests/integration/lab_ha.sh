#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab highly available (issue 20): `lab.sh up --ha` brings up three etcd members, three
# controllers and a localizer shard of two replicas per plane; `lab.sh leader` names one;
# deploy/lab/story.py plays the story, the leader killed during the drain (another leads
# within 3 s, every agent's push channel back within 5 s, no entry lost, the ring never
# stopping); a localizer shard's leader killed, its replica takes over; `lab.sh down` leaves
# no process behind.
set -euo pipefail

bin=${1:?usage: lab_ha.sh BINDIR [TOPOLOGY]}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
topo=${2:-$root/deploy/topologies/lab.json}
command -v etcd >/dev/null || { echo "FAIL: no etcd (deploy/install-deps.sh installs etcd-server)"; exit 1; }
# shellcheck source=tests/integration/agent_common.sh
source "$root/tests/integration/agent_common.sh"
lab_test lh
port=$((20000 + $$ % 10000))
labx() { lab -P "$port" "$@"; }

labx up --ha
leader=$(labx leader) || fail "lab.sh leader named none"
[[ $leader =~ ^controller-[123]\ https://\[ ]] || fail "lab.sh leader: '$leader'"
echo "PASS: lab.sh leader: $leader"
st=$(labx status)
[ "$(grep -cE '^controller-[123] https://' <<<"$st")" = 3 ] || fail "lab.sh status lists not 3 controllers: $st"
echo "PASS: lab.sh status lists the three controllers' URLs"

"$root/deploy/lab/story.py" -b "$bin" -t "$topo" -p "$prefix" -d "$work/lab" -P "$port" ||
    fail "the story failed (above)"

# a shard's leader killed: the other replica leads
loc_leader() {
    local r
    for r in 1 2; do
        curl -sf -m 2 "http://[$(labx addr root)]:$((port + 2 + $1 * 2 + r - 1))/api/v1/status" |
            python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["shard"]["role"] != "leader")' \
                2>/dev/null && { echo "$r"; return 0; }
    done
    return 1
}
r=$(loc_leader 0) || fail "plane 0's shard has no leader"
labx kill "localizer-0-$r"
t0=$(date +%s%N)
other=$((3 - r))
for _ in $(seq 100); do
    [ "$(loc_leader 0 || true)" = "$other" ] && break
    sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$(loc_leader 0 || true)" = "$other" ] || fail "plane 0's replica $other did not lead after the kill of $r"
echo "PASS: plane 0's localizer $r killed: replica $other leads ${ms} ms later"
labx restart "localizer-0-$r"

labx down
pgrep -f -- "$work/lab" >/dev/null && fail "lab down left processes: $(pgrep -af -- "$work/lab")"
echo "PASS: lab down leaves no process"
