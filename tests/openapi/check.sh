#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# schemas/openapi.yaml is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator,
# pinned in package-lock.json), and a broken copy of it is refused (the check can fail).
# Whether it matches the code is tests/controller/live.sh's to check.
#
# Usage: tests/openapi/check.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
doc=$here/../../schemas/openapi.yaml
"$here/deps.sh"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
failures=0
if "$here/node_modules/.bin/validate-api" "$doc" >"$tmp"; then
    echo "PASS schemas/openapi.yaml is valid OpenAPI 3.1"
else
    echo "FAIL schemas/openapi.yaml: $(cat "$tmp")"
    failures=1
fi
sed 's/^openapi: 3.1.0/openapi: 3.1.0\nbogus: 1/' "$doc" >"$tmp.yaml"
if "$here/node_modules/.bin/validate-api" "$tmp.yaml" >/dev/null; then
    echo "FAIL the validator took a document with an unknown top-level key"
    failures=1
else
    echo "PASS the validator refuses a broken copy"
fi
rm -f "$tmp.yaml"
exit "$failures"
