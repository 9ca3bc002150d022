# SPDX-License-Identifier: MIT
# What the scripts that run mrc-controller on loopback share; sourced.
# shellcheck shell=bash

# shellcheck source=tests/check.sh
source "$(dirname "${BASH_SOURCE[0]}")/../check.sh"

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
