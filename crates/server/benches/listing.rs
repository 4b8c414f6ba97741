//! Serving a 50-item N-ACT page from a 10,000-tool catalog, in process through the whole router.
//!
//! Target (issue #2): well under 1 ms per page, independent of where in the catalog it starts.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use criterion::{Criterion, criterion_group, criterion_main};
use toolhost_core::Engine;
use toolhost_core::catalog::Loader;
use toolhost_core::testing::generated_catalog_files;
use tower::ServiceExt;

/// A GET as a client on this machine sends it: the server answers only to hosts it serves
/// (a request without `Host` is refused with 403).
fn get(uri: &str) -> Request<Body> {
    Request::get(uri)
        .header("host", "127.0.0.1")
        .body(Body::empty())
        .expect("request")
}

fn listing(c: &mut Criterion) {
    let catalog = Loader::default()
        .load(&generated_catalog_files(10_000, 50))
        .expect("generated catalog loads");
    let state = toolhost_server::State::new(Arc::new(Engine::new(catalog)), toolhost_server::Config::default());
    let app = toolhost_server::app(state);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let fetch = |uri: String| {
        let app = app.clone();
        async move {
            let response = app.oneshot(get(&uri)).await.expect("response");
            assert!(response.status().is_success(), "{uri}: {}", response.status());
            axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .expect("body")
                .len()
        }
    };
    // A cursor deep into the catalog, so the bench shows the page does not cost O(catalog).
    let deep = runtime.block_on(async {
        let first = app
            .clone()
            .oneshot(get("/nact/tools?pageLimit=500"))
            .await
            .expect("response");
        assert!(first.status().is_success(), "first page: {}", first.status());
        let body = axum::body::to_bytes(first.into_body(), usize::MAX).await.expect("body");
        let page: serde_json::Value = serde_json::from_slice(&body).expect("json");
        page["paging"]["next"].as_str().expect("next").to_owned()
    });
    c.bench_function("nact/list_first_page_50", |b| {
        b.iter(|| runtime.block_on(fetch("/nact/tools?pageLimit=50".to_owned())))
    });
    c.bench_function("nact/list_deep_page_50", |b| {
        b.iter(|| runtime.block_on(fetch(format!("/nact/tools?pageLimit=50&pageCursor={deep}"))))
    });
    c.bench_function("nact/list_tag_filtered_50", |b| {
        b.iter(|| runtime.block_on(fetch("/nact/tools?pageLimit=50&tag=odd&tag=Kit7".to_owned())))
    });
}

criterion_group!(benches, listing);
criterion_main!(benches);
