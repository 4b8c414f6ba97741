#!/usr/bin/env bash
# Fuzzes toolhost's OTC endpoints with schemathesis against the OTC 1.0 OpenAPI in shared/specs
# (corrected as otc_openapi.py explains), bounded in cases and time, on 127.0.0.1 only.
# Fails on any server error, wrong content type or response that breaks the response schemas.
# Usage: otc_schemathesis.sh TOOLHOST_BINARY PEER_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$1"
peer="$2"
spec_in="$root/../shared/specs/otc-1.0/openapi.json"
[ -f "$spec_in" ] || spec_in="$root/shared/specs/otc-1.0/openapi.json"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

"$peer/venv/bin/python" "$here/otc_openapi.py" "$spec_in" "$work/openapi.json"
port="$("$peer/venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" serve --listen "127.0.0.1:$port" --catalog "$root/crates/server/tests/fixtures/otc-spec" --log warn &
server=$!
for _ in $(seq 100); do
  "$peer/venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/otc/health', timeout=1)" 2>/dev/null && break
  sleep 0.1
done
cd "$work"
"$peer/venv/bin/schemathesis" run "$work/openapi.json" \
  --url "http://127.0.0.1:$port/otc" \
  --checks not_a_server_error,content_type_conformance,response_schema_conformance \
  --phases examples,coverage,fuzzing \
  -n 200 --seed 1 --max-response-time 5 --request-timeout 10 --no-color
