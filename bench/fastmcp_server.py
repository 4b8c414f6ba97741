"""FastMCP (PyPI `fastmcp`) serving the same `add_numbers` tool as toolhost's bundled catalog,
over streamable HTTP, stateless with JSON responses (the configuration toolhost uses), for the
MCP comparison of bench/run.sh.

Usage: fastmcp_server.py PORT
"""

import sys

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-bench")


@mcp.tool
def add_numbers(a: float, b: float) -> dict:
    """Add two numbers and return their sum."""
    return {"sum": a + b}


if __name__ == "__main__":
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        path="/mcp",
        stateless_http=True,
        json_response=True,
        show_banner=False,
        log_level="warning",
    )
