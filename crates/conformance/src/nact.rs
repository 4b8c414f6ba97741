//! N-ACT (draft-rosenberg-aiproto-nact-00): the enumeration, details, versions and pagination
//! of §6, and the invocation of §7.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use url::Url;

use crate::checks::nact::*;
use crate::probe::{Exchange, excerpt};
use crate::report::Evidence;
use crate::schema::{Shape, misfit};
use crate::{Ctx, inputs, join};

/// Listing pages followed at most.
const MAX_PAGES: usize = 20;
/// Pages of one tool's versions followed at most.
const MAX_VERSION_PAGES: usize = 5;

/// A signature from the listing, with the request that brought it.
#[derive(Debug)]
struct Listed {
    signature: Value,
    request: String,
}

impl Listed {
    fn evidence(&self, found: impl Into<String>) -> Evidence {
        Evidence::item(&self.request, &self.signature, found.into())
    }

    fn str(&self, key: &str) -> &str {
        self.signature.get(key).and_then(Value::as_str).unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.str("name")
    }

    fn parameters(&self, key: &str) -> Vec<Value> {
        self.signature
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }
}

pub(crate) async fn run(ctx: &mut Ctx, root: &Url) {
    let Some(listed) = enumerate(ctx, root).await else {
        for check in ALL {
            ctx.rec.skip(check, "the enumeration API could not be read");
        }
        return;
    };
    if listed.is_empty() {
        for check in ALL {
            ctx.rec.skip(check, "the server lists no tools");
        }
    }
    for tool in &listed {
        shape(ctx, tool);
    }
    unique_names(ctx, &listed);
    pagination(ctx, root, &listed).await;
    unknown_tool(ctx, root).await;
    let mut in_depth = 0;
    for tool in &listed {
        let invocable = ctx.invocable(&[tool.name()], &tool.signature);
        if in_depth >= ctx.max_tools && invocable.is_none() {
            continue;
        }
        in_depth += 1;
        let Some(id) = tool.signature.get("toolId").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let Some(current) = number(&tool.signature["currentVersion"]) else {
            continue;
        };
        details(ctx, root, tool, &id, current).await;
        versions(ctx, root, tool, &id, current).await;
        malformed(ctx, root, tool, &id, current).await;
        if let Some((_, input)) = invocable {
            invoke(ctx, root, tool, &id, current, input).await;
        }
    }
    for check in [&INVOKE, &OUTPUT_NAMES, &PINNED] {
        ctx.rec.skip(
            check,
            "no tool may be invoked: name one with --invoke TOOL (the server marks none read-only)",
        );
    }
}

/// A page of an enumeration API: `items` and `paging`, or what is wrong.
fn page(answer: &Exchange) -> Result<(Vec<Value>, Value), String> {
    if answer.status != 200 {
        return Err(format!("HTTP {}, not 200", answer.status));
    }
    let body = answer.json().ok_or("the body is not JSON")?;
    let items = body.get("items").and_then(Value::as_array).ok_or("no `items` array")?;
    let paging = body
        .get("paging")
        .filter(|p| p.is_object())
        .ok_or("no `paging` object")?;
    Ok((items.clone(), paging.clone()))
}

/// The cursor of the next page: `paging.next`, absent, null or empty on the last page.
fn next(paging: &Value) -> Option<String> {
    match paging.get("next") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

fn with_query(url: &Url, pairs: &[(&str, &str)]) -> Url {
    let mut url = url.clone();
    url.query_pairs_mut().extend_pairs(pairs);
    url
}

/// Every signature of the listing, following `next`.
async fn enumerate(ctx: &mut Ctx, root: &Url) -> Option<Vec<Listed>> {
    let listing = join(root, &["tools"]);
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for number in 0..MAX_PAGES {
        let url = match &cursor {
            Some(c) => with_query(&listing, &[("pageCursor", c)]),
            None => listing.clone(),
        };
        let answer = match ctx.probe.get(&url, &[]).await {
            Ok(answer) => answer,
            Err(failure) => {
                let check = if number == 0 { &ENUMERATION } else { &PAGINATION };
                ctx.no_answer(check, &failure);
                return (number > 0).then_some(listed);
            }
        };
        let (items, paging) = match page(&answer) {
            Ok(page) => page,
            Err(found) if number == 0 => {
                ctx.rec.fail(&ENUMERATION, answer.evidence(found));
                return None;
            }
            Err(found) => {
                ctx.rec
                    .fail(&PAGINATION, answer.evidence(format!("the page at `next`: {found}")));
                return Some(listed);
            }
        };
        if number == 0 {
            ctx.shape(
                &ENUMERATION,
                Shape::NactPage,
                &answer.json().unwrap_or_default(),
                &answer,
            );
        }
        if !paging.get("pageLimit").is_some_and(Value::is_u64) {
            ctx.rec.fail(
                &PAGINATION,
                answer.evidence("`paging` has no `pageLimit` (the page limit the server offers)"),
            );
        }
        listed.extend(items.into_iter().map(|signature| Listed {
            signature,
            request: answer.request.clone(),
        }));
        match next(&paging) {
            None => return Some(listed),
            Some(c) if !seen.insert(c.clone()) => {
                ctx.rec.fail(
                    &PAGINATION,
                    answer.evidence(format!("`next` repeats an earlier cursor ({c}): the pages loop")),
                );
                return Some(listed);
            }
            Some(c) => cursor = Some(c),
        }
    }
    ctx.notes.push(format!(
        "the listing has more than {MAX_PAGES} pages; only those were checked"
    ));
    Some(listed)
}

/// A version number: a positive integer (Figure 2 quotes them, so a string of digits too).
fn number(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        _ => None,
    }
    .filter(|n| *n >= 1)
}

fn is_snake(name: &str) -> bool {
    let mut words = name.split('_');
    words.all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
}

fn is_capitalised_snake(name: &str) -> bool {
    let mut words = name.split('_');
    words.all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()))
        && name.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
}

/// The checks one signature answers by itself.
fn shape(ctx: &mut Ctx, tool: &Listed) {
    let s = &tool.signature;
    let name = tool.name();
    let mut missing = Vec::new();
    for key in ["toolId", "name", "description"] {
        if !s.get(key).is_some_and(Value::is_string) {
            missing.push(format!("`{key}` (a string)"));
        }
    }
    for key in ["version", "currentVersion"] {
        if s.get(key).is_none() {
            missing.push(format!("`{key}`"));
        }
    }
    for key in ["input_parameters", "output_parameters"] {
        match s.get(key) {
            None => {}
            Some(Value::Array(parameters)) => {
                for (i, p) in parameters.iter().enumerate() {
                    for field in ["id", "name"] {
                        if !p.get(field).is_some_and(Value::is_string) {
                            missing.push(format!("`{key}[{i}].{field}`"));
                        }
                    }
                }
            }
            Some(_) => missing.push(format!("`{key}` as an array")),
        }
    }
    ctx.rec.judge(&SIGNATURE, missing.is_empty(), || {
        tool.evidence(format!("`{name}` lacks {}", missing.join(", ")))
    });
    if missing.is_empty()
        && let Some(problem) = misfit(Shape::NactSignature, s)
    {
        ctx.rec.fail(&SIGNATURE, tool.evidence(format!("`{name}`: {problem}")));
    }
    let id = tool.str("toolId");
    ctx.rec.judge(&TOOL_ID, uuid::Uuid::try_parse(id).is_ok(), || {
        tool.evidence(format!("`{name}`: toolId `{id}` is not a UUID"))
    });
    ctx.rec.judge(&NAME_LENGTH, name.chars().count() < 255, || {
        tool.evidence(format!("the name is {} characters long", name.chars().count()))
    });
    ctx.rec.judge(&NAME_SNAKE, is_snake(name), || {
        tool.evidence(format!("`{name}` is not snake case"))
    });
    let description = tool.str("description").chars().count();
    ctx.rec.judge(&DESCRIPTION_LENGTH, description < 2000, || {
        tool.evidence(format!("`{name}`: the description is {description} characters long"))
    });
    let (version, current) = (number(&s["version"]), number(&s["currentVersion"]));
    ctx.rec
        .judge(&VERSION_INTEGER, version.is_some() && current.is_some(), || {
            tool.evidence(format!(
                "`{name}`: version {} / currentVersion {} are not both positive integers",
                s["version"], s["currentVersion"]
            ))
        });
    ctx.rec
        .judge(&CURRENT_VERSION, version.is_some() && version == current, || {
            tool.evidence(format!(
                "`{name}` is listed at version {} but its currentVersion is {}",
                s["version"], s["currentVersion"]
            ))
        });
    parameters(ctx, tool);
}

/// Types, enumerations and uniqueness of one signature's parameters.
fn parameters(ctx: &mut Ctx, tool: &Listed) {
    let name = tool.name();
    let inputs = tool.parameters("input_parameters");
    let outputs = tool.parameters("output_parameters");
    let mut names = HashSet::new();
    let mut ids = HashSet::new();
    for p in &inputs {
        let pname = p.get("name").and_then(Value::as_str).unwrap_or_default();
        ctx.rec.judge(&PARAMETERS_UNIQUE, names.insert(pname.to_owned()), || {
            tool.evidence(format!("`{name}` has two inputs named `{pname}`"))
        });
        if let Some(id) = p.get("id").and_then(Value::as_str) {
            ctx.rec.judge(&PARAMETERS_UNIQUE, ids.insert(id.to_owned()), || {
                tool.evidence(format!("`{name}` has two inputs with the id `{id}`"))
            });
        }
    }
    for (list, allowed, side) in [
        (&inputs, &["string", "int", "boolean", "enum"][..], "input"),
        (&outputs, &["string", "int", "boolean", "enum", "json"][..], "output"),
    ] {
        for p in list {
            let pname = p.get("name").and_then(Value::as_str).unwrap_or_default();
            let kind = p.get("type").map_or(Some("string"), Value::as_str);
            ctx.rec.judge(&TYPES, kind.is_some_and(|k| allowed.contains(&k)), || {
                tool.evidence(format!(
                    "`{name}`: the {side} `{pname}` has the type {}, not one of {}",
                    p["type"],
                    allowed.join(", ")
                ))
            });
            let values = p.get("allowed-values");
            if side == "input" && kind == Some("enum") {
                let pairs = values
                    .and_then(Value::as_array)
                    .filter(|v| !v.is_empty() && v.iter().all(|pair| pair.get("name").is_some_and(Value::is_string)));
                ctx.rec.judge(&ENUM_VALUES, pairs.is_some(), || {
                    tool.evidence(format!(
                        "`{name}`: the enum input `{pname}` has no `allowed-values` array of name-description pairs"
                    ))
                });
            }
            for value in values.and_then(Value::as_array).into_iter().flatten() {
                let Some(vname) = value.get("name").and_then(Value::as_str) else {
                    continue;
                };
                ctx.rec.judge(
                    &ENUM_NAMES,
                    is_capitalised_snake(vname) && vname.chars().count() <= 255,
                    || {
                        tool.evidence(format!(
                            "`{name}`: `{pname}` allows `{vname}`, which is not capitalized snake case (e.g. `{}`)",
                            vname.to_uppercase().replace([' ', '-'], "_")
                        ))
                    },
                );
            }
        }
    }
}

fn unique_names(ctx: &mut Ctx, listed: &[Listed]) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for tool in listed {
        *seen.entry(tool.name()).or_default() += 1;
    }
    for tool in listed {
        let count = seen[tool.name()];
        ctx.rec.judge(&NAME_UNIQUE, count == 1, || {
            tool.evidence(format!("{count} tools are named `{}`", tool.name()))
        });
    }
}

/// A walk of the listing with a small `pageLimit`: each page within its limit, no tool twice,
/// a last page, and the same tools as the whole listing.
async fn pagination(ctx: &mut Ctx, root: &Url, listed: &[Listed]) {
    let total = listed.len();
    if total < 2 {
        ctx.rec
            .skip(&PAGINATION, "fewer than two tools: nothing to page through");
        return;
    }
    let limit = total.div_ceil(4).to_string();
    let listing = join(root, &["tools"]);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut cursors = HashSet::new();
    for _ in 0..8 {
        let mut pairs = vec![("pageLimit", limit.as_str())];
        if let Some(c) = &cursor {
            pairs.push(("pageCursor", c));
        }
        let answer = match ctx.probe.get(&with_query(&listing, &pairs), &[]).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&PAGINATION, &failure),
        };
        let (items, paging) = match page(&answer) {
            Ok(page) => page,
            Err(found) => return ctx.rec.fail(&PAGINATION, answer.evidence(found)),
        };
        let offered = paging.get("pageLimit").and_then(Value::as_u64);
        if offered.is_none_or(|offered| items.len() as u64 > offered) {
            return ctx.rec.fail(
                &PAGINATION,
                answer.evidence(format!(
                    "{} items on a page whose paging.pageLimit is {}",
                    items.len(),
                    paging.get("pageLimit").unwrap_or(&Value::Null)
                )),
            );
        }
        names.extend(items.iter().map(|s| s["name"].as_str().unwrap_or_default().to_owned()));
        match next(&paging) {
            Some(c) if cursors.contains(&c) => {
                return ctx.rec.fail(
                    &PAGINATION,
                    answer.evidence(format!("`next` repeats an earlier cursor ({c}): the pages loop")),
                );
            }
            Some(c) => {
                cursors.insert(c.clone());
                cursor = Some(c);
            }
            None => {
                let unique: HashSet<&String> = names.iter().collect();
                let whole: HashSet<String> = listed.iter().map(|t| t.name().to_owned()).collect();
                let same = unique.len() == names.len() && unique.into_iter().cloned().collect::<HashSet<_>>() == whole;
                return ctx.rec.judge(&PAGINATION, same, || {
                    answer.evidence(format!(
                        "pages of {limit} gave {} tools ({} distinct) where the whole listing has {total}",
                        names.len(),
                        names.iter().collect::<HashSet<_>>().len()
                    ))
                });
            }
        }
    }
    ctx.rec
        .skip(&PAGINATION, format!("pages of {limit} did not end within 8 pages"));
}

async fn unknown_tool(ctx: &mut Ctx, root: &Url) {
    let id = uuid::Uuid::new_v4().to_string();
    let url = join(root, &["tools", &format!("{id}:invoke")]);
    match ctx.probe.post(&url, &json!({"input_parameters": []})).await {
        Ok(answer) => {
            ctx.rec.judge(&UNKNOWN_TOOL, (400..500).contains(&answer.status), || {
                answer.evidence(format!("HTTP {} for a toolID the server does not list", answer.status))
            });
            ctx.problem_shape(&UNKNOWN_TOOL, Shape::NactProblem, &answer);
        }
        Err(failure) => ctx.no_answer(&UNKNOWN_TOOL, &failure),
    }
}

/// The signature without `currentVersion`, which alone may change under one version.
fn locked_part(signature: &Value) -> Value {
    let mut s = signature.clone();
    if let Some(map) = s.as_object_mut() {
        map.remove("currentVersion");
    }
    s
}

async fn details(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64) {
    let answer = match ctx.probe.get(&join(root, &["tools", id]), &[]).await {
        Ok(answer) => answer,
        Err(failure) => return ctx.no_answer(&DETAILS, &failure),
    };
    let body = answer.json().filter(|_| answer.status == 200);
    if let Some(body) = &body {
        ctx.shape(&SIGNATURE, Shape::NactSignature, body, &answer);
    }
    let version = body.as_ref().and_then(|b| number(&b["version"]));
    ctx.rec.judge(&DETAILS, version == Some(current), || {
        answer.evidence(format!(
            "`{}`'s current version is {current}; this answer is version {}",
            tool.name(),
            body.as_ref().map_or(Value::Null, |b| b["version"].clone())
        ))
    });
    if let Some(body) = body.filter(|_| version == Some(current)) {
        ctx.rec
            .judge(&LOCKED, locked_part(&body) == locked_part(&tool.signature), || {
                answer.evidence(format!(
                    "`{}` version {current} here differs from the same version in the listing",
                    tool.name()
                ))
            });
    }
}

/// The versions list (order, numbers), and two reads of the current version and one of the
/// oldest, compared with the listing and the versions list.
async fn versions(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64) {
    let list_url = join(root, &["tools", id, "versions"]);
    let mut items: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut last: Option<Exchange> = None;
    for _ in 0..MAX_VERSION_PAGES {
        let url = match &cursor {
            Some(c) => with_query(&list_url, &[("pageCursor", c)]),
            None => list_url.clone(),
        };
        let answer = match ctx.probe.get(&url, &[]).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&VERSIONS_ORDER, &failure),
        };
        let (page_items, paging) = match page(&answer) {
            Ok(page) => page,
            Err(found) => return ctx.rec.fail(&VERSIONS_ORDER, answer.evidence(found)),
        };
        for item in &page_items {
            ctx.shape(&SIGNATURE, Shape::NactSignature, item, &answer);
        }
        items.extend(page_items);
        cursor = next(&paging);
        last = Some(answer);
        if cursor.is_none() {
            break;
        }
    }
    let Some(answer) = last else { return };
    let numbers: Vec<Option<u64>> = items.iter().map(|v| number(&v["version"])).collect();
    let newest_first = numbers.first() == Some(&Some(current))
        && numbers.iter().all(Option::is_some)
        && numbers.windows(2).all(|w| w[0] > w[1]);
    ctx.rec.judge(&VERSIONS_ORDER, newest_first, || {
        answer.evidence(format!(
            "`{}` (current version {current}): versions come as {:?}, not from {current} down",
            tool.name(),
            numbers
                .iter()
                .map(|n| n.map_or("?".to_owned(), |n| n.to_string()))
                .collect::<Vec<_>>()
        ))
    });
    ctx.rec
        .judge(&VERSION_INTEGER, numbers.iter().all(Option::is_some), || {
            answer.evidence(format!(
                "`{}` lists a version that is not a positive integer",
                tool.name()
            ))
        });
    if let Some(entry) = items.iter().find(|v| number(&v["version"]) == Some(current)) {
        ctx.rec
            .judge(&LOCKED, locked_part(entry) == locked_part(&tool.signature), || {
                answer.evidence(format!(
                    "`{}` version {current} in the versions list differs from the listing's",
                    tool.name()
                ))
            });
    }
    let mut reads = vec![(current, locked_part(&tool.signature)), (current, Value::Null)];
    if let Some(oldest) = items
        .last()
        .filter(|v| number(&v["version"]).is_some_and(|n| n < current))
    {
        reads.push((number(&oldest["version"]).unwrap_or(1), locked_part(oldest)));
    }
    let mut previous: Option<Value> = None;
    for (version, expected) in reads {
        let url = join(root, &["tools", id, "versions", &version.to_string()]);
        let answer = match ctx.probe.get(&url, &[]).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&VERSION_READ, &failure),
        };
        let Some(body) = answer
            .json()
            .filter(|b| answer.status == 200 && number(&b["version"]) == Some(version))
        else {
            return ctx.rec.fail(
                &VERSION_READ,
                answer.evidence(format!("not `{}`'s version {version}", tool.name())),
            );
        };
        ctx.rec.pass(&VERSION_READ);
        let read = locked_part(&body);
        // The second read of the current version is compared with the first.
        let expected = if expected.is_null() {
            previous.clone().unwrap_or_default()
        } else {
            expected
        };
        ctx.rec.judge(&LOCKED, read == expected, || {
            answer.evidence(format!(
                "`{}` version {version} changed between two reads without a new version: was {}",
                tool.name(),
                excerpt(expected.to_string().as_bytes())
            ))
        });
        previous = Some(read);
    }
}

/// Invocations the signature refuses: each must be a 4xx, never a 5xx or a success.
async fn malformed(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64) {
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
    let mut requests = vec![(url.clone(), body.clone(), how.clone())];
    // A version the tool does not have, with the same refused input (were the version ignored).
    let missing = current + 1000;
    requests.push((
        join(root, &["tools", id, "versions", &format!("{missing}:invoke")]),
        body,
        format!("pins version {missing}, which the tool does not have, and {how}"),
    ));
    if bad == json!([]) {
        // With a required input, even a lenient reading of a body that is not an invocation
        // object cannot run the tool.
        requests.push((
            url,
            json!({"name": tool.name(), "input_parameters": {"not": "an array"}}),
            "sends `input_parameters` that is not an array".to_owned(),
        ));
    }
    for (url, body, how) in requests {
        let answer = match ctx.probe.post(&url, &body).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(&MALFORMED, &failure),
        };
        let status = answer.status;
        ctx.problem_shape(&MALFORMED, Shape::NactProblem, &answer);
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

/// The tool invoked for real (it is named or read-only), unpinned and pinned.
async fn invoke(ctx: &mut Ctx, root: &Url, tool: &Listed, id: &str, current: u64, input: Option<Value>) {
    let input = input.unwrap_or_else(|| inputs::nact_valid(&tool.parameters("input_parameters")));
    let body = json!({"name": tool.name(), "input_parameters": inputs::nact_parameters(&input)});
    let outputs: HashSet<String> = tool
        .parameters("output_parameters")
        .iter()
        .filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let targets = [
        (
            join(root, &["tools", &format!("{id}:invoke")]),
            &INVOKE,
            "N-ACT, unpinned",
        ),
        (
            join(root, &["tools", id, "versions", &format!("{current}:invoke")]),
            &PINNED,
            "N-ACT, pinned",
        ),
    ];
    for (url, check, how) in targets {
        ctx.invoked(tool.name(), how);
        let answer = match ctx.probe.post(&url, &body).await {
            Ok(answer) => answer,
            Err(failure) => return ctx.no_answer(check, &failure),
        };
        if !(200..300).contains(&answer.status) {
            let reason = format!(
                "`{}` did not succeed with the input {input} (HTTP {}: {}); give one with --invoke '{}=JSON'",
                tool.name(),
                answer.status,
                excerpt(&answer.body),
                tool.name()
            );
            ctx.rec.skip(&OUTPUT_NAMES, reason.clone());
            ctx.rec.skip(check, reason);
            continue;
        }
        let results = answer
            .json()
            .and_then(|b| b.get("output_parameters").and_then(Value::as_array).cloned());
        let Some(results) = results else {
            ctx.rec.fail(check, answer.evidence("no `output_parameters` array"));
            continue;
        };
        ctx.shape(check, Shape::NactResult, &answer.json().unwrap_or_default(), &answer);
        for result in &results {
            let name = result.get("name").and_then(Value::as_str);
            ctx.rec
                .judge(&OUTPUT_NAMES, name.is_some_and(|n| outputs.contains(n)), || {
                    answer.evidence(format!(
                        "the output {} is not named after an output of the signature ({})",
                        result.get("name").unwrap_or(&Value::Null),
                        outputs.iter().cloned().collect::<Vec<_>>().join(", ")
                    ))
                });
        }
    }
}
