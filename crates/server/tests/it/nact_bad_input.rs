//! Invocation bodies that are wrong: malformed (400) or with invalid parameters (422, with an
//! `errors` member naming each parameter; docs/protocols.md §3).

use serde_json::json;

use crate::support::{Spawn, invocation};

const CONVERT: &str = "/nact/tools/convert_length:invoke";

fn detail(problem: &serde_json::Value) -> &str {
    problem["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn malformed_json_is_400() {
    let server = Spawn::bundled().start().await;
    for body in [
        r#"{"input_parameters": ["#,
        r#"{"input_parameters": [],}"#,
        "{name: 1}",
        r#"{"input_parameters" []}"#,
        "{\"input_parameters\": [{\"name\": \"value\", \"value\": 1}]",
    ] {
        let problem = server
            .post(CONVERT, Some("application/json"), body)
            .await
            .expect_problem(400);
        assert!(detail(&problem).contains("not valid JSON"), "{body}: {problem}");
        assert!(problem.get("errors").is_none());
    }
}

#[tokio::test]
async fn an_empty_body_is_400() {
    let server = Spawn::bundled().start().await;
    let problem = server
        .post(CONVERT, Some("application/json"), "")
        .await
        .expect_problem(400);
    assert!(detail(&problem).contains("empty"), "{problem}");
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_400() {
    let server = Spawn::bundled().start().await;
    for body in [
        "[]",
        r#"[{"name": "value", "value": 1}]"#,
        r#""text""#,
        "42",
        "null",
        "true",
    ] {
        let problem = server
            .post(CONVERT, Some("application/json"), body)
            .await
            .expect_problem(400);
        assert!(detail(&problem).contains("JSON object"), "{body}: {problem}");
    }
}

#[tokio::test]
async fn input_parameters_of_the_wrong_shape_are_400() {
    let server = Spawn::bundled().start().await;
    for body in [
        json!({ "input_parameters": { "value": 1 } }),
        json!({ "input_parameters": [{ "name": "value" }] }),
        json!({ "input_parameters": [{ "value": 1 }] }),
        json!({ "input_parameters": [{ "name": 7, "value": 1 }] }),
        json!({ "name": 5, "input_parameters": [] }),
    ] {
        let problem = server.post_json(CONVERT, &body).await.expect_problem(400);
        assert!(detail(&problem).contains("expected shape"), "{body}: {problem}");
    }
}

#[tokio::test]
async fn an_unknown_field_in_the_body_is_400_naming_it() {
    let server = Spawn::bundled().start().await;
    let body = json!({ "input_parameters": [], "version": 2 });
    let problem = server.post_json(CONVERT, &body).await.expect_problem(400);
    assert!(detail(&problem).contains("unknown field `version`"), "{problem}");
    let body = json!({ "input_parameters": [{ "name": "value", "value": 1, "id": "value" }] });
    let problem = server.post_json(CONVERT, &body).await.expect_problem(400);
    assert!(detail(&problem).contains("unknown field `id`"), "{problem}");
}

#[tokio::test]
async fn wrong_json_types_are_422_per_parameter() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke("/nact/tools/add_numbers", &[("a", json!("one")), ("b", json!(true))])
        .await;
    let errors = reply.expect_invalid(&["a", "b"]);
    assert!(
        errors["a"].as_str().unwrap_or_default().contains("a number"),
        "{errors:?}"
    );
    assert!(
        errors["a"].as_str().unwrap_or_default().contains("\"one\""),
        "says what it got: {errors:?}"
    );

    let reply = server
        .invoke(
            "/nact/tools/convert_length",
            &[("value", json!([1])), ("from", json!(1)), ("to", json!({}))],
        )
        .await;
    reply.expect_invalid(&["value", "from", "to"]);

    let reply = server
        .invoke(
            "/nact/tools/count_words_in_text",
            &[("text", json!("x")), ("count_unique", json!("yes"))],
        )
        .await;
    let errors = reply.expect_invalid(&["count_unique"]);
    assert!(
        errors["count_unique"]
            .as_str()
            .unwrap_or_default()
            .contains("true or false")
    );

    let reply = server
        .invoke(
            "/nact/tools/convert_length/versions/2",
            &[
                ("value", json!(1)),
                ("from", json!("METRE")),
                ("to", json!("METRE")),
                ("precision", json!(1.5)),
            ],
        )
        .await;
    reply.expect_invalid(&["precision"]);
}

#[tokio::test]
async fn null_for_a_required_parameter_is_422() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke("/nact/tools/add_numbers", &[("a", json!(null)), ("b", json!(1))])
        .await;
    reply.expect_invalid(&["a"]);
}

#[tokio::test]
async fn an_unknown_parameter_is_422() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke(
            "/nact/tools/add_numbers",
            &[("a", json!(1)), ("b", json!(2)), ("c", json!(3))],
        )
        .await;
    let errors = reply.expect_invalid(&["c"]);
    assert!(
        errors["c"].as_str().unwrap_or_default().contains("a, b"),
        "lists the parameters there are: {errors:?}"
    );
}

#[tokio::test]
async fn a_parameter_given_twice_is_422() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke(
            "/nact/tools/add_numbers",
            &[("a", json!(1)), ("b", json!(2)), ("a", json!(1))],
        )
        .await;
    let errors = reply.expect_invalid(&["a"]);
    assert!(
        errors["a"].as_str().unwrap_or_default().contains("more than once"),
        "{errors:?}"
    );
}

#[tokio::test]
async fn a_missing_required_parameter_is_422() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke(
            "/nact/tools/convert_length",
            &[("value", json!(1)), ("from", json!("METRE"))],
        )
        .await;
    let errors = reply.expect_invalid(&["to"]);
    assert!(
        errors["to"].as_str().unwrap_or_default().contains("required"),
        "{errors:?}"
    );

    // No input_parameters at all: every required parameter is reported.
    let reply = server.post_json(CONVERT, &json!({})).await;
    reply.expect_invalid(&["value", "from", "to"]);
}

#[tokio::test]
async fn an_enum_value_that_is_not_allowed_is_422_listing_the_allowed_ones() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke(
            "/nact/tools/convert_length",
            &[("value", json!(1)), ("from", json!("LEAGUE")), ("to", json!("metre"))],
        )
        .await;
    let errors = reply.expect_invalid(&["from", "to"]);
    for name in ["from", "to"] {
        let message = errors[name].as_str().unwrap_or_default();
        for allowed in ["MILLIMETRE", "METRE", "YARD", "NAUTICAL_MILE"] {
            assert!(message.contains(allowed), "`{name}` lists {allowed}: {message}");
        }
    }
    assert!(
        errors["from"].as_str().unwrap_or_default().contains("LEAGUE"),
        "says what it got"
    );
}

#[tokio::test]
async fn an_out_of_range_int_is_422() {
    let server = Spawn::bundled().start().await;
    for precision in [json!(13), json!(-1), json!(100000)] {
        let args = [
            ("value", json!(1)),
            ("from", json!("METRE")),
            ("to", json!("FOOT")),
            ("precision", precision.clone()),
        ];
        let errors = server
            .invoke("/nact/tools/convert_length", &args)
            .await
            .expect_invalid(&["precision"]);
        let message = errors["precision"].as_str().unwrap_or_default();
        assert!(message.contains("from 0 to 12"), "{precision}: {message}");
    }
}

#[tokio::test]
async fn a_string_over_its_max_length_is_422() {
    let server = Spawn::bundled().start().await;
    let long = "a".repeat(10_001);
    let reply = server
        .invoke(
            "/nact/tools/convert_text_case",
            &[("text", json!(long)), ("case", json!("UPPER"))],
        )
        .await;
    let errors = reply.expect_invalid(&["text"]);
    let message = errors["text"].as_str().unwrap_or_default();
    assert!(message.contains("at most 10000 characters"), "{message}");
    assert!(
        message.len() < 300,
        "the value is not echoed back whole: {} bytes",
        message.len()
    );

    let reply = server
        .invoke("/nact/tools/lookup_country_by_code", &[("code", json!("FRA"))])
        .await;
    reply.expect_invalid(&["code"]);
    // Exactly at the limit is fine.
    let reply = server
        .invoke(
            "/nact/tools/convert_text_case",
            &[("text", json!("é".repeat(10_000))), ("case", json!("UPPER"))],
        )
        .await;
    reply.expect_ok();
}

#[tokio::test]
async fn a_string_that_does_not_match_its_pattern_is_422() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke("/nact/tools/lookup_country_by_code", &[("code", json!("fr"))])
        .await;
    let errors = reply.expect_invalid(&["code"]);
    assert!(
        errors["code"].as_str().unwrap_or_default().contains("^[A-Z]{2}$"),
        "{errors:?}"
    );
}

#[tokio::test]
async fn every_invalid_parameter_is_reported_at_once() {
    let server = Spawn::bundled().start().await;
    let args = [
        ("value", json!("ten")),
        ("from", json!("LEAGUE")),
        ("precision", json!(99)),
        ("colour", json!("red")),
    ];
    let reply = server.invoke("/nact/tools/convert_length", &args).await;
    let problem = reply.expect_problem(422);
    assert!(detail(&problem).contains("5 parameters"), "{problem}");
    reply.expect_invalid(&["value", "from", "to", "precision", "colour"]);
}

#[tokio::test]
async fn a_name_that_disagrees_with_the_path_is_400() {
    let server = Spawn::bundled().start().await;
    let body = invocation(Some("add_numbers"), &[("a", json!(1)), ("b", json!(2))]);
    for path in [
        "/nact/tools/divide_numbers:invoke",
        "/nact/tools/divide_numbers/versions/1:invoke",
    ] {
        let problem = server.post_json(path, &body).await.expect_problem(400);
        let detail = detail(&problem);
        assert!(
            detail.contains("add_numbers") && detail.contains("divide_numbers"),
            "names both tools: {detail}"
        );
        assert!(detail.contains("name"), "{detail}");
    }
    // A case variant of the name is a different name.
    let body = invocation(Some("ADD_NUMBERS"), &[("a", json!(1)), ("b", json!(2))]);
    server
        .post_json("/nact/tools/add_numbers:invoke", &body)
        .await
        .expect_problem(400);
}
