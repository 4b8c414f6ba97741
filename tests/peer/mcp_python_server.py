"""A small MCP server written with the official MCP Python SDK (PyPI `mcp` 2.x, `MCPServer`,
formerly FastMCP): a server we did not write the protocol code of, for toolhost's client tests.

Usage: mcp_python_server.py stdio
       mcp_python_server.py http PORT      (streamable HTTP at http://127.0.0.1:PORT/mcp)
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-peer")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name."""
    return f"Hello, {name}{'!' if excited else '.'}"


@server.tool()
def count_tags(tags: list[str]) -> int:
    """Count a list of tags."""
    return len(tags)


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ValueError(f"refused: {reason}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
