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
//!   empty acknowledgement, also for a task that has ended; `tasks/update` acknowledges (no
//!   catalog tool asks for input mid-task yet, so there is nothing to deliver).
//! - Another caller's task id, an expired one and a made-up one are all unknown: -32602.
//! - Rmcp answers `tasks/result` and `tasks/list` (removed by SEP-2663) with -32601, and gates
//!   the methods on the client's declaration.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use toolhost_core::{Access, CallContext, TaskSupport};

use crate::State;
use crate::tasks::{self, Record, Refused};

/// The interval we suggest between two `tasks/get` of a working task.
const POLL_INTERVAL_MS: u64 = 500;

/// The server's declaration of the extension, for `capabilities.extensions`.
pub(super) fn declare(capabilities: &mut rmcp::model::ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
}

/// How the tool `name` runs, as the caller with `access` sees it (a tool it may not see runs
/// as never a task: the call then answers as for an unknown tool).
pub(super) fn support(state: &State, name: &str, access: &Access) -> (TaskSupport, Duration) {
    let catalog = state.engine.catalog();
    match catalog.find_for(name, access) {
        Some(tool) => (tool.task, tool.latest().timeout),
        None => (TaskSupport::Never, Duration::ZERO),
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

/// Starts the call as a task of `owner` and answers its handle.
pub(super) async fn start(
    state: &Arc<State>,
    owner: &str,
    timeout: Duration,
    mut context: CallContext,
    name: String,
    arguments: Option<JsonObject>,
    pinned: Option<serde_json::Value>,
) -> Result<CallToolResponse, ErrorData> {
    // The run outlives this request: it takes the request's ids with it.
    if let Some(ids) = crate::http::log::RequestIds::current() {
        context.request_id.get_or_insert(ids.request_id);
        context.traceparent.get_or_insert(ids.traceparent);
    }
    let run_state = Arc::clone(state);
    let run = async move {
        let doorway = super::approval::Doorway::default();
        match super::handler::call(&run_state, context, name, arguments, pinned.as_ref(), true, doorway).await {
            Ok(CallToolResponse::Complete(result)) => match serde_json::to_value(result) {
                Ok(result) => tasks::State::Completed { result },
                Err(e) => tasks::State::Failed {
                    error: serde_json::json!({"code": -32603, "message": format!("the result could not be written: {e}")}),
                },
            },
            // A confirmation or a question, which a task does not carry yet (docs/tasks.md).
            Ok(_) => tasks::State::Failed {
                error: serde_json::json!({"code": -32603, "message": "the tool needs a confirmation or an answer from the client, which a task cannot carry yet; call it without running it as a task"}),
            },
            Err(error) => tasks::State::Failed {
                error: serde_json::to_value(error).unwrap_or_default(),
            },
        }
    };
    match state.tasks.start(owner, timeout, run).await {
        Ok((id, record)) => Ok(CallToolResponse::Task(CreateTaskResult::new(task(&id, &record)))),
        Err(Refused::Busy { max }) => Ok(super::convert::failure(format!(
            "The server is running its most tasks at once ({max}); this call did not start. \
             This may succeed if retried after 1000 ms."
        ))
        .into()),
        Err(Refused::Unavailable) => Err(unavailable()),
    }
}

/// `tasks/get`: the task with what it has come to.
pub(super) async fn get(state: &State, owner: &str, id: &str) -> Result<GetTaskResult, ErrorData> {
    let record = state
        .tasks
        .get(owner, id)
        .await
        .map_err(|_| unavailable())?
        .ok_or_else(|| unknown(id))?;
    Ok(GetTaskResult::new(detailed(id, &record)))
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

/// `tasks/update`: acknowledged for a known task; answers to input it did not ask for are
/// ignored, as SEP-2663 says of unknown keys.
pub(super) async fn update(state: &State, owner: &str, id: &str) -> Result<(), ErrorData> {
    get(state, owner, id).await.map(|_| ())
}

/// The wire `Task` of a record.
fn task(id: &str, record: &Record) -> Task {
    let status = match &record.state {
        tasks::State::Working => TaskStatus::Working,
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
