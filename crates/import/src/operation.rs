//! One OpenAPI operation as a [`Draft`]: its parameters and body as inputs, its answer as
//! outputs, one step `call` that sends them. Nothing the API requires is left out silently
//! (issue #32.3): a union of scalars is an input, a required object or array is a `json` input
//! (flattened one level when its fields are scalars, so N-ACT keeps the tool), a body the step
//! cannot send skips the tool with the reason.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::answer::outputs;
use super::schema::{
    fit_pattern, flat_object, json_schema, partly_enumerated, resolve, scalar_input, types, union_words, with_members,
};
use super::{Draft, STEP, Structured, describe, description, resolve_noted, snake, unique};

/// The inputs of one operation as they are gathered.
#[derive(Default)]
struct Inputs {
    list: Vec<Value>,
    names: BTreeSet<String>,
    structured: Vec<Structured>,
    /// Notes about single inputs (a pattern rewritten).
    notes: Vec<String>,
    /// `json` inputs, which keep the tool off N-ACT.
    json: Vec<String>,
}

impl Inputs {
    /// A scalar input for `original`, its name; `None` (and the field kept as structured) when
    /// the schema is not a scalar.
    fn scalar(
        &mut self,
        original: &str,
        place: &'static str,
        schema: &Value,
        required: bool,
        description: &str,
    ) -> Option<String> {
        // An optional union that is partly an enumeration is taken whole (#38.4); a required
        // one stays one scalar, so N-ACT keeps the tool.
        let whole = !required && partly_enumerated(schema);
        let Some(mut input) = scalar_input(schema).filter(|_| !whole) else {
            self.structured.push(Structured {
                name: original.to_owned(),
                place,
                schema: schema.clone(),
                required,
                description: description.to_owned(),
            });
            return None;
        };
        if let Some(what) = fit_pattern(&mut input) {
            self.notes.push(format!("`{original}`: {what}"));
        }
        let mut text = description.to_owned();
        // The API's default as JSON Schema's `default` (#38.4), when the input accepts it as
        // the catalog writes it; else said in words, as before, so nothing is lost. A value
        // that looks like a template (`{{secret.X}}`) is only ever words, defused with the
        // description (issue #30.3).
        let defaulted = annotate(&mut input, schema);
        if let Some(words) = schema.get("default").filter(|_| !defaulted).and_then(short) {
            let said = text.trim_end();
            let gap = match said.chars().last() {
                None => "",
                Some('.') => " ",
                Some(_) => ". ",
            };
            text = format!("{said}{gap}Default: {words}.");
        }
        if let Some(words) = union_words(schema) {
            text = format!("{} It is {words}.", text.trim_end());
        }
        Some(self.push(input, original, &text, schema, required))
    }

    /// A `json` input holding `original`'s whole value, with its self-contained schema (its
    /// default, examples and enumerations as the API writes them, #38.4).
    fn json(&mut self, doc: &Value, original: &str, schema: &Value, required: bool, description: &str) -> String {
        let input = json!({"type": "json", "schema": json_schema(doc, schema, 0)});
        let name = self.push(input, original, description, &Value::Null, required);
        // Only a required one keeps the tool off N-ACT; an optional one is left out there.
        if required {
            self.json.push(name.clone());
        }
        name
    }

    /// A file of a multipart body: a `json` input taking text, or `{data: BASE64, mimeType,
    /// filename}`.
    fn file(&mut self, original: &str, schema: &Value, required: bool, description: &str) -> String {
        let media = schema["contentMediaType"]
            .as_str()
            .unwrap_or("application/octet-stream");
        let file = json!({"anyOf": [
            {"type": "string", "description": "The file's content, as text."},
            {
                "type": "object",
                "properties": {
                    "data": {"type": "string", "contentEncoding": "base64", "description": "The file's bytes, base64."},
                    "mimeType": {"type": "string", "description": format!("Its media type (default {media}).")},
                    "filename": {"type": "string"}
                },
                "required": ["data"],
                "additionalProperties": false
            }
        ]});
        let text = if description.is_empty() { "A file." } else { description };
        let input = json!({"type": "json", "schema": file});
        let name = self.push(input, original, text, &Value::Null, required);
        if required {
            self.json.push(name.clone());
        }
        name
    }

    /// `original` as a scalar input when its schema is one, else as a `json` input; its name.
    fn any(
        &mut self,
        doc: &Value,
        original: &str,
        place: &'static str,
        schema: &Value,
        required: bool,
        description: &str,
    ) -> String {
        match self.scalar(original, place, schema, required, description) {
            Some(name) => name,
            None => {
                self.structured.pop();
                self.json(doc, original, schema, required, description)
            }
        }
    }

    fn push(&mut self, mut input: Value, original: &str, description: &str, schema: &Value, required: bool) -> String {
        let name = unique(&snake(original), &mut self.names);
        input["name"] = json!(name);
        // A typed enumeration lists its values itself (with their descriptions).
        let listed = if input["type"] == "enum" { &Value::Null } else { schema };
        input["description"] = json!(describe(description, listed, original));
        if !required {
            input["required"] = json!(false);
        }
        self.list.push(input);
        name
    }
}

/// A parameter's description: its own, else its schema's (the `$ref`'d one's when the reference
/// is all there is), with an example when it helps a model fill it.
fn parameter_text(p: &Value, written: &Value, schema: &Value) -> String {
    // A schema's `title` ("Spotify Album ID") says more than nothing.
    let text = [
        &p["description"],
        &written["description"],
        &schema["description"],
        &schema["title"],
    ]
    .into_iter()
    .find_map(|d| d.as_str().map(str::trim).filter(|d| !d.is_empty()))
    .unwrap_or_default();
    with_hints(text, schema, p)
}

/// `text` with ` Example: Y.` when the schema (or parameter) gives one and it is short (a default
/// is the input's `default`, [`Inputs::scalar`]).
fn with_hints(text: &str, schema: &Value, p: &Value) -> String {
    let mut text = text.trim().to_owned();
    let sentence = |text: &mut String, what: &str, value: String| {
        if !text.is_empty() && !text.ends_with('.') {
            text.push('.');
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("{what}: {value}."));
    };
    let example = [
        p.get("example"),
        schema.get("example"),
        schema["examples"].as_array().and_then(|e| e.first()),
    ]
    .into_iter()
    .flatten()
    .find_map(short);
    if schema.get("enum").is_none()
        && let Some(example) = example
    {
        sentence(&mut text, "Example", example);
    }
    text
}

/// A scalar value as a few words of text (at most 60 characters); `None` for others.
fn short(v: &Value) -> Option<String> {
    let written = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    (!v.is_null() && !v.is_object() && !v.is_array() && written.chars().count() <= 60).then_some(written)
}

/// Writes on a drafted scalar input the schema's `default` and `examples` (3.0's `example`) as
/// the API spells them, those the input accepts and that do not look like a template
/// (`{{secret.X}}`, issue #30.3); whether the default was written.
pub(crate) fn annotate(input: &mut Value, schema: &Value) -> bool {
    let plain = |v: &Value| {
        let written = v.to_string();
        !written.contains("{{") && !written.contains("}}")
    };
    let examples: Vec<Value> = match (schema.get("examples"), schema.get("example")) {
        (Some(Value::Array(list)), _) => list.clone(),
        (_, Some(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    let examples: Vec<Value> = examples
        .into_iter()
        .filter(|e| !e.is_null() && plain(e) && fits(input, e))
        .take(5)
        .collect();
    if !examples.is_empty() {
        input["examples"] = Value::Array(examples);
    }
    match schema
        .get("default")
        .filter(|d| !d.is_null() && plain(d) && fits(input, d))
    {
        Some(default) => {
            input["default"] = default.clone();
            true
        }
        None => false,
    }
}

/// Whether the catalog input `input` (as drafted) accepts `value`, as the API spells it: the
/// loader refuses a `default` it does not.
fn fits(input: &Value, value: &Value) -> bool {
    let within =
        |n: f64| input["min"].as_f64().is_none_or(|min| n >= min) && input["max"].as_f64().is_none_or(|max| n <= max);
    match input["type"].as_str() {
        Some("enum") => input["values"]
            .as_array()
            .is_some_and(|values| values.iter().any(|v| v.get("value").unwrap_or(&v["name"]) == value)),
        Some("int") => value.as_i64().is_some_and(|n| within(n as f64)),
        Some("number") => value.as_f64().is_some_and(within),
        Some("boolean") => value.is_boolean(),
        Some("string") => value.as_str().is_some_and(|text| {
            let short_enough = input["max_length"]
                .as_u64()
                .is_none_or(|max| text.chars().count() as u64 <= max);
            let matches = input["pattern"].as_str().is_none_or(|pattern| {
                toolhost_core::validate::compile(&json!({"pattern": pattern})).is_ok_and(|v| v.is_valid(value))
            });
            short_enough && matches
        }),
        _ => false,
    }
}

/// One operation's tool, or why it is not imported.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draft(
    doc: &Value,
    name: String,
    where_: String,
    method: &str,
    path: &str,
    op: &Value,
    params: &[Value],
    tags: &[String],
    notes: &mut Vec<String>,
) -> Result<Draft, String> {
    let mut inputs = Inputs::default();
    let mut query = Map::new();
    let mut headers = Map::new();
    let mut cookies = Map::new();
    let mut body = Map::new();
    let mut form = Map::new();
    let mut multipart = Map::new();
    // Input → `{style, explode, name}`, for those the `simple` style unexploded does not write.
    let mut styles = Map::new();
    let mut whole_body: Option<Value> = None;
    // Some descriptions tell apart operations on one path by a fragment (`/x#variant`), which
    // is never sent.
    let mut template_path = path.split('#').next().unwrap_or_default().to_owned();
    // The path is a template in the catalog: `{{secret.X}}` in it would send a server secret to
    // the description's server (issue #30.3).
    if template_path.contains("{{") || template_path.contains("}}") {
        return Err("its path has `{{` or `}}`, which a catalog reads as a template (a server secret, the caller's token), so it is not imported".to_owned());
    }
    let hole = |n: &str| json!(format!("{{{{input.{n}}}}}"));
    for p in params {
        let p = resolve(doc, p, 0).unwrap_or(Value::Null);
        let (Some(original), Some(location)) = (p["name"].as_str(), p["in"].as_str()) else {
            continue;
        };
        let token = |n: &str| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        };
        if location == "header" && !token(original) {
            notes.push(format!(
                "{where_}: header parameter `{original}` is not a valid header name; it is left out"
            ));
            continue;
        }
        if original.is_empty() {
            continue;
        }
        if original.contains(['{', '}']) {
            notes.push(format!(
                "{where_}: parameter `{original}` has `{{` or `}}` in its name, which a catalog reads as a template; it is left out"
            ));
            continue;
        }
        // A Swagger 2.0 parameter in another file keeps its type beside its name.
        let schema = match p.get("schema") {
            None if p.get("type").is_some() => p.clone(),
            _ => resolve_noted(doc, &p["schema"], &format!("{where_}: parameter `{original}`"), notes),
        };
        let schema = with_members(doc, schema);
        let description = parameter_text(&p, &p["schema"], &schema);
        let required = p["required"].as_bool().unwrap_or(location == "path");
        match location {
            "path" => {
                // OpenAPI's path styles (§4.8.12.4), which the step's `styles` write: `simple`
                // (`a,b`; exploded, an object `k=v`), `label` (`.a,b`, `.a.b`) and `matrix`
                // (`;id=a,b`, `;id=a;id=b`).
                let style = p["style"].as_str().unwrap_or("simple");
                if !matches!(style, "simple" | "label" | "matrix") {
                    notes.push(format!(
                        "{where_}: path parameter `{original}` has `style: {style}`, which OpenAPI does not define for a path; it is left out, and the tool cannot call this operation until an overlay sets it"
                    ));
                    continue;
                }
                let n = inputs.any(doc, original, "path", &schema, true, &description);
                template_path = template_path.replace(&format!("{{{original}}}"), &format!("{{{{input.{n}}}}}"));
                styles.insert(n, path_style(style, p["explode"].as_bool(), original, &schema));
            }
            "query" => {
                // An array or object goes as the parameter's `style` and `explode` say
                // (`?status=a&status=b`, `a,b`, `a|b`, `f[k]=v`), its schema whole (#38.4).
                let n = inputs.any(doc, original, "query", &schema, required, &description);
                let (style, explode) = (p["style"].as_str(), p["explode"].as_bool());
                let plain_form = style.is_none_or(|s| s == "form") && explode.is_none_or(|e| e);
                let structured = matches!(types(&schema).as_slice(), ["array"] | ["object"]);
                let value = if structured && !(plain_form && types(&schema) == ["array"]) {
                    let mut styled = json!({"value": hole(&n)});
                    if let Some(style) = style {
                        styled["style"] = json!(style);
                    }
                    styled["explode"] =
                        json!(explode.unwrap_or(style.is_none_or(|s| s == "form" || s == "deepObject")));
                    styled
                } else {
                    hole(&n)
                };
                query.insert(original.to_owned(), value);
            }
            "header" => {
                // An array or object is sent in the `simple` style, the only one headers have
                // (exploded, an object's members as `k=v`).
                let n = inputs.any(doc, original, "headers", &schema, required, &description);
                headers.insert(original.to_owned(), hole(&n));
                styles.insert(n.clone(), path_style("simple", p["explode"].as_bool(), &n, &schema));
            }
            "cookie" => {
                let n = inputs.any(doc, original, "cookies", &schema, required, &description);
                cookies.insert(original.to_owned(), hole(&n));
            }
            _ => {}
        }
    }
    let request_body = resolve(doc, &op["requestBody"], 0).unwrap_or(Value::Null);
    let body_required = request_body["required"].as_bool().unwrap_or(false);
    let content = request_body["content"].as_object().filter(|c| !c.is_empty());
    let bodiless = matches!(method, "get" | "head");
    if let Some(content) = content.filter(|_| bodiless) {
        // The step cannot send a body with GET or HEAD (nor do most servers read one).
        notes.push(format!(
            "{where_}: a {} request with a body ({}): the body is left out{}",
            method.to_uppercase(),
            content.keys().cloned().collect::<Vec<_>>().join(", "),
            if body_required {
                ", although the API requires it; an overlay can skip the tool"
            } else {
                ""
            }
        ));
    }
    if let Some(content) = content.filter(|_| !bodiless) {
        let json_media = content
            .iter()
            .find(|(media, _)| media.as_str() == "application/json" || media.ends_with("+json"))
            .map(|(_, media)| ("body", media));
        // JSON first, then a form, then multipart (OpenAPI 3.1 §4.8.14-15), as the step sends them.
        let chosen = json_media
            .or_else(|| content.get("application/x-www-form-urlencoded").map(|m| ("form", m)))
            .or_else(|| content.get("multipart/form-data").map(|m| ("multipart", m)));
        match chosen {
            Some((place, media)) => {
                let target = match place {
                    "body" => &mut body,
                    "form" => &mut form,
                    _ => &mut multipart,
                };
                let schema = resolve(doc, &media["schema"], 0).unwrap_or(Value::Null);
                let schema = only_object(doc, schema);
                let required = required_of(&schema);
                for (prop, written) in schema["properties"].as_object().into_iter().flatten() {
                    let prop_schema = resolve_noted(doc, written, &format!("{where_}: body property `{prop}`"), notes);
                    if prop_schema["readOnly"].as_bool() == Some(true) {
                        continue;
                    }
                    let prop_schema = with_members(doc, prop_schema);
                    let description = parameter_text(&Value::Null, written, &prop_schema);
                    let needed = required.contains(prop.as_str()) && body_required;
                    if place == "multipart" && is_file(&prop_schema) {
                        let n = inputs.file(prop, &prop_schema, needed, &description);
                        target.insert(prop.clone(), json!({"file": hole(&n)}));
                        continue;
                    }
                    if let Some(n) = inputs.scalar(prop, place, &prop_schema, needed, &description) {
                        target.insert(prop.clone(), hole(&n));
                        continue;
                    }
                    inputs.structured.pop();
                    // A required object of scalars in a JSON body is one input per field, so
                    // N-ACT keeps the tool; anything else is taken whole, its schema as the API
                    // writes it.
                    if let Some(fields) = flat_object(&prop_schema).filter(|_| needed && place == "body") {
                        let inner = required_of(&prop_schema);
                        let mut object = Map::new();
                        for (field, field_schema) in fields {
                            let text = parameter_text(&Value::Null, field_schema, field_schema);
                            let text = if text.is_empty() {
                                format!("The {field} of {prop}.")
                            } else {
                                text
                            };
                            if let Some(n) = inputs.scalar(
                                &format!("{prop}_{field}"),
                                place,
                                field_schema,
                                inner.contains(field.as_str()),
                                &text,
                            ) {
                                object.insert(field.clone(), hole(&n));
                            }
                        }
                        target.insert(prop.clone(), Value::Object(object));
                        continue;
                    }
                    let n = inputs.json(doc, prop, &prop_schema, needed, &description);
                    // In a form, an array or object goes as its `encoding` says (`form`,
                    // exploded, by default); in multipart, a part per item, an object as JSON.
                    let value = match place {
                        "form" => {
                            let encoding = &media["encoding"][prop.as_str()];
                            let style = encoding["style"].as_str().unwrap_or("form");
                            let explode = encoding["explode"].as_bool().unwrap_or(style == "form");
                            json!({"value": hole(&n), "style": style, "explode": explode})
                        }
                        _ => hole(&n),
                    };
                    target.insert(prop.clone(), value);
                }
                if schema["properties"].as_object().is_none_or(Map::is_empty) {
                    if place == "body" {
                        // A body that is not an object of properties (an array, a free-form object).
                        let description = schema["description"].as_str().unwrap_or("The request body.");
                        let n = inputs.json(doc, "body", &schema, body_required, description);
                        whole_body = Some(hole(&n));
                    } else {
                        notes.push(format!(
                            "{where_}: its {} body names no fields, so none is sent{}",
                            if place == "form" { "form" } else { "multipart" },
                            if body_required {
                                ", although the API requires one; an overlay can set `form` or `multipart`"
                            } else {
                                ""
                            }
                        ));
                    }
                }
            }
            None => {
                let media = content.keys().cloned().collect::<Vec<_>>().join(", ");
                if body_required {
                    return Err(format!(
                        "its request body is {media}, which a sculpted step cannot send (it sends JSON, a form or multipart/form-data)"
                    ));
                }
                notes.push(format!(
                    "{where_}: its optional request body ({media}) is left out: a sculpted step sends JSON, a form or multipart/form-data"
                ));
            }
        }
    }
    notes.extend(inputs.notes.iter().map(|n| format!("{where_}: {n}")));
    if !inputs.json.is_empty() {
        notes.push(format!(
            "{where_}: {} {} JSON the API requires (an object or a list): served over MCP, OTC and WoA, not N-ACT, whose inputs are scalars (§6.1)",
            inputs.json.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
            if inputs.json.len() == 1 { "takes" } else { "take" },
        ));
    }
    let answer = outputs(doc, op);
    let mut step = json!({"name": STEP, "method": method.to_uppercase(), "path": template_path});
    if !query.is_empty() {
        step["query"] = Value::Object(query);
    }
    if let Some(accept) = &answer.accept
        && !headers.keys().any(|h| h.eq_ignore_ascii_case("accept"))
    {
        headers.insert("Accept".to_owned(), json!(accept));
    }
    if !headers.is_empty() {
        step["headers"] = Value::Object(headers);
    }
    if !cookies.is_empty() {
        step["cookies"] = Value::Object(cookies);
    }
    if let Some(whole) = whole_body {
        step["body"] = whole;
    } else if !body.is_empty() {
        step["body"] = Value::Object(body);
    }
    if !form.is_empty() {
        step["form"] = Value::Object(form);
    }
    if !multipart.is_empty() {
        step["multipart"] = Value::Object(multipart);
    }
    styles.retain(|_, style| !style.is_null());
    if !styles.is_empty() {
        step["styles"] = Value::Object(styles);
    }
    let description = description(op, &where_);
    Ok(Draft {
        source: where_,
        name,
        description,
        tags: tags.iter().filter(|t| !t.trim().is_empty()).cloned().collect(),
        inputs: inputs.list,
        outputs: answer.outputs,
        steps: vec![step],
        mapping: answer.mapping,
        structured: inputs.structured,
        auth: None,
        backend: None,
        version: None,
        // GET, HEAD and OPTIONS are safe and idempotent (RFC 9110 §9.2); the rest say nothing.
        annotations: matches!(method, "get" | "head" | "options")
            .then(|| json!({"read_only": true, "idempotent": true})),
    })
}

/// Whether a multipart field is a file: 3.0's `format: binary` or `byte`, 3.1's
/// `contentMediaType` or `contentEncoding`.
fn is_file(schema: &Value) -> bool {
    matches!(schema["format"].as_str(), Some("binary" | "byte"))
        || schema.get("contentMediaType").is_some()
        || schema.get("contentEncoding").is_some()
}

/// A path parameter's or header's entry in the step's `styles`; null for the `simple` style
/// unexploded, or when exploding changes nothing (a scalar; a `simple` array).
fn path_style(style: &str, explode: Option<bool>, name: &str, schema: &Value) -> Value {
    let explode = explode.unwrap_or(false) && scalar_input(schema).is_none();
    let object = types(schema) == ["object"];
    if style == "simple" && !(explode && object) {
        return Value::Null;
    }
    let mut entry = json!({"style": style, "explode": explode});
    if style == "matrix" {
        entry["name"] = json!(name);
    }
    entry
}

/// A body that is a `oneOf`/`anyOf` of one object (GitHub's `issues/add-labels`): that object,
/// whose properties are the tool's inputs; any other body as it is.
fn only_object(doc: &Value, schema: Value) -> Value {
    if schema.get("properties").is_some() {
        return schema;
    }
    let members = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array));
    match members.map(Vec::as_slice) {
        Some([one]) => match resolve(doc, one, 1) {
            Some(object) if object["properties"].is_object() => object,
            _ => schema,
        },
        _ => schema,
    }
}

/// The names a schema's `required` lists.
pub(crate) fn required_of(schema: &Value) -> BTreeSet<&str> {
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
