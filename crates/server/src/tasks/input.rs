//! Questions a task's run asks mid-task, and their answers (docs/tasks.md, "Asking mid-task").
//!
//! A run puts a question under a key ([`Tasks::ask`]) and waits; the task then reads as
//! `input_required` with its open questions. [`Tasks::answer`] (the caller's `tasks/update`, on
//! any replica) takes each question it answers off the open ones and leaves the answer for the
//! run, which takes it and goes on. The task reads as working again once no question is open.
//!
//! With the shared store, a task's questions and answers live beside its record, in a hash of
//! `q:KEY` (an open question), `a:KEY` (an answer not yet taken) and `t` (when they last
//! changed), expiring with the record; scripts change it atomically, so an answer and a cancel
//! or a second answer that race settle once. The run on its replica is woken at once by an
//! answer that reaches that replica, and looks in the store every [`ANSWER_CHECK`] for one that
//! reached another.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Record, State, Store, Tasks, key, now};
use crate::shared::{Shared, Unavailable};

/// How often a run waiting for answers looks in the shared store for one given elsewhere.
const ANSWER_CHECK: Duration = Duration::from_millis(250);

/// Why a question could not be put, or its answer never came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskFailed {
    /// The task has ended (cancelled) or is no longer kept.
    Ended,
    /// The shared store did not answer when the question was put.
    Unavailable,
}

/// A task's questions and answers, with records in memory.
#[derive(Debug, Default)]
pub(super) struct Io {
    /// Open questions, by key.
    asked: BTreeMap<String, Value>,
    /// Answers the run has not taken yet, by key.
    answers: BTreeMap<String, Value>,
    /// When the questions last changed (RFC 3339).
    updated: Option<String>,
}

impl Io {
    /// `record` as it reads with these questions: `input_required` while one is open.
    pub(super) fn view(&self, record: Record) -> Record {
        view(record, &self.asked, self.updated.as_deref())
    }
}

fn view(mut record: Record, asked: &BTreeMap<String, Value>, updated: Option<&str>) -> Record {
    if record.state.is_terminal() {
        return record;
    }
    if !asked.is_empty() {
        record.state = State::InputRequired {
            input_requests: asked.clone(),
        };
    }
    if let Some(updated) = updated
        && updated > record.updated_at.as_str()
    {
        updated.clone_into(&mut record.updated_at);
    }
    record
}

/// The shared store's scripts for tasks.
pub(super) struct Scripts {
    /// KEYS[1] the record; ARGV[1] the new record. Writes it only over a working one, keeping
    /// the expiry; answers 1 when written.
    pub finish: redis::Script,
    /// KEYS[1] the record, KEYS[2] its questions; ARGV[1] the key, ARGV[2] the question (empty:
    /// only take an answer), ARGV[3] now. Answers `{ended}`, `{answered, ANSWER}` (taken) or
    /// `{waiting}` (the question put, when given).
    ask: redis::Script,
    /// KEYS as `ask`; ARGV[1] now, then pairs of key and answer. Each answer to an open question
    /// closes it and waits for the run. Answers how many were taken, -1 for no record.
    answer: redis::Script,
    /// KEYS as `ask`. Answers the record then its questions' fields and values, or nothing.
    read: redis::Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Self {
            finish: redis::Script::new(
                r"
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if cjson.decode(v).status ~= 'working' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 1",
            ),
            ask: redis::Script::new(
                r"
local v = redis.call('GET', KEYS[1])
if not v or cjson.decode(v).status ~= 'working' then return {'ended'} end
local a = redis.call('HGET', KEYS[2], 'a:' .. ARGV[1])
if a then
  redis.call('HDEL', KEYS[2], 'a:' .. ARGV[1])
  return {'answered', a}
end
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'q:' .. ARGV[1], ARGV[2], 't', ARGV[3])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
end
return {'waiting'}",
            ),
            answer: redis::Script::new(
                r"
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
if cjson.decode(v).status ~= 'working' then return 0 end
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('HDEL', KEYS[2], 'q:' .. ARGV[i]) == 1 then
    redis.call('HSET', KEYS[2], 'a:' .. ARGV[i], ARGV[i + 1])
    n = n + 1
  end
end
if n > 0 then redis.call('HSET', KEYS[2], 't', ARGV[1]) end
return n",
            ),
            read: redis::Script::new(
                r"
local v = redis.call('GET', KEYS[1])
if not v then return {} end
local io = redis.call('HGETALL', KEYS[2])
table.insert(io, 1, v)
return io",
            ),
        }
    }
}

/// The store key of task `id`'s questions and answers.
fn io_key(id: &str) -> String {
    format!("toolhost:task:{id}:io")
}

/// The record of task `id` in the shared store, as it reads with its questions.
pub(super) async fn read_shared(shared: &Shared, scripts: &Scripts, id: &str) -> Result<Option<Record>, Unavailable> {
    let mut invocation = scripts.read.prepare_invoke();
    invocation.key(key(id)).key(io_key(id));
    let fields: Vec<String> = shared.script(invocation).await?;
    let mut fields = fields.into_iter();
    let Some(record) = fields.next().and_then(|t| serde_json::from_str::<Record>(&t).ok()) else {
        return Ok(None);
    };
    let mut asked = BTreeMap::new();
    let mut updated = None;
    while let (Some(field), Some(value)) = (fields.next(), fields.next()) {
        if let Some(question) = field.strip_prefix("q:") {
            asked.insert(question.to_owned(), serde_json::from_str(&value).unwrap_or(Value::Null));
        } else if field == "t" {
            updated = Some(value);
        }
    }
    Ok(Some(view(record, &asked, updated.as_deref())))
}

impl Tasks {
    /// Puts `question` (as its protocol writes it) to the caller of task `id` under `key`, and
    /// waits for the answer: the task reads as `input_required` meanwhile. Asking again under
    /// a key whose answer was taken puts the question again (an answer of the wrong shape).
    pub async fn ask(&self, id: &str, key: &str, question: &Value) -> Result<Value, AskFailed> {
        let notify = Arc::clone(
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(id.to_owned())
                .or_default(),
        );
        let question = question.to_string();
        let mut put = Some(question.as_str());
        loop {
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.exchange(id, key, put).await {
                Ok(Some(answer)) => return Ok(answer),
                Ok(None) => put = None,
                Err(AskFailed::Unavailable) if put.is_none() => {
                    // The question is out; the store may answer again before the call's timeout.
                }
                Err(failed) => return Err(failed),
            }
            match self.store {
                Store::Memory(_) => notified.await,
                Store::Shared { .. } => {
                    tokio::select! {
                        () = notified => {}
                        () = tokio::time::sleep(ANSWER_CHECK) => {}
                    }
                }
            }
        }
    }

    /// Takes the answer to `key` of task `id` if one came, else puts `question` when given.
    async fn exchange(&self, id: &str, key: &str, question: Option<&str>) -> Result<Option<Value>, AskFailed> {
        match &self.store {
            Store::Memory(records) => {
                let mut records = records.lock().unwrap_or_else(PoisonError::into_inner);
                let Some((_, record, io)) = records
                    .get_mut(id)
                    .filter(|(expires, record, _)| *expires > Instant::now() && !record.state.is_terminal())
                else {
                    return Err(AskFailed::Ended);
                };
                debug_assert!(!record.state.is_terminal());
                if let Some(answer) = io.answers.remove(key) {
                    return Ok(Some(answer));
                }
                if let Some(question) = question {
                    io.asked
                        .insert(key.to_owned(), serde_json::from_str(question).unwrap_or(Value::Null));
                    io.updated = Some(now());
                }
                Ok(None)
            }
            Store::Shared { shared, scripts } => {
                let mut invocation = scripts.ask.prepare_invoke();
                invocation
                    .key(super::key(id))
                    .key(io_key(id))
                    .arg(key)
                    .arg(question.unwrap_or(""))
                    .arg(now());
                let answer: Vec<String> = shared
                    .script(invocation)
                    .await
                    .map_err(|Unavailable| AskFailed::Unavailable)?;
                match answer.first().map(String::as_str) {
                    Some("answered") => Ok(Some(
                        answer
                            .get(1)
                            .and_then(|t| serde_json::from_str(t).ok())
                            .unwrap_or(Value::Null),
                    )),
                    Some("waiting") => Ok(None),
                    _ => Err(AskFailed::Ended),
                }
            }
        }
    }

    /// Delivers `answers` to task `id` of `owner`: each answers the open question of its key,
    /// which closes; an answer to no open question is ignored. Answers how many were taken, or
    /// `None` when there is no such task of this caller.
    pub async fn answer(
        &self,
        owner: &str,
        id: &str,
        answers: &BTreeMap<String, Value>,
    ) -> Result<Option<usize>, Unavailable> {
        if self.get(owner, id).await?.is_none() {
            return Ok(None);
        }
        let taken = match &self.store {
            Store::Memory(records) => {
                let mut records = records.lock().unwrap_or_else(PoisonError::into_inner);
                let Some((_, record, io)) = records.get_mut(id) else {
                    return Ok(None);
                };
                if record.state.is_terminal() {
                    return Ok(Some(0));
                }
                let mut taken = 0;
                for (key, answer) in answers {
                    if io.asked.remove(key).is_some() {
                        io.answers.insert(key.clone(), answer.clone());
                        taken += 1;
                    }
                }
                if taken > 0 {
                    io.updated = Some(now());
                }
                taken
            }
            Store::Shared { shared, scripts } => {
                let mut invocation = scripts.answer.prepare_invoke();
                invocation.key(key(id)).key(io_key(id)).arg(now());
                for (key, answer) in answers {
                    invocation.arg(key).arg(answer.to_string());
                }
                let taken: i64 = shared.script(invocation).await?;
                if taken < 0 {
                    return Ok(None);
                }
                usize::try_from(taken).unwrap_or(0)
            }
        };
        if taken > 0 {
            let waiting = self
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(id)
                .cloned();
            if let Some(notify) = waiting {
                notify.notify_waiters();
            }
        }
        Ok(Some(taken))
    }

    /// Forgets task `id` before anyone learnt of it: a call that turned out to need answers
    /// before it could become a task (MCP's `ask_first`). Its run, if any, ends unrecorded.
    pub async fn discard(&self, id: &str) {
        match &self.store {
            Store::Memory(records) => {
                records.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
            }
            Store::Shared { shared, .. } => {
                let mut command = redis::cmd("DEL");
                command.arg(key(id)).arg(io_key(id));
                if shared.run::<()>(command).await.is_err() {
                    tracing::debug!(task = %id, "a discarded task's record stays until it expires: the store did not answer");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn settled(tasks: &Tasks, id: &str, open: usize) -> Record {
        for _ in 0..200 {
            let record = tasks.get("a", id).await.expect("memory").expect("kept");
            let asked = match &record.state {
                State::InputRequired { input_requests } => input_requests.len(),
                _ => 0,
            };
            if asked == open || record.state.is_terminal() {
                return record;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("task {id} never had {open} open questions");
    }

    #[tokio::test]
    async fn a_run_waits_for_each_answer_and_goes_on_where_it_waited() {
        let tasks = Arc::new(Tasks::in_memory(4, Duration::from_secs(60)));
        let asker = Arc::clone(&tasks);
        let (id, _) = tasks
            .start("a", Duration::from_secs(10), move |id| async move {
                let (q1, q2) = (json!({"q": 1}), json!({"q": 2}));
                let (one, two) = tokio::join!(asker.ask(&id, "one", &q1), asker.ask(&id, "two", &q2));
                State::Completed {
                    result: json!({"one": one.expect("answered"), "two": two.expect("answered")}),
                }
            })
            .await
            .expect("started");
        let asked = settled(&tasks, &id, 2).await;
        let State::InputRequired { input_requests } = &asked.state else {
            panic!("{asked:?}");
        };
        assert_eq!(input_requests["one"], json!({"q": 1}));
        // Another caller's answers reach nothing; an answer to no open question is ignored.
        let answers = BTreeMap::from([("one".to_owned(), json!("A")), ("zzz".to_owned(), json!(0))]);
        assert_eq!(tasks.answer("b", &id, &answers).await.expect("memory"), None);
        assert_eq!(tasks.answer("a", &id, &answers).await.expect("memory"), Some(1));
        let partly = settled(&tasks, &id, 1).await;
        let State::InputRequired { input_requests } = &partly.state else {
            panic!("{partly:?}");
        };
        assert_eq!(
            input_requests.keys().collect::<Vec<_>>(),
            ["two"],
            "the answered key is gone"
        );
        // An answer twice to one question counts once.
        assert_eq!(tasks.answer("a", &id, &answers).await.expect("memory"), Some(0));
        let answers = BTreeMap::from([("two".to_owned(), json!("B"))]);
        assert_eq!(tasks.answer("a", &id, &answers).await.expect("memory"), Some(1));
        let done = settled(&tasks, &id, usize::MAX).await;
        assert_eq!(
            done.state,
            State::Completed {
                result: json!({"one": "A", "two": "B"})
            }
        );
    }

    #[tokio::test]
    async fn a_cancelled_task_takes_no_answers_and_a_discarded_one_is_unknown() {
        let tasks = Arc::new(Tasks::in_memory(4, Duration::from_secs(60)));
        let asker = Arc::clone(&tasks);
        let (id, _) = tasks
            .start("a", Duration::from_secs(10), move |id| async move {
                let _ = asker.ask(&id, "one", &json!({})).await;
                State::Completed { result: json!({}) }
            })
            .await
            .expect("started");
        settled(&tasks, &id, 1).await;
        tasks.cancel("a", &id).await.expect("memory");
        let answers = BTreeMap::from([("one".to_owned(), json!("A"))]);
        assert_eq!(tasks.answer("a", &id, &answers).await.expect("memory"), Some(0));
        assert_eq!(
            tasks.get("a", &id).await.expect("memory").expect("kept").state,
            State::Cancelled
        );
        assert_eq!(tasks.exchange(&id, "one", None).await, Err(AskFailed::Ended));
        tasks.discard(&id).await;
        assert!(tasks.get("a", &id).await.expect("memory").is_none());
    }
}
