"""The official MCP Python SDK (PyPI `mcp`) as a client of a toolhost that federates the
reference MCP servers (everything, memory, filesystem): their tools through toolhost's MCP.

Usage: mcp_federated_client.py MCP_URL FILE_IN_THE_SERVED_FOLDER
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import sys

import anyio
from checks import check, finish
from mcp import Client


async def main(url, path):
    async with Client(url) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check("tools of all three servers are listed", {"echo", "create_entities", "read_text_file"} <= set(tools), sorted(tools))
        entities = tools["create_entities"].input_schema["properties"]["entities"]
        check("an array input keeps its schema", entities.get("type") == "array" and "items" in entities, entities)

        made = await client.call_tool(
            "create_entities",
            {"entities": [{"name": "Grace", "entityType": "person", "observations": ["found a moth"]}]},
        )
        check("memory: create_entities with an array of objects", not made.is_error, made)
        found = await client.call_tool("open_nodes", {"names": ["Grace"]})
        nodes = (found.structured_content or {}).get("entities") or []
        check("memory: open_nodes finds what was created", any(n.get("name") == "Grace" for n in nodes), found)

        bad = await client.call_tool("create_entities", {"entities": "Grace"})
        check("a wrong type is an isError result naming the input", bad.is_error and "entities" in bad.content[0].text, bad)

        read = await client.call_tool("read_text_file", {"path": path})
        check("filesystem: a file in the served folder is read", not read.is_error and "hello from the folder" in str(read.structured_content), read)
        outside = await client.call_tool("read_text_file", {"path": "/etc/hostname"})
        check("filesystem: outside the folder the server's refusal is the tool's failure", outside.is_error and "outside allowed directories" in outside.content[0].text, outside)

        echo = await client.call_tool("echo", {"message": "federated"})
        check("everything: echo", not echo.is_error and "Echo: federated" in str(echo.structured_content), echo)
        image = await client.call_tool("get_tiny_image", {})
        blocks = [c for c in image.content if c.type == "image" and c.data and c.mime_type == "image/png"]
        check("everything: an image result is carried, not dropped, as an image block", bool(blocks), str(image)[:300])
    finish()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
