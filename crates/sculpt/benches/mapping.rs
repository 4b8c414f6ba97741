//! Output mapping of a 60 KB upstream body (issue #9): the same one-step sculpted tool with a jq
//! output that filters and renames 100 repository objects (DEPENDENCIES.md §5's task), and with
//! a plain path output. Both fetch and parse the same body, so their difference is what the jq
//! mapping costs.
//!
//! Run: `cargo bench -p toolhost-sculpt --bench mapping` (bench/run.sh runs it in quick mode).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{CallContext, Engine, Invocation, VersionSelector};

const CATALOG: &str = r#"
toolkits:
  - name: Bench
    tools:
      - name: repos_jq
        description: Non-fork repositories, renamed, by jq.
        versions:
          - version: 1.0.0
            outputs: [{ name: repos, type: json, description: The repositories. }]
            backend:
              kind: http
              base_url: BASE
              steps: [{ name: s, path: /repos }]
              outputs:
                repos: { jq: "[.steps.s.body.items[] | select(.fork | not) | {id, name: .full_name, stars: .stargazers_count}]" }
      - name: repos_path
        description: The total count, by path.
        versions:
          - version: 1.0.0
            outputs: [{ name: total, type: int, description: The count. }]
            backend:
              kind: http
              base_url: BASE
              steps: [{ name: s, path: /repos }]
              outputs: { total: s.body.total_count }
"#;

/// 100 repository objects of 20 fields each: about 60 KB of JSON.
fn repositories() -> Value {
    let items: Vec<Value> = (0..100)
        .map(|i| {
            json!({
                "id": 1000 + i, "name": format!("repo-{i}"), "full_name": format!("someone/repo-{i}"),
                "private": false, "fork": i % 3 == 0, "html_url": format!("https://example.com/someone/repo-{i}"),
                "description": "A repository with a description long enough to look like a real one.",
                "url": format!("https://api.example.com/repos/someone/repo-{i}"),
                "created_at": "2024-01-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z",
                "pushed_at": "2026-11-02T00:00:00Z", "homepage": null, "size": 1024 + i,
                "stargazers_count": 10 * i, "watchers_count": 10 * i, "language": "Rust",
                "forks_count": i, "open_issues_count": i % 7, "default_branch": "main",
                "topics": ["tools", "agents", "mcp"],
            })
        })
        .collect();
    json!({"total_count": 100, "incomplete_results": false, "items": items})
}

fn invocation(tool: &str) -> Invocation {
    Invocation {
        tool: tool.to_owned(),
        version: VersionSelector::Latest,
        input: Map::new(),
        context: CallContext::default(),
    }
}

fn mapping(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let body = Arc::new(repositories().to_string());
    assert!(body.len() > 50_000, "the body is {} bytes", body.len());
    let base = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let route = get(move || {
            let body = Arc::clone(&body);
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body.as_str().to_owned(),
                )
            }
        });
        tokio::spawn(async move { axum::serve(listener, Router::new().route("/repos", route)).await });
        base
    });
    let factory = toolhost_sculpt::Factory::new(HashMap::new()).expect("factory");
    let catalog = Loader::default()
        .with_backend("http", Arc::new(factory))
        .load(&[Source {
            name: "bench.yaml".to_owned(),
            text: CATALOG.replace("BASE", &base),
        }])
        .expect("catalog loads");
    let engine = Arc::new(Engine::new(catalog));
    let call = |tool: &'static str| {
        let engine = Arc::clone(&engine);
        move || {
            let engine = Arc::clone(&engine);
            async move { engine.invoke(invocation(tool)).await.expect("invoke").output }
        }
    };
    let repos = runtime.block_on(call("repos_jq")());
    assert_eq!(repos["repos"].as_array().map(Vec::len), Some(66));
    let mut group = c.benchmark_group("sculpt");
    group.sample_size(30);
    group.bench_function("map_60kb_jq", |b| b.iter(|| runtime.block_on(call("repos_jq")())));
    group.bench_function("map_60kb_path", |b| b.iter(|| runtime.block_on(call("repos_path")())));
    group.finish();
}

criterion_group!(benches, mapping);
criterion_main!(benches);
