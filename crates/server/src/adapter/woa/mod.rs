//! Web of Agents (draft-gaikwad-woa-00) as docs/protocols.md §5 reads it.
//!
//! | route | what |
//! |---|---|
//! | `GET /.well-known/woa.json` | the WoA document, `application/woa+json` (draft §4, §9.1) |
//! | `POST {prefix}/agents/{agent_id}/invoke` | run an agent with an invocation envelope (draft §5.2) |
//!
//! **One agent per tool.** A WoA agent is "a logical AI powered capability" with one id, one
//! input schema and one output schema (§4.1); a catalog tool is exactly that, so each tool is
//! one agent whose `id` is the tool name (tool names are a subset of the draft's `agent-id`
//! ABNF). Only the latest served version is listed, since an agent carries one `version` and
//! one pair of schemas; the envelope's `version` extension pins an older one (whose output is
//! that version's, which may lack outputs the listed `outputs` requires). A toolkit is not
//! an agent (its tools take different inputs, and WoA's `operations` all share one transport
//! endpoint and would hide the tools from the MCP transport, which names tools, not
//! operations): the toolkit is the first of an agent's `capabilities`, followed by its tags.
//! Agents declare no `operations`, so each has the draft's single unnamed operation, which
//! an envelope selects by leaving `operation` out or by naming it `default` (§5.1).
//!
//! The document embeds the public URL from configuration, never from the request's `Host`
//! header (a forged `Host` must not redirect clients, draft §8.2). It is rendered once per
//! catalog ([`Document`]), with its `ETag` and `Last-Modified`; a request copies nothing.
//!
//! Invocation: decode the envelope (400 for a malformed one, 415 for a body that is not
//! JSON), check it against the URL (`convert::call`), make one [`Engine::invoke`] call, and
//! answer with the output object itself. Errors are problem documents with the statuses of
//! N-ACT (docs/protocols.md §3; see `error.rs`).
//!
//! [`Engine::invoke`]: toolhost_core::Engine::invoke

mod convert;

/// The WoA agent of a tool, as the document lists it.
pub(crate) fn agent(tool: &toolhost_core::Tool) -> toolhost_wire::woa::Agent {
    convert::agent(tool)
}
mod error;
mod handlers;

use std::sync::Arc;
use std::time::SystemTime;

use axum::Router;
use axum::body::Bytes;
use axum::http::HeaderValue;
use axum::routing::{get, post};
use toolhost_core::{CallContext, Catalog};
use toolhost_wire::woa as wire;

use crate::view::Cached;
use crate::{Config, State};

/// The WoA routes: the well-known document and invocation under `prefix` (e.g. `/woa`).
pub fn routes(prefix: &str) -> Router<Arc<State>> {
    Router::new()
        .route(wire::WELL_KNOWN_PATH, get(handlers::document))
        .route(&invoke_path(prefix, "{agent_id}"), post(handlers::invoke))
}

/// The invocation path under `prefix`, with `agent` where the agent id goes.
fn invoke_path(prefix: &str, agent: &str) -> String {
    format!("{}/agents/{agent}/invoke", prefix.trim_end_matches('/'))
}

/// The WoA document of one catalog, rendered once with its validators.
#[derive(Debug)]
pub struct Document {
    /// The serialized document.
    body: Bytes,
    /// A strong tag of `body`.
    etag: HeaderValue,
    /// When this rendering was built, as an IMF-fixdate.
    last_modified: HeaderValue,
    /// The same instant, for `If-Modified-Since`.
    built: SystemTime,
    /// Where the server is reached, to render documents for callers who see fewer agents.
    site: Site,
    /// The documents of callers who see other agents than the shared one, by the catalog
    /// indexes of the tools listed to them (all the document depends on), rendered on first
    /// request.
    restricted: crate::view::Restricted<Vec<usize>, Document>,
}

impl Document {
    fn build(catalog: &Catalog, site: &Site) -> Self {
        Self::render(catalog, site, &CallContext::default_all(), SystemTime::now())
    }

    /// The document as `access` sees it. `built` is the catalog's load time, so every caller's
    /// rendering of one catalog has the same `Last-Modified`.
    fn render(catalog: &Catalog, site: &Site, caller: &CallContext, built: SystemTime) -> Self {
        // Whole seconds: Last-Modified has no finer resolution, and If-Modified-Since compares
        // against what we sent.
        let built = httpdate::HttpDate::from(built);
        let mut body = Vec::new();
        if let Err(e) = convert::write(&mut body, catalog, site, caller) {
            tracing::error!(error = %e, "the WoA document did not serialize");
            body.clear();
        }
        let etag = crate::http::cache::etag(&body);
        Self {
            etag: HeaderValue::from_str(&etag).unwrap_or_else(|_| HeaderValue::from_static("\"\"")),
            last_modified: HeaderValue::from_str(&built.to_string())
                .unwrap_or_else(|_| HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT")),
            built: built.into(),
            body: body.into(),
            site: site.clone(),
            restricted: crate::view::Restricted::default(),
        }
    }
}

/// What the document says beside the catalog: where this server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    /// The public base URL, without a trailing `/`.
    base: String,
    /// The REST `invoke_path` template.
    invoke_path: String,
    /// The MCP endpoint URL.
    mcp_server: String,
    /// The MCP `tool_namespace`.
    tool_namespace: String,
}

impl Site {
    fn new(config: &Config) -> Self {
        let base = config.public_base();
        Self {
            invoke_path: invoke_path(&config.woa_prefix, wire::AGENT_ID_PLACEHOLDER),
            mcp_server: format!("{base}{}", config.mcp.path.trim_end_matches('/')),
            tool_namespace: config.server_name.clone(),
            base,
        }
    }
}

/// The document of the engine's catalog for `config`, built on its first request (a large
/// catalog served over other protocols holds no WoA rendering; issue #42.1) and again after a
/// reload.
impl crate::view::Kept for Document {
    fn cache(config: &Config) -> Cached<Self> {
        let site = Site::new(config);
        Cached::lazy(move |catalog| Document::build(catalog, &site))
    }
}

/// Logs, once at start, where the document is and whether clients on the open Internet may
/// use it: the draft requires HTTPS there (§4.3.1, §8.1).
/// Refuses to advertise the WoA REST transport as plain http off loopback (draft §4.3.1:
/// `base` MUST be https; §8.1: REST MUST use HTTPS), issues #22.6 and #31.3: a non-loopback
/// listen address without TLS and without a public URL, and a public URL `http://` whose host
/// is not loopback. Loopback (local development), TLS, an https public URL and the explicit
/// override `--allow-http-public-url` (`allow_http_public_url = true`) are fine.
pub fn check_transport(config: &Config) -> Result<(), String> {
    const OVERRIDE: &str = "to serve plain http on purpose (a private network), pass --allow-http-public-url (`allow_http_public_url = true`)";
    if config.allow_http_public_url {
        return Ok(());
    }
    match &config.public_url {
        Some(url) if url.starts_with("http://") && !loopback_url(url) => Err(format!(
            "--public-url {url} is plain http: the WoA document's `rest.base` MUST be https (draft §4.3.1, §8.1), and clients would send their calls in the clear. Give the https URL clients reach (TLS ended by a proxy in front, or --tls-cert and --tls-key here); {OVERRIDE}"
        )),
        Some(_) => Ok(()),
        None if config.https || config.listen.ip().is_loopback() => Ok(()),
        None => Err(format!(
            "listening on {} without TLS: the WoA document would advertise plain http to the network, and WoA REST must use https (draft §8.1). Pass --public-url https://your.host (TLS ended by a proxy in front), or --tls-cert and --tls-key to serve https here; {OVERRIDE}",
            config.listen
        )),
    }
}

/// Whether `url`'s host is this machine: `localhost` (or a name under it) or a loopback address.
fn loopback_url(url: &str) -> bool {
    let Some(host) = url
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_ascii_lowercase))
    else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.ends_with(".localhost")
        || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

pub fn announce(config: &Config) {
    let base = config.public_base();
    // Clients look for the document at the origin's well-known path, whatever the base's path
    // (RFC 8615): a proxy that puts toolhost under a path must route that one to it too.
    let origin = base
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| Some(format!("{}://{}", u.scheme_str()?, u.authority()?)))
        .unwrap_or_else(|| base.clone());
    let url = format!("{origin}{}", wire::WELL_KNOWN_PATH);
    if base.starts_with("https://") {
        tracing::info!(%url, "WoA document");
    } else {
        tracing::warn!(
            %url,
            "the WoA document advertises a plain-http URL; WoA requires https on the open Internet (draft §8.1): fine for local use, else set --public-url (TOOLHOST_PUBLIC_URL, public_url) to the https URL clients reach"
        );
    }
}
