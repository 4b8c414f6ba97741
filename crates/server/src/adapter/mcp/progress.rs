//! A call's course while it runs, to the client (docs/protocols.md §6): each finished step of a
//! multi-step (sculpted) tool is one `notifications/progress` (`progress` = steps finished,
//! `total` = steps, `message` = "step i of n: name") when the `tools/call` carried a
//! `progressToken`, and one `notifications/message` from logger `toolhost` at the session's
//! level (`info` for a step that answered, `debug` for one its `when` skipped, `warning` for a
//! failure, with the scrubbed message the caller's error carries).
//!
//! A federated upstream's own `notifications/progress` and `notifications/message` during the
//! call (relayed by its backend, scrubbed) go the same way: its progress under the caller's
//! token, its log messages at the caller's level from its logger.
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
use toolhost_core::{Note, Progress, StepOutcome};

use super::logging::Level;

/// One finished step, or what a federated upstream said.
#[derive(Debug)]
enum Report {
    Step {
        done: usize,
        total: usize,
        name: String,
        outcome: StepOutcome,
    },
    Relayed(Note),
}

/// The [`Progress`] a call over MCP carries: queues each report for [`relay`].
#[derive(Debug)]
struct Queue(mpsc::UnboundedSender<Report>);

impl Progress for Queue {
    fn step(&self, done: usize, total: usize, name: &str, outcome: &StepOutcome) {
        // The receiver lives as long as the call; a send can only fail after it, harmlessly.
        let _ = self.0.send(Report::Step {
            done,
            total,
            name: name.to_owned(),
            outcome: outcome.clone(),
        });
    }

    fn relay(&self, note: Note) {
        let _ = self.0.send(Report::Relayed(note));
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
        // The last relayed progress: MCP's progress must increase, and an upstream's notes can
        // come out of order (rmcp's client handles each notification on its own task).
        let mut last = None;
        let answer = loop {
            tokio::select! {
                biased;
                Some(report) = receiver.recv() => self.send(report, &mut last).await,
                answer = &mut running => break answer,
            }
        };
        while let Ok(report) = receiver.try_recv() {
            self.send(report, &mut last).await;
        }
        answer
    }

    async fn send(&self, report: Report, last: &mut Option<f64>) {
        match report {
            Report::Step {
                done,
                total,
                name,
                outcome,
            } => self.step(done, total, &name, &outcome).await,
            Report::Relayed(note) => self.relayed(note, last).await,
        }
    }

    /// What a federated upstream said of the call (scrubbed by its backend): its progress under
    /// the caller's token, its log message at the caller's level, from its own logger (named
    /// `upstream` when it named none).
    async fn relayed(&self, note: Note, last: &mut Option<f64>) {
        // A client that went away is not an error of the call: sends may fail silently.
        match note {
            Note::Progress {
                progress,
                total,
                message,
            } => {
                let Some(token) = &self.token else { return };
                if last.is_some_and(|last| progress <= last) {
                    return;
                }
                *last = Some(progress);
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                param.total = total;
                param.message = message;
                let _ = self.peer.notify_progress(param).await;
            }
            Note::Log { level, logger, data } => {
                let severity = super::logging::from_core(level);
                if self.level.is_some_and(|set| set.passes(severity)) {
                    let param = LoggingMessageNotificationParam::new(severity, data)
                        .with_logger(logger.unwrap_or_else(|| "upstream".to_owned()));
                    let _ = self.peer.notify_logging_message(param).await;
                }
            }
        }
    }

    async fn step(&self, done: usize, total: usize, name: &str, outcome: &StepOutcome) {
        let message = format!("step {done} of {total}: {name}");
        // A client that went away is not an error of the call: sends may fail silently.
        if let Some(token) = &self.token {
            let mut param = ProgressNotificationParam::new(token.clone(), done as f64);
            param.total = Some(total as f64);
            param.message = Some(message);
            let _ = self.peer.notify_progress(param).await;
        }
        let Some(level) = self.level else { return };
        let (severity, outcome, detail) = match outcome {
            StepOutcome::Done => (LoggingLevel::Info, "ok", None),
            StepOutcome::Skipped => (LoggingLevel::Debug, "skipped", None),
            StepOutcome::Failed(why) => (LoggingLevel::Warning, "failed", Some(why.as_str())),
        };
        if level.passes(severity) {
            let mut data = json!({
                "tool": self.tool, "step": name, "done": done, "of": total,
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
