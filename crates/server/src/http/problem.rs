//! Problem responses (RFC 9457) and the request errors every adapter can raise.

use std::any::Any;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolhost_wire::problem::{CONTENT_TYPE, Problem};

/// A problem document ready to send, with an optional `Retry-After`.
#[derive(Debug, Clone)]
pub struct ProblemResponse {
    /// The document (boxed: errors travel in `Result`s and should stay small).
    pub problem: Box<Problem>,
    /// Sent as `Retry-After` in whole seconds (rounded up).
    pub retry_after: Option<Duration>,
    /// Sent as `Allow` (with 405).
    pub allow: Option<&'static str>,
}

impl ProblemResponse {
    /// A problem with the given status, kind slug and detail; not retryable.
    pub fn new(status: StatusCode, kind: &str, detail: impl Into<String>) -> Self {
        Self {
            problem: Box::new(Problem {
                kind: format!("urn:toolhost:problem:{kind}"),
                title: status.canonical_reason().unwrap_or("Error").to_owned(),
                status: status.as_u16(),
                detail: detail.into(),
                errors: None,
                retryable: false,
                prompt: None,
            }),
            retry_after: None,
            allow: None,
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad-request", detail)
    }
}

impl IntoResponse for ProblemResponse {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self.problem).unwrap_or_default();
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
        if let Some(allow) = self.allow {
            headers.insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        if let Some(after) = self.retry_after {
            let secs = after.as_millis().div_ceil(1000).max(1);
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs as u64));
        }
        response
    }
}

/// The fallback for paths no protocol serves.
pub async fn not_found() -> ProblemResponse {
    ProblemResponse::new(
        StatusCode::NOT_FOUND,
        "not-found",
        "no endpoint at this path; the README lists the mount points (N-ACT at /nact/tools by default)",
    )
}

/// The fallback for a known path with the wrong method.
pub async fn method_not_allowed() -> ProblemResponse {
    ProblemResponse::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "this endpoint does not take that method; listings are GET, invocations are POST to `{tool}:invoke`",
    )
}

/// Turns a handler panic (a bug of ours, never the caller's) into a 500 problem, after logging it.
pub fn panicked(panic: Box<dyn Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    tracing::error!(panic = what, "handler panicked");
    ProblemResponse::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the server hit an internal error; it has been logged",
    )
    .into_response()
}
