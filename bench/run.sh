#!/usr/bin/env bash
# The benchmark: toolhost side by side with what it is measured against, in one run on one
# machine, printed as a table of ratios and written to bench/results/latest.md (BENCHMARKS.md
# says what is measured and why). Not part of scripts/test: it takes minutes.
#
#   bench/run.sh
#
# 1. Builds toolhost and the baseline servers (bench/baseline) in release mode.
# 2. Installs what it needs once: wrk (apt-get, when root) or else oha (cargo install, cached in
#    $TOOLHOST_BENCH_CACHE/bin), and FastMCP into a venv in $TOOLHOST_BENCH_CACHE/bench.
# 3. Runs the criterion micro-benchmarks in quick mode.
# 4. Starts every server on 127.0.0.1 and loads each pair back to back, bounded in time; reads
#    the peak RSS of each server from /proc; stops everything it started.
#
# Settings (environment): BENCH_DURATION seconds per measured run (5), BENCH_WARMUP (1),
# BENCH_CONNECTIONS (16; the scaling rows add 1 and 64), BENCH_THREADS load-generator threads (1), BENCH_ROUNDS (2),
# BENCH_LOAD=wrk|oha, BENCH_SKIP_MICRO=1, TOOLHOST_BENCH_CACHE (default ~/.cache/toolhost).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cache="${TOOLHOST_BENCH_CACHE:-$HOME/.cache/toolhost}"
duration="${BENCH_DURATION:-5}"
warmup="${BENCH_WARMUP:-1}"
connections="${BENCH_CONNECTIONS:-16}"
threads="${BENCH_THREADS:-1}"
rounds="${BENCH_ROUNDS:-2}"
load="${BENCH_LOAD:-}"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
started="$(date +%s)"
say() { echo "== $*" >&2; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
: >"$work/runs.jsonl"
: >"$work/skipped.tsv"
skip() { printf '%s\t%s\n' "$1" "$2" >>"$work/skipped.tsv"; say "skipping $1: $2"; }

# --- 1. build ---------------------------------------------------------------------------------
say "building toolhost and the baselines (release)"
cargo build --release --locked -p toolhost -p toolhost-bench
toolhost="$target/release/toolhost"
baseline="$target/release/toolhost-bench"

# --- 2. tools ---------------------------------------------------------------------------------
if [ -z "$load" ]; then
  if command -v wrk >/dev/null; then
    load=wrk
  elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing wrk (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get install -y -qq wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }; then
      load=wrk
    else
      say "wrk did not install; using oha"
      load=oha
    fi
  else
    load=oha
  fi
fi
if [ "$load" = oha ]; then
  oha="$cache/bin/oha"
  if ! [ -x "$oha" ]; then
    say "installing oha 1.16.0 into $cache/bin (about 7 minutes on 2 cores, once)"
    cargo install oha --locked --version 1.16.0 --root "$cache"
  fi
  load_version="oha $("$oha" --version | awk '{print $2}')"
else
  load_version="$({ wrk --version 2>&1 || true; } | head -1 | awk '{print "wrk " $2}')"
fi

# FastMCP 4.0.11: the newest whose dependencies all install from the registry this was written
# against (4.1.x wants a certifi newer than it had).
fastmcp_want="fastmcp==4.0.11"
venv="$cache/bench/venv-fastmcp"
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$fastmcp_want" ]; then
  say "installing $fastmcp_want into $venv"
  if python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "$fastmcp_want"; then
    echo "$fastmcp_want" >"$venv/.installed"
  fi
fi

# --- 3. micro ---------------------------------------------------------------------------------
micro_since="$(date +%s)"
micro() { # NAME CARGO-BENCH-ARGS...: runs one criterion bench target in quick mode
  local name="$1"
  shift
  say "criterion: $name"
  if cargo bench --locked -q "$@" -- --warm-up-time 1 --measurement-time 3 >"$work/micro-$name.log" 2>&1; then
    grep -B1 'time:' "$work/micro-$name.log" | grep -v -e '^Benchmarking' -e '^--' >&2 || true
  else
    tail -20 "$work/micro-$name.log" >&2
    skip "micro/$name" "cargo bench failed"
    micro_failed="$micro_failed $name"
  fi
}
micro_failed=""
if [ "${BENCH_SKIP_MICRO:-0}" != 1 ]; then
  micro core -p toolhost-core --bench engine
  micro server -p toolhost-server --bench listing
  micro sculpt -p toolhost-sculpt --bench sculpt
  micro mapping -p toolhost-sculpt --bench mapping
fi

# --- 4. load ----------------------------------------------------------------------------------
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { # PORT NAME
  for _ in $(seq 300); do
    if (: >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not start on port $1; its log:" >&2
  cat "$work/$2.log" >&2
  return 1
}
declare -A pid_of port_of
start() { # NAME COMMAND... (the command listens on ${port_of[NAME]})
  local name="$1"
  shift
  "$@" >"$work/$name.log" 2>&1 &
  pids+=("$!")
  pid_of[$name]=$!
  wait_port "${port_of[$name]}" "$name"
}

for name in toolhost bare rmcp upstream sculpted fastmcp federated; do port_of[$name]="$(free_port)"; done
start toolhost "$toolhost" serve --listen "127.0.0.1:${port_of[toolhost]}" --log warn
start bare "$baseline" bare "127.0.0.1:${port_of[bare]}"
start rmcp "$baseline" rmcp "127.0.0.1:${port_of[rmcp]}"
start upstream "$baseline" upstream "127.0.0.1:${port_of[upstream]}"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ]; then
  start fastmcp "$venv/bin/python" bench/fastmcp_server.py "${port_of[fastmcp]}"
else
  skip "mcp/fastmcp" "FastMCP did not install"
fi

# The sculpted tool: one GET to the upstream, its `sum` as the output.
mkdir -p "$work/sculpt"
cat >"$work/sculpt/bench.yaml" <<EOF
toolkits:
  - name: Bench
    description: The sculpted tool of bench/run.sh.
    tools:
      - name: add_numbers_upstream
        description: Add two numbers by asking the upstream.
        versions:
          - version: 1.0.0
            inputs:
              - { name: a, type: number, description: The first number to add. }
              - { name: b, type: number, description: The second number to add. }
            outputs:
              - { name: sum, type: number, description: The sum a + b. }
            backend:
              kind: http
              base_url: http://127.0.0.1:${port_of[upstream]}
              steps:
                - name: add
                  path: /add
                  query: { a: "{{input.a}}", b: "{{input.b}}" }
              outputs:
                sum: add.body.sum
      - name: add_numbers_upstream_slow
        description: Add two numbers by asking an upstream that takes 2 ms to answer.
        versions:
          - version: 1.0.0
            inputs:
              - { name: a, type: number, description: The first number to add. }
              - { name: b, type: number, description: The second number to add. }
            outputs:
              - { name: sum, type: number, description: The sum a + b. }
            backend:
              kind: http
              base_url: http://127.0.0.1:${port_of[upstream]}
              steps:
                - name: add
                  path: /add
                  query: { a: "{{input.a}}", b: "{{input.b}}", delay_us: 2000 }
              outputs:
                sum: add.body.sum
EOF
if "$toolhost" check "$work/sculpt" >"$work/sculpt-check.log" 2>&1; then
  start sculpted "$toolhost" serve --catalog "$work/sculpt" --reload-interval-ms 0 \
    --listen "127.0.0.1:${port_of[sculpted]}" --log warn
else
  skip "sculpt" "this toolhost build does not serve the catalog's \`kind: http\` tool ($(grep -m1 -i error "$work/sculpt-check.log" | cut -c1-120))"
fi

# The federated tool: the minimal rmcp server's `add_numbers`, imported pinned (issue #14).
if "$toolhost" import tools "http://127.0.0.1:${port_of[rmcp]}/mcp" --toolkit Federated \
  --out "$work/federated" >"$work/federated-import.log" 2>&1; then
  start federated "$toolhost" serve --catalog "$work/federated" --reload-interval-ms 0 \
    --listen "127.0.0.1:${port_of[federated]}" --log warn
else
  skip "federated" "the import from the rmcp server failed ($(tail -1 "$work/federated-import.log" | cut -c1-120))"
fi

json='content-type: application/json'
mcp_accept='accept: application/json, text/event-stream'
mcp_version='mcp-protocol-version: 2025-06-18'
nact_body='{"input_parameters":[{"name":"a","value":10},{"name":"b","value":5}]}'
otc_body='{"$schema":"otc://1.0","request":{"tool_id":"Calculator.add_numbers@1","input":{"a":10,"b":5}}}'
woa_body='{"agent":"add_numbers","operation":"default","input":{"a":10,"b":5}}'
mcp_body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_numbers","arguments":{"a":10,"b":5}}}'
url() { echo "http://127.0.0.1:${port_of[$1]}$2"; }

# One side of a comparison per line: group|side|server|method|path|body|expect|headers...
# (`expect` is checked in one probe request before the load, so a misconfigured side fails
# loudly instead of measuring fast errors.)
sides=(
  "nact|toolhost|toolhost|POST|/nact/tools/add_numbers:invoke|$nact_body|\"sum\"|$json"
  "nact|bare|bare|POST|/nact/tools/add_numbers:invoke|$nact_body|\"sum\"|$json"
  "otc|toolhost|toolhost|POST|/otc/tools/call|$otc_body|\"value\":15|$json"
  "otc|bare|bare|POST|/otc/tools/call|$otc_body|\"value\":15|$json"
  "woa|toolhost|toolhost|POST|/woa/agents/add_numbers/invoke|$woa_body|\"sum\":15|$json"
  "woa|bare|bare|POST|/woa/agents/add_numbers/invoke|$woa_body|\"sum\":15|$json"
  "mcp|toolhost|toolhost|POST|/mcp|$mcp_body|\"structuredContent\"|$json|$mcp_accept|$mcp_version"
  "mcp|bare|bare|POST|/mcp|$mcp_body|\"structuredContent\"|$json|$mcp_accept|$mcp_version"
  "mcp|rmcp|rmcp|POST|/mcp|$mcp_body|\"structuredContent\"|$json|$mcp_accept|$mcp_version"
  "mcp|fastmcp|fastmcp|POST|/mcp|$mcp_body|\"structuredContent\"|$json|$mcp_accept|$mcp_version"
  "sculpt|toolhost|sculpted|POST|/nact/tools/add_numbers_upstream:invoke|$nact_body|\"sum\"|$json"
  "sculpt|direct|upstream|GET|/add?a=10&b=5||\"sum\":15"
  "sculpt_slow|toolhost|sculpted|POST|/nact/tools/add_numbers_upstream_slow:invoke|$nact_body|\"sum\"|$json"
  "sculpt_slow|direct|upstream|GET|/add?a=10&b=5&delay_us=2000||\"sum\":15"
  "sculpt1|toolhost|sculpted|POST|/nact/tools/add_numbers_upstream:invoke|$nact_body|\"sum\"|$json"
  "sculpt1|direct|upstream|GET|/add?a=10&b=5||\"sum\":15"
  "federated|toolhost|federated|POST|/mcp|$mcp_body|\"structuredContent\"|$json|$mcp_accept|$mcp_version"
  "federated|direct|rmcp|POST|/mcp|$mcp_body|\"structuredContent\"|$json|$mcp_accept|$mcp_version"
)

# Connection scaling (issue #18): the N-ACT, MCP and sculpted comparisons again at 1 and 64
# connections (16 is the table above), as groups named GROUP@CONNECTIONS.
scaled=(nact mcp sculpt)
for conns in 1 64; do
  for spec in "${sides[@]}"; do
    group="${spec%%|*}"
    [ "$group/$conns" != sculpt/1 ] || continue # the sculpt1 group is this one
    rest="${spec#*|}"
    side="${rest%%|*}"
    [[ " ${scaled[*]} " == *" $group "* ]] || continue
    [ "$group/$side" != mcp/bare ] && [ "$group/$side" != mcp/fastmcp ] || continue
    sides+=("$group@$conns|$rest")
  done
done

clock_ticks="$(getconf CLK_TCK)"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system time of a process, in ticks

# Runs one side: probe once, warm up, measure; appends one JSON line to runs.jsonl.
measure() { # ROUND SPEC
  local round="$1" group side server method path body expect
  local -a fields headers=()
  IFS='|' read -r -a fields <<<"$2"
  group="${fields[0]}" side="${fields[1]}" server="${fields[2]}" method="${fields[3]}"
  path="${fields[4]}" body="${fields[5]}" expect="${fields[6]}"
  for header in "${fields[@]:7}"; do headers+=(-H "$header"); done
  [ -n "${pid_of[$server]:-}" ] || return 0
  local target_url conns="$connections" out
  target_url="$(url "$server" "$path")"
  [ "$group" = sculpt1 ] && conns=1
  case "$group" in *@*) conns="${group##*@}" ;; esac
  if [ "$round" = 1 ]; then
    python3 bench/bench.py probe "$method" "$target_url" "$body" "$expect" "${fields[@]:7}"
  fi
  local pid="${pid_of[$server]}" ticks_before ticks_after
  if [ "$load" = wrk ]; then
    local -a args=(-t"$threads" -c"$conns" --timeout 5s "${headers[@]}" -s bench/wrk.lua "$target_url")
    [ "$threads" -le "$conns" ] || args[0]=-t"$conns"
    BENCH_METHOD="$method" BENCH_BODY="$body" wrk -d"${warmup}s" "${args[@]}" >/dev/null
    ticks_before="$(cpu_ticks "$pid")"
    out="$(BENCH_METHOD="$method" BENCH_BODY="$body" wrk -d"${duration}s" "${args[@]}" | sed -n 's/^BENCH_JSON //p')"
  else
    local -a args=(--no-tui --output-format json -c"$conns" -m "$method" "${headers[@]}")
    [ -z "$body" ] || args+=(-d "$body")
    "$oha" -z "${warmup}s" "${args[@]}" "$target_url" >/dev/null
    ticks_before="$(cpu_ticks "$pid")"
    out="$("$oha" -z "${duration}s" "${args[@]}" "$target_url" | python3 bench/bench.py oha | sed -n 's/^BENCH_JSON //p')"
  fi
  ticks_after="$(cpu_ticks "$pid")"
  [ -n "$out" ] || { echo "no result from $load for $group/$side" >&2; return 1; }
  # The server's CPU time (user + system, all threads) over the measured run, per request.
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(group=sys.argv[2], side=sys.argv[3], round=int(sys.argv[4]), cpu_us=(int(sys.argv[6])-int(sys.argv[5]))*1e6/int(sys.argv[7])/max(r["requests"],1)); print(json.dumps(r))' \
    "$out" "$group" "$side" "$round" "$ticks_before" "$ticks_after" "$clock_ticks" >>"$work/runs.jsonl"
  say "round $round $group/$side: $out"
}

groups=(nact otc woa mcp sculpt sculpt_slow sculpt1 federated nact@1 nact@64 mcp@1 mcp@64 sculpt@64)
for round in $(seq "$rounds"); do
  for group in "${groups[@]}"; do
    group_sides=()
    for spec in "${sides[@]}"; do [ "${spec%%|*}" = "$group" ] && group_sides+=("$spec"); done
    # Alternate the order by round, so drift during a group does not favour one side.
    if [ $((round % 2)) = 0 ]; then
      reversed=()
      for ((i = ${#group_sides[@]} - 1; i >= 0; i--)); do reversed+=("${group_sides[$i]}"); done
      group_sides=("${reversed[@]}")
    fi
    for spec in "${group_sides[@]}"; do measure "$round" "$spec"; done
  done
done

# Peak resident memory of each server, after all of its load.
{
  echo "{"
  first=1
  for name in toolhost sculpted federated bare rmcp upstream fastmcp; do
    pid="${pid_of[$name]:-}"
    [ -n "$pid" ] || continue
    kb="$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    [ -n "$kb" ] || continue
    label="$name"
    case "$name" in
      sculpted) label="toolhost, sculpted-tool catalog" ;;
      federated) label="toolhost, federated-tool catalog" ;;
      bare) label="bare axum baseline" ;;
      rmcp) label="minimal rmcp server" ;;
      upstream) label="upstream (axum)" ;;
      fastmcp) label="FastMCP (Python)" ;;
    esac
    [ "$first" = 1 ] || echo ","
    first=0
    printf '"%s": %s' "$label" "$kb"
  done
  echo "}"
} >"$work/rss.json"

mkdir -p bench/results
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "$(git status --porcelain 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
BENCH_LOAD_BEFORE="$load_before" BENCH_RUSTC="$(rustc --version)" BENCH_COMMIT="$commit" \
  BENCH_LOAD_TOOL="$load_version" BENCH_CONNECTIONS="$connections" BENCH_DURATION="$duration" \
  BENCH_WARMUP="$warmup" BENCH_ROUNDS="$rounds" \
  python3 bench/bench.py table "$work/runs.jsonl" "$work/rss.json" "$target/criterion" "$micro_since" \
  "$work/skipped.tsv" >bench/results/latest.md
cat bench/results/latest.md
say "done in $(($(date +%s) - started)) s; written to bench/results/latest.md"
# A broken micro-benchmark is a failed run, not a missing row (scripts/test also runs each once).
if [ -n "$micro_failed" ]; then
  say "FAILED micro-benchmarks:$micro_failed (their logs are above)"
  exit 1
fi
