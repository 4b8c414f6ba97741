//! Confirmation (issue #40): a tool version that needs a human's confirmation does not run
//! until a confirmation bound to exactly this call was approved, whatever the protocol.
//!
//! Core knows the policy ([`Confirmation`], on each [`Version`]), the binding (who calls, which
//! tool at which version, the digest of the effective input) and the [`Gate`] the engine asks
//! between validation and the backend. The gate itself (records, the page, the shared store)
//! lives in the server; core only knows that the engine must not run a gated version without
//! its word, and fails closed when no gate is installed.

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use std::fmt::Write as _;

use crate::backend::{BoxFuture, CallContext, ToolFailure};
use crate::catalog::{Tool, Version};

/// The approver entry that lets the caller approve their own call.
pub const CALLER: &str = "caller";

/// A version's confirmation policy (`confirmation: required`, `approvers: [...]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Confirmation {
    /// Who may approve: [`CALLER`] (the caller themself) and scopes whose holders may approve
    /// anyone's call. Never empty: the catalog's default is `[caller]`.
    pub approvers: Vec<String>,
}

impl Confirmation {
    /// The policy with the catalog's `approvers` (none given: the caller alone).
    pub fn new(approvers: Vec<String>) -> Self {
        let approvers = if approvers.is_empty() {
            vec![CALLER.to_owned()]
        } else {
            approvers
        };
        Self { approvers }
    }

    /// Whether the caller themself may approve.
    pub fn caller_may_approve(&self) -> bool {
        self.approvers.iter().any(|a| a == CALLER)
    }

    /// The scopes whose holders may approve anyone's call.
    pub fn approver_scopes(&self) -> impl Iterator<Item = &str> {
        self.approvers.iter().map(String::as_str).filter(|a| *a != CALLER)
    }

    /// The policy revision a confirmation is bound to: a change of the tool, its version or
    /// who may approve makes earlier confirmations void.
    pub fn revision(&self, tool: &Tool, version: &Version) -> String {
        let mut hash = Sha256::new();
        hash.update(tool.id.as_bytes());
        hash.update(version.semver.to_string().as_bytes());
        for approver in &self.approvers {
            hash.update([0]);
            hash.update(approver.as_bytes());
        }
        hash.update(version.input_schema().to_string().as_bytes());
        hash.update([0]);
        hash.update(version.human_schema().to_string().as_bytes());
        crate::hex(&hash.finalize()[..8])
    }
}

/// What a call presents of an earlier confirmation request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    /// The id the confirmation answer gave (N-ACT `confirmation`, OTC
    /// `context.confirmation`, WoA `confirmation`, MCP's sealed `requestState`).
    Id(String),
    /// No id: find the confirmation by the call's binding (MCP 2025-11-25, whose retry
    /// carries no state). Only an authenticated caller's exact call matches.
    ByBinding,
}

/// What the engine hands the gate: the call, after validation.
#[derive(Debug, Clone, Copy)]
pub struct GateCall<'a> {
    /// The tool called.
    pub tool: &'a Tool,
    /// The resolved version.
    pub version: &'a Version,
    /// Its policy.
    pub policy: &'a Confirmation,
    /// The input as validated (without the defaults: see [`effective_input`]).
    pub input: &'a Map<String, Value>,
    /// Who calls, and what they presented.
    pub context: &'a CallContext,
}

/// The values a human typed on the confirmation page for a version's `source: human` inputs
/// (CHEQ's Flow B): merged into the input the backend gets, and never shown. `Debug` names the
/// parameters only, so no log line can carry a value by accident.
#[derive(Clone, Default, PartialEq)]
pub struct HumanValues(Map<String, Value>);

impl HumanValues {
    /// The values, by parameter name.
    pub fn new(values: Map<String, Value>) -> Self {
        Self(values)
    }

    /// The values, to merge into the backend's input or to seal: never to show.
    pub fn expose(&self) -> &Map<String, Value> {
        &self.0
    }

    /// Whether the human typed nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for HumanValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// The gate's word on a call.
#[derive(Debug)]
pub enum Admission {
    /// A confirmation was approved and is now consumed: run the tool with the input and the
    /// values the human typed, then report its outcome with [`Gate::settle`] under this id.
    Run { id: String, human: HumanValues },
    /// The confirmation was consumed before: this is what the call did then.
    Replay(Stored),
}

/// The outcome of a confirmed call, as kept for later identical retries.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stored {
    /// The output object.
    Output(Map<String, Value>),
    /// The failure's message and code (the call ran, or was cut short, and failed).
    Failure { message: String, code: Option<String> },
}

impl Stored {
    /// The stored form of a failure.
    pub fn failure(failure: &ToolFailure) -> Self {
        Self::Failure {
            message: failure.message.clone(),
            code: failure.code.clone(),
        }
    }
}

/// The confirmation service the engine asks before running a version that needs one.
pub trait Gate: Send + Sync + std::fmt::Debug {
    /// Admits `call` (its confirmation was approved: consumed now, atomically) or refuses it
    /// with [`crate::Error::Confirmation`] (a fresh or pending request, or a declined one).
    fn admit<'a>(&'a self, call: GateCall<'a>) -> BoxFuture<'a, Result<Admission, crate::Error>>;

    /// Records what the admitted call `id` did, for identical retries.
    fn settle<'a>(&'a self, id: &'a str, outcome: Stored) -> BoxFuture<'a, ()>;
}

/// Where a confirmation stands, as its answer says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A fresh request: nobody decided yet.
    Required,
    /// The presented request is still waiting for a decision.
    Pending,
    /// A human declined it.
    Declined,
}

impl Status {
    /// `confirmation_required`, `pending`, `declined`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "confirmation_required",
            Self::Pending => "pending",
            Self::Declined => "declined",
        }
    }
}

/// A refusal to run before a human confirms: what every protocol tells the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Where the request stands.
    pub status: Status,
    /// The confirmation's id, to present on the retry.
    pub id: String,
    /// The page a human opens to decide (CHEQ `confirmation uri`).
    pub confirmation_uri: String,
    /// The transaction's CHEQ object (CHEQ `resource uri`).
    pub resource_uri: String,
    /// Where an agent polls for the outcome (CHEQ `result uri`).
    pub result_uri: String,
    /// When the request lapses, in ms since the Unix epoch.
    pub expires_ms: u64,
    /// Why a presented confirmation did not authorize this call, when one was presented.
    pub note: Option<String>,
}

impl Answer {
    /// What the model is told: nothing happened, and what the user must do.
    pub fn prompt(&self) -> String {
        let mut text = match self.status {
            Status::Declined => {
                "The user declined this action, so it was NOT carried out and nothing changed. Do not retry it; ask the user what to do instead.".to_owned()
            }
            Status::Required | Status::Pending => format!(
                "This action has NOT been carried out: it needs the user's confirmation. Ask the user to open {} and approve it, then retry the same call with the confirmation id {}.",
                self.confirmation_uri, self.id
            ),
        };
        if let Some(note) = &self.note {
            let _ = write!(text, " ({note})");
        }
        text
    }
}

/// The input with each absent parameter's default filled in: what the backend will act on,
/// what the human sees, and what the confirmation is bound to.
pub fn effective_input(version: &Version, input: &Map<String, Value>) -> Map<String, Value> {
    let mut effective = input.clone();
    for parameter in &version.inputs {
        if let Some(default) = &parameter.default
            && !effective.contains_key(&parameter.name)
        {
            effective.insert(parameter.name.clone(), default.clone());
        }
    }
    effective
}

/// The SHA-256 (lower-case hex) of the RFC 8785 (JCS) serialization of `input`.
pub fn digest(input: &Map<String, Value>) -> String {
    let mut text = String::new();
    canonical(&Value::Object(input.clone()), &mut text);
    crate::hex(&Sha256::digest(text.as_bytes()))
}

/// Writes `value` as RFC 8785 says: keys sorted by UTF-16 code units, no whitespace, numbers as
/// ECMAScript writes them. An integer beyond ±2^53, which ECMAScript cannot hold exactly, is
/// written as its decimal string (APPROVALS.md §5.2.3), so two distinct integers never collide.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => out.push_str(&value.to_string()),
        Value::Number(n) => {
            const SAFE: u64 = 1 << 53;
            if let Some(i) = n.as_i64() {
                if i.unsigned_abs() <= SAFE {
                    let _ = write!(out, "{i}");
                } else {
                    let _ = write!(out, "\"{i}\"");
                }
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "\"{u}\"");
            } else {
                let f = n.as_f64().unwrap_or_default();
                if f.fract() == 0.0 && f.abs() < 1e21 {
                    let _ = write!(out, "{f:.0}");
                } else {
                    let _ = write!(out, "{f}");
                }
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn jcs(value: serde_json::Value) -> String {
        let mut out = String::new();
        super::canonical(&value, &mut out);
        out
    }

    #[test]
    fn keys_sort_and_types_count() {
        // RFC 8785 §3.2.3: sorted by UTF-16 code units, no whitespace.
        assert_eq!(
            jcs(json!({"b": 1, "a": [true, null, "x"]})),
            r#"{"a":[true,null,"x"],"b":1}"#
        );
        assert_ne!(jcs(json!({"n": 5})), jcs(json!({"n": "5"})));
        assert_ne!(jcs(json!({"n": null})), jcs(json!({})));
        assert_ne!(jcs(json!([1, 2])), jcs(json!([2, 1])));
        assert_eq!(jcs(json!(1.0)), "1");
        assert_eq!(jcs(json!(9_007_199_254_740_993_u64)), "\"9007199254740993\"");
        assert_eq!(jcs(json!(2.5)), "2.5");
    }
}
