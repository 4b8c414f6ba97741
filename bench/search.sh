#!/usr/bin/env bash
# Search quality beside FastMCP (issue #42.4): for each query set of bench/search/, the catalog
# `toolhost import openapi` writes from its description is served by toolhost; toolhost's own
# ranking is measured through N-ACT's `?q=` (`toolhost eval search`), and FastMCP 4.0.11's BM25
# search transform's index (`_BM25Index` over `_extract_searchable_text`, what its
# `search_tools` ranks by) is built on the same tools as toolhost's MCP `tools/list` gives them,
# and asked the same queries, in the same run. Prints a Markdown table for BENCHMARKS.md.
# Not part of scripts/test.
#
#   bench/search.sh
#
# Nothing is fetched but packages: FastMCP into the venv bench/run.sh uses; GitHub's description
# from the test peers (tests/peer/setup.sh). Settings: TOOLHOST_BIN (a built toolhost; default:
# build the release one).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cache="${TOOLHOST_BENCH_CACHE:-$HOME/.cache/toolhost}"
peer="${TOOLHOST_PEER_DIR:-$HOME/.cache/toolhost/peer}"
[ -d "$peer/specs/github" ] || tests/peer/setup.sh "$peer" >&2

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
"$venv/bin/python" bench/search_compare.py "$binary" "$work" \
  "GitHub REST (1,223 tools)=$peer/specs/github/generated/api.github.com.json=bench/search/github/queries.jsonl" \
  "Slack Web API (174 tools)=bench/search/slack/openapi.json=bench/search/slack/queries.jsonl" \
  "Discord HTTP API (239 tools)=bench/search/discord/openapi.json=bench/search/discord/queries.jsonl"
