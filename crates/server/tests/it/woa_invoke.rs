//! WoA invocation over the REST transport (draft-gaikwad-woa-00 §5, docs/protocols.md §5): the
//! draft's Appendix B flow, every envelope rule, and the error taxonomy shared with N-ACT.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use crate::support::{Reply, Spawn, failures, with_failing_functions};
use crate::woa_document::{agent, client, fetch, send};

/// An input for each bundled agent, with something to check in its output.
fn samples() -> Vec<(&'static str, Value, Value)> {
    vec![
        ("add_numbers", json!({"a": 2, "b": 40.5}), json!({"sum": 42.5})),
        (
            "divide_numbers",
            json!({"dividend": 9, "divisor": 4}),
            json!({"quotient": 2.25}),
        ),
        (
            "count_words_in_text",
            json!({"text": "The IETF is an open community of designers.", "count_unique": true}),
            json!({"words": 8}),
        ),
        (
            "convert_text_case",
            json!({"text": "web of agents", "case": "KEBAB"}),
            json!({"text": "web-of-agents"}),
        ),
        (
            "convert_length",
            json!({"value": 1, "from": "KILOMETRE", "to": "METRE"}),
            json!({"value": 1000}),
        ),
        (
            "lookup_country_by_code",
            json!({"code": "FR"}),
            json!({"capital": "Paris"}),
        ),
    ]
}

/// Appendix B: fetch the document, find the agent, build `base` + `invoke_path`, invoke with the
/// envelope, and validate the response against the agent's `outputs` (§4.2 lets a client do
/// both validations). Done for every bundled agent.
#[tokio::test]
async fn appendix_b_flow_for_every_agent() {
    let server = Spawn::bundled().start().await;
    let (document, _) = fetch(&server).await;
    let samples = samples();
    assert_eq!(
        samples.len(),
        document["agents"].as_array().unwrap().len(),
        "a sample per agent"
    );
    let rest = &document["transports"]["rest"];
    for (id, input, expected) in samples {
        let agent = agent(&document, id);
        assert!(
            agent["transports"].as_array().unwrap().contains(&json!("rest")),
            "{id} supports rest"
        );
        let inputs = jsonschema::validator_for(&agent["inputs"]).unwrap();
        assert!(inputs.is_valid(&input), "the sample input of {id} fits `inputs`");
        let url = format!(
            "{}{}",
            rest["base"].as_str().unwrap(),
            rest["invoke_path"].as_str().unwrap().replace("{agent_id}", id)
        );
        let reply = send(
            client()
                .post(url)
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json")
                .body(json!({"agent": id, "operation": "default", "input": input}).to_string()),
        )
        .await;
        let output = reply.expect_ok();
        let outputs = jsonschema::validator_for(&agent["outputs"]).unwrap();
        let errors: Vec<String> = outputs.iter_errors(&output).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{id}: {output} does not fit `outputs`: {errors:?}");
        for (key, value) in expected.as_object().unwrap() {
            assert_eq!(&output[key], value, "{id}: {output}");
        }
    }
}

#[tokio::test]
async fn agent_and_operation_may_be_left_out() {
    let server = Spawn::bundled().start().await;
    let path = "/woa/agents/add_numbers/invoke";
    for envelope in [
        json!({"input": {"a": 1, "b": 2}}),
        json!({"agent": "add_numbers", "input": {"a": 1, "b": 2}}),
        json!({"operation": "default", "input": {"a": 1, "b": 2}}),
        json!({"agent": null, "operation": null, "input": {"a": 1, "b": 2}}),
    ] {
        assert_eq!(
            server.post_json(path, &envelope).await.expect_ok(),
            json!({"sum": 3}),
            "{envelope}"
        );
    }
}

/// §5.1: "Transports MAY add additional fields to the invocation envelope": a member toolhost
/// does not know is another transport's extension, not a 400 (issue #37.16). Its own `version`
/// extension still pins.
#[tokio::test]
async fn envelope_fields_of_other_transports_are_ignored() {
    let server = Spawn::bundled().start().await;
    let path = "/woa/agents/add_numbers/invoke";
    for envelope in [
        json!({"agent": "add_numbers", "input": {"a": 1, "b": 2}, "trace_id": "abc"}),
        json!({"input": {"a": 1, "b": 2}, "com.example.priority": {"level": 3}, "operation": "default"}),
        json!({"input": {"a": 1, "b": 2}, "version": "1.0.0", "x-extension": [1, 2]}),
    ] {
        assert_eq!(
            server.post_json(path, &envelope).await.expect_ok(),
            json!({"sum": 3}),
            "{envelope}"
        );
    }
}

/// §5.2: "the host MUST reject the request with HTTP status 400".
#[tokio::test]
async fn a_different_agent_in_the_envelope_is_400() {
    let server = Spawn::bundled().start().await;
    let problem = server
        .post_json(
            "/woa/agents/add_numbers/invoke",
            &json!({"agent": "divide_numbers", "input": {"a": 1, "b": 2}}),
        )
        .await
        .expect_problem(400);
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("divide_numbers") && detail.contains("add_numbers"),
        "{detail}"
    );
}

#[tokio::test]
async fn an_operation_other_than_default_is_400() {
    let server = Spawn::bundled().start().await;
    for operation in [json!("summarize"), json!("Default"), json!("")] {
        let problem = server
            .post_json(
                "/woa/agents/add_numbers/invoke",
                &json!({"operation": operation, "input": {"a": 1, "b": 2}}),
            )
            .await
            .expect_problem(400);
        assert!(problem["detail"].as_str().unwrap().contains("default"), "{problem}");
    }
    server
        .post_json(
            "/woa/agents/add_numbers/invoke",
            &json!({"operation": 1, "input": {"a": 1, "b": 2}}),
        )
        .await
        .expect_problem(400);
}

#[tokio::test]
async fn version_pins_a_served_version() {
    let server = Spawn::bundled().start().await;
    let path = "/woa/agents/convert_length/invoke";
    let input = json!({"value": 1, "from": "YARD", "to": "FOOT"});
    let latest = server.post_json(path, &json!({"input": input})).await.expect_ok();
    assert_eq!(latest, json!({"value": 3}), "1.2.0 adds `YARD`");
    server
        .post_json(path, &json!({"input": input, "version": "1.0.0"}))
        .await
        .expect_invalid(&["from"]);
    let input = json!({"value": 1, "from": "KILOMETRE", "to": "METRE"});
    let first = server
        .post_json(path, &json!({"input": input, "version": "1.0.0"}))
        .await
        .expect_ok();
    assert_eq!(first, json!({"value": 1000}), "the backend's `unit` is not declared");
    // 1.1.0 adds the optional `precision`; 1.0.0 does not know it.
    server
        .post_json(
            path,
            &json!({"input": {"value": 1, "from": "MILE", "to": "METRE", "precision": 2}, "version": "1.0.0"}),
        )
        .await
        .expect_invalid(&["precision"]);

    let problem = server
        .post_json(path, &json!({"input": input, "version": "9.9.9"}))
        .await
        .expect_problem(404);
    assert_eq!(problem["type"], "urn:toolhost:problem:unknown-version");
    assert!(
        problem["detail"].as_str().unwrap().contains("1.2.0"),
        "lists what is served: {problem}"
    );
    // `1` is 1.0.0 on every protocol, as OTC's `@1` (issue #12.11).
    server
        .post_json(path, &json!({"input": input, "version": "1"}))
        .await
        .expect_ok();
    for version in [
        json!("v1.0.0"),
        json!("latest"),
        json!("01.0.0"),
        json!(1),
        json!([1, 0, 0]),
    ] {
        server
            .post_json(path, &json!({"input": input, "version": version}))
            .await
            .expect_problem(400);
    }
}

#[tokio::test]
async fn input_must_be_an_object() {
    let server = Spawn::bundled().start().await;
    let path = "/woa/agents/add_numbers/invoke";
    let problem = server
        .post_json(path, &json!({"agent": "add_numbers"}))
        .await
        .expect_problem(400);
    assert!(problem["detail"].as_str().unwrap().contains("no `input`"), "{problem}");
    for input in [json!([1, 2]), json!("a=1"), json!(3), json!(true), json!(null)] {
        let problem = server
            .post_json(path, &json!({"input": input}))
            .await
            .expect_problem(400);
        let detail = problem["detail"].as_str().unwrap();
        // null reads as "no input", like an absent member.
        assert!(detail.contains("object"), "{input}: {detail}");
    }
    // A tool without inputs takes `{}`.
    let server = with_failing_functions(Spawn::new(vec![failures()])).start().await;
    let reply = server
        .post_json("/woa/agents/misshapen_tool/invoke", &json!({"input": {}}))
        .await;
    reply.expect_problem(502);
}

/// The input is validated against `inputs` by the engine: 422 with a message per input.
#[tokio::test]
async fn input_that_breaks_the_inputs_schema_is_422() {
    let server = Spawn::bundled().start().await;
    let errors = server
        .post_json("/woa/agents/add_numbers/invoke", &json!({"input": {"a": "one"}}))
        .await
        .expect_invalid(&["a", "b"]);
    assert!(errors["a"].as_str().unwrap().contains("number"), "{errors:?}");
    server
        .post_json(
            "/woa/agents/add_numbers/invoke",
            &json!({"input": {"a": 1, "b": 2, "c": 3}}),
        )
        .await
        .expect_invalid(&["c"]);
    let problem = server
        .post_json(
            "/woa/agents/lookup_country_by_code/invoke",
            &json!({"input": {"code": "fr"}}),
        )
        .await
        .expect_problem(422);
    assert_eq!(problem["retryable"], false);
    assert!(problem["errors"]["code"].is_string(), "{problem}");
}

#[tokio::test]
async fn an_unknown_agent_is_404() {
    let server = Spawn::bundled().start().await;
    let uuid = server.tool_id("add_numbers");
    for agent in ["no_such_agent", uuid.as_str(), "ADD_NUMBERS"] {
        let problem = server
            .post_json(&format!("/woa/agents/{agent}/invoke"), &json!({"input": {}}))
            .await
            .expect_problem(404);
        assert_eq!(problem["type"], "urn:toolhost:problem:unknown-agent", "{agent}");
        assert!(problem["detail"].as_str().unwrap().contains(agent), "{problem}");
        assert_eq!(problem["retryable"], false);
    }
}

#[tokio::test]
async fn a_body_that_is_not_an_envelope_is_400_or_415() {
    let server = Spawn::bundled().start().await;
    let path = "/woa/agents/add_numbers/invoke";
    let post = |content_type: Option<&'static str>, body: &'static str| server.post(path, content_type, body);
    for body in ["{\"input\": {\"a\": 1,", "{input: {}}", "{\"input\": {}} trailing"] {
        let problem = post(Some("application/json"), body).await.expect_problem(400);
        assert!(
            problem["detail"].as_str().unwrap().contains("not valid JSON"),
            "{body}: {problem}"
        );
    }
    for body in ["", "  ", "[]", "\"input\"", "null"] {
        post(Some("application/json"), body).await.expect_problem(400);
    }
    post(Some("application/json"), r#"{"agent": 7, "input": {}}"#)
        .await
        .expect_problem(400);

    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let problem = post(content_type, r#"{"input": {"a": 1, "b": 2}}"#)
            .await
            .expect_problem(415);
        assert!(
            problem["detail"].as_str().unwrap().contains("application/json"),
            "{problem}"
        );
    }
    let reply: Reply = post(
        Some("application/json; charset=utf-8"),
        r#"{"input": {"a": 1, "b": 2}}"#,
    )
    .await;
    assert_eq!(reply.expect_ok(), json!({"sum": 3}));
}

#[tokio::test]
async fn wrong_methods_are_405() {
    let server = Spawn::bundled().start().await;
    server.get("/woa/agents/add_numbers/invoke").await.expect_problem(405);
    server
        .post_json("/.well-known/woa.json", &json!({}))
        .await
        .expect_problem(405);
}

/// The same taxonomy as N-ACT: a permanent failure 422 (WoA §5.2: not a 5xx), an unknown
/// outcome 409, an unusable answer 502, 503 with `Retry-After`, 504 (issues #12, #22.3).
#[tokio::test]
async fn tool_failures_are_problems_with_the_retry_signal_in_the_status() {
    let server = with_failing_functions(Spawn::bundled().with_sources(vec![failures()]))
        .start()
        .await;
    let server = &server;
    let invoke = |agent: &str, input: Value| {
        let path = format!("/woa/agents/{agent}/invoke");
        async move { server.post_json(&path, &json!({ "input": input })).await }
    };
    let reply = invoke("divide_numbers", json!({"dividend": 1, "divisor": 0})).await;
    let problem = reply.expect_problem(422);
    assert_eq!(problem["retryable"], false);
    assert_eq!(problem["type"], "urn:toolhost:problem:tool-failed");
    assert!(
        problem["prompt"]
            .as_str()
            .unwrap_or_default()
            .contains("non-zero divisor"),
        "{problem}"
    );

    let problem = invoke("uncertain_tool", json!({})).await.expect_problem(409);
    assert_eq!(problem["retryable"], false);
    assert_eq!(problem["type"], "urn:toolhost:problem:outcome-unknown");
    assert!(
        problem["prompt"].as_str().unwrap_or_default().contains("checked"),
        "{problem}"
    );

    let reply = invoke("busy_tool", json!({})).await;
    let problem = reply.expect_problem(503);
    assert_eq!(problem["retryable"], true);
    assert_eq!(reply.header("retry-after"), Some("2"));
    let reply = invoke("flaky_tool", json!({})).await;
    reply.expect_problem(503);
    assert_eq!(reply.header("retry-after"), Some("1"), "503 always carries Retry-After");

    let problem = invoke("slow_tool", json!({"text": "x"})).await.expect_problem(504);
    assert_eq!(problem["retryable"], true);
    let problem = invoke("misshapen_tool", json!({})).await.expect_problem(502);
    assert!(
        !problem["detail"].as_str().unwrap().contains("answer"),
        "internals stay in the log: {problem}"
    );
}

/// Issue #22.7 (WoA §5.2): a call pinned to an older version answers in a shape the document's
/// `outputs` schema allows: only outputs every served version returns are required there.
#[tokio::test]
async fn a_pinned_answer_fits_the_advertised_outputs() {
    let server = Spawn::bundled().start().await;
    let document = server.get("/.well-known/woa.json").await.json();
    let agent = document["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "convert_length")
        .unwrap()
        .clone();
    let required: Vec<&str> = agent["outputs"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let input = serde_json::json!({"value": 1, "from": "KILOMETRE", "to": "METRE"});
    for version in ["1.0.0", "1.1.0", "1.2.0"] {
        let answer = server
            .post_json(
                "/woa/agents/convert_length/invoke",
                &serde_json::json!({"input": input, "version": version}),
            )
            .await
            .expect_ok();
        for name in &required {
            assert!(
                answer.get(*name).is_some(),
                "{version} lacks required `{name}`: {answer}"
            );
        }
        for key in answer.as_object().unwrap().keys() {
            assert!(
                agent["outputs"]["properties"].get(key).is_some(),
                "{version}: `{key}` is not advertised"
            );
        }
    }
    assert_eq!(required, ["value"], "what every version returns");
}
