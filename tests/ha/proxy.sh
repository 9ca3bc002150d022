#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A follower's answer to the leader-only reads, with curl against three controllers on a real
# three-member etcd on loopback: a follower fetches them from the leader (the health summary,
# the problem list with its query, the agents registered with the leader: the leader's very
# body, type and status; a refused token refused), a write still gets 307 to the leader, and
# once the leader is killed a follower answers 503 "did not answer" with Retry-After: 1, or the
# new leader's answer, and the new leader's within a few seconds. A stopped leader: the fetch
# gives up after 5 s, a fetch beyond the limit gets 503 "busy", and the failure is said at once
# for a second after. Then the same cluster over
# mutual TLS: a follower checks the leader's certificate against --peer-ca (here --client-ca's
# default) and offers its own; a follower given another CA answers 503 naming the certificate.
set -euo pipefail
bin=${1:?usage: proxy.sh BINDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v etcd >/dev/null || { echo "FAIL no etcd (deploy/install-deps.sh installs etcd-server)"; exit 1; }
command -v openssl >/dev/null || { echo "FAIL no openssl"; exit 1; }
# shellcheck source=tests/controller/ctl_common.sh
source "$root/tests/controller/ctl_common.sh"
# shellcheck source=tests/ha/etcd_cluster.sh
source "$root/tests/ha/etcd_cluster.sh"
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do [ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do [ -z "$p" ] || wait "$p" 2>/dev/null || true; done
    etcd_down "$work"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
ctl_tokens "$work/tokens"
READER=tok-reader-000000000001 AGENT=tok-agent-0000000000001 OPER=tok-operator-0000000001
topo=$root/deploy/topologies/lab.json
etcd_up "$work"

# CURL_TLS: curl's options for the cluster in use
CURL_TLS=()
get() { # get URL [TOKEN] -> "STATUS CTYPE" on the first line, the body after; headers in $work/h
    curl -s ${CURL_TLS[@]+"${CURL_TLS[@]}"} -m 10 -D "$work/h" -o "$work/b" \
        -w '%{http_code} %{content_type}\n' -H "Authorization: Bearer ${2:-$READER}" "$1" || true
    cat "$work/b" 2>/dev/null || true
}

# start I PREFIX SCHEME ARGS...: controller I on a free port, its pid in pids[I], URL in url[I]
declare -a url
start() {
    local i=$1 prefix=$2 scheme=$3
    shift 3
    : >"$work/c$i.log"
    "$bin/mrc-controller" --topology "$topo" --db "$work/c$i-$prefix.db" --tokens "$work/tokens" \
        --listen 127.0.0.1:0 --web "" --etcd "$ETCD_ENDPOINTS" --etcd-prefix "/$prefix/" \
        --name "controller-$i" --lease-ttl 2 --rate-limit 0 "$@" 2>"$work/c$i.log" &
    pids[i]=$!
    url[i]=$scheme://127.0.0.1:$(served_port "$work/c$i.log" "${pids[i]}" "$scheme")
}

# leader I... -> the index of the one controller among I... that says it leads (waits 15 s)
leader() {
    for _ in $(seq 150); do
        local n=0 who=
        for i in "$@"; do
            if get "${url[i]}/api/v1/cluster" | tail -n +2 | grep -q '"self":{[^}]*"role":"leader"'; then
                n=$((n + 1))
                who=$i
            fi
        done
        [ "$n" = 1 ] && { echo "$who"; return 0; }
        sleep 0.1
    done
    return 1
}

### plain HTTP
for i in 1 2 3; do start "$i" plain http; done
L=$(leader 1 2 3) || { fail "a leader within 15 s"; finish ha.proxy; }
F=$(( L % 3 + 1 ))
pass "controller-$L leads, controller-$F follows"

# the leader alone has the agent's registration and report
r=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $AGENT" -H 'Content-Type: application/json' \
    -d '{"host":"h0","version":"0.1.0","mode":"srv6","ports":[{"port":0,"up":true}]}' "${url[L]}/api/v1/agents")
check '[ "$r" = 200 ]' "h0 registers with the leader (HTTP $r)"
r=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $AGENT" -H 'Content-Type: application/json' \
    -d '{"host":"h0","evs":[{"peer":"h2","ev":0,"sent":1000,"lost":100,"state":"good"}]}' "${url[L]}/api/v1/reports")
check '[ "$r" = 202 ]' "h0 reports to the leader (HTTP $r)"
sleep 1 # the health snapshot is refreshed in slices

for path in /api/v1/health/summary '/api/v1/health/problems?limit=1&offset=0' /api/v1/agents /api/v1/probers; do
    lead=$(get "${url[L]}$path")
    follow=$(get "${url[F]}$path")
    check '[ "$(head -1 <<<"$lead")" = "200 application/json" ]' "the leader answers $path (${lead%%$'\n'*})"
    check '[ "$follow" = "$lead" ]' "the follower's $path is the leader's: status, type and body"
done
follow=$(get "${url[F]}/api/v1/agents")
check 'grep -q "\"host\":\"h0\"" <<<"$follow"' "the follower's agents list the leader's h0"
follow=$(get "${url[F]}/api/v1/health/problems?limit=1")
check 'grep -q "\"total\":[1-9]" <<<"$follow" && [ "$(grep -o "\"element\"" <<<"$follow" | wc -l)" = 1 ]' \
    "the follower's limit=1 reaches the leader: one item of a longer list"
out=$(get "${url[F]}/api/v1/health/summary" tok-not-a-token-00000)
check '[ "$(head -1 <<<"$out" | cut -d" " -f1)" = 401 ]' "a token that is none of ours is refused by the follower (${out%%$'\n'*})"
hl=$(curl -s -m 5 -I -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $READER" "${url[L]}/api/v1/health/summary")
hf=$(curl -s -m 5 -I -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $READER" "${url[F]}/api/v1/health/summary")
check '[ "$hf" = "$hl" ]' "HEAD: the follower answers as the leader ($hf, $hl)"

# a write is still redirected
r=$(curl -s -m 5 -o "$work/b" -D "$work/h" -w '%{http_code}' -H "Authorization: Bearer $OPER" \
    -H 'Content-Type: application/json' -d '{"element":"p0-t1-0","reason":"proxy test"}' "${url[F]}/api/v1/denylist")
check '[ "$r" = 307 ] && grep -qi "^location: ${url[L]}/api/v1/denylist" "$work/h"' "a write to the follower: 307 to the leader (HTTP $r)"

# the leader killed: 503 "did not answer" with Retry-After: 1 (or, the lead already moved,
# the new leader's answer); then the new leader's answer within a few seconds
kill -KILL "${pids[L]}"
wait "${pids[L]}" 2>/dev/null || true
pids[L]=
out=$(get "${url[F]}/api/v1/health/summary")
st=$(head -1 <<<"$out" | cut -d" " -f1)
if [ "$st" = 503 ]; then
    check 'grep -q "did not answer\|no controller leads\|no longer leads" <<<"$out" && grep -qi "^retry-after: 1" "$work/h"' \
        "the leader gone: the follower answers 503 with a sentence and Retry-After: 1 ($(tail -n +2 <<<"$out" | head -c 300))"
else
    check '[ "$st" = 200 ]' "the leader gone: the follower answers 503 or the new leader's answer (HTTP $st)"
fi
ok=
for _ in $(seq 100); do
    out=$(get "${url[F]}/api/v1/health/summary")
    st=${out%% *}
    [ "$st" = 200 ] && { ok=1; break; }
    sleep 0.1
done
check '[ -n "$ok" ]' "a survivor answers the health summary 200 within 10 s of the kill"
for i in 1 2 3; do [ "$i" = "$L" ] || kill -TERM "${pids[i]}"; done
for i in 1 2 3; do [ "$i" = "$L" ] || wait "${pids[i]}" 2>/dev/null || true; done
pids=()

### a leader that takes the connection but does not answer (stopped): the fetch gives up after
### 5 s; with --threads 2 one fetch at a time, a second waits a second and gets 503 "busy";
### for a second after the failure the follower says so at once. (--lease-ttl 30: no election
### meanwhile.)
for i in 1 2; do start "$i" stall http --threads 2 --lease-ttl 30; done
L=$(leader 1 2) || { fail "stall: a leader within 15 s"; finish ha.proxy; }
F=$(( 3 - L ))
kill -STOP "${pids[L]}"
t0=$(date +%s%N)
(get "${url[F]}/api/v1/health/summary" >"$work/a.out"; date +%s%N >"$work/a.end"; cp "$work/h" "$work/a.h") &
a=$!
sleep 0.3
tb=$(date +%s%N)
CURL_B=$(curl -s -m 10 -o "$work/b.out" -w '%{http_code}' -H "Authorization: Bearer $READER" "${url[F]}/api/v1/agents")
ms_b=$(( ($(date +%s%N) - tb) / 1000000 ))
check '[ "$CURL_B" = 503 ] && grep -q "\"title\":\"busy\"" "$work/b.out" && [ "$ms_b" -ge 800 ] && [ "$ms_b" -le 3000 ]' \
    "stall: a second fetch while one waits gets 503 busy after about a second ($CURL_B in $ms_b ms: $(head -c 200 "$work/b.out"))"
wait "$a"
ms_a=$(( ($(cat "$work/a.end") - t0) / 1000000 ))
check 'head -1 "$work/a.out" | grep -q "^503 " && grep -q "did not answer" "$work/a.out" && [ "$ms_a" -ge 4500 ] && [ "$ms_a" -le 7500 ]' \
    "stall: the fetch from a leader that does not answer gives up after 5 s with 503 ($ms_a ms)"
tc=$(date +%s%N)
out=$(get "${url[F]}/api/v1/health/summary")
ms_c=$(( ($(date +%s%N) - tc) / 1000000 ))
check '[ "${out%% *}" = 503 ] && grep -q "did not answer" <<<"$out" && [ "$ms_c" -le 500 ]' \
    "stall: right after, the follower says the leader did not answer at once ($ms_c ms)"
kill -CONT "${pids[L]}"
for i in 1 2; do kill -TERM "${pids[i]}"; done
for i in 1 2; do wait "${pids[i]}" 2>/dev/null || true; done
pids=()

### mutual TLS: every controller asks clients for a certificate of the CA, its peers included
ssl() { openssl "$@" >>"$work/openssl.log" 2>&1 || { echo "FAIL openssl $1: $(tail -3 "$work/openssl.log")"; exit 1; }; }
ca() { ssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$1" -keyout "$work/$1.key" -out "$work/$1.pem"; }
issue() {
    printf '%s\n' "$3" >"$work/$1.ext"
    ssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$work/$1.key" -out "$work/$1.csr"
    ssl x509 -req -in "$work/$1.csr" -CA "$work/$2.pem" -CAkey "$work/$2.key" -CAcreateserial -days 2 \
        -extfile "$work/$1.ext" -out "$work/$1.pem"
}
ca ca
ca other
# a controller's certificate serves and is offered as a client's: both usages
issue ctl ca "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
issue op ca "extendedKeyUsage=clientAuth"
CURL_TLS=(--cacert "$work/ca.pem" --cert "$work/op.pem" --key "$work/op.key")
tls=(--cert "$work/ctl.pem" --key "$work/ctl.key" --client-ca "$work/ca.pem")
for i in 1 2 3; do start "$i" tls https "${tls[@]}"; done
L=$(leader 1 2 3) || { fail "TLS: a leader within 15 s"; finish ha.proxy; }
F=$(( L % 3 + 1 ))
lead=$(get "${url[L]}/api/v1/health/summary")
follow=$(get "${url[F]}/api/v1/health/summary")
first=$(head -1 <<<"$lead")
check '[ "$first" = "200 application/json" ] && [ "$follow" = "$lead" ]' \
    "TLS: the follower's health summary is the leader's, fetched with its own certificate (${follow%%$'\n'*})"
# a follower that trusts another CA does not take the leader's certificate
start 4 tls https "${tls[@]}" --peer-ca "$work/other.pem"
out=$(get "${url[4]}/api/v1/health/summary")
check '[ "$(head -1 <<<"$out" | cut -d" " -f1)" = 503 ] && grep -q "did not answer" <<<"$out"' \
    "TLS: a follower whose --peer-ca did not sign the leader's certificate answers 503 ($(tail -n +2 <<<"$out" | head -c 300))"
finish ha.proxy
