//! Retries: a 5xx is retried with backoff, honouring `Retry-After`, only where sending the call
//! twice cannot act twice: a tool the server marks idempotent, or OTC under the same `call_id`
//! (the spec's idempotency key). A tool not marked idempotent is sent once (issue #12); 4xx, 422
//! and failures a server marks final never are retried.

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

/// A 5xx, a dropped answer or a tool's "try again" may follow a call that acted: a tool not
/// marked idempotent is sent once, whatever the server says (issue #12).
#[tokio::test]
async fn a_tool_not_marked_idempotent_is_sent_once() {
    for fail in [
        (|_| Some(problem(503, true, "busy"))) as fn(usize) -> Option<Response>,
        |_| Some((StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response()),
        |_| Some(problem(504, true, "timed out")),
    ] {
        let (base, calls) = nact(fail).await;
        let (result, _) = call(&format!("{base}/nact"), Protocol::Nact, "flaky", json!({"n": 3})).await;
        assert!(result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{:?}", result);
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

/// An OTC tool failure with `can_retry` is the model's to act on (OTC gives the hints to the
/// model): a new attempt needs a new `call_id`, which makes it a new call, so a tool not marked
/// idempotent is not called again by the client.
#[tokio::test]
async fn otc_can_retry_of_a_tool_not_marked_idempotent_is_left_to_the_model() {
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
    let (result, _) = call(&format!("{base}/otc"), Protocol::Otc, "Test_flaky", json!({})).await;
    let Err(Error::Tool(failure)) = result else {
        panic!("{result:?}")
    };
    assert!(failure.retryable, "the tool's hint reaches the model");
    assert_eq!(failure.retry_after, Some(Duration::from_millis(200)));
    assert_eq!(ids.lock().unwrap().len(), 1);
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
