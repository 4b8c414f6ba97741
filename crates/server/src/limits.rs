//! Limits that protect the server: a global cap on requests in flight and a per-request
//! deadline (tower layers), per-tool concurrency caps, and per-caller rate limits. Each rejects
//! fast — 503 or 429 with `Retry-After` — instead of queueing without bound.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::BoxError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::http::problem::ProblemResponse;

/// The limits, as configured. Zero turns a limit off.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Requests handled at once, across the server.
    pub max_in_flight: usize,
    /// Calls of any one tool running at once.
    pub max_calls_per_tool: usize,
    /// Caps of named tools over `max_calls_per_tool` (0: that tool is unlimited).
    pub max_calls_by_tool: HashMap<String, usize>,
    /// The longest a request may take; later it is answered 504.
    pub request_timeout: Option<Duration>,
    /// Requests per second each caller may make on average.
    pub rate_per_second: f64,
    /// How many requests a caller may make at once before the rate applies.
    pub rate_burst: u32,
    /// Failed authentications a client address may have per minute (half of them at once)
    /// before it must wait; 0: no limit (issue #21.12).
    pub auth_failures_per_minute: u32,
}

/// The default limit of failed authentications per client address and minute.
pub const AUTH_FAILURES_PER_MINUTE: u32 = 60;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_in_flight: 0,
            max_calls_per_tool: 0,
            max_calls_by_tool: HashMap::new(),
            request_timeout: None,
            rate_per_second: 0.0,
            rate_burst: 20,
            auth_failures_per_minute: AUTH_FAILURES_PER_MINUTE,
        }
    }
}

/// The limiter of failed authentications for `per_minute` (0: off): the rate, and a burst of
/// half a minute's worth.
pub fn auth_failures(per_minute: u32) -> RateLimiter {
    RateLimiter::new(f64::from(per_minute) / 60.0, (per_minute / 2).max(1))
}

/// Turns the errors of the global tower layers into problems: shed load is 503 with
/// `Retry-After`, an elapsed deadline 504.
pub async fn rejected(error: BoxError) -> Response {
    if error.is::<tower::timeout::error::Elapsed>() {
        let mut p = ProblemResponse::new(
            StatusCode::GATEWAY_TIMEOUT,
            "request-timeout",
            "the request did not finish within the server's deadline; try again later",
        );
        p.problem.retryable = true;
        return p.into_response();
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        return busy("the server is handling as many requests as it allows; try again shortly");
    }
    tracing::error!("request failed in a limit layer: {error}");
    ProblemResponse::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the server hit an internal error; it has been logged",
    )
    .into_response()
}

fn busy(detail: &str) -> Response {
    let mut p = ProblemResponse::new(StatusCode::SERVICE_UNAVAILABLE, "overloaded", detail);
    p.problem.retryable = true;
    p.retry_after = Some(Duration::from_secs(1));
    p.into_response()
}

/// The failure code of a call refused because its tool is at its concurrency cap: the tool did
/// not run (OTC says so as a 400 server error, issue #22.4).
pub const BUSY_CODE: &str = "busy";

/// Per-tool concurrency: one semaphore per tool name, made on first use, sized by the tool's own
/// cap or the default. Caps change on a config reload; a tool whose cap changed gets a new
/// semaphore, and calls holding the old one finish on it.
#[derive(Debug)]
pub struct ToolSlots {
    caps: arc_swap::ArcSwap<ToolCaps>,
    slots: Mutex<HashMap<String, (usize, Arc<Semaphore>)>>,
}

/// Concurrency caps of tools: a default and per-tool overrides; 0 means unlimited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCaps {
    /// Calls of any one tool running at once (`max_calls_per_tool`).
    pub default: usize,
    /// Caps of named tools (`[max_calls_by_tool]`), over the default.
    pub by_tool: HashMap<String, usize>,
}

impl ToolCaps {
    /// The caps of `limits`.
    pub fn of_limits(limits: &Limits) -> Self {
        Self {
            default: limits.max_calls_per_tool,
            by_tool: limits.max_calls_by_tool.clone(),
        }
    }

    fn of(&self, tool: &str) -> usize {
        self.by_tool.get(tool).copied().unwrap_or(self.default)
    }
}

impl ToolSlots {
    /// Slots sized by `caps`.
    pub fn new(caps: ToolCaps) -> Self {
        Self {
            caps: arc_swap::ArcSwap::from_pointee(caps),
            slots: Mutex::default(),
        }
    }

    /// Uses `caps` from now on.
    pub fn set(&self, caps: ToolCaps) {
        self.caps.store(Arc::new(caps));
    }

    /// The tools capped by name.
    pub fn capped_tools(&self) -> Vec<String> {
        self.caps.load().by_tool.keys().cloned().collect()
    }

    /// Whether any tool is capped at all.
    pub fn enabled(&self) -> bool {
        let caps = self.caps.load();
        caps.default > 0 || caps.by_tool.values().any(|n| *n > 0)
    }

    /// A permit to run `tool` now, or `None` when it is at its limit. `Some(None)` when unlimited.
    pub fn try_acquire(&self, tool: &str) -> Option<Option<OwnedSemaphorePermit>> {
        let cap = self.caps.load().of(tool);
        if cap == 0 {
            return Some(None);
        }
        let semaphore = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            match slots.get_mut(tool) {
                Some((size, semaphore)) if *size == cap => Arc::clone(semaphore),
                Some(entry) => {
                    *entry = (cap, Arc::new(Semaphore::new(cap)));
                    Arc::clone(&entry.1)
                }
                None => {
                    let semaphore = Arc::new(Semaphore::new(cap));
                    slots.insert(tool.to_owned(), (cap, Arc::clone(&semaphore)));
                    semaphore
                }
            }
        };
        semaphore.try_acquire_owned().ok().map(Some)
    }
}

/// Per-caller token buckets, bounded in memory and sharded (issue #12.6).
///
/// A caller is a 64-bit keyed hash of its identity (or its IP address), so the hot path
/// allocates nothing and a table entry is a few words. The table is split into [`SHARDS`]
/// shards by hash, each behind its own lock, so callers rarely contend. Each shard keeps two
/// generations: new callers go into the current one; when it is full it becomes the previous
/// one (the old previous one is dropped whole) and a caller found there moves back to the
/// current one. So memory is bounded by `2 × MAX_BUCKETS` entries whatever a flood of distinct
/// callers does, nothing is ever scanned, and a caller who keeps sending keeps its bucket (and
/// its limit): only callers idle for a whole generation are forgotten, and a forgotten bucket
/// would have refilled anyway, or nearly.
#[derive(Debug)]
pub struct RateLimiter {
    /// Requests per second and burst, as `f64` bits: read on every request without a lock.
    rate: std::sync::atomic::AtomicU64,
    burst: std::sync::atomic::AtomicU64,
    keys: std::hash::RandomState,
    shards: Box<[Mutex<Shard>]>,
}

/// Shards of the caller table: a power of two.
const SHARDS: usize = 64;
/// Callers tracked per generation, across all shards.
const MAX_BUCKETS: usize = 100_000;
const PER_SHARD: usize = MAX_BUCKETS / SHARDS;

#[derive(Debug, Default)]
struct Shard {
    current: HashMap<u64, Bucket, Prehashed>,
    previous: HashMap<u64, Bucket, Prehashed>,
}

/// The table's keys are hashes already: used as they are.
type Prehashed = std::hash::BuildHasherDefault<Identity>;

#[derive(Debug, Default)]
struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Who a rate applies to: an authenticated caller's id, or a client address.
#[derive(Debug, Clone, Copy, Hash)]
pub enum RateKey<'a> {
    /// `key:<name>`, `jwt:<iss>:<sub>`.
    Caller(&'a str),
    /// An unauthenticated client.
    Address(std::net::IpAddr),
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new(0.0, 1)
    }
}

impl RateLimiter {
    /// A limiter of `rate` requests per second with bursts of `burst`; a rate of 0 allows all.
    pub fn new(rate: f64, burst: u32) -> Self {
        let limiter = Self {
            rate: std::sync::atomic::AtomicU64::new(0),
            burst: std::sync::atomic::AtomicU64::new(1f64.to_bits()),
            keys: std::hash::RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        };
        limiter.set(rate, burst);
        limiter
    }

    /// Uses `rate` and `burst` from now on; callers keep the tokens they have, up to the burst.
    pub fn set(&self, rate: f64, burst: u32) {
        use std::sync::atomic::Ordering::Relaxed;
        self.burst.store(f64::from(burst.max(1)).to_bits(), Relaxed);
        self.rate.store(rate.to_bits(), Relaxed);
    }

    /// The rate per second and the burst now.
    pub fn current(&self) -> (f64, u32) {
        use std::sync::atomic::Ordering::Relaxed;
        let burst = f64::from_bits(self.burst.load(Relaxed));
        (f64::from_bits(self.rate.load(Relaxed)), burst as u32)
    }

    /// Takes a token for `caller`; when none is left, how long until one is.
    pub fn check(&self, caller: RateKey<'_>) -> Result<(), Duration> {
        use std::sync::atomic::Ordering::Relaxed;
        let rate = f64::from_bits(self.rate.load(Relaxed));
        let burst = f64::from_bits(self.burst.load(Relaxed));
        if rate <= 0.0 || rate.is_nan() {
            return Ok(());
        }
        let now = Instant::now();
        let key = std::hash::BuildHasher::hash_one(&self.keys, caller);
        let shard = &self.shards[(key as usize) & (SHARDS - 1)];
        let mut shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
        let found = match shard.current.get(&key) {
            Some(bucket) => Some(*bucket),
            None => shard.previous.remove(&key),
        };
        if found.is_none() && shard.current.len() >= PER_SHARD {
            let full = std::mem::replace(
                &mut shard.current,
                HashMap::with_capacity_and_hasher(PER_SHARD, Prehashed::default()),
            );
            shard.previous = full;
        }
        let mut bucket = found.unwrap_or(Bucket { tokens: burst, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate).min(burst);
        bucket.at = now;
        let answer = if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        };
        shard.current.insert(key, bucket);
        answer
    }

    /// How long `caller` must wait for a token, without taking one (and without tracking a
    /// caller it does not know yet).
    pub fn peek(&self, caller: RateKey<'_>) -> Result<(), Duration> {
        use std::sync::atomic::Ordering::Relaxed;
        let rate = f64::from_bits(self.rate.load(Relaxed));
        let burst = f64::from_bits(self.burst.load(Relaxed));
        if rate <= 0.0 || rate.is_nan() {
            return Ok(());
        }
        let key = std::hash::BuildHasher::hash_one(&self.keys, caller);
        let shard = self.shards[(key as usize) & (SHARDS - 1)]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(bucket) = shard.current.get(&key).or_else(|| shard.previous.get(&key)) else {
            return Ok(());
        };
        let tokens = (bucket.tokens + bucket.at.elapsed().as_secs_f64() * rate).min(burst);
        if tokens >= 1.0 {
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - tokens) / rate))
        }
    }

    /// Callers tracked now, in all generations (for tests and metrics).
    pub fn tracked(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap_or_else(PoisonError::into_inner);
                s.current.len() + s.previous.len()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_allow_a_burst_then_the_rate() {
        let limiter = RateLimiter::new(1.0, 3);
        for _ in 0..3 {
            assert!(limiter.check(RateKey::Caller("a")).is_ok());
        }
        let wait = limiter.check(RateKey::Caller("a")).unwrap_err();
        assert!(wait <= Duration::from_secs(1) && wait > Duration::ZERO);
        assert!(
            limiter.check(RateKey::Caller("b")).is_ok(),
            "callers have their own buckets"
        );
        assert!(
            RateLimiter::new(0.0, 1).check(RateKey::Caller("a")).is_ok(),
            "rate 0 is off"
        );
    }

    /// Issue #12.6: a flood of distinct callers (a botnet, or one client minting identities)
    /// leaves the table bounded, and a real caller in the middle of it keeps its limit.
    #[test]
    fn a_flood_of_callers_stays_bounded_and_real_callers_stay_limited() {
        let limiter = RateLimiter::new(1.0, 5);
        let started = Instant::now();
        let real = RateKey::Caller("key:real");
        let mut allowed = 0;
        for i in 0..400_000u32 {
            let ip = std::net::IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            assert!(
                limiter.check(RateKey::Address(ip)).is_ok(),
                "a new caller has its burst"
            );
            if i % 1_000 == 0 && limiter.check(real).is_ok() {
                allowed += 1;
            }
        }
        assert!(limiter.tracked() <= 2 * MAX_BUCKETS, "{}", limiter.tracked());
        // 400 tries at 1/s with a burst of 5: the burst, plus one a second, and no more.
        let most = 5 + started.elapsed().as_secs() as usize + 1;
        assert!((5..=most).contains(&allowed), "{allowed} > {most}");
    }

    #[test]
    fn rates_change_on_set() {
        let limiter = RateLimiter::new(1.0, 1);
        assert!(limiter.check(RateKey::Caller("a")).is_ok());
        assert!(limiter.check(RateKey::Caller("a")).is_err());
        limiter.set(0.0, 1);
        assert!(
            limiter.check(RateKey::Caller("a")).is_ok(),
            "rate 0 turns the limit off"
        );
        limiter.set(1000.0, 50);
        assert!(
            (0..40).all(|_| limiter.check(RateKey::Caller("b")).is_ok()),
            "the new burst applies"
        );
    }

    fn caps(default: usize, by_tool: &[(&str, usize)]) -> ToolCaps {
        ToolCaps {
            default,
            by_tool: by_tool.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect(),
        }
    }

    #[test]
    fn tool_slots_cap_each_tool() {
        let slots = ToolSlots::new(caps(1, &[]));
        let held = slots.try_acquire("a").unwrap();
        assert!(slots.try_acquire("a").is_none());
        assert!(slots.try_acquire("b").is_some());
        drop(held);
        assert!(slots.try_acquire("a").is_some());
        assert!(ToolSlots::new(caps(0, &[])).try_acquire("a").is_some());
    }

    #[test]
    fn a_tool_may_have_its_own_cap_and_caps_change_on_set() {
        let slots = ToolSlots::new(caps(1, &[("wide", 3), ("free", 0)]));
        let wide: Vec<_> = (0..3).map(|_| slots.try_acquire("wide").unwrap()).collect();
        assert!(slots.try_acquire("wide").is_none(), "its own cap of 3");
        let free: Vec<_> = (0..100).map(|_| slots.try_acquire("free").unwrap()).collect();
        assert!(free.iter().all(Option::is_none), "0 is unlimited");
        let narrow = slots.try_acquire("other").unwrap();
        assert!(slots.try_acquire("other").is_none(), "the default of 1");
        slots.set(caps(2, &[("wide", 4)]));
        assert!(slots.try_acquire("wide").is_some(), "a new cap starts a new count");
        assert!(slots.try_acquire("other").is_some(), "the new default applies");
        drop((wide, narrow));
    }
}
