//! OTC calls a conformant server refuses before running the tool (call-tool: Server Errors,
//! Input Validation Errors, Tool Version Resolution, and the `$schema` of versioning).

use serde_json::{Value, json};
use url::Url;

use super::{Listed, NOT_RUN, Run, SCHEMA, misfit, schema_uri, server_error};
use crate::checks::Check;
use crate::checks::otc::*;
use crate::probe::Exchange;
use crate::{Ctx, fixture, inputs};

/// `POST /tools/call` with `request`, and `$schema` once the server has shown it needs one.
pub(super) async fn call(ctx: &mut Ctx, run: &Run, check: &Check, request: Value) -> Option<Exchange> {
    let mut body = json!({"request": request});
    if run.needs_schema {
        body["$schema"] = json!(SCHEMA);
    }
    send(ctx, check, &run.call, &body).await
}

async fn send(ctx: &mut Ctx, check: &Check, url: &Url, body: &Value) -> Option<Exchange> {
    match ctx.probe.post(url, body).await {
        Ok(answer) => Some(answer),
        Err(failure) => {
            ctx.no_answer(check, &failure);
            None
        }
    }
}

/// Whether a definition declares `requirements` (secrets, authorization, a user id) the checker
/// cannot meet: it sends no `context`.
pub(super) fn requires(tool: &Listed) -> bool {
    tool.definition
        .get("requirements")
        .and_then(Value::as_object)
        .is_some_and(|r| {
            r.iter()
                .any(|(_, v)| v.as_array().is_some_and(|a| !a.is_empty()) || v == &Value::Bool(true))
        })
}

/// Tool ids the server cannot have: an unknown tool, and one that is not a tool id.
pub(super) async fn not_found(ctx: &mut Ctx, run: &Run) {
    let unknown = format!("ToolhostConformance.Missing_{}", uuid::Uuid::new_v4().simple());
    for (tool_id, why) in [
        (unknown.as_str(), "a tool the server does not list"),
        ("not a tool id", "a tool ID that is invalid"),
    ] {
        let request = json!({"tool_id": tool_id, "input": {}});
        if let Some(answer) = call(ctx, run, &SERVER_ERROR, request).await {
            server_error(ctx, &answer, why);
        }
    }
}

/// The requests a conformant server refuses before running `tool` (one of `versions`, the
/// listed versions of one tool). Every tool: a version that does not exist, with an input every
/// version refuses. A tool the checker may run (`may_run`: `Some(true)` when the checker
/// chooses its inputs, `Some(false)` when it runs only with the user's): the exact version with
/// input it refuses (a 422), the id's other forms with inputs that tell the versions apart, and
/// an OTC version the server cannot support.
pub(super) async fn refusals(ctx: &mut Ctx, run: &mut Run, tool: &Listed, versions: &[&Listed], may_run: Option<bool>) {
    let others: Vec<&Value> = versions
        .iter()
        .filter(|v| v.id() != tool.id())
        .map(|v| v.parameters())
        .collect();
    let major = tool.version().0;
    if let Some((bad, how)) = inputs::invalid_for_all(tool.parameters(), &others) {
        let missing = format!("{}@{}.0.0", tool.base(), major + 1000);
        let request = json!({"tool_id": missing, "input": bad});
        if let Some(answer) = call(ctx, run, &SERVER_ERROR, request).await {
            server_error(
                ctx,
                &answer,
                &format!("a version that is not available (with an input that {how})"),
            );
        }
    }
    let Some(chooses) = may_run else {
        for check in [&VALIDATION_ERROR, &RESOLUTION, &SCHEMA_ABSENT, &SCHEMA_UNSUPPORTED] {
            ctx.rec.skip(check, NOT_RUN);
        }
        return;
    };
    let Some((bad, how)) = inputs::invalid(tool.parameters()) else {
        for check in [&VALIDATION_ERROR, &RESOLUTION] {
            ctx.rec
                .skip(check, format!("`{}` has no input its schema surely refuses", tool.id()));
        }
        return;
    };
    if !validation(ctx, run, tool, &bad, &how).await {
        ctx.rec.skip(
            &RESOLUTION,
            "the exact version's invalid input was not refused with a 422, so resolution cannot be observed",
        );
        ctx.rec.skip(
            &SCHEMA_UNSUPPORTED,
            "no tool's invalid input was refused with a 422, so accepting a `$schema` cannot be told from refusing the input",
        );
        return;
    }
    resolution(ctx, run, tool, versions, chooses).await;
    if !run.schema_probed && !requires(tool) {
        run.schema_probed = true;
        unsupported_schema(ctx, run, tool, &bad).await;
    }
}

/// The exact version with input it refuses: a 422 ValidationErrorResponse. A 400 is tried
/// again with `$schema`: a server that then validates needs one (SCHEMA_ABSENT fails, not
/// validation). Whether the input was validated (a 422).
async fn validation(ctx: &mut Ctx, run: &mut Run, tool: &Listed, bad: &Value, how: &str) -> bool {
    let request = json!({"tool_id": tool.id(), "input": bad});
    let Some(mut answer) = call(ctx, run, &VALIDATION_ERROR, request.clone()).await else {
        return false;
    };
    if answer.status == 400 && !run.needs_schema {
        let body = json!({"$schema": SCHEMA, "request": request});
        let Some(again) = send(ctx, &VALIDATION_ERROR, &run.call, &body).await else {
            return false;
        };
        if again.status != 400 {
            ctx.rec.fail(
                &SCHEMA_ABSENT,
                answer.evidence(format!(
                    "HTTP 400 without `$schema`, HTTP {} for the same request with `$schema: {SCHEMA}`: a request without it is one for the latest version",
                    again.status
                )),
            );
            run.needs_schema = true;
            answer = again;
        }
    }
    let body = answer.json().unwrap_or_default();
    schema_uri(ctx, &answer, &body);
    let fit = misfit("ValidationErrorResponse", &body);
    match answer.status {
        422 if fit.is_none() => {
            ctx.rec.pass(&VALIDATION_ERROR);
            if !run.needs_schema {
                ctx.rec.pass(&SCHEMA_ABSENT);
            }
            true
        }
        400 if requires(tool) => {
            ctx.rec.skip(
                &VALIDATION_ERROR,
                format!(
                    "`{}` declares requirements (secrets, authorization) the checker does not send, and the server answered 400 before validating: OTC allows that (a missing secret or token is a 400 Server Error, tool-secrets and tool-authz) and orders neither check first",
                    tool.id()
                ),
            );
            false
        }
        status => {
            ctx.rec.fail(
                &VALIDATION_ERROR,
                answer.evidence(match status {
                    422 => fit.unwrap_or_default(),
                    200 => format!("HTTP 200: the tool was called with an input that {how}"),
                    400 => format!(
                        "HTTP 400 for `{}`, which the server lists, with an input that {how} (with or without `$schema`): a 422 was due",
                        tool.id()
                    ),
                    s => format!("HTTP {s} for an input that {how}: a 422 ValidationErrorResponse was due"),
                }),
            );
            false
        }
    }
}

/// The forms of the id that resolve to `tool` (call-tool, Tool Version Resolution): no version
/// when it is the latest listed, `@x` when it is x.0.0. Each is sent with an input that tells
/// `tool` from the other listed versions; with none listed, with input `tool` refuses (a 422
/// shows it resolved at all). `may_run`: the checker chooses the input (the user gave none, or
/// the tool is the fixture's), so an input that runs `tool` may be used. A fixture tool's
/// known inputs are tried first ([`fixture::telling_inputs`]).
async fn resolution(ctx: &mut Ctx, run: &mut Run, tool: &Listed, versions: &[&Listed], may_run: bool) {
    let (major, minor, patch) = tool.version();
    let mut forms = Vec::new();
    if versions.iter().all(|v| v.version() <= tool.version()) {
        forms.push((tool.base().to_owned(), "no version, so the latest"));
    }
    if (minor, patch) == (0, 0) {
        forms.push((format!("{}@{major}", tool.base()), "the shorthand `@x`, so x.0.0"));
    }
    let others: Vec<&Value> = versions
        .iter()
        .filter(|v| v.id() != tool.id())
        .map(|v| v.parameters())
        .collect();
    for (tool_id, what) in forms {
        let (input, runs) = if others.is_empty() {
            match inputs::invalid(tool.parameters()) {
                Some((bad, _)) => (bad, false),
                None => continue,
            }
        } else {
            let known = fixture::telling_inputs(&tool.names());
            match inputs::telling_apart(tool.parameters(), &others, may_run, &known) {
                Some(apart) => apart,
                None => {
                    ctx.rec.skip(
                        &RESOLUTION,
                        format!(
                            "no input tells `{}` from the other listed versions of `{}`",
                            tool.id(),
                            tool.base()
                        ),
                    );
                    continue;
                }
            }
        };
        if runs {
            ctx.invoked(
                tool.base(),
                &format!("OTC, `{tool_id}` with an input only {} takes", tool.id()),
            );
        }
        let Some(answer) = call(ctx, run, &RESOLUTION, json!({"tool_id": tool_id, "input": input})).await else {
            return;
        };
        let ok = if runs {
            answer.status == 200
        } else {
            answer.status == 422
        };
        if runs && answer.status == 200 {
            run.served = Some(answer.request.clone());
        }
        ctx.rec.judge(&RESOLUTION, ok, || {
            answer.evidence(match (runs, answer.status) {
                (false, 200) => format!(
                    "`{tool_id}` ({what}) ran with an input {} refuses and another listed version takes: it resolved to another version",
                    tool.id()
                ),
                (true, 422) => format!(
                    "`{tool_id}` ({what}) refused an input only {} takes: it resolved to another version",
                    tool.id()
                ),
                (_, status) => format!(
                    "HTTP {status} for `{tool_id}` ({what}), which should resolve to the listed {}",
                    tool.id()
                ),
            })
        });
    }
}

/// A `$schema` naming an OTC version no 1.0 server supports, with input the tool refuses: a
/// 400 Server Error ("the requested version of the OTC standard is not supported"), not the
/// 422 of a request that was accepted and validated.
async fn unsupported_schema(ctx: &mut Ctx, run: &Run, tool: &Listed, bad: &Value) {
    let unsupported = "otc://99.0";
    let body = json!({"$schema": unsupported, "request": {"tool_id": tool.id(), "input": bad}});
    let Some(answer) = send(ctx, &SCHEMA_UNSUPPORTED, &run.call, &body).await else {
        return;
    };
    let fit = misfit("ServerErrorResponse", &answer.json().unwrap_or_default());
    ctx.rec
        .judge(&SCHEMA_UNSUPPORTED, answer.status == 400 && fit.is_none(), || {
            answer.evidence(match answer.status {
                400 => fit.clone().unwrap_or_default(),
                422 => format!(
                    "HTTP 422: the server accepted `$schema: {unsupported}` and validated the input; an OTC version it does not support is a 400 Server Error"
                ),
                s => format!("HTTP {s} for `$schema: {unsupported}`: a 400 ServerErrorResponse was due"),
            })
        });
}
