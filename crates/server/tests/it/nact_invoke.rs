//! Invocation: `POST …:invoke` for the current and a pinned version (N-ACT §7), with the bundled
//! `convert_length`, whose three versions show what each may add (N-ACT §5.4).

use serde_json::{Value, json};

use crate::support::{Spawn, invocation, outputs};

fn input_names(signature: &Value) -> Vec<&str> {
    signature["input_parameters"]
        .as_array()
        .expect("inputs")
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect()
}

fn output_names(signature: &Value) -> Vec<&str> {
    signature["output_parameters"]
        .as_array()
        .expect("outputs")
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect()
}

#[tokio::test]
async fn convert_length_signatures_grow_by_version() {
    let server = Spawn::bundled().start().await;
    let listed = server.get("/nact/tools/convert_length/versions").await.expect_ok();
    let numbers: Vec<&Value> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|s| &s["version"])
        .collect();
    assert_eq!(numbers, [3, 2, 1]);

    let v1 = server.get("/nact/tools/convert_length/versions/1").await.expect_ok();
    assert_eq!(input_names(&v1), ["value", "from", "to"], "1.0.0 has no `precision`");
    assert_eq!(output_names(&v1), ["value"]);
    assert_eq!(
        v1["input_parameters"][1]["allowed-values"].as_array().map(Vec::len),
        Some(7)
    );

    let v2 = server.get("/nact/tools/convert_length/versions/2").await.expect_ok();
    assert_eq!(
        input_names(&v2),
        ["value", "from", "to", "precision"],
        "1.1.0 adds an optional input"
    );
    let precision = &v2["input_parameters"][3];
    assert_eq!(precision["type"], "int");
    assert_eq!(precision["required"], false);
    assert_eq!(precision["min"], 0);
    assert_eq!(precision["max"], 12);
    assert_eq!(output_names(&v2), ["value"]);

    let v3 = server.get("/nact/tools/convert_length/versions/3").await.expect_ok();
    assert_eq!(input_names(&v3), ["value", "from", "to", "precision"]);
    // One output in every version: OTC answers a one-output tool with the bare value, so a
    // second output would break OTC callers (issue #31.2).
    assert_eq!(output_names(&v3), ["value"]);
    assert_eq!(
        v3["input_parameters"][1]["allowed-values"].as_array().map(Vec::len),
        Some(9),
        "and enum values"
    );
    for (v, semver) in [(&v1, "1.0.0"), (&v2, "1.1.0"), (&v3, "1.2.0")] {
        assert_eq!(v["currentVersion"], 3);
        assert_eq!(v["semver"], semver);
    }
}

#[tokio::test]
async fn the_current_version_runs_without_a_version_in_the_path() {
    let server = Spawn::bundled().start().await;
    let args = [
        ("value", json!(2)),
        ("from", json!("KILOMETRE")),
        ("to", json!("METRE")),
    ];
    let result = server.invoke("/nact/tools/convert_length", &args).await.expect_ok();
    assert_eq!(outputs(&result), [("value".to_owned(), json!(2000))]);
    assert_eq!(result["version"], 3, "the version that ran");
}

#[tokio::test]
async fn version_1_returns_only_its_declared_output() {
    let server = Spawn::bundled().start().await;
    let args = [
        ("value", json!(3)),
        ("from", json!("KILOMETRE")),
        ("to", json!("METRE")),
    ];
    let result = server
        .invoke("/nact/tools/convert_length/versions/1", &args)
        .await
        .expect_ok();
    // The backend also answers `unit`; no version declares it, so it is not passed on.
    assert_eq!(outputs(&result), [("value".to_owned(), json!(3000))]);
    assert_eq!(result["version"], 1);
}

#[tokio::test]
async fn version_1_does_not_take_precision() {
    let server = Spawn::bundled().start().await;
    let args = [
        ("value", json!(1)),
        ("from", json!("FOOT")),
        ("to", json!("METRE")),
        ("precision", json!(2)),
    ];
    let errors = server
        .invoke("/nact/tools/convert_length/versions/1", &args)
        .await
        .expect_invalid(&["precision"]);
    let message = errors["precision"].as_str().unwrap_or_default();
    assert!(
        message.contains("value, from, to"),
        "the message lists the parameters there are: {message}"
    );
}

#[tokio::test]
async fn version_2_rounds_with_precision() {
    let server = Spawn::bundled().start().await;
    let args = [
        ("value", json!(1)),
        ("from", json!("FOOT")),
        ("to", json!("METRE")),
        ("precision", json!(1)),
    ];
    let result = server
        .invoke("/nact/tools/convert_length/versions/2", &args)
        .await
        .expect_ok();
    assert_eq!(outputs(&result), [("value".to_owned(), json!(0.3))]);
    let unrounded = server
        .invoke("/nact/tools/convert_length/versions/2", &args[..3])
        .await
        .expect_ok();
    assert_eq!(
        outputs(&unrounded),
        [("value".to_owned(), json!(0.3048))],
        "precision is optional"
    );
}

#[tokio::test]
async fn version_3_accepts_units_that_earlier_versions_refuse() {
    let server = Spawn::bundled().start().await;
    let args = [("value", json!(1)), ("from", json!("YARD")), ("to", json!("FOOT"))];
    let result = server
        .invoke("/nact/tools/convert_length/versions/3", &args)
        .await
        .expect_ok();
    assert_eq!(outputs(&result), [("value".to_owned(), json!(3))]);
    let errors = server
        .invoke("/nact/tools/convert_length/versions/2", &args)
        .await
        .expect_invalid(&["from"]);
    assert!(
        !errors["from"].as_str().unwrap_or_default().contains("YARD,"),
        "v2's allowed values do not include YARD"
    );
}

#[tokio::test]
async fn outputs_come_in_the_signature_order() {
    let server = Spawn::bundled().start().await;
    let signature = server.get("/nact/tools/count_words_in_text").await.expect_ok();
    let declared = output_names(&signature);
    assert_eq!(declared, ["words", "characters", "top_words", "unique_words"]);
    let args = [("text", json!("the cat and the hat")), ("count_unique", json!(true))];
    let result = server
        .invoke("/nact/tools/count_words_in_text", &args)
        .await
        .expect_ok();
    let got = outputs(&result);
    let got_names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        got_names, declared,
        "not alphabetical, not the backend's order: the signature's"
    );
    assert_eq!(got[0].1, 5);
    assert_eq!(got[1].1, 19);
    assert_eq!(got[2].1[0], json!({"word": "the", "count": 2}));
    assert_eq!(got[3].1, 4);

    // An optional output the tool leaves out is simply absent.
    let result = server
        .invoke("/nact/tools/count_words_in_text", &args[..1])
        .await
        .expect_ok();
    let got: Vec<String> = outputs(&result).into_iter().map(|(n, _)| n).collect();
    assert_eq!(got, ["words", "characters", "top_words"]);
}

#[tokio::test]
async fn a_name_in_the_body_that_matches_the_tool_is_accepted() {
    let server = Spawn::bundled().start().await;
    let id = server.tool_id("add_numbers");
    let body = invocation(Some("add_numbers"), &[("a", json!(2)), ("b", json!(3.5))]);
    for path in [
        "/nact/tools/add_numbers:invoke",
        format!("/nact/tools/{id}:invoke").as_str(),
        "/nact/tools/add_numbers/versions/1:invoke",
    ] {
        let result = server.post_json(path, &body).await.expect_ok();
        assert_eq!(outputs(&result), [("sum".to_owned(), json!(5.5))], "{path}");
    }
}

#[tokio::test]
async fn a_tool_is_invoked_by_uuid() {
    let server = Spawn::bundled().start().await;
    let id = server.tool_id("convert_text_case");
    let args = [("text", json!("hello big world")), ("case", json!("KEBAB"))];
    let current = server.invoke(&format!("/nact/tools/{id}"), &args).await.expect_ok();
    assert_eq!(outputs(&current), [("text".to_owned(), json!("hello-big-world"))]);
    let pinned = server
        .invoke(&format!("/nact/tools/{id}/versions/2"), &args)
        .await
        .expect_ok();
    assert_eq!(pinned["version"], 2);
    // KEBAB arrived in version 2 (1.1.0).
    server
        .invoke(&format!("/nact/tools/{id}/versions/1"), &args)
        .await
        .expect_invalid(&["case"]);
}

#[tokio::test]
async fn optional_inputs_may_be_left_out_and_name_may_be_absent() {
    let server = Spawn::bundled().start().await;
    let body = json!({ "input_parameters": [{ "name": "text", "value": "one two" }] });
    let result = server
        .post_json("/nact/tools/count_words_in_text:invoke", &body)
        .await
        .expect_ok();
    assert_eq!(outputs(&result)[0], ("words".to_owned(), json!(2)));
    let result = server
        .invoke("/nact/tools/lookup_country_by_code", &[("code", json!("JP"))])
        .await
        .expect_ok();
    assert_eq!(
        outputs(&result),
        [
            ("code".to_owned(), json!("JP")),
            ("name".to_owned(), json!("Japan")),
            ("capital".to_owned(), json!("Tokyo"))
        ]
    );
}

#[tokio::test]
async fn an_integral_float_for_an_int_parameter_is_honoured() {
    let server = Spawn::bundled().start().await;
    let args = [
        ("value", json!(1)),
        ("from", json!("FOOT")),
        ("to", json!("METRE")),
        ("precision", json!(1.0)),
    ];
    let result = server
        .invoke("/nact/tools/convert_length/versions/2", &args)
        .await
        .expect_ok();
    assert_eq!(
        outputs(&result),
        [("value".to_owned(), json!(0.3))],
        "1.0 passes validation as an integer, so it must round"
    );
}

/// Issue #22.2 (N-ACT §5, §6.1): only N-ACT's types on the N-ACT surface. A number input is a
/// `string` holding a decimal (`format: decimal`, with a pattern), read back as a number on
/// invoke (a JSON number is taken too); number and boolean outputs are `json`.
#[tokio::test]
async fn only_nact_types_are_served_and_decimals_are_read_as_numbers() {
    let server = Spawn::bundled().start().await;
    let page = server.get("/nact/tools?pageLimit=500").await.expect_ok();
    let mut seen_decimal = false;
    for tool in page["items"].as_array().unwrap() {
        for input in tool["input_parameters"].as_array().unwrap() {
            let kind = input["type"].as_str().unwrap();
            assert!(
                ["string", "int", "boolean", "enum"].contains(&kind),
                "{}: {input}",
                tool["name"]
            );
            seen_decimal |= input["format"] == "decimal";
        }
        for output in tool["output_parameters"].as_array().unwrap() {
            let kind = output["type"].as_str().unwrap();
            assert!(
                ["string", "int", "enum", "json"].contains(&kind),
                "{}: {output}",
                tool["name"]
            );
        }
    }
    assert!(seen_decimal, "the bundled catalog has number inputs: {page}");

    for (a, b) in [
        (json!("2.5"), json!("-0.5")),
        (json!(2.5), json!(-0.5)),
        (json!("1e1"), json!(0)),
    ] {
        let result = server
            .post_json(
                "/nact/tools/add_numbers:invoke",
                &invocation(None, &[("a", a.clone()), ("b", b.clone())]),
            )
            .await
            .expect_ok();
        let sum = outputs(&result)[0].1.as_f64().unwrap();
        let expected = a.as_str().map_or_else(|| a.as_f64().unwrap(), |s| s.parse().unwrap())
            + b.as_str().map_or_else(|| b.as_f64().unwrap(), |s| s.parse().unwrap());
        assert_eq!(sum, expected, "{a} + {b}");
    }
    server
        .post_json(
            "/nact/tools/add_numbers:invoke",
            &invocation(None, &[("a", json!("two")), ("b", json!(1))]),
        )
        .await
        .expect_invalid(&["a"]);
}

/// Issue #22.2 (N-ACT §6.1: one or more outputs): a version that declares it returns nothing
/// shows one `json` output `result` on N-ACT, and a call answers it with `null`.
#[tokio::test]
async fn a_tool_that_returns_nothing_shows_one_null_output() {
    let yaml = "toolkits:\n  - name: Doorbell\n    tools:\n      - name: ring\n        description: Rings a doorbell.\n        versions:\n          - version: 1.0.0\n            inputs: [{ name: doorbell_id, description: The doorbell. }]\n            returns_nothing: true\n            backend: { kind: native, function: testing.echo }\n";
    let server = Spawn::new(vec![toolhost_core::catalog::Source {
        name: "ring.yaml".into(),
        text: yaml.into(),
    }])
    .start()
    .await;
    let signature = server.get("/nact/tools/ring").await.expect_ok();
    assert_eq!(
        signature["output_parameters"],
        json!([{"id": "result", "name": "result", "type": "json", "required": true,
                "description": "The tool returns nothing; this is null when the call succeeded."}])
    );
    let result = server
        .post_json(
            "/nact/tools/ring:invoke",
            &invocation(None, &[("doorbell_id", json!("front"))]),
        )
        .await
        .expect_ok();
    assert_eq!(outputs(&result), vec![("result".to_owned(), Value::Null)]);
}
