//! `toolhost import tools SOURCE`: another tool server's tools (MCP over stdio or HTTP, N-ACT,
//! OTC, WoA) as catalog tools of kind `upstream` (issue #14), each pinned: the signature the
//! upstream gave is written into the catalog, with the hash of its definition, so what callers
//! see never changes behind the operator's back (see `toolhost_upstream`). A re-import into the
//! same file goes through [`super::merge`]: an upstream's change becomes a next version when
//! compatible, a new tool when not, and the report says which.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolhost_client::{Server, Source, lock};

use super::{Draft, Imported, glob, pascal, snake, unique_within};

/// What to take from the server.
#[derive(Debug, Default)]
pub struct Options {
    pub toolkit: Option<String>,
    /// Only tools matching one of these globs (the upstream's names).
    pub include: Vec<String>,
    /// No tool matching one of these globs.
    pub exclude: Vec<String>,
    /// Put before every tool's name (`github_`).
    pub prefix: String,
    pub overlay: Option<super::overlay::Overlay>,
    /// The credentials the server was listed with: the catalog sends the same headers, their
    /// values read from `[secrets]`.
    pub headers: Vec<(String, String)>,
}

/// The toolkit of `server`'s tools.
pub fn import(server: &Server, options: &Options) -> Result<Imported, String> {
    let toolkit = options
        .toolkit
        .clone()
        .or_else(|| options.overlay.as_ref().and_then(|o| o.toolkit.clone()))
        .unwrap_or_else(|| pascal(&default_name(&server.source)));
    let budget = super::MAX_OTC_NAME
        .saturating_sub(toolkit.len() + 1)
        .clamp(16, super::MAX_NAME);
    let mut names = BTreeSet::new();
    let mut notes: Vec<String> = server
        .skipped
        .iter()
        .map(|s| format!("skipped by the client: {s}"))
        .collect();
    let mut tools = Vec::new();
    for tool in &server.tools {
        if !options.include.is_empty() && !options.include.iter().any(|g| glob(g, &tool.name)) {
            continue;
        }
        if options.exclude.iter().any(|g| glob(g, &tool.name)) {
            continue;
        }
        // A catalog parameter is named as a JSON Schema property, an N-ACT name and an MCP
        // argument at once; the upstream backend sends arguments by the catalog's names, so a
        // name such as N-ACT Figure 3's `Flight Class` cannot be renamed here.
        let unnamed: Vec<&str> = tool
            .inputs
            .iter()
            .map(|p| p.name.as_str())
            .chain(tool.outputs.iter().map(|o| o.name.as_str()))
            .filter(|n| !is_parameter_name(n))
            .collect();
        if !unnamed.is_empty() {
            notes.push(format!(
                "`{}` skipped: its parameters {} are not catalog names (letters, digits and `_`, a letter first, at most 64), and an upstream tool's parameters keep the names it gives them",
                tool.name,
                unnamed.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ));
            continue;
        }
        // The same scalar rules as an OpenAPI import (an integer without `maximum` goes as far
        // as JSON's safe integers, an enumeration is an enum whose names map to the upstream's
        // values, `New York` as `NEW_YORK`).
        // Anything else (objects, arrays, unions) is a `json` input with its schema, `$ref`s
        // into the tool's `$defs` written out: served over MCP, OTC and WoA, not N-ACT.
        let mut inputs = Vec::new();
        let mut structured = Vec::new();
        for p in &tool.inputs {
            // An upstream's own enum (N-ACT's, another toolhost's) stays an enum, so that adding
            // a value is a compatible change on re-import, as it is there.
            let typed_enum = match &p.kind {
                toolhost_client::Kind::Typed(toolhost_core::InputType::Enum { values })
                    if values.iter().all(|v| toolhost_core::catalog::is_enum_name(&v.name)) =>
                {
                    Some(json!({
                        "type": "enum",
                        "values": values.iter().map(|v| json!({"name": v.name, "description": describe(&v.description, &v.name)})).collect::<Vec<_>>(),
                    }))
                }
                _ => None,
            };
            // A scalar keeps the upstream's `default` and examples as it wrote them (#38.4).
            let scalar = super::scalar_input(&p.schema).map(|mut input| {
                super::annotate(&mut input, &p.schema);
                input
            });
            let mut entry = typed_enum.or(scalar).unwrap_or_else(|| {
                structured.push(p.name.as_str());
                let mut schema = inline_refs(&p.schema, &tool.input_schema, 0);
                if let Some(fields) = schema.as_object_mut() {
                    fields.remove("title");
                    fields.remove("description");
                }
                json!({"type": "json", "schema": schema})
            });
            entry["name"] = json!(p.name);
            let listed = if entry["type"] == "enum" {
                &Value::Null
            } else {
                &p.schema
            };
            entry["description"] = json!(super::describe(&p.description, listed, &p.name));
            if !p.required {
                entry["required"] = json!(false);
            }
            inputs.push(entry);
        }
        if !structured.is_empty() {
            notes.push(format!(
                "`{}` takes {} that are not scalars (objects, arrays or unions): served over MCP, OTC and WoA with the schema as it is, not over N-ACT (§6.1 scalars)",
                tool.name,
                structured.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        let mut outputs: Vec<Value> = tool
            .outputs
            .iter()
            .map(|o| {
                let kind = match o.kind.as_str() {
                    k @ ("string" | "int" | "number" | "boolean") => k,
                    "integer" => "int",
                    _ => "json",
                };
                json!({"name": o.name, "type": kind, "required": o.required, "description": describe(&o.description, &o.name)})
            })
            .collect();
        if outputs.is_empty() {
            match &tool.output_schema {
                // One unnamed value (OTC's single output): typed by its schema.
                Some(schema) if !schema.is_null() => {
                    let kind = match schema.get("type").and_then(Value::as_str) {
                        Some(k @ ("string" | "number" | "boolean")) => k,
                        Some("integer") => "int",
                        _ => "json",
                    };
                    outputs.push(json!({"name": "result", "type": kind, "required": false, "description": describe(schema["description"].as_str().unwrap_or_default(), "result")}));
                }
                // An MCP tool without an output schema answers with content blocks (text,
                // images, audio, resources): one `content` output carries them as they are, so
                // the listing says the answer may carry media (issue #39.1).
                _ if tool.protocol == toolhost_client::Protocol::Mcp => {
                    outputs.push(json!({"name": "result", "type": "content", "required": false, "description": "The tool's answer as MCP content blocks: text, images, audio, resources."}));
                }
                // Anything else without outputs returns nothing.
                _ => {}
            }
        }
        let name = unique_within(&format!("{}{}", options.prefix, snake(&tool.name)), &mut names, budget);
        let mut backend = json!({
            "kind": toolhost_upstream::KIND,
            "tool": tool.name,
            "pin": lock::signature_hash(tool.protocol, &tool.definition),
            "idempotent": tool.is_idempotent(),
        });
        // N-ACT and OTC serve older versions unchanged: calls are pinned to the version
        // imported (N-ACT's number, OTC's semver), so an upstream's next version reaches callers
        // only through a re-import, and a version is the same at both ends.
        match tool.protocol {
            toolhost_client::Protocol::Nact => backend["version"] = json!(tool.version_number),
            toolhost_client::Protocol::Otc => backend["version"] = json!(tool.version),
            _ => {}
        }
        let version = match tool.protocol {
            toolhost_client::Protocol::Nact | toolhost_client::Protocol::Otc => {
                tool.version.as_deref().and_then(|v| semver::Version::parse(v).ok())
            }
            _ => None,
        };
        tools.push(Draft {
            source: format!("{} at {}", tool.name, server.endpoint),
            name,
            description: describe(&tool.description, &tool.name),
            tags: Vec::new(),
            inputs,
            outputs,
            steps: Vec::new(),
            mapping: json!({}),
            structured: Vec::new(),
            auth: None,
            backend: Some(backend),
            annotations: annotations(tool),
            version,
        });
    }
    if tools.is_empty() {
        return Err(format!(
            "{} offers no tool this import can take{}",
            server.endpoint,
            if notes.is_empty() {
                String::new()
            } else {
                format!(":\n{}", notes.join("\n"))
            }
        ));
    }
    if let Some(overlay) = &options.overlay {
        tools = overlay.apply(tools, &mut notes)?;
    }
    // A catalog is committed: credentials in the URL are left out (pass them with --bearer,
    // --api-key or --header, which the catalog reads from [secrets]).
    let endpoint = toolhost_client::text::without_credentials(&server.endpoint);
    let mut defaults =
        json!({"kind": toolhost_upstream::KIND, "source": endpoint.to_string(), "protocol": server.protocol});
    let mut secrets = BTreeSet::new();
    let prefix = snake(&toolkit).to_uppercase();
    for (header, value) in &options.headers {
        // `Bearer xyz` keeps its scheme; the secret holds the rest.
        let (scheme, what) = match value.split_once(' ') {
            Some((scheme, _)) if header.eq_ignore_ascii_case("authorization") => {
                (format!("{scheme} "), "TOKEN".to_owned())
            }
            _ if header.eq_ignore_ascii_case("otc-api-key") => (String::new(), "API_KEY".to_owned()),
            _ => (String::new(), snake(header).to_uppercase()),
        };
        let secret = format!("{prefix}_{what}");
        defaults["headers"][header] = json!(format!("{scheme}{{{{secret.{secret}}}}}"));
        secrets.insert(secret);
    }
    // The source and the credentials are given on every import: they are the operator's.
    let mut fixed: BTreeSet<String> = ["source", "protocol"].map(str::to_owned).into();
    fixed.extend(options.headers.iter().map(|(h, _)| format!("headers.{h}")));
    if let Some(overlay) = &options.overlay {
        overlay.apply_toolkit(&mut defaults);
        secrets = super::overlay::secrets(&defaults, &tools);
        fixed.extend(overlay.fixed());
    }
    Ok(Imported {
        toolkit,
        title: server.endpoint.to_string(),
        defaults,
        tools,
        notes,
        secrets,
        fixed,
        operations: Vec::new(),
        resources: Vec::new(),
    })
}

/// `schema` with every local `$ref` (`#/$defs/X`, `#/definitions/X`) replaced by what it names
/// in `root`, so it stands on its own; a cycle is cut at depth 16 into `{}` (anything).
fn inline_refs(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > 16 {
        return json!({});
    }
    match schema {
        Value::Object(fields) => {
            if let Some(target) = fields
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|pointer| root.pointer(pointer))
            {
                return inline_refs(target, root, depth + 1);
            }
            Value::Object(
                fields
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "$defs" | "definitions"))
                    .map(|(k, v)| (k.clone(), inline_refs(v, root, depth + 1)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline_refs(v, root, depth + 1)).collect()),
        other => other.clone(),
    }
}

/// The upstream's behaviour hints as catalog annotations: MCP's `annotations`
/// (`readOnlyHint`, …), else what the client read (`is_idempotent`).
fn annotations(tool: &toolhost_client::Tool) -> Option<Value> {
    let hints = &tool.definition["annotations"];
    let mut out = serde_json::Map::new();
    for (hint, key) in [
        ("readOnlyHint", "read_only"),
        ("destructiveHint", "destructive"),
        ("idempotentHint", "idempotent"),
        ("openWorldHint", "open_world"),
    ] {
        if let Some(value) = hints.get(hint).and_then(Value::as_bool) {
            out.insert(key.to_owned(), json!(value));
        }
    }
    if out.is_empty() && tool.is_idempotent() {
        out.insert("idempotent".to_owned(), json!(true));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Whether `name` may name a catalog parameter (`^[A-Za-z][A-Za-z0-9_]{0,63}$`).
fn is_parameter_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A toolkit name from where the server is: the command's program, or the URL's host.
fn default_name(source: &Source) -> String {
    match source {
        Source::Command { program, args } => {
            // `python3 server.py` is better named by the script than by the interpreter.
            let word = args.iter().find(|a| !a.starts_with('-')).unwrap_or(program);
            std::path::Path::new(word)
                .file_stem()
                .map_or_else(|| word.clone(), |s| s.to_string_lossy().into_owned())
        }
        Source::Url(url) => url.host_str().unwrap_or("upstream").to_owned(),
    }
}

/// A description, never empty.
fn describe(text: &str, name: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        format!("The {name}.")
    } else {
        text.chars().take(super::MAX_DESCRIPTION).collect()
    }
}
