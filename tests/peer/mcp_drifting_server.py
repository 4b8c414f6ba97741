"""An MCP server (official Python SDK) whose `add` tool changes with the environment, for
toolhost's federation tests (issue #14): TOOL_DRIFT=same|reworded|retyped.

- same: add(a: int, b: int) -> int, "Add two integers."
- reworded: the same, described differently (a compatible change)
- retyped: add(a: str, b: str) -> str (a breaking one)

Usage: mcp_drifting_server.py   (stdio)
"""

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("drifting-peer")
drift = os.environ.get("TOOL_DRIFT", "same")
# Adding is safe to repeat: the hints a federating server should carry over.
hints = ToolAnnotations(readOnlyHint=True, idempotentHint=True)

if drift == "retyped":

    @server.tool(annotations=hints)
    def add(a: str, b: str) -> str:
        """Add two integers."""
        return str(int(a) + int(b))

elif drift == "reworded":

    @server.tool(annotations=hints)
    def add(a: int, b: int) -> int:
        """Add two whole numbers and return their sum."""
        return a + b

else:

    @server.tool(annotations=hints)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b


if __name__ == "__main__":
    server.run("stdio")
