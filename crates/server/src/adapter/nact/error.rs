//! Core errors as N-ACT problems (PROTOCOLS.md §3): one exhaustive match, no catch-all arm.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use toolhost_core::{Error, ParameterError};

use crate::http::problem::ProblemResponse;

/// The N-ACT status and problem for a core error.
pub(super) fn problem(error: Error) -> ProblemResponse {
    match error {
        Error::ToolNotFound { .. } => ProblemResponse::new(StatusCode::NOT_FOUND, "unknown-tool", error.to_string()),
        Error::VersionNotFound { .. } => {
            ProblemResponse::new(StatusCode::NOT_FOUND, "unknown-version", error.to_string())
        }
        // N-ACT has no place for per-call secrets or tokens; the message says which is missing.
        Error::MissingRequirement { .. } => ProblemResponse::bad_request(error.to_string()),
        Error::InvalidInput { errors, .. } => invalid_input(errors),
        Error::Failed { tool, failure } => {
            let (status, kind) = if failure.retryable {
                (StatusCode::SERVICE_UNAVAILABLE, "tool-unavailable")
            } else {
                (StatusCode::BAD_GATEWAY, "tool-failed")
            };
            let mut p = ProblemResponse::new(status, kind, format!("tool `{tool}` failed: {}", failure.message));
            p.problem.retryable = failure.retryable;
            p.problem.prompt = failure.prompt;
            // 503 always carries Retry-After (PROTOCOLS.md §3); one second when the tool gave none.
            p.retry_after = failure
                .retryable
                .then(|| failure.retry_after.unwrap_or(std::time::Duration::from_secs(1)));
            p
        }
        Error::Timeout { .. } => {
            let mut p = ProblemResponse::new(StatusCode::GATEWAY_TIMEOUT, "tool-timeout", error.to_string());
            p.problem.retryable = true;
            p
        }
    }
}

/// 422 with an `errors` member mapping each parameter to its message.
pub(super) fn invalid_input(errors: Vec<ParameterError>) -> ProblemResponse {
    let detail = match errors.as_slice() {
        [one] => one.message.clone(),
        many => format!("{} parameters are not valid; see `errors`", many.len()),
    };
    let mut p = ProblemResponse::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid-parameters", detail);
    let map: BTreeMap<String, String> = errors
        .into_iter()
        .map(|e| {
            (
                if e.parameter.is_empty() {
                    "input_parameters".to_owned()
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
