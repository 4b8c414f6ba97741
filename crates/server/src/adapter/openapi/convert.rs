//! The OpenAPI 3.1 document of a catalog as one caller sees it (module docs of the parent).

use serde_json::{Map, Value, json};
use toolhost_core::catalog::{Spelling, input_schema, output_schema};
use toolhost_core::{Access, Catalog, Tool, Version};

use crate::adapter::nact::projection::Shown;

use crate::Config;

/// What the document says beside the catalog: where the routes are.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    base: String,
    title: String,
    nact: String,
    otc: String,
    woa: String,
}

impl Site {
    pub fn new(config: &Config) -> Self {
        let prefix = |p: &str| p.trim_end_matches('/').to_owned();
        Self {
            base: config.public_base(),
            title: config.server_name.clone(),
            nact: prefix(&config.nact_prefix),
            otc: prefix(&config.otc_prefix),
            woa: prefix(&config.woa_prefix),
        }
    }
}

/// What one entry of `paths` holds, built when it is written.
enum Path<'a> {
    Woa(&'a Tool),
    Nact(&'a Tool, &'a Version, Shown),
    Otc,
    Fixed(Value),
}

/// The whole document, written into `out` one path at a time: each operation is built as a
/// `Value`, written and dropped (OTC's branches too), so a 10,000-tool document never exists as
/// one tree of values (that tree took ~1.3 GB; issue #18). After each operation (and each OTC
/// branch) `spill` is given `out` to take what it wants of it (a streamed answer sends it on), so
/// the document need not exist whole either (issue #42.1); when `spill` says `false` (the
/// client went away), writing stops. Object keys come in the order a `serde_json::Map` sorts
/// them.
pub(super) fn write(out: &mut Vec<u8>, catalog: &Catalog, site: &Site, access: &Access, spill: Spill<'_>) {
    let tools: Vec<&Tool> = catalog
        .tools()
        .iter()
        .map(AsRef::as_ref)
        .filter(|t| access.allows(t))
        .collect();
    let mut paths: Vec<(String, Path<'_>)> = Vec::new();
    // WoA and N-ACT carry no call context: a tool that needs it is OTC's only.
    for tool in tools.iter().filter(|t| !t.needs_call_context()) {
        paths.push((format!("{}/agents/{}/invoke", site.woa, tool.name), Path::Woa(tool)));
        // N-ACT's projection of each version it serves (issue #38.2).
        for version in tool.served_versions() {
            if let Ok(shown) = crate::adapter::nact::projection::project(version) {
                let key = format!("{}/tools/{}/versions/{}:invoke", site.nact, tool.name, version.number);
                paths.push((key, Path::Nact(tool, version, shown)));
            }
        }
    }
    paths.push((format!("{}/tools/call", site.otc), Path::Otc));
    paths.extend(listings(site).into_iter().map(|(key, value)| (key, Path::Fixed(value))));
    // Sorted as a map's keys; where two routes share a path (prefixes configured alike), the
    // one added last stands, as a map insert would leave it.
    paths.reverse();
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    paths.dedup_by(|a, b| a.0 == b.0);
    let toolkits: std::collections::BTreeSet<&str> = tools.iter().map(|t| t.toolkit.as_str()).collect();
    let info = json!({
        "title": site.title,
        "version": env!("CARGO_PKG_VERSION"),
        "description": "The tools of this server over its REST protocols: each tool's Web of Agents invocation (named after the tool, its body the tool's input), each served version's N-ACT invocation, and OTC's call with a branch per version.",
    });
    out.push(b'{');
    entry(out, "components", &json!({"schemas": {"Problem": problem()}}));
    out.push(b',');
    entry(out, "info", &info);
    out.push(b',');
    entry(out, "openapi", &json!("3.1.0"));
    out.extend_from_slice(b",\"paths\":{");
    for (i, (key, path)) in paths.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if !spill(out) {
            return;
        }
        match path {
            Path::Woa(tool) => entry(out, key, &json!({"post": woa_invoke(tool, key)})),
            Path::Nact(tool, version, shown) => entry(out, key, &json!({"post": nact_invoke(tool, version, shown)})),
            Path::Otc => {
                write_json(out, &Value::String(key.clone()));
                out.push(b':');
                if !otc_call(out, &tools, key, spill) {
                    return;
                }
            }
            Path::Fixed(value) => entry(out, key, value),
        }
    }
    out.extend_from_slice(b"},");
    entry(out, "servers", &json!([{"url": site.base}]));
    out.push(b',');
    let tags: Vec<Value> = toolkits.iter().map(|t| json!({"name": t})).collect();
    entry(out, "tags", &Value::Array(tags));
    out.push(b'}');
}

/// What [`write`] hands the written part of the document to; `false` stops the writing.
pub(super) type Spill<'a> = &'a mut dyn FnMut(&mut Vec<u8>) -> bool;

/// `"key":value`.
fn entry(out: &mut Vec<u8>, key: &str, value: &Value) {
    write_json(out, &Value::String(key.to_owned()));
    out.push(b':');
    write_json(out, value);
}

fn write_json(out: &mut Vec<u8>, value: &Value) {
    // Writing a `Value` into a `Vec` cannot fail: its keys are strings and memory is the only
    // resource (and running out of that aborts).
    if let Err(e) = serde_json::to_writer(&mut *out, value) {
        tracing::error!(error = %e, "a part of the OpenAPI document did not serialize");
        out.extend_from_slice(b"null");
    }
}

/// The answers every invocation may give beside 200.
fn failures() -> Value {
    let content = json!({
        "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}},
        "application/json": {"schema": {"type": "object"}},
    });
    json!({
        "4XX": {"description": "The caller's mistake (a bad body, unknown tool, invalid input, too large, limited), or a tool failure retrying cannot change (422, 409 for an unknown outcome).", "content": content},
        "5XX": {"description": "An upstream failure (502), or one that may pass (503, 504; see Retry-After).", "content": content},
    })
}

/// RFC 9457 with toolhost's extension members (docs/protocols.md §3).
fn problem() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string"},
            "retryable": {"type": "boolean"},
            "code": {"type": "string"},
            "prompt": {"type": "string"},
            "errors": {"type": "object"},
        },
    })
}

/// The first sentence of a description, for `summary`.
fn summary(description: &str) -> String {
    let first = description.split(". ").next().unwrap_or(description).trim();
    first.chars().take(120).collect()
}

fn woa_invoke(tool: &Tool, key: &str) -> Value {
    let latest = tool.latest();
    let at = format!(
        "/paths/{}/post/requestBody/content/application~1json/schema/properties/input",
        pointer_token(key)
    );
    let semvers: Vec<String> = tool.served_versions().map(|v| v.semver.to_string()).collect();
    let mut responses = failures();
    responses["200"] = json!({
        "description": "The tool's output object.",
        "content": {"application/json": {"schema": tool.output_schema_for_any_version(latest)}},
    });
    json!({
        "operationId": tool.name,
        "summary": summary(&latest.description),
        "description": latest.description,
        "tags": [tool.toolkit],
        "requestBody": {
            "required": true,
            "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["input"],
                "properties": {
                    "input": rebased(latest.input_schema(), &at),
                    "agent": {"const": tool.name},
                    "operation": {"enum": ["default"]},
                    "version": {"enum": semvers, "description": "The version to run; the latest when left out."},
                },
            }}},
        },
        "responses": responses,
    })
}

/// `{name, value}` pairs, one typed branch per parameter (an empty list when there are none).
fn pairs(schema: &Value, names: &[&str]) -> Value {
    if names.is_empty() {
        return json!({"type": "array", "maxItems": 0});
    }
    let branches: Vec<Value> = names
        .iter()
        .map(|name| {
            json!({
                "type": "object",
                "required": ["name", "value"],
                "properties": {"name": {"const": name}, "value": schema["properties"][*name]},
                "additionalProperties": false,
            })
        })
        .collect();
    json!({"type": "array", "items": {"oneOf": branches}})
}

/// N-ACT's invocation of one version, as its projection shows it: enum values by name, an
/// input it cannot express left out.
fn nact_invoke(tool: &Tool, version: &Version, shown: &Shown) -> Value {
    let inputs: Vec<&str> = shown.inputs.iter().map(|p| p.name.as_str()).collect();
    let input_schema = input_schema(&shown.inputs, &Map::new(), Spelling::Names);
    let output_schema = output_schema(&version.outputs, Spelling::Names);
    let outputs: Vec<&str> = version.outputs.iter().map(|o| o.name.as_str()).collect();
    let output_pairs = if outputs.is_empty() {
        // `returns_nothing`: N-ACT shows one `json` output `result`, always null.
        pairs(&json!({"properties": {"result": {"type": "null"}}}), &["result"])
    } else {
        pairs(&output_schema, &outputs)
    };
    let mut given = pairs(&input_schema, &inputs);
    if !inputs.is_empty() {
        // Each input at most once, and every required one present.
        given["maxItems"] = json!(inputs.len());
        let required: Vec<Value> = shown
            .inputs
            .iter()
            .filter(|p| p.required)
            .map(|p| json!({"contains": {"properties": {"name": {"const": p.name}}}}))
            .collect();
        if !required.is_empty() {
            given["allOf"] = Value::Array(required);
        }
    }
    let mut body = json!({
        "type": "object",
        "properties": {"name": {"const": tool.name}, "input_parameters": given},
        "additionalProperties": false,
    });
    if shown.inputs.iter().any(|p| p.required) {
        body["required"] = json!(["input_parameters"]);
    }
    let mut responses = failures();
    responses["200"] = json!({
        "description": "The outputs as name/value pairs.",
        "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["output_parameters"],
            "properties": {"output_parameters": output_pairs, "version": {"const": version.number}},
        }}},
    });
    json!({
        "operationId": format!("nact_{}_v{}", tool.name, version.number),
        "summary": summary(&version.description),
        "description": format!("{} (N-ACT, version {} = {}.)", version.description, version.number, version.semver),
        "tags": [tool.toolkit],
        "requestBody": {"required": true, "content": {"application/json": {"schema": body}}},
        "responses": responses,
    })
}

/// `{"post": ...}` of OTC's call: a branch per served version, each written as it is built.
/// The operation around them is a `Value` with a marker where the branches go.
fn otc_call(out: &mut Vec<u8>, tools: &[&Tool], key: &str, spill: Spill<'_>) -> bool {
    let otc = format!("/paths/{}", pointer_token(key));
    const BRANCHES: &str = "\u{0}branches\u{0}";
    let mut branches = tools
        .iter()
        .flat_map(|tool| tool.served_versions().map(move |v| (tool, v)))
        .peekable();
    let request = if branches.peek().is_none() {
        json!({"type": "object"})
    } else {
        json!({"oneOf": BRANCHES})
    };
    let mut responses = failures();
    responses["200"] = json!({
        "description": "OTC's result: `success` with the `value`, or `success: false` with the tool's error and retry hints.",
        "content": {"application/json": {"schema": {"type": "object", "required": ["result"], "properties": {"result": {"type": "object"}}}}},
    });
    let operation = json!({"post": {
        "operationId": "otc_call",
        "summary": "Call a tool version (OTC 1.0)",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["request"],
            "properties": {"$schema": {"type": "string"}, "request": request},
        }}}},
        "responses": responses,
    }});
    let mut text = Vec::new();
    write_json(&mut text, &operation);
    let mut marker = Vec::new();
    write_json(&mut marker, &json!(BRANCHES));
    let Some(at) = text.windows(marker.len()).position(|w| w == marker.as_slice()) else {
        out.extend_from_slice(&text);
        return true;
    };
    out.extend_from_slice(&text[..at]);
    out.push(b'[');
    for (i, (tool, version)) in branches.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if !spill(out) {
            return false;
        }
        let at = format!(
            "{otc}/post/requestBody/content/application~1json/schema/properties/request/oneOf/{i}/properties/input"
        );
        let mut request = json!({
            "type": "object",
            "required": ["tool_id"],
            "properties": {
                "tool_id": {"const": format!("{}.{}@{}", tool.toolkit, tool.name, version.semver)},
                "input": rebased(version.input_schema(), &at),
                "call_id": {"type": "string"},
                "trace_id": {"type": "string"},
                "context": {"type": "object"},
            },
            "additionalProperties": false,
        });
        if version.inputs.iter().any(|p| p.required) {
            request["required"] = json!(["tool_id", "input"]);
        }
        write_json(out, &request);
    }
    out.push(b']');
    out.extend_from_slice(&text[at + marker.len()..]);
    true
}

/// The listing routes, described without their tools (they list them).
fn listings(site: &Site) -> Vec<(String, Value)> {
    let mut paths = Vec::new();
    let listing = |id: &str, what: &str, content_type: &str, params: Value| {
        let mut responses = failures();
        responses["200"] = json!({"description": what, "content": {content_type: {"schema": {"type": "object"}}}});
        json!({"get": {"operationId": id, "summary": what, "parameters": params, "responses": responses}})
    };
    let tool = json!({"name": "tool", "in": "path", "required": true, "schema": {"type": "string"}});
    paths.push((
        format!("{}/tools", site.nact),
        listing(
            "nact_list",
            "N-ACT: the latest signatures, paginated",
            "application/json",
            json!([
                {"name": "page_limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                {"name": "next", "in": "query", "schema": {"type": "string"}},
                {"name": "tag", "in": "query", "schema": {"type": "string"}},
                {"name": "q", "in": "query", "schema": {"type": "string"}},
            ]),
        ),
    ));
    paths.push((
        format!("{}/tools/{{tool}}", site.nact),
        listing(
            "nact_signature",
            "N-ACT: a tool's current signature",
            "application/json",
            json!([tool]),
        ),
    ));
    paths.push((
        format!("{}/tools/{{tool}}/versions", site.nact),
        listing(
            "nact_versions",
            "N-ACT: a tool's served versions",
            "application/json",
            json!([tool]),
        ),
    ));
    paths.push((
        format!("{}/tools", site.otc),
        listing("otc_list", "OTC: the tool definitions", "application/json", json!([])),
    ));
    paths.push((
        "/.well-known/woa.json".to_owned(),
        listing(
            "woa_document",
            "Web of Agents: the agents document",
            "application/woa+json",
            json!([]),
        ),
    ));
    paths
}

/// A tool's input schema placed at `at` (a JSON Pointer) in the document: each `$ref` into the
/// schema itself (`#/$defs/address`, written against the input object) rebased onto where the
/// schema now is, since in the document `#` is the document.
fn rebased(schema: &Value, at: &str) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("$ref", Value::String(r)) if r.starts_with("#/") => {
                        (k.clone(), json!(format!("#{at}{}", &r[1..])))
                    }
                    _ => (k.clone(), rebased(v, at)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| rebased(v, at)).collect()),
        other => other.clone(),
    }
}

/// One JSON Pointer reference token (RFC 6901): `~` and `/` escaped.
fn pointer_token(text: &str) -> String {
    text.replace('~', "~0").replace('/', "~1")
}
