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

mod answer;
pub mod document;
pub mod merge;
mod names;
mod operation;
pub mod overlay;
pub mod resources;
mod schema;
mod server;
pub mod tools;

#[cfg(test)]
mod fidelity_tests;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

pub use names::snake;
use names::{cut_note, short_title, unique};
pub(crate) use names::{glob, pascal, unique_within, words};
pub(crate) use operation::annotate;
pub(crate) use schema::scalar_input;
use schema::{MAX_REF_DEPTH, resolve};
use server::guard;

/// The methods of an OpenAPI path item a tool is drafted for.
const METHODS: [&str; 7] = ["get", "put", "post", "delete", "patch", "head", "options"];

/// The catalog's limits: names, descriptions.
pub(crate) const MAX_NAME: usize = 64;
pub(crate) const MAX_DESCRIPTION: usize = 1999;
/// The longest toolkit name made from a title.
pub(crate) const MAX_TOOLKIT: usize = 24;
/// OTC names a tool `Toolkit_tool`, at most 64 characters in all.
pub(crate) const MAX_OTC_NAME: usize = 64;
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
    /// Where the description was read (a path or a URL): a relative server URL is read
    /// against it.
    pub location: Option<String>,
    /// A server URL in a private range (or loopback) is taken; link-local never is.
    pub allow_private: bool,
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
    /// Every operation the filters let through, with the tool it became or why it did not
    /// (`import openapi --list`, issue #41.4); empty for other imports.
    pub operations: Vec<Listed>,
    /// The toolkit's federated resources (`resources:`, MCP upstreams; see [`resources`]).
    pub resources: Vec<Value>,
}

/// One operation of a description, as `import openapi --list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The tool's name (after the overlay), or `None` when it was not imported.
    pub tool: Option<String>,
    /// The operation's `operationId`, when it has one.
    pub operation_id: Option<String>,
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, as the description writes it.
    pub path: String,
    /// Why it was not imported.
    pub skipped: Option<String>,
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
        .unwrap_or_else(|| short_title(doc["info"]["title"].as_str().unwrap_or("Imported")));
    let prefix = snake(&toolkit).to_uppercase();
    let overlay_base = options.overlay.as_ref().and_then(|o| o.base_url.as_deref());
    let (base, base_note) = server::base(
        doc,
        options.base_url.as_deref().or(overlay_base),
        options.location.as_deref(),
        options.allow_private,
        &prefix,
    )?;
    notes.extend(base_note);
    let base_url = match base {
        server::Base::Url(url) => url,
        server::Base::Secret { name, why } => {
            notes.push(format!(
                "{why}: the tools read their base URL from the secret `{name}` (put the API's URL there in the server's [secrets]), or re-import with --base-url"
            ));
            secrets.insert(name.clone());
            format!("{{{{secret.{name}}}}}")
        }
    };
    let mut schemes = schemes(doc, &toolkit);
    // A token endpoint the description names gets the client secret: the same rule as the
    // server URL (issue #30.11).
    let inside: Vec<(String, String)> = schemes
        .usable
        .iter()
        .filter_map(|(name, (auth, _))| {
            let url = url::Url::parse(auth["oauth2"]["token_url"].as_str()?).ok()?;
            let why = server::internal(&url, options.allow_private).err()?;
            Some((name.clone(), why.replace("server URL", "token URL")))
        })
        .collect();
    for (name, why) in inside {
        schemes.usable.remove(&name);
        schemes.unusable.insert(name, why);
    }
    let mut picked: Vec<Option<String>> = Vec::new();
    // Tool names leave room for the toolkit's in OTC's `Toolkit_tool`.
    let budget = MAX_OTC_NAME.saturating_sub(toolkit.len() + 1).clamp(16, MAX_NAME);
    let mut tools = Vec::new();
    let mut names = BTreeSet::new();
    let mut cut: Vec<(String, String)> = Vec::new();
    let mut operations = Vec::new();
    let paths = doc["paths"].as_object().cloned().unwrap_or_default();
    for (path, item) in &paths {
        let item = resolve(doc, item, 0).unwrap_or(Value::Null);
        for method in METHODS {
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
            // The API's own operationId (`issues/get`) or the tool name made of it (`issues_get`).
            let operation_id = op["operationId"].as_str();
            if !options.operations.is_empty()
                && !options
                    .operations
                    .iter()
                    .any(|g| glob(g, &base_name) || operation_id.is_some_and(|id| glob(g, id)))
            {
                continue;
            }
            operations.push(Listed {
                tool: None,
                operation_id: operation_id.map(str::to_owned),
                method: method.to_uppercase(),
                path: path.clone(),
                skipped: None,
            });
            let name = unique_within(&base_name, &mut names, budget);
            if name != base_name {
                cut.push((base_name.clone(), name.clone()));
            }
            let mut params: Vec<Value> = item["parameters"].as_array().cloned().unwrap_or_default();
            params.extend(op["parameters"].as_array().cloned().unwrap_or_default());
            let mut draft = match operation::draft(
                doc,
                name,
                where_.clone(),
                method,
                path,
                op,
                &params,
                &op_tags,
                &mut notes,
            ) {
                Ok(draft) => draft,
                Err(why) => {
                    notes.push(format!("{where_}: skipped: {why}"));
                    if let Some(listed) = operations.last_mut() {
                        listed.skipped = Some(why);
                    }
                    continue;
                }
            };
            if let Err(why) = guard(&mut draft, &mut notes) {
                notes.push(format!("{where_}: skipped: {why}"));
                if let Some(listed) = operations.last_mut() {
                    listed.skipped = Some(why);
                }
                continue;
            }
            picked.push(match pick_scheme(doc, op, &schemes) {
                Ok(scheme) => scheme,
                Err(why) => {
                    notes.push(format!(
                        "{where_}: none of its security schemes can be used by a server ({why}); it is imported without credentials, so the API may refuse it"
                    ));
                    None
                }
            });
            tools.push(draft);
        }
    }
    if tools.is_empty() {
        return Err(if !options.operations.is_empty() || !options.tags.is_empty() {
            "no operation matched; check --operations and --tags".to_owned()
        } else if names.is_empty() {
            "the description has no operations under `paths` (only webhooks or components?); there is nothing to call"
                .to_owned()
        } else {
            format!("no operation could be imported:\n{}", notes.join("\n"))
        });
    }
    if let Some(note) = cut_note(&cut, &toolkit, budget) {
        notes.push(note);
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
    // The tool each operation became, once the overlay renamed, combined or skipped them.
    for listed in &mut operations {
        let source = format!("{} {}", listed.method, listed.path);
        listed.tool = tools.iter().find(|t| t.source == source).map(|t| t.name.clone());
        if listed.tool.is_none() && listed.skipped.is_none() {
            listed.skipped = Some("left out by the overlay (skipped, or only a step of a combined tool)".to_owned());
        }
    }
    Ok(Imported {
        toolkit,
        title,
        defaults,
        tools,
        notes,
        secrets,
        fixed,
        operations,
        resources: Vec::new(),
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
    if !imported.resources.is_empty() {
        let _ = writeln!(yaml, "    resources:");
        for entry in &imported.resources {
            let _ = writeln!(yaml, "      - {entry}");
        }
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
            "`{scheme}` is OAuth 2.0 with a user's own token (authorization code or implicit flow), which a server cannot fetch by itself: its operations send the server secret `{secret}` as the bearer token (a token obtained for one account). To call as each caller instead, an overlay sets `auth: {{exchange: {{token_url, client_id, client_secret}}}}` (the caller's token exchanged for one of the API's audience, RFC 8693) or `auth: {{forward: bearer}}` (the caller's token, verified by the server's [auth], sent on: only for an API that shares this server's audience, which the file then says with `same_audience: true` on the toolkit's backend)"
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
