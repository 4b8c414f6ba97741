//! Pure translation between core types and N-ACT wire types.

use std::collections::HashSet;

use serde_json::{Map, Value};
use toolhost_core::{EnumValue, InputType, Outcome, OutputType, ParameterError, Tool, Version};
use toolhost_wire::nact::{AllowedValue, InputParameter, InvocationResult, NamedValue, OutputParameter, Signature};

/// The signature of one version of a tool (N-ACT §6.1, Figure 2).
pub(super) fn signature(tool: &Tool, version: &Version) -> Signature {
    Signature {
        tool_id: tool.id.to_string(),
        name: tool.name.clone(),
        description: version.description.clone(),
        img: tool.img.clone(),
        version: version.number,
        current_version: tool.latest().number,
        semver: Some(version.semver.to_string()),
        tags: tool.tags_with_toolkit().map(str::to_owned).collect(),
        input_parameters: version.inputs.iter().map(input).collect(),
        output_parameters: version.outputs.iter().map(output).collect(),
    }
}

fn input(p: &toolhost_core::Parameter) -> InputParameter {
    let mut out = InputParameter {
        id: p.id.clone(),
        name: p.name.clone(),
        kind: p.kind.name().to_owned(),
        description: p.description.clone(),
        required: p.required,
        min: None,
        max: None,
        max_length: None,
        pattern: None,
        allowed_values: None,
    };
    match &p.kind {
        InputType::String { max_length, pattern } => {
            out.max_length = *max_length;
            out.pattern = pattern.clone();
        }
        InputType::Int { min, max } => {
            out.min = min.map(Value::from);
            out.max = Some(Value::from(*max));
        }
        InputType::Number { min, max } => {
            out.min = min.and_then(|n| serde_json::Number::from_f64(n).map(Value::Number));
            out.max = max.and_then(|n| serde_json::Number::from_f64(n).map(Value::Number));
        }
        InputType::Boolean => {}
        InputType::Enum { values } => out.allowed_values = Some(allowed(values)),
    }
    out
}

fn output(o: &toolhost_core::Output) -> OutputParameter {
    OutputParameter {
        id: o.id.clone(),
        name: o.name.clone(),
        kind: o.kind.name().to_owned(),
        description: o.description.clone(),
        required: o.required,
        allowed_values: match &o.kind {
            OutputType::Enum { values } => Some(allowed(values)),
            _ => None,
        },
    }
}

fn allowed(values: &[EnumValue]) -> Vec<AllowedValue> {
    values
        .iter()
        .map(|v| AllowedValue {
            name: v.name.clone(),
            description: v.description.clone(),
        })
        .collect()
}

/// The invocation's name/value pairs as an input object; a name given twice is a parameter error.
pub(super) fn input_object(pairs: Vec<NamedValue>) -> Result<Map<String, Value>, Vec<ParameterError>> {
    let mut seen = HashSet::with_capacity(pairs.len());
    let mut duplicates = Vec::new();
    let mut map = Map::with_capacity(pairs.len());
    for pair in pairs {
        if !seen.insert(pair.name.clone()) {
            if !duplicates.iter().any(|d: &ParameterError| d.parameter == pair.name) {
                duplicates.push(ParameterError {
                    message: format!("`{}` is given more than once; give each parameter once", pair.name),
                    parameter: pair.name,
                });
            }
            continue;
        }
        map.insert(pair.name, pair.value);
    }
    if duplicates.is_empty() {
        Ok(map)
    } else {
        Err(duplicates)
    }
}

/// The invocation response: outputs in the signature's order (N-ACT §7).
pub(super) fn result(mut outcome: Outcome) -> InvocationResult {
    let mut output = std::mem::take(&mut outcome.output);
    let version = outcome.version();
    let output_parameters = version
        .outputs
        .iter()
        .filter_map(|o| {
            output.remove(&o.name).map(|value| NamedValue {
                name: o.name.clone(),
                value,
            })
        })
        .collect();
    InvocationResult {
        output_parameters,
        version: Some(version.number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duplicate_names_are_parameter_errors() {
        let pairs = vec![
            NamedValue {
                name: "a".into(),
                value: json!(1),
            },
            NamedValue {
                name: "a".into(),
                value: json!(2),
            },
            NamedValue {
                name: "a".into(),
                value: json!(3),
            },
        ];
        let errors = input_object(pairs).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].parameter, "a");
        assert!(errors[0].message.contains("more than once"));
    }
}
