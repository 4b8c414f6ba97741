//! OTC 1.0: health, listing and tool definitions against the spec's openapi.json, the three
//! error classes and version resolution (with inputs that must be refused), and calls of the
//! tools that may be invoked (`call_id` generated, echoed and repeated).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Value, json};
use url::Url;

use crate::checks::Check;
use crate::checks::otc::*;
use crate::probe::{Exchange, excerpt};
use crate::report::Evidence;
use crate::schema::{self, Shape};
use crate::{Ctx, inputs, join};

/// A validator for `#/components/schemas/{name}` of the OpenAPI description.
fn component(name: &'static str) -> Option<&'static jsonschema::Validator> {
    static CACHE: OnceLock<HashMap<&'static str, jsonschema::Validator>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            [
                "ToolDefinition",
                "CallToolResponse",
                "ServerErrorResponse",
                "ValidationErrorResponse",
            ]
            .into_iter()
            .map(|name| {
                let pointer = format!("#/components/schemas/{name}");
                (name, schema::compile(schema::OTC, &pointer, schema::loosen_otc))
            })
            .collect()
        })
        .get(name)
}

/// Why `value` does not fit the component `name`; `None` when it does.
fn misfit(name: &'static str, value: &Value) -> Option<String> {
    schema::complaint(component(name)?, &format!("a {name}"), value)
}

/// A tool of the listing.
#[derive(Debug)]
struct Listed {
    definition: Value,
    request: String,
}

impl Listed {
    fn id(&self) -> &str {
        self.definition.get("id").and_then(Value::as_str).unwrap_or_default()
    }

    /// The id without its version.
    fn base(&self) -> &str {
        self.id().split('@').next().unwrap_or_default()
    }

    fn evidence(&self, found: impl Into<String>) -> Evidence {
        Evidence::item(&self.request, &self.definition, found.into())
    }

    fn parameters(&self) -> &Value {
        self.definition
            .pointer("/input_schema/parameters")
            .unwrap_or(&Value::Null)
    }
}

pub(crate) async fn run(ctx: &mut Ctx, base: &Url) {
    health(ctx, base).await;
    let Some(listed) = list(ctx, base).await else {
        for check in ALL.iter().filter(|c| c.id != HEALTH.id) {
            ctx.rec.skip(check, "the listing could not be read");
        }
        return;
    };
    let mut ids: HashMap<String, usize> = HashMap::new();
    for tool in &listed {
        *ids.entry(tool.id().to_owned()).or_default() += 1;
    }
    for tool in &listed {
        definition(ctx, tool, ids[tool.id()]);
    }
    let call = join(base, &["tools", "call"]);
    not_found(ctx, &call).await;
    let mut in_depth = 0;
    for tool in &listed {
        let name = tool.definition.get("name").and_then(Value::as_str).unwrap_or_default();
        let short = tool.base().split_once('.').map(|(_, t)| t).unwrap_or_default();
        let invocable = ctx.invocable(&[name, short, tool.base()], &tool.definition);
        if in_depth >= ctx.max_tools && invocable.is_none() {
            continue;
        }
        in_depth += 1;
        let versions: Vec<&Value> = listed
            .iter()
            .filter(|other| other.base() == tool.base())
            .map(Listed::parameters)
            .collect();
        refusals(ctx, &call, tool, &versions).await;
        if let Some((name, input)) = invocable {
            invoke(ctx, &call, tool, &name, input).await;
        }
    }
    let reason = "no tool may be invoked: name one with --invoke TOOL (the server marks none read-only)";
    for check in [&CALL, &CALL_VALUE, &CALL_ID_GENERATED, &CALL_ID_ECHO, &CALL_ID_REPEATED] {
        ctx.rec.skip(check, reason);
    }
}

async fn health(ctx: &mut Ctx, base: &Url) {
    match ctx.probe.get(&join(base, &["health"]), &[]).await {
        Ok(answer) if answer.status == 503 => {
            ctx.rec
                .skip(&HEALTH, "the server answers 503: not ready to receive tool calls");
        }
        Ok(answer) => ctx.rec.judge(&HEALTH, answer.status == 200, || {
            answer.evidence(format!("HTTP {}, not 200", answer.status))
        }),
        Err(failure) => ctx.no_answer(&HEALTH, &failure),
    }
}

/// `$schema` of a body, when it has one: it must be a URI.
fn schema_uri(ctx: &mut Ctx, answer: &Exchange, body: &Value) {
    if let Some(schema) = body.get("$schema") {
        let uri = schema.as_str().is_some_and(|s| Url::parse(s).is_ok());
        ctx.rec.judge(&SCHEMA_URI, uri, || {
            answer.evidence(format!("`$schema` is {schema}, not a URI"))
        });
    }
}

async fn list(ctx: &mut Ctx, base: &Url) -> Option<Vec<Listed>> {
    let answer = match ctx.probe.get(&join(base, &["tools"]), &[]).await {
        Ok(answer) => answer,
        Err(failure) => {
            ctx.no_answer(&LIST, &failure);
            return None;
        }
    };
    let body = answer.json().filter(|_| answer.status == 200);
    let tools = match body.as_ref() {
        Some(body) if body.get("tools").is_some_and(Value::is_array) => {
            // The envelope; each definition is judged by `otc-tool-definition`.
            let mut envelope = body.clone();
            envelope["tools"] = json!([]);
            ctx.shape(&LIST, Shape::OtcListing, &envelope, &answer);
            ctx.rec.judge(&LIST_SCHEMA, body.get("$schema").is_some(), || {
                answer.evidence("the listing has no `$schema`")
            });
            schema_uri(ctx, &answer, body);
            body["tools"].as_array().cloned().unwrap_or_default()
        }
        // A bare array of definitions (as some servers send) breaks the listing's shape; its
        // definitions are still checked.
        Some(Value::Array(tools)) => {
            ctx.rec.fail(
                &LIST,
                answer.evidence("a bare array, not an object with `$schema` and `tools`"),
            );
            ctx.rec.skip(&LIST_SCHEMA, "the listing is a bare array");
            tools.clone()
        }
        _ => {
            ctx.rec.fail(
                &LIST,
                answer.evidence("not 200 with a JSON object holding a `tools` array"),
            );
            return None;
        }
    };
    Some(
        tools
            .iter()
            .map(|definition| Listed {
                definition: definition.clone(),
                request: answer.request.clone(),
            })
            .collect(),
    )
}

fn is_semver(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn definition(ctx: &mut Ctx, tool: &Listed, copies: usize) {
    let d = &tool.definition;
    let id = tool.id();
    ctx.rec.judge(&DEFINITION, misfit("ToolDefinition", d).is_none(), || {
        tool.evidence(misfit("ToolDefinition", d).unwrap_or_default())
    });
    ctx.rec.judge(&ID_UNIQUE, copies == 1, || {
        tool.evidence(format!("{copies} tools have the id `{id}`"))
    });
    let version = d.get("version").and_then(Value::as_str).unwrap_or_default();
    let suffix = id.split_once('@').map(|(_, v)| v).unwrap_or_default();
    let toolkit = tool
        .base()
        .split_once('.')
        .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty());
    ctx.rec.judge(
        &VERSIONED_ID,
        toolkit && is_semver(version) && suffix == version,
        || {
            tool.evidence(format!(
                "the id `{id}` and version `{version}` are not `Toolkit.Tool@x.y.z` with that x.y.z"
            ))
        },
    );
    let parameters = tool.parameters();
    let mut problems = Vec::new();
    if let Err(e) = jsonschema::meta::validate(parameters) {
        problems.push(format!("`input_schema.parameters` is not a valid JSON Schema: {e}"));
    }
    for (name, property) in parameters
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if !property.get("description").is_some_and(Value::is_string) {
            problems.push(format!("the parameter `{name}` has no `description`"));
        }
    }
    ctx.rec.judge(&PARAMETERS, problems.is_empty(), || {
        tool.evidence(format!("`{id}`: {}", problems.join("; ")))
    });
}

/// A body that must be a 400 ServerErrorResponse: the status and the schema.
fn server_error(ctx: &mut Ctx, answer: &Exchange, why: &str) {
    let body = answer.json().unwrap_or_default();
    schema_uri(ctx, answer, &body);
    let fit = misfit("ServerErrorResponse", &body);
    ctx.rec.judge(&SERVER_ERROR, answer.status == 400 && fit.is_none(), || {
        answer.evidence(if answer.status == 400 {
            fit.unwrap_or_default()
        } else {
            format!(
                "HTTP {} for {why}; an error before the tool is called is a 400",
                answer.status
            )
        })
    });
}

async fn call(ctx: &mut Ctx, check: &Check, url: &Url, request: Value) -> Option<Exchange> {
    match ctx.probe.post(url, &json!({"request": request})).await {
        Ok(answer) => Some(answer),
        Err(failure) => {
            ctx.no_answer(check, &failure);
            None
        }
    }
}

/// Tool ids the server cannot have: an unknown tool, and one that is not a tool id.
async fn not_found(ctx: &mut Ctx, url: &Url) {
    let unknown = format!("ToolhostConformance.Missing_{}", uuid::Uuid::new_v4().simple());
    for (tool_id, why) in [
        (unknown.as_str(), "a tool the server does not list"),
        ("not a tool id", "a tool ID that is invalid"),
    ] {
        if let Some(answer) = call(ctx, &SERVER_ERROR, url, json!({"tool_id": tool_id, "input": {}})).await {
            server_error(ctx, &answer, why);
        }
    }
}

/// With an input the tool's schema refuses: the exact version, the unversioned id and `@x`
/// must each be a 422 (resolved, then validated); a version that does not exist a 400.
///
/// The input must be refused by every listed version of the tool (`versions`: their
/// `parameters`), so that a server resolving the id to another version still runs nothing.
async fn refusals(ctx: &mut Ctx, url: &Url, tool: &Listed, versions: &[&Value]) {
    let refused_by_all = |bad: &Value| {
        versions
            .iter()
            .all(|schema| toolhost_core::validate::compile(schema).is_ok_and(|validator| !validator.is_valid(bad)))
    };
    let Some((bad, how)) = inputs::invalid(tool.parameters()).filter(|(bad, _)| refused_by_all(bad)) else {
        for check in [&VALIDATION_ERROR, &RESOLUTION] {
            ctx.rec.skip(
                check,
                format!(
                    "`{}` has no input that every listed version's schema surely refuses",
                    tool.id()
                ),
            );
        }
        return;
    };
    let base = tool.base();
    let version = tool.id().split_once('@').map(|(_, v)| v.to_owned()).unwrap_or_default();
    let major = version.split('.').next().unwrap_or("0").parse::<u64>().unwrap_or(0);
    let mut resolving = vec![(tool.id().to_owned(), &VALIDATION_ERROR, "the exact version")];
    resolving.push((base.to_owned(), &RESOLUTION, "no version (the latest)"));
    if version.ends_with(".0.0") {
        resolving.push((format!("{base}@{major}"), &RESOLUTION, "the shorthand `@x` (x.0.0)"));
    }
    // Whether the exact version's refusal was a 422: only then does another status for the
    // other forms of the id say they were not resolved.
    let mut exact_validated = false;
    for (tool_id, check, what) in resolving {
        if check.id == RESOLUTION.id && !exact_validated {
            ctx.rec.skip(
                check,
                "the exact version's invalid input was not refused with a 422, so resolution cannot be told apart",
            );
            continue;
        }
        let Some(answer) = call(ctx, check, url, json!({"tool_id": tool_id, "input": bad})).await else {
            return;
        };
        let body = answer.json().unwrap_or_default();
        schema_uri(ctx, &answer, &body);
        let fit = misfit("ValidationErrorResponse", &body);
        let ok = answer.status == 422 && fit.is_none();
        ctx.rec.judge(check, ok, || {
            answer.evidence(match answer.status {
                422 => fit.clone().unwrap_or_default(),
                200 => format!("HTTP 200: the tool was called with an input that {how}"),
                400 => format!(
                    "HTTP 400 for `{tool_id}` ({what}), which the server lists, with an input that {how}: a 422 was due"
                ),
                s => format!("HTTP {s} for an input that {how}: a 422 ValidationErrorResponse was due"),
            })
        });
        if check.id == VALIDATION_ERROR.id && answer.status == 422 {
            // Resolved and validated as OTC 1.0 although the request had no `$schema`.
            exact_validated = true;
            ctx.rec.pass(&SCHEMA_ABSENT);
            ctx.rec.pass(&RESOLUTION);
        }
    }
    let missing = format!("{base}@{}.0.0", major + 1000);
    if let Some(answer) = call(ctx, &SERVER_ERROR, url, json!({"tool_id": missing, "input": bad})).await {
        server_error(ctx, &answer, "a version that is not available");
    }
}

/// The tool called for real: without `call_id`, then twice with one.
async fn invoke(ctx: &mut Ctx, url: &Url, tool: &Listed, name: &str, input: Option<Value>) {
    let input = input.unwrap_or_else(|| inputs::valid(tool.parameters()));
    let call_id = uuid::Uuid::new_v4().to_string();
    let requests = [
        json!({"tool_id": tool.id(), "input": input}),
        json!({"tool_id": tool.id(), "input": input, "call_id": call_id}),
        json!({"tool_id": tool.id(), "input": input, "call_id": call_id}),
    ];
    let mut first_with_id: Option<Value> = None;
    for (i, request) in requests.into_iter().enumerate() {
        let what = [
            "OTC, without call_id",
            "OTC, with a call_id",
            "OTC, the same call_id again",
        ][i];
        ctx.invoked(name, what);
        let Some(answer) = call(ctx, &CALL, url, request).await else {
            return;
        };
        let body = answer.json().unwrap_or_default();
        if matches!(answer.status, 400 | 422) {
            let reason = format!(
                "`{}` refused the input {input} (HTTP {}: {}); give one with --invoke '{name}=JSON'",
                tool.id(),
                answer.status,
                excerpt(&answer.body)
            );
            for check in [&CALL, &CALL_VALUE, &CALL_ID_GENERATED, &CALL_ID_ECHO, &CALL_ID_REPEATED] {
                ctx.rec.skip(check, reason.clone());
            }
            return;
        }
        let fit = misfit("CallToolResponse", &body["result"]).or_else(|| {
            // The envelope, its `result` judged above.
            let mut envelope = body.clone();
            envelope["result"] = json!({"call_id": "x", "success": true});
            schema::misfit(Shape::OtcCall, &envelope)
        });
        let ok = answer.status == 200 && body.get("result").is_some() && fit.is_none();
        ctx.rec.judge(&CALL, ok, || {
            answer.evidence(if answer.status == 200 {
                fit.clone().unwrap_or_else(|| "no `result`".to_owned())
            } else {
                format!(
                    "HTTP {}: a tool call answers 200 (400/422 before the tool runs)",
                    answer.status
                )
            })
        });
        if answer.status != 200 || !body["result"].is_object() {
            return;
        }
        schema_uri(ctx, &answer, &body);
        ctx.rec.pass(&SCHEMA_ABSENT);
        let result = &body["result"];
        let got = result.get("call_id").and_then(Value::as_str).unwrap_or_default();
        match i {
            0 => {
                ctx.rec.judge(&CALL_ID_GENERATED, !got.is_empty(), || {
                    answer.evidence("no `call_id` in the result of a call that sent none")
                });
                value(ctx, &answer, tool, result);
            }
            1 => {
                ctx.rec.judge(&CALL_ID_ECHO, got == call_id, || {
                    answer.evidence(format!("the call sent `call_id` {call_id}; the result says {got:?}"))
                });
                first_with_id = Some(result.clone());
            }
            _ => {
                let first = first_with_id.clone().unwrap_or_default();
                let same = ["call_id", "success", "value", "error"]
                    .iter()
                    .all(|key| first.get(key) == result.get(key));
                ctx.rec.judge(&CALL_ID_REPEATED, same, || {
                    answer.evidence(format!(
                        "the same call under the same `call_id` answered differently: first {}",
                        excerpt(first.to_string().as_bytes())
                    ))
                });
            }
        }
    }
}

/// A successful result's `value` against the definition's `output_schema`.
fn value(ctx: &mut Ctx, answer: &Exchange, tool: &Listed, result: &Value) {
    if result.get("success") != Some(&Value::Bool(true)) {
        ctx.rec.skip(&CALL_VALUE, "the call did not succeed");
        return;
    }
    let schema = tool.definition.get("output_schema").unwrap_or(&Value::Null);
    let value = result.get("value");
    let (ok, found) = match schema {
        Value::Null => (
            value.is_none_or(Value::is_null),
            "a value from a tool whose output_schema is null".to_owned(),
        ),
        schema => match toolhost_core::validate::compile(schema) {
            Ok(validator) => {
                let value = value.cloned().unwrap_or(Value::Null);
                let error = validator.iter_errors(&value).next().map(|e| e.to_string());
                (
                    error.is_none(),
                    format!("the value does not fit output_schema: {}", error.unwrap_or_default()),
                )
            }
            Err(e) => (false, format!("output_schema does not compile: {e}")),
        },
    };
    ctx.rec.judge(&CALL_VALUE, ok, || answer.evidence(found));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every shape check has its schema: a missing one would pass every server.
    #[test]
    fn every_otc_schema_is_there_and_refuses_an_empty_object() {
        for name in [
            "ToolDefinition",
            "CallToolResponse",
            "ServerErrorResponse",
            "ValidationErrorResponse",
        ] {
            assert!(component(name).is_some(), "{name}");
            assert!(misfit(name, &json!({})).is_some(), "{name} takes {{}}");
        }
    }
}
