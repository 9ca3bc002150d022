#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The SONiC and FRR renders as their consumers read them, on every test topology: each
# STATIC_ROUTE entry valid against SONiC's own YANG model (yanglint on tests/cli/sonic) and with
# advertise "false" (bgpcfgd redistributes into BGP any static route without it); each FRR file's
# locator and SID lines in the form FRR 10.4 prints them in its running config, so frr-reload.py
# has nothing to delete and add back, and IPv6 forwarding turned on.
# check (tests/check.sh) evaluates its first argument later: single quotes on purpose
# shellcheck disable=SC2016,SC2034
set -euo pipefail

bin=${1:?usage: render_consumers.sh BINDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
yang=$here/sonic/sonic-static-route.yang
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check.sh
source "$root/tests/check.sh"
mrcctl() { "$bin/mrcctl" "$@"; }
if ! command -v yanglint >/dev/null 2>&1; then
    echo "render_consumers: no yanglint (Debian's libyang2-tools; deploy/install-deps.sh installs it)"
    exit 1
fi

topos=("$root/deploy/topologies/lab.json" "$root/tests/schema/good/parametric-overrides.json"
    "$root/tests/schema/good/explicit-missing.json" "$root/tests/schema/good/explicit-small.json"
    "$here/small.json" "$root/tests/unit/fabric/data/small.json")

# to_yang SONIC_JSON DIR: the STATIC_ROUTE table of each switch of a render (one switch, or an
# object keyed by switch) as the YANG instance SONiC maps it to, one file per switch in DIR: a
# 'VRF|PREFIX' key is an entry of STATIC_ROUTE_LIST (key "vrf_name prefix") with its fields.
# Prints the switches and entries; exits 1 naming an entry that lacks advertise "false" (the
# model's default is "false" too, so yanglint alone would pass it, but bgpcfgd reads no default)
to_yang() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
tables = {"one": doc} if "STATIC_ROUTE" in doc else doc
entries = 0
for name, t in tables.items():
    routes = []
    for key, fields in t["STATIC_ROUTE"].items():
        vrf, sep, prefix = key.partition("|")
        if not sep:
            sys.exit(f"{name}: STATIC_ROUTE key {key!r} is not VRF|PREFIX")
        if fields.get("advertise") != "false":
            sys.exit(f"{name}: STATIC_ROUTE {key!r} lacks \"advertise\": \"false\": {fields}")
        routes.append({"vrf_name": vrf, "prefix": prefix, **fields})
    entries += len(routes)
    with open(f"{sys.argv[2]}/{name}.json", "w") as f:
        json.dump({"sonic-static-route:sonic-static-route":
                   {"STATIC_ROUTE": {"STATIC_ROUTE_LIST": routes}}}, f, indent=1)
print(len(tables), entries)
EOF
}

# yang_valid DIR: every file of DIR is valid config data of sonic-static-route
yang_valid() {
    local f
    for f in "$1"/*.json; do
        if ! yanglint -t config "$yang" "$f" >"$tmp/yanglint.log" 2>&1; then
            echo "$(basename "$f"): $(head -c 400 "$tmp/yanglint.log")"
            return 1
        fi
    done
}

# 1. SONiC: every STATIC_ROUTE entry of every switch of every topology
i=0
for t in "${topos[@]}"; do
    i=$((i + 1))
    name=${t#"$root"/}
    mrcctl -t "$t" routes render --all --format sonic >"$tmp/sonic$i.json"
    mkdir "$tmp/yang$i"
    if ! counts=$(to_yang "$tmp/sonic$i.json" "$tmp/yang$i" 2>&1); then
        fail "$name: $counts"
    elif ! out=$(yang_valid "$tmp/yang$i"); then
        fail "$name: a STATIC_ROUTE table is not valid against sonic-static-route.yang: $out"
    else
        pass "$name: ${counts#* } STATIC_ROUTE entries of ${counts% *} switches valid against sonic-static-route.yang, each with advertise \"false\""
    fi
done
# a single switch's render is one table, not an object keyed by switch
mrcctl -t "${topos[0]}" routes render --switch p0-t0-0 --format sonic >"$tmp/one.json"
mkdir "$tmp/yang-one"
check 'to_yang "$tmp/one.json" "$tmp/yang-one" >/dev/null && yang_valid "$tmp/yang-one" >/dev/null' \
    "one switch's SONiC render: its STATIC_ROUTE table is valid against sonic-static-route.yang"
# the check can fail: a value out of the model's pattern, a key that is not VRF|PREFIX, a
# field the model has not
mkdir "$tmp/bad"
sed 's/"advertise": "false"/"advertise": "False"/' "$tmp/yang-one/one.json" >"$tmp/bad/a.json"
check '! yang_valid "$tmp/bad" >/dev/null' "yanglint refuses advertise \"False\" (the model's pattern)"
rm "$tmp/bad"/*
sed 's/"vrf_name": "default"/"vrf_name": "red"/' "$tmp/yang-one/one.json" >"$tmp/bad/v.json"
check '! yang_valid "$tmp/bad" >/dev/null' "yanglint refuses a VRF the model does not name"
rm "$tmp/bad"/*
sed 's/"advertise": "false"/"advertize": "false"/' "$tmp/yang-one/one.json" >"$tmp/bad/f.json"
check '! yang_valid "$tmp/bad" >/dev/null' "yanglint refuses a field the model has not"
sed 's/, "advertise": "false"}/}/' "$tmp/one.json" >"$tmp/no-adv.json"
mkdir "$tmp/yang-no-adv"
check '! to_yang "$tmp/no-adv.json" "$tmp/yang-no-adv" >/dev/null 2>&1' \
    "an entry without advertise \"false\" is refused"

# 2. FRR: per switch, the locator's prefix line exactly as FRR 10.4's zebra prints it
# (zebra_sr_config: block-len and node-len differ from FRR's defaults, func-bits 16 is the
# default and is not printed), the static SID as staticd prints it, and ipv6 forwarding
i=0
for t in "${topos[@]}"; do
    i=$((i + 1))
    name=${t#"$root"/}
    mrcctl -t "$t" routes render --all --format frr --out "$tmp/frr$i" >/dev/null
    mrcctl -t "$t" routes render --all --format json >"$tmp/json$i.json"
    bad=$(python3 - "$tmp/json$i.json" "$tmp/frr$i" <<'EOF'
import json, sys
for sw in json.load(open(sys.argv[1])):
    un = sw["routes"][0]["prefix"]
    lines = open(f"{sys.argv[2]}/{sw['switch']}.frr.conf").read().split("\n")
    want = [f"    prefix {un} block-len 32 node-len 16",
            f"   sid {un} locator MRCFAB behavior uN", "ipv6 forwarding"]
    prefixes = [l for l in lines if l.startswith("    prefix ")]
    missing = [w for w in want if w not in lines]
    if missing or len(prefixes) != 1:
        print(f"{sw['switch']}: no line {missing}" if missing else
              f"{sw['switch']}: {len(prefixes)} prefix lines")
        break
EOF
    )
    n=$(find "$tmp/frr$i" -name '*.frr.conf' | wc -l)
    if [ -n "$bad" ] || [ "$n" -eq 0 ]; then
        fail "$name: FRR render not in FRR 10.4's own form: $bad"
    else
        pass "$name: each of $n FRR renders has the locator prefix line, static SID and ipv6 forwarding in FRR 10.4's own form"
    fi
done

finish render_consumers
