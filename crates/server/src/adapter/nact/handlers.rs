//! N-ACT handlers: decode, one core call, encode.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State as Extract};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::value::RawValue;
use toolhost_client::search::RANKED_HEADER;
use toolhost_core::{Invocation, ListQuery, VersionSelector};
use toolhost_wire::nact::{self as wire, Page, Paging};

use super::cursor::{self, Kind};
use super::{convert, error};
use crate::State;
use crate::auth::Caller;
use crate::http::body::Json;
use crate::http::cache;
use crate::http::problem::ProblemResponse;

/// N-ACT §6.4 leaves the bounds to the server: 50 by default, at most 500 (docs/protocols.md §3).
const DEFAULT_PAGE_LIMIT: u32 = 50;
const MAX_PAGE_LIMIT: u32 = 500;
/// Listings change on reload, and every signature carries `currentVersion`, which changes when
/// a version ships: a short lifetime, then revalidation with the ETag.
const CACHE: &str = "max-age=60";
const JSON: &str = "application/json";

type Result<T> = std::result::Result<T, ProblemResponse>;

/// `GET {root}/tools`: the latest signature of every matching tool, one page at a time.
pub(super) async fn list(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response> {
    let params = Params::parse(query.as_deref(), &["pageLimit", "pageCursor", "tag", "q"])?;
    if let Some(q) = &params.q {
        return ranked(&state, caller, &params, q, &headers);
    }
    let after = params.cursor(Kind::Tools)?;
    let built = state.view::<super::Signatures>();
    let context = caller.context();
    let page = built.catalog.list(&ListQuery {
        tags: &params.tags,
        after: after.as_deref(),
        limit: params.limit as usize,
        access: caller.access,
    });
    let items: Vec<&RawValue> = page
        .tools
        .iter()
        // A tool whose requirements this caller cannot meet is not listed (N-ACT has no place
        // for OTC's context).
        .filter(|t| t.unmet_requirement(&context).is_none())
        .filter_map(|t| built.view.get(t, t.latest().number))
        .collect();
    let next = page
        .more
        .then(|| page.tools.last().map(|t| cursor::encode(Kind::Tools, &t.name)))
        .flatten();
    Ok(page_response(&state, &headers, items, params.limit, next))
}

/// `GET {root}/tools?q=TEXT`: the matching tools' latest signatures, most relevant first
/// (toolhost's extension of §6.1's enumeration, docs/protocols.md §3), with the tag filters and
/// pagination of the plain listing. The page says it is ranked in [`RANKED_HEADER`].
fn ranked(state: &State, caller: Caller, params: &Params, q: &str, headers: &HeaderMap) -> Result<Response> {
    let skip = match params.cursor(Kind::Ranked)? {
        None => 0,
        Some(key) => key
            .split_once(':')
            .filter(|(_, query)| *query == q)
            .and_then(|(position, _)| position.parse::<usize>().ok())
            .ok_or_else(|| {
                ProblemResponse::bad_request(
                    "pageCursor continues a search for other text; send the same `q` as the page it came from, or start again without pageCursor",
                )
            })?,
    };
    let built = state.view::<super::Signatures>();
    let context = caller.context();
    let limit = params.limit as usize;
    let hits = built.catalog.search(q, skip + limit + 1, |t| {
        t.listed_for(&caller.access)
            && params.tags.iter().all(|tag| t.tags_with_toolkit().any(|x| x == tag))
            && t.unmet_requirement(&context).is_none()
            && built.view.shows(t, t.latest().number)
    });
    let items: Vec<&RawValue> = hits
        .iter()
        .skip(skip)
        .take(limit)
        .filter_map(|(t, _)| built.view.get(t, t.latest().number))
        .collect();
    let next = (hits.len() > skip + limit).then(|| cursor::encode(Kind::Ranked, &format!("{}:{q}", skip + limit)));
    let mut response = page_response(state, headers, items, params.limit, next);
    response
        .headers_mut()
        .insert(RANKED_HEADER, axum::http::HeaderValue::from_static("bm25f"));
    Ok(response)
}

/// `GET {root}/tools/{toolID}`: the current signature (N-ACT §6.2).
pub(super) async fn signature(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(tool): Path<String>,
    headers: HeaderMap,
) -> Result<Response> {
    not_an_invocation(&tool)?;
    signature_response(&state, &caller, &tool, &VersionSelector::Latest, &headers)
}

/// `GET {root}/tools/{toolID}/versions`: every served version, newest first (N-ACT §6.3).
pub(super) async fn versions(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(tool): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response> {
    let params = Params::parse(query.as_deref(), &["pageLimit", "pageCursor"])?;
    let (tool, _) = state
        .engine
        .resolve(&tool, &VersionSelector::Latest, &caller.access)
        .map_err(error::problem)?;
    let before = match params.cursor(Kind::Versions)? {
        None => u32::MAX,
        Some(key) => key
            .strip_prefix(&format!("{}:", tool.id))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                ProblemResponse::bad_request(
                    "this pageCursor belongs to another tool's version listing; start again without pageCursor",
                )
            })?,
    };
    let built = state.view::<super::Signatures>();
    let limit = params.limit as usize;
    let mut served = tool.served_versions().filter(|v| v.number < before);
    let page: Vec<_> = served.by_ref().take(limit).collect();
    let more = served.next().is_some();
    let items = page.iter().filter_map(|v| built.view.get(&tool, v.number)).collect();
    let next = more
        .then(|| {
            page.last()
                .map(|v| cursor::encode(Kind::Versions, &format!("{}:{}", tool.id, v.number)))
        })
        .flatten();
    Ok(page_response(&state, &headers, items, params.limit, next))
}

/// `GET {root}/tools/{toolID}/versions/{n}`: one version's signature (N-ACT §6.3).
pub(super) async fn version(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path((tool, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response> {
    not_an_invocation(&version)?;
    let selector = VersionSelector::Number(version_number(&version)?);
    signature_response(&state, &caller, &tool, &selector, &headers)
}

/// One pre-rendered signature, resolved in the same catalog the rendering came from.
fn signature_response(
    state: &State,
    caller: &Caller,
    tool: &str,
    selector: &VersionSelector,
    headers: &HeaderMap,
) -> Result<Response> {
    let built = state.view::<super::Signatures>();
    let (tool, version) =
        toolhost_core::resolve(&built.catalog, tool, selector, &caller.access).map_err(error::problem)?;
    let body = built
        .view
        .get(tool, version.number)
        .map(|s| s.get().as_bytes().to_vec())
        .ok_or_else(|| {
            let reason = match built.view.entry(tool, version.number) {
                Some(super::Entry::Off(reason)) => Some(reason.as_str()),
                _ => None,
            };
            not_on_nact(&tool.name, reason)
        })?;
    Ok(cache::json(headers, body, JSON, CACHE, state.auth().enabled()))
}

/// The answer for a version N-ACT cannot carry (a required json input): not found here, with
/// why and where it is.
fn not_on_nact(tool: &str, reason: Option<&str>) -> ProblemResponse {
    let why = reason.map_or_else(String::new, |r| format!(": {r}"));
    ProblemResponse::new(
        axum::http::StatusCode::NOT_FOUND,
        "not-found",
        format!("tool `{tool}` is not served over N-ACT{why}; call it over MCP, OTC or WoA"),
    )
}

/// `POST {root}/tools/{toolID}:invoke`: run the current version (N-ACT §7).
pub(super) async fn invoke_current(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path(tool): Path<String>,
    body: Json<wire::Invocation>,
) -> Result<Response> {
    let tool = invoke_target(&tool)?;
    invoke(&state, caller, tool, VersionSelector::Latest, body.0).await
}

/// `POST {root}/tools/{toolID}/versions/{n}:invoke`: run version `n` (N-ACT §7).
pub(super) async fn invoke_version(
    Extract(state): Extract<Arc<State>>,
    caller: Caller,
    Path((tool, version)): Path<(String, String)>,
    body: Json<wire::Invocation>,
) -> Result<Response> {
    let version = invoke_target(&version)?;
    let version = VersionSelector::Number(version_number(version)?);
    invoke(&state, caller, &tool, version, body.0).await
}

async fn invoke(
    state: &State,
    caller: Caller,
    tool: &str,
    version: VersionSelector,
    body: wire::Invocation,
) -> Result<Response> {
    let built = state.view::<super::Signatures>();
    let (tool, served) =
        toolhost_core::resolve(&built.catalog, tool, &version, &caller.access).map_err(error::problem)?;
    let shown = match built.view.entry(tool, served.number) {
        Some(super::Entry::On { shown, .. }) => shown,
        Some(super::Entry::Off(reason)) => return Err(not_on_nact(&tool.name, Some(reason))),
        Some(super::Entry::Retired) | None => return Err(not_on_nact(&tool.name, None)),
    };
    if let Some(name) = &body.name
        && name != &tool.name
    {
        return Err(ProblemResponse::bad_request(format!(
            "the body names tool `{name}`, but the URL addresses `{}`; send the same tool in both, or leave `name` out",
            tool.name
        )));
    }
    let mut input = convert::input_object(body.input_parameters).map_err(error::invalid_input)?;
    convert::decimals(served, &mut input);
    // Checked as N-ACT shows the version, then spelled as the engine takes it (issue #38.2).
    let mut input = shown.check(&tool.name, input).map_err(error::invalid_input)?;
    super::projection::to_wire(served, &mut input);
    let invocation = Invocation {
        tool: tool.name.clone(),
        // The version resolved above, also when the call named the current one.
        version: VersionSelector::Number(served.number),
        input,
        context: toolhost_core::CallContext {
            confirmation: body.confirmation.map(toolhost_core::confirm::Presented::Id),
            ..caller.context()
        },
    };
    let outcome = crate::calls::invoke(state, crate::calls::Protocol::Nact, invocation)
        .await
        .map_err(|e| error::answer(e, state.config.approvals.nact_403))?;
    Ok(axum::Json(convert::result(outcome)).into_response())
}

/// Strips the `:invoke` suffix of an invocation path segment.
/// A GET (or HEAD) of an invocation URL: 405 with `Allow: POST` (issue #22.8), not "no tool
/// named `x:invoke`".
fn not_an_invocation(segment: &str) -> Result<()> {
    if segment.ends_with(":invoke") {
        let mut p = ProblemResponse::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
            format!("`{segment}` invokes a tool: send it with POST and an invocation body (N-ACT §7)"),
        );
        p.allow = Some("POST");
        return Err(p);
    }
    Ok(())
}

fn invoke_target(segment: &str) -> Result<&str> {
    segment.strip_suffix(":invoke").ok_or_else(|| {
        let mut p = ProblemResponse::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
            format!("POST is for invocation: send it to `{segment}:invoke`; signatures are read with GET"),
        );
        p.allow = Some("GET, HEAD");
        p
    })
}

/// A version number in a path: a positive integer in plain decimal (N-ACT §6.1). A number
/// too large to be any version is well-formed but unknown: 404, like any other missing version.
fn version_number(segment: &str) -> Result<u32> {
    let plain = !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) && !segment.starts_with('0');
    if !plain {
        return Err(ProblemResponse::bad_request(format!(
            "`{segment}` is not a version number; N-ACT versions are positive integers starting at 1, written without sign or leading zeros"
        )));
    }
    segment.parse::<u32>().map_err(|_| {
        ProblemResponse::new(
            StatusCode::NOT_FOUND,
            "unknown-version",
            format!("no tool has a version {segment}"),
        )
    })
}

fn page_response(
    state: &State,
    headers: &HeaderMap,
    items: Vec<&RawValue>,
    limit: u32,
    next: Option<String>,
) -> Response {
    let page = Page {
        items,
        paging: Paging {
            page_limit: limit,
            next,
        },
    };
    let body = serde_json::to_vec(&page).unwrap_or_default();
    cache::json(headers, body, JSON, CACHE, state.auth().enabled())
}

/// Listing query parameters; unknown ones are refused so a typo is not silently ignored.
#[derive(Debug, Default)]
struct Params {
    limit: u32,
    cursor: Option<String>,
    tags: Vec<String>,
    q: Option<String>,
}

impl Params {
    fn parse(query: Option<&str>, allowed: &[&str]) -> Result<Self> {
        let mut params = Self {
            limit: DEFAULT_PAGE_LIMIT,
            ..Self::default()
        };
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            if !allowed.contains(&key.as_ref()) {
                return Err(ProblemResponse::bad_request(format!(
                    "unknown query parameter `{key}`; this endpoint takes: {}",
                    allowed.join(", ")
                )));
            }
            match key.as_ref() {
                "pageLimit" => {
                    // Digits too many for u64 are still a positive integer: clamp them as well.
                    let n: u64 = value
                        .parse()
                        .ok()
                        .or_else(|| (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())).then_some(u64::MAX))
                        .filter(|n| *n > 0)
                        .ok_or_else(|| {
                            ProblemResponse::bad_request(format!(
                                "pageLimit must be a positive integer (larger than {MAX_PAGE_LIMIT} is clamped), but got `{value}`"
                            ))
                        })?;
                    // Larger limits are clamped, and the applied value is returned in `paging`.
                    params.limit = n.min(u64::from(MAX_PAGE_LIMIT)) as u32;
                }
                // An empty cursor is no cursor: the first page (issue #31.6).
                "pageCursor" => params.cursor = Some(value.into_owned()).filter(|c| !c.is_empty()),
                "tag" => params.tags.push(value.into_owned()),
                "q" => params.q = Some(value.into_owned()).filter(|q| !q.is_empty()),
                _ => {}
            }
        }
        Ok(params)
    }

    fn cursor(&self, kind: Kind) -> Result<Option<String>> {
        self.cursor
            .as_deref()
            .map(|c| {
                cursor::decode(kind, c).ok_or_else(|| {
                    ProblemResponse::bad_request("pageCursor is not a cursor this server issued; use `paging.next` from the previous page, or start again without it")
                })
            })
            .transpose()
    }
}
