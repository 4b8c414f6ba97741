//! Core errors as OTC answers (the spec's "Error Behavior"): one exhaustive match.

use std::collections::BTreeMap;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolhost_core::{Error, Requirement};
use toolhost_wire::otc::{ErrorResponse, ToolError};

/// How an OTC call that did not succeed is answered.
#[derive(Debug)]
pub(super) enum Answer {
    /// The tool ran and failed: 200 with `success: false`.
    Execution(ToolError),
    /// Refused before running: 400 or 422.
    Refused(Response),
}

/// Classifies a core error for the call of `tool_id`.
pub(super) fn classify(error: Error, schema: &str, tool_id: &str) -> Answer {
    let otc_name = tool_id.split('@').next().unwrap_or(tool_id).replace('.', "_");
    match error {
        Error::ToolNotFound { .. } => Answer::Refused(server_error(
            schema,
            format!("Tool '{otc_name}' was not found"),
            Some(error.to_string()),
        )),
        Error::VersionNotFound { .. } => Answer::Refused(server_error(
            schema,
            format!("Tool '{otc_name}' is not available in the requested version"),
            Some(error.to_string()),
        )),
        Error::MissingRequirement { ref missing, .. } => {
            let message = match missing {
                Requirement::Secret(id) => format!("The call needs the secret `{id}` in `context.secrets`"),
                Requirement::Authorization(id) => {
                    format!("The call needs an authorization token for `{id}` in `context.authorization`")
                }
                Requirement::UserId => "The call needs `context.user_id`".to_owned(),
            };
            Answer::Refused(server_error(schema, message, Some(error.to_string())))
        }
        Error::InvalidInput { errors, .. } => {
            let parameter_errors: BTreeMap<String, String> = errors
                .into_iter()
                .map(|e| {
                    (
                        if e.parameter.is_empty() {
                            "input".to_owned()
                        } else {
                            e.parameter
                        },
                        e.message,
                    )
                })
                .collect();
            let body = ErrorResponse {
                schema: schema.to_owned(),
                message: "Some input parameters are invalid".to_owned(),
                developer_message: None,
                parameter_errors: Some(parameter_errors),
            };
            Answer::Refused(respond(StatusCode::UNPROCESSABLE_ENTITY, &body))
        }
        // Refused before it ran (its tool at its concurrency cap): a server error, not a
        // tool's result (OTC "Server Errors"; issue #22.4).
        Error::Failed { failure, .. } if failure.code.as_deref() == Some(crate::calls::BUSY_CODE) => {
            let mut response = server_error(
                schema,
                "The tool server is temporarily unavailable; try again shortly",
                Some(failure.message),
            );
            let seconds = failure.retry_after.map_or(1, |d| d.as_secs().max(1));
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            Answer::Refused(response)
        }
        Error::Failed { failure, .. } => Answer::Execution(ToolError {
            message: failure.message,
            developer_message: failure.developer_message,
            can_retry: failure.retryable,
            retry_after_ms: failure.retry_after.map(|d| d.as_millis() as u64),
            additional_prompt_content: failure.prompt,
        }),
        // Refused before it ran: a 400 server error with the link in `message` (shown to the
        // user and the model) and the id and URI pack in the extension member
        // `confirmation`; never a `success: false`, which would say the tool ran.
        Error::Confirmation { answer, .. } => {
            let message = match answer.status {
                toolhost_core::confirm::Status::Declined => answer.prompt(),
                _ => answer.prompt(),
            };
            let mut body = serde_json::json!({
                "$schema": schema,
                "message": message,
                "developer_message": "the tool needs a human's confirmation of this exact call; retry with request.context.confirmation set to confirmation.confirmation",
            });
            body["confirmation"] = serde_json::Value::Object(crate::approvals::cheq::members(&answer));
            let mut response = serde_json::to_vec(&body).unwrap_or_default().into_response();
            *response.status_mut() = StatusCode::BAD_REQUEST;
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            Answer::Refused(response)
        }
        Error::Timeout { after, .. } => Answer::Execution(ToolError {
            message: "The tool did not finish in time; try again later".to_owned(),
            developer_message: Some(format!("the backend exceeded its {} ms timeout", after.as_millis())),
            can_retry: true,
            retry_after_ms: None,
            additional_prompt_content: None,
        }),
    }
}

/// A 400 `ServerErrorResponse`.
pub(super) fn server_error(schema: &str, message: impl Into<String>, developer_message: Option<String>) -> Response {
    let body = ErrorResponse {
        schema: schema.to_owned(),
        message: message.into(),
        developer_message,
        parameter_errors: None,
    };
    respond(StatusCode::BAD_REQUEST, &body)
}

fn respond(status: StatusCode, body: &ErrorResponse) -> Response {
    let mut response = serde_json::to_vec(body).unwrap_or_default().into_response();
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
