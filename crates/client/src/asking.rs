//! What an MCP server asks during a call (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`), relayed to whoever the call is made for (docs/asking.md): a server that
//! federates this server's tools passes its caller's [`Ask`] with the call, and the question
//! goes there; the answer comes back as the server's answer.
//!
//! A session is shared by the calls to one server, and MCP does not say which call a request
//! belongs to: a question is relayed while exactly one call that can be asked is in flight on
//! the session, and refused when none is, or when several are (the server sees an error, as if
//! the client had none of the capability). Each call's questions are keyed `TOOL.askN`, in the
//! order the server asks them, so that a call resumed from the start (MCP 2026-07-28 callers)
//! finds the answers to the questions it asked before.
#![allow(deprecated)] // Sampling and roots (SEP-2577): still what servers ask, and relayed.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsResult,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolhost_core::{Ask, Question, Reply};

/// The calls in flight on one session that can be asked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Askers(Arc<Mutex<Vec<Entry>>>);

#[derive(Debug)]
struct Entry {
    id: u64,
    tool: String,
    ask: Arc<dyn Ask>,
    asked: AtomicUsize,
}

/// A call's place among its session's [`Askers`], given up when dropped (the call ended).
#[derive(Debug)]
pub(crate) struct Registration {
    askers: Askers,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.askers.entries().retain(|e| e.id != self.id);
    }
}

impl Askers {
    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts a call of `tool` that can be asked through `ask` among the session's.
    pub fn register(&self, tool: &str, ask: Arc<dyn Ask>) -> Registration {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        self.entries().push(Entry {
            id,
            tool: tool.to_owned(),
            ask,
            asked: AtomicUsize::new(0),
        });
        Registration {
            askers: self.clone(),
            id,
        }
    }

    /// The one call a question now belongs to, and the question's key.
    fn current(&self) -> Result<(String, Arc<dyn Ask>), ErrorData> {
        let entries = self.entries();
        match entries.as_slice() {
            [one] => {
                let n = one.asked.fetch_add(1, Ordering::Relaxed) + 1;
                Ok((format!("{}.ask{n}", one.tool), Arc::clone(&one.ask)))
            }
            [] => Err(refused("no call that can be asked is in flight")),
            _ => Err(refused(
                "several calls are in flight on this session, and the request does not say which it belongs to",
            )),
        }
    }

    /// Relays `question`; `Ok(None)` when the caller will answer later (the call is resumed).
    async fn relay<T: DeserializeOwned>(&self, question: Question) -> Result<Option<T>, ErrorData> {
        let (key, ask) = self.current()?;
        match ask.ask(&key, question).await {
            Reply::Answer(answer) => serde_json::from_value(answer)
                .map(Some)
                .map_err(|e| refused(&format!("the caller's answer has the wrong shape ({e})"))),
            Reply::Suspend => Ok(None),
            Reply::Unsupported(capability) => Err(refused(&format!(
                "the caller cannot be asked for {}",
                capability.name()
            ))),
            Reply::Failed(why) => Err(refused(&why)),
        }
    }

    /// An `elicitation/create` the server sent: relayed; cancelled when the answer comes later.
    pub async fn elicit(&self, request: ElicitRequestParams) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or_default();
        let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let question = match params.get("url") {
            Some(_) => Question::Url {
                message: text("message"),
                url: text("url"),
                id: text("elicitationId"),
            },
            None => Question::Form {
                message: text("message"),
                schema: params.get("requestedSchema").cloned().unwrap_or_default(),
            },
        };
        match self.relay(question).await? {
            Some(answer) => Ok(answer),
            // The call ends here and is made again with the answer: this round is cancelled.
            None => {
                serde_json::from_value(serde_json::json!({"action": "cancel"})).map_err(|e| refused(&e.to_string()))
            }
        }
    }

    /// A `sampling/createMessage` the server sent: relayed.
    pub async fn sample(&self, request: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorData> {
        let mut params = match serde_json::to_value(&request) {
            Ok(Value::Object(params)) => params,
            _ => Map::new(),
        };
        // What concerns this hop only.
        params.remove("_meta");
        params.remove("task");
        self.relay(Question::Sample(params))
            .await?
            .ok_or_else(|| refused("the caller answers later; the call will be made again"))
    }

    /// A `roots/list` the server sent: relayed.
    pub async fn roots(&self) -> Result<ListRootsResult, ErrorData> {
        self.relay(Question::Roots)
            .await?
            .ok_or_else(|| refused("the caller answers later; the call will be made again"))
    }
}

fn refused(why: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::INVALID_REQUEST,
        format!("toolhost cannot relay this request to its caller: {why}"),
        None,
    )
}
