//! Asking the client mid-call (docs/asking.md): how core's protocol-free [`Ask`] travels over
//! MCP, by era.
//!
//! - **2026-07-28** ([`Rounds`]): a question without an answer ends the call with an
//!   input-required result (`inputRequests`, keyed by the asking step's name, and a sealed
//!   `requestState` holding the answers given so far). The client calls again with
//!   `inputResponses` and the `requestState`; the call runs again from the start, each question
//!   answered from them. The state is signed by the server ([`crate::seal`]), bound to the tool,
//!   the caller and a digest of the arguments, and expires; a changed one is refused with
//!   -32602. A response the client sends that was not asked is ignored; one of the wrong shape
//!   is asked again.
//! - **Before 2026-07-28, with a session or over stdio** ([`Session`]): the request of the same
//!   meaning, sent to the client while the call waits (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`).
//! - **Before 2026-07-28, stateless**: nothing can reach the client and come back; the question
//!   fails saying why ([`stateless`]).
//!
//! In every era a client that did not declare the capability is not asked: the step's
//! `on_decline` answers, or the call fails with -32021 (MissingRequiredClientCapability).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ErrorData, InputRequest, InputRequiredResult, InputResponses, JsonObject, ServerRequest,
};
use rmcp::service::Peer;
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use toolhost_core::{Ask, BoxFuture, Capability, Question, Reply};

use crate::seal::{self, Seal};

/// The version of the payload sealed in a `requestState`.
const STATE_VERSION: u64 = 1;

/// Whether `capabilities` let the client be asked for `capability`.
pub(super) fn declared(capabilities: &ClientCapabilities, capability: Capability) -> bool {
    let elicitation = capabilities.elicitation.as_ref();
    match capability {
        // A bare `elicitation: {}` is form elicitation (2025-06-18 had no modes).
        Capability::ElicitForm => elicitation.is_some_and(|e| e.form.is_some() || e.url.is_none()),
        Capability::ElicitUrl => elicitation.is_some_and(|e| e.url.is_some()),
        Capability::Sampling => capabilities.sampling.is_some(),
        Capability::Roots => capabilities.roots.is_some(),
    }
}

/// The capabilities object that names `capability` (the data of -32021).
pub(super) fn requiring(capability: Capability) -> ClientCapabilities {
    let json = match capability {
        Capability::ElicitForm => json!({"elicitation": {"form": {}}}),
        Capability::ElicitUrl => json!({"elicitation": {"url": {}}}),
        Capability::Sampling => json!({"sampling": {}}),
        Capability::Roots => json!({"roots": {}}),
    };
    serde_json::from_value(json).unwrap_or_default()
}

/// A question as the request an MCP client answers: `{method, params}`.
pub(super) fn request(question: &Question) -> Value {
    match question {
        Question::Form { message, schema } => json!({
            "method": ELICIT,
            "params": {"mode": "form", "message": message, "requestedSchema": schema},
        }),
        Question::Url { message, url, id } => json!({
            "method": ELICIT,
            "params": {"mode": "url", "message": message, "url": url, "elicitationId": id},
        }),
        Question::Sample(params) => json!({"method": SAMPLE, "params": params}),
        Question::Roots => json!({"method": ROOTS, "params": {}}),
    }
}

/// Whether `answer` has the shape the question's answer has.
pub(super) fn fits(question: &Question, answer: &Value) -> bool {
    let method = match question {
        Question::Form { .. } | Question::Url { .. } => ELICIT,
        Question::Sample(_) => SAMPLE,
        Question::Roots => ROOTS,
    };
    answers(method, answer).is_ok()
}

const ELICIT: &str = "elicitation/create";
const SAMPLE: &str = "sampling/createMessage";
const ROOTS: &str = "roots/list";

/// Whether `answer` has the shape of the result of an MCP request of `method`; else what it
/// lacks, as the client's developer can fix it.
pub(super) fn answers(method: &str, answer: &Value) -> Result<(), &'static str> {
    match method {
        ELICIT => answer
            .get("action")
            .and_then(Value::as_str)
            .is_some_and(|a| matches!(a, "accept" | "decline" | "cancel"))
            .then_some(())
            .ok_or("an elicitation's answer is an object with `action` accept, decline or cancel (and `content` when accepted)"),
        SAMPLE => (answer.get("content").is_some() && answer.get("role").is_some())
            .then_some(())
            .ok_or("a sampling answer is the model's message: an object with `role` and `content`"),
        ROOTS => answer
            .get("roots")
            .is_some_and(Value::is_array)
            .then_some(())
            .ok_or("a roots answer is an object with a `roots` array"),
        _ => Err("the question's request has no method this server knows"),
    }
}

/// One round of a 2026-07-28 call: the answers known, and the questions still open.
#[derive(Debug)]
pub(super) struct Rounds {
    capabilities: ClientCapabilities,
    answers: Map<String, Value>,
    /// The keys answered from `answers` in this round: what the next state carries.
    used: Mutex<BTreeSet<String>>,
    open: Mutex<BTreeMap<String, Question>>,
    /// A capability a question needed that the client did not declare.
    missing: Mutex<Option<Capability>>,
}

/// What a 2026-07-28 call's state is bound to: the tool, the caller and a digest of the
/// arguments, so a state cannot resume another call.
pub(super) fn binding(tool: &str, caller: Option<&str>, arguments: Option<&JsonObject>) -> Vec<u8> {
    let arguments = arguments
        .map(|a| Value::Object(a.clone()).to_string())
        .unwrap_or_default();
    let digest = Sha256::digest(arguments.as_bytes());
    seal::binding([
        b"mcp-call".as_slice(),
        tool.as_bytes(),
        caller.unwrap_or("").as_bytes(),
        digest.as_slice(),
    ])
}

impl Rounds {
    /// The round of a call that brought `responses` and `state` (both absent on the first).
    pub fn open(
        seal: &Seal,
        binding: &[u8],
        capabilities: ClientCapabilities,
        responses: Option<InputResponses>,
        state: Option<&str>,
    ) -> Result<Self, ErrorData> {
        let mut answers = Map::new();
        if let Some(state) = state {
            let payload = seal.open(state, binding).map_err(|why| {
                ErrorData::invalid_params(
                    format!(
                        "requestState is refused: {why}; call the tool again without requestState and inputResponses to start over"
                    ),
                    None,
                )
            })?;
            if payload.get("v").and_then(Value::as_u64) == Some(STATE_VERSION)
                && let Some(Value::Object(carried)) = payload.get("answers")
            {
                answers.extend(carried.clone());
            }
        }
        // A response that is not an object answers nothing: its question is asked again.
        answers.extend(responses.into_iter().flatten().filter(|(_, v)| v.is_object()));
        Ok(Self {
            capabilities,
            answers,
            used: Mutex::default(),
            open: Mutex::default(),
            missing: Mutex::default(),
        })
    }

    /// The input-required result that asks the open questions, if any are.
    pub fn input_required(&self, seal: &Seal, binding: &[u8]) -> Option<InputRequiredResult> {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        if open.is_empty() {
            return None;
        }
        let mut requests = BTreeMap::new();
        for (key, question) in &open {
            match serde_json::from_value::<InputRequest>(request(question)) {
                Ok(request) => {
                    requests.insert(key.clone(), request);
                }
                Err(e) => tracing::error!(key, error = %e, "a question did not make an MCP input request"),
            }
        }
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let carried: Map<String, Value> = self
            .answers
            .iter()
            .filter(|(k, _)| used.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let state = seal.seal(binding, &json!({"v": STATE_VERSION, "answers": carried}));
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The capability a question needed and the client did not declare, if one did.
    pub fn missing(&self) -> Option<Capability> {
        *self.missing.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Ask for Rounds {
    fn ask<'a>(&'a self, key: &'a str, question: Question) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let capability = question.capability();
            if !declared(&self.capabilities, capability) {
                *self.missing.lock().unwrap_or_else(PoisonError::into_inner) = Some(capability);
                return Reply::Unsupported(capability);
            }
            if let Some(answer) = self.answers.get(key).filter(|a| fits(&question, a)) {
                self.used
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key.to_owned());
                return Reply::Answer(answer.clone());
            }
            self.open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key.to_owned(), question);
            Reply::Suspend
        })
    }
}

/// A client of a session (before 2026-07-28, with sessions or stdio): asked directly.
#[derive(Debug)]
pub(super) struct Session {
    pub peer: Peer<RoleServer>,
    pub capabilities: ClientCapabilities,
}

impl Ask for Session {
    fn ask<'a>(&'a self, _key: &'a str, question: Question) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let capability = question.capability();
            if !declared(&self.capabilities, capability) {
                return Reply::Unsupported(capability);
            }
            let request = request(&question);
            let request = match question {
                Question::Form { .. } | Question::Url { .. } => {
                    serde_json::from_value(request).map(ServerRequest::ElicitRequest)
                }
                Question::Sample(_) => serde_json::from_value(request).map(ServerRequest::CreateMessageRequest),
                Question::Roots => serde_json::from_value(request).map(ServerRequest::ListRootsRequest),
            };
            let request = match request {
                Ok(request) => request,
                Err(e) => return Reply::Failed(format!("the question is not a valid MCP request ({e})")),
            };
            match self.peer.send_request(request).await {
                Ok(answer) => match serde_json::to_value(&answer) {
                    Ok(answer) if fits(&question, &answer) => Reply::Answer(answer),
                    _ => Reply::Failed("the client's answer has the wrong shape".to_owned()),
                },
                Err(rmcp::ServiceError::McpError(error)) => {
                    Reply::Failed(format!("the client answered with an error: {}", error.message))
                }
                Err(e) => Reply::Failed(format!("the client did not answer ({e})")),
            }
        })
    }
}

/// What a stateless server's client before 2026-07-28 is asked with: nothing comes back.
#[derive(Debug)]
struct Stateless;

impl Ask for Stateless {
    fn ask<'a>(&'a self, _key: &'a str, _question: Question) -> BoxFuture<'a, Reply> {
        Box::pin(async {
            Reply::Failed(
                "this server keeps no MCP sessions, and a client of a protocol version before 2026-07-28 can be asked only within one; use a 2026-07-28 client, or a server started with --mcp-sessions"
                    .to_owned(),
            )
        })
    }
}

/// The [`Ask`] of a stateless server's call from a client before 2026-07-28.
pub(super) fn stateless() -> Arc<dyn Ask> {
    static STATELESS: LazyLock<Arc<dyn Ask>> = LazyLock::new(|| Arc::new(Stateless));
    Arc::clone(&STATELESS)
}

/// The -32021 error of a call that needed `capability`.
pub(super) fn missing_capability(capability: Capability) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(requiring(capability));
    error.message = format!(
        "this tool needs to ask the client for {}, which the client did not declare in its capabilities",
        capability.name()
    )
    .into();
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn capabilities(json: Value) -> ClientCapabilities {
        serde_json::from_value(json).expect("capabilities")
    }

    #[test]
    fn each_era_declares_elicitation_its_way() {
        assert!(declared(
            &capabilities(json!({"elicitation": {}})),
            Capability::ElicitForm
        ));
        assert!(declared(
            &capabilities(json!({"elicitation": {"form": {}}})),
            Capability::ElicitForm
        ));
        assert!(!declared(
            &capabilities(json!({"elicitation": {"url": {}}})),
            Capability::ElicitForm
        ));
        assert!(declared(
            &capabilities(json!({"elicitation": {"url": {}}})),
            Capability::ElicitUrl
        ));
        assert!(!declared(
            &capabilities(json!({"sampling": {}})),
            Capability::ElicitForm
        ));
        assert!(declared(&capabilities(json!({"sampling": {}})), Capability::Sampling));
        assert!(!declared(&capabilities(json!({})), Capability::Roots));
    }

    #[tokio::test]
    async fn a_round_asks_what_it_cannot_answer_and_carries_what_it_could() {
        let seal = Seal::random(Duration::from_secs(60));
        let arguments = JsonObject::new();
        let binding = binding("t", None, Some(&arguments));
        let caps = capabilities(json!({"elicitation": {}, "sampling": {}}));
        let form = || Question::Form {
            message: "name?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        };
        let first = Rounds::open(&seal, &binding, caps.clone(), None, None).expect("round");
        assert_eq!(first.ask("step1", form()).await, Reply::Suspend);
        let asked = first.input_required(&seal, &binding).expect("asks");
        let request = serde_json::to_value(&asked).expect("json");
        assert_eq!(request["resultType"], "input_required");
        assert_eq!(request["inputRequests"]["step1"]["method"], "elicitation/create");
        let state = asked.request_state.expect("state");

        let answer = json!({"action": "accept", "content": {"name": "Alice"}});
        let responses: InputResponses = [("step1".to_owned(), answer.clone())].into();
        let second = Rounds::open(&seal, &binding, caps.clone(), Some(responses), Some(&state)).expect("round");
        assert_eq!(second.ask("step1", form()).await, Reply::Answer(answer.clone()));
        assert_eq!(second.ask("step2", form()).await, Reply::Suspend);
        let state = second
            .input_required(&seal, &binding)
            .and_then(|r| r.request_state)
            .expect("state");
        // The third round brings only step2's answer: step1's comes from the state.
        let third = Rounds::open(&seal, &binding, caps.clone(), None, Some(&state)).expect("round");
        assert_eq!(third.ask("step1", form()).await, Reply::Answer(answer));

        let tampered = Rounds::open(&seal, &binding, caps.clone(), None, Some(&format!("{state}-TAMPERED")));
        assert_eq!(tampered.map(|_| ()).expect_err("refused").code.0, -32602);
        let other_arguments: JsonObject = [("a".to_owned(), json!(1))].into_iter().collect();
        let other = super::binding("t", None, Some(&other_arguments));
        assert!(Rounds::open(&seal, &other, caps, None, Some(&state)).is_err());
    }

    #[tokio::test]
    async fn an_undeclared_capability_is_not_asked() {
        let seal = Seal::random(Duration::from_secs(60));
        let binding = binding("t", None, None);
        let round = Rounds::open(&seal, &binding, capabilities(json!({"sampling": {}})), None, None).expect("round");
        let form = Question::Form {
            message: "m".into(),
            schema: json!({"type": "object", "properties": {}}),
        };
        assert_eq!(round.ask("k", form).await, Reply::Unsupported(Capability::ElicitForm));
        assert_eq!(round.missing(), Some(Capability::ElicitForm));
        assert!(round.input_required(&seal, &binding).is_none());
        assert_eq!(missing_capability(Capability::Sampling).code.0, -32021);
    }
}
