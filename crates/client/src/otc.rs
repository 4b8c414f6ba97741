//! Open Tool Calling 1.0 (`specs/otc-1.0/openapi.json`, docs/protocols.md §4): discovery and calls.
//!
//! Besides the spec's shapes this reads LangChain's tool server (`langchain-tool-server`),
//! which deviates: `GET /tools` is a bare array; a definition has no `version`, its `id` is the
//! plain name, and `input_schema` is the JSON Schema itself rather than `{parameters: …}`; a call
//! answers the result without the `{$schema, result}` envelope and with `execution_id` for
//! `call_id`; invalid input is 400 `{detail}` and a tool that raises is a bare 500.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use url::Url;

use crate::discover::{Ctx, Found};
use crate::error::{Error, ToolFailure};
use crate::http::Reply;
use crate::model::{Address, Protocol, Source, Tool};
use crate::nact::join;
use crate::{schema, text};

/// Whether a `GET /tools` body is an OTC listing: an object with a `tools` array (all the
/// OpenAPI requires; `$schema` is optional), or a bare array of definitions (LangChain).
/// When `detecting` the protocol, a listing without `$schema` counts only when it has tools and
/// each looks like an OTC definition (a string `id` and an `input_schema`), so that another
/// protocol's `{"tools": [...]}` is not taken for one.
pub(crate) fn is_listing(body: &Value, detecting: bool) -> bool {
    let definitions = |items: &[Value]| {
        items
            .iter()
            .all(|d| d.get("id").is_some_and(Value::is_string) && d.get("input_schema").is_some())
    };
    match body {
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(tools)) => {
                !detecting || map.contains_key("$schema") || (!tools.is_empty() && definitions(tools))
            }
            _ => false,
        },
        Value::Array(items) => definitions(items),
        _ => false,
    }
}

/// Every tool at `base`; one [`Tool`] per tool id, at its newest version, with every version
/// listed in [`Tool::versions`].
pub(crate) async fn discover(ctx: &Ctx<'_>, base: &Url, first: Option<Value>) -> Result<Found, Error> {
    let listing_url = join(base, "tools")?;
    let body = match first {
        Some(body) => body,
        None => crate::nact::json(
            ctx.http.get(&listing_url, ctx.freshness, ctx.bearer).await?,
            Protocol::Otc,
        )?,
    };
    if !is_listing(&body, false) {
        return Err(Error::Protocol {
            url: listing_url.to_string(),
            protocol: Protocol::Otc,
            detail: "expected `{\"tools\": [...]}` (or an array of definitions)".to_owned(),
        });
    }
    let schema_form = body
        .get("$schema")
        .and_then(Value::as_str)
        .filter(|s| s.len() < 200)
        .unwrap_or(toolhost_wire::otc::SCHEMA)
        .to_owned();
    let definitions = match &body {
        Value::Array(items) => items.as_slice(),
        _ => body["tools"].as_array().map(Vec::as_slice).unwrap_or_default(),
    };
    let endpoint = Source::Url(base.clone());
    let mut found = Found::default();
    // Tool id without `@version` → every version's tool.
    let mut by_id: BTreeMap<String, Vec<Tool>> = BTreeMap::new();
    for raw in definitions.iter().take(ctx.limits.max_tools) {
        match tool(base, &endpoint, &schema_form, raw.clone()) {
            Ok(t) => {
                let Tool {
                    address: crate::model::Address::Otc { tool_id, .. },
                    ..
                } = &t
                else {
                    continue;
                };
                let key = tool_id.split('@').next().unwrap_or(tool_id).to_owned();
                by_id.entry(key).or_default().push(t);
            }
            Err(why) => found.skipped.push(why),
        }
    }
    if definitions.len() > ctx.limits.max_tools {
        found.skipped.push(format!(
            "stopped after {} definitions (the limit)",
            ctx.limits.max_tools
        ));
    }
    for (_, mut versions) in by_id {
        versions.sort_by(|a, b| newer(b.version.as_deref(), a.version.as_deref()));
        let listed: Vec<String> = versions.iter().filter_map(|t| t.version.clone()).collect();
        let mut latest = versions.remove(0);
        latest.versions = listed;
        latest.history = versions
            .into_iter()
            .filter_map(|t| Some((t.version?, t.definition)))
            .collect();
        found.tools.push(latest);
    }
    Ok(found)
}

/// Orders versions: semver where both parse, else text.
fn newer(a: Option<&str>, b: Option<&str>) -> std::cmp::Ordering {
    match (a.map(semver::Version::parse), b.map(semver::Version::parse)) {
        (Some(Ok(a)), Some(Ok(b))) => a.cmp(&b),
        _ => a.cmp(&b),
    }
}

/// One definition as received → a tool; `Err` says why it was skipped.
pub(crate) fn tool(base: &Url, endpoint: &Source, schema_form: &str, raw: Value) -> Result<Tool, String> {
    let Some(id) = raw.get("id").and_then(Value::as_str) else {
        return Err("skipped an OTC definition without an `id`".to_owned());
    };
    let name = raw.get("name").and_then(Value::as_str).unwrap_or(id);
    if !text::is_plain_name(name) || !text::is_plain_name(id) {
        return Err(format!(
            "skipped a tool whose name is not plain text: `{}`",
            text::one_line(name, 80)
        ));
    }
    // The spec nests the schema under `parameters`; LangChain sends the schema itself.
    let input_schema = match raw.get("input_schema") {
        Some(wrapper) if wrapper.get("parameters").is_some_and(Value::is_object) => wrapper["parameters"].clone(),
        Some(schema) if schema.is_object() => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    };
    let inputs = schema::parameters(&input_schema);
    if let Some(bad) = inputs.iter().find(|p| !text::is_plain_name(&p.name)) {
        return Err(format!(
            "skipped `{name}`: the parameter `{}` is not plain text",
            text::one_line(&bad.name, 80)
        ));
    }
    let output_schema = raw.get("output_schema").filter(|s| !s.is_null()).cloned();
    let version = raw
        .get("version")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| id.split_once('@').map(|(_, v)| v.to_owned()));
    Ok(Tool {
        name: name.to_owned(),
        title: None,
        description: text::clean(
            raw.get("description").and_then(Value::as_str).unwrap_or_default(),
            text::MAX_DESCRIPTION,
        ),
        versions: version.iter().cloned().collect(),
        version,
        version_number: None,
        outputs: output_schema.as_ref().map(schema::outputs).unwrap_or_default(),
        inputs,
        input_schema,
        output_schema,
        protocol: Protocol::Otc,
        endpoint: endpoint.clone(),
        address: Address::Otc {
            base: base.clone(),
            tool_id: id.to_owned(),
            schema: schema_form.to_owned(),
        },
        definition: raw,
        history: Vec::new(),
        compiled: Default::default(),
    })
}

/// One attempt at a call with `call_id`: the result's `value` (`null` when the tool returns none).
pub(crate) async fn invoke(
    ctx: &Ctx<'_>,
    tool: &Tool,
    target: (&Url, &str, &str),
    call_id: &str,
    input: &Map<String, Value>,
    context: &crate::client::CallContext,
) -> Result<Value, Error> {
    let (base, tool_id, schema_form) = target;
    let url = join(base, "tools/call")?;
    let mut body = json!({
        "$schema": schema_form,
        "request": {"tool_id": tool_id, "call_id": call_id, "input": input},
    });
    if !context.is_empty() {
        body["request"]["context"] = context.otc();
    }
    // The confirmation a human gave the call (issue #40): `context` allows extension members.
    if let Some(confirmation) = &context.confirmation {
        body["request"]["context"]["confirmation"] = Value::String(confirmation.id.clone());
    }
    let reply = ctx.http.post_json(&url, &body, ctx.timeout, ctx.bearer).await?;
    if reply.status == 400
        && let Some(members) = reply.json().ok().and_then(|b| b.get("confirmation").cloned())
        && let Some(mut held) = crate::confirm::Confirmation::from_members(&tool.name, Protocol::Otc, &members, &reply)
    {
        held.presented.call_id = Some(call_id.to_owned());
        return Err(Error::Confirmation(Box::new(held)));
    }
    if reply.status != 200 {
        return Err(error(&reply, &tool.name));
    }
    let body = reply.json().map_err(|detail| Error::Protocol {
        url: url.to_string(),
        protocol: Protocol::Otc,
        detail,
    })?;
    // The spec wraps the result; LangChain's server sends it bare.
    let result = match body.get("result") {
        Some(result @ Value::Object(_)) => result,
        _ => &body,
    };
    match result.get("success").and_then(Value::as_bool) {
        Some(true) => Ok(result.get("value").cloned().unwrap_or(Value::Null)),
        Some(false) => Err(Error::Tool(Box::new(failure(&tool.name, result.get("error"))))),
        None => Err(Error::Protocol {
            url: url.to_string(),
            protocol: Protocol::Otc,
            detail: "the call result has no boolean `success`".to_owned(),
        }),
    }
}

/// `ToolError` → a failure with the tool's text for the model. Its `developer_message` is kept
/// on the failure and logged, never put in what is shown (OTC: it "SHOULD NOT be shown to the
/// user or an AI model").
fn failure(tool: &str, error: Option<&Value>) -> ToolFailure {
    let text = |key: &str| {
        error
            .and_then(|e| e.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| text::clean(s, 2000))
    };
    let developer_message = text("developer_message");
    if let Some(developer) = &developer_message {
        // debug, not info: a server runs this client against upstreams, whose words are
        // scrubbed on the failure it returns, not here.
        tracing::debug!(tool, developer_message = %developer, "the OTC tool failed; its developer message");
    }
    ToolFailure {
        tool: tool.to_owned(),
        message: text("message").unwrap_or_else(|| "the tool failed without saying why".to_owned()),
        prompt: text("additional_prompt_content"),
        developer_message,
        retryable: error
            .and_then(|e| e.get("can_retry"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        retry_after: error
            .and_then(|e| e.get("retry_after_ms"))
            .and_then(Value::as_u64)
            .filter(|ms| *ms > 0)
            .map(std::time::Duration::from_millis),
    }
}

/// A non-200 answer: 422 with `parameter_errors`, 400 `{message}` (or FastAPI's `{detail}`), 5xx.
fn error(reply: &Reply, tool: &str) -> Error {
    let body = reply.json().ok();
    let field = |key: &str| {
        body.as_ref()
            .and_then(|b| b.get(key))
            .and_then(Value::as_str)
            .map(|s| text::clean(s, 2000))
    };
    if reply.status == 422
        && let Some(Value::Object(errors)) = body.as_ref().and_then(|b| b.get("parameter_errors"))
    {
        return Error::InvalidArguments {
            tool: tool.to_owned(),
            problems: errors
                .iter()
                .map(|(parameter, message)| toolhost_core::ParameterError {
                    parameter: text::one_line(parameter, text::MAX_NAME),
                    message: text::clean(message.as_str().unwrap_or_default(), 2000),
                })
                .collect(),
        };
    }
    let detail = field("message")
        .or_else(|| field("detail"))
        .unwrap_or_else(|| reply.snippet());
    // For logs only: OTC's `developer_message` "SHOULD NOT be shown to the user or an AI model".
    if let Some(developer) = field("developer_message") {
        tracing::debug!(tool, status = reply.status, developer_message = %developer, "the OTC server refused the call; its developer message");
    }
    Error::Status {
        url: reply.url.to_string(),
        status: reply.status,
        detail,
        retry_after: reply.retry_after(),
        retryable: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_spec_and_langchain_listings() {
        let add = json!({"id": "add", "name": "add", "input_schema": {"type": "object"}});
        for detecting in [true, false] {
            assert!(is_listing(&json!({"$schema": "otc://1.0", "tools": []}), detecting));
            assert!(
                is_listing(&json!({"tools": [add]}), detecting),
                "no `$schema` (issue #31.12)"
            );
            assert!(is_listing(&json!([add]), detecting));
            assert!(!is_listing(&json!({"items": [], "paging": {}}), detecting));
            assert!(!is_listing(&json!([{"name": "x"}]), detecting));
        }
        // Named `--protocol otc`, any `tools` array is read; detected, only one that looks OTC.
        assert!(is_listing(&json!({"tools": []}), false));
        assert!(!is_listing(&json!({"tools": []}), true));
        assert!(!is_listing(&json!({"tools": [{"name": "x"}]}), true));
    }

    #[test]
    fn definitions_in_both_shapes() {
        let base = Url::parse("http://h/otc").unwrap();
        let endpoint = Source::Url(base.clone());
        let spec = tool(
            &base,
            &endpoint,
            "otc://1.0",
            json!({
                "id": "Calculator.add@1.0.0", "name": "Calculator_add", "description": "Add.", "version": "1.0.0",
                "input_schema": {"parameters": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}},
                "output_schema": {"type": "number"}
            }),
        )
        .unwrap();
        assert_eq!(spec.name, "Calculator_add");
        assert_eq!(spec.version.as_deref(), Some("1.0.0"));
        assert_eq!(spec.inputs.len(), 1);
        let langchain = tool(
            &base,
            &endpoint,
            "otc://1.0",
            json!({"id": "add", "name": "add", "description": "Add two integers.",
                   "input_schema": {"type": "object", "properties": {"x": {"type": "integer", "title": "X"}}, "required": ["x"]},
                   "output_schema": {"title": "Result", "type": "integer"}}),
        )
        .unwrap();
        assert_eq!(langchain.version, None);
        assert_eq!(langchain.inputs[0].name, "x");
        assert!(langchain.check(&json!({"x": "a"})).is_err());
    }

    #[test]
    fn tool_errors_carry_the_prompt() {
        let f = failure(
            "t",
            Some(
                &json!({"message": "busy", "can_retry": true, "retry_after_ms": 250, "additional_prompt_content": "wait"}),
            ),
        );
        assert!(f.retryable);
        assert_eq!(f.retry_after, Some(std::time::Duration::from_millis(250)));
        assert_eq!(f.prompt.as_deref(), Some("wait"));
        // call-tool-response: "If unspecified, the client MUST assume the request cannot be retried".
        let silent = failure("t", Some(&json!({"message": "busy", "retry_after_ms": 250})));
        assert!(!silent.retryable);
        assert!(!Error::Tool(Box::new(silent)).server_says_retry(Protocol::Otc));
    }

    /// schemas-call-tool-response.mdx: "If [`can_retry` is] unspecified, the client MUST assume
    /// the request cannot be retried" (issue #31.13).
    #[test]
    fn an_error_without_can_retry_is_not_retryable() {
        for error in [
            json!({"message": "busy"}),
            json!({"message": "busy", "can_retry": "yes"}),
        ] {
            assert!(!failure("t", Some(&error)).retryable, "{error}");
        }
        assert!(!failure("t", None).retryable);
    }
}
