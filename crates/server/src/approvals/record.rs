//! A confirmation record: what was asked (fixed when it is made) and where it stands.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a confirmation is for, fixed when it is made: the binding, and the quotation the page
/// shows (from the catalog and the validated call, never from agent text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 128 random bits, hex.
    pub id: String,
    /// The hash of the binding tuple ([`super::Binding::key`]).
    pub binding: String,
    /// Who called: `jwt:<iss>:<sub>`, `key:<name>` or `anonymous`.
    pub principal: String,
    /// The protocol the call came over.
    pub protocol: String,
    /// OTC's `call_id`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool's UUID.
    pub tool_id: String,
    /// Its name.
    pub tool: String,
    /// Its title, when the catalog gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The resolved version (semver).
    pub version: String,
    /// The version's description.
    pub description: String,
    /// The hosts the tool's backend reaches.
    #[serde(default)]
    pub upstreams: Vec<String>,
    /// The policy revision.
    pub policy_rev: String,
    /// Who may approve (`caller`, scopes).
    pub approvers: Vec<String>,
    /// SHA-256 of the JCS form of the effective input.
    pub args_sha256: String,
    /// Each parameter of the effective input: name, description, value.
    pub parameters: Vec<Quoted>,
    /// What the page asks the human to type (`source: human` inputs): never a value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub human: Vec<Asked>,
    /// When it was made, ms since the epoch.
    pub created_ms: u64,
    /// A secret the page's CSRF token is derived from; never shown.
    pub nonce: String,
}

/// One parameter as the page quotes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quoted {
    /// The parameter's name.
    pub name: String,
    /// Its catalog description.
    pub description: String,
    /// The effective value.
    pub value: Value,
    /// Whether the value is the parameter's default (the call left it out).
    #[serde(default)]
    pub default: bool,
}

/// One input the page asks the human for (`source: human`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// The parameter's name.
    pub name: String,
    /// Its catalog description.
    pub description: String,
    /// Its type as the catalog writes it (`string`, `int`, `number`, `boolean`, `enum`, `json`).
    pub kind: String,
    /// Whether the human must type it.
    pub required: bool,
    /// An enum's value names, to choose from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// Where a confirmation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waiting for a human.
    Pending,
    /// Approved, not used yet.
    Approved,
    /// Declined by a human.
    Declined,
    /// Lapsed before a decision, or before use.
    Expired,
    /// Used: the call is running.
    Consuming,
    /// Used: the call ran, and its outcome is kept.
    Consumed,
}

impl Status {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Declined => "declined",
            Self::Expired => "expired",
            Self::Consuming => "consuming",
            Self::Consumed => "consumed",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => Self::Pending,
            "approved" => Self::Approved,
            "declined" => Self::Declined,
            "expired" => Self::Expired,
            "consuming" => Self::Consuming,
            "consumed" => Self::Consumed,
            _ => return None,
        })
    }

    /// Whether the state ends at `expires_ms`.
    pub fn lapses(self) -> bool {
        matches!(self, Self::Pending | Self::Approved)
    }
}

/// A record and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// What it is for.
    pub record: Record,
    /// Where it stands.
    pub status: Status,
    /// When the current state lapses (pending, approved), ms since the epoch.
    pub expires_ms: u64,
    /// Who decided, when someone did.
    pub decided_by: Option<String>,
    /// When.
    pub decided_ms: Option<u64>,
    /// The stored outcome (JSON of [`toolhost_core::confirm::Stored`]), once consumed.
    pub outcome: Option<String>,
    /// The signed audit records (JWS) of its decision and its consumption.
    pub evidence: Vec<String>,
    /// The keyed hash of each value the human typed ([`super::vault::Vault::fingerprints`]),
    /// once approved with some.
    pub fingerprints: Option<Map<String, Value>>,
}

impl Entry {
    /// A new pending entry.
    pub fn pending(record: Record, expires_ms: u64) -> Self {
        Self {
            record,
            status: Status::Pending,
            expires_ms,
            decided_by: None,
            decided_ms: None,
            outcome: None,
            evidence: Vec::new(),
            fingerprints: None,
        }
    }

    /// The entry as it stands at `now_ms`: a pending or approved one past its expiry is expired.
    pub fn lapsed(mut self, now_ms: u64) -> Self {
        if self.status.lapses() && now_ms >= self.expires_ms {
            self.status = Status::Expired;
        }
        self
    }

    /// Writes a transition's change.
    pub fn apply(&mut self, change: super::store::Change) {
        if let Some(ms) = change.expires_ms {
            self.expires_ms = ms;
        }
        if change.decided_by.is_some() {
            self.decided_by = change.decided_by;
        }
        if change.decided_ms.is_some() {
            self.decided_ms = change.decided_ms;
        }
        if change.outcome.is_some() {
            self.outcome = change.outcome;
        }
        if let Some((_, jws)) = change.evidence {
            self.evidence.push(jws);
        }
        if let Some(fingerprints) = change.fingerprints.and_then(|f| serde_json::from_str(&f).ok()) {
            self.fingerprints = Some(fingerprints);
        }
    }

    /// The entry of a stored hash, if it is one.
    pub fn of_fields(fields: &HashMap<String, String>) -> Option<Self> {
        let record = serde_json::from_str(fields.get("record")?).ok()?;
        Some(Self {
            record,
            status: Status::parse(fields.get("status")?)?,
            expires_ms: fields.get("expires")?.parse().ok()?,
            decided_by: fields.get("decided_by").cloned(),
            decided_ms: fields.get("decided_at").and_then(|t| t.parse().ok()),
            outcome: fields.get("outcome").cloned(),
            evidence: ["evidence_decided", "evidence_consumed"]
                .iter()
                .filter_map(|f| fields.get(*f).cloned())
                .collect(),
            fingerprints: fields.get("human_sha256").and_then(|f| serde_json::from_str(f).ok()),
        })
    }

    /// The status JSON of the result URI: where it stands, and the outcome once consumed.
    pub fn status_json(&self) -> Value {
        let mut body = Map::new();
        body.insert("status".into(), self.status.as_str().into());
        body.insert("confirmation".into(), self.record.id.clone().into());
        body.insert("expires".into(), super::rfc3339(self.expires_ms).into());
        if let Some(outcome) = self
            .outcome
            .as_deref()
            .and_then(|o| serde_json::from_str::<Value>(o).ok())
        {
            body.insert("outcome".into(), outcome);
        }
        Value::Object(body)
    }
}
