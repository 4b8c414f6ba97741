//! CHEQ's surface (draft-rosenberg-aiproto-cheq-00 as APPROVALS.md reads it): the URI pack
//! every protocol's confirmation answer carries, the CHEQ object at the resource URI, and the
//! result URI an agent polls.
//!
//! - `GET /cheq/{id}`: the CHEQ object (`version`, `operation`, `operation name`,
//!   `inputs.parameters[]` with `parameter name` / `parameter value`, `date`), for a
//!   confirmation service authenticated as an approver of the call.
//! - `POST /cheq/{id}?accept` or `?reject`: that service's decision.
//! - `GET /cheq/{id}/result`: `{status, confirmation, expires, outcome?}`, for the caller who
//!   asked (or an approver); GET never runs anything.

use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use toolhost_core::confirm::{Answer, Status};

use crate::http::problem::ProblemResponse;

/// The URI pack and what a model needs, as members of an answer (APPROVALS.md §5.3).
pub fn members(answer: &Answer) -> Map<String, Value> {
    let mut members = Map::new();
    members.insert("status".into(), answer.status.as_str().into());
    members.insert("confirmation".into(), answer.id.clone().into());
    members.insert("confirmation uri".into(), answer.confirmation_uri.clone().into());
    members.insert("resource uri".into(), answer.resource_uri.clone().into());
    members.insert("result uri".into(), answer.result_uri.clone().into());
    members.insert("expires".into(), super::rfc3339(answer.expires_ms).into());
    members.insert("prompt".into(), answer.prompt().into());
    if let Some(note) = &answer.note {
        members.insert("note".into(), note.clone().into());
    }
    members
}

/// The answer on a protocol with problem documents (N-ACT, WoA): `202` with the pack (N-ACT,
/// unless `as_problem`), else `403` `confirmation-required`; declined is `403`
/// `confirmation-declined`. Nothing ran in any of them.
pub fn problem(answer: &Answer, subject: &str, as_problem: bool) -> ProblemResponse {
    let prompt = answer.prompt();
    let mut response = match answer.status {
        Status::Declined => ProblemResponse::new(
            StatusCode::FORBIDDEN,
            "confirmation-declined",
            format!("the user declined this call of {subject}; nothing was done"),
        ),
        Status::Required | Status::Pending if as_problem => ProblemResponse::new(
            StatusCode::FORBIDDEN,
            "confirmation-required",
            format!(
                "{subject} needs the user's confirmation of this exact call before it runs; nothing was done yet. Confirm at {}",
                answer.confirmation_uri
            ),
        ),
        Status::Required | Status::Pending => {
            let mut accepted = ProblemResponse::new(StatusCode::ACCEPTED, "confirmation-required", String::new());
            accepted.location = Some(answer.result_uri.clone());
            accepted.retry_after = Some(std::time::Duration::from_secs(5));
            accepted
        }
    };
    response.problem.prompt = Some(prompt);
    response.members = members(answer);
    response.members.insert("retryable".into(), false.into());
    response
}

/// A parameter's value as CHEQ's `parameter value` gives it: a string as itself, anything
/// else as its JSON.
pub(super) fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The CHEQ object of a record (draft §8.2).
pub fn object(record: &super::Record, operation: &str) -> Value {
    let parameters: Vec<Value> = record
        .parameters
        .iter()
        .map(|p| json!({"parameter name": p.description, "parameter value": text(&p.value), "name": p.name}))
        .collect();
    json!({
        "version": 1.0,
        "operation": operation,
        "operation name": record.title.clone().unwrap_or_else(|| record.tool.clone()),
        "inputs": {"parameters": parameters},
        "date": super::rfc3339(record.created_ms),
        "tool": {"id": record.tool_id, "name": record.tool, "version": record.version},
        "args_sha256": record.args_sha256,
        "policy_rev": record.policy_rev,
        "sub": record.principal,
    })
}
