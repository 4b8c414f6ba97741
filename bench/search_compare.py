"""Search quality of toolhost and FastMCP's BM25 transform on the same tools and queries.

Usage: search_compare.py TOOLHOST WORKDIR "LABEL=DESCRIPTION=QUERIES"...  (see bench/search.sh)
"""

import json
import socket
import subprocess
import sys
import time
import urllib.request

from fastmcp.server.transforms.search.base import _extract_searchable_text
from fastmcp.server.transforms.search.bm25 import _BM25Index

DEPTH = 10


class Listed:
    """What `_extract_searchable_text` reads of a FastMCP tool, from an MCP definition."""

    def __init__(self, definition):
        self.name = definition["name"]
        self.description = definition.get("description") or ""
        self.parameters = definition.get("inputSchema") or {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mcp_tools(base):
    request = urllib.request.Request(
        f"{base}/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
        },
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.load(reply)["result"]["tools"]


def score(queries, found):
    at1 = at5 = 0
    rr = 0.0
    for query, names in zip(queries, found):
        rank = next((i + 1 for i, n in enumerate(names[:DEPTH]) if n in query["want"]), None)
        at1 += rank == 1
        at5 += rank is not None and rank <= 5
        rr += 1.0 / rank if rank else 0.0
    n = len(queries)
    return at1 / n, at5 / n, rr / n


def run(binary, work, label, description, queries_file):
    catalog = f"{work}/{abs(hash(label))}"
    subprocess.run([binary, "import", "openapi", description, "--out", catalog],
                   check=True, capture_output=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # The secrets a description's security schemes name (Discord's): placeholders, never sent.
    config = f"{catalog}.toml"
    with open(config, "w") as f:
        f.write("[secrets]\n")
        for name in ("DISCORD_API_KEY", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET"):
            f.write(f'{name} = {{ env = "BENCH_PLACEHOLDER" }}\n')
    server = subprocess.Popen(
        [binary, "serve", "--config", config, "--catalog", catalog, "--listen", f"127.0.0.1:{port}",
         "--state-dir", f"{catalog}-state"],
        stdout=subprocess.DEVNULL, stderr=open(f"{catalog}.log", "w"),
        env={"PATH": "/usr/bin:/bin", "BENCH_PLACEHOLDER": "placeholder-never-sent"},
    )
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{base}/readyz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        queries = [json.loads(line) for line in open(queries_file) if line.strip()]
        evaluated = subprocess.run(
            [binary, "eval", "search", queries_file, f"{base}/nact", "--json", "--allow-private", "--no-cache"],
            capture_output=True, text=True)
        if evaluated.returncode != 0:
            sys.exit(f"{label}: toolhost eval search failed: {evaluated.stderr}\n{open(f'{catalog}.log').read()[-2000:]}")
        nact = json.loads(evaluated.stdout)
        # What MCP's `search_tools` ranks: the whole catalog (N-ACT's `?q=` leaves out the tools
        # its projection cannot show, such as those with a required JSON body).
        ours = json.loads(subprocess.run(
            [binary, "eval", "search", queries_file, "--catalog", catalog, "--json"],
            check=True, capture_output=True, text=True).stdout)
        tools = [Listed(t) for t in mcp_tools(base)]
        index = _BM25Index()
        index.build([_extract_searchable_text(t) for t in tools])
        found = [[tools[i].name for i in index.query(q["q"], DEPTH)] for q in queries]
        theirs = score(queries, found)
        return len(tools), len(queries), (ours["recall_at_1"], ours["recall_at_5"], ours["mrr"], nact["recall_at_5"]), theirs
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    binary, work, *sets = sys.argv[1:]
    print("| catalog | queries | toolhost recall@1 | toolhost recall@5 | toolhost MRR | toolhost N-ACT `?q=` recall@5 | FastMCP BM25 recall@1 | FastMCP BM25 recall@5 | FastMCP BM25 MRR |")
    print("|---|---|---|---|---|---|---|---|---|")
    for entry in sets:
        label, description, queries_file = entry.split("=")
        tools, n, ours, theirs = run(binary, work, label, description, queries_file)
        cells = " | ".join(f"{x:.2f}" for x in (*ours, *theirs))
        print(f"| {label} | {n} | {cells} |")


if __name__ == "__main__":
    main()
