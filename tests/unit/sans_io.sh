#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The engine stays sans-IO (docs/architecture.md#engine-boundary): every symbol libmrc takes from
# outside must be on the allowlist, and none may be a socket, clock, rand, stdio, thread, sleep or
# malloc call.
set -euo pipefail
lib=${1:?usage: sans_io.sh LIBMRC.a}

undefined=$(nm -u "$lib" | awk 'NF == 2 {print $2}' | sort -u)
defined=$(nm --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort -u)
imports=$(comm -23 <(echo "$undefined") <(echo "$defined"))

forbidden='^(socket|bind|connect|send|sendto|sendmsg|sendmmsg|recv|recvfrom|recvmsg|recvmmsg|'
forbidden+='read|write|open|close|poll|select|epoll_.*|clock_gettime|gettimeofday|time|'
forbidden+='nanosleep|usleep|sleep|rand|random|srand|srandom|rand_r|getrandom|printf|fprintf|'
forbidden+='sprintf|snprintf|vsnprintf|vfprintf|puts|fputs|fputc|putchar|fwrite|fopen|stdout|'
forbidden+='stderr|malloc|calloc|realloc|free|pthread_.*|event_.*)$'
allowed='^(memcpy|memset|memmove|memcmp|strcmp|strlen|__cpu_model|__cpu_indicator_init|'
allowed+='_GLOBAL_OFFSET_TABLE_|__stack_chk_fail|__asan_.*|__ubsan_.*|__sanitizer_.*|'
allowed+='__sancov_.*|__start___sancov.*|__stop___sancov.*)$'

status=0
bad=$(echo "$imports" | grep -E "$forbidden" || true)
if [ -n "$bad" ]; then
    echo "FAIL: libmrc uses I/O, clock, randomness or allocation: $(echo $bad)"
    status=1
fi
unknown=$(echo "$imports" | grep -v -E "$allowed" | grep -v -E "$forbidden" | grep -v '^$' || true)
if [ -n "$unknown" ]; then
    echo "FAIL: libmrc imports symbols not on the allowlist: $(echo $unknown)"
    status=1
fi
if [ $status -eq 0 ]; then
    echo "PASS: libmrc imports only: $(echo $imports)"
fi
exit $status
