#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages as an operator meets them: built from the tree (CPack), lintian with no
# error, installed with apt (the system user, the conffiles, the units that systemd-analyze
# verifies, every program's --version and man page, no service started), the lab run on the
# installed programs, an upgrade to a second build of a higher version that keeps an edited
# conffile, and a purge that leaves nothing behind. As root; it installs into this machine and
# purges what it installed, also when it fails.
# Usage: tests/package/run.sh [BUILDDIR]   (default build-pkg; exit 77 when not root)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
. tests/check.sh
build=${1:-build-pkg}
jobs=$(nproc)
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: the package test installs packages: run it as root"
    exit 77
fi
lab_prefix=pk
lab_dir=$(mktemp -d /tmp/mrcfab-pkg-lab.XXXXXX)
snap=$(mktemp -d /tmp/mrcfab-pkg-snap.XXXXXX)
pkgs=(mrcfab-common mrcfab-controller mrcfab-agent mrcfab-probe mrcfab-tools)

cleanup() {
    deploy/lab/lab.sh -b /usr/bin -p "$lab_prefix" -d "$lab_dir" down >/dev/null 2>&1 || true
    # whatever an earlier step left installed goes, so that this machine is as it was
    if dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -q installed; then
        apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1 || true
    fi
    rm -rf "$lab_dir" "$snap"
}
trap cleanup EXIT

# The state that install and purge must leave as they found it: files in the places packages
# write, the users and groups.
snapshot() {
    {
        find /etc /usr/bin /usr/share/mrcfab /usr/share/man /usr/share/doc /lib/systemd/system \
            /var/lib/mrcfab /usr/share/bash-completion -xdev 2>/dev/null | grep -i mrc || true
        cut -d: -f1 /etc/passwd | sed 's/^/user /'
        cut -d: -f1 /etc/group | sed 's/^/group /'
    } | sort
}

build_debs() { # DIR VERSION: a build of the packages' version VERSION, its .debs in DIR/debs
    local dir version=$2
    dir=$(realpath -m "$1")
    cmake -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
        -DMRCFAB_TESTS=OFF -DMRCFAB_PACKAGE_VERSION="$version" >/dev/null
    cmake --build "$dir" -j"$jobs" >/dev/null
    rm -rf "$dir/debs"
    (cd "$dir" && cpack -G DEB -B "$dir/debs" >"$dir/cpack.log" 2>&1) ||
        { cat "$dir/cpack.log"; return 1; }
    rm -rf "$dir/debs/_CPack_Packages"
}

# --- build and lint ------------------------------------------------------------------------
if dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -q installed; then
    echo "mrcfab packages are installed on this machine already; purge them first" >&2
    exit 2
fi
version=$(sed -n 's/^project(mrcfab VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
build_debs "$build" "$version"
n=$(find "$build/debs" -name '*.deb' | wc -l)
check '[ "$n" = 5 ]' "cpack builds the five packages (${n})"
lint=$(lintian --tag-display-limit 0 "$build"/debs/*.deb 2>&1 || true)
errors=$(grep -c '^E:' <<<"$lint" || true)
check '[ "$errors" = 0 ]' "lintian reports no error ($(grep -c '^W:' <<<"$lint" || true) warnings)"
grep '^[EW]:' <<<"$lint" | sed 's/^/    /' || true
for p in controller agent probe tools; do
    deps=$(dpkg-deb -f "$build/debs/mrcfab-${p}_${version}_amd64.deb" Depends)
    check 'grep -q "libc6" <<<"$deps" && grep -q "mrcfab-common (= $version)" <<<"$deps"' \
        "mrcfab-$p depends on what shlibdeps found and on mrcfab-common"
done
conf=$(dpkg-deb --ctrl-tarfile "$build/debs/mrcfab-controller_${version}_amd64.deb" |
    tar -xO ./conffiles)
check '[ "$conf" = /etc/mrcfab/controller.conf ]' "the controller's config file is a conffile"

# --- install ------------------------------------------------------------------------------
# an empty /var/lib/mrcfab is nothing (a lab's leftover folder is something, and stays)
rmdir /var/lib/mrcfab 2>/dev/null || true
snapshot >"$snap/before"
apt-get install -y -qq "$(realpath "$build"/debs)"/*.deb >"$snap/apt.log" 2>&1 ||
    { cat "$snap/apt.log"; fail "apt installs the packages"; finish package; }
pass "apt installs the five packages"
uid=$(id -u mrcfab 2>/dev/null || echo none)
check '[ "$uid" != none ] && [ "$uid" -lt 1000 ]' "the mrcfab system user exists (uid $uid)"
check '[ "$(stat -c %U:%G:%a /etc/mrcfab)" = root:mrcfab:750 ]' "/etc/mrcfab is root:mrcfab 0750"
for prog in mrc-controller mrc-agent mrc-perf mrc-probe mrcctl mrc-sim mrc-decode mrc-pair; do
    out=$(/usr/bin/$prog --version 2>&1 || true)
    check 'grep -q "^$prog (mrcfab) $version (git " <<<"$out"' "/usr/bin/$prog --version: $out"
    check 'man -w "$prog" >/dev/null 2>&1' "man $prog is installed"
done
web=$(/usr/bin/mrc-controller --help | sed -n 's/.*(default \(\/usr\/share\/mrcfab\/web\)).*/\1/p')
check '[ "$web" = /usr/share/mrcfab/web ] && [ -f /usr/share/mrcfab/web/index.html ]' \
    "mrc-controller's dashboard defaults to /usr/share/mrcfab/web, which holds it"
check '[ -f /usr/share/mrcfab/topologies/lab.json ] && [ -f /usr/share/mrcfab/schemas/openapi.yaml ]' \
    "the topologies and the schemas are in /usr/share/mrcfab"
# (other mrcfab processes may run from a build tree: only the installed programs count)
started=$(for p in /proc/[0-9]*; do readlink "$p/exe" 2>/dev/null; done | grep -c '^/usr/bin/mrc' || true)
check '[ "$started" = 0 ]' "installing started no daemon"
for u in mrc-controller.service mrc-agent.service mrc-probe-node.service mrc-localize@.service; do
    out=$(systemd-analyze verify --man=no "/lib/systemd/system/$u" 2>&1 || true)
    check '[ -z "$out" ]' "systemd-analyze verify $u is clean${out:+: $out}"
    exposure=$(systemd-analyze security --offline=true --no-pager "/lib/systemd/system/$u" 2>&1 |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    check 'awk -v e="$exposure" "BEGIN {exit !(e != \"\" && e <= 2.5)}"' \
        "systemd-analyze security $u: exposure $exposure (at most 2.5)"
done
check 'bash -c ". /usr/share/bash-completion/completions/mrcctl && complete -p mrcctl" >/dev/null' \
    "mrcctl's bash completion is installed"

# --- the controller as its unit runs it: the mrcfab user, no capability, the shipped config --
# (no systemd runs here: setpriv does what the unit's User= and CapabilityBoundingSet= do, and
# the state folder is made as StateDirectory= makes it)
cp /usr/share/mrcfab/topologies/lab.json /etc/mrcfab/topology.json
printf 'tok-reader-pkgtest-00001 reader pkg\n' >/etc/mrcfab/tokens
chown mrcfab:mrcfab /etc/mrcfab/tokens
chmod 600 /etc/mrcfab/tokens
install -d -o mrcfab -g mrcfab -m 0700 /var/lib/mrcfab/controller
setpriv --reuid mrcfab --regid mrcfab --clear-groups --inh-caps=-all --bounding-set=-all \
    /usr/bin/mrc-controller --config /etc/mrcfab/controller.conf --listen '[::1]:18480' \
    >"$snap/controller.log" 2>&1 &
ctl_pid=$!
answer=
for _ in $(seq 50); do
    answer=$(curl -s -H 'Authorization: Bearer tok-reader-pkgtest-00001' \
        'http://[::1]:18480/api/v1/fabric' 2>/dev/null) && [ -n "$answer" ] && break
    sleep 0.2
done
check 'grep -q "\"hosts\"" <<<"$answer"' \
    "mrc-controller runs as mrcfab without privilege on /etc/mrcfab/controller.conf"
check '[ -f /var/lib/mrcfab/controller/mrcfab.db ] && [ "$(stat -c %U /var/lib/mrcfab/controller/mrcfab.db)" = mrcfab ]' \
    "its store is /var/lib/mrcfab/controller/mrcfab.db, the mrcfab user's"
kill -TERM "$ctl_pid" 2>/dev/null || true
wait "$ctl_pid" 2>/dev/null || true
# the operator's files are the operator's: a purge leaves them, so the test takes them away
rm -f /etc/mrcfab/topology.json /etc/mrcfab/tokens

# --- the lab on the installed programs ----------------------------------------------------
if deploy/lab/lab.sh -b /usr/bin -t /usr/share/mrcfab/topologies/lab.json -p "$lab_prefix" \
    -d "$lab_dir" up >"$snap/lab.log" 2>&1; then
    pass "lab.sh -b /usr/bin up: the fabric and the system on the installed programs"
    # the lab's controller, its CA and the admin's token and client certificate (TLS)
    eval "$(deploy/lab/lab.sh -p "$lab_prefix" -d "$lab_dir" env)"
    ctl=$MRCFAB_CONTROLLER
    export MRCFAB_TOPOLOGY=/usr/share/mrcfab/topologies/lab.json
    check '/usr/bin/mrcctl --controller "$ctl" drain p0-t1-1 --reason "package test" >/dev/null' \
        "the installed mrcctl drains a T1 at the installed controller"
    hosts=$(for h in h0 h1 h2; do deploy/lab/lab.sh -p "$lab_prefix" -d "$lab_dir" addr $h; done |
        paste -sd,)
    for h in h0 h1 h2; do
        ip netns exec "$lab_prefix-$h" /usr/bin/mrc-perf ring --hosts "$hosts" --duration 2 \
            >"$snap/ring-$h.json" 2>>"$snap/ring.log" &
    done
    ring_ok=true
    for job in $(jobs -p); do wait "$job" || ring_ok=false; done
    check '$ring_ok' "a ring all-reduce over 3 hosts on the installed agents, every element right"
    check '/usr/bin/mrcctl --controller "$ctl" undrain p0-t1-1 >/dev/null' "and the undrain"
    check '/usr/bin/mrcctl --controller "$ctl" health switch p0-t1-0 >/dev/null' \
        "the installed controller answers health"
    deploy/lab/lab.sh -b /usr/bin -p "$lab_prefix" -d "$lab_dir" down >/dev/null 2>&1 || true
else
    sed 's/^/    /' "$snap/lab.log" | tail -20
    fail "lab.sh -b /usr/bin up"
fi

# --- upgrade to a second build of a higher version ----------------------------------------
echo "# edited by the package test" >>/etc/mrcfab/controller.conf
build_debs "$build" "$version+1"
apt-get install -y -qq "$(realpath "$build"/debs)"/*.deb >"$snap/apt2.log" 2>&1 ||
    { cat "$snap/apt2.log"; fail "apt upgrades the packages"; }
now=$(dpkg-query -W -f='${Version}\n' "${pkgs[@]}" | sort -u)
check '[ "$now" = "$version+1" ]' "every package upgraded to $version+1"
check 'grep -q "edited by the package test" /etc/mrcfab/controller.conf' \
    "the upgrade keeps the operator's edit of a conffile"
check '[ "$(id -u mrcfab)" = "$uid" ]' "the upgrade keeps the system user"

# --- purge --------------------------------------------------------------------------------
apt-get purge -y -qq "${pkgs[@]}" >"$snap/purge.log" 2>&1 || { cat "$snap/purge.log"; fail "apt purges"; }
snapshot >"$snap/after"
left=$(diff "$snap/before" "$snap/after" || true)
check '[ -z "$left" ]' "the purge leaves nothing behind${left:+: $(echo $left)}"
finish package
