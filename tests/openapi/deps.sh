#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the OpenAPI checks' npm packages (package-lock.json) once, for check.sh and for
# tests/controller/live.sh's conformance checks (conform.mjs), whichever runs first.
#
# Usage: tests/openapi/deps.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The lock's hash, so a changed lock reinstalls; flock, so two tests never install at once.
stamp=$here/node_modules/.mrcfab-lock-$(sha256sum "$here/package-lock.json" | cut -c1-16)
[[ -e $stamp ]] && exit 0
exec 9>"$here/.deps.lock"
flock 9
[[ -e $stamp ]] && exit 0
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
touch "$stamp"
