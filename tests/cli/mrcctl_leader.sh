#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrcctl against the controllers of an HA cluster, stood in for by tests/cli/ha_fake.py (a
# leader, a follower that redirects writes to it, one without a leader): a dead controller
# first in --controller is passed over, a follower's 307 is followed to the leader with the
# same method and body, a redirect off the list's scheme is refused, every controller without
# a leader is one sentence and exit 1, mrcctl cluster marks the leader (and --json conforms to
# its schema), and a host name with two addresses, the first dead, is reached at the second
# (in a mount namespace of its own /etc/hosts; skipped where unshare cannot make one).
set -euo pipefail

bin=${1:?usage: mrcctl_leader.sh BINDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
mrcctl() { timeout 20 "$bin/mrcctl" "$@"; }
export MRCFAB_TOKEN=tok-operator-000000001
unset MRCFAB_CONTROLLER MRCFAB_TOKEN_FILE

# fake NAME MODE [ARGS...]: starts one stand-in; its port in $port
fake() {
    local name=$1
    shift
    : >"$tmp/$name.err"
    python3 "$here/ha_fake.py" --name "$name" --log "$tmp/requests.log" --mode "$@" \
        2>"$tmp/$name.err" &
    pids+=($!)
    port=$(served_port "$tmp/$name.err" $!)
}
fake c1 leader
leader=http://127.0.0.1:$port
fake c2 follower --leader "$leader"
follower=http://127.0.0.1:$port
fake c3 noleader
noleader=http://127.0.0.1:$port
fake c4 noleader
noleader2=http://127.0.0.1:$port
dead=http://127.0.0.1:1
: >"$tmp/requests.log"

# 1. a dead controller first, then the follower: the write lands on the leader, body and all
out=$(mrcctl --controller "$dead,$follower" deny add p0-t1-1 --reason "optics swap" 2>"$tmp/err") &&
    rc=0 || rc=$?
check '[ "$rc" = 0 ]' "deny add past a dead controller and a follower exits 0 (got $rc: $(cat "$tmp/err"))"
check '[[ $out == *added* ]]' "it prints the entry added ($out)"
check 'grep -q "^c2 POST /api/v1/denylist " "$tmp/requests.log"' "the follower was asked first"
check 'grep -q "^c1 POST /api/v1/denylist {.*\"element\":\"p0-t1-1\".*\"reason\":\"optics swap\"" "$tmp/requests.log"' \
    "the leader got the same POST with the same body"
: >"$tmp/requests.log"
mrcctl --controller "$follower" deny rm 42 >"$tmp/out" 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "deny rm through the follower exits 0 ($rc: $(cat "$tmp/err"))"
check 'grep -q "^c1 DELETE /api/v1/denylist/42" "$tmp/requests.log"' "the DELETE reached the leader"
# the environment takes the list too, trailing slashes and all
: >"$tmp/requests.log"
MRCFAB_CONTROLLER="$dead/,$follower/" mrcctl deny rm 42 >/dev/null 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "\$MRCFAB_CONTROLLER takes a list ($rc: $(cat "$tmp/err"))"
check 'grep -q "^c1 DELETE /api/v1/denylist/42" "$tmp/requests.log"' "and reaches the leader by it"

# 2. reads are answered by whichever controller answers first
: >"$tmp/requests.log"
mrcctl --controller "$follower,$leader" deny ls --json >"$tmp/ls.json" 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "deny ls through the follower ($rc: $(cat "$tmp/err"))"
check '[ "$(grep -c . "$tmp/requests.log")" = 1 ] && grep -q "^c2 GET" "$tmp/requests.log"' \
    "a read is the follower's to answer: one request"

# 3. no leader anywhere: one sentence, exit 1, each controller asked once
: >"$tmp/requests.log"
mrcctl --controller "$noleader,$noleader2" deny rm 7 >/dev/null 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 1 ]' "no leader anywhere: exit 1 (got $rc)"
check 'grep -q "no controller has a leader now (2 asked)" "$tmp/err"' "said in one sentence ($(cat "$tmp/err"))"
check '[ "$(wc -l <"$tmp/err")" = 1 ]' "one line"
check '[ "$(grep -c . "$tmp/requests.log")" = 2 ]' "each asked once"
# no leader on one, the leader behind it: found
mrcctl --controller "$noleader,$dead,$follower" deny rm 7 >/dev/null 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "past no-leader, a dead one and a follower, the leader is found ($rc: $(cat "$tmp/err"))"
# every controller dead: a sentence that names the last one
mrcctl --controller "$dead,http://127.0.0.1:2" deny ls >/dev/null 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 1 ] && grep -q "cannot reach any controller (the last: http://127.0.0.1:2/api/v1/denylist" "$tmp/err"' \
    "every controller dead: exit 1 and the last one named ($rc: $(cat "$tmp/err"))"

# 4. a redirect that would leave the list's scheme, or loops, is not followed past its bounds
fake c5 follower --leader "https://127.0.0.1:$(echo "$leader" | sed 's/.*://')"
tls_follower=http://127.0.0.1:$port
: >"$tmp/requests.log"
mrcctl --controller "$tls_follower" deny rm 7 >/dev/null 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 1 ] && grep -q "which is not a controller URL of the same scheme" "$tmp/err"' \
    "a redirect to another scheme is refused ($rc: $(cat "$tmp/err"))"
check '! grep -q "^c1 " "$tmp/requests.log"' "and nothing was sent to it"
# a follower that names itself: three hops, then the next controller (none): a sentence
fake c6 follower --leader self
loop_port=$port
: >"$tmp/requests.log"
mrcctl --controller "http://127.0.0.1:$loop_port" deny rm 7 >/dev/null 2>"$tmp/err" && rc=0 || rc=$?
check '[ "$rc" = 1 ] && grep -q "redirected mrcctl 3 times without reaching a leader" "$tmp/err"' \
    "redirects in a circle stop after 3 ($rc: $(cat "$tmp/err"))"
check '[ "$(grep -c "^c6 DELETE" "$tmp/requests.log")" = 4 ]' "4 requests: the first and 3 redirects"

# 5. mrcctl cluster
out=$(mrcctl --controller "$dead,$follower" cluster 2>"$tmp/err") && rc=0 || rc=$?
check '[ "$rc" = 0 ]' "mrcctl cluster exits 0 ($(cat "$tmp/err"))"
check 'printf "%s\n" "$out" | grep -qE "^\* c1 +http://127.0.0.1:[0-9]+ +leader"' "the leader is marked ($out)"
check 'printf "%s\n" "$out" | grep -qE "^  c2 +http://127.0.0.1:1 +follower"' "a follower is not"
check 'printf "%s\n" "$out" | grep -q "^leader: c1 (http://127.0.0.1:[0-9]*), epoch 4$"' "the leader's epoch"
out=$(mrcctl --controller "$noleader" cluster 2>"$tmp/err") && rc=0 || rc=$?
check '[ "$rc" = 1 ]' "mrcctl cluster with no leader anywhere: exit 1 (the 503)"
check 'mrcctl --controller "$follower" cluster --json >"$tmp/cluster.json"' "mrcctl cluster --json"
if [[ -x $root/tests/schema/node_modules/.bin/ajv ]] || (cd "$root/tests/schema" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    (cd "$root/tests/schema" && npx --no-install ajv validate --spec=draft2020 -c ajv-formats \
        --strict=false -s "$root/schemas/mrcctl/cluster.schema.json" -d "$tmp/cluster.json") \
        >"$tmp/ajv.log" 2>&1 && rc=0 || rc=$?
    check '[ "$rc" = 0 ]' "mrcctl cluster --json conforms to its schema ($(cat "$tmp/ajv.log"))"
else
    fail "the schema validator of tests/schema cannot be installed"
fi

# 6. a name with two addresses, the first with nothing on the port: the second answers
fake c7 leader --listen 127.0.0.2
two_port=$port
printf '127.0.0.1 ha-two.test\n127.0.0.2 ha-two.test\n' >"$tmp/hosts"
if unshare -m true 2>/dev/null; then
    first=$(unshare -m sh -c 'mount --bind "$1" /etc/hosts && getent ahostsv4 ha-two.test' sh "$tmp/hosts" |
        awk 'NR == 1 {print $1}')
    check '[ "$first" = 127.0.0.1 ]' "ha-two.test resolves to 127.0.0.1 first ($first)"
    : >"$tmp/requests.log"
    unshare -m sh -c 'mount --bind "$1" /etc/hosts && exec "$2" --controller "http://ha-two.test:$3" deny rm 9' \
        sh "$tmp/hosts" "$bin/mrcctl" "$two_port" >"$tmp/out" 2>"$tmp/err" && rc=0 || rc=$?
    check '[ "$rc" = 0 ]' "http://ha-two.test:$two_port is reached at its second address ($rc: $(cat "$tmp/err"))"
    check 'grep -q "^c7 DELETE /api/v1/denylist/9" "$tmp/requests.log"' "by the controller there"
else
    echo "SKIP a name with two addresses: unshare -m cannot make a mount namespace here"
fi

finish mrcctl_leader
