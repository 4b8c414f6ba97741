//! N-ACT (draft-rosenberg-aiproto-nact-00): the enumeration, details, versions and pagination
//! of §6, and the invocation of §7.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use url::Url;

use crate::checks::Check;
use crate::checks::nact::*;
use crate::probe::Exchange;
use crate::report::Evidence;
use crate::schema::{Shape, misfit};
use crate::{Ctx, join};

mod invoke;
mod versions;

use invoke::{Target, invoke, malformed};
use versions::{details, versions};

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
    let listed = match enumerate(ctx, root).await {
        Ok(listed) => listed,
        Err(reason) => {
            for check in ALL {
                ctx.rec.skip(check, reason.clone());
            }
            return;
        }
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
    tag_filter(ctx, root, &listed).await;
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
        let history = versions(ctx, root, tool, &id, current).await;
        malformed(ctx, root, tool, &id, current, invocable.is_some()).await;
        if let Some((_, input)) = invocable {
            let target = Target {
                root,
                tool,
                id: &id,
                current,
            };
            invoke(ctx, &target, input, &history).await;
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

/// What tells two items of a list apart: `field` (`toolId` in a listing of tools, `version` in
/// one tool's versions), the whole item when it has none.
fn key(item: &Value, field: &str) -> String {
    item.get(field).unwrap_or(item).to_string()
}

/// An item of this page that an earlier page listed already: `next` wrapped around (§6.4).
fn repeated<'a>(items: &'a [Value], earlier: &HashSet<String>, field: &str) -> Option<&'a Value> {
    items.iter().find(|s| earlier.contains(&key(s, field)))
}

fn wrapped(answer: &Exchange, again: &Value) -> Evidence {
    answer.evidence(format!(
        "the page at `next` lists `{}` (version {}) again, as an earlier page did: following `next` starts over instead of reaching the last page",
        again.get("name").and_then(Value::as_str).unwrap_or_default(),
        again.get("version").unwrap_or(&Value::Null)
    ))
}

/// Why a walk of a paginated list stopped short.
enum Stop {
    /// No answer (already recorded against the walk's check).
    NoAnswer,
    /// An answer that is not a page, and what is wrong with it.
    Bad(Exchange, String),
}

/// The items of the paginated list at `url` (with `pairs` in its query), following `next` for
/// at most `max` pages, and the last answer. A `next` that repeats a cursor or starts over
/// fails PAGINATION and ends the walk with the items before it; the items are told apart by
/// `field`. Each item is a signature, validated against the schema (SIGNATURE).
async fn walk(
    ctx: &mut Ctx,
    url: &Url,
    pairs: &[(&str, &str)],
    max: usize,
    field: &str,
    check: &Check,
) -> Result<(Vec<Value>, Exchange), Stop> {
    let mut items: Vec<Value> = Vec::new();
    let mut earlier = HashSet::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut last = None;
    for _ in 0..max {
        let mut query = pairs.to_vec();
        if let Some(c) = &cursor {
            query.push(("pageCursor", c));
        }
        let answer = match ctx.probe.get(&with_query(url, &query), &[]).await {
            Ok(answer) => answer,
            Err(failure) => {
                ctx.no_answer(check, &failure);
                return Err(Stop::NoAnswer);
            }
        };
        let (page_items, paging) = match page(&answer) {
            Ok(page) => page,
            Err(found) => return Err(Stop::Bad(answer, found)),
        };
        if let Some(again) = repeated(&page_items, &earlier, field) {
            ctx.rec.fail(&PAGINATION, wrapped(&answer, again));
            return Ok((items, answer));
        }
        earlier.extend(page_items.iter().map(|item| key(item, field)));
        for item in &page_items {
            ctx.shape(&SIGNATURE, Shape::NactSignature, item, &answer);
        }
        items.extend(page_items);
        cursor = next(&paging).filter(|c| cursors.insert(c.clone()));
        if cursor.is_none() {
            return Ok((items, answer));
        }
        last = Some(answer);
    }
    match last {
        Some(answer) => Ok((items, answer)),
        None => Err(Stop::NoAnswer),
    }
}

/// Every signature of the listing, following `next`; why not, when the listing cannot be read.
async fn enumerate(ctx: &mut Ctx, root: &Url) -> Result<Vec<Listed>, String> {
    let listing = join(root, &["tools"]);
    let mut listed: Vec<Listed> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut earlier = HashSet::new();
    let unreadable = || "the enumeration API could not be read".to_owned();
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
                return if number > 0 { Ok(listed) } else { Err(unreadable()) };
            }
        };
        if number == 0
            && let Some(reason) = ctx.needs_credentials(&answer)
        {
            return Err(reason);
        }
        let (items, paging) = match page(&answer) {
            Ok(page) => page,
            Err(found) if number == 0 => {
                ctx.rec.fail(&ENUMERATION, answer.evidence(found));
                return Err(unreadable());
            }
            Err(found) => {
                ctx.rec
                    .fail(&PAGINATION, answer.evidence(format!("the page at `next`: {found}")));
                return Ok(listed);
            }
        };
        if let Some(again) = repeated(&items, &earlier, "toolId") {
            ctx.rec.fail(&PAGINATION, wrapped(&answer, again));
            return Ok(listed);
        }
        earlier.extend(items.iter().map(|item| key(item, "toolId")));
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
            None => return Ok(listed),
            Some(c) if !seen.insert(c.clone()) => {
                ctx.rec.fail(
                    &PAGINATION,
                    answer.evidence(format!("`next` repeats an earlier cursor ({c}): the pages loop")),
                );
                return Ok(listed);
            }
            Some(c) => cursor = Some(c),
        }
    }
    ctx.notes.push(format!(
        "the listing has more than {MAX_PAGES} pages; only those were checked"
    ));
    Ok(listed)
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
    let mut earlier = HashSet::new();
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
        if let Some(again) = repeated(&items, &earlier, "toolId") {
            return ctx.rec.fail(&PAGINATION, wrapped(&answer, again));
        }
        earlier.extend(items.iter().map(|item| key(item, "toolId")));
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

/// The listing filtered by a tag some tools carry and others do not (§5.2). The draft names no
/// filter parameter: `tag` (toolhost's) ignored or refused is a skip, a wrong answer a failure.
async fn tag_filter(ctx: &mut Ctx, root: &Url, listed: &[Listed]) {
    let tags_of = |tool: &Listed| -> Vec<String> {
        let tags = tool.signature.get("tags").and_then(Value::as_array);
        tags.into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for tool in listed {
        for tag in tags_of(tool).into_iter().collect::<HashSet<_>>() {
            *counts.entry(tag).or_default() += 1;
        }
    }
    // The tag most tools carry, short of all of them (a filter by it must drop some).
    let Some(tag) = counts
        .iter()
        .filter(|(_, n)| **n < listed.len())
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(tag, _)| tag.clone())
    else {
        ctx.rec.skip(
            &TAG_FILTER,
            "no tag is carried by some listed tools and not by others: a filter could not be told from none",
        );
        return;
    };
    let names = |tools: &mut dyn Iterator<Item = &Value>| -> Vec<String> {
        let mut names: Vec<String> = tools
            .map(|s| s.get("name").and_then(Value::as_str).unwrap_or_default().to_owned())
            .collect();
        names.sort();
        names
    };
    let expected = names(
        &mut listed
            .iter()
            .filter(|t| tags_of(t).contains(&tag))
            .map(|t| &t.signature),
    );
    let whole = names(&mut listed.iter().map(|t| &t.signature));
    let pairs = [("tag", tag.as_str())];
    let (got, answer) = match walk(ctx, &join(root, &["tools"]), &pairs, MAX_PAGES, "toolId", &TAG_FILTER).await {
        Ok(walked) => walked,
        Err(Stop::NoAnswer) => return,
        Err(Stop::Bad(_, found)) => {
            return ctx.rec.skip(
                &TAG_FILTER,
                format!("the listing filtered with `tag={tag}` answered {found}; the draft names no filter parameter, so the server may filter another way"),
            );
        }
    };
    let got = names(&mut got.iter());
    if got == whole {
        return ctx.rec.skip(
            &TAG_FILTER,
            format!("the server ignores `tag={tag}` (every tool is listed); the draft names no filter parameter, so the server may filter another way"),
        );
    }
    ctx.rec.judge(&TAG_FILTER, got == expected, || {
        answer.evidence(format!(
            "filtered by the tag `{tag}`, the listing holds [{}]; the tools that carry it are [{}]",
            got.join(", "),
            expected.join(", ")
        ))
    });
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
