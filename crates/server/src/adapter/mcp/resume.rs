//! Resumable request streams for MCP sessions (SEP-1699, streamable HTTP "Resumability and
//! Redelivery"): every request's SSE response in a session is a stream whose events carry ids,
//! kept in a bounded buffer, so that a client whose connection dropped, or whose connection the
//! server let go of mid-call, reconnects with `GET` and `Last-Event-ID` and receives the rest,
//! each event once, in order.
//!
//! rmcp's session worker writes a request's messages into a channel; [`Streams::open`] takes
//! that channel over (the session table calls it from `create_stream`), numbers each message
//! `{stream}.{n}`, where `{stream}` is 128 random bits, keeps the last [`BUFFER`] of them, and
//! forwards them to whichever connection is attached. The stream is the session's and its
//! caller's: a `Last-Event-ID` presented in another session, or by another caller (the API key's
//! name, the JWT's issuer and subject, or `anonymous`), resumes nothing. A stream that ended is
//! kept [`KEEP`] for a late reconnection, at most [`PER_SESSION`] per session.
//!
//! A tool whose catalog entry says `execution: { release_after_ms: N }` has its stream let go
//! of after N ms when the call still runs (an event with an id and a `retry` hint, then the
//! end of the response): the connection is freed, the call runs on, and the client picks up
//! the result by resuming (docs/protocols.md §6).
//!
//! rmcp's own resumption is not used: it numbers a request stream's events by a counter per
//! session, replays the event the client already has, drops a stream's buffer as soon as its
//! response is written (so a result written while the client was away is lost), and its
//! pluggable event store replays by id alone, whoever asks.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::SessionId;
use tokio::sync::mpsc;

/// The events a stream keeps for a reconnection; past it the oldest go (progress and log
/// messages: the response is the last event, so it is always kept).
pub(crate) const BUFFER: usize = 64;
/// How long a stream that ended is kept for a client that reconnects late.
pub(crate) const KEEP: Duration = Duration::from_secs(60);
/// The streams a session keeps at most; the oldest that ended make room first.
pub(crate) const PER_SESSION: usize = 32;
/// The reconnection delay the client is told (SSE `retry`) when its stream opens and when the
/// server lets go of it.
pub(crate) const RETRY: Duration = Duration::from_millis(500);

/// Every resumable stream of one MCP endpoint's sessions.
#[derive(Debug, Default)]
pub struct Streams {
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    /// By stream id (the part of an event id before the dot).
    streams: HashMap<String, Arc<Record>>,
    /// A request's stream, by session and JSON-RPC request id, while it may still run.
    requests: HashMap<(SessionId, String), String>,
}

/// One request's stream.
#[derive(Debug)]
struct Record {
    id: String,
    session: SessionId,
    caller: String,
    opened: Instant,
    flow: Mutex<Flow>,
}

#[derive(Debug)]
struct Flow {
    /// The last events, by number.
    buffer: VecDeque<(u64, ServerSseMessage)>,
    next: u64,
    /// The connection the events go to now, if one is attached.
    attached: Option<mpsc::Sender<ServerSseMessage>>,
    /// When rmcp ended the stream (its response written, or the session closed).
    ended: Option<Instant>,
}

/// Why a `Last-Event-ID` resumes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No such stream: never opened, expired, or of another session or caller (one answer for
    /// all, so an id tells a stranger nothing).
    Unknown,
}

impl Streams {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes over `inner`, the messages rmcp writes for `request` (a JSON-RPC id) in `session`
    /// of `caller`, and answers the connection's stream: an opening event with an id and a
    /// `retry` hint, then the messages.
    pub(crate) fn open<S: Stream<Item = ServerSseMessage> + Send + 'static>(
        &self,
        session: &SessionId,
        caller: String,
        request: Option<String>,
        inner: S,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static + use<S> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let record = Arc::new(Record {
            id: id.clone(),
            session: session.clone(),
            caller,
            opened: Instant::now(),
            flow: Mutex::new(Flow {
                buffer: VecDeque::new(),
                next: 0,
                attached: None,
                ended: None,
            }),
        });
        let (sender, receiver) = channel();
        {
            let mut flow = record.flow();
            let opening = flow.push(&record.id, None);
            // A fresh channel has room for the whole buffer.
            let _ = sender.try_send(opening);
            flow.attached = Some(sender);
        }
        {
            let mut table = self.lock();
            table.sweep(session);
            if let Some(request) = request {
                table.requests.insert((session.clone(), request), id.clone());
            }
            table.streams.insert(id, Arc::clone(&record));
        }
        tokio::spawn(pump(record, inner));
        receive(receiver)
    }

    /// The rest of the stream after `last_event_id`, for `caller` in `session`: `None` when
    /// the id is not of a stream opened here (rmcp's standalone stream has its own ids).
    pub(crate) fn resume(
        &self,
        session: &SessionId,
        caller: &str,
        last_event_id: &str,
    ) -> Option<Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static + use<>, Refusal>> {
        let (stream, number) = last_event_id.split_once('.')?;
        let number: u64 = number.parse().ok()?;
        let record = {
            let mut table = self.lock();
            table.sweep(session);
            table.streams.get(stream).cloned()
        };
        let Some(record) = record.filter(|r| r.session == *session && r.caller == caller) else {
            return Some(Err(Refusal::Unknown));
        };
        let (sender, receiver) = channel();
        let mut flow = record.flow();
        for (_, event) in flow.buffer.iter().filter(|(n, _)| *n > number) {
            let _ = sender.try_send(event.clone());
        }
        // A stream still running sends the rest here; one that ended closes after the replay.
        // The connection attached before, if any, is let go of: one reader at a time.
        flow.attached = flow.ended.is_none().then_some(sender);
        Some(Ok(receive(receiver)))
    }

    /// Lets go of the connection of `request`'s stream in `session`, if it still runs: an event
    /// with an id and a `retry` hint, then the end of that response. The call runs on; the
    /// client resumes from that event.
    pub(crate) fn release(&self, session: &SessionId, request: &str) -> bool {
        let record = {
            let table = self.lock();
            let id = table.requests.get(&(session.clone(), request.to_owned()));
            id.and_then(|id| table.streams.get(id)).cloned()
        };
        let Some(record) = record else { return false };
        let mut flow = record.flow();
        if flow.ended.is_some() {
            return false;
        }
        let marker = flow.push(&record.id, None);
        if let Some(sender) = flow.attached.take() {
            let _ = sender.try_send(marker);
        }
        true
    }

    /// Lets go of `request`'s connection after `delay` unless the guard is dropped first (the
    /// call answered in time).
    pub(crate) fn release_after(self: &Arc<Self>, session: SessionId, request: String, delay: Duration) -> Release {
        let streams = Arc::clone(self);
        Release(tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if streams.release(&session, &request) {
                tracing::debug!(%session, %request, "let go of a running call's connection; the client resumes it");
            }
        }))
    }

    /// Forgets the streams of a session that closed.
    pub(crate) fn close(&self, session: &SessionId) {
        let mut table = self.lock();
        table.streams.retain(|_, r| r.session != *session);
        table.requests.retain(|(s, _), _| s != session);
    }

    /// The number of streams kept, for tests of the bounds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().streams.len()
    }
}

/// A pending [`Streams::release_after`]; dropping it cancels the release.
#[derive(Debug)]
pub(crate) struct Release(tokio::task::JoinHandle<()>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Table {
    /// Drops streams that ended more than [`KEEP`] ago, and the oldest ended ones of `session`
    /// past [`PER_SESSION`].
    fn sweep(&mut self, session: &SessionId) {
        let now = Instant::now();
        let mut ended: Vec<(Instant, String)> = Vec::new();
        let mut kept: usize = 0;
        self.streams.retain(|id, record| {
            let over = record.flow().ended;
            if over.is_some_and(|at| now.duration_since(at) >= KEEP) {
                return false;
            }
            if record.session == *session {
                kept += 1;
                if over.is_some() {
                    ended.push((record.opened, id.clone()));
                }
            }
            true
        });
        ended.sort();
        for (_, id) in ended.into_iter().take(kept.saturating_sub(PER_SESSION - 1)) {
            self.streams.remove(&id);
        }
        let streams = &self.streams;
        self.requests
            .retain(|_, id| streams.get(id).is_some_and(|r| r.flow().ended.is_none()));
    }
}

impl Record {
    fn flow(&self) -> MutexGuard<'_, Flow> {
        self.flow.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Flow {
    /// Numbers and keeps one event: a message, or (`None`) an empty one with the `retry` hint.
    fn push(&mut self, stream: &str, message: Option<Arc<ServerJsonRpcMessage>>) -> ServerSseMessage {
        let mut event = ServerSseMessage::default();
        event.event_id = Some(format!("{stream}.{}", self.next));
        event.retry = message.is_none().then_some(RETRY);
        event.message = message;
        self.next += 1;
        if self.buffer.len() == BUFFER {
            self.buffer.pop_front();
        }
        self.buffer.push_back((self.next - 1, event.clone()));
        event
    }
}

/// A connection's channel: room for a whole buffer's replay and the events after it.
fn channel() -> (mpsc::Sender<ServerSseMessage>, mpsc::Receiver<ServerSseMessage>) {
    mpsc::channel(BUFFER + 2)
}

fn receive(mut receiver: mpsc::Receiver<ServerSseMessage>) -> impl Stream<Item = ServerSseMessage> + Send + Sync {
    futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}

/// Moves rmcp's messages for one request into its record, and on to the attached connection.
async fn pump(record: Arc<Record>, inner: impl Stream<Item = ServerSseMessage> + Send + 'static) {
    let mut inner = std::pin::pin!(inner);
    while let Some(message) = inner.next().await {
        // rmcp's own opening events (no message) are replaced by this stream's.
        let Some(message) = message.message else { continue };
        let (event, sender) = {
            let mut flow = record.flow();
            let event = flow.push(&record.id, Some(message));
            (event, flow.attached.clone())
        };
        // Outside the lock: a slow reader holds up this request's stream, as it would without
        // resumption, and nothing else.
        if let Some(sender) = sender {
            let _ = sender.send(event).await;
        }
    }
    let mut flow = record.flow();
    flow.ended = Some(Instant::now());
    flow.attached = None;
}

#[cfg(test)]
mod tests {
    use rmcp::model::{EmptyResult, RequestId, ServerResult};

    use super::*;

    fn answer(id: i64) -> ServerSseMessage {
        let mut event = ServerSseMessage::default();
        event.message = Some(Arc::new(ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(id),
        )));
        event
    }

    async fn all(stream: impl Stream<Item = ServerSseMessage>) -> Vec<ServerSseMessage> {
        tokio::time::timeout(Duration::from_secs(5), stream.collect())
            .await
            .expect("the stream ends")
    }

    fn ids(events: &[ServerSseMessage]) -> Vec<String> {
        events.iter().map(|e| e.event_id.clone().unwrap_or_default()).collect()
    }

    #[tokio::test]
    async fn a_released_stream_resumes_with_the_rest_once_in_its_own_session_only() {
        let streams = Arc::new(Streams::default());
        let session: SessionId = "s1".into();
        let (rmcp, inner) = mpsc::channel(4);
        let first = streams.open(&session, "key:a".into(), Some("7".into()), receive(inner));
        rmcp.send(answer(1)).await.unwrap();
        // The pump moves it on its own task.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(streams.release(&session, "7"));
        let seen = all(first).await;
        assert_eq!(seen.len(), 3, "opening, one message, the release");
        assert!(seen[0].retry.is_some() && seen[0].message.is_none());
        assert!(seen[2].retry.is_some() && seen[2].message.is_none());
        let last = seen[2].event_id.clone().unwrap();

        rmcp.send(answer(2)).await.unwrap();
        drop(rmcp);
        let other: SessionId = "s2".into();
        assert!(matches!(
            streams.resume(&other, "key:a", &last),
            Some(Err(Refusal::Unknown))
        ));
        assert!(matches!(
            streams.resume(&session, "key:b", &last),
            Some(Err(Refusal::Unknown))
        ));
        assert!(
            streams.resume(&session, "key:a", "3/0").is_none(),
            "rmcp's own ids are its own"
        );
        let Some(Ok(rest)) = streams.resume(&session, "key:a", &last) else {
            panic!("resumes")
        };
        let rest = all(rest).await;
        assert_eq!(rest.len(), 1, "only what came after: {:?}", ids(&rest));
        assert!(rest[0].message.is_some());
        assert!(!ids(&seen).contains(&ids(&rest)[0]));
    }

    #[tokio::test]
    async fn a_buffer_keeps_its_last_events_and_a_session_its_last_streams() {
        let streams = Arc::new(Streams::default());
        let session: SessionId = "s".into();
        let (rmcp, inner) = mpsc::channel(BUFFER * 2);
        let stream = streams.open(&session, "anonymous".into(), None, receive(inner));
        drop(stream);
        for i in 0..(BUFFER as i64 * 2) {
            rmcp.send(answer(i)).await.unwrap();
        }
        drop(rmcp);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let first = {
            let table = streams.lock();
            table.streams.keys().next().cloned().unwrap()
        };
        let Some(Ok(replay)) = streams.resume(&session, "anonymous", &format!("{first}.0")) else {
            panic!()
        };
        let replay = all(replay).await;
        assert_eq!(replay.len(), BUFFER, "the last {BUFFER}");
        assert_eq!(replay.last().unwrap().event_id, Some(format!("{first}.{}", BUFFER * 2)));

        for _ in 0..(PER_SESSION + 5) {
            let (rmcp, inner) = mpsc::channel(1);
            drop(rmcp);
            drop(streams.open(&session, "anonymous".into(), None, receive(inner)));
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(streams.len() <= PER_SESSION, "{}", streams.len());
        streams.close(&session);
        assert_eq!(streams.len(), 0);
    }
}
