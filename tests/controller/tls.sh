#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mrc-controller's TLS protocol (issue 19 item 7), with a throwaway CA made by openssl:
# openssl s_client with TLS 1.0 or 1.1 is refused, TLS 1.2 and 1.3 are taken, a cipher that is
# not AEAD is refused over TLS 1.2; each refusal is shown to be the controller's by the same
# client being taken by an openssl s_server that allows everything. With --client-ca (when the
# controller's --help has it): no client certificate, or one of another CA, is refused; one of
# the CA is answered 200, by curl and by mrcctl, and mrcctl without one says a certificate is
# required. (tests/controller/https.sh has the server-certificate checks: a CA that is not the
# server's, a name that is not its, plain http to the TLS port.)
#
# Before the TLS restriction (a controller without --client-ca) the protocol and cipher
# checks that fail are SKIP lines naming what it still takes, not failures.
#
# Usage: tests/controller/tls.sh BINDIR   (BINDIR holds mrc-controller and mrcctl)
# shellcheck disable=SC2034 # some values are read in the check strings, which check evaluates
set -euo pipefail
bin=${1:?usage: tls.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
pid=
ctl_pid=
cleanup() {
    local p
    for p in $pid $ctl_pid; do
        kill -9 "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
command -v openssl >/dev/null || { echo "FAIL openssl is not installed (deploy/install-deps.sh)"; exit 1; }
ctl_tokens "$tmp/tokens"
topo=$root/deploy/topologies/lab.json

# ca NAME; issue NAME CA EXT: a CA, and a certificate NAME.pem (key NAME.key) it signs
ssl() { openssl "$@" >>"$tmp/openssl.log" 2>&1 || { echo "FAIL openssl $1: $(tail -3 "$tmp/openssl.log")"; exit 1; }; }
ca() {
    ssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$1" \
        -keyout "$tmp/$1.key" -out "$tmp/$1.pem"
}
issue() {
    printf '%s\n' "$3" >"$tmp/$1.ext"
    ssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
        -keyout "$tmp/$1.key" -out "$tmp/$1.csr"
    ssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/$2.pem" -CAkey "$tmp/$2.key" -CAcreateserial \
        -days 2 -extfile "$tmp/$1.ext" -out "$tmp/$1.pem"
}
ca ca
ca other
issue ctl ca "subjectAltName=IP:127.0.0.1"
issue h0 ca "extendedKeyUsage=clientAuth"
issue stranger other "extendedKeyUsage=clientAuth"

mtls=false
if "$bin/mrc-controller" --help | grep -q -- '--client-ca'; then
    mtls=true
fi
extra=()
! $mtls || extra=(--client-ca "$tmp/ca.pem")
log=$tmp/ctl.log
: >"$log"
"$bin/mrc-controller" --topology "$topo" --db "$tmp/c.db" --tokens "$tmp/tokens" \
    --listen 127.0.0.1:0 --cert "$tmp/ctl.pem" --key "$tmp/ctl.key" ${extra[@]+"${extra[@]}"} 2>"$log" &
ctl_pid=$!
port=$(served_port "$log" "$ctl_pid" https) || exit 1

# A server that takes every protocol and cipher this openssl has, with the same certificate:
# what it takes, the client offered.
openssl s_server -accept 127.0.0.1:0 -cert "$tmp/ctl.pem" -key "$tmp/ctl.key" \
    -cipher 'ALL:@SECLEVEL=0' -www >"$tmp/open.out" 2>"$tmp/open.err" &
pid=$!
open_port=
for _ in $(seq 200); do
    open_port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$tmp/open.out")
    [ -n "$open_port" ] && break
    sleep 0.05
done
[ -n "$open_port" ] || { echo "FAIL openssl s_server did not start: $(cat "$tmp/open.err")"; exit 1; }

# hello PORT ARGS...: a TLS handshake by openssl s_client (with h0's certificate, so that a
# controller that requires one refuses only for what is tested); prints the protocol and
# cipher agreed, or nothing when refused
hello() {
    local p=$1
    shift
    local out proto cipher
    out=$(timeout 10 openssl s_client -connect "127.0.0.1:$p" -CAfile "$tmp/ca.pem" \
        -cert "$tmp/h0.pem" -key "$tmp/h0.key" "$@" </dev/null 2>&1 || true)
    cipher=$(sed -n 's/^New, .*, Cipher is \(.*\)$/\1/p' <<<"$out" | head -1)
    # the protocol agreed is the session's; the "New," line names the cipher's own
    proto=$(sed -n 's/^ *Protocol *: *\(TLSv[0-9.]*\)$/\1/p' <<<"$out" | head -1)
    [ -n "$proto" ] || proto=$(sed -n 's/^New, \(TLSv[0-9.]*\), .*/\1/p' <<<"$out" | head -1)
    if [ -n "$cipher" ] && [ "$cipher" != "(NONE)" ]; then
        echo "$proto $cipher"
    fi
}
# refused WHAT ARGS...: the controller refuses the handshake that the open server takes
refused() {
    local what=$1 got open
    shift
    open=$(hello "$open_port" "$@")
    check '[ -n "$open" ]' "$what: the client offers it (an open server takes it: $open)"
    got=$(hello "$port" "$@")
    if [ -z "$got" ]; then
        pass "$what: refused"
    elif ! $mtls; then
        echo "SKIP $what: this controller predates the TLS restriction (no --client-ca) and takes it ($got)"
    else
        fail "$what: taken ($got)"
    fi
}
# taken WHAT PROTOCOL ARGS...: the controller agrees PROTOCOL with an AEAD cipher
taken() {
    local what=$1 proto=$2 got
    shift 2
    got=$(hello "$port" "$@")
    check '[[ $got == "$proto "* ]] && [[ $got == *GCM* || $got == *CHACHA20* || $got == *CCM* ]]' "$what: taken ($got)"
}

# 1. protocols and ciphers
legacy=(-cipher 'DEFAULT:@SECLEVEL=0')
refused "TLS 1.0" -tls1 "${legacy[@]}"
refused "TLS 1.1" -tls1_1 "${legacy[@]}"
taken "TLS 1.2" TLSv1.2 -tls1_2
taken "TLS 1.3" TLSv1.3 -tls1_3
refused "TLS 1.2 with a CBC cipher (ECDHE-ECDSA-AES128-SHA)" -tls1_2 -cipher 'ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0'
refused "TLS 1.2 with a CBC cipher (ECDHE-ECDSA-AES128-SHA256)" -tls1_2 -cipher 'ECDHE-ECDSA-AES128-SHA256:@SECLEVEL=0'

# 2. client certificates
url=https://127.0.0.1:$port
auth=(-H "Authorization: Bearer tok-reader-000000000001")
code() { curl -s -m 10 -o /dev/null -w '%{http_code}' --cacert "$tmp/ca.pem" "${auth[@]}" "$@" || true; }
if ! $mtls; then
    echo "SKIP client certificates: mrc-controller --help has no --client-ca (mutual TLS is not in this build)"
else
    s=$(code "$url/api/v1/fabric")
    # refused by the server layer before the body, with a sentence (401), not by a handshake
    # that would tell the client nothing
    check '[ "$s" = 401 ]' "--client-ca: curl without a client certificate is refused (HTTP $s)"
    s=$(code --cert "$tmp/stranger.pem" --key "$tmp/stranger.key" "$url/api/v1/fabric")
    check '[ "$s" = 401 ]' "--client-ca: a certificate of another CA is refused (HTTP $s)"
    s=$(code --cert "$tmp/h0.pem" --key "$tmp/h0.key" "$url/api/v1/fabric")
    check '[ "$s" = 200 ]' "--client-ca: a certificate of the CA is answered (HTTP $s)"
    rc=0
    "$bin/mrcctl" --controller "$url" --cacert "$tmp/ca.pem" --token-file /dev/stdin \
        --client-cert "$tmp/h0.pem" --client-key "$tmp/h0.key" deny ls \
        <<<"tok-reader-000000000001" >"$tmp/out" 2>"$tmp/err" || rc=$?
    check '[ $rc = 0 ] && grep -q "the denylist is empty" "$tmp/out"' "--client-ca: mrcctl with --client-cert (exit $rc)"
    rc=0
    MRCFAB_TOKEN=tok-reader-000000000001 "$bin/mrcctl" --controller "$url" \
        --cacert "$tmp/ca.pem" deny ls >"$tmp/out" 2>"$tmp/err" || rc=$?
    check '[ $rc = 2 ] && grep -q "a client certificate signed by the server.s client CA is needed (a client of mrcfab gives one with --client-cert FILE --client-key FILE) (HTTP 401)" "$tmp/err"' "--client-ca: mrcctl without one: exit $rc, $(cat "$tmp/err")"
    rc=0
    MRCFAB_TOKEN=tok-reader-000000000001 MRCFAB_CLIENT_CERT=$tmp/stranger.pem \
        MRCFAB_CLIENT_KEY=$tmp/stranger.key "$bin/mrcctl" --controller "$url" \
        --cacert "$tmp/ca.pem" deny ls >"$tmp/out" 2>"$tmp/err" || rc=$?
    check '[ $rc = 2 ] && grep -q "the client certificate does not verify under the server.s client CA (HTTP 401)" "$tmp/err"' "--client-ca: mrcctl with another CA's (\$MRCFAB_CLIENT_CERT): exit $rc, $(cat "$tmp/err")"
fi

# 3. a client certificate that cannot be used: one sentence at start, exit 2, nothing sent
rc=0
MRCFAB_TOKEN=tok-reader-000000000001 "$bin/mrcctl" --controller "$url" --cacert "$tmp/ca.pem" \
    --client-cert "$tmp/h0.pem" --client-key "$tmp/stranger.key" deny ls >"$tmp/out" 2>"$tmp/err" || rc=$?
check '[ $rc = 2 ] && grep -q "stranger.key is not the key of the certificate in" "$tmp/err"' "mrcctl with a key of another certificate: exit 2"
for prog in "mrc-agent --topology $topo --host h0 --controller $url --token-file $tmp/tokens --state-dir $tmp/st" \
    "mrc-probe localize --topology $topo --listen 127.0.0.1:0 --controller $url --token-file $tmp/tokens"; do
    rc=0
    # shellcheck disable=SC2086 # the words of $prog
    timeout 10 "$bin"/$prog --cacert "$tmp/ca.pem" --client-cert "$tmp/none.pem" \
        --client-key "$tmp/h0.key" >"$tmp/out" 2>"$tmp/err" || rc=$?
    check '[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "cannot read the client certificate $tmp/none.pem (--client-cert)" "$tmp/err"' "${prog%% --*}: a client certificate that is not there: exit $rc, $(head -1 "$tmp/err")"
done

finish tls
