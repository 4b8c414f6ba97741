//! Retries of tool calls (docs/protocols.md §7): bounded, with jittered exponential backoff.
//!
//! Only what [`Error::is_retryable`] allows is retried: a 5xx the server does not mark final,
//! an OTC failure with `can_retry`, a connection that never opened. A 4xx or invalid arguments
//! never are. The caller narrows it further with [`Retry::run_if`]: a call to a tool not marked
//! idempotent is sent again only on its protocol's own retry signal
//! ([`Error::server_says_retry`]) or when nothing was sent. A server's `Retry-After` / `retry_after_ms` is honoured, up to
//! [`Retry::max_wait`], so a server cannot park a client for an hour.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use crate::error::Error;

/// How calls are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts in all, the first included; 1 means no retry.
    pub attempts: u32,
    /// The first backoff; each later one doubles, up to `cap`.
    pub base: Duration,
    /// The longest computed backoff.
    pub cap: Duration,
    /// The longest wait a server may ask for; a longer request gives up instead.
    pub max_wait: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Self {
            attempts: 3,
            base: Duration::from_millis(200),
            cap: Duration::from_secs(5),
            max_wait: Duration::from_secs(30),
        }
    }
}

impl Retry {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (0 for the first retry): the server's hint plus a
    /// little jitter, or "full jitter" backoff (a random wait up to `base · 2^retry`, capped).
    /// `None` when the server asks for longer than `max_wait`.
    pub fn delay(&self, retry: u32, hint: Option<Duration>) -> Option<Duration> {
        if let Some(hint) = hint {
            if hint > self.max_wait {
                return None;
            }
            // A little spread, so clients told the same instant do not return all at once.
            return Some(hint + jitter(self.base.min(hint / 10 + Duration::from_millis(1))));
        }
        let ceiling = self.base.saturating_mul(1u32 << retry.min(16)).min(self.cap);
        Some(jitter(ceiling))
    }

    /// Runs `attempt` until it succeeds, fails for good, or attempts run out. `attempt` gets
    /// the attempt number (0 first) and the previous error, so that it can change what it sends
    /// (OTC needs a fresh `call_id` after a tool failure).
    pub async fn run<T, F, Fut>(&self, attempt: F) -> Result<T, Error>
    where
        F: FnMut(u32, Option<&Error>) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.run_if(Error::is_retryable, attempt).await
    }

    /// Like [`Retry::run`], but retries only errors for which `may_retry` holds (and which are
    /// retryable at all).
    pub async fn run_if<T, F, Fut>(&self, may_retry: impl Fn(&Error) -> bool, mut attempt: F) -> Result<T, Error>
    where
        F: FnMut(u32, Option<&Error>) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut last: Option<Error> = None;
        for n in 0..self.attempts.max(1) {
            let error = match attempt(n, last.as_ref()).await {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            if n + 1 >= self.attempts || !error.is_retryable() || !may_retry(&error) {
                return Err(error);
            }
            let Some(wait) = self.delay(n, error.retry_after()) else {
                return Err(error);
            };
            tracing::info!(attempt = n + 1, wait_ms = wait.as_millis() as u64, error = %error, "retrying");
            tokio::time::sleep(wait).await;
            last = Some(error);
        }
        Err(last.unwrap_or_else(|| Error::Setup("no attempt was made".to_owned())))
    }
}

/// A uniformly random duration in `[0, ceiling]`, from the standard library's per-process
/// random hasher keys (jitter needs spread, not cryptographic randomness).
fn jitter(ceiling: Duration) -> Duration {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().elapsed().map_or(0, |d| d.as_nanos()));
    let fraction = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
    ceiling.mul_f64(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let r = Retry::default();
        for retry in 0..10 {
            let d = r.delay(retry, None).unwrap();
            assert!(d <= r.base.saturating_mul(1 << retry).min(r.cap), "{retry}: {d:?}");
        }
    }

    #[test]
    fn hints_are_honoured_within_bounds() {
        let r = Retry::default();
        let d = r.delay(0, Some(Duration::from_secs(2))).unwrap();
        assert!(d >= Duration::from_secs(2) && d <= Duration::from_millis(2200), "{d:?}");
        assert_eq!(r.delay(0, Some(Duration::from_secs(3600))), None);
    }
}
