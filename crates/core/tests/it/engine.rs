//! `Engine::invoke`: version resolution, input validation with per-parameter messages, timeouts,
//! output checks and tool failures.

use std::time::Duration;

use serde_json::{Value, json};
use toolhost_core::catalog::Loader;
use toolhost_core::{CallContext, Engine, Error, Invocation, Outcome, ParameterError, VersionSelector};

use crate::{V, clean, obj, render, tool, v};

/// `forecast` with four versions (1.0.0, 1.1.0 adding optional `days`, 1.2.0 adding `units`,
/// 1.3.0 retired), all echoing their inputs as outputs, plus tools for validation, timeouts and failures.
fn engine() -> Engine {
    // Two outputs from the start: OTC answers a one-output tool with the bare value, so a second
    // output may not be added later (issue #31.2).
    let city = |s: V| {
        s.input("city", "string", "max_length: 20")
            .output("city", "string", "")
            .output("days", "int", "required: false")
    };
    let days = "min: 1, max: 16, required: false";
    let units =
        "required: false, values: [{name: METRIC, description: Celsius.}, {name: IMPERIAL, description: Fahrenheit.}]";
    let v3 = |s: V| {
        city(s)
            .input("days", "int", days)
            .input("units", "enum", units)
            .output("units", "enum", units)
    };
    let forecast = crate::t(
        "forecast",
        &[
            city(v("1.0.0")),
            city(v("1.1.0")).input("days", "int", days),
            v3(v("1.2.0")),
            v3(v("1.3.0")).with("retired: true"),
        ],
    );
    let text = crate::doc(&[
        forecast,
        crate::t(
            "check",
            &[v("1.0.0")
                .input("code", "string", "max_length: 2, pattern: \"^[A-Z]+$\"")
                .input("count", "int", "min: 1, max: 10")
                .input("ratio", "number", "required: false")
                .input("flag", "boolean", "required: false")
                .input(
                    "mode",
                    "enum",
                    "values: [{name: FAST, description: Fast.}, {name: SAFE, description: Safe.}]",
                )],
        ),
        crate::t(
            "slow",
            &[v("1.0.0")
                .backend("{kind: native, function: testing.echo, delay_ms: 200}")
                .with("timeout_ms: 50")],
        ),
        crate::t(
            "quick",
            &[v("1.0.0")
                .backend("{kind: native, function: testing.echo, delay_ms: 10}")
                .with("timeout_ms: 2000")],
        ),
        crate::t(
            "misshapen",
            &[v("1.0.0")
                .output("temp", "number", "")
                .backend("{kind: native, function: testing.wrong_shape}")],
        ),
        crate::t("bare", &[v("1.0.0")]),
    ]);
    Engine::new(clean(&text))
}

fn call(tool: &str, version: VersionSelector, input: Value) -> Invocation {
    Invocation {
        tool: tool.to_owned(),
        version,
        input: obj(input),
        context: CallContext::default(),
    }
}

async fn invoke(engine: &Engine, tool: &str, version: VersionSelector, input: Value) -> Result<Outcome, Error> {
    engine.invoke(call(tool, version, input)).await
}

/// The per-parameter errors of an invalid call of `check`.
async fn invalid(engine: &Engine, input: Value) -> Vec<ParameterError> {
    match invoke(engine, "check", VersionSelector::Latest, input.clone()).await {
        Err(Error::InvalidInput { tool, errors }) => {
            assert_eq!(tool, "check");
            errors
        }
        other => panic!("expected InvalidInput for {input}, got {other:?}"),
    }
}

/// The one error of an invalid call, checked to be about `parameter` and to contain `phrases`.
async fn one_invalid(engine: &Engine, input: Value, parameter: &str, phrases: &[&str]) {
    let errors = invalid(engine, input.clone()).await;
    let [e] = errors.as_slice() else {
        panic!("expected one error for {input}, got {errors:?}")
    };
    assert_eq!(e.parameter, parameter, "{e:?}");
    for phrase in phrases {
        assert!(e.message.contains(phrase), "{:?} lacks {phrase:?}", e.message);
    }
}

fn valid_check() -> Value {
    json!({"code": "AB", "count": 3, "mode": "FAST"})
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    base[key] = value;
    base
}

fn without(mut base: Value, key: &str) -> Value {
    base.as_object_mut().map(|m| m.remove(key));
    base
}

// ---------------------------------------------------------------------------------------------
// Version selection

#[tokio::test]
async fn latest_runs_the_newest_served_version() {
    let engine = engine();
    let out = invoke(
        &engine,
        "forecast",
        VersionSelector::Latest,
        json!({"city": "Oslo", "units": "METRIC"}),
    )
    .await
    .expect("ok");
    assert_eq!(out.tool.name, "forecast");
    assert_eq!(out.version().number, 3, "1.3.0 is retired, so latest is 1.2.0");
    assert_eq!(out.version().semver.to_string(), "1.2.0");
    assert_eq!(Value::Object(out.output), json!({"city": "Oslo", "units": "METRIC"}));
}

#[tokio::test]
async fn a_version_number_selects_that_position() {
    let engine = engine();
    let out = invoke(&engine, "forecast", VersionSelector::Number(1), json!({"city": "Oslo"}))
        .await
        .expect("ok");
    assert_eq!(out.version().number, 1);
    assert_eq!(out.version().semver.to_string(), "1.0.0");
    // Version 1 has no `days`: the input is checked against version 1's parameters.
    match invoke(
        &engine,
        "forecast",
        VersionSelector::Number(1),
        json!({"city": "Oslo", "days": 3}),
    )
    .await
    {
        Err(Error::InvalidInput { errors, .. }) => assert_eq!(errors[0].parameter, "days"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    let out = invoke(
        &engine,
        "forecast",
        VersionSelector::Number(2),
        json!({"city": "Oslo", "days": 3}),
    )
    .await
    .expect("ok");
    assert_eq!(out.version().semver.to_string(), "1.1.0");
    assert_eq!(out.output.get("days"), Some(&json!(3)));
}

#[tokio::test]
async fn a_semver_selects_that_version() {
    let engine = engine();
    let semver = semver::Version::new(1, 1, 0);
    let out = invoke(
        &engine,
        "forecast",
        VersionSelector::Semver(semver.clone()),
        json!({"city": "Oslo"}),
    )
    .await
    .expect("ok");
    assert_eq!(out.version().semver, semver);
    assert_eq!(out.version().number, 2);
}

#[tokio::test]
async fn unknown_tool_is_tool_not_found() {
    let engine = engine();
    match invoke(&engine, "nowcast", VersionSelector::Latest, json!({})).await {
        Err(Error::ToolNotFound { tool }) => assert_eq!(tool, "nowcast"),
        other => panic!("expected ToolNotFound, got {other:?}"),
    }
    // A well-formed UUID that is no tool's id.
    let id = "00000000-0000-4000-8000-000000000000";
    assert!(
        matches!(invoke(&engine, id, VersionSelector::Latest, json!({})).await, Err(Error::ToolNotFound { tool }) if tool == id)
    );
}

#[tokio::test]
async fn unknown_version_is_version_not_found() {
    let engine = engine();
    for selector in [
        VersionSelector::Number(9),
        VersionSelector::Number(0),
        VersionSelector::Semver(semver::Version::new(2, 0, 0)),
    ] {
        match invoke(&engine, "forecast", selector.clone(), json!({"city": "Oslo"})).await {
            Err(Error::VersionNotFound { tool, version, served }) => {
                assert_eq!(tool, "forecast");
                assert_eq!(version, selector);
                assert_eq!(served, "1 (1.0.0), 2 (1.1.0), 3 (1.2.0)");
            }
            other => panic!("expected VersionNotFound for {selector}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn retired_version_is_version_not_found() {
    let engine = engine();
    for selector in [
        VersionSelector::Number(4),
        VersionSelector::Semver(semver::Version::new(1, 3, 0)),
    ] {
        let err = invoke(&engine, "forecast", selector.clone(), json!({}))
            .await
            .expect_err("retired");
        assert!(
            matches!(&err, Error::VersionNotFound { version, .. } if *version == selector),
            "{err:?}"
        );
        assert!(err.to_string().contains("has no served version"), "{err}");
    }
}

#[tokio::test]
async fn a_tool_is_found_by_its_uuid_in_any_textual_form() {
    let engine = engine();
    let id = engine.catalog().find("forecast").expect("tool").id;
    let forms = [
        id.hyphenated().to_string(),
        id.simple().to_string(),
        id.urn().to_string(),
        id.braced().to_string(),
        id.to_string().to_uppercase(),
    ];
    for form in forms {
        let out = invoke(&engine, &form, VersionSelector::Latest, json!({"city": "Oslo"}))
            .await
            .unwrap_or_else(|e| panic!("{form}: {e}"));
        assert_eq!(out.tool.name, "forecast");
        assert_eq!(out.tool.id, id);
    }
}

// ---------------------------------------------------------------------------------------------
// Input validation

#[tokio::test]
async fn valid_input_passes() {
    let engine = engine();
    let input = with(with(valid_check(), "ratio", json!(0.5)), "flag", json!(true));
    invoke(&engine, "check", VersionSelector::Latest, input)
        .await
        .expect("valid");
}

#[tokio::test]
async fn wrong_type_names_the_parameter_and_the_expected_type() {
    let engine = engine();
    one_invalid(
        &engine,
        with(valid_check(), "count", json!("three")),
        "count",
        &["`count` expects an integer from 1 to 10", "but got \"three\""],
    )
    .await;
    one_invalid(
        &engine,
        with(valid_check(), "count", json!(2.5)),
        "count",
        &["expects an integer", "2.5"],
    )
    .await;
    one_invalid(
        &engine,
        with(valid_check(), "flag", json!("yes")),
        "flag",
        &["`flag` expects true or false"],
    )
    .await;
    one_invalid(
        &engine,
        with(valid_check(), "ratio", json!([1])),
        "ratio",
        &["`ratio` expects a number", "[1]"],
    )
    .await;
    one_invalid(
        &engine,
        with(valid_check(), "code", json!(null)),
        "code",
        &["`code` expects a string", "null"],
    )
    .await;
}

#[tokio::test]
async fn missing_required_parameter_is_reported() {
    let engine = engine();
    one_invalid(
        &engine,
        without(valid_check(), "count"),
        "count",
        &["`count` is required", "an integer from 1 to 10"],
    )
    .await;
    let errors = invalid(&engine, json!({})).await;
    let parameters: Vec<&str> = errors.iter().map(|e| e.parameter.as_str()).collect();
    assert_eq!(
        parameters,
        ["code", "count", "mode"],
        "optional ratio and flag are not required"
    );
    assert!(errors.iter().all(|e| e.message.contains("is required")), "{errors:?}");
}

#[tokio::test]
async fn unknown_parameter_lists_the_parameters() {
    let engine = engine();
    one_invalid(
        &engine,
        with(valid_check(), "colour", json!("red")),
        "colour",
        &[
            "`check` has no parameter `colour`",
            "its parameters are: code, count, ratio, flag, mode",
        ],
    )
    .await;
    match invoke(&engine, "bare", VersionSelector::Latest, json!({"x": 1})).await {
        Err(Error::InvalidInput { errors, .. }) => {
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].parameter, "x");
            assert!(
                errors[0].message.contains("`bare` takes no parameters; remove `x`"),
                "{errors:?}"
            );
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[tokio::test]
async fn enum_value_not_allowed_lists_the_allowed_values() {
    let engine = engine();
    one_invalid(
        &engine,
        with(valid_check(), "mode", json!("fast")),
        "mode",
        &["`mode` expects one of FAST, SAFE", "\"fast\""],
    )
    .await;
}

#[tokio::test]
async fn int_out_of_range_is_reported() {
    let engine = engine();
    one_invalid(
        &engine,
        with(valid_check(), "count", json!(11)),
        "count",
        &["expects an integer from 1 to 10", "but got 11"],
    )
    .await;
    one_invalid(
        &engine,
        with(valid_check(), "count", json!(0)),
        "count",
        &["from 1 to 10", "but got 0"],
    )
    .await;
    // The bounds themselves are allowed.
    for n in [1, 10] {
        invoke(
            &engine,
            "check",
            VersionSelector::Latest,
            with(valid_check(), "count", json!(n)),
        )
        .await
        .expect("bound");
    }
}

#[tokio::test]
async fn string_over_max_length_is_reported() {
    let engine = engine();
    one_invalid(
        &engine,
        with(valid_check(), "code", json!("ABC")),
        "code",
        &["`code` expects a string of at most 2 characters", "\"ABC\""],
    )
    .await;
    let long = "Q".repeat(100);
    one_invalid(
        &engine,
        with(valid_check(), "code", json!(long)),
        "code",
        &["but got a string of 100 characters"],
    )
    .await;
}

#[tokio::test]
async fn pattern_mismatch_is_reported() {
    let engine = engine();
    one_invalid(
        &engine,
        with(valid_check(), "code", json!("ab")),
        "code",
        &["matching the pattern `^[A-Z]+$`", "\"ab\""],
    )
    .await;
}

#[tokio::test]
async fn several_bad_parameters_give_one_error_each_in_name_order() {
    let engine = engine();
    let errors = invalid(&engine, json!({"code": 1, "count": 99, "mode": "X", "zzz": true})).await;
    let parameters: Vec<&str> = errors.iter().map(|e| e.parameter.as_str()).collect();
    assert_eq!(parameters, ["code", "count", "mode", "zzz"], "{errors:?}");
    let err = Error::InvalidInput {
        tool: "check".into(),
        errors,
    };
    assert!(
        err.to_string()
            .starts_with("the input to `check` is not valid: `code` expects"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Running the backend

#[tokio::test]
async fn slow_backend_times_out() {
    let engine = engine();
    match invoke(&engine, "slow", VersionSelector::Latest, json!({})).await {
        Err(Error::Timeout { tool, after }) => {
            assert_eq!(tool, "slow");
            assert_eq!(after, Duration::from_millis(50));
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn delayed_backend_within_its_timeout_succeeds_and_reports_elapsed() {
    let engine = engine();
    let out = invoke(&engine, "quick", VersionSelector::Latest, json!({}))
        .await
        .expect("ok");
    assert!(out.elapsed >= Duration::from_millis(10), "{:?}", out.elapsed);
    assert!(out.output.is_empty());
}

#[tokio::test]
async fn wrong_output_shape_is_a_permanent_failure() {
    let engine = engine();
    match invoke(&engine, "misshapen", VersionSelector::Latest, json!({})).await {
        Err(Error::Failed { tool, failure }) => {
            assert_eq!(tool, "misshapen");
            assert!(!failure.retryable);
            assert!(
                failure.message.contains("does not match its declared outputs"),
                "{failure:?}"
            );
            assert!(
                !failure.message.contains("unexpected"),
                "the bad output is not passed on: {failure:?}"
            );
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[tokio::test]
async fn undeclared_output_keys_are_dropped() {
    // The engine keeps only declared outputs, so `wrong_shape` on a tool without outputs passes.
    let engine = Engine::new(clean(&tool(
        "loose",
        &[v("1.0.0").backend("{kind: native, function: testing.wrong_shape}")],
    )));
    let out = invoke(&engine, "loose", VersionSelector::Latest, json!({}))
        .await
        .expect("ok");
    assert!(out.output.is_empty(), "{:?}", out.output);
    // Echo of an input that is not an output is dropped too.
    let echo = Engine::new(clean(&tool(
        "echo",
        &[v("1.0.0")
            .input("a", "string", "")
            .input("b", "string", "")
            .output("a", "string", "")],
    )));
    let out = invoke(&echo, "echo", VersionSelector::Latest, json!({"a": "x", "b": "y"}))
        .await
        .expect("ok");
    assert_eq!(Value::Object(out.output), json!({"a": "x"}));
}

#[tokio::test]
async fn divide_by_zero_fails_with_a_prompt() {
    let catalog = Loader::default()
        .load(&toolhost_core::native::bundled_catalog())
        .unwrap_or_else(|p| panic!("{}", render(&p)));
    let engine = Engine::new(catalog);
    match invoke(
        &engine,
        "divide_numbers",
        VersionSelector::Latest,
        json!({"dividend": 1, "divisor": 0}),
    )
    .await
    {
        Err(Error::Failed { tool, failure }) => {
            assert_eq!(tool, "divide_numbers");
            assert_eq!(failure.message, "cannot divide by zero");
            assert!(!failure.retryable);
            assert!(
                failure
                    .prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("non-zero divisor")),
                "{failure:?}"
            );
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    let out = invoke(
        &engine,
        "divide_numbers",
        VersionSelector::Latest,
        json!({"dividend": 7, "divisor": 2}),
    )
    .await
    .expect("ok");
    assert_eq!(out.output.get("quotient"), Some(&json!(3.5)));
}

#[tokio::test]
async fn replace_serves_the_new_catalog() {
    let engine = engine();
    let held = engine.catalog();
    engine.replace(clean(&tool("nowcast", &[v("1.0.0")])));
    assert!(
        invoke(&engine, "nowcast", VersionSelector::Latest, json!({}))
            .await
            .is_ok()
    );
    assert!(matches!(
        invoke(&engine, "forecast", VersionSelector::Latest, json!({})).await,
        Err(Error::ToolNotFound { .. })
    ));
    assert!(
        held.find("forecast").is_some(),
        "a catalog taken before the swap stays intact"
    );
}

/// Issues #32.2, #38.2: an enum value with a wire `value` is, to the engine, the API's own
/// value both ways (a string, a number, an empty string): what protocols with JSON Schema show.
/// Names are N-ACT's projection, mapped by its adapter, so the engine refuses them.
#[tokio::test]
async fn enum_values_reach_the_backend_and_come_back_as_the_api_spells_them() {
    let values = r#"values: [{name: OPEN, description: Open., value: open}, {name: NEW_YORK, description: The city., value: "New York"}, {name: TWO, description: Two., value: 2}, {name: EMPTY, description: None., value: ""}]"#;
    let engine = Engine::new(clean(&crate::doc(&[
        // The output is `json`: what the backend received, as it received it.
        crate::t(
            "sent",
            &[v("1.0.0").input("status", "enum", values).output("status", "json", "")],
        ),
        crate::t(
            "round_trip",
            &[v("1.0.0")
                .input("status", "enum", values)
                .output("status", "enum", values)],
        ),
    ])));
    for wire in [json!("open"), json!("New York"), json!(2), json!("")] {
        let out = invoke(&engine, "sent", VersionSelector::Latest, json!({"status": wire}))
            .await
            .unwrap();
        assert_eq!(out.output["status"], wire);
        let out = invoke(&engine, "round_trip", VersionSelector::Latest, json!({"status": wire}))
            .await
            .unwrap();
        assert_eq!(out.output["status"], wire);
    }
    let Err(Error::InvalidInput { errors, .. }) =
        invoke(&engine, "sent", VersionSelector::Latest, json!({"status": "OPEN"})).await
    else {
        panic!("a name is not a value the engine takes");
    };
    assert!(errors[0].message.contains("open"), "{errors:?}");
}
