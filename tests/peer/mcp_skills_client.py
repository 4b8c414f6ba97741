"""The official MCP Python SDK (PyPI `mcp`) as a host that loads skills (SEP-2640) from toolhost.

Usage: mcp_skills_client.py URL AGENT[,AGENT...]
Checks that the server declares the skills extension, that skills/list has exactly the named
agents as skills, and, as a host must before loading one, that each SKILL.md read through
resources/read has the size and SHA-256 digest its entry promises and front matter identical
to the entry's; that skills/get gives the same entry, and that an unknown skill is -32602.
The SDK has no skills API yet, so the two methods go through its generic request path.
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import asyncio
import hashlib
import sys
from typing import Any

import yaml
from checks import check, finish
from mcp import Client
from mcp_types import Request, Result

SKILLS = "io.modelcontextprotocol/skills"


class Answer(Result):
    """A result the SDK has no model for, kept whole."""

    model_config = {"extra": "allow"}


async def rpc(client, method, params):
    request = Request[dict[str, Any], str](method=method, params=params)
    return (await client.session.send_request(request, Answer)).model_dump(by_alias=True)


def front_matter(text):
    _, block, _ = text.split("---\n", 2)
    return yaml.safe_load(block)


async def main():
    url, agents = sys.argv[1], sys.argv[2].split(",")
    async with Client(url) as client:
        extensions = getattr(client.server_capabilities, "extensions", None) or {}
        check("the server declares the skills extension", SKILLS in extensions, client.server_capabilities)
        listed = (await rpc(client, "skills/list", {}))["skills"]
        names = sorted(s["frontmatter"]["name"] for s in listed)
        check("skills/list has each agent as a skill", names == sorted(agents), names)
        for entry in listed:
            uri = entry["uri"]
            (file,) = entry["resources"]
            read = await client.read_resource(uri)
            text = read.contents[0].text
            raw = text.encode("utf-8")
            check(f"{uri}: the size matches", len(raw) == file["size"], (len(raw), file))
            digest = "sha256:" + hashlib.sha256(raw).hexdigest()
            check(f"{uri}: the digest matches", digest == file["digest"], (digest, file))
            check(f"{uri}: the front matter is the entry's", front_matter(text) == entry["frontmatter"], text)
            check(f"{uri}: it carries the procedure and the tools", "## Tools" in text and "toolhost://tools/" in text, text)
            got = (await rpc(client, "skills/get", {"uri": uri}))["skill"]
            check(f"{uri}: skills/get gives the listed entry", got == entry, (got, entry))
        try:
            await rpc(client, "skills/get", {"uri": "skill://no-such-skill/SKILL.md"})
            check("an unknown skill is -32602", False, "no error raised")
        except Exception as error:  # the SDK raises for JSON-RPC errors
            check("an unknown skill is -32602", getattr(getattr(error, "error", None), "code", None) == -32602, repr(error))
    finish()


asyncio.run(main())
