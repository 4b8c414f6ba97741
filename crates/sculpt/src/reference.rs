//! References: `input.city`, `secret.API_KEY`, `steps.geocode.body.results[0].latitude` (or
//! `geocode.body...`), parsed and checked against the tool's signature at load, looked up per call.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use toolhost_core::{CallContext, Parameter, Secret};

/// One resolved reference.
#[derive(Debug, Clone)]
pub(crate) enum Reference {
    /// A tool input, by name.
    Input(String),
    /// A secret.
    Secret(SecretSlot),
    /// A field of an earlier step's result.
    Step { step: usize, field: StepField },
    /// The current element of a `for_each` step's list, then a path into it.
    Item(Vec<Segment>),
    /// The authenticated caller's bearer token (`caller.token`: a secret, sent only upstream)
    /// or subject (`caller.sub`).
    Caller { token: bool },
    /// A claim of the caller's verified JWT (`caller.email`).
    CallerClaim(String),
}

/// Where a secret's value comes from.
#[derive(Debug, Clone)]
pub(crate) enum SecretSlot {
    /// The server's `[secrets]`, read at start (Debug stays redacted).
    Server(Secret),
    /// The call's `context.secrets` (the tool lists it in `requirements.secrets`).
    Call(String),
    /// The call's token of an authorization provider (`context.authorization`, or what the
    /// server grants the caller; the tool lists it in `requirements.authorization`).
    Authorization(String),
}

/// The part of a step's result a reference reads.
#[derive(Debug, Clone)]
pub(crate) enum StepField {
    Status,
    /// One header (lower-cased), or all of them as an object.
    Headers(Option<String>),
    /// The parsed body, then a path into it.
    Body(Vec<Segment>),
}

/// One step of a path into JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// The result of one step, as later steps and the outputs see it.
#[derive(Debug)]
pub(crate) struct StepResult {
    pub status: u16,
    /// Lower-cased header name → value (repeated headers joined with `, `).
    pub headers: Value,
    /// The JSON body, or the body as a string when it is not JSON.
    pub body: Value,
}

/// What a reference may read at one place of the catalog.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Names<'a> {
    pub inputs: &'a [Parameter],
    /// Names of the steps declared before this place (all steps, for outputs).
    pub steps: &'a [String],
    /// `None`: secrets are not allowed here (outputs and error messages reach the model).
    pub secrets: Option<&'a SecretNames<'a>>,
    /// Whether `item` (a `for_each` step's current element) may be read.
    pub item: bool,
}

/// The secrets a catalog may name.
#[derive(Debug)]
pub(crate) struct SecretNames<'a> {
    pub server: &'a HashMap<String, Secret>,
    /// The tool's `requirements.secrets`, which the call brings.
    pub call: &'a [String],
    /// The tool's `requirements.authorization` provider ids, whose tokens the call brings.
    pub authorization: &'a [toolhost_core::catalog::Authorization],
    /// Whether names are checked at all (not by `toolhost check`, which has no server config).
    pub check: bool,
}

/// The values one call's references read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub input: &'a serde_json::Map<String, Value>,
    pub context: &'a CallContext,
    /// Indexed like the recipe's steps; `None` for a step that has not run or was skipped.
    pub steps: &'a [Option<Arc<StepResult>>],
    /// The values of the step's request `{jq: ...}` programs, run before the request is built
    /// (`None` for null or no output).
    pub computed: &'a [Option<Value>],
    /// A `for_each` step's current element.
    pub item: Option<&'a Value>,
}

impl Reference {
    /// Parses and checks `text` (without braces).
    pub fn parse(text: &str, names: &Names<'_>) -> Result<Self, String> {
        let mut segments = parse_path(text)?.into_iter();
        let Some(Segment::Key(root)) = segments.next() else {
            return Err(format!(
                "`{text}` must start with `input.`, `secret.`, `steps.` or a step name"
            ));
        };
        let rest: Vec<Segment> = segments.collect();
        match root.as_str() {
            "input" => input(text, &rest, names.inputs),
            "secret" => secret(text, &rest, names.secrets),
            "authorization" => authorization(text, &rest, names.secrets),
            "item" if names.item => Ok(Reference::Item(rest)),
            "caller" => match rest.as_slice() {
                [Segment::Key(k)] if k == "sub" => Ok(Reference::Caller { token: false }),
                [Segment::Key(k)] if k == "token" => match names.secrets {
                    Some(_) => Ok(Reference::Caller { token: true }),
                    None => Err(format!(
                        "`{text}`: the caller's token cannot be used here, since this text reaches the caller and the model"
                    )),
                },
                [Segment::Key(claim)] => Ok(Reference::CallerClaim(claim.clone())),
                _ => Err(format!(
                    "`{text}` must be `caller.sub`, `caller.token` or `caller.CLAIM`"
                )),
            },
            "item" => Err(format!(
                "`{text}`: `item` is the current element of a step's `for_each` list; this place has none"
            )),
            "steps" => match rest.split_first() {
                Some((Segment::Key(step), rest)) => step_field(text, step, rest, names.steps),
                _ => Err(format!("`{text}` must name a step after `steps.`")),
            },
            step if names.steps.iter().any(|s| s == step) => step_field(text, step, &rest, names.steps),
            other => Err(format!(
                "`{text}` starts with `{other}`, which is neither `input`, `secret`, `steps` nor an earlier step{}",
                list(" (earlier steps: ", names.steps, ")")
            )),
        }
    }

    /// Whether the reference reads a secret.
    pub fn is_secret(&self) -> bool {
        matches!(self, Self::Secret(_) | Self::Caller { token: true })
    }

    /// The step this reference reads, if any.
    pub fn step(&self) -> Option<usize> {
        match self {
            Self::Step { step, .. } => Some(*step),
            _ => None,
        }
    }

    /// The value for one call: `None` when it is absent or null.
    pub fn lookup<'s>(&'s self, scope: &Scope<'s>) -> Option<Cow<'s, Value>> {
        let found = match self {
            Self::Input(name) => Cow::Borrowed(scope.input.get(name)?),
            Self::Secret(SecretSlot::Server(secret)) => Cow::Owned(Value::String(secret.expose().to_owned())),
            Self::Secret(SecretSlot::Call(name)) => {
                Cow::Owned(Value::String(scope.context.secrets.get(name)?.expose().to_owned()))
            }
            Self::Secret(SecretSlot::Authorization(id)) => {
                Cow::Owned(Value::String(scope.context.authorization.get(id)?.expose().to_owned()))
            }
            Self::Item(path) => Cow::Borrowed(walk(scope.item?, path)?),
            Self::Caller { token: true } => {
                Cow::Owned(Value::String(scope.context.caller_token.as_ref()?.expose().to_owned()))
            }
            Self::Caller { token: false } => Cow::Owned(Value::String(scope.context.caller_subject.clone()?)),
            Self::CallerClaim(claim) => Cow::Owned(scope.context.caller_claims.as_ref()?.get(claim)?.clone()),
            Self::Step { step, field } => {
                let result: &'s StepResult = scope.steps.get(*step)?.as_deref()?;
                match field {
                    StepField::Status => Cow::Owned(Value::from(result.status)),
                    StepField::Headers(None) => Cow::Borrowed(&result.headers),
                    StepField::Headers(Some(name)) => Cow::Borrowed(result.headers.get(name)?),
                    StepField::Body(path) => Cow::Borrowed(walk(&result.body, path)?),
                }
            }
        };
        (!found.is_null()).then_some(found)
    }
}

/// Follows `path` into `value`.
pub(crate) fn walk<'v>(mut value: &'v Value, path: &[Segment]) -> Option<&'v Value> {
    for segment in path {
        value = match segment {
            Segment::Key(key) => value.get(key)?,
            Segment::Index(i) => value.get(i)?,
        };
    }
    Some(value)
}

fn input(text: &str, rest: &[Segment], inputs: &[Parameter]) -> Result<Reference, String> {
    let [Segment::Key(name)] = rest else {
        return Err(format!(
            "`{text}` must be `input.NAME`; inputs are single values{}",
            list(" (the inputs are: ", &names_of(inputs), ")")
        ));
    };
    if inputs.iter().any(|p| &p.name == name) {
        Ok(Reference::Input(name.clone()))
    } else {
        Err(format!(
            "refers to input `{name}`, but {}",
            match inputs {
                [] => "the tool has no inputs".to_owned(),
                _ => format!("the inputs are: {}", names_of(inputs).join(", ")),
            }
        ))
    }
}

/// `authorization.PROVIDER`: the call's token of a provider the tool requires.
fn authorization(text: &str, rest: &[Segment], names: Option<&SecretNames<'_>>) -> Result<Reference, String> {
    let Some(names) = names else {
        return Err(format!(
            "`{text}`: tokens cannot be used here, since this text reaches the caller and the model"
        ));
    };
    let [Segment::Key(id)] = rest else {
        return Err(format!("`{text}` must be `authorization.PROVIDER`"));
    };
    if names.authorization.iter().any(|a| &a.id == id) {
        return Ok(Reference::Secret(SecretSlot::Authorization(id.clone())));
    }
    let ids: Vec<&str> = names.authorization.iter().map(|a| a.id.as_str()).collect();
    Err(format!(
        "refers to the token of provider `{id}`, which is not in the tool's `requirements.authorization` ({})",
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        }
    ))
}

fn secret(text: &str, rest: &[Segment], names: Option<&SecretNames<'_>>) -> Result<Reference, String> {
    let Some(names) = names else {
        return Err(format!(
            "`{text}`: secrets cannot be used here, since this text reaches the caller and the model"
        ));
    };
    let [Segment::Key(name)] = rest else {
        return Err(format!("`{text}` must be `secret.NAME`"));
    };
    // A secret the tool requires from the caller comes from the call, even if the server has one
    // of the same name: the tool's declaration is the more specific.
    if names.call.iter().any(|s| s == name) {
        return Ok(Reference::Secret(SecretSlot::Call(name.clone())));
    }
    if let Some(secret) = names.server.get(name) {
        return Ok(Reference::Secret(SecretSlot::Server(secret.clone())));
    }
    if !names.check {
        return Ok(Reference::Secret(SecretSlot::Call(name.clone())));
    }
    let mut server: Vec<String> = names.server.keys().cloned().collect();
    server.sort();
    Err(format!(
        "refers to secret `{name}`, which is neither in the server's `[secrets]` ({}) nor in the tool's `requirements.secrets` ({}); add it to one of them",
        if server.is_empty() {
            "none".to_owned()
        } else {
            server.join(", ")
        },
        if names.call.is_empty() {
            "none".to_owned()
        } else {
            names.call.join(", ")
        },
    ))
}

fn step_field(text: &str, step: &str, rest: &[Segment], steps: &[String]) -> Result<Reference, String> {
    let Some(index) = steps.iter().position(|s| s == step) else {
        return Err(format!(
            "refers to step `{step}`, which is not an earlier step{}",
            list(" (earlier steps: ", steps, ")")
        ));
    };
    Ok(Reference::Step {
        step: index,
        field: field(text, rest)?,
    })
}

/// A field of a step's own result (`body.results[0]`), as `expect` names it.
pub(crate) fn own_field(text: &str) -> Result<StepField, String> {
    field(text, &parse_path(text)?)
}

impl StepField {
    /// This field of `result`, when it has it.
    pub fn get<'r>(&self, result: &'r StepResult) -> Option<Cow<'r, Value>> {
        match self {
            Self::Status => Some(Cow::Owned(Value::from(result.status))),
            Self::Headers(None) => Some(Cow::Borrowed(&result.headers)),
            Self::Headers(Some(name)) => result.headers.get(name).map(Cow::Borrowed),
            Self::Body(path) => walk(&result.body, path).map(Cow::Borrowed),
        }
    }

    /// Whether `result` has this field (not null).
    pub fn present(&self, result: &StepResult) -> bool {
        match self {
            Self::Status => true,
            Self::Headers(None) => true,
            Self::Headers(Some(name)) => result.headers.get(name).is_some_and(|v| !v.is_null()),
            Self::Body(path) => walk(&result.body, path).is_some_and(|v| !v.is_null()),
        }
    }
}

fn field(text: &str, rest: &[Segment]) -> Result<StepField, String> {
    Ok(match rest {
        [Segment::Key(k)] if k == "status" => StepField::Status,
        [Segment::Key(k)] if k == "headers" => StepField::Headers(None),
        [Segment::Key(k), Segment::Key(h)] if k == "headers" => StepField::Headers(Some(h.to_ascii_lowercase())),
        [Segment::Key(k), path @ ..] if k == "body" => StepField::Body(path.to_vec()),
        _ => {
            return Err(format!(
                "`{text}`: a step's result is `status`, `headers.NAME` or `body` followed by a path"
            ));
        }
    })
}

fn names_of(inputs: &[Parameter]) -> Vec<String> {
    inputs.iter().map(|p| p.name.clone()).collect()
}

fn list(before: &str, items: &[String], after: &str) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!("{before}{}{after}", items.join(", "))
    }
}

/// Parses `a.b[0]["c d"].e` into segments.
pub(crate) fn parse_path(text: &str) -> Result<Vec<Segment>, String> {
    let bad = |why: &str| Err(format!("`{text}` is not a valid path: {why}"));
    let mut segments = Vec::new();
    let mut rest = text.trim();
    if rest.is_empty() {
        return bad("it is empty");
    }
    let mut expect_key = true;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let Some(end) = inner.find(']') else {
                return bad("a `[` is not closed");
            };
            let index = &inner[..end];
            if let Some(quoted) = index.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                segments.push(Segment::Key(quoted.to_owned()));
            } else {
                match index.parse::<usize>() {
                    Ok(i) => segments.push(Segment::Index(i)),
                    Err(_) => return bad("`[...]` takes a whole number or a \"quoted key\""),
                }
            }
            rest = &inner[end + 1..];
            expect_key = false;
            continue;
        }
        if !expect_key {
            match rest.strip_prefix('.') {
                Some(r) => rest = r,
                None => return bad("expected `.` or `[` between parts"),
            }
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let key = &rest[..end];
        if key.is_empty() || key.contains(|c: char| c.is_whitespace() || matches!(c, ']' | '{' | '}' | '"')) {
            return bad("a part is empty or has spaces, braces or quotes; write [\"odd key\"] for such keys");
        }
        segments.push(Segment::Key(key.to_owned()));
        rest = &rest[end..];
        expect_key = false;
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::{Segment, parse_path};

    #[test]
    fn paths_parse_keys_indexes_and_quoted_keys() {
        assert_eq!(
            parse_path("steps.geo.body.results[0][\"full name\"].x-y").unwrap_or_default(),
            vec![
                Segment::Key("steps".into()),
                Segment::Key("geo".into()),
                Segment::Key("body".into()),
                Segment::Key("results".into()),
                Segment::Index(0),
                Segment::Key("full name".into()),
                Segment::Key("x-y".into()),
            ]
        );
        for bad in ["", "a..b", "a[", "a[x]", "a b", "a.", "a]b"] {
            assert!(parse_path(bad).is_err(), "{bad:?} parsed");
        }
    }
}
