//! JSON Schema 2020-12 documents built from typed parameters (docs/protocols.md §1).

use serde_json::{Map, Value, json};

use super::{EnumValue, InputType, Output, OutputType, Parameter};

/// The input object schema: one property per parameter, required ones listed, nothing else.
pub fn input_schema(inputs: &[Parameter]) -> Value {
    let properties: Map<String, Value> = inputs.iter().map(|p| (p.name.clone(), input_property(p))).collect();
    let required: Vec<&str> = inputs.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of one input parameter, with its description.
pub fn input_property(p: &Parameter) -> Value {
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
        InputType::Enum { values } => {
            s.insert("type".into(), "string".into());
            s.insert("enum".into(), enum_names(values));
        }
        // The schema as written; the parameter's description replaces its own.
        InputType::Json { schema } => s.extend(schema.as_object().cloned().unwrap_or_default()),
    }
    s.insert(
        "description".into(),
        describe_with_values(&p.description, &p.kind).into(),
    );
    Value::Object(s)
}

/// The output object schema.
pub fn output_schema(outputs: &[Output]) -> Value {
    let properties: Map<String, Value> = outputs.iter().map(|o| (o.name.clone(), output_property(o))).collect();
    let required: Vec<&str> = outputs.iter().filter(|o| o.required).map(|o| o.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of one output value, with its description.
pub(super) fn output_property(o: &Output) -> Value {
    let mut s = match &o.kind {
        OutputType::String => json!({"type": "string"}),
        OutputType::Int => json!({"type": "integer"}),
        OutputType::Number => json!({"type": "number"}),
        OutputType::Boolean => json!({"type": "boolean"}),
        OutputType::Enum { values } => json!({"type": "string", "enum": enum_names(values)}),
        OutputType::Json => json!({}),
    };
    if let Value::Object(map) = &mut s {
        map.insert("description".into(), o.description.clone().into());
    }
    s
}

fn enum_names(values: &[EnumValue]) -> Value {
    values.iter().map(|v| Value::from(v.name.clone())).collect()
}

/// A parameter description; for an enum, followed by what each value means, since JSON Schema's
/// `enum` has no place for per-value descriptions and a model needs them to choose.
fn describe_with_values(description: &str, kind: &InputType) -> String {
    let InputType::Enum { values } = kind else {
        return description.to_owned();
    };
    let mut text = description.trim_end().to_owned();
    text.push_str(" Allowed values: ");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            text.push_str("; ");
        }
        text.push_str(&v.name);
        text.push_str(" (");
        text.push_str(v.description.trim_end_matches('.'));
        text.push(')');
    }
    text.push('.');
    text
}
