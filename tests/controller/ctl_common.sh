# SPDX-License-Identifier: MIT
# What the scripts that run mrc-controller on loopback share; sourced.
# shellcheck shell=bash

# shellcheck source=tests/check.sh
source "$(dirname "${BASH_SOURCE[0]}")/../check.sh"

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

# ctl_tokens FILE: a tokens file with one token of each role: alice reader, h0 agent, prober1
# prober, loc1 localizer, bob operator, root admin
ctl_tokens() {
    cat >"$1" <<'TOKENS'
# TOKEN ROLE NAME
tok-reader-000000000001 reader alice
tok-agent-0000000000001 agent h0
tok-prober-000000000001 prober prober1
tok-localizer-000000001 localizer loc1
tok-operator-0000000001 operator bob
tok-admin-0000000000001 admin root
TOKENS
    chmod 600 "$1" # the controller takes a tokens file only its owner can read
}
