//! The bundled catalog compiled into the binary loads with no errors and no warnings, and its
//! tools answer. (That every directory under `examples/` loads is tested in toolhost-sculpt,
//! which knows the `http` kind as well as `native`.)

use std::path::Path;

use serde_json::{Value, json};
use toolhost_core::catalog::{Loader, Source};
use toolhost_core::{CallContext, Catalog, Engine, Error, Invocation, VersionSelector};

use crate::{obj, render};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

fn load_clean(what: &str, sources: &[Source]) -> Catalog {
    let catalog = Loader::default()
        .load(sources)
        .unwrap_or_else(|p| panic!("{what} does not load:\n{}", render(&p)));
    assert!(
        catalog.warnings().is_empty(),
        "{what} loads with warnings:\n{}",
        render(catalog.warnings())
    );
    catalog
}

#[test]
fn bundled_catalog_loads_without_warnings() {
    let catalog = load_clean("the bundled catalog", &toolhost_core::native::bundled_catalog());
    assert!(catalog.tools().len() > 5, "only {} tools", catalog.tools().len());
    for toolkit in ["Calculator", "Text", "Units", "Reference"] {
        assert!(catalog.toolkits().contains_key(toolkit), "toolkit {toolkit} missing");
    }
}

#[test]
fn bundled_catalog_is_the_examples_catalog() {
    let bundled = toolhost_core::native::bundled_catalog();
    let on_disk = Source::read_dir(&Path::new(EXAMPLES).join("catalog")).unwrap_or_else(|p| panic!("{}", render(&p)));
    let names = |c: &Catalog| {
        c.tools()
            .iter()
            .map(|t| (t.name.clone(), t.id, t.versions.len()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&load_clean("bundled", &bundled)),
        names(&load_clean("examples/catalog", &on_disk))
    );
}

#[test]
fn read_dir_of_a_missing_directory_is_an_error() {
    let missing = Path::new(EXAMPLES).join("no-such-directory");
    let problems = Source::read_dir(&missing).expect_err("missing");
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].message.contains("failed to read the catalog"),
        "{}",
        problems[0]
    );
}

async fn run(engine: &Engine, tool: &str, version: VersionSelector, input: Value) -> Result<Value, Error> {
    let invocation = Invocation {
        tool: tool.to_owned(),
        version,
        input: obj(input),
        context: CallContext::default(),
    };
    engine.invoke(invocation).await.map(|out| Value::Object(out.output))
}

fn bundled_engine() -> Engine {
    Engine::new(load_clean(
        "the bundled catalog",
        &toolhost_core::native::bundled_catalog(),
    ))
}

#[tokio::test]
async fn every_bundled_tool_answers_a_sample_call_at_its_latest_version() {
    let engine = bundled_engine();
    let samples = [
        ("add_numbers", json!({"a": 2, "b": 3}), json!({"sum": 5})),
        (
            "divide_numbers",
            json!({"dividend": 9, "divisor": 3}),
            json!({"quotient": 3}),
        ),
        (
            "convert_text_case",
            json!({"text": "hello big world", "case": "KEBAB"}),
            json!({"text": "hello-big-world"}),
        ),
        (
            "lookup_country_by_code",
            json!({"code": "JP"}),
            json!({"code": "JP", "name": "Japan", "capital": "Tokyo"}),
        ),
        (
            "convert_length",
            json!({"value": 1500, "from": "METRE", "to": "KILOMETRE"}),
            json!({"value": 1.5}),
        ),
        (
            "count_words_in_text",
            json!({"text": "the cat and the hat", "count_unique": true}),
            json!({"words": 5, "characters": 19, "unique_words": 4, "top_words": [
                {"word": "the", "count": 2}, {"word": "and", "count": 1}, {"word": "cat", "count": 1}, {"word": "hat", "count": 1}
            ]}),
        ),
    ];
    assert_eq!(
        samples.len(),
        engine.catalog().tools().len(),
        "a sample per bundled tool"
    );
    for (tool, input, expected) in samples {
        let output = run(&engine, tool, VersionSelector::Latest, input)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(output, expected, "{tool}");
    }
}

#[tokio::test]
async fn unknown_country_fails_with_the_known_codes_in_the_prompt() {
    let engine = bundled_engine();
    match run(
        &engine,
        "lookup_country_by_code",
        VersionSelector::Latest,
        json!({"code": "ZZ"}),
    )
    .await
    {
        Err(Error::Failed { failure, .. }) => {
            assert!(failure.message.contains("no country with code ZZ"), "{failure:?}");
            assert!(
                failure
                    .prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("FR") && p.contains("JP")),
                "{failure:?}"
            );
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[tokio::test]
async fn older_convert_text_case_version_refuses_the_newer_enum_value() {
    let engine = bundled_engine();
    let input = json!({"text": "a b", "case": "KEBAB"});
    match run(&engine, "convert_text_case", VersionSelector::Number(1), input).await {
        Err(Error::InvalidInput { errors, .. }) => {
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].parameter, "case");
            assert!(
                errors[0].message.contains("one of UPPER, LOWER, TITLE, SNAKE"),
                "{errors:?}"
            );
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[tokio::test]
async fn every_served_version_of_convert_length_answers_with_only_its_declared_outputs() {
    // One native function serves all three versions; it also answers `unit`, which no version
    // declares (a second output would change OTC's bare `value`), so it is never passed on.
    let engine = bundled_engine();
    for (number, expected) in [
        (1, json!({"value": 1.5})),
        (2, json!({"value": 1.5})),
        (3, json!({"value": 1.5})),
    ] {
        let input = json!({"value": 1500, "from": "METRE", "to": "KILOMETRE"});
        let output = run(&engine, "convert_length", VersionSelector::Number(number), input)
            .await
            .unwrap_or_else(|e| panic!("version {number}: {e}"));
        assert_eq!(output, expected, "version {number}");
    }
    // `precision` arrived in 1.1.0.
    let input = json!({"value": 1, "from": "INCH", "to": "METRE", "precision": 2});
    assert!(matches!(
        run(&engine, "convert_length", VersionSelector::Number(1), input.clone()).await,
        Err(Error::InvalidInput { .. })
    ));
    let output = run(&engine, "convert_length", VersionSelector::Number(2), input)
        .await
        .expect("ok");
    assert_eq!(output, json!({"value": 0.03}));
    // `YARD` arrived in 1.2.0.
    let input = json!({"value": 1, "from": "YARD", "to": "FOOT"});
    assert!(matches!(
        run(&engine, "convert_length", VersionSelector::Number(2), input.clone()).await,
        Err(Error::InvalidInput { .. })
    ));
    let output = run(&engine, "convert_length", VersionSelector::Number(3), input)
        .await
        .expect("ok");
    assert_eq!(output, json!({"value": 3}));
}
