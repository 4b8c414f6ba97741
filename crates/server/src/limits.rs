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

/// Per-tool concurrency: one semaphore per tool name, made on first use.
#[derive(Debug, Default)]
pub struct ToolSlots {
    max: usize,
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl ToolSlots {
    /// Slots of `max` calls per tool; 0 means unlimited.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            slots: Mutex::default(),
        }
    }

    /// A permit to run `tool` now, or `None` when it is at its limit. `Some(None)` when unlimited.
    pub fn try_acquire(&self, tool: &str) -> Option<Option<OwnedSemaphorePermit>> {
        if self.max == 0 {
            return Some(None);
        }
        let semaphore = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(
                slots
                    .entry(tool.to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(self.max))),
            )
        };
        semaphore.try_acquire_owned().ok().map(Some)
    }
}

/// Per-caller token buckets.
#[derive(Debug, Default)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
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
        Self {
            rate,
            burst: f64::from(burst.max(1)),
            buckets: Mutex::default(),
        }
    }

    /// Takes a token for `caller`; when none is left, how long until one is.
    pub fn check(&self, caller: &str) -> Result<(), Duration> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(caller) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = buckets.entry(caller.to_owned()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * self.rate).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.rate))
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
        caller.id
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
    fn tool_slots_cap_each_tool() {
        let slots = ToolSlots::new(1);
        let held = slots.try_acquire("a").unwrap();
        assert!(slots.try_acquire("a").is_none());
        assert!(slots.try_acquire("b").is_some());
        drop(held);
        assert!(slots.try_acquire("a").is_some());
        assert!(ToolSlots::new(0).try_acquire("a").is_some());
    }
}
