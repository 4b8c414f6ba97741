//! JSON Schema input descriptions (OTC, WoA, MCP) mapped onto the tool model.
//!
//! A property whose every keyword core's typed inputs can express becomes [`Kind::Typed`], so its
//! messages read exactly as toolhost's own ("an integer from 1 to 16"); anything else stays a
//! schema and is described in words by [`describe`]. Validation always runs the whole schema.

use serde_json::{Map, Value};
use toolhost_core::{EnumValue, InputType};

use crate::model::{Kind, Output, Parameter};
use crate::text;

/// The parameters of an object schema, in its `properties` order.
pub(crate) fn parameters(schema: &Value) -> Vec<Parameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| Parameter {
            name: name.clone(),
            description: text::clean(
                property
                    .get("description")
                    .or_else(|| property.get("title"))
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                text::MAX_DESCRIPTION,
            ),
            required: required.contains(&name.as_str()),
            kind: typed(property).map_or(Kind::Schema, Kind::Typed),
            schema: property.clone(),
        })
        .collect()
}

/// The named outputs of an object result schema; empty when the result is not an object.
pub(crate) fn outputs(schema: &Value) -> Vec<Output> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Vec::new();
    }
    parameters(schema)
        .into_iter()
        .map(|p| Output {
            kind: match &p.kind {
                Kind::Typed(t) => t.name().to_owned(),
                Kind::Schema => p.type_name(),
            },
            name: p.name,
            description: p.description,
            required: p.required,
        })
        .collect()
}

/// Whether an object schema refuses properties it does not list.
pub(crate) fn is_closed(schema: &Value) -> bool {
    schema.get("additionalProperties") == Some(&Value::Bool(false))
}

/// Keywords that carry no constraint.
const ANNOTATIONS: &[&str] = &["type", "description", "title", "default", "examples", "$comment"];

/// The typed input a property schema is, when core's types express all its constraints.
fn typed(property: &Value) -> Option<InputType> {
    let map = property.as_object()?;
    let only = |allowed: &[&str]| {
        map.keys()
            .all(|k| ANNOTATIONS.contains(&k.as_str()) || allowed.contains(&k.as_str()) || k.starts_with("x-"))
    };
    if let Some(Value::Array(values)) = map.get("enum") {
        let names: Option<Vec<EnumValue>> = values
            .iter()
            .map(|v| {
                v.as_str().map(|name| EnumValue {
                    name: name.to_owned(),
                    description: String::new(),
                    value: None,
                })
            })
            .collect();
        let string_typed = map.get("type").is_none_or(|t| t == "string");
        return (string_typed && only(&["enum"]) && !values.is_empty()).then_some(InputType::Enum { values: names? });
    }
    match map.get("type")?.as_str()? {
        "string" if only(&["maxLength", "pattern"]) => Some(InputType::String {
            max_length: map.get("maxLength").and_then(Value::as_u64),
            pattern: map.get("pattern").and_then(Value::as_str).map(str::to_owned),
        }),
        "integer" if only(&["minimum", "maximum"]) => Some(InputType::Int {
            min: map.get("minimum").and_then(Value::as_i64),
            // Core's int always has a maximum (N-ACT's default); without one it stays a schema.
            max: map.get("maximum")?.as_i64()?,
        }),
        "number" if only(&["minimum", "maximum"]) => Some(InputType::Number {
            min: map.get("minimum").and_then(Value::as_f64),
            max: map.get("maximum").and_then(Value::as_f64),
        }),
        "boolean" if only(&[]) => Some(InputType::Boolean),
        _ => None,
    }
}

/// What a schema accepts, in words a model can act on: "an array of strings", "a string or null".
pub fn describe(schema: &Value) -> String {
    describe_at(schema, 0)
}

fn describe_at(schema: &Value, depth: usize) -> String {
    const DEPTH: usize = 3;
    let Some(map) = schema.as_object() else {
        return match schema {
            Value::Bool(false) => "nothing (the schema refuses every value)".to_owned(),
            _ => "any JSON value".to_owned(),
        };
    };
    if depth > DEPTH {
        return "a nested value".to_owned();
    }
    if let Some(value) = map.get("const") {
        return format!("exactly {}", toolhost_core::validate::preview(value));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let names: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return format!("one of {}", text::one_line(&names.join(", "), 400));
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = map.get(union) {
            let words: Vec<String> = options.iter().map(|o| describe_at(o, depth + 1)).collect();
            return words.join(" or ");
        }
    }
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        return format!("a value matching `{}`", text::one_line(reference, 100));
    }
    match map.get("type") {
        Some(Value::String(t)) => typed_words(t, map, depth),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| typed_words(t, map, depth))
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any JSON value".to_owned(),
    }
}

fn typed_words(kind: &str, map: &Map<String, Value>, depth: usize) -> String {
    let number = |key: &str| map.get(key).filter(|v| v.is_number()).map(Value::to_string);
    match kind {
        "string" => {
            let mut s = "a string".to_owned();
            match (map.get("minLength"), map.get("maxLength")) {
                (Some(min), Some(max)) => s.push_str(&format!(" of {min} to {max} characters")),
                (Some(min), None) => s.push_str(&format!(" of at least {min} characters")),
                (None, Some(max)) => s.push_str(&format!(" of at most {max} characters")),
                (None, None) => {}
            }
            if let Some(format) = map.get("format").and_then(Value::as_str) {
                s.push_str(&format!(" in `{}` format", text::one_line(format, 40)));
            }
            if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
                s.push_str(&format!(" matching the pattern `{}`", text::one_line(pattern, 200)));
            }
            s
        }
        "integer" | "number" => {
            let mut s = if kind == "integer" { "an integer" } else { "a number" }.to_owned();
            let low = number("minimum").or_else(|| number("exclusiveMinimum").map(|n| format!("{n} (exclusive)")));
            let high = number("maximum").or_else(|| number("exclusiveMaximum").map(|n| format!("{n} (exclusive)")));
            match (low, high) {
                (Some(a), Some(b)) => s.push_str(&format!(" from {a} to {b}")),
                (Some(a), None) => s.push_str(&format!(" no less than {a}")),
                (None, Some(b)) => s.push_str(&format!(" no greater than {b}")),
                (None, None) => {}
            }
            s
        }
        "boolean" => "true or false".to_owned(),
        "null" => "null".to_owned(),
        "array" => {
            let mut s = match map.get("items") {
                Some(items) => format!("an array of {}", plural(&describe_at(items, depth + 1))),
                None => "an array".to_owned(),
            };
            match (map.get("minItems"), map.get("maxItems")) {
                (Some(min), Some(max)) => s.push_str(&format!(" ({min} to {max} items)")),
                (Some(min), None) => s.push_str(&format!(" (at least {min} items)")),
                (None, Some(max)) => s.push_str(&format!(" (at most {max} items)")),
                (None, None) => {}
            }
            s
        }
        "object" => {
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if required.is_empty() {
                "an object".to_owned()
            } else {
                format!("an object with {}", text::one_line(&required.join(", "), 200))
            }
        }
        other => format!("a value of type `{}`", text::one_line(other, 40)),
    }
}

/// "a string of …" → "strings of …", for "an array of strings".
fn plural(words: &str) -> String {
    let bare = words
        .strip_prefix("an ")
        .or_else(|| words.strip_prefix("a "))
        .unwrap_or(words);
    let (head, rest) = bare.split_once(' ').unwrap_or((bare, ""));
    let head = match head {
        "true" => return format!("booleans ({words})"),
        "any" | "one" | "exactly" | "nothing" | "null" => return format!("items that are {words}"),
        h if h.ends_with('y') => format!("{}ies", &h[..h.len() - 1]),
        h => format!("{h}s"),
    };
    if rest.is_empty() {
        head
    } else {
        format!("{head} {rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn simple_properties_become_typed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 10, "title": "City"},
                "days": {"type": "integer", "minimum": 1, "maximum": 16},
                "unbounded": {"type": "integer"},
                "units": {"type": "string", "enum": ["METRIC", "IMPERIAL"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
            },
            "required": ["city"]
        });
        let p = parameters(&schema);
        let by = |name: &str| p.iter().find(|x| x.name == name).unwrap();
        assert_eq!(p.len(), 6);
        assert!(by("city").required && !by("days").required);
        assert_eq!(
            by("city").description,
            "City",
            "title stands in for a missing description"
        );
        assert_eq!(by("days").kind, Kind::Typed(InputType::Int { min: Some(1), max: 16 }));
        assert_eq!(by("unbounded").kind, Kind::Schema);
        assert!(matches!(&by("units").kind, Kind::Typed(InputType::Enum { values }) if values.len() == 2));
        assert_eq!(by("tags").kind, Kind::Schema);
        assert_eq!(by("tags").type_name(), "array");
        assert_eq!(by("maybe").kind, Kind::Schema);
    }

    #[test]
    fn schemas_in_words() {
        assert_eq!(
            describe(&json!({"type": "array", "items": {"type": "string"}})),
            "an array of strings"
        );
        assert_eq!(
            describe(&json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 3})),
            "an array of integers no less than 0 (at most 3 items)"
        );
        assert_eq!(
            describe(&json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            "a string or null"
        );
        assert_eq!(describe(&json!({"type": ["number", "null"]})), "a number or null");
        assert_eq!(describe(&json!({"type": "integer"})), "an integer");
        assert_eq!(describe(&json!({})), "any JSON value");
        assert_eq!(
            describe(&json!({"type": "object", "required": ["a", "b"]})),
            "an object with a, b"
        );
        assert_eq!(describe(&json!({"enum": [1, "x"]})), "one of 1, x");
    }
}
