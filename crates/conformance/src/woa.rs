//! Web of Agents (draft-gaikwad-woa-00): the document at the origin's well-known URI, its
//! fields, schemas and transports, caching, and REST invocations (refused envelopes for every
//! agent; real ones for the agents that may be invoked).

use std::collections::HashSet;

use serde_json::{Value, json};
use url::{Host, Url};

use crate::checks::Check;
use crate::checks::woa::*;
use crate::probe::{Exchange, excerpt};
use crate::report::Evidence;
use crate::schema::{Shape, misfits};
use crate::{Ctx, inputs, join};

/// The well-known path (§9.1).
pub(crate) const WELL_KNOWN_PATH: &str = "/.well-known/woa.json";

/// JSON Schema 2020-12's meta-schema URI.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// `{origin}/.well-known/woa.json`.
pub(crate) fn document_at_root(url: &Url) -> Url {
    let mut root = url.clone();
    root.set_path(WELL_KNOWN_PATH);
    root.set_query(None);
    root.set_fragment(None);
    root
}

/// The check a complaint of the document's schema at `at` (a JSON pointer) belongs to.
fn schema_check(at: &str) -> &'static Check {
    let parts: Vec<&str> = at.split('/').collect();
    match parts.as_slice() {
        [_, "woa_version", ..] => &VERSION,
        [_, "agents", _, "operations", ..] => &OPERATIONS,
        [_, "agents", _, "id"] => &AGENT_ID,
        [_, "agents", ..] => &AGENT_FIELDS,
        [_, "transports", "rest", ..] => &REST_FIELDS,
        [_, "transports", "mcp", ..] => &MCP_FIELDS,
        _ => &TOP_LEVEL,
    }
}

/// Whether `url` is on loopback: plain HTTP there is not "the open Internet" of §8.1.
fn loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost") || name.ends_with(".localhost"),
        None => false,
    }
}

/// Judges the HTTPS rule for `url`: https passes, plain http on loopback is skipped (a local
/// run, not the open Internet), plain http elsewhere fails.
fn https(ctx: &mut Ctx, check: &Check, url: &Url, evidence: impl FnOnce() -> Evidence) -> bool {
    match url.scheme() {
        "https" => {
            ctx.rec.pass(check);
            true
        }
        _ if loopback(url) => {
            ctx.rec.skip(
                check,
                format!("{url} is plain HTTP on loopback, not the open Internet; check the deployed https URL"),
            );
            true
        }
        _ => {
            ctx.rec.fail(check, evidence());
            false
        }
    }
}

pub(crate) async fn run(ctx: &mut Ctx, url: &Url) {
    let (document_url, answer, document) = match fetch(ctx, url).await {
        Ok(found) => found,
        Err(reason) => {
            for check in ALL {
                ctx.rec.skip(check, reason.clone());
            }
            return;
        }
    };
    ctx.rec
        .judge(&MEDIA_TYPE, answer.media_type() == "application/woa+json", || {
            answer.evidence(format!("served as `{}`", answer.media_type()))
        });
    https(ctx, &DOCUMENT_HTTPS, &document_url, || {
        answer.evidence("the document is served over plain HTTP")
    });
    let evidence = |found: String| answer.evidence(found);
    // The draft's shapes as a schema, each complaint under the check of its place.
    for (at, problem) in misfits(Shape::WoaDocument, &document) {
        ctx.rec.fail(schema_check(&at), evidence(problem));
    }
    shape(ctx, &document, &evidence);
    caching(ctx, &document_url, &answer).await;
    invocations(ctx, &document).await;
}

/// The document at the origin's root; one found only under the URL's path is a failure of
/// §9.1, but is still checked. Why none, when none could be read.
async fn fetch(ctx: &mut Ctx, url: &Url) -> Result<(Url, Exchange, Value), String> {
    let root = document_at_root(url);
    let is_document = |a: &Exchange| a.status == 200 && a.json().is_some_and(|d| d.is_object());
    let at_root = match ctx.probe.get(&root, &[]).await {
        Ok(answer) if is_document(&answer) => {
            ctx.rec.pass(&WELL_KNOWN);
            let document = answer.json().unwrap_or_default();
            return Ok((root, answer, document));
        }
        Ok(answer) if matches!(answer.status, 401 | 403) => {
            return Err(ctx.needs_credentials(&answer).unwrap_or_default());
        }
        Ok(answer) => answer.evidence(format!(
            "HTTP {}: no WoA document at the origin's well-known URI",
            answer.status
        )),
        Err(failure) => failure.evidence("no answer at the origin's well-known URI"),
    };
    let elsewhere = if url.path().ends_with(WELL_KNOWN_PATH) {
        url.clone()
    } else {
        join(url, &[".well-known", "woa.json"])
    };
    if elsewhere != root
        && let Ok(answer) = ctx.probe.get(&elsewhere, &[]).await
        && is_document(&answer)
    {
        ctx.rec.fail(
            &WELL_KNOWN,
            Evidence {
                found: format!(
                    "{}; the document is served under a path instead ({}): well-known URIs are at the origin's root",
                    at_root.found,
                    elsewhere.path()
                ),
                ..at_root
            },
        );
        let document = answer.json().unwrap_or_default();
        return Ok((elsewhere, answer, document));
    }
    ctx.rec.fail(&WELL_KNOWN, at_root);
    Err("no WoA document could be read".to_owned())
}

fn is_agent_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Why `schema` is not a JSON Schema 2020-12 document; `None` when it is.
fn schema_problem(schema: &Value) -> Option<String> {
    if !schema.is_object() {
        return Some(format!(
            "{} is not a JSON object",
            excerpt(schema.to_string().as_bytes())
        ));
    }
    if let Some(declared) = schema.get("$schema")
        && declared.as_str().map(|s| s.trim_end_matches('#')) != Some(DRAFT_2020_12)
    {
        return Some(format!("it declares `$schema` {declared}, not 2020-12"));
    }
    jsonschema::meta::validate(schema).err().map(|e| e.to_string())
}

/// The checks the document answers by itself.
fn shape(ctx: &mut Ctx, document: &Value, evidence: &dyn Fn(String) -> Evidence) {
    ctx.rec
        .judge(&VERSION, document.get("woa_version") == Some(&json!("1")), || {
            evidence(format!(
                "woa_version is {}",
                document.get("woa_version").unwrap_or(&Value::Null)
            ))
        });
    let agents = document.get("agents").and_then(Value::as_array);
    let transports = document.get("transports").and_then(Value::as_object);
    ctx.rec.judge(&TOP_LEVEL, agents.is_some() && transports.is_some(), || {
        evidence("the document lacks an `agents` array or a `transports` object".to_owned())
    });
    let mut ids = HashSet::new();
    for agent in agents.into_iter().flatten() {
        let id = agent.get("id").and_then(Value::as_str).unwrap_or_default();
        let mut missing = Vec::new();
        for key in ["id", "name", "description"] {
            if !agent.get(key).is_some_and(Value::is_string) {
                missing.push(format!("`{key}` (a string)"));
            }
        }
        for key in ["inputs", "outputs"] {
            if !agent.get(key).is_some_and(Value::is_object) {
                missing.push(format!("`{key}` (an object)"));
            }
        }
        let names = agent.get("transports").and_then(Value::as_array);
        if !names.is_some_and(|n| n.iter().all(Value::is_string)) {
            missing.push("`transports` (an array of strings)".to_owned());
        }
        ctx.rec.judge(&AGENT_FIELDS, missing.is_empty(), || {
            evidence(format!("agent `{id}` lacks {}", missing.join(", ")))
        });
        ctx.rec
            .judge(&AGENT_ID, is_agent_id(id) && ids.insert(id.to_owned()), || {
                evidence(format!(
                    "agent id `{id}` is not a unique 1*( ALPHA / DIGIT / \"-\" / \"_\" ) token"
                ))
            });
        for name in names.into_iter().flatten().filter_map(Value::as_str) {
            ctx.rec.judge(
                &AGENT_TRANSPORTS,
                transports.is_some_and(|t| t.contains_key(name)),
                || {
                    evidence(format!(
                        "agent `{id}` names the transport `{name}`, which the document does not define"
                    ))
                },
            );
        }
        let mut schemas = vec![
            ("inputs".to_owned(), agent.get("inputs")),
            ("outputs".to_owned(), agent.get("outputs")),
        ];
        if let Some(operations) = agent.get("operations") {
            let list = operations.as_array();
            let mut ok = list.is_some();
            for (i, op) in list.into_iter().flatten().enumerate() {
                ok &= op.get("name").and_then(Value::as_str).is_some_and(|n| !n.is_empty())
                    && op.get("description").is_some_and(Value::is_string);
                for key in ["inputs", "outputs"] {
                    if op.get(key).is_some() {
                        schemas.push((format!("operations[{i}].{key}"), op.get(key)));
                    }
                }
            }
            ctx.rec.judge(&OPERATIONS, ok, || {
                evidence(format!("agent `{id}`: an operation lacks its `name` or `description`"))
            });
        }
        for (place, schema) in schemas {
            if let Some(schema) = schema {
                let problem = schema_problem(schema);
                ctx.rec.judge(&SCHEMAS, problem.is_none(), || {
                    evidence(format!("agent `{id}`: {place}: {}", problem.unwrap_or_default()))
                });
            }
        }
    }
    if !agents.into_iter().flatten().any(|a| a.get("operations").is_some()) {
        ctx.rec.skip(&OPERATIONS, "no agent has `operations`");
    }
    for (name, config) in transports.into_iter().flatten() {
        transport(ctx, name, config, evidence);
    }
    let defined = |name: &str| transports.is_some_and(|t| t.contains_key(name));
    for (check, name) in [(&REST_FIELDS, "rest"), (&REST_HTTPS, "rest"), (&MCP_FIELDS, "mcp")] {
        if !defined(name) {
            ctx.rec.skip(check, format!("the document defines no {name} transport"));
        }
    }
    ctx.rec
        .skip(&PRIVATE_TRANSPORTS, "the document defines no private transport");
}

fn transport(ctx: &mut Ctx, name: &str, config: &Value, evidence: &dyn Fn(String) -> Evidence) {
    let field = |key: &str| config.get(key).and_then(Value::as_str);
    match name {
        "rest" => {
            let base = field("base").and_then(|b| Url::parse(b).ok()).filter(|b| b.has_host());
            let path = field("invoke_path").is_some_and(|p| p.starts_with('/'));
            ctx.rec.judge(&REST_FIELDS, base.is_some() && path, || {
                evidence(format!(
                    "the rest transport {} lacks an absolute `base` URL or an `invoke_path` beginning with \"/\"",
                    excerpt(config.to_string().as_bytes())
                ))
            });
            if let Some(base) = base {
                https(ctx, &REST_HTTPS, &base, || {
                    evidence(format!("the rest transport's base is {base}: plain HTTP, not https"))
                });
            }
        }
        "mcp" => {
            let ok = ["server", "tool_namespace", "tool_field"]
                .iter()
                .all(|k| field(k).is_some());
            ctx.rec.judge(&MCP_FIELDS, ok, || {
                evidence(format!(
                    "the mcp transport {} lacks `server`, `tool_namespace` or `tool_field`",
                    excerpt(config.to_string().as_bytes())
                ))
            });
        }
        other => {
            let labels: Vec<&str> = other.split('.').collect();
            let reverse_dns = labels.len() >= 2 && labels.iter().all(|l| !l.is_empty());
            ctx.rec.judge(&PRIVATE_TRANSPORTS, reverse_dns, || {
                evidence(format!("the private transport `{other}` has no reverse DNS prefix"))
            });
        }
    }
}

async fn caching(ctx: &mut Ctx, url: &Url, answer: &Exchange) {
    let etag = answer.header("etag").map(str::to_owned);
    let modified = answer.header("last-modified").map(str::to_owned);
    let control = answer.header("cache-control").map(str::to_ascii_lowercase);
    // `no-store` forbids keeping the document at all: no directive could be less appropriate
    // for headers that are there "to reduce unnecessary network traffic" (§7).
    let no_store = control
        .as_deref()
        .is_some_and(|c| c.split(',').any(|d| d.trim() == "no-store"));
    ctx.rec.judge(
        &CACHING,
        (etag.is_some() || modified.is_some()) && control.is_some() && !no_store,
        || {
            answer.evidence(if no_store {
                format!(
                    "Cache-Control: {}: `no-store` forbids the caching the headers are for",
                    control.clone().unwrap_or_default()
                )
            } else {
                format!(
                    "caching headers: ETag {}, Last-Modified {}, Cache-Control {}",
                    if etag.is_some() { "present" } else { "absent" },
                    if modified.is_some() { "present" } else { "absent" },
                    if control.is_some() { "present" } else { "absent" },
                )
            })
        },
    );
    let condition = match (etag, modified) {
        (Some(tag), _) => ("if-none-match", tag),
        (None, Some(date)) => ("if-modified-since", date),
        (None, None) => {
            ctx.rec.skip(
                &CONDITIONAL,
                "the document has no ETag or Last-Modified to condition on",
            );
            return;
        }
    };
    match ctx.probe.get(url, std::slice::from_ref(&condition)).await {
        Ok(again) => ctx.rec.judge(&CONDITIONAL, again.status == 304, || Evidence {
            request: format!("{} ({}: {})", again.request, condition.0, condition.1),
            ..again.evidence(format!(
                "HTTP {} to a conditional request for the unchanged document",
                again.status
            ))
        }),
        Err(failure) => ctx.no_answer(&CONDITIONAL, &failure),
    }
}

/// Where the REST transport invokes `agent`, if the checker may send there.
fn invoke_url(rest: &Value, agent: &str) -> Option<Url> {
    let base = rest.get("base")?.as_str()?;
    let path = rest.get("invoke_path")?.as_str()?;
    let url = Url::parse(&format!(
        "{}{}",
        base.trim_end_matches('/'),
        path.replace("{agent_id}", agent)
    ))
    .ok()?;
    // Plain HTTP off loopback is refused by §8.1; the checker sends nothing there either.
    (url.scheme() == "https" || (url.scheme() == "http" && loopback(&url))).then_some(url)
}

/// A REST answer: JSON, always (§4.3.1).
fn responds_json(ctx: &mut Ctx, answer: &Exchange) {
    ctx.rec
        .judge(&RESPONDS_JSON, answer.is_json_type() && answer.json().is_some(), || {
            answer.evidence(format!("the answer is `{}`, not JSON", answer.media_type()))
        });
}

async fn invocations(ctx: &mut Ctx, document: &Value) {
    let invocation_checks = [&RESPONDS_JSON, &AGENT_MISMATCH, &MISMATCH_PROBLEM, &ERRORS, &SUCCESS];
    let Some(rest) = document.pointer("/transports/rest") else {
        for check in invocation_checks {
            ctx.rec.skip(check, "the document defines no rest transport");
        }
        return;
    };
    let templated = rest
        .get("invoke_path")
        .and_then(Value::as_str)
        .is_some_and(|p| p.contains("{agent_id}"));
    let agents = document
        .get("agents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut in_depth = 0;
    for agent in &agents {
        let id = agent.get("id").and_then(Value::as_str).unwrap_or_default();
        let on_rest = agent
            .get("transports")
            .and_then(Value::as_array)
            .is_some_and(|t| t.iter().any(|n| n == "rest"));
        let invocable = ctx.invocable(&[id], agent);
        if !on_rest || !is_agent_id(id) || (in_depth >= ctx.max_tools && invocable.is_none()) {
            continue;
        }
        in_depth += 1;
        let Some(url) = invoke_url(rest, id) else {
            for check in invocation_checks {
                ctx.rec.skip(
                    check,
                    "the REST base is plain HTTP off loopback (8.1 forbids it): the checker sends no invocation there",
                );
            }
            return;
        };
        refusals(ctx, &url, agent, id, invocable.is_some(), templated).await;
        if let Some((_, input)) = invocable {
            success(ctx, &url, agent, id, input).await;
        }
    }
    if !templated {
        ctx.rec.skip(
            &AGENT_MISMATCH,
            "the invoke_path has no {agent_id}: the host cannot tell the agent from the URL",
        );
    }
    ctx.rec.skip(
        &SUCCESS,
        "no agent may be invoked: name one with --invoke AGENT (the host marks none read-only)",
    );
}

/// The operation the checker selects: `default` (the implied one, §5.1), else the first; none
/// when the agent has no `operations`.
fn operation(agent: &Value) -> Option<&Value> {
    let operations = agent.get("operations").and_then(Value::as_array)?;
    operations
        .iter()
        .find(|op| op["name"] == "default")
        .or_else(|| operations.first())
}

/// The `inputs` an envelope for `operation` must conform to: the operation's own, else the
/// agent's (§5.1).
fn inputs_of<'a>(agent: &'a Value, operation: Option<&'a Value>) -> &'a Value {
    operation
        .and_then(|op| op.get("inputs"))
        .or_else(|| agent.get("inputs"))
        .unwrap_or(&Value::Null)
}

/// Envelopes the host must refuse. Every agent, with `{agent_id}` in the path: another agent's
/// id (§5.2: a 400), with input that every `inputs` of the agent (its own, each operation's)
/// refuses, so a host ignoring the field still runs nothing. An agent the checker may run
/// (`may_run`): input that breaks the selected operation's `inputs`, which a host SHOULD refuse
/// with problem+json, but may accept: validation is the client's (§4.2, §5.1), so no other
/// agent gets it.
async fn refusals(ctx: &mut Ctx, url: &Url, agent: &Value, id: &str, may_run: bool, templated: bool) {
    let selected = operation(agent);
    let mut every: Vec<&Value> = vec![inputs_of(agent, None)];
    let operations = agent.get("operations").and_then(Value::as_array);
    every.extend(operations.into_iter().flatten().map(|op| inputs_of(agent, Some(op))));
    if !may_run {
        ctx.rec.skip(
            &ERRORS,
            "input an agent's `inputs` refuses goes only to agents the checker may run (--invoke AGENT, or marked read-only): WoA leaves validation to the client (4.2, 5.1), so a host may run the agent",
        );
    } else if let Some((bad, how)) = inputs::invalid(inputs_of(agent, selected)) {
        let mut envelope = json!({"agent": id, "input": bad});
        if let Some(name) = selected.and_then(|op| op.get("name")) {
            envelope["operation"] = name.clone();
        }
        match ctx.probe.post(url, &envelope).await {
            Ok(answer) if (200..300).contains(&answer.status) => {
                responds_json(ctx, &answer);
                ctx.rec.skip(
                    &ERRORS,
                    format!(
                        "agent `{id}` accepted an input that {how} (HTTP {}): WoA leaves validation to the client (4.2, 5.1), so that is no error",
                        answer.status
                    ),
                );
            }
            Ok(answer) => {
                responds_json(ctx, &answer);
                ctx.problem_shape(&ERRORS, Shape::WoaProblem, &answer);
                ctx.rec.judge(
                    &ERRORS,
                    answer.status >= 400 && answer.media_type() == "application/problem+json",
                    || {
                        answer.evidence(format!(
                            "HTTP {} as `{}`, not application/problem+json",
                            answer.status,
                            answer.media_type()
                        ))
                    },
                );
            }
            Err(failure) => ctx.no_answer(&ERRORS, &failure),
        }
    } else {
        ctx.rec.skip(
            &ERRORS,
            format!("agent `{id}` has no input its `inputs` surely refuses"),
        );
    }
    if !templated {
        return;
    }
    let Some((bad, _)) = inputs::invalid_for_all(every[0], &every[1..]) else {
        for check in [&AGENT_MISMATCH, &MISMATCH_PROBLEM] {
            ctx.rec.skip(
                check,
                format!("agent `{id}` has no input that each of its `inputs` surely refuses"),
            );
        }
        return;
    };
    let other = format!("{id}-not-this-agent");
    match ctx.probe.post(url, &json!({"agent": other, "input": bad})).await {
        Ok(answer) => {
            responds_json(ctx, &answer);
            ctx.rec.judge(&AGENT_MISMATCH, answer.status == 400, || {
                answer.evidence(format!(
                    "HTTP {} for an envelope naming `{other}` sent to `{id}`'s URL",
                    answer.status
                ))
            });
            ctx.rec.judge(
                &MISMATCH_PROBLEM,
                answer.media_type() == "application/problem+json",
                || answer.evidence(format!("the refusal is `{}`", answer.media_type())),
            );
        }
        Err(failure) => ctx.no_answer(&AGENT_MISMATCH, &failure),
    }
}

/// The agent invoked for real: its `default` operation (else its first) when it has
/// `operations`, with that operation's schemas where it overrides the agent's.
async fn success(ctx: &mut Ctx, url: &Url, agent: &Value, id: &str, input: Option<Value>) {
    let operation = operation(agent);
    let schema = |key: &str| {
        operation
            .and_then(|op| op.get(key))
            .or_else(|| agent.get(key))
            .cloned()
            .unwrap_or_default()
    };
    let input = input.unwrap_or_else(|| inputs::valid(&schema("inputs")));
    let mut envelope = json!({"agent": id, "input": input});
    if let Some(name) = operation.and_then(|op| op.get("name")) {
        envelope["operation"] = name.clone();
    }
    ctx.invoked(id, "WoA REST");
    let answer = match ctx.probe.post(url, &envelope).await {
        Ok(answer) => answer,
        Err(failure) => return ctx.no_answer(&SUCCESS, &failure),
    };
    responds_json(ctx, &answer);
    if !(200..300).contains(&answer.status) {
        ctx.rec.skip(
            &SUCCESS,
            format!(
                "agent `{id}` did not succeed with the input {input} (HTTP {}: {}); give one with --invoke '{id}=JSON'",
                answer.status,
                excerpt(&answer.body)
            ),
        );
        return;
    }
    let outputs = schema("outputs");
    let body = answer.json().unwrap_or(Value::Null);
    let problem = match toolhost_core::validate::compile(&outputs) {
        Ok(validator) => validator.iter_errors(&body).next().map(|e| e.to_string()),
        Err(e) => Some(format!("`outputs` does not compile: {e}")),
    };
    ctx.rec.judge(&SUCCESS, problem.is_none(), || {
        answer.evidence(format!(
            "the answer does not conform to `outputs`: {}",
            problem.unwrap_or_default()
        ))
    });
}
