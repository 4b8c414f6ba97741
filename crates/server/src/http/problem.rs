//! Problem responses (RFC 9457) and the request errors every adapter can raise.

use std::any::Any;
use std::collections::BTreeMap;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolhost_core::{ParameterError, ToolFailure};
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
    /// Members beside the problem's own (a confirmation's id and URIs, issue #40). With a 2xx
    /// status they are the whole body, as `application/json`: a 2xx is never a problem.
    pub members: serde_json::Map<String, serde_json::Value>,
    /// Sent as `Location`.
    pub location: Option<String>,
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
                code: None,
                prompt: None,
            }),
            retry_after: None,
            allow: None,
            members: serde_json::Map::new(),
            location: None,
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
        let (body, content_type) = if status.is_success() {
            (
                serde_json::to_vec(&self.members).unwrap_or_default(),
                "application/json",
            )
        } else if self.members.is_empty() {
            (serde_json::to_vec(&self.problem).unwrap_or_default(), CONTENT_TYPE)
        } else {
            let mut document = serde_json::to_value(&self.problem).unwrap_or_default();
            if let Some(object) = document.as_object_mut() {
                object.extend(self.members);
            }
            (serde_json::to_vec(&document).unwrap_or_default(), CONTENT_TYPE)
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        if let Some(location) = self.location.as_deref().and_then(|l| HeaderValue::from_str(l).ok()) {
            headers.insert(header::LOCATION, location);
        }
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

/// A tool that ran and failed, for the protocols with HTTP statuses (N-ACT §7, WoA §5.2, issue
/// #12, #22.3). The status class is the executor's retry signal, so a 5xx only where retrying is
/// safe and may help:
///
/// - the tool may have acted before it failed (outcome unknown): 409, never retryable, with a
///   prompt telling the model to check first;
/// - retryable (an upstream 5xx or 429, unreachable, busy): 503 with `Retry-After` (one second
///   when the tool gave no hint);
/// - an upstream's answer the tool cannot use: 502;
/// - any other failure, which retrying cannot change (division by zero, an unknown code, an
///   upstream 4xx): 422.
///
/// `subject` names the tool as the protocol does ("tool `x`").
pub fn tool_failed(subject: &str, failure: ToolFailure) -> ProblemResponse {
    let (status, kind, detail) = if failure.outcome_unknown {
        (
            StatusCode::CONFLICT,
            "outcome-unknown",
            format!("{subject} failed and may already have acted: {}", failure.message),
        )
    } else if failure.retryable {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "tool-unavailable",
            format!("{subject} is unavailable for now: {}", failure.message),
        )
    } else if failure.is_unusable_answer() {
        (
            StatusCode::BAD_GATEWAY,
            "upstream-answer-unusable",
            format!("{subject} failed: {}", failure.message),
        )
    } else {
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "tool-failed",
            format!("{subject} failed: {}", failure.message),
        )
    };
    let mut p = ProblemResponse::new(status, kind, detail);
    p.problem.retryable = failure.retryable && !failure.outcome_unknown;
    p.problem.prompt = failure.prompt;
    p.problem.code = failure.code;
    p.retry_after = p
        .problem
        .retryable
        .then(|| failure.retry_after.unwrap_or(Duration::from_secs(1)));
    p
}

/// 504: the tool did not answer in time; worth retrying.
pub fn timed_out(detail: String) -> ProblemResponse {
    let mut p = ProblemResponse::new(StatusCode::GATEWAY_TIMEOUT, "tool-timeout", detail);
    p.problem.retryable = true;
    p
}

/// 422 with an `errors` member mapping each parameter to its message; a problem with the input
/// as a whole goes under `whole` (the request member it is about). `kind` names the problem
/// type and `noun` what the parameters are called ("parameters", "inputs").
pub fn invalid_input(errors: Vec<ParameterError>, whole: &str, kind: &str, noun: &str) -> ProblemResponse {
    let detail = match errors.as_slice() {
        [one] => one.message.clone(),
        many => format!("{} {noun} are not valid; see `errors`", many.len()),
    };
    let mut p = ProblemResponse::new(StatusCode::UNPROCESSABLE_ENTITY, kind, detail);
    let map: BTreeMap<String, String> = errors
        .into_iter()
        .map(|e| {
            (
                if e.parameter.is_empty() {
                    whole.to_owned()
                } else {
                    e.parameter
                },
                e.message,
            )
        })
        .collect();
    p.problem.errors = Some(map);
    p
}

/// The fallback for paths no protocol serves.
pub async fn not_found() -> ProblemResponse {
    ProblemResponse::new(
        StatusCode::NOT_FOUND,
        "not-found",
        "no endpoint at this path; by default N-ACT is at /nact/tools, OTC at /otc/tools, WoA at /.well-known/woa.json and MCP at /mcp",
    )
}

/// The fallback for a known path with the wrong method.
pub async fn method_not_allowed() -> ProblemResponse {
    ProblemResponse::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "this endpoint does not take that method; the Allow header lists the ones it takes",
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

/// The 500 of a task run off the async workers (`spawn_blocking`) that panicked.
pub fn join_failed(error: tokio::task::JoinError) -> Response {
    match error.try_into_panic() {
        Ok(panic) => panicked(panic),
        Err(_) => panicked(Box::new("a blocking task was cancelled")),
    }
}
