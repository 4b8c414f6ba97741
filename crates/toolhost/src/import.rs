//! `toolhost import openapi`: a catalog of sculpted (`http`) tools from an OpenAPI 3.0/3.1
//! document (issue #13). One tool per operation; scalar parameters and top-level scalar JSON
//! body properties as inputs; the 2xx JSON response's top-level properties as outputs; the
//! first server as `base_url`; security schemes as `auth` reading `{{secret.NAME}}`. What
//! cannot be a scalar input is reported, never dropped silently. The output is deterministic
//! YAML, one file per toolkit, each tool commented with the operation it came from.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

/// The catalog's limits: names, descriptions.
const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1999;
/// How deep `$ref`s are followed before a schema is cut (recursive schemas).
const MAX_REF_DEPTH: usize = 16;

/// What to import.
#[derive(Debug, Default)]
pub struct Options {
    /// The toolkit's name; from the document's title when absent.
    pub toolkit: Option<String>,
    /// Overrides the first server's URL.
    pub base_url: Option<String>,
    /// Only operations whose `operationId` (or generated name) matches one of these globs.
    pub operations: Vec<String>,
    /// Only operations with one of these tags.
    pub tags: Vec<String>,
}

/// The result: the catalog file's name and text, and what the user should know.
#[derive(Debug)]
pub struct Imported {
    pub file_name: String,
    pub yaml: String,
    pub notes: Vec<String>,
    pub secrets: BTreeSet<String>,
    pub tools: usize,
}

/// Reads an OpenAPI document (YAML or JSON text).
pub fn parse(text: &str) -> Result<Value, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"));
    }
    serde_saphyr::from_str::<Value>(text).map_err(|e| format!("not valid YAML: {e}"))
}

/// Builds the catalog of `doc`.
pub fn import(doc: &Value, options: &Options) -> Result<Imported, String> {
    let version = doc["openapi"].as_str().unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        return Err(match doc["swagger"].as_str() {
            Some(v) => format!(
                "Swagger {v} documents are not imported yet; convert it to OpenAPI 3 first (e.g. with swagger2openapi)"
            ),
            None => "not an OpenAPI 3.0 or 3.1 document: `openapi` is missing or not 3.0/3.1".to_owned(),
        });
    }
    let mut notes = Vec::new();
    let mut secrets = BTreeSet::new();
    let toolkit = options
        .toolkit
        .clone()
        .unwrap_or_else(|| pascal(doc["info"]["title"].as_str().unwrap_or("Imported")));
    let base_url = match &options.base_url {
        Some(url) => url.clone(),
        None => server_url(doc).ok_or("the document has no `servers`; pass --base-url")?,
    };
    let auth = security(doc, &toolkit, &mut secrets, &mut notes);
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
            let name = unique(&base_name, &mut names);
            let mut params: Vec<Value> = item["parameters"].as_array().cloned().unwrap_or_default();
            params.extend(op["parameters"].as_array().cloned().unwrap_or_default());
            let tool = tool(doc, &name, &where_, method, path, op, &params, &op_tags, &mut notes);
            tools.push((where_, tool));
        }
    }
    if tools.is_empty() {
        return Err("no operation matched; check --operations and --tags".to_owned());
    }
    let mut yaml = String::new();
    let _ = writeln!(
        yaml,
        "# Imported from {} by `toolhost import openapi`.",
        doc["info"]["title"].as_str().unwrap_or("an OpenAPI document")
    );
    if !secrets.is_empty() {
        let _ = writeln!(
            yaml,
            "# Secrets to put in the server's [secrets]: {}.",
            secrets.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let _ = writeln!(yaml, "toolkits:");
    let _ = writeln!(yaml, "  - name: {toolkit}");
    let mut defaults = json!({"kind": "http", "base_url": base_url});
    if let Some(auth) = auth {
        defaults["auth"] = auth;
    }
    let _ = writeln!(yaml, "    backend: {defaults}");
    let _ = writeln!(yaml, "    tools:");
    let count = tools.len();
    for (where_, tool) in tools {
        let _ = writeln!(yaml, "      # {where_}");
        yaml.push_str(&tool);
    }
    Ok(Imported {
        file_name: format!("{}.yaml", snake(&toolkit)),
        yaml,
        notes,
        secrets,
        tools: count,
    })
}

/// One tool, as YAML lines.
#[allow(clippy::too_many_arguments)]
fn tool(
    doc: &Value,
    name: &str,
    where_: &str,
    method: &str,
    path: &str,
    op: &Value,
    params: &[Value],
    tags: &[String],
    notes: &mut Vec<String>,
) -> String {
    let mut inputs: Vec<Value> = Vec::new();
    let mut input_names = BTreeSet::new();
    let mut query = Map::new();
    let mut headers = Map::new();
    let mut body = Map::new();
    let mut template_path = path.to_owned();
    let mut add_input = |original: &str,
                         schema: &Value,
                         required: bool,
                         description: &str,
                         notes: &mut Vec<String>|
     -> Option<String> {
        let Some(mut input) = scalar_input(schema) else {
            notes.push(format!("{where_}: `{original}` is not a scalar (object, array or a union), so it is left out; fix it to a constant or take it as a JSON string in the catalog"));
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
    for p in params {
        let p = resolve(doc, p, 0).unwrap_or(Value::Null);
        let (Some(original), Some(location)) = (p["name"].as_str(), p["in"].as_str()) else {
            continue;
        };
        let schema = resolve(doc, &p["schema"], 0).unwrap_or(Value::Null);
        let description = p["description"].as_str().unwrap_or_default();
        let required = p["required"].as_bool().unwrap_or(location == "path");
        match location {
            "cookie" => notes.push(format!("{where_}: cookie parameter `{original}` is skipped")),
            "path" => {
                if let Some(n) = add_input(original, &schema, true, description, notes) {
                    template_path = template_path.replace(&format!("{{{original}}}"), &format!("{{{{input.{n}}}}}"));
                }
            }
            "query" => {
                if let Some(n) = add_input(original, &schema, required, description, notes) {
                    query.insert(original.to_owned(), json!(format!("{{{{input.{n}}}}}")));
                }
            }
            "header" => {
                if let Some(n) = add_input(original, &schema, required, description, notes) {
                    headers.insert(original.to_owned(), json!(format!("{{{{input.{n}}}}}")));
                }
            }
            _ => {}
        }
    }
    let request_body = resolve(doc, &op["requestBody"], 0).unwrap_or(Value::Null);
    if let Some(content) = request_body["content"].as_object() {
        match content.get("application/json") {
            Some(media) => {
                let schema = resolve(doc, &media["schema"], 0).unwrap_or(Value::Null);
                let required: BTreeSet<&str> = schema["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                for (prop, prop_schema) in schema["properties"].as_object().into_iter().flatten() {
                    let prop_schema = resolve(doc, prop_schema, 0).unwrap_or(Value::Null);
                    let description = prop_schema["description"].as_str().unwrap_or_default().to_owned();
                    let needed =
                        required.contains(prop.as_str()) && request_body["required"].as_bool().unwrap_or(false);
                    if let Some(n) = add_input(prop, &prop_schema, needed, &description, notes) {
                        body.insert(prop.clone(), json!(format!("{{{{input.{n}}}}}")));
                    }
                }
            }
            None => notes.push(format!(
                "{where_}: a request body that is not JSON ({}) is skipped",
                content.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }
    let (outputs, mapping) = outputs(doc, op);
    let mut step = json!({"name": "call", "method": method.to_uppercase(), "path": template_path});
    if !query.is_empty() {
        step["query"] = Value::Object(query);
    }
    if !headers.is_empty() {
        step["headers"] = Value::Object(headers);
    }
    if !body.is_empty() {
        step["body"] = Value::Object(body);
    }
    let description = description(op, where_);
    let mut yaml = String::new();
    let _ = writeln!(yaml, "      - name: {name}");
    let _ = writeln!(yaml, "        description: {}", json!(description));
    let tags: Vec<String> = tags.iter().filter(|t| !t.trim().is_empty()).cloned().collect();
    if !tags.is_empty() {
        let _ = writeln!(yaml, "        tags: {}", json!(tags));
    }
    let _ = writeln!(yaml, "        versions:");
    let _ = writeln!(yaml, "          - version: 1.0.0");
    if inputs.is_empty() {
        let _ = writeln!(yaml, "            inputs: []");
    } else {
        let _ = writeln!(yaml, "            inputs:");
        for input in &inputs {
            let _ = writeln!(yaml, "              - {input}");
        }
    }
    let _ = writeln!(yaml, "            outputs:");
    for output in &outputs {
        let _ = writeln!(yaml, "              - {output}");
    }
    let backend = json!({"kind": "http", "steps": [step], "outputs": mapping});
    let _ = writeln!(yaml, "            backend: {backend}");
    yaml
}

/// The outputs of an operation: the 2xx JSON response's top-level scalar properties, typed;
/// else one `json` output with the whole body.
fn outputs(doc: &Value, op: &Value) -> (Vec<Value>, Value) {
    let whole = (
        vec![json!({"name": "result", "type": "json", "required": false, "description": "The upstream's answer."})],
        json!({"result": "call.body"}),
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
        mapping.insert(name, json!(format!("call.body.{prop}")));
    }
    if outs.is_empty() {
        return whole;
    }
    (outs, Value::Object(mapping))
}

/// A catalog input for a scalar schema (type and constraints), or `None`.
fn scalar_input(schema: &Value) -> Option<Value> {
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
            if let Some(n) = schema.get("maximum").filter(|v| v.is_i64() || v.is_u64()) {
                input.insert("max".into(), n.clone());
            }
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

/// The document's first usable security scheme as catalog `auth`, reading secrets named after
/// the toolkit.
fn security(doc: &Value, toolkit: &str, secrets: &mut BTreeSet<String>, notes: &mut Vec<String>) -> Option<Value> {
    let schemes = doc["components"]["securitySchemes"].as_object()?;
    let prefix = snake(toolkit).to_uppercase();
    for (scheme_name, scheme) in schemes {
        let scheme = resolve(doc, scheme, 0)?;
        let auth = match (
            scheme["type"].as_str(),
            scheme["scheme"].as_str().map(str::to_ascii_lowercase).as_deref(),
        ) {
            (Some("http"), Some("bearer")) => {
                let s = format!("{prefix}_TOKEN");
                secrets.insert(s.clone());
                json!({"bearer": format!("{{{{secret.{s}}}}}")})
            }
            (Some("http"), Some("basic")) => {
                let (u, p) = (format!("{prefix}_USERNAME"), format!("{prefix}_PASSWORD"));
                secrets.insert(u.clone());
                secrets.insert(p.clone());
                json!({"basic": {"username": format!("{{{{secret.{u}}}}}"), "password": format!("{{{{secret.{p}}}}}")}})
            }
            (Some("apiKey"), _) => {
                let s = format!("{prefix}_API_KEY");
                secrets.insert(s.clone());
                let name = scheme["name"].as_str().unwrap_or("X-Api-Key");
                match scheme["in"].as_str() {
                    Some("query") => json!({"api_key": {"query": name, "value": format!("{{{{secret.{s}}}}}")}}),
                    Some("header") => json!({"api_key": {"header": name, "value": format!("{{{{secret.{s}}}}}")}}),
                    _ => continue,
                }
            }
            (Some("oauth2"), _) => {
                let Some(token_url) = scheme["flows"]["clientCredentials"]["tokenUrl"].as_str() else {
                    notes.push(format!("security scheme `{scheme_name}`: only the OAuth 2.0 client credentials flow can be used by a server; not imported"));
                    continue;
                };
                let (id, secret) = (format!("{prefix}_CLIENT_ID"), format!("{prefix}_CLIENT_SECRET"));
                secrets.insert(id.clone());
                secrets.insert(secret.clone());
                json!({"oauth2": {"token_url": token_url, "client_id": format!("{{{{secret.{id}}}}}"), "client_secret": format!("{{{{secret.{secret}}}}}")}})
            }
            _ => {
                notes.push(format!("security scheme `{scheme_name}` is not imported"));
                continue;
            }
        };
        return Some(auth);
    }
    None
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
fn describe(text: &str, schema: &Value, name: &str) -> String {
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

/// `PascalCase` of a title, for a toolkit name.
fn pascal(text: &str) -> String {
    let name: String = snake(text)
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or_else(String::new, |f| f.to_ascii_uppercase().to_string() + c.as_str())
        })
        .collect();
    if name.is_empty() { "Imported".to_owned() } else { name }
}

/// `base`, or `base_2`, `base_3`… (kept within the name limit), not yet in `taken`.
fn unique(base: &str, taken: &mut BTreeSet<String>) -> String {
    let mut name = base.to_owned();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        let stem: String = base.chars().take(MAX_NAME - suffix.len()).collect();
        name = format!("{stem}{suffix}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// Whether `name` matches a glob with `*` (any run) and `?` (one character).
fn glob(pattern: &str, name: &str) -> bool {
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
