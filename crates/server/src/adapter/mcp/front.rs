//! The one layer in front of rmcp. A body that is not a JSON-RPC message gets a JSON-RPC error
//! (issue #12.11, #22.9).
//!
//! rmcp's streamable HTTP transport answers any JSON body it cannot deserialize with 415 and a
//! plain-text message, which says "wrong content type" to a client that sent the right one.
//! JSON-RPC 2.0 (§5.1) says: invalid JSON is a parse error (-32700), valid JSON that is not a
//! request an invalid request (-32600), sent as an error object with `id: null`; over HTTP,
//! with 400. This layer keeps the body (a cheap, shared buffer) and, only when the transport
//! refused a JSON body as unsupported, answers so instead. Nothing is parsed twice on the
//! success path.
//!
//! The same layer sets the caller's access and id for the handler and the session table and, in stateless mode, answers a
//! plain `tools/call` without rmcp ([`super::fast`]).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::State;
use crate::auth::Caller;

/// JSON-RPC 2.0's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0's invalid request.
const INVALID_REQUEST: i64 = -32600;

/// What the front of the MCP route needs: the state (for the fast path, `None` with sessions
/// on) and the body limit.
#[derive(Debug, Clone)]
pub(super) struct Front {
    pub fast: Option<Arc<State>>,
    pub limit: usize,
}

/// The one layer in front of rmcp: runs the request with its caller's access in
/// [`super::CALLER_ACCESS`], answers a plain stateless `tools/call` itself ([`super::fast`]),
/// and a body the transport refused as described in the module documentation.
pub(super) async fn front(front: Arc<Front>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !json_content(request.headers()) {
        let (access, id) = caller(request.extensions());
        return super::CALLER_ACCESS
            .scope(access, super::CALLER_ID.scope(id, next.run(request)))
            .await;
    }
    let limit = front.limit;
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                INVALID_REQUEST,
                &format!("the request body is larger than {limit} bytes"),
            );
        }
    };
    if let Some(state) = &front.fast
        && let Some(call) = super::fast::parse(&parts.headers, &bytes)
    {
        return super::fast::answer(state, parts.extensions.get::<Caller>(), call).await;
    }
    let (access, id) = caller(&parts.extensions);
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    let response = super::CALLER_ACCESS
        .scope(access, super::CALLER_ID.scope(id, next.run(request)))
        .await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (code, message) = explain(&bytes);
    error(StatusCode::BAD_REQUEST, code, &message)
}

/// What the caller the auth layer recorded may see (nothing but public tools without one), and
/// its stable id (`anonymous` without one).
fn caller(extensions: &axum::http::Extensions) -> (toolhost_core::Access, std::borrow::Cow<'static, str>) {
    match extensions.get::<Caller>() {
        Some(c) => (c.access.clone(), c.id.clone()),
        None => (toolhost_core::Access::Scopes(Arc::default()), "anonymous".into()),
    }
}

/// Whether the body is declared JSON (`application/json`, any parameters): what rmcp reads.
pub(super) fn json_content(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| crate::http::body::essence(v).eq_ignore_ascii_case("application/json"))
}

/// The JSON-RPC error code and a message a client can act on, for a body the transport refused.
fn explain(body: &[u8]) -> (i64, String) {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return (PARSE_ERROR, format!("the body is not valid JSON ({e})")),
    };
    let problem = match &value {
        serde_json::Value::Array(_) => {
            "a batch (JSON array) is not accepted; send one JSON-RPC message per request".to_owned()
        }
        serde_json::Value::Object(m) => {
            if m.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
                "`jsonrpc` must be \"2.0\"".to_owned()
            } else if m.get("id").is_some_and(serde_json::Value::is_null) {
                "`id` must be a string or a number, not null".to_owned()
            } else if m.get("params").is_some_and(|p| !p.is_object()) {
                "`params` must be an object".to_owned()
            } else if m.get("method").is_some_and(|v| !v.is_string()) {
                "`method` must be a string".to_owned()
            } else {
                "it is not a JSON-RPC request, notification or response that MCP defines (check `method` and the shape of `params`)".to_owned()
            }
        }
        _ => "a JSON-RPC message is a JSON object".to_owned(),
    };
    (INVALID_REQUEST, format!("invalid request: {problem}"))
}

/// A JSON-RPC error answer with `id: null`.
pub(super) fn error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    crate::ops::json_response(status, body.to_string())
}

#[cfg(test)]
mod tests {
    use super::{INVALID_REQUEST, PARSE_ERROR, explain};

    #[test]
    fn each_shape_gets_its_code_and_reason() {
        assert_eq!(explain(b"{\"jsonrpc\": \"2.0\", \"id\": 1, ").0, PARSE_ERROR);
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(explain(deep.as_bytes()).0, PARSE_ERROR, "past the parser's depth limit");
        for (body, said) in [
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, "batch"),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, "`id`"),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
                "`params`",
            ),
            (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, "`jsonrpc`"),
            (r#""ping""#, "JSON object"),
        ] {
            let (code, message) = explain(body.as_bytes());
            assert_eq!(code, INVALID_REQUEST, "{body}");
            assert!(message.contains(said), "{body}: {message}");
        }
    }
}
