//! JSON Schema 2020-12 documents built from typed parameters (docs/protocols.md §1).
//!
//! A version's schemas write values as the API spells them ([`Spelling::Wire`]): an enum's
//! wire values, defaults and examples as given. [`Spelling::Names`] writes each enum value by
//! its `UPPER_SNAKE` name instead, for whoever shows names (a protocol's projection, the
//! version lock's signature).

use serde_json::{Map, Value, json};

use super::{EnumValue, InputType, Output, OutputType, Parameter};

/// How a rendered schema writes enum values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// As the API spells them: each value's wire value (`open`), else its name.
    Wire,
    /// By name (`OPEN`); a default or example that is a wire value becomes its name.
    Names,
}

/// The input object schema: one property per parameter, required ones listed, nothing else,
/// and the version's `rules` (keywords over the whole object, such as `$defs` or `allOf`).
pub fn input_schema(inputs: &[Parameter], rules: &Map<String, Value>, spelling: Spelling) -> Value {
    let properties: Map<String, Value> = inputs
        .iter()
        .map(|p| (p.name.clone(), input_property(p, spelling)))
        .collect();
    let required: Vec<&str> = inputs.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    if let Value::Object(map) = &mut schema {
        map.extend(rules.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    schema
}

/// The schema of one input parameter, with its description, default and examples.
pub fn input_property(p: &Parameter, spelling: Spelling) -> Value {
    let mut s = Map::new();
    match &p.kind {
        InputType::String { max_length, pattern } => {
            s.insert("type".into(), "string".into());
            if let Some(n) = max_length {
                s.insert("maxLength".into(), (*n).into());
            }
            if let Some(pattern) = pattern {
                s.insert("pattern".into(), pattern.clone().into());
            }
        }
        InputType::Int { min, max } => {
            s.insert("type".into(), "integer".into());
            if let Some(min) = min {
                s.insert("minimum".into(), (*min).into());
            }
            s.insert("maximum".into(), (*max).into());
        }
        InputType::Number { min, max } => {
            s.insert("type".into(), "number".into());
            if let Some(min) = min {
                s.insert("minimum".into(), json!(min));
            }
            if let Some(max) = max {
                s.insert("maximum".into(), json!(max));
            }
        }
        InputType::Boolean => {
            s.insert("type".into(), "boolean".into());
        }
        InputType::Enum { values } => s.extend(enumeration(values, spelling)),
        // The schema as written; the parameter's description replaces its own.
        InputType::Json { schema } => s.extend(schema.as_object().cloned().unwrap_or_default()),
    }
    let values = match &p.kind {
        InputType::Enum { values } => values.as_slice(),
        _ => &[],
    };
    if let Some(default) = &p.default {
        s.insert("default".into(), spelled(default, values, spelling));
    }
    if !p.examples.is_empty() {
        let examples = p.examples.iter().map(|e| spelled(e, values, spelling)).collect();
        s.insert("examples".into(), Value::Array(examples));
    }
    s.insert(
        "description".into(),
        describe_with_values(&p.description, values, spelling).into(),
    );
    Value::Object(s)
}

/// The output object schema.
pub fn output_schema(outputs: &[Output], spelling: Spelling) -> Value {
    let properties: Map<String, Value> = outputs
        .iter()
        .map(|o| (o.name.clone(), output_property(o, spelling)))
        .collect();
    let required: Vec<&str> = outputs.iter().filter(|o| o.required).map(|o| o.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of one output value, with its description.
pub(super) fn output_property(o: &Output, spelling: Spelling) -> Value {
    let mut s = match &o.kind {
        OutputType::String => json!({"type": "string"}),
        OutputType::Int => json!({"type": "integer"}),
        OutputType::Number => json!({"type": "number"}),
        OutputType::Boolean => json!({"type": "boolean"}),
        OutputType::Enum { values } => Value::Object(enumeration(values, spelling)),
        OutputType::Json { schema } => schema.clone().unwrap_or_else(|| json!({})),
        OutputType::Media { kind } => kind.schema(),
    };
    if let Value::Object(map) = &mut s {
        map.insert("description".into(), o.description.clone().into());
    }
    s
}

/// `type` and `enum` of an enumeration: the values in `spelling`, and the one JSON type they
/// share (none when they mix types, e.g. wire values `1` and `"any"`).
fn enumeration(values: &[EnumValue], spelling: Spelling) -> Map<String, Value> {
    let spelled: Vec<Value> = values.iter().map(|v| spell(v, spelling)).collect();
    let type_of = |v: &Value| match v {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        _ => "number",
    };
    let mut types: Vec<&str> = spelled.iter().map(type_of).collect();
    types.sort_unstable();
    types.dedup();
    if types.len() == 2 && types.contains(&"integer") && types.contains(&"number") {
        types = vec!["number"];
    }
    let mut map = Map::new();
    if let [one] = types.as_slice() {
        map.insert("type".into(), (*one).into());
    }
    map.insert("enum".into(), Value::Array(spelled));
    map
}

fn spell(value: &EnumValue, spelling: Spelling) -> Value {
    match spelling {
        Spelling::Wire => value.wire(),
        Spelling::Names => Value::String(value.name.clone()),
    }
}

/// A default or example as `spelling` writes it: by name, a wire value of `values` becomes
/// that value's name.
fn spelled(given: &Value, values: &[EnumValue], spelling: Spelling) -> Value {
    match spelling {
        Spelling::Names => values
            .iter()
            .find(|v| v.wire() == *given)
            .map_or_else(|| given.clone(), |v| Value::String(v.name.clone())),
        Spelling::Wire => given.clone(),
    }
}

/// A value as text in a sentence: a string without its quotes, anything else as JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A parameter description; for an enum, followed by what each value means, since JSON Schema's
/// `enum` has no place for per-value descriptions and a model needs them to choose.
fn describe_with_values(description: &str, values: &[EnumValue], spelling: Spelling) -> String {
    if values.is_empty() {
        return description.to_owned();
    }
    let mut text_out = description.trim_end().to_owned();
    text_out.push_str(" Allowed values: ");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            text_out.push_str("; ");
        }
        text_out.push_str(&text(&spell(v, spelling)));
        text_out.push_str(" (");
        text_out.push_str(v.description.trim_end_matches('.'));
        text_out.push(')');
    }
    text_out.push('.');
    text_out
}
