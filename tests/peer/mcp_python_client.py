"""The official MCP Python SDK (PyPI `mcp`) as a client of toolhost, over HTTP and over stdio.

Usage: mcp_python_client.py TOOLHOST_BINARY HTTP_URL
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import asyncio
import json
import sys

from checks import check, finish
from mcp import Client, StdioServerParameters


async def exercise(label, target):
    async with Client(target) as client:
        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        check(f"{label}: tools/list has the bundled tools", {"add_numbers", "convert_length"} <= names, names)
        convert = next(t for t in tools if t.name == "convert_length")
        check(f"{label}: inputSchema lists the parameters", {"value", "from", "to"} <= set(convert.input_schema["properties"]), convert.input_schema)
        check(f"{label}: outputSchema is an object schema", (convert.output_schema or {}).get("type") == "object", convert.output_schema)
        check(f"{label}: annotations from the catalog", convert.annotations is not None and convert.annotations.read_only_hint is True, convert.annotations)

        result = await client.call_tool("add_numbers", {"a": 2, "b": 40})
        check(f"{label}: call succeeds", not result.is_error and result.structured_content == {"sum": 42.0}, result)
        check(f"{label}: text content carries the JSON", json.loads(result.content[0].text) == {"sum": 42.0}, result.content)

        bad = await client.call_tool("convert_length", {"value": "far", "from": "PARSEC", "to": "METRE"})
        text = bad.content[0].text if bad.content else ""
        check(f"{label}: bad arguments are an isError result", bad.is_error, bad)
        check(f"{label}: the message names each bad parameter and what is allowed", "`value` expects a number" in text and "`from` expects one of" in text and "KILOMETRE" in text, text)

        failed_call = await client.call_tool("divide_numbers", {"dividend": 1, "divisor": 0})
        check(f"{label}: a tool failure is an isError result with the tool's advice", failed_call.is_error and "non-zero divisor" in failed_call.content[0].text, failed_call)

        try:
            await client.call_tool("no_such_tool", {})
            check(f"{label}: an unknown tool is a JSON-RPC error", False, "no error raised")
        except Exception as error:  # the SDK raises for JSON-RPC errors
            check(f"{label}: an unknown tool is a JSON-RPC error", "no_such_tool" in str(error), error)
        # Resources (issue #39.5): each tool's definition, read back as JSON.
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        check(f"{label}: resources/list has each tool's definition", "toolhost://tools/add_numbers" in listed, listed)
        read = await client.read_resource("toolhost://tools/add_numbers")
        definition = json.loads(read.contents[0].text)
        check(f"{label}: a tool's resource is its MCP definition", definition["name"] == "add_numbers" and "inputSchema" in definition, definition)
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        check(f"{label}: the server's templates are listed", "toolhost://tools/{name}" in templates, templates)
        done = await client.complete({"type": "ref/resource", "uri": "toolhost://tools/{name}"}, {"name": "name", "value": "add_"})
        check(f"{label}: completion offers tool names", done.completion.values == ["add_numbers"], done.completion)


async def main():
    binary, url = sys.argv[1], sys.argv[2]
    await exercise("http", url)
    await exercise("stdio", StdioServerParameters(command=binary, args=["serve", "--stdio", "--log", "warn"]))
    finish()


asyncio.run(main())
