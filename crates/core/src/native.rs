//! The `native` backend: tools implemented as Rust functions in this crate, and the bundled
//! example catalog that uses them.
//!
//! A catalog version selects one with `backend: { kind: native, function: calculator.add }`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::backend::{Backend, BackendCall, BackendFactory, BoxFuture, CallContext, Signature, ToolFailure};
use crate::catalog::Source;

/// A native tool function: validated input in, output object or failure out.
pub type Function = fn(&Map<String, Value>, &CallContext) -> Result<Map<String, Value>, ToolFailure>;

/// The table of native functions; the factory for `kind: native`.
#[derive(Debug, Clone, Default)]
pub struct Functions {
    table: BTreeMap<&'static str, Function>,
}

impl Functions {
    /// Every built-in function.
    pub fn builtin() -> Self {
        let mut f = Self::default();
        f.add("calculator.add", calculator_add);
        f.add("calculator.divide", calculator_divide);
        f.add("text.word_count", text_word_count);
        f.add("text.convert_case", text_convert_case);
        f.add("units.convert_length", units_convert_length);
        f.add("reference.country_by_code", reference_country_by_code);
        f.add("testing.echo", testing_echo);
        f.add("time.now", time_now);
        f.add("testing.ring_doorbell", testing_ring_doorbell);
        f.add("testing.context", testing_context);
        f.add("testing.fail", |_, _| {
            Err(
                ToolFailure::permanent("This tool always fails, so clients can test how they show a tool error.")
                    .with_code("always_fails"),
            )
        });
        f.add("testing.simple_text", |_, _| {
            Ok(json_object(
                json!({ "text": "This is a simple text response for testing." }),
            ))
        });
        f.add("testing.wrong_shape", |_, _| {
            Ok(json_object(json!({"unexpected": true})))
        });
        f
    }

    /// Adds (or replaces) a function under a name.
    pub fn add(&mut self, name: &'static str, function: Function) {
        self.table.insert(name, function);
    }
}

impl BackendFactory for Functions {
    fn build(&self, config: &Map<String, Value>, _: &Signature<'_>) -> Result<Arc<dyn Backend>, Vec<String>> {
        let mut problems: Vec<String> = config
            .keys()
            .filter(|k| !matches!(k.as_str(), "function" | "delay_ms"))
            .map(|k| format!("unknown key `{k}`; a native backend takes `function` (and, for testing, `delay_ms`)"))
            .collect();
        let delay = match config.get("delay_ms") {
            None => None,
            Some(v) => match v.as_u64() {
                Some(ms) => Some(Duration::from_millis(ms)),
                None => {
                    problems.push(format!("`delay_ms` must be a whole number of milliseconds, but is {v}"));
                    None
                }
            },
        };
        let names = || self.table.keys().copied().collect::<Vec<_>>().join(", ");
        let function = match config.get("function") {
            Some(Value::String(name)) => match self.table.get(name.as_str()) {
                Some(f) => Some(*f),
                None => {
                    problems.push(format!("no native function `{name}`; the functions are: {}", names()));
                    None
                }
            },
            _ => {
                problems.push(format!("`function` is missing; name one of: {}", names()));
                None
            }
        };
        match function {
            Some(function) if problems.is_empty() => Ok(Arc::new(Native { function, delay })),
            _ => Err(problems),
        }
    }
}

/// One native function bound to a tool version.
#[derive(Debug)]
struct Native {
    function: Function,
    /// An artificial delay, so tests can exercise timeouts and in-flight calls.
    delay: Option<Duration>,
}

impl Backend for Native {
    fn call<'a>(&'a self, call: BackendCall<'a>) -> BoxFuture<'a, Result<Map<String, Value>, ToolFailure>> {
        match self.delay {
            None => Box::pin(std::future::ready((self.function)(call.input, call.context))),
            Some(delay) => Box::pin(async move {
                tokio::time::sleep(delay).await;
                (self.function)(call.input, call.context)
            }),
        }
    }
}

/// The bundled example catalog, compiled into the binary so `toolhost serve` works anywhere.
pub fn bundled_catalog() -> Vec<Source> {
    [
        (
            "bundled/calculator.yaml",
            include_str!("../../../examples/catalog/calculator.yaml"),
        ),
        ("bundled/text.yaml", include_str!("../../../examples/catalog/text.yaml")),
        (
            "bundled/units.yaml",
            include_str!("../../../examples/catalog/units.yaml"),
        ),
        (
            "bundled/reference.yaml",
            include_str!("../../../examples/catalog/reference.yaml"),
        ),
    ]
    .into_iter()
    .map(|(name, text)| Source {
        name: name.to_owned(),
        text: text.to_owned(),
    })
    .collect()
}

fn json_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Reads a number argument; the input schema has already checked its type.
fn number(input: &Map<String, Value>, name: &str) -> f64 {
    input.get(name).and_then(Value::as_f64).unwrap_or_default()
}

fn text<'a>(input: &'a Map<String, Value>, name: &str) -> &'a str {
    input.get(name).and_then(Value::as_str).unwrap_or_default()
}

/// A finite result, or a failure that says the numbers were too large.
/// A whole result is written as an integer (`15`, not `15.0`), as callers and the OTC examples expect.
fn finite(value: f64, what: &str) -> Result<Value, ToolFailure> {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        return Ok(Value::from(value as i64));
    }
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| ToolFailure::permanent(format!("the {what} is too large to represent; use smaller numbers")))
}

fn calculator_add(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let sum = finite(number(input, "a") + number(input, "b"), "sum")?;
    Ok(json_object(json!({ "sum": sum })))
}

fn calculator_divide(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let divisor = number(input, "divisor");
    if divisor == 0.0 {
        return Err(ToolFailure::permanent("cannot divide by zero")
            .with_code("division_by_zero")
            .with_prompt("The divisor was 0. Division by zero is undefined; ask the user for a non-zero divisor instead of retrying."));
    }
    let quotient = finite(number(input, "dividend") / divisor, "quotient")?;
    Ok(json_object(json!({ "quotient": quotient })))
}

fn text_word_count(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let text = text(input, "text");
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut words = 0u64;
    for word in text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
    {
        words += 1;
        *counts.entry(word.to_lowercase()).or_default() += 1;
    }
    let mut top: Vec<(&String, &u64)> = counts.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let top: Vec<Value> = top
        .into_iter()
        .take(5)
        .map(|(w, n)| json!({"word": w, "count": n}))
        .collect();
    let mut out = json_object(json!({ "words": words, "characters": text.chars().count(), "top_words": top }));
    if input.get("count_unique").and_then(Value::as_bool) == Some(true) {
        out.insert("unique_words".into(), counts.len().into());
    }
    Ok(out)
}

fn text_convert_case(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let source = text(input, "text");
    let words = || source.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
    let converted = match text(input, "case") {
        "UPPER" => source.to_uppercase(),
        "LOWER" => source.to_lowercase(),
        "TITLE" => source
            .split(' ')
            .map(|w| {
                let mut chars = w.chars();
                chars
                    .next()
                    .map(|c| c.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect())
                    .unwrap_or_default()
            })
            .collect::<Vec<String>>()
            .join(" "),
        "SNAKE" => words().map(str::to_lowercase).collect::<Vec<_>>().join("_"),
        "KEBAB" => words().map(str::to_lowercase).collect::<Vec<_>>().join("-"),
        other => return Err(ToolFailure::permanent(format!("unsupported case `{other}`"))),
    };
    Ok(json_object(json!({ "text": converted })))
}

/// Metres per unit.
fn metres(unit: &str) -> Option<f64> {
    Some(match unit {
        "MILLIMETRE" => 0.001,
        "CENTIMETRE" => 0.01,
        "METRE" => 1.0,
        "KILOMETRE" => 1000.0,
        "INCH" => 0.0254,
        "FOOT" => 0.3048,
        "YARD" => 0.9144,
        "MILE" => 1609.344,
        "NAUTICAL_MILE" => 1852.0,
        _ => return None,
    })
}

fn units_convert_length(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let (from, to) = (text(input, "from"), text(input, "to"));
    let (Some(f), Some(t)) = (metres(from), metres(to)) else {
        return Err(ToolFailure::permanent(format!("cannot convert from {from} to {to}")));
    };
    let mut value = number(input, "value") * f / t;
    // JSON Schema counts 2.0 as an integer, so read integers through f64.
    if let Some(digits) = input.get("precision").and_then(Value::as_f64) {
        let scale = 10f64.powi(digits as i32);
        value = (value * scale).round() / scale;
    }
    let value = finite(value, "converted value")?;
    Ok(json_object(json!({ "value": value, "unit": to })))
}

const COUNTRIES: &[(&str, &str, &str)] = &[
    ("BR", "Brazil", "Brasília"),
    ("CA", "Canada", "Ottawa"),
    ("DE", "Germany", "Berlin"),
    ("FR", "France", "Paris"),
    ("IN", "India", "New Delhi"),
    ("JP", "Japan", "Tokyo"),
    ("KE", "Kenya", "Nairobi"),
    ("MX", "Mexico", "Mexico City"),
    ("NZ", "New Zealand", "Wellington"),
    ("US", "United States", "Washington, D.C."),
];

fn reference_country_by_code(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let code = text(input, "code");
    match COUNTRIES.iter().find(|(c, _, _)| *c == code) {
        Some((code, name, capital)) => Ok(json_object(json!({ "code": code, "name": name, "capital": capital }))),
        None => {
            let known: Vec<&str> = COUNTRIES.iter().map(|(c, _, _)| *c).collect();
            Err(ToolFailure::permanent(format!("no country with code {code} is known"))
                .with_code("unknown_code")
                .with_prompt(format!(
                    "The known country codes are: {}. Pick one of these.",
                    known.join(", ")
                )))
        }
    }
}

/// Returns its input as its output: for tests and benchmarks whose outputs mirror their inputs.
/// The server's clock: `unix_ms`, milliseconds since 1970-01-01 UTC. A waiting step polls it
/// (`poll: { done: ... }`, docs/tasks.md) to take a given time without an upstream.
fn time_now(_: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Ok(json_object(json!({ "unix_ms": ms })))
}

fn testing_echo(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    Ok(input.clone())
}

/// The doorbells the OTC examples know.
const DOORBELLS: &[&str] = &["doorbell42", "doorbell84"];

/// Rings a doorbell: the OTC spec's `Doorbell.Ring` example (no output; an unknown id fails with
/// code `not_found` and the known ids as prompt text).
fn testing_ring_doorbell(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let id = text(input, "doorbell_id");
    if DOORBELLS.contains(&id) {
        return Ok(Map::new());
    }
    Err(ToolFailure::permanent("Doorbell ID not found")
        .with_code("not_found")
        .with_developer_message(format!("The doorbell with ID '{id}' does not exist."))
        .with_prompt(format!("ids: {}", DOORBELLS.join(","))))
}

/// Reports which context reached the backend, never the secret values themselves: for tests
/// that secrets and the user id arrive.
fn testing_context(_: &Map<String, Value>, context: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let mut secrets: Vec<&str> = context.secrets.keys().map(String::as_str).collect();
    secrets.sort_unstable();
    let secret_lengths: Map<String, Value> = context
        .secrets
        .iter()
        .map(|(k, v)| (k.clone(), v.expose().len().into()))
        .collect();
    Ok(json_object(json!({
        "secret_ids": secrets,
        "secret_lengths": secret_lengths,
        "user_id": context.user_id,
    })))
}
