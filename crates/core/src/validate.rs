//! Input and output validation with schemas compiled once at load.
//!
//! The fast path is one `is_valid` call on the compiled validator. Only when it fails do we
//! work out per-parameter messages, which are written from the declared parameter types so
//! that a model learns exactly what to send: "`days` expects an integer from 1 to 16, but got 40".

use std::collections::BTreeMap;
use std::sync::Arc;

use jsonschema::Draft;
/// A compiled JSON Schema, as [`compile`] makes it.
pub use jsonschema::Validator;
use serde_json::{Map, Value};

use crate::catalog::{InputType, Parameter};

/// The dialect of every schema the catalog holds and [`compile`] compiles: JSON Schema 2020-12,
/// as a `$schema` names it.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A problem with one parameter of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterError {
    /// The parameter's name as the caller wrote it.
    pub parameter: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// The validators of one tool version, compiled on first use (issue #42.1): a compiled
/// validator of one of GitHub's tools holds tens of KB, and most of a large catalog's tools are
/// never called between two reloads. The load compiles each schema once to refuse one that does
/// not compile, and keeps nothing. Clones share what is compiled.
#[derive(Clone, Default)]
pub(crate) struct Validators {
    input: Arc<std::sync::OnceLock<Validator>>,
    output: Arc<std::sync::OnceLock<Validator>>,
    human: Arc<std::sync::OnceLock<Validator>>,
}

impl Validators {
    /// The input schema's validator, compiled now if it was not yet.
    pub fn input(&self, schema: &Value) -> &Validator {
        self.input.get_or_init(|| compiled(schema))
    }

    /// The output schema's validator, compiled now if it was not yet.
    pub fn output(&self, schema: &Value) -> &Validator {
        self.output.get_or_init(|| compiled(schema))
    }

    /// The validator of what a human types on the confirmation page, compiled now if it was not.
    pub fn human(&self, schema: &Value) -> &Validator {
        self.human.get_or_init(|| compiled(schema))
    }
}

/// `schema`'s validator. The load compiled the same schema without error, so the fallback (a
/// validator that refuses everything, and an error in the log) is never expected to run.
fn compiled(schema: &Value) -> Validator {
    compile(schema).unwrap_or_else(|e| {
        tracing::error!(error = %e, "a schema that compiled at load did not compile again; refusing every value");
        compile(&Value::Bool(false)).unwrap_or_else(|_| unreachable!("the `false` schema compiles"))
    })
}

/// Compiles a schema for draft 2020-12 with no remote `$ref` resolution (the crate's resolvers
/// are compiled out; see DEPENDENCIES.md §2). Executors use it too, to check a call locally.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// What the per-parameter messages need to know about one input: its name, whether a call must
/// give it, and what it accepts in words. Core's [`Parameter`] is one; an executor's view of a
/// foreign server's parameter (any JSON Schema) is another.
pub trait Expects {
    /// The name a call writes.
    fn name(&self) -> &str;
    /// Whether a call must give it.
    fn required(&self) -> bool;
    /// What it accepts, e.g. "an integer from 1 to 16".
    fn expects(&self) -> String;
    /// Whether it is a JSON Schema that [`Expects::expects`] only summarizes (not a typed
    /// scalar), so a failure also says what the validator found, and where.
    fn is_schema(&self) -> bool {
        false
    }
}

impl Expects for Parameter {
    fn name(&self) -> &str {
        &self.name
    }
    fn required(&self) -> bool {
        self.required
    }
    fn expects(&self) -> String {
        describe(&self.kind)
    }
    fn is_schema(&self) -> bool {
        matches!(self.kind, InputType::Json { .. })
    }
}

/// Checks input against the version's parameters; on failure, one error per parameter.
pub(crate) fn check_input(
    validator: &Validator,
    tool: &str,
    inputs: &[Parameter],
    input: &Value,
) -> Result<(), Vec<ParameterError>> {
    check(validator, tool, inputs, true, input)
}

/// Checks `input` against a compiled input schema; on failure, one message per parameter, written
/// from `inputs` so that a model learns what to send. `closed` says whether the schema refuses
/// parameters it does not list (`additionalProperties: false`); only then is an unknown key an error.
pub fn check<P: Expects>(
    validator: &Validator,
    tool: &str,
    inputs: &[P],
    closed: bool,
    input: &Value,
) -> Result<(), Vec<ParameterError>> {
    if validator.is_valid(input) {
        return Ok(());
    }
    let Value::Object(map) = input else {
        return Err(vec![ParameterError {
            parameter: String::new(),
            message: format!(
                "expected the input to be a JSON object of parameters, but got {}",
                kind_of(input)
            ),
        }]);
    };
    Err(explain(validator, tool, inputs, closed, map, input))
}

fn explain<P: Expects>(
    validator: &Validator,
    tool: &str,
    inputs: &[P],
    closed: bool,
    map: &Map<String, Value>,
    input: &Value,
) -> Vec<ParameterError> {
    // BTreeMap: one message per parameter, in a stable order.
    let mut errors: BTreeMap<String, String> = BTreeMap::new();
    for key in map.keys().filter(|_| closed) {
        if !inputs.iter().any(|p| p.name() == key) {
            let known: Vec<&str> = inputs.iter().map(|p| p.name()).collect();
            let message = if known.is_empty() {
                format!("`{tool}` takes no parameters; remove `{key}`")
            } else {
                format!(
                    "`{tool}` has no parameter `{key}`; its parameters are: {}",
                    known.join(", ")
                )
            };
            errors.insert(key.clone(), message);
        }
    }
    for p in inputs {
        match map.get(p.name()) {
            None if p.required() => {
                errors.insert(
                    p.name().to_owned(),
                    format!("`{}` is required: {}", p.name(), p.expects()),
                );
            }
            _ => {}
        }
    }
    // An error about the whole object that the checks above do not explain: a rule that ties
    // inputs together (`input_rules`: `anyOf`, `if`/`then`, …), said as the validator says it.
    let mut whole = None;
    for error in validator.iter_errors(input) {
        let path = error.instance_path().as_str();
        let Some(name) = path
            .strip_prefix('/')
            .map(|rest| rest.split('/').next().unwrap_or(rest))
        else {
            whole.get_or_insert_with(|| error.masked_with("the input").to_string());
            continue;
        };
        if errors.contains_key(name) {
            continue;
        }
        if let (Some(p), Some(value)) = (inputs.iter().find(|p| p.name() == name), map.get(name)) {
            let mut message = format!("`{}` expects {}, but got {}", p.name(), p.expects(), preview(value));
            // Inside a structured value, or a rule beyond the parameter's own schema: say
            // exactly what failed where, since the words above cannot.
            let own = error
                .schema_path()
                .as_str()
                .starts_with(&format!("/properties/{name}/"));
            let deeper = path.len() > name.len() + 1;
            // The parameter's own `type` is what the words above already say.
            let said = own && !deeper && error.kind().keyword() == "type";
            if (p.is_schema() || deeper || !own) && !said {
                let at = format!("`{}`", path.trim_start_matches('/').replace('/', "."));
                message.push_str(&format!(": {}", error.masked_with(at)));
            }
            errors.insert(p.name().to_owned(), message);
        }
    }
    if errors.is_empty() {
        // The validator failed on something the parameters do not explain; say what it was.
        let message = match whole {
            Some(rule) => format!("the input does not match the tool's input schema: {rule}"),
            None => "the input does not match the tool's input schema".to_owned(),
        };
        errors.insert(String::new(), message);
    }
    errors
        .into_iter()
        .map(|(parameter, message)| ParameterError { parameter, message })
        .collect()
}

/// Describes what a parameter accepts, in words a model can act on.
pub fn describe(kind: &InputType) -> String {
    match kind {
        InputType::String { max_length, pattern } => {
            let mut s = "a string".to_owned();
            if let Some(n) = max_length {
                s.push_str(&format!(" of at most {n} characters"));
            }
            if let Some(p) = pattern {
                s.push_str(&format!(" matching the pattern `{p}`"));
            }
            s
        }
        InputType::Int { min: Some(min), max } => format!("an integer from {min} to {max}"),
        InputType::Int { min: None, max } => format!("an integer no greater than {max}"),
        InputType::Number { min, max } => match (min, max) {
            (Some(a), Some(b)) => format!("a number from {a} to {b}"),
            (Some(a), None) => format!("a number no less than {a}"),
            (None, Some(b)) => format!("a number no greater than {b}"),
            (None, None) => "a number".to_owned(),
        },
        InputType::Boolean => "true or false".to_owned(),
        // As the API spells them: what a call sends (a projection that shows names maps them).
        InputType::Enum { values } => {
            let spelled: Vec<String> = values
                .iter()
                .map(|v| match v.wire() {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect();
            format!("one of {}", spelled.join(", "))
        }
        InputType::Json { schema } => {
            let kind = match schema.get("type").and_then(Value::as_str) {
                Some("object") => "an object",
                Some("array") => "an array",
                Some("string") => "a string",
                Some("integer") => "an integer",
                Some("number") => "a number",
                Some("boolean") => "true or false",
                _ => "a JSON value",
            };
            format!("{kind} matching the input schema")
        }
    }
}

/// A short rendering of a JSON value for messages: the value itself if short, else its kind.
pub fn preview(value: &Value) -> String {
    const MAX: usize = 60;
    let text = value.to_string();
    if text.chars().count() <= MAX {
        return text;
    }
    match value {
        Value::String(s) => format!("a string of {} characters", s.chars().count()),
        other => kind_of(other).to_owned(),
    }
}

/// "a string", "an array", …: the JSON type of a value, for messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Describes why an output object does not match the declared outputs, for logs.
pub(crate) fn explain_output(validator: &Validator, output: &Value) -> String {
    let details: Vec<String> = validator
        .iter_errors(output)
        .take(5)
        .map(|e| format!("{}: {}", e.instance_path().as_str(), e.masked()))
        .collect();
    details.join("; ")
}
