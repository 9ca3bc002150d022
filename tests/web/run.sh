#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard (web/) in a real browser: starts mrc-controller on loopback (a free port, the
# lab or the full topology, a fresh SQLite store, tokens of every role) serving web/, then
# drives Debian's Chromium through it with playwright-core (pinned in package-lock.json):
# dashboard.test.mjs (lab) or dashboard_full.test.mjs (full: 131,072 hosts, 8 planes of
# 512 x 256) seeds the health and checks the views. Screenshots of each view at 1366x768 go to
# $MRCFAB_SCREENSHOTS, else BINDIR/../web-screenshots (build/web-screenshots); the full run's
# are named full-*. With ha, three controllers on the lab fabric share a real three-member etcd
# on loopback (tests/ha/etcd_cluster.sh), each serving web/, and ha.test.mjs opens a
# follower's dashboard (MRCFAB_BASE is the follower's, MRCFAB_LEADER the leader's,
# MRCFAB_FOLLOWER_PID the follower's process, which the test kills at its end).
#
# Usage: tests/web/run.sh BINDIR [lab|full|ha]
# Exit 77 (skipped) when chromium or npm is missing, except in CI (CI=true), where it fails.
set -euo pipefail
bin=$(cd "${1:?usage: run.sh BINDIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
chromium=${MRCFAB_CHROMIUM:-/usr/bin/chromium}
fabric=${2:-lab}
case $fabric in
lab) tests=dashboard.test.mjs ;;
full) tests=dashboard_full.test.mjs ;;
ha) tests=ha.test.mjs ;;
*)
    echo "usage: run.sh BINDIR [lab|full|ha]" >&2
    exit 2
    ;;
esac

missing=
[ -x "$chromium" ] || missing="$chromium"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
    if [ "${CI:-}" = true ]; then
        echo "FAIL missing:$missing (deploy/install-deps.sh installs them)"
        exit 1
    fi
    echo "SKIP missing:$missing (deploy/install-deps.sh installs them)"
    exit 77
fi
if [[ ! -f $here/node_modules/playwright-core/package.json ]]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

tmp=$(mktemp -d)
pid=
pids=()
cleanup() {
    for p in $pid ${pids[@]+"${pids[@]}"}; do
        { kill -TERM "$p" && wait "$p"; } 2>/dev/null || true
    done
    if declare -F etcd_down >/dev/null; then etcd_down "$tmp"; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# every role; an agent token per host of the lab, since a T0-T1 link is judged on two
# reporters' evidence (the full run's evidence is the prober's)
{
    echo "# TOKEN ROLE NAME"
    echo "tok-web-admin-00000001 admin root"
    echo "tok-web-operator-00001 operator bob"
    echo "tok-web-reader-000001 reader alice"
    echo "tok-web-prober-000001 localizer prober1"
    for h in 0 1 2 3 4 5 6 7; do echo "tok-web-agent-00000h$h agent h$h"; done
} >"$tmp/tokens"
chmod 600 "$tmp/tokens" # a tokens file only its owner can read

# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
shots=${MRCFAB_SCREENSHOTS:-$bin/../web-screenshots}
mkdir -p "$shots"

if [ "$fabric" = ha ]; then
    command -v etcd >/dev/null || { echo "FAIL no etcd (deploy/install-deps.sh installs etcd-server)"; exit 1; }
    # shellcheck source=tests/ha/etcd_cluster.sh
    source "$root/tests/ha/etcd_cluster.sh"
    etcd_up "$tmp"
    declare -a url
    for i in 1 2 3; do
        : >"$tmp/c$i.log"
        "$bin/mrc-controller" --topology "$root/deploy/topologies/lab.json" --db "$tmp/c$i.db" \
            --tokens "$tmp/tokens" --listen 127.0.0.1:0 --window 3600 --floor 50 --web "$root/web" \
            --etcd "$ETCD_ENDPOINTS" --name "controller-$i" --lease-ttl 2 --rate-limit 0 2>"$tmp/c$i.log" &
        pids[i]=$!
        url[i]=http://127.0.0.1:$(served_port "$tmp/c$i.log" "${pids[i]}") || exit 1
    done
    leader=
    for _ in $(seq 150); do
        for i in 1 2 3; do
            if curl -s -m 2 -H "Authorization: Bearer tok-web-reader-000001" "${url[i]}/api/v1/cluster" |
                grep -q '"self":{[^}]*"role":"leader"'; then
                leader=$i
            fi
        done
        [ -n "$leader" ] && break
        sleep 0.1
    done
    [ -n "$leader" ] || { echo "FAIL no controller leads within 15 s: $(tail -3 "$tmp"/c*.log)"; exit 1; }
    follower=$((leader % 3 + 1))
    echo "controller-$leader leads at ${url[leader]}; the page is controller-$follower's at ${url[follower]}"
    MRCFAB_BASE=${url[follower]} MRCFAB_LEADER=${url[leader]} MRCFAB_FOLLOWER_PID=${pids[follower]} \
        MRCFAB_TOKENS=$tmp/tokens MRCFAB_SCREENSHOTS=$(cd "$shots" && pwd) \
        MRCFAB_CHROMIUM=$chromium node --test-reporter=spec "$here/$tests"
    exit
fi

# --window: the seeded evidence must not age out during the run
log=$tmp/controller.log
: >"$log"
"$bin/mrc-controller" --topology "$root/deploy/topologies/$fabric.json" --db "$tmp/c.db" \
    --tokens "$tmp/tokens" --listen 127.0.0.1:0 --window 3600 --floor 50 --web "$root/web" 2>"$log" &
pid=$!
port=$(served_port "$log" "$pid") || exit 1
base=http://127.0.0.1:$port

# the controller serves the dashboard itself: the page under test is the real web/ folder
status=$(curl -s -o "$tmp/index.html" -w '%{http_code}' "$base/")
if [ "$status" != 200 ] || ! cmp -s "$tmp/index.html" "$root/web/index.html"; then
    echo "FAIL GET / is not web/index.html (HTTP $status): this mrc-controller does not serve the dashboard"
    exit 1
fi

MRCFAB_BASE=$base MRCFAB_TOKENS=$tmp/tokens MRCFAB_SCREENSHOTS=$(cd "$shots" && pwd) \
    MRCFAB_CHROMIUM=$chromium node --test-reporter=spec "$here/$tests"
