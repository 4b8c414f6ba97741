# Shared by the peer scripts: start `toolhost serve` on a free loopback port and stop it on exit.
# After start_server BIN PEER ARGS..., $PORT is the port and $SERVER_PID the process.
start_server() {
  local bin="$1" peer="$2"
  shift 2
  PORT="$("$peer/venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$bin" serve --listen "127.0.0.1:$PORT" --log warn "$@" &
  SERVER_PID=$!
  trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    if "$peer/venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/otc/health', timeout=1)" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "toolhost did not start on port $PORT" >&2
  return 1
}

# Runs schemathesis with our checks on SPEC against BASE_URL, CASES examples per operation,
# seeded and bounded in time, in the current directory.
# Fails on any server error, wrong content type or answer outside the response schemas.
run_schemathesis() {
  local peer="$1" spec="$2" url="$3" cases="$4"
  "$peer/venv/bin/schemathesis" run "$spec" \
    --url "$url" \
    --checks not_a_server_error,content_type_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing \
    -n "$cases" --seed 1 --max-response-time 5 --request-timeout 10 --no-color
}
