//! Calls that run as tasks (docs/tasks.md): started in the background, their state and result
//! kept for a bounded time, read by id by the caller who started them, and cancellable.
//!
//! Protocol-free: a task's result is whatever JSON its protocol wrote for it (MCP keeps its
//! `CallToolResult`), and its error a JSON-RPC-shaped object. Records live in the shared store
//! (`--state`, Redis) when there is one, so that any replica answers for a task, and in this
//! process's memory otherwise. The run itself lives on the replica that started it: a cancel
//! that reaches another replica marks the record, and the running replica, which looks at the
//! record about once a second, drops the run.
//!
//! - A task id is 122 random bits (UUID v4), and a task is bound to the caller who started it
//!   ([`crate::auth::Caller::id`]): another caller's id reads as unknown.
//! - At most `max_running` tasks run at once on a replica; one more is refused, retryably.
//! - A record is kept for the task's `ttl` from its creation (the tool's timeout plus the
//!   configured time to keep results), then forgotten.
//! - A finished state is written only over a working one, so a cancel and a finish that race
//!   settle on whichever came first, on every replica.
//! - A run may ask its caller's side questions mid-task ([`Tasks::ask`], `tasks/input.rs`): the
//!   task reads as `input_required` with the questions until every one is answered
//!   ([`Tasks::answer`], from any replica), and the run goes on from where it waited.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::shared::{Shared, Unavailable};

mod input;

pub use input::AskFailed;
use input::{Io, Scripts};

/// How often a running task looks for a cancel made on another replica.
const CANCEL_CHECK: Duration = Duration::from_secs(1);

/// A task as kept: who started it, when, for how long, and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The caller who started it ([`crate::auth::Caller::id`]); nobody else reads it.
    pub owner: String,
    /// RFC 3339 times of its creation and of its last change.
    pub created_at: String,
    pub updated_at: String,
    /// How long the record is kept from its creation, in milliseconds.
    pub ttl_ms: u64,
    /// Where it stands.
    #[serde(flatten)]
    pub state: State,
}

/// Where a task stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum State {
    /// Running.
    Working,
    /// Running, and waiting for answers: `input_requests` are the open questions, by key, each
    /// as its protocol wrote it. Never stored as such: a record is read so when questions wait.
    InputRequired { input_requests: BTreeMap<String, Value> },
    /// Ran to its end: `result` is what the protocol answers for the call (a tool error too).
    Completed { result: Value },
    /// Could not produce a result (a fault of the server): `error` is `{code, message}`.
    Failed { error: Value },
    /// Cancelled by its caller before it finished.
    Cancelled,
}

impl State {
    /// Whether the task has stopped.
    pub fn is_terminal(&self) -> bool {
        !matches!(self, Self::Working | Self::InputRequired { .. })
    }
}

/// Why a task was not started.
#[derive(Debug)]
pub enum Refused {
    /// `max_running` tasks run already.
    Busy { max: usize },
    /// The shared store did not answer, so the task could not be recorded.
    Unavailable,
}

/// The tasks of this replica, and the store of every replica's records.
pub struct Tasks {
    store: Store,
    /// Runs on this replica, by task id: dropping one stops it.
    running: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// Runs on this replica waiting for answers, by task id: woken when answers come here.
    waiting: Mutex<HashMap<String, Arc<tokio::sync::Notify>>>,
    count: Arc<AtomicUsize>,
    max_running: usize,
    keep: Duration,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("running", &self.count.load(Ordering::Relaxed))
            .field("max_running", &self.max_running)
            .finish_non_exhaustive()
    }
}

/// Where records are kept.
enum Store {
    Memory(Mutex<HashMap<String, (Instant, Record, Io)>>),
    Shared { shared: Shared, scripts: Box<Scripts> },
}

/// The store key of task `id`.
fn key(id: &str) -> String {
    format!("toolhost:task:{id}")
}

/// Now, as RFC 3339.
pub fn now() -> String {
    rmcp::task_manager::current_timestamp()
}

/// Decrements the running count when a run ends, however it ends.
struct Running(Arc<AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Tasks {
    /// Tasks kept in this process, at most `max_running` running at once, each result kept
    /// `keep` after its tool's timeout.
    pub fn in_memory(max_running: usize, keep: Duration) -> Self {
        Self::with(Store::Memory(Mutex::default()), max_running, keep)
    }

    /// Tasks whose records are in `shared`, so that every replica answers for them.
    pub fn in_shared(shared: Shared, max_running: usize, keep: Duration) -> Self {
        let scripts = Box::new(Scripts::new());
        Self::with(Store::Shared { shared, scripts }, max_running, keep)
    }

    fn with(store: Store, max_running: usize, keep: Duration) -> Self {
        Self {
            store,
            running: Mutex::default(),
            waiting: Mutex::default(),
            count: Arc::default(),
            max_running: max_running.max(1),
            keep,
        }
    }

    /// How many tasks run on this replica now.
    pub fn running(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Starts `run` (made with the new task's id) as a task of `owner` that may take up to
    /// `timeout`: records it as working (so it can be read as soon as this returns), then runs
    /// it in the background and records its end. Answers the new task's id and record.
    pub async fn start<F>(
        self: &Arc<Self>,
        owner: &str,
        timeout: Duration,
        run: impl FnOnce(String) -> F,
    ) -> Result<(String, Record), Refused>
    where
        F: Future<Output = State> + Send + 'static,
    {
        if self.count.fetch_add(1, Ordering::AcqRel) >= self.max_running {
            self.count.fetch_sub(1, Ordering::AcqRel);
            return Err(Refused::Busy { max: self.max_running });
        }
        let guard = Running(Arc::clone(&self.count));
        let id = uuid::Uuid::new_v4().simple().to_string();
        let created = now();
        let record = Record {
            owner: owner.to_owned(),
            created_at: created.clone(),
            updated_at: created,
            ttl_ms: u64::try_from((timeout + self.keep).as_millis()).unwrap_or(u64::MAX),
            state: State::Working,
        };
        self.put(&id, &record)
            .await
            .map_err(|Unavailable| Refused::Unavailable)?;
        let run = run(id.clone());
        let tasks = Arc::clone(self);
        let task_id = id.clone();
        let mut running = self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let handle = tokio::spawn(async move {
            let _guard = guard;
            let state = tokio::select! {
                state = run => Some(state),
                () = tasks.cancelled_elsewhere(&task_id) => None,
            };
            if let Some(state) = state {
                tasks.finish(&task_id, state).await;
            }
            tasks.forget(&task_id);
        });
        // A run that panicked is a failed task, not a working one forever.
        let watcher = Arc::clone(self);
        let watched = id.clone();
        let abort = handle.abort_handle();
        tokio::spawn(async move {
            if let Err(e) = handle.await
                && e.is_panic()
            {
                tracing::error!(task = %watched, "a task's run panicked");
                let error =
                    serde_json::json!({"code": -32603, "message": "the task failed inside the server (logged)"});
                watcher.finish(&watched, State::Failed { error }).await;
                watcher.forget(&watched);
            }
        });
        running.insert(id.clone(), abort);
        drop(running);
        Ok((id, record))
    }

    /// The record of task `id`, when `owner` started it and it is still kept.
    pub async fn get(&self, owner: &str, id: &str) -> Result<Option<Record>, Unavailable> {
        Ok(self.read(id).await?.filter(|r| r.owner == owner))
    }

    /// Cancels task `id` of `owner`: marks it cancelled unless it has ended, and stops its run
    /// (here at once, on another replica within about a second). `None` when there is no such
    /// task of this caller.
    pub async fn cancel(&self, owner: &str, id: &str) -> Result<Option<()>, Unavailable> {
        if self.get(owner, id).await?.is_none() {
            return Ok(None);
        }
        self.finish(id, State::Cancelled).await;
        let handle = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        if let Some(handle) = handle {
            handle.abort();
        }
        Ok(Some(()))
    }

    /// Writes `state` as the end of task `id`, unless it has ended already.
    async fn finish(&self, id: &str, state: State) {
        match &self.store {
            Store::Memory(records) => {
                let mut records = records.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if let Some((_, record, _)) = records.get_mut(id)
                    && !record.state.is_terminal()
                {
                    record.state = state;
                    record.updated_at = now();
                }
            }
            Store::Shared { shared, scripts } => {
                let mut record = match self.read(id).await {
                    Ok(Some(record)) => record,
                    // Expired, or discarded before anyone learnt of it (`input.rs`).
                    Ok(None) => return,
                    Err(Unavailable) => {
                        tracing::warn!(task = %id, "a task's end could not be recorded: the store did not answer");
                        return;
                    }
                };
                record.state = state;
                record.updated_at = now();
                let Ok(text) = serde_json::to_string(&record) else {
                    return;
                };
                let mut invocation = scripts.finish.prepare_invoke();
                invocation.key(key(id)).arg(text);
                if shared.script::<i64>(invocation).await.is_err() {
                    tracing::warn!(task = %id, "a task's end could not be recorded: the store did not answer");
                }
            }
        }
    }

    /// Completes when task `id` is marked ended by someone else (a cancel on another replica);
    /// never, with records in memory (a cancel here aborts the run itself).
    async fn cancelled_elsewhere(&self, id: &str) {
        if matches!(self.store, Store::Memory(_)) {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(CANCEL_CHECK).await;
            if let Ok(Some(record)) = self.read(id).await
                && record.state.is_terminal()
            {
                return;
            }
        }
    }

    fn forget(&self, id: &str) {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
    }

    async fn put(&self, id: &str, record: &Record) -> Result<(), Unavailable> {
        let ttl = Duration::from_millis(record.ttl_ms);
        match &self.store {
            Store::Memory(records) => {
                let mut records = records.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let now = Instant::now();
                // Expired records go as new ones come: the table holds at most what the last
                // `ttl` started.
                records.retain(|_, (expires, _, _)| *expires > now);
                records.insert(id.to_owned(), (now + ttl, record.clone(), Io::default()));
                Ok(())
            }
            Store::Shared { shared, .. } => {
                let text = serde_json::to_string(record).map_err(|_| Unavailable)?;
                let mut command = redis::cmd("SET");
                command.arg(key(id)).arg(text).arg("PX").arg(record.ttl_ms.max(1));
                shared.run::<()>(command).await
            }
        }
    }

    /// The record of task `id` as it reads: `input_required` while questions wait.
    async fn read(&self, id: &str) -> Result<Option<Record>, Unavailable> {
        match &self.store {
            Store::Memory(records) => {
                let records = records.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                Ok(records
                    .get(id)
                    .filter(|(expires, _, _)| *expires > Instant::now())
                    .map(|(_, record, io)| io.view(record.clone())))
            }
            Store::Shared { shared, scripts } => input::read_shared(shared, scripts, id).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_is_read_by_its_owner_alone_and_settles_once() {
        let tasks = Arc::new(Tasks::in_memory(1, Duration::from_secs(60)));
        let (id, record) = tasks
            .start("key:a", Duration::from_secs(1), |_| async {
                State::Completed {
                    result: serde_json::json!({"ok": true}),
                }
            })
            .await
            .expect("started");
        assert_eq!(record.state, State::Working);
        assert!(
            tasks.get("key:b", &id).await.expect("memory").is_none(),
            "another caller"
        );
        for _ in 0..100 {
            if tasks
                .get("key:a", &id)
                .await
                .expect("memory")
                .expect("kept")
                .state
                .is_terminal()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let done = tasks.get("key:a", &id).await.expect("memory").expect("kept");
        assert!(matches!(done.state, State::Completed { .. }), "{done:?}");
        // A cancel after the end changes nothing.
        assert!(tasks.cancel("key:a", &id).await.expect("memory").is_some());
        assert!(matches!(
            tasks.get("key:a", &id).await.expect("memory").expect("kept").state,
            State::Completed { .. }
        ));
        assert!(tasks.cancel("key:b", &id).await.expect("memory").is_none());
    }

    #[tokio::test]
    async fn the_cap_refuses_one_more_and_a_cancel_frees_its_place() {
        let tasks = Arc::new(Tasks::in_memory(1, Duration::from_secs(60)));
        let (id, _) = tasks
            .start("a", Duration::from_secs(60), |_| std::future::pending())
            .await
            .expect("started");
        let refused = tasks
            .start("a", Duration::from_secs(60), |_| std::future::pending())
            .await;
        assert!(matches!(refused, Err(Refused::Busy { max: 1 })), "{refused:?}");
        tasks.cancel("a", &id).await.expect("memory");
        assert_eq!(
            tasks.get("a", &id).await.expect("memory").expect("kept").state,
            State::Cancelled
        );
        for _ in 0..100 {
            if tasks.running() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(tasks.running(), 0, "the dropped run gave its place back");
        assert!(
            tasks
                .start("a", Duration::from_secs(60), |_| std::future::pending())
                .await
                .is_ok()
        );
    }
}
