//! The `source: human` inputs on the confirmation page (CHEQ's Flow B, issue #40.4): the fields
//! the page shows, and what the human typed, read as each input's type and checked against the
//! inputs' schema before an approval keeps it. Nothing here ever writes a typed value back: a
//! problem names the field and what it takes, never what was typed.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use toolhost_core::confirm::HumanValues;
use toolhost_core::validate::Expects as _;
use toolhost_core::{InputType, Parameter, Version};

use super::escape;
use super::record::Asked;

/// The prefix of the form's field names: `human.<parameter>`.
const FIELD: &str = "human.";

/// What the page asks for `parameter`.
pub fn asked(parameter: &Parameter) -> Asked {
    Asked {
        name: parameter.name.clone(),
        description: parameter.description.clone(),
        kind: parameter.kind.name().to_owned(),
        required: parameter.required,
        choices: match &parameter.kind {
            InputType::Enum { values } => values.iter().map(|v| v.name.clone()).collect(),
            InputType::String { .. }
            | InputType::Int { .. }
            | InputType::Number { .. }
            | InputType::Boolean
            | InputType::Json { .. } => Vec::new(),
        },
    }
}

/// The form's rows for `asked` (empty when there are none), each problem beside its field.
/// Fields are never pre-filled: the page does not hold what was typed.
pub fn fields(asked: &[Asked], problems: &BTreeMap<String, String>) -> String {
    if asked.is_empty() {
        return String::new();
    }
    let mut rows = String::new();
    for a in asked {
        let id = format!("human-{}", a.name);
        let name = format!("{FIELD}{}", a.name);
        let required = if a.required { " required" } else { "" };
        let control = match a.kind.as_str() {
            "enum" | "boolean" => {
                let choices: Vec<&str> = match a.kind.as_str() {
                    "enum" => a.choices.iter().map(String::as_str).collect(),
                    _ => vec!["true", "false"],
                };
                let mut options = String::from("<option value=\"\"></option>");
                for choice in choices {
                    options.push_str(&format!("<option>{}</option>", escape(choice)));
                }
                format!(
                    "<select name=\"{}\" id=\"{}\"{required}>{options}</select>",
                    escape(&name),
                    escape(&id)
                )
            }
            "json" => format!(
                "<textarea name=\"{}\" id=\"{}\" rows=\"3\" autocomplete=\"off\" spellcheck=\"false\"{required}></textarea>",
                escape(&name),
                escape(&id)
            ),
            // Text and numbers are masked like a password: someone behind the human, or a
            // screen recorder, should not read a card number off the page.
            _ => format!(
                "<input type=\"password\" name=\"{}\" id=\"{}\" autocomplete=\"off\"{required}>",
                escape(&name),
                escape(&id)
            ),
        };
        let problem = problems
            .get(&a.name)
            .map(|p| {
                format!(
                    "<p class=\"problem\" id=\"problem-{}\">{}</p>",
                    escape(&a.name),
                    escape(p)
                )
            })
            .unwrap_or_default();
        let optional = if a.required {
            ""
        } else {
            " <span class=\"note\">(optional)</span>"
        };
        rows.push_str(&format!(
            "<tr><th><label for=\"{}\"><code>{}</code></label>{optional}</th><td>{}</td><td>{control}{problem}</td></tr>",
            escape(&id),
            escape(&a.name),
            escape(&a.description)
        ));
    }
    let whole = problems
        .get("")
        .map(|p| format!("<p class=\"problem\" id=\"problem\">{}</p>", escape(p)))
        .unwrap_or_default();
    format!(
        "<h2>Only you enter these</h2><p class=\"note\">The agent never sees these values: they go to the tool with this call, once, and are then deleted.</p>\
         {whole}<table><tr><th>Parameter</th><th>Meaning</th><th>Your value</th></tr>{rows}</table>"
    )
}

/// What the human typed in the form `pairs` for `version`'s `source: human` inputs, read as
/// each input's type and checked against their schema; or, per parameter, what is wrong.
pub fn read(version: &Version, pairs: &[(String, String)]) -> Result<HumanValues, BTreeMap<String, String>> {
    let mut values = Map::new();
    let mut problems = BTreeMap::new();
    for p in &version.human_inputs {
        let text = pairs
            .iter()
            .find(|(k, _)| k.strip_prefix(FIELD) == Some(p.name.as_str()))
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.trim().is_empty());
        let Some(text) = text else {
            if p.required {
                problems.insert(p.name.clone(), format!("`{}` is required: {}", p.name, p.expects()));
            }
            continue;
        };
        match typed(&p.kind, text) {
            Some(value) => {
                values.insert(p.name.clone(), value);
            }
            None => {
                problems.insert(p.name.clone(), format!("`{}` expects {}", p.name, p.expects()));
            }
        }
    }
    if problems.is_empty()
        && let Err(errors) = version.check_human(&values)
    {
        for error in errors {
            // The checker's own words may quote the value: say only what the field takes.
            let message = match version.human_inputs.iter().find(|p| p.name == error.parameter) {
                Some(p) => format!("`{}` expects {}", p.name, p.expects()),
                None => "these values do not fit together; check each against its meaning".to_owned(),
            };
            problems.insert(error.parameter, message);
        }
    }
    if problems.is_empty() {
        Ok(HumanValues::new(values))
    } else {
        Err(problems)
    }
}

/// `text` as a value of `kind` (a form sends text only), or `None` when it is not one.
fn typed(kind: &InputType, text: &str) -> Option<Value> {
    match kind {
        InputType::String { .. } => Some(Value::String(text.to_owned())),
        InputType::Int { .. } => text.trim().parse::<i64>().ok().map(Value::from),
        InputType::Number { .. } => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        InputType::Boolean => match text.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        InputType::Enum { values } => values.iter().find(|v| v.name == text.trim()).map(|v| v.wire()),
        InputType::Json { .. } => serde_json::from_str(text).ok(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolhost_core::InputType;

    #[test]
    fn form_text_is_read_as_the_inputs_type() {
        let int = InputType::Int { min: None, max: 10 };
        assert_eq!(super::typed(&int, " 7 "), Some(json!(7)));
        assert_eq!(super::typed(&int, "7.5"), None);
        assert_eq!(super::typed(&InputType::Boolean, "true"), Some(json!(true)));
        assert_eq!(super::typed(&InputType::Boolean, "yes"), None);
        let text = InputType::String {
            max_length: None,
            pattern: None,
        };
        assert_eq!(super::typed(&text, " 4111 "), Some(json!(" 4111 ")));
        let schema = InputType::Json { schema: json!({}) };
        assert_eq!(super::typed(&schema, "{\"a\": [1]}"), Some(json!({"a": [1]})));
        assert_eq!(super::typed(&schema, "{a"), None);
    }
}
