"""What an imported tool keeps of its description, toolhost beside FastMCP's `from_openapi`, on
the same OpenAPI descriptions (issue #32): both toolsets are listed over MCP (toolhost's catalog
served over stdio, FastMCP's server in memory) and the same three things are counted in the
listings:

- inputs with a real description: not empty, and not a name restated ("The id.");
- inputs that are enumerations: `enum` in the input's schema (or its items', or a branch's);
- required body fields served: of the JSON request bodies' required properties (as the
  description says), how many the operation's tool takes as an input.

Run by bench/import_fidelity.sh with the FastMCP venv's Python.

Usage: import_fidelity.py TOOLHOST WORKDIR NAME=SPEC...
"""

import asyncio
import json
import os
import re
import subprocess
import sys

import yaml
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StdioTransport

try:  # FastMCP 4 uses httpx2, earlier ones httpx.
    import httpx2 as httpx
except ImportError:
    import httpx

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f) if path.endswith(".json") else yaml.safe_load(f)


def resolve(doc, value, depth=0):
    """A schema with local `$ref`s followed and `allOf` merged (properties, required)."""
    if depth > 16 or not isinstance(value, dict):
        return value if isinstance(value, dict) else {}
    if "$ref" in value and value["$ref"].startswith("#/"):
        target = doc
        for part in value["$ref"][2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
        return resolve(doc, target, depth + 1)
    if "allOf" in value:
        merged = {"properties": {}, "required": []}
        for part in value["allOf"]:
            part = resolve(doc, part, depth + 1)
            merged["properties"].update(part.get("properties", {}))
            merged["required"].extend(part.get("required", []))
        return merged
    return value


def api_enum_values(value, out=None):
    """Every value any `enum` of the document lists, as the API spells it."""
    out = set() if out is None else out
    if isinstance(value, dict):
        for key, v in value.items():
            if key == "enum" and isinstance(v, list):
                out.update(json.dumps(x) for x in v)
            else:
                api_enum_values(v, out)
    elif isinstance(value, list):
        for v in value:
            api_enum_values(v, out)
    return out


def enum_values(schema):
    if not isinstance(schema, dict):
        return []
    values = list(schema.get("enum", [])) + enum_values(schema.get("items"))
    for key in ("anyOf", "oneOf"):
        for s in schema.get(key, []):
            values += enum_values(s)
    return values


def optional_structured_body_fields(doc):
    """(method, path) → the optional array and object properties of its JSON request body."""
    out = {}
    for (method, path), schema in body_schemas(doc):
        wanted = set(schema.get("required", []))
        fields = [
            name
            for name, prop in (schema.get("properties") or {}).items()
            if name not in wanted and resolve(doc, prop).get("type") in ("array", "object")
        ]
        if fields:
            out[(method, path)] = fields
    return out


def body_schemas(doc):
    """((method, path), the resolved schema of its JSON request body), for each operation."""
    for path, item in (doc.get("paths") or {}).items():
        for method in METHODS:
            op = (item or {}).get(method)
            if not isinstance(op, dict):
                continue
            body = resolve(doc, op.get("requestBody", {}))
            content = body.get("content", {})
            media = next((m for k, m in content.items() if k == "application/json" or k.endswith("+json")), None)
            if media is not None:
                yield (method, path), resolve(doc, media.get("schema", {}))


def required_body_fields(doc):
    """(method, path) → the required properties of its JSON request body."""
    out = {}
    for (method, path), schema in body_schemas(doc):
        fields = [f for f in schema.get("required", []) if f in schema.get("properties", {})]
        if fields:
            out[(method, path)] = fields
    return out


def plain(text):
    return re.sub(r"[^a-z0-9]", "", text.lower())


def real_description(name, schema):
    text = (schema.get("description") or "").strip()
    # toolhost appends the allowed values and list hints to what it was given.
    text = re.split(r" (One of: |Several values are separated by commas)", text)[0].strip()
    restated = re.fullmatch(r"The (.+)\.", text)
    return bool(text) and not (restated and plain(restated.group(1)) == plain(name))


def is_enum(schema):
    if not isinstance(schema, dict):
        return False
    if "enum" in schema or is_enum(schema.get("items")):
        return True
    return any(is_enum(s) for key in ("anyOf", "oneOf") for s in schema.get(key, []))


def schema_of(tool):
    # MCP SDK 2 spells it `input_schema`; earlier ones `inputSchema`.
    schema = getattr(tool, "input_schema", None)
    return schema if schema is not None else tool.inputSchema


def count(tools, by_operation, required, optional, spelled_by_api):
    inputs = described = enums = spelled = defaults = 0
    for tool in tools:
        for name, schema in (schema_of(tool).get("properties") or {}).items():
            inputs += 1
            described += real_description(name, schema)
            enums += is_enum(schema)
            # Spelled as the API spells it: every value the input offers is one the API lists.
            spelled += is_enum(schema) and all(json.dumps(v) in spelled_by_api for v in enum_values(schema))
            defaults += isinstance(schema, dict) and "default" in schema
    properties = {t.name: {plain(p) for p in (schema_of(t).get("properties") or {})} for t in tools}

    def served(fields_by_operation):
        taken_count = 0
        for operation, fields in fields_by_operation.items():
            taken = properties.get(by_operation.get(operation), set())
            taken_count += sum(any(p == plain(f) or p.startswith(plain(f)) for p in taken) for f in fields)
        return taken_count, sum(len(f) for f in fields_by_operation.values())

    served_required, wanted = served(required)
    kept_optional, optional_wanted = served(optional)
    return {
        "inputs": inputs, "described": described, "enums": enums, "spelled": spelled, "defaults": defaults,
        "served": served_required, "wanted": wanted, "optional": kept_optional, "optional_wanted": optional_wanted,
    }


async def toolhost_tools(binary, spec, out):
    """Imports `spec` and lists the catalog over MCP (stdio), its secrets given dummy values."""
    said = subprocess.run(
        [binary, "import", "openapi", spec, "--out", out, "--base-url", "http://127.0.0.1:9"],
        capture_output=True, text=True, check=True,
    ).stderr
    secrets = re.search(r"put these in the server's \[secrets\]: (.+)", said)
    config = os.path.join(out, "..", os.path.basename(out) + ".toml")
    with open(config, "w", encoding="utf-8") as f:
        f.write("[secrets]\n")
        for name in secrets.group(1).split(", ") if secrets else []:
            f.write(f'{name} = {{ env = "BENCH_SECRET" }}\n')
    # Each tool's operation, from the comment the import writes above it.
    by_operation = {}
    for file in os.listdir(out):
        if not file.endswith(".yaml"):
            continue
        comment = None
        for line in open(os.path.join(out, file), encoding="utf-8"):
            if line.startswith("      # "):
                comment = line.strip()[2:]
            elif line.startswith("      - name: ") and comment and " /" in comment:
                method, path = comment.split(" ", 1)
                by_operation[(method.lower(), path)] = line.split(": ", 1)[1].strip().strip('"')
                comment = None
    transport = StdioTransport(
        binary, ["serve", "--stdio", "--catalog", out, "--config", config, "--log", "error"],
        env={**os.environ, "BENCH_SECRET": "bench-secret-value"},
    )
    async with Client(transport) as client:
        return await client.list_tools(), by_operation


async def fastmcp_tools(doc):
    server = FastMCP.from_openapi(openapi_spec=doc, client=httpx.AsyncClient(base_url="http://127.0.0.1:9"))
    async with Client(server) as client:
        tools = await client.list_tools()
    # FastMCP names a tool after its operationId (cut to its own limit); match by the id.
    by_operation = {}
    names = {t.name for t in tools}
    for path, item in (doc.get("paths") or {}).items():
        for method in METHODS:
            op = (item or {}).get(method)
            if isinstance(op, dict) and op.get("operationId"):
                # It drops what is not a letter, digit or `_` (`issues/create` → `issuescreate`).
                wanted = plain(op["operationId"])
                candidates = [n for n in names if plain(n) == wanted or wanted.startswith(plain(n))]
                if candidates:
                    by_operation[(method, path)] = max(candidates, key=len)
    return tools, by_operation


async def main():
    binary, work = sys.argv[1], sys.argv[2]
    rows = []
    for arg in sys.argv[3:]:
        name, spec = arg.split("=", 1)
        doc = load(spec)
        required = required_body_fields(doc)
        optional = optional_structured_body_fields(doc)
        spelled_by_api = api_enum_values(doc)
        # A catalog `serve` refuses (or a document FastMCP cannot take) is a row that says so.
        try:
            ours, ours_ops = await toolhost_tools(binary, spec, os.path.join(work, plain(name)))
            a = count(ours, ours_ops, required, optional, spelled_by_api) | {"tools": len(ours)}
        except Exception as e:  # noqa: BLE001 - any failure is the row's result
            print(f"{name}: toolhost: {e}", file=sys.stderr)
            a = None
        try:
            theirs, theirs_ops = await fastmcp_tools(doc)
            b = count(theirs, theirs_ops, required, optional, spelled_by_api) | {"tools": len(theirs)}
        except Exception as e:  # noqa: BLE001
            print(f"{name}: FastMCP: {e}", file=sys.stderr)
            b = None
        rows.append((name, a, b))

    def cell(x, key, of=None):
        if x is None:
            return "fails"
        return f"{x[key]} of {x[of]}" if of else str(x[key])

    print(
        "| description | tools (toolhost / FastMCP) | inputs | inputs with a real description"
        " | enum inputs spelled as the API spells them / all enum inputs | inputs with a `default`"
        " | optional array/object body fields kept | required body fields kept |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for name, a, b in rows:
        print(
            f"| {name} | {cell(a, 'tools')} / {cell(b, 'tools')}"
            f" | {cell(a, 'inputs')} / {cell(b, 'inputs')}"
            f" | {cell(a, 'described', 'inputs')} / {cell(b, 'described', 'inputs')}"
            f" | {cell(a, 'spelled', 'enums')} / {cell(b, 'spelled', 'enums')}"
            f" | {cell(a, 'defaults')} / {cell(b, 'defaults')}"
            f" | {cell(a, 'optional', 'optional_wanted')} / {cell(b, 'optional', 'optional_wanted')}"
            f" | {cell(a, 'served', 'wanted')} / {cell(b, 'served', 'wanted')} |"
        )

if __name__ == "__main__":
    asyncio.run(main())
