//! Input validation alone, `Engine::invoke` on a native tool with five typed inputs, and loading a
//! 10,000-tool catalog.
//!
//! Targets (issue #2): invoke under 5 µs; a 10,000-tool catalog loads in under 1 s. `bench/run.sh`
//! runs these in quick mode beside its load tests (issue #9).

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use toolhost_core::catalog::Loader;
use toolhost_core::testing::{generated_catalog, generated_catalog_files};
use toolhost_core::{CallContext, Engine, Invocation, VersionSelector, validate};

fn input(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn invoke(c: &mut Criterion) {
    let catalog = Loader::default()
        .load(&[generated_catalog(10, 1)])
        .expect("generated catalog loads");
    let engine = Engine::new(catalog);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let valid = Invocation {
        tool: "tool_00003".to_owned(),
        version: VersionSelector::Latest,
        input: input(json!({"city": "Omaha", "days": 3, "threshold": 0.5, "metric": true, "detail": "FULL"})),
        context: CallContext::default(),
    };
    let invalid = Invocation {
        input: input(json!({"city": 7, "days": 40, "threshold": "x", "detail": "HUGE", "extra": 1})),
        ..valid.clone()
    };
    assert!(runtime.block_on(engine.invoke(valid.clone())).is_ok());
    c.bench_function("engine/invoke_native_5_inputs", |b| {
        b.iter(|| runtime.block_on(engine.invoke(valid.clone())).map(|o| o.output.len()))
    });
    c.bench_function("engine/invoke_invalid_5_errors", |b| {
        b.iter(|| {
            runtime
                .block_on(engine.invoke(invalid.clone()))
                .err()
                .map(|e| e.to_string().len())
        })
    });
}

/// The check `Engine::invoke` makes before a backend runs: one `is_valid` on the compiled schema
/// when the input is good; per-parameter messages only when it is not.
fn validation(c: &mut Criterion) {
    let catalog = Loader::default()
        .load(&[generated_catalog(10, 1)])
        .expect("generated catalog loads");
    let tool = catalog.find("tool_00003").expect("generated tool");
    let version = tool.latest();
    let validator = validate::compile(version.input_schema()).expect("schema compiles");
    let valid = json!({"city": "Omaha", "days": 3, "threshold": 0.5, "metric": true, "detail": "FULL"});
    let invalid = json!({"city": 7, "days": 40, "threshold": "x", "detail": "HUGE", "extra": 1});
    assert!(validate::check(&validator, &tool.name, &version.inputs, true, &valid).is_ok());
    c.bench_function("validate/input_5_valid", |b| {
        b.iter(|| validate::check(&validator, &tool.name, &version.inputs, true, &valid).is_ok())
    });
    c.bench_function("validate/input_5_invalid", |b| {
        b.iter(|| validate::check(&validator, &tool.name, &version.inputs, true, &invalid).map_err(|e| e.len()))
    });
}

fn load(c: &mut Criterion) {
    // One file per toolkit: a single YAML file of 10,000 tools is over the parser's node budget,
    // and an unchecked result once measured how fast that refusal came (issue #9).
    let sources = generated_catalog_files(10_000, 50);
    let loader = Loader::default();
    let loaded = loader.load(&sources).map(|c| c.tools().len());
    assert_eq!(
        loaded.as_ref().ok(),
        Some(&10_000),
        "the generated catalog loads: {loaded:?}"
    );
    let mut group = c.benchmark_group("catalog");
    group.sample_size(10);
    group.bench_function("load_10000_tools", |b| {
        b.iter(|| loader.load(&sources).map(|c| c.tools().len()))
    });
    group.finish();
}

criterion_group!(benches, validation, invoke, load);
criterion_main!(benches);
