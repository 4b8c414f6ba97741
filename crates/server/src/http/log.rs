//! One log line per request: method, path, status and latency.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// Logs each request once it is answered. The query string is left out, since callers
/// sometimes put credentials there.
pub async fn request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let latency_us = started.elapsed().as_micros() as u64;
    if status >= 500 {
        tracing::warn!(%method, %path, status, latency_us, "request");
    } else {
        tracing::info!(%method, %path, status, latency_us, "request");
    }
    response
}
