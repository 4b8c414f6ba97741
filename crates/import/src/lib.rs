//! `toolhost import openapi`: a catalog of sculpted (`http`) tools from an OpenAPI 3.0/3.1 or
//! Swagger 2.0 description (issue #13). One tool per operation; scalar parameters and top-level
//! scalar JSON (or form) body properties as inputs; the 2xx JSON response's top-level properties
//! as outputs; the first server as `base_url`; security schemes as `auth` reading
//! `{{secret.NAME}}`. What cannot be a scalar input is reported, never dropped silently, and an
//! overlay can take it as a JSON string or fix it. An overlay ([`overlay`]) sculpts the
//! imported tools; a re-import into an existing file ([`merge`]) keeps every version already
//! there and adds the new signature as the next version, or as a new tool when it breaks
//! callers. The output is deterministic YAML, one file per toolkit, each tool commented with
//! the operation it came from.

pub mod document;
pub mod merge;
pub mod overlay;
pub mod tools;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

/// The catalog's limits: names, descriptions.
pub(crate) const MAX_NAME: usize = 64;
pub(crate) const MAX_DESCRIPTION: usize = 1999;
/// The longest toolkit name made from a title.
const MAX_TOOLKIT: usize = 24;
/// OTC names a tool `Toolkit_tool`, at most 64 characters in all.
pub(crate) const MAX_OTC_NAME: usize = 64;
/// The largest integer every JSON reader keeps exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;
/// How deep `$ref`s are followed before a schema is cut (recursive schemas).
const MAX_REF_DEPTH: usize = 16;
/// The name of the one step of an imported operation's tool.
pub(crate) const STEP: &str = "call";

/// What to import.
#[derive(Debug, Default)]
pub struct Options {
    /// The toolkit's name; from the overlay, else the document's title when absent.
    pub toolkit: Option<String>,
    /// Overrides the first server's URL.
    pub base_url: Option<String>,
    /// Only operations whose `operationId` (or generated name) matches one of these globs.
    pub operations: Vec<String>,
    /// Only operations with one of these tags.
    pub tags: Vec<String>,
    /// How to sculpt the imported tools.
    pub overlay: Option<overlay::Overlay>,
}

/// The imported toolkit, before it is written.
#[derive(Debug)]
pub struct Imported {
    pub toolkit: String,
    pub title: String,
    /// The toolkit's `backend:` defaults (kind, base_url, auth).
    pub defaults: Value,
    pub tools: Vec<Draft>,
    pub notes: Vec<String>,
    pub secrets: BTreeSet<String>,
    /// What the operator set (a flag, the overlay), which a re-import writes over the file's
    /// own values; see [`overlay::Overlay::fixed`].
    pub fixed: BTreeSet<String>,
}

impl Imported {
    /// The catalog file's name.
    pub fn file_name(&self) -> String {
        format!("{}.yaml", snake(&self.toolkit))
    }
}

/// One tool as imported (and sculpted), before it is written.
#[derive(Debug, Clone)]
pub struct Draft {
    /// `GET /pets/{petId}`, or the operations a combined tool chains.
    pub source: String,
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    /// Catalog inputs, as written in a catalog.
    pub inputs: Vec<Value>,
    pub outputs: Vec<Value>,
    /// The backend's steps, as written in a catalog.
    pub steps: Vec<Value>,
    /// The backend's `outputs` mapping.
    pub mapping: Value,
    /// Fields of the request that are not scalars, left out unless the overlay places them.
    pub structured: Vec<Structured>,
    /// The version's own `auth`, when it is not the toolkit's.
    pub auth: Option<Value>,
    /// The whole backend, for a tool that is not an HTTP recipe (an upstream's tool).
    pub backend: Option<Value>,
    /// Behaviour hints (`read_only`, `destructive`, `idempotent`, `open_world`).
    pub annotations: Option<Value>,
    /// The upstream's own semver for this signature (another toolhost's, over N-ACT or OTC):
    /// the catalog version it is written as, so a version is the same at both ends.
    pub version: Option<semver::Version>,
}

/// A request field that cannot be a scalar input.
#[derive(Debug, Clone)]
pub struct Structured {
    /// The name as the API spells it.
    pub name: String,
    /// Where it goes in the step: `query`, `headers`, `body` or `form`.
    pub place: &'static str,
    pub schema: Value,
    pub required: bool,
    pub description: String,
}

impl Draft {
    /// The tool as a catalog entry with one version.
    /// The version a new tool starts at: the upstream's own, else 1.0.0.
    pub fn first_version(&self) -> String {
        self.version
            .as_ref()
            .map_or_else(|| "1.0.0".to_owned(), ToString::to_string)
    }

    pub fn to_tool(&self, version: &str) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), json!(self.name));
        tool.insert("description".into(), json!(self.description));
        if !self.tags.is_empty() {
            tool.insert("tags".into(), json!(self.tags));
        }
        if let Some(annotations) = &self.annotations {
            tool.insert("annotations".into(), annotations.clone());
        }
        tool.insert("versions".into(), json!([self.to_version(version)]));
        Value::Object(tool)
    }

    /// The draft as one version of a tool.
    pub fn to_version(&self, version: &str) -> Value {
        let mut backend = match &self.backend {
            Some(backend) => backend.clone(),
            None => json!({"kind": "http", "steps": self.steps, "outputs": self.mapping}),
        };
        if let Some(auth) = &self.auth {
            backend["auth"] = auth.clone();
        }
        let mut entry = json!({"version": version, "inputs": self.inputs, "backend": backend});
        if self.outputs.is_empty() {
            entry["returns_nothing"] = json!(true);
        } else {
            entry["outputs"] = json!(self.outputs);
        }
        entry
    }
}

/// Builds the toolkit of `doc` (OpenAPI 3, see [`document::normalize`]), sculpted by the
/// overlay when there is one.
pub fn import(doc: &Value, options: &Options) -> Result<Imported, String> {
    let mut notes = Vec::new();
    let mut secrets = BTreeSet::new();
    let title = doc["info"]["title"].as_str().unwrap_or("an API").to_owned();
    let toolkit = options
        .toolkit
        .clone()
        .or_else(|| options.overlay.as_ref().and_then(|o| o.toolkit.clone()))
        .unwrap_or_else(|| pascal(doc["info"]["title"].as_str().unwrap_or("Imported")));
    let base_url = match &options.base_url {
        Some(url) => url.clone(),
        None => server_url(doc).ok_or("the document has no `servers` (or `host`); pass --base-url")?,
    };
    let schemes = schemes(doc, &toolkit);
    let mut picked: Vec<Option<String>> = Vec::new();
    // Tool names leave room for the toolkit's in OTC's `Toolkit_tool`.
    let budget = MAX_OTC_NAME.saturating_sub(toolkit.len() + 1).clamp(16, MAX_NAME);
    let mut tools = Vec::new();
    let mut names = BTreeSet::new();
    let paths = doc["paths"].as_object().cloned().unwrap_or_default();
    for (path, item) in &paths {
        let item = resolve(doc, item, 0).unwrap_or(Value::Null);
        for method in ["get", "put", "post", "delete", "patch", "head", "options"] {
            let Some(op) = item.get(method) else { continue };
            let where_ = format!("{} {path}", method.to_uppercase());
            let op_tags: Vec<String> = op["tags"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect();
            if !options.tags.is_empty() && !op_tags.iter().any(|t| options.tags.contains(t)) {
                continue;
            }
            let base_name = op["operationId"]
                .as_str()
                .map(snake)
                .unwrap_or_else(|| snake(&format!("{method} {path}")));
            if !options.operations.is_empty() && !options.operations.iter().any(|g| glob(g, &base_name)) {
                continue;
            }
            let name = unique_within(&base_name, &mut names, budget);
            let mut params: Vec<Value> = item["parameters"].as_array().cloned().unwrap_or_default();
            params.extend(op["parameters"].as_array().cloned().unwrap_or_default());
            picked.push(match pick_scheme(doc, op, &schemes) {
                Ok(scheme) => scheme,
                Err(why) => {
                    notes.push(format!(
                        "{where_}: none of its security schemes can be used by a server ({why}); it is imported without credentials, so the API may refuse it"
                    ));
                    None
                }
            });
            tools.push(draft(
                doc, name, where_, method, path, op, &params, &op_tags, &mut notes,
            ));
        }
    }
    if tools.is_empty() {
        return Err("no operation matched; check --operations and --tags".to_owned());
    }
    for d in &tools {
        for field in &d.structured {
            notes.push(format!(
                "{}: `{}` is not a scalar (object, array or a union), so it is left out{}; an overlay can take it as a JSON string (`json: [{}]`) or fix it (`set`)",
                d.source,
                field.name,
                if field.required { " although the API requires it" } else { "" },
                field.name
            ));
        }
    }
    let mut defaults = json!({"kind": "http", "base_url": base_url});
    // APIs that can answer in several formats (JSON or XML, say) pick by `Accept`: ask for the
    // JSON the outputs are read from.
    if json_answers(doc) {
        defaults["headers"] = json!({"Accept": "application/json"});
    }
    // The toolkit's `auth` is what most operations use (a scheme, or none); the others say
    // their own.
    let mut counts: std::collections::BTreeMap<Option<&str>, usize> = std::collections::BTreeMap::new();
    for scheme in &picked {
        *counts.entry(scheme.as_deref()).or_default() += 1;
    }
    let default = counts
        .iter()
        .max_by_key(|(name, n)| (**n, std::cmp::Reverse(**name)))
        .and_then(|(name, _)| name.map(str::to_owned));
    if let Some((auth, _)) = default.as_ref().and_then(|d| schemes.usable.get(d)) {
        defaults["auth"] = auth.clone();
    }
    user_token_note(&schemes, &picked, &mut notes);
    for (draft, scheme) in tools.iter_mut().zip(&picked) {
        if let Some((_, names)) = scheme.as_ref().and_then(|s| schemes.usable.get(s)) {
            secrets.extend(names.iter().cloned());
        }
        if *scheme != default {
            draft.auth = Some(match scheme.as_ref().and_then(|s| schemes.usable.get(s)) {
                Some((auth, _)) => auth.clone(),
                None => json!("none"),
            });
        }
    }
    let mut fixed: BTreeSet<String> = options.base_url.iter().map(|_| "base_url".to_owned()).collect();
    if let Some(overlay) = &options.overlay {
        tools = overlay.apply(tools, &mut notes)?;
        overlay.apply_toolkit(&mut defaults);
        secrets = overlay::secrets(&defaults, &tools);
        fixed.extend(overlay.fixed());
    }
    overlay::require_left_out(&mut tools);
    Ok(Imported {
        toolkit,
        title,
        defaults,
        tools,
        notes,
        secrets,
        fixed,
    })
}

/// The catalog file's text: the toolkit with `tools` (catalog entries), each commented with
/// where it came from when known.
pub fn render(imported: &Imported, tools: &[(Option<String>, Value)]) -> String {
    let mut yaml = String::new();
    let _ = writeln!(
        yaml,
        "# Imported from {} by `toolhost import {}`; sculpt it with an overlay (--overlay),",
        imported.title,
        if imported.defaults["kind"] == "http" {
            "openapi"
        } else {
            "tools"
        }
    );
    let _ = writeln!(
        yaml,
        "# not by editing this file: a re-import rewrites it, keeping every version it holds."
    );
    if !imported.secrets.is_empty() {
        let _ = writeln!(
            yaml,
            "# Secrets to put in the server's [secrets]: {}.",
            imported.secrets.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let _ = writeln!(yaml, "toolkits:");
    let _ = writeln!(yaml, "  - name: {}", scalar(&json!(imported.toolkit)));
    let _ = writeln!(yaml, "    backend: {}", imported.defaults);
    let _ = writeln!(yaml, "    tools:");
    for (comment, tool) in tools {
        if let Some(comment) = comment {
            let _ = writeln!(yaml, "      # {comment}");
        }
        emit_tool(&mut yaml, tool);
    }
    yaml
}

/// One catalog tool as YAML: a block per tool and version, flow (JSON) style below that.
fn emit_tool(yaml: &mut String, tool: &Value) {
    let Some(fields) = tool.as_object() else { return };
    let _ = writeln!(yaml, "      - name: {}", scalar(&fields["name"]));
    for (key, value) in fields {
        if key != "name" && key != "versions" {
            let _ = writeln!(yaml, "        {key}: {}", scalar(value));
        }
    }
    let _ = writeln!(yaml, "        versions:");
    for version in fields.get("versions").and_then(Value::as_array).into_iter().flatten() {
        let Some(fields) = version.as_object() else { continue };
        let _ = writeln!(yaml, "          - version: {}", scalar(&fields["version"]));
        // The signature first, then the rest, each group in a fixed order.
        let first = ["description", "inputs", "outputs", "returns_nothing"];
        let ordered = first
            .iter()
            .filter_map(|k| fields.get_key_value(*k))
            .chain(fields.iter().filter(|(k, _)| !first.contains(&k.as_str())));
        for (key, value) in ordered {
            match (key.as_str(), value) {
                ("version", _) => {}
                ("inputs" | "outputs", Value::Array(items)) if !items.is_empty() => {
                    let _ = writeln!(yaml, "            {key}:");
                    for item in items {
                        let _ = writeln!(yaml, "              - {item}");
                    }
                }
                _ => {
                    let _ = writeln!(yaml, "            {key}: {}", scalar(value));
                }
            }
        }
    }
}

/// A value on one line: identifiers and versions as they are, anything else as JSON (which is
/// YAML).
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s)
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                && s.starts_with(|c: char| c.is_ascii_alphabetic() || c.is_ascii_digit())
                && !matches!(
                    s.to_ascii_lowercase().as_str(),
                    "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
                )
                && (s.parse::<f64>().is_err() || s.matches('.').count() > 1) =>
        {
            s.clone()
        }
        other => other.to_string(),
    }
}

/// One operation's tool.
#[allow(clippy::too_many_arguments)]
fn draft(
    doc: &Value,
    name: String,
    where_: String,
    method: &str,
    path: &str,
    op: &Value,
    params: &[Value],
    tags: &[String],
    notes: &mut Vec<String>,
) -> Draft {
    let mut inputs: Vec<Value> = Vec::new();
    let mut input_names = BTreeSet::new();
    let mut structured = Vec::new();
    let mut query = Map::new();
    let mut headers = Map::new();
    let mut body = Map::new();
    let mut form = Map::new();
    // Some descriptions tell apart operations on one path by a fragment (`/x#variant`), which
    // is never sent.
    let mut template_path = path.split('#').next().unwrap_or_default().to_owned();
    let mut add_input =
        |original: &str, place: &'static str, schema: &Value, required: bool, description: &str| -> Option<String> {
            let Some(mut input) = scalar_input(schema) else {
                structured.push(Structured {
                    name: original.to_owned(),
                    place,
                    schema: schema.clone(),
                    required,
                    description: description.to_owned(),
                });
                return None;
            };
            let input_name = unique(&snake(original), &mut input_names);
            input["name"] = json!(input_name);
            input["description"] = json!(describe(description, schema, original));
            if !required {
                input["required"] = json!(false);
            }
            inputs.push(input);
            Some(input_name)
        };
    let hole = |n: &str| json!(format!("{{{{input.{n}}}}}"));
    for p in params {
        let p = resolve(doc, p, 0).unwrap_or(Value::Null);
        let (Some(original), Some(location)) = (p["name"].as_str(), p["in"].as_str()) else {
            continue;
        };
        // A Swagger 2.0 parameter in another file keeps its type beside its name.
        let schema = match p.get("schema") {
            None if p.get("type").is_some() => p.clone(),
            _ => resolve_noted(
                doc,
                &p["schema"],
                &format!("{where_}: parameter `{}`", p["name"].as_str().unwrap_or("?")),
                notes,
            ),
        };
        let description = p["description"].as_str().unwrap_or_default();
        let required = p["required"].as_bool().unwrap_or(location == "path");
        match location {
            "cookie" => notes.push(format!("{where_}: cookie parameter `{original}` is skipped")),
            "path" => match add_input(original, "path", &schema, true, description) {
                Some(n) => {
                    template_path = template_path.replace(&format!("{{{original}}}"), &format!("{{{{input.{n}}}}}"));
                }
                None => notes.push(format!(
                    "{where_}: path parameter `{original}` is not a scalar; the tool cannot call this operation until an overlay sets it"
                )),
            },
            "query" => {
                // A list of scalars (`?status=a&status=b`, or `a,b` unexploded): a string input
                // of comma-separated values, each checked by the pattern when they are an enum.
                let items = resolve(doc, &schema["items"], 0).unwrap_or(Value::Null);
                if types(&schema) == ["array"] && scalar_input(&items).is_some() {
                    let mut list = items.clone();
                    let one = match scalar_input(&items).and_then(|i| i["pattern"].as_str().map(str::to_owned)) {
                        Some(p) if items.get("enum").is_some() => Some(p.trim_start_matches('^').trim_end_matches('$').to_owned()),
                        _ => None,
                    };
                    if let Some(o) = list.as_object_mut() {
                        o.remove("enum");
                        o.insert("type".into(), json!("string"));
                        if let Some(one) = &one {
                            o.insert("pattern".into(), json!(format!("^{one}(,{one})*$")));
                        }
                    }
                    let text = format!(
                        "{} Several values are separated by commas.",
                        describe(description, &items, original).trim_end()
                    );
                    if let Some(n) = add_input(original, "query", &list, required, &text) {
                        let exploded = p["explode"].as_bool().unwrap_or(true);
                        let value = if exploded {
                            json!({"jq": format!(".input.{n} | split(\",\")")})
                        } else {
                            hole(&n)
                        };
                        query.insert(original.to_owned(), value);
                    }
                } else if let Some(n) = add_input(original, "query", &schema, required, description) {
                    query.insert(original.to_owned(), hole(&n));
                }
            }
            "header" => {
                if let Some(n) = add_input(original, "headers", &schema, required, description) {
                    headers.insert(original.to_owned(), hole(&n));
                }
            }
            _ => {}
        }
    }
    let request_body = resolve(doc, &op["requestBody"], 0).unwrap_or(Value::Null);
    if let Some(content) = request_body["content"].as_object() {
        let json_media = content
            .iter()
            .find(|(media, _)| media.as_str() == "application/json" || media.ends_with("+json"));
        let form_media = content.get("application/x-www-form-urlencoded");
        match (json_media, form_media) {
            (Some((_, media)), _) | (None, Some(media)) => {
                let (place, target) = if json_media.is_some() {
                    ("body", &mut body)
                } else {
                    ("form", &mut form)
                };
                let schema = resolve(doc, &media["schema"], 0).unwrap_or(Value::Null);
                let required: BTreeSet<&str> = schema["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let body_required = request_body["required"].as_bool().unwrap_or(false);
                for (prop, prop_schema) in schema["properties"].as_object().into_iter().flatten() {
                    let prop_schema =
                        resolve_noted(doc, prop_schema, &format!("{where_}: body property `{prop}`"), notes);
                    if prop_schema["readOnly"].as_bool() == Some(true) {
                        continue;
                    }
                    let description = prop_schema["description"].as_str().unwrap_or_default().to_owned();
                    let needed = required.contains(prop.as_str()) && body_required;
                    if let Some(n) = add_input(prop, place, &prop_schema, needed, &description) {
                        target.insert(prop.clone(), hole(&n));
                    }
                }
                if schema["properties"].as_object().is_none_or(Map::is_empty) && json_media.is_some() {
                    // A body that is not an object of properties (an array, a free-form object):
                    // one structured field standing for the whole body.
                    structured.push(Structured {
                        name: "body".to_owned(),
                        place: "whole_body",
                        schema: schema.clone(),
                        required: body_required,
                        description: schema["description"].as_str().unwrap_or("The request body.").to_owned(),
                    });
                }
            }
            (None, None) => notes.push(format!(
                "{where_}: a request body that is neither JSON nor a form ({}) is skipped",
                content.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }
    let (outputs, mapping) = outputs(doc, op);
    let mut step = json!({"name": STEP, "method": method.to_uppercase(), "path": template_path});
    if !query.is_empty() {
        step["query"] = Value::Object(query);
    }
    if !headers.is_empty() {
        step["headers"] = Value::Object(headers);
    }
    if !body.is_empty() {
        step["body"] = Value::Object(body);
    }
    if !form.is_empty() {
        step["form"] = Value::Object(form);
    }
    let description = description(op, &where_);
    Draft {
        source: where_,
        name,
        description,
        tags: tags.iter().filter(|t| !t.trim().is_empty()).cloned().collect(),
        inputs,
        outputs,
        steps: vec![step],
        mapping,
        structured,
        auth: None,
        backend: None,
        // GET, HEAD and OPTIONS are safe and idempotent (RFC 9110 §9.2); the rest say nothing.
        version: None,
        annotations: matches!(method, "get" | "head" | "options")
            .then(|| json!({"read_only": true, "idempotent": true})),
    }
}

/// The outputs of an operation: the 2xx JSON response's top-level scalar properties, typed;
/// else one `json` output with the whole body.
fn outputs(doc: &Value, op: &Value) -> (Vec<Value>, Value) {
    let whole = (
        vec![json!({"name": "result", "type": "json", "required": false, "description": "The upstream's answer."})],
        json!({"result": format!("{STEP}.body")}),
    );
    let responses = op["responses"].as_object().cloned().unwrap_or_default();
    let Some(ok) = responses
        .iter()
        .find(|(code, _)| code.starts_with('2'))
        .map(|(_, r)| resolve(doc, r, 0).unwrap_or(Value::Null))
    else {
        return whole;
    };
    let schema = resolve(doc, &ok["content"]["application/json"]["schema"], 0).unwrap_or(Value::Null);
    let Some(properties) = schema["properties"].as_object().filter(|p| !p.is_empty()) else {
        return whole;
    };
    let mut outs = Vec::new();
    let mut mapping = Map::new();
    let mut names = BTreeSet::new();
    for (prop, prop_schema) in properties {
        let prop_schema = resolve(doc, prop_schema, 0).unwrap_or(Value::Null);
        let plain = prop.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && prop.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if !plain {
            continue;
        }
        let name = unique(&snake(prop), &mut names);
        let kind = match types(&prop_schema).as_slice() {
            ["string"] if prop_schema.get("enum").is_none() => "string",
            ["integer"] => "int",
            ["number"] => "number",
            ["boolean"] => "boolean",
            _ => "json",
        };
        outs.push(json!({
            "name": name, "type": kind, "required": false,
            "description": describe(prop_schema["description"].as_str().unwrap_or_default(), &prop_schema, prop),
        }));
        mapping.insert(name, json!(format!("{STEP}.body.{prop}")));
    }
    if outs.is_empty() {
        return whole;
    }
    (outs, Value::Object(mapping))
}

/// A catalog input for a scalar schema (type and constraints), or `None`.
pub(crate) fn scalar_input(schema: &Value) -> Option<Value> {
    let ty = types(schema);
    // No `type`, but a shape (properties, items, a union): not a scalar either.
    let structured = ["properties", "items", "oneOf", "anyOf"]
        .iter()
        .any(|k| schema.get(*k).is_some());
    if ty.is_empty() && structured {
        return None;
    }
    let mut input = Map::new();
    match ty.as_slice() {
        ["string"] | [] if schema.get("enum").is_none() => {
            input.insert("type".into(), json!("string"));
            if let Some(n) = schema["maxLength"].as_u64() {
                input.insert("max_length".into(), json!(n));
            }
            if let Some(p) = schema["pattern"].as_str() {
                input.insert("pattern".into(), json!(p));
            }
            Some(Value::Object(input))
        }
        ["string"] | [] => {
            // Enum values as written (catalog enums are UPPER_SNAKE, APIs' rarely are): a
            // string whose pattern allows exactly them, listed in the description.
            let values: Vec<String> = schema["enum"]
                .as_array()?
                .iter()
                .filter_map(|v| v.as_str().map(regex_escape))
                .collect();
            input.insert("type".into(), json!("string"));
            input.insert("pattern".into(), json!(format!("^({})$", values.join("|"))));
            Some(Value::Object(input))
        }
        ["integer"] => {
            input.insert("type".into(), json!("int"));
            if let Some(n) = schema.get("minimum").filter(|v| v.is_i64() || v.is_u64()) {
                input.insert("min".into(), n.clone());
            }
            // A catalog int without `max` stops at N-ACT's default (65535): an id above it would
            // be refused. An API's integer without a maximum goes as far as its format does,
            // JSON's safe integers at most.
            let max = schema
                .get("maximum")
                .filter(|v| v.is_i64() || v.is_u64())
                .cloned()
                .unwrap_or_else(|| match schema["format"].as_str() {
                    Some("int32") => json!(i32::MAX),
                    _ => json!(MAX_SAFE_INTEGER),
                });
            input.insert("max".into(), max);
            Some(Value::Object(input))
        }
        ["number"] => {
            input.insert("type".into(), json!("number"));
            if let Some(n) = schema.get("minimum").filter(|v| v.is_number()) {
                input.insert("min".into(), n.clone());
            }
            if let Some(n) = schema.get("maximum").filter(|v| v.is_number()) {
                input.insert("max".into(), n.clone());
            }
            Some(Value::Object(input))
        }
        ["boolean"] => {
            input.insert("type".into(), json!("boolean"));
            Some(Value::Object(input))
        }
        _ => None,
    }
}

/// The JSON types a schema allows, `null` left out (3.0 `nullable`, 3.1 type arrays).
fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => Vec::new(),
    }
}

/// `value` with local `$ref`s resolved (`#/components/...`), `allOf` merged; `None` past
/// [`MAX_REF_DEPTH`] or for a reference that does not resolve.
fn resolve(doc: &Value, value: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_REF_DEPTH {
        return None;
    }
    if let Some(reference) = value.get("$ref").and_then(Value::as_str) {
        let target = doc.pointer(reference.strip_prefix('#')?)?;
        return resolve(doc, target, depth + 1);
    }
    if let Some(all) = value.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for part in all {
            let part = resolve(doc, part, depth + 1)?;
            for (k, v) in part.as_object()? {
                match k.as_str() {
                    "properties" => properties.extend(v.as_object().cloned().unwrap_or_default()),
                    "required" => required.extend(v.as_array().cloned().unwrap_or_default()),
                    _ => {
                        merged.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        if !properties.is_empty() {
            merged.insert("properties".into(), Value::Object(properties));
        }
        if !required.is_empty() {
            merged.insert("required".into(), Value::Array(required));
        }
        return Some(Value::Object(merged));
    }
    Some(value.clone())
}

/// Whether some operation answers 2xx with JSON.
fn json_answers(doc: &Value) -> bool {
    doc["paths"].as_object().into_iter().flatten().any(|(_, item)| {
        item.as_object().into_iter().flatten().any(|(_, op)| {
            op["responses"].as_object().into_iter().flatten().any(|(code, r)| {
                let r = resolve(doc, r, 0).unwrap_or(Value::Null);
                code.starts_with('2')
                    && r["content"]
                        .as_object()
                        .is_some_and(|c| c.keys().any(|m| m == "application/json" || m.ends_with("+json")))
            })
        })
    })
}

/// [`resolve`], noting a reference that does not resolve or a cycle cut at [`MAX_REF_DEPTH`]
/// (the field is then read as an untyped string), so nothing is cut silently.
fn resolve_noted(doc: &Value, value: &Value, what: &str, notes: &mut Vec<String>) -> Value {
    match resolve(doc, value, 0) {
        Some(resolved) => resolved,
        None => {
            if !value.is_null() {
                notes.push(format!(
                    "{what}: its schema's `$ref` does not resolve, or refers to itself more than {MAX_REF_DEPTH} deep; it is read as a string"
                ));
            }
            Value::Null
        }
    }
}

/// The first server's URL, its variables at their defaults.
fn server_url(doc: &Value) -> Option<String> {
    let server = doc["servers"].as_array()?.first()?;
    let mut url = server["url"].as_str()?.to_owned();
    for (name, var) in server["variables"].as_object().into_iter().flatten() {
        if let Some(default) = var["default"].as_str() {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    Some(url.trim_end_matches('/').to_owned())
}

/// The document's security schemes: each one a server can use as catalog `auth` (reading
/// secrets named after the toolkit, and the secrets it reads), or why it cannot be.
#[derive(Debug, Default)]
struct Schemes {
    usable: std::collections::BTreeMap<String, (Value, Vec<String>)>,
    unusable: std::collections::BTreeMap<String, String>,
    /// The usable schemes that stand for a user's own OAuth token, held by the server.
    user_token: BTreeSet<String>,
}

fn schemes(doc: &Value, toolkit: &str) -> Schemes {
    let mut found = Schemes::default();
    let prefix = snake(toolkit).to_uppercase();
    let mut names_taken = BTreeSet::new();
    // `PREFIX_API_KEY`; a second scheme of the same kind adds its own name.
    let mut name = |scheme: &str, what: &str| -> String {
        let plain = format!("{prefix}_{what}");
        if names_taken.insert(plain.clone()) {
            return plain;
        }
        let named = format!("{prefix}_{}_{what}", snake(scheme).to_uppercase());
        names_taken.insert(named.clone());
        named
    };
    let hole = |s: &str| format!("{{{{secret.{s}}}}}");
    for (scheme_name, scheme) in doc["components"]["securitySchemes"].as_object().into_iter().flatten() {
        let scheme = resolve(doc, scheme, 0).unwrap_or(Value::Null);
        let usable = match (
            scheme["type"].as_str(),
            scheme["scheme"].as_str().map(str::to_ascii_lowercase).as_deref(),
        ) {
            (Some("http"), Some("bearer")) => {
                let s = name(scheme_name, "TOKEN");
                Ok((json!({"bearer": hole(&s)}), vec![s]))
            }
            (Some("http"), Some("basic")) => {
                let (u, p) = (name(scheme_name, "USERNAME"), name(scheme_name, "PASSWORD"));
                Ok((
                    json!({"basic": {"username": hole(&u), "password": hole(&p)}}),
                    vec![u, p],
                ))
            }
            (Some("apiKey"), _) => {
                let key = scheme["name"].as_str().unwrap_or("X-Api-Key");
                match scheme["in"].as_str() {
                    Some(place @ ("query" | "header")) => {
                        let s = name(scheme_name, "API_KEY");
                        Ok((json!({"api_key": {place: key, "value": hole(&s)}}), vec![s]))
                    }
                    _ => Err("an API key in a cookie cannot be sent".to_owned()),
                }
            }
            (Some("oauth2"), _) => match scheme["flows"]["clientCredentials"]["tokenUrl"].as_str() {
                Some(token_url) => {
                    let (id, secret) = (name(scheme_name, "CLIENT_ID"), name(scheme_name, "CLIENT_SECRET"));
                    Ok((
                        json!({"oauth2": {"token_url": token_url, "client_id": hole(&id), "client_secret": hole(&secret)}}),
                        vec![id, secret],
                    ))
                }
                // Only a user's own token (authorization code, implicit): the roads there are
                // are a token the server holds (this default), or the caller's own, forwarded or
                // exchanged, which the overlay picks (issue #32.5).
                None if ["authorizationCode", "implicit", "password"]
                    .iter()
                    .any(|flow| scheme["flows"].get(flow).is_some()) =>
                {
                    let s = name(scheme_name, "TOKEN");
                    found.user_token.insert(scheme_name.clone());
                    Ok((json!({"bearer": hole(&s)}), vec![s]))
                }
                None => Err("an OAuth 2.0 scheme without a flow cannot be used".to_owned()),
            },
            (Some("openIdConnect"), _) => {
                let s = name(scheme_name, "TOKEN");
                found.user_token.insert(scheme_name.clone());
                Ok((json!({"bearer": hole(&s)}), vec![s]))
            }
            _ => Err("this kind of security scheme is not imported".to_owned()),
        };
        match usable {
            Ok(auth) => {
                found.usable.insert(scheme_name.clone(), auth);
            }
            Err(why) => {
                found.unusable.insert(scheme_name.clone(), why);
            }
        }
    }
    found
}

/// Says, once per scheme used, that a user's OAuth token is read from a server secret, and
/// which other roads there are.
fn user_token_note(schemes: &Schemes, picked: &[Option<String>], notes: &mut Vec<String>) {
    let used: BTreeSet<&String> = picked
        .iter()
        .flatten()
        .filter(|s| schemes.user_token.contains(*s))
        .collect();
    for scheme in used {
        let secret = schemes
            .usable
            .get(scheme)
            .and_then(|(_, names)| names.first())
            .cloned()
            .unwrap_or_default();
        notes.push(format!(
            "`{scheme}` is OAuth 2.0 with a user's own token (authorization code or implicit flow), which a server cannot fetch by itself: its operations send the server secret `{secret}` as the bearer token (a token obtained for one account). To call as each caller instead, an overlay sets `auth: {{forward: bearer}}` (the caller's token, verified by the server's [auth], sent on) or `auth: {{exchange: {{token_url, client_id, client_secret}}}}` (the caller's token exchanged, RFC 8693)"
        ));
    }
}

/// The scheme an operation is called with: the first of its security requirements (its own,
/// else the document's) that is one scheme a server can use; `Ok(None)` when it needs none.
fn pick_scheme(doc: &Value, op: &Value, schemes: &Schemes) -> Result<Option<String>, String> {
    let requirements = op.get("security").or_else(|| doc.get("security"));
    let Some(requirements) = requirements.and_then(Value::as_array).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let mut why = Vec::new();
    // A scheme the server holds credentials for is preferred to a user's token held for them.
    let mut user_token = None;
    for requirement in requirements {
        let names: Vec<&String> = requirement.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        match names.as_slice() {
            [] => return Ok(None),
            [one] if schemes.user_token.contains(*one) => {
                user_token.get_or_insert_with(|| (*one).clone());
            }
            [one] if schemes.usable.contains_key(*one) => return Ok(Some((*one).clone())),
            [one] => why.push(format!(
                "`{one}`: {}",
                schemes.unusable.get(*one).map_or("it is not defined", String::as_str)
            )),
            several => why.push(format!(
                "{} together: only one scheme can be sent",
                several
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )),
        }
    }
    match user_token {
        Some(scheme) => Ok(Some(scheme)),
        None => Err(why.join("; ")),
    }
}

/// `summary` and `description`, cut to the catalog's limit on a sentence boundary.
fn description(op: &Value, where_: &str) -> String {
    let summary = op["summary"].as_str().unwrap_or_default().trim();
    let detail = op["description"].as_str().unwrap_or_default().trim();
    let mut text = match (summary.is_empty(), detail.is_empty()) {
        (false, false) if detail.starts_with(summary) => detail.to_owned(),
        (false, false) => format!("{}. {detail}", summary.trim_end_matches('.')),
        (false, true) => summary.to_owned(),
        (true, false) => detail.to_owned(),
        (true, true) => format!("Calls {where_}."),
    };
    if text.chars().count() > MAX_DESCRIPTION {
        let cut: String = text.chars().take(MAX_DESCRIPTION).collect();
        text = match cut.rfind(". ") {
            Some(i) if i > 0 => cut[..=i].to_owned(),
            _ => cut,
        };
    }
    text
}

/// A parameter's description, with its allowed values when it is an enum; never empty.
pub(crate) fn describe(text: &str, schema: &Value, name: &str) -> String {
    let mut text = text.trim().to_owned();
    if text.is_empty() {
        text = format!("The {name}.");
    }
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        text = format!(
            "{} One of: {}.",
            text.trim_end_matches('.').to_owned() + ".",
            values.join(", ")
        );
    }
    text.chars().take(MAX_DESCRIPTION).collect()
}

/// `snake_case` of an identifier or a `METHOD /path`, starting with a letter, at most 64.
pub fn snake(text: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if matches!(c, '\'' | '’') {
            continue;
        }
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower && !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            previous_lower = false;
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
    }
    let mut out = out.trim_matches('_').to_owned();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out = format!("op_{out}");
    }
    out.chars()
        .take(MAX_NAME)
        .collect::<String>()
        .trim_end_matches('_')
        .to_owned()
}

/// `PascalCase` of a title, for a toolkit name: whole words up to [`MAX_TOOLKIT`] characters,
/// since the toolkit's name and each tool's share OTC's 63.
pub(crate) fn pascal(text: &str) -> String {
    let mut name = String::new();
    for word in snake(text).split('_') {
        let mut c = word.chars();
        let word = c
            .next()
            .map_or_else(String::new, |f| f.to_ascii_uppercase().to_string() + c.as_str());
        if !name.is_empty() && name.len() + word.len() > MAX_TOOLKIT {
            break;
        }
        name.push_str(&word);
    }
    if name.is_empty() {
        "Imported".to_owned()
    } else {
        name.chars().take(MAX_TOOLKIT).collect()
    }
}

/// `base`, or `base_2`, `base_3`… (kept within the name limit), not yet in `taken`.
fn unique(base: &str, taken: &mut BTreeSet<String>) -> String {
    unique_within(base, taken, MAX_NAME)
}

/// [`unique`] within `max` characters.
pub(crate) fn unique_within(base: &str, taken: &mut BTreeSet<String>, max: usize) -> String {
    let base: String = base
        .chars()
        .take(max)
        .collect::<String>()
        .trim_end_matches('_')
        .to_owned();
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        let stem: String = base.chars().take(max.saturating_sub(suffix.len())).collect();
        name = format!("{stem}{suffix}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// Whether `name` matches a glob with `*` (any run) and `?` (one character).
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    go(&p, &n)
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_snake_case_unique_and_bounded() {
        assert_eq!(snake("getPetById"), "get_pet_by_id");
        assert_eq!(snake("GET /pets/{petId}"), "get_pets_pet_id");
        assert_eq!(snake("123abc"), "op_123abc");
        assert!(snake(&"x".repeat(100)).len() <= MAX_NAME);
        let mut taken = BTreeSet::new();
        assert_eq!(unique("a", &mut taken), "a");
        assert_eq!(unique("a", &mut taken), "a_2");
        assert!(glob("get_*", "get_pet") && !glob("get_*", "add_pet") && glob("*pet*", "find_pets"));
        assert_eq!(pascal("Swagger Petstore - OpenAPI 3.0"), "SwaggerPetstoreOpenApi30");
        assert_eq!(
            pascal("GitHub's Official OpenAPI Spec (Octokit extension)"),
            "GitHubsOfficialOpenApi"
        );
        assert_eq!(unique_within("a_b_c", &mut BTreeSet::new(), 4), "a_b");
    }

    #[test]
    fn a_reference_cycle_or_a_dangling_reference_is_noted() {
        let doc = json!({
            "openapi": "3.0.0", "info": {"title": "t"}, "servers": [{"url": "http://x"}],
            "components": {"schemas": {"Loop": {"$ref": "#/components/schemas/Loop"}}},
            "paths": {"/a": {"post": {
                "operationId": "a",
                "parameters": [{"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/Loop"}}],
                "requestBody": {"content": {"application/json": {"schema": {"properties": {"gone": {"$ref": "#/nowhere"}}}}}},
                "responses": {}
            }}}
        });
        let imported = import(&doc, &Options::default()).unwrap();
        let notes = imported.notes.join("\n");
        assert!(
            notes.contains("parameter `q`: its schema's `$ref` does not resolve"),
            "{notes}"
        );
        assert!(notes.contains("body property `gone`"), "{notes}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Never a panic, whatever the document: every answer is a catalog or a message.
        #[test]
        fn any_document_is_imported_or_refused(
            path in "/[a-z{}/_-]{0,20}",
            op in "[a-zA-Z _-]{0,20}",
            kind in proptest::sample::select(vec!["string", "integer", "number", "boolean", "object", "array", "weird"]),
            location in proptest::sample::select(vec!["path", "query", "header", "cookie", "body"]),
            reference in "#?/?[a-z/]{0,12}",
        ) {
            let doc = json!({
                "openapi": "3.0.0", "info": {"title": op}, "servers": [{"url": "http://x"}],
                "paths": {path: {"post": {
                    "operationId": op,
                    "parameters": [{"name": op, "in": location, "schema": {"type": kind}}, {"$ref": reference}],
                    "requestBody": {"content": {"application/json": {"schema": {"properties": {"p": {"type": kind}, "q": {"$ref": reference}}}}}},
                    "responses": {"200": {"content": {"application/json": {"schema": {"$ref": reference, "properties": {"r": {"type": kind}}}}}}}
                }}}
            });
            let _ = import(&doc, &Options::default());
        }
    }
}
