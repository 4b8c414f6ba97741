//! The stateless `tools/call` fast path (issue #18).
//!
//! In stateless mode rmcp answers every POST by building a service for it, spawning its tasks
//! and passing the message through a channel (`serve_directly`), after deserializing the body
//! into its every-message enum: about 20 µs of CPU per call, more than the call itself. The
//! common request, a plain `tools/call` whose headers ask for nothing else, is answered here
//! instead: the body is read into the few fields it may have, the call goes to the same
//! [`super::handler::call`] the rmcp handler uses, and the answer is rmcp's own model type,
//! serialized as rmcp serializes it. Anything else (another method, a field or `_meta` key this
//! path does not read, an `Origin`, a protocol version that negotiates per request, any other
//! `Mcp-*` header) goes to rmcp unchanged, which keeps every rule of the transport in one place.
//! The DNS-rebinding `Host` check is the protocol routes' own ([`crate::http::hosts`]), built
//! from the same configured hosts as rmcp's.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use rmcp::model::{
    JsonObject, JsonRpcError, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;

use crate::State;
use crate::auth::Caller;
use crate::http::body::essence;

/// A `tools/call` request with nothing this path does not read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Call {
    #[expect(dead_code, reason = "read to check it is \"2.0\"")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: Method,
    params: Params,
}

/// The one method this path answers.
#[derive(Debug, Deserialize)]
enum Method {
    #[serde(rename = "tools/call")]
    CallTool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

/// `_meta` with only toolhost's version pin ([`super::VERSION_META`]); a progress token or
/// protocol metadata goes to rmcp.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    #[serde(rename = "toolhost/version", default)]
    version: Option<serde_json::Value>,
}

/// Protocol versions whose stateless requests carry no per-request metadata (from 2026-07-28
/// on, `_meta` must name the version: rmcp checks it).
const PLAIN_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The call, when this request is one the fast path answers exactly as rmcp would.
pub(super) fn parse(headers: &HeaderMap, body: &Bytes) -> Option<Call> {
    if !plain_headers(headers) {
        return None;
    }
    let call: Call = serde_json::from_slice(body).ok()?;
    let Method::CallTool = call.method;
    Some(call)
}

/// Headers that ask the transport for nothing beyond a JSON answer to one call: JSON content,
/// both media types accepted (rmcp refuses a POST without them), a plain protocol version or
/// none, no `Origin`, no other `Mcp-*` header.
fn plain_headers(headers: &HeaderMap) -> bool {
    let json = super::front::json_content(headers);
    let (mut accepts_json, mut accepts_sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { return false };
        for media in value.split(',') {
            let media = essence(media);
            accepts_json |= media.eq_ignore_ascii_case("application/json");
            accepts_sse |= media.eq_ignore_ascii_case("text/event-stream");
        }
    }
    let version_plain = headers.get_all("mcp-protocol-version").iter().count() <= 1
        && headers
            .get("mcp-protocol-version")
            .is_none_or(|v| v.to_str().is_ok_and(|v| PLAIN_VERSIONS.contains(&v)));
    let other_mcp = headers
        .keys()
        .any(|k| k.as_str().starts_with("mcp-") && k.as_str() != "mcp-protocol-version");
    json && accepts_json && accepts_sse && version_plain && !other_mcp && !headers.contains_key(header::ORIGIN)
}

/// Runs the call and answers it as rmcp's stateless JSON mode does: 200 with the JSON-RPC
/// response or error.
pub(super) async fn answer(state: &State, caller: Option<&Caller>, call: Call) -> Response {
    let Call { id, params, .. } = call;
    let pinned = params.meta.as_ref().and_then(|m| m.version.as_ref());
    let mut context = super::handler::call_context(caller);
    // A plain version, stateless: a question cannot come back (`elicit.rs`).
    context.ask = Some(super::elicit::stateless());
    // A version before 2026-07-28: a confirmation's retry carries no state (APPROVALS.md §5.3).
    context.confirmation = Some(toolhost_core::confirm::Presented::ByBinding);
    let doorway = super::approval::Doorway::default();
    // These clients cannot declare the tasks extension: a tool that runs only as a task refuses.
    let answered =
        if super::tasks::support(state, &params.name, &context.access).mode == toolhost_core::TaskSupport::Required {
            Err(super::tasks::required())
        } else {
            super::handler::call(state, context, params.name, params.arguments, pinned, false, doorway).await
        };
    let message = match answered.map(|response| match response {
        rmcp::model::CallToolResponse::Complete(result) => result,
        // Never made for an earlier version's peer (`Doorway::mrtr` is false).
        _ => super::convert::failure("this answer needs MCP 2026-07-28".to_owned()),
    }) {
        Ok(result) => {
            // As rmcp's handler dispatch does for every peer before 2026-07-28.
            let mut result = ServerResult::CallToolResult(result);
            result.strip_result_type_for_legacy_peer();
            ServerJsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id,
                result,
            })
        }
        Err(error) => ServerJsonRpcMessage::Error(JsonRpcError::new(Some(id), error)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => {
            let mut response = Response::new(axum::body::Body::from(body));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => {
            tracing::error!(error = %e, "an MCP answer did not serialize");
            let message = "the server could not write its answer (an internal error, logged); the call may have run";
            super::front::error(StatusCode::INTERNAL_SERVER_ERROR, -32603, message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, header::HeaderValue::from_static(v));
        }
        map
    }

    const PLAIN: [(&str, &str); 3] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1},"_meta":{"toolhost/version":"1"}}}"#;

    #[test]
    fn a_plain_call_takes_the_fast_path() {
        assert!(CALL.contains(super::super::VERSION_META));
        let call = parse(&headers(&PLAIN), &Bytes::from_static(CALL.as_bytes())).expect("fast");
        assert_eq!(call.params.name, "add");
        assert_eq!(call.id, RequestId::Number(7));
        assert!(call.params.meta.is_some_and(|m| m.version.is_some()));
        let mut no_version = headers(&PLAIN[..2]);
        assert!(parse(&no_version, &Bytes::from_static(CALL.as_bytes())).is_some());
        no_version.insert(
            "accept",
            header::HeaderValue::from_static("text/event-stream; q=1, application/json"),
        );
        assert!(parse(&no_version, &Bytes::from_static(CALL.as_bytes())).is_some());
    }

    #[test]
    fn anything_else_goes_to_rmcp() {
        let fast = |h: &HeaderMap, body: &'static str| parse(h, &Bytes::from_static(body.as_bytes())).is_some();
        let plain = headers(&PLAIN);
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"add"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"add"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}"#,
        ] {
            assert!(!fast(&plain, body), "{body}");
        }
        for changed in [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-protocol-version", "1999-01-01"),
            ("content-type", "text/plain"),
            ("accept", "application/json"),
        ] {
            let mut h = headers(&PLAIN);
            h.insert(changed.0, header::HeaderValue::from_static(changed.1));
            assert!(!fast(&h, CALL), "{changed:?}");
        }
        for added in [
            ("origin", "http://localhost"),
            ("mcp-session-id", "abc"),
            ("mcp-method", "tools/call"),
            ("mcp-param-a", "1"),
        ] {
            let mut h = headers(&PLAIN);
            h.insert(added.0, header::HeaderValue::from_static(added.1));
            assert!(!fast(&h, CALL), "{added:?}");
        }
    }
}
