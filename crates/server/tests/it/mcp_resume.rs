//! Resumable request streams with `--mcp-sessions` (SEP-1699, issue #39): a call's SSE response
//! carries event ids; a client whose connection dropped mid-call, or whose connection the server
//! let go of (`execution: { release_after_ms }`), reconnects with `GET` and `Last-Event-ID` and
//! receives the rest of the call, each event once, in order. Another session or another caller
//! presenting the same id receives nothing.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolhost_core::{CallContext, StepOutcome, ToolFailure};
use toolhost_server::auth::{ApiKey, Authenticator, hash_key};

use crate::mcp_sessions::client;
use crate::support::{Server, Spawn, yaml};

const CATALOG: &str = r#"toolkits:
  - name: Slow
    description: Calls that take their time.
    tools:
      - name: ponder
        description: Thinks for a second in two steps; lets go of the caller's connection after 200 ms.
        execution: { release_after_ms: 200 }
        versions:
          - version: 1.0.0
            outputs:
              - { name: text, type: string, description: The thought. }
            backend: { kind: native, function: slow.two_steps, delay_ms: 1000 }
      - name: brood
        description: Thinks for a second in two steps, holding the connection.
        versions:
          - version: 1.0.0
            outputs:
              - { name: text, type: string, description: The thought. }
            backend: { kind: native, function: slow.two_steps, delay_ms: 1000 }
      - name: blurt
        description: Answers at once, though it may let go of the connection after a second.
        execution: { release_after_ms: 1000 }
        versions:
          - version: 1.0.0
            outputs:
              - { name: text, type: string, description: The thought. }
            backend: { kind: native, function: slow.two_steps }
"#;

/// Reports two steps, then answers.
fn two_steps(_: &Map<String, Value>, context: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    if let Some(progress) = &context.progress {
        progress.step(1, 2, "think", &StepOutcome::Done);
        progress.step(2, 2, "conclude", &StepOutcome::Done);
    }
    let mut output = Map::new();
    output.insert("text".into(), "Thought through.".into());
    Ok(output)
}

async fn start(configure: fn(&mut toolhost_server::Config)) -> Server {
    Spawn::new(vec![yaml("slow.yaml", CATALOG)])
        .with_function("slow.two_steps", two_steps)
        .with_config(configure)
        .start()
        .await
}

fn sessions(config: &mut toolhost_server::Config) {
    config.mcp.sessions = true;
}

fn keyed(config: &mut toolhost_server::Config) {
    config.mcp.sessions = true;
    let keys = ["alice", "mallory"]
        .map(|name| ApiKey::new(name, &hash_key(&format!("key-of-{name}")), vec![]).unwrap())
        .to_vec();
    config.auth = Arc::new(Authenticator::new(keys, vec![]));
}

/// One SSE event as the client reads it.
#[derive(Debug, Clone, Default)]
struct Event {
    id: Option<String>,
    retry: Option<u64>,
    data: String,
}

impl Event {
    fn message(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }

    fn is_result(&self, id: u64) -> bool {
        self.message()
            .is_some_and(|m| m["id"] == id && m.get("result").is_some())
    }
}

/// Reads `response`'s events until `enough` says so or the stream ends (`true` when it ended).
async fn read(response: &mut reqwest::Response, enough: impl Fn(&[Event]) -> bool) -> (Vec<Event>, bool) {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let events = parse(&text);
        if enough(&events) {
            return (events, false);
        }
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(Ok(None) | Err(_)) => return (parse(&text), true),
            Err(_) => panic!("the stream neither ended nor said enough: {text}"),
        }
    }
}

/// The complete events of an SSE text (keep-alive comments left out).
fn parse(text: &str) -> Vec<Event> {
    let complete = text.rfind("\n\n").map_or("", |end| &text[..end]);
    complete
        .split("\n\n")
        .filter_map(|block| {
            let mut event = Event::default();
            let mut any = false;
            for line in block.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => event.id = Some(value.to_owned()),
                    "retry" => event.retry = value.parse().ok(),
                    "data" => event.data.push_str(value),
                    _ => continue,
                }
                any = true;
            }
            any.then_some(event)
        })
        .collect()
}

/// A client of protocol 2025-11-25 in a session of its own, with `key` (an API key) if any.
struct Client<'s> {
    server: &'s Server,
    key: Option<&'static str>,
    session: String,
}

impl<'s> Client<'s> {
    async fn connect(server: &'s Server, key: Option<&'static str>) -> Self {
        let mut client = Self {
            server,
            key,
            session: String::new(),
        };
        let reply = client
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "resuming-client", "version": "1"}}}))
            .await;
        assert_eq!(reply.status(), 200);
        client.session = reply.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let _ = reply.bytes().await;
        let notified = client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(notified.status(), 202);
        client
    }

    fn request(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let request = request
            .header("mcp-protocol-version", "2025-11-25")
            .header("accept", "application/json, text/event-stream");
        let request = match self.key {
            Some(key) => request.header("authorization", format!("Bearer {key}")),
            None => request,
        };
        if self.session.is_empty() {
            request
        } else {
            request.header("mcp-session-id", &self.session)
        }
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        self.request(client().post(format!("{}/mcp", self.server.base)))
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// `tools/call` of `tool` as request `id`, with a progress token.
    async fn call(&self, id: u64, tool: &str) -> reqwest::Response {
        let reply = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": tool, "arguments": {}, "_meta": {"progressToken": format!("p{id}")}}}))
            .await;
        assert_eq!(reply.status(), 200);
        assert!(
            reply.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream"),
            "a session's call answers on an SSE stream"
        );
        reply
    }

    /// The `GET` that resumes after `last`.
    async fn resume(&self, last: &str) -> reqwest::Response {
        let reply = self
            .request(client().get(format!("{}/mcp", self.server.base)))
            .header("last-event-id", last)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        reply
    }
}

fn progress(events: &[Event]) -> Vec<u64> {
    events
        .iter()
        .filter_map(Event::message)
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap() as u64)
        .collect()
}

fn ids(events: &[Event]) -> Vec<String> {
    events.iter().filter_map(|e| e.id.clone()).collect()
}

#[tokio::test]
async fn a_call_whose_connection_dropped_is_resumed_with_the_rest_exactly_once() {
    let server = start(sessions).await;
    let client = Client::connect(&server, None).await;
    let mut first = client.call(1, "brood").await;
    let (opening, _) = read(&mut first, |e| !e.is_empty()).await;
    assert!(opening[0].retry.is_some() && opening[0].data.is_empty(), "{opening:?}");
    let opened = opening[0].id.clone().expect("the opening event has an id");
    drop(first);

    let mut rest = client.resume(&opened).await;
    let (events, ended) = read(&mut rest, |_| false).await;
    assert!(ended, "the resumed stream ends with the call");
    assert_eq!(progress(&events), [1, 2], "both steps, in order: {events:?}");
    assert_eq!(events.iter().filter(|e| e.is_result(1)).count(), 1, "{events:?}");
    assert!(events.last().unwrap().is_result(1), "the result comes last: {events:?}");
    assert!(!ids(&events).contains(&opened), "what the client had is not sent again");

    // Resuming from the first step, once more: exactly what came after it.
    let after_first = events[0].id.clone().unwrap();
    let (again, ended) = read(&mut client.resume(&after_first).await, |_| false).await;
    assert!(ended);
    assert_eq!(ids(&again), ids(&events)[1..], "{again:?}");
}

#[tokio::test]
async fn the_server_lets_go_of_a_long_calls_connection_and_the_client_resumes_it() {
    let server = start(sessions).await;
    let client = Client::connect(&server, None).await;
    let mut first = client.call(1, "ponder").await;
    let (events, ended) = read(&mut first, |_| false).await;
    assert!(ended, "the server closed the stream mid-call");
    assert!(
        !events.iter().any(|e| e.is_result(1)),
        "no result before the release: {events:?}"
    );
    let last = events.last().unwrap();
    assert!(
        last.retry.is_some() && last.id.is_some() && last.data.is_empty(),
        "an event with an id and a retry hint comes before the close: {events:?}"
    );

    let (rest, ended) = read(&mut client.resume(last.id.as_deref().unwrap()).await, |_| false).await;
    assert!(ended);
    assert_eq!(progress(&rest), [1, 2], "{rest:?}");
    let result = rest.last().unwrap().message().unwrap();
    assert_eq!(result["id"], 1);
    assert_eq!(
        result["result"]["structuredContent"]["text"], "Thought through.",
        "{result}"
    );
    assert_eq!(rest.iter().filter(|e| e.is_result(1)).count(), 1);

    // A call that answers before its release time holds its connection to the end.
    let (quick, ended) = read(&mut client.call(2, "blurt").await, |_| false).await;
    assert!(ended && quick.last().unwrap().is_result(2), "{quick:?}");
}

#[tokio::test]
async fn another_session_or_another_caller_resumes_nothing() {
    let server = start(keyed).await;
    let alice = Client::connect(&server, Some("key-of-alice")).await;
    let mut first = alice.call(1, "brood").await;
    let (opening, _) = read(&mut first, |e| !e.is_empty()).await;
    let opened = opening[0].id.clone().unwrap();
    drop(first);

    // Mallory, with Alice's session id and event id but her own key.
    let mallory = Client {
        server: &server,
        key: Some("key-of-mallory"),
        session: alice.session.clone(),
    };
    let (stolen, ended) = read(&mut mallory.resume(&opened).await, |_| false).await;
    assert!(ended && stolen.is_empty(), "another caller gets nothing: {stolen:?}");
    // Alice's own second session does not reach the first one's stream either.
    let elsewhere = Client::connect(&server, Some("key-of-alice")).await;
    let (crossed, ended) = read(&mut elsewhere.resume(&opened).await, |_| false).await;
    assert!(ended && crossed.is_empty(), "another session gets nothing: {crossed:?}");
    // A made-up id of the same form, likewise.
    let (made_up, ended) = read(&mut alice.resume("0123456789abcdef0123456789abcdef.0").await, |_| false).await;
    assert!(ended && made_up.is_empty());

    // Alice herself, in her session, still gets the whole rest: the attempts took nothing.
    let (rest, ended) = read(&mut alice.resume(&opened).await, |_| false).await;
    assert!(ended);
    assert_eq!(progress(&rest), [1, 2], "{rest:?}");
    assert!(rest.last().unwrap().is_result(1), "{rest:?}");
}
