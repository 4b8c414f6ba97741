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
//! It is written again for every answer, a few operations at a time as the client reads, and
//! never held whole (issue #42.1); its tag is learnt from the first answer to callers who see
//! every tool, and to each scope set (a few kept, bounded) for callers whose scopes hide some.
//! A hidden tool is absent.

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

/// The document of one catalog, never held whole (issue #42.1: on 100,000 tools it is most of
/// a GB): every answer writes it again, a few operations at a time, as the client reads. What is
/// kept is each caller's tag, learnt by hashing the first answer as it is sent.
#[derive(Debug)]
pub struct Document {
    site: Arc<convert::Site>,
    /// The tag of the document callers who see every tool get, once one was sent whole.
    tag: Arc<std::sync::OnceLock<HeaderValue>>,
    /// The tags of the documents of callers whose scopes hide tools, by scope set.
    restricted: Restricted<Scopes, std::sync::OnceLock<HeaderValue>>,
}

/// How much of the document is written before it is sent on.
const CHUNK: usize = 64 * 1024;

impl Document {
    /// Writes the document as `access` sees it, a chunk at a time, into `send`; stops when
    /// `send` says `false`. Returns the document's tag when it was sent whole.
    fn stream(
        catalog: &Catalog,
        site: &convert::Site,
        access: &Access,
        mut send: impl FnMut(Bytes) -> bool,
    ) -> Option<String> {
        #[allow(deprecated)] // As `cache::etag`: fixed keys, the same tag on every replica.
        let mut hasher = std::hash::SipHasher::new();
        let mut open = true;
        let mut spill = |out: &mut Vec<u8>| {
            if out.len() >= CHUNK {
                std::hash::Hasher::write(&mut hasher, out);
                open = send(Bytes::from(std::mem::replace(out, Vec::with_capacity(CHUNK * 2))));
            }
            open
        };
        let mut out = Vec::with_capacity(CHUNK * 2);
        convert::write(&mut out, catalog, site, access, &mut spill);
        if !open {
            return None;
        }
        std::hash::Hasher::write(&mut hasher, &out);
        let tag = format!("\"{:016x}\"", std::hash::Hasher::finish(&hasher));
        send(Bytes::from(out)).then_some(tag)
    }
}

/// A caller's scope set, as `Access::Scopes` holds it.
type Scopes = Arc<std::collections::BTreeSet<String>>;

/// The document of the engine's catalog for `config`: what it needs (where the server is),
/// and the tags learnt, until a reload.
impl crate::view::Kept for Document {
    /// Built again only when asked for: it is what the server learnt (tags), not a rendering.
    const RENDERED_ON_RELOAD: bool = false;

    fn cache(config: &Config) -> Cached<Self> {
        let site = Arc::new(convert::Site::new(config));
        Cached::lazy(move |_| Document {
            site: Arc::clone(&site),
            tag: Arc::default(),
            restricted: Restricted::default(),
        })
    }
}

/// `GET /openapi.json`: the document, written as it is sent (off the async workers: on a large
/// catalog it takes seconds), or 304 when the client has it. The first answer for a catalog
/// (and scope set) has no `ETag`: the tag is learnt while it is sent.
async fn document(Extract(state): Extract<Arc<State>>, caller: Caller, headers: HeaderMap) -> Response {
    let built = state.view::<Document>();
    let tag = match &caller.access {
        Access::All => Arc::clone(&built.view.tag),
        Access::Scopes(scopes) => built
            .view
            .restricted
            .get(Arc::clone(scopes), 0, |_| 0, std::sync::OnceLock::new),
    };
    let known = tag.get().cloned();
    let mut response = if known
        .as_ref()
        .is_some_and(|t| cache::if_none_match(&headers, t.to_str().unwrap_or_default()))
    {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let (send, mut receive) = tokio::sync::mpsc::channel::<Bytes>(4);
        let access = caller.access.clone();
        tokio::task::spawn_blocking(move || {
            let sent = Document::stream(&built.catalog, &built.view.site, &access, |chunk| {
                send.blocking_send(chunk).is_ok()
            });
            if let Some(sent) = sent.and_then(|t| HeaderValue::from_str(&t).ok()) {
                let _ = tag.set(sent);
            }
        });
        let chunks = futures_util::stream::poll_fn(move |cx| {
            receive.poll_recv(cx).map(|c| c.map(Ok::<_, std::convert::Infallible>))
        });
        let mut r = Response::new(Body::from_stream(chunks));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    };
    let out = response.headers_mut();
    if let Some(known) = known {
        out.insert(header::ETAG, known);
    }
    cache::set_policy(out, CACHE, state.auth().enabled());
    response
}
