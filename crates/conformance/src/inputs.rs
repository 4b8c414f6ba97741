//! Inputs the checker sends: the simplest valid one for a tool it may invoke, and one its
//! schema surely refuses for a tool it may not (so the server must refuse it before running).

use serde_json::{Map, Value, json};

/// A value no scalar parameter accepts and no lenient server coerces into one.
fn wrong_value() -> Value {
    json!({"conformance": "a value of the wrong type"})
}

/// The simplest input a JSON Schema object accepts: every required property with its simplest
/// value.
pub(crate) fn valid(schema: &Value) -> Value {
    let mut input = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        input.insert(name.to_owned(), simplest(property));
    }
    Value::Object(input)
}

fn simplest(schema: &Value) -> Value {
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(value) = schema.get("default") {
        return value.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds.iter().find_map(Value::as_str).unwrap_or("string"),
        _ => "string",
    };
    // 1, moved into [minimum, maximum] when they exclude it.
    let mut number = 1.0_f64;
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        number = number.max(min.ceil());
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        number = number.min(max.floor());
    }
    match kind {
        "integer" | "number" => json!(number as i64),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => valid(schema),
        "null" => Value::Null,
        _ => json!("conformance"),
    }
}

/// An input `schema` refuses, and how: a required property left out, else a property given a
/// value of the wrong type (an object for a scalar, a string for an object). Not an unknown
/// property, even under `additionalProperties: false`: a lenient server would ignore it and
/// run the tool. `None` when no input is surely refused: the checker then sends nothing to
/// that tool.
pub(crate) fn invalid(schema: &Value) -> Option<(Value, String)> {
    let validator = toolhost_core::validate::compile(schema).ok()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut candidates = Vec::new();
    if let Some(name) = required.first() {
        candidates.push((json!({}), format!("leaves out the required input `{name}`")));
    }
    for (name, property) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let wrong = if property.get("type").and_then(Value::as_str) == Some("object") {
            json!("not an object")
        } else {
            wrong_value()
        };
        let mut input = valid(schema);
        input[name] = wrong;
        candidates.push((input, format!("gives `{name}` a value of the wrong type")));
    }
    candidates.into_iter().find(|(input, _)| !validator.is_valid(input))
}

/// Whether an N-ACT parameter is required (the default).
fn required(parameter: &Value) -> bool {
    parameter.get("required").and_then(Value::as_bool) != Some(false)
}

fn kind(parameter: &Value) -> &str {
    parameter.get("type").and_then(Value::as_str).unwrap_or("string")
}

/// N-ACT `input_parameters` from a JSON object of arguments.
pub(crate) fn nact_parameters(input: &Value) -> Value {
    let pairs = input
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| json!({"name": name, "value": value}));
    Value::Array(pairs.collect())
}

/// The simplest valid N-ACT input for `parameters` (a signature's `input_parameters`).
pub(crate) fn nact_valid(parameters: &[Value]) -> Value {
    let mut input = Map::new();
    for parameter in parameters.iter().filter(|p| required(p)) {
        let Some(name) = parameter.get("name").and_then(Value::as_str) else {
            continue;
        };
        let value = match kind(parameter) {
            "int" => {
                let max = parameter.get("max").and_then(Value::as_i64).unwrap_or(65_535);
                let min = parameter.get("min").and_then(Value::as_i64).unwrap_or(1);
                json!(min.max(1).min(max))
            }
            "boolean" => json!(true),
            "enum" => parameter
                .get("allowed-values")
                .and_then(Value::as_array)
                .and_then(|v| v.first())
                .and_then(|v| v.get("name"))
                .cloned()
                .unwrap_or(Value::Null),
            _ => json!(nact_string(parameter)),
        };
        input.insert(name.to_owned(), value);
    }
    Value::Object(input)
}

/// A string an N-ACT `string` input accepts: the first of a few plain candidates that meets its
/// `pattern` and `max-length` (extensions a server may add), else a word.
fn nact_string(parameter: &Value) -> &'static str {
    const CANDIDATES: [&str; 6] = ["conformance", "1", "a", "A", "0", "x1"];
    let mut schema = json!({"type": "string"});
    if let Some(pattern) = parameter.get("pattern") {
        schema["pattern"] = pattern.clone();
    }
    if let Some(max) = parameter.get("max-length") {
        schema["maxLength"] = max.clone();
    }
    let Ok(validator) = toolhost_core::validate::compile(&schema) else {
        return CANDIDATES[0];
    };
    CANDIDATES
        .into_iter()
        .find(|c| validator.is_valid(&json!(c)))
        .unwrap_or(CANDIDATES[0])
}

/// N-ACT `input_parameters` the signature surely refuses, and how: every input left out when one
/// is required, else a typed input (`int`, `boolean`, `enum`) given a value of another type.
pub(crate) fn nact_invalid(parameters: &[Value]) -> Option<(Value, String)> {
    if let Some(name) = parameters
        .iter()
        .filter(|p| required(p))
        .find_map(|p| p.get("name").and_then(Value::as_str))
    {
        return Some((json!([]), format!("leaves out the required input `{name}`")));
    }
    parameters.iter().find_map(|parameter| {
        let name = parameter.get("name").and_then(Value::as_str)?;
        let bad = match kind(parameter) {
            "int" => json!("not-a-number"),
            "boolean" => json!("not-a-boolean"),
            "enum" => json!("NOT_AN_ALLOWED_VALUE_OF_THE_CONFORMANCE_CHECK"),
            _ => return None,
        };
        Some((
            json!([{"name": name, "value": bad}]),
            format!("gives the {} input `{name}` the value {bad}", kind(parameter)),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_invalid_input_is_refused_by_the_schema_and_the_valid_one_accepted() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 3}, "b": {"type": "string", "enum": ["X"]}}, "required": ["a", "b"]});
        let validator = toolhost_core::validate::compile(&schema).unwrap();
        assert!(validator.is_valid(&valid(&schema)), "{}", valid(&schema));
        let (input, why) = invalid(&schema).unwrap();
        assert!(!validator.is_valid(&input) && why.contains("`a`"));
        let optional = json!({"type": "object", "properties": {"n": {"type": "number"}}});
        let (input, why) = invalid(&optional).unwrap();
        assert_eq!(input["n"], wrong_value(), "{why}");
        assert!(
            invalid(&json!({"type": "object"})).is_none(),
            "nothing is surely refused"
        );
    }

    #[test]
    fn nact_inputs_follow_the_signature() {
        let parameters = vec![
            json!({"name": "q", "type": "string", "required": false}),
            json!({"name": "n", "type": "int", "max": 0, "required": false}),
        ];
        let (bad, why) = nact_invalid(&parameters).unwrap();
        assert_eq!(bad, json!([{"name": "n", "value": "not-a-number"}]), "{why}");
        assert!(nact_invalid(&parameters[..1]).is_none());
        let required = vec![json!({"name": "unit", "type": "enum", "allowed-values": [{"name": "KM"}]})];
        assert_eq!(nact_valid(&required), json!({"unit": "KM"}));
        assert_eq!(nact_invalid(&required).unwrap().0, json!([]));
    }
}
