"""An OTC 1.0 tool server written from the Open Tool Calling OpenAPI description and its pages
alone (not from toolhost), with the spec's example tools.

`GET /tools` answers `{"tools": [...]}` without `$schema` (the OpenAPI requires only
`tools`). `Calculator.Add@1.0.0` adds (the Call Tool example); `Doorbell.Ring@0.1.0` answers
its first call with a tool execution error with `can_retry: true`, `retry_after_ms` and a
`developer_message`, then rings `doorbell42` and `doorbell84` and fails for any other id (the
Tool Execution Error example, `can_retry: false`); `System.GetTimestamp@1.0.0` is listed but
calling it is a 400 `ServerErrorResponse` ("temporarily unavailable") with a
`developer_message`.

Usage: python3 otc_server.py. Listens on 127.0.0.1 on a free port, prints `PORT <n>`, exits
when stdin closes. `GET /_test/calls` (not OTC) lists the call_ids each tool received.
"""

import threading
import uuid

from spec_http import JsonHandler, run

TOOLS = [
    {
        "id": "Calculator.Add@1.0.0",
        "name": "Calculator_Add",
        "description": "Adds two numbers together.",
        "version": "1.0.0",
        "input_schema": {"parameters": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "The first number to add."},
                "b": {"type": "number", "description": "The second number to add."},
            },
            "required": ["a", "b"],
        }},
        "output_schema": {"type": "number", "description": "The sum of the two numbers."},
    },
    {
        "id": "Doorbell.Ring@0.1.0",
        "name": "Doorbell_Ring",
        "description": "Rings a doorbell given a doorbell ID.",
        "version": "0.1.0",
        "input_schema": {"parameters": {
            "type": "object",
            "properties": {"doorbell_id": {"type": "string", "description": "The ID of the doorbell to ring."}},
            "required": ["doorbell_id"],
        }},
        "output_schema": None,
    },
    {
        "id": "System.GetTimestamp@1.0.0",
        "name": "System_GetTimestamp",
        "description": "Retrieves the current system timestamp.",
        "version": "1.0.0",
        "input_schema": {"parameters": {"type": "object", "properties": {}}},
        "output_schema": {"type": "object", "properties": {"timestamp": {"type": "string"}}},
    },
]

CALLS = {}
LOCK = threading.Lock()


class Handler(JsonHandler):
    def do_GET(self):
        if self.path == "/health":
            return self.send(200, {})
        if self.path == "/tools":
            return self.send(200, {"tools": TOOLS})
        if self.path == "/_test/calls":
            with LOCK:
                return self.send(200, dict(CALLS))
        self.send(404, {"message": "Not found"})

    def do_POST(self):
        if self.path not in ("/tools/call", "/call"):
            return self.send(404, {"message": "Not found"})
        try:
            request = self.body()["request"]
            tool_id = request["tool_id"]
            given = request.get("input", {})
        except (ValueError, KeyError, TypeError):
            return self.send(400, {"message": "The request is invalid"})
        call_id = request.get("call_id") or str(uuid.uuid4())
        name, _, version = tool_id.partition("@")
        tool = next((t for t in TOOLS if t["id"].split("@")[0] == name
                     and version in ("", t["version"], t["version"].split(".")[0])), None)
        if tool is None:
            return self.send(400, {"message": f"Tool '{name}' was not found",
                                   "developer_message": f"{tool_id} is not available"})
        params = tool["input_schema"]["parameters"]
        missing = [p for p in params.get("required", []) if p not in given]
        if missing:
            return self.send(422, {"message": "Some input parameters are invalid",
                                   "parameter_errors": {p: "Required" for p in missing}})
        with LOCK:
            CALLS.setdefault(tool["name"], []).append(call_id)
            count = len(CALLS[tool["name"]])

        def result(**fields):
            return self.send(200, {"result": {"call_id": call_id, "duration": 1, **fields}})

        if tool["name"] == "System_GetTimestamp":
            return self.send(400, {"message": "The tool server is temporarily unavailable",
                                   "developer_message": "maintenance: db-primary-7 failover in progress"})
        if tool["name"] == "Calculator_Add":
            return result(success=True, value=given["a"] + given["b"])
        if count == 1:
            return result(success=False, error={
                "message": "The doorbell service is busy",
                "developer_message": "pool exhausted on doorbell-gw-3 (internal)",
                "can_retry": True,
                "retry_after_ms": 300,
            })
        if given["doorbell_id"] in ("doorbell42", "doorbell84"):
            return result(success=True, value=None)
        return result(success=False, error={
            "message": "Doorbell ID not found",
            "developer_message": f"The doorbell with ID '{given['doorbell_id']}' does not exist.",
            "can_retry": False,
            "additional_prompt_content": "ids: doorbell42,doorbell84",
        })


if __name__ == "__main__":
    run(Handler)
