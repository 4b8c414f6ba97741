"""The official MCP Python SDK (PyPI `mcp`) as a client of one toolhost agent's MCP endpoint.

Usage: mcp_agent_client.py URL AGENT PROCEDURE_FILE TOOL[,TOOL...] OUTSIDE_TOOL
Checks that `initialize` carries the agent's procedure as `instructions`, that prompts/list has
the agent's one prompt and prompts/get returns the procedure, that tools/list has exactly the
agent's tools, and that a tool outside the agent is not callable through it.
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import asyncio
import sys

from checks import check, finish
from mcp import Client


async def main():
    url, agent, procedure_file, tools, outside = sys.argv[1:6]
    with open(procedure_file, encoding="utf-8") as f:
        procedure = f.read()
    expected = set(tools.split(","))
    async with Client(url) as client:
        check("initialize carries the procedure as instructions", client.instructions == procedure, client.instructions)
        prompts = (await client.list_prompts()).prompts
        check("prompts/list has the agent's one prompt", [p.name for p in prompts] == [agent], prompts)
        prompt = await client.get_prompt(agent)
        texts = [m.content.text for m in prompt.messages]
        check("prompts/get returns the procedure", texts == [procedure], texts)
        names = {t.name for t in (await client.list_tools()).tools}
        check("tools/list has exactly the agent's tools", names == expected, names)
        try:
            await client.call_tool(outside, {})
            check("a tool outside the agent is not callable through it", False, "no error raised")
        except Exception as error:  # the SDK raises for JSON-RPC errors
            check("a tool outside the agent is not callable through it", outside in str(error), error)
    finish()


asyncio.run(main())
