//! Discovery: which protocol a server speaks, and its tools in the one model.
//!
//! Given a URL and no protocol, the client tries, in order (docs/protocols.md §7):
//!
//! 1. a URL ending in `/.well-known/woa.json` is a WoA document;
//! 2. `GET {url}/tools`: an N-ACT page (`items` + `paging`) or an OTC listing (`tools`, with
//!    `$schema` or definitions that look like OTC's, or a bare array of definitions as
//!    LangChain's tool server sends). A URL that ends in `/tools` is first asked itself, as the
//!    enumeration endpoint N-ACT §5.2 hands the designer, its parent being the root;
//! 3. MCP streamable HTTP at `{url}` (an `initialize` through rmcp);
//! 4. at a server's root only, `GET /.well-known/woa.json`.
//!
//! The first that answers in its protocol's shape wins; if none does, the error lists how each
//! failed. A refusal by the SSRF guard stops at once: every probe would be refused alike.

use std::time::Duration;

use url::Url;

use crate::client::Client;
use crate::error::Error;
use crate::http::{Freshness, Http};
use crate::model::{Protocol, Server, Source, Tool};
use crate::text::shown_url;
use crate::{agent, nact, otc, woa};

/// Bounds on what one discovery reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Listing pages followed at most (N-ACT, MCP).
    pub max_pages: usize,
    /// Tools kept at most per server.
    pub max_tools: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_pages: nact::MAX_PAGES,
            max_tools: 10_000,
        }
    }
}

/// What a protocol module needs for one operation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub http: &'a Http,
    pub limits: Limits,
    pub freshness: Freshness,
    pub timeout: Duration,
    /// A bearer token for this call only (`CallContext::bearer`).
    pub bearer: Option<&'a toolhost_core::Secret>,
}

/// Tools found, and definitions skipped with the reason.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub tools: Vec<Tool>,
    pub skipped: Vec<String>,
}

/// Discovers `source`, over `protocol` when given, else by probing. An agent's URL (what
/// `GET /agents` advertises) lists the agent's tools at its endpoint of `protocol` (N-ACT when
/// not given), with the agent (`crate::agent`).
pub(crate) async fn discover(
    client: &Client,
    source: &Source,
    protocol: Option<Protocol>,
    freshness: Freshness,
    bearer: Option<&toolhost_core::Secret>,
) -> Result<Server, Error> {
    if let Source::Url(url) = source
        && agent::may_be_design(url)
    {
        let mut ctx = client.ctx(freshness);
        ctx.bearer = bearer;
        if let Some(agent) = agent::design(&ctx, url).await? {
            let protocol = protocol.unwrap_or(Protocol::Nact);
            let endpoint = Source::Url(agent.endpoint(protocol)?.clone());
            let mut server = discover_at(client, &endpoint, Some(protocol), freshness, bearer).await?;
            server.source = source.clone();
            server.agent = Some(agent);
            return Ok(server);
        }
    }
    discover_at(client, source, protocol, freshness, bearer).await
}

/// Discovers `source` as a tool server, over `protocol` when given, else by probing.
async fn discover_at(
    client: &Client,
    source: &Source,
    protocol: Option<Protocol>,
    freshness: Freshness,
    bearer: Option<&toolhost_core::Secret>,
) -> Result<Server, Error> {
    let mut ctx = client.ctx(freshness);
    ctx.bearer = bearer;
    let url = match source {
        Source::Command { .. } => {
            if let Some(p) = protocol.filter(|p| *p != Protocol::Mcp) {
                return Err(Error::Setup(format!(
                    "a `stdio:` command speaks MCP, not {p}; leave out --protocol or use --protocol mcp"
                )));
            }
            let found = client.mcp_tools(source, ctx.bearer).await?;
            return Ok(server(source, Protocol::Mcp, source.clone(), found));
        }
        Source::Url(url) => url,
    };
    match protocol {
        Some(Protocol::Nact) => {
            let (root, found) = nact::discover(&ctx, url, None).await?;
            Ok(server(source, Protocol::Nact, Source::Url(root), found))
        }
        Some(Protocol::Otc) => Ok(server(
            source,
            Protocol::Otc,
            source.clone(),
            otc::discover(&ctx, url, None).await?,
        )),
        Some(Protocol::Woa) => {
            let document = woa::document_url(url)?;
            let found = woa::discover(&ctx, &document).await?;
            Ok(server(source, Protocol::Woa, Source::Url(document), found))
        }
        Some(Protocol::Mcp) => Ok(server(
            source,
            Protocol::Mcp,
            source.clone(),
            client.mcp_tools(source, ctx.bearer).await?,
        )),
        None => probe(client, &ctx, source, url).await,
    }
}

async fn probe(client: &Client, ctx: &Ctx<'_>, source: &Source, url: &Url) -> Result<Server, Error> {
    if url.path().ends_with(toolhost_wire::woa::WELL_KNOWN_PATH) {
        let found = woa::discover(ctx, url).await?;
        return Ok(server(source, Protocol::Woa, source.clone(), found));
    }
    let mut tried = Vec::new();
    // A server that wants credentials says so on every protocol it speaks: that is the answer,
    // not "no tool protocol answered" (issue #12.10).
    let mut refused_auth: Option<Error> = None;
    let mut note = |what: String, e: Error, tried: &mut Vec<String>| {
        if let Error::Status { status: 401 | 403, .. } = e {
            refused_auth.get_or_insert(e);
        } else {
            tried.push(format!("{what}: {}", cause(&e)));
        }
    };
    // The URL's listing, and first the URL itself when it may be the listing (`…/tools`).
    let mut listings = Vec::with_capacity(2);
    listings.extend(nact::parent_of_listing(url).map(|parent| (url.clone(), parent)));
    listings.push((nact::join(url, "tools")?, url.clone()));
    for (listing, root) in listings {
        match ctx.http.get(&listing, ctx.freshness, ctx.bearer).await {
            Err(e @ Error::Refused { .. }) => return Err(e),
            Err(e) => note(format!("N-ACT/OTC at {}", shown_url(listing.as_str())), e, &mut tried),
            Ok(reply) if reply.status == 200 => match reply.json() {
                Ok(body) if nact::is_page(&body) => {
                    let (root, found) = nact::discover(ctx, &root, Some(body)).await?;
                    return Ok(server(source, Protocol::Nact, Source::Url(root), found));
                }
                Ok(body) if otc::is_listing(&body, true) => {
                    let found = otc::discover(ctx, &root, Some(body)).await?;
                    return Ok(server(source, Protocol::Otc, Source::Url(root), found));
                }
                Ok(_) => tried.push(format!(
                    "N-ACT/OTC at {}: JSON that is neither a page nor a listing",
                    shown_url(listing.as_str())
                )),
                Err(e) => tried.push(format!("N-ACT/OTC at {}: {e}", shown_url(listing.as_str()))),
            },
            Ok(reply) if matches!(reply.status, 401 | 403) => {
                note(String::new(), nact::status_error(&reply, None), &mut tried);
            }
            Ok(reply) => tried.push(format!(
                "N-ACT/OTC at {}: HTTP {}",
                shown_url(listing.as_str()),
                reply.status
            )),
        }
    }
    match client.mcp_tools(source, ctx.bearer).await {
        Ok(found) => return Ok(server(source, Protocol::Mcp, source.clone(), found)),
        Err(e @ Error::Refused { .. }) => return Err(e),
        Err(e) => note(format!("MCP at {}", shown_url(url.as_str())), e, &mut tried),
    }
    if matches!(url.path(), "" | "/") {
        let document = woa::document_url(url)?;
        match woa::discover(ctx, &document).await {
            Ok(found) => return Ok(server(source, Protocol::Woa, Source::Url(document), found)),
            Err(e) => note(format!("WoA at {}", shown_url(document.as_str())), e, &mut tried),
        }
    }
    if let Some(refused) = refused_auth {
        return Err(refused);
    }
    Err(Error::NotFound {
        url: url.to_string(),
        tried: tried.join("; "),
    })
}

/// Why one protocol did not answer, without the address (the list says it once).
fn cause(e: &Error) -> String {
    match e {
        Error::Status { status, .. } => format!("HTTP {status}"),
        Error::Transport { message, .. } => message.clone(),
        Error::Mcp { message, .. } => message.clone(),
        Error::Protocol { detail, .. } => detail.clone(),
        other => other.to_string(),
    }
}

fn server(source: &Source, protocol: Protocol, endpoint: Source, mut found: Found) -> Server {
    found.tools.sort_by(|a, b| a.name.cmp(&b.name));
    Server {
        source: source.clone(),
        protocol,
        endpoint,
        tools: found.tools,
        skipped: found.skipped,
        agent: None,
    }
}
