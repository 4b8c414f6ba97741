//! Issue #12: a request that changes something and may have reached the upstream before the
//! answer was lost has an unknown outcome. The failure says so, is never retryable and tells the
//! model to check first; the upstream sees the request exactly once. Connecting failures (nothing
//! sent) and idempotent steps stay retryable.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolhost_core::ToolFailure;
use toolhost_core::backend::{OUTCOME_UNKNOWN_CODE, OUTCOME_UNKNOWN_PROMPT};

use crate::support::{call, engine, failure, serve, tool};

const TITLE: &str = r#"[{name: title, description: "A title."}]"#;
const OUT: &str = r#"[{name: value, type: json, required: false, description: "v"}]"#;

/// What a raw upstream does after reading a whole request.
#[derive(Clone, Copy)]
enum After {
    /// Closes the connection without a word (the upstream acted, then crashed).
    Drop,
    /// Holds the connection open, answering nothing, for this long.
    Stall(Duration),
}

/// A raw upstream on 127.0.0.1 that reads each request in full, counts it, then does `after`.
async fn raw_upstream(after: After, requests: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let requests = Arc::clone(&requests);
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buffer = [0u8; 4096];
                // Read the head, then the body its Content-Length announces.
                let body_start = loop {
                    let Ok(n) = socket.read(&mut buffer).await else { return };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buffer[..n]);
                    if let Some(i) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&seen[..body_start]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                while seen.len() < body_start + length {
                    let Ok(n) = socket.read(&mut buffer).await else { return };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buffer[..n]);
                }
                requests.fetch_add(1, Ordering::SeqCst);
                match after {
                    After::Drop => {
                        let _ = socket.shutdown().await;
                    }
                    After::Stall(time) => tokio::time::sleep(time).await,
                }
            });
        }
    });
    base
}

fn create(method: &str, extra: &str) -> String {
    format!(
        "kind: http\nbase_url: BASE\nsteps:\n  - name: create\n    method: {method}\n    path: /tickets\n    body: {{ title: \"{{{{input.title}}}}\" }}\n{extra}outputs: {{ value: create.body }}\n"
    )
}

#[track_caller]
fn assert_unknown(f: &ToolFailure) {
    assert!(f.outcome_unknown, "{f:?}");
    assert!(!f.retryable, "an unknown outcome is never retryable: {f:?}");
    assert_eq!(f.code.as_deref(), Some(OUTCOME_UNKNOWN_CODE));
    assert_eq!(f.prompt.as_deref(), Some(OUTCOME_UNKNOWN_PROMPT));
    assert!(
        f.message.contains("check"),
        "tells the model to check first: {}",
        f.message
    );
    assert!(
        !f.message.contains("try again;") && !f.message.ends_with("try again"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_post_whose_connection_drops_after_sending_is_an_unknown_outcome_sent_once() {
    let requests = Arc::new(AtomicUsize::new(0));
    let base = raw_upstream(After::Drop, Arc::clone(&requests)).await;
    // Retries configured, and still the upstream must see one request.
    let engine = engine(&tool(TITLE, OUT, &create("POST", "    retries: 3\n")), &base, &[]);
    let f = failure(call(&engine, json!({"title": "printer on fire"})).await);
    assert_unknown(&f);
    let detail = f.developer_message.clone().unwrap_or_default();
    assert!(detail.contains("step `create`"), "{detail}");
    assert_eq!(requests.load(Ordering::SeqCst), 1, "one call, one ticket");
}

#[tokio::test]
async fn a_post_that_times_out_after_sending_is_an_unknown_outcome() {
    let requests = Arc::new(AtomicUsize::new(0));
    let base = raw_upstream(After::Stall(Duration::from_secs(3)), Arc::clone(&requests)).await;
    let engine = engine(
        &tool(TITLE, OUT, &create("POST", "    timeout_ms: 300\n    retries: 2\n")),
        &base,
        &[],
    );
    let f = failure(call(&engine, json!({"title": "x"})).await);
    assert_unknown(&f);
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

/// The version's own timeout (not a step's) cuts the call while the POST waits for its answer.
#[tokio::test]
async fn a_post_cut_by_the_versions_timeout_is_an_unknown_outcome() {
    let requests = Arc::new(AtomicUsize::new(0));
    let base = raw_upstream(After::Stall(Duration::from_secs(3)), Arc::clone(&requests)).await;
    let text = tool(TITLE, OUT, &create("POST", "")).replace("timeout_ms: 5000", "timeout_ms: 300");
    let engine = engine(&text, &base, &[]);
    let f = failure(call(&engine, json!({"title": "x"})).await);
    assert_unknown(&f);
    assert_eq!(requests.load(Ordering::SeqCst), 1);

    // A tool whose request is idempotent, cut the same way, is a plain (retryable) timeout.
    let text =
        tool(TITLE, OUT, &create("PUT", "    idempotent: true\n")).replace("timeout_ms: 5000", "timeout_ms: 300");
    let engine = crate::support::engine(&text, &base, &[]);
    let result = call(&engine, json!({"title": "x"})).await;
    match result {
        Err(toolhost_core::Error::Timeout { .. }) => {}
        Err(toolhost_core::Error::Failed { failure, .. }) => {
            assert!(failure.retryable && !failure.outcome_unknown, "{failure:?}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_idempotent_step_whose_connection_drops_stays_retryable() {
    let requests = Arc::new(AtomicUsize::new(0));
    let base = raw_upstream(After::Drop, Arc::clone(&requests)).await;
    let engine = engine(&tool(TITLE, OUT, &create("PUT", "    idempotent: true\n")), &base, &[]);
    let f = failure(call(&engine, json!({"title": "x"})).await);
    assert!(!f.outcome_unknown && f.retryable, "{f:?}");
    assert_eq!(f.code.as_deref(), Some("upstream_error"));
}

#[tokio::test]
async fn a_post_that_cannot_connect_stays_retryable() {
    // A port that was free a moment ago: nothing listens, so nothing was sent.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let engine = engine(&tool(TITLE, OUT, &create("POST", "")), &closed, &[]);
    let f = failure(call(&engine, json!({"title": "x"})).await);
    assert!(!f.outcome_unknown && f.retryable, "{f:?}");
    assert_eq!(f.code.as_deref(), Some("upstream_unreachable"));
}

/// A tool that created something and then failed on a later step is partly done: retrying it
/// would create it again.
#[tokio::test]
async fn a_failure_after_a_post_step_succeeded_is_an_unknown_outcome() {
    let creates = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&creates);
    let upstream = serve(
        Router::new()
            .route(
                "/tickets",
                post(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async { axum::Json(json!({"id": 7})) }
                }),
            )
            .route(
                "/tickets/{id}",
                get(|| async { axum::http::StatusCode::SERVICE_UNAVAILABLE }),
            ),
    )
    .await;
    let backend = "kind: http\nbase_url: BASE\nsteps:\n  - name: create\n    method: POST\n    path: /tickets\n    body: { title: \"{{input.title}}\" }\n  - name: fetch\n    path: /tickets/{{create.body.id}}\noutputs: { value: fetch.body }\n";
    let two_steps = engine(&tool(TITLE, OUT, backend), &upstream.base, &[]);
    let f = failure(call(&two_steps, json!({"title": "x"})).await);
    assert!(f.outcome_unknown && !f.retryable, "{f:?}");
    assert!(f.message.contains("part of this request"), "{}", f.message);
    assert_eq!(creates.load(Ordering::SeqCst), 1);

    // The same tool whose output cannot be read after the POST acted: also not retryable.
    let upstream =
        serve(Router::new().route("/tickets", post(|| async { axum::Json(json!({"unexpected": true})) }))).await;
    let backend = "kind: http\nbase_url: BASE\nsteps:\n  - name: create\n    method: POST\n    path: /tickets\noutputs: { value: create.body.id }\n";
    let outputs = r#"[{name: value, type: json, description: "v"}]"#;
    let unreadable = engine(&tool(TITLE, outputs, backend), &upstream.base, &[]);
    let f = failure(call(&unreadable, json!({"title": "x"})).await);
    assert!(f.outcome_unknown && !f.retryable, "{f:?}");
}
