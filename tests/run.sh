#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every test: the build, the Check suites, CLI and kernel integration tests (as root), the
# same suites under ASan+UBSan, the schema checks and a bounded libFuzzer run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=$(nproc)
fuzz_seconds=${MRCFAB_FUZZ_SECONDS:-20}

step() { printf '\n=== %s\n' "$*"; }

step "dependencies"
deploy/install-deps.sh

step "build"
cmake -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"

step "tests"
ctest --test-dir build --output-on-failure -j"$jobs"

step "tests under AddressSanitizer and UndefinedBehaviorSanitizer"
cmake -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMRCFAB_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
# the browser tests' time targets mean nothing in a Debug sanitizer build: the controller they
# drive is under the sanitizers in the controller.* entries
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$jobs" -L 'unit|cli' -E '^web\.'

step "topology and scenario schemas"
tests/schema/check-topologies.sh build
tests/schema/check-scenarios.sh

step "mrc-sim summary schema"
tests/schema/check-sim-summary.sh

step "the controller's OpenAPI document"
tests/openapi/check.sh

step "the Debian packages: build, lintian, install, the lab on the installed programs, upgrade, purge"
tests/package/run.sh build-pkg

step "fuzzing for ${fuzz_seconds}s per target"
CC=clang cmake -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMRCFAB_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$jobs"
tests/fuzz/run.sh build-fuzz "$fuzz_seconds"

step "all tests passed"
