//! MCP resources (docs/protocols.md §6): what a catalog serves besides calls.
//!
//! - The documents catalog files declare under `resources:` (text or base64 bytes at a `uri`,
//!   or at every URI a `uri_template` matches), listed to everyone.
//! - `toolhost://tools/{name}`: each tool the caller may see, as its MCP definition (JSON:
//!   description, input and output schemas, annotations: its signature and documentation).
//! - `toolhost://agents/{name}`: each agent the caller may use, as its procedure (Markdown).
//! - `toolhost://upstream/{toolkit}/{upstream URI}`: a federated upstream's resources and
//!   templates its toolkit imported (pinned; a withdrawn one is left out), read from the
//!   upstream at each `resources/read`; an upstream URI not imported is not served.
//!
//! `resources/read` of a URI nobody serves (or one the caller may not see) is `-32602` with
//! `data.uri` (SEP-2164), so a hidden tool is as unknown here as on `tools/call`.

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate,
};
use toolhost_core::catalog::federated::{self, Federated};
use toolhost_core::catalog::resource::{self, Address, Content};
use toolhost_core::{CallContext, Catalog};

/// Where the server's resources for tools are: `toolhost://tools/{name}`.
pub const TOOLS: &str = "toolhost://tools/";
/// Where the server's resources for agents are: `toolhost://agents/{name}`.
pub const AGENTS: &str = "toolhost://agents/";
/// How long a client may keep a list or a read (SEP-2549 `ttlMs`): catalogs change on reload,
/// which a minute's staleness covers; `notifications/*/list_changed` are not sent.
pub const TTL_MS: u64 = 60_000;

/// `resources/list`: the declared documents, then the tools and agents `caller` may see.
pub fn list(catalog: &Catalog, caller: &CallContext) -> ListResourcesResult {
    let mut out: Vec<Resource> = catalog
        .resources()
        .iter()
        .filter_map(|r| match &r.address {
            Address::Uri(uri) => Some(declared(uri, r)),
            Address::Template(_) => None,
        })
        .collect();
    out.extend(federated(catalog, caller).filter_map(|r| match &r.address {
        Address::Uri(uri) => {
            let mut raw = Resource::new(uri.clone(), r.name.clone());
            raw.title = r.title.clone();
            raw.description = r.description.clone();
            raw.mime_type = r.mime_type.clone();
            Some(raw)
        }
        Address::Template(_) => None,
    }));
    out.extend(catalog.tools().iter().filter(|t| t.listed_to(caller)).map(|t| {
        Resource::new(format!("{TOOLS}{}", t.name), t.name.clone())
            .with_description(t.latest().description.clone())
            .with_mime_type("application/json")
    }));
    out.extend(catalog.agents().iter().filter(|a| a.allows(&caller.access)).map(|a| {
        Resource::new(format!("{AGENTS}{}", a.name), a.name.clone())
            .with_description(a.description.clone())
            .with_mime_type("text/markdown")
            .with_size(a.procedure.len() as u64)
    }));
    let mut result = ListResourcesResult::with_all_items(out);
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(CacheScope::Private);
    result
}

/// The federated resources `caller` may see and the upstream has not withdrawn.
fn federated<'c>(catalog: &'c Catalog, caller: &'c CallContext) -> impl Iterator<Item = &'c Federated> + 'c {
    catalog
        .federated()
        .iter()
        .filter(|r| r.allows(&caller.access) && r.is_served())
}

fn declared(uri: &str, r: &resource::Resource) -> Resource {
    let mut raw = Resource::new(uri, r.name.clone()).with_mime_type(r.mime_type.clone());
    raw.title = r.title.clone();
    raw.description = r.description.clone();
    raw.size = Some(match &r.content {
        Content::Text(t) => t.len() as u64,
        Content::Blob(b) => b.len() as u64,
    });
    raw
}

/// `resources/templates/list`: the declared templates, the federated ones `caller` may see,
/// then the server's own two.
pub fn templates(catalog: &Catalog, caller: &CallContext) -> ListResourceTemplatesResult {
    let mut out: Vec<ResourceTemplate> = catalog
        .resources()
        .iter()
        .filter_map(|r| match &r.address {
            Address::Template(t) => {
                let mut raw = ResourceTemplate::new(t.clone(), r.name.clone()).with_mime_type(r.mime_type.clone());
                raw.title = r.title.clone();
                raw.description = r.description.clone();
                Some(raw)
            }
            Address::Uri(_) => None,
        })
        .collect();
    out.extend(federated(catalog, caller).filter_map(|r| match &r.address {
        Address::Template(t) => {
            let mut raw = ResourceTemplate::new(t.clone(), r.name.clone());
            raw.title = r.title.clone();
            raw.description = r.description.clone();
            raw.mime_type = r.mime_type.clone();
            Some(raw)
        }
        Address::Uri(_) => None,
    }));
    let own = [
        (
            TOOLS,
            "tool",
            "A tool's definition: description, input and output schemas, annotations.",
            "application/json",
        ),
        (AGENTS, "agent", "An agent's operating procedure.", "text/markdown"),
    ];
    out.extend(own.into_iter().map(|(base, name, description, mime)| {
        ResourceTemplate::new(format!("{base}{{name}}"), name)
            .with_description(description)
            .with_mime_type(mime)
    }));
    let mut result = ListResourceTemplatesResult::with_all_items(out);
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(CacheScope::Private);
    result
}

/// The contents at `uri`, as `resources/read` and a prompt's attachments give them; `None`
/// when nothing the caller may see is there.
pub fn contents(catalog: &Catalog, caller: &CallContext, uri: &str) -> Option<(ResourceContents, CacheScope)> {
    if let Some(name) = uri.strip_prefix(TOOLS) {
        let tool = catalog.find(name).filter(|t| t.name == name && t.listed_to(caller))?;
        let definition = super::convert::tool(tool, tool.latest());
        let text = serde_json::to_string_pretty(&definition).unwrap_or_default();
        let contents = ResourceContents::text(text, uri).with_mime_type("application/json");
        return Some((contents, CacheScope::Private));
    }
    if let Some(name) = uri.strip_prefix(AGENTS) {
        let agent = catalog.agent(name).filter(|a| a.allows(&caller.access))?;
        let contents = ResourceContents::text(agent.procedure.clone(), uri).with_mime_type("text/markdown");
        return Some((contents, CacheScope::Private));
    }
    let (declared, content) = catalog.read_resource(uri)?;
    let contents = match content {
        Content::Text(text) => ResourceContents::text(text, uri),
        Content::Blob(bytes) => ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri),
    };
    Some((contents.with_mime_type(declared.mime_type.clone()), CacheScope::Public))
}

/// What a subscription compares across reloads at `uri`: the contents of a catalog resource;
/// for a federated one (whose contents are the upstream's, read only when asked), what the
/// catalog says of it (its pin included) and whether it is served, so a re-import or a
/// withdrawal is an update. Never sent to a client.
pub fn seen(catalog: &Catalog, caller: &CallContext, uri: &str) -> Option<ResourceContents> {
    if uri.starts_with(federated::PREFIX) {
        let (found, _) = catalog.find_federated(uri).filter(|(r, _)| r.allows(&caller.access))?;
        let described = format!(
            "{:?} {:?} {:?} {:?} {}",
            found.upstream,
            found.description,
            found.mime_type,
            found.pin,
            found.is_served()
        );
        return Some(ResourceContents::text(described, uri));
    }
    contents(catalog, caller, uri).map(|(c, _)| c)
}

/// The error for a URI nothing is served at (SEP-2164): `-32602` with the URI in `data`.
pub fn not_found(uri: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no resource at `{uri}`; resources/list and resources/templates/list say what is served"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// `resources/read`: a federated resource from its upstream, anything else from the catalog.
pub async fn read(catalog: &Catalog, caller: &CallContext, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri.starts_with(federated::PREFIX) {
        let (found, upstream_uri) = catalog
            .find_federated(uri)
            .filter(|(r, _)| r.allows(&caller.access))
            .ok_or_else(|| not_found(uri))?;
        let read = found
            .reader
            .read(&upstream_uri)
            .await
            .map_err(|failure| super::error::resource_failure(uri, &failure))?;
        let contents = read
            .into_iter()
            .map(|(mime_type, content)| {
                let contents = match content {
                    Content::Text(text) => ResourceContents::text(text, uri),
                    Content::Blob(bytes) => {
                        ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
                    }
                };
                match mime_type.or_else(|| found.mime_type.clone()) {
                    Some(mime) => contents.with_mime_type(mime),
                    None => contents,
                }
            })
            .collect();
        let mut result = ReadResourceResult::new(contents);
        result.ttl_ms = Some(TTL_MS);
        result.cache_scope = Some(CacheScope::Private);
        return Ok(result);
    }
    let (contents, scope) = contents(catalog, caller, uri).ok_or_else(|| not_found(uri))?;
    Ok(answer(contents, scope))
}

/// A `resources/read` answer of `contents`, kept for [`TTL_MS`] where `scope` says.
pub fn answer(contents: ResourceContents, scope: CacheScope) -> ReadResourceResult {
    let mut result = ReadResourceResult::new(vec![contents]);
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(scope);
    result
}
