#!/usr/bin/env bash
# Checks toolhost's own OpenAPI document (GET /openapi.json, issue #13 §3) with tools we did not
# write: openapi-spec-validator says it is a valid OpenAPI 3.1 document, and schemathesis, led
# by it, calls every route it describes (each tool's WoA invocation, each version's N-ACT
# invocation, OTC's call, the listings) with generated and edge-case bodies, bounded in cases
# and time, on 127.0.0.1 only. Fails on any server error, wrong content type or answer outside
# the document's schemas.
# Usage: openapi_out.sh TOOLHOST_BINARY PEER_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
peer="$2"
source "$here/lib.sh"
start_server "$bin" "$peer"
work="$(mktemp -d)"
"$peer/venv/bin/python" -c "import urllib.request, sys; sys.stdout.buffer.write(urllib.request.urlopen('http://127.0.0.1:$PORT/openapi.json', timeout=5).read())" > "$work/openapi.json"
"$peer/venv/bin/openapi-spec-validator" "$work/openapi.json"
cd "$work"
run_schemathesis "$peer" "$work/openapi.json" "http://127.0.0.1:$PORT" 60
