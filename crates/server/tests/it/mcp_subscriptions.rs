//! `resources/subscribe` (issue #39.5) with `--mcp-sessions`: after a catalog reload a
//! subscribed resource whose contents changed is announced on the session's stream
//! (`notifications/resources/updated`), an unchanged one is not, and after `unsubscribe`
//! nothing is. A stateless server declares no `subscribe` and says why it keeps none.

use std::time::Duration;

use serde_json::{Value, json};
use toolhost_core::Source;
use toolhost_core::catalog::Loader;

use crate::mcp_sessions::{client, post};
use crate::support::{Server, Spawn};

const SESSION: &str = "mcp-session-id";

fn docs(text: &str) -> Source {
    Source {
        name: "docs.yaml".into(),
        text: format!("resources:\n  - {{ uri: \"docs://style\", name: style, text: \"{text}\" }}\n"),
    }
}

/// `initialize`; the session id (with sessions on) and the answer.
pub(crate) async fn initialize(server: &Server) -> (Option<String>, String) {
    let init = post(
        server,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    let session = init.headers().get(SESSION).map(|v| v.to_str().unwrap().to_owned());
    (session, init.text().await.unwrap())
}

/// A session, initialized: its id, the `initialize` answer and its standalone GET stream.
pub(crate) async fn open_session(server: &Server) -> (String, String, reqwest::Response) {
    let (session, answer) = initialize(server).await;
    let session = session.expect("a session id");
    let _ = post(
        server,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let stream = client()
        .get(format!("{}/mcp", server.base))
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header(SESSION, &session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    (session, answer, stream)
}

/// Serves a new catalog: the bundled one and `docs.yaml` with `text`.
fn reload(server: &Server, text: &str) {
    let mut sources = toolhost_core::native::bundled_catalog();
    sources.push(docs(text));
    server.engine.replace(Loader::default().load(&sources).unwrap());
}

/// What arrives on `stream` within `wait`, as text.
async fn read_for(stream: &mut reqwest::Response, wait: Duration) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, stream.chunk()).await {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains("notifications/resources/updated") {
            // Let a second notification, if one was (wrongly) sent, arrive too.
            if let Ok(Ok(Some(more))) = tokio::time::timeout(Duration::from_millis(300), stream.chunk()).await {
                seen.push_str(&String::from_utf8_lossy(&more));
            }
            break;
        }
    }
    seen
}

#[tokio::test]
async fn a_session_hears_of_a_changed_resource_after_a_reload_until_it_unsubscribes() {
    let server = Spawn::bundled()
        .with_sources(vec![docs("Write plainly.")])
        .with_config(|c| c.mcp.sessions = true)
        .start()
        .await;
    let (session, answer, mut stream) = open_session(&server).await;
    assert!(answer.contains(r#""subscribe":true"#), "{answer}");
    for (id, uri) in [(2, "docs://style"), (3, "toolhost://tools/add_numbers")] {
        let reply = post(
            &server,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}}),
        )
        .await
        .text()
        .await
        .unwrap();
        assert!(reply.contains(r#""result":{}"#), "{reply}");
    }
    let missing = post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": {"uri": "docs://nothing"}}),
    )
    .await
    .text()
    .await
    .unwrap();
    assert!(
        missing.contains("-32602") && missing.contains("docs://nothing"),
        "{missing}"
    );

    reload(&server, "Write very plainly.");
    let heard = read_for(&mut stream, Duration::from_secs(10)).await;
    assert!(heard.contains(r#""uri":"docs://style""#), "{heard}");
    assert!(
        !heard.contains("add_numbers"),
        "an unchanged resource is not announced: {heard}"
    );

    let _ = post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/unsubscribe", "params": {"uri": "docs://style"}}),
    )
    .await
    .text()
    .await;
    reload(&server, "Write plainly again.");
    let heard = read_for(&mut stream, Duration::from_secs(1)).await;
    assert!(!heard.contains("resources/updated"), "unsubscribed, yet: {heard}");
}

#[tokio::test]
async fn a_stateless_server_keeps_no_subscriptions_and_says_why() {
    let server = Spawn::bundled()
        .with_sources(vec![docs("Write plainly.")])
        .start()
        .await;
    refuses_statelessly(
        &server,
        r#""subscribe":true"#,
        "resources/subscribe",
        json!({"uri": "docs://style"}),
    )
    .await;
}

/// Asserts a stateless `server` does not declare `capability` (as it appears in `initialize`)
/// and answers `method` method-not-found, pointing at `--mcp-sessions`.
pub(crate) async fn refuses_statelessly(server: &Server, capability: &str, method: &str, params: Value) {
    let (_, init) = initialize(server).await;
    assert!(!init.contains(capability), "{init}");
    let reply: Value = post(
        server,
        None,
        json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("--mcp-sessions"),
        "{reply}"
    );
}
