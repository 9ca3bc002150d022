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
