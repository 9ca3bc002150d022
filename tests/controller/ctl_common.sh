# SPDX-License-Identifier: MIT
# What the scripts that run mrc-controller on loopback share; sourced.
# shellcheck shell=bash

failures=0
pass() { printf 'PASS %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
check() { if eval "$1"; then pass "$2"; else fail "$2"; fi; }

# ctl_port LOG [PID [SCHEME]]: the port a controller started with --listen 127.0.0.1:0 says in
# LOG it serves on (SCHEME http or https), waiting up to 10 s (a machine under load may start
# it late) or until PID exits; nothing and status 1 if it never does. LOG must exist before
# the controller starts, since the wait reads it at once.
ctl_port() {
    local log=$1 pid=${2:-} scheme=${3:-http} port=
    for _ in $(seq 200); do
        port=$(sed -n "s/.* port \([0-9]*\) ($scheme).*/\1/p" "$log")
        [ -n "$port" ] && break
        [ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$port" ] || { echo "FAIL the controller did not start: $(cat "$log")" >&2; return 1; }
    echo "$port"
}
