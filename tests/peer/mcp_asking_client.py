"""The official MCP Python SDK (PyPI `mcp`) as a client that answers what toolhost's tools ask
mid-call (docs/asking.md): a sculpted tool's `elicit`, `sample` and `roots` steps, and a
federated MCP server's own elicitation and sampling, relayed by toolhost.

Usage: mcp_asking_client.py MCP_URL MODE
MODE is `2026-07-28` (input-required results, against a stateless server) or `legacy` (the
2025-11-25 requests within a session, against a server started with --mcp-sessions).
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import sys

import anyio
from checks import check, finish
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

asked = []


async def elicit(context, params):
    asked.append(("elicit", params.message))
    if "colou" in params.message or "color" in params.message:
        return ElicitResult(action="accept", content={"color": "teal"})
    return ElicitResult(action="accept", content={"name": "Ada"})


async def sample(context, params):
    asked.append(("sample", params.messages[0].content.text))
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Good day"), model="peer-model")


async def roots(context):
    asked.append(("roots", ""))
    return ListRootsResult(roots=[Root(uri="file:///work/project", name="project")])


def text(result):
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(url, mode):
    async with Client(url, mode=mode, elicitation_callback=elicit, sampling_callback=sample, list_roots_callback=roots) as client:
        # A sculpted tool: two questions, one round each (the second names the first answer).
        result = await client.call_tool("ask_twice", {})
        check("sculpted: both answers reach the result", not result.is_error and "Ada likes teal" in text(result), result)
        check("sculpted: each question was asked once", [a[0] for a in asked] == ["elicit", "elicit"], asked)

        asked.clear()
        result = await client.call_tool("ask_all", {})
        said = text(result)
        check("sculpted: the user, the model and the roots in one call", not result.is_error and "Good day Ada" in said and "file:///work/project" in said, result)

        asked.clear()
        result = await client.call_tool("greet_after_asking", {})
        check("federated: the upstream's own questions are relayed and answered", not result.is_error and "Good day [Ada]" in text(result), result)
        check("federated: the user and the model were asked", {a[0] for a in asked} >= {"elicit", "sample"}, asked)

        asked.clear()
        result = await client.call_tool("greet_through_a_step", {})
        check("sculpted over federated: the inner tool's questions reach the caller", not result.is_error and "[Ada]" in text(result), result)

        if mode != "legacy":
            first = await client.session.call_tool("ask_twice", {}, allow_input_required=True)
            state = getattr(first, "request_state", None)
            check("the first round is an input-required result with a requestState", bool(state) and "step1" in (first.input_requests or {}), first)
            try:
                await client.session.call_tool(
                    "ask_twice",
                    {},
                    input_responses={"step1": ElicitResult(action="accept", content={"name": "Eve"})},
                    request_state=state[:-2] + ("AA" if not state.endswith("AA") else "BB"),
                    allow_input_required=True,
                )
                check("a tampered requestState is refused", False, "accepted")
            except MCPError as e:
                check("a tampered requestState is refused", "requestState" in str(e), str(e))
    finish()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
