//! Core errors as MCP answers: one exhaustive match. A model acts on `isError` results; a
//! JSON-RPC error is reserved for a request no tool can answer (an unknown tool).

use rmcp::ErrorData;
use rmcp::model::CallToolResult;
use toolhost_core::Error;

use super::convert::failure;

/// The answer to a `tools/call` that did not succeed.
pub(super) fn answer(error: Error) -> Result<CallToolResult, ErrorData> {
    match error {
        Error::ToolNotFound { .. } => Err(ErrorData::invalid_params(error.to_string(), None)),
        // Reached only where the MCP handler did not answer it itself (approval.rs): a
        // result telling the model plainly that nothing ran.
        Error::Confirmation { answer, .. } => Ok(failure(answer.prompt())),
        Error::VersionNotFound { .. } | Error::MissingRequirement { .. } | Error::Timeout { .. } => {
            Ok(failure(error.to_string()))
        }
        Error::InvalidInput { tool, errors } => {
            let mut text = format!("Invalid arguments for tool `{tool}`; fix these and call again:");
            for e in errors {
                text.push_str("\n- ");
                text.push_str(&e.message);
            }
            Ok(failure(text))
        }
        Error::Failed { tool, failure: f } => {
            let mut text = format!("Tool `{tool}` failed: {}", f.message);
            if let Some(prompt) = &f.prompt {
                text.push('\n');
                text.push_str(prompt);
            }
            if f.retryable {
                match f.retry_after {
                    Some(after) => text.push_str(&format!(
                        "\nThis may succeed if retried after {} ms.",
                        after.as_millis()
                    )),
                    None => text.push_str("\nThis may succeed if retried."),
                }
            }
            Ok(failure(text))
        }
    }
}

/// The answer of a `tools/call` run as a task that did not succeed: as [`answer`], except that
/// a fault of the server (a backend that broke its declared outputs) is an error, which makes
/// the task `failed` rather than `completed` with a tool error (SEP-2663's error semantics).
pub(super) fn in_task(error: Error) -> Result<CallToolResult, ErrorData> {
    match &error {
        Error::Failed { failure, .. }
            if failure.code.as_deref() == Some(toolhost_core::backend::INVALID_OUTPUT_CODE) =>
        {
            Err(ErrorData::internal_error(error.to_string(), None))
        }
        _ => answer(error),
    }
}

/// The error for a federated resource whose upstream read failed: `-32603` with the failure's
/// message for callers (never its developer detail, which the log has), its `code`, whether a
/// retry may help, and the URI.
pub(super) fn resource_failure(uri: &str, failure: &toolhost_core::ToolFailure) -> ErrorData {
    ErrorData::internal_error(
        format!("failed to read `{uri}`: {}", failure.message),
        Some(serde_json::json!({
            "uri": uri,
            "code": failure.code,
            "retryable": failure.retryable,
            "retryAfterMs": failure.retry_after.map(|d| d.as_millis() as u64),
        })),
    )
}
