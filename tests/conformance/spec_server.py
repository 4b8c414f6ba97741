#!/usr/bin/env python3
"""A small tool server written from the drafts' text alone (N-ACT, OTC 1.0 or WoA), for the
tests of `toolhost verify --conformance`: it follows its spec, except for the one rule the
second argument breaks.

    spec_server.py PROTOCOL BREAK

PROTOCOL is nact, otc or woa; BREAK is `none` or one of the names in BREAKS below. It listens on
127.0.0.1 at a free port, prints `PORT` on its first line, and serves until killed. Every tool
that actually runs increments a counter; `GET /__effects` answers them as JSON, so a test can
tell which tools the checker invoked. Standard library only.
"""

import json
import re
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PROTOCOL, BREAK = sys.argv[1], sys.argv[2]
BREAKS = {
    "nact": ["lowercase-enum", "version-mismatch", "unlocked-signature", "5xx-malformed", "retry-after",
             "ignores-page-limit", "oldest-first", "name-as-tool-id", "cursor-loop",
             "pinned-404",  # §7: a pinned invocation of a version the tool has answers 404
             "pinned-runs-current",  # §7: a pinned invocation runs the current version
             "versions-missing-old",  # §6.3: the versions list holds only the current version
             "cursor-wrap",  # §6.4: the last page's `next` starts over, with a fresh cursor
             "tag-filter-partial",  # §5.2: filtering by a tag returns only the first tool that has it
             ],
    "otc": ["validation-as-400", "no-call-id", "bare-array", "no-health",
            "shorthand-latest-minor",  # call-tool: `@1` resolves to the latest 1.y.z, not 1.0.0
            "unversioned-oldest",  # call-tool: an id without a version resolves to the oldest
            "accepts-any-schema",  # call-tool: an unsupported `$schema` is ignored, not a 400
            "requires-schema",  # call-tool: a request without `$schema` is a 400
            "execution-error-as-400",  # call-tool: a tool execution error is a 400, not 200 success: false
            "health-503",  # health-check: /health answers 503 while tool calls succeed
            "health-needs-auth",  # health-check: /health wants the API key like every other path
            "rejects-authorization",  # authn: no authentication, yet an `Authorization` header is a 401
            ],
    "woa": ["sub-path", "plain-http-rest", "no-mismatch-check", "no-caching", "draft-07-schema",
            "operation-without-description", "private-transport-without-dns", "woa-version-1.0",
            "no-store",  # §7: the document is `Cache-Control: no-store`
            ],
}
# Modes that break no rule: `api-key` wants `OTC-API-Key: secret-key` on every request but
# /health (401 without; `health-needs-auth` on /health too, its 401s echoing the last key seen); `other-origin-rest` (WoA) names its REST base `http://localhost:PORT`, an origin the
# user did not type; `always-429` answers every request 429 without Retry-After;
# `loosened-latest` (OTC) makes `city` optional in the newer version of `lookup_weather` (a
# compatible change), so an input only the older refuses would run the newer.
MODES = ["api-key", "other-origin-rest", "always-429", "loosened-latest",
         # Runs a tool with whatever input it is given (WoA leaves validation to the client,
         # §4.2, §5.1; N-ACT's §5.3 to the executor; OTC requires it, so there it breaks a MUST).
         "lenient",
         # (OTC) `send_email` requires the secret SMTP_PASSWORD, checked before its input: a call
         # without it is a 400 (tool-secrets), whatever the input.
         "secrets-first",
         ]
assert BREAK == "none" or BREAK in BREAKS[PROTOCOL] or BREAK in MODES, f"unknown break {BREAK} for {PROTOCOL}"

EFFECTS = {}
# The `OTC-API-Key` values received, in order (`health-needs-auth` leaks them).
SEEN_KEYS = []
LOCK = threading.Lock()
READS = {"count": 0}
RETRY_AFTER_SENT = {"done": False}

# One catalog, three tools. `lookup_weather` says it is read-only; the others act.
UNITS = ["celsius", "fahrenheit"] if BREAK == "lowercase-enum" else ["CELSIUS", "FAHRENHEIT"]
TOOLS = [
    {
        "name": "lookup_weather",
        "toolkit": "Weather",
        "id": "0479a45d-ad0a-49d4-94db-75edf00d2ca4",
        "description": "Invoke this tool to look up the current temperature in a city.",
        "read_only": True,
        # N-ACT numbers are positions in this history; 1.2.0 adds an optional input and an
        # output (a compatible change, N-ACT §5.4).
        "versions": ["1.0.0", "1.2.0"],
        "added": {2: {"inputs": [{"id": "days", "name": "days", "type": "int", "description": "Days ahead.",
                                  "required": False}],
                      "outputs": [{"id": "humidity", "name": "humidity", "type": "int", "description": "Percent."}]}},
        "inputs": [
            {"id": "city", "name": "city", "type": "string", "description": "The city.", "required": True},
            {"id": "unit", "name": "unit", "type": "enum", "description": "The unit.", "required": False,
             "allowed-values": [{"name": u, "description": f"Degrees {u.lower()}."} for u in UNITS]},
        ],
        "outputs": [{"id": "temperature", "name": "temperature", "type": "int", "description": "Degrees."}],
        "run": lambda args: {"temperature": 21, "humidity": 40},
    },
    {
        "name": "send_email",
        "toolkit": "Email",
        "id": "6f1c1a8e-3f57-4d7e-9a55-6c51c4a1d0b2",
        "description": "Send an email to one recipient.",
        "read_only": False,
        "versions": ["1.0.0"],
        "inputs": [
            {"id": "to", "name": "to", "type": "string", "description": "The recipient.", "required": True},
            {"id": "urgent", "name": "urgent", "type": "boolean", "description": "Flag it.", "required": False},
        ],
        "outputs": [{"id": "message_id", "name": "message_id", "type": "string", "description": "The id."}],
        "run": lambda args: {"message_id": "m-1"} if "@" in str(args.get("to")) else ToolError("not an email address"),
    },
    {
        "name": "count_words",
        "toolkit": "Text",
        "id": "9a0e3c1d-58a4-4b0e-8a57-0d6f4c3e2b11",
        "description": "Count the words of a text.",
        "read_only": False,
        "versions": ["1.0.0"],
        "inputs": [{"id": "text", "name": "text", "type": "string", "description": "The text.", "required": True}],
        "outputs": [{"id": "count", "name": "count", "type": "int", "description": "How many words."}],
        "run": lambda args: {"count": len(str(args.get("text", "")).split())},
    },
]
TAGS = {"lookup_weather": ["weather", "lookup"], "send_email": ["email"], "count_words": ["text", "lookup"]}
BY_ID = {t["id"]: t for t in TOOLS}
BY_NAME = {t["name"]: t for t in TOOLS}


class ToolError:
    """A tool execution error: the tool ran and failed."""

    def __init__(self, message):
        self.message = message


def at_version(tool, number):
    """The tool as it is at version `number` (1-based): its inputs and outputs then."""
    inputs, outputs = list(tool["inputs"]), list(tool["outputs"])
    for n in range(2, number + 1):
        added = tool.get("added", {}).get(n, {})
        inputs += added.get("inputs", [])
        outputs += added.get("outputs", [])
    if BREAK == "loosened-latest" and number >= 2:
        inputs = [dict(p, required=False) if p["name"] == "city" else p for p in inputs]
    return dict(tool, inputs=inputs, outputs=outputs, number=number)


def current(tool):
    return at_version(tool, len(tool["versions"]))


def ran(tool, args):
    """Runs `tool` (as at_version made it): its outputs at that version, or a ToolError."""
    with LOCK:
        EFFECTS[tool["name"]] = EFFECTS.get(tool["name"], 0) + 1
    out = tool["run"](args)
    if isinstance(out, ToolError):
        return out
    names = [o["name"] for o in tool.get("outputs", [])]
    return {k: v for k, v in out.items() if k in names}


def check_input(tool, args):
    """Problems with `args` (a dict), by parameter name."""
    errors = {}
    if BREAK == "lenient":
        return errors
    known = {p["name"]: p for p in tool["inputs"]}
    for name in args:
        if name not in known:
            errors[name] = "unknown input"
    for p in tool["inputs"]:
        if p["name"] not in args:
            if p.get("required", True):
                errors[p["name"]] = "required"
            continue
        v = args[p["name"]]
        ok = {
            "string": isinstance(v, str),
            "int": isinstance(v, int) and not isinstance(v, bool),
            "boolean": isinstance(v, bool),
            "enum": v in [a["name"] for a in p.get("allowed-values", [])],
        }[p.get("type", "string")]
        if not ok:
            errors[p["name"]] = f"not a valid {p.get('type', 'string')}"
    return errors


# ---------------------------------------------------------------- N-ACT (draft-rosenberg-aiproto-nact-00)

def nact_signature(tool, number, listing=False):
    latest = len(tool["versions"])
    at = at_version(tool, number)
    sig = {
        "toolId": tool["name"] if BREAK == "name-as-tool-id" else tool["id"],
        "name": tool["name"],
        "description": tool["description"],
        "version": number,
        "currentVersion": latest,
        "tags": TAGS[tool["name"]],
        "input_parameters": at["inputs"],
        "output_parameters": at["outputs"],
    }
    if tool["read_only"]:
        sig["annotations"] = {"readOnlyHint": True}
    if BREAK == "version-mismatch" and listing and latest > 1:
        sig["version"] = 1
    if BREAK == "unlocked-signature" and not listing:
        with LOCK:
            READS["count"] += 1
            sig["description"] = f"{tool['description']} (read {READS['count']})"
    return sig


def page(items, query):
    limit = min(int(query.get("pageLimit", ["50"])[0]), 500)
    # A cursor is `START` or, once wrapped, `START.FRESH` (cursor-wrap).
    start = int((query.get("pageCursor", ["0"])[0] or "0").split(".")[0])
    paging = {"pageLimit": limit}
    if BREAK == "ignores-page-limit":
        return {"items": items, "paging": paging}
    if start + limit < len(items):
        paging["next"] = "0" if BREAK == "cursor-loop" and start > 0 else str(start + limit)
    elif BREAK == "cursor-wrap":
        paging["next"] = f"0.{uuid.uuid4().hex}"
    return {"items": items[start:start + limit], "paging": paging}


def nact_listing(query):
    tools = TOOLS
    for tag in query.get("tag", []):
        tools = [t for t in tools if tag in TAGS[t["name"]]]
        if BREAK == "tag-filter-partial":
            tools = tools[:1]
    return [nact_signature(t, len(t["versions"]), True) for t in tools]


def nact(handler, method, path, query, body):
    if BREAK == "retry-after" and not RETRY_AFTER_SENT["done"]:
        RETRY_AFTER_SENT["done"] = True
        return handler.answer(503, {"title": "busy"}, "application/problem+json", {"Retry-After": "1"})
    m = re.fullmatch(r"/nact/tools", path)
    if m and method == "GET":
        return handler.answer(200, page(nact_listing(query), query))
    m = re.fullmatch(r"/nact/tools/([^/:]+)(?:/versions(?:/(\d+))?)?(:invoke)?", path)
    if not m:
        return handler.problem(404, "no such resource")
    tool = BY_ID.get(m.group(1)) or BY_NAME.get(m.group(1))
    if tool is None:
        return handler.problem(404, "no such tool")
    latest = len(tool["versions"])
    number = int(m.group(2)) if m.group(2) else None
    if number is not None and not 1 <= number <= latest:
        return handler.problem(404, "no such version")
    if m.group(3):
        if method != "POST":
            return handler.problem(405, "POST only")
        if number is not None and BREAK == "pinned-404":
            return handler.problem(404, "no such tool")
        if BREAK == "pinned-runs-current":
            number = None
        invocation = body if isinstance(body, dict) else None
        params = invocation.get("input_parameters") if invocation else None
        if not isinstance(params, list) or not all(isinstance(p, dict) and "name" in p for p in params):
            return handler.problem(500 if BREAK == "5xx-malformed" else 400, "not an invocation object")
        args = {p["name"]: p.get("value") for p in params}
        at = at_version(tool, number or latest)
        errors = check_input(at, args)
        if errors:
            return handler.problem(500 if BREAK == "5xx-malformed" else 400, "invalid input", errors=errors)
        out = ran(at, args)
        if isinstance(out, ToolError):
            return handler.problem(422, out.message)
        return handler.answer(200, {"output_parameters": [{"name": k, "value": v} for k, v in out.items()]})
    if method != "GET":
        return handler.problem(405, "GET only")
    if "/versions" in path and number is None:
        numbers = list(range(1, latest + 1))
        order = numbers if BREAK == "oldest-first" else list(reversed(numbers))
        if BREAK == "versions-missing-old":
            order = order[:1]
        return handler.answer(200, page([nact_signature(tool, v) for v in order], query))
    return handler.answer(200, nact_signature(tool, number or latest))


# ---------------------------------------------------------------- OTC 1.0

SCHEMAS = ["otc://1.0", "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json"]
SECRETS = {"send_email": "SMTP_PASSWORD"} if BREAK == "secrets-first" else {}


def otc_definition(tool, number):
    at = at_version(tool, number)
    version = tool["versions"][number - 1]
    definition = {
        "id": f"{tool['toolkit']}.{tool['name']}@{version}",
        "name": f"{tool['toolkit']}_{tool['name']}",
        "description": tool["description"],
        "version": version,
        "input_schema": {"parameters": json_schema(at)},
        "output_schema": {"type": "object", "properties": {o["name"]: {"description": o["description"]} for o in at["outputs"]}},
    }
    if tool["read_only"]:
        # OTC is extensible ("new parameters ... can be added as additional properties").
        definition["annotations"] = {"readOnlyHint": True}
    if tool["name"] in SECRETS:
        definition["requirements"] = {"secrets": [{"id": SECRETS[tool["name"]]}]}
    return definition


def resolve(tool, wanted):
    """The 1-based version `wanted` (`x.y.z`, `x` or None) names, or None."""
    versions = tool["versions"]
    if wanted is None:
        return 1 if BREAK == "unversioned-oldest" else len(versions)
    if "." not in wanted:
        same_major = [i + 1 for i, v in enumerate(versions) if v.split(".")[0] == wanted]
        if BREAK == "shorthand-latest-minor":
            return same_major[-1] if same_major else None
        wanted = f"{wanted}.0.0"
    return versions.index(wanted) + 1 if wanted in versions else None


CALLS = {}


def otc(handler, method, path, query, body):
    if path == "/otc/health" and BREAK != "no-health":
        if BREAK == "health-503":
            return handler.answer(503, {"status": "starting"})
        return handler.answer(200, {"status": "ok"})
    if BREAK == "rejects-authorization" and handler.headers.get("Authorization"):
        return handler.answer(401, {"message": "invalid bearer token"})
    if path == "/otc/tools" and method == "GET":
        tools = [otc_definition(t, n) for t in TOOLS for n in range(1, len(t["versions"]) + 1)]
        return handler.answer(200, tools if BREAK == "bare-array" else {"$schema": "otc://1.0", "tools": tools})
    if path not in ("/otc/tools/call", "/otc/call") or method != "POST":
        return handler.answer(404, {"message": "not found"})
    if not isinstance(body, dict) or not isinstance(body.get("request"), dict):
        return handler.answer(400, {"message": "no request object"})
    schema = body.get("$schema")
    if schema is None and BREAK == "requires-schema":
        return handler.answer(400, {"message": "$schema is required"})
    if schema is not None and schema not in SCHEMAS and BREAK != "accepts-any-schema":
        return handler.answer(400, {"message": f"OTC version {schema!r} is not supported"})
    request = body["request"]
    tool_id = request.get("tool_id", "")
    m = re.fullmatch(r"([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)(?:@([0-9]+(?:\.[0-9]+\.[0-9]+)?))?", str(tool_id))
    if not m:
        return handler.answer(400, {"message": f"invalid tool id {tool_id!r}"})
    tool = BY_NAME.get(m.group(2))
    if tool is None or tool["toolkit"] != m.group(1):
        return handler.answer(400, {"message": "tool not found"})
    number = resolve(tool, m.group(3))
    if number is None:
        return handler.answer(400, {"message": "tool version not available"})
    secret = SECRETS.get(tool["name"])
    given = [s.get("id") for s in (request.get("context") or {}).get("secrets", [])]
    if secret and secret not in given:
        return handler.answer(400, {"message": f"the secret {secret} is required"})
    at = at_version(tool, number)
    args = request.get("input", {})
    errors = check_input(at, args if isinstance(args, dict) else {"input": None})
    if errors:
        status = 400 if BREAK == "validation-as-400" else 422
        return handler.answer(status, {"message": "invalid input", "parameter_errors": errors})
    call_id = request.get("call_id")
    if call_id and call_id in CALLS:
        return handler.answer(200, {"$schema": "otc://1.0", "result": CALLS[call_id]})
    value = ran(at, args if isinstance(args, dict) else {})
    result = {"call_id": call_id or str(uuid.uuid4()), "duration": 1}
    if isinstance(value, ToolError):
        if BREAK == "execution-error-as-400":
            return handler.answer(400, {"message": value.message})
        result.update(success=False, error={"message": value.message, "can_retry": False})
    else:
        result.update(success=True, value=value)
    if BREAK == "no-call-id":
        del result["call_id"]
    if call_id:
        CALLS[call_id] = result
    return handler.answer(200, {"$schema": "otc://1.0", "result": result})


# ---------------------------------------------------------------- WoA (draft-gaikwad-woa-00)

def json_schema(tool):
    types = {"string": "string", "int": "integer", "boolean": "boolean"}
    props = {}
    for p in tool["inputs"]:
        if p["type"] == "enum":
            props[p["name"]] = {"enum": [a["name"] for a in p["allowed-values"]], "description": p["description"]}
        else:
            props[p["name"]] = {"type": types[p["type"]], "description": p["description"]}
    required = [p["name"] for p in tool["inputs"] if p.get("required", True)]
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


# `count_words`'s `default` operation has its own inputs (§4.1): `text` is optional there.
DEFAULT_OPERATION_INPUTS = {"type": "object", "properties": {"text": {"type": "string", "description": "The text."}},
                            "additionalProperties": False}


def woa_document(port):
    base = {"plain-http-rest": "http://tools.example.com", "other-origin-rest": f"http://localhost:{port}"}.get(
        BREAK, f"http://127.0.0.1:{port}")
    agents = []
    for t in TOOLS:
        t = current(t)
        outputs = {"type": "object", "properties": {o["name"]: {"type": {"int": "integer"}.get(o["type"], "string")} for o in t["outputs"]}}
        agent = {
            "id": t["name"], "name": t["name"].replace("_", " ").title(), "description": t["description"],
            "version": t["versions"][-1], "capabilities": [t["toolkit"]],
            "inputs": {"$schema": "http://json-schema.org/draft-07/schema#" if BREAK == "draft-07-schema"
                       else "https://json-schema.org/draft/2020-12/schema", **json_schema(t)},
            "outputs": outputs, "transports": ["rest"],
        }
        if t["read_only"]:
            agent["annotations"] = {"readOnlyHint": True}
        if t["name"] == "count_words":
            operation = {"name": "default", "description": "Count the words.", "inputs": DEFAULT_OPERATION_INPUTS}
            if BREAK == "operation-without-description":
                del operation["description"]
            agent["operations"] = [operation]
        agents.append(agent)
    private = "queue" if BREAK == "private-transport-without-dns" else "com.example.queue"
    return {"woa_version": "1.0" if BREAK == "woa-version-1.0" else "1", "agents": agents,
            "transports": {"rest": {"base": base, "invoke_path": "/agents/{agent_id}/invoke"},
                           private: {"topic": "agents"}}}


def woa_input_problems(tool, operation, args):
    """What is wrong with `args` for the operation's inputs (else the agent's), §5.1."""
    if not isinstance(args, dict):
        return {"input": "not an object"}
    if tool["name"] == "count_words" and operation in (None, "default"):
        if BREAK == "lenient":
            return {}
        problems = {k: "unknown input" for k in args if k != "text"}
        if "text" in args and not isinstance(args["text"], str):
            problems["text"] = "not a string"
        return problems
    return check_input(tool, args)


def woa(handler, method, path, query, body):
    where = "/api/.well-known/woa.json" if BREAK == "sub-path" else "/.well-known/woa.json"
    if path == where and method == "GET":
        document = json.dumps(woa_document(handler.server.server_address[1])).encode()
        etag = '"%08x"' % (hash(document) & 0xFFFFFFFF)
        headers = {"ETag": etag, "Cache-Control": "no-store" if BREAK == "no-store" else "max-age=300"}
        if BREAK == "no-caching":
            headers = {}
        if handler.headers.get("If-None-Match") == etag:
            return handler.raw(304, b"", None, headers)
        return handler.raw(200, document, "application/woa+json", headers)
    m = re.fullmatch(r"/agents/([A-Za-z0-9_-]+)/invoke", path)
    if not m or method != "POST":
        return handler.problem(404, "not found")
    tool = BY_NAME.get(m.group(1))
    if tool is None:
        return handler.problem(404, "no such agent")
    tool = current(tool)
    if not isinstance(body, dict):
        return handler.problem(400, "the envelope is not a JSON object")
    if "agent" in body and body["agent"] != tool["name"] and BREAK != "no-mismatch-check":
        return handler.problem(400, "the envelope names another agent")
    operation = body.get("operation")
    if operation not in (None, "default"):
        return handler.problem(400, "no such operation")
    args = body.get("input")
    errors = woa_input_problems(tool, operation, args)
    if errors:
        return handler.problem(422, "input does not conform to inputs", errors=errors)
    out = ran(tool, args)
    if isinstance(out, ToolError):
        return handler.problem(422, out.message)
    return handler.answer(200, out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def raw(self, status, data, media, headers=None):
        self.send_response(status)
        if media:
            self.send_header("Content-Type", media)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self, status, value, media="application/json", headers=None):
        self.raw(status, json.dumps(value).encode(), media, headers)

    def problem(self, status, detail, **extra):
        self.answer(status, {"title": detail, "status": status, **extra}, "application/problem+json")

    def handle_any(self, method):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if url.path == "/__effects":
            return self.answer(200, EFFECTS)
        if BREAK == "always-429":
            return self.answer(429, {"message": "slow down"})
        # /health needs no authentication (OTC health-check), unless that is the rule broken.
        exempt = url.path.endswith("/health") and BREAK != "health-needs-auth"
        key = self.headers.get("OTC-API-Key")
        if key:
            SEEN_KEYS.append(key)
        if BREAK in ("api-key", "health-needs-auth") and not exempt and key != "secret-key":
            # `health-needs-auth` also leaks the last key it saw before (so a request sent
            # without one gets it back: the checker must redact those answers too), where a
            # report's 300-character excerpt of the answer would cut it in half.
            leak = {"leak": "x" * 285 + SEEN_KEYS[-1]} if BREAK == "health-needs-auth" and SEEN_KEYS else {}
            return self.answer(401, {**leak, "message": "an API key is required"})
        {"nact": nact, "otc": otc, "woa": woa}[PROTOCOL](self, method, url.path, parse_qs(url.query), body)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
