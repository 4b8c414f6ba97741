//! Where confirmation records live: in memory (one replica), or in the shared store (Redis),
//! where every transition is one script, so `approved → consuming` happens once across the
//! fleet however many retries race for it.
//!
//! What a human typed for `source: human` inputs is kept apart from the record, sealed
//! ([`super::vault::Vault`]), only while the approval waits: it is written by the approving
//! transition, handed to the call that wins `approved → consuming` and deleted by that same
//! step, deleted by any other move out of `approved`, and lapses with the approval (a Redis
//! key of its own with the approval's expiry).

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
    /// The human's values, sealed, kept until [`Change::expires_ms`] (only on `→ approved`).
    pub human: Option<String>,
    /// The keyed hashes of the human's values (JSON), for the audit records.
    pub fingerprints: Option<String>,
}

/// What a transition did.
#[derive(Debug, PartialEq, Eq)]
pub enum Shift {
    /// The record was not in the expected state (absent, another status, or lapsed).
    Stayed,
    /// It moved; `released` is the sealed human values when it moved out of `approved` (the
    /// store no longer has them).
    Moved { released: Option<String> },
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
    /// one becomes expired), keeping or releasing the human's sealed values as the module says.
    fn shift<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Shift, Unavailable>>;

    /// [`Store::shift`], saying only whether it moved.
    fn transition<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, Unavailable>> {
        Box::pin(async move {
            let shift = self.shift(id, from, to, change, now_ms).await?;
            Ok(matches!(shift, Shift::Moved { .. }))
        })
    }

    /// Whether the store holds human values for the record `id` (tests, `toolhost approvals`).
    fn holds_human<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, Unavailable>>;

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
    /// Sealed human values by record id, with when they lapse (ms since the epoch).
    human: HashMap<String, (String, u64)>,
}

impl MemoryInner {
    /// Forgets what has lapsed: records past their keep, human values past their approval.
    fn sweep(&mut self, now_ms: u64) {
        let now = std::time::Instant::now();
        self.entries.retain(|_, (_, until)| *until > now);
        self.human.retain(|_, (_, until)| *until > now_ms);
    }
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
            inner.sweep(toolhost_core::unix_ms());
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

    fn shift<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        mut change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Shift, Unavailable>> {
        Box::pin(async move {
            let mut guard = self.locked();
            let inner = &mut *guard;
            inner.sweep(now_ms);
            let Some((entry, _)) = inner.entries.get_mut(id) else {
                return Ok(Shift::Stayed);
            };
            if entry.status != from {
                return Ok(Shift::Stayed);
            }
            if from.lapses() && now_ms >= entry.expires_ms {
                entry.status = Status::Expired;
                inner.human.remove(id);
                return Ok(Shift::Stayed);
            }
            entry.status = to;
            let sealed = change.human.take();
            let until = change.expires_ms.unwrap_or(entry.expires_ms);
            entry.apply(change);
            if to == Status::Approved {
                if let Some(sealed) = sealed {
                    inner.human.insert(id.to_owned(), (sealed, until));
                }
                return Ok(Shift::Moved { released: None });
            }
            let released = inner.human.remove(id).map(|(sealed, _)| sealed);
            Ok(Shift::Moved { released })
        })
    }

    fn holds_human<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, Unavailable>> {
        Box::pin(async move {
            let mut inner = self.locked();
            inner.sweep(toolhost_core::unix_ms());
            Ok(inner.human.contains_key(id))
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

/// KEYS[1] the record, KEYS[2] its sealed human values; ARGV from, to, now (ms), the sealed
/// values to keep on `→ approved` (or empty) and for how many ms, then field/value pairs to
/// set. Answers `{1, released}` when it moved (`released`: the sealed values it took away on a
/// move out of `approved`, or empty), `{0, ''}` when not (absent, another status, or lapsed:
/// then marked expired, and the values deleted).
const TRANSITION: &str = r"
local status = redis.call('HGET', KEYS[1], 'status')
if not status or status ~= ARGV[1] then return {0, ''} end
local expires = tonumber(redis.call('HGET', KEYS[1], 'expires'))
if (status == 'pending' or status == 'approved') and tonumber(ARGV[3]) >= expires then
  redis.call('HSET', KEYS[1], 'status', 'expired')
  redis.call('DEL', KEYS[2])
  return {0, ''}
end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if ARGV[2] == 'approved' then
  if ARGV[4] ~= '' then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5]) end
  return {1, ''}
end
local released = redis.call('GET', KEYS[2]) or ''
redis.call('DEL', KEYS[2])
return {1, released}";

const INDEX: &str = "toolhost:approvals";

fn key(id: &str) -> String {
    format!("toolhost:approval:{id}")
}

fn human_key(id: &str) -> String {
    format!("toolhost:approval-human:{id}")
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

    fn shift<'a>(
        &'a self,
        id: &'a str,
        from: Status,
        to: Status,
        change: Change,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Shift, Unavailable>> {
        Box::pin(async move {
            let mut invocation = self.transition.prepare_invoke();
            // The values lapse with the approval (at least 1 ms: `PX 0` is an error).
            let keep_ms = change.expires_ms.map_or(1, |until| until.saturating_sub(now_ms).max(1));
            invocation
                .key(key(id))
                .key(human_key(id))
                .arg(from.as_str())
                .arg(to.as_str())
                .arg(now_ms)
                .arg(change.human.as_deref().unwrap_or(""))
                .arg(keep_ms);
            for (field, value) in change.fields() {
                invocation.arg(field).arg(value);
            }
            let (moved, released): (i64, String) = self.shared.script(invocation).await?;
            Ok(match moved {
                1 => Shift::Moved {
                    released: Some(released).filter(|r| !r.is_empty()),
                },
                _ => Shift::Stayed,
            })
        })
    }

    fn holds_human<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, Unavailable>> {
        Box::pin(async move {
            let found: i64 = self.shared.run(redis::Cmd::exists(human_key(id))).await?;
            Ok(found == 1)
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
        if let Some(fingerprints) = &self.fingerprints {
            fields.push(("human_sha256", fingerprints.clone()));
        }
        fields
    }
}
