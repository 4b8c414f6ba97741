//! Asking the caller's side mid-call, protocol-free: the user (a form, or a URL to visit), the
//! client's model (sampling), or the client's roots. A backend asks through [`Ask`] on the
//! call's [`crate::CallContext`]; the adapter decides how the question travels (MCP 2026-07-28:
//! an input-required result and a resumed call; older MCP sessions: a request to the client) or
//! that it cannot (every other protocol: no `Ask` at all).

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::backend::BoxFuture;

/// The failure code of a call that stopped because it waits for answers ([`Reply::Suspend`]):
/// the adapter that asked answers with the questions instead of this failure.
pub const INPUT_REQUIRED_CODE: &str = "input_required";
/// The failure code of a call whose user declined (or cancelled) a question the tool needs.
pub const DECLINED_CODE: &str = "declined";
/// The failure code of a call that needs a question the client cannot be asked (it did not
/// declare the capability).
pub const CANNOT_ASK_CODE: &str = "cannot_ask";

/// One question for the caller's side.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// A form for the user: `message`, and the flat JSON Schema object of the answer.
    Form { message: String, schema: Value },
    /// An out-of-band step: the user visits `url` (a sign-in, a payment) and says when done.
    /// `id` names the flow, so the answer can be matched to it.
    Url { message: String, url: String, id: String },
    /// A request to the client's model: `messages` (each `{role, content}`), `maxTokens`, and
    /// optional `systemPrompt`, `temperature`, `stopSequences`, `modelPreferences`, `metadata`.
    Sample(Map<String, Value>),
    /// The client's roots (the directories or places it works in).
    Roots,
}

impl Question {
    /// What the client must have declared to be asked this.
    pub fn capability(&self) -> Capability {
        match self {
            Self::Form { .. } => Capability::ElicitForm,
            Self::Url { .. } => Capability::ElicitUrl,
            Self::Sample(_) => Capability::Sampling,
            Self::Roots => Capability::Roots,
        }
    }
}

/// A capability the client declares when it can be asked a kind of question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Form elicitation.
    ElicitForm,
    /// URL elicitation.
    ElicitUrl,
    /// Sampling (the client's model).
    Sampling,
    /// Roots.
    Roots,
}

impl Capability {
    /// Its name, as messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::ElicitForm => "elicitation (form)",
            Self::ElicitUrl => "elicitation (url)",
            Self::Sampling => "sampling",
            Self::Roots => "roots",
        }
    }
}

/// How a question was answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The answer: for a form or URL `{action: accept|decline|cancel, content?}`; for sampling
    /// the model's message (`{role, content, model, stopReason}`); for roots `{roots: [...]}`.
    Answer(Value),
    /// Not yet: the call ends now and is resumed with the answer (an input-required result).
    /// The caller must stop before anything that changes something elsewhere.
    Suspend,
    /// The client cannot be asked this (it did not declare the capability).
    Unsupported(Capability),
    /// The question could not be put (the client went away, answered with an error, or the
    /// answer had the wrong shape): the message says which.
    Failed(String),
}

/// Where a call's questions go; set on [`crate::CallContext::ask`] by an adapter that can carry
/// them.
pub trait Ask: Send + Sync + fmt::Debug {
    /// Asks `question`, known by `key` within this call (a step's name): the same key is the
    /// same question on every round of a resumed call.
    fn ask<'a>(&'a self, key: &'a str, question: Question) -> BoxFuture<'a, Reply>;
}

/// `ask` for a tool called inside another's step: its questions' keys start with `prefix`
/// (the outer step's name and a dot), so two tools' steps of one name stay two questions.
pub fn within(ask: Arc<dyn Ask>, prefix: &str) -> Arc<dyn Ask> {
    Arc::new(Within {
        inner: ask,
        prefix: prefix.to_owned(),
    })
}

#[derive(Debug)]
struct Within {
    inner: Arc<dyn Ask>,
    prefix: String,
}

impl Ask for Within {
    fn ask<'a>(&'a self, key: &'a str, question: Question) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let key = format!("{}{key}", self.prefix);
            self.inner.ask(&key, question).await
        })
    }
}

/// Whether an elicitation answer's action is `accept`.
pub fn accepted(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_question_names_the_capability_it_needs() {
        let form = Question::Form {
            message: "m".into(),
            schema: serde_json::json!({"type": "object"}),
        };
        assert_eq!(form.capability(), Capability::ElicitForm);
        assert_eq!(Question::Roots.capability().name(), "roots");
        assert!(accepted(&serde_json::json!({"action": "accept"})));
        assert!(!accepted(&serde_json::json!({"action": "decline"})));
    }
}
