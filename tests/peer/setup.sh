#!/usr/bin/env bash
# Installs the external test tools (not ours) into PEER_DIR once; later runs reuse them.
# Usage: setup.sh PEER_DIR
set -euo pipefail
peer="$1"
mkdir -p "$peer"
want="schemathesis==4.32.5"
if [ "$(cat "$peer/.python-installed" 2>/dev/null)" != "$want" ]; then
  echo "installing Python test peers into $peer: $want"
  python3 -m venv "$peer/venv"
  "$peer/venv/bin/pip" install --quiet --disable-pip-version-check $want
  echo "$want" > "$peer/.python-installed"
fi
