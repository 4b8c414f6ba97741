//! Limits that protect the server: a global cap on requests in flight and a per-request
//! deadline (tower layers), per-tool concurrency caps, and per-caller rate limits. Each rejects
//! fast — 503 or 429 with `Retry-After` — instead of queueing without bound.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::BoxError;
use axum::extract::{ConnectInfo, Request, State as Extract};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::State;
use crate::auth::Caller;
use crate::http::problem::ProblemResponse;

/// The limits, as configured. Zero turns a limit off.
#[derive(Debug, Clone, Default)]
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

/// Per-caller token buckets.
#[derive(Debug, Default)]
pub struct RateLimiter {
    inner: Mutex<Buckets>,
}

#[derive(Debug, Default)]
struct Buckets {
    rate: f64,
    burst: f64,
    map: HashMap<String, Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// At most this many callers are tracked; idle full buckets are dropped first.
const MAX_BUCKETS: usize = 100_000;

impl RateLimiter {
    /// A limiter of `rate` requests per second with bursts of `burst`; a rate of 0 allows all.
    pub fn new(rate: f64, burst: u32) -> Self {
        let limiter = Self::default();
        limiter.set(rate, burst);
        limiter
    }

    /// Uses `rate` and `burst` from now on; callers keep the tokens they have, up to the burst.
    pub fn set(&self, rate: f64, burst: u32) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.rate = rate;
        inner.burst = f64::from(burst.max(1));
    }

    /// Takes a token for `caller`; when none is left, how long until one is.
    pub fn check(&self, caller: &str) -> Result<(), Duration> {
        let now = Instant::now();
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Buckets { rate, burst, map } = &mut *inner;
        let (rate, burst) = (*rate, *burst);
        if rate <= 0.0 {
            return Ok(());
        }
        if map.len() >= MAX_BUCKETS && !map.contains_key(caller) {
            map.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = map
            .entry(caller.to_owned())
            .or_insert(Bucket { tokens: burst, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        }
    }
}

/// The rate-limit middleware: keyed by the authenticated caller, or by the client's address
/// when authentication is off.
pub async fn rate(Extract(state): Extract<Arc<State>>, caller: Caller, request: Request, next: Next) -> Response {
    let key = if caller.id == "anonymous" {
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or_else(|| "anonymous".to_owned(), |c| format!("ip:{}", c.0.ip()))
    } else {
        caller.id.into_owned()
    };
    match state.rate.check(&key) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            metrics::counter!("toolhost_rate_limited_total").increment(1);
            let mut p = ProblemResponse::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                format!(
                    "too many requests from this caller; wait {} ms and try again",
                    wait.as_millis().max(1)
                ),
            );
            p.problem.retryable = true;
            p.retry_after = Some(wait);
            p.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_allow_a_burst_then_the_rate() {
        let limiter = RateLimiter::new(1.0, 3);
        for _ in 0..3 {
            assert!(limiter.check("a").is_ok());
        }
        let wait = limiter.check("a").unwrap_err();
        assert!(wait <= Duration::from_secs(1) && wait > Duration::ZERO);
        assert!(limiter.check("b").is_ok(), "callers have their own buckets");
        assert!(RateLimiter::new(0.0, 1).check("a").is_ok(), "rate 0 is off");
    }

    #[test]
    fn rates_change_on_set() {
        let limiter = RateLimiter::new(1.0, 1);
        assert!(limiter.check("a").is_ok());
        assert!(limiter.check("a").is_err());
        limiter.set(0.0, 1);
        assert!(limiter.check("a").is_ok(), "rate 0 turns the limit off");
        limiter.set(1000.0, 50);
        assert!((0..40).all(|_| limiter.check("b").is_ok()), "the new burst applies");
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
