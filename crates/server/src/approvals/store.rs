//! Where confirmation records live: in memory (one replica), or in the shared store (Redis),
//! where every transition is one script, so `approved → consuming` happens once across the
//! fleet however many retries race for it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use toolhost_core::BoxFuture;

use super::record::{Entry, Record, Status};
use crate::shared::{Shared, Unavailable};

/// How many records the listing keeps (newest first).
const RECENT: usize = 1000;

/// What a transition writes beside the new status.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// A new expiry (approved: the approved-but-unused lifetime starts).
    pub expires_ms: Option<u64>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// When.
    pub decided_ms: Option<u64>,
    /// The stored outcome (`consumed`), as JSON.
    pub outcome: Option<String>,
    /// A signed audit record of this transition (field name, JWS).
    pub evidence: Option<(&'static str, String)>,
}

/// A record store: every method answers `Err(Unavailable)` when the store cannot be reached,
/// and the gate then refuses to run (it fails closed).
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Keeps a new pending record for `keep` and indexes it by its binding.
    fn create<'a>(
        &'a self,
        record: &'a Record,
        expires_ms: u64,
        keep: Duration,
    ) -> BoxFuture<'a, Result<(), Unavailable>>;

    /// The record, with where it stands now (a lapsed one reads as expired).
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Entry>, Unavailable>>;

    /// Moves the record from `from` to `to` if it is in `from` and has not lapsed (a lapsed
    /// one becomes expired): whether it moved.
    fn transition<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, Unavailable>>;

    /// The id of the newest record with this binding key.
    fn by_binding<'a>(&'a self, binding: &'a str) -> BoxFuture<'a, Result<Option<String>, Unavailable>>;

    /// The newest records, at most `limit`.
    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Entry>, Unavailable>>;
}

/// One replica's records.
#[derive(Debug, Default)]
pub struct Memory {
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    entries: HashMap<String, (Entry, std::time::Instant)>,
    bindings: HashMap<String, String>,
    order: std::collections::VecDeque<String>,
}

impl Memory {
    fn locked(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Store for Memory {
    fn create<'a>(
        &'a self,
        record: &'a Record,
        expires_ms: u64,
        keep: Duration,
    ) -> BoxFuture<'a, Result<(), Unavailable>> {
        Box::pin(async move {
            let mut inner = self.locked();
            let now = std::time::Instant::now();
            inner.entries.retain(|_, (_, until)| *until > now);
            let entry = Entry::pending(record.clone(), expires_ms);
            inner.entries.insert(record.id.clone(), (entry, now + keep));
            inner.bindings.insert(record.binding.clone(), record.id.clone());
            inner.order.push_front(record.id.clone());
            inner.order.truncate(RECENT);
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Entry>, Unavailable>> {
        Box::pin(async move {
            let inner = self.locked();
            let now = toolhost_core::unix_ms();
            Ok(inner.entries.get(id).map(|(e, _)| e.clone().lapsed(now)))
        })
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, Unavailable>> {
        Box::pin(async move {
            let mut inner = self.locked();
            let Some((entry, _)) = inner.entries.get_mut(id) else {
                return Ok(false);
            };
            if entry.status != from {
                return Ok(false);
            }
            if from.lapses() && now_ms >= entry.expires_ms {
                entry.status = Status::Expired;
                return Ok(false);
            }
            entry.status = to;
            entry.apply(change);
            Ok(true)
        })
    }

    fn by_binding<'a>(&'a self, binding: &'a str) -> BoxFuture<'a, Result<Option<String>, Unavailable>> {
        Box::pin(async move { Ok(self.locked().bindings.get(binding).cloned()) })
    }

    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Entry>, Unavailable>> {
        Box::pin(async move {
            let inner = self.locked();
            let now = toolhost_core::unix_ms();
            Ok(inner
                .order
                .iter()
                .filter_map(|id| inner.entries.get(id))
                .take(limit)
                .map(|(e, _)| e.clone().lapsed(now))
                .collect())
        })
    }
}

/// Records in the shared store: a hash per record (`record` the immutable JSON, beside its
/// `status`, `expires`, `decided_by`, `decided_at`, `outcome`), a key per binding, and a sorted
/// set of ids by creation for the listing.
#[derive(Debug)]
pub struct Redis {
    shared: Shared,
    transition: redis::Script,
}

/// KEYS[1] the record; ARGV from, to, now (ms), then field/value pairs to set. Answers 1 when
/// it moved, 0 when not (absent, another status, or lapsed: then marked expired).
const TRANSITION: &str = r"
local status = redis.call('HGET', KEYS[1], 'status')
if not status or status ~= ARGV[1] then return 0 end
local expires = tonumber(redis.call('HGET', KEYS[1], 'expires'))
if (status == 'pending' or status == 'approved') and tonumber(ARGV[3]) >= expires then
  redis.call('HSET', KEYS[1], 'status', 'expired')
  return 0
end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1";

const INDEX: &str = "toolhost:approvals";

fn key(id: &str) -> String {
    format!("toolhost:approval:{id}")
}

fn binding_key(binding: &str) -> String {
    format!("toolhost:approval-binding:{binding}")
}

impl Redis {
    /// Records in `shared`.
    pub fn new(shared: Shared) -> Self {
        Self {
            shared,
            transition: redis::Script::new(TRANSITION),
        }
    }
}

impl Store for Redis {
    fn create<'a>(
        &'a self,
        record: &'a Record,
        expires_ms: u64,
        keep: Duration,
    ) -> BoxFuture<'a, Result<(), Unavailable>> {
        Box::pin(async move {
            let json = serde_json::to_string(record).unwrap_or_default();
            let keep_ms = keep.as_millis().max(1) as u64;
            let mut pipeline = redis::pipe();
            pipeline
                .atomic()
                .hset_multiple(
                    key(&record.id),
                    &[
                        ("record", json),
                        ("status", Status::Pending.as_str().to_owned()),
                        ("expires", expires_ms.to_string()),
                    ],
                )
                .ignore()
                .pexpire(key(&record.id), keep_ms as i64)
                .ignore()
                .set_ex(binding_key(&record.binding), &record.id, keep.as_secs().max(1))
                .ignore()
                .zadd(INDEX, &record.id, record.created_ms)
                .ignore()
                .zremrangebyrank(INDEX, 0, -(RECENT as isize) - 1)
                .ignore();
            self.shared.pipeline(&pipeline, crate::shared::COMMAND_TIMEOUT).await
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Entry>, Unavailable>> {
        Box::pin(async move {
            let fields: HashMap<String, String> = self.shared.run(redis::Cmd::hgetall(key(id))).await?;
            Ok(Entry::of_fields(&fields).map(|e| e.lapsed(toolhost_core::unix_ms())))
        })
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, Unavailable>> {
        Box::pin(async move {
            let mut invocation = self.transition.prepare_invoke();
            invocation.key(key(id)).arg(from.as_str()).arg(to.as_str()).arg(now_ms);
            for (field, value) in change.fields() {
                invocation.arg(field).arg(value);
            }
            let moved: i64 = self.shared.script(invocation).await?;
            Ok(moved == 1)
        })
    }

    fn by_binding<'a>(&'a self, binding: &'a str) -> BoxFuture<'a, Result<Option<String>, Unavailable>> {
        Box::pin(async move { self.shared.run(redis::Cmd::get(binding_key(binding))).await })
    }

    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Entry>, Unavailable>> {
        Box::pin(async move {
            let ids: Vec<String> = self
                .shared
                .run(redis::Cmd::zrevrange(INDEX, 0, limit.saturating_sub(1) as isize))
                .await?;
            let mut entries = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(entry) = self.get(&id).await? {
                    entries.push(entry);
                }
            }
            Ok(entries)
        })
    }
}

impl Change {
    /// The hash fields this change sets.
    fn fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = Vec::new();
        if let Some(ms) = self.expires_ms {
            fields.push(("expires", ms.to_string()));
        }
        if let Some(who) = &self.decided_by {
            fields.push(("decided_by", who.clone()));
        }
        if let Some(ms) = self.decided_ms {
            fields.push(("decided_at", ms.to_string()));
        }
        if let Some(outcome) = &self.outcome {
            fields.push(("outcome", outcome.clone()));
        }
        if let Some((field, jws)) = &self.evidence {
            fields.push((field, jws.clone()));
        }
        fields
    }
}
