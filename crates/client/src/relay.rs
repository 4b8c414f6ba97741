//! What an MCP server says of a call while it runs, routed to that call (issue #39.2): its
//! `notifications/progress` by the progress token rmcp put on the call, and its
//! `notifications/message` to the call it can only be about.
//!
//! A session is shared by many calls (a server federating an upstream sends every caller's call
//! on one session), and MCP ties a log message to no request, so a log message is routed only
//! when exactly one call is running on the session; otherwise (or between calls) it reaches no
//! caller, since it might be about another caller's call. A progress notification names its
//! token, so it always reaches its call; one that comes before its call's token is known (the
//! request is sent before rmcp hands back the token) waits in a short queue for it.
#![allow(deprecated)] // MCP logging (SEP-2577)

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions};
use rmcp::{RoleClient, ServiceError};
use toolhost_core::{LogLevel, Note, Progress};

use crate::CallContext;

/// How many progress notifications for a token not known yet are kept.
const EARLY: usize = 32;

/// The calls running on one session, and where their notes go.
#[derive(Debug, Default)]
pub(crate) struct Calls(Mutex<Inner>);

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    running: Vec<Running>,
    early: VecDeque<ProgressNotificationParam>,
}

#[derive(Debug)]
struct Running {
    id: u64,
    token: Option<ProgressToken>,
    notes: Option<Arc<dyn Progress>>,
}

/// A call running on a session, until dropped.
pub(crate) struct Started<'a> {
    calls: &'a Calls,
    id: u64,
}

impl Calls {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A call starts, its notes going to `notes` (if anywhere).
    pub fn start(&self, notes: Option<Arc<dyn Progress>>) -> Started<'_> {
        let mut inner = self.inner();
        inner.next += 1;
        let id = inner.next;
        inner.running.push(Running { id, token: None, notes });
        Started { calls: self, id }
    }

    /// `notifications/progress`: to the call with its token.
    pub fn progress(&self, params: ProgressNotificationParam) {
        let mut inner = self.inner();
        match inner
            .running
            .iter()
            .find(|r| r.token.as_ref() == Some(&params.progress_token))
        {
            Some(running) => deliver(running.notes.as_ref(), progress(params)),
            None => {
                if inner.early.len() == EARLY {
                    inner.early.pop_front();
                }
                inner.early.push_back(params);
            }
        }
    }

    /// `notifications/message`: to the one call running, if only one is.
    pub fn log(&self, params: LoggingMessageNotificationParam) {
        let inner = self.inner();
        if let [only] = inner.running.as_slice() {
            deliver(
                only.notes.as_ref(),
                Note::Log {
                    level: level(params.level),
                    logger: params.logger,
                    data: params.data,
                },
            );
        } else {
            tracing::debug!(
                running = inner.running.len(),
                "an MCP server's log message about no one call is not passed on"
            );
        }
    }
}

impl Started<'_> {
    /// The call's progress token, once rmcp has sent it: what came before for it is delivered.
    pub fn token(&self, token: ProgressToken) {
        let mut inner = self.calls.inner();
        let early: VecDeque<ProgressNotificationParam> = {
            let (mine, others) = inner.early.drain(..).partition(|p| p.progress_token == token);
            inner.early = others;
            mine
        };
        if let Some(running) = inner.running.iter_mut().find(|r| r.id == self.id) {
            for params in early {
                deliver(running.notes.as_ref(), progress(params));
            }
            running.token = Some(token);
        }
    }
}

impl Drop for Started<'_> {
    fn drop(&mut self) {
        self.calls.inner().running.retain(|r| r.id != self.id);
    }
}

/// `tools/call` on `peer`, as rmcp's `Peer::call_tool` sends it (with a progress token, and
/// `notifications/cancelled` when the caller gives up before the answer), the call known to
/// `calls` while it runs so that what the server says of it reaches `context.notes`.
pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    calls: &Calls,
    params: CallToolRequestParams,
    context: &CallContext,
) -> Result<CallToolResult, ServiceError> {
    let started = calls.start(context.notes.clone());
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    started.token(handle.progress_token.clone());
    let mut abandoned = Abandoned(Some((peer.clone(), handle.id.clone())));
    let answer = handle.await_response().await;
    abandoned.0 = None;
    match answer? {
        ServerResult::CallToolResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// A request whose caller gave up: the server is told to stop (`notifications/cancelled`).
struct Abandoned(Option<(Peer<RoleClient>, RequestId)>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        if let Some((peer, id)) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let reason = Some("the caller gave up".to_owned());
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await;
            });
        }
    }
}

fn deliver(notes: Option<&Arc<dyn Progress>>, note: Note) {
    if let Some(notes) = notes {
        notes.relay(note);
    }
}

fn progress(params: ProgressNotificationParam) -> Note {
    Note::Progress {
        progress: params.progress,
        total: params.total,
        message: params.message,
    }
}

/// MCP's level as core's.
pub(crate) fn level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[derive(Debug, Default)]
    struct Heard(Mutex<Vec<Note>>);

    impl Progress for Heard {
        fn step(&self, _: usize, _: usize, _: &str, _: &toolhost_core::StepOutcome) {}
        fn relay(&self, note: Note) {
            self.0.lock().unwrap().push(note);
        }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    #[test]
    fn progress_goes_to_its_token_even_before_it_is_known_and_logs_only_to_a_lone_call() {
        let calls = Calls::default();
        let (a, b) = (Arc::new(Heard::default()), Arc::new(Heard::default()));
        let first = calls.start(Some(a.clone()));
        calls.progress(ProgressNotificationParam::new(token(1), 1.0));
        calls.log(LoggingMessageNotificationParam::new(LoggingLevel::Info, "one".into()));
        first.token(token(1));
        let second = calls.start(Some(b.clone()));
        second.token(token(2));
        calls.progress(ProgressNotificationParam::new(token(2), 5.0));
        calls.log(LoggingMessageNotificationParam::new(
            LoggingLevel::Info,
            "whose?".into(),
        ));
        let heard = |h: &Heard| h.0.lock().unwrap().clone();
        let progress = |p: f64| Note::Progress {
            progress: p,
            total: None,
            message: None,
        };
        let log = Note::Log {
            level: LogLevel::Info,
            logger: None,
            data: "one".into(),
        };
        assert_eq!(heard(&a), vec![log, progress(1.0)]);
        assert_eq!(
            heard(&b),
            vec![progress(5.0)],
            "a log with two calls running reaches neither"
        );
        drop(first);
        calls.log(LoggingMessageNotificationParam::new(LoggingLevel::Debug, "two".into()));
        assert_eq!(heard(&b).len(), 2);
    }
}
