//! N-ACT (draft-rosenberg-aiproto-nact-00) as docs/protocols.md §3 reads it.
//!
//! | route | what |
//! |---|---|
//! | `GET {root}/tools` | latest signatures, paginated, `tag` and `q` filters (§6.1, §6.4) |
//! | `GET {root}/tools/{toolID}` | the current signature; `{toolID}` is the UUID or the name (§6.2) |
//! | `GET {root}/tools/{toolID}/versions` | every served version, newest first, paginated (§6.3) |
//! | `GET {root}/tools/{toolID}/versions/{n}` | one version's signature (§6.3) |
//! | `POST {root}/tools/{toolID}:invoke` | run the current version (§7) |
//! | `POST {root}/tools/{toolID}/versions/{n}:invoke` | run version `n` (§7) |
//!
//! A signature is serialized once per catalog, on its first request (see [`Signatures`]); a
//! listing copies the rendered bytes of its page only.

mod convert;
mod cursor;
mod error;
mod handlers;
pub mod projection;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::routing::get;
use serde_json::value::RawValue;
use toolhost_core::{Catalog, Tool, Version};

use crate::State;
use crate::view::View;

/// The N-ACT routes under `prefix` (the draft's `{platform-root}`).
pub fn routes(prefix: &str) -> Router<Arc<State>> {
    let prefix = prefix.trim_end_matches('/');
    Router::new()
        .route(&format!("{prefix}/tools"), get(handlers::list))
        .route(
            &format!("{prefix}/tools/{{tool}}"),
            get(handlers::signature).post(handlers::invoke_current),
        )
        .route(&format!("{prefix}/tools/{{tool}}/versions"), get(handlers::versions))
        .route(
            &format!("{prefix}/tools/{{tool}}/versions/{{version}}"),
            get(handlers::version).post(handlers::invoke_version),
        )
}

/// The N-ACT rendering of one catalog: each served signature, serialized on its first request
/// and kept, with the projection it shows. Rendered on demand rather than all at start: a large
/// catalog's signatures and projections were most of what it held, and most are never asked
/// for (issue #42.1).
#[derive(Debug)]
pub struct Signatures {
    /// By tool name: one slot per version (index = number - 1).
    by_tool: HashMap<String, Box<[OnceLock<Entry>]>>,
}

/// One version on N-ACT.
#[derive(Debug)]
pub enum Entry {
    /// Not served.
    Retired,
    /// Served, but not over N-ACT, for this reason ([`projection::project`]).
    Off(String),
    /// On N-ACT: its signature, and what it shows.
    On {
        signature: Box<RawValue>,
        shown: projection::Shown,
    },
}

impl crate::view::Kept for Signatures {
    fn cache(_: &crate::config::Config) -> crate::view::Cached<Self> {
        crate::view::Cached::on_demand()
    }
}

impl View for Signatures {
    fn build(catalog: &Catalog) -> Self {
        let by_tool = catalog
            .tools()
            .iter()
            .map(|tool| {
                (
                    tool.name.clone(),
                    tool.versions.iter().map(|_| OnceLock::new()).collect(),
                )
            })
            .collect();
        Self { by_tool }
    }
}

impl Signatures {
    /// The signature of `tool` at version `number`, as N-ACT serves it.
    pub(crate) fn get(&self, tool: &Tool, number: u32) -> Option<&RawValue> {
        match self.entry(tool, number)? {
            Entry::On { signature, .. } => Some(signature),
            Entry::Retired | Entry::Off(_) => None,
        }
    }

    /// What N-ACT has of `tool` (of the catalog this view was built from) at version `number`.
    pub fn entry(&self, tool: &Tool, number: u32) -> Option<&Entry> {
        let index = number.checked_sub(1)? as usize;
        let version = tool.versions.get(index)?;
        let slot = self.by_tool.get(&tool.name)?.get(index)?;
        Some(slot.get_or_init(|| render(tool, version)))
    }

    /// Whether `tool` at version `number` is on N-ACT, without rendering its signature: what
    /// a search asks of every candidate.
    pub(crate) fn shows(&self, tool: &Tool, number: u32) -> bool {
        let Some(version) = number.checked_sub(1).and_then(|i| tool.versions.get(i as usize)) else {
            return false;
        };
        !version.retired && projection::refusal(version).is_none()
    }
}

/// What N-ACT shows of `version` of `tool`.
fn render(tool: &Tool, version: &Version) -> Entry {
    if version.retired {
        return Entry::Retired;
    }
    match projection::project(version) {
        Err(reason) => Entry::Off(reason),
        Ok(shown) => match serde_json::value::to_raw_value(&convert::signature(tool, version, &shown)) {
            Ok(signature) => Entry::On { signature, shown },
            Err(e) => Entry::Off(format!("its signature did not serialize: {e}")),
        },
    }
}
