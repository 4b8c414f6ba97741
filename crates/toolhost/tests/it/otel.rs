//! OTLP export (the `otel` feature): request spans reach a collector stub on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_spans_are_exported_over_otlp_http() {
    let received = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&received);
    let collector = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let counter = Arc::clone(&counter);
            async move {
                if headers
                    .get("content-type")
                    .is_some_and(|v| v == "application/x-protobuf")
                    && !body.is_empty()
                {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, collector).await });

    let server = Server::start(&["--otlp-endpoint", &endpoint], &[], None);
    let body = json!({"input_parameters": [{"name": "a", "value": 1}, {"name": "b", "value": 2}]});
    let reply = reqwest::Client::new()
        .post(format!("{}/nact/tools/add_numbers:invoke", server.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    // Shutdown flushes the batch; no need to wait for the exporter's schedule.
    assert!(tokio::task::spawn_blocking(move || server.terminate()).await.unwrap());
    let started = Instant::now();
    while received.load(Ordering::SeqCst) == 0 && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(received.load(Ordering::SeqCst) > 0, "the collector received spans");
}

#[test]
fn a_bad_endpoint_is_refused_at_start() {
    let out = crate::support::run(&["serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", "not a url"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
}
