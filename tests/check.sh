# SPDX-License-Identifier: MIT
# What the test scripts that count their checks share; sourced.
# shellcheck shell=bash

failures=0
pass() { printf 'PASS %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
# check EXPR WHAT: EXPR evaluated, WHAT passed or failed by its status
check() { if eval "$1"; then pass "$2"; else fail "$2"; fi; }
# finish NAME: the script's last word, and its exit status
finish() {
    if [ "$failures" -gt 0 ]; then
        echo "$1: $failures failed"
        exit 1
    fi
    echo "$1: all passed"
}

# served_port LOG [PID [SCHEME]]: the port a daemon started with --listen ADDR:0 says in LOG
# it serves on ("port N (SCHEME)", SCHEME http or https), waiting up to 10 s (a machine under
# load may start it late) or until PID exits; nothing and status 1 if it never does. LOG must
# exist before the daemon starts, since the wait reads it at once. Port 0 and not a port of
# our own choosing: a fixed one may be some other test's ephemeral port.
served_port() {
    local log=$1 pid=${2:-} scheme=${3:-http} port=
    for _ in $(seq 200); do
        port=$(sed -n "s/.* port \([0-9]*\) ($scheme).*/\1/p" "$log")
        [ -n "$port" ] && break
        [ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$port" ] || { echo "FAIL the daemon did not start: $(cat "$log")" >&2; return 1; }
    echo "$port"
}
