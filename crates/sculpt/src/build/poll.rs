//! A step's `poll:`: the asynchronous operation it started, polled until done (docs/tasks.md).

use std::time::Duration;

use super::Builder;
use crate::config::PollDef;
use crate::jq;

/// The shortest interval between two polls, so a catalog cannot hammer an upstream.
const MIN_INTERVAL: Duration = Duration::from_millis(50);
/// The interval when the catalog says none.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// How a step polls, compiled.
#[derive(Debug)]
pub(crate) struct Poll {
    /// Gives the URL to poll from the first answer; `None`: its `Location` header (or, for a
    /// `tool` step, the same call again).
    pub url: Option<jq::Program>,
    pub interval: Duration,
    /// How long to poll at most; the call's deadline bounds it anyway.
    pub timeout: Option<Duration>,
    pub done: jq::Program,
    pub failed: Option<jq::Program>,
}

impl Builder<'_> {
    /// Compiles `def` for the step named `step`; `tool`: whether the step calls a catalog tool.
    pub(super) fn poll(&mut self, step: &str, def: &PollDef, tool: bool) -> Option<Poll> {
        let before = self.problems.len();
        let at = |key: &str| format!("step `{step}`, `poll.{key}`");
        let program = |b: &mut Self, key: &str, code: &str| {
            jq::compile(code)
                .map_err(|e| b.problem(&at(key), format!("the jq program does not compile: {e}")))
                .ok()
        };
        let url = match &def.url {
            Some(_) if tool => {
                self.problem(
                    &at("url"),
                    "a `tool` step polls by calling its tool again; it has no URL".to_owned(),
                );
                None
            }
            Some(code) => program(self, "url", code),
            None => None,
        };
        let done = program(self, "done", &def.done);
        let failed = def.failed.as_deref().and_then(|code| program(self, "failed", code));
        let interval = def.interval_ms.map_or(DEFAULT_INTERVAL, Duration::from_millis);
        if interval < MIN_INTERVAL {
            self.problem(
                &at("interval_ms"),
                format!("at least {} ms between two polls", MIN_INTERVAL.as_millis()),
            );
        }
        if def.timeout_ms == Some(0) {
            self.problem(
                &at("timeout_ms"),
                "must be a positive number of milliseconds".to_owned(),
            );
        }
        if self.problems.len() > before {
            return None;
        }
        Some(Poll {
            url,
            interval,
            timeout: def.timeout_ms.map(Duration::from_millis),
            done: done?,
            failed,
        })
    }
}
