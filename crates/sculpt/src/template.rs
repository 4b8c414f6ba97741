//! Templates: text with `{{reference}}` holes, and JSON values whose strings are templates.
//!
//! Parsed and checked once at load. A template that is exactly one hole keeps the value's JSON
//! type (`"{{input.days}}"` sends the number 3); otherwise values are written into the text.
//! A hole whose value is absent or null leaves out the whole item it is in (a query parameter,
//! a header, a body member), so optional inputs need no special syntax.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::jq;
use crate::reference::{Names, Reference, Scope};

/// Text with holes.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    /// A reference and its text as written (names only, never values).
    Hole(Reference, String),
}

impl Template {
    /// Parses `text`, checking every reference.
    pub fn parse(text: &str, names: &Names<'_>) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(Part::Text(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else {
                return Err(format!("`{{{{` is not closed by `}}}}` in `{text}`"));
            };
            let written = after[..end].trim();
            parts.push(Part::Hole(Reference::parse(written, names)?, written.to_owned()));
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// A template with nothing in it (where a value is given otherwise).
    pub fn hole_free() -> Self {
        Self { parts: Vec::new() }
    }

    /// A template that is one hole.
    pub fn hole(reference: Reference, written: &str) -> Self {
        Self {
            parts: vec![Part::Hole(reference, written.to_owned())],
        }
    }

    /// Whether any hole reads a secret.
    pub fn has_secret(&self) -> bool {
        self.references().any(Reference::is_secret)
    }

    /// Every reference in the template.
    pub fn references(&self) -> impl Iterator<Item = &Reference> {
        self.parts.iter().filter_map(|p| match p {
            Part::Hole(r, _) => Some(r),
            Part::Text(_) => None,
        })
    }

    /// The value for one call: the hole's own value when the template is one hole, else text.
    /// `None` when a hole has no value.
    pub fn value<'s>(&'s self, scope: &Scope<'s>) -> Option<Cow<'s, Value>> {
        match self.parts.as_slice() {
            [Part::Hole(r, _)] => r.lookup(scope),
            _ => self
                .text(scope, |s, out| out.push_str(s))
                .map(|s| Cow::Owned(Value::String(s))),
        }
    }

    /// The text for one call, with each hole's text passed through `encode`. `None` when a
    /// hole has no value.
    pub fn text(&self, scope: &Scope<'_>, encode: impl Fn(&str, &mut String)) -> Option<String> {
        self.text_of(scope, |value, out| encode(&as_text(value), out))
    }

    /// The text for one call, with each hole's value written by `write`. `None` when a hole has
    /// no value.
    pub fn text_of(&self, scope: &Scope<'_>, write: impl Fn(&Value, &mut String)) -> Option<String> {
        self.text_by(scope, |_, value, out| write(value, out))
    }

    /// As [`Self::text_of`], `write` also told which reference each hole is.
    pub fn text_by(&self, scope: &Scope<'_>, write: impl Fn(&Reference, &Value, &mut String)) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Hole(r, _) => write(r, &*r.lookup(scope)?, &mut out),
            }
        }
        Some(out)
    }

    /// The template as written, with holes shown as `{…}`, for messages and logs (never values).
    pub fn shape(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.as_str(),
                Part::Hole(..) => "{…}",
            })
            .collect()
    }

    /// The input this template is exactly one hole of, if any.
    pub fn sole_input(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Hole(Reference::Input(name), _)] => Some(name),
            _ => None,
        }
    }

    /// The first hole without a value in this call, as written (for messages).
    pub fn missing(&self, scope: &Scope<'_>) -> Option<&str> {
        self.parts.iter().find_map(|p| match p {
            Part::Hole(r, written) if r.lookup(scope).is_none() => Some(written.as_str()),
            _ => None,
        })
    }
}

/// A value written into text: strings as they are, other JSON as JSON.
pub(crate) fn as_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// A JSON value whose strings are templates (a `body`, a query or form value).
#[derive(Debug, Clone)]
pub(crate) enum ValueTemplate {
    /// No holes anywhere below: sent as written.
    Literal(Value),
    Text(Template),
    Array(Vec<ValueTemplate>),
    Object(Vec<(String, ValueTemplate)>),
    /// `{jq: PROGRAM}`: the value a jq program computes before the request is built; the index
    /// of the program among the step's request programs.
    Jq(usize),
    /// `{from: "{{input.priority}}", map: {LOW: P4, HIGH: P1}}`: the hole's value translated by
    /// the table; a value the table does not name is sent as it is.
    Map {
        from: Template,
        table: Map<String, Value>,
    },
}

impl ValueTemplate {
    /// Parses every string in `value` as a template; `{jq: ...}` programs are compiled into
    /// `programs` (run before the request is built).
    pub fn parse(value: &Value, names: &Names<'_>, programs: &mut Vec<jq::Program>) -> Result<Self, String> {
        Ok(match value {
            Value::String(s) if s.contains("{{") => Self::Text(Template::parse(s, names)?),
            Value::Array(items) => {
                let items = items
                    .iter()
                    .map(|v| Self::parse(v, names, programs))
                    .collect::<Result<Vec<_>, _>>()?;
                if items.iter().all(|i| matches!(i, Self::Literal(_))) {
                    Self::Literal(value.clone())
                } else {
                    Self::Array(items)
                }
            }
            Value::Object(members) if members.len() == 1 && members.get("jq").is_some_and(Value::is_string) => {
                let code = members["jq"].as_str().unwrap_or_default();
                let program = jq::compile(code).map_err(|e| format!("the jq program does not compile: {e}"))?;
                programs.push(program);
                Self::Jq(programs.len() - 1)
            }
            Value::Object(members)
                if members.len() == 2
                    && members.get("map").is_some_and(Value::is_object)
                    && members.contains_key("from") =>
            {
                let from = match members.get("from") {
                    Some(Value::String(text)) if text.contains("{{") => Template::parse(text, names)?,
                    _ => return Err("`from` of a value map is a template such as \"{{input.priority}}\"".to_owned()),
                };
                let table = members["map"].as_object().cloned().unwrap_or_default();
                if let Some(name) = from.sole_input()
                    && let Some(input) = names.inputs.iter().find(|p| p.name == name)
                    && let toolhost_core::InputType::Enum { values } = &input.kind
                {
                    let unmapped: Vec<&str> = values
                        .iter()
                        .map(|v| v.name.as_str())
                        .filter(|v| !table.contains_key(*v))
                        .collect();
                    if !unmapped.is_empty() {
                        return Err(format!(
                            "the map leaves out {} of enum input `{name}`; map every value",
                            unmapped.join(", ")
                        ));
                    }
                }
                Self::Map { from, table }
            }
            Value::Object(members) => {
                let members = members
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), Self::parse(v, names, programs)?)))
                    .collect::<Result<Vec<_>, String>>()?;
                if members.iter().all(|(_, m)| matches!(m, Self::Literal(_))) {
                    Self::Literal(value.clone())
                } else {
                    Self::Object(members)
                }
            }
            other => Self::Literal(other.clone()),
        })
    }

    /// Whether the value is one scalar (or a computed value, checked when it is sent).
    pub fn is_scalar(&self) -> bool {
        match self {
            Self::Literal(v) => !matches!(v, Value::Object(_) | Value::Array(_)),
            Self::Text(_) | Self::Jq(_) | Self::Map { .. } => true,
            Self::Array(_) | Self::Object(_) => false,
        }
    }

    /// Every reference below.
    pub fn references(&self) -> Vec<&Reference> {
        match self {
            Self::Literal(_) | Self::Jq(_) => Vec::new(),
            Self::Text(t) | Self::Map { from: t, .. } => t.references().collect(),
            Self::Array(items) => items.iter().flat_map(Self::references).collect(),
            Self::Object(members) => members.iter().flat_map(|(_, m)| m.references()).collect(),
        }
    }

    /// The value for one call; members and elements whose holes have no value are left out.
    pub fn render(&self, scope: &Scope<'_>) -> Option<Value> {
        match self {
            Self::Literal(v) => Some(v.clone()),
            Self::Text(t) => t.value(scope).map(Cow::into_owned),
            Self::Jq(i) => scope.computed.get(*i).cloned().flatten(),
            Self::Map { from, table } => {
                let value = from.value(scope)?;
                Some(
                    table
                        .get(as_text(&value).as_ref())
                        .cloned()
                        .unwrap_or_else(|| value.into_owned()),
                )
            }
            Self::Array(items) => Some(Value::Array(items.iter().filter_map(|i| i.render(scope)).collect())),
            Self::Object(members) => Some(Value::Object(
                members
                    .iter()
                    .filter_map(|(k, m)| Some((k.clone(), m.render(scope)?)))
                    .collect::<Map<String, Value>>(),
            )),
        }
    }
}

/// Issue #12: the template and reference parsers take any text without panicking, and a text
/// without `{{` always parses.
#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::Template;
    use crate::reference::{Names, parse_path};

    fn names() -> Names<'static> {
        Names {
            inputs: &[],
            steps: &[],
            secrets: None,
            item: false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn templates_never_panic(text in "\\PC{0,80}", holes in "(\\{\\{[a-z._\\[\\]0-9|' ]{0,20}\\}\\}){0,3}") {
            let _ = Template::parse(&format!("{text}{holes}{text}"), &names());
            let _ = parse_path(&text);
            let _ = parse_path(&holes);
        }

        #[test]
        fn text_without_holes_always_parses(text in "[^{}]{0,80}") {
            let template = Template::parse(&text, &names());
            prop_assert!(template.is_ok(), "{:?}", template.err());
        }
    }
}
