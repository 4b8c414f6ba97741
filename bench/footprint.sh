#!/usr/bin/env bash
# The release binary's footprint (issue #18): its size, the time from start to answering
# /readyz, and peak RSS, with the bundled catalog and with a generated 10,000-tool catalog (50
# toolkits of 200 tools, each with a few inputs, served by a native function), and what the first
# /openapi.json (built on demand) costs in time and peak RSS. Then (issue #42.1) GitHub's REST
# description imported and replicated to 1,000, 10,000 and 100,000 tools (bench/footprint.py:
# start to ready, a page, a signature, a call, a search, peak RSS and bytes per tool, the
# documents, a reload), and FastMCP's footprint on the same description
# (bench/footprint_fastmcp.py). Loopback only; bounded; stops by itself. Prints Markdown tables.
# Usage: bench/footprint.sh        (CARGO_TARGET_DIR defaults to ~/.cache/toolhost/target-release)
# Settings: FOOTPRINT_SIZES (the GitHub catalog sizes, "1000 10000 100000"), FOOTPRINT_FASTMCP
# (0 to skip FastMCP), TOOLHOST_PEER_DIR (where tests/peer/setup.sh put GitHub's description).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target-release}"
CARGO_TARGET_DIR="$target" cargo build --release --locked -p toolhost >&2
bin="$target/release/toolhost"
peer="${TOOLHOST_PEER_DIR:-$HOME/.cache/toolhost/peer}"
github="$peer/specs/github/generated/api.github.com.json"
[ -f "$github" ] || tests/peer/setup.sh "$peer" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/big"
python3 - "$work/big" <<'EOF'
import sys
out = sys.argv[1]
for k in range(50):
    lines = ["toolkits:", f"  - name: Kit{k}", "    tools:"]
    for i in range(k * 200, (k + 1) * 200):
        tag = "even" if i % 2 == 0 else "odd"
        lines += [
            f"      - name: tool_{i}",
            f"        description: Adds two numbers; tool number {i} of a generated catalog.",
            f"        tags: [{tag}, group{i % 10}]",
            "        versions:",
            "          - version: 1.0.0",
            "            inputs:",
            "              - { name: a, type: number, description: The first number. }",
            "              - { name: b, type: number, description: The second number. }",
            "              - { name: note, type: string, required: false, max_length: 200, description: A note. }",
            "            outputs:",
            "              - { name: sum, type: number, description: The sum. }",
            "            backend: { kind: native, function: calculator.add }",
        ]
    open(f"{out}/kit{k:02}.yaml", "w").write("\n".join(lines) + "\n")
EOF
size=$(stat -c %s "$bin")
echo "| catalog | binary | start to ready | peak RSS | first /openapi.json: time, size | peak RSS after it |"
echo "|---|--:|--:|--:|--:|--:|"
for catalog in bundled big; do
  args=(serve --listen 127.0.0.1:0 --ui false)
  [ "$catalog" = big ] && args+=(--catalog "$work/big")
  python3 - "$bin" "$size" "$catalog" "${args[@]}" <<'EOF'
import re, subprocess, sys, time, urllib.request
binary, size, name, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
started = time.monotonic()
process = subprocess.Popen([binary, *args, "--log", "info"], stderr=subprocess.PIPE, text=True)
address = None
for line in process.stderr:
    found = re.search(r"listening; .*?(127\.0\.0\.1:\d+)|address=(127\.0\.0\.1:\d+)", line)
    if found:
        address = found.group(1) or found.group(2)
        break
ready = None
while address and time.monotonic() - started < 60:
    try:
        if urllib.request.urlopen(f"http://{address}/readyz", timeout=1).status == 200:
            ready = time.monotonic() - started
            break
    except Exception:
        time.sleep(0.005)
for path in ["/nact/tools?pageLimit=50", "/otc/tools", "/.well-known/woa.json"] * 3:
    urllib.request.urlopen(f"http://{address}{path}", timeout=10).read()
def peak_kb():
    return int(re.search(r"VmHWM:\s+(\d+) kB", open(f"/proc/{process.pid}/status").read()).group(1))
peak = peak_kb()
# The OpenAPI document is built on its first request: its time and what it adds to the peak.
asked = time.monotonic()
document = urllib.request.urlopen(f"http://{address}/openapi.json", timeout=120).read()
openapi_ms = (time.monotonic() - asked) * 1000
openapi_peak = peak_kb()
process.terminate()
process.wait(timeout=10)
label = "bundled (6 tools)" if name == "bundled" else "generated, 10,000 tools"
print(f"| {label} | {size / 1e6:.1f} MB | {ready * 1000:.0f} ms | {peak / 1024:.1f} MB | "
      f"{openapi_ms:,.0f} ms, {len(document) / 1e6:.1f} MB | {openapi_peak / 1024:.1f} MB |")
EOF
done

echo
python3 bench/footprint.py "$bin" "$github" "$work" ${FOOTPRINT_SIZES:-1000 10000 100000}
if [ "${FOOTPRINT_FASTMCP:-1}" != 0 ]; then
  # The FastMCP bench/run.sh and bench/import_fidelity.sh install.
  venv="${TOOLHOST_BENCH_CACHE:-$HOME/.cache/toolhost}/bench/venv-fastmcp"
  [ -x "$venv/bin/python" ] || { echo "no FastMCP venv at $venv: run bench/import_fidelity.sh once" >&2; exit 1; }
  echo
  echo "| server | tools | start to listed | peak RSS | bytes per tool | |"
  echo "|---|--:|--:|--:|--:|---|"
  "$venv/bin/python" bench/footprint_fastmcp.py "$github"
fi
