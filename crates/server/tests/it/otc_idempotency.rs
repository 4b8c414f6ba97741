//! `call_id` as the idempotency key (schemas-call-tool-request.mdx, docs/protocols.md §4): a repeat
//! with the same input returns the first result without running the tool again, also while the
//! first call still runs; with other input it is 400; refusals are not remembered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};
use toolhost_core::{CallContext, ToolFailure};

use crate::support::otc::{SCHEMA, message};
use crate::support::{Server, Spawn, yaml};

/// `Counting.Run` answers at once; `Counting.Slow` takes 200 ms. Both return their text and how
/// many times the function has run.
const COUNTING: &str = r#"toolkits:
  - name: Counting
    tools:
      - name: Run
        description: Counts its runs.
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text. }]
            outputs:
              - { name: text, type: string, description: The same text. }
              - { name: run, type: int, description: How many runs so far. }
            backend: { kind: native, function: counting.run }
      - name: Slow
        description: Counts its runs, slowly.
        versions:
          - version: 1.0.0
            inputs: [{ name: text, description: Any text. }]
            outputs:
              - { name: text, type: string, description: The same text. }
              - { name: run, type: int, description: How many runs so far. }
            backend: { kind: native, function: counting.run, delay_ms: 200 }
      - name: Pair
        description: Counts its runs, with a number beside the text.
        versions:
          - version: 1.0.0
            inputs:
              - { name: text, description: Any text. }
              - { name: n, type: number, description: Any number. }
            outputs:
              - { name: text, type: string, description: The same text. }
              - { name: run, type: int, description: How many runs so far. }
            backend: { kind: native, function: counting.run }
"#;

/// One run counter per test, so tests running in parallel do not count each other's runs.
static RUNS: [AtomicUsize; 10] = [const { AtomicUsize::new(0) }; 10];

fn counting<const SLOT: usize>(input: &Map<String, Value>, _: &CallContext) -> Result<Map<String, Value>, ToolFailure> {
    let run = RUNS[SLOT].fetch_add(1, Ordering::SeqCst) + 1;
    let mut output = Map::new();
    output.insert("text".to_owned(), input["text"].clone());
    output.insert("run".to_owned(), json!(run));
    Ok(output)
}

/// A server whose `counting.run` counts in `RUNS[SLOT]`.
async fn counting_server<const SLOT: usize>() -> Server {
    Spawn::new(vec![yaml("counting.yaml", COUNTING)])
        .with_function("counting.run", counting::<SLOT>)
        .start()
        .await
}

/// Like [`counting_server`], with two API keys: `alice-key` and `bob-key`.
async fn counting_server_with_keys<const SLOT: usize>() -> Server {
    use toolhost_server::auth::{ApiKey, Authenticator, hash_key};
    Spawn::new(vec![yaml("counting.yaml", COUNTING)])
        .with_function("counting.run", counting::<SLOT>)
        .with_config(|config| {
            let keys = ["alice", "bob"]
                .map(|name| ApiKey::new(name, &hash_key(&format!("{name}-key")), vec![]).unwrap())
                .to_vec();
            config.auth = Arc::new(Authenticator::new(keys, vec![]));
        })
        .start()
        .await
}

fn runs<const SLOT: usize>() -> usize {
    RUNS[SLOT].load(Ordering::SeqCst)
}

fn request(tool: &str, call_id: &str, text: &str) -> Value {
    json!({ "tool_id": tool, "call_id": call_id, "input": { "text": text } })
}

#[tokio::test]
async fn a_repeated_call_returns_the_first_result_without_running_again() {
    let server = counting_server::<0>().await;
    let first = server.call(request("Counting.Run", "repeat-1", "hello")).await;
    let result = first.expect_success();
    assert_eq!(result["value"], json!({ "text": "hello", "run": 1 }));
    let second = server.call(request("Counting.Run", "repeat-1", "hello")).await;
    second.expect_success();
    assert_eq!(second.text, first.text, "the identical result, `duration` included");
    assert_eq!(runs::<0>(), 1, "the tool ran once");
    // Another call_id is another call.
    let other = server
        .call(request("Counting.Run", "repeat-2", "hello"))
        .await
        .expect_success();
    assert_eq!(other["value"]["run"], 2);
    assert_eq!(runs::<0>(), 2);
}

#[tokio::test]
async fn parallel_repeats_run_the_tool_once() {
    let server = Arc::new(counting_server::<1>().await);
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let server = Arc::clone(&server);
        calls.spawn(async move { server.call(request("Counting.Slow", "parallel-1", "hi")).await });
    }
    let replies = calls.join_all().await;
    let first = replies[0].expect_success();
    assert_eq!(first["value"], json!({ "text": "hi", "run": 1 }));
    assert!(first["duration"].as_f64().unwrap() >= 200.0, "{first}");
    for reply in &replies {
        reply.expect_success();
        assert_eq!(reply.text, replies[0].text, "every repeat gets the first result");
    }
    assert_eq!(runs::<1>(), 1, "20 identical calls, one run");
}

#[tokio::test]
async fn a_call_id_reused_for_other_input_is_400() {
    let server = counting_server::<2>().await;
    server
        .call(request("Counting.Run", "reused", "one"))
        .await
        .expect_success();
    let reply = server.call(request("Counting.Run", "reused", "two")).await;
    let body = reply.expect_server_error(SCHEMA);
    assert!(message(&body).contains("reused"), "names the call_id: {body}");
    assert!(message(&body).contains("call_id"), "{body}");
    assert_eq!(runs::<2>(), 1, "the conflicting call did not run");
}

#[tokio::test]
async fn a_missing_call_id_is_generated() {
    let server = counting_server::<3>().await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let result = server
            .call(json!({ "tool_id": "Counting.Run", "input": { "text": "x" } }))
            .await
            .expect_success();
        let id = result["call_id"].as_str().unwrap();
        let uuid = uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("`{id}` is not a UUID: {e}"));
        assert_eq!(uuid.hyphenated().to_string(), id, "the usual hyphenated form");
        ids.push(id.to_owned());
    }
    assert_ne!(ids[0], ids[1], "each call gets its own id");
    assert_eq!(runs::<3>(), 2, "and each runs");
}

/// Issue #18: a call without a `call_id` is not recorded (its generated id is known to nobody
/// before the answer), so calls that did not ask for idempotency never push out the record of
/// one that did, however many there are.
#[tokio::test]
async fn calls_without_a_call_id_do_not_crowd_out_keyed_ones() {
    let server = Spawn::new(vec![yaml("counting.yaml", COUNTING)])
        .with_function("counting.run", counting::<7>)
        .with_config(|config| config.idempotency_max_entries = 2)
        .start()
        .await;
    let keyed = server.call(request("Counting.Run", "kept", "a")).await.expect_success();
    for _ in 0..5 {
        server
            .call(json!({ "tool_id": "Counting.Run", "input": { "text": "x" } }))
            .await
            .expect_success();
    }
    assert_eq!(runs::<7>(), 6);
    let repeat = server.call(request("Counting.Run", "kept", "a")).await.expect_success();
    assert_eq!(
        repeat, keyed,
        "the keyed call's record is still there: the stored result"
    );
    assert_eq!(runs::<7>(), 6, "and the repeat did not run");
}

#[tokio::test]
async fn refusals_are_not_remembered() {
    let server = counting_server::<4>().await;
    // A 422 for bad input; the corrected retry with the same call_id runs.
    let bad = json!({ "tool_id": "Counting.Run", "call_id": "retry-me", "input": { "text": 5 } });
    server.call(bad.clone()).await.expect_validation_error(&["text"]);
    let result = server
        .call(request("Counting.Run", "retry-me", "fixed"))
        .await
        .expect_success();
    assert_eq!(result["value"], json!({ "text": "fixed", "run": 1 }));
    // Now the call_id is taken, so the old bad input conflicts with it.
    server.call(bad).await.expect_server_error(SCHEMA);
    // A 400 for an unknown version is not remembered either.
    let unknown = json!({ "tool_id": "Counting.Run@9.0.0", "call_id": "retry-too", "input": { "text": "a" } });
    server.call(unknown).await.expect_server_error(SCHEMA);
    server
        .call(request("Counting.Run@1.0.0", "retry-too", "a"))
        .await
        .expect_success();
    assert_eq!(runs::<4>(), 2);
}

/// Issue #21.4: a stored result belongs to the caller who made the call. Another caller who
/// sends the same `call_id` (guessed, logged or replayed) gets a call of its own, never the
/// first caller's result, and cannot take a `call_id` before its owner uses it.
#[tokio::test]
async fn a_call_id_belongs_to_its_caller() {
    let server = counting_server_with_keys::<5>().await;
    let alice = server
        .call_as("alice-key", request("Counting.Run", "shared-id", "alice's secret"))
        .await
        .expect_success();
    assert_eq!(alice["value"], json!({ "text": "alice's secret", "run": 1 }));
    // Bob with Alice's call_id and other input: his own call, not a conflict with hers.
    let bob = server
        .call_as("bob-key", request("Counting.Run", "shared-id", "bob's text"))
        .await
        .expect_success();
    assert_eq!(bob["value"], json!({ "text": "bob's text", "run": 2 }));
    // Bob with Alice's call_id and her very input: still his own run, not her stored result.
    let replay = server
        .call_as("bob-key", request("Counting.Run", "shared-id-2", "x"))
        .await
        .expect_success();
    assert_eq!(replay["value"]["run"], 3);
    let alice_after_bob = server
        .call_as("alice-key", request("Counting.Run", "shared-id-2", "x"))
        .await
        .expect_success();
    assert_eq!(
        alice_after_bob["value"]["run"], 4,
        "Alice's call ran: Bob did not squat her call_id"
    );
    // Each still gets their own stored result on a repeat.
    let repeat = server
        .call_as("alice-key", request("Counting.Run", "shared-id", "alice's secret"))
        .await;
    assert_eq!(repeat.expect_success()["value"]["run"], 1);
    assert_eq!(runs::<5>(), 4);
}

/// Issue #21.4: the same caller, `call_id` and input for another user (`context`) is another
/// call: 400, never the first user's result.
#[tokio::test]
async fn a_call_id_reused_for_another_context_is_400() {
    let server = counting_server::<6>().await;
    let mut first = request("Counting.Run", "ctx", "same");
    first["context"] = json!({ "user_id": "alice" });
    server.call(first).await.expect_success();
    let mut second = request("Counting.Run", "ctx", "same");
    second["context"] = json!({ "user_id": "bob" });
    let body = server.call(second).await.expect_server_error(SCHEMA);
    assert!(message(&body).contains("context"), "says what differs: {body}");
    assert_eq!(
        runs::<6>(),
        1,
        "the second call did not run, and got nothing of the first"
    );
}

/// Issue #31.5: the key is the tool version the id resolves to and the input's JSON value, not
/// their spelling: `Counting.Pair`, `@1` and `@1.0.0` name the same version, and key order or `1`
/// against `1.0` do not make another call.
#[tokio::test]
async fn an_equivalent_tool_id_and_input_is_the_same_call() {
    let server = counting_server::<8>().await;
    let body = |tool: &str, input: &str| {
        format!(
            r#"{{"$schema": "{SCHEMA}", "request": {{"tool_id": "{tool}", "call_id": "same-call", "input": {input}}}}}"#
        )
    };
    let first = server
        .post(
            "/otc/tools/call",
            Some("application/json"),
            body("Counting.Pair", r#"{"text": "a", "n": 1}"#),
        )
        .await;
    assert_eq!(first.expect_success()["value"], json!({"text": "a", "run": 1}));
    for (tool, input) in [
        ("Counting.Pair@1.0.0", r#"{"text": "a", "n": 1}"#),
        ("Counting.Pair@1", r#"{"n": 1.0, "text": "a"}"#),
        ("Counting.Pair", r#"{"n": 10e-1, "text": "\u0061"}"#),
    ] {
        let again = server
            .post("/otc/tools/call", Some("application/json"), body(tool, input))
            .await;
        again.expect_success();
        assert_eq!(again.text, first.text, "{tool} {input} is the same call");
    }
    assert_eq!(runs::<8>(), 1, "one run for every spelling");
    // Another value is another call, refused under the same call_id.
    let other = server
        .post(
            "/otc/tools/call",
            Some("application/json"),
            body("Counting.Pair@1", r#"{"text": "a", "n": 1.5}"#),
        )
        .await;
    other.expect_server_error(SCHEMA);
    assert_eq!(runs::<8>(), 1);
}

/// Issue #31.5: an empty `call_id` would be one key shared by every caller that sends it: 400,
/// and the tool does not run.
#[tokio::test]
async fn an_empty_call_id_is_400() {
    let server = counting_server::<9>().await;
    for call_id in ["", "   "] {
        let reply = server.call(request("Counting.Run", call_id, "hello")).await;
        let body = reply.expect_server_error(SCHEMA);
        assert!(message(&body).contains("`call_id` is empty"), "{body}");
    }
    assert_eq!(runs::<9>(), 0, "the tool did not run");
}
