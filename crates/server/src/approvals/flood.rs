//! A cap on new confirmation requests per caller and tool (`[approvals]
//! max_requests_per_minute`): a model calling in a loop must not flood the humans (approval
//! fatigue, APPROVALS.md §5.2.5) or the webhook. Past the cap a call is refused as busy,
//! nothing asked and nothing run. Kept per process: N replicas allow N times the cap.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// The window the cap counts over.
const WINDOW_MS: u64 = 60_000;
/// Past this many callers and tools tracked, the idle ones are forgotten first.
const MAX_KEYS: usize = 10_000;

/// When each caller and tool asked lately.
#[derive(Debug, Default)]
pub struct Flood {
    per_minute: u32,
    asked: Mutex<HashMap<(String, String), VecDeque<u64>>>,
}

impl Flood {
    /// At most `per_minute` new requests per caller and tool in any minute; 0: no cap.
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            asked: Mutex::default(),
        }
    }

    /// Counts a new request of `principal` for `tool` at `now_ms`, or says how long until one
    /// is allowed.
    pub fn admit(&self, principal: &str, tool: &str, now_ms: u64) -> Result<(), Duration> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let mut asked = self.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if asked.len() >= MAX_KEYS {
            asked.retain(|_, times| times.back().is_some_and(|t| now_ms.saturating_sub(*t) < WINDOW_MS));
        }
        let times = asked.entry((principal.to_owned(), tool.to_owned())).or_default();
        while times.front().is_some_and(|t| now_ms.saturating_sub(*t) >= WINDOW_MS) {
            times.pop_front();
        }
        if times.len() >= self.per_minute as usize {
            let oldest = times.front().copied().unwrap_or(now_ms);
            let wait = (oldest + WINDOW_MS).saturating_sub(now_ms).max(1000);
            return Err(Duration::from_millis(wait));
        }
        times.push_back(now_ms);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_past_the_cap_waits_for_the_window_and_others_do_not() {
        let flood = Flood::new(2);
        assert!(flood.admit("alice", "pay", 0).is_ok());
        assert!(flood.admit("alice", "pay", 10_000).is_ok());
        assert_eq!(flood.admit("alice", "pay", 20_000), Err(Duration::from_secs(40)));
        assert!(flood.admit("bob", "pay", 20_000).is_ok(), "per caller");
        assert!(flood.admit("alice", "other", 20_000).is_ok(), "per tool");
        assert!(
            flood.admit("alice", "pay", 60_000).is_ok(),
            "the first one left the window"
        );
        assert!(Flood::new(0).admit("alice", "pay", 0).is_ok());
    }
}
