#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The one command-line convention, on every program, role and command: --help on stdout with
# exit 0, --version naming the program and the build, an unknown option and an option without
# its value each refused with exit 2 and one line on stderr that names it and points at
# --help, and a missing required argument likewise.
# Usage: tests/cli/conventions.sh BINDIR
set -uo pipefail
bin=$(cd "${1:?usage: conventions.sh BINDIR}" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tests/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^project(mrcfab VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")

run() { # PROG ARGS...: status in $rc, stdout in $tmp/out, stderr in $tmp/err
    timeout 10 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}
lines() { grep -c '' "$1"; }

# Each entry: the program and its command words, and an option it takes that needs a value.
entries=(
    "mrc-controller|--db"
    "mrc-agent|--host"
    "mrc-probe|"
    "mrc-probe node|--host"
    "mrc-probe localize|--listen"
    "mrc-probe validate|--hosts"
    "mrcctl|--controller"
    "mrcctl topo validate|"
    "mrcctl topo expand|--out"
    "mrcctl topo cables|"
    "mrcctl topo hosts|"
    "mrcctl topo switches|"
    "mrcctl routes render|--format"
    "mrcctl routes install|--switch"
    "mrcctl path|--from"
    "mrcctl deny ls|"
    "mrcctl deny add|--reason"
    "mrcctl deny rm|"
    "mrcctl deny check|--scope"
    "mrcctl drain|--reason"
    "mrcctl undrain|"
    "mrcctl health links|--state"
    "mrcctl health switch|--state"
    "mrcctl health path|"
    "mrcctl health summary|"
    "mrcctl health problems|--plane"
    "mrc-perf|"
    "mrc-perf server|--port"
    "mrc-perf client|--size"
    "mrc-perf ring|--hosts"
    "mrc-perf status|--agent"
    "mrc-perf evs|--agent"
    "mrc-sim|"
    "mrc-sim run|--seed"
    "mrc-sim report|"
    "mrc-decode|--udp-port"
    "mrc-pair|--loss"
)

for e in "${entries[@]}"; do
    words=${e%%|*}
    valopt=${e#*|}
    read -r -a cmd <<<"$words"
    prog=${cmd[0]}
    cmd[0]=$bin/$prog

    run "${cmd[@]}" --help
    check '[ $rc = 0 ] && grep -q "^usage: $words" "$tmp/out" && [ ! -s "$tmp/err" ]' \
        "$words --help: usage on stdout, exit 0 (rc $rc)"
    run "${cmd[@]}" -h
    check '[ $rc = 0 ] && grep -q "^usage: " "$tmp/out"' "$words -h: the same"

    run "${cmd[@]}" --version
    check '[ $rc = 0 ] && grep -qx "$words (mrcfab) $version (git [0-9a-f]*\(-dirty\)\?)" "$tmp/out"' \
        "$words --version: $(head -c 80 "$tmp/out") (rc $rc)"

    run "${cmd[@]}" --no-such-option
    check '[ $rc = 2 ] && [ "$(lines "$tmp/err")" = 1 ] && grep -q -- "--no-such-option" "$tmp/err" && grep -q -- "--help" "$tmp/err" && [ ! -s "$tmp/out" ]' \
        "$words --no-such-option: exit 2, one line naming it and pointing at --help (rc $rc: $(head -c 160 "$tmp/err"))"

    if [ -n "$valopt" ]; then
        run "${cmd[@]}" "$valopt"
        check '[ $rc = 2 ] && [ "$(lines "$tmp/err")" = 1 ] && grep -q -- "$valopt" "$tmp/err" && grep -q -- "--help" "$tmp/err"' \
            "$words $valopt (no value): exit 2, one line naming it (rc $rc: $(head -c 160 "$tmp/err"))"
    fi
done

# Programs and commands that need arguments, given none: exit 2, one line saying what is missing.
for words in "mrc-controller" "mrc-agent" "mrc-probe" "mrc-probe node" "mrc-probe localize" \
    "mrc-probe validate" "mrcctl" "mrcctl topo" "mrcctl routes" "mrcctl deny" "mrcctl deny add" \
    "mrcctl deny rm" "mrcctl health" "mrcctl health path" "mrcctl path" "mrc-perf" \
    "mrc-perf client" "mrc-perf ring" "mrc-sim" "mrc-sim run" "mrc-sim report" "mrc-decode"; do
    read -r -a cmd <<<"$words"
    cmd[0]=$bin/${cmd[0]}
    run "${cmd[@]}"
    check '[ $rc = 2 ] && [ "$(lines "$tmp/err")" = 1 ] && grep -q -- "--help" "$tmp/err"' \
        "$words with no arguments: exit 2, one line (rc $rc: $(head -c 160 "$tmp/err"))"
done

# An unknown command or role is named.
for words in "mrc-probe bogus" "mrcctl bogus" "mrcctl deny bogus" "mrcctl topo bogus" \
    "mrcctl health bogus" "mrcctl routes bogus" "mrc-perf bogus" "mrc-sim bogus"; do
    read -r -a cmd <<<"$words"
    cmd[0]=$bin/${cmd[0]}
    run "${cmd[@]}"
    check '[ $rc = 2 ] && [ "$(lines "$tmp/err")" = 1 ] && grep -q "bogus" "$tmp/err"' \
        "$words: exit 2, one line naming it (rc $rc: $(head -c 160 "$tmp/err"))"
done

# The scripts follow the same statuses: --help exit 0 on stdout; an unknown option exit 2.
for script in deploy/lab/lab.sh deploy/lab/story.py deploy/demo.sh tests/bench/run.sh; do
    [ -x "$root/$script" ] || continue
    run "$root/$script" --help
    check '[ $rc = 0 ] && [ -s "$tmp/out" ]' "$script --help: usage on stdout, exit 0 (rc $rc)"
    run "$root/$script" --no-such-option
    check '[ $rc = 2 ]' "$script --no-such-option: exit 2 (rc $rc)"
done

finish conventions
