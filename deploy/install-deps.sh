#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages mrcfab builds, runs and tests with (as root; idempotent).
set -euo pipefail

packages=(
    build-essential cmake pkg-config git
    libevent-dev libmicrohttpd-dev libjson-c-dev libsqlite3-dev
    libnl-3-dev libnl-route-3-dev check
    clang libclang-rt-14-dev
    libssl-dev openssl
    iproute2 nftables ethtool procps tshark python3 valgrind curl wrk iperf3
)
# the packages: built with CPack, checked with lintian; man pages from scdoc, linted by mandoc
packages+=(lintian scdoc mandoc man-db adduser)
# promtool checks /metrics (tests/controller/live.sh); Debian ships it only with the server
# (a 19 MB download, 96 MB installed), which is kept from running below
packages+=(prometheus)
# the dashboard's browser test (tests/web) drives Debian's Chromium
packages+=(chromium)
# yanglint checks the SONiC render against SONiC's YANG model (tests/cli/render_consumers.sh)
packages+=(libyang2-tools)
# high availability (--etcd): the members of the HA tests and the lab's `up --ha`
packages+=(etcd-server etcd-client)
# npm runs the schema validators; a machine that already has Node.js keeps its own
if ! command -v npm >/dev/null 2>&1; then
    packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: run as root to install: ${missing[*]}" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# the prometheus package starts a server on :9090 where systemd runs: only promtool is wanted
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
# likewise etcd-server's default member on 127.0.0.1:2379: the tests start their own
if [[ " ${missing[*]} " == *" etcd-server "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now etcd.service >/dev/null 2>&1 || true
fi
