//! Reading an API description into one OpenAPI 3 document: external `$ref`s (other files, or
//! URLs) bundled in, and a Swagger 2.0 document rewritten in OpenAPI 3 terms, so the importer
//! reads one shape.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// Where bundled files live in the document: `#/x-toolhost-files/N/...`.
const FILES: &str = "x-toolhost-files";
/// The most documents one import reads (the description and the files it refers to).
const MAX_FILES: usize = 256;

/// Reads the text at a location (a file path or a URL), relative locations already resolved.
pub type Read<'a> = dyn FnMut(&str) -> Result<String, String> + 'a;

/// Reads an API description (YAML or JSON text).
pub fn parse(text: &str) -> Result<Value, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"));
    }
    serde_saphyr::from_str::<Value>(text).map_err(|e| format!("not valid YAML: {e}"))
}

/// `relative` resolved against the location of the document that names it.
pub fn join(base: &str, relative: &str) -> String {
    if relative.starts_with("http://") || relative.starts_with("https://") {
        return relative.to_owned();
    }
    if let Ok(url) = url::Url::parse(base)
        && matches!(url.scheme(), "http" | "https")
    {
        return url
            .join(relative)
            .map_or_else(|_| relative.to_owned(), |u| u.to_string());
    }
    let parent = std::path::Path::new(base).parent().unwrap_or(std::path::Path::new(""));
    parent.join(relative).to_string_lossy().into_owned()
}

/// The document at `location` with every `$ref` into another file bundled under
/// `x-toolhost-files`, so that all references are local (`#/...`).
pub fn load(location: &str, read: &mut Read<'_>) -> Result<Value, String> {
    let mut doc = parse(&read(location)?)?;
    let mut files: BTreeMap<String, usize> = BTreeMap::new();
    let mut bundled: Vec<Value> = Vec::new();
    rewrite(&mut doc, location, None, read, &mut files, &mut bundled)?;
    if !bundled.is_empty()
        && let Some(root) = doc.as_object_mut()
    {
        root.insert(FILES.to_owned(), Value::Array(bundled));
    }
    Ok(doc)
}

/// Rewrites the `$ref`s below `value`, which sits in the file at `location` (bundled as file
/// `index`, or the root document when `None`).
fn rewrite(
    value: &mut Value,
    location: &str,
    index: Option<usize>,
    read: &mut Read<'_>,
    files: &mut BTreeMap<String, usize>,
    bundled: &mut Vec<Value>,
) -> Result<(), String> {
    match value {
        Value::Object(members) => {
            if let Some(Value::String(reference)) = members.get_mut("$ref") {
                let (file, pointer) = reference.split_once('#').unwrap_or((reference.as_str(), ""));
                let target = if file.is_empty() {
                    index
                } else {
                    let at = join(location, file);
                    Some(match files.get(&at) {
                        Some(&n) => n,
                        None => {
                            if files.len() >= MAX_FILES {
                                return Err(format!("more than {MAX_FILES} files are referred to"));
                            }
                            let n = bundled.len();
                            files.insert(at.clone(), n);
                            bundled.push(Value::Null);
                            let mut other = parse(&read(&at)?).map_err(|e| format!("{at}: {e}"))?;
                            rewrite(&mut other, &at, Some(n), read, files, bundled)?;
                            bundled[n] = other;
                            n
                        }
                    })
                };
                if let Some(n) = target {
                    *reference = format!("#/{FILES}/{n}{pointer}");
                }
            }
            for (_, member) in members.iter_mut() {
                rewrite(member, location, index, read, files, bundled)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite(item, location, index, read, files, bundled)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// An OpenAPI 3.0/3.1 document as it is; a Swagger 2.0 one rewritten in OpenAPI 3 terms
/// (servers, components, request bodies, response content, security schemes).
pub fn normalize(doc: Value) -> Result<Value, String> {
    let version = doc["openapi"].as_str().unwrap_or_default();
    if version.starts_with("3.0") || version.starts_with("3.1") {
        return Ok(doc);
    }
    match doc["swagger"].as_str() {
        Some("2.0") => Ok(from_swagger(doc)),
        Some(other) => Err(format!(
            "Swagger {other} is not supported; only Swagger 2.0 and OpenAPI 3.0/3.1 are"
        )),
        None => {
            Err("neither an OpenAPI 3.0/3.1 nor a Swagger 2.0 document: `openapi` (or `swagger`) is missing".to_owned())
        }
    }
}

fn from_swagger(mut doc: Value) -> Value {
    retarget(&mut doc);
    let consumes = media_types(&doc["consumes"]);
    let mut out = Map::new();
    out.insert("openapi".into(), json!("3.0.3"));
    out.insert("info".into(), doc["info"].clone());
    if let Some(security) = doc.get("security") {
        out.insert("security".into(), security.clone());
    }
    if let Some(host) = doc["host"].as_str() {
        let schemes = media_types(&doc["schemes"]);
        let scheme = if schemes.is_empty() || schemes.iter().any(|s| s == "https") {
            "https"
        } else {
            schemes[0].as_str()
        };
        let base = doc["basePath"].as_str().unwrap_or("");
        out.insert("servers".into(), json!([{"url": format!("{scheme}://{host}{base}")}]));
    }
    // Each member of a 2.0 section, converted into its OpenAPI 3 component.
    let section = |key: &str, convert: fn(&Value) -> Value| -> Value {
        let members: Map<String, Value> = doc[key]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), convert(v)))
            .collect();
        Value::Object(members)
    };
    let mut components = Map::new();
    components.insert("schemas".into(), doc["definitions"].clone());
    components.insert("parameters".into(), section("parameters", parameter));
    components.insert("responses".into(), section("responses", response));
    components.insert(
        "securitySchemes".into(),
        section("securityDefinitions", security_scheme),
    );
    out.insert("components".into(), Value::Object(components));
    let mut paths = Map::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        let mut new_item = Map::new();
        for (key, value) in item.as_object().into_iter().flatten() {
            let converted = match key.as_str() {
                "parameters" => json!(
                    value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(parameter)
                        .collect::<Vec<_>>()
                ),
                "get" | "put" | "post" | "delete" | "patch" | "head" | "options" => operation(value, &consumes),
                _ => value.clone(),
            };
            new_item.insert(key.clone(), converted);
        }
        paths.insert(path.clone(), Value::Object(new_item));
    }
    out.insert("paths".into(), Value::Object(paths));
    if let Some(files) = doc.get(FILES) {
        out.insert(FILES.into(), files.clone());
    }
    Value::Object(out)
}

/// `#/definitions/X` → `#/components/schemas/X`, and so on, everywhere.
fn retarget(value: &mut Value) {
    match value {
        Value::Object(members) => {
            if let Some(Value::String(reference)) = members.get_mut("$ref") {
                // The root document's own sections only: a bundled file keeps its shape.
                for (from, to) in [
                    ("#/definitions/", "#/components/schemas/"),
                    ("#/parameters/", "#/components/parameters/"),
                    ("#/responses/", "#/components/responses/"),
                ] {
                    if let Some(rest) = reference.strip_prefix(from) {
                        *reference = format!("{to}{rest}");
                        break;
                    }
                }
            }
            members.values_mut().for_each(retarget);
        }
        Value::Array(items) => items.iter_mut().for_each(retarget),
        _ => {}
    }
}

fn media_types(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// A 2.0 non-body parameter: its type and constraints move into `schema`.
fn parameter(p: &Value) -> Value {
    let Some(fields) = p.as_object() else {
        return p.clone();
    };
    if fields.contains_key("$ref") || fields.get("in").and_then(Value::as_str) == Some("body") {
        return p.clone();
    }
    let mut out = Map::new();
    let mut schema = Map::new();
    for (k, v) in fields {
        match k.as_str() {
            "name" | "in" | "required" | "description" => {
                out.insert(k.clone(), v.clone());
            }
            "type" | "format" | "enum" | "minimum" | "maximum" | "maxLength" | "minLength" | "pattern" | "items"
            | "default" | "exclusiveMinimum" | "exclusiveMaximum" => {
                schema.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    out.insert("schema".into(), Value::Object(schema));
    Value::Object(out)
}

fn response(r: &Value) -> Value {
    let Some(fields) = r.as_object() else {
        return r.clone();
    };
    let mut out: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| k.as_str() != "schema" && k.as_str() != "examples")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(schema) = fields.get("schema") {
        out.insert("content".into(), json!({"application/json": {"schema": schema}}));
    }
    Value::Object(out)
}

fn operation(op: &Value, document_consumes: &[String]) -> Value {
    let Some(fields) = op.as_object() else {
        return op.clone();
    };
    let consumes = match media_types(&op["consumes"]) {
        own if !own.is_empty() => own,
        _ => document_consumes.to_vec(),
    };
    let mut out = Map::new();
    let mut parameters = Vec::new();
    let mut form = Map::new();
    let mut form_required = Vec::new();
    let mut file_upload = false;
    for (key, value) in fields {
        match key.as_str() {
            "parameters" => {
                for p in value.as_array().into_iter().flatten() {
                    match p["in"].as_str() {
                        Some("body") => {
                            let json_type = consumes.is_empty() || consumes.iter().any(|c| c.contains("json"));
                            let media = if json_type {
                                "application/json"
                            } else {
                                consumes[0].as_str()
                            };
                            out.insert(
                                "requestBody".into(),
                                json!({"required": p["required"].as_bool().unwrap_or(false), "content": {media: {"schema": p["schema"]}}}),
                            );
                        }
                        Some("formData") => {
                            let converted = parameter(p);
                            let name = p["name"].as_str().unwrap_or_default().to_owned();
                            file_upload |= p["type"].as_str() == Some("file");
                            let mut schema = converted["schema"].clone();
                            if let (Some(s), Some(d)) = (schema.as_object_mut(), p.get("description")) {
                                s.insert("description".into(), d.clone());
                            }
                            if p["required"].as_bool() == Some(true) {
                                form_required.push(json!(name));
                            }
                            form.insert(name, schema);
                        }
                        _ => parameters.push(parameter(p)),
                    }
                }
            }
            "responses" => {
                let responses: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(code, r)| (code.clone(), response(r)))
                    .collect();
                out.insert(key.clone(), Value::Object(responses));
            }
            "consumes" | "produces" | "schemes" => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if !form.is_empty() {
        let media = if file_upload {
            "multipart/form-data"
        } else {
            "application/x-www-form-urlencoded"
        };
        out.insert(
            "requestBody".into(),
            json!({"required": !form_required.is_empty(), "content": {media: {"schema": {"type": "object", "properties": form, "required": form_required}}}}),
        );
    }
    if !parameters.is_empty() {
        out.insert("parameters".into(), Value::Array(parameters));
    }
    Value::Object(out)
}

fn security_scheme(s: &Value) -> Value {
    match s["type"].as_str() {
        Some("basic") => json!({"type": "http", "scheme": "basic"}),
        Some("oauth2") => match (s["flow"].as_str(), s["tokenUrl"].as_str()) {
            (Some("application"), Some(url)) => {
                json!({"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": url, "scopes": s["scopes"]}}})
            }
            _ => json!({"type": "oauth2", "flows": {}}),
        },
        _ => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_locations_resolve_against_files_and_urls() {
        assert_eq!(join("specs/api.yaml", "common.yaml"), "specs/common.yaml");
        assert_eq!(join("specs/api.yaml", "../c.yaml"), "specs/../c.yaml");
        assert_eq!(
            join("http://127.0.0.1:1/v1/api.yaml", "defs/c.yaml"),
            "http://127.0.0.1:1/v1/defs/c.yaml"
        );
        assert_eq!(join("api.yaml", "https://x.example/c.yaml"), "https://x.example/c.yaml");
    }

    #[test]
    fn other_files_are_bundled_once_and_refer_locally() {
        let files: BTreeMap<&str, &str> = [
            ("dir/api.yaml", "openapi: 3.0.0\npaths: {}\na: { $ref: 'common.yaml#/Pet' }\nb: { $ref: 'common.yaml#/Pet' }\nc: { $ref: '#/a' }"),
            ("dir/common.yaml", "Pet: { properties: { owner: { $ref: '#/Owner' }, self: { $ref: 'common.yaml#/Pet' } } }\nOwner: { type: string }"),
        ]
        .into();
        let mut read = |at: &str| files.get(at).map(|s| (*s).to_owned()).ok_or(format!("no {at}"));
        let doc = load("dir/api.yaml", &mut read).unwrap();
        assert_eq!(doc["a"]["$ref"], "#/x-toolhost-files/0/Pet");
        assert_eq!(doc["b"]["$ref"], "#/x-toolhost-files/0/Pet");
        assert_eq!(doc["c"]["$ref"], "#/a");
        assert_eq!(
            doc.pointer("/x-toolhost-files/0/Pet/properties/owner/$ref"),
            Some(&json!("#/x-toolhost-files/0/Owner"))
        );
        assert_eq!(
            doc.pointer("/x-toolhost-files/0/Pet/properties/self/$ref"),
            Some(&json!("#/x-toolhost-files/0/Pet"))
        );
        let mut missing = |at: &str| {
            if at == "a.yaml" {
                Ok("x: { $ref: 'gone.yaml#/y' }".to_owned())
            } else {
                Err(format!("cannot read {at}"))
            }
        };
        assert_eq!(load("a.yaml", &mut missing).unwrap_err(), "cannot read gone.yaml");
    }

    #[test]
    fn swagger_2_becomes_openapi_3() {
        let doc = json!({
            "swagger": "2.0", "info": {"title": "t"}, "host": "api.example", "basePath": "/v2", "schemes": ["http", "https"],
            "definitions": {"Pet": {"type": "object"}},
            "securityDefinitions": {"k": {"type": "apiKey", "in": "header", "name": "api_key"}, "b": {"type": "basic"}},
            "paths": {"/pet/{id}": {"post": {
                "parameters": [
                    {"name": "id", "in": "path", "required": true, "type": "integer", "minimum": 1},
                    {"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}}
                ],
                "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}}
            }, "put": {"consumes": ["application/x-www-form-urlencoded"], "parameters": [
                {"name": "name", "in": "formData", "type": "string", "required": true}
            ], "responses": {}}}}
        });
        let out = normalize(doc).unwrap();
        assert_eq!(out["servers"][0]["url"], "https://api.example/v2");
        assert_eq!(out["components"]["schemas"]["Pet"]["type"], "object");
        assert_eq!(out["components"]["securitySchemes"]["b"]["scheme"], "basic");
        let op = &out["paths"]["/pet/{id}"]["post"];
        assert_eq!(op["parameters"][0]["schema"], json!({"type": "integer", "minimum": 1}));
        assert_eq!(
            op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Pet"
        );
        assert_eq!(
            op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Pet"
        );
        let form = &out["paths"]["/pet/{id}"]["put"]["requestBody"];
        assert_eq!(
            form["content"]["application/x-www-form-urlencoded"]["schema"]["required"],
            json!(["name"])
        );
        assert!(
            normalize(json!({"swagger": "1.2"}))
                .unwrap_err()
                .contains("Swagger 1.2")
        );
    }
}
