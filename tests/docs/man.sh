#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages: every page built from docs/man/*.scd lints clean (mandoc -T lint -W warning,
# man --warnings), every program and file format has its page, and every long option a
# program's --help prints (each role's and command's --help too) is in its page, in bold as an
# option is written. Exit 77 (skipped) without mandoc or man, except in CI (CI=true).
set -euo pipefail
build=${1:?usage: man.sh BUILDDIR}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/check.sh
source "$src/tests/check.sh"
bin=$build/bin
man=${MAN_DIR:-$build/man}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for tool in mandoc man; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        if [ "${CI:-}" = true ]; then
            echo "man.sh: $tool is missing (deploy/install-deps.sh installs it)" >&2
            exit 1
        fi
        echo "man.sh: $tool is missing; skipped" >&2
        exit 77
    fi
done

# every source has its page, and the pages the programs and files need exist
for scd in "$src"/docs/man/*.scd; do
    page=$(basename "$scd" .scd)
    check '[ -s "$man/$page" ]' "$page is built from docs/man/$page.scd"
done
for page in mrc-controller.8 mrc-agent.8 mrc-probe.8 mrcctl.1 mrc-perf.1 mrc-sim.1 mrc-decode.1 \
    mrc-pair.1 mrcfab.conf.5 mrcfab-tokens.5 mrcfab-topology.5 mrc-sim-scenario.5; do
    check '[ -f "$src/docs/man/$page.scd" ]' "$page has a source"
done

# lint: mandoc's warnings and groff's, none
for page in "$man"/*.[1-8]; do
    name=$(basename "$page")
    if mandoc -T lint -W warning "$page" >"$tmp/lint" 2>&1; then
        pass "$name: mandoc -T lint -W warning is clean"
    else
        fail "$name: mandoc -T lint -W warning: $(head -5 "$tmp/lint")"
    fi
    MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$tmp/groff" || true
    if [ -s "$tmp/groff" ]; then
        fail "$name: man --warnings: $(head -5 "$tmp/groff")"
    else
        pass "$name: man --warnings is quiet"
    fi
    check 'grep -q "^\.SH \"*EXIT STATUS" "$page" || [[ $name == *.5 ]]' \
        "$name: a program's page has EXIT STATUS"
done

# long_options: the long options of a --help text on stdin, from the left column of each item
# ('  -t, --topology FILE   the ...'), one a line
long_options() {
    grep -E '^  +-' | sed -E 's/^ +//; s/ {2,}.*//' | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
}
# commands: the commands or roles a --help lists under its 'commands' or 'roles' heading, one a
# line (the words before the first operand or option: 'topo validate', 'run')
commands() {
    awk '/^(commands|roles)/ { on = 1; next } /^[^ ]/ { on = 0 }
         on && /^  [a-z]/ { sub(/^ +/, ""); sub(/  .*/, ""); out = "";
             n = split($0, w, " ");
             for (i = 1; i <= n && w[i] ~ /^[a-z][a-z-]*$/; i++) out = out (out ? " " : "") w[i];
             print out }'
}
# check_program PROG PAGE: every long option of PROG --help and of each command's --help is
# in PAGE, bold (\fB--name\fR)
check_program() {
    local prog=$1 page=$2 missing="" helps=0 cmd
    [ -x "$bin/$prog" ] || { fail "$prog: not built in $bin"; return; }
    [ -f "$man/$page" ] || { fail "$prog: no page $page"; return; }
    local -a cmds=("")
    mapfile -t -O 1 cmds < <("$bin/$prog" --help | commands)
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086 # a command is one or two words
        if ! "$bin/$prog" $cmd --help >"$tmp/help" 2>"$tmp/err"; then
            fail "$prog $cmd --help: exit status not 0: $(head -2 "$tmp/err")"
            continue
        fi
        helps=$((helps + 1))
        while read -r opt; do
            grep -qF -- "\\fB$opt\\fR" "$man/$page" || missing="$missing ${cmd:+$cmd }$opt"
        done < <(long_options <"$tmp/help")
    done
    if [ -n "$missing" ]; then
        fail "$page lacks options of $prog's --help:$missing"
    else
        pass "$page has every long option of $prog's $helps --help texts"
    fi
}
check_program mrc-controller mrc-controller.8
check_program mrc-agent mrc-agent.8
check_program mrc-probe mrc-probe.8
check_program mrcctl mrcctl.1
check_program mrc-perf mrc-perf.1
check_program mrc-sim mrc-sim.1
check_program mrc-decode mrc-decode.1
check_program mrc-pair mrc-pair.1

finish man.sh
