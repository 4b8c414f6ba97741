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
//! Signatures are serialized once per catalog (see [`Signatures`]); a listing copies the pre-rendered
//! bytes of its page only.

mod convert;
mod cursor;
mod error;
mod handlers;
pub mod projection;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use serde_json::value::RawValue;
use toolhost_core::Catalog;

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

/// The N-ACT rendering of one catalog: every served signature, serialized once, with the
/// projection it shows.
#[derive(Debug)]
pub struct Signatures {
    /// By tool name: one entry per version (index = number - 1).
    by_tool: HashMap<String, Vec<Entry>>,
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
                let rendered = tool
                    .versions
                    .iter()
                    .map(|v| {
                        if v.retired {
                            return Entry::Retired;
                        }
                        match projection::project(v) {
                            Err(reason) => Entry::Off(reason),
                            Ok(shown) => match serde_json::value::to_raw_value(&convert::signature(tool, v, &shown)) {
                                Ok(signature) => Entry::On { signature, shown },
                                Err(e) => Entry::Off(format!("its signature did not serialize: {e}")),
                            },
                        }
                    })
                    .collect();
                (tool.name.clone(), rendered)
            })
            .collect();
        Self { by_tool }
    }
}

impl Signatures {
    /// The signature of `tool` at version `number`, as N-ACT serves it.
    pub(crate) fn get(&self, tool: &str, number: u32) -> Option<&RawValue> {
        match self.entry(tool, number)? {
            Entry::On { signature, .. } => Some(signature),
            Entry::Retired | Entry::Off(_) => None,
        }
    }

    /// What N-ACT has of `tool` at version `number`.
    pub fn entry(&self, tool: &str, number: u32) -> Option<&Entry> {
        self.by_tool.get(tool)?.get(number.checked_sub(1)? as usize)
    }
}
