//! Idempotency by key (OTC `call_id`): the first call with a key runs; a repeat with the same
//! fingerprint gets the first result without running again, also while the first is still
//! running (it waits); a repeat with a different fingerprint is refused.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;
use tokio::sync::OnceCell;
use toolhost_core::BoxFuture;

/// Why a keyed call did not produce a stored result.
#[derive(Debug)]
pub enum Refusal {
    /// The key was used before for a different call.
    Conflict,
    /// The call was refused before running (its response is passed through, not stored).
    Rejected(Response),
    /// The shared store cannot be reached, or is recovering from a loss of its state: the call
    /// was not run, and may be sent again (same `call_id`) after `retry_after`.
    Unavailable {
        /// How long until the store may take the call: what is left of its recovery window, or
        /// a second for a store that did not answer.
        retry_after: Duration,
    },
    /// The first call with the key started on a replica that did not finish it in its lease, or
    /// the shared store lost its record: its outcome is unknown, and it is not run again.
    Lost,
}

/// Where results of keyed calls are kept. The in-memory [`Memory`] serves one process; a shared
/// store (Redis, SQL) can replace it so that replicas agree.
pub trait Store: Send + Sync + fmt::Debug {
    /// Runs `run` once per `key`: the stored JSON result when the key is known with the same
    /// `fingerprint`, [`Refusal::Conflict`] when known with another; a `run` that fails with a
    /// response stores nothing. Fingerprints are the same on every replica (a SHA-256).
    fn once<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        run: BoxFuture<'a, Result<Arc<str>, Response>>,
    ) -> BoxFuture<'a, Result<Arc<str>, Refusal>>;
}

/// An in-process store bounded in entries and age.
#[derive(Debug)]
pub struct Memory {
    inner: Mutex<Inner>,
    max_entries: usize,
    ttl: Duration,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    /// Keys in insertion order, for eviction by age and by count.
    order: VecDeque<(Instant, String)>,
}

#[derive(Debug)]
struct Entry {
    fingerprint: String,
    created: Instant,
    result: Arc<OnceCell<Arc<str>>>,
}

impl Memory {
    /// A store of at most `max_entries` results, each kept for `ttl`.
    pub fn new(max_entries: usize, ttl: Duration) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            max_entries: max_entries.max(1),
            ttl,
        }
    }

    /// The cell for `key`, creating it; `None` when the key is taken by another fingerprint.
    fn cell(&self, key: &str, fingerprint: &str) -> Option<Arc<OnceCell<Arc<str>>>> {
        let now = Instant::now();
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        inner.evict(now, self.ttl, self.max_entries);
        if let Some(entry) = inner.entries.get(key) {
            return (entry.fingerprint == fingerprint).then(|| Arc::clone(&entry.result));
        }
        let result = Arc::new(OnceCell::new());
        inner.entries.insert(
            key.to_owned(),
            Entry {
                fingerprint: fingerprint.to_owned(),
                created: now,
                result: Arc::clone(&result),
            },
        );
        inner.order.push_back((now, key.to_owned()));
        Some(result)
    }

    /// Forgets `key` when it still holds `cell` and that never got a result, so that a call
    /// refused before running (400, 422) does not take its key: the corrected retry may differ.
    fn forget_unfinished(&self, key: &str, cell: &Arc<OnceCell<Arc<str>>>) {
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(entry) = inner.entries.get(key) else {
            return;
        };
        if !Arc::ptr_eq(&entry.result, cell) || cell.initialized() {
            return;
        }
        let created = entry.created;
        inner.entries.remove(key);
        // The entry was pushed recently, so it is found near the back.
        if let Some(at) = inner.order.iter().rposition(|(c, k)| *c == created && k == key) {
            inner.order.remove(at);
        }
    }
}

impl Inner {
    /// Drops expired entries, then the oldest ones while the store is full.
    fn evict(&mut self, now: Instant, ttl: Duration, max: usize) {
        while let Some((created, key)) = self.order.front() {
            let expired = now.duration_since(*created) >= ttl;
            if !expired && self.entries.len() < max {
                break;
            }
            // The key may have been evicted and stored again later; only drop this very entry.
            if self.entries.get(key).is_some_and(|e| e.created == *created) {
                self.entries.remove(key);
            }
            self.order.pop_front();
        }
    }
}

impl Store for Memory {
    fn once<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a str,
        run: BoxFuture<'a, Result<Arc<str>, Response>>,
    ) -> BoxFuture<'a, Result<Arc<str>, Refusal>> {
        Box::pin(async move {
            let cell = self.cell(key, fingerprint).ok_or(Refusal::Conflict)?;
            match cell.get_or_try_init(|| run).await {
                Ok(result) => Ok(Arc::clone(result)),
                Err(response) => {
                    self.forget_unfinished(key, &cell);
                    Err(Refusal::Rejected(response))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn ok(text: &str) -> BoxFuture<'static, Result<Arc<str>, Response>> {
        let text: Arc<str> = text.into();
        Box::pin(async move { Ok(text) })
    }

    #[tokio::test]
    async fn same_key_same_fingerprint_runs_once() {
        let store = Memory::new(10, Duration::from_secs(60));
        let runs = AtomicUsize::new(0);
        let run = || {
            runs.fetch_add(1, Ordering::SeqCst);
            ok("1")
        };
        assert_eq!(&*store.once("a", "7", run()).await.unwrap(), "1");
        assert_eq!(
            &*store.once("a", "7", ok("2")).await.unwrap(),
            "1",
            "the first result is returned"
        );
        assert!(matches!(store.once("a", "8", ok("3")).await, Err(Refusal::Conflict)));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn rejected_runs_store_nothing() {
        let store = Memory::new(10, Duration::from_secs(60));
        let rejected: BoxFuture<'static, Result<Arc<str>, Response>> =
            Box::pin(async { Err(Response::new(axum::body::Body::empty())) });
        assert!(matches!(
            store.once("a", "1", rejected).await,
            Err(Refusal::Rejected(_))
        ));
        assert_eq!(&*store.once("a", "1", ok("later")).await.unwrap(), "later");
    }

    #[tokio::test]
    async fn a_rejected_key_is_free_for_another_fingerprint() {
        let store = Memory::new(10, Duration::from_secs(60));
        let rejected: BoxFuture<'static, Result<Arc<str>, Response>> =
            Box::pin(async { Err(Response::new(axum::body::Body::empty())) });
        assert!(matches!(
            store.once("a", "1", rejected).await,
            Err(Refusal::Rejected(_))
        ));
        assert_eq!(&*store.once("a", "2", ok("corrected")).await.unwrap(), "corrected");
        assert!(matches!(store.once("a", "1", ok("late")).await, Err(Refusal::Conflict)));
        let inner = store.inner.lock().unwrap();
        assert_eq!((inner.entries.len(), inner.order.len()), (1, 1), "nothing left behind");
    }

    #[tokio::test]
    async fn bounded_by_count_and_age() {
        let store = Memory::new(2, Duration::from_secs(60));
        for key in ["a", "b", "c"] {
            store.once(key, "1", ok(key)).await.unwrap();
        }
        assert_eq!(
            &*store.once("a", "2", ok("new a")).await.unwrap(),
            "new a",
            "the oldest key was evicted"
        );
        let store = Memory::new(10, Duration::ZERO);
        store.once("a", "1", ok("old")).await.unwrap();
        assert_eq!(
            &*store.once("a", "2", ok("fresh")).await.unwrap(),
            "fresh",
            "expired keys are forgotten"
        );
    }
}
