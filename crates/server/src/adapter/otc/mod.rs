//! Open Tool Calling 1.0 (`specs/otc-1.0/`) as PROTOCOLS.md §4 reads it.
//!
//! | route | what |
//! |---|---|
//! | `GET {root}/health` | 200 while the server can take calls |
//! | `GET {root}/tools` | one `ToolDefinition` per served version |
//! | `POST {root}/tools/call` (and `POST {root}/call`, the examples' path) | call a tool |
//!
//! Errors come in the spec's three classes: 400 `ServerErrorResponse` before the tool runs,
//! 422 `ValidationErrorResponse` for input that fails the schema, and 200 with
//! `success: false` when the tool ran and failed. `call_id` is an idempotency key
//! ([`crate::idempotency`]).

mod convert;
mod error;
mod handlers;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use toolhost_core::Catalog;

use crate::State;
use crate::view::View;

/// The OTC routes under `prefix`.
pub fn routes(prefix: &str) -> Router<Arc<State>> {
    let prefix = prefix.trim_end_matches('/');
    Router::new()
        .route(&format!("{prefix}/health"), get(handlers::health))
        .route(&format!("{prefix}/tools"), get(handlers::list))
        .route(&format!("{prefix}/tools/call"), post(handlers::call))
        .route(&format!("{prefix}/call"), post(handlers::call))
}

/// Every served version's `ToolDefinition`, serialized once per catalog as one JSON array.
#[derive(Debug)]
pub struct Definitions {
    json: String,
}

impl View for Definitions {
    fn build(catalog: &Catalog) -> Self {
        let definitions: Vec<_> = catalog
            .tools()
            .iter()
            .flat_map(|tool| {
                tool.versions
                    .iter()
                    .filter(|v| !v.retired)
                    .map(|v| convert::definition(tool, v))
            })
            .collect();
        Self {
            json: serde_json::to_string(&definitions).unwrap_or_else(|_| "[]".to_owned()),
        }
    }
}
