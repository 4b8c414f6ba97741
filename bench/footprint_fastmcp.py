"""FastMCP's footprint on GitHub's description, for the row beside toolhost's in BENCHMARKS.md
(issue #42.1): the Python process's peak RSS (VmHWM) after `FastMCP.from_openapi` and a
`tools/list` over an in-memory client, less its peak before (interpreter, FastMCP imported),
divided by the tools listed. The description itself is dropped before measuring what stays; its
parse is part of the peak, as toolhost's parse is of its own. Run by bench/footprint.sh with
the FastMCP venv's Python.

Usage: footprint_fastmcp.py GITHUB.json
"""

import asyncio
import gc
import json
import re
import sys
import time

from fastmcp import Client, FastMCP

try:  # FastMCP 4 uses httpx2, earlier ones httpx.
    import httpx2 as httpx
except ImportError:
    import httpx


def status(key):
    return int(re.search(rf"{key}:\s+(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024


async def main(path):
    before = status("VmHWM")
    started = time.monotonic()
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    server = FastMCP.from_openapi(openapi_spec=doc, client=httpx.AsyncClient(base_url="http://127.0.0.1:9"))
    del doc
    gc.collect()
    async with Client(server) as client:
        tools = await client.list_tools()
        ready = time.monotonic() - started
        count = len(tools)
        del tools
        gc.collect()
        peak, rss = status("VmHWM"), status("VmRSS")
    print(f"| FastMCP {__import__('fastmcp').__version__} (`from_openapi`, in memory) | {count:,} | {ready:.1f} s "
          f"| {peak / 2**20:,.0f} MiB | {(peak - before) / count / 1024:,.1f} KB | {rss / 2**20:,.0f} MiB after the listing |")


asyncio.run(main(sys.argv[1]))
