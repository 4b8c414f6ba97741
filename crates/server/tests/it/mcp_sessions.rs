//! The bounded MCP session table of `--mcp-sessions` (issue #21.8): abandoned `initialize` calls
//! no longer pile up without limit; the longest-idle session makes room for a new client, and an
//! idle one is closed. A closed session answers 404, which MCP's streamable HTTP transport
//! defines as "start a new session".

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{Server, Spawn};

const SESSION: &str = "mcp-session-id";

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// One JSON-RPC message over streamable HTTP, in `session` when given.
pub(crate) async fn post(server: &Server, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut request = client()
        .post(format!("{}/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&body);
    if let Some(id) = session {
        request = request.header(SESSION, id);
    }
    request.send().await.unwrap()
}

/// `initialize`, as a client that then walks away; the new session's id.
async fn initialize(server: &Server) -> String {
    let reply = post(
        server,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "abandoning-client", "version": "1"}}}),
    )
    .await;
    assert_eq!(reply.status(), StatusCode::OK);
    let id = reply.headers()[SESSION].to_str().unwrap().to_owned();
    let _ = reply.bytes().await;
    id
}

/// Whether the session still answers `tools/list`: 200, or 404 when it was closed.
async fn lists_tools(server: &Server, session: &str) -> bool {
    let reply = post(
        server,
        Some(session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    match reply.status() {
        StatusCode::OK => {
            let text = reply.text().await.unwrap();
            assert!(
                text.contains("add_numbers"),
                "tools/list answered without the tools: {text}"
            );
            true
        }
        StatusCode::NOT_FOUND => false,
        other => panic!("tools/list on session {session}: unexpected {other}"),
    }
}

/// A server with `--mcp-sessions` and the table settings `configure` makes.
async fn start(configure: fn(&mut toolhost_server::Config)) -> Server {
    Spawn::bundled().with_config(configure).start().await
}

fn sessions(config: &mut toolhost_server::Config, max: usize, idle: Duration) {
    config.mcp.sessions = true;
    config.mcp.max_sessions = max;
    config.mcp.session_idle = idle;
}

#[tokio::test]
async fn a_full_table_closes_the_longest_idle_session_not_the_new_client() {
    let server = start(|c| sessions(c, 3, Duration::from_secs(300))).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(initialize(&server).await);
    }
    // The first session is used again, so the second becomes the longest idle.
    assert!(lists_tools(&server, &sessions[0]).await);
    let newcomer = initialize(&server).await;
    assert!(lists_tools(&server, &newcomer).await, "a new client is never refused");
    assert!(
        !lists_tools(&server, &sessions[1]).await,
        "the longest-idle session makes room"
    );
    assert!(lists_tools(&server, &sessions[0]).await);
    assert!(lists_tools(&server, &sessions[2]).await);
}

#[tokio::test]
async fn many_abandoned_initialize_calls_stay_within_the_cap() {
    let server = start(|c| sessions(c, 20, Duration::from_secs(300))).await;
    let mut opened = Vec::new();
    for _ in 0..300 {
        opened.push(initialize(&server).await);
    }
    for (i, id) in opened
        .iter()
        .enumerate()
        .step_by(7)
        .chain(opened.iter().enumerate().skip(280))
    {
        assert_eq!(
            lists_tools(&server, id).await,
            i >= 280,
            "session {i} of 300 with a cap of 20"
        );
    }
    let metrics = client()
        .get(format!("{}/metrics", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let open: f64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("toolhost_mcp_sessions "))
        .unwrap_or_else(|| panic!("no toolhost_mcp_sessions gauge in /metrics:\n{metrics}"))
        .trim()
        .parse()
        .unwrap();
    // The gauge is process-wide and other tests run beside this one: it can only be bounded.
    assert!(open <= 20.0, "{open} sessions open, with at most 20 per server");
}

#[tokio::test]
async fn an_idle_session_is_closed() {
    let server = start(|c| sessions(c, 100, Duration::from_millis(300))).await;
    let idle = initialize(&server).await;
    // Idle expiry is about time: wait past it (and past the once-a-second sweep).
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let _fresh = initialize(&server).await;
    assert!(
        !lists_tools(&server, &idle).await,
        "a session idle past --mcp-session-idle-secs is closed"
    );
}
