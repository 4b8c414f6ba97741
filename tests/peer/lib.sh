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
