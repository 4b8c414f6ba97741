//! N-ACT (draft-rosenberg-aiproto-nact-00) as PROTOCOLS.md §3 reads it.
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
//! Signatures are serialized once per catalog (see [`View`]); a listing copies the pre-rendered
//! bytes of its page only.

mod convert;
mod cursor;
mod error;
mod handlers;

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use axum::Router;
use axum::routing::get;
use serde_json::value::RawValue;
use toolhost_core::{Catalog, Engine};

use crate::State;

/// The N-ACT routes under `prefix` (the draft's `{platform-root}`).
pub fn routes(prefix: &str) -> Router<Arc<State>> {
    let prefix = prefix.trim_end_matches('/');
    Router::new()
        .route(&format!("{prefix}/tools"), get(handlers::list))
        .route(&format!("{prefix}/tools/{{tool}}"), get(handlers::signature).post(handlers::invoke_current))
        .route(&format!("{prefix}/tools/{{tool}}/versions"), get(handlers::versions))
        .route(&format!("{prefix}/tools/{{tool}}/versions/{{version}}"), get(handlers::version).post(handlers::invoke_version))
}

/// The N-ACT rendering of one catalog: every served signature, serialized once.
#[derive(Debug)]
pub struct View {
    catalog: Arc<Catalog>,
    /// By tool name: one signature per version (index = number - 1); `None` for retired ones.
    signatures: HashMap<String, Vec<Option<Box<RawValue>>>>,
}

impl View {
    fn build(catalog: Arc<Catalog>) -> Self {
        let signatures = catalog
            .tools()
            .iter()
            .map(|tool| {
                let rendered = tool
                    .versions
                    .iter()
                    .map(|v| (!v.retired).then(|| convert::signature(tool, v)).and_then(|s| serde_json::value::to_raw_value(&s).ok()))
                    .collect();
                (tool.name.clone(), rendered)
            })
            .collect();
        Self { catalog, signatures }
    }

    fn signature(&self, tool: &str, number: u32) -> Option<&RawValue> {
        self.signatures.get(tool)?.get(number.checked_sub(1)? as usize)?.as_deref()
    }
}

/// The current [`View`], rebuilt lazily when the engine starts serving a new catalog.
#[derive(Debug)]
pub(crate) struct Views {
    current: ArcSwap<View>,
}

impl Views {
    pub(crate) fn new(engine: &Engine) -> Self {
        Self { current: ArcSwap::from_pointee(View::build(engine.catalog())) }
    }

    pub(crate) fn get(&self, engine: &Engine) -> Arc<View> {
        let view = self.current.load_full();
        let catalog = engine.catalog();
        if Arc::ptr_eq(&view.catalog, &catalog) {
            return view;
        }
        let fresh = Arc::new(View::build(catalog));
        self.current.store(Arc::clone(&fresh));
        fresh
    }
}
