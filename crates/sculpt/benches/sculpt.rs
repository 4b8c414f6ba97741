//! A one-step sculpted tool through `Engine::invoke`, against calling the same loopback
//! upstream directly with the same reqwest client (issue #6: at least 0.6× the direct
//! throughput, under 150 µs of median added latency).
//!
//! Run: `cargo bench -p toolhost-sculpt`. The upstream is axum on 127.0.0.1 in the same process
//! and runtime; "batch of 32" runs 32 calls at once, for throughput under concurrency.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::Query;
use axum::routing::get;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{CallContext, Engine, Invocation, VersionSelector};

const CATALOG: &str = r#"
toolkits:
  - name: Bench
    tools:
      - name: weather
        description: One sculpted GET.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, description: A city. }]
            outputs:
              - { name: temp, type: number, description: Temperature. }
              - { name: wind, type: number, description: Wind. }
            backend:
              kind: http
              base_url: BASE
              steps: [{ name: s, path: /weather, query: { city: "{{input.city}}" } }]
              outputs: { temp: s.body.current.temp, wind: s.body.current.wind }
      - name: weather_jq
        description: The same GET with a jq output.
        versions:
          - version: 1.0.0
            inputs: [{ name: city, description: A city. }]
            outputs: [{ name: temp_f, type: number, description: Temperature. }]
            backend:
              kind: http
              base_url: BASE
              steps: [{ name: s, path: /weather, query: { city: "{{input.city}}" } }]
              outputs: { temp_f: { jq: ".steps.s.body.current.temp * 9 / 5 + 32" } }
"#;

async fn weather(Query(q): Query<HashMap<String, String>>) -> axum::Json<Value> {
    axum::Json(json!({
        "city": q.get("city"),
        "current": {"temp": 21.5, "wind": 3.2, "time": "2026-11-22T10:00"},
        "units": {"temp": "°C", "wind": "km/h"}
    }))
}

fn invocation(tool: &str) -> Invocation {
    let mut input = Map::new();
    input.insert("city".to_owned(), Value::from("Berlin"));
    Invocation {
        tool: tool.to_owned(),
        version: VersionSelector::Latest,
        input,
        context: CallContext::default(),
    }
}

fn sculpting(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, Router::new().route("/weather", get(weather))).await });
        base
    });
    let factory = toolhost_sculpt::Factory::new(HashMap::new()).expect("factory");
    let client = factory.client().clone();
    let catalog = Loader::default()
        .with_backend("http", Arc::new(factory))
        .load(&[Source {
            name: "bench.yaml".to_owned(),
            text: CATALOG.replace("BASE", &base),
        }])
        .expect("catalog loads");
    let engine = Arc::new(Engine::new(catalog));
    let url = format!("{base}/weather");
    let direct = {
        let client = client.clone();
        move || {
            let (client, url) = (client.clone(), url.clone());
            async move {
                let response = client
                    .get(&url)
                    .query(&[("city", "Berlin")])
                    .send()
                    .await
                    .expect("send");
                let body: Value = response.json().await.expect("json");
                body["current"]["temp"].as_f64()
            }
        }
    };
    let sculpted = |tool: &'static str| {
        let engine = Arc::clone(&engine);
        move || {
            let engine = Arc::clone(&engine);
            async move {
                engine
                    .invoke(invocation(tool))
                    .await
                    .map(|o| o.output.len())
                    .expect("invoke")
            }
        }
    };
    assert!(runtime.block_on(direct()).is_some());
    assert_eq!(runtime.block_on(sculpted("weather")()), 2);

    let mut group = c.benchmark_group("sculpt");
    group.sample_size(50);
    group.bench_function("direct_reqwest_get", |b| b.iter(|| runtime.block_on(direct())));
    group.bench_function("engine_invoke_one_step", |b| {
        b.iter(|| runtime.block_on(sculpted("weather")()))
    });
    group.bench_function("engine_invoke_one_step_jq", |b| {
        b.iter(|| runtime.block_on(sculpted("weather_jq")()))
    });
    group.throughput(Throughput::Elements(32));
    group.bench_function("direct_reqwest_get_batch_32", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let calls = (0..32).map(|_| tokio::spawn(direct()));
                futures_util::future::join_all(calls)
                    .await
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .expect("a call task panicked")
                    .len()
            })
        })
    });
    group.bench_function("engine_invoke_one_step_batch_32", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let calls = (0..32).map(|_| tokio::spawn(sculpted("weather")()));
                futures_util::future::join_all(calls)
                    .await
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .expect("a call task panicked")
                    .len()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, sculpting);
criterion_main!(benches);
