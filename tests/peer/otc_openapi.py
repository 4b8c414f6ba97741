"""Writes the OTC 1.0 OpenAPI with two changes, for schemathesis.

1. The spec's own `CallToolResponse` schema rejects every result that has a `value` or an
   `error`: `additionalProperties: false` stands beside a `oneOf` whose branches declare
   `value` and `error`, and JSON Schema does not see properties declared inside `oneOf`
   branches as declared. We declare both at the top level too, which is what the spec's
   prose and examples mean (docs/protocols.md section 4).
2. The spec's own call examples (protocol-call-tool.mdx and schemas-call-tool-request.mdx) are
   added as request examples, so schemathesis makes real successful calls and checks our
   results against the (corrected) response schema, not only errors.

Usage: python3 otc_openapi.py SPEC_IN SPEC_OUT
"""

import json
import sys

spec = json.load(open(sys.argv[1]))
schemas = spec["components"]["schemas"]
response = schemas["CallToolResponse"]
response["properties"]["value"] = {"description": "The value returned from the tool (any JSON)."}
response["properties"]["error"] = {"$ref": "#/components/schemas/ToolError"}

examples = {
    "add": {"tool_id": "Calculator.Add@1.0.0", "call_id": "123e4567-e89b-12d3-a456-426614174000", "input": {"a": 10, "b": 5}},
    "add_shorthand_version": {"tool_id": "Calculator.Add@1", "input": {"a": 1.5, "b": -2}},
    "add_latest": {"tool_id": "Calculator.Add", "input": {"a": 0, "b": 0}},
    "ring": {"tool_id": "Doorbell.Ring@0.1.0", "call_id": "223e4567-e89b-12d3-a456-426614174001", "input": {"doorbell_id": "doorbell42"}},
    "ring_unknown": {"tool_id": "Doorbell.Ring@0.1.0", "call_id": "723e4567-e89b-12d3-a456-426614174006", "input": {"doorbell_id": "doorbell1"}},
    "sms": {
        "tool_id": "SMS.Send@0.1.2",
        "call_id": "523e4567-e89b-12d3-a456-426614174004",
        "input": {"to": "+5556051234567", "message": "Hello from Open Tool Calling!"},
        "context": {"secrets": [{"id": "TWILIO_API_KEY", "value": "TWILIO_SECRET_VALUE"}]},
    },
    "gmail": {
        "tool_id": "Gmail.GetEmails@1.2.0",
        "call_id": "423e4567-e89b-12d3-a456-426614174003",
        "trace_id": "trace_123",
        "input": {"query": "is:unread"},
        "context": {"authorization": [{"id": "google", "token": "ya29.a0AfH6SMC..."}], "user_id": "user_123"},
    },
}
content = spec["paths"]["/tools/call"]["post"]["requestBody"]["content"]["application/json"]
content["examples"] = {name: {"value": {"$schema": "otc://1.0", "request": request}} for name, request in examples.items()}

json.dump(spec, open(sys.argv[2], "w"), indent=1)
