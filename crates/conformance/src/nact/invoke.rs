//! N-ACT's invocation API (§7): invocations every conformant server refuses, and the tools the
//! checker may run invoked for real, unpinned and pinned to each end of their history.

use std::collections::HashSet;

use serde_json::{Value, json};
use url::Url;

use super::{Listed, number};
use crate::checks::nact::*;
use crate::probe::{Exchange, excerpt};
use crate::schema::Shape;
use crate::{Ctx, inputs, join};

/// Invocations the signature refuses: each must be a 4xx, never a 5xx or a success. A tool the
/// checker may not run gets only one that no conformant server can run (a version the tool
/// does not have): N-ACT leaves validating the input to the executor (§5.3), so a server may
/// run a tool whatever its input.
pub(super) async fn malformed(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64, may_run: bool) {
    let inputs = tool.parameters("input_parameters");
    let Some((bad, how)) = inputs::nact_invalid(&inputs) else {
        ctx.rec.skip(
            &MALFORMED,
            format!(
                "`{}` has no input whose absence or type the server must refuse",
                tool.name()
            ),
        );
        return;
    };
    let url = join(root, &["tools", &format!("{id}:invoke")]);
    let body = json!({"name": tool.name(), "input_parameters": bad});
    // (URL, body, what is wrong with it, whether a conformant server may accept it)
    let missing = current + 1000;
    let mut requests = vec![(
        join(root, &["tools", id, "versions", &format!("{missing}:invoke")]),
        body.clone(),
        format!("pins version {missing}, which the tool does not have, and {how}"),
        false,
    )];
    if may_run {
        requests.push((url.clone(), body, how.clone(), true));
        if bad == json!([]) {
            requests.push((
                url,
                json!({"name": tool.name(), "input_parameters": {"not": "an array"}}),
                "sends `input_parameters` that is not an array".to_owned(),
                false,
            ));
        }
    }
    for (url, body, how, may_accept) in requests {
        let answer = match ctx.probe.post(&url, &body).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&MALFORMED, &failure),
        };
        let status = answer.status;
        ctx.problem_shape(&MALFORMED, Shape::NactProblem, &answer);
        if may_accept && (200..300).contains(&status) {
            ctx.rec.skip(
                &MALFORMED,
                format!(
                    "`{}` accepted an invocation that {how} (HTTP {status}): N-ACT leaves validating the input to the executor (5.3), so that is not a failure",
                    tool.name()
                ),
            );
            continue;
        }
        ctx.rec.judge(&MALFORMED, (400..500).contains(&status), || {
            answer.evidence(match status {
                500..=599 => format!(
                    "HTTP {status} for an invocation that {how}: a 5xx says the failure is temporary, so executors retry a request that can never succeed"
                ),
                200..=299 => format!("HTTP {status}: the server accepted (and may have run) an invocation that {how}"),
                _ => format!("HTTP {status} for an invocation that {how}; a malformed request is a 4xx"),
            })
        });
    }
}

/// The tool being invoked.
pub(super) struct Target<'a> {
    pub root: &'a Url,
    pub tool: &'a Listed,
    pub id: &'a str,
    pub current: u64,
}

/// The names of a signature's outputs.
fn output_names(signature: &Value) -> HashSet<String> {
    let outputs = signature.get("output_parameters").and_then(Value::as_array);
    outputs
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// The outputs of an invocation's answer, judged against `outputs`; `None` when the answer has
/// no `output_parameters` array.
fn judge_outputs(ctx: &mut Ctx, answer: &Exchange, outputs: &HashSet<String>) -> Option<Vec<String>> {
    let results = answer
        .json()
        .and_then(|b| b.get("output_parameters").and_then(Value::as_array).cloned())?;
    let mut names = Vec::new();
    for result in &results {
        let name = result.get("name").and_then(Value::as_str);
        ctx.rec
            .judge(&OUTPUT_NAMES, name.is_some_and(|n| outputs.contains(n)), || {
                let mut declared: Vec<&String> = outputs.iter().collect();
                declared.sort();
                answer.evidence(format!(
                    "the output {} is not named after an output of the signature ({})",
                    result.get("name").unwrap_or(&Value::Null),
                    declared.into_iter().cloned().collect::<Vec<_>>().join(", ")
                ))
            });
        names.extend(name.map(str::to_owned));
    }
    Some(names)
}

/// The tool invoked for real (it is named or read-only): unpinned, then pinned to its current
/// version (the same input must succeed again), then pinned to the oldest version the versions
/// list holds (`history`), whose answer must be that version's: outputs it declares.
pub(super) async fn invoke(ctx: &mut Ctx, target: &Target<'_>, given: Option<Value>, history: &[Value]) {
    let Target {
        root,
        tool,
        id,
        current,
    } = *target;
    let input = given
        .clone()
        .unwrap_or_else(|| inputs::nact_valid(&tool.parameters("input_parameters")));
    let body = json!({"name": tool.name(), "input_parameters": inputs::nact_parameters(&input)});
    ctx.invoked(tool.name(), "N-ACT, unpinned");
    let url = join(root, &["tools", &format!("{id}:invoke")]);
    let answer = match ctx.probe.post(&url, &body).await {
        Ok(answer) => answer,
        Err(failure) => return ctx.no_answer(&INVOKE, &failure),
    };
    if !(200..300).contains(&answer.status) {
        let reason = format!(
            "`{}` did not succeed with the input {input} (HTTP {}: {}); give one with --invoke '{}=JSON'",
            tool.name(),
            answer.status,
            excerpt(&answer.body),
            tool.name()
        );
        for check in [&INVOKE, &OUTPUT_NAMES, &PINNED] {
            ctx.rec.skip(check, reason.clone());
        }
        return;
    }
    let outputs = output_names(&tool.signature);
    if judge_outputs(ctx, &answer, &outputs).is_none() {
        return ctx.rec.fail(&INVOKE, answer.evidence("no `output_parameters` array"));
    }
    ctx.shape(&INVOKE, Shape::NactResult, &answer.json().unwrap_or_default(), &answer);
    ctx.invoked(tool.name(), &format!("N-ACT, pinned to version {current}"));
    let url = join(root, &["tools", id, "versions", &format!("{current}:invoke")]);
    let answer = match ctx.probe.post(&url, &body).await {
        Ok(answer) => answer,
        Err(failure) => return ctx.no_answer(&PINNED, &failure),
    };
    if !(200..300).contains(&answer.status) {
        return ctx.rec.fail(
            &PINNED,
            answer.evidence(format!(
                "HTTP {} pinned to version {current}, the current one, while the same invocation unpinned succeeded",
                answer.status
            )),
        );
    }
    match judge_outputs(ctx, &answer, &outputs) {
        Some(_) => ctx.shape(&PINNED, Shape::NactResult, &answer.json().unwrap_or_default(), &answer),
        None => return ctx.rec.fail(&PINNED, answer.evidence("no `output_parameters` array")),
    }
    let Some((old, version)) = history
        .last()
        .and_then(|v| number(&v["version"]).filter(|n| *n < current).map(|n| (v, n)))
    else {
        return;
    };
    // The input as that version takes it: the user's, without inputs it does not have yet.
    let parameters = old
        .get("input_parameters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let known: HashSet<&str> = parameters
        .iter()
        .filter_map(|p| p.get("name").and_then(Value::as_str))
        .collect();
    let input = match given {
        Some(Value::Object(mut input)) => {
            input.retain(|name, _| known.contains(name.as_str()));
            Value::Object(input)
        }
        _ => inputs::nact_valid(&parameters),
    };
    let body = json!({"name": tool.name(), "input_parameters": inputs::nact_parameters(&input)});
    ctx.invoked(tool.name(), &format!("N-ACT, pinned to version {version}"));
    let url = join(root, &["tools", id, "versions", &format!("{version}:invoke")]);
    let answer = match ctx.probe.post(&url, &body).await {
        Ok(answer) => answer,
        Err(failure) => return ctx.no_answer(&PINNED, &failure),
    };
    match answer.status {
        200..=299 => {}
        status @ (404 | 405) => {
            return ctx.rec.fail(
                &PINNED,
                answer.evidence(format!(
                    "HTTP {status} pinned to version {version}, which the tool's versions list holds"
                )),
            );
        }
        status => {
            return ctx.rec.skip(
                &PINNED,
                format!(
                    "`{}` pinned to version {version} did not succeed with the input {input} (HTTP {status}: {})",
                    tool.name(),
                    excerpt(&answer.body)
                ),
            );
        }
    }
    let declared = output_names(old);
    // An output is named after a signature if either version declares it: this version's own
    // (a correct server), or the current one's (another version ran, which PINNED says, not
    // OUTPUT_NAMES).
    let named: HashSet<String> = declared.union(&outputs).cloned().collect();
    let Some(names) = judge_outputs(ctx, &answer, &named) else {
        return ctx.rec.fail(&PINNED, answer.evidence("no `output_parameters` array"));
    };
    ctx.shape(&PINNED, Shape::NactResult, &answer.json().unwrap_or_default(), &answer);
    let foreign: Vec<&String> = names.iter().filter(|n| !declared.contains(*n)).collect();
    ctx.rec.judge(&PINNED, foreign.is_empty(), || {
        let mut declared: Vec<&String> = declared.iter().collect();
        declared.sort();
        answer.evidence(format!(
            "pinned to version {version}, the answer has the output(s) {foreign:?}, which version {version} does not declare (it declares {declared:?}): another version ran"
        ))
    });
}
