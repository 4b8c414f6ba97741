#!/usr/bin/env bash
# Import fidelity beside FastMCP (issue #32): `toolhost import openapi` and FastMCP's
# `FastMCP.from_openapi` on the same OpenAPI descriptions, both listed over MCP, counting the
# inputs, those with a real description, the enum inputs spelled as the API spells them, the
# inputs with a `default`, the optional array/object body fields kept and the required JSON
# body fields kept (issues #32 and #38; bench/import_fidelity.py says how each is counted).
# Prints a Markdown table for BENCHMARKS.md. Not part of scripts/test.
#
#   bench/import_fidelity.sh
#
# The descriptions are the ones the test peers vendor (tests/peer/setup.sh: GitHub's REST
# description, ReadMe's OpenAPI examples) and the repository's fixtures; nothing is fetched
# but packages: FastMCP 4.0.11 into the venv bench/run.sh uses ($TOOLHOST_BENCH_CACHE/bench).
# Settings: TOOLHOST_BIN (a built toolhost; default: build the release one).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cache="${TOOLHOST_BENCH_CACHE:-$HOME/.cache/toolhost}"
peer="${TOOLHOST_PEER_DIR:-$HOME/.cache/toolhost/peer}"
[ -d "$peer/specs/github" ] || tests/peer/setup.sh "$peer" >&2

# The same FastMCP, in the same venv, as bench/run.sh.
fastmcp_want="fastmcp==4.0.11"
venv="$cache/bench/venv-fastmcp"
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$fastmcp_want" ]; then
  echo "== installing $fastmcp_want into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$fastmcp_want"
  echo "$fastmcp_want" >"$venv/.installed"
fi

binary="${TOOLHOST_BIN:-}"
if [ -z "$binary" ]; then
  cargo build --release --locked -p toolhost >&2
  binary="$target/release/toolhost"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
readme="$peer/specs/readme/3.0/json"
"$venv/bin/python" bench/import_fidelity.py "$binary" "$work" \
  "GitHub REST (api.github.com, @octokit/openapi 23.0.2)=$peer/specs/github/generated/api.github.com.json" \
  "Swagger Petstore 3.0 (@readme/oas-examples)=$readme/petstore.json" \
  "Enums (@readme/oas-examples schema-enums)=$readme/schema-enums.json" \
  "Parameters (@readme/oas-examples parameters-style)=$readme/parameters-style.json" \
  "Request bodies (@readme/oas-examples request-examples)=$readme/request-examples.json" \
  "Pet shop (crates/toolhost/tests/fixtures/openapi/pets.yaml)=crates/toolhost/tests/fixtures/openapi/pets.yaml"
