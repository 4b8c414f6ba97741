//! The catalog cache: `Cache-Control` freshness and `ETag` revalidation, on disk between clients.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use toolhost_client::{Client, Options, Source};

use crate::support::{Stub, options, page, scratch, serve, signature};

/// A listing with `cache_control`, answering `If-None-Match: "v1"` with 304. Counts full
/// answers and 304s.
async fn listing(cache_control: &'static str) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let full = Arc::new(AtomicUsize::new(0));
    let not_modified = Arc::new(AtomicUsize::new(0));
    let (f, n) = (Arc::clone(&full), Arc::clone(&not_modified));
    let app = axum::Router::new().route(
        "/nact/tools",
        get(move |headers: HeaderMap| {
            let (f, n) = (Arc::clone(&f), Arc::clone(&n));
            async move {
                if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v == "\"v1\"") {
                    n.fetch_add(1, Ordering::SeqCst);
                    return (
                        StatusCode::NOT_MODIFIED,
                        [(header::ETAG, "\"v1\""), (header::CACHE_CONTROL, cache_control)],
                    )
                        .into_response();
                }
                f.fetch_add(1, Ordering::SeqCst);
                (
                    [(header::ETAG, "\"v1\""), (header::CACHE_CONTROL, cache_control)],
                    axum::Json(page(vec![signature("echo", "Echo.")])),
                )
                    .into_response()
            }
        }),
    );
    (serve(app).await, full, not_modified)
}

fn cached_client(dir: &std::path::Path) -> Client {
    Client::new(Options {
        cache_dir: Some(dir.to_owned()),
        ..options(Stub::new(&[]))
    })
    .unwrap()
}

#[tokio::test]
async fn a_fresh_listing_is_reused_without_a_request() {
    let (base, full, not_modified) = listing("private, max-age=60").await;
    let dir = scratch("fresh");
    let source = Source::parse(&format!("{base}/nact")).unwrap();
    for _ in 0..3 {
        let server = cached_client(&dir).discover(&source).await.unwrap();
        assert_eq!(server.tools[0].name, "echo");
    }
    assert_eq!(
        (full.load(Ordering::SeqCst), not_modified.load(Ordering::SeqCst)),
        (1, 0)
    );
    // `rediscover` (what `verify` uses) asks anyway, conditionally.
    cached_client(&dir).rediscover(&source, None).await.unwrap();
    assert_eq!(
        (full.load(Ordering::SeqCst), not_modified.load(Ordering::SeqCst)),
        (1, 1)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_stale_listing_is_revalidated_with_its_etag() {
    let (base, full, not_modified) = listing("no-cache").await;
    let dir = scratch("stale");
    let source = Source::parse(&format!("{base}/nact")).unwrap();
    for _ in 0..3 {
        let server = cached_client(&dir).discover(&source).await.unwrap();
        assert_eq!(server.tools.len(), 1, "a 304 answers from the stored body");
    }
    assert_eq!(
        (full.load(Ordering::SeqCst), not_modified.load(Ordering::SeqCst)),
        (1, 2)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn without_a_cache_every_discovery_asks() {
    let (base, full, _) = listing("private, max-age=60").await;
    let source = Source::parse(&format!("{base}/nact")).unwrap();
    for _ in 0..2 {
        Client::new(options(Stub::new(&[])))
            .unwrap()
            .discover(&source)
            .await
            .unwrap();
    }
    assert_eq!(full.load(Ordering::SeqCst), 2);
}
