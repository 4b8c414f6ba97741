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

/// The N-ACT rendering of one catalog: every served signature, serialized once.
#[derive(Debug)]
pub struct Signatures {
    /// By tool name: one signature per version (index = number - 1); `None` for retired ones.
    by_tool: HashMap<String, Vec<Option<Box<RawValue>>>>,
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
                        // A version with a json input is not N-ACT's (§6.1 scalars): absent here.
                        (!v.retired && v.scalar_inputs_only())
                            .then(|| convert::signature(tool, v))
                            .and_then(|s| serde_json::value::to_raw_value(&s).ok())
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
        self.by_tool.get(tool)?.get(number.checked_sub(1)? as usize)?.as_deref()
    }
}
