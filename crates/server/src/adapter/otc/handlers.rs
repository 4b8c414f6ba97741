//! OTC handlers: decode, one core call, encode.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State as Extract;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use toolhost_core::{CallContext, Invocation, VersionSelector};
use toolhost_wire::otc::{CallBody, CallToolRequest, CallToolResult};

use super::convert;
use super::error::{self, Answer, server_error};
use crate::State;
use crate::auth::Caller;
use crate::http::body::{BodyError, Json, parse};
use crate::http::cache;
use crate::idempotency::Refusal;

const JSON: &str = "application/json";

/// `GET {root}/health`.
pub(super) async fn health() -> Response {
    json(r#"{"status":"ok"}"#.to_owned())
}

/// `GET {root}/tools`: every served version's definition. A body may carry `$schema`.
pub(super) async fn list(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // No body, or a JSON null, means the client did not say which version it speaks.
    let schema = if body.iter().all(u8::is_ascii_whitespace) || body.trim_ascii() == b"null" {
        toolhost_wire::otc::SCHEMA
    } else {
        #[derive(serde::Deserialize)]
        struct ListBody {
            #[serde(rename = "$schema", default)]
            schema: Option<String>,
        }
        let given = match parse::<ListBody>(&body) {
            Ok(b) => b.schema,
            Err(e) => return server_error(toolhost_wire::otc::SCHEMA, e.to_string(), None),
        };
        match convert::schema_form(given.as_deref()) {
            Ok(s) => s,
            Err(message) => return server_error(toolhost_wire::otc::SCHEMA, message, None),
        }
    };
    let built = state.view::<super::Definitions>();
    let body = format!(
        r#"{{"$schema":{},"tools":{}}}"#,
        quote(schema),
        built.view.json_for(&built.catalog, &caller.access)
    );
    cache::json(&headers, body.into_bytes(), JSON, "max-age=60", state.auth().enabled())
}

/// `POST {root}/tools/call`: run a tool once per `call_id`.
pub(super) async fn call(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    body: Result<Json<CallBody>, BodyError>,
) -> Response {
    let default = toolhost_wire::otc::SCHEMA;
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return server_error(default, e.to_string(), None),
    };
    let schema = match convert::schema_form(body.schema.as_deref()) {
        Ok(s) => s,
        Err(message) => return server_error(default, message, None),
    };
    let Some(raw) = body.request else {
        return server_error(
            schema,
            r#"the body needs a `request` object, e.g. {"request": {"tool_id": "Calculator.Add", "input": {"a": 1}}}"#,
            None,
        );
    };
    let request: CallToolRequest = match parse(raw.get().as_bytes()) {
        Ok(r) => r,
        Err(BodyError::NotObject | BodyError::Empty) => {
            return server_error(schema, "`request` must be a JSON object", None);
        }
        Err(e) => return server_error(schema, format!("`request` is not a valid call: {e}"), None),
    };
    let id = match convert::tool_id(&request.tool_id) {
        Ok(id) => id,
        Err(message) => return server_error(schema, message, None),
    };
    // The tool must be in the toolkit the id names, by name (not UUID); else it is as unknown as
    // any other, whatever version was asked for, and named as written (STYLE.md habit 4).
    let catalog = state.engine.catalog();
    let Some(tool) = catalog
        .find(id.name)
        .filter(|t| t.name == id.name && t.toolkit == id.toolkit)
        .cloned()
    else {
        let missing = toolhost_core::Error::ToolNotFound {
            tool: request.tool_id.clone(),
        };
        return refused(error::classify(missing, schema, &request.tool_id));
    };
    let resolved = match toolhost_core::resolve(&catalog, id.name, &id.version, &caller.access) {
        Ok((_, version)) => version.semver.clone(),
        Err(e) => {
            // A tool the caller may not see is named as written, like any unknown one: byte for
            // byte the same answer (issue #21.11).
            let e = match e {
                toolhost_core::Error::ToolNotFound { .. } => toolhost_core::Error::ToolNotFound {
                    tool: request.tool_id.clone(),
                },
                other => other,
            };
            return refused(error::classify(e, schema, &request.tool_id));
        }
    };
    // An empty call_id would be one key shared by every call that sends it (issue #31.5).
    if request.call_id.as_deref().is_some_and(|c| c.trim().is_empty()) {
        return server_error(
            schema,
            "`call_id` is empty; send a unique id (a UUID, say) to make the call idempotent, or leave `call_id` out",
            None,
        );
    }
    let input = request.input.unwrap_or_default();
    // Only a call_id the caller chose is a key: an id made here is known to nobody until the
    // answer, so no repeat can bring it, and recording it would only crowd the store (and,
    // with `--state`, cost a round trip to it) for every call that did not ask. The key is
    // the version the id resolves to, not how it is written (issue #31.5).
    let keyed = request.call_id.as_ref().map(|call_id| {
        let fingerprint = convert::fingerprint(
            &format!("{}.{}@{resolved}", tool.toolkit, tool.name),
            &input,
            request.context.as_ref(),
        );
        (convert::call_key(&caller.id, call_id), fingerprint)
    });
    let call_id = request
        .call_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let invocation = Invocation {
        tool: tool.name.clone(),
        // The version the key names, even if a reload changes the latest meanwhile.
        version: VersionSelector::Semver(resolved),
        input,
        context: CallContext {
            call_id: request.call_id.clone(),
            ..convert::context(request.context, request.trace_id, caller.context())
        },
    };
    let result = match keyed {
        // A long tool (one that may run as a task, docs/tasks.md) runs to its end even when the
        // caller goes away, so that a repeat of its call_id finds the result rather than
        // nothing (or an outcome unknown) and the tool is never run twice; the repeat waits
        // for the run in flight (docs/protocols.md §4).
        Some((key, fingerprint)) if tool.task.allowed() => {
            let (state, call_id, tool_id) = (Arc::clone(&state), call_id.clone(), request.tool_id.clone());
            let detached = tokio::spawn(async move {
                let run = run(&state, invocation, &call_id, schema, &tool_id);
                state.calls.once(&key, &fingerprint, Box::pin(run)).await
            });
            match detached.await {
                Ok(result) => result,
                Err(e) => {
                    tracing::error!(error = %e, "a detached OTC call did not finish");
                    Err(Refusal::Lost)
                }
            }
        }
        Some((key, fingerprint)) => {
            let run = run(&state, invocation, &call_id, schema, &request.tool_id);
            state.calls.once(&key, &fingerprint, Box::pin(run)).await
        }
        None => run(&state, invocation, &call_id, schema, &request.tool_id)
            .await
            .map_err(Refusal::Rejected),
    };
    match result {
        Ok(result) => json(format!(r#"{{"$schema":{},"result":{result}}}"#, quote(schema))),
        Err(Refusal::Rejected(response)) => response,
        // Not run: a server error (OTC "Server Errors": 400 before the tool is called, "the
        // tool server is temporarily unavailable" its own example), never a 5xx (issue #37.3).
        Err(Refusal::Unavailable { retry_after }) => {
            let seconds = retry_after.as_millis().div_ceil(1000).max(1);
            let mut response = server_error(
                schema,
                format!(
                    "The tool server is temporarily unavailable: call_id `{call_id}` cannot be recorded now, so the call was not run; try again with the same call_id in {seconds} s"
                ),
                Some(
                    "the shared call store (--state) is unreachable, or recovering from a loss of its state (a store met empty is one)"
                        .to_owned(),
                ),
            );
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Err(Refusal::Lost) => {
            let failure = toolhost_core::ToolFailure::outcome_unknown(format!(
                "the first call with call_id `{call_id}` did not finish on the replica that ran it, or its record was lost with the shared store's state; it may have acted"
            ));
            let error = toolhost_core::Error::Failed {
                tool: tool.name.clone(),
                failure: Box::new(failure),
            };
            match error::classify(error, schema, &request.tool_id) {
                Answer::Refused(response) => response,
                Answer::Execution(error) => {
                    let result = CallToolResult {
                        call_id: call_id.clone(),
                        duration: 0.0,
                        success: false,
                        value: None,
                        error: Some(error),
                    };
                    json(format!(
                        r#"{{"$schema":{},"result":{}}}"#,
                        quote(schema),
                        serde_json::to_string(&result).unwrap_or_default()
                    ))
                }
            }
        }
        Err(Refusal::Conflict) => server_error(
            schema,
            format!(
                "call_id `{call_id}` was already used for a different call (another tool, input or context); send a new call_id (it is an idempotency key)"
            ),
            None,
        ),
    }
}

/// Runs the call and renders its `result`; refusals (400/422) come back as responses.
async fn run(
    state: &State,
    invocation: Invocation,
    call_id: &str,
    schema: &str,
    tool_id: &str,
) -> Result<Arc<str>, Response> {
    let started = Instant::now();
    let outcome = crate::calls::invoke(state, crate::calls::Protocol::Otc, invocation).await;
    let duration = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    let result = match outcome {
        Ok(mut outcome) => {
            let output = std::mem::take(&mut outcome.output);
            let value = convert::value(outcome.version(), output);
            CallToolResult {
                call_id: call_id.to_owned(),
                duration,
                success: true,
                value,
                error: None,
            }
        }
        Err(e) => match error::classify(e, schema, tool_id) {
            Answer::Execution(error) => CallToolResult {
                call_id: call_id.to_owned(),
                duration,
                success: false,
                value: None,
                error: Some(error),
            },
            Answer::Refused(response) => return Err(response),
        },
    };
    // A failure worth retrying is answered but not remembered, so the retry the spec asks for
    // (same call_id, same input) runs the tool again instead of replaying the failure.
    if result.error.as_ref().is_some_and(|e| e.can_retry) {
        let body = format!(
            r#"{{"$schema":{},"result":{}}}"#,
            quote(schema),
            serde_json::to_string(&result).unwrap_or_default()
        );
        return Err(json(body));
    }
    Ok(serde_json::to_string(&result).unwrap_or_default().into())
}

fn refused(answer: Answer) -> Response {
    match answer {
        Answer::Refused(response) => response,
        // Resolution errors never come from a tool run; answer them as server errors all the same.
        Answer::Execution(e) => server_error(toolhost_wire::otc::SCHEMA, e.message, e.developer_message),
    }
}

fn json(body: String) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
