//! toolhost-client: the executor side of tool protocols.
//!
//! - **Discovery** ([`Client::discover`]) from a URL, detecting N-ACT, OTC, WoA or MCP (or an MCP
//!   server run as a child process over stdio), into one model: [`Server`] and [`Tool`].
//! - **Validation before sending** ([`Tool::check`]): a model's proposed call checked locally,
//!   every problem listed per parameter in words the model can act on.
//! - **Invocation** ([`Client::call`]) through the tool's own protocol, with docs/protocols.md §7's
//!   retries ([`Retry`]), per-call timeouts and the tool's text for the model ([`ToolFailure`]).
//! - **Confirmations by a human** ([`confirm`]): a call the server holds is waited on and
//!   retried with the confirmation ([`Client::call_confirming`]).
//! - **SSRF guard** ([`guard`]), on by default, refusing before connecting.
//! - **Caching** of catalogs on disk with `ETag`/`Cache-Control` ([`Options::cache_dir`]).
//! - **Pinning** ([`lock`]) and **export** for LLMs ([`export`]).
//!
//! Names, descriptions and outputs from servers are untrusted ([`text`]). This crate never
//! depends on toolhost-server: an executor does not compile a server.

pub mod agent;
mod asking;
mod cache;
mod client;
pub mod confirm;
mod discover;
mod error;
pub mod export;
pub mod guard;
mod http;
pub mod lock;
mod mcp;
mod model;
pub mod nact;
mod otc;
mod problem;
mod raw;
mod relay;
pub mod resources;
mod retry;
mod schema;
pub mod search;
pub mod text;
mod validate;
mod woa;

pub use agent::Agent;
pub use cache::default_dir as default_cache_dir;
pub use client::{CallContext, Client, MAX_SESSIONS_PER_OWNER, Options, ServerHeaders};
pub use confirm::{Confirmation, Presented, Standing, Unconfirmed};
pub use discover::Limits;
pub use error::{Error, ToolFailure};
pub use export::{Exported, Format, NameMap};
pub use guard::{Lookup, Policy};
pub use http::retry_after;
pub use lock::{Finding, Lockfile};
pub use mcp::{ChildEnv, KEPT_ENV};
pub use model::{Kind, Output, Parameter, Protocol, Server, Source, Tool};
pub use nact::NactClient;
pub use raw::{Raw, RawReply};
pub use retry::Retry;
pub use schema::describe as describe_schema;
pub use toolhost_core::ParameterError;

/// `GET url` through the SSRF guard (`policy`), no cache, the body within `max_body` bytes: how
/// the CLI reads a document it is pointed at (an OpenAPI description, say). Anything but 2xx
/// is an [`Error::Status`].
pub async fn fetch_document(
    url: &url::Url,
    policy: Policy,
    timeout: std::time::Duration,
    max_body: usize,
) -> Result<Vec<u8>, Error> {
    let guard = guard::Guard::new(policy, std::sync::Arc::new(guard::SystemLookup));
    let http = http::Http::new(guard, None, timeout, max_body)?;
    let reply = http.get(url, http::Freshness::Revalidate, None).await?;
    if !(200..300).contains(&reply.status) {
        return Err(Error::Status {
            url: url.to_string(),
            status: reply.status,
            detail: reply.snippet(),
            retry_after: reply.retry_after(),
            retryable: None,
        });
    }
    Ok(reply.body)
}
