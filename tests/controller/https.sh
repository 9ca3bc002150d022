#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-controller over HTTPS (--cert, --key) on loopback with a self-signed certificate made by
# openssl: curl trusting it gets the fabric summary, curl not trusting it and plain HTTP to the
# TLS port get nothing; mrcctl reads and changes over https (--cacert, $MRCFAB_CACERT) and says
# why when it cannot (a certificate not trusted, one for another name, a bad CA file, a server
# that is not https); a certificate or key that cannot be used stops the controller at startup
# with a sentence naming the file and a nonzero exit.
#
# Usage: tests/controller/https.sh BINDIR   (BINDIR holds mrc-controller and mrcctl)
# shellcheck disable=SC2034 # some values are read in the check strings, which check evaluates
set -euo pipefail
bin=${1:?usage: https.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
command -v openssl >/dev/null || { echo "FAIL openssl is not installed (deploy/install-deps.sh)"; exit 1; }

cat >"$tmp/tokens" <<'TOKENS'
tok-reader-000000000001 reader alice
tok-operator-0000000001 operator bob
TOKENS
chmod 600 "$tmp/tokens" # a tokens file only its owner can read
topo=$root/deploy/topologies/lab.json

# selfsigned NAME SAN: NAME.pem (a self-signed certificate for SAN) and NAME.key
selfsigned() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=$1" -addext "subjectAltName=$2" -keyout "$tmp/$1.key" -out "$tmp/$1.pem" \
        2>"$tmp/openssl.log" || { echo "FAIL openssl: $(cat "$tmp/openssl.log")"; exit 1; }
}
selfsigned ctl "IP:127.0.0.1,DNS:localhost"
selfsigned other "DNS:other.example"      # trusted by no one here
selfsigned elsewhere "DNS:elsewhere.example" # the controller's, for a name it is not reached by

# start CERT KEY: the controller over https; its port in $port, its log in $log
starts=0
start() {
    starts=$((starts + 1))
    log=$tmp/log.$starts
    : >"$log" # the loop below reads it before the controller may have opened it
    "$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
        --listen 127.0.0.1:0 --floor 0 --cert "$1" --key "$2" 2>"$log" &
    pid=$!
    port=$(served_port "$log" "$pid" https) || exit 1
}
stop() {
    kill -TERM "$pid"
    wait "$pid" || true
    pid=
}

# 1. curl
start "$tmp/ctl.pem" "$tmp/ctl.key"
check 'grep -q "port $port (https)" "$log"' "the controller says it serves https"
auth=(-H "Authorization: Bearer tok-reader-000000000001")
s=$(curl -s -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/ctl.pem" "${auth[@]}" "https://127.0.0.1:$port/api/v1/fabric")
check '[ "$s" = 200 ] && python3 -c "import json,sys; d=json.load(open(\"$tmp/out\")); sys.exit(0 if (d[\"name\"], d[\"planes\"]) == (\"lab\", 2) else 1)"' "curl --cacert: the fabric summary over https"
s=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$tmp/ctl.pem" "https://127.0.0.1:$port/metrics")
check '[ "$s" = 200 ]' "curl --cacert: /metrics over https"
rc=0
curl -s -o /dev/null "${auth[@]}" "https://127.0.0.1:$port/api/v1/fabric" || rc=$?
check '[ $rc = 60 ]' "curl without the certificate: not trusted (curl exit $rc)"
rc=0
rm -f "$tmp/out"
s=$(curl -s -m 5 -o "$tmp/out" -w '%{http_code}' "${auth[@]}" "http://127.0.0.1:$port/api/v1/fabric") || rc=$?
check '[ $rc != 0 ] && [ "$s" = 000 ] && [ ! -s "$tmp/out" ]' "plain http to the TLS port: no answer (curl exit $rc)"
check 'kill -0 "$pid"' "and the controller is still serving"

# 2. mrcctl over https
export MRCFAB_CONTROLLER=https://127.0.0.1:$port MRCFAB_TOKEN=tok-reader-000000000001
unset MRCFAB_CACERT MRCFAB_TOKEN_FILE
rc=0
run() {
    set +e
    "$bin/mrcctl" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    set -e
}
err_is() { grep -qF -- "$1" "$tmp/err"; }
run --cacert "$tmp/ctl.pem" health switch p0-t1-0
check '[ $rc = 0 ] && grep -q "^p0-t1-0, plane 0: no_data; its links: " "$tmp/out"' "mrcctl --cacert: health over https"
MRCFAB_CACERT=$tmp/ctl.pem MRCFAB_TOKEN=tok-operator-0000000001 run --json drain p0-t1-1 --reason "optics"
check '[ $rc = 0 ] && grep -q "\"reason\": \"drain: optics\"" "$tmp/out"' "mrcctl drain over https (\$MRCFAB_CACERT)"
MRCFAB_CACERT=$tmp/ctl.pem run deny ls
check '[ $rc = 0 ] && grep -q "p0-t1-1  .*drain: optics$" "$tmp/out"' "mrcctl deny ls over https: the entry is there"
MRCFAB_CACERT=$tmp/ctl.pem run --controller "https://localhost:$port" health links --state bad
check '[ $rc = 0 ] && [ "$(cat "$tmp/out")" = "no link matches" ]' "mrcctl over https by the certificate's DNS name"
run deny ls
check '[ $rc = 1 ] && err_is "cannot reach the controller: https://127.0.0.1:$port/api/v1/denylist: the server'"'"'s certificate is not trusted: self-signed certificate" && [ ! -s "$tmp/out" ]' "mrcctl without the CA: exit 1, not trusted"
run --cacert "$tmp/other.pem" --json deny ls
check '[ $rc = 1 ] && err_is "is not trusted" && grep -q "\"code\": 1" "$tmp/out"' "mrcctl with another CA: exit 1, an error document"
run --cacert "$tmp/none.pem" deny ls
check '[ $rc = 2 ] && err_is "cannot read the CA file $tmp/none.pem: No such file or directory"' "a CA file that is not there: exit 2"
printf 'not a certificate\n' >"$tmp/junk.pem"
run --cacert "$tmp/junk.pem" deny ls
check '[ $rc = 2 ] && err_is "the CA file $tmp/junk.pem holds no PEM certificate"' "a CA file with no certificate: exit 2"
run --cacert "$tmp/ctl.pem" --controller "http://127.0.0.1:$port" deny ls
check '[ $rc = 1 ] && err_is "the connection closed without an answer (if the server speaks https, use an https:// URL)"' "mrcctl over plain http to the TLS port: exit 1, a hint"
stop

# a certificate that does not name the address it is reached by
start "$tmp/elsewhere.pem" "$tmp/elsewhere.key"
run --controller "https://127.0.0.1:$port" --cacert "$tmp/elsewhere.pem" deny ls
check '[ $rc = 1 ] && err_is "the server'"'"'s certificate is not for 127.0.0.1 (IP address mismatch)"' "a certificate for another name: exit 1"
stop

# an https URL to a server that speaks plain http
python3 -c '
import http.server, sys
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
print(s.server_address[1], flush=True)
s.handle_request()' >"$tmp/plain.port" 2>/dev/null &
plain=$!
for _ in $(seq 100); do [ -s "$tmp/plain.port" ] && break; sleep 0.05; done
run --controller "https://127.0.0.1:$(cat "$tmp/plain.port")" --cacert "$tmp/ctl.pem" deny ls
check '[ $rc = 1 ] && err_is "the TLS handshake failed: " && err_is "(is the server https?)"' "https to a plain http server: exit 1, the handshake's fault"
kill "$plain" 2>/dev/null || true
wait "$plain" 2>/dev/null || true

# 3. a certificate or key that cannot be used: a sentence naming it, a nonzero exit, at once
printf 'not a key\n' >"$tmp/junk.key"
: >"$tmp/empty.pem"
bad_starts=(
    "a certificate that is not PEM|$tmp/junk.pem|$tmp/ctl.key|$tmp/junk.pem"
    "an empty certificate file|$tmp/empty.pem|$tmp/ctl.key|$tmp/empty.pem"
    "a key that is not PEM|$tmp/ctl.pem|$tmp/junk.key|$tmp/junk.key"
    "a key of another certificate|$tmp/ctl.pem|$tmp/other.key|$tmp/other.key"
    "a certificate file that is not there|$tmp/none.pem|$tmp/ctl.key|$tmp/none.pem"
    "a key file that is not there|$tmp/ctl.pem|$tmp/none.key|$tmp/none.key"
)
for c in "${bad_starts[@]}"; do
    IFS='|' read -r what cert key named <<<"$c"
    log=$tmp/bad.log
    rc=0
    timeout 10 "$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
        --listen 127.0.0.1:0 --cert "$cert" --key "$key" 2>"$log" || rc=$?
    line=$(grep " ERR " "$log" | head -1)
    check '[ $rc != 0 ] && [ $rc != 124 ] && ! grep -q "(https)" "$log" && [[ $line == *"$named"* ]] && [[ $line != *"in use"* ]]' "$what: exit $rc, '${line#* ERR }'"
done
rc=0
timeout 10 "$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
    --listen 127.0.0.1:0 --cert "$tmp/ctl.pem" 2>"$tmp/bad.log" || rc=$?
check '[ $rc = 2 ] && grep -q "\-\-cert and \-\-key go together" "$tmp/bad.log"' "--cert without --key: exit 2"

finish https
