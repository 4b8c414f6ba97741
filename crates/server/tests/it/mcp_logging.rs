//! `logging/setLevel` (issue #39.2) with `--mcp-sessions`: once a level is set, each
//! `tools/call` is followed by one `notifications/message` on the session's stream (rmcp sends
//! log messages on the standalone GET stream) with the call's outcome at `info` (a result) or
//! `warning` (a failure, with the text the result carries), filtered by the level; nothing
//! before a level is set. A stateless server declares no `logging` and says why.

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_sessions::post;
use crate::mcp_subscriptions::{open_session, refuses_statelessly};
use crate::support::Spawn;

/// The log messages that arrive on `stream` within `wait` (stops at the first).
async fn heard(stream: &mut reqwest::Response, wait: Duration) -> Vec<Value> {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, stream.chunk()).await {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains("notifications/message") && seen.ends_with("\n\n") {
            break;
        }
    }
    seen.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"].clone())
        .collect()
}

#[tokio::test]
async fn a_session_at_a_level_hears_each_calls_outcome() {
    let server = Spawn::bundled().with_config(|c| c.mcp.sessions = true).start().await;
    let (session, answer, mut stream) = open_session(&server).await;
    assert!(answer.contains(r#""logging":{}"#), "{answer}");
    let send = |id: u64, method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let server = &server;
        let session = session.clone();
        async move { post(server, Some(&session), body).await.text().await.unwrap() }
    };
    let add = json!({"name": "add_numbers", "arguments": {"a": 1, "b": 2}});
    let divide = json!({"name": "divide_numbers", "arguments": {"dividend": 1, "divisor": 0}});
    let quiet = Duration::from_millis(500);

    send(2, "tools/call", add.clone()).await;
    assert_eq!(heard(&mut stream, quiet).await, Vec::<Value>::new(), "no level set yet");

    assert!(
        send(3, "logging/setLevel", json!({"level": "info"}))
            .await
            .contains(r#""result":{}"#)
    );
    send(4, "tools/call", add).await;
    let logged = heard(&mut stream, Duration::from_secs(10)).await;
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(
        (&logged[0]["level"], &logged[0]["logger"]),
        (&json!("info"), &json!("toolhost"))
    );
    assert_eq!(
        (&logged[0]["data"]["tool"], &logged[0]["data"]["outcome"]),
        (&json!("add_numbers"), &json!("ok"))
    );
    assert!(logged[0]["data"]["ms"].is_u64(), "{logged:?}");

    send(5, "tools/call", divide.clone()).await;
    let logged = heard(&mut stream, Duration::from_secs(10)).await;
    assert_eq!(logged[0]["level"], "warning", "{logged:?}");
    assert!(
        logged[0]["data"]["message"]
            .as_str()
            .unwrap()
            .contains("non-zero divisor"),
        "{logged:?}"
    );

    send(6, "logging/setLevel", json!({"level": "error"})).await;
    send(7, "tools/call", divide).await;
    assert_eq!(
        heard(&mut stream, quiet).await,
        Vec::<Value>::new(),
        "a warning is below `error`"
    );
}

#[tokio::test]
async fn a_stateless_server_takes_no_log_level_and_says_why() {
    let server = Spawn::bundled().start().await;
    refuses_statelessly(&server, r#""logging""#, "logging/setLevel", json!({"level": "info"})).await;
}
