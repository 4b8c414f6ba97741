"""The official MCP Python SDK (PyPI `mcp`) runs a toolhost tool as a task (SEP-2663).

Usage: mcp_task_client.py URL TOOL ARGUMENTS_JSON EXPECTED_JSON
The SDK has no tasks client of its own, but its extension interface lets a client declare
`io.modelcontextprotocol/tasks` and claim the `resultType: "task"` answer of `tools/call`: the
claim polls `tasks/get` (with the SDK's own request stamping: `_meta`, `Mcp-Method`, `Mcp-Name`)
until the task ends and returns the inlined result as the call's result. Checks that the call
became a task, was seen working, ended `completed`, and that its structured content is
EXPECTED_JSON. Prints one line per check and a closing "N passed, M failed" line; exits 1 on
any failure.
"""

import asyncio
import json
import sys
from typing import Any, Literal

from checks import check, finish
from mcp import Client
from mcp.client.extension import ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import Field, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")


class CreateTaskResult(Result):
    """SEP-2663's answer to a call the server made a task of."""

    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    ttl_ms: int | None = Field(alias="ttlMs", default=None)
    poll_interval_ms: int | None = Field(alias="pollIntervalMs", default=None)


class GetTaskParams(RequestParams):
    task_id: str = Field(alias="taskId")


class GetTask(Request[GetTaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: GetTaskParams
    name_param = "taskId"


seen: list[str] = []


async def resolve(created: CreateTaskResult, ctx) -> CallToolResult:
    seen.append(created.status)
    interval = (created.poll_interval_ms or 500) / 1000
    for _ in range(200):
        got = await ctx.session.send_request(
            GetTask(params=GetTaskParams(taskId=created.task_id)), TypeAdapter(dict[str, Any])
        )
        seen.append(got["status"])
        if got["status"] in TERMINAL:
            break
        await asyncio.sleep(interval)
    check("the task ended completed", got["status"] == "completed", got)
    return CallToolResult.model_validate(got["result"])


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=resolve)]


async def main():
    url, tool = sys.argv[1], sys.argv[2]
    arguments, expected = json.loads(sys.argv[3]), json.loads(sys.argv[4])
    async with Client(url, extensions=[Tasks()]) as client:
        caps = client.server_capabilities
        extensions = getattr(caps, "extensions", None) or {}
        check("the server declares the tasks extension", TASKS in extensions, caps)
        result = await client.call_tool(tool, arguments)
        check("the call became a task, seen working before it ended", seen[:1] == ["working"] and "working" in seen[1:], seen)
        check("the result is the tool's output", result.structured_content == expected, result)
        check("the result is not an error", not result.is_error, result)
    finish()


asyncio.run(main())
