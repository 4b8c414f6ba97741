//! A bounded MCP session table (`--mcp-sessions`): at most `max` sessions, each closed after
//! `idle` without a request, and the longest-idle one closed to make room for a new client
//! rather than refusing it (issue #21.8: abandoned `initialize` calls used to pile up at about
//! 100 KB each, without limit).
//!
//! It wraps rmcp's [`LocalSessionManager`] and only decides *which* sessions live; rmcp keeps
//! running them. A client whose session was closed gets 404 on its next request, which the MCP
//! streamable HTTP transport defines as "start a new session".
//!
//! Each request's response stream is made resumable here ([`super::resume`]): `create_stream`
//! hands rmcp's stream to [`Streams::open`], and a `GET` with `Last-Event-ID` resumes it for the
//! same session and caller.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::Stream;
use futures_util::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionError,
};

use super::resume::Streams;

/// How often, at most, a new session also sweeps out the expired ones.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// rmcp's session manager with a cap and an idle expiry.
#[derive(Debug)]
pub struct Bounded {
    inner: LocalSessionManager,
    streams: Arc<Streams>,
    table: Mutex<Table>,
    max: usize,
    idle: Duration,
    open: metrics::Gauge,
    evicted: metrics::Counter,
}

#[derive(Debug)]
struct Table {
    /// Every live session and when it last saw a request.
    last_used: HashMap<SessionId, Instant>,
    last_sweep: Instant,
}

impl Bounded {
    /// A table of at most `max` sessions (at least 1), each closed after `idle` without a request.
    pub fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        // rmcp's own idle timer stops the session's worker (which holds its memory); the table
        // below drops the handle that rmcp's map would otherwise keep.
        inner.session_config.keep_alive = Some(idle);
        // A request's stream opens with this table's own event (`resume.rs`), not rmcp's.
        inner.session_config.sse_retry = None;
        Self {
            inner,
            streams: Arc::default(),
            table: Mutex::new(Table {
                last_used: HashMap::new(),
                last_sweep: Instant::now(),
            }),
            max: max.max(1),
            idle,
            open: metrics::gauge!("toolhost_mcp_sessions"),
            evicted: metrics::counter!("toolhost_mcp_sessions_closed_total", "reason" => "evicted"),
        }
    }

    /// The same table, its open sessions reported in `open` rather than `toolhost_mcp_sessions`
    /// (an agent's endpoint has a table of its own, issue #33; one gauge set by two tables
    /// would show whichever changed last).
    pub fn counted_as(mut self, open: metrics::Gauge) -> Self {
        self.open = open;
        self
    }

    /// The same table, its request streams kept in `streams`, which the handler shares to let
    /// go of a long call's connection (`execution: { release_after_ms }`).
    pub(crate) fn resumable_in(mut self, streams: Arc<Streams>) -> Self {
        self.streams = streams;
        self
    }

    /// The number of sessions in the table.
    pub fn len(&self) -> usize {
        self.lock().last_used.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a request on `id`; false when the table no longer has it.
    fn touch(&self, id: &SessionId) -> bool {
        match self.lock().last_used.get_mut(id) {
            Some(at) => {
                *at = Instant::now();
                true
            }
            None => false,
        }
    }

    /// Takes out of the table the sessions to close before one more can open: the expired ones
    /// (at most once per [`SWEEP_EVERY`]) and, when still full, the longest idle.
    fn make_room(&self) -> Vec<SessionId> {
        let now = Instant::now();
        let mut table = self.lock();
        let mut closing = Vec::new();
        if now.duration_since(table.last_sweep) >= SWEEP_EVERY {
            table.last_sweep = now;
            let idle = self.idle;
            table.last_used.retain(|id, at| {
                let keep = now.duration_since(*at) < idle;
                if !keep {
                    closing.push(id.clone());
                }
                keep
            });
        }
        while table.last_used.len() >= self.max {
            let Some(oldest) = table
                .last_used
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            table.last_used.remove(&oldest);
            self.evicted.increment(1);
            closing.push(oldest);
        }
        closing
    }

    async fn close(&self, ids: Vec<SessionId>) {
        for id in ids {
            self.streams.close(&id);
            // A session whose worker already stopped (idle) is simply removed.
            if let Err(error) = self.inner.close_session(&id).await {
                tracing::debug!(%error, "closing an MCP session");
            }
        }
    }

    fn not_found(id: &SessionId) -> LocalSessionManagerError {
        LocalSessionManagerError::SessionNotFound(id.clone())
    }
}

impl SessionManager for Bounded {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let closing = self.make_room();
        self.close(closing).await;
        let (id, transport) = self.inner.create_session().await?;
        let len = {
            let mut table = self.lock();
            table.last_used.insert(id.clone(), Instant::now());
            table.last_used.len()
        };
        self.open.set(len as f64);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.touch(id) && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let len = {
            let mut table = self.lock();
            table.last_used.remove(id);
            table.last_used.len()
        };
        self.open.set(len as f64);
        self.streams.close(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.to_string()),
            ClientJsonRpcMessage::Notification(_)
            | ClientJsonRpcMessage::Response(_)
            | ClientJsonRpcMessage::Error(_) => None,
        };
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.streams.open(id, super::caller_id(), request, stream))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::not_found(id));
        }
        match self.streams.resume(id, &super::caller_id(), &last_event_id) {
            Some(Ok(stream)) => Ok(stream.left_stream()),
            // rmcp answers an empty stream, and logs why: a stranger learns nothing.
            Some(Err(super::resume::Refusal::Unknown)) => Err(SessionError::InvalidEventId.into()),
            None => Ok(self.inner.resume(id, last_event_id).await?.right_stream()),
        }
    }
}
