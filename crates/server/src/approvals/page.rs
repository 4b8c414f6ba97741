//! The confirmation page (`/confirm/{id}`) and CHEQ's routes (`/cheq/{id}`, `/cheq/{id}/result`).
//!
//! The page authenticates the human itself: a browser sends no bearer token, so the approver
//! signs in once with a credential the server's inbound auth accepts (an API key, or a JWT of
//! a configured issuer), kept in an `HttpOnly`, `SameSite=Strict` cookie; with inbound auth off
//! only a browser on loopback (the operator) may decide. The signed-in approver must be the
//! caller (when the policy lets the caller approve) or hold an approver scope. GET only shows;
//! the decision is a POST carrying the page's CSRF token (derived from the record's secret
//! nonce and the approver's credential). The quotation comes from the record alone. A version
//! with `source: human` inputs has the approver type them in the decision form
//! ([`super::human`]): an approval keeps them only once they are what the inputs take.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, Path, RawQuery, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use super::{Approvals, Entry, Status, escape};
use crate::State;
use crate::auth::Caller;
use crate::http::problem::ProblemResponse;

/// The cookie holding the approver's credential.
const COOKIE: &str = "toolhost_approver";

/// Paths the front auth layer lets through: the page authenticates by its own cookie.
pub fn is_page(path: &str) -> bool {
    path.starts_with("/confirm/") || path == super::JWKS_PATH
}

/// The page's and CHEQ's routes.
pub fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/confirm/{id}", get(show).post(decide))
        .route("/confirm/{id}/login", axum::routing::post(login))
        .route("/cheq/{id}", get(cheq_object).post(cheq_decide))
        .route("/cheq/{id}/result", get(result))
        .route(super::JWKS_PATH, get(jwks))
        .route("/approvals", get(list))
}

/// The public keys audit records are signed with.
async fn jwks(Extract(state): Extract<Arc<State>>) -> Response {
    match approvals(&state) {
        Ok(approvals) => axum::Json(approvals.signer().jwks()).into_response(),
        Err(response) => *response,
    }
}

/// `GET /approvals`: pending and recent confirmations, newest first, for operators
/// (`toolhost approvals`): what each is for, where it stands, and its signed evidence.
async fn list(Extract(state): Extract<Arc<State>>, caller: Caller) -> Response {
    if !state.auth().is_operator(&caller) {
        return refuse(
            StatusCode::FORBIDDEN,
            "not-an-operator",
            "listing confirmations needs the operator scope",
        );
    }
    let approvals = match approvals(&state) {
        Ok(approvals) => approvals,
        Err(response) => return *response,
    };
    match approvals.store.recent(200).await {
        Ok(entries) => {
            let items: Vec<serde_json::Value> = entries
                .iter()
                .map(|e| {
                    let mut item = e.status_json();
                    item["tool"] = e.record.tool.clone().into();
                    item["version"] = e.record.version.clone().into();
                    item["principal"] = e.record.principal.clone().into();
                    item["protocol"] = e.record.protocol.clone().into();
                    item["args_sha256"] = e.record.args_sha256.clone().into();
                    item["created"] = super::rfc3339(e.record.created_ms).into();
                    item["decided_by"] = e.decided_by.clone().into();
                    item["evidence"] = e.evidence.clone().into();
                    item
                })
                .collect();
            axum::Json(serde_json::json!({"confirmations": items})).into_response()
        }
        Err(_) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "store-unavailable",
            "the confirmation store is not reachable",
        ),
    }
}

/// The peer's address, when the connection gave one.
struct Peer(Option<SocketAddr>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0)))
    }
}

/// A form body (`application/x-www-form-urlencoded`) as `T`.
fn form<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<T> {
    let pairs: serde_json::Map<String, serde_json::Value> = form_urlencoded::parse(body)
        .map(|(k, v)| (k.into_owned(), serde_json::Value::String(v.into_owned())))
        .collect();
    serde_json::from_value(serde_json::Value::Object(pairs)).ok()
}

fn approvals(state: &State) -> Result<&Approvals, Box<Response>> {
    state.approvals.as_deref().ok_or_else(|| {
        Box::new(ProblemResponse::new(StatusCode::NOT_FOUND, "not-found", "no confirmations here").into_response())
    })
}

/// Who the browser is: the credential in its cookie (or an `Authorization` header), checked
/// by inbound auth. `Ok(None)`: signed out. With auth off, the loopback operator.
async fn approver(
    state: &State,
    headers: &HeaderMap,
    peer: Option<SocketAddr>,
) -> Result<Option<(Caller, String)>, String> {
    let auth = state.auth();
    if !auth.enabled() {
        return if peer.is_some_and(|p| p.ip().is_loopback()) {
            Ok(Some((Caller::anonymous(), String::new())))
        } else {
            Err("with authentication off, only the operator on this machine (loopback) may decide".to_owned())
        };
    }
    let credential = cookie(headers).or_else(|| {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned)
    });
    let Some(credential) = credential else {
        return Ok(None);
    };
    let mut synthetic = HeaderMap::new();
    let value =
        HeaderValue::from_str(&format!("Bearer {credential}")).map_err(|_| "the credential is malformed".to_owned())?;
    synthetic.insert(header::AUTHORIZATION, value);
    match auth.authenticate(&synthetic).await {
        Ok(caller) => Ok(Some((caller, credential))),
        Err(_) => Ok(None),
    }
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('=').map(str::to_owned))
        .filter(|v| !v.is_empty())
}

/// Whether `caller` may decide on `entry`: the caller themself (when the policy allows it) or
/// a holder of an approver scope; with auth off, the loopback operator (checked before).
pub fn may_decide(entry: &Entry, caller: &Caller, auth_on: bool) -> bool {
    if !auth_on {
        return true;
    }
    let approvers = &entry.record.approvers;
    let own = caller.id == entry.record.principal && approvers.iter().any(|a| a == toolhost_core::confirm::CALLER);
    let scoped = match &caller.access {
        toolhost_core::Access::Scopes(held) => approvers.iter().any(|a| held.contains(a)),
        toolhost_core::Access::All => false,
    };
    own || scoped
}

fn csrf(entry: &Entry, credential: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(b"toolhost-confirm-csrf\0");
    hash.update(entry.record.nonce.as_bytes());
    hash.update([0]);
    hash.update(credential.as_bytes());
    toolhost_core::hex(&hash.finalize())
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><style>{STYLE}</style></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>",
        title = escape(title)
    );
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}\
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.4rem;text-align:left;vertical-align:top}\
code,pre{font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-all}\
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:1rem}.note{color:#555}.problem{color:#a00;margin:.2rem 0}";

fn login_form(id: &str, why: Option<&str>) -> Response {
    let why = why
        .map(|w| format!("<p class=\"note\">{}</p>", escape(w)))
        .unwrap_or_default();
    page(
        StatusCode::UNAUTHORIZED,
        "Sign in to confirm",
        &format!(
            "{why}<p>Sign in as the person who asked, or as an approver, with your API key or token.</p>\
             <form method=\"post\" action=\"/confirm/{id}/login\"><label>Credential \
             <input type=\"password\" name=\"credential\" id=\"credential\" autocomplete=\"off\" required></label> \
             <button type=\"submit\" id=\"sign-in\">Sign in</button></form>",
            id = escape(id)
        ),
    )
}

async fn load(state: &State, id: &str) -> Result<Entry, Response> {
    let approvals = approvals(state).map_err(|r| *r)?;
    match approvals.store.get(id).await {
        Ok(Some(entry)) => Ok(entry),
        Ok(None) => Err(page(
            StatusCode::NOT_FOUND,
            "No such confirmation",
            "<p>This confirmation is unknown or has lapsed. Nothing was done.</p>",
        )),
        Err(_) => Err(page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Try again shortly",
            "<p>The confirmation store is not reachable. Nothing was done.</p>",
        )),
    }
}

const NOT_YOURS: &str =
    "<p>You are signed in, but you are neither the person who asked nor an approver of this tool.</p>";
const MAY_NOT_DECIDE: &str = "<p>You may not decide on this confirmation.</p>";

/// The confirmation `id` and the signed-in approver who may decide on it (with their
/// credential), or the page to answer instead: unknown, sign in, or not allowed (`refused`,
/// to one signed in who may not decide).
async fn decider(
    state: &State,
    id: &str,
    headers: &HeaderMap,
    peer: Option<SocketAddr>,
    refused: &str,
) -> Result<(Entry, Caller, String), Response> {
    let entry = load(state, id).await?;
    let (caller, credential) = match approver(state, headers, peer).await {
        Ok(Some(found)) => found,
        Ok(None) => return Err(login_form(id, None)),
        Err(why) => {
            return Err(page(
                StatusCode::FORBIDDEN,
                "Not allowed",
                &format!("<p>{}</p>", escape(&why)),
            ));
        }
    };
    if !may_decide(&entry, &caller, state.auth().enabled()) {
        return Err(page(StatusCode::FORBIDDEN, "Not allowed", refused));
    }
    Ok((entry, caller, credential))
}

/// `GET /confirm/{id}`: the quotation and the decision form, for a signed-in approver.
async fn show(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Peer(peer): Peer,
) -> Response {
    let (entry, _, credential) = match decider(&state, &id, &headers, peer, NOT_YOURS).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    page(
        StatusCode::OK,
        "Confirm this action",
        &quotation(&entry, &csrf(&entry, &credential), &BTreeMap::new()),
    )
}

/// The quotation and, while pending, the decision form (with the fields the human types,
/// `problems` beside them).
fn quotation(entry: &Entry, token: &str, problems: &BTreeMap<String, String>) -> String {
    let r = &entry.record;
    let mut rows = String::new();
    for p in &r.parameters {
        let value = match &p.value {
            serde_json::Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        let default = if p.default {
            " <span class=\"note\">(default)</span>"
        } else {
            ""
        };
        rows.push_str(&format!(
            "<tr><th><code>{}</code></th><td>{}</td><td><pre class=\"value\" data-name=\"{}\">{}</pre>{default}</td></tr>",
            escape(&p.name),
            escape(&p.description),
            escape(&p.name),
            escape(&value)
        ));
    }
    let upstreams = if r.upstreams.is_empty() {
        "this server".to_owned()
    } else {
        r.upstreams.join(", ")
    };
    let decision = match entry.status {
        Status::Pending => format!(
            "<form method=\"post\"><input type=\"hidden\" name=\"csrf\" value=\"{token}\">{human}\
             <button type=\"submit\" name=\"decision\" value=\"approve\" id=\"approve\">Approve</button>\
             <button type=\"submit\" name=\"decision\" value=\"decline\" id=\"decline\">Decline</button></form>\
             <p class=\"note\">Expires {}.</p>",
            super::rfc3339(entry.expires_ms),
            human = super::human::fields(&r.human, problems),
        ),
        other => format!("<p id=\"status\">This confirmation is {}.</p>", other.as_str()),
    };
    format!(
        "<p>An agent asks to run <strong id=\"tool\">{tool}</strong> version <code id=\"version\">{version}</code>, \
         reaching {upstreams}. Nothing happens unless you approve.</p><p>{description}</p>\
         <table><tr><th>Parameter</th><th>Meaning</th><th>Value</th></tr>{rows}</table>\
         <p class=\"note\">Asked by <code id=\"principal\">{principal}</code> over {protocol}. \
         Arguments digest <code>{digest}</code>.</p>{decision}",
        tool = escape(r.title.as_deref().unwrap_or(&r.tool)),
        version = escape(&r.version),
        upstreams = escape(&upstreams),
        description = escape(&r.description),
        principal = escape(&r.principal),
        protocol = escape(&r.protocol),
        digest = &r.args_sha256[..16.min(r.args_sha256.len())],
    )
}

#[derive(Debug, Deserialize)]
struct Login {
    credential: String,
}

/// `POST /confirm/{id}/login`: keeps the credential in the cookie, then shows the page.
async fn login(Extract(state): Extract<Arc<State>>, Path(id): Path<String>, body: axum::body::Bytes) -> Response {
    let Some(login) = form::<Login>(&body) else {
        return login_form(&id, Some("Send the form with a credential."));
    };
    let credential = login.credential.trim();
    let mut headers = HeaderMap::new();
    let valid = match HeaderValue::from_str(&format!("Bearer {credential}")) {
        Ok(value) => {
            headers.insert(header::AUTHORIZATION, value);
            state.auth().authenticate(&headers).await.is_ok()
        }
        Err(_) => false,
    };
    if !valid || credential.is_empty() {
        return login_form(&id, Some("That credential was not accepted."));
    }
    let secure = if state.config.https { "; Secure" } else { "" };
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, format!("/confirm/{id}"))]).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{COOKIE}={credential}; Path=/confirm/; HttpOnly; SameSite=Strict; Max-Age=3600{secure}"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[derive(Debug, Deserialize)]
struct Decision {
    decision: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /confirm/{id}`: the decision, with the page's CSRF token.
async fn decide(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Peer(peer): Peer,
    body: axum::body::Bytes,
) -> Response {
    let Some(decision) = form::<Decision>(&body) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Unknown decision",
            "<p>Choose approve or decline.</p>",
        );
    };
    let (entry, caller, credential) = match decider(&state, &id, &headers, peer, MAY_NOT_DECIDE).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    if decision.csrf != csrf(&entry, &credential) {
        return page(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "<p>This form is stale or did not come from this page; open the link again.</p>",
        );
    }
    let approve = match decision.decision.as_str() {
        "approve" => true,
        "decline" => false,
        _ => {
            return page(
                StatusCode::BAD_REQUEST,
                "Unknown decision",
                "<p>Choose approve or decline.</p>",
            );
        }
    };
    let Ok(approvals) = approvals(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let human = match typed(&state, &entry, approve, &body) {
        Ok(human) => human,
        Err(problems) => {
            return page(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Confirm this action",
                &quotation(&entry, &csrf(&entry, &credential), &problems),
            );
        }
    };
    match approvals.decide_with(&id, approve, &caller.id, &human).await {
        Ok(true) if approve => page(
            StatusCode::OK,
            "Approved",
            "<p id=\"outcome\">Approved. The agent's retry of this exact call will now run it, once.</p>",
        ),
        Ok(true) => page(
            StatusCode::OK,
            "Declined",
            "<p id=\"outcome\">Declined. Nothing was done, and this call will not run.</p>",
        ),
        Ok(false) => page(
            StatusCode::CONFLICT,
            "Already settled",
            "<p id=\"outcome\">This confirmation was already decided, or has lapsed. Nothing changed now.</p>",
        ),
        Err(_) => page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Try again shortly",
            "<p>The confirmation store is not reachable. Nothing was decided.</p>",
        ),
    }
}

/// What the approver typed for the version's `source: human` inputs (nothing to read on a
/// decline, or for a version without them); per field, what is wrong.
fn typed(
    state: &State,
    entry: &Entry,
    approve: bool,
    body: &[u8],
) -> Result<toolhost_core::confirm::HumanValues, BTreeMap<String, String>> {
    if !approve || entry.record.human.is_empty() {
        return Ok(toolhost_core::confirm::HumanValues::default());
    }
    let catalog = state.engine.catalog();
    let version = catalog
        .tools()
        .iter()
        .find(|t| t.id.to_string() == entry.record.tool_id)
        .and_then(|t| t.versions.iter().find(|v| v.semver.to_string() == entry.record.version));
    let Some(version) = version else {
        let gone = "this tool version is no longer served, so its call cannot run; nothing was decided";
        return Err(BTreeMap::from([(String::new(), gone.to_owned())]));
    };
    let pairs: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
    super::human::read(version, &pairs)
}

fn refuse(status: StatusCode, kind: &str, detail: &str) -> Response {
    ProblemResponse::new(status, kind, detail).into_response()
}

async fn load_json(state: &State, id: &str) -> Result<Entry, Response> {
    let approvals = approvals(state).map_err(|r| *r)?;
    match approvals.store.get(id).await {
        Ok(Some(entry)) => Ok(entry),
        Ok(None) => Err(refuse(
            StatusCode::NOT_FOUND,
            "unknown-confirmation",
            "no such confirmation, or it has lapsed",
        )),
        Err(_) => Err(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "store-unavailable",
            "the confirmation store is not reachable",
        )),
    }
}

/// `GET /cheq/{id}/result`: where the confirmation stands, for the caller who asked or an
/// approver. Never runs anything.
async fn result(Extract(state): Extract<Arc<State>>, Path(id): Path<String>, caller: Caller) -> Response {
    let entry = match load_json(&state, &id).await {
        Ok(entry) => entry,
        Err(response) => return response,
    };
    let auth_on = state.auth().enabled();
    if auth_on && caller.id != entry.record.principal && !may_decide(&entry, &caller, auth_on) {
        return refuse(
            StatusCode::NOT_FOUND,
            "unknown-confirmation",
            "no such confirmation, or it has lapsed",
        );
    }
    axum::Json(entry.status_json()).into_response()
}

/// `GET /cheq/{id}`: the CHEQ object, for a confirmation service signed in as an approver.
async fn cheq_object(Extract(state): Extract<Arc<State>>, Path(id): Path<String>, caller: Caller) -> Response {
    let entry = match load_json(&state, &id).await {
        Ok(entry) => entry,
        Err(response) => return response,
    };
    if !may_decide(&entry, &caller, state.auth().enabled()) {
        return refuse(
            StatusCode::FORBIDDEN,
            "not-an-approver",
            "only an approver of this call may read its CHEQ object",
        );
    }
    let operation = format!("{}/confirm/{}", state.config.public_base(), entry.record.id);
    let mut object = super::cheq::object(&entry.record, &operation);
    object["status"] = entry.status.as_str().into();
    axum::Json(object).into_response()
}

/// `POST /cheq/{id}?accept` or `?reject`: a confirmation service's decision.
async fn cheq_decide(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    caller: Caller,
) -> Response {
    let approve = match query.as_deref() {
        Some("accept") => true,
        Some("reject") => false,
        _ => return refuse(StatusCode::BAD_REQUEST, "bad-request", "post to ?accept or ?reject"),
    };
    let entry = match load_json(&state, &id).await {
        Ok(entry) => entry,
        Err(response) => return response,
    };
    let auth_on = state.auth().enabled();
    // With auth off nobody is authenticated as a service: only the page decides.
    if !auth_on || !may_decide(&entry, &caller, auth_on) {
        return refuse(
            StatusCode::FORBIDDEN,
            "not-an-approver",
            "only an authenticated approver of this call may decide it",
        );
    }
    let Ok(approvals) = approvals(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match approvals.decide(&id, approve, &caller.id).await {
        Ok(true) => match approvals.store.get(&id).await {
            Ok(Some(entry)) => axum::Json(entry.status_json()).into_response(),
            _ => StatusCode::NO_CONTENT.into_response(),
        },
        Ok(false) => refuse(
            StatusCode::CONFLICT,
            "already-decided",
            "this confirmation was already decided or has lapsed",
        ),
        Err(_) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "store-unavailable",
            "the confirmation store is not reachable",
        ),
    }
}
