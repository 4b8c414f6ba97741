#!/usr/bin/env bash
# Fuzzes toolhost's OTC endpoints with schemathesis against the OTC 1.0 OpenAPI vendored in
# tests/vendor/otc-1.0 (MIT, its license beside it)
# (corrected as otc_openapi.py explains), bounded in cases and time, on 127.0.0.1 only.
# Fails on any server error, wrong content type or response that breaks the response schemas.
# Usage: otc_schemathesis.sh TOOLHOST_BINARY PEER_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$1"
peer="$2"
spec_in="$root/tests/vendor/otc-1.0/openapi.json"
source "$here/lib.sh"
start_server "$bin" "$peer" --catalog "$root/crates/server/tests/fixtures/otc-spec"
work="$(mktemp -d)"
"$peer/venv/bin/python" "$here/otc_openapi.py" "$spec_in" "$work/openapi.json"
cd "$work"
run_schemathesis "$peer" "$work/openapi.json" "http://127.0.0.1:$PORT/otc" 200
