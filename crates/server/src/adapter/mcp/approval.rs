//! A confirmation request over MCP (issue #40, APPROVALS.md §5.3): the doorway is URL-mode
//! elicitation; the approval itself is recorded server-side from the human on the page, never
//! from what the client answers.
//!
//! - 2026-07-28 (MRTR): an `InputRequiredResult` with `inputRequests.confirm` a URL-mode
//!   `elicitation/create` and a sealed `requestState` naming the confirmation; the retry echoes
//!   it. A client that did not declare `elicitation.url` gets `-32021` with
//!   `requiredCapabilities`. A retry while the request is pending is held a little, then
//!   answered with a fresh `requestState` and no `inputRequests` (the user is not asked again).
//! - Earlier versions: `-32042` (URL elicitation required) with the URL; the retry carries no
//!   state, so the confirmation is found by the call's binding (caller, tool, version, digest).
//! - Declined: an `isError` result saying plainly that nothing was done.
//!
//! The state is sealed by [`crate::seal`] as a [`Kind::Confirmation`] (the same key as a call's
//! answers, told apart by its `confirm.` prefix): what it holds authorizes nothing alone, since
//! the gate checks the record's binding in the store.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ErrorCode, InputRequest, InputRequests,
    InputRequiredResult,
};
use serde_json::json;
use toolhost_core::confirm::{Answer, Presented, Status};

use super::convert::failure;
use crate::seal::{Kind, Seal};

/// The key of the one input request a confirmation makes.
/// The key of the confirmation's URL elicitation in `inputRequests`: not a name a sculpted step
/// can have (a step that asks keys its own question by its name, `elicit.rs`).
const CONFIRM: &str = "toolhost/confirmation";

/// How long a retry presenting a pending confirmation is held before it is answered.
const HOLD: Duration = Duration::from_secs(20);

/// What the client can take: the protocol era and whether it declared URL-mode elicitation
/// (`None`: not known, a stateless request of an earlier version carries no capabilities).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Doorway {
    /// 2026-07-28 or later: answers are input-required results, never `-32042`.
    pub mrtr: bool,
    /// Whether the client declared `elicitation.url` (read for 2026-07-28 requests, which
    /// carry their capabilities).
    pub url: Option<bool>,
}

/// How long a retry may be held while the human decides.
pub(super) fn hold() -> Duration {
    HOLD
}

/// What the request presents: the confirmation in the echoed `requestState` (or in
/// `_meta."toolhost/confirmation"`), or for an earlier version, its binding. A `requestState`
/// that fails its integrity check is `-32602` (MRTR: reject state that fails verification).
/// Whether a `requestState` is a confirmation's (sealed here), rather than a call's questions'
/// (`elicit.rs`): the two travel in the same member.
pub(super) fn is_sealed(request_state: &str) -> bool {
    Kind::of(request_state) == Kind::Confirmation
}

pub(super) fn presented(
    seal: &Seal,
    request_state: Option<&str>,
    meta_id: Option<&str>,
    doorway: Doorway,
) -> Result<Option<Presented>, ErrorData> {
    if let Some(sealed) = request_state.filter(|s| is_sealed(s)) {
        let id = open(seal, sealed).ok_or_else(|| {
            ErrorData::invalid_params(
                "requestState failed its integrity check or has expired; call the tool again without it",
                None,
            )
        })?;
        return Ok(Some(Presented::Id(id)));
    }
    if let Some(id) = meta_id {
        return Ok(Some(Presented::Id(id.to_owned())));
    }
    Ok((!doorway.mrtr).then_some(Presented::ByBinding))
}

/// The answer to a call the gate refused until a human confirms.
pub(super) fn answer(seal: &Seal, answer: &Answer, doorway: Doorway) -> Result<CallToolResponse, ErrorData> {
    let message = answer.prompt();
    match (answer.status, doorway.mrtr, doorway.url) {
        (Status::Declined, ..) => Ok(CallToolResponse::Complete(declined(answer))),
        (_, true, Some(true)) => {
            let sealed = self::seal(seal, answer);
            let input_requests = (answer.status == Status::Required).then(|| {
                let params = ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message: message.clone(),
                    url: answer.confirmation_uri.clone(),
                    elicitation_id: String::new(),
                };
                let mut requests = InputRequests::new();
                requests.insert(
                    CONFIRM.to_owned(),
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                );
                requests
            });
            Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                input_requests,
                Some(sealed),
            )))
        }
        (_, true, _) => Err(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "this tool needs the user's confirmation through a URL, and the client did not declare URL-mode elicitation; nothing was done. {message}"
            ),
            Some(json!({"requiredCapabilities": {"elicitation": {"url": {}}}})),
        )),
        // Before 2026-07-28 a stateless request carries no capabilities, so whether the client
        // takes URL elicitation is not known: -32042 is the spec's answer, and its message
        // holds the link for a client that only shows it. The URI pack rides beside it under
        // toolhost's key, so a client can poll the result URI rather than retry blindly.
        (_, false, _) => Err(ErrorData::new(
            URL_ELICITATION_REQUIRED,
            message.clone(),
            Some(json!({
                "elicitations": [{
                    "mode": "url",
                    "elicitationId": answer.id,
                    "url": answer.confirmation_uri,
                    "message": message,
                }],
                CONFIRM: crate::approvals::cheq::members(answer),
            })),
        )),
    }
}

/// `URLElicitationRequiredError` (MCP 2025-11-25; 2026-07-28 forbids it).
const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

fn declined(answer: &Answer) -> CallToolResult {
    failure(answer.prompt())
}

/// Whether the client's `inputResponses` cancel the confirmation (a decline or cancel of the
/// URL elicitation only ever cancels: honouring a refusal is always safe).
pub(super) fn cancelled(request_state: Option<&str>, responses: Option<&rmcp::model::InputResponses>) -> bool {
    // Only an answer to a confirmation (its state sealed here); a question's is `elicit.rs`'s.
    if !request_state.is_some_and(is_sealed) {
        return false;
    }
    responses
        .and_then(|r| r.get(CONFIRM))
        .and_then(|r| r.get("action"))
        .and_then(serde_json::Value::as_str)
        .is_some_and(|action| action == "decline" || action == "cancel")
}

/// The result when the user cancelled in the client.
pub(super) fn cancelled_result() -> CallToolResult {
    failure(
        "The user cancelled the confirmation in the client, so this action was NOT carried out and nothing changed."
            .to_owned(),
    )
}

/// How long a confirmation's state outlives its pending expiry: an approved confirmation
/// lives past it (the store decides that); the seal only refuses a state long past any lifetime.
const GRACE: Duration = Duration::from_secs(24 * 3600);

fn seal(seal: &Seal, answer: &Answer) -> String {
    let end = answer.expires_ms.saturating_add(GRACE.as_millis() as u64);
    let ttl = Duration::from_millis(end.saturating_sub(toolhost_core::unix_ms()));
    seal.seal_as(Kind::Confirmation, b"", &json!({"id": answer.id}), ttl)
}

/// The confirmation id in `sealed`, if this server sealed it and it has not expired.
fn open(seal: &Seal, sealed: &str) -> Option<String> {
    let state = seal.open_as(Kind::Confirmation, sealed, b"").ok()?;
    state.get("id")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Answer {
        Answer {
            status: Status::Required,
            id: "abc".into(),
            confirmation_uri: "http://127.0.0.1/confirm/abc".into(),
            resource_uri: String::new(),
            result_uri: String::new(),
            expires_ms: toolhost_core::unix_ms() + 60_000,
            note: None,
        }
    }

    fn key() -> Seal {
        Seal::random(Duration::from_secs(60))
    }

    #[test]
    fn a_sealed_state_opens_only_unchanged_and_under_its_key() {
        let one = key();
        let sealed = seal(&one, &answer());
        assert!(is_sealed(&sealed));
        assert_eq!(open(&one, &sealed), Some("abc".to_owned()));
        assert!(open(&key(), &sealed).is_none());
        let mut forged = sealed.clone();
        forged.insert(12, 'x');
        assert!(open(&one, &forged).is_none());
        // A call's answers are not a confirmation, though sealed under the same key.
        let answers = one.seal(b"", &json!({"id": "abc"}));
        assert!(!is_sealed(&answers));
        assert!(open(&one, &answers).is_none());
    }

    #[test]
    fn a_state_outlives_its_pending_expiry_by_the_grace_only() {
        let one = key();
        let mut past = answer();
        past.expires_ms = toolhost_core::unix_ms() - 3600 * 1000;
        assert_eq!(open(&one, &seal(&one, &past)), Some("abc".to_owned()));
        past.expires_ms = toolhost_core::unix_ms() - GRACE.as_millis() as u64 - 1000;
        let sealed = seal(&one, &past);
        std::thread::sleep(Duration::from_millis(5));
        assert!(open(&one, &sealed).is_none());
    }

    #[test]
    fn mrtr_without_url_elicitation_is_32021_and_legacy_is_32042() {
        let mrtr = Doorway {
            mrtr: true,
            url: Some(false),
        };
        let error = super::answer(&key(), &answer(), mrtr).unwrap_err();
        assert_eq!(error.code.0, -32021);
        let legacy = Doorway { mrtr: false, url: None };
        let error = super::answer(&key(), &answer(), legacy).unwrap_err();
        assert_eq!(error.code.0, -32042);
        let with_url = Doorway {
            mrtr: true,
            url: Some(true),
        };
        assert!(matches!(
            super::answer(&key(), &answer(), with_url),
            Ok(CallToolResponse::InputRequired(_))
        ));
    }
}
