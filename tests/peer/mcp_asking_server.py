"""An MCP server written with the official MCP Python SDK that asks its client mid-call: the
user (elicitation) and the client's model (sampling). toolhost federates it and relays what it
asks to toolhost's own caller (docs/asking.md).

Usage: mcp_asking_server.py stdio
       mcp_asking_server.py http PORT      (streamable HTTP at http://127.0.0.1:PORT/mcp)
"""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("asking-peer")


class Name(BaseModel):
    name: str


@server.tool()
async def greet_after_asking(ctx: Context) -> str:
    """Asks the user's name, then the client's model for a greeting, and greets them."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action != "accept":
        return f"nobody to greet (the user chose {answer.action})"
    sampled = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Greet {answer.data.name}"))],
        max_tokens=30,
    )
    text = sampled.content.text if sampled.content.type == "text" else "?"
    return f"{text} [{answer.data.name}]"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
