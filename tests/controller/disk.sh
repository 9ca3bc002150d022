#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A full or read-only disk (issue 19 item 6): mrc-controller's store on a small tmpfs of its
# own; once the disk is full a write is refused 503 with a sentence and changes nothing, reads
# go on, the writes come back when there is room again, and every acknowledged entry is there
# after a restart; then on the same disk remounted read-only: the entries served, every write
# 503 with a sentence. Root (a mount) or 77.
#
# Usage: tests/controller/disk.sh BINDIR
set -euo pipefail
bin=${1:?usage: disk.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root to mount a tmpfs"
    exit 77
fi
tmp=$(mktemp -d)
mnt=$tmp/disk
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    mountpoint -q "$mnt" && umount -l "$mnt"
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
ctl_tokens "$tmp/tokens"
mkdir "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt"

start() {
    log=$tmp/log.$RANDOM
    : >"$log"
    "$bin/mrc-controller" --topology "$root/deploy/topologies/lab.json" --db "$mnt/c.db" \
        --tokens "$tmp/tokens" --listen 127.0.0.1:0 --floor 0 --web '' 2>"$log" &
    pid=$!
    port=$(served_port "$log" "$pid") || exit 1
}
req() { # METHOD PATH [BODY]: the status; the body in $tmp/out
    curl -s -o "$tmp/out" -w '%{http_code}' -X "$1" -H "Authorization: Bearer tok-operator-0000000001" \
        -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "http://127.0.0.1:$port$2"
}
ids() { python3 -c 'import json,sys; print(" ".join(str(e["id"]) for e in json.load(open(sys.argv[1]))["entries"]))' "$tmp/out"; }

start
s=$(req POST /api/v1/denylist '{"element": "p0-t1-0", "reason": "before the disk filled"}')
check '[ "$s" = 201 ]' "an entry while there is room: 201"
req GET /api/v1/denylist >/dev/null
before=$(ids)
# fill the disk: the store's next page has nowhere to go
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true
s=$(req POST /api/v1/denylist '{"element": "p1-t1-1", "reason": "on a full disk"}')
check '[ "$s" = 503 ] && grep -qi "full" "$tmp/out" && grep -q "nothing was changed" "$tmp/out"' \
    "a write on a full disk: 503 with a sentence ($s: $(head -c 200 "$tmp/out"))"
s=$(req GET /api/v1/denylist)
check '[ "$s" = 200 ] && [ "$(ids)" = "$before" ]' "reads go on, and nothing changed ($s: $(ids))"
s=$(req GET /api/v1/health/summary)
check '[ "$s" = 200 ]' "health reads too ($s)"
rm -f "$mnt/filler"
s=$(req POST /api/v1/denylist '{"element": "p1-t1-1", "reason": "room again"}')
check '[ "$s" = 201 ]' "with room again the write is taken: 201 ($s)"
req GET /api/v1/denylist >/dev/null
after=$(ids)
check 'kill -TERM "$pid" && wait "$pid"' "SIGTERM stops it cleanly"
pid=
start
req GET /api/v1/denylist >/dev/null
check '[ "$(ids)" = "$after" ] && [ "$(wc -w <<<"$after")" = 2 ]' \
    "restarted: every acknowledged entry is there ($(ids))"
check 'kill -TERM "$pid" && wait "$pid"' "and stops cleanly again"
pid=
# read-only: a disk cannot be remounted read-only under a file open for writing, so between
# two runs
mount -o remount,ro "$mnt"
start
s=$(req GET /api/v1/denylist)
check '[ "$s" = 200 ] && [ "$(ids)" = "$after" ]' "on a read-only disk the entries are served ($s: $(ids))"
s=$(req POST /api/v1/denylist '{"element": "p0-t0-0", "reason": "on a read-only disk"}')
check '[ "$s" = 503 ] && grep -q "read-only" "$tmp/out" && grep -q "nothing was changed" "$tmp/out"' \
    "a write on a read-only disk: 503 with a sentence ($s: $(head -c 200 "$tmp/out"))"
s=$(req DELETE "/api/v1/denylist/${after%% *}")
check '[ "$s" = 503 ]' "and a removal: 503 ($s)"
s=$(req GET /api/v1/health/summary)
check '[ "$s" = 200 ]' "health reads too ($s)"
check 'grep -q "read-only disk" "$log"' "the log says the store is read-only"
check 'kill -TERM "$pid" && wait "$pid"' "SIGTERM stops it cleanly on a read-only disk"
pid=
finish disk
