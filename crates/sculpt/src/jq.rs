//! jq (jaq) for `when` conditions and computed outputs, with the guardrails of
//! DEPENDENCIES.md §5.
//!
//! - Compiled once, at catalog load, against a standard library with `env`, `$ENV`, `input`,
//!   `inputs`, `halt`, `halt_error`, `debug` and `stderr` removed, and no module loading: a
//!   mapping sees only the call's own data and cannot end the process.
//! - `jaq_core::unwrap_valr` is never called (with `std` it exits the process on `halt`).
//! - Filters run on their own thread with a large stack, never on the async runtime, at most
//!   [`Runner::new`]'s number at once. Every time jaq clones its context (each call, pipe, binding
//!   and loop round) the guard checks the call's deadline and the stack depth, and unwinds the
//!   filter when either is exceeded, or when the run has taken more steps than any mapping
//!   needs (so `[range(1e8)]` cannot build gigabytes before its deadline); `range` is replaced by
//!   a guarded one, since it loops without cloning. Only the first output of a filter is read, and converting it is capped in size and
//!   depth.
//! - What a guard cannot stop (a single native operation that runs long, such as exploding a
//!   huge string) keeps its thread and its permit until it ends; the call itself still answers
//!   at its deadline. Only operators write mappings; uploaded definitions carry no jq.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jaq_core::data::HasLut;
use jaq_core::load::{Arena, File, Loader, lex, parse};
use jaq_core::native::{Fun, run as native, v};
use jaq_core::{Compiler, Ctx, Cv, DataT, Exn, Lut, RunPtr, ValX, ValXs, Vars};
use jaq_json::{Num, Val};
use serde_json::{Map, Value};
use tokio::sync::Semaphore;

use crate::reference::StepResult;

/// Functions and definitions a mapping may not use: they read the environment (`env`), read
/// further inputs, write to stderr or end the process.
const DENIED: &[&str] = &[
    "env",
    "halt",
    "halt_error",
    "input",
    "inputs",
    "debug",
    "debug_empty",
    "stderr",
    "stderr_empty",
    "input_filename",
];
/// The stack of a filter thread; only the pages touched are ever committed.
const STACK: usize = 64 << 20;
/// How deep a filter may recurse before it is stopped, well short of [`STACK`].
const STACK_LIMIT: usize = 48 << 20;
/// Deadline checks are one `Instant::now()` per this many context clones.
const CHECK_EVERY: u32 = 128;
/// The most steps (context clones, `range` values) one filter run may take. A mapping over an
/// upstream's answer takes a few hundred thousand at most; a bomb such as `[range(1e8)]`
/// collects a value per step, so this bounds what it can build (a few hundred MB at worst)
/// long before the call's deadline would (issue #21.10).
const MAX_STEPS: u32 = 4_000_000;
/// The largest output a filter may produce, as JSON text, roughly.
pub(crate) const MAX_OUTPUT_BYTES: usize = 1 << 20;
/// The deepest nesting of a filter's output (serde_json's own parse limit).
const MAX_DEPTH: usize = 128;

/// A compiled jq filter and its source.
#[derive(Clone)]
pub(crate) struct Program {
    filter: Arc<jaq_core::Filter<Guarded>>,
    code: Arc<str>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Program").field(&self.code).finish()
    }
}

impl Program {
    /// The input this program decodes when it is exactly `.input.NAME | fromjson` (what an
    /// import writes for a JSON-text input): its text is checked before anything is sent, so
    /// text that does not parse is the caller's input error, not a mapping failure.
    pub fn json_text_input(&self) -> Option<&str> {
        json_text_input(&self.code)
    }
}

fn json_text_input(code: &str) -> Option<&str> {
    let (path, filter) = code.split_once('|')?;
    let name = path.trim().strip_prefix(".input.")?;
    let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (plain && filter.trim() == "fromjson").then_some(name)
}

/// Compiles `code`, or says what is wrong with it.
pub(crate) fn compile(code: &str) -> Result<Program, String> {
    // An optional JSON-text input left out is left out of the request, as any absent input is,
    // rather than failing `fromjson` on null.
    let written = code;
    let decoded;
    let code = match json_text_input(code) {
        Some(name) => {
            decoded = format!(".input.{name} | values | fromjson");
            decoded.as_str()
        }
        None => code,
    };
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .filter(|d| !DENIED.contains(&d.name));
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(&arena, File { code, path: () })
        .map_err(|errors| {
            let messages: Vec<String> = errors.iter().flat_map(|(_, e)| load_error(code, e)).collect();
            messages.join("; ")
        })?;
    let filter = Compiler::default()
        .with_funs(funs())
        .compile(modules)
        .map_err(|errors| {
            let messages: Vec<String> = errors
                .iter()
                .flat_map(|(_, es)| es.iter().map(|(name, undefined)| undefined_message(name, undefined)))
                .collect();
            messages.join("; ")
        })?;
    Ok(Program {
        filter: Arc::new(filter),
        code: written.into(),
    })
}

fn funs() -> impl Iterator<Item = Fun<Guarded>> {
    let guarded_range: RunPtr<Guarded> = range;
    jaq_core::funs::<Guarded>()
        .chain(jaq_std::funs::<Guarded>())
        .chain(jaq_json::funs::<Guarded>())
        .filter(|(name, args, _)| !(DENIED.contains(name) || (*name == "range" && args.len() == 3)))
        .chain([native::<Guarded>(("range", v(3), guarded_range))])
}

fn undefined_message(name: &str, undefined: &jaq_core::compile::Undefined) -> String {
    use jaq_core::compile::Undefined;
    let off = if DENIED.contains(&name) || name == "$ENV" {
        " (it is turned off: mappings may not read the environment, read more input, write to stderr or stop the server)"
    } else {
        ""
    };
    match undefined {
        Undefined::Filter(arity) => format!("`{name}/{arity}` is not defined{off}"),
        other => format!("{} `{name}` is not defined{off}", other.as_str()),
    }
}

fn load_error(code: &str, error: &jaq_core::load::Error<&str>) -> Vec<String> {
    use jaq_core::load::Error;
    // Each `found` is a suffix of `code`, so its length gives the position.
    let at = |found: &str| code.len().saturating_sub(found.len());
    let near = |found: &str| found.chars().take(12).collect::<String>();
    match error {
        Error::Io(files) => files
            .iter()
            .map(|(path, _)| format!("cannot import `{path}`: mappings are single programs with no modules"))
            .collect(),
        Error::Lex(errors) => errors
            .iter()
            .map(|(expect, found)| {
                let expected = match expect {
                    lex::Expect::Digit => "a digit".to_owned(),
                    lex::Expect::Ident => "an identifier".to_owned(),
                    lex::Expect::Delim(open) => format!("something to close `{open}`"),
                    lex::Expect::Escape => "a string escape".to_owned(),
                    lex::Expect::Unicode => "a 4-digit hexadecimal code point".to_owned(),
                    lex::Expect::Token => "a token".to_owned(),
                    _ => "something else".to_owned(),
                };
                format!(
                    "expected {expected} at character {} (near `{}`)",
                    at(found),
                    near(found)
                )
            })
            .collect(),
        Error::Parse(errors) => errors
            .iter()
            .map(|(expect, found): &parse::Error<&str>| {
                if found.is_empty() {
                    format!("expected {} at the end", expect.as_str())
                } else {
                    format!(
                        "expected {} at character {}, but found `{}`",
                        expect.as_str(),
                        at(found),
                        near(found)
                    )
                }
            })
            .collect(),
        #[allow(unreachable_patterns)] // the enum may grow
        _ => vec!["the program does not parse".to_owned()],
    }
}

/// What a filter reads: the tool's input and the results of the steps it may see.
#[derive(Debug)]
pub(crate) struct Input {
    pub input: Map<String, Value>,
    pub steps: Vec<(String, Arc<StepResult>)>,
}

/// One filter's answer: its first output (`None` when it produced none), or its error message.
pub(crate) type Answer = Result<Option<Value>, String>;

/// Why filters did not run to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Stop {
    #[error("the mapping did not finish before the call's deadline")]
    Deadline,
    #[error("the mapping recursed too deeply")]
    Depth,
    #[error("the mapping did too much work (it would have built a very large value); simplify it")]
    TooMuch,
    #[error("too many mappings are running; try again")]
    Busy,
    #[error("the mapping failed unexpectedly")]
    Crashed,
}

/// Runs filters off the async runtime, a bounded number at once.
#[derive(Debug)]
pub(crate) struct Runner {
    permits: Arc<Semaphore>,
}

impl Runner {
    /// A runner allowing twice the machine's parallelism of filter threads (at least 4).
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self {
            permits: Arc::new(Semaphore::new((2 * cores).max(4))),
        }
    }

    /// Runs each program on `input`, in order, on one thread, stopping at `deadline`.
    pub async fn run(&self, programs: Vec<Program>, input: Input, deadline: Instant) -> Result<Vec<Answer>, Stop> {
        let deadline_at = tokio::time::Instant::from_std(deadline);
        let permit = match tokio::time::timeout_at(deadline_at, Arc::clone(&self.permits).acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) | Err(_) => return Err(Stop::Busy),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("toolhost-jq".to_owned())
            .stack_size(STACK)
            .spawn(move || {
                // The permit is held until the thread ends, even when the caller has stopped
                // waiting, so runaway filters cannot pile up without bound.
                let _permit = permit;
                let _ = tx.send(evaluate(&programs, &input, deadline));
            });
        if spawned.is_err() {
            return Err(Stop::Crashed);
        }
        // A little grace, so a filter that noticed the deadline itself reports it.
        match tokio::time::timeout_at(deadline_at + Duration::from_millis(20), rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(Stop::Crashed),
            Err(_) => Err(Stop::Deadline),
        }
    }
}

/// Runs on the filter thread.
fn evaluate(programs: &[Program], input: &Input, deadline: Instant) -> Result<Vec<Answer>, Stop> {
    let base = 0u8;
    let limits = Limits {
        deadline,
        stack_base: (&raw const base).addr(),
        ticks: Cell::new(0),
    };
    let run = || {
        let value = input_value(input);
        programs
            .iter()
            .map(|program| {
                let data = Data {
                    lut: &program.filter.lut,
                    limits: &limits,
                };
                let ctx = Ctx::<Guarded>::new(data, Vars::new([]));
                let first = program.filter.id.run((ctx, value.clone())).next();
                match first {
                    None => Ok(None),
                    Some(Ok(v)) => {
                        let mut budget = MAX_OUTPUT_BYTES;
                        to_json(&v, 0, &mut budget).map(Some)
                    }
                    Some(Err(exn)) => Err(exception(exn)),
                }
            })
            .collect::<Vec<Answer>>()
    };
    catch_unwind(AssertUnwindSafe(run)).map_err(|payload| match payload.downcast::<Stop>() {
        Ok(stop) => *stop,
        Err(_) => Stop::Crashed,
    })
}

fn exception(exn: Exn<'_, Val>) -> String {
    match exn.get_err() {
        Ok(error) => {
            let mut text = error.to_string();
            // `error("no such city")` carries a JSON string; show its text, not its quotes.
            if text.starts_with('"')
                && let Ok(plain) = serde_json::from_str::<String>(&text)
            {
                text = plain;
            }
            if text.len() > 300 {
                let cut = (0..=300).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
                text.truncate(cut);
                text.push('…');
            }
            text
        }
        // `halt` is not available, so this is jaq's own control flow escaping: a bug, not ours
        // to turn into an exit.
        Err(_) => "the mapping stopped abnormally".to_owned(),
    }
}

/// The value type tag of guarded filters.
pub(crate) struct Guarded;

impl DataT for Guarded {
    type V<'a> = Val;
    type Data<'a> = Data<'a>;
}

/// What guarded filters carry: the lookup table, and the limits checked on every clone.
pub(crate) struct Data<'a> {
    lut: &'a Lut<Guarded>,
    limits: &'a Limits,
}

impl Clone for Data<'_> {
    fn clone(&self) -> Self {
        self.limits.check();
        Self {
            lut: self.lut,
            limits: self.limits,
        }
    }
}

impl<'a> HasLut<'a, Guarded> for Data<'a> {
    fn lut(&self) -> &'a Lut<Guarded> {
        self.lut
    }
}

/// The deadline and stack bound of one filter thread.
pub(crate) struct Limits {
    deadline: Instant,
    stack_base: usize,
    ticks: Cell<u32>,
}

impl Limits {
    /// Unwinds the filter (without the panic hook, so nothing is printed) past a limit.
    fn check(&self) {
        let here = 0u8;
        if self.stack_base.abs_diff((&raw const here).addr()) > STACK_LIMIT {
            std::panic::resume_unwind(Box::new(Stop::Depth));
        }
        let ticks = self.ticks.get().saturating_add(1);
        self.ticks.set(ticks);
        if ticks.is_multiple_of(CHECK_EVERY) {
            if Instant::now() >= self.deadline {
                std::panic::resume_unwind(Box::new(Stop::Deadline));
            }
            if ticks >= MAX_STEPS {
                std::panic::resume_unwind(Box::new(Stop::TooMuch));
            }
        }
    }
}

/// `range/3` with a limit check per value (jaq's native one loops without cloning its context).
fn range<'a>(mut cv: Cv<'a, Guarded>) -> ValXs<'a, Val> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let by = cv.0.pop_var();
    let to = cv.0.pop_var();
    let from = cv.0.pop_var();
    let limits: &'a Limits = cv.0.data().limits;
    let cmp = by.partial_cmp(&Val::from(0usize)).unwrap_or(Equal);
    let mut next: ValX<'a, Val> = Ok(from);
    Box::new(std::iter::from_fn(move || {
        limits.check();
        match next.clone() {
            Ok(x) => {
                let more = match cmp {
                    Greater => x < to,
                    Less => x > to,
                    Equal => x != to,
                };
                more.then(|| std::mem::replace(&mut next, (x + by.clone()).map_err(Exn::from)))
            }
            error @ Err(_) => {
                next = Ok(to.clone());
                Some(error)
            }
        }
    }))
}

fn input_value(input: &Input) -> Val {
    let steps = input.steps.iter().map(|(name, result)| {
        let fields = [
            (Val::from("status".to_owned()), Val::from(usize::from(result.status))),
            (Val::from("headers".to_owned()), to_val(&result.headers)),
            (Val::from("body".to_owned()), to_val(&result.body)),
        ];
        (Val::from(name.clone()), Val::obj(fields.into_iter().collect()))
    });
    let root = [
        (
            Val::from("input".to_owned()),
            Val::obj(
                input
                    .input
                    .iter()
                    .map(|(k, v)| (Val::from(k.clone()), to_val(v)))
                    .collect(),
            ),
        ),
        (Val::from("steps".to_owned()), Val::obj(steps.collect())),
    ];
    Val::obj(root.into_iter().collect())
}

/// serde_json → jaq (inputs come from serde_json, whose parser caps depth at 128).
pub(crate) fn to_val(value: &Value) -> Val {
    match value {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Val::Num(Num::from_integral(i)),
            (None, Some(u)) => Val::Num(Num::from_integral(u)),
            _ => Val::Num(Num::Float(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Val::from(s.clone()),
        Value::Array(items) => items.iter().map(to_val).collect(),
        Value::Object(members) => Val::obj(members.iter().map(|(k, v)| (Val::from(k.clone()), to_val(v))).collect()),
    }
}

/// jaq → serde_json, within a size budget and a depth limit.
fn to_json(value: &Val, depth: usize, budget: &mut usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("the mapping's output is nested deeper than {MAX_DEPTH} levels"));
    }
    let mut spend = |n: usize| {
        *budget = budget
            .checked_sub(n)
            .ok_or_else(|| format!("the mapping's output is larger than {MAX_OUTPUT_BYTES} bytes"))?;
        Ok::<(), String>(())
    };
    Ok(match value {
        Val::Null => {
            spend(4)?;
            Value::Null
        }
        Val::Bool(b) => {
            spend(5)?;
            Value::Bool(*b)
        }
        Val::Num(n) => {
            spend(8)?;
            match n {
                Num::Int(i) => Value::from(*i as i64),
                // jq writes NaN and infinities as null.
                Num::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
                other => other
                    .to_string()
                    .parse::<serde_json::Number>()
                    .map_or(Value::Null, Value::Number),
            }
        }
        Val::TStr(bytes) | Val::BStr(bytes) => {
            spend(bytes.len() + 2)?;
            Value::String(String::from_utf8_lossy(bytes).into_owned())
        }
        Val::Arr(items) => {
            spend(2)?;
            Value::Array(
                items
                    .iter()
                    .map(|item| to_json(item, depth + 1, budget))
                    .collect::<Result<_, _>>()?,
            )
        }
        Val::Obj(members) => {
            spend(2)?;
            let mut out = Map::new();
            for (key, member) in members.iter() {
                let Val::TStr(key) = key else {
                    return Err("the mapping's output has an object key that is not a string".to_owned());
                };
                *budget = budget
                    .checked_sub(key.len() + 3)
                    .ok_or_else(|| format!("the mapping's output is larger than {MAX_OUTPUT_BYTES} bytes"))?;
                let member = to_json(member, depth + 1, budget)?;
                out.insert(String::from_utf8_lossy(key).into_owned(), member);
            }
            Value::Object(out)
        }
    })
}

/// Whether a `when` answer lets its step run (jq truthiness: all but `false`, `null` and none).
pub(crate) fn truthy(answer: &Option<Value>) -> bool {
    !matches!(answer, None | Some(Value::Null | Value::Bool(false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_one(code: &str, input: Value, within: Duration) -> Result<Answer, Stop> {
        let program = compile(code).unwrap_or_else(|e| panic!("{code}: {e}"));
        let input = Input {
            input: input.as_object().cloned().unwrap_or_default(),
            steps: Vec::new(),
        };
        let mut answers = evaluate(&[program], &input, Instant::now() + within)?;
        Ok(answers.remove(0))
    }

    #[test]
    fn a_json_text_input_is_recognised_only_in_the_imported_form() {
        let input = |code: &str| compile(code).ok().and_then(|p| p.json_text_input().map(str::to_owned));
        assert_eq!(input(".input.owner | fromjson").as_deref(), Some("owner"));
        assert_eq!(input(" .input.owner_2|fromjson ").as_deref(), Some("owner_2"));
        for other in [
            ".input.owner",
            ".input.a.b | fromjson",
            ".steps.x.body | fromjson",
            ".input.a | fromjson | .x",
        ] {
            assert_eq!(input(other), None, "{other}");
        }
        let absent = run_one(".input.owner | fromjson", serde_json::json!({}), Duration::from_secs(5));
        assert_eq!(absent, Ok(Ok(None)), "an absent optional input is left out");
        let given = run_one(
            ".input.owner | fromjson",
            serde_json::json!({"owner": "[1]"}),
            Duration::from_secs(5),
        );
        assert_eq!(given, Ok(Ok(Some(serde_json::json!([1])))));
    }

    #[test]
    fn a_mapping_reads_the_input_and_computes() {
        let answer = run_one(
            "{c: (.input.a + 1), s: \"\\(.input.b)!\"}",
            serde_json::json!({"a": 1, "b": "x"}),
            Duration::from_secs(5),
        );
        assert_eq!(answer, Ok(Ok(Some(serde_json::json!({"c": 2, "s": "x!"})))));
    }

    #[test]
    fn env_input_halt_debug_and_modules_are_refused_at_compile_time() {
        for code in [
            "env",
            "$ENV.HOME",
            "env.PATH",
            "halt",
            "halt_error",
            "input",
            "[inputs]",
            "debug",
            "stderr",
            "import \"x\" as y; .",
        ] {
            let error = compile(code).map(|_| ()).expect_err(code);
            assert!(!error.is_empty(), "{code}");
        }
        assert!(compile("env").map(|_| ()).unwrap_err().contains("turned off"));
    }

    #[test]
    fn infinite_loops_and_deep_recursion_stop_without_ending_the_process() {
        let within = Duration::from_millis(200);
        for code in [
            "def f: f; f",
            "last(range(1e18))",
            "[repeat(1)] | length",
            "reduce range(1e15) as $x (0; . + 1)",
        ] {
            let started = Instant::now();
            let stopped = run_one(code, Value::Null, within);
            assert!(
                matches!(stopped, Err(Stop::Deadline | Stop::TooMuch)),
                "{code}: {stopped:?}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{code} took {:?}",
                started.elapsed()
            );
        }
        // Runs on a thread with the filter stack, as the runner does.
        let deep = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn(|| run_one("def f: 1 + f; f", Value::Null, Duration::from_secs(10)))
            .map(|t| t.join());
        assert!(matches!(deep, Ok(Ok(Err(Stop::Depth)))), "{deep:?}");
    }

    /// Issue #21.10: a filter that would build a huge value is stopped by its step budget
    /// long before a generous deadline, having built only a bounded part of it.
    #[test]
    fn a_value_bomb_is_stopped_by_the_step_budget() {
        for code in [
            "[range(1e8)] | length",
            "[limit(1e8; repeat(1))] | length",
            "reduce range(1e9) as $i ([]; . + [$i]) | length",
        ] {
            let started = Instant::now();
            let stopped = run_one(code, Value::Null, Duration::from_secs(120));
            assert_eq!(stopped, Err(Stop::TooMuch), "{code}");
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{code} took {:?}",
                started.elapsed()
            );
        }
        // An ordinary mapping over a big answer is far within the budget.
        let fine = run_one(
            "[range(100000)] | map(. * 2) | add",
            Value::Null,
            Duration::from_secs(60),
        );
        assert!(matches!(fine, Ok(Ok(Some(_)))), "{fine:?}");
    }

    #[test]
    fn errors_are_answers_and_outputs_are_capped() {
        assert_eq!(
            run_one("error(\"boom\")", Value::Null, Duration::from_secs(5)),
            Ok(Err("boom".to_owned()))
        );
        assert_eq!(run_one("empty", Value::Null, Duration::from_secs(5)), Ok(Ok(None)));
        let big = run_one(
            "[range(300000)] | map(\"xxxxxxxx\")",
            Value::Null,
            Duration::from_secs(5),
        );
        assert!(matches!(&big, Ok(Err(e)) if e.contains("larger than")), "{big:?}");
        let deep = run_one("reduce range(200) as $i (0; [.])", Value::Null, Duration::from_secs(5));
        assert!(matches!(&deep, Ok(Err(e)) if e.contains("deeper")), "{deep:?}");
    }
}
