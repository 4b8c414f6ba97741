//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) over [`crate::tasks`].
//!
//! - The server advertises the extension; a `tools/call` of a tool whose catalog entry says
//!   `execution: { task: optional | required }`, from a client that declared the extension
//!   (per request in `_meta`, or at `initialize`), answers a `CreateTaskResult` at once and
//!   runs the call in the background. The client need not ask: the server decides (SEP-2663).
//! - Without the client's declaration, an `optional` tool is answered within the request and a
//!   `required` one is refused with -32021 (Missing Required Client Capability), naming the
//!   extension in `data.requiredCapabilities`.
//! - `tasks/get` answers the task with its result inlined once it has one: a tool error is
//!   `completed` with `isError: true`; `failed` (with a JSON-RPC error) is kept for faults of
//!   the server (a backend that broke its declared outputs, a run that panicked).
//! - `tasks/cancel` drops the run (and with it the upstream request in flight) and answers an
//!   empty acknowledgement, also for a task that has ended.
//! - A question the run asks (an `elicit`, `sample` or `roots` step; [`Asker`]) is put on the
//!   task: `tasks/get` reads `input_required` with `inputRequests` keyed by the step's name,
//!   whatever the client's era; `tasks/update` with `inputResponses` answers them, and the run
//!   goes on where it waited (nothing repeats). An answer of the wrong shape for its question
//!   is refused with -32602 saying what the answer needs; an answer to no open question is
//!   ignored (SEP-2663). A client that did not declare the capability is not asked.
//! - A tool with `execution: { ask_first: true }`, called by a 2026-07-28 client, asks its first
//!   questions as an input-required result (sealed `requestState`, as a call that is not a
//!   task): the call that brings their answers becomes the task (SEP-2663's MRTR composition).
//! - Another caller's task id, an expired one and a made-up one are all unknown: -32602.
//! - Rmcp answers `tasks/result` and `tasks/list` (removed by SEP-2663) with -32601, and gates
//!   the methods on the client's declaration.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, InputRequest, InputResponses,
    JsonObject, Task, TaskPayload, TaskStatus,
};
use toolhost_core::{Access, Ask, BoxFuture, CallContext, Question, Reply, TaskSupport};

use super::elicit;
use crate::State;
use crate::tasks::{self, AskFailed, Record, Refused, Tasks};

/// The interval we suggest between two `tasks/get` of a working task.
const POLL_INTERVAL_MS: u64 = 500;

/// How long an `ask_first` call waits for its first question before it becomes a task anyway
/// (a call that asks nothing is not held in its request).
const FIRST_QUESTIONS: Duration = Duration::from_millis(POLL_INTERVAL_MS);

/// The server's declaration of the extension, for `capabilities.extensions`.
pub(super) fn declare(capabilities: &mut rmcp::model::ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
}

/// How a tool runs as a task.
#[derive(Debug, Clone, Copy)]
pub(super) struct Support {
    pub mode: TaskSupport,
    /// Its latest version's timeout: how long the run may take.
    pub timeout: Duration,
    /// `execution: { ask_first: true }`.
    pub ask_first: bool,
}

/// How the tool `name` runs, as the caller with `access` sees it (a tool it may not see runs
/// as never a task: the call then answers as for an unknown tool).
pub(super) fn support(state: &State, name: &str, access: &Access) -> Support {
    let catalog = state.engine.catalog();
    match catalog.find_for(name, access) {
        Some(tool) => Support {
            mode: tool.task,
            timeout: tool.latest().timeout,
            ask_first: tool.task_asks_first,
        },
        None => Support {
            mode: TaskSupport::Never,
            timeout: Duration::ZERO,
            ask_first: false,
        },
    }
}

/// The refusal of a `required` tool to a client that did not declare the extension.
pub(super) fn required() -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build());
    error.message = "this tool runs only as a task: declare the io.modelcontextprotocol/tasks extension in \
                     the request's client capabilities and poll tasks/get for its result"
        .into();
    error
}

/// A call to run as a task.
pub(super) struct Run {
    pub context: CallContext,
    pub name: String,
    pub arguments: Option<JsonObject>,
    pub pinned: Option<serde_json::Value>,
    /// What the client declared it can be asked.
    pub capabilities: ClientCapabilities,
    /// For an `ask_first` tool called by a 2026-07-28 client: this round's answers and what
    /// its state is bound to.
    pub first: Option<(Arc<elicit::Rounds>, Vec<u8>)>,
}

/// Starts the call as a task of `owner` and answers its handle; an `ask_first` call whose
/// first questions are not answered yet answers them instead, and no task remains.
pub(super) async fn start(
    state: &Arc<State>,
    owner: &str,
    timeout: Duration,
    run: Run,
) -> Result<CallToolResponse, ErrorData> {
    let Run {
        mut context,
        name,
        arguments,
        pinned,
        capabilities,
        first,
    } = run;
    // The run outlives this request: it takes the request's ids with it.
    if let Some(ids) = crate::http::log::RequestIds::current() {
        context.request_id.get_or_insert(ids.request_id);
        context.traceparent.get_or_insert(ids.traceparent);
    }
    let (told, verdict) = tokio::sync::oneshot::channel();
    let (end, mut ended) = tokio::sync::oneshot::channel::<()>();
    let first = first.map(|(rounds, binding)| {
        let first = Arc::new(First {
            rounds,
            decided: Mutex::default(),
            tell: Mutex::new(Some(told)),
        });
        (first, binding)
    });
    let run_state = Arc::clone(state);
    let run_first = first.as_ref().map(|(first, _)| Arc::clone(first));
    let run = move |id: String| async move {
        context.ask = Some(Arc::new(Asker {
            tasks: Arc::clone(&run_state.tasks),
            id,
            capabilities,
            first: run_first,
        }));
        let doorway = super::approval::Doorway::default();
        let state =
            outcome(super::handler::call(&run_state, context, name, arguments, pinned.as_ref(), true, doorway).await);
        let _ = end.send(());
        state
    };
    let (id, record) = match state.tasks.start(owner, timeout, run).await {
        Ok(started) => started,
        Err(Refused::Busy { max }) => {
            return Ok(super::convert::failure(format!(
                "The server is running its most tasks at once ({max}); this call did not start. \
                 This may succeed if retried after 1000 ms."
            ))
            .into());
        }
        Err(Refused::Unavailable) => return Err(unavailable()),
    };
    if let Some((first, binding)) = first {
        let mut over = false;
        let verdict = tokio::select! {
            biased;
            told = verdict => told.unwrap_or(Verdict::Task),
            _ = &mut ended => { over = true; Verdict::Task }
            () = tokio::time::sleep(FIRST_QUESTIONS) => Verdict::Task,
        };
        if first.decide(verdict) == Verdict::Rounds {
            // Nothing that acts runs before every question is answered (docs/asking.md): the
            // run ends with the questions open.
            if !over {
                let _ = ended.await;
            }
            state.tasks.discard(&id).await;
            return match first.rounds.input_required(&state.seal, &binding) {
                Some(asked) => Ok(CallToolResponse::InputRequired(asked)),
                None => Err(ErrorData::internal_error(
                    "the call stopped for answers it did not ask for; call it again",
                    None,
                )),
            };
        }
    }
    Ok(CallToolResponse::Task(CreateTaskResult::new(task(&id, &record))))
}

/// What a task's run came to, as its record keeps it.
fn outcome(answered: Result<CallToolResponse, ErrorData>) -> tasks::State {
    match answered {
        Ok(CallToolResponse::Complete(result)) => match serde_json::to_value(result) {
            Ok(result) => tasks::State::Completed { result },
            Err(e) => tasks::State::Failed {
                error: serde_json::json!({"code": -32603, "message": format!("the result could not be written: {e}")}),
            },
        },
        // A confirmation, which a task does not carry yet (docs/tasks.md).
        Ok(_) => tasks::State::Failed {
            error: serde_json::json!({"code": -32603, "message": "the tool needs a confirmation, which a task cannot carry yet; call it without running it as a task"}),
        },
        Err(error) => tasks::State::Failed {
            error: serde_json::to_value(error).unwrap_or_default(),
        },
    }
}

/// Whether an `ask_first` call's first questions are asked as an input-required result, or
/// through the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Rounds,
    Task,
}

/// The first questions of an `ask_first` call: answered from the request's rounds until the
/// call is decided, by its first question (unanswered: [`Verdict::Rounds`]; answered:
/// [`Verdict::Task`]).
#[derive(Debug)]
struct First {
    rounds: Arc<elicit::Rounds>,
    decided: Mutex<Option<Verdict>>,
    tell: Mutex<Option<tokio::sync::oneshot::Sender<Verdict>>>,
}

impl First {
    /// Decides `verdict` unless decided already; answers the decision.
    fn decide(&self, verdict: Verdict) -> Verdict {
        let mut decided = self.decided.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(decided) = *decided {
            return decided;
        }
        *decided = Some(verdict);
        if let Some(tell) = self.tell.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = tell.send(verdict);
        }
        verdict
    }
}

/// How a task's questions reach its client: put on the task, for `tasks/get` to show and
/// `tasks/update` to answer.
#[derive(Debug)]
struct Asker {
    tasks: Arc<Tasks>,
    id: String,
    capabilities: ClientCapabilities,
    first: Option<Arc<First>>,
}

impl Ask for Asker {
    fn ask<'a>(&'a self, key: &'a str, question: Question) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let capability = question.capability();
            if !elicit::declared(&self.capabilities, capability) {
                return Reply::Unsupported(capability);
            }
            if let Some(first) = &self.first {
                match first.rounds.ask(key, question.clone()).await {
                    Reply::Answer(answer) => {
                        first.decide(Verdict::Task);
                        return Reply::Answer(answer);
                    }
                    Reply::Suspend => {
                        if first.decide(Verdict::Rounds) == Verdict::Rounds {
                            return Reply::Suspend;
                        }
                    }
                    other @ (Reply::Unsupported(_) | Reply::Failed(_)) => return other,
                }
            }
            let request = elicit::request(&question);
            loop {
                match self.tasks.ask(&self.id, key, &request).await {
                    Ok(answer) if elicit::fits(&question, &answer) => return Reply::Answer(answer),
                    // Not an answer to this question (`update` checks the shape): asked again.
                    Ok(_) => {}
                    Err(AskFailed::Ended) => return Reply::Failed("the task ended while it waited".to_owned()),
                    Err(AskFailed::Unavailable) => {
                        return Reply::Failed("the task store did not answer, so the question was not put".to_owned());
                    }
                }
            }
        })
    }
}

/// The record of the caller's task `id`, or the error that says why there is none.
async fn record(state: &State, owner: &str, id: &str) -> Result<Record, ErrorData> {
    state
        .tasks
        .get(owner, id)
        .await
        .map_err(|_| unavailable())?
        .ok_or_else(|| unknown(id))
}

/// `tasks/get`: the task with what it has come to.
pub(super) async fn get(state: &State, owner: &str, id: &str) -> Result<GetTaskResult, ErrorData> {
    Ok(GetTaskResult::new(detailed(id, &record(state, owner, id).await?)))
}

/// `tasks/cancel`: stops the task unless it has ended.
pub(super) async fn cancel(state: &State, owner: &str, id: &str) -> Result<(), ErrorData> {
    state
        .tasks
        .cancel(owner, id)
        .await
        .map_err(|_| unavailable())?
        .ok_or_else(|| unknown(id))
}

/// `tasks/update`: delivers `responses` to the task's open questions; answers to input it did
/// not ask for (or no longer waits for) are ignored, as SEP-2663 says of unknown keys. An
/// answer of the wrong shape for its question is refused, and nothing is delivered.
pub(super) async fn update(state: &State, owner: &str, id: &str, responses: &InputResponses) -> Result<(), ErrorData> {
    let record = record(state, owner, id).await?;
    if let tasks::State::InputRequired { input_requests } = &record.state {
        for (key, answer) in responses {
            let Some(asked) = input_requests.get(key) else {
                continue;
            };
            let method = asked.get("method").and_then(serde_json::Value::as_str).unwrap_or("");
            if let Err(needs) = elicit::answers(method, answer) {
                let shown: String = key.chars().take(64).collect();
                return Err(ErrorData::invalid_params(
                    format!("inputResponses.{shown} does not answer its {method}: {needs}; nothing was delivered"),
                    None,
                ));
            }
        }
    }
    state
        .tasks
        .answer(owner, id, responses)
        .await
        .map_err(|_| unavailable())?
        .map(|_| ())
        .ok_or_else(|| unknown(id))
}

/// The wire `Task` of a record.
fn task(id: &str, record: &Record) -> Task {
    let status = match &record.state {
        tasks::State::Working => TaskStatus::Working,
        tasks::State::InputRequired { .. } => TaskStatus::InputRequired,
        tasks::State::Completed { .. } => TaskStatus::Completed,
        tasks::State::Failed { .. } => TaskStatus::Failed,
        tasks::State::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(id, status, &record.created_at, &record.updated_at).with_ttl_ms(record.ttl_ms);
    if !record.state.is_terminal() {
        task = task.with_poll_interval_ms(POLL_INTERVAL_MS);
    }
    task
}

/// The wire `DetailedTask` of a record: its result or error inlined.
fn detailed(id: &str, record: &Record) -> DetailedTask {
    let object = |value: &serde_json::Value| value.as_object().cloned().unwrap_or_default();
    let payload = match &record.state {
        tasks::State::Working => TaskPayload::Working,
        tasks::State::InputRequired { input_requests } => TaskPayload::InputRequired {
            input_requests: input_requests
                .iter()
                .filter_map(
                    |(key, request)| match serde_json::from_value::<InputRequest>(request.clone()) {
                        Ok(request) => Some((key.clone(), request)),
                        Err(e) => {
                            tracing::error!(key, error = %e, "a task's question is not an MCP input request");
                            None
                        }
                    },
                )
                .collect(),
        },
        tasks::State::Completed { result } => TaskPayload::Completed { result: object(result) },
        tasks::State::Failed { error } => TaskPayload::Failed { error: object(error) },
        tasks::State::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(task(id, record), payload)
}

/// A task id this caller has no task under (SEP-2663: -32602).
fn unknown(id: &str) -> ErrorData {
    let shown: String = id.chars().take(64).collect();
    ErrorData::invalid_params(
        format!("no task `{shown}` of yours is kept here: it never existed, is another caller's, or has expired"),
        None,
    )
}

/// The shared store did not answer.
fn unavailable() -> ErrorData {
    ErrorData::internal_error(
        "the task store did not answer; try again in a moment",
        Some(serde_json::json!({"retryAfterMs": 1000})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_as_the_extension_writes_it() {
        let mut record = Record {
            owner: "anonymous".to_owned(),
            created_at: "2026-11-26T10:00:00+00:00".to_owned(),
            updated_at: "2026-11-26T10:00:01+00:00".to_owned(),
            ttl_ms: 60_000,
            state: tasks::State::Working,
        };
        let working = serde_json::to_value(CreateTaskResult::new(task("t1", &record))).expect("json");
        assert_eq!(working["resultType"], "task");
        assert_eq!(working["status"], "working");
        assert_eq!(working["ttlMs"], 60_000);
        assert_eq!(working["pollIntervalMs"], POLL_INTERVAL_MS);
        assert!(working.get("task").is_none() && working.get("ttl").is_none());
        record.state = tasks::State::Failed {
            error: serde_json::json!({"code": -32603, "message": "broke"}),
        };
        let failed = serde_json::to_value(GetTaskResult::new(detailed("t1", &record))).expect("json");
        assert_eq!(failed["resultType"], "complete");
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["error"]["code"], -32603);
        assert!(failed.get("result").is_none() && failed.get("pollIntervalMs").is_none());
    }
}
