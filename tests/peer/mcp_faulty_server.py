"""A streamable-HTTP MCP server (stdlib only, no SDK) that lists its tools correctly and then
misbehaves when a tool is called, for toolhost's federation fault tests (issue #14).

Usage: mcp_faulty_server.py PORT FAULT
FAULT, what `tools/call` gets:
- none: a correct result
- hang: no answer at all (the connection stays open)
- garbage: 200 with a body that is not JSON
- malformed: 200 with JSON that is not a JSON-RPC response (a `result` that is a string)
- close: the connection closed without an answer
- echo: a JSON-RPC error repeating the X-Api-Key header it got (as careless servers do)
- refuse: a JSON-RPC "invalid params" error (-32602): the server ran nothing
- headers: a correct result whose text is the request headers it got (a careless echo)
- slow: `send` answers after 2 s (`add` at once)
- hang_list: `tools/list` never answers (calls would)
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
FAULT = sys.argv[2]

TOOLS = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "annotations": {"idempotentHint": True, "readOnlyHint": True},
    },
    {
        "name": "send",
        "description": "Send a message (not idempotent).",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(405, "")

    def do_DELETE(self):
        self.answer(200, "")

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        method, ident = request.get("method"), request.get("id")
        if ident is None:
            self.answer(202, "")
            return
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "faulty-peer", "version": "1.0.0"},
            }
        elif method == "tools/list":
            if FAULT == "hang_list":
                time.sleep(600)
                return
            result = {"tools": TOOLS}
        elif method == "tools/call":
            if FAULT == "hang":
                time.sleep(600)
                return
            if FAULT == "garbage":
                self.answer(200, "{this is not json")
                return
            if FAULT == "malformed":
                self.answer(200, json.dumps({"jsonrpc": "2.0", "id": ident, "result": "oops"}))
                return
            if FAULT == "echo":
                key = self.headers.get("X-Api-Key", "")
                error = {"code": -32000, "message": f"the key {key} is not allowed to send"}
                self.answer(200, json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}))
                return
            if FAULT == "refuse":
                error = {"code": -32602, "message": "invalid params: this server takes no such call"}
                self.answer(200, json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}))
                return
            if FAULT == "headers":
                text = json.dumps(dict(self.headers.items()))
                result = {"content": [{"type": "text", "text": text}], "isError": False}
                self.answer(200, json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}))
                return
            if FAULT == "slow" and request["params"]["name"] == "send":
                time.sleep(2)
            if FAULT == "close":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            args = request["params"].get("arguments", {})
            text = str(args.get("a", 0) + args.get("b", 0)) if request["params"]["name"] == "add" else "sent"
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            self.answer(200, json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no such method"}}))
            return
        self.answer(200, json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}))


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
