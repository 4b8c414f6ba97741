//! What N-ACT shows of a version: its projection (docs/protocols.md §1, §3; issue #38.2).
//!
//! The catalog writes an input as any JSON Schema and an enum's values as the API spells them;
//! N-ACT §6.1 has four input types (string, int, boolean, enum) and enum values named in
//! capitalised snake case. So, decided here and nowhere else:
//!
//! - a scalar input is shown as N-ACT's type, an enum by its values' `UPPER_SNAKE` names (a
//!   `number` as a decimal string, [`super::convert`]); a default, which N-ACT has no member
//!   for, is said in the description;
//! - an optional input N-ACT cannot express (`json`) is left out of the signature: the tool
//!   works without it there, and a call that sends it is refused as for any unknown name;
//! - a version with a required one, or whose `input_rules` tie inputs together (anything but
//!   `$defs`), is not on N-ACT, with the reason ([`project`]).
//!
//! A call is validated against the projection (so its messages name what N-ACT shows), then its
//! enum names are mapped to the wire values the engine takes ([`to_wire`]), and an enum output's
//! wire value back to its name ([`to_names`]).

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use toolhost_core::catalog::{Spelling, has_wire_values, input_schema};
use toolhost_core::validate::{self, ParameterError, Validator};
use toolhost_core::{EnumValue, InputType, OutputType, Parameter, Version};

/// N-ACT §6.1: descriptions MUST be less than 2000 characters.
const MAX_DESCRIPTION: usize = 1999;

/// A version as N-ACT shows it.
#[derive(Debug)]
pub struct Shown {
    /// The inputs of its signature: enum values by name, a default said in words.
    pub inputs: Vec<Parameter>,
    /// The optional inputs left out of the signature, which N-ACT cannot express.
    pub omitted: Vec<String>,
    validator: OnceLock<Result<Arc<Validator>, String>>,
}

/// N-ACT's projection of `version`, or why the version is not on N-ACT.
pub fn project(version: &Version) -> Result<Shown, String> {
    if let Some(reason) = refusal(version) {
        return Err(reason);
    }
    let mut inputs = Vec::with_capacity(version.inputs.len());
    let mut omitted = Vec::new();
    for p in &version.inputs {
        match &p.kind {
            InputType::Json { .. } => omitted.push(p.name.clone()),
            _ => inputs.push(shown(p)),
        }
    }
    Ok(Shown {
        inputs,
        omitted,
        validator: OnceLock::new(),
    })
}

/// Why `version` is not on N-ACT (a required `json` input, or rules tying inputs together), or
/// `None` when it is.
pub fn refusal(version: &Version) -> Option<String> {
    if let Some(p) = version
        .inputs
        .iter()
        .find(|p| p.required && matches!(p.kind, InputType::Json { .. }))
    {
        return Some(format!(
            "its required input `{}` is `json` (a JSON Schema of its own), which N-ACT cannot express (§6.1: string, int, boolean, enum)",
            p.name
        ));
    }
    version.input_rules.keys().find(|k| *k != "$defs").map(|rule| {
        format!("its `input_rules` tie inputs together (`{rule}`), which an N-ACT signature cannot express")
    })
}

/// One scalar input as N-ACT shows it.
fn shown(p: &Parameter) -> Parameter {
    let mut shown = p.clone();
    let mut default = p.default.clone();
    if let InputType::Enum { values } = &mut shown.kind {
        default = default.map(|d| name_of(values, &d));
        for v in values.iter_mut() {
            v.value = None;
        }
    }
    shown.default = None;
    shown.examples = Vec::new();
    if let Some(default) = default {
        let words = match &default {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let said = format!("{} Default: {words}.", p.description.trim_end());
        if said.chars().count() <= MAX_DESCRIPTION {
            shown.description = said;
        }
    }
    shown
}

/// The name of the value whose wire value is `wire`; `wire` itself when none is.
fn name_of(values: &[EnumValue], wire: &Value) -> Value {
    values
        .iter()
        .find(|v| v.wire() == *wire)
        .map_or_else(|| wire.clone(), |v| Value::String(v.name.clone()))
}

impl Shown {
    /// Checks a call's input against what N-ACT shows, with one message per parameter, and
    /// gives it back (moved, not copied: this runs on every N-ACT call).
    pub fn check(&self, tool: &str, input: Map<String, Value>) -> Result<Map<String, Value>, Vec<ParameterError>> {
        let validator = self
            .validator
            .get_or_init(|| validate::compile(&input_schema(&self.inputs, &Map::new(), Spelling::Names)).map(Arc::new));
        let input = Value::Object(input);
        match validator {
            Ok(validator) => validate::check(validator, tool, &self.inputs, true, &input)?,
            // Every part of it compiled at load, so this is a bug; the engine still validates.
            Err(e) => tracing::error!(tool, error = %e, "the N-ACT projection's schema did not compile"),
        }
        let Value::Object(input) = input else {
            unreachable!("made an object above")
        };
        Ok(input)
    }
}

/// A checked N-ACT input with each enum name replaced by its wire value: what the engine takes.
pub fn to_wire(version: &Version, input: &mut Map<String, Value>) {
    for p in &version.inputs {
        if let InputType::Enum { values } = &p.kind
            && has_wire_values(values)
            && let Some(given) = input.get_mut(&p.name)
            && let Some(v) = values.iter().find(|v| given.as_str() == Some(v.name.as_str()))
        {
            *given = v.wire();
        }
    }
}

/// An output with each enum output's wire value replaced by its name: what N-ACT shows.
pub fn to_names(version: &Version, output: &mut Map<String, Value>) {
    for o in &version.outputs {
        if let OutputType::Enum { values } = &o.kind
            && has_wire_values(values)
            && let Some(got) = output.get_mut(&o.name)
        {
            *got = name_of(values, got);
        }
    }
}
