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
//! The seal is toolhost's own (HMAC-SHA256 under the approvals key, with an expiry): what it
//! holds authorizes nothing alone, since the gate checks the record's binding in the store.

use std::time::Duration;

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ErrorCode, InputRequest, InputRequests,
    InputRequiredResult,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use toolhost_core::confirm::{Answer, Presented, Status};

use super::convert::failure;

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
    request_state.starts_with("th1.")
}

pub(super) fn presented(
    key: &[u8],
    request_state: Option<&str>,
    meta_id: Option<&str>,
    doorway: Doorway,
) -> Result<Option<Presented>, ErrorData> {
    if let Some(sealed) = request_state.filter(|s| is_sealed(s)) {
        let state = open(key, sealed).ok_or_else(|| {
            ErrorData::invalid_params(
                "requestState failed its integrity check or has expired; call the tool again without it",
                None,
            )
        })?;
        return Ok(Some(Presented::Id(state.id)));
    }
    if let Some(id) = meta_id {
        return Ok(Some(Presented::Id(id.to_owned())));
    }
    Ok((!doorway.mrtr).then_some(Presented::ByBinding))
}

/// The answer to a call the gate refused until a human confirms.
pub(super) fn answer(key: &[u8], answer: &Answer, doorway: Doorway) -> Result<CallToolResponse, ErrorData> {
    let message = answer.prompt();
    match (answer.status, doorway.mrtr, doorway.url) {
        (Status::Declined, ..) => Ok(CallToolResponse::Complete(declined(answer))),
        (_, true, Some(true)) => {
            let sealed = seal(key, answer);
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
        // holds the link for a client that only shows it.
        (_, false, _) => Err(ErrorData::new(
            URL_ELICITATION_REQUIRED,
            message.clone(),
            Some(json!({"elicitations": [{
                "mode": "url",
                "elicitationId": answer.id,
                "url": answer.confirmation_uri,
                "message": message,
            }]})),
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

#[derive(Debug, Serialize, Deserialize)]
struct State {
    id: String,
    exp: u64,
}

fn seal(key: &[u8], answer: &Answer) -> String {
    let state = State {
        id: answer.id.clone(),
        exp: answer.expires_ms,
    };
    let payload =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(&state).unwrap_or_default());
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hmac(key, payload.as_bytes()));
    format!("th1.{payload}.{tag}")
}

fn open(key: &[u8], sealed: &str) -> Option<State> {
    let rest = sealed.strip_prefix("th1.")?;
    let (payload, tag) = rest.split_once('.')?;
    let given = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(tag).ok()?;
    let expected = hmac(key, payload.as_bytes());
    // Constant time: the tag is compared whole.
    if given.len() != expected.len() || given.iter().zip(&expected).fold(0u8, |d, (a, b)| d | (a ^ b)) != 0 {
        return None;
    }
    let state: State =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    // An approved confirmation lives past the pending one's expiry: the store decides that;
    // the seal only refuses a state long past any lifetime.
    (state.exp + 24 * 3600 * 1000 > toolhost_core::unix_ms()).then_some(state)
}

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let mut hash = Sha256::new();
    hash.update(&inner);
    hash.update(message);
    let inner_hash = hash.finalize();
    let mut hash = Sha256::new();
    hash.update(&outer);
    hash.update(inner_hash);
    hash.finalize().to_vec()
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

    #[test]
    fn a_sealed_state_opens_only_unchanged_and_under_its_key() {
        let sealed = seal(b"key one", &answer());
        assert_eq!(open(b"key one", &sealed).map(|s| s.id), Some("abc".to_owned()));
        assert!(open(b"key two", &sealed).is_none());
        let mut forged = sealed.clone();
        forged.insert(6, 'x');
        assert!(open(b"key one", &forged).is_none());
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            toolhost_core::hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn mrtr_without_url_elicitation_is_32021_and_legacy_is_32042() {
        let mrtr = Doorway {
            mrtr: true,
            url: Some(false),
        };
        let error = super::answer(b"k", &answer(), mrtr).unwrap_err();
        assert_eq!(error.code.0, -32021);
        let legacy = Doorway { mrtr: false, url: None };
        let error = super::answer(b"k", &answer(), legacy).unwrap_err();
        assert_eq!(error.code.0, -32042);
        let with_url = Doorway {
            mrtr: true,
            url: Some(true),
        };
        assert!(matches!(
            super::answer(b"k", &answer(), with_url),
            Ok(CallToolResponse::InputRequired(_))
        ));
    }
}
