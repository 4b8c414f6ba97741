//! A call's course while it runs, to the client (docs/protocols.md §6): each finished step of a
//! multi-step (sculpted) tool is one `notifications/progress` (`progress` = steps finished,
//! `total` = steps, `message` = "step i of n: name") when the `tools/call` carried a
//! `progressToken`, and one `notifications/message` from logger `toolhost` at the session's
//! level (`info` for a step that answered, `debug` for one its `when` skipped, `warning` for a
//! failure, with the scrubbed message the caller's error carries).
//!
//! Core reports through the protocol-free [`Progress`] trait; the reports are queued here and
//! sent, in order, while the call runs, and the rest once it ends, before its result.
#![allow(deprecated)] // MCP logging (SEP-2577)

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use serde_json::json;
use tokio::sync::mpsc;
use toolhost_core::{Progress, StepOutcome};

use super::logging::Level;

/// One finished step.
#[derive(Debug)]
struct Report {
    done: usize,
    total: usize,
    name: String,
    outcome: StepOutcome,
}

/// The [`Progress`] a call over MCP carries: queues each report for [`relay`].
#[derive(Debug)]
struct Queue(mpsc::UnboundedSender<Report>);

impl Progress for Queue {
    fn step(&self, done: usize, total: usize, name: &str, outcome: &StepOutcome) {
        // The receiver lives as long as the call; a send can only fail after it, harmlessly.
        let _ = self.0.send(Report {
            done,
            total,
            name: name.to_owned(),
            outcome: outcome.clone(),
        });
    }
}

/// Where one call's reports go: the client, its progress token (if it sent one) and the
/// session's log level (if it can receive log messages at all).
pub(super) struct Relay<'a> {
    pub peer: &'a Peer<RoleServer>,
    pub token: Option<ProgressToken>,
    pub level: Option<&'a Level>,
    pub tool: &'a str,
}

impl Relay<'_> {
    /// Runs `call` with a reporter in its context when anything would be sent, sending each
    /// report as it comes, and the rest before returning the call's answer.
    pub async fn run<T, F: Future<Output = T>>(
        &self,
        context: &mut toolhost_core::CallContext,
        call: impl FnOnce(toolhost_core::CallContext) -> F,
    ) -> T {
        if self.token.is_none() && self.level.is_none() {
            return call(std::mem::take(context)).await;
        }
        let (sender, mut receiver) = mpsc::unbounded_channel();
        context.progress = Some(Arc::new(Queue(sender)));
        let running = call(std::mem::take(context));
        tokio::pin!(running);
        let answer = loop {
            tokio::select! {
                biased;
                Some(report) = receiver.recv() => self.send(report).await,
                answer = &mut running => break answer,
            }
        };
        while let Ok(report) = receiver.try_recv() {
            self.send(report).await;
        }
        answer
    }

    async fn send(&self, report: Report) {
        let message = format!("step {} of {}: {}", report.done, report.total, report.name);
        // A client that went away is not an error of the call: sends may fail silently.
        if let Some(token) = &self.token {
            let mut param = ProgressNotificationParam::new(token.clone(), report.done as f64);
            param.total = Some(report.total as f64);
            param.message = Some(message);
            let _ = self.peer.notify_progress(param).await;
        }
        let Some(level) = self.level else { return };
        let (severity, outcome, detail) = match &report.outcome {
            StepOutcome::Done => (LoggingLevel::Info, "ok", None),
            StepOutcome::Skipped => (LoggingLevel::Debug, "skipped", None),
            StepOutcome::Failed(why) => (LoggingLevel::Warning, "failed", Some(why.as_str())),
        };
        if level.passes(severity) {
            let mut data = json!({
                "tool": self.tool, "step": report.name, "done": report.done, "of": report.total,
                "outcome": outcome,
            });
            if let Some(detail) = detail {
                data["message"] = json!(detail);
            }
            let _ = self
                .peer
                .notify_logging_message(LoggingMessageNotificationParam::new(severity, data).with_logger("toolhost"))
                .await;
        }
    }
}
