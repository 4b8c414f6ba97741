//! OTC `call_id` results in the shared store, kept once-only even when the store loses its state
//! (issue #30.5).
//!
//! A claim (`SET` of `run:FINGERPRINT:DEADLINE:ID`) is what stops a second run; a store that
//! restarts without persistence, or comes back from an older snapshot or a lagging replica,
//! has forgotten claims, and a repeat of such a `call_id` would find the key free and run the
//! tool again. So:
//!
//! - The store carries an **epoch** (`toolhost:epoch`, a random id written at first use) and a
//!   **generation** (`toolhost:generation`, incremented by every claim). Each replica keeps the
//!   epoch it works under and the highest generation it has seen. Every claim checks both in the
//!   same script that takes the key, so no claim is ever made on a store whose loss this
//!   replica could notice: a missing or changed epoch means the store lost everything (or
//!   another replica noticed a loss first), a generation at or below one already seen means it
//!   went back in time. A heartbeat checks the same every [`HEARTBEAT`], so idle replicas notice
//!   too.
//! - Each replica remembers every `call_id` key it claimed or saw claimed, for as long as the
//!   store would keep it (`max(ttl, lease)`, bounded in count by `idempotency_max_entries`).
//! - A replica that notices a loss writes a new epoch (which tells the others), opens a
//!   **recovery window** (`toolhost:recovering`, [`RECOVERY`]), and writes back what it
//!   remembers: a call still running as its `run:` (so repeats wait for its result, and it
//!   records the result when it ends), every other one as `lost:` (its outcome is unknown; it is
//!   never run again). During the window, a claim of a key the store does not hold is refused
//!   as unavailable (not run; OTC's 400 with `Retry-After` set to what is left of the window):
//!   a replica that has not written back yet has until then, and it notices within a heartbeat.
//!   Each replica that notices extends the window.
//!
//! A store without an epoch is new or has lost everything, which cannot be told apart: whoever
//! writes the first epoch opens the window too, so a fleet's first `call_id`s wait
//! [`RECOVERY`] (refused, retryable) after it first meets an empty store. The window is not
//! shortened when this replica has seen no `call_id`: another replica that has may not have
//! noticed yet (it may be reconnecting to the store that restarted), and nothing left in an
//! emptied store can tell that no replica has (issue #37.3; docs/operations.md).
//!
//! What is still lost: a `call_id` whose every witness is gone, i.e. seen only by replicas that
//! stopped, or were cut off from the store for longer than the window, with the store's loss.
//! Run the store with persistence (docs/operations.md) so that a loss stays rare.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::response::Response;
use toolhost_core::BoxFuture;

use super::{Shared, Unavailable};
use crate::idempotency::{Refusal, Store};

/// The store's epoch: a random id, written at first use and replaced when a loss is noticed.
const EPOCH: &str = "toolhost:epoch";
/// Incremented by every claim; never goes down unless the store lost writes.
const GENERATION: &str = "toolhost:generation";
/// Present (with an expiry) while replicas write back what they remember after a loss.
const RECOVERING: &str = "toolhost:recovering";
/// How often a replica checks the store's epoch and generation without a call.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long after a noticed loss a `call_id` the store does not hold waits (refused, retryable)
/// for the replicas to write back what they remember: several heartbeats and a reconnect.
pub const RECOVERY: Duration = Duration::from_secs(5);
/// How long writing back what a replica remembers may take.
const WRITE_BACK: Duration = Duration::from_secs(5);

/// Checks the epoch and the generation, then takes the key if it is free and no recovery is on.
/// KEYS: call, epoch, generation, recovering. ARGV: our epoch, value, expiry in ms, highest
/// generation seen. Answers {state, generation, what is left of the recovery window in ms}.
/// The scripts, their SHA-1 digests computed once (`CLAIM` and `FINISH` run on every keyed call).
mod scripts {
    use std::sync::LazyLock;

    pub(super) static CLAIM: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(super::CLAIM));
    pub(super) static JOIN: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(super::JOIN));
    pub(super) static RENEW: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(super::RENEW));
    pub(super) static FINISH: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(super::FINISH));
    pub(super) static LOSE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(super::LOSE));
}

const CLAIM: &str = r"
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {'epoch', 0, 0} end
local g = redis.call('INCR', KEYS[3])
if g <= tonumber(ARGV[4]) then return {'rollback', g, 0} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'taken', g, 0} end
local left = redis.call('PTTL', KEYS[4])
if left > 0 then return {'recovering', g, left} end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return {'ok', g, 0}";

/// The epoch and the generation. A store without an epoch is new or has lost everything, which
/// cannot be told apart (replicas that remember may still be on their way): the epoch is
/// written and the recovery window opened. KEYS: epoch, generation, recovering. ARGV: a new
/// epoch, the window in ms.
const JOIN: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then redis.call('SET', KEYS[3], '1', 'PX', ARGV[2]) end
return {redis.call('GET', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0')}";

/// After a loss: a new epoch unless another replica already wrote one, and the recovery window
/// (extended). KEYS: epoch, recovering, generation. ARGV: the epoch we knew, a new one, the
/// window in ms. Answers {epoch, generation}.
const RENEW: &str = r"
local e = redis.call('GET', KEYS[1])
if (not e) or e == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]); e = ARGV[2] end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
return {e, tonumber(redis.call('GET', KEYS[3]) or '0')}";

/// Sets `done:` (or deletes, with an empty result) only while the key still holds our `run:`.
const FINISH: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1";

/// Replaces a `run:` whose lease ran out with `lost:`, if it is still that `run:`.
const LOSE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1";

/// OTC `call_id` results in the shared store.
#[derive(Debug)]
pub struct Calls {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    shared: Shared,
    /// How long results are kept.
    ttl: Duration,
    /// How long a replica may run a call before others take it as lost.
    lease: Duration,
    /// How many keys this replica remembers at most.
    max_remembered: usize,
    known: Mutex<Known>,
    /// The `call_id` keys this replica claimed or saw, with what to write back after a loss.
    remembered: Mutex<HashMap<String, Witnessed>>,
    /// One recovery at a time.
    recovery: tokio::sync::Mutex<()>,
}

/// What this replica knows of the store.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Known {
    /// The epoch it works under; `None` before its first contact.
    epoch: Option<String>,
    /// The highest generation it has seen.
    generation: i64,
    /// How many losses it has recovered from (tells a waiting recovery that one just ran).
    recoveries: u64,
}

/// A key this replica saw, and what it writes back after a loss.
#[derive(Debug)]
struct Witnessed {
    /// A running call's own `run:` value (so that it still records its result), or `lost:FP`.
    value: String,
    /// When the key was first seen.
    at: Instant,
}

/// What a claim found.
enum Claim {
    Ours,
    Taken,
    /// The store is in its recovery window for this long yet.
    Recovering(Duration),
}

/// How long a caller waits when the store did not answer: it reconnects by itself.
const UNREACHABLE_RETRY: Duration = Duration::from_secs(1);

impl Calls {
    /// Results kept for `ttl`; a call's lease is `lease` (longer than any call may run); at most
    /// `max_remembered` keys remembered for a loss of the store. Checks the store every
    /// [`HEARTBEAT`] while it lives.
    pub fn new(shared: Shared, ttl: Duration, lease: Duration, max_remembered: usize) -> Self {
        let inner = Arc::new(Inner {
            shared,
            ttl,
            lease,
            max_remembered: max_remembered.max(1),
            known: Mutex::new(Known::default()),
            remembered: Mutex::new(HashMap::new()),
            recovery: tokio::sync::Mutex::new(()),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(heartbeat(Arc::downgrade(&inner)));
        }
        Self { inner }
    }
}

/// Joins the store at once, then checks it every [`HEARTBEAT`] while `inner` lives.
async fn heartbeat(inner: Weak<Inner>) {
    loop {
        let Some(strong) = inner.upgrade() else { return };
        let _ = strong.check().await;
        drop(strong);
        tokio::time::sleep(HEARTBEAT).await;
    }
}

impl Inner {
    fn known(&self) -> Known {
        self.known.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// How long a key lives in the store from its claim.
    fn life(&self) -> Duration {
        self.ttl.max(self.lease)
    }

    /// What this replica knows of the store, joining it (and writing its epoch) at first contact.
    async fn current(&self) -> Result<Known, Unavailable> {
        let known = self.known();
        if known.epoch.is_some() {
            return Ok(known);
        }
        let script = &*scripts::JOIN;
        let mut invocation = script.prepare_invoke();
        invocation
            .key(EPOCH)
            .key(GENERATION)
            .key(RECOVERING)
            .arg(uuid::Uuid::new_v4().to_string())
            .arg(RECOVERY.as_millis() as u64);
        let (epoch, generation): (String, i64) = self.shared.script(invocation).await?;
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.epoch.is_none() {
            known.epoch = Some(epoch);
            known.generation = known.generation.max(generation);
        }
        Ok(known.clone())
    }

    /// Checks the store's epoch and generation, recovering when it lost its state.
    async fn check(&self) -> Result<(), Unavailable> {
        let known = self.current().await?;
        let mut command = redis::cmd("MGET");
        command.arg(EPOCH).arg(GENERATION);
        let (epoch, generation): (Option<String>, Option<i64>) = self.shared.run(command).await?;
        let generation = generation.unwrap_or(0);
        if epoch != known.epoch || generation < known.generation {
            return self.recover(&known).await;
        }
        self.saw(generation);
        Ok(())
    }

    fn saw(&self, generation: i64) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.generation = known.generation.max(generation);
    }

    /// The store lost state since `before`: renews its epoch, opens the recovery window and
    /// writes back every key this replica remembers, then works under the new epoch.
    async fn recover(&self, before: &Known) -> Result<(), Unavailable> {
        let _one = self.recovery.lock().await;
        if self.known().recoveries != before.recoveries {
            return Ok(());
        }
        let script = &*scripts::RENEW;
        let mut invocation = script.prepare_invoke();
        invocation
            .key(EPOCH)
            .key(RECOVERING)
            .key(GENERATION)
            .arg(before.epoch.as_deref().unwrap_or(""))
            .arg(uuid::Uuid::new_v4().to_string())
            .arg(RECOVERY.as_millis() as u64);
        let (epoch, generation): (String, i64) = self.shared.script(invocation).await?;
        let mut pipeline = redis::pipe();
        let mut count = 0;
        {
            let remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, witnessed) in remembered.iter() {
                let left = self.life().saturating_sub(witnessed.at.elapsed());
                if left.is_zero() {
                    continue;
                }
                pipeline
                    .cmd("SET")
                    .arg(key)
                    .arg(&witnessed.value)
                    .arg("NX")
                    .arg("PX")
                    .arg(left.as_millis() as u64)
                    .ignore();
                count += 1;
            }
        }
        self.shared.pipeline(&pipeline, WRITE_BACK).await?;
        *self.known.lock().unwrap_or_else(PoisonError::into_inner) = Known {
            epoch: Some(epoch),
            generation,
            recoveries: before.recoveries + 1,
        };
        tracing::warn!(
            store = %self.shared.shown(),
            written_back = count,
            "the shared state store lost its state (restarted without persistence, or went back to an older copy): the call_ids this replica had seen are written back (running ones as running, the others as outcome unknown) and are not run again; calls with a call_id it does not hold are refused (retryable) for {} s",
            RECOVERY.as_secs()
        );
        Ok(())
    }

    /// Remembers that `key` holds `found` (a claim's value, ours or another's, or a result):
    /// after a loss, a running call is written back as running, anything else as lost.
    fn remember(&self, key: &str, found: &str) {
        let value = if found.starts_with("run:") {
            found.to_owned()
        } else {
            let fingerprint = found.split(':').nth(1).unwrap_or_default();
            format!("lost:{fingerprint}")
        };
        let now = Instant::now();
        let mut remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        if !remembered.contains_key(key) && remembered.len() >= self.max_remembered {
            let life = self.life();
            remembered.retain(|_, w| w.at.elapsed() < life);
            if remembered.len() >= self.max_remembered
                && let Some(oldest) = remembered.iter().min_by_key(|(_, w)| w.at).map(|(k, _)| k.clone())
            {
                remembered.remove(&oldest);
            }
        }
        let at = remembered.get(key).map_or(now, |w| w.at);
        remembered.insert(key.to_owned(), Witnessed { value, at });
    }

    fn forget(&self, key: &str) {
        self.remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// Takes `key` with `value` if it is free, on a store whose state this replica trusts.
    async fn claim(&self, key: &str, value: &str) -> Result<Claim, Unavailable> {
        for _ in 0..3 {
            let known = self.current().await?;
            let script = &*scripts::CLAIM;
            let mut invocation = script.prepare_invoke();
            invocation
                .key(key)
                .key(EPOCH)
                .key(GENERATION)
                .key(RECOVERING)
                .arg(known.epoch.as_deref().unwrap_or(""))
                .arg(value)
                .arg(self.life().as_millis() as u64)
                .arg(known.generation);
            let (state, generation, left): (String, i64, i64) = self.shared.script(invocation).await?;
            self.saw(generation);
            match state.as_str() {
                "ok" => return Ok(Claim::Ours),
                "taken" => return Ok(Claim::Taken),
                "recovering" => {
                    return Ok(Claim::Recovering(Duration::from_millis(left.max(1) as u64)));
                }
                _ => self.recover(&known).await?,
            }
        }
        Err(Unavailable)
    }

    /// Records `value` (`done:…`, or nothing) in place of our `run:`. When the key no longer
    /// holds it, the store may have lost it: after a check (which writes it back) once more.
    async fn finish(&self, key: &str, ours: &str, value: &str) -> Result<(), Unavailable> {
        for attempt in 0..2 {
            let script = &*scripts::FINISH;
            let mut invocation = script.prepare_invoke();
            invocation
                .key(key)
                .arg(ours)
                .arg(value)
                .arg(self.ttl.as_millis() as u64);
            if self.shared.script::<i64>(invocation).await? == 1 || attempt == 1 {
                break;
            }
            self.check().await?;
        }
        if value.is_empty() {
            self.forget(key);
        } else {
            self.remember(key, value);
        }
        Ok(())
    }

    async fn once(
        &self,
        key: &str,
        fingerprint: &str,
        run: BoxFuture<'_, Result<Arc<str>, Response>>,
    ) -> Result<Arc<str>, Refusal> {
        let key = format!("toolhost:call:{key}");
        let deadline = toolhost_core::unix_ms() + self.lease.as_millis() as u64;
        let ours = format!("run:{fingerprint}:{deadline}:{}", uuid::Uuid::new_v4());
        let unavailable = |_| Refusal::Unavailable {
            retry_after: UNREACHABLE_RETRY,
        };
        let mut wait = Duration::from_millis(10);
        let mut run = Some(run);
        loop {
            match self.claim(&key, &ours).await.map_err(unavailable)? {
                Claim::Recovering(left) => return Err(Refusal::Unavailable { retry_after: left }),
                Claim::Ours => {
                    self.remember(&key, &ours);
                    let Some(run) = run.take() else {
                        return Err(Refusal::Unavailable {
                            retry_after: UNREACHABLE_RETRY,
                        });
                    };
                    return match run.await {
                        Ok(result) => {
                            // A store that fails now has the tool run and its result unrecorded:
                            // the caller gets the result; a repeat finds `run:` and, past the
                            // lease, `lost:`.
                            let _ = self.finish(&key, &ours, &format!("done:{fingerprint}:{result}")).await;
                            Ok(result)
                        }
                        Err(response) => {
                            let _ = self.finish(&key, &ours, "").await;
                            Err(Refusal::Rejected(response))
                        }
                    };
                }
                Claim::Taken => {}
            }
            let found: Option<String> = self.shared.run(redis::Cmd::get(&key)).await.map_err(unavailable)?;
            let Some(found) = found else {
                continue;
            };
            self.remember(&key, &found);
            let (state, rest) = found.split_once(':').unwrap_or((&found, ""));
            let (theirs, rest) = rest.split_once(':').unwrap_or((rest, ""));
            if theirs != fingerprint {
                return Err(Refusal::Conflict);
            }
            match state {
                "done" => return Ok(rest.into()),
                "lost" => return Err(Refusal::Lost),
                _ => {
                    let their_deadline: u64 = rest.split(':').next().and_then(|d| d.parse().ok()).unwrap_or(0);
                    if toolhost_core::unix_ms() > their_deadline {
                        let script = &*scripts::LOSE;
                        let mut invocation = script.prepare_invoke();
                        invocation.key(&key).arg(&found).arg(format!("lost:{fingerprint}"));
                        let _ = self.shared.script::<i64>(invocation).await;
                        self.remember(&key, &format!("lost:{fingerprint}"));
                        tracing::warn!(
                            "a call_id's call outlived its lease (the replica running it stopped?): its outcome is unknown, and repeats are told so"
                        );
                        return Err(Refusal::Lost);
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(200));
                }
            }
        }
    }
}

impl Store for Calls {
    fn once<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        run: BoxFuture<'a, Result<Arc<str>, Response>>,
    ) -> BoxFuture<'a, Result<Arc<str>, Refusal>> {
        Box::pin(self.inner.once(key, fingerprint, run))
    }
}
