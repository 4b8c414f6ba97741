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

mod refusals;

use refusals::{call, not_found, refusals, requires};

/// A validator for `#/components/schemas/{name}` of the OpenAPI description (loosened as
/// [`schema::loosen_otc`] says).
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

    /// The names a user may know the tool by: its `name`, the tool part of its id, its id
    /// without the version.
    fn names(&self) -> [&str; 3] {
        let name = self.definition.get("name").and_then(Value::as_str).unwrap_or_default();
        let short = self.base().split_once('.').map(|(_, t)| t).unwrap_or_default();
        [name, short, self.base()]
    }

    /// The version of the id (`@x.y.z`), as numbers; zeros where it is not one.
    fn version(&self) -> (u64, u64, u64) {
        let suffix = self.id().split_once('@').map(|(_, v)| v).unwrap_or_default();
        let mut parts = suffix.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
        (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        )
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

/// The `$schema` the checker sends when it sends one: OTC 1.0's shorthand (versioning).
const SCHEMA: &str = "otc://1.0";

/// Why the checker sends input a schema refuses only to tools it may run.
const NOT_RUN: &str = "probes with input a tool's schema refuses go only to tools the checker may run (--invoke TOOL, or marked read-only): a server that does not validate would run the tool";

/// The checks only a call of the tool for real observes.
const CALL_CHECKS: [&Check; 6] = [
    &CALL,
    &CALL_VALUE,
    &CALL_ID_GENERATED,
    &CALL_ID_ECHO,
    &CALL_ID_REPEATED,
    &EXECUTION_ERROR,
];

/// What one OTC run learns as it goes.
#[derive(Debug)]
struct Run {
    /// `POST {base}/tools/call`.
    call: Url,
    /// The server refuses a call without `$schema` (SCHEMA_ABSENT failed): later calls send one,
    /// so that the other checks still observe what they are for.
    needs_schema: bool,
    /// Whether the unsupported `$schema` was tried.
    schema_probed: bool,
    /// A call that succeeded (200 with a `result`): the server was ready to receive tool calls.
    served: Option<String>,
    /// `/health`'s 503, judged once the run knows whether calls succeeded.
    unready: Option<Exchange>,
}

pub(crate) async fn run(ctx: &mut Ctx, base: &Url) {
    let mut run = Run {
        call: join(base, &["tools", "call"]),
        needs_schema: false,
        schema_probed: false,
        served: None,
        unready: None,
    };
    health(ctx, base, &mut run).await;
    let listed = match list(ctx, base).await {
        Ok(listed) => listed,
        Err(reason) => {
            for check in ALL.iter().filter(|c| ![HEALTH.id, HEALTH_NO_AUTH.id].contains(&c.id)) {
                ctx.rec.skip(check, reason.clone());
            }
            return ready(ctx, base, &mut run).await;
        }
    };
    authorization(ctx, base).await;
    let mut ids: HashMap<String, usize> = HashMap::new();
    for tool in &listed {
        *ids.entry(tool.id().to_owned()).or_default() += 1;
    }
    for tool in &listed {
        definition(ctx, tool, ids[tool.id()]);
    }
    not_found(ctx, &run).await;
    let mut in_depth = 0;
    for tool in &listed {
        let names = tool.names();
        let invocable = ctx.invocable(&names, &tool.definition);
        if in_depth >= ctx.max_tools && invocable.is_none() {
            continue;
        }
        in_depth += 1;
        let versions: Vec<&Listed> = listed.iter().filter(|other| other.base() == tool.base()).collect();
        let may_run = invocable.as_ref().map(|_| !ctx.user_input(&names));
        refusals(ctx, &mut run, tool, &versions, may_run).await;
        if let Some((name, input)) = invocable {
            invoke(ctx, &mut run, tool, &name, input).await;
        }
    }
    let reason = "no tool may be invoked: name one with --invoke TOOL (the server marks none read-only)";
    for check in CALL_CHECKS {
        ctx.rec.skip(check, reason);
    }
    ready(ctx, base, &mut run).await;
}

/// `/health` without credentials (it needs none); with them too when it asks for them. A 503
/// is judged at the end of the run ([`ready`]).
async fn health(ctx: &mut Ctx, base: &Url, run: &mut Run) {
    let url = join(base, &["health"]);
    let answer = match ctx.probe.get_anonymous(&url, &[]).await {
        Ok(answer) => answer,
        Err(failure) => {
            ctx.no_answer(&HEALTH_NO_AUTH, &failure);
            return ctx.no_answer(&HEALTH, &failure);
        }
    };
    let answer = if matches!(answer.status, 401 | 403) {
        ctx.rec.fail(
            &HEALTH_NO_AUTH,
            answer.evidence(format!(
                "HTTP {} without credentials: the health check requires no authentication",
                answer.status
            )),
        );
        if !ctx.probe.has_credentials() {
            return ctx.rec.skip(
                &HEALTH,
                "/health wants credentials: give them (--api-key KEY or --bearer TOKEN) to check what it answers",
            );
        }
        match ctx.probe.get(&url, &[]).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&HEALTH, &failure),
        }
    } else {
        ctx.rec.pass(&HEALTH_NO_AUTH);
        answer
    };
    match answer.status {
        200 => ctx.rec.pass(&HEALTH),
        503 => run.unready = Some(answer),
        status => ctx
            .rec
            .fail(&HEALTH, answer.evidence(format!("HTTP {status}, not 200"))),
    }
}

/// A `/health` that answered 503: fine while no call succeeds (MAY, when not ready); once one
/// has, the server is ready to receive tool calls and `/health` MUST answer 200.
async fn ready(ctx: &mut Ctx, base: &Url, run: &mut Run) {
    if run.unready.take().is_none() {
        return;
    }
    let Some(served) = run.served.clone() else {
        return ctx.rec.skip(
            &HEALTH,
            "/health answers 503 (not ready to receive tool calls), and no call succeeded during the run",
        );
    };
    match ctx.probe.get_anonymous(&join(base, &["health"]), &[]).await {
        Ok(answer) => ctx.rec.judge(&HEALTH, answer.status == 200, || {
            answer.evidence(format!(
                "HTTP {} (not ready to receive tool calls), while tool calls succeed ({served})",
                answer.status
            ))
        }),
        Err(failure) => ctx.no_answer(&HEALTH, &failure),
    }
}

/// A server that lets the checker list without credentials must ignore an `Authorization`
/// header (security-authn: "configured to not require authentication").
async fn authorization(ctx: &mut Ctx, base: &Url) {
    let url = join(base, &["tools"]);
    if ctx.probe.has_credentials() {
        match ctx.probe.get_anonymous(&url, &[]).await {
            Ok(answer) if answer.status == 200 => {}
            Ok(answer) => {
                return ctx.rec.skip(
                    &IGNORE_AUTHORIZATION,
                    format!(
                        "the listing without credentials is HTTP {}: the server requires authentication",
                        answer.status
                    ),
                );
            }
            Err(failure) => return ctx.no_answer(&IGNORE_AUTHORIZATION, &failure),
        }
    }
    let header = [("authorization", "Bearer conformance-check-not-a-token".to_owned())];
    match ctx.probe.get_anonymous(&url, &header).await {
        Ok(answer) => ctx.rec.judge(&IGNORE_AUTHORIZATION, answer.status == 200, || Evidence {
            request: format!("{} (Authorization: Bearer conformance-check-not-a-token)", answer.request),
            ..answer.evidence(format!(
                "HTTP {} with an `Authorization` header, while without one the listing is 200: a server that requires no authentication ignores the header",
                answer.status
            ))
        }),
        Err(failure) => ctx.no_answer(&IGNORE_AUTHORIZATION, &failure),
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

/// The listing's tools; why not, when it cannot be read.
async fn list(ctx: &mut Ctx, base: &Url) -> Result<Vec<Listed>, String> {
    let unreadable = || "the listing could not be read".to_owned();
    let answer = match ctx.probe.get(&join(base, &["tools"]), &[]).await {
        Ok(answer) => answer,
        Err(failure) => {
            ctx.no_answer(&LIST, &failure);
            return Err(unreadable());
        }
    };
    if let Some(reason) = ctx.needs_credentials(&answer) {
        return Err(reason);
    }
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
            return Err(unreadable());
        }
    };
    Ok(tools
        .iter()
        .map(|definition| Listed {
            definition: definition.clone(),
            request: answer.request.clone(),
        })
        .collect())
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

/// The tool called for real: without `call_id`, then twice with one.
async fn invoke(ctx: &mut Ctx, run: &mut Run, tool: &Listed, name: &str, input: Option<Value>) {
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
        let Some(answer) = call(ctx, run, &CALL, request).await else {
            return;
        };
        let body = answer.json().unwrap_or_default();
        if matches!(answer.status, 400 | 422) {
            let reason = refused(ctx, tool, name, &input, &answer);
            for check in CALL_CHECKS {
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
        if !run.needs_schema {
            ctx.rec.pass(&SCHEMA_ABSENT);
        }
        let result = &body["result"];
        match result.get("success") {
            Some(Value::Bool(false)) => ctx.rec.pass(&EXECUTION_ERROR),
            _ => {
                run.served = Some(answer.request.clone());
                ctx.rec.skip(&EXECUTION_ERROR, "no call failed during execution");
            }
        }
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

/// A call of a listed id refused with 400 or 422: why the call checks are skipped. A 400 for
/// input that fits the schema, to a tool without requirements, with no `Retry-After`, has no
/// cause before the tool runs: the tool failed, and that is a 200 with `success: false`.
fn refused(ctx: &mut Ctx, tool: &Listed, name: &str, input: &Value, answer: &Exchange) -> String {
    let status = answer.status;
    let said = excerpt(&answer.body);
    if status == 400 && requires(tool) {
        return format!(
            "`{}` declares requirements (secrets, authorization) the checker does not send (HTTP 400: {said})",
            tool.id()
        );
    }
    let fits = inputs::accepts(tool.parameters(), input) == Some(true);
    if status == 400 && fits && answer.header("retry-after").is_none() {
        ctx.rec.fail(
            &EXECUTION_ERROR,
            answer.evidence(format!(
                "HTTP 400 for `{}`, which the server lists, with an input that fits its schema and no requirement unmet: an error during the tool's execution is a 200 with `success: false`",
                tool.id()
            )),
        );
    }
    format!(
        "`{}` refused the input {input} (HTTP {status}: {said}); give one with --invoke '{name}=JSON'",
        tool.id()
    )
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
