//! Core errors as N-ACT problems (docs/protocols.md §3): one exhaustive match, no catch-all arm.

use axum::http::StatusCode;
use toolhost_core::{Error, ParameterError};

use crate::http::problem::{self, ProblemResponse};

/// The N-ACT status and problem for a core error.
pub(super) fn problem(error: Error) -> ProblemResponse {
    answer(error, false)
}

/// The same, with a confirmation request answered as `403` problem instead of CHEQ's `202`
/// when `confirmation_as_problem` (`[approvals] nact_403`).
pub(super) fn answer(error: Error, confirmation_as_problem: bool) -> ProblemResponse {
    match error {
        Error::ToolNotFound { .. } => ProblemResponse::new(StatusCode::NOT_FOUND, "unknown-tool", error.to_string()),
        Error::VersionNotFound { .. } => {
            ProblemResponse::new(StatusCode::NOT_FOUND, "unknown-version", error.to_string())
        }
        // N-ACT has no place for per-call secrets or tokens; the message says which is missing.
        Error::MissingRequirement { .. } => ProblemResponse::bad_request(error.to_string()),
        Error::InvalidInput { errors, .. } => invalid_input(errors),
        Error::Failed { tool, failure } => problem::tool_failed(&format!("tool `{tool}`"), *failure),
        Error::Timeout { .. } => problem::timed_out(error.to_string()),
        // CHEQ's trigger (APPROVALS.md §5.3): 202 with the URI pack, no outputs.
        Error::Confirmation { tool, answer } => {
            crate::approvals::cheq::problem(&answer, &format!("tool `{tool}`"), confirmation_as_problem)
        }
    }
}

/// 422 with an `errors` member mapping each parameter to its message.
pub(super) fn invalid_input(errors: Vec<ParameterError>) -> ProblemResponse {
    problem::invalid_input(errors, "input_parameters", "invalid-parameters", "parameters")
}
