//! The floor: one hand-written axum handler per protocol, with toolhost's routes and JSON shapes
//! for `add_numbers`, that decodes the body, adds, and encodes the answer. No validation, no
//! catalog, no middleware: the least a server can do and still answer the same request.

use std::time::Instant;

use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::add;

/// The routes: N-ACT invoke, OTC call, WoA invoke and an MCP JSON-RPC `tools/call`.
pub(crate) fn app() -> Router {
    Router::new()
        .route("/nact/tools/{call}", post(nact))
        .route("/otc/tools/call", post(otc))
        .route("/woa/agents/{agent}/invoke", post(woa))
        .route("/mcp", post(mcp))
}

const TOOL: &str = "add_numbers";

#[derive(Deserialize)]
struct NactInvocation {
    #[serde(default)]
    #[allow(dead_code)] // decoded like toolhost does, then not needed
    name: Option<String>,
    input_parameters: Vec<NactParameter>,
}

#[derive(Deserialize)]
struct NactParameter {
    name: String,
    value: Value,
}

async fn nact(Path(call): Path<String>, Json(body): Json<NactInvocation>) -> Result<Json<Value>, StatusCode> {
    if call.strip_suffix(":invoke") != Some(TOOL) {
        return Err(StatusCode::NOT_FOUND);
    }
    let input: Map<String, Value> = body.input_parameters.into_iter().map(|p| (p.name, p.value)).collect();
    let output = add(&input);
    let parameters: Vec<Value> = output
        .into_iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    Ok(Json(json!({"output_parameters": parameters, "version": 1})))
}

#[derive(Deserialize)]
struct OtcBody {
    #[serde(rename = "$schema", default)]
    schema: Option<String>,
    request: OtcRequest,
}

#[derive(Deserialize)]
struct OtcRequest {
    tool_id: String,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    input: Option<Map<String, Value>>,
}

async fn otc(Json(body): Json<OtcBody>) -> Result<Json<Value>, StatusCode> {
    let started = Instant::now();
    if body.request.tool_id.split('@').next() != Some("Calculator.add_numbers") {
        return Err(StatusCode::BAD_REQUEST);
    }
    let output = add(&body.request.input.unwrap_or_default());
    let value = output.into_iter().next().map(|(_, v)| v);
    let call_id = body.request.call_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    Ok(Json(json!({
        "$schema": body.schema.unwrap_or_else(|| "otc://1.0".to_owned()),
        "result": {
            "call_id": call_id,
            "duration": started.elapsed().as_secs_f64() * 1000.0,
            "success": true,
            "value": value,
        }
    })))
}

#[derive(Deserialize)]
struct WoaEnvelope {
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    #[allow(dead_code)] // decoded like toolhost does, then not needed
    operation: Option<String>,
    input: Map<String, Value>,
}

async fn woa(Path(agent): Path<String>, Json(body): Json<WoaEnvelope>) -> Result<Json<Value>, StatusCode> {
    if agent != TOOL || body.agent.as_deref().is_some_and(|a| a != TOOL) {
        return Err(StatusCode::NOT_FOUND);
    }
    Ok(Json(Value::Object(add(&body.input))))
}

#[derive(Deserialize)]
struct RpcRequest {
    id: Value,
    method: String,
    #[serde(default)]
    params: Option<CallParams>,
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

async fn mcp(Json(request): Json<RpcRequest>) -> Json<Value> {
    let params = request
        .params
        .filter(|p| request.method == "tools/call" && p.name == TOOL);
    let Some(params) = params else {
        return Json(json!({
            "jsonrpc": "2.0",
            "id": request.id,
            "error": {"code": -32602, "message": "only tools/call of add_numbers is served"}
        }));
    };
    let output = Value::Object(add(&params.arguments.unwrap_or_default()));
    Json(json!({
        "jsonrpc": "2.0",
        "id": request.id,
        "result": {
            "content": [{"type": "text", "text": output.to_string()}],
            "structuredContent": output,
            "isError": false,
        }
    }))
}
