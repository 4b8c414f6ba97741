//! JSON Schemas of an API description (or of another server's tool) read as catalog inputs:
//! scalars with their constraints, enumerations with UPPER_SNAKE names and the upstream's wire
//! values (docs/protocols.md §1), unions of scalars, and the self-contained schema of a `json`
//! input.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// The largest integer every JSON reader keeps exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;
/// How deep `$ref`s are followed before a schema is cut (recursive schemas).
pub(crate) const MAX_REF_DEPTH: usize = 16;
/// How deep a `json` input's schema is written out; below that, any value.
const MAX_JSON_DEPTH: usize = 4;
/// N-ACT §6.1: enum names at most 255 characters.
const MAX_ENUM_NAME: usize = 255;

/// A catalog input for a scalar schema (type and constraints), an enumeration or a union of
/// scalars; `None` for anything else (objects, arrays, unions with one).
pub(crate) fn scalar_input(schema: &Value) -> Option<Value> {
    if let Some(members) = union(schema) {
        return union_input(schema, &members);
    }
    if let Some(only) = nullable_one(schema) {
        return scalar_input(&only);
    }
    let ty = types(schema);
    // No `type`, but a shape (properties, items, a union): not a scalar either.
    let structured = ["properties", "items", "oneOf", "anyOf"]
        .iter()
        .any(|k| schema.get(*k).is_some());
    if ty.is_empty() && structured {
        return None;
    }
    if schema.get("enum").is_some() && !matches!(ty.as_slice(), ["boolean"]) {
        return enum_input(schema);
    }
    let mut input = Map::new();
    match ty.as_slice() {
        ["string"] | [] => {
            input.insert("type".into(), json!("string"));
            if let Some(n) = schema["maxLength"].as_u64().filter(|n| *n > 0) {
                input.insert("max_length".into(), json!(n));
            }
            if let Some(p) = schema["pattern"].as_str() {
                input.insert("pattern".into(), json!(p));
            }
        }
        ["integer"] => {
            input.insert("type".into(), json!("int"));
            // A catalog int without `max` stops at N-ACT's default (65535): an id above it would
            // be refused. An API's integer without a maximum goes as far as its format does,
            // JSON's safe integers at most.
            let max = schema["maximum"].as_i64().unwrap_or(match schema["format"].as_str() {
                Some("int32") => i64::from(i32::MAX),
                _ => MAX_SAFE_INTEGER,
            });
            input.insert("max".into(), json!(max));
            if let Some(n) = schema["minimum"].as_i64().filter(|n| *n <= max) {
                input.insert("min".into(), json!(n));
            }
        }
        ["number"] => {
            input.insert("type".into(), json!("number"));
            let (min, max) = (schema["minimum"].as_f64(), schema["maximum"].as_f64());
            let ordered = !matches!((min, max), (Some(a), Some(b)) if a > b);
            for (key, bound) in [("min", "minimum"), ("max", "maximum")] {
                if let Some(n) = schema.get(bound).filter(|v| v.is_number() && ordered) {
                    input.insert(key.into(), n.clone());
                }
            }
        }
        ["boolean"] => {
            input.insert("type".into(), json!("boolean"));
        }
        _ => return None,
    }
    Some(Value::Object(input))
}

/// The members of a `oneOf`/`anyOf`, or of a type list (`[integer, string]`), when they are all
/// scalars; `None` when the schema is no union of scalars.
fn union(schema: &Value) -> Option<Vec<Value>> {
    let members: Vec<Value> = match (schema.get("oneOf").or_else(|| schema.get("anyOf")), &schema["type"]) {
        (Some(Value::Array(members)), _) => members.clone(),
        (None, Value::Array(list)) => list
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .map(|t| json!({"type": t}))
            .collect(),
        _ => return None,
    };
    let members: Vec<Value> = members.into_iter().filter(|m| m["type"] != "null").collect();
    let scalar = |m: &Value| {
        matches!(m["type"].as_str(), Some("string" | "integer" | "number" | "boolean"))
            && !["properties", "items", "oneOf", "anyOf", "allOf", "$ref"]
                .iter()
                .any(|k| m.get(*k).is_some())
    };
    (members.len() > 1 && members.iter().all(scalar)).then_some(members)
}

/// Whether the schema is a union of scalars some of whose members are enumerations and some
/// not (GitHub's gist `public`: a boolean, or `"true"`/`"false"`): as one scalar input it would
/// lose the enumeration, so an optional one is taken whole.
pub(crate) fn partly_enumerated(schema: &Value) -> bool {
    union(schema).is_some_and(|members| {
        let listed = members.iter().filter(|m| m.get("enum").is_some()).count();
        listed > 0 && listed < members.len()
    })
}

/// `anyOf: [X, {type: null}]` (how OpenAPI 3.1 and FastAPI say "X or nothing"): X, with the
/// outer schema's description and default.
fn nullable_one(schema: &Value) -> Option<Value> {
    let members = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
    let mut rest = members.iter().filter(|m| m["type"] != "null");
    let (Some(one), None) = (rest.next(), rest.next()) else {
        return None;
    };
    let mut one = one.clone();
    for key in ["description", "default", "title"] {
        if let (Some(outer), Some(fields)) = (schema.get(key), one.as_object_mut()) {
            fields.entry(key).or_insert_with(|| outer.clone());
        }
    }
    Some(one)
}

/// A union of scalars as one input: an int or number when every member is one, else a string
/// (a path, a query or a header is text anyway), its description saying what it may be.
fn union_input(schema: &Value, members: &[Value]) -> Option<Value> {
    // Enumerations only (GitHub's `budget_type`: one value per member): one enumeration.
    if members.iter().all(|m| m.get("enum").is_some()) {
        let values: Vec<Value> = members
            .iter()
            .flat_map(|m| m["enum"].as_array().cloned().unwrap_or_default())
            .collect();
        let mut one = json!({"enum": values});
        for key in ["description", "default"] {
            if let Some(v) = schema.get(key) {
                one[key] = v.clone();
            }
        }
        return enum_input(&one);
    }
    let kinds: BTreeSet<&str> = members.iter().filter_map(|m| m["type"].as_str()).collect();
    let kind = match kinds.iter().copied().collect::<Vec<_>>().as_slice() {
        ["integer"] => "integer",
        ["integer", "number"] | ["number"] => "number",
        ["boolean"] => "boolean",
        _ => "string",
    };
    let mut one = json!({"type": kind});
    if let Some(d) = schema.get("description") {
        one["description"] = d.clone();
    }
    scalar_input(&one)
}

/// What a union may be, for its description ("an integer or a string"), when it is one.
pub(crate) fn union_words(schema: &Value) -> Option<String> {
    let members = union(schema)?;
    let mut kinds: Vec<&str> = Vec::new();
    for m in &members {
        let word = match m["type"].as_str() {
            Some("integer") => "an integer",
            Some("number") => "a number",
            Some("boolean") => "a boolean",
            _ => "a string",
        };
        if !kinds.contains(&word) {
            kinds.push(word);
        }
    }
    (kinds.len() > 1).then(|| kinds.join(" or "))
}

/// An enumeration as a catalog enum: each upstream value an UPPER_SNAKE name (`open` → `OPEN`,
/// `New York` → `NEW_YORK`, `2` → `VALUE_2`, `""` → `EMPTY`; a clash gets `_2`), with the
/// upstream's own value as its wire `value` when it differs, and a description from
/// `x-enum-descriptions` (or `x-enumDescriptions`), else the value as written (the default is
/// the input's `default`). `None` when a value is not a scalar.
pub(crate) fn enum_input(schema: &Value) -> Option<Value> {
    // Each value once: a description that lists one twice means it once.
    let mut seen = BTreeSet::new();
    let values: Vec<&Value> = schema["enum"]
        .as_array()?
        .iter()
        .filter(|v| !v.is_null() && seen.insert(v.to_string()))
        .collect();
    if values.is_empty() || values.iter().any(|v| v.is_array() || v.is_object()) {
        return None;
    }
    let names_given = schema
        .get("x-enum-varnames")
        .or_else(|| schema.get("x-enumNames"))
        .and_then(Value::as_array);
    let descriptions = schema
        .get("x-enum-descriptions")
        .or_else(|| schema.get("x-enumDescriptions"));
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for (i, wire) in values.iter().enumerate() {
        let written = match wire {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let base = names_given
            .and_then(|n| n.get(i))
            .and_then(Value::as_str)
            .map(enum_name)
            .unwrap_or_else(|| enum_name(&written));
        let name = super::unique_within(&base, &mut taken, MAX_ENUM_NAME);
        let given = match descriptions {
            Some(Value::Array(list)) => list.get(i).and_then(Value::as_str),
            Some(Value::Object(map)) => map.get(&written).and_then(Value::as_str),
            _ => None,
        }
        .map(str::trim)
        .filter(|d| !d.is_empty());
        let description = match (given, wire) {
            (Some(d), _) => d.to_owned(),
            (None, Value::String(s)) if s.is_empty() => "The empty value.".to_owned(),
            (None, _) => format!("`{written}`."),
        };
        let mut value = json!({"name": name, "description": cut(&description, super::MAX_DESCRIPTION)});
        if wire.as_str() != Some(name.as_str()) {
            value["value"] = (*wire).clone();
        }
        out.push(value);
    }
    Some(json!({"type": "enum", "values": out}))
}

/// `UPPER_SNAKE` of a value: words split as [`super::snake`] splits them, a digit first
/// prefixed (`VALUE_2`), a sign spelled (`MINUS_1`), nothing left `EMPTY` or `VALUE`.
fn enum_name(text: &str) -> String {
    let words = super::words(&ascii_fold(text)).to_ascii_uppercase();
    let name = match words.chars().next() {
        None if text.is_empty() => "EMPTY".to_owned(),
        None => "VALUE".to_owned(),
        Some(c) if c.is_ascii_digit() && text.trim_start().starts_with('-') => format!("MINUS_{words}"),
        Some(c) if c.is_ascii_digit() => format!("VALUE_{words}"),
        Some(_) => words,
    };
    cut(&name, MAX_ENUM_NAME).trim_end_matches('_').to_owned()
}

/// Latin letters with accents as their plain letters (`São Paulo` → `Sao Paulo`), so a name
/// keeps them; other characters as they are.
fn ascii_fold(text: &str) -> String {
    const FOLDS: &[(&str, &str)] = &[
        ("àáâãäåā", "a"),
        ("ÀÁÂÃÄÅĀ", "A"),
        ("çćč", "c"),
        ("ÇĆČ", "C"),
        ("èéêëēę", "e"),
        ("ÈÉÊËĒĘ", "E"),
        ("ìíîïī", "i"),
        ("ÌÍÎÏĪ", "I"),
        ("ñń", "n"),
        ("ÑŃ", "N"),
        ("òóôõöøō", "o"),
        ("ÒÓÔÕÖØŌ", "O"),
        ("ùúûüū", "u"),
        ("ÙÚÛÜŪ", "U"),
        ("ýÿ", "y"),
        ("ÝŸ", "Y"),
        ("śšß", "s"),
        ("ŚŠ", "S"),
        ("źżž", "z"),
        ("ŹŻŽ", "Z"),
        ("ł", "l"),
        ("Ł", "L"),
    ];
    text.chars()
        .map(|c| {
            FOLDS
                .iter()
                .find(|(from, _)| from.contains(c))
                .map_or_else(|| c.to_string(), |(_, to)| (*to).to_owned())
        })
        .collect()
}

fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The JSON types a schema allows, `null` left out (3.0 `nullable`, 3.1 type arrays).
pub(crate) fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => Vec::new(),
    }
}

/// Makes a scalar input's `pattern` one the engine compiles: an ECMA-262 pattern the engine's
/// dialect refuses (`^[\w- ]*$`: a `-` after a class escape) is rewritten when a literal `-`
/// was meant, else left out. Returns what was done, for a note.
pub(crate) fn fit_pattern(input: &mut Value) -> Option<String> {
    let pattern = input["pattern"].as_str()?.to_owned();
    let compiles = |p: &str| toolhost_core::validate::compile(&json!({"type": "string", "pattern": p})).is_ok();
    if compiles(&pattern) {
        return None;
    }
    let fixed = literal_dashes(&pattern);
    if fixed != pattern && compiles(&fixed) {
        input["pattern"] = json!(fixed);
        return Some(format!(
            "its pattern `{pattern}` is written `{fixed}` (a `-` after a class escape is a literal dash in ECMA-262)"
        ));
    }
    if let Some(fields) = input.as_object_mut() {
        fields.remove("pattern");
    }
    Some(format!(
        "its pattern `{pattern}` is not one the engine can check, so it is left out (the API still checks it)"
    ))
}

/// `-` escaped where ECMA-262 reads it as a literal: inside a class, right after a class escape
/// (`\w-`) or right before one (`a-\d`).
fn literal_dashes(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut in_class = false;
    let mut i = 0;
    let class_escape = |c: Option<&char>| matches!(c, Some('w' | 'W' | 'd' | 'D' | 's' | 'S'));
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.get(i + 1) {
                    out.push(*next);
                }
                i += 2;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '-' if in_class => {
                let after_escape = i >= 2 && chars[i - 2] == '\\' && class_escape(chars.get(i - 1));
                let before_escape = chars.get(i + 1) == Some(&'\\') && class_escape(chars.get(i + 2));
                if after_escape || before_escape {
                    out.push_str("\\-");
                    i += 1;
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `value` with local `$ref`s resolved (`#/components/...`), `allOf` merged; `None` past
/// [`MAX_REF_DEPTH`] or for a reference that does not resolve.
pub(crate) fn resolve(doc: &Value, value: &Value, depth: usize) -> Option<Value> {
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
        for (k, v) in value.as_object().into_iter().flatten() {
            if k != "allOf" {
                merged.entry(k.clone()).or_insert_with(|| v.clone());
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

/// `schema` with the members of a `oneOf`/`anyOf` resolved, so a union of `$ref`'d scalars is
/// seen as one.
pub(crate) fn with_members(doc: &Value, schema: Value) -> Value {
    let mut schema = schema;
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(members)) = schema.get_mut(key) {
            for m in members.iter_mut() {
                if let Some(resolved) = resolve(doc, m, 1) {
                    *m = resolved;
                }
            }
        }
    }
    schema
}

/// The self-contained JSON Schema (2020-12) of a `json` input: references resolved, 3.0's
/// `nullable` as a type list, only the keywords that shape a value (type, properties, items,
/// required, enum, unions); below [`MAX_JSON_DEPTH`] levels, any value. Patterns and formats are
/// left to the API, which checks them anyway.
pub(crate) fn json_schema(doc: &Value, schema: &Value, depth: usize) -> Value {
    if depth > MAX_JSON_DEPTH {
        return json!({});
    }
    let Some(schema) = resolve(doc, schema, 0) else {
        return json!({});
    };
    let mut out = Map::new();
    let mut ty = schema.get("type").cloned();
    if schema["nullable"] == json!(true)
        && let Some(Value::String(t)) = &ty
    {
        ty = Some(json!([t, "null"]));
    }
    // Only JSON Schema's own types (Swagger's `file` is none), each once.
    const TYPES: [&str; 7] = ["string", "integer", "number", "boolean", "object", "array", "null"];
    let mut kinds: Vec<&str> = match &ty {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    kinds.retain(|t| TYPES.contains(t));
    kinds.dedup();
    match kinds.as_slice() {
        [] => {}
        [one] => {
            out.insert("type".into(), json!(one));
        }
        several => {
            out.insert("type".into(), json!(several));
        }
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let shaped: Map<String, Value> = properties
            .iter()
            .filter(|(_, p)| p["readOnly"] != json!(true))
            .map(|(k, p)| (k.clone(), json_schema(doc, p, depth + 1)))
            .collect();
        out.insert("properties".into(), Value::Object(shaped));
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        let mut names: Vec<&str> = required.iter().filter_map(Value::as_str).collect();
        names.sort_unstable();
        names.dedup();
        out.insert("required".into(), json!(names));
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        out.insert("items".into(), json_schema(doc, items, depth + 1));
    }
    if let Some(extra) = schema
        .get("additionalProperties")
        .filter(|e| e.is_boolean() || e.is_object())
    {
        let extra = if extra.is_object() {
            json_schema(doc, extra, depth + 1)
        } else {
            extra.clone()
        };
        out.insert("additionalProperties".into(), extra);
    }
    if let Some(Value::Array(values)) = schema
        .get("enum")
        .filter(|v| v.as_array().is_some_and(|v| !v.is_empty()))
    {
        let mut unique: Vec<Value> = Vec::new();
        for v in values {
            if !unique.contains(v) {
                unique.push(v.clone());
            }
        }
        out.insert("enum".into(), Value::Array(unique));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(members)) = schema.get(key) {
            let members: Vec<Value> = members.iter().map(|m| json_schema(doc, m, depth + 1)).collect();
            out.insert(key.into(), Value::Array(members));
        }
    }
    annotate(&schema, &mut out);
    Value::Object(out)
}

/// What a model reads to fill a value, copied as the API writes it (#38.4): the description,
/// `default`, examples (3.0's `example` as 2020-12's `examples`) and counts and bounds. Anything
/// that looks like a template (`{{secret.X}}`) is left out (issue #30.3).
fn annotate(schema: &Value, out: &mut Map<String, Value>) {
    let plain = |v: &Value| {
        let text = v.to_string();
        !text.contains("{{") && !text.contains("}}")
    };
    if let Some(text) = schema["description"].as_str().map(str::trim).filter(|t| !t.is_empty()) {
        let text = json!(cut(text, 600));
        if plain(&text) {
            out.insert("description".into(), text);
        }
    }
    if let Some(default) = schema.get("default").filter(|d| !d.is_null() && plain(d)) {
        out.insert("default".into(), default.clone());
    }
    let examples = match (schema.get("examples"), schema.get("example")) {
        (Some(Value::Array(list)), _) => Some(Value::Array(list.clone())),
        (_, Some(one)) if !one.is_null() => Some(json!([one])),
        _ => None,
    };
    if let Some(examples) = examples.filter(|e| plain(e) && e.to_string().len() <= 2000) {
        out.insert("examples".into(), examples);
    }
    // Counts and inclusive bounds mean the same in 3.0 and 2020-12 (exclusive ones do not).
    for key in ["minimum", "maximum"] {
        if let Some(n) = schema.get(key).filter(|n| n.is_number()) {
            out.insert(key.into(), n.clone());
        }
    }
    for key in [
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
    ] {
        if let Some(n) = schema.get(key).filter(|n| n.is_u64()) {
            out.insert(key.into(), n.clone());
        }
    }
    if schema["uniqueItems"] == json!(true) {
        out.insert("uniqueItems".into(), json!(true));
    }
}

/// Whether a schema (resolved) is an object whose properties are all scalars: one a model can
/// fill field by field on N-ACT.
pub(crate) fn flat_object(schema: &Value) -> Option<&Map<String, Value>> {
    let properties = schema["properties"]
        .as_object()
        .filter(|p| !p.is_empty() && p.len() <= 16)?;
    let plain = |name: &str| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (types(schema) == ["object"] || schema.get("type").is_none())
        .then_some(properties)
        .filter(|p| {
            p.iter()
                .all(|(k, v)| plain(k) && v.get("$ref").is_none() && scalar_input(v).is_some())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerations_get_names_and_keep_their_wire_values() {
        let input = scalar_input(&json!({
            "type": "string", "default": "open",
            "enum": ["open", "New York", "a-b", "a_b", "", "OPEN_NOW", "3d", "São Paulo"],
            "x-enum-descriptions": {"open": "Still open."}
        }))
        .unwrap();
        let values = input["values"].as_array().unwrap();
        let pairs: Vec<(&str, Option<&Value>)> = values
            .iter()
            .map(|v| (v["name"].as_str().unwrap(), v.get("value")))
            .collect();
        assert_eq!(
            pairs,
            [
                ("OPEN", Some(&json!("open"))),
                ("NEW_YORK", Some(&json!("New York"))),
                ("A_B", Some(&json!("a-b"))),
                ("A_B_2", Some(&json!("a_b"))),
                ("EMPTY", Some(&json!(""))),
                ("OPEN_NOW", None),
                ("VALUE_3D", Some(&json!("3d"))),
                ("SAO_PAULO", Some(&json!("São Paulo"))),
            ]
        );
        assert_eq!(values[0]["description"], "Still open.");
        let ints = scalar_input(&json!({"type": "integer", "enum": [1, -1, 2]})).unwrap();
        let names: Vec<&str> = ints["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["VALUE_1", "MINUS_1", "VALUE_2"]);
        assert_eq!(ints["values"][1]["value"], json!(-1));
        // Names the description gives (`x-enum-varnames`) are used, made UPPER_SNAKE.
        let named =
            scalar_input(&json!({"type": "integer", "enum": [0, 1], "x-enum-varnames": ["Low", "highPriority"]}))
                .unwrap();
        assert_eq!(
            named["values"][1],
            json!({"name": "HIGH_PRIORITY", "value": 1, "description": "`1`."})
        );
    }

    #[test]
    fn a_union_of_scalars_is_one_input() {
        let union = json!({"oneOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(scalar_input(&union).unwrap()["type"], "string");
        assert_eq!(union_words(&union).as_deref(), Some("an integer or a string"));
        assert_eq!(
            scalar_input(&json!({"type": ["integer", "number", "null"]})).unwrap()["type"],
            "number"
        );
        assert!(scalar_input(&json!({"oneOf": [{"type": "object"}, {"type": "string"}]})).is_none());
        // FastAPI's and 3.1's "or nothing".
        let optional = json!({"anyOf": [{"type": "integer", "maximum": 9}, {"type": "null"}], "default": 3});
        assert_eq!(scalar_input(&optional).unwrap(), json!({"type": "int", "max": 9}));
        let choice = json!({"anyOf": [{"enum": ["a b"]}, {"type": "null"}]});
        assert_eq!(scalar_input(&choice).unwrap()["values"][0]["name"], "A_B");
    }

    #[test]
    fn a_pattern_the_engine_refuses_is_fixed_or_left_out() {
        let mut input = json!({"type": "string", "pattern": "^[\\w- ]*$"});
        let note = fit_pattern(&mut input).unwrap();
        assert_eq!(input["pattern"], "^[\\w\\- ]*$", "{note}");
        assert!(toolhost_core::validate::compile(&json!({"pattern": input["pattern"]})).is_ok());
        let mut lookaround = json!({"type": "string", "pattern": "^(?<=a)b(?!c)$"});
        if fit_pattern(&mut lookaround).is_some() {
            assert!(
                lookaround
                    .get("pattern")
                    .is_none_or(|p| { toolhost_core::validate::compile(&json!({"pattern": p})).is_ok() })
            );
        }
        assert!(fit_pattern(&mut json!({"type": "string", "pattern": "^[a-z]+$"})).is_none());
    }
}
