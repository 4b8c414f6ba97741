//! Core errors as WoA problems: one exhaustive match, no catch-all arm.
//!
//! The draft leaves "problem type URIs and error code taxonomies" to the deployment (§5.2);
//! toolhost uses N-ACT's statuses (docs/protocols.md) so a client that knows one knows both:
//! 404 unknown agent or version, 400 a call that cannot be made, 422 invalid input or a tool
//! failure that retrying cannot change, 409 a failure after which the tool may already have
//! acted (never retry blindly), 502 an upstream answer the tool could not use, 503 (with
//! `Retry-After`) it failed for now, 504 it timed out. Only the wording differs: agents, not
//! tools, and the whole input is `input`.

use axum::http::StatusCode;
use toolhost_core::{Error, ParameterError};

use crate::http::problem::{self, ProblemResponse};

/// The WoA status and problem for a core error.
pub(super) fn problem(error: Error) -> ProblemResponse {
    match error {
        Error::ToolNotFound { tool } => ProblemResponse::new(
            StatusCode::NOT_FOUND,
            "unknown-agent",
            format!("no agent `{tool}` is served here; /.well-known/woa.json lists the agents"),
        ),
        Error::VersionNotFound { tool, version, served } => ProblemResponse::new(
            StatusCode::NOT_FOUND,
            "unknown-version",
            format!("agent `{tool}` has no served version {version}; served versions: {served}"),
        ),
        // WoA's envelope has no place for per-call secrets or tokens; the message says which
        // one the tool needs.
        Error::MissingRequirement { .. } => ProblemResponse::bad_request(error.to_string()),
        Error::InvalidInput { errors, .. } => invalid_input(errors),
        Error::Failed { tool, failure } => problem::tool_failed(&format!("agent `{tool}`"), *failure),
        Error::Timeout { tool, after } => problem::timed_out(format!(
            "agent `{tool}` did not finish within {} ms; try again later",
            after.as_millis()
        )),
        // A 2xx must match `outputs` (WoA §5.2): the request is a 403 problem.
        Error::Confirmation { tool, answer } => {
            crate::approvals::cheq::problem(&answer, &format!("agent `{tool}`"), true)
        }
    }
}

/// 422 with an `errors` member mapping each input property to its message; a problem with the
/// input as a whole is under `input`, the envelope member it is about.
fn invalid_input(errors: Vec<ParameterError>) -> ProblemResponse {
    problem::invalid_input(errors, "input", "invalid-input", "inputs")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use toolhost_core::ToolFailure;

    #[test]
    fn statuses_follow_nact() {
        let status = |e: Error| problem(e).problem.status;
        assert_eq!(status(Error::ToolNotFound { tool: "x".into() }), 404);
        let temporary = ToolFailure::temporary("busy", None);
        let p = problem(Error::Failed {
            tool: "x".into(),
            failure: Box::new(temporary),
        });
        assert_eq!((p.problem.status, p.problem.retryable), (503, true));
        assert_eq!(p.retry_after, Some(Duration::from_secs(1)));
        let p = problem(Error::Timeout {
            tool: "x".into(),
            after: Duration::from_millis(50),
        });
        assert_eq!((p.problem.status, p.problem.retryable), (504, true));
    }

    #[test]
    fn whole_input_errors_are_under_input() {
        let p = problem(Error::InvalidInput {
            tool: "x".into(),
            errors: vec![
                ParameterError {
                    parameter: String::new(),
                    message: "expected an object".into(),
                },
                ParameterError {
                    parameter: "a".into(),
                    message: "`a` is required".into(),
                },
            ],
        });
        assert_eq!(p.problem.status, 422);
        let errors = p.problem.errors.unwrap();
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["a", "input"]);
    }
}
