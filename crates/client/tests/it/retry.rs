//! Retries: each protocol's own retry signal is honoured with backoff and the server's delay
//! (issue #31.10): an N-ACT 5xx (§7), an OTC `can_retry` (with a new `call_id`) or 5xx (with
//! the same one). Without such a signal (an answer lost after sending, a WoA 5xx not marked
//! `retryable`) a tool not marked idempotent is sent once (issue #12); 4xx, 422 and failures a
//! server marks final never are retried.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolhost_client::{Client, Error, Protocol, Source};

use crate::support::{Stub, client, page, serve, signature};

fn problem(status: u16, retryable: bool, detail: &str) -> Response {
    let body = json!({"type": "about:blank", "title": "t", "status": status, "detail": detail, "retryable": retryable, "prompt": "Try again later."});
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/problem+json")],
        body.to_string(),
    )
        .into_response()
}

/// An N-ACT server whose one tool answers `fail(n)` for attempt `n` until it returns `None`.
async fn nact(fail: fn(usize) -> Option<Response>) -> (String, Arc<AtomicUsize>) {
    nact_marked(false, fail).await
}

/// Like [`nact`], the tool carrying MCP's `idempotentHint` as an extension when `idempotent`.
async fn nact_marked(idempotent: bool, fail: fn(usize) -> Option<Response>) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let mut tool = signature("flaky", "Flaky.");
    if idempotent {
        tool["annotations"] = json!({"idempotentHint": true});
    }
    let listing = page(vec![tool]);
    let app = axum::Router::new()
        .route("/nact/tools", get(move || async move { Json(listing) }))
        .route(
            "/nact/tools/{*rest}",
            post(move || {
                let counter = Arc::clone(&counter);
                async move {
                    let n = counter.fetch_add(1, Ordering::SeqCst);
                    fail(n).unwrap_or_else(|| {
                        Json(json!({"output_parameters": [{"name": "n", "value": 7}]})).into_response()
                    })
                }
            }),
        );
    (serve(app).await, calls)
}

async fn call(base: &str, protocol: Protocol, tool: &str, input: Value) -> (Result<Value, Error>, Client) {
    let client = client(Stub::new(&[]));
    let server = client
        .discover_as(&Source::parse(base).unwrap(), Some(protocol))
        .await
        .unwrap();
    let tool = server.tool(tool).unwrap().clone();
    (client.call(&tool, input).await, client)
}

#[tokio::test]
async fn an_idempotent_tool_whose_server_fails_twice_then_succeeds() {
    let (base, calls) = nact_marked(true, |n| (n < 2).then(|| problem(503, true, "busy"))).await;
    let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
    assert_eq!(result.unwrap(), json!({"n": 7}));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn attempts_are_bounded() {
    let (base, calls) = nact_marked(true, |_| {
        Some((StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response())
    })
    .await;
    let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
    let err = result.unwrap_err();
    assert!(matches!(err, Error::Status { status: 500, .. }), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 3, "three attempts, then the error");
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let (base, calls) = nact_marked(true, |n| {
        (n == 0).then(|| {
            let mut response = problem(503, true, "busy");
            response.headers_mut().insert(header::RETRY_AFTER, "1".parse().unwrap());
            response
        })
    })
    .await;
    let started = Instant::now();
    let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
    assert!(result.is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
}

/// N-ACT §7: "if the request generates a 5xx, the executor SHOULD retry": the 5xx is the
/// server's statement, so a tool with no idempotency mark is retried too (issue #31.10).
#[tokio::test]
async fn an_nact_5xx_is_retried_whatever_the_tool() {
    for fail in [
        (|n| (n < 2).then(|| problem(503, true, "busy"))) as fn(usize) -> Option<Response>,
        |n| (n < 2).then(|| (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response()),
        |n| {
            (n < 2).then(|| {
                let plain = json!({"type": "about:blank", "title": "Gateway Timeout", "status": 504});
                (
                    StatusCode::GATEWAY_TIMEOUT,
                    [(header::CONTENT_TYPE, "application/problem+json")],
                    plain.to_string(),
                )
                    .into_response()
            })
        },
    ] {
        let (base, calls) = nact(fail).await;
        let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
        assert_eq!(result.unwrap(), json!({"n": 7}));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}

/// An answer lost after the request was sent carries no retry signal: the call is not sent
/// again (it may have acted), even over N-ACT, whose signal is a 5xx the server answered.
#[tokio::test]
async fn a_lost_answer_is_not_resent() {
    let (base, calls) = dropping_nact(page(vec![signature("flaky", "Flaky.")])).await;
    let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
    let err = result.unwrap_err();
    assert!(matches!(err, Error::Transport { connect: false, .. }), "{err:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// An N-ACT server on a raw socket that lists `listing` and closes the connection on every
/// invocation without answering (after reading it): the call may have acted.
async fn dropping_nact(listing: Value) -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0u8; 16 * 1024];
            let Ok(n) = socket.read(&mut request).await else {
                continue;
            };
            if request[..n].starts_with(b"POST") {
                counter.fetch_add(1, Ordering::SeqCst);
                continue; // dropped: the answer is lost
            }
            let body = listing.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all((head + &body).as_bytes()).await;
        }
    });
    (base, calls)
}

/// WoA's draft gives a 5xx no retry meaning, so only a problem's explicit `retryable: true`
/// is a signal; a plain 503 of an agent with no idempotency mark is sent once.
#[tokio::test]
async fn a_woa_5xx_is_retried_only_when_marked_retryable() {
    for (marked, expected) in [(false, 1), (true, 2)] {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let app = axum::Router::new()
            .route(
                "/.well-known/woa.json",
                get(|headers: HeaderMap| async move {
                    let host = headers[header::HOST].to_str().unwrap().to_owned();
                    Json(json!({"woa_version": "1", "agents": [{
                        "id": "flaky", "name": "Flaky", "description": "Flaky.",
                        "inputs": {"type": "object", "properties": {}}, "outputs": {"type": "object"},
                        "transports": ["rest"]}],
                        "transports": {"rest": {"base": format!("http://{host}"), "invoke_path": "/agents/{agent_id}/invoke"}}}))
                }),
            )
            .route(
                "/agents/flaky/invoke",
                post(move || {
                    let counter = Arc::clone(&counter);
                    async move {
                        if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                            let mut body = json!({"type": "about:blank", "title": "Busy", "status": 503, "detail": "busy"});
                            if marked {
                                body["retryable"] = json!(true);
                            }
                            return (StatusCode::SERVICE_UNAVAILABLE, body.to_string()).into_response();
                        }
                        Json(json!({"ok": true})).into_response()
                    }
                }),
            );
        let base = serve(app).await;
        let (result, _) = call(
            &format!("{base}/.well-known/woa.json"),
            Protocol::Woa,
            "flaky",
            json!({}),
        )
        .await;
        assert_eq!(result.is_ok(), marked, "{result:?}");
        assert_eq!(calls.load(Ordering::SeqCst), expected, "marked: {marked}");
    }
}

/// toolhost's answer when a tool may have acted: 409 with the failure's code, a tool failure
/// (with the text for the model), never retried even for a tool marked idempotent.
#[tokio::test]
async fn an_unknown_outcome_is_a_tool_failure_and_never_retried() {
    let (base, calls) = nact_marked(true, |_| {
        let body = json!({"type": "about:blank", "title": "t", "status": 409, "retryable": false,
            "detail": "tool `flaky` failed and may already have acted: the connection dropped",
            "code": "outcome_unknown", "prompt": "Check before trying again."});
        Some(
            (
                StatusCode::CONFLICT,
                [(header::CONTENT_TYPE, "application/problem+json")],
                body.to_string(),
            )
                .into_response(),
        )
    })
    .await;
    let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
    let Err(Error::Tool(failure)) = result else {
        panic!("{result:?}")
    };
    assert!(!failure.retryable);
    assert_eq!(failure.prompt.as_deref(), Some("Check before trying again."));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn client_errors_and_final_failures_are_not_retried() {
    for fail in [
        (|_| Some(problem(400, false, "bad"))) as fn(usize) -> Option<Response>,
        |_| Some(problem(404, false, "gone")),
        |_| Some(problem(502, false, "the tool failed for good")),
        |_| {
            let body = json!({"type": "about:blank", "title": "t", "status": 422, "detail": "d", "retryable": false,
                              "errors": {"n": "`n` expects an integer from 1 to 10"}});
            Some((StatusCode::UNPROCESSABLE_ENTITY, body.to_string()).into_response())
        },
    ] {
        let (base, calls) = nact(fail).await;
        let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
        assert!(result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{:?}", result);
    }
}

#[tokio::test]
async fn tool_failures_carry_the_prompt() {
    let (base, _) = nact(|_| Some(problem(502, false, "no such city"))).await;
    let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
    let Err(Error::Tool(failure)) = result else {
        panic!("{result:?}")
    };
    assert_eq!(failure.message, "no such city");
    assert_eq!(failure.prompt.as_deref(), Some("Try again later."));
}

#[tokio::test]
async fn invalid_arguments_are_refused_locally() {
    let (base, calls) = nact(|_| None).await;
    let (result, _) = call(
        &format!("{base}/nact"),
        Protocol::Nact,
        "flaky",
        json!({"n": 40, "m": 1}),
    )
    .await;
    let err = result.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`n` expects an integer from 1 to 10, but got 40"),
        "{text}"
    );
    assert!(text.contains("has no parameter `m`"), "{text}");
    assert!(err.prompt_for_model().is_some());
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing was sent");
}

/// OTC call-tool: "If `can_retry` is `true`, the client SHOULD retry", after `retry_after_ms`;
/// each attempt has a new `call_id` (the old one names the failed call), whatever the tool
/// (issue #31.10).
#[tokio::test]
async fn otc_can_retry_is_retried_with_a_new_call_id() {
    let ids: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&ids);
    let app = axum::Router::new()
        .route(
            "/otc/tools",
            get(|| async {
                Json(json!({"$schema": "otc://1.0", "tools": [{
                    "id": "Test.flaky@1.0.0", "name": "Test_flaky", "description": "Flaky.", "version": "1.0.0",
                    "input_schema": {"parameters": {"type": "object", "properties": {}}},
                    "output_schema": {"type": "integer"}
                }]}))
            }),
        )
        .route(
            "/otc/tools/call",
            post(move |_headers: HeaderMap, Json(body): Json<Value>| {
                let seen = Arc::clone(&seen);
                async move {
                    let mut ids = seen.lock().unwrap();
                    ids.push(body["request"]["call_id"].as_str().unwrap_or_default().to_owned());
                    let result = if ids.len() < 3 {
                        json!({"call_id": "x", "duration": 1, "success": false, "error": {
                            "message": "busy", "can_retry": true, "retry_after_ms": 200}})
                    } else {
                        json!({"call_id": "x", "duration": 1, "success": true, "value": 15})
                    };
                    Json(json!({"$schema": "otc://1.0", "result": result}))
                }
            }),
        );
    let base = serve(app).await;
    let started = Instant::now();
    let (result, _) = call(&format!("{base}/otc"), Protocol::Otc, "Test_flaky", json!({})).await;
    assert_eq!(result.unwrap(), json!(15));
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    let ids = ids.lock().unwrap();
    assert_eq!(ids.len(), 3);
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "{ids:?}");
}

/// A 5xx on OTC is asked again under the same `call_id`, the spec's idempotency key, whatever the
/// tool: a server that ran the call answers with its result instead of running it twice.
#[tokio::test]
async fn otc_5xx_retries_keep_the_call_id() {
    let ids: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&ids);
    let app = axum::Router::new()
        .route(
            "/tools",
            get(|| async {
                Json(json!([{"id": "add", "name": "add", "description": "Add.",
                             "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                             "output_schema": {"type": "integer"}}]))
            }),
        )
        .route(
            "/tools/call",
            post(move |Json(body): Json<Value>| {
                let seen = Arc::clone(&seen);
                async move {
                    let mut ids = seen.lock().unwrap();
                    ids.push(body["request"]["call_id"].as_str().unwrap_or_default().to_owned());
                    if ids.len() < 2 {
                        (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response()
                    } else {
                        Json(json!({"execution_id": "e", "success": true, "value": 2})).into_response()
                    }
                }
            }),
        );
    let base = serve(app).await;
    let (result, _) = call(&base, Protocol::Otc, "add", json!({"x": 1})).await;
    assert_eq!(result.unwrap(), json!(2));
    let ids = ids.lock().unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1], "the same call after a 5xx keeps its idempotency key");
}

/// A listing answered with a 422 problem is an HTTP error of the listing, not "the arguments
/// for `` do not match" (a listing names no tool).
#[tokio::test]
async fn a_failed_listing_names_no_tool() {
    let app = axum::Router::new().route(
        "/tools",
        axum::routing::get(|| async {
            (
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                axum::Json(serde_json::json!({"type": "about:blank", "title": "bad", "status": 422,
                    "detail": "the page size is out of range", "errors": {"page_size": "too big"}})),
            )
        }),
    );
    let base = crate::support::serve(app).await;
    let client = crate::support::client(crate::support::Stub::new(&[]));
    let source = toolhost_client::Source::parse(&base).unwrap();
    let err = client.discover_as(&source, Some(Protocol::Nact)).await.unwrap_err();
    assert!(matches!(err, Error::Status { status: 422, .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("page size is out of range"), "{message}");
    assert!(!message.contains("arguments for"), "{message}");
}
