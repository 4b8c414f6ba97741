"""An MCP server (official Python SDK, stdio) whose answers and notes toolhost must pass on to
its own callers when it federates it (issue #39.1, .2):

- `snapshot`: answers with text and an image (mixed content);
- `clip`: answers with audio, an embedded resource and a resource link;
- `steps(n)`: sends `n` progress notifications and an info log message per step while it runs
  (the log messages carry the `RELAY_KEY` it was given, which toolhost must scrub), then a
  warning, and answers "done";
- `plain`: answers with one text; `pair`: with two text blocks.

Usage: mcp_relay_server.py   (stdio)
"""

import os
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.types import EmbeddedResource, ResourceLink, TextResourceContents

server = MCPServer("relay-peer")
# A 1x1 transparent PNG.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)
# A few bytes standing for a WAV file.
SOUND = b"RIFF\x24\x00\x00\x00WAVEfmt "


@server.tool()
def snapshot():
    """Describe a picture and return it."""
    return ["A pixel.", Image(data=PIXEL, format="png")]


@server.tool()
def clip():
    """Return a sound, the notes on it, and a link to more."""
    notes = EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="notes://clip", mime_type="text/markdown", text="# Clip\nA short sound."),
    )
    link = ResourceLink(type="resource_link", uri="notes://more", name="more", mime_type="text/plain")
    return [Audio(data=SOUND, format="wav"), notes, link]


@server.tool()
async def steps(ctx: Context, n: int = 3) -> str:
    """Work in `n` steps, reporting each."""
    key = os.environ.get("RELAY_KEY", "none")
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"part {i} of {n}")
        await ctx.info(f"part {i} done with key {key}")
    await ctx.warning({"note": "all parts done", "key": key})
    return "done"


@server.tool()
def pair():
    """Say two things."""
    return ["first", "second"]


@server.tool()
def plain() -> str:
    """Say hello."""
    return "hello"


if __name__ == "__main__":
    server.run("stdio")
