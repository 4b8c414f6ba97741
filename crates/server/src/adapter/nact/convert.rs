//! Pure translation between core types and N-ACT wire types.

use std::collections::HashSet;

use serde_json::{Map, Value};
use toolhost_core::{EnumValue, InputType, Outcome, OutputType, ParameterError, Tool, Version};
use toolhost_wire::nact::{AllowedValue, InputParameter, InvocationResult, NamedValue, OutputParameter, Signature};

use super::projection::Shown;

/// The signature of one version of a tool (N-ACT §6.1, Figure 2), with the inputs its
/// projection shows.
pub(super) fn signature(tool: &Tool, version: &Version, shown: &Shown) -> Signature {
    Signature {
        tool_id: tool.id.to_string(),
        name: tool.name.clone(),
        description: version.description.clone(),
        img: tool.img.clone(),
        version: version.number,
        current_version: tool.latest().number,
        semver: Some(version.semver.to_string()),
        tags: tool
            .tags_with_toolkit()
            .map(str::to_owned)
            // A hint for executors (APPROVALS.md §5.4); the gate holds whatever they know.
            .chain(version.confirmation.as_ref().map(|_| CONFIRMATION_TAG.to_owned()))
            .collect(),
        input_parameters: shown.inputs.iter().map(input).collect(),
        output_parameters: if version.outputs.is_empty() {
            vec![nothing()]
        } else {
            version.outputs.iter().map(output).collect()
        },
    }
}

/// The tag of a version whose calls a human confirms first (issue #40).
pub(crate) const CONFIRMATION_TAG: &str = "confirmation-required";

/// The output N-ACT shows for a version that returns nothing (`returns_nothing: true`): N-ACT
/// needs one or more outputs (§6.1), so one `json` output that is always `null` (issue #22.2).
fn nothing() -> OutputParameter {
    OutputParameter {
        id: NOTHING.to_owned(),
        name: NOTHING.to_owned(),
        kind: "json".to_owned(),
        description: "The tool returns nothing; this is null when the call succeeded.".to_owned(),
        required: true,
        allowed_values: None,
    }
}

/// The name of [`nothing`]'s output.
const NOTHING: &str = "result";

/// The pattern of a decimal number written as text: what a `number` input takes on N-ACT.
pub(super) const DECIMAL: &str = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$";

/// N-ACT's type of an input (§6.1: `string`, `int`, `boolean`, `enum`): a `number` is a
/// `string` holding a decimal (`format: decimal`, a pattern, and `min`/`max` as extensions),
/// read back as a number on invoke ([`decimals`]).
fn input_type(kind: &InputType) -> &'static str {
    match kind {
        InputType::Number { .. } => "string",
        other => other.name(),
    }
}

/// N-ACT's type of an output (§6.1: `string`, `int`, `enum`, `json`): a number or a boolean is
/// `json`, whose value is that JSON number or boolean; an image, audio or resource output is
/// `json`, whose value is `{"data": base64, "mimeType": …}` (a resource's also has its `uri`); a
/// `content` output is `json`, whose value is the list of MCP content blocks.
fn output_type(kind: &OutputType) -> &'static str {
    match kind {
        OutputType::Number | OutputType::Boolean | OutputType::Media { .. } => "json",
        other => other.name(),
    }
}

/// The invocation's inputs with every decimal string given for a `number` input read as the
/// number it writes (a JSON number is taken too); anything else is left for validation to
/// name.
pub(super) fn decimals(version: &Version, input: &mut Map<String, Value>) {
    for p in version
        .inputs
        .iter()
        .filter(|p| matches!(p.kind, InputType::Number { .. }))
    {
        if let Some(Value::String(text)) = input.get(&p.name)
            && is_decimal(text)
            && let Some(number) = text.parse::<f64>().ok().and_then(serde_json::Number::from_f64)
        {
            input.insert(p.name.clone(), Value::Number(number));
        }
    }
}

fn is_decimal(text: &str) -> bool {
    let body = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole)
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.is_none_or(digits)
        && exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)))
}

fn input(p: &toolhost_core::Parameter) -> InputParameter {
    let mut out = InputParameter {
        id: p.id.clone(),
        name: p.name.clone(),
        kind: input_type(&p.kind).to_owned(),
        format: None,
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
            out.format = Some("decimal".to_owned());
            out.pattern = Some(DECIMAL.to_owned());
            out.min = min.and_then(|n| serde_json::Number::from_f64(n).map(Value::Number));
            out.max = max.and_then(|n| serde_json::Number::from_f64(n).map(Value::Number));
        }
        InputType::Boolean => {}
        InputType::Enum { values } => out.allowed_values = Some(allowed(values)),
        // Never shown: the projection leaves json inputs out.
        InputType::Json { .. } => {}
    }
    out
}

fn output(o: &toolhost_core::Output) -> OutputParameter {
    OutputParameter {
        id: o.id.clone(),
        name: o.name.clone(),
        kind: output_type(&o.kind).to_owned(),
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

/// The invocation response: outputs in the signature's order (N-ACT §7), an enum's value by
/// its name.
pub(super) fn result(mut outcome: Outcome) -> InvocationResult {
    let mut output = std::mem::take(&mut outcome.output);
    let version = outcome.version();
    super::projection::to_names(version, &mut output);
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
    let output_parameters = if version.outputs.is_empty() {
        vec![NamedValue {
            name: NOTHING.to_owned(),
            value: Value::Null,
        }]
    } else {
        output_parameters
    };
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

#[cfg(test)]
mod decimal_tests {
    use super::is_decimal;

    /// The same language as the advertised `pattern` (`DECIMAL`).
    #[test]
    fn decimals_are_what_the_pattern_says() {
        for good in ["0", "1", "-2.5", "10.25", "1e3", "-1.5E-2", "0.001"] {
            assert!(is_decimal(good), "{good}");
        }
        for bad in ["", "01", "1.", ".5", "1e", "+1", "1,5", "NaN", "inf", "1 "] {
            assert!(!is_decimal(bad), "{bad}");
        }
    }
}
