//! `logging/setLevel` and the log messages a session receives (docs/protocols.md §6): after a
//! `logging/setLevel`, each `tools/call` of the session is followed by one
//! `notifications/message` from logger `toolhost` (rmcp sends it on the session's standalone
//! GET stream; over stdio, in line) with the call's outcome: `info` for a result
//! (`{"tool", "outcome": "ok", "ms"}`), `warning` for a failure, with the text the result carries
//! (what any caller sees: secrets are already scrubbed from it). Nothing before a level is set.
//!
//! `logging/setLevel` only where a message can reach the client between requests: a session
//! (`--mcp-sessions`) or stdio; a stateless server tells an older client of no `logging` and
//! answers it method-not-found. A 2026-07-28 request carries its own level in `_meta`
//! (SEP-2575, [`Level::at`]) and hears its messages on its own response stream, stateless too.
//! (MCP's logging is deprecated by SEP-2577, hence the `allow(deprecated)`s.)
#![allow(deprecated)]

use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{CallToolResult, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

/// A session's log level: none until the client sets one.
#[derive(Debug, Default)]
pub struct Level(Mutex<Option<LoggingLevel>>);

/// Severity order of MCP's levels (RFC 5424's, most verbose first).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Core's log level as MCP's.
pub(super) fn from_core(level: toolhost_core::LogLevel) -> LoggingLevel {
    use toolhost_core::LogLevel;
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

impl Level {
    /// A level set from the start: the one a 2026-07-28 request carries in `_meta`.
    pub fn at(level: LoggingLevel) -> Self {
        Self(Mutex::new(Some(level)))
    }

    /// `logging/setLevel`.
    pub fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(level);
    }

    /// Whether the client has set a level (before it does, nothing is sent).
    pub(super) fn is_set(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }

    /// Whether a message at `level` goes to the client.
    pub(super) fn passes(&self, level: LoggingLevel) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|set| rank(level) >= rank(set))
    }

    /// Tells `peer` how the call of `tool` went, when the session's level lets it through.
    pub async fn call_outcome(&self, peer: &Peer<RoleServer>, tool: &str, took: Duration, result: &CallToolResult) {
        let level = if result.is_error == Some(true) {
            LoggingLevel::Warning
        } else {
            LoggingLevel::Info
        };
        if !self.passes(level) {
            return;
        }
        let ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let data = if level == LoggingLevel::Warning {
            let text: Vec<&str> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            json!({"tool": tool, "outcome": "failed", "ms": ms, "message": text.join("\n")})
        } else {
            json!({"tool": tool, "outcome": "ok", "ms": ms})
        };
        // A client that went away is not an error of the call.
        let _ = peer
            .notify_logging_message(LoggingMessageNotificationParam::new(level, data).with_logger("toolhost"))
            .await;
    }
}

/// Why a stateless server takes no log level (the capability is not declared there).
pub fn stateless() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "logging/setLevel: this server is stateless and has no stream to send log messages on; \
         use a server started with --mcp-sessions, stdio, or protocol 2026-07-28 (a level in \
         each request's _meta)",
        None,
    )
}
