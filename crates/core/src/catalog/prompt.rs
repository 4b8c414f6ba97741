//! An agent as a prompt (MCP `prompts/get`): the arguments its front matter declares, the
//! resources it attaches (`attach:`), and its procedure with each `{{argument}}` filled in.
//!
//! ```yaml
//! arguments:
//!   - { name: city, description: The city to plan for., values: [Paris, Lisbon] }
//!   - { name: note, required: false, description: Anything to keep in mind. }
//! attach: [docs://handbook/style, "{{page}}"]
//! ```
//!
//! Checked at load: argument names are identifiers and unique; every `{{name}}` in the
//! procedure and in `attach` names a declared argument; a fixed `attach` URI is a resource the
//! catalog declares (one made of an argument is looked up when the prompt is got).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Catalog;
use super::problem::Severity;

/// The most arguments one prompt may declare.
const MAX_ARGUMENTS: usize = 32;
/// The most resources one prompt may attach.
const MAX_ATTACH: usize = 16;

/// A prompt argument as the front matter writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArgumentDef {
    name: String,
    description: String,
    #[serde(default = "yes")]
    required: bool,
    #[serde(default)]
    values: Vec<String>,
}

fn yes() -> bool {
    true
}

/// One argument of an agent's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name, as `{{name}}` in the procedure.
    pub name: String,
    /// What to give.
    pub description: String,
    /// Whether `prompts/get` must give it.
    pub required: bool,
    /// Suggested values, offered as completions (any text is still accepted).
    pub values: Vec<String>,
}

/// The `{{name}}` placeholders in `text`, in order.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        let name = after[..close].trim();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(name);
        }
        rest = &after[close + 2..];
    }
    out
}

/// `text` with each `{{name}}` placeholder of a declared argument (spaces inside the braces
/// allowed, as [`placeholders`] reads them) replaced by its value; an argument not given (an
/// optional one) becomes empty. One pass over `text`: a value is never read for placeholders
/// itself, and `{{…}}` that names no declared argument stays as written.
pub fn fill(text: &str, arguments: &[PromptArgument], values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        let name = after[..close].trim();
        out.push_str(&rest[..open]);
        if arguments.iter().any(|a| a.name == name) {
            out.push_str(values.get(name).map_or("", String::as_str));
        } else {
            out.push_str(&rest[open..open + 2 + close + 2]);
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

/// Checks the front matter's `arguments` and `attach` against the procedure and the catalog;
/// `report(severity, field, message)` records each problem.
pub(super) fn check(
    defs: Vec<ArgumentDef>,
    attach: &[String],
    procedure: &str,
    catalog: &Catalog,
    report: &dyn Fn(Severity, &str, String),
) -> Vec<PromptArgument> {
    if defs.len() > MAX_ARGUMENTS {
        report(
            Severity::Error,
            "arguments",
            format!("{} arguments; a prompt takes at most {MAX_ARGUMENTS}", defs.len()),
        );
    }
    if attach.len() > MAX_ATTACH {
        report(
            Severity::Error,
            "attach",
            format!("{} attachments; a prompt attaches at most {MAX_ATTACH}", attach.len()),
        );
    }
    let mut arguments: Vec<PromptArgument> = Vec::new();
    for (i, def) in defs.into_iter().enumerate() {
        let field = format!("arguments[{i}]");
        let mut chars = def.name.chars();
        let identifier = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            report(
                Severity::Error,
                &field,
                format!(
                    "`{}` is not an argument name; use a letter or `_` followed by letters, digits or `_`",
                    def.name
                ),
            );
            continue;
        }
        if arguments.iter().any(|a| a.name == def.name) {
            report(Severity::Error, &field, format!("`{}` is declared twice", def.name));
            continue;
        }
        if def.description.trim().is_empty() {
            report(
                Severity::Error,
                &field,
                format!("`{}` has an empty description; say what to give", def.name),
            );
        }
        arguments.push(PromptArgument {
            name: def.name,
            description: def.description,
            required: def.required,
            values: def.values,
        });
    }
    let declared = |name: &str| arguments.iter().any(|a| a.name == name);
    for name in placeholders(procedure) {
        if !declared(name) {
            report(
                Severity::Error,
                "procedure",
                format!("the procedure uses `{{{{{name}}}}}`, which no argument declares; add it to `arguments`"),
            );
        }
    }
    for (i, uri) in attach.iter().enumerate() {
        let field = format!("attach[{i}]");
        let used = placeholders(uri);
        if let Some(name) = used.iter().find(|n| !declared(n)) {
            report(
                Severity::Error,
                &field,
                format!("`{uri}` uses `{{{{{name}}}}}`, which no argument declares"),
            );
        } else if used.is_empty() && catalog.read_resource(uri).is_none() {
            report(
                Severity::Error,
                &field,
                format!(
                    "`{uri}` is not a resource the catalog declares; declare it under `resources:` in a catalog file"
                ),
            );
        }
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argument(name: &str) -> PromptArgument {
        PromptArgument {
            name: name.to_owned(),
            description: "d".to_owned(),
            required: false,
            values: Vec::new(),
        }
    }

    #[test]
    fn fill_reads_each_placeholder_once_as_placeholders_reads_it() {
        let arguments = [argument("city"), argument("note")];
        let values = BTreeMap::from([
            ("city".to_owned(), "Paris {{note}}".to_owned()),
            ("note".to_owned(), "rain".to_owned()),
        ]);
        // Spaces inside the braces as `placeholders` allows; a value is not filled again; an
        // undeclared name stays as written; a missing optional value is empty.
        assert_eq!(
            fill("{{city }} / {{  note}} / {{other}} / {{city}}{{", &arguments, &values),
            "Paris {{note}} / rain / {{other}} / Paris {{note}}{{"
        );
        assert_eq!(fill("a {{note}} b", &arguments, &BTreeMap::new()), "a  b");
        assert_eq!(placeholders("{{city }} {{  note}}"), ["city", "note"]);
    }
}
