//! The catalog as an OpenAPI 3.1 document (issue #13 §3): `GET /openapi.json` describes the
//! REST surface (N-ACT, OTC and WoA routes) with every tool's typed input and output schemas,
//! so that what consumes OpenAPI (function calling from a description, gateways, client
//! generators) can use the catalog as it is.
//!
//! | operation | per | request body | answer |
//! |---|---|---|---|
//! | `POST {woa}/agents/{tool}/invoke` (operationId: the tool's name) | tool | `{input: <input schema>, version?: <served semvers>}` | the output object |
//! | `POST {nact}/tools/{tool}/versions/{n}` (`nact_{tool}_v{n}`) | served version | `{input_parameters: [{name, value}]}`, each pair typed | `{output_parameters: [...], version}` |
//! | `POST {otc}/tools/call` (`otc_call`) | one, a branch per served version | `{request: {tool_id: "Toolkit.tool@x.y.z", input: <input schema>, ...}}` | OTC's `{result}` |
//!
//! and the listings (`GET {nact}/tools`, `GET {otc}/tools`, `GET /.well-known/woa.json`). The
//! WoA operation comes first and is named after the tool, since its body is the tool's input
//! itself: a generator that makes one function per operation gets the tool. Errors are
//! described by class (`4XX`, `5XX`): problem documents, and OTC's own shapes.
//!
//! It is rendered once per catalog for callers who see every tool, and once per scope set (a
//! few kept, bounded) for callers whose scopes hide some; a hidden tool is absent.

mod convert;

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State as Extract;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use toolhost_core::{Access, Catalog};

use crate::auth::Caller;
use crate::http::cache;
use crate::view::{Cached, Restricted};
use crate::{Config, State};

/// Where the document is served.
pub const PATH: &str = "/openapi.json";
/// As the other catalog views: five minutes, then revalidation with the ETag.
const CACHE: &str = "max-age=300";

/// The route of the document.
pub fn routes() -> Router<Arc<State>> {
    Router::new().route(PATH, get(document))
}

/// The document of one catalog as one caller sees it, serialized, with its tag.
#[derive(Debug)]
pub struct Document {
    body: Bytes,
    etag: HeaderValue,
    site: Arc<convert::Site>,
    /// The documents of callers whose scopes hide tools, by scope set, rendered on first
    /// request.
    restricted: Restricted<Scopes, Document>,
}

impl Document {
    fn render(catalog: &Catalog, site: &Arc<convert::Site>, access: &Access) -> Self {
        let mut body = Vec::new();
        convert::write(&mut body, catalog, site, access);
        let etag = cache::etag(&body);
        Self {
            etag: HeaderValue::from_str(&etag).unwrap_or_else(|_| HeaderValue::from_static("\"\"")),
            body: body.into(),
            site: Arc::clone(site),
            restricted: Restricted::default(),
        }
    }
}

/// A caller's scope set, as `Access::Scopes` holds it.
type Scopes = Arc<std::collections::BTreeSet<String>>;

/// The document of the engine's catalog for `config`, built when first asked for (it costs
/// seconds and hundreds of MB on a 10,000-tool catalog, and few clients fetch it), and again
/// after a reload.
pub fn view(config: &Config) -> Cached<Document> {
    let site = Arc::new(convert::Site::new(config));
    Cached::lazy(move |catalog| Document::render(catalog, &site, &Access::All))
}

/// The full document and, for a caller whose scopes hide tools, theirs.
fn for_caller(state: &State, access: &Access) -> (Arc<crate::view::Built<Document>>, Option<Arc<Document>>) {
    let built = state.openapi.get(&state.engine);
    let restricted = match access {
        Access::All => None,
        Access::Scopes(scopes) => Some(built.view.restricted.get(
            Arc::clone(scopes),
            built.view.body.len(),
            |d| d.body.len(),
            || Document::render(&built.catalog, &built.view.site, access),
        )),
    };
    (built, restricted)
}

/// `GET /openapi.json`: the pre-rendered document, or 304 when the client has it.
async fn document(Extract(state): Extract<Arc<State>>, caller: Caller, headers: HeaderMap) -> Response {
    // Rendering (the first request after a load, a new scope set) takes most of a second on a
    // large catalog: off the async workers.
    let found = tokio::task::spawn_blocking({
        let state = Arc::clone(&state);
        move || for_caller(&state, &caller.access)
    })
    .await;
    let (built, restricted) = match found {
        Ok(found) => found,
        Err(e) => return crate::http::problem::join_failed(e),
    };
    let document = restricted.as_deref().unwrap_or(&built.view);
    let tag = document.etag.to_str().unwrap_or_default();
    let mut response = if cache::if_none_match(&headers, tag) {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(Body::from(document.body.clone()));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    };
    let out = response.headers_mut();
    out.insert(header::ETAG, document.etag.clone());
    cache::set_policy(out, CACHE, state.auth().enabled());
    response
}
