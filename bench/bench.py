#!/usr/bin/env python3
"""Helpers of bench/run.sh (standard library only).

  bench.py probe METHOD URL BODY EXPECT [HEADER...]   one request; fails unless 2xx and EXPECT is in the body
  bench.py oha < oha.json                             oha's JSON output as run.sh's summary line
  bench.py table RUNS.jsonl RSS.json CRITERION_DIR SINCE SKIPPED.tsv   the results as Markdown
                                                      (run settings from BENCH_* environment variables)

The table keeps, for each side of each comparison, the median over the rounds of throughput,
p50 and p99, and compares toolhost with its baseline as a ratio of throughputs measured in the
same run, back to back: absolute numbers drift on a shared machine; ratios hold.
"""

import datetime
import json
import os
import statistics
import sys
import urllib.error
import urllib.request


def probe(method, url, body, expect, headers):
    request = urllib.request.Request(url, method=method, data=body.encode() if body else None)
    for header in headers:
        name, _, value = header.partition(":")
        request.add_header(name.strip(), value.strip())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode("utf-8", "replace")
            status = response.status
    except urllib.error.HTTPError as error:
        text, status = error.read().decode("utf-8", "replace"), error.code
    except OSError as error:
        sys.exit(f"probe {method} {url}: failed to connect: {error}")
    if not 200 <= status < 300 or expect not in text:
        sys.exit(f"probe {method} {url}: expected a 2xx answer containing {expect!r}, but got {status}: {text[:300]}")


def oha():
    """Turns `oha --output-format json` into the line wrk.lua prints."""
    data = json.load(sys.stdin)
    summary, percentiles = data["summary"], data["latencyPercentiles"]
    statuses = data.get("statusCodeDistribution", {})
    total = sum(statuses.values())
    ok = sum(n for code, n in statuses.items() if str(code).startswith("2"))
    # On HTTP/1 oha aborts requests in flight at the deadline; those are not errors.
    errors = sum(n for what, n in data.get("errorDistribution", {}).items() if "deadline" not in what)
    line = {
        "requests": total,
        "duration_us": int(summary["total"] * 1e6),
        "p50_us": int((percentiles.get("p50") or 0) * 1e6),
        "p99_us": int((percentiles.get("p99") or 0) * 1e6),
        "mean_us": (summary.get("average") or 0) * 1e6,
        "errors": errors,
        "non2xx": total - ok,
    }
    print("BENCH_JSON " + json.dumps(line))


# --- the table -------------------------------------------------------------------------------

# (group, toolhost side, baseline side, what, baseline name, target ratio)
COMPARISONS = [
    ("nact", "toolhost", "bare", "N-ACT `POST /nact/tools/add_numbers:invoke`", "bare axum handler", 0.85),
    ("otc", "toolhost", "bare", "OTC `POST /otc/tools/call`", "bare axum handler", 0.85),
    ("woa", "toolhost", "bare", "WoA `POST /woa/agents/add_numbers/invoke`", "bare axum handler", 0.85),
    ("mcp", "toolhost", "bare", "MCP `tools/call` (stateless, JSON response)", "bare axum JSON-RPC handler", 0.85),
    ("mcp", "toolhost", "rmcp", "MCP `tools/call`", "minimal rmcp server", 1.0),
    ("mcp", "toolhost", "fastmcp", "MCP `tools/call`", "FastMCP (Python)", 10.0),
    ("sculpt", "toolhost", "direct", "one-step sculpted HTTP tool via N-ACT, instant upstream", "the upstream called directly", 0.6),
    ("sculpt_slow", "toolhost", "direct", "the same, upstream answering in 2 ms", "the upstream called directly", 0.6),
    ("federated", "toolhost", "direct", "MCP `tools/call` of a federated MCP tool (toolhost → the minimal rmcp server)", "the rmcp server called directly", 0.4),
]

# Criterion benchmark id → (what, target in nanoseconds or None).
MICRO = {
    "validate/input_5_valid": ("input validation, 5 typed inputs, valid", None),
    "validate/input_5_invalid": ("input validation, 5 typed inputs, 5 errors explained", None),
    "engine/invoke_native_5_inputs": ("`Engine::invoke`, native tool, 5 typed inputs", 5_000),
    "engine/invoke_invalid_5_errors": ("`Engine::invoke`, invalid input, 5 errors", None),
    "catalog/load_10000_tools": ("load a 10,000-tool catalog", 1_000_000_000),
    "nact/list_first_page_50": ("N-ACT list, first page of 50 of 10,000 tools", 1_000_000),
    "nact/list_deep_page_50": ("N-ACT list, a page of 50 deep in 10,000 tools", 1_000_000),
    "nact/list_tag_filtered_50": ("N-ACT list, 50 tools filtered by two tags", 1_000_000),
    "sculpt/map_60kb_jq": ("sculpted call, 60 KB upstream body, jq output mapping", None),
    "sculpt/map_60kb_path": ("the same call with a path output (the difference is jq)", None),
    "sculpt/direct_reqwest_get": ("loopback GET with reqwest, in process", None),
    "sculpt/engine_invoke_one_step": ("the same GET as a one-step sculpted tool", None),
    "sculpt/engine_invoke_one_step_jq": ("the same with a jq output", None),
}

# Connection scaling: (group, [(side, server name)], what); measured at 1 and 64 connections as
# GROUP@N, and at the table's own count as GROUP.
SCALING = [
    ("nact", [("toolhost", "toolhost"), ("bare", "bare axum handler")], "N-ACT native call"),
    ("mcp", [("toolhost", "toolhost"), ("rmcp", "minimal rmcp server")], "MCP `tools/call`"),
    ("sculpt", [("toolhost", "toolhost"), ("direct", "the upstream directly")], "sculpted one-step tool, instant upstream"),
]

RSS_TARGET_KB = 50 * 1024


def load_runs(path):
    runs = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                run = json.loads(line)
                runs.setdefault((run["group"], run["side"]), []).append(run)
    return runs


def summarize(samples):
    """The median over rounds of each figure, and whether any request failed."""
    rps = [s["requests"] / (s["duration_us"] / 1e6) for s in samples if s["duration_us"]]
    return {
        "rps": statistics.median(rps) if rps else 0.0,
        "p50": statistics.median(s["p50_us"] for s in samples),
        "p99": statistics.median(s["p99_us"] for s in samples),
        "cpu": statistics.median(s.get("cpu_us", 0.0) for s in samples),
        "failed": sum(s["errors"] + s["non2xx"] for s in samples),
        "rounds": len(samples),
    }


def fmt_rps(value):
    return f"{value:,.0f}"


def fmt_us(value):
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.0f} µs"


def fmt_cpu(value):
    return f"{value:.1f} µs" if value else "—"


def fmt_ns(value):
    if value >= 1e9:
        return f"{value / 1e9:.2f} s"
    if value >= 1e6:
        return f"{value / 1e6:.1f} ms"
    if value >= 1e3:
        return f"{value / 1e3:.2f} µs"
    return f"{value:.0f} ns"


def verdict(ok):
    return "met" if ok else "**missed**"


def load_table(runs, skipped):
    rows = [
        "| what | toolhost req/s | p50 | p99 | CPU/req | baseline | req/s | p50 | p99 | CPU/req | ratio | target | |",
        "|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    outcomes = []
    for group, ours, theirs, what, baseline, target in COMPARISONS:
        a, b = runs.get((group, ours)), runs.get((group, theirs))
        if not a or not b:
            reason = skipped.get(group.split("_")[0]) or skipped.get(f"{group}/{theirs}") or "not measured"
            rows.append(f"| {what} | — | — | — | — | {baseline} | — | — | — | — | — | ≥ {target:g}× | skipped: {reason} |")
            outcomes.append((what, baseline, None))
            continue
        x, y = summarize(a), summarize(b)
        ratio = x["rps"] / y["rps"] if y["rps"] else float("inf")
        ok = ratio >= target and not x["failed"] and not y["failed"]
        note = verdict(ok)
        if x["failed"] or y["failed"]:
            note += f" ({x['failed']} / {y['failed']} failed requests)"
        rows.append(
            f"| {what} | {fmt_rps(x['rps'])} | {fmt_us(x['p50'])} | {fmt_us(x['p99'])} | {fmt_cpu(x['cpu'])} | {baseline} | "
            f"{fmt_rps(y['rps'])} | {fmt_us(y['p50'])} | {fmt_us(y['p99'])} | {fmt_cpu(y['cpu'])} | {ratio:.2f}× | ≥ {target:g}× | {note} |"
        )
        outcomes.append((what, baseline, ok))
    # Added latency of a sculpted call, measured with one connection so that queueing does not
    # hide it: the median of toolhost-through-the-tool minus the median of the upstream alone.
    a, b = runs.get(("sculpt1", "toolhost")), runs.get(("sculpt1", "direct"))
    what = "sculpted tool, one connection: added median latency"
    if a and b:
        x, y = summarize(a), summarize(b)
        added = x["p50"] - y["p50"]
        ok = added < 150 and not x["failed"] and not y["failed"]
        rows.append(
            f"| {what} | {fmt_rps(x['rps'])} | {fmt_us(x['p50'])} | {fmt_us(x['p99'])} | {fmt_cpu(x['cpu'])} | the upstream called directly | "
            f"{fmt_rps(y['rps'])} | {fmt_us(y['p50'])} | {fmt_us(y['p99'])} | {fmt_cpu(y['cpu'])} | +{added:.0f} µs | < 150 µs | {verdict(ok)} |"
        )
        outcomes.append((what, "", ok))
    else:
        reason = skipped.get("sculpt") or "not measured"
        rows.append(f"| {what} | — | — | — | — | the upstream called directly | — | — | — | — | — | < 150 µs | skipped: {reason} |")
        outcomes.append((what, "", None))
    return rows, outcomes


def scaling_table(runs, connections):
    """How latency and CPU per call grow with connections: one row per server, a cell per count."""
    counts = sorted({1, 64, int(connections) if str(connections).isdigit() else 16})
    rows = [
        "| what | server | " + " | ".join(f"{n} conn.: req/s · p50 · p99 · CPU/req" for n in counts) + " | p99 at "
        + f"{counts[-1]} / at 1 |",
        "|---|---|" + "--:|" * len(counts) + "--:|",
    ]
    for group, sides, what in SCALING:
        for side, name in sides:
            cells, p99 = [], {}
            for n in counts:
                key = group if str(n) == str(connections) else f"{group}@{n}"
                if key == "sculpt@1":
                    key = "sculpt1"  # measured once, for the added-latency row
                samples = runs.get((key, side))
                if not samples:
                    cells.append("—")
                    continue
                x = summarize(samples)
                p99[n] = x["p99"]
                failed = f" ({x['failed']} failed)" if x["failed"] else ""
                cells.append(f"{fmt_rps(x['rps'])} · {fmt_us(x['p50'])} · {fmt_us(x['p99'])} · {fmt_cpu(x['cpu'])}{failed}")
            growth = f"{p99[counts[-1]] / p99[1]:.1f}×" if p99.get(1) and p99.get(counts[-1]) else "—"
            rows.append(f"| {what} | {name} | " + " | ".join(cells) + f" | {growth} |")
    return rows


def rss_table(rss):
    rows = ["| process | peak RSS (VmHWM) | target | |", "|---|--:|--:|---|"]
    outcomes = []
    for name, kb in rss.items():
        if name == "toolhost":
            ok = kb < RSS_TARGET_KB
            rows.append(f"| toolhost, bundled catalog, after every run above | {kb / 1024:.1f} MB | < 50 MB | {verdict(ok)} |")
            outcomes.append(("toolhost peak RSS", "", ok))
        else:
            rows.append(f"| {name} | {kb / 1024:.1f} MB | | |")
    return rows, outcomes


def criterion_results(directory, since):
    found = {}
    for root, _dirs, files in os.walk(directory):
        if os.path.basename(root) != "new" or "benchmark.json" not in files or "estimates.json" not in files:
            continue
        path = os.path.join(root, "estimates.json")
        if os.path.getmtime(path) < since:
            continue
        with open(os.path.join(root, "benchmark.json")) as f:
            bench = json.load(f)
        with open(path) as f:
            estimates = json.load(f)
        found[bench["full_id"]] = estimates["median"]["point_estimate"]
    return found


def micro_table(results):
    if not results:
        return ["(skipped)"], []
    rows = ["| benchmark | what | median | target | |", "|---|---|--:|--:|---|"]
    outcomes = []
    known = [k for k in MICRO if k in results] + sorted(k for k in results if k not in MICRO)
    for key in known:
        what, target = MICRO.get(key, ("", None))
        median = results[key]
        if target is None:
            rows.append(f"| `{key}` | {what} | {fmt_ns(median)} | | |")
        else:
            ok = median < target
            rows.append(f"| `{key}` | {what} | {fmt_ns(median)} | < {fmt_ns(target)} | {verdict(ok)} |")
            outcomes.append((key, "", ok))
    return rows, outcomes


def machine_facts():
    facts = {"cpus": os.cpu_count(), "cpu": "unknown CPU", "memory": "?", "kernel": os.uname().release}
    try:
        with open("/proc/cpuinfo") as f:
            facts["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
        with open("/proc/meminfo") as f:
            kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
            facts["memory"] = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    facts["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for key in ("load_before", "rustc", "commit", "load_tool", "connections", "duration", "warmup", "rounds"):
        facts[key] = os.environ.get(f"BENCH_{key.upper()}", "?")
    return facts


def table(runs_path, rss_path, criterion_dir, since, skipped_path):
    runs = load_runs(runs_path)
    with open(rss_path) as f:
        rss = json.load(f)
    machine = machine_facts()
    skipped = {}
    with open(skipped_path) as f:
        for line in f:
            key, _, reason = line.rstrip("\n").partition("\t")
            if key:
                skipped[key] = reason
    load_rows, load_outcomes = load_table(runs, skipped)
    rss_rows, rss_outcomes = rss_table(rss)
    micro_rows, micro_outcomes = micro_table(criterion_results(criterion_dir, float(since)))
    micro_rows += [f"\n{key}: skipped, {reason}." for key, reason in skipped.items() if key.startswith("micro/")]
    outcomes = load_outcomes + rss_outcomes + micro_outcomes
    missed = [f"{what}{' vs ' + base if base else ''}" for what, base, ok in outcomes if ok is False]
    met = sum(1 for *_, ok in outcomes if ok)
    out = [
        f"# bench/run.sh results, {machine['date']}",
        "",
        f"Machine: {machine['cpus']} × {machine['cpu']}, {machine['memory']} memory, Linux {machine['kernel']}; "
        f"load average {machine['load_before']} before the run. {machine['rustc']}. toolhost {machine['commit']}.",
        "",
        f"Load: {machine['load_tool']}, {machine['connections']} connections, {machine['duration']} s per run after "
        f"{machine['warmup']} s of warm-up, {machine['rounds']} rounds (sides of each comparison back to back, order "
        "alternating by round); each figure is the median over rounds. Every server on 127.0.0.1. "
        "CPU/req is the server process's user + system CPU time (all threads) per request during the "
        "measured run, from /proc/PID/stat (for the sculpted tool, toolhost's alone, not the upstream's). "
        "The load generator runs on the same cores, so req/s measures the pair, CPU/req the server.",
        "",
        "## Load",
        "",
        *load_rows,
        "",
        "## Connection scaling",
        "",
        "The same comparisons at 1, 16 and 64 connections. With everything on two shared cores, req/s "
        "stops growing once the cores are busy and p99 then grows with the queue; CPU/req is the "
        "figure that carries over to a bigger machine.",
        "",
        *scaling_table(runs, machine["connections"]),
        "",
        "## Memory",
        "",
        *rss_rows,
        "",
        "## Micro (criterion, quick mode: 1 s warm-up, 3 s measurement)",
        "",
        *micro_rows,
        "",
        f"Targets: {met} met, {len(missed)} missed" + (": " + "; ".join(missed) if missed else "") + ".",
        "",
    ]
    print("\n".join(out))


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "probe":
        probe(args[0], args[1], args[2], args[3], args[4:])
    elif command == "oha":
        oha()
    elif command == "table":
        table(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
