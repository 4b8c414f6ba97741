#!/usr/bin/env bash
# How long `toolhost import openapi` takes on a large published description: GitHub's REST
# description (about 1,200 operations, 13 MB of JSON), and how long `toolhost check` takes on
# the catalog it writes. Release build; the median of 5 runs each, with the peak RSS. Not part of
# scripts/test (it measures; the target, under 2 s, is in BENCHMARKS.md).
#
#   bench/import.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
peer="${TOOLHOST_PEER_DIR:-$HOME/.cache/toolhost/peer}"
tests/peer/setup.sh "$peer" >&2
cargo build --release --locked -p toolhost >&2
spec="$peer/specs/github/generated/api.github.com.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$target/release/toolhost" "$spec" "$work" <<'PY'
import os, resource, statistics, subprocess, sys, time
binary, spec, work = sys.argv[1:]

def timed(args):
    """Seconds and peak RSS (MB) of one run of `args`, which must succeed."""
    # What it says goes to a file: a pipe nobody reads would fill and stop it.
    with open(os.path.join(work, "said.txt"), "w+b") as said:
        started = time.perf_counter()
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=said)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        if status != 0:
            said.seek(0)
            sys.exit(f"{args} failed: {said.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024

rows = {"import": [], "check": []}
for i in range(5):
    out = os.path.join(work, f"c{i}")
    rows["import"].append(timed([binary, "import", "openapi", spec, "--out", out]))
    rows["check"].append(timed([binary, "check", out]))
print(f"| step | median s | min s | peak RSS MB |\n|---|--:|--:|--:|")
for step, runs in rows.items():
    seconds = [r[0] for r in runs]
    print(f"| `{step}` (GitHub REST, {os.path.getsize(spec) / 1e6:.1f} MB) | {statistics.median(seconds):.2f} | {min(seconds):.2f} | {max(r[1] for r in runs):.0f} |")
PY
