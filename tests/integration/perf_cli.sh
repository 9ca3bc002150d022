#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-perf's options, without an agent: what each command takes (a fractional --duration, a
# --size of whole float32s for the ring, --rank within --hosts, 2..128 --hosts) goes on to the
# agent, which is not there (exit 1); what it refuses is one line naming the option as typed,
# pointing at --help, exit 2.
set -uo pipefail
bin=$(cd "${1:?usage: perf_cli.sh BINDIR}" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/tests/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
none="@mrcfab-perf-cli-$$" # an agent socket nobody listens on

run() { # ARGS...: mrc-perf's status in $rc, its stderr in $tmp/err
    timeout 10 "$bin/mrc-perf" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}
# refused WHAT TEXT ARGS...: exit 2, one line with TEXT and --help, nothing on stdout
refused() {
    local what=$1 text=$2
    shift 2
    run "$@"
    check '[ $rc = 2 ] && [ "$(grep -c "" "$tmp/err")" = 1 ] && grep -qF -- "$text" "$tmp/err" && grep -q -- "--help" "$tmp/err" && [ ! -s "$tmp/out" ]' \
        "$what: exit 2, '$text' (rc $rc: $(head -c 200 "$tmp/err"))"
}
# taken WHAT ARGS...: the options pass, the agent is missing: exit 1 naming it
taken() {
    local what=$1
    shift
    run "$@" --agent "$none"
    check '[ $rc = 1 ] && grep -qF "no agent at $none" "$tmp/err"' \
        "$what: taken, then no agent (rc $rc: $(head -c 200 "$tmp/err"))"
}

taken "client --duration 0.25" client ::1 --duration 0.25
taken "client -d 1.5 -s 64 -t lat" client ::1 -d 1.5 -s 64 -t lat
taken "client --duration=2 after the server" client --duration=2 ::1
refused "client --duration 1.5x" "--duration takes a number, not '1.5x'" client ::1 --duration 1.5x
refused "client --duration 0" "--duration must be more than 0 seconds" client ::1 --duration 0
refused "client --duration 90000" "--duration 90000 is out of range" client ::1 --duration 90000
refused "client --test bogus" "--test takes one of bw,lat, not 'bogus'" client ::1 --test bogus
refused "client --qps 65" "--qps 65 is out of range" client ::1 --qps 65
refused "client -s x" "--size takes a whole number, not 'x'" client ::1 -s x
refused "client with two servers" "unexpected argument 'b'" client a b
refused "server --port 0" "--port 0 is out of range" server --port 0
refused "server --once=maybe" "--once is true or false, not 'maybe'" server --once=maybe
refused "status with an operand" "unexpected argument 'extra'" status extra

# the ring: --rank and --size have no default; not given, the rank is found among this host's
# addresses and the vector is 4 MiB
taken "ring on ::1 (found as rank 0)" ring --hosts ::1,::2,::3
taken "ring --rank 2 --size 12" ring --hosts a,b,c --rank 2 --size 12
taken "ring --size 1000004 on 7 ranks" ring --hosts ::1,b,c,d,e,f,g --size 1000004
refused "ring --size 1001" "--size 1001 is not whole float32s" ring --hosts ::1,::2 --size 1001
refused "ring --size 8 on 3 ranks" "--size 8: a ring's vector is whole float32s" ring --hosts ::1,::2,::3 --size 8
refused "ring --rank 3 of 3" "--rank 3 is not one of the 3 ranks of --hosts" ring --hosts a,b,c --rank 3
refused "ring --rank 128" "--rank 128 is out of range" ring --hosts a,b --rank 128
refused "ring --hosts of one" "--hosts names 1 address; a ring has 2..128" ring --hosts ::1
refused "ring --hosts of 129" "--hosts names 129 addresses" ring --hosts "$(seq -s, 1 129)" --rank 0
refused "ring not among --hosts" "no address of --hosts is this host's (give --rank)" ring --hosts 2001:db8:9::1,2001:db8:9::2
refused "ring --progress -1" "--progress takes a whole number, not '-1'" ring --hosts a,b --progress=-1
refused "ring --once (a server's)" "unknown option '--once'" ring --hosts a,b --once

finish perf_cli
