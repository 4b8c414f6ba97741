"""An MCP server (official Python SDK) whose `add` tool changes with the environment, for
toolhost's federation tests (issue #14): TOOL_DRIFT=same|reworded|retyped.

- same: add(a: int, b: int) -> int, "Add two integers."
- reworded: the same, described differently (a compatible change)
- retyped: add(a: str, b: str) -> str (a breaking one)

Usage: mcp_drifting_server.py   (stdio)
"""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("drifting-peer")
drift = os.environ.get("TOOL_DRIFT", "same")

if drift == "retyped":

    @server.tool()
    def add(a: str, b: str) -> str:
        """Add two integers."""
        return str(int(a) + int(b))

elif drift == "reworded":

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two whole numbers and return their sum."""
        return a + b

else:

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b


if __name__ == "__main__":
    server.run("stdio")
