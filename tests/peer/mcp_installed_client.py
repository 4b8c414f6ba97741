"""The official MCP Python SDK (PyPI `mcp`) starting the server an MCP client configuration names.

Usage: mcp_installed_client.py CONFIG_FILE KEY NAME PROCEDURE_FILE TOOL[,TOOL...] CALL_TOOL ARGS_JSON EXPECTED
Reads the server NAME under KEY (`mcpServers` or `servers`) of CONFIG_FILE as `toolhost install`
wrote it, starts its command over stdio as a desktop client would, and checks that `initialize`
carries the procedure as `instructions`, that tools/list has exactly TOOLS, and that calling
CALL_TOOL with ARGS_JSON answers text containing EXPECTED.
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import asyncio
import json
import sys

from checks import check, finish
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main():
    config_file, key, name, procedure_file, tools, call_tool, args, expected = sys.argv[1:9]
    with open(config_file, encoding="utf-8") as f:
        entry = json.load(f)[key][name]
    with open(procedure_file, encoding="utf-8") as f:
        procedure = f.read()
    check("the entry is a command over stdio", entry.get("type", "stdio") == "stdio" and "command" in entry, entry)
    params = StdioServerParameters(command=entry["command"], args=entry.get("args", []), env=entry.get("env"))
    async with Client(params) as client:
        check("initialize carries the procedure as instructions", client.instructions == procedure, client.instructions)
        names = {t.name for t in (await client.list_tools()).tools}
        check("tools/list has exactly the agent's tools", names == set(tools.split(",")), names)
        result = await client.call_tool(call_tool, json.loads(args))
        texts = " ".join(getattr(c, "text", "") for c in result.content)
        check(f"{call_tool} answers", not result.is_error and expected in texts, texts)
    finish()


asyncio.run(main())
