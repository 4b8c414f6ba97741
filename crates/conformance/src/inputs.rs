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

/// Whether `schema` accepts `input`; `None` when the schema does not compile.
pub(crate) fn accepts(schema: &Value, input: &Value) -> Option<bool> {
    toolhost_core::validate::compile(schema)
        .ok()
        .map(|validator| validator.is_valid(input))
}

/// Inputs that may break `schema`, and how: a required property left out, else a property
/// given a value of the wrong type (an object for a scalar, a string for an object). Not an
/// unknown property, even under `additionalProperties: false`: a lenient server would ignore it
/// and run the tool.
fn refusal_candidates(schema: &Value) -> Vec<(Value, String)> {
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
    candidates
}

/// An input `schema` surely refuses, and how (see [`refusal_candidates`]). `None` when no
/// input is surely refused: the checker then sends nothing to that tool.
pub(crate) fn invalid(schema: &Value) -> Option<(Value, String)> {
    invalid_for_all(schema, &[])
}

/// An input `schema` and every one of `others` surely refuse: for a tool whose request may
/// resolve to any of them (another version, an operation's own `inputs`).
pub(crate) fn invalid_for_all(schema: &Value, others: &[&Value]) -> Option<(Value, String)> {
    refusal_candidates(schema).into_iter().find(|(input, _)| {
        std::iter::once(schema)
            .chain(others.iter().copied())
            .all(|s| accepts(s, input) == Some(false))
    })
}

/// An input that tells the schema `expected` apart from `others` (other versions of one
/// tool): first one `expected` refuses and others accept (`false`: a server that resolves to
/// `expected` runs nothing), else, when `may_run`, one `expected` accepts and others refuse
/// (`true`); each time one that every other version judges so before one that some do. `known` are inputs tried first: ones the tool is known to tell its versions apart
/// by (the fixture catalog's, [`crate::fixture::telling_inputs`]), which the schemas alone may
/// not suggest (another value of an enum, say).
pub(crate) fn telling_apart(
    expected: &Value,
    others: &[&Value],
    may_run: bool,
    known: &[Value],
) -> Option<(Value, bool)> {
    let mut candidates = known.to_vec();
    candidates.push(json!({}));
    for schema in std::iter::once(expected).chain(others.iter().copied()) {
        let base = valid(schema);
        candidates.push(base.clone());
        for (name, property) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if base.get(name).is_none() {
                let mut more = base.clone();
                more[name] = simplest(property);
                candidates.push(more);
            }
        }
        candidates.extend(refusal_candidates(schema).into_iter().map(|(input, _)| input));
    }
    // An input `expected` judges `!verdict` and every other version (else one) `verdict`:
    // the more versions it tells `expected` from, the more wrong resolutions it shows.
    let apart = |runs: bool, every: bool| {
        candidates.iter().find(|c| {
            let other = |s: &&Value| accepts(s, c) == Some(!runs);
            accepts(expected, c) == Some(runs)
                && if every {
                    others.iter().all(other)
                } else {
                    others.iter().any(other)
                }
        })
    };
    let modes: &[bool] = if may_run { &[false, true] } else { &[false] };
    modes.iter().find_map(|&runs| {
        apart(runs, true)
            .or_else(|| apart(runs, false))
            .map(|input| (input.clone(), runs))
    })
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
    fn inputs_tell_versions_apart_without_running_where_they_can() {
        let old = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false});
        let new = json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"], "additionalProperties": false});
        // The old version refuses `days`, which the new one takes: nothing runs where `@1` is right.
        let (input, runs) = telling_apart(&old, &[&new], false, &[]).unwrap();
        assert!(!runs && input.get("days").is_some(), "{input}");
        // The newest refuses nothing an older one takes: only an input that runs tells it apart.
        assert!(telling_apart(&new, &[&old], false, &[]).is_none());
        let (input, runs) = telling_apart(&new, &[&old], true, &[]).unwrap();
        assert!(runs && input.get("days").is_some(), "{input}");
        // Versions told apart by an enum's values only: the schemas suggest none, the fixture's
        // markers do (V1_2 is refused by 1.0.0 alone, V2 taken by 2.0.0 alone).
        let markers = |values: &[&str]| json!({"type": "object", "properties": {"marker": {"type": "string", "enum": values}}, "required": ["marker"]});
        let (v1, v1_2, v2) = (
            markers(&["V1"]),
            markers(&["V1", "V1_2"]),
            markers(&["V1", "V1_2", "V2"]),
        );
        let known = crate::fixture::telling_inputs(&["conformance_versions"]);
        assert!(telling_apart(&v1, &[&v1_2, &v2], false, &[]).is_none());
        let (input, runs) = telling_apart(&v1, &[&v1_2, &v2], false, &known).unwrap();
        assert_eq!((input, runs), (json!({"marker": "V1_2"}), false));
        let (input, runs) = telling_apart(&v2, &[&v1, &v1_2], true, &known).unwrap();
        assert_eq!((input, runs), (json!({"marker": "V2"}), true));
        // A wrong type refused by both versions, not a missing input only one requires.
        let loose = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let (input, _) = invalid_for_all(&old, &[&loose]).unwrap();
        assert_eq!(input["city"], wrong_value());
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
